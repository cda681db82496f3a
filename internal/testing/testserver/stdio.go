package testserver

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"syscall"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// StdioEnv is the environment variable that turns a test binary into a
// stdio server (see MaybeServeStdio).
const StdioEnv = "TOOLKIT_TESTSERVER_STDIO"

// Behaviours selected by the value of StdioEnv.
const (
	// StdioServe serves the catalogue until stdin closes.
	StdioServe = "serve"
	// StdioStubborn serves, ignores SIGTERM and does not exit when stdin
	// closes: only SIGKILL ends it.
	StdioStubborn = "stubborn"
	// StdioSpawn serves and first starts a child of its own (a StdioSleep
	// process) in its process group; the "pid" tool reports
	// "SERVERPID CHILDPID".
	StdioSpawn = "spawn"
	// StdioSleep blocks until killed, ignoring SIGTERM.
	StdioSleep = "sleep"
	// StdioExit writes a line to stderr and exits with status 3 at once.
	StdioExit = "exit"
	// StdioMeta serves the catalogue and the `_meta` catalogue
	// (AddMetaItems), declaring the extensions of MetaOptions, until stdin
	// closes.
	StdioMeta = "meta"
	// StdioAsk serves and, once initialized, sends its client a
	// sampling/createMessage request.
	StdioAsk = "ask"
)

// MaybeServeStdio does nothing unless StdioEnv is set; then it behaves as
// the variable says and exits the process. Call it first in TestMain, and
// start the test binary itself (os.Executable) with StdioEnv set to get a
// stdio server.
func MaybeServeStdio() {
	mode := os.Getenv(StdioEnv)
	if mode == "" {
		return
	}
	fmt.Fprintf(os.Stderr, "testserver: %s mode\nsecond line\n", mode)
	switch mode {
	case StdioExit:
		os.Exit(3)
	case StdioSleep:
		signal.Ignore(syscall.SIGTERM)
		select {}
	}
	o := Options{Name: "stdio-testserver"}
	switch mode {
	case StdioMeta:
		o.Server = MetaOptions()
	case StdioAsk:
		o.Server = &sdk.ServerOptions{InitializedHandler: func(ctx context.Context, req *sdk.InitializedRequest) {
			go req.Session.CreateMessage(context.Background(), &sdk.CreateMessageParams{
				MaxTokens: 1,
				Messages:  []*sdk.SamplingMessage{{Role: "user", Content: &sdk.TextContent{Text: "hello"}}},
			})
		}}
	}
	s := New(o)
	child := 0
	if mode == StdioSpawn {
		exe, err := os.Executable()
		if err != nil {
			os.Exit(4)
		}
		cmd := exec.Command(exe)
		cmd.Env = append(os.Environ(), StdioEnv+"="+StdioSleep)
		if err := cmd.Start(); err != nil {
			os.Exit(4)
		}
		child = cmd.Process.Pid
	}
	if child != 0 {
		s.AddTool(&sdk.Tool{Name: "pid", InputSchema: ObjectSchema()}, func(context.Context, *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			return text(fmt.Sprintf("%d %d", os.Getpid(), child)), nil
		})
	}
	if mode == StdioStubborn {
		signal.Ignore(syscall.SIGTERM)
	}
	if mode == StdioMeta {
		s.AddMetaItems()
	}
	_ = s.Run(context.Background(), &sdk.StdioTransport{})
	if mode == StdioStubborn {
		select {}
	}
	os.Exit(0)
}
