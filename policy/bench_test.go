package policy

import (
	"context"
	"fmt"
	"log/slog"
	"path/filepath"
	"testing"
	"time"

	"github.com/llmkit/toolkit"
)

// BenchmarkCall measures toolkit.Call of a builtin tool by name, as the
// root package's BenchmarkCall does, beside its baseline in the same run:
// no policy (the toolkit as it is without one), an engine without rules,
// an engine with 100 rules none of which matches (the worst case: every
// rule is tried before the default decides), the same with pinned
// definitions (a remote tool), a rate limit, and the audit to a discarding
// handler.
func BenchmarkCall(b *testing.B) {
	ctx := toolkit.WithPrincipal(context.Background(), "jwt:alice")
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
	engine := func(cfg Config, opts ...Option) *Engine {
		e, err := New(context.Background(), cfg, opts...)
		if err != nil {
			b.Fatal(err)
		}
		return e
	}
	for _, tt := range []struct {
		name string
		opts func() []toolkit.Option
	}{
		{"no_policy", func() []toolkit.Option { return nil }},
		{"empty_policy", func() []toolkit.Option { return []toolkit.Option{toolkit.WithPolicy(engine(Config{}))} }},
		{"rules=100", func() []toolkit.Option { return []toolkit.Option{toolkit.WithPolicy(engine(Config{Rules: rules}))} }},
		{"rate_limit", func() []toolkit.Option {
			return []toolkit.Option{toolkit.WithPolicy(engine(Config{RateLimits: []Limit{{Per: "principal", Rate: Rate{1_000_000_000, time.Second}}}}))}
		}},
		{"audit", func() []toolkit.Option { return []toolkit.Option{toolkit.WithAudit(slog.DiscardHandler)} }},
	} {
		echo := newFake("echo", "Echoes.")
		tk, err := toolkit.New(append([]toolkit.Option{toolkit.WithTool(echo)}, tt.opts()...)...)
		if err != nil {
			b.Fatal(err)
		}
		b.Run(tt.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := tk.Call(ctx, "echo"); err != nil {
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
