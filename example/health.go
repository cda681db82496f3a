package main

import (
	"encoding/json"
	"net/http"

	"github.com/llmkit/toolkit"
)

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
func healthHandler(states func() []toolkit.ConnectorState) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			w.Header().Set("Allow", "GET, HEAD")
			http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
			return
		}
		report := healthReport{Status: "ok", Upstreams: states()}
		if report.Upstreams == nil {
			report.Upstreams = []toolkit.ConnectorState{}
		}
		for i := range report.Upstreams {
			// Tokens in a URL's query (a stdio server's env=...) stay private.
			report.Upstreams[i].URL = toolkit.RedactURL(report.Upstreams[i].URL)
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
