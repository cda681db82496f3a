package toolkit

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
)

// benchToolkit builds a toolkit of n tools: a tenth builtin, the rest
// spread over ten connectors.
func benchToolkit(b *testing.B, n int) *Toolkit {
	b.Helper()
	builtin := max(1, n/10)
	var tools []Tool
	for i := range builtin {
		tools = append(tools, newTool(fmt.Sprintf("tool_%d", i)))
	}
	d := newDelegate()
	d.events = make(chan ConnectorEvent, 1<<16)
	per := (n - builtin) / 10
	d.prepare = func(url string, c *fakeConn) error {
		if url == UserConnectorURI {
			return nil
		}
		for i := range per {
			c.tools = append(c.tools, newTool(fmt.Sprintf("remote_%d", i)))
		}
		return nil
	}
	tk := mustNew(b, WithDelegate(d), WithTool(tools...))
	if per > 0 {
		for i := range 10 {
			if err := tk.AddConnectorNS(fmt.Sprintf("srv%d", i), fmt.Sprintf("test://srv%d", i)); err != nil {
				b.Fatal(err)
			}
		}
	}
	b.Cleanup(tk.WaitEvents)
	return tk
}

func BenchmarkLookup(b *testing.B) {
	ctx := context.Background()
	for _, n := range []int{10, 1_000, 100_000} {
		tk := benchToolkit(b, n)
		last := fmt.Sprintf("tool_%d", max(1, n/10)-1)
		keys := map[string]string{
			"qualified": "builtin." + last,
			"bare":      last,
		}
		if n >= 100 {
			keys["remote_qualified"] = fmt.Sprintf("srv9.remote_%d", (n-n/10)/10-1)
		}
		for _, kind := range []string{"qualified", "bare", "remote_qualified"} {
			key, ok := keys[kind]
			if !ok {
				continue
			}
			b.Run(fmt.Sprintf("%s/tools=%d", kind, n), func(b *testing.B) {
				b.ReportAllocs()
				for b.Loop() {
					if _, err := tk.Lookup(ctx, key); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
	// Baseline: one lookup in a plain map of the same size.
	m := make(map[string]Tool, 100_000)
	for i := range 100_000 {
		m[fmt.Sprintf("tool_%d", i)] = nil
	}
	b.Run("baseline_map/tools=100000", func(b *testing.B) {
		for b.Loop() {
			_ = m["tool_9999"]
		}
	})
}

func BenchmarkList(b *testing.B) {
	ctx := context.Background()
	tk := benchToolkit(b, 100_000)
	limit := uint(50)
	for _, tt := range []struct {
		name string
		req  ListRequest
	}{
		{"page50_all", ListRequest{Offset: 60_000, Limit: &limit}},
		{"page50_namespace", ListRequest{Namespace: "srv5", Offset: 4_000, Limit: &limit}},
		{"page50_tools", ListRequest{Type: ListTypeTools, Offset: 99_000, Limit: &limit}},
	} {
		b.Run(tt.name+"/items=100000", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				resp, err := tk.List(ctx, tt.req)
				if err != nil || len(resp.Items) != 50 {
					b.Fatal(err, len(resp.Items))
				}
			}
		})
	}
}

func BenchmarkCall(b *testing.B) {
	ctx := context.Background()
	t := &testTool{name: "echo", run: func(context.Context, json.RawMessage) (any, error) { return "ok", nil }}
	tk := mustNew(b, WithTool(t))
	b.Run("direct_run", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := t.Run(ctx, json.RawMessage("{}")); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("toolkit_call_by_value", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := tk.Call(ctx, t); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("toolkit_call_by_name", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := tk.Call(ctx, "echo"); err != nil {
				b.Fatal(err)
			}
		}
	})
}
