#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <stdlib.h>
#include <string.h>

#include "engine/mergepatch.h"
#include "dra/draslice.h"
#include "fleet/sync.h"

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
 * resource it advertised before at 0 (docs/guide/advertise.md).
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

/* The "t4" node of the data, switched to the DRA path after a device-plugin sync. */
static json_t *dra_nodes(json_t *cm)
{
	json_t *nodes = load(DATA "/nodes.json"),
	       *t4 = json_array_get(json_object_get(nodes, "items"), 0);
	struct sync_opts o = {.only_node = "t4"};
	struct sync_report r;
	struct gs_error err;

	assert_int_equal(sync_plan(cm, nodes, &o, &r, &err), 0);
	mergepatch_apply(t4, r.nodes[0].patch);
	sync_report_release(&r);
	/* What a device plugin switched off earlier left behind. */
	mergepatch_set(t4, "status", "capacity", "nvidia.com/mig-1g.10gb", json_string("0"));
	mergepatch_set(t4, "metadata", "labels", "gpushare.io/path", json_string("dra"));
	json_object_set_new(json_object_get(t4, "metadata"), "uid", json_string("uid-t4"));
	return nodes;
}

static const json_t *devices_of(const json_t *slice)
{
	return json_object_get(json_object_get(slice, "spec"), "devices");
}

static void dra_node_loses_device_plugin(void **state)
{
	json_t *cm = load(DATA "/configmap.json"), *nodes = dra_nodes(cm);
	struct sync_opts o = {.only_node = "t4"};
	struct sync_report r;
	struct gs_error err;
	const struct sync_node *n;
	const json_t *labels;

	(void)state;
	assert_int_equal(sync_plan(cm, nodes, &o, &r, &err), 0);
	n = find(&r, "t4");
	assert_true(n->dra);
	assert_int_equal(n->outcome, SYNC_UPDATED);
	assert_int_equal(json_object_size(n->resources), 0);
	/* Every nvidia.com resource goes, the recorded one and the zero left over. */
	assert_true(json_is_null(
		json_object_get(json_object_get(json_object_get(n->patch, "status"), "capacity"),
				"nvidia.com/gpu")));
	assert_true(json_is_null(
		json_object_get(json_object_get(json_object_get(n->patch, "status"), "allocatable"),
				"nvidia.com/gpu")));
	assert_true(json_is_null(
		json_object_get(json_object_get(json_object_get(n->patch, "status"), "capacity"),
				"nvidia.com/mig-1g.10gb")));
	/* GFD's labels go with the records; a person's label stays. */
	labels = json_object_get(json_object_get(n->patch, "metadata"), "labels");
	assert_true(json_is_null(json_object_get(labels, "nvidia.com/gpu.product")));
	assert_true(json_is_null(json_object_get(labels, "nvidia.com/gpu.replicas")));
	assert_null(json_object_get(labels, "nvidia.com/device-plugin.config"));
	assert_true(json_is_null(json_object_get(
		json_object_get(json_object_get(n->patch, "metadata"), "annotations"),
		"gpushare.io/managed-resources")));
	/* The driver's slice: two full T4s, owned by the Node. */
	assert_int_equal(json_array_size(devices_of(n->slice)), 2);
	assert_string_equal(
		json_string_value(json_object_get(json_array_get(devices_of(n->slice), 1), "name")),
		"gpu-1");
	sync_report_release(&r);
	json_decref(cm);
	json_decref(nodes);
}

/* A stored copy of the wanted slice: named, at `gen`, devices cut to `ndev` when >= 0. */
static json_t *stored(const json_t *want, const char *name, int gen, int ndev)
{
	json_t *s = json_deep_copy(want), *spec = json_object_get(s, "spec");

	json_object_set_new(json_object_get(s, "metadata"), "name", json_string(name));
	json_object_set_new(json_object_get(spec, "pool"), "generation", json_integer(gen));
	if (ndev >= 0)
		while ((int)json_array_size(json_object_get(spec, "devices")) > ndev)
			json_array_remove(json_object_get(spec, "devices"), 0);
	return s;
}

static int count_ops(const struct sync_report *r, const char *kind, enum sync_op_action a)
{
	int k = 0;

	for (size_t i = 0; i < r->n_ops; i++)
		k += !strcmp(r->ops[i].kind, kind) && r->ops[i].action == a;
	return k;
}

static const struct sync_op *slice_op(const struct sync_report *r, enum sync_op_action a)
{
	for (size_t i = 0; i < r->n_ops; i++)
		if (r->ops[i].node && r->ops[i].action == a)
			return &r->ops[i];
	fail_msg("no slice operation %d", a);
	return NULL;
}

static void dra_slices_reconciled(void **state)
{
	json_t *cm = load(DATA "/configmap.json"), *nodes = dra_nodes(cm);
	json_t *want, *slices, *classes;
	struct sync_opts o = {0};
	struct sync_report r;
	struct gs_error err;
	const struct sync_op *op;

	(void)state;
	assert_int_equal(sync_plan(cm, nodes, &o, &r, &err), 1);
	want = json_incref(find(&r, "t4")->slice);

	/* Nothing published yet: both classes and the first slice, generation 1. */
	sync_plan_dra(&r, NULL, NULL);
	assert_int_equal(count_ops(&r, "DeviceClass", SYNC_OP_CREATE), 2);
	op = slice_op(&r, SYNC_OP_CREATE);
	assert_string_equal(op->node, "t4");
	assert_string_equal(op->path, "/apis/resource.k8s.io/v1/resourceslices");
	assert_int_equal(op->generation, 1);
	assert_int_equal(
		json_integer_value(json_object_get(
			json_object_get(json_object_get(op->body, "spec"), "pool"), "generation")),
		1);
	sync_report_release(&r);

	/* Published as wanted, classes without extendedResourceName (gate off): nothing. */
	classes = draslice_device_classes(0);
	slices = json_pack("{s:[o]}", "items", stored(want, "t4-gpu.nvidia.com-aaaaa", 1, -1));
	assert_int_equal(sync_plan(cm, nodes, &o, &r, &err), 1);
	sync_plan_dra(&r, slices, classes);
	assert_int_equal(r.n_ops, 0);
	sync_report_release(&r);
	json_decref(slices);

	/* One slice with other devices: updated in place, generation kept. */
	slices = json_pack("{s:[o]}", "items", stored(want, "t4-gpu.nvidia.com-aaaaa", 3, 1));
	assert_int_equal(sync_plan(cm, nodes, &o, &r, &err), 1);
	sync_plan_dra(&r, slices, classes);
	assert_int_equal(r.n_ops, 1);
	op = slice_op(&r, SYNC_OP_UPDATE);
	assert_string_equal(op->path,
			    "/apis/resource.k8s.io/v1/resourceslices/t4-gpu.nvidia.com-aaaaa");
	assert_int_equal(op->generation, 3);
	assert_int_equal(json_array_size(devices_of(op->body)), 2);
	assert_int_equal(find(&r, "t4")->outcome, SYNC_UPDATED);
	sync_report_release(&r);
	json_decref(slices);

	/* An older generation is obsolete; the current one matches and stays. */
	slices = json_pack("{s:[o,o]}", "items", stored(want, "old", 1, 1),
			   stored(want, "cur", 2, -1));
	assert_int_equal(sync_plan(cm, nodes, &o, &r, &err), 1);
	sync_plan_dra(&r, slices, classes);
	assert_int_equal(r.n_ops, 1);
	op = slice_op(&r, SYNC_OP_DELETE);
	assert_string_equal(op->name, "old");
	sync_report_release(&r);
	json_decref(slices);

	/* Two current slices, neither with the wanted devices: both go, a new generation. */
	slices = json_pack("{s:[o,o]}", "items", stored(want, "a", 2, 1), stored(want, "b", 2, 0));
	assert_int_equal(sync_plan(cm, nodes, &o, &r, &err), 1);
	sync_plan_dra(&r, slices, classes);
	assert_int_equal(count_ops(&r, "ResourceSlice", SYNC_OP_DELETE), 2);
	assert_int_equal(slice_op(&r, SYNC_OP_CREATE)->generation, 3);
	sync_report_release(&r);
	json_decref(slices);
	json_decref(classes);

	/* A class a person changed the selector of is put back; its config stays. */
	classes = draslice_device_classes(0);
	json_object_set_new(json_object_get(json_array_get(classes, 1), "spec"), "selectors",
			    json_array());
	json_object_set_new(json_object_get(json_array_get(classes, 1), "spec"), "config",
			    json_array());
	slices = json_pack("[o]", stored(want, "t4-gpu.nvidia.com-aaaaa", 1, -1));
	assert_int_equal(sync_plan(cm, nodes, &o, &r, &err), 1);
	sync_plan_dra(&r, slices, classes);
	assert_int_equal(r.n_ops, 1);
	assert_string_equal(r.ops[0].name, "mig.nvidia.com");
	assert_int_equal(r.ops[0].action, SYNC_OP_UPDATE);
	assert_int_equal(json_array_size(json_object_get(json_object_get(r.ops[0].body, "spec"),
							 "selectors")),
			 1);
	assert_non_null(json_object_get(json_object_get(r.ops[0].body, "spec"), "config"));
	sync_report_release(&r);
	json_decref(slices);
	json_decref(classes);
	json_decref(want);
	json_decref(cm);
	json_decref(nodes);
}

static void slices_of_other_nodes(void **state)
{
	json_t *cm = load(DATA "/configmap.json"), *nodes = load(DATA "/nodes.json");
	json_t *slices = json_pack(
		"[{s:{s:s},s:{s:s,s:s,s:{s:s,s:i}}},{s:{s:s},s:{s:s,s:s,s:{s:s,s:i}}},"
		"{s:{s:s},s:{s:s,s:s,s:{s:s,s:i}}}]",
		"metadata", "name", "t4-slice", "spec", "driver", "gpu.nvidia.com", "nodeName",
		"t4", "pool", "name", "t4", "generation", 1, "metadata", "name", "plain-slice",
		"spec", "driver", "gpu.nvidia.com", "nodeName", "plain", "pool", "name", "plain",
		"generation", 1, "metadata", "name", "other-driver", "spec", "driver",
		"example.com", "nodeName", "t4", "pool", "name", "t4", "generation", 1);
	struct sync_opts o = {0};
	struct sync_report r;
	struct gs_error err;

	(void)state;
	assert_int_equal(sync_plan(cm, nodes, &o, &r, &err), 1);
	sync_plan_dra(&r, slices, NULL);
	/*
	 * t4 is on the device-plugin path: its gpu.nvidia.com slice goes. A node
	 * that declares no GPU is not ours, nor is another driver's slice; with
	 * no DRA node no class is written.
	 */
	assert_int_equal(r.n_ops, 1);
	assert_string_equal(r.ops[0].name, "t4-slice");
	assert_int_equal(r.ops[0].action, SYNC_OP_DELETE);
	sync_report_release(&r);
	json_decref(slices);
	json_decref(cm);
	json_decref(nodes);
}

/* The name of a slice's (first) counter set. */
static const char *counter_set(const json_t *slice)
{
	return json_string_value(json_object_get(
		json_array_get(json_object_get(json_object_get(slice, "spec"), "sharedCounters"),
			       0),
		"name"));
}

/* The slice of `pool` (a stored array) whose counter set is `set`. */
static json_t *by_set(json_t *slices, const char *set)
{
	for (size_t i = 0; i < json_array_size(slices); i++) {
		json_t *s = json_array_get(slices, i);

		if (!strcmp(counter_set(s), set))
			return s;
	}
	fail_msg("no slice with counter set %s", set);
	return NULL;
}

/* A hand edit: the first device's memory capacity of one slice. */
static void edit_memory(json_t *slices, const char *set, const char *value)
{
	json_t *dev = json_array_get(devices_of(by_set(slices, set)), 0);

	json_object_set_new(json_object_get(json_object_get(dev, "capacity"), "memory"), "value",
			    json_string(value));
}

/*
 * DynamicMIG: a pool of one slice per GPU, refused without
 * DRAPartitionableDevices, and reconciled as syncPool does for several
 * slices (docs/guide/dra.md "Slices kept in step").
 */
static void dra_dynamic_pool(void **state)
{
	json_t *cm = load(DATA "/configmap.json");
	json_t *nodes = json_pack(
		"{s:[{s:{s:s, s:s, s:{s:s}, s:{s:s, s:s, s:s}}}]}", "items", "metadata", "name",
		"dyn", "uid", "uid-dyn", "labels", "gpushare.io/path", "dra", "annotations",
		"gpushare.io/gpu-product", "NVIDIA A100-SXM4-80GB", "gpushare.io/gpu-count", "2",
		"gpushare.io/dra-feature-gates", "DynamicMIG=true");
	struct sync_opts o = {0};
	struct sync_report r;
	struct gs_error err;
	json_t *want, *slices;
	const struct sync_op *op;

	(void)state;
	/* The apiserver drops the counters: refused, nothing to write. */
	assert_int_equal(sync_plan(cm, nodes, &o, &r, &err), 1);
	assert_int_equal(find(&r, "dyn")->outcome, SYNC_FAILED);
	assert_non_null(strstr(find(&r, "dyn")->message, "DRAPartitionableDevices"));
	assert_null(find(&r, "dyn")->pool);
	sync_plan_dra(&r, NULL, NULL);
	assert_int_equal(count_ops(&r, "ResourceSlice", SYNC_OP_CREATE), 0);
	sync_report_release(&r);

	o.dra_partitionable = true;
	assert_int_equal(sync_plan(cm, nodes, &o, &r, &err), 0);
	want = json_incref(find(&r, "dyn")->pool);
	assert_int_equal(json_array_size(want), 2);
	sync_plan_dra(&r, NULL, NULL);
	assert_int_equal(count_ops(&r, "ResourceSlice", SYNC_OP_CREATE), 2);
	assert_int_equal(slice_op(&r, SYNC_OP_CREATE)->generation, 1);
	sync_report_release(&r);

	/* Both published: nothing. */
	slices = json_pack("[o,o]", stored(json_array_get(want, 0), "s0", 1, -1),
			   stored(json_array_get(want, 1), "s1", 1, -1));
	assert_int_equal(sync_plan(cm, nodes, &o, &r, &err), 0);
	sync_plan_dra(&r, slices, NULL);
	assert_int_equal(count_ops(&r, "ResourceSlice", SYNC_OP_CREATE) +
				 count_ops(&r, "ResourceSlice", SYNC_OP_UPDATE) +
				 count_ops(&r, "ResourceSlice", SYNC_OP_DELETE),
			 0);
	sync_report_release(&r);

	/* One changed by hand (a capacity): one update, generation kept. */
	edit_memory(slices, "gpu-1-counter-set", "1Gi");
	assert_int_equal(sync_plan(cm, nodes, &o, &r, &err), 0);
	sync_plan_dra(&r, slices, NULL);
	assert_int_equal(count_ops(&r, "ResourceSlice", SYNC_OP_UPDATE), 1);
	op = slice_op(&r, SYNC_OP_UPDATE);
	assert_string_equal(op->name, "s1");
	assert_int_equal(op->generation, 1);
	sync_report_release(&r);

	/* Both changed: two updates, so the generation is bumped for both. */
	edit_memory(slices, "gpu-0-counter-set", "1Gi");
	assert_int_equal(sync_plan(cm, nodes, &o, &r, &err), 0);
	sync_plan_dra(&r, slices, NULL);
	assert_int_equal(count_ops(&r, "ResourceSlice", SYNC_OP_UPDATE), 2);
	assert_int_equal(slice_op(&r, SYNC_OP_UPDATE)->generation, 2);
	sync_report_release(&r);

	/* One deleted by hand: created again, the other rewritten, generation 2. */
	json_decref(slices);
	slices = json_pack("[o]", stored(json_array_get(want, 1), "s1", 1, -1));
	assert_int_equal(sync_plan(cm, nodes, &o, &r, &err), 0);
	sync_plan_dra(&r, slices, NULL);
	assert_int_equal(count_ops(&r, "ResourceSlice", SYNC_OP_CREATE), 1);
	assert_int_equal(count_ops(&r, "ResourceSlice", SYNC_OP_UPDATE), 1);
	assert_int_equal(count_ops(&r, "ResourceSlice", SYNC_OP_DELETE), 0);
	op = slice_op(&r, SYNC_OP_CREATE);
	assert_int_equal(op->generation, 2);
	assert_string_equal(counter_set(op->body), "gpu-0-counter-set");
	assert_string_equal(slice_op(&r, SYNC_OP_UPDATE)->name, "s1");
	assert_int_equal(slice_op(&r, SYNC_OP_UPDATE)->generation, 2);
	sync_report_release(&r);
	json_decref(slices);
	json_decref(want);
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
		cmocka_unit_test(dra_node_loses_device_plugin),
		cmocka_unit_test(dra_slices_reconciled),
		cmocka_unit_test(slices_of_other_nodes),
		cmocka_unit_test(dra_dynamic_pool),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
