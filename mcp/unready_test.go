package mcp

import (
	"context"
	"errors"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/llmkit/toolkit"
)

// A stdio server that cannot start does not stay "connecting": the first
// failed attempt makes it "reconnecting" with the reason in LastError
// (it is retried with backoff), a WaitConnectors that runs out of time
// says why it is not ready, and so does a call of one of its tools. A
// program that is not found fails at once.
func TestStdioServerThatCannotStartSaysWhy(t *testing.T) {
	leakCheck(t)
	if _, err := exec.LookPath("false"); err != nil {
		t.Skip("no false program")
	}
	tk, err := toolkit.New(toolkit.WithDelegate(mustDelegate(t, "app", "1.0", OptLogger(quietLogger()))), toolkit.WithLogger(quietLogger()))
	mustNotErr(t, err)
	states := make(chan toolkit.ConnectorState, 64)
	defer tk.Subscribe(func(ev toolkit.ConnectorEvent) {
		if ev.Kind == toolkit.ConnectorEventStateChange && ev.Namespace == "dead" {
			select {
			case states <- ev.State:
			default:
			}
		}
	})()
	mustNotErr(t, tk.AddConnectorNS("dead", "stdio:false"))
	mustNotErr(t, tk.AddConnectorNS("missing", "stdio:no-such-program-for-this-test"))
	defer runToolkit(t, tk)()

	const exited = "exit status 1"
	for reconnecting := false; !reconnecting; {
		select {
		case st := <-states:
			switch st.Status {
			case toolkit.StatusConnecting:
			case toolkit.StatusReconnecting:
				if !strings.Contains(st.LastError, exited) {
					t.Errorf("reconnecting, last error %q; want it to say %q", st.LastError, exited)
				}
				reconnecting = true
			default:
				t.Fatalf("state %v, want connecting then reconnecting", st.Status)
			}
		case <-time.After(waitLimit):
			t.Fatalf("still %v after %v", tk.Connectors()[0].Status, waitLimit)
		}
	}

	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	_, err = tk.WaitConnectors(ctx, "dead")
	if !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), `connector "dead" is not ready (reconnecting; last error: `) || !strings.Contains(err.Error(), exited) {
		t.Errorf("WaitConnectors: %v", err)
	}
	_, err = tk.Call(context.Background(), "dead.echo", toolkit.Input(map[string]any{"text": "hi"}))
	if !errors.Is(err, toolkit.ErrUnavailable) || !strings.Contains(err.Error(), `connector "dead" is not ready (reconnecting`) ||
		!strings.Contains(err.Error(), exited) || !strings.Contains(err.Error(), "WaitConnectors") {
		t.Errorf("Call: %v", err)
	}

	// Not found: failed at once, and WaitConnectors says so without
	// waiting.
	got, err := tk.WaitConnectors(context.Background(), "missing")
	if err != nil || got[0].Status != toolkit.StatusFailed || !strings.Contains(got[0].LastError, "executable file not found") {
		t.Errorf("WaitConnectors(missing) = %+v, %v", got, err)
	}
	if _, err := tk.Call(context.Background(), "missing.echo"); !errors.Is(err, toolkit.ErrUnavailable) || !strings.Contains(err.Error(), "executable file not found") {
		t.Errorf("Call(missing.echo): %v", err)
	}
}
