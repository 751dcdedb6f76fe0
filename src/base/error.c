#include "base/error.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/escape.h"
#include "base/strbuf.h"

/* The formatted text into err->msg, cut at a character when it is longer. */
static void set_msg(struct gs_error *err, const char *fmt, va_list ap)
{
	struct strbuf sb = STRBUF_INIT;

	strbuf_vaddf(&sb, fmt, ap);
	strbuf_copy_to(&sb, err->msg, sizeof(err->msg));
	strbuf_release(&sb);
}

void gs_error_clear(struct gs_error *err)
{
	if (!err)
		return;
	err->file[0] = '\0';
	err->line = 0;
	err->col = 0;
	err->msg[0] = '\0';
}

void gs_error_set(struct gs_error *err, const char *fmt, ...)
{
	va_list ap;

	if (!err)
		return;
	gs_error_clear(err);
	va_start(ap, fmt);
	set_msg(err, fmt, ap);
	va_end(ap);
}

void gs_error_at(struct gs_error *err, const char *file, int line, int col, const char *fmt, ...)
{
	va_list ap;

	if (!err)
		return;
	gs_error_clear(err);
	snprintf(err->file, sizeof(err->file), "%s", file ? file : "");
	err->line = line;
	err->col = col;
	va_start(ap, fmt);
	set_msg(err, fmt, ap);
	va_end(ap);
}

void gs_error_prefix(struct gs_error *err, const char *fmt, ...)
{
	struct strbuf sb = STRBUF_INIT;
	va_list ap;

	if (!err)
		return;
	va_start(ap, fmt);
	strbuf_vaddf(&sb, fmt, ap);
	va_end(ap);
	strbuf_addstr(&sb, err->msg);
	strbuf_copy_to(&sb, err->msg, sizeof(err->msg));
	strbuf_release(&sb);
}

const char *gs_error_str(const struct gs_error *err, char *buf, size_t size)
{
	struct strbuf sb = STRBUF_INIT;

	/* A file name or a message quoting input may hold a line break: escape_line. */
	escape_line_str(&sb, err->file);
	if (err->file[0] && err->line > 0)
		strbuf_addf(&sb, ":%d", err->line);
	if (err->file[0] && err->line > 0 && err->col > 0)
		strbuf_addf(&sb, ":%d", err->col);
	if (err->file[0])
		strbuf_addstr(&sb, ": ");
	escape_line_str(&sb, err->msg);
	if (size)
		strbuf_copy_to(&sb, buf, size);
	strbuf_release(&sb);
	return buf;
}

void gs_warnings_init(struct gs_warnings *w)
{
	w->items = NULL;
	w->n = 0;
	w->cap = 0;
}

void gs_warnings_add(struct gs_warnings *w, const char *fmt, ...)
{
	struct strbuf sb = STRBUF_INIT;
	va_list ap;
	char *s;

	va_start(ap, fmt);
	strbuf_vaddf(&sb, fmt, ap);
	va_end(ap);
	s = strbuf_detach(&sb, NULL);
	if (w->n == w->cap) {
		w->cap = w->cap ? w->cap * 2 : 4;
		w->items = gs_xrealloc(w->items, w->cap * sizeof(*w->items));
	}
	w->items[w->n++] = s;
}

void gs_warnings_release(struct gs_warnings *w)
{
	for (size_t i = 0; i < w->n; i++)
		free(w->items[i]);
	free(w->items);
	gs_warnings_init(w);
}
