#include "daemon/apply.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kube/kubeclient.h"
#include "model/kobj.h"
#include "base/banned.h"

struct kind_info {
	const char *api_version;
	const char *kind;
	const char *plural;
	int namespaced;
};

static const struct kind_info kinds[] = {
	{"v1", "Namespace", "namespaces", 0},
	{"v1", "Node", "nodes", 0},
	{"v1", "ConfigMap", "configmaps", 1},
	{"v1", "Pod", "pods", 1},
	{"v1", "ResourceQuota", "resourcequotas", 1},
	{"v1", "ServiceAccount", "serviceaccounts", 1},
	{"v1", "LimitRange", "limitranges", 1},
	{"v1", "Secret", "secrets", 1},
	{"resource.k8s.io/v1", "ResourceClaim", "resourceclaims", 1},
	{"resource.k8s.io/v1", "ResourceClaimTemplate", "resourceclaimtemplates", 1},
};

const char *apply_result_name(enum apply_result r)
{
	switch (r) {
	case APPLY_CREATED:
		return "created";
	case APPLY_CONFIGURED:
		return "configured";
	case APPLY_UNCHANGED:
		return "unchanged";
	}
	return "?";
}

int apply_paths(const json_t *obj, char **collection, char **item, struct gs_error *err)
{
	const char *av = kobj_string(obj, "apiVersion");
	const char *kind = kobj_kind(obj);
	const char *name = kobj_name(obj);
	const char *ns = kobj_namespace(obj);
	const struct kind_info *k = NULL;
	char *coll;

	if (!av || !kind) {
		gs_error_set(err, "object has no apiVersion or kind");
		return -1;
	}
	for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++)
		if (!strcmp(kinds[i].kind, kind) && !strcmp(kinds[i].api_version, av))
			k = &kinds[i];
	if (!k) {
		gs_error_set(err, "%s %s is not a kind gpushare applies", av, kind);
		return -1;
	}
	if (!name || !*name) {
		gs_error_set(err, "%s has no metadata.name", kind);
		return -1;
	}
	if (k->namespaced && (!ns || !*ns))
		ns = "default";
	/* The core group lives under /api, every other group under /apis. */
	coll = k->namespaced
		       ? gs_xasprintf("/%s/%s/namespaces/%s/%s", strchr(av, '/') ? "apis" : "api",
				      av, ns, k->plural)
		       : gs_xasprintf("/%s/%s/%s", strchr(av, '/') ? "apis" : "api", av, k->plural);
	if (item)
		*item = gs_xasprintf("%s/%s", coll, name);
	if (collection)
		*collection = coll;
	else
		free(coll);
	return 0;
}

/* Merge patch bringing `have`'s map at key up to `want`'s (keys only added or changed). */
static void patch_map(json_t *patch, const char *key, const json_t *want, const json_t *have,
		      int remove_absent)
{
	json_t *delta = json_object();
	const char *k;
	json_t *v;

	json_object_foreach ((json_t *)want, k, v) {
		if (!json_equal(v, json_object_get(have, k)))
			json_object_set(delta, k, v);
	}
	if (remove_absent)
		json_object_foreach ((json_t *)have, k, v) {
			if (!json_object_get(want, k))
				json_object_set_new(delta, k, json_null());
		}
	if (json_object_size(delta))
		json_object_set_new(patch, key, delta);
	else
		json_decref(delta);
}

/* A subset check: every field obj sets in want has the same value in have. */
static int subset_equal(const json_t *want, const json_t *have)
{
	const char *k;
	json_t *v;
	size_t i;

	if (json_is_object(want)) {
		if (!json_is_object(have))
			return 0;
		json_object_foreach ((json_t *)want, k, v) {
			if (!subset_equal(v, json_object_get(have, k)))
				return 0;
		}
		return 1;
	}
	if (json_is_array(want)) {
		if (!json_is_array(have) || json_array_size(want) != json_array_size(have))
			return 0;
		json_array_foreach (want, i, v) {
			if (!subset_equal(v, json_array_get(have, i)))
				return 0;
		}
		return 1;
	}
	/* The apiserver canonicalises quantities: 1 becomes "1". */
	if (json_is_integer(want) && json_is_string(have)) {
		char buf[32];
		snprintf(buf, sizeof(buf), "%lld", (long long)json_integer_value(want));
		return !strcmp(buf, json_string_value(have));
	}
	return json_equal(want, have);
}

static int pod_compatible(const json_t *want, const json_t *have, struct gs_error *err)
{
	const json_t *ws = json_object_get(want, "spec"), *hs = json_object_get(have, "spec");
	const char *fields[] = {"nodeSelector", "nodeName", "containers", "initContainers"};

	for (size_t i = 0; i < sizeof(fields) / sizeof(fields[0]); i++) {
		const json_t *w = json_object_get(ws, fields[i]);
		if (w && !subset_equal(w, json_object_get(hs, fields[i]))) {
			gs_error_set(
				err,
				"pod %s/%s exists with a different spec.%s; a pod's spec cannot "
				"change: delete it first",
				kobj_namespace(have), kobj_name(have), fields[i]);
			return -1;
		}
	}
	return 0;
}

int apply_object(struct kube_client *c, const json_t *obj, enum apply_result *result, json_t **out,
		 struct gs_error *err)
{
	char *coll = NULL, *item = NULL;
	json_t *have = NULL, *patch = NULL, *meta_patch;
	const char *kind = kobj_kind(obj);
	int rc = -1;

	if (apply_paths(obj, &coll, &item, err) < 0)
		return -1;
	if (kube_get(c, item, &have, err) < 0) {
		if (kube_last_status(c)->code != 404)
			goto out;
		/* Node status set at create is kept (there is no kubelet to own it). */
		if (kube_create(c, coll, obj, out, err) < 0)
			goto out;
		*result = APPLY_CREATED;
		rc = 0;
		goto out;
	}

	if (!strcmp(kind, "Pod") && pod_compatible(obj, have, err) < 0)
		goto out;

	patch = json_object();
	meta_patch = json_object();
	patch_map(meta_patch, "labels", kobj_get(obj, "metadata.labels"),
		  kobj_get(have, "metadata.labels"), 0);
	patch_map(meta_patch, "annotations", kobj_get(obj, "metadata.annotations"),
		  kobj_get(have, "metadata.annotations"), 0);
	if (json_object_size(meta_patch))
		json_object_set_new(patch, "metadata", meta_patch);
	else
		json_decref(meta_patch);
	if (!strcmp(kind, "ConfigMap"))
		patch_map(patch, "data", json_object_get(obj, "data"),
			  json_object_get(have, "data"), 1);
	else if (strcmp(kind, "Pod") && strcmp(kind, "Node") && json_object_get(obj, "spec") &&
		 !subset_equal(json_object_get(obj, "spec"), json_object_get(have, "spec")))
		json_object_set(patch, "spec", json_object_get(obj, "spec"));

	if (!json_object_size(patch)) {
		*result = APPLY_UNCHANGED;
		if (out) {
			*out = have;
			have = NULL;
		}
		rc = 0;
		goto out;
	}
	if (kube_patch(c, item, KUBE_PATCH_MERGE, patch, out, err) < 0)
		goto out;
	*result = APPLY_CONFIGURED;
	rc = 0;
out:
	json_decref(have);
	json_decref(patch);
	free(coll);
	free(item);
	return rc;
}
