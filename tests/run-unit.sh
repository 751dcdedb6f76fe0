#!/bin/sh
# Run each unit-test binary; with GS_VALGRIND=1 under valgrind (leaks fail).
fail=0
for t in "$@"; do
	if [ "${GS_VALGRIND:-}" = 1 ]; then
		valgrind -q --error-exitcode=99 --leak-check=full --errors-for-leak-kinds=definite,indirect \
			"$t" >"$t.log" 2>&1
	else
		"$t" >"$t.log" 2>&1
	fi
	rc=$?
	if [ $rc -ne 0 ]; then
		cat "$t.log"
		echo "FAIL $(basename "$t") (exit $rc)"
		fail=1
	else
		echo "ok   $(basename "$t") ($(grep -c '^\[       OK \]' "$t.log") cases)"
	fi
done
exit $fail
