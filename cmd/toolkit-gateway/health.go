package main

import (
	"encoding/json"
	"io"
	"net/http"
	"path/filepath"
	"strings"

	"github.com/llmkit/toolkit"
)

// mountHealth mounts the health endpoints on mux: /healthz, the state of
// every upstream (health), and /livez, which answers 200 while the gateway
// serves: what a load balancer in front of several replicas checks, since
// an upstream they share being down takes no replica out of service.
func mountHealth(mux *http.ServeMux, health http.Handler) {
	mux.Handle("/healthz", health)
	mux.Handle("/livez", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !readOnly(w, r) {
			return
		}
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		w.Header().Set("Cache-Control", "no-store")
		_, _ = io.WriteString(w, "ok\n")
	}))
}

// readOnly answers 405 to a request that is neither GET nor HEAD and
// reports whether r is one.
func readOnly(w http.ResponseWriter, r *http.Request) bool {
	if r.Method == http.MethodGet || r.Method == http.MethodHead {
		return true
	}
	w.Header().Set("Allow", "GET, HEAD")
	http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
	return false
}

// reservedPaths are the paths the gateway serves besides the MCP endpoints.
var reservedPaths = []string{"/healthz", "/livez", "/metrics"}

// healthReport is the body of the health endpoint.
type healthReport struct {
	// Status is "ok" when every upstream is ready, "degraded" otherwise.
	Status string `json:"status"`
	// Upstreams are the connectors' states, as toolkit.Connectors reports
	// them (the user namespace last), their URLs redacted.
	Upstreams []toolkit.ConnectorState `json:"upstreams"`
}

// healthHandler serves the state of every upstream as JSON, with status
// 200 when all of them are ready and 503 otherwise, so that a load
// balancer or an orchestrator can act on it.
//
// The report is for anyone who can reach the endpoint, so it hides what
// describes the host rather than the upstreams: secrets in URLs, and the
// paths in private (the prompts directory, which the store gives as its
// title and names in its errors), each shown as its base name.
func healthHandler(states func() []toolkit.ConnectorState, private ...string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !readOnly(w, r) {
			return
		}
		report := healthReport{Status: "ok", Upstreams: states()}
		if report.Upstreams == nil {
			report.Upstreams = []toolkit.ConnectorState{}
		}
		for i := range report.Upstreams {
			report.Upstreams[i] = redactState(report.Upstreams[i], private)
		}
		code := http.StatusOK
		for _, st := range report.Upstreams {
			if st.Status != toolkit.StatusReady {
				report.Status, code = "degraded", http.StatusServiceUnavailable
			}
		}
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Cache-Control", "no-store")
		w.WriteHeader(code)
		if r.Method == http.MethodGet {
			_ = json.NewEncoder(w).Encode(report)
		}
	})
}

// redactState returns st as the health endpoint shows it.
func redactState(st toolkit.ConnectorState, private []string) toolkit.ConnectorState {
	// Tokens in a URL's query (a stdio server's env=...) stay private.
	st.URL = toolkit.RedactURL(st.URL)
	hide := func(s string) string {
		for _, p := range private {
			if p != "" && p != string(filepath.Separator) {
				s = strings.ReplaceAll(s, p, filepath.Base(p))
			}
		}
		return s
	}
	st.Title, st.LastError, st.Instructions = hide(st.Title), hide(st.LastError), hide(st.Instructions)
	// Whatever directory serves the user namespace, its path is the
	// host's business.
	if st.Namespace == toolkit.UserNamespace && filepath.IsAbs(st.Title) {
		st.Title = filepath.Base(st.Title)
	}
	return st
}
