package peers

import (
	"context"
	"encoding/json"
	"errors"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// running reports whether pid names a live process: one that exists and is
// not a zombie waiting to be reaped by someone else.
func running(pid int) bool {
	stat, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	if err != nil {
		return false
	}
	// The state follows the parenthesised command name.
	i := strings.LastIndexByte(string(stat), ')')
	return i < 0 || i+2 >= len(stat) || stat[i+2] != 'Z'
}

// reaped reports whether pid leaves /proc (its parent reaped it) within
// limit. Nothing signals a reap to another goroutine than the one
// waiting, so it looks every 10 ms.
func reaped(pid int, limit time.Duration) bool {
	deadline := time.Now().Add(limit)
	for {
		if _, err := os.Stat(filepath.Join("/proc", strconv.Itoa(pid))); os.IsNotExist(err) {
			return true
		}
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// ends reports whether pid stops running (exits, or is a zombie) within
// limit, looking every 10 ms.
func ends(pid int, limit time.Duration) bool {
	deadline := time.Now().Add(limit)
	for running(pid) {
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(10 * time.Millisecond)
	}
	return true
}

func TestNodeIs22(t *testing.T) {
	node := Node(t)
	if !filepath.IsAbs(node) {
		t.Errorf("Node = %q, want an absolute path", node)
	}
	out, err := exec.CommandContext(t.Context(), node, "--version").Output()
	if err != nil {
		t.Fatal(err)
	}
	if v := strings.TrimSpace(string(out)); !strings.HasPrefix(v, "v22.") {
		t.Fatalf("%s --version = %q, want v22.x", node, v)
	}
	if root := Root(t); !strings.HasPrefix(node, root+string(filepath.Separator)) {
		t.Errorf("Node = %q, not below the repository root %q", node, root)
	}
}

// protocolVersions are the versions a client may ask for; "" is the SDK's
// default, which probes with server/discover and falls back.
var protocolVersions = []string{"", "2025-11-25", "2025-06-18", "2025-03-26"}

// roundTrip initializes a session over transport, lists tools and calls echo.
// closeOK judges the error of closing the session.
func roundTrip(t *testing.T, transport mcp.Transport, version string, closeOK func(error) bool) {
	t.Helper()
	ctx := t.Context()
	client := mcp.NewClient(&mcp.Implementation{Name: "peers-test", Version: "v0.0.0"}, nil)
	cs, err := client.Connect(ctx, transport, &mcp.ClientSessionOptions{ProtocolVersion: version})
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	defer func() {
		if err := cs.Close(); !closeOK(err) {
			t.Errorf("close: %v", err)
		}
	}()
	init := cs.InitializeResult()
	if init == nil || init.ServerInfo == nil || init.ServerInfo.Name != "mcp-servers/everything" {
		t.Fatalf("initialize result = %+v, want server mcp-servers/everything", init)
	}
	if version != "" && init.ProtocolVersion != version {
		t.Errorf("negotiated protocol %q, want %q", init.ProtocolVersion, version)
	}
	tools, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatalf("list tools: %v", err)
	}
	if !slices.ContainsFunc(tools.Tools, func(tl *mcp.Tool) bool { return tl.Name == "echo" }) {
		t.Fatalf("tools/list has no echo among %d tools", len(tools.Tools))
	}
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"message": "ping 42"}})
	if err != nil {
		t.Fatalf("call echo: %v", err)
	}
	if res.IsError || len(res.Content) == 0 {
		t.Fatalf("echo result = %+v", res)
	}
	if text, ok := res.Content[0].(*mcp.TextContent); !ok || !strings.Contains(text.Text, "ping 42") {
		t.Fatalf("echo content = %#v, want text containing %q", res.Content[0], "ping 42")
	}
}

func isNil(err error) bool { return err == nil }

// endedByClose accepts what closing a stdio everything session may say
// (the server ignores the end of its input): the SIGTERM after the short
// wait, or, on a machine too loaded for the child to end within the
// SDK's waits, the SIGKILL after it or the SDK's "unresponsive
// subprocess" when it stopped waiting. That the child really ended, and
// was reaped, the test checks in /proc.
func endedByClose(err error) bool {
	if IsTerminated(err) {
		return true
	}
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		ws, ok := exit.Sys().(syscall.WaitStatus)
		return ok && ws.Signaled() && ws.Signal() == syscall.SIGKILL
	}
	return err.Error() == "unresponsive subprocess"
}

func TestEverythingStdio(t *testing.T) {
	node, args := EverythingStdio(t)
	if node != Node(t) || len(args) != 2 || args[1] != "stdio" || !strings.HasSuffix(args[0], everythingRel) {
		t.Fatalf("EverythingStdio = %q %q", node, args)
	}
	for _, v := range protocolVersions {
		t.Run("protocol="+v, func(t *testing.T) {
			transport := EverythingTransport(t)
			cmd := transport.Command
			roundTrip(t, transport, v, endedByClose)
			// Closing the session ended the child, and the SDK reaps it: its
			// Close may return before its own Wait does (on a loaded machine
			// it stops waiting and kills), so the test looks at /proc, never
			// at cmd.ProcessState, which that Wait writes.
			pid := cmd.Process.Pid
			if running(pid) {
				t.Fatalf("child %d still running", pid)
			}
			if !reaped(pid, 10*time.Second) {
				t.Fatalf("child %d not reaped after the session closed", pid)
			}
		})
	}
}

func TestEverythingHTTP(t *testing.T) {
	s := StartEverythingHTTP(t, t.Context())
	if !strings.HasPrefix(s.URL, "http://127.0.0.1:") || !strings.HasSuffix(s.URL, "/mcp") {
		t.Fatalf("URL = %q", s.URL)
	}
	for _, v := range protocolVersions {
		t.Run("protocol="+v, func(t *testing.T) {
			roundTrip(t, &mcp.StreamableClientTransport{Endpoint: s.URL}, v, isNil)
		})
	}

	first := s.Pid()
	s.Stop()
	s.Stop() // idempotent
	if running(first) {
		t.Fatalf("server %d still running after Stop", first)
	}
	if c, err := net.Dial("tcp", s.Addr); err == nil {
		c.Close()
		t.Fatalf("%s still accepts connections after Stop", s.Addr)
	}

	if err := s.Restart(t.Context()); err != nil {
		t.Fatal(err)
	}
	if s.Pid() == first {
		t.Fatal("Restart kept the old process")
	}
	roundTrip(t, &mcp.StreamableClientTransport{Endpoint: s.URL}, "2025-11-25", isNil)
	if !strings.Contains(s.Output(), "listening on port") {
		t.Errorf("Output lacks the listening line:\n%s", s.Output())
	}
	second := s.Pid()
	s.Stop()
	if running(second) {
		t.Fatalf("restarted server %d still running after Stop", second)
	}
}

func TestEverythingHTTPCleanupStopsServer(t *testing.T) {
	var pid int
	t.Run("inner", func(t *testing.T) {
		s := StartEverythingHTTP(t, t.Context())
		pid = s.Pid()
	})
	if pid == 0 {
		t.Skip("inner test did not start a server")
	}
	if running(pid) {
		t.Fatalf("server %d outlived its test", pid)
	}
}

func TestEverythingHTTPPortInUse(t *testing.T) {
	in := usable(t)
	l, err := net.Listen("tcp", ":0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	port := l.Addr().(*net.TCPAddr).Port
	p, err := startEverythingHTTP(t.Context(), in, port)
	if !errors.Is(err, errPortInUse) {
		if p != nil {
			p.stop()
		}
		t.Fatalf("start on a taken port: %v, want errPortInUse", err)
	}
}

func TestEverythingHTTPCancelledContext(t *testing.T) {
	in := usable(t)
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if _, err := startEverythingHTTP(ctx, in, 1); !errors.Is(err, context.Canceled) {
		t.Fatalf("start with a cancelled context: %v, want context.Canceled", err)
	}
}

// nodeProcess starts node -e script with readiness announced by "ready".
func nodeProcess(t *testing.T, script string) *process {
	t.Helper()
	p, err := startProcess(exec.Command(Node(t), "-e", script), "ready")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(p.stop)
	return p
}

func TestProcessLifecycle(t *testing.T) {
	t.Run("exit before ready", func(t *testing.T) {
		p := nodeProcess(t, `console.error("boom"); process.exit(3)`)
		err := p.waitReady(t.Context(), time.Minute, nil)
		if err == nil || !strings.Contains(err.Error(), "boom") || !strings.Contains(err.Error(), "exit status 3") {
			t.Fatalf("waitReady = %v, want the exit status and output", err)
		}
	})
	t.Run("context done while waiting", func(t *testing.T) {
		p := nodeProcess(t, `setInterval(() => {}, 1000)`)
		ctx, cancel := context.WithCancel(t.Context())
		cancel()
		if err := p.waitReady(ctx, time.Minute, nil); !errors.Is(err, context.Canceled) {
			t.Fatalf("waitReady = %v, want context.Canceled", err)
		}
		if running(p.cmd.Process.Pid) {
			t.Fatal("process still running after a cancelled wait")
		}
	})
	t.Run("SIGTERM ignored", func(t *testing.T) {
		p := nodeProcess(t, `process.on("SIGTERM", () => console.log("ignoring SIGTERM")); console.log("ready"); setInterval(() => {}, 1000)`)
		if err := p.waitReady(t.Context(), time.Minute, nil); err != nil {
			t.Fatal(err)
		}
		p.grace = 10 * time.Millisecond
		p.stop()
		if running(p.cmd.Process.Pid) {
			t.Fatal("process survived stop")
		}
		if p.cmd.ProcessState.String() != "signal: killed" {
			t.Errorf("process ended with %v, want SIGKILL", p.cmd.ProcessState)
		}
	})
	t.Run("grandchild killed with the group", func(t *testing.T) {
		p := nodeProcess(t, `
			const c = require("child_process").spawn(process.execPath, ["-e", "setInterval(() => {}, 1000)"], {stdio: "inherit"});
			console.log("ready " + c.pid);
			setInterval(() => {}, 1000)`)
		if err := p.waitReady(t.Context(), time.Minute, nil); err != nil {
			t.Fatal(err)
		}
		var child int
		for _, line := range strings.Split(p.out.String(), "\n") {
			if s, ok := strings.CutPrefix(line, "ready "); ok {
				child, _ = strconv.Atoi(s)
			}
		}
		if child == 0 {
			t.Fatalf("no child pid in output:\n%s", p.out.String())
		}
		p.stop() // returns only once the grandchild, too, closed the output pipe
		// A process closes its files on its way out, a moment before the
		// kernel marks it exited: /proc is the only sign of that moment.
		if !ends(child, 10*time.Second) {
			t.Fatalf("grandchild %d outlived the group", child)
		}
	})
}

func TestConformance(t *testing.T) {
	ctx := t.Context()
	names := ConformanceScenarios(t, ctx)
	for _, want := range []string{"server-initialize", "ping", "tools-list", "tools-call-image"} {
		if !slices.Contains(names, want) {
			t.Fatalf("scenarios %q lack %s", names, want)
		}
	}
	url := EverythingHTTP(t, ctx)

	t.Run("one scenario", func(t *testing.T) {
		res := RunConformance(t, ctx, url, "--scenario", "ping")
		if len(res.Scenarios) != 1 || res.Scenarios[0].Scenario != "ping" || !res.Scenarios[0].Passed() || res.ExitCode != 0 {
			t.Fatalf("ping: %+v, exit %d\n%s", res.Scenarios, res.ExitCode, res.Output)
		}
		if !strings.Contains(res.Output, "Passed: 1/1") || strings.Contains(res.Output, "\x1b[") {
			t.Errorf("output lacks the summary or has color escapes:\n%q", res.Output)
		}
	})
	t.Run("active suite", func(t *testing.T) {
		res := RunConformance(t, ctx, url)
		for _, r := range res.Scenarios {
			if !slices.Contains(names, r.Scenario) {
				t.Errorf("result for unlisted scenario %q", r.Scenario)
			}
		}
		for _, name := range []string{"server-initialize", "ping", "tools-list"} {
			if r, ok := res.Scenario(name); !ok || !r.Passed() {
				t.Errorf("%s: found %v, failures %q", name, ok, r.Failures())
			}
		}
		// The everything server has none of the suite's fixture tools.
		if r, ok := res.Scenario("tools-call-image"); !ok || r.Passed() || len(r.Failures()) == 0 {
			t.Errorf("tools-call-image: found %v, passed %v; want a failure", ok, r.Passed())
		}
		if res.ExitCode != 1 {
			t.Errorf("exit status %d with failed checks, want 1", res.ExitCode)
		}
	})
}

func TestProcessProbe(t *testing.T) {
	t.Run("probe never succeeds", func(t *testing.T) {
		p := nodeProcess(t, `console.log("ready"); setInterval(() => {}, 1000)`)
		probes := 0
		// Long enough for Node to start and the probe to run on a loaded
		// machine: the probe never succeeds, so the wait always ends at
		// the deadline.
		err := p.waitReady(t.Context(), 3*time.Second, func(context.Context) error {
			probes++
			return errors.New("nobody home")
		})
		if !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), "nobody home") {
			t.Fatalf("waitReady = %v, want the deadline and the last probe error", err)
		}
		if probes == 0 {
			t.Fatal("probe never ran")
		}
		if running(p.cmd.Process.Pid) {
			t.Fatal("process still running after it failed to become ready")
		}
	})
	t.Run("exits after the ready text", func(t *testing.T) {
		p := nodeProcess(t, `console.log("ready"); console.log("changed my mind"); process.exit(1)`)
		err := p.waitReady(t.Context(), time.Minute, func(context.Context) error { return errors.New("not yet") })
		if err == nil || !strings.Contains(err.Error(), "changed my mind") {
			t.Fatalf("waitReady = %v, want the exit and the output", err)
		}
	})
}

func TestProbeHTTP(t *testing.T) {
	ctx := t.Context()
	httpL, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	rawL, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closedAddr := closed.Addr().String()
	closed.Close()

	serve := func(l net.Listener, reply string) chan struct{} {
		done := make(chan struct{})
		go func() {
			defer close(done)
			for {
				c, err := l.Accept()
				if err != nil {
					return
				}
				_, _ = c.Write([]byte(reply))
				c.Close()
			}
		}()
		return done
	}
	httpDone := serve(httpL, "HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n")
	rawDone := serve(rawL, "SSH-2.0-something\r\n")
	defer func() {
		httpL.Close()
		rawL.Close()
		<-httpDone
		<-rawDone
	}()

	tests := []struct {
		name   string
		addr   string
		wantOK bool
	}{
		{"http server", httpL.Addr().String(), true},
		{"other protocol", rawL.Addr().String(), false},
		{"nothing listening", closedAddr, false},
	}
	for _, tt := range tests {
		err := probeHTTP(ctx, tt.addr)
		if (err == nil) != tt.wantOK {
			t.Errorf("%s: probeHTTP = %v, want ok=%v", tt.name, err, tt.wantOK)
		}
	}
}

// TestOAuthExample starts the TypeScript SDK's example OAuth server: its
// MCP endpoint refuses a request without a token, naming its resource
// metadata, which names the demo authorization server, whose metadata
// lists client_secret_post and none; both listen on loopback only.
func TestOAuthExample(t *testing.T) {
	ex := StartOAuthExample(t, t.Context())
	resp, err := http.Post(ex.URL, "application/json", strings.NewReader(`{}`))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized || !strings.Contains(resp.Header.Get("WWW-Authenticate"), "resource_metadata=") {
		t.Fatalf("POST without a token: %s, %q", resp.Status, resp.Header.Get("WWW-Authenticate"))
	}
	var meta struct {
		Issuer  string   `json:"issuer"`
		Methods []string `json:"token_endpoint_auth_methods_supported"`
		Reg     string   `json:"registration_endpoint"`
	}
	getJSON(t, ex.AuthServer+"/.well-known/oauth-authorization-server", &meta)
	if meta.Issuer != ex.Issuer || !slices.Equal(meta.Methods, []string{"client_secret_post", "none"}) || meta.Reg != ex.AuthServer+"/register" {
		t.Fatalf("authorization server metadata %+v", meta)
	}
	for _, u := range []string{ex.URL, ex.AuthServer} {
		addr, err := url.Parse(u)
		if err != nil {
			t.Fatal(err)
		}
		for _, ip := range nonLoopbackAddrs(t) {
			c, err := net.DialTimeout("tcp", net.JoinHostPort(ip, addr.Port()), time.Second)
			if err == nil {
				c.Close()
				t.Errorf("%s listens on %s too", u, ip)
			}
		}
	}
}

func getJSON(t *testing.T, u string, v any) {
	t.Helper()
	resp, err := http.Get(u)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if err := json.NewDecoder(resp.Body).Decode(v); err != nil {
		t.Fatalf("%s: %v", u, err)
	}
}

// nonLoopbackAddrs returns the machine's IPv4 addresses other than
// loopback ones.
func nonLoopbackAddrs(t *testing.T) []string {
	t.Helper()
	addrs, err := net.InterfaceAddrs()
	if err != nil {
		t.Fatal(err)
	}
	var ips []string
	for _, a := range addrs {
		if n, ok := a.(*net.IPNet); ok && !n.IP.IsLoopback() && n.IP.To4() != nil {
			ips = append(ips, n.IP.String())
		}
	}
	return ips
}
