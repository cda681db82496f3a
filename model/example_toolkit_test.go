package model_test

import (
	"context"
	"fmt"
	"strings"
	"time"

	toolkit "github.com/llmkit/toolkit"
	"github.com/llmkit/toolkit/model"
	"github.com/llmkit/toolkit/tool"
)

type weatherInput struct {
	City string `json:"city" jsonschema:"the city"`
}

func newToolkit() *toolkit.Toolkit {
	tk, err := toolkit.New(toolkit.WithTool(
		tool.Must("get_weather", "Current weather for a city.",
			func(_ context.Context, in weatherInput) (string, error) {
				if in.City == "" {
					return "", fmt.Errorf("no city given")
				}
				return "Sunny in " + in.City, nil
			}, tool.WithReadOnly(true)),
		tool.Must("send_email", "Send an email to a contact.",
			func(_ context.Context, in struct {
				To string `json:"to"`
			}) (string, error) {
				return "sent to " + in.To, nil
			}),
	))
	if err != nil {
		panic(err)
	}
	return tk
}

func ExampleDispatcher() {
	ctx := context.Background()
	tk := newToolkit()
	catalog := model.NewCatalog(tk)
	// Names are known once the catalog has read the toolkit (Definitions
	// does it too, when the tools are handed to the model).
	if err := catalog.Refresh(ctx); err != nil {
		panic(err)
	}
	d := model.NewDispatcher(tk, catalog, model.WithRepair(true), model.WithTimeout(time.Minute))
	for _, r := range d.Dispatch(ctx,
		model.ToolCall{ID: "call_1", Name: "get_weather", Arguments: `{"city": "Oslo"}`},
		model.ToolCall{ID: "call_2", Name: "get_weather", Arguments: "{'city': 'Lima',}"},
		model.ToolCall{ID: "call_3", Name: "get_weather", Arguments: `{}`},
		model.ToolCall{ID: "call_4", Name: "get_weather", Arguments: `{"city": ""}`},
		model.ToolCall{ID: "call_5", Name: "GetWeather", Arguments: `{}`},
	) {
		fmt.Printf("%s error=%v repaired=%v: %s\n", r.ID, r.IsError, r.Repaired, r.Content)
	}
	// Output:
	// call_1 error=false repaired=false: Sunny in Oslo
	// call_2 error=false repaired=true: Sunny in Lima
	// call_3 error=true repaired=false: schema violation: tool "get_weather": input: validating root: required: missing properties: ["city"]
	// call_4 error=true repaired=false: tool failed: tool "get_weather": no city given
	// call_5 error=true repaired=false: There is no tool named "GetWeather". Did you mean "get_weather"?
}

func ExampleCatalog() {
	ctx := context.Background()
	catalog := model.NewCatalog(newToolkit())

	// The read-only tools, as an OpenAI Chat Completions "tools" value.
	defs, _ := catalog.Definitions(ctx, model.Filter{ReadOnly: true})
	tools, _ := model.Encode(model.OpenAIChat, defs)
	fmt.Println(strings.Contains(string(tools), `"name":"get_weather"`), len(defs))

	// The tools that best match a user message.
	hits, _ := catalog.Search(ctx, "Please email Bob the report", 3, model.Filter{})
	for _, d := range hits {
		fmt.Println(d.Name)
	}
	// Output:
	// true 1
	// send_email
}
