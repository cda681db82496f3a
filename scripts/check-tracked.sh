#!/usr/bin/env bash
# Fails when a file tracked by git is an executable binary or larger than
# 1 MiB (lock files excepted), naming each one: built programs and large
# artifacts must never ship in the module.
#
# Usage: scripts/check-tracked.sh
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

limit=$((1024 * 1024))
bad=0
while IFS= read -r -d '' f; do
	[[ -f "$f" && ! -L "$f" ]] || continue
	case "$(basename "$f")" in
	package-lock.json | go.sum | *.lock) continue ;;
	esac
	size=$(stat -c %s -- "$f")
	if ((size > limit)); then
		echo "tracked file over 1 MiB ($size bytes): $f"
		bad=1
		continue
	fi
	# Executable formats by their magic numbers: ELF, PE, Mach-O (32, 64,
	# universal), and WebAssembly.
	magic=$(head -c 4 -- "$f" | od -An -tx1 | tr -d ' \n')
	case "$magic" in
	7f454c46 | 4d5a* | feedface | feedfacf | cefaedfe | cffaedfe | cafebabe | 0061736d)
		echo "tracked file is an executable binary: $f"
		bad=1
		;;
	esac
done < <(git ls-files -z)
exit $bad
