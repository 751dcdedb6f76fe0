#include <setjmp.h>
#include <stdarg.h>
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

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_pool_shares_values),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
