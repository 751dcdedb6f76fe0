#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "cmd/cmd.h"
#include "base/didyoumean.h"
#include "base/version.h"
#include "base/banned.h"

struct command {
	const char *name;
	int (*run)(int argc, char **argv);
	const char *summary;
};

static const struct command commands[] = {
	{"advertise", cmd_advertise, "print what a node would advertise (resources and labels)"},
	{"check", cmd_check, "check pod manifests for GPU requests before deploy"},
	{"lint", cmd_lint, "validate a device-plugin ConfigMap as the real plugin would"},
	{"isolation", cmd_isolation, "memory and fault isolation of time-slicing, MPS and MIG"},
	{"sync", cmd_sync, "write each node's advertisement into the cluster"},
	{"lab", cmd_lab, "run the eight-step GPU sharing scenario against a cluster"},
	{"explain", cmd_explain, "why a pod landed where it did or is pending; quota headroom"},
	{"controller", cmd_controller, "keep nodes advertising and admit pods, continuously"},
	{"status", cmd_status, "who holds each GPU slice or MIG instance, per physical GPU"},
	{"dra", cmd_dra, "the DRA path: translate a device-plugin setup to its DRA form"},
	{"webhook", cmd_webhook,
	 "admission webhook: refuse at creation pods that would fail later"},
	{"plan", cmd_plan, "place a batch of pods as the scheduler would; what-if a change"},
	{"report", cmd_report, "the fleet as a picture: cards, who holds them, isolation, quotas"},
	{"import", cmd_import, "kwok twins of a real cluster's GPU nodes, or of a fleet on paper"},
	{"replay", cmd_replay, "replay a GPU-sharing trace: allocation and fragmentation"},
	{"fault", cmd_fault, "declare GPU health faults (Xid, lost GPU) on a node; restart"},
	{"catalog", cmd_catalog, "GPU models, MIG profiles and the mig-parted layouts of each"},
};

static void usage(FILE *out)
{
	fprintf(out, "usage: gpushare <command> [options]\n\ncommands:\n");
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		fprintf(out, "  %-10s %s\n", commands[i].name, commands[i].summary);
	fprintf(out, "\n'gpushare <command> --help' shows a command's options.\n");
}

/* git's help_unknown_cmd: "'plna' is not a command; did you mean 'plan'?" */
static int unknown_command(const char *name)
{
	struct strbuf hint = STRBUF_INIT;
	struct dym d;

	dym_init(&d, name);
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		dym_offer(&d, commands[i].name);
	dym_add_choices(&d, &hint, "gpushare --help");
	cmd_eprintf("gpushare: '%s' is not a command%s\n", name, hint.buf);
	strbuf_release(&hint);
	return EXIT_USAGE;
}

static int run(int argc, char **argv)
{
	if (argc < 2) {
		usage(stderr);
		return EXIT_USAGE;
	}
	if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") || !strcmp(argv[1], "help")) {
		usage(stdout);
		return EXIT_OK;
	}
	if (!strcmp(argv[1], "--version") || !strcmp(argv[1], "version")) {
		printf("gpushare %s\n", GPUSHARE_VERSION);
		return EXIT_OK;
	}
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		if (!strcmp(argv[1], commands[i].name))
			return commands[i].run(argc - 1, argv + 1);
	return unknown_command(argv[1]);
}

/*
 * Output that never reached its file is a failure, whatever the command
 * answered (git's run_builtin): `gpushare check ... >/dev/full` must not
 * exit 0. Every command's output goes through stdio, flushed here.
 */
int main(int argc, char **argv)
{
	int rc = run(argc, argv);

	errno = 0;
	if (fflush(stdout) != 0 || ferror(stdout)) {
		fprintf(stderr, "gpushare: cannot write standard output: %s\n",
			errno ? strerror(errno) : "write error");
		return EXIT_USAGE;
	}
	return rc;
}
