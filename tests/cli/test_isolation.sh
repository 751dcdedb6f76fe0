# gpushare isolation: the table, the lab's env lines, bad arguments.
. "$(dirname "$0")/lib.sh"

run isolation
expect_rc 0 "table"
expect_out_has "time-slicing  no                no" "time-slicing row"
expect_out_has "mps           partial           no" "MPS row (cooperative limits, weak faults)"
expect_out_has "mig           yes               yes" "MIG row"

run isolation -o env
expect_rc 0 "env"
[ "$(echo "$out" | wc -l)" = 5 ] || fail "want 5 lines"
expect_out_has "MPS_MEMORY_ISOLATION=partial" "env"

run isolation --output=env
expect_rc 0 "--output=env"

run isolation --help
expect_rc 0 "help"
expect_out_has "usage: gpushare isolation" "help"

run isolation -o xml
expect_rc 2 "unknown format"
expect_err_has "gpushare isolation: unknown output format 'xml' (one of: table, json, yaml, env)" "unknown format"

run isolation --bogus
expect_rc 2 "unknown flag"
