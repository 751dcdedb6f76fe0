#include <string.h>

#include "cmd/cmd.h"
#include "cmd/describe.h"
#include "cmd/parseopt.h"
#include "base/banned.h"

const struct command commands[] = {
	{"advertise", cmd_advertise, "print what a node would advertise (resources and labels)",
	 false},
	{"check", cmd_check, "check pod manifests for GPU requests before deploy", false},
	{"lint", cmd_lint, "validate a device-plugin ConfigMap as the real plugin would", false},
	{"isolation", cmd_isolation, "memory and fault isolation of time-slicing, MPS and MIG",
	 false},
	{"sync", cmd_sync, "write each node's advertisement into the cluster", false},
	{"lab", cmd_lab, "run the eight-step GPU sharing scenario against a cluster", false},
	{"explain", cmd_explain, "why a pod landed where it did or is pending; quota headroom",
	 false},
	{"controller", cmd_controller, "keep nodes advertising and admit pods, continuously",
	 false},
	{"status", cmd_status, "who holds each GPU slice or MIG instance, per physical GPU", false},
	{"dra", cmd_dra, "the DRA path: translate a device-plugin setup to its DRA form", false},
	{"webhook", cmd_webhook, "admission webhook: refuse at creation pods that would fail later",
	 false},
	{"plan", cmd_plan, "place a batch of pods as the scheduler would; what-if a change", false},
	{"migrate", cmd_migrate, "rehearse moving pools from the device plugin to the DRA driver",
	 false},
	{"report", cmd_report, "the fleet as a picture: cards, who holds them, isolation, quotas",
	 false},
	{"import", cmd_import, "kwok twins of a real cluster's GPU nodes, or of a fleet on paper",
	 false},
	{"replay", cmd_replay, "replay a GPU-sharing trace: allocation and fragmentation", false},
	{"fault", cmd_fault, "declare GPU health faults (Xid, lost GPU) on a node; restart", false},
	{"catalog", cmd_catalog, "GPU models, MIG profiles and the mig-parted layouts of each",
	 false},
	{"version", cmd_version, "gpushare's version and the upstream releases it models", false},
	{"help", cmd_help, "a command's --help: gpushare help COMMAND [SUBCOMMAND]", false},
	{"completion", cmd_completion, "bash or zsh completion script, from the option tables",
	 false},
	{"__options", cmd_options, "the option tables as JSON", true},
	{"__manpage", cmd_manpage, "the man page gpushare(1), from the option tables", true},
	{NULL, NULL, NULL, false},
};

const struct command *command_find(const char *name)
{
	for (const struct command *c = commands; c->name; c++)
		if (!strcmp(c->name, name))
			return c;
	return NULL;
}

void commands_usage(FILE *out)
{
	fprintf(out, "usage: gpushare <command> [options]\n\ncommands:\n");
	for (const struct command *c = commands; c->name; c++)
		if (!c->hidden)
			fprintf(out, "  %-10s %s\n", c->name, c->summary);
	fprintf(out, "\n'gpushare <command> --help' shows a command's options.\n");
}

int command_describe(const struct command *c, const char *sub, json_t **out, struct gs_error *err)
{
	char *argv[4];
	int argc = 0;

	argv[argc++] = (char *)c->name;
	if (sub)
		argv[argc++] = (char *)sub;
	argv[argc++] = (char *)"--help";
	argv[argc] = NULL;
	*out = NULL;
	parseopt_capture(out);
	c->run(argc, argv);
	parseopt_capture(NULL);
	if (!*out) {
		gs_error_set(err, "'%s%s%s' has no option table", c->name, sub ? " " : "",
			     sub ? sub : "");
		return -1;
	}
	return 0;
}

int describe_has_subcommand(const json_t *d, const char *sub)
{
	size_t i;
	json_t *s;

	json_array_foreach (json_object_get(d, "subcommands"), i, s)
		if (!strcmp(json_string_value(s), sub))
			return 1;
	return 0;
}

int commands_describe(json_t **out, struct gs_error *err)
{
	json_t *all = json_array();

	for (const struct command *c = commands; c->name; c++) {
		json_t *d, *subs, *s;
		size_t i;

		if (c->hidden)
			continue;
		subs = json_array();
		if (command_describe(c, NULL, &d, err) < 0) {
			json_decref(subs);
			goto fail;
		}
		json_array_append_new(all,
				      json_pack("{s:s, s:s, s:o, s:o}", "name", c->name, "summary",
						c->summary, "table", d, "subcommands", subs));
		json_array_foreach (json_object_get(d, "subcommands"), i, s) {
			json_t *sd;
			if (command_describe(c, json_string_value(s), &sd, err) < 0)
				goto fail;
			json_array_append_new(subs, json_pack("{s:s, s:o}", "name",
							      json_string_value(s), "table", sd));
		}
	}
	*out = all;
	return 0;
fail:
	json_decref(all);
	*out = NULL;
	return -1;
}
