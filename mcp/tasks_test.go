package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/llmkit/toolkit"
	"github.com/llmkit/toolkit/internal/testing/testserver"
	"github.com/llmkit/toolkit/mcp/internal/wire"
	"github.com/llmkit/toolkit/mcp/internal/wire/wiretest"
)

// execListResult is a tools/list result that declares the task support of
// some tools, as a 2025-11-25 server does ("execution" is not a field of
// the SDK's Tool).
type execListResult struct {
	*sdk.ListToolsResult
	support map[string]string
}

func (r execListResult) MarshalJSON() ([]byte, error) {
	b, err := json.Marshal(r.ListToolsResult)
	if err != nil {
		return nil, err
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, err
	}
	tools, _ := m["tools"].([]any)
	for _, t := range tools {
		tm := t.(map[string]any)
		if s, ok := r.support[tm["name"].(string)]; ok {
			tm["execution"] = map[string]any{"taskSupport": s}
		}
	}
	return json.Marshal(m)
}

// taskServer is an MCP server whose tools declare their task support; it
// counts the tools/call requests it receives, by tool.
type taskServer struct {
	*sdk.Server
	mu    sync.Mutex
	calls map[string]int
}

func (s *taskServer) called(name string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.calls[name]
}

func newTaskServer(support map[string]string) *taskServer {
	ts := &taskServer{calls: map[string]int{}}
	s := sdk.NewServer(&sdk.Implementation{Name: "tasks", Version: "1"}, nil)
	for _, name := range []string{"plain", "maybe", "must", "odd"} {
		s.AddTool(&sdk.Tool{Name: name, Description: "the " + name + " tool", InputSchema: testserver.ObjectSchema()},
			func(context.Context, *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
				return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "ran " + name}}}, nil
			})
	}
	s.AddReceivingMiddleware(func(next sdk.MethodHandler) sdk.MethodHandler {
		return func(ctx context.Context, method string, req sdk.Request) (sdk.Result, error) {
			if method == "tools/call" {
				if p, ok := req.GetParams().(*sdk.CallToolParamsRaw); ok {
					ts.mu.Lock()
					ts.calls[p.Name]++
					ts.mu.Unlock()
				}
			}
			res, err := next(ctx, method, req)
			if lr, ok := res.(*sdk.ListToolsResult); ok && err == nil {
				return execListResult{lr, support}, nil
			}
			return res, err
		}
	})
	ts.Server = s
	return ts
}

var taskSupportOfTools = map[string]string{"maybe": "optional", "must": "required", "odd": "sometimes", "plain": "forbidden"}

func TestTaskSupport(t *testing.T) {
	cases := []struct {
		name  string
		setup func(t *testing.T, s *sdk.Server) (string, []Option)
	}{
		{"memory", func(t *testing.T, s *sdk.Server) (string, []Option) {
			m := testserver.NewMemory(s)
			t.Cleanup(m.Close)
			return "memory://test", []Option{OptDialer(m.Dial)}
		}},
		{"stateful", func(t *testing.T, s *sdk.Server) (string, []Option) {
			return testserver.ServeHTTP(t, s, testserver.Stateful).URL, nil
		}},
		{"stateless", func(t *testing.T, s *sdk.Server) (string, []Option) {
			return testserver.ServeHTTP(t, s, testserver.Stateless).URL, []Option{OptProtocolVersion(StatelessProtocolVersion)}
		}},
		{"json", func(t *testing.T, s *sdk.Server) (string, []Option) {
			h := sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return s }, &sdk.StreamableHTTPOptions{JSONResponse: true})
			hs := httptest.NewServer(h)
			t.Cleanup(hs.Close)
			return hs.URL + "/mcp", nil
		}},
		{"sse", func(t *testing.T, s *sdk.Server) (string, []Option) {
			return testserver.ServeHTTP(t, s, testserver.SSE).SSEURL, nil
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			srv := newTaskServer(taskSupportOfTools)
			url, opts := tc.setup(t, srv.Server)
			r := start(t, url, false, opts...)
			want := map[string]TaskSupport{"plain": TaskForbidden, "maybe": TaskOptional, "must": TaskRequired, "odd": TaskForbidden}
			for name, ts := range want {
				tl := findTool(t, r.Connector, name)
				got := tl.(TaskSupporter).TaskSupport()
				if got != ts {
					t.Errorf("tool %s: task support %q, want %q", name, got, ts)
				}
				if note := strings.Contains(tl.Description(), taskRequiredNote); note != (ts == TaskRequired) {
					t.Errorf("tool %s: description %q", name, tl.Description())
				}
			}
			for _, name := range []string{"plain", "maybe", "odd"} {
				out, err := call(t, context.Background(), r.Connector, name, `{}`)
				mustNotErr(t, err)
				if got := read(t, out); got != "ran "+name {
					t.Errorf("%s: %q", name, got)
				}
			}
			_, err := call(t, context.Background(), r.Connector, "must", `{}`)
			if !errors.Is(err, ErrTaskRequired) || !errors.Is(err, toolkit.ErrNotImplemented) {
				t.Fatalf("calling a task-only tool: %v, want ErrTaskRequired", err)
			}
			if !strings.Contains(err.Error(), "requires task-augmented execution") || !strings.Contains(err.Error(), `"must"`) {
				t.Errorf("error %q", err)
			}
			if n := srv.called("must"); n != 0 {
				t.Errorf("the server received %d calls of the task-only tool", n)
			}
			if n := srv.called("maybe"); n != 1 {
				t.Errorf("the server received %d calls of the optional tool, want 1", n)
			}
		})
	}
}

// TestTaskSupportChanges checks that a tool whose task support changes
// (and nothing else) is rebuilt on the next listing.
func TestTaskSupportChanges(t *testing.T) {
	support := map[string]string{"must": "required"}
	var mu sync.Mutex
	srv := newTaskServer(nil)
	srv.AddReceivingMiddleware(func(next sdk.MethodHandler) sdk.MethodHandler {
		return func(ctx context.Context, method string, req sdk.Request) (sdk.Result, error) {
			res, err := next(ctx, method, req)
			if lr, ok := res.(execListResult); ok {
				mu.Lock()
				lr.support = support
				mu.Unlock()
				return lr, err
			}
			return res, err
		}
	})
	m := testserver.NewMemory(srv.Server)
	t.Cleanup(m.Close)
	opt, wait := refreshes(t)
	r := start(t, "memory://test", false, OptDialer(m.Dial), opt)
	if got := findTool(t, r.Connector, "must").(TaskSupporter).TaskSupport(); got != TaskRequired {
		t.Fatalf("task support %q", got)
	}
	mu.Lock()
	support = map[string]string{}
	mu.Unlock()
	// A list change makes the connector list the tools again.
	srv.AddTool(mustTool("extra"), func(context.Context, *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
		return &sdk.CallToolResult{}, nil
	})
	wait(sigTools)
	tl := findTool(t, r.Connector, "must")
	if got := tl.(TaskSupporter).TaskSupport(); got != TaskForbidden {
		t.Fatalf("task support after the change: %q", got)
	}
	out, err := call(t, context.Background(), r.Connector, "must", `{}`)
	mustNotErr(t, err)
	if got := read(t, out); got != "ran must" {
		t.Errorf("output %q", got)
	}
}

func TestSplitToolsPageTaskSupport(t *testing.T) {
	tools, next, err := decodeToolsPage([]byte(`{"tools":[{"name":"a","execution":{"taskSupport":"required"}},{"name":"b","execution":{}},{"name":"c","execution":{"taskSupport":"optional"}},{"name":"d","execution":{"taskSupport":"sometimes"}}],"nextCursor":"n"}`))
	mustNotErr(t, err)
	want := []TaskSupport{TaskRequired, TaskForbidden, TaskOptional, TaskForbidden}
	if len(tools) != len(want) || next != "n" {
		t.Fatalf("%d tools, next %q", len(tools), next)
	}
	for i, lt := range tools {
		if lt.def == nil || lt.task != want[i] {
			t.Errorf("tool %d: %+v, want task support %q", i, lt, want[i])
		}
	}
	for _, bad := range []string{``, `[`, `[]`, `{"tools":"taskSupport"}`, `{"tools":[1,}`, `{"nextCursor":5}`, `{"tools":[]`} {
		if _, _, err := splitToolsPage([]byte(bad)); !errors.Is(err, errNotToolsPage) {
			t.Errorf("%q: %v", bad, err)
		}
	}
}

// FuzzTakeAnswer feeds arbitrary answers to what takes the page out of a
// tools/list answer, as a JSON body and as an event stream in chunks: it
// never panics, and what it hands on without a page is what it got.
func FuzzTakeAnswer(f *testing.F) {
	f.Add([]byte(`{"jsonrpc":"2.0","id":1,"result":{"tools":[{"name":"a","execution":{"taskSupport":"optional"}}]}}`), 1)
	f.Add([]byte("event: message\ndata: {\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"tools\":[{\"name\":\"a\",\"execution\":{\"taskSupport\":\"required\"}}]}}\n\n"), 7)
	f.Fuzz(func(t *testing.T, data []byte, chunk int) {
		if chunk <= 0 {
			chunk = 1
		}
		slot := &taskSlot{}
		out, ok := slot.takeAnswer(data)
		if !ok && !bytes.Equal(out, data) {
			t.Fatalf("changed %q into %q", data, out)
		}
		if tools, taken := slot.page(); taken {
			if !ok {
				t.Fatal("a page taken from an answer handed on as it was")
			}
			for _, lt := range tools {
				lt.decode()
				if (lt.def == nil) == (lt.undecoded == "") {
					t.Fatalf("def %v, undecoded %q", lt.def, lt.undecoded)
				}
			}
		}
		rd := wire.NewEventRewriter(io.NopCloser(&wiretest.ChunkReader{B: data, N: chunk}), 1<<10, holdEvery, (&taskSlot{}).takeAnswer)
		if _, err := io.ReadAll(rd); err != nil {
			t.Fatal(err)
		}
	})
}

// TestIsStreamableConn: the SDK's streamable HTTP client connection is
// recognised (a wrapper would hide the method the SDK tells it of session
// changes through), and other connections are not.
func TestIsStreamableConn(t *testing.T) {
	s := newTaskServer(nil)
	h := testserver.ServeHTTP(t, s.Server, testserver.Stateful)
	conn, err := (&sdk.StreamableClientTransport{Endpoint: h.URL}).Connect(context.Background())
	mustNotErr(t, err)
	defer conn.Close()
	if !isStreamableConn(conn) {
		t.Errorf("%T not recognised", conn)
	}
	if _, wrapped := watchTasks(conn).(*taskConn); wrapped {
		t.Error("the streamable connection was wrapped")
	}
	ct, _ := sdk.NewInMemoryTransports()
	mem, err := ct.Connect(context.Background())
	mustNotErr(t, err)
	defer mem.Close()
	if isStreamableConn(mem) {
		t.Errorf("%T taken for a streamable connection", mem)
	}
	if _, wrapped := watchTasks(mem).(*taskConn); !wrapped {
		t.Error("the in-memory connection was not wrapped")
	}
}

// TestTaskSupportLargeList: the declaration is read from a tools/list
// answer larger than the notification scanner keeps (maxNoteLine).
func TestTaskSupportLargeList(t *testing.T) {
	srv := newTaskServer(map[string]string{"must": "required"})
	long := strings.Repeat("a long description ", 20)
	for i := range 400 {
		srv.AddTool(&sdk.Tool{Name: fmt.Sprintf("filler_%d", i), Description: long, InputSchema: testserver.ObjectSchema()},
			func(context.Context, *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
				return &sdk.CallToolResult{}, nil
			})
	}
	for _, mode := range []testserver.Mode{testserver.Stateful, testserver.SSE} {
		t.Run(mode.String(), func(t *testing.T) {
			h := testserver.ServeHTTP(t, srv.Server, mode)
			url := h.URL
			if mode == testserver.SSE {
				url = h.SSEURL
			}
			r := start(t, url, false)
			tools, _ := r.ListTools(context.Background())
			if len(tools) < 400 {
				t.Fatalf("%d tools", len(tools))
			}
			if got := findTool(t, r.Connector, "must").(TaskSupporter).TaskSupport(); got != TaskRequired {
				t.Errorf("task support %q", got)
			}
		})
	}
}
