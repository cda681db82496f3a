package mcpserver

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/llmkit/toolkit"
	"github.com/llmkit/toolkit/mcp/bridge"
)

// tokenHeader adds its bearer token, which may change, to each request.
type tokenHeader struct {
	token atomic.Pointer[string]
	base  http.RoundTripper
}

func (h *tokenHeader) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+*h.token.Load())
	return h.base.RoundTrip(r)
}

// The session of a call behind WithBearerAuth gives the token the call
// came with, its own even when the verifier returns one TokenInfo for
// every token of a principal, and each call its own when a client's
// token changes within its session; a call without authentication gives
// none, nor one whose credential no identity provider issued (the
// verifier named no issuer: a configured token of the program's own);
// the verifier's TokenInfo is left as it was.
func TestCallBearerToken(t *testing.T) {
	leakCheck(t)
	f := newFixture(t, []toolkit.Option{toolkit.WithTool(funcTool("token", func(ctx context.Context, _ json.RawMessage) (any, error) {
		cc, ok := toolkit.SessionAs[bridge.CallCredentials](toolkit.SessionFromContext(ctx))
		if !ok {
			return "no credentials", nil
		}
		return "token:" + cc.BearerToken(), nil
	}))})
	shared := &auth.TokenInfo{UserID: "alice", Expiration: time.Now().Add(time.Hour), Extra: map[string]any{"iss": "https://idp.example"}}
	verify := func(_ context.Context, tok string, _ *http.Request) (*auth.TokenInfo, error) {
		switch {
		case strings.HasPrefix(tok, "alice-"):
			return shared, nil
		case strings.HasPrefix(tok, "static-"):
			return &auth.TokenInfo{UserID: "token:1", Expiration: time.Now().Add(time.Hour)}, nil
		}
		return nil, auth.ErrInvalidToken
	}
	authed, err := f.srv.Handler(WithBearerAuth(verify, nil))
	mustNotErr(t, err)
	open, err := f.srv.Handler()
	mustNotErr(t, err)
	mux := http.NewServeMux()
	mux.Handle("/mcp", authed)
	mux.Handle("/open", open)
	hs := httptest.NewServer(mux)
	defer hs.Close()

	connect := func(path string, th *tokenHeader) *sdk.ClientSession {
		t.Helper()
		tr := &sdk.StreamableClientTransport{Endpoint: hs.URL + path, MaxRetries: -1}
		if th != nil {
			tr.HTTPClient = &http.Client{Transport: th}
		}
		cs, err := sdk.NewClient(&sdk.Implementation{Name: "c", Version: "1"}, nil).Connect(context.Background(), tr, nil)
		mustNotErr(t, err)
		t.Cleanup(func() { cs.Close() })
		return cs
	}
	call := func(cs *sdk.ClientSession) string {
		t.Helper()
		res, err := cs.CallTool(context.Background(), &sdk.CallToolParams{Name: "token", Arguments: map[string]any{}})
		mustNotErr(t, err)
		return resultText(t, res)
	}
	th := &tokenHeader{base: http.DefaultTransport}
	first := "alice-1"
	th.token.Store(&first)
	alice := connect("/mcp", th)
	if got := call(alice); got != "token:alice-1" {
		t.Errorf("first token: %q", got)
	}
	second := "alice-2"
	th.token.Store(&second)
	if got := call(alice); got != "token:alice-2" {
		t.Errorf("second token: %q", got)
	}
	other := &tokenHeader{base: http.DefaultTransport}
	third := "alice-3"
	other.token.Store(&third)
	if got := call(connect("/mcp", other)); got != "token:alice-3" {
		t.Errorf("another session's token: %q", got)
	}
	if got := call(alice); got != "token:alice-2" {
		t.Errorf("back to the first session: %q", got)
	}
	if got := call(connect("/open", nil)); got != "token:" {
		t.Errorf("anonymous call: %q", got)
	}
	static := &tokenHeader{base: http.DefaultTransport}
	key := "static-0123456789"
	static.token.Store(&key)
	if got := call(connect("/mcp", static)); got != "token:" {
		t.Errorf("a configured token was handed out: %q", got)
	}
	if len(shared.Extra) != 1 {
		t.Errorf("the verifier's TokenInfo was changed: %+v", shared)
	}
}
