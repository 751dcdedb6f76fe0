#!/usr/bin/env bash
# deploy/controller.yaml's RBAC is all `gpushare controller` needs, and no
# more. Its ServiceAccount, ClusterRole, ClusterRoleBinding, Role and
# RoleBinding are applied with the rules parsed from the file as they are
# (only names and namespaces made this test's), a token is made for the
# ServiceAccount, and a second controller runs in-cluster with it: the
# service-account directory of the token, the cluster's CA and a namespace
# (GPUSHARE_SERVICEACCOUNT_DIR), KUBERNETES_SERVICE_HOST/PORT at the local
# apiserver, no kubeconfig. It manages two nodes of this test, labelled
# gpushare.io/controller=off so that the cluster's controller leaves them,
# and reads a device-plugin ConfigMap of this test. Then:
#   - it advertises the nodes, admits a one-slice pod (Running), fails a
#     two-slice pod with the kubelet's message and Event, posts a Warning
#     Event on a malformed ConfigMap, publishes a DRA node's ResourceSlice,
#     holds a pod on it whose claim the driver's prepare refuses, and deletes
#     the slice when the node leaves the DRA path: no 403 in its log;
#   - what `kubectl auth can-i --as` the ServiceAccount asks, as one batch of
#     SubjectAccessReviews: yes for every rule of the file, no for what the
#     controller never does (secrets, other ConfigMaps, deleting or updating
#     nodes and pods, reading pods...);
#   - without the nodes/status and pods/status rules, a ConfigMap edit and a
#     refusal are refused with the apiserver's own 403 messages in the log,
#     tried again every 5 s (not in a loop), counted in /metrics as 4xx; the
#     controller stays healthy and writes both once the rules are back;
#   - the token file rotated and the old token revoked: the first 401 makes
#     it read the file again, and the next write goes through;
#   - SIGTERM: exit 0, and the token never appears in its output;
#   - the file's Deployment passes the apiserver's strict validation.
# e2e-timeout: 240
. "$TOP/tests/e2e/lib.sh"

cd "$TOP" || fail "no repository root"
state=${GS_CLUSTER_DIR:-$TOP/.cluster}
ns=$(e2e_name ctlrbac)
sa=$ns
n1=$ns-t4
n2=$ns-dra
dir=$(mktemp -d)
log=$dir/controller.log
pid='' cpid=''
rbac_cleanup() {
	local rc_=$?
	[ -n "$cpid" ] && kill -CONT "$cpid" 2>/dev/null
	[ -n "$pid" ] && kill "$pid" 2>/dev/null && wait "$pid" 2>/dev/null
	k delete clusterrole,clusterrolebinding "$sa" --ignore-not-found >/dev/null 2>&1
	rm -rf "$dir"
	return "$rc_"
}
trap 'rbac_cleanup; _e2e_cleanup' EXIT

e2e_namespace "$ns"
sed "s/namespace: gpu-share/namespace: $ns/" k8s/device-plugin-configs.yaml | run k apply -f -
expect_rc 0 "this test's device-plugin ConfigMap"

# --- the RBAC of deploy/controller.yaml, rules untouched ----------------------
python3 - deploy/controller.yaml "$sa" "$ns" >"$dir/rbac.yaml" <<'EOF'
import sys, yaml
path, sa, ns = sys.argv[1:]
out = []
for d in yaml.safe_load_all(open(path)):
    if not d or d["kind"] not in ("ServiceAccount", "ClusterRole", "ClusterRoleBinding", "Role", "RoleBinding"):
        continue
    d["metadata"]["name"] = sa
    if "namespace" in d["metadata"]:
        d["metadata"]["namespace"] = ns  # the ServiceAccount's and the ConfigMap's
    if "roleRef" in d:
        d["roleRef"]["name"] = sa
    for s in d.get("subjects", []):
        s["name"], s["namespace"] = sa, ns
    out.append(d)
assert sorted(d["kind"] for d in out) == ["ClusterRole", "ClusterRoleBinding", "Role", "RoleBinding", "ServiceAccount"], out
yaml.safe_dump_all(out, sys.stdout)
EOF
expect_rc 0 "RBAC from deploy/controller.yaml"
run k apply -f "$dir/rbac.yaml"
expect_rc 0 "apply the controller's RBAC"
as_sa=system:serviceaccount:$ns:$sa
# The file's Deployment is one the apiserver takes as written (strict field
# validation, server-side dry run), in this test's namespace.
python3 - deploy/controller.yaml "$ns" "$sa" >"$dir/deployment.yaml" <<'EOF'
import sys, yaml
path, ns, sa = sys.argv[1:]
d = [d for d in yaml.safe_load_all(open(path)) if d and d["kind"] == "Deployment"][0]
d["metadata"]["namespace"] = ns
d["spec"]["template"]["spec"]["serviceAccountName"] = sa
yaml.safe_dump(d, sys.stdout)
EOF
run k create --dry-run=server --validate=strict -f "$dir/deployment.yaml"
expect_rc 0 "deploy/controller.yaml's Deployment"

# --- two nodes that only this test's controller manages -----------------------
node_yaml() { # NAME CONFIG
	cat <<-EOF
		{"apiVersion":"v1","kind":"Node","metadata":{"name":"$1",
		 "labels":{"kubernetes.io/hostname":"$1","type":"kwok","nvidia.com/device-plugin.config":"$2",
		  "gpushare.io/controller":"off","e2e.gpushare/rbac":"$ns"},
		 "annotations":{"kwok.x-k8s.io/node":"fake","node.alpha.kubernetes.io/ttl":"0",
		  "gpushare.io/gpu-product":"Tesla T4","gpushare.io/gpu-count":"2"}}}
	EOF
}
for n in "$n1" "$n2"; do
	_e2e_nodes+=("$n")
	node_yaml "$n" shared | run k create -f -
	expect_rc 0 "create node $n"
	run k patch node "$n" --subresource=status --type=merge \
		-p '{"status":{"capacity":{"cpu":"32","memory":"256Gi","pods":"110"},"allocatable":{"cpu":"32","memory":"256Gi","pods":"110"}}}'
	expect_rc 0 "status of node $n"
done
for n in "$n1" "$n2"; do
	gs_wait_node_ready "$n" 60 || fail "node $n not Ready after 60s"
done

# --- the controller, in-cluster as the ServiceAccount -------------------------
mkdir -m 700 "$dir/sa"
# Bound to a Secret, so that deleting the Secret revokes it (rotation, below).
k -n "$ns" create secret generic first-token-owner >/dev/null || fail "create first-token-owner"
k -n "$ns" create token "$sa" --duration=1h --bound-object-kind=Secret \
	--bound-object-name=first-token-owner >"$dir/sa/token" || fail "no token for $sa"
cp "$GS_CA" "$dir/sa/ca.crt"
printf '%s' "$ns" >"$dir/sa/namespace"
apiport=${GS_APISERVER##*:}
lport=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
start=$(date +%s.%N)
env -u KUBECONFIG HOME="$dir" KUBERNETES_SERVICE_HOST=127.0.0.1 KUBERNETES_SERVICE_PORT="$apiport" \
	GPUSHARE_SERVICEACCOUNT_DIR="$dir/sa" \
	"$GPUSHARE" controller --configmap "$ns/device-plugin-configs" \
	-l "gpushare.io/controller=off,e2e.gpushare/rbac=$ns" --listen "127.0.0.1:$lport" >"$log" 2>&1 &
pid=$!
wait_for 20 "the ServiceAccount's controller is ready" gs_http_ready "http://127.0.0.1:$lport/readyz"
expect_eq "$(head -1 "$log")" "gpushare controller: cluster https://127.0.0.1:$apiport (in-cluster)" \
	"in-cluster configuration, said once"

both() { echo "$(jp node "$1" '{.status.capacity.nvidia\.com/gpu}')/$(jp node "$1" '{.status.allocatable.nvidia\.com/gpu}')"; }
is() { test "$(both "$1")" = "$2"; }
wait_for 20 "$n1 advertised: 2 T4 x 4 replicas" is "$n1" 8/8
echo "note: in-cluster controller started to $n1 advertised: $(awk -v a="$start" -v b="$(date +%s.%N)" 'BEGIN { printf "%.2f", b - a }')s"
expect_eq "$(jp node "$n1" '{.metadata.labels.nvidia\.com/gpu\.sharing-strategy}')" time-slicing "GFD's label"

# --- DRA: the second node's ResourceSlice published ---------------------------
slices() { k get resourceslices --field-selector "spec.nodeName=$n2" -o name 2>/dev/null | grep -c .; }
has_slices() { test "$(slices)" = "$1"; }
k label node "$n2" gpushare.io/path=dra >/dev/null || fail "put $n2 on the DRA path"
wait_for 20 "a ResourceSlice for $n2" has_slices 1
expect_eq "$(k get deviceclass gpu.nvidia.com -o name)" deviceclass.resource.k8s.io/gpu.nvidia.com "the driver's DeviceClass"

# --- admission (the cluster's controller paused: it admits pods on nodes it does not manage)
cpid=$(cat "$state/pids/controller.pid")
kill -STOP "$cpid" || fail "pause the cluster's controller"
pod() { # NAME NODE COUNT
	cat <<-EOF
		{"apiVersion":"v1","kind":"Pod","metadata":{"name":"$1","namespace":"$ns"},
		 "spec":{"nodeName":"$2","containers":[{"name":"main","image":"registry.k8s.io/pause:3.10",
		  "resources":{"limits":{"nvidia.com/gpu":"$3"}}}]}}
	EOF
}
pod one-slice "$n1" 1 | run k create -f -
expect_rc 0 "create one-slice"
pod two-slices "$n1" 2 | run k create -f -
expect_rc 0 "create two-slices"
# A pod bound to the DRA node with a claim it is not reserved for: the
# driver's prepare, as the kubelet runs it, holds it (claims and slices read).
run k apply -f - <<EOF
apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata: {name: one-gpu, namespace: $ns}
spec:
  devices:
    requests:
    - name: gpu
      exactly: {deviceClassName: gpu.nvidia.com}
---
apiVersion: v1
kind: Pod
metadata: {name: claimed, namespace: $ns}
spec:
  nodeName: $n2
  resourceClaims: [{name: gpu, resourceClaimName: one-gpu}]
  containers:
  - name: main
    image: registry.k8s.io/pause:3.10
    resources: {claims: [{name: gpu}]}
EOF
expect_rc 0 "a claim and a pod using it on $n2"
gs_wait_pod_phase "$ns" one-slice Running 30 || fail "one-slice not Running"
expect_eq "$(jp pod one-slice "$ns" '{.metadata.annotations.gpushare\.io/admitted}')" true "admitted by this controller"
expect_match "$(jp pod one-slice "$ns" '{.metadata.annotations.gpushare\.io/devices}')" \
	'^\{"nvidia.com/gpu":\["GPU-[0-9a-f-]+::[0-3]"\]\}$' "its slice recorded"
gs_wait_pod_phase "$ns" two-slices Failed 30 || fail "two-slices not Failed"
msg='Allocate failed due to rpc error: code = Unknown desc = invalid allocation request for "nvidia.com/gpu": invalid request: maximum request size for shared resources is 1; found 2, which is unexpected'
expect_eq "$(jp pod two-slices "$ns" '{.status.reason}')" UnexpectedAdmissionError "reason"
expect_eq "$(jp pod two-slices "$ns" '{.status.message}')" "Pod was rejected: $msg" "the kubelet's message"
held() {
	k -n "$ns" get events --field-selector "involvedObject.name=claimed,reason=FailedPrepareDynamicResources" -o json |
		jq -e '[.items[] | select(.message | contains("is not allowed to use ResourceClaim one-gpu"))] | length > 0' >/dev/null
}
wait_for 20 "claimed held by the DRA prepare" held
expect_eq "$(jp pod claimed "$ns" '{.status.phase}/{.metadata.annotations.gpushare\.io/admitted}')" "Pending/" "held, not admitted"
k -n "$ns" delete pod claimed --grace-period=0 --force >/dev/null 2>&1
kill -CONT "$cpid"
cpid=''
pod_event() {
	k -n "$ns" get events --field-selector "involvedObject.name=two-slices,type=Warning" -o json |
		jq -e --arg m "$msg" '[.items[] | select(.message == $m and .source.component == "kubelet")] | length > 0' >/dev/null
}
wait_for 10 "the kubelet's Warning Event on two-slices" pod_event

# --- a malformed ConfigMap: a Warning Event on the node, numbers kept ---------
cm_json() { k -n "$ns" get cm device-plugin-configs -o json; }
cm_json | jq '.data.shared |= sub("replicas: [^\n]+"; "replicas: [oops")' | k replace -f - >/dev/null ||
	fail "apply the malformed ConfigMap"
warned() {
	k get events -n default --field-selector "involvedObject.name=$n1,reason=FailedDevicePluginConfig,type=Warning" \
		-o json | jq -e '[.items[] | select(.source.component == "gpushare-controller")] | length > 0' >/dev/null
}
wait_for 10 "a Warning Event on $n1 about the config" warned
expect_eq "$(both "$n1")" 8/8 "the last good advertisement is kept"

# --- DRA: off the DRA path, the node's ResourceSlice is deleted ----------------
gs_set_replicas 4 "$ns" || fail "fix the ConfigMap"
k label node "$n2" gpushare.io/path- >/dev/null || fail "take $n2 off the DRA path"
wait_for 20 "$n2's ResourceSlice deleted" has_slices 0

# Everything above with the file's rules only (a 403 is "... is forbidden: User ...").
if grep -qi 'forbidden' "$log"; then
	fail "the controller was refused something: $(grep -i 'forbidden' "$log" | head -3)"
fi

# --- what the ServiceAccount may and may not do ------------------------------
# What `kubectl auth can-i --as=SA` asks, for all of them in one kubectl run: a
# SubjectAccessReview per question, as the ServiceAccount's token authenticates
# (its user and groups). Yes for every rule of the file as applied; no for 24
# things the controller never does.
python3 - "$dir/rbac.yaml" "$ns" "$sa" >"$dir/sar.json" 2>"$dir/sar.count" <<'EOF'
import json, sys, yaml
path, ns, sa = sys.argv[1:]
asks, wants = [], []
def ask(want, verb, resource, group="", sub="", namespace="", name=""):
    wants.append(want)
    asks.append({"apiVersion": "authorization.k8s.io/v1", "kind": "SubjectAccessReview",
                 "spec": {"user": "system:serviceaccount:%s:%s" % (ns, sa),
                          "groups": ["system:serviceaccounts", "system:serviceaccounts:" + ns, "system:authenticated"],
                          "resourceAttributes": {"verb": verb, "group": group, "resource": resource,
                                                 "subresource": sub, "namespace": namespace, "name": name}}})
for d in yaml.safe_load_all(open(path)):
    if d["kind"] not in ("ClusterRole", "Role"):
        continue
    for r in d["rules"]:
        for g in r["apiGroups"]:
            for res in r["resources"]:
                kind, _, sub = res.partition("/")
                for v in r["verbs"]:
                    for name in r.get("resourceNames", [""]):
                        ask("yes", v, kind, g, sub, d["metadata"].get("namespace", ""), name)
granted = len(asks)
for verb, res, g, sub, namespace, name in [
        ("get", "secrets", "", "", "", ""), ("list", "secrets", "", "", ns, ""),
        ("list", "configmaps", "", "", ns, ""), ("get", "configmaps", "", "", ns, "other"),
        ("list", "configmaps", "", "", "kube-system", ""), ("delete", "nodes", "", "", "", "n"),
        ("patch", "nodes", "", "", "", "n"), ("update", "nodes", "", "status", "", "n"),
        ("create", "nodes", "", "", "", ""), ("get", "pods", "", "", ns, "p"),
        ("create", "pods", "", "", ns, ""), ("delete", "pods", "", "", ns, "p"),
        ("update", "pods", "", "", ns, "p"), ("list", "events", "", "", "default", ""),
        ("patch", "events", "", "", "default", "e"), ("update", "deviceclasses", "resource.k8s.io", "", "", "other.example.com"),
        ("delete", "deviceclasses", "resource.k8s.io", "", "", "gpu.nvidia.com"),
        ("create", "resourceclaims", "resource.k8s.io", "", ns, ""),
        ("get", "resourceslices", "resource.k8s.io", "", "", "s"),
        ("create", "serviceaccounts", "", "token", ns, sa),
        ("update", "leases", "coordination.k8s.io", "", "kube-node-lease", "n"),
        ("delete", "leases", "coordination.k8s.io", "", "kube-node-lease", "n"),
        ("escalate", "clusterroles", "rbac.authorization.k8s.io", "", "", ""),
        ("impersonate", "users", "", "", "", "")]:
    ask("no", verb, res, g, sub, namespace, name)
json.dump({"apiVersion": "v1", "kind": "List", "items": asks}, sys.stdout)
print(granted, len(asks) - granted, file=sys.stderr)
print("\n".join(wants), file=sys.stderr)
EOF
expect_rc 0 "the questions from deploy/controller.yaml"
read -r ngranted ndenied < <(head -1 "$dir/sar.count")
[ "$ngranted" -ge 15 ] || fail "only $ngranted permissions parsed from deploy/controller.yaml"
run k create -f "$dir/sar.json" -o json
expect_rc 0 "the SubjectAccessReviews"
# kubectl answers in the order asked.
wrong=$(jq -r '(.items[]? // .) | "\(if .status.allowed then "yes" else "no" end) \(.spec.resourceAttributes
	| "\(.verb) \(.resource)/\(.subresource // "") \(.group // "") ns=\(.namespace // "") name=\(.name // "")")"' <<<"$out" |
	paste -d' ' <(tail -n +2 "$dir/sar.count") - | awk '$1 != $2')
n=$(jq -s '[.[] | (.items[]? // .)] | length' <<<"$out")
out=''
[ -z "$wrong" ] || fail "answers other than the file's (want, got, question): $wrong"
expect_eq "$n" "$((ngranted + ndenied))" "one answer per question"
echo "note: the ServiceAccount may do the $ngranted things of deploy/controller.yaml and none of $ndenied others"

# --- two rules taken away: the apiserver's 403, said, survived, healed --------
# Without nodes/status a ConfigMap edit cannot be written; without pods/status
# a refusal cannot. Each failure is logged with the apiserver's message and
# tried again 5 s later, not in a loop; with the rules back both are written.
cpid=$(cat "$state/pids/controller.pid")
kill -STOP "$cpid" || fail "pause the cluster's controller"
k get clusterrole "$sa" -o json |
	jq '.rules |= map(select(.resources != ["nodes/status"] and .resources != ["pods/status"]))' |
	k replace -f - >/dev/null || fail "drop the nodes/status and pods/status rules"
gs_set_replicas 3 "$ns" || fail "set replicas 3"
pod late-refusal "$n1" 2 | run k create -f -
expect_rc 0 "create late-refusal"
node_refused() { grep -q "node $n1: writing the advertisement failed: nodes \"$n1\" is forbidden: User \"$as_sa\" cannot patch resource \"nodes/status\" in API group \"\" at the cluster scope" "$log"; }
pod_refused() { grep -q "pod $ns/late-refusal: writing the admission failed: pods \"late-refusal\" is forbidden: User \"$as_sa\" cannot patch resource \"pods/status\" in API group \"\" in the namespace \"$ns\"; again in 5s" "$log"; }
wait_for 15 "the apiserver's 403 for nodes/status in the log" node_refused
wait_for 15 "the apiserver's 403 for pods/status in the log" pod_refused
sleep 3
run curl -fsS "http://127.0.0.1:$lport/healthz"
expect_eq "$out" ok "still healthy after the 403s"
run curl -fsS "http://127.0.0.1:$lport/metrics"
e4xx=$(awk '$1 == "gpushare_api_errors_total{code=\"4xx\"}" { print $2 }' <<<"$out")
[ "${e4xx:-0}" -ge 2 ] || fail "the 403s not counted in /metrics (4xx: ${e4xx:-none})"
kill -0 "$pid" || fail "the controller died"
expect_eq "$(both "$n1")" 8/8 "nothing written without the rule"
expect_eq "$(jp pod late-refusal "$ns" '{.status.phase}')" Pending "late-refusal not refused without the rule"
# The attempts' log times (2026-12-03T04:04:38.848Z ...): at least 5 s apart.
gaps=$(grep "pod $ns/late-refusal: writing the admission failed" "$log" |
	awk '{ split(substr($1, 12, 12), t, ":"); s = t[1] * 3600 + t[2] * 60 + t[3]
		if (NR > 1) printf "%.1f ", s - prev; prev = s }')
for g in $gaps; do
	awk -v g="$g" 'BEGIN { exit !(g >= 4.5) }' || fail "the refused write was tried again after ${g}s (gaps: $gaps)"
done
run k apply -f "$dir/rbac.yaml"
expect_rc 0 "the rules back"
wait_for 20 "$n1 written once the rule is back" is "$n1" 6/6
gs_wait_pod_phase "$ns" late-refusal Failed 20 || fail "late-refusal not Failed once the rule is back"
kill -CONT "$cpid"
cpid=''

# --- the token rotated, the old one revoked: taken at the first 401 -----------
# The kubelet swaps a projected token's file; the controller looks at it every
# minute, and at once after a 401 (client-go's tokenSourceTransport), so a
# revoked token costs one refused write, not a minute.
k -n "$ns" create token "$sa" --duration=1h >"$dir/sa/..new" || fail "a second token"
old_token=$(cat "$dir/sa/token")
mv "$dir/sa/..new" "$dir/sa/token"
k -n "$ns" delete secret first-token-owner >/dev/null || fail "revoke the first token"
revoked() { api GET /version "$old_token"; test "$status" = 401; }
wait_for 20 "the first token refused (the apiserver caches a valid token for 10 s)" revoked
out='' old_token=''
t0=$(date +%s.%N)
gs_set_replicas 2 "$ns" || fail "set replicas 2"
wait_for 15 "$n1 written with the new token" is "$n1" 4/4
echo "note: revoked token to the next write with the rotated one: $(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.2f", b - a }')s"
# Both nodes are re-advertised at once: whichever write goes first is refused.
expect_match "$(cat "$log")" "node ($n1|$n2): writing the advertisement failed: Unauthorized" "the refused write"

# --- SIGTERM ------------------------------------------------------------------
kill -TERM "$pid"
wait "$pid"
rc=$?
pid=''
expect_rc 0 "the controller exits 0 on SIGTERM"
if grep -qF "$(cat "$dir/sa/token")" "$log" || grep -qF "eyJ" "$log"; then
	fail "the token appears in the controller's output"
fi
