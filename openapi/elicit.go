package openapi

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"

	"github.com/llmkit/toolkit"
	"github.com/llmkit/toolkit/mcp/bridge"
	"github.com/llmkit/toolkit/mcp/oauth"
)

// ErrDeclined is wrapped by the error of a call whose user declined to
// authorize when their client asked them (URL elicitation): the
// authorization is over, and the next call asks again. It matches
// oauth.ErrAuthorizationPending.
var ErrDeclined = fmt.Errorf("%w: openapi: the user declined to authorize", oauth.ErrAuthorizationPending)

// ask asks the client of the call of ctx to open the authorization URL
// of p, through a URL-mode elicitation (MCP 2025-11-25), when the client
// offers it, and reports whether it was asked (or another call's client
// was): the call then waits for the redirect. A client that cannot be
// asked leaves the call to fail with p's AuthorizationRequiredError
// (-32042), as one that does not offer it.
func (p *pendingAuthorization) ask(ctx context.Context) (bool, error) {
	s := toolkit.SessionFromContext(ctx)
	caps := s.Capabilities()
	h, ok := toolkit.SessionAs[bridge.ServerRequestHandler](s)
	if !ok || caps == nil || caps.Elicitation == nil || caps.Elicitation.URL == nil {
		return false, nil
	}
	var ec bridge.ElicitationCompleter
	if cc, ok := toolkit.SessionAs[bridge.ClientCarrier](s); ok {
		ec, _ = cc.Client().(bridge.ElicitationCompleter)
	}
	p.mu.Lock()
	if p.asking {
		// One URL is sent once; the other calls wait for it.
		p.mu.Unlock()
		return true, nil
	}
	p.asking, p.asked = true, ec
	p.mu.Unlock()
	res, err := h.Elicit(ctx, p.err.elicitation())
	if err != nil || res == nil || res.Action != "accept" {
		p.mu.Lock()
		p.asking, p.asked = false, nil
		p.mu.Unlock()
	}
	var rpc *jsonrpc.Error
	switch {
	case errors.As(err, &rpc) || errors.Is(err, toolkit.ErrNotImplemented):
		return false, nil // the client opens the URL itself
	case err != nil:
		return false, fmt.Errorf("%w: openapi: asking the user to authorize: %w", oauth.ErrAuthorizationPending, err)
	case res == nil || res.Action != "accept":
		p.cancel(ErrDeclined)
		return false, ErrDeclined
	}
	return true, nil
}

// completeTimeout bounds the notice of a completed elicitation.
const completeTimeout = 5 * time.Second

// completed tells the client asked, if any, that the user has
// authorized, with notifications/elicitation/complete.
func (p *pendingAuthorization) completed(ctx context.Context) {
	p.mu.Lock()
	ec := p.asked
	p.mu.Unlock()
	if ec == nil {
		return
	}
	nctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), completeTimeout)
	defer cancel()
	_ = ec.ElicitationComplete(nctx, p.err.ElicitationID)
}
