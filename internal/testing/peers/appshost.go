package peers

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// appsHostRel is the MCP Apps host script below the repository root.
const appsHostRel = "tools/peers/appshost.mjs"

// appsHostWait bounds a run of the host (the script bounds each of its
// waits at 20 s).
const appsHostWait = 90 * time.Second

// AppsHostEvent is one line the MCP Apps host prints (see
// tools/peers/appshost.mjs).
type AppsHostEvent struct {
	Event    string            `json:"event"`    // tools, view, call, error
	Names    []string          `json:"names"`    // tools: every tool listed
	AppOnly  []string          `json:"appOnly"`  // tools: those the app alone may call
	Views    map[string]string `json:"views"`    // tools: tool name to its view's URI
	URI      string            `json:"uri"`      // view
	MIMEType string            `json:"mimeType"` // view
	UI       map[string]any    `json:"ui"`       // view: the contents' _meta.ui
	Name     string            `json:"name"`     // call: the tool the view called
	OK       bool              `json:"ok"`       // call
	Error    string            `json:"error"`    // call: how it failed
	What     string            `json:"what"`     // error: the step that failed
	Message  string            `json:"message"`  // error
}

// RunAppsHost runs an MCP Apps host written with the extension's own SDK
// (@modelcontextprotocol/ext-apps: an AppBridge over the TypeScript SDK's
// client, and an App as the view) against the streamable HTTP endpoint
// url with the bearer token ("" for none): it lists the tools, reads a
// view, and from the view calls every app-only tool listed and then
// foreign. It returns the lines the host printed, failing the test when
// the host failed. It skips the test when the peers are not installed.
func RunAppsHost(t testing.TB, url, token, foreign string) []AppsHostEvent {
	t.Helper()
	in := usable(t)
	script := filepath.Join(in.root, appsHostRel)
	if _, err := os.Stat(filepath.Join(in.root, "tools/peers/node_modules/@modelcontextprotocol/ext-apps/package.json")); err != nil {
		unavailable(t, err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), appsHostWait)
	defer cancel()
	cmd := exec.CommandContext(ctx, in.node, script, url, token, foreign)
	cmd.Dir = filepath.Dir(script)
	configure(cmd)
	var stdout bytes.Buffer
	stderr := &strings.Builder{}
	cmd.Stdout, cmd.Stderr = &stdout, &limitedWriter{b: stderr, max: 64 << 10}
	err := cmd.Run()
	var events []AppsHostEvent
	sc := bufio.NewScanner(&stdout)
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	for sc.Scan() {
		var ev AppsHostEvent
		if jerr := json.Unmarshal(sc.Bytes(), &ev); jerr != nil {
			t.Fatalf("the MCP Apps host printed %q: %v", sc.Text(), jerr)
		}
		if ev.Event == "error" {
			t.Fatalf("the MCP Apps host failed at %s: %s; stderr:\n%s", ev.What, ev.Message, stderr)
		}
		events = append(events, ev)
	}
	if err != nil {
		t.Fatalf("the MCP Apps host: %v; stderr:\n%s", err, stderr)
	}
	return events
}
