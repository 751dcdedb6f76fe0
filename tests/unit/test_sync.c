#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <stdlib.h>
#include <string.h>

#include "mergepatch.h"
#include "sync.h"

/*
 * sync's plan is pure: recorded objects in, per-node outcome and patch out,
 * no server. tests/unit/data/sync/ holds a ConfigMap and a NodeList: a
 * time-sliced T4 node, a node that declares no GPUs, a node whose config
 * label names a missing key.
 */

#define DATA "tests/unit/data/sync"

static json_t *load(const char *path)
{
	json_error_t je;
	json_t *j = json_load_file(path, 0, &je);

	assert_non_null(j);
	return j;
}

static const struct sync_node *find(const struct sync_report *r, const char *name)
{
	for (size_t i = 0; i < r->n; i++)
		if (!strcmp(r->nodes[i].name, name))
			return &r->nodes[i];
	fail_msg("no node %s in the report", name);
	return NULL;
}

static const char *at(const json_t *j, const char *a, const char *b, const char *c)
{
	return json_string_value(json_object_get(json_object_get(json_object_get(j, a), b), c));
}

static void plan_per_node(void **state)
{
	json_t *cm = load(DATA "/configmap.json"), *nodes = load(DATA "/nodes.json");
	struct sync_opts o = {0};
	struct sync_report r;
	struct gs_error err;
	const struct sync_node *n;
	char *res;

	(void)state;
	assert_int_equal(sync_plan(cm, nodes, &o, &r, &err), 1); /* one node failed */
	assert_int_equal(r.n, 3);

	n = find(&r, "t4");
	assert_int_equal(n->outcome, SYNC_UPDATED);
	assert_string_equal(n->config, "shared");
	assert_string_equal(at(n->patch, "status", "capacity", "nvidia.com/gpu"), "8");
	assert_string_equal(at(n->patch, "status", "allocatable", "nvidia.com/gpu"), "8");
	assert_string_equal(at(n->patch, "metadata", "labels", "nvidia.com/gpu.product"),
			    "Tesla-T4-SHARED");
	assert_null(json_object_get(json_object_get(n->patch, "status"), "cpu"));
	res = sync_resources_text(n);
	assert_string_equal(res, "nvidia.com/gpu=8");
	free(res);

	n = find(&r, "plain");
	assert_int_equal(n->outcome, SYNC_SKIPPED);
	assert_null(n->patch);

	n = find(&r, "typo");
	assert_int_equal(n->outcome, SYNC_FAILED);
	assert_non_null(strstr(n->message, "sharde"));
	assert_null(n->patch);

	sync_report_release(&r);
	json_decref(cm);
	json_decref(nodes);
}

/* A node with its patch applied plans to nothing: sync writes only what changed. */
static void applied_patch_is_unchanged(void **state)
{
	json_t *cm = load(DATA "/configmap.json"), *nodes = load(DATA "/nodes.json");
	struct sync_opts o = {.only_node = "t4"};
	struct sync_report r;
	struct gs_error err;
	json_t *t4;

	(void)state;
	assert_int_equal(sync_plan(cm, nodes, &o, &r, &err), 0);
	assert_int_equal(r.n, 1); /* only_node */
	assert_int_equal(r.nodes[0].outcome, SYNC_UPDATED);
	t4 = json_array_get(json_object_get(nodes, "items"), 0);
	mergepatch_apply(t4, r.nodes[0].patch);
	sync_report_release(&r);

	assert_int_equal(sync_plan(cm, json_object_get(nodes, "items"), &o, &r, &err), 0);
	assert_int_equal(r.nodes[0].outcome, SYNC_UNCHANGED);
	assert_null(r.nodes[0].patch);
	assert_string_equal(
		json_string_value(json_object_get(r.nodes[0].resources, "nvidia.com/gpu")), "8");
	sync_report_release(&r);
	json_decref(cm);
	json_decref(nodes);
}

/*
 * Only the plugin fails (deviceIDStrategy: serial): the node is reported as
 * failed, yet carries what the rest publishes: GFD's labels, and the
 * resource it advertised before at 0 (docs/advertise.md).
 */
static void plugin_down_still_patches(void **state)
{
	json_error_t je;
	json_t *cm = json_loads(
		"{\"kind\":\"ConfigMap\",\"metadata\":{\"name\":\"device-plugin-configs\","
		"\"namespace\":\"gpu-share\"},\"data\":{\"bad\":\"version: v1\\nflags:\\n  "
		"plugin:\\n    deviceIDStrategy: serial\\n\"}}",
		0, &je);
	json_t *nodes = json_loads(
		"{\"items\":[{\"kind\":\"Node\",\"metadata\":{\"name\":\"n1\",\"labels\":{"
		"\"nvidia.com/device-plugin.config\":\"bad\"},\"annotations\":{"
		"\"gpushare.io/gpu-product\":\"Tesla T4\",\"gpushare.io/gpu-count\":\"2\","
		"\"gpushare.io/managed-resources\":\"nvidia.com/gpu\"}},\"status\":{\"capacity\":{"
		"\"nvidia.com/gpu\":\"2\"},\"allocatable\":{\"nvidia.com/gpu\":\"2\"}}}]}",
		0, &je);
	struct sync_opts o = {0};
	struct sync_report r;
	struct gs_error err;

	(void)state;
	assert_non_null(cm);
	assert_non_null(nodes);
	assert_int_equal(sync_plan(cm, nodes, &o, &r, &err), 1);
	assert_int_equal(r.nodes[0].outcome, SYNC_FAILED);
	assert_non_null(strstr(r.nodes[0].message, "invalid --device-id-strategy option: serial"));
	assert_non_null(strstr(r.nodes[0].message, "GFD's labels written"));
	assert_non_null(r.nodes[0].patch);
	assert_string_equal(at(r.nodes[0].patch, "status", "capacity", "nvidia.com/gpu"), "0");
	assert_string_equal(at(r.nodes[0].patch, "status", "allocatable", "nvidia.com/gpu"), "0");
	assert_string_equal(at(r.nodes[0].patch, "metadata", "labels", "nvidia.com/gpu.product"),
			    "Tesla-T4");
	sync_report_release(&r);
	json_decref(cm);
	json_decref(nodes);
}

static void unusable_inputs(void **state)
{
	json_t *cm = load(DATA "/configmap.json"), *nodes = load(DATA "/nodes.json");
	json_t *bad_cm = json_pack("{s:s,s:{s:s},s:[s]}", "kind", "ConfigMap", "metadata", "name",
				   "x", "data", "not a map");
	struct sync_opts o = {.configmap_namespace = "ns", .configmap_name = "cm"};
	struct sync_report r;
	struct gs_error err;

	(void)state;
	assert_int_equal(sync_plan(bad_cm, nodes, &o, &r, &err), -1);
	assert_non_null(strstr(err.msg, "ConfigMap ns/cm: "));
	sync_report_release(&r);
	assert_int_equal(sync_plan(cm, cm, &o, &r, &err), -1);
	assert_string_equal(err.msg, "the node list has no items");
	sync_report_release(&r);
	json_decref(bad_cm);
	json_decref(cm);
	json_decref(nodes);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(plan_per_node),
		cmocka_unit_test(applied_patch_is_unchanged),
		cmocka_unit_test(plugin_down_still_patches),
		cmocka_unit_test(unusable_inputs),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
