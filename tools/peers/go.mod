// The npm pins of the real MCP peers the tests run against (package.json,
// package-lock.json, .npmrc; installed by scripts/peers.sh). This go.mod
// makes the folder a module of its own, so neither the pins nor the
// node_modules they install ship in the toolkit module.
module github.com/llmkit/toolkit/tools/peers

go 1.25.0
