package codemode

import (
	"fmt"
	"os"
	"os/exec"
	"sync"
	"sync/atomic"
	"time"
)

// workerPool holds a Worker's started workers that wait for a script,
// per principal (see Warm), and the workers it reaps.
type workerPool struct {
	mu      sync.Mutex
	changed *sync.Cond // broadcast when idle or starting change
	idle    map[string][]idleProc
	// starting counts the workers being started, per principal.
	starting map[string]int
	total    int // idle and starting, all principals
	reaper   *time.Timer
	closed   bool
	wg       sync.WaitGroup // the starts and the reaps under way
}

// idleProc is a started worker that waits, since when.
type idleProc struct {
	p     *proc
	since time.Time
}

// proc is a started worker: its process and its pipes.
type proc struct {
	cmd       *exec.Cmd
	toChild   *os.File
	fromChild *os.File
	msgs      *messageReader // of fromChild
	stderr    *tailBuffer
}

// warm returns w.Warm with its defaults.
func (w *Worker) warm() Warm {
	c := w.Warm
	if c.PerPrincipal <= 0 {
		c.PerPrincipal = 1
	}
	if c.Idle <= 0 {
		c.Idle = DefaultWarmIdle
	}
	return c
}

// start starts a worker and returns once it is ready for its script
// (the runtime and the program's packages initialised, the engine warmed
// up, and, for a worker started ahead of its script, its heap's first
// pages touched).
func (w *Worker) start(ahead bool) (*proc, error) {
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
	if ahead {
		p.cmd.Env = append(p.cmd.Env, workerAheadEnv+"=1")
	}
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
	// A program that never says it is ready (a Path that is not this
	// program, a child stuck at its start) is killed: its pipe closes
	// and the read below fails, so nothing waits for it for ever.
	var late atomic.Bool
	stall := time.AfterFunc(workerStartWait, func() {
		late.Store(true)
		_ = p.cmd.Process.Kill()
	})
	var m message
	err = p.msgs.read(&m)
	stall.Stop()
	if err != nil || !m.Ready {
		p.stop()
		if late.Load() {
			err = fmt.Errorf("not ready within %v", workerStartWait)
		}
		return nil, fmt.Errorf("codemode: worker: did not start: %v %s", err, truncate(p.stderr.String(), 512))
	}
	return p, nil
}

// workerStartWait bounds how long a started worker may take to say it is
// ready.
var workerStartWait = 30 * time.Second

// stop kills a worker that was not given a script and reaps it.
func (p *proc) stop() {
	_ = p.cmd.Process.Kill()
	p.toChild.Close()
	p.fromChild.Close()
	_ = p.cmd.Wait()
}

// take returns a worker that waits for principal's scripts, or starts
// one.
func (w *Worker) take(principal string) (*proc, error) {
	wp := &w.pool
	wp.mu.Lock()
	if wp.closed {
		wp.mu.Unlock()
		return nil, fmt.Errorf("codemode: worker: %w", errClosed)
	}
	var p *proc
	if q := wp.idle[principal]; len(q) > 0 {
		// The newest: the oldest are the first the reaper stops.
		p = q[len(q)-1].p
		q[len(q)-1] = idleProc{}
		wp.setIdle(principal, q[:len(q)-1])
		wp.total--
		wp.broadcast()
	}
	wp.mu.Unlock()
	if p != nil {
		return p, nil
	}
	return w.start(false)
}

// refill starts workers to wait for principal's scripts, up to the
// bounds of Warm.
func (w *Worker) refill(principal string) {
	c := w.warm()
	wp := &w.pool
	wp.mu.Lock()
	defer wp.mu.Unlock()
	if wp.closed {
		return
	}
	have := len(wp.idle[principal]) + wp.starting[principal]
	n := min(c.PerPrincipal-have, c.Max-wp.total)
	if n <= 0 && have == 0 && c.Max > 0 && wp.evictOldest() {
		n = 1
	}
	for range max(n, 0) {
		if wp.starting == nil {
			wp.starting = map[string]int{}
		}
		wp.starting[principal]++
		wp.total++
		wp.wg.Add(1)
		go w.startIdle(principal, c.Idle)
	}
}

// evictOldest stops the worker that has waited longest, of any
// principal, and reports whether there was one.
func (wp *workerPool) evictOldest() bool {
	var oldest string
	found := false
	for principal, q := range wp.idle {
		// Each principal's workers wait in the order they started.
		if !found || q[0].since.Before(wp.idle[oldest][0].since) {
			oldest, found = principal, true
		}
	}
	if !found {
		return false
	}
	q := wp.idle[oldest]
	p := q[0].p
	wp.setIdle(oldest, append([]idleProc(nil), q[1:]...))
	wp.total--
	wp.wg.Add(1) // under mu, the pool open: Close waits for it
	go func() {
		defer wp.wg.Done()
		p.stop()
	}()
	return true
}

// startIdle starts a worker to wait for principal's scripts.
func (w *Worker) startIdle(principal string, idle time.Duration) {
	wp := &w.pool
	defer wp.wg.Done()
	p, err := w.start(true)
	wp.mu.Lock()
	defer wp.mu.Unlock()
	if wp.starting[principal]--; wp.starting[principal] == 0 {
		delete(wp.starting, principal)
	}
	defer wp.broadcast()
	if err != nil || wp.closed {
		if !wp.closed {
			wp.total--
		}
		if err == nil {
			// Close waits for this start, then for nothing else.
			p.stop()
		}
		return // a script starts its own, and says why if it fails
	}
	if wp.idle == nil {
		wp.idle = map[string][]idleProc{}
	}
	wp.idle[principal] = append(wp.idle[principal], idleProc{p: p, since: time.Now()})
	if wp.reaper == nil {
		wp.reaper = time.AfterFunc(idle, func() { w.reapIdle(idle) })
	}
}

// reapIdle stops the workers that waited idle or longer, and sets the
// reaper to run again when the oldest of the others will have.
func (w *Worker) reapIdle(idle time.Duration) {
	wp := &w.pool
	wp.mu.Lock()
	if wp.closed {
		wp.mu.Unlock()
		return
	}
	now := time.Now()
	var stale []*proc
	var next time.Time
	for principal, q := range wp.idle {
		i := 0
		for i < len(q) && now.Sub(q[i].since) >= idle {
			stale = append(stale, q[i].p)
			i++
		}
		rest := append([]idleProc(nil), q[i:]...)
		wp.setIdle(principal, rest)
		if len(rest) > 0 && (next.IsZero() || rest[0].since.Before(next)) {
			next = rest[0].since
		}
	}
	wp.total -= len(stale)
	wp.reaper = nil
	if !next.IsZero() {
		wp.reaper = time.AfterFunc(next.Add(idle).Sub(now), func() { w.reapIdle(idle) })
	}
	wp.broadcast()
	wp.wg.Add(1) // under mu: Close waits for it
	wp.mu.Unlock()
	defer wp.wg.Done()
	for _, p := range stale {
		p.stop()
	}
}

// reap reaps a worker that was killed once its script ended, on a
// goroutine of its own (Close waits for it), or at once after Close.
func (w *Worker) reap(p *proc) {
	wp := &w.pool
	wp.mu.Lock()
	defer wp.mu.Unlock()
	if wp.closed {
		_ = p.cmd.Wait()
		return
	}
	wp.wg.Add(1)
	go func() {
		defer wp.wg.Done()
		_ = p.cmd.Wait()
	}()
}

// setIdle sets principal's waiting workers, forgetting a principal none
// waits for.
func (wp *workerPool) setIdle(principal string, q []idleProc) {
	if len(q) == 0 {
		delete(wp.idle, principal)
		return
	}
	wp.idle[principal] = q
}

// broadcast tells those that wait for a change of the pool (tests).
func (wp *workerPool) broadcast() {
	if wp.changed != nil {
		wp.changed.Broadcast()
	}
}

// close stops the waiting workers and reaps every worker the pool
// started or killed; scripts running in workers finish, and reap their
// own.
func (w *Worker) close() {
	wp := &w.pool
	wp.mu.Lock()
	wp.closed = true
	if wp.reaper != nil {
		wp.reaper.Stop()
		wp.reaper = nil
	}
	idle := wp.idle
	wp.idle = nil
	wp.total = 0
	wp.broadcast()
	wp.mu.Unlock()
	wp.wg.Wait()
	for _, q := range idle {
		for _, ip := range q {
			ip.p.stop()
		}
	}
}
