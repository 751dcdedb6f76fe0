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

/* A pod of namespace a asking for one GPU, in `phase`, deleted at `deleted` (NULL: not). */
static json_t *gpu_pod(const char *name, const char *phase, const char *deleted, int grace)
{
	json_t *p = json_pack("{s:s,s:s,s:{s:s,s:s},s:{s:[{s:s,s:{s:{s:s}}}]},s:{s:s}}",
			      "apiVersion", "v1", "kind", "Pod", "metadata", "name", name,
			      "namespace", "a", "spec", "containers", "name", "main", "resources",
			      "limits", "nvidia.com/gpu", "1", "status", "phase", phase);
	json_t *meta = json_object_get(p, "metadata");

	if (deleted)
		json_object_set_new(meta, "deletionTimestamp", json_string(deleted));
	if (grace >= 0)
		json_object_set_new(meta, "deletionGracePeriodSeconds", json_integer(grace));
	return p;
}

/*
 * A quota's used counts the pods the quota controller charges: a pod stuck
 * terminating past its grace period is not (k8s.io/kubernetes v1.37.2
 * pkg/quota/v1/evaluator/core/pods.go QuotaV1Pod), one still within it is.
 */
static void test_quota_stuck_terminating(void **state)
{
	(void)state;
	json_t *quotas =
		json_pack("[{s:s,s:s,s:{s:s,s:s},s:{s:{s:s,s:s}}}]", "apiVersion", "v1", "kind",
			  "ResourceQuota", "metadata", "name", "q", "namespace", "a", "spec",
			  "hard", "pods", "10", "requests.nvidia.com/gpu", "10");
	json_t *pods =
		json_pack("{s:[o,o,o,o,o]}", "items", gpu_pod("running", "Running", NULL, -1),
			  gpu_pod("done", "Succeeded", NULL, -1),
			  /* deleted, its containers still stopping: charged */
			  gpu_pod("stopping", "Running", "2100-01-01T00:00:00Z", 30),
			  /* deleted long ago, its node lost: not charged */
			  gpu_pod("stuck", "Running", "2000-01-01T00:00:00Z", 30),
			  /* no grace period recorded: charged, as upstream needs both */
			  gpu_pod("no-grace", "Running", "2000-01-01T00:00:00Z", -1));
	json_t *list;
	struct gs_error err;

	assert_int_equal(explain_quota_list_from(quotas, "a", pods, &list, &err), 0);
	const json_t *used =
		kobj_get(json_array_get(json_object_get(list, "items"), 0), "status.used");
	assert_string_equal(json_string_value(json_object_get(used, "pods")), "3");
	assert_string_equal(json_string_value(json_object_get(used, "requests.nvidia.com/gpu")),
			    "3");
	json_decref(list);
	json_decref(pods);
	json_decref(quotas);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_pool_shares_values),
		cmocka_unit_test(test_in_place),
		cmocka_unit_test(test_quota_stuck_terminating),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
