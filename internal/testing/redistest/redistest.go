// Package redistest starts real Redis servers (Debian's redis-server) for
// tests: one per test, on a Unix socket in the test's own directory,
// persisted to an append-only file so that a server killed and started
// again keeps what it acknowledged (Redis writes the file before it
// answers; it syncs it to disk once a second, which only a crash of the
// machine would need), and stopped when the test ends. Nothing
// is left running as a service.
//
// When redis-server is not installed the test is skipped with a message
// saying how to install it (scripts/debian-tool.sh redis-server, which
// `make test` runs), or failed when PEERS_REQUIRED=1, as CI sets.
package redistest

import (
	"bufio"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// BinaryEnv names a redis-server binary to use instead of the one found
// on PATH or in /usr/bin and /usr/sbin.
const BinaryEnv = "REDIS_SERVER"

// requiredEnv, set to 1, turns a missing redis-server into a failure (the
// same variable as the real-peer tests).
const requiredEnv = "PEERS_REQUIRED"

// Server is one redis-server process of a test.
type Server struct {
	t      testing.TB
	bin    string
	dir    string
	socket string

	// With StartTLS: the TLS port, the files of the certificate
	// authority, the server's certificate and key, the password.
	tlsPort       int
	ca, cert, key string
	password      string

	mu     sync.Mutex
	proc   *os.Process // nil while not running
	exited chan error  // the process's Wait
}

// Start starts a redis-server for t and stops it when t ends.
func Start(t testing.TB) *Server {
	t.Helper()
	bin := binary(t)
	// A Unix socket path is limited to about 100 bytes: t.TempDir's may be
	// longer.
	dir, err := os.MkdirTemp("", "redis")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	s := &Server{t: t, bin: bin, dir: dir, socket: filepath.Join(dir, "redis.sock")}
	s.Restart()
	t.Cleanup(s.Kill)
	return s
}

// Socket returns the path of the server's Unix socket.
func (s *Server) Socket() string { return s.socket }

// URL returns the server's address as a redis URL (unix://PATH).
func (s *Server) URL() string { return "unix://" + s.socket }

// Kill kills the server (SIGKILL) and waits for it to exit. What it was
// told before is kept in its append-only file for Restart. Killing a
// server that is not running does nothing.
func (s *Server) Kill() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.proc == nil {
		return
	}
	s.proc.Kill()
	<-s.exited
	s.proc = nil
}

// Restart starts the server again (after Kill) on the same socket, with
// the data it had; it returns once the server accepts connections.
func (s *Server) Restart() {
	s.t.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.proc != nil {
		s.t.Fatal("redistest: Restart of a server that is running")
	}
	os.Remove(s.socket)
	cmd := exec.Command(s.bin, append([]string{
		"--port", "0",
		"--unixsocket", s.socket,
		"--unixsocketperm", "700",
		"--dir", s.dir,
		"--appendonly", "yes",
		"--appendfsync", "everysec",
		"--save", "",
		"--loglevel", "warning",
	}, s.tlsArgs()...)...)
	out := &lineLog{}
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		s.t.Fatalf("redistest: start %s: %v", s.bin, err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	if err := waitReady(s.socket, s.password, exited); err != nil {
		cmd.Process.Kill()
		<-exited
		s.t.Fatalf("redistest: %s did not start: %v\n%s", s.bin, err, out)
	}
	s.proc, s.exited = cmd.Process, exited
}

// waitReady dials socket until redis answers PING, the process exits, or
// ten seconds pass. It is called while the server starts: polling the
// socket is the only readiness signal redis-server gives.
func waitReady(socket, password string, exited <-chan error) error {
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		select {
		case err := <-exited:
			return fmt.Errorf("exited: %v", err)
		default:
		}
		if ping(socket, password) == nil {
			return nil
		}
		select {
		case err := <-exited:
			return fmt.Errorf("exited: %v", err)
		case <-time.After(10 * time.Millisecond):
		}
	}
	return errors.New("no answer to PING within 10s")
}

// ping sends PING over socket (after AUTH when password is set) and
// expects +PONG.
func ping(socket, password string) error {
	c, err := net.DialTimeout("unix", socket, time.Second)
	if err != nil {
		return err
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(time.Second))
	r := bufio.NewReader(c)
	if password != "" {
		if _, err := fmt.Fprintf(c, "AUTH %s\r\n", password); err != nil {
			return err
		}
		if line, err := r.ReadString('\n'); err != nil || strings.TrimSpace(line) != "+OK" {
			return fmt.Errorf("AUTH answered %q: %v", line, err)
		}
	}
	if _, err := c.Write([]byte("PING\r\n")); err != nil {
		return err
	}
	line, err := r.ReadString('\n')
	if err != nil {
		return err
	}
	if strings.TrimSpace(line) != "+PONG" {
		return fmt.Errorf("answered %q", line)
	}
	return nil
}

// binary returns the redis-server binary, or skips t (fails it with
// PEERS_REQUIRED=1) when there is none.
func binary(t testing.TB) string {
	t.Helper()
	candidates := []string{os.Getenv(BinaryEnv)}
	if candidates[0] == "" {
		candidates = []string{"redis-server", "/usr/bin/redis-server", "/usr/sbin/redis-server"}
	}
	for _, c := range candidates {
		if p, err := exec.LookPath(c); err == nil {
			return p
		}
	}
	msg := fmt.Sprintf("redis-server not found (%s): run `make test` (or scripts/debian-tool.sh redis-server) to install it, or set %s",
		strings.Join(candidates, ", "), BinaryEnv)
	if os.Getenv(requiredEnv) == "1" {
		t.Fatal(msg)
	}
	t.Skip(msg)
	return ""
}

// lineLog keeps the last lines a server wrote, for a failure's message.
type lineLog struct {
	mu  sync.Mutex
	buf []byte
}

func (l *lineLog) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.buf = append(l.buf, p...)
	if len(l.buf) > 16<<10 {
		l.buf = l.buf[len(l.buf)-8<<10:]
	}
	return len(p), nil
}

func (l *lineLog) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return string(l.buf)
}
