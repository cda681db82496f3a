package codemode

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"os"
	"strings"
	"testing"
	"time"
)

// hostileArg makes a test binary started as a worker a hostile one: its
// value names what it does instead of running its script.
const hostileArg = "-codemode.hostile="

// serveHostileWorker is a test-only worker entry: in a worker started
// with hostileArg it answers Ready, takes its script, and then floods its
// parent ("flood": tool calls without waiting for their answers) or
// writes one endless message ("endless"), until its parent stops it.
func serveHostileWorker() {
	if os.Getenv(workerEnv) == "" {
		return
	}
	var mode string
	for _, a := range os.Args[1:] {
		if v, ok := strings.CutPrefix(a, hostileArg); ok {
			mode = v
		}
	}
	if mode == "" {
		return
	}
	in, out := os.NewFile(3, "from-parent"), os.NewFile(4, "to-parent")
	enc := json.NewEncoder(out)
	if enc.Encode(message{Ready: true}) != nil {
		os.Exit(2)
	}
	var m message
	if json.NewDecoder(in).Decode(&m) != nil {
		os.Exit(2)
	}
	go io.Copy(io.Discard, in) // the parent's answers, unread
	switch mode {
	case "flood":
		for enc.Encode(message{Call: &callMsg{Name: "list_files", Args: json.RawMessage(`{"dir":"w"}`)}}) == nil {
		}
	case "endless":
		if _, err := out.WriteString(`{"done":{"text":"`); err == nil {
			chunk := []byte(strings.Repeat("a", 64<<10))
			for {
				if _, err := out.Write(chunk); err != nil {
					break
				}
			}
		}
	}
	os.Exit(2)
}

// TestWorkerFloodStopped: a worker that sends more than its script's tool
// calls, or a message longer than any its script can make, is stopped,
// and the caller is told why; the parent keeps at most one message.
func TestWorkerFloodStopped(t *testing.T) {
	for _, tc := range []struct{ mode, want string }{
		{"flood", "sent more than 5 tool calls"},
		{"endless", "sent a message of more than"},
	} {
		t.Run(tc.mode, func(t *testing.T) {
			// More calls may run at once than the script may make: the
			// count of calls is the bound the flood breaks.
			f := newFixture(t, true, Limits{MaxToolCalls: 5, MaxParallelCalls: 10, Timeout: 10 * time.Second})
			f.m.worker.Args = []string{"-test.run=^$", hostileArg + tc.mode}
			_, err := f.m.Run(context.Background(), `return 1`)
			if !errors.Is(err, ErrBound) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("got %v, want ErrBound saying %q", err, tc.want)
			}
		})
	}
}
