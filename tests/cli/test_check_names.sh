#!/usr/bin/env bash
# A container name that is not a valid one (DNS-1123 label) cannot forge a
# line or an '=': it is shown double-quoted with escapes. Valid names are
# printed as they are (docs/guide/check.md).
. "$(dirname "$0")/lib.sh"
d=$(mktemp -d)
trap 'rm -rf "$d"' EXIT

pod() { # NAME-AS-YAML GPUS
	printf 'kind: Pod\nspec:\n  containers:\n  - name: %s\n    resources: {limits: {nvidia.com/gpu: %s}}\n' "$1" "$2"
}

# A newline in the name used to print a second line: "OK".
pod '"x=2\nOK"' 3 >"$d/newline.yaml"
run check "$d/newline.yaml"
expect_rc 1 "newline in a name"
expect_out 'OVER="x\x3d2\nOK"=3' "newline in a name"
[ "$(printf '%s\n' "$out" | wc -l)" = 1 ] || fail "one finding, one line"
run_sh "$TOP/bin/check-request.sh" "$d/newline.yaml"
expect_out 'OVER="x\x3d2\nOK"=3' "wrapper"

# An '=' in the name: every OVER line has exactly two.
pod 'a=b' 2 >"$d/equals.yaml"
run check "$d/equals.yaml"
expect_rc 1 "= in a name"
expect_out 'OVER="a\x3db"=2' "= in a name"

# Quotes, backslashes, control and non-ASCII bytes, and no name at all.
pod '"q\"\\ \t \u00e9\x7f"' 2 >"$d/odd.yaml"
run check "$d/odd.yaml"
expect_out 'OVER="q\"\\ \t \xc3\xa9\x7f"=2' "escapes"
printf 'kind: Pod\nspec: {containers: [{resources: {limits: {nvidia.com/gpu: 2}}}]}\n' >"$d/noname.yaml"
run check "$d/noname.yaml"
expect_out 'OVER=""=2' "no name"
pod Trainer 2 >"$d/upper.yaml"
run check "$d/upper.yaml"
expect_out 'OVER="Trainer"=2' "upper case is not a valid name"

# Valid names, the numbers YAML turns into names, and 63 characters: as they are.
pod 'train-0' 2 >"$d/valid.yaml"
run check "$d/valid.yaml"
expect_out 'OVER=train-0=2' "valid name"
pod 42 2 >"$d/number.yaml"
run check "$d/number.yaml"
expect_out 'OVER=42=2' "a number as a name"
long=$(printf 'a%.0s' $(seq 63))
pod "$long" 2 >"$d/long.yaml"
run check "$d/long.yaml"
expect_out "OVER=$long=2" "63 characters"
pod "${long}b" 2 >"$d/toolong.yaml"
run check "$d/toolong.yaml"
expect_out "OVER=\"${long}b\"=2" "64 characters"

# Rule findings quote the name the same way, on one line.
pod '"x\nOK"' 500m >"$d/rule.yaml"
run check "$d/rule.yaml"
expect_rc 1 "rule finding"
expect_out "$d/rule.yaml:5:42: container \"x\\nOK\": spec.containers[0].resources.limits[nvidia.com/gpu]: Invalid value: \"500m\": must be an integer
$d/rule.yaml:5:42: container \"x\\nOK\": spec.containers[0].resources.requests[nvidia.com/gpu]: Invalid value: \"500m\": must be an integer" "rule finding"

# A resource name cannot forge a line either: a line break shows as \n.
printf 'kind: Pod\nspec:\n  containers:\n  - name: c\n    resources: {limits: {"a\\nOK": 1}}\n' >"$d/resname.yaml"
run check "$d/resname.yaml"
expect_rc 1 "a newline in a resource name"
printf '%s\n' "$out" | grep -qx OK && fail "a resource name forged an OK line"
[ "$(printf '%s\n' "$out" | wc -l)" = 4 ] || fail "four refusals, four lines"
expect_out_has 'spec.containers[0].resources.limits[a\nOK]: Invalid value: "a\nOK": must be a standard resource for containers'
