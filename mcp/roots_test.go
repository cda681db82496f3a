package mcp

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/llmkit/toolkit"
	"github.com/llmkit/toolkit/internal/testing/testserver"
)

// rootsServer is a server whose tool "roots" asks the client for its roots
// before doing anything and returns their URIs joined by commas (or the
// code of the error refusing them); changed receives its
// notifications/roots/list_changed.
func rootsServer(t *testing.T) (*testserver.Server, chan struct{}) {
	changed := make(chan struct{}, 16)
	o := initializeOnly()
	o.Server.RootsListChangedHandler = func(context.Context, *sdk.RootsListChangedRequest) { changed <- struct{}{} }
	s := newServer(t, o)
	s.AddTool(mustTool("roots"), func(ctx context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
		res, err := req.Session.ListRoots(ctx, nil)
		if err != nil {
			var werr *jsonrpc.Error
			if errors.As(err, &werr) {
				return &sdk.CallToolResult{IsError: true, Content: []sdk.Content{&sdk.TextContent{Text: fmt.Sprintf("code %d: %s", werr.Code, werr.Message)}}}, nil
			}
			return nil, err
		}
		var uris []string
		for _, r := range res.Roots {
			uris = append(uris, r.URI)
		}
		return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "roots:" + strings.Join(uris, ",")}}}, nil
	})
	return s, changed
}

// rootsOf calls the tool "roots" as the caller of ctx.
func rootsOf(t *testing.T, ctx context.Context, c *Connector) string {
	t.Helper()
	out, err := call(t, ctx, c, "roots", `{}`)
	if err != nil {
		return err.Error()
	}
	return read(t, out)
}

func waitSignal(t *testing.T, ch chan struct{}, what string) {
	t.Helper()
	select {
	case <-ch:
	case <-time.After(waitLimit):
		t.Fatalf("no %s", what)
	}
}

// rootsSession is a caller's session with roots of its own (or none: its
// ListRoots then fails with ErrNotImplemented, like a gateway client
// without roots).
type rootsSession struct {
	*testSession
	roots []*sdk.Root
}

func (s *rootsSession) ListRoots(_ context.Context, p *sdk.ListRootsParams) (*sdk.ListRootsResult, error) {
	if _, ok := p.Meta[callMetaKey]; ok {
		return nil, errors.New("the call tag reached the caller")
	}
	if s.roots == nil {
		return nil, fmt.Errorf("%w: no roots", toolkit.ErrNotImplemented)
	}
	return &sdk.ListRootsResult{Roots: s.roots}, nil
}

// TestRoots checks that a server asking for roots gets the connector's,
// or those of the caller whose call it serves when the caller has some,
// and that replacing the connector's roots tells the server.
func TestRoots(t *testing.T) {
	leakCheck(t)
	for _, transport := range []string{"memory", "http"} {
		t.Run(transport, func(t *testing.T) {
			s, changed := rootsServer(t)
			opts := []Option{OptRoots(&sdk.Root{URI: "file:///a", Name: "a"})}
			url := "memory://x"
			if transport == "memory" {
				m := testserver.NewMemory(s.Server)
				t.Cleanup(m.Close)
				opts = append(opts, OptDialer(m.Dial))
			} else {
				url = testserver.ServeHTTP(t, s.Server, testserver.Stateful).URL
			}
			r := start(t, url, false, opts...)
			ctx := context.Background()
			if got := rootsOf(t, ctx, r.Connector); got != "roots:file:///a" {
				t.Errorf("connector's roots: %s", got)
			}
			caller := &rootsSession{testSession: newTestSession("c"), roots: []*sdk.Root{{URI: "file:///caller"}}}
			if got := rootsOf(t, toolkit.ContextWithSession(ctx, caller), r.Connector); got != "roots:file:///caller" {
				t.Errorf("caller's roots: %s", got)
			}
			none := &rootsSession{testSession: newTestSession("n")}
			if got := rootsOf(t, toolkit.ContextWithSession(ctx, none), r.Connector); got != "roots:file:///a" {
				t.Errorf("roots for a caller without: %s", got)
			}

			// One root added, then one removed: each change is told.
			mustNotErr(t, r.SetRoots(&sdk.Root{URI: "file:///a", Name: "a"}, &sdk.Root{URI: "file:///b"}))
			waitSignal(t, changed, "roots/list_changed")
			if got := rootsOf(t, ctx, r.Connector); got != "roots:file:///a,file:///b" {
				t.Errorf("after SetRoots: %s", got)
			}
			mustNotErr(t, r.SetRoots(&sdk.Root{URI: "file:///b"}))
			waitSignal(t, changed, "roots/list_changed after a removal")
			if got := rootsOf(t, ctx, r.Connector); got != "roots:file:///b" {
				t.Errorf("after a removal: %s", got)
			}
			if got := r.Roots(); len(got) != 1 || got[0].URI != "file:///b" {
				t.Errorf("Roots: %+v", got)
			}
			// Setting the same roots again tells nothing.
			mustNotErr(t, r.SetRoots(&sdk.Root{URI: "file:///b"}))
			if got := rootsOf(t, ctx, r.Connector); got != "roots:file:///b" {
				t.Errorf("after no change: %s", got)
			}
			select {
			case <-changed:
				t.Error("roots/list_changed without a change")
			default:
			}
		})
	}
}

// TestRootSetShared checks that a RootSet given to several connectors
// changes the roots of all of them, each server being told.
func TestRootSetShared(t *testing.T) {
	leakCheck(t)
	rs, err := NewRootSet(&sdk.Root{URI: "file:///one"})
	mustNotErr(t, err)
	var conns []*running
	var changes []chan struct{}
	for range 2 {
		s, changed := rootsServer(t)
		m := testserver.NewMemory(s.Server)
		t.Cleanup(m.Close)
		conns = append(conns, start(t, "memory://x", false, OptDialer(m.Dial), OptRootSet(rs)))
		changes = append(changes, changed)
	}
	mustNotErr(t, rs.Set(&sdk.Root{URI: "file:///two"}))
	for i, r := range conns {
		waitSignal(t, changes[i], "roots/list_changed")
		if got := rootsOf(t, context.Background(), r.Connector); got != "roots:file:///two" {
			t.Errorf("connector %d: %s", i, got)
		}
	}
	// A stopped connector leaves the set.
	mustNotErr(t, conns[0].stop(t))
	rs.mu.Lock()
	n := len(rs.conns)
	rs.mu.Unlock()
	if n != 1 {
		t.Errorf("%d connectors follow the set, want 1", n)
	}
}

// TestRootsRefused checks that a connector without roots refuses
// roots/list with method not found, and tells the application how to
// offer roots.
func TestRootsRefused(t *testing.T) {
	leakCheck(t)
	s, _ := rootsServer(t)
	m := testserver.NewMemory(s.Server)
	t.Cleanup(m.Close)
	logs := newLogCapture()
	r := start(t, "memory://x", false, OptDialer(m.Dial), OptLogger(slog.New(logs)))
	caller := &rootsSession{testSession: newTestSession("c"), roots: []*sdk.Root{{URI: "file:///caller"}}}
	got := rootsOf(t, toolkit.ContextWithSession(context.Background(), caller), r.Connector)
	if !strings.Contains(got, fmt.Sprintf("code %d", jsonrpc.CodeMethodNotFound)) {
		t.Errorf("want a refusal, got %s", got)
	}
	logs.waitFor(t, "INFO refused a roots request", "OptRoots")
	if err := r.SetRoots(&sdk.Root{URI: "file:///x"}); !errors.Is(err, toolkit.ErrBadParameter) {
		t.Errorf("SetRoots without roots: %v", err)
	}
}

// TestRequestOptionsInvalid checks that invalid roots and nil handlers
// make New fail with an error naming the option, and how a RootSet treats
// invalid and repeated roots.
func TestRequestOptionsInvalid(t *testing.T) {
	invalid := map[string]Option{
		"OptRootSet": OptRootSet(nil),
	}
	for i, roots := range [][]*sdk.Root{{nil}, {{URI: "https://example.com/x"}}, {{URI: "file:relative"}}, {{URI: ""}}} {
		invalid[fmt.Sprint("OptRoots ", i)] = OptRoots(roots...)
	}
	for name, o := range invalid {
		_, err := New("http://127.0.0.1:1/mcp", "c", "1", o)
		if !errors.Is(err, toolkit.ErrBadParameter) || !strings.Contains(err.Error(), strings.Fields(name)[0]) {
			t.Errorf("%s: New = %v, want ErrBadParameter naming the option", name, err)
		}
	}
	rs, err := NewRootSet(&sdk.Root{URI: "file:///a"}, &sdk.Root{URI: "file:///a", Name: "again"})
	mustNotErr(t, err)
	if got := rs.Roots(); len(got) != 1 || got[0].Name != "again" {
		t.Errorf("a repeated URI: %+v", got)
	}
	if err := rs.Set(&sdk.Root{URI: "ftp://x/y"}); !errors.Is(err, toolkit.ErrBadParameter) || rs.Roots()[0].URI != "file:///a" {
		t.Errorf("Set with an invalid root: %v", err)
	}
}
