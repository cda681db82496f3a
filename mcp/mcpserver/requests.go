package mcpserver

import (
	"context"
	"errors"
	"fmt"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/llmkit/toolkit"
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
	if s.ss == nil {
		return nil, errNoClient
	}
	if err := canSample(s); err != nil {
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
		return nil, fmt.Errorf("%w: the MCP client does not offer elicitation", toolkit.ErrNotImplemented)
	}
	if err := canRequest(s); err != nil {
		return nil, err
	}
	rctx, cancel := s.requestContext(ctx)
	defer cancel()
	return s.ss.Elicit(rctx, params)
}

// ListRoots asks the client for its roots, in the context of the client's
// request. It fails with an error wrapping toolkit.ErrNotImplemented when
// the client does not offer roots or may not be asked during a request
// (canRequest): a connector then answers with roots of its own.
func (s *serverSession) ListRoots(ctx context.Context, params *sdk.ListRootsParams) (*sdk.ListRootsResult, error) {
	if s.ss == nil {
		return nil, errNoClient
	}
	if caps := s.Capabilities(); caps == nil || caps.RootsV2 == nil {
		return nil, fmt.Errorf("%w: the MCP client does not offer roots", toolkit.ErrNotImplemented)
	}
	if err := canRequest(s); err != nil {
		return nil, err
	}
	rctx, cancel := s.requestContext(ctx)
	defer cancel()
	return s.ss.ListRoots(rctx, params)
}

// requestContext returns the context of the client's request, also ended
// when ctx ends.
func (s *serverSession) requestContext(ctx context.Context) (context.Context, context.CancelFunc) {
	rctx, cancel := context.WithCancel(s.ctx)
	stop := context.AfterFunc(ctx, cancel)
	return rctx, func() { stop(); cancel() }
}
