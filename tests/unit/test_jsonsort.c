/* jsonsort: arrays put in order in place, the same array handed back. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <stdlib.h>
#include <string.h>

#include "base/jsonsort.h"

static void assert_json(const json_t *v, const char *want)
{
	char *got = json_dumps(v, JSON_COMPACT);

	assert_string_equal(got, want);
	free(got);
}

static void strings_in_strcmp_order(void **state)
{
	json_t *arr = json_pack("[s,s,s,s]", "team-b", "Team-a", "team-a", "");

	(void)state;
	assert_ptr_equal(jsonsort_strings(arr), arr);
	assert_json(arr, "[\"\",\"Team-a\",\"team-a\",\"team-b\"]");
	json_decref(arr);
	arr = json_array();
	assert_json(jsonsort_strings(arr), "[]");
	json_decref(arr);
}

/* Devices by name; an object without the member sorts as "". */
static void objects_by_a_member(void **state)
{
	json_t *arr = json_pack("[{s:s},{s:s},{s:i},{s:s}]", "name", "gpu-1", "name", "gpu-0",
				"name", 7, "name", "gpu-0-mig-1g10gb-0");

	(void)state;
	assert_ptr_equal(jsonsort_by_member(arr, "name"), arr);
	assert_json(arr, "[{\"name\":7},{\"name\":\"gpu-0\"},{\"name\":\"gpu-0-mig-1g10gb-0\"},"
			 "{\"name\":\"gpu-1\"}]");
	json_decref(arr);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(strings_in_strcmp_order),
		cmocka_unit_test(objects_by_a_member),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
