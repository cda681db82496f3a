//go:build unix

package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/llmkit/toolkit/internal/testing/peers"
)

// filesystemPerClientConfig is a gateway whose upstream "fs" is the
// reference filesystem server, given no directories, with per_client
// sessions; extra is added to the upstream's entry.
func filesystemPerClientConfig(t *testing.T, extra string) string {
	t.Helper()
	node, args := peers.FilesystemStdio(t)
	command, _ := json.Marshal(append([]string{node}, args...))
	return writeConfig(t, t.TempDir(), fmt.Sprintf(`listen: 127.0.0.1:0
servers:
  - name: fs
    command: %s
    upstream_sessions: per_client
    timeouts: {connect: 60s}
%s`, command, extra))
}

// TestGatewayPerClientStopReapsRequestingServer: a client declares roots and
// never answers roots/list; the filesystem server of its per_client
// session asks for them. On SIGTERM the gateway stops at once, cleanly,
// and leaves no process behind: the question waiting on the client ends
// with the connector.
func TestGatewayPerClientStopReapsRequestingServer(t *testing.T) {
	g := startGateway(t, filesystemPerClientConfig(t, ""))
	g.waitLog(t, 0, upstreamReady("fs"))
	asked := make(chan struct{}, 1)
	hang := make(chan struct{})
	c := sdk.NewClient(&sdk.Implementation{Name: "silent", Version: "1"}, nil)
	c.AddRoots(&sdk.Root{URI: fileURI(t.TempDir())})
	c.AddReceivingMiddleware(func(next sdk.MethodHandler) sdk.MethodHandler {
		return func(ctx context.Context, method string, req sdk.Request) (sdk.Result, error) {
			if method != "roots/list" {
				return next(ctx, method, req)
			}
			select {
			case asked <- struct{}{}:
			default:
			}
			<-hang // never answers while the gateway runs
			return nil, errors.New("gone")
		}
	})
	cs, err := c.Connect(context.Background(), &sdk.StreamableClientTransport{Endpoint: g.mcpURL}, &sdk.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	t.Cleanup(func() { close(hang) }) // before cs.Close, which waits for the handler
	select {
	case <-asked:
	case <-time.After(waitLimit):
		t.Fatal("the server never asked the client for its roots")
	}
	pids := childPIDs(t, g.cmd.Process.Pid)
	if len(pids) != 2 {
		t.Fatalf("the gateway has %d child processes, want 2 (the shared server and the client's)", len(pids))
	}
	from := g.mark()
	g.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-g.exited:
	case <-time.After(waitLimit):
		t.Fatal("the gateway did not exit after SIGTERM")
	}
	if g.exitErr != nil {
		t.Errorf("exit: %v", g.exitErr)
	}
	g.mu.Lock()
	for _, r := range g.records[from:] {
		if msg, _ := r["msg"].(string); strings.Contains(msg, "did not stop") {
			t.Errorf("log: %v", r)
		}
	}
	g.mu.Unlock()
	for _, pid := range pids {
		if err := syscall.Kill(pid, 0); !errors.Is(err, syscall.ESRCH) {
			t.Errorf("upstream process %d is still there after the gateway exited (kill -0: %v)", pid, err)
			syscall.Kill(pid, syscall.SIGKILL)
		}
	}
}

// TestGatewayPerClientIdleTimeout: a client that keeps its session but
// makes no call (as the inspector's CLI leaves its sessions) does not
// keep its per_client process: after upstream_idle_timeout the process
// is ended, and the client's next call starts another, with its roots.
func TestGatewayPerClientIdleTimeout(t *testing.T) {
	g := startGateway(t, filesystemPerClientConfig(t, "    upstream_idle_timeout: 1s\n"))
	g.waitLog(t, 0, upstreamReady("fs"))
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "f.txt"), []byte("alpha"), 0o600); err != nil {
		t.Fatal(err)
	}
	from := g.mark()
	_, cs := perClientClient(t, g, "A", nil, dir)
	g.waitLog(t, from, rootsUpdated(1))
	g.waitLog(t, from, func(r map[string]any) bool {
		return r["msg"] == "client's upstream session closed" && r["reason"] == "no call for the idle time"
	})
	if n := children(t, g.cmd.Process.Pid); n != 1 {
		t.Errorf("after the client's idle time the gateway has %d child processes, want 1 (the shared server)", n)
	}
	// The call that opens the session again may overtake the server's
	// question for the client's roots: the next one finds them.
	from = g.mark()
	if _, err := callTextErr(cs, "list_allowed_directories", map[string]any{}); err != nil {
		t.Errorf("the client's call after its idle time: %v", err)
	}
	g.waitLog(t, from, rootsUpdated(1))
	if got, err := callTextErr(cs, "read_text_file", map[string]any{"path": filepath.Join(dir, "f.txt")}); err != nil || got != "alpha" {
		t.Errorf("reading in the client's root after its idle time: %q, %v", got, err)
	}
	if n := children(t, g.cmd.Process.Pid); n != 2 {
		t.Errorf("after the client's call the gateway has %d child processes, want 2", n)
	}
}
