package mcp

import (
	"context"
	"errors"
	"fmt"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/llmkit/toolkit"
)

// ServerRequestHandler is implemented by toolkit sessions that can answer
// the requests an MCP server sends while one of its tools runs on behalf of
// the session's caller: sampling/createMessage and elicitation/create. The
// sessions a Server gives its clients' calls implement it by passing the
// request on to the client. An application may implement it on its own
// session (toolkit.ContextWithSession) to answer with its own model or
// user interface. See OptForwardServerRequests.
type ServerRequestHandler interface {
	CreateMessage(ctx context.Context, params *sdk.CreateMessageParams) (*sdk.CreateMessageResult, error)
	Elicit(ctx context.Context, params *sdk.ElicitParams) (*sdk.ElicitResult, error)
}

var _ ServerRequestHandler = (*serverSession)(nil)

// errNoClient reports a request that cannot go to the client.
var errNoClient = errors.New("no MCP client session")

// CreateMessage asks the client to sample its model, in the context of
// the client's request (so that it travels on that request's stream). It
// fails when the client cannot be asked (srvSampleCheck).
func (s *serverSession) CreateMessage(ctx context.Context, params *sdk.CreateMessageParams) (*sdk.CreateMessageResult, error) {
	if s.ss == nil {
		return nil, errNoClient
	}
	if err := srvSampleCheck(s); err != nil {
		return nil, err
	}
	rctx, cancel := s.requestContext(ctx)
	defer cancel()
	return s.ss.CreateMessage(rctx, params)
}

// Elicit asks the client's user for input, in the context of the client's
// request. It fails when the client does not offer elicitation.
func (s *serverSession) Elicit(ctx context.Context, params *sdk.ElicitParams) (*sdk.ElicitResult, error) {
	if s.ss == nil {
		return nil, errNoClient
	}
	if caps := s.Capabilities(); caps == nil || caps.Elicitation == nil {
		return nil, fmt.Errorf("%w: the client does not offer elicitation", toolkit.ErrNotImplemented)
	}
	rctx, cancel := s.requestContext(ctx)
	defer cancel()
	return s.ss.Elicit(rctx, params)
}

// requestContext returns the context of the client's request, also ended
// when ctx ends.
func (s *serverSession) requestContext(ctx context.Context) (context.Context, context.CancelFunc) {
	rctx, cancel := context.WithCancel(s.ctx)
	stop := context.AfterFunc(ctx, cancel)
	return rctx, func() { stop(); cancel() }
}

// requestHandler finds who answers a request the server sent on session
// cs: the caller whose call it belongs to. With the stateless protocol the
// SDK hands the request over in the call's own context; with older ones
// the request is tied to the only call in flight on cs, if there is one.
func (c *Connector) requestHandler(ctx context.Context, cs *sdk.ClientSession, what string) (ServerRequestHandler, error) {
	if h, ok := toolkit.SessionFromContext(ctx).(ServerRequestHandler); ok {
		return h, nil
	}
	sess, n := c.calls.soleOn(cs)
	switch {
	case n == 0:
		return nil, fmt.Errorf("%s request outside any call of this client", what)
	case n > 1:
		return nil, fmt.Errorf("%s request during %d concurrent calls: cannot tell whose it is", what, n)
	}
	h, ok := sess.(ServerRequestHandler)
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
