package mcpserver

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"time"

	"github.com/llmkit/toolkit"
)

// Serve exposes tk over streamable HTTP on addr (for example
// "127.0.0.1:8080") at the path set by WithPath ("/mcp" by default) until
// ctx is cancelled, then shuts the HTTP server down. opts configure the
// server; WithHTTP among them configures its HTTP face.
func Serve(ctx context.Context, tk *toolkit.Toolkit, addr string, opts ...Option) error {
	s, err := New(tk, nil, opts...)
	if err != nil {
		return err
	}
	defer s.Close()
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	return s.ServeListener(ctx, ln)
}

// ServeListener serves the streamable HTTP handler (Handler with opts) at
// its path (WithPath, "/mcp" by default), and with WithSSEPath the legacy
// SSE handler (SSEHandler) at its own, on ln until ctx is cancelled (see
// ServeHTTP). It closes ln.
func (s *Server) ServeListener(ctx context.Context, ln net.Listener, opts ...HTTPOption) error {
	h, cfg, err := s.handler(opts)
	if err != nil {
		ln.Close()
		return err
	}
	path := cfg.path
	if path == "" {
		path = "/mcp"
	}
	mux := http.NewServeMux()
	mux.Handle(path, h)
	if cfg.prm != nil {
		if err := serveMetadata(mux, cfg.prm, path, cfg.sse.path); err != nil {
			ln.Close()
			return err
		}
	}
	if cfg.sse.path != "" {
		if cfg.sse.path == path {
			ln.Close()
			return fmt.Errorf("%w: WithSSEPath(%q): the streamable HTTP endpoint is already there", toolkit.ErrBadParameter, cfg.sse.path)
		}
		mux.Handle(cfg.sse.path, cfg.sseHandler(s))
	}
	return serveHTTP(ctx, ln, mux, cfg)
}

// ShutdownGrace is how long ServeHTTP gives open requests to finish once
// its context is cancelled.
const ShutdownGrace = 5 * time.Second

// ReadHeaderTimeout is how long ServeHTTP gives a request's headers to
// arrive; past it the connection is closed.
const ReadHeaderTimeout = 10 * time.Second

// ServeHTTP serves h on ln until ctx is cancelled, then shuts down. An MCP
// handler keeps event streams open for as long as a session lives, so a
// plain http.Server.Shutdown would wait for them forever: ServeHTTP
// cancels every request's context first, then gives open requests
// ShutdownGrace to finish and closes what is left. Use it to serve a mux
// that holds Handler beside routes of the application's own (a health
// check, say). It closes ln.
//
// Headers must arrive within ReadHeaderTimeout, and a keep-alive
// connection waiting for its next request is closed after WithIdleTimeout
// (DefaultIdleTimeout); of opts only WithIdleTimeout counts, the others
// are the handler's. An invalid option is returned at once.
func ServeHTTP(ctx context.Context, ln net.Listener, h http.Handler, opts ...HTTPOption) error {
	var cfg httpConfig
	if err := cfg.apply(opts); err != nil {
		ln.Close()
		return err
	}
	return serveHTTP(ctx, ln, h, &cfg)
}

// serveHTTP is ServeHTTP with the configuration of its options.
func serveHTTP(ctx context.Context, ln net.Listener, h http.Handler, cfg *httpConfig) error {
	base, cancelBase := context.WithCancel(context.Background())
	defer cancelBase()
	hs := &http.Server{
		Handler:           h,
		ReadHeaderTimeout: ReadHeaderTimeout,
		IdleTimeout:       cfg.ceilings.idle(),
		BaseContext:       func(net.Listener) context.Context { return base },
	}
	errc := make(chan error, 1)
	go func() { errc <- hs.Serve(ln) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	cancelBase() // ends event streams, which never go idle by themselves
	sctx, cancel := context.WithTimeout(context.Background(), ShutdownGrace)
	defer cancel()
	err := hs.Shutdown(sctx)
	if errors.Is(err, context.DeadlineExceeded) {
		err = hs.Close()
	}
	if serr := <-errc; serr != nil && !errors.Is(serr, http.ErrServerClosed) {
		return serr
	}
	return err
}
