package oauth

import (
	"errors"
	"net/http"
	"net/url"

	"github.com/modelcontextprotocol/go-sdk/auth"
)

// Transport is an http.RoundTripper that authorizes its requests with an
// OAuth handler at the HTTP level, for transports that take no handler of
// their own (the SDK's legacy SSE transport): it adds the handler's token
// to each request and, on a 401 Unauthorized (or a 403 Forbidden, which
// the handler turns into step-up authorization on insufficient_scope), lets
// the handler authorize and sends the request once more. A request whose
// body cannot be sent again fails then rather than go out without it.
type Transport struct {
	// Handler authorizes the requests. Required.
	Handler auth.OAuthHandler
	// Base sends the requests (nil: http.DefaultTransport).
	Base http.RoundTripper
	// Resource, when set, is the URL of the protected resource, given to
	// the handler in place of the refused request's URL: SSE messages are
	// posted to another URL (with the session in its query), which must
	// not be taken for the resource when authorizing.
	Resource *url.URL
}

// errBodyNotReplayable reports a request that needed authorization but
// whose body cannot be sent again.
var errBodyNotReplayable = errors.New("the request needs authorization and its body cannot be sent again")

// RoundTrip implements http.RoundTripper.
func (t *Transport) RoundTrip(req *http.Request) (*http.Response, error) {
	base := t.Base
	if base == nil {
		base = http.DefaultTransport
	}
	r, err := t.authorized(req)
	if err != nil {
		return nil, err
	}
	resp, err := base.RoundTrip(r)
	if err != nil || (resp.StatusCode != http.StatusUnauthorized && resp.StatusCode != http.StatusForbidden) {
		return resp, err
	}
	if req.Body != nil && req.Body != http.NoBody && req.GetBody == nil {
		resp.Body.Close()
		return nil, errBodyNotReplayable
	}
	// Authorize reads and closes the response.
	ar := r
	if t.Resource != nil {
		ar = r.Clone(r.Context())
		ar.URL = t.Resource
	}
	if err := t.Handler.Authorize(req.Context(), ar, resp); err != nil {
		return nil, err
	}
	if r, err = t.authorized(req); err != nil {
		return nil, err
	}
	return base.RoundTrip(r)
}

// authorized returns a copy of req with the handler's current token, and a
// fresh body.
func (t *Transport) authorized(req *http.Request) (*http.Request, error) {
	r := req.Clone(req.Context())
	if req.GetBody != nil {
		body, err := req.GetBody()
		if err != nil {
			return nil, err
		}
		r.Body = body
	}
	ts, err := t.Handler.TokenSource(req.Context())
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
