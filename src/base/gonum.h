#ifndef GS_GONUM_H
#define GS_GONUM_H

#include <jansson.h>
#include <stddef.h>

/*
 * Go's text of numbers, written once: what strconv.FormatFloat and
 * encoding/json print, so that every place that must spell a number as
 * Kubernetes (or the device plugin) would reads the same digits.
 *
 * Each function writes a NUL-terminated text into buf (truncated to
 * size - 1 bytes when too small, never overflowing) and returns the length
 * of the whole text, as snprintf does. GONUM_BUFSZ holds every text of
 * fmt 'e' and 'g', and of gonum_json_*.
 */
#define GONUM_BUFSZ 32

/*
 * strconv.FormatFloat(f, fmt, -1, bits): the shortest digits that read back
 * as the same float64 (bits 64) or float32 (bits 32), in fmt 'e' ("1e+06"),
 * 'f' ("1000000") or 'g' ('e' when the decimal exponent is < -4 or >= 6,
 * else 'f'). Infinities and NaN read "+Inf", "-Inf", "NaN". With 'f' a
 * large or tiny float64 needs up to 330 bytes.
 */
size_t gonum_format_float(double f, char fmt, int bits, char *buf, size_t size);

/*
 * encoding/json's float64 encoder: shortest round-trip digits, plain
 * decimal for 1e-6 <= |f| < 1e21, else exponent form with no padding of a
 * negative exponent ("1e+21", "1e-7"); 0 and -0 read "0" and "-0".
 */
size_t gonum_json_float(double f, char *buf, size_t size);

/*
 * A JSON number as Go's encoding/json writes it (what Kubernetes types such
 * as resource.Quantity or an int field then read): integers in decimal,
 * reals as gonum_json_float, e.g. 2.0 -> "2", 1e21 -> "1e+21". Returns 0, or
 * -1 (and "" in buf) if num is no number.
 */
int gonum_json_number(const json_t *num, char *buf, size_t size);

/*
 * encoding/json's word for a value's kind in an UnmarshalTypeError
 * ("cannot unmarshal string into Go value of type int"): "object",
 * "array", "string", "number", "bool" or "null".
 */
const char *gonum_json_kind(const json_t *v);

#endif
