#!/usr/bin/env bash
# gpushare check / bin/check-request.sh: the lab's contract (step 6 of README.md, The lab):
# OVER=<container>=<count> per container whose nvidia.com/gpu limit or
# request is more than 1 (exit 1), else exactly OK (exit 0).
. "$(dirname "$0")/lib.sh"
d=$(mktemp -d)
trap 'rm -rf "$d"' EXIT

cat >"$d/over.yaml" <<'EOF'
apiVersion: v1
kind: Pod
metadata:
  name: greedy
spec:
  containers:
  - name: trainer
    image: registry.k8s.io/pause:3.10
    resources:
      limits:
        nvidia.com/gpu: 2
  - name: sidecar
    image: registry.k8s.io/pause:3.10
    resources:
      limits:
        nvidia.com/gpu: 1
EOF
run check "$d/over.yaml"
expect_rc 1 "one container over"
expect_out "OVER=trainer=2" "limits only"

# The wrapper prints the same bytes and exits the same way.
run_sh "$TOP/bin/check-request.sh" "$d/over.yaml"
expect_rc 1 "wrapper"
expect_out "OVER=trainer=2" "wrapper output"
[ "$(GPUSHARE=$GPUSHARE "$TOP/bin/check-request.sh" "$d/over.yaml" | od -c)" = "$(printf 'OVER=trainer=2\n' | od -c)" ] ||
	fail "wrapper output is not byte-exact"

cat >"$d/ok.yaml" <<'EOF'
apiVersion: v1
kind: Pod
metadata: {name: one}
spec:
  containers:
  - name: single
    image: x
    resources:
      limits: {nvidia.com/gpu: 1}
      requests: {nvidia.com/gpu: 1}
EOF
run check "$d/ok.yaml"
expect_rc 0 "one GPU"
expect_out "OK"
[ "$(GPUSHARE=$GPUSHARE "$TOP/bin/check-request.sh" "$d/ok.yaml" | od -c)" = "$(printf 'OK\n' | od -c)" ] ||
	fail "OK is not byte-exact"

cat >"$d/nogpu.yaml" <<'EOF'
apiVersion: v1
kind: Pod
metadata: {name: web}
spec:
  containers:
  - name: web
    image: nginx
    resources:
      limits: {cpu: "4", memory: 8Gi}
  - name: bare
    image: busybox
EOF
run check "$d/nogpu.yaml"
expect_rc 0 "a pod with no GPU passes"
expect_out "OK"

# requests only, string quantities, milli and exponent forms.
cat >"$d/forms.yaml" <<'EOF'
kind: Pod
spec:
  containers:
  - name: req-only
    resources:
      requests:
        nvidia.com/gpu: 3
  - name: quoted
    resources:
      limits:
        nvidia.com/gpu: "2"
  - name: milli
    resources:
      limits:
        nvidia.com/gpu: 2000m
  - name: milli-one
    resources:
      limits:
        nvidia.com/gpu: 1000m
  - name: exponent
    resources:
      limits:
        nvidia.com/gpu: "1e1"
  - name: float
    resources:
      limits:
        nvidia.com/gpu: 2.0
  - name: zero
    resources:
      limits:
        nvidia.com/gpu: 0
  - name: other-resource
    resources:
      limits:
        nvidia.com/mig-1g.10gb: 3
EOF
run check "$d/forms.yaml"
expect_rc 1 "quantity forms"
expect_out "$(printf 'OVER=req-only=3\nOVER=quoted=2\nOVER=milli=2\nOVER=exponent=10\nOVER=float=2')
$d/forms.yaml:7:25: container \"req-only\": spec.containers[0].resources.limits: Required value: Limit must be set for non overcommitable resources" "quantity forms, and the apiserver's refusal of a request without a limit"

# Both set and both over 1: one line, the larger value.
cat >"$d/both.yaml" <<'EOF'
kind: Pod
spec:
  containers:
  - name: both
    resources:
      requests: {nvidia.com/gpu: 2}
      limits: {nvidia.com/gpu: 4}
  - name: limit-high
    resources:
      requests: {nvidia.com/gpu: 1}
      limits: {nvidia.com/gpu: 3}
EOF
run check "$d/both.yaml"
expect_rc 1
expect_out "$(printf 'OVER=both=4\nOVER=limit-high=3')
$d/both.yaml:6:34: container \"both\": spec.containers[0].resources.requests: Invalid value: \"2\": must be equal to nvidia.com/gpu limit of 4
$d/both.yaml:10:34: container \"limit-high\": spec.containers[1].resources.requests: Invalid value: \"1\": must be equal to nvidia.com/gpu limit of 3" "larger of limit and request; the apiserver wants them equal"

# Several documents, kinds with pod templates, init containers, List.
cat >"$d/multi.yaml" <<'EOF'
apiVersion: v1
kind: ConfigMap
metadata: {name: cm}
data:
  spec: "not a pod"
---
apiVersion: batch/v1
kind: CronJob
metadata: {name: nightly}
spec:
  schedule: "0 0 * * *"
  jobTemplate:
    spec:
      template:
        spec:
          restartPolicy: Never
          initContainers:
          - name: prepare
            resources:
              limits: {nvidia.com/gpu: 2}
          containers:
          - name: train
            resources:
              limits: {nvidia.com/gpu: 8}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: web}
spec:
  template:
    spec:
      containers:
      - name: serve
        resources:
          limits: {nvidia.com/gpu: 2}
---
---
apiVersion: v1
kind: List
items:
- apiVersion: v1
  kind: Pod
  metadata: {name: a}
  spec:
    containers:
    - name: in-list
      resources:
        requests: {nvidia.com/gpu: 5}
- apiVersion: v1
  kind: Service
  metadata: {name: s}
  spec:
    ports: [{port: 80}]
- apiVersion: batch/v1
  kind: Job
  spec:
    template:
      spec:
        containers:
        - name: job
          resources:
            limits: {nvidia.com/gpu: 1}
EOF
run check "$d/multi.yaml"
expect_rc 1 "multi-document"
expect_out "$(printf 'OVER=train=8\nOVER=prepare=2\nOVER=serve=2\nOVER=in-list=5')
$d/multi.yaml:48:36: container \"in-list\": spec.containers[0].resources.limits: Required value: Limit must be set for non overcommitable resources" "multi-document"

for k in StatefulSet DaemonSet ReplicaSet ReplicationController Job; do
	printf 'kind: %s\nspec:\n  template:\n    spec:\n      containers:\n      - name: c\n        resources: {limits: {nvidia.com/gpu: 2}}\n' "$k" >"$d/k.yaml"
	run check "$d/k.yaml"
	expect_rc 1 "$k"
	expect_out "OVER=c=2" "$k"
done
printf 'kind: PodTemplate\ntemplate:\n  spec:\n    containers:\n    - name: t\n      resources: {limits: {nvidia.com/gpu: 2}}\n' >"$d/pt.yaml"
run check "$d/pt.yaml"
expect_out "OVER=t=2" "PodTemplate"
# A typed list: items without a kind take the list's.
printf 'kind: PodList\nitems:\n- spec:\n    containers:\n    - name: typed\n      resources: {limits: {nvidia.com/gpu: 2}}\n' >"$d/pl.yaml"
run check "$d/pl.yaml"
expect_out "OVER=typed=2" "PodList"
# Kinds that carry no pod template are skipped even with a lookalike spec.
printf 'kind: Service\nspec:\n  containers:\n  - name: nope\n    resources: {limits: {nvidia.com/gpu: 2}}\n' >"$d/svc.yaml"
run check "$d/svc.yaml"
expect_rc 0 "Service skipped"
expect_out "OK"

# Empty file, comments only, empty documents.
: >"$d/empty.yaml"
run check "$d/empty.yaml"
expect_rc 0 "empty file"
expect_out "OK"
printf '# nothing\n---\n---\n' >"$d/comments.yaml"
run check "$d/comments.yaml"
expect_rc 0 "comments and empty documents"
expect_out "OK"

# kind after spec, anchors and merge keys, YAML 1.1 quirks.
cat >"$d/late.yaml" <<'EOF'
spec:
  containers:
  - &base
    name: late
    resources:
      limits: {nvidia.com/gpu: 0x2}
  - <<: *base
    name: merged
kind: Pod
EOF
run check "$d/late.yaml"
expect_rc 1 "kind after spec, merge"
expect_out "$(printf 'OVER=late=2\nOVER=merged=2')" "kind after spec, merge"

# Standard input.
run check - <"$d/over.yaml"
expect_rc 1 "stdin"
expect_out "OVER=trainer=2"

# The lab's own manifests ask for one device each.
for f in "$TOP"/k8s/*.yaml; do
	[ -f "$f" ] || continue
	run check "$f"
	expect_rc 0 "$f"
	expect_out "OK" "$f"
done
exit 0
