package scaleout

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"regexp"
	"strings"
	"testing"

	"github.com/llmkit/toolkit/internal/testing/testserver"
)

// TestFleetInputReplay: a relayed input round of 2026-07-28 — the
// upstream's input-required result, sealed in the gateway's requestState —
// answered on replica A is refused when the same retry is replayed on B and
// C: the replicas share the keys and a replay set on Redis, so the upstream
// runs the answered round once. The round starts through haproxy; the
// retries go to the replicas directly.
func TestFleetInputReplay(t *testing.T) {
	f := startFleet(t, fleetOptions{shared: true, upstreamMode: testserver.Stateless})
	ctx := t.Context()
	hc := newHTTPClient(t)
	for round := range len(f.replicas) {
		status, body := postInput(ctx, t, hc, f.url, "")
		m := requestStateRE.FindStringSubmatch(body)
		if status != http.StatusOK || m == nil || !strings.Contains(body, `"u":{"method":"elicitation/create"`) {
			t.Fatalf("first round: %d %s", status, body)
		}
		state := m[1]
		// Each round is answered on another replica, replayed on the two
		// others.
		for k := range f.replicas {
			r := f.replicas[(round+k)%len(f.replicas)]
			status, body := postInput(ctx, t, hc, "http://"+r.addr+"/mcp", state)
			switch {
			case k == 0 && (status != http.StatusOK || !strings.Contains(body, "user: Ada")):
				t.Errorf("round %d, the retry on %s: %d %s", round, r.name, status, body)
			case k > 0 && (status != http.StatusBadRequest || !strings.Contains(body, `"code":-32602`) || !strings.Contains(body, "answered already")):
				t.Errorf("round %d, the replay on %s: %d %s, want it refused as answered already", round, r.name, status, body)
			}
		}
		if n := f.executed.Load(); n != int64(round+1) {
			t.Errorf("after round %d the upstream answered %d rounds, want %d", round, n, round+1)
		}
	}
	f.checkAlive(t)
}

// requestStateRE finds the requestState of an input-required result.
var requestStateRE = regexp.MustCompile(`"requestState":"([^"]+)"`)

// postInput posts, as a raw 2026-07-28 client, a tools/call of ask_user to
// url: the first round when state is empty, else the retry with state and
// the user's answer. It returns the status and the body.
func postInput(ctx context.Context, t *testing.T, hc *http.Client, url, state string) (int, string) {
	t.Helper()
	extra := ""
	if state != "" {
		extra = fmt.Sprintf(`"requestState":%q,"inputResponses":{"u":{"action":"accept","content":{"name":"Ada"}}},`, state)
	}
	body := fmt.Sprintf(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"ask_user","arguments":{},%s`+
		`"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"raw","version":"1"},`+
		`"io.modelcontextprotocol/clientCapabilities":{"elicitation":{"form":{}}}}}}`, extra)
	ctx, cancel := context.WithTimeout(ctx, callTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range map[string]string{"Content-Type": "application/json", "Accept": "application/json, text/event-stream",
		"Mcp-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/call", "Mcp-Name": "ask_user"} {
		req.Header.Set(k, v)
	}
	resp, err := hc.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, string(b)
}
