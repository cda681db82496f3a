// Package scaleout tests the gateway (toolkit-gateway) scaled out: several replicas
// of the gateway behind haproxy, under concurrent MCP clients, while one
// replica is killed, or sharing their state on Redis.
//
// The package has no API; its tests build the gateway and the library's
// example program once, start three gateway replicas on free ports, each
// serving the same upstream (the example's stdio MCP server mode), and put
// haproxy in front of them:
//
//   - TestStatelessScaleOut: the replicas serve streamable HTTP without
//     sessions and haproxy balances every request round robin. Sixteen
//     clients make thousands of tool calls; after a fixed number of them one
//     replica is killed with SIGKILL. The calls in flight on it may fail,
//     with a clean error; every call started after it is gone succeeds.
//   - TestStatefulAffinity: the replicas keep sessions and haproxy sticks
//     each one to its replica on the Mcp-Session-Id header. After the kill,
//     the sessions on the survivors go on without a single failure; those
//     on the killed replica get a clean error and start a new session.
//
// The fleet tests run three replicas sharing their state on one Redis
// (the configuration's state section; internal/testing/redistest starts a
// redis-server per test) behind haproxy, with MCP upstreams in the test
// process that count the calls they execute:
//
//   - TestFleetRateLimit: a rate limit of 60/m with a burst of 10 holds for
//     the fleet under thirty clients: at most the burst plus what the rate
//     refills over the time measured is executed upstream, and every
//     other call is refused with -32029 naming the rule.
//   - TestFleetPins: a changed definition seen by one replica is
//     quarantined on all three (calls through haproxy refused, none
//     executed), and `toolkit-gateway pins approve --config` against Redis
//     releases it on all three.
//   - TestFleetInputReplay: a relayed 2026-07-28 input round answered on
//     one replica is refused when replayed on the two others.
//   - TestFleetRedisDown: with Redis killed under load every call is still
//     answered (rate limits fail open), /healthz says the state is
//     unavailable, then ok once Redis is back, with no approval lost.
//   - BenchmarkFleetThroughput compares the fleet's calls a second under
//     16 clients with one replica's alone, without shared state, when the
//     replicas' own work bounds them and when their upstreams do.
//
// haproxy retries only a connection that failed to open (retry-on
// conn-failure, option redispatch), never a request that may have reached a
// replica.
//
// scripts/debian-tool.sh haproxy installs haproxy (the Debian package) when it is
// missing; `make scaleout` runs it and then these tests. Under plain `go
// test ./...` (in cmd/toolkit-gateway) the tests skip with a message when haproxy is not found, and
// fail instead when PEERS_REQUIRED=1 (as `make test` and CI set it); the
// fleet tests do the same when redis-server is missing.
package scaleout
