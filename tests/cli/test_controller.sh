#!/usr/bin/env bash
# `gpushare controller`'s command line, before any cluster is dialed: a bad
# --listen is a usage error said first; an unknown option too; a missing
# kubeconfig is named; deploy/controller.yaml's args outside a cluster or without
# a mounted token. (Its behaviour against a cluster: tests/e2e/test_controller.sh.)
. "$(dirname "$0")/lib.sh"

run controller --listen nope --kubeconfig /nonexistent/kubeconfig
expect_rc 2 "bad --listen"
expect_err_has "gpushare controller: option '--listen' takes HOST:PORT with an IPv4 address, got 'nope'" "says what --listen takes"
expect_err_has "see 'gpushare controller --help'" "points at the help"

run controller --listen 127.0.0.1:99999 --kubeconfig /nonexistent/kubeconfig
expect_rc 2 "port out of range"

run controller --no-such-flag
expect_rc 2 "unknown option"
expect_err_has "no-such-flag" "names the option"

# config-manager's fallback strategies: an unknown word is a usage error at once
# (config-manager itself fails only when a node reaches it), naming the words.
run controller --fallback-strategies bogus --kubeconfig /nonexistent/kubeconfig
expect_rc 2 "unknown fallback strategy"
expect_err_has "gpushare controller: unknown fallback strategy 'bogus' (one of: named, single, empty)" "names the strategies"
expect_err_has "see 'gpushare controller --help'" "points at the help"
run controller --kubeconfig /nonexistent/kubeconfig --fallback-strategies=named,singel
expect_rc 2 "a misspelt strategy after a good one"
expect_err_has "gpushare controller: unknown fallback strategy 'singel'; did you mean 'single'?" "suggests the nearest"
for ok in "named, single,empty" ""; do
	run controller --fallback-strategies="$ok" --kubeconfig /nonexistent/kubeconfig
	expect_rc 2 "--fallback-strategies='$ok' is taken, then the kubeconfig is missing"
	expect_err_has 'kubeconfig "/nonexistent/kubeconfig"' "--fallback-strategies='$ok' is taken"
done

# Lease healing: a wait shorter than a renewal interval would take a live
# kwok's next renewal for a stall; the switch takes Go's booleans.
run controller --heal-leases-after 10s --kubeconfig /nonexistent/kubeconfig
expect_rc 2 "--heal-leases-after below 11s"
expect_err_has "gpushare controller: option '--heal-leases-after' must be at least 11s: the kubelet (and kwok) renews a Lease every 10s" "says why"
run controller --heal-leases=maybe --kubeconfig /nonexistent/kubeconfig
expect_rc 2 "--heal-leases=maybe"
expect_err_has "option '--heal-leases' expects true or false, got 'maybe'" "says what it takes"
for ok in "--heal-leases=false" "--heal-leases-after=11s" "--heal-leases-after=2m"; do
	run controller "$ok" --kubeconfig /nonexistent/kubeconfig
	expect_rc 2 "$ok is taken, then the kubeconfig is missing"
	expect_err_has 'kubeconfig "/nonexistent/kubeconfig"' "$ok is taken"
done

run controller --kubeconfig /nonexistent/kubeconfig
expect_rc 2 "no kubeconfig"
expect_err_has 'kubeconfig "/nonexistent/kubeconfig": No such file or directory' "names the file"

run controller --help
expect_rc 0 "--help"
expect_out_has "--selector SELECTOR" "documents the node selector"
expect_out_has "--listen HOST:PORT" "documents the ops endpoints"
expect_out_has "--heal-leases-after DURATION" "documents the Lease healing"

# deploy/controller.yaml's own args are accepted (--listen on a free port
# here); outside a pod, with no kubeconfig, client-go's words say why not.
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
root=$(cd "$(dirname "$0")/../.." && pwd)
mapfile -t args < <(python3 - "$root/deploy/controller.yaml" <<'PY'
import sys, yaml
for d in yaml.safe_load_all(open(sys.argv[1])):
    if d and d["kind"] == "Deployment":
        for a in d["spec"]["template"]["spec"]["containers"][0]["args"]:
            print("--listen=127.0.0.1:0" if a.startswith("--listen=") else a)
PY
)
[ "${args[0]:-}" = controller ] || fail "no controller args in deploy/controller.yaml: ${args[*]}"
nocluster() { env -u KUBECONFIG HOME="$tmp" "$@"; }
o=$(mktemp) e=$(mktemp)
nocluster env -u KUBERNETES_SERVICE_HOST -u KUBERNETES_SERVICE_PORT "$GPUSHARE" "${args[@]}" >"$o" 2>"$e"
rc=$? out=$(cat "$o") err=$(cat "$e")
expect_rc 2 "deploy/controller.yaml's args outside a cluster"
expect_err_has "gpushare controller: no kubeconfig found (~/.kube/config does not exist) and unable to load in-cluster configuration, KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT must be defined; pass --kubeconfig or set KUBECONFIG" "client-go's ErrNotInCluster"
# In a pod whose token is not mounted (automountServiceAccountToken: false).
mkdir "$tmp/sa"
KUBERNETES_SERVICE_HOST=10.96.0.1 KUBERNETES_SERVICE_PORT=443 GPUSHARE_SERVICEACCOUNT_DIR=$tmp/sa \
	nocluster "$GPUSHARE" "${args[@]}" >"$o" 2>"$e"
rc=$? out=$(cat "$o") err=$(cat "$e")
expect_rc 2 "no service-account token"
expect_err_has "in-cluster config: service account token \"$tmp/sa/token\": No such file or directory" "names the token file"
printf 'eyJhbGciOiJSUzI1NiJ9.SECRET-TOKEN\n' >"$tmp/sa/token"
printf 'not a certificate\n' >"$tmp/sa/ca.crt"
KUBERNETES_SERVICE_HOST=10.96.0.1 KUBERNETES_SERVICE_PORT=443 GPUSHARE_SERVICEACCOUNT_DIR=$tmp/sa \
	nocluster "$GPUSHARE" "${args[@]}" >"$o" 2>"$e"
rc=$? out=$(cat "$o") err=$(cat "$e")
expect_rc 2 "a ca.crt that is not PEM"
expect_err_has "$tmp/sa/ca.crt" "names the CA file"
case "$out$err" in *SECRET-TOKEN*) fail "the token was printed" ;; esac
rm -f "$o" "$e"
