#!/usr/bin/env bash
# Build the pinned upstream control plane (etcd, kube-apiserver,
# kube-controller-manager, kube-scheduler, kubectl, kwok) from the Go module
# proxy into a cache keyed by version. A cache hit builds nothing.
#
# Prints the directory holding the binaries on its last line of stdout.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
. "$here/versions.sh"

cache=${GPUSHARE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/gpushare}
kube_dir=$cache/k8s-$K8S_VERSION
etcd_dir=$cache/etcd-$ETCD_VERSION
kwok_dir=$cache/kwok-$KWOK_VERSION

# One build per cache at a time, however it was started (up.sh, make, by
# hand): a second one waits for the first one's cold build, then hits its
# cache.
mkdir -p "$cache"
exec 8>"$cache/.build.lock"
if ! flock -n 8; then
	printf 'build: another build of %s is under way; waiting for it\n' "$cache" >&2
	flock 8
fi

export GOTOOLCHAIN=local CGO_ENABLED=0 GOFLAGS=-mod=mod

log() { printf 'build: %s\n' "$*" >&2; }

# A cold build of the kube binaries runs for many minutes; say so every 30s
# so nobody mistakes it for a hang.
with_progress() {
	local what=$1
	shift
	local start=$SECONDS
	"$@" &
	local pid=$!
	while kill -0 "$pid" 2>/dev/null; do
		sleep 5
		if kill -0 "$pid" 2>/dev/null && (((SECONDS - start) % 30 < 5)); then
			log "$what: still building ($((SECONDS - start))s)"
		fi
	done
	wait "$pid"
	log "$what: done in $((SECONDS - start))s"
}

build_kube() {
	local minor=${K8S_VERSION#v1.}
	minor=${minor%%.*}
	local ldf="-s -w"
	ldf+=" -X k8s.io/component-base/version.gitVersion=$K8S_VERSION"
	ldf+=" -X k8s.io/component-base/version.gitMajor=1"
	ldf+=" -X k8s.io/component-base/version.gitMinor=$minor"
	ldf+=" -X k8s.io/component-base/version.gitTreeState=clean"
	ldf+=" -X k8s.io/client-go/pkg/version.gitVersion=$K8S_VERSION"
	ldf+=" -X k8s.io/client-go/pkg/version.gitMajor=1"
	ldf+=" -X k8s.io/client-go/pkg/version.gitMinor=$minor"
	mkdir -p "$kube_dir.tmp"
	(cd "$top/tools/kube/$K8S_VERSION" && go build -trimpath -tags grpcnotrace -ldflags "$ldf" \
		-o "$kube_dir.tmp/" \
		k8s.io/kubernetes/cmd/kube-apiserver \
		k8s.io/kubernetes/cmd/kube-controller-manager \
		k8s.io/kubernetes/cmd/kube-scheduler \
		k8s.io/kubernetes/cmd/kubectl)
	rm -rf "$kube_dir" && mv "$kube_dir.tmp" "$kube_dir"
}

build_etcd() {
	mkdir -p "$etcd_dir.tmp"
	(cd "$top/tools/etcd/$ETCD_VERSION" && go build -trimpath -ldflags "-s -w" \
		-o "$etcd_dir.tmp/etcd" go.etcd.io/etcd/server/v3)
	rm -rf "$etcd_dir" && mv "$etcd_dir.tmp" "$etcd_dir"
}

build_kwok() {
	mkdir -p "$kwok_dir.tmp"
	(cd "$top/tools/kwok" && go build -trimpath -ldflags "-s -w" \
		-o "$kwok_dir.tmp/kwok" sigs.k8s.io/kwok/cmd/kwok)
	# kwok v0.8 ships no built-in stages: keep the ones from its module
	# next to the binary so the cache is self-contained.
	local src
	src=$(cd "$top/tools/kwok" && go list -m -f '{{.Dir}}' sigs.k8s.io/kwok)
	cp -r "$src/kustomize/stage" "$kwok_dir.tmp/stage"
	chmod -R u+w "$kwok_dir.tmp/stage"
	rm -rf "$kwok_dir" && mv "$kwok_dir.tmp" "$kwok_dir"
}

command -v go >/dev/null || {
	log "go not found (expected /usr/local/go/bin/go); it builds the upstream control plane"
	exit 2
}

[ -x "$etcd_dir/etcd" ] || with_progress "etcd $ETCD_VERSION" build_etcd
[ -x "$kwok_dir/kwok" ] || with_progress "kwok $KWOK_VERSION" build_kwok
if [ ! -x "$kube_dir/kubectl" ]; then
	log "kubernetes $K8S_VERSION: cold build, this takes a while on a small machine"
	with_progress "kubernetes $K8S_VERSION" build_kube
fi

for b in "$etcd_dir/etcd" "$kwok_dir/kwok" "$kube_dir/kube-apiserver" \
	"$kube_dir/kube-controller-manager" "$kube_dir/kube-scheduler" "$kube_dir/kubectl"; do
	[ -x "$b" ] || { log "missing after build: $b"; exit 1; }
done
printf 'K8S_BIN=%s\nETCD_BIN=%s\nKWOK_BIN=%s\n' "$kube_dir" "$etcd_dir" "$kwok_dir"
