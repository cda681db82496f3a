#!/usr/bin/env bash
# Runs every check and every test of every module, quietly, and ends with
# one line: "N passed, M failed" (", K skipped" when any were). What `make
# test` and CI run.
#
# Steps, each silent unless it fails (then its output is shown):
#   - no tracked file is an executable binary or over 1 MiB
#     (scripts/check-tracked.sh);
#   - the pinned MCP peers (scripts/peers.sh), haproxy and redis-server
#     (scripts/debian-tool.sh) are installed;
#   - for every module (the library, cmd/toolkit-gateway, redisstate, openapi,
#     codemode, each adapters/X):
#     its dependencies downloaded, go vet, gofmt, go.mod tidy, and
#     go test -race (tests that need the peers fail rather than skip);
#   - the gateway's scale-out tests (replicas behind haproxy), alone, last.
# Then internal/testing/testsum prints the failed tests' output and the
# closing line; the exit status is non-zero when anything failed.
#
# Environment: TEST_TIMEOUT (go test -timeout, default 15m),
# SCALEOUT_TIMEOUT (default 5m), TEST_FLAGS (extra go test flags).
set -uo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"

export PEERS_REQUIRED=1
TEST_TIMEOUT="${TEST_TIMEOUT:-15m}"
SCALEOUT_TIMEOUT="${SCALEOUT_TIMEOUT:-5m}"
read -r -a test_flags <<<"${TEST_FLAGS:-}"

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
failed=()

# step NAME CMD...: runs CMD with its output in a log, shown only when it
# fails; a failure is recorded under NAME.
step() {
	local name="$1"
	shift
	local log="$work/step.log"
	if ! "$@" >"$log" 2>&1; then
		echo "== $name failed:"
		cat "$log"
		failed+=("$name")
		return 1
	fi
}

gofmt_check() {
	local bad
	bad="$(gofmt -l $(find . -name '*.go' -not -path '*/node_modules/*' -not -path './.*/*'))"
	[[ -z "$bad" ]] || { echo "gofmt needed on:"; echo "$bad"; return 1; }
}

modules=(. cmd/toolkit-gateway redisstate openapi codemode)
while IFS= read -r f; do
	modules+=("$(dirname "$f")")
done < <(find adapters -name go.mod -not -path '*/testdata/*' | sort)

step "tracked files" bash scripts/check-tracked.sh
step "peers" bash scripts/peers.sh
step "haproxy" bash scripts/debian-tool.sh haproxy
step "redis-server" bash scripts/debian-tool.sh redis-server

go build -o "$work/testsum" ./internal/testing/testsum || { echo "cannot build internal/testing/testsum"; exit 1; }

n=0
for m in "${modules[@]}"; do
	n=$((n + 1))
	# The gateway's scale-out tests run alone, after everything else.
	pkgs=(./...)
	if [[ "$m" == cmd/toolkit-gateway ]]; then
		mapfile -t pkgs < <(cd "$m" && go list ./... 2>/dev/null | grep -v '/internal/scaleout$')
	fi
	step "$m: go mod download" bash -c "cd '$m' && go mod download" || continue
	step "$m: go vet" bash -c "cd '$m' && go vet ./..."
	step "$m: gofmt" bash -c "cd '$m' && $(declare -f gofmt_check); gofmt_check"
	step "$m: go.mod tidy" bash -c "cd '$m' && go mod tidy -diff"
	(cd "$m" && go test -race -count=1 -timeout "$TEST_TIMEOUT" -json "${test_flags[@]}" "${pkgs[@]}") >"$work/test-$n.json" 2>&1
done

(cd cmd/toolkit-gateway && go test -race -count=1 -timeout "$SCALEOUT_TIMEOUT" -json "${test_flags[@]}" ./internal/scaleout) >"$work/test-scaleout.json" 2>&1

args=()
for f in "${failed[@]}"; do
	args+=(-failed "$f")
done
"$work/testsum" "${args[@]}" "$work"/test-*.json
