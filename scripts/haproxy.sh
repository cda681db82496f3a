#!/usr/bin/env bash
# Makes sure an haproxy binary is available for the scale-out test
# (cmd/toolkit-gateway/internal/scaleout): the one on PATH when there is one, otherwise
# the Debian package, installed with apt-get (through sudo when not root).
#
# Usage: scripts/haproxy.sh
#
# Idempotent. On success the absolute path of haproxy is printed on stdout;
# progress and errors go to stderr. Only the binary is wanted: the package's
# service is neither started by the install (a policy-rc.d refuses it for
# the duration) nor left enabled at boot.
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
	policy=/usr/sbin/policy-rc.d
	own_policy=""
	if [[ ! -e $policy ]]; then
		printf '#!/bin/sh\n# no service starts while scripts/haproxy.sh installs haproxy\nexit 101\n' | $sudo tee $policy >/dev/null
		$sudo chmod 755 $policy
		own_policy=1
	fi
	status=0
	{ $sudo apt-get update -qq && $sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends haproxy; } >&2 || status=$?
	[[ -z $own_policy ]] || $sudo rm -f $policy
	((status == 0)) || die "apt-get failed ($status)"
	# Not a boot-time service: disabled for systemd and for SysV init.
	if command -v systemctl >/dev/null 2>&1; then
		$sudo systemctl disable --quiet haproxy.service >&2 2>/dev/null || true
	fi
	if command -v update-rc.d >/dev/null 2>&1; then
		$sudo update-rc.d haproxy disable >/dev/null 2>&1 || true
	fi
	if [[ -e /etc/systemd/system/multi-user.target.wants/haproxy.service ]]; then
		die "the haproxy service is still enabled at boot"
	fi
	log "apt-get took $((SECONDS - start))s"
	bin="$(find_haproxy)" || die "haproxy still not found after installing the package"
fi

version="$("$bin" -v 2>&1 | sed -n 1p)" || die "$bin -v failed"
log "$version at $bin"
printf '%s\n' "$bin"
