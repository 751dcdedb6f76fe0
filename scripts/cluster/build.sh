#!/usr/bin/env bash
# Build the pinned upstream control plane (etcd, kube-apiserver,
# kube-controller-manager, kube-scheduler, kubectl, kwok) from the Go module
# proxy into a cache keyed by version. A cache hit builds nothing.
#
#   build.sh          the control plane; prints K8S_BIN=, ETCD_BIN=, KWOK_BIN=
#   build.sh helm     helm only (the chart's lint, template and install);
#                     prints HELM_BIN=
# Each line names the directory holding that component's binaries.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
. "$here/versions.sh"

cache=${GPUSHARE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/gpushare}
kube_dir=$cache/k8s-$K8S_VERSION
etcd_dir=$cache/etcd-$ETCD_VERSION
kwok_dir=$cache/kwok-$KWOK_VERSION
helm_dir=$cache/helm-$HELM_VERSION

what=control-plane
case ${1:-} in
'') ;;
helm) what=helm ;;
*)
	printf 'usage: %s [helm]\n' "$0" >&2
	exit 2
	;;
esac

# A cache hit needs no lock: each component's directory is moved into
# place whole once built, so one that is there is complete. A cluster of a
# built version starts while another version builds.
built() {
	local b
	if [ "$what" = helm ]; then
		[ -x "$helm_dir/helm" ] || return 1
		printf 'HELM_BIN=%s\n' "$helm_dir"
		return 0
	fi
	for b in "$etcd_dir/etcd" "$kwok_dir/kwok" "$kube_dir/kube-apiserver" \
		"$kube_dir/kube-controller-manager" "$kube_dir/kube-scheduler" "$kube_dir/kubectl"; do
		[ -x "$b" ] || return 1
	done
	printf 'K8S_BIN=%s\nETCD_BIN=%s\nKWOK_BIN=%s\n' "$kube_dir" "$etcd_dir" "$kwok_dir"
}
built && exit 0

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

# helm's own Makefile sets the same ldflags: its version, and the Kubernetes
# version its lint and template assume (client-go v0.X.Y is Kubernetes
# 1.X), from the client-go that go.mod pins.
build_helm() {
	local cg major minor ldf
	cg=$(cd "$top/tools/helm" && go list -m -f '{{.Version}}' k8s.io/client-go)
	cg=${cg#v}
	major=$((${cg%%.*} + 1))
	minor=${cg#*.}
	minor=${minor%%.*}
	ldf="-s -w"
	ldf+=" -X helm.sh/helm/v3/internal/version.version=$HELM_VERSION"
	ldf+=" -X helm.sh/helm/v3/internal/version.gitTreeState=clean"
	ldf+=" -X helm.sh/helm/v3/pkg/lint/rules.k8sVersionMajor=$major"
	ldf+=" -X helm.sh/helm/v3/pkg/lint/rules.k8sVersionMinor=$minor"
	ldf+=" -X helm.sh/helm/v3/pkg/chartutil.k8sVersionMajor=$major"
	ldf+=" -X helm.sh/helm/v3/pkg/chartutil.k8sVersionMinor=$minor"
	mkdir -p "$helm_dir.tmp"
	(cd "$top/tools/helm" && go build -trimpath -ldflags "$ldf" \
		-o "$helm_dir.tmp/helm" helm.sh/helm/v3/cmd/helm)
	rm -rf "$helm_dir" && mv "$helm_dir.tmp" "$helm_dir"
}

# make (make helm) may run without /usr/local/go/bin on PATH.
command -v go >/dev/null || [ ! -x /usr/local/go/bin/go ] || PATH=$PATH:/usr/local/go/bin
command -v go >/dev/null || {
	log "go not found (expected /usr/local/go/bin/go); it builds the upstream $what"
	exit 2
}

if [ "$what" = helm ]; then
	[ -x "$helm_dir/helm" ] || with_progress "helm $HELM_VERSION" build_helm
	[ -x "$helm_dir/helm" ] || { log "missing after build: $helm_dir/helm"; exit 1; }
	printf 'HELM_BIN=%s\n' "$helm_dir"
	exit 0
fi

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
