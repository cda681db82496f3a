package policy

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/llmkit/toolkit"
)

func TestParseRate(t *testing.T) {
	for in, want := range map[string]Rate{
		"10/s": {10, time.Second}, "100/m": {100, time.Minute}, "1/h": {1, time.Hour},
		"5/10s": {5, 10 * time.Second}, " 3 / 500ms ": {3, 500 * time.Millisecond},
	} {
		got, err := ParseRate(in)
		if err != nil || got != want {
			t.Errorf("%q: %v %v, want %v", in, got, err, want)
		}
		if back, err := ParseRate(got.String()); err != nil || back != got {
			t.Errorf("%v does not round-trip: %v %v", got, back, err)
		}
	}
	for _, bad := range []string{"", "10", "10/", "/s", "0/s", "-1/s", "1.5/s", "10/d", "10/0s", "10/1us", "10/200h", "2000000000/s", "x/s"} {
		if _, err := ParseRate(bad); !errors.Is(err, toolkit.ErrBadParameter) {
			t.Errorf("%q: %v, want ErrBadParameter", bad, err)
		}
	}
}

func FuzzParseRate(f *testing.F) {
	for _, s := range []string{"10/s", "5/10s", "1/h", "0/s", "9223372036854775807/s", "1/9223372036854775807ns", "1/-1s", "/", "1//s"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		r, err := ParseRate(s)
		if err != nil {
			return
		}
		if r.Count < 1 || r.Period < minRatePeriod || r.Period > maxRatePeriod {
			t.Fatalf("%q parsed to %v", s, r)
		}
		if back, err := ParseRate(r.String()); err != nil || back != r {
			t.Fatalf("%v does not round-trip: %v %v", r, back, err)
		}
	})
}

// call asks e about a call of tool by principal, not listing.
func call(e *Engine, principal string, tool toolkit.Tool) toolkit.Decision {
	return decide(e, principal, "ns", tool, "{}")
}

func TestLimitPerPrincipal(t *testing.T) {
	e := mustEngine(t, Config{RateLimits: []Limit{{Name: "per-user", Per: "principal", Rate: Rate{2, time.Hour}}}})
	tool := newFake("t", "")
	for i := range 2 {
		if d := call(e, "alice", tool); d.Effect != toolkit.Allow {
			t.Fatalf("call %d: %+v", i, d)
		}
	}
	d := call(e, "alice", tool)
	if d.Effect != toolkit.Deny || d.Rule != "per-user" || d.RetryAfter < 29*time.Minute || d.RetryAfter > 30*time.Minute {
		t.Fatalf("third call: %+v, want a refusal saying to retry in 30m", d)
	}
	if d := call(e, "bob", tool); d.Effect != toolkit.Allow {
		t.Errorf("bob is limited by alice's calls: %+v", d)
	}
	// Listing counts nothing.
	for range 5 {
		if d := e.Decide(context.Background(), toolkit.PolicyRequest{Principal: "bob", Namespace: "ns", Tool: tool, Listing: true}); d.Effect != toolkit.Allow {
			t.Fatalf("listing: %+v", d)
		}
	}
	if d := call(e, "bob", tool); d.Effect != toolkit.Allow {
		t.Errorf("bob's second call: %+v", d)
	}
}

func TestLimitPerToolAndDenyNotCounted(t *testing.T) {
	e := mustEngine(t, Config{
		Rules:      []Rule{{Name: "no-x", Effect: toolkit.Deny, Principals: []string{"x"}}, {Effect: toolkit.Ask, Tools: []string{"asked"}}},
		RateLimits: []Limit{{Per: "tool", Rate: Rate{1, time.Hour}}},
	})
	a, b, asked := newFake("a", ""), newFake("b", ""), newFake("asked", "")
	for range 3 {
		if d := call(e, "x", a); d.Rule != "no-x" {
			t.Fatalf("%+v", d)
		}
	}
	if d := call(e, "p", a); d.Effect != toolkit.Allow {
		t.Errorf("denied calls used up the budget: %+v", d)
	}
	if d := call(e, "q", a); d.RetryAfter == 0 || d.Rule != "rate_limits[0]" {
		t.Errorf("the tool's budget is shared by principals: %+v", d)
	}
	if d := call(e, "q", b); d.Effect != toolkit.Allow {
		t.Errorf("each tool has its own budget: %+v", d)
	}
	if d := call(e, "q", asked); d.Effect != toolkit.Ask {
		t.Errorf("%+v", d)
	}
	if d := call(e, "q", asked); d.RetryAfter == 0 {
		t.Errorf("asked calls are counted: %+v", d)
	}
}

func TestLimitRefusalTakesNothing(t *testing.T) {
	e := mustEngine(t, Config{RateLimits: []Limit{
		{Name: "all", Rate: Rate{3, time.Hour}},
		{Name: "each", Per: "principal", Rate: Rate{1, time.Hour}},
	}})
	tool := newFake("t", "")
	if d := call(e, "p", tool); d.Effect != toolkit.Allow {
		t.Fatal(d)
	}
	for range 5 {
		if d := call(e, "p", tool); d.Rule != "each" {
			t.Fatalf("%+v", d)
		}
	}
	// The five refusals took nothing from "all": two calls are left.
	for _, who := range []string{"q", "r"} {
		if d := call(e, who, tool); d.Effect != toolkit.Allow {
			t.Fatalf("%s: %+v", who, d)
		}
	}
	if d := call(e, "s", tool); d.Rule != "all" {
		t.Errorf("%+v", d)
	}
}

func TestLimitSurvivesSetConfig(t *testing.T) {
	lim := Limit{Name: "l", Per: "principal", Rate: Rate{1, time.Hour}}
	e := mustEngine(t, Config{RateLimits: []Limit{lim}})
	tool := newFake("t", "")
	call(e, "p", tool)
	if err := e.SetConfig(Config{Rules: []Rule{{Effect: toolkit.Allow}}, RateLimits: []Limit{lim}}); err != nil {
		t.Fatal(err)
	}
	if d := call(e, "p", tool); d.RetryAfter == 0 {
		t.Errorf("the same limit lost its budgets on reload: %+v", d)
	}
	lim.Rate.Count = 2
	if err := e.SetConfig(Config{RateLimits: []Limit{lim}}); err != nil {
		t.Fatal(err)
	}
	if d := call(e, "p", tool); d.Effect != toolkit.Allow {
		t.Errorf("a changed limit starts afresh: %+v", d)
	}
}

func TestLimitBucketsAreBounded(t *testing.T) {
	defer func(n int) { maxBuckets = n }(maxBuckets)
	maxBuckets = 100
	e := mustEngine(t, Config{RateLimits: []Limit{{Per: "principal", Rate: Rate{1, time.Hour}}}})
	tool := newFake("t", "")
	for i := range 1000 {
		call(e, "p"+strings.Repeat("x", i%7)+string(rune('a'+i%26))+string(rune(i)), tool)
	}
	l := e.cfg.Load().limits[0]
	l.mu.Lock()
	n := len(l.buckets)
	l.mu.Unlock()
	if n > maxBuckets {
		t.Errorf("%d budgets kept, at most %d", n, maxBuckets)
	}
}

func TestRateLimitErrorThroughTheToolkit(t *testing.T) {
	e := mustEngine(t, Config{RateLimits: []Limit{{Name: "slow", Rate: Rate{1, time.Minute}}}})
	r := startToolkit(t, []toolkit.Tool{newFake("t", "")}, toolkit.WithPolicy(e))
	ctx := context.Background()
	if _, err := r.tk.Call(ctx, "srv.t"); err != nil {
		t.Fatal(err)
	}
	_, err := r.tk.Call(ctx, "srv.t")
	var pe *toolkit.PolicyError
	if !errors.Is(err, toolkit.ErrRateLimited) || !errors.As(err, &pe) || pe.Decision.RetryAfter <= 0 {
		t.Fatalf("%v", err)
	}
	if !strings.Contains(err.Error(), `rule "slow": retry after`) {
		t.Errorf("%q", err)
	}
}
