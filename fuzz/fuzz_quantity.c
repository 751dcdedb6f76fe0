/*
 * libFuzzer target for the quantity grammar: any input either fails with
 * one of upstream's messages or yields a value whose canonical string
 * parses back to the same value.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "model/quantity.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/*
 * Upstream's String() has no decimal suffix past E: from 10^21 on, a
 * DecimalSI quantity prints its mantissa alone ("1000E" is "1",
 * k8s.io/apimachinery pkg/api/resource CanonicalizeBytes), which does not
 * parse back to the same value; gpushare prints what upstream prints.
 */
static int past_last_decimal_suffix(const struct quantity *q)
{
	struct quantity lim, neg;
	struct gs_error err;

	if (q->format != QUANTITY_DECIMAL_SI || quantity_parse(&lim, "1e21", 4, &err) < 0 ||
	    quantity_parse(&neg, "-1e21", 5, &err) < 0)
		return 0;
	return quantity_cmp(q, &lim) >= 0 || quantity_cmp(q, &neg) <= 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct quantity q, back, sum, rounded;
	struct gs_error err;
	char buf[QUANTITY_STR_MAX], canon[QUANTITY_STR_MAX];
	int64_t v;

	if (quantity_parse(&q, (const char *)data, size, &err) < 0) {
		if (!err.msg[0])
			abort();
		return 0;
	}
	quantity_string(&q, buf, sizeof(buf));
	quantity_canonical(&q, canon, sizeof(canon));
	if (strlen(canon) <= QUANTITY_MAX_LEN && !past_last_decimal_suffix(&q)) {
		if (quantity_parse(&back, canon, strlen(canon), &err) < 0 ||
		    quantity_cmp(&back, &q) != 0)
			abort();
	}
	/* Where MilliValue() fits int64 and q is not negative, upstream's is exact. */
	if (quantity_sign(&q) >= 0 && quantity_milli_value(&q, &v) == 0 &&
	    quantity_go_milli_value(&q) != v)
		abort();
	rounded = q;
	quantity_round_up_milli(&rounded);
	if (quantity_cmp(&rounded, &q) * quantity_sign(&q) < 0)
		abort(); /* rounded away from zero */
	if (quantity_add(&sum, &q, &q, &err) == 0 && quantity_sign(&sum) != quantity_sign(&q))
		abort();
	return 0;
}
