/*
 * libFuzzer target for the catalog table grammar (data/gpus.tab): any input
 * either fails with file:line:col and a message, or parses into a catalog
 * whose lookups and layouts work on every model.
 */
#include <stdint.h>
#include <stdlib.h>

#include "model/catalog.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct catalog *cat;
	struct gs_error err;

	if (catalog_parse("fuzz.tab", (const char *)data, size, &cat, &err)) {
		if (!err.msg[0] || err.line < 1)
			abort();
		return 0;
	}
	for (size_t i = 0; i < catalog_gpu_count(cat); i++) {
		const struct catalog_gpu *g = catalog_gpu_at(cat, i);
		struct catalog_gpu_mig m;
		if (catalog_find_gpu(cat, g->name) == NULL)
			abort();
		(void)catalog_layout_apply(cat, "all-balanced", g, &m, &err);
		(void)catalog_layout_apply(cat, "all-1g.10gb", g, &m, &err);
		for (size_t l = 0; l < catalog_layout_count(cat); l++)
			(void)catalog_layout_apply(cat, catalog_layout_at(cat, l)->name, g, &m,
						   &err);
	}
	if (catalog_layout_count(cat) && !catalog_release(cat))
		abort(); /* a layout row needs the release record before it */
	catalog_free(cat);
	return 0;
}
