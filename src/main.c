#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "cmd/cmd.h"
#include "base/didyoumean.h"
#include "base/strbuf.h"
#include "base/banned.h"

/* git's help_unknown_cmd: "'plna' is not a command; did you mean 'plan'?" */
static int unknown_command(const char *name)
{
	struct strbuf hint = STRBUF_INIT;
	struct dym d;

	dym_init(&d, name);
	for (const struct command *c = commands; c->name; c++)
		if (!c->hidden)
			dym_offer(&d, c->name);
	dym_add_choices(&d, &hint, "gpushare --help");
	cmd_eprintf("gpushare: '%s' is not a command%s\n", name, hint.buf);
	strbuf_release(&hint);
	return EXIT_USAGE;
}

static int run(int argc, char **argv)
{
	const struct command *c;

	if (argc < 2) {
		commands_usage(stderr);
		return EXIT_USAGE;
	}
	if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
		commands_usage(stdout);
		return EXIT_OK;
	}
	if (!strcmp(argv[1], "--version"))
		return cmd_version(1, argv + 1);
	if ((c = command_find(argv[1])) != NULL)
		return c->run(argc - 1, argv + 1);
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
