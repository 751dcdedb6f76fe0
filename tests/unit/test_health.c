#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <stdlib.h>
#include <string.h>

#include "engine/health.h"
#include "dra/draslice.h"
/* The fixture's pod helpers are for other tests. */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-function"
#include "ledger_fixture.h"
#pragma GCC diagnostic pop

/*
 * The device plugin's health loop (k8s-device-plugin v0.20.0
 * internal/rm/health.go) and the DRA driver's taints (dra-driver-nvidia-gpu
 * v0.4.1 cmd/gpu-kubelet-plugin/device_health.go), as health.h plays them.
 */

static json_int_t alloc_of(const struct health_dp_result *r, const char *res)
{
	return json_integer_value(json_object_get(r->allocatable, res));
}

/* health_dp for `value` on `l`, nothing remembered unless `remembered`. */
static void run(const struct ledger *l, const char *value, const char *remembered,
		const char *restarted_at, struct health_dp_result *r)
{
	struct health_faults f;
	struct health_policy p;
	struct gs_error err;
	size_t col;

	assert_int_equal(health_parse(value, &f, &col, &err), 0);
	health_policy_init(&p, NULL, NULL);
	health_dp(l, &f, &p, remembered, restarted_at, r);
	health_faults_release(&f);
}

/* 2 T4s x 4 replicas: an Xid marks one replica of its GPU, not four. */
static void timeslicing_xid_takes_one_replica(void **state)
{
	(void)state;
	json_t *n = fx_node("n", "Tesla T4", 2, NULL, NULL);
	struct ledger *l = fx_ledger(n, CFG_TS_LOOSE);
	struct health_dp_result r;

	run(l, "0=xid:79", NULL, NULL, &r);
	assert_int_equal(alloc_of(&r, "nvidia.com/gpu"), 4 * 2 - 1);
	assert_int_equal(json_array_size(json_object_get(r.unhealthy, "nvidia.com/gpu")), 1);
	assert_non_null(strstr(json_string_value(json_array_get(
				       json_object_get(r.unhealthy, "nvidia.com/gpu"), 0)),
			       "::3"));
	assert_int_equal(json_array_size(json_object_get(r.marked, "nvidia.com/gpu")), 1);
	assert_non_null(strstr(r.state, "\"restartedAt\":\"\""));
	health_dp_result_release(&r);

	/* Another Xid on the same GPU marks the same device: still one. */
	run(l, "0=xid:79", NULL, NULL, &r);
	{
		char *st = strdup(r.state);
		health_dp_result_release(&r);
		run(l, "0=xid:48", st, NULL, &r);
		free(st);
	}
	assert_int_equal(alloc_of(&r, "nvidia.com/gpu"), 7);
	assert_int_equal(json_object_size(r.marked), 0);
	health_dp_result_release(&r);
	ledger_free(l);
	json_decref(n);
}

static void skipped_xid_changes_nothing(void **state)
{
	(void)state;
	json_t *n = fx_node("n", "Tesla T4", 2, NULL, NULL);
	struct ledger *l = fx_ledger(n, CFG_TS_LOOSE);
	struct health_dp_result r;
	static const char *const skipped[] = {"0=xid:13", "0=xid:31", "0=xid:43",
					      "0=xid:45", "0=xid:68", "0=xid:109"};

	for (size_t i = 0; i < sizeof(skipped) / sizeof(*skipped); i++) {
		run(l, skipped[i], NULL, NULL, &r);
		assert_int_equal(alloc_of(&r, "nvidia.com/gpu"), 8);
		assert_int_equal(json_object_size(r.unhealthy), 0);
		assert_string_equal(r.state, "");
		health_dp_result_release(&r);
	}
	ledger_free(l);
	json_decref(n);
}

static void policy_follows_the_environment(void **state)
{
	(void)state;
	struct health_policy p;

	health_policy_init(&p, NULL, NULL);
	assert_true(health_policy_skips(&p, 13));
	assert_false(health_policy_skips(&p, 79));
	assert_false(health_policy_all_disabled(&p));
	health_policy_init(&p, " 79 ,bad,48", NULL);
	assert_true(health_policy_skips(&p, 79));
	assert_true(health_policy_skips(&p, 48));
	assert_true(health_policy_skips(&p, 109));
	health_policy_init(&p, "ALL", "79");
	assert_true(health_policy_all_disabled(&p));
	assert_false(health_policy_skips(&p, 79));
	assert_true(health_policy_skips(&p, 48));
	health_policy_init(&p, NULL, "13");
	assert_false(health_policy_skips(&p, 13));
	health_policy_init(&p, NULL, "all");
	assert_false(health_policy_skips(&p, 13));
}

/* A lost GPU: every device of the resource, on every GPU. */
static void lost_gpu_takes_the_resource(void **state)
{
	(void)state;
	json_t *n = fx_node("n", "Tesla T4", 2, NULL, NULL);
	struct ledger *l = fx_ledger(n, CFG_TS_LOOSE);
	struct health_dp_result r;

	run(l, "1=lost", NULL, NULL, &r);
	assert_int_equal(alloc_of(&r, "nvidia.com/gpu"), 0);
	assert_int_equal(json_array_size(json_object_get(r.unhealthy, "nvidia.com/gpu")), 8);
	health_dp_result_release(&r);
	ledger_free(l);
	json_decref(n);
}

/* MIG: the instance the event names must be the one device the map keeps. */
static void mig_device_by_instance(void **state)
{
	(void)state;
	json_t *n = fx_node(
		"n", "NVIDIA A100-SXM4-80GB", 1,
		"\"nvidia.com/mig.strategy\":\"mixed\",\"nvidia.com/mig.config\":\"all-1g.10gb\"",
		NULL);
	struct ledger *l = fx_ledger(n, NULL);
	struct health_dp_result r;

	/* The map keeps the last instance (GI 6): an event for GI 2 is dropped. */
	run(l, "0=xid:79/2/0", NULL, NULL, &r);
	assert_int_equal(alloc_of(&r, "nvidia.com/mig-1g.10gb"), 7);
	health_dp_result_release(&r);
	run(l, "0=xid:79/6/0", NULL, NULL, &r);
	assert_int_equal(alloc_of(&r, "nvidia.com/mig-1g.10gb"), 6);
	assert_string_equal(json_string_value(json_array_get(
				    json_object_get(r.unhealthy, "nvidia.com/mig-1g.10gb"), 0)),
			    l->devices[6].id);
	health_dp_result_release(&r);
	/* No instance in the event: the check at health.go:160 is skipped, the mapped device goes.
	 */
	run(l, "0=xid:79", NULL, NULL, &r);
	assert_int_equal(alloc_of(&r, "nvidia.com/mig-1g.10gb"), 6);
	health_dp_result_release(&r);
	ledger_free(l);
	json_decref(n);
}

/* No recovery while the plugin runs; a restart brings back what is no longer declared. */
static void restart_brings_cleared_devices_back(void **state)
{
	(void)state;
	json_t *n = fx_node("n", "Tesla T4", 2, NULL, NULL);
	struct ledger *l = fx_ledger(n, CFG_TS_LOOSE);
	struct health_dp_result r;
	char *st;

	run(l, "0=xid:79,1=xid:94", NULL, "t1", &r);
	assert_int_equal(alloc_of(&r, "nvidia.com/gpu"), 6);
	st = strdup(r.state);
	health_dp_result_release(&r);

	/* GPU 1 cleared, same plugin: still out. */
	run(l, "0=xid:79", st, "t1", &r);
	assert_int_equal(alloc_of(&r, "nvidia.com/gpu"), 6);
	assert_false(r.restarted);
	health_dp_result_release(&r);

	/* Restarted: GPU 0 still declared stays out, GPU 1 comes back. */
	run(l, "0=xid:79", st, "t2", &r);
	assert_true(r.restarted);
	assert_int_equal(alloc_of(&r, "nvidia.com/gpu"), 7);
	health_dp_result_release(&r);

	/* Restarted with nothing declared: all back, the record goes. */
	run(l, "", st, "t2", &r);
	assert_int_equal(alloc_of(&r, "nvidia.com/gpu"), 8);
	assert_string_equal(r.state, "");
	health_dp_result_release(&r);
	free(st);
	ledger_free(l);
	json_decref(n);
}

static void parse_is_strict(void **state)
{
	(void)state;
	struct health_faults f;
	struct gs_error err;
	size_t col;
	char *s;
	static const struct {
		const char *value;
		size_t col;
	} bad[] = {
		{"0", 2},	    {"0=", 3},
		{"0=xid:", 7},	    {"0=xid:79,", 10},
		{"a=lost", 1},	    {"0=lost,0=xid:1", 8},
		{"0=xid:79/1", 11}, {"0=lost ", 7},
		{"256=lost", 1},    {"0=xid:4294967296", 7},
	};

	assert_int_equal(health_parse("", &f, &col, &err), 0);
	assert_int_equal(f.n, 0);
	assert_int_equal(health_parse("3=lost,0=xid:79,0=xid:94/1/0", &f, &col, &err), 0);
	assert_int_equal(f.n, 3);
	assert_int_equal(f.items[0].kind, HEALTH_LOST);
	assert_int_equal(f.items[2].gi, 1);
	s = health_format(&f);
	assert_string_equal(s, "0=xid:79,0=xid:94/1/0,3=lost");
	free(s);
	health_faults_release(&f);
	for (size_t i = 0; i < sizeof(bad) / sizeof(*bad); i++) {
		assert_int_equal(health_parse(bad[i].value, &f, &col, &err), -1);
		assert_int_equal(col, bad[i].col);
		assert_non_null(strstr(err.msg, "character "));
	}
}

/* The node's annotation: an index the node lacks is named with its position. */
static void node_annotation_is_checked(void **state)
{
	(void)state;
	json_t *n =
		fx_node("n", "Tesla T4", 2, NULL, "\"gpushare.io/gpu-health\":\"0=xid:79,2=lost\"");
	struct health_faults f;
	struct gs_error err;

	assert_int_equal(health_from_node(n, "n", 2, NULL, &f, &err), -1);
	assert_non_null(strstr(err.msg, "node 'n': annotation gpushare.io/gpu-health "
					"\"0=xid:79,2=lost\": character 10: GPU 2: the node "
					"declares 2 GPUs"));
	json_decref(n);
}

static json_t *pool_of(const json_t *node)
{
	struct nodehw *hw;
	struct gs_warnings w;
	struct gs_error err;
	struct draslice_opts so = {0};
	json_t *pool;

	gs_warnings_init(&w);
	assert_int_equal(nodehw_from_node(fx_cat(), node, NULL, &hw, &w, &err), 0);
	assert_int_equal(draslice_build_pool(fx_cat(), hw, node, NULL, &so, &pool, &w, &err), 0);
	nodehw_free(hw);
	gs_warnings_release(&w);
	return pool;
}

static const json_t *taints_of(const json_t *pool, const char *dev)
{
	const json_t *d;
	size_t i;

	json_array_foreach (
		json_object_get(json_object_get(json_array_get(pool, 0), "spec"), "devices"), i, d)
		if (!strcmp(json_string_value(json_object_get(d, "name")), dev))
			return json_object_get(d, "taints");
	return NULL;
}

static size_t dra(json_t *pool, const char *value, const char *remembered, char **st)
{
	struct health_faults f;
	struct gs_warnings why;
	struct gs_error err;
	size_t col, k;

	gs_warnings_init(&why);
	assert_int_equal(health_parse(value, &f, &col, &err), 0);
	k = health_dra(pool, &f, NULL, false, remembered, NULL, 1796335660, st, &why);
	health_faults_release(&f);
	gs_warnings_release(&why);
	return k;
}

/* DRA: the driver's taint keys, values and effects. */
static void dra_taints(void **state)
{
	(void)state;
	json_t *n = fx_node("n", "Tesla T4", 2, NULL, NULL), *pool = pool_of(n);
	const json_t *t;
	char *st;

	assert_int_equal(dra(pool, "0=xid:79,1=xid:13", NULL, &st), 2);
	t = json_array_get(taints_of(pool, "gpu-0"), 0);
	assert_string_equal(json_string_value(json_object_get(t, "key")), "gpu.nvidia.com/xid");
	assert_string_equal(json_string_value(json_object_get(t, "value")), "79");
	assert_string_equal(json_string_value(json_object_get(t, "effect")), "NoSchedule");
	assert_string_equal(json_string_value(json_object_get(t, "timeAdded")),
			    "2026-12-03T22:07:40Z");
	t = json_array_get(taints_of(pool, "gpu-1"), 0);
	assert_string_equal(json_string_value(json_object_get(t, "effect")), "None");
	json_decref(pool);

	/* Remembered: nothing new, the same taints. */
	pool = pool_of(n);
	{
		char *st2;
		assert_int_equal(dra(pool, "0=xid:79,1=xid:13", st, &st2), 0);
		assert_string_equal(st, st2);
		free(st2);
	}
	assert_non_null(taints_of(pool, "gpu-0"));
	json_decref(pool);
	free(st);

	pool = pool_of(n);
	assert_int_equal(dra(pool, "1=lost", NULL, &st), 2);
	t = json_array_get(taints_of(pool, "gpu-0"), 0);
	assert_string_equal(json_string_value(json_object_get(t, "key")),
			    "gpu.nvidia.com/gpu-lost");
	assert_null(json_object_get(t, "value"));
	assert_string_equal(json_string_value(json_object_get(t, "effect")), "NoSchedule");
	free(st);
	json_decref(pool);
	json_decref(n);
}

/* DRA on a MIG GPU: an event without instance matches no device. */
static void dra_mig_needs_instance(void **state)
{
	(void)state;
	json_t *n = fx_node(
		"n", "NVIDIA A100-SXM4-80GB", 1,
		"\"nvidia.com/mig.strategy\":\"mixed\",\"nvidia.com/mig.config\":\"all-1g.10gb\"",
		NULL);
	json_t *pool = pool_of(n);
	char *st;

	assert_int_equal(dra(pool, "0=xid:79", NULL, &st), 0);
	assert_string_equal(st, "");
	free(st);
	assert_int_equal(dra(pool, "0=xid:79/2/0", NULL, &st), 1);
	free(st);
	json_decref(pool);
	json_decref(n);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(timeslicing_xid_takes_one_replica),
		cmocka_unit_test(skipped_xid_changes_nothing),
		cmocka_unit_test(policy_follows_the_environment),
		cmocka_unit_test(lost_gpu_takes_the_resource),
		cmocka_unit_test(mig_device_by_instance),
		cmocka_unit_test(restart_brings_cleared_devices_back),
		cmocka_unit_test(parse_is_strict),
		cmocka_unit_test(node_annotation_is_checked),
		cmocka_unit_test(dra_taints),
		cmocka_unit_test(dra_mig_needs_instance),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
