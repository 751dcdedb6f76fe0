# gpushare import as a user types it: a snapshot of real nodes in, kwok twins
# out; the check against the real nodes; fleets on paper; bad usage and input.
. "$(dirname "$0")/lib.sh"
cd "$TOP" || exit 1
real=tests/golden/import-check-real/nodes.yaml
cm=tests/golden/import-check-real/configmap.yaml
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

run import --help
expect_rc 0 "help"
expect_out_has "usage: gpushare import -f NODES.yaml" "help"
expect_out_has "--pool NAME=COUNTxGPUSxMODEL" "help explains --pool"
expect_out_has "--anonymise" "help names --anonymise"

run --help
expect_out_has "import" "the command list names import"

run import
expect_rc 2 "nothing to import"
expect_err_has "nothing to import: give -f NODES.yaml or --pool SPEC" "nothing to import"

run import "$real"
expect_rc 2 "a positional"
expect_err_has "name the nodes' file with -f" "a positional"

run import --check --pool t=1x1xTesla-T4
expect_rc 2 "--check of a pool"
expect_err_has "--check needs the real nodes" "--check of a pool"

run import --check -f "$real" --anonymise
expect_rc 2 "--check with --anonymise"
expect_err_has "drop --anonymise" "--check with --anonymise"

run import -f "$real" --configmap gpu-operator/device-plugin-configs
expect_rc 2 "--configmap without --check"
expect_err_has "--configmap is for --check" "--configmap without --check"

run import -f "$real" -o table
expect_rc 2 "-o table without --check"

run import -f "$real" -o xml
expect_rc 2 "-o xml"
expect_err_has "gpushare import: unknown output format 'xml' (one of: table, json, yaml)" "-o xml"

run import -f /nonexistent.yaml
expect_rc 2 "missing file"
expect_err_has "/nonexistent.yaml" "missing file"

# Standard input, read once.
out=$("$GPUSHARE" import -f - <"$real" | md5sum) && want=$("$GPUSHARE" import -f "$real" | md5sum)
[ "$out" = "$want" ] || fail "-f - and -f FILE differ"
run import -f - -f -
expect_rc 2 "stdin twice"
expect_err_has "standard input cannot be read twice" "stdin twice"

# -o json is a List of the same twins.
run import -f "$real" -o json
expect_rc 0 "json"
echo "$out" | python3 -c '
import json, sys
d = json.load(sys.stdin)
assert d["kind"] == "List" and len(d["items"]) == 4, d.get("kind")
t = d["items"][1]
a = t["metadata"]["annotations"]
assert a["gpushare.io/gpu-product"] == "Tesla T4" and a["gpushare.io/gpu-count"] == "4", a
assert t["spec"]["unschedulable"] is True
' || fail "json List"

# Both spellings anonymise.
run import -f "$real" --anonymize
expect_rc 0 "--anonymize"
expect_out_has "name: gpu-node-0001" "--anonymize renames"
case "$out" in *ec2.internal*) fail "a real name is left" ;; esac

# The twins are nodes gpushare reads: advertise, and the check through them.
"$GPUSHARE" import -f "$real" >"$tmp/twins.yaml" || fail "import"
run advertise -f "$cm" --configmap gpu-operator/device-plugin-configs --node gke-ml-a3-pool-7f3c2b1a-x9qz --full "$tmp/twins.yaml"
expect_rc 0 "advertise a twin"
expect_out_has '"nvidia.com/gpu.product": "NVIDIA-H100-80GB-HBM3-MIG-1g.10gb"' "the MIG-single twin"
expect_out_has '"nvidia.com/gpu": "56"' "the MIG-single twin's devices"

run import --check -f "$real" -f "$cm" --configmap gpu-operator/device-plugin-configs -o json
expect_rc 0 "check json"
echo "$out" | python3 -c '
import json, sys
d = json.load(sys.stdin)
assert d["nodes"] == 4 and d["gpuNodes"] == 4 and d["differences"] == [], d
assert d["notCompared"][0]["label"] == "nvidia.com/gfd.timestamp"
' || fail "check json"

# A real node showing allocatable 8 where its twin would show 4.
run import --check -f tests/golden/import-check-differs/node.yaml \
	-f tests/golden/import-check-differs/configmap.yaml \
	--configmap gpu-operator/device-plugin-configs -o json
expect_rc 1 "check finds differences"
echo "$out" | python3 -c '
import json, sys
d = json.load(sys.stdin)
diffs = {x["field"]: (x["real"], x["twin"]) for x in d["differences"]}
assert diffs["allocatable nvidia.com/gpu"] == ("8", "4"), diffs
assert diffs["capacity nvidia.com/gpu"] == ("8", "4"), diffs
' || fail "the differences as json"

# Errors carry file:line:col.
cat >"$tmp/bad.yaml" <<'YAML'
apiVersion: v1
kind: Node
metadata:
  name: gpu-9
  labels:
    nvidia.com/gpu.product: Tesla-T4
    nvidia.com/gpu.count: "300"
YAML
run import -f "$tmp/bad.yaml"
expect_rc 2 "a count GFD never writes"
expect_err_has "bad.yaml:7:27: node 'gpu-9': label nvidia.com/gpu.count: '300' is not a GPU count" "count position"

printf 'kind: Node\nmetadata: [\n' >"$tmp/broken.yaml"
run import -f "$tmp/broken.yaml"
expect_rc 2 "broken YAML"
expect_err_match "broken.yaml:[0-9]+:[0-9]+: " "position in the YAML error"

printf 'apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec: {containers: []}\n' >"$tmp/pod.yaml"
run import -f "$tmp/pod.yaml"
expect_rc 2 "no Node"
expect_err_has "pod.yaml:1:1: skipped: a Pod, not a Node" "the Pod is named"
expect_err_has "no Node in" "no Node"

# A name holding a line break stays on its row, in the table and in the notes.
cat >"$tmp/evil.yaml" <<'YAML'
apiVersion: v1
kind: Node
metadata:
  name: "n\nFORGED row"
  labels:
    nvidia.com/gpu.product: Tesla-T4-SHARED
    nvidia.com/gpu.count: "1"
---
kind: "Pod\nFORGED note"
YAML
run import --check -f "$tmp/evil.yaml"
expect_rc 1 "the check of a forged name"
case "$out$err" in *"
FORGED"*) fail "a name broke a line" ;; esac
expect_out_has 'n\nFORGED row  label' "the name escaped on its row"
run import -f "$tmp/evil.yaml" -o json
python3 -c 'import json, sys; assert json.loads(sys.argv[1])["items"][0]["metadata"]["name"] == "n\nFORGED row"' "$out" ||
	fail "the name reads back from json"

# Pools: names must not collide with imported nodes.
run import -f "$real" --pool dgx-h100=1x1xTesla-T4
expect_rc 0 "a pool beside real nodes"
run import --pool 'a=1x1xTesla-T4' --pool 'a=1x1xTesla-T4'
expect_rc 2 "a pool twice"
expect_err_has "node 'a-0001' exists already" "a pool twice"
run import --pool 'train=2x8xH100'
expect_rc 2 "a vague model"
expect_err_has "did you mean one of 'NVIDIA H100 80GB HBM3'" "a vague model"

# What --pool prints reads back: the check of nothing but a pool is refused, plan reads it.
"$GPUSHARE" import --pool 'infer=2x1xNVIDIA-A100-SXM4-80GB,mig=all-1g.10gb,strategy=mixed' \
	>"$tmp/pool.yaml" || fail "pool"
run advertise --node infer-0002 --full "$tmp/pool.yaml"
expect_rc 0 "advertise a pool node"
expect_out_has '"nvidia.com/mig-1g.10gb": "7"' "the pool node's MIG devices"
exit 0
