#!/usr/bin/env bash
# `gpushare dra translate` prints YAML a user applies: the real apiserver
# accepts every object of its output for the lab's own files and for the
# shapes golden case (server-side dry run, in namespaces of this test).
. "$TOP/tests/e2e/lib.sh"

run "$GPUSHARE" advertise --dra --device-classes
expect_rc 0 "device classes"
printf '%s\n' "$out" | run k apply -f -
expect_rc 0 "apply the driver's DeviceClasses"

# check TRANSLATION: every document accepted by a server-side dry run.
check() {
	local text=$1 what=$2 docs
	docs=$(printf '%s\n' "$text" | grep -c '^kind: ')
	printf '%s\n' "$text" | run k apply --dry-run=server -f -
	expect_rc 0 "$what: kubectl apply --dry-run=server"
	expect_eq "$(printf '%s\n' "$out" | grep -c '(server dry run)$')" "$docs" \
		"$what: every object accepted"
	expect_has "$out" "resourceclaim.resource.k8s.io/" "$what: a claim"
	expect_has "$out" "resourceclaimtemplate.resource.k8s.io/" "$what: a template"
}

a=$(e2e_name tr-a) g=$(e2e_name tr-g) m=$(e2e_name tr-ml)
e2e_namespace "$a"
e2e_namespace "$g"
e2e_namespace "$m"

k8s=(namespaces.yaml device-plugin-configs.yaml lab-nodes.yaml gpu-quota.yaml team-a-pods.yaml
	team-over.yaml mig-job.yaml placement.yaml)
run "$GPUSHARE" dra translate "${k8s[@]/#/k8s/}"
expect_rc 0 "translate the lab's files"
seed=$(printf '%s\n' "$out" | sed -e "s/^\(  *\)namespace: team-a\$/\1namespace: $a/" \
	-e "s/^\(  *\)namespace: gpu-share\$/\1namespace: $g/" \
	-e "s/^  name: team-a\$/  name: $a/" -e "s/^  name: gpu-share\$/  name: $g/")
check "$seed" "the lab"

run "$GPUSHARE" dra translate -f tests/golden/dra-translate-shapes/cm.yaml --configmap gpu-operator/dp \
	tests/golden/dra-translate-shapes/workloads.yaml
expect_rc 0 "translate the shapes case"
check "$(printf '%s\n' "$out" | sed -e "s/^\(  *\)namespace: ml\$/\1namespace: $m/")" "shapes"
exit 0
