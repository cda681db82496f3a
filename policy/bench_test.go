package policy

import (
	"context"
	"fmt"
	"log/slog"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/llmkit/toolkit"
)

// callVariants are the toolkits BenchmarkCall and BenchmarkCallOverhead
// compare, each with the tool "echo".
func callVariants(b *testing.B) []struct {
	name string
	tk   *toolkit.Toolkit
} {
	rules := make([]Rule, 100)
	for i := range rules {
		rules[i] = Rule{
			Name:       fmt.Sprintf("rule-%d", i),
			Effect:     toolkit.Deny,
			Principals: []string{fmt.Sprintf("jwt:user-%d", i), "token:*"},
			Namespaces: []string{"builtin", "srv*"},
			Tools:      []string{fmt.Sprintf("tool_%d_*", i)},
		}
	}
	engine := func(cfg Config) toolkit.Option {
		e, err := New(context.Background(), cfg)
		if err != nil {
			b.Fatal(err)
		}
		return toolkit.WithPolicy(e)
	}
	var out []struct {
		name string
		tk   *toolkit.Toolkit
	}
	for _, v := range []struct {
		name string
		opt  toolkit.Option
	}{
		{"no_policy", nil},
		{"empty_policy", engine(Config{})},
		{"rules=100", engine(Config{Rules: rules})},
		{"rate_limit", engine(Config{RateLimits: []Limit{{Per: "principal", Rate: Rate{1_000_000_000, time.Second}}}})},
		{"audit", toolkit.WithAudit(slog.DiscardHandler)},
	} {
		tk, err := toolkit.New(toolkit.WithTool(newFake("echo", "Echoes.")), v.opt)
		if err != nil {
			b.Fatal(err)
		}
		out = append(out, struct {
			name string
			tk   *toolkit.Toolkit
		}{v.name, tk})
	}
	return out
}

// BenchmarkCallOverhead measures the same toolkits as BenchmarkCall in
// rounds: each round makes 2,000 calls with each toolkit in turn, so that
// a busy machine slows them all alike, and the fastest round of each is
// reported (ns/call), with its difference to the toolkit without policy.
// Run it with -benchtime 300x (300 rounds).
func BenchmarkCallOverhead(b *testing.B) {
	ctx := toolkit.WithPrincipal(context.Background(), "jwt:alice")
	variants := callVariants(b)
	const batch = 2000
	times := make([][]float64, len(variants))
	for b.Loop() {
		for i, v := range variants {
			start := time.Now()
			for range batch {
				if _, err := v.tk.Call(ctx, "echo"); err != nil {
					b.Fatal(err)
				}
			}
			times[i] = append(times[i], float64(time.Since(start).Nanoseconds())/batch)
		}
	}
	base := slices.Min(times[0])
	for i, v := range variants {
		best := slices.Min(times[i])
		b.ReportMetric(best, v.name+"-ns/call")
		if i > 0 {
			b.ReportMetric(best-base, v.name+"-extra-ns/call")
		}
	}
}

// BenchmarkCall measures toolkit.Call of a builtin tool by name, as the
// root package's BenchmarkCall does, beside its baseline in the same run:
// no policy (the toolkit as it is without one), an engine without rules,
// an engine with 100 rules none of which matches (the worst case: every
// rule is tried before the default decides), the same with pinned
// definitions (a remote tool), a rate limit, and the audit to a discarding
// handler.
func BenchmarkCall(b *testing.B) {
	ctx := toolkit.WithPrincipal(context.Background(), "jwt:alice")
	for _, v := range callVariants(b) {
		b.Run(v.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := v.tk.Call(ctx, "echo"); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkDecide measures the engine alone on a remote tool, with pinned
// definitions (the digest is computed once per tool value and cached).
func BenchmarkDecide(b *testing.B) {
	e, err := New(context.Background(), Config{}, WithPins(NewFileStore(filepath.Join(b.TempDir(), "pins.json"))))
	if err != nil {
		b.Fatal(err)
	}
	tool := newFake("t", "d")
	req := toolkit.PolicyRequest{Principal: "p", Namespace: "srv", Tool: tool}
	b.ReportAllocs()
	for b.Loop() {
		if d := e.Decide(context.Background(), req); d.Effect != toolkit.Allow {
			b.Fatal(d)
		}
	}
}
