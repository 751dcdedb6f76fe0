#!/usr/bin/env bash
# kwok-guard STATE_DIR: keeps the fake nodes' Leases alive. kwok v0.8.0 can
# stop renewing every node Lease while it goes on running
# (docs/design/kwok-lease-stall.md); 50 s later (kube-controller-manager's
# --node-monitor-grace-period) every node is NotReady, and its pods are
# evicted 300 s after that. A kubelet never does this. So, every
# GS_KWOK_GUARD_INTERVAL seconds (5) while the apiserver answers /readyz, the
# guard lists the Leases of kube-node-lease: when kwok has renewed none of
# the Leases of existing nodes for GS_KWOK_GUARD_STALE seconds (25: kwok
# renews every 10 s, a quarter of --node-lease-duration-seconds=40; the
# stall stops every renewal at once, while a kwok that renews some is only
# late, e.g. busy creating hundreds of nodes) and the apiserver has answered
# for as long, kwok is stopped (SIGKILL: it holds
# nothing worth a clean stop), the stale Leases are deleted (a new kwok
# creates them afresh instead of waiting out another holder's 40 s) and kwok
# is started again with the command line up.sh gave it. The cluster's
# gpushare controller renews such Leases itself once 25 s passed
# (docs/guide/controller.md "Leases that stop"), so they no longer look
# stale: its metric gpushare_leases_healing above 0 for as long says the same
# of kwok, and kwok is restarted too (no Lease deleted: the controller's
# renewals leave them free for the new kwok to take). Each restart is a
# line in logs/kwok-guard.log and in STATE_DIR/kwok-guard.restarts.
#
# up.sh starts it as the component kwok-guard; GS_KWOK_GUARD=0 leaves it
# out (to watch the stall happen). A kwok stopped on purpose (component.sh
# stop kwok) is left alone: the guard heals a kwok that runs but renews
# nothing.
set -uo pipefail
[ $# = 1 ] || {
	echo "usage: $0 STATE_DIR" >&2
	exit 2
}
GS_CLUSTER_DIR=${1%/}
export GS_CLUSTER_DIR
. "$(dirname "$0")/common.sh"
load_env
interval=${GS_KWOK_GUARD_INTERVAL:-5}
stale_after=${GS_KWOK_GUARD_STALE:-25}
kubectl=("$state/bin/kubectl" --kubeconfig="$state/kubeconfig" --request-timeout=10s)

log() { printf '%s kwok-guard: %s\n' "$(date -u +%Y-%m-%dT%H:%M:%SZ)" "$*"; }

# stale_leases NOW: the Leases of existing nodes not renewed for
# $stale_after seconds, of nodes older than that (a new node's first Lease
# is kwok's to create); none while any of them held by kwok (not by the
# node's own name, as a kubelet restart's window holds it) was renewed since.
stale_leases() {
	local now=$1 nodes
	nodes=$("${kubectl[@]}" get nodes -o json | jq -c --argjson t "$((now - stale_after))" \
		'[.items[] | select((.metadata.creationTimestamp | fromdateiso8601) < $t) | .metadata.name]') || return 1
	"${kubectl[@]}" -n kube-node-lease get leases -o json |
		jq -r --argjson nodes "$nodes" --argjson t "$((now - stale_after))" '
		[.items[] | select(.metadata.name as $n | $nodes | index($n))
		 | {name: .metadata.name, kwok: (.spec.holderIdentity != .metadata.name),
		    at: (.spec.renewTime // "1970-01-01T00:00:00Z" | sub("\\.[0-9]+Z$"; "Z") | fromdateiso8601)}]
		| if ([.[] | select(.kwok) | .at] | max // 0) < $t then .[] | select(.at < $t) | .name
		  else empty end'
}

# run CMD...: in the background and waited for, so that down.sh's TERM
# stops the guard at once and with it what it runs (a component.sh start
# left waiting for the state lock would start kwok after the cluster is down).
child=
run() {
	"$@" &
	child=$!
	wait "$child"
	local rc=$?
	child=
	return $rc
}
trap '[ -n "$child" ] && kill "$child" 2>/dev/null; exit 0' TERM INT

# healing: how many node Leases the cluster's controller renews for kwok (0
# when it runs none or does not answer).
healing() {
	curl -fs --max-time 2 "http://127.0.0.1:$GS_CONTROLLER_PORT/metrics" 2>/dev/null |
		awk '$1 == "gpushare_leases_healing" { n = $2 } END { print n + 0 }'
}

log "watching kwok's node Leases every ${interval}s (stale after ${stale_after}s)"
ready_since=0
healing_since=0
while run sleep "$interval"; do
	now=$(date +%s)
	if ! comp_ready kube-apiserver; then
		ready_since=0
		continue
	fi
	[ "$ready_since" != 0 ] || ready_since=$now
	[ $((now - ready_since)) -ge "$stale_after" ] || continue
	our_pid kwok >/dev/null || continue
	stale=$(stale_leases "$now") || continue
	healed=$(healing)
	if [ "$healed" -gt 0 ]; then
		[ "$healing_since" != 0 ] || healing_since=$now
	else
		healing_since=0
	fi
	if [ -n "$stale" ]; then
		n=$(wc -l <<<"$stale")
		log "kwok renewed no Lease of $n node(s) for ${stale_after}s (e.g. $(head -1 <<<"$stale")) while the apiserver answered: restarting kwok"
	elif [ "$healing_since" != 0 ] && [ $((now - healing_since)) -ge "$interval" ]; then
		n=$healed
		log "gpushare controller renews the Leases of $n node(s) for kwok (gpushare_leases_healing $n): restarting kwok"
	else
		continue
	fi
	run "$cluster_here/component.sh" stop -s KILL kwok || log "stopping kwok failed"
	t_del=$(date +%s) nstale=0
	[ -z "$stale" ] || nstale=$(wc -l <<<"$stale")
	# Leases only of the stale nodes: a Lease of a node kwok does not manage is not ours.
	# Eight kubectl at once, 64 names each: one kubectl deletes its names one after
	# another, and with 500 the restart was not done 106 s later (make outage, guard).
	[ -z "$stale" ] || xargs -r -P 8 -n 64 "${kubectl[@]}" -n kube-node-lease delete lease \
		--ignore-not-found --wait=false <<<"$stale" >/dev/null ||
		log "deleting the stale Leases failed"
	t_start=$(date +%s)
	if run "$cluster_here/component.sh" start kwok; then
		echo "$now $n" >>"$state/kwok-guard.restarts"
		log "kwok started again ($nstale stale Lease(s) deleted in $((t_start - t_del))s, kwok healthy $(($(date +%s) - t_start))s later)"
	else
		log "kwok did not start again; trying at the next round"
	fi
	ready_since=0
	healing_since=0
done
