package peers

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

const (
	// startTimeout bounds how long the HTTP server may take to listen.
	startTimeout = 30 * time.Second
	// listeningText is what the everything server writes once it listens.
	listeningText = "Streamable HTTP Server listening on port"
	// portInUseText is what it writes when the port is taken.
	portInUseText = "already in use"
	// portAttempts bounds the retries when a free port is taken between
	// choosing it and the server binding it.
	portAttempts = 5
)

var errPortInUse = errors.New("port already in use")

// EverythingStdio returns the command line that runs the everything server
// over stdio with Node 22: the absolute path of node and its arguments. It
// skips the test when the peers are not installed.
func EverythingStdio(t testing.TB) (cmd string, args []string) {
	t.Helper()
	in := usable(t)
	return in.node, []string{in.everything, "stdio"}
}

// EverythingCommand returns an unstarted command that runs the everything
// server over stdio, ready for mcp.CommandTransport. The child gets a process
// group of its own and is killed if the test binary dies. Its stderr is
// discarded unless the caller sets cmd.Stderr. Closing the client session
// that started it reaps it.
func EverythingCommand(t testing.TB) *exec.Cmd {
	t.Helper()
	node, args := EverythingStdio(t)
	cmd := exec.Command(node, args...)
	cmd.Dir = lookup().root
	configure(cmd)
	return cmd
}

// stdioTerminate is how long closing a stdio session waits after closing
// the server's stdin before it sends SIGTERM. The everything server keeps
// timers running after a session starts and does not exit at end of input,
// so every close ends with SIGTERM; a short wait keeps tests quick.
const stdioTerminate = 100 * time.Millisecond

// EverythingTransport returns a client transport that starts the everything
// server over stdio (see [EverythingCommand]). Because that server ignores
// the end of its input, closing the session stops it with SIGTERM after a
// short wait, and ClientSession.Close reports "signal: terminated"; use
// [IsTerminated] to accept that outcome.
func EverythingTransport(t testing.TB) *mcp.CommandTransport {
	t.Helper()
	return &mcp.CommandTransport{Command: EverythingCommand(t), TerminateDuration: stdioTerminate}
}

// IsTerminated reports whether err is nil or says the process ended on
// SIGTERM, the normal end of a stdio everything server.
func IsTerminated(err error) bool {
	if err == nil {
		return true
	}
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		if ws, ok := exit.Sys().(syscall.WaitStatus); ok {
			return ws.Signaled() && ws.Signal() == syscall.SIGTERM
		}
	}
	return false
}

// EverythingHTTP starts the everything server over streamable HTTP on a free
// loopback port and returns its MCP endpoint URL. ctx bounds the start only;
// the server runs until the test ends. See [StartEverythingHTTP].
func EverythingHTTP(t testing.TB, ctx context.Context) string {
	t.Helper()
	return StartEverythingHTTP(t, ctx).URL
}

// Server is an everything server running over streamable HTTP.
type Server struct {
	// URL is the MCP endpoint, http://127.0.0.1:PORT/mcp.
	URL string
	// Addr is the host:port the endpoint is reached at.
	Addr string

	in   installation
	port int

	mu sync.Mutex
	p  *process
}

// StartEverythingHTTP starts the everything server over streamable HTTP on a
// free port and waits until it listens, it exits, ctx is done or a bounded
// time passes; anything but listening fails the test. The server binds every
// interface; clients use the loopback address in URL. When the test ends the
// server's process group is stopped and reaped, and on failure its last
// output is logged. It skips the test when the peers are not installed.
func StartEverythingHTTP(t testing.TB, ctx context.Context) *Server {
	t.Helper()
	s := &Server{in: usable(t)}
	var err error
	for range portAttempts {
		var port int
		if port, err = freePort(); err != nil {
			break
		}
		if s.p, err = startEverythingHTTP(ctx, s.in, port); !errors.Is(err, errPortInUse) {
			s.port = port
			break
		}
	}
	if err != nil {
		t.Fatalf("start everything server over HTTP: %v", err)
	}
	s.Addr = net.JoinHostPort("127.0.0.1", strconv.Itoa(s.port))
	s.URL = "http://" + s.Addr + "/mcp"
	t.Cleanup(func() {
		s.Stop()
		if t.Failed() {
			t.Logf("everything server at %s, last output:\n%s", s.URL, s.Output())
		}
	})
	return s
}

// Pid returns the process id of the current server process.
func (s *Server) Pid() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.p.cmd.Process.Pid
}

// Output returns the last lines the current server process wrote.
func (s *Server) Output() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.p.out.String()
}

// Stop ends the server (SIGTERM to its process group, SIGKILL after a grace
// period) and reaps it. Clients see their connections fail, as they would
// if the server crashed. Stop is idempotent.
func (s *Server) Stop() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.p.stop()
}

// Restart stops the server and starts a fresh one on the same port, with no
// sessions, and waits until it listens. ctx bounds the start.
func (s *Server) Restart(ctx context.Context) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.p.stop()
	p, err := startEverythingHTTP(ctx, s.in, s.port)
	if err != nil {
		return fmt.Errorf("restart everything server on port %d: %w", s.port, err)
	}
	s.p = p
	return nil
}

// startEverythingHTTP starts one server process on port and waits until it
// listens.
func startEverythingHTTP(ctx context.Context, in installation, port int) (*process, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	cmd := exec.Command(in.node, in.everything, "streamableHttp")
	cmd.Dir = in.root
	cmd.Env = append(os.Environ(), "PORT="+strconv.Itoa(port))
	p, err := startProcess(cmd, listeningText)
	if err != nil {
		return nil, err
	}
	// The server prints its listening line even when the port turns out to
	// be taken (it exits right after), so readiness is confirmed by an HTTP
	// exchange with the port.
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	if err := p.waitReady(ctx, startTimeout, func(ctx context.Context) error { return probeHTTP(ctx, addr) }); err != nil {
		if p.out.contains(portInUseText) {
			return nil, fmt.Errorf("%w: %d", errPortInUse, port)
		}
		return nil, err
	}
	return p, nil
}

// freePort returns a TCP port that was free on every interface a moment
// ago. The everything server binds the wildcard address, so the port is
// checked there: a port taken only on loopback would let the server start
// while loopback connections reach the other listener.
func freePort() (int, error) {
	l, err := net.Listen("tcp", ":0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// probeTimeout bounds one readiness probe.
const probeTimeout = time.Second

// probeHTTP reports whether an HTTP server answers at addr: it sends a bare
// GET for the MCP endpoint and reads the status line. Any HTTP status will
// do; the everything server answers 400 for want of a session.
func probeHTTP(ctx context.Context, addr string) error {
	ctx, cancel := context.WithTimeout(ctx, probeTimeout)
	defer cancel()
	var d net.Dialer
	c, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return err
	}
	defer c.Close()
	if dl, ok := ctx.Deadline(); ok {
		if err := c.SetDeadline(dl); err != nil {
			return err
		}
	}
	if _, err := io.WriteString(c, "GET /mcp HTTP/1.1\r\nHost: "+addr+"\r\nConnection: close\r\n\r\n"); err != nil {
		return err
	}
	line, err := bufio.NewReader(c).ReadString('\n')
	if err != nil {
		return fmt.Errorf("reading the status line: %w", err)
	}
	if !strings.HasPrefix(line, "HTTP/1.") {
		return fmt.Errorf("not an HTTP response: %q", line)
	}
	return nil
}
