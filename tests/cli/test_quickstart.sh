#!/usr/bin/env bash
# docs/quickstart.md cannot rot: every command of its ```sh blocks runs, in
# order, in one shell, from a copy of the repository root whose build/gpushare
# is the binary under test. A command must exit 0, or the status its trailing
# `# exits N` comment names. A line ending in `\` continues on the next;
# lines starting with `#` are comments.
. "$(dirname "$0")/lib.sh"
use_tmp

# page_script PAGE: the shell script that runs PAGE's commands, each followed
# by a check of its exit status naming PAGE:LINE.
page_script() {
	echo 'n=0'
	awk -v page="$1" '
	function flush() {
		if (cmd == "") return
		want = 0
		if (match(cmd, /#[ \t]*exits[ \t]+[0-9]+[ \t]*$/)) {
			want = substr(cmd, RSTART, RLENGTH)
			gsub(/[^0-9]/, "", want)
		}
		print cmd
		printf "rc=$?; n=$((n + 1)); if [ \"$rc\" != %d ]; then echo \"%s:%d: exit $rc, want %d: $(sed -n %dp \"%s\")\" >&2; exit 1; fi\n", want, page, line, want, line, page
		cmd = ""
	}
	/^```sh[ \t]*$/ { inblock = 1; next }
	/^```/ && inblock { flush(); inblock = 0; next }
	!inblock { next }
	cmd == "" && /^[ \t]*(#|$)/ { next }
	{
		if (cmd == "") { line = NR; cmd = $0 } else cmd = cmd "\n" $0
		if ($0 !~ /\\$/) flush()
	}
	END { flush() }
	' "$1"
	echo 'echo "$n commands ran"'
}

# run_page PAGE: runs its commands in a fresh copy of the root; sets $out,
# $err, $rc.
run_page() {
	local root
	root=$(mktemp -d "$tmp/root.XXXXXX")
	for f in "$TOP"/*; do
		case $(basename "$f") in
		build | out) ;;
		*) ln -s "$f" "$root/" ;;
		esac
	done
	mkdir "$root/build"
	printf '#!/bin/sh\nexec "%s" "$@"\n' "$GPUSHARE" >"$root/build/gpushare"
	chmod +x "$root/build/gpushare"
	page_script "$1" >"$root.sh"
	run_sh bash -c 'set -o pipefail; cd "$1" && . "$2"' sh "$root" "$root.sh"
}

# The runner must catch what it exists to catch: a command that fails, and
# one that exits 0 where the page promises a finding.
printf '```sh\nexport PATH="$PWD/build:$PATH"\ngpushare --help >/dev/null\n```\n\n```sh\ngpushare plan \\\n  -f nosuch.yaml\n```\n' >"$tmp/bad.md"
run_page "$tmp/bad.md"
expect_rc 1 "a failing command fails the page"
expect_err_has "bad.md:7: exit 2, want 0"
printf '```sh\nexport PATH="$PWD/build:$PATH"\ngpushare --help   # exits 1\n```\n' >"$tmp/finding.md"
run_page "$tmp/finding.md"
expect_rc 1 "a promised finding that does not come fails the page"
expect_err_has "finding.md:3: exit 0, want 1"
printf 'text\n\n```sh\n# a comment\nexport PATH="$PWD/build:$PATH"\ngpushare lint nosuch.yaml   # exits 2\n```\n```text\nfalse\n```\n' >"$tmp/good.md"
run_page "$tmp/good.md"
expect_rc 0 "a page whose commands do what it says"
expect_out_has "2 commands ran"

# The page itself.
run_page "$TOP/docs/quickstart.md"
if [ "$rc" != 0 ]; then
	printf 'FAIL: docs/quickstart.md, a command as written:\n%s\n  its last output:\n%s\n' \
		"$err" "$(printf '%s\n' "$out" | tail -5)" >&2
	exit 1
fi
n=${out##*$'\n'}
n=${n%% *}
[ "$n" -ge 10 ] || fail "only $n commands found in docs/quickstart.md"
