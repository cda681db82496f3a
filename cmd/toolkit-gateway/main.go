// Command toolkit-gateway serves many MCP servers as one: it reads a YAML
// file listing upstream MCP servers (stdio commands or streamable HTTP /
// SSE URLs) and a directory of prompts, and serves them as one MCP
// endpoint over streamable HTTP or stdio, built on the toolkit library
// (package github.com/llmkit/toolkit/mcp/mcpserver).
//
// Install and run it with:
//
//	go install github.com/llmkit/toolkit/cmd/toolkit-gateway@latest
//	toolkit-gateway --config gateway.yaml
//
// gateway.yaml beside this file documents every key. The gateway logs with
// log/slog, reports each upstream at /healthz and /livez (and, with
// metrics: true, OpenTelemetry metrics in Prometheus text format at
// /metrics), authenticates its clients with bearer tokens or JWT access
// tokens (auth), authorizes itself to upstreams with OAuth (oauth), holds
// its first lists until the upstreams are ready (startup_wait), decides
// every tool call by a policy (allow, deny or ask rules, rate limits,
// pinned tool definitions; "toolkit-gateway pins list|approve" reviews
// changed definitions), writes an audit log, reloads its configuration on
// SIGHUP and shuts down cleanly on SIGINT or SIGTERM.
// Prompts run on the connected client's own model through MCP sampling.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"syscall"

	"github.com/llmkit/toolkit"
	"github.com/llmkit/toolkit/codemode"
)

// version is the program's version, reported to MCP peers.
const version = "0.1.0"

func main() {
	// A code-mode worker (the gateway re-executed to run one script)
	// runs it and exits here.
	codemode.ServeWorker()
	os.Exit(run(context.Background(), os.Args[1:], os.Stdout, os.Stderr))
}

// run runs the gateway with the command-line arguments args and returns the
// exit code. A leading "serve" is accepted and ignored, so that
// "toolkit-gateway serve --config FILE" reads as it did before; "pins"
// lists and approves changed tool definitions (pinsCommand).
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
	var err error
	switch {
	case len(args) > 0 && args[0] == "pins":
		err = pinsCommand(ctx, args[1:], stdout, stderr)
	case len(args) > 0 && args[0] == "serve":
		err = serveCommand(ctx, args[1:], stderr)
	default:
		err = serveCommand(ctx, args, stderr)
	}
	switch {
	case err == nil, errors.Is(err, flag.ErrHelp):
		return 0
	case errors.Is(err, errUsage):
		return 2
	}
	fmt.Fprintf(stderr, "%s: %v\n", gatewayName, err)
	return 1
}

// errUsage reports bad command-line arguments (already explained).
var errUsage = errors.New("usage")

// usageError turns a flag parsing error into the command's result: help
// is not an error, anything else is a usage error (already printed).
func usageError(err error) error {
	if errors.Is(err, flag.ErrHelp) {
		return err
	}
	return errUsage
}

// newLogger returns a logger writing to w in the given format ("text" or
// "json") at the given level.
func newLogger(w io.Writer, format, level string) (*slog.Logger, error) {
	var lvl slog.Level
	if err := lvl.UnmarshalText([]byte(level)); err != nil {
		return nil, fmt.Errorf("bad log level %q: use debug, info, warn or error", level)
	}
	opts := &slog.HandlerOptions{Level: lvl}
	// Every line the program logs goes through toolkit.RedactHandler, so
	// no token in a connector URL (an env value, user information, a query
	// key) reaches the log, whoever logs it.
	switch format {
	case "text":
		return slog.New(toolkit.RedactHandler(slog.NewTextHandler(w, opts))), nil
	case "json":
		return slog.New(toolkit.RedactHandler(slog.NewJSONHandler(w, opts))), nil
	}
	return nil, fmt.Errorf("bad log format %q: use text or json", format)
}
