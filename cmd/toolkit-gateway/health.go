package main

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"path"
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
	// Upstreams are the connectors in toolkit.Connectors' order (the user
	// namespace last).
	Upstreams []upstreamHealth `json:"upstreams"`
	// State is the fleet's shared state: "ok", or "unavailable" when
	// Redis does not answer (the status is then "degraded"). Absent
	// without a state section.
	State string `json:"state,omitempty"`
}

// healthSource is what the health endpoint reports on.
type healthSource struct {
	// states are the upstreams' states.
	states func() []toolkit.ConnectorState
	// sessions, if set, counts the client sessions of an upstream by URL
	// (nil for a shared one).
	sessions func(url string) *upstreamSessions
	// state, if set, checks the shared state (Redis answers).
	state func(context.Context) error
}

// upstreamHealth is what the health endpoint says of one upstream: its
// name, its state and its URL, redacted. Nothing else: the endpoint is
// open to anyone who can reach it, so what a server says of itself
// (instructions, titles), its errors and the host's paths stay in the log.
type upstreamHealth struct {
	Namespace string `json:"namespace"`
	Status    string `json:"status"`
	URL       string `json:"url"`
	// ClientSessions counts the upstream sessions of clients of a
	// per_client upstream: open now, and opened since the gateway
	// started. Absent for a shared upstream.
	ClientSessions *upstreamSessions `json:"client_sessions,omitempty"`
}

// healthHandler serves the state of every upstream, and of the shared
// state, as JSON, with status 200 when all of them are ready and 503
// otherwise, so that a load balancer or an orchestrator can act on it.
func healthHandler(src healthSource) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !readOnly(w, r) {
			return
		}
		report := healthReport{Status: "ok", Upstreams: []upstreamHealth{}}
		code := http.StatusOK
		for _, st := range src.states() {
			uh := upstreamHealth{
				Namespace: st.Namespace,
				Status:    st.Status.String(),
				URL:       healthURL(st.URL),
			}
			if src.sessions != nil {
				uh.ClientSessions = src.sessions(st.URL)
			}
			report.Upstreams = append(report.Upstreams, uh)
			if st.Status != toolkit.StatusReady {
				report.Status, code = "degraded", http.StatusServiceUnavailable
			}
		}
		if src.state != nil {
			report.State = "ok"
			if err := src.state(r.Context()); err != nil {
				report.State, report.Status, code = "unavailable", "degraded", http.StatusServiceUnavailable
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

// healthURL is an upstream's URL as the health endpoint shows it: without
// secrets (toolkit.RedactURL) and, for a command, with the command's base
// name only: where programs live on the host is the host's business.
func healthURL(raw string) string {
	u := toolkit.RedactURL(raw)
	if cmd, ok := strings.CutPrefix(u, "stdio:"); ok {
		return "stdio:" + path.Base(cmd)
	}
	return u
}
