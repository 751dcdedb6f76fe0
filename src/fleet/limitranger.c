/*
 * LimitRanger, the apiserver's admission plugin, on a pod being created
 * (k8s.io/kubernetes v1.34 plugin/pkg/admission/limitranger/admission.go:
 * PodMutateLimitFunc, defaultContainerResourceRequirements,
 * mergeContainerResources), after the defaulting the apiserver gives a v1
 * Pod and a LimitRange item (pkg/apis/core/v1/defaults.go: SetDefaults_Pod,
 * SetDefaults_LimitRangeItem).
 */
#include "fleet/workloads.h"

#include <string.h>

#include "model/kobj.h"
#include "base/banned.h"

/* SetDefaults_Pod: a limit without a request gives the request, per container. */
static bool requests_from_limits(json_t *c)
{
	json_t *res = json_object_get(c, "resources"), *req;
	const char *k;
	json_t *v;
	bool changed = false;

	if (!json_object_size(json_object_get(res, "limits")))
		return false;
	req = json_object_get(res, "requests");
	if (!json_is_object(req)) {
		req = json_object();
		json_object_set_new(res, "requests", req);
	}
	json_object_foreach (json_object_get(res, "limits"), k, v) {
		if (json_object_get(req, k))
			continue;
		json_object_set(req, k, v);
		changed = true;
	}
	return changed;
}

/*
 * defaultContainerResourceRequirements of one LimitRange, each Container
 * item defaulted first as SetDefaults_LimitRangeItem does: max gives a
 * missing default, default and then min a missing defaultRequest. A later
 * item's value for a key replaces an earlier one's, as the Go map does.
 */
static void container_defaults(const json_t *lr, json_t *limits, json_t *requests)
{
	const json_t *item;
	size_t i;

	json_array_foreach (kobj_get(lr, "spec.limits"), i, item) {
		json_t *dflt = json_object(), *dreq = json_object();
		const char *k;
		json_t *v;
		if (strcmp(kobj_text(item, "type"), "Container")) {
			json_decref(dflt);
			json_decref(dreq);
			continue;
		}
		json_object_update(dflt, json_object_get(item, "default"));
		json_object_update(dreq, json_object_get(item, "defaultRequest"));
		json_object_update_missing(dflt, json_object_get(item, "max"));
		json_object_update_missing(dreq, dflt);
		json_object_update_missing(dreq, json_object_get(item, "min"));
		json_object_foreach (dflt, k, v)
			json_object_set(limits, k, v);
		json_object_foreach (dreq, k, v)
			json_object_set(requests, k, v);
		json_decref(dflt);
		json_decref(dreq);
	}
}

/* mergeContainerResources: each default the container lacks. */
static bool merge(json_t *c, const json_t *limits, const json_t *requests)
{
	const char *names[] = {"limits", "requests"};
	const json_t *from[] = {limits, requests};
	json_t *res = json_object_get(c, "resources");
	bool changed = false;

	if (!json_is_object(res)) {
		res = json_object();
		json_object_set_new(c, "resources", res);
	}
	for (size_t i = 0; i < 2; i++) {
		json_t *have = json_object_get(res, names[i]);
		const char *k;
		json_t *v;
		if (!json_object_size(from[i]))
			continue;
		if (!json_is_object(have)) {
			have = json_object();
			json_object_set_new(res, names[i], have);
		}
		json_object_foreach ((json_t *)from[i], k, v) {
			if (json_object_get(have, k))
				continue;
			json_object_set(have, k, v);
			changed = true;
		}
	}
	return changed;
}

bool fleet_limitranges_apply(const struct fleet *f, json_t *pod)
{
	const char *lists[] = {"containers", "initContainers"};
	json_t *spec = json_object_get(pod, "spec"), *c;
	const json_t *lr;
	size_t i, k;
	bool changed = false, any = false;

	json_array_foreach (f->limitranges, i, lr)
		if (!strcmp(fleet_namespace_of(lr), fleet_namespace_of(pod)))
			any = true;
	if (!any || !json_is_object(spec))
		return false;
	for (size_t l = 0; l < 2; l++)
		json_array_foreach (json_object_get(spec, lists[l]), k, c)
			if (json_is_object(c) && requests_from_limits(c))
				changed = true;
	/* Each LimitRange in turn: a key the first one set is not the second's to set. */
	json_array_foreach (f->limitranges, i, lr) {
		json_t *limits, *requests;
		if (strcmp(fleet_namespace_of(lr), fleet_namespace_of(pod)))
			continue;
		limits = json_object();
		requests = json_object();
		container_defaults(lr, limits, requests);
		for (size_t l = 0; l < 2; l++)
			json_array_foreach (json_object_get(spec, lists[l]), k, c)
				if (json_is_object(c) && merge(c, limits, requests))
					changed = true;
		json_decref(limits);
		json_decref(requests);
	}
	return changed;
}
