#!/usr/bin/env bash
# How the live commands reach an apiserver, as typed: an address that
# refuses fails at once with kubectl's words (one attempt, counted from
# -v 6's trace lines), while the controller, which outlives apiserver
# restarts, keeps trying; and with proxies in the environment, a loopback
# apiserver is dialed directly, so the bearer token never reaches the proxy.
. "$TOP/tests/cli/lib.sh"

tmp=$(mktemp -d)
pids=()
trap 'for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done; rm -rf "$tmp"' EXIT
unset KUBECONFIG HTTP_PROXY http_proxy HTTPS_PROXY https_proxy NO_PROXY no_proxy ALL_PROXY all_proxy
export HOME=$tmp

# start NAME SCRIPT ARGS...: run a python helper, wait for the port it prints first.
start() {
	local name=$1
	shift
	python3 "$@" >"$tmp/$name.port" 2>"$tmp/$name.err" &
	pids+=($!)
	gs_wait_for 15 test -s "$tmp/$name.port"
	port=$(head -1 "$tmp/$name.port")
	[ -n "$port" ] || fail "$name did not start: $(cat "$tmp/$name.err")"
}
# A port nobody listens on: a server's, after it stopped.
start closed "$TOP/tests/cli/fake_apiserver.py" /dev/null
closed=$port
kill "${pids[0]}"
wait "${pids[0]}" 2>/dev/null

# Refused: one attempt, kubectl's line, exit 2. The time is printed, not asserted.
t0=$(date +%s%N)
run status --server "https://127.0.0.1:$closed" -v 6
t1=$(date +%s%N)
expect_rc 2 "refused"
expect_err_has "gpushare status: The connection to the server 127.0.0.1:$closed was refused - did you specify the right host or port?" "kubectl's words"
attempts=$(grep -c ' (attempt [0-9]*)$' <<<"$err")
[ "$attempts" = 1 ] || fail "status made $attempts attempts at a refusing server, want 1"
echo "refused: $attempts attempt in $(((t1 - t0) / 1000000)) ms" >&2

# sync and explain alike; without -v no trace line.
run sync --server "http://127.0.0.1:$closed" --dry-run
expect_rc 2 "sync refused"
expect_err_has "The connection to the server 127.0.0.1:$closed was refused - did you specify" "sync"
case "$err" in *"(attempt "*) fail "a trace line without -v" ;; esac

# The controller waits for its apiserver: a second attempt, then it is stopped.
"$GPUSHARE" controller --server "http://127.0.0.1:$closed" --v=6 >"$tmp/ctl.out" 2>"$tmp/ctl.err" &
ctl=$!
pids+=($ctl)
for _ in $(seq 300); do
	grep -q '(attempt 2)$' "$tmp/ctl.err" && break
	kill -0 "$ctl" 2>/dev/null || break
	sleep 0.1
done
kill -0 "$ctl" 2>/dev/null || { err=$(cat "$tmp/ctl.err"); fail "the controller gave up on a refusing apiserver"; }
grep -q '(attempt 2)$' "$tmp/ctl.err" || { err=$(cat "$tmp/ctl.err"); fail "the controller did not try again"; }
kill "$ctl"
wait "$ctl" 2>/dev/null

# Proxies everywhere in the environment, the apiserver on loopback: dialed directly.
start api "$TOP/tests/cli/fake_apiserver.py" "$tmp/api.log"
api=$port
start proxy "$TOP/tests/unit/recording_proxy.py" "$tmp/proxy.log"
proxy=http://127.0.0.1:$port
: >"$tmp/proxy.log"
for server in "http://127.0.0.1:$api" "http://localhost:$api"; do
	: >"$tmp/api.log"
	http_proxy=$proxy HTTP_PROXY=$proxy https_proxy=$proxy HTTPS_PROXY=$proxy ALL_PROXY=$proxy all_proxy=$proxy \
		run status --server "$server" --token cli-proxy-token -v 6
	expect_err_has "$server: direct (a loopback address is never proxied)" "says it dials directly"
	grep -q "auth=bearer:" "$tmp/api.log" || fail "$server: the apiserver saw no token: $(cat "$tmp/api.log")"
done
[ ! -s "$tmp/proxy.log" ] || fail "the proxy was asked: $(cat "$tmp/proxy.log")"
case "$out$err" in *cli-proxy-token*) fail "the token was printed" ;; esac

# Not loopback (0.0.0.0 reaches this machine): the proxy, and a token is not sent through it in clear.
run_proxy() { HTTP_PROXY=$proxy run "$@"; }
run_proxy status --server "http://0.0.0.0:$api" --token cli-proxy-token
expect_rc 2 "token through a proxy in clear"
expect_err_has "refusing to send the bearer token for http://0.0.0.0:$api through the proxy $proxy (from HTTP_PROXY) in clear text" "refused"
[ ! -s "$tmp/proxy.log" ] || fail "the token reached the proxy: $(cat "$tmp/proxy.log")"
run_proxy status --server "http://0.0.0.0:$api" -v 6
expect_err_has "http://0.0.0.0:$api: through the proxy $proxy (from HTTP_PROXY)" "says which proxy"
grep -q "GET http://0.0.0.0:$api/api/v1/" "$tmp/proxy.log" || fail "HTTP_PROXY unused: $(cat "$tmp/proxy.log")"
exit 0
