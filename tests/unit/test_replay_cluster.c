/*
 * engine/replay_cluster: a live replay's places read from the objects a
 * cluster holds. The cluster here is the offline run written out as the
 * scheduler and gpushare's controller would leave it (spec.nodeName, the
 * gpushare.io/devices record with the plugin's replica IDs, PodScheduled
 * False for the pending): read back and measured, it gives the offline
 * run's places and points. Pods the controller has not admitted, records
 * that hold other than asked, and missing pods are refused by name.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/replay.h"
#include "engine/replay_cluster.h"
#include "engine/ledger.h"
#include "dra/draslice.h"
#include "model/names.h"

#define KEY "replay-t1"

static struct replay_node nodes[] = {
	{"g", 32000, 65536, 4, "T4"}, {"h", 16000, 65536, 2, "P100"}, {"cpu", 8000, 8192, 0, ""}};
static struct replay_task tasks[] = {
	{"a", 4000, 1024, 1, 1000, "", -1, -1, -1},  {"b", 2000, 1024, 1, 460, "", -1, -1, -1},
	{"c", 1000, 1024, 1, 250, "T4", -1, -1, -1}, {"d", 3000, 1024, 0, 0, "", -1, -1, -1},
	{"e", 8000, 1024, 2, 1000, "", -1, -1, -1},
};
static struct replay_trace tr = {nodes, 3, tasks, 5};
static const struct replay_opts opts = {.replicas = 4, .seed = 3, .inflate = 1.5};

/* The pods as the cluster shows them after the offline run's placements. */
static json_t *cluster_pods(const struct replay_result *off)
{
	json_t *pods = json_array();
	int next[3][8] = {{0}}; /* next replica ID per node and card */

	for (size_t i = 0; i < off->n_places; i++) {
		const struct replay_place *p = &off->places[i];
		json_t *pod = json_pack("{s:{s:s,s:s,s:{}},s:{},s:{s:s}}", "metadata", "name",
					p->name, "namespace", "ns", "annotations", "spec", "status",
					"phase", "Pending");
		if (!p->bound) {
			json_object_set_new(json_object_get(pod, "status"), "conditions",
					    json_pack("[{s:s,s:s,s:s,s:s}]", "type", "PodScheduled",
						      "status", "False", "reason", "Unschedulable",
						      "message", "0/3 nodes are available"));
			json_array_append_new(pods, pod);
			continue;
		}
		json_t *ids = json_array();
		for (int c = 0; c < p->n_cards; c++)
			for (int k = 0; k < p->replicas[c]; k++) {
				char uuid[64], id[80];
				draslice_gpu_uuid(nodes[p->node].name, p->cards[c], uuid,
						  sizeof(uuid));
				snprintf(id, sizeof(id), "%s::%d", uuid,
					 next[p->node][p->cards[c]]++);
				json_array_append_new(ids, json_string(id));
			}
		json_t *held = json_pack("{s:o}", "nvidia.com/gpu", ids);
		char *rec = json_dumps(held, JSON_COMPACT);
		json_decref(held);
		json_object_set_new(json_object_get(pod, "spec"), "nodeName",
				    json_string(nodes[p->node].name));
		json_t *ann = json_object_get(json_object_get(pod, "metadata"), "annotations");
		json_object_set_new(ann, LEDGER_ANN_ADMITTED, json_string("true"));
		if (p->n_cards)
			json_object_set_new(ann, LEDGER_ANN_DEVICES, json_string(rec));
		json_object_set_new(json_object_get(pod, "status"), "phase",
				    json_string("Running"));
		free(rec);
		json_array_append_new(pods, pod);
	}
	return pods;
}

struct fixture {
	const struct catalog *cat;
	struct replay_result *off, *live;
	json_t *cm, *nodes, *pods;
};

static int setup(void **state)
{
	struct fixture *f = calloc(1, sizeof(*f));
	struct gs_error err;
	char *text = replay_config_text(opts.replicas);

	if (catalog_builtin(&f->cat, &err) < 0 ||
	    replay_run(f->cat, &tr, &opts, &f->off, &err) < 0 ||
	    replay_prepare(&tr, &opts, &f->live, &err) < 0)
		return -1;
	f->cm = json_pack("{s:{s:s,s:s},s:{s:s}}", "metadata", "name", "device-plugin-configs",
			  "namespace", "gpu-share", "data", KEY, text);
	free(text);
	f->nodes = json_array();
	for (size_t i = 0; i < tr.n_nodes; i++)
		json_array_append_new(f->nodes, replay_node_object(&nodes[i], KEY));
	f->pods = cluster_pods(f->off);
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *f = *state;

	replay_result_free(f->off);
	replay_result_free(f->live);
	json_decref(f->cm);
	json_decref(f->nodes);
	json_decref(f->pods);
	free(f);
	return 0;
}

static json_t *pod_named(json_t *pods, const char *name)
{
	size_t i;
	json_t *p;

	json_array_foreach (pods, i, p)
		if (!strcmp(json_string_value(
				    json_object_get(json_object_get(p, "metadata"), "name")),
			    name))
			return p;
	return NULL;
}

static void same_as_offline(void **state)
{
	struct fixture *f = *state;
	struct gs_error err;
	char buf[512];

	assert_true(f->off->bound > 2 && f->off->pending > 0);
	if (replay_cluster_places(f->cat, &tr, f->live, f->cm, f->nodes, f->pods, &err) < 0 ||
	    replay_measure(&tr, f->live, &err) < 0)
		fail_msg("%s", gs_error_str(&err, buf, sizeof(buf)));
	for (size_t i = 0; i < f->off->n_places; i++) {
		const struct replay_place *a = &f->off->places[i], *b = &f->live->places[i];
		assert_int_equal(b->bound, a->bound);
		assert_int_equal(b->node, a->node);
		assert_int_equal(b->n_cards, a->n_cards);
		for (int c = 0; c < a->n_cards; c++) {
			assert_int_equal(b->cards[c], a->cards[c]);
			assert_int_equal(b->replicas[c], a->replicas[c]);
		}
		if (!a->bound)
			assert_string_equal(b->reason, "Unschedulable: 0/3 nodes are available");
	}
	assert_int_equal(f->live->bound, f->off->bound);
	assert_int_equal(f->live->n_points, f->off->n_points);
	assert_memory_equal(f->live->points, f->off->points,
			    f->off->n_points * sizeof(*f->off->points));
}

/* The first bound pod holding replicas. */
static const struct replay_place *a_gpu_pod(const struct replay_result *r)
{
	for (size_t i = 0; i < r->n_places; i++)
		if (r->places[i].bound && r->places[i].n_cards)
			return &r->places[i];
	return NULL;
}

static void refusals(void **state)
{
	struct fixture *f = *state;
	const struct replay_place *p = a_gpu_pod(f->off);
	json_t *pod = pod_named(f->pods, p->name);
	json_t *ann = json_object_get(json_object_get(pod, "metadata"), "annotations");
	json_t *rec = json_copy(json_object_get(ann, LEDGER_ANN_DEVICES));
	struct gs_error err;

	/* Bound, not admitted yet. */
	json_object_del(ann, LEDGER_ANN_ADMITTED);
	assert_int_equal(
		replay_cluster_places(f->cat, &tr, f->live, f->cm, f->nodes, f->pods, &err), -1);
	assert_non_null(strstr(err.msg, p->name));
	assert_non_null(strstr(err.msg, "not admitted yet"));
	json_object_set_new(ann, LEDGER_ANN_ADMITTED, json_string("true"));

	/* A record holding one replica fewer than asked. */
	json_t *ids = ledger_annotation_parse(json_string_value(rec), &err);
	json_array_remove(json_object_get(ids, "nvidia.com/gpu"), 0);
	char *text = json_dumps(ids, JSON_COMPACT);
	json_object_set_new(ann, LEDGER_ANN_DEVICES, json_string(text));
	free(text);
	json_decref(ids);
	assert_int_equal(
		replay_cluster_places(f->cat, &tr, f->live, f->cm, f->nodes, f->pods, &err), -1);
	assert_non_null(strstr(err.msg, p->name));
	assert_non_null(strstr(err.msg, "replicas of the node's cards, asks for"));
	json_object_set(ann, LEDGER_ANN_DEVICES, rec);

	/* Refused by the kubelet: not bound, its reason kept. */
	json_object_set_new(json_object_get(pod, "status"), "phase", json_string("Failed"));
	json_object_set_new(json_object_get(pod, "status"), "reason",
			    json_string("UnexpectedAdmissionError"));
	assert_int_equal(
		replay_cluster_places(f->cat, &tr, f->live, f->cm, f->nodes, f->pods, &err), 0);
	size_t k = (size_t)(p - f->off->places);
	assert_false(f->live->places[k].bound);
	assert_non_null(strstr(f->live->places[k].reason, "UnexpectedAdmissionError"));
	json_object_set_new(json_object_get(pod, "status"), "phase", json_string("Running"));

	/* A pod missing. */
	json_t *kept = json_copy(f->pods);
	json_array_remove(f->pods, 0);
	assert_int_equal(
		replay_cluster_places(f->cat, &tr, f->live, f->cm, f->nodes, f->pods, &err), -1);
	assert_non_null(strstr(err.msg, "not found"));
	json_decref(f->pods);
	f->pods = kept;
	json_decref(rec);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(same_as_offline),
		cmocka_unit_test(refusals),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
