// The npm pins of the MCP servers whose tool definitions make the search
// corpus in model/testdata/disclosure (package.json, package-lock.json;
// installed and read by `make corpus`). This go.mod makes the folder a module
// of its own, so neither the pins nor the node_modules they install ship in
// the toolkit module.
module github.com/llmkit/toolkit/tools/corpus

go 1.25.0
