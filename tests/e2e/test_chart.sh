#!/usr/bin/env bash
# The chart deploy/chart/gpushare against the apiserver, nothing installed:
# `helm template` | `kubectl apply --dry-run=server --validate=strict`, so
# every object goes through the apiserver's validation, defaulting, strict
# field checks and admission without being stored.
#   - the default values (the release in a namespace of this test, the
#     device-plugin ConfigMap's namespace another one): every rendered
#     object is accepted, and the apiserver names each one back;
#   - ci/options-values.yaml with a CA and certificate of this test
#     (source=values, the ConfigMap made by the chart, failurePolicy Fail,
#     node affinity merged with the fake-node rule...): accepted too;
#   - a value the apiserver refuses (failurePolicy Sometimes) is refused
#     with its message: the dry run does judge what the chart renders;
#   - source=generate keeps the serving certificate of an earlier install:
#     with a Secret already there, `helm template --dry-run=server` (helm's
#     lookup reads the cluster) renders that Secret's pair and its CA as
#     the caBundle, not a new one.
# Needs helm in the cache (make helm); without it this test says so and
# passes.
# e2e-timeout: 180
. "$TOP/tests/e2e/lib.sh"
. "$TOP/scripts/cluster/versions.sh"

cache=${GPUSHARE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/gpushare}
helm=${GS_HELM:-$cache/helm-$HELM_VERSION/helm}
if [ ! -x "$helm" ]; then
	echo "note: skipped: helm $HELM_VERSION is not built ($helm); make helm builds it"
	exit 0
fi
chart=$TOP/deploy/chart/gpushare
dir=$(mktemp -d)
chart_cleanup() {
	local rc_=$?
	rm -rf "$dir"
	return "$rc_"
}
trap 'chart_cleanup; _e2e_cleanup' EXIT
export HELM_CACHE_HOME=$dir/helm/cache HELM_CONFIG_HOME=$dir/helm/config HELM_DATA_HOME=$dir/helm/data

ns=$(e2e_name chart)
cfg=$ns-cfg
rel=$ns
e2e_namespace "$ns"
e2e_namespace "$cfg"
common=(-n "$ns" --set "devicePluginConfig.namespace=$cfg")

# dry_apply FILE: kubectl apply --dry-run=server of FILE; fills out/err/rc.
dry_apply() { run k apply --dry-run=server --validate=strict -o name -f "$1"; }
# names FILE: kind/name of each object in FILE, kubectl's -o name spelling.
names() {
	python3 -c '
import sys, yaml
for d in yaml.safe_load_all(open(sys.argv[1])):
    if d:
        g = d["apiVersion"].split("/")[0] if "/" in d["apiVersion"] else ""
        k = d["kind"].lower() + ("." + g if g else "")
        print(k + "/" + d["metadata"]["name"])
' "$1" | sort
}

# --- default values ----------------------------------------------------------
run "$helm" template "$rel" "$chart" "${common[@]}" --kube-version "$K8S_VERSION"
expect_rc 0 "helm template, default values"
printf '%s\n' "$out" >"$dir/default.yaml"
dry_apply "$dir/default.yaml"
expect_rc 0 "kubectl apply --dry-run=server of the default rendering"
want=$(names "$dir/default.yaml")
got=$(printf '%s\n' "$out" | sort)
expect_eq "$got" "$want" "the objects the apiserver accepted (dry run)"
expect_has "$want" "validatingwebhookconfiguration.admissionregistration.k8s.io/$rel-gpushare" "the rendering"
expect_eq "$(grep -c . <<<"$want")" 15 "objects of the default rendering"
echo "note: default values: $(grep -c . <<<"$want") objects accepted by the apiserver's dry run"

# --- every option ------------------------------------------------------------
(
	cd "$dir" || exit 1
	openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 1 \
		-subj "/CN=e2e CA" -keyout ca.key -out ca.crt &&
		openssl req -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes \
			-subj "/CN=$rel-gpushare-webhook.$ns.svc" -keyout tls.key -out tls.csr &&
		openssl x509 -req -in tls.csr -CA ca.crt -CAkey ca.key -CAcreateserial -days 1 -out tls.crt
) >/dev/null 2>&1 || fail "openssl could not make this test's certificates"
run "$helm" template "$rel" "$chart" "${common[@]}" --kube-version "$K8S_VERSION" \
	-f "$chart/ci/options-values.yaml" --set "devicePluginConfig.namespace=$cfg" \
	--set-file "webhook.tls.crt=$dir/tls.crt" --set-file "webhook.tls.key=$dir/tls.key" \
	--set-file "webhook.tls.ca=$dir/ca.crt"
expect_rc 0 "helm template, ci/options-values.yaml"
printf '%s\n' "$out" >"$dir/options.yaml"
dry_apply "$dir/options.yaml"
expect_rc 0 "kubectl apply --dry-run=server of the options rendering"
expect_eq "$(printf '%s\n' "$out" | sort)" "$(names "$dir/options.yaml")" "the objects accepted (options)"
expect_has "$out" "configmap/dp" "the chart's ConfigMap"

# --- what the apiserver refuses is refused -----------------------------------
run "$helm" template "$rel" "$chart" "${common[@]}" --kube-version "$K8S_VERSION" \
	--set webhook.failurePolicy=Sometimes
expect_rc 0 "helm template renders failurePolicy as given"
printf '%s\n' "$out" >"$dir/bad.yaml"
dry_apply "$dir/bad.yaml"
[ "$rc" != 0 ] || fail "the apiserver's dry run accepted failurePolicy Sometimes"
expect_has "$err" "failurePolicy" "the apiserver's refusal"

# --- generate keeps an installed certificate ---------------------------------
secret=$rel-gpushare-webhook-tls
run k -n "$ns" create secret generic "$secret" --type=kubernetes.io/tls \
	--from-file=tls.crt="$dir/tls.crt" --from-file=tls.key="$dir/tls.key" \
	--from-file=ca.crt="$dir/ca.crt"
expect_rc 0 "the Secret of an earlier install"
run "$helm" template "$rel" "$chart" "${common[@]}" --dry-run=server --kubeconfig "$KUBECONFIG"
expect_rc 0 "helm template --dry-run=server (lookup)"
printf '%s\n' "$out" >"$dir/upgrade.yaml"
run python3 - "$dir/upgrade.yaml" "$dir/ca.crt" "$dir/tls.crt" "$secret" <<'PY'
import base64, sys, yaml
docs = [d for d in yaml.safe_load_all(open(sys.argv[1])) if d]
ca, crt, name = open(sys.argv[2]).read(), open(sys.argv[3]).read(), sys.argv[4]
sec = [d for d in docs if d["kind"] == "Secret" and d["metadata"]["name"] == name]
vwc = [d for d in docs if d["kind"] == "ValidatingWebhookConfiguration"]
assert len(sec) == 1 and len(vwc) == 1, f"{len(sec)} Secrets, {len(vwc)} configurations"
got_crt = base64.b64decode(sec[0]["data"]["tls.crt"]).decode()
got_ca = base64.b64decode(vwc[0]["webhooks"][0]["clientConfig"]["caBundle"]).decode()
assert got_crt == crt, "the Secret's tls.crt is a new certificate, not the installed one"
assert got_ca == ca, "the caBundle is a new CA, not the installed one"
print("kept")
PY
expect_rc 0 "an upgrade keeps the serving certificate"
dry_apply "$dir/upgrade.yaml"
expect_rc 0 "kubectl apply --dry-run=server of the upgrade rendering"
