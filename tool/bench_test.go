package tool_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/llmkit/toolkit/tool"
)

var benchInput = json.RawMessage(`{"a":20,"b":22,"note":"benchmark"}`)

// BenchmarkRun measures the typed tool's Run (decode + call) beside its
// baseline: decoding with encoding/json and calling the function directly.
func BenchmarkRun(b *testing.B) {
	ctx := context.Background()
	b.Run("Func.Run", func(b *testing.B) {
		tl := tool.Must("add", "", add)
		b.ReportAllocs()
		for b.Loop() {
			if _, err := tl.Run(ctx, benchInput); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("direct", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			var in addIn
			if err := json.Unmarshal(benchInput, &in); err != nil {
				b.Fatal(err)
			}
			if _, err := add(ctx, in); err != nil {
				b.Fatal(err)
			}
		}
	})
}
