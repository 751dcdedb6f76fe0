#ifndef GS_PARSEOPT_H
#define GS_PARSEOPT_H

/*
 * One command line for every subcommand (git's parse-options.h is the
 * model): a command declares its options as a table, parse_options() walks
 * argv with it and usage_with_options() prints the --help the table implies.
 *
 *	bool dry_run = false;
 *	const char *node = NULL;
 *	struct option opts[] = {
 *		OPT_BOOL(0, "dry-run", &dry_run, "print the patches, write nothing"),
 *		OPT_STRING(0, "node", &node, "NAME", "sync only this node"),
 *		OPT_END(),
 *	};
 *	argc = parse_options(argc, argv, opts, &usage);
 *
 * Grammar: `--name=value` and `--name value`; `-x value`, `-xvalue` and
 * `-x=value` for a short name; `--` ends the options; a lone `-` is a
 * positional (standard input). Options and positionals mix in any order.
 * A value given as a separate word may not start with '-' (so a forgotten
 * value never swallows the next option): write `--name=-x` for such a value.
 * No abbreviations. `-h` and `--help` are always there.
 */

#include <stdbool.h>
#include <stdio.h>

#include "base/error.h"

enum parseopt_kind {
	OPT_KIND_END,
	OPT_KIND_GROUP,	   /* a heading in --help, no option */
	OPT_KIND_FLAG,	   /* bool *: set by the bare name; a value is refused */
	OPT_KIND_BOOL,	   /* bool *: bare name, or =true/=false (Go's strconv.ParseBool) */
	OPT_KIND_STRING,   /* const char **: borrows argv */
	OPT_KIND_INT,	   /* long *: a whole number in [min, max] */
	OPT_KIND_DURATION, /* long * in ms: seconds, or 500ms, 30s, 2m, 1h30m; at most max ms */
	OPT_KIND_CALLBACK, /* callback(opt, value, err) for each use; value NULL when NOARG */
};

struct option;
/* Returns 0, or -1 with err filled (the message names the option itself). */
typedef int (*parseopt_cb)(const struct option *opt, const char *arg, struct gs_error *err);

enum { OPT_NOARG = 1 /* a callback that takes no value */ };

/*
 * What a value names when no fixed list of values says it (shell
 * completion offers the catalog's names; the parser checks nothing more).
 */
enum parseopt_hint {
	OPT_HINT_NONE,
	OPT_HINT_GPU_MODEL,  /* ends in a GPU model of the catalog: NAME=COUNTxGPUSxMODEL */
	OPT_HINT_MIG_LAYOUT, /* ends in a mig-parted layout: NODE=LAYOUT */
};

struct option {
	enum parseopt_kind kind;
	int short_name;	       /* 0 = none */
	const char *long_name; /* without the dashes; NULL = none */
	void *value;	       /* the destination, typed by kind */
	const char *argh;      /* the value's placeholder in --help ("FILE") */
	const char *help;      /* may hold '\n' for more lines */
	long min, max;	       /* INT: allowed range; DURATION: max in ms */
	parseopt_cb callback;
	unsigned flags;
	const char *const *values; /* NULL-terminated: every value allowed; NULL = any */
	enum parseopt_hint hint;
};

/* The casts check the destination's type at compile time. */
#define OPT_END()                                                                                  \
	{                                                                                          \
		.kind = OPT_KIND_END                                                               \
	}
#define OPT_GROUP(h)                                                                               \
	{                                                                                          \
		.kind = OPT_KIND_GROUP, .help = (h)                                                \
	}
#define OPT_FLAG(s, l, v, h)                                                                       \
	{                                                                                          \
		.kind = OPT_KIND_FLAG, .short_name = (s), .long_name = (l),                        \
		.value = (1 ? (v) : (bool *)0), .help = (h)                                        \
	}
#define OPT_BOOL(s, l, v, h)                                                                       \
	{                                                                                          \
		.kind = OPT_KIND_BOOL, .short_name = (s), .long_name = (l),                        \
		.value = (1 ? (v) : (bool *)0), .help = (h)                                        \
	}
#define OPT_STRING(s, l, v, a, h)                                                                  \
	{                                                                                          \
		.kind = OPT_KIND_STRING, .short_name = (s), .long_name = (l),                      \
		.value = (1 ? (v) : (const char **)0), .argh = (a), .help = (h)                    \
	}
#define OPT_INT(s, l, v, a, h, lo, hi)                                                             \
	{                                                                                          \
		.kind = OPT_KIND_INT, .short_name = (s), .long_name = (l),                         \
		.value = (1 ? (v) : (long *)0), .argh = (a), .help = (h), .min = (lo), .max = (hi) \
	}
#define OPT_DURATION(s, l, v, a, h, max_ms)                                                        \
	{                                                                                          \
		.kind = OPT_KIND_DURATION, .short_name = (s), .long_name = (l),                    \
		.value = (1 ? (v) : (long *)0), .argh = (a), .help = (h), .max = (max_ms)          \
	}
#define OPT_CALLBACK(s, l, v, a, h, cb)                                                            \
	{                                                                                          \
		.kind = OPT_KIND_CALLBACK, .short_name = (s), .long_name = (l), .value = (v),      \
		.argh = (a), .help = (h), .callback = (cb)                                         \
	}
#define OPT_CALLBACK_NOARG(s, l, v, h, cb)                                                         \
	{                                                                                          \
		.kind = OPT_KIND_CALLBACK, .short_name = (s), .long_name = (l), .value = (v),      \
		.help = (h), .callback = (cb), .flags = OPT_NOARG                                  \
	}

/*
 * A value option whose values are a fixed list (-o table|json): the list is
 * data of the table, so --help, the shell completions and the man page show
 * it and parseopt_choice() checks it.
 */
#define OPT_STRING_VALUES(s, l, v, a, h, vals)                                                     \
	{                                                                                          \
		.kind = OPT_KIND_STRING, .short_name = (s), .long_name = (l),                      \
		.value = (1 ? (v) : (const char **)0), .argh = (a), .help = (h), .values = (vals)  \
	}
#define OPT_CALLBACK_VALUES(s, l, v, a, h, cb, vals)                                               \
	{                                                                                          \
		.kind = OPT_KIND_CALLBACK, .short_name = (s), .long_name = (l), .value = (v),      \
		.argh = (a), .help = (h), .callback = (cb), .values = (vals)                       \
	}
/* A callback whose value names something of the catalog (enum parseopt_hint). */
#define OPT_CALLBACK_HINT(s, l, v, a, h, cb, hnt)                                                  \
	{                                                                                          \
		.kind = OPT_KIND_CALLBACK, .short_name = (s), .long_name = (l), .value = (v),      \
		.argh = (a), .help = (h), .callback = (cb), .hint = (hnt)                          \
	}

/* One example of --help: what it does, then the command line (runnable from the source tree). */
struct parseopt_example {
	const char *what;
	const char *line; /* "gpushare plan -f k8s/" */
};

/* What --help says around the table. */
struct parseopt_usage {
	const char *cmd;	  /* "sync": errors read "gpushare sync: ..." */
	const char *const *lines; /* NULL-terminated: "gpushare sync [options]", ... */
	const char *text;	  /* what the command does; NULL = nothing */
	const char *footer;	  /* after the options (exit status); NULL = nothing */
	/* Ends with {NULL, NULL}; printed last, under "Examples:". */
	const struct parseopt_example *examples;
	/* NULL-terminated names of the subcommands (dra: translate, prepare); NULL = none. */
	const char *const *subcommands;
};

enum { PARSEOPT_HELP = -1, PARSEOPT_ERROR = -2 };

/*
 * Parse argv[1..argc-1] (argv[0] is the command's name) with opts, storing
 * each value through its destination. Returns the number of positionals,
 * moved to argv[0..n-1] in their order; PARSEOPT_HELP after printing --help
 * to stdout; PARSEOPT_ERROR after printing what is wrong, the usage lines
 * and a hint to stderr. The caller maps these with parseopt_exit().
 */
int parse_options(int argc, char **argv, const struct option *opts, const struct parseopt_usage *u);

/* The same without printing: PARSEOPT_ERROR comes with err filled. */
int parse_options_quiet(int argc, char **argv, const struct option *opts, struct gs_error *err);

/* The exit status for a PARSEOPT_* result: 0 for help, 2 for an error. */
int parseopt_exit(int r);

/* The generated --help: usage lines, text, options, footer. */
void usage_with_options(FILE *out, const struct option *opts, const struct parseopt_usage *u);

/*
 * A usage error found after parsing ("say what to explain"): prints
 * "gpushare CMD: MSG", the usage lines and the hint to stderr; returns 2.
 */
int usage_error(const struct parseopt_usage *u, const struct gs_error *err);

/*
 * One of a closed set of words (an -o format): its index in set[0..n-1],
 * or -1 with err "unknown WHAT 'ARG'; did you mean 'x'? (one of: ...)".
 */
int parseopt_choice(const char *what, const char *arg, const char *const *set, size_t n,
		    struct gs_error *err);

/*
 * parseopt_choice() over the values the table declares (opt->values): for
 * callbacks of OPT_CALLBACK_VALUES, so the list is written once.
 */
int parseopt_value(const struct option *opt, const char *what, const char *arg,
		   struct gs_error *err);

/*
 * The table as data: while a capture is set, parse_options() stores a JSON
 * description of the table and the usage it was given into *into (owned by
 * the caller) instead of parsing, and returns PARSEOPT_HELP; the command
 * then returns as it does after --help. This is how `gpushare __options`,
 * the shell completions and the man page read the very tables the parser
 * uses. NULL ends the capture.
 *
 *	{"command": "plan", "usage": [...], "text": ..., "footer": ...,
 *	 "examples": [{"what", "line"}], "subcommands": [...],
 *	 "options": [{"group"} | {"long", "short", "takesValue", "placeholder",
 *	              "help", "values": [...], "hint": "gpu-model"|"mig-layout"}]}
 */
struct json_t;
void parseopt_capture(struct json_t **into);

/* Go-style duration ("1m30s", "500ms") or plain seconds, into ms; -1 when bad or > max_ms. */
int parseopt_duration_ms(const char *s, long max_ms, long *out);

#endif
