#!/usr/bin/env bash
# The soak, short (docs/design/soak.md): 200 seeded random steps on this
# cluster (bare pods, Deployments, Jobs, ConfigMap edits of replicas,
# sharing strategy and MIG strategy, MIG layouts walked, stalled and failed,
# GPU faults injected and cleared through `gpushare fault`, the controller
# SIGKILLed and restarted, the apiserver restarted), every kind at least
# once, with every invariant checked after each step: no device held
# twice, replicas per GPU within the config, nothing running that its node
# would have refused, the controller's books equal to the pods', quota
# usage equal to the apiserver's, no MIG walk pending past its time, no
# pod left undecided. The soak's nodes, namespaces and ConfigMap keys are
# removed at the end. SOAK_SEED picks the seed (printed either way),
# SOAK_E2E_STEPS the length; a failure prints the failing invariant, the
# objects involved and a shrunk failing sequence (60 s of shrinking).
# e2e-timeout: 300
. "$TOP/tests/e2e/lib.sh"

soak=${SOAK:-$TOP/build/soak}
[ -x "$soak" ] || fail "$soak is missing: make build/soak (make e2e builds it)"
state=${GS_CLUSTER_DIR:-$TOP/.cluster}
seed=${SOAK_SEED:-$(date +%s)}
mkdir -p "$TOP/build"
run "$soak" --cluster-dir "$state" --gpushare "$GPUSHARE" --scripts "$TOP/scripts/cluster" \
	--steps "${SOAK_E2E_STEPS:-200}" --seed "$seed" --fault-cli --shrink-seconds 60 \
	--failure-dir "$TOP/build"
expect_rc 0 "the soak, seed $seed (again: SOAK_SEED=$seed)"
expect_has "$out" "every invariant held after each of the" "the soak's verdict"
line=$(grep '^soak: seed .* steps in' <<<"$out" | tail -1)
echo "note: ${line#soak: }"
