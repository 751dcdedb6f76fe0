/*
 * Device-plugin world -> DRA world
 * (docs/guide/dra.md#translate-gpushare-dra-translate-srcdradratranslatec). What each input
 * becomes: a device-plugin config     notes only: its sharing moves into claims a pod / workload
 * asking ResourceClaimTemplates (whole GPUs, MIG by nvidia.com/gpu or        profile) or shared
 * ResourceClaims (a config's nvidia.com/mig-*         time-slicing/MPS replicas), the pod naming
 * them a ResourceQuota            <class>.deviceclass.resource.k8s.io/devices a gpushare Node
 * labelled gpushare.io/path=dra anything else              unchanged
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dra/dratranslate.h"
#include "dra/draslice.h"
#include "model/kobj.h"
#include "model/quantity.h"
#include "yaml/yamlout.h"
#include "model/names.h"
#include "base/escape.h"
#include "base/banned.h"

#define LABEL_CONFIG "nvidia.com/device-plugin.config"
#define LABEL_MIG_STRATEGY "nvidia.com/mig.strategy"
#define CLASS_GPU "gpu.nvidia.com"
#define CLASS_MIG "mig.nvidia.com"
#define QUOTA_SUFFIX ".deviceclass.resource.k8s.io/devices"
#define CONFIG_API "resource.nvidia.com/v1beta1"

/* Devices a namespace's objects ask, before and after, for the quota notes. */
struct ns_use {
	char *ns;
	long before_gpu, before_mig; /* nvidia.com/gpu, nvidia.com/mig-* asked by pods */
	long after_gpu, after_mig;   /* devices charged by the claims created */
	long shared_claims, template_gpu;
};

/* A shared claim being filled with pods. */
struct chunk {
	char *key; /* ns/base */
	long index;
	long members;
};

struct quota_ref {
	size_t item;
	char *ns;
	bool gpu, mig;
	long hard_gpu, hard_mig;
};

struct dratranslate {
	const struct dpconfig_set *set;
	char *cm_file;
	char *cm_name;
	struct draprepare_gates gates;
	struct dratranslate_item *items;
	size_t n, cap;
	json_t *made; /* "ns/Kind/name" of generated objects already emitted */
	struct ns_use *use;
	size_t n_use;
	struct chunk *chunks;
	size_t n_chunks;
	struct quota_ref *quotas;
	size_t n_quotas;
};

static struct dratranslate_item *new_item(struct dratranslate *t, const char *source,
					  const char *subject)
{
	if (t->n == t->cap) {
		t->cap = t->cap ? 2 * t->cap : 16;
		t->items = gs_xrealloc(t->items, t->cap * sizeof(*t->items));
	}
	struct dratranslate_item *it = &t->items[t->n++];
	it->source = gs_xstrdup(source);
	it->subject = gs_xstrdup(subject);
	it->objects = json_array();
	gs_warnings_init(&it->notes);
	return it;
}

static struct ns_use *use_of(struct dratranslate *t, const char *ns)
{
	for (size_t i = 0; i < t->n_use; i++)
		if (!strcmp(t->use[i].ns, ns))
			return &t->use[i];
	t->use = gs_xrealloc(t->use, (t->n_use + 1) * sizeof(*t->use));
	struct ns_use *u = &t->use[t->n_use++];
	memset(u, 0, sizeof(*u));
	u->ns = gs_xstrdup(ns);
	return u;
}

/* A DNS label from free text: lower case, [a-z0-9-], no dashes at the ends. */
static void dns_label(const char *in, char *out, size_t size)
{
	size_t o = 0;
	for (const char *p = in; *p && o + 1 < size && o < 40; p++) {
		unsigned char c = (unsigned char)tolower((unsigned char)*p);
		out[o++] = (isalnum(c) ? (char)c : '-');
	}
	while (o && out[o - 1] == '-')
		o--;
	out[o] = '\0';
	size_t s = 0;
	while (out[s] == '-')
		s++;
	memmove(out, out + s, o - s + 1);
	if (!*out)
		snprintf(out, size, "config");
}

/* ---- the configs ---- */

static const char *strategy_word(enum dp_sharing_strategy s)
{
	return s == DP_SHARING_MPS ? "MPS" : "TimeSlicing";
}

/* The gate a sharing strategy needs, and the driver's refusal when it is off. */
static void gate_note(struct dratranslate *t, struct gs_warnings *notes, enum dp_sharing_strategy s,
		      const char *kind)
{
	bool on = s == DP_SHARING_MPS ? t->gates.mps_support : t->gates.time_slicing_settings;
	const char *gate = s == DP_SHARING_MPS ? "MPSSupport" : "TimeSlicingSettings";

	if (on)
		gs_warnings_add(notes,
				"the %s setting (strategy %s) needs the driver's alpha gate %s, "
				"which is on here",
				kind, strategy_word(s), gate);
	else if (t->gates.driver && t->gates.driver->v05_prepare_texts)
		gs_warnings_add(
			notes,
			"the %s setting (strategy %s) needs the driver's alpha gate %s, off "
			"by default: without it every pod of the claim fails prepare with "
			"\"error validating GPU config: \\\"%s\\\" is selected as the GPU "
			"sharing strategy, but the \\\"%s\\\" feature gate is not "
			"enabled\" (drop the config entry to share with the GPU's default "
			"time-slicing instead)",
			kind, strategy_word(s), gate, strategy_word(s), gate);
	else
		gs_warnings_add(
			notes,
			"the %s setting (strategy %s) needs the driver's alpha gate %s, off by "
			"default: without it every pod of the claim fails prepare with \"error "
			"validating GPU config: unknown GPU sharing strategy: %s\" (drop the "
			"config "
			"entry to share with the GPU's default time-slicing instead)",
			kind, strategy_word(s), gate, strategy_word(s));
}

static void translate_config(struct dratranslate *t, size_t i)
{
	const char *key = dpconfig_set_key(t->set, i);
	const struct gs_error *perr = NULL;
	const struct dpconfig *c = dpconfig_set_get(t->set, i, &perr);
	struct ydoc_pos pos = dpconfig_set_key_pos(t->set, i);
	char src[512], subj[300];

	snprintf(src, sizeof(src), "%s:%d:%d", t->cm_file, pos.line, pos.col);
	snprintf(subj, sizeof(subj), "device-plugin config \"%s\"", key);
	struct dratranslate_item *it = new_item(t, src, subj);
	struct gs_warnings *w = &it->notes;
	if (!c) {
		gs_warnings_add(w,
				"does not parse (%s): nodes choosing it run no device plugin; "
				"nothing to translate",
				perr ? perr->msg : "error");
		return;
	}
	const char *ms = c->mig_strategy ? c->mig_strategy : DP_DEFAULT_MIG_STRATEGY;
	if (!strcmp(ms, "none"))
		gs_warnings_add(w, "migStrategy none: no DRA equivalent; a MIG-enabled GPU still "
				   "publishes its MIG devices (class mig.nvidia.com) and never "
				   "itself");
	else if (!strcmp(ms, "single"))
		gs_warnings_add(w, "migStrategy single: nvidia.com/gpu meant a MIG device there; "
				   "it becomes class mig.nvidia.com (MIG devices never match "
				   "gpu.nvidia.com)");
	else if (!strcmp(ms, "mixed"))
		gs_warnings_add(w, "migStrategy mixed: nvidia.com/mig-<profile> becomes class "
				   "mig.nvidia.com with a CEL selector on the profile attribute");
	enum dp_sharing_strategy s = dpconfig_sharing_strategy(c);
	if (s != DP_SHARING_NONE) {
		const struct dp_sharing *sh = dpconfig_replicated(c);
		for (size_t r = 0; r < sh->n_resources; r++)
			gs_warnings_add(
				w,
				"%s %s replicas %d: no replica count in DRA; pods asking "
				"%s share a ResourceClaim (gpushare puts at most %d on one; "
				"DRA itself caps a claim at 256 users, all on the claim's "
				"node); separate claims never share a device",
				s == DP_SHARING_MPS ? "mps" : "timeSlicing", sh->resources[r].name,
				sh->resources[r].replicas, sh->resources[r].name,
				sh->resources[r].replicas);
		if (sh->rename_by_default)
			gs_warnings_add(w, "renameByDefault: no .shared resource name and no "
					   "-SHARED product label; the class stays gpu.nvidia.com");
		for (size_t r = 0; r < sh->n_resources; r++)
			if (sh->resources[r].rename)
				gs_warnings_add(w, "rename %s: no renamed resource in DRA",
						sh->resources[r].rename);
		if (sh->fail_requests_greater_than_one == 1 ||
		    (s == DP_SHARING_MPS && sh->fail_requests_greater_than_one != 0))
			gs_warnings_add(w, "failRequestsGreaterThanOne: unnecessary, a request of "
					   "count 2 gets 2 distinct devices");
		if (s == DP_SHARING_MPS)
			gs_warnings_add(
				w, "mps: the per-client pinned memory limit (device memory "
				   "/ replicas in the device plugin) depends on the GPU and is "
				   "not set; add mpsConfig.defaultPinnedDeviceMemoryLimit");
		gate_note(t, w, s, s == DP_SHARING_MPS ? "GpuConfig MPS" : "GpuConfig TimeSlicing");
	}
	static const char *const no_equiv[] = {
		"flags.plugin.deviceListStrategy",
		"flags.plugin.deviceIDStrategy",
		"flags.plugin.passDeviceSpecs",
		"flags.plugin.containerDriverRoot",
		"flags.gfd.oneshot",
		"flags.gfd.noTimestamp",
		"flags.gfd.sleepInterval",
		"flags.failOnInitError",
		"flags.mpsRoot",
		"flags.deviceDiscoveryStrategy",
		"imex.channelIDs",
		"imex.required",
		"resources.gpus",
		"resources.mig",
	};
	for (size_t k = 0; k < sizeof(no_equiv) / sizeof(no_equiv[0]); k++)
		if (dpconfig_key(c, no_equiv[k]))
			gs_warnings_add(w,
					"%s: no DRA equivalent (the driver injects devices "
					"through CDI and reads no such setting)",
					no_equiv[k]);
}

struct dratranslate *dratranslate_new(const struct dpconfig_set *set, const char *cm_file,
				      const json_t *configmap, const struct draprepare_gates *gates)
{
	struct dratranslate *t = gs_xcalloc(1, sizeof(*t));

	t->set = set;
	t->cm_file = gs_xstrdup(cm_file ? cm_file : "");
	t->cm_name = gs_xstrdup(configmap ? kobj_text(configmap, "metadata.name") : "");
	if (gates)
		t->gates = *gates;
	else
		draprepare_gates_default(&t->gates);
	t->made = json_object();
	if (configmap) {
		struct ydoc_pos pos = {.line = 0, .col = 0};
		char src[512], subj[600];
		const char *ns = kobj_text(configmap, "metadata.namespace");
		snprintf(src, sizeof(src), "%s", t->cm_file);
		snprintf(subj, sizeof(subj), "device-plugin ConfigMap %s%s%s", ns, *ns ? "/" : "",
			 t->cm_name);
		(void)pos;
		struct dratranslate_item *it = new_item(t, src, subj);
		gs_warnings_add(
			&it->notes,
			"no ConfigMap in the DRA form: the driver reads no device-plugin "
			"config, and nodes choose none; what each config below decided moves "
			"into the claims of the pods that used it (found by their nodeSelector "
			"%s)",
			LABEL_CONFIG);
	}
	for (size_t i = 0; set && i < dpconfig_set_count(set); i++)
		translate_config(t, i);
	return t;
}

/* ---- pods ---- */

/* What a GPU resource name asks for. */
struct gpu_ask {
	const char *resource; /* as written */
	char *class;
	char *profile; /* MIG profile, or NULL */
	long count;
};

/*
 * A device-plugin resource: nvidia.com/gpu(.shared), nvidia.com/mig-<p>(.shared).
 * Returns 0 and fills a, or -1 for any other name.
 */
static int parse_resource(const char *name, const struct dpconfig *c, struct gpu_ask *a)
{
	char base[256];
	size_t n = strlen(name);

	if (n >= sizeof(base))
		return -1;
	memcpy(base, name, n + 1);
	if (n > 7 && !strcmp(base + n - 7, ".shared"))
		base[n - 7] = '\0';
	memset(a, 0, sizeof(*a));
	a->resource = name;
	if (!strcmp(base, "nvidia.com/gpu")) {
		bool single = c && c->mig_strategy && !strcmp(c->mig_strategy, "single");
		a->class = gs_xstrdup(single ? CLASS_MIG : CLASS_GPU);
		return 0;
	}
	if (!strncmp(base, "nvidia.com/mig-", 15) && base[15]) {
		a->class = gs_xstrdup(CLASS_MIG);
		a->profile = gs_xstrdup(base + 15);
		return 0;
	}
	return -1;
}

static long quantity_count(const json_t *v)
{
	struct quantity q;
	struct gs_error e;
	int64_t n;

	if (quantity_from_json(&q, v, &e) || quantity_value(&q, &n))
		return 0;
	return (long)n;
}

/* The config a pod chose through its nodeSelector, or NULL (key in *key, "" when none). */
static const struct dpconfig *pod_config(struct dratranslate *t, const json_t *spec,
					 const char **key)
{
	const char *k =
		json_string_value(json_object_get(kobj_map(spec, "nodeSelector"), LABEL_CONFIG));
	*key = k ? k : "";
	if (!k || !t->set)
		return NULL;
	long i = dpconfig_set_find(t->set, k);
	if (i < 0)
		return NULL;
	return dpconfig_set_get(t->set, (size_t)i, NULL);
}

static const struct dp_replicated_resource *shared_entry(const struct dpconfig *c,
							 const char *resource)
{
	if (!c || dpconfig_sharing_strategy(c) == DP_SHARING_NONE)
		return NULL;
	const struct dp_sharing *sh = dpconfig_replicated(c);
	char base[256];
	snprintf(base, sizeof(base), "%s", resource);
	size_t n = strlen(base);
	if (n > 7 && !strcmp(base + n - 7, ".shared"))
		base[n - 7] = '\0';
	for (size_t i = 0; i < sh->n_resources; i++)
		if (!strcmp(sh->resources[i].name, base))
			return &sh->resources[i];
	return NULL;
}

static json_t *device_request(const char *reqname, const struct gpu_ask *a, long count)
{
	json_t *ex = json_pack("{s:s}", "deviceClassName", a->class);
	if (count != 1)
		json_object_set_new(ex, "count", json_integer(count));
	if (a->profile) {
		struct strbuf cel = STRBUF_INIT;
		/* The profile is a CEL string literal: a quote in it cannot end it. */
		strbuf_addstr(&cel, "device.attributes['gpu.nvidia.com'].profile == ");
		escape_cel_string(&cel, a->profile);
		json_object_set_new(ex, "selectors",
				    json_pack("[{s:{s:s}}]", "cel", "expression", cel.buf));
		strbuf_release(&cel);
	}
	return json_pack("{s:s, s:o}", "name", reqname, "exactly", ex);
}

static json_t *meta(const char *name, const char *ns)
{
	json_t *m = json_pack("{s:s}", "name", name);
	if (ns && *ns)
		json_object_set_new(m, "namespace", json_string(ns));
	return m;
}

/* Add `obj` to the item unless an object of that kind and name was made before. */
static bool emit_once(struct dratranslate *t, struct dratranslate_item *it, json_t *obj)
{
	char *key = gs_xasprintf("%s/%s/%s", kobj_text(obj, "metadata.namespace"), kobj_kind(obj),
				 kobj_name(obj));
	bool fresh = !json_object_get(t->made, key);
	if (fresh) {
		json_object_set_new(t->made, key, json_true());
		json_array_append(it->objects, obj);
	}
	free(key);
	json_decref(obj);
	return fresh;
}

static void short_name(const struct gpu_ask *a, char *out, size_t size)
{
	if (a->profile) {
		char p[64];
		draslice_profile_name(a->profile, p, sizeof(p));
		snprintf(out, size, "mig-%s", p);
	} else {
		snprintf(out, size, "%s", strcmp(a->class, CLASS_MIG) ? "gpu" : "mig");
	}
}

/* Drop `name` from a container's limits and requests; empty maps go too. */
static void drop_resource(json_t *ctr, const char *name)
{
	json_t *res = json_object_get(ctr, "resources");
	static const char *const maps[] = {"limits", "requests"};
	for (size_t i = 0; i < 2; i++) {
		json_t *m = json_object_get(res, maps[i]);
		if (!json_is_object(m))
			continue;
		json_object_del(m, name);
		if (!json_object_size(m))
			json_object_del(res, maps[i]);
	}
}

struct pod_ctx {
	struct dratranslate *t;
	struct dratranslate_item *it;
	const char *ns;
	const char *what; /* "pod", "Deployment" */
	long replicas;	  /* pods the object makes (a workload's spec.replicas) */
	bool workload;
	int claim_no;
};

static void translate_ask(struct pod_ctx *p, json_t *spec, json_t *ctr, struct gpu_ask *a,
			  const struct dpconfig *c, const char *cfgkey)
{
	struct dratranslate *t = p->t;
	struct gs_warnings *w = &p->it->notes;
	char sn[80], podclaim[80], name[160];
	const struct dp_replicated_resource *sh = shared_entry(c, a->resource);
	bool shared = sh != NULL;
	struct ns_use *u = use_of(t, p->ns);

	short_name(a, sn, sizeof(sn));
	const char *base = a->profile || !strcmp(a->class, CLASS_MIG) ? "mig" : "gpu";
	p->claim_no++;
	if (p->claim_no == 1)
		snprintf(podclaim, sizeof(podclaim), "%s", base);
	else
		snprintf(podclaim, sizeof(podclaim), "%s-%d", base, p->claim_no);

	if (shared && a->count > 1) {
		gs_warnings_add(w,
				"container \"%s\" asks %s: %ld on config \"%s\", which shares it: "
				"the device plugin hands out %ld replicas (or refuses the request "
				"when failRequestsGreaterThanOne); translated as %ld whole devices "
				"of its own",
				kobj_text(ctr, "name"), a->resource, a->count, cfgkey, a->count,
				a->count);
		shared = false;
	}
	json_t *pc;
	if (shared) {
		/* one shared claim per `replicas` pods of a namespace and config */
		char label[64], chunk_key[400];
		dns_label(cfgkey, label, sizeof(label));
		snprintf(chunk_key, sizeof(chunk_key), "%s/%s-%s", p->ns, label, sn);
		struct chunk *ch = NULL;
		for (size_t i = 0; i < t->n_chunks; i++)
			if (!strcmp(t->chunks[i].key, chunk_key))
				ch = &t->chunks[i];
		if (!ch) {
			t->chunks = gs_xrealloc(t->chunks, (t->n_chunks + 1) * sizeof(*t->chunks));
			ch = &t->chunks[t->n_chunks++];
			ch->key = gs_xstrdup(chunk_key);
			ch->index = 0;
			ch->members = 0;
		}
		if (ch->members >= sh->replicas) {
			ch->index++;
			ch->members = 0;
		}
		ch->members += p->workload ? sh->replicas : 1;
		snprintf(name, sizeof(name), "%s-%s-%ld", label, sn, ch->index);
		enum dp_sharing_strategy s = dpconfig_sharing_strategy(c);
		bool mig = !strcmp(a->class, CLASS_MIG);
		json_t *sharing = json_pack("{s:s}", "strategy", strategy_word(s));
		if (s == DP_SHARING_MPS)
			json_object_set_new(sharing, "mpsConfig",
					    json_pack("{s:i}", "defaultActiveThreadPercentage",
						      100 / sh->replicas));
		json_t *params =
			json_pack("{s:s, s:s, s:o}", "apiVersion", CONFIG_API, "kind",
				  mig ? "MigDeviceConfig" : "GpuConfig", "sharing", sharing);
		json_t *claim =
			json_pack("{s:s, s:s, s:o, s:{s:{s:[o], s:[{s:[s], s:{s:s, s:o}}]}}}",
				  "apiVersion", "resource.k8s.io/v1", "kind", "ResourceClaim",
				  "metadata", meta(name, p->ns), "spec", "devices", "requests",
				  device_request(base, a, 1), "config", "requests", base, "opaque",
				  "driver", DRASLICE_DRIVER, "parameters", params);
		if (emit_once(t, p->it, claim)) {
			u->shared_claims++;
			if (mig)
				u->after_mig++;
			else
				u->after_gpu++;
		}
		pc = json_pack("{s:s, s:s}", "name", podclaim, "resourceClaimName", name);
		gs_warnings_add(
			w,
			"container \"%s\": %s: %ld on config \"%s\" (%s, replicas %d) "
			"becomes the shared ResourceClaim %s%s%s: replicas are not devices, "
			"so the pods sharing it (up to %d here) all run on the node the "
			"claim is allocated on, with no cap from DRA",
			kobj_text(ctr, "name"), a->resource, a->count, cfgkey,
			s == DP_SHARING_MPS ? "MPS" : "time-slicing", sh->replicas,
			*p->ns ? p->ns : "", *p->ns ? "/" : "", name, sh->replicas);
		if (p->workload)
			gs_warnings_add(w,
					"every replica of the %s names the same claim: they "
					"share one device whatever their number",
					p->what);
		gate_note(t, w, s, mig ? "MigDeviceConfig" : "GpuConfig");
		if (s == DP_SHARING_MPS)
			gs_warnings_add(w,
					"defaultActiveThreadPercentage %d is 100/replicas as the "
					"device plugin sets it per client; the pinned memory "
					"limit is not set (it depends on the GPU)",
					100 / sh->replicas);
	} else {
		if (a->count == 1)
			snprintf(name, sizeof(name), "%s", sn);
		else
			snprintf(name, sizeof(name), "%s-x%ld", sn, a->count);
		json_t *tmpl = json_pack("{s:s, s:s, s:o, s:{s:{s:{s:[o]}}}}", "apiVersion",
					 "resource.k8s.io/v1", "kind", "ResourceClaimTemplate",
					 "metadata", meta(name, p->ns), "spec", "spec", "devices",
					 "requests", device_request(base, a, a->count));
		emit_once(t, p->it, tmpl);
		long pods = p->replicas;
		if (!strcmp(a->class, CLASS_MIG)) {
			u->after_mig += pods * a->count;
		} else {
			u->after_gpu += pods * a->count;
			u->template_gpu += pods;
		}
		pc = json_pack("{s:s, s:s}", "name", podclaim, "resourceClaimTemplateName", name);
		gs_warnings_add(w,
				"container \"%s\": %s: %ld becomes a claim of its own from the "
				"ResourceClaimTemplate %s (%s%s%s%s)",
				kobj_text(ctr, "name"), a->resource, a->count, name, a->class,
				a->profile ? ", profile " : "", a->profile ? a->profile : "",
				a->count > 1 ? ", distinct devices" : "");
		if (c && c->mig_strategy && !strcmp(c->mig_strategy, "single") && !a->profile)
			gs_warnings_add(w,
					"config \"%s\" has migStrategy single: nvidia.com/gpu "
					"was a MIG device of the node's one profile; any MIG "
					"device matches now (add a profile selector to pin one)",
					cfgkey);
	}
	size_t rl = strlen(a->resource);
	if (rl > 7 && !strcmp(a->resource + rl - 7, ".shared"))
		gs_warnings_add(w,
				"%s: no .shared name in DRA (renameByDefault); the class is "
				"%s",
				a->resource, a->class);
	gs_warnings_add(w,
			"container \"%s\": the limit %s is gone: on 1.34 a DRA node advertises no "
			"nvidia.com/* resource, and keeping the name needs the alpha gate "
			"DRAExtendedResource (with it off such a pod fits no DRA node)",
			kobj_text(ctr, "name"), a->resource);

	json_t *rcs = json_object_get(spec, "resourceClaims");
	if (!json_is_array(rcs)) {
		rcs = json_array();
		json_object_set_new(spec, "resourceClaims", rcs);
	}
	json_array_append_new(rcs, pc);
	json_t *res = json_object_get(ctr, "resources");
	if (!json_is_object(res)) {
		res = json_object();
		json_object_set_new(ctr, "resources", res);
	}
	json_t *claims = json_object_get(res, "claims");
	if (!json_is_array(claims)) {
		claims = json_array();
		json_object_set_new(res, "claims", claims);
	}
	json_array_append_new(claims, json_pack("{s:s}", "name", podclaim));
}

/* A pod spec (of a Pod or a workload's template), changed in place. Returns whether it asked a GPU.
 */
static bool translate_pod_spec(struct pod_ctx *p, json_t *spec)
{
	const char *cfgkey;
	const struct dpconfig *c = pod_config(p->t, spec, &cfgkey);
	bool any = false;
	struct ns_use *u = use_of(p->t, p->ns);
	static const char *const lists[] = {"initContainers", "containers"};

	for (size_t l = 0; l < 2; l++) {
		json_t *ctrs = json_object_get(spec, lists[l]);
		for (size_t i = 0; i < json_array_size(ctrs); i++) {
			json_t *ctr = json_array_get(ctrs, i);
			json_t *limits =
				json_object_get(json_object_get(ctr, "resources"), "limits");
			json_t *requests =
				json_object_get(json_object_get(ctr, "resources"), "requests");
			/* names first: the maps change under us */
			json_t *names = json_array();
			const char *k;
			json_t *v;
			json_object_foreach (limits, k, v)
				json_array_append_new(names, json_string(k));
			json_object_foreach (requests, k, v)
				if (!json_object_get(limits, k))
					json_array_append_new(names, json_string(k));
			for (size_t n = 0; n < json_array_size(names); n++) {
				const char *rname = json_string_value(json_array_get(names, n));
				struct gpu_ask a;
				if (parse_resource(rname, c, &a))
					continue;
				char *rcopy = gs_xstrdup(rname);
				a.resource = rcopy;
				const json_t *q = json_object_get(limits, rname);
				if (!q)
					q = json_object_get(requests, rname);
				a.count = quantity_count(q);
				if (a.count <= 0) {
					drop_resource(ctr, rname);
					free(a.class);
					free(a.profile);
					free(rcopy);
					continue;
				}
				if (!strcmp(a.class, CLASS_MIG))
					u->before_mig += a.count * p->replicas;
				else
					u->before_gpu += a.count * p->replicas;
				if (!c && *cfgkey)
					gs_warnings_add(
						&p->it->notes,
						"config \"%s\" (nodeSelector %s) is not in the "
						"ConfigMap: translated as unshared devices",
						cfgkey, LABEL_CONFIG);
				else if (!*cfgkey && !a.profile)
					gs_warnings_add(
						&p->it->notes,
						"no nodeSelector %s: the pod could land on any "
						"config's node; translated as unshared devices",
						LABEL_CONFIG);
				drop_resource(ctr, rname);
				translate_ask(p, spec, ctr, &a, c, cfgkey);
				any = true;
				free(a.class);
				free(a.profile);
				free(rcopy);
			}
			json_decref(names);
		}
	}
	if (!any)
		return false;
	json_t *sel = json_object_get(spec, "nodeSelector");
	if (json_object_get(sel, LABEL_CONFIG)) {
		gs_warnings_add(&p->it->notes,
				"nodeSelector %s=%s dropped: the DRA driver reads no device-plugin "
				"config, and the claim's allocation now picks the node",
				LABEL_CONFIG, cfgkey);
		json_object_del(sel, LABEL_CONFIG);
	}
	if (json_object_get(sel, LABEL_MIG_STRATEGY)) {
		gs_warnings_add(&p->it->notes,
				"nodeSelector %s dropped: DRA has no MIG strategy; "
				"the mig.nvidia.com claim finds the MIG devices",
				LABEL_MIG_STRATEGY);
		json_object_del(sel, LABEL_MIG_STRATEGY);
	}
	if (json_is_object(sel) && !json_object_size(sel))
		json_object_del(spec, "nodeSelector");
	return true;
}

static void translate_workload(struct dratranslate *t, struct dratranslate_item *it, json_t *obj,
			       const char *spec_path)
{
	struct pod_ctx p = {.t = t,
			    .it = it,
			    .ns = kobj_text(obj, "metadata.namespace"),
			    .what = kobj_kind(obj),
			    .replicas = 1,
			    .workload = strcmp(kobj_kind(obj), "Pod") != 0,
			    .claim_no = 0};
	json_t *spec = (json_t *)kobj_map(obj, spec_path);
	const json_t *r = kobj_get(obj, "spec.replicas");
	if (p.workload) {
		p.replicas = json_is_integer(r) ? (long)json_integer_value(r) : 1;
		if (!strcmp(p.what, "CronJob") || !strcmp(p.what, "DaemonSet") ||
		    !strcmp(p.what, "Job"))
			p.replicas = 1;
	}
	if (spec && translate_pod_spec(&p, spec) && p.workload && (!strcmp(p.what, "DaemonSet")))
		gs_warnings_add(&it->notes, "a DaemonSet's pods each get their claims; quota "
					    "counts them per node");
	json_array_append(it->objects, obj);
}

/* ---- quotas, nodes ---- */

static void translate_quota(struct dratranslate *t, struct dratranslate_item *it, json_t *obj)
{
	json_t *hard = (json_t *)kobj_map(obj, "spec.hard");
	long gpu = 0, mig = 0;
	bool has_gpu = false, has_mig = false;
	json_t *drop = json_array();
	const char *k;
	json_t *v;

	json_object_foreach (hard, k, v) {
		const char *r = k;
		if (!strncmp(r, "requests.", 9))
			r += 9;
		else if (!strncmp(r, "limits.", 7))
			r += 7;
		struct gpu_ask a;
		if (parse_resource(r, NULL, &a))
			continue;
		long n = quantity_count(v);
		if (!strcmp(a.class, CLASS_MIG)) {
			mig += n;
			has_mig = true;
			if (a.profile)
				gs_warnings_add(&it->notes,
						"%s: %ld counts every MIG device under "
						"mig.nvidia.com: a quota per profile cannot be "
						"expressed (one name per DeviceClass)",
						k, n);
		} else {
			gpu += n;
			has_gpu = true;
		}
		json_array_append_new(drop, json_string(k));
		free(a.class);
		free(a.profile);
	}
	for (size_t i = 0; i < json_array_size(drop); i++)
		json_object_del(hard, json_string_value(json_array_get(drop, i)));
	json_decref(drop);
	char buf[32];
	if (has_gpu) {
		snprintf(buf, sizeof(buf), "%ld", gpu);
		json_object_set_new(hard, CLASS_GPU QUOTA_SUFFIX, json_string(buf));
	}
	if (has_mig) {
		snprintf(buf, sizeof(buf), "%ld", mig);
		json_object_set_new(hard, CLASS_MIG QUOTA_SUFFIX, json_string(buf));
	}
	if (has_gpu || has_mig) {
		gs_warnings_add(&it->notes,
				"charged per ResourceClaim when it is created, not per pod: a "
				"shared claim counts once however many pods use it, a template "
				"claim once per pod; a request with allocationMode All counts 32");
		gs_warnings_add(&it->notes, "the quota no longer sees pods: only claims are "
					    "charged (the pods evaluator has no DRA names)");
		t->quotas = gs_xrealloc(t->quotas, (t->n_quotas + 1) * sizeof(*t->quotas));
		t->quotas[t->n_quotas++] =
			(struct quota_ref){(size_t)(it - t->items),
					   gs_xstrdup(kobj_text(obj, "metadata.namespace")),
					   has_gpu,
					   has_mig,
					   gpu,
					   mig};
	}
	json_array_append(it->objects, obj);
}

static void translate_node(struct dratranslate_item *it, json_t *obj)
{
	json_t *labels = (json_t *)kobj_labels(obj);
	if (!kobj_annotation(obj, NODEHW_ANN_PRODUCT)) {
		json_array_append(it->objects, obj);
		return;
	}
	if (!json_is_object(labels)) {
		labels = json_object();
		json_object_set_new(json_object_get(obj, "metadata"), "labels", labels);
	}
	const char *cfg = kobj_label(obj, LABEL_CONFIG);
	if (cfg) {
		gs_warnings_add(&it->notes,
				"label %s=%s dropped: the DRA driver reads no device-plugin config",
				LABEL_CONFIG, cfg);
		json_object_del(labels, LABEL_CONFIG);
	}
	if (kobj_label(obj, LABEL_MIG_STRATEGY)) {
		gs_warnings_add(&it->notes, "label %s dropped: DRA has no MIG strategy",
				LABEL_MIG_STRATEGY);
		json_object_del(labels, LABEL_MIG_STRATEGY);
	}
	json_object_set_new(labels, DRASLICE_LABEL_PATH, json_string(DRASLICE_PATH_DRA));
	gs_warnings_add(&it->notes,
			"labelled %s=%s: gpushare publishes the driver's ResourceSlice for it "
			"instead of nvidia.com/* capacity (a node is one or the other)%s",
			DRASLICE_LABEL_PATH, DRASLICE_PATH_DRA,
			kobj_label(obj, "nvidia.com/mig.config")
				? "; nvidia.com/mig.config stays: its instances are the MIG devices"
				: "");
	json_array_append(it->objects, obj);
}

/* ---- streams ---- */

/* Every GPU quantity of a map must parse: a bad one is refused at its position. */
static int check_map(const struct ydoc_stream *s, const json_t *map, bool strip_prefix,
		     struct gs_error *err)
{
	const char *k;
	const json_t *v;

	json_object_foreach ((json_t *)map, k, v) {
		const char *r = k;
		if (strip_prefix && !strncmp(r, "requests.", 9))
			r += 9;
		else if (strip_prefix && !strncmp(r, "limits.", 7))
			r += 7;
		struct gpu_ask a;
		if (parse_resource(r, NULL, &a))
			continue;
		free(a.class);
		free(a.profile);
		struct quantity q;
		struct gs_error e;
		if (quantity_from_json(&q, v, &e)) {
			ydoc_error_at_key(s, map, k, err, "%s: %s", k, e.msg);
			return -1;
		}
	}
	return 0;
}

static int check_spec(const struct ydoc_stream *s, const json_t *spec, struct gs_error *err)
{
	static const char *const lists[] = {"initContainers", "containers"};
	for (size_t l = 0; l < 2; l++) {
		const json_t *ctrs = json_object_get(spec, lists[l]);
		for (size_t i = 0; i < json_array_size(ctrs); i++) {
			const json_t *res = json_object_get(json_array_get(ctrs, i), "resources");
			if (check_map(s, json_object_get(res, "limits"), false, err) ||
			    check_map(s, json_object_get(res, "requests"), false, err))
				return -1;
		}
	}
	return 0;
}

static int translate_doc(struct dratranslate *t, const struct ydoc_stream *s, json_t *doc,
			 struct gs_error *err)
{
	struct ydoc_pos pos;
	char src[600], subj[600];

	if (!json_is_object(doc))
		return 0;
	if (kobj_is(doc, "List")) {
		const json_t *items = json_object_get(doc, "items");
		for (size_t i = 0; i < json_array_size(items); i++)
			if (translate_doc(t, s, json_array_get(items, i), err))
				return -1;
		return 0;
	}
	ydoc_stream_pos(s, doc, &pos);
	snprintf(src, sizeof(src), "%s:%d:%d", ydoc_stream_name(s), pos.line, pos.col);
	const char *ns = kobj_text(doc, "metadata.namespace");
	snprintf(subj, sizeof(subj), "%s %s%s%s", kobj_kind(doc) ? kobj_kind(doc) : "object", ns,
		 *ns ? "/" : "", kobj_text(doc, "metadata.name"));
	const char *dkind = kobj_kind(doc) ? kobj_kind(doc) : "";
	if (check_spec(s, kobj_map(doc, "spec"), err) ||
	    check_spec(s, kobj_map(doc, "spec.template.spec"), err) ||
	    check_spec(s, kobj_map(doc, "spec.jobTemplate.spec.template.spec"), err) ||
	    (!strcmp(dkind, "ResourceQuota") &&
	     check_map(s, kobj_map(doc, "spec.hard"), true, err)))
		return -1;
	json_t *obj = json_deep_copy(doc);
	const char *kind = kobj_kind(obj) ? kobj_kind(obj) : "";
	if (!strcmp(kind, "ConfigMap") && *t->cm_name &&
	    !strcmp(kobj_text(obj, "metadata.name"), t->cm_name)) {
		struct dratranslate_item *it = new_item(t, src, subj);
		gs_warnings_add(&it->notes, "the device-plugin ConfigMap: no DRA form (its "
					    "configs are at the top)");
	} else {
		struct dratranslate_item *it = new_item(t, src, subj);
		if (!strcmp(kind, "Pod"))
			translate_workload(t, it, obj, "spec");
		else if (!strcmp(kind, "Deployment") || !strcmp(kind, "ReplicaSet") ||
			 !strcmp(kind, "StatefulSet") || !strcmp(kind, "DaemonSet") ||
			 !strcmp(kind, "Job") || !strcmp(kind, "ReplicationController"))
			translate_workload(t, it, obj, "spec.template.spec");
		else if (!strcmp(kind, "CronJob"))
			translate_workload(t, it, obj, "spec.jobTemplate.spec.template.spec");
		else if (!strcmp(kind, "ResourceQuota"))
			translate_quota(t, it, obj);
		else if (!strcmp(kind, "Node"))
			translate_node(it, obj);
		else
			json_array_append(it->objects, obj);
	}
	json_decref(obj);
	return 0;
}

int dratranslate_stream(struct dratranslate *t, const struct ydoc_stream *s, struct gs_error *err)
{
	for (size_t i = 0; i < ydoc_stream_count(s); i++)
		if (translate_doc(t, s, ydoc_stream_doc(s, i), err))
			return -1;
	return 0;
}

int dratranslate_object(struct dratranslate *t, const struct ydoc_stream *s, json_t *obj,
			struct gs_error *err)
{
	return translate_doc(t, s, obj, err);
}

void dratranslate_finish(struct dratranslate *t)
{
	for (size_t q = 0; q < t->n_quotas; q++) {
		struct quota_ref *r = &t->quotas[q];
		struct ns_use *u = use_of(t, r->ns);
		struct dratranslate_item *it = &t->items[r->item];
		const char *ns = *r->ns ? r->ns : "(default)";
		if (r->gpu)
			gs_warnings_add(
				&it->notes,
				"in these manifests the pods of %s ask %ld nvidia.com/gpu "
				"against a hard limit of %ld (%ld over, refused at pod "
				"admission); their DRA form charges %ld gpu.nvidia.com "
				"device(s) for %ld shared claim(s) and %ld claim(s) from "
				"templates (%ld over, refused at claim creation)",
				ns, u->before_gpu, r->hard_gpu,
				u->before_gpu > r->hard_gpu ? u->before_gpu - r->hard_gpu : 0,
				u->after_gpu, u->shared_claims, u->template_gpu,
				u->after_gpu > r->hard_gpu ? u->after_gpu - r->hard_gpu : 0);
		if (r->mig)
			gs_warnings_add(&it->notes,
					"in these manifests the pods of %s ask %ld MIG devices "
					"against %ld; their DRA form charges %ld mig.nvidia.com "
					"device(s)",
					ns, u->before_mig, r->hard_mig, u->after_mig);
	}
}

size_t dratranslate_count(const struct dratranslate *t)
{
	return t->n;
}

const struct dratranslate_item *dratranslate_item(const struct dratranslate *t, size_t i)
{
	return i < t->n ? &t->items[i] : NULL;
}

/*
 * "# - text" wrapped at 78 columns, continuation lines indented. The text
 * is escaped first (escape_line): a line break or any other control
 * character in a name it quotes stays inside the comment, so no name can
 * end it and start a document of its own.
 */
static void comment(struct strbuf *out, const char *first, const char *raw)
{
	struct strbuf esc = STRBUF_INIT;
	size_t col = 0;
	const char *text, *p;

	escape_line_str(&esc, raw);
	text = p = esc.buf;
	strbuf_addstr(out, first);
	col = strlen(first);
	while (*p) {
		const char *sp = strchr(p, ' ');
		size_t wl = sp ? (size_t)(sp - p) : strlen(p);
		if (col + wl + 1 > 78 && col > 4) {
			strbuf_addstr(out, "\n#   ");
			col = 4;
		} else if (p != text) {
			strbuf_addch(out, ' ');
			col++;
		}
		strbuf_add(out, p, wl);
		col += wl;
		p += wl;
		while (*p == ' ')
			p++;
	}
	strbuf_addch(out, '\n');
	strbuf_release(&esc);
}

int dratranslate_yaml(const struct dratranslate *t, struct strbuf *out, struct gs_error *err)
{
	strbuf_addf(out,
		    "# The DRA form (resource.k8s.io/v1, Kubernetes 1.34 without alpha "
		    "gates, NVIDIA DRA\n"
		    "# driver %s) of a device-plugin setup, by gpushare dra "
		    "translate. Apply the\n",
		    t->gates.driver ? t->gates.driver->version : dradriver_newest()->version);
	strbuf_addstr(out, "# driver's DeviceClasses first (gpushare advertise --dra "
			   "--device-classes).\n"
			   "# Under each item, \"# -\" lines say what does not carry over, and "
			   "why.\n\n");
	bool open = false; /* a document separator is needed before the next object */
	for (size_t i = 0; i < t->n; i++) {
		const struct dratranslate_item *it = &t->items[i];
		if (json_array_size(it->objects) && open)
			strbuf_addstr(out, "---\n");
		else if (i)
			strbuf_addch(out, '\n');
		strbuf_addstr(out, "# ");
		escape_line_str(out, it->subject);
		strbuf_addstr(out, " (");
		escape_line_str(out, it->source);
		strbuf_addstr(out, ")\n");
		for (size_t n = 0; n < it->notes.n; n++)
			comment(out, "# - ", it->notes.items[n]);
		for (size_t o = 0; o < json_array_size(it->objects); o++) {
			if (o)
				strbuf_addstr(out, "---\n");
			if (yamlout_document(json_array_get(it->objects, o), out, err))
				return -1;
			open = true;
		}
	}
	return 0;
}

void dratranslate_free(struct dratranslate *t)
{
	if (!t)
		return;
	for (size_t i = 0; i < t->n; i++) {
		free(t->items[i].source);
		free(t->items[i].subject);
		json_decref(t->items[i].objects);
		gs_warnings_release(&t->items[i].notes);
	}
	free(t->items);
	for (size_t i = 0; i < t->n_use; i++)
		free(t->use[i].ns);
	free(t->use);
	for (size_t i = 0; i < t->n_chunks; i++)
		free(t->chunks[i].key);
	free(t->chunks);
	for (size_t i = 0; i < t->n_quotas; i++)
		free(t->quotas[i].ns);
	free(t->quotas);
	json_decref(t->made);
	free(t->cm_file);
	free(t->cm_name);
	free(t);
}
