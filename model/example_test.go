package model_test

import (
	"fmt"

	toolkit "github.com/llmkit/toolkit"
	"github.com/llmkit/toolkit/model"
)

func ExampleNamer() {
	n := model.NewNamer()
	names := n.Names([]toolkit.Item{
		{Namespace: "builtin", Type: toolkit.ListTypeTools, Name: "search"},
		{Namespace: "github", Type: toolkit.ListTypeTools, Name: "search"},
		{Namespace: "github", Type: toolkit.ListTypeTools, Name: "issues.list"},
	})
	for _, name := range names {
		it, _ := n.Resolve(name)
		fmt.Printf("%-30s -> %s\n", name, it.Key())
	}
	// Output:
	// search                         -> builtin.search
	// github__search                 -> github.search
	// github__issues_list_2a77b8     -> github.issues.list
}

func ExampleRepair() {
	fixed, repairs, err := model.Repair("```json\n{'city': 'Paris', units: None,}\n```")
	fmt.Println(fixed, err)
	for _, r := range repairs {
		fmt.Println("-", r)
	}
	// Output:
	// {"city":"Paris","units":null} <nil>
	// - removed code fence
	// - converted single-quoted string
	// - quoted bare key
	// - converted Python literal
	// - removed trailing comma
}

func ExampleEncode() {
	defs := []model.Definition{{
		Name:        "get_weather",
		Description: "Current weather for a city.",
		Parameters:  []byte(`{"type":"object","properties":{"city":{"type":["string","null"],"format":"hostname"}},"additionalProperties":false}`),
	}}
	for _, f := range []model.Format{model.OpenAIChat, model.Anthropic, model.Gemini} {
		tools, err := model.Encode(f, defs)
		fmt.Println(f, string(tools), err)
	}
	// Output:
	// openai-chat [{"type":"function","function":{"name":"get_weather","description":"Current weather for a city.","parameters":{"type":"object","properties":{"city":{"type":["string","null"],"format":"hostname"}},"additionalProperties":false},"strict":false}}] <nil>
	// anthropic [{"name":"get_weather","description":"Current weather for a city.","input_schema":{"type":"object","properties":{"city":{"type":["string","null"],"format":"hostname"}},"additionalProperties":false}}] <nil>
	// gemini [{"functionDeclarations":[{"name":"get_weather","description":"Current weather for a city.","parameters":{"properties":{"city":{"nullable":true,"type":"STRING"}},"type":"OBJECT"}}]}] <nil>
}
