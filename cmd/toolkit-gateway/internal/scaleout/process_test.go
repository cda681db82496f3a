package scaleout

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// stopGrace is how long a process gets to exit after SIGTERM before
// SIGKILL.
const stopGrace = 10 * time.Second

// tailLines is how many lines of a process's output are kept for messages.
const tailLines = 200

// process is a started child in a process group of its own, whose output is
// read line by line and whose exit is observed by a goroutine that reaps it.
type process struct {
	name   string
	cmd    *exec.Cmd
	exited chan struct{} // closed after the child has been reaped
	read   chan struct{} // closed when its output has been read to the end
	err    error         // the result of cmd.Wait, set before exited closes

	mu   sync.Mutex
	tail []string // the last tailLines lines of output

	stopOnce sync.Once
}

// start starts cmd with stdout and stderr on one pipe. onLine, if not nil,
// sees every line of output, in order, on the reading goroutine. The
// process is stopped when t ends.
func start(t testing.TB, name string, cmd *exec.Cmd, onLine func(string)) *process {
	t.Helper()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stdout, cmd.Stderr = w, w
	// A group of its own, so that signals reach it and nothing else; and
	// the kernel kills it if the test binary dies first.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		r.Close()
		w.Close()
		t.Fatalf("starting %s: %v", name, err)
	}
	w.Close() // the child holds its own copy; EOF comes when it is gone
	p := &process{name: name, cmd: cmd, exited: make(chan struct{}), read: make(chan struct{})}
	go p.drain(r, onLine)
	go func() {
		p.err = cmd.Wait()
		close(p.exited)
	}()
	t.Cleanup(p.stop)
	return p
}

// drain reads the output to the end.
func (p *process) drain(r io.ReadCloser, onLine func(string)) {
	defer close(p.read)
	defer r.Close()
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		p.mu.Lock()
		if len(p.tail) == tailLines {
			p.tail = p.tail[1:]
		}
		p.tail = append(p.tail, line)
		p.mu.Unlock()
		if onLine != nil {
			onLine(line)
		}
	}
	if err := sc.Err(); err != nil {
		// A line longer than the buffer: keep reading so the child
		// never blocks on a full pipe.
		_, _ = io.Copy(io.Discard, r)
	}
}

// output returns the last lines of output.
func (p *process) output() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return strings.Join(p.tail, "\n")
}

// pid returns the process id.
func (p *process) pid() int { return p.cmd.Process.Pid }

// kill sends SIGKILL to the process group and returns once the child has
// been reaped: its sockets are closed by then.
func (p *process) kill() {
	_ = signalGroup(p.pid(), syscall.SIGKILL)
	<-p.exited
}

// stop ends the process group (SIGTERM, then SIGKILL after stopGrace),
// reaps the child and waits until its output is read. It is idempotent.
func (p *process) stop() {
	p.stopOnce.Do(func() {
		select {
		case <-p.exited:
		default:
			_ = signalGroup(p.pid(), syscall.SIGTERM)
			grace := time.NewTimer(stopGrace)
			select {
			case <-p.exited:
			case <-grace.C:
			}
			grace.Stop()
		}
		// Whatever the leader did, nothing of its group outlives it.
		_ = signalGroup(p.pid(), syscall.SIGKILL)
		<-p.exited
		<-p.read
	})
}

// exitError describes how the process ended, for a process that should
// have ended cleanly; nil when it did.
func (p *process) exitError() error {
	<-p.exited
	<-p.read
	out := p.output()
	if p.err != nil {
		return fmt.Errorf("%s: %v; output:\n%s", p.name, p.err, out)
	}
	if strings.Contains(out, "panic:") || strings.Contains(out, "DATA RACE") {
		return fmt.Errorf("%s: output shows a panic or a race:\n%s", p.name, out)
	}
	return nil
}

// signalGroup sends sig to the process group led by pid. A group that no
// longer exists is not an error.
func signalGroup(pid int, sig syscall.Signal) error {
	err := syscall.Kill(-pid, sig)
	if errors.Is(err, syscall.ESRCH) {
		return nil
	}
	return err
}
