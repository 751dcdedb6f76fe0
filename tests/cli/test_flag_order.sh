# Options and arguments mix in any order on the commands that read objects
# with -f: the same flags in another order give the same output, byte for byte.
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
exit 0
