//go:build unix

package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/llmkit/toolkit/internal/testing/peers"
)

// perClientClient connects a go-sdk client to the gateway with the roots
// given (directories) and a sampling handler that answers with its name
// once every client sharing barrier has been asked.
func perClientClient(t *testing.T, g *gatewayProcess, name string, barrier *sync.WaitGroup, dirs ...string) (*sdk.Client, *sdk.ClientSession) {
	t.Helper()
	c := sdk.NewClient(&sdk.Implementation{Name: name, Version: "1"}, &sdk.ClientOptions{
		CreateMessageHandler: func(ctx context.Context, req *sdk.CreateMessageRequest) (*sdk.CreateMessageResult, error) {
			if barrier != nil {
				barrier.Done()
				barrier.Wait()
			}
			return &sdk.CreateMessageResult{Model: "m", Role: "assistant", Content: &sdk.TextContent{Text: "answered by " + name}}, nil
		},
	})
	for _, d := range dirs {
		c.AddRoots(&sdk.Root{URI: fileURI(d)})
	}
	cs, err := c.Connect(context.Background(), &sdk.StreamableClientTransport{Endpoint: g.mcpURL}, &sdk.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return c, cs
}

func fileURI(dir string) string { return (&url.URL{Scheme: "file", Path: dir}).String() }

// callTextErr calls a tool and returns its text, or the tool's error.
func callTextErr(cs *sdk.ClientSession, name string, args map[string]any) (string, error) {
	return callTextCtx(context.Background(), cs, name, args)
}

// callTextCtx is callTextErr within ctx.
func callTextCtx(ctx context.Context, cs *sdk.ClientSession, name string, args map[string]any) (string, error) {
	res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		return "", err
	}
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*sdk.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	if res.IsError {
		return "", errors.New(b.String())
	}
	return b.String(), nil
}

// rootsUpdated matches the filesystem server's stderr line saying it took
// n directories from its client's roots.
func rootsUpdated(n int) func(map[string]any) bool {
	want := fmt.Sprintf("Updated allowed directories from MCP roots: %d valid", n)
	return func(r map[string]any) bool {
		line, _ := r["line"].(string)
		return r["msg"] == "server stderr" && strings.Contains(line, want)
	}
}

// perClientHealth is the health report with the client sessions.
type perClientHealth struct {
	Upstreams []struct {
		Namespace      string
		ClientSessions *struct{ Open, Opened int } `json:"client_sessions"`
	}
}

func (g *gatewayProcess) clientSessions(t *testing.T, ns string) (open, opened int, ok bool) {
	t.Helper()
	resp, err := http.Get(g.healthURL)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var rep perClientHealth
	if err := json.NewDecoder(resp.Body).Decode(&rep); err != nil {
		t.Fatal(err)
	}
	for _, u := range rep.Upstreams {
		if u.Namespace == ns && u.ClientSessions != nil {
			return u.ClientSessions.Open, u.ClientSessions.Opened, true
		}
	}
	return 0, 0, false
}

// TestGatewayPerClientFilesystem runs the reference filesystem server,
// given no directories, behind the gateway with upstream_sessions:
// per_client. Two clients at once, each with a directory of its own as its
// root: the server, a process per client, takes each client's roots at
// initialize; each client reads its own file and is refused the other's;
// a client that adds a root is followed by its server alone. /healthz and
// /metrics count the sessions, and one closes when its client leaves.
func TestGatewayPerClientFilesystem(t *testing.T) {
	node, args := peers.FilesystemStdio(t)
	command, _ := json.Marshal(append([]string{node}, args...))
	config := writeConfig(t, t.TempDir(), fmt.Sprintf(`listen: 127.0.0.1:0
metrics: true
servers:
  - name: fs
    command: %s
    upstream_sessions: per_client
    max_upstream_sessions: 4
    timeouts: {connect: 60s}
`, command))
	dirA, dirB, dirC := t.TempDir(), t.TempDir(), t.TempDir()
	for dir, text := range map[string]string{dirA: "alpha", dirB: "beta", dirC: "gamma"} {
		if err := os.WriteFile(filepath.Join(dir, "f.txt"), []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	read := func(cs *sdk.ClientSession, dir string) (string, error) {
		return callTextErr(cs, "read_text_file", map[string]any{"path": filepath.Join(dir, "f.txt")})
	}

	g := startGateway(t, config)
	g.waitLog(t, 0, upstreamReady("fs"))
	from := g.mark()
	clientA, a := perClientClient(t, g, "A", nil, dirA)
	_, b := perClientClient(t, g, "B", nil, dirB)
	// Each server learns its client's roots at initialize, before any call.
	g.waitCount(t, from, 2, rootsUpdated(1))

	if got, err := read(a, dirA); err != nil || got != "alpha" {
		t.Errorf("A reading its own file: %q, %v", got, err)
	}
	if got, err := read(b, dirB); err != nil || got != "beta" {
		t.Errorf("B reading its own file: %q, %v", got, err)
	}
	if _, err := read(a, dirB); err == nil || !strings.Contains(err.Error(), "Access denied") {
		t.Errorf("A reading B's file: %v, want access denied", err)
	}
	if _, err := read(b, dirA); err == nil || !strings.Contains(err.Error(), "Access denied") {
		t.Errorf("B reading A's file: %v, want access denied", err)
	}

	// A adds a root: its server follows, B's does not.
	from = g.mark()
	clientA.AddRoots(&sdk.Root{URI: fileURI(dirC)})
	g.waitLog(t, from, rootsUpdated(2))
	if got, err := read(a, dirC); err != nil || got != "gamma" {
		t.Errorf("A reading its new root: %q, %v", got, err)
	}
	if _, err := read(b, dirC); err == nil || !strings.Contains(err.Error(), "Access denied") {
		t.Errorf("B reading A's new root: %v, want access denied", err)
	}

	if n := children(t, g.cmd.Process.Pid); n != 3 {
		t.Errorf("the gateway has %d child processes, want 3 (the shared server, A's and B's)", n)
	}
	if open, opened, ok := g.clientSessions(t, "fs"); !ok || open != 2 || opened != 2 {
		t.Errorf("health: client sessions %d open, %d opened (%v); want 2, 2", open, opened, ok)
	}
	metrics := strings.Replace(g.healthURL, "/healthz", "/metrics", 1)
	text := fetch(t, metrics)
	if !hasSample(text, "toolkit_gateway_upstream_sessions", 2, `toolkit_namespace="fs"`) ||
		!hasSample(text, "toolkit_gateway_upstream_sessions_opened_total", 2, `toolkit_namespace="fs"`) {
		t.Errorf("metrics do not count the two sessions:\n%s", grepLines(text, "toolkit_gateway_upstream_sessions"))
	}

	from = g.mark()
	b.Close()
	g.waitLog(t, from, func(r map[string]any) bool { return r["msg"] == "client's upstream session closed" })
	if open, _, _ := g.clientSessions(t, "fs"); open != 1 {
		t.Errorf("health after B left: %d client sessions open, want 1", open)
	}
	if n := children(t, g.cmd.Process.Pid); n != 2 {
		t.Errorf("after B left the gateway has %d child processes, want 2", n)
	}
}

// TestGatewayPerClientSampling: two clients call the everything server's
// sampling tool at once through a gateway whose upstream runs over stdio
// with per_client sessions; each request is answered by the client whose
// call made it (on one shared session they could not be told apart).
func TestGatewayPerClientSampling(t *testing.T) {
	node, args := peers.EverythingStdio(t)
	command, _ := json.Marshal(append([]string{node}, args...))
	config := writeConfig(t, t.TempDir(), fmt.Sprintf(`listen: 127.0.0.1:0
servers:
  - name: every
    command: %s
    upstream_sessions: per_client
    timeouts: {connect: 60s}
`, command))
	g := startGateway(t, config)
	g.waitLog(t, 0, upstreamReady("every"))
	var barrier sync.WaitGroup
	barrier.Add(2)
	_, a := perClientClient(t, g, "A", &barrier)
	_, b := perClientClient(t, g, "B", &barrier)
	var wg sync.WaitGroup
	got := make([]string, 2)
	errs := make([]error, 2)
	for i, cs := range []*sdk.ClientSession{a, b} {
		wg.Go(func() {
			got[i], errs[i] = callTextErr(cs, "trigger-sampling-request", map[string]any{"prompt": "hi", "maxTokens": 5})
		})
	}
	wg.Wait()
	for i, name := range []string{"A", "B"} {
		if errs[i] != nil || !strings.Contains(got[i], "answered by "+name) {
			t.Errorf("%s's sampling call: %q, %v; want its own answer", name, got[i], errs[i])
		}
	}
}

// fetch returns the body of a GET of url.
func fetch(t *testing.T, url string) string {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return string(body)
}

// waitCount waits until n records at or after position from match.
func (g *gatewayProcess) waitCount(t *testing.T, from, n int, match func(map[string]any) bool) {
	t.Helper()
	deadline := time.NewTimer(waitLimit)
	defer deadline.Stop()
	for {
		g.mu.Lock()
		seen := 0
		for _, r := range g.records[min(from, len(g.records)):] {
			if match(r) {
				seen++
			}
		}
		changed := g.changed
		g.mu.Unlock()
		if seen >= n {
			return
		}
		select {
		case <-changed:
		case <-g.exited:
			t.Fatal("the gateway exited before the awaited log records")
		case <-deadline.C:
			t.Fatalf("timed out waiting for %d log records (saw %d)", n, seen)
		}
	}
}

// children counts the processes whose parent is pid (Linux /proc; the
// test is skipped elsewhere).
func children(t *testing.T, pid int) int {
	t.Helper()
	return len(childPIDs(t, pid))
}

// childPIDs returns the processes whose parent is pid (Linux /proc; the
// test is skipped elsewhere).
func childPIDs(t *testing.T, pid int) []int {
	t.Helper()
	entries, err := os.ReadDir("/proc")
	if err != nil {
		t.Skip("no /proc")
	}
	var pids []int
	for _, e := range entries {
		stat, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue
		}
		// pid (comm) state ppid ...: comm may hold spaces; it ends at the last ')'.
		i := strings.LastIndexByte(string(stat), ')')
		if i < 0 {
			continue
		}
		f := strings.Fields(string(stat[i+1:]))
		if len(f) > 1 && f[1] == strconv.Itoa(pid) {
			if child, err := strconv.Atoi(e.Name()); err == nil {
				pids = append(pids, child)
			}
		}
	}
	return pids
}
