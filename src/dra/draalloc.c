/*
 * Offline DRA allocation with consumable capacity (draalloc.h), from
 * k8s.io/dynamic-resource-allocation v0.34.4
 * structured/internal/experimental/allocator_experimental.go (allocateDevice,
 * CmpRequestOverCapacity) and consumable_capacity.go (calculateConsumedCapacity,
 * roundUpRange, roundUpValidValues, violatesPolicy).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dra/draalloc.h"
#include "base/strbuf.h"
#include "model/kobj.h"
#include "model/quantity.h"
#include "base/banned.h"

#define DRIVER "gpu.nvidia.com"
#define MAX_SLOTS 32 /* AllocationResultsMaxSize */

struct share {
	char *claim;	  /* "ns/name" */
	json_t *consumed; /* {capacity: integer value} */
};

struct dev {
	const char *node, *pool, *name, *type;
	bool multi;
	const json_t *capacity;
	char *exclusive; /* the claim holding it ("ns/name"), NULL when free */
	struct share *shares;
	size_t n_shares;
	json_t *allocating; /* this claim's consumption so far: {capacity: integer} */
	int allocating_n;   /* this claim's results on the device */
};

/* A node's devices: by_node[first .. first + n), in slice order. */
struct dnode {
	const char *name;
	size_t first, n;
};

struct draalloc {
	struct dev *devs;
	size_t n;
	size_t *by_node;     /* the devices' indices by node name, slice order within a node */
	struct dnode *nodes; /* by name, one per node with devices */
	size_t n_nodes;
	size_t *by_id;	  /* the devices' indices by pool and name, slice order among equals */
	bool no_capacity; /* DRAConsumableCapacity off: claims' capacity requests dropped */
};

void draalloc_result_release(struct draalloc_result *r)
{
	free(r->node);
	json_decref(r->allocation);
	free(r->why);
	memset(r, 0, sizeof(*r));
}

static const char *dev_attr(const json_t *d, const char *key)
{
	const json_t *a = json_object_get(json_object_get(d, "attributes"), key);
	char full[128];

	if (!a) {
		snprintf(full, sizeof(full), "%s/%s", DRIVER, key);
		a = json_object_get(json_object_get(d, "attributes"), full);
	}
	return kobj_string(a, "string");
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* A device's place in an index: two names, then its slice order. */
struct key {
	const char *a, *b;
	size_t i;
};

static int cmp_key(const void *x, const void *y)
{
	const struct key *p = x, *q = y;
	int c = strcmp(p->a, q->a);

	if (!c)
		c = strcmp(p->b, q->b);
	return c ? c : (p->i > q->i) - (p->i < q->i);
}

/* The devices' indices sorted by (node) or by (pool, name), slice order among equals. */
static size_t *device_index(const struct draalloc *a, bool by_node)
{
	struct key *k = gs_xcalloc(a->n + 1, sizeof(*k));
	size_t *idx = gs_xcalloc(a->n + 1, sizeof(*idx));

	for (size_t i = 0; i < a->n; i++)
		k[i] = by_node ? (struct key){a->devs[i].node, "", i}
			       : (struct key){a->devs[i].pool, a->devs[i].name, i};
	qsort(k, a->n, sizeof(*k), cmp_key);
	for (size_t i = 0; i < a->n; i++)
		idx[i] = k[i].i;
	free(k);
	return idx;
}

struct draalloc *draalloc_new(const json_t *slices)
{
	struct draalloc *a = gs_xcalloc(1, sizeof(*a));
	size_t cap = 0;

	for (size_t i = 0; i < json_array_size(slices); i++) {
		const json_t *sl = json_array_get(slices, i);
		const json_t *devs = kobj_get(sl, "spec.devices");

		if (strcmp(kobj_text(sl, "spec.driver"), DRIVER))
			continue;
		for (size_t j = 0; j < json_array_size(devs); j++) {
			const json_t *d = json_array_get(devs, j);
			struct dev *v;

			if (a->n == cap) {
				cap = cap ? 2 * cap : 64;
				a->devs = gs_xrealloc(a->devs, cap * sizeof(*a->devs));
			}
			v = &a->devs[a->n++];
			memset(v, 0, sizeof(*v));
			v->node = kobj_text(sl, "spec.nodeName");
			v->pool = kobj_text(sl, "spec.pool.name");
			v->name = kobj_text(d, "name");
			v->type = dev_attr(d, "type");
			if (!v->type)
				v->type = "";
			v->multi = json_is_true(json_object_get(d, "allowMultipleAllocations"));
			v->capacity = json_object_get(d, "capacity");
			v->allocating = json_object();
		}
	}
	a->by_id = device_index(a, false);
	a->by_node = device_index(a, true);
	a->nodes = gs_xcalloc(a->n + 1, sizeof(*a->nodes));
	for (size_t i = 0; i < a->n; i++) {
		const char *node = a->devs[a->by_node[i]].node;
		if (!a->n_nodes || strcmp(a->nodes[a->n_nodes - 1].name, node))
			a->nodes[a->n_nodes++] = (struct dnode){node, i, 0};
		a->nodes[a->n_nodes - 1].n++;
	}
	return a;
}

void draalloc_without_consumable_capacity(struct draalloc *a)
{
	a->no_capacity = true;
	for (size_t i = 0; i < a->n; i++)
		a->devs[i].multi = false;
}

static bool spec_uses_capacity(const json_t *devices)
{
	const json_t *r, *sub, *c;
	size_t i, j;

	json_array_foreach (json_object_get(devices, "constraints"), i, c)
		if (json_object_get(c, "distinctAttribute"))
			return true;
	json_array_foreach (json_object_get(devices, "requests"), i, r) {
		if (kobj_get(r, "exactly.capacity"))
			return true;
		json_array_foreach (json_object_get(r, "firstAvailable"), j, sub)
			if (json_object_get(sub, "capacity"))
				return true;
	}
	return false;
}

bool draalloc_uses_consumable_capacity(const json_t *slices, const json_t *claims,
				       const json_t *templates)
{
	const json_t *o, *d, *cap;
	const char *k;
	size_t i, j;

	json_array_foreach ((json_t *)slices, i, o)
		json_array_foreach (kobj_get(o, "spec.devices"), j, d) {
			if (json_object_get(d, "allowMultipleAllocations"))
				return true;
			json_object_foreach ((json_t *)json_object_get(d, "capacity"), k, cap)
				if (json_object_get(cap, "requestPolicy"))
					return true;
		}
	json_array_foreach ((json_t *)claims, i, o)
		if (spec_uses_capacity(kobj_get(o, "spec.devices")))
			return true;
	json_array_foreach ((json_t *)templates, i, o)
		if (spec_uses_capacity(kobj_get(o, "spec.spec.devices")))
			return true;
	return false;
}

void draalloc_free(struct draalloc *a)
{
	if (!a)
		return;
	for (size_t i = 0; i < a->n; i++) {
		free(a->devs[i].exclusive);
		for (size_t k = 0; k < a->devs[i].n_shares; k++) {
			free(a->devs[i].shares[k].claim);
			json_decref(a->devs[i].shares[k].consumed);
		}
		free(a->devs[i].shares);
		json_decref(a->devs[i].allocating);
	}
	free(a->devs);
	free(a->by_node);
	free(a->nodes);
	free(a->by_id);
	free(a);
}

/* The first device, in slice order, of pool `pool` named `name`; NULL when none. */
static struct dev *find_dev(struct draalloc *a, const char *pool, const char *name)
{
	size_t lo = 0, hi = a->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		const struct dev *d = &a->devs[a->by_id[mid]];
		int c = strcmp(d->pool, pool);
		if (!c)
			c = strcmp(d->name, name);
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == a->n)
		return NULL;
	struct dev *d = &a->devs[a->by_id[lo]];
	return strcmp(d->pool, pool) || strcmp(d->name, name) ? NULL : d;
}

/* Node `name`'s devices; NULL when it has none. */
static const struct dnode *find_node(const struct draalloc *a, const char *name)
{
	size_t lo = 0, hi = a->n_nodes;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		int c = strcmp(a->nodes[mid].name, name);
		if (!c)
			return &a->nodes[mid];
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

/* Quantity.Value() of a JSON quantity; 0 when it does not parse. */
static int64_t qvalue(const json_t *v)
{
	struct quantity q;
	struct gs_error err;

	if (!v || quantity_from_json(&q, v, &err))
		return 0;
	return quantity_go_value(&q);
}

static char *claim_key(const json_t *claim)
{
	const char *ns = kobj_text(claim, "metadata.namespace");

	return gs_xasprintf("%s%s%s", ns, *ns ? "/" : "", kobj_text(claim, "metadata.name"));
}

static void add_share(struct dev *d, const char *claim, json_t *consumed)
{
	d->shares = gs_xrealloc(d->shares, (d->n_shares + 1) * sizeof(*d->shares));
	d->shares[d->n_shares].claim = gs_xstrdup(claim);
	d->shares[d->n_shares++].consumed = consumed;
}

void draalloc_take(struct draalloc *a, const json_t *claim)
{
	const json_t *results = kobj_get(claim, "status.allocation.devices.results");
	char *key = claim_key(claim);

	for (size_t i = 0; i < json_array_size(results); i++) {
		const json_t *r = json_array_get(results, i);
		struct dev *d;
		const char *k;
		json_t *v, *consumed;

		if (strcmp(kobj_text(r, "driver"), DRIVER) ||
		    json_is_true(json_object_get(r, "adminAccess")) ||
		    !(d = find_dev(a, kobj_text(r, "pool"), kobj_text(r, "device"))))
			continue;
		if (!kobj_string(r, "shareID")) {
			/* AllocatedDevices: the whole device */
			if (!d->exclusive)
				d->exclusive = gs_xstrdup(key);
			continue;
		}
		/* AllocatedSharedDeviceIDs, AggregatedCapacity */
		consumed = json_object();
		json_object_foreach ((json_t *)json_object_get(r, "consumedCapacity"), k, v)
			json_object_set_new(consumed, k, json_integer(qvalue(v)));
		add_share(d, key, consumed);
	}
	free(key);
}

/* An integer as resource.NewQuantity(v, BinarySI) prints it: "10", "7166Mi", "8Gi". */
static const char *qtext(int64_t v, char *buf, size_t size)
{
	struct quantity q;

	quantity_from_int64(&q, v, QUANTITY_BINARY_SI);
	return quantity_canonical(&q, buf, size);
}

/* The value of capacity `name` already consumed on `d` by allocated claims. */
static int64_t aggregated(const struct dev *d, const char *name)
{
	int64_t sum = 0;

	for (size_t k = 0; k < d->n_shares; k++)
		sum += json_integer_value(json_object_get(d->shares[k].consumed, name));
	return sum;
}

/*
 * calculateConsumedCapacity: what a request (NULL: none) consumes of a
 * capacity, into *val, and its text as the result's consumedCapacity
 * shows it.
 */
static void consumed_of(const json_t *req, const json_t *cap, int64_t *val, char *text, size_t size)
{
	const json_t *pol = json_object_get(cap, "requestPolicy");
	const json_t *range = json_object_get(pol, "validRange");
	const json_t *values = json_object_get(pol, "validValues");
	struct quantity q;

	if (!req) {
		const json_t *def = json_object_get(pol, "default");
		const json_t *src = def ? def : json_object_get(cap, "value");
		snprintf(text, size, "%s", json_string_value(src) ? json_string_value(src) : "0");
		*val = qvalue(src);
		return;
	}
	*val = qvalue(req);
	snprintf(text, size, "%s", json_string_value(req) ? json_string_value(req) : "0");
	if (!pol)
		return;
	if (range && json_object_get(range, "min")) {
		int64_t min = qvalue(json_object_get(range, "min"));
		const json_t *step = json_object_get(range, "step");
		if (*val < min) {
			*val = min;
			snprintf(text, size, "%s",
				 json_string_value(json_object_get(range, "min")));
			return;
		}
		if (!step)
			return;
		int64_t st = qvalue(step), added = *val - min;
		if (st <= 0)
			return;
		int64_t n = added / st + (added % st ? 1 : 0);
		*val = min + st * n;
		quantity_from_int64(&q, *val, QUANTITY_BINARY_SI);
		quantity_string(&q, text, size);
		return;
	}
	for (size_t i = 0; i < json_array_size(values); i++) {
		const json_t *v = json_array_get(values, i);
		if (*val <= qvalue(v)) {
			*val = qvalue(v);
			snprintf(text, size, "%s", json_string_value(v));
			return;
		}
	}
}

/* violatesPolicy; what the policy allows into `why` when it does. */
static bool violates(int64_t val, const json_t *cap, struct strbuf *why)
{
	const json_t *pol = json_object_get(cap, "requestPolicy");
	const json_t *range = json_object_get(pol, "validRange");
	const json_t *values = json_object_get(pol, "validValues");
	const json_t *def = json_object_get(pol, "default");

	if (!pol || (def && qvalue(def) == val))
		return false;
	if (range) {
		const json_t *max = json_object_get(range, "max");
		const json_t *step = json_object_get(range, "step");
		if (max && val > qvalue(max)) {
			strbuf_addf(why, "above the requestPolicy's max %s",
				    json_string_value(max));
			return true;
		}
		if (step && qvalue(step) > 0 &&
		    (val - qvalue(json_object_get(range, "min"))) % qvalue(step)) {
			strbuf_addf(why, "not a step of %s from min", json_string_value(step));
			return true;
		}
		return false;
	}
	if (json_array_size(values)) {
		for (size_t i = 0; i < json_array_size(values); i++)
			if (qvalue(json_array_get(values, i)) == val)
				return false;
		strbuf_addstr(why, "not one of the requestPolicy's validValues");
		return true;
	}
	return false;
}

/*
 * CmpRequestOverCapacity for request capacities `reqs` on `d`: true with
 * *consumed (new: {capacity: integer}, texts in *texts) when every
 * capacity stays within its value counting what allocated claims and this
 * claim's earlier results consume; false with the reason in `why`.
 */
static bool capacity_fits(const struct dev *d, const json_t *reqs, json_t **consumed,
			  json_t **texts, struct strbuf *why)
{
	const char *k;
	json_t *v;
	const char *names[64];
	size_t n = 0;

	*consumed = NULL;
	*texts = NULL;
	json_object_foreach ((json_t *)reqs, k, v)
		if (!json_object_get(d->capacity, k)) {
			/* the allocator: "some requested capacity has not been defined" */
			strbuf_addf(why, "no capacity '%s'", k);
			return false;
		}
	json_object_foreach ((json_t *)d->capacity, k, v)
		if (n < sizeof(names) / sizeof(names[0]))
			names[n++] = k;
	qsort(names, n, sizeof(names[0]), cmp_str);
	json_t *c = json_object(), *t = json_object();
	for (size_t i = 0; i < n; i++) {
		const json_t *cap = json_object_get(d->capacity, names[i]);
		const json_t *req = json_object_get(reqs, names[i]);
		int64_t val, value = qvalue(json_object_get(cap, "value"));
		char text[64];
		struct strbuf pw = STRBUF_INIT;

		consumed_of(req, cap, &val, text, sizeof(text));
		if (violates(val, cap, &pw)) {
			strbuf_addf(why, "%s: the request %s (consumes %s) is %s", names[i],
				    req ? json_string_value(req) : "(none)", text, pw.buf);
			strbuf_release(&pw);
			goto no;
		}
		strbuf_release(&pw);
		int64_t used = aggregated(d, names[i]) +
			       json_integer_value(json_object_get(d->allocating, names[i]));
		if (used + val > value) {
			char q[QUANTITY_STR_MAX];
			strbuf_addf(why, "%s: %s left of %s", names[i],
				    qtext(value - used, q, sizeof(q)),
				    json_string_value(json_object_get(cap, "value")));
			if (d->n_shares) {
				strbuf_addstr(why, " (");
				for (size_t s = 0; s < d->n_shares; s++)
					strbuf_addf(why, "%s%s %s", s ? ", " : "",
						    d->shares[s].claim,
						    qtext(json_integer_value(json_object_get(
								  d->shares[s].consumed, names[i])),
							  q, sizeof(q)));
				strbuf_addch(why, ')');
			}
			strbuf_addf(why, ", the request consumes %s", text);
			goto no;
		}
		json_object_set_new(c, names[i], json_integer(val));
		json_object_set_new(t, names[i], json_string(text));
	}
	*consumed = c;
	*texts = t;
	return true;
no:
	json_decref(c);
	json_decref(t);
	return false;
}

/* The type attribute a driver class selects (the chart's CEL selectors). */
static const char *class_type(const char *cls)
{
	if (!strcmp(cls, "gpu.nvidia.com"))
		return "gpu";
	if (!strcmp(cls, "mig.nvidia.com"))
		return "mig";
	if (!strcmp(cls, "vfio.gpu.nvidia.com"))
		return "vfio";
	return NULL;
}

struct slot {
	const char *request;
	const char *type;
	const json_t *caps; /* capacity.requests, may be NULL */
	size_t claim;	    /* which of the claims allocated together */
};

struct pick {
	struct dev *d;
	json_t *consumed, *texts; /* NULL for an exclusive device */
};

/* Whether `d` can take slot `s` now; the consumption it takes in *p. */
static bool can_take(struct dev *d, const struct slot *s, struct pick *p, struct strbuf *why)
{
	p->d = d;
	p->consumed = p->texts = NULL;
	if (strcmp(d->type, s->type))
		return false;
	if (d->exclusive) {
		strbuf_addf(why, "allocated to %s", d->exclusive);
		return false;
	}
	if (!d->multi && (d->n_shares || d->allocating_n)) {
		strbuf_addstr(why, d->allocating_n ? "taken by this claim already"
						   : "allocated to another claim");
		return false;
	}
	json_t *c, *t;
	if (!capacity_fits(d, s->caps, &c, &t, why))
		return false;
	if (d->multi) {
		p->consumed = c;
		p->texts = t;
	} else {
		json_decref(c);
		json_decref(t);
	}
	return true;
}

static void take(struct pick *p)
{
	const char *k;
	json_t *v;

	p->d->allocating_n++;
	json_object_foreach (p->consumed, k, v) {
		json_int_t had = json_integer_value(json_object_get(p->d->allocating, k));
		json_object_set_new(p->d->allocating, k, json_integer(had + json_integer_value(v)));
	}
}

static void untake(struct pick *p)
{
	const char *k;
	json_t *v;

	p->d->allocating_n--;
	json_object_foreach (p->consumed, k, v) {
		json_int_t had = json_integer_value(json_object_get(p->d->allocating, k));
		json_object_set_new(p->d->allocating, k, json_integer(had - json_integer_value(v)));
	}
}

/* allocateOne: slots in order, devices of node `nd` in slice order, backtracking. */
static bool place(struct draalloc *a, const struct dnode *nd, const struct slot *slots, size_t n,
		  size_t i, struct pick *picks)
{
	if (i == n)
		return true;
	for (size_t k = 0; k < nd->n; k++) {
		struct dev *d = &a->devs[a->by_node[nd->first + k]];
		struct strbuf why = STRBUF_INIT;

		bool ok = can_take(d, &slots[i], &picks[i], &why);
		strbuf_release(&why);
		if (!ok)
			continue;
		take(&picks[i]);
		if (place(a, nd, slots, n, i + 1, picks))
			return true;
		untake(&picks[i]);
		json_decref(picks[i].consumed);
		json_decref(picks[i].texts);
		picks[i].consumed = picks[i].texts = NULL;
	}
	return false;
}

/* A stable UUID-shaped share ID (the scheduler draws a random one). */
static void share_id(const char *claim, const char *dev, int n, char *out, size_t size)
{
	uint64_t h = 0xcbf29ce484222325ULL;
	char key[512];

	snprintf(key, sizeof(key), "%s/%s/%d", claim, dev, n);
	for (const char *p = key; *p; p++) {
		h ^= (unsigned char)*p;
		h *= 0x100000001b3ULL;
	}
	snprintf(out, size, "%08x-%04x-4%03x-8%03x-%012llx", (unsigned)(h >> 32),
		 (unsigned)(h >> 16) & 0xffff, (unsigned)h & 0xfff, (unsigned)(h >> 52) & 0xfff,
		 (unsigned long long)(h & 0xffffffffffffULL));
}

static json_t *allocation_json(const json_t *claim, const char *node, const struct slot *slots,
			       const struct pick *picks, size_t n)
{
	json_t *results = json_array(), *configs = json_array();
	const json_t *cfgs = kobj_get(claim, "spec.devices.config");
	char *key = claim_key(claim);

	for (size_t i = 0; i < n; i++) {
		json_t *r = json_pack("{s:s, s:s, s:s, s:s}", "request", slots[i].request, "driver",
				      DRIVER, "pool", picks[i].d->pool, "device", picks[i].d->name);
		if (picks[i].texts) {
			char id[64];
			share_id(key, picks[i].d->name, (int)i, id, sizeof(id));
			json_object_set_new(r, "shareID", json_string(id));
			json_object_set(r, "consumedCapacity", picks[i].texts);
		}
		json_array_append_new(results, r);
	}
	for (size_t i = 0; i < json_array_size(cfgs); i++) {
		const json_t *c = json_array_get(cfgs, i);
		json_t *o = json_pack("{s:s}", "source", "FromClaim");
		if (json_object_get(c, "requests"))
			json_object_set(o, "requests", json_object_get(c, "requests"));
		if (json_object_get(c, "opaque"))
			json_object_set(o, "opaque", json_object_get(c, "opaque"));
		json_array_append_new(configs, o);
	}
	free(key);
	return json_pack("{s:{s:o, s:o}, s:{s:[{s:[{s:s, s:s, s:[s]}]}]}}", "devices", "results",
			 results, "config", configs, "nodeSelector", "nodeSelectorTerms",
			 "matchFields", "key", "metadata.name", "operator", "In", "values", node);
}

/*
 * Why no device of each request's class took it (from the state before the
 * claim): node `only`'s devices, or every node's when NULL.
 */
static void explain(struct draalloc *a, const char *only, const struct slot *slots, size_t n,
		    struct strbuf *sb)
{
	const struct dnode *nd = only ? find_node(a, only) : NULL;
	size_t n_devs = only ? (nd ? nd->n : 0) : a->n;

	for (size_t i = 0; i < n; i++) {
		if (i && slots[i].claim == slots[i - 1].claim &&
		    !strcmp(slots[i].request, slots[i - 1].request))
			continue;
		strbuf_addf(sb, "\nrequest %s (type %s", slots[i].request, slots[i].type);
		const char *k;
		json_t *v;
		json_object_foreach ((json_t *)slots[i].caps, k, v)
			strbuf_addf(sb, ", %s %s", k,
				    json_string_value(v) ? json_string_value(v) : "?");
		strbuf_addch(sb, ')');
		for (size_t j = 0; j < n_devs; j++) {
			struct dev *d = &a->devs[nd ? a->by_node[nd->first + j] : j];
			struct strbuf why = STRBUF_INIT;
			struct pick p;
			if (strcmp(d->type, slots[i].type))
				continue;
			bool ok = can_take(d, &slots[i], &p, &why);
			json_decref(p.consumed);
			json_decref(p.texts);
			strbuf_addf(sb, "\n  %s %s: %s", d->node, d->name,
				    ok ? "would take it alone (the claim's requests together do "
					 "not fit)"
				       : why.buf);
			strbuf_release(&why);
		}
	}
}

/* The claim's requests as slots, one per device; false with out filled when it is not judged. */
static bool claim_slots(const struct draalloc *a, const json_t *claim, size_t idx, const char *key,
			struct slot *slots, size_t *n_out, struct draalloc_result *out)
{
	const json_t *reqs = kobj_get(claim, "spec.devices.requests");
	size_t n = 0;

	for (size_t i = 0; i < json_array_size(reqs); i++) {
		const json_t *r = json_array_get(reqs, i);
		const json_t *ex = json_object_get(r, "exactly");
		const char *name = kobj_text(r, "name");
		const char *cls = kobj_text(ex, "deviceClassName");
		const char *mode = kobj_string(ex, "allocationMode");
		json_int_t count = json_integer_value(json_object_get(ex, "count"));

		if (!ex || json_array_size(json_object_get(ex, "selectors")) ||
		    (mode && strcmp(mode, "ExactCount"))) {
			out->outcome = DRAALLOC_NOT_JUDGED;
			out->why = gs_xasprintf("request %s: only `exactly` requests without CEL "
						"selectors and with "
						"allocationMode ExactCount are judged offline",
						name);
			return false;
		}
		if (!class_type(cls)) {
			/* the allocator's error (allocator_experimental.go) */
			out->outcome = DRAALLOC_ERROR;
			out->why = gs_xasprintf(
				"claim %s, request %s: could not retrieve device class %s: "
				"deviceclass.resource.k8s.io \"%s\" not found",
				key, name, cls, cls);
			return false;
		}
		if (count <= 0)
			count = 1;
		for (json_int_t c = 0; c < count; c++) {
			if (n == MAX_SLOTS) {
				out->outcome = DRAALLOC_ERROR;
				out->why = gs_xasprintf("claim %s: number of requested devices %zu "
							"exceeds the claim limit of %d",
							key, n + 1, MAX_SLOTS);
				return false;
			}
			slots[n].request = name;
			slots[n].type = class_type(cls);
			slots[n].claim = idx;
			slots[n++].caps =
				a && a->no_capacity ? NULL : kobj_get(ex, "capacity.requests");
		}
	}
	*n_out = n;
	return true;
}

/*
 * Allocate claims[0..n_claims) together on node `only` (NULL: the first
 * node by name where they all fit), as the structured allocator does for
 * one pod's claims: their requests in order, backtracking across claims.
 * With commit, allocs[k] receives claim k's status.allocation and the
 * devices are taken.
 */
static int allocate(struct draalloc *a, const json_t *const *claims, size_t n_claims,
		    const char *only, bool commit, struct draalloc_result *out, json_t **allocs,
		    struct gs_error *err)
{
	struct slot *slots = gs_xcalloc(n_claims * MAX_SLOTS + 1, sizeof(*slots));
	struct pick *picks = gs_xcalloc(n_claims * MAX_SLOTS + 1, sizeof(*picks));
	size_t *first = gs_xcalloc(n_claims + 1, sizeof(*first));
	char **keys = gs_xcalloc(n_claims + 1, sizeof(*keys));
	size_t n = 0;
	int rc = 0;

	memset(out, 0, sizeof(*out));
	for (size_t c = 0; c < n_claims; c++)
		if (!json_is_object(claims[c]) ||
		    strcmp(kobj_text(claims[c], "kind"), "ResourceClaim")) {
			gs_error_set(err, "not a ResourceClaim");
			rc = -1;
			goto out;
		}
	for (size_t c = 0; c < n_claims; c++) {
		size_t k = 0;
		keys[c] = claim_key(claims[c]);
		first[c] = n;
		if (!claim_slots(a, claims[c], c, keys[c], slots + n, &k, out))
			goto out;
		n += k;
	}
	first[n_claims] = n;
	/* The nodes by name, or the one named (none when it has no devices). */
	const struct dnode *nd = only ? find_node(a, only) : a->nodes;
	size_t n_try = only ? (nd ? 1 : 0) : a->n_nodes;
	for (size_t k = 0; k < n_try; k++) {
		const char *node = nd[k].name;
		if (!place(a, &nd[k], slots, n, 0, picks))
			continue;
		out->outcome = DRAALLOC_ALLOCATED;
		out->node = gs_xstrdup(node);
		for (size_t c = 0; commit && c < n_claims; c++)
			allocs[c] = allocation_json(claims[c], node, slots + first[c],
						    picks + first[c], first[c + 1] - first[c]);
		for (size_t i = 0; i < n; i++) {
			const char *key = keys[slots[i].claim];
			untake(&picks[i]);
			if (commit && picks[i].consumed)
				add_share(picks[i].d, key, json_incref(picks[i].consumed));
			else if (commit)
				picks[i].d->exclusive = gs_xstrdup(key);
			json_decref(picks[i].consumed);
			json_decref(picks[i].texts);
		}
		goto out;
	}
	/* The scheduler's words (dynamicresources Filter), then gpushare's reasons. */
	struct strbuf sb = STRBUF_INIT;
	size_t nn = only ? 1 : a->n_nodes;
	strbuf_addf(&sb, "0/%zu nodes are available: %zu cannot allocate all claims.", nn, nn);
	explain(a, only, slots, n, &sb);
	out->outcome = DRAALLOC_UNSCHEDULABLE;
	out->why = strbuf_detach(&sb, NULL);
out:
	for (size_t c = 0; c < n_claims; c++)
		free(keys[c]);
	free(keys);
	free(first);
	free(slots);
	free(picks);
	return rc;
}

int draalloc_claim_on(struct draalloc *a, const json_t *claim, const char *only, bool commit,
		      struct draalloc_result *out, struct gs_error *err)
{
	json_t *alloc = NULL;
	int rc = allocate(a, &claim, 1, only, commit, out, &alloc, err);

	out->allocation = alloc;
	return rc;
}

int draalloc_claims_on(struct draalloc *a, const json_t *const *claims, size_t n_claims,
		       const char *only, bool commit, struct draalloc_result *out,
		       struct gs_error *err)
{
	json_t **allocs = gs_xcalloc(n_claims + 1, sizeof(*allocs));
	int rc = allocate(a, claims, n_claims, only, commit, out, allocs, err);

	if (rc == 0 && commit && out->outcome == DRAALLOC_ALLOCATED) {
		out->allocation = json_array();
		for (size_t c = 0; c < n_claims; c++)
			json_array_append_new(out->allocation, allocs[c]);
	}
	free(allocs);
	return rc;
}

bool draalloc_claim_judged(const json_t *claim, char **why)
{
	struct slot slots[MAX_SLOTS];
	struct draalloc_result r;
	size_t n = 0;
	char *key = claim_key(claim);
	bool ok;

	memset(&r, 0, sizeof(r));
	ok = claim_slots(NULL, claim, 0, key, slots, &n, &r);
	free(key);
	*why = ok ? NULL : r.why;
	if (ok)
		free(r.why);
	return ok;
}

int draalloc_claim(struct draalloc *a, const json_t *claim, struct draalloc_result *out,
		   struct gs_error *err)
{
	return draalloc_claim_on(a, claim, NULL, true, out, err);
}
