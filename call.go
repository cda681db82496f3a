package toolkit

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"runtime/debug"

	"github.com/google/jsonschema-go/jsonschema"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"

	"github.com/llmkit/toolkit/internal/names"
	"github.com/llmkit/toolkit/internal/schemaguard"
	"github.com/llmkit/toolkit/resource"
)

// frame is what a Call puts in the context of the tool or prompt it runs:
// the toolkit, the nesting depth and the resources passed to Call.
type frame struct {
	tk        *Toolkit
	depth     int
	resources []Resource
	// session is the caller's WithSession session as seen inside the call
	// (logging through tk's logger), made once per Call; its localSession
	// is nil when the caller has no such session.
	session callSession
	// hook is the caller's session as seen inside the call when
	// WithProgressFunc or WithSessionLogger made it (its origin), or nil.
	hook *hookSession
	// id numbers the call in its toolkit (from 1), and parent is the id
	// of the call it runs inside (0 for none): the audit ties a nested
	// call (a script's tool calls) to the call that made it.
	id, parent uint64
}

type frameKey struct{}

func frameFrom(ctx context.Context) *frame {
	f, _ := ctx.Value(frameKey{}).(*frame)
	return f
}

// ResourcesFromContext returns the resources passed to the Call that is
// running the current tool or prompt (the first one holds the input), or
// nil outside a call. The slice must not be modified.
func ResourcesFromContext(ctx context.Context) []Resource {
	if f := frameFrom(ctx); f != nil {
		return f.resources
	}
	return nil
}

// CallDepth returns how many Calls are nested in ctx: 1 inside a tool or
// prompt called from outside, 0 outside any call.
func CallDepth(ctx context.Context) int {
	if f := frameFrom(ctx); f != nil {
		return f.depth
	}
	return 0
}

// Call runs a tool or a prompt. item is a Tool, a Prompt, an Item, or a key
// resolved with Lookup.
//
// For a tool, the first resource holds the JSON input ("{}" when there is
// none); it is validated against the tool's input schema before Run. Every
// resource is reachable from the tool's context through
// ResourcesFromContext, and the session through SessionFromContext. The
// output is wrapped into a Resource: nil stays nil; a string becomes text; a
// json.RawMessage becomes JSON; []byte is sniffed; a Resource is returned as
// is; any other value is marshalled as JSON. With an output schema the
// output must be JSON that satisfies it.
//
// A tool that ran and reported failure returns an error wrapping
// ErrToolFailed and the tool's own error. An error from Run that says the
// tool did not run — it wraps ErrUnavailable, ErrClosed, ErrNotFound,
// ErrBadParameter, context.Canceled or context.DeadlineExceeded, as a
// remote tool's does when its server cannot be reached — is returned
// naming the tool but without ErrToolFailed, unless Run wrapped
// ErrToolFailed itself. A panicking tool, and output that cannot be handed
// over (a nil pointer posing as a Resource, a value whose methods panic
// while the output is wrapped and checked), wrap ErrToolFailed.
//
// A prompt is run by the delegate's Call: the first resource supplies the
// template variables and the others are attachments. Without a delegate the
// error wraps ErrBadParameter.
//
// Nested calls (a tool or prompt calling back into the toolkit with the ctx
// it was given) are limited by WithMaxCallDepth; beyond it the error wraps
// ErrDepthExceeded.
func (tk *Toolkit) Call(ctx context.Context, item any, resources ...Resource) (Resource, error) {
	var e *entry
	if it, ok := item.(Item); ok {
		item = it.Value
	}
	switch v := item.(type) {
	case string:
		var err error
		if e, err = tk.snap.Load().lookup(v); err != nil {
			err = tk.explainMiss(v, err)
			tk.auditMiss(ctx, v, resources, err)
			return nil, err
		}
		item = e.item.Value
	case nil:
		return nil, fmt.Errorf("%w: nothing to call", ErrBadParameter)
	default:
		e = tk.snap.Load().entryFor(v)
	}
	switch v := item.(type) {
	case Tool:
		return tk.callTool(ctx, v, e, resources)
	case Prompt:
		return tk.callPrompt(ctx, v, e, resources)
	case Resource:
		return nil, fmt.Errorf("%w: %q is a resource: read it instead of calling it", ErrBadParameter, v.URI())
	}
	return nil, fmt.Errorf("%w: cannot call a %T", ErrBadParameter, item)
}

// callNumber returns the id of the call running in ctx (see frame), 0 outside
// any call.
func callNumber(ctx context.Context) uint64 {
	if f := frameFrom(ctx); f != nil {
		return f.id
	}
	return 0
}

// enter checks the depth limit and returns the context for a nested call.
func (tk *Toolkit) enter(ctx context.Context, what, name string, resources []Resource) (context.Context, error) {
	depth := 1
	if f := frameFrom(ctx); f != nil {
		depth = f.depth + 1
	}
	if depth > tk.maxDepth {
		return nil, fmt.Errorf("%w: %s %q would run at depth %d, limit %d", ErrDepthExceeded, what, name, depth, tk.maxDepth)
	}
	f := &frame{tk: tk, depth: depth, resources: resources, id: tk.calls.Add(1), parent: callNumber(ctx)}
	switch s := ctx.Value(sessionKey{}).(type) {
	case *localSession:
		if s != nil && s.logger == nil {
			f.session = callSession{localSession: s, logger: tk.logger}
		}
	case *hookSession:
		if s != nil {
			f.hook = s.inCall(tk, f)
		}
	}
	return context.WithValue(ctx, frameKey{}, f), nil
}

// callTool runs a tool through the pipeline. With a tracer, the span covers
// the whole pipeline, so a call refused for its depth, its schema or its
// input is traced with an error status like one whose tool fails.
func (tk *Toolkit) callTool(ctx context.Context, t Tool, e *entry, resources []Resource) (res Resource, err error) {
	name := t.Name()
	ctx, endSpan := tk.startSpan(ctx, "toolkit.tool", name, e)
	defer func() { endSpan(err) }()
	if m := tk.metrics; m != nil {
		rec := m.callStarted(ctx, e.namespace(), name)
		defer func() { m.callEnded(ctx, rec, err) }()
	}
	outer := ctx
	if ctx, err = tk.enter(ctx, "tool", name, resources); err != nil {
		tk.Audit(outer, AuditEntry{Namespace: e.namespace(), Name: name, Err: err})
		return nil, err
	}
	input, err := toolInput(ctx, name, resources)
	if err != nil {
		tk.Audit(outer, AuditEntry{Namespace: e.namespace(), Name: name, Err: err})
		return nil, err
	}
	if g := tk.guard; g != nil && !g.open() {
		f := frameFrom(ctx)
		a := admission{g: g, tool: name, input: input, call: f.id, parent: f.parent}
		if err = g.admit(ctx, &a, t, e); err != nil {
			return nil, err
		}
		if g.audit != nil {
			defer func() { a.end(ctx, err) }()
		}
	}
	sc := tk.schemasOf(t, e)
	if err := checkInput(name, sc, input); err != nil {
		return nil, err
	}
	out, err := runTool(ctx, t, input)
	if err != nil {
		if ranAndFailed(err) && !errors.Is(err, ErrToolFailed) {
			return nil, fmt.Errorf("%w: tool %q: %w", ErrToolFailed, name, err)
		}
		return nil, fmt.Errorf("tool %q: %w", name, err)
	}
	return finishOutput(ctx, name, sc.out, sc.outPlan, out)
}

// startSpan starts the span of a call of the item named name (of entry e,
// nil for an item called by value), with its namespace and, under key, its
// name as attributes, and returns the function that ends it, marking it as
// failed when given an error. Without a tracer it does nothing.
func (tk *Toolkit) startSpan(ctx context.Context, key, name string, e *entry) (context.Context, func(error)) {
	if tk.tracer == nil {
		return ctx, noSpan
	}
	ctx, span := tk.tracer.Start(ctx, name, trace.WithAttributes(
		attribute.String("toolkit.namespace", e.namespace()),
		attribute.String(key, name),
	))
	return ctx, func(err error) {
		if err != nil {
			span.RecordError(err)
			span.SetStatus(codes.Error, err.Error())
		}
		span.End()
	}
}

// noSpan ends no span.
func noSpan(error) {}

// callPrompt hands a prompt to the delegate. With a tracer, the span covers
// the whole call, failures included.
func (tk *Toolkit) callPrompt(ctx context.Context, p Prompt, e *entry, resources []Resource) (res Resource, err error) {
	name := p.Name()
	ctx, endSpan := tk.startSpan(ctx, "toolkit.prompt", name, e)
	defer func() { endSpan(err) }()
	if tk.delegate == nil {
		return nil, fmt.Errorf("%w: prompt %q: the toolkit has no delegate to run prompts", ErrBadParameter, name)
	}
	if ctx, err = tk.enter(ctx, "prompt", name, resources); err != nil {
		return nil, err
	}
	if res, err = tk.delegate.Call(ctx, p, resources...); err != nil {
		return nil, fmt.Errorf("prompt %q: %w", name, err)
	}
	return res, nil
}

// emptyInput returns the input of a tool called without one. Each call
// gets its own copy: a tool may write into its input.
func emptyInput() json.RawMessage { return json.RawMessage("{}") }

// toolInput returns the bytes of the input held by the first resource, or
// emptyInput. checkInput checks them.
func toolInput(ctx context.Context, name string, resources []Resource) (json.RawMessage, error) {
	if len(resources) == 0 || resources[0] == nil {
		return emptyInput(), nil
	}
	data, err := resources[0].Read(ctx)
	if err != nil {
		return nil, fmt.Errorf("%w: tool %q: reading input: %w", ErrBadParameter, name, err)
	}
	if len(data) == 0 {
		return emptyInput(), nil
	}
	return data, nil
}

// checkInput checks a tool's input in one pass over it: with an input
// schema, the input is decoded once and the decoded value is validated (a
// decoding error is invalid JSON); without one, only its syntax is
// checked. Invalid JSON wraps ErrBadParameter; an input that breaks the
// schema, or a schema that does not resolve, wraps ErrSchema. A schema
// whose validation cost depends on the input (a recursive one) has a
// plan, which first bounds the input's depth and the work of validating
// it (an input past the bounds wraps ErrBadParameter). A flat schema
// (see flatSchema) checks the decoded input first: what it accepts, the
// validator would; what it refuses goes to the validator for its error.
// The tool is then given the same bytes.
func checkInput(name string, sc *toolSchemas, input json.RawMessage) error {
	var v any
	switch {
	case sc.in == nil:
		if !isEmptyObject(input) && !json.Valid(input) {
			return fmt.Errorf("%w: tool %q: input is not valid JSON", ErrBadParameter, name)
		}
		if sc.err != nil {
			return fmt.Errorf("%w: tool %q: %w", ErrSchema, name, sc.err)
		}
		return nil
	case isEmptyObject(input):
		v = map[string]any{}
	default:
		var err error
		if v, err = decodeJSON(input); err != nil {
			return fmt.Errorf("%w: tool %q: input is not valid JSON", ErrBadParameter, name)
		}
	}
	if sc.inFlat != nil && sc.inFlat.valid(v) {
		return nil
	}
	if sc.inPlan != nil {
		if err := sc.inPlan.Check(v); err != nil {
			return fmt.Errorf("%w: tool %q: input: %w", ErrBadParameter, name, err)
		}
	}
	if err := sc.in.Validate(v); err != nil {
		return fmt.Errorf("%w: tool %q: input: %w", ErrSchema, name, err)
	}
	return nil
}

// decodeJSON decodes data. It is a function of its own so that the value
// it decodes into is allocated only on this path.
func decodeJSON(data []byte) (any, error) {
	var v any
	err := json.Unmarshal(data, &v)
	return v, err
}

// isEmptyObject reports whether input is exactly "{}".
func isEmptyObject(input []byte) bool { return string(input) == "{}" }

// didNotRun are the errors by which a tool's Run says that the work was
// not done: its source could not be reached or was closed, the item or
// something it needs does not exist, the input was refused, or the caller
// gave up. Call adds ErrToolFailed to none of them.
var didNotRun = [...]error{ErrUnavailable, ErrClosed, ErrNotFound, ErrBadParameter, context.Canceled, context.DeadlineExceeded}

// ranAndFailed reports whether err, returned by a tool's Run, means that
// the tool ran and reported failure: it wraps ErrToolFailed, or none of
// didNotRun. It is the one place that rule is decided.
func ranAndFailed(err error) bool {
	if errors.Is(err, ErrToolFailed) {
		return true
	}
	for _, s := range didNotRun {
		if errors.Is(err, s) {
			return false
		}
	}
	return true
}

// runTool runs t, turning a panic into an error.
func runTool(ctx context.Context, t Tool, input json.RawMessage) (out any, err error) {
	defer func() {
		if r := recover(); r != nil {
			out, err = nil, fmt.Errorf("%w: panic: %v\n%s", ErrToolFailed, r, debug.Stack())
		}
	}()
	return t.Run(ctx, input)
}

// finishOutput wraps a tool's output into a Resource and checks it against
// the output schema. It calls code of the tool's (a returned Resource's
// methods, a value's MarshalJSON): a panic there becomes an error wrapping
// ErrToolFailed, like a panic in Run.
func finishOutput(ctx context.Context, name string, schema *jsonschema.Resolved, plan *schemaguard.Plan, out any) (res Resource, err error) {
	defer func() {
		if r := recover(); r != nil {
			res, err = nil, fmt.Errorf("%w: tool %q: output: panic: %v\n%s", ErrToolFailed, name, r, debug.Stack())
		}
	}()
	if res, err = wrapOutput(name, out); err != nil {
		return nil, fmt.Errorf("%w: tool %q: output: %w", ErrToolFailed, name, err)
	}
	if err = checkOutput(ctx, schema, plan, res); err != nil {
		return nil, fmt.Errorf("%w: tool %q: output: %w", ErrSchema, name, err)
	}
	return res, nil
}

// wrapOutput turns what Run returned into a Resource. A nil pointer
// disguised as a Resource is an error: it would fail whoever reads it.
func wrapOutput(name string, out any) (Resource, error) {
	switch v := out.(type) {
	case nil:
		return nil, nil
	case Resource:
		if isNil(v) {
			return nil, fmt.Errorf("the tool returned a nil %T as its output resource", v)
		}
		return v, nil
	case string:
		return resource.Text(names.Sanitize(name), v)
	case json.RawMessage:
		return resource.JSON(names.Sanitize(name), v)
	case []byte:
		return resource.Data(names.Sanitize(name), v)
	}
	return resource.JSON(names.Sanitize(name), out)
}

// checkOutput validates a tool's output against its output schema, within
// the bounds of its plan, if any.
func checkOutput(ctx context.Context, schema *jsonschema.Resolved, plan *schemaguard.Plan, res Resource) error {
	if schema == nil {
		return nil
	}
	if res == nil {
		return errors.New("the tool has an output schema but returned no output")
	}
	if !resource.IsJSON(res.Type()) {
		return fmt.Errorf("the tool has an output schema but returned %s", res.Type())
	}
	data, err := res.Read(ctx)
	if err != nil {
		return err
	}
	return validateJSON(schema, plan, data)
}

func validateJSON(schema *jsonschema.Resolved, plan *schemaguard.Plan, data []byte) error {
	v, err := decodeJSON(data)
	if err != nil {
		return err
	}
	if err := plan.Check(v); err != nil {
		return err
	}
	return schema.Validate(v)
}
