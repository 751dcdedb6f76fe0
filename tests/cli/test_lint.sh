#!/usr/bin/env bash
# gpushare lint as a user types it: stdin, usage errors, exit statuses.
. "$(dirname "$0")/lib.sh"
d=$(mktemp -d)
trap 'rm -rf "$d"' EXIT

# A config on standard input (k8s-device-plugin v0.20.0 api/config/v1/replicas.go: replicas must be >= 2).
printf 'sharing:\n  timeSlicing:\n    resources:\n    - name: gpu\n      replicas: 1\n' >"$d/bad.yaml"
o=$(mktemp) e=$(mktemp)
"$GPUSHARE" lint - <"$d/bad.yaml" >"$o" 2>"$e"
rc=$? out=$(cat "$o") err=$(cat "$e")
rm -f "$o" "$e"
expect_rc 1 "stdin config with an error"
expect_out "<stdin>:5:17: error: number of replicas must be >= 2" "stdin is named <stdin>"

# The lab's ConfigMap from the repository lints clean (warnings only).
run lint "$TOP/k8s/device-plugin-configs.yaml"
expect_rc 0 "lab ConfigMap"
expect_out_has "[config mps]" "findings are tagged with their key"

# -f on files without the ConfigMap is bad input.
run lint -f "$TOP/k8s/lab-nodes.yaml"
expect_rc 2 "no ConfigMap"
expect_err_has "no ConfigMap gpu-share/device-plugin-configs among the files" "says why"

# -f reads as kubectl does: the lab's directory gives its ConfigMap, linted as FILE is.
run lint "$TOP/k8s/device-plugin-configs.yaml"
want=$out
run lint -f "$TOP/k8s" --configmap gpu-share/device-plugin-configs
expect_rc 0 "-f k8s"
[ "$out" = "$want" ] || fail "lint -f k8s differs from lint FILE"

run lint "$d/missing.yaml"
expect_rc 2 "unreadable file"

run lint --bogus "$d/bad.yaml"
expect_rc 2 "unknown option"
expect_err_has "unknown option '--bogus'" "names the option"

run lint --plugin-version v0.9 "$d/bad.yaml"
expect_rc 2 "unsupported plugin version"

run lint
expect_rc 2 "no file"

run lint --key nope "$TOP/k8s/device-plugin-configs.yaml"
expect_rc 2 "unknown key"

run lint --help
expect_rc 0 "help"
expect_out_has "usage: gpushare lint" "help text on stdout"
