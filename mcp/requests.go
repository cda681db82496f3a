package mcp

import (
	"context"
	"errors"
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/llmkit/toolkit"
	"github.com/llmkit/toolkit/mcp/bridge"
)

// requestHandler finds who answers a request the server sent on session
// cs: the caller whose call it belongs to. With the stateless protocol the
// SDK hands the request over in the call's own context; with older ones
// the request is tied to the only call in flight on cs, if there is one.
func (c *Connector) requestHandler(ctx context.Context, cs *sdk.ClientSession, what string) (bridge.ServerRequestHandler, error) {
	if h, ok := toolkit.SessionAs[bridge.ServerRequestHandler](toolkit.SessionFromContext(ctx)); ok {
		return h, nil
	}
	sess, n := c.calls.soleOn(cs)
	switch {
	case n == 0:
		return nil, fmt.Errorf("%s request outside any call of this client", what)
	case n > 1:
		return nil, fmt.Errorf("%s request during %d concurrent calls: cannot tell whose it is", what, n)
	}
	h, ok := toolkit.SessionAs[bridge.ServerRequestHandler](sess)
	if !ok {
		return nil, fmt.Errorf("%w: the caller cannot answer a %s request", toolkit.ErrNotImplemented, what)
	}
	return h, nil
}

func (c *Connector) handleCreateMessage(ctx context.Context, req *sdk.CreateMessageRequest) (*sdk.CreateMessageResult, error) {
	return forward(c, ctx, req.Session, "sampling", func(h bridge.ServerRequestHandler) (*sdk.CreateMessageResult, error) {
		return h.CreateMessage(ctx, req.Params)
	})
}

func (c *Connector) handleElicit(ctx context.Context, req *sdk.ElicitRequest) (*sdk.ElicitResult, error) {
	return forward(c, ctx, req.Session, "elicitation", func(h bridge.ServerRequestHandler) (*sdk.ElicitResult, error) {
		return h.Elicit(ctx, req.Params)
	})
}

// forward hands a request of the server on session cs to the caller it
// belongs to. A request nobody can answer is refused with a JSON-RPC error
// the server can act on: method not found when the caller cannot answer
// requests of this kind, internal error when it cannot be told whose it is.
func forward[R any](c *Connector, ctx context.Context, cs *sdk.ClientSession, what string, ask func(bridge.ServerRequestHandler) (R, error)) (R, error) {
	h, err := c.requestHandler(ctx, cs, what)
	if err != nil {
		c.logger.Warn("refused a "+what+" request of the server", "error", err)
		code := int64(jsonrpc.CodeInternalError)
		if errors.Is(err, toolkit.ErrNotImplemented) {
			code = jsonrpc.CodeMethodNotFound
		}
		var zero R
		return zero, &jsonrpc.Error{Code: code, Message: err.Error()}
	}
	return ask(h)
}
