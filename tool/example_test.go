package tool_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"

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
