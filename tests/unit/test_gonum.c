#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/gonum.h"

/* Expected texts are what Go 1.22 prints for the same values. */

static void format_float_g32(void **state)
{
	static const struct {
		double v;
		const char *want;
	} cases[] = {
		{0.1, "0.1"},
		{1.5, "1.5"},
		{2.0, "2"},
		{100000, "100000"},
		{1000000, "1e+06"},
		{1234567, "1.234567e+06"},
		{0.0001, "0.0001"},
		{0.00001, "1e-05"},
		{3.4e38, "3.4e+38"},
		{1e39, "+Inf"},
		{-1e39, "-Inf"},
		{1e-50, "0"},
		{-1e-50, "-0"},
		{-0.0, "-0"},
		{1.0 / 3, "0.33333334"},
		{16777217.0, "1.6777216e+07"},
	};
	char buf[GONUM_BUFSZ];

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		size_t n = gonum_format_float(cases[i].v, 'g', 32, buf, sizeof(buf));
		assert_string_equal(buf, cases[i].want);
		assert_int_equal(n, strlen(cases[i].want));
	}
	gonum_format_float(NAN, 'g', 32, buf, sizeof(buf));
	assert_string_equal(buf, "NaN");
}

static void format_float_64_e_f(void **state)
{
	char buf[400];

	(void)state;
	gonum_format_float(1.0 / 3, 'g', 64, buf, sizeof(buf));
	assert_string_equal(buf, "0.3333333333333333");
	gonum_format_float(1e20, 'g', 64, buf, sizeof(buf));
	assert_string_equal(buf, "1e+20");
	gonum_format_float(123456789.0, 'g', 64, buf, sizeof(buf));
	assert_string_equal(buf, "1.23456789e+08");
	gonum_format_float(1500, 'e', 64, buf, sizeof(buf));
	assert_string_equal(buf, "1.5e+03");
	gonum_format_float(0, 'e', 64, buf, sizeof(buf));
	assert_string_equal(buf, "0e+00");
	gonum_format_float(-2.5e-7, 'f', 64, buf, sizeof(buf));
	assert_string_equal(buf, "-0.00000025");
	gonum_format_float(1e21, 'f', 64, buf, sizeof(buf));
	assert_string_equal(buf, "1000000000000000000000");
	assert_int_equal(gonum_format_float(1e308, 'f', 64, buf, sizeof(buf)), 309);
	gonum_format_float(5e-324, 'e', 64, buf, sizeof(buf));
	assert_string_equal(buf, "5e-324");
}

static void json_float_cases(void **state)
{
	static const struct {
		double v;
		const char *want;
	} cases[] = {
		{2.0, "2"},
		{1.5, "1.5"},
		{0.1, "0.1"},
		{1e21, "1e+21"},
		{1e20, "100000000000000000000"},
		{1e-7, "1e-7"},
		{-2.5e-7, "-2.5e-7"},
		{1e-6, "0.000001"},
		{123456789.0, "123456789"},
		{-0.0, "-0"},
		{0.0, "0"},
		{0.3, "0.3"},
		{1.0 / 3, "0.3333333333333333"},
		{1.7976931348623157e308, "1.7976931348623157e+308"},
		{5e-324, "5e-324"},
	};
	char buf[GONUM_BUFSZ];
	json_t *j;

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		j = json_real(cases[i].v);
		assert_int_equal(gonum_json_number(j, buf, sizeof(buf)), 0);
		assert_string_equal(buf, cases[i].want);
		json_decref(j);
	}
	j = json_integer(-42);
	assert_int_equal(gonum_json_number(j, buf, sizeof(buf)), 0);
	assert_string_equal(buf, "-42");
	json_decref(j);
	j = json_string("2");
	assert_int_equal(gonum_json_number(j, buf, sizeof(buf)), -1);
	assert_string_equal(buf, "");
	json_decref(j);
}

/* A short buffer is cut, never overrun, and the return says the full length. */
static void truncation(void **state)
{
	char buf[8];

	(void)state;
	memset(buf, 'x', sizeof(buf));
	assert_int_equal(gonum_json_float(1.0 / 3, buf, 5), 18);
	assert_string_equal(buf, "0.33");
	assert_int_equal(buf[5], 'x');
	assert_int_equal(gonum_format_float(1234567, 'g', 32, buf, 1), 12);
	assert_string_equal(buf, "");
	assert_int_equal(gonum_format_float(1234567, 'g', 32, NULL, 0), 12);
}

/* encoding/json's kind words, as its UnmarshalTypeError prints them. */
static void json_kind_words(void **state)
{
	json_t *v = json_pack("[{},[],s,i,f,b,b,n]", "x", 1, 1.5, 1, 0);
	const char *want[] = {"object", "array", "string", "number",
			      "number", "bool",	 "bool",   "null"};

	(void)state;
	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++)
		assert_string_equal(gonum_json_kind(json_array_get(v, i)), want[i]);
	json_decref(v);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(format_float_g32), cmocka_unit_test(format_float_64_e_f),
		cmocka_unit_test(json_float_cases), cmocka_unit_test(truncation),
		cmocka_unit_test(json_kind_words),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
