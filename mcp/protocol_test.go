package mcp

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"syscall"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/llmkit/toolkit"
	"github.com/llmkit/toolkit/internal/testing/testserver"
)

// The protocol version a connector reports is the one negotiated, which is
// not always the one asked for. With go-sdk v1.8.0 servers:
//
//   - in memory, over stdio and over stateless streamable HTTP, either
//     version asked for is granted;
//   - a stateful streamable HTTP server speaks 2026-07-28 only without
//     sessions: it refuses the client's server/discover, and the client
//     falls back to initialize and 2025-11-25;
//   - the legacy SSE transport (at /sse, or reached by falling back from
//     streamable HTTP) gives 2025-11-25;
//   - a server that speaks only 2025-11-25 gives it, whatever the
//     transport, and its lost session is noticed at once (but over
//     stateless HTTP, which has none).
//
// The same version is negotiated again after a reconnection. (A restart of
// a stateless HTTP server speaking 2025-11-25 goes unnoticed: there is no
// session and no open stream to lose, so nothing needs reconnecting.)
func TestNegotiatedProtocolVersion(t *testing.T) {
	const (
		d = StatefulProtocolVersion
		s = StatelessProtocolVersion
	)
	type restartFunc func(t *testing.T)
	type setup func(t *testing.T, srv *testserver.Server) (url string, opts []Option, restart restartFunc)
	httpSetup := func(mode testserver.Mode, sseURL bool) setup {
		return func(t *testing.T, srv *testserver.Server) (string, []Option, restartFunc) {
			h := testserver.ServeHTTP(t, srv.Server, mode)
			url := h.URL
			if sseURL {
				url = h.SSEURL
			}
			return url, nil, func(t *testing.T) { h.Kill(); mustNotErr(t, h.Start()) }
		}
	}
	memory := func(t *testing.T, srv *testserver.Server) (string, []Option, restartFunc) {
		m := testserver.NewMemory(srv.Server)
		t.Cleanup(m.Close)
		return "memory://v", []Option{OptDialer(m.Dial)}, func(*testing.T) { m.Drop() }
	}
	var r *running // the connector of the stdio case, to find its child
	stdio := func(t *testing.T, srv *testserver.Server) (string, []Option, restartFunc) {
		childCheck(t)
		return stdioURL(t, testserver.StdioServe), nil, func(t *testing.T) {
			mustNotErr(t, syscall.Kill(serverPids(t, r)[0], syscall.SIGKILL))
		}
	}
	cases := []struct {
		name        string
		setup       setup
		asked, want string
		unnoticed   bool // the restart may go unnoticed: no reconnection to wait for
		old         bool // the server speaks only StatefulProtocolVersion
	}{
		// A server of the initialize handshake only: the connector falls
		// back to it, and a lost session is noticed at once.
		{"memory-initialize-only", memory, s, d, false, true},
		{"stateful-initialize-only", httpSetup(testserver.Stateful, false), s, d, false, true},
		{"stateless-initialize-only", httpSetup(testserver.Stateless, false), s, d, true, true},
		{"memory", memory, d, d, false, false},
		{"memory", memory, s, s, false, false},
		{"stdio", stdio, d, d, false, false},
		{"stdio", stdio, s, s, false, false},
		{"stateless", httpSetup(testserver.Stateless, false), d, d, true, false},
		{"stateless", httpSetup(testserver.Stateless, false), s, s, false, false},
		{"stateful", httpSetup(testserver.Stateful, false), d, d, false, false},
		{"stateful", httpSetup(testserver.Stateful, false), s, d, false, false},
		{"sse", httpSetup(testserver.SSE, true), d, d, false, false},
		{"sse", httpSetup(testserver.SSE, true), s, d, false, false},
		{"sse-fallback", httpSetup(testserver.SSE, false), d, d, false, false},
		{"sse-fallback", httpSetup(testserver.SSE, false), s, d, false, false},
	}
	for _, tc := range cases {
		t.Run(tc.name+"/asked-"+tc.asked, func(t *testing.T) {
			leakCheck(t)
			o := testserver.Options{}
			if tc.old {
				o = initializeOnly()
			}
			srv := newServer(t, o)
			url, opts, restart := tc.setup(t, srv)
			r = start(t, url, false, append(opts, fastBackoff, OptProtocolVersion(tc.asked))...)
			if got := r.State().ProtocolVersion; got != tc.want {
				t.Errorf("negotiated %q, want %q", got, tc.want)
			}
			restart(t)
			if !tc.unnoticed {
				r.states.wait(t, toolkit.StatusReady, 2)
			}
			out, err := call(t, context.Background(), r.Connector, "echo", `{"text":"v"}`)
			mustNotErr(t, err)
			if read(t, out) != "v" {
				t.Error("echo after the restart failed")
			}
			if got := r.State().ProtocolVersion; got != tc.want {
				t.Errorf("after the restart: %q, want %q", got, tc.want)
			}
			mustNotErr(t, r.stop(t))
		})
	}
}

// listCounter counts the list requests a server receives, by method, and
// those that carry a cursor (a page after the first).
type listCounter struct {
	mu              sync.Mutex
	calls, cursored map[string]int
}

func countLists(s *testserver.Server) *listCounter {
	lc := &listCounter{calls: map[string]int{}, cursored: map[string]int{}}
	s.AddReceivingMiddleware(func(next sdk.MethodHandler) sdk.MethodHandler {
		return func(ctx context.Context, method string, req sdk.Request) (sdk.Result, error) {
			cursor := ""
			switch p := req.GetParams().(type) {
			case *sdk.ListPromptsParams:
				cursor = p.Cursor
			case *sdk.ListResourcesParams:
				cursor = p.Cursor
			case *sdk.ListToolsParams:
				cursor = p.Cursor
			default:
				return next(ctx, method, req)
			}
			lc.mu.Lock()
			lc.calls[method]++
			if cursor != "" {
				lc.cursored[method]++
			}
			lc.mu.Unlock()
			return next(ctx, method, req)
		}
	})
	return lc
}

func (lc *listCounter) get(method string) (calls, cursored int) {
	lc.mu.Lock()
	defer lc.mu.Unlock()
	return lc.calls[method], lc.cursored[method]
}

// addPages gives the test server n more prompts and n more resources.
func addPages(s *testserver.Server, from, n int) {
	for i := from; i < from+n; i++ {
		name := fmt.Sprintf("p%d", i)
		s.AddPrompt(&sdk.Prompt{Name: name, Description: "extra"}, func(context.Context, *sdk.GetPromptRequest) (*sdk.GetPromptResult, error) {
			return &sdk.GetPromptResult{Messages: []*sdk.PromptMessage{{Role: "user", Content: &sdk.TextContent{Text: name}}}}, nil
		})
		uri := fmt.Sprintf("test://r%d", i)
		s.AddResource(&sdk.Resource{URI: uri, Name: fmt.Sprintf("r%d", i), MIMEType: "text/plain"}, func(context.Context, *sdk.ReadResourceRequest) (*sdk.ReadResourceResult, error) {
			return &sdk.ReadResourceResult{Contents: []*sdk.ResourceContents{{URI: uri, MIMEType: "text/plain", Text: "content of " + uri}}}, nil
		})
	}
}

// Prompts and resources spanning several pages are listed whole, over
// every transport, and the items of the last page work.
func TestPromptAndResourcePagination(t *testing.T) {
	for _, tc := range transportCases() {
		t.Run(tc.name+"/"+tc.protocol, func(t *testing.T) {
			leakCheck(t)
			s := newServer(t, testserver.Options{PageSize: 2})
			addPages(s, 1, 4) // 5 prompts, 6 resources: 3 pages each
			lc := countLists(s)
			url, opts := tc.setup(t, s)
			r := start(t, url, false, append(opts, OptProtocolVersion(tc.protocol))...)
			ctx := context.Background()
			checkPaged(t, r, lc, 5, 6)

			// Sorted by name, p4 is alone on the third page.
			var last *remotePrompt
			for _, p := range mustList(r.ListPrompts(ctx)) {
				if p.Name() == "p4" {
					last = p.(*remotePrompt)
				}
			}
			if last == nil {
				t.Fatal("no prompt p4")
			}
			rendered, err := last.Render(ctx, nil)
			mustNotErr(t, err)
			if len(rendered.Messages) != 1 || read(t, rendered.Messages[0].Content) != last.Name() {
				t.Errorf("prompt %s of the last page rendered %+v", last.Name(), rendered)
			}
			// Sorted by URI, test://r4 is on the third page.
			for _, x := range mustList(r.ListResources(ctx)) {
				if x.URI() == "test://r4" {
					if got := read(t, x); got != "content of test://r4" {
						t.Errorf("resource test://r4 reads %q", got)
					}
				}
			}
		})
	}
}

// checkPaged checks that the connector lists nPrompts prompts and nRes
// resources, each got over ceil(n/2) pages.
func checkPaged(t *testing.T, r *running, lc *listCounter, nPrompts, nRes int) {
	t.Helper()
	ctx := context.Background()
	var names []string
	for _, p := range mustList(r.ListPrompts(ctx)) {
		names = append(names, p.Name())
	}
	want := []string{"greet"}
	for i := 1; i < nPrompts; i++ {
		want = append(want, fmt.Sprintf("p%d", i))
	}
	slices.Sort(names)
	slices.Sort(want)
	if !slices.Equal(names, want) {
		t.Errorf("prompts %q, want %q", names, want)
	}
	var uris []string
	for _, x := range mustList(r.ListResources(ctx)) {
		uris = append(uris, x.URI())
	}
	if len(uris) != nRes || !slices.Contains(uris, testserver.TextURI) || !slices.Contains(uris, fmt.Sprintf("test://r%d", nRes-2)) {
		t.Errorf("resources %q, want %d", uris, nRes)
	}
	for method, n := range map[string]int{"prompts/list": nPrompts, "resources/list": nRes} {
		pages := (n + 1) / 2
		calls, cursored := lc.get(method)
		if calls != pages || cursored != pages-1 {
			t.Errorf("%s: %d requests (%d with a cursor) for %d items in pages of 2, want %d (%d)", method, calls, cursored, n, pages, pages-1)
		}
	}
}

// A list change re-lists every page of the kind that changed.
func TestPaginatedRefresh(t *testing.T) {
	for _, protocol := range []string{StatefulProtocolVersion, StatelessProtocolVersion} {
		t.Run(protocol, func(t *testing.T) {
			leakCheck(t)
			s := newServer(t, testserver.Options{PageSize: 2})
			addPages(s, 1, 2) // 3 prompts, 4 resources
			lc := countLists(s)
			m := testserver.NewMemory(s.Server)
			t.Cleanup(m.Close)
			refreshed := make(chan uint32, 10)
			r := start(t, "memory://pages", false, OptDialer(m.Dial), OptProtocolVersion(protocol),
				withAfterRefresh(func(kinds uint32, err error) {
					if err != nil {
						t.Errorf("refresh: %v", err)
					}
					refreshed <- kinds
				}))
			checkPaged(t, r, lc, 3, 4)
			addPages(s, 3, 2) // 5 prompts, 6 resources
			var got uint32
			for got&(sigPrompts|sigResources) != sigPrompts|sigResources {
				select {
				case k := <-refreshed:
					got |= k
				case <-time.After(waitLimit):
					t.Fatalf("refreshed kinds %b", got)
				}
			}
			// The server notifies once per addition: the counts are those
			// of the first listing plus every refresh.
			pc, _ := lc.get("prompts/list")
			rc, _ := lc.get("resources/list")
			if pc < 2+3 || rc < 2+3 {
				t.Errorf("%d prompt and %d resource list requests after the change", pc, rc)
			}
			ctx := context.Background()
			if n := len(mustList(r.ListPrompts(ctx))); n != 5 {
				t.Errorf("%d prompts after the change, want 5", n)
			}
			if n := len(mustList(r.ListResources(ctx))); n != 6 {
				t.Errorf("%d resources after the change, want 6", n)
			}
		})
	}
}
