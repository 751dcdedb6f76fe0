#ifndef GS_DESCRIBE_H
#define GS_DESCRIBE_H

/*
 * The option tables as data, read from the commands themselves: each is run
 * with --help under parseopt_capture(), so what the generators (help,
 * __options, completion, the man page) see is what the parser uses.
 */

#include <jansson.h>

#include "base/error.h"
#include "cmd/cmd.h"

/*
 * The table of `gpushare NAME [SUB]` (parseopt.h describes the object) into
 * *out (owned). Fails when the command reached no option table.
 */
int command_describe(const struct command *c, const char *sub, json_t **out,
		     struct gs_error *err) GS_WUR;

/*
 * Every visible command: [{"name", "summary", "table", "subcommands": [{"name",
 * "table"}]}], in the order of the usage. Fails as command_describe does.
 */
int commands_describe(json_t **out, struct gs_error *err) GS_WUR;

/* Whether sub is one of the subcommands the table d names. */
int describe_has_subcommand(const json_t *d, const char *sub);

#endif
