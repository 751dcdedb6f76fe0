#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <cmocka.h>
#include <stdlib.h>
#include <string.h>

#include "engine/explain_offline.h"
#include "model/kobj.h"

/*
 * How explain_fleet_advertise holds a fleet: the nodes of a pool are given
 * the same label values and annotations, held once for the whole fleet.
 */

/* A node with NAME and 4 Tesla T4, as the lab's kwok nodes are declared. */
static json_t *t4_node(const char *name)
{
	return json_pack("{s:s,s:s,s:{s:s,s:{s:s},s:{s:s,s:s}},s:{s:{s:s,s:s}}}", "apiVersion",
			 "v1", "kind", "Node", "metadata", "name", name, "labels",
			 "kubernetes.io/hostname", name, "annotations", "gpushare.io/gpu-product",
			 "Tesla T4", "gpushare.io/gpu-count", "4", "status", "allocatable", "cpu",
			 "8", "memory", "32Gi");
}

static const json_t *item(const struct explain_fleet *f, size_t i)
{
	return json_array_get(json_object_get(f->nodes, "items"), i);
}

static void test_pool_shares_values(void **state)
{
	(void)state;
	json_t *nodes = json_pack("[o,o]", t4_node("a"), t4_node("b"));
	struct explain_fleet f;
	struct gs_error err;

	assert_int_equal(explain_fleet_advertise(nodes, NULL, NULL, &f, &err), 0);
	const json_t *a = item(&f, 0), *b = item(&f, 1);
	const json_t *la = kobj_get(a, "metadata.labels"), *lb = kobj_get(b, "metadata.labels");
	/* advertised: GFD's labels and gpushare's annotations */
	assert_string_equal(json_string_value(json_object_get(la, "nvidia.com/gpu.product")),
			    "Tesla-T4");
	assert_string_equal(json_string_value(json_object_get(lb, "nvidia.com/gpu.product")),
			    "Tesla-T4");
	/* one string for the pool, not one per node */
	const char *shared[] = {"nvidia.com/gpu.product", "nvidia.com/gpu.family",
				"nvidia.com/cuda.driver.major"};
	for (size_t i = 0; i < sizeof(shared) / sizeof(*shared); i++) {
		assert_non_null(json_object_get(la, shared[i]));
		assert_ptr_equal(json_object_get(la, shared[i]), json_object_get(lb, shared[i]));
	}
	const json_t *ma = kobj_get(a, "metadata.annotations"),
		     *mb = kobj_get(b, "metadata.annotations");
	assert_ptr_equal(json_object_get(ma, "gpushare.io/managed-resources"),
			 json_object_get(mb, "gpushare.io/managed-resources"));
	/* what differs stays each node's */
	assert_string_equal(json_string_value(json_object_get(la, "kubernetes.io/hostname")), "a");
	assert_string_equal(json_string_value(json_object_get(lb, "kubernetes.io/hostname")), "b");
	/* the caller's nodes are not changed */
	assert_null(json_object_get(kobj_get(json_array_get(nodes, 0), "metadata.labels"),
				    "nvidia.com/gpu.product"));
	explain_fleet_release(&f);
	json_decref(nodes);
}

static bool kept(const struct explain_fleet *f, const json_t *v)
{
	const json_t *x;
	size_t i;

	json_array_foreach (f->kept, i, x)
		if (x == v)
			return true;
	return false;
}

/*
 * In place: the caller's node is the advertised one (no second copy of the
 * fleet); a value the patch replaces stays alive with the fleet, so that
 * no object read from a file is freed while positions may be asked of it.
 */
static void test_in_place(void **state)
{
	(void)state;
	json_t *nodes = json_pack("[o,o]", t4_node("a"), t4_node("b"));
	json_t *a = json_array_get(nodes, 0);
	json_t *labels = (json_t *)kobj_get(a, "metadata.labels");
	json_object_set_new(labels, "nvidia.com/gpu.product", json_string("stale"));
	const json_t *stale = json_object_get(labels, "nvidia.com/gpu.product");
	const json_t *meta = json_object_get(a, "metadata");
	struct explain_fleet f;
	struct gs_error err;

	assert_int_equal(explain_fleet_advertise_in_place(nodes, NULL, &f, &err), 0);
	assert_ptr_equal(item(&f, 0), a);
	assert_ptr_equal(json_object_get(a, "metadata"), meta);
	assert_ptr_equal(kobj_get(a, "metadata.labels"), labels);
	assert_string_equal(json_string_value(json_object_get(labels, "nvidia.com/gpu.product")),
			    "Tesla-T4");
	assert_true(kept(&f, stale));
	assert_string_equal(json_string_value(stale), "stale");
	/* the other node reads its own labels, the pool's strings shared */
	const json_t *lb = kobj_get(item(&f, 1), "metadata.labels");
	assert_ptr_equal(json_object_get(labels, "nvidia.com/gpu.family"),
			 json_object_get(lb, "nvidia.com/gpu.family"));
	explain_fleet_release(&f);
	json_decref(nodes);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_pool_shares_values),
		cmocka_unit_test(test_in_place),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
