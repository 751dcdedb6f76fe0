#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <stdlib.h>
#include <string.h>

#include "daemon/apply.h"

static json_t *obj(const char *text)
{
	json_error_t e;
	json_t *j = json_loads(text, 0, &e);
	assert_non_null(j);
	return j;
}

static void paths_of_namespaced_and_cluster_kinds(void **state)
{
	struct {
		const char *json, *coll, *item;
	} cases[] = {
		{"{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"team-over\","
		 "\"namespace\":\"team-a\"}}",
		 "/api/v1/namespaces/team-a/pods", "/api/v1/namespaces/team-a/pods/team-over"},
		{"{\"apiVersion\":\"v1\",\"kind\":\"ResourceQuota\",\"metadata\":{\"name\":\"gpu-"
		 "quota\","
		 "\"namespace\":\"team-a\"}}",
		 "/api/v1/namespaces/team-a/resourcequotas",
		 "/api/v1/namespaces/team-a/resourcequotas/gpu-quota"},
		/* kubectl's default namespace when the manifest names none */
		{"{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{\"name\":\"c\"}}",
		 "/api/v1/namespaces/default/configmaps",
		 "/api/v1/namespaces/default/configmaps/c"},
		{"{\"apiVersion\":\"v1\",\"kind\":\"Node\",\"metadata\":{\"name\":\"lab-node-2\"}}",
		 "/api/v1/nodes", "/api/v1/nodes/lab-node-2"},
		{"{\"apiVersion\":\"v1\",\"kind\":\"Namespace\",\"metadata\":{\"name\":\"gpu-"
		 "share\","
		 "\"namespace\":\"ignored\"}}",
		 "/api/v1/namespaces", "/api/v1/namespaces/gpu-share"},
		/* a named group lives under /apis */
		{"{\"apiVersion\":\"resource.k8s.io/v1\",\"kind\":\"ResourceClaim\","
		 "\"metadata\":{\"name\":\"shared-t4\",\"namespace\":\"dra-demo\"}}",
		 "/apis/resource.k8s.io/v1/namespaces/dra-demo/resourceclaims",
		 "/apis/resource.k8s.io/v1/namespaces/dra-demo/resourceclaims/shared-t4"},
	};
	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		json_t *o = obj(cases[i].json);
		char *coll = NULL, *item = NULL;
		struct gs_error err;

		assert_int_equal(apply_paths(o, &coll, &item, &err), 0);
		assert_string_equal(coll, cases[i].coll);
		assert_string_equal(item, cases[i].item);
		free(coll);
		free(item);
		json_decref(o);
	}
}

static void unsupported_or_unnamed_objects_fail(void **state)
{
	const char *bad[][2] = {
		{"{\"apiVersion\":\"apps/"
		 "v1\",\"kind\":\"Deployment\",\"metadata\":{\"name\":\"d\"}}",
		 "apps/v1 Deployment is not a kind gpushare applies"},
		{"{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{}}",
		 "Pod has no metadata.name"},
		{"{\"kind\":\"Pod\"}", "object has no apiVersion or kind"},
	};
	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		json_t *o = obj(bad[i][0]);
		char *item = NULL;
		struct gs_error err;

		assert_int_equal(apply_paths(o, NULL, &item, &err), -1);
		assert_null(item);
		assert_string_equal(err.msg, bad[i][1]);
		json_decref(o);
	}
}

static void result_names_are_kubectls(void **state)
{
	(void)state;
	assert_string_equal(apply_result_name(APPLY_CREATED), "created");
	assert_string_equal(apply_result_name(APPLY_CONFIGURED), "configured");
	assert_string_equal(apply_result_name(APPLY_UNCHANGED), "unchanged");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(paths_of_namespaced_and_cluster_kinds),
		cmocka_unit_test(unsupported_or_unnamed_objects_fail),
		cmocka_unit_test(result_names_are_kubectls),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
