#include "daemon/draadmit.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "dra/draslice.h"
#include "model/kobj.h"
#include "kube/kubeclient.h"
#include "base/banned.h"

void draadmit_init(struct draadmit *d, struct kube_client *c)
{
	memset(d, 0, sizeof(*d));
	d->c = c;
	draprepare_gates_default(&d->cluster);
}

void draadmit_release(struct draadmit *d)
{
	for (size_t i = 0; i < d->n_prepared; i++)
		free(d->prepared[i]);
	free(d->prepared);
	d->prepared = NULL;
	d->n_prepared = 0;
}

static bool was_prepared(const struct draadmit *d, const char *uid)
{
	for (size_t i = 0; i < d->n_prepared; i++)
		if (!strcmp(d->prepared[i], uid))
			return true;
	return false;
}

/* A list's items carry no kind or apiVersion: give them theirs. */
static void kinds(json_t *list, const char *kind)
{
	size_t i;
	json_t *o;

	json_array_foreach (json_object_get(list, "items"), i, o) {
		json_object_set_new(o, "kind", json_string(kind));
		json_object_set_new(o, "apiVersion", json_string("resource.k8s.io/v1"));
	}
}

/* The UID of each claim the pod names (resolved as the kubelet does); NULL where not yet made. */
static const char *claim_uid(const json_t *pod, const json_t *entry, const json_t *claims)
{
	const char *name = kobj_string(entry, "resourceClaimName");
	const json_t *st, *c;
	size_t i;

	if (!name) {
		json_array_foreach ((json_t *)kobj_get(pod, "status.resourceClaimStatuses"), i,
				    st) {
			if (!strcmp(kobj_text(st, "name"), kobj_text(entry, "name")))
				name = kobj_string(st, "resourceClaimName");
		}
	}
	json_array_foreach ((json_t *)json_object_get(claims, "items"), i, c) {
		if (name && !strcmp(kobj_text(c, "metadata.name"), name))
			return kobj_string(c, "metadata.uid");
	}
	return NULL;
}

static int pass_on(struct draadmit *d, const struct controller_admission *in,
		   struct controller_verdict *out, struct gs_error *err)
{
	if (d->next)
		return d->next(d->next_arg, in, out, err);
	out->admit = true;
	return 0;
}

/* The kubelet's conditions carry the time they changed. */
static void stamp(json_t *status)
{
	char ts[32];
	time_t now = time(NULL);
	struct tm tm;
	size_t i;
	json_t *c;

	gmtime_r(&now, &tm);
	strftime(ts, sizeof(ts), "%Y-%m-%dT%H:%M:%SZ", &tm);
	json_array_foreach (json_object_get(status, "conditions"), i, c)
		json_object_set_new(c, "lastTransitionTime", json_string(ts));
}

int draadmit_decide(void *arg, const struct controller_admission *in,
		    struct controller_verdict *out, struct gs_error *err)
{
	struct draadmit *d = arg;
	const json_t *entries = kobj_get(in->pod, "spec.resourceClaims"), *e;
	const char *ns = kobj_namespace(in->pod), *node = kobj_name(in->node);
	struct kube_list_opts lo = {.label_selector = NULL, .field_selector = NULL};
	struct draprepare_gates gates;
	struct draprepare_result res;
	json_t *claims = NULL, *slices = NULL, *pod = NULL;
	char *path = NULL, *field = NULL;
	bool all = true;
	size_t i;
	int rc = -1;

	if (!draslice_node_wants_dra(in->node) || !json_array_size(entries))
		return pass_on(d, in, out, err);
	draprepare_result_init(&res);
	path = gs_xasprintf("/apis/resource.k8s.io/v1/namespaces/%s/resourceclaims", ns ? ns : "");
	field = gs_xasprintf("spec.nodeName=%s", node ? node : "");
	lo.field_selector = field;
	if (kube_list(d->c, path, NULL, &claims, err) < 0 ||
	    kube_list(d->c, "/apis/resource.k8s.io/v1/resourceslices", &lo, &slices, err) < 0)
		goto out;
	kinds(claims, "ResourceClaim");
	kinds(slices, "ResourceSlice");
	/* Once per claim: a claim prepared before is answered at once (the driver's checkpoint). */
	json_array_foreach ((json_t *)entries, i, e) {
		const char *uid = claim_uid(in->pod, e, claims);
		if (!uid || !was_prepared(d, uid))
			all = false;
	}
	if (all) {
		rc = pass_on(d, in, out, err);
		goto out;
	}
	/* The controller's reduced pod carries no kind. */
	pod = json_deep_copy(in->pod);
	json_object_set_new(pod, "kind", json_string("Pod"));
	json_object_set_new(pod, "apiVersion", json_string("v1"));
	if (draprepare_gates_for_node(in->node, &d->cluster, &gates, err) < 0 ||
	    draprepare_pod(pod, json_object_get(claims, "items"), json_object_get(slices, "items"),
			   &gates, NULL, 0, &res, err) < 0)
		goto out;
	if (res.outcome == DRAPREPARE_OK) {
		json_array_foreach ((json_t *)entries, i, e) {
			const char *uid = claim_uid(in->pod, e, claims);
			if (uid && !was_prepared(d, uid)) {
				d->prepared = gs_xrealloc(d->prepared,
							  (d->n_prepared + 1) * sizeof(char *));
				d->prepared[d->n_prepared++] = gs_xstrdup(uid);
			}
		}
		rc = pass_on(d, in, out, err);
		goto out;
	}
	out->admit = false;
	out->hold = true;
	out->reason = gs_xstrdup(DRAPREPARE_EVENT_REASON);
	out->message = gs_xstrdup(res.event_message ? res.event_message : "");
	out->status = draprepare_pending_status(pod);
	stamp(out->status);
	rc = 0;
out:
	draprepare_result_release(&res);
	json_decref(pod);
	json_decref(claims);
	json_decref(slices);
	free(path);
	free(field);
	return rc;
}
