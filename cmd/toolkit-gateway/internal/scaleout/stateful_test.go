package scaleout

import (
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// sessionRun is what one client saw in the stateful test.
type sessionRun struct {
	replicas []int // the replica of each session it opened, in order
	ok       int   // calls that succeeded
	failed   []error
	wrong    []error // a call answered by another replica than its session's, or with a bad answer
	fatal    error   // why it stopped early
}

// TestStatefulAffinity runs the gateway with sessions on three replicas
// behind haproxy, each session stuck to its replica on Mcp-Session-Id, and
// kills one replica under load.
func TestStatefulAffinity(t *testing.T) {
	const (
		replicas    = 3
		clients     = 12 // each with a session of its own
		total       = 1500
		killAfter   = 500
		victimIndex = 0
	)
	haproxyBinary(t)
	gw, up := gatewayBinary(t), exampleBinary(t)
	t.Cleanup(func() { checkNoLeftovers(t, gw); checkNoLeftovers(t, up) })
	dir := testDir(t)
	rs := startReplicas(t, dir, replicas, false)
	hc := newHTTPClient(t)
	replicaOf := upstreamPIDs(t, hc, rs)
	h := startHaproxy(t, dir, rs, true)
	ctx := t.Context()

	// open starts a session through haproxy and finds its replica.
	open := func() (*sdk.ClientSession, int, error) {
		cs, err := connect(ctx, hc, h.url, protocolSession)
		if err != nil {
			return nil, 0, err
		}
		if cs.ID() == "" {
			cs.Close()
			return nil, 0, errors.New("the session has no Mcp-Session-Id")
		}
		pid, err := whoami(ctx, cs)
		if err != nil {
			cs.Close()
			return nil, 0, err
		}
		i, ok := replicaOf[pid]
		if !ok {
			cs.Close()
			return nil, 0, fmt.Errorf("%w: upstream process %d belongs to no replica", errWrong, pid)
		}
		return cs, i, nil
	}

	sessions := make([]*sdk.ClientSession, clients)
	runs := make([]sessionRun, clients)
	perReplica := make([]int, replicas)
	var firstOpen latencies
	for c := range clients {
		began := time.Now()
		cs, i, err := open()
		firstOpen.add(time.Since(began))
		if err != nil {
			t.Fatalf("client %d: %v", c, err)
		}
		sessions[c] = cs
		runs[c].replicas = []int{i}
		perReplica[i]++
	}
	for i, n := range perReplica {
		if n == 0 {
			t.Fatalf("round robin gave replica %s no session: %v", rs[i].name, perReplica)
		}
	}

	var (
		next, finished atomic.Int64
		killNow        = make(chan struct{})
		killed         = make(chan struct{})
		kinds          errorKinds
		okTimes        latencies
		failTimes      latencies
		reopenTimes    latencies
		start          = time.Now()
		killedAt       time.Duration
	)
	killerDone := make(chan struct{})
	go func() {
		defer close(killerDone)
		select {
		case <-killNow:
		case <-ctx.Done():
			return
		}
		killedAt = time.Since(start)
		rs[victimIndex].kill()
		close(killed)
	}()

	var wg sync.WaitGroup
	for c := range clients {
		wg.Go(func() {
			run := &runs[c]
			cs := sessions[c]
			defer func() { cs.Close() }()
			for {
				i := next.Add(1) - 1
				if i >= total {
					return
				}
				cur := run.replicas[len(run.replicas)-1]
				began := time.Now()
				pid, err := whoami(ctx, cs)
				if took := time.Since(began); err == nil {
					okTimes.add(took)
				} else {
					failTimes.add(took)
				}
				switch {
				case err == nil && replicaOf[pid] != cur:
					run.wrong = append(run.wrong, fmt.Errorf("call %d of a session on %s answered by %s", i, rs[cur].name, rs[replicaOf[pid]].name))
				case err == nil:
					run.ok++
				case errors.Is(err, errWrong):
					run.wrong = append(run.wrong, err)
				default:
					run.failed = append(run.failed, err)
					kinds.add(err)
				}
				if finished.Add(1) == killAfter {
					close(killNow)
				}
				if err != nil && !errors.Is(err, errWrong) {
					// The session is lost: start a new one, as a client
					// would, and go on.
					cs.Close()
					var j int
					var oerr error
					began := time.Now()
					if cs, j, oerr = open(); oerr != nil {
						run.fatal = fmt.Errorf("reopening after %v: %w", err, oerr)
						return
					}
					reopenTimes.add(time.Since(began))
					run.replicas = append(run.replicas, j)
				}
			}
		})
	}
	wg.Wait()
	elapsed := time.Since(start)
	<-killerDone
	select {
	case <-killed:
	default:
		t.Fatalf("the replica was never killed: %d calls finished", finished.Load())
	}

	var ok, failed, onVictim int
	for c, run := range runs {
		ok += run.ok
		failed += len(run.failed)
		for _, err := range run.wrong {
			t.Errorf("client %d: %v", c, err)
		}
		if run.fatal != nil {
			t.Errorf("client %d: %v", c, run.fatal)
		}
		for _, err := range run.failed {
			if hang(err) {
				t.Errorf("client %d: a call hung until its %v deadline: %v", c, callTimeout, err)
			}
		}
		if run.replicas[0] != victimIndex {
			// A session on a survivor never notices the kill.
			if len(run.failed) > 0 || len(run.replicas) > 1 {
				t.Errorf("client %d on survivor %s: %d failed calls, sessions on %v; want none failed",
					c, rs[run.replicas[0]].name, len(run.failed), run.replicas)
			}
			continue
		}
		onVictim++
		// A session on the killed replica fails once (its next call, or
		// the one in flight), and its new session is on a survivor.
		if len(run.failed) == 0 || len(run.replicas) != 2 || run.replicas[1] == victimIndex {
			t.Errorf("client %d on the killed replica: %d failed calls, sessions on %v; want one failure and a new session on a survivor",
				c, len(run.failed), run.replicas)
		}
		if len(run.failed) > 1 {
			t.Errorf("client %d: %d failures, want 1:%v", c, len(run.failed), run.failed)
		}
	}
	if ok+failed != total {
		t.Errorf("%d calls finished (%d ok, %d failed), want %d", ok+failed, ok, failed, total)
	}
	st, err := h.stats(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("stateful: %d replicas, %d sessions (%v per replica), %d calls in %v: %d ok, %d failed; "+
		"killed %s at %v; %d sessions were on it; redispatches %s; "+
		"successful calls %v; failed calls %v; first sessions opened %v; new sessions after the kill %v",
		replicas, clients, perReplica, total, elapsed.Round(time.Millisecond), ok, failed,
		rs[victimIndex].name, killedAt.Round(time.Millisecond), onVictim, st["BACKEND"]["wredis"],
		&okTimes, &failTimes, &firstOpen, &reopenTimes)
	if failed > 0 {
		t.Logf("errors:%s", kinds.String())
	}
	for i, r := range rs {
		if i == victimIndex {
			continue
		}
		r.stop()
		if err := r.exitError(); err != nil {
			t.Error(err)
		}
	}
}
