package toolkit

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
)

// TestCallToolFailedOnlyWhenItRan checks that ErrToolFailed is added to a
// tool's error only when the tool ran and failed, not when its error says
// it did not run (as a remote tool's does when its server is unreachable).
func TestCallToolFailedOnlyWhenItRan(t *testing.T) {
	errOwn := errors.New("disk full")
	tests := []struct {
		name      string
		err       error
		is        error // the Run error's own sentinel, kept
		wantFaild bool
	}{
		{"plain error", errOwn, errOwn, true},
		{"unavailable", fmt.Errorf("%w: tools/call of server s: connection refused", ErrUnavailable), ErrUnavailable, false},
		{"closed", fmt.Errorf("%w: the connector stopped", ErrClosed), ErrClosed, false},
		{"not found", fmt.Errorf("%w: no such tool on the server", ErrNotFound), ErrNotFound, false},
		{"bad input", fmt.Errorf("%w: input: want a number", ErrBadParameter), ErrBadParameter, false},
		{"canceled", fmt.Errorf("tools/call: %w", context.Canceled), context.Canceled, false},
		{"deadline", fmt.Errorf("tools/call: %w", context.DeadlineExceeded), context.DeadlineExceeded, false},
		{"failed and unavailable", fmt.Errorf("%w: the server said: %w", ErrToolFailed, ErrUnavailable), ErrUnavailable, true},
		{"failed", fmt.Errorf("%w: the server said no", ErrToolFailed), ErrToolFailed, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tool := &testTool{name: "remote_op", run: func(context.Context, json.RawMessage) (any, error) { return nil, tt.err }}
			tk := mustNew(t, WithTool(tool))
			_, err := tk.Call(t.Context(), "remote_op")
			if !errors.Is(err, tt.is) {
				t.Fatalf("err = %v, want it to wrap %v", err, tt.is)
			}
			if got := errors.Is(err, ErrToolFailed); got != tt.wantFaild {
				t.Fatalf("errors.Is(%v, ErrToolFailed) = %v, want %v", err, got, tt.wantFaild)
			}
			if !strings.Contains(err.Error(), `"remote_op"`) || strings.Count(err.Error(), "remote_op") != 1 {
				t.Fatalf("err = %v, want it to name the tool once", err)
			}
		})
	}
}
