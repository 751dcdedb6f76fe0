#!/bin/sh
# check-request.sh MANIFEST...: for every container whose nvidia.com/gpu limit
# or request is more than 1, print OVER=<container>=<count> and exit 1;
# otherwise print OK and exit 0. Invalid input: message on stderr, exit 2.
# A thin wrapper over `gpushare check` (see `gpushare check --help`).
# The binary: $GPUSHARE, else build/gpushare of this checkout (kept up to
# date with make), else gpushare on PATH.
set -u
root=$(CDPATH= cd -- "$(dirname -- "$0")/.." && pwd -P) || exit 2
bin=${GPUSHARE:-}
if [ -z "$bin" ]; then
	bin=$root/build/gpushare
	# In a checkout, bring the binary up to date first (a no-op costs ~30 ms):
	# a build/ left from older sources would answer with their behaviour.
	if [ -f "$root/Makefile" ] && command -v make >/dev/null 2>&1; then
		# Keep stdout for the verdict alone.
		if ! make -s -C "$root" >&2; then
			[ -x "$bin" ] || { echo "check-request.sh: build failed" >&2; exit 2; }
			echo "check-request.sh: warning: build failed; using the existing $bin" >&2
		fi
	fi
	if [ ! -x "$bin" ]; then
		bin=$(command -v gpushare) || { echo "check-request.sh: gpushare not found" >&2; exit 2; }
	fi
fi
if [ $# -eq 0 ]; then
	echo "usage: check-request.sh <pod manifest>..." >&2
	exit 2
fi
exec "$bin" check -- "$@"
