package mcp

import (
	"context"
	"fmt"

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
	h, err := c.requestHandler(ctx, req.Session, "sampling")
	if err != nil {
		c.logger.Warn("refused a sampling request of the server", "error", err)
		return nil, err
	}
	return h.CreateMessage(ctx, req.Params)
}

func (c *Connector) handleElicit(ctx context.Context, req *sdk.ElicitRequest) (*sdk.ElicitResult, error) {
	h, err := c.requestHandler(ctx, req.Session, "elicitation")
	if err != nil {
		c.logger.Warn("refused an elicitation request of the server", "error", err)
		return nil, err
	}
	return h.Elicit(ctx, req.Params)
}
