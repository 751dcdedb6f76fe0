# gpushare webhook --review on pods the apiserver's own validation refuses:
# denied with the apiserver's message, word for word, with or without a fleet.
. "$(dirname "$0")/lib.sh"
cd "$TOP" || exit 1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fleet=(-f k8s/lab-nodes.yaml -f k8s/device-plugin-configs.yaml)

# review NAME RESOURCES_JSON: a CREATE review of one pod into $tmp/NAME.json.
review() {
	cat >"$tmp/$1.json" <<-EOF
		{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{"uid":"uid-$1",
		 "kind":{"group":"","version":"v1","kind":"Pod"},"operation":"CREATE","namespace":"gpu-share",
		 "name":"$1","object":{"apiVersion":"v1","kind":"Pod","metadata":{"name":"$1","namespace":"gpu-share"},
		 "spec":{"containers":[{"name":"work","image":"pause","resources":$2}]}}}}
	EOF
}
# As the apiserver sends them: defaulted, so a limit has its request.
review half '{"limits":{"nvidia.com/gpu":"500m"},"requests":{"nvidia.com/gpu":"500m"}}'
review request-only '{"requests":{"nvidia.com/gpu":"1"}}'
review exbi '{"limits":{"nvidia.com/gpu":"1Ei"},"requests":{"nvidia.com/gpu":"1Ei"}}'
review whole '{"limits":{"nvidia.com/gpu":"1"},"requests":{"nvidia.com/gpu":"1"}}'

run webhook --review "$tmp/half.json" "${fleet[@]}"
expect_rc 1 "a fractional GPU"
expect_out_has '"allowed": false' "refused"
expect_out_has '"message": "Pod \"half\" is invalid: [spec.containers[0].resources.limits[nvidia.com/gpu]: Invalid value: \"500m\": must be an integer, spec.containers[0].resources.requests[nvidia.com/gpu]: Invalid value: \"500m\": must be an integer]"' "the apiserver's message"

run webhook --review "$tmp/request-only.json"
expect_rc 1 "a request without a limit, no fleet"
expect_out_has '"message": "Pod \"request-only\" is invalid: spec.containers[0].resources.limits: Required value: Limit must be set for non overcommitable resources"' "the apiserver's message"

run webhook --review "$tmp/exbi.json" "${fleet[@]}"
expect_rc 1 "1Ei: MilliValue() wraps around int64"
expect_out_has 'Invalid value: \"1Ei\": must be an integer' "the apiserver's words"

run webhook --review "$tmp/whole.json" "${fleet[@]}"
expect_rc 0 "one whole GPU"
expect_out_has '"allowed": true' "allowed"
exit 0
