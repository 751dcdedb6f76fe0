#ifndef GS_CMD_H
#define GS_CMD_H

#include <stdbool.h>
#include <stdio.h>

/*
 * Subcommands. Each returns the process exit status:
 * 0 ok, 1 a finding (over-limit request, lint error, ...), 2 bad input or usage.
 * Only these files print or choose exit codes.
 */
enum { EXIT_OK = 0, EXIT_FINDING = 1, EXIT_USAGE = 2 };

/*
 * printf to standard output (cmd_eprintf: standard error) for lines that
 * show names and messages from input: every %s argument goes through
 * escape_line (base/escape.h), the format's own line breaks stay. So one
 * call whose format ends in "\n" prints one line, whatever a manifest, a
 * review or the apiserver put in its arguments. A %s that is a block of
 * lines made to be printed as it is goes through fputs instead.
 */
void cmd_printf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void cmd_eprintf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

int cmd_advertise(int argc, char **argv);
int cmd_check(int argc, char **argv);
int cmd_lint(int argc, char **argv);
int cmd_isolation(int argc, char **argv);
int cmd_sync(int argc, char **argv);
int cmd_lab(int argc, char **argv);
int cmd_explain(int argc, char **argv);
int cmd_controller(int argc, char **argv);
int cmd_dra(int argc, char **argv);
int cmd_webhook(int argc, char **argv);
int cmd_plan(int argc, char **argv);
int cmd_migrate(int argc, char **argv);
int cmd_report(int argc, char **argv);
int cmd_status(int argc, char **argv);
int cmd_import(int argc, char **argv);
int cmd_replay(int argc, char **argv);
int cmd_fault(int argc, char **argv);
int cmd_catalog(int argc, char **argv);
int cmd_version(int argc, char **argv);
int cmd_help(int argc, char **argv);
int cmd_completion(int argc, char **argv);
int cmd_options(int argc, char **argv);
int cmd_manpage(int argc, char **argv);

/*
 * The commands main() dispatches to, in the order the top-level usage lists
 * them; the last entry has name NULL. A hidden command (__options,
 * __manpage: the generators' views of the option tables) is left out of the
 * usage, the completions and the man page.
 */
struct command {
	const char *name;
	int (*run)(int argc, char **argv);
	const char *summary;
	bool hidden;
};
extern const struct command commands[];

/* The command of that name; NULL when there is none. */
const struct command *command_find(const char *name);

/* The top-level usage: "usage: gpushare <command> [options]" and the commands. */
void commands_usage(FILE *out);

#endif
