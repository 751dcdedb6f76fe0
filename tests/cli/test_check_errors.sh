#!/usr/bin/env bash
# gpushare check on input it cannot judge: exit 2, message on stderr, never OK.
. "$(dirname "$0")/lib.sh"
d=$(mktemp -d)
trap 'rm -rf "$d"' EXIT

# Broken YAML: file:line:col of libyaml's problem.
cat >"$d/broken.yaml" <<'EOF'
apiVersion: v1
kind: Pod
spec:
  containers:
  - name: a
    resources:
      limits: nvidia.com/gpu: 2
EOF
run check "$d/broken.yaml"
expect_rc 2 "broken YAML"
expect_out "" "nothing on stdout"
expect_err_has "$d/broken.yaml:7:29: mapping values are not allowed in this context" "position"
run_sh "$TOP/bin/check-request.sh" "$d/broken.yaml"
expect_rc 2 "wrapper, broken YAML"
expect_out "" "wrapper prints no verdict"

# An error in a later document discards the earlier findings: no half answers.
printf 'kind: Pod\nspec: {containers: [{name: x, resources: {limits: {nvidia.com/gpu: 2}}}]}\n---\na: [\n' >"$d/late-error.yaml"
run check "$d/late-error.yaml"
expect_rc 2 "late error"
expect_out "" "late error"
expect_err_match "late-error.yaml:[45]:[0-9]+: " "late error position"

run check "$d/nonexistent.yaml"
expect_rc 2 "missing file"
expect_out ""
expect_err_has "cannot open '$d/nonexistent.yaml': No such file or directory"
run check "$d"
expect_rc 2 "directory"
expect_err_has "Is a directory"

# A quantity Kubernetes would not decode.
printf 'kind: Pod\nspec:\n  containers:\n  - name: c\n    resources:\n      limits:\n        nvidia.com/gpu: two\n' >"$d/q.yaml"
run check "$d/q.yaml"
expect_rc 2 "bad quantity"
expect_err_has "q.yaml:7:25: spec.containers[0].resources.limits[nvidia.com/gpu]: quantities must match the regular expression"
printf 'kind: Pod\nspec:\n  containers:\n  - name: c\n    resources:\n      limits:\n        nvidia.com/gpu: yes\n' >"$d/b.yaml"
run check "$d/b.yaml"
expect_rc 2 "a YAML 1.1 boolean is no quantity"

# Shapes the Pod type cannot hold.
printf 'kind: Pod\nspec:\n  containers:\n    name: c\n' >"$d/shape.yaml"
run check "$d/shape.yaml"
expect_rc 2 "containers as a mapping"
expect_err_has "shape.yaml:4:5: spec.containers: expected a list, found a mapping"
printf 'kind: Deployment\nspec:\n  template: 3\n' >"$d/shape2.yaml"
run check "$d/shape2.yaml"
expect_rc 2 "template as an integer"
expect_err_has "shape2.yaml:3:13: spec.template: expected a mapping, found an integer"

# YAML that Kubernetes' YAML-to-JSON step refuses.
printf 'kind: Pod\nmetadata:\n  annotations:\n    x: .inf\n' >"$d/inf.yaml"
run check "$d/inf.yaml"
expect_rc 2 "infinity"
expect_err_has "inf.yaml:4:8: json: unsupported value: +Inf"
printf 'a: &a [*a]\n' >"$d/cycle.yaml"
run check "$d/cycle.yaml"
expect_rc 2 "alias cycle"
expect_err_has "anchor 'a' value contains itself"

# Anchors: 100,000 with an alias each is fine (hashed lookups); one more name is over the limit.
anchors() { # N: a Pod whose annotations define N anchors; its GPU limit is an alias to the last
	awk -v n="$1" 'BEGIN {
		print "kind: Pod"; print "metadata:"; print "  annotations:"
		for (i = 0; i < n; i++) printf "    k%d: &a%d \"%d\"\n", i, i, (i == n - 1 ? 2 : 1)
		print "spec:"; print "  containers:"; print "  - name: c"
		print "    resources:"; print "      limits:"; printf "        nvidia.com/gpu: *a%d\n", n - 1
		print "  initContainers:"
		for (i = 0; i < n; i++) printf "  - {name: i%d, resources: {limits: {nvidia.com/gpu: *a%d}}}\n", i, i
	}'
}
# (under valgrind, a minute and a half: the unit test test_ydoc covers it there)
if [ "${GS_VALGRIND:-}" != 1 ]; then
	anchors 100000 >"$d/anchors.yaml"
	run check "$d/anchors.yaml"
	expect_rc 1 "100000 anchors and aliases"
	expect_out "OVER=c=2
OVER=i99999=2" "100000 anchors and aliases"
fi
anchors 100001 >"$d/anchors-over.yaml"
run check "$d/anchors-over.yaml"
expect_rc 2 "over the anchor limit"
expect_out "" "over the anchor limit"
expect_err_has "anchors-over.yaml:100004:14: more than 100000 anchors in one document (the anchor limit)"

# Usage.
run check
expect_rc 2 "no file"
expect_err_has "no manifest given"
run check --bogus "$d/q.yaml"
expect_rc 2 "unknown option"
expect_err_has "unknown option '--bogus'"
run check --help
expect_rc 0 "help"
expect_out_has "OVER=<container>=<count>"
expect_out_has "--strict"

# Several files: an error in one still fails the run.
printf 'kind: Pod\nspec: {containers: [{name: ok}]}\n' >"$d/fine.yaml"
run check "$d/fine.yaml" "$d/broken.yaml"
expect_rc 2 "one bad file of two"
printf '%s\n' "$out" | grep -qx OK && fail "OK printed despite an error"
exit 0
