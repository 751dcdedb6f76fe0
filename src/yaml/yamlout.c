#include <string.h>
#include <yaml.h>

#include "yaml/yamlout.h"
#include "base/gonum.h"
#include "yaml/ydoc.h"
#include "base/banned.h"

static int write_handler(void *data, unsigned char *buffer, size_t size)
{
	strbuf_add(data, buffer, size);
	return 1;
}

/* Whether plain `s` would read back as something other than this string. */
static int needs_quotes(const char *s, size_t len)
{
	struct ydoc_resolved r;
	struct gs_error e;

	if (!len)
		return 1;
	if (ydoc_resolve(NULL, s, len, 1, &r, &e))
		return 1;
	return r.type != YDOC_SCALAR_IS_STRING || r.merge;
}

static int scalar(yaml_emitter_t *em, const char *text, size_t len, yaml_scalar_style_t style)
{
	yaml_event_t ev;

	if (!yaml_scalar_event_initialize(&ev, NULL, NULL, (yaml_char_t *)text, (int)len, 1, 1,
					  style))
		return -1;
	return yaml_emitter_emit(em, &ev) ? 0 : -1;
}

static int emit(yaml_emitter_t *em, const json_t *v, unsigned depth)
{
	yaml_event_t ev;
	char buf[64];

	if (depth > 512)
		return -1;
	switch (json_typeof(v)) {
	case JSON_OBJECT: {
		const char *k;
		const json_t *x;
		if (!yaml_mapping_start_event_initialize(&ev, NULL, NULL, 1,
							 json_object_size(v)
								 ? YAML_BLOCK_MAPPING_STYLE
								 : YAML_FLOW_MAPPING_STYLE) ||
		    !yaml_emitter_emit(em, &ev))
			return -1;
		json_object_foreach ((json_t *)v, k, x) {
			size_t kl = strlen(k);
			if (scalar(em, k, kl,
				   needs_quotes(k, kl) ? YAML_SINGLE_QUOTED_SCALAR_STYLE
						       : YAML_ANY_SCALAR_STYLE) ||
			    emit(em, x, depth + 1))
				return -1;
		}
		if (!yaml_mapping_end_event_initialize(&ev) || !yaml_emitter_emit(em, &ev))
			return -1;
		return 0;
	}
	case JSON_ARRAY: {
		if (!yaml_sequence_start_event_initialize(&ev, NULL, NULL, 1,
							  json_array_size(v)
								  ? YAML_BLOCK_SEQUENCE_STYLE
								  : YAML_FLOW_SEQUENCE_STYLE) ||
		    !yaml_emitter_emit(em, &ev))
			return -1;
		for (size_t i = 0; i < json_array_size(v); i++)
			if (emit(em, json_array_get(v, i), depth + 1))
				return -1;
		if (!yaml_sequence_end_event_initialize(&ev) || !yaml_emitter_emit(em, &ev))
			return -1;
		return 0;
	}
	case JSON_STRING: {
		const char *s = json_string_value(v);
		size_t len = json_string_length(v);
		return scalar(em, s, len,
			      needs_quotes(s, len) ? YAML_SINGLE_QUOTED_SCALAR_STYLE
						   : YAML_ANY_SCALAR_STYLE);
	}
	case JSON_INTEGER:
	case JSON_REAL:
		if (gonum_json_number(v, buf, sizeof(buf)))
			return -1;
		return scalar(em, buf, strlen(buf), YAML_PLAIN_SCALAR_STYLE);
	case JSON_TRUE:
		return scalar(em, "true", 4, YAML_PLAIN_SCALAR_STYLE);
	case JSON_FALSE:
		return scalar(em, "false", 5, YAML_PLAIN_SCALAR_STYLE);
	default:
		return scalar(em, "null", 4, YAML_PLAIN_SCALAR_STYLE);
	}
}

int yamlout_document(const json_t *doc, struct strbuf *out, struct gs_error *err)
{
	yaml_emitter_t em;
	yaml_event_t ev;
	int rc = -1;

	if (!yaml_emitter_initialize(&em)) {
		gs_error_set(err, "cannot start the YAML emitter");
		return -1;
	}
	yaml_emitter_set_output(&em, write_handler, out);
	yaml_emitter_set_unicode(&em, 1);
	yaml_emitter_set_width(&em, -1);
	yaml_emitter_set_indent(&em, 2);
	if (yaml_stream_start_event_initialize(&ev, YAML_UTF8_ENCODING) &&
	    yaml_emitter_emit(&em, &ev) &&
	    yaml_document_start_event_initialize(&ev, NULL, NULL, NULL, 1) &&
	    yaml_emitter_emit(&em, &ev) && !emit(&em, doc, 0) &&
	    yaml_document_end_event_initialize(&ev, 1) && yaml_emitter_emit(&em, &ev) &&
	    yaml_stream_end_event_initialize(&ev) && yaml_emitter_emit(&em, &ev))
		rc = 0;
	if (rc)
		gs_error_set(err, "cannot write YAML: %s",
			     em.problem ? em.problem : "emitter error");
	yaml_emitter_delete(&em);
	return rc;
}
