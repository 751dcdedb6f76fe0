#!/usr/bin/env bash
# gpushare webhook behind the real apiserver: a CA and a serving certificate
# for 127.0.0.1 made with openssl, the webhook on a local port with only the
# RBAC of deploy/webhook.yaml, a ValidatingWebhookConfiguration in url form
# scoped to this test's namespaces. Then, through `kubectl apply`:
#   - the seed's two-slice pod (nvidia.com/gpu: 2 on the time-sliced node)
#     is refused with our message, carrying the kubelet's words;
#   - nvidia.com/gpu asked of a MIG-only node is refused, naming the profile;
#   - a one-slice pod passes;
#   - a non-integer quantity is the apiserver's own refusal (validation runs
#     before validating webhooks);
#   - webhook down + failurePolicy Fail: the apiserver's error names the webhook;
#   - webhook down + failurePolicy Ignore: pods go through.
# The configuration is deleted on exit, pass or fail.
. "$TOP/tests/e2e/lib.sh"

ns=$(e2e_name webhook)
cmns=$(e2e_name webhook-cm)
shared=$(e2e_name shared)
whole=$(e2e_name whole)
mig=$(e2e_name mig)
vwc=$(e2e_name webhook)
sa=$(e2e_name webhook-sa)
hook=pods.gpushare.io
dir=$(mktemp -d)
pid=

wh_cleanup() {
	local rc_=$?
	[ -n "$pid" ] && kill "$pid" 2>/dev/null && wait "$pid" 2>/dev/null
	k delete validatingwebhookconfiguration "$vwc" --ignore-not-found >/dev/null 2>&1
	k delete clusterrole,clusterrolebinding "$sa" --ignore-not-found >/dev/null 2>&1
	rm -rf "$dir"
	return "$rc_"
}
trap 'status_=$?; wh_cleanup; (exit "$status_"); _e2e_cleanup' EXIT

# --- the fleet: the seed's three kinds of node, advertised as gpushare does --
e2e_node "$shared" nvidia.com/gpu=8 -l nvidia.com/device-plugin.config=shared
e2e_node "$whole" nvidia.com/gpu=2 -l nvidia.com/device-plugin.config=default
e2e_node "$mig" nvidia.com/mig-1g.10gb=7 -l nvidia.com/mig.strategy=mixed
e2e_namespace "$ns"
e2e_namespace "$cmns"
# The seed's device-plugin ConfigMap, in this test's namespace.
sed "s/namespace: gpu-share/namespace: $cmns/" "$TOP/k8s/device-plugin-configs.yaml" | run k apply -f -
expect_rc 0 "create the device-plugin ConfigMap"

# --- RBAC as deploy/webhook.yaml grants it, for a ServiceAccount of this test --
python3 - "$TOP/deploy/webhook.yaml" "$sa" "$ns" "$cmns" >"$dir/rbac.yaml" <<'EOF'
import sys, yaml
path, sa, ns, cmns = sys.argv[1:]
out = []
for d in yaml.safe_load_all(open(path)):
    if not d or d["kind"] not in ("ServiceAccount", "ClusterRole", "ClusterRoleBinding", "Role", "RoleBinding"):
        continue
    d["metadata"]["name"] = sa
    if d["kind"] in ("Role", "RoleBinding"):
        d["metadata"]["namespace"] = cmns
    elif d["kind"] == "ServiceAccount":
        d["metadata"]["namespace"] = ns
    if "roleRef" in d:
        d["roleRef"]["name"] = sa
    for s in d.get("subjects", []):
        s["name"], s["namespace"] = sa, ns
    out.append(d)
assert len(out) == 5, [d["kind"] for d in out]
yaml.safe_dump_all(out, sys.stdout)
EOF
expect_rc 0 "RBAC from deploy/webhook.yaml"
run k apply -f "$dir/rbac.yaml"
expect_rc 0 "apply the webhook's RBAC"
token=$(k -n "$ns" create token "$sa" --duration=1h) || fail "no token for $sa"
# A kubeconfig file, so that the token is never on a command line.
umask 077
cat >"$dir/kubeconfig" <<EOF
apiVersion: v1
kind: Config
clusters: [{name: e2e, cluster: {server: "$GS_APISERVER", certificate-authority: "$GS_CA"}}]
users: [{name: sa, user: {token: "$token"}}]
contexts: [{name: sa, context: {cluster: e2e, user: sa}}]
current-context: sa
EOF
unset token

# --- a CA and a serving certificate for 127.0.0.1 ------------------------------
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 1 -subj "/CN=gpushare e2e webhook CA" \
	-keyout "$dir/ca.key" -out "$dir/ca.crt" 2>/dev/null || fail "openssl: CA"
openssl req -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -subj "/CN=127.0.0.1" \
	-keyout "$dir/tls.key" -out "$dir/tls.csr" 2>/dev/null || fail "openssl: CSR"
printf 'subjectAltName=IP:127.0.0.1\nextendedKeyUsage=serverAuth\n' >"$dir/ext"
openssl x509 -req -in "$dir/tls.csr" -CA "$dir/ca.crt" -CAkey "$dir/ca.key" -CAcreateserial \
	-days 1 -extfile "$dir/ext" -out "$dir/tls.crt" 2>/dev/null || fail "openssl: certificate"

port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
start_webhook() {
	"$GPUSHARE" webhook --kubeconfig "$dir/kubeconfig" --configmap "$cmns/device-plugin-configs" \
		--tls-cert-file "$dir/tls.crt" --tls-private-key-file "$dir/tls.key" \
		--bind-address 127.0.0.1 --port "$port" 2>>"$dir/webhook.log" &
	pid=$!
}
start_webhook
wait_for 30 "the webhook is ready" gs_http_ready "https://127.0.0.1:$port/readyz" --cacert "$dir/ca.crt"
# It reads with the ServiceAccount's rights only: no RBAC error in its log.
expect_has "$(cat "$dir/webhook.log")" "ConfigMap $cmns/device-plugin-configs read" "the ConfigMap is read"
# It sees this test's nodes (listed, then watched).
knows_nodes() {
	body=$(jq -nc --arg ns "$ns" --arg node "$mig" '{apiVersion:"admission.k8s.io/v1",kind:"AdmissionReview",
		request:{uid:"probe",kind:{group:"",version:"v1",kind:"Pod"},operation:"CREATE",namespace:$ns,
		object:{apiVersion:"v1",kind:"Pod",metadata:{name:"probe"},spec:{nodeSelector:{"e2e.gpushare/node":$node},
		containers:[{name:"c",resources:{limits:{"nvidia.com/gpu":"1"}}}]}}}}')
	curl -sf --cacert "$dir/ca.crt" --data-binary "$body" "https://127.0.0.1:$port/validate" |
		jq -e '.response.allowed == false' >/dev/null
}
wait_for 30 "the webhook lists this test's nodes" knows_nodes

# deploy/webhook.yaml's own configuration is one the apiserver accepts.
python3 - "$TOP/deploy/webhook.yaml" "$vwc" "$(base64 -w0 "$dir/ca.crt")" >"$dir/deploy-vwc.yaml" <<'EOF'
import sys, yaml
path, name, ca = sys.argv[1:]
d = [d for d in yaml.safe_load_all(open(path)) if d and d["kind"] == "ValidatingWebhookConfiguration"][0]
d["metadata"]["name"] = name
d["webhooks"][0]["clientConfig"]["caBundle"] = ca
yaml.safe_dump(d, sys.stdout)
EOF
run k create --dry-run=server -f "$dir/deploy-vwc.yaml"
expect_rc 0 "deploy/webhook.yaml's ValidatingWebhookConfiguration"

# --- register it, scoped to this test's namespace ------------------------------
k label namespace "$ns" "e2e.gpushare/webhook=$vwc" >/dev/null || fail "label $ns"
vwc_yaml() {
	cat <<-EOF
		apiVersion: admissionregistration.k8s.io/v1
		kind: ValidatingWebhookConfiguration
		metadata: {name: $vwc}
		webhooks:
		- name: $hook
		  clientConfig:
		    url: https://127.0.0.1:$port/validate
		    caBundle: $(base64 -w0 "$dir/ca.crt")
		  rules:
		  - {apiGroups: [""], apiVersions: [v1], operations: [CREATE], resources: [pods], scope: Namespaced}
		  - {apiGroups: [apps], apiVersions: [v1], operations: [CREATE, UPDATE], resources: [deployments], scope: Namespaced}
		  failurePolicy: $1
		  namespaceSelector: {matchLabels: {e2e.gpushare/webhook: $vwc}}
		  sideEffects: None
		  admissionReviewVersions: [v1]
		  timeoutSeconds: 5
	EOF
}
vwc_yaml Fail | run k apply -f -
expect_rc 0 "register the webhook"

# The seed's two-slice pod: two time-slices of one card on the shared node.
pod_yaml() { # NAME NODE QUANTITY [RESOURCE]
	cat <<-EOF
		apiVersion: v1
		kind: Pod
		metadata: {name: $1, namespace: $ns}
		spec:
		  nodeSelector: {e2e.gpushare/node: $2}
		  containers:
		  - name: work
		    image: registry.k8s.io/pause:3.10
		    resources:
		      limits: {${4:-nvidia.com/gpu}: $3}
	EOF
}
pod_yaml two-slices "$shared" 2 >"$dir/two-slices.yaml"
pod_yaml one-slice "$shared" 1 >"$dir/one-slice.yaml"
pod_yaml gpu-on-mig "$mig" 1 >"$dir/gpu-on-mig.yaml"
pod_yaml half "$whole" '"500m"' >"$dir/half.yaml"
pod_yaml two-whole "$whole" 2 >"$dir/two-whole.yaml"

# The apiserver picks up a new configuration within a second or so.
refused_by_us() {
	run k create --dry-run=server -f "$dir/two-slices.yaml"
	[ "$rc" != 0 ] && case $err in *"admission webhook \"$hook\" denied the request"*) ;; *) false ;; esac
}
wait_for 30 "the apiserver calls the webhook" refused_by_us

# 1. Refused at kubectl apply, with the kubelet's words.
run k apply -f "$dir/two-slices.yaml"
expect_rc 1 "apply the two-slice pod"
expect_has "$err" "admission webhook \"$hook\" denied the request: the pod can be scheduled to $shared, where container \"work\" asks for 2 nvidia.com/gpu, shared by time-slicing with failRequestsGreaterThanOne (config \"shared\")" "our message"
echo "kubectl apply: $err" >&2
expect_has "$err" "UnexpectedAdmissionError: Allocate failed due to rpc error: code = Unknown desc = invalid allocation request for \"nvidia.com/gpu\": invalid request: maximum request size for shared resources is 1; found 2, which is unexpected" "the kubelet's words"
run k -n "$ns" get pod two-slices
expect_rc 1 "the refused pod does not exist"

# 1b. A Deployment of such pods is refused itself, not its ReplicaSet later.
cat >"$dir/deploy.yaml" <<EOF
apiVersion: apps/v1
kind: Deployment
metadata: {name: two-slices, namespace: $ns}
spec:
  replicas: 2
  selector: {matchLabels: {app: two-slices}}
  template:
    metadata: {labels: {app: two-slices}}
    spec:
      nodeSelector: {e2e.gpushare/node: $shared}
      containers:
      - name: work
        image: registry.k8s.io/pause:3.10
        resources: {limits: {nvidia.com/gpu: 2}}
EOF
run k apply -f "$dir/deploy.yaml"
expect_rc 1 "apply a Deployment of two-slice pods"
expect_has "$err" "admission webhook \"$hook\" denied the request: the pods of Deployment two-slices (spec.template): the pod can be scheduled to $shared" "the Deployment is refused"
# With one slice it is created, and scaling it is never judged again.
sed -i 's|nvidia.com/gpu: 2|nvidia.com/gpu: 1|' "$dir/deploy.yaml"
run k apply -f "$dir/deploy.yaml"
expect_rc 0 "apply a Deployment of one-slice pods"
run k -n "$ns" scale deployment two-slices --replicas=0
expect_rc 0 "scale it"

# 2. nvidia.com/gpu asked of a MIG-only node: the profile it does advertise.
run k apply -f "$dir/gpu-on-mig.yaml"
expect_rc 1 "apply gpu-on-mig"
expect_has "$err" "does not advertise nvidia.com/gpu; node $mig: this node advertises profiles, not whole GPUs (MIG mixed strategy): nvidia.com/mig-1g.10gb=7; ask for one of those instead of nvidia.com/gpu" "names the profile"

# 3. Good pods pass: one slice; two whole GPUs on the unshared node.
run k apply -f "$dir/one-slice.yaml"
expect_rc 0 "apply one-slice"
run k apply -f "$dir/two-whole.yaml"
expect_rc 0 "apply two-whole"
jp pod one-slice "$ns" '{.metadata.name}' >/dev/null || fail "one-slice was not created"

# 3b. The fleet is watched: a node added now, and a ConfigMap changed now,
#     change the answer within a second or two.
late=$(e2e_name late)
pod_yaml late-mig "$late" 1 nvidia.com/mig-2g.20gb >"$dir/late-mig.yaml"
run k create --dry-run=server -f "$dir/late-mig.yaml"
expect_rc 1 "a profile no node advertises yet"
expect_has "$err" "advertises nvidia.com/mig-2g.20gb" "refused before the node exists"
e2e_node "$late" nvidia.com/mig-2g.20gb=3 -l nvidia.com/mig.strategy=mixed
admitted() { k create --dry-run=server -f "$1" >/dev/null 2>&1; }
wait_for 15 "the new node is seen by the webhook" admitted "$dir/late-mig.yaml"
sed "s/namespace: gpu-share/namespace: $cmns/; s/failRequestsGreaterThanOne: true/failRequestsGreaterThanOne: false/" \
	"$TOP/k8s/device-plugin-configs.yaml" | run k apply -f -
expect_rc 0 "turn failRequestsGreaterThanOne off"
wait_for 15 "the ConfigMap change is seen by the webhook" admitted "$dir/two-slices.yaml"
sed "s/namespace: gpu-share/namespace: $cmns/" "$TOP/k8s/device-plugin-configs.yaml" | run k apply -f -
expect_rc 0 "turn failRequestsGreaterThanOne on again"
wait_for 15 "the ConfigMap change back is seen" refused_by_us

# 4. A quantity that is not an integer: the apiserver's validation answers
#    before any validating webhook is called.
run k apply -f "$dir/half.yaml"
expect_rc 1 "apply half"
expect_has "$err" 'Invalid value: "500m": must be an integer' "the apiserver's own words"
case $err in *"admission webhook"*) fail "validation should come before the webhook" ;; esac

# What one review costs, as the webhook measured it.
ms=$(sed -n 's/.*CREATE Pod .*(\([0-9.]*\) ms).*/\1/p' "$dir/webhook.log" | sort -n | tail -1)
rss=$(awk '/VmRSS/ {print $2}' "/proc/$pid/status")
echo "webhook: slowest review ${ms:-?} ms, RSS ${rss:-?} kB" >&2

# 5. Webhook down, failurePolicy Fail: the apiserver's error names the webhook.
kill "$pid"
wait "$pid" 2>/dev/null
pid=
expect_has "$(tail -1 "$dir/webhook.log")" "gpushare webhook: stopping:" "the summary line"
pod_yaml down-fail "$shared" 1 | run k apply -f -
expect_rc 1 "apply with the webhook down and Fail"
echo "kubectl apply, webhook down: $err" >&2
expect_has "$err" "failed calling webhook \"$hook\"" "the apiserver names the webhook"
expect_has "$err" "Internal error occurred" "the apiserver's own words"

# 6. Webhook down, failurePolicy Ignore: pods go through, even the two-slice one.
vwc_yaml Ignore | run k apply -f -
expect_rc 0 "switch to Ignore"
ignored() { pod_yaml probe "$shared" 1 | k create --dry-run=server -f - >/dev/null 2>&1; }
wait_for 30 "the apiserver uses failurePolicy Ignore" ignored
run k apply -f "$dir/two-slices.yaml"
expect_rc 0 "apply the two-slice pod with the webhook down and Ignore"
jp pod two-slices "$ns" '{.metadata.name}' >/dev/null || fail "two-slices was not created"
