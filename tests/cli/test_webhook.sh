# gpushare webhook as a user runs it, on the seed's fleet from manifests (no
# cluster): --review verdicts, usage and input errors, then the HTTPS server:
# AdmissionReview in and out, health endpoints, bounded bodies, a certificate
# swapped on disk while it serves, a certificate that does not match its key.
. "$(dirname "$0")/lib.sh"
cd "$TOP" || exit 1
use_tmp
fleet=(-f k8s/lab-nodes.yaml -f k8s/device-plugin-configs.yaml)

# review NAME SELECTOR_JSON LIMITS_JSON: a CREATE review of one pod into $tmp/NAME.json.
review() {
	cat >"$tmp/$1.json" <<-EOF
		{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{"uid":"uid-$1",
		 "kind":{"group":"","version":"v1","kind":"Pod"},"operation":"CREATE","namespace":"gpu-share",
		 "name":"$1","object":{"apiVersion":"v1","kind":"Pod","metadata":{"name":"$1","namespace":"gpu-share"},
		 "spec":{"nodeSelector":$2,"containers":[{"name":"work","image":"pause","resources":{"limits":$3}}]}}}}
	EOF
}
review two-slices '{"nvidia.com/device-plugin.config":"shared"}' '{"nvidia.com/gpu":"2"}'
review one-slice '{"nvidia.com/device-plugin.config":"shared"}' '{"nvidia.com/gpu":"1"}'
review gpu-on-mig '{"nvidia.com/mig.strategy":"mixed"}' '{"nvidia.com/gpu":"1"}'

run webhook --help
expect_rc 0 "help"
expect_out_has "usage: gpushare webhook" "help"
expect_out_has "--tls-private-key-file" "help lists the TLS flags"

run webhook --review "$tmp/two-slices.json" "${fleet[@]}"
expect_rc 1 "the seed's two-slice pod is refused"
expect_out_has '"uid": "uid-two-slices"' "uid echoed"
expect_out_has '"allowed": false' "refused"
expect_out_has 'maximum request size for shared resources is 1; found 2, which is unexpected' "the kubelet's words"
expect_out_has 'the pod can be scheduled to lab-node-1' "the node it would fail on"

run webhook --review "$tmp/one-slice.json" "${fleet[@]}"
expect_rc 0 "one slice is allowed"
expect_out_has '"allowed": true' "allowed"

run webhook --review "$tmp/gpu-on-mig.json" "${fleet[@]}"
expect_rc 1 "gpu on the MIG node"
expect_out_has 'nvidia.com/mig-1g.10gb=7; ask for one of those instead of nvidia.com/gpu' "names the profile"

# spec.nodeName: judged on the named node alone, as its kubelet would.
jq -c '.request.object.spec = (.request.object.spec | del(.nodeSelector) | .nodeName = "lab-node-0")' \
	"$tmp/two-slices.json" >"$tmp/bound-two-whole.json"
run webhook --review "$tmp/bound-two-whole.json" "${fleet[@]}"
expect_rc 0 "two GPUs bound to the unshared node"
jq -c '.request.object.spec = (.request.object.spec | del(.nodeSelector) | .nodeName = "lab-node-2")' \
	"$tmp/one-slice.json" >"$tmp/bound-gpu-on-mig.json"
run webhook --review "$tmp/bound-gpu-on-mig.json" "${fleet[@]}"
expect_rc 1 "nvidia.com/gpu bound to the MIG-only node"
expect_out_has 'bound to node lab-node-2 (spec.nodeName), which does not advertise nvidia.com/gpu' "names the bound node"

# The same review from standard input.
out=$("$GPUSHARE" webhook --review - "${fleet[@]}" <"$tmp/two-slices.json")
rc=$?
expect_rc 1 "review from stdin"

# Usage and input errors.
run webhook "${fleet[@]}"
expect_rc 2 "no certificate"
expect_err_has "the server needs --tls-cert-file and --tls-private-key-file" "no certificate"
run webhook --review "$tmp/one-slice.json" --nodes k8s/lab-nodes.yaml --configmap k8s/device-plugin-configs.yaml
expect_rc 2 "--configmap FILE"
expect_err_has "option '--configmap' takes NAMESPACE/NAME (the ConfigMap), not a file: give 'k8s/device-plugin-configs.yaml' with -f" "names the fix"
run webhook --review "$tmp/two-slices.json" --nodes k8s/lab-nodes.yaml -f k8s/device-plugin-configs.yaml
expect_rc 1 "--nodes, the older form of -f"
run webhook --review "$tmp/one-slice.json" "${fleet[@]}" --bind-address localhost
expect_rc 2 "a name where an address belongs"
expect_err_has "option '--bind-address' expects an IPv4 address, got 'localhost'" "bind address"
printf '{"apiVersion":"admission.k8s.io/v1",\n "kind": "AdmissionReview", "request": [}\n' >"$tmp/broken.json"
run webhook --review "$tmp/broken.json" "${fleet[@]}"
expect_rc 2 "broken JSON"
expect_err_match "$tmp/broken.json:2:[0-9]+: " "file:line:col"
printf '{"apiVersion":"admission.k8s.io/v1beta1","kind":"AdmissionReview","request":{"uid":"x"}}' >"$tmp/old.json"
run webhook --review "$tmp/old.json" "${fleet[@]}"
expect_rc 2 "v1beta1"
expect_err_has 'not an AdmissionReview of admission.k8s.io/v1' "v1 only"
run webhook --review "$tmp/one-slice.json" -f k8s/mig-job.yaml -f k8s/device-plugin-configs.yaml
expect_rc 2 "no Node among the files"
expect_err_has "no Node among the files" "says so"
# A review the webhook cannot read is never allowed: no object, no request.kind, a Pod UPDATE.
jq -c 'del(.request.object)' "$tmp/two-slices.json" >"$tmp/no-object.json"
run webhook --review "$tmp/no-object.json" "${fleet[@]}"
expect_rc 2 "a review without request.object"
expect_err_has "request.object is absent" "no object"
jq -c '.request.object = null' "$tmp/two-slices.json" >"$tmp/null-object.json"
run webhook --review "$tmp/null-object.json" "${fleet[@]}"
expect_rc 2 "a review with a null request.object"
jq -c 'del(.request.kind)' "$tmp/two-slices.json" >"$tmp/no-kind.json"
run webhook --review "$tmp/no-kind.json" "${fleet[@]}"
expect_rc 2 "a review without request.kind"
expect_err_has "request.kind is absent" "no kind"
jq -c '.request.operation = "UPDATE"' "$tmp/two-slices.json" >"$tmp/pod-update.json"
run webhook --review "$tmp/pod-update.json" "${fleet[@]}"
expect_rc 2 "a Pod UPDATE, which deploy/webhook.yaml never sends"
expect_err_has "deploy/webhook.yaml sends Pods on CREATE only" "Pod UPDATE"

# --- the server -----------------------------------------------------------------
command -v openssl >/dev/null && command -v curl >/dev/null || fail "openssl and curl are needed"
# mkcert DIR: a CA and a serving certificate for 127.0.0.1 under DIR.
mkcert() {
	mkdir -p "$1"
	openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 1 -subj "/CN=cli test CA" \
		-keyout "$1/ca.key" -out "$1/ca.crt" 2>/dev/null &&
		openssl req -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -subj "/CN=127.0.0.1" \
			-keyout "$1/tls.key" -out "$1/tls.csr" 2>/dev/null &&
		printf 'subjectAltName=IP:127.0.0.1\n' >"$1/ext" &&
		openssl x509 -req -in "$1/tls.csr" -CA "$1/ca.crt" -CAkey "$1/ca.key" -CAcreateserial \
			-days 1 -extfile "$1/ext" -out "$1/tls.crt" 2>/dev/null || fail "openssl in $1"
}
mkcert "$tmp/a"
mkcert "$tmp/b"
cp "$tmp/a/tls.crt" "$tmp/tls.crt"
cp "$tmp/a/tls.key" "$tmp/tls.key"

# A certificate that is not its key's: refused at start.
run webhook "${fleet[@]}" --tls-cert-file "$tmp/a/tls.crt" --tls-private-key-file "$tmp/b/tls.key" \
	--bind-address 127.0.0.1 --port 1
expect_rc 2 "mismatched pair"
expect_err_has "cannot serve HTTPS on 127.0.0.1:1" "mismatched pair"

serve_webhook "$tmp/a/ca.crt" "${fleet[@]}" \
	--tls-cert-file "$tmp/tls.crt" --tls-private-key-file "$tmp/tls.key"

post() { # FILE CA: fills $out (body) and $code
	out=$(curl -sS --cacert "$2" -H 'Content-Type: application/json' --data-binary "@$1" \
		-w '\n%{http_code}' "$url/validate" 2>&1)
	code=${out##*$'\n'}
	out=${out%$'\n'*}
}
post "$tmp/two-slices.json" "$tmp/a/ca.crt"
[ "$code" = 200 ] || fail "POST /validate: HTTP $code"
[ "$(printf '%s' "$out" | jq -r .response.allowed)" = false ] || fail "two slices allowed over HTTPS"
[ "$(printf '%s' "$out" | jq -r .response.uid)" = uid-two-slices ] || fail "uid not echoed"
[ "$(printf '%s' "$out" | jq -r .response.status.code)" = 403 ] || fail "status.code"
post "$tmp/one-slice.json" "$tmp/a/ca.crt"
[ "$(printf '%s' "$out" | jq -r .response.allowed)" = true ] || fail "one slice refused over HTTPS"
printf 'garbage' >"$tmp/garbage"
post "$tmp/garbage" "$tmp/a/ca.crt"
[ "$code" = 400 ] || fail "garbage: HTTP $code, want 400"
post "$tmp/no-object.json" "$tmp/a/ca.crt"
[ "$code" = 400 ] || fail "a review without request.object: HTTP $code, want 400"
head -c $((7 << 20)) /dev/zero >"$tmp/big"
post "$tmp/big" "$tmp/a/ca.crt"
[ "$code" = 413 ] || fail "7 MiB body: HTTP $code, want 413"
code=$(curl -s -o /dev/null -w '%{http_code}' --cacert "$tmp/a/ca.crt" "$url/validate")
[ "$code" = 405 ] || fail "GET /validate: HTTP $code, want 405"
code=$(curl -s -o /dev/null -w '%{http_code}' --cacert "$tmp/a/ca.crt" "$url/nope")
[ "$code" = 404 ] || fail "GET /nope: HTTP $code, want 404"
code=$(curl -s -o /dev/null -w '%{http_code}' --cacert "$tmp/a/ca.crt" "$url/readyz")
[ "$code" = 200 ] || fail "GET /readyz: HTTP $code, want 200"
# Plain HTTP is not served.
curl -sf "http://127.0.0.1:$port/healthz" >/dev/null 2>&1 && fail "plain HTTP answered"

# The certificate changes on disk: the server takes the new pair without a restart.
cp "$tmp/b/tls.key" "$tmp/tls.key"
cp "$tmp/b/tls.crt" "$tmp/tls.crt"
gs_wait_for 10 gs_http_ready "$url/healthz" --cacert "$tmp/b/ca.crt" ||
	{ err=$(cat "$tmp/log"); fail "the new certificate was not taken"; }
curl -sf --cacert "$tmp/a/ca.crt" "$url/healthz" >/dev/null 2>&1 && fail "the old certificate is still served"
post "$tmp/two-slices.json" "$tmp/b/ca.crt"
[ "$(printf '%s' "$out" | jq -r .response.allowed)" = false ] || fail "after the reload"
# A broken pair on disk: the server keeps serving with the last good one.
printf 'not a key' >"$tmp/tls.key"
gs_wait_for 10 grep -q "keeping the old pair" "$tmp/log" || :
curl -sf --cacert "$tmp/b/ca.crt" "$url/healthz" >/dev/null 2>&1 || { err=$(cat "$tmp/log"); fail "a broken key on disk stopped the server"; }

kill "$pid"
wait "$pid"
rc=$?
pid=
err=$(cat "$tmp/log")
expect_rc 0 "SIGTERM"
expect_err_has "certificate reloaded" "the reload is logged"
expect_err_has "keeping the old pair" "the broken pair is refused"
expect_err_match "stopping: [0-9]+ reviews, [0-9]+ refused, [0-9.]+ ms mean" "the summary"
expect_err_has "CREATE Pod gpu-share/two-slices: refused" "one line per review"
