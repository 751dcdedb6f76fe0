/*
 * Differential check of src/yaml/ydocfast.c against libyaml, shared by the unit
 * test and the fuzz target: whenever the fast scanner accepts an input, its
 * events must be libyaml's (start marks of scalars and collection starts
 * included; see ydocfast.h for what is not reproduced).
 */
#ifndef GS_YAMLFAST_DIFF_H
#define GS_YAMLFAST_DIFF_H

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>

#include "base/error.h"
#include "yaml/ydocfast.h"

struct evlog {
	char *s;
	size_t n;
	size_t cap;
};

static void evlog_put(struct evlog *b, const char *p, size_t len)
{
	if (b->n + len + 1 > b->cap) {
		b->cap = (b->n + len + 1) * 2;
		b->s = gs_xrealloc(b->s, b->cap);
	}
	memcpy(b->s + b->n, p, len);
	b->n += len;
	b->s[b->n] = '\0';
}

static void evlog_describe(struct evlog *b, const yaml_event_t *ev)
{
	char head[128];
	const char *anchor = NULL, *tag = NULL;

	switch (ev->type) {
	case YAML_SCALAR_EVENT:
		snprintf(head, sizeof(head), "S %zu:%zu %d %d %zu:", ev->start_mark.line, ev->start_mark.column,
			 (int)ev->data.scalar.style, ev->data.scalar.plain_implicit, ev->data.scalar.length);
		evlog_put(b, head, strlen(head));
		evlog_put(b, (const char *)ev->data.scalar.value, ev->data.scalar.length);
		anchor = (const char *)ev->data.scalar.anchor;
		tag = (const char *)ev->data.scalar.tag;
		break;
	case YAML_MAPPING_START_EVENT:
		snprintf(head, sizeof(head), "M %zu:%zu %d", ev->start_mark.line, ev->start_mark.column,
			 (int)ev->data.mapping_start.style);
		evlog_put(b, head, strlen(head));
		anchor = (const char *)ev->data.mapping_start.anchor;
		tag = (const char *)ev->data.mapping_start.tag;
		break;
	case YAML_SEQUENCE_START_EVENT:
		snprintf(head, sizeof(head), "Q %zu:%zu %d", ev->start_mark.line, ev->start_mark.column,
			 (int)ev->data.sequence_start.style);
		evlog_put(b, head, strlen(head));
		anchor = (const char *)ev->data.sequence_start.anchor;
		tag = (const char *)ev->data.sequence_start.tag;
		break;
	case YAML_MAPPING_END_EVENT:
		evlog_put(b, "m", 1);
		break;
	case YAML_SEQUENCE_END_EVENT:
		evlog_put(b, "q", 1);
		break;
	case YAML_DOCUMENT_START_EVENT:
		evlog_put(b, "D", 1);
		break;
	case YAML_DOCUMENT_END_EVENT:
		evlog_put(b, "d", 1);
		break;
	case YAML_STREAM_START_EVENT:
		evlog_put(b, "<", 1);
		break;
	case YAML_STREAM_END_EVENT:
		evlog_put(b, ">", 1);
		break;
	case YAML_ALIAS_EVENT:
		evlog_put(b, "A", 1);
		break;
	default:
		evlog_put(b, "?", 1);
		break;
	}
	if (anchor) {
		evlog_put(b, " &", 2);
		evlog_put(b, anchor, strlen(anchor));
	}
	if (tag) {
		evlog_put(b, " !", 2);
		evlog_put(b, tag, strlen(tag));
	}
	evlog_put(b, "\n", 1);
}

static int evlog_emit(void *ctx, const yaml_event_t *ev)
{
	evlog_describe(ctx, ev);
	return 0;
}

/* libyaml's events; -1 when libyaml reports an error. */
static int evlog_libyaml(const char *buf, size_t len, struct evlog *out)
{
	yaml_parser_t p;
	yaml_event_t ev;
	int done = 0, rc = 0;

	yaml_parser_initialize(&p);
	yaml_parser_set_input_string(&p, (const unsigned char *)buf, len);
	while (!done) {
		if (!yaml_parser_parse(&p, &ev)) {
			rc = -1;
			break;
		}
		evlog_describe(out, &ev);
		done = ev.type == YAML_STREAM_END_EVENT;
		yaml_event_delete(&ev);
	}
	yaml_parser_delete(&p);
	return rc;
}

/*
 * 1: the fast scanner took the input and agreed with libyaml; 0: it
 * declined; -1: it took it and disagreed (details on stderr).
 */
static int ydocfast_diff(const char *buf, size_t len)
{
	struct evlog fast = {NULL, 0, 0}, ref = {NULL, 0, 0};
	int frc, lrc, rc;

	frc = ydoc_fast_parse(buf, len, evlog_emit, &fast);
	if (frc) {
		free(fast.s);
		return 0;
	}
	lrc = evlog_libyaml(buf, len, &ref);
	rc = lrc == 0 && fast.n == ref.n && !memcmp(fast.s, ref.s, fast.n) ? 1 : -1;
	if (rc < 0)
		fprintf(stderr, "yamlfast disagrees with libyaml%s on:\n%.*s\n--- fast:\n%s--- libyaml:\n%s",
			lrc ? " (libyaml fails)" : "", (int)len, buf, fast.s ? fast.s : "",
			ref.s ? ref.s : "");
	free(fast.s);
	free(ref.s);
	return rc;
}

#endif
