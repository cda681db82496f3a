// Command example is the toolkit's example program: a guided demo of the
// library, written the way an application would use it.
//
// Usage:
//
//	go run ./example
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
// The MCP gateway that serves many servers as one is a program of its own:
// github.com/llmkit/toolkit/cmd/toolkit-gateway.
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
	case serverSubcommand: // hidden: the demo's upstream, and the sample gateway's
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
	logger, err := newLogger(stderr, *level)
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

// newLogger returns a text logger writing to w at the given level.
func newLogger(w io.Writer, level string) (*slog.Logger, error) {
	var lvl slog.Level
	if err := lvl.UnmarshalText([]byte(level)); err != nil {
		return nil, fmt.Errorf("bad log level %q: use debug, info, warn or error", level)
	}
	// Every line goes through toolkit.RedactHandler, so no token in a
	// connector URL (an env value, user information, a query key) reaches
	// the log, whoever logs it.
	return slog.New(toolkit.RedactHandler(slog.NewTextHandler(w, &slog.HandlerOptions{Level: lvl}))), nil
}

// usageError turns a flag parsing error into the command's result: help
// is not an error, anything else is a usage error (already printed).
func usageError(err error) error {
	if errors.Is(err, flag.ErrHelp) {
		return err
	}
	return errUsage
}
