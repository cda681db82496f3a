package adaptertest

import (
	"context"
	"strings"
	"testing"

	toolkit "github.com/llmkit/toolkit"
	"github.com/llmkit/toolkit/adapters/adapter"
	"github.com/llmkit/toolkit/tool"
)

// Local returns a toolkit of Builtins and extra, without a remote server.
func Local(t testing.TB, extra ...toolkit.Tool) *toolkit.Toolkit {
	t.Helper()
	tk, err := toolkit.New(toolkit.WithTool(append(Builtins(), extra...)...))
	if err != nil {
		t.Fatal(err)
	}
	return tk
}

// Live checks that an adapter's tool list follows tk, a toolkit of
// Builtins: names lists the model names of the adapter's current tools, in
// order (see [NamesOf]). They are the four builtins first; then a tool
// "translate" is added and "explode" removed, and the very next list shows
// the change: nothing waits for the toolkit's events.
func Live(t testing.TB, tk *toolkit.Toolkit, names func(context.Context) ([]string, error)) {
	t.Helper()
	list := func() string {
		t.Helper()
		n, err := names(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		return strings.Join(n, ",")
	}
	if got := list(); got != "explode,get_forecast,get_weather,render_chart" {
		t.Fatalf("tools = %s", got)
	}
	if err := tk.AddTool(tool.Must("translate", "Translates text.", func(_ context.Context, in struct {
		Text string `json:"text"`
	}) (string, error) {
		return in.Text, nil
	})); err != nil {
		t.Fatal(err)
	}
	if err := tk.RemoveBuiltin("explode"); err != nil {
		t.Fatal(err)
	}
	if got := list(); got != "get_forecast,get_weather,render_chart,translate" {
		t.Fatalf("tools after the change = %s", got)
	}
}

// NamesOf returns the names of the values list returns, name giving a
// value's model name.
func NamesOf[T any](list func(context.Context) ([]T, error), name func(T) string) func(context.Context) ([]string, error) {
	return func(ctx context.Context) ([]string, error) {
		vs, err := list(ctx)
		if err != nil {
			return nil, err
		}
		out := make([]string, len(vs))
		for i, v := range vs {
			out[i] = name(v)
		}
		return out, nil
	}
}

// BenchmarkList measures an adapter's list of 1,000 tools (Many): cold,
// each time from a new adapter (so new names, definitions and
// conversions), and cached, again from one adapter over an unchanged
// toolkit. list returns the list method of a new adapter over tk.
func BenchmarkList[T any](b *testing.B, list func(tk adapter.Toolkit) func(context.Context) ([]T, error)) {
	ctx := context.Background()
	tk, err := toolkit.New(toolkit.WithTool(Many(1000)...))
	if err != nil {
		b.Fatal(err)
	}
	run := func(b *testing.B, list func(context.Context) ([]T, error)) {
		if l, err := list(ctx); err != nil || len(l) != 1000 {
			b.Fatal(len(l), err)
		}
	}
	b.Run("cold", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			run(b, list(tk))
		}
	})
	b.Run("cached", func(b *testing.B) {
		cached := list(tk)
		run(b, cached)
		b.ReportAllocs()
		for b.Loop() {
			run(b, cached)
		}
	})
	// One change before each list: a 1,001st tool added, then removed
	// again. Only that tool's name, definition and conversion are new.
	b.Run("changed", func(b *testing.B) {
		live := list(tk)
		run(b, live)
		extra := Many(1001)[1000]
		added := false
		b.ReportAllocs()
		for b.Loop() {
			var err error
			if added {
				err = tk.RemoveBuiltin(extra.Name())
			} else {
				err = tk.AddTool(extra)
			}
			if err != nil {
				b.Fatal(err)
			}
			added = !added
			want := 1000
			if added {
				want = 1001
			}
			if l, err := live(ctx); err != nil || len(l) != want {
				b.Fatal(len(l), want, err)
			}
		}
		if added {
			if err := tk.RemoveBuiltin(extra.Name()); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// ChatCompletion returns a Chat Completions response (the OpenAI API, and
// the servers that speak it) with one choice: msg, finished for finish.
func ChatCompletion(msg map[string]any, finish string) map[string]any {
	return map[string]any{
		"id": "chatcmpl-1", "object": "chat.completion", "created": 1, "model": "gpt-test",
		"choices": []any{map[string]any{"index": 0, "finish_reason": finish, "message": msg}},
		"usage":   map[string]any{"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
	}
}

// FunctionCall returns a Chat Completions tool call of function name with
// the arguments args (JSON text).
func FunctionCall(id, name, args string) map[string]any {
	return map[string]any{"id": id, "type": "function", "function": map[string]any{"name": name, "arguments": args}}
}

// Converse runs the turns of a conversation with a model until turn
// reports the model's answer (done), and checks that it is want and that
// it came on the second turn: one round of tool calls, then the answer.
func Converse(t testing.TB, want string, turn func() (answer string, done bool)) {
	t.Helper()
	ConverseTurns(t, want, 2, turn)
}
