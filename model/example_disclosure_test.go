package model_test

import (
	"context"
	"fmt"
	"strings"

	"github.com/llmkit/toolkit/model"
)

// ExampleDisclosure holds one conversation with a model that sees a
// search tool and get_weather, always offered, and finds send_email by
// searching: the next request offers it, and its call runs.
func ExampleDisclosure() {
	ctx := context.Background()
	tk := newToolkit()
	catalog := model.NewCatalog(tk)
	d := model.NewDisclosure(catalog, model.WithAlways(model.Filter{Names: []string{"get_weather"}}))
	disp := model.NewDispatcher(tk, catalog)
	var found model.Loaded // this conversation's

	offered := func() {
		defs, err := d.Definitions(ctx, &found) // Encode them for the request
		if err != nil {
			panic(err)
		}
		var names []string
		for _, def := range defs {
			names = append(names, def.Name)
		}
		fmt.Println(strings.Join(names, " "))
	}
	offered()
	// The model searches (its calls come from the provider's answer).
	for _, r := range d.Dispatch(ctx, disp, &found,
		model.ToolCall{ID: "1", Name: model.DefaultSearchToolName, Arguments: `{"query": "write an email", "limit": 1}`}) {
		fmt.Println(r.Content)
	}
	offered()
	for _, r := range d.Dispatch(ctx, disp, &found,
		model.ToolCall{ID: "2", Name: "send_email", Arguments: `{"to": "bob@example.com"}`}) {
		fmt.Println(r.Content)
	}
	// Output:
	// search_tools get_weather
	// {"tools":[{"name":"send_email","description":"Send an email to a contact."}],"note":"These tools are now available: call them by name."}
	// search_tools get_weather send_email
	// sent to bob@example.com
}
