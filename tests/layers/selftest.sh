#!/bin/sh
# The include checker must refuse what it exists to refuse: an upward arrow,
# an engine including the client, a circle, a file beside main.c.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
t=$(mktemp -d)
trap 'rm -rf "$t"' EXIT
mkdir -p "$t/src/base" "$t/src/engine" "$t/src/kube" "$t/src/model"
printf '#include "engine/e.h"\n' >"$t/src/base/b.h"
printf '#include "kube/k.h"\n' >"$t/src/engine/e.h"
printf '\n' >"$t/src/kube/k.h"
printf '#include "model/y.h"\n' >"$t/src/model/x.h"
printf '#include "model/x.h"\n' >"$t/src/model/y.h"
printf '\n' >"$t/src/stray.c"
if out=$(python3 "$here/check.py" "$t" 2>&1); then
	echo "layers selftest: the checker passed a broken tree" >&2
	exit 1
fi
for want in 'src/base/b.h:1: base includes "engine/e.h" from engine' \
	'src/engine/e.h:1: engine includes the Kubernetes client' \
	'modules include each other in a circle: model/x -> model/y' \
	'src/stray.c:1: only main.c lives in src/'; do
	case $out in
	*"$want"*) ;;
	*)
		printf 'layers selftest: missing "%s" in:\n%s\n' "$want" "$out" >&2
		exit 1
		;;
	esac
done

# The reference checker must refuse a tracked file that cites a document
# outside the repository, and pass the same file once it names its source.
r=$(mktemp -d)
trap 'rm -rf "$t" "$r"' EXIT
git -C "$r" init -q
printf 'the rule (%s %s1.7)\n' spec "$(printf '\302\247')" >"$r/a.md"
git -C "$r" add a.md
if "$here/refs.sh" "$r" >/dev/null 2>&1; then
	echo "layers selftest: the reference checker passed a private citation" >&2
	exit 1
fi
printf 'the rule (k8s-device-plugin v0.20.0 api/config/v1/replicas.go)\n' >"$r/a.md"
if ! "$here/refs.sh" "$r" >/dev/null 2>&1; then
	echo "layers selftest: the reference checker refused an upstream source" >&2
	exit 1
fi

# The reference checker must refuse a docs/ path and a relative link that
# name no file, and pass them once the file exists. (refs.sh reads this
# file too: the paths it names must exist here as well.)
m=$(mktemp -d)
trap 'rm -rf "$t" "$r" "$m"' EXIT
git -C "$m" init -q
mkdir -p "$m/docs/guide" "$m/src"
printf '# index\n\nSee [the plan page](guide/%s.md#what-if).\n' plan >"$m/docs/README.md"
printf '/* the contract: docs/guide/%s.md */\n' plan >"$m/src/a.c"
git -C "$m" add -A
if out=$("$here/refs.sh" "$m" 2>&1); then
	echo "layers selftest: the reference checker passed a missing page" >&2
	exit 1
fi
for want in '/README.md:3: link (guide/plan.md#what-if): no such file' \
	'src/a.c:1: docs/guide/plan.md: no such file'; do
	case $out in
	*"$want"*) ;;
	*)
		printf 'layers selftest: missing "%s" in:\n%s\n' "$want" "$out" >&2
		exit 1
		;;
	esac
done
printf '# plan\n' >"$m/docs/guide/plan.md"
git -C "$m" add -A
if ! out=$("$here/refs.sh" "$m" 2>&1); then
	printf 'layers selftest: the reference checker refused a page that exists:\n%s\n' "$out" >&2
	exit 1
fi
