package toolkit

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"

	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/metric/noop"

	"github.com/llmkit/toolkit/internal/testing/oteltest"
)

// benchConns is the number of connectors benchToolkit spreads tools over.
const benchConns = 10

// benchToolkit builds a toolkit of exactly n tools: a tenth builtin (at
// least one), the rest spread as evenly as possible over benchConns
// connectors, srv0 holding the most. It returns the toolkit and the number
// of tools on srv0.
func benchToolkit(b *testing.B, n int) (*Toolkit, int) {
	b.Helper()
	builtin := max(1, n/10)
	remote := n - builtin
	perConn := func(i int) int {
		k := remote / benchConns
		if i < remote%benchConns {
			k++
		}
		return k
	}
	var tools []Tool
	for i := range builtin {
		tools = append(tools, newTool(fmt.Sprintf("tool_%d", i)))
	}
	d := newDelegate()
	d.events = make(chan ConnectorEvent, 1<<16)
	d.prepare = func(url string, c *fakeConn) error {
		var i int
		if _, err := fmt.Sscanf(url, "test://srv%d", &i); err != nil {
			return nil // the user connector
		}
		for j := range perConn(i) {
			c.tools = append(c.tools, newTool(fmt.Sprintf("remote_%d", j)))
		}
		return nil
	}
	tk := mustNew(b, WithDelegate(d), WithTool(tools...))
	for i := range benchConns {
		if perConn(i) == 0 {
			continue
		}
		if err := tk.AddConnectorNS(fmt.Sprintf("srv%d", i), fmt.Sprintf("test://srv%d", i)); err != nil {
			b.Fatal(err)
		}
	}
	b.Cleanup(tk.WaitEvents)
	resp, err := tk.List(context.Background(), ListRequest{Type: ListTypeTools, Limit: new(uint)})
	if err != nil {
		b.Fatal(err)
	}
	if resp.Count != uint(n) {
		b.Fatalf("the toolkit holds %d tools, want %d", resp.Count, n)
	}
	return tk, perConn(0)
}

func BenchmarkLookup(b *testing.B) {
	ctx := context.Background()
	for _, n := range []int{10, 1_000, 100_000} {
		tk, onSrv0 := benchToolkit(b, n)
		last := fmt.Sprintf("tool_%d", max(1, n/10)-1)
		keys := map[string]string{
			"qualified":        "builtin." + last,
			"bare":             last,
			"remote_qualified": fmt.Sprintf("srv0.remote_%d", onSrv0-1),
			"remote_bare":      fmt.Sprintf("remote_%d", onSrv0-1),
		}
		for _, kind := range []string{"qualified", "bare", "remote_qualified", "remote_bare"} {
			key := keys[kind]
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
	tk, _ := benchToolkit(b, 100_000)
	limit := uint(50)
	// Baseline: copy a 50-item page out of a pre-sorted slice of 100,000
	// items, the least any List answer must do.
	all, err := tk.List(ctx, ListRequest{})
	if err != nil || len(all.Items) != 100_000 {
		b.Fatal(err, len(all.Items))
	}
	sorted := all.Items
	b.Run("baseline_slice/items=100000", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			page := make([]Item, limit)
			copy(page, sorted[60_000:60_000+limit])
			if len(page) != 50 {
				b.Fatal(len(page))
			}
		}
	})
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
	// The same call recording metrics (WithMeterProvider): through the
	// no-op provider, and through one that keeps every measurement (the
	// tests' in-memory recorder; an SDK's cost is its own).
	// toolkit_call_by_name above is the call without a provider.
	for _, p := range []struct {
		name string
		mp   metric.MeterProvider
	}{
		{"noop", noop.NewMeterProvider()},
		{"recorder", oteltest.NewMeterProvider()},
	} {
		tk := mustNew(b, WithTool(t), WithMeterProvider(p.mp))
		b.Run("toolkit_call_by_name/metrics="+p.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := tk.Call(ctx, "echo"); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
