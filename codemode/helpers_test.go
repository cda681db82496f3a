package codemode

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/llmkit/toolkit"
	"github.com/llmkit/toolkit/resource"
	"github.com/llmkit/toolkit/tool"
)

// fixture is a toolkit with tools to script against, a policy that
// denies "secret" to everyone but "root", and an audit.
type fixture struct {
	tk    *toolkit.Toolkit
	m     *Mode
	audit *syncBuffer
}

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

// records returns the audit records.
func (s *syncBuffer) records(t *testing.T) []map[string]any {
	t.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []map[string]any
	for _, line := range strings.Split(strings.TrimSpace(s.b.String()), "\n") {
		if line == "" {
			continue
		}
		var r map[string]any
		if err := json.Unmarshal([]byte(line), &r); err != nil {
			t.Fatalf("audit line %q: %v", line, err)
		}
		out = append(out, r)
	}
	return out
}

type file struct {
	Name string `json:"name"`
	Size int    `json:"size"`
}

type listIn struct {
	Dir string `json:"dir" jsonschema:"the directory to list"`
}
type listOut struct {
	Files []file `json:"files"`
}
type readIn struct {
	Name string `json:"name"`
}
type empty struct{}

// newFixture returns a fixture whose scripts run in process, or in
// workers when worker is set, under lim (a short timeout by default).
func newFixture(t *testing.T, worker bool, lim Limits) *fixture {
	t.Helper()
	f := &fixture{audit: &syncBuffer{}}
	policy := toolkit.PolicyFunc(func(_ context.Context, req toolkit.PolicyRequest) toolkit.Decision {
		if req.Tool.Name() == "secret" && req.Principal != "root" {
			return toolkit.Decision{Effect: toolkit.Deny, Rule: "no-secret", Reason: "root only"}
		}
		return toolkit.Decision{Effect: toolkit.Allow}
	})
	tk, err := toolkit.New(toolkit.WithPolicy(policy), toolkit.WithAudit(slog.NewJSONHandler(f.audit, nil)))
	if err != nil {
		t.Fatal(err)
	}
	tools := []toolkit.Tool{
		tool.Must("list_files", "List the files of a directory.", func(_ context.Context, in listIn) (listOut, error) {
			var out listOut
			for i := range 50 {
				out.Files = append(out.Files, file{Name: in.Dir + "/f" + string(rune('a'+i%26)) + string(rune('a'+i/26)), Size: i * 100})
			}
			return out, nil
		}),
		tool.Must("read_file", "Read a file.", func(_ context.Context, in readIn) (string, error) {
			return "contents of " + in.Name + strings.Repeat(".", 1000), nil
		}),
		tool.Must("secret", "A secret.", func(context.Context, empty) (string, error) { return "s3cret", nil }),
		tool.Must("hang", "Never answers before its caller gives up.", func(ctx context.Context, _ empty) (string, error) {
			if hook, ok := ctx.Value(callHookKey{}).(func()); ok {
				hook()
			}
			<-ctx.Done()
			return "", ctx.Err()
		}),
		tool.Must("huge", "Answers more than a script may receive.", func(context.Context, empty) (string, error) {
			return strings.Repeat("x", 5<<20), nil
		}),
	}
	if err := tk.AddTool(tools...); err != nil {
		t.Fatal(err)
	}
	if lim.Timeout == 0 {
		lim.Timeout = 2 * time.Second
	}
	cfg := Config{Limits: lim}
	if worker {
		cfg.Worker = &Worker{Path: os.Args[0], Args: []string{"-test.run=^$"}}
	}
	if f.m, err = New(tk, cfg); err != nil {
		t.Fatal(err)
	}
	// Scripts given up on (and warm workers) end before the test does.
	t.Cleanup(func() { f.m.Close() })
	if err := tk.AddTool(f.m.Tools()...); err != nil {
		t.Fatal(err)
	}
	f.tk = tk
	return f
}

// run runs a script as principal through the run_code tool.
func (f *fixture) run(t *testing.T, ctx context.Context, principal, script string) (string, error) {
	t.Helper()
	in, _ := json.Marshal(map[string]string{"code": script})
	res, err := f.tk.Call(toolkit.WithPrincipal(ctx, principal), RunCodeName, mustJSON(t, in))
	if err != nil {
		return "", err
	}
	if res == nil {
		return "", nil
	}
	b, err := res.Read(ctx)
	return string(b), err
}

func mustJSON(t *testing.T, b []byte) toolkit.Resource {
	t.Helper()
	r, err := resource.JSON("input", json.RawMessage(b))
	if err != nil {
		t.Fatal(err)
	}
	return r
}
