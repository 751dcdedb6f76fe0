#ifndef GS_ERROR_H
#define GS_ERROR_H

#include <stddef.h>

#include "base/strbuf.h"
#include "base/wrapper.h"

/*
 * One error, filled by the function that failed. Library code never prints:
 * it fills this and returns a negative value; src/cmd/ decides what to show.
 * file/line/col are set for parse errors (line and col start at 1; 0 means
 * unknown).
 */
struct gs_error {
	char file[256];
	int line;
	int col;
	char msg[1024];
};

#define GS_WUR __attribute__((warn_unused_result))

void gs_error_clear(struct gs_error *err);
void gs_error_set(struct gs_error *err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void gs_error_at(struct gs_error *err, const char *file, int line, int col, const char *fmt, ...)
	__attribute__((format(printf, 5, 6)));
/* Prefix the message with "<prefix>", keeping the position. */
void gs_error_prefix(struct gs_error *err, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/*
 * "file:line:col: msg" (or fewer parts when unknown) into buf, always one
 * line: the file name and the message go through escape_line
 * (base/escape.h), so input they quote cannot add a line to a log or to
 * standard error.
 */
const char *gs_error_str(const struct gs_error *err, char *buf, size_t size);

/*
 * Warnings a function wants the user to see (upstream's silent behaviours,
 * suspicious input). Owned by the caller; gs_warnings_release frees items.
 */
struct gs_warnings {
	char **items;
	size_t n;
	size_t cap;
};

void gs_warnings_init(struct gs_warnings *w);
void gs_warnings_add(struct gs_warnings *w, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
void gs_warnings_release(struct gs_warnings *w);

#endif
