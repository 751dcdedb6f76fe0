#!/usr/bin/env bash
# make image-test: builds the image (scripts/image/build.sh) and runs it with
# buildah, no registry and no daemon. Usage: run.sh GPUSHARE-BINARY
#   - `gpushare version` in the image prints what the binary prints here
#     (the loader and every linked library are in);
#   - an API request from the image fails for the right reason, the
#     connection refused, not a library missing: libcurl.so.4, loaded at
#     run time, and its own libraries are in;
#   - the image runs as 65532, the non-root user the chart asks for.
# Without buildah this says so and passes (skipped).
set -uo pipefail
[ $# = 1 ] || {
	echo "usage: $0 GPUSHARE-BINARY" >&2
	exit 2
}
bin=$1
top=$(cd "$(dirname "$0")/../.." && pwd)
if ! command -v buildah >/dev/null; then
	echo "image: SKIPPED: buildah not found (Debian: apt-get install buildah)"
	exit 0
fi
# shellcheck disable=SC2206
buildah=(${BUILDAH:-buildah} --storage-driver vfs)
fail=0
bad() {
	fail=1
	echo "FAIL image: $*"
}

image=$("$top/scripts/image/build.sh" "$bin") || {
	echo "FAIL image: scripts/image/build.sh failed"
	exit 1
}
ctr=$("${buildah[@]}" from --name "gpushare-image-test-$$" "$image") || {
	echo "FAIL image: buildah from $image failed"
	exit 1
}
trap '"${buildah[@]}" rm "$ctr" >/dev/null 2>&1' EXIT
inimage() { "${buildah[@]}" run --isolation chroot "$ctr" -- "$@"; }

want=$("$bin" version)
got=$(inimage gpushare version 2>&1)
[ "$got" = "$want" ] || bad "gpushare version in $image: '$got', want '$want'"

got=$(inimage gpushare status --server https://127.0.0.1:1 --token not-a-secret 2>&1)
case $got in
*"The connection to the server 127.0.0.1:1 was refused"*) ;;
*) bad "an API request in $image: want the connection refused, got: $got" ;;
esac

user=$("${buildah[@]}" inspect --format '{{.OCIv1.Config.User}}' "$image")
[ "$user" = 65532:65532 ] || bad "$image runs as '$user', want 65532:65532"

size=$("${buildah[@]}" images --format '{{.Size}}' "$image" | head -1)
[ $fail = 1 ] || echo "ok   image $image ($size): version, an API request, user 65532"
exit $fail
