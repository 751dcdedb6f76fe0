#!/usr/bin/env bash
# `gpushare controller`'s command line, before any cluster is dialed: a bad
# --listen is a usage error said first; an unknown option too; a missing
# kubeconfig is named. (Its behaviour against a cluster: tests/e2e/test_controller.sh.)
. "$(dirname "$0")/lib.sh"

run controller --listen nope --kubeconfig /nonexistent/kubeconfig
expect_rc 2 "bad --listen"
expect_err_has "gpushare controller: option '--listen' takes HOST:PORT with an IPv4 address, got 'nope'" "says what --listen takes"
expect_err_has "see 'gpushare controller --help'" "points at the help"

run controller --listen 127.0.0.1:99999 --kubeconfig /nonexistent/kubeconfig
expect_rc 2 "port out of range"

run controller --no-such-flag
expect_rc 2 "unknown option"
expect_err_has "no-such-flag" "names the option"

run controller --kubeconfig /nonexistent/kubeconfig
expect_rc 2 "no kubeconfig"
expect_err_has 'kubeconfig "/nonexistent/kubeconfig": No such file or directory' "names the file"

run controller --help
expect_rc 0 "--help"
expect_out_has "--selector SELECTOR" "documents the node selector"
expect_out_has "--listen HOST:PORT" "documents the ops endpoints"
