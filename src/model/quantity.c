#include "model/quantity.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/gonum.h"
#include "base/banned.h"

/* Scratch width for arithmetic: a coefficient plus carries. */
#define WORK_DIGITS (QUANTITY_MAX_DIGITS + 8)

/* Big-endian decimal digits 0..9. */
struct digits {
	size_t n;
	unsigned char d[WORK_DIGITS];
};

struct span {
	const char *s;
	size_t n;
};

/* ---- scanners: each advances *p only when it succeeds ---- */

static int scan_sign(const char **p, const char *end, bool *negative)
{
	*negative = false;
	if (*p < end && (**p == '-' || **p == '+')) {
		*negative = **p == '-';
		(*p)++;
	}
	return 0;
}

/* Zero or more ASCII digits. */
static int scan_digits(const char **p, const char *end, struct span *out)
{
	const char *q = *p;

	while (q < end && *q >= '0' && *q <= '9')
		q++;
	out->s = *p;
	out->n = (size_t)(q - *p);
	*p = q;
	return 0;
}

static int scan_char(const char **p, const char *end, char c)
{
	if (*p >= end || **p != c)
		return -1;
	(*p)++;
	return 0;
}

/* Upstream's suffix scan: [eEinumkKMGTP]* [-+]? [0-9]*. */
static int scan_suffix(const char **p, const char *end, struct span *out)
{
	const char *q = *p;
	struct span digits;

	while (q < end && *q && strchr("eEinumkKMGTP", *q))
		q++;
	if (q < end && (*q == '-' || *q == '+'))
		q++;
	(void)scan_digits(&q, end, &digits);
	out->s = *p;
	out->n = (size_t)(q - *p);
	*p = q;
	return 0;
}

static int scan_end(const char **p, const char *end)
{
	return *p == end ? 0 : -1;
}

/* ---- digit arithmetic ---- */

static void digits_from_span(struct digits *d, const struct span *a, const struct span *b)
{
	d->n = 0;
	for (size_t i = 0; i < a->n; i++)
		d->d[d->n++] = (unsigned char)(a->s[i] - '0');
	for (size_t i = 0; i < b->n; i++)
		d->d[d->n++] = (unsigned char)(b->s[i] - '0');
}

/* d *= m (m small). Returns -1 when the result would not fit. */
static int digits_mul_small(struct digits *d, unsigned m)
{
	unsigned carry = 0;

	for (size_t i = d->n; i-- > 0;) {
		unsigned v = d->d[i] * m + carry;
		d->d[i] = (unsigned char)(v % 10);
		carry = v / 10;
	}
	while (carry) {
		if (d->n == WORK_DIGITS)
			return -1;
		memmove(d->d + 1, d->d, d->n);
		d->d[0] = (unsigned char)(carry % 10);
		d->n++;
		carry /= 10;
	}
	return 0;
}

/* d /= m, returning the remainder. */
static unsigned digits_divmod_small(struct digits *d, unsigned m)
{
	unsigned rem = 0;

	for (size_t i = 0; i < d->n; i++) {
		unsigned v = rem * 10 + d->d[i];
		d->d[i] = (unsigned char)(v / m);
		rem = v % m;
	}
	return rem;
}

/*
 * Store d * 10^exp into q with leading and trailing zeros removed. The
 * caller guarantees d fits QUANTITY_MAX_DIGITS once stripped.
 */
static void set_value(struct quantity *q, const struct digits *d, int64_t exp)
{
	size_t lo = 0, hi = d->n;

	while (lo < hi && d->d[lo] == 0)
		lo++;
	while (hi > lo && d->d[hi - 1] == 0) {
		hi--;
		exp++;
	}
	q->ndigits = (unsigned char)(hi - lo);
	for (size_t i = lo; i < hi; i++)
		q->digits[i - lo] = (char)('0' + d->d[i]);
	q->exp = q->ndigits ? exp : 0;
	if (!q->ndigits)
		q->negative = false;
}

/* The value of d (at most 19 digits). */
static uint64_t digits_uint64(const struct digits *d)
{
	uint64_t v = 0;

	for (size_t i = 0; i < d->n; i++)
		v = v * 10 + d->d[i];
	return v;
}

/* Mark q as an inf.Dec of the given scale (value * 10^scale is an integer). */
static void set_dec(struct quantity *q, int32_t scale)
{
	q->repr = QUANTITY_REPR_DEC;
	q->go_scale = scale;
	q->go_value = 0;
}

static void to_digits(const struct quantity *q, struct digits *d)
{
	d->n = q->ndigits;
	for (size_t i = 0; i < q->ndigits; i++)
		d->d[i] = (unsigned char)(q->digits[i] - '0');
}

/* Round a non-zero value finer than 10^exp away from zero to 10^exp. */
static void round_away(struct quantity *q, int64_t exp)
{
	struct digits d;
	int64_t drop;

	if (!q->ndigits || q->exp >= exp)
		return;
	drop = exp - q->exp;
	if (drop >= q->ndigits) {
		d.n = 1;
		d.d[0] = 1;
		set_value(q, &d, exp);
		return;
	}
	/* The last digit is non-zero, so the dropped part always is. */
	to_digits(q, &d);
	d.n -= (size_t)drop;
	for (size_t i = d.n; i-- > 0;) {
		if (++d.d[i] < 10)
			goto done;
		d.d[i] = 0;
	}
	memmove(d.d + 1, d.d, d.n);
	d.d[0] = 1;
	d.n++;
done:
	set_value(q, &d, exp);
}

/* Round a non-zero value finer than 1n away from zero to the nano. */
static void round_up_to_nano(struct quantity *q)
{
	round_away(q, -9);
}

static int cmp_magnitude(const struct quantity *a, const struct quantity *b)
{
	int64_t oa, ob;
	size_t n;
	int c;

	if (!a->ndigits || !b->ndigits)
		return (a->ndigits != 0) - (b->ndigits != 0);
	oa = a->exp + a->ndigits;
	ob = b->exp + b->ndigits;
	if (oa != ob)
		return oa < ob ? -1 : 1;
	n = a->ndigits < b->ndigits ? a->ndigits : b->ndigits;
	c = memcmp(a->digits, b->digits, n);
	if (c)
		return c < 0 ? -1 : 1;
	return (a->ndigits > b->ndigits) - (a->ndigits < b->ndigits);
}

static void set_uint64(struct quantity *q, uint64_t v)
{
	struct digits d;
	unsigned char tmp[24];
	size_t k = sizeof(tmp);

	do {
		tmp[--k] = (unsigned char)(v % 10);
		v /= 10;
	} while (v);
	d.n = 0;
	while (k < sizeof(tmp))
		d.d[d.n++] = tmp[k++];
	set_value(q, &d, 0);
}

/* ---- suffixes ---- */

struct suffix {
	const char *text;
	int base;
	int exponent;
};

static const struct suffix suffixes[] = {
	{"", 10, 0},   {"n", 10, -9}, {"u", 10, -6}, {"m", 10, -3}, {"k", 10, 3},  {"M", 10, 6},
	{"G", 10, 9},  {"T", 10, 12}, {"P", 10, 15}, {"E", 10, 18}, {"Ki", 2, 10}, {"Mi", 2, 20},
	{"Gi", 2, 30}, {"Ti", 2, 40}, {"Pi", 2, 50}, {"Ei", 2, 60},
};

/* strconv.ParseInt(s, 10, 64). */
static int go_parse_int64(const char *s, size_t n, int64_t *out)
{
	bool neg = false;
	uint64_t v = 0, limit;
	size_t i = 0;

	if (n && (s[0] == '+' || s[0] == '-')) {
		neg = s[0] == '-';
		i = 1;
	}
	if (i == n)
		return -1;
	limit = neg ? (uint64_t)INT64_MAX + 1 : (uint64_t)INT64_MAX;
	for (; i < n; i++) {
		unsigned c = (unsigned char)s[i] - '0';
		if (c > 9 || v > (limit - c) / 10)
			return -1;
		v = v * 10 + c;
	}
	*out = neg ? (int64_t)(0 - v) : (int64_t)v;
	return 0;
}

static int interpret_suffix(const struct span *s, int *base, int64_t *exponent,
			    enum quantity_format *format)
{
	int64_t parsed;
	uint32_t low;

	for (size_t i = 0; i < sizeof(suffixes) / sizeof(suffixes[0]); i++) {
		if (strlen(suffixes[i].text) == s->n && !memcmp(suffixes[i].text, s->s, s->n)) {
			*base = suffixes[i].base;
			*exponent = suffixes[i].exponent;
			*format = *base == 2 ? QUANTITY_BINARY_SI : QUANTITY_DECIMAL_SI;
			return 0;
		}
	}
	if (s->n < 2 || (s->s[0] != 'e' && s->s[0] != 'E'))
		return -1;
	if (go_parse_int64(s->s + 1, s->n - 1, &parsed) < 0)
		return -1;
	/* Upstream converts with int32(parsed): keep the low 32 bits. */
	low = (uint32_t)(uint64_t)parsed;
	*exponent = low >= 0x80000000u ? (int64_t)low - 0x100000000LL : (int64_t)low;
	*base = 10;
	*format = QUANTITY_DECIMAL_EXPONENT;
	return 0;
}

/* ---- parsing ---- */

static void zero(struct quantity *q, enum quantity_format format)
{
	memset(q, 0, sizeof(*q));
	q->format = format;
}

static int fail(struct quantity *out, struct gs_error *err, const char *msg)
{
	zero(out, QUANTITY_DECIMAL_SI);
	gs_error_set(err, "%s", msg);
	return -1;
}

static bool ends_with_000(const struct span *num, const struct span *den)
{
	/* shifted = num + den; num is "0" when empty */
	char tail[3];
	size_t have = 0;

	for (size_t i = den->n; i-- > 0 && have < 3;)
		tail[have++] = den->s[i];
	if (!num->n && have < 3)
		tail[have++] = '0';
	for (size_t i = num->n; i-- > 0 && have < 3;)
		tail[have++] = num->s[i];
	return have == 3 && tail[0] == '0' && tail[1] == '0' && tail[2] == '0';
}

int quantity_parse(struct quantity *out, const char *s, size_t len, struct gs_error *err)
{
	const char *p = s, *end = s + len;
	struct span num, den = {s, 0}, suf;
	bool negative, fast;
	int base;
	int64_t exponent;
	enum quantity_format format;
	struct digits d;
	struct quantity maxq;

	if (len == 0)
		return fail(out, err, QUANTITY_ERR_FORMAT);
	if (len > QUANTITY_MAX_LEN) {
		zero(out, QUANTITY_DECIMAL_SI);
		gs_error_set(err, "quantity is longer than %d characters", QUANTITY_MAX_LEN);
		return -1;
	}
	if (len == 1 && s[0] == '0') {
		zero(out, QUANTITY_DECIMAL_SI);
		out->text[0] = '0';
		return 0;
	}
	if (scan_sign(&p, end, &negative) || scan_digits(&p, end, &num))
		return fail(out, err, QUANTITY_ERR_FORMAT);
	if (!scan_char(&p, end, '.'))
		(void)scan_digits(&p, end, &den);
	if (scan_suffix(&p, end, &suf) || scan_end(&p, end))
		return fail(out, err, QUANTITY_ERR_FORMAT);
	if (interpret_suffix(&suf, &base, &exponent, &format))
		return fail(out, err, QUANTITY_ERR_SUFFIX);

	/* Leading zeros of the integer part carry nothing (upstream strips them). */
	bool any_digit = num.n + den.n > 0;
	while (num.n && num.s[0] == '0') {
		num.s++;
		num.n--;
	}
	size_t num_len = num.n ? num.n : 1;

	memset(out, 0, sizeof(*out));
	out->negative = negative;
	out->format = format;
	digits_from_span(&d, &num, &den);

	if (base == 10) {
		int64_t scale = exponent - (int64_t)den.n;
		fast = 18 - (int64_t)(num_len + den.n) >= 0 && scale >= -9;
		if (!fast && !any_digit)
			return fail(out, err, QUANTITY_ERR_NUMERIC);
		set_value(out, &d, scale);
		round_up_to_nano(out);
		if (fast) {
			/* int64Amount{ParseInt(num + den), scale} */
			out->go_value = (int64_t)digits_uint64(&d);
			if (negative)
				out->go_value = -out->go_value;
			out->go_scale = (int32_t)scale;
		} else {
			set_dec(out, 9); /* rounded to the nano: inf.Dec of scale 9 */
		}
		if (fast && scale % 3 == 0 && !ends_with_000(&num, &den) && num.n)
			memcpy(out->text, s, len);
		return 0;
	}

	/* binary SI */
	fast = den.n == 0 && 14 - (int64_t)num_len - exponent * 3 / 10 >= 0;
	if (!fast && !any_digit)
		return fail(out, err, QUANTITY_ERR_NUMERIC);
	for (int64_t i = 0; i < exponent / 10; i++)
		if (digits_mul_small(&d, 1024) < 0)
			return fail(out, err,
				    QUANTITY_ERR_NUMERIC); /* unreachable with the length cap */
	set_value(out, &d, -(int64_t)den.n);
	out->negative = negative && out->ndigits;
	round_up_to_nano(out);
	set_dec(out, 9);
	/* 2^63 - 1 has 19 digits: only a value that long may pass it */
	if (out->exp + out->ndigits >= 19)
		quantity_from_int64(&maxq, INT64_MAX, QUANTITY_BINARY_SI);
	if (out->exp + out->ndigits >= 19 && cmp_magnitude(out, &maxq) > 0) {
		bool neg = out->negative;
		*out = maxq;
		out->negative = neg;
		set_dec(out, 0); /* the cap is an inf.Dec of scale 0 */
	}
	if (out->ndigits && out->exp + out->ndigits <= 0)
		out->format = QUANTITY_DECIMAL_SI; /* 0 < |v| < 1 */
	if (fast) {
		uint64_t v = 0;
		for (size_t i = 0; i < num.n; i++)
			v = v * 10 + (uint64_t)(num.s[i] - '0');
		/* int64Amount{ParseInt(num) << exponent, 0}: fits, as fast says */
		out->repr = QUANTITY_REPR_INT64;
		out->go_value = (int64_t)(v << exponent);
		if (negative)
			out->go_value = -out->go_value;
		out->go_scale = 0;
		if (v & 7)
			memcpy(out->text, s, len);
	}
	return 0;
}

static bool is_space(char c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r';
}

int quantity_from_json(struct quantity *out, const json_t *v, struct gs_error *err)
{
	char buf[96];

	/* an absent value (json_object_get's NULL) reads as null does: 0, not a crash */
	if (!v) {
		zero(out, QUANTITY_DECIMAL_SI);
		return 0;
	}
	switch (json_typeof(v)) {
	case JSON_STRING: {
		const char *s = json_string_value(v);
		size_t n = json_string_length(v);
		while (n && is_space(*s)) {
			s++;
			n--;
		}
		while (n && is_space(s[n - 1]))
			n--;
		return quantity_parse(out, s, n, err);
	}
	case JSON_INTEGER: {
		/* the decimal digits, without printf: this runs for every resource of a file */
		json_int_t n = json_integer_value(v);
		uint64_t m = n < 0 ? 0 - (uint64_t)n : (uint64_t)n;
		size_t k = sizeof(buf);
		do {
			buf[--k] = (char)('0' + m % 10);
			m /= 10;
		} while (m);
		if (n < 0)
			buf[--k] = '-';
		return quantity_parse(out, buf + k, sizeof(buf) - k, err);
	}
	case JSON_REAL:
		gonum_json_float(json_real_value(v), buf, sizeof(buf));
		return quantity_parse(out, buf, strlen(buf), err);
	case JSON_NULL:
		zero(out, QUANTITY_DECIMAL_SI);
		return 0;
	default:
		return fail(out, err, QUANTITY_ERR_FORMAT);
	}
}

void quantity_from_int64(struct quantity *out, int64_t v, enum quantity_format format)
{
	zero(out, format);
	if (v < 0) {
		out->negative = true;
		set_uint64(out, (uint64_t)0 - (uint64_t)v);
	} else {
		set_uint64(out, (uint64_t)v);
	}
	out->go_value = v; /* NewQuantity: int64Amount{v, 0} */
}

/* ---- comparison and conversion ---- */

int quantity_sign(const struct quantity *q)
{
	if (!q->ndigits)
		return 0;
	return q->negative ? -1 : 1;
}

bool quantity_is_zero(const struct quantity *q)
{
	return q->ndigits == 0;
}

int quantity_cmp(const struct quantity *a, const struct quantity *b)
{
	int sa = quantity_sign(a), sb = quantity_sign(b);

	if (sa != sb)
		return sa < sb ? -1 : 1;
	return sa >= 0 ? cmp_magnitude(a, b) : -cmp_magnitude(a, b);
}

int quantity_cmp_int64(const struct quantity *a, int64_t v)
{
	struct quantity b;

	quantity_from_int64(&b, v, QUANTITY_DECIMAL_SI);
	return quantity_cmp(a, &b);
}

bool quantity_is_whole(const struct quantity *q)
{
	return !q->ndigits || q->exp >= 0;
}

/* ceil(|q| / 10^scale), then the sign; -1 on int64 overflow. */
static int scaled_value(const struct quantity *q, int scale, int64_t *out)
{
	int64_t e;
	uint64_t acc = 0;
	int64_t keep;

	if (!q->ndigits) {
		*out = 0;
		return 0;
	}
	e = q->exp - scale;
	keep = (int64_t)q->ndigits + e; /* digits left of the point */
	if (keep > 19)
		return -1;
	for (int64_t i = 0; i < keep; i++) {
		unsigned c = i < q->ndigits ? (unsigned)(q->digits[i] - '0') : 0;
		if (acc > (UINT64_MAX - c) / 10)
			return -1;
		acc = acc * 10 + c;
	}
	if (e < 0)
		acc++; /* a non-zero fraction remains: the last digit is never 0 */
	if (acc > (uint64_t)INT64_MAX)
		return -1;
	*out = q->negative ? -(int64_t)acc : (int64_t)acc;
	return 0;
}

int quantity_value(const struct quantity *q, int64_t *out)
{
	return scaled_value(q, 0, out);
}

int quantity_milli_value(const struct quantity *q, int64_t *out)
{
	return scaled_value(q, -3, out);
}

bool quantity_is_k8s_integer(const struct quantity *q)
{
	return quantity_go_milli_value(q) % 1000 == 0;
}

/* ---- upstream's int64 arithmetic, wrap-around included ---- */

/* Go's a * b on int64: the low 64 bits. */
static int64_t go_mul(int64_t a, int64_t b)
{
	return (int64_t)((uint64_t)a * (uint64_t)b);
}

static int64_t go_add(int64_t a, int64_t b)
{
	return (int64_t)((uint64_t)a + (uint64_t)b);
}

/* int64MultiplyScale (and its 10, 100, 1000 variants): the product, wrapped, and whether exact. */
static int64_t go_multiply_scale(int64_t a, int64_t b, bool *ok)
{
	int64_t c;

	*ok = true;
	if (a == 0 || a == 1)
		return a * b;
	if (a == INT64_MIN) {
		*ok = false;
		return 0;
	}
	c = go_mul(a, b);
	*ok = c / b == a;
	return c;
}

/* positiveScaleInt64(base, scale): base * 10^scale. */
static int64_t go_positive_scale(int64_t base, int32_t scale, bool *ok)
{
	int64_t value = base;

	*ok = true;
	switch (scale) {
	case 0:
		return base;
	case 1:
		return go_multiply_scale(base, 10, ok);
	case 2:
		return go_multiply_scale(base, 100, ok);
	case 3:
		return go_multiply_scale(base, 1000, ok);
	case 6:
		return go_multiply_scale(base, 1000000, ok);
	case 9:
		return go_multiply_scale(base, 1000000000, ok);
	default:
		/* 0 stays 0 however long upstream loops; anything else overflows within 19 steps */
		for (int32_t i = 0; i < scale && value; i++) {
			value = go_multiply_scale(value, 10, ok);
			if (!*ok)
				return 0;
		}
		return value;
	}
}

/* negativeScaleInt64(base, scale): base / 10^scale rounded away from zero. */
static int64_t go_negative_scale(int64_t base, int32_t scale, bool *exact)
{
	int64_t value = base;
	bool fraction = false;

	*exact = true;
	if (scale == 0)
		return base;
	for (int32_t i = 0; i < scale; i++) {
		if (!fraction && value % 10 != 0)
			fraction = true;
		value /= 10;
		if (value == 0) {
			*exact = !fraction;
			return fraction ? (base > 0 ? 1 : -1) : 0;
		}
	}
	if (fraction)
		value += base > 0 ? 1 : -1;
	*exact = !fraction;
	return value;
}

/*
 * |coefficient| * 10^shift truncated to an integer, modulo 2^64 (the low
 * 64 bits of a big.Int); *rem tells whether a non-zero part was dropped.
 */
static uint64_t low64_scaled(const struct quantity *q, int64_t shift, bool *rem)
{
	int64_t keep = (int64_t)q->ndigits + shift;
	uint64_t acc = 0;

	*rem = false;
	if (!q->ndigits)
		return 0;
	if (keep <= 0) {
		*rem = true;
		return 0;
	}
	for (int64_t i = 0; i < keep && i < q->ndigits; i++)
		acc = acc * 10 + (uint64_t)(q->digits[i] - '0');
	if (keep < q->ndigits) {
		*rem = true; /* the last digit is never 0 */
		return acc;
	}
	/* 10^64 is a multiple of 2^64: past that every factor of ten leaves 0 */
	for (int64_t i = q->ndigits; i < keep; i++) {
		if (i - q->ndigits >= 64)
			return 0;
		acc *= 10;
	}
	return acc;
}

/* big.Int.Int64() of the inf.Dec's unscaled value: the low 64 bits, then the sign. */
static int64_t dec_unscaled_int64(const struct quantity *q)
{
	bool rem;
	uint64_t u = low64_scaled(q, q->exp + q->go_scale, &rem);

	return (int64_t)(q->negative ? 0 - u : u);
}

/* The unscaled value is below math.MaxInt64 (signed comparison). */
static bool dec_unscaled_below_max(const struct quantity *q)
{
	int64_t len = (int64_t)q->ndigits + q->exp + q->go_scale;
	bool rem;

	if (q->negative || !q->ndigits)
		return true;
	if (len > 19)
		return false;
	return low64_scaled(q, q->exp + q->go_scale, &rem) < (uint64_t)INT64_MAX;
}

/* Quantity.ScaledValue(scale), as upstream computes it. */
static int64_t go_scaled_value(const struct quantity *q, int32_t scale)
{
	if (q->repr == QUANTITY_REPR_INT64) {
		/* int64Amount.AsScaledInt64(scale); ScaledValue ignores its ok */
		bool ok;
		int32_t diff;

		if (q->go_scale < scale)
			return go_negative_scale(q->go_value, scale - q->go_scale, &ok);
		/* a.scale - scale is an int32 in Go: it wraps near 2^31 */
		diff = (int32_t)((uint32_t)q->go_scale - (uint32_t)scale);
		return go_positive_scale(q->go_value, diff, &ok);
	}
	/* scaledValue(unscaled, scale of the inf.Dec, -scale) */
	int64_t dif = (int64_t)q->go_scale + scale;
	if (dif == 0)
		return dec_unscaled_int64(q);
	if (dif < 0) {
		int64_t v = dec_unscaled_int64(q);
		for (int64_t i = 0; i < -dif; i++)
			v = go_mul(v, 10);
		return v;
	}
	if (dec_unscaled_below_max(q) && dif < 19) {
		int64_t divide = 1, v = dec_unscaled_int64(q);
		for (int64_t i = 0; i < dif; i++)
			divide *= 10;
		return v % divide ? v / divide + 1 : v / divide;
	}
	/* big.Int DivMod (Euclidean), Int64() of the quotient, + 1 when a remainder is left */
	bool rem;
	uint64_t u = low64_scaled(q, q->exp + q->go_scale - dif, &rem);
	if (q->negative) /* floor(-X / d) + 1 with a remainder = -trunc(X / d) */
		return (int64_t)(0 - u);
	return rem ? go_add((int64_t)u, 1) : (int64_t)u;
}

int64_t quantity_go_milli_value(const struct quantity *q)
{
	return go_scaled_value(q, -3);
}

int64_t quantity_go_value(const struct quantity *q)
{
	return go_scaled_value(q, 0);
}

void quantity_round_up_milli(struct quantity *q)
{
	const int32_t milli = -3;
	bool exact;

	if (q->repr == QUANTITY_REPR_DEC) {
		/* infDecAmount.AsScale(-3): inf.Dec.Round(3, RoundUp); s is cleared */
		round_away(q, milli);
		q->go_scale = -milli;
		q->text[0] = '\0';
		return;
	}
	if (q->go_scale >= milli)
		return; /* the text is kept */
	q->go_value = go_negative_scale(q->go_value, milli - q->go_scale, &exact);
	q->go_scale = milli;
	round_away(q, milli);
	q->text[0] = '\0';
}

/* int64Add: false when the sum overflows. */
static bool go_int64_add(int64_t a, int64_t b, int64_t *out)
{
	int64_t c = go_add(a, b);

	if ((a > 0 && b > 0 && c < 0) || (a < 0 && b < 0 && c >= 0))
		return false;
	*out = c;
	return true;
}

/* int64Amount.Add: a += b when it fits; a unchanged otherwise. */
static bool go_amount_add(int64_t *av, int32_t *as, int64_t bv, int32_t bs)
{
	int64_t c;
	bool ok;

	if (bv == 0)
		return true;
	if (*av == 0) {
		*av = bv;
		*as = bs;
		return true;
	}
	ok = true;
	if (*as > bs) {
		c = go_positive_scale(*av, (int32_t)((uint32_t)*as - (uint32_t)bs), &ok);
		if (!ok || !go_int64_add(c, bv, &c))
			return false;
		*as = bs;
	} else {
		c = *as == bs ? bv
			      : go_positive_scale(bv, (int32_t)((uint32_t)bs - (uint32_t)*as), &ok);
		if (!ok || !go_int64_add(*av, c, &c))
			return false;
	}
	*av = c;
	return true;
}

/* Quantity.Add's representation of a + b: int64 when both are and it fits, else an inf.Dec. */
static void add_repr(struct quantity *r, const struct quantity *a, const struct quantity *b)
{
	int64_t va = a->go_value, sa, sb;
	int32_t scale = a->go_scale;

	if (a->repr == QUANTITY_REPR_INT64 && b->repr == QUANTITY_REPR_INT64 &&
	    go_amount_add(&va, &scale, b->go_value, b->go_scale)) {
		r->repr = QUANTITY_REPR_INT64;
		r->go_value = va;
		r->go_scale = scale;
		return;
	}
	/* ToDec: an int64Amount{v, s} is the inf.Dec v / 10^-s; the sum takes the larger scale */
	sa = a->repr == QUANTITY_REPR_INT64 ? -(int64_t)a->go_scale : a->go_scale;
	sb = b->repr == QUANTITY_REPR_INT64 ? -(int64_t)b->go_scale : b->go_scale;
	set_dec(r, (int32_t)(sa > sb ? sa : sb));
}

int quantity_add(struct quantity *out, const struct quantity *a, const struct quantity *b,
		 struct gs_error *err)
{
	struct quantity r;
	int64_t lo, hi;
	size_t width;
	unsigned char x[WORK_DIGITS], y[WORK_DIGITS]; /* little-endian */
	struct digits d;
	int c;

	if (!a->ndigits || !b->ndigits) {
		r = a->ndigits ? *a : *b;
		r.format = a->ndigits ? a->format : b->format;
		r.text[0] = '\0';
		add_repr(&r, a, b);
		*out = r;
		return 0;
	}
	lo = a->exp < b->exp ? a->exp : b->exp;
	hi = a->exp + a->ndigits > b->exp + b->ndigits ? a->exp + a->ndigits : b->exp + b->ndigits;
	if (hi - lo + 1 > QUANTITY_MAX_DIGITS) {
		gs_error_set(err, "sum of quantities needs more than %d significant digits",
			     QUANTITY_MAX_DIGITS);
		return -1;
	}
	width = (size_t)(hi - lo + 1);
	memset(x, 0, sizeof(x));
	memset(y, 0, sizeof(y));
	for (size_t i = 0; i < a->ndigits; i++)
		x[(size_t)(a->exp - lo) + a->ndigits - 1 - i] = (unsigned char)(a->digits[i] - '0');
	for (size_t i = 0; i < b->ndigits; i++)
		y[(size_t)(b->exp - lo) + b->ndigits - 1 - i] = (unsigned char)(b->digits[i] - '0');

	memset(&r, 0, sizeof(r));
	r.format = a->format;
	if (a->negative == b->negative) {
		unsigned carry = 0;
		r.negative = a->negative;
		for (size_t i = 0; i < width; i++) {
			unsigned v = x[i] + y[i] + carry;
			x[i] = (unsigned char)(v % 10);
			carry = v / 10;
		}
	} else {
		int borrow = 0;
		unsigned char *big = x, *small = y;
		c = cmp_magnitude(a, b);
		r.negative = c > 0 ? a->negative : b->negative;
		if (c < 0) {
			big = y;
			small = x;
		}
		for (size_t i = 0; i < width; i++) {
			int v = big[i] - small[i] - borrow;
			borrow = v < 0;
			x[i] = (unsigned char)(v < 0 ? v + 10 : v);
		}
	}
	d.n = width;
	for (size_t i = 0; i < width; i++)
		d.d[i] = x[width - 1 - i];
	set_value(&r, &d, lo);
	add_repr(&r, a, b);
	*out = r;
	return 0;
}

int quantity_sub(struct quantity *out, const struct quantity *a, const struct quantity *b,
		 struct gs_error *err)
{
	struct quantity nb = *b;

	/* Quantity.Neg: the sign flips, the remembered text goes; int64Amount.Sub adds
	 * {-value, scale}, wrapped as Go wraps it. */
	nb.negative = b->ndigits && !b->negative;
	nb.text[0] = '\0';
	if (nb.repr == QUANTITY_REPR_INT64)
		nb.go_value = (int64_t)(0 - (uint64_t)b->go_value);
	return quantity_add(out, a, &nb, err);
}

/* ---- formatting ---- */

static const char *decimal_si_suffix(int64_t exp)
{
	for (size_t i = 0; i < sizeof(suffixes) / sizeof(suffixes[0]); i++)
		if (suffixes[i].base == 10 && suffixes[i].exponent == exp)
			return suffixes[i].text;
	return NULL;
}

const char *quantity_canonical(const struct quantity *q, char *buf, size_t size)
{
	enum quantity_format format = q->format;
	size_t o = 0;

	if (size == 0)
		return buf;
	if (!q->ndigits) {
		snprintf(buf, size, "0");
		return buf;
	}
	if (format == QUANTITY_BINARY_SI &&
	    ((quantity_cmp_int64(q, -1024) > 0 && quantity_cmp_int64(q, 1024) < 0) ||
	     !quantity_is_whole(q) || (size_t)q->exp + q->ndigits > WORK_DIGITS))
		format = QUANTITY_DECIMAL_SI;

	if (format == QUANTITY_BINARY_SI) {
		struct digits d, t;
		int k = 0;
		to_digits(q, &d);
		for (int64_t i = 0; i < q->exp; i++)
			d.d[d.n++] = 0;
		for (;;) {
			t = d;
			if (k == 6 || digits_divmod_small(&t, 1024) != 0)
				break;
			/* a multiple of 1024 that is >= 1024 */
			d = t;
			k++;
		}
		size_t lo = 0;
		while (lo + 1 < d.n && d.d[lo] == 0)
			lo++;
		char num[WORK_DIGITS + 1];
		size_t n = 0;
		for (size_t i = lo; i < d.n; i++)
			num[n++] = (char)('0' + d.d[i]);
		num[n] = '\0';
		static const char *const bin[] = {"", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei"};
		snprintf(buf, size, "%s%s%s", q->negative ? "-" : "", num, bin[k]);
		return buf;
	}

	int64_t exp = q->exp;
	int64_t r = exp % 3;
	if (r < 0)
		r += 3;
	exp -= r;
	char num[QUANTITY_MAX_DIGITS + 4];
	if (q->negative)
		num[o++] = '-';
	memcpy(num + o, q->digits, q->ndigits);
	o += q->ndigits;
	for (int64_t i = 0; i < r; i++)
		num[o++] = '0';
	num[o] = '\0';
	/* Decimal SI past "E" has no suffix, and upstream prints none: "1000E" is "1". */
	const char *suffix = format == QUANTITY_DECIMAL_SI ? decimal_si_suffix(exp) : NULL;
	if (suffix || exp == 0 || format == QUANTITY_DECIMAL_SI)
		snprintf(buf, size, "%s%s", num, suffix ? suffix : "");
	else
		snprintf(buf, size, "%se%lld", num, (long long)exp);
	return buf;
}

const char *quantity_string(const struct quantity *q, char *buf, size_t size)
{
	if (q->text[0] && size) {
		snprintf(buf, size, "%s", q->text);
		return buf;
	}
	return quantity_canonical(q, buf, size);
}
