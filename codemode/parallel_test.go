package codemode

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/llmkit/toolkit/tool"
)

// barrier holds its callers until want of them wait, then lets them all
// go, and counts the most that ran at once.
type barrier struct {
	mu      sync.Mutex
	want    int
	waiting int
	open    chan struct{}
	running int
	peak    int
}

func newBarrier(want int) *barrier { return &barrier{want: want, open: make(chan struct{})} }

func (b *barrier) wait(ctx context.Context) error {
	b.mu.Lock()
	b.running++
	b.peak = max(b.peak, b.running)
	b.waiting++
	open := b.open
	if b.waiting == b.want {
		close(b.open)
		b.open, b.waiting = make(chan struct{}), 0
	}
	b.mu.Unlock()
	defer func() {
		b.mu.Lock()
		b.running--
		b.mu.Unlock()
	}()
	select {
	case <-open:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

type gateIn struct {
	I int `json:"i"`
}

// TestPromiseAllRunsCallsInParallel: the calls a script awaits together
// run at once, up to Limits.MaxParallelCalls (the tool returns only once
// that many wait, in rounds), in process and through a worker; each
// outcome reaches its own promise, a failure rejecting its own only, and
// the results come in the script's order.
func TestPromiseAllRunsCallsInParallel(t *testing.T) {
	for _, worker := range []bool{false, true} {
		t.Run(map[bool]string{false: "in-process", true: "worker"}[worker], func(t *testing.T) {
			const parallel = 3
			// The time bound only stops a script whose calls run one at a
			// time: it never waits for it otherwise.
			f := newFixture(t, worker, Limits{MaxParallelCalls: parallel, Timeout: 30 * time.Second})
			b := newBarrier(parallel)
			gate := tool.Must("gate", "Returns i once enough calls wait; fails for a negative i.", func(ctx context.Context, in gateIn) (int, error) {
				if in.I < 0 {
					return 0, errors.New("negative")
				}
				return in.I, b.wait(ctx)
			})
			if err := f.tk.AddTool(gate); err != nil {
				t.Fatal(err)
			}
			out, err := f.m.Run(context.Background(), `
const all = await Promise.all([0, 1, 2, 3, 4, 5].map(i => tools.gate({i})));
const some = await Promise.allSettled([tools.gate({i: -1}), ...[6, 7, 8].map(i => tools.gate({i}))]);
return {all, some: some.map(s => s.status === "fulfilled" ? s.value : s.reason.name + ": " + s.reason.tool)};`)
			if err != nil {
				t.Fatal(err)
			}
			if got, want := string(out.JSON), `{"all":[0,1,2,3,4,5],"some":["ToolError: gate",6,7,8]}`; got != want {
				t.Fatalf("result %s, want %s", got, want)
			}
			b.mu.Lock()
			peak := b.peak
			b.mu.Unlock()
			if peak != parallel {
				t.Errorf("%d calls ran at once, want %d", peak, parallel)
			}
			if out.Calls != 10 {
				t.Errorf("%d calls, want 10", out.Calls)
			}
		})
	}
}

// TestParallelCallsKeepTheirBounds: calls started together count against
// MaxToolCalls, and stop with the script's time and its caller's end,
// in process and through a worker.
func TestParallelCallsKeepTheirBounds(t *testing.T) {
	for _, worker := range []bool{false, true} {
		name := map[bool]string{false: "in-process", true: "worker"}[worker]
		f := newFixture(t, worker, Limits{Timeout: 500 * time.Millisecond})
		_, err := f.m.Run(context.Background(), `await Promise.all(Array.from({length: 10000}, () => tools.read_file({name: "a"})))`)
		var se *ScriptError
		if !errors.As(err, &se) || !errors.Is(err, ErrBound) || se.Message != "more than 200 tool calls" {
			t.Fatalf("%s: 10,000 calls at once: %v", name, err)
		}
		_, err = f.m.Run(context.Background(), `await Promise.all([tools.hang({}), tools.hang({}), tools.read_file({name: "a"})])`)
		if !errors.As(err, &se) || !errors.Is(err, ErrBound) || se.Message != fmt.Sprintf("the script ran past its time limit (%v)", 500*time.Millisecond) {
			t.Fatalf("%s: calls that never return: %v", name, err)
		}
		// The caller gives up once all four calls run.
		f = newFixture(t, worker, Limits{Timeout: time.Hour})
		ctx, cancel := context.WithCancel(context.Background())
		var started sync.WaitGroup
		started.Add(4)
		go func() { started.Wait(); cancel() }()
		_, err = f.m.Run(withCallHook(ctx, started.Done), `
await Promise.all([tools.hang({}), tools.hang({}), tools.hang({}), tools.hang({})])`)
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("%s: cancelled: %v", name, err)
		}
	}
}
