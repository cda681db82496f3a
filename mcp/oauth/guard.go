package oauth

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strings"
	"syscall"
	"time"

	"github.com/llmkit/toolkit/internal/errs"
	"github.com/llmkit/toolkit/internal/netguard"
)

// The requests of an OAuth flow go where metadata says: documents the
// remote MCP server and its authorization server publish name the next
// URL to fetch or post to. Left alone, a hostile server could make the
// client send requests to services of its own network (a local admin
// port, a cloud metadata address). So every request a Handler sends —
// metadata discovery, registration, token requests and refreshes — goes
// only to public https destinations, unless it goes to the protected
// resource's own origin or to a destination the application allows
// (HandlerConfig.Allow). The rule is checked on the URL (scheme, and an
// address written in it) and again on the address a name resolves to when
// the connection is made, so that a name resolving to a loopback or
// private address is refused too.

// ErrDestinationRefused is wrapped by the error of an OAuth request to a
// destination the rules of [HandlerConfig] refuse: not https, or an
// address that is loopback, private, link-local, multicast, unspecified
// or otherwise not public, and neither the protected resource's own
// origin nor allowed by [HandlerConfig.Allow]. The error names the
// destination's origin (never its path or query) and the reason.
var ErrDestinationRefused = errors.New("OAuth request refused")

// An AllowList names destinations the requests of an OAuth flow may
// reach although the rules refuse them (see [HandlerConfig.Allow]): an
// authorization server on a private network, or on the loopback
// interface in tests. The zero AllowList, and nil, allow nothing.
type AllowList struct {
	origins map[string]bool // scheme://host:port
	hosts   map[string]bool // every port and scheme
}

// NewAllowList returns the list of the given destinations. An origin
// ("http://127.0.0.1:8080", "https://login.corp.example"; the scheme's
// default port when it names none) allows that origin only; a host name
// or IP address without a scheme ("localhost", "10.1.2.3", "::1") allows
// every port and scheme of that host, as written in URLs (a name allowed
// does not allow the addresses it resolves to, nor the reverse).
// Anything else (a path, a query, user information, a port without a
// scheme, an empty entry) gives an error wrapping
// toolkit.ErrBadParameter.
func NewAllowList(entries ...string) (*AllowList, error) {
	l := &AllowList{origins: map[string]bool{}, hosts: map[string]bool{}}
	for _, e := range entries {
		if strings.Contains(e, "://") {
			u, err := url.Parse(e)
			switch {
			case err != nil:
				return nil, badParameter("allowed destination %q: %v", e, errs.WithoutURL(err))
			case u.Scheme != "http" && u.Scheme != "https":
				return nil, badParameter("allowed destination %q: want an http or https origin", e)
			case u.Hostname() == "" || u.User != nil || (u.Path != "" && u.Path != "/") || u.RawQuery != "" || u.ForceQuery || u.Fragment != "":
				return nil, badParameter("allowed destination %q: want an origin (scheme://host[:port]) without path, query or user", e)
			}
			l.origins[origin(u)] = true
			continue
		}
		h := strings.ToLower(strings.TrimSuffix(strings.TrimPrefix(e, "["), "]"))
		if _, err := netip.ParseAddr(h); err != nil && !validHostName(h) {
			return nil, badParameter("allowed destination %q: want an origin (scheme://host[:port]) or a host name or address", e)
		}
		l.hosts[h] = true
	}
	return l, nil
}

// validHostName reports whether h can be a host name: letters, digits,
// hyphens, underscores and dots.
func validHostName(h string) bool {
	if h == "" || len(h) > 253 {
		return false
	}
	for _, r := range h {
		if !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '-' || r == '.' || r == '_') {
			return false
		}
	}
	return true
}

// allows reports whether the list allows requests to u.
func (l *AllowList) allows(u *url.URL) bool {
	if l == nil {
		return false
	}
	return l.hosts[strings.ToLower(u.Hostname())] || l.origins[origin(u)]
}

// with returns a copy of l that also allows the origins of the URLs
// given (empty ones ignored).
func (l *AllowList) with(urls ...string) *AllowList {
	c := &AllowList{origins: map[string]bool{}, hosts: map[string]bool{}}
	if l != nil {
		maps.Copy(c.origins, l.origins)
		maps.Copy(c.hosts, l.hosts)
	}
	for _, raw := range urls {
		if u, err := url.Parse(raw); err == nil && u.Host != "" {
			c.origins[origin(u)] = true
		}
	}
	return c
}

// origin returns the origin of u: scheme://host:port, in lower case, with
// the scheme's default port when u names none.
func origin(u *url.URL) string {
	scheme, host, port := strings.ToLower(u.Scheme), strings.ToLower(u.Hostname()), u.Port()
	if port == "" {
		switch scheme {
		case "https":
			port = "443"
		case "http":
			port = "80"
		}
	}
	return scheme + "://" + net.JoinHostPort(host, port)
}

// guard is the transport of a Handler's requests: allowed destinations
// (the resource's origin, the AllowList) through base as it is, others
// only when they are public https ones.
type guard struct {
	own    string // the protected resource's origin
	allow  *AllowList
	base   http.RoundTripper
	public http.RoundTripper                                   // base dialing public addresses only; nil: resolve, then base
	proxy  func(*http.Request) (*url.URL, error)               // base's proxy, if any
	refuse func(err error)                                     // told of each refusal
	lookup func(context.Context, string) ([]netip.Addr, error) // resolves names (tests replace it)
}

// guardClient returns a copy of hc whose requests follow the rules, for
// the protected resource at resource.
func guardClient(hc *http.Client, resource string, allow *AllowList, refuse func(error)) *http.Client {
	c := *hc
	base := c.Transport
	if base == nil {
		base = http.DefaultTransport
	}
	g := &guard{allow: allow, base: base, refuse: refuse, lookup: lookupNetIP}
	if u, err := url.Parse(resource); err == nil && u.Host != "" {
		g.own = origin(u)
	}
	if t, ok := base.(*http.Transport); ok {
		pt := t.Clone()
		pt.DisableKeepAlives = true // nothing idle outlives the handler
		pt.DialContext = publicDial(t.DialContext)
		if t.DialTLSContext != nil {
			pt.DialTLSContext = checkedDial(t.DialTLSContext)
		}
		g.public, g.proxy = pt, t.Proxy
	}
	c.Transport = g
	return &c
}

func lookupNetIP(ctx context.Context, host string) ([]netip.Addr, error) {
	return net.DefaultResolver.LookupNetIP(ctx, "ip", host)
}

// RoundTrip implements http.RoundTripper.
func (g *guard) RoundTrip(req *http.Request) (*http.Response, error) {
	u := req.URL
	if origin(u) == g.own || g.allow.allows(u) {
		return g.base.RoundTrip(req)
	}
	err := g.check(u)
	if err == nil && (g.public == nil || g.proxied(req)) {
		// The dial cannot be checked (another transport, or a proxy
		// that makes the connection): the name's addresses are.
		err = g.resolvesPublic(req.Context(), u)
		if err == nil {
			return g.base.RoundTrip(req)
		}
	}
	if err != nil {
		if req.Body != nil {
			req.Body.Close()
		}
		g.refused(err)
		return nil, err
	}
	resp, err := g.public.RoundTrip(req)
	if errors.Is(err, ErrDestinationRefused) {
		g.refused(err)
	}
	return resp, err
}

func (g *guard) refused(err error) {
	if g.refuse != nil && errors.Is(err, ErrDestinationRefused) {
		g.refuse(err)
	}
}

// notAllowed ends the message of a refusal.
const notAllowed = " (and not the protected resource's origin nor an allowed destination)"

// check applies the rules to what u says: https, and an address written
// in it public.
func (g *guard) check(u *url.URL) error {
	o := origin(u)
	if !strings.EqualFold(u.Scheme, "https") {
		return fmt.Errorf("%w: %s: not https%s", ErrDestinationRefused, o, notAllowed)
	}
	host := u.Hostname()
	if host == "" {
		return fmt.Errorf("%w: %s: no host", ErrDestinationRefused, o)
	}
	if ip, err := netip.ParseAddr(host); err == nil {
		if why := notPublic(ip); why != "" {
			return fmt.Errorf("%w: %s: %s%s", ErrDestinationRefused, o, why, notAllowed)
		}
	}
	return nil
}

// proxied reports whether base sends req through a proxy.
func (g *guard) proxied(req *http.Request) bool {
	if g.proxy == nil {
		return false
	}
	p, err := g.proxy(req)
	return err == nil && p != nil
}

// resolvesPublic checks the addresses the host of u resolves to.
func (g *guard) resolvesPublic(ctx context.Context, u *url.URL) error {
	host := u.Hostname()
	if _, err := netip.ParseAddr(host); err == nil {
		return nil // checked by check
	}
	addrs, err := g.lookup(ctx, host)
	if err != nil {
		return err
	}
	for _, ip := range addrs {
		if why := notPublic(ip); why != "" {
			return fmt.Errorf("%w: %s: resolves to %s, %s%s", ErrDestinationRefused, origin(u), ip, why, notAllowed)
		}
	}
	return nil
}

// publicDial returns a dial function that connects to public addresses
// only, through dial when it is not nil (checking the address it
// connected to), else a net.Dialer that checks each address before it
// connects.
func publicDial(dial func(ctx context.Context, network, addr string) (net.Conn, error)) func(ctx context.Context, network, addr string) (net.Conn, error) {
	if dial != nil {
		return checkedDial(dial)
	}
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		d := &net.Dialer{
			Timeout:   30 * time.Second,
			KeepAlive: 30 * time.Second,
			Control: func(_, address string, _ syscall.RawConn) error {
				return checkDialed(addr, address)
			},
		}
		return d.DialContext(ctx, network, addr)
	}
}

// checkedDial returns dial, with connections to addresses that are not
// public closed and refused.
func checkedDial(dial func(ctx context.Context, network, addr string) (net.Conn, error)) func(ctx context.Context, network, addr string) (net.Conn, error) {
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		conn, err := dial(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		if err := checkDialed(addr, conn.RemoteAddr().String()); err != nil {
			conn.Close()
			return nil, err
		}
		return conn, nil
	}
}

// checkDialed checks the address a connection to dest is made to.
func checkDialed(dest, address string) error {
	ip, why, ok := netguard.Dialed(address)
	if !ok {
		return fmt.Errorf("%w: %s: connects to %q, not an IP address", ErrDestinationRefused, dest, address)
	}
	if why != "" {
		return fmt.Errorf("%w: %s: resolves to %s, %s%s", ErrDestinationRefused, dest, ip, why, notAllowed)
	}
	return nil
}

// notPublic says why ip is not a public address, or "" when it is one.
func notPublic(ip netip.Addr) string { return netguard.NotPublic(ip) }
