package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"

	"github.com/llmkit/toolkit"
)

func TestHealthHandler(t *testing.T) {
	ready := toolkit.ConnectorState{Namespace: "a", URL: "http://a/mcp", Name: "a-server", Status: toolkit.StatusReady}
	down := toolkit.ConnectorState{Namespace: "b", URL: "stdio:server?env=TOKEN%3Ds3cret", Status: toolkit.StatusReconnecting, LastError: "connection refused"}
	for _, tc := range []struct {
		name   string
		states []toolkit.ConnectorState
		method string
		code   int
		status string
	}{
		{"all ready", []toolkit.ConnectorState{ready}, http.MethodGet, http.StatusOK, "ok"},
		{"none", nil, http.MethodGet, http.StatusOK, "ok"},
		{"one down", []toolkit.ConnectorState{ready, down}, http.MethodGet, http.StatusServiceUnavailable, "degraded"},
		{"head", []toolkit.ConnectorState{down}, http.MethodHead, http.StatusServiceUnavailable, ""},
		{"post", []toolkit.ConnectorState{ready}, http.MethodPost, http.StatusMethodNotAllowed, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := healthHandler(healthSource{states: func() []toolkit.ConnectorState { return tc.states }})
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, httptest.NewRequest(tc.method, "/healthz", nil))
			if rec.Code != tc.code {
				t.Fatalf("code = %d, want %d", rec.Code, tc.code)
			}
			if tc.status == "" {
				return
			}
			var got struct {
				Status    string
				Upstreams []map[string]any
			}
			if err := json.Unmarshal(rec.Body.Bytes(), &got); err != nil {
				t.Fatal(err)
			}
			if got.Status != tc.status || len(got.Upstreams) != len(tc.states) || strings.Contains(rec.Body.String(), "s3cret") {
				t.Errorf("body = %s", rec.Body)
			}
			for i, st := range tc.states {
				if got.Upstreams[i]["namespace"] != st.Namespace || got.Upstreams[i]["status"] != st.Status.String() ||
					got.Upstreams[i]["url"] != toolkit.RedactURL(st.URL) {
					t.Errorf("upstream %d = %v", i, got.Upstreams[i])
				}
			}
		})
	}
}

// TestHealthSaysLittle: the report, open to anyone, gives each upstream's
// name, state and redacted URL and nothing more: no instructions, no
// title, no error, no path of a command or of the prompts directory.
func TestHealthSaysLittle(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "private", "prompts")
	states := []toolkit.ConnectorState{
		{Namespace: toolkit.UserNamespace, URL: toolkit.UserConnectorURI, Name: "store", Title: dir, Status: toolkit.StatusReady},
		{Namespace: "x", URL: "http://x/mcp", Status: toolkit.StatusFailed, LastError: "unavailable: store \"" + dir + "\": gone"},
		{Namespace: "cmd", URL: "stdio:/opt/private/bin/server?arg=--token&env=K%3Dsecret-env", Status: toolkit.StatusReady,
			Instructions: strings.Repeat("Use this server wisely. ", 200), Title: "Secret title"},
	}
	rec := httptest.NewRecorder()
	healthHandler(healthSource{states: func() []toolkit.ConnectorState { return states }}).ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/healthz", nil))
	body := rec.Body.String()
	for _, leak := range []string{"private", "secret", "Secret", "wisely", "gone", "store"} {
		if strings.Contains(body, leak) {
			t.Errorf("the report shows %q: %s", leak, body)
		}
	}
	var got struct {
		Upstreams []map[string]any
	}
	if err := json.Unmarshal(rec.Body.Bytes(), &got); err != nil {
		t.Fatal(err)
	}
	want := []map[string]any{
		{"namespace": "user", "status": "ready", "url": toolkit.UserConnectorURI},
		{"namespace": "x", "status": "failed", "url": "http://x/mcp"},
		{"namespace": "cmd", "status": "ready", "url": "stdio:server"},
	}
	if len(got.Upstreams) != len(want) {
		t.Fatalf("upstreams = %v", got.Upstreams)
	}
	for i := range want {
		if len(got.Upstreams[i]) != 3 || fmt.Sprint(got.Upstreams[i]) != fmt.Sprint(want[i]) {
			t.Errorf("upstream %d = %v, want %v", i, got.Upstreams[i], want[i])
		}
	}
}

// A gateway whose upstream is down is still alive: /livez, which a load
// balancer checks, answers 200 where /healthz answers 503.
func TestLivez(t *testing.T) {
	down := toolkit.ConnectorState{Namespace: "b", Status: toolkit.StatusReconnecting}
	mux := http.NewServeMux()
	mountHealth(mux, healthHandler(healthSource{states: func() []toolkit.ConnectorState { return []toolkit.ConnectorState{down} }}))
	for path, want := range map[string]int{"/healthz": http.StatusServiceUnavailable, "/livez": http.StatusOK} {
		rec := httptest.NewRecorder()
		mux.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, path, nil))
		if rec.Code != want {
			t.Errorf("GET %s = %d, want %d", path, rec.Code, want)
		}
	}
	rec := httptest.NewRecorder()
	mux.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, "/livez", nil))
	if rec.Code != http.StatusMethodNotAllowed {
		t.Errorf("POST /livez = %d, want 405", rec.Code)
	}
}

// TestHealthClientSessions: a per_client upstream's report counts its
// client sessions; a shared one's has none.
func TestHealthClientSessions(t *testing.T) {
	states := []toolkit.ConnectorState{
		{Namespace: "fs", URL: "stdio:fs", Status: toolkit.StatusReady},
		{Namespace: "web", URL: "http://web/mcp", Status: toolkit.StatusReady},
	}
	sessions := func(url string) *upstreamSessions {
		if url == "stdio:fs" {
			return &upstreamSessions{Open: 3, Opened: 9}
		}
		return nil
	}
	rec := httptest.NewRecorder()
	healthHandler(healthSource{states: func() []toolkit.ConnectorState { return states }, sessions: sessions}).ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/healthz", nil))
	body := rec.Body.String()
	if !strings.Contains(body, `"namespace":"fs","status":"ready","url":"stdio:fs","client_sessions":{"open":3,"opened":9}}`) {
		t.Errorf("the per_client upstream's sessions are not reported: %s", body)
	}
	if strings.Count(body, "client_sessions") != 1 {
		t.Errorf("a shared upstream reports client sessions: %s", body)
	}
}
