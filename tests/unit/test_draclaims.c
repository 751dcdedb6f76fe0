#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dra/draclaims.h"
#include "engine/explain.h"
#include "model/kobj.h"
#include "engine/status.h"
#include "base/strbuf.h"

/*
 * draclaims on a recording of the local control plane after `gpushare lab
 * --dra` (tests/golden/status-dra/why says what was added): the expected
 * facts are read from the recording's own ResourceClaims and Events, so
 * each test judges the parsing against what the apiserver said.
 */

#define RECORDING "tests/golden/status-dra/list.json"

static json_t *list;

static int setup(void **state)
{
	json_error_t je;

	(void)state;
	list = json_load_file(RECORDING, 0, &je);
	if (!list)
		fail_msg("%s: %s", RECORDING, je.text);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	json_decref(list);
	return 0;
}

static json_t *items(const char *kind)
{
	json_t *out = json_array(), *it;
	size_t i;

	json_array_foreach (json_object_get(list, "items"), i, it)
		if (kobj_is(it, kind))
			json_array_append(out, it);
	return out;
}

static const json_t *object(const char *kind, const char *ns, const char *name)
{
	json_t *it;
	size_t i;

	json_array_foreach (json_object_get(list, "items"), i, it)
		if (kobj_is(it, kind) && !strcmp(kobj_text(it, "metadata.name"), name) &&
		    (!ns || !strcmp(kobj_text(it, "metadata.namespace"), ns)))
			return it;
	fail_msg("no %s %s in the recording", kind, name);
	return NULL;
}

struct objs {
	json_t *slices, *claims, *templates, *pods, *events, *nodes;
	struct draclaims_objects o;
};

static void objs_load(struct objs *x)
{
	x->slices = items("ResourceSlice");
	x->claims = items("ResourceClaim");
	x->templates = items("ResourceClaimTemplate");
	x->pods = items("Pod");
	x->events = items("Event");
	x->nodes = items("Node");
	x->o = (struct draclaims_objects){x->slices, x->claims, x->templates, x->pods, x->events};
}

static void objs_release(struct objs *x)
{
	json_decref(x->slices);
	json_decref(x->claims);
	json_decref(x->templates);
	json_decref(x->pods);
	json_decref(x->events);
	json_decref(x->nodes);
}

static const json_t *claim_of(const json_t *st, const char *key)
{
	json_t *c;
	size_t i;

	json_array_foreach (json_object_get(st, "claims"), i, c)
		if (!strcmp(kobj_text(c, "claim"), key))
			return c;
	return NULL;
}

/* Every allocated result on a node shows as that device's claim, with the claim's reservedFor. */
static void test_devices_follow_allocation(void **state)
{
	struct objs x;
	const json_t *c, *r;
	size_t i, k;

	(void)state;
	objs_load(&x);
	json_array_foreach (x.claims, i, c) {
		json_array_foreach (kobj_get(c, "status.allocation.devices.results"), k, r) {
			const json_t *node = object("Node", NULL, kobj_text(r, "pool"));
			json_t *st = draclaims_node_status(node, &x.o), *d;
			char *key = gs_xasprintf("%s/%s", kobj_text(c, "metadata.namespace"),
						 kobj_text(c, "metadata.name"));
			const json_t *cj = claim_of(st, key), *rv;
			size_t m;
			bool found = false;

			assert_non_null(cj);
			json_array_foreach (json_object_get(st, "devices"), m, d)
				if (!strcmp(kobj_text(d, "name"), kobj_text(r, "device"))) {
					assert_string_equal(kobj_text(d, "claim"), key);
					assert_string_equal(kobj_text(d, "request"),
							    kobj_text(r, "request"));
					found = true;
				}
			assert_true(found);
			assert_int_equal(json_array_size(json_object_get(cj, "pods")),
					 json_array_size(kobj_get(c, "status.reservedFor")));
			json_array_foreach (kobj_get(c, "status.reservedFor"), m, rv) {
				char *p = gs_xasprintf("%s/%s", kobj_text(c, "metadata.namespace"),
						       kobj_text(rv, "name"));
				assert_string_equal(json_string_value(json_array_get(
							    json_object_get(cj, "pods"), m)),
						    p);
				free(p);
			}
			assert_int_equal(json_is_true(json_object_get(cj, "shared")),
					 json_array_size(kobj_get(c, "status.reservedFor")) > 1);
			free(key);
			json_decref(st);
		}
	}
	objs_release(&x);
}

/* Devices = the slice's; free = those no claim holds; held + free = total. */
static void test_free_and_total(void **state)
{
	struct objs x;
	const json_t *node = object("Node", NULL, "dra-node-2");
	json_t *st;

	(void)state;
	objs_load(&x);
	st = draclaims_node_status(node, &x.o);
	assert_int_equal(json_integer_value(json_object_get(st, "total")), 7);
	assert_int_equal(json_integer_value(json_object_get(st, "held")), 1);
	assert_int_equal(json_array_size(json_object_get(st, "free")), 6);
	assert_string_equal(kobj_text(st, "path"), "dra");
	assert_true(json_is_null(json_object_get(st, "failure")));
	/* Static MIG: only the layout's instances, never the parent. */
	{
		json_t *d;
		size_t i;
		json_array_foreach (json_object_get(st, "devices"), i, d) {
			assert_string_equal(kobj_text(d, "type"), "mig");
			assert_string_equal(kobj_text(d, "profile"), "1g.10gb");
			assert_int_equal(json_integer_value(json_object_get(d, "gpu")), 0);
		}
	}
	json_decref(st);
	objs_release(&x);
}

/* replicas-t4: refused at prepare (strict decoding), the event's text verbatim; others prepared. */
static void test_prepare_verdicts(void **state)
{
	struct objs x;
	json_t *st0, *st1;
	const json_t *c, *ev = NULL, *e;
	size_t i;

	(void)state;
	objs_load(&x);
	json_array_foreach (x.events, i, e)
		if (!strcmp(kobj_text(e, "involvedObject.name"), "replicas-pod") &&
		    !strcmp(kobj_text(e, "reason"), DRACLAIMS_EVENT_PREPARE))
			ev = e;
	assert_non_null(ev);
	st0 = draclaims_node_status(object("Node", NULL, "dra-node-0"), &x.o);
	c = claim_of(st0, "dra-demo/replicas-t4");
	assert_non_null(c);
	assert_string_equal(kobj_text(c, "prepare"), "failed");
	assert_string_equal(kobj_text(c, "message"), kobj_text(ev, "message"));
	assert_non_null(strstr(kobj_text(c, "message"), "unknown field \"sharing.replicas\""));
	assert_string_equal(kobj_text(claim_of(st0, "dra-team-a/team-a-0"), "prepare"), "prepared");

	/* shared-t4 runs now (TimeSlicingSettings), after the default gates refused it. */
	st1 = draclaims_node_status(object("Node", NULL, "dra-node-1"), &x.o);
	c = claim_of(st1, "dra-demo/shared-t4");
	assert_string_equal(kobj_text(c, "prepare"), "prepared");
	assert_true(json_is_true(json_object_get(c, "shared")));
	assert_non_null(strstr(kobj_text(c, "lastRefusal"),
			       "error validating GPU config: unknown GPU sharing strategy: "
			       "TimeSlicing"));
	assert_true(json_integer_value(json_object_get(c, "refusals")) >= 2);
	e = json_array_get(json_object_get(st1, "sharing"), 0);
	assert_string_equal(kobj_text(e, "claim"), "dra-demo/shared-t4");
	assert_string_equal(kobj_text(e, "method"), "time-slicing");
	assert_string_equal(kobj_text(e, "fault"), "no");
	json_decref(st0);
	json_decref(st1);
	objs_release(&x);
}

/* A node without a slice says so; a device-plugin node is not DRA. */
static void test_no_slice(void **state)
{
	struct objs x;
	json_t *st;
	char *line;

	(void)state;
	objs_load(&x);
	x.o.slices = NULL;
	st = draclaims_node_status(object("Node", NULL, "dra-node-1"), &x.o);
	assert_non_null(kobj_string(st, "failure"));
	assert_int_equal(json_array_size(json_object_get(st, "devices")), 0);
	assert_true(json_is_null(json_object_get(st, "generation")));
	json_decref(st);
	x.o.slices = x.slices;
	line = draclaims_node_line(object("Node", NULL, "dra-node-1"), &x.o);
	assert_string_equal(line, "DRA node (gpushare.io/path=dra): publishes 2 devices (2 x Tesla "
				  "T4), 0 free; held: gpu-0 by dra-demo/shared-t4, gpu-1 by "
				  "dra-team-a/team-a-1");
	free(line);
	objs_release(&x);
}

/* status_build: DRA nodes get their entries, the table a row per device. */
static void test_status_table(void **state)
{
	struct objs x;
	const struct catalog *cat;
	struct gs_warnings w;
	struct gs_error err;
	json_t *st;
	char *t;

	(void)state;
	objs_load(&x);
	gs_warnings_init(&w);
	assert_int_equal(catalog_builtin(&cat, &err), 0);
	assert_int_equal(status_build(cat, NULL, x.nodes, x.pods, &x.o, NULL, &st, &w, &err), 0);
	assert_int_equal(json_array_size(json_object_get(st, "nodes")), 3);
	t = status_table(st);
	assert_non_null(strstr(t, "dra-node-1  gpu-0"));
	assert_non_null(strstr(t, "dra-demo/ts-pod-1,dra-demo/ts-pod-2"));
	assert_non_null(strstr(t, "dra-node-0: claim dra-demo/replicas-t4 (gpu-0) failed prepare: "
				  "Failed to prepare dynamic resources:"));
	free(t);
	json_decref(st);
	/* Without the DRA objects, DRA nodes are left out as before. */
	assert_int_equal(status_build(cat, NULL, x.nodes, x.pods, NULL, NULL, &st, &w, &err), 0);
	assert_int_equal(json_array_size(json_object_get(st, "nodes")), 0);
	json_decref(st);
	gs_warnings_release(&w);
	objs_release(&x);
}

static char *explain(struct objs *x, const char *ns, const char *name, bool *trouble)
{
	return draclaims_explain_pod(object("Pod", ns, name), &x->o, trouble);
}

/* The kubelet's refusal, verbatim from the recorded event, with how often it was posted. */
static void test_explain_prepare_refused(void **state)
{
	struct objs x;
	const json_t *e, *last = NULL;
	long long n = 0;
	bool trouble = false;
	size_t i;
	char *t, *want;

	(void)state;
	objs_load(&x);
	json_array_foreach (x.events, i, e)
		if (!strcmp(kobj_text(e, "involvedObject.name"), "replicas-pod") &&
		    !strcmp(kobj_text(e, "reason"), DRACLAIMS_EVENT_PREPARE)) {
			n += json_integer_value(json_object_get(e, "count"));
			if (!last || strcmp(kobj_text(e, "lastTimestamp"),
					    kobj_text(last, "lastTimestamp")) >= 0)
				last = e;
		}
	assert_non_null(last);
	t = explain(&x, "dra-demo", "replicas-pod", &trouble);
	assert_true(trouble);
	want = gs_xasprintf("    prepare: refused on dra-node-0, the pod stays ContainerCreating: "
			    "Warning FailedPrepareDynamicResources (%lld time%s): %s\n",
			    n, n == 1 ? "" : "s", kobj_text(last, "message"));
	assert_non_null(strstr(t, want));
	assert_non_null(strstr(t, "    config for gpu (driver gpu.nvidia.com): "
				  "{\"apiVersion\":\"resource.nvidia.com/v1beta1\",\"kind\":"
				  "\"GpuConfig\",\"sharing\":{\"replicas\":4,\"strategy\":"
				  "\"TimeSlicing\"}}\n"));
	free(want);
	free(t);
	objs_release(&x);
}

/* Allocation and reservedFor as the claim says; a shared claim is called shared. */
static void test_explain_allocated_shared(void **state)
{
	struct objs x;
	const json_t *c = object("ResourceClaim", "dra-demo", "shared-t4"), *r;
	struct strbuf want = STRBUF_INIT;
	bool trouble = true;
	size_t i;
	char *t;

	(void)state;
	objs_load(&x);
	t = explain(&x, "dra-demo", "ts-pod-2", &trouble);
	assert_false(trouble);
	r = json_array_get(kobj_get(c, "status.allocation.devices.results"), 0);
	strbuf_addf(&want,
		    "    allocated on %s:\n      %s (request %s, driver %s, pool %s): Tesla T4, "
		    "15Gi\n    reserved for: ",
		    kobj_text(r, "pool"), kobj_text(r, "device"), kobj_text(r, "request"),
		    kobj_text(r, "driver"), kobj_text(r, "pool"));
	json_array_foreach (kobj_get(c, "status.reservedFor"), i, r)
		strbuf_addf(&want, "%sdra-demo/%s", i ? ", " : "", kobj_text(r, "name"));
	assert_non_null(strstr(t, want.buf));
	assert_non_null(strstr(t, "    shared: 2 pods use this claim's device (the driver's "
				  "TimeSlicing): one memory and one fault domain"));
	assert_non_null(strstr(t,
			       "    request gpu: 1 device of class gpu.nvidia.com where "
			       "device.attributes['gpu.nvidia.com'].productName == 'Tesla T4'\n"));
	assert_non_null(strstr(t, "    prepare: prepared on dra-node-1; refused 1 time before, the "
				  "last: Failed to prepare dynamic resources:"));
	strbuf_release(&want);
	free(t);
	t = explain(&x, "dra-demo", "mig-job", &trouble);
	assert_false(trouble);
	assert_non_null(strstr(t, ", made from template mig-1g10gb\n    request mig: 1 device of "
				  "class mig.nvidia.com where device.attributes['gpu.nvidia.com']"
				  ".profile == '1g.10gb'\n    allocated on dra-node-2:\n      "
				  "gpu-0-mig-1g10gb-19-"));
	assert_non_null(strstr(t, "NVIDIA A100-SXM4-80GB MIG 1g.10gb, 9728Mi\n"));
	free(t);
	objs_release(&x);
}

/* No claim: held back before scheduling; a template's refusal is resourceclaim-controller's. */
static void test_explain_missing(void **state)
{
	struct objs x;
	const json_t *e;
	bool trouble = false;
	size_t i;
	char *t;

	(void)state;
	objs_load(&x);
	t = explain(&x, "dra-team-a", "over-pod", &trouble);
	assert_true(trouble);
	assert_non_null(strstr(t, "  gpu: ResourceClaim dra-team-a/team-over\n    not found: no "
				  "ResourceClaim team-over in namespace dra-team-a"));
	assert_non_null(strstr(t, "no PodScheduled condition, no event\n"));
	/* The recording agrees: the pod has no condition and no event. */
	assert_null(kobj_get(object("Pod", "dra-team-a", "over-pod"), "status.conditions"));
	json_array_foreach (x.events, i, e)
		assert_string_not_equal(kobj_text(e, "involvedObject.name"), "over-pod");
	free(t);

	t = explain(&x, "dra-team-a", "tmpl-pod", &trouble);
	assert_true(trouble);
	assert_non_null(strstr(t,
			       "  gpu: from template one-gpu: no ResourceClaim made yet\n"
			       "    request gpu (the template's): 1 device of class "
			       "gpu.nvidia.com\n    resourceclaim-controller could not create it: "
			       "Warning FailedResourceClaimCreation ("));
	assert_non_null(strstr(t, "is forbidden: exceeded quota: gpu-quota, requested: "
				  "gpu.nvidia.com.deviceclass.resource.k8s.io/devices=1, used: "
				  "gpu.nvidia.com.deviceclass.resource.k8s.io/devices=2, limited: "
				  "gpu.nvidia.com.deviceclass.resource.k8s.io/devices=2\n"));
	free(t);

	t = explain(&x, "dra-demo", "three-pod", &trouble);
	assert_true(trouble);
	assert_non_null(strstr(t, "    request gpu: 3 devices of class gpu.nvidia.com where "));
	assert_non_null(strstr(t, "    not allocated: "));
	free(t);

	/* A pod without claims has nothing to say. */
	t = explain(&x, "dra-demo", "dp-pod", &trouble);
	assert_string_equal(t, "");
	assert_false(trouble);
	free(t);
	objs_release(&x);
}

/* What a claim counts against quotas (resource_claims.go Usage). */
static void test_quota_usage(void **state)
{
	json_t *u = NULL, *c;

	(void)state;
	draclaims_quota_usage(&u, object("ResourceClaim", "dra-demo", "three-t4"));
	assert_string_equal(json_string_value(json_object_get(u, DRACLAIMS_QUOTA_COUNT)), "1");
	assert_string_equal(
		json_string_value(json_object_get(u, "gpu.nvidia.com" DRACLAIMS_QUOTA_SUFFIX)),
		"3");
	assert_int_equal(json_object_size(u), 2);
	json_decref(u);
	u = NULL;
	c = json_loads("{\"spec\":{\"devices\":{\"requests\":["
		       "{\"name\":\"a\",\"exactly\":{\"deviceClassName\":\"gpu.nvidia.com\","
		       "\"allocationMode\":\"All\"}},"
		       "{\"name\":\"b\",\"firstAvailable\":["
		       "{\"name\":\"m\",\"deviceClassName\":\"mig.nvidia.com\",\"count\":2},"
		       "{\"name\":\"n\",\"deviceClassName\":\"mig.nvidia.com\",\"count\":3},"
		       "{\"name\":\"g\",\"deviceClassName\":\"gpu.nvidia.com\"}]}]}}}",
		       0, NULL);
	draclaims_quota_usage(&u, c);
	draclaims_quota_usage(&u, c);
	assert_string_equal(json_string_value(json_object_get(u, DRACLAIMS_QUOTA_COUNT)), "2");
	assert_string_equal(
		json_string_value(json_object_get(u, "gpu.nvidia.com" DRACLAIMS_QUOTA_SUFFIX)),
		"66");
	assert_string_equal(
		json_string_value(json_object_get(u, "mig.nvidia.com" DRACLAIMS_QUOTA_SUFFIX)),
		"6");
	json_decref(c);
	json_decref(u);
}

/* A claim's quota refusal in the apiserver's words, judged against the recorded quota. */
static void test_quota_refusal(void **state)
{
	const json_t *q = object("ResourceQuota", "dra-team-a", "gpu-quota");
	const char *key = "gpu.nvidia.com" DRACLAIMS_QUOTA_SUFFIX;
	json_t *u = NULL, *ql = json_pack("{s:[O]}", "items", q);
	struct explain_quota_report *r = NULL;
	struct gs_error err;
	char *want;

	(void)state;
	draclaims_quota_usage(&u, object("ResourceClaim", "dra-team-a", "team-a-0"));
	assert_true(explain_quota_usage_is_claim(u));
	assert_int_equal(explain_quota(ql, u, NULL, &r, &err), 0);
	assert_int_equal(r->n, 1);
	assert_int_equal(r->quotas[0].verdict, EXPLAIN_REFUSE);
	want = gs_xasprintf(
		"exceeded quota: gpu-quota, requested: %s=1, used: %s=%s, limited: %s=%s", key, key,
		json_string_value(json_object_get(kobj_get(q, "status.used"), key)), key,
		json_string_value(json_object_get(kobj_get(q, "status.hard"), key)));
	assert_string_equal(r->quotas[0].message, want);
	free(want);
	explain_quota_report_free(r);
	json_decref(u);
	/* --request of a claim's name makes the same usage; a pod's name with it is refused. */
	u = NULL;
	assert_int_equal(
		explain_quota_add_request(&u, "gpu.nvidia.com" DRACLAIMS_QUOTA_SUFFIX "=1", &err),
		0);
	assert_true(explain_quota_usage_is_claim(u));
	assert_null(json_object_get(u, "pods"));
	assert_int_equal(explain_quota_add_request(&u, "nvidia.com/gpu=1", &err), -1);
	json_decref(u);
	json_decref(ql);
}

/*
 * Dynamic MIG (DRAPartitionableDevices): the slice gpushare advertise --dra
 * prints with DynamicMIG=true (tests/unit/data/dra-dynamic-mig-slice.json),
 * one 1g.10gb device allocated. Every device sharing a counter it used up
 * (memory-slice-0: the full GPU, the larger profiles placed at 0) is
 * blocked, not free; the other 1g.10gb placements stay free.
 */
static void test_shared_counters(void **state)
{
	json_error_t je;
	json_t *sl = json_load_file("tests/unit/data/dra-dynamic-mig-slice.json", 0, &je);
	json_t *slices = json_incref(json_object_get(sl, "items"));
	json_t *node = json_pack("{s:s, s:{s:s, s:{s:s}}}", "kind", "Node", "metadata", "name",
				 "dyn", "labels", "gpushare.io/path", "dra");
	json_t *claim = json_pack(
		"{s:s, s:{s:s, s:s, s:s}, s:{s:{s:{s:[{s:s, s:s, s:s, s:s}]}}, s:[]}}", "kind",
		"ResourceClaim", "metadata", "name", "c", "namespace", "ns", "uid", "u", "status",
		"allocation", "devices", "results", "request", "mig", "driver", "gpu.nvidia.com",
		"pool", "dyn", "device", "gpu-0-mig-1g10gb-19-0", "reservedFor");
	json_t *claims = json_pack("[O]", claim);
	struct draclaims_objects o = {.slices = slices,
				      .claims = claims,
				      .templates = NULL,
				      .pods = NULL,
				      .events = NULL};
	json_t *st, *d, *dev;
	size_t i, k;

	(void)state;
	assert_non_null(sl);
	st = draclaims_node_status(node, &o);
	assert_int_equal(json_integer_value(json_object_get(st, "held")), 1);
	json_array_foreach (json_object_get(st, "devices"), i, d) {
		bool uses_slice0 = false;
		const json_t *cc;
		dev = json_array_get(kobj_get(json_array_get(slices, 0), "spec.devices"), i);
		assert_string_equal(kobj_text(dev, "name"), kobj_text(d, "name"));
		json_array_foreach (json_object_get(dev, "consumesCounters"), k, cc)
			uses_slice0 |=
				json_object_get(kobj_map(cc, "counters"), "memory-slice-0") != NULL;
		if (!strcmp(kobj_text(d, "name"), "gpu-0-mig-1g10gb-19-0"))
			assert_string_equal(kobj_text(d, "claim"), "ns/c");
		else if (uses_slice0 || !strcmp(kobj_text(d, "name"), "gpu-0"))
			assert_non_null(kobj_string(d, "blockedBy"));
		if (!strcmp(kobj_text(d, "name"), "gpu-0-mig-1g10gb-19-1"))
			assert_null(kobj_string(d, "blockedBy"));
	}
	assert_int_equal(json_array_size(json_object_get(st, "free")) +
				 json_array_size(json_object_get(st, "blocked")) + 1,
			 json_array_size(json_object_get(st, "devices")));
	assert_true(json_array_size(json_object_get(st, "blocked")) > 0);
	json_decref(st);
	/* Nothing allocated: nothing blocked. */
	json_array_clear(claims);
	st = draclaims_node_status(node, &o);
	assert_int_equal(json_array_size(json_object_get(st, "blocked")), 0);
	json_decref(st);
	/* A counter without a value (bad input offline) counts as 0, not a crash. */
	json_object_set_new((json_t *)kobj_map(json_array_get(kobj_get(json_array_get(slices, 0),
								       "spec.sharedCounters"),
							      0),
					       "counters"),
			    "memory-slice-0", json_object());
	st = draclaims_node_status(node, &o);
	assert_int_equal(json_integer_value(json_object_get(st, "total")),
			 json_array_size(kobj_get(json_array_get(slices, 0), "spec.devices")));
	json_decref(st);
	json_decref(claim);
	json_decref(claims);
	json_decref(node);
	json_decref(slices);
	json_decref(sl);
}

/* The first allocation result of a claim the test made (so it may change it). */
static json_t *result_of(const json_t *claim)
{
	return json_array_get(kobj_get(claim, "status.allocation.devices.results"), 0);
}

/* A claim allocated one share of dra-t4's gpu-0, consuming `shares` and `memory`. */
static json_t *share_claim(const char *name, const char *share_id, const char *shares,
			   const char *memory)
{
	return json_pack("{s:s, s:{s:s, s:s, s:s}, s:{s:{s:{s:[{s:s, s:s, s:s, s:s, s:s, "
			 "s:{s:s, s:s}}]}}, s:[{s:s, s:s}]}}",
			 "kind", "ResourceClaim", "metadata", "name", name, "namespace", "ns",
			 "uid", name, "status", "allocation", "devices", "results", "request",
			 "gpu", "driver", "gpu.nvidia.com", "pool", "dra-t4", "device", "gpu-0",
			 "shareID", share_id, "consumedCapacity", "memory", memory, "shares",
			 shares, "reservedFor", "resource", "pods", "name", name);
}

/*
 * ConsumableShares (tests/golden/status-dra-shares/list.json's slice: one T4,
 * allowMultipleAllocations, shares 100, memory 15Gi): two claims with a
 * shareID on gpu-0 share it; neither is its "claim"; what is left is the
 * value minus the sum consumed, printed as Kubernetes prints a quantity; a
 * consumed amount that does not parse leaves its capacity out.
 */
static void test_consumable_shares(void **state)
{
	json_error_t je;
	json_t *recording = json_load_file("tests/golden/status-dra-shares/list.json", 0, &je);
	json_t *slices = json_array(), *nodes = json_array(), *claims, *st, *d, *it;
	struct draclaims_objects o = {
		.slices = slices, .claims = NULL, .templates = NULL, .pods = NULL, .events = NULL};
	const json_t *node;
	char *line;
	size_t i;

	(void)state;
	assert_non_null(recording);
	json_array_foreach (json_object_get(recording, "items"), i, it)
		if (kobj_is(it, "Node") || kobj_is(it, "ResourceSlice"))
			json_array_append(kobj_is(it, "Node") ? nodes : slices, it);
	node = json_array_get(nodes, 0);
	claims = json_pack("[o, o]",
			   share_claim("a", "06147a03-1090-4905-8061-7a031090b905", "60", "4Gi"),
			   share_claim("b", "84a2ecad-e4b1-42a4-884a-ecade4b1e2a4", "30", "0"));
	o.claims = claims;
	st = draclaims_node_status(node, &o);
	d = json_array_get(json_object_get(st, "devices"), 0);
	assert_string_equal(kobj_text(d, "name"), "gpu-0");
	assert_true(json_is_null(json_object_get(d, "claim")));
	assert_int_equal(json_array_size(json_object_get(d, "shares")), 2);
	assert_string_equal(kobj_text(json_array_get(json_object_get(d, "shares"), 0), "claim"),
			    "ns/a");
	assert_string_equal(kobj_text(json_array_get(json_object_get(d, "shares"), 1),
				      "consumedCapacity.shares"),
			    "30");
	assert_string_equal(json_string_value(json_array_get(json_object_get(d, "claims"), 1)),
			    "ns/b");
	assert_int_equal(json_array_size(json_object_get(d, "pods")), 2);
	assert_string_equal(kobj_text(d, "left.memory"), "11Gi"); /* 15Gi - 4Gi - 0 */
	assert_string_equal(kobj_text(d, "left.shares"), "10");	  /* 100 - 60 - 30 */
	assert_string_equal(kobj_text(d, "capacity.memory"), "15Gi");
	assert_int_equal(json_integer_value(json_object_get(st, "held")), 1);
	assert_int_equal(json_array_size(json_object_get(st, "free")), 0);
	assert_string_equal(json_string_value(json_array_get(json_object_get(st, "shared"), 0)),
			    "gpu-0");
	json_decref(st);
	line = draclaims_node_line(node, &o);
	assert_string_equal(line, "DRA node (gpushare.io/path=dra): publishes 1 device (1 x Tesla "
				  "T4), 0 free; held: gpu-0 shared by ns/a, ns/b (left: shares 10 "
				  "of 100, memory 11Gi of 15Gi)");
	free(line);

	/* A consumed amount that is no quantity: memory is not counted, shares still are. */
	json_object_set_new(
		json_object_get(result_of(json_array_get(claims, 1)), "consumedCapacity"), "memory",
		json_string("lots"));
	st = draclaims_node_status(node, &o);
	d = json_array_get(json_object_get(st, "devices"), 0);
	assert_null(json_object_get(json_object_get(d, "left"), "memory"));
	assert_string_equal(kobj_text(d, "left.shares"), "10");
	json_decref(st);
	/* A published capacity without a value: left out, not read. */
	json_object_del(
		(json_t *)kobj_get(
			json_array_get(kobj_get(json_array_get(slices, 0), "spec.devices"), 0),
			"capacity.shares"),
		"value");
	st = draclaims_node_status(node, &o);
	assert_int_equal(json_object_size(kobj_get(
				 json_array_get(json_object_get(st, "devices"), 0), "left")),
			 0);
	json_decref(st);

	/* A result without a shareID holds the device alone, as before. */
	json_object_del(result_of(json_array_get(claims, 0)), "shareID");
	json_array_remove(claims, 1);
	st = draclaims_node_status(node, &o);
	d = json_array_get(json_object_get(st, "devices"), 0);
	assert_string_equal(kobj_text(d, "claim"), "ns/a");
	assert_null(json_object_get(d, "shares"));
	assert_null(json_object_get(st, "shared"));
	json_decref(st);
	json_decref(claims);
	json_decref(slices);
	json_decref(nodes);
	json_decref(recording);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_devices_follow_allocation),
		cmocka_unit_test(test_free_and_total),
		cmocka_unit_test(test_prepare_verdicts),
		cmocka_unit_test(test_no_slice),
		cmocka_unit_test(test_status_table),
		cmocka_unit_test(test_explain_prepare_refused),
		cmocka_unit_test(test_explain_allocated_shared),
		cmocka_unit_test(test_explain_missing),
		cmocka_unit_test(test_quota_usage),
		cmocka_unit_test(test_quota_refusal),
		cmocka_unit_test(test_shared_counters),
		cmocka_unit_test(test_consumable_shares),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
