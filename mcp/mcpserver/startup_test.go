package mcpserver

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/llmkit/toolkit"
)

// startupFixture is a served toolkit with one gated upstream, "up", whose
// tool "late" appears when its gate opens, and a running toolkit.
func startupFixture(t *testing.T, opts ...Option) (*fixture, *gatedConn) {
	t.Helper()
	up := newGatedConn(namedTool("late", "up"))
	tk, err := toolkit.New(toolkit.WithDelegate(&gatedDelegate{conns: map[string]*gatedConn{"fake://up": up}}),
		toolkit.WithLogger(quietLogger()), toolkit.WithTool(namedTool("early", "builtin")))
	mustNotErr(t, err)
	mustNotErr(t, tk.AddConnectorNS("up", "fake://up"))
	srv, err := New(tk, nil, append([]Option{WithLogger(quietLogger())}, opts...)...)
	mustNotErr(t, err)
	t.Cleanup(func() { srv.Close() })
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- tk.Run(ctx) }()
	t.Cleanup(func() { cancel(); <-done })
	return &fixture{tk: tk, srv: srv}, up
}

// arrivals returns a channel that receives the method of every request the
// server receives, before it is handled.
func arrivals(srv *Server) <-chan string {
	ch := make(chan string, 16)
	srv.SDK().AddReceivingMiddleware(func(next sdk.MethodHandler) sdk.MethodHandler {
		return func(ctx context.Context, method string, req sdk.Request) (sdk.Result, error) {
			select {
			case ch <- method:
			default:
			}
			return next(ctx, method, req)
		}
	})
	return ch
}

// awaitMethod receives from arrived until method comes.
func awaitMethod(t *testing.T, arrived <-chan string, method string) {
	t.Helper()
	for {
		if recvString(t, arrived) == method {
			return
		}
	}
}

// TestServerStartupWaitList checks that a client that connects while an
// upstream is still starting gets the upstream's tools in its first list:
// the list waits for the upstream to be ready.
func TestServerStartupWaitList(t *testing.T) {
	leakCheck(t)
	f, up := startupFixture(t, WithStartupWait(waitLimit))
	arrived := arrivals(f.srv)
	cs := f.connect(t, nil) // initialize does not wait
	listed := make(chan []string, 1)
	go func() {
		var names []string
		res, err := cs.ListTools(context.Background(), nil)
		if err == nil {
			for _, tl := range res.Tools {
				names = append(names, tl.Name)
			}
		}
		listed <- names
	}()
	awaitMethod(t, arrived, "tools/list")
	close(up.gate) // the upstream becomes ready after the list was asked for
	select {
	case names := <-listed:
		slices.Sort(names)
		if want := []string{"early", "late"}; !slices.Equal(names, want) {
			t.Fatalf("first list %v, want %v", names, want)
		}
	case <-time.After(waitLimit):
		t.Fatal("no answer to tools/list")
	}
}

// TestServerStartupWaitCall checks that a one-shot client calling an
// upstream tool at once reaches it instead of getting "unknown tool".
func TestServerStartupWaitCall(t *testing.T) {
	leakCheck(t)
	f, up := startupFixture(t, WithStartupWait(waitLimit))
	arrived := arrivals(f.srv)
	cs := f.connect(t, nil)
	type answer struct {
		res *sdk.CallToolResult
		err error
	}
	called := make(chan answer, 1)
	go func() {
		res, err := cs.CallTool(context.Background(), &sdk.CallToolParams{Name: "late"})
		called <- answer{res, err}
	}()
	awaitMethod(t, arrived, "tools/call")
	close(up.gate)
	select {
	case a := <-called:
		if a.err != nil || resultText(t, a.res) != "up" {
			t.Fatalf("call: %v %+v", a.err, a.res)
		}
	case <-time.After(waitLimit):
		t.Fatal("no answer to tools/call")
	}
}

// TestServerStartupWaitBounded checks that the wait ends at its deadline
// when an upstream never becomes ready, that later requests do not wait,
// and that the upstream's tools arrive later with list_changed.
func TestServerStartupWaitBounded(t *testing.T) {
	leakCheck(t)
	f, up := startupFixture(t, WithStartupWait(50*time.Millisecond))
	notes := newNoteLog()
	cs := f.connect(t, notes.options())
	ctx := context.Background()
	if got := toolNames(t, cs); !slices.Equal(got, []string{"early"}) {
		t.Fatalf("list after the deadline: %v", got)
	}
	close(up.gate)
	select {
	case <-notes.toolChanges:
	case <-time.After(waitLimit):
		t.Fatal("no list_changed")
	}
	if _, err := f.tk.WaitConnectors(ctx, "up"); err != nil {
		t.Fatal(err)
	}
	f.tk.WaitEvents()
	if got := toolNames(t, cs); !slices.Equal(got, []string{"early", "late"}) {
		t.Fatalf("list after the upstream came: %v", got)
	}
}

func TestServerStartupWaitOption(t *testing.T) {
	tk, err := toolkit.New()
	mustNotErr(t, err)
	_, err = New(tk, nil, WithStartupWait(-time.Second))
	if !errors.Is(err, toolkit.ErrBadParameter) {
		t.Errorf("negative wait: %v", err)
	}
}
