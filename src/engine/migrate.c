/*
 * The move from the device plugin to the DRA driver, rehearsed
 * (docs/guide/migrate.md). The fleet is advertised twice: as it is (each
 * node's config says whether a pod got a replica) and with the moving
 * pools labelled gpushare.io/path=dra (what each node publishes after).
 * Each workload's GPU requests are then judged on the mixed fleet, and the
 * claims a workload needs come from dra translate's engine.
 */
#include "engine/migrate.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/wrapper.h"
#include "dra/draslice.h"
#include "dra/dratranslate.h"
#include "engine/explain.h"
#include "engine/explain_offline.h"
#include "engine/pools.h"
#include "model/dpconfig.h"
#include "model/kobj.h"
#include "model/kubeversion.h"
#include "model/names.h"
#include "model/quantity.h"
#include "base/banned.h"

#define CLASS_GPU "gpu.nvidia.com"
#define CLASS_MIG "mig.nvidia.com"
#define PER_CLASS ".deviceclass.resource.k8s.io/devices"
#define IMPLICIT "requests.deviceclass.resource.kubernetes.io/"
#define ALL_DEVICES 32 /* resourceapi.AllocationResultsMaxSize: quota's worst case for All */

const char *migrate_verdict_name(enum migrate_verdict v)
{
	switch (v) {
	case MIGRATE_UNCHANGED:
		return "unchanged";
	case MIGRATE_NEEDS_CLAIM:
		return "needs-claim";
	case MIGRATE_BREAKS:
		return "breaks";
	}
	return "?";
}

/* One GPU node, before and after the move. */
struct mnode {
	const char *name;
	const json_t *before, *after;	 /* advertised */
	const struct sync_node *sb, *sa; /* their sync reports */
	char *pool;
	bool dra;			    /* on the DRA path after */
	long gpus;			    /* after, DRA: full GPU devices */
	json_t *mig;			    /* after, DRA: profile -> devices */
	json_t *alloc_before, *alloc_after; /* nvidia.com/ allocatable, read once: name -> count */
};

/* What a request names, as the device plugin served it before. */
enum ask_kind {
	ASK_WHOLE,  /* nvidia.com/gpu, whole GPUs */
	ASK_SHARED, /* a time-slicing or MPS replica */
	ASK_MIG,    /* a MIG device (profile, or any on migStrategy single) */
	ASK_OTHER,
};

struct run {
	const struct migrate_input *in;
	struct migrate_result *r;
	bool claims_charge_extended; /* resource_claims.go addExtendedResourceQuota (1.35+, gate) */
	struct explain_fleet before, after;
	struct mnode *nodes;
	size_t n_nodes;
	struct dratranslate *tr;
	json_t *made;	    /* "ns/Kind/name" -> object written for some workload */
	json_t *charged;    /* "ns/name" of shared claims already charged */
	json_t *selections; /* selection key -> index into sels */
	bool **sels;
	size_t n_sels;
	json_t *charges; /* [{"ns", "workload", "before": {key: n}, "after": {key: [n, maybe]}}] */
};

/* ---- versions ---- */

/*
 * DRAExtendedResource in the release, in words: its stage, then whether the
 * gate is as the release has it ("on by default") or set apart ("turned
 * off"); a locked gate cannot be set apart ("GA, locked on").
 */
static char *gate_words(const struct kubeversion *kv, bool on)
{
	const char *state;

	if (kv->dra_extended_resource_locked)
		state = on ? "locked on" : "locked off";
	else if (on == kv->dra_extended_resource)
		state = on ? "on by default" : "off by default";
	else
		state = on ? "turned on" : "turned off";
	return gs_xasprintf("%s, %s", kubegate_stage_name(kv->dra_extended_resource_stage), state);
}

/* The release and its DRAExtendedResource (model/kubeversion.h). */
static int parse_version(struct run *x, struct gs_error *err)
{
	const struct kubeversion *kv = x->in->kube ? x->in->kube : kubeversion_newest();
	struct kubegates def;
	bool on;

	kubegates_defaults(&def, kv);
	on = x->in->gates ? x->in->gates->dra_extended_resource : def.dra_extended_resource;
	/* GA in 1.37, LockToDefault (pkg/features/kube_features.go). */
	if (x->in->gates && kubegates_check(x->in->gates, kv, err) < 0)
		return -1;
	x->r->kubernetes_version = gs_xstrdup(kv->version);
	x->r->extended_resource = on;
	x->r->gate = gate_words(kv, on);
	/* resource_claims.go addExtendedResourceQuota: v1.35.4 on, with the gate */
	x->claims_charge_extended = on && kv->claims_charge_extended_resource;
	return 0;
}

/* ---- small readers ---- */

static long long qty(const json_t *v)
{
	struct quantity q;
	struct gs_error e;
	int64_t n;

	if (!v || quantity_from_json(&q, v, &e) || quantity_value(&q, &n))
		return 0;
	return (long long)n;
}

/* The node's nvidia.com/ allocatable as name -> count (a new object). */
static json_t *gpu_allocatable(const json_t *node)
{
	json_t *out = json_object();
	const char *k;
	json_t *v;

	json_object_foreach ((json_t *)kobj_map(node, "status.allocatable"), k, v)
		if (!strncmp(k, "nvidia.com/", 11))
			json_object_set_new(out, k, json_integer(qty(v)));
	return out;
}

static long long allocatable(const json_t *alloc, const char *res)
{
	return json_integer_value(json_object_get(alloc, res));
}

/* The scheduler's filters other than resources: selector, affinity, taints, unschedulable. */
static bool selects(const json_t *spec, const json_t *node)
{
	char *why = explain_selector_mismatch(spec, node);
	bool selected = !why;
	const json_t *t;
	size_t i;

	free(why);
	if (!selected || json_is_true(kobj_get(node, "spec.unschedulable")))
		return false;
	json_array_foreach (kobj_get(node, "spec.taints"), i, t) {
		const char *eff = kobj_text(t, "effect");
		if ((!strcmp(eff, "NoSchedule") || !strcmp(eff, "NoExecute")) &&
		    !explain_tolerates(json_object_get(spec, "tolerations"), t))
			return false;
	}
	return true;
}

static bool ends_with(const char *s, const char *suffix)
{
	size_t n = strlen(s), m = strlen(suffix);
	return n >= m && !strcmp(s + n - m, suffix);
}

/* The config a sync report chose for a node, or NULL. */
static const struct dpconfig *config_of(const struct run *x, const struct sync_node *sn)
{
	long i;

	if (!x->in->set || !sn || !sn->config)
		return NULL;
	i = dpconfig_set_find(x->in->set, sn->config);
	return i < 0 ? NULL : dpconfig_set_get(x->in->set, (size_t)i, NULL);
}

/* Whether config c hands out `res` as replicas (time-slicing or MPS). */
static bool config_shares(const struct dpconfig *c, const char *res)
{
	const struct dp_sharing *sh;

	if (!c || dpconfig_sharing_strategy(c) == DP_SHARING_NONE)
		return false;
	sh = dpconfig_replicated(c);
	for (size_t i = 0; i < sh->n_resources; i++)
		if (!strcmp(sh->resources[i].name, res) ||
		    (sh->resources[i].rename && !strcmp(sh->resources[i].rename, res)))
			return true;
	return false;
}

/* metadata.namespace, else "default" (as the apiserver gives it). */
static const char *ns_of(const json_t *obj)
{
	const char *ns = kobj_text(obj, "metadata.namespace");
	return *ns ? ns : "default";
}

/* ---- pools ---- */

static void read_devices(struct mnode *n)
{
	const json_t *slice, *dev;
	size_t i, j;

	n->mig = json_object();
	json_array_foreach (n->sa->pool, i, slice)
		json_array_foreach (kobj_get(slice, "spec.devices"), j, dev) {
			const json_t *attrs = json_object_get(dev, "attributes");
			const char *type = kobj_text(attrs, "type.string");
			const char *profile = kobj_text(attrs, "profile.string");
			if (!strcmp(type, "gpu")) {
				n->gpus++;
			} else if (!strcmp(type, "mig") && *profile) {
				json_t *c = json_object_get(n->mig, profile);
				json_object_set_new(
					n->mig, profile,
					json_integer(c ? json_integer_value(c) + 1 : 1));
			}
		}
}

static struct migrate_pool *pool_named(struct migrate_result *r, const char *name)
{
	for (size_t i = 0; i < r->n_pools; i++)
		if (!strcmp(r->pools[i].name, name))
			return &r->pools[i];
	return NULL;
}

static json_t *index_report(const struct sync_report *rep)
{
	json_t *ix = json_object();
	for (size_t i = 0; i < rep->n; i++)
		json_object_set_new(ix, rep->nodes[i].name, json_integer((json_int_t)i));
	return ix;
}

/* The pools, which move, and both advertisements. */
static int build_fleet(struct run *x, struct gs_error *err)
{
	const json_t *node;
	json_t *moved = json_array(), *ixb = NULL, *ixa = NULL;
	size_t i;
	int rc = -1;

	if (explain_fleet_advertise(x->in->nodes, NULL, x->in->configmap, &x->before, err) < 0)
		goto out;
	/* pools first, to check --pool */
	ixb = index_report(&x->before.plan);
	json_array_foreach (x->in->nodes, i, node) {
		char *pool = pools_name_of(node);
		json_t *at = json_object_get(ixb, kobj_text(node, "metadata.name"));
		bool gpu =
			at && x->before.plan.nodes[json_integer_value(at)].outcome != SYNC_SKIPPED;
		if (gpu && !pool_named(x->r, pool)) {
			x->r->pools = gs_xrealloc(x->r->pools,
						  (x->r->n_pools + 1) * sizeof(*x->r->pools));
			struct migrate_pool *p = &x->r->pools[x->r->n_pools++];
			memset(p, 0, sizeof(*p));
			p->name = gs_xstrdup(pool);
			p->nodes = json_array();
		}
		free(pool);
	}
	if (x->in->pool && !pool_named(x->r, x->in->pool)) {
		struct strbuf sb = STRBUF_INIT;
		for (i = 0; i < x->r->n_pools; i++)
			strbuf_addf(&sb, "%s'%s'", i ? ", " : "", x->r->pools[i].name);
		gs_error_set(err, "--pool: no pool '%s' in the fleet (the pools: %s)", x->in->pool,
			     sb.len ? sb.buf : "none: no node declares GPUs");
		strbuf_release(&sb);
		goto out;
	}
	json_array_foreach (x->in->nodes, i, node) {
		char *pool = pools_name_of(node);
		bool moves = pool_named(x->r, pool) && (!x->in->pool || !strcmp(pool, x->in->pool));
		json_t *copy = json_deep_copy(node);
		if (moves) {
			json_t *meta = json_object_get(copy, "metadata");
			json_t *labels = json_object_get(meta, "labels");
			if (!json_is_object(labels)) {
				labels = json_object();
				json_object_set_new(meta, "labels", labels);
			}
			json_object_set_new(labels, DRASLICE_LABEL_PATH,
					    json_string(DRASLICE_PATH_DRA));
		}
		json_array_append_new(moved, copy);
		free(pool);
	}
	if (explain_fleet_advertise(moved, NULL, x->in->configmap, &x->after, err) < 0)
		goto out;
	ixa = index_report(&x->after.plan);
	const json_t *bitems = json_object_get(x->before.nodes, "items");
	const json_t *aitems = json_object_get(x->after.nodes, "items");
	x->nodes = gs_xcalloc(json_array_size(aitems) + 1, sizeof(*x->nodes));
	json_array_foreach (aitems, i, node) {
		const char *name = kobj_text(node, "metadata.name");
		json_t *atb = json_object_get(ixb, name), *ata = json_object_get(ixa, name);
		if (!atb || !ata)
			continue;
		const struct sync_node *sb = &x->before.plan.nodes[json_integer_value(atb)];
		const struct sync_node *sa = &x->after.plan.nodes[json_integer_value(ata)];
		if (sb->outcome == SYNC_SKIPPED)
			continue;
		struct mnode *n = &x->nodes[x->n_nodes++];
		n->name = name;
		n->before = json_array_get(bitems, i);
		n->after = node;
		n->sb = sb;
		n->sa = sa;
		n->pool = pools_name_of(n->before);
		n->alloc_before = gpu_allocatable(n->before);
		n->alloc_after = gpu_allocatable(n->after);
		n->dra = sa->dra;
		struct migrate_pool *p = pool_named(x->r, n->pool);
		json_t *o = json_pack("{s:s}", "name", name);
		if (n->dra) {
			read_devices(n);
			p->dra = true;
			json_object_set_new(o, "gpus", json_integer(n->gpus));
			json_object_set(o, "mig", n->mig);
		} else {
			json_object_set_new(o, "resources",
					    sa->resources ? json_incref(sa->resources)
							  : json_object());
		}
		if (sa->outcome == SYNC_FAILED) {
			json_object_set_new(o, "refused",
					    json_string(sa->message ? sa->message : ""));
			gs_warnings_add(
				&x->r->notes,
				"node %s: refused by the %s after the move (%s); it publishes "
				"nothing",
				name, n->dra ? "DRA driver" : "device plugin",
				sa->message ? sa->message : "");
		}
		p->n_nodes++;
		json_array_append_new(p->nodes, o);
	}
	rc = 0;
out:
	json_decref(moved);
	json_decref(ixb);
	json_decref(ixa);
	return rc;
}

/* ---- workloads ---- */

static const char *spec_path(const char *kind)
{
	if (!strcmp(kind, "Pod"))
		return "spec";
	if (!strcmp(kind, "CronJob"))
		return "spec.jobTemplate.spec.template.spec";
	if (!strcmp(kind, "Deployment") || !strcmp(kind, "ReplicaSet") ||
	    !strcmp(kind, "StatefulSet") || !strcmp(kind, "DaemonSet") || !strcmp(kind, "Job") ||
	    !strcmp(kind, "ReplicationController"))
		return "spec.template.spec";
	return NULL;
}

/* A Pod a workload of the fleet made (its controller named): judged through its template. */
static bool made_by_workload(const json_t *pod)
{
	const json_t *ref;
	size_t i;

	json_array_foreach (kobj_get(pod, "metadata.ownerReferences"), i, ref)
		if (json_is_true(json_object_get(ref, "controller")) &&
		    strcmp(kobj_text(ref, "kind"), "Node"))
			return true;
	return false;
}

static long pods_of(const struct run *x, const json_t *obj, const char *kind, const bool *sel)
{
	const json_t *v;

	if (!strcmp(kind, "Pod"))
		return 1;
	if (!strcmp(kind, "DaemonSet")) {
		long n = 0;
		for (size_t i = 0; i < x->n_nodes; i++)
			n += sel[i];
		return n;
	}
	if (!strcmp(kind, "Job") || !strcmp(kind, "CronJob")) {
		v = kobj_get(obj, !strcmp(kind, "Job") ? "spec.parallelism"
						       : "spec.jobTemplate.spec.parallelism");
		return json_is_integer(v) ? (long)json_integer_value(v) : 1;
	}
	v = kobj_get(obj, "spec.replicas");
	return json_is_integer(v) ? (long)json_integer_value(v) : 1;
}

/*
 * Which nodes select pods of `spec`, before (sel[i]) and after (sel[n_nodes + i])
 * the move; pods that say the same (nodeSelector, affinity, tolerations) share
 * one answer, kept until the run ends.
 */
static const bool *selection(struct run *x, const json_t *spec)
{
	json_t *key = json_object();
	static const char *const fields[] = {"nodeSelector", "affinity", "tolerations"};
	char *text;
	const json_t *at;
	bool *sel;

	for (size_t i = 0; i < 3; i++)
		if (json_object_get(spec, fields[i]))
			json_object_set(key, fields[i], json_object_get(spec, fields[i]));
	text = json_dumps(key, JSON_COMPACT | JSON_SORT_KEYS);
	json_decref(key);
	at = json_object_get(x->selections, text ? text : "");
	if (at) {
		free(text);
		return x->sels[json_integer_value(at)];
	}
	sel = gs_xcalloc(2 * x->n_nodes + 1, sizeof(*sel));
	for (size_t i = 0; i < x->n_nodes; i++) {
		sel[i] = selects(spec, x->nodes[i].before);
		sel[x->n_nodes + i] = selects(spec, x->nodes[i].after);
	}
	x->sels = gs_xrealloc(x->sels, (x->n_sels + 1) * sizeof(*x->sels));
	x->sels[x->n_sels] = sel;
	json_object_set_new(x->selections, text ? text : "", json_integer((json_int_t)x->n_sels++));
	free(text);
	return sel;
}

/* How the device plugin served `res` to a pod of this spec before the move. */
static enum ask_kind ask_kind(const struct run *x, const bool *sel, const char *res,
			      const char **config, const char **profile)
{
	size_t cand = 0, shared = 0, single = 0;

	*config = NULL;
	*profile = NULL;
	if (!strncmp(res, "nvidia.com/mig-", 15) && !ends_with(res, ".shared")) {
		*profile = res + 15;
		return ASK_MIG;
	}
	if (ends_with(res, ".shared"))
		return ASK_SHARED;
	for (size_t i = 0; i < x->n_nodes; i++) {
		const struct mnode *n = &x->nodes[i];
		const struct dpconfig *c;
		if (!sel[i] || allocatable(n->alloc_before, res) <= 0)
			continue;
		cand++;
		c = config_of(x, n->sb);
		if (config_shares(c, res)) {
			shared++;
			*config = n->sb->config;
		}
		if (c && c->mig_strategy && !strcmp(c->mig_strategy, "single") &&
		    !strcmp(res, "nvidia.com/gpu"))
			single++;
	}
	if (cand && shared == cand)
		return ASK_SHARED;
	if (cand && single == cand)
		return ASK_MIG;
	if (!strcmp(res, "nvidia.com/gpu"))
		return ASK_WHOLE;
	/* a renamed replica (rename: or renameByDefault) the nodes advertised */
	return cand ? ASK_SHARED : ASK_OTHER;
}

static void add_pool(json_t *pools, const char *pool)
{
	const json_t *p;
	size_t i;

	json_array_foreach (pools, i, p)
		if (!strcmp(json_string_value(p), pool))
			return;
	json_array_append_new(pools, json_string(pool));
}

static char *pool_list(const json_t *pools)
{
	struct strbuf sb = STRBUF_INIT;
	const json_t *p;
	size_t i;

	json_array_foreach (pools, i, p)
		strbuf_addf(&sb, "%s%s", i ? ", " : "", json_string_value(p));
	return strbuf_detach(&sb, NULL);
}

/* Charge `n` to `key` (taken) in an "after" map: key -> [certain, maybe]. */
static void charge(json_t *after, char *key, long long n, bool maybe)
{
	json_t *v = json_object_get(after, key);
	size_t at = maybe ? 1 : 0;

	if (!v) {
		v = json_pack("[i,i]", 0, 0);
		json_object_set_new(after, key, v);
	}
	json_array_set_new(v, at, json_integer(json_integer_value(json_array_get(v, at)) + n));
	free(key);
}

/*
 * One request judged on the mixed fleet: a new {"resource", ...}. sel[i]:
 * node i selects the pods before the move, sel[n_nodes + i] after.
 */
static json_t *judge(struct run *x, const bool *sel, const char *res, long long count, long pods,
		     json_t *after, enum migrate_verdict *verdict)
{
	const char *config, *profile;
	enum ask_kind kind = ask_kind(x, sel, res, &config, &profile);
	json_t *dp = json_array(), *dra = json_array();
	bool fit_before = false;
	const char *route = "none";
	char *why = NULL;

	for (size_t i = 0; i < x->n_nodes; i++) {
		const struct mnode *n = &x->nodes[i];
		if (sel[i] && allocatable(n->alloc_before, res) >= count)
			fit_before = true;
		if (!sel[x->n_nodes + i])
			continue;
		if (!n->dra) {
			if (allocatable(n->alloc_after, res) >= count)
				add_pool(dp, n->pool);
			continue;
		}
		long have = 0;
		if (kind == ASK_WHOLE)
			have = n->gpus;
		else if (kind == ASK_SHARED && (!strncmp(res, "nvidia.com/gpu", 14)))
			have = n->gpus ? count : 0; /* one shared device, or whole ones */
		else if (kind == ASK_MIG && profile)
			have = (long)json_integer_value(json_object_get(n->mig, profile));
		else if (kind == ASK_MIG) {
			const char *k;
			json_t *v;
			json_object_foreach (n->mig, k, v)
				have += (long)json_integer_value(v);
		}
		if (have >= count)
			add_pool(dra, n->pool);
	}
	char *dps = pool_list(dp), *dras = pool_list(dra);
	const char *nor = fit_before ? "" : " (nor before the move)";
	long long total = count * pods;

	if (json_array_size(dp) &&
	    (kind != ASK_WHOLE || !x->r->extended_resource || !json_array_size(dra))) {
		*verdict = MIGRATE_UNCHANGED;
		route = "device-plugin";
		why = gs_xasprintf("keeps the device plugin on pool %s", dps);
		charge(after, gs_xasprintf("requests.%s", res), total, false);
	} else if (kind == ASK_WHOLE && json_array_size(dra) && x->r->extended_resource) {
		*verdict = MIGRATE_UNCHANGED;
		route = json_array_size(dp) ? "either" : "extended-resource";
		why = gs_xasprintf(
			"%s%s%son pool %s through DeviceClass %s's extendedResourceName: the "
			"scheduler writes a ResourceClaim for each pod (annotation "
			"resource.kubernetes.io/extended-resource-claim, owned by the pod)",
			json_array_size(dp) ? "keeps the device plugin on pool " : "",
			json_array_size(dp) ? dps : "", json_array_size(dp) ? ", and " : "", dras,
			CLASS_GPU);
		bool maybe = json_array_size(dp) > 0;
		charge(after, gs_xasprintf("requests.%s", res), total, false);
		charge(after, gs_xstrdup(CLASS_GPU PER_CLASS), total, maybe);
		if (x->claims_charge_extended)
			charge(after, gs_xstrdup(IMPLICIT CLASS_GPU), total, maybe);
	} else if (kind == ASK_WHOLE && json_array_size(dra)) {
		*verdict = MIGRATE_BREAKS;
		why = gs_xasprintf(
			"only DRA pool %s is left for it, and on %s DRAExtendedResource is %s: no "
			"DeviceClass maps %s (the apiserver drops extendedResourceName), so the "
			"pods stay Pending; turn the gate on, or write the claims below",
			dras, x->r->kubernetes_version, x->r->gate, res);
		charge(after, gs_xasprintf("requests.%s", res), total, false);
	} else if (kind != ASK_OTHER && kind != ASK_WHOLE && json_array_size(dra)) {
		*verdict = MIGRATE_NEEDS_CLAIM;
		route = "claim";
		if (kind == ASK_SHARED)
			why = gs_xasprintf(
				"was a %s replica%s%s%s; DRA has no replicas, and %s: share one "
				"with the ResourceClaim below (pool %s)",
				config ? "time-slicing or MPS" : "shared",
				config ? " (config \"" : "", config ? config : "",
				config ? "\")" : "",
				x->r->extended_resource ? "nvidia.com/gpu through gpu.nvidia.com "
							  "would give each pod "
							  "a whole GPU"
							: "with DRAExtendedResource off no "
							  "DeviceClass maps its name",
				dras);
		else
			why = gs_xasprintf(
				"no DeviceClass maps it (%s has no extendedResourceName): "
				"ask a MIG device%s%s with the claim below (pool %s)",
				CLASS_MIG, profile ? " of profile " : "", profile ? profile : "",
				dras);
	} else {
		*verdict = MIGRATE_BREAKS;
		if (kind == ASK_MIG || kind == ASK_SHARED || kind == ASK_WHOLE)
			why = gs_xasprintf("no device-plugin pool advertises %lld and no DRA node "
					   "that selects the pods publishes %lld %s%s%s",
					   count, count,
					   kind == ASK_MIG ? "MIG device(s)" : "GPU(s)",
					   profile ? " of profile " : "", profile ? profile : "");
		else
			why = gs_xasprintf("no DeviceClass maps %s and no device-plugin pool "
					   "advertises it",
					   res);
		char *tmp = why;
		why = gs_xasprintf("%s%s", tmp, nor);
		free(tmp);
		charge(after, gs_xasprintf("requests.%s", res), total, false);
	}
	json_t *o = json_pack("{s:s,s:I,s:s,s:s,s:o,s:s}", "resource", res, "count",
			      (json_int_t)count, "verdict", migrate_verdict_name(*verdict), "route",
			      route, "pools", json_array_size(dp) ? dp : dra, "why", why);
	json_decref(json_array_size(dp) ? dra : dp);
	free(dps);
	free(dras);
	free(why);
	return o;
}

/* The claims a rewritten pod spec names, charged as the claim evaluator does. */
static void charge_claims(struct run *x, const char *ns, const json_t *spec, long pods,
			  json_t *after, json_t *names)
{
	const json_t *rc;
	size_t i;

	json_array_foreach (json_object_get(spec, "resourceClaims"), i, rc) {
		const char *tmpl = kobj_text(rc, "resourceClaimTemplateName");
		const char *claim = kobj_text(rc, "resourceClaimName");
		char *key = gs_xasprintf("%s/%s/%s", ns,
					 *tmpl ? "ResourceClaimTemplate" : "ResourceClaim",
					 *tmpl ? tmpl : claim);
		const json_t *obj = json_object_get(x->made, key);
		const json_t *reqs = kobj_get(obj, *tmpl ? "spec.spec.devices.requests"
							 : "spec.devices.requests");
		long times = pods;
		json_array_append_new(names, json_string(*tmpl ? tmpl : claim));
		if (!*tmpl) {
			char *ck = gs_xasprintf("%s/%s", ns, claim);
			times = json_object_get(x->charged, ck) ? 0 : 1;
			json_object_set_new(x->charged, ck, json_true());
			free(ck);
		}
		const json_t *req;
		size_t j;
		json_array_foreach (reqs, j, req) {
			const json_t *ex = json_object_get(req, "exactly");
			const char *class = kobj_text(ex, "deviceClassName");
			const json_t *c = json_object_get(ex, "count");
			long long n = !strcmp(kobj_text(ex, "allocationMode"), "All") ? ALL_DEVICES
				      : json_is_integer(c) ? json_integer_value(c)
							   : 1;
			charge(after, gs_xasprintf("%s" PER_CLASS, class), n * times, false);
			if (x->claims_charge_extended && !strcmp(class, CLASS_GPU)) {
				charge(after, gs_xstrdup("requests.nvidia.com/gpu"), n * times,
				       false);
				charge(after, gs_xstrdup(IMPLICIT CLASS_GPU), n * times, false);
			}
		}
		free(key);
	}
}

/* The claims dra translate writes for obj: into w->objects, w->rewritten. */
static int translate(struct run *x, const struct migrate_object *mo, struct migrate_workload *w,
		     struct gs_error *err)
{
	size_t first = dratranslate_count(x->tr);

	if (dratranslate_object(x->tr, mo->stream, (json_t *)mo->obj, err) < 0)
		return -1;
	for (size_t i = first; i < dratranslate_count(x->tr); i++) {
		const struct dratranslate_item *it = dratranslate_item(x->tr, i);
		const json_t *o;
		size_t j;
		for (j = 0; j < it->notes.n; j++)
			if (strstr(it->notes.items[j], "driver's alpha gate"))
				json_array_append_new(w->notes, json_string(it->notes.items[j]));
		json_array_foreach (it->objects, j, o) {
			const char *kind = kobj_kind(o) ? kobj_kind(o) : "";
			if (!strcmp(kind, w->kind)) {
				json_decref(w->rewritten);
				w->rewritten = json_incref((json_t *)o);
				continue;
			}
			char *key = gs_xasprintf("%s/%s/%s", kobj_text(o, "metadata.namespace"),
						 kind, kobj_name(o));
			json_object_set(x->made, key, (json_t *)o);
			free(key);
			json_array_append(w->objects, (json_t *)o);
		}
	}
	return 0;
}

static int judge_object(struct run *x, const struct migrate_object *mo, struct gs_error *err)
{
	const json_t *obj = mo->obj;
	const char *kind = kobj_kind(obj) ? kobj_kind(obj) : "";
	const char *path = spec_path(kind);
	const json_t *spec;
	json_t *pod, *req = NULL, *before, *after;
	const char *res;
	json_t *v;

	if (!path || (!strcmp(kind, "Pod") && made_by_workload(obj)))
		return 0;
	spec = kobj_map(obj, path);
	pod = json_object();
	json_object_set_new(pod, "spec", spec ? json_incref((json_t *)spec) : json_object());
	if (explain_pod_requests(pod, &req, err) < 0) {
		json_decref(pod);
		return -1;
	}
	json_decref(pod);
	bool gpu = false;
	json_object_foreach (req, res, v)
		gpu |= !strncmp(res, "nvidia.com/", 11) && qty(v) > 0;
	if (!gpu) {
		json_decref(req);
		return 0;
	}
	x->r->workloads =
		gs_xrealloc(x->r->workloads, (x->r->n_workloads + 1) * sizeof(*x->r->workloads));
	struct migrate_workload *w = &x->r->workloads[x->r->n_workloads++];
	memset(w, 0, sizeof(*w));
	struct ydoc_pos pos = {0, 0};
	ydoc_stream_pos(mo->stream, obj, &pos);
	w->kind = gs_xstrdup(kind);
	w->ns = gs_xstrdup(ns_of(obj));
	w->name = gs_xstrdup(kobj_text(obj, "metadata.name"));
	w->source =
		pos.line ? gs_xasprintf("%s:%d:%d", ydoc_stream_name(mo->stream), pos.line, pos.col)
			 : gs_xstrdup("");
	const bool *sel = selection(x, spec);
	w->pods = pods_of(x, obj, kind, sel + x->n_nodes);
	w->resources = json_array();
	w->objects = json_array();
	w->claims = json_array();
	w->notes = json_array();
	w->verdict = MIGRATE_UNCHANGED;
	before = json_object();
	after = json_object();
	json_object_foreach (req, res, v) {
		long long n = qty(v);
		enum migrate_verdict rv;
		if (strncmp(res, "nvidia.com/", 11) || n <= 0)
			continue;
		json_array_append_new(w->resources, judge(x, sel, res, n, w->pods, after, &rv));
		char *bk = gs_xasprintf("requests.%s", res);
		json_object_set_new(before, bk, json_integer(n * w->pods));
		free(bk);
		if (rv > w->verdict)
			w->verdict = rv;
	}
	json_decref(req);
	/* Claims to write: a workload that needs them, or one the gate leaves without. */
	bool fixable = w->verdict == MIGRATE_NEEDS_CLAIM;
	if (w->verdict == MIGRATE_BREAKS) {
		const json_t *r;
		size_t i;
		fixable = true;
		json_array_foreach (w->resources, i, r)
			if (!strcmp(kobj_text(r, "verdict"), "breaks") &&
			    !strcmp(kobj_text(r, "route"), "none") &&
			    !strstr(kobj_text(r, "why"), "DRAExtendedResource"))
				fixable = false;
	}
	if (fixable) {
		if (translate(x, mo, w, err) < 0) {
			json_decref(before);
			json_decref(after);
			return -1;
		}
		if (w->rewritten && w->verdict == MIGRATE_NEEDS_CLAIM) {
			json_object_clear(after);
			charge_claims(x, w->ns, kobj_map(w->rewritten, path), w->pods, after,
				      w->claims);
		}
	}
	json_array_append_new(x->charges, json_pack("{s:s,s:s,s:o,s:o}", "ns", w->ns, "workload",
						    w->name, "before", before, "after", after));
	return 0;
}

/* ---- quotas ---- */

static bool gpu_key(const char *k)
{
	return !strncmp(k, "requests.nvidia.com/", 20) || ends_with(k, PER_CLASS) ||
	       !strncmp(k, IMPLICIT, strlen(IMPLICIT));
}

static char *how(const struct run *x, const char *key)
{
	const char *v = x->r->kubernetes_version;

	if (!strcmp(key, "requests.nvidia.com/gpu")) {
		if (x->claims_charge_extended)
			return gs_xasprintf(
				"pods asking nvidia.com/gpu, at creation, on either stack "
				"(pods.go); the claim the scheduler writes for one on a DRA node "
				"adds nothing (resource_claims.go addExtendedResourceQuota "
				"subtracts "
				"the pod's own); every other claim of class %s is charged to it "
				"too, "
				"per claim, since the class names nvidia.com/gpu (%s)",
				CLASS_GPU, v);
		return gs_xasprintf("pods asking nvidia.com/gpu, at creation, on either stack "
				    "(pods.go); claims are not charged to it on %s with "
				    "DRAExtendedResource %s (resource_claims.go)",
				    v, x->r->gate);
	}
	if (!strncmp(key, "requests.nvidia.com/", 20))
		return gs_xasprintf("pods asking %s, at creation (pods.go); no DeviceClass names "
				    "it, so no claim is ever charged to it",
				    key + 9);
	if (ends_with(key, PER_CLASS))
		return gs_xasprintf(
			"claims of class %.*s at creation, per claim (exactly.count, All = %d)%s; "
			"pods on device-plugin pools never (resource_claims.go Usage)",
			(int)(strlen(key) - strlen(PER_CLASS)), key, ALL_DEVICES,
			x->r->extended_resource
				? ", the scheduler's claims for nvidia.com/gpu pods "
				  "on DRA nodes included"
				: "");
	return gs_xasprintf("claims of a class naming an extendedResourceName%s "
			    "(resource_claims.go addExtendedResourceQuota), and pods asking %s",
			    x->claims_charge_extended ? "" : " (not on this release and gate)",
			    key + 9);
}

static long long sum(const json_t *charges, const char *ns, const char *which, const char *key,
		     size_t at)
{
	const json_t *c;
	size_t i;
	long long n = 0;

	json_array_foreach (charges, i, c) {
		if (strcmp(kobj_text(c, "ns"), ns))
			continue;
		const json_t *v = json_object_get(json_object_get(c, which), key);
		n += json_is_array(v) ? json_integer_value(json_array_get(v, at))
				      : json_integer_value(v);
	}
	return n;
}

static void quota_notes(struct run *x, const char *ns, const json_t *keys)
{
	const json_t *c;
	size_t i;

	json_array_foreach (x->charges, i, c) {
		const char *k;
		json_t *v;
		bool limited_before = false;
		struct strbuf in = STRBUF_INIT, out = STRBUF_INIT;
		size_t n_in = 0;
		if (strcmp(kobj_text(c, "ns"), ns))
			continue;
		json_object_foreach (json_object_get(c, "before"), k, v)
			limited_before |= json_object_get(keys, k) != NULL;
		bool any = false;
		json_object_foreach (json_object_get(c, "after"), k, v)
			any |= json_integer_value(json_array_get(v, 0)) ||
			       json_integer_value(json_array_get(v, 1));
		if (!any && json_object_size(json_object_get(c, "after")))
			continue; /* its pods share a claim charged for an earlier workload */
		json_object_foreach (json_object_get(c, "after"), k, v) {
			if (!json_integer_value(json_array_get(v, 0)) &&
			    !json_integer_value(json_array_get(v, 1)))
				continue;
			if (json_object_get(keys, k)) {
				strbuf_addf(&in, "%s%s", n_in ? ", " : "", k);
				n_in++;
			} else if (!strncmp(k, IMPLICIT, strlen(IMPLICIT)) ||
				   json_object_get(json_object_get(c, "before"), k)) {
				continue;
			} else {
				strbuf_addf(&out, "%s%s", out.len ? ", " : "", k);
			}
		}
		if (limited_before && !n_in)
			gs_warnings_add(&x->r->notes,
					"namespace %s: %s is charged nowhere after the move: its "
					"devices count under %s, which no quota of the namespace "
					"limits",
					ns, kobj_text(c, "workload"),
					out.len ? out.buf : "nothing");
		else if (n_in > 1)
			gs_warnings_add(&x->r->notes,
					"namespace %s: %s is charged twice after the move: each "
					"of its devices on a DRA node counts against %s",
					ns, kobj_text(c, "workload"), in.buf);
		strbuf_release(&in);
		strbuf_release(&out);
	}
}

static void judge_quotas(struct run *x)
{
	const json_t *q;
	json_t *keys_by_ns = json_object();
	size_t i;

	json_array_foreach (x->in->quotas, i, q) {
		const char *ns = ns_of(q), *k;
		json_t *v, *keys = json_object_get(keys_by_ns, ns);
		if (!keys) {
			keys = json_object();
			json_object_set_new(keys_by_ns, ns, keys);
		}
		json_object_foreach ((json_t *)kobj_map(q, "spec.hard"), k, v) {
			if (!gpu_key(k))
				continue;
			json_object_set_new(keys, k, json_true());
			x->r->quotas = gs_xrealloc(x->r->quotas,
						   (x->r->n_quotas + 1) * sizeof(*x->r->quotas));
			struct migrate_quota *u = &x->r->quotas[x->r->n_quotas++];
			u->ns = gs_xstrdup(ns);
			u->name = gs_xstrdup(kobj_text(q, "metadata.name"));
			u->resource = gs_xstrdup(k);
			u->hard = qty(v);
			u->before = sum(x->charges, ns, "before", k, 0);
			u->after = sum(x->charges, ns, "after", k, 0);
			u->after_maybe = sum(x->charges, ns, "after", k, 1);
			u->how = how(x, k);
		}
	}
	const char *ns;
	json_t *keys;
	json_object_foreach (keys_by_ns, ns, keys)
		quota_notes(x, ns, keys);
	json_decref(keys_by_ns);
}

/* ---- the run ---- */

int migrate_run(const struct migrate_input *in, struct migrate_result **out, struct gs_error *err)
{
	struct run x = {.in = in};
	int rc = -1;

	*out = NULL;
	x.r = gs_xcalloc(1, sizeof(*x.r));
	gs_warnings_init(&x.r->notes);
	x.made = json_object();
	x.charged = json_object();
	x.charges = json_array();
	x.selections = json_object();
	if (parse_version(&x, err) < 0 || build_fleet(&x, err) < 0)
		goto out;
	x.r->device_classes = draslice_device_classes(x.r->extended_resource);
	x.tr = dratranslate_new(in->set, in->cm_file, in->configmap, NULL);
	for (size_t i = 0; i < in->n_objects; i++)
		if (judge_object(&x, &in->objects[i], err) < 0)
			goto out;
	judge_quotas(&x);
	*out = x.r;
	x.r = NULL;
	rc = 0;
out:
	migrate_result_free(x.r);
	for (size_t i = 0; i < x.n_nodes; i++) {
		free(x.nodes[i].pool);
		json_decref(x.nodes[i].mig);
		json_decref(x.nodes[i].alloc_before);
		json_decref(x.nodes[i].alloc_after);
	}
	free(x.nodes);
	explain_fleet_release(&x.before);
	explain_fleet_release(&x.after);
	dratranslate_free(x.tr);
	json_decref(x.made);
	json_decref(x.charged);
	json_decref(x.charges);
	json_decref(x.selections);
	for (size_t i = 0; i < x.n_sels; i++)
		free(x.sels[i]);
	free(x.sels);
	return rc;
}

bool migrate_result_breaks(const struct migrate_result *r)
{
	for (size_t i = 0; i < r->n_workloads; i++)
		if (r->workloads[i].verdict == MIGRATE_BREAKS)
			return true;
	return false;
}

json_t *migrate_result_json(const struct migrate_result *r)
{
	json_t *pools = json_array(), *wls = json_array(), *quotas = json_array(),
	       *notes = json_array();

	for (size_t i = 0; i < r->n_pools; i++) {
		const struct migrate_pool *p = &r->pools[i];
		json_array_append_new(pools,
				      json_pack("{s:s,s:s,s:I,s:O}", "name", p->name, "stack",
						p->dra ? "dra" : "device-plugin", "size",
						(json_int_t)p->n_nodes, "nodes", p->nodes));
	}
	for (size_t i = 0; i < r->n_workloads; i++) {
		const struct migrate_workload *w = &r->workloads[i];
		json_t *o = json_pack("{s:s,s:s,s:s,s:s,s:I,s:s,s:O}", "kind", w->kind, "namespace",
				      w->ns, "name", w->name, "source", w->source, "pods",
				      (json_int_t)w->pods, "verdict",
				      migrate_verdict_name(w->verdict), "resources", w->resources);
		if (json_array_size(w->objects) || json_array_size(w->claims)) {
			json_object_set(o, "claims", w->claims);
			json_object_set(o, "write", w->objects);
			json_object_set(o, "driverNotes", w->notes);
		}
		if (w->rewritten)
			json_object_set(o, "rewritten", w->rewritten);
		json_array_append_new(wls, o);
	}
	for (size_t i = 0; i < r->n_quotas; i++) {
		const struct migrate_quota *u = &r->quotas[i];
		json_array_append_new(
			quotas,
			json_pack("{s:s,s:s,s:s,s:I,s:I,s:I,s:I,s:s}", "namespace", u->ns, "name",
				  u->name, "resource", u->resource, "hard", (json_int_t)u->hard,
				  "before", (json_int_t)u->before, "after", (json_int_t)u->after,
				  "afterIfOnDRA", (json_int_t)u->after_maybe, "chargedBy", u->how));
	}
	for (size_t i = 0; i < r->notes.n; i++)
		json_array_append_new(notes, json_string(r->notes.items[i]));
	return json_pack("{s:s,s:{s:b,s:s},s:o,s:O,s:o,s:o,s:o}", "kubernetesVersion",
			 r->kubernetes_version, "draExtendedResource", "enabled",
			 r->extended_resource, "stage", r->gate, "pools", pools, "deviceClasses",
			 r->device_classes, "workloads", wls, "quotas", quotas, "notes", notes);
}

void migrate_result_free(struct migrate_result *r)
{
	if (!r)
		return;
	free(r->kubernetes_version);
	free(r->gate);
	for (size_t i = 0; i < r->n_pools; i++) {
		free(r->pools[i].name);
		json_decref(r->pools[i].nodes);
	}
	free(r->pools);
	json_decref(r->device_classes);
	for (size_t i = 0; i < r->n_workloads; i++) {
		struct migrate_workload *w = &r->workloads[i];
		free(w->kind);
		free(w->ns);
		free(w->name);
		free(w->source);
		json_decref(w->resources);
		json_decref(w->objects);
		json_decref(w->rewritten);
		json_decref(w->claims);
		json_decref(w->notes);
	}
	free(r->workloads);
	for (size_t i = 0; i < r->n_quotas; i++) {
		free(r->quotas[i].ns);
		free(r->quotas[i].name);
		free(r->quotas[i].resource);
		free(r->quotas[i].how);
	}
	free(r->quotas);
	gs_warnings_release(&r->notes);
	free(r);
}
