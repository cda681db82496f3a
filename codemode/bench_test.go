package codemode

import (
	"context"
	"fmt"
	"os"
	"slices"
	"testing"
	"time"

	"github.com/llmkit/toolkit"
	"github.com/llmkit/toolkit/resource"
	"github.com/llmkit/toolkit/tool"
)

// benchMode is a toolkit with one small tool, echo, and its code mode.
func benchMode(b *testing.B, worker bool) (*toolkit.Toolkit, *Mode) {
	b.Helper()
	tk, err := toolkit.New()
	if err != nil {
		b.Fatal(err)
	}
	if err := tk.AddTool(tool.Must("echo", "Echo.", func(_ context.Context, in readIn) (readIn, error) { return in, nil })); err != nil {
		b.Fatal(err)
	}
	cfg := Config{}
	if worker {
		cfg.Worker = &Worker{Path: os.Args[0], Args: []string{"-test.run=^$"}}
	}
	m, err := New(tk, cfg)
	if err != nil {
		b.Fatal(err)
	}
	return tk, m
}

// BenchmarkWorkerStart: a script that returns at once, as a client
// sees it: in process (the baseline: the VM's start and the result's
// encoding), in a worker started for it (cold), and in one that waited
// for it (pooled, Worker.Warm; the timer stops while the next worker
// starts, as when scripts come no faster than processes start). Each
// reports its median too.
func BenchmarkWorkerStart(b *testing.B) {
	for _, c := range []struct {
		name   string
		worker bool
		warm   Warm
	}{
		{"in-process", false, Warm{}},
		{"cold", true, Warm{}},
		{"pooled", true, Warm{Max: 1}},
	} {
		b.Run(c.name, func(b *testing.B) {
			tk, _ := benchMode(b, false)
			var w *Worker
			if c.worker {
				w = &Worker{Path: os.Args[0], Args: []string{"-test.run=^$"}, Warm: c.warm}
			}
			m, err := New(tk, Config{Worker: w})
			if err != nil {
				b.Fatal(err)
			}
			defer m.Close()
			ctx := context.Background()
			var took []time.Duration
			for b.Loop() {
				if w != nil {
					b.StopTimer()
					w.pool.waitFor(func(wp *workerPool) bool { return len(wp.starting) == 0 })
					b.StartTimer()
				}
				start := time.Now()
				if _, err := m.Run(ctx, `return 1`); err != nil {
					b.Fatal(err)
				}
				took = append(took, time.Since(start))
			}
			slices.Sort(took)
			b.ReportMetric(float64(took[len(took)/2].Microseconds())/1000, "ms-median")
		})
	}
}

// manyCalls is the number of calls of BenchmarkInnerCall's script: enough
// that the script's start (a worker started ahead: about a millisecond)
// is under a microsecond a call.
const manyCalls = 2000

// BenchmarkInnerCall: the cost of one tool call, side by side in one
// run: a direct Call of echo, its result read (direct); a script's call
// in process (in-process); a script's call in a worker started ahead
// (worker; the timer stops while the next worker starts, and the
// first, started for the script before it, runs untimed). An op is
// manyCalls calls (one script of them); ns/call is the time of one, and
// a script's call costs its ns/call less direct's more than a Call.
// relay is the worker's share without engine or tool: a worker that
// only relays (serveHostile's "calls", relayCalls calls one by one, of a
// tool the toolkit does not have, each answered at once): a pipe round
// trip and the messages' JSON. engine is the engine's share alone: the
// script's calls answered at once, on the script's goroutine, with no
// tool.
func BenchmarkInnerCall(b *testing.B) {
	script := fmt.Sprintf(`for (let i = 0; i < %d; i++) await tools.echo({name: "x"}); return 1`, manyCalls)
	b.Run("direct", func(b *testing.B) {
		tk, _ := benchMode(b, false)
		ctx := context.Background()
		for b.Loop() {
			for range manyCalls {
				in, _ := resource.JSON("input", []byte(`{"name":"x"}`))
				res, err := tk.Call(ctx, "echo", in)
				if err != nil {
					b.Fatal(err)
				}
				if _, err := res.Read(ctx); err != nil {
					b.Fatal(err)
				}
			}
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/manyCalls, "ns/call")
	})
	b.Run("engine", func(b *testing.B) {
		lim, err := Limits{MaxToolCalls: manyCalls}.withDefaults()
		if err != nil {
			b.Fatal(err)
		}
		b.ReportAllocs()
		for b.Loop() {
			if _, err := runScript(context.Background(), script, lim, answeringCaller{}); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/manyCalls, "ns/call")
	})
	for _, c := range []struct {
		name   string
		args   []string // the worker's; nil: in process
		script string
		calls  int
	}{
		{"in-process", nil, script, manyCalls},
		{"worker", []string{"-test.run=^$"}, script, manyCalls},
		{"relay", []string{"-test.run=^$", hostileProtocolArg + "calls"}, `return 1`, relayCalls},
	} {
		b.Run(c.name, func(b *testing.B) {
			tk, _ := benchMode(b, false)
			var w *Worker
			if c.args != nil {
				w = &Worker{Path: os.Args[0], Args: c.args, Warm: Warm{Max: 1}}
			}
			m, err := New(tk, Config{Limits: Limits{MaxToolCalls: c.calls}, Worker: w})
			if err != nil {
				b.Fatal(err)
			}
			defer m.Close()
			ctx := context.Background()
			if w != nil {
				// The first script's worker is started for it, not
				// ahead: it runs before the timer does.
				if _, err := m.Run(ctx, `return 1`); err != nil {
					b.Fatal(err)
				}
			}
			for b.Loop() {
				if w != nil {
					b.StopTimer()
					w.pool.waitFor(func(wp *workerPool) bool { return len(wp.starting) == 0 })
					b.StartTimer()
				}
				if _, err := m.Run(ctx, c.script); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(c.calls), "ns/call")
		})
	}
}

// answeringCaller answers each call at once with echo's result.
type answeringCaller struct{}

func (answeringCaller) start(_ context.Context, id int, _ string, _ []byte, done chan<- callResult) {
	done <- callResult{id: id, out: callOut{JSON: []byte(`{"name":"x"}`)}}
}
