#!/bin/sh
# fuzz/run.sh [SECONDS]: build every fuzz/fuzz_<name>.c as a libFuzzer target
# (clang, ASan + UBSan) and run each for SECONDS (default 20), seeded from
# fuzz/corpus/<name>/ when it exists. New inputs go to fuzz/corpus-<name>/,
# crashes to build/fuzz/. Exit 1 if any target fails.
set -eu
secs=${1:-20}
cd "$(dirname "$0")/.."
CC=${FUZZ_CC:-clang}
command -v "$CC" >/dev/null || { echo "fuzz: $CC not found (scripts/deps.sh installs it)" >&2; exit 2; }
out=build/fuzz
mkdir -p "$out/obj"
# Generated sources (mk/*.mk) come from the normal build.
make -s all >/dev/null
pkgs="yaml-0.1 jansson libcurl"
cflags="-std=c11 -D_POSIX_C_SOURCE=200809L -g -O1 -fno-omit-frame-pointer -iquote src -Ibuild/gen $(pkg-config --cflags $pkgs)"
libs="$(pkg-config --libs $pkgs) -lm"
san="-fsanitize=address,undefined -fno-sanitize-recover=undefined"
objs=
for src in $(ls src/*/*.c build/gen/*.c 2>/dev/null | grep -v '^src/cmd/'); do
	obj=$out/obj/$(echo "$src" | tr / _ | sed 's/\.c$/.o/')
	if [ ! -f "$obj" ] || [ "$src" -nt "$obj" ] || [ -n "$(find src -name '*.h' -newer "$obj" 2>/dev/null | head -1)" ]; then
		$CC $cflags $san -fsanitize=fuzzer-no-link -c -o "$obj" "$src"
	fi
	objs="$objs $obj"
done
# An archive: each target links only the modules it uses.
rm -f "$out/libfuzz.a"
ar rcs "$out/libfuzz.a" $objs
fail=0
for t in fuzz/fuzz_*.c; do
	name=$(basename "$t" .c)
	$CC $cflags $san -fsanitize=fuzzer -o "$out/$name" "$t" "$out/libfuzz.a" $libs
	mkdir -p "fuzz/corpus-$name"
	seeds=
	[ -d "fuzz/corpus/$name" ] && seeds="fuzz/corpus/$name"
	echo "fuzz: $name for ${secs}s"
	if ! "$out/$name" -max_total_time="$secs" -timeout=10 -rss_limit_mb=2048 -print_final_stats=0 \
		-artifact_prefix="$out/$name-" "fuzz/corpus-$name" $seeds >"$out/$name.log" 2>&1; then
		echo "fuzz: $name FAILED (see $out/$name.log)"
		tail -40 "$out/$name.log"
		fail=1
	else
		echo "fuzz: $name ok ($(grep -c '' "$out/$name.log") log lines, $(ls "fuzz/corpus-$name" | wc -l) corpus inputs)"
	fi
done
exit $fail
