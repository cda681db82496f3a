package scaleout

import (
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/llmkit/toolkit/mcp/mcpserver"
)

// TestFleetRateLimit: a rate limit of 60 calls a minute with a burst of
// 10 holds for the fleet of three replicas behind haproxy. Thirty clients
// calling at once get at most the burst, plus what the rate refills over
// the time measured, executed upstream — not three times that — and every
// other call is refused with -32029 naming the rule.
func TestFleetRateLimit(t *testing.T) {
	const (
		clients = 30
		calls   = 20 // by each client: long enough for the rate to refill some
		burst   = 10
		perSec  = 1.0 // 60/m
	)
	f := startFleet(t, fleetOptions{rateLimit: fmt.Sprintf("{name: fleet, rate: 60/m, burst: %d}", burst)})
	ctx := t.Context()
	hc := newHTTPClient(t)
	sessions := make([]*sdk.ClientSession, clients)
	for i := range sessions {
		cs, err := connect(ctx, hc, f.url, protocolSession)
		if err != nil {
			t.Fatalf("client %d: %v", i, err)
		}
		t.Cleanup(func() { cs.Close() })
		sessions[i] = cs
	}

	var answered, refused atomic.Int64
	var wg sync.WaitGroup
	start := time.Now()
	for _, cs := range sessions {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range calls {
				err := lookup(ctx, cs, "w")
				var we *jsonrpc.Error
				switch {
				case err == nil:
					answered.Add(1)
				case errors.As(err, &we) && we.Code == mcpserver.CodeRateLimited:
					var data struct {
						Rule       string  `json:"rule"`
						RetryAfter float64 `json:"retryAfter"`
					}
					if json.Unmarshal(we.Data, &data) != nil || data.Rule != "fleet" || data.RetryAfter <= 0 {
						t.Errorf("refusal without the rule or retryAfter: %v %s", we, we.Data)
					}
					refused.Add(1)
				default:
					t.Errorf("call refused wrongly: %v", err)
				}
			}
		}()
	}
	wg.Wait()
	elapsed := time.Since(start)

	// Every replica took a share of the sessions.
	st, err := f.h.stats(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range f.replicas {
		if counter(st[r.name], "hrsp_2xx") == 0 {
			t.Errorf("replica %s served nothing: %v", r.name, st[r.name])
		}
	}
	most := int64(burst + perSec*elapsed.Seconds() + 1)
	n := f.executed.Load()
	t.Logf("%d clients, %d calls: %d executed upstream, %d refused, in %v (at most %d allowed)", clients, clients*calls, n, refused.Load(), elapsed, most)
	if n < burst || n > most {
		t.Errorf("the fleet executed %d calls in %v; want %d to %d", n, elapsed, burst, most)
	}
	if answered.Load() != n || n+refused.Load() != clients*calls {
		t.Errorf("%d answered, %d refused, %d executed upstream, of %d calls", answered.Load(), refused.Load(), n, clients*calls)
	}
	f.checkAlive(t)
}
