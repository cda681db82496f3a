package mcp

import (
	"context"
	"slices"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/llmkit/toolkit"
	"github.com/llmkit/toolkit/internal/testing/testserver"
)

// transportCase is one way to reach the test server.
type transportCase struct {
	name     string
	protocol string
	setup    func(t *testing.T, s *testserver.Server) (url string, opts []Option)
}

func transportCases() []transportCase {
	mem := func(t *testing.T, s *testserver.Server) (string, []Option) {
		m := testserver.NewMemory(s.Server)
		t.Cleanup(m.Close)
		return "memory://test", []Option{OptDialer(m.Dial)}
	}
	http := func(mode testserver.Mode, sseURL bool) func(t *testing.T, s *testserver.Server) (string, []Option) {
		return func(t *testing.T, s *testserver.Server) (string, []Option) {
			h := testserver.ServeHTTP(t, s.Server, mode)
			if sseURL {
				return h.SSEURL, nil
			}
			return h.URL, nil
		}
	}
	var cases []transportCase
	for _, pv := range []string{StatefulProtocolVersion, StatelessProtocolVersion} {
		cases = append(cases,
			transportCase{"memory", pv, mem},
			transportCase{"stateful", pv, http(testserver.Stateful, false)},
			transportCase{"stateless", pv, http(testserver.Stateless, false)},
		)
	}
	cases = append(cases,
		transportCase{"sse", StatefulProtocolVersion, http(testserver.SSE, true)},
		transportCase{"sse-fallback", StatefulProtocolVersion, http(testserver.SSE, false)},
	)
	return cases
}

func TestConnectorTransports(t *testing.T) {
	for _, tc := range transportCases() {
		t.Run(tc.name+"/"+tc.protocol, func(t *testing.T) {
			s := newServer(t, testserver.Options{PageSize: 3})
			url, opts := tc.setup(t, s)
			r := start(t, url, false, append(opts, OptProtocolVersion(tc.protocol))...)
			st := r.State()
			if st.Name != "testserver" || st.Version != "1.2.3" || st.Title != "Test Server" || st.ConnectedSince.IsZero() {
				t.Errorf("state = %+v", st)
			}
			if st.ProtocolVersion == "" {
				t.Errorf("no protocol version in %+v", st)
			}
			ctx := context.Background()
			tools, _ := r.ListTools(ctx)
			var names []string
			for _, tl := range tools {
				names = append(names, tl.Name())
			}
			for _, want := range []string{"echo", "structured", "image", "audio", "mixed", "fail", "progress", "block"} {
				if !slices.Contains(names, want) {
					t.Errorf("tool %q missing from %q", want, names)
				}
			}
			prompts, _ := r.ListPrompts(ctx)
			if len(prompts) != 1 || prompts[0].Name() != "greet" {
				t.Errorf("prompts = %v", prompts)
			}
			res, _ := r.ListResources(ctx)
			if len(res) != 2 {
				t.Errorf("resources = %v", res)
			}
			out, err := call(t, ctx, r.Connector, "echo", `{"text":"hi"}`)
			mustNotErr(t, err)
			if got := read(t, out); got != "hi" {
				t.Errorf("echo = %q", got)
			}
			for _, rs := range res {
				b, err := rs.Read(ctx)
				mustNotErr(t, err)
				if len(b) == 0 {
					t.Errorf("resource %s is empty", rs.URI())
				}
			}
		})
	}
}

func TestConnectorState(t *testing.T) {
	s := newServer(t, testserver.Options{Server: &sdk.ServerOptions{Instructions: "be nice"}})
	m := testserver.NewMemory(s.Server)
	t.Cleanup(m.Close)
	r := start(t, "memory://x", false, OptDialer(m.Dial))
	st := r.states.last()
	if st.Status != toolkit.StatusReady || st.Instructions != "be nice" || st.ProtocolVersion != DefaultProtocolVersion {
		t.Errorf("ready state = %+v", st)
	}
	if r.states.count(toolkit.StatusConnecting) != 1 {
		t.Errorf("states = %+v", r.states.all)
	}
	mustNotErr(t, r.stop(t))
	if got := r.states.last().Status; got != toolkit.StatusStopped {
		t.Errorf("final status = %v", got)
	}
}
