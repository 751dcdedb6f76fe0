/*
 * libFuzzer target for the webhook's decision: any bytes as an
 * AdmissionReview body, judged against the lab's fleet recorded from the e2e
 * apiserver (tests/unit/data/explain). Either an error, or an answer that
 * echoes the request's uid, says allowed true or false, and carries a
 * non-empty status.message exactly when it refuses.
 */
#include <jansson.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "model/kobj.h"
#include "engine/webhook.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static struct webhook_fleet fleet;

static void load_fleet(void)
{
	static json_t *nodes;
	static struct dpconfig_set *set;
	struct gs_error err;
	json_t *cm;

	if (nodes)
		return;
	nodes = json_load_file("tests/unit/data/explain/nodes.json", 0, NULL);
	cm = json_load_file("tests/unit/data/explain/configmap.json", 0, NULL);
	if (!nodes || !cm || dpconfig_set_from_configmap(NULL, cm, &set, &err) < 0 ||
	    catalog_builtin(&fleet.cat, &err) < 0)
		abort(); /* run from the repository root */
	json_decref(cm);
	fleet.nodes = nodes;
	fleet.configs = set;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct webhook_verdict v;
	struct gs_error err;
	json_t *out = NULL, *in;

	load_fleet();
	if (webhook_review(&fleet, (const char *)data, size, &out, &v, &err) < 0) {
		if (out || !err.msg[0])
			abort();
		return 0;
	}
	in = json_loadb((const char *)data, size, 0, NULL);
	const json_t *resp = json_object_get(out, "response");
	const json_t *allowed = json_object_get(resp, "allowed");
	if (!in || !json_is_boolean(allowed) ||
	    strcmp(kobj_text(resp, "uid"), kobj_text(in, "request.uid")) ||
	    json_is_true(allowed) != v.allowed ||
	    (!v.allowed && !*kobj_text(resp, "status.message")) ||
	    (v.allowed && json_object_get(resp, "status")))
		abort();
	json_decref(in);
	json_decref(out);
	webhook_verdict_release(&v);
	return 0;
}
