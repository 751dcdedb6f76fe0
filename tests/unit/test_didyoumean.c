#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <stdio.h>
#include <string.h>

#include "base/didyoumean.h"

static void distance_counts_a_swap_as_one(void **state)
{
	(void)state;
	assert_int_equal(dym_distance("plan", "plan"), 0);
	assert_int_equal(dym_distance("plna", "plan"), 1);
	assert_int_equal(dym_distance("renameByDefualt", "renameByDefault"), 1);
	assert_int_equal(dym_distance("all-1g.10g", "all-1g.10gb"), 1);
	assert_int_equal(dym_distance("JSON", "json"), 0);
	assert_int_equal(dym_distance("", "abc"), 3);
	assert_int_equal(dym_distance("abc", ""), 3);
	assert_int_equal(dym_distance("ca", "abc"), 3); /* OSA: no edit of a swapped pair */
	assert_int_equal(dym_distance("kitten", "sitting"), 3);
}

static void too_long_is_far(void **state)
{
	char big[300];

	(void)state;
	memset(big, 'a', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	assert_true(dym_distance(big, "a") == (size_t)-1);
}

static const char *const formats[] = {"table", "json", "yaml"};

static void hint_and_choices(void **state)
{
	struct strbuf sb = STRBUF_INIT;

	(void)state;
	dym_suggest(&sb, "jsn", formats, 3, NULL);
	assert_string_equal(sb.buf, "; did you mean 'json'?");
	strbuf_reset(&sb);
	/* nothing close: only the choices */
	dym_suggest(&sb, "x", formats, 3, NULL);
	assert_string_equal(sb.buf, " (one of: table, json, yaml)");
	strbuf_release(&sb);
}

static void ties_at_most_three_best_first(void **state)
{
	static const char *const set[] = {"all-2g.20gb", "all-1g.10gb", "all-1g.20gb",
					  "all-1g.40gb", "all-1g.80gb", "all-1g.10gb.me"};
	const char *const *got;
	struct dym d;
	size_t n;

	(void)state;
	dym_init(&d, "all-1g.00gb");
	for (size_t i = 0; i < 6; i++)
		dym_offer(&d, set[i]);
	n = dym_result(&d, &got);
	assert_int_equal(n, 3);
	assert_string_equal(got[0], "all-1g.10gb");
	assert_string_equal(got[1], "all-1g.20gb");
	assert_string_equal(got[2], "all-1g.40gb");
}

static void large_set_points_to_a_listing(void **state)
{
	struct strbuf sb = STRBUF_INIT;
	char names[20][16];
	struct dym d;

	(void)state;
	dym_init(&d, "name7x");
	for (int i = 0; i < 20; i++) {
		snprintf(names[i], sizeof(names[i]), "name%d", i);
		dym_offer(&d, names[i]);
	}
	dym_add_choices(&d, &sb, "gpushare catalog");
	assert_string_equal(sb.buf, "; did you mean 'name7'? (see 'gpushare catalog')");
	strbuf_release(&sb);
}

static void far_names_are_not_suggested(void **state)
{
	struct dym d;
	const char *const *got;

	(void)state;
	dym_init(&d, "foo");
	dym_offer(&d, "yaml");
	dym_offer(&d, "fo"); /* one deletion away: close */
	assert_int_equal(dym_result(&d, &got), 1);
	dym_init(&d, "zz");
	dym_offer(&d, "z"); /* the whole candidate would change */
	dym_offer(&d, "ab");
	assert_int_equal(dym_result(&d, &got), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(distance_counts_a_swap_as_one),
		cmocka_unit_test(too_long_is_far),
		cmocka_unit_test(hint_and_choices),
		cmocka_unit_test(ties_at_most_three_best_first),
		cmocka_unit_test(large_set_points_to_a_listing),
		cmocka_unit_test(far_names_are_not_suggested),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
