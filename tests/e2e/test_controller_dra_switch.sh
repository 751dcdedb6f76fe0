#!/usr/bin/env bash
# The cluster's `gpushare controller` reads ResourceSlices only for a plan that
# can change one (docs/guide/controller.md "Scale"): a node put on the DRA path gets
# its slice, taken off it loses the slice and gets the device plugin's
# resources back, and put on it again gets a slice again, all with no command
# run; a ConfigMap edit for nodes off the DRA path leaves the slices alone.
. "$TOP/tests/e2e/lib.sh"

cd "$TOP" || fail "no repository root"
e2e_device_plugin_configmap

node=$(e2e_name dra-switch)
e2e_node "$node" -l gpushare.io/path=dra
k annotate node "$node" gpushare.io/gpu-product='Tesla T4' gpushare.io/gpu-count=2 \
	gpushare.io/driver-version=570.158.01 >/dev/null || fail "annotate $node"

slices() { k get resourceslices --field-selector "spec.nodeName=$node" -o json | jq '.items | length'; }
gpus() { jp node "$node" '{.status.allocatable.nvidia\.com/gpu}'; }
has_slice() { [ "$(slices)" = 1 ]; }
no_slice_gpus() { [ "$(slices)" = 0 ] && [ "$(gpus)" = 2 ]; }

wait_for 60 "the controller publishes $node's slice" has_slice
expect_eq "$(gpus)" "" "no device-plugin resource on the DRA path"

k label node "$node" gpushare.io/path- >/dev/null || fail "take $node off the DRA path"
wait_for 60 "$node's slice deleted and nvidia.com/gpu=2 advertised" no_slice_gpus

k label node "$node" gpushare.io/path=dra >/dev/null || fail "put $node back on the DRA path"
wait_for 60 "$node's slice published again" has_slice
no_gpus() { [ -z "$(gpus)" ]; }
wait_for 60 "no device-plugin resource again" no_gpus

# A ConfigMap change re-plans every node, this one included: its slice stays.
before=$(k get resourceslices --field-selector "spec.nodeName=$node" -o jsonpath='{.items[0].metadata.resourceVersion}')
k -n gpu-share annotate configmap device-plugin-configs "e2e.gpushare/touch=$node" --overwrite >/dev/null ||
	fail "annotate the ConfigMap"
k -n gpu-share patch configmap device-plugin-configs --type=merge \
	-p "{\"data\":{\"e2e-$node\":\"version: v1\"}}" >/dev/null || fail "add a key"
sleep 2
expect_eq "$(slices)" 1 "one slice after a ConfigMap edit"
expect_eq "$(k get resourceslices --field-selector "spec.nodeName=$node" -o jsonpath='{.items[0].metadata.resourceVersion}')" \
	"$before" "the slice not rewritten by an edit that does not change it"
k -n gpu-share patch configmap device-plugin-configs --type=json \
	-p "[{\"op\":\"remove\",\"path\":\"/data/e2e-$node\"}]" >/dev/null || fail "remove the key"
k -n gpu-share annotate configmap device-plugin-configs e2e.gpushare/touch- >/dev/null || true
