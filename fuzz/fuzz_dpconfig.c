/*
 * libFuzzer target for device-plugin configs: the bytes as one config and,
 * when they hold a mapping, as a ConfigMap of configs. A config either
 * loads with no error at all, or fails with exactly one error marked as
 * upstream's; selection never crashes whatever the label.
 */
#include <stdint.h>
#include <stdlib.h>

#include "model/dpconfig_set.h"
#include "engine/dplint.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_one(const struct dp_diags *d, int rc)
{
	size_t upstream = 0, errors = 0;

	for (size_t i = 0; i < d->n; i++) {
		if (d->items[i].level == DP_ERROR) {
			errors++;
			upstream += d->items[i].upstream;
		}
		if (!d->items[i].msg[0])
			abort();
	}
	if (rc == 0 && errors)
		abort();
	if (rc != 0 && upstream != 1)
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const struct ydoc_pos origin = {.line = 0, .col = 0};
	struct dpconfig *c = NULL;
	struct dp_diags d;
	struct gs_error err;
	struct dplint_options o;
	struct ydoc_stream *s;
	int rc;

	dp_diags_init(&d);
	rc = dpconfig_parse_diags("f.yaml", NULL, (const char *)data, size, origin, &c, &d, &err);
	check_one(&d, rc);
	dp_diags_release(&d);
	if (c) {
		dp_diags_init(&d);
		dplint_options_init(&o);
		dplint_config(c, "f.yaml", &o, &d);
		(void)dpconfig_sharing_strategy(c);
		(void)dpconfig_replicated(c);
		if (dpconfig_validate(c, &err) < 0 && !err.msg[0])
			abort();
		dp_diags_release(&d);
		dpconfig_free(c);
	}

	if (ydoc_load_buffer("f.yaml", (const char *)data, size, origin, &ydoc_default_limits, &s,
			     &err) == 0) {
		struct dpconfig_set *set;
		if (ydoc_stream_count(s) &&
		    dpconfig_set_from_configmap(s, ydoc_stream_doc(s, 0), &set, &err) == 0) {
			static const char *const labels[] = {NULL, "default", "x"};
			struct dpconfig_choice chosen;
			for (size_t i = 0; i < dpconfig_set_count(set); i++)
				check_one(dpconfig_set_diags(set, i),
					  dpconfig_set_get(set, i, NULL) ? 0 : -1);
			for (size_t i = 0; i < 3; i++)
				if (dpconfig_set_select(set, labels[i], NULL, NULL, &chosen, &err) <
					    0 &&
				    !err.msg[0])
					abort();
			dp_diags_init(&d);
			dplint_options_init(&o);
			dplint_set(set, "f.yaml", origin, &o, &d);
			dp_diags_release(&d);
			dpconfig_set_free(set);
		}
		ydoc_stream_free(s);
	}
	return 0;
}
