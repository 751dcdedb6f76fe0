# Options and arguments mix in any order on the commands that read objects
# with -f: the same flags in another order give the same output, byte for byte.
# --kubernetes-version and --feature-gates take effect whichever comes first
# and in either form (--opt value, --opt=value); a bad value is a usage error.
. "$(dirname "$0")/lib.sh"
cd "$TOP" || exit 1
export GPUSHARE_NOW=1767225600

same() { # NAME, then two argument lists separated by ::
	local name=$1 a=() b=() first=1 o1 e1 r1
	shift
	for x in "$@"; do
		if [ "$x" = :: ]; then first=0; elif [ $first = 1 ]; then a+=("$x"); else b+=("$x"); fi
	done
	run "${a[@]}"
	o1=$out r1=$rc
	[ -n "$o1" ] || fail "$name: no output"
	run "${b[@]}"
	[ "$rc" = "$r1" ] || fail "$name: exit $r1, then $rc in the other order"
	[ "$out" = "$o1" ] || fail "$name: output differs with the flags in another order"
}

differs() { # NAME, then two argument lists separated by ::, whose outputs must differ
	local name=$1 a=() b=() first=1 o1
	shift
	for x in "$@"; do
		if [ "$x" = :: ]; then first=0; elif [ $first = 1 ]; then a+=("$x"); else b+=("$x"); fi
	done
	run "${a[@]}"
	o1=$out
	run "${b[@]}"
	[ "$out" != "$o1" ] || fail "$name: the same output either way"
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
exit 0
