/*
 * Cases cross-checked against k8s.io/apimachinery pkg/api/resource
 * quantity_test.go (TestQuantityParse, TestQuantityString,
 * TestQuantityParseEmit, TestQuantityCmp, TestQuantityCmpInt64AndDec,
 * TestNewSet, TestMilliNewSet, TestJSONWhitespace) and the documented
 * behaviour of quantity.go (MilliValue = ceil(q*1000), the "s" cache of
 * ParseQuantity, the binary-SI cap).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/quantity.h"

/* decQuantity(m, e, f) of the upstream tests: m * 10^e. */
static struct quantity dq(int64_t m, int e, enum quantity_format f)
{
	struct quantity q;

	quantity_from_int64(&q, m, f);
	if (q.ndigits)
		q.exp += e;
	return q;
}

static struct quantity parse_ok(const char *s)
{
	struct quantity q;
	struct gs_error err;

	if (quantity_parse(&q, s, strlen(s), &err) != 0)
		fail_msg("%s: unexpected error: %s", s, err.msg);
	return q;
}

static const char *str(const struct quantity *q)
{
	static char buf[QUANTITY_STR_MAX];

	return quantity_string(q, buf, sizeof(buf));
}

#define DSI QUANTITY_DECIMAL_SI
#define BSI QUANTITY_BINARY_SI
#define DEX QUANTITY_DECIMAL_EXPONENT

struct parse_case {
	const char *in;
	struct quantity want;
};

static void parse_table(void **state)
{
	const struct parse_case table[] = {
		{"0", dq(0, 0, DSI)},
		{"0n", dq(0, 0, DSI)},
		{"0u", dq(0, 0, DSI)},
		{"0m", dq(0, 0, DSI)},
		{"0Ki", dq(0, 0, BSI)},
		{"0k", dq(0, 0, DSI)},
		{"0Mi", dq(0, 0, BSI)},
		{"0M", dq(0, 0, DSI)},
		{"0Gi", dq(0, 0, BSI)},
		{"0G", dq(0, 0, DSI)},
		{"0Ti", dq(0, 0, BSI)},
		{"0T", dq(0, 0, DSI)},
		{"1", dq(1, 0, DSI)},
		{"1Ki", dq(1024, 0, BSI)},
		{"8Ki", dq(8 * 1024, 0, BSI)},
		{"7Mi", dq(7 * 1024 * 1024, 0, BSI)},
		{"6Gi", dq(6LL * 1024 * 1024 * 1024, 0, BSI)},
		{"5Ti", dq(5LL * 1024 * 1024 * 1024 * 1024, 0, BSI)},
		{"4Pi", dq(4LL * 1024 * 1024 * 1024 * 1024 * 1024, 0, BSI)},
		{"3Ei", dq(3LL * 1024 * 1024 * 1024 * 1024 * 1024 * 1024, 0, BSI)},
		{"10Ti", dq(10LL * 1024 * 1024 * 1024 * 1024, 0, BSI)},
		{"100Ti", dq(100LL * 1024 * 1024 * 1024 * 1024, 0, BSI)},
		{"5n", dq(5, -9, DSI)},
		{"4u", dq(4, -6, DSI)},
		{"3m", dq(3, -3, DSI)},
		{"9", dq(9, 0, DSI)},
		{"8k", dq(8, 3, DSI)},
		{"50k", dq(5, 4, DSI)},
		{"7M", dq(7, 6, DSI)},
		{"6G", dq(6, 9, DSI)},
		{"5T", dq(5, 12, DSI)},
		{"40T", dq(4, 13, DSI)},
		{"300T", dq(3, 14, DSI)},
		{"2P", dq(2, 15, DSI)},
		{"1E", dq(1, 18, DSI)},
		{"1E-3", dq(1, -3, DEX)},
		{"1e3", dq(1, 3, DEX)},
		{"1E6", dq(1, 6, DEX)},
		{"1e9", dq(1, 9, DEX)},
		{"1E12", dq(1, 12, DEX)},
		{"1e15", dq(1, 15, DEX)},
		{"1E18", dq(1, 18, DEX)},
		{"1e14", dq(1, 14, DEX)},
		{"1e13", dq(1, 13, DEX)},
		{"100.035k", dq(100035, 0, DSI)},
		{"0.001", dq(1, -3, DSI)},
		{"0.0005k", dq(5, -1, DSI)},
		{"0.005", dq(5, -3, DSI)},
		{"0.05", dq(5, -2, DSI)},
		{"0.5", dq(5, -1, DSI)},
		{"0.00050k", dq(5, -1, DSI)},
		{"0.00500", dq(5, -3, DSI)},
		{"0.05000", dq(5, -2, DSI)},
		{"0.50000", dq(5, -1, DSI)},
		{"0.5e0", dq(5, -1, DEX)},
		{"0.5e-1", dq(5, -2, DEX)},
		{"0.5e-2", dq(5, -3, DEX)},
		{"10.035M", dq(10035, 3, DSI)},
		{"1.2e3", dq(12, 2, DEX)},
		{"1.3E+6", dq(13, 5, DEX)},
		{"1.40e9", dq(14, 8, DEX)},
		{"1.53E12", dq(153, 10, DEX)},
		{"1.6e15", dq(16, 14, DEX)},
		{"1.7E18", dq(17, 17, DEX)},
		{"9.01", dq(901, -2, DSI)},
		{"8.1k", dq(81, 2, DSI)},
		{"7.123456M", dq(7123456, 0, DSI)},
		{"6.987654321G", dq(6987654321LL, 0, DSI)},
		{"5.444T", dq(5444, 9, DSI)},
		{"40.1T", dq(401, 11, DSI)},
		{"300.2T", dq(3002, 11, DSI)},
		{"2.5P", dq(25, 14, DSI)},
		{"1.01E", dq(101, 16, DSI)},
		/* things that saturate or round */
		{"3.001n", dq(4, -9, DSI)},
		{"1.1E-9", dq(2, -9, DEX)},
		{"0.0000000001", dq(1, -9, DSI)},
		{"0.0000000005", dq(1, -9, DSI)},
		{"0.00000000050", dq(1, -9, DSI)},
		{"0.5e-9", dq(1, -9, DEX)},
		{"0.9n", dq(1, -9, DSI)},
		{"0.00000012345", dq(124, -9, DSI)},
		{"0.00000012354", dq(124, -9, DSI)},
		{"9Ei", dq(INT64_MAX, 0, BSI)},
		{"9223372036854775807Ki", dq(INT64_MAX, 0, BSI)},
		{"12E", dq(12, 18, DSI)},
		/* fractional binary */
		{"100.035Ki", dq(10243584, -2, BSI)},
		{"0.5Mi", dq(524288, 0, BSI)},
		{"0.05Gi", dq(536870912, -1, BSI)},
		{"0.025Ti", dq(274877906944LL, -1, BSI)},
		/* written by trolls */
		{"0.000000000001Ki", dq(2, -9, DSI)},
		{".001", dq(1, -3, DSI)},
		{".0001k", dq(100, -3, DSI)},
		{"1.", dq(1, 0, DSI)},
		{"1.G", dq(1, 9, DSI)},
	};
	char buf[QUANTITY_MAX_LEN + 2];

	(void)state;
	for (size_t i = 0; i < sizeof(table) / sizeof(table[0]); i++) {
		const struct parse_case *c = &table[i];
		struct quantity got = parse_ok(c->in);
		struct quantity neg = c->want;
		char a[QUANTITY_STR_MAX], b[QUANTITY_STR_MAX];

		if (quantity_cmp(&got, &c->want) != 0 || got.format != c->want.format)
			fail_msg("%s: got %s (format %d), want %s (format %d)", c->in,
				 quantity_canonical(&got, a, sizeof(a)), got.format,
				 quantity_canonical(&c->want, b, sizeof(b)), c->want.format);

		/* the negative version of everything */
		snprintf(buf, sizeof(buf), "-%s", c->in);
		got = parse_ok(buf);
		neg.negative = neg.ndigits != 0;
		if (quantity_cmp(&got, &neg) != 0 || got.format != c->want.format)
			fail_msg("%s: negative differs", buf);

		/* everything with an explicit + */
		snprintf(buf, sizeof(buf), "+%s", c->in);
		got = parse_ok(buf);
		if (quantity_cmp(&got, &c->want) != 0 || got.format != c->want.format)
			fail_msg("%s: explicit + differs", buf);
	}
}

static void parse_invalid(void **state)
{
	static const struct {
		const char *in;
		const char *msg;
	} table[] = {
		{"", QUANTITY_ERR_FORMAT},
		{"1.1.M", QUANTITY_ERR_FORMAT},
		{"1+1.0M", QUANTITY_ERR_FORMAT},
		{"0.1mi", QUANTITY_ERR_SUFFIX},
		{"0.1am", QUANTITY_ERR_FORMAT},
		{"aoeu", QUANTITY_ERR_FORMAT},
		{".5i", QUANTITY_ERR_SUFFIX},
		{"1i", QUANTITY_ERR_SUFFIX},
		{"-3.01i", QUANTITY_ERR_SUFFIX},
		{"-3.01e-", QUANTITY_ERR_SUFFIX},
		{" 1", QUANTITY_ERR_FORMAT},
		{"1 ", QUANTITY_ERR_FORMAT},
		/* beyond upstream's table, from the same scanner */
		{"1e", QUANTITY_ERR_SUFFIX},
		{"1kk", QUANTITY_ERR_SUFFIX},
		{"1e99999999999999999999", QUANTITY_ERR_SUFFIX},
		{"two", QUANTITY_ERR_FORMAT},
		{".e-10", QUANTITY_ERR_NUMERIC}, /* slow path, no digit for inf.Dec */
		{"-e-10", QUANTITY_ERR_NUMERIC},
	};
	struct quantity q;
	struct gs_error err;

	(void)state;
	for (size_t i = 0; i < sizeof(table) / sizeof(table[0]); i++) {
		if (quantity_parse(&q, table[i].in, strlen(table[i].in), &err) == 0)
			fail_msg("'%s' parsed unexpectedly", table[i].in);
		if (strcmp(err.msg, table[i].msg))
			fail_msg("'%s': message '%s', want '%s'", table[i].in, err.msg,
				 table[i].msg);
	}
	/* the length cap */
	char longq[QUANTITY_MAX_LEN + 2];
	memset(longq, '1', sizeof(longq) - 1);
	longq[sizeof(longq) - 1] = '\0';
	assert_int_equal(quantity_parse(&q, longq, strlen(longq), &err), -1);
	assert_non_null(strstr(err.msg, "longer than 64"));
	assert_int_equal(quantity_parse(&q, longq, QUANTITY_MAX_LEN, &err), 0);
}

/* Odd inputs upstream's scanner accepts. */
static void parse_oddities(void **state)
{
	struct quantity q;

	(void)state;
	q = parse_ok("-");
	assert_true(quantity_is_zero(&q));
	q = parse_ok("+");
	assert_true(quantity_is_zero(&q));
	q = parse_ok(".");
	assert_true(quantity_is_zero(&q));
	q = parse_ok("-.");
	assert_true(quantity_is_zero(&q));
	q = parse_ok("007");
	assert_int_equal(quantity_cmp_int64(&q, 7), 0);
	/* int32(parsed): 2^32 truncates to 0 */
	q = parse_ok("1e4294967296");
	assert_int_equal(quantity_cmp_int64(&q, 1), 0);
	q = parse_ok("1e4294967295"); /* int32 -1 */
	struct quantity tenth = dq(1, -1, DEX);
	assert_int_equal(quantity_cmp(&q, &tenth), 0);
	q = parse_ok("1e1000000");
	assert_string_equal(str(&q), "10e999999");
	q = parse_ok("1e-100");
	struct quantity nano = dq(1, -9, DEX);
	assert_int_equal(quantity_cmp(&q, &nano), 0);
}

struct string_case {
	struct quantity in;
	const char *expect;
	const char *alternate;
};

static void string_table(void **state)
{
	const struct string_case table[] = {
		{dq(1024 * 1024 * 1024, 0, BSI), "1Gi", "1024Mi"},
		{dq(300 * 1024 * 1024, 0, BSI), "300Mi", "307200Ki"},
		{dq(6 * 1024, 0, BSI), "6Ki", ""},
		{dq(1001LL * 1024 * 1024 * 1024, 0, BSI), "1001Gi", "1025024Mi"},
		{dq(1024LL * 1024 * 1024 * 1024, 0, BSI), "1Ti", "1024Gi"},
		{dq(5, 0, BSI), "5", "5000m"},
		{dq(500, -3, BSI), "500m", "0.5"},
		{dq(1, 9, DSI), "1G", "1000M"},
		{dq(1000, 6, DSI), "1G", "0.001T"},
		{dq(1000000, 3, DSI), "1G", ""},
		{dq(1000000000, 0, DSI), "1G", ""},
		{dq(1, -3, DSI), "1m", "1000u"},
		{dq(80, -3, DSI), "80m", ""},
		{dq(1080, -3, DSI), "1080m", "1.08"},
		{dq(108, -2, DSI), "1080m", "1080000000n"},
		{dq(10800, -4, DSI), "1080m", ""},
		{dq(300, 6, DSI), "300M", ""},
		{dq(1, 12, DSI), "1T", ""},
		{dq(1, 18, DSI), "1E", ""},
		/* no decimal SI suffix past "E": upstream prints no suffix at all */
		{dq(1, 21, DSI), "1", "1000E"},
		{dq(5, 21, DSI), "5", "5000E"},
		{dq(1, 24, DSI), "1", "1000000E"},
		{dq(1234567, 6, DSI), "1234567M", ""},
		{dq(1234567, -3, BSI), "1234567m", ""},
		{dq(3, 3, DSI), "3k", ""},
		{dq(1025, 0, BSI), "1025", ""},
		{dq(0, 0, DSI), "0", ""},
		{dq(0, 0, BSI), "0", ""},
		{dq(1, 9, DEX), "1e9", ".001e12"},
		{dq(1, -3, DEX), "1e-3", "0.001e0"},
		{dq(1, -9, DEX), "1e-9", "1000e-12"},
		{dq(80, -3, DEX), "80e-3", ""},
		{dq(300, 6, DEX), "300e6", ""},
		{dq(1, 12, DEX), "1e12", ""},
		{dq(1, 3, DEX), "1e3", ""},
		{dq(3, 3, DEX), "3e3", ""},
		{dq(3, 3, DSI), "3k", ""},
		{dq(0, 0, DEX), "0", "00"},
		{dq(1, -9, DSI), "1n", ""},
		{dq(80, -9, DSI), "80n", ""},
		{dq(1080, -9, DSI), "1080n", ""},
		{dq(108, -8, DSI), "1080n", ""},
		{dq(10800, -10, DSI), "1080n", ""},
		{dq(1, -6, DSI), "1u", ""},
		{dq(80, -6, DSI), "80u", ""},
		{dq(1080, -6, DSI), "1080u", ""},
	};
	char buf[QUANTITY_STR_MAX];

	(void)state;
	for (size_t i = 0; i < sizeof(table) / sizeof(table[0]); i++) {
		const struct string_case *c = &table[i];
		struct quantity q;

		assert_string_equal(str(&c->in), c->expect);
		/* parsing the canonical string remembers it */
		q = parse_ok(c->expect);
		if (strcmp(q.text, c->expect))
			fail_msg("%s: did not keep canonical string on parse ('%s')", c->expect,
				 q.text);
		if (c->alternate[0]) {
			q = parse_ok(c->alternate);
			if (q.text[0])
				fail_msg("%s: unexpected remembered string '%s'", c->alternate,
					 q.text);
			assert_string_equal(str(&q), c->expect);
		}
		if (!quantity_is_zero(&c->in)) {
			q = c->in;
			q.negative = true;
			snprintf(buf, sizeof(buf), "-%s", c->expect);
			assert_string_equal(str(&q), buf);
		}
	}
}

static void parse_emit(void **state)
{
	static const struct {
		const char *in, *expect;
	} table[] = {
		{"1Ki", "1Ki"},
		{"1Mi", "1Mi"},
		{"1Gi", "1Gi"},
		{"1024Mi", "1Gi"},
		{"1000M", "1G"},
		{".001Ki", "1024m"},
		{".000001Ki", "1024u"},
		{".000000001Ki", "1024n"},
		{".000000000001Ki", "2n"},
		/* the remembered input, verbatim */
		{"+1", "+1"},
		{"1.234", "1.234"},
		{"100.035k", "100.035k"},
		{"1E3", "1E3"},
		/* not canonical in upstream's eyes: re-emitted */
		{"1.5", "1500m"},
		{"1.5Gi", "1536Mi"},
		{"1000m", "1"},
		{"2000m", "2"},
		{"0.5", "500m"},
		{"1.9999999", "1999999900n"},
		{"8Ki", "8Ki"},
	};
	char buf[QUANTITY_MAX_LEN + 2], want[QUANTITY_MAX_LEN + 2];

	(void)state;
	for (size_t i = 0; i < sizeof(table) / sizeof(table[0]); i++) {
		struct quantity q = parse_ok(table[i].in);
		if (strcmp(str(&q), table[i].expect))
			fail_msg("%s: got %s, want %s", table[i].in, str(&q), table[i].expect);
		if (i >= 9)
			continue;
		snprintf(buf, sizeof(buf), "-%s", table[i].in);
		q = parse_ok(buf);
		snprintf(want, sizeof(want), "-%s", table[i].expect);
		assert_string_equal(str(&q), want);
	}
}

static void compare(void **state)
{
	static const struct {
		const char *x, *y;
		int expect;
	} table[] = {
		{"0", "0", 0},		{"100m", "50m", 1}, {"50m", "100m", -1},
		{"10000T", "100Gi", 1}, {"1", "1000m", 0},  {"1Ki", "1024", 0},
		{"-1", "0", -1},	{"1e3", "1k", 0},   {"12E", "9Ei", 1},
	};
	struct {
		struct quantity a, b;
		int cmp;
	} ints[] = {
		{dq(901, -2, DSI), dq(901, -2, DSI), 0},
		{dq(90, -1, DSI), dq(901, -2, DSI), -1},
		{dq(901, -2, DSI), dq(900, -2, DSI), 1},
		{dq(0, 1, DSI), dq(0, -1, DSI), 0},
		{dq(800, -3, DSI), dq(1, 0, DSI), -1},
		{dq(800, -3, DSI), dq(79, -2, DSI), 1},
		{dq(INT64_MAX, 0, DSI), dq(1, -1, DSI), 1},
		{dq(INT64_MAX, 1, DSI), dq(1, 0, DSI), 1},
		{dq(INT64_MAX, -16, DSI), dq(1, 3, DSI), -1},
		{dq(INT64_MIN, 0, DSI), dq(0, 0, DSI), -1},
		{dq(INT64_MIN, -18, DSI), dq(-1, 0, DSI), -1},
		{dq(INT64_MIN, -19, DSI), dq(-1, 0, DSI), 1},
		{dq(1000000000000000000LL, -17, DSI), dq(1, 1, DSI), 0},
		{dq(1000000000000000000LL, -17, DSI), dq(-10, 0, DSI), 1},
		{dq(-1000000000000000000LL, -17, DSI), dq(-10, 0, DSI), 0},
		{dq(1000000000000000001LL, -17, DSI), dq(1, 1, DSI), 1},
		{dq(999999999999999999LL, -17, DSI), dq(1, 1, DSI), -1},
	};

	(void)state;
	for (size_t i = 0; i < sizeof(table) / sizeof(table[0]); i++) {
		struct quantity a = parse_ok(table[i].x), b = parse_ok(table[i].y);
		if (quantity_cmp(&a, &b) != table[i].expect ||
		    quantity_cmp(&b, &a) != -table[i].expect)
			fail_msg("cmp(%s, %s) != %d", table[i].x, table[i].y, table[i].expect);
	}
	for (size_t i = 0; i < sizeof(ints) / sizeof(ints[0]); i++) {
		if (quantity_cmp(&ints[i].a, &ints[i].b) != ints[i].cmp ||
		    quantity_cmp(&ints[i].b, &ints[i].a) != -ints[i].cmp)
			fail_msg("int case %zu", i);
	}
}

static void new_set(void **state)
{
	struct quantity q;

	(void)state;
	/* TestNewSet */
	quantity_from_int64(&q, 1, DSI);
	assert_string_equal(str(&q), "1");
	quantity_from_int64(&q, 1000, DSI);
	assert_string_equal(str(&q), "1k");
	quantity_from_int64(&q, 1234000, DSI);
	assert_string_equal(str(&q), "1234k");
	quantity_from_int64(&q, 1024, BSI);
	assert_string_equal(str(&q), "1Ki");
	quantity_from_int64(&q, 1000000, DEX);
	assert_string_equal(str(&q), "1e6");
	quantity_from_int64(&q, 1024 * 1024, BSI);
	assert_string_equal(str(&q), "1Mi");
	/* TestMilliNewSet */
	q = dq(1, -3, DSI);
	assert_string_equal(str(&q), "1m");
	q = dq(1000, -3, DSI);
	assert_string_equal(str(&q), "1");
	q = dq(1234000, -3, DSI);
	assert_string_equal(str(&q), "1234");
	q = dq(1024, -3, BSI);
	assert_string_equal(str(&q), "1024m");
	q = dq(1000000, -3, DEX);
	assert_string_equal(str(&q), "1e3");
	q = dq(1024 * 1024, -3, BSI);
	assert_string_equal(str(&q), "1048576m");
}

static void values_and_integers(void **state)
{
	static const struct {
		const char *in;
		int64_t value, milli;
		bool k8s_integer, whole;
	} table[] = {
		{"2", 2, 2000, true, true},
		{"0", 0, 0, true, true},
		{"500m", 1, 500, false, false},
		{"1.5", 2, 1500, false, false},
		{"1e3", 1000, 1000000, true, true},
		{"1Ki", 1024, 1024000, true, true},
		{"2000m", 2, 2000, true, true},
		{"1.0001", 2, 1001, false, false},
		{"1n", 1, 1, false, false},
		/* MilliValue rounds up: upstream accepts this as an integer */
		{"1.9999999", 2, 2000, true, false},
		{"-2", -2, -2000, true, true},
		{"-1.5", -2, -1500, false, false},
	};
	int64_t v;

	(void)state;
	for (size_t i = 0; i < sizeof(table) / sizeof(table[0]); i++) {
		struct quantity q = parse_ok(table[i].in);
		assert_int_equal(quantity_value(&q, &v), 0);
		if (v != table[i].value)
			fail_msg("%s: value %lld", table[i].in, (long long)v);
		assert_int_equal(quantity_milli_value(&q, &v), 0);
		if (v != table[i].milli)
			fail_msg("%s: milli %lld", table[i].in, (long long)v);
		if (quantity_is_k8s_integer(&q) != table[i].k8s_integer)
			fail_msg("%s: k8s integer", table[i].in);
		if (quantity_is_whole(&q) != table[i].whole)
			fail_msg("%s: whole", table[i].in);
	}
	struct quantity big = parse_ok("9223372036854775807");
	assert_int_equal(quantity_value(&big, &v), 0);
	assert_true(v == INT64_MAX);
	assert_int_equal(quantity_milli_value(&big, &v), -1);
	assert_true(quantity_is_k8s_integer(&big)); /* MilliValue wraps to -1000 */
	big = parse_ok("12E");
	assert_int_equal(quantity_value(&big, &v), -1);
	big = parse_ok("1e30");
	assert_true(quantity_is_k8s_integer(&big));
}

/*
 * ValidateResourceQuantityValue's integer rule, `MilliValue() % 1000 != 0`
 * ("must be an integer"), with MilliValue()'s int64 wrap-around, before
 * and after the apiserver's defaulting (RoundUp(-3) of every resource
 * list). Every row is what k8s.io/apimachinery v0.34.4 computes for
 * resource.MustParse(in).MilliValue(), then after q.RoundUp(-3) its
 * MilliValue() and String().
 */
static void integer_rule(void **state)
{
	static const struct {
		const char *in;
		long long milli;
		bool integer;
		long long milli_rounded;
		bool integer_rounded;
		const char *string_rounded;
	} table[] = {
		{"0.5", 500, false, 500, false, "500m"},
		{"1000m", 1000, true, 1000, true, "1"},
		{"1k", 1000000, true, 1000000, true, "1k"},
		{"1e3", 1000000, true, 1000000, true, "1e3"},
		{"2Mi", 2097152000, true, 2097152000, true, "2Mi"},
		{"1Ki", 1024000, true, 1024000, true, "1Ki"},
		{"100m", 100, false, 100, false, "100m"},
		{"1.5", 1500, false, 1500, false, "1500m"},
		{"2", 2000, true, 2000, true, "2"},
		{"0", 0, true, 0, true, "0"},
		{"-1", -1000, true, -1000, true, "-1"},
		/* an inf.Dec: the low 64 bits of 2^60 * 10^3 are 2^63 */
		{"1Ei", INT64_MIN, false, INT64_MIN, false, "1Ei"},
		/* an int64Amount times 1000 wraps */
		{"10000000000000000", -8446744073709551616LL, false, -8446744073709551616LL, false,
		 "10P"},
		{"9223372036854775807", -1000, true, -1000, true, "9223372036854775807"},
		{"9223372036854775808", 0, true, 0, true, "9223372036854775808"},
		{"18446744073709551615", -1000, true, -1000, true, "18446744073709551615"},
		/* an int64Amount scaled past int64 by the loop: 0 */
		{"1e16", 0, true, 0, true, "10e15"},
		{"1e30", 0, true, 0, true, "1e30"},
		{"12E", 0, true, 0, true, "12E"},
		/* binary SI capped at 2^63-1 (an inf.Dec of scale 0): times 1000 wraps to -1000 */
		{"9Ei", -1000, true, -1000, true, "9223372036854775807"},
		{"7Ei", INT64_MIN, false, INT64_MIN, false, "7Ei"},
		{"1Pi", 1125899906842624000LL, true, 1125899906842624000LL, true, "1Pi"},
		/* the rescale to 3 decimals changes it */
		{"-1Ei", 0, true, INT64_MIN, false, "-1Ei"},
		{"100000000000000000000", 200376420520689664LL, false, 200376420520689664LL, false,
		 "100E"},
		{"9223372036854775.807", INT64_MAX, false, INT64_MAX, false,
		 "9223372036854775807m"},
		{"1234567890123456789", -1363962815083169272LL, false, -1363962815083169272LL,
		 false, "1234567890123456789"},
		/* the scale difference is an int32: it wraps, no scaling at all */
		{"1e2147483646", 1, false, 1, false, "1e2147483646"},
		/* MilliValue rounds up */
		{"1.9999999", 2000, true, 2000, true, "2"},
		{"0.0000000001", 1, false, 1, false, "1m"},
		{"1.0001", 1001, false, 1001, false, "1001m"},
		{"-1.5m", -2, false, -2, false, "-2m"},
	};
	char buf[QUANTITY_STR_MAX];

	(void)state;
	for (size_t i = 0; i < sizeof(table) / sizeof(table[0]); i++) {
		struct quantity q = parse_ok(table[i].in);
		long long m = (long long)quantity_go_milli_value(&q);

		if (m != table[i].milli)
			fail_msg("%s: MilliValue %lld, want %lld", table[i].in, m, table[i].milli);
		if (quantity_is_k8s_integer(&q) != table[i].integer)
			fail_msg("%s: integer %d", table[i].in, !table[i].integer);
		quantity_round_up_milli(&q);
		m = (long long)quantity_go_milli_value(&q);
		if (m != table[i].milli_rounded)
			fail_msg("%s: rounded MilliValue %lld, want %lld", table[i].in, m,
				 table[i].milli_rounded);
		if (quantity_is_k8s_integer(&q) != table[i].integer_rounded)
			fail_msg("%s: rounded integer %d", table[i].in, !table[i].integer_rounded);
		if (strcmp(quantity_string(&q, buf, sizeof(buf)), table[i].string_rounded))
			fail_msg("%s: rounded prints %s, want %s", table[i].in, buf,
				 table[i].string_rounded);
	}
}

static void from_json(void **state)
{
	static const struct {
		const char *json;
		const char *expect;
		int rc;
	} table[] = {
		/* TestJSONWhitespace */
		{"\" 1\"", "1", 0},
		{"\"1 \"", "1", 0},
		{"1", "1", 0},
		{"10", "10", 0},
		{"-1", "-1", 0},
		/* numbers reach ParseQuantity as encoding/json prints them */
		{"1.5", "1500m", 0},
		{"1000", "1k", 0},
		{"1e3", "1k", 0},
		{"1e21", "1e+21", 0},  /* "1e+21" is canonical in upstream's eyes */
		{"1e-7", "100e-9", 0}, /* "1e-7" is DecimalExponent */
		{"0.1", "100m", 0},
		{"\"2\"", "2", 0},
		{"\"500m\"", "500m", 0},
		{"null", "0", 0},
		{"true", NULL, -1},
		{"[1]", NULL, -1},
		{"{}", NULL, -1},
	};

	(void)state;
	for (size_t i = 0; i < sizeof(table) / sizeof(table[0]); i++) {
		json_error_t jerr;
		json_t *v = json_loads(table[i].json, JSON_DECODE_ANY, &jerr);
		struct quantity q;
		struct gs_error err;
		assert_non_null(v);
		int rc = quantity_from_json(&q, v, &err);
		json_decref(v);
		if (rc != table[i].rc)
			fail_msg("%s: rc %d", table[i].json, rc);
		if (rc == 0 && strcmp(str(&q), table[i].expect))
			fail_msg("%s: got %s want %s", table[i].json, str(&q), table[i].expect);
		if (rc)
			assert_string_equal(err.msg, QUANTITY_ERR_FORMAT);
	}
	/* a key that is not there: json_object_get gives NULL */
	struct quantity q;
	struct gs_error err;
	assert_int_equal(quantity_from_json(&q, NULL, &err), 0);
	assert_string_equal(str(&q), "0");
}

static void add(void **state)
{
	struct quantity a, b, r;
	struct gs_error err;

	(void)state;
	/* TestQuantityAddZeroPreservesSuffix */
	a = parse_ok("100m");
	b = parse_ok("0");
	assert_int_equal(quantity_add(&r, &a, &b, &err), 0);
	assert_string_equal(str(&r), "100m");
	assert_int_equal(quantity_add(&r, &b, &a, &err), 0);
	assert_string_equal(str(&r), "100m");
	a = parse_ok("1Gi");
	assert_int_equal(quantity_add(&r, &b, &a, &err), 0);
	assert_string_equal(str(&r), "1Gi");

	a = parse_ok("1");
	b = parse_ok("500m");
	assert_int_equal(quantity_add(&r, &a, &b, &err), 0);
	assert_string_equal(str(&r), "1500m");
	b = parse_ok("-1");
	assert_int_equal(quantity_add(&r, &a, &b, &err), 0);
	assert_true(quantity_is_zero(&r));
	assert_string_equal(str(&r), "0");
	a = parse_ok("2");
	b = parse_ok("-3.5");
	assert_int_equal(quantity_add(&r, &a, &b, &err), 0);
	assert_string_equal(str(&r), "-1500m");
	/* out may alias */
	a = parse_ok("999");
	b = parse_ok("1");
	assert_int_equal(quantity_add(&a, &a, &b, &err), 0);
	assert_string_equal(str(&a), "1k");
	/* the digit cap */
	a = parse_ok("1e200");
	b = parse_ok("1n");
	assert_int_equal(quantity_add(&r, &a, &b, &err), -1);
	assert_non_null(strstr(err.msg, "significant digits"));
}

/* Upstream's TestSub (quantity_test.go), and what is left of a device's capacity. */
static void sub(void **state)
{
	static const struct {
		const char *a, *b, *want;
	} table[] = {
		{"10", "1e1", "0"},	/* decQuantity(10, 0) - decQuantity(1, 1) */
		{"10", "1Ki", "-1014"}, /* a's format: DecimalSI */
		{"2Ki", "1k", "1048"},	/* a's format: BinarySI, 1048 below 1024 * 2 */
		{"0", "50", "-50"},	 {"50", "0", "50"},	{"0", "0", "0"},
		{"0", "1Gi", "-1Gi"}, /* a zero: b's format */
		{"15Gi", "4Gi", "11Gi"}, {"15Gi", "0", "15Gi"}, {"100", "90", "10"},
		{"1.234", "0", "1234m"}, /* Sub clears the remembered text */
		{"1", "-500m", "1500m"}, {"-1", "-1", "0"},
	};
	struct quantity a, b, r;
	struct gs_error err;

	(void)state;
	for (size_t i = 0; i < sizeof(table) / sizeof(table[0]); i++) {
		a = parse_ok(table[i].a);
		b = parse_ok(table[i].b);
		assert_int_equal(quantity_sub(&r, &a, &b, &err), 0);
		if (strcmp(str(&r), table[i].want))
			fail_msg("%s - %s: got %s want %s", table[i].a, table[i].b, str(&r),
				 table[i].want);
	}
	/* out may alias; b is left alone */
	a = parse_ok("15Gi");
	b = parse_ok("4Gi");
	assert_int_equal(quantity_sub(&a, &a, &b, &err), 0);
	assert_string_equal(str(&a), "11Gi");
	assert_string_equal(str(&b), "4Gi");
	/* the digit cap, as quantity_add */
	a = parse_ok("1e200");
	b = parse_ok("1n");
	assert_int_equal(quantity_sub(&r, &a, &b, &err), -1);
}

/*
 * Upstream's TestParseQuantity (quantity_test.go): values around and past
 * int64, which Quantity keeps exactly in an inf.Dec, and how String()
 * prints them; plus 2^64 - 1 and 10^30.
 */
static void big_values_exact(void **state)
{
	static const struct {
		const char *in, *out;
	} cases[] = {
		{"-999999999999999999", "-999999999999999999"},
		{"999999999999999999", "999999999999999999"},
		{"-999999999999999999.0", "-999999999999999999"},
		{"999999999999999999.0", "999999999999999999"},
		{"-999999999999999999.1", "-999999999999999999100m"},
		{"999999999999999999.1", "999999999999999999100m"},
		{"-9999999999999999999", "-9999999999999999999"},
		{"9999999999999999999", "9999999999999999999"},
		{"-1E", "-1E"},
		{"1E", "1E"},
		{"-1000000000000000000", "-1E"},
		{"1000000000000000000", "1E"},
		{"-9999999999999999999.0", "-9999999999999999999"},
		{"9999999999999999999.0", "9999999999999999999"},
		{"-1.0E", "-1E"},
		{"1.0E", "1E"},
		{"-1000000000000000000.0", "-1E"},
		{"1000000000000000000.0", "1E"},
		{"-9999999999999999999000m", "-9999999999999999999"},
		{"9999999999999999999000m", "9999999999999999999"},
		{"-9999999999999999999.1", "-9999999999999999999100m"},
		{"9999999999999999999.1", "9999999999999999999100m"},
		{"-1.0000000000000000001E", "-1000000000000000000100m"},
		{"1.0000000000000000001E", "1000000000000000000100m"},
		{"-1000000000000000000.1", "-1000000000000000000100m"},
		{"1000000000000000000.1", "1000000000000000000100m"},
		{"-1.000000000000000001E", "-1000000000000000001"},
		{"1.000000000000000001E", "1000000000000000001"},
		{"-1000000000000000001", "-1000000000000000001"},
		{"1000000000000000001", "1000000000000000001"},
		{"-10E", "-10E"},
		{"10E", "10E"},
		{"-10000000000000000000", "-10E"},
		{"10000000000000000000", "10E"},
		{"-10.0E", "-10E"},
		{"10.0E", "10E"},
		{"-10000000000000000000.0", "-10E"},
		{"10000000000000000000.0", "10E"},
		{"-10000000000000000000000m", "-10E"},
		{"10000000000000000000000m", "10E"},
		{"-10.0000000000000000001E", "-10000000000000000000100m"},
		{"10.0000000000000000001E", "10000000000000000000100m"},
		{"-10000000000000000000.1", "-10000000000000000000100m"},
		{"10000000000000000000.1", "10000000000000000000100m"},
		{"-10.000000000000000001E", "-10000000000000000001"},
		{"10.000000000000000001E", "10000000000000000001"},
		{"-10000000000000000001", "-10000000000000000001"},
		{"10000000000000000001", "10000000000000000001"},
		{"-9223372036854775809", "-9223372036854775809"},
		{"9223372036854775806", "9223372036854775806"},
		{"-9223372036854775809.0", "-9223372036854775809"},
		{"9223372036854775806.0", "9223372036854775806"},
		{"-9223372036854775809000m", "-9223372036854775809"},
		{"9223372036854775806000m", "9223372036854775806"},
		{"-9223372036854775809.1", "-9223372036854775809100m"},
		{"9223372036854775806.1", "9223372036854775806100m"},
		{"-9223372036854775808", "-9223372036854775808"},
		{"9223372036854775807", "9223372036854775807"},
		{"-9223372036854775808.0", "-9223372036854775808"},
		{"9223372036854775807.0", "9223372036854775807"},
		{"-9223372036854775808000m", "-9223372036854775808"},
		{"9223372036854775807000m", "9223372036854775807"},
		{"-9223372036854775808.1", "-9223372036854775808100m"},
		{"9223372036854775807.1", "9223372036854775807100m"},
		{"-9223372036854775807", "-9223372036854775807"},
		{"9223372036854775808", "9223372036854775808"},
		{"-9223372036854775807.0", "-9223372036854775807"},
		{"9223372036854775808.0", "9223372036854775808"},
		{"-9223372036854775807000m", "-9223372036854775807"},
		{"9223372036854775808000m", "9223372036854775808"},
		{"-9223372036854775807.1", "-9223372036854775807100m"},
		{"9223372036854775808.1", "9223372036854775808100m"},
		/* 2^64 - 1, 2^64 and 10^30 written out, and as an exponent. */
		{"18446744073709551615", "18446744073709551615"},
		{"18446744073709551616", "18446744073709551616"},
		{"1000000000000000000000000000000", "1"}, /* decimal SI past "E": no suffix */
		{"1e30", "1e30"},
		{"1e+30", "1e+30"},
		{"123456789012345678901234567890", "123456789012345678901234567890"},
		{"1234567890123456789012345678900000", "1234567890123456789012345678900k"},
	};
	char buf[QUANTITY_STR_MAX];

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct quantity q = parse_ok(cases[i].in);

		if (strcmp(quantity_string(&q, buf, sizeof(buf)), cases[i].out))
			fail_msg("%s: got %s, want %s", cases[i].in, buf, cases[i].out);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(parse_table),
		cmocka_unit_test(parse_invalid),
		cmocka_unit_test(parse_oddities),
		cmocka_unit_test(string_table),
		cmocka_unit_test(parse_emit),
		cmocka_unit_test(compare),
		cmocka_unit_test(new_set),
		cmocka_unit_test(values_and_integers),
		cmocka_unit_test(from_json),
		cmocka_unit_test(add),
		cmocka_unit_test(sub),
		cmocka_unit_test(big_values_exact),
		cmocka_unit_test(integer_rule),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
