// Package scaleout tests the gateway (toolkit-gateway) scaled out: several replicas
// of the gateway behind haproxy, under concurrent MCP clients, while one
// replica is killed.
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
// haproxy retries only a connection that failed to open (retry-on
// conn-failure, option redispatch), never a request that may have reached a
// replica.
//
// scripts/debian-tool.sh haproxy installs haproxy (the Debian package) when it is
// missing; `make scaleout` runs it and then these tests. Under plain `go
// test ./...` (in cmd/toolkit-gateway) the tests skip with a message when haproxy is not found, and
// fail instead when PEERS_REQUIRED=1 (as `make test` and CI set it).
package scaleout
