# Waits on the local control plane, for scripts and tests (source it).
# Every function polls (never a bare sleep), uses $KUBECTL and $KUBECONFIG
# (defaults: .cluster/bin/kubectl and .cluster/kubeconfig of this checkout),
# returns 0 when the condition holds and 1 with a message on stderr after
# the timeout (seconds; each has a default).
#
#   gs_wait_for SECONDS CMD...          until CMD succeeds
#   gs_wait_node_ready NODE [SECONDS]   Ready=True and no not-ready/unreachable taint
#   gs_wait_default_sa NS [SECONDS]     ServiceAccount NS/default exists (pods need it)
#   gs_wait_quota_hard NS QUOTA [RESOURCE] [SECONDS]
#                                       status.hard is filled in (for RESOURCE if given);
#                                       before that the quota admits everything
#   gs_wait_quota_used NS QUOTA RESOURCE VALUE [SECONDS]
#                                       status.used[RESOURCE] == VALUE (usage is freed
#                                       asynchronously after pods go)
#   gs_wait_pod_phase NS POD PHASE [SECONDS]
#   gs_wait_pod_scheduled NS POD [SECONDS]   spec.nodeName set
#   gs_wait_gone KIND NAME [NS] [SECONDS]    the object no longer exists

_gs_wait_top=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
: "${KUBECONFIG:=$_gs_wait_top/.cluster/kubeconfig}"
: "${KUBECTL:=$_gs_wait_top/.cluster/bin/kubectl}"
export KUBECONFIG KUBECTL

# gs_wait_for (and gs_http_ready) come from the cluster-free polling helpers.
# shellcheck disable=SC1091
. "$_gs_wait_top/scripts/lib/poll.sh"

_gs_k() { "$KUBECTL" --kubeconfig="$KUBECONFIG" --request-timeout=10s "$@"; }

_gs_node_ready() {
	local out
	out=$(_gs_k get node "$1" -o jsonpath='{range .status.conditions[?(@.type=="Ready")]}{.status}{end} {range .spec.taints[*]}{.key}{","}{end}' 2>/dev/null) || return 1
	case $out in
	True*node.kubernetes.io/not-ready* | True*node.kubernetes.io/unreachable*) return 1 ;;
	True*) return 0 ;;
	esac
	return 1
}
gs_wait_node_ready() { gs_wait_for "${2:-60}" _gs_node_ready "$1"; }

_gs_has_sa() { _gs_k -n "$1" get serviceaccount default -o name >/dev/null 2>&1; }
gs_wait_default_sa() { gs_wait_for "${2:-60}" _gs_has_sa "$1"; }

_gs_quota_hard() {
	local v
	if [ -n "$3" ]; then
		v=$(_gs_k -n "$1" get resourcequota "$2" -o go-template="{{index .status.hard \"$3\"}}" 2>/dev/null) || return 1
		[ -n "$v" ] && [ "$v" != "<no value>" ]
	else
		v=$(_gs_k -n "$1" get resourcequota "$2" -o jsonpath='{.status.hard}' 2>/dev/null) || return 1
		[ -n "$v" ] && [ "$v" != "{}" ]
	fi
}
gs_wait_quota_hard() { gs_wait_for "${4:-60}" _gs_quota_hard "$1" "$2" "${3:-}"; }

_gs_quota_used() {
	local v
	v=$(_gs_k -n "$1" get resourcequota "$2" -o go-template="{{index .status.used \"$3\"}}" 2>/dev/null) || return 1
	[ "$v" = "$4" ]
}
gs_wait_quota_used() { gs_wait_for "${5:-60}" _gs_quota_used "$1" "$2" "$3" "$4"; }

_gs_pod_phase() {
	[ "$(_gs_k -n "$1" get pod "$2" -o jsonpath='{.status.phase}' 2>/dev/null)" = "$3" ]
}
gs_wait_pod_phase() { gs_wait_for "${4:-60}" _gs_pod_phase "$1" "$2" "$3"; }

_gs_pod_scheduled() {
	[ -n "$(_gs_k -n "$1" get pod "$2" -o jsonpath='{.spec.nodeName}' 2>/dev/null)" ]
}
gs_wait_pod_scheduled() { gs_wait_for "${3:-60}" _gs_pod_scheduled "$1" "$2"; }

_gs_gone() {
	local out
	if [ -n "$3" ]; then
		out=$(_gs_k -n "$3" get "$1" "$2" -o name 2>&1) && return 1
	else
		out=$(_gs_k get "$1" "$2" -o name 2>&1) && return 1
	fi
	case $out in *NotFound* | *"not found"*) return 0 ;; esac
	return 1
}
gs_wait_gone() { gs_wait_for "${4:-120}" _gs_gone "$1" "$2" "${3:-}"; }
