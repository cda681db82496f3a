package codemode

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/dop251/goja"
)

// A script is the body of an async function: it may await tool calls and
// return a value. The engine runs it as
//
//	(async function() {<script>
//	})()
//
// so that its lines are the script's, and its first line's columns are
// shifted by the prefix's length.
const (
	scriptPrefix = "(async function() {"
	scriptSuffix = "\n})()"
	scriptName   = "script.js"
)

// caller runs the tool calls of a script: in process, through the
// toolkit; in a worker, over the pipe to the process that holds it.
type caller interface {
	// start starts call id without waiting for it: its outcome is sent
	// on done, once. The engine has at most Limits.MaxParallelCalls
	// calls started and not yet received from done, which done holds.
	start(ctx context.Context, id int, name string, args []byte, done chan<- callResult)
}

// waiter is a caller whose outcomes the engine waits for itself, on the
// VM's goroutine, in place of receiving them from done: a worker reads
// them from its parent's pipe, with no goroutine between. wait returns
// the next outcome; when none is to come, it ends the script's context
// first, with the reason as its cause.
type waiter interface {
	wait() callResult
}

// callResult is the outcome of the call id.
type callResult struct {
	id  int
	out callOut
}

// callOut is the outcome of one tool call as the script receives it.
type callOut struct {
	// JSON is a JSON result, Text a text one, Data and Type any other.
	JSON json.RawMessage `json:"json,omitempty"`
	Text *string         `json:"text,omitempty"`
	Data []byte          `json:"data,omitempty"`
	Type string          `json:"type,omitempty"`
	// Err is a failure: the script's promise is rejected with it.
	Err *callError `json:"error,omitempty"`
}

// callError is a failed tool call, as the script catches it: an Error
// whose name is "ToolError", with the tool's name and the outcome (one of
// the toolkit's Outcome values: "denied", "rate_limited", "tool_failed",
// "not_found", ...).
type callError struct {
	Tool    string `json:"tool"`
	Outcome string `json:"outcome"`
	Message string `json:"message"`
}

// Output is what a script returned.
type Output struct {
	// JSON is the returned value as JSON ("null" for none), unless Text is
	// set: the script returned a string.
	JSON   json.RawMessage `json:"json,omitempty"`
	Text   string          `json:"text,omitempty"`
	IsText bool            `json:"is_text,omitempty"`
	// Console is what the script wrote with console.log and its kin.
	Console string `json:"console,omitempty"`
	// Calls is how many tool calls the script made.
	Calls int `json:"calls"`
}

// run is one script's run in one VM.
type run struct {
	ctx     context.Context
	vm      *goja.Runtime
	lim     Limits
	c       caller
	calls   int
	bound   string // the bound the script broke, when it did
	console consoleBuf
	// What the script cannot replace: taken from the VM before it runs.
	stringify, parse goja.Callable
	errorCtor        goja.Value
	fns              map[string]goja.Value
	// The calls: those waiting for a slot (queue), those started
	// (running), the promises of both by id (settlers), their outcomes
	// (done).
	queue    []queuedCall
	running  int
	settlers map[int]settler
	done     chan callResult
}

// queuedCall is a call the script made that waits for a slot.
type queuedCall struct {
	id   int
	name string
	args []byte
}

// settler settles the promise of a call.
type settler struct {
	name            string
	resolve, reject func(any) error
	// where the script made the call: its failure's stack.
	where []goja.StackFrame
}

// callerFrames is how many frames of the script a call's failure keeps.
const callerFrames = 8

// runScript runs script under lim, its tool calls through c. The error is
// a *ScriptError (wrapping ErrScript or ErrBound), or the context's when
// ctx ended first.
func runScript(ctx context.Context, script string, lim Limits, c caller) (out *Output, err error) {
	var r *run
	defer func() {
		// The engine's own failure (reading a value the script made, a
		// getter of its own interrupted) is the script's failure, never a
		// panic of the process.
		if p := recover(); p != nil {
			se := &ScriptError{Message: truncate(fmt.Sprintf("the script failed in the engine: %v", p), maxMessage)}
			if r != nil {
				se.Console = r.console.String()
				if r.ctx.Err() != nil {
					se.Message, se.Bound = r.stopReason(), true
				}
			}
			out, err = nil, se
		}
	}()
	if len(script) > lim.MaxScript {
		return nil, &ScriptError{Message: fmt.Sprintf("the script is %d bytes, more than the %d allowed", len(script), lim.MaxScript), Bound: true}
	}
	ctx, cancel := context.WithTimeout(ctx, lim.Timeout)
	defer cancel()
	vm := goja.New()
	vm.SetMaxCallStackSize(lim.MaxCallStack)
	if testVMHook != nil {
		testVMHook(vm)
	}
	r = &run{ctx: ctx, vm: vm, lim: lim, c: c, console: consoleBuf{max: lim.MaxConsole}, fns: map[string]goja.Value{},
		settlers: map[int]settler{}, done: make(chan callResult, lim.MaxParallelCalls)}
	if err := r.setup(); err != nil {
		return nil, err
	}
	stop := context.AfterFunc(ctx, func() { vm.Interrupt(errStopped) })
	defer stop()
	v, err := vm.RunScript(scriptName, scriptPrefix+script+scriptSuffix)
	if err == nil {
		err = r.loop()
	}
	if err == nil {
		out, err = r.settle(v)
		if err == nil {
			return out, nil
		}
		if se, ok := err.(*ScriptError); ok && r.bound == "" {
			return nil, se
		}
	}
	return nil, r.failure(err)
}

// testVMHook, set by tests only, prepares each VM before its script
// runs (a native function that blocks, standing for a builtin that no
// interrupt stops).
var testVMHook func(*goja.Runtime)

// errStopped is what an interrupted VM carries: the reason is read from
// run.bound and the context.
var errStopped = errors.New("stopped")

// setup installs the globals the script sees: tools and console. The VM
// has no require, no timers, no filesystem, network or process: only what
// ECMAScript itself defines.
func (r *run) setup() error {
	vm := r.vm
	json := vm.Get("JSON").ToObject(vm)
	var ok bool
	if r.stringify, ok = goja.AssertFunction(json.Get("stringify")); !ok {
		return errors.New("codemode: the engine has no JSON.stringify")
	}
	if r.parse, ok = goja.AssertFunction(json.Get("parse")); !ok {
		return errors.New("codemode: the engine has no JSON.parse")
	}
	r.errorCtor = vm.Get("Error")
	tools := vm.NewDynamicObject(toolsObject{r})
	console := vm.NewObject()
	for _, level := range []string{"log", "info", "warn", "error", "debug"} {
		prefix := ""
		if level == "warn" || level == "error" {
			prefix = level + ": "
		}
		if err := console.Set(level, func(call goja.FunctionCall) goja.Value {
			r.console.line(prefix, call.Arguments, r.format)
			return goja.Undefined()
		}); err != nil {
			return err
		}
	}
	for name, v := range map[string]any{"tools": tools, "console": console} {
		if err := vm.GlobalObject().DefineDataProperty(name, vm.ToValue(v), goja.FLAG_FALSE, goja.FLAG_FALSE, goja.FLAG_TRUE); err != nil {
			return err
		}
	}
	return nil
}

// toolsObject is the global tools: tools.NAME is the async function that
// calls the tool the model knows as NAME. It cannot be written to.
type toolsObject struct{ r *run }

func (t toolsObject) Get(key string) goja.Value {
	if !isToolName(key) {
		return nil
	}
	if fn, ok := t.r.fns[key]; ok {
		return fn
	}
	if len(t.r.fns) >= maxToolNames {
		return nil
	}
	fn := t.r.vm.ToValue(func(call goja.FunctionCall) goja.Value { return t.r.callTool(key, call.Argument(0)) })
	t.r.fns[key] = fn
	return fn
}
func (toolsObject) Set(string, goja.Value) bool { return false }
func (t toolsObject) Has(key string) bool       { return isToolName(key) }
func (toolsObject) Delete(string) bool          { return false }
func (toolsObject) Keys() []string              { return nil }

// maxToolNames bounds the tool functions one script makes.
const maxToolNames = 1000

// isToolName reports whether key may name a tool: a model-safe or MCP
// name (letters, digits, '_', '-' and '.', up to 128 bytes), and not a
// name the engine itself looks up on objects (then, toJSON, constructor,
// ...).
func isToolName(key string) bool {
	if key == "" || len(key) > 128 || reservedKeys[key] {
		return false
	}
	for i := 0; i < len(key); i++ {
		c := key[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-' || c == '.') {
			return false
		}
	}
	return true
}

var reservedKeys = map[string]bool{
	"then": true, "toJSON": true, "constructor": true, "toString": true, "valueOf": true,
	"hasOwnProperty": true, "isPrototypeOf": true, "propertyIsEnumerable": true, "toLocaleString": true,
	"__proto__": true, "__defineGetter__": true, "__defineSetter__": true, "__lookupGetter__": true, "__lookupSetter__": true,
}

// callTool starts one tool call, or queues it while MaxParallelCalls
// run, and returns its promise, which loop settles.
func (r *run) callTool(name string, arg goja.Value) goja.Value {
	r.calls++
	if r.calls > r.lim.MaxToolCalls {
		r.breakBound(fmt.Sprintf("more than %d tool calls", r.lim.MaxToolCalls))
		panic(r.vm.NewGoError(errStopped))
	}
	args := []byte("{}")
	if arg != nil && !goja.IsUndefined(arg) && !goja.IsNull(arg) {
		s, err := r.stringify(goja.Undefined(), arg)
		if err != nil {
			panic(err)
		}
		if goja.IsUndefined(s) {
			panic(r.vm.NewTypeError("tools.%s: the arguments are not JSON", name))
		}
		str := s.String()
		if len(str) > r.lim.MaxToolResult {
			panic(r.vm.NewTypeError("tools.%s: the arguments are %d bytes, more than the %d allowed", name, len(str), r.lim.MaxToolResult))
		}
		args = []byte(str)
	}
	p, resolve, reject := r.vm.NewPromise()
	id := r.calls
	r.settlers[id] = settler{name: name, resolve: resolve, reject: reject, where: r.vm.CaptureCallStack(callerFrames, nil)}
	r.queue = append(r.queue, queuedCall{id: id, name: name, args: args})
	r.startQueued()
	return r.vm.ToValue(p)
}

// startQueued starts the queued calls while fewer than MaxParallelCalls
// run.
func (r *run) startQueued() {
	for r.running < r.lim.MaxParallelCalls && len(r.queue) > 0 {
		q := r.queue[0]
		r.queue[0] = queuedCall{}
		r.queue = r.queue[1:]
		r.running++
		r.c.start(r.ctx, q.id, q.name, q.args, r.done)
	}
}

// loop is the script's event loop, on the goroutine that runs the VM
// (which is not safe for concurrent use): it hands each call's outcome
// to the script, settling the call's promise (which runs what awaits
// it), until no call runs or waits. It stops the script when its time is
// up or its caller gives up, whatever the script catches.
func (r *run) loop() error {
	w, _ := r.c.(waiter)
	for r.running > 0 {
		var res callResult
		if w != nil {
			res = w.wait()
		} else {
			select {
			case res = <-r.done:
			case <-r.ctx.Done():
			}
		}
		// Checked after the outcome came too: a call that failed because
		// the script's time is up says nothing the script may catch.
		if r.ctx.Err() != nil {
			r.breakBound(r.stopReason())
			return errStopped
		}
		r.running--
		r.startQueued()
		if err := r.deliver(res); err != nil {
			return err
		}
	}
	return nil
}

// deliver settles the promise of a call with its outcome. The error is
// one no script catches (an interrupt).
func (r *run) deliver(res callResult) error {
	s, ok := r.settlers[res.id]
	if !ok {
		return nil
	}
	delete(r.settlers, res.id)
	if res.out.Err != nil {
		return s.reject(r.toolError(res.out.Err, s.where))
	}
	v, err := r.value(s.name, res.out)
	if err != nil {
		return s.reject(r.toolError(&callError{Tool: s.name, Outcome: "tool_failed", Message: err.Error()}, s.where))
	}
	return s.resolve(v)
}

// value turns a call's result into the value the script receives: JSON
// parsed, text as a string, anything else as {type, data} (data in
// base64).
func (r *run) value(name string, out callOut) (goja.Value, error) {
	if err := out.tooLarge(name, r.lim.MaxToolResult); err != nil {
		return nil, err
	}
	switch {
	case out.JSON != nil:
		return r.parse(goja.Undefined(), r.vm.ToValue(string(out.JSON)))
	case out.Text != nil:
		return r.vm.ToValue(*out.Text), nil
	case out.Type != "":
		b, err := json.Marshal(struct {
			Type string `json:"type"`
			Data []byte `json:"data"`
		}{out.Type, out.Data})
		if err != nil {
			return nil, err
		}
		return r.parse(goja.Undefined(), r.vm.ToValue(string(b)))
	}
	return goja.Null(), nil
}

// tooLarge says so when the result is larger than a script may receive.
func (out callOut) tooLarge(name string, limit int) error {
	size := len(out.JSON) + len(out.Data)
	if out.Text != nil {
		size += len(*out.Text)
	}
	if size > limit {
		return fmt.Errorf("tools.%s: the result is %d bytes, more than the %d a script may receive", name, size, limit)
	}
	return nil
}

// toolError makes the Error a failed call rejects with; its stack is
// where the script made the call.
func (r *run) toolError(e *callError, where []goja.StackFrame) goja.Value {
	obj, err := r.vm.New(r.errorCtor, r.vm.ToValue(e.Message))
	if err != nil {
		return r.vm.ToValue(e.Message)
	}
	var stack bytes.Buffer
	stack.WriteString("ToolError: " + e.Message)
	for _, f := range where {
		stack.WriteString("\n\tat ")
		f.Write(&stack)
	}
	_ = obj.Set("stack", stack.String())
	_ = obj.Set("name", "ToolError")
	_ = obj.Set("tool", e.Tool)
	_ = obj.Set("outcome", e.Outcome)
	return obj
}

// breakBound records the bound the script broke and stops it: an
// interrupt, which no try/catch holds.
func (r *run) breakBound(what string) {
	if r.bound == "" {
		r.bound = what
	}
	r.vm.Interrupt(errStopped)
}

// settle reads the outcome of the script's promise.
func (r *run) settle(v goja.Value) (*Output, error) {
	p, ok := v.Export().(*goja.Promise)
	if !ok {
		return nil, errors.New("the script did not run as an async function")
	}
	switch p.State() {
	case goja.PromiseStatePending:
		return nil, &ScriptError{Message: "the script awaits something that never settles (there are no timers; only tool calls settle)", Console: r.console.String()}
	case goja.PromiseStateRejected:
		return nil, r.thrown(p.Result())
	}
	out := &Output{Calls: r.calls}
	res := p.Result()
	if s, ok := res.Export().(string); ok {
		out.Text, out.IsText = s, true
		if len(s) > r.lim.MaxOutput {
			return nil, r.tooLarge(len(s))
		}
	} else {
		if goja.IsUndefined(res) {
			res = goja.Null()
		}
		s, err := r.stringify(goja.Undefined(), res)
		if err != nil {
			return nil, err
		}
		if goja.IsUndefined(s) {
			s = r.vm.ToValue("null")
		}
		str := s.String()
		if len(str) > r.lim.MaxOutput {
			return nil, r.tooLarge(len(str))
		}
		out.JSON = json.RawMessage(str)
	}
	out.Console = r.console.String()
	return out, nil
}

func (r *run) tooLarge(n int) error {
	return &ScriptError{Message: fmt.Sprintf("the script's result is %d bytes, more than the %d allowed", n, r.lim.MaxOutput), Bound: true, Console: r.console.String()}
}

// thrown describes a value the script threw (or rejected with).
func (r *run) thrown(v goja.Value) error {
	se := &ScriptError{Console: r.console.String()}
	if obj, ok := v.(*goja.Object); ok {
		if st := obj.Get("stack"); st != nil && !goja.IsUndefined(st) {
			se.Line, se.Column = position(st.String())
		}
		name, msg := obj.Get("name"), obj.Get("message")
		if name != nil && msg != nil && !goja.IsUndefined(name) {
			text := truncate(msg.String(), maxMessage)
			if m := syntaxPosition.FindStringSubmatch(text); m != nil {
				// A syntax error: its position is in its message.
				line, _ := strconv.Atoi(m[1])
				col, _ := strconv.Atoi(m[2])
				se.Line, se.Column = shift(line, col)
				text = strings.TrimSpace(text[len(m[0]):])
			}
			se.Message = truncate(name.String(), 64) + ": " + text
			return se
		}
	}
	se.Message = "uncaught " + truncate(safeString(v), maxMessage)
	return se
}

// maxMessage bounds the message of a script's failure.
const maxMessage = 1024

// failure describes the error RunScript or settle returned.
func (r *run) failure(err error) error {
	se := &ScriptError{Console: r.console.String()}
	var ie *goja.InterruptedError
	var ce *goja.CompilerSyntaxError
	var ex *goja.Exception
	var so *goja.StackOverflowError
	switch {
	case r.bound != "":
		se.Message, se.Bound = r.bound, true
		if errors.As(err, &ie) {
			se.Line, se.Column = framePosition(ie.Stack())
		}
	case errors.As(err, &ie):
		se.Line, se.Column = framePosition(ie.Stack())
		se.Bound = true
		se.Message = r.stopReason()
	case errors.As(err, &so):
		se.Bound = true
		se.Message = fmt.Sprintf("the script's call stack went past %d frames", r.lim.MaxCallStack)
		se.Line, se.Column = framePosition(so.Stack())
	case errors.As(err, &ce):
		se.Message = "SyntaxError: " + truncate(ce.Message, maxMessage)
		if ce.File != nil {
			p := ce.File.Position(ce.Offset)
			se.Line, se.Column = shift(p.Line, p.Column)
		} else if m := syntaxPosition.FindStringSubmatch(ce.Message); m != nil {
			line, _ := strconv.Atoi(m[1])
			col, _ := strconv.Atoi(m[2])
			se.Line, se.Column = shift(line, col)
			se.Message = "SyntaxError: " + truncate(strings.TrimSpace(ce.Message[len(m[0]):]), maxMessage)
		}
	case errors.As(err, &ex):
		return r.thrown(ex.Value())
	default:
		se.Message = truncate(err.Error(), maxMessage)
	}
	return se
}

// stopReason says why the script's context ended: its time is up, or its
// caller gave up.
func (r *run) stopReason() string {
	if r.ctx.Err() == nil {
		return "the script was stopped"
	}
	if context.Cause(r.ctx) == context.DeadlineExceeded {
		return fmt.Sprintf("the script ran past its time limit (%v)", r.lim.Timeout)
	}
	if s, ok := context.Cause(r.ctx).(stopCause); ok {
		return string(s)
	}
	return "the script was stopped: " + context.Cause(r.ctx).Error()
}

// stopCause ends a script's context, saying why in full.
type stopCause string

func (s stopCause) Error() string { return string(s) }

// framePosition returns the script position of the innermost frame in
// the script.
func framePosition(stack []goja.StackFrame) (line, col int) {
	for _, f := range stack {
		if f.SrcName() == scriptName {
			p := f.Position()
			return shift(p.Line, p.Column)
		}
	}
	return 0, 0
}

var syntaxPosition = regexp.MustCompile(`^(?:SyntaxError: )?` + regexp.QuoteMeta(scriptName) + `: Line (\d+):(\d+)`)

var stackPosition = regexp.MustCompile(regexp.QuoteMeta(scriptName) + `:(\d+):(\d+)`)

// position reads the first script position of an Error's stack.
func position(stack string) (line, col int) {
	m := stackPosition.FindStringSubmatch(truncate(stack, 4096))
	if m == nil {
		return 0, 0
	}
	line, _ = strconv.Atoi(m[1])
	col, _ = strconv.Atoi(m[2])
	return shift(line, col)
}

// shift maps a position in the wrapped source to one in the script.
func shift(line, col int) (int, int) {
	if line == 1 {
		col -= len(scriptPrefix)
		if col < 1 {
			col = 1
		}
	}
	return line, col
}

// safeString returns a thrown value's text without running script code
// (no toString of the script's).
func safeString(v goja.Value) string {
	if v == nil {
		return "undefined"
	}
	if _, ok := v.(*goja.Object); ok {
		return "object"
	}
	return v.String()
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

// consoleBuf keeps what the script writes to the console, up to max
// bytes.
type consoleBuf struct {
	max  int
	b    strings.Builder
	full bool
}

// format returns a console argument's text: objects as JSON.
func (r *run) format(v goja.Value) string {
	if _, ok := v.(*goja.Object); ok {
		if s, err := r.stringify(goja.Undefined(), v); err == nil && !goja.IsUndefined(s) {
			return s.String()
		}
	}
	return safeString(v)
}

func (c *consoleBuf) line(prefix string, args []goja.Value, format func(goja.Value) string) {
	if c.full {
		return
	}
	var sb strings.Builder
	sb.WriteString(prefix)
	for i, a := range args {
		if i > 0 {
			sb.WriteByte(' ')
		}
		if sb.Len() > c.max {
			break
		}
		sb.WriteString(truncate(format(a), c.max))
	}
	sb.WriteByte('\n')
	if c.b.Len()+sb.Len() > c.max {
		rest := c.max - c.b.Len()
		c.b.WriteString(sb.String()[:max(rest, 0)])
		c.b.WriteString("\n[console output cut]\n")
		c.full = true
		return
	}
	c.b.WriteString(sb.String())
}

func (c *consoleBuf) String() string { return c.b.String() }
