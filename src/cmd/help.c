/*
 * help, version and __options: the commands about gpushare itself. help
 * runs the command it names with --help, so its text is the command's own.
 */
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "cmd/cmd.h"
#include "cmd/describe.h"
#include "cmd/parseopt.h"
#include "base/version.h"
#include "base/banned.h"

static const char *const output_values[] = {"table", "json", NULL};

static int parse_output(const struct option *opt, const char *arg, struct gs_error *err)
{
	int i = parseopt_value(opt, "output format", arg, err);

	if (i < 0)
		return -1;
	*(int *)opt->value = i;
	return 0;
}

static const char *const version_lines[] = {"gpushare version [-o table|json]", NULL};
static const struct parseopt_example version_examples[] = {
	{"gpushare's version and the upstream releases it models", "gpushare version"},
	{"the same for a script", "gpushare version -o json"},
	{NULL, NULL},
};
static const struct parseopt_usage version_usage = {
	"version",
	version_lines,
	"Print gpushare's version and the upstream releases whose behaviour it models:\n"
	"Kubernetes (scheduler, kubelet, quota and validation rules) and NVIDIA's\n"
	"k8s-device-plugin (with GFD and config-manager), mig-parted (the named MIG\n"
	"layouts) and dra-driver-nvidia-gpu.\n",
	"exit status: 0 ok, 2 bad usage.\n",
	version_examples,
	NULL,
};

static void print_version_json(void)
{
	json_t *v =
		json_pack("{s:s, s:s, s:s, s:s, s:{s:s, s:s, s:s}}", "apiVersion",
			  "gpushare.io/v1alpha1", "kind", "Version", "gpushare", GPUSHARE_VERSION,
			  "kubernetes", GPUSHARE_KUBERNETES_VERSION, "nvidia", "devicePlugin",
			  GPUSHARE_DEVICE_PLUGIN_VERSION, "migParted", GPUSHARE_MIG_PARTED_VERSION,
			  "draDriver", GPUSHARE_DRA_DRIVER_VERSION);
	char *s = json_dumps(v, JSON_INDENT(2) | JSON_PRESERVE_ORDER);

	printf("%s\n", s);
	free(s);
	json_decref(v);
}

int cmd_version(int argc, char **argv)
{
	int json_out = 0;
	struct option opts[] = {
		OPT_CALLBACK_VALUES('o', "output", &json_out, "FORMAT", "table or json [table]",
				    parse_output, output_values),
		OPT_END(),
	};
	int n = parse_options(argc, argv, opts, &version_usage);

	if (n < 0)
		return parseopt_exit(n);
	if (n > 0) {
		struct gs_error err;
		gs_error_set(&err, "unexpected argument '%s'", argv[0]);
		return usage_error(&version_usage, &err);
	}
	if (json_out) {
		print_version_json();
		return EXIT_OK;
	}
	printf("gpushare %s\n", GPUSHARE_VERSION);
	printf("models:\n");
	printf("  kubernetes             %s\n", GPUSHARE_KUBERNETES_VERSION);
	printf("  k8s-device-plugin      %s (with GFD and config-manager)\n",
	       GPUSHARE_DEVICE_PLUGIN_VERSION);
	printf("  mig-parted             %s\n", GPUSHARE_MIG_PARTED_VERSION);
	printf("  dra-driver-nvidia-gpu  %s\n", GPUSHARE_DRA_DRIVER_VERSION);
	return EXIT_OK;
}

static const char *const help_lines[] = {"gpushare help [COMMAND [SUBCOMMAND]]", NULL};
static const struct parseopt_example help_examples[] = {
	{"the commands", "gpushare help"},
	{"what plan does, its options and examples", "gpushare help plan"},
	{"the same for a subcommand", "gpushare help dra translate"},
	{NULL, NULL},
};
static const struct parseopt_usage help_usage = {
	"help",
	help_lines,
	"Print what `gpushare COMMAND [SUBCOMMAND] --help` prints; without COMMAND, the\n"
	"list of commands. The same text is in the man page gpushare(1).\n",
	"exit status: 0 ok, 2 no such command or subcommand.\n",
	help_examples,
	NULL,
};

int cmd_help(int argc, char **argv)
{
	struct option opts[] = {OPT_END()};
	int n = parse_options(argc, argv, opts, &help_usage);
	const struct command *c;
	struct gs_error err;
	json_t *d = NULL;
	char *args[4];
	int nargs = 0;

	if (n < 0)
		return parseopt_exit(n);
	if (n == 0) {
		commands_usage(stdout);
		return EXIT_OK;
	}
	if (n > 2) {
		gs_error_set(&err, "unexpected argument '%s'", argv[2]);
		return usage_error(&help_usage, &err);
	}
	c = command_find(argv[0]);
	if (!c || c->hidden) {
		gs_error_set(&err, "'%s' is not a gpushare command", argv[0]);
		return usage_error(&help_usage, &err);
	}
	if (n == 2) {
		if (command_describe(c, NULL, &d, &err) < 0) {
			json_decref(d);
			return usage_error(&help_usage, &err);
		}
		if (!describe_has_subcommand(d, argv[1])) {
			gs_error_set(&err, "'%s' is not a subcommand of 'gpushare %s'", argv[1],
				     c->name);
			json_decref(d);
			return usage_error(&help_usage, &err);
		}
		json_decref(d);
	}
	args[nargs++] = (char *)c->name;
	if (n == 2)
		args[nargs++] = argv[1];
	args[nargs++] = (char *)"--help";
	args[nargs] = NULL;
	return c->run(nargs, args);
}

static const char *const options_lines[] = {"gpushare __options [COMMAND [SUBCOMMAND]]", NULL};
static const struct parseopt_usage options_usage = {
	"__options",
	options_lines,
	"Print the option tables the parser uses, as JSON: every command's, or one.\n"
	"What the shell completions and the man page are generated from.\n",
	NULL,
	NULL,
	NULL,
};

int cmd_options(int argc, char **argv)
{
	struct option opts[] = {OPT_END()};
	int n = parse_options(argc, argv, opts, &options_usage);
	const struct command *c;
	struct gs_error err;
	json_t *d = NULL;
	char buf[2048], *s;

	if (n < 0)
		return parseopt_exit(n);
	if (n > 2) {
		gs_error_set(&err, "unexpected argument '%s'", argv[2]);
		return usage_error(&options_usage, &err);
	}
	if (n == 0) {
		if (commands_describe(&d, &err) < 0)
			goto fail;
	} else {
		c = command_find(argv[0]);
		if (!c) {
			gs_error_set(&err, "'%s' is not a gpushare command", argv[0]);
			return usage_error(&options_usage, &err);
		}
		if (command_describe(c, n == 2 ? argv[1] : NULL, &d, &err) < 0)
			goto fail;
	}
	s = json_dumps(d, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
	printf("%s\n", s);
	free(s);
	json_decref(d);
	return EXIT_OK;
fail:
	json_decref(d);
	fprintf(stderr, "gpushare __options: %s\n", gs_error_str(&err, buf, sizeof(buf)));
	return EXIT_USAGE;
}
