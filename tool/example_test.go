package tool_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/llmkit/toolkit"
	"github.com/llmkit/toolkit/tool"
)

func ExampleNew() {
	type input struct {
		Text  string `json:"text" jsonschema:"the text to repeat"`
		Times int    `json:"times,omitempty"`
	}
	repeat, err := tool.New("repeat", "Repeats a text.",
		func(_ context.Context, in input) (string, error) {
			return strings.Repeat(in.Text, max(in.Times, 1)), nil
		},
		tool.WithTitle("Repeat text"), tool.WithReadOnly(true))
	if err != nil {
		log.Fatal(err)
	}

	schema, _ := repeat.InputSchema()
	fmt.Println("required:", schema.Required)

	out, err := repeat.Run(context.Background(), json.RawMessage(`{"text":"ab","times":3}`))
	fmt.Println(out, err)

	_, err = repeat.Run(context.Background(), json.RawMessage(`{"txt":"ab"}`))
	fmt.Println(err)
	// Output:
	// required: [text]
	// ababab <nil>
	// bad parameter: tool "repeat": input: json: unknown field "txt"
}

func ExampleNewOutputTool() {
	type answer struct {
		City    string `json:"city"`
		Country string `json:"country"`
	}
	s, err := jsonschema.For[answer](nil)
	if err != nil {
		log.Fatal(err)
	}
	submit, err := tool.NewOutputTool(s)
	if err != nil {
		log.Fatal(err)
	}
	// A model that follows tool.OutputToolInstruction calls the tool with
	// its answer; the answer comes back validated.
	out, err := submit.Run(context.Background(), json.RawMessage(`{"city": "Paris", "country": "France"}`))
	fmt.Println(submit.Name(), string(out.(json.RawMessage)), err)

	_, err = submit.Run(context.Background(), json.RawMessage(`{"city": "Paris"}`))
	fmt.Println(err != nil)
	// Output:
	// submit_output {"city":"Paris","country":"France"} <nil>
	// true
}

// A typed tool in a toolkit, called with Go values.
func Example() {
	type weatherIn struct {
		City string `json:"city" jsonschema:"the city to report on"`
	}
	type weatherOut struct {
		TempC float64 `json:"temp_c"`
	}
	weather, err := tool.New("weather", "Reports the weather in a city.",
		func(ctx context.Context, in weatherIn) (weatherOut, error) {
			if in.City == "" {
				return weatherOut{}, errors.New("no city")
			}
			return weatherOut{TempC: 21.5}, nil
		},
		tool.WithReadOnly(true))
	if err != nil {
		log.Fatal(err)
	}

	tk, err := toolkit.New(toolkit.WithTool(weather))
	if err != nil {
		log.Fatal(err)
	}
	ctx := context.Background()
	out, err := tk.Call(ctx, "weather", toolkit.Input(weatherIn{City: "Oslo"}))
	if err != nil {
		log.Fatal(err)
	}
	data, _ := out.Read(ctx)
	fmt.Println(string(data))

	// Input the schema refuses never reaches the function.
	_, err = tk.Call(ctx, "weather", toolkit.Input(map[string]any{"town": "Oslo"}))
	fmt.Println(errors.Is(err, toolkit.ErrSchema))
	// Output:
	// {"temp_c":21.5}
	// true
}
