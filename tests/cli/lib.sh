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
# use_tmp: $tmp, a folder removed at exit; a server started in the background
# with its pid in $pid is stopped first.
use_tmp() {
	tmp=$(mktemp -d)
	pid=
	trap stop_and_clean EXIT
}
stop_and_clean() {
	[ -n "$pid" ] && kill "$pid" 2>/dev/null && wait "$pid" 2>/dev/null
	rm -rf "$tmp"
}
# free_port: a TCP port of 127.0.0.1 that nothing listens on now.
# runlog ARGS...: run gpushare on an empty request log ($log, where the fake
# apiserver writes each request); $reqs is what it sent.
runlog() {
	: >"$log"
	run "$@"
	reqs=$(cat "$log")
}
# no_writes WHAT: fails when the requests of the last runlog hold a write.
no_writes() {
	case "$reqs" in *PATCH* | *POST* | *PUT* | *DELETE*) fail "wrote to the cluster ($1): $reqs" ;; esac
}

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
# serve_webhook CA ARGS...: `gpushare webhook ARGS...` on a free port of 127.0.0.1
# in the background, its stderr in $tmp/log; sets $pid, $port and $url, and
# fails unless /healthz answers over HTTPS (trusting CA) within 15 s.
serve_webhook() {
	local ca=$1
	shift
	port=$(free_port)
	"$GPUSHARE" webhook "$@" --bind-address 127.0.0.1 --port "$port" 2>"$tmp/log" &
	pid=$!
	url=https://127.0.0.1:$port
	gs_wait_for 15 gs_http_ready "$url/healthz" --cacert "$ca" || {
		err=$(cat "$tmp/log")
		fail "the server did not come up"
	}
}
# serve_fake_apiserver: tests/cli/fake_apiserver.py in the background (call
# use_tmp first), logging each request to $log; sets $pid, $port and $K, a
# kubeconfig whose context lab points at it, and unsets KUBECONFIG.
serve_fake_apiserver() {
	log=$tmp/requests.log
	python3 "$TOP/tests/cli/fake_apiserver.py" "$log" >"$tmp/port" 2>"$tmp/server.err" &
	pid=$!
	gs_wait_for 10 test -s "$tmp/port"
	port=$(head -1 "$tmp/port")
	[ -n "$port" ] || fail "fake apiserver did not start: $(cat "$tmp/server.err")"
	K=$tmp/kubeconfig
	cat >"$K" <<-YAML
		apiVersion: v1
		kind: Config
		current-context: lab
		clusters:
		- name: lab
		  cluster: {server: "http://127.0.0.1:$port"}
		contexts:
		- name: lab
		  context: {cluster: lab}
	YAML
	unset KUBECONFIG
}
