package oauth

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/oauthex"
)

// ErrNoBearerChallenge is returned by AuthorizationServersOf when the
// 401 answer of a server asks for no Bearer token.
var ErrNoBearerChallenge = errors.New("no Bearer challenge")

// AuthorizationServersOf returns the authorization servers of the
// protected MCP server at resource, whose 401 answer carried the
// WWW-Authenticate header values given: those its protected resource
// metadata names (RFC 9728: the challenge's resource_metadata, else the
// well-known locations), or its origin when it publishes none. The
// metadata is read with hc through the destination rules of a Handler
// (the resource's own origin, allow, else public https addresses only).
// It fails with ErrNoBearerChallenge when the header holds no Bearer
// challenge (nor a well-formed one).
func AuthorizationServersOf(ctx context.Context, resource string, wwwAuthenticate []string, hc *http.Client, allow *AllowList) ([]string, error) {
	challenges, err := oauthex.ParseWWWAuthenticate(wwwAuthenticate)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrNoBearerChallenge, err)
	}
	bearer := false
	for _, c := range challenges {
		bearer = bearer || strings.EqualFold(c.Scheme, "bearer")
	}
	if !bearer {
		return nil, ErrNoBearerChallenge
	}
	if hc == nil {
		hc = http.DefaultClient
	}
	prm, err := discoverResource(ctx, challenges, resource, guardClient(hc, resource, allow, func(error) {}))
	if err != nil {
		return nil, err
	}
	return prm.AuthorizationServers, nil
}
