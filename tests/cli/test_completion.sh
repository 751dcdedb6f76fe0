# gpushare completion bash|zsh: the scripts parse, and the bash function
# completes commands, subcommands, options, -o values, GPU models and
# mig-parted layouts as the option tables and the catalog say.
. "$(dirname "$0")/lib.sh"
use_tmp

run completion bash
expect_rc 0 "completion bash"
echo "$out" >"$tmp/gpushare.bash"
bash -n "$tmp/gpushare.bash" || fail "bash -n"
run completion zsh
expect_rc 0 "completion zsh"
echo "$out" >"$tmp/_gpushare"
expect_out_has "#compdef gpushare" "zsh header"
if command -v zsh >/dev/null; then
	zsh -n "$tmp/_gpushare" || fail "zsh -n"
else
	echo "zsh is not installed: zsh -n skipped" >&2
fi
run completion fish
expect_rc 2 "no fish"
expect_err_has "no completion for 'fish'" "fish"
run completion
expect_rc 2 "say which shell"

# comp LINE: COMPREPLY of `gpushare LINE<TAB>`, one per line, sorted.
cat >"$tmp/comp.sh" <<-'EOS'
	. "$1"
	shift
	COMP_LINE="gpushare $1"
	COMP_POINT=${#COMP_LINE}
	read -ra COMP_WORDS <<<"$COMP_LINE"
	COMP_CWORD=${#COMP_WORDS[@]}
	[[ $COMP_LINE == *" " ]] || COMP_CWORD=$((COMP_CWORD - 1))
	_gpushare
	printf '%s\n' "${COMPREPLY[@]}" | sort
EOS
comp() { (cd "$TOP" && bash "$tmp/comp.sh" "$tmp/gpushare.bash" "$1"); }
# expect_comp LINE WORD...: exactly these completions.
expect_comp() {
	local line=$1 got want
	shift
	got=$(comp "$line")
	want=$(printf '%s\n' "$@" | sort)
	[ "$got" = "$want" ] || { out=$got; fail "'gpushare $line<TAB>' gives $(echo $got), want $*"; }
}
# expect_comp_has LINE WORD: WORD is among the completions.
expect_comp_has() {
	comp "$1" | grep -qxF -- "$2" || { out=$(comp "$1"); fail "'gpushare $1<TAB>' lacks $2"; }
}

expect_comp "pl" plan
expect_comp "ver" version
expect_comp "plan --o" --output
expect_comp "plan -o " table json yaml
expect_comp "plan --output=" table json yaml
expect_comp "plan --output=j" json
expect_comp "replay -o " table json yaml csv
expect_comp "status -f k8s/ -o j" json
expect_comp "isolation -o " table json yaml env
expect_comp "version -o " table json
expect_comp "lint --installer " helm operator none
expect_comp "check --engine t" tree
expect_comp "dra " translate prepare allocate
expect_comp "dra translate --driver-g" --driver-gates
expect_comp "dra prepare --sl" --slices
expect_comp "explain " pod quota node
expect_comp "explain quota team-a --req" --request --request-timeout
expect_comp "completion " bash zsh
expect_comp "help dra " translate prepare allocate
expect_comp_has "help " plan
expect_comp_has "help " completion
expect_comp_has "" advertise
expect_comp_has "plan -" --mig-config
expect_comp_has "plan -" -f
expect_comp_has "sync --" --dry-run
expect_comp_has "sync --" --kubeconfig
# After a value option, its value; files where the table knows no values.
expect_comp_has "plan -f k8s/lab" k8s/lab-nodes.yaml
expect_comp "plan -f k8s/ -o json k8s/team-a" k8s/team-a-pods.yaml
# mig-parted layouts after NODE= (bash completes what follows the '=').
expect_comp "plan -f k8s/ --mig-config lab-node-2=all-bal" all-balanced
expect_comp "plan --mig-config=lab-node-2=all-1g.5" all-1g.5gb all-1g.5gb.me
# GPU models of the catalog after NAME=COUNTxGPUSx.
expect_comp "import --pool a100=2x8xNVIDIA-A100-SXM4-8" 2x8xNVIDIA-A100-SXM4-80GB
expect_comp_has "import --pool t4=1x1xTesla-" 1x1xTesla-T4
expect_comp "import --pool t4=" # no count yet: nothing to offer
exit 0
