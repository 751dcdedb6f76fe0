#!/usr/bin/env bash
# Each tests/cli/test_*.sh is run with GPUSHARE set to the binary under test
# (wrapped in valgrind when GS_VALGRIND=1) and must exit 0.
set -u
bin=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
root=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$root/../.." && pwd)
if [ "${GS_VALGRIND:-}" = 1 ]; then
	wrap=$(mktemp)
	printf '#!/bin/sh\nexec valgrind -q --error-exitcode=99 --leak-check=full --errors-for-leak-kinds=definite,indirect "%s" "$@"\n' "$bin" >"$wrap"
	chmod +x "$wrap"
	bin=$wrap
fi
export GPUSHARE=$bin TOP=$top
pass=0 fail=0
for t in "$root"/test_*.sh; do
	[ -f "$t" ] || continue
	if out=$(bash "$t" 2>&1); then
		pass=$((pass + 1))
	else
		fail=$((fail + 1))
		echo "FAIL $(basename "$t")"
		echo "$out" | tail -30
	fi
done
echo "cli: $pass passed, $fail failed"
[ $fail = 0 ]
