package codemode

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/llmkit/toolkit"
	"github.com/llmkit/toolkit/tool"
)

// warmMode is the fixture's toolkit with a code mode whose scripts run in
// workers kept warm under warm, and the pids of the workers its scripts
// ran in, with their principals, in order.
type warmMode struct {
	f *fixture
	w *Worker
	m *Mode

	mu   sync.Mutex
	ran  []ranIn
	proc map[int]*proc
}

type ranIn struct {
	principal string
	pid       int
}

func newWarmMode(t *testing.T, warm Warm, lim Limits) *warmMode {
	t.Helper()
	f := newFixture(t, false, Limits{})
	wm := &warmMode{f: f, proc: map[int]*proc{}}
	wm.w = &Worker{Path: os.Args[0], Args: []string{"-test.run=^$"}, Warm: warm}
	wm.w.onTake = func(principal string, p *proc) {
		wm.mu.Lock()
		defer wm.mu.Unlock()
		wm.ran = append(wm.ran, ranIn{principal, p.cmd.Process.Pid})
		wm.proc[p.cmd.Process.Pid] = p
	}
	if lim.Timeout == 0 {
		lim.Timeout = 5 * time.Second
	}
	m, err := New(f.tk, Config{Worker: wm.w, Limits: lim})
	if err != nil {
		t.Fatal(err)
	}
	wm.m = m
	t.Cleanup(func() { m.Close() })
	return wm
}

// run runs script as principal.
func (wm *warmMode) run(principal, script string) (*Output, error) {
	return wm.m.Run(toolkit.WithPrincipal(context.Background(), principal), script)
}

// last returns the pid of the worker the last script ran in.
func (wm *warmMode) last() int {
	wm.mu.Lock()
	defer wm.mu.Unlock()
	return wm.ran[len(wm.ran)-1].pid
}

// settle waits until no worker is being started.
func (wm *warmMode) settle() {
	wm.w.pool.waitFor(func(wp *workerPool) bool { return len(wp.starting) == 0 })
}

// waiting returns the pids of the workers that wait, per principal.
func (wm *warmMode) waiting() map[string][]int {
	wp := &wm.w.pool
	wp.mu.Lock()
	defer wp.mu.Unlock()
	out := map[string][]int{}
	for principal, q := range wp.idle {
		for _, ip := range q {
			out[principal] = append(out[principal], ip.p.cmd.Process.Pid)
		}
	}
	return out
}

// waitFor waits until cond holds of the pool (tests only).
func (wp *workerPool) waitFor(cond func(*workerPool) bool) {
	wp.mu.Lock()
	defer wp.mu.Unlock()
	if wp.changed == nil {
		wp.changed = sync.NewCond(&wp.mu)
	}
	for !cond(wp) {
		wp.changed.Wait()
	}
}

// closeAndCheck closes the mode and checks that every worker it started
// was reaped, and that this process has no child left.
func (wm *warmMode) closeAndCheck(t *testing.T) {
	t.Helper()
	if err := wm.m.Close(); err != nil {
		t.Fatal(err)
	}
	for pid, p := range wm.proc {
		if p.cmd.ProcessState == nil {
			t.Errorf("the worker %d was not reaped", pid)
		}
	}
	if kids := children(os.Getpid()); len(kids) > 0 {
		t.Errorf("child processes left after Close: %v", kids)
	}
}

// TestWarmWorkers: with Warm, scripts run in workers started before
// them; Close stops and reaps the workers that wait and those that ran
// scripts, and Run then fails.
func TestWarmWorkers(t *testing.T) {
	wm := newWarmMode(t, Warm{Max: 1}, Limits{})
	for range 3 {
		out, err := wm.run("alice", `return (await tools.list_files({dir: "w"})).files.length`)
		if err != nil || string(out.JSON) != "50" {
			t.Fatalf("%v, %v", out, err)
		}
	}
	wm.settle()
	waiting := wm.waiting()
	if len(waiting) != 1 || len(waiting["alice"]) != 1 {
		t.Fatalf("workers waiting: %v, want one for alice", waiting)
	}
	wp := &wm.w.pool
	wp.mu.Lock()
	idle := wp.idle["alice"][0].p
	wp.mu.Unlock()
	wm.closeAndCheck(t)
	if idle.cmd.ProcessState == nil {
		t.Error("the waiting worker was not reaped")
	}
	if _, err := wm.run("alice", `return 1`); !errors.Is(err, toolkit.ErrClosed) {
		t.Errorf("Run after Close: %v", err)
	}
}

// TestWarmWorkersIsolation: every script runs in a worker of its own,
// never one that ran another script, of its principal or another's; a
// principal's script runs in a worker started for that principal; a
// global one script sets is not there for the next.
func TestWarmWorkersIsolation(t *testing.T) {
	wm := newWarmMode(t, Warm{Max: 4, PerPrincipal: 2}, Limits{})
	const set = `globalThis.leak = "secret of " + %q; Object.prototype.polluted = 1; return typeof leak`
	const look = `return [typeof leak, typeof ({}).polluted, typeof globalThis.leak].join()`
	// After its first script (in a worker started for it), each
	// principal's scripts run in workers started for it.
	ran := map[string]bool{}
	warm := func(who string, before map[string][]int) {
		t.Helper()
		if ran[who] && !contains(before[who], wm.last()) {
			t.Errorf("%s's script ran in worker %d, not one that waited for %s (%v)", who, wm.last(), who, before)
		}
		ran[who] = true
		wm.settle()
	}
	for range 3 {
		for _, who := range []string{"alice", "bob"} {
			before := wm.waiting()
			if out, err := wm.run(who, fmt.Sprintf(set, who)); err != nil || out.Text != "string" {
				t.Fatalf("%s sets a global: %v, %v", who, out, err)
			}
			warm(who, before)
			for _, other := range []string{"alice", "bob"} {
				before := wm.waiting()
				out, err := wm.run(other, look)
				if err != nil || out.Text != "undefined,undefined,undefined" {
					t.Errorf("after %s's script, %s's sees %v, %v", who, other, out, err)
				}
				warm(other, before)
			}
		}
	}
	seen := map[int]string{}
	for _, r := range wm.ran {
		if p, ok := seen[r.pid]; ok {
			t.Errorf("worker %d ran a script of %s and one of %s", r.pid, p, r.principal)
		}
		seen[r.pid] = r.principal
	}
	waiting := wm.waiting()
	if len(waiting["alice"]) != 2 || len(waiting["bob"]) != 2 {
		t.Errorf("workers waiting: %v, want two each", waiting)
	}
	wm.closeAndCheck(t)
}

func contains(pids []int, pid int) bool {
	for _, p := range pids {
		if p == pid {
			return true
		}
	}
	return false
}

// TestWarmWorkersMisbehaving: a worker killed for a bound (memory, time)
// or that broke its protocol is reaped, never waits again, and the next
// script runs in a worker of its own.
func TestWarmWorkersMisbehaving(t *testing.T) {
	wm := newWarmMode(t, Warm{Max: 2}, Limits{Timeout: 2 * time.Second, Memory: 64 << 20})
	if _, err := wm.run("alice", `return 1`); err != nil {
		t.Fatal(err)
	}
	wm.settle()
	for _, c := range []struct{ name, script, want string }{
		{"memory", `let s = "xy"; for (;;) s += s`, "memory bound"},
		{"time", `for (;;) {}`, "time limit"},
		{"call flood", `const ps = []; for (let i = 0; i < 300; i++) ps.push(tools.read_file({name: "x"})); await Promise.all(ps)`, "tool calls"},
	} {
		_, err := wm.run("alice", c.script)
		if !errors.Is(err, ErrBound) || !strings.Contains(err.Error(), c.want) {
			t.Fatalf("%s: %v", c.name, err)
		}
		bad := wm.last()
		wm.settle()
		for who, pids := range wm.waiting() {
			if contains(pids, bad) {
				t.Errorf("%s: the worker %d that broke its bound waits for %s", c.name, bad, who)
			}
		}
		if out, err := wm.run("alice", `return typeof leak`); err != nil || out.Text != "undefined" {
			t.Fatalf("%s: the next script: %v, %v", c.name, out, err)
		}
		if wm.last() == bad {
			t.Errorf("%s: the next script ran in the worker that broke its bound", c.name)
		}
		wm.settle()
	}
	wm.closeAndCheck(t)
}

// TestWarmWorkersBounds: no more workers wait than Max in all and
// PerPrincipal for one principal; when Max wait, a principal none waits
// for takes the place of the one that waited longest; those that waited
// Idle are stopped and reaped; Close reaps every worker, those being
// started included.
func TestWarmWorkersBounds(t *testing.T) {
	wm := newWarmMode(t, Warm{Max: 3, PerPrincipal: 2}, Limits{})
	// a: 2 after its first script, and its second; b: 1, the last room;
	// c: 1 in the place of a's older, then 1 after its second.
	for i, c := range []struct {
		who  string
		want map[string]int
	}{
		{"a", map[string]int{"a": 2}},
		{"a", map[string]int{"a": 2}},
		{"b", map[string]int{"a": 2, "b": 1}},
		{"c", map[string]int{"a": 1, "b": 1, "c": 1}},
		{"c", map[string]int{"a": 1, "b": 1, "c": 1}},
	} {
		if _, err := wm.run(c.who, `return 1`); err != nil {
			t.Fatal(err)
		}
		wm.settle()
		got := map[string]int{}
		for who, pids := range wm.waiting() {
			got[who] = len(pids)
		}
		if !maps.Equal(got, c.want) {
			t.Errorf("after script %d (%s's), workers waiting: %v, want %v", i, c.who, got, c.want)
		}
	}
	// The workers scripts ran in, and the one evicted, are reaped.
	wm.w.pool.wg.Wait()
	if kids := children(os.Getpid()); len(kids) != 3 {
		t.Errorf("child processes: %v, want the 3 that wait", kids)
	}
	// Close while workers are being started.
	if _, err := wm.run("a", `return 1`); err != nil {
		t.Fatal(err)
	}
	wm.closeAndCheck(t)

	// Idle: the waiting workers are stopped, and reaped.
	wi := newWarmMode(t, Warm{Max: 2, PerPrincipal: 2, Idle: time.Millisecond}, Limits{})
	if _, err := wi.run("a", `return 1`); err != nil {
		t.Fatal(err)
	}
	wi.w.pool.waitFor(func(wp *workerPool) bool { return wp.total == 0 })
	wi.w.pool.wg.Wait() // the reaper's stops
	if kids := children(os.Getpid()); len(kids) > 0 {
		t.Errorf("child processes after the idle workers were stopped: %v", kids)
	}
	wi.closeAndCheck(t)
}

// TestWorkerNeverReady: a worker program that never says it is ready (a
// Path that is not this program) is killed after workerStartWait: the
// script fails saying so, a refill gives up alike, and Close returns with
// no child left.
func TestWorkerNeverReady(t *testing.T) {
	defer func(d time.Duration) { workerStartWait = d }(workerStartWait)
	workerStartWait = 100 * time.Millisecond
	f := newFixture(t, false, Limits{})
	w := &Worker{Path: "/bin/sleep", Args: []string{"3600"}, Warm: Warm{Max: 1}}
	m, err := New(f.tk, Config{Worker: w, Limits: Limits{Timeout: 5 * time.Second}})
	if err != nil {
		t.Fatal(err)
	}
	_, err = m.Run(context.Background(), `1`)
	if err == nil || !strings.Contains(err.Error(), "not ready within") {
		t.Errorf("Run = %v, want a worker not ready", err)
	}
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	if kids := children(os.Getpid()); len(kids) > 0 {
		t.Errorf("child processes left after Close: %v", kids)
	}
}

// TestWorkerCallIgnoringItsEnd: a script awaiting one call whose tool
// does not return when the script's time is up still stops at its time
// limit: the parent reads the worker's end while the call goes on, and
// the call is left to finish on its own.
func TestWorkerCallIgnoringItsEnd(t *testing.T) {
	f := newFixture(t, true, Limits{Timeout: 300 * time.Millisecond})
	release := make(chan struct{})
	defer close(release)
	stuck := tool.Must("stuck", "Returns once the test ends, whatever its context.", func(context.Context, empty) (string, error) {
		<-release
		return "late", nil
	})
	if err := f.tk.AddTool(stuck); err != nil {
		t.Fatal(err)
	}
	_, err := f.m.Run(context.Background(), `return await tools.stuck({})`)
	var se *ScriptError
	if !errors.As(err, &se) || !errors.Is(err, ErrBound) || !strings.Contains(se.Message, "time limit") {
		t.Fatalf("error %v, want the time limit", err)
	}
}

// TestWarmWorkerMemoryBound: a worker started ahead, whose heap's first
// pages were touched before its script came, still holds its script to
// its memory bound, and the next script runs.
func TestWarmWorkerMemoryBound(t *testing.T) {
	wm := newWarmMode(t, Warm{Max: 1}, Limits{Memory: 64 << 20, Timeout: time.Minute}) // the memory bound, not the time, stops it however slow the machine
	if _, err := wm.run("a", `return 1`); err != nil {
		t.Fatal(err)
	}
	wm.settle()
	first := wm.last()
	_, err := wm.run("a", `const keep = []; for (;;) keep.push(new Array(1e5).fill(1))`)
	var se *ScriptError
	if !errors.As(err, &se) || !se.Bound || !strings.Contains(se.Message, "memory bound") {
		t.Fatalf("a script allocating without end in a worker started ahead: %v, want its memory bound", err)
	}
	if wm.last() == first {
		t.Fatal("the script ran in the worker started for the first, not in one started ahead")
	}
	wm.settle()
	if out, err := wm.run("a", `return 2`); err != nil || string(out.JSON) != "2" {
		t.Fatalf("the next script: %v, %v", out, err)
	}
	wm.closeAndCheck(t)
}
