#include <stdio.h>

#include "cmd.h"

/* Placeholder until the command lands; fails loudly so nothing mistakes it for done. */
int cmd_lint(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	fputs("gpushare lint: not available in this build\n", stderr);
	return EXIT_USAGE;
}
