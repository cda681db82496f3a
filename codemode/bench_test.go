package codemode

import (
	"context"
	"os"
	"testing"

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

// BenchmarkScriptStart: a script that returns at once, in process: the
// VM's start and the result's encoding.
func BenchmarkScriptStart(b *testing.B) {
	_, m := benchMode(b, false)
	ctx := context.Background()
	for b.Loop() {
		if _, err := m.Run(ctx, `return 1`); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkScriptStartWorker: the same in a worker process.
func BenchmarkScriptStartWorker(b *testing.B) {
	_, m := benchMode(b, true)
	ctx := context.Background()
	for b.Loop() {
		if _, err := m.Run(ctx, `return 1`); err != nil {
			b.Fatal(err)
		}
	}
}

// innerCalls is the number of calls of the call benchmarks.
const innerCalls = 100

const hundredCalls = `for (let i = 0; i < 100; i++) await tools.echo({name: "x"}); return 1`

// BenchmarkScriptCalls: a script of 100 calls of echo, in process; with
// BenchmarkScriptStart and BenchmarkDirectCalls it gives the cost of a
// script's call beside a direct Call.
func BenchmarkScriptCalls(b *testing.B) {
	_, m := benchMode(b, false)
	ctx := context.Background()
	for b.Loop() {
		if _, err := m.Run(ctx, hundredCalls); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/innerCalls, "ns/call")
}

// BenchmarkScriptCallsWorker: the same in a worker process.
func BenchmarkScriptCallsWorker(b *testing.B) {
	_, m := benchMode(b, true)
	ctx := context.Background()
	for b.Loop() {
		if _, err := m.Run(ctx, hundredCalls); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/innerCalls, "ns/call")
}

// BenchmarkDirectCalls: the baseline, 100 direct Calls of echo, each
// result read.
func BenchmarkDirectCalls(b *testing.B) {
	tk, _ := benchMode(b, false)
	ctx := context.Background()
	for b.Loop() {
		for range innerCalls {
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
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/innerCalls, "ns/call")
}

// BenchmarkScriptStartWorkerWarm: in a worker that was started before
// the script came (Worker.Warm 1), as it is when scripts come no faster
// than processes start (the timer stops while the next worker starts).
func BenchmarkScriptStartWorkerWarm(b *testing.B) {
	tk, _ := benchMode(b, false)
	w := &Worker{Path: os.Args[0], Args: []string{"-test.run=^$"}, Warm: 1}
	m, err := New(tk, Config{Worker: w})
	if err != nil {
		b.Fatal(err)
	}
	defer m.Close()
	ctx := context.Background()
	for b.Loop() {
		b.StopTimer()
		w.pool.wg.Wait()
		b.StartTimer()
		if _, err := m.Run(ctx, `return 1`); err != nil {
			b.Fatal(err)
		}
	}
}
