package mcp

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"

	"github.com/llmkit/toolkit"
	"github.com/llmkit/toolkit/internal/errs"
	"github.com/llmkit/toolkit/mcp/oauth"
)

// ErrOAuthNotConfigured, message "unavailable: the server asks for OAuth
// and the connector has none", is wrapped by the reason (LastError) of a
// connector in the state toolkit.StatusNeedsAuthorization whose server
// answered 401 with a Bearer challenge while the connector has no OAuth
// option: no retry can succeed until it is given one (OptOAuth; in the
// gateway, the upstream's oauth: block). It also matches
// [toolkit.ErrUnavailable].
var ErrOAuthNotConfigured = fmt.Errorf("%w: the server asks for OAuth and the connector has none", errs.ErrUnavailable)

// Bounds of what a server's authorization servers add to a message.
const (
	maxNamedServers = 3
	maxServerName   = 256
)

// noteChallenge records the WWW-Authenticate header of a 401 answer of
// the server, when the connector has no OAuth to answer it.
func (c *Connector) noteChallenge(resp *http.Response) {
	if resp.StatusCode != http.StatusUnauthorized || c.o.oauth != nil || c.o.perUser != nil {
		return
	}
	if h := resp.Header.Values("WWW-Authenticate"); len(h) > 0 {
		h = slices.Clone(h)
		c.link.challenge.Store(&h)
	}
}

// withoutOAuth returns, when the failed connection attempt was answered
// 401 with a Bearer challenge and the connector has no OAuth, the error
// that says so: which authorization server the server names, and which
// option would reach it. It reports false otherwise.
func (c *Connector) withoutOAuth(ctx context.Context) (error, bool) {
	h := c.link.challenge.Swap(nil)
	if h == nil {
		return nil, false
	}
	cctx, cancel := context.WithTimeout(ctx, c.o.connectTimeout)
	defer cancel()
	servers, err := oauth.AuthorizationServersOf(cctx, c.url, *h, c.link.httpClient, c.o.oauthAllow)
	if errors.Is(err, oauth.ErrNoBearerChallenge) {
		return nil, false
	}
	if err != nil {
		return fmt.Errorf("%w: server %s answers 401 Unauthorized with a Bearer challenge, and its authorization server could not be read (%v); give the connector mcp.OptOAuth (in the gateway, the upstream's oauth: block)", ErrOAuthNotConfigured, c.label(), toolkit.RedactError(err)), true
	}
	named := make([]string, 0, min(len(servers), maxNamedServers))
	for _, s := range servers[:min(len(servers), maxNamedServers)] {
		if len(s) > maxServerName {
			s = s[:maxServerName] + "..."
		}
		named = append(named, s)
	}
	return fmt.Errorf("%w: server %s answers 401 Unauthorized: it wants a token of authorization server %s; give the connector mcp.OptOAuth (in the gateway, the upstream's oauth: block) to get one", ErrOAuthNotConfigured, c.label(), strings.Join(named, ", ")), true
}
