package bridge

import (
	"context"
	"fmt"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// MaxRelayedState is the longest requestState of an upstream server that
// is relayed to the caller's client (InputRelay); a connector whose
// server gives a longer one answers that round itself, through its
// handlers, as for a caller that relays nothing.
const MaxRelayedState = 16 << 10

// InputRelay is put in the context of a tool call, a prompt's rendering
// or a resource's read (WithInputRelay) by a caller that passes an
// upstream server's input-required results on to its own client rather
// than having the connector answer them: an
// [github.com/llmkit/toolkit/mcp/mcpserver.Server] serving a client of
// protocol 2026-07-28. The connector whose item is Item returns such a
// result as an [*InputRequired] error instead of answering it; the
// caller's retry carries the client's answers (Responses) and the
// upstream's requestState (State) back, and the connector sends them with
// the request. Requests for other items (a Go tool calling a remote one,
// say) answer as usual.
type InputRelay struct {
	// Item is the tool, prompt or resource (the toolkit item's Value,
	// comparable) whose server's input-required results are relayed.
	Item any
	// Responses are the client's answers to the upstream's input
	// requests, by the upstream's keys; nil on a first call.
	Responses sdk.InputResponseMap
	// State is the upstream's requestState the answers go with.
	State string
}

type relayKey struct{}

// WithInputRelay returns ctx carrying r.
func WithInputRelay(ctx context.Context, r *InputRelay) context.Context {
	return context.WithValue(ctx, relayKey{}, r)
}

// InputRelayFor returns the relay of ctx when it is for item (a
// comparable value: a connector's pointer).
func InputRelayFor(ctx context.Context, item any) (*InputRelay, bool) {
	r, ok := ctx.Value(relayKey{}).(*InputRelay)
	if !ok || r == nil || r.Item != item {
		return nil, false
	}
	return r, true
}

// InputRequired is the error a connector's tool call, prompt rendering or
// resource read ends with when its server answered with an input-required result and the caller relays
// them (InputRelay): the server's input requests, by its keys, and its
// requestState, for the caller's client to answer.
type InputRequired struct {
	Requests sdk.InputRequestMap
	State    string
}

// Error says that the server asks for input, and how many requests.
func (e *InputRequired) Error() string {
	return fmt.Sprintf("the server asks for input (%d requests)", len(e.Requests))
}
