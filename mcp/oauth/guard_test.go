package oauth

import (
	"context"
	"errors"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/llmkit/toolkit/internal/errs"
)

func TestNotPublic(t *testing.T) {
	for addr, want := range map[string]string{
		"8.8.8.8":              "",
		"2606:4700:4700::1111": "",
		"127.0.0.1":            "loopback",
		"127.9.9.9":            "loopback",
		"::1":                  "loopback",
		"::ffff:127.0.0.1":     "loopback",
		"10.1.2.3":             "private",
		"172.16.0.1":           "private",
		"192.168.1.1":          "private",
		"fd00::1":              "private",
		"169.254.169.254":      "link-local",
		"fe80::1":              "link-local",
		"0.0.0.0":              "unspecified",
		"::":                   "unspecified",
		"0.1.2.3":              "this network",
		"224.0.0.1":            "multicast",
		"ff02::1":              "multicast",
		"100.64.0.1":           "carrier-grade NAT",
		"255.255.255.255":      "reserved",
		"198.18.0.1":           "reserved",
		"::7f00:1":             "reserved",
		"fec0::1":              "site-local",
		"64:ff9b::7f00:1":      "NAT64 address of a loopback",
		"64:ff9b::808:808":     "",
		"2002:a00:1::1":        "6to4 address of a private",
		"2002:808:808::1":      "",
		"64:ff9b:1::1":         "local NAT64",
	} {
		got := notPublic(netip.MustParseAddr(addr))
		if (want == "") != (got == "") || !strings.Contains(got, want) {
			t.Errorf("notPublic(%s) = %q, want %q", addr, got, want)
		}
	}
}

func TestNewAllowList(t *testing.T) {
	l, err := NewAllowList("http://127.0.0.1:8080", "https://Login.Corp.example", "localhost", "[::1]", "10.1.2.3")
	if err != nil {
		t.Fatal(err)
	}
	for raw, want := range map[string]bool{
		"http://127.0.0.1:8080/token":            true,
		"http://127.0.0.1:8081/token":            false,
		"https://127.0.0.1:8080/token":           false,
		"https://login.corp.example/.well-known": true,
		"https://login.corp.example:443/x":       true,
		"https://login.corp.example:8443/x":      false,
		"http://login.corp.example/x":            false,
		"http://localhost:1/x":                   true,
		"https://LOCALHOST:2/x":                  true,
		"http://[::1]:3/x":                       true,
		"https://10.1.2.3:4/x":                   true,
		"https://10.1.2.4/x":                     false,
	} {
		u, _ := url.Parse(raw)
		if got := l.allows(u); got != want {
			t.Errorf("allows(%s) = %v, want %v", raw, got, want)
		}
	}
	var none *AllowList
	if none.allows(&url.URL{Scheme: "http", Host: "localhost"}) {
		t.Error("a nil list allows")
	}
	for _, bad := range []string{"", "localhost:8080", "http://x/path", "http://x?q", "http://u:p@x", "ftp://x", "http://", "a b", "http://%zz"} {
		if _, err := NewAllowList(bad); err == nil || !errors.Is(err, errs.ErrBadParameter) {
			t.Errorf("NewAllowList(%q) = %v, want ErrBadParameter", bad, err)
		}
	}
}

// counting is a test server that counts the requests it receives.
type counting struct {
	*httptest.Server
	n atomic.Int32
}

func newCounting(t *testing.T, tls bool) *counting {
	t.Helper()
	c := &counting{}
	h := http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		c.n.Add(1)
		io.WriteString(w, "{}")
	})
	if tls {
		c.Server = httptest.NewUnstartedServer(h)
		c.Config.ErrorLog = log.New(io.Discard, "", 0) // the refused handshakes
		c.StartTLS()
	} else {
		c.Server = httptest.NewServer(h)
	}
	t.Cleanup(c.Close)
	return c
}

// send makes a request with hc and returns its error.
func send(t *testing.T, hc *http.Client, method, u string) error {
	t.Helper()
	var body io.Reader
	if method == http.MethodPost {
		body = strings.NewReader("grant_type=x")
	}
	req, err := http.NewRequestWithContext(context.Background(), method, u, body)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := hc.Do(req)
	if err == nil {
		resp.Body.Close()
	}
	return err
}

// refused checks that err is a refusal naming what and saying why.
func refused(t *testing.T, err error, what, why string) {
	t.Helper()
	if !errors.Is(err, ErrDestinationRefused) || !strings.Contains(err.Error(), what) || !strings.Contains(err.Error(), why) {
		t.Errorf("err = %v, want ErrDestinationRefused naming %s and saying %q", err, what, why)
	}
}

// TestGuard: a handler's requests reach the resource's own origin and
// the destinations allowed, and no loopback, private or plain http one
// else, whether the address is written in the URL or a name resolves to
// it, whatever the transport.
func TestGuard(t *testing.T) {
	leakCheck(t)
	own := newCounting(t, false)
	other := newCounting(t, false)
	otherTLS := newCounting(t, true)
	var notes []error
	note := func(err error) { notes = append(notes, err) }
	hc := guardClient(&http.Client{}, own.URL+"/mcp", nil, note)
	otherHost := strings.TrimPrefix(other.URL, "http://")

	if err := send(t, hc, http.MethodGet, own.URL+"/.well-known/oauth-protected-resource/mcp"); err != nil || own.n.Load() != 1 {
		t.Fatalf("the resource's origin: %v (%d requests)", err, own.n.Load())
	}
	refused(t, send(t, hc, http.MethodGet, other.URL+"/.well-known/oauth-authorization-server?secret=1"), otherHost, "not https")
	refused(t, send(t, hc, http.MethodPost, other.URL+"/register"), otherHost, "not https")
	tlsHost := strings.TrimPrefix(otherTLS.URL, "https://")
	refused(t, send(t, hc, http.MethodPost, otherTLS.URL+"/token"), tlsHost, "a loopback address")
	refused(t, send(t, hc, http.MethodGet, "https://10.255.255.1/.well-known/x"), "10.255.255.1", "a private address")
	refused(t, send(t, hc, http.MethodGet, "https://[fe80::1%25eth0]/x"), "fe80::1", "link-local")

	// A name that resolves to a loopback address, over https with a
	// transport that trusts the server: refused when connecting.
	_, port, _ := net.SplitHostPort(tlsHost)
	byName := "https://localhost:" + port + "/token"
	tlsBase := otherTLS.Client().Transport.(*http.Transport)
	refused(t, send(t, guardClient(&http.Client{Transport: tlsBase}, own.URL, nil, note), http.MethodPost, byName), "localhost:"+port, "a loopback address")
	// The same through a transport with a dialer of its own, and through
	// a transport of another type.
	ownDialer := tlsBase.Clone()
	ownDialer.DialContext = (&net.Dialer{}).DialContext
	refused(t, send(t, guardClient(&http.Client{Transport: ownDialer}, own.URL, nil, note), http.MethodGet, byName), "localhost:"+port, "a loopback address")
	wrapped := roundTripFunc(tlsBase.RoundTrip)
	refused(t, send(t, guardClient(&http.Client{Transport: wrapped}, own.URL, nil, note), http.MethodGet, byName), "localhost:"+port, "a loopback address")
	if n := other.n.Load() + otherTLS.n.Load(); n != 0 {
		t.Fatalf("%d refused requests reached their server", n)
	}
	if len(notes) != 8 {
		t.Errorf("%d refusals noted, want 8", len(notes))
	}
	for _, err := range notes {
		if strings.Contains(err.Error(), "secret") || strings.Contains(err.Error(), "/token") {
			t.Errorf("a refusal quotes more than the origin: %v", err)
		}
	}

	// Allowed by origin or by host: sent.
	byOrigin, err := NewAllowList(other.URL)
	mustNotErr(t, err)
	mustNotErr(t, send(t, guardClient(&http.Client{}, own.URL, byOrigin, note), http.MethodPost, other.URL+"/register"))
	byHost, err := NewAllowList("127.0.0.1")
	mustNotErr(t, err)
	mustNotErr(t, send(t, guardClient(&http.Client{Transport: tlsBase}, own.URL, byHost, note), http.MethodPost, otherTLS.URL+"/token"))
	if other.n.Load() != 1 || otherTLS.n.Load() != 1 {
		t.Fatalf("allowed requests: %d and %d, want 1 and 1", other.n.Load(), otherTLS.n.Load())
	}
}

// TestGuardProxy: through a proxy, which makes the connection, the
// addresses of the name are checked before the request; a public one is
// sent to the proxy.
func TestGuardProxy(t *testing.T) {
	leakCheck(t)
	proxy := newCounting(t, false)
	pu, _ := url.Parse(proxy.URL)
	tr := &http.Transport{Proxy: http.ProxyURL(pu)}
	defer tr.CloseIdleConnections()
	hc := guardClient(&http.Client{Transport: tr}, "https://mcp.example.com/mcp", nil, nil)
	g := hc.Transport.(*guard)
	g.lookup = func(_ context.Context, host string) ([]netip.Addr, error) {
		if host == "as.example.com" {
			return []netip.Addr{netip.MustParseAddr("93.184.216.34")}, nil
		}
		return []netip.Addr{netip.MustParseAddr("93.184.216.35"), netip.MustParseAddr("10.0.0.1")}, nil
	}
	refused(t, send(t, hc, http.MethodGet, "https://rebind.example.com/x"), "rebind.example.com:443", "resolves to 10.0.0.1, a private address")
	if proxy.n.Load() != 0 {
		t.Fatal("the refused request reached the proxy")
	}
	// The proxy answers the CONNECT with 200 and a body: the request
	// fails, after reaching it.
	_ = send(t, hc, http.MethodGet, "https://as.example.com/x")
	if proxy.n.Load() != 1 {
		t.Fatalf("the proxy got %d requests, want 1", proxy.n.Load())
	}
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// FuzzGuard checks that no URL and allow list entry make the rules panic,
// that an entry is accepted only as an origin or a host, and that a URL
// passes the URL checks only when it is https without an address that is
// not public written in it.
func FuzzGuard(f *testing.F) {
	for _, seed := range [][2]string{
		{"https://as.example.com/token", "localhost"},
		{"http://127.0.0.1:8080/register", "http://127.0.0.1:8080"},
		{"https://[::ffff:127.0.0.1]/x", "[::1]"},
		{"https://[fe80::1%25eth0]:443/x", "fe80::1"},
		{"https://0x7f.1/x", "0x7f.1"},
		{"https://2130706433/x", "2130706433"},
		{"https://[64:ff9b::a00:1]/", "https://[64:ff9b::a00:1]:443"},
		{"HTTPS://LOCALHOST/", "LOCALHOST"},
		{"https:///path", "http://"},
		{"https://user:pass@host/?q#f", "http://u@h"},
		{"//no-scheme", "%zz"},
	} {
		f.Add(seed[0], seed[1])
	}
	g := &guard{own: "https://mcp.example.com:443"}
	f.Fuzz(func(t *testing.T, raw, entry string) {
		l, err := NewAllowList(entry)
		if err != nil {
			if !errors.Is(err, errs.ErrBadParameter) {
				t.Fatalf("NewAllowList(%q) = %v", entry, err)
			}
		} else if len(l.origins)+len(l.hosts) != 1 {
			t.Fatalf("NewAllowList(%q) holds %d origins and %d hosts", entry, len(l.origins), len(l.hosts))
		}
		u, err := url.Parse(raw)
		if err != nil {
			return
		}
		_ = l.allows(u)
		err = g.check(u)
		if err == nil {
			if !strings.EqualFold(u.Scheme, "https") || u.Hostname() == "" {
				t.Fatalf("check(%q) passed", raw)
			}
			if ip, perr := netip.ParseAddr(u.Hostname()); perr == nil && notPublic(ip) != "" {
				t.Fatalf("check(%q) passed a %s", raw, notPublic(ip))
			}
		} else if !errors.Is(err, ErrDestinationRefused) || (len(u.RawQuery) > 2 && strings.Contains(err.Error(), "?"+u.RawQuery)) {
			t.Fatalf("check(%q) = %v", raw, err)
		}
	})
}
