#include "daemon/draadmit.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "dra/draslice.h"
#include "model/kobj.h"
#include "kube/kubeloop.h"
#include "base/banned.h"

/*
 * The reads one decision needs: the claims of the pod's namespace and the
 * slices of its node, LISTed at once on the loop. When both ended, the
 * controller is told (ready) and decides the pod again at once, which takes
 * them; what it did not take is dropped then.
 */
struct draadmit_read {
	struct draadmit *d;
	char *pod_uid;
	unsigned pending; /* LISTs not answered */
	json_t *claims, *slices;
	char *error; /* the first failure, in kube_list's words */
	void (*ready)(void *ready_arg);
	void *ready_arg;
	struct draadmit_read *next;
};

void draadmit_init(struct draadmit *d, struct kube_loop *l)
{
	memset(d, 0, sizeof(*d));
	d->l = l;
	draprepare_gates_default(&d->cluster);
}

static void read_free(struct draadmit_read *r)
{
	free(r->pod_uid);
	json_decref(r->claims);
	json_decref(r->slices);
	free(r->error);
	free(r);
}

static void read_unlink(struct draadmit *d, struct draadmit_read *r)
{
	for (struct draadmit_read **p = &d->reads; *p; p = &(*p)->next)
		if (*p == r) {
			*p = r->next;
			return;
		}
}

void draadmit_release(struct draadmit *d)
{
	for (size_t i = 0; i < d->n_prepared; i++)
		free(d->prepared[i]);
	free(d->prepared);
	d->prepared = NULL;
	d->n_prepared = 0;
	/* Reads still in flight: their loop is freed without calling back. */
	while (d->reads) {
		struct draadmit_read *r = d->reads;
		d->reads = r->next;
		read_free(r);
	}
}

static struct draadmit_read *read_of(struct draadmit *d, const char *pod_uid)
{
	for (struct draadmit_read *r = d->reads; r; r = r->next)
		if (!strcmp(r->pod_uid, pod_uid))
			return r;
	return NULL;
}

static void read_end(struct draadmit_read *r)
{
	struct draadmit *d = r->d;
	char *uid;

	if (--r->pending)
		return;
	/* The controller decides the pod again now, taking what was read. */
	uid = gs_xstrdup(r->pod_uid);
	r->ready(r->ready_arg);
	r = read_of(d, uid);
	if (r) {
		read_unlink(d, r);
		read_free(r);
	}
	free(uid);
}

static void on_listed(struct draadmit_read *r, json_t **into, json_t *list,
		      const struct kube_result *res)
{
	if (list)
		*into = list;
	else if (!r->error)
		r->error = gs_xstrdup(res->error);
}

static void on_claims(void *arg, json_t *list, const struct kube_result *res)
{
	struct draadmit_read *r = arg;

	on_listed(r, &r->claims, list, res);
	read_end(r);
}

static void on_slices(void *arg, json_t *list, const struct kube_result *res)
{
	struct draadmit_read *r = arg;

	on_listed(r, &r->slices, list, res);
	read_end(r);
}

/* LIST the namespace's claims and the node's slices; -1 with err when nothing could be sent. */
static int read_start(struct draadmit *d, const struct controller_admission *in, const char *uid,
		      struct gs_error *err)
{
	const char *ns = kobj_namespace(in->pod), *node = kobj_name(in->node);
	struct draadmit_read *r = gs_xcalloc(1, sizeof(*r));
	char *path =
		gs_xasprintf("/apis/resource.k8s.io/v1/namespaces/%s/resourceclaims", ns ? ns : "");
	char *field = gs_xasprintf("spec.nodeName=%s", node ? node : "");
	int rc = 0;

	r->d = d;
	r->pod_uid = gs_xstrdup(uid);
	r->ready = in->ready;
	r->ready_arg = in->ready_arg;
	r->pending = 2;
	if (kube_loop_list(d->l, path, NULL, NULL, 0, on_claims, r) < 0) {
		gs_error_set(err, "GET %s: cannot make a request", path);
		rc = -1;
	} else if (kube_loop_list(d->l, "/apis/resource.k8s.io/v1/resourceslices", NULL, field, 0,
				  on_slices, r) < 0) {
		/* The claims' LIST is out: its answer ends the read, which fails then. */
		r->error = gs_xstrdup("cannot make a request for the ResourceSlices");
		r->pending = 1;
	}
	if (rc == 0) {
		r->next = d->reads;
		d->reads = r;
	} else {
		read_free(r);
	}
	free(path);
	free(field);
	return rc;
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
	const char *pod_uid = kobj_string(in->pod, "metadata.uid");
	struct draprepare_gates gates;
	struct draprepare_result res;
	struct draadmit_read *r;
	json_t *claims = NULL, *slices = NULL, *pod = NULL;
	bool all = true;
	size_t i;
	int rc = -1;

	if (!draslice_node_wants_dra(in->node) || !json_array_size(entries))
		return pass_on(d, in, out, err);
	if (!pod_uid)
		pod_uid = "";
	r = read_of(d, pod_uid);
	if (!r || r->pending) {
		if (r || !d->l) {
			gs_error_set(err, "the claims and slices cannot be read now");
			return -1;
		}
		return read_start(d, in, pod_uid, err) < 0 ? -1 : CONTROLLER_ADMIT_LATER;
	}
	/* What was read for this decision is taken. */
	read_unlink(d, r);
	if (r->error) {
		gs_error_set(err, "%s", r->error);
		read_free(r);
		return -1;
	}
	claims = r->claims;
	slices = r->slices;
	r->claims = r->slices = NULL;
	read_free(r);
	draprepare_result_init(&res);
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
	return rc;
}
