package main

import (
	"encoding/json"
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
			h := healthHandler(func() []toolkit.ConnectorState { return tc.states })
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

// TestHealthHidesPaths: the prompts directory's absolute path, which the
// store gives as its title and names in its errors, is not shown.
func TestHealthHidesPaths(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "private", "prompts")
	states := []toolkit.ConnectorState{
		{Namespace: toolkit.UserNamespace, URL: toolkit.UserConnectorURI, Name: "store", Title: dir, Status: toolkit.StatusReady},
		{Namespace: "x", URL: "http://x/mcp", Status: toolkit.StatusFailed, LastError: "unavailable: store \"" + dir + "\": gone"},
		{Namespace: toolkit.UserNamespace, Title: "/elsewhere/notes", Status: toolkit.StatusReady},
	}
	rec := httptest.NewRecorder()
	healthHandler(func() []toolkit.ConnectorState { return states }, dir).ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/healthz", nil))
	body := rec.Body.String()
	if strings.Contains(body, "private") || strings.Contains(body, "elsewhere") {
		t.Errorf("a path is shown: %s", body)
	}
	var got struct {
		Upstreams []struct{ Title string }
	}
	if err := json.Unmarshal(rec.Body.Bytes(), &got); err != nil {
		t.Fatal(err)
	}
	if len(got.Upstreams) != 3 || got.Upstreams[0].Title != "prompts" || got.Upstreams[2].Title != "notes" {
		t.Errorf("upstreams = %+v", got.Upstreams)
	}
	if !strings.Contains(body, `"last_error":"unavailable: store \"prompts\": gone"`) {
		t.Errorf("upstreams = %+v", got.Upstreams)
	}
}

// A gateway whose upstream is down is still alive: /livez, which a load
// balancer checks, answers 200 where /healthz answers 503.
func TestLivez(t *testing.T) {
	down := toolkit.ConnectorState{Namespace: "b", Status: toolkit.StatusReconnecting}
	mux := http.NewServeMux()
	mountHealth(mux, healthHandler(func() []toolkit.ConnectorState { return []toolkit.ConnectorState{down} }))
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
