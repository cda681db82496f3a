package main

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// TestGatewayUpstreamWantsOAuth: an upstream that answers 401 with a
// Bearer challenge, configured without oauth:, is reported at once as
// needs_authorization with the authorization server its protected
// resource metadata names and the oauth: block that would reach it; the
// gateway never reports it reconnecting.
func TestGatewayUpstreamWantsOAuth(t *testing.T) {
	var srv *httptest.Server
	srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/.well-known/oauth-protected-resource/mcp" {
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprintf(w, `{"resource":%q,"authorization_servers":["https://as.example.com"]}`, srv.URL+"/mcp")
			return
		}
		w.Header().Set("WWW-Authenticate", fmt.Sprintf(`Bearer resource_metadata="%s/.well-known/oauth-protected-resource/mcp"`, srv.URL))
		http.Error(w, "Unauthorized", http.StatusUnauthorized)
	}))
	defer srv.Close()
	g := startGateway(t, writeConfig(t, t.TempDir(), fmt.Sprintf(`listen: 127.0.0.1:0
servers:
  - name: up
    url: %s/mcp
`, srv.URL)))
	rec := g.waitLog(t, 0, func(r map[string]any) bool {
		return r["msg"] == "upstream state" && r["status"] != "connecting"
	})
	msg, _ := rec["error"].(string)
	if rec["status"] != "needs_authorization" || !strings.Contains(msg, "https://as.example.com") || !strings.Contains(msg, "oauth:") {
		t.Errorf("upstream state %v, want needs_authorization naming the authorization server and oauth:", rec)
	}
}
