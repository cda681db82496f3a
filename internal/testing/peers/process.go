package peers

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"time"
)

// stopGrace is how long a peer gets to exit after SIGTERM before SIGKILL.
const stopGrace = 5 * time.Second

// process is a started peer whose output is drained into a tail buffer and
// whose exit is observed by a goroutine that reaps it.
type process struct {
	cmd      *exec.Cmd
	out      tail
	ready    chan struct{} // closed when a line containing readyText appears
	exited   chan struct{} // closed after the child has been reaped
	readDone chan struct{} // closed when every writer of the output pipe is gone
	waitErr  error         // the result of cmd.Wait, set before exited closes
	grace    time.Duration // how long stop waits after SIGTERM
	stopOnce sync.Once
}

// startProcess starts cmd with stdout and stderr on one pipe, in a process
// group of its own. readyText, if not empty, is the output that announces
// the process is ready.
func startProcess(cmd *exec.Cmd, readyText string) (*process, error) {
	r, w, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	cmd.Stdout, cmd.Stderr = w, w
	configure(cmd)
	if err := cmd.Start(); err != nil {
		r.Close()
		w.Close()
		return nil, err
	}
	w.Close() // the child holds its own copy; EOF arrives when it is gone
	p := &process{
		cmd:      cmd,
		ready:    make(chan struct{}),
		exited:   make(chan struct{}),
		readDone: make(chan struct{}),
		grace:    stopGrace,
	}
	go p.drain(r, readyText)
	go func() {
		p.waitErr = cmd.Wait()
		close(p.exited)
	}()
	return p, nil
}

// drain reads the child's output to the end, keeping the last lines.
func (p *process) drain(r *os.File, readyText string) {
	defer close(p.readDone)
	defer r.Close()
	br := bufio.NewReader(r)
	seen := readyText == ""
	for {
		line, err := br.ReadString('\n')
		if line != "" {
			line = strings.TrimRight(line, "\r\n")
			p.out.add(line)
			if !seen && strings.Contains(line, readyText) {
				seen = true
				close(p.ready)
			}
		}
		if err != nil {
			if !errors.Is(err, io.EOF) {
				p.out.add("reading output: " + err.Error())
			}
			return
		}
	}
}

// probeInterval is the pause between readiness probes.
const probeInterval = 20 * time.Millisecond

// waitReady waits until the process is ready, it exits, ctx is done or
// timeout passes. Ready means it wrote its ready text and then, if probe is
// not nil, probe succeeded; probe runs every probeInterval until it does.
// On any outcome but ready the process is stopped.
func (p *process) waitReady(ctx context.Context, timeout time.Duration, probe func(context.Context) error) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	// First the ready text, then a probe each tick; the probe's last error
	// says why a process never got ready.
	ready := p.ready
	var tick <-chan time.Time
	var probeErr error
	for {
		select {
		case <-ready:
			ready = nil
		case <-tick:
		case <-p.exited:
			p.stop()
			return p.exitedEarly()
		case <-ctx.Done():
			p.stop()
			return p.notReady(ctx, timeout, probeErr)
		}
		if probe == nil {
			return nil
		}
		if probeErr = probe(ctx); probeErr == nil {
			return nil
		}
		if tick == nil {
			t := time.NewTicker(probeInterval)
			defer t.Stop()
			tick = t.C
		}
	}
}

// exitedEarly describes a process that ended before it was ready.
func (p *process) exitedEarly() error {
	<-p.readDone
	return fmt.Errorf("exited before it was ready (%v); output:\n%s", p.waitErr, p.out.String())
}

// notReady describes a wait for readiness that ctx ended.
func (p *process) notReady(ctx context.Context, timeout time.Duration, probeErr error) error {
	why := fmt.Sprintf("not ready within %v", timeout)
	if probeErr != nil {
		why += fmt.Sprintf(" (last probe: %v)", probeErr)
	}
	return fmt.Errorf("%s: %w; output:\n%s", why, ctx.Err(), p.out.String())
}

// stop ends the process group (SIGTERM, then SIGKILL after p.grace), reaps
// the child and waits until its output is drained. It is idempotent.
func (p *process) stop() {
	p.stopOnce.Do(func() {
		pid := p.cmd.Process.Pid
		select {
		case <-p.exited:
		default:
			_ = signalGroup(pid, syscall.SIGTERM)
			grace := time.NewTimer(p.grace)
			select {
			case <-p.exited:
			case <-grace.C:
			}
			grace.Stop()
		}
		// Whatever the leader did, nothing of its group may outlive it.
		_ = signalGroup(pid, syscall.SIGKILL)
		<-p.exited
		<-p.readDone
	})
}
