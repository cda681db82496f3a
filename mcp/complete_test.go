package mcp

import (
	"context"
	"errors"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/llmkit/toolkit"
	"github.com/llmkit/toolkit/internal/testing/testserver"
	"github.com/llmkit/toolkit/mcp/bridge"
)

// completionServer starts a connector to a test server with the template
// "test://items/{kind}/{id}"; complete, when not nil, is the server's
// completion handler. It returns the connector's prompt "greet" and that
// template as completers.
func completionServer(t *testing.T, complete func(context.Context, *sdk.CompleteRequest) (*sdk.CompleteResult, error)) (prompt, tmpl bridge.Completer) {
	t.Helper()
	s := newServer(t, testserver.Options{Server: &sdk.ServerOptions{CompletionHandler: complete}})
	s.AddResourceTemplate(&sdk.ResourceTemplate{URITemplate: "test://items/{kind}/{id}", Name: "items"},
		func(context.Context, *sdk.ReadResourceRequest) (*sdk.ReadResourceResult, error) {
			return nil, errors.New("unused")
		})
	m := testserver.NewMemory(s.Server)
	t.Cleanup(m.Close)
	r := start(t, "memory://test", false, OptDialer(m.Dial))
	for _, p := range mustList(r.ListPrompts(t.Context())) {
		if p.Name() == "greet" {
			prompt, _ = p.(bridge.Completer)
		}
	}
	tmpls := mustList(r.ListResourceTemplates(t.Context()))
	if len(tmpls) != 1 {
		t.Fatalf("%d templates, want 1", len(tmpls))
	}
	tmpl, _ = tmpls[0].(bridge.Completer)
	if prompt == nil || tmpl == nil {
		t.Fatalf("the remote prompt (%v) and template (%v) are not completers", prompt, tmpl)
	}
	return prompt, tmpl
}

// TestRemoteCompletion checks that remote prompts and templates complete
// their arguments by asking their server with completion/complete, with
// the reference, argument and context the caller gave, and return the
// server's answer as it is.
func TestRemoteCompletion(t *testing.T) {
	leakCheck(t)
	var mu sync.Mutex
	var got []*sdk.CompleteParams
	complete := func(_ context.Context, req *sdk.CompleteRequest) (*sdk.CompleteResult, error) {
		mu.Lock()
		got = append(got, req.Params)
		mu.Unlock()
		if req.Params.Argument.Value == "bad" {
			return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "no such value"}
		}
		return &sdk.CompleteResult{Completion: sdk.CompletionResultDetails{
			Values:  []string{req.Params.Argument.Name + ":" + req.Params.Argument.Value + "1", "x"},
			Total:   7,
			HasMore: true,
		}}, nil
	}
	prompt, tmpl := completionServer(t, complete)

	res, err := prompt.Complete(t.Context(), "style", "fo", map[string]string{"name": "Ann"})
	mustNotErr(t, err)
	if !slices.Equal(res.Values, []string{"style:fo1", "x"}) || res.Total != 7 || !res.HasMore {
		t.Errorf("prompt completion %+v", res)
	}
	res, err = tmpl.Complete(t.Context(), "id", "4", nil)
	mustNotErr(t, err)
	if !slices.Equal(res.Values, []string{"id:41", "x"}) {
		t.Errorf("template completion %+v", res)
	}
	mu.Lock()
	if len(got) != 2 {
		t.Fatalf("%d requests, want 2", len(got))
	}
	p, tp := got[0], got[1]
	mu.Unlock()
	if p.Ref.Type != "ref/prompt" || p.Ref.Name != "greet" || p.Argument.Name != "style" || p.Context == nil || p.Context.Arguments["name"] != "Ann" {
		t.Errorf("prompt request %+v", p)
	}
	if tp.Ref.Type != "ref/resource" || tp.Ref.URI != "test://items/{kind}/{id}" || tp.Argument.Name != "id" || tp.Argument.Value != "4" || tp.Context != nil {
		t.Errorf("template request %+v", tp)
	}

	// The server's error answer is the caller's error, with its code.
	_, err = prompt.Complete(t.Context(), "style", "bad", nil)
	var we *jsonrpc.Error
	if !errors.Is(err, toolkit.ErrToolFailed) || !errors.As(err, &we) || we.Code != jsonrpc.CodeInvalidParams {
		t.Errorf("error answer: %v", err)
	}
}

// TestRemoteCompletionWithoutCapability checks that a server that does not
// offer completions completes to nothing, without a request (the go-sdk
// server would answer one with "method not found").
func TestRemoteCompletionWithoutCapability(t *testing.T) {
	leakCheck(t)
	prompt, tmpl := completionServer(t, nil)
	for _, c := range []bridge.Completer{prompt, tmpl} {
		res, err := c.Complete(t.Context(), "style", "", nil)
		if err != nil || res == nil || res.Values == nil || len(res.Values) != 0 || res.HasMore || res.Total != 0 {
			t.Errorf("completion %+v, %v; want an empty result", res, err)
		}
	}
}

// TestRemoteCompletionRepeated checks that a completion whose session is
// lost while the server handles it is sent again on the next session: the
// request is safe to repeat.
func TestRemoteCompletionRepeated(t *testing.T) {
	leakCheck(t)
	started := make(chan struct{}, 1)
	var calls atomic.Int32
	complete := func(ctx context.Context, req *sdk.CompleteRequest) (*sdk.CompleteResult, error) {
		if calls.Add(1) == 1 {
			started <- struct{}{}
			<-ctx.Done()
			return nil, ctx.Err()
		}
		return &sdk.CompleteResult{Completion: sdk.CompletionResultDetails{Values: []string{"again"}}}, nil
	}
	s := newServer(t, testserver.Options{Server: &sdk.ServerOptions{CompletionHandler: complete}})
	m := testserver.NewMemory(s.Server)
	t.Cleanup(m.Close)
	r := start(t, "memory://test", false, OptDialer(m.Dial), fastBackoff, OptReconnect(Reconnect{Wait: time.Hour}))
	var greet bridge.Completer
	for _, p := range mustList(r.ListPrompts(t.Context())) {
		if p.Name() == "greet" {
			greet = p.(bridge.Completer)
		}
	}
	type answer struct {
		res *sdk.CompletionResultDetails
		err error
	}
	done := make(chan answer, 1)
	go func() {
		res, err := greet.Complete(context.Background(), "style", "a", nil)
		done <- answer{res, err}
	}()
	select {
	case <-started:
	case <-time.After(waitLimit):
		t.Fatal("the completion never reached the server")
	}
	m.Kill()
	r.states.wait(t, toolkit.StatusReconnecting, 1)
	m.Start()
	select {
	case a := <-done:
		if a.err != nil || a.res == nil || !slices.Equal(a.res.Values, []string{"again"}) {
			t.Errorf("completion across a lost session: %+v, %v", a.res, a.err)
		}
	case <-time.After(waitLimit):
		t.Fatal("the completion hangs after its session was lost")
	}
	if n := calls.Load(); n != 2 {
		t.Errorf("the server got %d completions, want 2", n)
	}
	mustNotErr(t, r.stop(t))
}
