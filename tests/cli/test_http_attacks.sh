#!/usr/bin/env bash
# The webhook's HTTPS server and the controller's --listen server under the
# attacks of docs/guide/webhook.md "Limits", on loopback: connections that send a
# request one byte at a time and never finish it (slowloris), from one
# address and from many, and held 6 MiB uploads. Throughout, a good client
# from another address must get its reviews and /healthz answered within a
# second (tests/cli/http_attack.py times each request), the attack's
# connections must be closed by the headers' deadline, and the webhook's
# memory must stay under the pod's limit in deploy/webhook.yaml.
. "$(dirname "$0")/lib.sh"
cd "$TOP" || exit 1
if [ "${GS_VALGRIND:-}" = 1 ]; then
	echo "skipped under valgrind: it is about answering within a second"
	exit 0
fi
command -v openssl >/dev/null && command -v jq >/dev/null || fail "openssl and jq are needed"
tmp=$(mktemp -d)
pids=()
cleanup() {
	for p in "${pids[@]}"; do kill "$p" 2>/dev/null && wait "$p" 2>/dev/null; done
	rm -rf "$tmp"
}
trap cleanup EXIT
# The interpreter itself, once: a version manager's shim can take seconds a start.
py=$(python3 -c 'import sys; print(sys.executable)')
attack=("$py" "$TOP/tests/cli/http_attack.py")
freeport() { "$py" -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
# Attackers from 127.0.0.1 (one address) or 127.0.0.10-17 (many); the good client from 127.0.0.2.
many=127.0.0.10,127.0.0.11,127.0.0.12,127.0.0.13,127.0.0.14,127.0.0.15,127.0.0.16,127.0.0.17
# An ASan build's memory is its shadow's: the bound is checked on a plain build.
asan=
grep -qa __asan_init "$GPUSHARE" && asan=1

# run_attack NAME ARGS...: the attack's report into $tmp/NAME.json, shown on failure as $out.
run_attack() {
	local name=$1
	shift
	"${attack[@]}" "$@" >"$tmp/$name.json" 2>"$tmp/$name.err"
	out=$(cat "$tmp/$name.json") err=$(cat "$tmp/$name.err")
}
# settle PORT SERVER OWN: wait (10 s at most) until the last attack's connections are gone
# from the server, OWN left (1: the /metrics request itself); what the kernel had
# buffered for them is read first.
settle() {
	local n
	for _ in $(seq 100); do
		n=$(curl -s "http://127.0.0.1:$1/metrics" |
			sed -n "s/^gpushare_http_connections{server=\"$2\"} //p")
		[ -n "$n" ] && [ "$n" -le "$3" ] && return
		sleep 0.1
	done
	fail "the $2 server still holds $n connections 10 s after an attack"
}
# Every good request answered (200) within the second, and enough of them made.
expect_good() {
	jq -e '[.good[] | .made >= 5 and .ok == .made] | all' "$tmp/$1.json" >/dev/null ||
		fail "$1: good requests not all answered within a second"
}
# The attack's connections were closed by the server, none later than $2 s after it opened.
expect_cut() {
	jq -e --argjson max "$2" '.attack.closed > 0 and .attack.closed_age_max <= $max' \
		"$tmp/$1.json" >/dev/null || fail "$1: attacking connections not closed within $2 s"
}

# --- the webhook ---------------------------------------------------------------
# deploy/webhook.yaml's args are accepted (--health-listen among them): outside a
# cluster it stops at the kubeconfig, after every option was read.
mapfile -t args < <("$py" - "$TOP/deploy/webhook.yaml" <<'PY'
import sys, yaml
for d in yaml.safe_load_all(open(sys.argv[1])):
    if d and d["kind"] == "Deployment":
        print("\n".join(d["spec"]["template"]["spec"]["containers"][0]["args"]))
PY
)
[ "${args[0]:-}" = webhook ] || fail "no webhook args in deploy/webhook.yaml: ${args[*]}"
printf '%s\n' "${args[@]}" | grep -qx -- '--health-listen=0.0.0.0:8081' ||
	fail "deploy/webhook.yaml does not serve the probes on their own port"
env -u KUBECONFIG -u KUBERNETES_SERVICE_HOST HOME="$tmp" "$GPUSHARE" "${args[@]}" >/dev/null 2>"$tmp/deploy.err"
rc=$? err=$(cat "$tmp/deploy.err")
expect_rc 2 "deploy/webhook.yaml's args outside a cluster"
expect_err_has "no kubeconfig found" "stops at the kubeconfig, not at an option"

openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 1 \
	-subj "/CN=127.0.0.1" -addext subjectAltName=IP:127.0.0.1 \
	-keyout "$tmp/tls.key" -out "$tmp/tls.crt" 2>/dev/null || fail "openssl"
cat >"$tmp/review.json" <<-EOF
	{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{"uid":"uid-1",
	 "kind":{"group":"","version":"v1","kind":"Pod"},"operation":"CREATE","namespace":"gpu-share",
	 "name":"good","object":{"apiVersion":"v1","kind":"Pod","metadata":{"name":"good","namespace":"gpu-share"},
	 "spec":{"nodeSelector":{"nvidia.com/device-plugin.config":"shared"},
	 "containers":[{"name":"work","image":"pause","resources":{"limits":{"nvidia.com/gpu":"1"}}}]}}}}
EOF
port=$(freeport)
hport=$(freeport)
"$GPUSHARE" webhook -f k8s/lab-nodes.yaml -f k8s/device-plugin-configs.yaml \
	--tls-cert-file "$tmp/tls.crt" --tls-private-key-file "$tmp/tls.key" \
	--bind-address 127.0.0.1 --port "$port" --health-listen "127.0.0.1:$hport" 2>"$tmp/webhook.log" &
wpid=$!
pids+=("$wpid")
gs_wait_for 15 gs_http_ready "http://127.0.0.1:$hport/readyz" ||
	{ err=$(cat "$tmp/webhook.log"); fail "the webhook did not come up"; }
good=(--good-src 127.0.0.2 --good "https://127.0.0.1:$port/validate@$tmp/review.json"
	--good "http://127.0.0.1:$hport/healthz" --good "https://127.0.0.1:$port/healthz")

# 64 TLS connections from one address, one byte each half second.
run_attack w-slow --url "https://127.0.0.1:$port/validate" --slow 64 "${good[@]}" \
	--warmup 1 --duration 2.5 --pid "$wpid"
expect_good w-slow
expect_cut w-slow 3.5
settle "$hport" webhook 0

# 160 from eight addresses: more than the server holds (128) with no address over its 32.
# They are cut after 0.5 s and come back with a new TLS handshake each: under ASan
# (its malloc under GnuTLS's) those handshakes alone fill the server's thread.
if [ -z "$asan" ]; then
	run_attack w-many --url "https://127.0.0.1:$port/validate" --slow 160 --attack-src "$many" \
		"${good[@]}" --warmup 1 --duration 2 --pid "$wpid"
	expect_good w-many
	expect_cut w-many 3.0
	metrics=$(curl -s "http://127.0.0.1:$hport/metrics")
	case "$metrics" in *'gpushare_http_connections_cut_total{server="webhook",deadline="crowded"} 0'*)
		out=$metrics fail "w-many: no connection cut by the crowded deadline" ;;
	esac
	settle "$hport" webhook 0
fi

# 30 uploads of 6 MiB held one byte short, from eight addresses.
run_attack w-uploads --url "https://127.0.0.1:$port/validate" --hold 30 --size $((6 << 20)) \
	--attack-src "$many" "${good[@]}" --warmup 2 --duration 2 --pid "$wpid"
expect_good w-uploads
settle "$hport" webhook 0

# Two uploads that declare 6 MiB hold the budget for large bodies (its 12 MiB) from their
# headers on: uploads of 1 MiB sent whole are read, dropped and answered 503, told when
# to come back.
run_attack w-budget --url "https://127.0.0.1:$port/validate" --hold 2 --size $((6 << 20)) --hold-bytes 1 \
	--send 4 --send-size $((1 << 20)) --attack-src "$many" "${good[@]}" --warmup 1 --duration 1.5
expect_good w-budget
jq -e '.attack.answers | keys | any(test(" 503 "))' "$tmp/w-budget.json" >/dev/null ||
	fail "w-budget: no upload over the budget was answered 503"
jq -e '.attack.retry_after == ["1"]' "$tmp/w-budget.json" >/dev/null ||
	fail "w-budget: 503 without Retry-After: 1"

# One review of 4.5 MB of small values (an env list): its tree would take ~80 MB.
"$py" - "$tmp/env.json" <<'PY'
import json, sys
env = [{"name": "E%d" % i, "value": "v"} for i in range(150000)]
pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "env", "namespace": "gpu-share"},
       "spec": {"containers": [{"name": "work", "image": "pause", "env": env}]}}
review = {"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview",
          "request": {"uid": "u", "kind": {"group": "", "version": "v1", "kind": "Pod"},
                      "operation": "CREATE", "namespace": "gpu-share", "object": pod}}
open(sys.argv[1], "w").write(json.dumps(review, separators=(",", ":")))
PY
code=$(curl -s -o "$tmp/env.out" -w '%{http_code}' --cacert "$tmp/tls.crt" \
	--data-binary "@$tmp/env.json" "https://127.0.0.1:$port/validate")
out=$(cat "$tmp/env.out")
[ "$code" = 413 ] || fail "a review of 4.5 MB of small values: HTTP $code, want 413"
expect_out_has "the review takes more than 16 MiB to read" "says why"

# The pod's limit (deploy/webhook.yaml: 64Mi) held through all of it: 12 MiB of held
# bodies, the 413's parse up to its 16 MiB ceiling.
hwm=$(awk '/^VmHWM:/ {print int($2 / 1024)}' "/proc/$wpid/status")
if [ -z "$asan" ]; then
	[ "$hwm" -lt 64 ] || fail "the webhook's peak memory is $hwm MiB, over the pod's 64Mi"
fi
kill "$wpid" && wait "$wpid"
rc=$?
err=$(cat "$tmp/webhook.log")
expect_rc 0 "the webhook stops on SIGTERM after the attacks"

# --- the controller's --listen ---------------------------------------------------
"$py" "$TOP/tests/cli/fake_apiserver.py" "$tmp/requests.log" >"$tmp/api.port" 2>"$tmp/api.err" &
pids+=($!)
gs_wait_for 10 test -s "$tmp/api.port"
api=$(head -1 "$tmp/api.port")
[ -n "$api" ] || fail "fake apiserver did not start: $(cat "$tmp/api.err")"
cat >"$tmp/kubeconfig" <<YAML
apiVersion: v1
kind: Config
clusters:
- name: fake
  cluster: {server: "http://127.0.0.1:$api"}
users:
- name: fake
  user: {token: not-a-secret}
contexts:
- name: fake
  context: {cluster: fake, user: fake}
current-context: fake
YAML
cport=$(freeport)
"$GPUSHARE" controller --kubeconfig "$tmp/kubeconfig" --listen "127.0.0.1:$cport" 2>"$tmp/controller.log" &
cpid=$!
pids+=("$cpid")
gs_wait_for 15 gs_http_ready "http://127.0.0.1:$cport/healthz" ||
	{ err=$(cat "$tmp/controller.log"); fail "the controller did not come up"; }

# 32 connections from one address, as many as the server holds.
run_attack c-slow --url "http://127.0.0.1:$cport/healthz" --slow 32 \
	--good-src 127.0.0.2 --good "http://127.0.0.1:$cport/healthz" --warmup 1 --duration 2.5
expect_good c-slow
expect_cut c-slow 3.5
settle "$cport" ops 1

# 48 from six addresses, 8 each (the most one address may hold).
run_attack c-many --url "http://127.0.0.1:$cport/healthz" --slow 48 \
	--attack-src 127.0.0.10,127.0.0.11,127.0.0.12,127.0.0.13,127.0.0.14,127.0.0.15 \
	--good-src 127.0.0.2 --good "http://127.0.0.1:$cport/healthz" --warmup 1 --duration 2
expect_good c-many
expect_cut c-many 3.0
kill "$cpid" && wait "$cpid"
rc=$?
err=$(cat "$tmp/controller.log")
expect_rc 0 "the controller stops on SIGTERM after the attacks"
