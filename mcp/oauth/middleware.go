package oauth

import "net/http"

// A middleware handles a request of a wrapped client: it sends req on
// through base (or answers it itself) and may look at or change the
// request and the response on the way.
type middleware func(base http.RoundTripper, req *http.Request) (*http.Response, error)

// wrapClient returns a copy of hc whose requests go through mw to its
// transport.
func wrapClient(hc *http.Client, mw middleware) *http.Client {
	c := *hc
	base := c.Transport
	if base == nil {
		base = http.DefaultTransport
	}
	c.Transport = &middlewareTransport{base: base, mw: mw}
	return &c
}

// middlewareTransport sends its requests through mw to base.
type middlewareTransport struct {
	base http.RoundTripper
	mw   middleware
}

func (t *middlewareTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	return t.mw(t.base, req)
}
