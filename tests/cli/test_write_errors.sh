#!/usr/bin/env bash
# Output that cannot be written is a failure: every command flushes standard
# output at exit and, when that fails, says so on stderr and exits 2, never
# 0 or 1 (a verdict nobody received is no verdict).
. "$(dirname "$0")/lib.sh"
[ -w /dev/full ] || { echo "skip: no /dev/full"; exit 0; }
g=$TOP/tests/golden

full() { # ARGS...: run $GPUSHARE with stdout on /dev/full
	local e
	e=$(mktemp)
	"$GPUSHARE" "$@" >/dev/full 2>"$e"
	rc=$?
	out="" err=$(cat "$e")
	rm -f "$e"
}

full check "$g/check-seed-over/pod.yaml"
expect_rc 2 "check with a finding"
expect_err_has "gpushare: cannot write standard output: No space left on device" "check"
full check "$g/check-no-gpu/pod.yaml"
expect_rc 2 "check answering OK"
expect_err_has "cannot write standard output" "check OK"
full advertise --full "$g/adv-plain/node.yaml"
expect_rc 2 "advertise"
expect_err_has "cannot write standard output" "advertise"
(cd "$g/lint-bare-null" && full lint --no-notes --fallback-strategies empty cm.yaml &&
	expect_rc 2 "lint" && expect_err_has "cannot write standard output" "lint") || exit 1
full isolation
expect_rc 2 "isolation"
full --help
expect_rc 2 "--help"
full check --help
expect_rc 2 "check --help"
full --version
expect_rc 2 "--version"

# An error already on stderr keeps its own message and status.
full check "$g/nonexistent.yaml"
expect_rc 2 "missing file"
expect_err_has "cannot open"

# Nothing to write, nothing to fail: stdout closed and unused is fine.
"$GPUSHARE" check "$g/nonexistent.yaml" >&- 2>/dev/null
[ $? = 2 ] || fail "closed stdout, error path"
