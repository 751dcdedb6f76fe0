#!/usr/bin/env bash
# kwok-guard (scripts/cluster/kwok-guard.sh) keeps the fake nodes Ready when
# kwok stops renewing node Leases. kwok's own stall (its lease queue,
# docs/design/kwok-lease-stall.md) cannot be started on demand; a kwok frozen
# with SIGSTOP renews nothing either, which is what the guard watches for:
#   1. guard on: kwok frozen; the guard restarts it within about 30 s, the
#      Leases move again and no node is tainted unreachable;
#   2. guard off (stopped): kwok frozen; 50 s later kube-controller-manager
#      marks the node Ready=Unknown and taints it unreachable, the stall a
#      user would see. A second node, one that declares its GPUs, is the
#      cluster's controller's to heal (docs/guide/controller.md "Leases that
#      stop"): it stays Ready and untainted, its Lease renewed by gpushare with
#      kwok still the holder, and a Warning Event LeaseNotRenewed says so.
#      kwok thawed: both come back, the controller hands the Lease back (kwok's
#      40 s written back); the guard started again.
# e2e-timeout: 300
. "$TOP/tests/e2e/lib.sh"

state=${GS_CLUSTER_DIR:-$TOP/.cluster}
# shellcheck disable=SC1091
. "$state/env" # GS_KWOK_GUARD, GS_CONTROLLER_HEAL_LEASES as up.sh started the cluster
comp() { "$TOP/scripts/cluster/component.sh" "$@" 2>&1; }
[ "${GS_KWOK_GUARD:-1}" != 0 ] || { echo "note: skipped, GS_KWOK_GUARD=0"; exit 0; }
kwok_pid() { cat "$state/pids/kwok.pid"; }
node=$(e2e_name guard)
e2e_node "$node"
heal=${GS_CONTROLLER_HEAL_LEASES:-1}
if [ "$heal" = 1 ]; then
	gnode=$(e2e_name guardgpu)
	e2e_node "$gnode"
	k annotate node "$gnode" gpushare.io/gpu-product="Tesla T4" gpushare.io/gpu-count=1 >/dev/null ||
		fail "declare $gnode's GPUs"
fi
lease() { k -n kube-node-lease get lease "$node" -o jsonpath='{.spec.renewTime}' 2>/dev/null; }
wait_for 30 "Lease kube-node-lease/$node" lease
restarts() { if [ -f "$state/kwok-guard.restarts" ]; then wc -l <"$state/kwok-guard.restarts"; else echo 0; fi; }
tainted() { k get node "$node" -o json | jq -e 'any(.spec.taints[]?; .key == "node.kubernetes.io/unreachable")' >/dev/null; }
ready() { k get node "$node" -o jsonpath='{.status.conditions[?(@.type=="Ready")].status}'; }
thaw() { [ -n "${frozen:-}" ] && kill -CONT "$frozen" 2>/dev/null; frozen=; }
trap 'thaw; our=$(cat "$state/pids/kwok-guard.pid" 2>/dev/null); [ -n "$our" ] && [ -d "/proc/$our" ] || comp start kwok-guard >/dev/null; _e2e_cleanup' EXIT

# --- 1. guard on ---------------------------------------------------------------
before=$(restarts) old=$(kwok_pid) t0=$(date +%s)
frozen=$old
kill -STOP "$frozen" || fail "SIGSTOP kwok"
healed() { [ "$(restarts)" != "$before" ] && [ "$(kwok_pid)" != "$old" ] && [ -n "$(lease)" ]; }
while ! healed; do
	tainted && fail "$node tainted unreachable while the guard heals kwok"
	[ $(($(date +%s) - t0)) -lt 60 ] || fail "kwok-guard did not restart the frozen kwok in 60 s"
	sleep 1
done
frozen=
renewed() { [ -n "$(lease)" ] && [ "$(date -d "$(lease)" +%s)" -ge "$t0" ]; }
wait_for 30 "$node's Lease renewed by the new kwok" renewed
echo "note: kwok frozen to Lease renewed by the restarted kwok: $(($(date +%s) - t0))s ($(tail -1 "$state/logs/kwok-guard.log"))"
expect_eq "$(ready)" True "$node Ready throughout"
tainted && fail "$node tainted unreachable"

# --- 2. guard off: the stall as a user sees it ---------------------------------
run comp stop kwok-guard
expect_rc 0 "stop kwok-guard"
frozen=$(kwok_pid) t0=$(date +%s)
kill -STOP "$frozen" || fail "SIGSTOP kwok"
not_ready() { [ "$(ready)" != True ] && tainted; }
wait_for 120 "$node NotReady and tainted unreachable without the guard" not_ready
echo "note: without kwok-guard, $node went Ready=$(ready) and tainted unreachable $(($(date +%s) - t0))s after kwok froze"
if [ "$heal" = 1 ]; then
	glease() { k -n kube-node-lease get lease "$gnode" -o json; }
	expect_eq "$(k get node "$gnode" -o jsonpath='{.status.conditions[?(@.type=="Ready")].status}')" True \
		"$gnode (GPUs declared) Ready: the controller renews its Lease"
	k get node "$gnode" -o json | jq -e 'any(.spec.taints[]?; .key == "node.kubernetes.io/unreachable")' >/dev/null &&
		fail "$gnode tainted unreachable while the controller renews its Lease"
	expect_eq "$(glease | jq -r '.spec.leaseDurationSeconds')" 1 "renewed by gpushare: 1 s, free for a new kwok"
	expect_match "$(glease | jq -r '.spec.holderIdentity')" '_' "kwok is still the holder"
	warned() {
		k get events -n default --field-selector "involvedObject.name=$gnode,reason=LeaseNotRenewed" -o json |
			jq -e '[.items[] | select(.source.component == "gpushare-controller")] | length > 0' >/dev/null
	}
	wait_for 10 "a Warning Event LeaseNotRenewed on $gnode" warned
fi
thaw
back() { [ "$(ready)" = True ] && ! tainted; }
wait_for 90 "$node Ready again once kwok runs" back
if [ "$heal" = 1 ]; then
	# kwok renews again as the same holder and keeps the 1 s it finds: its 40 s is written back.
	handed() { [ "$(glease | jq -r '.spec.leaseDurationSeconds')" = 40 ]; }
	wait_for 60 "$gnode's Lease handed back to kwok with its 40 s" handed
	echo "note: the controller kept $gnode Ready while kwok was frozen, then handed its Lease back"
fi
run comp start kwok-guard
expect_rc 0 "start kwok-guard again"
exit 0
