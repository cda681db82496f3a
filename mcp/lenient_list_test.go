package mcp

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/llmkit/toolkit/internal/testing/testserver"
)

// badToolsPage is a tools/list result whose second tool has a name of the
// wrong type: the go-sdk fails to decode the whole page.
const badToolsPage = `{"tools":[{"name":"good","inputSchema":{"type":"object"}},{"name":5,"inputSchema":{"type":"object"}},{"name":"also_good","inputSchema":{"type":"object"},"execution":{"taskSupport":"optional"}}]}`

// One tool of a wrong type in a tools/list page is skipped alone, with the
// page's warning saying why; the server's other tools are listed and the
// connector connects once. Before, the SDK failed the whole page and the
// connector reconnected for ever.
func TestListingSkipsUndecodableTool(t *testing.T) {
	cases := []struct {
		name string
		url  func(t *testing.T) (string, []Option)
	}{
		{"memory", func(t *testing.T) (string, []Option) {
			raw := &testserver.Raw{Handle: func(req testserver.RawRequest) [][]byte {
				switch req.Method {
				case "initialize":
					return [][]byte{testserver.Initialize(req, "bad")}
				case "tools/list":
					return [][]byte{testserver.RawResult(req, badToolsPage)}
				case "prompts/list", "resources/list", "resources/templates/list":
					return [][]byte{testserver.Result(req, map[string]any{})}
				}
				if len(req.ID) > 0 {
					return [][]byte{testserver.MethodNotFound(req)}
				}
				return nil
			}}
			t.Cleanup(raw.Close)
			return "memory://bad", []Option{OptDialer(raw.Dial)}
		}},
	}
	for _, stream := range []bool{false, true} {
		name := "http-json"
		if stream {
			name = "http-sse"
		}
		cases = append(cases, struct {
			name string
			url  func(t *testing.T) (string, []Option)
		}{name, func(t *testing.T) (string, []Option) {
			h := testserver.ServeHTTP(t, newServer(t, testserver.Options{}).Server, testserver.Stateful)
			h.Intercept(answerToolsList(t, badToolsPage, stream))
			return h.URL, nil
		}})
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			leakCheck(t)
			url, opts := tc.url(t)
			logs := newLogCapture()
			r := start(t, url, false, append(opts, OptLogger(slogNew(logs)))...)
			tools, err := r.ListTools(context.Background())
			mustNotErr(t, err)
			var names []string
			for _, tl := range tools {
				names = append(names, tl.Name())
			}
			if strings.Join(names, ",") != "good,also_good" {
				t.Errorf("tools %v, want good and also_good", names)
			}
			if ts, _ := tools[len(tools)-1].(TaskSupporter); ts == nil || ts.TaskSupport() != TaskOptional {
				t.Errorf("also_good lost its task support")
			}
			logs.waitFor(t, "skipping remote items", "skipped=1", "tool 1 of the page does not decode")
			for _, rec := range logs.all() {
				if strings.Contains(rec, "connection attempt failed") {
					t.Errorf("the connector reconnected: %s", rec)
				}
			}
			mustNotErr(t, r.stop(t))
		})
	}
}

// answerToolsList returns an interceptor that answers every tools/list
// POST with result, as JSON or as an event stream.
func answerToolsList(t *testing.T, result string, stream bool) func(http.ResponseWriter, *http.Request) bool {
	return func(w http.ResponseWriter, r *http.Request) bool {
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
		if json.Unmarshal(body, &req) != nil || req.Method != "tools/list" {
			return false
		}
		answer := fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"result":%s}`, req.ID, result)
		if stream {
			w.Header().Set("Content-Type", "text/event-stream")
			fmt.Fprintf(w, "event: message\ndata: %s\n\n", answer)
			return true
		}
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, answer)
		return true
	}
}

// FuzzDecodeToolsPage feeds decodeToolsPage hostile pages: it never
// panics, and every entry is a tool or says why it is not.
func FuzzDecodeToolsPage(f *testing.F) {
	for _, seed := range []string{
		badToolsPage,
		`{"tools":[]}`,
		`{"tools":null,"nextCursor":"x"}`,
		`{"tools":5}`,
		`{"tools":[null,{},[],"x",{"name":{"a":1}}]}`,
		`{"tools":[{"name":"a","inputSchema":` + strings.Repeat("[", 2000) + strings.Repeat("]", 2000) + `}]}`,
		`{"tools":[{"name":"a","annotations":{"readOnlyHint":"yes"}}]}`,
		`[`,
		``,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, page []byte) {
		tools, _, err := decodeToolsPage(page)
		if err != nil {
			return
		}
		for i, lt := range tools {
			if (lt.def == nil) == (lt.undecoded == "") {
				t.Fatalf("entry %d: def %v, undecoded %q", i, lt.def, lt.undecoded)
			}
		}
	})
}
