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

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct quantity q, back, sum;
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
	if (strlen(canon) <= QUANTITY_MAX_LEN) {
		if (quantity_parse(&back, canon, strlen(canon), &err) < 0 ||
		    quantity_cmp(&back, &q) != 0)
			abort();
	}
	if (quantity_milli_value(&q, &v) == 0 && quantity_is_k8s_integer(&q) != (v % 1000 == 0))
		abort();
	if (quantity_is_whole(&q) && !quantity_is_k8s_integer(&q))
		abort();
	if (quantity_add(&sum, &q, &q, &err) == 0 && quantity_sign(&sum) != quantity_sign(&q))
		abort();
	return 0;
}
