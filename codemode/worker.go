package codemode

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"runtime/metrics"
	"strings"
	"sync"
	"time"

	"github.com/llmkit/toolkit"
)

// Worker runs each script in a child process, so that the OS bounds what
// the engine cannot: the heap. The child is a program of the
// application's (by default the running one, re-executed) whose main calls
// ServeWorker before anything else. In it the script runs as in process,
// under the same Limits; its tool calls come back over a pipe to the
// parent, which makes them through the toolkit with the script's context
// (principal, session, policy, audit). The child's address space is
// limited to what it had when it started plus Limits.Memory
// (RLIMIT_AS), its CPU time to the script's Timeout (RLIMIT_CPU), and its
// Go heap is kept under Limits.Memory: a script that allocates without
// end makes its own process fail, which the parent reports as the
// memory bound, and nothing else. The child gets an empty environment.
// The parent bounds what the child sends it (Limits.MaxMessage, the
// calls it relays), and kills a child that breaks the protocol.
// A worker runs one script and exits: no process ever runs two scripts,
// so nothing one script leaves (in the engine, the heap, the process's
// rlimits, which cannot be raised again once lowered) reaches another.
// A script's start costs one process start (tens of milliseconds),
// unless Warm keeps workers started before the script came (about a
// millisecond).
type Worker struct {
	// Path is the program to start (default: os.Executable()).
	Path string
	// Args are its arguments.
	Args []string
	// Warm bounds the started workers kept waiting for a script (the
	// zero value keeps none: each script starts its own).
	Warm Warm

	pool workerPool
	// onTake, set by tests only, sees the worker each script runs in.
	onTake func(principal string, p *proc)
}

// Warm bounds the started workers a Worker keeps waiting. They wait per
// principal (toolkit.PrincipalFromContext of the script's context): once
// a principal's script ends, workers are started for that principal's
// next scripts, up to PerPrincipal and Max in all; a principal's script
// takes only a worker started for it, so that one principal's scripts
// cannot use up those another's wait for. When Max workers wait already,
// a principal none waits for takes the place of the worker that has
// waited longest. Each worker still runs one script only. Mode.Close
// stops them.
type Warm struct {
	// Max bounds the workers that wait, in all (default 0: none).
	Max int
	// PerPrincipal bounds the workers that wait for one principal
	// (default 1).
	PerPrincipal int
	// Idle is how long a worker waits for a script before it is stopped
	// (default DefaultWarmIdle).
	Idle time.Duration
}

// DefaultWarmIdle is how long a started worker waits for a script by
// default.
const DefaultWarmIdle = 5 * time.Minute

// workerEnv marks a worker process; its value is the protocol's version.
const workerEnv = "TOOLKIT_CODEMODE_WORKER"

// workerAheadEnv marks a worker started ahead of its script (Warm): it
// touches its heap's first pages before it says it is ready.
const workerAheadEnv = "TOOLKIT_CODEMODE_WORKER_AHEAD"

// workerGrace is how long after its Timeout a worker is killed: the time
// bound inside it fires first, unless the script is in a builtin that
// cannot be interrupted.
const workerGrace = time.Second

// message is one message on a worker's pipes, one a line. From the
// worker: Ready, then Call (at most Limits.MaxToolCalls, at most
// Limits.MaxParallelCalls of them unanswered), each time its script waits
// for the calls' outcomes Wait (how many it has not received), and Done
// or Fail; from the parent: Start,
// then Out for each Call, with the Call's ID, as the calls end, or Stop
// once they no longer do. The worker writes the messages of one turn of
// its script (the calls it made, then Wait, Done or Fail) in one write.
type message struct {
	ID    int          `json:"id,omitempty"`
	Ready bool         `json:"ready,omitempty"`
	Start *startMsg    `json:"start,omitempty"`
	Call  *callMsg     `json:"call,omitempty"`
	Wait  int          `json:"wait,omitempty"`
	Out   *callOut     `json:"out,omitempty"`
	Done  *Output      `json:"done,omitempty"`
	Fail  *ScriptError `json:"fail,omitempty"`
	// Stop, from the parent, says that the script's calls ended with its
	// time (or its caller gave up), and why: the script stops.
	Stop string `json:"stop,omitempty"`
}

type startMsg struct {
	Script string `json:"script"`
	Limits Limits `json:"limits"`
}

type callMsg struct {
	Name string          `json:"name"`
	Args json.RawMessage `json:"args"`
}

// run runs a script in a new worker; its calls go through c.
func (w *Worker) run(ctx context.Context, script string, lim Limits, c *toolkitCaller) (*Output, error) {
	if len(script) > lim.MaxScript {
		return nil, &ScriptError{Message: fmt.Sprintf("the script is %d bytes, more than the %d allowed", len(script), lim.MaxScript), Bound: true}
	}
	principal := toolkit.PrincipalFromContext(ctx)
	p, err := w.take(principal)
	if err != nil {
		return nil, err
	}
	if w.onTake != nil {
		w.onTake(principal, p)
	}
	// Once the script ended (not while it runs, on the same cores), the
	// workers for the principal's next scripts start.
	defer w.refill(principal)
	cmd, toChildW, fromChildR, stderr := p.cmd, p.toChild, p.fromChild, p.stderr
	rctx, cancel := context.WithTimeout(ctx, lim.Timeout+workerGrace)
	defer cancel()
	var (
		killOnce sync.Once
		killed   bool // by the parent; read after Wait
	)
	kill := func() { killOnce.Do(func() { killed = true; _ = cmd.Process.Kill() }) }
	stop := context.AfterFunc(rctx, kill)
	// The worker's messages are read, and its calls started, on a
	// goroutine of their own; each call answers the worker itself, as it
	// ends. The calls end with the script's time bound, so that the
	// worker sees a call that does not return fail in time, and stops the
	// script itself, saying where: the parent tells it why (Stop), in
	// place of the calls' outcomes.
	p.msgs.max = lim.MaxMessage
	cctx, ccancel := context.WithTimeout(ctx, lim.Timeout)
	defer ccancel()
	ended := make(chan ending, 1)
	cv := &conversation{ctx: cctx, msgs: p.msgs, lim: lim, c: c, ended: ended, enc: json.NewEncoder(toChildW)}
	if err := cv.enc.Encode(message{Start: &startMsg{Script: script, Limits: lim}}); err != nil {
		ended <- ending{nil, err}
	} else {
		go cv.read()
	}
	var e ending
	select {
	case e = <-ended:
	case <-cctx.Done():
		why := fmt.Sprintf("the script ran past its time limit (%v)", lim.Timeout)
		if ctx.Err() != nil {
			why = "the script was stopped: " + ctx.Err().Error()
		}
		cv.stop(why)
		e = <-ended
	}
	out, err := e.out, e.err
	stop()
	toChildW.Close()
	if err != nil {
		kill()
	}
	if err == nil {
		// The worker has nothing left to do: it is killed, and reaped
		// off the script's path (its exit takes a few milliseconds).
		kill()
		fromChildR.Close()
		w.reap(p)
		return out, nil
	}
	fromChildR.Close()
	werr := cmd.Wait()
	var se *ScriptError
	if errors.As(err, &se) {
		return nil, se
	}
	// The worker died or was killed.
	switch {
	case isOutOfMemory(stderr.String()):
		return nil, &ScriptError{Message: fmt.Sprintf("the script went past its memory bound (%d MiB)", lim.Memory>>20), Bound: true}
	case ctx.Err() != nil:
		return nil, ctx.Err()
	case rctx.Err() != nil:
		return nil, &ScriptError{Message: fmt.Sprintf("the script ran past its time limit (%v)", lim.Timeout), Bound: true}
	case !killed && cmd.ProcessState != nil && !cmd.ProcessState.Exited():
		// A signal of the OS: the CPU time bound (RLIMIT_CPU), or the
		// kernel's OOM killer.
		return nil, &ScriptError{Message: fmt.Sprintf("the script's worker was stopped by the system (%v): its CPU or memory bound", werr), Bound: true}
	}
	return nil, fmt.Errorf("%w: the script's worker failed: %v (%v) %s", ErrBound, err, werr, truncate(stderr.String(), 512))
}

// brokenProtocol is the failure of a script whose worker broke its
// protocol: the parent kills it.
func brokenProtocol(what string) error {
	return &ScriptError{Message: "the script's worker " + what + ", and was stopped", Bound: true}
}

// conversation is the parent's side of a worker's protocol: read reads
// the worker's messages and starts the calls it relays (those past
// Limits.MaxToolCalls, or past Limits.MaxParallelCalls unanswered, break
// the protocol), until the worker's Done or Fail; each call answers the
// worker as it ends, on the goroutine that made it; once the calls' time
// is up, stop tells the worker to stop in place of their outcomes.
type conversation struct {
	ctx   context.Context // the calls'
	msgs  *messageReader
	lim   Limits
	c     *toolkitCaller
	ended chan<- ending // the script's end, once
	// turn holds the calls of the worker's turn, started once it ends
	// (Wait, Done or Fail).
	turn []message

	mu      sync.Mutex // enc, calls, running
	enc     *json.Encoder
	calls   int // the calls the worker relayed
	running int // the calls counted and not answered
}

// ending is how a worker's script ended: its output or why not.
type ending struct {
	out *Output
	err error
}

// read reads the worker's messages until its script's end, which it
// sends on ended, and starts the calls of each of its turns as the turn
// ends. One goroutine at a time reads. When the worker waits for one
// outcome only, that of its turn's one call, and no other call runs (a
// script that awaits its calls one by one), nothing can come from it
// before that call's outcome: the call is made on this goroutine, with
// none woken between the pipe and the tool, unless the calls' time ends
// first (another goroutine then reads on, and this one ends with its
// call). Other calls go to the caller's goroutines. A worker that says
// it waits and still sends is read once the call ends.
func (cv *conversation) read() {
	for {
		var m message
		if err := cv.msgs.read(&m); err != nil {
			cv.ended <- ending{nil, err}
			return
		}
		switch {
		case m.Call != nil:
			if err := cv.count(); err != nil {
				cv.ended <- ending{nil, err}
				return
			}
			cv.turn = append(cv.turn, m)
		case m.Wait > 0:
			if m.Wait == 1 && len(cv.turn) == 1 && cv.alone() {
				if !cv.runHere() {
					return // another goroutine reads on
				}
				continue
			}
			cv.startTurn()
		case m.Done != nil:
			cv.startTurn()
			cv.ended <- ending{m.Done, nil}
			return
		case m.Fail != nil:
			cv.startTurn()
			cv.ended <- ending{nil, m.Fail}
			return
		default:
			cv.ended <- ending{nil, brokenProtocol("sent a message that is neither a call nor its script's end")}
			return
		}
	}
}

// startTurn hands the calls of the turn to the caller's goroutines.
func (cv *conversation) startTurn() {
	for i, m := range cv.turn {
		cv.c.call(cv.ctx, m.ID, m.Call.Name, m.Call.Args, cv.answer)
		cv.turn[i] = message{}
	}
	cv.turn = cv.turn[:0]
}

// runHere makes the turn's one call on this goroutine, and reports
// whether this goroutine still reads (false: the calls' time ended while
// the call ran, and another goroutine read on).
func (cv *conversation) runHere() bool {
	m := cv.turn[0]
	cv.turn[0] = message{}
	cv.turn = cv.turn[:0]
	j, ok := cv.c.job(cv.ctx, m.ID, m.Call.Name, m.Call.Args, cv.answer)
	if !ok {
		return true // answered
	}
	stop := context.AfterFunc(cv.ctx, cv.read)
	cv.c.run(j)
	return stop()
}

// alone reports whether one call only is counted and not answered.
func (cv *conversation) alone() bool {
	cv.mu.Lock()
	defer cv.mu.Unlock()
	return cv.running == 1
}

// count counts a call the worker relayed, which must be within its
// script's bounds.
func (cv *conversation) count() error {
	cv.mu.Lock()
	defer cv.mu.Unlock()
	cv.calls++
	cv.running++
	switch {
	case cv.calls > cv.lim.MaxToolCalls:
		return brokenProtocol(fmt.Sprintf("sent more than %d tool calls", cv.lim.MaxToolCalls))
	case cv.running > cv.lim.MaxParallelCalls:
		return brokenProtocol(fmt.Sprintf("sent more than %d tool calls at once", cv.lim.MaxParallelCalls))
	}
	return nil
}

// answer sends a call's outcome to the worker, unless the calls' time is
// up (Stop says why, in place of the outcomes). The call is counted as
// answered before the worker can hear of it, so that the call it makes
// next is never counted beside it. A failed write is the worker's end,
// which read reads.
func (cv *conversation) answer(res callResult) {
	cv.mu.Lock()
	defer cv.mu.Unlock()
	cv.running--
	if cv.ctx.Err() == nil {
		_ = cv.enc.Encode(message{ID: res.id, Out: &res.out})
	}
}

// stop tells the worker to stop its script, saying why, once the calls'
// time is up.
func (cv *conversation) stop(why string) {
	cv.mu.Lock()
	defer cv.mu.Unlock()
	_ = cv.enc.Encode(message{Stop: why})
}

// ServeWorker makes this process a code-mode worker when it was started
// as one (see Worker): it runs the script it is given and exits. In any
// other process it returns at once. A program that runs scripts in
// workers calls it first thing in main (and a test binary in TestMain).
func ServeWorker() {
	if os.Getenv(workerEnv) == "" {
		return
	}
	os.Exit(serveWorker(os.NewFile(3, "from-parent"), os.NewFile(4, "to-parent")))
}

// serveWorker is the worker's side: read the script, bound the process,
// run it, relay its calls, answer.
func serveWorker(in, out *os.File) int {
	msgs, w := newMessageReader(in), bufio.NewWriter(out)
	enc := json.NewEncoder(w)
	// The parent is trusted: what it sends is not bounded here.
	msgs.max = math.MaxInt
	warmUp(os.Getenv(workerAheadEnv) != "")
	if err := enc.Encode(message{Ready: true}); err != nil || w.Flush() != nil {
		return 2
	}
	var m message
	err := msgs.read(&m)
	if err != nil || m.Start == nil {
		fmt.Fprintln(os.Stderr, "codemode worker: no script:", err)
		return 2
	}
	lim, err := m.Start.Limits.withDefaults()
	if err != nil {
		fmt.Fprintln(os.Stderr, "codemode worker:", err)
		return 2
	}
	if err := limitProcess(lim); err != nil {
		fmt.Fprintln(os.Stderr, "codemode worker: cannot bound the process:", err)
		return 2
	}
	ctx, cancel := context.WithCancelCause(context.Background())
	defer cancel(nil)
	res, err := runScript(ctx, m.Start.Script, lim, &relay{w: w, enc: enc, msgs: msgs, lost: cancel})
	var reply message
	var se *ScriptError
	switch {
	case err == nil:
		reply.Done = res
	case errors.As(err, &se):
		reply.Fail = se
	default:
		reply.Fail = &ScriptError{Message: truncate(err.Error(), maxMessage)}
	}
	if err := enc.Encode(reply); err != nil || w.Flush() != nil {
		return 2
	}
	return 0
}

// heapCheck is how often a worker's heap is measured.
const heapCheck = 5 * time.Millisecond

// watchHeap holds the worker's Go heap under limit: a goroutine ends the
// process, saying "out of memory", once the heap's objects pass it. (The
// collector is left to its default pace: held to a limit it would spend
// the script's time collecting what the script keeps.)
func watchHeap(limit int64) {
	go func() {
		sample := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
		for range time.Tick(heapCheck) {
			metrics.Read(sample)
			if v := sample[0].Value; v.Kind() == metrics.KindUint64 && v.Uint64() > uint64(limit) {
				fmt.Fprintf(os.Stderr, "codemode worker: out of memory: the heap holds %d bytes, more than %d\n", v.Uint64(), limit)
				os.Exit(3)
			}
		}
	}()
}

// relay is the worker's caller: the calls of one turn of the script go
// to the parent in one write, with Wait, once the engine waits for their
// outcomes, which it does itself (waiter), reading them from the pipe on
// the VM's goroutine.
type relay struct {
	w       *bufio.Writer // to the parent, under enc
	enc     *json.Encoder
	msgs    *messageReader
	lost    context.CancelCauseFunc // the parent is gone: the script stops
	waiting int                     // the calls sent whose outcomes were not received
}

// errParentLost stops a worker's script whose parent is gone.
const errParentLost = stopCause("the script's worker lost its parent")

func (r *relay) start(_ context.Context, id int, name string, args []byte, _ chan<- callResult) {
	r.waiting++
	if err := r.enc.Encode(message{ID: id, Call: &callMsg{Name: name, Args: args}}); err != nil {
		r.lost(errParentLost)
	}
}

// wait sends the turn's calls and Wait, and reads the next outcome; a
// Stop, or the pipe's end, stops the script.
func (r *relay) wait() callResult {
	var m message
	err := r.enc.Encode(message{Wait: r.waiting})
	if err == nil {
		err = r.w.Flush()
	}
	if err == nil {
		err = r.msgs.read(&m)
	}
	switch {
	case err == nil && m.Stop != "":
		r.lost(stopCause(m.Stop))
		return callResult{}
	case err != nil || m.Out == nil:
		r.lost(errParentLost)
		return callResult{}
	}
	r.waiting--
	return callResult{id: m.ID, out: *m.Out}
}

// tailBuffer keeps the first max bytes written to it (a worker's stderr:
// the runtime's fatal error comes first).
type tailBuffer struct {
	mu  sync.Mutex
	max int
	b   bytes.Buffer
}

func (t *tailBuffer) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if room := t.max - t.b.Len(); room > 0 {
		t.b.Write(p[:min(len(p), room)])
	}
	return len(p), nil
}

func (t *tailBuffer) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.b.String()
}

// isOutOfMemory reports whether a worker's stderr tells that it ran out
// of memory: its heap watch, or the runtime failing to map more (which,
// under the race detector, says so in other words).
func isOutOfMemory(stderr string) bool {
	for _, s := range []string{"out of memory", "too many address space collisions", "failed to allocate"} {
		if strings.Contains(stderr, s) {
			return true
		}
	}
	return false
}
