package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"strings"
	"sync"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/llmkit/toolkit"
	"github.com/llmkit/toolkit/internal/testing/testserver"
)

// TestServerRequestsRefused checks that without a caller able to answer,
// the upstream's request fails cleanly, with a JSON-RPC error code the
// server can act on (method not found: this caller cannot sample), and the
// call reports it.
func TestServerRequestsRefused(t *testing.T) {
	leakCheck(t)
	s := newServer(t, initializeOnly())
	s.AddTool(mustTool("ask"), func(ctx context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
		_, err := req.Session.CreateMessage(ctx, &sdk.CreateMessageParams{MaxTokens: 10,
			Messages: []*sdk.SamplingMessage{{Role: "user", Content: &sdk.TextContent{Text: "hi"}}}})
		if err == nil {
			return nil, errors.New("sampling answered by nobody")
		}
		var werr *jsonrpc.Error
		if !errors.As(err, &werr) {
			return nil, fmt.Errorf("refusal without a JSON-RPC error: %v", err)
		}
		return &sdk.CallToolResult{IsError: true, Content: []sdk.Content{&sdk.TextContent{Text: fmt.Sprintf("refused with code %d: %v", werr.Code, err)}}}, nil
	})
	m := testserver.NewMemory(s.Server)
	t.Cleanup(m.Close)
	r := start(t, "memory://x", false, OptDialer(m.Dial), OptServerRequests(ServerRequests{Forward: true}))
	// The caller is the toolkit's no-op session: it cannot sample.
	_, err := call(t, context.Background(), r.Connector, "ask", `{}`)
	if !errors.Is(err, toolkit.ErrToolFailed) || !strings.Contains(err.Error(), fmt.Sprintf("refused with code %d", jsonrpc.CodeMethodNotFound)) {
		t.Errorf("call: %v", err)
	}
}

// samplingSession is a caller's session that answers sampling with its own
// name and records the texts it was asked.
type samplingSession struct {
	*testSession
	mu    sync.Mutex
	asked []string
}

func (s *samplingSession) CreateMessage(_ context.Context, p *sdk.CreateMessageParams) (*sdk.CreateMessageResult, error) {
	s.mu.Lock()
	s.asked = append(s.asked, p.Messages[0].Content.(*sdk.TextContent).Text)
	s.mu.Unlock()
	if _, ok := p.Meta[callMetaKey]; ok {
		return nil, errors.New("the call tag reached the caller")
	}
	return &sdk.CreateMessageResult{Model: "m", Role: "assistant", Content: &sdk.TextContent{Text: "from " + s.id}}, nil
}

func (s *samplingSession) Elicit(context.Context, *sdk.ElicitParams) (*sdk.ElicitResult, error) {
	return nil, fmt.Errorf("%w: no user here", toolkit.ErrNotImplemented)
}

func (s *samplingSession) questions() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.asked...)
}

// barrier lets calls wait until n of them arrived.
type barrier struct {
	mu  sync.Mutex
	n   int
	all chan struct{}
}

func newBarrier(n int) *barrier { return &barrier{n: n, all: make(chan struct{})} }

func (b *barrier) arrive(ctx context.Context) error {
	b.mu.Lock()
	if b.n--; b.n == 0 {
		close(b.all)
	}
	b.mu.Unlock()
	select {
	case <-b.all:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// addSampler adds a tool "sample" that asks the client to sample, sending
// its "who" argument as the question, and returns the answer's text (or
// the code and message of the JSON-RPC error refusing it, as an error
// result). When meet is not nil, each call waits for meet before it asks
// and for after once it got its answer: every call is then in flight
// while any of them asks.
func addSampler(s *testserver.Server, meet, after *barrier) {
	s.AddTool(&sdk.Tool{Name: "sample", InputSchema: testserver.ObjectSchema("who")}, func(ctx context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
		var in struct{ Who string }
		if err := json.Unmarshal(req.Params.Arguments, &in); err != nil {
			return nil, err
		}
		if meet != nil {
			if err := meet.arrive(ctx); err != nil {
				return nil, err
			}
		}
		res, err := req.Session.CreateMessage(ctx, &sdk.CreateMessageParams{MaxTokens: 5,
			Messages: []*sdk.SamplingMessage{{Role: "user", Content: &sdk.TextContent{Text: in.Who}}}})
		if after != nil {
			if err := after.arrive(ctx); err != nil {
				return nil, err
			}
		}
		if err != nil {
			var werr *jsonrpc.Error
			if errors.As(err, &werr) {
				return &sdk.CallToolResult{IsError: true, Content: []sdk.Content{&sdk.TextContent{Text: fmt.Sprintf("code %d: %s", werr.Code, werr.Message)}}}, nil
			}
			return nil, err
		}
		return &sdk.CallToolResult{Content: []sdk.Content{res.Content}}, nil
	})
}

// TestSamplingConcurrentCallsHTTP checks that over streamable HTTP a
// server's request reaches the caller whose call it belongs to (it came
// on that call's response stream), with several calls in flight.
func TestSamplingConcurrentCallsHTTP(t *testing.T) {
	leakCheck(t)
	s := newServer(t, initializeOnly())
	const n = 3
	addSampler(s, newBarrier(n), newBarrier(n))
	h := testserver.ServeHTTP(t, s.Server, testserver.Stateful)
	r := start(t, h.URL, false, OptServerRequests(ServerRequests{Forward: true}))
	sessions := make([]*samplingSession, n)
	errc := make(chan error, n)
	for i := range sessions {
		sess := &samplingSession{testSession: newTestSession(fmt.Sprintf("caller%d", i))}
		sessions[i] = sess
		go func() {
			ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
			defer cancel()
			ctx = toolkit.ContextWithSession(ctx, sess)
			out, err := call(t, ctx, r.Connector, "sample", fmt.Sprintf(`{"who":%q}`, sess.id))
			if err == nil && read(t, out) != "from "+sess.id {
				err = fmt.Errorf("%s got %q", sess.id, read(t, out))
			}
			errc <- err
		}()
	}
	for range n {
		if err := <-errc; err != nil {
			t.Error(err)
		}
	}
	for _, sess := range sessions {
		if q := sess.questions(); len(q) != 1 || q[0] != sess.id {
			t.Errorf("%s was asked %q", sess.id, q)
		}
	}
}

// TestSamplingConcurrentCallsShared checks the rule of transports with one
// stream for everything (stdio, in memory): a request during several
// calls cannot be told whose it is and is refused with an internal error,
// unless the connector answers itself.
func TestSamplingConcurrentCallsShared(t *testing.T) {
	leakCheck(t)
	for _, own := range []bool{false, true} {
		t.Run(fmt.Sprint("own handler ", own), func(t *testing.T) {
			s := newServer(t, initializeOnly())
			addSampler(s, newBarrier(2), newBarrier(2))
			m := testserver.NewMemory(s.Server)
			t.Cleanup(m.Close)
			opts := []Option{OptDialer(m.Dial), OptServerRequests(ServerRequests{Forward: true})}
			if own {
				opts = append(opts, OptServerRequests(ServerRequests{Sampling: func(_ context.Context, p *sdk.CreateMessageParams) (*sdk.CreateMessageResult, error) {
					return &sdk.CreateMessageResult{Model: "m", Role: "assistant", Content: &sdk.TextContent{Text: "app"}}, nil
				}}))
			}
			r := start(t, "memory://x", false, opts...)
			errc := make(chan error, 2)
			for i := range 2 {
				sess := &samplingSession{testSession: newTestSession(fmt.Sprint("c", i))}
				go func() {
					ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
					defer cancel()
					out, err := call(t, toolkit.ContextWithSession(ctx, sess), r.Connector, "sample", `{"who":"x"}`)
					switch {
					case own && (err != nil || read(t, out) != "app"):
						err = fmt.Errorf("want the connector answer: %v %v", err, out)
					case !own && (err == nil || !strings.Contains(err.Error(), fmt.Sprintf("code %d", jsonrpc.CodeInternalError)) || !strings.Contains(err.Error(), "cannot tell whose")):
						err = fmt.Errorf("want a refusal: %v %v", err, out)
					default:
						err = nil
					}
					errc <- err
				}()
			}
			for range 2 {
				if err := <-errc; err != nil {
					t.Error(err)
				}
			}
		})
	}
}

// TestSamplingHandler checks that ServerRequests.Sampling answers for callers
// that cannot, and that a caller that can answers first.
func TestSamplingHandler(t *testing.T) {
	leakCheck(t)
	s := newServer(t, initializeOnly())
	addSampler(s, nil, nil)
	m := testserver.NewMemory(s.Server)
	t.Cleanup(m.Close)
	var asked []string
	r := start(t, "memory://x", false, OptDialer(m.Dial), OptServerRequests(ServerRequests{Sampling: func(_ context.Context, p *sdk.CreateMessageParams) (*sdk.CreateMessageResult, error) {
		q := p.Messages[0].Content.(*sdk.TextContent).Text
		if q == "fail" {
			return nil, errors.New("the model is down")
		}
		asked = append(asked, q)
		if _, ok := p.Meta[callMetaKey]; ok {
			return nil, errors.New("the call tag reached the handler")
		}
		return &sdk.CreateMessageResult{Model: "m", Role: "assistant", Content: &sdk.TextContent{Text: "from the app"}}, nil
	}}))
	out, err := call(t, context.Background(), r.Connector, "sample", `{"who":"nobody"}`)
	if err != nil || read(t, out) != "from the app" {
		t.Fatalf("no-op caller: %v", err)
	}
	sess := &samplingSession{testSession: newTestSession("caller")}
	out, err = call(t, toolkit.ContextWithSession(context.Background(), sess), r.Connector, "sample", `{"who":"caller"}`)
	if err != nil || read(t, out) != "from caller" {
		t.Fatalf("answering caller: %v", err)
	}
	if len(asked) != 1 || asked[0] != "nobody" {
		t.Errorf("the connector's handler was asked %q", asked)
	}
	// A handler's error reaches the server as it is.
	_, err = call(t, context.Background(), r.Connector, "sample", `{"who":"fail"}`)
	if err == nil || !strings.Contains(err.Error(), "the model is down") {
		t.Errorf("failing handler: %v", err)
	}
}

// TestServerRequestHint checks that an unanswered request is refused with
// method not found and that the application is told, once, how to answer
// such requests; an elicitation handler answers elicitation.
func TestServerRequestHint(t *testing.T) {
	leakCheck(t)
	s := newServer(t, initializeOnly())
	addSampler(s, nil, nil)
	s.AddTool(mustTool("elicit"), func(ctx context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
		res, err := req.Session.Elicit(ctx, &sdk.ElicitParams{Message: "name?", RequestedSchema: &jsonschema.Schema{
			Type: "object", Properties: map[string]*jsonschema.Schema{"name": {Type: "string"}}}})
		if err != nil {
			return nil, err
		}
		return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: fmt.Sprint(res.Action, " ", res.Content["name"])}}}, nil
	})
	m := testserver.NewMemory(s.Server)
	t.Cleanup(m.Close)
	logs := newLogCapture()
	r := start(t, "memory://x", false, OptDialer(m.Dial), OptLogger(slog.New(logs)),
		OptServerRequests(ServerRequests{Elicitation: func(_ context.Context, p *sdk.ElicitParams) (*sdk.ElicitResult, error) {
			return &sdk.ElicitResult{Action: "accept", Content: map[string]any{"name": "Ada"}}, nil
		}}))
	for range 3 {
		_, err := call(t, context.Background(), r.Connector, "sample", `{"who":"x"}`)
		if err == nil || !strings.Contains(err.Error(), fmt.Sprintf("code %d", jsonrpc.CodeMethodNotFound)) {
			t.Fatalf("want a method-not-found refusal: %v", err)
		}
	}
	hints := 0
	for _, rec := range logs.all() {
		if strings.HasPrefix(rec, "INFO refused a sampling request") {
			hints++
			if !strings.Contains(rec, "ServerRequests.Sampling") {
				t.Errorf("the hint does not say how: %s", rec)
			}
		}
	}
	if hints != 1 {
		t.Errorf("%d hints, want 1: %q", hints, logs.all())
	}
	out, err := call(t, context.Background(), r.Connector, "elicit", `{}`)
	if err != nil || read(t, out) != "accept Ada" {
		t.Errorf("elicitation: %v", err)
	}
}

// TestUntag checks that the call tag is always taken out of a request's
// _meta, and names a call only when the connector wrote it: a server that
// writes the key itself names no call.
func TestUntag(t *testing.T) {
	c, err := New("http://127.0.0.1:1/mcp", "c", "1")
	mustNotErr(t, err)
	_, _, done := c.calls.begin(context.Background(), &live{})
	defer done()
	in := c.calls.get("1")
	for _, tc := range []struct {
		meta sdk.Meta
		want *inflight
		left int
	}{
		{sdk.Meta{callMetaKey: c.tag(in), "k": 1}, in, 1},
		{sdk.Meta{callMetaKey: c.tag(in)}, in, 0},
		{sdk.Meta{callMetaKey: "0000000000000000.1", "k": 1}, nil, 1}, // forged
		{sdk.Meta{callMetaKey: c.srv.reqs.nonce + ".99"}, nil, 0},     // no such call
		{sdk.Meta{callMetaKey: 1}, nil, 0},
		{sdk.Meta{"k": 1}, nil, 1},
		{nil, nil, 0},
	} {
		params := &sdk.CreateMessageParams{Meta: maps.Clone(tc.meta)}
		got := c.untag(params)
		meta := params.Meta
		if got != tc.want || len(meta) != tc.left || meta[callMetaKey] != nil || (len(meta) == 0 && meta != nil) {
			t.Errorf("untag(%v) = %p, meta %v; want %p and %d keys", tc.meta, got, meta, tc.want, tc.left)
		}
	}
}
