# gpushare advertise as a user types it: options, input errors, the lab's files.
. "$(dirname "$0")/lib.sh"
cd "$TOP" || exit 1

run advertise --help
expect_rc 0 "help"
expect_out_has "usage: gpushare advertise" "help"

run advertise
expect_rc 2 "no NODE.yaml"

run advertise --bogus k8s/lab-nodes.yaml
expect_rc 2 "unknown option"
expect_err_has "unknown option '--bogus'" "unknown option"

run advertise --node
expect_rc 2 "option without value"
expect_err_has "needs a value" "option without value"

run advertise --list-gpus
expect_rc 0 "list"
expect_out_has "NVIDIA A100-SXM4-80GB" "catalog lists the A100 80GB"
expect_out_has "Tesla T4" "catalog lists the T4"

run advertise k8s/lab-nodes.yaml
expect_rc 2 "several nodes"
expect_err_has "holds 3 Nodes; choose one with --node NAME" "several nodes"

run advertise --node nope k8s/lab-nodes.yaml
expect_rc 2 "missing node"
expect_err_has "no Node named 'nope'" "missing node"

run advertise -f /nonexistent.yaml --node lab-node-0 k8s/lab-nodes.yaml
expect_rc 2 "missing file"
expect_err_has "the path '/nonexistent.yaml' does not exist" "missing file"

run advertise --configmap gpu-share/other --node lab-node-0 -f k8s/lab-nodes.yaml
expect_rc 0 "no such ConfigMap among the files"
expect_err_has "no ConfigMap gpu-share/other among the files: every node gets the device plugin's defaults" "no ConfigMap"

# A directory: the ConfigMap and the nodes from the lab's manifests.
run advertise -f k8s/ --node lab-node-1
expect_rc 0 "-f k8s/"
expect_out_has '"nvidia.com/gpu": "8"' "-f k8s/: the ConfigMap among the files"

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cat >"$tmp/n.yaml" <<'YAML'
apiVersion: v1
kind: Node
metadata:
  name: x
  annotations:
    gpushare.io/gpu-product: Voodoo 2
    gpushare.io/gpu-count: "1"
YAML
run advertise "$tmp/n.yaml"
expect_rc 2 "unknown model"
expect_err_has "unknown GPU model 'Voodoo 2'" "unknown model"

printf 'kind: Node\nmetadata: [\n' >"$tmp/bad.yaml"
run advertise "$tmp/bad.yaml"
expect_rc 2 "broken YAML"
expect_err_match "bad.yaml:[0-9]+:[0-9]+: " "position in the YAML error"

# The lab's own files (steps 2-3 of README.md, The lab).
run advertise -f k8s/device-plugin-configs.yaml --node lab-node-1 k8s/lab-nodes.yaml
expect_rc 0 "lab-node-1"
expect_out_has '"nvidia.com/gpu": "8"' "2 T4 x replicas 4"
run advertise -f k8s/device-plugin-configs.yaml --node lab-node-2 k8s/lab-nodes.yaml
expect_rc 0 "lab-node-2"
expect_out_has '"nvidia.com/mig-1g.10gb": "7"' "mixed 1g.10gb x 7"
case "$out" in *'"nvidia.com/gpu":'*) fail "lab-node-2 must not advertise nvidia.com/gpu" ;; esac
run advertise --full -f k8s/device-plugin-configs.yaml --node lab-node-0 k8s/lab-nodes.yaml
expect_rc 0 "full"
expect_out_has '"migStrategySource": "config"' "full shows where the strategy came from"
