package mcp

import (
	"errors"
	"net/http"
	"net/url"

	"github.com/modelcontextprotocol/go-sdk/auth"
)

// The SDK's streamable HTTP transport authorizes its requests through an
// auth.OAuthHandler; its legacy SSE transport has no such field. For SSE
// connectors, bearerTransport does at the HTTP level what the streamable
// transport does: it adds the handler's token to each request, and on a
// 401 Unauthorized (or a 403 Forbidden, which the handler turns into
// step-up authorization on insufficient_scope) lets the handler authorize
// and sends the request once more.

// bearerTransport authorizes the requests of an SSE connector.
type bearerTransport struct {
	h    auth.OAuthHandler
	base http.RoundTripper
	// resource is the connector's URL, the protected resource: messages
	// are posted to another URL (with the session in its query), which
	// must not be taken for the resource when authorizing.
	resource *url.URL
}

// errBodyNotReplayable reports a request that needed authorization but
// whose body cannot be sent again.
var errBodyNotReplayable = errors.New("the request needs authorization and its body cannot be sent again")

func (t *bearerTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	r, err := t.authorized(req)
	if err != nil {
		return nil, err
	}
	resp, err := t.base.RoundTrip(r)
	if err != nil || (resp.StatusCode != http.StatusUnauthorized && resp.StatusCode != http.StatusForbidden) {
		return resp, err
	}
	if req.Body != nil && req.Body != http.NoBody && req.GetBody == nil {
		resp.Body.Close()
		return nil, errBodyNotReplayable
	}
	// Authorize reads and closes the response.
	ar := r
	if t.resource != nil {
		ar = r.Clone(r.Context())
		ar.URL = t.resource
	}
	if err := t.h.Authorize(req.Context(), ar, resp); err != nil {
		return nil, err
	}
	if r, err = t.authorized(req); err != nil {
		return nil, err
	}
	return t.base.RoundTrip(r)
}

// authorized returns a copy of req with the handler's current token, and a
// fresh body.
func (t *bearerTransport) authorized(req *http.Request) (*http.Request, error) {
	r := req.Clone(req.Context())
	if req.GetBody != nil {
		body, err := req.GetBody()
		if err != nil {
			return nil, err
		}
		r.Body = body
	}
	ts, err := t.h.TokenSource(req.Context())
	if err != nil {
		return nil, err
	}
	if ts != nil {
		tok, err := ts.Token()
		if err != nil {
			return nil, err
		}
		if tok != nil && tok.AccessToken != "" {
			r.Header.Set("Authorization", "Bearer "+tok.AccessToken)
		}
	}
	return r, nil
}
