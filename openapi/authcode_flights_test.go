package openapi_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/llmkit/toolkit"
	"github.com/llmkit/toolkit/mcp/oauth"
	"github.com/llmkit/toolkit/openapi"
)

// memFlights is a fleet's oauth.FlightRegistry in memory, a
// FlightWatcher; each process has its own id. unwatched gets the key of
// each watch that stops.
type memFlights struct {
	mu        sync.Mutex
	recs      map[string]string // key → owner
	urls      map[string]string // key → URL
	watchers  map[string]map[*func(bool)]bool
	unwatched chan string
}

type memProcess struct {
	f  *memFlights
	id string
}

func (p memProcess) Begin(_ context.Context, key, authURL string, _ time.Duration) (string, bool, error) {
	p.f.mu.Lock()
	defer p.f.mu.Unlock()
	if owner, ok := p.f.recs[key]; ok && owner != p.id {
		return p.f.urls[key], false, nil
	}
	p.f.recs[key], p.f.urls[key] = p.id, authURL
	return authURL, true, nil
}

func (p memProcess) End(_ context.Context, key string) error {
	p.f.mu.Lock()
	defer p.f.mu.Unlock()
	if p.f.recs[key] == p.id {
		delete(p.f.recs, key)
		for w := range p.f.watchers[key] {
			(*w)(true)
		}
	}
	return nil
}

func (p memProcess) WatchFlight(key string, wake func(bool)) func() {
	p.f.mu.Lock()
	defer p.f.mu.Unlock()
	if p.f.watchers[key] == nil {
		p.f.watchers[key] = map[*func(bool)]bool{}
	}
	p.f.watchers[key][&wake] = true
	wake(true)
	return func() {
		p.f.mu.Lock()
		delete(p.f.watchers[key], &wake)
		p.f.mu.Unlock()
		p.f.unwatched <- key
	}
}

// TestUserAuthorizationFlights: two processes of a fleet share a token
// store and their flights. Alice, asked by A, is shown A's URL by B too;
// once she authorized there, B's wait for that authorization ends (woken
// by its end, no look of its own) and B's call goes on with her token.
// Bob's authorization on A ends without a token: B, which followed it,
// then asks him at a URL of its own.
func TestUserAuthorizationFlights(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/authorize":
			q := r.URL.Query()
			http.Redirect(w, r, q.Get("redirect_uri")+"?code=code-"+q.Get("user")+"&state="+url.QueryEscape(q.Get("state")), http.StatusFound)
		case "/token":
			r.ParseForm()
			w.Header().Set("Content-Type", "application/json")
			io.WriteString(w, `{"access_token":"tok-`+strings.TrimPrefix(r.Form.Get("code"), "code-")+`","token_type":"Bearer","expires_in":3600}`)
		default:
			io.WriteString(w, r.Header.Get("Authorization"))
		}
	}))
	t.Cleanup(srv.Close)
	cb, cbURL := serveCallback(t)
	store := oauth.NewFileTokenStore(filepath.Join(t.TempDir(), "tokens.json"))
	flights := &memFlights{recs: map[string]string{}, urls: map[string]string{}, watchers: map[string]map[*func(bool)]bool{}, unwatched: make(chan string, 4)}
	replica := func(id string, cb *oauth.Callback) (*openapi.UserAuthorization, toolkit.Tool) {
		ua := &openapi.UserAuthorization{ClientID: "cid", Callback: cb, Store: store, Resource: srv.URL, Flights: memProcess{flights, id}}
		t.Cleanup(ua.Close)
		return ua, mustTools(t, openapi.Config{
			Document:    writeDoc(t, strings.ReplaceAll(authCodeDoc, "AS/", srv.URL+"/")),
			BaseURL:     srv.URL,
			Credentials: map[string]openapi.Credential{"user": {User: ua}},
		})["me"]
	}
	// B's redirect URL is the fleet's (A's callback): B never receives it.
	cbB, err := oauth.NewCallback(cbURL, oauth.CallbackConfig{})
	if err != nil {
		t.Fatal(err)
	}
	uaA, meA := replica("A", cb)
	_, meB := replica("B", cbB)
	asked := func(me toolkit.Tool, user string) string {
		t.Helper()
		_, err := me.Run(toolkit.WithPrincipal(context.Background(), user), nil)
		var are *openapi.AuthorizationRequiredError
		if !errors.As(err, &are) {
			t.Fatalf("%s before authorizing: %v", user, err)
		}
		return are.URL
	}

	urlA := asked(meA, "alice")
	if urlB := asked(meB, "alice"); urlB != urlA {
		t.Fatalf("alice is sent to two authorizations:\n A: %s\n B: %s", urlA, urlB)
	}
	resp, err := http.Get(urlA + "&user=alice")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("alice's redirect: %s", resp.Status)
	}
	select {
	case <-flights.unwatched: // B took the token: its wait is over
	case <-time.After(20 * time.Second):
		t.Fatal("B still follows alice's authorization after its token came")
	}
	if out, err := meB.Run(toolkit.WithPrincipal(context.Background(), "alice"), nil); err != nil || out != "Bearer tok-alice" {
		t.Fatalf("alice through B: %v, %v", out, err)
	}

	bobA := asked(meA, "bob")
	if bobB := asked(meB, "bob"); bobB != bobA {
		t.Fatalf("bob is sent to two authorizations:\n A: %s\n B: %s", bobA, bobB)
	}
	uaA.Close() // bob's authorization on A ends without a token
	select {
	case <-flights.unwatched:
	case <-time.After(20 * time.Second):
		t.Fatal("B still follows bob's authorization after it ended")
	}
	if again := asked(meB, "bob"); again == bobA || !strings.Contains(again, "state=") {
		t.Errorf("bob through B after A's authorization ended: %s; want a URL of B's own", again)
	}
}
