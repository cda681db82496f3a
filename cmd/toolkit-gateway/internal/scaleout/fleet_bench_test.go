package scaleout

import (
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// BenchmarkFleetThroughput compares, in the same run, the calls a second
// that 16 clients get from three replicas sharing their state on Redis
// behind haproxy and from one replica alone, without shared state. Both
// have the same rate limit (never reached): the fleet's budget lives in
// Redis, the lone replica's in memory. It logs the ratios of two cases:
//
//   - gateway-bound: one upstream for all, answering at once; each call's
//     cost is the replicas' own work (and the extra hops: haproxy, Redis),
//     which scales with the cores the replicas get;
//   - upstream-bound: each replica has an upstream of its own serving one
//     lookup at a time in 10 ms (as a stdio server each replica runs), so a
//     replica's capacity is its upstream's: three replicas should give
//     about three times one, if nothing they share serialises them.
func BenchmarkFleetThroughput(b *testing.B) {
	limit := "{name: fleet, rate: 1000000/s, burst: 1000000}"
	b.Run("gateway-bound", func(b *testing.B) {
		compareThroughput(b, fleetOptions{shared: true, rateLimit: limit})
	})
	b.Run("upstream-bound", func(b *testing.B) {
		compareThroughput(b, fleetOptions{rateLimit: limit, upstreamWork: 10 * time.Millisecond})
	})
}

// compareThroughput runs 16 clients against three replicas started with o
// and against one replica alone started with o, and logs the ratio.
func compareThroughput(b *testing.B, o fleetOptions) {
	const clients = 16
	alone := o
	alone.alone = true
	// The fleet first: it checks for leftover processes when the
	// benchmark ends, after the lone replica has stopped.
	deployments := []struct {
		name string
		f    *fleet
	}{
		{"three-replicas-redis-haproxy", startFleet(b, o)},
		{"one-replica-alone", startFleet(b, alone)},
	}
	perSec := map[string]float64{}
	for _, d := range deployments {
		hc := newHTTPClient(b)
		sessions := make([]*sdk.ClientSession, clients)
		for i := range sessions {
			cs, err := connect(b.Context(), hc, d.f.url, protocolSession)
			if err != nil {
				b.Fatalf("%s, client %d: %v", d.name, i, err)
			}
			b.Cleanup(func() { cs.Close() })
			sessions[i] = cs
		}
		b.Run(d.name, func(b *testing.B) {
			var next atomic.Int64
			var wg sync.WaitGroup
			start := time.Now()
			for _, cs := range sessions {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for n := next.Add(1); n <= int64(b.N); n = next.Add(1) {
						if err := lookup(b.Context(), cs, fmt.Sprint(n)); err != nil {
							b.Error(err)
							return
						}
					}
				}()
			}
			wg.Wait()
			rate := float64(b.N) / time.Since(start).Seconds()
			b.ReportMetric(rate, "calls/s")
			perSec[d.name] = rate
		})
	}
	if a, f := perSec["one-replica-alone"], perSec["three-replicas-redis-haproxy"]; a > 0 && f > 0 {
		b.Logf("three replicas with Redis behind haproxy: %.0f calls/s; one replica alone: %.0f calls/s; ratio %.2f", f, a, f/a)
	}
}
