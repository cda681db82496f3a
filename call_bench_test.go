package toolkit

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/llmkit/toolkit/resource"
)

// BenchmarkCallInput calls a tool with an input schema and a JSON input,
// the path where the input is parsed and validated.
func BenchmarkCallInput(b *testing.B) {
	in := &jsonschema.Schema{
		Type:     "object",
		Required: []string{"city"},
		Properties: map[string]*jsonschema.Schema{
			"city":  {Type: "string"},
			"days":  {Type: "integer"},
			"units": {Type: "string", Enum: []any{"metric", "imperial"}},
		},
	}
	t := &testTool{name: "forecast", in: in, run: func(context.Context, json.RawMessage) (any, error) { return "ok", nil }}
	tk := mustNew(b, WithTool(t))
	input := resource.Must("input", json.RawMessage(`{"city":"Lisbon","days":3,"units":"metric"}`))
	b.Run("toolkit_call_by_name", func(b *testing.B) { benchCall(b, tk, "forecast", input) })
	// A flat schema: an object of a string, as most tools have (the
	// remote echo tool of the mcp package's CallHTTP benchmark).
	echo := &testTool{name: "echo", in: &jsonschema.Schema{
		Type:       "object",
		Properties: map[string]*jsonschema.Schema{"text": {Type: "string"}},
		Required:   []string{"text"},
	}, run: func(context.Context, json.RawMessage) (any, error) { return "ok", nil }}
	tk = mustNew(b, WithTool(echo))
	b.Run("flat", func(b *testing.B) {
		benchCall(b, tk, "echo", resource.Must("input", json.RawMessage(`{"text":"x"}`)))
	})
}

// benchCall times tk.Call of the tool named name with input.
func benchCall(b *testing.B, tk *Toolkit, name string, input Resource) {
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := tk.Call(ctx, name, input); err != nil {
			b.Fatal(err)
		}
	}
}
