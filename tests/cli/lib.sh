# Helpers for CLI tests: source this, then call expect_* ; the first failure exits 1.
# gs_wait_for and gs_http_ready: scripts/lib/poll.sh.
# shellcheck disable=SC1091
. "$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)/scripts/lib/poll.sh"
# run ARGS...: runs $GPUSHARE, fills $out, $err, $rc.
run() {
	local o e
	o=$(mktemp) e=$(mktemp)
	"$GPUSHARE" "$@" >"$o" 2>"$e"
	rc=$?
	out=$(cat "$o") err=$(cat "$e")
	rm -f "$o" "$e"
}
# run_sh CMD...: same for any command (e.g. bin/check-request.sh).
run_sh() {
	local o e
	o=$(mktemp) e=$(mktemp)
	"$@" >"$o" 2>"$e"
	rc=$?
	out=$(cat "$o") err=$(cat "$e")
	rm -f "$o" "$e"
}
fail() { echo "FAIL: $*" >&2; echo "  stdout: $out" >&2; echo "  stderr: $err" >&2; exit 1; }
expect_rc() { [ "$rc" = "$1" ] || fail "exit $rc, want $1 (${2:-})"; }
expect_out() { [ "$out" = "$1" ] || fail "stdout '$out', want '$1' (${2:-})"; }
expect_out_has() { case "$out" in *"$1"*) ;; *) fail "stdout lacks '$1' (${2:-})" ;; esac; }
expect_err_has() { case "$err" in *"$1"*) ;; *) fail "stderr lacks '$1' (${2:-})" ;; esac; }
expect_err_match() { echo "$err" | grep -Eq -- "$1" || fail "stderr does not match /$1/ (${2:-})"; }
