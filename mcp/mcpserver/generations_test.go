package mcpserver

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/llmkit/toolkit"
)

// connectHTTPVersion connects a go-sdk client to url asking for version
// ("" for the SDK's default, 2026-07-28).
func connectHTTPVersion(t *testing.T, url, version string, copts *sdk.ClientOptions) (*sdk.ClientSession, error) {
	t.Helper()
	c := sdk.NewClient(&sdk.Implementation{Name: "http-client", Version: "1"}, copts)
	cs, err := c.Connect(context.Background(), &sdk.StreamableClientTransport{Endpoint: url, MaxRetries: -1}, &sdk.ClientSessionOptions{ProtocolVersion: version})
	if err == nil {
		t.Cleanup(func() { cs.Close() })
	}
	return cs, err
}

// The stateful handler serves both generations on one endpoint: a client
// asking for 2026-07-28 (the go-sdk's default) gets it, without a session,
// and one asking for 2025-11-25 its session, as before; server/discover
// advertises what initialize does; both list, call and hear of a list
// change.
func TestBothGenerations(t *testing.T) {
	leakCheck(t)
	f := newFixture(t, []toolkit.Option{toolkit.WithTool(
		funcTool("hello", func(ctx context.Context, _ json.RawMessage) (any, error) {
			return "hello " + toolkit.SessionFromContext(ctx).ClientInfo().Name, nil
		}),
	)})
	ts := f.serveHTTP(t)
	type client struct {
		cs      *sdk.ClientSession
		changes chan struct{}
	}
	var clients []client
	for _, tc := range []struct{ asked, want string }{{"", "2026-07-28"}, {"2025-11-25", "2025-11-25"}} {
		changes := make(chan struct{}, 8)
		cs, err := connectHTTPVersion(t, ts.URL, tc.asked, &sdk.ClientOptions{
			ToolListChangedHandler: func(context.Context, *sdk.ToolListChangedRequest) { changes <- struct{}{} },
		})
		mustNotErr(t, err)
		init := cs.InitializeResult()
		if init.ProtocolVersion != tc.want {
			t.Errorf("asked %q: negotiated %q, want %q", tc.asked, init.ProtocolVersion, tc.want)
		}
		if stateless := tc.want >= statelessVersion; stateless != (cs.ID() == "") {
			t.Errorf("%s: session ID %q", tc.want, cs.ID())
		}
		if init.ServerInfo == nil || init.ServerInfo.Name != "test-server" {
			t.Errorf("%s: server info %+v", tc.want, init.ServerInfo)
		}
		clients = append(clients, client{cs, changes})
	}
	// Discover tells what initialize tells.
	if a, b := clients[0].cs.InitializeResult().Capabilities, clients[1].cs.InitializeResult().Capabilities; !reflect.DeepEqual(a, b) {
		t.Errorf("server/discover capabilities %s, initialize's %s", jsonOf(t, a), jsonOf(t, b))
	}
	ctx := context.Background()
	for _, c := range clients {
		res, err := c.cs.CallTool(ctx, &sdk.CallToolParams{Name: "hello"})
		mustNotErr(t, err)
		if res.IsError || resultText(t, res) != "hello http-client" {
			t.Errorf("call: %s", jsonOf(t, res.Content))
		}
	}
	mustNotErr(t, f.tk.AddTool(funcTool("later", func(context.Context, json.RawMessage) (any, error) { return "", nil })))
	for _, c := range clients {
		<-c.changes // both hear of it: subscriptions/listen and the session's stream
		tools, err := c.cs.ListTools(ctx, nil)
		mustNotErr(t, err)
		if len(tools.Tools) != 2 {
			t.Errorf("%s: %d tools after the change", c.cs.InitializeResult().ProtocolVersion, len(tools.Tools))
		}
	}
}

// postRaw posts one JSON-RPC message to url with the given headers and
// returns the status and body of the answer.
func postRaw(t *testing.T, url string, header map[string]string, body string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	mustNotErr(t, err)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	for k, v := range header {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	mustNotErr(t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	mustNotErr(t, err)
	return resp.StatusCode, string(b)
}

// Requests of 2026-07-28 whose Mcp-Method or Mcp-Name header is missing or
// differs from the body are refused with 400 and the spec's code
// (-32020, header mismatch), on the stateful endpoint and the stateless
// one; lists carry ttlMs 0 and a private cacheScope.
func TestStatelessHeaders(t *testing.T) {
	leakCheck(t)
	f := newFixture(t, []toolkit.Option{toolkit.WithTool(
		funcTool("hello", func(context.Context, json.RawMessage) (any, error) { return "hi", nil }),
	)})
	meta := `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"raw","version":"1"},"io.modelcontextprotocol/clientCapabilities":{}}`
	call := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"hello","arguments":{},` + meta + `}}`
	list := `{"jsonrpc":"2.0","id":2,"method":"tools/list","params":{` + meta + `}}`
	for _, mode := range []struct {
		name string
		opts []HTTPOption
	}{{"stateful", nil}, {"stateless", []HTTPOption{WithStateless()}}} {
		t.Run(mode.name, func(t *testing.T) {
			ts := f.serveHTTP(t, mode.opts...)
			h := func(method, name string) map[string]string {
				m := map[string]string{"Mcp-Protocol-Version": "2026-07-28"}
				if method != "" {
					m["Mcp-Method"] = method
				}
				if name != "" {
					m["Mcp-Name"] = name
				}
				return m
			}
			for _, tc := range []struct {
				what   string
				header map[string]string
				body   string
				status int
				want   string
			}{
				{"no Mcp-Method", h("", "hello"), call, 400, `"code":-32020`},
				{"other Mcp-Method", h("tools/list", "hello"), call, 400, `"code":-32020`},
				{"no Mcp-Name", h("tools/call", ""), call, 400, `"code":-32020`},
				{"other Mcp-Name", h("tools/call", "other"), call, 400, `"code":-32020`},
				{"right headers", h("tools/call", "hello"), call, 200, `"text":"hi"`},
				{"list", h("tools/list", ""), list, 200, `"cacheScope":"private"`},
			} {
				status, body := postRaw(t, ts.URL, tc.header, tc.body)
				if status != tc.status || !strings.Contains(body, tc.want) {
					t.Errorf("%s: %d %s, want %d with %s", tc.what, status, body, tc.status, tc.want)
				}
				if tc.what == "list" && !strings.Contains(body, `"ttlMs":0`) {
					t.Errorf("list: %s, want ttlMs 0", body)
				}
			}
		})
	}
}

// WithMaxSessions bounds the sessions of 2025-11-25 clients and the
// subscriptions/listen streams of 2026-07-28 clients together: at the
// ceiling neither more kind gets in, and a client that leaves frees its
// slot.
func TestBothGenerationsCeiling(t *testing.T) {
	leakCheck(t)
	f := newFixture(t, []toolkit.Option{toolkit.WithTool(
		funcTool("hello", func(context.Context, json.RawMessage) (any, error) { return "hi", nil }),
	)})
	ts := f.serveHTTP(t, WithMaxSessions(1))
	listening := &sdk.ClientOptions{ToolListChangedHandler: func(context.Context, *sdk.ToolListChangedRequest) {}}
	first, err := connectHTTPVersion(t, ts.URL, "", listening) // holds the slot with its listen stream
	mustNotErr(t, err)
	// The go-sdk's client does not fail Connect when its listen stream is
	// refused: post one by hand.
	listen := `{"jsonrpc":"2.0","id":1,"method":"subscriptions/listen","params":{"notifications":{"toolsListChanged":true},` +
		`"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`
	if status, body := postRaw(t, ts.URL, map[string]string{"Mcp-Protocol-Version": "2026-07-28", "Mcp-Method": "subscriptions/listen"}, listen); status != http.StatusServiceUnavailable {
		t.Errorf("a second listen stream at the ceiling: %d %s", status, body)
	}
	if _, err := connectHTTPVersion(t, ts.URL, "2025-11-25", nil); err == nil {
		t.Error("a 2025-11-25 session at the ceiling was opened")
	}
	// A 2026-07-28 client that does not listen holds no slot.
	quiet, err := connectHTTPVersion(t, ts.URL, "", nil)
	mustNotErr(t, err)
	if _, err := quiet.CallTool(context.Background(), &sdk.CallToolParams{Name: "hello"}); err != nil {
		t.Errorf("a call at the ceiling: %v", err)
	}
	// The slot is given back when the server sees the listen request end,
	// after Close returns: try again until then.
	mustNotErr(t, first.Close())
	deadline := time.Now().Add(waitLimit)
	for {
		cs, err := connectHTTPVersion(t, ts.URL, "2025-11-25", nil)
		if err == nil {
			mustNotErr(t, cs.Close())
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("after the listening client left: %v", err)
		}
	}
}

// BenchmarkGenerationsCall measures one tools/call over loopback HTTP on
// the stateful endpoint, by a go-sdk client of each generation: in a
// session (2025-11-25), and without one (2026-07-28: the version,
// client info and capabilities in each request, a server session made
// for each request), each beside a plain go-sdk server.
func BenchmarkGenerationsCall(b *testing.B) {
	tk, err := toolkit.New(toolkit.WithTool(funcTool("hello", func(context.Context, json.RawMessage) (any, error) { return "hi", nil })))
	if err != nil {
		b.Fatal(err)
	}
	srv, err := New(tk, nil)
	if err != nil {
		b.Fatal(err)
	}
	defer srv.Close()
	h, err := srv.Handler()
	if err != nil {
		b.Fatal(err)
	}
	ts := httptest.NewServer(h)
	defer ts.Close()
	// The baselines: a plain go-sdk server of the same tool, stateful for
	// 2025-11-25, stateless for 2026-07-28 (its stateful handler refuses
	// that version).
	plain := sdk.NewServer(&sdk.Implementation{Name: "plain", Version: "1"}, nil)
	plain.AddTool(&sdk.Tool{Name: "hello", InputSchema: map[string]any{"type": "object"}}, func(context.Context, *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
		return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "hi"}}}, nil
	})
	plainURL := map[bool]string{}
	for _, stateless := range []bool{false, true} {
		pts := httptest.NewServer(sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return plain }, &sdk.StreamableHTTPOptions{Stateless: stateless}))
		defer pts.Close()
		plainURL[stateless] = pts.URL
	}
	for _, bc := range []struct{ name, url, version string }{
		{"toolkit/2025-11-25", ts.URL, "2025-11-25"},
		{"toolkit/2026-07-28", ts.URL, "2026-07-28"},
		{"sdk/2025-11-25", plainURL[false], "2025-11-25"},
		{"sdk/2026-07-28", plainURL[true], "2026-07-28"},
	} {
		b.Run(bc.name, func(b *testing.B) {
			c := sdk.NewClient(&sdk.Implementation{Name: "bench", Version: "1"}, nil)
			cs, err := c.Connect(context.Background(), &sdk.StreamableClientTransport{Endpoint: bc.url, MaxRetries: -1}, &sdk.ClientSessionOptions{ProtocolVersion: bc.version})
			if err != nil {
				b.Fatal(err)
			}
			defer cs.Close()
			if got := cs.InitializeResult().ProtocolVersion; got != bc.version {
				b.Fatalf("negotiated %s", got)
			}
			b.ReportAllocs()
			for b.Loop() {
				if res, err := cs.CallTool(context.Background(), &sdk.CallToolParams{Name: "hello"}); err != nil || res.IsError {
					b.Fatal(err, res)
				}
			}
		})
	}
}
