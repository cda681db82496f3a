package mcpserver

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/google/jsonschema-go/jsonschema"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/llmkit/toolkit"
)

// The meta-tools search_tools and describe_tools are governed like any
// tool: each call goes through the toolkit's Call as a call of a tool
// value (namespace "", the meta-tool's own name), so that the policy
// decides it (a rule names them with tools: [search_tools]), the rate
// limits count it and the audit records it. call_tool needs none of it:
// the call it makes is the tool's own, governed as such.

// metaTool is a meta-tool as the toolkit sees it, one for the server's
// life (its schemas are resolved once): Run runs the SDK handler on the
// request of the call in ctx (metaCall) and keeps its result there.
type metaTool struct {
	def *sdk.Tool
	h   sdk.ToolHandler
}

// metaCall is one call of a meta-tool: its request, and the handler's
// result once it ran.
type metaCall struct {
	req *sdk.CallToolRequest
	res *sdk.CallToolResult
}

type metaCallKey struct{}

// metaInput is the input schema the toolkit checks a meta-tool call
// against: an object; the handler checks the rest.
var metaInput = &jsonschema.Schema{Type: "object"}

func (m *metaTool) Name() string                              { return m.def.Name }
func (m *metaTool) Description() string                       { return m.def.Description }
func (m *metaTool) InputSchema() (*jsonschema.Schema, error)  { return metaInput, nil }
func (m *metaTool) OutputSchema() (*jsonschema.Schema, error) { return nil, nil }
func (m *metaTool) Meta() toolkit.ToolMeta {
	return toolkit.ToolMeta{Title: m.def.Title, ReadOnlyHint: true, IdempotentHint: true, OpenWorldHint: new(bool)}
}

// Run runs the handler on the request of the call in ctx; its result is
// the call's answer, so the toolkit is given no output.
func (m *metaTool) Run(ctx context.Context, _ json.RawMessage) (any, error) {
	mc, ok := ctx.Value(metaCallKey{}).(*metaCall)
	if !ok {
		return nil, fmt.Errorf("%w: %s is called through the MCP server only", toolkit.ErrBadParameter, m.def.Name)
	}
	res, err := m.h(ctx, mc.req)
	mc.res = res
	return nil, err
}

// governed returns the handler of the meta-tool def, whose work h does,
// that runs each call through the toolkit's Call.
func (s *Server) governed(def *sdk.Tool, h sdk.ToolHandler) sdk.ToolHandler {
	mt := &metaTool{def: def, h: h}
	s.metaTools[def.Name] = mt
	return func(ctx context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
		mc := &metaCall{req: req}
		sess := newServerSession(ctx, req, s.cfg.loggerName)
		sess.clients = s.clients
		res, err := s.runTool(context.WithValue(ctx, metaCallKey{}, mc), mt, argsInput(callArguments(req.Params.Arguments)), false, sess, req)
		if err == nil && mc.res != nil && (res == nil || !res.IsError) {
			return mc.res, nil
		}
		return res, err
	}
}

// metaVisible reports whether the tool exposed as name is a governed
// meta-tool (known) and whether the policy shows it to the principal of
// ctx.
func (s *Server) metaVisible(ctx context.Context, name string) (visible, known bool) {
	mt, ok := s.metaTools[name]
	if !ok {
		return false, false
	}
	return s.tk.Visible(ctx, toolkit.Item{Type: toolkit.ListTypeTools, Value: mt}), true
}
