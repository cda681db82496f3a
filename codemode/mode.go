package codemode

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/llmkit/toolkit"
	"github.com/llmkit/toolkit/model"
	"github.com/llmkit/toolkit/resource"
)

// Config configures a Mode.
type Config struct {
	// Limits bound each script (zero fields take their defaults).
	Limits Limits
	// Worker, when set, runs each script in a child process whose memory
	// the OS bounds (Limits.Memory); without it scripts run in this
	// process, where nothing bounds a script's heap but its time.
	Worker *Worker
	// Catalog names the tools as scripts call them (default: a
	// model.Catalog over the toolkit, so the names are the model names
	// package model gives), and finds them for declare_tools' queries.
	Catalog *model.Catalog
	// Names, when set, names the tools as scripts call them in place of
	// Catalog: the names a face of the toolkit offers its clients (see
	// Names), so that a client's model calls a tool in a script by the
	// name the client lists.
	Names Names
}

// Mode runs scripts against a toolkit: see the package documentation. It
// is safe for concurrent use; every script has a VM of its own.
type Mode struct {
	tk     *toolkit.Toolkit
	cat    *model.Catalog
	names  Names
	lim    Limits
	worker *Worker
	// running counts the scripts that run in process, those given up on
	// included (see runInProcess).
	running sync.WaitGroup
}

// New returns the code mode of tk. A negative limit is an error naming
// it.
func New(tk *toolkit.Toolkit, cfg Config) (*Mode, error) {
	if tk == nil {
		return nil, fmt.Errorf("%w: codemode.New: no toolkit", toolkit.ErrBadParameter)
	}
	lim, err := cfg.Limits.withDefaults()
	if err != nil {
		return nil, err
	}
	m := &Mode{tk: tk, cat: cfg.Catalog, names: cfg.Names, lim: lim, worker: cfg.Worker}
	if m.cat == nil {
		m.cat = model.NewCatalog(tk)
	}
	return m, nil
}

// Close stops the workers that wait for a script (Worker.Warm), and
// waits for the scripts that run in process to end, those Run gave up on
// included. Run fails after Close when scripts run in workers.
func (m *Mode) Close() error {
	if m.worker != nil {
		m.worker.close()
	}
	m.running.Wait()
	return nil
}

// runInProcess runs a script on a goroutine of its own. A script stuck
// in a builtin that no interrupt stops (a huge "x".repeat, JSON.stringify
// of a value nested very deep) is given up on a second past its time
// limit, or past its caller's end: Run returns, and the goroutine goes on
// until the builtin returns and the interrupt stops the script. Only a
// Worker takes such a script's CPU and memory back at once.
func (m *Mode) runInProcess(ctx context.Context, script string) (*Output, error) {
	type result struct {
		out *Output
		err error
	}
	done := make(chan result, 1)
	m.running.Add(1)
	go func() {
		defer m.running.Done()
		c := &toolkitCaller{m: m}
		defer c.close()
		out, err := runScript(ctx, script, m.lim, c)
		done <- result{out, err}
	}()
	limit := time.NewTimer(m.lim.Timeout + workerGrace)
	defer limit.Stop()
	limitC, cancelled := limit.C, ctx.Done()
	var grace <-chan time.Time
	for {
		select {
		case r := <-done:
			return r.out, r.err
		case <-cancelled:
			// The interrupt stops the script; give it the grace to say where.
			g := time.NewTimer(workerGrace)
			defer g.Stop()
			grace, limitC, cancelled = g.C, nil, nil
		case <-grace:
			return nil, &ScriptError{Message: "the script was stopped in a builtin that cannot be interrupted; it ends when that builtin returns", Bound: true}
		case <-limitC:
			return nil, &ScriptError{Message: fmt.Sprintf("the script ran past its time limit (%v) in a builtin that cannot be interrupted; it ends when that builtin returns", m.lim.Timeout), Bound: true}
		}
	}
}

// Limits returns the bounds each script runs under, defaults filled in.
func (m *Mode) Limits() Limits { return m.lim }

// Run runs a script: the body of an async JavaScript function, in which
// tools.NAME(args) calls the tool NAME (its model name, or its name
// under Config.Names; see Declarations)
// through the toolkit's Call with ctx, so with ctx's principal, session,
// policy, pins, rate limits and audit; its promise resolves to the tool's
// result (JSON parsed, text as a string) or rejects with an Error whose
// name is "ToolError", with the tool's name and the call's outcome
// ("denied", "rate_limited", "tool_failed", ...). Calls the script
// starts without awaiting each (Promise.all) run in parallel, up to
// Limits.MaxParallelCalls at once. The script's return
// value is the Output. A script that throws, or breaks a bound, fails
// alone with a *ScriptError (ErrScript or ErrBound); when ctx ends first
// the error is ctx's.
func (m *Mode) Run(ctx context.Context, script string) (*Output, error) {
	var (
		out *Output
		err error
	)
	if m.worker != nil {
		c := &toolkitCaller{m: m}
		out, err = m.worker.run(ctx, script, m.lim, c)
		c.close()
	} else {
		out, err = m.runInProcess(ctx, script)
	}
	if err != nil && ctx.Err() != nil {
		// The caller gave up: say so, keeping where the script was.
		return nil, fmt.Errorf("%w: %w", ctx.Err(), err)
	}
	return out, err
}

// toolkitCaller runs a script's tool calls through the toolkit, each on
// one of as many goroutines as calls run at once, which live as long as
// the script (so that a call does not pay for a new goroutine's stack to
// grow through the toolkit's pipeline).
type toolkitCaller struct {
	m    *Mode
	jobs chan callJob // nil until the first call
	// idle counts the goroutines that wait for a job none was given.
	idle atomic.Int32
}

// callJob is one call handed to the caller's goroutines.
type callJob struct {
	ctx    context.Context
	id     int
	name   string
	it     toolkit.Item
	in     toolkit.Resource
	answer func(callResult)
}

// serve runs the calls handed to it until jobs is closed.
func (c *toolkitCaller) serve() {
	for j := range c.jobs {
		out := c.m.result(j.ctx, j.name, j.it, j.in)
		// Idle before the engine hears of it: a call it starts next
		// takes this goroutine.
		c.idle.Add(1)
		j.answer(callResult{id: j.id, out: out})
	}
}

// close ends the caller's goroutines, each once the call it runs, if
// any, returns (a call whose tool does not return when its context ends
// is left to finish on its own: the script went on without it).
func (c *toolkitCaller) close() {
	if c.jobs != nil {
		close(c.jobs)
	}
}

// start starts a script's call (caller): its outcome goes to done.
func (c *toolkitCaller) start(ctx context.Context, id int, name string, args []byte, done chan<- callResult) {
	c.call(ctx, id, name, args, func(res callResult) { done <- res })
}

// call resolves name and hands the call to an idle goroutine, or to a
// new one when none is idle, which gives its outcome to answer. Its
// callers (a script's engine, a worker's parent) start at most
// Limits.MaxParallelCalls calls at once, one at a time.
func (c *toolkitCaller) call(ctx context.Context, id int, name string, args []byte, answer func(callResult)) {
	if j, ok := c.job(ctx, id, name, args, answer); ok {
		c.hand(j)
	}
}

// job resolves a call into the job that makes it; a call of a tool
// unknown to scripts, or whose arguments are not JSON, is answered at
// once instead (false).
func (c *toolkitCaller) job(ctx context.Context, id int, name string, args []byte, answer func(callResult)) (callJob, bool) {
	it, ok := c.m.resolve(ctx, name)
	if !ok || it.Type != toolkit.ListTypeTools || isOwn(it.Value) {
		answer(callResult{id: id, out: callOut{Err: &callError{Tool: name, Outcome: toolkit.OutcomeNotFound, Message: fmt.Sprintf("unknown tool %q: see the declarations for the tools' names", name)}}})
		return callJob{}, false
	}
	in, err := resource.JSON("arguments", json.RawMessage(args))
	if err != nil {
		answer(callResult{id: id, out: callOut{Err: &callError{Tool: name, Outcome: toolkit.OutcomeBadInput, Message: err.Error()}}})
		return callJob{}, false
	}
	return callJob{ctx: ctx, id: id, name: name, it: it, in: in, answer: answer}, true
}

// hand hands a job to an idle goroutine, or to a new one when none is
// idle.
func (c *toolkitCaller) hand(j callJob) {
	if c.jobs == nil {
		c.jobs = make(chan callJob, c.m.lim.MaxParallelCalls)
	}
	for {
		n := c.idle.Load()
		if n == 0 {
			go c.serve()
			break
		}
		if c.idle.CompareAndSwap(n, n-1) {
			break
		}
	}
	c.jobs <- j
}

// run makes the call of j on this goroutine, and answers it.
func (c *toolkitCaller) run(j callJob) {
	j.answer(callResult{id: j.id, out: c.m.result(j.ctx, j.name, j.it, j.in)})
}

// result makes one call and reads its result.
func (m *Mode) result(ctx context.Context, name string, it toolkit.Item, in toolkit.Resource) callOut {
	res, err := m.tk.Call(ctx, it, in)
	if err != nil {
		return callOut{Err: &callError{Tool: name, Outcome: toolkit.Outcome(err), Message: truncate(err.Error(), maxMessage)}}
	}
	if res == nil {
		return callOut{}
	}
	data, err := res.Read(ctx)
	if err != nil {
		return callOut{Err: &callError{Tool: name, Outcome: toolkit.Outcome(err), Message: truncate(err.Error(), maxMessage)}}
	}
	var out callOut
	switch t := res.Type(); {
	case resource.IsJSON(t):
		out = callOut{JSON: data}
	case isText(t):
		s := string(data)
		out = callOut{Text: &s}
	default:
		out = callOut{Type: t, Data: data}
	}
	// Never handed on, to a worker either.
	if err := out.tooLarge(name, m.lim.MaxToolResult); err != nil {
		return callOut{Err: &callError{Tool: name, Outcome: toolkit.OutcomeToolFailed, Message: err.Error()}}
	}
	return out
}

// isText reports whether a result's media type is text.
func isText(mt string) bool {
	return mt == "" || len(mt) >= 5 && mt[:5] == "text/"
}
