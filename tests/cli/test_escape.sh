#!/usr/bin/env bash
# Names an attacker picks (line breaks with a YAML document after them, '#',
# quotes, backslashes, tabs, ANSI escapes, YAML's other line breaks NEL, LS
# and PS, a bidi override, invalid UTF-8) in what offline commands read and
# in AdmissionReviews, and every output format read back as its reader
# would: dra translate's YAML (comments, values, a CEL string) has exactly
# the documents meant, JSON parses to the same names, each log event and
# each table row is one line, a check finding never passes for OVER=.
. "$(dirname "$0")/lib.sh"
cd "$TOP" || exit 1
use_tmp
fleet=(-f k8s/lab-nodes.yaml -f k8s/device-plugin-configs.yaml)

# The names, as a Python list (one source for the manifests and the checks).
cat >"$tmp/names.py" <<'EOF'
NAMES = [
    "evil\n---\napiVersion: v1\nkind: Secret\nmetadata:\n  name: pwn\n  namespace: kube-system\nstringData:\n  a: b\n#",
    "x\n---\nkind: ConfigMap",
    "# comment",
    'q"uo\\te',
    "t\tab",
    "cr\rlf\r\n",
    "\x1b[2J\x1b[31mred\x1b[0m",
    "nel\x85ls\u2028ps\u2029end",
    "rlo\u202ecba",
]
EOF

# Lines a terminal or a YAML reader would split, or escapes it would obey.
cat >"$tmp/clean.py" <<'EOF'
import re, sys
BREAKS = "\x00-\x08\x0b-\x1f\x7f\x80-\x9f\u2028\u2029"
BAD = re.compile("[" + BREAKS + "\u202a-\u202e\u2066-\u2069\ufeff]")
# A YAML value may hold a bidi control as data (libyaml writes it as it is).
BAD_IN_VALUE = re.compile("[" + BREAKS + "]")
def clean_lines(data, what, comments_only=False):
    text = data.decode("utf-8")  # fails on invalid UTF-8
    for i, line in enumerate(text.split("\n")):
        bad = BAD if not comments_only or line.startswith("#") else BAD_IN_VALUE
        assert not bad.search(line), "%s line %d holds a control: %r" % (what, i + 1, line)
    return text.split("\n")
EOF

# ---- YAML: dra translate, comments and values -------------------------------
python3 - "$tmp" <<'EOF' || fail "could not write the manifests"
import sys, yaml
sys.path.insert(0, sys.argv[1])
from names import NAMES
docs = []
for i, n in enumerate(NAMES):
    docs.append({"apiVersion": "v1", "kind": "Pod",
                 "metadata": {"name": n, "namespace": "ns-%d" % i},
                 "spec": {"nodeSelector": {"nvidia.com/device-plugin.config": "shared"},
                          "containers": [{"name": n, "image": "x",
                                          "resources": {"limits": {"nvidia.com/gpu": 1}}}]}})
# A MIG profile that would end a CEL string literal and widen the selector.
docs.append({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "mig", "namespace": "m"},
             "spec": {"containers": [{"name": "c", "image": "x", "resources": {"limits": {
                 "nvidia.com/mig-1g.10gb' || true || '": 1}}}]}})
open(sys.argv[1] + "/pods.yaml", "w").write(yaml.safe_dump_all(docs))
EOF
run dra translate -f k8s/device-plugin-configs.yaml "$tmp/pods.yaml"
expect_rc 0 "translate the nasty names"
printf '%s' "$out" >"$tmp/out.yaml"
python3 - "$tmp" <<'EOF' || fail "dra translate's YAML does not read back as the documents meant"
import sys, yaml
sys.path.insert(0, sys.argv[1])
from names import NAMES
from clean import clean_lines
data = open(sys.argv[1] + "/out.yaml", "rb").read()
# Each comment one line: no line break or control of a name gets out of it.
clean_lines(data, "dra translate", comments_only=True)
docs = [d for d in yaml.safe_load_all(data) if d is not None]
kinds = [d["kind"] for d in docs]
want = ["ResourceClaim", "Pod"] * len(NAMES) + ["ResourceClaimTemplate", "Pod"]
assert kinds == want, kinds
pods = [d for d in docs if d["kind"] == "Pod"]
# Values: every name reads back as written.
for n, p in zip(NAMES, pods):
    assert p["metadata"]["name"] == n, (p["metadata"]["name"], n)
    assert p["spec"]["containers"][0]["name"] == n
# CEL: the profile stays one string literal, the whole of the right-hand side.
expr = docs[-2]["spec"]["spec"]["devices"]["requests"][0]["exactly"]["selectors"][0]["cel"]["expression"]
head = "device.attributes['gpu.nvidia.com'].profile == '"
assert expr.startswith(head), expr
i, lit = len(head), ""
while expr[i] != "'":
    if expr[i] == "\\":
        i += 1
    lit += expr[i]
    i += 1
assert i == len(expr) - 1, "the literal ends before the expression: %r" % expr
assert lit == "1g.10gb' || true || '", lit
EOF
# The notes still say which container, escaped on their one line.
expect_out_has '# Pod ns-0/evil\n---\napiVersion: v1\nkind: Secret' "the header line, escaped"

# Invalid UTF-8 in a manifest: refused at its place, in one line.
printf 'apiVersion: v1\nkind: Pod\nmetadata:\n  name: "bad\200\n' >"$tmp/bad.yaml"
run dra translate -f k8s/device-plugin-configs.yaml "$tmp/bad.yaml"
expect_rc 2 "invalid UTF-8"
[ "$(printf '%s\n' "$err" | wc -l)" = 1 ] || fail "the error is not one line"
# A file name with a line break in an error: one line too.
run dra translate -f k8s/device-plugin-configs.yaml "$tmp/no
such: file"
expect_rc 2 "missing file"
[ "$(printf '%s\n' "$err" | wc -l)" = 1 ] || fail "an error naming a file is not one line"
expect_err_has 'no\nsuch: file' "the file name, escaped"

# ---- JSON: plan -o json and the webhook's answer ----------------------------
run plan -f "$tmp/pods.yaml" "${fleet[@]}" -o json
printf '%s' "$out" >"$tmp/plan.json"
python3 - "$tmp" <<'EOF' || fail "plan -o json does not hold the names as written"
import json, sys
sys.path.insert(0, sys.argv[1])
from names import NAMES
r = json.load(open(sys.argv[1] + "/plan.json"))
got = [p["name"] for p in r["pods"]]
assert got[:len(NAMES)] == NAMES, got
EOF

# ---- tables: plan, explain, status ------------------------------------------
run plan -f "$tmp/pods.yaml" "${fleet[@]}"
printf '%s\n' "$out" >"$tmp/plan.txt"
python3 - "$tmp" <<'EOF' || fail "plan's table has a row that is not one line"
import sys
sys.path.insert(0, sys.argv[1])
from names import NAMES
from clean import clean_lines
lines = clean_lines(open(sys.argv[1] + "/plan.txt", "rb").read(), "plan")
lines = lines[:lines.index("")] if "" in lines else lines  # the pod table, before the headroom
rows = [l for l in lines if l and not l.startswith(" ")]
assert rows[0].startswith("POD "), rows[0]
assert len(rows) == 1 + len(NAMES) + 1, rows  # the header, a row per pod
for i, r in enumerate(rows[1:len(NAMES) + 1]):
    assert r.startswith("ns-%d/" % i), r
EOF
run explain pod -f "$tmp/pods.yaml" "${fleet[@]}"
printf '%s\n' "$out" >"$tmp/explain.txt"
python3 - "$tmp" <<'EOF' || fail "explain pod shows a name across lines"
import sys
sys.path.insert(0, sys.argv[1])
from names import NAMES
from clean import clean_lines
lines = clean_lines(open(sys.argv[1] + "/explain.txt", "rb").read(), "explain")
heads = [l for l in lines if l.startswith("pod ")]
assert len(heads) == len(NAMES) + 1, heads
assert not any(l.startswith(("---", "kind:", "apiVersion:")) for l in lines)
EOF
# status -f: the lab's recorded cluster with nasty pod and namespace names.
python3 - "$tmp" <<'EOF' || fail "could not write the list"
import json, sys
sys.path.insert(0, sys.argv[1])
from names import NAMES
lst = json.load(open("tests/golden/status-lab/list.json"))
pods = [o for o in lst["items"] if o["kind"] == "Pod"]
for n, p in zip(NAMES, pods):
    p["metadata"]["name"] = n
    p["metadata"]["namespace"] = n
json.dump(lst, open(sys.argv[1] + "/list.json", "w"))
EOF
run status -f "$tmp/list.json"
expect_rc 0 "status of the renamed pods"
printf '%s\n' "$out" >"$tmp/status.txt"
python3 - "$tmp" <<'EOF' || fail "status's table has a row that is not one line"
import sys
sys.path.insert(0, sys.argv[1])
from clean import clean_lines
lines = clean_lines(open(sys.argv[1] + "/status.txt", "rb").read(), "status")
table = lines[:lines.index("")]
assert len(table) == 18, table  # the header and the lab's 17 devices
for l in table[1:]:
    assert l.startswith("lab-node-"), l
notes = [l for l in lines[len(table) + 1:] if l]
for l in notes:
    assert l.startswith("lab-node-"), l
EOF

# ---- check: a finding never passes for OVER= or OK ---------------------------
cat >"$tmp/shared.yaml" <<'EOF'
apiVersion: v1
kind: Pod
metadata: {name: p}
spec:
  containers:
  - name: "c\nOVER=forged=9"
    resources:
      limits:
        "nvidia.com/gpu.shared\nOVER=forged=9\nOK": 2
EOF
run check --shared "$tmp/shared.yaml"
expect_rc 1 "the shared finding"
# the shared finding, and the apiserver's four refusals of that name
[ "$(printf '%s\n' "$out" | wc -l)" = 5 ] || fail "five findings, more lines"
case "$out" in *$'\n'OVER=* | OVER=* | *$'\n'OK*) fail "a finding forged a verdict line" ;; esac
expect_out_has 'container "c\nOVER\x3dforged\x3d9": nvidia.com/gpu.shared\nOVER=forged=9\nOK: 2 asks' "escaped"

# ---- JSON and log lines: the webhook ------------------------------------------
# review FILE OP KIND NS NAME CONTAINER: a review of a pod asking two slices.
review() {
	python3 - "$@" <<'EOF'
import json, sys
f, op, kind, ns, name, ctr = sys.argv[1:]
json.dump({"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview",
           "request": {"uid": "u-" + f[-6:], "kind": {"group": "", "version": "v1", "kind": kind},
                       "operation": op, "namespace": ns, "name": name,
                       "object": {"apiVersion": "v1", "kind": "Pod",
                                  "metadata": {"name": name, "namespace": ns},
                                  "spec": {"nodeSelector": {"nvidia.com/device-plugin.config": "shared"},
                                           "containers": [{"name": ctr, "image": "pause",
                                                           "resources": {"limits": {"nvidia.com/gpu": "2"}}}]}}}},
          open(f, "w"))
EOF
}
forge=$'x: allowed (0.001 ms)\ngpushare webhook: CREATE Pod kube-system/forged'
review "$tmp/r1.json" CREATE Pod gpu-share "$forge" "$forge"
review "$tmp/r2.json" CREATE Pod $'ns\u2028y' 'q"uote\back' $'c\n---'
# Refused unjudged (400), logged all the same.
review "$tmp/r3.json" $'CREATE\x1b[2J' $'Pod\tX' ns name c
run webhook --review "$tmp/r1.json" "${fleet[@]}"
expect_rc 1 "the two-slice review"
printf '%s' "$out" | python3 -c '
import json, sys
r = json.load(sys.stdin)
assert r["response"]["allowed"] is False
m = r["response"]["status"]["message"]
assert "x: allowed (0.001 ms)\ngpushare webhook: CREATE Pod kube-system/forged" in m, m
' || fail "the answer does not carry the container name as written"

command -v openssl >/dev/null && command -v curl >/dev/null || fail "openssl and curl are needed"
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 1 \
	-subj "/CN=127.0.0.1" -addext "subjectAltName=IP:127.0.0.1" \
	-keyout "$tmp/tls.key" -out "$tmp/tls.crt" 2>/dev/null || fail "openssl"
serve_webhook "$tmp/tls.crt" "${fleet[@]}" \
	--tls-cert-file "$tmp/tls.crt" --tls-private-key-file "$tmp/tls.key"
printf '{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{"uid":"\200\n"}}' >"$tmp/r4.json"
for r in r1 r2 r3 r4; do
	curl -s -o /dev/null --cacert "$tmp/tls.crt" -H 'Content-Type: application/json' \
		--data-binary "@$tmp/$r.json" "$url/validate"
done
kill "$pid"
wait "$pid"
pid=
python3 - "$tmp" <<'EOF' || { err=$(cat "$tmp/log"); fail "a review's log is not one line, or a line is forged"; }
import sys
sys.path.insert(0, sys.argv[1])
from clean import clean_lines
lines = [l for l in clean_lines(open(sys.argv[1] + "/log", "rb").read(), "log") if l]
for l in lines:
    assert l.startswith("gpushare webhook: "), l
reviews = [l for l in lines if "ms)" in l]
assert len(reviews) == 2, reviews
assert not any("kube-system/forged" in l and l.startswith("gpushare webhook: CREATE Pod kube-system") for l in lines), lines
assert reviews[0].startswith('gpushare webhook: CREATE Pod gpu-share/"x: allowed (0.001 ms)\\ngpushare webhook: CREATE Pod kube-system/forged": refused'), reviews[0]
assert reviews[1].startswith('gpushare webhook: CREATE Pod "ns\\xe2\\x80\\xa8y"/"q\\"uote\\\\back": '), reviews[1]
bad = [l for l in lines if "bad review" in l]
assert len(bad) == 2, lines
assert "CREATE\\x1b[2J" in bad[0], bad[0]
EOF
exit 0
