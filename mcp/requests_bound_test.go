package mcp

import (
	"context"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/llmkit/toolkit/internal/testing/testserver"
)

// A hostile 2026-07-28 server whose tool answers with an input-required
// result of a thousand elicitations (the go-sdk's client fulfils every
// input request of a round at once) has MaxServerRequestsPerCall of them reach the
// user, then the call fails with an error naming the bound; the log says
// so in a bounded number of lines. A server that sends a thousand
// requests of its own during a call (2025-11-25) has the rest refused.
func TestServerRequestFloodBounded(t *testing.T) {
	const flood = 1000
	for _, protocol := range []string{StatelessProtocolVersion, StatefulProtocolVersion} {
		t.Run(protocol, func(t *testing.T) {
			leakCheck(t)
			s := newServer(t, testserver.Options{})
			// The stateful server sees the first refusal; the go-sdk's
			// client ends the round's other requests at the first one.
			refusedSeen := make(chan struct{})
			var seenOnce atomic.Bool
			s.AddTool(mustTool("flood"), func(ctx context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
				if protocol == StatefulProtocolVersion {
					errs := make(chan error, flood)
					for range flood {
						go func() {
							_, err := req.Session.Elicit(ctx, &sdk.ElicitParams{Message: "again?"})
							if err != nil && seenOnce.CompareAndSwap(false, true) {
								close(refusedSeen)
							}
							errs <- err
						}()
					}
					refused := 0
					for range flood {
						if err := <-errs; err != nil {
							refused++
						}
					}
					return &sdk.CallToolResult{IsError: true, Content: []sdk.Content{&sdk.TextContent{Text: fmt.Sprint(refused, " refused")}}}, nil
				}
				ir := sdk.InputRequestMap{}
				for i := range flood {
					ir[fmt.Sprint("q", i)] = &sdk.ElicitParams{Message: "again?"}
				}
				return &sdk.CallToolResult{RequestState: "s", InputRequests: ir}, nil
			})
			m := testserver.NewMemory(s.Server)
			t.Cleanup(m.Close)
			// Over the in-memory transport a request of the server names
			// no call: the bound outside calls applies.
			limit := int32(MaxServerRequestsPerCall)
			if protocol == StatefulProtocolVersion {
				limit = MaxServerRequestsOutsideCalls
			}
			var entered, most atomic.Int32
			over := make(chan struct{}) // more than limit came: the test fails
			var overOnce atomic.Bool
			logs := newLogCapture()
			r := start(t, "memory://flood", false, OptDialer(m.Dial), OptProtocolVersion(protocol), OptLogger(slogNew(logs)),
				OptServerRequests(ServerRequests{Elicitation: func(ctx context.Context, _ *sdk.ElicitParams) (*sdk.ElicitResult, error) {
					n := entered.Add(1)
					for {
						m := most.Load()
						if n <= m || most.CompareAndSwap(m, n) {
							break
						}
					}
					defer entered.Add(-1)
					if n > limit && overOnce.CompareAndSwap(false, true) {
						close(over)
					}
					select {
					case <-over:
					case <-refusedSeen:
					case <-ctx.Done():
					}
					return &sdk.ElicitResult{Action: "decline"}, nil
				}}))
			out, err := call(t, context.Background(), r.Connector, "flood", `{}`)
			switch protocol {
			case StatelessProtocolVersion:
				if err == nil || !strings.Contains(err.Error(), "too many elicitation requests") {
					t.Fatalf("call = %v, %v; want the bound's error", out, err)
				}
			default:
				if err == nil && !strings.Contains(read(t, out), "refused") {
					t.Fatalf("call = %q", read(t, out))
				}
			}
			if m := most.Load(); m == 0 || m > limit {
				t.Errorf("%d elicitations reached the handler at once, want at most %d", m, limit)
			}
			mustNotErr(t, r.stop(t))
			lines := 0
			for _, l := range logs.all() {
				if strings.Contains(l, "too many wait for an answer") {
					lines++
				}
			}
			if lines == 0 || lines > logBurst+5 {
				t.Errorf("%d log lines about refusals, want a few", lines)
			}
		})
	}
}
