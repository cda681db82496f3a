package testserver

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// HostileEnv is the environment variable that turns a test binary into a
// stdio server that misbehaves (see MaybeServeHostileStdio).
const HostileEnv = "TOOLKIT_TESTSERVER_HOSTILE"

// Behaviours selected by the value of HostileEnv. Each serves the
// catalogue of New (named "hostile-testserver") on stdio.
const (
	// HostileStderrFlood first writes StderrFloodLines lines to stderr as
	// fast as it can.
	HostileStderrFlood = "stderr-flood"
	// HostileGarbage writes a line that is not JSON (GarbageLine, as a
	// stray console.log would) to stdout before every message.
	HostileGarbage = "garbage"
	// HostileSetsid first starts a helper (a StdioSleep process) in a new
	// session of its own, out of the server's process group; the "pid"
	// tool reports "SERVERPID HELPERPID".
	HostileSetsid = "setsid"
	// HostileSchemaBombs serves, instead of the catalogue of New, the
	// tools of SchemaBombHandler: two good ones and the SchemaBombs.
	HostileSchemaBombs = "schema-bombs"
)

// StderrFloodLines is how many lines HostileStderrFlood writes to stderr
// (besides the two every stdio mode writes first).
const StderrFloodLines = 50_000

// GarbageLine is the line HostileGarbage writes before every message.
const GarbageLine = "console.log: this is not JSON"

// MaybeServeHostileStdio does nothing unless HostileEnv is set; then it
// behaves as the variable says and exits the process. Call it first in
// TestMain, and start the test binary itself with HostileEnv set.
func MaybeServeHostileStdio() {
	mode := os.Getenv(HostileEnv)
	if mode == "" {
		return
	}
	fmt.Fprintf(os.Stderr, "testserver: hostile %s mode\nsecond line\n", mode)
	if mode == HostileSchemaBombs {
		serveLines(os.Stdin, os.Stdout, SchemaBombHandler("hostile-testserver"))
		os.Exit(0)
	}
	s := New(Options{Name: "hostile-testserver"})
	var out io.WriteCloser = os.Stdout
	switch mode {
	case HostileStderrFlood:
		w := bufio.NewWriterSize(os.Stderr, 64<<10)
		line := strings.Repeat("e", 99) + "\n"
		for range StderrFloodLines {
			w.WriteString(line)
		}
		w.Flush()
	case HostileGarbage:
		out = garbageWriter{os.Stdout}
	case HostileSetsid:
		exe, err := os.Executable()
		if err != nil {
			os.Exit(4)
		}
		cmd := exec.Command(exe)
		cmd.Env = append(os.Environ(), StdioEnv+"="+StdioSleep, HostileEnv+"=")
		newSession(cmd)
		if err := cmd.Start(); err != nil {
			os.Exit(4)
		}
		helper := cmd.Process.Pid
		s.AddTool(&sdk.Tool{Name: "pid", InputSchema: ObjectSchema()}, func(context.Context, *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			return text(fmt.Sprintf("%d %d", os.Getpid(), helper)), nil
		})
	default:
		os.Exit(5)
	}
	_ = s.Run(context.Background(), &sdk.IOTransport{Reader: os.Stdin, Writer: out})
	os.Exit(0)
}

// garbageWriter writes GarbageLine before every write.
type garbageWriter struct{ w io.WriteCloser }

func (g garbageWriter) Write(p []byte) (int, error) {
	if _, err := io.WriteString(g.w, GarbageLine+"\n"); err != nil {
		return 0, err
	}
	return g.w.Write(p)
}

func (g garbageWriter) Close() error { return g.w.Close() }
