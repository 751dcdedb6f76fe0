# gpushare dra translate as a user types it: usage, the lab's own files, and
# that the output reads back as the objects it means (python3-yaml).
. "$(dirname "$0")/lib.sh"
cd "$TOP" || exit 1

run dra --help
expect_rc 0 "help"
expect_out_has "translate" "help names the subcommand"

run dra
expect_rc 2 "no subcommand"
expect_err_has "say which subcommand: translate, prepare" "no subcommand"

run dra bogus
expect_rc 2 "unknown subcommand"
expect_err_has "'bogus' is not a dra subcommand" "unknown subcommand"

run dra translate --help
expect_rc 0 "translate help"
expect_out_has "--driver-gates GATES" "translate help lists its options"

run dra translate
expect_rc 2 "nothing to translate"
expect_err_has "say what to translate: -f FILE|DIR|-" "nothing to translate"

run dra translate k8s/placement.yaml
expect_rc 0 "no ConfigMap among the files"
expect_err_has "no ConfigMap gpu-share/device-plugin-configs among the files: every node gets the device plugin's defaults" "no ConfigMap"

run dra translate -f k8s/device-plugin-configs.yaml --configmap gpu-share/other
expect_rc 0 "another name"
expect_err_has "(read: gpu-share/device-plugin-configs; --configmap NS/NAME names another)" "names the ConfigMaps read"

run dra translate -f k8s/device-plugin-configs.yaml -f /nonexistent.yaml
expect_rc 2 "missing manifest"
expect_err_has "the path '/nonexistent.yaml' does not exist" "missing manifest"

# The lab's directory: its ConfigMap and manifests, as kubectl apply -f k8s/ reads them.
run dra translate -f k8s/
expect_rc 0 "-f k8s/"
expect_out_has '# device-plugin config "shared"' "-f k8s/: the ConfigMap among the files"

run dra prepare tests/golden/dra-prepare-default/claims.yaml
expect_rc 2 "prepare without --slices"
expect_err_has "say which node's slices: --slices SLICES.yaml" "prepare without --slices"

run dra prepare --slices tests/golden/dra-prepare-default/slices.yaml
expect_rc 2 "prepare without claims"
expect_err_has "say which claims: CLAIM.yaml" "prepare without claims"

run dra prepare --slices tests/golden/dra-prepare-default/slices.yaml k8s/placement.yaml
expect_rc 2 "prepare on a file without claims"
expect_err_has "k8s/placement.yaml: no ResourceClaim in the file" "no claims"

run dra prepare --driver-gates MPSSupport=maybe --slices tests/golden/dra-prepare-default/slices.yaml \
	tests/golden/dra-prepare-default/claims.yaml
expect_rc 2 "bad gate value"
expect_err_has "--driver-gates: invalid value of MPSSupport=maybe" "bad gate value"

# The lab's files, in the order the lab applies them.
run dra translate -f k8s/device-plugin-configs.yaml k8s/namespaces.yaml \
	k8s/lab-nodes.yaml k8s/gpu-quota.yaml k8s/team-a-pods.yaml k8s/team-over.yaml \
	k8s/mig-job.yaml k8s/placement.yaml
expect_rc 0 "translate the lab"
printf '%s\n' "$out" | python3 -c '
import sys, yaml
docs = [d for d in yaml.safe_load_all(sys.stdin) if d is not None]
kinds = [d["kind"] for d in docs]
assert kinds.count("Pod") == 8, kinds
for d in docs:
    if d["kind"] != "Pod":
        continue
    for c in d["spec"]["containers"]:
        lim = c.get("resources", {}).get("limits", {})
        assert not any(k.startswith("nvidia.com/") for k in lim), (d["metadata"]["name"], lim)
        assert c["resources"]["claims"], d["metadata"]["name"]
    assert "nvidia.com/device-plugin.config" not in d["spec"].get("nodeSelector", {})
claims = {d["metadata"]["namespace"] + "/" + d["metadata"]["name"]: d for d in docs
          if d["kind"] == "ResourceClaim"}
team = [d for d in docs if d["kind"] == "Pod" and d["metadata"]["namespace"] == "team-a"]
assert {p["spec"]["resourceClaims"][0]["resourceClaimName"] for p in team} == {"shared-gpu-0"}
params = claims["team-a/shared-gpu-0"]["spec"]["devices"]["config"][0]["opaque"]["parameters"]
assert params == {"apiVersion": "resource.nvidia.com/v1beta1", "kind": "GpuConfig",
                  "sharing": {"strategy": "TimeSlicing"}}, params
q = [d for d in docs if d["kind"] == "ResourceQuota"][0]["spec"]["hard"]
assert q == {"gpu.nvidia.com.deviceclass.resource.k8s.io/devices": "2"}, q
tmpl = [d for d in docs if d["kind"] == "ResourceClaimTemplate" and d["metadata"]["name"] == "mig-1g10gb"][0]
ex = tmpl["spec"]["spec"]["devices"]["requests"][0]["exactly"]
assert ex["deviceClassName"] == "mig.nvidia.com"
assert ex["selectors"][0]["cel"]["expression"] == "device.attributes[\x27gpu.nvidia.com\x27].profile == \x271g.10gb\x27"
' || fail "the lab's translation does not read back as expected"
expect_out_has "# - container \"work\": the limit nvidia.com/gpu is gone" "a note per pod"
exit 0
