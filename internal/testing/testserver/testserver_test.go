package testserver

import (
	"context"
	"strings"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func connect(t *testing.T, tr sdk.Transport) *sdk.ClientSession {
	t.Helper()
	c := sdk.NewClient(&sdk.Implementation{Name: "t", Version: "1"}, nil)
	cs, err := c.Connect(context.Background(), tr, nil)
	if err != nil {
		t.Fatal(err)
	}
	return cs
}

func echo(t *testing.T, cs *sdk.ClientSession) string {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &sdk.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "hi"}})
	if err != nil {
		t.Fatal(err)
	}
	return res.Content[0].(*sdk.TextContent).Text
}

func TestMemory(t *testing.T) {
	s := New(Options{})
	defer s.Close()
	m := NewMemory(s.Server)
	defer m.Close()
	tr, err := m.Dial(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	cs := connect(t, tr)
	if echo(t, cs) != "hi" {
		t.Error("echo failed")
	}
	m.Kill()
	if err := cs.Wait(); err != nil && !strings.Contains(err.Error(), "closed") {
		t.Logf("wait: %v", err)
	}
	cs.Close()
	tr, _ = m.Dial(context.Background())
	if _, err := sdk.NewClient(&sdk.Implementation{Name: "t", Version: "1"}, nil).Connect(context.Background(), tr, nil); err == nil {
		t.Error("connected to a killed server")
	}
	m.Start()
	tr, _ = m.Dial(context.Background())
	cs = connect(t, tr)
	defer cs.Close()
	if echo(t, cs) != "hi" || m.Dials() != 3 {
		t.Errorf("after restart: %d dials", m.Dials())
	}
}

func TestHTTPModes(t *testing.T) {
	for _, mode := range []Mode{Stateful, Stateless, SSE} {
		t.Run(mode.String(), func(t *testing.T) {
			s := New(Options{})
			defer s.Close()
			h := ServeHTTP(t, s.Server, mode)
			var tr sdk.Transport = &sdk.StreamableClientTransport{Endpoint: h.URL}
			if mode == SSE {
				tr = &sdk.SSEClientTransport{Endpoint: h.SSEURL}
			}
			cs := connect(t, tr)
			if echo(t, cs) != "hi" {
				t.Error("echo failed")
			}
			cs.Close()
			h.Kill()
			if err := h.Start(); err != nil {
				t.Fatal(err)
			}
			if h.Requests.Load() == 0 {
				t.Error("no request counted")
			}
		})
	}
}

func TestRaw(t *testing.T) {
	r := &Raw{Handle: func(req RawRequest) [][]byte {
		switch req.Method {
		case "initialize":
			return [][]byte{Initialize(req, "raw")}
		case "tools/list":
			return [][]byte{RawResult(req, `{"tools":[{"name":"x","inputSchema":{"type":"object"}}]}`)}
		}
		if req.ID == nil {
			return nil // a notification
		}
		return [][]byte{MethodNotFound(req)}
	}}
	defer r.Close()
	tr, _ := r.Dial(context.Background())
	cs := connect(t, tr)
	defer cs.Close()
	if cs.InitializeResult().ServerInfo.Name != "raw" {
		t.Error("wrong server")
	}
	res, err := cs.ListTools(context.Background(), nil)
	if err != nil || len(res.Tools) != 1 {
		t.Errorf("tools: %v, %v", res, err)
	}
}
