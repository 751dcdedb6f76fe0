/*
 * libFuzzer target for a Node as gpushare reads it: any JSON document either
 * fails as bad input with a message, or yields an advertisement; a refused
 * node yields no patch, any other (a failing plugin or mig-manager included)
 * a patch object.
 */
#include <stdint.h>
#include <stdlib.h>

#include "engine/advertise.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const struct catalog *cat;
	struct nodehw *hw;
	struct advertisement *adv;
	struct gs_warnings w;
	struct gs_error err;
	json_t *node, *patch;

	node = json_loadb((const char *)data, size, 0, NULL);
	if (!node)
		return 0;
	if (catalog_builtin(&cat, &err))
		abort();
	gs_warnings_init(&w);
	if (nodehw_from_node(cat, node, NULL, &hw, &w, &err)) {
		if (!err.msg[0])
			abort();
	} else {
		if (advertise_compute(cat, hw, NULL, "", &adv, &err))
			abort();
		if (!adv->failure != (adv->outcome == ADVERTISE_OK))
			abort();
		if (advertise_patch(adv, node, &patch, &w, &err) == 0) {
			if (adv->outcome == ADVERTISE_REFUSED || !json_is_object(patch))
				abort();
			json_decref(patch);
		} else if (adv->outcome != ADVERTISE_REFUSED) {
			abort();
		}
		advertisement_free(adv);
		nodehw_free(hw);
	}
	gs_warnings_release(&w);
	json_decref(node);
	return 0;
}
