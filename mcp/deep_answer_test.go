package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/llmkit/toolkit"
	"github.com/llmkit/toolkit/internal/testing/testserver"
	"github.com/llmkit/toolkit/mcp/internal/wire/wiretest"
)

// A call whose answer nests 2,000 levels deep (past the go-sdk's limit of
// 1,000) over streamable HTTP, as JSON or on an event stream, fails alone
// with an error that says why, is not repeated, and the session stays:
// the next call goes through without a reconnection. Before, the go-sdk
// closed the session, cutting every request in flight, and the connector
// repeated the (read-only) call on a new session, which broke that one
// too.
func TestDeepCallAnswerFailsAlone(t *testing.T) {
	for _, stream := range []bool{false, true} {
		name := "json"
		if stream {
			name = "sse"
		}
		t.Run(name, func(t *testing.T) {
			leakCheck(t)
			h := testserver.ServeHTTP(t, newServer(t, testserver.Options{}).Server, testserver.Stateful)
			var deepCalls atomic.Int32
			h.Intercept(func(w http.ResponseWriter, r *http.Request) bool {
				if r.Method != http.MethodPost {
					return false
				}
				body, err := io.ReadAll(r.Body)
				if err != nil {
					return false
				}
				r.Body = io.NopCloser(strings.NewReader(string(body)))
				var req struct {
					ID     json.RawMessage `json:"id"`
					Method string          `json:"method"`
				}
				if json.Unmarshal(body, &req) != nil || req.Method != "tools/call" || !strings.Contains(string(body), "deep") {
					return false
				}
				deepCalls.Add(1)
				answer := fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"result":{"content":[{"type":"text","text":"x"}],"structuredContent":%s}}`, req.ID, wiretest.DeepJSON(2000))
				if stream {
					w.Header().Set("Content-Type", "text/event-stream")
					fmt.Fprintf(w, "event: message\ndata: %s\n\n", answer)
					return true
				}
				w.Header().Set("Content-Type", "application/json")
				io.WriteString(w, answer)
				return true
			})
			r := start(t, h.URL, false)
			ctx := context.Background()
			_, err := call(t, ctx, r.Connector, "echo", `{"text":"deep"}`)
			if !errors.Is(err, toolkit.ErrToolFailed) || !strings.Contains(err.Error(), "nests more than 512 levels deep") {
				t.Errorf("deep answer: %v, want ErrToolFailed saying it nests too deep", err)
			}
			if n := deepCalls.Load(); n != 1 {
				t.Errorf("the call was sent %d times, want 1", n)
			}
			out, err := call(t, ctx, r.Connector, "echo", `{"text":"fine"}`)
			mustNotErr(t, err)
			if got := read(t, out); got != "fine" {
				t.Errorf("next call: %q", got)
			}
			if n := r.states.count(toolkit.StatusReady); n != 1 {
				t.Errorf("the connector was ready %d times (%s), want once", n, r.states.statuses())
			}
			mustNotErr(t, r.stop(t))
		})
	}
}

// Over stdio, legacy SSE and an OptDialer's transport every message is
// clamped before the go-sdk decodes it: a call whose structured content
// nests 2,000 levels deep fails alone with the same error, and the
// session stays. Before, the call returned the clamped value as if it were
// the server's.
func TestDeepStructuredContentFailsAlone(t *testing.T) {
	leakCheck(t)
	raw := &testserver.Raw{Handle: func(req testserver.RawRequest) [][]byte {
		switch req.Method {
		case "initialize":
			return [][]byte{testserver.Initialize(req, "deep")}
		case "tools/list":
			return [][]byte{testserver.RawResult(req, `{"tools":[{"name":"deep","inputSchema":{"type":"object"}},{"name":"fine","inputSchema":{"type":"object"}}]}`)}
		case "tools/call":
			if strings.Contains(string(req.Params), `"deep"`) {
				return [][]byte{testserver.RawResult(req, `{"content":[],"structuredContent":`+wiretest.DeepJSON(2000)+`}`)}
			}
			return [][]byte{testserver.RawResult(req, `{"content":[{"type":"text","text":"fine"}]}`)}
		case "prompts/list", "resources/list", "resources/templates/list":
			return [][]byte{testserver.Result(req, map[string]any{})}
		}
		if len(req.ID) > 0 {
			return [][]byte{testserver.MethodNotFound(req)}
		}
		return nil
	}}
	t.Cleanup(raw.Close)
	r := start(t, "memory://deep", false, OptDialer(raw.Dial))
	ctx := context.Background()
	_, err := call(t, ctx, r.Connector, "deep", `{}`)
	if !errors.Is(err, toolkit.ErrToolFailed) || !strings.Contains(err.Error(), "nests more than 512 levels deep") {
		t.Errorf("deep answer: %v, want ErrToolFailed saying it nests too deep", err)
	}
	out, err := call(t, ctx, r.Connector, "fine", `{}`)
	mustNotErr(t, err)
	if got := read(t, out); got != "fine" {
		t.Errorf("next call: %q", got)
	}
	if n := r.states.count(toolkit.StatusReady); n != 1 {
		t.Errorf("the connector was ready %d times (%s), want once", n, r.states.statuses())
	}
	mustNotErr(t, r.stop(t))
}
