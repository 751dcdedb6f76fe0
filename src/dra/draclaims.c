#include "dra/draclaims.h"
#include "dra/draalloc.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/escape.h"
#include "base/jsonsort.h"
#include "model/names.h"
#include "dra/draslice.h"
#include "model/isolation.h"
#include "model/kobj.h"
#include "model/quantity.h"
#include "base/strbuf.h"
#include "base/banned.h"

/* ---- reading the objects ---------------------------------------------------------------- */

static size_t n_of(const json_t *arr)
{
	return json_is_array(arr) ? json_array_size(arr) : 0;
}

static const json_t *at(const json_t *arr, size_t i)
{
	return json_array_get(arr, i);
}

static const char *text_of(const json_t *v)
{
	return json_is_string(v) ? json_string_value(v) : "";
}

/*
 * The node's published devices: the gpu.nvidia.com slices whose pool is the
 * node's (the driver names the pool after the node) at the highest
 * generation, only those counting (k8s.io/kubernetes v1.34.4
 * pkg/apis/resource/validation/validation.go). New array of borrowed device objects (incref'd), in
 * the slices' order; *gen the generation, -1 without a slice.
 */
static json_t *node_devices(const char *node, const json_t *slices, long long *gen)
{
	json_t *out = json_array();
	long long best = -1;

	for (size_t pass = 0; pass < 2; pass++)
		for (size_t i = 0; i < n_of(slices); i++) {
			const json_t *s = at(slices, i), *d;
			long long g = json_integer_value(kobj_get(s, "spec.pool.generation"));
			size_t k;

			if (strcmp(kobj_text(s, "spec.driver"), DRASLICE_DRIVER) ||
			    strcmp(kobj_text(s, "spec.nodeName"), node))
				continue;
			if (pass == 0) {
				if (g > best)
					best = g;
				continue;
			}
			if (g != best)
				continue;
			json_array_foreach (kobj_get(s, "spec.devices"), k, d)
				json_array_append(out, (json_t *)d);
		}
	*gen = best;
	return out;
}

static const json_t *find_device(const json_t *devices, const char *name)
{
	for (size_t i = 0; i < n_of(devices); i++)
		if (!strcmp(kobj_text(at(devices, i), "name"), name))
			return at(devices, i);
	return NULL;
}

static const char *attr(const json_t *device, const char *key)
{
	const json_t *a = json_object_get(kobj_map(device, "attributes"), key);
	const char *s = kobj_string(a, "string");

	return s ? s : kobj_string(a, "version");
}

static const char *capacity(const json_t *device, const char *key)
{
	return kobj_string(json_object_get(kobj_map(device, "capacity"), key), "value");
}

static const json_t *find_pod(const json_t *pods, const char *ns, const char *name)
{
	for (size_t i = 0; i < n_of(pods); i++) {
		const json_t *p = at(pods, i);
		if (!strcmp(kobj_text(p, "metadata.name"), name) &&
		    !strcmp(kobj_text(p, "metadata.namespace"), ns))
			return p;
	}
	return NULL;
}

static const json_t *find_named(const json_t *objs, const char *ns, const char *name)
{
	return find_pod(objs, ns, name);
}

static char *key_of(const json_t *obj)
{
	return gs_xasprintf("%s/%s", kobj_text(obj, "metadata.namespace"),
			    kobj_text(obj, "metadata.name"));
}

/* The claim a pod's entry names: resourceClaimName, or the one resourceclaim-controller made. */
static const char *entry_claim_name(const json_t *pod, const json_t *entry)
{
	const char *name = kobj_string(entry, "resourceClaimName");
	const json_t *st;
	size_t i;

	if (name)
		return name;
	json_array_foreach (kobj_get(pod, "status.resourceClaimStatuses"), i, st)
		if (!strcmp(kobj_text(st, "name"), kobj_text(entry, "name")))
			return kobj_string(st, "resourceClaimName");
	return NULL;
}

/* ---- events ----------------------------------------------------------------------------- */

/* When the event last happened; RFC 3339 strings sort by time. */
static const char *event_time(const json_t *ev)
{
	const char *t = kobj_string(ev, "lastTimestamp");

	if (!t)
		t = kobj_string(ev, "eventTime");
	if (!t)
		t = kobj_string(ev, "metadata.creationTimestamp");
	return t ? t : "";
}

/* The message names claim `name` ("ResourceClaim <name>:" or "ResourceClaim <name> "). */
static bool names_claim(const char *msg, const char *name)
{
	size_t n = strlen(name);

	for (const char *p = strstr(msg, "ResourceClaim "); p;
	     p = strstr(p + 1, "ResourceClaim ")) {
		const char *q = p + strlen("ResourceClaim ");
		if (!strncmp(q, name, n) && (q[n] == ':' || q[n] == ' ' || !q[n]))
			return true;
	}
	return false;
}

/* The message names some claim by name ("pod ...: ResourceClaim not created yet" names none). */
static bool names_some_claim(const char *msg)
{
	for (const char *p = strstr(msg, "ResourceClaim "); p;
	     p = strstr(p + 1, "ResourceClaim ")) {
		const char *q = p + strlen("ResourceClaim ");
		if (strncmp(q, "not ", 4))
			return true;
	}
	return false;
}

struct evsum {
	const char *message; /* the latest, NULL = none */
	const char *type;
	const char *when;
	long long count; /* occurrences, summed */
};

/*
 * Events of `reason` about the pod (its namespace, name and, when both
 * carry one, uid); with claim set, only those naming that claim or none.
 */
static struct evsum pod_events(const json_t *events, const json_t *pod, const char *reason,
			       const char *claim)
{
	struct evsum s = {.message = NULL, .type = NULL, .when = "", .count = 0};
	const char *uid = kobj_text(pod, "metadata.uid");

	for (size_t i = 0; i < n_of(events); i++) {
		const json_t *ev = at(events, i);
		const json_t *io = kobj_map(ev, "involvedObject");
		const char *msg = kobj_text(ev, "message"), *ouid = kobj_text(io, "uid");
		long long c = json_integer_value(json_object_get(ev, "count"));

		if (strcmp(kobj_text(ev, "reason"), reason) ||
		    strcmp(kobj_text(io, "kind"), "Pod") ||
		    strcmp(kobj_text(io, "name"), kobj_text(pod, "metadata.name")) ||
		    strcmp(kobj_text(io, "namespace"), kobj_text(pod, "metadata.namespace")) ||
		    (*uid && *ouid && strcmp(uid, ouid)))
			continue;
		if (claim && names_some_claim(msg) && !names_claim(msg, claim))
			continue;
		s.count += c > 0 ? c : 1;
		if (!s.message || strcmp(event_time(ev), s.when) >= 0) {
			s.message = msg;
			s.type = kobj_text(ev, "type");
			s.when = event_time(ev);
		}
	}
	return s;
}

/* ---- the prepare verdict ---------------------------------------------------------------- */

enum prep_state { PREP_GONE, PREP_UNBOUND, PREP_PENDING, PREP_PREPARED, PREP_FAILED };

static const char *const prep_names[] = {"gone", "unbound", "pending", "prepared", "failed"};

struct prep {
	enum prep_state st;
	const char *message; /* FAILED: why; PREPARED: the last refusal before, if any */
	long long refusals;  /* FailedPrepareDynamicResources events counted */
};

/*
 * What the kubelet's stand-in (src/daemon/draadmit.c) decided for the pod's
 * claim: prepared once it admitted the pod (gpushare.io/admitted) or the
 * pod runs; failed when the pod was refused (phase Failed) or, still
 * Pending, carries a FailedPrepareDynamicResources event for the claim;
 * pending when bound and undecided.
 */
static struct prep pod_prepare(const json_t *pod, const char *claim, const json_t *events)
{
	struct prep p = {.st = PREP_GONE, .message = NULL, .refusals = 0};
	const char *adm, *phase;
	struct evsum ev;

	if (!pod)
		return p;
	p.st = PREP_UNBOUND;
	if (!*kobj_text(pod, "spec.nodeName"))
		return p;
	adm = kobj_annotation(pod, LEDGER_ANN_ADMITTED);
	phase = kobj_text(pod, "status.phase");
	ev = pod_events(events, pod, DRACLAIMS_EVENT_PREPARE, claim);
	p.refusals = ev.count;
	p.message = ev.message;
	if ((adm && !strcmp(adm, "true")) || !strcmp(phase, "Running") ||
	    !strcmp(phase, "Succeeded"))
		p.st = PREP_PREPARED;
	else if (!strcmp(phase, "Failed")) {
		p.st = PREP_FAILED;
		p.message = kobj_text(pod, "status.message");
	} else
		p.st = ev.message ? PREP_FAILED : PREP_PENDING;
	return p;
}

/* ---- sharing ------------------------------------------------------------------------------ */

/* The opaque gpu.nvidia.com config that applies to request `req`, the last one winning
 * (dra-driver-nvidia-gpu v25.12.0 cmd/gpu-kubelet-plugin/device_state.go prepareDevices). */
static const json_t *config_for(const json_t *claim, const char *req)
{
	const json_t *c, *win = NULL;
	size_t i;

	json_array_foreach (kobj_get(claim, "status.allocation.devices.config"), i, c) {
		const json_t *reqs = json_object_get(c, "requests"), *r;
		size_t k;
		bool hit = !n_of(reqs);

		if (strcmp(kobj_text(c, "opaque.driver"), DRASLICE_DRIVER))
			continue;
		json_array_foreach (reqs, k, r)
			hit |= !strcmp(text_of(r), req);
		if (hit)
			win = kobj_get(c, "opaque.parameters");
	}
	return win;
}

/*
 * Several pods on one claim: they use the same device(s). With the
 * driver's MPS config they share an MPS server; otherwise their contexts
 * are time-sliced on the device (TimeSlicing config or none: the GPU's
 * default compute mode). Either way one memory and one fault domain.
 */
static json_t *claim_sharing(const json_t *claim, const char *key, const json_t *devices,
			     const json_t *pods)
{
	const char *req = kobj_text(
		json_array_get(kobj_get(claim, "status.allocation.devices.results"), 0), "request");
	const json_t *cfg = config_for(claim, req);
	const char *strategy = kobj_text(cfg, "sharing.strategy");
	bool mps = !strcmp(strategy, "MPS");
	const struct isolation_method *m = isolation_method_find(mps ? "mps" : "time-slicing");

	return json_pack("{s:s, s:O, s:O, s:[s], s:s, s:s, s:s, s:s, s:s, s:s}", "claim", key,
			 "devices", devices, "pods", pods, "namespaces",
			 kobj_text(claim, "metadata.namespace"), "method",
			 mps ? "mps" : "time-slicing", "what",
			 *strategy ? (mps ? "one claim, the driver's MPS config"
					  : "one claim, the driver's TimeSlicing config")
				   : "one claim, no sharing config: the device's default "
				     "time-slicing",
			 "memory", m->memory, "memoryWhy",
			 mps ? m->memory_why
			     : "the pods of one claim use the same device and its undivided "
			       "memory; the driver sets no limit per pod",
			 "fault", m->fault, "faultWhy",
			 mps ? m->fault_why
			     : "the pods' contexts are time-sliced on one device; a fault that "
			       "resets the GPU hits every pod of the claim");
}

static void add_unique(json_t *set, const char *s)
{
	size_t i;
	json_t *v;

	json_array_foreach (set, i, v)
		if (!strcmp(json_string_value(v), s))
			return;
	json_array_append_new(set, json_string(s));
}

/* ---- shared counters (DRAPartitionableDevices) ------------------------------------------- */

/* A counter's value; 0 when it has none or it is no quantity. */
static int64_t counter_value(const json_t *c)
{
	const json_t *value = json_object_get(c, "value");
	struct quantity q;
	struct gs_error e;
	int64_t v = 0;

	if (!value || quantity_from_json(&q, value, &e) < 0 || quantity_value(&q, &v) < 0)
		return 0;
	return v;
}

/* left["<set>/<counter>"] = what the node's slices offer (sharedCounters). */
static json_t *counters_offered(const char *node, const json_t *slices)
{
	json_t *left = json_object();
	long long best = -1;

	for (size_t pass = 0; pass < 2; pass++)
		for (size_t i = 0; i < n_of(slices); i++) {
			const json_t *sl = at(slices, i), *set;
			long long g = json_integer_value(kobj_get(sl, "spec.pool.generation"));
			size_t k;

			if (strcmp(kobj_text(sl, "spec.driver"), DRASLICE_DRIVER) ||
			    strcmp(kobj_text(sl, "spec.nodeName"), node))
				continue;
			if (pass == 0) {
				best = g > best ? g : best;
				continue;
			}
			if (g != best)
				continue;
			json_array_foreach (kobj_get(sl, "spec.sharedCounters"), k, set) {
				const char *cn;
				json_t *c;
				json_object_foreach ((json_t *)kobj_map(set, "counters"), cn, c) {
					char *key =
						gs_xasprintf("%s/%s", kobj_text(set, "name"), cn);
					json_object_set_new(left, key,
							    json_integer(counter_value(c)));
					free(key);
				}
			}
		}
	return left;
}

/*
 * Walk a device's consumesCounters: with take, subtract them from left;
 * else return the first counter it needs more of than is left (NULL: it
 * fits). The returned name is "<set>/<counter>", allocated.
 */
static char *counters_walk(const json_t *device, json_t *left, bool take)
{
	const json_t *cc;
	size_t i;

	json_array_foreach (kobj_get(device, "consumesCounters"), i, cc) {
		const char *cn;
		json_t *c;
		json_object_foreach ((json_t *)kobj_map(cc, "counters"), cn, c) {
			char *key = gs_xasprintf("%s/%s", kobj_text(cc, "counterSet"), cn);
			json_int_t have = json_integer_value(json_object_get(left, key));
			int64_t need = counter_value(c);

			if (take)
				json_object_set_new(left, key, json_integer(have - need));
			else if (need > have)
				return key;
			free(key);
		}
	}
	return NULL;
}

/* ---- consumable capacity (DRAConsumableCapacity) ------------------------------------------ */

/*
 * The names of a capacity map in the order status shows them: shares (what
 * the driver's ConsumableShares divides a card into) first, then the others
 * by name. New array.
 */
static json_t *capacity_names(const json_t *caps)
{
	json_t *names = json_array(), *v;
	const char *k;

	json_object_foreach ((json_t *)caps, k, v)
		if (strcmp(k, "shares"))
			json_array_append_new(names, json_string(k));
	jsonsort_strings(names);
	if (json_object_get(caps, "shares"))
		json_array_insert_new(names, 0, json_string("shares"));
	return names;
}

/* A result's consumedCapacity, its values verbatim, in capacity_names order. New object. */
static json_t *consumed_copy(const json_t *consumed)
{
	json_t *names = capacity_names(consumed), *out = json_object(), *n;
	size_t i;

	json_array_foreach (names, i, n)
		json_object_set_new(
			out, json_string_value(n),
			json_deep_copy(json_object_get(consumed, json_string_value(n))));
	json_decref(names);
	return out;
}

/*
 * A result with a shareID (the scheduler allocated one share of a device
 * with allowMultipleAllocations) onto the device's "shares".
 */
static void share_add(json_t *dj, const char *claim, const json_t *r)
{
	json_t *shares = json_object_get(dj, "shares");

	if (!shares) {
		shares = json_array();
		json_object_set_new(dj, "shares", shares);
	}
	json_array_append_new(shares,
			      json_pack("{s:s, s:s, s:s, s:o}", "claim", claim, "request",
					kobj_text(r, "request"), "shareID", kobj_text(r, "shareID"),
					"consumedCapacity",
					consumed_copy(json_object_get(r, "consumedCapacity"))));
}

/* The claim's pods on its shares of the device; the device's claims and pods, their union. */
static void share_pods(json_t *dj, const char *claim, const json_t *pods)
{
	json_t *claims = json_object_get(dj, "claims"), *all = json_object_get(dj, "pods"), *sh, *p;
	size_t i, k;
	bool mine = false;

	json_array_foreach (json_object_get(dj, "shares"), i, sh)
		if (!strcmp(kobj_text(sh, "claim"), claim)) {
			json_object_set_new(sh, "pods", json_deep_copy(pods));
			mine = true;
		}
	if (!mine)
		return;
	if (!claims) {
		claims = json_array();
		json_object_set_new(dj, "claims", claims);
		all = json_array();
		json_object_set_new(dj, "pods", all);
	}
	add_unique(claims, claim);
	json_array_foreach (pods, k, p)
		add_unique(all, json_string_value(p));
}

/*
 * What is left of each capacity of a shared device: the published value
 * minus what its shares consumed (the allocator keeps their sum at or
 * below the value, k8s.io/api resource/v1 DeviceRequestAllocationResult.
 * ConsumedCapacity), printed as Quantity.String(). A value or a consumed
 * amount that does not parse leaves the capacity out. Sets "capacity"
 * (the published values counted) and "left" on dj.
 */
static void share_left(json_t *dj, const json_t *published)
{
	const json_t *caps = kobj_map(published, "capacity");
	json_t *names = capacity_names(caps), *n, *sh;
	json_t *total = json_object(), *left = json_object();
	size_t i, k;

	json_array_foreach (names, i, n) {
		const char *cap = json_string_value(n);
		struct quantity value, sum, q;
		char buf[QUANTITY_STR_MAX];
		struct gs_error e;
		const json_t *vj = kobj_get(json_object_get(caps, cap), "value");
		bool ok = vj && quantity_from_json(&value, vj, &e) == 0;

		quantity_from_int64(&sum, 0, QUANTITY_DECIMAL_SI);
		json_array_foreach (json_object_get(dj, "shares"), k, sh) {
			const json_t *c =
				json_object_get(json_object_get(sh, "consumedCapacity"), cap);
			if (ok && c)
				ok = quantity_from_json(&q, c, &e) == 0 &&
				     quantity_add(&sum, &sum, &q, &e) == 0;
		}
		if (!ok || quantity_sub(&q, &value, &sum, &e) < 0)
			continue;
		json_object_set_new(total, cap,
				    json_string(quantity_string(&value, buf, sizeof(buf))));
		json_object_set_new(left, cap, json_string(quantity_string(&q, buf, sizeof(buf))));
	}
	json_decref(names);
	json_object_set_new(dj, "capacity", total);
	json_object_set_new(dj, "left", left);
}

/* ---- status of one node ------------------------------------------------------------------- */

/* "gpu-3..." -> 3; -1 when the name is not the driver's. */
static long gpu_minor(const char *name)
{
	char *end;
	long m;

	if (strncmp(name, "gpu-", 4) || name[4] < '0' || name[4] > '9')
		return -1;
	m = strtol(name + 4, &end, 10);
	return *end == '\0' || *end == '-' ? m : -1;
}

static json_t *device_json(const json_t *d)
{
	const char *profile = attr(d, "profile"), *parent = attr(d, "parentUUID");
	json_t *o = json_pack("{s:s, s:I, s:s, s:s, s:s, s:s}", "name", kobj_text(d, "name"), "gpu",
			      (json_int_t)gpu_minor(kobj_text(d, "name")), "type",
			      attr(d, "type") ? attr(d, "type") : "", "product",
			      attr(d, "productName") ? attr(d, "productName") : "", "uuid",
			      attr(d, "uuid") ? attr(d, "uuid") : "", "memory",
			      capacity(d, "memory") ? capacity(d, "memory") : "");

	if (profile)
		json_object_set_new(o, "profile", json_string(profile));
	if (parent)
		json_object_set_new(o, "parentUUID", json_string(parent));
	json_object_set_new(o, "claim", json_null());
	return o;
}

/* Per claim: the pods it is reserved for, each with its prepare verdict; the claim's own. */
static void claim_prepare(const json_t *claim, const struct draclaims_objects *o, json_t *out)
{
	json_t *pods = json_array(), *per = json_array();
	const json_t *r;
	size_t i;
	const char *ns = kobj_text(claim, "metadata.namespace");
	const char *name = kobj_text(claim, "metadata.name");
	const char *fail_msg = NULL, *before = NULL;
	bool any_failed = false, any_prepared = false, any_pending = false;
	long long refusals = 0;

	json_array_foreach (kobj_get(claim, "status.reservedFor"), i, r) {
		const json_t *pod;
		struct prep p;
		char *key;
		json_t *e;

		if (strcmp(kobj_text(r, "resource"), "pods"))
			continue;
		pod = find_pod(o->pods, ns, kobj_text(r, "name"));
		p = pod_prepare(pod, name, o->events);
		key = gs_xasprintf("%s/%s", ns, kobj_text(r, "name"));
		json_array_append_new(pods, json_string(key));
		e = json_pack("{s:s, s:s}", "pod", key, "prepare", prep_names[p.st]);
		if (p.st == PREP_FAILED) {
			json_object_set_new(e, "message", json_string(p.message));
			if (!fail_msg)
				fail_msg = p.message;
			any_failed = true;
		} else if (p.st == PREP_PREPARED) {
			any_prepared = true;
			if (p.message && !before)
				before = p.message;
		} else if (p.st == PREP_PENDING)
			any_pending = true;
		if (p.refusals)
			json_object_set_new(e, "refusals", json_integer(p.refusals));
		refusals += p.refusals;
		json_array_append_new(per, e);
		free(key);
	}
	json_object_set_new(out, "pods", pods);
	json_object_set_new(out, "shared", json_boolean(json_array_size(pods) > 1));
	json_object_set_new(out, "prepare",
			    json_string(any_failed		? "failed"
					: any_prepared		? "prepared"
					: any_pending		? "pending"
					: json_array_size(pods) ? "unbound"
								: "unreserved"));
	json_object_set_new(out, "message", any_failed ? json_string(fail_msg) : json_null());
	json_object_set_new(out, "lastRefusal",
			    !any_failed && before ? json_string(before) : json_null());
	json_object_set_new(out, "refusals", json_integer(refusals));
	json_object_set_new(out, "podPrepare", per);
}

/* MIG devices of one parent held by claims of different namespaces: kept apart by MIG. */
static void mig_sharing(const json_t *devices, json_t *sharing)
{
	size_t i, j;
	const json_t *d;

	json_array_foreach (devices, i, d) {
		const char *parent = kobj_string(d, "parentUUID");
		json_t *ns, *names;
		bool seen = false;

		if (!parent || !kobj_string(d, "claim"))
			continue;
		for (j = 0; j < i && !seen; j++) {
			const json_t *d2 = json_array_get(devices, j);
			seen = kobj_string(d2, "claim") &&
			       !strcmp(kobj_text(d2, "parentUUID"), parent);
		}
		if (seen)
			continue;
		ns = json_array();
		names = json_array();
		for (j = i; j < json_array_size(devices); j++) {
			const json_t *d2 = json_array_get(devices, j);
			const char *c = kobj_string(d2, "claim"), *slash;
			char *n;

			if (!c || strcmp(kobj_text(d2, "parentUUID"), parent))
				continue;
			json_array_append_new(names, json_string(kobj_text(d2, "name")));
			slash = strchr(c, '/');
			n = gs_xstrndup(c, slash ? (size_t)(slash - c) : strlen(c));
			add_unique(ns, n);
			free(n);
		}
		if (json_array_size(ns) > 1) {
			const struct isolation_method *m = isolation_method_find("mig");
			jsonsort_strings(ns);
			json_array_append_new(
				sharing, json_pack("{s:s, s:o, s:o, s:s, s:s, s:s, s:s, s:s, s:s}",
						   "parentUUID", parent, "devices", names,
						   "namespaces", ns, "method", "mig", "what",
						   "different MIG devices of one GPU", "memory",
						   m->memory, "memoryWhy", m->memory_why, "fault",
						   m->fault, "faultWhy", m->fault_why));
		} else {
			json_decref(ns);
			json_decref(names);
		}
	}
}

json_t *draclaims_node_status(const json_t *node, const struct draclaims_objects *o)
{
	const char *name = kobj_text(node, "metadata.name");
	const char *gates = kobj_annotation(node, DRAPREPARE_ANNOTATION_GATES);
	long long gen;
	json_t *devs = node_devices(name, o->slices, &gen);
	json_t *devices = json_array(), *claims = json_array(), *free_ = json_array();
	json_t *sharing = json_array(), *orphans = json_array(), *out;
	size_t i, k;
	json_t *d;
	long long held = 0;

	json_array_foreach (devs, i, d)
		json_array_append_new(devices, device_json(d));
	for (i = 0; i < n_of(o->claims); i++) {
		const json_t *c = at(o->claims, i), *r;
		json_t *results = json_array(), *names = json_array(), *cj;
		char *key = key_of(c);

		json_array_foreach (kobj_get(c, "status.allocation.devices.results"), k, r) {
			json_t *dj = NULL, *res;
			size_t m;
			json_t *x;

			if (strcmp(kobj_text(r, "driver"), DRASLICE_DRIVER) ||
			    strcmp(kobj_text(r, "pool"), name))
				continue;
			res = json_pack("{s:s, s:s, s:s}", "device", kobj_text(r, "device"),
					"request", kobj_text(r, "request"), "pool",
					kobj_text(r, "pool"));
			if (kobj_string(r, "shareID")) {
				json_object_set_new(res, "shareID",
						    json_string(kobj_text(r, "shareID")));
				json_object_set_new(
					res, "consumedCapacity",
					consumed_copy(json_object_get(r, "consumedCapacity")));
			}
			json_array_append_new(results, res);
			json_array_append_new(names, json_string(kobj_text(r, "device")));
			json_array_foreach (devices, m, x)
				if (!strcmp(kobj_text(x, "name"), kobj_text(r, "device")))
					dj = x;
			if (dj && kobj_string(r, "shareID"))
				share_add(dj, key, r);
			else if (dj) {
				json_object_set_new(dj, "claim", json_string(key));
				json_object_set_new(dj, "request",
						    json_string(kobj_text(r, "request")));
			} else {
				json_array_append_new(orphans,
						      json_pack("{s:s, s:s}", "claim", key,
								"device", kobj_text(r, "device")));
			}
		}
		if (!json_array_size(results)) {
			json_decref(results);
			json_decref(names);
			free(key);
			continue;
		}
		cj = json_pack("{s:s, s:s, s:o}", "claim", key, "uid", kobj_text(c, "metadata.uid"),
			       "devices", results);
		claim_prepare(c, o, cj);
		json_array_foreach (devices, k, d) {
			if (!strcmp(kobj_text(d, "claim"), key))
				json_object_set(d, "pods", json_object_get(cj, "pods"));
			share_pods(d, key, json_object_get(cj, "pods"));
		}
		if (json_array_size(json_object_get(cj, "pods")) > 1)
			json_array_append_new(
				sharing, claim_sharing(c, key, names, json_object_get(cj, "pods")));
		json_array_append_new(claims, cj);
		json_decref(names);
		free(key);
	}
	/*
	 * With DRAPartitionableDevices devices share counters: an unallocated
	 * device whose counters the allocated ones used up cannot be allocated
	 * (the allocator's check); it is blocked, not free.
	 */
	json_t *left = counters_offered(name, o->slices), *blocked = json_array();
	json_t *shared = json_array();
	json_array_foreach (devices, i, d)
		if (kobj_string(d, "claim") || json_object_get(d, "shares"))
			free(counters_walk(json_array_get(devs, i), left, true));
	json_array_foreach (devices, i, d) {
		char *by;
		if (json_object_get(d, "shares")) {
			share_left(d, json_array_get(devs, i));
			json_array_append_new(shared, json_string(kobj_text(d, "name")));
		}
		if (kobj_string(d, "claim") || json_object_get(d, "shares")) {
			held++;
			continue;
		}
		by = json_object_size(left) ? counters_walk(json_array_get(devs, i), left, false)
					    : NULL;
		if (by) {
			json_object_set_new(d, "blockedBy", json_string(by));
			json_array_append_new(blocked, json_string(kobj_text(d, "name")));
			free(by);
		} else
			json_array_append_new(free_, json_string(kobj_text(d, "name")));
	}
	json_decref(left);
	mig_sharing(devices, sharing);
	out = json_pack("{s:s, s:s, s:s, s:s, s:o, s:o, s:I, s:I, s:o, s:o, s:o, s:o}", "node",
			name, "path", DRASLICE_PATH_DRA, "driver", DRASLICE_DRIVER, "pool", name,
			"generation", gen >= 0 ? json_integer(gen) : json_null(), "gates",
			gates ? json_string(gates) : json_null(), "total",
			(json_int_t)json_array_size(devices), "held", (json_int_t)held, "free",
			free_, "devices", devices, "claims", claims, "sharing", sharing);
	json_object_set_new(out, "orphans", orphans);
	json_object_set_new(out, "blocked", blocked);
	if (json_array_size(shared))
		json_object_set_new(out, "shared", shared);
	else
		json_decref(shared);
	json_object_set_new(
		out, "failure",
		gen < 0 ? json_string("no gpu.nvidia.com ResourceSlice is published for "
				      "the node (gpushare sync or the controller "
				      "publishes it)")
			: json_null());
	json_decref(devs);
	return out;
}

/* ---- explain -------------------------------------------------------------------------------- */

static void add_selectors(struct strbuf *sb, const json_t *req)
{
	const json_t *s;
	size_t i;

	json_array_foreach (json_object_get(req, "selectors"), i, s)
		escape_addf(sb, "%s%s", i ? " and " : " where ", kobj_text(s, "cel.expression"));
}

/* "exactly 1 device of class gpu.nvidia.com where ..." of an exactly or a subrequest. */
static void add_exactly(struct strbuf *sb, const json_t *req)
{
	const char *mode = kobj_text(req, "allocationMode");
	json_int_t count = json_integer_value(json_object_get(req, "count"));

	if (!strcmp(mode, "All"))
		escape_addf(sb, "all devices of class %s", kobj_text(req, "deviceClassName"));
	else {
		if (count <= 0)
			count = 1; /* the API's default */
		escape_addf(sb, "%lld device%s of class %s", (long long)count,
			    count == 1 ? "" : "s", kobj_text(req, "deviceClassName"));
	}
	add_selectors(sb, req);
	/* DRAConsumableCapacity: what of a shared device it consumes. */
	const char *k;
	json_t *v;
	size_t n = 0;
	json_object_foreach ((json_t *)kobj_map(req, "capacity.requests"), k, v)
		escape_addf(sb, "%s%s %s", n++ ? ", " : ", capacity ", k,
			    json_is_string(v) ? json_string_value(v) : "?");
	if (json_is_true(json_object_get(req, "adminAccess")))
		strbuf_addstr(sb, " (admin access)");
}

/* The requests, constraints and configs of a claim spec, one line each. */
static void add_spec(struct strbuf *sb, const json_t *spec, const char *from)
{
	const json_t *r, *c;
	size_t i, k;

	json_array_foreach (kobj_get(spec, "devices.requests"), i, r) {
		escape_addf(sb, "    request %s%s: ", kobj_text(r, "name"), from);
		if (kobj_map(r, "exactly"))
			add_exactly(sb, kobj_map(r, "exactly"));
		else if (json_is_array(json_object_get(r, "firstAvailable"))) {
			const json_t *sub;
			strbuf_addstr(sb, "the first that can be allocated of ");
			json_array_foreach (json_object_get(r, "firstAvailable"), k, sub) {
				escape_addf(sb, "%s%s/%s: ", k ? "; " : "", kobj_text(r, "name"),
					    kobj_text(sub, "name"));
				add_exactly(sb, sub);
			}
		} else
			strbuf_addstr(sb, "(no exactly or firstAvailable)");
		strbuf_addch(sb, '\n');
	}
	json_array_foreach (kobj_get(spec, "devices.constraints"), i, c) {
		const json_t *x;
		struct strbuf reqs = STRBUF_INIT;
		json_array_foreach (json_object_get(c, "requests"), k, x)
			strbuf_addsep(&reqs, ", ", text_of(x));
		escape_addf(sb, "    constraint: %s the same %s\n",
			    reqs.len ? reqs.buf : "every request's devices have",
			    kobj_text(c, "matchAttribute"));
		strbuf_release(&reqs);
	}
	json_array_foreach (kobj_get(spec, "devices.config"), i, c) {
		const json_t *x;
		struct strbuf reqs = STRBUF_INIT;
		char *params = json_dumps(kobj_get(c, "opaque.parameters"),
					  JSON_COMPACT | JSON_SORT_KEYS | JSON_ENCODE_ANY);
		json_array_foreach (json_object_get(c, "requests"), k, x)
			strbuf_addsep(&reqs, ", ", text_of(x));
		escape_addf(sb, "    config for %s (driver %s): %s\n",
			    reqs.len ? reqs.buf : "every request", kobj_text(c, "opaque.driver"),
			    params ? params : "{}");
		free(params);
		strbuf_release(&reqs);
	}
}

/* "Tesla T4, 15Gi" / "NVIDIA A100-SXM4-80GB MIG 1g.10gb, 9728Mi" */
static void add_device_desc(struct strbuf *sb, const json_t *d)
{
	const char *profile = attr(d, "profile"), *mem = capacity(d, "memory");

	escape_line_str(sb, attr(d, "productName") ? attr(d, "productName") : "?");
	if (profile)
		escape_addf(sb, " MIG %s", profile);
	if (mem)
		escape_addf(sb, ", %s", mem);
}

/* The node the allocation is pinned to (nodeSelector matchFields metadata.name). */
static const char *alloc_node(const json_t *claim)
{
	const json_t *t = json_array_get(
		kobj_get(claim, "status.allocation.nodeSelector.nodeSelectorTerms"), 0);
	const json_t *f;
	size_t i;

	json_array_foreach (json_object_get(t, "matchFields"), i, f)
		if (!strcmp(kobj_text(f, "key"), "metadata.name"))
			return text_of(json_array_get(json_object_get(f, "values"), 0));
	return NULL;
}

static void add_allocation(struct strbuf *sb, const json_t *claim, const json_t *slices)
{
	const char *node = alloc_node(claim);
	const json_t *r;
	size_t i;

	escape_addf(sb, "    allocated%s%s:\n", node ? " on " : "", node ? node : "");
	json_array_foreach (kobj_get(claim, "status.allocation.devices.results"), i, r) {
		long long gen;
		json_t *devs = node_devices(kobj_text(r, "pool"), slices, &gen);
		const json_t *d = find_device(devs, kobj_text(r, "device"));

		escape_addf(sb, "      %s (request %s, driver %s, pool %s)", kobj_text(r, "device"),
			    kobj_text(r, "request"), kobj_text(r, "driver"), kobj_text(r, "pool"));
		if (d) {
			strbuf_addstr(sb, ": ");
			add_device_desc(sb, d);
		} else if (!strcmp(kobj_text(r, "driver"), DRASLICE_DRIVER))
			strbuf_addstr(sb, ": not in the node's published slice");
		strbuf_addch(sb, '\n');
		json_decref(devs);
	}
}

static void add_reserved(struct strbuf *sb, const json_t *claim)
{
	const json_t *r;
	size_t i, n = 0;
	struct strbuf who = STRBUF_INIT;

	json_array_foreach (kobj_get(claim, "status.reservedFor"), i, r) {
		escape_addf(&who, "%s%s/%s", n ? ", " : "", kobj_text(claim, "metadata.namespace"),
			    kobj_text(r, "name"));
		n++;
	}
	if (!n)
		strbuf_addstr(sb, "    reserved for: no pod yet\n");
	else
		escape_addf(sb, "    reserved for: %s\n", who.buf);
	if (n > 1) {
		const char *req = kobj_text(
			json_array_get(kobj_get(claim, "status.allocation.devices.results"), 0),
			"request");
		const char *st = kobj_text(config_for(claim, req), "sharing.strategy");
		escape_addf(
			sb,
			"    shared: %zu pods use this claim's device%s (%s): one memory and one "
			"fault domain, no isolation between them\n",
			n,
			json_array_size(kobj_get(claim, "status.allocation.devices.results")) == 1
				? ""
				: "s",
			!strcmp(st, "MPS")	     ? "the driver's MPS"
			: !strcmp(st, "TimeSlicing") ? "the driver's TimeSlicing"
						     : "no sharing config: time-sliced");
	}
	strbuf_release(&who);
}

static void add_prepare(struct strbuf *sb, const json_t *pod, const json_t *claim,
			const json_t *events, bool *trouble)
{
	struct prep p = pod_prepare(pod, kobj_text(claim, "metadata.name"), events);
	struct evsum ev =
		pod_events(events, pod, DRACLAIMS_EVENT_PREPARE, kobj_text(claim, "metadata.name"));

	switch (p.st) {
	case PREP_PREPARED:
		escape_addf(sb, "    prepare: prepared on %s", kobj_text(pod, "spec.nodeName"));
		if (p.refusals)
			escape_addf(sb, "; refused %lld time%s before, the last: %s", p.refusals,
				    p.refusals == 1 ? "" : "s", p.message);
		strbuf_addch(sb, '\n');
		break;
	case PREP_FAILED:
		*trouble = true;
		if (ev.message && !strcmp(kobj_text(pod, "status.phase"), "Pending"))
			escape_addf(
				sb,
				"    prepare: refused on %s, the pod stays ContainerCreating: %s "
				"%s (%lld time%s): %s\n",
				kobj_text(pod, "spec.nodeName"), ev.type, DRACLAIMS_EVENT_PREPARE,
				ev.count, ev.count == 1 ? "" : "s", ev.message);
		else
			escape_addf(sb, "    prepare: the pod failed: %s\n", p.message);
		break;
	case PREP_PENDING:
		escape_addf(sb, "    prepare: not yet (bound to %s, not yet prepared)\n",
			    kobj_text(pod, "spec.nodeName"));
		break;
	default:
		break;
	}
}

/*
 * An unallocated claim of a pod not yet bound: why no device takes it, device
 * by device, from the slices less what the allocated claims hold (draalloc,
 * the scheduler's allocator offline); nothing for a claim it does not judge.
 */
static void add_why_unallocated(struct strbuf *sb, const json_t *claim,
				const struct draclaims_objects *o)
{
	struct draalloc *a = draalloc_new(o->slices);
	struct draalloc_result res;
	struct gs_error ignored; /* claim is a ResourceClaim */

	/* A List's items carry no kind; the allocator wants a ResourceClaim. */
	json_t *c = json_copy((json_t *)claim);

	json_object_set_new(c, "kind", json_string("ResourceClaim"));
	for (size_t i = 0; i < n_of(o->claims); i++)
		if (kobj_map(at(o->claims, i), "status.allocation"))
			draalloc_take(a, at(o->claims, i));
	if (draalloc_claim_on(a, c, NULL, false, &res, &ignored) == 0) {
		const char *nl = res.why ? strchr(res.why, '\n') : NULL;
		if (res.outcome == DRAALLOC_UNSCHEDULABLE && nl) {
			strbuf_addstr(sb, "    why, device by device (gpushare's allocator):");
			for (const char *l = nl + 1; *l;) {
				const char *end = strchr(l, '\n');
				int len = end ? (int)(end - l) : (int)strlen(l);
				escape_addf(sb, "\n      %.*s", len, l);
				l = end ? end + 1 : l + len;
			}
			strbuf_addch(sb, '\n');
		} else if (res.outcome == DRAALLOC_ALLOCATED) {
			escape_addf(sb,
				    "    %s has room for it now: the scheduler takes the pod "
				    "again when a claim or a slice changes\n",
				    res.node);
		}
	}
	draalloc_result_release(&res);
	draalloc_free(a);
	json_decref(c);
}

char *draclaims_explain_pod(const json_t *pod, const struct draclaims_objects *o, bool *trouble)
{
	const json_t *entries = kobj_get(pod, "spec.resourceClaims"), *e;
	const char *ns = kobj_text(pod, "metadata.namespace");
	struct strbuf sb = STRBUF_INIT;
	bool bad = false;
	size_t i;

	if (!n_of(entries)) {
		if (trouble)
			*trouble = false;
		return gs_xstrdup("");
	}
	escape_addf(&sb, "claims (DRA, resource.k8s.io/v1): %zu\n", n_of(entries));
	json_array_foreach (entries, i, e) {
		const char *tmpl = kobj_string(e, "resourceClaimTemplateName");
		const char *cname = entry_claim_name(pod, e);
		const json_t *claim = cname ? find_named(o->claims, ns, cname) : NULL;
		const json_t *t = tmpl ? find_named(o->templates, ns, tmpl) : NULL;

		if (tmpl && cname)
			escape_addf(&sb, "  %s: ResourceClaim %s/%s, made from template %s\n",
				    kobj_text(e, "name"), ns, cname, tmpl);
		else if (tmpl)
			escape_addf(&sb, "  %s: from template %s: no ResourceClaim made yet\n",
				    kobj_text(e, "name"), tmpl);
		else
			escape_addf(&sb, "  %s: ResourceClaim %s/%s\n", kobj_text(e, "name"), ns,
				    cname ? cname : "");
		if (claim)
			add_spec(&sb, kobj_map(claim, "spec"), "");
		else if (t)
			add_spec(&sb, kobj_map(t, "spec.spec"), " (the template's)");
		if (!claim) {
			bad = true;
			if (tmpl) {
				struct evsum ev =
					pod_events(o->events, pod, DRACLAIMS_EVENT_CREATE, NULL);
				if (ev.message)
					escape_addf(
						&sb,
						"    resourceclaim-controller could not create it: "
						"%s %s (%lld time%s): %s\n",
						ev.type, DRACLAIMS_EVENT_CREATE, ev.count,
						ev.count == 1 ? "" : "s", ev.message);
				else if (cname)
					escape_addf(&sb, "    the claim %s is gone\n", cname);
				else
					strbuf_addstr(
						&sb, "    resourceclaim-controller has not made it "
						     "(it runs in kube-controller-manager)\n");
			} else {
				escape_addf(&sb,
					    "    not found: no ResourceClaim %s in namespace %s (a "
					    "claim refused at creation, by a quota for one, never "
					    "exists)\n",
					    cname ? cname : "", ns);
			}
			strbuf_addstr(&sb, "    the scheduler does not try the pod until the claim "
					   "exists (DynamicResources PreEnqueue): no PodScheduled "
					   "condition, no event\n");
			continue;
		}
		if (kobj_string(claim, "metadata.deletionTimestamp")) {
			bad = true;
			strbuf_addstr(&sb, "    being deleted: the scheduler does not use it\n");
		}
		if (!kobj_map(claim, "status.allocation")) {
			bad = true;
			strbuf_addstr(&sb,
				      "    not allocated: no device yet (the scheduler allocates "
				      "it when it binds the pod; its verdict is below)\n");
			if (!*kobj_text(pod, "spec.nodeName"))
				add_why_unallocated(&sb, claim, o);
		} else {
			add_allocation(&sb, claim, o->slices);
		}
		add_reserved(&sb, claim);
		add_prepare(&sb, pod, claim, o->events, &bad);
	}
	if (trouble)
		*trouble = bad;
	return strbuf_detach(&sb, NULL);
}

char *draclaims_device_names(const char *node, const json_t *slices)
{
	long long gen;
	json_t *devs = node_devices(node, slices, &gen);
	struct strbuf sb = STRBUF_INIT;
	size_t i;
	json_t *d;

	json_array_foreach (devs, i, d)
		strbuf_addsep(&sb, ", ", kobj_text(d, "name"));
	json_decref(devs);
	return strbuf_detach(&sb, NULL);
}

void draclaims_add_left(struct strbuf *sb, const json_t *device, const char *before,
			const char *after)
{
	const json_t *cap = json_object_get(device, "capacity");
	const char *k;
	json_t *v;
	size_t i = 0;

	if (!json_object_size(json_object_get(device, "left")))
		return;
	strbuf_addstr(sb, before);
	json_object_foreach ((json_t *)json_object_get(device, "left"), k, v)
		escape_addf(sb, "%s%s %s of %s", i++ ? ", " : "", k, json_string_value(v),
			    kobj_text(cap, k));
	strbuf_addstr(sb, after);
}

char *draclaims_node_line(const json_t *node, const struct draclaims_objects *o)
{
	json_t *st, *kinds;
	struct strbuf sb = STRBUF_INIT, held = STRBUF_INIT;
	size_t i, n;
	const char *k;
	json_t *d, *v, *c;

	if (!draslice_node_wants_dra(node))
		return NULL;
	st = draclaims_node_status(node, o);
	strbuf_addstr(&sb, "DRA node (gpushare.io/path=dra): ");
	if (kobj_string(st, "failure")) {
		strbuf_addstr(&sb, kobj_text(st, "failure"));
		json_decref(st);
		return strbuf_detach(&sb, NULL);
	}
	/* Devices counted by what they are, in first-seen order; the held ones by name. */
	kinds = json_object();
	json_array_foreach (json_object_get(st, "devices"), i, d) {
		char *what = kobj_string(d, "profile")
				     ? gs_xasprintf("%s MIG %s", kobj_text(d, "product"),
						    kobj_text(d, "profile"))
				     : gs_xstrdup(kobj_text(d, "product"));
		json_object_set_new(
			kinds, what,
			json_integer(json_integer_value(json_object_get(kinds, what)) + 1));
		free(what);
		if (kobj_string(d, "claim"))
			strbuf_addf(&held, "%s%s by %s", held.len ? ", " : "", kobj_text(d, "name"),
				    kobj_text(d, "claim"));
		else if (json_object_get(d, "shares")) {
			strbuf_addf(&held, "%s%s shared by ", held.len ? ", " : "",
				    kobj_text(d, "name"));
			json_array_foreach (json_object_get(d, "claims"), n, c)
				strbuf_addf(&held, "%s%s", n ? ", " : "", json_string_value(c));
			draclaims_add_left(&held, d, " (left: ", ")");
		}
	}
	strbuf_addf(&sb, "publishes %lld device%s (",
		    (long long)json_integer_value(json_object_get(st, "total")),
		    json_integer_value(json_object_get(st, "total")) == 1 ? "" : "s");
	i = 0;
	json_object_foreach (kinds, k, v)
		strbuf_addf(&sb, "%s%lld x %s", i++ ? ", " : "", (long long)json_integer_value(v),
			    k);
	strbuf_addf(&sb, "), %lld free", (long long)json_array_size(json_object_get(st, "free")));
	if (held.len)
		strbuf_addf(&sb, "; held: %s", held.buf);
	strbuf_release(&held);
	json_decref(kinds);
	json_decref(st);
	return strbuf_detach(&sb, NULL);
}

/* ---- quota ---------------------------------------------------------------------------------- */

static void usage_add(json_t *usage, const char *key, long long n)
{
	const json_t *v = json_object_get(usage, key);
	long long cur = v ? strtoll(text_of(v), NULL, 10) : 0;
	char buf[32];

	snprintf(buf, sizeof(buf), "%lld", cur + n);
	json_object_set_new(usage, key, json_string(buf));
}

static long long devices_of(const json_t *req)
{
	const char *mode = kobj_text(req, "allocationMode");
	json_int_t count = json_integer_value(json_object_get(req, "count"));

	if (!strcmp(mode, "All"))
		return DRACLAIMS_ALL_DEVICES;
	if (!*mode || !strcmp(mode, "ExactCount"))
		return count > 0 ? count : 1;
	return 0;
}

void draclaims_quota_usage(json_t **usage, const json_t *claim)
{
	const json_t *r;
	size_t i;

	if (!*usage)
		*usage = json_object();
	usage_add(*usage, DRACLAIMS_QUOTA_COUNT, 1);
	json_array_foreach (kobj_get(claim, "spec.devices.requests"), i, r) {
		if (kobj_map(r, "exactly")) {
			char *key = gs_xasprintf("%s%s", kobj_text(r, "exactly.deviceClassName"),
						 DRACLAIMS_QUOTA_SUFFIX);
			usage_add(*usage, key, devices_of(kobj_map(r, "exactly")));
			free(key);
		} else if (json_is_array(json_object_get(r, "firstAvailable"))) {
			/* Per class, the largest subrequest. */
			json_t *max = json_object();
			const char *k;
			json_t *v, *sub;
			size_t s;

			json_array_foreach (json_object_get(r, "firstAvailable"), s, sub) {
				char *key = gs_xasprintf("%s%s", kobj_text(sub, "deviceClassName"),
							 DRACLAIMS_QUOTA_SUFFIX);
				long long n = devices_of(sub);
				if (n > json_integer_value(json_object_get(max, key)))
					json_object_set_new(max, key, json_integer(n));
				else if (!json_object_get(max, key))
					json_object_set_new(max, key, json_integer(n));
				free(key);
			}
			json_object_foreach (max, k, v)
				usage_add(*usage, k, json_integer_value(v));
			json_decref(max);
		}
	}
}
