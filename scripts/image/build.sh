#!/usr/bin/env bash
# Build the container image localhost/gpushare:VERSION without a registry
# and without a daemon: buildah, vfs storage, from scratch. Usage:
#   build.sh GPUSHARE-BINARY
#
# The image holds the binary, every shared library it links (ldd) and the
# one it loads at run time (libcurl.so.4, dlopen()ed by src/kube/curlapi.c on
# the first API request) with that library's own, the dynamic loader, the
# CA bundle (a kubeconfig without a CA trusts the system's, as kubectl), and
# a passwd/group naming the non-root user 65532 the chart runs it as.
# VERSION is `GPUSHARE version`'s. Prints the image name on stdout.
#
#   GS_IMAGE=NAME:TAG  another name    BUILDAH="buildah --root DIR ..."  another store
set -euo pipefail

[ $# = 1 ] || {
	echo "usage: $0 GPUSHARE-BINARY" >&2
	exit 2
}
bin=$1
log() { printf 'image: %s\n' "$*" >&2; }
die() {
	log "$*"
	exit 1
}
[ -x "$bin" ] || die "$bin is not an executable (run make first)"
command -v buildah >/dev/null ||
	die "buildah not found: install it (Debian: apt-get install buildah) or build with the Dockerfile (docs/guide/helm.md, \"The image\")"
# shellcheck disable=SC2206
buildah=(${BUILDAH:-buildah} --storage-driver vfs)

version=$("$bin" version | awk 'NR == 1 {print $2}')
[ -n "$version" ] || die "$bin version printed no version"
image=${GS_IMAGE:-localhost/gpushare:$version}

# The library loaded at run time, found as the loader would find it.
curl_so=$(ldconfig -p | awk '$1 == "libcurl.so.4" && /x86-64|AArch64|64bit/ {print $NF; exit}')
[ -n "$curl_so" ] || curl_so=$(ldconfig -p | awk '$1 == "libcurl.so.4" {print $NF; exit}')
[ -n "$curl_so" ] || die "libcurl.so.4 not found by ldconfig -p (Debian package libcurl4): gpushare loads it at run time"

# ldd FILE: the absolute paths it needs, the loader included; a library
# ldd cannot find is an error here, not a broken image later.
needs() {
	local out
	out=$(ldd "$1") || die "ldd $1 failed"
	if grep -q 'not found' <<<"$out"; then
		die "ldd $1: $(grep 'not found' <<<"$out" | tr -s ' \t' ' ')"
	fi
	awk '$2 == "=>" && $3 ~ /^\// {print $3} $1 ~ /^\// {print $1}' <<<"$out"
}

root=$(mktemp -d)
ctr=
cleanup() {
	[ -z "$ctr" ] || "${buildah[@]}" rm "$ctr" >/dev/null 2>&1 || true
	rm -rf "$root"
}
trap cleanup EXIT

mkdir -p "$root/usr/bin" "$root/etc/ssl/certs" "$root/tmp"
chmod 1777 "$root/tmp"
install -m 0755 "$bin" "$root/usr/bin/gpushare"
# Each library under the path ldd names (the loader searches the same
# default directories in the image as here), its symlink chain resolved.
n=0
for lib in $({
	needs "$bin"
	echo "$curl_so"
	needs "$curl_so"
} | sort -u); do
	mkdir -p "$root$(dirname "$lib")"
	cp -L "$lib" "$root$lib"
	n=$((n + 1))
done
# The loader's cache, so no search is needed at all.
ldconfig -r "$root" 2>/dev/null || true
for ca in /etc/ssl/certs/ca-certificates.crt /etc/pki/tls/certs/ca-bundle.crt; do
	if [ -f "$ca" ]; then
		cp "$ca" "$root/etc/ssl/certs/ca-certificates.crt"
		break
	fi
done
printf 'root:x:0:0:root:/root:/sbin/nologin\nnonroot:x:65532:65532:nonroot:/nonexistent:/sbin/nologin\n' >"$root/etc/passwd"
printf 'root:x:0:\nnonroot:x:65532:\n' >"$root/etc/group"

ctr=$("${buildah[@]}" from scratch)
"${buildah[@]}" copy "$ctr" "$root/" / >/dev/null
"${buildah[@]}" config \
	--entrypoint '["/usr/bin/gpushare"]' --cmd version \
	--user 65532:65532 --workingdir / \
	--env PATH=/usr/bin \
	--label org.opencontainers.image.title=gpushare \
	--label "org.opencontainers.image.version=$version" \
	"$ctr"
"${buildah[@]}" commit --quiet --rm "$ctr" "$image" >/dev/null
ctr=
size=$(du -sk "$root" | awk '{print $1}')
log "built $image: gpushare $version, $n shared objects (the loader included), $((size / 1024)) MB"
printf '%s\n' "$image"
