#include "fleet/trace.h"

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/readfile.h"
#include "base/wrapper.h"
#include "base/banned.h"

#define MAX_COLUMNS 64

/* One line split into fields, each with its 1-based column. */
struct line {
	const char *field[MAX_COLUMNS];
	size_t len[MAX_COLUMNS];
	int col[MAX_COLUMNS];
	size_t n;
};

struct cursor {
	const char *file;
	const char *p, *end;
	int line; /* of the line last split */
};

/* Split the next line at commas; false at the end of the text. */
static int next_line(struct cursor *c, struct line *l, struct gs_error *err)
{
	const char *s = c->p, *eol;

	if (c->p >= c->end)
		return 0;
	eol = memchr(s, '\n', (size_t)(c->end - s));
	if (!eol)
		eol = c->end;
	c->p = eol < c->end ? eol + 1 : eol;
	c->line++;
	if (eol > s && eol[-1] == '\r')
		eol--;
	l->n = 0;
	for (const char *f = s;;) {
		const char *comma = memchr(f, ',', (size_t)(eol - f));
		const char *fe = comma ? comma : eol;
		if (l->n == MAX_COLUMNS) {
			gs_error_at(err, c->file, c->line, (int)(f - s) + 1, "more than %d fields",
				    MAX_COLUMNS);
			return -1;
		}
		for (const char *q = f; q < fe; q++)
			if (*q == '"' || (unsigned char)*q < 0x20) {
				gs_error_at(err, c->file, c->line, (int)(q - s) + 1,
					    *q == '"' ? "quoted fields are not supported"
						      : "control character in a field");
				return -1;
			}
		l->field[l->n] = f;
		l->len[l->n] = (size_t)(fe - f);
		l->col[l->n] = (int)(f - s) + 1;
		l->n++;
		if (!comma)
			break;
		f = comma + 1;
	}
	return 1;
}

static bool blank(const struct line *l)
{
	return l->n == 1 && l->len[0] == 0;
}

struct column {
	const char *name;
	bool required;
	int at; /* index in the line, -1 when absent */
};

static int header(struct cursor *c, struct column *cols, size_t n_cols, size_t *width,
		  struct gs_error *err)
{
	struct line l;
	int r = next_line(c, &l, err);

	if (r < 0)
		return -1;
	if (r == 0 || blank(&l)) {
		gs_error_at(err, c->file, 1, 1, "empty file: the first line must name the columns");
		return -1;
	}
	for (size_t k = 0; k < n_cols; k++)
		cols[k].at = -1;
	for (size_t i = 0; i < l.n; i++)
		for (size_t k = 0; k < n_cols; k++)
			if (strlen(cols[k].name) == l.len[i] &&
			    !memcmp(cols[k].name, l.field[i], l.len[i])) {
				if (cols[k].at >= 0) {
					gs_error_at(err, c->file, c->line, l.col[i],
						    "column '%s' named twice", cols[k].name);
					return -1;
				}
				cols[k].at = (int)i;
			}
	for (size_t k = 0; k < n_cols; k++)
		if (cols[k].required && cols[k].at < 0) {
			gs_error_at(err, c->file, c->line, 1, "no column '%s' in the header",
				    cols[k].name);
			return -1;
		}
	*width = l.n;
	return 0;
}

static int field_int(const struct cursor *c, const struct line *l, const struct column *col,
		     int64_t max, int64_t *out, struct gs_error *err)
{
	const char *f = l->field[col->at];
	size_t n = l->len[col->at];
	int64_t v = 0;

	if (!n) {
		gs_error_at(err, c->file, c->line, l->col[col->at], "%s: empty, expected a number",
			    col->name);
		return -1;
	}
	for (size_t i = 0; i < n; i++) {
		if (f[i] < '0' || f[i] > '9') {
			gs_error_at(err, c->file, c->line, l->col[col->at] + (int)i,
				    "%s: '%.*s' is not a whole number", col->name, (int)n, f);
			return -1;
		}
		if (v > (max - (f[i] - '0')) / 10) {
			gs_error_at(err, c->file, c->line, l->col[col->at],
				    "%s: %.*s is above the limit %lld", col->name, (int)n, f,
				    (long long)max);
			return -1;
		}
		v = v * 10 + (f[i] - '0');
	}
	*out = v;
	return 0;
}

/* A Kubernetes object name: lower-case letters, digits, '-' and '.', alphanumeric at both ends. */
static int field_name(const struct cursor *c, const struct line *l, const struct column *col,
		      char **out, struct gs_error *err)
{
	const char *f = l->field[col->at];
	size_t n = l->len[col->at];

	if (!n || n > TRACE_MAX_NAME) {
		gs_error_at(err, c->file, c->line, l->col[col->at], "%s: %s", col->name,
			    n ? "longer than 253 characters" : "empty");
		return -1;
	}
	for (size_t i = 0; i < n; i++) {
		char ch = f[i];
		bool alnum = (ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9');
		if (alnum || ((ch == '-' || ch == '.') && i && i + 1 < n))
			continue;
		gs_error_at(err, c->file, c->line, l->col[col->at] + (int)i,
			    "%s: '%.*s' is not a valid object name (lower-case letters, digits, "
			    "'-' and '.', starting and ending with a letter or digit)",
			    col->name, (int)n, f);
		return -1;
	}
	*out = gs_xstrndup(f, n);
	return 0;
}

/* A GPU model code or a '|'-separated list of them: letters and digits. */
static int field_codes(const struct cursor *c, const struct line *l, const struct column *col,
		       bool list, char **out, struct gs_error *err)
{
	const char *f = col->at >= 0 ? l->field[col->at] : "";
	size_t n = col->at >= 0 ? l->len[col->at] : 0;

	for (size_t i = 0; i < n; i++) {
		char ch = f[i];
		if ((ch >= 'A' && ch <= 'Z') || (ch >= 'a' && ch <= 'z') ||
		    (ch >= '0' && ch <= '9') || (list && ch == '|'))
			continue;
		gs_error_at(err, c->file, c->line, l->col[col->at] + (int)i,
			    "%s: unexpected '%c' in '%.*s' (a GPU model code%s)", col->name, ch,
			    (int)n, f, list ? ", or several separated by '|'" : "");
		return -1;
	}
	*out = gs_xstrndup(f, n);
	return 0;
}

static int row_width(const struct cursor *c, const struct line *l, size_t width,
		     struct gs_error *err)
{
	if (l->n == width)
		return 0;
	gs_error_at(err, c->file, c->line, l->n > width ? l->col[width] : 1,
		    "%zu fields, the header names %zu", l->n, width);
	return -1;
}

/* A name seen before in `seen` (name -> line): the error, else record it. */
static int unique(json_t *seen, const struct cursor *c, const struct line *l,
		  const struct column *col, const char *name, struct gs_error *err)
{
	json_t *v = json_object_get(seen, name);

	if (v) {
		gs_error_at(err, c->file, c->line, l->col[col->at], "%s '%s' already on line %lld",
			    col->name, name, (long long)json_integer_value(v));
		return -1;
	}
	json_object_set_new(seen, name, json_integer(c->line));
	return 0;
}

int trace_parse_nodes(const char *file, const char *text, size_t len, struct replay_trace *t,
		      struct gs_error *err)
{
	struct column cols[] = {
		{"sn", true, -1},  {"cpu_milli", true, -1}, {"memory_mib", true, -1},
		{"gpu", true, -1}, {"model", true, -1},
	};
	struct cursor c = {file, text, text + len, 0};
	struct line l;
	size_t width, cap = 0;
	json_t *seen = json_object();
	int r, rc = -1;

	if (header(&c, cols, 5, &width, err) < 0)
		goto out;
	while ((r = next_line(&c, &l, err)) > 0) {
		struct replay_node n = {0};
		int64_t gpus;
		if (blank(&l))
			continue;
		if (t->n_nodes == REPLAY_MAX_NODES) {
			gs_error_at(err, file, c.line, 1, "more than %d nodes", REPLAY_MAX_NODES);
			goto out;
		}
		if (row_width(&c, &l, width, err) < 0 ||
		    field_name(&c, &l, &cols[0], &n.name, err) < 0)
			goto out;
		if (unique(seen, &c, &l, &cols[0], n.name, err) < 0 ||
		    field_int(&c, &l, &cols[1], REPLAY_MAX_CPU_MILLI, &n.cpu_milli, err) < 0 ||
		    field_int(&c, &l, &cols[2], REPLAY_MAX_MEMORY_MIB, &n.memory_mib, err) < 0 ||
		    field_int(&c, &l, &cols[3], REPLAY_MAX_GPUS, &gpus, err) < 0 ||
		    field_codes(&c, &l, &cols[4], false, &n.model, err) < 0) {
			free(n.name);
			free(n.model);
			goto out;
		}
		n.gpus = (int)gpus;
		const char *why = NULL;
		if (n.gpus && !*n.model)
			why = "a node with GPUs needs their model";
		else if (n.gpus && !replay_gpu_product(n.model))
			why = "unknown GPU model (known: A10, G1, G2, G3, P100, T4, V100M16, "
			      "V100M32)";
		else if (!n.gpus && *n.model)
			why = "a model on a node without GPUs";
		if (why) {
			gs_error_at(err, file, c.line, l.col[cols[4].at], "model '%s': %s", n.model,
				    why);
			free(n.name);
			free(n.model);
			goto out;
		}
		if (t->n_nodes == cap) {
			cap = cap ? cap * 2 : 64;
			t->nodes = gs_xrealloc(t->nodes, cap * sizeof(*t->nodes));
		}
		t->nodes[t->n_nodes++] = n;
	}
	if (r < 0)
		goto out;
	rc = 0;
out:
	json_decref(seen);
	return rc;
}

/* TRACE_TIMES: a task's creation, deletion and scheduled times (cols[6..8]). */
static int task_times(const struct cursor *c, const struct line *l, const struct column *cols,
		      struct replay_task *k, struct gs_error *err)
{
	const struct column *del = &cols[7], *sch = &cols[8];

	if (field_int(c, l, &cols[6], REPLAY_MAX_TIME, &k->created, err) < 0 ||
	    field_int(c, l, del, REPLAY_MAX_TIME, &k->deleted, err) < 0)
		return -1;
	if (k->deleted < k->created) {
		gs_error_at(err, c->file, c->line, l->col[del->at],
			    "deletion_time %lld is before creation_time %lld",
			    (long long)k->deleted, (long long)k->created);
		return -1;
	}
	if (sch->at >= 0 && l->len[sch->at])
		return field_int(c, l, sch, REPLAY_MAX_TIME, &k->scheduled, err);
	return 0;
}

int trace_parse_tasks(const char *file, const char *text, size_t len, unsigned flags,
		      struct replay_trace *t, struct gs_error *err)
{
	bool times = flags & TRACE_TIMES;
	struct column cols[] = {
		{"name", true, -1},
		{"cpu_milli", true, -1},
		{"memory_mib", true, -1},
		{"num_gpu", true, -1},
		{"gpu_milli", true, -1},
		{"gpu_spec", false, -1},
		{"creation_time", times, -1},
		{"deletion_time", times, -1},
		{"scheduled_time", false, -1},
	};
	struct cursor c = {file, text, text + len, 0};
	struct line l;
	size_t width, cap = 0;
	json_t *seen = json_object();
	int r, rc = -1;

	if (header(&c, cols, sizeof(cols) / sizeof(cols[0]), &width, err) < 0)
		goto out;
	while ((r = next_line(&c, &l, err)) > 0) {
		struct replay_task k = {.created = -1, .deleted = -1, .scheduled = -1};
		int64_t num, milli;
		if (blank(&l))
			continue;
		if (t->n_tasks == REPLAY_MAX_TASKS) {
			gs_error_at(err, file, c.line, 1, "more than %d tasks", REPLAY_MAX_TASKS);
			goto out;
		}
		if (row_width(&c, &l, width, err) < 0 ||
		    field_name(&c, &l, &cols[0], &k.name, err) < 0)
			goto out;
		if (unique(seen, &c, &l, &cols[0], k.name, err) < 0 ||
		    field_int(&c, &l, &cols[1], REPLAY_MAX_CPU_MILLI, &k.cpu_milli, err) < 0 ||
		    field_int(&c, &l, &cols[2], REPLAY_MAX_MEMORY_MIB, &k.memory_mib, err) < 0 ||
		    field_int(&c, &l, &cols[3], REPLAY_MAX_GPUS, &num, err) < 0 ||
		    field_int(&c, &l, &cols[4], REPLAY_MILLI, &milli, err) < 0 ||
		    field_codes(&c, &l, &cols[5], true, &k.gpu_spec, err) < 0 ||
		    (times && task_times(&c, &l, cols, &k, err) < 0)) {
			free(k.name);
			free(k.gpu_spec);
			goto out;
		}
		k.num_gpu = (int)num;
		k.gpu_milli = (int)milli;
		const char *why = NULL;
		int at = cols[4].at;
		if (!num && milli)
			why = "a task without GPUs asks for no gpu_milli";
		else if (num && !milli)
			why = "a task with GPUs asks for some gpu_milli (1 to 1000)";
		else if (num > 1 && milli != REPLAY_MILLI)
			why = "a task of several GPUs takes them whole (gpu_milli 1000)";
		if (why) {
			gs_error_at(err, file, c.line, l.col[at],
				    "gpu_milli %lld with num_gpu %lld: %s", (long long)milli,
				    (long long)num, why);
			free(k.name);
			free(k.gpu_spec);
			goto out;
		}
		if (t->n_tasks == cap) {
			cap = cap ? cap * 2 : 256;
			t->tasks = gs_xrealloc(t->tasks, cap * sizeof(*t->tasks));
		}
		t->tasks[t->n_tasks++] = k;
	}
	if (r < 0)
		goto out;
	rc = 0;
out:
	json_decref(seen);
	return rc;
}

int trace_load(const char *nodes_path, const char *tasks_path, unsigned flags,
	       struct replay_trace *t, struct gs_error *err)
{
	struct gs_file nf = {0}, tf = {0};
	int rc = -1;

	memset(t, 0, sizeof(*t));
	if (!strcmp(nodes_path, "-") && !strcmp(tasks_path, "-")) {
		gs_error_set(err, "only one of the two files can be standard input");
		return -1;
	}
	if (gs_file_open(nodes_path, TRACE_MAX_BYTES, &nf, err) < 0 ||
	    gs_file_open(tasks_path, TRACE_MAX_BYTES, &tf, err) < 0 ||
	    trace_parse_nodes(nodes_path, nf.data, nf.len, t, err) < 0 ||
	    trace_parse_tasks(tasks_path, tf.data, tf.len, flags, t, err) < 0)
		goto out;
	rc = 0;
out:
	gs_file_release(&nf);
	gs_file_release(&tf);
	if (rc < 0)
		replay_trace_release(t);
	return rc;
}
