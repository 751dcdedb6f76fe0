# Helpers for e2e tests (source it). run.sh gives every test:
#   KUBECONFIG       admin kubeconfig (client cert, group system:masters)
#   USER_KUBECONFIG  kubeconfig of e2e-user: a valid token, no RBAC rights
#   KUBECTL          kubectl of the pinned version
#   GPUSHARE         the gpushare binary under test
#   TOP              repository root
#   GS_APISERVER     https://127.0.0.1:<port>;  GS_CA  CA certificate file
#   GS_ADMIN_TOKEN / GS_USER_TOKEN  bearer tokens of the two users
#   K8S_VERSION      the pinned Kubernetes version (scripts/cluster/versions.sh)
#   GS_DRA_ALPHA     1 when the cluster was started with the DRA alpha gates (docs/guide/cluster.md)
#   GS_DRA_GATES     1 when those gates are on: GS_DRA_ALPHA=1, or 1.36 and later
#
# The first failed expectation exits 1. Objects made with the e2e_* makers
# are deleted when the test exits, pass or fail.
set -u
# `producer | run cmd` must fill $out/$err/$rc in this shell.
shopt -s lastpipe
# shellcheck disable=SC1091
. "$TOP/scripts/cluster/wait.sh"

# --- running things ---------------------------------------------------------
# run CMD...: fills $out, $err, $rc; never exits.
run() {
	local o e
	o=$(mktemp) e=$(mktemp)
	"$@" >"$o" 2>"$e"
	rc=$?
	out=$(cat "$o") err=$(cat "$e")
	rm -f "$o" "$e"
}
out='' err='' rc=0

# k ARGS...: kubectl as admin.  ku ARGS...: kubectl as e2e-user.
k() { "$KUBECTL" --kubeconfig="$KUBECONFIG" --request-timeout=30s "$@"; }
# plan_target: the flags that make offline plan/explain model this cluster:
# --kubernetes-version from its /version (gitVersion), and
# --feature-gates DRAExtendedResource=true where the alpha gates are on.
plan_target() {
	local v
	v=$(k get --raw /version | python3 -c 'import json, sys; print(json.load(sys.stdin)["gitVersion"])') || return 1
	printf -- '--kubernetes-version\n%s\n' "$v"
	[ "${GS_DRA_GATES:-0}" = 1 ] && printf -- '--feature-gates\nDRAExtendedResource=true,DRAConsumableCapacity=true\n'
	return 0
}
ku() { "$KUBECTL" --kubeconfig="$USER_KUBECONFIG" --request-timeout=30s "$@"; }

# api METHOD PATH [TOKEN] [BODY]: raw HTTPS call; fills $out (body) and
# $status (HTTP code). TOKEN defaults to the admin token.
api() {
	local method=$1 path=$2 token=${3:-$GS_ADMIN_TOKEN} body=${4:-} o
	o=$(mktemp)
	if [ -n "$body" ]; then
		status=$(curl -sS -o "$o" -w '%{http_code}' --cacert "$GS_CA" -X "$method" \
			-H "Authorization: Bearer $token" -H 'Content-Type: application/json' \
			--data-binary "$body" "$GS_APISERVER$path")
	else
		status=$(curl -sS -o "$o" -w '%{http_code}' --cacert "$GS_CA" -X "$method" \
			-H "Authorization: Bearer $token" "$GS_APISERVER$path")
	fi
	out=$(cat "$o")
	rm -f "$o"
}
status=''

# --- expectations -----------------------------------------------------------
fail() {
	echo "FAIL: $*" >&2
	[ -n "$out" ] && echo "  stdout: $out" >&2
	[ -n "$err" ] && echo "  stderr: $err" >&2
	# Again last: the runner shows a failed test's last lines only.
	[ -n "$out$err" ] && echo "FAIL: $*" >&2
	exit 1
}
expect_rc() { [ "$rc" = "$1" ] || fail "exit $rc, want $1 (${2:-})"; }
expect_eq() { [ "$1" = "$2" ] || fail "got '$1', want '$2' (${3:-})"; }
expect_has() { case "$1" in *"$2"*) ;; *) fail "'$1' lacks '$2' (${3:-})" ;; esac; }
expect_match() { printf '%s\n' "$1" | grep -Eq -- "$2" || fail "'$1' does not match /$2/ (${3:-})"; }
# wait_for SECONDS WHAT CMD...: like gs_wait_for, but failing the test.
wait_for() {
	local limit=$1 what=$2
	shift 2
	gs_wait_for "$limit" "$@" || fail "timed out after ${limit}s: $what"
}

# --- objects, cleaned up at exit --------------------------------------------
_e2e_nodes=() _e2e_namespaces=()
_e2e_cleanup() {
	local rc_=$? n
	for n in "${_e2e_namespaces[@]}"; do
		k delete namespace "$n" --wait=false --ignore-not-found >/dev/null 2>&1 || true
	done
	for n in "${_e2e_nodes[@]}"; do
		k delete node "$n" --wait=false --ignore-not-found >/dev/null 2>&1 || true
	done
	exit "$rc_"
}
trap _e2e_cleanup EXIT

# e2e_name PREFIX: a name no other test or run uses.
e2e_name() { printf 'e2e-%s-%s' "$1" "$(od -An -N4 -tx4 /dev/urandom | tr -d ' \n')"; }

# e2e_namespace NAME: creates it and waits for its default ServiceAccount
# (the ServiceAccount admission plugin refuses pods until it exists).
e2e_namespace() {
	_e2e_namespaces+=("$1")
	run k create namespace "$1"
	expect_rc 0 "create namespace $1"
	gs_wait_default_sa "$1" 60 || fail "no ServiceAccount $1/default after 60s"
}

# e2e_node NAME [RESOURCE=COUNT...] [-l KEY=VALUE...]: a fake node (kwok
# runs it) whose capacity and allocatable both carry cpu/memory/pods and
# the given extended resources, written through the status subresource as
# a device plugin's kubelet would. Waits until Ready without taints.
e2e_node() {
	local name=$1 res='"cpu":"32","memory":"256Gi","pods":"110"' labels='' kv
	shift
	while [ $# -gt 0 ]; do
		case $1 in
		-l)
			labels+=",\"${2%%=*}\":\"${2#*=}\""
			shift 2
			;;
		*)
			kv=$1
			res+=",\"${kv%%=*}\":\"${kv#*=}\""
			shift
			;;
		esac
	done
	_e2e_nodes+=("$name")
	run k create -f - <<-EOF
		{"apiVersion":"v1","kind":"Node","metadata":{"name":"$name",
		 "labels":{"kubernetes.io/hostname":"$name","e2e.gpushare/node":"$name"$labels}}}
	EOF
	expect_rc 0 "create node $name"
	run k patch node "$name" --subresource=status --type=merge \
		-p "{\"status\":{\"capacity\":{$res},\"allocatable\":{$res}}}"
	expect_rc 0 "patch status of node $name"
	gs_wait_node_ready "$name" 60 || fail "node $name not Ready (or still tainted) after 60s"
}

# e2e_device_plugin_configmap: gpu-share/device-plugin-configs as the lab makes
# it (k8s/device-plugin-configs.yaml) unless it is there already; the
# cluster's controller plans nodes only once it exists.
e2e_device_plugin_configmap() {
	k get namespace gpu-share >/dev/null 2>&1 || k create namespace gpu-share >/dev/null
	k -n gpu-share get configmap device-plugin-configs >/dev/null 2>&1 ||
		k create -f "$TOP/k8s/device-plugin-configs.yaml" >/dev/null 2>&1 || true
	k -n gpu-share get configmap device-plugin-configs >/dev/null 2>&1 || fail "no device-plugin ConfigMap"
}

# e2e_pod NS NAME [RESOURCE=COUNT...] [-s KEY=VALUE (nodeSelector)...]:
# prints a pod manifest (JSON) with one container whose limits are the
# given resources. Pipe it into `k create -f -`.
e2e_pod() {
	local ns=$1 name=$2 lim='' sel='' kv
	shift 2
	while [ $# -gt 0 ]; do
		case $1 in
		-s)
			sel+="${sel:+,}\"${2%%=*}\":\"${2#*=}\""
			shift 2
			;;
		*)
			kv=$1
			lim+="${lim:+,}\"${kv%%=*}\":\"${kv#*=}\""
			shift
			;;
		esac
	done
	cat <<-EOF
		{"apiVersion":"v1","kind":"Pod","metadata":{"name":"$name","namespace":"$ns"},
		 "spec":{"nodeSelector":{$sel},
		  "containers":[{"name":"main","image":"registry.invalid/e2e:1",
		   "resources":{"limits":{$lim}}}]}}
	EOF
}

# jp KIND NAME [NS] JSONPATH: one field as admin.
jp() {
	if [ $# = 4 ]; then
		k -n "$3" get "$1" "$2" -o "jsonpath=$4"
	else
		k get "$1" "$2" -o "jsonpath=$3"
	fi
}

# gs_set_replicas N [NS]: the device-plugin ConfigMap's `shared` config (in
# NS, default gpu-share) with `replicas: N`, as an admin edits it.
gs_set_replicas() {
	k -n "${2:-gpu-share}" get cm device-plugin-configs -o json |
		jq --arg r "$1" '.data.shared |= sub("replicas: [^\n]+"; "replicas: " + $r)' |
		k replace -f - >/dev/null
}

