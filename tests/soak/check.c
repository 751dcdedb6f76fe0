/*
 * The soak's invariants, on one snapshot of the cluster (pods, nodes, the
 * device-plugin ConfigMap, quotas, the controller's /metrics). Each check
 * recomputes from the objects with the engine (ledger, admission, quota
 * sums, the config model) or with a few lines of its own where the
 * engine's answer would be the thing under test.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/admission.h"
#include "engine/explain.h"
#include "engine/explain_offline.h"
#include "engine/health.h"
#include "engine/ledger.h"
#include "engine/migwalk.h"
#include "model/dpconfig_set.h"
#include "model/kobj.h"
#include "model/names.h"
#include "model/nodehw.h"
#include "model/quantity.h"
#include "tests/soak/soak.h"

const char *const soak_invariant_names[INV_N] = {
	[INV_HELD_TWICE] = "device-held-twice",
	[INV_REPLICAS] = "replicas-over-config",
	[INV_REFUSED] = "refused-by-real-node",
	[INV_BOOKS] = "controller-books",
	[INV_QUOTA] = "quota-usage",
	[INV_MIG_STUCK] = "mig-pending-stuck",
	[INV_ADMISSION_STUCK] = "admission-stuck",
};

/* How long a bound pod may wait for its verdict, a walk past its seconds (beyond restarts). */
#define UNDECIDED_S 30.0
#define WALK_SLACK_S 15.0

struct checker {
	const struct catalog *cat;
	/* uid -> {"seen": monotonic s first seen undecided, "ok": admission checked good} */
	json_t *track;
	struct dpconfig_set *set; /* of cm_rv */
	char *cm_rv;
	bool cm_bad;
	/*
	 * The previous snapshot's: its set when the ConfigMap changed since
	 * (NULL: the same as set), its managed nodes by name.
	 */
	struct dpconfig_set *prev_set;
	json_t *prev_nodes;
};

bool soak_pod(const json_t *pod)
{
	const char *ns = kobj_namespace(pod);

	for (int i = 0; ns && i < SOAK_NS_N; i++)
		if (!strcmp(ns, soak_namespaces[i]))
			return true;
	return false;
}

struct checker *checker_new(const struct catalog *cat)
{
	struct checker *ck = gs_xcalloc(1, sizeof(*ck));

	ck->cat = cat;
	ck->track = json_object();
	return ck;
}

void checker_reset(struct checker *ck)
{
	json_object_clear(ck->track);
}

void checker_free(struct checker *ck)
{
	if (!ck)
		return;
	json_decref(ck->track);
	dpconfig_set_free(ck->set);
	dpconfig_set_free(ck->prev_set);
	json_decref(ck->prev_nodes);
	free(ck->cm_rv);
	free(ck);
}

void violations_release(struct violations *vs)
{
	for (size_t i = 0; i < vs->n; i++)
		free(vs->v[i].what);
	free(vs->v);
	memset(vs, 0, sizeof(*vs));
}

static void violate(struct violations *vs, enum soak_invariant inv, bool eventual, const char *fmt,
		    ...) __attribute__((format(printf, 4, 5)));
static void violate(struct violations *vs, enum soak_invariant inv, bool eventual, const char *fmt,
		    ...)
{
	struct strbuf sb = STRBUF_INIT;
	va_list ap;

	va_start(ap, fmt);
	strbuf_vaddf(&sb, fmt, ap);
	va_end(ap);
	if (vs->n == vs->cap) {
		vs->cap = vs->cap ? 2 * vs->cap : 8;
		vs->v = gs_xrealloc(vs->v, vs->cap * sizeof(*vs->v));
	}
	vs->v[vs->n++] = (struct violation){inv, eventual, strbuf_detach(&sb, NULL)};
}

void snapshot_release(struct snapshot *s)
{
	json_decref(s->pods);
	json_decref(s->nodes);
	json_decref(s->configmap);
	json_decref(s->quotas);
	json_decref(s->metrics);
	memset(s, 0, sizeof(*s));
}

/* A List's items carry no kind: the readers of the engine want it. */
static void set_kind(json_t *items, const char *kind)
{
	size_t i;
	json_t *o;

	json_array_foreach (items, i, o) {
		if (!json_object_get(o, "kind"))
			json_object_set_new(o, "kind", json_string(kind));
		if (!json_object_get(o, "apiVersion"))
			json_object_set_new(o, "apiVersion", json_string("v1"));
	}
}

static int list_items(struct soak_cluster *cl, const char *path, const char *kind, json_t **out,
		      struct gs_error *err)
{
	json_t *list = NULL;

	*out = NULL;
	if (kube_list(cl->c, path, NULL, &list, err) < 0)
		return -1;
	*out = json_incref(json_object_get(list, "items"));
	json_decref(list);
	if (!*out)
		*out = json_array();
	set_kind(*out, kind);
	return 0;
}

int snapshot_take(struct soak_cluster *cl, json_t *pods, struct snapshot *s, struct gs_error *err)
{
	struct gs_error merr;

	memset(s, 0, sizeof(*s));
	s->pods = pods;
	if ((!s->pods && list_items(cl, "/api/v1/pods", "Pod", &s->pods, err) < 0) ||
	    list_items(cl, "/api/v1/nodes", "Node", &s->nodes, err) < 0 ||
	    list_items(cl, "/api/v1/resourcequotas", "ResourceQuota", &s->quotas, err) < 0)
		goto fail;
	set_kind(s->pods, "Pod");
	if (cl->configmap) {
		s->configmap = json_incref(cl->configmap);
	} else if (kube_get(cl->c, "/api/v1/namespaces/" SOAK_CM_NS "/configmaps/" SOAK_CM_NAME,
			    &s->configmap, err) < 0) {
		if (kube_last_status(cl->c)->code != 404)
			goto fail;
	} else {
		cl->configmap = json_incref(s->configmap);
	}
	if (soak_metrics(cl, &s->metrics, &merr) < 0)
		s->metrics = NULL;
	s->at = soak_now();
	s->wall = soak_wall();
	return 0;
fail:
	snapshot_release(s);
	return -1;
}

/* ---- small readers ---------------------------------------------------------------------- */

static long long count_of(const json_t *v)
{
	if (json_is_integer(v))
		return json_integer_value(v);
	return json_string_value(v) ? atoll(json_string_value(v)) : 0;
}

/* The pod's nvidia.com/ requests by the controller's rule: containers' requests, else limits. */
static void pod_nvidia(const json_t *pod, json_t *acc)
{
	const json_t *cs = kobj_get(pod, "spec.containers"), *c;
	size_t i;

	json_array_foreach ((json_t *)cs, i, c) {
		const json_t *req = kobj_map(c, "resources.requests");
		const json_t *lim = kobj_map(c, "resources.limits");
		const char *k;
		json_t *v;
		json_object_foreach ((json_t *)lim, k, v)
			if (!strncmp(k, "nvidia.com/", 11) && !json_object_get(req, k))
				json_object_set_new(acc, k,
						    json_integer(count_of(json_object_get(acc, k)) +
								 count_of(v)));
		json_object_foreach ((json_t *)req, k, v)
			if (!strncmp(k, "nvidia.com/", 11))
				json_object_set_new(acc, k,
						    json_integer(count_of(json_object_get(acc, k)) +
								 count_of(v)));
	}
}

static bool managed(const json_t *node)
{
	const char *off = kobj_label(node, "gpushare.io/controller");

	return kobj_annotation(node, NODEHW_ANN_PRODUCT) && !(off && !strcmp(off, "off"));
}

static bool dra_node(const json_t *node)
{
	const char *p = kobj_label(node, DRASLICE_LABEL_PATH);

	return p && !strcmp(p, "dra");
}

static bool admitted(const json_t *pod)
{
	const char *a = kobj_annotation(pod, LEDGER_ANN_ADMITTED);

	return a && !strcmp(a, "true");
}

static bool ended(const json_t *pod)
{
	const char *phase = kobj_text(pod, "status.phase");

	return !strcmp(phase, "Succeeded") || !strcmp(phase, "Failed");
}

/* When the pod's gpushare.io/admitted was written (managedFields, to the second); -1 unknown. */
static long long admitted_at(const json_t *pod)
{
	const json_t *mf = kobj_get(pod, "metadata.managedFields"), *e;
	size_t i;

	json_array_foreach ((json_t *)mf, i, e) {
		const json_t *ann = kobj_get(e, "fieldsV1.f:metadata.f:annotations");
		if (json_object_get(ann, "f:" LEDGER_ANN_ADMITTED))
			return migwalk_parse_time(kobj_string(e, "time"));
	}
	return -1;
}

static char *pod_key(const json_t *pod)
{
	return gs_xasprintf("%s/%s", kobj_text(pod, "metadata.namespace"),
			    kobj_text(pod, "metadata.name"));
}

/* ---- the ledger of one node, as its kubelet would hold it ---------------------------- */

/*
 * The node as its device plugin serves it: the layout the GPUs hold
 * (the walk record's `applied`), not the one the label asks for while
 * mig-manager walks or after it failed. New reference.
 */
static json_t *shown_node(const json_t *node)
{
	const char *rec = kobj_annotation(node, NODEHW_ANN_MIG_RECORD);
	json_t *doc = rec ? json_loads(rec, 0, NULL) : NULL, *copy;
	const char *applied = json_string_value(json_object_get(doc, "applied"));
	json_t *labels;

	copy = json_deep_copy(node);
	if (doc && json_object_get(doc, "applied")) {
		labels = json_object_get(json_object_get(copy, "metadata"), "labels");
		if (applied)
			json_object_set_new(labels, NODEHW_LABEL_MIG_CONFIG, json_string(applied));
		else
			json_object_del(labels, NODEHW_LABEL_MIG_CONFIG);
	}
	json_decref(doc);
	return copy;
}

/*
 * The node's devices (what its plugin registers), held by `holders`,
 * and the free unhealthy ones held aside as the kubelet does. NULL with
 * err when the node cannot be read.
 */
static struct ledger *node_ledger(struct checker *ck, const struct dpconfig_set *set,
				  const json_t *node, const json_t *holders, struct gs_error *err)
{
	struct advertise_options ao = {0};
	struct advertisement *adv = NULL;
	struct nodehw *hw = NULL;
	struct ledger *l = NULL;
	const struct dpconfig *cfg = NULL;
	struct gs_warnings w;
	json_t *shown = shown_node(node);

	gs_warnings_init(&w);
	if (health_advertise_node(ck->cat, shown, set, &ao, &adv, err) < 0 ||
	    nodehw_from_node(ck->cat, shown, NULL, &hw, &w, err) < 0)
		goto out;
	if (set && adv->config_name && *adv->config_name) {
		long k = dpconfig_set_find(set, adv->config_name);
		cfg = k >= 0 ? dpconfig_set_get(set, (size_t)k, NULL) : NULL;
	}
	if (ledger_new(ck->cat, hw, adv, cfg, &l, err) < 0)
		goto out;
	ledger_rebuild(l, holders, &w);
	if (adv->unhealthy) {
		const char *res;
		json_t *ids, *id, *aside = json_object();
		size_t k;
		struct gs_error e;
		json_object_foreach (adv->unhealthy, res, ids) {
			json_t *a = json_array();
			json_array_foreach (ids, k, id) {
				long i = ledger_find(l, json_string_value(id));
				if (i >= 0 && !l->devices[i].holder)
					json_array_append(a, id);
			}
			json_object_set_new(aside, res, a);
		}
		if (json_object_size(aside) && ledger_hold(l, "(unhealthy)", aside, &e) < 0) {
			/* every ID is the node's and free */
		}
		json_decref(aside);
	}
out:
	advertisement_free(adv);
	nodehw_free(hw);
	gs_warnings_release(&w);
	json_decref(shown);
	return l;
}

/*
 * A pod first seen holding devices: would its node, under the device-plugin
 * configs of `set` and with the others' holdings, have admitted it, and are
 * the devices it got ones the node had free? Returns true when it checks good.
 */
static bool check_new_pod(struct checker *ck, const struct dpconfig_set *set, const json_t *node,
			  const json_t *pod, const json_t *holders, const json_t *devices,
			  struct violations *out)
{
	json_t *others = json_array(), *h;
	struct admission_decision d;
	struct ledger *l;
	struct gs_error err;
	char *key = pod_key(pod);
	const char *res;
	json_t *ids, *id;
	size_t i;
	bool ok = true;

	json_array_foreach ((json_t *)holders, i, h)
		if (h != pod)
			json_array_append(others, h);
	gs_error_clear(&err);
	l = node_ledger(ck, set, node, others, &err);
	json_decref(others);
	if (!l) {
		violate(out, INV_REFUSED, false,
			"node %s cannot be read (%s): pod %s is running on it", kobj_name(node),
			err.msg, key);
		free(key);
		return false;
	}
	if (admission_decide(l, pod, &d, &err) < 0) {
		violate(out, INV_REFUSED, false, "pod %s: %s", key, err.msg);
		ok = false;
	} else if (!d.admit) {
		violate(out, INV_REFUSED, false,
			"pod %s runs on %s, whose kubelet would refuse it: %s: %s (it got %s)", key,
			kobj_name(node), d.reason, d.message,
			kobj_annotation(pod, LEDGER_ANN_DEVICES));
		ok = false;
	}
	admission_decision_release(&d);
	json_object_foreach ((json_t *)devices, res, ids) {
		json_array_foreach (ids, i, id) {
			const char *s = json_string_value(id);
			long k = s ? ledger_find(l, s) : -1;
			if (k < 0) {
				violate(out, strstr(s ? s : "", "::") ? INV_REPLICAS : INV_REFUSED,
					false,
					"pod %s got %s %s on %s, a device its plugin does not "
					"register "
					"under config %s",
					key, res, s ? s : "?", kobj_name(node),
					l->config_name ? l->config_name : "(none)");
				ok = false;
			} else if (strcmp(l->devices[k].resource, res)) {
				violate(out, INV_REFUSED, false,
					"pod %s got %s as %s on %s; the plugin registers it as %s",
					key, s, res, kobj_name(node), l->devices[k].resource);
				ok = false;
			} else if (l->devices[k].holder &&
				   !strcmp(l->devices[k].holder, "(unhealthy)")) {
				violate(out, INV_REFUSED, false,
					"pod %s got %s on %s, a device the plugin marked unhealthy "
					"(%s)",
					key, s, kobj_name(node),
					kobj_annotation(node, NODEHW_ANN_UNHEALTHY));
				ok = false;
			}
		}
	}
	ledger_free(l);
	free(key);
	return ok;
}

/*
 * check_new_pod by the node and the ConfigMap as they are or, if that
 * fails, as the previous snapshot had them, in any of the four pairs: the
 * pod was admitted since that snapshot, while the step's change (a config
 * edit, a fault, a walk) and the controller's answer to it were on their
 * way, and a kubelet too admits by what its plugin served at the time. Only
 * the check by the state as it is is reported.
 */
static bool check_new_pod_either(struct checker *ck, const json_t *node, const json_t *pod,
				 const json_t *holders, const json_t *devices,
				 struct violations *out)
{
	const json_t *prev = json_object_get(ck->prev_nodes, kobj_name(node));
	const json_t *nodes[2] = {node, NULL};
	const struct dpconfig_set *sets[2] = {ck->set, ck->prev_set};
	struct violations now = {0};
	bool ok = check_new_pod(ck, ck->set, node, pod, holders, devices, &now);

	/* The same node, not one of the same name made again by a reset. */
	if (prev && !strcmp(kobj_text(prev, "metadata.uid"), kobj_text(node, "metadata.uid")))
		nodes[1] = prev;
	for (int k = 1; !ok && k < 4; k++) {
		struct violations then = {0};
		if (!nodes[k & 1] || ((k & 2) && !sets[1]))
			continue;
		ok = check_new_pod(ck, sets[k >> 1], nodes[k & 1], pod, holders, devices, &then);
		violations_release(&then);
	}
	for (size_t i = 0; !ok && i < now.n; i++)
		violate(out, now.v[i].inv, now.v[i].eventual, "%s", now.v[i].what);
	violations_release(&now);
	return ok;
}

/* ---- the checks ----------------------------------------------------------------------- */

struct node_view {
	const json_t *node;
	json_t *holders; /* active pods with a device record */
	const struct dpconfig *cfg;
	int replicas; /* of nvidia.com/gpu under its config, 0 = not shared */
};

static void check_config(struct checker *ck, const json_t *cm, struct violations *out)
{
	const char *rv = cm ? kobj_text(cm, "metadata.resourceVersion") : "";
	struct gs_error err;

	dpconfig_set_free(ck->prev_set);
	ck->prev_set = NULL;
	if (ck->cm_rv && !strcmp(ck->cm_rv, rv))
		return;
	ck->prev_set = ck->set;
	ck->set = NULL;
	free(ck->cm_rv);
	ck->cm_rv = gs_xstrdup(rv);
	ck->cm_bad = false;
	if (cm && dpconfig_set_from_configmap(NULL, cm, &ck->set, &err) < 0) {
		ck->cm_bad = true;
		violate(out, INV_REPLICAS, false, "the device-plugin ConfigMap does not read: %s",
			err.msg);
	}
}

/* Replicas of nvidia.com/gpu the node's config asks for (0: not shared, or not known). */
static int configured_replicas(struct checker *ck, const json_t *node, const struct dpconfig **c)
{
	struct dpconfig_choice ch;
	const struct dp_sharing *sh;
	struct gs_error err;

	*c = NULL;
	if (!ck->set ||
	    dpconfig_set_select(ck->set, kobj_label(node, NODEHW_LABEL_CONFIG), NULL, NULL, &ch,
				&err) < 0 ||
	    !ch.config)
		return 0;
	*c = ch.config;
	sh = dpconfig_replicated(ch.config);
	for (size_t i = 0; sh && i < sh->n_resources; i++)
		if (!strcmp(sh->resources[i].name, "nvidia.com/gpu") && !sh->resources[i].rename)
			return sh->resources[i].replicas;
	return 0;
}

static void check_replicas(const struct node_view *nv, struct violations *out)
{
	const char *name = kobj_name(nv->node);
	const char *count = kobj_annotation(nv->node, NODEHW_ANN_COUNT);
	long long gpus = count ? atoll(count) : 0;
	long long cap = count_of(
		kobj_get(nv->node, "status.capacity")
			? json_object_get(kobj_get(nv->node, "status.capacity"), "nvidia.com/gpu")
			: NULL);
	json_t *per_gpu = json_object(), *h, *ids, *id, *set;
	const char *k;
	size_t i, j;

	if (!nv->replicas)
		goto out;
	if (kobj_label(nv->node, NODEHW_LABEL_MIG_CONFIG) == NULL && cap > gpus * nv->replicas)
		violate(out, INV_REPLICAS, true,
			"node %s advertises nvidia.com/gpu capacity %lld: %lld GPUs x %d replicas "
			"configured",
			name, cap, gpus, nv->replicas);
	/* Distinct pods on the replicas the config registers, per GPU. */
	json_array_foreach (nv->holders, i, h) {
		json_t *dev = ledger_annotation_parse(kobj_annotation(h, LEDGER_ANN_DEVICES), NULL);
		ids = json_object_get(dev, "nvidia.com/gpu");
		json_array_foreach (ids, j, id) {
			const char *s = json_string_value(id), *sep = s ? strstr(s, "::") : NULL;
			if (!sep || atoi(sep + 2) >= nv->replicas)
				continue;
			char *uuid = gs_xstrndup(s, (size_t)(sep - s));
			char *key = pod_key(h);
			set = json_object_get(per_gpu, uuid);
			if (!set) {
				set = json_object();
				json_object_set_new(per_gpu, uuid, set);
			}
			json_object_set_new(set, key, json_true());
			free(key);
			free(uuid);
		}
		json_decref(dev);
	}
	json_object_foreach (per_gpu, k, set)
		if ((long long)json_object_size(set) > nv->replicas) {
			char *who = json_dumps(set, JSON_COMPACT | JSON_SORT_KEYS);
			violate(out, INV_REPLICAS, false,
				"GPU %s of node %s is shared by %zu pods, %d replicas configured: "
				"%s",
				k, name, json_object_size(set), nv->replicas, who);
			free(who);
		}
out:
	json_decref(per_gpu);
}

static void check_books(const struct snapshot *s, const json_t *nodes_by_name,
			struct violations *out)
{
	json_t *used = json_object(), *alloc = json_object(), *p, *v;
	const char *k;
	size_t i;

	if (!s->metrics) {
		violate(out, INV_BOOKS, true, "the controller's /metrics does not answer");
		goto done;
	}
	json_object_foreach ((json_t *)nodes_by_name, k, v) {
		const char *r;
		json_t *q;
		json_object_foreach ((json_t *)kobj_map(v, "status.allocatable"), r, q)
			if (!strncmp(r, "nvidia.com/", 11))
				json_object_set_new(
					alloc, r,
					json_integer(count_of(json_object_get(alloc, r)) +
						     count_of(q)));
	}
	json_array_foreach (s->pods, i, p) {
		const char *node = kobj_text(p, "spec.nodeName");
		/* A pod being deleted holds its devices until it is gone (the kubelet's active
		 * pods). */
		if (!*node || !json_object_get(nodes_by_name, node) || !admitted(p) || ended(p))
			continue;
		pod_nvidia(p, used);
	}
	/* Every resource either side names. */
	json_t *names = json_object();
	json_object_foreach (used, k, v)
		json_object_set_new(names, k, json_true());
	json_object_foreach (alloc, k, v)
		json_object_set_new(names, k, json_true());
	json_object_foreach ((json_t *)s->metrics, k, v)
		if (!strncmp(k, "gpushare_slots{resource=\"", 25)) {
			const char *e = strchr(k + 25, '"');
			char *r = gs_xstrndup(k + 25, e ? (size_t)(e - (k + 25)) : 0);
			json_object_set_new(names, r, json_true());
			free(r);
		}
	json_object_foreach (names, k, v) {
		char *ku = gs_xasprintf("gpushare_slots{resource=\"%s\",state=\"used\"}", k);
		char *kf = gs_xasprintf("gpushare_slots{resource=\"%s\",state=\"free\"}", k);
		long long u = count_of(json_object_get(used, k));
		long long a = count_of(json_object_get(alloc, k));
		long long f = a > u ? a - u : 0;
		json_t *mu = json_object_get(s->metrics, ku), *mf = json_object_get(s->metrics, kf);
		if ((mu || u) && count_of(mu) != u)
			violate(out, INV_BOOKS, true,
				"%s: the controller counts %lld used, the admitted pods hold %lld",
				k, count_of(mu), u);
		if ((mf || f) && count_of(mf) != f)
			violate(out, INV_BOOKS, true,
				"%s: the controller counts %lld free, the nodes' allocatable %lld "
				"less "
				"%lld used gives %lld",
				k, count_of(mf), a, u, f);
		free(ku);
		free(kf);
	}
	json_decref(names);
done:
	json_decref(used);
	json_decref(alloc);
}

static void check_quotas(const struct snapshot *s, struct violations *out)
{
	json_t *mine = json_array(), *q, *p, *lists = NULL, *list, *item;
	struct explain_quota_sum *sum;
	struct gs_error err;
	const char *ns;
	size_t i, j;

	json_array_foreach (s->quotas, i, q)
		if (soak_pod(q)) {
			json_t *c = json_deep_copy(q);
			json_object_del(c, "status");
			json_array_append_new(mine, c);
		}
	sum = explain_quota_sum_new(mine, NULL);
	json_array_foreach (s->pods, i, p)
		if (soak_pod(p) && explain_quota_sum_add(sum, p, &err) < 0) {
			violate(out, INV_QUOTA, false, "%s", err.msg);
			goto done;
		}
	if (explain_quota_sum_lists(sum, &lists, &err) < 0) {
		violate(out, INV_QUOTA, false, "%s", err.msg);
		goto done;
	}
	json_object_foreach (lists, ns, list) {
		json_array_foreach (json_object_get(list, "items"), i, item) {
			const json_t *real = NULL;
			json_array_foreach (s->quotas, j, q)
				if (!strcmp(kobj_text(q, "metadata.namespace"), ns) &&
				    !strcmp(kobj_name(q), kobj_name(item)))
					real = q;
			const char *r;
			json_t *hv;
			json_object_foreach ((json_t *)kobj_map(item, "spec.hard"), r, hv) {
				const char *want = json_string_value(
					json_object_get(kobj_map(item, "status.used"), r));
				const char *got = json_string_value(
					json_object_get(kobj_map(real, "status.used"), r));
				struct quantity a, b;
				if (!want)
					want = "0";
				if (!got || quantity_parse(&a, want, strlen(want), &err) < 0 ||
				    quantity_parse(&b, got, strlen(got), &err) < 0 ||
				    quantity_cmp(&a, &b))
					violate(out, INV_QUOTA, true,
						"quota %s/%s %s: the apiserver counts %s used, the "
						"pods "
						"give %s",
						ns, kobj_name(item), r, got ? got : "(nothing yet)",
						want);
			}
		}
	}
done:
	json_decref(lists);
	explain_quota_sum_free(sum);
	json_decref(mine);
}

static void check_walks(const struct snapshot *s, const struct soak_cluster *cl,
			const json_t *nodes_by_name, struct violations *out)
{
	const char *name;
	json_t *n;
	double restart_wall = cl->restarted_at > 0 ? s->wall - (s->at - cl->restarted_at) : 0;

	json_object_foreach ((json_t *)nodes_by_name, name, n) {
		const char *state = kobj_label(n, "nvidia.com/mig.config.state");
		const char *fault = kobj_annotation(n, NODEHW_ANN_MIG_FAULT);
		const char *secs = kobj_annotation(n, NODEHW_ANN_MIG_SECONDS);
		const char *rec = kobj_annotation(n, NODEHW_ANN_MIG_RECORD);
		json_t *doc;
		long long since;
		double from, limit;

		if (!state || strcmp(state, "pending") || (fault && !strcmp(fault, "stall")))
			continue;
		doc = rec ? json_loads(rec, 0, NULL) : NULL;
		since = migwalk_parse_time(json_string_value(json_object_get(doc, "since")));
		json_decref(doc);
		if (since < 0) {
			violate(out, INV_MIG_STUCK, true,
				"node %s is pending with no readable walk record: %s", name,
				rec ? rec : "(none)");
			continue;
		}
		from = (double)since > restart_wall ? (double)since : restart_wall;
		limit = (secs ? atof(secs) : MIGWALK_DEFAULT_SECONDS) + WALK_SLACK_S;
		if (s->wall - from > limit)
			violate(out, INV_MIG_STUCK, false,
				"node %s pending toward %s for %.0f s (walk %s s, no stall "
				"declared): "
				"%s",
				name, kobj_label(n, NODEHW_LABEL_MIG_CONFIG),
				s->wall - (double)since, secs ? secs : "5", rec);
	}
}

void checker_run(struct checker *ck, const struct snapshot *s, const struct soak_cluster *cl,
		 struct violations *out)
{
	json_t *nodes = json_object(), *views = json_object(), *held = json_object();
	json_t *seen = json_object(), *n, *p;
	const char *name;
	size_t i;

	check_config(ck, s->configmap, out);
	json_array_foreach (s->nodes, i, n)
		if (managed(n))
			json_object_set(nodes, kobj_name(n), n);

	/* Pods: what each holds, and whether it was decided. */
	json_array_foreach (s->pods, i, p) {
		const char *node = kobj_text(p, "spec.nodeName");
		const char *uid = kobj_text(p, "metadata.uid");
		const json_t *nobj = json_object_get(nodes, node);
		json_t *tr = json_object_get(ck->track, uid);
		char *key;

		if (!*node || !nobj || dra_node(nobj))
			continue;
		if (!tr) {
			tr = json_pack("{s:f,s:b}", "seen", s->at, "ok", 0);
			json_object_set_new(ck->track, uid, tr);
		}
		json_object_set(seen, uid, tr);
		key = pod_key(p);
		if (!strcmp(kobj_text(p, "status.phase"), "Running") && !admitted(p))
			violate(out, INV_REFUSED, false,
				"pod %s is Running on %s without the controller's admission", key,
				node);
		if (!admitted(p) && !ended(p) && !kobj_string(p, "metadata.deletionTimestamp")) {
			double since = json_real_value(json_object_get(tr, "seen"));
			if (cl->restarted_at > since)
				since = cl->restarted_at;
			if (s->at - since > UNDECIDED_S)
				violate(out, INV_ADMISSION_STUCK, false,
					"pod %s bound to %s for %.0f s, neither admitted nor "
					"failed",
					key, node, s->at - since);
		}
		if (ledger_pod_active(p)) {
			struct gs_error err;
			const char *text = kobj_annotation(p, LEDGER_ANN_DEVICES);
			json_t *dev = text ? ledger_annotation_parse(text, &err) : NULL;
			json_t *want = json_object(), *ids, *id, *v;
			const char *r;
			size_t j;

			pod_nvidia(p, want);
			if (!dev && json_object_size(want)) {
				char *asked = json_dumps(want, JSON_COMPACT | JSON_SORT_KEYS);
				violate(out, INV_REFUSED, false,
					"pod %s is admitted on %s asking for %s with no readable "
					"device record (%s)",
					key, node, asked, text ? text : "none");
				free(asked);
			}
			json_object_foreach (want, r, v)
				if (dev && (long long)json_array_size(json_object_get(dev, r)) !=
						   count_of(v))
					violate(out, INV_REFUSED, false,
						"pod %s on %s asks for %lld %s and holds %zu: %s",
						key, node, count_of(v), r,
						json_array_size(json_object_get(dev, r)), text);
			json_object_foreach (dev, r, ids) {
				if (!json_object_get(want, r) && json_array_size(ids))
					violate(out, INV_REFUSED, false,
						"pod %s on %s holds %s it did not ask for: %s", key,
						node, r, text);
				json_array_foreach (ids, j, id) {
					char *hk =
						gs_xasprintf("%s|%s", node, json_string_value(id));
					const char *other =
						json_string_value(json_object_get(held, hk));
					if (other)
						violate(out, INV_HELD_TWICE, false,
							"device %s of node %s is held by %s and by "
							"%s",
							json_string_value(id), node, other, key);
					else
						json_object_set_new(held, hk, json_string(key));
					free(hk);
				}
			}
			if (dev) {
				json_t *view = json_object_get(views, node);
				if (!view) {
					view = json_array();
					json_object_set_new(views, node, view);
				}
				json_array_append(view, p);
			}
			json_decref(dev);
			json_decref(want);
		}
		free(key);
	}

	/* Nodes: replicas per GPU, and every pod first seen holding devices. */
	json_object_foreach (nodes, name, n) {
		struct node_view nv = {n, json_object_get(views, name), NULL, 0};
		json_t *empty = json_array();
		const char *rec = kobj_annotation(n, NODEHW_ANN_MIG_RECORD);
		json_t *doc = rec ? json_loads(rec, 0, NULL) : NULL;
		long long paused =
			migwalk_parse_time(json_string_value(json_object_get(doc, "pausedAt")));

		json_decref(doc);
		if (dra_node(n)) {
			json_decref(empty);
			continue;
		}
		if (!nv.holders)
			nv.holders = empty;
		if (!ck->cm_bad)
			nv.replicas = configured_replicas(ck, n, &nv.cfg);
		check_replicas(&nv, out);
		json_array_foreach (nv.holders, i, p) {
			json_t *tr = json_object_get(ck->track, kobj_text(p, "metadata.uid"));
			json_t *dev;
			if (!tr || json_is_true(json_object_get(tr, "ok")) || !soak_pod(p))
				continue;
			/*
			 * mig-manager has the plugin down: a real node admits no
			 * device then. One admitted before the pause (to the second)
			 * is not this walk's business.
			 */
			if (paused > 0) {
				long long at = admitted_at(p);
				char *key = pod_key(p);
				if (at > paused)
					violate(out, INV_REFUSED, false,
						"pod %s admitted on %s at %lld, after mig-manager "
						"paused the device plugin at %lld: %s",
						key, name, at, paused,
						kobj_annotation(p, LEDGER_ANN_DEVICES));
				else
					json_object_set_new(tr, "ok", json_true());
				free(key);
				continue;
			}
			dev = ledger_annotation_parse(kobj_annotation(p, LEDGER_ANN_DEVICES), NULL);
			if (check_new_pod_either(ck, n, p, nv.holders, dev, out))
				json_object_set_new(tr, "ok", json_true());
			json_decref(dev);
		}
		json_decref(empty);
	}
	/* Forget pods that are gone. */
	json_object_clear(ck->track);
	json_object_update(ck->track, seen);

	check_books(s, nodes, out);
	check_quotas(s, out);
	check_walks(s, cl, nodes, out);
	json_decref(seen);
	json_decref(held);
	json_decref(views);
	json_decref(ck->prev_nodes);
	ck->prev_nodes = nodes;
}
