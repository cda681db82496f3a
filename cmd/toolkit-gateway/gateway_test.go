//go:build unix

package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/llmkit/toolkit/internal/testing/testserver"
)

// waitLimit bounds every wait on the gateway process (it starts a child
// and connects to servers; the machine may be busy).
const waitLimit = 2 * time.Minute

// gatewayProcess is the gateway running as a separate process, with its
// JSON log records collected as they come.
type gatewayProcess struct {
	cmd       *exec.Cmd
	mcpURL    string
	healthURL string

	mu      sync.Mutex
	records []map[string]any
	changed chan struct{} // closed and replaced by every record
	exited  chan struct{} // closed once the process is reaped
	exitErr error
}

// startGateway starts `toolkit-gateway serve` with config and waits until it
// listens.
func startGateway(t *testing.T, config string) *gatewayProcess {
	t.Helper()
	cmd := exec.Command(gatewayProgram(t), "serve", "--config", config, "--log-format", "json", "--log-level", "debug")
	cmd.Env = environWithout("OPENAI_")
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	g := &gatewayProcess{cmd: cmd, changed: make(chan struct{}), exited: make(chan struct{})}
	go g.collect(stderr)
	t.Cleanup(func() {
		select {
		case <-g.exited:
		default:
			cmd.Process.Kill()
			<-g.exited
		}
		if t.Failed() {
			g.mu.Lock()
			for _, r := range g.records {
				t.Logf("gateway log: %v", r)
			}
			g.mu.Unlock()
		}
	})
	rec := g.waitLog(t, 0, func(r map[string]any) bool { return r["msg"] == "serving" })
	g.mcpURL, _ = rec["mcp"].(string)
	g.healthURL, _ = rec["health"].(string)
	return g
}

// collect reads the log records until the process closes stderr, then
// reaps it.
func (g *gatewayProcess) collect(r io.Reader) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		rec := map[string]any{}
		if err := json.Unmarshal(sc.Bytes(), &rec); err != nil {
			rec = map[string]any{"msg": "(not JSON) " + sc.Text()}
		}
		g.mu.Lock()
		g.records = append(g.records, rec)
		close(g.changed)
		g.changed = make(chan struct{})
		g.mu.Unlock()
	}
	io.Copy(io.Discard, r)
	err := g.cmd.Wait()
	g.mu.Lock()
	g.exitErr = err
	g.mu.Unlock()
	close(g.exited)
}

// mark returns the position of the next log record.
// terminate sends SIGTERM to the gateway and checks that it exits cleanly
// and that the process child of an upstream is gone with it.
func (g *gatewayProcess) terminate(t *testing.T, child int) {
	t.Helper()
	g.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-g.exited:
	case <-time.After(waitLimit):
		t.Fatal("the gateway did not exit after SIGTERM")
	}
	if g.exitErr != nil {
		t.Errorf("exit: %v", g.exitErr)
	}
	if err := syscall.Kill(child, 0); !errors.Is(err, syscall.ESRCH) {
		t.Errorf("upstream process %d is still there after the gateway exited (kill -0: %v)", child, err)
	}
}

func (g *gatewayProcess) mark() int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return len(g.records)
}

// waitLog waits for a record at or after position from that match accepts.
func (g *gatewayProcess) waitLog(t *testing.T, from int, match func(map[string]any) bool) map[string]any {
	t.Helper()
	deadline := time.NewTimer(waitLimit)
	defer deadline.Stop()
	for {
		r, changed := g.find(from, match)
		if r != nil {
			return r
		}
		select {
		case <-changed:
		case <-g.exited:
			g.mu.Lock()
			err := g.exitErr
			g.mu.Unlock()
			t.Fatalf("the gateway exited (%v) before the awaited log record", err)
		case <-deadline.C:
			t.Fatal("timed out waiting for a log record")
		}
	}
}

// find returns the first log record from the from-th that match
// accepts, or nil and a channel closed at the next record.
func (g *gatewayProcess) find(from int, match func(map[string]any) bool) (map[string]any, <-chan struct{}) {
	g.mu.Lock()
	defer g.mu.Unlock()
	for _, r := range g.records[min(from, len(g.records)):] {
		if match(r) {
			return r, nil
		}
	}
	return nil, g.changed
}

// healthBody is the health report as a client reads it.
type healthBody struct {
	Status    string
	Upstreams []struct{ Namespace, Status, URL string }
	State     string
}

// health fetches the health report.
func (g *gatewayProcess) health(t *testing.T) (int, healthBody) {
	t.Helper()
	resp, err := http.Get(g.healthURL)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var rep healthBody
	if err := json.NewDecoder(resp.Body).Decode(&rep); err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, rep
}

// waitHealth polls the health endpoint of the separate process until it
// answers code, within waitLimit.
func (g *gatewayProcess) waitHealth(t *testing.T, code int) healthBody {
	t.Helper()
	deadline := time.Now().Add(waitLimit)
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for {
		got, rep := g.health(t)
		if got == code {
			return rep
		}
		if time.Now().After(deadline) {
			t.Fatalf("health stayed %d (%+v), want %d", got, rep, code)
		}
		<-tick.C
	}
}

type addIn struct {
	A int `json:"a"`
	B int `json:"b"`
}

type addOut struct {
	Sum int `json:"sum"`
}

// newCalc returns an MCP server with one tool, "add".
func newCalc() *sdk.Server {
	s := sdk.NewServer(&sdk.Implementation{Name: "calc", Version: "1.0.0"}, nil)
	sdk.AddTool(s, &sdk.Tool{Name: "add", Description: "Adds two integers."},
		func(_ context.Context, _ *sdk.CallToolRequest, in addIn) (*sdk.CallToolResult, addOut, error) {
			return nil, addOut{Sum: in.A + in.B}, nil
		})
	return s
}

// startCalc serves newCalc over streamable HTTP on loopback; it can be
// killed and restarted on the same port.
func startCalc(t *testing.T) *testserver.HTTP {
	return testserver.ServeHTTP(t, newCalc(), testserver.Stateful)
}

// headerRecorder serves newCalc over streamable HTTP and keeps the headers
// of every request it receives.
type headerRecorder struct {
	URL string

	mu      sync.Mutex
	headers []http.Header
}

// startHeaderRecorder starts a headerRecorder, stopped when the test ends.
func startHeaderRecorder(t *testing.T) *headerRecorder {
	s := newCalc()
	h := sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return s }, nil)
	rec := &headerRecorder{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rec.mu.Lock()
		rec.headers = append(rec.headers, r.Header.Clone())
		rec.mu.Unlock()
		h.ServeHTTP(w, r)
	}))
	rec.URL = srv.URL + "/mcp"
	t.Cleanup(func() {
		srv.CloseClientConnections()
		srv.Close()
		var sessions []*sdk.ServerSession
		for ss := range s.Sessions() {
			sessions = append(sessions, ss)
		}
		for _, ss := range sessions {
			ss.Close()
		}
	})
	return rec
}

// requests returns the headers of the requests received so far.
func (r *headerRecorder) requests() []http.Header {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.headers)
}

// upstreamReady matches the log record of an upstream becoming ready.
func upstreamReady(namespace string) func(map[string]any) bool {
	return func(r map[string]any) bool {
		return r["msg"] == "upstream state" && r["namespace"] == namespace && r["status"] == "ready"
	}
}

// connectGateway connects an MCP client to the gateway; the session is
// closed when the test ends, before the gateway stops.
func connectGateway(t *testing.T, g *gatewayProcess) *sdk.ClientSession {
	t.Helper()
	client := sdk.NewClient(&sdk.Implementation{Name: "gateway-test", Version: "1"}, nil)
	cs, err := client.Connect(context.Background(), &sdk.StreamableClientTransport{Endpoint: g.mcpURL}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

// promptNames lists the prompts the client sees.
func promptNames(t *testing.T, cs *sdk.ClientSession) []string {
	t.Helper()
	res, err := cs.ListPrompts(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, p := range res.Prompts {
		names = append(names, p.Name)
	}
	slices.Sort(names)
	return names
}

// rawHealth fetches the health endpoint's status and body.
func (g *gatewayProcess) rawHealth(t *testing.T) (int, string) {
	t.Helper()
	resp, err := http.Get(g.healthURL)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, string(body)
}

// writeConfig writes a gateway configuration into dir.
func writeConfig(t *testing.T, dir, text string) string {
	t.Helper()
	file := filepath.Join(dir, "gateway.yaml")
	if err := os.WriteFile(file, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return file
}

// toolNames lists the tools the client sees.
func toolNames(t *testing.T, cs *sdk.ClientSession) []string {
	t.Helper()
	res, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tl := range res.Tools {
		names = append(names, tl.Name)
	}
	slices.Sort(names)
	return names
}

// whoamiOut is the result of the example server's whoami tool.
type whoamiOut struct {
	PID int `json:"pid"`
}

// callJSON calls a tool and decodes its result's text as JSON into v.
func callJSON(t *testing.T, cs *sdk.ClientSession, name string, args any, v any) {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &sdk.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	if res.IsError || len(res.Content) == 0 {
		t.Fatalf("%s: result %+v", name, res)
	}
	text, ok := res.Content[0].(*sdk.TextContent)
	if !ok {
		t.Fatalf("%s: content %T", name, res.Content[0])
	}
	if err := json.Unmarshal([]byte(text.Text), v); err != nil {
		t.Fatalf("%s: %v in %q", name, err, text.Text)
	}
}

// TestGateway runs the gateway as a real process in front of two
// upstreams, the example's own stdio server and an HTTP server, and drives
// it with an MCP client: listing, calls with progress, an upstream killed
// and restarted, a reload that drops an upstream, a refused reload, and a
// shutdown that leaves no child behind.
func TestGateway(t *testing.T) {
	calc := startCalc(t)
	dir := t.TempDir()
	base := fmt.Sprintf(`
listen: 127.0.0.1:0
qualified_names: true
servers:
  - name: local
    command: [%q, mcp-server]
    tools:
      deny: [echo]
`, exampleProgram(t))
	withCalc := base + fmt.Sprintf(`
  - name: calc
    url: %s
    timeouts: {backoff_max: 200ms, reconnect: 10s}
`, calc.URL)
	config := writeConfig(t, dir, withCalc)
	g := startGateway(t, config)

	rep := g.waitHealth(t, http.StatusOK)
	if len(rep.Upstreams) != 2 || rep.Upstreams[0].Namespace != "local" || rep.Upstreams[1].Namespace != "calc" {
		t.Fatalf("health = %+v", rep)
	}

	ctx := context.Background()
	listChanged := make(chan struct{}, 1)
	progress := make(chan string, 10)
	client := sdk.NewClient(&sdk.Implementation{Name: "gateway-test", Version: "1"}, &sdk.ClientOptions{
		ToolListChangedHandler: func(context.Context, *sdk.ToolListChangedRequest) {
			select {
			case listChanged <- struct{}{}:
			default:
			}
		},
		ProgressNotificationHandler: func(_ context.Context, req *sdk.ProgressNotificationClientRequest) {
			progress <- req.Params.Message
		},
	})
	cs, err := client.Connect(ctx, &sdk.StreamableClientTransport{Endpoint: g.mcpURL}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()

	// Both upstreams, qualified, without the denied tool.
	if got, want := toolNames(t, cs), []string{"calc_add", "local_countdown", "local_whoami", "local_word_count"}; !slices.Equal(got, want) {
		t.Fatalf("tools = %v, want %v", got, want)
	}

	var sum addOut
	callJSON(t, cs, "calc_add", map[string]int{"a": 2, "b": 3}, &sum)
	if sum.Sum != 5 {
		t.Errorf("calc_add = %+v", sum)
	}

	// Progress from the stdio upstream reaches the client through the
	// gateway.
	params := &sdk.CallToolParams{Name: "local_countdown", Arguments: map[string]int{"from": 2, "delay_ms": 20}}
	params.SetProgressToken("countdown-1")
	res, err := cs.CallTool(ctx, params)
	if err != nil || res.IsError {
		t.Fatalf("local_countdown: %+v, %v", res, err)
	}
	if text := res.Content[0].(*sdk.TextContent).Text; text != "liftoff" {
		t.Errorf("local_countdown = %q", text)
	}
	for _, want := range []string{"2...", "1..."} {
		select {
		case got := <-progress:
			if got != want {
				t.Errorf("progress %q, want %q", got, want)
			}
		case <-time.After(waitLimit):
			t.Fatalf("no progress %q", want)
		}
	}

	var who whoamiOut
	callJSON(t, cs, "local_whoami", nil, &who)
	if who.PID <= 0 || who.PID == g.cmd.Process.Pid {
		t.Fatalf("whoami = %+v", who)
	}

	// The HTTP upstream dies: the health endpoint says so; it comes back
	// on the same port and the gateway reconnects by itself.
	calc.Kill()
	rep = g.waitHealth(t, http.StatusServiceUnavailable)
	if rep.Upstreams[0].Status != "ready" || rep.Upstreams[1].Status == "ready" {
		t.Errorf("health while calc is down = %+v", rep)
	}
	if err := calc.Start(); err != nil {
		t.Fatal(err)
	}
	g.waitHealth(t, http.StatusOK)
	callJSON(t, cs, "calc_add", map[string]int{"a": 20, "b": 22}, &sum)
	if sum.Sum != 42 {
		t.Errorf("calc_add after the restart = %+v", sum)
	}

	// A reload that drops calc keeps local running untouched.
	writeConfig(t, dir, base)
	mark := g.mark()
	g.cmd.Process.Signal(syscall.SIGHUP)
	rec := g.waitLog(t, mark, func(r map[string]any) bool { return r["msg"] == "configuration reloaded" })
	if rec["kept"] != 1.0 || rec["removed"] != 1.0 || rec["added"] != 0.0 {
		t.Errorf("reload = %v", rec)
	}
	for deadline := time.After(waitLimit); slices.Contains(toolNames(t, cs), "calc_add"); {
		select {
		case <-listChanged:
		case <-deadline:
			t.Fatal("calc_add is still listed after the reload")
		}
	}
	var again whoamiOut
	callJSON(t, cs, "local_whoami", nil, &again)
	if again.PID != who.PID {
		t.Errorf("the reload restarted an unchanged upstream: pid %d, then %d", who.PID, again.PID)
	}

	// A broken configuration is refused and the running one stays.
	writeConfig(t, dir, base+"    bogus: 1\n")
	mark = g.mark()
	g.cmd.Process.Signal(syscall.SIGHUP)
	rec = g.waitLog(t, mark, func(r map[string]any) bool {
		return r["msg"] == "configuration reload refused; keeping the running configuration"
	})
	if errText, _ := rec["error"].(string); !strings.Contains(errText, `gateway.yaml:9: servers[0].bogus: unknown field`) {
		t.Errorf("refused reload error = %q", errText)
	}
	if code, _ := g.health(t); code != http.StatusOK {
		t.Errorf("health after a refused reload = %d", code)
	}

	// SIGTERM: a clean exit, and the stdio child is gone.
	cs.Close()
	g.terminate(t, who.PID)
}

// TestGatewayHeaders checks that the headers of a server's configuration,
// ${VAR} expanded from the gateway's environment, reach the upstream with
// every request: the handshake, the listing and the calls.
func TestGatewayHeaders(t *testing.T) {
	up := startHeaderRecorder(t)
	t.Setenv("EXAMPLE_GATEWAY_TEST_TOKEN", "s3cret")
	config := writeConfig(t, t.TempDir(), fmt.Sprintf(`
listen: 127.0.0.1:0
servers:
  - name: calc
    url: %s
    headers:
      X-Gateway-Test: hello
      Authorization: Bearer ${EXAMPLE_GATEWAY_TEST_TOKEN}
`, up.URL))
	g := startGateway(t, config)
	g.waitLog(t, 0, upstreamReady("calc"))
	before := len(up.requests())

	cs := connectGateway(t, g)
	if names := toolNames(t, cs); !slices.Equal(names, []string{"add"}) {
		t.Fatalf("tools = %v", names)
	}
	var sum addOut
	callJSON(t, cs, "add", map[string]int{"a": 2, "b": 3}, &sum)
	if sum.Sum != 5 {
		t.Errorf("add = %+v", sum)
	}

	reqs := up.requests()
	if before == 0 || len(reqs) <= before {
		t.Fatalf("the upstream saw %d requests before the call and %d in all", before, len(reqs))
	}
	for i, h := range reqs {
		if h.Get("X-Gateway-Test") != "hello" || h.Get("Authorization") != "Bearer s3cret" {
			t.Errorf("request %d: X-Gateway-Test %q, Authorization %q", i, h.Get("X-Gateway-Test"), h.Get("Authorization"))
		}
	}
}

// TestGatewayPrompts checks that the directory named by prompts: is served
// as the user namespace: its prompts are listed and rendered through the
// gateway, and the health report does not show where it is.
func TestGatewayPrompts(t *testing.T) {
	dir := t.TempDir()
	if err := os.Mkdir(filepath.Join(dir, "prompts"), 0o755); err != nil {
		t.Fatal(err)
	}
	greet := "---\ntitle: Greet someone\ndescription: Says hello.\ninput:\n  type: object\n  properties:\n    name: {type: string}\n  required: [name]\n---\nSay hello to {{ .name }}.\n"
	if err := os.WriteFile(filepath.Join(dir, "prompts", "greet.md"), []byte(greet), 0o644); err != nil {
		t.Fatal(err)
	}
	config := writeConfig(t, dir, "listen: 127.0.0.1:0\nprompts: prompts\n")
	g := startGateway(t, config)
	g.waitLog(t, 0, upstreamReady("user"))

	cs := connectGateway(t, g)
	if names := promptNames(t, cs); !slices.Equal(names, []string{"greet"}) {
		t.Fatalf("prompts = %v", names)
	}
	res, err := cs.GetPrompt(context.Background(), &sdk.GetPromptParams{Name: "greet", Arguments: map[string]string{"name": "Ada"}})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Messages) == 0 {
		t.Fatalf("greet rendered no message")
	}
	if text, ok := res.Messages[len(res.Messages)-1].Content.(*sdk.TextContent); !ok || !strings.Contains(text.Text, "Say hello to Ada.") {
		t.Errorf("greet = %+v", res.Messages[len(res.Messages)-1].Content)
	}

	code, body := g.rawHealth(t)
	if code != http.StatusOK || !strings.Contains(body, `"namespace":"user"`) || strings.Contains(body, `"title"`) {
		t.Errorf("health = %d %s", code, body)
	}
	if strings.Contains(body, dir) {
		t.Errorf("the health report shows the prompts directory's path: %s", body)
	}
}

// TestGatewaySample starts the gateway with the sample configuration,
// gateway.yaml, changed only to listen on a free port: its server (the
// library's example program, built and run by the go command) comes up, and its tools
// and prompts are listed and called through it.
func TestGatewaySample(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the example with go run")
	}
	sample, err := os.ReadFile("gateway.yaml")
	if err != nil {
		t.Fatal(err)
	}
	const listen = "\nlisten: 127.0.0.1:8080 "
	if !strings.Contains(string(sample), listen) {
		t.Fatalf("gateway.yaml no longer has %q: update this test", strings.TrimSpace(listen))
	}
	// The copy sits beside the sample, so that its relative paths (the
	// prompts, the server's directory) mean what they mean in the sample.
	f, err := os.CreateTemp(".", ".gateway-test-*.yaml")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.Remove(f.Name()) })
	_, err = f.WriteString(strings.Replace(string(sample), listen, "\nlisten: 127.0.0.1:0 ", 1))
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		t.Fatal(err)
	}

	g := startGateway(t, f.Name())
	g.waitLog(t, 0, upstreamReady("example"))
	g.waitLog(t, 0, upstreamReady("user"))

	cs := connectGateway(t, g)
	if names, want := toolNames(t, cs), []string{"example_countdown", "example_whoami", "example_word_count"}; !slices.Equal(names, want) {
		t.Errorf("tools = %v, want %v", names, want)
	}
	if names, want := promptNames(t, cs), []string{"example_greet", "user_launch_check", "user_summarize"}; !slices.Equal(names, want) {
		t.Errorf("prompts = %v, want %v", names, want)
	}
	res, err := cs.CallTool(context.Background(), &sdk.CallToolParams{Name: "example_countdown", Arguments: map[string]int{"from": 1, "delay_ms": 1}})
	if err != nil || res.IsError || len(res.Content) == 0 {
		t.Fatalf("example_countdown: %+v, %v", res, err)
	}
	if text, _ := res.Content[0].(*sdk.TextContent); text == nil || text.Text != "liftoff" {
		t.Errorf("example_countdown = %+v", res.Content[0])
	}
	var who whoamiOut
	callJSON(t, cs, "example_whoami", nil, &who)
	if code, body := g.rawHealth(t); code != http.StatusOK {
		t.Errorf("health = %d %s", code, body)
	}

	// SIGTERM: a clean exit, and the server (a grandchild, under go run)
	// is gone too.
	cs.Close()
	g.terminate(t, who.PID)
}

// TestGatewayStdio serves the gateway to a client over stdio: the client
// starts it, lists through it, and closing the client ends it.
func TestGatewayStdio(t *testing.T) {
	bin := exampleProgram(t)
	config := writeConfig(t, t.TempDir(), fmt.Sprintf(`
transport: stdio
servers:
  - name: local
    command: [%q, mcp-server]
    tools: {allow: [who*]}
`, bin))
	cmd := exec.Command(gatewayProgram(t), "serve", "--config", config, "--log-level", "warn")
	cmd.Env = environWithout("OPENAI_")
	var stderr syncBuffer
	cmd.Stderr = &stderr
	client := sdk.NewClient(&sdk.Implementation{Name: "stdio-test", Version: "1"}, nil)
	cs, err := client.Connect(context.Background(), &sdk.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatal(err)
	}
	// The upstream connects in the background: wait for its tool.
	deadline := time.Now().Add(waitLimit)
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for !slices.Contains(toolNames(t, cs), "whoami") {
		if time.Now().After(deadline) {
			t.Fatalf("whoami never listed; tools %v", toolNames(t, cs))
		}
		<-tick.C
	}
	if names := toolNames(t, cs); !slices.Equal(names, []string{"whoami"}) {
		t.Errorf("tools = %v", names)
	}
	var who whoamiOut
	callJSON(t, cs, "whoami", nil, &who)
	if err := cs.Close(); err != nil {
		t.Errorf("close: %v", err)
	}
	if cmd.ProcessState == nil || !cmd.ProcessState.Success() {
		t.Errorf("gateway exit: %v\n%s", cmd.ProcessState, stderr.String())
	}
	if err := syscall.Kill(who.PID, 0); !errors.Is(err, syscall.ESRCH) {
		t.Errorf("the stdio child %d outlived the gateway", who.PID)
	}
}

// TestGatewayBadConfig checks that a bad configuration stops the gateway
// at once with a message naming the line and the field.
func TestGatewayBadConfig(t *testing.T) {
	dir := t.TempDir()
	config := writeConfig(t, dir, "listen: 127.0.0.1:0\nservers:\n  - name: up\n    url: ftp://example.com/mcp\n  - name: up\n    command: [x]\n")
	cmd := exec.Command(gatewayProgram(t), "serve", "--config", config)
	var stderr syncBuffer
	cmd.Stderr = &stderr
	err := cmd.Run()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != 1 {
		t.Fatalf("exit: %v, want code 1\n%s", err, stderr.String())
	}
	for _, want := range []string{
		"configuration refused",
		config + `:4: servers[0].url: "ftp://example.com/mcp": use an http, https or stdio URL`,
		config + `:5: servers[1].name: "up" is already the name of servers[0]`,
	} {
		if !strings.Contains(stderr.String(), want) {
			t.Errorf("stderr lacks %q:\n%s", want, stderr.String())
		}
	}

	// Usage errors are told apart.
	cmd = exec.Command(gatewayProgram(t), "serve")
	if err := cmd.Run(); !errors.As(err, &exit) || exit.ExitCode() != 2 {
		t.Errorf("serve without --config: %v, want code 2", err)
	}
}

// TestGatewaySSE serves a client that speaks only the legacy HTTP+SSE
// transport at sse_path, beside the streamable endpoint.
func TestGatewaySSE(t *testing.T) {
	dir := t.TempDir()
	if err := os.Mkdir(filepath.Join(dir, "prompts"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "prompts", "greet.md"), []byte("# Greet someone\n\nSay hello.\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	config := writeConfig(t, dir, "listen: 127.0.0.1:0\nprompts: prompts\nsse_path: /sse\nsession_timeout: 5m\nmax_session_calls: 8\n")
	g := startGateway(t, config)
	g.waitLog(t, 0, upstreamReady("user"))

	client := sdk.NewClient(&sdk.Implementation{Name: "gateway-sse-test", Version: "1"}, nil)
	cs, err := client.Connect(context.Background(), &sdk.SSEClientTransport{Endpoint: strings.TrimSuffix(g.mcpURL, "/mcp") + "/sse"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	if names := promptNames(t, cs); !slices.Equal(names, []string{"greet"}) {
		t.Fatalf("prompts over SSE = %v", names)
	}
	if names := promptNames(t, connectGateway(t, g)); !slices.Equal(names, []string{"greet"}) {
		t.Fatalf("prompts over streamable HTTP = %v", names)
	}
}

// TestGatewayLogsNoSecrets checks that the secrets a configuration may put
// in an upstream's URL (its query, its password) or in a command's
// environment never reach the log, even at debug level, nor /healthz.
func TestGatewayLogsNoSecrets(t *testing.T) {
	calc := startCalc(t)
	u, err := url.Parse(calc.URL)
	if err != nil {
		t.Fatal(err)
	}
	u.User = url.UserPassword("gw", "pass-secret-1")
	u.RawQuery = "token=query-secret-2"
	config := writeConfig(t, t.TempDir(), fmt.Sprintf(`
listen: 127.0.0.1:0
servers:
  - name: local
    command: [%q, mcp-server]
    env: {GW_TEST_API_KEY: env-secret-3}
  - name: calc
    url: %s
`, exampleProgram(t), u))
	g := startGateway(t, config)
	g.waitLog(t, 0, upstreamReady("local"))
	g.waitLog(t, 0, upstreamReady("calc"))
	_, health := g.rawHealth(t)
	g.mu.Lock()
	defer g.mu.Unlock()
	for _, r := range g.records {
		b, _ := json.Marshal(r)
		if bytes.Contains(b, []byte("-secret-")) {
			t.Errorf("a secret reached the log: %s", b)
		}
	}
	if strings.Contains(health, "-secret-") {
		t.Errorf("a secret reached /healthz: %s", health)
	}
}
