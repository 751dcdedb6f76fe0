#include "engine/health.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/banned.h"
#include "base/strbuf.h"
#include "base/wrapper.h"
#include "model/kobj.h"
#include "yaml/ydoc.h"

/* Where upstream does what gpushare plays (docs/guide/faults.md cites the same lines). */
#define DP_HEALTH "k8s-device-plugin v0.20.0 internal/rm/health.go"
#define DP_SERVER "k8s-device-plugin v0.20.0 internal/plugin/server.go"
#define DRA_HEALTH "dra-driver-nvidia-gpu v0.4.1 cmd/gpu-kubelet-plugin/device_health.go"

#define TAINT_XID "gpu.nvidia.com/xid"
#define TAINT_LOST "gpu.nvidia.com/gpu-lost"

/* ---- the annotation ---------------------------------------------------------------------- */

/* Digits at *p into *v (at most `max`); advances only on success. */
static int take_uint(const char **p, unsigned long long max, unsigned long long *v)
{
	const char *s = *p;
	unsigned long long n = 0;

	if (!isdigit((unsigned char)*s))
		return -1;
	while (isdigit((unsigned char)*s)) {
		unsigned d = (unsigned)(*s - '0');
		if (n > (max - d) / 10)
			return -1;
		n = n * 10 + d;
		s++;
	}
	*p = s;
	*v = n;
	return 0;
}

static int take_lit(const char **p, const char *lit)
{
	size_t n = strlen(lit);

	if (strncmp(*p, lit, n))
		return -1;
	*p += n;
	return 0;
}

static int same_key(const struct health_fault *a, const struct health_fault *b)
{
	return a->gpu == b->gpu && a->gi == b->gi && a->ci == b->ci;
}

static int parse_fail(const char *value, const char *at, size_t *bad_col, struct gs_error *err,
		      const char *what)
{
	*bad_col = (size_t)(at - value) + 1;
	gs_error_set(err, "character %zu: %s", *bad_col, what);
	return -1;
}

int health_parse(const char *value, struct health_faults *out, size_t *bad_col,
		 struct gs_error *err)
{
	const char *p = value;

	memset(out, 0, sizeof(*out));
	*bad_col = 0;
	if (strlen(value) > HEALTH_MAX_VALUE) {
		*bad_col = HEALTH_MAX_VALUE + 1;
		gs_error_set(err, "longer than %d bytes", HEALTH_MAX_VALUE);
		return -1;
	}
	if (!*p)
		return 0;
	for (;;) {
		struct health_fault f = {.gi = HEALTH_NO_INSTANCE, .ci = HEALTH_NO_INSTANCE};
		const char *entry = p;
		unsigned long long v;

		if (take_uint(&p, 255, &v) < 0) {
			parse_fail(value, p, bad_col, err,
				   "expected a GPU index (0-255) to start an entry "
				   "INDEX=xid:N or INDEX=lost");
			goto fail;
		}
		f.gpu = (int)v;
		if (take_lit(&p, "=") < 0) {
			parse_fail(value, p, bad_col, err, "expected '=' after the GPU index");
			goto fail;
		}
		if (take_lit(&p, "lost") == 0) {
			f.kind = HEALTH_LOST;
		} else if (take_lit(&p, "xid:") == 0) {
			f.kind = HEALTH_XID;
			if (take_uint(&p, 0xFFFFFFFFull, &f.xid) < 0) {
				parse_fail(
					value, p, bad_col, err,
					"expected the Xid, a number (0-4294967295), after 'xid:'");
				goto fail;
			}
			if (*p == '/') {
				unsigned long long gi, ci;
				p++;
				if (take_uint(&p, 0xFFFFFFFEull, &gi) < 0 ||
				    take_lit(&p, "/") < 0 ||
				    take_uint(&p, 0xFFFFFFFEull, &ci) < 0) {
					parse_fail(value, p, bad_col, err,
						   "expected GI/CI, the MIG device's GPU and "
						   "compute instance, after 'xid:N/'");
					goto fail;
				}
				f.gi = (unsigned)gi;
				f.ci = (unsigned)ci;
			}
		} else {
			parse_fail(value, p, bad_col, err,
				   "expected 'xid:N', 'xid:N/GI/CI' or 'lost' after '='");
			goto fail;
		}
		if (*p && *p != ',') {
			parse_fail(value, p, bad_col, err,
				   "expected ',' or the end after the entry");
			goto fail;
		}
		for (size_t i = 0; i < out->n; i++)
			if (same_key(&out->items[i], &f)) {
				parse_fail(value, entry, bad_col, err,
					   "GPU index given twice (one entry per GPU, or per "
					   "MIG instance)");
				goto fail;
			}
		if (out->n == HEALTH_MAX_FAULTS) {
			parse_fail(value, entry, bad_col, err, "more than 256 entries");
			goto fail;
		}
		out->items = gs_xrealloc(out->items, (out->n + 1) * sizeof(*out->items));
		f.col = (size_t)(entry - value) + 1;
		out->items[out->n++] = f;
		if (!*p)
			return 0;
		p++;
	}
fail:
	health_faults_release(out);
	return -1;
}

void health_faults_release(struct health_faults *f)
{
	free(f->items);
	memset(f, 0, sizeof(*f));
}

void health_fault_text(const struct health_fault *x, char *out, size_t size)
{
	if (x->kind == HEALTH_LOST)
		snprintf(out, size, "lost");
	else if (x->gi == HEALTH_NO_INSTANCE)
		snprintf(out, size, "xid:%llu", x->xid);
	else
		snprintf(out, size, "xid:%llu/%u/%u", x->xid, x->gi, x->ci);
}

static int by_key(const void *a, const void *b)
{
	const struct health_fault *x = a, *y = b;

	if (x->gpu != y->gpu)
		return x->gpu - y->gpu;
	/* A whole-GPU event (no instance, 0xFFFFFFFF) before the instances. */
	if (x->gi != y->gi)
		return x->gi + 1u < y->gi + 1u ? -1 : 1;
	return x->ci + 1u < y->ci + 1u ? -1 : x->ci + 1u > y->ci + 1u;
}

char *health_format(const struct health_faults *f)
{
	struct strbuf sb = STRBUF_INIT;
	struct health_fault *s = gs_xcalloc(f->n + 1, sizeof(*s));

	if (f->n)
		memcpy(s, f->items, f->n * sizeof(*s));
	qsort(s, f->n, sizeof(*s), by_key);
	for (size_t i = 0; i < f->n; i++) {
		char t[64];
		health_fault_text(&s[i], t, sizeof(t));
		strbuf_addf(&sb, "%s%d=%s", i ? "," : "", s[i].gpu, t);
	}
	free(s);
	return strbuf_detach(&sb, NULL);
}

int health_from_node(const json_t *node, const char *name, int n_gpus,
		     const struct ydoc_stream *src, struct health_faults *f, struct gs_error *err)
{
	const char *v = kobj_annotation(node, NODEHW_ANN_GPU_HEALTH);
	const json_t *ann = kobj_annotations(node);
	struct gs_error e;
	size_t col;

	memset(f, 0, sizeof(*f));
	if (!v)
		return 0;
	gs_error_clear(&e);
	if (health_parse(v, f, &col, &e) < 0) {
		ydoc_error_at_key(src, ann, NODEHW_ANN_GPU_HEALTH, err,
				  "node '%s': annotation " NODEHW_ANN_GPU_HEALTH
				  " \"%s\": %s; the node keeps its last good state",
				  name, v, e.msg);
		return -1;
	}
	for (size_t i = 0; i < f->n; i++) {
		if (f->items[i].gpu < n_gpus)
			continue;
		ydoc_error_at_key(src, ann, NODEHW_ANN_GPU_HEALTH, err,
				  "node '%s': annotation " NODEHW_ANN_GPU_HEALTH
				  " \"%s\": character %zu: GPU %d: the node declares %d GPU%s "
				  "(indexes 0-%d); the node keeps its last good state",
				  name, v, f->items[i].col, f->items[i].gpu, n_gpus,
				  n_gpus == 1 ? "" : "s", n_gpus - 1);
		health_faults_release(f);
		return -1;
	}
	return 0;
}

/* ---- which XIDs count -------------------------------------------------------------------- */

static long policy_find(const struct health_policy *p, unsigned long long xid)
{
	for (size_t i = 0; i < p->n; i++)
		if (p->e[i].xid == xid)
			return (long)i;
	return -1;
}

static void policy_set(struct health_policy *p, unsigned long long xid, bool disabled)
{
	long i = policy_find(p, xid);

	if (i < 0) {
		if (p->n == sizeof(p->e) / sizeof(p->e[0]))
			return;
		i = (long)p->n++;
	}
	p->e[i].xid = xid;
	p->e[i].disabled = disabled;
}

/*
 * newHealthCheckXIDs: a comma-separated list, lower-cased and trimmed; "all"
 * or "xids" anywhere means every XID (only that); malformed entries skipped.
 */
static void xid_list(const char *s, struct health_policy *out)
{
	out->n = 0;
	while (s && *s) {
		const char *end = strchr(s, ',');
		size_t n = end ? (size_t)(end - s) : strlen(s);
		char tok[32];
		size_t a = 0, b = n;

		while (a < b && isspace((unsigned char)s[a]))
			a++;
		while (b > a && isspace((unsigned char)s[b - 1]))
			b--;
		if (b - a < sizeof(tok)) {
			const char *q = tok;
			unsigned long long v;
			for (size_t i = a; i < b; i++)
				tok[i - a] = (char)tolower((unsigned char)s[i]);
			tok[b - a] = '\0';
			if (!strcmp(tok, "all") || !strcmp(tok, "xids")) {
				out->n = 0;
				policy_set(out, 0, true);
				return;
			}
			if (*tok && take_uint(&q, ~0ull, &v) == 0 && !*q &&
			    out->n < HEALTH_MAX_XIDS)
				policy_set(out, v, true);
		}
		s = end ? end + 1 : NULL;
	}
}

void health_policy_init(struct health_policy *p, const char *disable_env, const char *enable_env)
{
	static const unsigned long long ignored[] = {13, 31, 43, 45, 68, 109};
	struct health_policy enabled;

	xid_list(disable_env, p);
	xid_list(enable_env, &enabled);
	for (size_t i = 0; i < sizeof(ignored) / sizeof(ignored[0]); i++)
		policy_set(p, ignored[i], true);
	for (size_t i = 0; i < enabled.n; i++)
		policy_set(p, enabled.e[i].xid, false);
}

bool health_policy_all_disabled(const struct health_policy *p)
{
	long i = policy_find(p, 0);

	return i >= 0 && p->e[i].disabled;
}

bool health_policy_skips(const struct health_policy *p, unsigned long long xid)
{
	long all = policy_find(p, 0), i;

	if (all >= 0 && !p->e[all].disabled)
		return false;
	i = policy_find(p, xid);
	if (i >= 0)
		return p->e[i].disabled;
	return health_policy_all_disabled(p);
}

/* ---- the remembered state ---------------------------------------------------------------- */

/*
 * The remembered set when it belongs to the running plugin (same restart,
 * same config), else NULL (new reference). `key` is "devices" or "taints".
 */
static json_t *remembered_set(const char *remembered, const char *restarted_at, const char *config,
			      const char *key, bool *restarted, struct gs_warnings *why)
{
	json_t *st, *set;
	const char *ra, *cf;

	*restarted = false;
	if (!remembered || !*remembered)
		return NULL;
	st = json_loads(remembered, 0, NULL);
	set = json_object_get(st, key);
	ra = json_string_value(json_object_get(st, "restartedAt"));
	cf = json_string_value(json_object_get(st, "config"));
	if (!json_is_object(st) || !json_is_object(set) || !ra) {
		gs_warnings_add(why, NODEHW_ANN_UNHEALTHY
				" is unreadable; counted as a plugin started afresh");
		json_decref(st);
		*restarted = true;
		return NULL;
	}
	if (strcmp(ra, restarted_at ? restarted_at : "") ||
	    (config && strcmp(cf ? cf : "", config))) {
		*restarted = true;
		json_decref(st);
		return NULL;
	}
	json_incref(set);
	json_decref(st);
	return set;
}

static bool in_array(const json_t *a, const char *s)
{
	size_t i;
	json_t *v;

	json_array_foreach ((json_t *)a, i, v)
		if (json_is_string(v) && !strcmp(json_string_value(v), s))
			return true;
	return false;
}

/* ---- the device plugin ------------------------------------------------------------------- */

/*
 * checkHealth's parentToDeviceMap[uuid] = d: the one device of `res` the
 * loop keeps for GPU `gpu` (-1 when the resource has none there). Upstream
 * ranges over a Go map, so which one is left is random; gpushare fixes the
 * last in device-ID order (highest replica, highest MIG placement).
 */
static long mapped_device(const struct ledger *l, const char *res, int gpu)
{
	long last = -1;

	for (size_t i = 0; i < l->n_devices; i++)
		if (l->devices[i].gpu == gpu && !strcmp(l->devices[i].resource, res))
			last = (long)i;
	return last;
}

static size_t resource_count(const struct ledger *l, const char *res)
{
	size_t n = 0;

	for (size_t i = 0; i < l->n_devices; i++)
		n += !strcmp(l->devices[i].resource, res);
	return n;
}

static void mark(bool *bad, size_t i, size_t *n_marked)
{
	if (!bad[i]) {
		bad[i] = true;
		(*n_marked)++;
	}
}

/* One fault through every resource's health loop (one loop per resource). */
static void dp_fault(const struct ledger *l, const struct health_fault *f,
		     const struct health_policy *policy, bool *bad, struct gs_warnings *why)
{
	char t[64];
	size_t others = 0;

	health_fault_text(f, t, sizeof(t));
	if (f->gpu < 0 || (size_t)f->gpu >= l->n_gpus) {
		gs_warnings_add(why, "GPU %d=%s: the node has no GPU %d; nothing happens", f->gpu,
				t, f->gpu);
		return;
	}
	if (f->kind == HEALTH_XID && health_policy_skips(policy, f->xid)) {
		gs_warnings_add(why,
				"GPU %d=%s: Xid %llu is one the device plugin skips (an "
				"application error, or DP_DISABLE_HEALTHCHECKS): nothing changes "
				"(" DP_HEALTH ":138 and :233-243)",
				f->gpu, t, f->xid);
		return;
	}
	for (size_t r = 0; r < l->n_devices; r++) {
		const char *res = l->devices[r].resource;
		long d;
		size_t n = 0;

		if (r && !strcmp(res, l->devices[r - 1].resource))
			continue; /* one loop per resource */
		d = mapped_device(l, res, f->gpu);
		if (d < 0)
			continue; /* "Ignoring event for unexpected device" (:154-157) */
		if (f->kind == HEALTH_LOST) {
			for (size_t i = 0; i < l->n_devices; i++)
				if (!strcmp(l->devices[i].resource, res))
					mark(bad, i, &n);
			gs_warnings_add(why,
					"GPU %d=lost: waiting for events fails, so the %s health "
					"loop marks every device of %s unhealthy, on every GPU "
					"(" DP_HEALTH ":125-130)",
					f->gpu, res, res);
			continue;
		}
		if (l->devices[d].profile && f->gi != HEALTH_NO_INSTANCE &&
		    ((unsigned)l->devices[d].mig_start != f->gi || f->ci != 0)) {
			gs_warnings_add(why,
					"GPU %d=%s: the %s health loop keeps one device per GPU, "
					"%s (GI %d, CI 0), and the event names another instance: "
					"nothing happens (" DP_HEALTH ":88 and :160-165)",
					f->gpu, t, res, l->devices[d].id, l->devices[d].mig_start);
			continue;
		}
		mark(bad, (size_t)d, &n);
		for (size_t i = 0; i < l->n_devices; i++)
			others += l->devices[i].gpu == f->gpu &&
				  !strcmp(l->devices[i].resource, res) && i != (size_t)d;
		gs_warnings_add(
			why,
			"GPU %d=%s: %s device %s marked unhealthy; the health loop keeps one "
			"device per GPU UUID (" DP_HEALTH ":88 parentToDeviceMap[uuid] = d), so "
			"the other %zu device(s) of %s on GPU %d stay healthy (" DP_HEALTH
			":154-170)",
			f->gpu, t, res, l->devices[d].id, others, res, f->gpu);
		others = 0;
	}
}

static json_t *ids_of(const struct ledger *l, const bool *bad, const char *res)
{
	json_t *a = json_array();

	for (size_t i = 0; i < l->n_devices; i++)
		if (bad[i] && !strcmp(l->devices[i].resource, res))
			json_array_append_new(a, json_string(l->devices[i].id));
	return a;
}

void health_dp(const struct ledger *l, const struct health_faults *faults,
	       const struct health_policy *policy, const char *remembered, const char *restarted_at,
	       struct health_dp_result *out)
{
	const char *config = l->config_name ? l->config_name : "";
	bool *bad = gs_xcalloc(l->n_devices + 1, sizeof(*bad));
	bool *was = gs_xcalloc(l->n_devices + 1, sizeof(*was));
	json_t *set, *st;
	size_t n_bad = 0;

	memset(out, 0, sizeof(*out));
	gs_warnings_init(&out->why);
	out->allocatable = json_object();
	out->unhealthy = json_object();
	out->marked = json_object();
	set = remembered_set(remembered, restarted_at, config, "devices", &out->restarted,
			     &out->why);
	/* Devices marked before stay out: "there is no way to recover" (server.go:277). */
	for (size_t i = 0; set && i < l->n_devices; i++)
		if (in_array(json_object_get(set, l->devices[i].resource), l->devices[i].id))
			bad[i] = was[i] = true;
	if (faults->n && health_policy_all_disabled(policy))
		gs_warnings_add(&out->why,
				"DP_DISABLE_HEALTHCHECKS=all: the device plugin runs no health "
				"check, every fault is unseen (" DP_HEALTH ":45-48)");
	else
		for (size_t i = 0; i < faults->n; i++)
			dp_fault(l, &faults->items[i], policy, bad, &out->why);
	for (size_t i = 0; i < l->n_devices; i++) {
		const char *res = l->devices[i].resource;
		if (i && !strcmp(res, l->devices[i - 1].resource))
			continue;
		json_t *ids = ids_of(l, bad, res);
		json_object_set_new(
			out->allocatable, res,
			json_integer((json_int_t)(resource_count(l, res) - json_array_size(ids))));
		if (json_array_size(ids))
			json_object_set(out->unhealthy, res, ids);
		json_decref(ids);
	}
	for (size_t i = 0; i < l->n_devices; i++) {
		json_t *a;
		n_bad += bad[i];
		if (!bad[i] || was[i])
			continue;
		a = json_object_get(out->marked, l->devices[i].resource);
		if (!a) {
			a = json_array();
			json_object_set_new(out->marked, l->devices[i].resource, a);
		}
		json_array_append_new(a, json_string(l->devices[i].id));
	}
	if (!n_bad) {
		out->state = gs_xstrdup("");
	} else {
		st = json_pack("{s:s,s:s,s:O}", "restartedAt", restarted_at ? restarted_at : "",
			       "config", config, "devices", out->unhealthy);
		out->state = json_dumps(st, JSON_COMPACT | JSON_SORT_KEYS);
		json_decref(st);
	}
	json_decref(set);
	free(bad);
	free(was);
}

void health_dp_result_release(struct health_dp_result *r)
{
	json_decref(r->allocatable);
	json_decref(r->unhealthy);
	json_decref(r->marked);
	free(r->state);
	gs_warnings_release(&r->why);
	memset(r, 0, sizeof(*r));
}

/* ---- the DRA driver ---------------------------------------------------------------------- */

/* A published device's place: GPU minor, and the MIG placement start (-1 for a full GPU). */
static int dra_place(const json_t *dev, int *minor, int *start)
{
	const char *name = json_string_value(json_object_get(dev, "name"));
	const char *type = json_string_value(json_object_get(
		json_object_get(json_object_get(dev, "attributes"), "type"), "string"));
	const char *p = name;
	unsigned long long v;
	const char *key;
	json_t *q;

	if (!name || !type || take_lit(&p, "gpu-") < 0 || take_uint(&p, 255, &v) < 0)
		return -1;
	*minor = (int)v;
	*start = -1;
	if (!strcmp(type, "gpu"))
		return 0;
	if (strcmp(type, "mig"))
		return -1;
	json_object_foreach ((json_t *)json_object_get(dev, "capacity"), key, q) {
		const char *k = key;
		if (take_lit(&k, "memorySlice") == 0 && take_uint(&k, 255, &v) == 0 && !*k &&
		    (*start < 0 || (int)v < *start))
			*start = (int)v;
	}
	return *start < 0 ? -1 : 0;
}

static void rfc3339(long long t, char *out, size_t size)
{
	time_t tt = (time_t)t;
	struct tm tm;

	gmtime_r(&tt, &tm);
	strftime(out, size, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

/*
 * AddOrUpdateTaint (allocatable.go): same key, same value and effect:
 * nothing; same key otherwise: value and effect replaced, time renewed;
 * else appended. Returns whether it changed.
 */
static bool add_taint(json_t *taints, const char *dev, const char *key, const char *value,
		      const char *effect, const char *ts)
{
	json_t *list = json_object_get(taints, dev), *t;
	size_t i;

	if (!list) {
		list = json_array();
		json_object_set_new(taints, dev, list);
	}
	json_array_foreach (list, i, t) {
		const char *v = json_string_value(json_object_get(t, "value"));
		if (strcmp(json_string_value(json_object_get(t, "key")), key))
			continue;
		if (!strcmp(v ? v : "", value ? value : "") &&
		    !strcmp(json_string_value(json_object_get(t, "effect")), effect))
			return false;
		json_array_set_new(list, i,
				   json_pack("{s:s,s:s*,s:s,s:s}", "key", key, "value", value,
					     "effect", effect, "timeAdded", ts));
		return true;
	}
	json_array_append_new(list, json_pack("{s:s,s:s*,s:s,s:s}", "key", key, "value", value,
					      "effect", effect, "timeAdded", ts));
	return true;
}

/* Only well-formed taints of the two keys come back from the remembered state. */
static json_t *clean_taints(const json_t *set)
{
	json_t *out = json_object(), *list, *t;
	const char *dev;
	size_t i;

	json_object_foreach ((json_t *)set, dev, list) {
		json_t *keep = json_array();
		json_array_foreach (list, i, t) {
			const char *k = json_string_value(json_object_get(t, "key"));
			const char *e = json_string_value(json_object_get(t, "effect"));
			const char *ts = json_string_value(json_object_get(t, "timeAdded"));
			json_t *v = json_object_get(t, "value");
			if (k && e && ts && (!v || json_is_string(v)) &&
			    (!strcmp(k, TAINT_XID) || !strcmp(k, TAINT_LOST)))
				json_array_append_new(keep, json_pack("{s:s,s:O*,s:s,s:s}", "key",
								      k, "value", v, "effect", e,
								      "timeAdded", ts));
		}
		if (json_array_size(keep))
			json_object_set_new(out, dev, keep);
		else
			json_decref(keep);
	}
	return out;
}

size_t health_dra(json_t *pool, const struct health_faults *faults, const char *ignored_xids,
		  bool dynamic_mig, const char *remembered, const char *restarted_at, long long now,
		  char **state, struct gs_warnings *why)
{
	struct health_policy skip;
	json_t *set, *taints, *slice, *dev;
	size_t si, di, changed = 0;
	bool restarted;
	char ts[32];

	/* The driver skips the same application XIDs plus its additionalXidsToIgnore (:417-438). */
	xid_list(ignored_xids, &skip);
	if (health_policy_all_disabled(&skip))
		skip.n = 0; /* the driver has no "all": every entry is a number */
	for (size_t i = 0; i < 6; i++) {
		static const unsigned long long ignored[] = {13, 31, 43, 45, 68, 109};
		policy_set(&skip, ignored[i], true);
	}
	rfc3339(now ? now : (long long)time(NULL), ts, sizeof(ts));
	set = remembered_set(remembered, restarted_at, NULL, "taints", &restarted, why);
	taints = set ? clean_taints(set) : json_object();
	json_decref(set);
	for (size_t k = 0; k < faults->n; k++) {
		const struct health_fault *f = &faults->items[k];
		char t[64];
		bool hit = false;

		health_fault_text(f, t, sizeof(t));
		json_array_foreach (pool, si, slice) {
			json_array_foreach (
				json_object_get(json_object_get(slice, "spec"), "devices"), di,
				dev) {
				const char *name = json_string_value(json_object_get(dev, "name"));
				int minor, start;
				bool is_skipped;
				if (dra_place(dev, &minor, &start) < 0 ||
				    (dynamic_mig && start >= 0))
					continue; /* not in the placement map (:330-365) */
				if (f->kind == HEALTH_LOST) {
					changed += add_taint(taints, name, TAINT_LOST, NULL,
							     "NoSchedule", ts);
					hit = true;
					continue;
				}
				if (minor != f->gpu)
					continue;
				/* deviceByPlacement.get(uuid, gi, ci) (:258): an exact match. */
				if (start < 0 ? f->gi != HEALTH_NO_INSTANCE
					      : (f->gi != (unsigned)start || f->ci != 0))
					continue;
				is_skipped = health_policy_skips(&skip, f->xid);
				{
					char v[32];
					snprintf(v, sizeof(v), "%llu", f->xid);
					changed +=
						add_taint(taints, name, TAINT_XID, v,
							  is_skipped ? "None" : "NoSchedule", ts);
				}
				hit = true;
				gs_warnings_add(why,
						"GPU %d=%s: device %s tainted " TAINT_XID
						"=%llu:%s (" DRA_HEALTH ":68-79)",
						f->gpu, t, name, f->xid,
						is_skipped ? "None (an XID the driver skips)"
							   : "NoSchedule");
			}
		}
		if (f->kind == HEALTH_LOST && hit)
			gs_warnings_add(why,
					"GPU %d=lost: every device of the node tainted " TAINT_LOST
					":NoSchedule (" DRA_HEALTH ":228-232, :80-84)",
					f->gpu);
		else if (!hit)
			gs_warnings_add(
				why,
				"GPU %d=%s: no device of the driver sits at that GPU and "
				"instance (a MIG GPU's event needs GI/CI): ignored (" DRA_HEALTH
				":258-262)",
				f->gpu, t);
	}
	/* The taints onto the devices (driver.go deviceHealthEvents: d.Taints = taints). */
	json_array_foreach (pool, si, slice) {
		json_array_foreach (json_object_get(json_object_get(slice, "spec"), "devices"), di,
				    dev) {
			json_t *list = json_object_get(
				taints, json_string_value(json_object_get(dev, "name")));
			if (json_array_size(list))
				json_object_set(dev, "taints", list);
		}
	}
	if (!json_object_size(taints)) {
		*state = gs_xstrdup("");
	} else {
		json_t *st = json_pack("{s:s,s:O}", "restartedAt", restarted_at ? restarted_at : "",
				       "taints", taints);
		*state = json_dumps(st, JSON_COMPACT | JSON_SORT_KEYS);
		json_decref(st);
	}
	json_decref(taints);
	return changed;
}

/* ---- on an advertisement ----------------------------------------------------------------- */

/* The device plugin's health loop over the advertised devices (health.h). */
static void apply_health(const struct catalog *cat, const struct nodehw *hw,
			 const struct dpconfig *config, const json_t *node,
			 const struct health_faults *faults, const struct advertise_options *opt,
			 struct advertisement *adv)
{
	const char *remembered = kobj_annotation(node, NODEHW_ANN_UNHEALTHY);
	struct health_policy policy;
	struct health_dp_result r;
	struct ledger *l = NULL;
	struct gs_error e;

	if (adv->outcome != ADVERTISE_OK || (!faults->n && !remembered))
		return;
	gs_error_clear(&e);
	if (ledger_new(cat, hw, adv, config, &l, &e) < 0) {
		gs_warnings_add(&adv->warnings, "GPU health not played: %s", e.msg);
		return;
	}
	health_policy_init(&policy, opt ? opt->disable_healthchecks : NULL,
			   opt ? opt->enable_healthchecks : NULL);
	health_dp(l, faults, &policy, remembered, kobj_annotation(node, NODEHW_ANN_RESTARTED_AT),
		  &r);
	if (json_object_size(r.unhealthy)) {
		adv->allocatable = json_incref(r.allocatable);
		adv->unhealthy = json_incref(r.unhealthy);
	}
	if (json_object_size(r.marked))
		adv->newly_unhealthy = json_incref(r.marked);
	adv->health_state = r.state;
	r.state = NULL;
	for (size_t i = 0; i < r.why.n; i++)
		gs_warnings_add(&adv->health_why, "%s", r.why.items[i]);
	health_dp_result_release(&r);
	ledger_free(l);
}

int health_advertise_node(const struct catalog *cat, const json_t *node,
			  const struct dpconfig_set *set, const struct advertise_options *opt,
			  struct advertisement **out, struct gs_error *err)
{
	const struct dpconfig *config = NULL;
	struct health_faults faults;
	struct nodehw *hw = NULL;
	struct gs_warnings w;
	int rc = -1;

	*out = NULL;
	gs_warnings_init(&w);
	if (advertise_node(cat, node, set, opt, out, err) < 0)
		goto out;
	if (nodehw_from_node(cat, node, opt ? opt->source : NULL, &hw, &w, err) < 0 ||
	    health_from_node(node, hw->name, hw->total, opt ? opt->source : NULL, &faults, err) <
		    0) {
		advertisement_free(*out);
		*out = NULL;
		goto out;
	}
	if (set && (*out)->config_name && *(*out)->config_name) {
		const struct gs_error *ce;
		long k = dpconfig_set_find(set, (*out)->config_name);
		config = k >= 0 ? dpconfig_set_get(set, (size_t)k, &ce) : NULL;
	}
	apply_health(cat, hw, config, node, &faults, opt, *out);
	health_faults_release(&faults);
	rc = 0;
out:
	nodehw_free(hw);
	gs_warnings_release(&w);
	return rc;
}
