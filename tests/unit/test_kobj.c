#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <stdlib.h>
#include <string.h>

#include "model/kobj.h"

static const char *stream_text = "apiVersion: v1\n"
				 "kind: Node\n"
				 "metadata:\n"
				 "  name: node-a\n"
				 "  labels:\n"
				 "    nvidia.com/gpu.product: A100\n"
				 "    count: 3\n"
				 "  annotations:\n"
				 "    gpushare.io/gpu-count: \"2\"\n"
				 "status:\n"
				 "  allocatable:\n"
				 "    nvidia.com/gpu: \"8\"\n"
				 "---\n"
				 "kind: ConfigMap\n"
				 "metadata: {name: a, namespace: gpu-share}\n"
				 "---\n"
				 "- not an object\n"
				 "---\n"
				 "kind: ConfigMap\n"
				 "metadata: {name: b}\n"
				 "---\n"
				 "kind: 7\n";

static struct ydoc_stream *load(void)
{
	struct ydoc_stream *s;
	struct gs_error err;
	const struct ydoc_pos origin = {.line = 0, .col = 0};

	if (ydoc_load_buffer("t.yaml", stream_text, strlen(stream_text), origin,
			     &ydoc_default_limits, &s, &err))
		fail_msg("load: %s", err.msg);
	return s;
}

static void fields(void **state)
{
	struct ydoc_stream *s = load();
	const json_t *node = ydoc_stream_doc(s, 0), *cm = ydoc_stream_doc(s, 1);

	(void)state;
	assert_string_equal(kobj_kind(node), "Node");
	assert_string_equal(kobj_name(node), "node-a");
	assert_null(kobj_namespace(node));
	assert_string_equal(kobj_namespace(cm), "gpu-share");
	assert_string_equal(kobj_label(node, "nvidia.com/gpu.product"), "A100");
	assert_null(kobj_label(node, "count")); /* not a string */
	assert_null(kobj_label(node, "absent"));
	assert_string_equal(kobj_annotation(node, "gpushare.io/gpu-count"), "2");
	assert_null(kobj_annotation(cm, "x")); /* no annotations at all */
	assert_non_null(kobj_labels(node));
	assert_null(kobj_labels(cm));
	/* paths */
	assert_ptr_equal(kobj_get(node, ""), node);
	assert_non_null(kobj_map(node, "status.allocatable"));
	assert_string_equal(json_string_value(json_object_get(kobj_map(node, "status.allocatable"),
							      "nvidia.com/gpu")),
			    "8");
	assert_null(kobj_get(node, "status.capacity"));
	assert_null(kobj_map(node, "metadata.name")); /* a string, not a map */
	assert_null(kobj_string(node, "metadata"));   /* a map, not a string */
	assert_null(kobj_get(node, "metadata.name.x"));
	assert_string_equal(kobj_text(node, "spec.nodeName"), "");
	assert_string_equal(kobj_text(node, "metadata.name"), "node-a");
	/* not objects */
	assert_null(kobj_name(NULL));
	assert_null(kobj_kind(ydoc_stream_doc(s, 2)));
	assert_null(kobj_kind(ydoc_stream_doc(s, 4))); /* kind: 7 */
	assert_true(kobj_is(cm, "ConfigMap"));
	assert_false(kobj_is(cm, "Node"));
	assert_false(kobj_is(NULL, "Node"));
	ydoc_stream_free(s);
}

static void find_in_stream(void **state)
{
	struct ydoc_stream *s = load();

	(void)state;
	assert_int_equal(kobj_find(s, 0, "ConfigMap", NULL), 1);
	assert_int_equal(kobj_find(s, 2, "ConfigMap", NULL), 3);
	assert_int_equal(kobj_find(s, 4, "ConfigMap", NULL), -1);
	assert_int_equal(kobj_find(s, 0, "ConfigMap", "b"), 3);
	assert_int_equal(kobj_find(s, 0, "ConfigMap", "c"), -1);
	assert_int_equal(kobj_find(s, 0, "Node", "node-a"), 0);
	assert_int_equal(kobj_find(s, 99, "Node", NULL), -1);
	assert_int_equal(kobj_find(NULL, 0, "Node", NULL), -1);
	assert_int_equal(kobj_count(s, "ConfigMap"), 2);
	assert_int_equal(kobj_count(s, "Pod"), 0);
	ydoc_stream_free(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(fields),
		cmocka_unit_test(find_in_stream),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
