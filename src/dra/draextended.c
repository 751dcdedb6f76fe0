#include <string.h>

#include "dra/draextended.h"
#include "base/strbuf.h"
#include "base/wrapper.h"
#include "model/kobj.h"
#include "base/banned.h"

#define IMPLICIT_PREFIX "deviceclass.resource.kubernetes.io/"

/* True when class a wins a clash over b: newer, then the lower name. */
static bool wins(const json_t *a, const json_t *b)
{
	/* RFC 3339 times of one apiserver compare as text. */
	int t = strcmp(kobj_text(a, "metadata.creationTimestamp"),
		       kobj_text(b, "metadata.creationTimestamp"));

	if (t)
		return t > 0;
	return strcmp(kobj_text(a, "metadata.name"), kobj_text(b, "metadata.name")) < 0;
}

json_t *draextended_classes(const json_t *device_classes)
{
	json_t *out = json_object(), *winner = json_object();
	const json_t *c;
	size_t i;

	json_array_foreach (device_classes, i, c) {
		const char *name = kobj_text(c, "metadata.name");
		const char *ext = kobj_text(c, "spec.extendedResourceName");
		char *implicit = gs_xasprintf(IMPLICIT_PREFIX "%s", name);
		const json_t *other;

		json_object_set_new(out, implicit, json_string(name));
		free(implicit);
		if (!*ext)
			continue;
		other = json_object_get(winner, ext);
		if (other && !wins(c, other))
			continue;
		json_object_set(winner, ext, (json_t *)c);
		json_object_set_new(out, ext, json_string(name));
	}
	json_decref(winner);
	return out;
}

json_t *draextended_claim(const char *ns, const char *pod, const json_t *requests)
{
	json_t *reqs = json_array();
	const json_t *r;
	size_t i;
	char *name = gs_xasprintf("%s-extended-resources", pod);

	json_array_foreach (requests, i, r)
		json_array_append_new(
			reqs, json_pack("{s:s,s:{s:s,s:s,s:I}}", "name", kobj_text(r, "name"),
					"exactly", "deviceClassName", kobj_text(r, "class"),
					"allocationMode", "ExactCount", "count",
					json_integer_value(json_object_get(r, "count"))));
	json_t *claim =
		json_pack("{s:s,s:s,s:{s:s,s:s},s:{s:{s:o}}}", "apiVersion", "resource.k8s.io/v1",
			  "kind", "ResourceClaim", "metadata", "namespace", *ns ? ns : "default",
			  "name", name, "spec", "devices", "requests", reqs);
	free(name);
	return claim;
}
