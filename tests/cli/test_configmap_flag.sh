# --configmap means one thing on every command that takes it: NAMESPACE/NAME
# of the device-plugin ConfigMap. A file given to it is refused with one
# wording and exit 2 (files come with -f); with -f, NS/NAME picks the
# ConfigMap among the files.
. "$(dirname "$0")/lib.sh"
cd "$TOP" || exit 1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# The lab's ConfigMap under another namespace and name.
sed -e 's/^  namespace: gpu-share$/  namespace: other/' -e 's/^  name: device-plugin-configs$/  name: dp/' \
	k8s/device-plugin-configs.yaml >"$tmp/cm.yaml"
grep -q '^  name: dp$' "$tmp/cm.yaml" || fail "could not rename the ConfigMap"
cat >"$tmp/review.json" <<'EOF'
{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{"uid":"u1",
 "kind":{"group":"","version":"v1","kind":"Pod"},"operation":"CREATE","namespace":"gpu-share","name":"p",
 "object":{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p","namespace":"gpu-share"},
 "spec":{"nodeSelector":{"nvidia.com/device-plugin.config":"shared"},
 "containers":[{"name":"work","image":"pause","resources":{"limits":{"nvidia.com/gpu":"2"}}}]}}}}
EOF
real=tests/golden/import-check-real

# Each command, as it is run with the ConfigMap among its -f files.
refused() { # NAME WORDS ARGS...: --configmap FILE after the arguments, then right after
	# the command's WORDS words (gpushare dra translate: 2)
	local name=$1 k=$2
	shift 2
	for at in after before; do
		if [ $at = after ]; then
			run "$@" --configmap "$tmp/cm.yaml"
		else
			run "${@:1:k}" --configmap "$tmp/cm.yaml" "${@:k+1}"
		fi
		expect_rc 2 "$name: --configmap FILE ($at)"
		expect_err_has "option '--configmap' takes NAMESPACE/NAME (the ConfigMap), not a file: give '$tmp/cm.yaml' with -f" \
			"$name: the one wording ($at)"
		case "$out" in ?*) fail "$name: --configmap FILE printed a result" ;; esac
	done
}

refused advertise 1 advertise -f "$tmp/cm.yaml" -f k8s/lab-nodes.yaml --node lab-node-1
refused lint 1 lint -f "$tmp/cm.yaml"
refused "dra translate" 2 dra translate -f "$tmp/cm.yaml"
refused "import --check" 1 import --check -f "$real/nodes.yaml" -f "$tmp/cm.yaml"
refused plan 1 plan -f "$tmp/cm.yaml" -f k8s/lab-nodes.yaml -f k8s/placement.yaml
refused "explain pod" 2 explain pod -f "$tmp/cm.yaml" -f k8s/lab-nodes.yaml -f k8s/placement.yaml
refused "explain node" 2 explain node lab-node-1 -f "$tmp/cm.yaml" -f k8s/lab-nodes.yaml
refused report 1 report --html "$tmp/r.html" -f "$tmp/cm.yaml" -f k8s/lab-nodes.yaml
refused status 1 status -f "$tmp/cm.yaml" -f k8s/lab-nodes.yaml
refused webhook 1 webhook --review "$tmp/review.json" -f "$tmp/cm.yaml" -f k8s/lab-nodes.yaml
# The live-only commands refuse it before they connect to anything.
refused sync 1 sync --server https://127.0.0.1:1 --dry-run
refused controller 1 controller --server https://127.0.0.1:1

# A name ending in .yaml that is no NAMESPACE/NAME is a file too, even when absent.
run plan -f k8s/ --configmap cm.yaml
expect_rc 2 "absent cm.yaml"
expect_err_has "not a file: give 'cm.yaml' with -f" "absent cm.yaml"

# NS/NAME picks the ConfigMap among the files; a name not there is said so.
picks() { # NAME ARGS...: --configmap other/dp is used, other/nope is not found
	local name=$1
	shift
	run "$@" --configmap other/dp
	[ "$rc" != 2 ] || fail "$name: --configmap other/dp: exit 2"
	case "$err" in *"no ConfigMap other/dp"*) fail "$name: other/dp not found among the files" ;; esac
	run "$@" --configmap other/nope
	expect_err_has "no ConfigMap other/nope among the files" "$name: other/nope is not among the files"
}

picks advertise advertise -f "$tmp/cm.yaml" -f k8s/lab-nodes.yaml --node lab-node-1
run advertise -f "$tmp/cm.yaml" -f k8s/lab-nodes.yaml --node lab-node-1 --configmap other/dp
expect_out_has '"nvidia.com/gpu": "8"' "advertise: the shared config of other/dp (2 T4 x 4)"
picks lint lint -f "$tmp/cm.yaml"
run lint -f "$tmp/cm.yaml" --configmap other/dp
expect_rc 0 "lint other/dp"
expect_out_has "[config mps]" "lint: the configs of other/dp"
picks "dra translate" dra translate -f "$tmp/cm.yaml"
run dra translate -f "$tmp/cm.yaml" --configmap other/dp
expect_out_has "# device-plugin ConfigMap other/dp" "dra translate: other/dp"
picks "import --check" import --check -f "$real/nodes.yaml" -f "$tmp/cm.yaml"
run import --check -f "$real/nodes.yaml" -f "$real/configmap.yaml" --configmap gpu-operator/device-plugin-configs
expect_rc 0 "import --check: every twin matches under the real ConfigMap"
picks plan plan -f "$tmp/cm.yaml" -f k8s/lab-nodes.yaml -f k8s/placement.yaml
picks "explain node" explain node lab-node-1 -f "$tmp/cm.yaml" -f k8s/lab-nodes.yaml
run explain node lab-node-1 -f "$tmp/cm.yaml" -f k8s/lab-nodes.yaml --configmap other/dp
expect_out_has 'config: "shared"' "explain node: the config of other/dp"
picks report report --html "$tmp/r.html" -f "$tmp/cm.yaml" -f k8s/lab-nodes.yaml
picks webhook webhook --review "$tmp/review.json" -f "$tmp/cm.yaml" -f k8s/lab-nodes.yaml
run webhook --review "$tmp/review.json" -f "$tmp/cm.yaml" -f k8s/lab-nodes.yaml --configmap other/dp
expect_out_has '"allowed": false' "webhook: failRequestsGreaterThanOne of other/dp's shared config"
run status -f "$tmp/cm.yaml" -f k8s/lab-nodes.yaml --configmap other/dp
expect_rc 0 "status other/dp"
exit 0
