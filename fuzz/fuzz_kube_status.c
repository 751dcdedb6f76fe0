/*
 * libFuzzer target for reading an apiserver error body: any bytes, with any
 * HTTP status, yield a Status whose reason and message are strings, whose
 * code is the HTTP status, and whose message is the body's Status.message
 * whenever the body is a JSON Status with a non-empty message.
 */
#include <jansson.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "kube/kubeclient.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const int codes[] = {400, 401, 403, 404, 409, 410, 422, 429, 500, 503, 504, 418};
	struct kube_status st;
	int code = codes[size % (sizeof(codes) / sizeof(codes[0]))];
	json_t *root;
	const char *kind, *msg;

	kube_status_from_response(&st, code, size & 1 ? "POST" : "GET", (const char *)data, size);
	if (!st.reason || !st.message || st.code != code || st.retry_after_s < 0)
		abort();
	root = json_loadb((const char *)data, size, 0, NULL);
	kind = json_string_value(json_object_get(root, "kind"));
	msg = json_string_value(json_object_get(root, "message"));
	if (kind && !strcmp(kind, "Status") && msg && msg[0] &&
	    strlen(msg) == json_string_length(json_object_get(root, "message")) &&
	    strcmp(st.message, msg) != 0)
		abort();
	json_decref(root);
	kube_status_release(&st);
	return 0;
}
