package mcp

import (
	"context"
	"fmt"
	"sync/atomic"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// Bounds of the requests a server sends its client (sampling, elicitation,
// roots), whether as requests of their own or as the input requests of a
// 2026-07-28 input-required result, which the go-sdk's client fulfils all
// at once, however many there are.
const (
	// MaxServerRequestsPerCall is the most requests of the server that may wait for
	// an answer at once for one call: more are refused at once, and the
	// server's call fails (the go-sdk fails a round whose input requests
	// are not all answered). A tool asks its user or model one question at
	// a time, or a few.
	MaxServerRequestsPerCall = 16
	// MaxServerRequestsOutsideCalls is the most requests of a server that may wait at
	// once when no call of the connector is known to be theirs (sent
	// outside any call, or answered by the connector's own handlers):
	// more are refused at once.
	MaxServerRequestsOutsideCalls = 64
)

// serverRequestGate counts the server's requests waiting for an answer.
type serverRequestGate struct {
	outside atomic.Int32 // of no known call
	// logged bounds the log lines of refusals: a flood of input requests
	// makes one line, then a few, each counting those left unsaid.
	logged atomic.Pointer[rateLimiter]
}

// logRefusal logs that a request was refused, within the gate's bound.
func (c *Connector) logRefusal(what, whose string, limit int32) {
	g := &c.srv.requests
	if g.logged.Load() == nil {
		g.logged.CompareAndSwap(nil, newLogLimiter())
	}
	ok, dropped := g.logged.Load().take()
	if !ok {
		return
	}
	args := []any{"server", c.serverName(), "request", what, "limit", limit, "scope", whose}
	if dropped > 0 {
		args = append(args, "refused_since_last", dropped)
	}
	c.logger.Warn("server request refused: too many wait for an answer at once", args...)
}

// enterServerRequest admits one request of the server, made for in (nil when no call
// of the connector is known to be its), or refuses it with a JSON-RPC
// error that names the bound. leave must be called once the request is
// answered.
func (c *Connector) enterServerRequest(ctx context.Context, in *inflight, what string) (leave func(), err error) {
	if in == nil {
		in = inflightFrom(ctx)
	}
	n, limit, whose := &c.srv.requests.outside, int32(MaxServerRequestsOutsideCalls), "outside any call"
	if in != nil {
		n, limit, whose = &in.requests, MaxServerRequestsPerCall, "for one call"
	}
	if n.Add(1) > limit {
		n.Add(-1)
		c.logRefusal(what, whose, limit)
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: fmt.Sprintf("too many %s requests at once %s (at most %d wait for an answer)", what, whose, limit)}
	}
	return func() { n.Add(-1) }, nil
}
