package scaleout

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// Moments of a call relative to the kill of a replica.
const (
	beforeKill int32 = iota // started before SIGKILL was sent
	duringKill              // started after SIGKILL, before the replica was reaped
	afterKill               // started once the replica was gone
)

// killRecord is what the killer saw when it killed a replica.
type killRecord struct {
	inFlight int64         // calls in flight when SIGKILL was sent
	finished int64         // calls finished then
	at       time.Duration // since the load started
	down     time.Duration // from SIGKILL until haproxy marked the replica DOWN
	stats    map[string]map[string]string
}

// TestStatelessScaleOut runs the gateway stateless on three replicas behind
// haproxy, and kills one under load.
func TestStatelessScaleOut(t *testing.T) {
	const (
		replicas    = 3
		clients     = 16
		total       = 3000 // calls, across all clients
		killAfter   = 1000 // finished calls before the kill
		victimIndex = 0
	)
	haproxyBinary(t) // skip before building when there is none
	gw, up := gatewayBinary(t), exampleBinary(t)
	t.Cleanup(func() { checkNoLeftovers(t, gw); checkNoLeftovers(t, up) })
	dir := testDir(t)
	rs := startReplicas(t, dir, replicas, true)
	h := startHaproxy(t, dir, rs, false)
	victim := rs[victimIndex]
	hc := newHTTPClient(t)
	ctx := t.Context()

	// Half the clients speak the newest protocol, half the one before it:
	// stateless serving must hold for both.
	sessions := make([]*sdk.ClientSession, clients)
	versions := make([]string, clients)
	for i := range sessions {
		version := protocolNew
		if i%2 == 1 {
			version = protocolSession
		}
		versions[i] = version
		cs, err := connect(ctx, hc, h.url, version)
		if err != nil {
			t.Fatalf("client %d (%s): %v", i, version, err)
		}
		sessions[i] = cs
	}

	var (
		next, finished, inFlight atomic.Int64
		moment                   atomic.Int32
		byMoment                 [3]struct{ ok, failed atomic.Int64 }
		hangs, wrong, reconnects atomic.Int64
		kinds                    errorKinds
		lateErrs                 errorKinds // of calls started after the kill
		okTimes, failTimes       latencies
		killNow                  = make(chan struct{})
		killed                   = make(chan killRecord, 1)
		start                    = time.Now()
	)

	// The killer: SIGKILL once killAfter calls have finished, then wait
	// for haproxy to see the replica DOWN.
	killerDone := make(chan struct{})
	go func() {
		defer close(killerDone)
		select {
		case <-killNow:
		case <-ctx.Done():
			return
		}
		var k killRecord
		moment.Store(duringKill)
		k.inFlight, k.finished, k.at = inFlight.Load(), finished.Load(), time.Since(start)
		sent := time.Now()
		victim.kill()
		moment.Store(afterKill)
		wctx, cancel := context.WithTimeout(ctx, readyTimeout)
		defer cancel()
		err := poll(wctx, h.process, func() error {
			st, err := h.stats(wctx)
			if err != nil {
				return err
			}
			if s := st[victim.name]["status"]; s != "DOWN" {
				return fmt.Errorf("%s is %q", victim.name, s)
			}
			k.stats = st
			return nil
		})
		if err != nil {
			t.Errorf("haproxy did not mark the killed replica DOWN: %v", err)
		}
		k.down = time.Since(sent)
		killed <- k
	}()

	var wg sync.WaitGroup
	for c := range clients {
		wg.Go(func() {
			cs := sessions[c]
			defer func() { cs.Close() }()
			for {
				i := next.Add(1) - 1
				if i >= total {
					return
				}
				// In flight first, moment second: a call that saw the
				// moment before the kill is counted by the killer.
				inFlight.Add(1)
				m := moment.Load()
				began := time.Now()
				err := echo(ctx, cs, fmt.Sprintf("client %d call %d", c, i))
				took := time.Since(began)
				inFlight.Add(-1)
				if err == nil {
					byMoment[m].ok.Add(1)
					okTimes.add(took)
				} else {
					byMoment[m].failed.Add(1)
					failTimes.add(took)
					if m == afterKill {
						lateErrs.add(err)
					}
					kinds.add(err)
					switch {
					case hang(err):
						hangs.Add(1)
					case errors.Is(err, errWrong):
						wrong.Add(1)
					}
				}
				if finished.Add(1) == killAfter {
					close(killNow)
				}
				if err != nil && (errors.Is(err, sdk.ErrConnectionClosed) || errors.Is(err, sdk.ErrSessionMissing)) {
					// The session broke: count it, and go on with a new one.
					reconnects.Add(1)
					cs.Close()
					var cerr error
					if cs, cerr = connect(ctx, hc, h.url, versions[c]); cerr != nil {
						t.Errorf("client %d: reconnecting: %v", c, cerr)
						return
					}
				}
			}
		})
	}
	wg.Wait()
	elapsed := time.Since(start)
	<-killerDone
	var k killRecord
	select {
	case k = <-killed:
	default:
		t.Fatalf("the replica was never killed: %d calls finished", finished.Load())
	}
	end, err := h.stats(ctx)
	if err != nil {
		t.Fatal(err)
	}

	var ok, failed int64
	for m := range byMoment {
		ok += byMoment[m].ok.Load()
		failed += byMoment[m].failed.Load()
	}
	atRisk := k.inFlight + byMoment[duringKill].ok.Load() + byMoment[duringKill].failed.Load()
	after := byMoment[afterKill].ok.Load() + byMoment[afterKill].failed.Load()
	t.Logf("stateless: %d replicas, %d clients, %d calls in %v (%.0f calls/s): %d ok, %d failed; "+
		"killed %s after %d calls at %v with %d in flight (+%d started while it died); "+
		"haproxy marked it DOWN %v after SIGKILL; %d calls after the kill, %d failed; "+
		"retries %s, redispatches %s; responses 2xx per replica: %s; sessions broken: %d; "+
		"successful calls %v; failed calls %v",
		replicas, clients, total, elapsed.Round(time.Millisecond), float64(total)/elapsed.Seconds(), ok, failed,
		victim.name, k.finished, k.at.Round(time.Millisecond), k.inFlight, atRisk-k.inFlight,
		k.down.Round(time.Millisecond), after, byMoment[afterKill].failed.Load(),
		end["BACKEND"]["wretr"], end["BACKEND"]["wredis"], perReplica(rs, end, "hrsp_2xx"), reconnects.Load(),
		&okTimes, &failTimes)
	if failed > 0 {
		t.Logf("errors:%s", kinds.String())
	}

	if ok+failed != total {
		t.Errorf("%d calls finished, want %d", ok+failed, total)
	}
	if n := wrong.Load(); n > 0 {
		t.Errorf("%d calls returned a wrong result", n)
	}
	if n := hangs.Load(); n > 0 {
		t.Errorf("%d calls hung until their %v deadline", n, callTimeout)
	}
	if n := byMoment[beforeKill].failed.Load(); n > k.inFlight {
		// Of the calls started before the kill, only those still in
		// flight at it may fail.
		t.Errorf("%d calls started before the kill failed, %d were in flight at it", n, k.inFlight)
	}
	if n := byMoment[afterKill].failed.Load(); n > 0 {
		t.Errorf("%d calls started after the killed replica was gone failed:%s", n, lateErrs.String())
	}
	// The calls in flight at the kill: those running when SIGKILL was
	// sent (at most one per client), and those started while the replica
	// died (a few: the kill is not instantaneous). Only they may fail.
	if failed > atRisk {
		t.Errorf("%d calls failed, more than the %d in flight at the kill", failed, atRisk)
	}
	if after < (total-killAfter)/2 {
		t.Errorf("only %d calls started after the kill", after)
	}
	if n := reconnects.Load(); n > 0 {
		t.Errorf("%d client sessions broke; a stateless client should keep its session", n)
	}
	// Round robin spread the calls over every replica before the kill,
	// and every survivor took its share after it.
	for i, r := range rs {
		if counter(k.stats[r.name], "hrsp_2xx") == 0 {
			t.Errorf("replica %s served nothing before the kill", r.name)
		}
		if i == victimIndex {
			continue
		}
		if counter(end[r.name], "hrsp_2xx") <= counter(k.stats[r.name], "hrsp_2xx") {
			t.Errorf("replica %s served nothing after the kill", r.name)
		}
	}
	// The survivors end cleanly on SIGTERM.
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

// perReplica formats one stats column for each replica.
func perReplica(rs []*replica, st map[string]map[string]string, col string) string {
	s := ""
	for i, r := range rs {
		if i > 0 {
			s += " "
		}
		s += fmt.Sprintf("%s=%s", r.name, st[r.name][col])
	}
	return s
}
