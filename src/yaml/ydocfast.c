/*
 * The common subset of block YAML, scanned in place (see ydocfast.h).
 *
 * Every function works on whole lines: a node ends with the cursor at the
 * start of the next line that has content, and returns that line's
 * indentation (or END_STREAM / END_DOC). Indentation rules follow
 * libyaml's: a collection at column c holds lines at column c; a line
 * deeper than the node it follows would continue a plain scalar (or be an
 * error), so we give up there rather than guess.
 *
 * The marks reproduced are libyaml's event start marks: a block mapping
 * starts at its first key, a block sequence at its first '-', an empty
 * value sits just after its ':' or '-' (the end of the VALUE or
 * BLOCK-ENTRY token, yaml_parser_process_empty_scalar).
 */
#include "yaml/ydocfast.h"

#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "base/banned.h"

#define END_STREAM (-1)
#define END_DOC (-2)
#define STOP INT_MIN

/* libyaml refuses simple keys longer than this. */
#define MAX_KEY 1024
#define MAX_NESTING 512

struct fast {
	const char *b;
	size_t n;
	size_t i;  /* cursor */
	size_t ls; /* start of the cursor's line */
	size_t line;
	ydoc_fast_emit emit;
	void *ctx;
	int rc; /* why we stopped: 1 (gave up) or emit's value */
	unsigned depth;
	char *scratch;
	size_t scratch_cap;
};

static int give_up(struct fast *f)
{
	if (!f->rc)
		f->rc = 1;
	return STOP;
}

static yaml_mark_t mark(const struct fast *f, size_t at)
{
	yaml_mark_t m;

	m.index = at;
	m.line = f->line;
	m.column = at - f->ls;
	return m;
}

static int send(struct fast *f, yaml_event_t *ev)
{
	int rc = f->emit(f->ctx, ev);

	if (rc) {
		f->rc = rc;
		return STOP;
	}
	return 0;
}

static int emit_simple(struct fast *f, yaml_event_type_t type, yaml_mark_t m)
{
	yaml_event_t ev;

	memset(&ev, 0, sizeof(ev));
	ev.type = type;
	ev.start_mark = ev.end_mark = m;
	if (type == YAML_DOCUMENT_START_EVENT || type == YAML_DOCUMENT_END_EVENT)
		ev.data.document_start.implicit = 1;
	return send(f, &ev);
}

static int emit_start(struct fast *f, yaml_event_type_t type, size_t at, int flow)
{
	yaml_event_t ev;

	memset(&ev, 0, sizeof(ev));
	ev.type = type;
	ev.start_mark = ev.end_mark = mark(f, at);
	if (type == YAML_MAPPING_START_EVENT) {
		ev.data.mapping_start.implicit = 1;
		ev.data.mapping_start.style =
			flow ? YAML_FLOW_MAPPING_STYLE : YAML_BLOCK_MAPPING_STYLE;
	} else {
		ev.data.sequence_start.implicit = 1;
		ev.data.sequence_start.style =
			flow ? YAML_FLOW_SEQUENCE_STYLE : YAML_BLOCK_SEQUENCE_STYLE;
	}
	if (++f->depth > MAX_NESTING)
		return give_up(f);
	return send(f, &ev);
}

static int emit_end(struct fast *f, yaml_event_type_t type)
{
	f->depth--;
	return emit_simple(f, type, mark(f, f->i < f->ls ? f->ls : f->i));
}

static int emit_scalar_at(struct fast *f, yaml_mark_t m, const char *v, size_t len,
			  yaml_scalar_style_t style)
{
	yaml_event_t ev;

	memset(&ev, 0, sizeof(ev));
	ev.type = YAML_SCALAR_EVENT;
	ev.start_mark = ev.end_mark = m;
	ev.data.scalar.value = (yaml_char_t *)(uintptr_t)v;
	ev.data.scalar.length = len;
	ev.data.scalar.plain_implicit = style == YAML_PLAIN_SCALAR_STYLE;
	ev.data.scalar.quoted_implicit = style != YAML_PLAIN_SCALAR_STYLE;
	ev.data.scalar.style = style;
	return send(f, &ev);
}

/* ---- lines ---- */

static size_t skip_spaces(const struct fast *f, size_t p)
{
	while (p < f->n && f->b[p] == ' ')
		p++;
	return p;
}

/* Only blanks, or a comment, from p to the end of the line. */
static int rest_is_end(const struct fast *f, size_t p)
{
	size_t q = skip_spaces(f, p);

	if (q == f->n || f->b[q] == '\n')
		return 1;
	/* '#' starts a comment only after white space */
	return f->b[q] == '#' && q > p;
}

static void next_line(struct fast *f)
{
	const char *nl = memchr(f->b + f->i, '\n', f->n - f->i);

	f->i = nl ? (size_t)(nl - f->b) + 1 : f->n;
	f->ls = f->i;
	f->line++;
}

/*
 * From a line start, skip blank and comment lines. Returns the column of
 * the next line with content (cursor at its start), END_STREAM, END_DOC
 * (a clean "---" line), or STOP for what we leave to libyaml.
 */
static int content_line(struct fast *f)
{
	for (;;) {
		size_t p = skip_spaces(f, f->i);

		if (p == f->n) {
			/* libyaml's stream end: a last line without its newline counts as ended */
			if (p > f->ls) {
				f->line++;
				f->ls = p;
			}
			f->i = p;
			return END_STREAM;
		}
		if (f->b[p] == '\n' || f->b[p] == '#') {
			next_line(f);
			continue;
		}
		if (p == f->i) {
			const char *s = f->b + p;
			size_t left = f->n - p;

			if (*s == '%')
				return give_up(f);
			if (left >= 3 && (!memcmp(s, "---", 3) || !memcmp(s, "...", 3))) {
				if (*s == '-' && (left == 3 || s[3] == ' ' || s[3] == '\n'))
					return END_DOC;
				return give_up(f);
			}
		}
		return (int)(p - f->i);
	}
}

/* After a scalar or flow node ended at p: the line must be done, and no deeper line may follow. */
static int finish_line(struct fast *f, size_t p, int indent)
{
	int col;

	if (!rest_is_end(f, p))
		return give_up(f);
	f->i = p;
	next_line(f);
	col = content_line(f);
	if (col == STOP || col > indent)
		return give_up(f);
	return col;
}

static int is_dash(const struct fast *f, size_t p)
{
	return f->b[p] == '-' && (p + 1 == f->n || f->b[p + 1] == ' ' || f->b[p + 1] == '\n');
}

/* ---- scalars ---- */

enum plain_end { PLAIN_EOL, PLAIN_COLON, PLAIN_COMMENT };

static int plain_start_ok(const struct fast *f, size_t p)
{
	const char *s = f->b + p;

	if (strchr("-?:,[]{}#&*!|>'\"%@`", *s) && !(*s == '-' && !is_dash(f, p)))
		return 0;
	/* document markers away from column 0: legal, but not worth the doubt */
	if (f->n - p >= 3 && (!memcmp(s, "---", 3) || !memcmp(s, "...", 3)))
		return 0;
	return 1;
}

/*
 * A plain scalar in block context, from p to the end of its line: it stops
 * at ": " (a key), " #" (a comment) or the line end; trailing spaces are
 * not part of it.
 */
static enum plain_end scan_plain(const struct fast *f, size_t p, size_t *end, size_t *stop)
{
	size_t q = p;
	enum plain_end why = PLAIN_EOL;

	for (; q < f->n && f->b[q] != '\n'; q++) {
		if (f->b[q] == ':' &&
		    (q + 1 == f->n || f->b[q + 1] == ' ' || f->b[q + 1] == '\n')) {
			why = PLAIN_COLON;
			break;
		}
		if (f->b[q] == '#' && f->b[q - 1] == ' ') {
			why = PLAIN_COMMENT;
			break;
		}
	}
	*stop = q;
	while (q > p && f->b[q - 1] == ' ')
		q--;
	*end = q;
	return why;
}

/* A quoted scalar closed on its line; *after is just past the closing quote. */
static int scan_quoted(struct fast *f, size_t p, const char **v, size_t *len, size_t *after)
{
	char quote = f->b[p];
	size_t q = p + 1;
	int doubled = 0;

	for (;; q++) {
		char c;

		if (q >= f->n || f->b[q] == '\n')
			return give_up(f);
		c = f->b[q];
		if (quote == '"' && c == '\\')
			return give_up(f);
		if (c == quote) {
			if (quote == '\'' && q + 1 < f->n && f->b[q + 1] == '\'') {
				doubled = 1;
				q++;
				continue;
			}
			break;
		}
	}
	*after = q + 1;
	*v = f->b + p + 1;
	*len = q - p - 1;
	if (doubled) {
		size_t k = 0;

		if (*len + 1 > f->scratch_cap) {
			f->scratch_cap = *len + 64;
			f->scratch = gs_xrealloc(f->scratch, f->scratch_cap);
		}
		for (size_t j = p + 1; j < q; j++) {
			f->scratch[k++] = f->b[j];
			if (f->b[j] == '\'')
				j++;
		}
		*v = f->scratch;
		*len = k;
	}
	return 0;
}

/* A key at p ("k:" then blank): emits it, returns the index just past ':'. */
static int is_key(struct fast *f, size_t p, size_t *colon)
{
	size_t end, stop, after;
	const char *v;
	size_t len;

	if (f->b[p] == '"' || f->b[p] == '\'') {
		int save_rc = f->rc;

		if (scan_quoted(f, p, &v, &len, &after) == STOP) {
			f->rc = save_rc; /* not a key here; whoever scans it as a value gives up */
			return 0;
		}
		after = skip_spaces(f, after);
		if (after < f->n && f->b[after] == ':' &&
		    (after + 1 == f->n || f->b[after + 1] == ' ' || f->b[after + 1] == '\n')) {
			*colon = after;
			return 1;
		}
		return 0;
	}
	if (f->b[p] == '[' || f->b[p] == '{' || !plain_start_ok(f, p))
		return 0;
	if (scan_plain(f, p, &end, &stop) != PLAIN_COLON)
		return 0;
	*colon = stop;
	return 1;
}

static int emit_key(struct fast *f, size_t p, size_t colon)
{
	if (colon - p > MAX_KEY)
		return give_up(f);
	if (f->b[p] == '"' || f->b[p] == '\'') {
		const char *v;
		size_t len, after;

		if (scan_quoted(f, p, &v, &len, &after) == STOP)
			return STOP;
		return emit_scalar_at(f, mark(f, p), v, len,
				      f->b[p] == '"' ? YAML_DOUBLE_QUOTED_SCALAR_STYLE
						     : YAML_SINGLE_QUOTED_SCALAR_STYLE);
	} else {
		size_t end = colon;

		while (end > p && f->b[end - 1] == ' ')
			end--;
		return emit_scalar_at(f, mark(f, p), f->b + p, end - p, YAML_PLAIN_SCALAR_STYLE);
	}
}

/* ---- flow collections on one line ---- */

static int flow_plain_char(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
	       c == '-' || c == '.' || c == '_' || c == '/' || c == '=' || c == '+' || c == '~';
}

static int flow_node(struct fast *f, size_t p, size_t *after);

static int flow_scalar(struct fast *f, size_t p, size_t *after)
{
	const char *v;
	size_t len, q = p;

	if (f->b[p] == '"' || f->b[p] == '\'') {
		if (scan_quoted(f, p, &v, &len, after) == STOP)
			return STOP;
		return emit_scalar_at(f, mark(f, p), v, len,
				      f->b[p] == '"' ? YAML_DOUBLE_QUOTED_SCALAR_STYLE
						     : YAML_SINGLE_QUOTED_SCALAR_STYLE);
	}
	if (!flow_plain_char(f->b[p]) ||
	    (f->b[p] == '-' &&
	     !(p + 1 < f->n && flow_plain_char(f->b[p + 1]) && f->b[p + 1] != '-')))
		return give_up(f);
	while (q < f->n && flow_plain_char(f->b[q]))
		q++;
	if (q - p >= 3 && (!memcmp(f->b + p, "---", 3) || !memcmp(f->b + p, "...", 3)))
		return give_up(f);
	*after = q;
	return emit_scalar_at(f, mark(f, p), f->b + p, q - p, YAML_PLAIN_SCALAR_STYLE);
}

static int flow_collection(struct fast *f, size_t p, size_t *after)
{
	int map = f->b[p] == '{';
	char close = map ? '}' : ']';
	size_t q;

	if (emit_start(f, map ? YAML_MAPPING_START_EVENT : YAML_SEQUENCE_START_EVENT, p, 1) == STOP)
		return STOP;
	q = skip_spaces(f, p + 1);
	if (q < f->n && f->b[q] == close)
		goto done;
	for (;;) {
		if (q >= f->n || f->b[q] == '\n')
			return give_up(f);
		if (map) {
			size_t key = q;

			if (f->b[q] == '[' || f->b[q] == '{')
				return give_up(f);
			if (flow_scalar(f, q, &q) == STOP)
				return STOP;
			q = skip_spaces(f, q);
			if (q + 1 >= f->n || f->b[q] != ':' || f->b[q + 1] != ' ' ||
			    q - key > MAX_KEY)
				return give_up(f);
			q = skip_spaces(f, q + 1);
			if (q >= f->n || f->b[q] == ',' || f->b[q] == '}' || f->b[q] == '\n')
				return give_up(f);
		}
		if (flow_node(f, q, &q) == STOP)
			return STOP;
		q = skip_spaces(f, q);
		if (q < f->n && f->b[q] == ',') {
			q = skip_spaces(f, q + 1);
			if (q < f->n && (f->b[q] == close || f->b[q] == ','))
				return give_up(f);
			continue;
		}
		if (q < f->n && f->b[q] == close)
			break;
		return give_up(f);
	}
done:
	*after = q + 1;
	f->i = q;
	return emit_end(f, map ? YAML_MAPPING_END_EVENT : YAML_SEQUENCE_END_EVENT);
}

static int flow_node(struct fast *f, size_t p, size_t *after)
{
	if (f->b[p] == '[' || f->b[p] == '{')
		return flow_collection(f, p, after);
	return flow_scalar(f, p, after);
}

/* ---- block structure ---- */

static int block_node(struct fast *f, int indent, int indentless);
static int block_mapping(struct fast *f, size_t p);

/* A scalar or flow collection as a value, at p, up to the end of its line. */
static int inline_value(struct fast *f, size_t p, int indent)
{
	size_t end, stop;

	if (f->b[p] == '[' || f->b[p] == '{') {
		if (flow_collection(f, p, &end) == STOP)
			return STOP;
		return finish_line(f, end, indent);
	}
	if (f->b[p] == '"' || f->b[p] == '\'') {
		const char *v;
		size_t len;

		if (scan_quoted(f, p, &v, &len, &end) == STOP)
			return STOP;
		if (emit_scalar_at(f, mark(f, p), v, len,
				   f->b[p] == '"' ? YAML_DOUBLE_QUOTED_SCALAR_STYLE
						  : YAML_SINGLE_QUOTED_SCALAR_STYLE) == STOP)
			return STOP;
		return finish_line(f, end, indent);
	}
	if (!plain_start_ok(f, p) || scan_plain(f, p, &end, &stop) == PLAIN_COLON)
		return give_up(f);
	if (emit_scalar_at(f, mark(f, p), f->b + p, end - p, YAML_PLAIN_SCALAR_STYLE) == STOP)
		return STOP;
	return finish_line(f, end, indent);
}

/*
 * After "key:" or "-" with nothing else on the line: the value is on the
 * lines below when they are deeper than `col` (or, for a mapping, an
 * indentless sequence at `col`), else it is empty, marked at `empty_at`.
 */
static int value_below(struct fast *f, int col, size_t empty_at, int indentless_ok)
{
	yaml_mark_t m = mark(f, empty_at);
	int next;

	next_line(f);
	next = content_line(f);
	if (next == STOP)
		return STOP;
	if (next > col) {
		f->i += (size_t)next;
		return block_node(f, col, 0);
	}
	if (next == col && indentless_ok && is_dash(f, f->i + (size_t)next)) {
		f->i += (size_t)next;
		return block_node(f, col, 1);
	}
	if (emit_scalar_at(f, m, "", 0, YAML_PLAIN_SCALAR_STYLE) == STOP)
		return STOP;
	return next;
}

/*
 * The value of one entry of a block collection at column col, after its
 * indicator ("- " or "key:") at `after`; a compact mapping ("- a: 1") may
 * start there when keys_ok. Returns STOP, or the column of the line that
 * follows, giving up when it is indented deeper than the collection.
 */
static int entry_value(struct fast *f, size_t after, int col, int indentless_ok, int keys_ok)
{
	size_t q = skip_spaces(f, after), colon;
	int next;

	if (rest_is_end(f, after)) {
		f->i = after;
		next = value_below(f, col, after, indentless_ok);
	} else if (is_dash(f, q)) {
		return give_up(f);
	} else if (keys_ok && is_key(f, q, &colon)) {
		f->i = q;
		next = block_mapping(f, q);
	} else {
		next = inline_value(f, q, col);
	}
	if (next == STOP)
		return STOP;
	if (next > col)
		return give_up(f);
	return next;
}

static int block_sequence(struct fast *f, size_t p, int indentless)
{
	int col = (int)(p - f->ls);

	if (emit_start(f, YAML_SEQUENCE_START_EVENT, p, 0) == STOP)
		return STOP;
	for (;;) {
		int next = entry_value(f, p + 1, col, 0, 1);

		if (next == STOP)
			return STOP;
		if (next == col) {
			p = f->i + (size_t)next;
			if (is_dash(f, p))
				continue;
			if (!indentless)
				return give_up(f);
		}
		if (emit_end(f, YAML_SEQUENCE_END_EVENT) == STOP)
			return STOP;
		return next;
	}
}

static int block_mapping(struct fast *f, size_t p)
{
	int col = (int)(p - f->ls);

	if (emit_start(f, YAML_MAPPING_START_EVENT, p, 0) == STOP)
		return STOP;
	for (;;) {
		size_t colon;
		int next;

		if (!is_key(f, p, &colon))
			return give_up(f);
		if (emit_key(f, p, colon) == STOP)
			return STOP;
		next = entry_value(f, colon + 1, col, 1, 0);
		if (next == STOP)
			return STOP;
		if (next == col) {
			p = f->i + (size_t)next;
			continue;
		}
		if (emit_end(f, YAML_MAPPING_END_EVENT) == STOP)
			return STOP;
		return next;
	}
}

/*
 * A node starting at the cursor, the first content of its line; `indent`
 * is the enclosing collection's column (-1 at the top); `indentless`: a
 * sequence at the column of the mapping whose value it is.
 */
static int block_node(struct fast *f, int indent, int indentless)
{
	size_t p = f->i, colon;

	if (is_dash(f, p))
		return block_sequence(f, p, indentless);
	if (is_key(f, p, &colon))
		return block_mapping(f, p);
	if (f->rc)
		return STOP;
	return inline_value(f, p, indent);
}

/* ---- documents ---- */

static int byte_ok(unsigned char c)
{
	return c == '\n' || (c >= 0x20 && c <= 0x7E);
}

/*
 * Printable ASCII and newlines only: everything else is libyaml's. Eight
 * bytes at a time (no carry crosses a byte in these sums): a high bit is
 * set where a byte is >= 0x80, below 0x20 but not '\n', or 0x7F.
 */
static int plain_ascii(const char *b, size_t n)
{
	const uint64_t ones = 0x0101010101010101ull, high = 0x8080808080808080ull,
		       low7 = 0x7F7F7F7F7F7F7F7Full;
	uint64_t bad = 0;
	size_t i = 0;

	for (; i + 8 <= n; i += 8) {
		uint64_t w, nl, del, ctrl;

		memcpy(&w, b + i, 8);
		ctrl = ~((w & low7) + 0x60 * ones) & high; /* byte < 0x20 (or >= 0x80) */
		nl = w ^ (0x0A * ones);
		nl = (((nl & low7) + low7) | nl) & high; /* byte != '\n' */
		del = w ^ (0x7F * ones);
		del = ~(((del & low7) + low7) | del) & high; /* byte == 0x7F */
		bad |= (w & high) | (ctrl & nl) | del;
	}
	for (; i < n; i++)
		if (!byte_ok((unsigned char)b[i]))
			return 0;
	return !bad;
}

static int stream(struct fast *f)
{
	yaml_mark_t m = mark(f, 0);
	int col;

	if (emit_simple(f, YAML_STREAM_START_EVENT, m) == STOP)
		return STOP;
	col = content_line(f);
	while (col != END_STREAM) {
		if (col == STOP)
			return STOP;
		if (col == END_DOC) {
			if (!rest_is_end(f, f->i + 3))
				return give_up(f);
			if (emit_simple(f, YAML_DOCUMENT_START_EVENT, mark(f, f->i)) == STOP)
				return STOP;
			next_line(f);
			col = content_line(f);
			if (col == STOP)
				return STOP;
			if (col < 0) {
				if (emit_scalar_at(f, mark(f, f->i), "", 0,
						   YAML_PLAIN_SCALAR_STYLE) == STOP)
					return STOP;
			} else {
				f->i += (size_t)col;
				col = block_node(f, -1, 0);
			}
		} else {
			if (emit_simple(f, YAML_DOCUMENT_START_EVENT,
					mark(f, f->i + (size_t)col)) == STOP)
				return STOP;
			f->i += (size_t)col;
			col = block_node(f, -1, 0);
		}
		if (col == STOP)
			return STOP;
		if (col >= 0)
			return give_up(f);
		if (emit_simple(f, YAML_DOCUMENT_END_EVENT, mark(f, f->i)) == STOP)
			return STOP;
	}
	return emit_simple(f, YAML_STREAM_END_EVENT, mark(f, f->n));
}

int ydoc_fast_parse(const char *buf, size_t len, ydoc_fast_emit emit, void *ctx)
{
	struct fast f;

	if (!plain_ascii(buf, len))
		return 1;
	memset(&f, 0, sizeof(f));
	f.b = buf;
	f.n = len;
	f.emit = emit;
	f.ctx = ctx;
	if (stream(&f) == STOP && !f.rc)
		f.rc = 1;
	free(f.scratch);
	return f.rc;
}
