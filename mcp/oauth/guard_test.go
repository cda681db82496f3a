package oauth

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// TestDiscoveryGuard: through the connector's wrapped OAuth clients,
// discovery requests reach loopback and public addresses but not private
// ones, as in the SDK's own discovery; a transport with its own dialer
// opts out, as in the SDK.
func TestDiscoveryGuard(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {}))
	defer srv.Close()
	own := http.DefaultTransport.(*http.Transport).Clone()
	defer own.CloseIdleConnections()
	// A client without a transport: the SDK would guard its discovery.
	hc := wrapClient(&http.Client{}, nil)
	get := func(u string) error {
		req, err := http.NewRequestWithContext(context.Background(), http.MethodGet, u, nil)
		if err != nil {
			t.Fatal(err)
		}
		resp, err := hc.Do(req)
		if err == nil {
			resp.Body.Close()
		}
		return err
	}
	if err := get(srv.URL + "/.well-known/oauth-authorization-server"); err != nil {
		t.Fatalf("loopback discovery: %v", err)
	}
	if hasProxy(http.DefaultTransport.(*http.Transport)) {
		t.Skip("a proxy is configured: the dial checks are off, as in the SDK")
	}
	if err := get("http://10.255.255.1/.well-known/oauth-authorization-server"); err == nil || !strings.Contains(err.Error(), "non-public") {
		t.Fatalf("private discovery: %v, want it refused", err)
	}
	if _, guarded := guardDiscovery(own).(*discoveryGuard); guarded {
		t.Fatal("a transport with its own dialer was guarded")
	}
	if _, guarded := guardDiscovery(&http.Transport{}).(*discoveryGuard); !guarded {
		t.Fatal("a plain transport was not guarded")
	}
}
