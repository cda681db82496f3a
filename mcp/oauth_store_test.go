package mcp

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/auth"

	"github.com/llmkit/toolkit"
	"github.com/llmkit/toolkit/mcp/oauth"
)

// fileKeys returns the keys of the token file at path.
func fileKeys(t *testing.T, path string) []string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	var keys []string
	for k := range m {
		keys = append(keys, k)
	}
	return keys
}

// tokenFileKey is the key under which an oauth.FileTokenStore keeps the
// token of issuer for resource: a hash of both.
func tokenFileKey(issuer, resource string) string {
	sum := sha256.Sum256([]byte(issuer + "\x00" + resource))
	return "t-" + hex.EncodeToString(sum[:16])
}

// TestOAuthStoreIssuer: through a full authorization, the token is stored
// under the issuer the authorization server's metadata names, and no token
// appears in the logs, the state or the errors of the connector, also when
// an authorization fails.
func TestOAuthStoreIssuer(t *testing.T) {
	s := newOAuthServer(t)
	path := filepath.Join(t.TempDir(), "tokens.json")
	store := oauth.NewFileTokenStore(path)
	var asked atomic.Int32
	consent := s.consent(&asked, nil, 0, nil)
	var refuse atomic.Bool
	authorize := func(ctx context.Context, args *auth.AuthorizationArgs) (*auth.AuthorizationResult, error) {
		if refuse.Load() {
			return nil, errors.New("the user said no")
		}
		return consent(ctx, args)
	}
	logs := newLogCapture()
	cfg := oauth.Config{Authorize: authorize, RedirectURL: "http://127.0.0.1:9/callback", Store: store}
	ctx := context.Background()
	r := start(t, s.URL+"/mcp", false, OptOAuth(oauth.AuthorizationCode(cfg)), OptLogger(slogNew(logs)), OptNamespace("guarded"))
	if err := callEcho(t, ctx, r); err != nil {
		t.Fatal(err)
	}
	st, err := store.LoadToken(ctx, s.URL+"/mcp")
	if err != nil || st == nil || st.Issuer != s.URL {
		t.Fatalf("stored %v, %v; want issuer %s", st, err, s.URL)
	}
	regs := 0
	for _, k := range fileKeys(t, path) {
		if strings.HasPrefix(k, "r-") {
			regs++ // the client's registration
			continue
		}
		if k != tokenFileKey(s.URL, s.URL+"/mcp") {
			t.Errorf("key %q", k)
		}
	}
	if regs != 1 {
		t.Errorf("the file holds %d registrations, want 1", regs)
	}
	fi, err := os.Stat(path)
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("token file %v, %v", fi, err)
	}
	r.stop(t)
	// A restart with the stored token, now revoked, and a refused
	// authorization: the connection fails.
	s.revoke()
	refuse.Store(true)
	r = start(t, s.URL+"/mcp", true, OptOAuth(oauth.AuthorizationCode(cfg)), OptLogger(slogNew(logs)), OptNamespace("guarded"), OptReconnect(Reconnect{MaxAttempts: 1}))
	r.states.wait(t, toolkit.StatusFailed, 1)
	state := r.State()
	runErr := r.stop(t)
	if runErr == nil || !strings.Contains(runErr.Error(), "guarded") || !strings.Contains(state.LastError, "the user said no") {
		t.Errorf("Run = %v, state %+v", runErr, state)
	}
	texts := append(logs.all(), fmt.Sprintf("%+v", state), fmt.Sprint(runErr), st.String())
	for _, text := range texts {
		if strings.Contains(text, "secret-") {
			t.Errorf("a token leaked: %s", text)
		}
	}
}
