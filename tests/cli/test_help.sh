# help, version, examples and the option tables as data (__options):
# every command's and subcommand's --help ends in 2 to 4 examples that run
# from the source tree, `help CMD [SUB]` is `CMD [SUB] --help` byte for byte,
# version names the releases gpushare models.
. "$(dirname "$0")/lib.sh"
use_tmp

run --help
expect_rc 0 "top-level help"
expect_out_has "  version    " "version is in the command list"
expect_out_has "  completion " "completion is in the command list"
case "$out" in *__options* | *__manpage*) fail "hidden commands are listed" ;; esac
cmds=$(echo "$out" | sed -n 's/^  \([a-z][a-z]*\) .*/\1/p')
[ "$(echo "$cmds" | wc -l)" -ge 18 ] || fail "too few commands: $cmds"

# The subcommands, as the tables name them.
run __options
expect_rc 0 "__options"
echo "$out" >"$tmp/all.json"
subs=$(python3 -c '
import json, sys
for c in json.load(open(sys.argv[1])):
    for s in c["subcommands"]:
        print(c["name"], s["name"])' "$tmp/all.json")
for want in "dra translate" "dra prepare" "dra allocate" "fault gpu" "explain pod" "explain quota" "explain node" \
	"completion bash" "completion zsh"; do
	echo "$subs" | grep -qx "$want" || fail "subcommand '$want' missing from the tables"
done

# Examples: 2 to 4 per command and subcommand; help is the same text.
check_help() {
	run "$@" --help
	expect_rc 0 "$* --help"
	local help=$out n
	expect_out_has "Examples:" "$* --help has examples"
	n=$(echo "$out" | sed -n '/^Examples:$/,$p' | grep -c '^  gpushare \|^  source ')
	[ "$n" -ge 2 ] && [ "$n" -le 4 ] || fail "$*: $n examples, want 2 to 4"
	run help "$@"
	expect_rc 0 "help $*"
	[ "$out" = "$help" ] || fail "help $* differs from $* --help"
	"$GPUSHARE" help "$@" >"$tmp/a" && "$GPUSHARE" "$@" --help >"$tmp/b"
	cmp -s "$tmp/a" "$tmp/b" || fail "help $* is not byte-identical to $* --help"
}
for c in $cmds; do
	check_help "$c"
done
while read -r c s; do
	check_help "$c" "$s"
done <<<"$subs"

run help nosuch
expect_rc 2 "help of no command"
expect_err_has "gpushare help: 'nosuch' is not a gpushare command" "plain wording"
case "$err" in *"did you mean"* | *"Did you mean"*) fail "no guesses" ;; esac
run help dra nosuch
expect_rc 2 "help of no subcommand"
expect_err_has "'nosuch' is not a subcommand of 'gpushare dra'" "subcommand"
run help plan nosuch
expect_rc 2 "plan has no subcommands"
run help __options
expect_rc 2 "hidden commands have no help page"

# Every example runs from the source tree: 0 or 1, or (live commands, no
# cluster here) the missing kubeconfig; never a usage error.
python3 -c '
import json, sys
for c in json.load(open(sys.argv[1])):
    for t in [c["table"]] + [s["table"] for s in c["subcommands"]]:
        for e in t["examples"]:
            print(e["line"])' "$tmp/all.json" | sort -u >"$tmp/examples"
mkdir "$tmp/tree"
for d in k8s tests deploy docs; do ln -s "$TOP/$d" "$tmp/tree/$d"; done
ran=0
while read -r line; do
	case "$line" in *"|"* | *">"* | *"<"* | "source "*) continue ;; esac
	[ "${line%% *}" = gpushare ] || fail "example '$line' does not start with gpushare"
	read -ra words <<<"${line#gpushare }"
	(cd "$tmp/tree" && KUBECONFIG=$tmp/none timeout 60 "$GPUSHARE" "${words[@]}" \
		>/dev/null 2>"$tmp/err" </dev/null)
	rc=$?
	err=$(cat "$tmp/err")
	case $rc in
	0 | 1) ;;
	2) expect_err_has "no kubeconfig found" "example '$line' (exit 2)" ;;
	*) fail "example '$line': exit $rc" ;;
	esac
	ran=$((ran + 1))
done <"$tmp/examples"
[ "$ran" -ge 40 ] || fail "only $ran examples ran"

# version: one place for the modelled releases.
run version
expect_rc 0 "version"
[ "$(echo "$out" | head -1)" = "gpushare $(sed -n 's/^#define GPUSHARE_VERSION "\(.*\)"/\1/p' "$TOP/src/base/version.h")" ] ||
	fail "first line of version"
run --version
expect_rc 0 "--version"
run version -o json
expect_rc 0 "version -o json"
k8s=$(sed -n 's/^#define GPUSHARE_KUBERNETES_VERSION "\(.*\)"/\1/p' "$TOP/src/base/version.h")
[ -n "$k8s" ] || fail "GPUSHARE_KUBERNETES_VERSION not in base/version.h"
migparted=$(sed -n 's/^release[[:space:]]*mig-parted[[:space:]]*\(v[0-9.]*\).*/\1/p' "$TOP/data/gpus.tab")
echo "$out" | python3 -c '
import json, sys
v = json.load(sys.stdin)
k8s, migparted = sys.argv[1], sys.argv[2]
assert list(v) == ["apiVersion", "kind", "gpushare", "kubernetes", "nvidia"], list(v)
assert v["apiVersion"] == "gpushare.io/v1alpha1" and v["kind"] == "Version", v
assert v["kubernetes"] == k8s, (v["kubernetes"], k8s)
assert v["nvidia"] == {"devicePlugin": "v0.20.0", "migParted": "v0.15.0",
                       "draDriver": "v0.5.0"}, v["nvidia"]
assert not migparted or v["nvidia"]["migParted"] == migparted, (migparted, v)
' "$k8s" "$migparted" || fail "version -o json"
grep -q "k8s-device-plugin v0.20.0" "$TOP/src/model/dpconfig.h" || fail "device plugin release"
grep -q "sigs.k8s.io/dra-driver-nvidia-gpu@v0.5.0" "$TOP/src/dra/dradriver.c" ||
	fail "DRA driver release"
run version -o xml
expect_rc 2 "unknown -o"
expect_err_has "gpushare version: unknown output format 'xml' (one of: table, json)" "like plan's"
run plan -o xml
expect_err_has "gpushare plan: unknown output format 'xml' (one of: table, json, yaml)" "plan's words"
run replay -o xml
expect_err_has "unknown output format 'xml' (one of: table, json, yaml, csv)" "replay's words"

# The tables as data: the options --help lists are the ones __options gives.
run __options plan
expect_rc 0 "__options plan"
echo "$out" >"$tmp/plan.json"
python3 -c '
import json, sys
t = json.load(open(sys.argv[1]))
o = {x.get("long"): x for x in t["options"] if "group" not in x}
assert o["output"]["short"] == "o" and o["output"]["takesValue"], o["output"]
assert o["output"]["values"] == ["table", "json", "yaml"], o["output"]
assert o["mig-config"]["hint"] == "mig-layout", o["mig-config"]
assert o["help"]["short"] == "h" and not o["help"]["takesValue"]
assert len(t["examples"]) >= 2
print("\n".join(sorted(k for k in o)))' "$tmp/plan.json" >"$tmp/json-longs" || fail "__options plan"
"$GPUSHARE" plan --help | grep -o '^  \(-., \)\?--[a-z-]*' | sed 's/.*--//' | sort >"$tmp/help-longs"
cmp -s "$tmp/json-longs" "$tmp/help-longs" || fail "__options plan and plan --help list other options"
run __options import
echo "$out" | python3 -c '
import json, sys
o = {x.get("long"): x for x in json.load(sys.stdin)["options"] if "group" not in x}
assert o["pool"]["hint"] == "gpu-model" and o["output"]["values"] == ["table", "json", "yaml"]
' || fail "__options import"
run __options nosuch
expect_rc 2 "__options of no command"
exit 0
