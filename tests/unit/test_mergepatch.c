#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/mergepatch.h"
#include "model/nodehw.h"
#include "json_fixture.h"

/*
 * The node patch on its own: ownership records, people's labels, resources
 * at 0, the refresh label (docs/guide/advertise.md, "What gpushare owns").
 */

static const char *pget(const json_t *p, const char *a, const char *b, const char *k)
{
	const json_t *v = json_object_get(json_object_get(json_object_get(p, a), b), k);
	return json_is_string(v) ? json_string_value(v) : json_is_null(v) ? "<null>" : NULL;
}

static json_t *patch(const json_t *node, const char *labels, const char *refresh,
		     const char *resources, struct gs_warnings *w)
{
	json_t *l = loads(labels), *r = resources ? loads(resources) : NULL, *p;
	struct mergepatch_want want = {.labels = l, .refresh_label = refresh, .resources = r};
	struct gs_error err;

	if (mergepatch_node(node, &want, &p, w, &err))
		fail_msg("mergepatch: %s", err.msg);
	json_decref(l);
	json_decref(r);
	return p;
}

/* Patch, apply, patch again: the second is {}. */
static void first_write_then_nothing(void **state)
{
	json_t *n =
		loads("{\"metadata\":{\"name\":\"n1\",\"labels\":{\"team\":\"a\"}},"
		      "\"status\":{\"capacity\":{\"cpu\":\"8\"},\"allocatable\":{\"cpu\":\"8\"}}}");
	struct gs_warnings w;
	json_t *p;

	(void)state;
	gs_warnings_init(&w);
	p = patch(n, "{\"nvidia.com/gpu.count\":\"2\"}", NULL, "{\"nvidia.com/gpu\":2}", &w);
	assert_string_equal(pget(p, "metadata", "labels", "nvidia.com/gpu.count"), "2");
	assert_null(pget(p, "metadata", "labels", "team"));
	assert_string_equal(pget(p, "status", "capacity", "nvidia.com/gpu"), "2");
	assert_string_equal(pget(p, "status", "allocatable", "nvidia.com/gpu"), "2");
	assert_null(pget(p, "status", "capacity", "cpu"));
	assert_string_equal(pget(p, "metadata", "annotations", NODEHW_ANN_MANAGED_LABELS),
			    "nvidia.com/gpu.count=2");
	assert_string_equal(pget(p, "metadata", "annotations", NODEHW_ANN_MANAGED_RESOURCES),
			    "nvidia.com/gpu");
	mergepatch_apply(n, p);
	json_decref(p);
	p = patch(n, "{\"nvidia.com/gpu.count\":\"2\"}", NULL, "{\"nvidia.com/gpu\":2}", &w);
	assert_int_equal(json_object_size(p), 0);
	assert_int_equal(w.n, 0);
	json_decref(p);
	json_decref(n);
	gs_warnings_release(&w);
}

/* A recorded label no longer wanted goes; one a person changed since stays. */
static void removal_respects_people(void **state)
{
	json_t *n = loads("{\"metadata\":{\"name\":\"n1\",\"labels\":{\"a\":\"1\",\"b\":\"mine\"},"
			  "\"annotations\":{\"gpushare.io/managed-labels\":\"a=1,b=2\"}}}");
	struct gs_warnings w;
	json_t *p;

	(void)state;
	gs_warnings_init(&w);
	p = patch(n, "{}", NULL, NULL, &w);
	assert_string_equal(pget(p, "metadata", "labels", "a"), "<null>");
	assert_null(pget(p, "metadata", "labels", "b"));
	assert_string_equal(pget(p, "metadata", "annotations", NODEHW_ANN_MANAGED_LABELS),
			    "<null>");
	assert_null(json_object_get(p, "status")); /* resources NULL: status untouched */
	json_decref(p);

	/* Overwriting a value nobody recorded is a warning, without the node's name. */
	p = patch(n, "{\"b\":\"2\"}", NULL, NULL, &w);
	assert_string_equal(pget(p, "metadata", "labels", "b"), "2");
	assert_int_equal(w.n, 1);
	assert_non_null(strstr(w.items[0], "label b=mine was not written by gpushare"));
	assert_null(strstr(w.items[0], "n1"));
	json_decref(p);
	json_decref(n);
	gs_warnings_release(&w);
}

/* A resource gone is held at 0 and leaves the record; unknown nvidia.com ones warn. */
static void resources_to_zero(void **state)
{
	json_t *n =
		loads("{\"metadata\":{\"name\":\"n1\",\"annotations\":{"
		      "\"gpushare.io/managed-resources\":\"nvidia.com/gpu\"}},"
		      "\"status\":{\"capacity\":{\"nvidia.com/gpu\":\"8\",\"nvidia.com/x\":\"1\"},"
		      "\"allocatable\":{\"nvidia.com/gpu\":\"8\",\"nvidia.com/x\":\"1\"}}}");
	struct gs_warnings w;
	json_t *p;

	(void)state;
	gs_warnings_init(&w);
	p = patch(n, "{}", NULL, "{\"nvidia.com/gpu\":0}", &w);
	assert_string_equal(pget(p, "status", "capacity", "nvidia.com/gpu"), "0");
	assert_string_equal(pget(p, "status", "allocatable", "nvidia.com/gpu"), "0");
	assert_string_equal(pget(p, "metadata", "annotations", NODEHW_ANN_MANAGED_RESOURCES),
			    "<null>");
	assert_int_equal(w.n, 1);
	assert_non_null(strstr(w.items[0], "status has nvidia.com/x"));
	json_decref(p);
	json_decref(n);
	gs_warnings_release(&w);
}

/* The refresh label moves only with another owned label. */
static void refresh_label(void **state)
{
	json_t *n = loads("{\"metadata\":{\"name\":\"n1\",\"labels\":{\"ts\":\"100\",\"a\":\"1\"},"
			  "\"annotations\":{\"gpushare.io/managed-labels\":\"a=1,ts=100\"}}}");
	struct gs_warnings w;
	json_t *p;

	(void)state;
	gs_warnings_init(&w);
	p = patch(n, "{\"ts\":\"200\",\"a\":\"1\"}", "ts", NULL, &w);
	assert_int_equal(json_object_size(p), 0); /* kept at 100 */
	json_decref(p);
	p = patch(n, "{\"ts\":\"200\",\"a\":\"2\"}", "ts", NULL, &w);
	assert_string_equal(pget(p, "metadata", "labels", "ts"), "200");
	assert_string_equal(pget(p, "metadata", "labels", "a"), "2");
	assert_string_equal(pget(p, "metadata", "annotations", NODEHW_ANN_MANAGED_LABELS),
			    "a=2,ts=200");
	json_decref(p);
	/* A label going away is a change too. */
	p = patch(n, "{\"ts\":\"200\"}", "ts", NULL, &w);
	assert_string_equal(pget(p, "metadata", "labels", "ts"), "200");
	assert_string_equal(pget(p, "metadata", "labels", "a"), "<null>");
	json_decref(p);
	/* A timestamp nobody recorded is rewritten. */
	json_object_set_new(json_object_get(json_object_get(n, "metadata"), "labels"), "ts",
			    json_string("5"));
	p = patch(n, "{\"ts\":\"200\",\"a\":\"1\"}", "ts", NULL, &w);
	assert_string_equal(pget(p, "metadata", "labels", "ts"), "200");
	json_decref(p);
	json_decref(n);
	gs_warnings_release(&w);
}

/* A partial update keeps what it does not name, and its record. */
static void keep_unlisted(void **state)
{
	json_t *n = loads("{\"metadata\":{\"name\":\"n1\",\"labels\":{\"a\":\"1\",\"b\":\"x\"},"
			  "\"annotations\":{\"gpushare.io/managed-labels\":\"a=1,b=2\"}}}");
	json_t *l = loads("{\"s\":\"failed\"}"), *p;
	struct mergepatch_want want = {
		.labels = l, .refresh_label = NULL, .resources = NULL, .keep_unlisted = true};
	struct gs_warnings w;
	struct gs_error err;

	(void)state;
	gs_warnings_init(&w);
	assert_int_equal(mergepatch_node(n, &want, &p, &w, &err), 0);
	assert_string_equal(pget(p, "metadata", "labels", "s"), "failed");
	assert_null(pget(p, "metadata", "labels", "a"));
	assert_null(pget(p, "metadata", "labels", "b"));
	/* b was changed by a person: no longer recorded. */
	assert_string_equal(pget(p, "metadata", "annotations", NODEHW_ANN_MANAGED_LABELS),
			    "a=1,s=failed");
	json_decref(p);
	json_decref(l);
	json_decref(n);
	gs_warnings_release(&w);
}

static void bad_want(void **state)
{
	json_t *n = loads("{\"metadata\":{\"name\":\"n1\"}}"), *l = loads("{\"a\":1}"), *p;
	struct mergepatch_want want = {.labels = l, .refresh_label = NULL, .resources = NULL};
	struct gs_warnings w;
	struct gs_error err;

	(void)state;
	gs_warnings_init(&w);
	assert_int_equal(mergepatch_node(n, &want, &p, &w, &err), -1);
	assert_null(p);
	json_decref(l);
	json_decref(n);
	gs_warnings_release(&w);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(first_write_then_nothing),
		cmocka_unit_test(removal_respects_people),
		cmocka_unit_test(resources_to_zero),
		cmocka_unit_test(refresh_label),
		cmocka_unit_test(keep_unlisted),
		cmocka_unit_test(bad_want),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
