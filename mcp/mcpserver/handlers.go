package mcpserver

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/llmkit/toolkit"
	"github.com/llmkit/toolkit/mcp/bridge"
	"github.com/llmkit/toolkit/prompt"
	"github.com/llmkit/toolkit/resource"
)

func invalidParams(format string, args ...any) error {
	return &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf(format, args...)}
}

// protocolError returns the JSON-RPC error err carries, as it is: the
// answer of an upstream MCP server (a gateway passes its code, message and
// data on to its client unchanged), or one an item failed with on purpose.
// It returns nil when err carries none, or one without a code (the go-sdk
// answers so when a handler fails with a plain error: a tool's failure).
func protocolError(err error) *jsonrpc.Error {
	var we *jsonrpc.Error
	if !errors.As(err, &we) || we == nil || we.Code == 0 {
		return nil
	}
	return &jsonrpc.Error{Code: we.Code, Message: we.Message, Data: we.Data}
}

// toolHandler returns the SDK handler of the tool with the toolkit key key.
func (s *Server) toolHandler(key string, structured bool) sdk.ToolHandler {
	return func(ctx context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
		return s.callTool(ctx, key, structured, req)
	}
}

func (s *Server) callTool(ctx context.Context, key string, structured bool, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
	ns, name, _ := strings.Cut(key, ".")
	item, err := s.tk.LookupType(ctx, toolkit.ListTypeTools, key)
	if err != nil {
		s.auditRefused(ctx, req, ns, name, err)
		return nil, invalidParams("unknown tool %q", req.Params.Name)
	}
	// The SDK decoded the request, so the arguments are one valid JSON
	// value; the toolkit's Call parses them (once) against the schema.
	args := callArguments(req.Params.Arguments)
	if args[0] != '{' {
		err := invalidParams("tool %q: arguments must be a JSON object", req.Params.Name)
		s.auditRefused(ctx, req, ns, name, fmt.Errorf("%w: %w", toolkit.ErrBadParameter, err))
		return nil, err
	}
	ctx, err = withRequestMeta(ctx, "tool", req.Params.Name, req.Params.Meta)
	if err != nil {
		s.auditRefused(ctx, req, ns, name, fmt.Errorf("%w: %w", toolkit.ErrBadParameter, err))
		return nil, err
	}
	input := argsInput(args)
	sess := newServerSession(ctx, req, s.cfg.loggerName)
	sess.clients = s.clients
	if usesInputRounds(req) {
		// Questions to a 2026-07-28 client become rounds (inputrounds.go).
		rq := &roundRequest{method: "tools/call", key: key, item: item.Value, name: req.Params.Name, args: req.Params.Arguments,
			state: req.Params.RequestState, answers: req.Params.InputResponses, principal: principalOf(req.Extra),
			result: func(asks sdk.InputRequestMap, state string) sdk.Result {
				return &sdk.CallToolResult{InputRequests: asks, RequestState: state}
			},
			failed: func(err error) (sdk.Result, error) { return errorResult(err), nil },
		}
		return asResult[*sdk.CallToolResult](s.rounds.serve(ctx, rq, sess, func(rctx context.Context, ts toolkit.Session) (sdk.Result, error) {
			res, err := s.runTool(rctx, item.Value, input, structured, ts, req)
			if res == nil {
				return nil, err
			}
			return res, err
		}))
	}
	return s.runTool(ctx, item.Value, input, structured, sess, req)
}

// runTool runs the tool of a tools/call with the session sess.
func (s *Server) runTool(ctx context.Context, tool any, input toolkit.Resource, structured bool, sess toolkit.Session, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
	cctx := withPrincipal(toolkit.ContextWithSession(ctx, sess), req.Extra)
	cctx = bridge.ExtractTraceMeta(cctx, req.Params.Meta)
	markAudited(ctx) // the toolkit's Call audits it
	out, err := s.tk.Call(cctx, tool, input)
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		if ir := (*bridge.InputRequired)(nil); errors.As(err, &ir) {
			return nil, ir // an upstream's round, passed (inputRounds.call)
		}
		if re := refusal(err); re != nil {
			return nil, re
		}
		if we := protocolError(err); we != nil {
			return nil, we
		}
		return errorResult(err), nil
	}
	res, err := toolResult(cctx, out, structured)
	if err != nil {
		return errorResult(err), nil
	}
	return res, nil
}

// callArguments returns the arguments of a tools/call as the toolkit is
// given them: "{}" for none.
func callArguments(raw json.RawMessage) []byte {
	args := bytes.TrimSpace(raw)
	if len(args) == 0 || bytes.Equal(args, []byte("null")) {
		return []byte("{}")
	}
	return args
}

// argsInput is the input resource of a tools/call: the request's
// arguments as the SDK decoded them, handed to the toolkit without another
// validation pass or copy.
type argsInput json.RawMessage

func (argsInput) URI() string         { return "mcp:arguments" }
func (argsInput) Name() string        { return "input" }
func (argsInput) Description() string { return "tools/call arguments" }
func (argsInput) Type() string        { return resource.TypeJSON }

func (a argsInput) Read(context.Context) ([]byte, error) { return a, nil }

// sdkPrompt describes p for MCP under the exposed name. Arguments come
// from the properties of its input schema, in the schema's property order
// when it has one, by name otherwise.
func sdkPrompt(name string, p toolkit.Prompt) (*sdk.Prompt, error) {
	schema, err := p.InputSchema()
	if err != nil {
		return nil, fmt.Errorf("%w: prompt %q: input schema: %v", toolkit.ErrSchema, name, err)
	}
	sp := &sdk.Prompt{Name: name, Title: p.Title(), Description: p.Description()}
	if schema == nil {
		return sp, nil
	}
	for _, prop := range propertyNames(schema) {
		ps := schema.Properties[prop]
		arg := &sdk.PromptArgument{Name: prop, Required: slices.Contains(schema.Required, prop)}
		if ps != nil {
			arg.Title, arg.Description = ps.Title, ps.Description
		}
		sp.Arguments = append(sp.Arguments, arg)
	}
	return sp, nil
}

// propertyNames returns the property names of an object schema in a
// stable order.
func propertyNames(schema *jsonschema.Schema) []string {
	seen := map[string]bool{}
	var names []string
	for _, n := range schema.PropertyOrder {
		if _, ok := schema.Properties[n]; ok && !seen[n] {
			seen[n] = true
			names = append(names, n)
		}
	}
	var rest []string
	for n := range schema.Properties {
		if !seen[n] {
			rest = append(rest, n)
		}
	}
	sort.Strings(rest)
	return append(names, rest...)
}

// promptHandler returns the SDK handler of the prompt with the toolkit key.
func (s *Server) promptHandler(key string) sdk.PromptHandler {
	return func(ctx context.Context, req *sdk.GetPromptRequest) (*sdk.GetPromptResult, error) {
		return s.getPrompt(ctx, key, req)
	}
}

func (s *Server) getPrompt(ctx context.Context, key string, req *sdk.GetPromptRequest) (*sdk.GetPromptResult, error) {
	item, err := s.tk.LookupType(ctx, toolkit.ListTypePrompts, key)
	if err != nil {
		return nil, invalidParams("unknown prompt %q", req.Params.Name)
	}
	markResolved(ctx, item.Namespace)
	p, _ := item.Value.(toolkit.Prompt)
	r, ok := item.Value.(prompt.Renderer)
	if p == nil || !ok {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: fmt.Sprintf("prompt %q cannot be rendered: %v", req.Params.Name, toolkit.ErrNotImplemented)}
	}
	schema, _ := p.InputSchema()
	input, err := promptInput(schema, req.Params.Arguments)
	if err != nil {
		return nil, invalidParams("prompt %q: %v", req.Params.Name, err)
	}
	if ctx, err = withRequestMeta(ctx, "prompt", req.Params.Name, req.Params.Meta); err != nil {
		return nil, err
	}
	sess := newServerSession(ctx, req, s.cfg.loggerName)
	sess.clients = s.clients
	render := func(ctx context.Context, ts toolkit.Session) (*sdk.GetPromptResult, error) {
		return s.renderPrompt(ctx, ts, r, input, req)
	}
	if inRounds(req.ProtocolVersion(), req.Params.RequestState) {
		// Questions to a 2026-07-28 client become rounds (inputrounds.go).
		args, _ := json.Marshal(req.Params.Arguments)
		rq := &roundRequest{method: "prompts/get", key: key, item: item.Value, name: req.Params.Name, args: args,
			state: req.Params.RequestState, answers: req.Params.InputResponses, principal: principalOf(req.Extra),
			result: func(asks sdk.InputRequestMap, state string) sdk.Result {
				return &sdk.GetPromptResult{InputRequests: asks, RequestState: state}
			},
			failed: func(err error) (sdk.Result, error) { return nil, roundsFailed(err) },
		}
		return asResult[*sdk.GetPromptResult](s.rounds.serve(ctx, rq, sess, func(rctx context.Context, ts toolkit.Session) (sdk.Result, error) {
			res, err := render(rctx, ts)
			if res == nil {
				return nil, err
			}
			return res, err
		}))
	}
	return render(ctx, sess)
}

// renderPrompt renders the prompt r with input for req, with the session
// sess. An upstream's input-required result (a *bridge.InputRequired) is
// returned as it is, for inputRounds to round.
func (s *Server) renderPrompt(ctx context.Context, sess toolkit.Session, r prompt.Renderer, input json.RawMessage, req *sdk.GetPromptRequest) (*sdk.GetPromptResult, error) {
	cctx := toolkit.ContextWithSession(ctx, sess)
	cctx = bridge.ExtractTraceMeta(cctx, req.Params.Meta)
	rendered, err := r.Render(cctx, input)
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		if ir := (*bridge.InputRequired)(nil); errors.As(err, &ir) {
			return nil, ir
		}
		if we := protocolError(err); we != nil {
			return nil, we
		}
		if errors.Is(err, toolkit.ErrBadParameter) || errors.Is(err, toolkit.ErrSchema) {
			return nil, invalidParams("prompt %q: %v", req.Params.Name, err)
		}
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: fmt.Sprintf("prompt %q: %v", req.Params.Name, err)}
	}
	res := &sdk.GetPromptResult{Description: rendered.Description, Messages: []*sdk.PromptMessage{}, Meta: rendered.Meta}
	for i, m := range rendered.Messages {
		content, _, _, err := contentOf(cctx, m.Content)
		if err != nil {
			return nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: fmt.Sprintf("prompt %q: message %d: %v", req.Params.Name, i, err)}
		}
		role := sdk.Role(m.Role)
		if role == "" {
			role = "user"
		}
		for _, c := range content {
			res.Messages = append(res.Messages, &sdk.PromptMessage{Role: role, Content: c})
		}
	}
	return res, nil
}

// roundsFailed is the error of a prompts/get or resources/read that
// cannot run over rounds (the server is closing, say).
func roundsFailed(err error) error {
	return &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: err.Error()}
}

// promptInput turns MCP prompt arguments (all strings) into the JSON
// object a prompt renders from. A value whose schema property is a number,
// integer or boolean is converted when it parses as one; anything else
// stays a string. No arguments and no schema give nil input.
func promptInput(schema *jsonschema.Schema, args map[string]string) (json.RawMessage, error) {
	if len(args) == 0 {
		if schema == nil {
			return nil, nil
		}
		return json.RawMessage("{}"), nil
	}
	obj := make(map[string]any, len(args))
	for k, v := range args {
		obj[k] = v
		var ps *jsonschema.Schema
		if schema != nil {
			ps = schema.Properties[k]
		}
		if ps == nil {
			continue
		}
		types := ps.Types
		if ps.Type != "" {
			types = []string{ps.Type}
		}
		for _, t := range types {
			switch t {
			case "integer":
				if n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64); err == nil {
					obj[k] = n
				}
			case "number":
				if f, err := strconv.ParseFloat(strings.TrimSpace(v), 64); err == nil {
					obj[k] = f
				}
			case "boolean":
				if b, err := strconv.ParseBool(strings.TrimSpace(v)); err == nil {
					obj[k] = b
				}
			default:
				continue
			}
			if _, isString := obj[k].(string); !isString {
				break
			}
		}
	}
	b, err := json.Marshal(obj)
	return b, err
}

// resourceHandler returns the SDK read handler of the resource with the
// toolkit key.
func (s *Server) resourceHandler(key string) sdk.ResourceHandler {
	return func(ctx context.Context, req *sdk.ReadResourceRequest) (*sdk.ReadResourceResult, error) {
		return s.readResource(ctx, key, req)
	}
}

// readTemplated is the SDK read handler of every toolkit template. The SDK
// calls it for a URI that matches one of the exposed templates; it finds
// the toolkit template that names the URI — a qualified one when the URI
// ends with its "#namespace" suffix (which it strips), else the first in
// toolkit order — and reads the resource through the toolkit with
// LookupType("uri#namespace"), so the read takes the same path as Lookup.
func (s *Server) readTemplated(ctx context.Context, req *sdk.ReadResourceRequest) (*sdk.ReadResourceResult, error) {
	uri := req.Params.URI
	s.mu.Lock()
	routes := s.tmplRoutes
	s.mu.Unlock()
	if r, u, ok := routeOf(routes, uri); ok {
		return s.readResource(ctx, u+"#"+r.ns, req)
	}
	return nil, sdk.ResourceNotFoundError(uri)
}

// readResource reads the resource with the toolkit key for req, answering
// with the URI the client asked for.
func (s *Server) readResource(ctx context.Context, key string, req *sdk.ReadResourceRequest) (*sdk.ReadResourceResult, error) {
	item, err := s.tk.LookupType(ctx, toolkit.ListTypeResources, key)
	r, ok := item.Value.(toolkit.Resource)
	if err != nil || !ok {
		return nil, sdk.ResourceNotFoundError(req.Params.URI)
	}
	markResolved(ctx, item.Namespace)
	if ctx, err = withRequestMeta(ctx, "resource", req.Params.URI, req.Params.Meta); err != nil {
		return nil, err
	}
	sess := newServerSession(ctx, req, s.cfg.loggerName)
	sess.clients = s.clients
	if inRounds(req.ProtocolVersion(), req.Params.RequestState) {
		// Questions to a 2026-07-28 client become rounds (inputrounds.go).
		rq := &roundRequest{method: "resources/read", key: key, item: item.Value, name: req.Params.URI,
			state: req.Params.RequestState, answers: req.Params.InputResponses, principal: principalOf(req.Extra),
			result: func(asks sdk.InputRequestMap, state string) sdk.Result {
				return &sdk.ReadResourceResult{InputRequests: asks, RequestState: state}
			},
			failed: func(err error) (sdk.Result, error) { return nil, roundsFailed(err) },
		}
		return asResult[*sdk.ReadResourceResult](s.rounds.serve(ctx, rq, sess, func(rctx context.Context, ts toolkit.Session) (sdk.Result, error) {
			res, err := s.readWith(rctx, ts, r, req)
			if res == nil {
				return nil, err
			}
			return res, err
		}))
	}
	return s.readWith(ctx, sess, r, req)
}

// readWith reads r for req with the session sess. An upstream's
// input-required result (a *bridge.InputRequired) is returned as it is,
// for inputRounds to round.
func (s *Server) readWith(ctx context.Context, sess toolkit.Session, r toolkit.Resource, req *sdk.ReadResourceRequest) (*sdk.ReadResourceResult, error) {
	cctx := toolkit.ContextWithSession(ctx, sess)
	cctx = bridge.ExtractTraceMeta(cctx, req.Params.Meta)
	var err error
	typ := r.Type()
	var data []byte
	var meta map[string]any
	if tr, ok := r.(bridge.TypedReader); ok {
		// A remote resource: the type the upstream gave the content wins
		// over the listed one (a template's resources often have none),
		// and the contents' _meta is the upstream's.
		var rc bridge.Contents
		rc, err = tr.ReadTyped(cctx)
		data, meta = rc.Data, rc.Meta
		if rc.MIMEType != "" {
			typ = rc.MIMEType
		}
	} else {
		// A builtin: its contents carry the resource's own _meta.
		data, err = r.Read(cctx)
		meta = resource.MetaOf(r)
	}
	if err != nil {
		if ir := (*bridge.InputRequired)(nil); errors.As(err, &ir) {
			return nil, ir
		}
		we := protocolError(err)
		if (we == nil && errors.Is(err, toolkit.ErrNotFound)) || (we != nil && we.Code == sdk.CodeResourceNotFound) {
			// Under the URI the client asked for.
			return nil, sdk.ResourceNotFoundError(req.Params.URI)
		}
		if we != nil {
			return nil, we
		}
		return nil, fmt.Errorf("reading resource %q: %w", req.Params.URI, err)
	}
	rc := resourceContents(req.Params.URI, typ, mediaType(typ), data)
	rc.Meta = meta
	return &sdk.ReadResourceResult{Contents: []*sdk.ResourceContents{rc}}, nil
}

// complete answers completion/complete: the WithCompletion hook first;
// then, for an exposed prompt or resource template whose toolkit item is a
// [bridge.Completer] (one a connector brings in from an upstream server),
// what the item answers (values, total and hasMore as they come, or its
// error); then the enum values of a prompt argument's schema that start
// with the typed value. A prompt that is not exposed is an invalid
// parameter (-32602); anything else completes to nothing.
func (s *Server) complete(ctx context.Context, req *sdk.CompleteRequest) (*sdk.CompleteResult, error) {
	if s.cfg.completion != nil {
		res, err := s.cfg.completion(ctx, req)
		if err != nil || res != nil {
			return res, err
		}
	}
	details := sdk.CompletionResultDetails{Values: []string{}}
	item, found := s.completionItem(ctx, req.Params.Ref)
	if ref := req.Params.Ref; !found && ref != nil && ref.Type == "ref/prompt" {
		// As prompts/get answers, and as the prompt's own server would.
		return nil, invalidParams("unknown prompt %q", ref.Name)
	}
	arg := req.Params.Argument
	switch v := item.Value.(type) {
	case bridge.Completer:
		var args map[string]string
		if c := req.Params.Context; c != nil {
			args = c.Arguments
		}
		cctx := bridge.ExtractTraceMeta(ctx, req.Params.Meta)
		got, err := v.Complete(cctx, arg.Name, arg.Value, args)
		if err != nil {
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			if we := protocolError(err); we != nil {
				return nil, we
			}
			return nil, fmt.Errorf("completing %q: %w", arg.Name, err)
		}
		if got != nil {
			details = *got
		}
	case toolkit.Prompt:
		if found {
			details.Values = enumCompletions(v, arg.Name, arg.Value)
			details.Total = len(details.Values)
		}
	}
	if details.Values == nil {
		details.Values = []string{}
	}
	const maxValues = 100 // the protocol's limit per response
	if len(details.Values) > maxValues {
		if details.Total < len(details.Values) {
			details.Total = len(details.Values)
		}
		details.Values = details.Values[:maxValues:maxValues]
		details.HasMore = true
	}
	return &sdk.CompleteResult{Completion: details}, nil
}

// completionItem returns the toolkit item that a completion reference
// names: an exposed prompt ("ref/prompt") or an exposed resource template
// ("ref/resource", by its exposed URI template). found is false for
// anything else.
func (s *Server) completionItem(ctx context.Context, ref *sdk.CompleteReference) (item toolkit.Item, found bool) {
	if ref == nil {
		return toolkit.Item{}, false
	}
	var k toolkit.Kind
	var exposed string
	switch ref.Type {
	case "ref/prompt":
		k, exposed = toolkit.KindPrompt, ref.Name
	case "ref/resource":
		k, exposed = toolkit.KindTemplate, ref.URI
	default:
		return toolkit.Item{}, false
	}
	s.mu.Lock()
	reg, ok := s.regs[k][exposed]
	s.mu.Unlock()
	if !ok {
		return toolkit.Item{}, false
	}
	item, err := s.tk.LookupType(ctx, k.ListType(), reg.key)
	if err != nil {
		return toolkit.Item{}, false
	}
	return item, true
}

// enumCompletions returns the enum values of argument arg of p that
// start with prefix.
func enumCompletions(p toolkit.Prompt, arg, prefix string) []string {
	values := []string{}
	schema, err := p.InputSchema()
	if err != nil || schema == nil {
		return values
	}
	ps := schema.Properties[arg]
	if ps == nil {
		return values
	}
	for _, e := range ps.Enum {
		v, ok := e.(string)
		if !ok {
			v = fmt.Sprint(e)
		}
		if strings.HasPrefix(v, prefix) {
			values = append(values, v)
		}
	}
	return values
}
