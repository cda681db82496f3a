#!/usr/bin/env bash
# Vets, format-checks and tests every adapter module: each go.mod under
# adapters/ is its own module (so the root module never requires a provider
# SDK), which `go test ./...` at the root does not enter.
#
# Usage: scripts/adapters.sh [go test flags...]
#
# For each module, from inside its directory: go vet ./..., a gofmt check,
# a check that go.mod and go.sum are tidy (go mod tidy -diff), and
# go test -race -count=1 ./... (plus any flags given). Every module is
# checked even when one fails; the exit status is non-zero if any failed.
set -uo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"

log() { printf 'adapters: %s\n' "$*" >&2; }

mods=()
while IFS= read -r f; do
	mods+=("$(dirname "$f")")
done < <(find adapters -name go.mod -not -path '*/testdata/*' | sort)

if [[ ${#mods[@]} -eq 0 ]]; then
	log "no adapter modules found"
	exit 0
fi

failed=()
for m in "${mods[@]}"; do
	log "$m"
	ok=1
	if ! (cd "$m" && go vet ./...); then
		ok=0
	fi
	unformatted="$(cd "$m" && gofmt -l .)"
	if [[ -n "$unformatted" ]]; then
		log "$m: not gofmt-formatted:"
		printf '  %s\n' $unformatted >&2
		ok=0
	fi
	if ! (cd "$m" && go mod tidy -diff >/dev/null); then
		log "$m: go.mod or go.sum is not tidy (run go mod tidy there)"
		ok=0
	fi
	if ! (cd "$m" && go test -race -count=1 "$@" ./...); then
		ok=0
	fi
	[[ $ok -eq 1 ]] || failed+=("$m")
done

if [[ ${#failed[@]} -gt 0 ]]; then
	log "FAILED: ${failed[*]}"
	exit 1
fi
log "all ${#mods[@]} modules passed"
