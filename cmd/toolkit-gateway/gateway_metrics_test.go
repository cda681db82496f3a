//go:build unix

package main

import (
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
)

// TestGatewayMetrics scrapes /metrics after a call through the gateway
// and finds the call, by tool and outcome, in Prometheus text format,
// with the upstream's status and the open client session.
func TestGatewayMetrics(t *testing.T) {
	up := startHeaderRecorder(t)
	config := writeConfig(t, t.TempDir(), fmt.Sprintf(`
listen: 127.0.0.1:0
metrics: true
servers:
  - name: calc
    url: %s
`, up.URL))
	g := startGateway(t, config)
	g.waitLog(t, 0, upstreamReady("calc"))
	rec := g.waitLog(t, 0, func(r map[string]any) bool { return r["msg"] == "serving" })
	url, _ := rec["metrics"].(string)
	if !strings.HasSuffix(url, "/metrics") {
		t.Fatalf("the serving record names no metrics URL: %v", rec)
	}

	cs := connectGatewaySession(t, g)
	var sum addOut
	callJSON(t, cs, "add", map[string]int{"a": 2, "b": 3}, &sum)

	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusOK || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/plain") {
		t.Fatalf("GET /metrics: %d %s", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	text := string(body)
	for _, want := range []string{
		`toolkit_tool_calls_total{`,
		`toolkit_tool_call_duration_seconds_bucket{`,
		`toolkit_connector_status{`,
		`toolkit_mcp_server_sessions{`,
	} {
		if !strings.Contains(text, want) {
			t.Errorf("no %s in /metrics", want)
		}
	}
	if !hasSample(text, "toolkit_tool_calls_total", 1, `toolkit_tool="add"`, `toolkit_namespace="calc"`, `toolkit_outcome="ok"`) {
		t.Errorf("no call of add counted:\n%s", grepLines(text, "toolkit_tool_calls_total"))
	}
	if !hasSample(text, "toolkit_connector_status", 1, `toolkit_namespace="calc"`, `toolkit_status="ready"`) {
		t.Errorf("calc is not ready in the metrics:\n%s", grepLines(text, "toolkit_connector_status"))
	}
	if !hasSample(text, "toolkit_mcp_server_sessions", 1) {
		t.Errorf("the client's session is not counted:\n%s", grepLines(text, "toolkit_mcp_server_sessions"))
	}
}

// hasSample reports whether the Prometheus text holds a sample of metric
// with every one of labels and the value want.
func hasSample(text, metric string, want float64, labels ...string) bool {
	for _, line := range strings.Split(text, "\n") {
		if !strings.HasPrefix(line, metric+"{") {
			continue
		}
		ok := true
		for _, l := range labels {
			ok = ok && strings.Contains(line, l)
		}
		var v float64
		if i := strings.LastIndexByte(line, ' '); ok && i > 0 {
			if _, err := fmt.Sscan(line[i+1:], &v); err == nil && v == want {
				return true
			}
		}
	}
	return false
}

// grepLines returns the lines of text that start with prefix.
func grepLines(text, prefix string) string {
	var out []string
	for _, line := range strings.Split(text, "\n") {
		if strings.HasPrefix(line, prefix) {
			out = append(out, line)
		}
	}
	return strings.Join(out, "\n")
}
