#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"

static void error_with_position(void **state)
{
	struct gs_error err;
	char buf[2048];

	(void)state;
	gs_error_at(&err, "pod.yaml", 3, 7, "mapping values are not allowed here");
	assert_string_equal(gs_error_str(&err, buf, sizeof(buf)),
			    "pod.yaml:3:7: mapping values are not allowed here");
	gs_error_prefix(&err, "unable to load config: ");
	assert_string_equal(
		gs_error_str(&err, buf, sizeof(buf)),
		"pod.yaml:3:7: unable to load config: mapping values are not allowed here");
}

static void error_without_position(void **state)
{
	struct gs_error err;
	char buf[2048];

	(void)state;
	gs_error_set(&err, "specified config %s does not exist", "mps");
	assert_string_equal(gs_error_str(&err, buf, sizeof(buf)),
			    "specified config mps does not exist");
}

static void warnings_grow_and_free(void **state)
{
	struct gs_warnings w;

	(void)state;
	gs_warnings_init(&w);
	for (int i = 0; i < 20; i++)
		gs_warnings_add(&w, "warning %d", i);
	assert_int_equal(w.n, 20);
	assert_string_equal(w.items[19], "warning 19");
	gs_warnings_release(&w);
	assert_int_equal(w.n, 0);
	assert_null(w.items);
}

/* A prefix longer than 511 bytes was cut; the message keeps all that fits. */
static void prefix_long(void **state)
{
	struct gs_error err;
	char prefix[701];

	(void)state;
	memset(prefix, 'p', sizeof(prefix) - 1);
	prefix[sizeof(prefix) - 1] = '\0';
	gs_error_set(&err, "tail");
	gs_error_prefix(&err, "%s: ", prefix);
	assert_int_equal(strlen(err.msg), 700 + 2 + 4);
	assert_string_equal(err.msg + 700, ": tail");
}

/* A message longer than its array ends on a whole UTF-8 character. */
static void cut_on_character(void **state)
{
	struct gs_error err;
	char text[sizeof(err.msg) + 8];

	(void)state;
	memset(text, 'x', sizeof(text));
	/* "é" (2 bytes) straddling the last byte that fits */
	text[sizeof(err.msg) - 2] = '\xc3';
	text[sizeof(err.msg) - 1] = '\xa9';
	text[sizeof(text) - 1] = '\0';
	gs_error_set(&err, "%s", text);
	assert_int_equal(strlen(err.msg), sizeof(err.msg) - 2);
	assert_int_equal(err.msg[sizeof(err.msg) - 3], 'x');
}

/* The shown error is one line, whatever the file name and the message quote. */
static void shown_on_one_line(void **state)
{
	struct gs_error err;
	char buf[256];

	(void)state;
	gs_error_at(&err, "a\nb.yaml", 3, 4, "unknown field \"x\n---\x1b[2J\"");
	assert_string_equal(gs_error_str(&err, buf, sizeof(buf)),
			    "a\\nb.yaml:3:4: unknown field \"x\\n---\\x1b[2J\"");
	gs_error_set(&err, "bad \xff byte\tand tab");
	assert_string_equal(gs_error_str(&err, buf, sizeof(buf)), "bad \\xff byte\\tand tab");
	/* Cut to the buffer, still a string. */
	gs_error_set(&err, "%s", "0123456789");
	assert_string_equal(gs_error_str(&err, buf, 5), "0123");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(error_with_position),	  cmocka_unit_test(error_without_position),
		cmocka_unit_test(warnings_grow_and_free), cmocka_unit_test(prefix_long),
		cmocka_unit_test(cut_on_character),	  cmocka_unit_test(shown_on_one_line),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
