#!/usr/bin/env bash
# The seed's fleet, live and offline: `plan` on the seed's manifests and
# nodes predicts what the real scheduler and apiserver then do with them
# (bound where, refused by the quota with the apiserver's text), and
# `explain pod|quota` says the same thing from recorded objects as from the
# cluster. The manifests are the lab's own (k8s/), renamed into this test's
# namespaces and nodes and pinned to them with one extra nodeSelector.
# e2e-timeout: 420
. "$TOP/tests/e2e/lib.sh"

fleet=$(e2e_name seed)
gs=$(e2e_name gs)
team=$(e2e_name team)
dir=$(mktemp -d)
trap 'status_=$?; rm -rf "$dir"; (exit "$status_"); _e2e_cleanup' EXIT
e2e_namespace "$gs"
e2e_namespace "$team"

# rename FILE: the lab's manifest in this test's names; pods and nodes
# carry e2e.gpushare/fleet so no other test's node can take these pods.
rename() {
	sed -e "s/namespace: gpu-share/namespace: $gs/" -e "s/namespace: team-a/namespace: $team/" \
		-e "s/lab-node-\([0-9]\)/$fleet-\1/g" "$TOP/k8s/$1" |
		python3 -c '
import sys, yaml
fleet = sys.argv[1]
docs = [d for d in yaml.safe_load_all(sys.stdin) if d]
for d in docs:
    if d["kind"] == "Pod":
        d["spec"].setdefault("nodeSelector", {})["e2e.gpushare/fleet"] = fleet
    elif d["kind"] == "Node":
        d["metadata"]["labels"]["e2e.gpushare/fleet"] = fleet
        # sync writes these nodes from this test ConfigMap, not the cluster controller
        d["metadata"]["labels"]["gpushare.io/controller"] = "off"
yaml.safe_dump_all(docs, sys.stdout, sort_keys=False)
' "$fleet"
}
sed "s/namespace: gpu-share/namespace: $gs/" "$TOP/k8s/device-plugin-configs.yaml" >"$dir/cm.yaml"
rename lab-nodes.yaml >"$dir/nodes.yaml"
rename gpu-quota.yaml >"$dir/quota.yaml"
order="mig-job.yaml team-a-pods.yaml team-over.yaml placement.yaml"
manifests=()
for f in $order; do
	rename "$f" >"$dir/$f"
	manifests+=("$dir/$f")
done

# 1. The prediction, before anything exists.
mapfile -t target < <(plan_target)
[ "${#target[@]}" -ge 2 ] || fail "the cluster's /version"
run "$GPUSHARE" plan "${manifests[@]/#/-f}" -f "$dir/nodes.yaml" -f "$dir/cm.yaml" \
	-f "$dir/quota.yaml" --configmap "$gs/device-plugin-configs" "${target[@]}" -o json
expect_rc 1 "plan (the quota refuses one pod)"
printf '%s\n' "$out" >"$dir/plan.json"
npods=$(jq '.pods | length' "$dir/plan.json")
expect_eq "$npods" 8 "plan places the seed's 8 pods"

# 2. The same on the cluster, in the same order, each pod scheduled before the next.
for i in 0 1 2; do _e2e_nodes+=("$fleet-$i"); done
run k apply -f "$dir/cm.yaml"
expect_rc 0 "apply the ConfigMap"
run k create -f "$dir/nodes.yaml"
expect_rc 0 "create the nodes"
for i in 0 1 2; do
	run "$GPUSHARE" sync --configmap "$gs/device-plugin-configs" --node "$fleet-$i"
	expect_rc 0 "sync $fleet-$i"
	gs_wait_node_ready "$fleet-$i" 60 || fail "$fleet-$i not Ready after 60s"
done
run k create -f "$dir/quota.yaml"
expect_rc 0 "create the quota"
quota_ready() { [ -n "$(jp resourcequota gpu-quota "$team" '{.status.hard}')" ]; }
wait_for 30 "the quota's status.hard" quota_ready

scheduled() { [ -n "$(jp pod "$2" "$1" '{.status.conditions[?(@.type=="PodScheduled")].status}')" ]; }
assigned() { [ -n "$(jp pod "$2" "$1" '{.spec.nodeName}')" ]; }
said() { case "$(jp pod "$2" "$1" '{.status.conditions[?(@.type=="PodScheduled")].message}')" in *"$3"*) ;; *) return 1 ;; esac; }
agree=0
for i in $(seq 0 $((npods - 1))); do
	IFS=$'\t' read -r pns pname verdict pnode reason feasible < <(jq -r --argjson i "$i" \
		'.pods[$i] | [.namespace, .name, .verdict, (.node // "-"), .reason, (.feasible | join(","))] | @tsv' "$dir/plan.json")
	f=$(grep -l "name: $pname\$" "${manifests[@]}" | head -1)
	python3 -c '
import sys, yaml
for d in yaml.safe_load_all(open(sys.argv[1])):
    if d and d["metadata"]["name"] == sys.argv[2]:
        yaml.safe_dump(d, sys.stdout)
' "$f" "$pname" >"$dir/pod.yaml"
	run k create -f "$dir/pod.yaml"
	if [ "$verdict" = refused ]; then
		expect_rc 1 "$pname is refused at create, as planned"
		expect_has "$err" "$reason" "$pname: the apiserver's words are plan's"
		agree=$((agree + 1))
		continue
	fi
	expect_rc 0 "create $pname"
	wait_for 60 "$pname gets a PodScheduled condition" scheduled "$pns" "$pname"
	# kube-controller-manager may taint a new node not-ready for a moment after
	# it turned Ready; the scheduler tries again once the taint goes.
	case $verdict in
	bound | failed) gs_wait_for 30 assigned "$pns" "$pname" 2>/dev/null || true ;;
	pending) gs_wait_for 30 said "$pns" "$pname" "${reason%%. preemption*}" 2>/dev/null || true ;;
	esac
	node=$(jp pod "$pname" "$pns" '{.spec.nodeName}')
	case $verdict in
	bound | failed)
		# Where the default scores tie the scheduler picks at random: any
		# node plan found feasible is its answer too.
		if [ "$node" != "$pnode" ]; then
			case ",$feasible," in
			*",$node,"*) echo "note: $pname: the scheduler chose $node, plan $pnode (a tie; both feasible)" ;;
			*) fail "$pname: scheduled on '$node', plan says $pnode (feasible: $feasible)" ;;
			esac
		fi
		;;
	pending)
		expect_eq "$node" "" "$pname stays Pending, as planned"
		expect_has "$(jp pod "$pname" "$pns" '{.status.conditions[?(@.type=="PodScheduled")].message}')" \
			"${reason%%. preemption*}" "$pname: the scheduler's words are plan's"
		;;
	esac
	agree=$((agree + 1))
done
expect_eq "$agree" "$npods" "every planned verdict"

# 3. explain, live and from the recorded objects (-f), says the same: a
# recorded pod is one already there, explained as live explain does, on the
# recorded nodes as gpushare advertises them under the recorded ConfigMap:
# the same requests, and per node the same verdict, reasons, numbers and
# hints, and the same first line (where the pod is).
k get nodes -o yaml >"$dir/nodes.yaml.live"
k get pods -A -o yaml >"$dir/pods.yaml.live"
# The DRA objects too: from 1.36 a DeviceClass may serve nvidia.com/gpu
# (DRAExtendedResource), which decides a MIG node's refusal.
k get deviceclasses,resourceslices,resourceclaims -A -o json >"$dir/dra.json.live" ||
	fail "read the cluster's DRA objects"
# Only this fleet's nodes: other tests' nodes may change between the snapshot
# and the live call.
body() {
	printf '%s\n' "$1" | sed -e '1d' -e '/^  gpushare: /d' -e '/^verdict: /d' -e '/^scheduler: /,$d' |
		awk -v f="node $fleet-" '/^[^ ]/ { keep = !/^node / || index($0, f) == 1 } keep'
}
compared=0
for pod in $(jq -r '.pods[] | select(.verdict != "refused") | "\(.namespace)/\(.name)"' "$dir/plan.json"); do
	node=$(jp pod "${pod#*/}" "${pod%/*}" '{.spec.nodeName}')
	run "$GPUSHARE" explain pod "$pod" --configmap "$gs/device-plugin-configs"
	live=$out live_rc=$rc
	run "$GPUSHARE" explain pod "$pod" -f "$dir/nodes.yaml.live" -f "$dir/pods.yaml.live" \
		-f "$dir/dra.json.live" -f "$dir/cm.yaml" --configmap "$gs/device-plugin-configs" \
		"${target[@]}"
	expect_eq "$rc" "$live_rc" "explain pod $pod: exit status live = offline"
	expect_eq "$(body "$out")" "$(body "$live")" "explain pod $pod: live = offline"
	expect_eq "$(printf '%s\n' "$out" | head -1)" "$(printf '%s\n' "$live" | head -1)" \
		"explain pod $pod: where it is, live = offline"
	expect_has "$(body "$out")" "node $fleet-0: " "explain pod $pod: the fleet compared"
	if [ -n "$node" ]; then
		expect_has "$out" "scheduled on $node" "explain pod $pod offline: where it is bound"
	else
		expect_has "$out" "not scheduled" "explain pod $pod offline: Pending"
	fi
	compared=$((compared + 1))
done
k -n "$team" get resourcequota -o json >"$dir/quotas.json"
run "$GPUSHARE" explain quota "$team" --request nvidia.com/gpu=1 --name team-over
live=$out live_rc=$rc
expect_rc 1 "explain quota: one more GPU is refused"
run "$GPUSHARE" explain quota "$team" --request nvidia.com/gpu=1 --name team-over -f "$dir/quotas.json"
expect_eq "$rc" "$live_rc" "explain quota: exit status live = offline"
expect_eq "$out" "$live" "explain quota: live = offline"
echo "note: seed fleet: plan agrees with the scheduler and apiserver on $agree/$npods pods; explain live = offline on $compared pods and the quota"
