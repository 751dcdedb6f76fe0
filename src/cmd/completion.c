/*
 * gpushare completion bash|zsh: the scripts are generated from the option
 * tables the parser uses (cmd/describe.h) and from the catalog (GPU models,
 * mig-parted layouts), so a new option completes without a second list.
 */
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "cmd/cmd.h"
#include "cmd/describe.h"
#include "cmd/parseopt.h"
#include "model/catalog.h"
#include "base/strbuf.h"
#include "base/version.h"
#include "base/banned.h"

/* s as one shell word in single quotes. */
static void add_quoted(struct strbuf *out, const char *s)
{
	strbuf_addch(out, '\'');
	for (; *s; s++)
		if (*s == '\'')
			strbuf_addstr(out, "'\\''");
		else
			strbuf_addch(out, *s);
	strbuf_addch(out, '\'');
}

/* The GPU models (label form: no blanks) and the layouts, space-separated. */
static int catalog_words(struct strbuf *models, struct strbuf *layouts, struct gs_error *err)
{
	const struct catalog *cat;

	if (catalog_builtin(&cat, err) < 0)
		return -1;
	for (size_t i = 0; i < catalog_gpu_count(cat); i++) {
		const char *l = catalog_gpu_at(cat, i)->label;
		struct strbuf key = STRBUF_INIT;
		strbuf_addf(&key, " %s ", l);
		strbuf_addch(models, ' ');
		if (!strstr(models->buf, key.buf)) {
			strbuf_setlen(models, models->len - 1);
			strbuf_addsep(models, " ", l);
		} else {
			strbuf_setlen(models, models->len - 1);
		}
		strbuf_release(&key);
	}
	for (size_t i = 0; i < catalog_layout_count(cat); i++)
		strbuf_addsep(layouts, " ", catalog_layout_at(cat, i)->name);
	return 0;
}

static const char *jstr(const json_t *o, const char *key)
{
	const char *s = json_string_value(json_object_get(o, key));
	return s ? s : "";
}

/* A table and the key it completes under ("plan", "dra translate"). */
struct table_ref {
	const char *cmd, *sub;
	const json_t *table;
};

static size_t collect_tables(const json_t *all, struct table_ref *refs, size_t cap)
{
	size_t n = 0, i, j;
	json_t *c, *s;

	json_array_foreach (all, i, c) {
		if (n < cap)
			refs[n++] = (struct table_ref){jstr(c, "name"), NULL,
						       json_object_get(c, "table")};
		json_array_foreach (json_object_get(c, "subcommands"), j, s)
			if (n < cap)
				refs[n++] = (struct table_ref){jstr(c, "name"), jstr(s, "name"),
							       json_object_get(s, "table")};
	}
	return n;
}

static void add_key(struct strbuf *out, const struct table_ref *r)
{
	strbuf_addstr(out, r->cmd);
	if (r->sub)
		strbuf_addf(out, " %s", r->sub);
}

/* How a value option's value completes: "values:a b", "gpu-model", "mig-layout" or "file". */
static void value_how(struct strbuf *out, const json_t *o)
{
	const json_t *vals = json_object_get(o, "values"), *v;
	size_t i;

	if (vals) {
		strbuf_addstr(out, "values:");
		json_array_foreach (vals, i, v)
			strbuf_addf(out, "%s%s", i ? " " : "", json_string_value(v));
	} else if (json_object_get(o, "hint")) {
		strbuf_addstr(out, jstr(o, "hint"));
	} else {
		strbuf_addstr(out, "file");
	}
}

static const char bash_main[] =
	"# _gpushare: the completion function (complete -F). It reads COMP_LINE up\n"
	"# to COMP_POINT, so --opt=value and NODE=VALUE complete as one word.\n"
	"_gpushare() {\n"
	"\tlocal line=${COMP_LINE:0:COMP_POINT} cur= cmd= sub= key= pending= i a\n"
	"\tlocal -a w\n"
	"\tread -ra w <<<\"$line\"\n"
	"\tif [[ $line != *[[:space:]] && ${#w[@]} -gt 0 ]]; then\n"
	"\t\tcur=${w[${#w[@]}-1]}\n"
	"\t\tunset 'w[${#w[@]}-1]'\n"
	"\tfi\n"
	"\tCOMPREPLY=()\n"
	"\tfor ((i = 1; i < ${#w[@]}; i++)); do\n"
	"\t\ta=${w[i]}\n"
	"\t\tif [[ -n $pending ]]; then\n"
	"\t\t\tpending=\n"
	"\t\t\tcontinue\n"
	"\t\tfi\n"
	"\t\tcase $a in\n"
	"\t\t--*=* | -?*=*) ;;\n"
	"\t\t--* | -?)\n"
	"\t\t\t[[ -n $key ]] && _gpushare_value \"$key\" \"$a\" >/dev/null && pending=1 ;;\n"
	"\t\t-*) ;;\n"
	"\t\t*)\n"
	"\t\t\tif [[ -z $cmd ]]; then\n"
	"\t\t\t\tcmd=$a key=$a\n"
	"\t\t\telif [[ -z $sub && \" $(_gpushare_subcommands \"$cmd\") \" == *\" $a \"* ]]; then\n"
	"\t\t\t\tsub=$a\n"
	"\t\t\t\t[[ $cmd == help ]] || key=\"$cmd $a\"\n"
	"\t\t\tfi\n"
	"\t\t\t;;\n"
	"\t\tesac\n"
	"\tdone\n"
	"\tlocal opt= val= pre= how= words= vpre=\n"
	"\tif [[ -n $pending ]]; then\n"
	"\t\topt=${w[${#w[@]}-1]} val=$cur\n"
	"\telif [[ -n $key && $cur == --*=* ]]; then\n"
	"\t\topt=${cur%%=*} val=${cur#*=} pre=${cur%%=*}=\n"
	"\tfi\n"
	"\tif [[ -n $opt ]]; then\n"
	"\t\thow=$(_gpushare_value \"$key\" \"$opt\") || return 0\n"
	"\t\tcase $how in\n"
	"\t\tvalues:*) words=${how#values:} ;;\n"
	"\t\tgpu-model)\n"
	"\t\t\t[[ $val =~ ^([^=]*=[0-9]+x[0-9]+x)(.*)$ ]] || return 0\n"
	"\t\t\tvpre=${BASH_REMATCH[1]} val=${BASH_REMATCH[2]} words=$_gpushare_gpu_models ;;\n"
	"\t\tmig-layout)\n"
	"\t\t\t[[ $val =~ ^([^=]*=)(.*)$ ]] || return 0\n"
	"\t\t\tvpre=${BASH_REMATCH[1]} val=${BASH_REMATCH[2]} words=$_gpushare_mig_layouts ;;\n"
	"\t\t*)\n"
	"\t\t\tcompopt -o filenames 2>/dev/null\n"
	"\t\t\tmapfile -t COMPREPLY < <(compgen -f -- \"$val\")\n"
	"\t\t\treturn 0 ;;\n"
	"\t\tesac\n"
	"\t\tmapfile -t COMPREPLY < <(compgen -P \"$pre$vpre\" -W \"$words\" -- \"$val\")\n"
	"\t\t# bash replaces only what follows the last = or : of the word.\n"
	"\t\tlocal brk=\n"
	"\t\t[[ $COMP_WORDBREAKS == *=* ]] && brk+='='\n"
	"\t\t[[ $COMP_WORDBREAKS == *:* ]] && brk+=':'\n"
	"\t\tif [[ -n $brk && $cur == *[$brk]* ]]; then\n"
	"\t\t\tlocal cut=${cur%\"${cur##*[$brk]}\"}\n"
	"\t\t\tCOMPREPLY=(\"${COMPREPLY[@]#\"$cut\"}\")\n"
	"\t\tfi\n"
	"\t\treturn 0\n"
	"\tfi\n"
	"\tif [[ -z $cmd ]]; then\n"
	"\t\tmapfile -t COMPREPLY < <(compgen -W \"$_gpushare_commands\" -- \"$cur\")\n"
	"\t\treturn 0\n"
	"\tfi\n"
	"\tif [[ $cur == -* ]]; then\n"
	"\t\tmapfile -t COMPREPLY < <(compgen -W \"$(_gpushare_options \"$key\")\" -- \"$cur\")\n"
	"\t\treturn 0\n"
	"\tfi\n"
	"\tif [[ -z $sub ]]; then\n"
	"\t\twords=$(_gpushare_subcommands \"$cmd\")\n"
	"\t\tif [[ -n $words ]]; then\n"
	"\t\t\tmapfile -t COMPREPLY < <(compgen -W \"$words\" -- \"$cur\")\n"
	"\t\t\treturn 0\n"
	"\t\tfi\n"
	"\telif [[ $cmd == help ]]; then\n"
	"\t\t[[ ${w[${#w[@]}-1]} == \"$sub\" ]] &&\n"
	"\t\t\tmapfile -t COMPREPLY < <(compgen -W \"$(_gpushare_subcommands \"$sub\")\" -- "
	"\"$cur\")\n"
	"\t\treturn 0\n"
	"\tfi\n"
	"\tcompopt -o filenames 2>/dev/null\n"
	"\tmapfile -t COMPREPLY < <(compgen -f -- \"$cur\")\n"
	"\treturn 0\n"
	"}\n"
	"complete -F _gpushare gpushare\n";

static void bash_script(struct strbuf *out, const json_t *all, const struct strbuf *models,
			const struct strbuf *layouts)
{
	struct table_ref refs[256];
	size_t n = collect_tables(all, refs, sizeof(refs) / sizeof(refs[0])), i, j;
	struct strbuf w = STRBUF_INIT;
	json_t *c, *o;

	strbuf_addf(out,
		    "# bash completion for gpushare %s, generated by `gpushare completion bash`\n"
		    "# from the option tables its parser uses. Load it with\n"
		    "#   source <(gpushare completion bash)\n"
		    "# or install it as share/bash-completion/completions/gpushare.\n\n",
		    GPUSHARE_VERSION);
	json_array_foreach (all, i, c)
		strbuf_addsep(&w, " ", jstr(c, "name"));
	strbuf_addstr(out, "_gpushare_commands=");
	add_quoted(out, w.buf);
	strbuf_addstr(out, "\n_gpushare_gpu_models=");
	add_quoted(out, models->buf);
	strbuf_addstr(out, "\n_gpushare_mig_layouts=");
	add_quoted(out, layouts->buf);
	strbuf_addstr(out, "\n\n# _gpushare_subcommands CMD: its subcommands.\n"
			   "_gpushare_subcommands() {\n\tcase $1 in\n"
			   "\thelp) echo \"$_gpushare_commands\" ;;\n");
	json_array_foreach (all, i, c) {
		json_t *s;
		strbuf_setlen(&w, 0);
		json_array_foreach (json_object_get(c, "subcommands"), j, s)
			strbuf_addsep(&w, " ", jstr(s, "name"));
		if (!w.len)
			continue;
		strbuf_addf(out, "\t%s) echo ", jstr(c, "name"));
		add_quoted(out, w.buf);
		strbuf_addstr(out, " ;;\n");
	}
	strbuf_addstr(out,
		      "\tesac\n}\n\n# _gpushare_options KEY: the options of 'CMD' or 'CMD SUB'.\n"
		      "_gpushare_options() {\n\tcase $1 in\n");
	for (i = 0; i < n; i++) {
		strbuf_setlen(&w, 0);
		json_array_foreach (json_object_get(refs[i].table, "options"), j, o) {
			if (json_object_get(o, "group"))
				continue;
			if (json_object_get(o, "long"))
				strbuf_addf(&w, "%s--%s", w.len ? " " : "", jstr(o, "long"));
			if (json_object_get(o, "short"))
				strbuf_addf(&w, "%s-%s", w.len ? " " : "", jstr(o, "short"));
		}
		strbuf_addch(out, '\t');
		struct strbuf k = STRBUF_INIT;
		add_key(&k, &refs[i]);
		add_quoted(out, k.buf);
		strbuf_release(&k);
		strbuf_addstr(out, ") echo ");
		add_quoted(out, w.buf);
		strbuf_addstr(out, " ;;\n");
	}
	strbuf_addstr(out,
		      "\tesac\n}\n\n"
		      "# _gpushare_value KEY OPTION: how OPTION's value completes (values:WORDS,\n"
		      "# gpu-model, mig-layout, file); fails when OPTION takes no value.\n"
		      "_gpushare_value() {\n\tcase \"$1 $2\" in\n");
	for (i = 0; i < n; i++)
		json_array_foreach (json_object_get(refs[i].table, "options"), j, o) {
			struct strbuf k = STRBUF_INIT, how = STRBUF_INIT;
			if (!json_is_true(json_object_get(o, "takesValue")))
				continue;
			strbuf_addch(out, '\t');
			if (json_object_get(o, "long")) {
				add_key(&k, &refs[i]);
				strbuf_addf(&k, " --%s", jstr(o, "long"));
				add_quoted(out, k.buf);
			}
			if (json_object_get(o, "short")) {
				strbuf_setlen(&k, 0);
				add_key(&k, &refs[i]);
				strbuf_addf(&k, " -%s", jstr(o, "short"));
				if (json_object_get(o, "long"))
					strbuf_addstr(out, " | ");
				add_quoted(out, k.buf);
			}
			value_how(&how, o);
			strbuf_addstr(out, ") echo ");
			add_quoted(out, how.buf);
			strbuf_addstr(out, " ;;\n");
			strbuf_release(&k);
			strbuf_release(&how);
		}
	strbuf_addstr(out, "\t*) return 1 ;;\n\tesac\n}\n\n");
	strbuf_addstr(out, bash_main);
	strbuf_release(&w);
}

/* s for a zsh _arguments description: [] and : escaped, first line only. */
static void add_zsh_desc(struct strbuf *out, const char *s)
{
	for (; *s && *s != '\n'; s++) {
		if (*s == '[' || *s == ']' || *s == ':' || *s == '\\')
			strbuf_addch(out, '\\');
		strbuf_addch(out, *s);
	}
}

/* One _arguments spec per name of o, each a quoted word. */
static void zsh_option(struct strbuf *out, const json_t *o)
{
	bool val = json_is_true(json_object_get(o, "takesValue"));
	const char *names[2] = {json_object_get(o, "short") ? jstr(o, "short") : NULL,
				json_object_get(o, "long") ? jstr(o, "long") : NULL};

	for (int k = 0; k < 2; k++) {
		struct strbuf spec = STRBUF_INIT;
		if (!names[k])
			continue;
		strbuf_addf(&spec, "*%s%s%s[", k ? "--" : "-", names[k],
			    val ? (k ? "=" : "+") : "");
		add_zsh_desc(&spec, jstr(o, "help"));
		strbuf_addch(&spec, ']');
		if (val) {
			struct strbuf how = STRBUF_INIT;
			strbuf_addf(&spec, ":%s:", jstr(o, "placeholder"));
			value_how(&how, o);
			if (!strncmp(how.buf, "values:", 7))
				strbuf_addf(&spec, "(%s)", how.buf + 7);
			else if (!strcmp(how.buf, "file"))
				strbuf_addstr(&spec, "_files");
			else
				strbuf_addf(&spec, "_gpushare_%s",
					    !strcmp(how.buf, "gpu-model") ? "gpu_model"
									  : "mig_layout");
			strbuf_release(&how);
		}
		strbuf_addstr(out, " \\\n\t\t\t");
		add_quoted(out, spec.buf);
		strbuf_release(&spec);
	}
}

static void zsh_arguments(struct strbuf *out, const json_t *table, const char *rest)
{
	size_t j;
	json_t *o;

	strbuf_addstr(out, "_arguments -s");
	json_array_foreach (json_object_get(table, "options"), j, o)
		if (!json_object_get(o, "group"))
			zsh_option(out, o);
	strbuf_addf(out, " \\\n\t\t\t%s", rest);
}

static void zsh_script(struct strbuf *out, const json_t *all, const struct strbuf *models,
		       const struct strbuf *layouts)
{
	size_t i, j;
	json_t *c, *s;

	strbuf_addf(out,
		    "#compdef gpushare\n"
		    "# zsh completion for gpushare %s, generated by `gpushare completion zsh`\n"
		    "# from the option tables its parser uses. Install it as _gpushare in a\n"
		    "# directory of $fpath (share/zsh/site-functions).\n\n",
		    GPUSHARE_VERSION);
	strbuf_addstr(out, "_gpushare_gpu_model() {\n\tlocal -a models\n\tmodels=(");
	strbuf_addstr(out, models->buf);
	strbuf_addstr(out, ")\n\tcompset -P '*=[0-9]##x[0-9]##x' || return 1\n"
			   "\tcompadd -a models\n}\n\n");
	strbuf_addstr(out, "_gpushare_mig_layout() {\n\tlocal -a layouts\n\tlayouts=(");
	strbuf_addstr(out, layouts->buf);
	strbuf_addstr(out, ")\n\tcompset -P '*=' || return 1\n\tcompadd -a layouts\n}\n\n");
	strbuf_addstr(out, "_gpushare() {\n\tlocal -a commands\n\tcommands=(");
	json_array_foreach (all, i, c) {
		struct strbuf d = STRBUF_INIT;
		strbuf_addf(&d, "%s:", jstr(c, "name"));
		add_zsh_desc(&d, jstr(c, "summary"));
		strbuf_addstr(out, "\n\t\t");
		add_quoted(out, d.buf);
		strbuf_release(&d);
	}
	strbuf_addstr(out, "\n\t)\n"
			   "\tif (( CURRENT == 2 )); then\n"
			   "\t\t_describe -t commands 'gpushare command' commands\n"
			   "\t\treturn\n\tfi\n"
			   "\tlocal cmd=$words[2]\n"
			   "\tshift words\n\t(( CURRENT-- ))\n"
			   "\tcase $cmd in\n");
	json_array_foreach (all, i, c) {
		const json_t *subs = json_object_get(c, "subcommands");
		strbuf_addf(out, "\t%s)\n", jstr(c, "name"));
		if (!strcmp(jstr(c, "name"), "help")) {
			strbuf_addstr(out,
				      "\t\tif (( CURRENT == 2 )); then\n"
				      "\t\t\t_describe -t commands 'gpushare command' commands\n"
				      "\t\telif (( CURRENT == 3 )); then\n"
				      "\t\t\tcase $words[2] in\n");
			json_t *c2;
			size_t k;
			json_array_foreach (all, k, c2) {
				struct strbuf w = STRBUF_INIT;
				json_array_foreach (json_object_get(c2, "subcommands"), j, s)
					strbuf_addsep(&w, " ", jstr(s, "name"));
				if (w.len)
					strbuf_addf(out, "\t\t\t%s) compadd %s ;;\n",
						    jstr(c2, "name"), w.buf);
				strbuf_release(&w);
			}
			strbuf_addstr(out, "\t\t\tesac\n\t\tfi\n\t\t;;\n");
			continue;
		}
		if (json_array_size(subs)) {
			struct strbuf w = STRBUF_INIT;
			json_array_foreach (subs, j, s)
				strbuf_addsep(&w, " ", jstr(s, "name"));
			strbuf_addf(out,
				    "\t\tif (( CURRENT == 2 )); then\n\t\t\tcompadd %s\n"
				    "\t\t\treturn\n\t\tfi\n\t\tcase $words[2] in\n",
				    w.buf);
			strbuf_release(&w);
			json_array_foreach (subs, j, s) {
				strbuf_addf(out, "\t\t%s)\n\t\t\t", jstr(s, "name"));
				zsh_arguments(out, json_object_get(s, "table"), "'*:file:_files'");
				strbuf_addstr(out, " ;;\n");
			}
			strbuf_addstr(out, "\t\tesac\n\t\t;;\n");
			continue;
		}
		strbuf_addstr(out, "\t\t");
		zsh_arguments(out, json_object_get(c, "table"), "'*:file:_files'");
		strbuf_addstr(out, " ;;\n");
	}
	strbuf_addstr(out, "\tesac\n}\n\n_gpushare \"$@\"\n");
}

static const char *const completion_lines[] = {"gpushare completion bash|zsh", NULL};
static const char *const completion_subs[] = {"bash", "zsh", NULL};
static const struct parseopt_example completion_examples[] = {
	{"complete gpushare in this bash session", "source <(gpushare completion bash)"},
	{"check the bash script", "gpushare completion bash | bash -n"},
	{"install the zsh completion (a directory of $fpath)",
	 "gpushare completion zsh >~/.zsh/completions/_gpushare"},
	{NULL, NULL},
};
static const struct parseopt_usage completion_usage = {
	"completion",
	completion_lines,
	"Print a shell completion script for bash or zsh: the commands and\n"
	"subcommands, each command's options, the values of -o and the like, GPU\n"
	"models of the catalog (import --pool) and mig-parted layouts (plan\n"
	"--mig-config). Generated from the option tables the parser uses; `make\n"
	"install` installs both.\n",
	"exit status: 0 ok, 2 bad usage.\n",
	completion_examples,
	completion_subs,
};

int cmd_completion(int argc, char **argv)
{
	struct option opts[] = {OPT_END()};
	int n = parse_options(argc, argv, opts, &completion_usage);
	struct strbuf out = STRBUF_INIT, models = STRBUF_INIT, layouts = STRBUF_INIT;
	struct gs_error err;
	json_t *all = NULL;
	char buf[2048];
	int rc = EXIT_USAGE;

	if (n < 0)
		return parseopt_exit(n);
	if (n != 1 || (strcmp(argv[0], "bash") && strcmp(argv[0], "zsh"))) {
		if (n == 0)
			gs_error_set(&err, "say which shell: bash or zsh");
		else if (n > 1)
			gs_error_set(&err, "unexpected argument '%s'", argv[1]);
		else
			gs_error_set(&err, "no completion for '%s': bash or zsh", argv[0]);
		return usage_error(&completion_usage, &err);
	}
	if (commands_describe(&all, &err) < 0 || catalog_words(&models, &layouts, &err) < 0) {
		fprintf(stderr, "gpushare completion: %s\n", gs_error_str(&err, buf, sizeof(buf)));
		goto out;
	}
	if (!strcmp(argv[0], "bash"))
		bash_script(&out, all, &models, &layouts);
	else
		zsh_script(&out, all, &models, &layouts);
	fwrite(out.buf, 1, out.len, stdout);
	rc = EXIT_OK;
out:
	json_decref(all);
	strbuf_release(&out);
	strbuf_release(&models);
	strbuf_release(&layouts);
	return rc;
}
