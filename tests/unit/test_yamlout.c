#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "yaml/yamlout.h"
#include "yaml/ydoc.h"

/* Written, then read back by ydoc (Kubernetes' YAML reading): the same tree. */
static void roundtrip(const char *json_text)
{
	json_error_t je;
	json_t *in = json_loads(json_text, JSON_DECODE_ANY, &je);
	struct strbuf sb = STRBUF_INIT;
	struct gs_error err;
	struct ydoc_stream *s = NULL;

	if (!in)
		fail_msg("bad test JSON: %s", je.text);
	if (yamlout_document(in, &sb, &err))
		fail_msg("yamlout: %s", err.msg);
	if (ydoc_load_buffer("out.yaml", sb.buf, sb.len, (struct ydoc_pos){0, 0},
			     &ydoc_default_limits, &s, &err))
		fail_msg("%s does not read back: %s", sb.buf, err.msg);
	assert_int_equal(ydoc_stream_count(s), 1);
	if (!json_equal(in, ydoc_stream_doc(s, 0))) {
		char *got = json_dumps(ydoc_stream_doc(s, 0), JSON_COMPACT | JSON_ENCODE_ANY);
		fail_msg("%s\nread back as %s, want %s", sb.buf, got, json_text);
	}
	ydoc_stream_free(s);
	strbuf_release(&sb);
	json_decref(in);
}

static void scalars_that_would_change(void **state)
{
	(void)state;
	roundtrip(
		"{\"a\":\"2\",\"b\":\"true\",\"c\":\"on\",\"d\":\"\",\"e\":\"null\",\"f\":\"~\","
		"\"g\":\"1e3\",\"h\":\"0x10\",\"i\":\"<<\",\"j\":\"y\",\"k\":\"1.5\",\"l\":\"NO\","
		"\"m\":\".inf\",\"n\":\"0o7\",\"o\":\"1_000\"}");
	roundtrip("{\"2\":\"x\",\"true\":1,\"on\":false,\"\":null}");
}

static void awkward_strings(void **state)
{
	(void)state;
	roundtrip("{\"a\":\": x\",\"b\":\"- "
		  "a\",\"c\":\"#c\",\"d\":\"two\\nlines\",\"e\":\"caf\\u00e9\","
		  "\"f\":\" lead\",\"g\":\"trail \",\"h\":\"a: "
		  "b\",\"i\":\"'q'\",\"j\":\"\\\"dq\\\"\","
		  "\"k\":\"device.attributes['gpu.nvidia.com'].profile == '1g.10gb'\","
		  "\"l\":\"0000:07:00.0\",\"m\":\"12:30\",\"n\":\"2001-12-14\"}");
}

static void shapes(void **state)
{
	(void)state;
	roundtrip("{\"a\":{},\"b\":[],\"c\":[{\"x\":[1,2,{\"y\":null}]},[[]],3.5,-7,true],"
		  "\"d\":{\"e\":{\"f\":{\"g\":\"h\"}}},\"big\":9007199254740993}");
	roundtrip("[\"x\",1]");
	roundtrip("\"just a string\"");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(scalars_that_would_change),
		cmocka_unit_test(awkward_strings),
		cmocka_unit_test(shapes),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
