package mcp

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/url"
	"os"
	"os/exec"
	"path"
	"strings"
	"sync"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/llmkit/toolkit/internal/errs"
)

// StdioScheme is the URL scheme of servers started as child processes.
const StdioScheme = "stdio"

// StdioCommand describes an MCP server started as a child process that
// speaks newline-delimited JSON-RPC on its stdin and stdout. Its URL forms
// are stdio:NAME?arg=A&arg=B&env=K%3DV&dir=/work, NAME a bare command name
// looked up in PATH (it may not contain '/'), and stdio:///absolute/path?arg=A,
// the program by absolute, clean path. The query may hold only these keys,
// each percent-encoded: arg (repeated, in order: the arguments), env
// (repeated, "KEY=VALUE", added to the connector's own environment) and dir
// (at most once, absolute: the working directory). A host
// ("stdio://name"), user information, a fragment, relative paths, unknown
// keys and NUL bytes are errors.
type StdioCommand struct {
	// Path is the program: a bare name looked up in PATH, or an absolute,
	// clean path.
	Path string
	// Args are the program's arguments (not including the program name).
	Args []string
	// Env holds "KEY=VALUE" entries added to the connector's environment.
	Env []string
	// Dir is the working directory (absolute), or "" for the current one.
	Dir string
}

// ParseStdioURL parses a stdio: URL strictly. Every error wraps
// toolkit.ErrBadParameter.
func ParseStdioURL(raw string) (*StdioCommand, error) {
	bad := func(format string, a ...any) error {
		return fmt.Errorf("%w: stdio URL %q: %s", errs.ErrBadParameter, redactStdio(raw), fmt.Sprintf(format, a...))
	}
	if !strings.HasPrefix(raw, StdioScheme+":") {
		return nil, bad("want scheme %q", StdioScheme)
	}
	if strings.ContainsRune(raw, 0) {
		return nil, bad("contains a NUL byte")
	}
	if strings.ContainsRune(raw, '#') {
		return nil, bad("a fragment is not allowed")
	}
	u, err := url.Parse(raw)
	if err != nil {
		return nil, bad("%v", errs.WithoutURL(err))
	}
	if u.User != nil {
		return nil, bad("user information is not allowed")
	}
	if u.Host != "" {
		return nil, bad("a host is not allowed: write stdio:NAME for a command in PATH or stdio:///absolute/path")
	}
	c := &StdioCommand{}
	switch {
	case u.Opaque != "":
		name, err := url.PathUnescape(u.Opaque)
		if err != nil {
			return nil, bad("command: %v", err)
		}
		if name == "." || name == ".." {
			return nil, bad("command %q is not a program name", name)
		}
		if strings.ContainsRune(name, '/') {
			return nil, bad("command %q: a command with '/' must be an absolute path written stdio:///path", name)
		}
		c.Path = name
	case u.Path != "":
		p := u.Path
		if !path.IsAbs(p) || path.Clean(p) != p || p == "/" {
			return nil, bad("command path %q must be absolute and clean", p)
		}
		c.Path = p
	default:
		return nil, bad("no command")
	}
	if strings.ContainsRune(c.Path, 0) {
		return nil, bad("command contains a NUL byte")
	}
	q, err := url.ParseQuery(u.RawQuery)
	if err != nil {
		return nil, bad("query: %v", err)
	}
	// url.ParseQuery loses the order of different keys but keeps the order
	// of the values of one key, which is all that matters here.
	for key, vals := range q {
		for _, v := range vals {
			if strings.ContainsRune(v, 0) {
				return nil, bad("%s value contains a NUL byte", key)
			}
		}
		switch key {
		case "arg":
			c.Args = vals
		case "env":
			for _, kv := range vals {
				k, _, ok := strings.Cut(kv, "=")
				if !ok || k == "" {
					return nil, bad("env entry %q: want KEY=VALUE", kv)
				}
			}
			c.Env = vals
		case "dir":
			if len(vals) != 1 {
				return nil, bad("dir given %d times", len(vals))
			}
			d := vals[0]
			if !path.IsAbs(d) || path.Clean(d) != d {
				return nil, bad("dir %q must be absolute and clean", d)
			}
			c.Dir = d
		default:
			return nil, bad("unknown query key %q (want arg, env or dir)", key)
		}
	}
	return c, nil
}

// String returns the canonical stdio: URL of c, which ParseStdioURL parses
// back to an equal command.
func (c *StdioCommand) String() string {
	var b strings.Builder
	b.WriteString(StdioScheme + ":")
	if path.IsAbs(c.Path) {
		b.WriteString("//")
		b.WriteString((&url.URL{Path: c.Path}).EscapedPath())
	} else {
		b.WriteString(url.PathEscape(c.Path))
	}
	sep := "?"
	add := func(k, v string) {
		b.WriteString(sep)
		b.WriteString(k)
		b.WriteByte('=')
		b.WriteString(url.QueryEscape(v))
		sep = "&"
	}
	for _, a := range c.Args {
		add("arg", a)
	}
	for _, e := range c.Env {
		add("env", e)
	}
	if c.Dir != "" {
		add("dir", c.Dir)
	}
	return b.String()
}

// redactStdio returns raw without its query, so environment values (which
// may hold secrets) never reach logs or errors.
func redactStdio(raw string) string {
	if i := strings.IndexAny(raw, "?#"); i >= 0 {
		return raw[:i]
	}
	return raw
}

// stdioTransport is an sdk.Transport that starts the command and talks to
// it over pipes. Close (of the connection) terminates and reaps the whole
// process group.
type stdioTransport struct {
	scan      *Connector // scans the server's output for notifications; nil: no
	cmd       *StdioCommand
	logger    *slog.Logger
	maxLine   int
	terminate time.Duration

	mu   sync.Mutex
	proc *process
}

// process is one running child.
type process struct {
	cmd       *exec.Cmd
	stdin     io.WriteCloser
	stdout    io.ReadCloser
	exited    chan struct{} // closed when the child has been reaped
	waitErr   error
	stderr    chan struct{} // closed when the stderr reader returns
	stderrR   *os.File
	terminate time.Duration
	marker    string // the value of stdioMarkerEnv given to the child
	closeOnce sync.Once
	closeErr  error
}

func (t *stdioTransport) Connect(ctx context.Context) (sdk.Connection, error) {
	p, err := startProcess(t.cmd, t.logger, t.terminate)
	if err != nil {
		return nil, err
	}
	t.mu.Lock()
	t.proc = p
	t.mu.Unlock()
	lines := newJSONLines(p.stdout, t.maxLine, t.logger.With("pid", p.cmd.Process.Pid))
	var scan *noteScanner
	if t.scan != nil {
		scan = &noteScanner{c: t.scan}
	}
	return &procConn{Connection: newLineConn(lines, scan, t.maxLine, p.stdin, p.stdout), p: p}, nil
}

// exited returns a channel closed when the child started by Connect exits,
// or nil before Connect.
func (t *stdioTransport) exited() <-chan struct{} {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.proc == nil {
		return nil
	}
	return t.proc.exited
}

// exitError describes how the child ended.
func (t *stdioTransport) exitError() error {
	t.mu.Lock()
	p := t.proc
	t.mu.Unlock()
	if p == nil {
		return nil
	}
	select {
	case <-p.exited:
		if p.waitErr != nil {
			return fmt.Errorf("server process exited: %v", p.waitErr)
		}
		return errors.New("server process exited")
	default:
		return nil
	}
}

// close terminates the child if it is still running; it is idempotent.
func (t *stdioTransport) close() {
	t.mu.Lock()
	p := t.proc
	t.mu.Unlock()
	if p != nil {
		p.Close()
	}
}

func startProcess(sc *StdioCommand, logger *slog.Logger, terminate time.Duration) (*process, error) {
	cmd := exec.Command(sc.Path, sc.Args...)
	marker := newMarker()
	if len(sc.Env) > 0 || marker != "" {
		cmd.Env = append(os.Environ(), sc.Env...)
		if marker != "" {
			cmd.Env = append(cmd.Env, stdioMarkerEnv+"="+marker)
		}
	}
	cmd.Dir = sc.Dir
	setProcessGroup(cmd)
	// Pipes are made here rather than with cmd.StdinPipe and friends so
	// that no copying goroutine of os/exec is involved and each end can be
	// closed exactly when wanted.
	inR, inW, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		closeAll(inR, inW)
		return nil, err
	}
	errR, errW, err := os.Pipe()
	if err != nil {
		closeAll(inR, inW, outR, outW)
		return nil, err
	}
	cmd.Stdin, cmd.Stdout, cmd.Stderr = inR, outW, errW
	if err := cmd.Start(); err != nil {
		closeAll(inR, inW, outR, outW, errR, errW)
		return nil, fmt.Errorf("starting %s: %w", sc.Path, err)
	}
	closeAll(inR, outW, errW) // the child holds its own copies
	p := &process{
		cmd:       cmd,
		marker:    marker,
		stdin:     inW,
		stdout:    outR,
		exited:    make(chan struct{}),
		stderr:    make(chan struct{}),
		stderrR:   errR,
		terminate: terminate,
	}
	go func() {
		p.waitErr = cmd.Wait()
		close(p.exited)
	}()
	go p.logStderr(logger.With("pid", cmd.Process.Pid))
	return p, nil
}

func closeAll(fs ...*os.File) {
	for _, f := range fs {
		f.Close()
	}
}

// logStderr logs the child's stderr line by line, rate-limited and
// truncated (rateLimiter); the rest of an over-long line is dropped. When
// stderr ends, one more record says how many lines were not logged.
func (p *process) logStderr(logger *slog.Logger) {
	defer close(p.stderr)
	lim := newLogLimiter()
	r := bufio.NewReaderSize(p.stderrR, maxLogLine)
	for {
		line, isPrefix, err := r.ReadLine()
		if len(line) > 0 || (err == nil && !isPrefix) {
			if ok, dropped := lim.take(); ok {
				text := string(line)
				if isPrefix {
					text += "…"
				}
				if dropped > 0 {
					logger.Info("server stderr", "line", text, "dropped", dropped)
				} else {
					logger.Info("server stderr", "line", text)
				}
			}
		}
		for isPrefix && err == nil { // drop the rest of an over-long line
			_, isPrefix, err = r.ReadLine()
		}
		if err != nil {
			if n := lim.flush(); n > 0 {
				logger.Warn("server stderr lines not logged (rate limit)", "dropped", n)
			}
			return
		}
	}
}

// Close ends the child: stdin is closed, then after p.terminate SIGTERM goes
// to the process group, then after p.terminate again SIGKILL. It returns
// once the child is reaped, every process of its group is killed and the
// stderr reader has returned. On Linux the processes the child started
// that left its group (a new session) or outlived it are killed too
// (killEscaped).
func (p *process) Close() error {
	p.closeOnce.Do(func() {
		tree := descendants(p.cmd.Process.Pid)
		p.stdin.Close()
		timer := time.NewTimer(p.terminate)
		defer timer.Stop()
		select {
		case <-p.exited:
		case <-timer.C:
			signalGroup(p.cmd, sigTerm)
			timer.Reset(p.terminate)
			select {
			case <-p.exited:
			case <-timer.C:
				signalGroup(p.cmd, sigKill)
				<-p.exited
			}
		}
		// The leader is gone; make sure nothing it started survives.
		signalGroup(p.cmd, sigKill)
		killEscaped(p.marker, tree)
		p.stdout.Close()
		// Every writer of stderr is dead now, so the reader sees EOF; a
		// process that left the group may still hold it, so bound the wait.
		timer.Reset(p.terminate)
		select {
		case <-p.stderr:
		case <-timer.C:
			p.stderrR.Close()
			<-p.stderr
		}
		p.stderrR.Close()
	})
	return p.closeErr
}

// procConn is the connection to a child: closing it terminates the child.
type procConn struct {
	sdk.Connection
	p *process
}

func (c *procConn) Close() error {
	err := c.Connection.Close()
	c.p.Close()
	return err
}
