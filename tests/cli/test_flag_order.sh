# Options and arguments mix in any order on the commands that read objects
# with -f: the same flags in another order give the same output, byte for byte.
# --kubernetes-version and --feature-gates take effect whichever comes first
# and in either form (--opt value, --opt=value); a bad value is a usage error.
# replay's --design, --live and --compare and `fault mig`'s options are taken
# before and after the positionals too (the live paths without a cluster).
. "$(dirname "$0")/lib.sh"
cd "$TOP" || exit 1
export GPUSHARE_NOW=1767225600

# two ARGS... :: ARGS...: the two argument lists into the arrays a and b.
two() {
	local first=1
	a=() b=()
	for x in "$@"; do
		if [ "$x" = :: ]; then first=0; elif [ $first = 1 ]; then a+=("$x"); else b+=("$x"); fi
	done
}

same() { # NAME, then two argument lists separated by ::
	local name=$1 o1 r1
	shift
	two "$@"
	run "${a[@]}"
	o1=$out r1=$rc
	[ -n "$o1" ] || fail "$name: no output"
	run "${b[@]}"
	[ "$rc" = "$r1" ] || fail "$name: exit $r1, then $rc in the other order"
	[ "$out" = "$o1" ] || fail "$name: output differs with the flags in another order"
}

differs() { # NAME, then two argument lists separated by ::, whose outputs must differ
	local name=$1 o1
	shift
	two "$@"
	run "${a[@]}"
	o1=$out
	run "${b[@]}"
	[ "$out" != "$o1" ] || fail "$name: the same output either way"
}

same_err() { # NAME, then two argument lists separated by ::, which fail alike
	local name=$1 e1 r1
	shift
	two "$@"
	run "${a[@]}"
	e1=$err r1=$rc
	[ "$r1" != 0 ] && [ -n "$e1" ] || fail "$name: exit $r1, no error"
	run "${b[@]}"
	[ "$rc" = "$r1" ] || fail "$name: exit $r1, then $rc in the other order"
	[ "$err" = "$e1" ] || fail "$name: stderr differs with the flags in another order"
}

# refused CMD MESSAGE ARGS...: gpushare ARGS exits 2 saying "gpushare CMD: MESSAGE",
# then the usage lines.
refused() {
	local cmd=$1 msg=$2
	shift 2
	run "$@"
	expect_rc 2 "$*"
	expect_err_has "gpushare $cmd: $msg" "$*"
	expect_err_has "usage: gpushare $cmd" "$*: the usage follows"
	expect_err_has "see 'gpushare $cmd --help'" "$*: the usage follows"
}

cm=k8s/device-plugin-configs.yaml
same "plan" plan -o json -f k8s/ --configmap gpu-share/device-plugin-configs :: \
	plan --configmap gpu-share/device-plugin-configs -f k8s/ -o json
same "plan -f twice" plan -f k8s/lab-nodes.yaml -f "$cm" -f k8s/placement.yaml -o json :: \
	plan -o json -f k8s/lab-nodes.yaml -f "$cm" -f k8s/placement.yaml
same "explain pod" explain pod gpu-share/notebook -f k8s/ :: explain pod -f k8s/ gpu-share/notebook
same "explain node" explain node lab-node-1 -f k8s/ :: explain node -f k8s/ lab-node-1
same "status" status -o json -f k8s/lab-nodes.yaml -f "$cm" :: status -f k8s/lab-nodes.yaml -f "$cm" -o json
same "advertise" advertise --full --node lab-node-2 -f k8s/ --configmap gpu-share/device-plugin-configs :: \
	advertise --configmap gpu-share/device-plugin-configs -f k8s/ --node lab-node-2 --full
same "lint" lint --no-notes -f "$cm" --configmap gpu-share/device-plugin-configs :: \
	lint --configmap gpu-share/device-plugin-configs -f "$cm" --no-notes
same "dra translate" dra translate -f k8s/ --configmap gpu-share/device-plugin-configs :: \
	dra translate --configmap gpu-share/device-plugin-configs -f k8s/
same "import --check" import --check -o json -f tests/golden/import-check-real/nodes.yaml \
	-f tests/golden/import-check-real/configmap.yaml --configmap gpu-operator/device-plugin-configs :: \
	import --configmap gpu-operator/device-plugin-configs -f tests/golden/import-check-real/configmap.yaml \
	-o json -f tests/golden/import-check-real/nodes.yaml --check
same "catalog" catalog -o json "NVIDIA A100-SXM4-80GB" :: catalog "NVIDIA A100-SXM4-80GB" -o json
d=tests/golden/dra-allocate-shares
same "dra allocate" dra allocate --slices $d/slices.yaml $d/claims.yaml :: \
	dra allocate $d/claims.yaml --slices $d/slices.yaml
d=tests/golden/dra-prepare-default
same "dra prepare" dra prepare --driver-version v25.12.0 --slices $d/slices.yaml $d/claims.yaml :: \
	dra prepare $d/claims.yaml --slices $d/slices.yaml --driver-version v25.12.0

# --kubernetes-version and --feature-gates on plan, explain pod, report and
# migrate. The fleet: one node whose GPU only a DRA ResourceSlice offers,
# through a DeviceClass's extendedResourceName (DRAExtendedResource: off by
# default in v1.35.4, on in v1.36.3, locked on in v1.37.2); "trainer" asks
# for that GPU and 6 of the 8 CPUs, "notebook" for 4 CPUs. Where the gate
# is on, trainer takes the node and notebook no longer fits.
use_tmp
cat >"$tmp/fleet.yaml" <<'EOF'
apiVersion: v1
kind: Node
metadata: {name: dra-node}
status:
  capacity: {cpu: "8", memory: 32Gi, pods: "110"}
  allocatable: {cpu: "8", memory: 32Gi, pods: "110"}
---
apiVersion: resource.k8s.io/v1
kind: DeviceClass
metadata: {name: gpu.nvidia.com}
spec: {extendedResourceName: nvidia.com/gpu}
---
apiVersion: resource.k8s.io/v1
kind: ResourceSlice
metadata: {name: dra-node-gpu}
spec:
  driver: gpu.nvidia.com
  nodeName: dra-node
  pool: {name: dra-node, generation: 1, resourceSliceCount: 1}
  devices:
  - name: gpu-0
    attributes:
      type: {string: gpu}
---
apiVersion: v1
kind: Pod
metadata: {name: trainer, namespace: team-a}
spec:
  containers:
  - name: c
    image: x
    resources:
      limits: {nvidia.com/gpu: 1}
      requests: {cpu: "6"}
---
apiVersion: v1
kind: Pod
metadata: {name: notebook, namespace: team-a}
spec:
  containers:
  - name: c
    image: x
    resources:
      requests: {cpu: "4"}
EOF

# kube_target NAME CMD ARGS...: gpushare CMD ARGS with the release and the
# gates in either order and form; each flag changes the output; bad values
# of each are usage errors.
kube_target() {
	local name=$1 cmd=$2
	shift 2
	same "$name --feature-gates on" "$cmd" "$@" --kubernetes-version v1.35.4 --feature-gates DRAExtendedResource=true :: \
		"$cmd" --feature-gates=DRAExtendedResource=true "$@" --kubernetes-version=v1.35.4
	differs "$name --feature-gates turns the gate on" "$cmd" "$@" --kubernetes-version v1.35.4 :: \
		"$cmd" "$@" --kubernetes-version v1.35.4 --feature-gates DRAExtendedResource=true
	same "$name --feature-gates off" "$cmd" --feature-gates DRAExtendedResource=false "$@" --kubernetes-version v1.36.3 :: \
		"$cmd" --kubernetes-version=1.36 "$@" --feature-gates=DRAExtendedResource=false
	differs "$name --feature-gates turns the gate off" "$cmd" "$@" --kubernetes-version v1.36.3 :: \
		"$cmd" "$@" --feature-gates DRAExtendedResource=false --kubernetes-version v1.36.3
	differs "$name --kubernetes-version" "$cmd" "$@" --kubernetes-version v1.35.4 :: \
		"$cmd" "$@" --kubernetes-version=v1.36.3
	refused "$cmd" 'unknown Kubernetes version "v1.99.0" (gpushare models v1.34.4, v1.35.4, v1.36.3, v1.37.2)' \
		"$cmd" --kubernetes-version v1.99.0 "$@"
	refused "$cmd" 'unknown Kubernetes version "banana"' "$cmd" "$@" --kubernetes-version=banana
	refused "$cmd" "feature gate 'DRAExtendedResource=maybe': want NAME=true or NAME=false" \
		"$cmd" "$@" --feature-gates DRAExtendedResource=maybe
	refused "$cmd" "unknown feature gate 'NoSuchGate' (gpushare models: DRAExtendedResource, DRAConsumableCapacity)" \
		"$cmd" --feature-gates=NoSuchGate=true "$@"
	# GA and locked in v1.37.2 (the default): off is refused, the release named before or after.
	for args in "--feature-gates DRAExtendedResource=false" \
		"--feature-gates=DRAExtendedResource=false --kubernetes-version v1.37.2" \
		"--kubernetes-version=v1.37.2 --feature-gates DRAExtendedResource=false"; do
		# shellcheck disable=SC2086
		run "$cmd" "$@" $args
		expect_rc 2 "$name $args"
		expect_err_has "gpushare $cmd: cannot set feature gate DRAExtendedResource to false, feature is locked to true" "$name $args"
	done
}
f=$tmp/fleet.yaml
kube_target "plan" plan -f "$f"
kube_target "explain pod" explain pod team-a/notebook -f "$f"
kube_target "report" report --svg - -f "$f"
kube_target "migrate" migrate --to dra -f "$f"

# advertise takes the release alone: with --dra, the dynamic-MIG counter sets
# go in a slice of their own from v1.35.4.
n=tests/golden/dra-dynamic-mig-v1.34/node.yaml
same "advertise --kubernetes-version" advertise --dra --kubernetes-version v1.34.4 --alpha-gates "$n" :: \
	advertise "$n" --alpha-gates --kubernetes-version=1.34 --dra
differs "advertise --kubernetes-version" advertise --dra --alpha-gates "$n" --kubernetes-version v1.34.4 :: \
	advertise --dra --alpha-gates "$n" --kubernetes-version v1.35.4
refused advertise 'unknown Kubernetes version "v1.99.0"' advertise --dra --alpha-gates "$n" --kubernetes-version v1.99.0
refused advertise 'unknown Kubernetes version "banana"' advertise --kubernetes-version=banana --dra --alpha-gates "$n"
refused advertise "unknown option '--feature-gates'" advertise --dra --feature-gates DRAExtendedResource=true "$n"
# replay --design, --live and --compare before and after the CSV files. --live
# and --compare need a cluster: without one (nothing listens on port 1) both
# orders get as far as the first request and fail alike; their usage errors
# are the same either way. No cluster is needed for any of it.
r=tests/golden/replay-small d=docs/guide/designs
same "replay --design" replay --design $d/ts4.yaml $r/nodes.csv $r/pods.csv --seed 2 --design $d/whole.yaml :: \
	replay $r/nodes.csv --seed=2 $r/pods.csv --design=$d/ts4.yaml --design $d/whole.yaml
nocluster=--server=http://127.0.0.1:1
same_err "replay --live" replay --live $r/nodes.csv $r/pods.csv $nocluster :: \
	replay $r/nodes.csv $nocluster $r/pods.csv --live
expect_err_has "gpushare replay: create namespace gpushare-replay: The connection to the server 127.0.0.1:1 was refused" \
	"replay --live went live"
same_err "replay --live --compare" replay --compare $r/nodes.csv --live $r/pods.csv $nocluster :: \
	replay $r/nodes.csv $r/pods.csv $nocluster --live --compare
expect_err_has "create namespace gpushare-replay" "replay --live --compare went live"
refused replay "--compare needs --live" replay --compare $r/nodes.csv $r/pods.csv
refused replay "--compare needs --live" replay $r/nodes.csv $r/pods.csv --compare
refused replay "--design replays offline: not with --live" replay --live --design $d/ts4.yaml $r/nodes.csv $r/pods.csv
refused replay "--design replays offline: not with --live" replay $r/nodes.csv $r/pods.csv --design=$d/ts4.yaml --live
# --tie-seeds: the spread of N offline runs, either order; with --live
# --compare the runs go first, then the cluster; what it cannot go with.
same "replay --tie-seeds" replay --tie-seeds 4 $r/nodes.csv $r/pods.csv -o csv :: \
	replay $r/nodes.csv $r/pods.csv -o csv --tie-seeds=4
expect_out_has "arrived_pct,runs,alloc_mean,alloc_min,alloc_max,alloc_sd," "replay --tie-seeds is the spread"
same_err "replay --live --compare --tie-seeds" replay --tie-seeds 3 --compare $r/nodes.csv --live $r/pods.csv \
	$nocluster :: replay $r/nodes.csv $r/pods.csv $nocluster --live --compare --tie-seeds=3
expect_err_has "create namespace gpushare-replay" "replay --live --compare --tie-seeds went live"
refused replay "--tie-seeds with --live needs --compare" replay --tie-seeds 3 --live $r/nodes.csv $r/pods.csv
refused replay "--compare needs --live" replay $r/nodes.csv $r/pods.csv --compare --tie-seeds 3
for o in "--placements -" "--html x.html" "--svg x.svg" "-o json" "-o yaml"; do
	refused replay "--tie-seeds prints the runs' spread as a table or CSV: not with ${o%% *}" \
		replay $r/nodes.csv $r/pods.csv --tie-seeds 3 $o
done
refused replay "--tie-seeds reruns the replay of the shuffled, inflated workload with other draws among tied nodes: not with --design" \
	replay $r/nodes.csv $r/pods.csv --tie-seeds 3 --design $d/ts4.yaml
refused replay "--tie-seeds reruns the replay of the shuffled, inflated workload with other draws among tied nodes: not with --departures" \
	replay $r/nodes.csv $r/pods.csv --departures --tie-seeds 3
refused replay "option '--tie-seeds' expects a whole number from 1 to 1000, got '0'" \
	replay $r/nodes.csv $r/pods.csv --tie-seeds 0

# fault mig against tests/cli/fake_apiserver.py (a dry run: nothing written).
serve_fake_apiserver
same "fault mig" fault mig --dry-run --config all-1g.10gb lab-node-1 --stall --kubeconfig "$K" :: \
	fault mig lab-node-1 --kubeconfig="$K" --stall --config=all-1g.10gb --dry-run
same "fault mig -o json" fault mig -o json lab-node-1 --seconds 30 --dry-run --kubeconfig "$K" :: \
	fault mig --kubeconfig "$K" --dry-run lab-node-1 -o=json --seconds=30
refused fault "--stall, --fail and --no-fault exclude each other" fault mig --stall lab-node-1 --fail
refused fault "unexpected argument 'all-1g.10gb' (the layout goes in --config)" fault mig --stall lab-node-1 all-1g.10gb
exit 0
