#!/usr/bin/env bash
# Makes sure a program that tests start (haproxy for the scale-out tests,
# redis-server for the shared-state tests) is available: the one on PATH
# when there is one, otherwise its Debian package, installed with apt-get
# (through sudo when not root).
#
# Usage: scripts/debian-tool.sh PROGRAM [PACKAGE]   (PACKAGE defaults to PROGRAM)
#
# Idempotent. On success the absolute path of PROGRAM is printed on stdout;
# progress and errors go to stderr. Only the binary is wanted: the
# package's service is neither started by the install (a policy-rc.d
# refuses it for the duration) nor left enabled at boot, nor running
# after it.
set -euo pipefail

prog="${1:?usage: scripts/debian-tool.sh PROGRAM [PACKAGE]}"
pkg="${2:-$prog}"

log() { printf '%s: %s\n' "$prog" "$*" >&2; }
die() { log "error: $*"; exit 1; }

find_prog() {
	# Debian puts some in /usr/sbin, which is not on every user's PATH.
	command -v "$prog" 2>/dev/null && return 0
	[[ -x /usr/sbin/$prog ]] && { echo "/usr/sbin/$prog"; return 0; }
	[[ -x /usr/bin/$prog ]] && { echo "/usr/bin/$prog"; return 0; }
	return 1
}

if ! bin="$(find_prog)"; then
	command -v apt-get >/dev/null 2>&1 || die "$prog is not installed and apt-get is not available: install $pkg by hand"
	sudo=""
	if [[ $(id -u) -ne 0 ]]; then
		command -v sudo >/dev/null 2>&1 || die "$prog is not installed and neither root nor sudo is available to install $pkg"
		sudo="sudo"
	fi
	log "installing the Debian package"
	start=$SECONDS
	policy=/usr/sbin/policy-rc.d
	own_policy=""
	if [[ ! -e $policy ]]; then
		printf '#!/bin/sh\n# no service starts while scripts/debian-tool.sh installs $pkg\nexit 101\n' | $sudo tee $policy >/dev/null
		$sudo chmod 755 $policy
		own_policy=1
	fi
	status=0
	{ $sudo apt-get update -qq && $sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "$pkg"; } >&2 || status=$?
	[[ -z $own_policy ]] || $sudo rm -f $policy
	((status == 0)) || die "apt-get failed ($status)"
	# Not a boot-time service: disabled for systemd and for SysV init.
	if command -v systemctl >/dev/null 2>&1; then
		$sudo systemctl disable --quiet "$pkg.service" >&2 2>/dev/null || true
	fi
	if command -v update-rc.d >/dev/null 2>&1; then
		$sudo update-rc.d "$pkg" disable >/dev/null 2>&1 || true
	fi
	if [[ -e /etc/systemd/system/multi-user.target.wants/$pkg.service ]]; then
		die "the $pkg service is still enabled at boot"
	fi
	log "apt-get took $((SECONDS - start))s"
	bin="$(find_prog)" || die "$prog still not found after installing $pkg"
fi

version="$("$bin" --version 2>&1 | sed -n 1p)" || version="$("$bin" -v 2>&1 | sed -n 1p)" || die "$bin does not run"
log "$version at $bin"
printf '%s\n' "$bin"
