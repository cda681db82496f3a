package mcp

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/llmkit/toolkit"
	"github.com/llmkit/toolkit/internal/testing/testserver"
)

func TestParseStdioURL(t *testing.T) {
	valid := []struct {
		url  string
		want StdioCommand
	}{
		{"stdio:npx", StdioCommand{Path: "npx"}},
		{"stdio:///usr/bin/node", StdioCommand{Path: "/usr/bin/node"}},
		{"stdio:/usr/bin/node", StdioCommand{Path: "/usr/bin/node"}},
		{"stdio:my%20server?arg=--flag&arg=x%20y&env=K%3DV&env=EMPTY%3D&dir=/tmp",
			StdioCommand{Path: "my server", Args: []string{"--flag", "x y"}, Env: []string{"K=V", "EMPTY="}, Dir: "/tmp"}},
		{"stdio:///opt/a%3Fb?arg=", StdioCommand{Path: "/opt/a?b", Args: []string{""}}},
		{"stdio:node?arg=a%26b&arg=c%3Dd", StdioCommand{Path: "node", Args: []string{"a&b", "c=d"}}},
	}
	for _, tc := range valid {
		got, err := ParseStdioURL(tc.url)
		if err != nil {
			t.Errorf("%s: %v", tc.url, err)
			continue
		}
		if !sameCommand(got, &tc.want) {
			t.Errorf("%s = %+v, want %+v", tc.url, got, tc.want)
		}
		again, err := ParseStdioURL(got.String())
		if err != nil || !sameCommand(again, got) {
			t.Errorf("%s: canonical form %s parses to %+v, %v", tc.url, got.String(), again, err)
		}
	}
	invalid := []string{
		"", "stdio:", "stdio://", "stdio:///", "stdio://npx", "stdio://host/bin/x", "stdio://user@/bin/x",
		"STDIO:npx", "http://x", "stdio:npx#frag", "stdio:./npx", "stdio:a%2Fb", "stdio:..", "stdio:.",
		"stdio:///usr/../bin/x", "stdio:///usr/bin/", "stdio:npx?args=x", "stdio:npx?env=NOEQUALS",
		"stdio:npx?env=%3Dv", "stdio:npx?dir=relative", "stdio:npx?dir=/a&dir=/b", "stdio:npx?dir=/a/../b",
		"stdio:npx?arg=%ZZ", "stdio:npx?a;b", "stdio:np%00x", "stdio:npx?arg=%00", "stdio:%ZZ",
	}
	for _, u := range invalid {
		if c, err := ParseStdioURL(u); !errors.Is(err, toolkit.ErrBadParameter) {
			t.Errorf("%q: %+v, %v; want ErrBadParameter", u, c, err)
		}
	}
	// Environment values never appear in errors.
	if _, err := ParseStdioURL("stdio:npx?env=TOKEN%3Dsecret&bad=1"); err == nil || strings.Contains(err.Error(), "secret") {
		t.Errorf("error leaks the environment: %v", err)
	}
}

func sameCommand(a, b *StdioCommand) bool {
	return a.Path == b.Path && a.Dir == b.Dir && slices.Equal(a.Args, b.Args) && slices.Equal(a.Env, b.Env)
}

func FuzzParseStdioURL(f *testing.F) {
	for _, s := range []string{"stdio:npx", "stdio:///usr/bin/node?arg=a&env=K%3DV&dir=/tmp", "stdio://x", "stdio:a?b=c", "stdio:%2F", "stdio:////x"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		c, err := ParseStdioURL(s)
		if err != nil {
			if !errors.Is(err, toolkit.ErrBadParameter) {
				t.Fatalf("%q: error %v does not wrap ErrBadParameter", s, err)
			}
			return
		}
		if c.Path == "" || strings.ContainsRune(c.Path, 0) {
			t.Fatalf("%q: bad command %q", s, c.Path)
		}
		again, err := ParseStdioURL(c.String())
		if err != nil || !sameCommand(again, c) {
			t.Fatalf("%q: canonical %q parses to %+v, %v; want %+v", s, c.String(), again, err, c)
		}
	})
}

// FuzzParseEndpoint checks that no connector URL makes parseEndpoint
// panic, that its errors wrap ErrBadParameter, that what it accepts is
// consistent (an http or https URL with a host, SSE exactly for a path
// ending in /sse, or a stdio command), and that neither its error nor the
// URL it shows in logs carries the URL's password or query, where secrets
// go.
func FuzzParseEndpoint(f *testing.F) {
	for _, s := range []string{
		"http://h/mcp", "https://user:pass-w0rd-secret@h:8443/mcp?token=query-secret-1", "http://h/v1/sse?x=1",
		"http://h/sse/", "stdio:npx?env=K%3Dquery-secret-2", "ftp://u:pass-w0rd-secret@h/x?k=query-secret-3",
		"http://h/x#frag?query-secret-4", "stdio:///c%zzmd?env=K%3Dquery-secret-5", "http://[::1]:0/mcp", "http://%zz/", "stdio:", "", "h/mcp",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		var secrets []string
		if i := strings.IndexAny(raw, "?"); i >= 0 {
			if q := raw[i+1:]; len(q) >= 8 && !strings.Contains(raw[:i], q) {
				secrets = append(secrets, q)
			}
		}
		if u, err := url.Parse(raw); err == nil && u.User != nil {
			if p, ok := u.User.Password(); ok && len(p) >= 8 && strings.Count(raw, p) == 1 {
				secrets = append(secrets, p)
			}
		}
		ep, err := parseEndpoint(raw)
		shown := ""
		if err != nil {
			if !errors.Is(err, toolkit.ErrBadParameter) {
				t.Fatalf("%q: error %v does not wrap ErrBadParameter", raw, err)
			}
			shown = err.Error()
		} else {
			shown = ep.display
			switch ep.kind {
			case endpointStdio:
				if ep.stdio == nil || !strings.HasPrefix(raw, StdioScheme+":") {
					t.Fatalf("%q: taken for a stdio command: %+v", raw, ep)
				}
			case endpointHTTP, endpointSSE:
				u, err := url.Parse(ep.url)
				if err != nil || ep.url != raw || u.Scheme != "http" && u.Scheme != "https" || u.Host == "" || u.Fragment != "" {
					t.Fatalf("%q: taken for an HTTP URL: %+v", raw, ep)
				}
				if (ep.kind == endpointSSE) != (path.Base(u.Path) == "sse") {
					t.Fatalf("%q: kind %d for the path %q", raw, ep.kind, u.Path)
				}
			default:
				t.Fatalf("%q: kind %d", raw, ep.kind)
			}
		}
		for _, s := range secrets {
			if strings.Contains(shown, s) {
				t.Fatalf("%q: %q shows the secret %q", raw, shown, s)
			}
		}
	})
}

func ExampleStdioCommand() {
	c := &StdioCommand{Path: "/usr/local/bin/files", Args: []string{"--root", "/srv/data"}, Env: []string{"LOG=debug"}}
	fmt.Println(c)
	back, _ := ParseStdioURL(c.String())
	fmt.Println(back.Path, back.Args, back.Env)
	// Output:
	// stdio:///usr/local/bin/files?arg=--root&arg=%2Fsrv%2Fdata&env=LOG%3Ddebug
	// /usr/local/bin/files [--root /srv/data] [LOG=debug]
}

func TestParseEndpoint(t *testing.T) {
	tests := []struct {
		url     string
		kind    endpointKind
		display string
	}{
		{"http://h/mcp", endpointHTTP, "http://h/mcp"},
		{"https://user:pw@h:8443/mcp?token=s", endpointHTTP, "https://h:8443/mcp"},
		{"http://h/sse", endpointSSE, "http://h/sse"},
		{"http://h/v1/sse?x=1", endpointSSE, "http://h/v1/sse"},
		{"http://h/sse/", endpointSSE, "http://h/sse/"},
		{"http://h/ssex", endpointHTTP, "http://h/ssex"},
		{"stdio:npx?env=K%3Dsecret", endpointStdio, "stdio:npx"},
	}
	for _, tc := range tests {
		ep, err := parseEndpoint(tc.url)
		if err != nil || ep.kind != tc.kind || ep.display != tc.display {
			t.Errorf("%s: %+v, %v", tc.url, ep, err)
		}
	}
	for _, u := range []string{"", "ftp://h/x", "http://", "http:///path", "http://h/x#f", "h/mcp", "://x", "stdio:"} {
		if _, err := parseEndpoint(u); !errors.Is(err, toolkit.ErrBadParameter) {
			t.Errorf("%q: %v, want ErrBadParameter", u, err)
		}
	}
	if _, err := New("ftp://x", "c", "1"); !errors.Is(err, toolkit.ErrBadParameter) {
		t.Errorf("New with ftp: %v", err)
	}
	if _, err := New("http://x", "", "1"); !errors.Is(err, toolkit.ErrBadParameter) {
		t.Errorf("New without a client name: %v", err)
	}
}

// stdioURL returns the URL that runs this test binary as a stdio server
// with the given behaviour.
func stdioURL(t testing.TB, mode string) string {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	return (&StdioCommand{Path: exe, Env: []string{testserver.StdioEnv + "=" + mode}, Dir: os.TempDir()}).String()
}

func requireUnix(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("process checks use /proc")
	}
}

// gone reports whether no live process has the id pid (a zombie counts as
// gone: it holds no resources but its entry).
func gone(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return true
	}
	// The state follows the command name in parentheses.
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	return i >= 0 && i+2 < len(s) && (s[i+2] == 'Z' || s[i+2] == 'X')
}

// waitGone waits for pid to die: a process that is not our child cannot
// be waited for, so its state is polled.
func waitGone(t testing.TB, pid int) {
	t.Helper()
	deadline := time.Now().Add(waitLimit)
	for !gone(pid) {
		if time.Now().After(deadline) {
			t.Fatalf("process %d is still alive", pid)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func serverPids(t testing.TB, r *running) []int {
	t.Helper()
	out, err := call(t, context.Background(), r.Connector, "pid", `{}`)
	mustNotErr(t, err)
	var pids []int
	for _, f := range strings.Fields(read(t, out)) {
		p, err := strconv.Atoi(f)
		mustNotErr(t, err)
		pids = append(pids, p)
	}
	return pids
}

func TestStdioServer(t *testing.T) {
	requireUnix(t)
	logs := newLogCapture()
	r := start(t, stdioURL(t, testserver.StdioServe), false, OptLogger(slogNew(logs)))
	if st := r.State(); st.Name != "stdio-testserver" {
		t.Errorf("state = %+v", st)
	}
	out, err := call(t, context.Background(), r.Connector, "echo", `{"text":"via stdio"}`)
	mustNotErr(t, err)
	if read(t, out) != "via stdio" {
		t.Error("echo over stdio failed")
	}
	res, _ := r.ListResources(context.Background())
	if len(res) != 2 {
		t.Errorf("resources = %v", res)
	}
	logs.waitFor(t, "server stderr", "line=testserver: serve mode")
	logs.waitFor(t, "server stderr", "line=second line")
	pid := serverPids(t, r)[0]
	mustNotErr(t, r.stop(t))
	if !gone(pid) {
		t.Errorf("server process %d outlived Run", pid)
	}
}

func TestStdioProcessGroupKilled(t *testing.T) {
	requireUnix(t)
	r := start(t, stdioURL(t, testserver.StdioSpawn), false)
	pids := serverPids(t, r)
	if len(pids) != 2 {
		t.Fatalf("pids = %v", pids)
	}
	mustNotErr(t, r.stop(t))
	if !gone(pids[0]) {
		t.Errorf("server process %d outlived Run", pids[0])
	}
	// The server's own child ignores SIGTERM and stdin: only the kill of
	// the process group ends it.
	waitGone(t, pids[1])
}

func TestStdioStubbornServerKilled(t *testing.T) {
	requireUnix(t)
	r := start(t, stdioURL(t, testserver.StdioStubborn), false, OptTimeouts(Timeouts{Terminate: 20 * time.Millisecond}))
	pid := serverPids(t, r)[0]
	mustNotErr(t, r.stop(t))
	if !gone(pid) {
		t.Errorf("server process %d outlived Run", pid)
	}
}

func TestStdioServerExits(t *testing.T) {
	requireUnix(t)
	logs := newLogCapture()
	r := start(t, stdioURL(t, testserver.StdioExit), true, OptLogger(slogNew(logs)), fastBackoff, OptReconnect(Reconnect{MaxAttempts: 2}))
	var err error
	select {
	case err = <-r.done:
		close(r.done)
	case <-time.After(waitLimit):
		t.Fatal("Run did not give up")
	}
	if !errors.Is(err, toolkit.ErrUnavailable) || !strings.Contains(err.Error(), "exit status 3") {
		t.Errorf("Run: %v", err)
	}
	if st := r.states.last(); st.Status != toolkit.StatusFailed {
		t.Errorf("state = %+v", st)
	}
	logs.waitFor(t, "line=testserver: exit mode")
}

func TestStdioMissingProgram(t *testing.T) {
	for _, u := range []string{"stdio:///nonexistent/program", "stdio:no-such-program-anywhere"} {
		r := start(t, u, true, fastBackoff)
		select {
		case err := <-r.done:
			close(r.done)
			if !errors.Is(err, toolkit.ErrUnavailable) {
				t.Errorf("%s: Run: %v", u, err)
			}
		case <-time.After(waitLimit):
			t.Fatalf("%s: Run does not give up", u)
		}
		if r.link.dials.Load() != 1 {
			t.Errorf("%s: %d attempts, want 1", u, r.link.dials.Load())
		}
	}
}
