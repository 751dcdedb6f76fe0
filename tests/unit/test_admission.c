#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/admission.h"
#include "model/kobj.h"
#include "ledger_fixture.h"

/*
 * The kubelet's admission (v1.34.4) with NVIDIA's plugin (v0.17): expected
 * texts are the format strings of pkg/kubelet/cm/admission/errors.go,
 * pkg/kubelet/cm/devicemanager/manager.go, pkg/kubelet/lifecycle/predicate.go
 * and the plugin's internal/rm/rm.go, filled in by hand.
 */

static char b1[256], b2[256], b3[1024];

static json_t *pod1(const char *node, const char *res, int n)
{
	snprintf(b3, sizeof(b3), "[%s]", fx_ask(b1, sizeof(b1), "main", res, n));
	return fx_pod("gpu-share", "p", node, NULL, b3);
}

static void decide(const struct ledger *l, const json_t *pod, struct admission_decision *d)
{
	struct gs_error err;

	if (admission_decide(l, pod, d, &err))
		fail_msg("decide: %s", err.msg);
}

#define SHARED_2                                                                                   \
	"Allocate failed due to rpc error: code = Unknown desc = invalid allocation request "      \
	"for \"nvidia.com/gpu\": invalid request: maximum request size for shared resources is "   \
	"1; found 2, which is unexpected"

/* The seed's 2-slice pod on time-sliced lab-node-1. */
static void two_slices_refused(void **state)
{
	(void)state;
	json_t *n = fx_node("lab-node-1", "Tesla T4", 2, NULL, NULL);
	struct ledger *l = fx_ledger(n, CFG_SHARED);
	json_t *pod = pod1("lab-node-1", "nvidia.com/gpu", 2), *st, *ev;
	struct admission_decision d;

	decide(l, pod, &d);
	assert_false(d.admit);
	assert_string_equal(d.reason, "UnexpectedAdmissionError");
	assert_string_equal(d.message, SHARED_2);
	assert_null(d.devices);
	st = admission_status_patch(&d);
	assert_string_equal(kobj_text(st, "status.phase"), "Failed");
	assert_string_equal(kobj_text(st, "status.reason"), "UnexpectedAdmissionError");
	assert_string_equal(kobj_text(st, "status.message"), "Pod was rejected: " SHARED_2);
	ev = admission_event(&d, pod, "lab-node-1", "2026-01-01T00:00:00Z");
	assert_string_equal(kobj_text(ev, "type"), "Warning");
	assert_string_equal(kobj_text(ev, "reason"), "UnexpectedAdmissionError");
	assert_string_equal(kobj_text(ev, "message"), SHARED_2);
	assert_string_equal(kobj_text(ev, "source.component"), "kubelet");
	assert_string_equal(kobj_text(ev, "source.host"), "lab-node-1");
	assert_string_equal(kobj_text(ev, "involvedObject.kind"), "Pod");
	assert_string_equal(kobj_text(ev, "involvedObject.uid"), "u-p");
	json_decref(st);
	json_decref(ev);
	admission_decision_release(&d);
	/* One slice is fine. */
	json_decref(pod);
	pod = pod1("lab-node-1", "nvidia.com/gpu", 1);
	decide(l, pod, &d);
	assert_true(d.admit);
	assert_int_equal(json_array_size(json_object_get(d.devices, "nvidia.com/gpu")), 1);
	admission_decision_release(&d);
	json_decref(pod);
	ledger_free(l);
	json_decref(n);
}

/* Without the flag, 2 replicas pass and come from both GPUs (distributed). */
static void loose_time_slicing(void **state)
{
	(void)state;
	json_t *n = fx_node("n", "Tesla T4", 2, NULL, NULL);
	struct ledger *l = fx_ledger(n, CFG_TS_LOOSE);
	json_t *pod = pod1("n", "nvidia.com/gpu", 2), *ids;
	struct admission_decision d;

	assert_false(l->fail_over_one);
	decide(l, pod, &d);
	assert_true(d.admit);
	ids = json_object_get(d.devices, "nvidia.com/gpu");
	assert_int_equal(json_array_size(ids), 2);
	assert_int_equal(l->devices[ledger_find(l, json_string_value(json_array_get(ids, 0)))].gpu,
			 0);
	assert_int_equal(l->devices[ledger_find(l, json_string_value(json_array_get(ids, 1)))].gpu,
			 1);
	admission_decision_release(&d);
	json_decref(pod);
	ledger_free(l);
	json_decref(n);
}

/* MPS refuses more than one replica whatever the flag says (v0.17 ValidateRequest). */
static void mps_always(void **state)
{
	(void)state;
	json_t *n = fx_node("n", "Tesla T4", 2, NULL, NULL);
	struct ledger *l = fx_ledger(n, CFG_MPS);
	json_t *pod = pod1("n", "nvidia.com/gpu", 2);
	struct admission_decision d;

	assert_true(l->fail_over_one);
	decide(l, pod, &d);
	assert_false(d.admit);
	assert_string_equal(d.message, SHARED_2);
	admission_decision_release(&d);
	json_decref(pod);
	ledger_free(l);
	json_decref(n);
}

static void over_capacity(void **state)
{
	(void)state;
	json_t *n = fx_node("lab-node-0", "NVIDIA A100-SXM4-80GB", 2, NULL, NULL);
	struct ledger *l = fx_ledger(n, NULL);
	json_t *pod = pod1("lab-node-0", "nvidia.com/gpu", 3);
	struct admission_decision d;
	struct gs_error err;

	decide(l, pod, &d);
	assert_false(d.admit);
	assert_string_equal(d.reason, "UnexpectedAdmissionError");
	assert_string_equal(d.message,
			    "Allocate failed due to requested number of devices "
			    "unavailable for nvidia.com/gpu. Requested: 3, Available: 2, "
			    "which is unexpected");
	admission_decision_release(&d);
	json_decref(pod);
	/* One held: a pod for 2 sees 1 available. Whole GPUs go lowest index first. */
	pod = pod1("lab-node-0", "nvidia.com/gpu", 1);
	decide(l, pod, &d);
	assert_true(d.admit);
	assert_string_equal(
		json_string_value(json_array_get(json_object_get(d.devices, "nvidia.com/gpu"), 0)),
		l->devices[0].id);
	assert_int_equal(ledger_hold(l, "gpu-share/first", d.devices, &err), 0);
	admission_decision_release(&d);
	json_decref(pod);
	pod = pod1("lab-node-0", "nvidia.com/gpu", 2);
	decide(l, pod, &d);
	assert_false(d.admit);
	assert_non_null(strstr(d.message, "Requested: 2, Available: 1,"));
	admission_decision_release(&d);
	json_decref(pod);
	ledger_free(l);
	json_decref(n);
}

/*
 * A pod of `init` and `apps` (JSON arrays) on l: admitted holding `devices`
 * IDs of nvidia.com/gpu when `says` is NULL, else refused with `says` in
 * its message.
 */
static void expect_pod(const struct ledger *l, const char *init, const char *apps, size_t devices,
		       const char *says)
{
	json_t *pod = fx_pod("ns", "p", "n", init, apps);
	struct admission_decision d;

	decide(l, pod, &d);
	if (says) {
		assert_false(d.admit);
		assert_non_null(strstr(d.message, says));
	} else {
		assert_true(d.admit);
		assert_int_equal(json_array_size(json_object_get(d.devices, "nvidia.com/gpu")),
				 devices);
	}
	admission_decision_release(&d);
	json_decref(pod);
}

/*
 * Init containers' devices are reused by app containers; app containers add
 * up; a sidecar keeps its GPU, so the plain init container's one is all an
 * app container reuses.
 */
static void containers_count_as_kubelet(void **state)
{
	(void)state;
	json_t *n = fx_node("n", "NVIDIA A100-SXM4-80GB", 2, NULL, NULL);
	struct ledger *l = fx_ledger(n, NULL);
	char init[600], apps[600];

	snprintf(init, sizeof(init), "[%s]", fx_ask(b1, sizeof(b1), "init", "nvidia.com/gpu", 2));
	snprintf(apps, sizeof(apps), "[%s]", fx_ask(b2, sizeof(b2), "main", "nvidia.com/gpu", 2));
	expect_pod(l, init, apps, 2, NULL);

	snprintf(apps, sizeof(apps), "[%s,%s]", fx_ask(b1, sizeof(b1), "a", "nvidia.com/gpu", 1),
		 fx_ask(b2, sizeof(b2), "b", "nvidia.com/gpu", 1));
	expect_pod(l, NULL, apps, 2, NULL);
	snprintf(apps, sizeof(apps), "[%s,%s]", fx_ask(b1, sizeof(b1), "a", "nvidia.com/gpu", 2),
		 fx_ask(b2, sizeof(b2), "b", "nvidia.com/gpu", 1));
	expect_pod(l, NULL, apps, 0, "Requested: 1, Available: 0,");

	snprintf(init, sizeof(init),
		 "[{\"name\":\"side\",\"restartPolicy\":\"Always\",\"resources\":"
		 "{\"limits\":{\"nvidia.com/gpu\":1}}},%s]",
		 fx_ask(b1, sizeof(b1), "init", "nvidia.com/gpu", 1));
	snprintf(apps, sizeof(apps), "[%s]", fx_ask(b2, sizeof(b2), "main", "nvidia.com/gpu", 1));
	expect_pod(l, init, apps, 2, NULL);
	snprintf(apps, sizeof(apps), "[%s]", fx_ask(b2, sizeof(b2), "main", "nvidia.com/gpu", 2));
	expect_pod(l, init, apps, 0, "Requested: 1, Available: 0,");
	ledger_free(l);
	json_decref(n);
}

/* A quantity past int64 is an error the caller can act on, not a stale message. */
static void quantity_out_of_range(void **state)
{
	(void)state;
	json_t *n = fx_node("n", "NVIDIA A100-SXM4-80GB", 2, NULL, NULL);
	struct ledger *l = fx_ledger(n, NULL);
	struct admission_decision d;
	struct gs_error err = {0};
	json_t *pod = fx_pod("ns", "p", "n", NULL,
			     "[{\"name\":\"main\",\"resources\":{\"limits\":"
			     "{\"nvidia.com/gpu\":\"10E\"}}}]");

	assert_int_equal(admission_decide(l, pod, &d, &err), -1);
	assert_string_equal(err.msg, "container \"main\": nvidia.com/gpu: quantity out of range");
	json_decref(pod);
	ledger_free(l);
	json_decref(n);
}

/* renameByDefault: nvidia.com/gpu shows 0 (registered before): the predicate's OutOf. */
static void vanished_resource(void **state)
{
	(void)state;
	json_t *n = fx_node("n", "Tesla T4", 2, NULL,
			    "\"gpushare.io/managed-resources\":\"nvidia.com/gpu\"");
	struct ledger *l = fx_ledger(n, CFG_RENAMED);
	json_t *pod = pod1("n", "nvidia.com/gpu", 1);
	struct admission_decision d;

	decide(l, pod, &d);
	assert_false(d.admit);
	assert_string_equal(d.reason, "OutOfnvidia.com/gpu");
	assert_string_equal(d.message, "Node didn't have enough resource: nvidia.com/gpu, "
				       "requested: 1, used: 0, capacity: 0");
	admission_decision_release(&d);
	json_decref(pod);
	/* The shared name is served; one never advertised passes (removeMissingExtendedResources).
	 */
	pod = pod1("n", "nvidia.com/gpu.shared", 1);
	decide(l, pod, &d);
	assert_true(d.admit);
	admission_decision_release(&d);
	json_decref(pod);
	pod = pod1("n", "example.com/foo", 3);
	decide(l, pod, &d);
	assert_true(d.admit);
	assert_int_equal(json_object_size(d.devices), 0);
	admission_decision_release(&d);
	json_decref(pod);
	ledger_free(l);
	json_decref(n);
}

/* From objects, as the controller calls it: holders with and without records, the cache. */
static void from_objects(void **state)
{
	(void)state;
	const char *cm_text =
		"{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{"
		"\"name\":\"device-plugin-configs\",\"namespace\":\"gpu-share\","
		"\"uid\":\"cm1\",\"resourceVersion\":\"%s\"},\"data\":{\"shared\":%s}}";
	char cmbuf[2048];
	json_t *cfg = json_string(CFG_SHARED), *cm, *holders = json_array(), *pod, *h;
	char *cfgjson = json_dumps(cfg, JSON_ENCODE_ANY);
	json_t *n = fx_node("lab-node-1", "Tesla T4", 2,
			    "\"nvidia.com/device-plugin.config\":\"shared\"", NULL);
	struct admission_ctx *ctx = admission_ctx_new(fx_cat(), NULL);
	struct admission_decision d;
	struct gs_error err;
	struct ledger *l = fx_ledger(n, CFG_SHARED);
	const char *got;

	snprintf(cmbuf, sizeof(cmbuf), cm_text, "1", cfgjson);
	cm = json_loads(cmbuf, 0, NULL);
	assert_non_null(cm);
	/* Three 1-slice holders without records: they get G0::0, G1::0, G0::1 in order. */
	for (int i = 0; i < 3; i++) {
		char name[16];
		snprintf(name, sizeof(name), "h%d", i);
		json_array_append_new(holders, h = pod1("lab-node-1", "nvidia.com/gpu", 1));
		json_object_set_new(json_object_get(h, "metadata"), "name", json_string(name));
		json_object_set_new(json_object_get(h, "metadata"), "uid", json_string(name));
	}
	pod = pod1("lab-node-1", "nvidia.com/gpu", 1);
	assert_int_equal(admission_ctx_decide(ctx, n, cm, pod, holders, &d, &err), 0);
	assert_true(d.admit);
	got = json_string_value(json_array_get(json_object_get(d.devices, "nvidia.com/gpu"), 0));
	assert_string_equal(got, l->devices[5].id); /* GPU 1, replica 1 */
	admission_decision_release(&d);
	/*
	 * A record on h2 naming G1::1: records are held first, then h0 gets G0::0 and
	 * h1 (G0 1 taken, G1 1 taken: a tie, lowest index) G0::1, so the pod gets G1::0.
	 */
	{
		char *ann = gs_xasprintf("{\"nvidia.com/gpu\":[\"%s\"]}", l->devices[5].id);
		json_object_set_new(json_object_get(json_array_get(holders, 2), "metadata"),
				    "annotations", json_pack("{s:s}", LEDGER_ANN_DEVICES, ann));
		free(ann);
	}
	assert_int_equal(admission_ctx_decide(ctx, n, cm, pod, holders, &d, &err), 0);
	got = json_string_value(json_array_get(json_object_get(d.devices, "nvidia.com/gpu"), 0));
	assert_string_equal(got, l->devices[4].id); /* GPU 1, replica 0 */
	admission_decision_release(&d);
	/* Two slices: refused, with the plugin's words. */
	json_decref(pod);
	pod = pod1("lab-node-1", "nvidia.com/gpu", 2);
	assert_int_equal(admission_ctx_decide(ctx, n, cm, pod, holders, &d, &err), 0);
	assert_false(d.admit);
	assert_string_equal(d.message, SHARED_2);
	admission_decision_release(&d);
	/* The ConfigMap changes (new resourceVersion): flag off, 2 slices pass. */
	json_decref(cm);
	json_decref(cfg);
	free(cfgjson);
	cfg = json_string(CFG_TS_LOOSE);
	cfgjson = json_dumps(cfg, JSON_ENCODE_ANY);
	snprintf(cmbuf, sizeof(cmbuf), cm_text, "2", cfgjson);
	cm = json_loads(cmbuf, 0, NULL);
	assert_int_equal(admission_ctx_decide(ctx, n, cm, pod, holders, &d, &err), 0);
	assert_true(d.admit);
	admission_decision_release(&d);
	json_decref(pod);
	json_decref(cm);
	json_decref(cfg);
	free(cfgjson);
	json_decref(holders);
	admission_ctx_free(ctx);
	ledger_free(l);
	json_decref(n);
}

/*
 * A replica the device plugin marked unhealthy (gpushare.io/gpu-health, docs/guide/faults.md) is
 * never handed out: 2 T4 x 4 replicas with Xid 79 on GPU 0 leave 7; seven holders take them
 * and an eighth pod is refused, as the kubelet allocates healthy devices only.
 */
static void unhealthy_device_not_handed_out(void **state)
{
	(void)state;
	char cmbuf[2048];
	json_t *cfg = json_string(CFG_SHARED), *cm, *holders = json_array(), *pod, *h;
	char *cfgjson = json_dumps(cfg, JSON_ENCODE_ANY);
	json_t *n = fx_node("lab-node-1", "Tesla T4", 2,
			    "\"nvidia.com/device-plugin.config\":\"shared\"",
			    "\"gpushare.io/gpu-health\":\"0=xid:79\"");
	struct admission_ctx *ctx = admission_ctx_new(fx_cat(), NULL);
	struct admission_decision d;
	struct gs_error err;

	snprintf(cmbuf, sizeof(cmbuf),
		 "{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{"
		 "\"name\":\"device-plugin-configs\",\"namespace\":\"gpu-share\","
		 "\"uid\":\"cm1\",\"resourceVersion\":\"1\"},\"data\":{\"shared\":%s}}",
		 cfgjson);
	cm = json_loads(cmbuf, 0, NULL);
	assert_non_null(cm);
	for (int i = 0; i < 7; i++) {
		char name[16];
		snprintf(name, sizeof(name), "h%d", i);
		json_array_append_new(holders, h = pod1("lab-node-1", "nvidia.com/gpu", 1));
		json_object_set_new(json_object_get(h, "metadata"), "name", json_string(name));
		json_object_set_new(json_object_get(h, "metadata"), "uid", json_string(name));
	}
	pod = pod1("lab-node-1", "nvidia.com/gpu", 1);
	assert_int_equal(admission_ctx_decide(ctx, n, cm, pod, holders, &d, &err), 0);
	assert_false(d.admit);
	admission_decision_release(&d);
	/* Six holders: the pod gets the one healthy replica left, never GPU 0's ::3. */
	json_array_remove(holders, 6);
	assert_int_equal(admission_ctx_decide(ctx, n, cm, pod, holders, &d, &err), 0);
	assert_true(d.admit);
	{
		struct ledger *l = fx_ledger(n, CFG_SHARED);
		assert_string_equal(l->devices[3].id + strlen(l->devices[3].id) - 3, "::3");
		assert_int_equal(l->devices[3].gpu, 0);
		assert_string_not_equal(json_string_value(json_array_get(
						json_object_get(d.devices, "nvidia.com/gpu"), 0)),
					l->devices[3].id);
		ledger_free(l);
	}
	admission_decision_release(&d);
	json_decref(pod);
	json_decref(cm);
	json_decref(cfg);
	free(cfgjson);
	json_decref(holders);
	admission_ctx_free(ctx);
	json_decref(n);
}

/*
 * The layout the GPUs hold, not the one the label asks for: after a failed
 * MIG walk (mig-manager's record keeps all-1g.10gb applied under a label of
 * all-3g.40gb) the plugin serves 1g.10gb devices and a pod asking for one
 * gets one; while a walk is pending the plugin is off and nothing is handed
 * out.
 */
static void mig_layout_as_held(void **state)
{
	(void)state;
	const char *mixed = "version: v1\nflags:\n  migStrategy: mixed\n";
	json_t *cfg = json_string(mixed), *cm, *holders = json_array(), *pod, *ids;
	char *cfgjson = json_dumps(cfg, JSON_ENCODE_ANY), cmbuf[1024];
	json_t *n = fx_node("mig-node", "NVIDIA A100-SXM4-80GB", 1,
			    "\"nvidia.com/device-plugin.config\":\"mixed\","
			    "\"nvidia.com/mig.config\":\"all-3g.40gb\"",
			    "\"gpushare.io/mig-reconfigure\":"
			    "\"{\\\"applied\\\":\\\"all-1g.10gb\\\",\\\"config\\\":"
			    "\\\"all-3g.40gb\\\"}\"");
	json_t *held = fx_node("mig-node", "NVIDIA A100-SXM4-80GB", 1,
			       "\"nvidia.com/mig.config\":\"all-1g.10gb\"", NULL);
	struct ledger *l = fx_ledger(held, mixed);
	struct admission_ctx *ctx = admission_ctx_new(fx_cat(), NULL);
	struct admission_decision d;
	struct gs_error err;

	snprintf(cmbuf, sizeof(cmbuf),
		 "{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{"
		 "\"name\":\"device-plugin-configs\",\"namespace\":\"gpu-share\","
		 "\"uid\":\"cm1\",\"resourceVersion\":\"1\"},\"data\":{\"mixed\":%s}}",
		 cfgjson);
	cm = json_loads(cmbuf, 0, NULL);
	assert_non_null(cm);
	pod = pod1("mig-node", "nvidia.com/mig-1g.10gb", 1);
	assert_int_equal(admission_ctx_decide(ctx, n, cm, pod, holders, &d, &err), 0);
	assert_true(d.admit);
	ids = json_object_get(d.devices, "nvidia.com/mig-1g.10gb");
	assert_int_equal(json_array_size(ids), 1);
	assert_true(ledger_find(l, json_string_value(json_array_get(ids, 0))) >= 0);
	admission_decision_release(&d);

	/* A walk under way: the plugin is off, the kubelet's devices unhealthy. */
	json_object_set_new(json_object_get(json_object_get(n, "metadata"), "annotations"),
			    "gpushare.io/mig-reconfigure",
			    json_string("{\"applied\":\"all-1g.10gb\",\"config\":\"all-3g.40gb\","
					"\"pausedAt\":\"2026-01-01T00:00:00Z\",\"since\":"
					"\"2026-01-01T00:00:00Z\",\"step\":\"pending\"}"));
	assert_int_equal(admission_ctx_decide(ctx, n, cm, pod, holders, &d, &err), 0);
	assert_false(d.admit);
	assert_non_null(strstr(d.message, "Requested: 1, Available: 0"));
	admission_decision_release(&d);
	json_decref(pod);
	json_decref(cm);
	json_decref(cfg);
	free(cfgjson);
	json_decref(holders);
	admission_ctx_free(ctx);
	ledger_free(l);
	json_decref(held);
	json_decref(n);
}

/*
 * A resource the node still shows at 0 that the record of what gpushare
 * advertises has dropped (migStrategy mixed, then none: nvidia.com/mig-1g.10gb
 * was written 0): the kubelet's predicate refuses a pod asking for it, as
 * for any resource the node shows at 0; it is not one the node never had.
 */
static void shown_at_zero_refused(void **state)
{
	(void)state;
	const char *none = "version: v1\nflags:\n  migStrategy: none\n";
	json_t *cfg = json_string(none), *cm, *holders = json_array(), *pod;
	char *cfgjson = json_dumps(cfg, JSON_ENCODE_ANY), cmbuf[1024];
	json_t *n = fx_node("mig-node", "NVIDIA A100-SXM4-80GB", 1,
			    "\"nvidia.com/device-plugin.config\":\"plain\","
			    "\"nvidia.com/mig.config\":\"all-1g.10gb\"",
			    "\"gpushare.io/managed-resources\":\"nvidia.com/gpu\"");
	struct admission_ctx *ctx = admission_ctx_new(fx_cat(), NULL);
	struct admission_decision d;
	struct gs_error err;

	json_object_set_new(n, "status",
			    json_pack("{s:{s:s,s:s}}", "capacity", "nvidia.com/gpu", "1",
				      "nvidia.com/mig-1g.10gb", "0"));
	snprintf(cmbuf, sizeof(cmbuf),
		 "{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{"
		 "\"name\":\"device-plugin-configs\",\"namespace\":\"gpu-share\","
		 "\"uid\":\"cm1\",\"resourceVersion\":\"1\"},\"data\":{\"plain\":%s}}",
		 cfgjson);
	cm = json_loads(cmbuf, 0, NULL);
	assert_non_null(cm);
	pod = pod1("mig-node", "nvidia.com/mig-1g.10gb", 1);
	assert_int_equal(admission_ctx_decide(ctx, n, cm, pod, holders, &d, &err), 0);
	assert_false(d.admit);
	assert_string_equal(d.reason, "OutOfnvidia.com/mig-1g.10gb");
	admission_decision_release(&d);
	json_decref(pod);
	json_decref(cm);
	json_decref(cfg);
	free(cfgjson);
	json_decref(holders);
	admission_ctx_free(ctx);
	json_decref(n);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(two_slices_refused),
		cmocka_unit_test(unhealthy_device_not_handed_out),
		cmocka_unit_test(loose_time_slicing),
		cmocka_unit_test(mps_always),
		cmocka_unit_test(over_capacity),
		cmocka_unit_test(containers_count_as_kubelet),
		cmocka_unit_test(quantity_out_of_range),
		cmocka_unit_test(vanished_resource),
		cmocka_unit_test(from_objects),
		cmocka_unit_test(mig_layout_as_held),
		cmocka_unit_test(shown_at_zero_refused),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
