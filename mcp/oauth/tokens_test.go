package oauth

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"golang.org/x/oauth2"
)

// TestIssuerRecorder: the issuer of fetched authorization server metadata
// is noted (the token endpoint's origin is only the fallback), and the
// body still reaches the SDK whole.
func TestIssuerRecorder(t *testing.T) {
	const meta = `{"issuer":"https://login.example/tenant-7","token_endpoint":"https://login.example/oauth/token"}`
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		if strings.HasPrefix(r.URL.Path, "/.well-known/oauth-authorization-server") {
			io.WriteString(w, meta)
			return
		}
		io.WriteString(w, `{"issuer":"https://elsewhere.example"}`)
	}))
	defer hs.Close()
	h := &Handler{clock: realClock{}}
	cfg := &oauth2.Config{Endpoint: oauth2.Endpoint{TokenURL: "https://login.example/oauth/token"}}
	if got := h.issuerOf(cfg); got != "https://login.example" {
		t.Errorf("issuer before any metadata: %q", got)
	}
	hc := h.observe(hs.Client())
	resp, err := hc.Get(hs.URL + "/other")
	mustNotErr(t, err)
	resp.Body.Close()
	if h.issuer.Load() != nil {
		t.Errorf("issuer noted from a document that is no metadata: %q", *h.issuer.Load())
	}
	resp, err = hc.Get(hs.URL + "/.well-known/oauth-authorization-server/tenant-7")
	mustNotErr(t, err)
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	mustNotErr(t, err)
	if string(body) != meta {
		t.Errorf("body passed on: %q", body)
	}
	if got := h.issuerOf(cfg); got != "https://login.example/tenant-7" {
		t.Errorf("issuer: %q", got)
	}
}
