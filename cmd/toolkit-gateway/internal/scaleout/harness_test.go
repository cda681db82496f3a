package scaleout

import (
	"context"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"text/template"
	"time"

	"github.com/llmkit/toolkit/internal/testing/peers"
)

// Bounds of the waits; none is expected to come near its bound.
const (
	buildTimeout = 5 * time.Minute  // go build of a program
	readyTimeout = 60 * time.Second // a replica or haproxy becoming ready
	pollInterval = 20 * time.Millisecond
	leakTimeout  = 15 * time.Second // children of killed replicas going away
)

// The programs the tests run: the gateway, and the library's example
// program, whose stdio server mode is the replicas' upstream.
const (
	gatewayPkg = "github.com/llmkit/toolkit/cmd/toolkit-gateway"
	examplePkg = "github.com/llmkit/toolkit/example"
)

// workDir holds the built programs and every test's files; TestMain
// removes it.
var workDir string

// build builds pkg into workDir/name.
func build(pkg, name string) (string, error) {
	goBin, err := exec.LookPath("go")
	if err != nil {
		goBin = filepath.Join(runtime.GOROOT(), "bin", "go")
	}
	bin := filepath.Join(workDir, name)
	ctx, cancel := context.WithTimeout(context.Background(), buildTimeout)
	defer cancel()
	out, err := exec.CommandContext(ctx, goBin, "build", "-o", bin, pkg).CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("go build %s: %v\n%s", pkg, err, out)
	}
	return bin, nil
}

// The programs, each built once for the whole test binary.
var (
	buildGateway = sync.OnceValues(func() (string, error) { return build(gatewayPkg, "toolkit-gateway") })
	buildExample = sync.OnceValues(func() (string, error) { return build(examplePkg, "example") })
)

// gatewayBinary returns the path of the built gateway.
func gatewayBinary(t testing.TB) string {
	t.Helper()
	bin, err := buildGateway()
	if err != nil {
		t.Fatal(err)
	}
	return bin
}

// exampleBinary returns the path of the built example program.
func exampleBinary(t testing.TB) string {
	t.Helper()
	bin, err := buildExample()
	if err != nil {
		t.Fatal(err)
	}
	return bin
}

// haproxyEnv names an haproxy binary to use instead of the one found on
// PATH or in /usr/sbin.
const haproxyEnv = "HAPROXY"

// haproxyBinary returns the haproxy binary: $HAPROXY, or haproxy on PATH
// or in /usr/sbin. When there is none it skips the test, or fails it when
// PEERS_REQUIRED=1.
func haproxyBinary(t testing.TB) string {
	t.Helper()
	candidates := []string{os.Getenv(haproxyEnv)}
	if candidates[0] == "" {
		// Debian installs it in /usr/sbin, not on every user's PATH.
		candidates = []string{"haproxy", "/usr/sbin/haproxy", "/usr/local/sbin/haproxy"}
	}
	for _, c := range candidates {
		if p, err := exec.LookPath(c); err == nil {
			return p
		}
	}
	msg := fmt.Sprintf("haproxy not found (%s): run `make scaleout` (or scripts/debian-tool.sh haproxy) to install it, or set %s",
		strings.Join(candidates, ", "), haproxyEnv)
	if os.Getenv(peers.RequiredEnv) == "1" {
		t.Fatal(msg)
	}
	t.Skip(msg)
	return ""
}

// testDir returns a fresh directory under workDir for t's files, short
// enough for a Unix socket path.
func testDir(t testing.TB) string {
	t.Helper()
	dir, err := os.MkdirTemp(workDir, "t")
	if err != nil {
		t.Fatal(err)
	}
	return dir
}

// replica is one running gateway.
type replica struct {
	*process
	name string
	addr string // host:port of its HTTP listener
}

// gatewayConfig is a replica's configuration: the example program's stdio
// server mode as the one upstream, under the namespace "example".
const gatewayConfig = `listen: 127.0.0.1:0
path: /mcp
stateless: {{.Stateless}}
qualified_names: true
startup_wait: 30s
servers:
  - name: example
    command: [{{printf "%q" .Binary}}, mcp-server]
    timeouts:
      connect: 30s
      call: 20s
`

// startReplicas starts n gateways from one configuration and waits until
// each one's /healthz answers 200 (its upstream is ready).
func startReplicas(t testing.TB, dir string, n int, stateless bool) []*replica {
	t.Helper()
	cfgFile := filepath.Join(dir, "gateway.yaml")
	writeTemplate(t, cfgFile, gatewayConfig, map[string]any{"Binary": exampleBinary(t), "Stateless": stateless})
	cfgFiles := make([]string, n)
	for i := range cfgFiles {
		cfgFiles[i] = cfgFile
	}
	return startGateways(t, cfgFiles, nil)
}

// startGateways starts a gateway on each configuration file and waits
// until each one's /healthz answers 200. onLine, if not nil, sees every
// line of output of replica i, as start's does.
func startGateways(t testing.TB, cfgFiles []string, onLine func(i int, line string)) []*replica {
	t.Helper()
	bin := gatewayBinary(t)
	rs := make([]*replica, len(cfgFiles))
	addrs := make([]chan string, len(cfgFiles))
	for i, cfgFile := range cfgFiles {
		name := fmt.Sprintf("r%d", i)
		addrs[i] = make(chan string, 1)
		cmd := exec.Command(bin, "serve", "--config", cfgFile, "--log-format", "json", "--log-level", "info")
		found := addrs[i]
		rs[i] = &replica{name: name, process: start(t, "replica "+name, cmd, func(line string) {
			if addr, ok := servingAddr(line); ok {
				select {
				case found <- addr:
				default:
				}
			}
			if onLine != nil {
				onLine(i, line)
			}
		})}
	}
	ctx, cancel := context.WithTimeout(context.Background(), readyTimeout)
	defer cancel()
	for i, r := range rs {
		select {
		case r.addr = <-addrs[i]:
		case <-r.exited:
			<-r.read
			t.Fatalf("replica %s exited before it listened (%v):\n%s", r.name, r.err, r.output())
		case <-ctx.Done():
			t.Fatalf("replica %s did not listen within %v:\n%s", r.name, readyTimeout, r.output())
		}
	}
	for _, r := range rs {
		url := "http://" + r.addr + "/healthz"
		err := poll(ctx, r.process, func() error {
			return healthy(ctx, url)
		})
		if err != nil {
			t.Fatalf("replica %s not healthy: %v\n%s", r.name, err, r.output())
		}
	}
	return rs
}

// servingAddr returns the address of the MCP listener from the gateway's
// JSON log line announcing it.
func servingAddr(line string) (string, bool) {
	var rec struct {
		Msg  string `json:"msg"`
		Addr string `json:"addr"`
		MCP  string `json:"mcp"`
	}
	if json.Unmarshal([]byte(line), &rec) != nil || rec.Msg != "serving" || rec.MCP == "" {
		return "", false
	}
	return rec.Addr, rec.Addr != ""
}

// healthy reports whether url answers 200.
func healthy(ctx context.Context, url string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 4<<10))
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("%s: %s: %s", url, resp.Status, body)
	}
	return nil
}

// poll calls cond every pollInterval until it succeeds, p exits or ctx
// ends, and returns the last error then.
func poll(ctx context.Context, p *process, cond func() error) error {
	tick := time.NewTicker(pollInterval)
	defer tick.Stop()
	for {
		err := cond()
		if err == nil {
			return nil
		}
		select {
		case <-tick.C:
		case <-p.exited:
			return fmt.Errorf("%s exited (%v); last check: %w", p.name, p.err, err)
		case <-ctx.Done():
			return fmt.Errorf("%w; last check: %w", ctx.Err(), err)
		}
	}
}

// haproxy is a running haproxy and what the test reads from it.
type haproxy struct {
	*process
	url    string // the MCP endpoint through haproxy
	socket string // its stats socket
}

// haproxyConfig balances the replicas round robin, checks their /livez
// and retries a request only when its connection could not be opened (the
// replica cannot have seen it), on another replica. Each request opens its
// own connection to a replica (http-server-close), so a request sent after
// a replica died is always such a refused connection, never one written
// to a pooled connection the replica took down with it; and response
// headers go out at once (http-no-delay), else the headers of an SSE
// stream that has no event yet reach the client 200 ms late (a session
// took 210 ms to open instead of 5 ms). With Sticky, a session stays on
// the replica that created it: the Mcp-Session-Id a replica answers with
// is stored and requests carrying it go there.
const haproxyConfig = `global
    stats socket {{.Socket}} mode 600 level admin
    maxconn 4096

defaults
    mode http
    timeout connect 1s
    timeout client 5m
    timeout server 5m
    timeout check 2s
    retries 3
    retry-on conn-failure
    option redispatch 1
    option http-no-delay
    option http-server-close

frontend mcp
    bind fd@3
    default_backend gateways

backend gateways
    balance roundrobin
    option httpchk GET /livez
    http-check expect status 200
    default-server check inter 200ms fall 3 rise 2
{{- if .Sticky}}
    stick-table type string len 64 size 100k expire 30m
    stick match req.hdr(Mcp-Session-Id)
    stick store-response res.hdr(Mcp-Session-Id)
{{- end}}
{{- range .Replicas}}
    server {{.name}} {{.addr}}
{{- end}}
`

// startHaproxy starts haproxy in front of rs, on a listener the test opens
// (handed to haproxy as file descriptor 3, so no port is guessed), and
// waits until its stats show every replica up.
func startHaproxy(t testing.TB, dir string, rs []*replica, sticky bool) *haproxy {
	t.Helper()
	bin := haproxyBinary(t)
	h := &haproxy{socket: filepath.Join(dir, "haproxy.sock")}
	var servers []map[string]string
	for _, r := range rs {
		servers = append(servers, map[string]string{"name": r.name, "addr": r.addr})
	}
	cfgFile := filepath.Join(dir, "haproxy.cfg")
	writeTemplate(t, cfgFile, haproxyConfig, map[string]any{"Socket": h.socket, "Sticky": sticky, "Replicas": servers})

	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	h.url = "http://" + ln.Addr().String() + "/mcp"
	lf, err := ln.(*net.TCPListener).File()
	ln.Close()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "-db", "-f", cfgFile)
	cmd.ExtraFiles = []*os.File{lf}
	h.process = start(t, "haproxy", cmd, nil)
	lf.Close() // haproxy holds the listener now

	ctx, cancel := context.WithTimeout(context.Background(), readyTimeout)
	defer cancel()
	err = poll(ctx, h.process, func() error {
		st, err := h.stats(ctx)
		if err != nil {
			return err
		}
		for _, r := range rs {
			if s := st[r.name]["status"]; s != "UP" {
				return fmt.Errorf("server %s is %q", r.name, s)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatalf("haproxy not ready: %v\n%s", err, h.output())
	}
	return h
}

// stats returns haproxy's statistics of the backend's servers, by server
// name, each a map from the CSV column (status, stot, hrsp_2xx, ...) to its
// value. The backend's own row is under "BACKEND".
func (h *haproxy) stats(ctx context.Context) (map[string]map[string]string, error) {
	var d net.Dialer
	conn, err := d.DialContext(ctx, "unix", h.socket)
	if err != nil {
		return nil, err
	}
	defer conn.Close()
	if dl, ok := ctx.Deadline(); ok {
		_ = conn.SetDeadline(dl)
	}
	if _, err := io.WriteString(conn, "show stat\n"); err != nil {
		return nil, err
	}
	data, err := io.ReadAll(io.LimitReader(conn, 1<<20))
	if err != nil {
		return nil, err
	}
	text := strings.TrimPrefix(strings.TrimSpace(string(data)), "# ")
	rows, err := csv.NewReader(strings.NewReader(text)).ReadAll()
	if err != nil {
		return nil, fmt.Errorf("show stat: %w: %q", err, text)
	}
	if len(rows) < 2 {
		return nil, fmt.Errorf("show stat: no rows: %q", text)
	}
	head := rows[0]
	out := map[string]map[string]string{}
	for _, row := range rows[1:] {
		rec := map[string]string{}
		for i, v := range row {
			if i < len(head) {
				rec[head[i]] = v
			}
		}
		if rec["pxname"] == "gateways" {
			out[rec["svname"]] = rec
		}
	}
	return out, nil
}

// counter returns a numeric column of a stats row, 0 when empty.
func counter(row map[string]string, col string) int {
	n, _ := strconv.Atoi(row[col])
	return n
}

// writeTemplate writes the template text executed with data to file.
func writeTemplate(t testing.TB, file, text string, data any) {
	t.Helper()
	var b strings.Builder
	if err := template.Must(template.New(filepath.Base(file)).Parse(text)).Execute(&b, data); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(file, []byte(b.String()), 0o600); err != nil {
		t.Fatal(err)
	}
}

// checkNoLeftovers fails t unless every process running bin is gone within
// leakTimeout: the replicas, and the upstream each one started (which
// outlives a killed replica only until it reads the end of its input).
func checkNoLeftovers(t testing.TB, bin string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), leakTimeout)
	defer cancel()
	tick := time.NewTicker(pollInterval)
	defer tick.Stop()
	for {
		left := running(bin)
		if len(left) == 0 {
			return
		}
		select {
		case <-tick.C:
		case <-ctx.Done():
			t.Errorf("processes of %s still running after %v: %v", bin, leakTimeout, left)
			return
		}
	}
}

// running lists the live processes whose executable is bin (zombies have
// none and are not listed).
func running(bin string) []string {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	var out []string
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		exe, err := os.Readlink(filepath.Join("/proc", e.Name(), "exe"))
		if err != nil || exe != bin {
			continue
		}
		cmdline, _ := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		out = append(out, fmt.Sprintf("%d %s", pid, strings.ReplaceAll(strings.TrimSpace(string(cmdline)), "\x00", " ")))
	}
	return out
}
