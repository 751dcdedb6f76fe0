#!/usr/bin/env bash
# `gpushare plan` against the real kube-scheduler: DIFF_CASES (200) random
# small fleets and pod sets from DIFF_SEED, applied to the local control
# plane in batches and run through `plan -o json`; every pod must get the
# same verdict, and a bound pod the same node or one plan also found
# feasible (docs/design/difftest.md). Alone:
#   DIFF_SEED=N DIFF_CASES=K E2E_ONLY=test_plan_differential make e2e
# and one case again: DIFF_SEED=N DIFF_ONLY=I E2E_ONLY=... make e2e
# 200 cases take a few minutes; room for a loaded machine:
# e2e-timeout: 900
. "$TOP/tests/e2e/lib.sh"

dir=$TOP/tests/e2e/difftest
export PYTHONDONTWRITEBYTECODE=1
run python3 "$dir/selftest.py"
expect_rc 0 "the harness's own checks"

if ! "$GPUSHARE" plan --help >/dev/null 2>&1; then
	echo "note: skipped: this gpushare has no 'plan' command; nothing to compare the scheduler with"
	exit 0
fi
python3 "$dir/difftest.py"
rc=$?
[ $rc = 0 ] || fail "plan and the scheduler disagree (exit $rc); see the lines above and docs/design/difftest.md"
