#!/bin/sh
# Install what gpushare needs on Debian (bookworm). Quiet and quick when all is there.
#   deps.sh --ci   also what only CI uses: buildah (make image-test)
set -eu
pkgs="build-essential pkg-config libyaml-dev libjansson-dev libcurl4-openssl-dev libmicrohttpd-dev libcmocka-dev
clang clang-format libclang-rt-14-dev valgrind python3 python3-yaml openssl curl jq
chromium"
[ "${1:-}" != --ci ] || pkgs="$pkgs buildah"
missing=
for p in $pkgs; do
	dpkg-query -W -f='${Status}\n' "$p" 2>/dev/null | grep -q '^install ok installed' || missing="$missing $p"
done
[ -z "$missing" ] && exit 0
echo "deps: installing$missing"
SUDO=
[ "$(id -u)" = 0 ] || SUDO=sudo
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
# shellcheck disable=SC2086
$SUDO apt-get install -y -qq $missing >/dev/null
