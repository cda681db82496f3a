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
	ctx := context.Background()
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
	b.Run("toolkit_call_by_name", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := tk.Call(ctx, "forecast", input); err != nil {
				b.Fatal(err)
			}
		}
	})
}
