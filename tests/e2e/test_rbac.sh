#!/usr/bin/env bash
# RBAC is on: the token user e2e-user is authenticated but has no rights,
# and the apiserver says so with a 403; a bad token gets a 401.
. "$TOP/tests/e2e/lib.sh"

ns=$(e2e_name rbac)
e2e_namespace "$ns"

run ku -n "$ns" get pods
expect_rc 1 "kubectl as e2e-user"
expect_has "$err" "Error from server (Forbidden): pods is forbidden: User \"e2e-user\" cannot list resource \"pods\" in API group \"\" in the namespace \"$ns\"" "RBAC refusal"

run ku get nodes
expect_rc 1 "cluster-scoped list as e2e-user"
expect_has "$err" 'nodes is forbidden: User "e2e-user" cannot list resource "nodes" in API group "" at the cluster scope' "cluster scope refusal"

run ku -n "$ns" auth can-i create pods
expect_eq "$out" "no" "can-i"

api GET "/api/v1/namespaces/$ns/pods" "$GS_USER_TOKEN"
expect_eq "$status" "403" "HTTP status as e2e-user"
expect_eq "$(printf '%s' "$out" | jq -r .kind)" "Status" "body kind"
expect_eq "$(printf '%s' "$out" | jq -r .reason)" "Forbidden" "Status.reason"
expect_eq "$(printf '%s' "$out" | jq -r .details.kind)" "pods" "Status.details.kind"

api GET "/api/v1/namespaces/$ns/pods" "not-a-valid-token"
expect_eq "$status" "401" "HTTP status with a bad token"
expect_eq "$(printf '%s' "$out" | jq -r .reason)" "Unauthorized" "Status.reason for a bad token"

# Positive control: the admin token may.
api GET "/api/v1/namespaces/$ns/pods" "$GS_ADMIN_TOKEN"
expect_eq "$status" "200" "HTTP status as admin"
