#!/usr/bin/env bash
# The chart deploy/chart/gpushare: helm lint, then helm template with the
# default values, with ci/options-values.yaml, with each TLS source, and
# with values the chart must refuse; tests/chart/check.py judges what is
# rendered. Needs helm pinned in scripts/cluster/versions.sh, built into the
# cache by `make helm`; without it this says so and passes (skipped).
set -uo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
# shellcheck disable=SC1091
. "$top/scripts/cluster/versions.sh"
cache=${GPUSHARE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/gpushare}
helm=${GS_HELM:-$cache/helm-$HELM_VERSION/helm}
if [ ! -x "$helm" ]; then
	echo "chart: SKIPPED: helm $HELM_VERSION is not built ($helm); make helm builds it"
	exit 0
fi
chart=$top/deploy/chart/gpushare
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# helm keeps its own state under HOME's .cache/.config: none of it here.
export HELM_CACHE_HOME=$work/helm/cache HELM_CONFIG_HOME=$work/helm/config HELM_DATA_HOME=$work/helm/data
kube=(--kube-version "$K8S_VERSION")

pass=0 fail=0
ok() {
	pass=$((pass + 1))
	echo "ok   chart $1"
}
bad() {
	fail=$((fail + 1))
	echo "FAIL chart $1"
	[ -z "${2:-}" ] || printf '%s\n' "$2" | tail -20 | sed 's/^/     /'
}

# The webhook's PEMs for source=values: a CA and a certificate it signed.
(
	cd "$work" || exit 1
	openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 1 \
		-subj "/CN=test CA" -keyout ca.key -out ca.crt &&
		openssl req -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes \
			-subj "/CN=lab-gpushare-webhook.gpushare-lab.svc" -keyout tls.key -out tls.csr &&
		openssl x509 -req -in tls.csr -CA ca.crt -CAkey ca.key -CAcreateserial -days 1 -out tls.crt
) >/dev/null 2>&1 || {
	bad "openssl could not make the test certificates"
	exit 1
}
pems=(--set-file "webhook.tls.crt=$work/tls.crt" --set-file "webhook.tls.key=$work/tls.key"
	--set-file "webhook.tls.ca=$work/ca.crt")

# lint NAME ARGS...: helm lint --strict passes.
lint() {
	local name=$1 out
	shift
	if out=$("$helm" lint --strict "${kube[@]}" "$chart" "$@" 2>&1); then ok "lint $name"; else bad "lint $name" "$out"; fi
}
# render NAME SCENARIO RELEASE NAMESPACE ARGS...: helm template, then check.py.
render() {
	local name=$1 scenario=$2 release=$3 ns=$4 out
	shift 4
	if ! "$helm" template "$release" "$chart" -n "$ns" "${kube[@]}" "$@" >"$work/$name.yaml" 2>"$work/err"; then
		bad "template $name" "$(cat "$work/err")"
		return
	fi
	if out=$(python3 "$top/tests/chart/check.py" "$scenario" "$work/$name.yaml" \
		"crt=$work/tls.crt" "key=$work/tls.key" "ca=$work/ca.crt" 2>&1); then
		ok "template $name"
	else
		bad "template $name" "$out"
	fi
}
# refuse NAME MESSAGE ARGS...: helm template fails and says MESSAGE.
refuse() {
	local name=$1 msg=$2
	shift 2
	if "$helm" template gpushare "$chart" -n gpushare-system "${kube[@]}" "$@" >/dev/null 2>"$work/err"; then
		bad "refuses $name" "rendered without an error"
	elif ! grep -qF -- "$msg" "$work/err"; then
		bad "refuses $name" "error lacks '$msg': $(cat "$work/err")"
	else
		ok "refuses $name"
	fi
}

lint defaults
lint options -f "$chart/ci/options-values.yaml" "${pems[@]}"
render defaults default gpushare gpushare-system
render options options lab gpushare-lab -f "$chart/ci/options-values.yaml" "${pems[@]}"
render secret secret gpushare gpushare-system --set webhook.tls.source=secret \
	--set webhook.tls.secretName=my-serving-cert --set webhook.tls.caBundle=Q0FCVU5ETEU=
render cert-manager certmanager gpushare gpushare-system --set webhook.tls.source=cert-manager
render controller-only controller-only gpushare gpushare-system --set webhook.enabled=false
refuse "an unknown TLS source" 'webhook.tls.source is "vault": want generate, values, secret or cert-manager' \
	--set webhook.tls.source=vault
refuse "source=secret without a caBundle" "webhook.tls.source=secret needs webhook.tls.caBundle" \
	--set webhook.tls.source=secret --set webhook.tls.secretName=x
refuse "source=values without a key" "webhook.tls.source=values needs webhook.tls.crt, webhook.tls.key and webhook.tls.ca" \
	--set webhook.tls.source=values --set-file "webhook.tls.crt=$work/tls.crt" --set-file "webhook.tls.ca=$work/ca.crt"
refuse "a ConfigMap without configs" "devicePluginConfig.create is true but devicePluginConfig.configs is empty" \
	--set devicePluginConfig.create=true --set devicePluginConfig.configs=null

echo "chart: $pass passed, $fail failed (helm $("$helm" version --template '{{.Version}}'))"
[ $fail = 0 ]
