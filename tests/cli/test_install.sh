# make install PREFIX=DIR (and DESTDIR) on the built tree: the binary, the
# man page gpushare(1) generated from the option tables (it renders without
# warnings), the bash and zsh completions; the installed binary runs.
. "$(dirname "$0")/lib.sh"
use_tmp

# The build directory of the binary under test (build/asan for make asan);
# under valgrind $GPUSHARE is a wrapper, and the plain build is the one.
bdir=$(cd "$(dirname "$GPUSHARE")" && pwd)
[ -f "$bdir/libgpushare.a" ] || bdir=$TOP/build
build=${bdir#"$TOP"/}
out=$(make -s -C "$TOP" install BUILD="$build" PREFIX="$tmp/usr" 2>&1) || fail "make install"
for f in bin/gpushare share/man/man1/gpushare.1 share/bash-completion/completions/gpushare \
	share/zsh/site-functions/_gpushare; do
	[ -s "$tmp/usr/$f" ] || fail "make install: no $f"
done
[ -x "$tmp/usr/bin/gpushare" ] || fail "the binary is not executable"
out=$("$tmp/usr/bin/gpushare" version) || fail "installed gpushare version"
expect_out_has "gpushare " "installed version"

out=$(make -s -C "$TOP" install BUILD="$build" PREFIX=/opt/gs DESTDIR="$tmp/dest" 2>&1) ||
	fail "make install DESTDIR"
[ -x "$tmp/dest/opt/gs/bin/gpushare" ] || fail "DESTDIR: no bin/gpushare"
[ -s "$tmp/dest/opt/gs/share/man/man1/gpushare.1" ] || fail "DESTDIR: no man page"

# The man page: one section per command, with its options and examples.
page=$tmp/usr/share/man/man1/gpushare.1
for c in advertise check plan explain dra version completion; do
	grep -q "^\.SH \"GPUSHARE $(echo "$c" | tr a-z A-Z)\"" "$page" || fail "man page: no $c section"
done
grep -q '^\.SS "gpushare dra translate"' "$page" || fail "man page: no dra translate"
grep -q 'gpushare plan \\-f k8s/ \\-o json' "$page" || fail "man page: plan's example"
grep -q '\\fB\\-o\\fR, \\fB\\-\\-output\\fR \\fIFORMAT\\fR' "$page" || fail "man page: -o, --output"
cmp -s "$page" <("$GPUSHARE" __manpage) || fail "installed man page is not what __manpage prints"
if command -v groff >/dev/null; then
	w=$(groff -man -ww -z "$page" 2>&1) || fail "groff: $w"
	[ -z "$w" ] || { err=$w; fail "groff warns"; }
else
	echo "groff is not installed: the man page's warnings are not checked" >&2
fi
if command -v man >/dev/null; then
	w=$(MANROFFSEQ='' man --warnings -l "$page" 2>&1 >/dev/null)
	[ -z "$w" ] || { err=$w; fail "man --warnings"; }
fi
cmp -s "$tmp/usr/share/bash-completion/completions/gpushare" <("$GPUSHARE" completion bash) ||
	fail "installed bash completion"
exit 0
