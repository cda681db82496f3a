package model

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	toolkit "github.com/llmkit/toolkit"
	"github.com/llmkit/toolkit/resource"
)

// newTestDispatcher names the given tools in namespace "builtin" and
// returns a dispatcher over them that runs tools directly.
func newTestDispatcher(tools []*testTool, opts ...DispatchOption) *Dispatcher {
	var items []toolkit.Item
	for _, t := range tools {
		items = append(items, toolkit.Item{Namespace: "builtin", Type: toolkit.ListTypeTools, Name: t.name, Value: t})
	}
	n := NewNamer()
	n.Names(items)
	return NewDispatcher(directCaller{}, n, opts...)
}

var png = append([]byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR"), make([]byte, 32)...)

func TestDispatchOutputs(t *testing.T) {
	d := newTestDispatcher([]*testTool{
		{name: "text", run: func(context.Context, json.RawMessage) (any, error) { return "hello", nil }},
		{name: "json", run: func(context.Context, json.RawMessage) (any, error) { return map[string]int{"n": 1}, nil }},
		{name: "image", run: func(context.Context, json.RawMessage) (any, error) { return png, nil }},
		{name: "audio", run: func(context.Context, json.RawMessage) (any, error) {
			return resource.Blob("clip", "audio/wav", []byte("RIFF....WAVE"))
		}},
		{name: "none", run: func(context.Context, json.RawMessage) (any, error) { return nil, nil }},
		{name: "echo"},
		{name: "fail", run: func(context.Context, json.RawMessage) (any, error) { return nil, errors.New("disk full") }},
	})
	ctx := context.Background()
	cases := []struct {
		call                    ToolCall
		content                 string
		isJSON, binary, isError bool
		errIs                   error
	}{
		{call: ToolCall{ID: "1", Name: "text", Arguments: "{}"}, content: "hello"},
		{call: ToolCall{ID: "2", Name: "json", Arguments: "{}"}, content: `{"n":1}`, isJSON: true},
		{call: ToolCall{ID: "3", Name: "image", Arguments: "{}"}, content: `[image output "output": image/png, 48 bytes; attached separately]`, binary: true},
		{call: ToolCall{ID: "4", Name: "audio", Arguments: "{}"}, content: `[audio output "clip": audio/wav, 12 bytes; attached separately]`, binary: true},
		{call: ToolCall{ID: "5", Name: "none", Arguments: "{}"}, content: "(no output)"},
		{call: ToolCall{ID: "6", Name: "ECHO", Arguments: `{"a": 1}`}, content: `{"a": 1}`},
		{call: ToolCall{ID: "7", Name: "fail", Arguments: "{}"}, content: "disk full", isError: true, errIs: toolkit.ErrToolFailed},
		{call: ToolCall{ID: "8", Name: "txet", Arguments: "{}"}, content: `There is no tool named "txet". Call one of the tools you were given.`, isError: true, errIs: toolkit.ErrNotFound},
		{call: ToolCall{ID: "9", Name: "Text_", Arguments: "{}"}, content: `There is no tool named "Text_". Did you mean "text"?`, isError: true, errIs: toolkit.ErrNotFound},
		{call: ToolCall{ID: "10", Name: "echo", Arguments: `{a: 1}`}, content: "not valid JSON", isError: true, errIs: toolkit.ErrBadParameter},
		{call: ToolCall{ID: "11", Name: "echo", Arguments: `[1]`}, content: "must be a JSON object", isError: true, errIs: toolkit.ErrBadParameter},
		{call: ToolCall{ID: "12", Name: "echo", Arguments: ``}, content: "not valid JSON", isError: true, errIs: toolkit.ErrBadParameter},
	}
	for _, c := range cases {
		r := d.Call(ctx, c.call)
		if r.ID != c.call.ID || r.Name != c.call.Name {
			t.Errorf("%s: echo %q %q", c.call.Name, r.ID, r.Name)
		}
		if !strings.Contains(r.Content, c.content) || r.JSON != c.isJSON || r.Binary != c.binary || r.IsError != c.isError {
			t.Errorf("%s: got %+v", c.call.Name, r)
		}
		if c.errIs != nil && !errors.Is(r.Err, c.errIs) {
			t.Errorf("%s: Err = %v, want %v", c.call.Name, r.Err, c.errIs)
		}
		if c.binary && r.Resource == nil {
			t.Errorf("%s: binary output without its resource", c.call.Name)
		}
	}
}

func TestDispatchRepair(t *testing.T) {
	d := newTestDispatcher([]*testTool{{name: "echo"}}, WithRepair(true))
	ctx := context.Background()
	r := d.Call(ctx, ToolCall{Name: "echo", Arguments: "```json\n{'city': 'Paris', n: 2,}\n```"})
	if r.IsError || r.Content != `{"city":"Paris","n":2}` || !r.Repaired {
		t.Fatalf("repaired call: %+v", r)
	}
	want := []string{RepairFence, RepairSingleQuote, RepairBareKey, RepairTrailing}
	if fmt.Sprint(r.Repairs) != fmt.Sprint(want) {
		t.Errorf("repairs %q, want %q", r.Repairs, want)
	}
	r = d.Call(ctx, ToolCall{Name: "echo", Arguments: ""})
	if r.IsError || r.Content != "{}" || !r.Repaired {
		t.Errorf("empty arguments: %+v", r)
	}
	r = d.Call(ctx, ToolCall{Name: "echo", Arguments: `{"a": 1}`})
	if r.IsError || r.Repaired || r.Content != `{"a": 1}` {
		t.Errorf("valid arguments: %+v", r)
	}
	r = d.Call(ctx, ToolCall{Name: "echo", Arguments: "call it with city=Paris"})
	if !r.IsError || !errors.Is(r.Err, toolkit.ErrBadParameter) || !strings.Contains(r.Content, "could not be repaired") {
		t.Errorf("unrepairable: %+v", r)
	}
}

func TestDispatchConcurrencyLimit(t *testing.T) {
	var inflight, peak atomic.Int32
	started := make(chan struct{})
	release := make(chan struct{})
	slow := &testTool{name: "slow", run: func(ctx context.Context, in json.RawMessage) (any, error) {
		n := inflight.Add(1)
		for {
			p := peak.Load()
			if n <= p || peak.CompareAndSwap(p, n) {
				break
			}
		}
		started <- struct{}{}
		<-release
		inflight.Add(-1)
		return string(in), nil
	}}
	d := newTestDispatcher([]*testTool{slow}, WithConcurrency(2))
	var calls []ToolCall
	for i := range 6 {
		calls = append(calls, ToolCall{ID: fmt.Sprint(i), Name: "slow", Arguments: fmt.Sprintf(`{"i":%d}`, i)})
	}
	done := make(chan []Result)
	go func() { done <- d.Dispatch(context.Background(), calls...) }()
	for range calls {
		<-started
		release <- struct{}{}
	}
	results := <-done
	if p := peak.Load(); p > 2 || p < 1 {
		t.Errorf("peak concurrency %d, limit 2", p)
	}
	for i, r := range results {
		if r.ID != fmt.Sprint(i) || r.Content != fmt.Sprintf(`{"i":%d}`, i) || r.IsError {
			t.Errorf("result %d out of order or failed: %+v", i, r)
		}
	}
}

func TestDispatchPanicAndHang(t *testing.T) {
	hang := make(chan struct{})
	returned := make(chan struct{})
	tools := []*testTool{
		{name: "ignores_ctx", run: func(ctx context.Context, _ json.RawMessage) (any, error) {
			defer close(returned)
			<-hang
			return "too late", nil
		}},
		{name: "honours_ctx", run: func(ctx context.Context, _ json.RawMessage) (any, error) {
			<-ctx.Done()
			return nil, ctx.Err()
		}},
		{name: "panics", run: func(context.Context, json.RawMessage) (any, error) { panic("boom") }},
		{name: "ok", run: func(context.Context, json.RawMessage) (any, error) { return "fine", nil }},
	}
	d := newTestDispatcher(tools, WithTimeout(20*time.Millisecond), WithConcurrency(4))
	results := d.Dispatch(context.Background(),
		ToolCall{ID: "a", Name: "ignores_ctx", Arguments: "{}"},
		ToolCall{ID: "b", Name: "panics", Arguments: "{}"},
		ToolCall{ID: "c", Name: "honours_ctx", Arguments: "{}"},
		ToolCall{ID: "d", Name: "ok", Arguments: "{}"},
	)
	// The dispatcher returned although ignores_ctx is still running.
	for i, want := range []struct {
		content string
		errIs   error
	}{
		{"timed out after 20ms", toolkit.ErrUnavailable},
		{"panicked: boom", toolkit.ErrToolFailed},
		{"timed out after 20ms", context.DeadlineExceeded},
		{"fine", nil},
	} {
		r := results[i]
		if !strings.Contains(r.Content, want.content) || r.IsError != (want.errIs != nil) {
			t.Errorf("result %d: %+v", i, r)
		}
		if want.errIs != nil && !errors.Is(r.Err, want.errIs) {
			t.Errorf("result %d: Err %v, want %v", i, r.Err, want.errIs)
		}
	}
	close(hang)
	<-returned
}

func TestDispatchCancelled(t *testing.T) {
	started := make(chan struct{})
	block := &testTool{name: "block", run: func(ctx context.Context, _ json.RawMessage) (any, error) {
		close(started)
		<-ctx.Done()
		return nil, ctx.Err()
	}}
	d := newTestDispatcher([]*testTool{block, {name: "echo"}}, WithConcurrency(1))
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan []Result)
	go func() {
		done <- d.Dispatch(ctx, ToolCall{ID: "1", Name: "block", Arguments: "{}"}, ToolCall{ID: "2", Name: "echo", Arguments: "{}"})
	}()
	<-started
	cancel()
	results := <-done
	for _, r := range results {
		if !r.IsError || !strings.Contains(r.Content, "cancelled") || !errors.Is(r.Err, context.Canceled) {
			t.Errorf("%s: %+v", r.ID, r)
		}
	}
}
