#!/bin/sh
# Every reference a reader meets must resolve inside the repository or name
# an upstream source. Fails when a tracked file cites a document that is not
# in the repository: a numbered section sign (the repository numbers no
# sections of its own), or a path outside the checkout. .ci/run may look for
# tools on a fresh machine; this file names the patterns.
# Usage: tests/layers/refs.sh [DIR]   (DIR: a git checkout, default .)
set -eu
top=${1:-.}
sect=$(printf '\302\247')
self=tests/layers/refs.sh
bad=$(git -C "$top" ls-files -z |
	(cd "$top" && xargs -0 grep -n -I -F \
		-e "$sect" -e "/work/shared" -e "../shared" -e "/work/wt" -- 2>/dev/null) |
	grep -v -e "^\.ci/run:" -e "^$self:" || true)
if [ -n "$bad" ]; then
	printf '%s\n' "$bad" | sed 's/$/  <- a reference outside the repository: name the upstream source or a docs page/' >&2
	exit 1
fi
n=$(git -C "$top" ls-files | wc -l)
echo "refs: $n tracked files cite nothing outside the repository"
