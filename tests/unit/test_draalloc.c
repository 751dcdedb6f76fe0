#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dra/draalloc.h"
#include "model/kobj.h"
#include "json_fixture.h"

/*
 * The structured allocator's consumable capacity (k8s.io/dynamic-resource-allocation
 * v0.34.4 structured/internal/experimental/consumable_capacity.go): what a
 * request consumes, rounding, policy limits, and devices shared by claims.
 */

/* One node "n" with gpu-0 (shares 100, memory 16Gi with a 1Mi-step policy) and gpu-1 (plain). */
static const char *slices_json =
	"[{\"kind\":\"ResourceSlice\",\"spec\":{\"driver\":\"gpu.nvidia.com\",\"nodeName\":\"n\","
	"\"pool\":{\"name\":\"n\"},\"devices\":["
	"{\"name\":\"gpu-0\",\"allowMultipleAllocations\":true,"
	"\"attributes\":{\"type\":{\"string\":\"gpu\"}},\"capacity\":{"
	"\"memory\":{\"value\":\"16Gi\",\"requestPolicy\":{\"default\":\"0\",\"validRange\":{"
	"\"min\":\"0\",\"max\":\"16Gi\",\"step\":\"1Mi\"}}},"
	"\"shares\":{\"value\":\"100\",\"requestPolicy\":{\"default\":\"1\",\"validRange\":{"
	"\"min\":\"1\",\"max\":\"100\",\"step\":\"1\"}}}}},"
	"{\"name\":\"gpu-1\",\"attributes\":{\"type\":{\"string\":\"gpu\"}},"
	"\"capacity\":{\"memory\":{\"value\":\"16Gi\"}}}]}}]";

static json_t *claim(const char *name, const char *caps)
{
	char buf[1024];
	snprintf(buf, sizeof(buf),
		 "{\"kind\":\"ResourceClaim\",\"metadata\":{\"namespace\":\"ns\",\"name\":\"%s\"},"
		 "\"spec\":{\"devices\":{\"requests\":[{\"name\":\"gpu\",\"exactly\":{"
		 "\"deviceClassName\":\"gpu.nvidia.com\"%s%s%s}}]}}}",
		 name, caps ? ",\"capacity\":{\"requests\":" : "", caps ? caps : "",
		 caps ? "}" : "");
	return loads(buf);
}

/* Allocate claim `name`; the device it got ("" when none) and its result. */
static const char *alloc(struct draalloc *a, const char *name, const char *caps,
			 struct draalloc_result *r)
{
	struct gs_error err;
	json_t *c = claim(name, caps);

	if (draalloc_claim(a, c, r, &err))
		fail_msg("draalloc_claim: %s", err.msg);
	json_decref(c);
	if (r->outcome != DRAALLOC_ALLOCATED)
		return "";
	return kobj_text(json_array_get(kobj_get(r->allocation, "devices.results"), 0), "device");
}

/* 60 and 30 shares share gpu-0; 20 more do not fit there (10 left) and take gpu-1 whole. */
static void shares_consumed(void **state)
{
	json_t *sl = loads(slices_json);
	struct draalloc *a = draalloc_new(sl);
	struct draalloc_result r;

	(void)state;
	assert_string_equal(alloc(a, "a", "{\"shares\":\"60\"}", &r), "gpu-0");
	const json_t *res = json_array_get(kobj_get(r.allocation, "devices.results"), 0);
	assert_string_equal(kobj_text(res, "consumedCapacity.shares"), "60");
	assert_string_equal(kobj_text(res, "consumedCapacity.memory"), "0");
	assert_non_null(kobj_string(res, "shareID"));
	draalloc_result_release(&r);
	assert_string_equal(alloc(a, "b", "{\"shares\":\"30\"}", &r), "gpu-0");
	draalloc_result_release(&r);
	/* gpu-1 has no shares capacity: the request names one it lacks */
	assert_string_equal(alloc(a, "c", "{\"shares\":\"20\"}", &r), "");
	assert_int_equal(r.outcome, DRAALLOC_UNSCHEDULABLE);
	assert_non_null(strstr(r.why, "0/1 nodes are available: 1 cannot allocate all claims."));
	assert_non_null(strstr(r.why, "gpu-0: shares: 10 left of 100 (ns/a 60, ns/b 30), the "
				      "request consumes 20"));
	assert_non_null(strstr(r.why, "gpu-1: no capacity 'shares'"));
	draalloc_result_release(&r);
	/* 10 still fit */
	assert_string_equal(alloc(a, "d", "{\"shares\":\"10\"}", &r), "gpu-0");
	draalloc_result_release(&r);
	draalloc_free(a);
	json_decref(sl);
}

/* roundUpRange: a request off the step is rounded up; above max it is not allowed. */
static void rounding_and_policy(void **state)
{
	json_t *sl = loads(slices_json);
	struct draalloc *a = draalloc_new(sl);
	struct draalloc_result r;

	(void)state;
	assert_string_equal(alloc(a, "odd", "{\"memory\":\"1500Ki\"}", &r), "gpu-0");
	assert_string_equal(kobj_text(json_array_get(kobj_get(r.allocation, "devices.results"), 0),
				      "consumedCapacity.memory"),
			    "2Mi");
	draalloc_result_release(&r);
	/* 17Gi: above gpu-0's max, and above gpu-1's value */
	assert_string_equal(alloc(a, "big", "{\"memory\":\"17Gi\"}", &r), "");
	assert_non_null(strstr(r.why, "gpu-0: memory: the request 17Gi (consumes 17Gi) is above "
				      "the requestPolicy's max 16Gi"));
	assert_non_null(strstr(r.why, "gpu-1: memory: 16Gi left of 16Gi"));
	draalloc_result_release(&r);
	draalloc_free(a);
	json_decref(sl);
}

/* A device without allowMultipleAllocations goes to one claim; allocated claims count. */
static void exclusive_and_taken(void **state)
{
	json_t *sl = loads(slices_json);
	struct draalloc *a = draalloc_new(sl);
	struct draalloc_result r;
	json_t *held = loads(
		"{\"kind\":\"ResourceClaim\",\"metadata\":{\"namespace\":\"ns\",\"name\":\"held\"},"
		"\"status\":{\"allocation\":{\"devices\":{\"results\":[{\"request\":\"gpu\","
		"\"driver\":\"gpu.nvidia.com\",\"pool\":\"n\",\"device\":\"gpu-0\",\"shareID\":"
		"\"x\",\"consumedCapacity\":{\"shares\":\"95\",\"memory\":\"0\"}},"
		"{\"request\":\"gpu\",\"driver\":\"gpu.nvidia.com\",\"pool\":\"n\",\"device\":"
		"\"gpu-1\"}]}}}}");

	(void)state;
	draalloc_take(a, held);
	assert_string_equal(alloc(a, "six", "{\"shares\":\"6\"}", &r), "");
	assert_non_null(strstr(r.why, "gpu-0: shares: 5 left of 100 (ns/held 95)"));
	assert_non_null(strstr(r.why, "gpu-1: allocated to ns/held"));
	draalloc_result_release(&r);
	/* no request: the shares default (1) and the memory default (0) */
	assert_string_equal(alloc(a, "plain", NULL, &r), "gpu-0");
	assert_string_equal(kobj_text(json_array_get(kobj_get(r.allocation, "devices.results"), 0),
				      "consumedCapacity.shares"),
			    "1");
	draalloc_result_release(&r);
	draalloc_free(a);
	json_decref(held);
	json_decref(sl);
}

/* A slice of one plain GPU "gpu-0" on node `node`, its pool named after the node. */
static json_t *node_slice(const char *node)
{
	char buf[512];
	snprintf(buf, sizeof(buf),
		 "{\"kind\":\"ResourceSlice\",\"spec\":{\"driver\":\"gpu.nvidia.com\","
		 "\"nodeName\":\"%s\",\"pool\":{\"name\":\"%s\"},\"devices\":[{\"name\":"
		 "\"gpu-0\",\"attributes\":{\"type\":{\"string\":\"gpu\"}}}]}}",
		 node, node);
	return loads(buf);
}

/* An allocated claim holding gpu-0 of pool `pool` whole. */
static json_t *held_on(const char *pool)
{
	char buf[512];
	snprintf(buf, sizeof(buf),
		 "{\"kind\":\"ResourceClaim\",\"metadata\":{\"namespace\":\"ns\",\"name\":"
		 "\"held-%s\"},\"status\":{\"allocation\":{\"devices\":{\"results\":[{"
		 "\"request\":\"gpu\",\"driver\":\"gpu.nvidia.com\",\"pool\":\"%s\","
		 "\"device\":\"gpu-0\"}]}}}}",
		 pool, pool);
	return loads(buf);
}

/*
 * Every node with slices is a candidate, however many: 1,500 nodes of one
 * GPU each, all held but the last slice's; a claim goes there.
 */
static void many_nodes(void **state)
{
	enum { N = 1500 };
	json_t *sl = json_array();
	char name[32];

	(void)state;
	for (int i = 0; i < N; i++) {
		snprintf(name, sizeof(name), "n-%04d", i);
		json_array_append_new(sl, node_slice(name));
	}
	struct draalloc *a = draalloc_new(sl);
	for (int i = 0; i < N - 1; i++) {
		snprintf(name, sizeof(name), "n-%04d", i);
		json_t *h = held_on(name);
		draalloc_take(a, h);
		json_decref(h);
	}
	struct draalloc_result r;
	assert_string_equal(alloc(a, "last", NULL, &r), "gpu-0");
	assert_string_equal(r.node, "n-1499");
	draalloc_result_release(&r);
	/* now every GPU is held: "0/N nodes" counts them all */
	assert_string_equal(alloc(a, "none", NULL, &r), "");
	assert_non_null(strstr(r.why, "0/1500 nodes are available: 1500 cannot allocate all "
				      "claims."));
	draalloc_result_release(&r);
	draalloc_free(a);
	json_decref(sl);
}

/* A claim for `count` plain GPUs, allocated on node `only` (NULL: any); its outcome. */
static enum draalloc_outcome claim_on(struct draalloc *a, int count, const char *only, bool commit,
				      struct draalloc_result *r)
{
	char buf[512];
	struct gs_error err;

	snprintf(buf, sizeof(buf),
		 "{\"kind\":\"ResourceClaim\",\"metadata\":{\"namespace\":\"ns\",\"name\":"
		 "\"c%d\"},\"spec\":{\"devices\":{\"requests\":[{\"name\":\"gpu\",\"exactly\":{"
		 "\"deviceClassName\":\"gpu.nvidia.com\",\"count\":%d}}]}}}",
		 count, count);
	json_t *c = loads(buf);
	if (draalloc_claim_on(a, c, only, commit, r, &err))
		fail_msg("draalloc_claim_on: %s", err.msg);
	json_decref(c);
	return r->outcome;
}

/*
 * A node's devices are its slices' only, in slice order, wherever its
 * slices are among the others; an allocated claim holds the device of its
 * pool, not another pool's device of the same name.
 */
static void node_devices_only(void **state)
{
	/* b: gpu-0 (first slice) and gpu-1 (third); a: gpu-0; c: a MIG device */
	json_t *sl = loads(
		"[{\"kind\":\"ResourceSlice\",\"spec\":{\"driver\":\"gpu.nvidia.com\","
		"\"nodeName\":\"b\",\"pool\":{\"name\":\"b\"},\"devices\":[{\"name\":\"gpu-0\","
		"\"attributes\":{\"type\":{\"string\":\"gpu\"}}}]}},"
		"{\"kind\":\"ResourceSlice\",\"spec\":{\"driver\":\"gpu.nvidia.com\","
		"\"nodeName\":\"a\",\"pool\":{\"name\":\"a\"},\"devices\":[{\"name\":\"gpu-0\","
		"\"attributes\":{\"type\":{\"string\":\"gpu\"}}}]}},"
		"{\"kind\":\"ResourceSlice\",\"spec\":{\"driver\":\"gpu.nvidia.com\","
		"\"nodeName\":\"b\",\"pool\":{\"name\":\"b\"},\"devices\":[{\"name\":\"gpu-1\","
		"\"attributes\":{\"type\":{\"string\":\"gpu\"}}}]}},"
		"{\"kind\":\"ResourceSlice\",\"spec\":{\"driver\":\"gpu.nvidia.com\","
		"\"nodeName\":\"c\",\"pool\":{\"name\":\"c\"},\"devices\":[{\"name\":\"mig-0\","
		"\"attributes\":{\"type\":{\"string\":\"mig\"}}}]}}]");
	struct draalloc *a = draalloc_new(sl);
	struct draalloc_result r;

	(void)state;
	/* a has one GPU: two are not found there (b's are b's) */
	assert_int_equal(claim_on(a, 2, "a", false, &r), DRAALLOC_UNSCHEDULABLE);
	/* the reasons are about a's devices only */
	assert_string_equal(r.why,
			    "0/1 nodes are available: 1 cannot allocate all claims.\n"
			    "request gpu (type gpu)\n"
			    "  a gpu-0: would take it alone (the claim's requests together do "
			    "not fit)");
	draalloc_result_release(&r);
	/* c has no GPU, d no slice */
	assert_int_equal(claim_on(a, 1, "c", false, &r), DRAALLOC_UNSCHEDULABLE);
	assert_string_equal(r.why, "0/1 nodes are available: 1 cannot allocate all claims.\n"
				   "request gpu (type gpu)");
	draalloc_result_release(&r);
	assert_int_equal(claim_on(a, 1, "d", false, &r), DRAALLOC_UNSCHEDULABLE);
	assert_string_equal(r.why, "0/1 nodes are available: 1 cannot allocate all claims.\n"
				   "request gpu (type gpu)");
	draalloc_result_release(&r);
	/* b's two, in slice order; a probe takes nothing */
	assert_int_equal(claim_on(a, 2, "b", false, &r), DRAALLOC_ALLOCATED);
	assert_string_equal(r.node, "b");
	assert_null(r.allocation);
	draalloc_result_release(&r);
	assert_int_equal(claim_on(a, 2, "b", true, &r), DRAALLOC_ALLOCATED);
	const json_t *res = kobj_get(r.allocation, "devices.results");
	assert_string_equal(kobj_text(json_array_get(res, 0), "pool"), "b");
	assert_string_equal(kobj_text(json_array_get(res, 0), "device"), "gpu-0");
	assert_string_equal(kobj_text(json_array_get(res, 1), "pool"), "b");
	assert_string_equal(kobj_text(json_array_get(res, 1), "device"), "gpu-1");
	draalloc_result_release(&r);
	/* b is full; any node: a, the first by name with a GPU left */
	assert_int_equal(claim_on(a, 1, "b", false, &r), DRAALLOC_UNSCHEDULABLE);
	draalloc_result_release(&r);
	assert_int_equal(claim_on(a, 1, NULL, false, &r), DRAALLOC_ALLOCATED);
	assert_string_equal(r.node, "a");
	draalloc_result_release(&r);
	/* a claim held a's gpu-0 (pool a): a is full, b's gpu-0 was not freed */
	json_t *h = held_on("a");
	draalloc_take(a, h);
	json_decref(h);
	assert_int_equal(claim_on(a, 1, NULL, true, &r), DRAALLOC_UNSCHEDULABLE);
	assert_non_null(strstr(r.why, "0/3 nodes are available: 3 cannot allocate all claims."));
	assert_non_null(strstr(r.why, "a gpu-0: allocated to ns/held-a"));
	assert_non_null(strstr(r.why, "b gpu-0: allocated to ns/c2"));
	draalloc_result_release(&r);
	draalloc_free(a);
	json_decref(sl);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(shares_consumed),     cmocka_unit_test(rounding_and_policy),
		cmocka_unit_test(exclusive_and_taken), cmocka_unit_test(many_nodes),
		cmocka_unit_test(node_devices_only),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
