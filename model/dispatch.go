package model

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	toolkit "github.com/llmkit/toolkit"
	"github.com/llmkit/toolkit/internal/errs"
	"github.com/llmkit/toolkit/resource"
)

// DefaultConcurrency is how many calls of one Dispatch run at once unless
// WithConcurrency says otherwise.
const DefaultConcurrency = 4

// maxSuggestions bounds the names an unknown-tool message proposes.
const maxSuggestions = 3

// ToolCall is one function call requested by a model.
type ToolCall struct {
	// ID is the provider's identifier of the call, echoed in the Result.
	ID string
	// Name is the model-safe name the model called.
	Name string
	// Arguments is the raw argument text (a JSON object, if the model
	// behaves).
	Arguments string
}

// Result is the outcome of one ToolCall, ready to be sent back to the
// model. A failed call is a Result with IsError set, never a Go error: the
// conversation goes on and the model reads what went wrong.
type Result struct {
	// ID and Name echo the call.
	ID   string
	Name string
	// Item is the toolkit item called (zero when the name is unknown).
	Item toolkit.Item
	// Content is what the model reads: the output text, the output JSON
	// (JSON is true), a short placeholder describing binary output
	// (Binary is true), or the error message (IsError is true).
	Content string
	// JSON reports that Content is a JSON document.
	JSON bool
	// Binary reports that the output is binary (an image, audio, ...):
	// Content only describes it and Resource holds it, for the caller to
	// attach in the provider's own way.
	Binary bool
	// IsError reports a failed call: unknown name, bad arguments, tool
	// error or panic, timeout or cancellation.
	IsError bool
	// Resource is the tool's output (nil on error or when the tool
	// returned nothing).
	Resource toolkit.Resource
	// Repaired reports that the arguments were not valid JSON and were
	// mended (see Repair); Repairs lists what was done.
	Repaired bool
	Repairs  []string
	// Err is the underlying error of a failed call, for the application's
	// logs; it wraps a toolkit sentinel (ErrNotFound for an unknown name,
	// ErrBadParameter for bad arguments, ErrToolFailed, ErrUnavailable for a
	// timeout, ...).
	Err error
}

// Resolver maps model names to toolkit items. Namer and Catalog implement
// it.
type Resolver interface {
	Resolve(name string) (toolkit.Item, bool)
}

// Caller runs toolkit items. *toolkit.Toolkit implements it.
type Caller interface {
	Call(ctx context.Context, item any, resources ...toolkit.Resource) (toolkit.Resource, error)
}

// itemLooker is implemented by a Caller that can find an item by its
// qualified key at call time. *toolkit.Toolkit implements it.
type itemLooker interface {
	LookupItem(ctx context.Context, key string) (toolkit.Item, error)
}

// suggester proposes known names for an unknown one.
type suggester interface {
	suggest(name string, max int) []string
}

// Dispatcher runs a model's tool calls through a toolkit. It is safe for
// concurrent use.
type Dispatcher struct {
	tk      Caller
	r       Resolver
	limit   int
	timeout time.Duration
	repair  bool
}

// DispatchOption configures a Dispatcher.
type DispatchOption func(*Dispatcher)

// WithConcurrency sets how many calls of one Dispatch run at once (default
// DefaultConcurrency; values below 1 mean 1).
func WithConcurrency(n int) DispatchOption {
	return func(d *Dispatcher) { d.limit = max(n, 1) }
}

// WithTimeout gives every call its own time limit (default none beyond the
// caller's context). A call that runs out of time yields an error Result
// at once, whether or not its tool honours ctx.
func WithTimeout(t time.Duration) DispatchOption {
	return func(d *Dispatcher) { d.timeout = t }
}

// WithRepair makes the dispatcher mend arguments that are almost JSON (see
// Repair) instead of rejecting them; the Result reports what was mended.
func WithRepair(on bool) DispatchOption {
	return func(d *Dispatcher) { d.repair = on }
}

// NewDispatcher returns a dispatcher that resolves names with r and runs
// items with tk.
func NewDispatcher(tk Caller, r Resolver, opts ...DispatchOption) *Dispatcher {
	d := &Dispatcher{tk: tk, r: r, limit: DefaultConcurrency}
	for _, o := range opts {
		o(d)
	}
	return d
}

// Dispatch runs the calls of one model turn, at most the concurrency limit
// at a time, and returns their results in call order. One call's failure,
// panic or hang does not affect the others. Dispatch returns when every
// call has a result; see Call for tools that ignore their context.
func (d *Dispatcher) Dispatch(ctx context.Context, calls ...ToolCall) []Result {
	results := make([]Result, len(calls))
	sem := make(chan struct{}, d.limit)
	var wg sync.WaitGroup
	for i, c := range calls {
		select {
		case sem <- struct{}{}:
		case <-ctx.Done():
			results[i] = d.stopped(ctx, c, toolkit.Item{})
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			results[i] = d.Call(ctx, c)
		}()
	}
	wg.Wait()
	return results
}

// outcome is what a call's goroutine hands back.
type outcome struct {
	res  toolkit.Resource
	data []byte
	err  error
}

// Call runs one tool call. It resolves the name, checks (and, with
// WithRepair, mends) the arguments, runs the item with toolkit Call under
// the per-call timeout, and reads the output.
//
// The item run is always the toolkit's current one. A Resolver maps a name
// to an item identity, but the value it holds may have been replaced since
// (a builtin removed and added again, a store prompt edited, a remote tool
// redefined). So when the Caller can look items up (a *toolkit.Toolkit
// can), the item is looked up again by its qualified key just before the
// call, and a call to an item that is gone fails with ErrNotFound. The one
// exception is a prompt whose key is shadowed by a tool of the same
// namespace and name (Lookup prefers the tool): it runs as resolved.
//
// The item runs in its own goroutine so that Call can return when the
// timeout or ctx expires even if the tool ignores ctx. Such a tool's
// goroutine lingers until the tool returns; its late result is dropped.
func (d *Dispatcher) Call(ctx context.Context, c ToolCall) (res Result) {
	called := false // the toolkit's Call audits what it is given
	defer func() {
		if !called && res.Err != nil {
			d.auditRefusal(ctx, c, res)
		}
	}()
	r := Result{ID: c.ID, Name: c.Name}
	item, ok := d.r.Resolve(c.Name)
	if !ok {
		return d.unknown(r, c.Name)
	}
	if l, ok := d.tk.(itemLooker); ok {
		cur, err := l.LookupItem(ctx, item.Key())
		switch {
		case err != nil:
			return d.gone(r, item, err)
		case cur.Type == item.Type || cur.Type == "" || item.Type == "":
			item = cur
		}
	}
	r.Item = item
	kind := string(item.Type)
	if kind == "" {
		kind = string(toolkit.ListTypeTools)
	}

	args := c.Arguments
	if d.repair {
		fixed, notes, err := Repair(args)
		if err != nil {
			return failed(r, fmt.Errorf("%w: %s %q: %v", errs.ErrBadParameter, kind, c.Name, err),
				fmt.Sprintf("The arguments for %q are not valid JSON and could not be repaired (%v). Send the arguments as a JSON object.", c.Name, trimErr(err)))
		}
		if len(notes) > 0 {
			r.Repaired, r.Repairs, args = true, notes, fixed
		}
	}
	if !json.Valid([]byte(args)) {
		return failed(r, fmt.Errorf("%w: %s %q: arguments are not valid JSON", errs.ErrBadParameter, kind, c.Name),
			fmt.Sprintf("The arguments for %q are not valid JSON. Send the arguments as a JSON object.", c.Name))
	}
	if t := strings.TrimLeft(args, " \t\r\n"); !strings.HasPrefix(t, "{") {
		return failed(r, fmt.Errorf("%w: %s %q: arguments are not a JSON object", errs.ErrBadParameter, kind, c.Name),
			fmt.Sprintf("The arguments for %q must be a JSON object.", c.Name))
	}
	if ctx.Err() != nil {
		return d.stopped(ctx, c, item)
	}
	in, err := resource.JSON("input", json.RawMessage(args))
	if err != nil {
		return failed(r, fmt.Errorf("%s %q: %w", kind, c.Name, err), err.Error())
	}

	cctx, cancel := ctx, context.CancelFunc(func() {})
	if d.timeout > 0 {
		cctx, cancel = context.WithTimeout(ctx, d.timeout)
	}
	defer cancel()
	called = true

	done := make(chan outcome, 1)
	go func() {
		defer func() {
			if p := recover(); p != nil {
				done <- outcome{err: fmt.Errorf("%w: %s %q panicked: %v", errs.ErrToolFailed, kind, item.Key(), p)}
			}
		}()
		res, err := d.tk.Call(cctx, item.Value, in)
		if err != nil || res == nil {
			done <- outcome{res: res, err: err}
			return
		}
		data, err := res.Read(cctx)
		if err != nil {
			err = fmt.Errorf("%s %q: reading output %q: %w", kind, item.Key(), res.URI(), err)
		}
		done <- outcome{res: res, data: data, err: err}
	}()

	select {
	case o := <-done:
		if o.err != nil {
			if cctx.Err() != nil {
				return d.stopped(ctx, c, item)
			}
			return failed(r, o.err, o.err.Error())
		}
		return withOutput(r, o.res, o.data)
	case <-cctx.Done():
		return d.stopped(ctx, c, item)
	}
}

// stopped is the Result of a call cut short by its timeout or by ctx.
func (d *Dispatcher) stopped(ctx context.Context, c ToolCall, item toolkit.Item) Result {
	r := Result{ID: c.ID, Name: c.Name, Item: item}
	if err := ctx.Err(); err != nil {
		return failed(r, fmt.Errorf("%w: tool %q: %w", errs.ErrUnavailable, c.Name, err),
			fmt.Sprintf("The call to %q was cancelled before it finished.", c.Name))
	}
	return failed(r, fmt.Errorf("%w: tool %q: no result within %s: %w", errs.ErrUnavailable, c.Name, d.timeout, context.DeadlineExceeded),
		fmt.Sprintf("The call to %q timed out after %s.", c.Name, d.timeout))
}

// unknown is the Result of a call to a name that resolves to nothing.
func (d *Dispatcher) unknown(r Result, name string) Result {
	msg := fmt.Sprintf("There is no tool named %q.", clip(name, 80))
	if s, ok := d.r.(suggester); ok {
		if names := s.suggest(name, maxSuggestions); len(names) > 0 {
			msg += " Did you mean " + quoteList(names) + "?"
		} else {
			msg += " Call one of the tools you were given."
		}
	}
	return failed(r, fmt.Errorf("%w: tool %q", errs.ErrNotFound, clip(name, 80)), msg)
}

// gone is the Result of a call to an item that resolved to a name but is
// no longer in the toolkit.
func (d *Dispatcher) gone(r Result, item toolkit.Item, err error) Result {
	r.Item = item
	if !errors.Is(err, errs.ErrNotFound) {
		return failed(r, err, err.Error())
	}
	return failed(r, err, fmt.Sprintf("The tool %q is no longer available. Call one of the tools you were given.", clip(r.Name, 80)))
}

func failed(r Result, err error, msg string) Result {
	r.IsError, r.Err, r.Content = true, err, msg
	return r
}

// withOutput fills a Result from a tool's output.
func withOutput(r Result, res toolkit.Resource, data []byte) Result {
	r.Resource = res
	if res == nil {
		r.Content = "(no output)"
		return r
	}
	mt := res.Type()
	switch {
	case resource.IsJSON(mt) && json.Valid(data):
		r.Content, r.JSON = string(data), true
	case resource.IsText(mt) || mt == "" && utf8.Valid(data) && !containsNUL(data):
		r.Content = strings.ToValidUTF8(string(data), "\uFFFD")
	default:
		r.Binary = true
		r.Content = placeholder(res, mt, len(data))
	}
	return r
}

// placeholder describes binary output to the model.
func placeholder(res toolkit.Resource, mt string, n int) string {
	kind := "binary"
	if i := strings.IndexByte(mt, '/'); i > 0 {
		switch k := strings.ToLower(mt[:i]); k {
		case "image", "audio", "video":
			kind = k
		}
	}
	if mt == "" {
		mt = "unknown type"
	}
	name := res.Name()
	if name == "" {
		name = res.URI()
	}
	return fmt.Sprintf("[%s output %q: %s, %d bytes; attached separately]", kind, name, mt, n)
}

func containsNUL(b []byte) bool {
	for _, c := range b {
		if c == 0 {
			return true
		}
	}
	return false
}

func quoteList(names []string) string {
	q := make([]string, len(names))
	for i, n := range names {
		q[i] = fmt.Sprintf("%q", n)
	}
	if len(q) == 1 {
		return q[0]
	}
	return strings.Join(q[:len(q)-1], ", ") + " or " + q[len(q)-1]
}

func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return strings.ToValidUTF8(s[:n], "") + "..."
}

// trimErr drops the sentinel prefix from a Repair error for the model.
func trimErr(err error) string {
	return strings.TrimPrefix(err.Error(), errs.ErrBadParameter.Error()+": ")
}
