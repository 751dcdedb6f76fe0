#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/explain.h"
#include "engine/explain_node.h"
#include "json_fixture.h"

/*
 * Objects recorded from the e2e apiserver (v1.34, kwok nodes as the lab
 * sets them up): tests/unit/data/explain. Expected scheduler and quota texts
 * are the ones that apiserver and scheduler produced (quota-refusal.txt,
 * the PodScheduled conditions), in the formats of k8s.io/kubernetes v1.34.4
 * pkg/scheduler/framework/types.go; hint texts quote k8s-device-plugin v0.20.0 internal/rm/rm.go
 * ValidateRequest; k8s.io/kubernetes v1.34.4 pkg/apis/core/validation/validation.go.
 */
#define DATA "tests/unit/data/explain/"

static json_t *load(const char *name)
{
	json_error_t je;
	json_t *j = json_load_file(name, 0, &je);
	if (!j)
		fail_msg("%s: %s", name, je.text);
	return j;
}

static const struct catalog *cat(void)
{
	const struct catalog *c;
	struct gs_error err;
	if (catalog_builtin(&c, &err))
		fail_msg("catalog: %s", err.msg);
	return c;
}

static struct dpconfig_set *configs(void)
{
	json_t *cm = load(DATA "configmap.json");
	struct dpconfig_set *set;
	struct gs_error err;
	if (dpconfig_set_from_configmap(NULL, cm, &set, &err))
		fail_msg("configmap: %s", err.msg);
	json_decref(cm);
	return set;
}

static struct explain_pod *run(json_t *pod, json_t *nodes, json_t *pods,
			       const struct dpconfig_set *set)
{
	struct explain_pod_input in = {
		.pod = pod, .nodes = nodes, .pods = pods, .configs = set, .cat = cat()};
	struct explain_pod *e;
	struct gs_error err;
	if (explain_pod(&in, &e, &err))
		fail_msg("explain_pod: %s", err.msg);
	return e;
}

static const struct explain_node *node_of(const struct explain_pod *e, const char *name)
{
	for (size_t i = 0; i < e->n_nodes; i++)
		if (!strcmp(e->nodes[i].name, name))
			return &e->nodes[i];
	fail_msg("no node %s", name);
	return NULL;
}

static bool has(const struct gs_warnings *w, const char *needle)
{
	for (size_t i = 0; i < w->n; i++)
		if (strstr(w->items[i], needle))
			return true;
	return false;
}

static const struct explain_resource *res_of(const struct explain_node *n, const char *name)
{
	for (size_t i = 0; i < n->n_res; i++)
		if (!strcmp(n->res[i].name, name))
			return &n->res[i];
	fail_msg("node %s: no resource %s", n->name, name);
	return NULL;
}

/* notebook: bound to lab-node-1 (8 time-sliced GPUs, team-a-0/1 use 2). */
static void test_scheduled(void **state)
{
	(void)state;
	json_t *pod = load(DATA "pod-scheduled.json"), *nodes = load(DATA "nodes.json");
	json_t *pods = load(DATA "pods.json");
	struct explain_pod *e = run(pod, nodes, pods, NULL);

	assert_true(explain_pod_is_placed(e));
	assert_string_equal(e->node, "lab-node-1");
	assert_int_equal(e->scheduled, 1);
	const struct explain_node *n1 = node_of(e, "lab-node-1");
	assert_true(n1->fits);
	assert_true(n1->bound);
	const struct explain_resource *r = res_of(n1, "nvidia.com/gpu");
	assert_string_equal(r->allocatable, "8");
	assert_string_equal(r->used, "2"); /* the pod itself is not counted */
	assert_string_equal(r->free, "6");
	/* node-0: config default, its 2 GPUs held by plain-gpu and batch-train. */
	const struct explain_node *n0 = node_of(e, "lab-node-0");
	assert_false(n0->fits);
	assert_true(has(&n0->reasons, "Insufficient nvidia.com/gpu"));
	assert_true(has(&n0->reasons, "node(s) didn't match Pod's node affinity/selector"));
	assert_string_equal(res_of(n0, "nvidia.com/gpu")->free, "0");
	/* node-2: MIG mixed, profiles only (k8s-device-plugin v0.20.0 internal/rm/device_map.go).
	 */
	const struct explain_node *n2 = node_of(e, "lab-node-2");
	assert_string_equal(res_of(n2, "nvidia.com/gpu")->allocatable, "0");
	assert_true(has(&n2->hints, "advertises profiles, not whole GPUs"));
	explain_pod_free(e);
	json_decref(pod);
	json_decref(nodes);
	json_decref(pods);
}

static void test_pending_insufficient(void **state)
{
	(void)state;
	json_t *pod = load(DATA "pod-pending-insufficient.json"), *nodes = load(DATA "nodes.json");
	json_t *pods = load(DATA "pods.json");
	struct explain_pod *e = run(pod, nodes, pods, NULL);

	assert_false(explain_pod_is_placed(e));
	assert_null(e->node);
	assert_int_equal(e->scheduled, 0);
	assert_string_equal(e->sched_reason, "Unschedulable");
	/* verbatim, as the scheduler wrote it */
	assert_string_equal(
		e->sched_message,
		"0/3 nodes are available: 3 Insufficient nvidia.com/gpu. no new claims to "
		"deallocate, preemption: 0/3 nodes are available: 3 Preemption is not "
		"helpful for scheduling.");
	for (size_t i = 0; i < e->n_nodes; i++) {
		assert_false(e->nodes[i].fits);
		assert_true(has(&e->nodes[i].reasons, "Insufficient nvidia.com/gpu"));
	}
	assert_string_equal(res_of(node_of(e, "lab-node-1"), "nvidia.com/gpu")->free, "5");
	explain_pod_free(e);
	json_decref(pod);
	json_decref(nodes);
	json_decref(pods);
}

/* The scheduler counted 1 Insufficient + 2 selector mismatches; so do we. */
static void test_gpu_on_mig(void **state)
{
	(void)state;
	json_t *pod = load(DATA "pod-gpu-on-mig.json"), *nodes = load(DATA "nodes.json");
	json_t *pods = load(DATA "pods.json");
	struct explain_pod *e = run(pod, nodes, pods, NULL);
	int insufficient_only = 0, selector = 0;

	for (size_t i = 0; i < e->n_nodes; i++) {
		const struct explain_node *n = &e->nodes[i];
		if (has(&n->reasons, "didn't match Pod's node affinity/selector"))
			selector++;
		else if (has(&n->reasons, "Insufficient nvidia.com/gpu"))
			insufficient_only++;
	}
	assert_int_equal(insufficient_only, 1);
	assert_int_equal(selector, 2);
	assert_true(has(&node_of(e, "lab-node-2")->hints,
			"this node advertises profiles, not whole GPUs (MIG mixed strategy): "
			"nvidia.com/mig-1g.10gb=7"));
	assert_true(strstr(e->sched_message, "1 Insufficient nvidia.com/gpu, 2 node(s) didn't "
					     "match Pod's node affinity/selector"));
	explain_pod_free(e);
	json_decref(pod);
	json_decref(nodes);
	json_decref(pods);
}

/* 2 x nvidia.com/gpu on the time-sliced node, config with failRequestsGreaterThanOne:
 * k8s-device-plugin v0.20.0 internal/rm/rm.go ValidateRequest. */
static void test_fail_requests_greater_than_one(void **state)
{
	(void)state;
	json_t *pod = load(DATA "pod-two.json"), *nodes = load(DATA "nodes.json");
	json_t *pods = load(DATA "pods.json");
	struct dpconfig_set *set = configs();
	struct explain_pod *e = run(pod, nodes, pods, set);

	const struct explain_node *n1 = node_of(e, "lab-node-1");
	assert_true(
		has(&n1->hints,
		    "UnexpectedAdmissionError: Allocate failed due to rpc error: code = Unknown "
		    "desc = invalid allocation request for \"nvidia.com/gpu\": invalid request: "
		    "maximum request size for shared resources is 1; found 2, which is "
		    "unexpected"));
	/* node-0 has config default (no sharing): no such trap there. */
	assert_int_equal(node_of(e, "lab-node-0")->hints.n, 0);
	explain_pod_free(e);

	/* Without the ConfigMap nothing is known about sharing: no hint. */
	e = run(pod, nodes, pods, NULL);
	assert_int_equal(node_of(e, "lab-node-1")->hints.n, 0);
	explain_pod_free(e);
	dpconfig_set_free(set);
	json_decref(pod);
	json_decref(nodes);
	json_decref(pods);
}

static json_t *synthetic_pod(const char *limits, const char *extra_spec)
{
	char buf[4096];
	snprintf(buf, sizeof(buf),
		 "{\"kind\":\"Pod\",\"metadata\":{\"name\":\"p\",\"namespace\":\"ns\"},"
		 "\"spec\":{%s%s\"containers\":[{\"name\":\"main\",\"resources\":{\"limits\":{%s}}}"
		 "]},"
		 "\"status\":{\"phase\":\"Pending\"}}",
		 extra_spec ? extra_spec : "", extra_spec ? "," : "", limits);
	return loads(buf);
}

static json_t *synthetic_nodes(void)
{
	return loads(
		"{\"kind\":\"NodeList\",\"items\":["
		"{\"metadata\":{\"name\":\"renamed\",\"labels\":{\"nvidia.com/"
		"gpu.product\":\"Tesla-T4\","
		"\"nvidia.com/device-plugin.config\":\"mps\"}},"
		" \"status\":{\"allocatable\":{\"pods\":\"110\",\"nvidia.com/gpu\":\"0\","
		"\"nvidia.com/gpu.shared\":\"8\"}}},"
		"{\"metadata\":{\"name\":\"shared\",\"labels\":{\"nvidia.com/gpu.product\":"
		"\"NVIDIA-A100-SXM4-80GB-SHARED\"}},"
		" \"spec\":{\"taints\":[{\"key\":\"gpu\",\"value\":\"yes\",\"effect\":"
		"\"NoSchedule\"},"
		"{\"key\":\"soft\",\"effect\":\"PreferNoSchedule\"}]},"
		" \"status\":{\"allocatable\":{\"pods\":\"110\",\"nvidia.com/gpu\":\"8\"}}},"
		"{\"metadata\":{\"name\":\"cordoned\",\"labels\":{\"zone\":\"b\"}},"
		" \"spec\":{\"unschedulable\":true},"
		" \"status\":{\"allocatable\":{\"pods\":\"110\",\"nvidia.com/gpu\":\"2\"}}}]}");
}

static void test_renamed_taints_unschedulable(void **state)
{
	(void)state;
	json_t *pod = synthetic_pod("\"nvidia.com/gpu\":\"1\"", NULL);
	json_t *nodes = synthetic_nodes();
	struct explain_pod *e = run(pod, nodes, NULL, NULL);

	const struct explain_node *r = node_of(e, "renamed");
	assert_true(has(&r->hints, "advertises nvidia.com/gpu.shared, not nvidia.com/gpu"));
	assert_true(has(&r->reasons, "Insufficient nvidia.com/gpu"));
	const struct explain_node *s = node_of(e, "shared");
	assert_int_equal(s->reasons.n, 1); /* PreferNoSchedule does not filter */
	assert_string_equal(s->reasons.items[0],
			    "node(s) had untolerated taint(s) (gpu=yes:NoSchedule)");
	assert_string_equal(node_of(e, "cordoned")->reasons.items[0], "node(s) were unschedulable");
	explain_pod_free(e);
	json_decref(pod);

	/* Tolerations: Equal with the value, and an empty-key Exists for everything. */
	pod = synthetic_pod("\"nvidia.com/gpu\":\"1\"",
			    "\"tolerations\":[{\"key\":\"gpu\",\"value\":\"yes\"}]");
	e = run(pod, nodes, NULL, NULL);
	assert_true(node_of(e, "shared")->fits);
	assert_false(node_of(e, "cordoned")->fits);
	explain_pod_free(e);
	json_decref(pod);
	pod = synthetic_pod("\"nvidia.com/gpu\":\"1\"",
			    "\"tolerations\":[{\"operator\":\"Exists\"}]");
	e = run(pod, nodes, NULL, NULL);
	assert_true(node_of(e, "shared")->fits);
	assert_true(node_of(e, "cordoned")->fits);
	explain_pod_free(e);
	json_decref(pod);
	json_decref(nodes);
}

static void test_product_selector_and_affinity(void **state)
{
	(void)state;
	json_t *nodes = synthetic_nodes();
	json_t *pod = synthetic_pod(
		"\"nvidia.com/gpu\":\"1\"",
		"\"nodeSelector\":{\"nvidia.com/gpu.product\":\"NVIDIA-A100-SXM4-80GB\"}");
	struct explain_pod *e = run(pod, nodes, NULL, NULL);

	assert_true(has(&e->hints, "nodeSelector nvidia.com/gpu.product=NVIDIA-A100-SXM4-80GB "
				   "matches no node, but shared is labelled "
				   "nvidia.com/gpu.product=NVIDIA-A100-SXM4-80GB-SHARED"));
	explain_pod_free(e);
	json_decref(pod);

	/* Exact match: no hint. */
	pod = synthetic_pod("\"nvidia.com/gpu\":\"1\"",
			    "\"nodeSelector\":{\"nvidia.com/gpu.product\":\"Tesla-T4\"}");
	e = run(pod, nodes, NULL, NULL);
	assert_int_equal(e->hints.n, 0);
	explain_pod_free(e);
	json_decref(pod);

	pod = synthetic_pod(
		"\"nvidia.com/gpu\":\"1\"",
		"\"affinity\":{\"nodeAffinity\":{"
		"\"requiredDuringSchedulingIgnoredDuringExecution\":"
		"{\"nodeSelectorTerms\":[{\"matchExpressions\":[{\"key\":\"zone\",\"operator\":"
		"\"In\","
		"\"values\":[\"a\",\"b\"]}]},{\"matchFields\":[{\"key\":\"metadata.name\","
		"\"operator\":\"In\",\"values\":[\"renamed\"]}]}]}}}");
	e = run(pod, nodes, NULL, NULL);
	assert_false(has(&node_of(e, "cordoned")->reasons, "affinity"));
	assert_false(has(&node_of(e, "renamed")->reasons, "affinity"));
	assert_true(has(&node_of(e, "shared")->reasons,
			"node(s) didn't match Pod's node affinity/selector"));
	explain_pod_free(e);
	json_decref(pod);
	json_decref(nodes);
}

/* 1g.5gb is an A100-40GB profile; the lab's A100-80GB has 1g.10gb (mig-parted v0.15.0
 * deployments/systemd/config-default.yaml). */
static void test_mig_profile_no_node_offers(void **state)
{
	(void)state;
	json_t *nodes = load(DATA "nodes.json");
	json_t *pod = synthetic_pod("\"nvidia.com/mig-1g.5gb\":\"1\"", NULL);
	struct explain_pod *e = run(pod, nodes, NULL, NULL);

	assert_true(
		has(&e->hints, "nvidia.com/mig-1g.5gb: no node's GPU offers MIG profile 1g.5gb"));
	assert_true(has(&e->hints, "A100-SXM4-40GB"));
	explain_pod_free(e);
	json_decref(pod);

	pod = synthetic_pod("\"nvidia.com/mig-1g.10gb\":\"1\"", NULL);
	e = run(pod, nodes, NULL, NULL);
	assert_int_equal(e->hints.n, 0);
	explain_pod_free(e);
	json_decref(pod);
	json_decref(nodes);
}

/*
 * A node of two models (gpushare.io/gpu-product "A,B"): GPU feature
 * discovery labels it with one product only (here the T4, whose full-GPU
 * labeller runs last), yet its A100 offers 1g.10gb: no pod-wide "no node's
 * GPU offers" hint.
 */
static void test_mig_profile_two_model_node(void **state)
{
	(void)state;
	json_t *nodes = loads(
		"{\"kind\":\"NodeList\",\"items\":[{\"kind\":\"Node\",\"metadata\":{\"name\":"
		"\"a100-t4\",\"labels\":{\"nvidia.com/gpu.product\":\"Tesla-T4-SHARED\"},"
		"\"annotations\":{\"gpushare.io/gpu-product\":\"NVIDIA A100-SXM4-80GB, Tesla T4\","
		"\"gpushare.io/gpu-count\":\"1,1\"}},\"status\":{\"allocatable\":{\"pods\":\"110\","
		"\"nvidia.com/gpu\":\"8\"}}}]}");
	json_t *pod = synthetic_pod("\"nvidia.com/mig-1g.10gb\":\"1\"", NULL);
	struct explain_pod *e = run(pod, nodes, NULL, NULL);

	assert_int_equal(e->hints.n, 0);
	explain_pod_free(e);
	json_decref(pod);

	/* A profile neither model has still gets the hint, naming both models. */
	pod = synthetic_pod("\"nvidia.com/mig-1g.5gb\":\"1\"", NULL);
	e = run(pod, nodes, NULL, NULL);
	assert_true(has(&e->hints, "no node's GPU offers MIG profile 1g.5gb (nodes have: Tesla T4, "
				   "NVIDIA A100-SXM4-80GB)"));
	explain_pod_free(e);
	json_decref(pod);
	json_decref(nodes);
}

/* explain_node_summary: each model's cards and slots apart. */
static void test_node_summary(void **state)
{
	(void)state;
	static const struct {
		const char *products, *counts, *config, *mig, *cards, *slots;
	} cases[] = {
		{"Tesla T4,NVIDIA A100-SXM4-80GB", "1,2", "shared", NULL,
		 "1 x Tesla T4 (15360 MiB each), 2 x NVIDIA A100-SXM4-80GB (81920 MiB each)",
		 "; nvidia.com/gpu 12 slots: 4 on 1 Tesla T4 (4 per GPU sharing its 15360 MiB), 8 "
		 "on 2 NVIDIA A100-SXM4-80GB (4 per GPU sharing its 81920 MiB)"},
		{"Tesla T4,NVIDIA A100-SXM4-80GB", "1,2", "default", NULL,
		 "1 x Tesla T4 (15360 MiB each), 2 x NVIDIA A100-SXM4-80GB (81920 MiB each)",
		 "; nvidia.com/gpu 3 slots, a whole GPU each"},
		{"Tesla T4", "2", "shared", NULL, "2 x Tesla T4 (15360 MiB each)",
		 "; nvidia.com/gpu 8 slots on 2 GPUs, 4 per GPU sharing its 15360 MiB"},
		{"NVIDIA A100-SXM4-80GB", "1", NULL, "all-1g.10gb",
		 "1 x NVIDIA A100-SXM4-80GB (81920 MiB each)",
		 "; nvidia.com/mig-1g.10gb 7 slots, MIG instances, each with its own memory"},
	};
	const struct catalog *c = cat();
	struct dpconfig_set *set = configs();

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		json_t *node =
			json_pack("{s:s,s:{s:s,s:{},s:{s:s,s:s}}}", "kind", "Node", "metadata",
				  "name", "n", "labels", "annotations", "gpushare.io/gpu-product",
				  cases[i].products, "gpushare.io/gpu-count", cases[i].counts);
		json_t *labels = json_object_get(json_object_get(node, "metadata"), "labels");
		if (cases[i].config)
			json_object_set_new(labels, "nvidia.com/device-plugin.config",
					    json_string(cases[i].config));
		if (cases[i].mig) {
			json_object_set_new(labels, "nvidia.com/mig.config",
					    json_string(cases[i].mig));
			json_object_set_new(labels, "nvidia.com/mig.strategy",
					    json_string("mixed"));
		}
		char *cards, *slots;
		struct gs_error err;
		if (explain_node_summary(c, node, set, &cards, &slots, &err))
			fail_msg("case %zu: %s", i, err.msg);
		assert_string_equal(cards, cases[i].cards);
		assert_string_equal(slots, cases[i].slots);
		free(cards);
		free(slots);
		json_decref(node);
	}
	dpconfig_set_free(set);
}

/*
 * What a node advertises is listed whole (it was cut at 1024 bytes), and a
 * count the apiserver sent as a JSON number reads as that number.
 */
static void test_advertised_whole(void **state)
{
	json_t *alloc = json_object(), *node, *nodes;

	(void)state;
	for (int i = 0; i < 60; i++) {
		char k[64];
		snprintf(k, sizeof(k), "nvidia.com/mig-resource-with-a-long-name-%02d", i);
		json_object_set_new(alloc, k, json_string("7"));
	}
	json_object_set_new(alloc, "nvidia.com/gpu", json_integer(8));
	node = loads("{\"metadata\":{\"name\":\"wide\"},\"status\":{}}");
	json_object_set_new(json_object_get(node, "status"), "allocatable", alloc);
	nodes = json_pack("{s:s,s:[o]}", "kind", "NodeList", "items", node);
	json_t *pod = synthetic_pod("\"nvidia.com/gpu\":\"1\"", NULL);
	struct explain_pod *e = run(pod, nodes, NULL, NULL);

	const struct explain_node *n = node_of(e, "wide");
	assert_true(strlen(n->advertised) > 2048);
	assert_non_null(strstr(n->advertised, "nvidia.com/mig-resource-with-a-long-name-59=7"));
	assert_non_null(strstr(n->advertised, "nvidia.com/gpu=8"));
	explain_pod_free(e);
	json_decref(pod);
	json_decref(nodes);
}

/* Init containers: the max of an init container and the sum of the app containers. */
static void test_effective_request(void **state)
{
	(void)state;
	json_t *nodes = synthetic_nodes();
	json_t *pod = loads(
		"{\"kind\":\"Pod\",\"metadata\":{\"name\":\"p\",\"namespace\":\"ns\"},\"spec\":{"
		"\"initContainers\":[{\"name\":\"i\",\"resources\":{\"requests\":{\"cpu\":\"3\"}}}]"
		","
		"\"containers\":[{\"name\":\"a\",\"resources\":{\"requests\":{\"cpu\":\"500m\"},"
		"\"limits\":{\"nvidia.com/gpu\":\"1\"}}},"
		"{\"name\":\"b\",\"resources\":{\"requests\":{\"cpu\":\"1\"},"
		"\"limits\":{\"nvidia.com/gpu\":\"1\"}}}]}}");
	struct explain_pod *e = run(pod, nodes, NULL, NULL);

	assert_string_equal(json_string_value(json_object_get(e->requests, "cpu")), "3");
	assert_string_equal(json_string_value(json_object_get(e->requests, "nvidia.com/gpu")), "2");
	assert_true(has(&node_of(e, "renamed")->reasons, "Insufficient cpu"));
	explain_pod_free(e);
	json_decref(pod);
	json_decref(nodes);
}

static void test_bad_input(void **state)
{
	(void)state;
	json_t *nodes = synthetic_nodes(), *notpod = loads("{\"kind\":\"Node\"}");
	json_t *badq = synthetic_pod("\"nvidia.com/gpu\":\"x1\"", NULL);
	struct explain_pod_input in = {
		.pod = notpod, .nodes = nodes, .pods = NULL, .configs = NULL, .cat = NULL};
	struct explain_pod *e;
	struct gs_error err;

	assert_int_equal(explain_pod(&in, &e, &err), -1);
	assert_null(e);
	in.pod = badq;
	assert_int_equal(explain_pod(&in, &e, &err), -1);
	assert_non_null(strstr(err.msg, "quantities must match"));
	json_decref(nodes);
	json_decref(notpod);
	json_decref(badq);
}

/*
 * One index of the bound pods serves several pods: each is judged as with
 * its own (the explained pod, itself in the list, is not counted on its
 * node), and a pod the same as one in the list by name is left out too.
 */
static void test_usage_shared(void **state)
{
	(void)state;
	json_t *nodes = load(DATA "nodes.json"), *pods = load(DATA "pods.json");
	json_t *notebook = load(DATA "pod-scheduled.json"), *two = load(DATA "pod-two.json");
	struct explain_usage *u;
	struct gs_error err;

	if (explain_usage_new(nodes, pods, &u, &err))
		fail_msg("explain_usage_new: %s", err.msg);
	for (int k = 0; k < 2; k++) {
		struct explain_pod_input in = {.pod = k ? two : notebook,
					       .nodes = nodes,
					       .pods = pods,
					       .cat = cat(),
					       .usage = u};
		struct explain_pod *shared, *alone;
		if (explain_pod(&in, &shared, &err))
			fail_msg("explain_pod: %s", err.msg);
		alone = run(k ? two : notebook, nodes, pods, NULL);
		assert_int_equal(shared->n_nodes, alone->n_nodes);
		for (size_t i = 0; i < shared->n_nodes; i++) {
			assert_int_equal(shared->nodes[i].fits, alone->nodes[i].fits);
			for (size_t r = 0; r < shared->nodes[i].n_res; r++)
				assert_string_equal(shared->nodes[i].res[r].used,
						    alone->nodes[i].res[r].used);
		}
		if (!k)
			/* notebook is one of lab-node-1's three: the others hold 2. */
			assert_string_equal(
				res_of(node_of(shared, "lab-node-1"), "nvidia.com/gpu")->used, "2");
		explain_pod_free(shared);
		explain_pod_free(alone);
	}
	/* Without a uid, the same namespace and name is the same pod. */
	json_object_del(json_object_get(notebook, "metadata"), "uid");
	struct explain_pod_input in = {
		.pod = notebook, .nodes = nodes, .pods = pods, .cat = cat(), .usage = u};
	struct explain_pod *e;
	if (explain_pod(&in, &e, &err))
		fail_msg("explain_pod: %s", err.msg);
	assert_string_equal(res_of(node_of(e, "lab-node-1"), "nvidia.com/gpu")->used, "2");
	explain_pod_free(e);
	explain_usage_free(u);
	json_decref(nodes);
	json_decref(pods);
	json_decref(notebook);
	json_decref(two);
}

/* A fleet of 10,000 nodes is judged (a cluster may have 20,000). */
static void test_large_fleet(void **state)
{
	(void)state;
	json_t *items = json_array(),
	       *nodes = json_pack("{s:s,s:o}", "kind", "NodeList", "items", items);
	json_t *pod = synthetic_pod("\"nvidia.com/gpu\":\"1\"", NULL);

	for (int i = 0; i < 10000; i++) {
		char name[32];
		snprintf(name, sizeof(name), "n-%05d", i);
		json_array_append_new(items,
				      json_pack("{s:{s:s},s:{s:{s:s,s:s}}}", "metadata", "name",
						name, "status", "allocatable", "pods", "110",
						"nvidia.com/gpu", i % 2 ? "1" : "0"));
	}
	struct explain_pod *e = run(pod, nodes, NULL, NULL);
	size_t fits = 0;
	for (size_t i = 0; i < e->n_nodes; i++)
		fits += e->nodes[i].fits;
	assert_int_equal(e->n_nodes, 10000);
	assert_int_equal(fits, 5000);
	explain_pod_free(e);
	json_decref(nodes);
	json_decref(pod);
}

/* The apiserver's message from the recorded refusal, from "exceeded quota: " to the line end. */
static void refusal_text(char *out, size_t size)
{
	char line[4096];
	FILE *f = fopen(DATA "quota-refusal.txt", "r");
	if (!f || !fgets(line, sizeof(line), f))
		fail_msg("cannot read quota-refusal.txt");
	fclose(f);
	const char *at = strstr(line, "exceeded quota: ");
	if (!at)
		fail_msg("no refusal in quota-refusal.txt");
	snprintf(out, size, "%.*s", (int)strcspn(at, "\n"), at);
}

/* The prediction is the apiserver's own refusal, byte for byte. */
static void test_quota_exceeded(void **state)
{
	(void)state;
	json_t *list = load(DATA "quota-list-used.json"), *usage = NULL;
	struct explain_quota_report *r;
	struct gs_error err;

	assert_int_equal(explain_quota_add_request(&usage, "nvidia.com/gpu=2", &err), 0);
	assert_int_equal(explain_quota_add_request(&usage, "cpu=4", &err), 0);
	assert_string_equal(json_string_value(json_object_get(usage, "requests.nvidia.com/gpu")),
			    "2");
	assert_string_equal(json_string_value(json_object_get(usage, "requests.cpu")), "4");
	assert_string_equal(json_string_value(json_object_get(usage, "pods")), "1");
	assert_null(json_object_get(usage, "limits.nvidia.com/gpu"));
	assert_int_equal(explain_quota(list, usage, NULL, &r, &err), 0);
	assert_int_equal(r->n, 1);
	assert_true(r->quotas[0].enforced);
	assert_int_equal(r->quotas[0].verdict, EXPLAIN_REFUSE);
	char want[4096];
	refusal_text(want, sizeof(want));
	assert_string_equal(r->quotas[0].message, want);
	/* headroom = hard - used */
	assert_string_equal(r->quotas[0].items[2].resource, "requests.nvidia.com/gpu");
	assert_string_equal(r->quotas[0].items[2].headroom, "1");
	explain_quota_report_free(r);
	json_decref(usage);

	/* One GPU and one CPU fit. */
	usage = NULL;
	assert_int_equal(explain_quota_add_request(&usage, "nvidia.com/gpu=1", &err), 0);
	assert_int_equal(explain_quota_add_request(&usage, "cpu=1", &err), 0);
	assert_int_equal(explain_quota(list, usage, NULL, &r, &err), 0);
	assert_int_equal(r->quotas[0].verdict, EXPLAIN_ADMIT);
	explain_quota_report_free(r);
	json_decref(usage);

	/* No cpu in the request but requests.cpu in the quota: the Constraints refusal. */
	usage = NULL;
	assert_int_equal(explain_quota_add_request(&usage, "nvidia.com/gpu=1", &err), 0);
	assert_int_equal(explain_quota(list, usage, "main", &r, &err), 0);
	assert_string_equal(r->quotas[0].message,
			    "failed quota: gpu-quota: must specify requests.cpu for: main");
	explain_quota_report_free(r);
	json_decref(usage);
	json_decref(list);
}

/* The lab's quota: full at 2/2 (seed step 5). */
static void test_quota_lab(void **state)
{
	(void)state;
	json_t *list = load(DATA "quota-team-a.json"), *usage = NULL;
	struct explain_quota_report *r;
	struct gs_error err;

	assert_int_equal(explain_quota_add_request(&usage, "nvidia.com/gpu=1", &err), 0);
	assert_int_equal(explain_quota(list, usage, NULL, &r, &err), 0);
	assert_string_equal(
		r->quotas[0].message,
		"exceeded quota: gpu-quota, requested: requests.nvidia.com/gpu=1, used: "
		"requests.nvidia.com/gpu=2, limited: requests.nvidia.com/gpu=2");
	explain_quota_report_free(r);
	json_decref(usage);
	json_decref(list);
}

/* k8s.io/apiserver v0.34.4 pkg/admission/plugin/resourcequota/controller.go: an empty status.hard
 * constrains nothing. */
static void test_quota_not_enforced(void **state)
{
	(void)state;
	json_t *q = load(DATA "quota-fresh.json");
	json_t *list = json_pack("{s:s,s:[O]}", "kind", "ResourceQuotaList", "items", q);
	json_t *usage = NULL;
	struct explain_quota_report *r;
	struct gs_error err;

	assert_int_equal(explain_quota_add_request(&usage, "nvidia.com/gpu=100", &err), 0);
	assert_int_equal(explain_quota(list, usage, NULL, &r, &err), 0);
	assert_false(r->quotas[0].enforced);
	assert_int_equal(r->quotas[0].verdict, EXPLAIN_UNCONSTRAINED);
	/* spec.hard is shown, used is unknown */
	assert_int_equal(r->quotas[0].n_items, 3);
	assert_null(r->quotas[0].items[0].used);
	explain_quota_report_free(r);

	/* status.hard lists a resource status.used lacks: status unknown. */
	json_object_set_new(json_object_get(q, "status"), "hard",
			    loads("{\"requests.nvidia.com/gpu\":\"3\"}"));
	json_object_set_new(json_object_get(q, "status"), "used", json_object());
	assert_int_equal(explain_quota(list, usage, NULL, &r, &err), 0);
	assert_string_equal(
		r->quotas[0].message,
		"status unknown for quota: gpu-quota, resources: requests.nvidia.com/gpu");
	explain_quota_report_free(r);
	json_decref(usage);
	json_decref(q);
	json_decref(list);
}

static void test_quota_request_args(void **state)
{
	(void)state;
	json_t *usage = NULL;
	struct gs_error err;

	assert_int_equal(explain_quota_add_request(&usage, "nvidia.com/gpu", &err), -1);
	assert_int_equal(explain_quota_add_request(&usage, "=1", &err), -1);
	assert_int_equal(explain_quota_add_request(&usage, "cpu=abc", &err), -1);
	assert_int_equal(explain_quota_add_request(&usage, "cpu=-1", &err), -1);
	assert_int_equal(explain_quota_add_request(&usage, "memory=1Gi", &err), 0);
	assert_int_equal(explain_quota_add_request(&usage, "memory=1Gi", &err), 0);
	assert_string_equal(json_string_value(json_object_get(usage, "memory")), "2Gi");
	assert_string_equal(json_string_value(json_object_get(usage, "requests.memory")), "2Gi");
	assert_int_equal(explain_quota_add_request(&usage, "limits.memory=1Gi", &err), 0);
	assert_string_equal(json_string_value(json_object_get(usage, "limits.memory")), "1Gi");
	json_decref(usage);
}

/* What pods count against quotas, summed over pods (the offline form's status.used). */
static void test_quota_add_pod(void **state)
{
	(void)state;
	json_t *a = synthetic_pod("\"nvidia.com/gpu\":1,\"cpu\":\"500m\"", NULL);
	json_t *b = synthetic_pod("\"nvidia.com/gpu\":\"2\"", NULL);
	json_t *bad = synthetic_pod("\"cpu\":\"x\"", NULL);
	json_t *usage = NULL;
	struct gs_error err;

	assert_int_equal(explain_quota_add_pod(&usage, a, &err), 0);
	assert_string_equal(json_string_value(json_object_get(usage, "pods")), "1");
	assert_string_equal(json_string_value(json_object_get(usage, "requests.cpu")), "500m");
	assert_string_equal(json_string_value(json_object_get(usage, "cpu")), "500m");
	assert_string_equal(json_string_value(json_object_get(usage, "limits.cpu")), "500m");
	assert_int_equal(explain_quota_add_pod(&usage, b, &err), 0);
	assert_string_equal(json_string_value(json_object_get(usage, "pods")), "2");
	assert_string_equal(json_string_value(json_object_get(usage, "count/pods")), "2");
	assert_string_equal(json_string_value(json_object_get(usage, "requests.nvidia.com/gpu")),
			    "3");
	assert_string_equal(json_string_value(json_object_get(usage, "limits.nvidia.com/gpu")),
			    "3");
	assert_int_equal(explain_quota_add_pod(&usage, bad, &err), -1);
	json_decref(usage);
	json_decref(a);
	json_decref(b);
	json_decref(bad);
}

/*
 * DRAExtendedResource (beta 1.36, GA 1.37): nvidia.com/gpu on a node that
 * lacks it goes to DynamicResources' Filter when a DeviceClass names it
 * (k8s.io/kubernetes v1.37.2 noderesources/fit.go shouldDelegateResourceToDRA,
 * dynamicresources/extendeddynamicresources.go).
 */
static json_t *xnode(const char *name, const char *gpus)
{
	return json_pack("{s:s,s:{s:s},s:{s:{s:s,s:s,s:s,s:s}}}", "kind", "Node", "metadata",
			 "name", name, "status", "allocatable", "cpu", "8", "memory", "32Gi",
			 "pods", "110", "nvidia.com/gpu", gpus);
}

static struct explain_pod *run_ext(const char *version, json_t *claims)
{
	json_t *pod = loads("{\"kind\":\"Pod\",\"metadata\":{\"name\":\"p\",\"namespace\":\"t\","
			    "\"uid\":\"u-p\"},\"spec\":{\"containers\":[{\"name\":\"c\","
			    "\"resources\":{\"limits\":{\"nvidia.com/gpu\":\"1\"}}}]}}");
	json_t *nodes = json_pack("{s:[o,o]}", "items", xnode("dp", "1"), xnode("dra", "0"));
	json_t *classes = loads("[{\"kind\":\"DeviceClass\",\"metadata\":{\"name\":\"gpu.nvidia."
				"com\"},\"spec\":{\"extendedResourceName\":\"nvidia.com/gpu\"}}]");
	json_t *slices =
		loads("[{\"kind\":\"ResourceSlice\",\"spec\":{\"driver\":\"gpu.nvidia."
		      "com\",\"nodeName\":\"dra\",\"pool\":{\"name\":\"dra\"},\"devices\":"
		      "[{\"name\":\"gpu-0\",\"attributes\":{\"type\":{\"string\":\"gpu\"}}}"
		      "]}}]");
	struct gs_error err;
	const struct kubeversion *kv = kubeversion_parse(version, &err);
	struct explain_pod_input in = {.pod = pod,
				       .nodes = nodes,
				       .cat = cat(),
				       .kube = kv,
				       .device_classes = classes,
				       .slices = slices,
				       .claims = claims};
	struct explain_pod *e;

	if (!kv || explain_pod(&in, &e, &err))
		fail_msg("explain_pod: %s", err.msg);
	json_decref(pod);
	json_decref(nodes);
	json_decref(classes);
	json_decref(slices);
	json_decref(claims);
	return e;
}

static json_t *gpu0_claim(const char *owner_uid)
{
	return json_pack("[{s:s,s:{s:s,s:s,s:[{s:s}]},s:{s:{s:{s:[{s:s,s:s,s:s,s:s}]}}}}]", "kind",
			 "ResourceClaim", "metadata", "name", "held", "namespace", "t",
			 "ownerReferences", "uid", owner_uid, "status", "allocation", "devices",
			 "results", "request", "r", "driver", "gpu.nvidia.com", "pool", "dra",
			 "device", "gpu-0");
}

static void test_dra_extended_resource(void **state)
{
	(void)state;
	struct explain_pod *e = run_ext("v1.37.2", NULL);
	const struct explain_node *dra = node_of(e, "dra");
	const struct explain_resource *r = res_of(dra, "nvidia.com/gpu");

	/* The DRA node's free GPU takes it; no "Insufficient", no DRA-path hint. */
	assert_true(dra->fits);
	assert_string_equal(r->dra_class, "gpu.nvidia.com");
	assert_true(r->fits);
	assert_int_equal(dra->hints.n, 0);
	/* A node with the resource in allocatable stays NodeResourcesFit's. */
	assert_null(res_of(node_of(e, "dp"), "nvidia.com/gpu")->dra_class);
	explain_pod_free(e);

	/* Another pod's claim holds gpu-0: DynamicResources' words, the device's reason. */
	e = run_ext("1.37", gpu0_claim("u-other"));
	dra = node_of(e, "dra");
	r = res_of(dra, "nvidia.com/gpu");
	assert_false(dra->fits);
	assert_true(dra->selected);
	assert_true(has(&dra->reasons, "cannot allocate all claims"));
	assert_false(has(&dra->reasons, "Insufficient nvidia.com/gpu"));
	assert_false(r->fits);
	assert_non_null(r->dra_why);
	assert_non_null(strstr(r->dra_why, "gpu-0: "));
	assert_null(
		strstr(r->dra_why, "dra gpu-0")); /* the node's name is the line's, not repeated */
	explain_pod_free(e);

	/* The pod's own claim (a bound pod) does not count against it. */
	e = run_ext("v1.37.2", gpu0_claim("u-p"));
	assert_true(node_of(e, "dra")->fits);
	explain_pod_free(e);

	/* 1.35: the gate is off by default, NodeResourcesFit judges it. */
	e = run_ext("v1.35.4", NULL);
	dra = node_of(e, "dra");
	assert_true(has(&dra->reasons, "Insufficient nvidia.com/gpu"));
	assert_null(res_of(dra, "nvidia.com/gpu")->dra_class);
	explain_pod_free(e);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_scheduled),
		cmocka_unit_test(test_pending_insufficient),
		cmocka_unit_test(test_gpu_on_mig),
		cmocka_unit_test(test_fail_requests_greater_than_one),
		cmocka_unit_test(test_renamed_taints_unschedulable),
		cmocka_unit_test(test_product_selector_and_affinity),
		cmocka_unit_test(test_mig_profile_no_node_offers),
		cmocka_unit_test(test_advertised_whole),
		cmocka_unit_test(test_effective_request),
		cmocka_unit_test(test_bad_input),
		cmocka_unit_test(test_usage_shared),
		cmocka_unit_test(test_large_fleet),
		cmocka_unit_test(test_quota_exceeded),
		cmocka_unit_test(test_quota_lab),
		cmocka_unit_test(test_quota_not_enforced),
		cmocka_unit_test(test_quota_request_args),
		cmocka_unit_test(test_quota_add_pod),
		cmocka_unit_test(test_dra_extended_resource),
		cmocka_unit_test(test_mig_profile_two_model_node),
		cmocka_unit_test(test_node_summary),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
