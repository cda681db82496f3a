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
	"errors"
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
		d, err := mcp.NewDelegate("toolkit-gateway", "1.0.0", mcp.OptLogger(logger), mcp.OptServerRequests(mcp.ServerRequests{Forward: true}))
		if err != nil {
			return err
		}
		tkOpts = append(tkOpts, toolkit.WithDelegate(d))
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
		if err := waitReady(ctx, tk); err != nil {
			return err
		}
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	srv, err := mcpserver.New(tk, &sdk.Implementation{Name: "toolkit-conformance", Version: "1.0.0"}, opts...)
	if err != nil {
		ln.Close()
		return err
	}
	defer srv.Close()
	fmt.Printf("listening on http://%s/mcp\n", ln.Addr())
	return srv.ServeListener(ctx, ln)
}

// waitReady waits until every upstream is ready, for at most a minute; one
// that fails its first connection fails the start.
func waitReady(ctx context.Context, tk *toolkit.Toolkit) error {
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	states, err := tk.WaitConnectors(ctx)
	var failed []string
	for _, st := range states {
		if st.Status != toolkit.StatusReady {
			failed = append(failed, st.Namespace+": "+st.Status.String()+" "+st.LastError)
		}
	}
	if err == nil && len(failed) > 0 {
		err = errors.New("upstreams not ready")
	}
	if err != nil {
		return fmt.Errorf("%w: %s", err, strings.Join(failed, "; "))
	}
	return nil
}
