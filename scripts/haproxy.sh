#!/usr/bin/env bash
# Makes sure an haproxy binary is available for the scale-out test
# (internal/testing/scaleout): the one on PATH when there is one, otherwise
# the Debian package, installed with apt-get (through sudo when not root).
#
# Usage: scripts/haproxy.sh
#
# Idempotent. On success the absolute path of haproxy is printed on stdout;
# progress and errors go to stderr.
set -euo pipefail

log() { printf 'haproxy: %s\n' "$*" >&2; }
die() { log "error: $*"; exit 1; }

find_haproxy() {
	# Debian puts it in /usr/sbin, which is not on every user's PATH.
	command -v haproxy 2>/dev/null && return 0
	[[ -x /usr/sbin/haproxy ]] && { echo /usr/sbin/haproxy; return 0; }
	return 1
}

if ! bin="$(find_haproxy)"; then
	command -v apt-get >/dev/null 2>&1 || die "haproxy is not installed and apt-get is not available: install haproxy by hand"
	sudo=""
	if [[ $(id -u) -ne 0 ]]; then
		command -v sudo >/dev/null 2>&1 || die "haproxy is not installed and neither root nor sudo is available to install it"
		sudo="sudo"
	fi
	log "installing the Debian package"
	start=$SECONDS
	$sudo apt-get update -qq >&2
	$sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends haproxy >&2
	log "apt-get took $((SECONDS - start))s"
	bin="$(find_haproxy)" || die "haproxy still not found after installing the package"
fi

version="$("$bin" -v 2>&1 | sed -n 1p)" || die "$bin -v failed"
log "$version at $bin"
printf '%s\n' "$bin"
