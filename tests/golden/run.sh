#!/usr/bin/env bash
# Golden cases as data: tests/golden/<case>/ holds
#   cmd               the arguments after `gpushare`, one line, run from the case dir
#   expected.stdout   exact stdout (optional: absent means "not checked")
#   expected.stderr   exact stderr (optional)
#   expected.exit     exit status (default 0)
#   why               which spec rule the case pins down
set -u
# A fixed clock: nvidia.com/gfd.timestamp in the expected patches.
export GPUSHARE_NOW=1767225600
bin=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
root=$(cd "$(dirname "$0")" && pwd)
pass=0 fail=0
for dir in "$root"/*/; do
	[ -f "$dir/cmd" ] || continue
	name=$(basename "$dir")
	want_exit=0
	[ -f "$dir/expected.exit" ] && want_exit=$(cat "$dir/expected.exit")
	out=$(mktemp) err=$(mktemp)
	(cd "$dir" && eval "set -- $(cat cmd)" && "$bin" "$@" >"$out" 2>"$err")
	got_exit=$?
	ok=1
	[ "$got_exit" = "$want_exit" ] || { echo "FAIL $name: exit $got_exit, want $want_exit"; ok=0; }
	if [ -f "$dir/expected.stdout" ] && ! diff -u "$dir/expected.stdout" "$out" >/dev/null; then
		echo "FAIL $name: stdout differs"; diff -u "$dir/expected.stdout" "$out" | head -40; ok=0
	fi
	if [ -f "$dir/expected.stderr" ] && ! diff -u "$dir/expected.stderr" "$err" >/dev/null; then
		echo "FAIL $name: stderr differs"; diff -u "$dir/expected.stderr" "$err" | head -40; ok=0
	fi
	rm -f "$out" "$err"
	if [ $ok = 1 ]; then pass=$((pass + 1)); else fail=$((fail + 1)); fi
done
echo "golden: $pass passed, $fail failed"
[ $fail = 0 ]
