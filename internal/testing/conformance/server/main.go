// Command server is the MCP server the conformance suite tests: a toolkit
// holding the suite's fixture tools, prompts and resources as builtins,
// served through mcpserver.New over streamable HTTP at /mcp.
//
//	go run ./internal/testing/conformance/server -http 127.0.0.1:8080 [-stateless]
//	go run ./internal/testing/conformance/server -upstream fixtures=http://127.0.0.1:8080/mcp -upstream ...
//
// With -upstream (repeatable, NAMESPACE=URL) it is a gateway instead: the
// toolkit holds no builtins but a connector per upstream server, and the
// server re-exports their tools, prompts, resources and resource
// templates. It prints its address once every upstream is ready.
//
// Once it accepts connections it prints "listening on http://HOST:PORT/mcp"
// to standard output (with the real port when -http asks for port 0). It
// stops on SIGINT or SIGTERM.
package main

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"net"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/llmkit/toolkit"
	"github.com/llmkit/toolkit/mcp"
	"github.com/llmkit/toolkit/mcp/mcpserver"
)

// upstreams collects -upstream flags.
type upstreams []string

func (u *upstreams) String() string { return strings.Join(*u, ",") }

func (u *upstreams) Set(v string) error {
	ns, url, ok := strings.Cut(v, "=")
	if !ok || ns == "" || url == "" {
		return fmt.Errorf("want NAMESPACE=URL, got %q", v)
	}
	*u = append(*u, v)
	return nil
}

func main() {
	addr := flag.String("http", "127.0.0.1:0", "address to listen on")
	stateless := flag.Bool("stateless", false, "serve stateless streamable HTTP")
	verbose := flag.Bool("v", false, "log server diagnostics to stderr")
	var ups upstreams
	flag.Var(&ups, "upstream", "NAMESPACE=URL of an upstream MCP server (gateway mode; repeatable)")
	flag.Parse()
	if err := run(*addr, *stateless, *verbose, ups); err != nil {
		fmt.Fprintln(os.Stderr, "conformance server:", err)
		os.Exit(1)
	}
}

func run(addr string, stateless, verbose bool, ups upstreams) error {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()

	level := slog.LevelWarn
	if verbose {
		level = slog.LevelDebug
	}
	logger := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: level}))

	var inner toolkit.ToolkitDelegate
	changed := make(chan struct{}, 1) // an upstream's lists changed
	tkOpts := []toolkit.Option{toolkit.WithLogger(logger)}
	opts := []mcpserver.Option{mcpserver.WithLogger(logger)}
	if len(ups) == 0 {
		tkOpts = append(tkOpts,
			toolkit.WithTool(tools()...),
			toolkit.WithPrompt(prompts()...),
			toolkit.WithResource(resources()...),
			toolkit.WithResourceTemplate(templates()...),
		)
	} else {
		d := mcp.NewDelegate("toolkit-gateway", "1.0.0", mcp.OptLogger(logger), mcp.OptForwardServerRequests())
		d.Events = func(toolkit.ConnectorEvent) {
			select {
			case changed <- struct{}{}:
			default:
			}
		}
		inner = d
	}
	if inner != nil {
		tkOpts = append(tkOpts, toolkit.WithDelegate(inner))
	}
	tk, err := toolkit.New(tkOpts...)
	if err != nil {
		return err
	}
	if stateless {
		opts = append(opts, mcpserver.WithHTTP(mcpserver.WithStateless()))
	} else {
		opts = append(opts, mcpserver.WithHTTP(mcpserver.WithEventStore(sdk.NewMemoryEventStore(nil))))
	}
	if len(ups) > 0 {
		for _, u := range ups {
			ns, url, _ := strings.Cut(u, "=")
			if err := tk.AddConnectorNS(ns, url); err != nil {
				return err
			}
		}
		rctx, rcancel := context.WithCancel(ctx)
		runErr := make(chan error, 1)
		go func() { runErr <- tk.Run(rctx) }()
		defer func() { rcancel(); <-runErr }()
		if err := waitReady(ctx, tk, len(ups), changed); err != nil {
			return err
		}
	}
	srv, err := mcpserver.New(tk, &sdk.Implementation{Name: "toolkit-conformance", Version: "1.0.0"}, opts...)
	if err != nil {
		return err
	}
	defer srv.Close()

	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	fmt.Printf("listening on http://%s/mcp\n", ln.Addr())
	return srv.ServeListener(ctx, ln)
}

// waitReady waits until n connectors are ready, for at most a minute. It
// looks again each time an upstream's lists change: a connector's first
// listing follows its ready state, so the last change shows them all.
func waitReady(ctx context.Context, tk *toolkit.Toolkit, n int, changed <-chan struct{}) error {
	deadline := time.NewTimer(time.Minute)
	defer deadline.Stop()
	for {
		ready := 0
		var states []string
		for _, c := range tk.Connectors() {
			if c.Status == toolkit.StatusReady {
				ready++
			}
			states = append(states, c.Namespace+": "+c.Status.String()+" "+c.LastError)
		}
		if ready >= n {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-deadline.C:
			return fmt.Errorf("upstreams not ready: %s", strings.Join(states, "; "))
		case <-changed:
		}
	}
}
