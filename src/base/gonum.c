#include "base/gonum.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/banned.h"

/* A bounded writer: counts every byte, stores what fits, keeps buf a string. */
struct out {
	char *buf;
	size_t size;
	size_t at;
};

static void put(struct out *o, const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		if (o->at + 1 < o->size)
			o->buf[o->at] = s[i];
		o->at++;
	}
	if (o->size)
		o->buf[o->at < o->size ? o->at : o->size - 1] = '\0';
}

static void puts_(struct out *o, const char *s)
{
	put(o, s, strlen(s));
}

/*
 * Shortest decimal digits that read back as the same float64 (or float32
 * when bits == 32) of |v|: digits without the point into dig (at least 18
 * bytes), and the decimal exponent such that |v| = 0.d1d2... * 10^dp.
 * v is finite and not zero.
 */
static void shortest_digits(double v, int bits, char *dig, int *nd, int *dp)
{
	char buf[64];
	int maxp = bits == 32 ? 9 : 17;
	int k = 0;
	char *e;

	v = fabs(v);
	for (int prec = 1; prec <= maxp; prec++) {
		snprintf(buf, sizeof(buf), "%.*e", prec - 1, v);
		if (prec == maxp)
			break;
		if (bits == 32 ? strtof(buf, NULL) == (float)v : strtod(buf, NULL) == v)
			break;
	}
	e = strchr(buf, 'e');
	for (const char *c = buf; c < e; c++)
		if (*c >= '0' && *c <= '9')
			dig[k++] = *c;
	while (k > 1 && dig[k - 1] == '0')
		k--;
	dig[k] = '\0';
	*nd = k;
	*dp = (int)strtol(e + 1, NULL, 10) + 1;
}

/* d[.ddd]e±XX; min2 pads the exponent to two digits (strconv), else not. */
static void fmt_e(struct out *o, const char *dig, int nd, int dp, int min2)
{
	char ex[16];
	int exp = nd == 1 && dig[0] == '0' ? 0 : dp - 1;

	put(o, dig, 1);
	if (nd > 1) {
		put(o, ".", 1);
		put(o, dig + 1, (size_t)nd - 1);
	}
	snprintf(ex, sizeof(ex), "e%c%0*d", exp < 0 ? '-' : '+', min2 ? 2 : 1,
		 exp < 0 ? -exp : exp);
	puts_(o, ex);
}

/* ddd[.ddd], zeros filled in on either side. */
static void fmt_f(struct out *o, const char *dig, int nd, int dp)
{
	if (dp <= 0) {
		put(o, "0", 1);
	} else {
		for (int i = 0; i < dp; i++)
			put(o, i < nd ? &dig[i] : "0", 1);
	}
	if (nd > dp) {
		put(o, ".", 1);
		for (int i = dp; i < 0; i++)
			put(o, "0", 1);
		for (int i = dp > 0 ? dp : 0; i < nd; i++)
			put(o, &dig[i], 1);
	}
}

size_t gonum_format_float(double f, char fmt, int bits, char *buf, size_t size)
{
	struct out o = {.buf = buf, .size = size, .at = 0};
	char dig[32];
	int nd, dp;

	put(&o, "", 0);
	if (bits == 32)
		f = (float)f;
	if (isnan(f)) {
		puts_(&o, "NaN");
		return o.at;
	}
	if (isinf(f)) {
		puts_(&o, f > 0 ? "+Inf" : "-Inf");
		return o.at;
	}
	if (signbit(f))
		put(&o, "-", 1);
	if (f == 0) {
		dig[0] = '0';
		dig[1] = '\0';
		nd = 1;
		dp = 1;
	} else {
		shortest_digits(f, bits, dig, &nd, &dp);
	}
	if (fmt == 'g')
		fmt = f != 0 && (dp - 1 < -4 || dp - 1 >= 6) ? 'e' : 'f';
	if (fmt == 'e')
		fmt_e(&o, dig, nd, dp, 1);
	else
		fmt_f(&o, dig, nd, dp);
	return o.at;
}

size_t gonum_json_float(double f, char *buf, size_t size)
{
	struct out o = {.buf = buf, .size = size, .at = 0};
	char dig[32];
	int nd, dp;
	double a = fabs(f);

	put(&o, "", 0);
	if (!isfinite(f))
		return gonum_format_float(f, 'g', 64, buf, size);
	if (signbit(f))
		put(&o, "-", 1);
	if (f == 0) {
		put(&o, "0", 1);
		return o.at;
	}
	shortest_digits(f, 64, dig, &nd, &dp);
	if (a < 1e-6 || a >= 1e21)
		fmt_e(&o, dig, nd, dp, 0);
	else
		fmt_f(&o, dig, nd, dp);
	return o.at;
}

int gonum_json_number(const json_t *num, char *buf, size_t size)
{
	if (json_is_integer(num)) {
		snprintf(buf, size, "%" JSON_INTEGER_FORMAT, json_integer_value(num));
		return 0;
	}
	if (json_is_real(num)) {
		gonum_json_float(json_real_value(num), buf, size);
		return 0;
	}
	if (size)
		buf[0] = '\0';
	return -1;
}

const char *gonum_json_kind(const json_t *v)
{
	switch (json_typeof(v)) {
	case JSON_OBJECT:
		return "object";
	case JSON_ARRAY:
		return "array";
	case JSON_STRING:
		return "string";
	case JSON_INTEGER:
	case JSON_REAL:
		return "number";
	case JSON_TRUE:
	case JSON_FALSE:
		return "bool";
	case JSON_NULL:
		return "null";
	}
	return "null";
}
