package oauth

import (
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"strings"
	"syscall"
	"time"
)

// The SDK's metadata discovery (oauthex) dials only public addresses, a
// defense against server-side request forgery, when its HTTP client's
// transport is a plain *http.Transport; a transport of another type is
// used as it is. A Handler wraps the transport of its OAuth requests
// (to note the metadata, or to add client assertions), so it applies the
// same rule itself to the discovery requests (GET /.well-known/...) that
// go through its wrappers.

// A middleware handles a request of a wrapped client: it sends req on
// through base (or answers it itself) and may look at or change the
// request and the response on the way.
type middleware func(base http.RoundTripper, req *http.Request) (*http.Response, error)

// wrapClient returns a copy of hc whose requests go through mw (when not
// nil) to its transport, the discovery requests guarded as the SDK guards
// them.
func wrapClient(hc *http.Client, mw middleware) *http.Client {
	c := *hc
	base := c.Transport
	switch base.(type) {
	case nil: // the SDK guards the default transport
		base = guardTransport(http.DefaultTransport.(*http.Transport))
	case *discoveryGuard:
	default:
		base = guardDiscovery(base)
	}
	if mw != nil {
		base = &middlewareTransport{base: base, mw: mw}
	}
	c.Transport = base
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

// discoveryGuard sends the discovery requests through a transport that
// dials public addresses only, and the others through base.
type discoveryGuard struct {
	base, discovery http.RoundTripper
}

// guardDiscovery returns base with its discovery requests guarded, when
// base is a plain *http.Transport without its own dialer or a proxy (the
// SDK's rule: a caller that took over dialing opts out), else base.
func guardDiscovery(base http.RoundTripper) http.RoundTripper {
	t, ok := base.(*http.Transport)
	if !ok || t.DialContext != nil || t.DialTLSContext != nil {
		return base
	}
	return guardTransport(t)
}

// guardTransport returns t with its discovery requests guarded, unless it
// sends requests through a proxy.
func guardTransport(t *http.Transport) http.RoundTripper {
	if hasProxy(t) {
		return t
	}
	d := t.Clone()
	d.DisableKeepAlives = true // nothing idle outlives the handler
	d.DialContext = (&net.Dialer{
		Timeout:   30 * time.Second,
		KeepAlive: 30 * time.Second,
		Control: func(_, address string, _ syscall.RawConn) error {
			host, _, err := net.SplitHostPort(address)
			if err != nil {
				host = address
			}
			ip, err := netip.ParseAddr(host)
			if err != nil {
				return fmt.Errorf("non-ip address: %w", err)
			}
			if privateOrReserved(ip) {
				return fmt.Errorf("metadata discovery refuses the non-public address %s", ip)
			}
			return nil
		},
	}).DialContext
	return &discoveryGuard{base: t, discovery: d}
}

func (g *discoveryGuard) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.Method == http.MethodGet && strings.HasPrefix(req.URL.Path, "/.well-known/") {
		return g.discovery.RoundTrip(req)
	}
	return g.base.RoundTrip(req)
}

// hasProxy reports whether t sends requests through a proxy (the dial
// checks would then check the proxy).
func hasProxy(t *http.Transport) bool {
	if t.Proxy == nil {
		return false
	}
	req, err := http.NewRequest(http.MethodGet, "https://proxy-check.invalid", nil)
	if err != nil {
		return false
	}
	u, err := t.Proxy(req)
	return err == nil && u != nil
}

// cgnat is the carrier-grade NAT range (RFC 6598), not publicly routable.
var cgnat = netip.MustParsePrefix("100.64.0.0/10")

// privateOrReserved reports whether ip is private (RFC 1918, RFC 4193),
// link-local (the cloud metadata address among them), carrier-grade NAT,
// multicast or unspecified: the SDK's list of addresses discovery must
// not reach. Loopback addresses are allowed, as in the SDK.
func privateOrReserved(ip netip.Addr) bool {
	ip = ip.Unmap()
	return !ip.IsValid() || ip.IsPrivate() || ip.IsLinkLocalUnicast() || ip.IsMulticast() || ip.IsUnspecified() || cgnat.Contains(ip)
}
