#!/usr/bin/env bash
# Opt-in rules (spec nvidia-semantics §6.5 apiserver texts, §3.4 shared
# resources). Their lines start with file:line:col, never OVER= or OK.
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
# Default: only the contract.
run check "$d/p.yaml"
expect_rc 1
expect_out "OVER=unequal=2"

run check --api-rules "$d/p.yaml"
expect_rc 1
expect_out "$(cat <<EOF
OVER=unequal=2
$d/p.yaml:6:34: container "unequal": spec.containers[0].resources.requests: Invalid value: "1": must be equal to nvidia.com/gpu limit of 2
$d/p.yaml:10:34: container "no-limit": spec.containers[1].resources.limits: Required value: Limit must be set for non overcommitable resources (nvidia.com/gpu is requested without a limit)
$d/p.yaml:13:32: container "half": spec.containers[2].resources.limits[nvidia.com/gpu]: Invalid value: "500m": must be an integer
EOF
)" "api rules"

run check --shared "$d/p.yaml"
expect_rc 1
expect_out_has "OVER=unequal=2"
expect_out_has "$d/p.yaml:16:39: container \"shared\": nvidia.com/gpu.shared: 2 asks for more than 1"
case "$out" in *mig-1g.10gb*) fail "a MIG request of 1 is fine" ;; esac

run check --strict "$d/p.yaml"
expect_rc 1
[ "$(printf '%s\n' "$out" | wc -l)" = 5 ] || fail "strict: want 5 lines"

# Findings of the rules alone still make the verdict a finding, not OK.
printf 'kind: Pod\nspec:\n  containers:\n  - name: r\n    resources: {requests: {nvidia.com/gpu: 1}}\n' >"$d/r.yaml"
run check "$d/r.yaml"
expect_rc 0
expect_out "OK"
run check --api-rules "$d/r.yaml"
expect_rc 1 "rule finding without OVER"
printf '%s\n' "$out" | grep -qx OK && fail "OK printed with a finding"
exit 0
