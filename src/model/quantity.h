#ifndef GS_QUANTITY_H
#define GS_QUANTITY_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/error.h"

/*
 * Kubernetes resource quantities (k8s.io/apimachinery pkg/api/resource):
 *
 *   <quantity> ::= [+-] <digits> [. <digits>] <suffix>   (digits may be empty)
 *   <suffix>   ::= "" | n u m k M G T P E        decimal SI
 *                | Ki Mi Gi Ti Pi Ei              binary SI
 *                | (e|E) [+-] <digits>            decimal exponent
 *
 * The value is kept exactly, as a decimal coefficient and a power of ten,
 * with upstream's two lossy steps reproduced: a non-zero value finer than
 * 1n is rounded away from zero to the nano ("0.9n" -> 1n, "3.001n" -> 4n),
 * and a binary-SI value is capped at 2^63-1 ("9Ei" -> 2^63-1). Decimal
 * values are not capped ("12E", "1e100" keep their value).
 *
 * Caps of this implementation (upstream has none, a real manifest never
 * comes near them):
 *   - an input longer than QUANTITY_MAX_LEN characters is refused;
 *   - a sum (quantity_add) needing more than QUANTITY_MAX_DIGITS
 *     significant digits is refused;
 *   - exponents are exact over upstream's whole int32 range, including its
 *     silent int32 truncation of a 64-bit exponent ("1e4294967296" is 1);
 *     upstream's own int32 wrap-around inside its arithmetic for exponents
 *     within ~100 of +-2^31 is not reproduced.
 *
 * Error messages are upstream's texts, without any prefix.
 */

#define QUANTITY_MAX_LEN 64
#define QUANTITY_MAX_DIGITS 96
/* Enough for any quantity_string() result. */
#define QUANTITY_STR_MAX 160

enum quantity_format {
	QUANTITY_DECIMAL_SI,	   /* 500m, 2, 1k, 1G */
	QUANTITY_BINARY_SI,	   /* 1Ki, 1Gi */
	QUANTITY_DECIMAL_EXPONENT, /* 1e3, 80e-3 */
};

/*
 * How upstream holds the value: a resource.Quantity is an int64Amount
 * (value * 10^scale) or an inf.Dec (unscaled / 10^scale). Arithmetic does
 * not depend on it; MilliValue()'s int64 wrap-around does
 * (quantity_go_milli_value).
 */
enum quantity_repr {
	QUANTITY_REPR_INT64, /* go_value * 10^go_scale, exactly the value */
	QUANTITY_REPR_DEC,   /* value * 10^go_scale is its (integer) unscaled part */
};

/* A plain value type: copy it freely, nothing to free. */
struct quantity {
	bool negative;
	unsigned char ndigits;		  /* 0 for zero */
	char digits[QUANTITY_MAX_DIGITS]; /* coefficient, '1'..'9' first and last */
	int64_t exp;			  /* value = coefficient * 10^exp */
	enum quantity_format format;
	/* Upstream keeps the input text when it judges it canonical and prints
	 * it back verbatim ("+1", "1.234", "1E3"); "" otherwise. */
	char text[QUANTITY_MAX_LEN + 1];
	enum quantity_repr repr;
	int32_t go_scale;
	int64_t go_value; /* QUANTITY_REPR_INT64 only */
};

/* Upstream's messages. */
#define QUANTITY_ERR_FORMAT                                                                        \
	"quantities must match the regular expression "                                            \
	"'^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"
#define QUANTITY_ERR_NUMERIC "unable to parse numeric part of quantity"
#define QUANTITY_ERR_SUFFIX "unable to parse quantity's suffix"

/*
 * ParseQuantity: the whole of s[0..len) must be a quantity (no surrounding
 * space: "1 " is an error, as upstream). On failure *out is zero and err
 * holds upstream's message.
 */
int quantity_parse(struct quantity *out, const char *s, size_t len, struct gs_error *err) GS_WUR;

/*
 * A quantity as a JSON/YAML-decoded value reaches Quantity.UnmarshalJSON:
 * a string is trimmed of ASCII white space and parsed; an integer or a real
 * is first printed as Go's encoding/json prints a number (1.5 -> "1.5",
 * 1e21 -> "1e+21", 1e3 -> "1000"); null is zero; anything else fails with
 * the regular-expression message.
 */
int quantity_from_json(struct quantity *out, const json_t *v, struct gs_error *err) GS_WUR;

void quantity_from_int64(struct quantity *out, int64_t v, enum quantity_format format);

/* -1, 0, 1 as a < b, a == b, a > b (exact; format is ignored). */
int quantity_cmp(const struct quantity *a, const struct quantity *b);
int quantity_cmp_int64(const struct quantity *a, int64_t v);
int quantity_sign(const struct quantity *q);
bool quantity_is_zero(const struct quantity *q);

/* Mathematically a whole number. */
bool quantity_is_whole(const struct quantity *q);

/*
 * The apiserver's rule for extended resources (ValidateResourceQuantityValue):
 * `MilliValue() % 1000 == 0`, failing with "must be an integer", with
 * MilliValue() exactly as upstream computes it (quantity_go_milli_value).
 * Because MilliValue rounds up, a value a hair below a whole number passes
 * ("1.9999999" -> 2000m -> accepted); because it wraps around int64, some
 * large whole numbers fail ("1Ei", "10000000000000000") and some pass
 * ("9Ei", "1e30"), exactly as upstream.
 */
bool quantity_is_k8s_integer(const struct quantity *q);

/*
 * Quantity.MilliValue() bit for bit: ScaledValue(-3) of upstream's
 * representation, with Go's int64 wrap-around where it overflows (an
 * int64Amount multiplied by 10, 100 or 1000 wraps, one scaled further
 * becomes 0; an inf.Dec keeps the low 64 bits of its big integer, as
 * big.Int.Int64() does).
 */
int64_t quantity_go_milli_value(const struct quantity *q);
/* Quantity.Value() (ScaledValue(0)) the same way. */
int64_t quantity_go_value(const struct quantity *q);

/*
 * Quantity.RoundUp(-3), which the apiserver's defaulting applies to every
 * resource list of a pod or pod template before validation
 * (SetDefaults_ResourceList): a value finer than 1m is rounded away from
 * zero to the milli ("1.0001" -> "1001m", "-1.5m" -> "-2m") and printed in
 * canonical form again; an inf.Dec is rescaled to 3 decimals, which changes
 * its MilliValue() where it wraps ("-1Ei").
 */
void quantity_round_up_milli(struct quantity *q);

/*
 * Value() / MilliValue(): ceil(q) and ceil(q * 1000), negative values
 * rounded away from zero. Return -1 (and leave *out alone) on int64
 * overflow, where upstream silently returns garbage.
 */
int quantity_value(const struct quantity *q, int64_t *out) GS_WUR;
int quantity_milli_value(const struct quantity *q, int64_t *out) GS_WUR;

/*
 * Quantity.Add: *out = a + b, exactly. The format is a's, or b's when a is
 * zero. Fails only when the sum needs more than QUANTITY_MAX_DIGITS
 * significant digits. out may alias a or b.
 */
int quantity_add(struct quantity *out, const struct quantity *a, const struct quantity *b,
		 struct gs_error *err) GS_WUR;

/*
 * Quantity.Sub: *out = a - b, exactly, as quantity_add of a and -b. The
 * format is a's, or b's when a is zero. out may alias a or b.
 */
int quantity_sub(struct quantity *out, const struct quantity *a, const struct quantity *b,
		 struct gs_error *err) GS_WUR;

/*
 * Quantity.String(): the remembered input text when there is one, else the
 * canonical form. buf needs QUANTITY_STR_MAX bytes; returns buf.
 */
const char *quantity_string(const struct quantity *q, char *buf, size_t size);
/*
 * The canonical form (CanonicalizeBytes): "0"; "1500m" for 1.5; "1536Mi"
 * for 1.5Gi; binary SI below 1024 or with a fraction shown as decimal SI.
 * Past the last suffix upstream finds none and prints none: decimal SI
 * past "E" ("1000E" and "1000000000000000000000" print "1"), binary SI
 * past "Ei" (beyond 2^70, reachable only by adding).
 */
const char *quantity_canonical(const struct quantity *q, char *buf, size_t size);

#endif
