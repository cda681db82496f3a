package codemode

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"math"
	"os"
	"strings"
	"testing"
	"time"
)

// relayCalls is how many calls the worker "calls" of serveHostile makes.
const relayCalls = 10000

// hostileProtocolArg, among a worker's arguments, makes the test binary a worker
// that breaks the protocol in the way named after it (see serveHostile).
const hostileProtocolArg = "-codemode.hostile-protocol="

// serveHostile makes this process a hostile worker when it was started
// as one: ready, it reads its script, then does what its argument says,
// and exits.
func serveHostile() {
	if os.Getenv(workerEnv) == "" {
		return
	}
	for _, a := range os.Args[1:] {
		if how, ok := strings.CutPrefix(a, hostileProtocolArg); ok {
			hostile(how, os.NewFile(3, "from-parent"), os.NewFile(4, "to-parent"))
			os.Exit(0)
		}
	}
}

func hostile(how string, in, out *os.File) {
	msgs, enc := newMessageReader(in), json.NewEncoder(out)
	if enc.Encode(message{Ready: true}) != nil {
		return
	}
	msgs.max = math.MaxInt
	var m message
	if msgs.read(&m) != nil {
		return
	}
	call := func(id int, name, args string) bool {
		return enc.Encode(message{ID: id, Call: &callMsg{Name: name, Args: json.RawMessage(args)}}) == nil
	}
	switch how {
	case "giant": // a script's end larger than any a script makes
		enc.Encode(message{Done: &Output{JSON: json.RawMessage("1"), Console: strings.Repeat("x", 32<<20)}})
	case "endless": // a line without end
		chunk := []byte(strings.Repeat("x", 64<<10))
		for {
			if _, err := out.Write(chunk); err != nil {
				return
			}
		}
	case "blank": // empty lines without end
		chunk := []byte(strings.Repeat("\n", 64<<10))
		for {
			if _, err := out.Write(chunk); err != nil {
				return
			}
		}
	case "calls": // more calls than a script may make, one after another
		// Each call and its Wait in one write, as a worker sends them.
		var turn bytes.Buffer
		te := json.NewEncoder(&turn)
		for id := 1; id <= relayCalls; id++ {
			turn.Reset()
			_ = te.Encode(message{ID: id, Call: &callMsg{Name: "read_file", Args: json.RawMessage(`{"name":"a"}`)}})
			_ = te.Encode(message{Wait: 1})
			if _, err := out.Write(turn.Bytes()); err != nil {
				return
			}
			if msgs.read(&m) != nil {
				return
			}
		}
		enc.Encode(message{Done: &Output{JSON: json.RawMessage("1")}})
	case "flood": // calls that do not return, without waiting for them
		for id := 1; id <= 10000; id++ {
			if !call(id, "hang", `{}`) {
				return
			}
		}
		enc.Encode(message{Done: &Output{JSON: json.RawMessage("1")}})
	case "ready": // messages the protocol does not have
		for enc.Encode(message{Ready: true}) == nil {
		}
	}
}

// TestHostileWorkerIsKilled: a worker that sends more than its parent
// takes (a message larger than Limits.MaxMessage, a line without end,
// lines without a message, more calls than Limits.MaxToolCalls, more at
// once than Limits.MaxParallelCalls, a message the protocol does not
// have) is killed and reaped, and its script fails with ErrBound saying
// what the worker did.
func TestHostileWorkerIsKilled(t *testing.T) {
	for _, c := range []struct{ how, want string }{
		{"giant", "sent a message of more than"},
		{"endless", "sent a message of more than"},
		{"blank", "unexpected end of JSON input"},
		{"calls", "sent more than 200 tool calls"},
		{"flood", "sent more than 4 tool calls at once"},
		{"ready", "neither a call nor"},
	} {
		t.Run(c.how, func(t *testing.T) {
			f := newFixture(t, false, Limits{})
			m, err := New(f.tk, Config{
				Limits: Limits{Timeout: 10 * time.Second},
				Worker: &Worker{Path: os.Args[0], Args: []string{"-test.run=^$", hostileProtocolArg + c.how}},
			})
			if err != nil {
				t.Fatal(err)
			}
			defer m.Close()
			_, err = m.Run(context.Background(), `return 1`)
			if !errors.Is(err, ErrBound) || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("error %v, want ErrBound saying %q", err, c.want)
			}
			if kids := children(os.Getpid()); len(kids) > 0 {
				t.Fatalf("processes left behind: %v", kids)
			}
		})
	}
}
