/*
 * libFuzzer target for the YAML loader. Any input either loads or fails
 * with a positioned message, within the limits; and the fast document-by-
 * document path (ydoc_each_document: ydocfast.c, arena, position reset)
 * must give the very same documents, positions, exact integers and errors
 * as the plain libyaml load. The fast scanner's events are also compared with libyaml's.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "yaml/ydoc.h"
#include "../tests/unit/ydocfast_diff.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const struct ydoc_limits limits = {.max_bytes = 1 << 20,
					  .max_depth = 64,
					  .max_nodes = 20000,
					  .max_docs = 64,
					  .max_anchors = 1000};

/* A document with every position the stream knows, as text. */
static void dump(const struct ydoc_stream *s, json_t *node, struct evlog *out)
{
	struct ydoc_pos p;
	char buf[96];
	char *js = json_dumps(node, JSON_ENCODE_ANY | JSON_COMPACT);

	evlog_put(out, js, strlen(js));
	free(js);
	if (ydoc_stream_pos(s, node, &p) == 0) {
		snprintf(buf, sizeof(buf), "@%d:%d", p.line, p.col);
		evlog_put(out, buf, strlen(buf));
	}
	if (json_is_real(node)) {
		const char *digits;

		if (ydoc_stream_exact_int(s, node, &digits)) {
			evlog_put(out, "=", 1);
			if (digits)
				evlog_put(out, digits, strlen(digits));
		}
	}
	if (json_is_string(node) && ydoc_stream_content_origin(s, node, &p) == 0) {
		snprintf(buf, sizeof(buf), "^%d:%d", p.line, p.col);
		evlog_put(out, buf, strlen(buf));
	}
	evlog_put(out, "\n", 1);
	if (json_is_object(node)) {
		const char *k;
		json_t *v;

		json_object_foreach (node, k, v) {
			ydoc_stream_key_pos(s, node, k, &p);
			snprintf(buf, sizeof(buf), "key %d:%d\n", p.line, p.col);
			evlog_put(out, buf, strlen(buf));
			dump(s, v, out);
		}
	} else if (json_is_array(node)) {
		size_t i;
		json_t *v;

		json_array_foreach (node, i, v) {
			ydoc_stream_index_pos(s, node, i, &p);
			snprintf(buf, sizeof(buf), "index %d:%d\n", p.line, p.col);
			evlog_put(out, buf, strlen(buf));
			dump(s, v, out);
		}
	}
}

static int collect(void *ctx, const struct ydoc_stream *s, json_t *doc, size_t index,
		   struct gs_error *err)
{
	struct evlog *out = ctx;

	(void)err;
	if (index == 0)
		out->n = 0; /* a restart in full: start over */
	dump(s, doc, out);
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *text = (const char *)data;
	struct ydoc_pos none = {.line = 0, .col = 0};
	struct ydoc_stream *s = NULL;
	struct gs_error err1, err2;
	struct evlog full = {NULL, 0, 0}, each = {NULL, 0, 0};
	char e1[2048], e2[2048];
	int rc1, rc2;

	if (ydocfast_diff(text, size) < 0)
		abort();

	rc1 = ydoc_load_buffer("f.yaml", text, size, none, &limits, &s, &err1);
	if (rc1 == 0) {
		for (size_t i = 0; i < ydoc_stream_count(s); i++)
			dump(s, ydoc_stream_doc(s, i), &full);
		ydoc_stream_free(s);
	} else if (s || !err1.msg[0] || strcmp(err1.file, "f.yaml")) {
		abort();
	}

	evlog_put(&each, "", 0);
	rc2 = ydoc_each_document("f.yaml", text, size, none, &limits, NULL, collect, &each, &err2);
	if (rc1 != rc2)
		abort();
	if (rc1 == 0 && (full.n != each.n || (full.n && memcmp(full.s, each.s, full.n))))
		abort();
	if (rc1 && strcmp(gs_error_str(&err1, e1, sizeof(e1)), gs_error_str(&err2, e2, sizeof(e2))))
		abort();
	free(full.s);
	free(each.s);
	return 0;
}
