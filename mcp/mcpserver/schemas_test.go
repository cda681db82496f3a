package mcpserver

import (
	"bytes"
	"context"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/llmkit/toolkit"
)

// syncBuffer is a bytes.Buffer safe for concurrent use, for a logger.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// A source whose tools have hostile schemas (an application's own
// connector, whose items the toolkit lists as they are): the server
// offers only the good tool; each other is skipped with a log line naming
// it and why. A schema thousands of levels deep is refused before it is
// encoded (which took jsonschema-go the square of its depth), and a $ref
// cycle is never offered to clients.
func TestServerRefusesHostileSchemas(t *testing.T) {
	leakCheck(t)
	loop := &jsonschema.Schema{Type: "object"}
	loop.Properties = map[string]*jsonschema.Schema{"self": loop}
	deep := &jsonschema.Schema{}
	for range 5000 {
		deep = &jsonschema.Schema{Not: deep}
	}
	obj := &jsonschema.Schema{Type: "object"}
	tools := []toolkit.Tool{
		namedTool("good", "src"),
		&testTool{name: "self_ref", in: &jsonschema.Schema{Type: "object", Ref: "#"}},
		&testTool{name: "loop", in: loop},
		&testTool{name: "deep", in: &jsonschema.Schema{Type: "object", Properties: map[string]*jsonschema.Schema{"x": deep}}},
		&testTool{name: "bad_output", in: obj, out: &jsonschema.Schema{Type: "object", AllOf: []*jsonschema.Schema{{Ref: "#"}}}},
	}
	tk, _ := mutableToolkit(t, nil, map[string][]toolkit.Tool{"src": tools}, []string{"src"})
	logs := &syncBuffer{}
	srv, err := New(tk, nil, WithLogger(slog.New(slog.NewTextHandler(logs, nil))))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	cs := (&fixture{tk: tk, srv: srv}).connect(t, nil)
	ctx := context.Background()
	lt, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tl := range lt.Tools {
		names = append(names, tl.Name)
	}
	if !slices.Equal(names, []string{"good"}) {
		t.Errorf("tools %q, want [good]", names)
	}
	for name, why := range map[string]string{
		"self_ref": "$ref cycle", "loop": "not a tree", "deep": "levels deep", "bad_output": "output schema: a $ref cycle",
	} {
		found := false
		for _, l := range strings.Split(logs.String(), "\n") {
			if strings.Contains(l, "skipping tool") && strings.Contains(l, "key=src."+name) && strings.Contains(l, why) {
				found = true
			}
		}
		if !found {
			t.Errorf("no log line skipping %s because %q:\n%s", name, why, logs)
		}
		res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: name})
		if err == nil && !res.IsError {
			t.Errorf("calling %s: %+v", name, res)
		}
	}
	res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "good"})
	if err != nil || resultText(t, res) != "src" {
		t.Errorf("good: %v %+v", err, res)
	}
}
