//go:build unix

package mcp

import (
	"context"
	"errors"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/llmkit/toolkit"
	"github.com/llmkit/toolkit/internal/testing/testserver"
	"github.com/llmkit/toolkit/mcp/bridge"
	"github.com/llmkit/toolkit/mcp/mcpserver"
)

// perClientSessionsEnv sets how many client sessions
// TestPerClientStdioSessionsLeaveNothing opens (default 200).
const perClientSessionsEnv = "TOOLKIT_PERCLIENT_SESSIONS"

// TestPerClientStdioSessionsLeaveNothing: many client sessions of a
// gateway come and go, each with an upstream stdio server of its own
// (OptPerClient), a few at a time: each client's calls reach its own
// process, and once they have all left no process, goroutine or file
// descriptor of theirs is left, and no more than OptPerClient sessions
// were ever open at once.
func TestPerClientStdioSessionsLeaveNothing(t *testing.T) {
	requireUnix(t)
	leakCheck(t)
	n := 200
	if v := os.Getenv(perClientSessionsEnv); v != "" {
		var err error
		if n, err = strconv.Atoi(v); err != nil || n < 1 {
			t.Fatalf("%s=%q: want a positive number", perClientSessionsEnv, v)
		}
	}
	const parallel, max = 4, 8
	closed := make(chan struct{}, n)
	d := mustDelegate(t, "gateway", "1", OptLogger(quietLogger()), OptServerRequests(ServerRequests{Forward: true}), OptPerClient(ClientSessionLimits{Max: max}), OptTimeouts(Timeouts{Terminate: time.Second}))
	d.Options = append(d.Options, func(o *options) error {
		o.hooks.clientClosed = func() { closed <- struct{}{} }
		return nil
	})
	tk, err := toolkit.New(toolkit.WithDelegate(d))
	mustNotErr(t, err)
	started := make(chan struct{}, 1)
	srv, err := mcpserver.New(tk, nil, mcpserver.WithClientSessions(d, startedObserver(started)))
	mustNotErr(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	runDone := make(chan error, 1)
	go func() { runDone <- tk.Run(ctx) }()
	defer func() {
		srv.Close()
		cancel()
		mustNotErr(t, <-runDone)
	}()
	// A client that watches the list sees when the server offers the
	// upstream's tools; its session starts before the connector exists,
	// so it has no upstream session of its own.
	changed := make(chan struct{}, 1)
	pt, ps := sdk.NewInMemoryTransports()
	pctx, stopProbe := context.WithCancel(context.Background())
	probeServed := make(chan struct{})
	go func() { _ = srv.Run(pctx, ps); close(probeServed) }()
	probe, err := sdk.NewClient(&sdk.Implementation{Name: "probe", Version: "1"}, &sdk.ClientOptions{
		ToolListChangedHandler: func(context.Context, *sdk.ToolListChangedRequest) {
			select {
			case changed <- struct{}{}:
			default:
			}
		},
	}).Connect(context.Background(), pt, &sdk.ClientSessionOptions{ProtocolVersion: StatefulProtocolVersion})
	mustNotErr(t, err)
	<-started
	mustNotErr(t, tk.AddConnectorNS("up", stdioURL(t, testserver.StdioServe)))
	for listed := false; !listed; {
		<-changed
		res, err := probe.ListTools(context.Background(), nil)
		mustNotErr(t, err)
		for _, tl := range res.Tools {
			listed = listed || tl.Name == "pid"
		}
	}
	probe.Close()
	stopProbe()
	<-probeServed
	shared, err := callPid(func(ctx context.Context) (string, error) {
		r, err := tk.Call(ctx, "up.pid")
		if err != nil {
			return "", err
		}
		b, err := r.Read(ctx)
		return string(b), err
	})
	mustNotErr(t, err)
	item, err := tk.Lookup(context.Background(), "up.pid")
	mustNotErr(t, err)
	conn := item.(*remoteTool).c

	fds := openFDs(t)
	start := time.Now()
	var ms0, ms1 runtime.MemStats
	runtime.ReadMemStats(&ms0)

	var mu sync.Mutex
	var pids []int
	sem := make(chan struct{}, parallel)
	var wg sync.WaitGroup
	for i := range n {
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			ct, st := sdk.NewInMemoryTransports()
			sctx, stop := context.WithCancel(context.Background())
			served := make(chan struct{})
			go func() { _ = srv.Run(sctx, st); close(served) }()
			defer func() { stop(); <-served }()
			cl := sdk.NewClient(&sdk.Implementation{Name: "c" + strconv.Itoa(i), Version: "1"}, nil)
			cs, err := cl.Connect(context.Background(), ct, &sdk.ClientSessionOptions{ProtocolVersion: StatefulProtocolVersion})
			if err != nil {
				t.Error(err)
				return
			}
			defer cs.Close()
			pid, err := callPid(func(ctx context.Context) (string, error) {
				res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "pid", Arguments: map[string]any{}})
				if err != nil {
					return "", err
				}
				if res.IsError || len(res.Content) != 1 {
					return "", errors.New("the call failed")
				}
				tc, _ := res.Content[0].(*sdk.TextContent)
				if tc == nil {
					return "", errors.New("no text")
				}
				return tc.Text, nil
			})
			if err != nil {
				t.Errorf("client %d: %v", i, err)
				return
			}
			if pid == shared {
				t.Errorf("client %d was served by the shared process %d", i, pid)
			}
			mu.Lock()
			pids = append(pids, pid)
			mu.Unlock()
		})
	}
	wg.Wait()
	for range n {
		<-closed
	}
	elapsed := time.Since(start)
	runtime.ReadMemStats(&ms1)
	if open, opened := conn.ClientSessions(); open != 0 || opened != int64(n) {
		t.Errorf("ClientSessions = %d open, %d opened; want 0, %d", open, opened, n)
	}
	for _, pid := range pids {
		if err := syscall.Kill(pid, 0); !errors.Is(err, syscall.ESRCH) {
			t.Errorf("process %d of a client that left is still there (%v)", pid, err)
		}
	}
	if got := openFDs(t); got > fds {
		t.Errorf("%d file descriptors open after the clients left, %d before", got, fds)
	}
	t.Logf("%d client sessions, each with its own stdio server, %d at a time: %v (%v a session), %d MB allocated",
		n, parallel, elapsed.Round(time.Millisecond), (elapsed / time.Duration(n)).Round(time.Microsecond), (ms1.TotalAlloc-ms0.TotalAlloc)>>20)
}

// callPid makes a call of the test server's "pid" tool and returns the pid.
func callPid(call func(context.Context) (string, error)) (int, error) {
	s, err := call(context.Background())
	if err != nil {
		return 0, err
	}
	return strconv.Atoi(strings.TrimSpace(s))
}

// openFDs counts the process's open file descriptors.
func openFDs(t *testing.T) int {
	t.Helper()
	es, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Fatal(err)
	}
	return len(es)
}

// startedObserver is a bridge.ClientObserver that signals each client
// session that starts on ch, when ch has room.
type startedObserver chan struct{}

func (ch startedObserver) ClientStarted(context.Context, bridge.Client) {
	select {
	case ch <- struct{}{}:
	default:
	}
}
