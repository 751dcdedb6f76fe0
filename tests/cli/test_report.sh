# gpushare report from manifests: the seed's fleet (three lab nodes, seven
# pods bound where the lab puts them, team-a's quota), names that look like
# markup, and bad input.
. "$(dirname "$0")/lib.sh"
K=$TOP/k8s
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
python3 "$TOP/tests/cli/report/seed_pods.py" "$TOP" >"$T/pods.yaml" || fail "seed pods"
seed() { run report --nodes "$K/lab-nodes.yaml" -f "$K/device-plugin-configs.yaml" --pods "$T/pods.yaml" --quota "$K/gpu-quota.yaml" "$@"; }

seed --html "$T/fleet.html" --svg "$T/fleet.svg"
expect_rc 0 "written"
expect_err_has "wrote $T/fleet.html and $T/fleet.svg: 3 nodes, 5 GPUs, 7 pods" "summary"
out=$(cat "$T/fleet.html")
[ "$(grep -o '<section class="node" data-node="[^"]*"' "$T/fleet.html" | sed 's/.*data-node=//' | tr '\n' ' ')" = '"lab-node-0" "lab-node-1" "lab-node-2" ' ] || fail "three node groups in order"
[ "$(grep -c '<tr class="pod"' "$T/fleet.html")" = 7 ] || fail "seven pod rows"
expect_out_has '<div class="card" data-card="lab-node-1/1">' "second T4"
expect_out_has 'isolation: none' "time-sliced T4s"
expect_out_has 'isolation: hardware (MIG)' "MIG A100"
expect_out_has 'whole card' "unshared A100s"
expect_out_has 'tenants share memory' "gpu-share and team-a on one T4"
expect_out_has 'title="requests.nvidia.com/gpu">requests.nvidia.com/gpu' "quota bar"
expect_out_has '<section id="summary">' "summary first"
expect_out_has '<td class="nm" title="Tesla T4">Tesla T4</td>' "headroom per pool"
expect_out_has '2 / 2 full' "quota at its limit, counted from the pods"
# the SVG alone is well-formed XML with the same picture
python3 -c 'import sys, xml.dom.minidom as d; d.parse(sys.argv[1])' "$T/fleet.svg" || fail "SVG is not well-formed XML"
grep -q '<g class="node" data-node="lab-node-2">' "$T/fleet.svg" || fail "svg: lab-node-2"
head -c 38 "$T/fleet.svg" | grep -q '^<?xml version="1.0" encoding="UTF-8"?>' || fail "svg prolog"

# standard output
seed --svg -
expect_rc 0 "svg to stdout"
expect_out_has '<svg xmlns="http://www.w3.org/2000/svg"' "svg on stdout"

# a pod named like markup, in a namespace with quotes: inert text
python3 "$TOP/tests/cli/report/seed_pods.py" "$TOP" --hostile "<script>alert('x')</script>" >"$T/evil.yaml"
run report --nodes "$K/lab-nodes.yaml" -f "$K/device-plugin-configs.yaml" --pods "$T/evil.yaml" --html - --svg "$T/evil.svg"
expect_rc 0 "hostile names render"
case "$out" in *"<script"*) fail "a <script> element reached the page" ;; esac
expect_out_has "&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt;" "escaped pod name"
expect_out_has 'data-pod="x&quot;ns&lt;b&gt;/&lt;script&gt;' "escaped attribute"
python3 -c 'import sys, xml.dom.minidom as d; d.parse(sys.argv[1])' "$T/evil.svg" || fail "hostile SVG is not well-formed XML"

# usage and input errors
run report --nodes "$K/lab-nodes.yaml" -f "$K/device-plugin-configs.yaml"
expect_rc 2 "nowhere to write"
expect_err_has "gpushare report: say where to write: --html FILE and/or --svg FILE" "names the fix"
run report --nodes "$K/lab-nodes.yaml" --configmap "$K/device-plugin-configs.yaml" --html "$T/x.html"
expect_rc 2 "--configmap FILE"
expect_err_has "option '--configmap' takes NAMESPACE/NAME (the ConfigMap), not a file" "names the object"
run report -f "$K/lab-nodes.yaml" --html "$T/x.html"
expect_rc 0 "no ConfigMap: the device plugin's defaults"
expect_err_has "gpushare report: no ConfigMap gpu-share/device-plugin-configs among the files" "says so"
# The seed directory as it is: the pods placed as plan places them, the quota found there.
run report -f "$K" --svg -
expect_rc 0 "k8s/ as a directory"
expect_err_has "3 nodes, 5 GPUs, 7 pods" "seven pods placed (team-over refused)"
expect_out_has 'team-a/gpu-quota' "quota read from the directory"
printf 'apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  containers:\n  - name: c\n    resources:\n      limits: {nvidia.com/gpu: 1x}\n' >"$T/bad.yaml"
run report --nodes "$K/lab-nodes.yaml" -f "$K/device-plugin-configs.yaml" --pods "$T/bad.yaml" --html "$T/x.html"
expect_rc 2 "bad quantity"
expect_err_match "bad.yaml:8:[0-9]+: limits nvidia.com/gpu: " "file:line:col"
printf 'kind: [\n' >"$T/broken.yaml"
run report --nodes "$T/broken.yaml" -f "$K/device-plugin-configs.yaml" --html "$T/x.html"
expect_rc 2 "broken YAML"
expect_err_match "broken.yaml:[0-9]+:[0-9]+: " "file:line:col"
seed --html "$T/no/such/dir/fleet.html"
expect_rc 2 "unwritable"
expect_err_has "cannot write '$T/no/such/dir/fleet.html': No such file or directory" "names the file"
seed --html /dev/full
expect_rc 2 "disk full"
expect_err_has "cannot write '/dev/full': No space left on device" "write error"
exit 0
