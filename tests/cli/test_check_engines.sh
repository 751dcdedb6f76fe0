#!/usr/bin/env bash
# The two engines of `gpushare check` (stream: fast scanner + filtered load;
# tree: libyaml + whole trees) give identical output and exit status, on the
# benchmark stream, the lab's manifests and a set of odd inputs.
. "$(dirname "$0")/lib.sh"
d=$(mktemp -d)
trap 'rm -rf "$d"' EXIT

same() { # file [options]
	local f=$1 o1 o2 r1 r2
	shift
	run check --engine=stream "$@" "$f"
	o1="$out|$err" r1=$rc
	run check --engine=tree "$@" "$f"
	o2="$out|$err" r2=$rc
	[ "$o1" = "$o2" ] && [ "$r1" = "$r2" ] || {
		echo "stream ($r1): $o1" >&2
		echo "tree   ($r2): $o2" >&2
		fail "engines differ on $f $*"
	}
}

# The benchmark stream (smaller under valgrind, where the tree engine crawls).
pods=8000
[ "$(head -c 2 "$GPUSHARE")" = "#!" ] && pods=300
python3 "$TOP/bench/gen.py" "$d/pods.yaml" "$pods"
same "$d/pods.yaml"
same "$d/pods.yaml" --strict
[ "$rc" = 1 ] || fail "the benchmark stream holds pods over 1 GPU"
case "$out" in *OVER=*) ;; *) fail "no OVER line from the benchmark stream" ;; esac

for f in "$TOP"/k8s/*.yaml; do
	[ -f "$f" ] && same "$f" --strict
done

i=0
while IFS= read -r -d '' doc; do
	i=$((i + 1))
	printf '%s' "$doc" >"$d/case$i.yaml"
	same "$d/case$i.yaml"
	same "$d/case$i.yaml" --strict
done < <(printf '%s\0' \
	$'kind: Pod\nspec:\n  containers:\n  - name: a\n    resources: {limits: {nvidia.com/gpu: 3}}\n' \
	$'kind: Pod\nspec:\n  containers:\n  - name: a\n    resources:\n      limits:\n        nvidia.com/gpu: "2"\n      requests:\n        nvidia.com/gpu: 1\n' \
	$'kind: Pod\nspec:\n  containers:\n  - name: a\n    resources:\n      limits: |\n        nvidia.com/gpu: 2\n' \
	$'kind: Pod\nspec:\n  containers:\n  - &c\n    name: a\n    resources: {limits: {nvidia.com/gpu: 2}}\n  - *c\n' \
	$'kind: Pod\nspec:\n  containers:\n  - name: a\n    resources: {limits: {nvidia.com/gpu: two}}\n' \
	$'kind: Pod\nspec:\n  containers:\n  - name: a\n\tresources: {}\n' \
	$'kind: Pod\nspec:\n  containers:\n  - name: caf\xc3\xa9\n    resources: {limits: {nvidia.com/gpu: 4}}\n' \
	$'kind: Pod\nspec:\n  containers:\n  - name: "esc\\tape"\n    resources: {limits: {nvidia.com/gpu: 4}}\n' \
	$'kind: Pod\nspec:\n  containers:\n  - name: a\n    resources: {limits: {nvidia.com/gpu: 2}}\n---\nkind: Pod\nspec: {containers: [\n' \
	$'kind: Pod\nspec:\n  containers:\n  - name: a\n    resources:\n      limits: {nvidia.com/gpu: 2}\n    image: x\n   bad: indent\n' \
	$'kind: List\nitems:\n- kind: Pod\n  spec:\n    containers:\n    - name: l\n      resources: {requests: {nvidia.com/gpu: 2}}\n' \
	$'kind: Pod\nspec:\n  containers:\n  - name: a\n    resources: {limits: {nvidia.com/gpu: .inf}}\n' \
	$'kind: Pod\r\nspec:\r\n  containers:\r\n  - name: crlf\r\n    resources: {limits: {nvidia.com/gpu: 2}}\r\n')
exit 0
