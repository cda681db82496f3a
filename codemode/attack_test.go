package codemode

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/dop251/goja"
)

// attack is a hostile script and the bound that stops it.
type attack struct {
	name   string
	script string
	// want is in the failure's message ("" for any).
	want string
	// bound: the failure wraps ErrBound.
	bound bool
	// worker: the attack allocates without end, so it runs in a worker
	// only (in process nothing but time bounds the heap).
	worker bool
}

var attacks = []attack{
	{name: "busy loop", script: `while (true) {}`, bound: true, want: "time limit"},
	{name: "busy loop that catches", script: `for (;;) { try { while (true) {} } catch (e) {} }`, bound: true, want: "time limit"},
	{name: "deep recursion", script: `function f(n) { return f(n + 1) + 1 } return f(0)`, bound: true, want: "call stack"},
	{name: "recursion that catches", script: `function f() { try { return f() } catch (e) { return f() } } return f()`, want: ""},
	{name: "10,000 tool calls", script: `for (let i = 0; i < 10000; i++) await tools.read_file({name: "a"})`, bound: true, want: "more than 200 tool calls"},
	{name: "10,000 tool calls that catch", script: `for (let i = 0; i < 10000; i++) { try { await tools.read_file({name: "a"}) } catch (e) {} }`, bound: true, want: "more than 200 tool calls"},
	{name: "a call that never returns", script: `return await tools.hang({})`, bound: true, want: "time limit"},
	{name: "a caught call that never returns", script: `for (;;) { try { await tools.hang({}) } catch (e) {} }`, bound: true, want: "time limit"},
	{name: "a result too large to receive", script: `return await tools.huge({})`, want: "more than the 4194304 a script may receive"},
	{name: "a result too large to return", script: `return "x".repeat(1 << 20)`, bound: true, want: "more than the 262144 allowed"},
	{name: "a thrown value whose getter never returns", script: `throw {get name() { for (;;) {} }, message: "m"}`, bound: true, want: "time limit"},
	{name: "a result whose toJSON never returns", script: `return {toJSON() { for (;;) {} }}`, bound: true, want: "time limit"},
	{name: "a builtin that cannot be interrupted", script: `const n = 3e4; JSON.stringify(JSON.parse('{"o":'.repeat(n) + "1" + "}".repeat(n))); return 1`, bound: true, want: "time limit"},
	{name: "an awaited promise that never settles", script: `await new Promise(() => {})`, want: "never settles"},
	{name: "exponential string", script: `let s = "xy"; for (;;) s += s`, bound: true, want: "memory bound", worker: true},
	{name: "exponential array", script: `let a = [1]; for (;;) a = a.concat(a)`, bound: true, want: "memory bound", worker: true},
	{name: "1 GB return value", script: `return "x".repeat(1 << 30)`, bound: true, want: "memory bound", worker: true},
	{name: "arrays without end", script: `const keep = []; for (;;) keep.push(new Array(1e5).fill(1))`, bound: true, want: "memory bound", worker: true},
}

// TestAttacksFailAlone runs each attack, in process and in a worker
// (those that allocate without end in a worker only): it fails with
// ErrBound naming its bound, or, for what is the script's own failure, ErrScript; and a
// plain script run by the same Mode afterwards still works. goleak (in
// TestMain) checks that nothing is left running.
func TestAttacksFailAlone(t *testing.T) {
	for _, worker := range []bool{false, true} {
		f := newFixture(t, worker, Limits{Timeout: 500 * time.Millisecond, Memory: 128 << 20})
		// Those not about time have all the time they need to meet their
		// own bound.
		fm := newFixture(t, worker, Limits{Timeout: time.Minute, Memory: 128 << 20})
		for _, a := range attacks {
			if a.worker && !worker {
				continue
			}
			f := f
			if a.want != "time limit" {
				f = fm
			}
			t.Run(map[bool]string{false: "in-process/", true: "worker/"}[worker]+a.name, func(t *testing.T) {
				_, err := f.m.Run(context.Background(), a.script)
				if err == nil {
					t.Fatal("the attack succeeded")
				}
				var se *ScriptError
				if !errors.As(err, &se) || !strings.Contains(se.Message, a.want) {
					t.Fatalf("error %v, want one saying %q", err, a.want)
				}
				if a.bound && !errors.Is(err, ErrBound) {
					t.Fatalf("error %v does not wrap ErrBound", err)
				}
				if kids := children(os.Getpid()); len(kids) > 0 {
					t.Fatalf("processes left behind: %v", kids)
				}
				out, err := f.m.Run(context.Background(), `return (await tools.list_files({dir: "d"})).files.length`)
				if err != nil || string(out.JSON) != "50" {
					t.Fatalf("a script after the attack: %v, %v", out, err)
				}
			})
		}
	}
}

// TestScriptIgnoringCancellation: a script that catches every failure of
// its calls and goes on is stopped when its caller cancels: the error
// wraps context.Canceled.
func TestScriptIgnoringCancellation(t *testing.T) {
	for _, worker := range []bool{false, true} {
		f := newFixture(t, worker, Limits{Timeout: time.Hour})
		ctx, cancel := context.WithCancel(context.Background())
		started := make(chan struct{})
		done := make(chan error, 1)
		// The hang tool's first call is the signal that the script runs.
		var once sync.Once
		go func() {
			_, err := f.m.Run(withCallHook(ctx, func() { once.Do(func() { close(started) }) }), `
for (;;) { try { await tools.hang({}) } catch (e) {} ; try { while (true) {} } catch (e) {} }`)
			done <- err
		}()
		<-started
		cancel()
		err := <-done
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("worker %v: %v", worker, err)
		}
	}
}

// TestSandboxHasNoWayOut: the VM holds ECMAScript and the two globals,
// and nothing that reaches Go, the process, files or the network; the
// Function constructor and eval stay inside the VM; what a script does to
// prototypes and to the injected functions stays in its own VM.
func TestSandboxHasNoWayOut(t *testing.T) {
	f := newFixture(t, false, Limits{})
	out, err := f.m.Run(context.Background(), `
const g = Function("return this")();
const names = ["require", "process", "module", "exports", "setTimeout", "setInterval", "fetch", "XMLHttpRequest", "Deno", "Bun", "os", "fs"];
const found = names.filter(n => typeof g[n] !== "undefined" || eval("typeof " + n) !== "undefined");
const fn = tools.read_file;
const viaCtor = fn.constructor("return typeof require")();
let setOK = true; try { tools.read_file = () => "pwned"; } catch (e) { setOK = false }
Object.prototype.then = function() { throw new Error("polluted") };
Function.prototype.call = function() { return "polluted" };
Array.prototype.push = function() { return 0 };
JSON.parse = () => "polluted";
JSON.stringify = () => "polluted";
const r = await tools.list_files({dir: "p"});
return {found, viaCtor, replaced: tools.read_file === fn, files: r.files.length, keys: Object.keys(tools).length};`)
	if err == nil {
		// The pollution of Object.prototype.then makes the result a thenable
		// that throws: a failure of the script's own, which is fine too.
		t.Logf("result %s", out.JSON)
		var got struct {
			Found    []string `json:"found"`
			ViaCtor  string   `json:"viaCtor"`
			Replaced bool     `json:"replaced"`
			Files    int      `json:"files"`
		}
		if err := json.Unmarshal(out.JSON, &got); err != nil {
			t.Fatal(err)
		}
		if len(got.Found) != 0 || got.ViaCtor != "undefined" || !got.Replaced || got.Files != 50 {
			t.Fatalf("sandbox: %+v", got)
		}
	} else if !errors.Is(err, ErrScript) {
		t.Fatalf("polluting script: %v", err)
	}
	// The next script's VM is clean.
	out, err = f.m.Run(context.Background(), `
return [typeof Object.prototype.then, Function.prototype.call === Function.prototype.call && typeof Function.prototype.call, JSON.parse("[1]").length]`)
	if err != nil || string(out.JSON) != `["undefined","function",1]` {
		t.Fatalf("next script: %s, %v", out.JSON, err)
	}
}

// children returns the pids of ppid's child processes (Linux; none
// elsewhere).
func children(ppid int) []int {
	if runtime.GOOS != "linux" {
		return nil
	}
	stats, _ := filepath.Glob("/proc/[0-9]*/stat")
	var pids []int
	for _, f := range stats {
		data, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		s := string(data)
		i := strings.LastIndexByte(s, ')')
		if i < 0 {
			continue
		}
		var state string
		var pid, parent int
		fmt.Sscan(s, &pid)
		fmt.Sscan(s[i+1:], &state, &parent)
		if parent == ppid {
			pids = append(pids, pid)
		}
	}
	return pids
}

// callHookKey carries a function the hang tool's call runs (tests only).
type callHookKey struct{}

func withCallHook(ctx context.Context, f func()) context.Context {
	return context.WithValue(ctx, callHookKey{}, f)
}

// TestUninterruptibleBuiltinIsGivenUpOn: in process, a script stuck in a
// builtin that no interrupt stops (here a native function that blocks
// until the test lets it go; in the wild JSON.stringify of a value nested
// very deep, whose cost grows with the square of its depth) is given up
// on past its time limit: Run returns, saying so, and Close waits for
// the script's goroutine to end.
func TestUninterruptibleBuiltinIsGivenUpOn(t *testing.T) {
	release := make(chan struct{})
	testVMHook = func(vm *goja.Runtime) {
		_ = vm.Set("stuck", func() { <-release })
	}
	defer func() { testVMHook = nil }()
	f := newFixture(t, false, Limits{Timeout: 100 * time.Millisecond})
	_, err := f.m.Run(context.Background(), `stuck(); return 1`)
	var se *ScriptError
	if !errors.As(err, &se) || !se.Bound || !strings.Contains(se.Message, "cannot be interrupted") {
		t.Fatalf("%v", err)
	}
	close(release)
	f.m.Close()
}
