#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <stdlib.h>
#include <string.h>

#include "base/strbuf.h"

static void empty_is_never_null(void **state)
{
	struct strbuf sb = STRBUF_INIT;
	char *s;
	size_t n = 99;

	(void)state;
	assert_non_null(sb.buf);
	assert_string_equal(sb.buf, "");
	strbuf_reset(&sb);
	strbuf_release(&sb);
	assert_string_equal(sb.buf, "");
	s = strbuf_detach(&sb, &n);
	assert_string_equal(s, "");
	assert_int_equal(n, 0);
	free(s);
}

static void add_and_grow(void **state)
{
	struct strbuf sb = STRBUF_INIT;
	char *s;
	size_t n;

	(void)state;
	strbuf_addstr(&sb, "a");
	strbuf_addch(&sb, '=');
	strbuf_add(&sb, "12345", 3);
	assert_string_equal(sb.buf, "a=123");
	assert_int_equal(sb.len, 5);
	/* far past the first allocation, with the formatted length exact */
	for (int i = 0; i < 1000; i++)
		strbuf_addf(&sb, ",%d", i);
	assert_int_equal(sb.len, strlen(sb.buf));
	assert_memory_equal(sb.buf + sb.len - 4, ",999", 4);
	strbuf_setlen(&sb, 1);
	assert_string_equal(sb.buf, "a");
	strbuf_addf(&sb, "%s", "");
	assert_string_equal(sb.buf, "a");
	s = strbuf_detach(&sb, &n);
	assert_string_equal(s, "a");
	assert_int_equal(n, 1);
	assert_string_equal(sb.buf, "");
	free(s);
}

/* One long formatted piece: the buffer grows to it in one step. */
static void addf_longer_than_room(void **state)
{
	struct strbuf sb = STRBUF_INIT;
	char big[5000];

	(void)state;
	memset(big, 'x', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	strbuf_addf(&sb, "<%s>", big);
	assert_int_equal(sb.len, sizeof(big) + 1);
	assert_int_equal(sb.buf[0], '<');
	assert_int_equal(sb.buf[sb.len - 1], '>');
	strbuf_release(&sb);
}

static void addsep_joins(void **state)
{
	struct strbuf sb = STRBUF_INIT;

	(void)state;
	strbuf_addsep(&sb, ", ", "a");
	strbuf_addsep(&sb, ", ", "b");
	assert_string_equal(sb.buf, "a, b");
	strbuf_release(&sb);
}

/* A fixed array gets a whole-character prefix, never half a UTF-8 sequence. */
static void copy_to_cuts_at_characters(void **state)
{
	struct strbuf sb = STRBUF_INIT;
	char dst[8];

	(void)state;
	strbuf_addstr(&sb, "abcd\xc3\xa9xyz"); /* "abcdéxyz" */
	strbuf_copy_to(&sb, dst, 6);
	assert_string_equal(dst, "abcd");
	strbuf_copy_to(&sb, dst, 7);
	assert_string_equal(dst, "abcd\xc3\xa9");
	strbuf_reset(&sb);
	strbuf_addstr(&sb, "ok");
	strbuf_copy_to(&sb, dst, sizeof(dst));
	assert_string_equal(dst, "ok");
	strbuf_release(&sb);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(empty_is_never_null),	      cmocka_unit_test(add_and_grow),
		cmocka_unit_test(addf_longer_than_room),      cmocka_unit_test(addsep_joins),
		cmocka_unit_test(copy_to_cuts_at_characters),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
