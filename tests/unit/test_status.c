#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/kobj.h"
#include "engine/ledger.h"
#include "engine/status.h"

/*
 * status_build on a recording of the lab's cluster (kubectl get
 * configmap,nodes,pods -o json; tests/golden/status-lab/why says what was
 * added to it).
 */

#define RECORDING "tests/golden/status-lab/list.json"

static json_t *items(const char *kind)
{
	json_error_t je;
	json_t *list = json_load_file(RECORDING, 0, &je), *out = json_array(), *it;
	size_t i;

	if (!list)
		fail_msg("%s: %s", RECORDING, je.text);
	json_array_foreach (json_object_get(list, "items"), i, it)
		if (kobj_is(it, kind))
			json_array_append(out, it);
	json_decref(list);
	return out;
}

static json_t *build(const json_t *pods)
{
	const struct catalog *cat;
	json_t *nodes = items("Node"), *cms = items("ConfigMap"), *st;
	struct gs_warnings w;
	struct gs_error err;

	gs_warnings_init(&w);
	if (catalog_builtin(&cat, &err) ||
	    status_build(cat, json_array_get(cms, 0), nodes, pods, NULL, NULL, &st, &w, &err))
		fail_msg("status: %s", err.msg);
	assert_int_equal(w.n, 0);
	gs_warnings_release(&w);
	json_decref(nodes);
	json_decref(cms);
	return st;
}

static const json_t *node(const json_t *st, const char *name)
{
	size_t i;
	json_t *n;

	json_array_foreach (json_object_get(st, "nodes"), i, n)
		if (!strcmp(kobj_text(n, "node"), name))
			return n;
	fail_msg("no node %s", name);
	return NULL;
}

static void lab_holdings(void **state)
{
	(void)state;
	json_t *pods = items("Pod"), *st = build(pods);
	const json_t *n1 = node(st, "lab-node-1"), *g0, *sh;

	assert_int_equal(json_array_size(json_object_get(st, "nodes")), 3);
	assert_int_equal(
		json_integer_value(json_object_get(
			json_object_get(kobj_map(n1, "resources"), "nvidia.com/gpu"), "free")),
		4);
	g0 = json_array_get(json_object_get(n1, "gpus"), 0);
	assert_int_equal(json_integer_value(json_object_get(g0, "held")), 2);
	assert_string_equal(json_string_value(json_array_get(json_object_get(g0, "namespaces"), 0)),
			    "gpu-share");
	assert_string_equal(json_string_value(json_array_get(json_object_get(g0, "namespaces"), 1)),
			    "team-a");
	sh = json_array_get(json_object_get(g0, "sharing"), 0);
	assert_string_equal(kobj_text(sh, "method"), "time-slicing");
	assert_string_equal(kobj_text(sh, "memory"), "no");
	assert_string_equal(kobj_text(sh, "fault"), "no");
	/* One namespace on lab-node-2's MIG instances: nothing shared across namespaces. */
	assert_int_equal(json_array_size(json_object_get(
				 json_array_get(json_object_get(node(st, "lab-node-2"), "gpus"), 0),
				 "sharing")),
			 0);
	assert_string_equal(json_string_value(json_array_get(
				    json_object_get(node(st, "lab-node-0"), "unrecorded"), 0)),
			    "gpu-share/batch-train");
	json_decref(st);
	json_decref(pods);
}

/* A pod that ended frees its slice; the table says so. */
static void ended_pod_frees(void **state)
{
	(void)state;
	json_t *pods = items("Pod"), *st, *p;
	size_t i;
	char *table;

	json_array_foreach (pods, i, p)
		if (!strcmp(kobj_text(p, "metadata.name"), "team-a-0"))
			json_object_set_new(json_object_get(p, "status"), "phase",
					    json_string("Succeeded"));
	st = build(pods);
	assert_int_equal(json_integer_value(json_object_get(
				 json_object_get(kobj_map(node(st, "lab-node-1"), "resources"),
						 "nvidia.com/gpu"),
				 "free")),
			 5);
	/* GPU 0 now has one namespace: no sharing line for it. */
	assert_int_equal(json_array_size(json_object_get(
				 json_array_get(json_object_get(node(st, "lab-node-1"), "gpus"), 0),
				 "sharing")),
			 0);
	table = status_table(st);
	assert_null(strstr(table, "team-a/team-a-0"));
	assert_non_null(strstr(table, "lab-node-1 GPU 1: namespaces gpu-share, team-a share it"));
	assert_null(strstr(table, "lab-node-1 GPU 0: namespaces"));
	free(table);
	json_decref(st);
	json_decref(pods);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(lab_holdings),
		cmocka_unit_test(ended_pod_frees),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
