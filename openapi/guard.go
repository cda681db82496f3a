package openapi

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strings"
	"syscall"
	"time"

	"github.com/llmkit/toolkit"
	"github.com/llmkit/toolkit/internal/netguard"
)

// A document names where its calls go (servers, token URLs). Left alone,
// a hostile document could make the connector send requests to services
// of its own network (a local admin port, a cloud metadata address). So
// every request goes only to a public address, unless its origin is
// BaseURL's, the document's own URL's, or Config.Allow names it: the rule
// is checked on the URL and again on the address a name resolves to when
// the connection is made.

// ErrDestinationRefused is wrapped by the error of a request, or of a
// document's server, whose address is not public (loopback, private,
// link-local, unspecified, multicast) and not allowed.
var ErrDestinationRefused = errors.New("openapi: destination refused")

// allowList is the destinations allowed although not public.
type allowList struct {
	origins map[string]bool
	hosts   map[string]bool
}

// newAllowList returns the list of entries (origins, host names or
// addresses) and the origins of the URLs given.
func newAllowList(entries []string, urls ...string) (*allowList, error) {
	l := &allowList{origins: map[string]bool{}, hosts: map[string]bool{}}
	for _, e := range entries {
		if strings.Contains(e, "://") {
			u, err := url.Parse(e)
			if err != nil || u.Hostname() == "" || (u.Scheme != "http" && u.Scheme != "https") || (u.Path != "" && u.Path != "/") || u.RawQuery != "" || u.User != nil {
				return nil, fmt.Errorf("%w: openapi: allowed destination %s: want an origin (scheme://host[:port])", toolkit.ErrBadParameter, quote(e))
			}
			l.origins[origin(u)] = true
			continue
		}
		h := strings.ToLower(strings.Trim(e, "[]"))
		if h == "" || strings.ContainsAny(h, "/?#@ ") {
			return nil, fmt.Errorf("%w: openapi: allowed destination %s: want an origin or a host", toolkit.ErrBadParameter, quote(e))
		}
		l.hosts[h] = true
	}
	for _, raw := range urls {
		if raw == "" {
			continue
		}
		u, err := url.Parse(raw)
		if err != nil || !u.IsAbs() || u.Host == "" {
			return nil, fmt.Errorf("%w: openapi: URL %s: want an absolute http or https URL", toolkit.ErrBadParameter, quote(raw))
		}
		l.origins[origin(u)] = true
	}
	return l, nil
}

// allows reports whether u's destination is allowed.
func (l *allowList) allows(u *url.URL) bool {
	return l.hosts[strings.ToLower(u.Hostname())] || l.origins[origin(u)]
}

// origin returns scheme://host:port of u, in lower case.
func origin(u *url.URL) string {
	scheme, host, port := strings.ToLower(u.Scheme), strings.ToLower(u.Hostname()), u.Port()
	if port == "" {
		port = map[string]string{"http": "80", "https": "443"}[scheme]
	}
	return scheme + "://" + net.JoinHostPort(host, port)
}

// notPublic says why ip is not a public address, or "" (the module's one
// rule, which the OAuth client's destinations follow too).
func notPublic(ip netip.Addr) string { return netguard.NotPublic(ip) }

// guard is the connector's transport: allowed destinations through base
// as they are, others only to public addresses.
type guard struct {
	allow  *allowList
	base   http.RoundTripper // for allowed destinations
	public http.RoundTripper // dials public addresses only
}

// guardedClient returns hc (or a new client) with its transport wrapped
// by the destination check.
func guardedClient(hc *http.Client, allow *allowList) *http.Client {
	var c http.Client
	if hc != nil {
		c = *hc
	}
	base := c.Transport
	if base == nil {
		base = http.DefaultTransport
	}
	public := base
	if t, ok := base.(*http.Transport); ok {
		t = t.Clone()
		t.Proxy = nil // a proxy would hide the address connected to
		t.DialContext = publicDial
		public = t
	}
	c.Transport = &guard{allow: allow, base: base, public: public}
	return &c
}

// RoundTrip sends req when its destination is allowed or public.
func (g *guard) RoundTrip(req *http.Request) (*http.Response, error) {
	if g.allow.allows(req.URL) {
		return g.base.RoundTrip(req)
	}
	if err := checkURL(req.URL); err != nil {
		if req.Body != nil {
			req.Body.Close()
		}
		return nil, err
	}
	return g.public.RoundTrip(req)
}

// checkDestination checks a server URL against the rules.
func (c *Connector) checkDestination(u *url.URL) error {
	g, ok := c.client.Transport.(*guard)
	if !ok || g.allow.allows(u) {
		return nil
	}
	return checkURL(u)
}

// checkURL refuses a URL whose host is an address that is not public,
// or a name that can only be one.
func checkURL(u *url.URL) error {
	host := strings.ToLower(u.Hostname())
	if host == "localhost" || strings.HasSuffix(host, ".localhost") {
		return fmt.Errorf("%w: %s: a loopback name", ErrDestinationRefused, origin(u))
	}
	if ip, err := netip.ParseAddr(host); err == nil {
		if why := notPublic(ip); why != "" {
			return fmt.Errorf("%w: %s: %s", ErrDestinationRefused, origin(u), why)
		}
	}
	return nil
}

// publicDial connects to public addresses only: each address a name
// resolves to is checked before the connection is made.
func publicDial(ctx context.Context, network, addr string) (net.Conn, error) {
	d := &net.Dialer{
		Timeout:   30 * time.Second,
		KeepAlive: 30 * time.Second,
		Control: func(_, address string, _ syscall.RawConn) error {
			ip, why, ok := netguard.Dialed(address)
			if !ok {
				return fmt.Errorf("%w: %s: connects to %q, not an address", ErrDestinationRefused, addr, address)
			}
			if why != "" {
				return fmt.Errorf("%w: %s resolves to %s, %s", ErrDestinationRefused, addr, ip, why)
			}
			return nil
		},
	}
	return d.DialContext(ctx, network, addr)
}
