#include "engine/ledger.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dra/draslice.h"
#include "base/jsonsort.h"
#include "model/kobj.h"
#include "base/banned.h"

#define RES_GPU "nvidia.com/gpu"

static void device_release(struct ledger_device *d)
{
	free(d->id);
	free(d->resource);
	free(d->base);
	free(d->holder);
}

static void orphans_clear(struct ledger *l)
{
	for (size_t i = 0; i < l->n_orphans; i++) {
		free(l->orphans[i].holder);
		free(l->orphans[i].resource);
		free(l->orphans[i].id);
	}
	free(l->orphans);
	l->orphans = NULL;
	l->n_orphans = 0;
}

void ledger_free(struct ledger *l)
{
	if (!l)
		return;
	for (size_t i = 0; i < l->n_devices; i++)
		device_release(&l->devices[i]);
	free(l->devices);
	orphans_clear(l);
	for (size_t i = 0; i < l->n_vanished; i++)
		free(l->vanished[i]);
	free(l->vanished);
	free(l->gpus);
	free(l->node);
	free(l->config_name);
	free(l);
}

/* One device before replication: a whole GPU or a MIG instance. */
struct raw {
	char resource[160];
	char base[64];
	int gpu;
	const char *profile;
	int start;
	int memory_mib;
};

static int by_place(const void *a, const void *b)
{
	const struct ledger_device *x = a, *y = b;
	int c = strcmp(x->resource, y->resource);

	if (c)
		return c;
	if (x->gpu != y->gpu)
		return x->gpu - y->gpu;
	if (x->mig_start != y->mig_start)
		return x->mig_start - y->mig_start;
	return x->replica - y->replica;
}

static void add_device(struct ledger *l, const struct raw *r, const char *resource, int replica)
{
	struct ledger_device *d = &l->devices[l->n_devices++];

	memset(d, 0, sizeof(*d));
	d->resource = gs_xstrdup(resource);
	d->base = gs_xstrdup(r->base);
	d->id = replica < 0 ? gs_xstrdup(r->base) : gs_xasprintf("%s::%d", r->base, replica);
	d->gpu = r->gpu;
	d->replica = replica;
	d->profile = r->profile;
	d->mig_start = r->start;
	d->mig_memory_mib = r->profile ? r->memory_mib : 0;
}

/* The sharing entry for `name` with the most replicas (later duplicates overwrite IDs). */
static const struct dp_replicated_resource *replicated(const struct dp_sharing *sh,
						       const char *name)
{
	const struct dp_replicated_resource *best = NULL;

	for (size_t i = 0; sh && i < sh->n_resources; i++)
		if (!strcmp(sh->resources[i].name, name) &&
		    (!best || sh->resources[i].replicas > best->replicas))
			best = &sh->resources[i];
	return best;
}

/* The physical GPUs as advertise_compute left them (adv->gpus, NVML order). */
static int read_gpus(struct ledger *l, const struct nodehw *hw, const struct advertisement *adv,
		     struct gs_error *err)
{
	size_t k = 0;

	l->n_gpus = (size_t)hw->total;
	l->gpus = gs_xcalloc(l->n_gpus ? l->n_gpus : 1, sizeof(*l->gpus));
	for (size_t i = 0; i < hw->n_gpus; i++)
		for (int j = 0; j < hw->gpus[i].count; j++, k++) {
			struct ledger_gpu *g = &l->gpus[k];
			const json_t *a = json_array_get(adv->gpus, k);

			g->index = (int)k;
			draslice_gpu_uuid(hw->name, (int)k, g->uuid, sizeof(g->uuid));
			g->product = hw->gpus[i].model->name;
			g->memory_mib = hw->gpus[i].model->memory_mib;
			g->mig_enabled = json_is_true(json_object_get(a, "migEnabled"));
		}
	if (adv->outcome == ADVERTISE_OK && json_array_size(adv->gpus) != l->n_gpus) {
		gs_error_set(err, "node '%s': the advertisement describes %zu GPUs, the node %zu",
			     hw->name, json_array_size(adv->gpus), l->n_gpus);
		return -1;
	}
	return 0;
}

/* Whole GPUs and MIG instances per resource, before replication (k8s-device-plugin v0.20.0
 * internal/rm/device_map.go). */
static int raw_devices(const struct ledger *l, const struct nodehw *hw,
		       const struct advertisement *adv, struct raw **out, size_t *n_out,
		       struct gs_error *err)
{
	const char *strategy = adv->mig_strategy ? adv->mig_strategy : "none";
	size_t n = 0, cap = l->n_gpus * DRASLICE_MAX_MIG + 1;
	struct raw *r = gs_xcalloc(cap, sizeof(*r));
	size_t k = 0;

	for (size_t i = 0; i < hw->n_gpus; i++)
		for (int j = 0; j < hw->gpus[i].count; j++, k++) {
			const struct ledger_gpu *g = &l->gpus[k];
			const json_t *mig =
				json_object_get(json_array_get(adv->gpus, k), "migDevices");
			struct catalog_mig_count counts[8];
			struct draslice_mig_instance inst[DRASLICE_MAX_MIG];
			size_t nc = 0;
			const char *prof;
			json_t *v;
			int ni;

			if (!g->mig_enabled || !strcmp(strategy, "none")) {
				struct raw *x = &r[n++];
				snprintf(x->resource, sizeof(x->resource), "%s", RES_GPU);
				snprintf(x->base, sizeof(x->base), "%s", g->uuid);
				x->gpu = (int)k;
				x->start = -1;
				continue;
			}
			json_object_foreach ((json_t *)mig, prof, v) {
				if (nc == 8)
					break;
				counts[nc].profile = prof;
				counts[nc++].count = (int)json_integer_value(v);
			}
			ni = draslice_mig_instances(hw->name, hw->gpus[i].model, (int)k, counts, nc,
						    inst, DRASLICE_MAX_MIG, err);
			if (ni < 0) {
				free(r);
				return -1;
			}
			for (int m = 0; m < ni; m++) {
				struct raw *x = &r[n++];
				char pr[128];

				if (!strcmp(strategy, "mixed")) {
					catalog_profile_resource(inst[m].profile->name, pr,
								 sizeof(pr));
					snprintf(x->resource, sizeof(x->resource),
						 "nvidia.com/mig-%s", pr);
				} else {
					snprintf(x->resource, sizeof(x->resource), "%s", RES_GPU);
				}
				snprintf(x->base, sizeof(x->base), "%s", inst[m].uuid);
				x->gpu = (int)k;
				x->profile = inst[m].profile->name;
				x->start = inst[m].start;
				x->memory_mib = inst[m].profile->memory_mib;
			}
		}
	*out = r;
	*n_out = n;
	return 0;
}

int ledger_new(const struct catalog *cat, const struct nodehw *hw, const struct advertisement *adv,
	       const struct dpconfig *config, struct ledger **out, struct gs_error *err)
{
	struct ledger *l = gs_xcalloc(1, sizeof(*l));
	const struct dp_sharing *sh = NULL;
	struct raw *raw = NULL;
	size_t n_raw = 0, total = 0;
	const char *name;
	json_t *v;

	(void)cat;
	*out = NULL;
	l->node = gs_xstrdup(hw->name);
	l->config_name = gs_xstrdup(adv->config_name ? adv->config_name : "");
	l->sharing = adv->sharing;
	if (config && adv->sharing != DP_SHARING_NONE)
		sh = dpconfig_replicated(config);
	/* v0.17 ValidateRequest: MPS ignores the flag and always refuses; time-slicing when set. */
	l->fail_over_one =
		adv->sharing == DP_SHARING_MPS || (adv->sharing == DP_SHARING_TIME_SLICING && sh &&
						   sh->fail_requests_greater_than_one == 1);
	if (read_gpus(l, hw, adv, err))
		goto fail;
	json_object_foreach (adv->resources, name, v) {
		if (json_integer_value(v) > 0)
			continue;
		l->vanished = gs_xrealloc(l->vanished, (l->n_vanished + 1) * sizeof(char *));
		l->vanished[l->n_vanished++] = gs_xstrdup(name);
	}
	if (adv->outcome != ADVERTISE_OK) { /* the plugin registers nothing */
		*out = l;
		return 0;
	}
	if (raw_devices(l, hw, adv, &raw, &n_raw, err))
		goto fail;
	for (size_t i = 0; i < n_raw; i++) {
		const struct dp_replicated_resource *rr = replicated(sh, raw[i].resource);
		total += rr ? (size_t)rr->replicas : 1;
	}
	if (total > LEDGER_MAX_DEVICES) {
		gs_error_set(err, "node '%s': %zu device IDs, more than %d", hw->name, total,
			     LEDGER_MAX_DEVICES);
		goto fail;
	}
	l->devices = gs_xcalloc(total ? total : 1, sizeof(*l->devices));
	for (size_t i = 0; i < n_raw; i++) {
		const struct dp_replicated_resource *rr = replicated(sh, raw[i].resource);
		const char *res = rr && rr->rename ? rr->rename : raw[i].resource;
		json_t *count = json_object_get(adv->resources, res);

		if (!count || json_integer_value(count) <= 0)
			continue; /* k8s-device-plugin v0.20.0 cmd/nvidia-device-plugin/main.go
				     startPlugins: not registered */
		if (!rr) {
			add_device(l, &raw[i], res, -1);
			continue;
		}
		for (int k = 0; k < rr->replicas; k++)
			add_device(l, &raw[i], res, k);
	}
	qsort(l->devices, l->n_devices, sizeof(*l->devices), by_place);
	/* The IDs must add up to what the node advertises. */
	json_object_foreach (adv->resources, name, v) {
		size_t have = ledger_count(l, name, NULL);
		if ((json_int_t)have != json_integer_value(v)) {
			gs_error_set(
				err,
				"node '%s': %zu device IDs for %s, the advertisement says %lld",
				hw->name, have, name, (long long)json_integer_value(v));
			goto fail;
		}
	}
	free(raw);
	*out = l;
	return 0;
fail:
	free(raw);
	ledger_free(l);
	return -1;
}

long ledger_find(const struct ledger *l, const char *id)
{
	for (size_t i = 0; i < l->n_devices; i++)
		if (!strcmp(l->devices[i].id, id))
			return (long)i;
	return -1;
}

size_t ledger_count(const struct ledger *l, const char *resource, size_t *free_out)
{
	size_t n = 0, f = 0;

	for (size_t i = 0; i < l->n_devices; i++) {
		if (strcmp(l->devices[i].resource, resource))
			continue;
		n++;
		f += !l->devices[i].holder;
	}
	if (free_out)
		*free_out = f;
	return n;
}

/* {resource: [string...]} */
static int check_shape(const json_t *assigned, struct gs_error *err)
{
	const char *res;
	json_t *ids;

	if (!json_is_object(assigned)) {
		gs_error_set(err, "expected an object of resource names to device ID lists");
		return -1;
	}
	json_object_foreach ((json_t *)assigned, res, ids) {
		size_t i;
		json_t *id;

		if (!json_is_array(ids)) {
			gs_error_set(err, "'%s': expected a list of device IDs", res);
			return -1;
		}
		json_array_foreach (ids, i, id) {
			if (!json_is_string(id) || !*json_string_value(id)) {
				gs_error_set(err, "'%s' item %zu: expected a device ID string", res,
					     i);
				return -1;
			}
		}
	}
	return 0;
}

int ledger_hold(struct ledger *l, const char *holder, const json_t *assigned, struct gs_error *err)
{
	const char *res;
	json_t *ids;

	if (check_shape(assigned, err))
		return -1;
	json_object_foreach ((json_t *)assigned, res, ids) {
		size_t i;
		json_t *id;

		json_array_foreach (ids, i, id) {
			long d = ledger_find(l, json_string_value(id));
			if (d >= 0 && l->devices[d].holder &&
			    strcmp(l->devices[d].holder, holder)) {
				gs_error_set(err, "device %s is held by %s", json_string_value(id),
					     l->devices[d].holder);
				return -1;
			}
		}
	}
	json_object_foreach ((json_t *)assigned, res, ids) {
		size_t i;
		json_t *id;

		json_array_foreach (ids, i, id) {
			long d = ledger_find(l, json_string_value(id));
			struct ledger_orphan *o;

			if (d >= 0) {
				if (!l->devices[d].holder)
					l->devices[d].holder = gs_xstrdup(holder);
				continue;
			}
			l->orphans = gs_xrealloc(l->orphans, (l->n_orphans + 1) * sizeof(*o));
			o = &l->orphans[l->n_orphans++];
			o->holder = gs_xstrdup(holder);
			o->resource = gs_xstrdup(res);
			o->id = gs_xstrdup(json_string_value(id));
		}
	}
	return 0;
}

size_t ledger_release(struct ledger *l, const char *holder)
{
	size_t n = 0, k = 0;

	for (size_t i = 0; i < l->n_devices; i++)
		if (l->devices[i].holder && !strcmp(l->devices[i].holder, holder)) {
			free(l->devices[i].holder);
			l->devices[i].holder = NULL;
			n++;
		}
	for (size_t i = 0; i < l->n_orphans; i++) {
		if (!strcmp(l->orphans[i].holder, holder)) {
			free(l->orphans[i].holder);
			free(l->orphans[i].resource);
			free(l->orphans[i].id);
			n++;
			continue;
		}
		l->orphans[k++] = l->orphans[i];
	}
	l->n_orphans = k;
	return n;
}

static bool in(const size_t *v, size_t n, size_t x)
{
	for (size_t i = 0; i < n; i++)
		if (v[i] == x)
			return true;
	return false;
}

int ledger_preferred(const struct ledger *l, const char *resource, const bool *busy,
		     const size_t *must, size_t n_must, size_t size, size_t *out)
{
	size_t n = l->n_devices, got = 0, avail = 0;
	bool aligned = true;
	size_t *group = NULL, *total = NULL, *left = NULL;
	bool *taken = NULL;

	for (size_t i = 0; i < n_must && got < size; i++)
		out[got++] = must[i];
	for (size_t i = 0; i < n; i++) {
		const struct ledger_device *d = &l->devices[i];
		if (strcmp(d->resource, resource))
			continue;
		if (d->replica >= 0 || d->profile)
			aligned = false;
		if (!busy[i] && !in(must, n_must, i))
			avail++;
	}
	if (avail < size - got)
		return -1;
	taken = gs_xcalloc(n ? n : 1, sizeof(*taken));
	if (aligned) {
		/*
		 * gpuallocator's best-effort policy scores sets of whole GPUs by
		 * their links; gpushare's nodes declare no NVLink topology, so
		 * every set scores alike: the lowest NVML indices are taken.
		 */
		for (size_t i = 0; i < n && got < size; i++)
			if (!strcmp(l->devices[i].resource, resource) && !busy[i] &&
			    !in(must, n_must, i))
				out[got++] = i;
		free(taken);
		return 0;
	}
	/*
	 * distributedAlloc: per underlying device (a GPU or MIG UUID; its
	 * replicas are adjacent in l->devices), total replicas and those still
	 * candidates; each pick takes a candidate whose device has the fewest
	 * taken (total - left). Upstream breaks ties in Go map order (random);
	 * here the lowest device index wins, one of the answers it can give.
	 */
	group = gs_xcalloc(n ? n : 1, sizeof(*group));
	total = gs_xcalloc(n ? n : 1, sizeof(*total));
	left = gs_xcalloc(n ? n : 1, sizeof(*left));
	for (size_t i = 0; i < n; i++) {
		group[i] =
			i > 0 && !strcmp(l->devices[i].base, l->devices[i - 1].base) &&
					!strcmp(l->devices[i].resource, l->devices[i - 1].resource)
				? group[i - 1]
				: i;
		if (strcmp(l->devices[i].resource, resource))
			continue;
		total[group[i]]++;
		if (!busy[i] && !in(must, n_must, i))
			left[group[i]]++;
	}
	while (got < size) {
		size_t best = n;
		for (size_t i = 0; i < n; i++) {
			if (strcmp(l->devices[i].resource, resource) || busy[i] || taken[i] ||
			    in(must, n_must, i))
				continue;
			if (best == n || total[group[i]] - left[group[i]] <
						 total[group[best]] - left[group[best]])
				best = i;
		}
		taken[best] = true;
		left[group[best]]--;
		out[got++] = best;
	}
	free(group);
	free(total);
	free(left);
	free(taken);
	return 0;
}

/* ---- the pod annotation ---- */

json_t *ledger_annotation_parse(const char *text, struct gs_error *err)
{
	json_error_t je;
	json_t *v;

	if (strlen(text) > LEDGER_MAX_ANNOTATION) {
		gs_error_set(err, "%s: longer than %d bytes", LEDGER_ANN_DEVICES,
			     LEDGER_MAX_ANNOTATION);
		return NULL;
	}
	v = json_loads(text, JSON_REJECT_DUPLICATES, &je);
	if (!v) {
		gs_error_set(err,
			     "%s: 1:%d: %s: the annotation must be JSON, as gpushare's admission "
			     "writes it ('gpushare controller' or 'gpushare lab'); "
			     "'gpushare status -o json' shows what it read",
			     LEDGER_ANN_DEVICES, je.column, je.text);
		return NULL;
	}
	if (check_shape(v, err)) {
		gs_error_prefix(err, "%s: ", LEDGER_ANN_DEVICES);
		json_decref(v);
		return NULL;
	}
	return v;
}

char *ledger_annotation_format(const json_t *assigned)
{
	return json_dumps(assigned, JSON_COMPACT | JSON_SORT_KEYS);
}

char *ledger_pod_key(const json_t *pod)
{
	return gs_xasprintf("%s/%s", kobj_text(pod, "metadata.namespace"),
			    kobj_text(pod, "metadata.name"));
}

bool ledger_pod_active(const json_t *pod)
{
	const char *admitted = kobj_annotation(pod, LEDGER_ANN_ADMITTED);
	const char *phase = kobj_text(pod, "status.phase");

	return admitted && !strcmp(admitted, "true") && *kobj_text(pod, "spec.nodeName") &&
	       strcmp(phase, "Succeeded") && strcmp(phase, "Failed");
}

static bool ended(const json_t *pod)
{
	const char *phase = kobj_text(pod, "status.phase");

	return !strcmp(phase, "Succeeded") || !strcmp(phase, "Failed");
}

static void rebuild(struct ledger *l, const json_t *pods, bool vouched,
		    struct gs_warnings *warnings)
{
	size_t i;
	json_t *pod;

	for (size_t d = 0; d < l->n_devices; d++) {
		free(l->devices[d].holder);
		l->devices[d].holder = NULL;
	}
	orphans_clear(l);
	json_array_foreach ((json_t *)pods, i, pod) {
		const char *text = kobj_annotation(pod, LEDGER_ANN_DEVICES);
		struct gs_error e;
		json_t *assigned;
		char *key;

		if (!text || (vouched ? ended(pod) : !ledger_pod_active(pod)) ||
		    strcmp(kobj_text(pod, "spec.nodeName"), l->node))
			continue;
		key = ledger_pod_key(pod);
		assigned = ledger_annotation_parse(text, &e);
		if (!assigned || ledger_hold(l, key, assigned, &e))
			gs_warnings_add(warnings,
					"pod %s on node %s: %s; it counts as holding nothing", key,
					l->node, e.msg);
		json_decref(assigned);
		free(key);
	}
}

void ledger_rebuild(struct ledger *l, const json_t *pods, struct gs_warnings *warnings)
{
	rebuild(l, pods, false, warnings);
}

void ledger_rebuild_admitted(struct ledger *l, const json_t *pods, struct gs_warnings *warnings)
{
	rebuild(l, pods, true, warnings);
}

/* ---- as JSON ---- */

static json_t *resource_counts(const struct ledger *l)
{
	json_t *out = json_object();

	for (size_t i = 0; i < l->n_devices; i++) {
		const char *r = l->devices[i].resource;
		size_t f, n;

		if (json_object_get(out, r))
			continue;
		n = ledger_count(l, r, &f);
		json_object_set_new(out, r,
				    json_pack("{s:I, s:I, s:I}", "registered", (json_int_t)n,
					      "held", (json_int_t)(n - f), "free", (json_int_t)f));
	}
	return out;
}

static void add_namespace(json_t *set, const char *holder)
{
	const char *slash = strchr(holder, '/');
	char *ns = gs_xstrndup(holder, slash ? (size_t)(slash - holder) : strlen(holder));
	size_t i;
	json_t *v;

	json_array_foreach (set, i, v)
		if (!strcmp(json_string_value(v), ns)) {
			free(ns);
			return;
		}
	json_array_append_new(set, json_string(ns));
	free(ns);
}

json_t *ledger_to_json(const struct ledger *l)
{
	json_t *gpus = json_array(), *orphans = json_array();

	for (size_t g = 0; g < l->n_gpus; g++) {
		const struct ledger_gpu *gpu = &l->gpus[g];
		json_t *devs = json_array(), *ns = json_array(), *pods = json_array();
		size_t held = 0, n = 0;

		for (size_t i = 0; i < l->n_devices; i++) {
			const struct ledger_device *d = &l->devices[i];
			json_t *o;

			if (d->gpu != (int)g)
				continue;
			n++;
			o = json_pack("{s:s, s:s, s:o}", "id", d->id, "resource", d->resource,
				      "holder", d->holder ? json_string(d->holder) : json_null());
			if (d->replica >= 0)
				json_object_set_new(o, "replica", json_integer(d->replica));
			if (d->profile)
				json_object_set_new(o, "mig",
						    json_pack("{s:s, s:s, s:i, s:i}", "uuid",
							      d->base, "profile", d->profile,
							      "start", d->mig_start, "memoryMiB",
							      d->mig_memory_mib));
			json_array_append_new(devs, o);
			if (d->holder) {
				size_t k;
				json_t *p;
				bool seen = false;

				held++;
				add_namespace(ns, d->holder);
				json_array_foreach (pods, k, p)
					seen |= !strcmp(json_string_value(p), d->holder);
				if (!seen)
					json_array_append_new(pods, json_string(d->holder));
			}
		}
		json_array_append_new(
			gpus, json_pack("{s:i, s:s, s:s, s:i, s:b, s:I, s:I, s:o, s:o, s:o}",
					"index", gpu->index, "uuid", gpu->uuid, "product",
					gpu->product, "memoryMiB", gpu->memory_mib, "migEnabled",
					gpu->mig_enabled, "held", (json_int_t)held, "free",
					(json_int_t)(n - held), "pods", jsonsort_strings(pods),
					"namespaces", jsonsort_strings(ns), "devices", devs));
	}
	for (size_t i = 0; i < l->n_orphans; i++)
		json_array_append_new(orphans, json_pack("{s:s, s:s, s:s}", "id", l->orphans[i].id,
							 "resource", l->orphans[i].resource,
							 "holder", l->orphans[i].holder));
	return json_pack("{s:s, s:s, s:s, s:b, s:o, s:o, s:o}", "node", l->node, "config",
			 l->config_name, "sharing", dp_sharing_strategy_name(l->sharing),
			 "failRequestsGreaterThanOne", l->fail_over_one, "resources",
			 resource_counts(l), "gpus", gpus, "orphans", orphans);
}
