#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <jansson.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "base/jsonmeter.h"

/*
 * The ceiling on a parse: a text whose tree would pass it fails to parse
 * (no tree of any size is built), one under it parses as usual, and the
 * blocks stay freeable after counting stops; another thread is not limited.
 */

/* "[{},{},...]" of n elements: 3 bytes each, a few hundred as jansson objects. */
static char *empties(size_t n, size_t *len)
{
	char *s = malloc(3 * n + 2);
	size_t k = 0;

	s[k++] = '[';
	for (size_t i = 0; i < n; i++) {
		memcpy(s + k, i ? ",{}" : "{}", i ? 3 : 2);
		k += i ? 3 : 2;
	}
	s[k++] = ']';
	*len = k;
	return s;
}

static void ceiling(void **state)
{
	size_t len, peak;
	char *text = empties(100000, &len);
	json_error_t je;

	(void)state;
	/* 300 kB of text, tens of MB as a tree: refused at 1 MiB. */
	json_meter_begin(1u << 20);
	json_t *j = json_loadb(text, len, 0, &je);
	assert_true(json_meter_end(&peak));
	assert_null(j);
	assert_true(peak <= 1u << 20);

	/* 999 of them fit; freed after counting stopped. */
	json_meter_begin(1u << 20);
	j = json_loadb(text, 2997, 0, &je); /* "[{},...,{}" unclosed: an error, not over */
	assert_false(json_meter_end(NULL));
	assert_null(j);
	text[2997] = ']';
	json_meter_begin(1u << 20);
	j = json_loadb(text, 2998, 0, &je);
	assert_false(json_meter_end(&peak));
	assert_non_null(j);
	assert_int_equal(json_array_size(j), 999);
	assert_true(peak > 999 * 16);
	json_decref(j);
	free(text);
}

static void *parse_big(void *arg)
{
	size_t len;
	char *text = empties(100000, &len);
	json_error_t je;
	json_t *j = json_loadb(text, len, 0, &je);

	*(size_t *)arg = json_array_size(j);
	json_decref(j);
	free(text);
	return NULL;
}

static void other_threads(void **state)
{
	pthread_t t;
	size_t n = 0;

	(void)state;
	json_meter_begin(1024);
	assert_int_equal(pthread_create(&t, NULL, parse_big, &n), 0);
	pthread_join(t, NULL);
	assert_false(json_meter_end(NULL));
	assert_int_equal(n, 100000);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(ceiling),
		cmocka_unit_test(other_threads),
	};
	json_meter_install();
	return cmocka_run_group_tests(tests, NULL, NULL);
}
