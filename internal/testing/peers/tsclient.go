package peers

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// tsClientRel is the script of the TypeScript SDK client below the
// repository root (it imports @modelcontextprotocol/client from the pinned
// node_modules beside it).
const tsClientRel = "tools/peers/tsclient.mjs"

// tsClientWait bounds each wait for a line of the TypeScript client (the
// script bounds its own waits at 20 s).
const tsClientWait = 30 * time.Second

// TSEvent is one line the TypeScript client prints (see
// tools/peers/tsclient.mjs): Event says which; the other fields are those
// of that event.
type TSEvent struct {
	Event   string   `json:"event"`   // connected, tools, call, listening, updated, changed, error
	Version string   `json:"version"` // connected: the protocol version negotiated
	Era     string   `json:"era"`     // connected: "modern" (2026-07-28 on) or "legacy"
	Names   []string `json:"names"`   // tools
	Name    string   `json:"name"`    // call: the tool
	Error   bool     `json:"error"`   // call: it failed (a tool error or a protocol one)
	Text    string   `json:"text"`    // call: the first text block, or the error
	URI     string   `json:"uri"`     // updated
	What    string   `json:"what"`    // error: the step that failed
	Message string   `json:"message"` // error
}

// TSClient is a running TypeScript SDK client (package
// @modelcontextprotocol/client, the SDK's version 2) connected to a server.
type TSClient struct {
	cmd    *exec.Cmd
	lines  chan TSEvent
	stderr *strings.Builder
	done   chan struct{} // closed once the process is reaped
	err    error         // of Wait, set before done closes
}

// StartTSClient runs the TypeScript client against the streamable HTTP
// endpoint url, speaking version: "legacy" (initialize, 2025-11-25) or a
// revision it pins with server/discover ("2026-07-28"). With resources
// false it follows no resource (the server has none). It skips the test
// when the peers are not installed. The process is killed when the test
// ends, if it has not exited by then.
func StartTSClient(t testing.TB, url, version string, resources bool) *TSClient {
	t.Helper()
	in := usable(t)
	script := filepath.Join(in.root, tsClientRel)
	if _, err := os.Stat(filepath.Join(in.root, "tools/peers/node_modules/@modelcontextprotocol/client/package.json")); err != nil {
		unavailable(t, err)
	}
	args := []string{script, url, version}
	if !resources {
		args = append(args, "noresources")
	}
	cmd := exec.Command(in.node, args...)
	cmd.Dir = filepath.Dir(script)
	configure(cmd)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	c := &TSClient{cmd: cmd, lines: make(chan TSEvent, 64), stderr: &strings.Builder{}, done: make(chan struct{})}
	cmd.Stderr = &limitedWriter{b: c.stderr, max: 64 << 10}
	if err := cmd.Start(); err != nil {
		t.Fatalf("starting the TypeScript client: %v", err)
	}
	read := make(chan struct{})
	go func() {
		defer close(read)
		defer close(c.lines)
		sc := bufio.NewScanner(stdout)
		sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
		for sc.Scan() {
			var ev TSEvent
			if err := json.Unmarshal(sc.Bytes(), &ev); err != nil {
				ev = TSEvent{Event: "error", What: "output", Message: fmt.Sprintf("not JSON: %q", sc.Text())}
			}
			c.lines <- ev
		}
	}()
	go func() {
		<-read
		c.err = cmd.Wait()
		close(c.done)
	}()
	t.Cleanup(func() { c.stop() })
	return c
}

// Next returns the client's next line, failing the test when the client
// printed an error, exited, or said nothing for 30 seconds.
func (c *TSClient) Next(t testing.TB) TSEvent {
	t.Helper()
	select {
	case ev, ok := <-c.lines:
		if !ok {
			t.Fatalf("the TypeScript client exited before its next line; %s", c.stop())
		}
		if ev.Event == "error" {
			t.Fatalf("the TypeScript client failed at %s: %s; %s", ev.What, ev.Message, c.stop())
		}
		return ev
	case <-time.After(tsClientWait):
		t.Fatalf("the TypeScript client said nothing for %s; %s", tsClientWait, c.stop())
	}
	return TSEvent{}
}

// Wait waits for the client to exit and fails the test unless it exited 0
// having printed nothing more.
func (c *TSClient) Wait(t testing.TB) {
	t.Helper()
	for ev := range c.lines {
		t.Errorf("the TypeScript client printed more: %+v", ev)
	}
	select {
	case <-c.done:
	case <-time.After(tsClientWait):
		t.Fatalf("the TypeScript client did not exit within %s; %s", tsClientWait, c.stop())
	}
	if c.err != nil {
		t.Fatalf("the TypeScript client: %s", c.stop())
	}
}

// stop kills the client, waits until it is reaped and says how it ended,
// with what it wrote on stderr.
func (c *TSClient) stop() string {
	_ = signalGroup(c.cmd.Process.Pid, syscall.SIGKILL)
	go func() {
		for range c.lines {
		}
	}()
	<-c.done
	return fmt.Sprintf("exit: %v; stderr:\n%s", c.err, c.stderr)
}

// limitedWriter keeps the first max bytes written to it.
type limitedWriter struct {
	b   *strings.Builder
	max int
}

func (w *limitedWriter) Write(p []byte) (int, error) {
	if room := w.max - w.b.Len(); room > 0 {
		w.b.Write(p[:min(len(p), room)])
	}
	return len(p), nil
}

// tsServerRel is the script of the TypeScript SDK server below the
// repository root.
const tsServerRel = "tools/peers/tsserver.mjs"

// tsListening starts the line the TypeScript server prints once it listens
// over HTTP, followed by its URL.
const tsListening = "listening on "

// StartTSServerHTTP starts the TypeScript SDK server of TSServerStdio over
// streamable HTTP on a free loopback port (its SDK's createMcpHandler:
// 2026-07-28 requests, and 2025-11-25 ones served statelessly) and returns
// its MCP endpoint URL. The server runs until the test ends; on failure its
// last output is logged. It skips the test when the peers are not
// installed.
func StartTSServerHTTP(t testing.TB) string {
	t.Helper()
	node, args := TSServerStdio(t)
	cmd := exec.Command(node, append(args, "--http")...)
	cmd.Dir = filepath.Dir(args[0])
	p, err := startProcess(cmd, tsListening)
	if err != nil {
		t.Fatalf("starting the TypeScript server: %v", err)
	}
	t.Cleanup(func() {
		p.stop()
		if t.Failed() {
			t.Logf("TypeScript server, last output:\n%s", p.out.String())
		}
	})
	if err := p.waitReady(context.Background(), startTimeout, nil); err != nil {
		t.Fatalf("starting the TypeScript server: %v", err)
	}
	for _, line := range strings.Split(p.out.String(), "\n") {
		if url, ok := strings.CutPrefix(line, tsListening); ok {
			return url
		}
	}
	t.Fatalf("the TypeScript server named no URL:\n%s", p.out.String())
	return ""
}

// TSServerStdio returns the command line that runs a stdio MCP server
// written with the TypeScript SDK's version 2 (@modelcontextprotocol/server,
// tools/peers/tsserver.mjs: tools echo, ask_model, ask_user and add_tool),
// which speaks 2025-11-25 and 2026-07-28. It skips the test when the peers
// are not installed.
func TSServerStdio(t testing.TB) (cmd string, args []string) {
	t.Helper()
	in := usable(t)
	if _, err := os.Stat(filepath.Join(in.root, "tools/peers/node_modules/@modelcontextprotocol/server/package.json")); err != nil {
		unavailable(t, err)
	}
	return in.node, []string{filepath.Join(in.root, tsServerRel)}
}
