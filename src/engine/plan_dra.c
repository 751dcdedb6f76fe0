#include "engine/plan_dra.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "engine/explain.h"
#include "model/kobj.h"
#include "base/strbuf.h"
#include "base/wrapper.h"
#include "base/banned.h"

/*
 * Read from k8s.io/kubernetes pkg/scheduler/framework/plugins/
 * dynamicresources/dynamicresources.go (foreachPodResourceClaim, PreFilter,
 * validateDeviceClass, Filter, PostFilter, Reserve), k8s.io/dynamic-resource-
 * allocation resourceclaim/resourceclaim.go (Name: "ResourceClaim not created
 * yet"; CanBeReserved: ResourceClaimReservedForMaxSize 256),
 * pkg/scheduler/util/assumecache/assume_cache.go (NotFoundError: could not
 * find %v %q, the scheduler's claim cache described as "ResourceClaim") and
 * pkg/controller/resourceclaim/controller.go (handleClaim: the claim's
 * generateName <pod>-<claim>-, its pod-claim-name annotation, "resource claim
 * template %q: %v").
 */

#define RESERVED_FOR_MAX 256
#define POD_CLAIM_NAME "resource.kubernetes.io/pod-claim-name"

struct plan_dra {
	json_t *claims;	   /* "ns/name" -> ResourceClaim, as allocated and reserved so far */
	json_t *templates; /* "ns/name" -> ResourceClaimTemplate */
	json_t *classes;   /* DeviceClass name -> true */
};

static const char *ns_of(const json_t *obj)
{
	const char *ns = kobj_text(obj, "metadata.namespace");
	return *ns ? ns : "default";
}

static char *key_of(const json_t *obj)
{
	return gs_xasprintf("%s/%s", ns_of(obj), kobj_text(obj, "metadata.name"));
}

static json_t *index_of(const json_t *objs)
{
	json_t *idx = json_object();
	const json_t *o;
	size_t i;

	json_array_foreach (objs, i, o) {
		char *key = key_of(o);
		if (!json_object_get(idx, key)) /* the first of a name, as a lister keeps one */
			json_object_set(idx, key, (json_t *)o);
		free(key);
	}
	return idx;
}

struct plan_dra *plan_dra_new(const json_t *claims, const json_t *templates, const json_t *classes)
{
	struct plan_dra *d = gs_xcalloc(1, sizeof(*d));
	const json_t *c;
	size_t i;

	d->claims = index_of(claims);
	d->templates = index_of(templates);
	d->classes = json_object();
	json_array_foreach (classes, i, c)
		json_object_set_new(d->classes, kobj_text(c, "metadata.name"), json_true());
	return d;
}

void plan_dra_free(struct plan_dra *d)
{
	if (!d)
		return;
	json_decref(d->claims);
	json_decref(d->templates);
	json_decref(d->classes);
	free(d);
}

void plan_dra_pod_release(struct plan_dra_pod *pp)
{
	for (size_t i = 0; i < pp->n; i++) {
		free(pp->names[i]);
		json_decref(pp->claims[i]);
		free(pp->not_judged[i]);
	}
	free(pp->names);
	free(pp->claims);
	free(pp->tmpl);
	free(pp->not_judged);
	free(pp->unavail);
	free(pp->message);
	free(pp->hint);
	memset(pp, 0, sizeof(*pp));
}

/* Five characters of the apiserver's generateName alphabet, stable for one key. */
static void name_suffix(const char *key, char out[6])
{
	static const char alphabet[] = "bcdfghjklmnpqrstvwxz2456789";
	uint64_t h = 0xcbf29ce484222325ULL;

	for (const char *p = key; *p; p++) {
		h ^= (unsigned char)*p;
		h *= 0x100000001b3ULL;
	}
	for (int i = 0; i < 5; i++) {
		out[i] = alphabet[h % (sizeof(alphabet) - 1)];
		h /= sizeof(alphabet) - 1;
	}
	out[5] = '\0';
}

/*
 * The claim the resourceclaim controller creates for the pod from a
 * template: in the pod's namespace, generateName <pod>-<claim>- (plan
 * draws the suffix from the names, the apiserver at random), owned by the
 * pod, the template's labels and annotations and spec. A new object.
 */
static json_t *from_template(const json_t *pod, const char *claim_name, const json_t *tmpl)
{
	const char *ns = ns_of(pod), *pod_name = kobj_text(pod, "metadata.name");
	char *key = gs_xasprintf("%s/%s/%s", ns, pod_name, claim_name), suffix[6];
	json_t *annotations = json_deep_copy(kobj_map(tmpl, "spec.metadata.annotations"));
	json_t *spec = json_deep_copy(kobj_get(tmpl, "spec.spec"));

	name_suffix(key, suffix);
	free(key);
	if (!annotations)
		annotations = json_object();
	json_object_set_new(annotations, POD_CLAIM_NAME, json_string(claim_name));
	char *name = gs_xasprintf("%s-%s-%s", pod_name, claim_name, suffix);
	json_t *meta =
		json_pack("{s:s,s:s,s:o,s:[{s:s,s:s,s:s,s:b,s:b}]}", "namespace", ns, "name", name,
			  "annotations", annotations, "ownerReferences", "apiVersion", "v1", "kind",
			  "Pod", "name", pod_name, "controller", 1, "blockOwnerDeletion", 1);
	const json_t *labels = kobj_map(tmpl, "spec.metadata.labels");
	if (labels)
		json_object_set_new(meta, "labels", json_deep_copy(labels));
	free(name);
	return json_pack("{s:s,s:s,s:o,s:o}", "apiVersion", "resource.k8s.io/v1", "kind",
			 "ResourceClaim", "metadata", meta, "spec", spec ? spec : json_object());
}

/* resourceclaim.IsReservedForPod: by uid when both have one, else by name. */
static bool reserved_for(const json_t *claim, const json_t *pod)
{
	const char *uid = kobj_text(pod, "metadata.uid"), *name = kobj_text(pod, "metadata.name");
	const json_t *r;
	size_t i;

	json_array_foreach (kobj_get(claim, "status.reservedFor"), i, r) {
		if (strcmp(kobj_text(r, "resource"), "pods"))
			continue;
		if (*uid && *kobj_text(r, "uid") ? !strcmp(uid, kobj_text(r, "uid"))
						 : !strcmp(name, kobj_text(r, "name")))
			return true;
	}
	return false;
}

static void reject(struct plan_dra_pod *out, enum plan_dra_reject how, char *message)
{
	if (out->reject)
		return free(message);
	out->reject = how;
	out->message = message;
}

/* validateDeviceClass: the class must exist. */
static void check_class(const struct plan_dra *d, const char *cls, const char *request,
			struct plan_dra_pod *out)
{
	if (!json_object_get(d->classes, cls))
		reject(out, PLAN_DRA_PREFILTER,
		       gs_xasprintf("request %s: device class %s does not exist", request, cls));
}

/* PreFilter's checks of one claim (after PreEnqueue found them all). */
static void prefilter_claim(const struct plan_dra *d, const json_t *pod, const json_t *claim,
			    struct plan_dra_pod *out)
{
	const json_t *r;
	size_t i;

	if (kobj_map(claim, "status.allocation")) {
		if (json_array_size(kobj_get(claim, "status.reservedFor")) >= RESERVED_FOR_MAX &&
		    !reserved_for(claim, pod))
			reject(out, PLAN_DRA_PREFILTER, gs_xstrdup("resourceclaim in use"));
		return;
	}
	json_array_foreach (kobj_get(claim, "spec.devices.requests"), i, r) {
		const char *request = kobj_text(r, "name");
		const json_t *ex = json_object_get(r, "exactly"), *sub;
		const json_t *first = json_object_get(r, "firstAvailable");
		size_t j;
		if (ex) {
			check_class(d, kobj_text(ex, "deviceClassName"), request, out);
		} else if (json_array_size(first)) {
			json_array_foreach (first, j, sub) {
				char *q = gs_xasprintf("%s/%s", request, kobj_text(sub, "name"));
				check_class(d, kobj_text(sub, "deviceClassName"), q, out);
				free(q);
			}
		} else {
			char *key = key_of(claim);
			reject(out, PLAN_DRA_PREFILTER,
			       gs_xasprintf("resource claim %s, request %s: unknown request type",
					    key, request));
			free(key);
		}
	}
}

void plan_dra_prefilter(struct plan_dra *d, const json_t *pod, struct plan_dra_pod *out)
{
	const json_t *rcs = kobj_get(pod, "spec.resourceClaims"), *rc;
	const char *ns = ns_of(pod), *pod_name = kobj_text(pod, "metadata.name");
	size_t i, n = json_array_size(rcs);

	memset(out, 0, sizeof(*out));
	out->names = gs_xcalloc(n + 1, sizeof(*out->names));
	out->claims = gs_xcalloc(n + 1, sizeof(*out->claims));
	out->tmpl = gs_xcalloc(n + 1, sizeof(*out->tmpl));
	out->not_judged = gs_xcalloc(n + 1, sizeof(*out->not_judged));
	out->unavail = gs_xcalloc(n + 1, sizeof(*out->unavail));
	/* PreEnqueue (foreachPodResourceClaim): every claim exists. */
	json_array_foreach (rcs, i, rc) {
		const char *name = kobj_text(rc, "name");
		const char *cname = kobj_string(rc, "resourceClaimName");
		const char *tname = kobj_string(rc, "resourceClaimTemplateName");
		json_t *claim = NULL;
		if (cname) {
			char *key = gs_xasprintf("%s/%s", ns, cname);
			claim = json_incref(json_object_get(d->claims, key));
			if (!claim)
				reject(out, PLAN_DRA_PREENQUEUE,
				       gs_xasprintf("could not find ResourceClaim \"%s\"", key));
			free(key);
		} else if (tname) {
			char *key = gs_xasprintf("%s/%s", ns, tname);
			const json_t *tmpl = json_object_get(d->templates, key);
			free(key);
			if (tmpl) {
				claim = from_template(pod, name, tmpl);
			} else if (!out->reject) {
				reject(out, PLAN_DRA_PREENQUEUE,
				       gs_xasprintf("pod \"%s/%s\": ResourceClaim not created yet",
						    ns, pod_name));
				out->hint = gs_xasprintf(
					"the resourceclaim controller: resource claim template "
					"\"%s\": resourceclaimtemplate.resource.k8s.io \"%s\" not "
					"found",
					tname, tname);
			}
		} else {
			reject(out, PLAN_DRA_PREENQUEUE,
			       gs_xasprintf("pod \"%s/%s\", spec.resourceClaim \"%s\": none of the "
					    "supported fields are set",
					    ns, pod_name, name));
		}
		if (!claim)
			continue;
		if (kobj_string(claim, "metadata.deletionTimestamp"))
			reject(out, PLAN_DRA_PREENQUEUE,
			       gs_xasprintf("resourceclaim \"%s\" is being deleted",
					    kobj_text(claim, "metadata.name")));
		out->names[out->n] = gs_xstrdup(name);
		out->claims[out->n] = claim;
		out->tmpl[out->n] = tname && !cname ? tname : NULL;
		out->n++;
	}
	if (out->reject)
		return;
	for (i = 0; i < out->n; i++) {
		prefilter_claim(d, pod, out->claims[i], out);
		if (!kobj_map(out->claims[i], "status.allocation"))
			draalloc_claim_judged(out->claims[i], &out->not_judged[i]);
	}
}

/* nodeaffinity.NodeSelector.Match: some term selects the node. */
static bool selects(const json_t *selector, const json_t *node)
{
	const json_t *t;
	size_t i;

	json_array_foreach (json_object_get(selector, "nodeSelectorTerms"), i, t) {
		char *why = explain_term_mismatch(t, node);
		free(why);
		if (!why)
			return true;
	}
	return false;
}

enum plan_dra_filter plan_dra_filter(struct draalloc *a, struct plan_dra_pod *pp,
				     const json_t *node, const json_t *extra, bool commit,
				     json_t **allocs)
{
	const json_t **list = gs_xcalloc(pp->n + 2, sizeof(*list));
	size_t k = 0;
	bool unavailable = false, ok = true;

	if (allocs)
		*allocs = NULL;
	for (size_t i = 0; i < pp->n; i++) {
		const json_t *alloc = kobj_map(pp->claims[i], "status.allocation");
		const json_t *sel = json_object_get(alloc, "nodeSelector");
		if (alloc && sel && !selects(sel, node)) {
			unavailable = true;
			pp->unavail[i] = true;
		} else if (!alloc && !pp->not_judged[i]) {
			list[k++] = pp->claims[i];
		}
	}
	if (extra)
		list[k++] = extra;
	if (k) {
		struct draalloc_result res;
		struct gs_error err;
		ok = a &&
		     draalloc_claims_on(a, list, k, kobj_text(node, "metadata.name"), commit, &res,
					&err) == 0 &&
		     res.outcome == DRAALLOC_ALLOCATED;
		if (a) {
			if (ok && commit && allocs)
				*allocs = json_incref(res.allocation);
			draalloc_result_release(&res);
		}
	}
	free(list);
	if (!ok)
		return PLAN_DRA_CANNOT_ALLOCATE;
	if (unavailable) {
		pp->unavailable = true;
		return PLAN_DRA_UNAVAILABLE;
	}
	return PLAN_DRA_FITS;
}

/* One claim as plan prints it; `how`: new, before, no, notJudged. */
static json_t *claim_json(const struct plan_dra_pod *pp, size_t i, const char *how)
{
	char *key = key_of(pp->claims[i]);
	json_t *j = json_pack("{s:s,s:s}", "name", pp->names[i], "resourceClaim", key);
	const json_t *results = kobj_get(pp->claims[i], "status.allocation.devices.results");

	free(key);
	if (pp->tmpl[i])
		json_object_set_new(j, "template", json_string(pp->tmpl[i]));
	json_object_set_new(j, "allocated", json_string(how));
	if (pp->not_judged[i])
		json_object_set_new(j, "why", json_string(pp->not_judged[i]));
	json_object_set_new(j, "devices", results ? json_deep_copy(results) : json_array());
	return j;
}

json_t *plan_dra_reserve(struct plan_dra *d, struct plan_dra_pod *pp, const json_t *pod,
			 const json_t *allocs)
{
	json_t *out = json_array();
	size_t k = 0;

	for (size_t i = 0; i < pp->n; i++) {
		bool had = kobj_map(pp->claims[i], "status.allocation") != NULL;
		json_t *claim = json_deep_copy(pp->claims[i]), *status;
		const char *how = had ? "before" : pp->not_judged[i] ? "notJudged" : "new";

		status = json_object_get(claim, "status");
		if (!json_is_object(status)) {
			status = json_object();
			json_object_set_new(claim, "status", status);
		}
		if (!had && !pp->not_judged[i])
			json_object_set(status, "allocation", json_array_get(allocs, k++));
		if (!reserved_for(claim, pod)) {
			json_t *rf = json_object_get(status, "reservedFor");
			if (!json_is_array(rf)) {
				rf = json_array();
				json_object_set_new(status, "reservedFor", rf);
			}
			json_t *ref = json_pack("{s:s,s:s}", "resource", "pods", "name",
						kobj_text(pod, "metadata.name"));
			if (*kobj_text(pod, "metadata.uid"))
				json_object_set_new(ref, "uid",
						    json_string(kobj_text(pod, "metadata.uid")));
			json_array_append_new(rf, ref);
		}
		if (!pp->tmpl[i]) {
			/* A claim by name: the pods after see it allocated and reserved. */
			char *key = key_of(claim);
			json_object_set(d->claims, key, claim);
			free(key);
		}
		json_decref(pp->claims[i]);
		pp->claims[i] = claim;
		json_array_append_new(out, claim_json(pp, i, how));
	}
	return out;
}

json_t *plan_dra_unbound_json(const struct plan_dra_pod *pp)
{
	json_t *out = json_array();

	for (size_t i = 0; i < pp->n; i++)
		json_array_append_new(out, claim_json(pp, i,
						      kobj_map(pp->claims[i], "status.allocation")
							      ? "before"
						      : pp->not_judged[i] ? "notJudged"
									  : "no"));
	return out;
}

bool plan_dra_deallocates(const struct plan_dra_pod *pp, const json_t *pod)
{
	for (size_t i = 0; i < pp->n; i++) {
		size_t n_rf = json_array_size(kobj_get(pp->claims[i], "status.reservedFor"));
		if (pp->unavail[i] &&
		    (n_rf == 0 || (n_rf == 1 && reserved_for(pp->claims[i], pod))))
			return true;
	}
	return false;
}

static void add_line(char ***lines, size_t *n, char *line)
{
	*lines = gs_xrealloc(*lines, (*n + 1) * sizeof(**lines));
	(*lines)[(*n)++] = line;
}

void plan_dra_why(struct draalloc *a, const struct plan_dra_pod *pp, size_t max, char ***lines,
		  size_t *n_lines)
{
	const json_t **list = gs_xcalloc(pp->n + 1, sizeof(*list));
	struct draalloc_result res;
	struct gs_error err;
	size_t k = 0, shown = 0, more = 0;

	for (size_t i = 0; i < pp->n; i++)
		if (!kobj_map(pp->claims[i], "status.allocation") && !pp->not_judged[i])
			list[k++] = pp->claims[i];
	if (k && a && draalloc_claims_on(a, list, k, NULL, false, &res, &err) == 0) {
		const char *p = res.outcome == DRAALLOC_UNSCHEDULABLE ? res.why : NULL;
		char *request = NULL;
		/* "0/N ... claims.\nrequest R (...)\n  node dev: why\n..." */
		while (p && (p = strchr(p, '\n'))) {
			const char *line = ++p, *end = strchr(line, '\n');
			size_t len = end ? (size_t)(end - line) : strlen(line);
			if (!strncmp(line, "request ", 8)) {
				free(request);
				request = gs_xstrndup(line, len);
			} else if (shown < max) {
				add_line(lines, n_lines,
					 gs_xasprintf("%s: %.*s", request ? request : "",
						      (int)(len > 2 ? len - 2 : 0), line + 2));
				shown++;
			} else {
				more++;
			}
		}
		free(request);
		if (more)
			add_line(lines, n_lines, gs_xasprintf("... and %zu more", more));
		draalloc_result_release(&res);
	}
	free(list);
}
