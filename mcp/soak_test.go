package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sync"
	"syscall"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/llmkit/toolkit"
	"github.com/llmkit/toolkit/internal/testing/testserver"
)

// soakCycles is how many times the soak tests kill their server.
const (
	soakHTTPCycles  = 200
	soakStdioCycles = 40
)

// recoveryStats returns the median and 99th percentile of ds.
func recoveryStats(ds []time.Duration) (p50, p99 time.Duration) {
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[len(s)/2], s[min(len(s)-1, len(s)*99/100)]
}

// TestSoakHTTPKillRestart kills and restarts a streamable HTTP server a
// few hundred times while a caller keeps calling a tool that is not safe
// to repeat. Whatever the timing, no call runs twice on the server, every
// call reported successful ran exactly once, the connector is callable
// again after every restart, and nothing leaks. The recovery figures are
// logged (go test -run SoakHTTP -v ./mcp/), not asserted.
func TestSoakHTTPKillRestart(t *testing.T) {
	if testing.Short() {
		t.Skip("soak test")
	}
	leakCheck(t)
	s := newServer(t, testserver.Options{})
	var mu sync.Mutex
	runs := map[string]int{} // tag -> times the tool ran
	s.AddTool(mustTool("charge"), func(_ context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
		var in struct{ Tag string }
		if err := json.Unmarshal(req.Params.Arguments, &in); err != nil {
			return nil, err
		}
		mu.Lock()
		runs[in.Tag]++
		mu.Unlock()
		return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: in.Tag}}}, nil
	})
	h := testserver.ServeHTTP(t, s.Server, testserver.Stateful)
	r := start(t, h.URL, false, fastBackoff, OptReconnect(Reconnect{Wait: waitLimit}))

	// The caller charges with a new tag each time until told to stop.
	stop := make(chan struct{})
	type outcome struct {
		tag string
		err error
	}
	outcomes := make(chan outcome, 1024)
	var callers sync.WaitGroup
	for c := range 2 {
		callers.Go(func() {
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				tag := fmt.Sprintf("c%d-%d", c, i)
				_, err := call(t, context.Background(), r.Connector, "charge", fmt.Sprintf(`{"tag":%q}`, tag))
				outcomes <- outcome{tag, err}
			}
		})
	}
	var results []outcome
	collected := make(chan struct{})
	go func() {
		defer close(collected)
		for o := range outcomes {
			results = append(results, o)
		}
	}()

	recovery := make([]time.Duration, 0, soakHTTPCycles)
	for i := range soakHTTPCycles {
		h.Kill()
		mustNotErr(t, h.Start())
		restarted := time.Now()
		out, err := call(t, context.Background(), r.Connector, "echo", fmt.Sprintf(`{"text":"cycle %d"}`, i))
		if err != nil {
			t.Fatalf("cycle %d: not callable after the restart: %v", i, err)
		}
		recovery = append(recovery, time.Since(restarted))
		if got := read(t, out); got != fmt.Sprintf("cycle %d", i) {
			t.Fatalf("cycle %d: echo %q", i, got)
		}
	}
	close(stop)
	callers.Wait()
	close(outcomes)
	<-collected

	mu.Lock()
	defer mu.Unlock()
	ok, unavailable := 0, 0
	for _, o := range results {
		switch {
		case o.err == nil:
			ok++
			if runs[o.tag] != 1 {
				t.Errorf("call %s succeeded but ran %d times", o.tag, runs[o.tag])
			}
		case errors.Is(o.err, toolkit.ErrUnavailable):
			unavailable++
		default:
			t.Errorf("call %s: %v, want success or ErrUnavailable", o.tag, o.err)
		}
	}
	for tag, n := range runs {
		if n > 1 {
			t.Errorf("the tool ran %d times for %s", n, tag)
		}
	}
	p50, p99 := recoveryStats(recovery)
	t.Logf("%d restarts: callable again after p50 %v, p99 %v; %d calls succeeded, %d failed as unavailable, none ran twice",
		soakHTTPCycles, p50, p99, ok, unavailable)
	mustNotErr(t, r.stop(t))
}

// TestSoakStdioKillRestart SIGKILLs a stdio server tens of times: each
// child is reaped, a new one serves, and no process outlives the test.
func TestSoakStdioKillRestart(t *testing.T) {
	if testing.Short() {
		t.Skip("soak test")
	}
	leakCheck(t)
	childCheck(t)
	r := start(t, stdioURL(t, testserver.StdioServe), false, fastBackoff, OptReconnect(Reconnect{Wait: waitLimit}))
	recovery := make([]time.Duration, 0, soakStdioCycles)
	pid := serverPids(t, r)[0]
	for i := range soakStdioCycles {
		mustNotErr(t, syscall.Kill(pid, syscall.SIGKILL))
		killed := time.Now()
		r.states.wait(t, toolkit.StatusReady, i+2) // the first ready was the first child's
		next := serverPids(t, r)[0]
		recovery = append(recovery, time.Since(killed))
		if next == pid {
			t.Fatalf("cycle %d: the same server %d after the kill", i, pid)
		}
		if !reaped(pid) {
			t.Errorf("cycle %d: killed server %d was not reaped", i, pid)
		}
		if kids := childPids(t); !slices.Equal(kids, []int{next}) {
			t.Errorf("cycle %d: children %v, want only %d", i, kids, next)
		}
		pid = next
	}
	p50, p99 := recoveryStats(recovery)
	t.Logf("%d kills: callable again after p50 %v, p99 %v", soakStdioCycles, p50, p99)
	mustNotErr(t, r.stop(t))
}
