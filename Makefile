# Build, test, benchmark and fuzz github.com/llmkit/toolkit.
#
#   make test         everything CI runs (scripts/test.sh): no stray binary
#                     tracked, the pinned MCP peers, haproxy and redis-server installed,
#                     then for every module (the library, the gateway in
#                     cmd/toolkit-gateway, redisstate, openapi, codemode, each
#                     adapters/X) vet, gofmt, a
#                     tidy go.mod and every test with the race detector
#                     (tests that need the peers fail rather than skip),
#                     the gateway's scale-out tests last; quiet unless
#                     something fails, ending with "N passed, M failed"
#   make unit         only the library module's tests (verbose go test)
#   make gateway      only the gateway module's tests, scale-out excluded
#   make adapters     only the adapter modules (scripts/adapters.sh)
#   make peers        install the peers only (scripts/peers.sh)
#   make conformance  only the conformance tests against the real suite
#   make scaleout     only the scale-out tests: gateway replicas behind
#                     haproxy, one killed under load, or sharing their state on
#                     Redis (scripts/debian-tool.sh installs haproxy and
#                     redis-server when they are missing)
#   make bench        benchmarks (BENCHTIME=1s by default)
#   make fuzz         each fuzz target for FUZZTIME (20s by default)
#   make example      run the example program
#   make disclosure   the progressive-disclosure figures: tokens, finding
#                     (recall@1, recall@5, MRR on the labelled corpus) and
#                     search speed at 10,000 tools
#   make corpus       regenerate the corpus of real tool definitions
#                     (model/testdata/disclosure/tools.json) from the MCP
#                     servers pinned in tools/corpus (a large npm install)
#
# Plain `go test ./...` works too; tests that need the peers (or haproxy)
# then skip with a message saying how to install them.

GO           ?= go
TEST_TIMEOUT ?= 15m
TEST_FLAGS   ?=
BENCHTIME    ?= 1s
FUZZTIME     ?= 20s
PKGS         ?= ./...

# The conformance tests live here; `make test` runs them as part of
# `go test ./...`, `make conformance` runs only them.
CONFORMANCE_PKGS := ./internal/testing/conformance/...
CONFORMANCE_RUN  ?= Conformance

# The gateway is a module of its own; its scale-out tests start processes
# and measure a kill under load, so they run on their own.
GATEWAY_DIR      := cmd/toolkit-gateway
SCALEOUT_PKG     := ./internal/scaleout
SCALEOUT_TIMEOUT ?= 5m

SHELL := bash
.SHELLFLAGS := -euo pipefail -c
.DEFAULT_GOAL := test

.PHONY: test peers haproxy vet fmt-check unit gateway adapters conformance scaleout bench fuzz example disclosure corpus

test:
	@TEST_TIMEOUT=$(TEST_TIMEOUT) SCALEOUT_TIMEOUT=$(SCALEOUT_TIMEOUT) TEST_FLAGS='$(TEST_FLAGS)' bash scripts/test.sh

peers:
	@bash scripts/peers.sh >/dev/null

haproxy:
	@bash scripts/debian-tool.sh haproxy >/dev/null

vet:
	$(GO) vet $(PKGS)

# Go files tracked or not, outside node_modules and hidden directories.
fmt-check:
	@files="$$(find . -name '*.go' -not -path '*/node_modules/*' -not -path './.*/*')"; \
	if [[ -z "$$files" ]]; then exit 0; fi; \
	bad="$$(gofmt -l $$files)"; \
	if [[ -n "$$bad" ]]; then echo "gofmt needed on:"; echo "$$bad"; exit 1; fi

unit gateway conformance scaleout: export PEERS_REQUIRED := 1

unit: peers
	$(GO) test -race -count=1 -timeout $(TEST_TIMEOUT) $(TEST_FLAGS) $(PKGS)

gateway:
	@cd $(GATEWAY_DIR) && pkgs="$$($(GO) list ./... | grep -v '/internal/scaleout$$')" && \
	$(GO) test -race -count=1 -timeout $(TEST_TIMEOUT) $(TEST_FLAGS) $$pkgs

# Each adapters/X is a module of its own (provider SDKs stay out of the
# root module), so ./... does not reach it.
adapters:
	bash scripts/adapters.sh -timeout $(TEST_TIMEOUT)

conformance: peers
	@if [[ -d internal/testing/conformance ]]; then \
		$(GO) test -race -count=1 -timeout $(TEST_TIMEOUT) -run '$(CONFORMANCE_RUN)' -v $(CONFORMANCE_PKGS); \
	else echo "no conformance tests yet (internal/testing/conformance)"; fi

scaleout: haproxy
	@bash scripts/debian-tool.sh redis-server >/dev/null
	cd $(GATEWAY_DIR) && $(GO) test -race -count=1 -timeout $(SCALEOUT_TIMEOUT) -v $(TEST_FLAGS) $(SCALEOUT_PKG)

bench: peers
	$(GO) test -run '^$$' -bench . -benchmem -benchtime $(BENCHTIME) $(PKGS)

# Every FuzzXxx of every package, one at a time (go test -fuzz takes one).
fuzz: peers
	@for pkg in $$($(GO) list $(PKGS)); do \
		for fn in $$($(GO) test -list '^Fuzz' "$$pkg" | grep '^Fuzz' || true); do \
			echo "== $$pkg $$fn"; \
			$(GO) test -run '^$$' -fuzz "^$$fn\$$" -fuzztime $(FUZZTIME) "$$pkg"; \
		done; \
	done

example:
	$(GO) run ./example

disclosure:
	$(GO) test -count=1 -run 'TestDisclosureFigures' -v ./model/ ./mcp/mcpserver/
	$(GO) test -run '^$$' -bench 'ToolSearch' -benchmem -benchtime $(BENCHTIME) ./model/

corpus: peers
	cd tools/corpus && npm ci --no-audit --no-fund --ignore-scripts
	$(GO) run ./internal/testing/toolcorpus -root .
