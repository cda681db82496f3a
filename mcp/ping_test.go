package mcp

import (
	"context"
	"fmt"
	"testing"

	"github.com/llmkit/toolkit/internal/testing/testserver"
)

// The check that a server still answers (after a call failed oddly, or a
// stream broke) takes a JSON-RPC error for an answer on protocol
// 2026-07-28, which removed ping (the go-sdk refuses it there for want of
// _meta): the connector would otherwise drop a working session at every
// suspicion. On older protocols "method not found" is an answer, any other
// error (a session the server no longer knows) fails the check.
func TestPingAnsweredMethodNotFound(t *testing.T) {
	leakCheck(t)
	s := newServer(t, testserver.Options{})
	r := start(t, testserver.ServeHTTP(t, s.Server, testserver.Stateless).URL, false)
	if v := r.State().ProtocolVersion; v != StatelessProtocolVersion {
		t.Fatalf("negotiated %s", v)
	}
	ctx := context.Background()
	l, err := r.Connector.acquire(ctx)
	mustNotErr(t, err)
	if err := r.Connector.ping(ctx, l); err != nil {
		t.Errorf("ping of a 2026-07-28 server that answers: %v", err)
	}
	mustNotErr(t, r.stop(t))

	// A 2025-11-25 server that answers ping with another JSON-RPC error (a
	// session it no longer knows, say) fails the check.
	raw := &testserver.Raw{Handle: func(req testserver.RawRequest) [][]byte {
		switch req.Method {
		case "initialize":
			return [][]byte{testserver.Initialize(req, "forgetful")}
		case "ping":
			return [][]byte{fmt.Appendf(nil, `{"jsonrpc":"2.0","id":%s,"error":{"code":-32001,"message":"Session not found"}}`, req.ID)}
		case "tools/list", "prompts/list", "resources/list", "resources/templates/list":
			return [][]byte{testserver.Result(req, map[string]any{})}
		}
		return nil
	}}
	t.Cleanup(raw.Close)
	r = start(t, "memory://forgetful", false, OptDialer(raw.Dial), OptProtocolVersion(StatefulProtocolVersion))
	l, err = r.Connector.acquire(ctx)
	mustNotErr(t, err)
	if err := r.Connector.ping(ctx, l); err == nil {
		t.Error("ping answered with a session error passed the check")
	}
	mustNotErr(t, r.stop(t))
}
