#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/migrate.h"
#include "json_fixture.h"

/*
 * migrate's verdicts and quota charges on hand-made fleets without a
 * device-plugin ConfigMap (every node gets the empty config). Expected
 * values follow from docs/guide/migrate.md: DRAExtendedResource's stages
 * (k8s.io/kubernetes pkg/features/kube_features.go) and the quota
 * evaluators (pkg/quota/v1/evaluator/core/pods.go, resource_claims.go).
 */

/* A node declaring `count` GPUs of `product` in pool `pool`, extra labels JSON ("" = none). */
static json_t *node(const char *name, const char *pool, const char *product, int count,
		    const char *labels)
{
	char buf[2048];
	snprintf(buf, sizeof(buf),
		 "{\"apiVersion\":\"v1\",\"kind\":\"Node\",\"metadata\":{\"name\":\"%s\","
		 "\"labels\":{\"gpushare.io/pool\":\"%s\",\"kubernetes.io/hostname\":\"%s\"%s%s},"
		 "\"annotations\":{\"gpushare.io/gpu-product\":\"%s\",\"gpushare.io/gpu-count\":"
		 "\"%d\"}},\"status\":{\"allocatable\":{\"cpu\":\"32\",\"memory\":\"256Gi\","
		 "\"pods\":\"110\"}}}",
		 name, pool, name, *labels ? "," : "", labels, product, count);
	return loads(buf);
}

/* A pod in namespace t asking `resources` (its container's), extra spec fields ("" = none). */
static json_t *pod(const char *name, const char *resources, const char *spec)
{
	char buf[2048];
	snprintf(buf, sizeof(buf),
		 "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"%s\","
		 "\"namespace\":\"t\"},\"spec\":{%s%s\"containers\":[{\"name\":\"c\","
		 "\"image\":\"x\",\"resources\":%s}]}}",
		 name, spec, *spec ? "," : "", resources);
	return loads(buf);
}

struct fixture {
	json_t *nodes, *pods, *quotas;
	struct migrate_object objs[8];
};

/* version NULL: the newest; gate -1: the release's default, else DRAExtendedResource. */
static struct migrate_result *run(struct fixture *fx, const char *pool, const char *version,
				  int gate)
{
	struct gs_error err;
	const struct kubeversion *kv = version ? kubeversion_parse(version, &err) : NULL;
	struct kubegates g;
	struct migrate_input in = {.nodes = fx->nodes,
				   .objects = fx->objs,
				   .n_objects = json_array_size(fx->pods),
				   .quotas = fx->quotas,
				   .pool = pool,
				   .kube = kv,
				   .gates = gate < 0 ? NULL : &g};
	struct migrate_result *r = NULL;

	if (version && !kv)
		fail_msg("kubeversion_parse: %s", err.msg);
	g.dra_extended_resource = gate > 0;
	for (size_t i = 0; i < json_array_size(fx->pods); i++)
		fx->objs[i] = (struct migrate_object){json_array_get(fx->pods, i), NULL};
	if (migrate_run(&in, &r, &err) < 0)
		fail_msg("migrate_run: %s", err.msg);
	return r;
}

static void fixture_free(struct fixture *fx)
{
	json_decref(fx->nodes);
	json_decref(fx->pods);
	json_decref(fx->quotas);
}

static const char *route(const struct migrate_workload *w)
{
	return json_string_value(json_object_get(json_array_get(w->resources, 0), "route"));
}

/* The gate in words: its stage in the release, and the release's default or set apart. */
static void test_gate_words(void **state)
{
	static const struct {
		const char *version;
		int gate;
		const char *words;
	} cases[] = {
		{"v1.34.4", -1, "alpha, off by default"}, {"v1.34.4", 0, "alpha, off by default"},
		{"v1.34.4", 1, "alpha, turned on"},	  {"v1.35.4", -1, "alpha, off by default"},
		{"v1.35.4", 1, "alpha, turned on"},	  {"v1.36.3", -1, "beta, on by default"},
		{"v1.36.3", 1, "beta, on by default"},	  {"v1.36.3", 0, "beta, turned off"},
		{"v1.37.2", -1, "GA, locked on"},	  {"v1.37.2", 1, "GA, locked on"},
	};
	struct fixture fx = {.nodes = json_array(), .pods = json_array()};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct migrate_result *r = run(&fx, NULL, cases[i].version, cases[i].gate);
		assert_string_equal(r->gate, cases[i].words);
		migrate_result_free(r);
	}
	fixture_free(&fx);
}

/* A whole-GPU pod on a pool that moves: the gate decides, by release. */
static void test_whole_gpu_by_release(void **state)
{
	(void)state;
	struct fixture fx = {
		.nodes = json_pack("[o]", node("a0", "a", "NVIDIA A100-SXM4-80GB", 2, "")),
		.pods = json_pack("[o]", pod("p", "{\"limits\":{\"nvidia.com/gpu\":\"2\"}}", "")),
	};
	struct migrate_result *r = run(&fx, NULL, NULL, -1);
	assert_string_equal(r->kubernetes_version, "v1.37.2");
	assert_true(r->extended_resource);
	assert_int_equal(r->n_workloads, 1);
	assert_int_equal(r->workloads[0].verdict, MIGRATE_UNCHANGED);
	assert_string_equal(route(&r->workloads[0]), "extended-resource");
	assert_false(migrate_result_breaks(r));
	/* the chart's class with its extended resource name, as stored */
	assert_string_equal(json_string_value(json_object_get(
				    json_object_get(json_array_get(r->device_classes, 0), "spec"),
				    "extendedResourceName")),
			    "nvidia.com/gpu");
	migrate_result_free(r);

	r = run(&fx, NULL, "v1.35.4", -1);
	assert_false(r->extended_resource);
	assert_int_equal(r->workloads[0].verdict, MIGRATE_BREAKS);
	assert_true(migrate_result_breaks(r));
	/* the way out: the claim template, from dra translate */
	assert_int_equal(json_array_size(r->workloads[0].objects), 1);
	migrate_result_free(r);

	r = run(&fx, NULL, "1.34", 1);
	assert_string_equal(r->kubernetes_version, "v1.34.4");
	assert_int_equal(r->workloads[0].verdict, MIGRATE_UNCHANGED);
	migrate_result_free(r);

	r = run(&fx, NULL, "v1.36.3", -1);
	assert_true(r->extended_resource);
	migrate_result_free(r);
	fixture_free(&fx);
}

/* One pool moves; a pod that fits the other keeps the device plugin. */
static void test_one_pool(void **state)
{
	(void)state;
	struct fixture fx = {
		.nodes = json_pack("[o,o]", node("a0", "a", "NVIDIA A100-SXM4-80GB", 2, ""),
				   node("t0", "t", "Tesla T4", 1, "")),
		.pods = json_pack("[o,o,o]",
				  pod("any", "{\"limits\":{\"nvidia.com/gpu\":\"1\"}}", ""),
				  pod("pinned", "{\"limits\":{\"nvidia.com/gpu\":\"1\"}}",
				      "\"nodeSelector\":{\"gpushare.io/pool\":\"a\"}"),
				  pod("two", "{\"limits\":{\"nvidia.com/gpu\":\"2\"}}",
				      "\"nodeSelector\":{\"gpushare.io/pool\":\"a\"}")),
	};
	struct migrate_result *r = run(&fx, "a", "v1.34.4", -1);
	assert_int_equal(r->n_pools, 2);
	assert_true(r->pools[0].dra);
	assert_false(r->pools[1].dra);
	assert_int_equal(
		json_integer_value(json_object_get(json_array_get(r->pools[0].nodes, 0), "gpus")),
		2);
	assert_int_equal(r->workloads[0].verdict, MIGRATE_UNCHANGED);
	assert_string_equal(route(&r->workloads[0]), "device-plugin");
	assert_int_equal(r->workloads[1].verdict, MIGRATE_BREAKS);
	assert_int_equal(r->workloads[2].verdict, MIGRATE_BREAKS);
	migrate_result_free(r);

	r = run(&fx, "a", NULL, -1);
	assert_string_equal(route(&r->workloads[0]), "either");
	assert_string_equal(route(&r->workloads[1]), "extended-resource");
	assert_int_equal(r->workloads[2].verdict, MIGRATE_UNCHANGED);
	migrate_result_free(r);

	/* t has one GPU: a pod asking two and pinned to it fits nothing */
	json_array_set_new(fx.pods, 2,
			   pod("two", "{\"limits\":{\"nvidia.com/gpu\":\"2\"}}",
			       "\"nodeSelector\":{\"gpushare.io/pool\":\"t\"}"));
	r = run(&fx, "a", NULL, -1);
	assert_int_equal(r->workloads[2].verdict, MIGRATE_BREAKS);
	assert_string_equal(route(&r->workloads[2]), "none");
	migrate_result_free(r);
	fixture_free(&fx);
}

/* A MIG pod needs a claim; its device-plugin quota no longer sees it. */
static void test_mig_claim_and_quota(void **state)
{
	(void)state;
	struct fixture fx = {
		.nodes = json_pack("[o]", node("m0", "m", "NVIDIA A100-SXM4-80GB", 1,
					       "\"nvidia.com/mig.config\":\"all-1g.10gb\","
					       "\"nvidia.com/mig.strategy\":\"mixed\"")),
		.pods = json_pack(
			"[o]", pod("mig", "{\"limits\":{\"nvidia.com/mig-1g.10gb\":\"1\"}}", "")),
		.quotas = loads("[{\"apiVersion\":\"v1\",\"kind\":\"ResourceQuota\",\"metadata\":"
				"{\"name\":\"q\",\"namespace\":\"t\"},\"spec\":{\"hard\":{"
				"\"requests.nvidia.com/mig-1g.10gb\":\"3\","
				"\"mig.nvidia.com.deviceclass.resource.k8s.io/devices\":\"5\"}}}]"),
	};
	struct migrate_result *r = run(&fx, NULL, NULL, -1);
	assert_int_equal(
		json_integer_value(json_object_get(
			json_object_get(json_array_get(r->pools[0].nodes, 0), "mig"), "1g.10gb")),
		7);
	assert_int_equal(r->workloads[0].verdict, MIGRATE_NEEDS_CLAIM);
	assert_string_equal(json_string_value(json_object_get(
				    json_array_get(r->workloads[0].objects, 0), "kind")),
			    "ResourceClaimTemplate");
	assert_int_equal(r->n_quotas, 2);
	assert_string_equal(r->quotas[0].resource, "requests.nvidia.com/mig-1g.10gb");
	assert_int_equal(r->quotas[0].hard, 3);
	assert_int_equal(r->quotas[0].after, 0);
	assert_int_equal(r->quotas[1].after, 1);
	assert_int_equal(r->notes.n, 0); /* charged under the class name, which is limited */
	migrate_result_free(r);
	fixture_free(&fx);
}

/* A claim of class gpu.nvidia.com counts against requests.nvidia.com/gpu from 1.35 with
 * the gate (resource_claims.go addExtendedResourceQuota), never on 1.34. */
static void test_claim_charged_to_extended_name(void **state)
{
	(void)state;
	struct fixture fx = {
		.nodes = json_pack("[o]", node("a0", "a", "NVIDIA A100-SXM4-80GB", 2, "")),
		.pods = json_pack("[o]", pod("p", "{\"limits\":{\"nvidia.com/gpu\":\"2\"}}", "")),
		.quotas = loads("[{\"kind\":\"ResourceQuota\",\"metadata\":{\"name\":\"q\","
				"\"namespace\":\"t\"},\"spec\":{\"hard\":{"
				"\"requests.nvidia.com/gpu\":\"4\","
				"\"gpu.nvidia.com.deviceclass.resource.k8s.io/devices\":\"4\","
				"\"requests.deviceclass.resource.kubernetes.io/gpu.nvidia.com\":"
				"\"4\"}}}]"),
	};
	/* through the extended resource: the pod charges the name, its claim the class */
	struct migrate_result *r = run(&fx, NULL, NULL, -1);
	assert_int_equal(r->quotas[0].before, 2);
	assert_int_equal(r->quotas[0].after, 2);
	assert_int_equal(r->quotas[1].after, 2);
	assert_int_equal(r->quotas[2].after, 2); /* the class's implicit name, 1.35+ */
	assert_int_equal(r->notes.n, 1);	 /* both names: charged twice */
	assert_non_null(strstr(r->notes.items[0], "charged twice"));
	migrate_result_free(r);
	/* gate off on 1.35: it breaks, the pods still charge the name at creation */
	r = run(&fx, NULL, "v1.35.4", -1);
	assert_int_equal(r->quotas[0].after, 2);
	assert_int_equal(r->quotas[1].after, 0);
	migrate_result_free(r);
	/* 1.34 with the gate: the claim charges its class only (no addExtendedResourceQuota) */
	r = run(&fx, NULL, "v1.34.4", 1);
	assert_int_equal(r->quotas[1].after, 2);
	assert_int_equal(r->quotas[2].after, 0);
	migrate_result_free(r);
	fixture_free(&fx);
}

static void test_refusals(void **state)
{
	(void)state;
	struct fixture fx = {
		.nodes = json_pack("[o]", node("a0", "a", "NVIDIA A100-SXM4-80GB", 2, "")),
		.pods = json_array(),
	};
	struct kubegates off = {.dra_extended_resource = false};
	struct migrate_input in = {.nodes = fx.nodes, .gates = &off};
	struct migrate_result *r = NULL;
	struct gs_error err;

	assert_int_equal(migrate_run(&in, &r, &err), -1);
	assert_string_equal(err.msg, "cannot set feature gate DRAExtendedResource to false, "
				     "feature is locked to true");
	in.gates = NULL;
	in.pool = "b";
	assert_int_equal(migrate_run(&in, &r, &err), -1);
	assert_string_equal(err.msg, "--pool: no pool 'b' in the fleet (the pools: 'a')");
	assert_null(r);
	fixture_free(&fx);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_gate_words),
		cmocka_unit_test(test_whole_gpu_by_release),
		cmocka_unit_test(test_one_pool),
		cmocka_unit_test(test_mig_claim_and_quota),
		cmocka_unit_test(test_claim_charged_to_extended_name),
		cmocka_unit_test(test_refusals),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
