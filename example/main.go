// Command example is the toolkit's example program: a guided demo of the
// library and a ready MCP gateway.
//
// Usage:
//
//	go run ./example                                         # the demo
//	go run ./example serve --config example/gateway.yaml     # the gateway
//
// The demo needs no configuration and no network. It builds a toolkit
// from typed Go tools, embedded markdown prompts and static resources,
// serves a "user" namespace from a temporary directory, connects to a real
// MCP server (this same program, started as a child process in server
// mode over stdio), and walks through listing, lookup, calls with progress,
// prompt rendering, a live edit of the user store and removal.
//
// Prompts run on a model when the environment names an OpenAI-compatible
// endpoint:
//
//	OPENAI_BASE_URL  the API base, e.g. http://localhost:11434/v1 (default https://api.openai.com/v1)
//	OPENAI_API_KEY   sent as a bearer token
//	OPENAI_MODEL     the model (default: the prompt's own, else gpt-4o-mini)
//
// Without OPENAI_BASE_URL or OPENAI_API_KEY, the demo shows the rendered
// prompt instead.
//
// The gateway ("serve") reads a YAML file listing upstream MCP servers and
// serves them, with a directory of prompts, as one MCP endpoint over
// streamable HTTP or stdio; see gateway.yaml for the format. It logs with
// log/slog, reports each upstream at /healthz (and, with metrics: true,
// OpenTelemetry metrics in Prometheus text format at /metrics), holds its
// first lists until the upstreams are ready (startup_wait), reloads its
// configuration on SIGHUP and shuts down cleanly on SIGINT or SIGTERM.
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
	"path/filepath"
	"syscall"
	"time"

	"github.com/llmkit/toolkit"
	"github.com/llmkit/toolkit/mcp"
)

// version is the program's version, reported to MCP peers.
const version = "0.1.0"

func main() {
	os.Exit(run(context.Background(), os.Args[1:], os.Stdout, os.Stderr))
}

// run runs the subcommand named by args and returns the exit code.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()

	cmd := ""
	if len(args) > 0 {
		cmd, args = args[0], args[1:]
	}
	var err error
	switch cmd {
	case "", "demo":
		err = demoCommand(ctx, args, stdout, stderr)
	case "serve":
		err = serveCommand(ctx, args, stderr)
	case serverSubcommand: // hidden: the demo's and the sample gateway's upstream
		err = serveStdio(ctx)
	case "help", "-h", "-help", "--help":
		usage(stdout)
		return 0
	default:
		usage(stderr)
		return 2
	}
	switch {
	case err == nil:
		return 0
	case errors.Is(err, flag.ErrHelp):
		return 0
	case errors.Is(err, errUsage):
		return 2
	}
	fmt.Fprintf(stderr, "example: %v\n", err)
	return 1
}

// errUsage reports bad command-line arguments (already explained).
var errUsage = errors.New("usage")

func usage(w io.Writer) {
	fmt.Fprint(w, `usage:
  example [demo] [--log-level LEVEL]     run the guided demo
  example serve --config FILE [flags]    run the MCP gateway (serve -h for flags)
`)
}

// demoCommand parses the demo's flags and runs it.
func demoCommand(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("demo", flag.ContinueOnError)
	fs.SetOutput(stderr)
	level := fs.String("log-level", "warn", "log level: debug, info, warn or error")
	timeout := fs.Duration("ready-timeout", 30*time.Second, "how long to wait for a connector to come up")
	if err := fs.Parse(args); err != nil {
		return usageError(err)
	}
	logger, err := newLogger(stderr, "text", *level)
	if err != nil {
		return err
	}
	self, err := selfURL()
	if err != nil {
		return err
	}
	return runDemo(ctx, demoConfig{
		out:          stdout,
		logger:       logger,
		serverURL:    self,
		model:        openAIFromEnv(os.Getenv),
		readyTimeout: *timeout,
	})
}

// selfURL returns the stdio URL that starts this program in MCP server
// mode.
func selfURL() (string, error) {
	exe, err := os.Executable()
	if err != nil {
		return "", fmt.Errorf("cannot find this program's executable: %w", err)
	}
	if resolved, err := filepath.EvalSymlinks(exe); err == nil {
		exe = resolved
	}
	cmd := mcp.StdioCommand{Path: filepath.Clean(exe), Args: []string{serverSubcommand}}
	return cmd.String(), nil
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

// usageError turns a flag parsing error into the command's result: help
// is not an error, anything else is a usage error (already printed).
func usageError(err error) error {
	if errors.Is(err, flag.ErrHelp) {
		return err
	}
	return errUsage
}
