package mcpserver

import (
	"context"
	"sync"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// startupGate holds the first item requests of a server until the
// toolkit's connectors have settled or its deadline has passed (see
// WithStartupWait).
type startupGate struct {
	deadline time.Time
	ctx      context.Context // cancelled by Close
	cancel   context.CancelFunc
	once     sync.Once
	started  chan struct{} // closed when the wait has started
	done     chan struct{} // closed when the wait is over
}

// gatedMethods are the requests that wait for the startup gate.
var gatedMethods = map[string]bool{
	"tools/list":               true,
	"tools/call":               true,
	"prompts/list":             true,
	"prompts/get":              true,
	"resources/list":           true,
	"resources/read":           true,
	"resources/templates/list": true,
}

func newStartupGate(d time.Duration) *startupGate {
	ctx, cancel := context.WithCancel(context.Background())
	return &startupGate{
		deadline: time.Now().Add(d),
		ctx:      ctx,
		cancel:   cancel,
		started:  make(chan struct{}),
		done:     make(chan struct{}),
	}
}

// middleware makes the gated requests wait for the gate.
func (s *Server) startupMiddleware(next sdk.MethodHandler) sdk.MethodHandler {
	return func(ctx context.Context, method string, req sdk.Request) (sdk.Result, error) {
		if gatedMethods[method] {
			s.startup.wait(ctx, s)
		}
		return next(ctx, method, req)
	}
}

// wait returns once the gate is open or ctx is done. The first caller
// starts the wait for the connectors.
func (g *startupGate) wait(ctx context.Context, s *Server) {
	select {
	case <-g.done:
		return
	default:
	}
	g.once.Do(func() {
		close(g.started)
		go g.run(s)
	})
	select {
	case <-g.done:
	case <-ctx.Done():
	}
}

// run waits for the connectors until the deadline, then registers what
// the toolkit holds (the server's own subscriber may not have yet) and
// opens the gate.
func (g *startupGate) run(s *Server) {
	defer close(g.done)
	ctx, cancel := context.WithDeadline(g.ctx, g.deadline)
	defer cancel()
	start := time.Now()
	states, err := s.tk.WaitConnectors(ctx)
	if g.ctx.Err() != nil {
		return // closed
	}
	if err != nil {
		s.logger.Info("mcp server: answering before every upstream is ready", "waited", time.Since(start).Round(time.Millisecond), "reason", err)
	} else {
		s.logger.Debug("mcp server: upstreams settled", "connectors", len(states), "waited", time.Since(start).Round(time.Millisecond))
	}
	if err := s.Sync(g.ctx); err != nil {
		s.logger.Warn("mcp server: synchronising with the toolkit", "error", err)
	}
}

// close ends the wait and waits for it to end, if it started.
func (g *startupGate) close() {
	g.cancel()
	select {
	case <-g.started:
		<-g.done
	default:
	}
}
