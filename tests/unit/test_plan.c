#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/plan.h"
#include "engine/plan_select.h"
#include "base/splitmix.h"
#include "model/kobj.h"
#include "base/version.h"
#include "json_fixture.h"

/*
 * plan's filters and scores against hand-made nodes (already advertised)
 * and pods. Expected texts are kube-scheduler v1.34.4's (docs/guide/plan.md);
 * expected nodes follow from its score formulas worked by hand in each
 * case's comment.
 */

/* A node: name, cpu, memory, gpus, extra JSON fields of spec ("" = none), labels JSON. */
static json_t *node(const char *name, const char *cpu, const char *mem, const char *gpus,
		    const char *spec, const char *labels)
{
	char buf[2048];
	snprintf(buf, sizeof(buf),
		 "{\"kind\":\"Node\",\"metadata\":{\"name\":\"%s\",\"labels\":%s},"
		 "\"spec\":{%s},\"status\":{\"allocatable\":{\"cpu\":\"%s\",\"memory\":\"%s\","
		 "\"pods\":\"110\",\"nvidia.com/gpu\":\"%s\"}}}",
		 name, labels ? labels : "{}", spec ? spec : "", cpu, mem, gpus);
	return loads(buf);
}

/* A pod: name, resources JSON of its one container, extra spec fields ("" = none). */
static json_t *pod(const char *name, const char *resources, const char *spec)
{
	char buf[2048];
	snprintf(buf, sizeof(buf),
		 "{\"kind\":\"Pod\",\"metadata\":{\"name\":\"%s\",\"namespace\":\"t\"},"
		 "\"spec\":{%s%s\"containers\":[{\"name\":\"c\",\"resources\":%s}]}}",
		 name, spec ? spec : "", spec && *spec ? "," : "", resources);
	return loads(buf);
}

static const struct kubeversion *release(const char *v)
{
	struct gs_error err;
	const struct kubeversion *kv = kubeversion_parse(v, &err);
	if (!kv)
		fail_msg("%s", err.msg);
	return kv;
}

/* plan_run on v1.34.4, or on `in` as given (nodes and pods added). */
static struct plan_result *run_in(struct plan_input in, json_t *nodes_arr, json_t *pods)
{
	json_t *nodes = json_pack("{s:s,s:o}", "kind", "NodeList", "items", nodes_arr);
	struct plan_result *r = NULL;
	struct gs_error err;

	in.nodes = nodes;
	in.pods = pods;
	if (!in.kube)
		in.kube = release("v1.34.4");
	if (plan_run(&in, &r, &err) < 0)
		fail_msg("plan_run: %s", err.msg);
	json_decref(nodes);
	json_decref(pods);
	return r;
}

static struct plan_result *run(json_t *nodes_arr, json_t *pods)
{
	return run_in((struct plan_input){0}, nodes_arr, pods);
}

static const char *node_of(const struct plan_result *r, size_t i)
{
	return r->pods[i].node ? r->pods[i].node : "(none)";
}

static void test_taints_and_unschedulable(void **state)
{
	(void)state;
	json_t *nodes = json_pack(
		"[o,o,o,o]",
		node("a", "8", "32Gi", "1",
		     "\"taints\":[{\"key\":\"k\",\"value\":\"v\",\"effect\":\"NoSchedule\"}]",
		     NULL),
		node("b", "8", "32Gi", "1", "\"taints\":[{\"key\":\"x\",\"effect\":\"NoExecute\"}]",
		     NULL),
		node("c", "8", "32Gi", "1", "\"unschedulable\":true", NULL),
		node("d", "8", "32Gi", "1",
		     "\"taints\":[{\"key\":\"soft\",\"effect\":\"PreferNoSchedule\"}]", NULL));
	json_t *pods = json_pack(
		"[o,o,o]", pod("p0", "{\"limits\":{\"nvidia.com/gpu\":1}}", NULL),
		pod("p1", "{\"limits\":{\"nvidia.com/gpu\":1}}", NULL),
		pod("p2", "{\"limits\":{\"nvidia.com/gpu\":1}}",
		    "\"tolerations\":[{\"key\":\"k\",\"operator\":\"Equal\",\"value\":\"v\"},"
		    "{\"operator\":\"Exists\",\"key\":\"node.kubernetes.io/unschedulable\"}]"));
	struct plan_result *r = run(nodes, pods);

	/* PreferNoSchedule does not filter: d is the one node. */
	assert_string_equal(node_of(r, 0), "d");
	assert_int_equal(r->pods[0].n_feasible, 1);
	assert_int_equal(r->pods[1].verdict, PLAN_PENDING);
	assert_string_equal(
		r->pods[1].reason,
		"0/4 nodes are available: 1 Insufficient nvidia.com/gpu, 1 node(s) were "
		"unschedulable, 2 node(s) had untolerated taint(s). no new claims to "
		"deallocate, preemption: 0/4 nodes are available: 1 No preemption "
		"victims found for incoming pod, 3 Preemption is not helpful for "
		"scheduling.");
	/* Tolerating k=v and the cordon opens a and c; a comes first (a tie). */
	assert_int_equal(r->pods[2].verdict, PLAN_BOUND);
	assert_int_equal(r->pods[2].n_feasible, 2);
	assert_string_equal(node_of(r, 2), "a");
	assert_int_equal(r->pods[2].n_tied, 2);
	plan_result_free(r);
}

static void test_affinity_operators(void **state)
{
	(void)state;
	json_t *nodes = json_pack("[o,o]", node("old", "8", "32Gi", "1", NULL, "{\"cc\":\"75\"}"),
				  node("new", "8", "32Gi", "1", NULL, "{\"cc\":\"90\"}"));
	json_t *pods = json_pack("[o,o]",
				 pod("gt", "{\"limits\":{\"nvidia.com/gpu\":1}}",
				     "\"affinity\":{\"nodeAffinity\":{"
				     "\"requiredDuringSchedulingIgnoredDuringExecution\":"
				     "{\"nodeSelectorTerms\":[{\"matchExpressions\":[{\"key\":"
				     "\"cc\",\"operator\":\"Gt\","
				     "\"values\":[\"80\"]}]}]}}}"),
				 pod("sel", "{\"limits\":{\"nvidia.com/gpu\":1}}",
				     "\"nodeSelector\":{\"cc\":\"90\"}"));
	struct plan_result *r = run(nodes, pods);

	assert_string_equal(node_of(r, 0), "new");
	/* new's one GPU is taken: Insufficient there, the selector fails on old. */
	assert_int_equal(r->pods[1].verdict, PLAN_PENDING);
	assert_string_equal(r->pods[1].reason,
			    "0/2 nodes are available: 1 Insufficient nvidia.com/gpu, 1 node(s) "
			    "didn't match Pod's node affinity/selector. no new claims to "
			    "deallocate, preemption: 0/2 nodes are available: 1 No preemption "
			    "victims found for incoming pod, 1 Preemption is not helpful for "
			    "scheduling.");
	plan_result_free(r);
}

static void test_too_many_pods_and_pending_holds_nothing(void **state)
{
	(void)state;
	json_t *n = node("one", "8", "32Gi", "1", NULL, NULL);
	json_object_set_new(json_object_get(json_object_get(n, "status"), "allocatable"), "pods",
			    json_string("1"));
	json_t *pods = json_pack("[o,o,o]", pod("big", "{\"limits\":{\"nvidia.com/gpu\":2}}", NULL),
				 pod("a", "{\"limits\":{\"nvidia.com/gpu\":1}}", NULL),
				 pod("b", "{}", NULL));
	struct plan_result *r = run(json_pack("[o]", n), pods);

	/* big asks more than the node has: unresolvable, and it holds nothing. */
	assert_int_equal(r->pods[0].verdict, PLAN_PENDING);
	assert_non_null(strstr(r->pods[0].reason, "1 Insufficient nvidia.com/gpu."));
	assert_non_null(strstr(r->pods[0].reason, "1 Preemption is not helpful"));
	assert_string_equal(node_of(r, 1), "one");
	assert_string_equal(r->pods[1].reason, "the only feasible node");
	assert_int_equal(r->pods[2].verdict, PLAN_PENDING);
	assert_string_equal(
		r->pods[2].reason,
		"0/1 nodes are available: 1 Too many pods. no new claims to deallocate, "
		"preemption: 0/1 nodes are available: 1 No preemption victims found "
		"for incoming pod.");
	plan_result_free(r);
}

static void test_least_allocated_and_balanced(void **state)
{
	(void)state;
	/*
	 * x: 4 cpu, 16Gi; y: 8 cpu, 16Gi. A pod of 2 cpu, 2Gi:
	 * x: fit ((4000-2000)*100/4000=50 + (16-2)*100/16=87)/2=68,
	 *    balanced 1-|0.5-0.125|/2 -> 81; 149
	 * y: fit ((8000-2000)*100/8000=75 + 87)/2=81, balanced 1-|0.25-0.125|/2 -> 93; 174
	 */
	json_t *nodes = json_pack("[o,o]", node("x", "4", "16Gi", "0", NULL, NULL),
				  node("y", "8", "16Gi", "0", NULL, NULL));
	json_t *pods = json_pack(
		"[o]", pod("p", "{\"requests\":{\"cpu\":\"2\",\"memory\":\"2Gi\"}}", NULL));
	struct plan_result *r = run(nodes, pods);

	assert_string_equal(node_of(r, 0), "y");
	assert_int_equal(r->pods[0].n_tied, 1);
	assert_string_equal(r->pods[0].reason, "the highest score (474) of 2 feasible nodes");
	plan_result_free(r);
}

static void test_prefer_no_schedule_and_preferred_affinity(void **state)
{
	(void)state;
	json_t *nodes =
		json_pack("[o,o,o]",
			  node("soft", "8", "32Gi", "1",
			       "\"taints\":[{\"key\":\"s\",\"effect\":\"PreferNoSchedule\"}]",
			       "{\"zone\":\"b\"}"),
			  node("plain", "8", "32Gi", "1", NULL, "{\"zone\":\"a\"}"),
			  node("wanted", "8", "32Gi", "1", NULL, "{\"zone\":\"b\"}"));
	json_t *pods = json_pack(
		"[o,o]", pod("p", "{\"limits\":{\"nvidia.com/gpu\":1}}", NULL),
		pod("q", "{\"limits\":{\"nvidia.com/gpu\":1}}",
		    "\"affinity\":{\"nodeAffinity\":{"
		    "\"preferredDuringSchedulingIgnoredDuringExecution\":"
		    "[{\"weight\":10,\"preference\":{\"matchExpressions\":[{\"key\":\"zone\","
		    "\"operator\":\"In\",\"values\":[\"b\"]}]}}]}}"));
	struct plan_result *r = run(nodes, pods);

	/* p: soft loses 3*100 for its taint; plain and wanted tie, plain first. */
	assert_string_equal(node_of(r, 0), "plain");
	assert_int_equal(r->pods[0].n_tied, 2);
	/* q: zone b gives wanted 2*100 and soft too, but soft's taint costs 3*100. */
	assert_string_equal(node_of(r, 1), "wanted");
	plan_result_free(r);
}

/* A node advertising one extended resource. */
static json_t *res_node(const char *name, const char *res, const char *n)
{
	char buf[512];
	snprintf(buf, sizeof(buf),
		 "{\"kind\":\"Node\",\"metadata\":{\"name\":\"%s\"},\"status\":{\"allocatable\":"
		 "{\"cpu\":\"8\",\"memory\":\"32Gi\",\"pods\":\"110\",\"%s\":\"%s\"}}}",
		 name, res, n);
	return loads(buf);
}

static void test_what_if_diff(void **state)
{
	(void)state;
	/* Before: two whole GPUs; after the re-cut: MIG profiles only. */
	json_t *before_nodes = json_pack("{s:s,s:[o]}", "kind", "NodeList", "items",
					 res_node("n", "nvidia.com/gpu", "2"));
	json_t *after_nodes = json_pack("{s:s,s:[o]}", "kind", "NodeList", "items",
					res_node("n", "nvidia.com/mig-1g.10gb", "7"));
	json_t *pods = json_pack("[o,o]", pod("whole", "{\"limits\":{\"nvidia.com/gpu\":1}}", NULL),
				 pod("slice", "{\"limits\":{\"nvidia.com/mig-1g.10gb\":1}}", NULL));
	struct plan_input bi = {.nodes = before_nodes,
				.existing = NULL,
				.pods = pods,
				.quotas = NULL,
				.configs = NULL};
	struct plan_input ai = {.nodes = after_nodes,
				.existing = NULL,
				.pods = pods,
				.quotas = NULL,
				.configs = NULL};
	struct plan_result *b = NULL, *a = NULL;
	struct gs_error err;

	if (plan_run(&bi, &b, &err) < 0 || plan_run(&ai, &a, &err) < 0)
		fail_msg("plan_run: %s", err.msg);
	json_t *d = plan_diff_json(b, a, before_nodes, after_nodes);
	const json_t *changes = json_object_get(d, "changes");
	/* whole: bound -> pending; slice: pending -> bound. */
	assert_int_equal(json_array_size(changes), 2);
	assert_string_equal(
		json_string_value(json_object_get(
			json_object_get(json_array_get(changes, 0), "after"), "verdict")),
		"pending");
	assert_string_equal(json_string_value(json_object_get(
				    json_object_get(json_array_get(changes, 1), "after"), "node")),
			    "n");
	/* nvidia.com/gpu is advertised by no node after: instead, the profile. */
	const json_t *un = json_object_get(d, "unadvertised");
	assert_int_equal(json_array_size(un), 1);
	const json_t *u = json_array_get(un, 0);
	assert_string_equal(json_string_value(json_object_get(u, "name")), "whole");
	assert_string_equal(json_string_value(json_object_get(u, "resource")), "nvidia.com/gpu");
	assert_true(json_is_true(json_object_get(u, "before")));
	assert_string_equal(json_string_value(json_array_get(json_object_get(u, "instead"), 0)),
			    "nvidia.com/mig-1g.10gb");
	assert_int_equal(json_array_size(json_object_get(u, "instead")), 1);
	json_decref(d);
	plan_result_free(b);
	plan_result_free(a);
	json_decref(before_nodes);
	json_decref(after_nodes);
	json_decref(pods);
}

static void test_verdict_names(void **state)
{
	(void)state;
	assert_string_equal(plan_verdict_name(PLAN_BOUND), "bound");
	assert_string_equal(plan_verdict_name(PLAN_PENDING), "pending");
	assert_string_equal(plan_verdict_name(PLAN_REFUSED), "refused");
	assert_string_equal(plan_verdict_name(PLAN_FAILED), "failed");
}

/*
 * A pod that fits 20 equal nodes names the first PLAN_MAX_LISTED of them
 * in each list, and counts all 20: the outcome of a batch stays small
 * whatever the fleet.
 */
static void test_lists_bounded(void **state)
{
	(void)state;
	json_t *nodes = json_array();
	char name[16];

	for (int i = 0; i < 20; i++) {
		snprintf(name, sizeof(name), "n%02d", i);
		json_array_append_new(nodes, node(name, "8", "32Gi", "1", NULL, NULL));
	}
	struct plan_result *r =
		run(nodes, json_pack("[o]", pod("p", "{\"limits\":{\"nvidia.com/gpu\":1}}", NULL)));

	assert_int_equal(r->pods[0].n_feasible, 20);
	assert_int_equal(r->pods[0].n_feasible_listed, PLAN_MAX_LISTED);
	assert_int_equal(r->pods[0].n_tied, 20);
	assert_int_equal(r->pods[0].n_tied_listed, PLAN_MAX_LISTED);
	json_t *j = plan_pod_json(r, 0);
	assert_int_equal(json_integer_value(json_object_get(j, "feasibleCount")), 20);
	assert_int_equal(json_integer_value(json_object_get(j, "tiedCount")), 20);
	assert_int_equal(json_array_size(json_object_get(j, "feasible")), PLAN_MAX_LISTED);
	assert_int_equal(json_array_size(json_object_get(j, "tied")), PLAN_MAX_LISTED);
	/* the chosen node first (a draw among the 20) */
	assert_string_equal(json_string_value(json_array_get(json_object_get(j, "tied"), 0)),
			    node_of(r, 0));
	assert_string_equal(json_string_value(json_array_get(json_object_get(j, "feasible"),
							     PLAN_MAX_LISTED - 1)),
			    "n15");
	json_decref(j);
	plan_result_free(r);
}

/*
 * A batch placed one pod at a time, each pod freed once placed, ends as
 * the same batch placed at once: the second pod of a scheduling class
 * still finds the class's filters though the first pod is gone.
 */
static void test_one_at_a_time(void **state)
{
	(void)state;
	json_t *nodes = json_pack("{s:s,s:[o,o]}", "kind", "NodeList", "items",
				  node("a", "8", "32Gi", "1", NULL, "{\"zone\":\"x\"}"),
				  node("b", "8", "32Gi", "2", NULL, "{\"zone\":\"y\"}"));
	const char *sel = "\"nodeSelector\":{\"zone\":\"y\"}";
	json_t *all = json_pack("[o,o,o]", pod("p0", "{\"limits\":{\"nvidia.com/gpu\":1}}", sel),
				pod("p1", "{\"limits\":{\"nvidia.com/gpu\":1}}", sel),
				pod("p2", "{\"limits\":{\"nvidia.com/gpu\":1}}", sel));
	struct plan_input in = {.nodes = nodes, .pods = all};
	struct plan_result *whole, *one;
	struct plan *p;
	struct gs_error err;

	if (plan_run(&in, &whole, &err) < 0 || plan_new(&in, &p, &err) < 0)
		fail_msg("plan: %s", err.msg);
	for (size_t i = 0; i < json_array_size(all); i++) {
		json_t *copy = json_deep_copy(json_array_get(all, i));
		if (plan_add(p, copy, &err) < 0)
			fail_msg("plan_add: %s", err.msg);
		json_decref(copy);
	}
	one = plan_finish(p);
	assert_int_equal(one->n_pods, 3);
	for (size_t i = 0; i < 3; i++) {
		assert_int_equal(one->pods[i].verdict, whole->pods[i].verdict);
		assert_string_equal(one->pods[i].reason, whole->pods[i].reason);
	}
	/* b has two GPUs: the third pod of the class is Pending. */
	assert_string_equal(one->pods[1].node, "b");
	assert_int_equal(one->pods[2].verdict, PLAN_PENDING);
	plan_result_free(whole);
	plan_result_free(one);
	json_decref(nodes);
	json_decref(all);
}

/* plan_add a copy of `pod` (the plan keeps no pod); fails the test on error. */
static void add_copy(struct plan *p, const json_t *pod)
{
	json_t *copy = json_deep_copy(pod);
	struct gs_error err;

	if (plan_add(p, copy, &err) < 0)
		fail_msg("plan_add: %s", err.msg);
	json_decref(copy);
}

/* A new plan of `in` with copies of the first n of `pods` added; fails the test on error. */
static struct plan *plan_with(const struct plan_input *in, const json_t *pods, size_t n)
{
	struct plan *p;
	struct gs_error err;

	if (plan_new(in, &p, &err) < 0)
		fail_msg("plan_new: %s", err.msg);
	for (size_t i = 0; i < n; i++)
		add_copy(p, json_array_get(pods, i));
	return p;
}

/*
 * A pod that leaves gives its node back what it took: the GPU (a pending
 * pod then fits there) and the cpu and memory LeastAllocated scores. Two
 * nodes of 1 GPU, 8 cpu, 32Gi; pods of 1 GPU and 4 cpu, 8Gi.
 */
static void test_remove_frees_the_node(void **state)
{
	(void)state;
	json_t *nodes = json_pack("{s:s,s:[o,o]}", "kind", "NodeList", "items",
				  node("a", "8", "32Gi", "1", NULL, NULL),
				  node("b", "8", "32Gi", "1", NULL, NULL));
	const char *gpu = "{\"requests\":{\"cpu\":\"4\",\"memory\":\"8Gi\"},"
			  "\"limits\":{\"nvidia.com/gpu\":1}}";
	json_t *pods = json_pack(
		"[o,o,o,o]", pod("p0", gpu, NULL), pod("p1", gpu, NULL), pod("p2", gpu, NULL),
		pod("p3", "{\"requests\":{\"cpu\":\"1\",\"memory\":\"1Gi\"}}", NULL));
	struct plan_input in = {.nodes = nodes, .kube = release("v1.34.4")};
	struct plan *p = plan_with(&in, pods, 3);
	struct gs_error err;
	assert_string_equal(plan_outcome(p, 0)->node, "a"); /* a tie: the first */
	assert_string_equal(plan_outcome(p, 1)->node, "b");
	assert_int_equal(plan_outcome(p, 2)->verdict, PLAN_PENDING);
	assert_null(plan_outcome(p, 3));
	/* Nothing left: a retry stays pending, with the scheduler's words again. */
	assert_int_equal(plan_retry(p, 2, json_array_get(pods, 2), &err), 0);
	assert_int_equal(plan_outcome(p, 2)->verdict, PLAN_PENDING);
	assert_string_equal(plan_outcome(p, 2)->reason,
			    "0/2 nodes are available: 2 Insufficient nvidia.com/gpu. no new claims "
			    "to deallocate, preemption: 0/2 nodes are available: 2 No preemption "
			    "victims found for incoming pod.");

	assert_int_equal(plan_remove(p, 1, json_array_get(pods, 1), &err), 0);
	assert_true(plan_outcome(p, 1)->gone);
	/* b is empty again: LeastAllocated gives it (cpu 7/8, memory 31/32) over a
	   (3/8, 23/32): (87 + 96) / 2 = 91 against (37 + 71) / 2 = 54, balanced
	   100 against 100 - |0.625 - 0.28125| / 2 x 100 = 82. */
	add_copy(p, json_array_get(pods, 3));
	assert_string_equal(plan_outcome(p, 3)->node, "b");
	assert_int_equal(plan_outcome(p, 3)->n_tied, 1);
	/* b's GPU is free: the pending pod takes it. */
	assert_int_equal(plan_retry(p, 2, json_array_get(pods, 2), &err), 0);
	assert_int_equal(plan_outcome(p, 2)->verdict, PLAN_BOUND);
	assert_string_equal(plan_outcome(p, 2)->node, "b");
	assert_string_equal(plan_outcome(p, 2)->reason, "the only feasible node");

	/* Not in that state, or another pod: refused, nothing changed. */
	assert_int_equal(plan_remove(p, 1, json_array_get(pods, 1), &err), -1);
	assert_string_equal(err.msg, "pod t/p1 is gone already");
	assert_int_equal(plan_retry(p, 2, json_array_get(pods, 2), &err), -1);
	assert_string_equal(err.msg, "pod t/p2 is bound, not pending");
	assert_int_equal(plan_remove(p, 0, json_array_get(pods, 1), &err), -1);
	assert_string_equal(err.msg, "pod t/p1: pod 0 of the plan is t/p0");
	assert_int_equal(plan_remove(p, 9, json_array_get(pods, 1), &err), -1);
	assert_string_equal(err.msg, "pod t/p1: the plan has no pod 9");

	struct plan_result *r = plan_finish(p);
	assert_int_equal(r->n_pods, 4);
	assert_true(r->pods[1].gone);
	assert_false(r->pods[0].gone);
	/* The pools count what the pods there hold now: a's p0 and b's p2. */
	assert_int_equal(r->n_pools, 1);
	assert_int_equal(r->pools[0].held, 2);
	plan_result_free(r);
	json_decref(nodes);
	json_decref(pods);
}

/* A deleted pod, pending or bound, gives its quota back (status.used). */
static void test_remove_gives_quota_back(void **state)
{
	(void)state;
	json_t *nodes = json_pack("{s:s,s:[o]}", "kind", "NodeList", "items",
				  node("a", "8", "32Gi", "1", NULL, NULL));
	json_t *quotas = loads(
		"[{\"kind\":\"ResourceQuota\",\"metadata\":{\"name\":\"q\",\"namespace\":\"t\"},"
		"\"spec\":{\"hard\":{\"requests.nvidia.com/gpu\":\"2\"}},"
		"\"status\":{\"hard\":{\"requests.nvidia.com/gpu\":\"2\"},"
		"\"used\":{\"requests.nvidia.com/gpu\":\"0\"}}}]");
	const char *gpu = "{\"limits\":{\"nvidia.com/gpu\":1}}";
	json_t *pods = json_pack("[o,o,o,o]", pod("p0", gpu, NULL), pod("p1", gpu, NULL),
				 pod("p2", gpu, NULL), pod("p3", gpu, NULL));
	struct plan_input in = {.nodes = nodes, .quotas = quotas, .kube = release("v1.34.4")};
	struct plan *p = plan_with(&in, pods, 3);
	struct gs_error err;
	/* p0 bound, p1 pending (both count), p2 over the quota */
	assert_int_equal(plan_outcome(p, 0)->verdict, PLAN_BOUND);
	assert_int_equal(plan_outcome(p, 1)->verdict, PLAN_PENDING);
	assert_int_equal(plan_outcome(p, 2)->verdict, PLAN_REFUSED);
	assert_int_equal(plan_remove(p, 2, json_array_get(pods, 2), &err), 0); /* held nothing */
	assert_int_equal(plan_remove(p, 1, json_array_get(pods, 1), &err), 0);
	add_copy(p, json_array_get(pods, 3));
	assert_int_equal(plan_outcome(p, 3)->verdict, PLAN_PENDING); /* admitted, no GPU left */
	assert_int_equal(plan_remove(p, 0, json_array_get(pods, 0), &err), 0);
	assert_int_equal(plan_retry(p, 3, json_array_get(pods, 3), &err), 0);
	assert_int_equal(plan_outcome(p, 3)->verdict, PLAN_BOUND);

	struct plan_result *r = plan_finish(p);
	assert_int_equal(r->n_quotas, 1);
	assert_string_equal(r->quotas[0].used, "1"); /* p3 only */
	plan_result_free(r);
	json_decref(nodes);
	json_decref(quotas);
	json_decref(pods);
}

/*
 * A pod bound as written meets the device manager container by container,
 * init containers first (topologymanager/scope.go admitPolicyNone, then
 * devicemanager Allocate): the first container short of devices names the
 * refusal, here the init container's MIG devices, though an app container
 * lists nvidia.com/gpu first. A plain init container's devices are reused
 * by the containers after it; a sidecar (restartPolicy Always) keeps its own.
 */
static void test_pinned_devices_by_container(void **state)
{
	(void)state;
	const char *node_text =
		"{\"kind\":\"Node\",\"metadata\":{\"name\":\"n\"},\"status\":{\"allocatable\":"
		"{\"cpu\":\"8\",\"memory\":\"32Gi\",\"pods\":\"110\",\"nvidia.com/gpu\":\"2\","
		"\"nvidia.com/mig-1g.10gb\":\"1\"}}}";
	const char *fmt = "{\"kind\":\"Pod\",\"metadata\":{\"name\":\"%s\",\"namespace\":\"t\"},"
			  "\"spec\":{\"nodeName\":\"n\",\"initContainers\":[%s],"
			  "\"containers\":[%s]}}";
	const struct {
		const char *name, *init, *app;
	} pods[] = {
		{"order",
		 "{\"name\":\"i\",\"resources\":{\"limits\":{\"nvidia.com/mig-1g.10gb\":2}}}",
		 "{\"name\":\"c\",\"resources\":{\"limits\":{\"nvidia.com/gpu\":3}}}"},
		{"reuse", "{\"name\":\"i\",\"resources\":{\"limits\":{\"nvidia.com/gpu\":2}}}",
		 "{\"name\":\"c\",\"resources\":{\"limits\":{\"nvidia.com/gpu\":1}}},"
		 "{\"name\":\"d\",\"resources\":{\"limits\":{\"nvidia.com/gpu\":1}}}"},
		{"sidecar",
		 "{\"name\":\"s\",\"restartPolicy\":\"Always\",\"resources\":{\"limits\":"
		 "{\"nvidia.com/gpu\":1}}},{\"name\":\"i\",\"resources\":{\"limits\":"
		 "{\"nvidia.com/gpu\":1}}}",
		 "{\"name\":\"c\",\"resources\":{\"limits\":{\"nvidia.com/gpu\":2}}}"},
	};
	const char *want[] = {
		"Allocate failed due to requested number of devices unavailable for "
		"nvidia.com/mig-1g.10gb. Requested: 2, Available: 1, which is unexpected",
		NULL,
		"Allocate failed due to requested number of devices unavailable for "
		"nvidia.com/gpu. Requested: 1, Available: 0, which is unexpected",
	};

	for (size_t i = 0; i < sizeof(pods) / sizeof(pods[0]); i++) {
		char buf[1024];
		struct plan_result *r;

		snprintf(buf, sizeof(buf), fmt, pods[i].name, pods[i].init, pods[i].app);
		r = run(json_pack("[o]", loads(node_text)), json_pack("[o]", loads(buf)));
		if (!want[i]) {
			assert_int_equal(r->pods[0].verdict, PLAN_BOUND);
		} else {
			assert_int_equal(r->pods[0].verdict, PLAN_FAILED);
			assert_string_equal(r->pods[0].status_reason, "UnexpectedAdmissionError");
			assert_string_equal(r->pods[0].reason, want[i]);
		}
		plan_result_free(r);
	}
}

/*
 * The release decides the words and DRAExtendedResource: a DeviceClass
 * naming nvidia.com/gpu serves it by DRA on a node whose allocatable lacks
 * it (1.36 on by default, 1.37 GA, off before), from the node's slice.
 */
static void test_versions_and_dra_extended_resource(void **state)
{
	(void)state;
	const char *classes_text = "[{\"kind\":\"DeviceClass\",\"metadata\":{\"name\":"
				   "\"gpu.nvidia.com\"},\"spec\":{\"extendedResourceName\":"
				   "\"nvidia.com/gpu\"}}]";
	const char *slices_text =
		"[{\"kind\":\"ResourceSlice\",\"spec\":{\"driver\":\"gpu.nvidia.com\","
		"\"nodeName\":\"dra\",\"pool\":{\"name\":\"dra\"},\"devices\":[{\"name\":"
		"\"gpu-0\",\"attributes\":{\"type\":{\"string\":\"gpu\"}}}]}}]";
	json_t *classes = loads(classes_text), *slices = loads(slices_text);
	struct plan_result *r;
	const char *gpu = "{\"limits\":{\"nvidia.com/gpu\":1}}";

	/* No DeviceClass: 1.37's FitError has no DynamicResources text. */
	r = run_in((struct plan_input){.kube = release("v1.37.2")},
		   json_pack("[o]", node("a", "8", "32Gi", "0", NULL, NULL)),
		   json_pack("[o]", pod("p0", gpu, NULL)));
	assert_string_equal(r->pods[0].reason,
			    "0/1 nodes are available: 1 Insufficient nvidia.com/gpu. preemption: "
			    "0/1 nodes are available: 1 Preemption is not helpful for scheduling.");
	plan_result_free(r);

	/* 1.37: the DRA node's one GPU takes p0; p1 finds none there. */
	r = run_in((struct plan_input){.kube = release("1.37"),
				       .device_classes = classes,
				       .slices = slices},
		   json_pack("[o,o]", node("dp", "8", "32Gi", "1", NULL, NULL),
			     node("dra", "8", "32Gi", "0", NULL, NULL)),
		   json_pack("[o,o,o]", pod("p0", gpu, NULL), pod("p1", gpu, NULL),
			     pod("p2", gpu, NULL)));
	assert_int_equal(r->pods[0].n_feasible, 2);
	assert_string_equal(node_of(r, 0), "dp");
	assert_string_equal(node_of(r, 1), "dra");
	assert_int_equal(r->pods[2].verdict, PLAN_PENDING);
	assert_string_equal(r->pods[2].reason,
			    "0/2 nodes are available: 1 Insufficient nvidia.com/gpu, 1 cannot "
			    "allocate all claims. preemption: 0/2 nodes are available: 1 No "
			    "preemption victims found for incoming pod, 1 Preemption is not "
			    "helpful for scheduling.");
	plan_result_free(r);

	/* 1.36: the same, and PostFilter's "still not schedulable". */
	r = run_in((struct plan_input){.kube = release("v1.36.3"), .device_classes = classes},
		   json_pack("[o]", node("dra", "8", "32Gi", "0", NULL, NULL)),
		   json_pack("[o]", pod("p0", gpu, NULL)));
	assert_string_equal(r->pods[0].reason,
			    "0/1 nodes are available: 1 cannot allocate all claims. still not "
			    "schedulable, preemption: 0/1 nodes are available: 1 Preemption is "
			    "not helpful for scheduling.");
	plan_result_free(r);

	/* 1.35: the gate is off by default; --feature-gates turns it on. */
	r = run_in((struct plan_input){.kube = release("v1.35.4"),
				       .device_classes = classes,
				       .slices = slices},
		   json_pack("[o]", node("dra", "8", "32Gi", "0", NULL, NULL)),
		   json_pack("[o]", pod("p0", gpu, NULL)));
	assert_int_equal(r->pods[0].verdict, PLAN_PENDING);
	assert_non_null(strstr(r->pods[0].reason, "1 Insufficient nvidia.com/gpu. no new claims"));
	plan_result_free(r);
	struct kubegates g;
	struct gs_error err;
	kubegates_defaults(&g, release("v1.35.4"));
	assert_int_equal(kubegates_parse(&g, "DRAExtendedResource=true", &err), 0);
	r = run_in((struct plan_input){.kube = release("v1.35.4"),
				       .gates = &g,
				       .device_classes = classes,
				       .slices = slices},
		   json_pack("[o]", node("dra", "8", "32Gi", "0", NULL, NULL)),
		   json_pack("[o]", pod("p0", gpu, NULL)));
	assert_string_equal(node_of(r, 0), "dra");
	plan_result_free(r);
	assert_int_equal(kubegates_parse(&g, "DRAExtendedResources=true", &err), -1);
	assert_non_null(strstr(err.msg, "unknown feature gate 'DRAExtendedResources'"));
	assert_int_equal(kubegates_parse(&g, "DRAExtendedResource=yes", &err), -1);
	/* GA and locked in 1.37: turning it off is refused; 1.36 takes it. */
	kubegates_defaults(&g, release("v1.37.2"));
	assert_int_equal(kubegates_parse(&g, "DRAExtendedResource=false", &err), 0);
	assert_int_equal(kubegates_check(&g, release("v1.37.2"), &err), -1);
	assert_string_equal(err.msg, "cannot set feature gate DRAExtendedResource to false, "
				     "feature is locked to true");
	assert_int_equal(kubegates_check(&g, release("v1.36.3"), &err), 0);
	/* The gate's stage by release (pkg/features/kube_features.go). */
	assert_string_equal(kubegate_stage_name(release("v1.34.4")->dra_extended_resource_stage),
			    "alpha");
	assert_string_equal(kubegate_stage_name(release("v1.35.4")->dra_extended_resource_stage),
			    "alpha");
	assert_string_equal(kubegate_stage_name(release("v1.36.3")->dra_extended_resource_stage),
			    "beta");
	assert_string_equal(kubegate_stage_name(release("v1.37.2")->dra_extended_resource_stage),
			    "GA");
	assert_null(kubeversion_parse("v1.33.0", &err));
	assert_non_null(strstr(err.msg, "v1.34.4, v1.35.4, v1.36.3, v1.37.2"));
	assert_string_equal(release("v1.36.3+k3s1")->version, "v1.36.3");
	/* `gpushare version` names the default, the newest. */
	assert_string_equal(kubeversion_newest()->version, GPUSHARE_KUBERNETES_VERSION);
	json_decref(classes);
	json_decref(slices);
}

/*
 * NodeResourcesBalancedAllocation by release (noderesources/balanced_allocation.go):
 * up to 1.35 the balance with the pod, (1 - std) * 100; from 1.36
 * 50 + (50 + with - without) / 2. 100m of cpu on a 4-cpu 64Gi node and
 * a 16-cpu 16Gi one: 98 against 99 before, 74 each after, and LeastAllocated
 * gives both 98, so 1.36 ties where 1.35 prefers the second (a case of the
 * difftest that disagreed on 1.37).
 */
static void test_balanced_allocation_by_release(void **state)
{
	(void)state;
	const char *res = "{\"requests\":{\"cpu\":\"100m\"}}";
	struct plan_result *r;

	r = run_in((struct plan_input){.kube = release("v1.35.4")},
		   json_pack("[o,o]", node("n0", "4", "64Gi", "0", NULL, NULL),
			     node("n1", "16", "16Gi", "0", NULL, NULL)),
		   json_pack("[o]", pod("p0", res, NULL)));
	assert_string_equal(node_of(r, 0), "n1");
	assert_int_equal(r->pods[0].n_tied, 1);
	plan_result_free(r);
	r = run_in((struct plan_input){.kube = release("v1.36.3")},
		   json_pack("[o,o]", node("n0", "4", "64Gi", "0", NULL, NULL),
			     node("n1", "16", "16Gi", "0", NULL, NULL)),
		   json_pack("[o]", pod("p0", res, NULL)));
	assert_int_equal(r->pods[0].n_tied, 2);
	plan_result_free(r);
}

/*
 * A pod asking two resources DeviceClasses serve: on a node lacking both
 * its claim asks a device of each class, on a node lacking one only that
 * one. "both" (read first) has a GPU and a MIG device in its slice, "half"
 * advertises nvidia.com/gpu and has only a MIG device: both fit.
 */
static void test_dra_claim_per_lacking_set(void **state)
{
	(void)state;
	json_t *classes =
		loads("[{\"kind\":\"DeviceClass\",\"metadata\":{\"name\":\"gpu.nvidia.com\"},"
		      "\"spec\":{\"extendedResourceName\":\"nvidia.com/gpu\"}},"
		      "{\"kind\":\"DeviceClass\",\"metadata\":{\"name\":\"mig.nvidia.com\"},"
		      "\"spec\":{\"extendedResourceName\":\"nvidia.com/mig-1g.10gb\"}}]");
	json_t *slices =
		loads("[{\"kind\":\"ResourceSlice\",\"spec\":{\"driver\":\"gpu.nvidia.com\","
		      "\"nodeName\":\"both\",\"pool\":{\"name\":\"both\"},\"devices\":["
		      "{\"name\":\"gpu-0\",\"attributes\":{\"type\":{\"string\":\"gpu\"}}},"
		      "{\"name\":\"mig-0\",\"attributes\":{\"type\":{\"string\":\"mig\"}}}]}},"
		      "{\"kind\":\"ResourceSlice\",\"spec\":{\"driver\":\"gpu.nvidia.com\","
		      "\"nodeName\":\"half\",\"pool\":{\"name\":\"half\"},\"devices\":["
		      "{\"name\":\"mig-0\",\"attributes\":{\"type\":{\"string\":\"mig\"}}}]}}]");
	const char *both = "{\"limits\":{\"nvidia.com/gpu\":1,\"nvidia.com/mig-1g.10gb\":1}}";
	struct plan_result *r = run_in(
		(struct plan_input){
			.kube = release("v1.37.2"), .device_classes = classes, .slices = slices},
		json_pack("[o,o]", node("both", "8", "32Gi", "0", NULL, NULL),
			  node("half", "8", "32Gi", "1", NULL, NULL)),
		json_pack("[o,o,o]", pod("p0", both, NULL), pod("p1", both, NULL),
			  pod("p2", both, NULL)));

	assert_int_equal(r->pods[0].n_feasible, 2);
	/* p0 takes one node's devices, p1 the other's; p2 finds none */
	assert_int_equal(r->pods[1].n_feasible, 1);
	assert_string_not_equal(node_of(r, 0), node_of(r, 1));
	assert_int_equal(r->pods[2].verdict, PLAN_PENDING);
	assert_string_equal(r->pods[2].reason,
			    "0/2 nodes are available: 1 Insufficient nvidia.com/gpu, 1 cannot "
			    "allocate all claims. preemption: 0/2 nodes are available: 1 No "
			    "preemption victims found for incoming pod, 1 Preemption is not "
			    "helpful for scheduling.");
	plan_result_free(r);
	json_decref(classes);
	json_decref(slices);
}

/* A pod whose one container uses the claim made from template `tmpl`. */
static json_t *claim_pod(const char *name, const char *tmpl)
{
	char spec[256];
	snprintf(spec, sizeof(spec),
		 "\"resourceClaims\":[{\"name\":\"gpu\",\"resourceClaimTemplateName\":\"%s\"}]",
		 tmpl);
	return pod(name, "{\"claims\":[{\"name\":\"gpu\"}]}", spec);
}

/* The DeviceClass gpu.nvidia.com and node dra's one GPU of 100 shares (one slice). */
static json_t *shares_class(void)
{
	return loads("[{\"kind\":\"DeviceClass\",\"metadata\":{\"name\":"
		     "\"gpu.nvidia.com\"}}]");
}

static json_t *shares_slices(void)
{
	return loads("[{\"kind\":\"ResourceSlice\",\"spec\":{\"driver\":\"gpu.nvidia.com\","
		     "\"nodeName\":\"dra\",\"pool\":{\"name\":\"dra\"},\"devices\":[{\"name\":"
		     "\"gpu-0\",\"allowMultipleAllocations\":true,\"attributes\":{\"type\":{"
		     "\"string\":\"gpu\"}},\"capacity\":{\"shares\":{\"value\":\"100\","
		     "\"requestPolicy\":{\"default\":\"1\",\"validRange\":{\"min\":\"1\","
		     "\"max\":\"100\",\"step\":\"1\"}}}}}]}}]");
}

static json_t *shares_template(const char *name, const char *shares)
{
	char buf[512];
	snprintf(buf, sizeof(buf),
		 "{\"kind\":\"ResourceClaimTemplate\",\"metadata\":{\"namespace\":\"t\","
		 "\"name\":\"%s\"},\"spec\":{\"spec\":{\"devices\":{\"requests\":[{\"name\":"
		 "\"gpu\",\"exactly\":{\"deviceClassName\":\"gpu.nvidia.com\",\"capacity\":{"
		 "\"requests\":{\"shares\":\"%s\"}}}}]}}}}",
		 name, shares);
	return loads(buf);
}

/*
 * A pod's own claims (DynamicResources): one GPU with allowMultipleAllocations
 * and 100 shares (the DRA driver v0.5.0's ConsumableShares). Claims of 60
 * and 30 shares share it; Reserve keeps what each consumed, so one of 20
 * finds 10 left and stays Pending. A claim named by a pod that is not
 * among the claims stops it at PreEnqueue.
 */
static void test_dra_pod_claims_reserve_shares(void **state)
{
	(void)state;
	json_t *classes = shares_class(), *slices = shares_slices();
	json_t *templates = json_pack("[o,o,o]", shares_template("s60", "60"),
				      shares_template("s30", "30"), shares_template("s20", "20"));
	const char *missing = "\"resourceClaims\":[{\"name\":\"gpu\",\"resourceClaimName\":"
			      "\"nope\"}]";
	struct plan_result *r =
		run_in((struct plan_input){.kube = release("v1.37.2"),
					   .device_classes = classes,
					   .slices = slices,
					   .claim_templates = templates},
		       json_pack("[o]", node("dra", "8", "32Gi", "0", NULL, NULL)),
		       json_pack("[o,o,o,o]", claim_pod("p60", "s60"), claim_pod("p30", "s30"),
				 claim_pod("p20", "s20"), pod("p-none", "{}", missing)));

	assert_string_equal(node_of(r, 0), "dra");
	assert_string_equal(node_of(r, 1), "dra");
	const json_t *dev =
		json_array_get(json_object_get(json_array_get(r->pods[1].claims, 0), "devices"), 0);
	assert_string_equal(json_string_value(json_object_get(dev, "device")), "gpu-0");
	assert_string_equal(json_string_value(json_object_get(
				    json_object_get(dev, "consumedCapacity"), "shares")),
			    "30");
	/* 60 + 30 taken at Reserve: 10 left for 20 */
	assert_int_equal(r->pods[2].verdict, PLAN_PENDING);
	assert_string_equal(r->pods[2].reason,
			    "0/1 nodes are available: 1 cannot allocate all claims. preemption: "
			    "0/1 nodes are available: 1 Preemption is not helpful for scheduling.");
	assert_int_equal(r->pods[3].verdict, PLAN_PENDING);
	assert_string_equal(r->pods[3].reason, "could not find ResourceClaim \"t/nope\"");
	plan_result_free(r);
	json_decref(classes);
	json_decref(slices);
	json_decref(templates);
}

/*
 * A pod with its own claims holds what Reserve allocated and reserved for
 * it; plan_remove cannot give claims back, so it refuses the pod, bound or
 * pending, and changes nothing. A pending pod with claims is retried as any
 * other (PreEnqueue and PreFilter again), its outcome's claims made anew.
 */
static void test_remove_refuses_pod_claims(void **state)
{
	(void)state;
	json_t *classes = shares_class(), *slices = shares_slices();
	json_t *templates =
		json_pack("[o,o]", shares_template("s60", "60"), shares_template("s50", "50"));
	json_t *nodes = json_pack("{s:s,s:[o]}", "kind", "NodeList", "items",
				  node("dra", "8", "32Gi", "0", NULL, NULL));
	json_t *pods = json_pack("[o,o]", claim_pod("p60", "s60"), claim_pod("p50", "s50"));
	struct plan_input in = {.nodes = nodes,
				.kube = release("v1.37.2"),
				.device_classes = classes,
				.slices = slices,
				.claim_templates = templates};
	struct plan *p = plan_with(&in, pods, 2);
	struct gs_error err;
	assert_int_equal(plan_outcome(p, 0)->verdict, PLAN_BOUND);
	assert_int_equal(plan_outcome(p, 1)->verdict, PLAN_PENDING);
	assert_int_equal(plan_remove(p, 0, json_array_get(pods, 0), &err), -1);
	assert_string_equal(err.msg, "pod t/p60 holds spec.resourceClaims; giving claims back "
				     "is not modelled");
	assert_false(plan_outcome(p, 0)->gone);
	assert_int_equal(plan_remove(p, 1, json_array_get(pods, 1), &err), -1);
	assert_false(plan_outcome(p, 1)->gone);
	/* 60 of 100 shares still held: the retry stays pending, its claims listed again. */
	assert_int_equal(plan_retry(p, 1, json_array_get(pods, 1), &err), 0);
	assert_int_equal(plan_outcome(p, 1)->verdict, PLAN_PENDING);
	assert_int_equal(json_array_size(plan_outcome(p, 1)->claims), 1);

	struct plan_result *r = plan_finish(p);
	assert_string_equal(node_of(r, 0), "dra");
	plan_result_free(r);
	json_decref(nodes);
	json_decref(pods);
	json_decref(classes);
	json_decref(slices);
	json_decref(templates);
}

/*
 * numFeasibleNodesToFind (k8s.io/kubernetes v1.37.2 schedule_one.go): every
 * node below 100 or at 100%; adaptive 50 - n/125 percent, at least 5; never
 * fewer than 100.
 */
static void test_num_feasible_nodes_to_find(void **state)
{
	(void)state;
	assert_int_equal(plan_select_to_find(50, 0), 50);
	assert_int_equal(plan_select_to_find(50, 10), 50);
	assert_int_equal(plan_select_to_find(99, 0), 99);
	assert_int_equal(plan_select_to_find(100, 0), 100);	/* 50% is 50: at least 100 */
	assert_int_equal(plan_select_to_find(1000, 0), 420);	/* 50 - 8 = 42% */
	assert_int_equal(plan_select_to_find(1213, 0), 497);	/* 41% */
	assert_int_equal(plan_select_to_find(5000, 0), 500);	/* 50 - 40 = 10% */
	assert_int_equal(plan_select_to_find(10000, 0), 500);	/* floored at 5% */
	assert_int_equal(plan_select_to_find(1000, 100), 1000); /* percentage 100: all */
	assert_int_equal(plan_select_to_find(1000, 30), 300);
	assert_int_equal(plan_select_to_find(1000, 5), 100); /* 50: at least 100 */
	assert_int_equal(plan_select_to_find(5000, 1), 100);
}

/* n nodes of 8 cpu and one GPU; every `taint_every`-th (from n000) tainted NoSchedule. */
static json_t *fleet(int n, int taint_every)
{
	json_t *nodes = json_array();
	char name[16];

	for (int i = 0; i < n; i++) {
		snprintf(name, sizeof(name), "n%03d", i);
		json_array_append_new(
			nodes,
			node(name, "8", "32Gi", "1",
			     taint_every && i % taint_every == 0
				     ? "\"taints\":[{\"key\":\"k\",\"effect\":\"NoSchedule\"}]"
				     : NULL,
			     NULL));
	}
	return nodes;
}

/*
 * From 100 nodes on the filter pass stops at numFeasibleNodesToFind and the
 * next pod's pass starts where this one stopped: 200 nodes, every 4th
 * tainted, want 100 feasible. Pod 1 reads n000..n133 (the 100th feasible
 * is n133), stops at n134 (the 101st, not kept): 134 processed. Pod 2
 * starts at n134.
 */
static void test_start_index_rotates(void **state)
{
	(void)state;
	const char *gpu = "{\"limits\":{\"nvidia.com/gpu\":1}}";
	struct plan_result *r =
		run(fleet(200, 4), json_pack("[o,o]", pod("p1", gpu, NULL), pod("p2", gpu, NULL)));

	assert_int_equal(r->pods[0].n_feasible, 100);
	assert_true(r->pods[0].sampled);
	assert_int_equal(r->pods[0].start, 0);
	assert_int_equal(r->pods[0].evaluated, 134);
	assert_string_equal(r->nodes[r->pods[0].feasible[0]], "n001");
	assert_int_equal(r->pods[1].start, 134);
	assert_string_equal(r->nodes[r->pods[1].feasible[0]], "n134");
	/* p2 wraps: n134..n199 hold 49 feasible, the 51 more come from n001 on */
	assert_int_equal(r->pods[1].n_feasible, 100);
	json_t *j = plan_pod_json(r, 1);
	assert_int_equal(json_integer_value(kobj_get(j, "sample.start")), 134);
	json_decref(j);
	plan_result_free(r);

	/* Under 100 nodes every node is read and the start stays put. */
	r = run(fleet(99, 4), json_pack("[o,o]", pod("p1", gpu, NULL), pod("p2", gpu, NULL)));
	assert_false(r->pods[0].sampled);
	assert_int_equal(r->pods[0].n_feasible, 74);
	assert_int_equal(r->pods[1].start, 0);
	j = plan_pod_json(r, 1);
	assert_null(json_object_get(j, "sample"));
	json_decref(j);
	plan_result_free(r);

	/* percentageOfNodesToScore 100: the whole fleet, as before. */
	r = run_in((struct plan_input){.sched = {.percentage = 100}}, fleet(200, 4),
		   json_pack("[o]", pod("p1", gpu, NULL)));
	assert_int_equal(r->pods[0].n_feasible, 150);
	assert_false(r->pods[0].sampled);
	plan_result_free(r);
}

/*
 * The snapshot's order is nodeTree.list: one node of each zone in turn,
 * zones in the order first seen (node_tree.go).
 */
static void test_zone_round_robin_order(void **state)
{
	(void)state;
	const char *a = "{\"topology.kubernetes.io/zone\":\"a\"}";
	const char *b = "{\"topology.kubernetes.io/zone\":\"b\"}";
	struct plan_result *r =
		run(json_pack("[o,o,o,o]", node("a1", "8", "32Gi", "1", NULL, a),
			      node("a2", "8", "32Gi", "1", NULL, a),
			      node("a3", "8", "32Gi", "1", NULL, a),
			      node("b1", "8", "32Gi", "1", NULL, b)),
		    json_pack("[o]", pod("p", "{\"limits\":{\"nvidia.com/gpu\":1}}", NULL)));

	assert_int_equal(r->pods[0].n_feasible, 4);
	assert_string_equal(r->nodes[r->pods[0].feasible[0]], "a1");
	assert_string_equal(r->nodes[r->pods[0].feasible[1]], "b1");
	assert_string_equal(r->nodes[r->pods[0].feasible[2]], "a2");
	assert_string_equal(r->nodes[r->pods[0].feasible[3]], "a3");
	plan_result_free(r);
}

/*
 * selectHost's reservoir over the tied nodes in the pass's order: the k-th
 * replaces the pick when a draw below k is 0, one draw per tie after the
 * first, the stream going on from pod to pod. Two pods on four equal
 * nodes: p1 draws for k = 2, 3, 4; p2 (three ties left) for k = 2, 3.
 */
static void test_ties_drawn_by_seed(void **state)
{
	(void)state;
	const char *gpu = "{\"limits\":{\"nvidia.com/gpu\":1}}";
	bool seen[4] = {false};

	for (uint64_t seed = 0; seed < 32; seed++) {
		struct splitmix rng = {seed};
		size_t pick1 = 0, pick2 = 0;
		for (size_t k = 2; k <= 4; k++)
			if (splitmix_below(&rng, k) == 0)
				pick1 = k - 1;
		for (size_t k = 2; k <= 3; k++)
			if (splitmix_below(&rng, k) == 0)
				pick2 = k - 1;
		/* p2's ties: the three nodes other than p1's, in order */
		size_t rest[3], n = 0;
		for (size_t i = 0; i < 4; i++)
			if (i != pick1)
				rest[n++] = i;
		char want1[32], want2[32];
		snprintf(want1, sizeof(want1), "n%03zu", pick1);
		snprintf(want2, sizeof(want2), "n%03zu", rest[pick2]);

		for (int again = 0; again < 2; again++) {
			struct plan_result *r = run_in(
				(struct plan_input){.sched = {.seed = seed}}, fleet(4, 0),
				json_pack("[o,o]", pod("p1", gpu, NULL), pod("p2", gpu, NULL)));
			assert_int_equal(r->pods[0].n_tied, 4);
			assert_string_equal(node_of(r, 0), want1);
			assert_string_equal(r->nodes[r->pods[0].tied[0]], want1);
			assert_int_equal(r->pods[1].n_tied, 3);
			assert_string_equal(node_of(r, 1), want2);
			plan_result_free(r);
		}
		seen[pick1] = true;
	}
	/* the draws reach every tied node, not only the first */
	for (size_t i = 0; i < 4; i++)
		assert_true(seen[i]);

	/* ties_first: the first in the pass's order, no draw */
	struct plan_result *r =
		run_in((struct plan_input){.sched = {.seed = 3, .ties_first = true}}, fleet(4, 0),
		       json_pack("[o,o]", pod("p1", gpu, NULL), pod("p2", gpu, NULL)));
	assert_string_equal(node_of(r, 0), "n000");
	assert_string_equal(node_of(r, 1), "n001");
	plan_result_free(r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_taints_and_unschedulable),
		cmocka_unit_test(test_affinity_operators),
		cmocka_unit_test(test_too_many_pods_and_pending_holds_nothing),
		cmocka_unit_test(test_least_allocated_and_balanced),
		cmocka_unit_test(test_prefer_no_schedule_and_preferred_affinity),
		cmocka_unit_test(test_what_if_diff),
		cmocka_unit_test(test_verdict_names),
		cmocka_unit_test(test_lists_bounded),
		cmocka_unit_test(test_one_at_a_time),
		cmocka_unit_test(test_pinned_devices_by_container),
		cmocka_unit_test(test_versions_and_dra_extended_resource),
		cmocka_unit_test(test_balanced_allocation_by_release),
		cmocka_unit_test(test_dra_claim_per_lacking_set),
		cmocka_unit_test(test_dra_pod_claims_reserve_shares),
		cmocka_unit_test(test_remove_frees_the_node),
		cmocka_unit_test(test_remove_gives_quota_back),
		cmocka_unit_test(test_remove_refuses_pod_claims),
		cmocka_unit_test(test_num_feasible_nodes_to_find),
		cmocka_unit_test(test_start_index_rotates),
		cmocka_unit_test(test_zone_round_robin_order),
		cmocka_unit_test(test_ties_drawn_by_seed),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
