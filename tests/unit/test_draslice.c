#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/catalog.h"
#include "dra/draslice.h"
#include "model/kobj.h"
#include "model/nodehw.h"

static const struct catalog *cat(void)
{
	const struct catalog *c;
	struct gs_error err;

	if (catalog_builtin(&c, &err))
		fail_msg("embedded catalog: %s", err.msg);
	return c;
}

/* dra-driver-nvidia-gpu v25.12.0 cmd/gpu-kubelet-plugin/deviceinfo.go: dots dropped, lowercase,
 * anything else outside [a-z0-9-] becomes '-'. */
static void profile_names(void **state)
{
	char out[64];

	(void)state;
	draslice_profile_name("1g.10gb", out, sizeof(out));
	assert_string_equal(out, "1g10gb");
	draslice_profile_name("1g.10gb+me", out, sizeof(out));
	assert_string_equal(out, "1g10gb-me");
	draslice_profile_name("1g.24gb+me.all", out, sizeof(out));
	assert_string_equal(out, "1g24gb-meall");
	draslice_profile_name("1g.24gb-me", out, sizeof(out));
	assert_string_equal(out, "1g24gb-me");
	draslice_profile_name("4G.96GB+GFX", out, sizeof(out));
	assert_string_equal(out, "4g96gb-gfx");
	draslice_profile_name("1g.10gb", out, 4);
	assert_string_equal(out, "1g1");
}

/* dra-driver-nvidia-gpu v25.12.0 cmd/gpu-kubelet-plugin/deviceinfo.go: GI profile ids as nvidia-smi
 * mig -lgip lists them. */
static void gi_profile_ids(void **state)
{
	static const struct {
		const char *gpu, *profile;
		int id, size;
	} cases[] = {
		{"NVIDIA A100-SXM4-80GB", "1g.10gb", 19, 1},
		{"NVIDIA A100-SXM4-80GB", "1g.10gb+me", 20, 1},
		{"NVIDIA A100-SXM4-80GB", "2g.20gb", 14, 2},
		{"NVIDIA A100-SXM4-80GB", "3g.40gb", 9, 4},
		{"NVIDIA A100-SXM4-80GB", "4g.40gb", 5, 4},
		{"NVIDIA A100-SXM4-80GB", "7g.80gb", 0, 8},
		{"NVIDIA H100 80GB HBM3", "1g.10gb", 19, 1},
		{"NVIDIA H200", "7g.141gb", 0, 8},
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const struct catalog_gpu *g = catalog_find_gpu(cat(), cases[i].gpu);
		const struct catalog_mig_profile *p;

		assert_non_null(g);
		p = catalog_gpu_profile(g, cases[i].profile);
		assert_non_null(p);
		assert_int_equal(p->gi_profile_id, cases[i].id);
		assert_int_equal(p->placement_size, cases[i].size);
	}
}

static json_t *slice_for(const char *yaml, struct gs_warnings *w, int *rc, struct gs_error *err)
{
	struct ydoc_stream *s;
	struct nodehw *hw;
	json_t *slice = NULL;

	if (ydoc_load_buffer("node.yaml", yaml, strlen(yaml), (struct ydoc_pos){1, 1},
			     &ydoc_default_limits, &s, err))
		fail_msg("load: %s", err->msg);
	if (nodehw_from_node(cat(), ydoc_stream_doc(s, 0), s, &hw, w, err))
		fail_msg("nodehw: %s", err->msg);
	*rc = draslice_build(cat(), hw, ydoc_stream_doc(s, 0), s, &slice, w, err);
	nodehw_free(hw);
	ydoc_stream_free(s);
	return slice;
}

/* Static MIG: only the layout's instances, never the parent; names sorted. */
static void balanced_layout(void **state)
{
	const char *yaml =
		"kind: Node\n"
		"metadata:\n"
		"  name: node-a\n"
		"  uid: u-1\n"
		"  labels: {gpushare.io/path: dra, nvidia.com/mig.config: all-balanced}\n"
		"  annotations:\n"
		"    gpushare.io/gpu-product: NVIDIA A100-SXM4-80GB\n"
		"    gpushare.io/gpu-count: \"1\"\n";
	static const char *const want[] = {"gpu-0-mig-1g10gb-19-2", "gpu-0-mig-1g10gb-19-3",
					   "gpu-0-mig-2g20gb-14-0", "gpu-0-mig-3g40gb-9-4"};
	struct gs_warnings w;
	struct gs_error err;
	json_t *slice, *devs;
	int rc;

	(void)state;
	gs_warnings_init(&w);
	slice = slice_for(yaml, &w, &rc, &err);
	assert_int_equal(rc, 0);
	assert_int_equal(w.n, 0);
	devs = (json_t *)kobj_get(slice, "spec.devices");
	assert_int_equal(json_array_size(devs), 4);
	for (size_t i = 0; i < 4; i++)
		assert_string_equal(kobj_text(json_array_get(devs, i), "name"), want[i]);
	/* The 3g instance at 4 covers memory slices 4..7. */
	assert_non_null(kobj_get(json_array_get(devs, 3), "capacity.memorySlice7"));
	assert_null(kobj_get(json_array_get(devs, 3), "capacity.memorySlice3"));
	assert_string_equal(kobj_text(slice, "spec.pool.name"), "node-a");
	assert_int_equal(json_integer_value(kobj_get(slice, "spec.pool.generation")), 1);
	json_decref(slice);
	gs_warnings_release(&w);
}

/* A layout the GPU cannot take is the layout's failure, positioned at the label. */
static void layout_failure(void **state)
{
	const char *yaml = "kind: Node\n"
			   "metadata:\n"
			   "  name: node-a\n"
			   "  labels:\n"
			   "    nvidia.com/mig.config: all-1g.5gb\n"
			   "  annotations:\n"
			   "    gpushare.io/gpu-product: NVIDIA A100-SXM4-80GB\n"
			   "    gpushare.io/gpu-count: \"1\"\n";
	struct gs_warnings w;
	struct gs_error err;
	json_t *slice;
	int rc;

	(void)state;
	gs_warnings_init(&w);
	slice = slice_for(yaml, &w, &rc, &err);
	assert_int_equal(rc, DRASLICE_LAYOUT_FAILED);
	assert_null(slice);
	assert_int_equal(err.line, 5);
	assert_int_equal(err.col, 28);
	gs_warnings_release(&w);
}

/* The classes leave out extendedResourceName unless its alpha gate is on. */
static void device_classes(void **state)
{
	json_t *a = draslice_device_classes(0), *b = draslice_device_classes(1);

	(void)state;
	assert_int_equal(json_array_size(a), 2);
	assert_string_equal(kobj_name(json_array_get(a, 0)), "gpu.nvidia.com");
	assert_string_equal(kobj_name(json_array_get(a, 1)), "mig.nvidia.com");
	assert_null(kobj_get(json_array_get(a, 0), "spec.extendedResourceName"));
	assert_string_equal(kobj_text(json_array_get(b, 0), "spec.extendedResourceName"),
			    "nvidia.com/gpu");
	assert_null(kobj_get(json_array_get(b, 1), "spec.extendedResourceName"));
	json_decref(a);
	json_decref(b);
}

static json_t *pool_for(const char *yaml, const struct draslice_opts *o, struct gs_warnings *w,
			int *rc, struct gs_error *err)
{
	struct ydoc_stream *s;
	struct nodehw *hw;
	json_t *pool = NULL;

	if (ydoc_load_buffer("node.yaml", yaml, strlen(yaml), (struct ydoc_pos){1, 1},
			     &ydoc_default_limits, &s, err))
		fail_msg("load: %s", err->msg);
	if (nodehw_from_node(cat(), ydoc_stream_doc(s, 0), s, &hw, w, err))
		fail_msg("nodehw: %s", err->msg);
	*rc = draslice_build_pool(cat(), hw, ydoc_stream_doc(s, 0), s, o, &pool, w, err);
	nodehw_free(hw);
	ydoc_stream_free(s);
	return pool;
}

static const char *const two_a100 = "kind: Node\n"
				    "metadata:\n"
				    "  name: node-d\n"
				    "  uid: u-2\n"
				    "  labels: {gpushare.io/path: dra}\n"
				    "  annotations:\n"
				    "    gpushare.io/gpu-product: NVIDIA A100-SXM4-80GB\n"
				    "    gpushare.io/gpu-count: \"2\"\n";

static const json_t *device_named(const json_t *slice, const char *name)
{
	const json_t *devs = kobj_get(slice, "spec.devices");

	for (size_t i = 0; i < json_array_size(devs); i++)
		if (!strcmp(kobj_text(json_array_get(devs, i), "name"), name))
			return json_array_get(devs, i);
	return NULL;
}

static const char *value_of(const json_t *m, const char *key)
{
	return json_string_value(json_object_get(json_object_get(m, key), "value"));
}

/*
 * DynamicMIG (driver v25.12.0 partitions.go, driver.go
 * generateCombinedResourceSlices): one slice per GPU with its counter set,
 * the full GPU consuming every counter, one abstract device per placement
 * of every C==G profile (+me included), no uuid on those.
 */
static void dynamic_mig(void **state)
{
	struct draslice_opts o = {.dynamic_mig = true, .partitionable = true};
	struct gs_warnings w;
	struct gs_error err;
	const json_t *s1, *d, *cc, *set;
	json_t *pool;
	int rc;

	(void)state;
	gs_warnings_init(&w);
	pool = pool_for(two_a100, &o, &w, &rc, &err);
	assert_int_equal(rc, 0);
	assert_int_equal(json_array_size(pool), 2);
	assert_int_equal(draslice_pool_devices(pool), 52);
	s1 = json_array_get(pool, 1);
	assert_int_equal(json_integer_value(kobj_get(s1, "spec.pool.resourceSliceCount")), 2);
	/* 7 x 1g.10gb, 7 x 1g.10gb+me, 4 x 1g.20gb, 3 x 2g, 2 x 3g, 4g, 7g and the GPU. */
	assert_int_equal(json_array_size(kobj_get(s1, "spec.devices")), 26);
	set = json_array_get(kobj_get(s1, "spec.sharedCounters"), 0);
	assert_string_equal(kobj_text(set, "name"), "gpu-1-counter-set");
	cc = kobj_map(set, "counters");
	assert_int_equal(json_object_size(cc), 15); /* 7 capacities + 8 memory slices */
	assert_string_equal(value_of(cc, "multiprocessors"), "98");
	assert_string_equal(value_of(cc, "memory"), "81152Mi");
	assert_string_equal(value_of(cc, "memory-slice-7"), "1");
	assert_string_equal(value_of(cc, "copy-engines"), "7");
	/* The full GPU consumes it all. */
	d = device_named(s1, "gpu-1");
	assert_non_null(d);
	assert_true(json_equal(
		(json_t *)kobj_map(json_array_get(kobj_get(d, "consumesCounters"), 0), "counters"),
		(json_t *)cc));
	assert_string_equal(value_of(kobj_map(d, "capacity"), "jpegEngines"), "1");
	assert_non_null(kobj_get(d, "attributes.uuid"));
	/* A 3g.40gb at placement 4: memory slices 4..7, no uuid, no memorySlice capacity. */
	d = device_named(s1, "gpu-1-mig-3g40gb-9-4");
	assert_non_null(d);
	assert_null(kobj_get(d, "attributes.uuid"));
	assert_string_equal(kobj_text(d, "attributes.profile.string"), "3g.40gb");
	assert_null(kobj_get(d, "capacity.memorySlice4"));
	assert_string_equal(value_of(kobj_map(d, "capacity"), "memory"), "40192Mi");
	cc = kobj_map(json_array_get(kobj_get(d, "consumesCounters"), 0), "counters");
	assert_string_equal(
		kobj_text(json_array_get(kobj_get(d, "consumesCounters"), 0), "counterSet"),
		"gpu-1-counter-set");
	assert_int_equal(json_object_size(cc), 11);
	assert_non_null(json_object_get(cc, "memory-slice-4"));
	assert_non_null(json_object_get(cc, "memory-slice-7"));
	assert_null(json_object_get(cc, "memory-slice-3"));
	assert_string_equal(value_of(cc, "multiprocessors"), "42");
	assert_non_null(device_named(s1, "gpu-1-mig-1g10gb-me-20-6"));
	json_decref(pool);
	gs_warnings_release(&w);
}

/* DynamicMIG without DRAPartitionableDevices, or on a GPU without MIG: refused, said why. */
static void dynamic_mig_refused(void **state)
{
	struct draslice_opts o = {.dynamic_mig = true, .partitionable = false};
	const char *t4 = "kind: Node\n"
			 "metadata:\n"
			 "  name: node-t\n"
			 "  labels: {gpushare.io/path: dra}\n"
			 "  annotations:\n"
			 "    gpushare.io/gpu-product: Tesla T4\n"
			 "    gpushare.io/gpu-count: \"1\"\n";
	struct gs_warnings w;
	struct gs_error err;
	json_t *pool;
	int rc;

	(void)state;
	gs_warnings_init(&w);
	pool = pool_for(two_a100, &o, &w, &rc, &err);
	assert_int_equal(rc, DRASLICE_NEEDS_PARTITIONABLE);
	assert_null(pool);
	assert_non_null(strstr(err.msg, "drops sharedCounters and consumesCounters silently"));
	o.partitionable = true;
	o.driver = dradriver_get(DRADRIVER_V25_12_0);
	pool = pool_for(t4, &o, &w, &rc, &err);
	assert_int_equal(rc, -1);
	assert_null(pool);
	assert_non_null(strstr(err.msg, "GPU 0 (Tesla T4) is not MIG-capable"));
	/* v0.5.0 (partitions.go): published plain, its memory, no counter set */
	o.driver = dradriver_get(DRADRIVER_V0_5_0);
	pool = pool_for(t4, &o, &w, &rc, &err);
	assert_int_equal(rc, 0);
	assert_int_equal(json_array_size(pool), 1);
	assert_null(kobj_get(json_array_get(pool, 0), "spec.sharedCounters"));
	{
		const json_t *dev =
			json_array_get(kobj_get(json_array_get(pool, 0), "spec.devices"), 0);
		assert_string_equal(kobj_text(dev, "name"), "gpu-0");
		assert_string_equal(kobj_text(dev, "capacity.memory.value"), "15Gi");
		assert_null(json_object_get(dev, "consumesCounters"));
	}
	json_decref(pool);
	/* Without DynamicMIG the pool is the one static slice. */
	o.dynamic_mig = false;
	pool = pool_for(t4, &o, &w, &rc, &err);
	assert_int_equal(rc, 0);
	assert_int_equal(json_array_size(pool), 1);
	assert_null(kobj_get(json_array_get(pool, 0), "spec.sharedCounters"));
	json_decref(pool);
	gs_warnings_release(&w);
}

/*
 * On a 1.35+ apiserver ("only one of `sharedCounters` or `devices` is
 * allowed"): the driver writes the counter sets apart, first, then a slice
 * of devices per GPU (driver.go shouldUseSplitResourceSlices,
 * generateSplitResourceSlices; v25.12.0 and v0.5.0 alike).
 */
static void dynamic_mig_counters_apart(void **state)
{
	struct draslice_opts o = {
		.dynamic_mig = true, .partitionable = true, .counters_apart = true};
	struct gs_warnings w;
	struct gs_error err;
	json_t *pool;
	int rc;

	(void)state;
	gs_warnings_init(&w);
	o.driver = dradriver_get(DRADRIVER_V0_5_0);
	pool = pool_for(two_a100, &o, &w, &rc, &err);
	assert_int_equal(rc, 0);
	assert_int_equal(json_array_size(pool), 3);
	assert_int_equal(draslice_pool_devices(pool), 52);
	for (size_t i = 0; i < 3; i++) {
		const json_t *sl = json_array_get(pool, i);
		assert_int_equal(json_integer_value(kobj_get(sl, "spec.pool.resourceSliceCount")),
				 3);
		/* never both */
		assert_true(!kobj_get(sl, "spec.sharedCounters") != !kobj_get(sl, "spec.devices"));
	}
	const json_t *sets = kobj_get(json_array_get(pool, 0), "spec.sharedCounters");
	assert_int_equal(json_array_size(sets), 2);
	assert_string_equal(kobj_text(json_array_get(sets, 1), "name"), "gpu-1-counter-set");
	assert_non_null(device_named(json_array_get(pool, 2), "gpu-1-mig-3g40gb-9-4"));
	json_decref(pool);
	gs_warnings_release(&w);

	/* v25.12.0 reads the server's version too: the same split. */
	gs_warnings_init(&w);
	o.driver = dradriver_get(DRADRIVER_V25_12_0);
	pool = pool_for(two_a100, &o, &w, &rc, &err);
	assert_int_equal(rc, 0);
	assert_int_equal(json_array_size(pool), 3);
	assert_null(kobj_get(json_array_get(pool, 0), "spec.devices"));
	json_decref(pool);
	gs_warnings_release(&w);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(profile_names),
		cmocka_unit_test(gi_profile_ids),
		cmocka_unit_test(balanced_layout),
		cmocka_unit_test(layout_failure),
		cmocka_unit_test(device_classes),
		cmocka_unit_test(dynamic_mig),
		cmocka_unit_test(dynamic_mig_counters_apart),
		cmocka_unit_test(dynamic_mig_refused),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
