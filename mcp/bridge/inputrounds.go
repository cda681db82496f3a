package bridge

import (
	"context"
	"fmt"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// MaxPassedState is the longest requestState of an upstream server that
// is passed on to the caller's client (InputRound); a connector whose
// server gives a longer one answers that round itself, through its
// handlers, as for a caller that passes nothing on.
const MaxPassedState = 16 << 10

// InputRound is put in the context of a tool call, a prompt's rendering
// or a resource's read (WithInputRound) by a caller that passes an
// upstream server's input-required results on to its own client rather
// than having the connector answer them: an
// [github.com/llmkit/toolkit/mcp/mcpserver.Server] serving a client of
// protocol 2026-07-28. The connector whose item is Item returns such a
// result as an [*InputRequired] error instead of answering it; the
// caller's retry carries the client's answers (Responses) and the
// upstream's requestState (State) back, and the connector sends them with
// the request. Requests for other items (a Go tool calling a remote one,
// say) answer as usual.
type InputRound struct {
	// Item is the tool, prompt or resource (the toolkit item's Value,
	// comparable) whose server's input-required results are passed on.
	Item any
	// Responses are the client's answers to the upstream's input
	// requests, by the upstream's keys; nil on a first call.
	Responses sdk.InputResponseMap
	// State is the upstream's requestState the answers go with.
	State string
}

type inputRoundKey struct{}

// WithInputRound returns ctx carrying r.
func WithInputRound(ctx context.Context, r *InputRound) context.Context {
	return context.WithValue(ctx, inputRoundKey{}, r)
}

// InputRoundFor returns the InputRound of ctx when it is for item (a
// comparable value: a connector's pointer).
func InputRoundFor(ctx context.Context, item any) (*InputRound, bool) {
	r, ok := ctx.Value(inputRoundKey{}).(*InputRound)
	if !ok || r == nil || r.Item != item {
		return nil, false
	}
	return r, true
}

// InputRequired is the error a connector's tool call, prompt rendering or
// resource read ends with when its server answered with an input-required
// result and the caller passes it on (InputRound): the server's input requests, by its keys, and its
// requestState, for the caller's client to answer.
type InputRequired struct {
	Requests sdk.InputRequestMap
	State    string
}

// Error says that the server asks for input, and how many requests.
func (e *InputRequired) Error() string {
	return fmt.Sprintf("the server asks for input (%d requests)", len(e.Requests))
}
