package redisstate

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/llmkit/toolkit/internal/testing/redistest"
	"github.com/llmkit/toolkit/mcp/oauth"
)

// TestRedirectsAcrossReplicas: two replicas' callbacks share one Redis
// relay. An authorization started on A whose redirect reaches B
// completes on A, once; a replay, a forged state and an unknown one are
// refused; nothing crosses Redis in clear.
func TestRedirectsAcrossReplicas(t *testing.T) {
	srv := redistest.Start(t)
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	defer func() { cancel(); wg.Wait() }()
	var cbs []*oauth.Callback
	for range 2 {
		relay, err := newStore(t, srv, Config{SealKeys: [][]byte{key16}, Timeout: time.Second}).Redirects()
		if err != nil {
			t.Fatal(err)
		}
		cb, err := oauth.NewCallback("https://gw.example/oauth/callback", oauth.CallbackConfig{Relay: relay})
		if err != nil {
			t.Fatal(err)
		}
		cbs = append(cbs, cb)
		wg.Add(1)
		go func() { defer wg.Done(); cb.ListenRelay(ctx) }()
	}
	// A client that watches the channel: what it sees is sealed.
	spy := newClient(t, srv).Subscribe(ctx, "toolkit:redirects")
	defer spy.Close()
	if _, err := spy.Receive(ctx); err != nil {
		t.Fatal(err)
	}
	a, b := cbs[0], cbs[1]
	e, err := a.Expect("jwt:alice", "https://as.example/authorize?state=state-a&client_id=c")
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	get := func(c *oauth.Callback, q string) int {
		rec := httptest.NewRecorder()
		c.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/oauth/callback?"+q, nil))
		return rec.Code
	}
	// The listeners subscribe asynchronously: relay until one takes it.
	deadline := time.Now().Add(5 * time.Second)
	code := 0
	for code != http.StatusOK && time.Now().Before(deadline) {
		code = get(b, "code=SECRET-CODE&state=state-a")
	}
	if code != http.StatusOK {
		t.Fatalf("A's redirect on B: %d", code)
	}
	res, err := e.Wait(context.Background())
	if err != nil || res.Code != "SECRET-CODE" {
		t.Fatalf("A's Wait: %+v, %v", res, err)
	}
	for i, c := range cbs {
		if got := get(c, "code=SECRET-CODE&state=state-a"); got != http.StatusBadRequest {
			t.Errorf("replayed on replica %d: %d, want 400", i, got)
		}
	}
	if got := get(b, "code=x&state=nobody"); got != http.StatusBadRequest {
		t.Errorf("an unknown state: %d, want 400", got)
	}
	for {
		select {
		case m := <-spy.Channel():
			if strings.Contains(m.Payload, "SECRET") || strings.Contains(m.Payload, "state-a") {
				t.Fatalf("a relayed redirect crossed Redis in clear: %q", m.Payload)
			}
			continue
		default:
		}
		break
	}
}
