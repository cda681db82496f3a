package mcpserver

import (
	"context"
	"errors"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/llmkit/toolkit/mcp/bridge"
)

var (
	_ bridge.ServerRequestHandler = (*serverSession)(nil)
	_ bridge.RootsLister          = (*serverSession)(nil)
)

// errNoClient reports a request that cannot go to the client.
var errNoClient = errors.New("no MCP client session")

// CreateMessage asks the client to sample its model, in the context of
// the client's request (so that it travels on that request's stream). It
// fails when the client cannot be asked (canSample).
func (s *serverSession) CreateMessage(ctx context.Context, params *sdk.CreateMessageParams) (*sdk.CreateMessageResult, error) {
	return ask(s, ctx, "sampling", func(c *sdk.ClientCapabilities) bool { return c.Sampling != nil }, (*sdk.ServerSession).CreateMessage, params)
}

// Elicit asks the client's user for input, in the context of the client's
// request. It fails when the client does not offer elicitation.
func (s *serverSession) Elicit(ctx context.Context, params *sdk.ElicitParams) (*sdk.ElicitResult, error) {
	return ask(s, ctx, "elicitation", func(c *sdk.ClientCapabilities) bool { return c.Elicitation != nil }, (*sdk.ServerSession).Elicit, params)
}

// ListRoots asks the client for its roots, in the context of the client's
// request. It fails with an error wrapping toolkit.ErrNotImplemented when
// the client does not offer roots or may not be asked during a request
// (canRequest): a connector then answers with roots of its own.
func (s *serverSession) ListRoots(ctx context.Context, params *sdk.ListRootsParams) (*sdk.ListRootsResult, error) {
	return ask(s, ctx, "roots", func(c *sdk.ClientCapabilities) bool { return c.RootsV2 != nil }, (*sdk.ServerSession).ListRoots, params)
}

// ask sends the client of s a request (send, a method of sdk.ServerSession)
// in the context of the client's own request, when the client offers the
// capability what (offers) and may be asked during a request (canRequest).
func ask[P, R any](s *serverSession, ctx context.Context, what string, offers func(*sdk.ClientCapabilities) bool, send func(*sdk.ServerSession, context.Context, P) (R, error), params P) (R, error) {
	var zero R
	if s.ss == nil {
		return zero, errNoClient
	}
	if err := canSendRequest(s, what, offers); err != nil {
		return zero, err
	}
	rctx, cancel := s.requestContext(ctx)
	defer cancel()
	return send(s.ss, rctx, params)
}

// requestContext returns the context of the client's request, also ended
// when ctx ends.
func (s *serverSession) requestContext(ctx context.Context) (context.Context, context.CancelFunc) {
	rctx, cancel := context.WithCancel(s.ctx)
	stop := context.AfterFunc(ctx, cancel)
	return rctx, func() { stop(); cancel() }
}
