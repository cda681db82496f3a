package codemode

import (
	"fmt"
	"os"
	"os/exec"
	"sync"
)

// workerPool holds a Worker's started workers that wait for a script.
type workerPool struct {
	mu     sync.Mutex
	spare  []*proc
	closed bool
	wg     sync.WaitGroup // the refills under way
}

// proc is a started worker: its process and its pipes.
type proc struct {
	cmd       *exec.Cmd
	toChild   *os.File
	fromChild *os.File
	msgs      *messageReader // of fromChild
	stderr    *tailBuffer
}

// start starts a worker and returns once it is ready for its script
// (the runtime and the program's packages initialised).
func (w *Worker) start() (*proc, error) {
	path := w.Path
	if path == "" {
		var err error
		if path, err = os.Executable(); err != nil {
			return nil, fmt.Errorf("codemode: worker: %w", err)
		}
	}
	toChildR, toChildW, err := os.Pipe()
	if err != nil {
		return nil, fmt.Errorf("codemode: worker: %w", err)
	}
	fromChildR, fromChildW, err := os.Pipe()
	if err != nil {
		toChildR.Close()
		toChildW.Close()
		return nil, fmt.Errorf("codemode: worker: %w", err)
	}
	p := &proc{cmd: exec.Command(path, w.Args...), toChild: toChildW, fromChild: fromChildR, stderr: &tailBuffer{max: 4 << 10}}
	p.cmd.Env = []string{workerEnv + "=1"}
	p.cmd.ExtraFiles = []*os.File{toChildR, fromChildW}
	p.cmd.Stderr = p.stderr
	err = p.cmd.Start()
	toChildR.Close()
	fromChildW.Close()
	if err != nil {
		toChildW.Close()
		fromChildR.Close()
		return nil, fmt.Errorf("codemode: worker: %w", err)
	}
	p.msgs = newMessageReader(fromChildR)
	var m message
	if err := p.msgs.read(&m); err != nil || !m.Ready {
		p.stop()
		return nil, fmt.Errorf("codemode: worker: did not start: %v %s", err, truncate(p.stderr.String(), 512))
	}
	return p, nil
}

// stop kills a worker that was not given a script and reaps it.
func (p *proc) stop() {
	_ = p.cmd.Process.Kill()
	p.toChild.Close()
	p.fromChild.Close()
	_ = p.cmd.Wait()
}

// take returns a waiting worker, or starts one; with Warm, it starts
// another to wait for the next script.
func (w *Worker) take() (*proc, error) {
	wp := &w.pool
	wp.mu.Lock()
	if wp.closed {
		wp.mu.Unlock()
		return nil, fmt.Errorf("codemode: worker: %w", errClosed)
	}
	var p *proc
	if n := len(wp.spare); n > 0 {
		p, wp.spare = wp.spare[n-1], wp.spare[:n-1]
	}
	if w.Warm > 0 {
		wp.wg.Add(1)
		go w.refill()
	}
	wp.mu.Unlock()
	if p != nil {
		return p, nil
	}
	return w.start()
}

// refill starts a worker to wait, unless enough wait or the pool closed.
func (w *Worker) refill() {
	wp := &w.pool
	defer wp.wg.Done()
	wp.mu.Lock()
	enough := wp.closed || len(wp.spare) >= w.Warm
	wp.mu.Unlock()
	if enough {
		return
	}
	p, err := w.start()
	if err != nil {
		return // the next script starts its own, and says why if it fails
	}
	wp.mu.Lock()
	if wp.closed || len(wp.spare) >= w.Warm {
		wp.mu.Unlock()
		p.stop()
		return
	}
	wp.spare = append(wp.spare, p)
	wp.mu.Unlock()
}

// close stops the waiting workers; scripts running in workers finish.
func (w *Worker) close() {
	wp := &w.pool
	wp.mu.Lock()
	wp.closed = true
	spare := wp.spare
	wp.spare = nil
	wp.mu.Unlock()
	wp.wg.Wait()
	for _, p := range spare {
		p.stop()
	}
}
