#include "engine/admission.h"
#include "engine/devicewalk.h"
#include "engine/health.h"
#include "engine/migwalk.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/dpconfig_set.h"
#include "model/kobj.h"
#include "model/nodehw.h"
#include "base/banned.h"

#define REASON_UNEXPECTED "UnexpectedAdmissionError" /* pkg/kubelet/cm/admission/errors.go */
#define REJECTED_PREFIX "Pod was rejected: "	     /* pkg/kubelet/kubelet.go rejectPod */

void admission_decision_release(struct admission_decision *d)
{
	free(d->reason);
	free(d->message);
	json_decref(d->devices);
	memset(d, 0, sizeof(*d));
}

static bool is_sidecar(const json_t *c)
{
	return !strcmp(kobj_text(c, "restartPolicy"), "Always");
}

static void reject(struct admission_decision *d, const char *reason, char *message)
{
	d->admit = false;
	d->reason = gs_xstrdup(reason);
	d->message = message;
	json_decref(d->devices);
	d->devices = NULL;
}

struct sim {
	const struct ledger *l;
	struct admission_decision *d;
	bool *busy;   /* held by another pod or already by this one */
	bool *reuse;  /* devicesToReuse: plain init containers' devices */
	bool *mine;   /* the pod's devices */
	bool *cont;   /* the current container's devices of the current resource */
	size_t *pick; /* scratch */
};

static size_t orphans_of(const struct ledger *l, const char *resource)
{
	size_t n = 0;

	for (size_t i = 0; i < l->n_orphans; i++)
		n += !strcmp(l->orphans[i].resource, resource);
	return n;
}

/* isDevicePluginResource: registered, or devices of it still allocated. */
static bool serves(void *arg, const char *res)
{
	const struct sim *s = arg;

	return ledger_count(s->l, res, NULL) || orphans_of(s->l, res);
}

/*
 * ManagerImpl.allocateContainerResources for one resource of one container
 * (devicewalk's step): devicesToAllocate, then the plugin's Allocate
 * (ValidateRequest). Returns 0, or 1 with the decision rejected.
 */
static int allocate(void *arg, const struct devicewalk_step *st)
{
	struct sim *s = arg;
	const struct ledger *l = s->l;
	struct admission_decision *d = s->d;
	const char *res = st->resource;
	size_t n = l->n_devices, needed = (size_t)st->ask, got = 0, avail = 0;
	size_t *must = s->pick;
	bool replicas = false;

	memset(s->cont, 0, n * sizeof(bool));
	/* The registered check: a resource only pods still hold (its devices gone). */
	if (!ledger_count(l, res, NULL)) {
		reject(d, REASON_UNEXPECTED,
		       gs_xasprintf(
			       "Allocate failed due to cannot allocate unregistered device %s, "
			       "which is unexpected",
			       res));
		return 1;
	}
	/* The devices plain init containers left, as many as the walk counted. */
	for (size_t i = 0; i < n && got < (size_t)st->reused; i++)
		if (s->reuse[i] && !strcmp(l->devices[i].resource, res)) {
			s->cont[i] = true;
			must[got++] = i;
		}
	if (st->fresh > 0) {
		size_t *pref;
		for (size_t i = 0; i < n; i++)
			avail += !strcmp(l->devices[i].resource, res) && !s->busy[i];
		if (avail < (size_t)st->fresh) {
			reject(d, REASON_UNEXPECTED,
			       gs_xasprintf("Allocate failed due to requested number of devices "
					    "unavailable for %s. Requested: %lld, Available: %zu, "
					    "which is unexpected",
					    res, (long long)st->fresh, avail));
			return 1;
		}
		pref = gs_xcalloc(needed, sizeof(*pref));
		if (ledger_preferred(l, res, s->busy, must, got, needed, pref)) {
			free(pref);
			reject(d, REASON_UNEXPECTED,
			       gs_xasprintf("Allocate failed due to requested number of devices "
					    "unavailable for %s. Requested: %lld, Available: %zu, "
					    "which is unexpected",
					    res, (long long)st->fresh, avail));
			return 1;
		}
		for (size_t i = got; i < needed; i++) {
			s->busy[pref[i]] = true;
			s->cont[pref[i]] = true;
		}
		free(pref);
	}
	/* The plugin's Allocate gets the container's devices of this resource. */
	for (size_t i = 0; i < n; i++)
		if (s->cont[i])
			replicas |= l->devices[i].replica >= 0;
	if (l->fail_over_one && replicas && needed > 1) {
		reject(d, REASON_UNEXPECTED,
		       gs_xasprintf(
			       "Allocate failed due to rpc error: code = Unknown desc = invalid "
			       "allocation request for \"%s\": invalid request: maximum request "
			       "size for shared resources is 1; found %zu, which is unexpected",
			       res, needed));
		return 1;
	}
	/* addContainerAllocatedResources / removeContainerAllocatedResources */
	for (size_t i = 0; i < n; i++)
		if (s->cont[i]) {
			s->mine[i] = true;
			s->reuse[i] = st->leaves;
		}
	return 0;
}

/*
 * The scheduler's pod request for one resource (what the predicate
 * compares): app containers and sidecars summed, or a plain init container
 * with the sidecars started before it, whichever is larger.
 */
static int pod_request(const json_t *pod, const char *res, int64_t *out, struct gs_error *err)
{
	const json_t *spec = kobj_map(pod, "spec");
	int64_t sum = 0, side = 0, best = 0, a;
	size_t i;
	json_t *c;

	json_array_foreach (json_object_get(spec, "containers"), i, c) {
		if (devicewalk_ask(c, res, &a, err))
			return -1;
		sum += a;
	}
	json_array_foreach (json_object_get(spec, "initContainers"), i, c) {
		if (devicewalk_ask(c, res, &a, err))
			return -1;
		if (is_sidecar(c)) {
			side += a;
			continue;
		}
		if (a + side > best)
			best = a + side;
	}
	*out = sum + side > best ? sum + side : best;
	return 0;
}

int admission_decide(const struct ledger *l, const json_t *pod, struct admission_decision *out,
		     struct gs_error *err)
{
	size_t n = l->n_devices ? l->n_devices : 1, i;
	struct sim s = {.l = l,
			.d = out,
			.busy = gs_xcalloc(n, sizeof(bool)),
			.reuse = gs_xcalloc(n, sizeof(bool)),
			.mine = gs_xcalloc(n, sizeof(bool)),
			.cont = gs_xcalloc(n, sizeof(bool)),
			.pick = gs_xcalloc(n, sizeof(size_t))};
	int rc = 0;

	memset(out, 0, sizeof(*out));
	out->admit = true;
	out->devices = json_object();
	for (i = 0; i < l->n_devices; i++)
		s.busy[i] = l->devices[i].holder != NULL;
	/* The resource allocator: init containers, then app containers, in order. */
	rc = devicewalk_pod(pod, serves, allocate, &s, err);
	if (rc)
		goto done;
	/* The predicate, for resources shown at 0 (no plugin serves them). */
	for (size_t k = 0; k < l->n_vanished; k++) {
		int64_t req;

		if (pod_request(pod, l->vanished[k], &req, err)) {
			rc = -1;
			goto done;
		}
		if (req <= 0)
			continue;
		/* InsufficientResourcePrefix + the name; InsufficientResourceError.Error() */
		reject(out, "",
		       gs_xasprintf("Node didn't have enough resource: %s, requested: %lld, "
				    "used: %zu, capacity: 0",
				    l->vanished[k], (long long)req, orphans_of(l, l->vanished[k])));
		free(out->reason);
		out->reason = gs_xasprintf("OutOf%s", l->vanished[k]);
		rc = 1;
		goto done;
	}
	for (i = 0; i < l->n_devices; i++) {
		json_t *ids;

		if (!s.mine[i])
			continue;
		ids = json_object_get(out->devices, l->devices[i].resource);
		if (!ids)
			json_object_set_new(out->devices, l->devices[i].resource,
					    ids = json_array());
		json_array_append_new(ids, json_string(l->devices[i].id));
	}
done:
	free(s.busy);
	free(s.reuse);
	free(s.mine);
	free(s.cont);
	free(s.pick);
	if (rc < 0) {
		admission_decision_release(out);
		return -1;
	}
	return 0;
}

json_t *admission_status_patch(const struct admission_decision *d)
{
	char *msg = gs_xasprintf(REJECTED_PREFIX "%s", d->message ? d->message : "");
	json_t *p = json_pack("{s:{s:s, s:s, s:s}}", "status", "phase", "Failed", "reason",
			      d->reason ? d->reason : "", "message", msg);

	free(msg);
	return p;
}

json_t *admission_event(const struct admission_decision *d, const json_t *pod, const char *node,
			const char *now)
{
	const char *uid = kobj_string(pod, "metadata.uid");
	const char *rv = kobj_string(pod, "metadata.resourceVersion");
	json_t *ref = json_pack("{s:s, s:s, s:s, s:s}", "kind", "Pod", "apiVersion", "v1",
				"namespace", kobj_text(pod, "metadata.namespace"), "name",
				kobj_text(pod, "metadata.name"));

	if (uid)
		json_object_set_new(ref, "uid", json_string(uid));
	if (rv)
		json_object_set_new(ref, "resourceVersion", json_string(rv));
	/* client-go's recorder names an Event "<object>.<hex time>"; "<object>." as
	 * generateName gets the same shape from the apiserver. */
	char *gen = gs_xasprintf("%s.", kobj_text(pod, "metadata.name"));
	json_t *ev;

	ev = json_pack("{s:s, s:s, s:{s:s, s:s}, s:o, s:s, s:s, s:s, s:{s:s, s:s}, s:s, s:s, "
		       "s:s, s:i, s:s}",
		       "apiVersion", "v1", "kind", "Event", "metadata", "generateName", gen,
		       "namespace", kobj_text(pod, "metadata.namespace"), "involvedObject", ref,
		       "type", "Warning", "reason", d->reason ? d->reason : "", "message",
		       d->message ? d->message : "", "source", "component", "kubelet", "host", node,
		       "firstTimestamp", now, "lastTimestamp", now, "reportingComponent", "kubelet",
		       "count", 1, "reportingInstance", node);
	free(gen);
	return ev;
}

/* ---- from cluster objects ---- */

struct admission_ctx {
	const struct catalog *cat;
	struct advertise_options ao;
	struct dpconfig_set *set; /* the ConfigMap's, NULL when none */
	char *cm_key;		  /* "<uid>/<resourceVersion>" the set was built from */
};

struct admission_ctx *admission_ctx_new(const struct catalog *cat,
					const struct advertise_options *ao)
{
	struct admission_ctx *ctx = gs_xcalloc(1, sizeof(*ctx));

	ctx->cat = cat;
	if (ao)
		ctx->ao = *ao;
	return ctx;
}

void admission_ctx_free(struct admission_ctx *ctx)
{
	if (!ctx)
		return;
	dpconfig_set_free(ctx->set);
	free(ctx->cm_key);
	free(ctx);
}

static int ctx_set(struct admission_ctx *ctx, const json_t *cm, struct gs_error *err)
{
	char *key;

	if (!cm) {
		dpconfig_set_free(ctx->set);
		ctx->set = NULL;
		free(ctx->cm_key);
		ctx->cm_key = NULL;
		return 0;
	}
	key = gs_xasprintf("%s/%s", kobj_text(cm, "metadata.uid"),
			   kobj_text(cm, "metadata.resourceVersion"));
	if (ctx->cm_key && ctx->set && !strcmp(key, ctx->cm_key) &&
	    *kobj_text(cm, "metadata.resourceVersion")) {
		free(key);
		return 0;
	}
	dpconfig_set_free(ctx->set);
	ctx->set = NULL;
	free(ctx->cm_key);
	ctx->cm_key = NULL;
	if (dpconfig_set_from_configmap(NULL, cm, &ctx->set, err) < 0) {
		free(key);
		return -1;
	}
	ctx->cm_key = key;
	return 0;
}

/* What holders without a record would have got, in order. */
static int hold_unrecorded(struct ledger *l, const json_t *holders, const json_t *pod,
			   struct gs_error *err)
{
	const char *self = kobj_text(pod, "metadata.uid");
	size_t i;
	json_t *h;

	json_array_foreach ((json_t *)holders, i, h) {
		struct admission_decision d;
		char *key;

		if (kobj_annotation(h, LEDGER_ANN_DEVICES) ||
		    !strcmp(kobj_text(h, "spec.nodeName"), "") ||
		    (*self && !strcmp(kobj_text(h, "metadata.uid"), self)))
			continue;
		if (admission_decide(l, h, &d, err) < 0)
			return -1;
		key = ledger_pod_key(h);
		if (d.admit && ledger_hold(l, key, d.devices, err) < 0) {
			free(key);
			admission_decision_release(&d);
			return -1;
		}
		free(key);
		admission_decision_release(&d);
	}
	return 0;
}

/*
 * The kubelet hands out healthy devices only (k8s.io/kubernetes v1.34.4
 * pkg/kubelet/cm/devicemanager/manager.go devicesToAllocate): a free
 * device the plugin marked unhealthy (docs/guide/faults.md) is held aside; one a
 * pod already holds stays that pod's, which keeps running.
 */
static void hold_unhealthy(struct ledger *l, const json_t *unhealthy)
{
	json_t *free_ids = json_object();
	const char *res;
	json_t *ids, *id;
	size_t k;
	struct gs_error e;

	json_object_foreach ((json_t *)unhealthy, res, ids) {
		json_t *a = json_array();
		json_array_foreach (ids, k, id) {
			long i = ledger_find(l, json_string_value(id));
			if (i >= 0 && !l->devices[i].holder)
				json_array_append(a, id);
		}
		json_object_set_new(free_ids, res, a);
	}
	if (json_object_size(free_ids) && ledger_hold(l, "(unhealthy)", free_ids, &e) < 0) {
		/* Cannot happen: every ID is the node's and free. */
	}
	json_decref(free_ids);
}

/* Every free device held aside: the plugin is gone, the kubelet counts them unhealthy. */
static void hold_all_free(struct ledger *l)
{
	for (size_t i = 0; i < l->n_devices; i++)
		if (!l->devices[i].holder)
			l->devices[i].holder = gs_xstrdup("(plugin down)");
}

int admission_ctx_decide(struct admission_ctx *ctx, const json_t *node, const json_t *configmap,
			 const json_t *pod, const json_t *holders, struct admission_decision *out,
			 struct gs_error *err)
{
	struct advertisement *adv = NULL;
	struct nodehw *hw = NULL;
	struct ledger *l = NULL;
	const struct dpconfig *cfg = NULL;
	struct gs_warnings w;
	int rc = -1;

	bool plugin_down;
	/* What the plugin serves: the layout the GPUs hold, not one mig-manager walks to. */
	json_t *held = migwalk_node_as_held(node, &plugin_down);

	memset(out, 0, sizeof(*out));
	gs_warnings_init(&w);
	if (held)
		node = held;
	if (ctx_set(ctx, configmap, err) < 0 ||
	    health_advertise_node(ctx->cat, node, ctx->set, &ctx->ao, &adv, err) < 0 ||
	    nodehw_from_node(ctx->cat, node, NULL, &hw, &w, err) < 0)
		goto out;
	if (ctx->set && adv->config_name && *adv->config_name) {
		long k = dpconfig_set_find(ctx->set, adv->config_name);
		cfg = k >= 0 ? dpconfig_set_get(ctx->set, (size_t)k, NULL) : NULL;
	}
	/*
	 * A resource the node still shows, at 0, that gpushare's record has
	 * dropped (it wrote it 0 once, and a merge patch leaves the key): the
	 * kubelet knows it, so the predicate refuses it rather than taking it
	 * as one the node never had (k8s.io/kubernetes v1.37.2
	 * pkg/kubelet/lifecycle/predicate.go removeMissingExtendedResources
	 * drops only what the node lacks).
	 */
	{
		const char *res;
		json_t *v;
		json_object_foreach ((json_t *)kobj_map(node, "status.capacity"), res, v)
			if (!strncmp(res, "nvidia.com/", 11) && json_is_object(adv->resources) &&
			    !json_object_get(adv->resources, res))
				json_object_set_new(adv->resources, res, json_integer(0));
	}
	if (ledger_new(ctx->cat, hw, adv, cfg, &l, err) < 0)
		goto out;
	/* Holders count as admitted whatever their annotation says: the caller vouches. */
	ledger_rebuild_admitted(l, holders, &w);
	hold_unhealthy(l, adv->unhealthy);
	/*
	 * mig-manager has the plugin off: the kubelet's PluginDisconnected marked
	 * every device unhealthy (k8s.io/kubernetes v1.37.2
	 * pkg/kubelet/cm/devicemanager/manager.go), so none is handed out.
	 */
	if (plugin_down)
		hold_all_free(l);
	if (hold_unrecorded(l, holders, pod, err) < 0 || admission_decide(l, pod, out, err) < 0)
		goto out;
	rc = 0;
out:
	ledger_free(l);
	nodehw_free(hw);
	advertisement_free(adv);
	gs_warnings_release(&w);
	json_decref(held);
	return rc;
}
