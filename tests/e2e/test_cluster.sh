#!/usr/bin/env bash
# The control plane is the pinned upstream one and answers over TLS with
# the CA from .cluster/pki.
. "$TOP/tests/e2e/lib.sh"

run curl -fsS --cacert "$GS_CA" --cert "${GS_CA%/ca.crt}/admin.crt" \
	--key "${GS_CA%/ca.crt}/admin.key" "$GS_APISERVER/readyz"
expect_rc 0 "/readyz with the admin client certificate"
expect_eq "$out" "ok" "/readyz body"

# The build stamps the version (ldflags); an unstamped build reports v0.0.0.
run k version -o json
expect_rc 0 "kubectl version"
expect_eq "$(printf '%s' "$out" | jq -r .serverVersion.gitVersion)" "$K8S_VERSION" "server version"
expect_eq "$(printf '%s' "$out" | jq -r .clientVersion.gitVersion)" "$K8S_VERSION" "kubectl version"

# The serving certificate names 127.0.0.1 and localhost.
host=${GS_APISERVER#https://}
port=${host##*:}
run curl -fsS --cacert "$GS_CA" -H "Authorization: Bearer $GS_ADMIN_TOKEN" \
	"https://localhost:$port/version"
expect_rc 0 "TLS to localhost:$port verifies against the CA"
