package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/llmkit/toolkit"
	"github.com/llmkit/toolkit/internal/testing/testserver"
)

// hostile answers with invalid and colliding items, broken results and
// oversized messages.
func hostile(req testserver.RawRequest) [][]byte {
	obj := map[string]any{"type": "object"}
	var params struct {
		Cursor string `json:"cursor"`
		Name   string `json:"name"`
	}
	_ = json.Unmarshal(req.Params, &params)
	switch req.Method {
	case "initialize":
		return [][]byte{testserver.Initialize(req, "hostile")}
	case "ping":
		return [][]byte{testserver.Result(req, map[string]any{})}
	case "tools/list":
		if params.Cursor == "" {
			return [][]byte{testserver.Result(req, map[string]any{
				"nextCursor": "page2",
				"tools": []any{
					map[string]any{"name": "good", "inputSchema": obj},
					map[string]any{"name": "bad name", "inputSchema": obj},
					map[string]any{"name": "", "inputSchema": obj},
					map[string]any{"name": strings.Repeat("a", 200), "inputSchema": obj},
					map[string]any{"name": "dup", "description": "first", "inputSchema": obj},
					map[string]any{"name": "dup", "description": "second", "inputSchema": obj},
					nil,
				},
			})}
		}
		return [][]byte{testserver.Result(req, map[string]any{
			"tools": []any{
				map[string]any{"name": "dotted.name-x", "inputSchema": obj},
				map[string]any{"name": "string_schema", "inputSchema": map[string]any{"type": "string"}},
				map[string]any{"name": "number_schema", "inputSchema": 42},
				map[string]any{"name": "bad_ref", "inputSchema": map[string]any{"type": "object", "$ref": "#/nowhere"}},
				map[string]any{"name": "no_schema"},
				map[string]any{"name": "bad_output", "inputSchema": obj, "outputSchema": map[string]any{"type": "array"}},
				map[string]any{"name": "garbage", "inputSchema": obj},
				map[string]any{"name": "not_json", "inputSchema": obj},
			},
		})}
	case "prompts/list":
		return [][]byte{testserver.Result(req, map[string]any{"prompts": []any{
			map[string]any{"name": "ok", "arguments": []any{map[string]any{"name": "a", "required": true}}},
			map[string]any{"name": "dup_args", "arguments": []any{map[string]any{"name": "a"}, map[string]any{"name": "a"}}},
			map[string]any{"name": "empty_arg", "arguments": []any{map[string]any{"name": ""}}},
			map[string]any{"name": "bad/name"},
		}})}
	case "resources/list":
		return [][]byte{testserver.Result(req, map[string]any{"resources": []any{
			map[string]any{"uri": "test://ok", "name": "ok"},
			map[string]any{"uri": "no scheme", "name": "x"},
			map[string]any{"uri": "", "name": "y"},
			map[string]any{"uri": "test://ok", "name": "again"},
		}})}
	case "tools/call":
		switch params.Name {
		case "garbage":
			return [][]byte{testserver.RawResult(req, `{"content":5}`)}
		case "not_json":
			return [][]byte{[]byte("this is not JSON")}
		}
		return [][]byte{testserver.Result(req, map[string]any{"content": []any{map[string]any{"type": "text", "text": "ok"}}})}
	}
	if len(req.ID) > 0 {
		return [][]byte{[]byte(`{"jsonrpc":"2.0","id":` + string(req.ID) + `,"error":{"code":-32601,"message":"no"}}`)}
	}
	return nil
}

func TestHostileServer(t *testing.T) {
	raw := &testserver.Raw{Handle: hostile}
	t.Cleanup(raw.Close)
	logs := newLogCapture()
	r := start(t, "memory://hostile", false, OptDialer(raw.Dial), OptLogger(slogNew(logs)), fastBackoff)
	ctx := context.Background()

	var names []string
	for _, tl := range mustList(r.ListTools(ctx)) {
		names = append(names, tl.Name())
	}
	want := []string{"good", "dup", "dotted.name-x", "no_schema", "bad_output", "garbage", "not_json"}
	if !slices.Equal(names, want) {
		t.Errorf("tools = %q, want %q", names, want)
	}
	if d := findTool(t, r.Connector, "dup").Description(); d != "first" {
		t.Errorf("dup is %q, want the first one", d)
	}
	logs.waitFor(t, "invalid name", `"bad name"`)
	logs.waitFor(t, "repeats", `"dup"`)

	// A tool whose input schema is unusable is refused alone, named in the
	// page's warning with the reason.
	logs.waitFor(t, "skipping remote items", "page=2",
		`"string_schema": input schema: want a schema of type "object", got type "string"`,
		`"number_schema": input schema: want a schema of type "object", got 42`,
		`"bad_ref": input schema: $ref "#/nowhere"`)
	if s, err := findTool(t, r.Connector, "no_schema").InputSchema(); err != nil || s.Type != "object" {
		t.Errorf("no_schema: %+v, %v", s, err)
	}
	if s, err := findTool(t, r.Connector, "bad_output").OutputSchema(); s != nil || err != nil {
		t.Errorf("bad_output output schema: %+v, %v", s, err)
	}
	out, err := call(t, ctx, r.Connector, "dotted.name-x", `{}`)
	mustNotErr(t, err)
	if read(t, out) != "ok" || out.URI() != "mcp://hostile/tool/dotted.name-x" {
		t.Errorf("dotted tool: %s", out.URI())
	}

	var pnames []string
	for _, p := range mustList(r.ListPrompts(ctx)) {
		pnames = append(pnames, p.Name())
	}
	if !slices.Equal(pnames, []string{"ok"}) {
		t.Errorf("prompts = %q", pnames)
	}
	res := mustList(r.ListResources(ctx))
	if len(res) != 1 || res[0].URI() != "test://ok" || res[0].Name() != "ok" {
		t.Errorf("resources = %v", res)
	}

	// A broken answer fails the call; the session stays.
	if _, err := call(t, ctx, r.Connector, "garbage", `{}`); !errors.Is(err, toolkit.ErrToolFailed) {
		t.Errorf("garbage answer: %v", err)
	}
	// An unreadable message breaks the session: the call fails at once as
	// unavailable and the connector reconnects.
	for i, name := range []string{"not_json"} {
		_, err := call(t, ctx, r.Connector, name, `{}`)
		if !errors.Is(err, toolkit.ErrUnavailable) {
			t.Errorf("%s: %v", name, err)
		}
		r.states.wait(t, toolkit.StatusReady, i+2)
	}
	out, err = call(t, ctx, r.Connector, "good", `{}`)
	mustNotErr(t, err)
	read(t, out)
}

func TestEndlessPagination(t *testing.T) {
	raw := &testserver.Raw{Handle: func(req testserver.RawRequest) [][]byte {
		switch req.Method {
		case "server/discover":
			return [][]byte{testserver.MethodNotFound(req)}
		case "initialize":
			return [][]byte{testserver.Initialize(req, "loop")}
		case "tools/list":
			return [][]byte{testserver.Result(req, map[string]any{"tools": []any{}, "nextCursor": "again"})}
		case "prompts/list", "resources/list":
			return [][]byte{testserver.Result(req, map[string]any{})}
		}
		return nil
	}}
	t.Cleanup(raw.Close)
	r := start(t, "memory://loop", true, OptDialer(raw.Dial), OptReconnect(Reconnect{MaxAttempts: 1}))
	select {
	case err := <-r.done:
		close(r.done)
		if !errors.Is(err, toolkit.ErrUnavailable) || !strings.Contains(err.Error(), "pagination") {
			t.Errorf("Run: %v", err)
		}
	case <-time.After(waitLimit):
		t.Fatal("listing never ends")
	}
}

func TestMessageLimit(t *testing.T) {
	cases := []struct {
		name  string
		setup func(t *testing.T) string
	}{
		{"stateful", func(t *testing.T) string {
			return testserver.ServeHTTP(t, newServer(t, testserver.Options{}).Server, testserver.Stateful).URL
		}},
		{"stateless", func(t *testing.T) string {
			return testserver.ServeHTTP(t, newServer(t, testserver.Options{}).Server, testserver.Stateless).URL
		}},
		{"sse", func(t *testing.T) string {
			return testserver.ServeHTTP(t, newServer(t, testserver.Options{}).Server, testserver.SSE).SSEURL
		}},
		{"stdio", func(t *testing.T) string { requireUnix(t); return stdioURL(t, testserver.StdioServe) }},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := start(t, tc.setup(t), false, fastBackoff, OptLimits(Limits{MaxMessageBytes: 32 << 10}))
			ctx := context.Background()
			out, err := call(t, ctx, r.Connector, "big", `{"size":1000}`)
			mustNotErr(t, err)
			if len(read(t, out)) != 1000 {
				t.Error("small answer cut")
			}
			done := make(chan error, 1)
			go func() {
				_, err := call(t, ctx, r.Connector, "big", `{"size":100000}`)
				done <- err
			}()
			select {
			case err := <-done:
				if err == nil {
					t.Error("an answer over the limit was accepted")
				}
			case <-time.After(waitLimit):
				t.Fatal("a call with an answer over the limit hangs")
			}
			// The connector works afterwards, reconnecting if it had to.
			out, err = call(t, ctx, r.Connector, "echo", `{"text":"fine"}`)
			if errors.Is(err, toolkit.ErrUnavailable) {
				out, err = call(t, ctx, r.Connector, "echo", `{"text":"fine"}`)
			}
			mustNotErr(t, err)
			read(t, out)
		})
	}
}

// endlessTools returns a server whose tools/list never ends: page n holds
// tools(n) and a cursor to page n+1. The counter counts the pages served.
func endlessTools(t *testing.T, tools func(n int64) []any) (*testserver.Raw, *atomic.Int64) {
	t.Helper()
	pages := &atomic.Int64{}
	raw := &testserver.Raw{Handle: func(req testserver.RawRequest) [][]byte {
		switch req.Method {
		case "initialize":
			return [][]byte{testserver.Initialize(req, "endless")}
		case "tools/list":
			n := pages.Add(1)
			return [][]byte{testserver.Result(req, map[string]any{"tools": tools(n), "nextCursor": fmt.Sprint(n)})}
		case "prompts/list", "resources/list", "resources/templates/list":
			return [][]byte{testserver.Result(req, map[string]any{})}
		}
		if len(req.ID) > 0 {
			return [][]byte{testserver.MethodNotFound(req)}
		}
		return nil
	}}
	t.Cleanup(raw.Close)
	return raw, pages
}

// A server whose pagination never ends, with one large tool a page: listing
// stops once the definitions kept would pass the byte limit, so a hostile
// server cannot make a connector hold unbounded memory with few items.
func TestListingStopsAtByteCap(t *testing.T) {
	leakCheck(t)
	const limit = 1 << 20
	desc := strings.Repeat("d", 100_000)
	raw, pages := endlessTools(t, func(n int64) []any {
		return []any{map[string]any{"name": fmt.Sprintf("t%d", n), "description": desc, "inputSchema": map[string]any{"type": "object"}}}
	})
	logs := newLogCapture()
	r := start(t, "memory://bulky", false, OptDialer(raw.Dial), OptLogger(slogNew(logs)),
		func(o *options) error { o.maxListBytes = limit; return nil })
	// Ten tools of about 100 KB fit in 1 MiB; the eleventh does not.
	tools, _ := r.ListTools(context.Background())
	if len(tools) != 10 || pages.Load() != 11 {
		t.Errorf("%d tools kept from %d pages, want 10 from 11", len(tools), pages.Load())
	}
	logs.waitFor(t, "more than a connector keeps", fmt.Sprintf("limit_bytes=%d", limit))
	mustNotErr(t, r.stop(t))
}

// A server whose pagination never ends, with an invalid name on every
// page: listing stops once the item limit is reached (not at the page
// limit), keeps the first items, and logs one warning a page, not one an
// item.
func TestEndlessPaginationStopsAtCap(t *testing.T) {
	leakCheck(t)
	const perPage, limit = 100, 1000
	raw, pages := endlessTools(t, func(n int64) []any {
		tools := []any{map[string]any{"name": "bad name", "inputSchema": map[string]any{"type": "object"}}}
		for i := range perPage {
			tools = append(tools, map[string]any{"name": fmt.Sprintf("t%d_%d", n, i), "inputSchema": map[string]any{"type": "object"}})
		}
		return tools
	})
	logs := newLogCapture()
	r := start(t, "memory://endless", false, OptDialer(raw.Dial), OptLogger(slogNew(logs)),
		func(o *options) error { o.maxItems = limit; return nil })
	// The limit counts every item received, bad ones too.
	if got, want := pages.Load(), int64((limit+perPage)/(perPage+1)); got != want {
		t.Errorf("%d pages fetched, want %d", got, want)
	}
	tools, _ := r.ListTools(context.Background())
	if want := limit - int(pages.Load()); len(tools) != want {
		t.Errorf("%d tools, want %d", len(tools), want)
	}
	warnings := 0
	for _, rec := range logs.all() {
		if strings.Contains(rec, "skipping remote items") {
			warnings++
		}
	}
	if int64(warnings) != pages.Load() {
		t.Errorf("%d warnings for %d pages", warnings, pages.Load())
	}
	logs.waitFor(t, "more than a connector keeps", "limit=1000")
	mustNotErr(t, r.stop(t))
}
