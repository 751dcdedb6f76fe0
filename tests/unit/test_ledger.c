#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/admission.h"
#include "dra/draslice.h"
#include "model/kobj.h"
#include "ledger_fixture.h"

/*
 * The device IDs of the seed's nodes and the plugin's distributed policy
 * (k8s-device-plugin v0.17 internal/rm/allocate.go) over a sequence of pods
 * on a 2-GPU x 4-replica node.
 */

static void t4_replicas(void **state)
{
	(void)state;
	json_t *n = fx_node("lab-node-1", "Tesla T4", 2, NULL, NULL);
	struct ledger *l = fx_ledger(n, CFG_SHARED);
	char uuid0[64], uuid1[64], want[96];
	size_t free_n;

	draslice_gpu_uuid("lab-node-1", 0, uuid0, sizeof(uuid0));
	draslice_gpu_uuid("lab-node-1", 1, uuid1, sizeof(uuid1));
	assert_int_equal(l->n_gpus, 2);
	assert_int_equal(l->n_devices, 8);
	assert_true(l->fail_over_one);
	assert_int_equal(ledger_count(l, "nvidia.com/gpu", &free_n), 8);
	assert_int_equal(free_n, 8);
	for (int g = 0; g < 2; g++)
		for (int k = 0; k < 4; k++) {
			const struct ledger_device *d = &l->devices[g * 4 + k];
			snprintf(want, sizeof(want), "%s::%d", g ? uuid1 : uuid0, k);
			assert_string_equal(d->id, want);
			assert_int_equal(d->gpu, g);
			assert_int_equal(d->replica, k);
			assert_null(d->profile);
		}
	assert_string_not_equal(uuid0, uuid1);
	assert_int_equal(strncmp(uuid0, "GPU-", 4), 0);
	ledger_free(l);
	json_decref(n);
}

/* Admit a 1-slice pod and hold what it gets; returns the GPU of its one device. */
static int admit_one(struct ledger *l, json_t *pods, const char *name)
{
	char c[256];
	json_t *pod = fx_pod("team", name, l->node, NULL,
			     (snprintf(c, sizeof(c), "[%s]",
				       fx_ask((char[200]){0}, 200, "main", "nvidia.com/gpu", 1)),
			      c));
	struct admission_decision d;
	struct gs_error err;
	char *key = ledger_pod_key(pod), *ann;
	const char *id;
	long idx;

	assert_int_equal(admission_decide(l, pod, &d, &err), 0);
	assert_true(d.admit);
	assert_int_equal(ledger_hold(l, key, d.devices, &err), 0);
	ann = ledger_annotation_format(d.devices);
	json_object_set_new(
		json_object_get(pod, "metadata"), "annotations",
		json_pack("{s:s, s:s}", LEDGER_ANN_ADMITTED, "true", LEDGER_ANN_DEVICES, ann));
	json_array_append(pods, pod);
	id = json_string_value(json_array_get(json_object_get(d.devices, "nvidia.com/gpu"), 0));
	idx = ledger_find(l, id);
	assert_true(idx >= 0);
	free(ann);
	free(key);
	admission_decision_release(&d);
	json_decref(pod);
	return l->devices[idx].gpu;
}

static char *dump(const struct ledger *l)
{
	json_t *j = ledger_to_json(l);
	char *s = json_dumps(j, JSON_SORT_KEYS | JSON_COMPACT);
	json_decref(j);
	return s;
}

static void distributed_sequence(void **state)
{
	(void)state;
	json_t *n = fx_node("lab-node-1", "Tesla T4", 2, NULL, NULL);
	struct ledger *l = fx_ledger(n, CFG_SHARED), *again;
	json_t *pods = json_array();
	struct gs_warnings w;
	char name[32], *a, *b;
	int want[] = {0, 1, 0, 1, 0, 1};

	/* Each pick goes to the GPU with the fewest replicas taken: they alternate. */
	for (int i = 0; i < 6; i++) {
		snprintf(name, sizeof(name), "p%d", i);
		assert_int_equal(admit_one(l, pods, name), want[i]);
	}
	/* p0 (GPU 0) ends: GPU 0 has 2 taken, GPU 1 has 3; the next goes to GPU 0. */
	assert_int_equal(ledger_release(l, "team/p0"), 1);
	json_array_remove(pods, 0);
	assert_int_equal(admit_one(l, pods, "p6"), 0);
	assert_int_equal(admit_one(l, pods, "p7"), 0);
	assert_int_equal(admit_one(l, pods, "p8"), 1);
	{
		size_t f;
		assert_int_equal(ledger_count(l, "nvidia.com/gpu", &f), 8);
		assert_int_equal(f, 0);
	}

	/* After a restart: the holdings rebuilt from the pods equal the incremental ones. */
	again = fx_ledger(n, CFG_SHARED);
	gs_warnings_init(&w);
	ledger_rebuild(again, pods, &w);
	assert_int_equal(w.n, 0);
	a = dump(l);
	b = dump(again);
	assert_string_equal(a, b);
	free(a);
	free(b);

	/* Nothing held twice: every ID appears in exactly one pod's annotation. */
	for (size_t d = 0; d < l->n_devices; d++) {
		int holders = 0;
		size_t i;
		json_t *p;

		json_array_foreach (pods, i, p) {
			const char *ann = kobj_annotation(p, LEDGER_ANN_DEVICES);
			holders += strstr(ann, l->devices[d].id) != NULL;
		}
		assert_int_equal(holders, 1);
	}
	/* A second claim on a held ID is refused and changes nothing. */
	{
		struct gs_error err;
		json_t *steal = json_pack("{s:[s]}", "nvidia.com/gpu", l->devices[0].id);
		a = dump(l);
		assert_int_equal(ledger_hold(l, "other/thief", steal, &err), -1);
		assert_non_null(strstr(err.msg, "is held by"));
		b = dump(l);
		assert_string_equal(a, b);
		free(a);
		free(b);
		json_decref(steal);
	}
	/* A pod that ended holds nothing after a rebuild. */
	json_object_set_new(json_object_get(json_array_get(pods, 0), "status"), "phase",
			    json_string("Succeeded"));
	ledger_rebuild(again, pods, &w);
	{
		size_t f;
		ledger_count(again, "nvidia.com/gpu", &f);
		assert_int_equal(f, 1);
	}
	gs_warnings_release(&w);
	ledger_free(again);
	ledger_free(l);
	json_decref(pods);
	json_decref(n);
}

/* A conflicting annotation found on rebuild: the later pod holds nothing, with a warning. */
static void rebuild_conflict(void **state)
{
	(void)state;
	json_t *n = fx_node("lab-node-1", "Tesla T4", 2, NULL, NULL);
	struct ledger *l = fx_ledger(n, CFG_SHARED);
	json_t *pods = json_array();
	struct gs_warnings w;
	json_t *held = json_pack("{s:[s]}", "nvidia.com/gpu", l->devices[0].id);
	char *ann = ledger_annotation_format(held);
	json_t *a = fx_pod("a", "x", "lab-node-1", NULL, "[]"),
	       *b = fx_pod("b", "y", "lab-node-1", NULL, "[]");
	json_t *bad = fx_pod("c", "z", "lab-node-1", NULL, "[]");

	json_object_set_new(
		json_object_get(a, "metadata"), "annotations",
		json_pack("{s:s, s:s}", LEDGER_ANN_ADMITTED, "true", LEDGER_ANN_DEVICES, ann));
	json_object_set_new(
		json_object_get(b, "metadata"), "annotations",
		json_pack("{s:s, s:s}", LEDGER_ANN_ADMITTED, "true", LEDGER_ANN_DEVICES, ann));
	json_object_set_new(json_object_get(bad, "metadata"), "annotations",
			    json_pack("{s:s, s:s}", LEDGER_ANN_ADMITTED, "true", LEDGER_ANN_DEVICES,
				      "{\"nvidia.com/gpu\":[1]}"));
	json_array_append_new(pods, a);
	json_array_append_new(pods, b);
	json_array_append_new(pods, bad);
	gs_warnings_init(&w);
	ledger_rebuild(l, pods, &w);
	assert_int_equal(w.n, 2);
	assert_non_null(strstr(w.items[0], "pod b/y"));
	assert_non_null(strstr(w.items[0], "is held by a/x"));
	assert_non_null(strstr(w.items[1], "expected a device ID string"));
	assert_string_equal(l->devices[0].holder, "a/x");
	gs_warnings_release(&w);
	free(ann);
	json_decref(held);
	ledger_free(l);
	json_decref(pods);
	json_decref(n);
}

static void mig_by_placement(void **state)
{
	(void)state;
	json_t *n = fx_node(
		"lab-node-2", "NVIDIA A100-SXM4-80GB", 1,
		"\"nvidia.com/mig.strategy\":\"mixed\",\"nvidia.com/mig.config\":\"all-1g.10gb\"",
		NULL);
	struct ledger *l = fx_ledger(n, NULL);

	assert_int_equal(l->n_devices, 7);
	for (size_t i = 0; i < 7; i++) {
		assert_string_equal(l->devices[i].resource, "nvidia.com/mig-1g.10gb");
		assert_string_equal(l->devices[i].profile, "1g.10gb");
		assert_int_equal(l->devices[i].mig_start, (int)i);
		assert_int_equal(l->devices[i].replica, -1);
		assert_int_equal(strncmp(l->devices[i].id, "MIG-", 4), 0);
		for (size_t j = 0; j < i; j++)
			assert_string_not_equal(l->devices[i].id, l->devices[j].id);
	}
	assert_true(l->gpus[0].mig_enabled);
	ledger_free(l);
	json_decref(n);
}

static void annotation_roundtrip(void **state)
{
	(void)state;
	struct gs_error err;
	json_t *v = ledger_annotation_parse("{\"nvidia.com/mig-1g.10gb\":[\"MIG-a\"],\"nvidia.com/"
					    "gpu\":[\"GPU-b::1\",\"GPU-c::0\"]}",
					    &err);
	char *s;

	assert_non_null(v);
	s = ledger_annotation_format(v);
	assert_string_equal(s, "{\"nvidia.com/gpu\":[\"GPU-b::1\",\"GPU-c::0\"],\"nvidia.com/"
			       "mig-1g.10gb\":[\"MIG-a\"]}");
	free(s);
	json_decref(v);
	assert_null(ledger_annotation_parse("{\"nvidia.com/gpu\":\"x\"}", &err));
	assert_non_null(strstr(err.msg, "expected a list of device IDs"));
	assert_null(ledger_annotation_parse("{\"a\":[],\"a\":[]}", &err));
	assert_null(ledger_annotation_parse("[", &err));
	assert_int_equal(
		strncmp(err.msg, LEDGER_ANN_DEVICES ": 1:", strlen(LEDGER_ANN_DEVICES) + 4), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(t4_replicas),		cmocka_unit_test(distributed_sequence),
		cmocka_unit_test(rebuild_conflict),	cmocka_unit_test(mig_by_placement),
		cmocka_unit_test(annotation_roundtrip),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
