#!/usr/bin/env bash
# kube-apiserver's refusals (always, in its words) and the opt-in rule on
# shared resources (k8s-device-plugin v0.20.0 internal/rm/rm.go ValidateRequest). Their lines start with
# file:line:col, never OVER= or OK.
. "$(dirname "$0")/lib.sh"
d=$(mktemp -d)
trap 'rm -rf "$d"' EXIT
cat >"$d/p.yaml" <<'EOF'
kind: Pod
spec:
  containers:
  - name: unequal
    resources:
      requests: {nvidia.com/gpu: 1}
      limits: {nvidia.com/gpu: 2}
  - name: no-limit
    resources:
      requests: {nvidia.com/gpu: 1}
  - name: half
    resources:
      limits: {nvidia.com/gpu: 500m}
  - name: shared
    resources:
      limits: {nvidia.com/gpu.shared: 2, nvidia.com/mig-1g.10gb: 1}
  - name: fine
    resources:
      limits: {nvidia.com/gpu: 1, example.com/foo: 1}
EOF
# Default: the contract, then what the apiserver refuses at create (a Pod's
# missing requests are its limits, as the apiserver defaults them).
refusals="$d/p.yaml:6:34: container \"unequal\": spec.containers[0].resources.requests: Invalid value: \"1\": must be equal to nvidia.com/gpu limit of 2
$d/p.yaml:10:34: container \"no-limit\": spec.containers[1].resources.limits: Required value: Limit must be set for non overcommitable resources
$d/p.yaml:13:32: container \"half\": spec.containers[2].resources.limits[nvidia.com/gpu]: Invalid value: \"500m\": must be an integer
$d/p.yaml:13:32: container \"half\": spec.containers[2].resources.requests[nvidia.com/gpu]: Invalid value: \"500m\": must be an integer"
run check "$d/p.yaml"
expect_rc 1
expect_out "OVER=unequal=2
$refusals" "apiserver rules by default"

# --api-rules is still accepted, and changes nothing.
run check --api-rules "$d/p.yaml"
expect_rc 1
expect_out "OVER=unequal=2
$refusals" "api rules"

run check --shared "$d/p.yaml"
expect_rc 1
expect_out_has "OVER=unequal=2"
expect_out_has "$d/p.yaml:16:39: container \"shared\": nvidia.com/gpu.shared: 2 asks for more than 1"
case "$out" in *mig-1g.10gb*) fail "a MIG request of 1 is fine" ;; esac

run check --strict "$d/p.yaml"
expect_rc 1
[ "$(printf '%s\n' "$out" | wc -l)" = 6 ] || fail "strict: want 6 lines"

# A refusal alone makes the verdict a finding, never OK.
printf 'kind: Pod\nspec:\n  containers:\n  - name: r\n    resources: {requests: {nvidia.com/gpu: 1}}\n' >"$d/r.yaml"
run check "$d/r.yaml"
expect_rc 1 "a request without a limit"
expect_out "$d/r.yaml:5:44: container \"r\": spec.containers[0].resources.limits: Required value: Limit must be set for non overcommitable resources"
printf '%s\n' "$out" | grep -qx OK && fail "OK printed with a finding"

# Whole numbers the apiserver refuses all the same: MilliValue() wraps around int64.
printf 'kind: Pod\nspec:\n  containers:\n  - name: e\n    resources: {limits: {nvidia.com/gpu: 1Ei}}\n  - name: p\n    resources: {limits: {nvidia.com/gpu: 10000000000000000}}\n' >"$d/big.yaml"
run check "$d/big.yaml"
expect_rc 1
expect_out "OVER=e=1Ei
OVER=p=10P
$d/big.yaml:5:42: container \"e\": spec.containers[0].resources.limits[nvidia.com/gpu]: Invalid value: \"1Ei\": must be an integer
$d/big.yaml:5:42: container \"e\": spec.containers[0].resources.requests[nvidia.com/gpu]: Invalid value: \"1Ei\": must be an integer
$d/big.yaml:7:42: container \"p\": spec.containers[1].resources.limits[nvidia.com/gpu]: Invalid value: \"10P\": must be an integer
$d/big.yaml:7:42: container \"p\": spec.containers[1].resources.requests[nvidia.com/gpu]: Invalid value: \"10P\": must be an integer" "int64 wrap-around"

# Valid manifests keep the contract: OK, exit 0, also through check-request.sh.
printf 'kind: Pod\nspec:\n  containers:\n  - name: v\n    resources: {limits: {nvidia.com/gpu: 1, cpu: 500m}, requests: {cpu: 250m}}\n' >"$d/v.yaml"
run check "$d/v.yaml"
expect_rc 0
expect_out "OK"
run_sh env GPUSHARE="$GPUSHARE" "$TOP/bin/check-request.sh" "$d/v.yaml"
expect_rc 0
expect_out "OK"
run_sh env GPUSHARE="$GPUSHARE" "$TOP/bin/check-request.sh" "$d/r.yaml"
expect_rc 1 "check-request.sh on a refused pod"
printf '%s\n' "$out" | grep -qx OK && fail "check-request.sh printed OK for a refused pod"
exit 0
