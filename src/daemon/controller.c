#include "daemon/controller.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/escape.h"
#include "engine/heartbeat.h"
#include "engine/kubeletrestart.h"
#include "model/defaults.h"
#include "dra/draslice.h"
#include "model/kobj.h"
#include "model/nodehw.h"
#include "fleet/sync.h"
#include "base/banned.h"

#define DEF_MAX_PENDING 64u
#define PLAN_BATCH 256u	     /* nodes per sync_plan call */
#define RETRY_LATER_MS 5000L /* a write that failed for good is tried again after this */
#define MAX_RES 32u	     /* distinct nvidia.com/ resource names counted in metrics */
#define NODE_RES 8u	     /* resources counted per node */

enum strategy { ST_NONE, ST_TIME_SLICING, ST_MPS, ST_UNADVERTISED, ST_N };
static const char *const strategy_names[ST_N] = {"none", "time-slicing", "mps", "unadvertised"};

struct rescount {
	uint8_t id;
	uint32_t n;
};

/*
 * What nodes of one kind share: the reduced Node without its name, uid,
 * resourceVersion and hostname label, as compact JSON, kept once however
 * many nodes have it (a fleet is a few kinds of identical machines).
 */
struct shared_text {
	char *s;
	uint32_t refs;
	long long moved_ms; /* a Lease holder's text: it last renewed one of its Leases then */
};

enum { HOST_NONE, HOST_IS_NAME, HOST_OTHER };

struct cnode {
	char *name;
	char *uid;
	char *hostname; /* the kubernetes.io/hostname label when it is not the name */
	struct shared_text *shared;
	uint8_t host_mode;
	unsigned long long rv;
	uint32_t gen;
	uint32_t warned; /* hash of the last Event message posted, 0 = none */
	uint8_t strategy;
	uint8_t n_alloc;
	bool dirty, busy, admitting;
	bool slice_touched; /* someone else wrote one of its slices since the last plan */
	bool lost;	    /* Ready Unknown as kube-controller-manager marks a node it lost */
	struct rescount alloc[NODE_RES];
};

enum pod_state { POD_WAITING, POD_ADMITTED, POD_FAILED, POD_DONE };

struct cpod {
	char *key; /* namespace/name */
	char *uid, *node;
	char *text; /* the reduced Pod */
	unsigned long long rv;
	uint32_t gen;
	uint8_t state;
	uint8_t n_req;
	bool busy;
	bool deciding;	/* the admission hook reads the cluster for it */
	time_t held_at; /* a hold verdict was written then; 0 = none */
	/* Deciding or writing its verdict failed then (403, 5xx...), monotonic ms; 0 = none.
	 * Milliseconds: whole seconds let a retry come up to a second early. */
	long long failed_ms;
	unsigned long long held_node_rv;
	struct rescount req[NODE_RES];
};

/* An open-addressing map from a name to a pointer (linear probing, tombstones). */
struct map {
	char **keys; /* borrowed from the values */
	void **vals;
	size_t cap, n, used;
};
#define TOMB ((char *)&tomb_marker)
static char tomb_marker;

static uint32_t hash_str(const char *s)
{
	uint32_t h = 2166136261u;

	while (*s)
		h = (h ^ (unsigned char)*s++) * 16777619u;
	return h;
}

static void *map_get(const struct map *m, const char *key)
{
	if (!m->cap)
		return NULL;
	for (size_t i = hash_str(key) & (m->cap - 1);; i = (i + 1) & (m->cap - 1)) {
		if (!m->keys[i])
			return NULL;
		if (m->keys[i] != TOMB && !strcmp(m->keys[i], key))
			return m->vals[i];
	}
}

static void map_put(struct map *m, char *key, void *val);

static void map_grow(struct map *m)
{
	struct map o = *m;

	m->cap = o.cap ? (o.n * 4 > o.cap ? o.cap * 2 : o.cap) : 64;
	m->keys = gs_xcalloc(m->cap, sizeof(*m->keys));
	m->vals = gs_xcalloc(m->cap, sizeof(*m->vals));
	m->n = m->used = 0;
	for (size_t i = 0; i < o.cap; i++)
		if (o.keys[i] && o.keys[i] != TOMB)
			map_put(m, o.keys[i], o.vals[i]);
	free(o.keys);
	free(o.vals);
}

static void map_put(struct map *m, char *key, void *val)
{
	if ((m->used + 1) * 4 > m->cap * 3)
		map_grow(m);
	for (size_t i = hash_str(key) & (m->cap - 1);; i = (i + 1) & (m->cap - 1)) {
		if (!m->keys[i] || m->keys[i] == TOMB) {
			if (!m->keys[i])
				m->used++;
			m->keys[i] = key;
			m->vals[i] = val;
			m->n++;
			return;
		}
	}
}

static void map_del(struct map *m, const char *key)
{
	if (!m->cap)
		return;
	for (size_t i = hash_str(key) & (m->cap - 1);; i = (i + 1) & (m->cap - 1)) {
		if (!m->keys[i])
			return;
		if (m->keys[i] != TOMB && !strcmp(m->keys[i], key)) {
			m->keys[i] = TOMB;
			m->vals[i] = NULL;
			m->n--;
			return;
		}
	}
}

#define MAP_FOREACH(m, i, v)                                                                       \
	for (size_t i = 0; i < (m)->cap; i++)                                                      \
		if ((m)->keys[i] && (m)->keys[i] != TOMB && ((v) = (m)->vals[i]))

struct event_post;
struct batch;
struct held_slice;
struct deciding;

struct controller {
	struct kube_loop *l; /* NULL: effects wait in the outbox for controller_take_effects */
	struct controller_effect *outbox; /* what the last events and ticks want done */
	size_t n_out, cap_out;
	struct event_post *event_retries; /* Events waiting to be tried again */
	struct controller_opts o;
	char *cm_ns, *cm_name, *ev_ns;
	json_t *configmap; /* NULL while it does not exist */
	struct map nodes, pods;
	struct map texts; /* shared_text by content */
	/*
	 * Our own slice writes, "name@resourceVersion" (or "name@-" for a
	 * deletion), so their watch events are not taken for someone else's.
	 */
	struct map echoes;
	bool slices_synced;
	struct batch *publishing; /* the plan whose DRA half is being published */
	/* Slice watch events seen while publishing: judged once its writes are known. */
	struct held_slice *held;
	size_t n_held, cap_held;
	struct deciding *deciding; /* pods whose admission hook reads the cluster */
	uint32_t node_gen, pod_gen, cm_gen;
	uint32_t cm_listed_gen; /* the (re)list that last showed the ConfigMap */
	bool nodes_synced, pods_synced, cm_synced, draining;
	bool cm_missing_logged;
	size_t dirty;	/* nodes marked dirty */
	size_t scan_at; /* the nodes map's slot where the next reconcile scan starts */
	size_t waiting; /* pods waiting for admission */
	unsigned in_flight;
	char *res_names[MAX_RES];
	size_t n_res;
	/* metrics */
	uint64_t reconciles, node_patches, plan_failures, events_posted, admitted, refused;
	uint64_t write_errors, slice_resyncs;
	/* Lease healing (docs/guide/controller.md "Leases that stop") */
	struct map leases; /* struct clease by name */
	uint32_t lease_gen;
	bool leases_synced;
	long long api_since_ms; /* the apiserver has answered since then (heal clock); 0 = not */
	long long heal_scan_ms; /* the last scan (heal clock) */
	long long verify_sent_ms, verified_ms; /* the last Lease LIST sent; sent and answered */
	bool verify_busy;
	uint64_t rng;	/* the renewals' jitter */
	size_t healing; /* Leases renewed by gpushare now */
	uint64_t lease_stalls, lease_renewals, lease_handbacks, lease_ready_writes;
};

/* ---- helpers -------------------------------------------------------------------------- */

static void ctl_log(struct controller *ctl, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static void ctl_log(struct controller *ctl, const char *fmt, ...)
{
	struct strbuf sb = STRBUF_INIT;
	va_list ap;

	if (!ctl->o.log)
		return;
	/* One event, one line: names and messages through escape_line. */
	va_start(ap, fmt);
	escape_vaddf(&sb, fmt, ap);
	va_end(ap);
	ctl->o.log(ctl->o.log_arg, sb.buf);
	strbuf_release(&sb);
}

/*
 * The controller's only ways out: a request or a timer, queued as an effect
 * (controller_effect) and handed to the loop by controller_tick. `body` is
 * copied. A request counts as in flight from here until its done callback,
 * which is called with NULL when it was never sent.
 */
static struct controller_effect *effect_add(struct controller *ctl)
{
	struct controller_effect *e;

	if (ctl->n_out == ctl->cap_out) {
		ctl->cap_out = ctl->cap_out ? ctl->cap_out * 2 : 16;
		ctl->outbox = gs_xrealloc(ctl->outbox, ctl->cap_out * sizeof(*ctl->outbox));
	}
	e = &ctl->outbox[ctl->n_out++];
	memset(e, 0, sizeof(*e));
	return e;
}

static void ctl_request(struct controller *ctl, const char *method, const char *path,
			const char *ctype, const char *body, kube_done_fn done, void *arg)
{
	struct controller_effect *e = effect_add(ctl);

	e->method = method;
	e->path = gs_xstrdup(path);
	e->ctype = ctype;
	e->body = body ? gs_xstrdup(body) : NULL;
	e->done = done;
	e->arg = arg;
	ctl->in_flight++;
}

/* A monotonic clock in milliseconds (never 0). */
static long long mono_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000 + 1;
}

static void ctl_after(struct controller *ctl, long ms, void (*fire)(void *arg),
		      void (*drop)(void *arg), void *arg)
{
	struct controller_effect *e = effect_add(ctl);

	e->delay_ms = ms;
	e->fire = fire;
	e->drop = drop;
	e->arg = arg;
}

static unsigned long long rv_of(const json_t *obj)
{
	const char *rv = kobj_string(obj, "metadata.resourceVersion");
	char *end;
	unsigned long long v;

	if (!rv)
		return 0;
	v = strtoull(rv, &end, 10);
	return *end ? 0 : v;
}

static uint8_t res_id(struct controller *ctl, const char *name)
{
	for (size_t i = 0; i < ctl->n_res; i++)
		if (!strcmp(ctl->res_names[i], name))
			return (uint8_t)i;
	if (ctl->n_res == MAX_RES)
		return UINT8_MAX;
	ctl->res_names[ctl->n_res] = gs_xstrdup(name);
	return (uint8_t)ctl->n_res++;
}

static uint32_t quantity_count(const json_t *v)
{
	const char *s = json_string_value(v);
	char *end;
	unsigned long long n;

	if (json_is_integer(v))
		return (uint32_t)json_integer_value(v);
	if (!s)
		return 0;
	n = strtoull(s, &end, 10);
	return *end || n > UINT32_MAX ? 0 : (uint32_t)n;
}

static void add_count(struct rescount *rc, uint8_t *n, uint8_t id, uint32_t k)
{
	if (id == UINT8_MAX)
		return;
	for (uint8_t i = 0; i < *n; i++)
		if (rc[i].id == id) {
			rc[i].n += k;
			return;
		}
	if (*n < NODE_RES) {
		rc[*n].id = id;
		rc[*n].n = k;
		(*n)++;
	}
}

static void copy_key(json_t *dst, const json_t *src, const char *key)
{
	json_t *v = json_object_get(src, key);

	if (v)
		json_object_set(dst, key, v);
}

/* ---- nodes ---------------------------------------------------------------------------- */

/* What reconciling and admission read of a Node. */
static json_t *reduce_node(const json_t *node)
{
	const json_t *md = json_object_get(node, "metadata");
	const json_t *st = json_object_get(node, "status");
	json_t *m = json_object(), *s = json_object();

	copy_key(m, md, "name");
	copy_key(m, md, "uid");
	copy_key(m, md, "resourceVersion");
	copy_key(m, md, "labels");
	copy_key(m, md, "annotations");
	copy_key(s, st, "capacity");
	copy_key(s, st, "allocatable");
	{
		/* Its Ready condition without the times: a kubelet restart's window shows there. */
		const json_t *conds = json_object_get(st, "conditions");
		json_t *c;
		size_t i;

		json_array_foreach ((json_t *)conds, i, c)
			if (!strcmp(kobj_text(c, "type"), "Ready"))
				json_object_set_new(
					s, "conditions",
					json_pack("[{s:s,s:O?,s:O?,s:O?}]", "type", "Ready",
						  "status", json_object_get(c, "status"), "reason",
						  json_object_get(c, "reason"), "message",
						  json_object_get(c, "message")));
	}
	return json_pack("{s:o,s:o}", "metadata", m, "status", s);
}

static void node_counts(struct controller *ctl, struct cnode *n, const json_t *red)
{
	const char *st = kobj_label(red, "nvidia.com/gpu.sharing-strategy");
	const json_t *alloc = kobj_map(red, "status.allocatable");
	const char *k;
	json_t *v;

	n->n_alloc = 0;
	json_object_foreach ((json_t *)alloc, k, v)
		if (!strncmp(k, "nvidia.com/", 11))
			add_count(n->alloc, &n->n_alloc, res_id(ctl, k), quantity_count(v));
	if (!st)
		n->strategy = n->n_alloc ? ST_NONE : ST_UNADVERTISED;
	else if (!strcmp(st, "time-slicing"))
		n->strategy = ST_TIME_SLICING;
	else if (!strcmp(st, "mps"))
		n->strategy = ST_MPS;
	else
		n->strategy = ST_NONE;
}

static void mark_dirty(struct controller *ctl, struct cnode *n)
{
	if (!n->dirty) {
		n->dirty = true;
		ctl->dirty++;
	}
}

static struct shared_text *text_intern(struct controller *ctl, char *s)
{
	struct shared_text *t = map_get(&ctl->texts, s);

	if (t) {
		free(s);
	} else {
		t = gs_xcalloc(1, sizeof(*t));
		t->s = s;
		map_put(&ctl->texts, t->s, t);
	}
	t->refs++;
	return t;
}

static void text_release(struct controller *ctl, struct shared_text *t)
{
	if (!t || --t->refs)
		return;
	map_del(&ctl->texts, t->s);
	free(t->s);
	free(t);
}

#define HOSTNAME_LABEL "kubernetes.io/hostname"

/* The reduced Node again, from what is kept. Caller decrefs. */
static json_t *node_json(const struct cnode *n)
{
	json_t *o = json_loads(n->shared->s, 0, NULL), *md;
	char rv[24];

	if (!o)
		o = json_object();
	md = json_object_get(o, "metadata");
	if (!md) {
		md = json_object();
		json_object_set_new(o, "metadata", md);
	}
	json_object_set_new(md, "name", json_string(n->name));
	if (n->uid)
		json_object_set_new(md, "uid", json_string(n->uid));
	if (n->rv) {
		snprintf(rv, sizeof(rv), "%llu", n->rv);
		json_object_set_new(md, "resourceVersion", json_string(rv));
	}
	if (n->host_mode != HOST_NONE) {
		json_t *labels = json_object_get(md, "labels");
		if (!labels) {
			labels = json_object();
			json_object_set_new(md, "labels", labels);
		}
		json_object_set_new(
			labels, HOSTNAME_LABEL,
			json_string(n->host_mode == HOST_IS_NAME ? n->name : n->hostname));
	}
	return o;
}

static void node_free(struct controller *ctl, struct cnode *n)
{
	if (!n)
		return;
	text_release(ctl, n->shared);
	free(n->name);
	free(n->uid);
	free(n->hostname);
	free(n);
}

/* The node is no longer managed; one whose write is in flight is freed when the write ends. */
static void node_forget(struct controller *ctl, struct cnode *n)
{
	map_del(&ctl->nodes, n->name);
	if (n->dirty)
		ctl->dirty--;
	if (n->busy)
		n->name[0] = '\0';
	else
		node_free(ctl, n);
}

/*
 * Ready Unknown in kube-controller-manager's words: it saw neither the Lease
 * move nor the Ready condition change for --node-monitor-grace-period
 * (node_lifecycle_controller.go tryUpdateNodeHealth: NodeStatusUnknown, or
 * NodeStatusNeverUpdated for a node no kubelet ever posted).
 */
static bool node_lost(const json_t *red)
{
	const json_t *c = json_array_get(kobj_get(red, "status.conditions"), 0);
	const char *reason = kobj_text(c, "reason");

	return c && !strcmp(kobj_text(c, "status"), "Unknown") &&
	       (!strcmp(reason, "NodeStatusUnknown") || !strcmp(reason, "NodeStatusNeverUpdated"));
}

/* Take in a Node as listed, watched or written. Returns the entry, or NULL when not ours. */
static struct cnode *node_store(struct controller *ctl, const json_t *node, bool from_write)
{
	const char *name = kobj_name(node);
	struct cnode *n;
	json_t *red;
	char *text, *uidc, *hostname;
	uint8_t mode;
	bool lost;

	if (!name)
		return NULL;
	n = map_get(&ctl->nodes, name);
	if (!kobj_annotation(node, NODEHW_ANN_PRODUCT)) {
		/* It stopped declaring its GPUs: not ours any more. */
		if (n)
			node_forget(ctl, n);
		return NULL;
	}
	if (n && n->rv && rv_of(node) && rv_of(node) < n->rv && !from_write)
		return n; /* older than what a write already showed us */
	red = reduce_node(node);
	{
		/* What is the node's own is kept beside the shared text. */
		json_t *md = json_object_get(red, "metadata");
		json_t *labels = json_object_get(md, "labels");
		const char *uid = json_string_value(json_object_get(md, "uid"));
		const char *host = json_string_value(json_object_get(labels, HOSTNAME_LABEL));

		mode = !host ? HOST_NONE : !strcmp(host, name) ? HOST_IS_NAME : HOST_OTHER;
		lost = node_lost(red);
		hostname = mode == HOST_OTHER ? gs_xstrdup(host) : NULL;
		uidc = uid ? gs_xstrdup(uid) : NULL;
		json_object_del(labels, HOSTNAME_LABEL);
		json_object_del(md, "name");
		json_object_del(md, "uid");
		json_object_del(md, "resourceVersion");
		text = json_dumps(red, JSON_COMPACT | JSON_SORT_KEYS);
	}
	if (!n) {
		n = gs_xcalloc(1, sizeof(*n));
		n->name = gs_xstrdup(name);
		map_put(&ctl->nodes, n->name, n);
		ctl_log(ctl, "node %s: managed (%s)", name,
			kobj_annotation(node, NODEHW_ANN_PRODUCT));
	}
	n->gen = ctl->node_gen;
	n->rv = rv_of(node);
	n->lost = lost;
	if (!n->shared || strcmp(n->shared->s, text) != 0 || n->host_mode != mode ||
	    (mode == HOST_OTHER && strcmp(n->hostname, hostname) != 0) || (!n->uid) != (!uidc) ||
	    (uidc && strcmp(n->uid, uidc) != 0)) {
		/* Our own write's answer needs no second look. */
		if (!from_write)
			mark_dirty(ctl, n);
		text_release(ctl, n->shared);
		n->shared = text_intern(ctl, text);
		free(n->uid);
		n->uid = uidc;
		free(n->hostname);
		n->hostname = hostname;
		n->host_mode = mode;
		node_counts(ctl, n, red);
	} else {
		free(text);
		free(uidc);
		free(hostname);
	}
	json_decref(red);
	return n;
}

static void node_list_begin(void *arg)
{
	struct controller *ctl = arg;

	ctl->node_gen++;
}

static void node_event(void *arg, enum kube_event ev, json_t *obj)
{
	struct controller *ctl = arg;

	if (ev == KUBE_EV_DELETED) {
		const char *name = kobj_name(obj);
		struct cnode *n = name ? map_get(&ctl->nodes, name) : NULL;
		if (n) {
			ctl_log(ctl, "node %s: deleted", name);
			node_forget(ctl, n);
		}
		return;
	}
	node_store(ctl, obj, false);
}

static void node_list_end(void *arg)
{
	struct controller *ctl = arg;
	struct cnode *n;

	/* What the (re)list did not show is gone. */
	MAP_FOREACH (&ctl->nodes, i, n)
		if (n->gen != ctl->node_gen)
			node_forget(ctl, n);
	if (!ctl->nodes_synced)
		ctl_log(ctl, "nodes listed: %zu managed", ctl->nodes.n);
	ctl->nodes_synced = true;
}

/* ---- the ConfigMap -------------------------------------------------------------------- */

static void all_nodes_dirty(struct controller *ctl)
{
	struct cnode *n;

	MAP_FOREACH (&ctl->nodes, i, n)
		mark_dirty(ctl, n);
}

static void cm_list_begin(void *arg)
{
	struct controller *ctl = arg;

	ctl->cm_gen++;
}

static void cm_set(struct controller *ctl, const json_t *cm)
{
	json_t *red = NULL;

	if (cm) {
		red = json_pack("{s:s,s:s,s:{s:O?,s:O?,s:O?,s:O?}}", "apiVersion", "v1", "kind",
				"ConfigMap", "metadata", "name",
				json_object_get(json_object_get(cm, "metadata"), "name"),
				"namespace",
				json_object_get(json_object_get(cm, "metadata"), "namespace"),
				"resourceVersion",
				json_object_get(json_object_get(cm, "metadata"), "resourceVersion"),
				"uid", json_object_get(json_object_get(cm, "metadata"), "uid"));
		copy_key(red, cm, "data");
		if (ctl->configmap && json_equal(json_object_get(ctl->configmap, "data"),
						 json_object_get(red, "data"))) {
			json_decref(ctl->configmap);
			ctl->configmap = red;
			return;
		}
	}
	if (!cm && !ctl->configmap)
		return;
	json_decref(ctl->configmap);
	ctl->configmap = red;
	if (cm) {
		ctl_log(ctl, "configmap %s/%s: %s (resourceVersion %s); re-advertising %zu nodes",
			ctl->cm_ns, ctl->cm_name, ctl->cm_synced ? "changed" : "read",
			kobj_string(cm, "metadata.resourceVersion"), ctl->nodes.n);
		ctl->cm_missing_logged = false;
	} else {
		ctl_log(ctl,
			"configmap %s/%s: deleted; nodes keep what they advertise until it is back",
			ctl->cm_ns, ctl->cm_name);
	}
	all_nodes_dirty(ctl);
}

static void cm_event(void *arg, enum kube_event ev, json_t *obj)
{
	struct controller *ctl = arg;

	if (ev == KUBE_EV_LISTED)
		ctl->cm_listed_gen = ctl->cm_gen;
	cm_set(ctl, ev == KUBE_EV_DELETED ? NULL : obj);
}

static void cm_list_end(void *arg)
{
	struct controller *ctl = arg;

	/* A relist that found nothing (deleted while the watch was down): gone. */
	if (ctl->cm_listed_gen != ctl->cm_gen)
		cm_set(ctl, NULL);
	ctl->cm_synced = true;
}

/* ---- writing -------------------------------------------------------------------------- */

struct write_ctx {
	struct controller *ctl;
	struct cnode *node; /* or */
	struct cpod *pod;
	char *what;
};

static void now_rfc3339(char *buf, size_t n)
{
	time_t t = time(NULL);
	struct tm tm;

	gmtime_r(&t, &tm);
	strftime(buf, n, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

/*
 * An Event on its way. Like the kubelet's recorder (client-go
 * recordToSink), a POST that got no answer is tried again, 12 tries in all;
 * an answer of the apiserver, even a refusal, is final. The recorder waits
 * 10 s between tries, we wait 1-2 s so a rehearsal shows the Event soon.
 */
struct event_post {
	struct controller *ctl;
	char *what, *path, *body;
	unsigned tries;
	struct event_post *next; /* in ctl->event_retries while waiting */
};

#define EVENT_MAX_TRIES 12

static void event_post_free(struct event_post *ep)
{
	free(ep->what);
	free(ep->path);
	free(ep->body);
	free(ep);
}

static void on_event_posted(void *arg, const struct kube_result *r);

/* Queue a try. */
static void event_send(struct event_post *ep)
{
	ep->tries++;
	ctl_request(ep->ctl, "POST", ep->path, NULL, ep->body, on_event_posted, ep);
}

static void event_retry(void *arg)
{
	struct event_post *ep = arg;

	for (struct event_post **pp = &ep->ctl->event_retries; *pp; pp = &(*pp)->next)
		if (*pp == ep) {
			*pp = ep->next;
			break;
		}
	event_send(ep);
}

static void on_event_posted(void *arg, const struct kube_result *r)
{
	struct event_post *ep = arg;
	struct controller *ctl = ep->ctl;

	ctl->in_flight--;
	if (!r) {
		/* Never sent (the loop refused it, or the controller is freed). */
		event_post_free(ep);
		return;
	}
	if (r->error && r->code == 0 && ep->tries < EVENT_MAX_TRIES && !ctl->draining) {
		long delay = ep->tries < 2 ? 1000 : 2000;
		ctl_log(ctl, "%s: posting the Event failed: %s; trying again in %ld ms", ep->what,
			r->error, delay);
		ep->next = ctl->event_retries;
		ctl->event_retries = ep;
		/* Freed through ctl->event_retries when it never fires. */
		ctl_after(ctl, delay, event_retry, NULL, ep);
		return;
	}
	if (r->error) {
		ctl->write_errors++;
		ctl_log(ctl, "%s: posting the Event failed: %s", ep->what, r->error);
	}
	event_post_free(ep);
}

/* A Warning Event about an object, as the kubelet's recorder writes one. */
static void post_event(struct controller *ctl, const char *kind, const char *ns, const char *name,
		       const char *uid, const char *host, const char *reason, const char *message)
{
	char ts[32];
	json_t *ev;
	struct event_post *ep;
	const char *evns = ns ? ns : ctl->ev_ns;
	/* A pod's admission failure is the kubelet's Event (rejectPod); a node's is ours. */
	const char *component = !strcmp(kind, "Pod") ? "kubelet" : "gpushare-controller";

	now_rfc3339(ts, sizeof(ts));
	ev = json_pack("{s:s,s:s,s:{s:s,s:s},s:{s:s,s:s,s:s,s:s?,s:s?},s:s,s:s,s:s,s:{s:s,s:s?},"
		       "s:s,s:s,s:i,s:s}",
		       "apiVersion", "v1", "kind", "Event", "metadata", "generateName", name,
		       "namespace", evns, "involvedObject", "apiVersion", "v1", "kind", kind,
		       "name", name, "namespace", ns, "uid", uid, "reason", reason, "message",
		       message, "type", "Warning", "source", "component", component, "host", host,
		       "firstTimestamp", ts, "lastTimestamp", ts, "count", 1, "reportingComponent",
		       component);
	if (!ev)
		return;
	{
		/* generateName wants a trailing dot, as client-go's recorder names events. */
		char *gn = gs_xasprintf("%s.", name);
		json_object_set_new(json_object_get(ev, "metadata"), "generateName",
				    json_string(gn));
		free(gn);
	}
	ep = gs_xcalloc(1, sizeof(*ep));
	ep->ctl = ctl;
	ep->body = json_dumps(ev, JSON_COMPACT);
	json_decref(ev);
	ep->path = gs_xasprintf("/api/v1/namespaces/%s/events", evns);
	ep->what = gs_xasprintf("%s %s%s%s", kind, ns ? ns : "", ns ? "/" : "", name);
	event_send(ep);
	ctl->events_posted++;
}

static void retry_node_later(void *arg);
static void later_free(void *arg);

struct later {
	struct controller *ctl;
	char *name;
};

static void schedule_node_after(struct controller *ctl, const char *name, long ms)
{
	struct later *lt = gs_xcalloc(1, sizeof(*lt));

	lt->ctl = ctl;
	lt->name = gs_xstrdup(name);
	ctl_after(ctl, ms, retry_node_later, later_free, lt);
}

static void schedule_node_retry(struct controller *ctl, const char *name)
{
	schedule_node_after(ctl, name, RETRY_LATER_MS);
}

static void later_free(void *arg)
{
	struct later *lt = arg;

	free(lt->name);
	free(lt);
}

static void retry_node_later(void *arg)
{
	struct later *lt = arg;
	struct cnode *n = map_get(&lt->ctl->nodes, lt->name);

	if (n)
		mark_dirty(lt->ctl, n);
	later_free(lt);
}

static void on_node_got(void *arg, const struct kube_result *r)
{
	struct write_ctx *w = arg;
	struct controller *ctl = w->ctl;

	ctl->in_flight--;
	if (!r) {
		/* Never sent. */
	} else if (!r->error) {
		json_t *node = json_loadb(r->body, r->len, 0, NULL);
		struct cnode *n;
		if (node && (n = node_store(ctl, node, true)))
			mark_dirty(ctl, n);
		json_decref(node);
	} else if (r->code != 404) {
		schedule_node_retry(ctl, w->what);
	}
	free(w->what);
	free(w);
}

/* 409: read the node again, then reconcile it. */
static void reread_node(struct controller *ctl, const char *name)
{
	struct write_ctx *w = gs_xcalloc(1, sizeof(*w));
	char *path = gs_xasprintf("/api/v1/nodes/%s", name);

	w->ctl = ctl;
	w->what = gs_xstrdup(name);
	ctl_request(ctl, "GET", path, NULL, NULL, on_node_got, w);
	free(path);
}

static void on_node_patched(void *arg, const struct kube_result *r)
{
	struct write_ctx *w = arg;
	struct controller *ctl = w->ctl;
	struct cnode *n = w->node;

	ctl->in_flight--;
	n->busy = false;
	if (!n->name[0]) {
		/* Deleted meanwhile. */
		node_free(ctl, n);
	} else if (!r) {
		/* Never sent: it is planned again once something about it changes. */
	} else if (!r->error) {
		json_t *node = json_loadb(r->body, r->len, 0, NULL);
		ctl->node_patches++;
		ctl_log(ctl, "node %s: advertised %s", n->name, w->what);
		if (node)
			node_store(ctl, node, true);
		json_decref(node);
	} else if (r->code == 409 || kube_status_invalid_field(r->st, "metadata.uid")) {
		/*
		 * Replaced by a namesake since it was planned: the uid the write
		 * carries is refused (422, metadata.uid is immutable; a PATCH has
		 * no precondition of its own, kubeclient.h). Plan the new one.
		 */
		ctl_log(ctl, "node %s: %s (%s); reading it again", n->name,
			r->code == 409 ? "conflict" : "replaced since it was planned", r->error);
		reread_node(ctl, n->name);
	} else if (r->code == 404) {
		ctl_log(ctl, "node %s: gone before its advertisement was written", n->name);
	} else {
		ctl->write_errors++;
		ctl_log(ctl, "node %s: writing the advertisement failed: %s; again in %lds",
			n->name, r->error, RETRY_LATER_MS / 1000);
		schedule_node_retry(ctl, n->name);
	}
	free(w->what);
	free(w);
}

/* One PATCH of the status subresource: labels, annotations, capacity, allocatable. */
static void write_node(struct controller *ctl, struct cnode *n, const json_t *patch,
		       const char *what)
{
	char *path = gs_xasprintf("/api/v1/nodes/%s/status", n->name);
	json_t *p = json_deep_copy(patch);
	char *body;
	struct write_ctx *w = gs_xcalloc(1, sizeof(*w));

	/* The node we planned for, not a namesake made since: a changed uid is a 409. */
	if (n->uid) {
		json_t *md = json_object_get(p, "metadata");
		if (!md) {
			md = json_object();
			json_object_set_new(p, "metadata", md);
		}
		json_object_set_new(md, "uid", json_string(n->uid));
	}
	body = json_dumps(p, JSON_COMPACT);
	json_decref(p);
	w->ctl = ctl;
	w->node = n;
	w->what = gs_xstrdup(what);
	ctl_request(ctl, "PATCH", path, "application/merge-patch+json", body, on_node_patched, w);
	n->busy = true;
	free(path);
	free(body);
}

/* What a real node shows for a failure sync_plan reports, by which part of the stack fails. */
static const char *real_node_does(const struct sync_node *sn)
{
	if (sn->message && strstr(sn->message, NODEHW_ANN_GPU_HEALTH))
		return "no real node has this annotation: gpushare plays no fault and changes "
		       "nothing on the node until it is fixed";
	if (sn->dra && !sn->patch)
		return "gpushare publishes nothing new for it and leaves its ResourceSlices as "
		       "they are";
	if (sn->message && !strncmp(sn->message, "config-manager:", 15))
		return "a real node's config-manager sidecar crash-loops and leaves the previous "
		       "config linked, so the device plugin and GFD keep serving it";
	if (sn->patch && json_object_get(sn->patch, "status"))
		return "a real node's device plugin crash-loops (CrashLoopBackOff): the kubelet "
		       "marks its devices unhealthy (allocatable 0) and after 5 minutes reports "
		       "capacity 0; gpushare keeps the last good advertisement";
	if (sn->patch)
		return "a real node's mig-manager sets nvidia.com/mig.config.state=failed and "
		       "changes nothing else";
	return "a real node's device plugin and GFD crash-loop (CrashLoopBackOff): GFD's labels "
	       "stay, the kubelet marks the devices unhealthy (allocatable 0) and after 5 "
	       "minutes reports capacity 0; gpushare keeps the last good advertisement";
}

static void warn_node(struct controller *ctl, struct cnode *n, const char *why, const char *real)
{
	char *msg = gs_xasprintf("%s; %s", why, real);
	uint32_t h = hash_str(msg) | 1u;
	/* A fault declaration gpushare cannot read is no device-plugin config failure. */
	bool health = strstr(why, NODEHW_ANN_GPU_HEALTH) != NULL;

	if (n->warned != h) {
		n->warned = h;
		ctl_log(ctl, "node %s: warning: %s", n->name, msg);
		/* The kubelet's node events: involvedObject uid is the node's name. */
		post_event(ctl, "Node", NULL, n->name, n->name, n->name,
			   health ? "FailedGPUHealth" : "FailedDevicePluginConfig", msg);
	}
	free(msg);
}

/* ---- ResourceSlices (docs/guide/dra.md "Slices kept in step") ---------------------------- */

#define MAX_ECHOES 4096

static void echoes_clear(struct controller *ctl)
{
	char *k;

	MAP_FOREACH (&ctl->echoes, i, k)
		free(k);
	free(ctl->echoes.keys);
	free(ctl->echoes.vals);
	memset(&ctl->echoes, 0, sizeof(ctl->echoes));
}

static void echo_add(struct controller *ctl, const char *name, const char *rv)
{
	char *key = gs_xasprintf("%s@%s", name, rv);

	if (map_get(&ctl->echoes, key)) {
		free(key);
		return;
	}
	/* Events that never came (a watch restart) must not pile up. */
	if (ctl->echoes.n >= MAX_ECHOES)
		echoes_clear(ctl);
	map_put(&ctl->echoes, key, key);
}

/* Whether a watch event is our own write's; it is forgotten then. */
static bool echo_take(struct controller *ctl, const char *name, const char *rv)
{
	char *key = gs_xasprintf("%s@%s", name, rv), *k;
	bool mine;

	k = map_get(&ctl->echoes, key);
	mine = k != NULL;
	if (mine) {
		map_del(&ctl->echoes, key);
		free(k);
	}
	free(key);
	return mine;
}

/* The slice writes the publish hook made, so their events are known as ours. */
static void remember_echoes(struct controller *ctl, const struct sync_report *rep)
{
	for (size_t i = 0; i < rep->n_ops; i++) {
		const struct sync_op *op = &rep->ops[i];

		if (!op->node || !op->done || !op->name)
			continue;
		if (op->action == SYNC_OP_DELETE)
			echo_add(ctl, op->name, "-");
		else if (op->result_rv)
			echo_add(ctl, op->name, op->result_rv);
	}
}

static void slice_list_begin(void *arg)
{
	(void)arg;
}

struct held_slice {
	enum kube_event ev;
	char *node, *name, *rv;
};

/* A slice of `node` was written: ours (an echo), or someone else's, and its node is planned again.
 */
static void slice_seen(struct controller *ctl, enum kube_event ev, const char *node,
		       const char *name, const char *rv)
{
	struct cnode *n = map_get(&ctl->nodes, node);

	if (!n)
		return; /* a node gpushare does not manage: never touched */
	if (echo_take(ctl, name, ev == KUBE_EV_DELETED ? "-" : rv ? rv : ""))
		return;
	ctl->slice_resyncs++;
	n->slice_touched = true;
	ctl_log(ctl, "node %s: ResourceSlice %s %s by someone else; re-publishing", node, name,
		ev == KUBE_EV_DELETED ? "deleted"
		: ev == KUBE_EV_ADDED ? "created"
				      : "changed");
	mark_dirty(ctl, n);
}

static void slice_event(void *arg, enum kube_event ev, json_t *obj)
{
	struct controller *ctl = arg;
	const char *node = kobj_string(obj, "spec.nodeName"), *name = kobj_name(obj);
	const char *rv = kobj_string(obj, "metadata.resourceVersion");
	struct held_slice *h;

	if (ev == KUBE_EV_LISTED || !node || !name)
		return;
	if (!ctl->publishing) {
		slice_seen(ctl, ev, node, name, rv);
		return;
	}
	/* Its answer may come after its event: judged once the writes are known. */
	if (ctl->n_held == ctl->cap_held) {
		ctl->cap_held = ctl->cap_held ? 2 * ctl->cap_held : 16;
		ctl->held = gs_xrealloc(ctl->held, ctl->cap_held * sizeof(*ctl->held));
	}
	h = &ctl->held[ctl->n_held++];
	h->ev = ev;
	h->node = gs_xstrdup(node);
	h->name = gs_xstrdup(name);
	h->rv = rv ? gs_xstrdup(rv) : NULL;
}

/* The events seen while publishing, now that our writes' are known. */
static void held_slices_judge(struct controller *ctl, bool judge)
{
	for (size_t i = 0; i < ctl->n_held; i++) {
		struct held_slice *h = &ctl->held[i];
		if (judge)
			slice_seen(ctl, h->ev, h->node, h->name, h->rv);
		free(h->node);
		free(h->name);
		free(h->rv);
	}
	ctl->n_held = 0;
}

static void slice_list_end(void *arg)
{
	struct controller *ctl = arg;
	struct cnode *n;

	/* A relist may hide deletions: every node is planned again. */
	if (ctl->slices_synced) {
		MAP_FOREACH (&ctl->nodes, i, n)
			mark_dirty(ctl, n);
		echoes_clear(ctl);
	}
	ctl->slices_synced = true;
}

/* Pods on `node` holding nvidia.com devices: mig-manager's apply fails on their GPUs. */
static unsigned gpu_pods_on(void *arg, const char *node)
{
	struct controller *ctl = arg;
	struct cpod *p;
	unsigned n = 0;

	MAP_FOREACH (&ctl->pods, i, p)
		if (p->state == POD_ADMITTED && p->n_req && p->node && !strcmp(p->node, node))
			n++;
	return n;
}

static void refuse_pod(struct controller *ctl, struct cpod *p, struct cnode *n, const char *reason,
		       const char *message);

/* A write beside the advertisement (the Ready condition, the Lease). */
struct aux_write {
	struct controller *ctl;
	char *node, *what;
};

static void on_aux_written(void *arg, const struct kube_result *r)
{
	struct aux_write *w = arg;
	struct controller *ctl = w->ctl;

	ctl->in_flight--;
	if (r && r->error) {
		ctl->write_errors++;
		ctl_log(ctl, "node %s: %s failed: %s%s", w->node, w->what, r->error,
			r->code == 404 ? "" : "; the node is planned again");
		if (r->code != 404)
			schedule_node_retry(ctl, w->node);
	}
	free(w->node);
	free(w->what);
	free(w);
}

static void write_aux(struct controller *ctl, const char *node, const char *path, const char *ctype,
		      const json_t *patch, const char *what)
{
	struct aux_write *w = gs_xcalloc(1, sizeof(*w));
	char *body = json_dumps(patch, JSON_COMPACT);

	w->ctl = ctl;
	w->node = gs_xstrdup(node);
	w->what = gs_xstrdup(what);
	ctl_request(ctl, "PATCH", path, ctype, body, on_aux_written, w);
	free(body);
}

/* {resource: devices} the admitted pods on `node` hold: the checkpoint's allocatedDevices. */
static json_t *held_on(struct controller *ctl, const char *node)
{
	json_t *held = json_object();
	struct cpod *p;

	MAP_FOREACH (&ctl->pods, i, p) {
		if (p->state != POD_ADMITTED || strcmp(p->node, node))
			continue;
		for (uint8_t k = 0; k < p->n_req; k++) {
			const char *res = ctl->res_names[p->req[k].id];
			json_int_t have = json_integer_value(json_object_get(held, res));
			json_object_set_new(held, res, json_integer(have + p->req[k].n));
		}
	}
	return held;
}

/* Whether a node declares a kubelet restart or shows one: worth reading it through. */
static bool kubelet_touched(const struct cnode *n)
{
	return strstr(n->shared->s, NODEHW_ANN_KUBELET_RESTART) ||
	       strstr(n->shared->s, KUBELET_NOT_READY_MESSAGE);
}

/*
 * The kubelet started again (engine/kubeletrestart.h): every pod admitted
 * before is admitted again, and the device manager fails those it can no
 * longer serve.
 */
static void kubelet_readmit(struct controller *ctl, struct cnode *n)
{
	json_t *node = node_json(n), *held = held_on(ctl, n->name);
	long long now = (long long)time(NULL);
	struct kubelet_plan k;
	struct cpod *p;

	kubelet_plan_node(node, now, &k);
	MAP_FOREACH (&ctl->pods, i, p) {
		char *reason, *message;
		json_t *pod;

		if (p->state != POD_ADMITTED || p->busy || !p->n_req || strcmp(p->node, n->name))
			continue;
		pod = json_loads(p->text, 0, NULL);
		if (pod && kubelet_pod_verdict(&k, node, pod, true, held, now, &reason, &message)) {
			refuse_pod(ctl, p, n, reason, message);
			free(reason);
			free(message);
		}
		json_decref(pod);
	}
	kubelet_plan_release(&k);
	json_decref(held);
	json_decref(node);
}

/* What the kubelet writes itself: its Ready condition and its Lease. */
static void kubelet_writes(struct controller *ctl, struct cnode *n, const struct sync_node *sn)
{
	char *path;

	if (sn->kubelet_event)
		ctl_log(ctl, "node %s: %s", n->name, sn->kubelet_event);
	/* The Lease first: kwok leaves a node alone once it is not the holder. */
	if (sn->kubelet_lease) {
		path = gs_xasprintf(
			"/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases/%s",
			n->name);
		write_aux(ctl, n->name, path, "application/merge-patch+json", sn->kubelet_lease,
			  "writing its Lease");
		free(path);
	}
	if (sn->kubelet_status) {
		path = gs_xasprintf("/api/v1/nodes/%s/status", n->name);
		write_aux(ctl, n->name, path, "application/strategic-merge-patch+json",
			  sn->kubelet_status, "writing its Ready condition");
		free(path);
	}
	if (sn->kubelet_window)
		kubelet_readmit(ctl, n);
}

/* A plan of changed nodes, from sync_plan to the writes of what differs. */
struct batch {
	struct controller *ctl;
	struct sync_report rep;
	long long now; /* the plan's clock (sync_opts.now) */
};

static void batch_write(struct batch *b);

/* The publish hook is done with the plan: its writes' events are known, the nodes go next. */
static void batch_published(void *arg)
{
	struct batch *b = arg;
	struct controller *ctl = b->ctl;

	remember_echoes(ctl, &b->rep);
	ctl->publishing = NULL;
	held_slices_judge(ctl, true);
	batch_write(b);
}

/* Plan a batch of dirty nodes, publish its DRA half, then write what differs. */
static void reconcile_batch(struct controller *ctl, struct cnode **batch, size_t k)
{
	struct sync_opts so = {.configmap_namespace = ctl->cm_ns,
			       .configmap_name = ctl->cm_name,
			       .default_config = ctl->o.default_config,
			       .fallbacks = ctl->o.fallbacks,
			       .only_node = NULL,
			       .dry_run = false,
			       .dra_partitionable = ctl->o.dra_partitionable,
			       .dra_probe_error = ctl->o.dra_probe_error,
			       .dra_counters_apart = ctl->o.dra_counters_apart,
			       .disable_healthchecks = ctl->o.disable_healthchecks,
			       .enable_healthchecks = ctl->o.enable_healthchecks,
			       .now = (long long)time(NULL),
			       .mig_walk = true,
			       .gpu_pods = gpu_pods_on,
			       .gpu_pods_arg = ctl};
	struct batch *b = gs_xcalloc(1, sizeof(*b));
	struct gs_error err;
	json_t *arr = json_array();
	int rc;

	b->ctl = ctl;
	b->now = so.now;
	for (size_t i = 0; i < k; i++) {
		json_array_append_new(arr, node_json(batch[i]));
	}
	ctl->reconciles += k;
	rc = sync_plan(ctl->configmap, arr, &so, &b->rep, &err);
	json_decref(arr);
	if (rc < 0) {
		/* The ConfigMap itself is unusable: every node keeps what it has. */
		ctl->plan_failures += k;
		for (size_t i = 0; i < k; i++)
			warn_node(ctl, batch[i], err.msg,
				  "a real node's device plugin and GFD fail to load it and "
				  "crash-loop (CrashLoopBackOff); gpushare keeps the last good "
				  "advertisement");
		sync_report_release(&b->rep);
		free(b);
		return;
	}
	for (size_t i = 0; i < b->rep.n; i++) {
		struct cnode *n = map_get(&ctl->nodes, b->rep.nodes[i].name);

		if (n && n->slice_touched) {
			b->rep.nodes[i].slice_touched = true;
			n->slice_touched = false;
		}
	}
	if (!ctl->o.publish) {
		batch_write(b);
		return;
	}
	ctl->publishing = b;
	ctl->o.publish(ctl->o.publish_arg, &b->rep, batch_published, b);
}

/* Write the plan's nodes: advertisements, failures' warnings, events. Frees b. */
static void batch_write(struct batch *b)
{
	struct controller *ctl = b->ctl;
	struct sync_report rep = b->rep;
	for (size_t i = 0; i < rep.n; i++) {
		struct sync_node *sn = &rep.nodes[i];
		struct cnode *n = map_get(&ctl->nodes, sn->name);
		char *res;

		if (!n)
			continue;
		for (size_t wi = 0; wi < sn->warnings.n; wi++)
			ctl_log(ctl, "node %s: note: %s", n->name, sn->warnings.items[wi]);
		if (sn->replan_at) {
			/* mig-manager's walk or the kubelet's window moves on then. */
			long long ms = (sn->replan_at - b->now) * 1000;
			schedule_node_after(ctl, n->name, ms < 0 ? 0 : (long)ms);
		}
		kubelet_writes(ctl, n, sn);
		if (sn->outcome == SYNC_FAILED) {
			ctl->plan_failures++;
			warn_node(ctl, n, sn->message, real_node_does(sn));
			/*
			 * Never wipe: only a labels-only patch (mig-manager's state) is
			 * written, or mig-manager's own writes: its walk goes on
			 * whatever the device plugin makes of the layout.
			 */
			if (sn->patch && !json_object_get(sn->patch, "status"))
				write_node(ctl, n, sn->patch, "nvidia.com/mig.config.state=failed");
			else if (sn->mig_patch)
				write_node(ctl, n, sn->mig_patch,
					   "mig-manager's walk (the device plugin fails)");
		} else {
			n->warned = 0;
		}
		if (sn->mig_event) {
			ctl_log(ctl, "node %s: mig-manager: %s", n->name, sn->mig_event);
			if (sn->mig_failed)
				post_event(ctl, "Node", NULL, n->name, n->name, n->name,
					   "FailedMIGReconfigure", sn->mig_event);
		}
		if (sn->outcome == SYNC_FAILED)
			continue;
		if (sn->health_event) {
			/*
			 * The device plugin logs each device it marks unhealthy
			 * (internal/plugin/server.go:279); the DRA driver each taint.
			 */
			ctl_log(ctl, "node %s: %s", n->name, sn->health_event);
			post_event(ctl, "Node", NULL, n->name, n->name, n->name, "GPUUnhealthy",
				   sn->health_event);
		}
		if (sn->outcome != SYNC_UPDATED || !sn->patch)
			continue;
		res = sync_resources_text(sn);
		{
			char *what =
				gs_xasprintf("%s [config %s]", *res ? res : "(no resources)",
					     sn->config && *sn->config ? sn->config : "(empty)");
			write_node(ctl, n, sn->patch, what);
			free(what);
		}
		free(res);
	}
	sync_report_release(&rep);
	free(b);
}

/*
 * Writes queued or in flight at once: max_pending, else four times what
 * the loop runs at once now (its limit moves with the apiserver's latency),
 * so the loop has the next writes at hand and a pod bound during a
 * fleet-wide edit waits behind a few rounds of them, not behind all.
 */
static unsigned pending_cap(const struct controller *ctl)
{
	if (ctl->o.max_pending)
		return ctl->o.max_pending;
	return ctl->l ? 4 * kube_loop_limit(ctl->l) : DEF_MAX_PENDING;
}

static void reconcile_nodes(struct controller *ctl)
{
	struct cnode *batch[PLAN_BATCH], *n;
	struct map *m = &ctl->nodes;
	size_t k = 0, seen = 0, i, start;
	unsigned node_max;

	/* One plan's DRA half at a time: the next waits for its end. */
	if (!ctl->dirty || !ctl->nodes_synced || !ctl->cm_synced || ctl->publishing)
		return;
	if (!ctl->configmap) {
		if (!ctl->cm_missing_logged)
			ctl_log(ctl,
				"configmap %s/%s: not found; nodes keep what they advertise until "
				"it "
				"exists",
				ctl->cm_ns, ctl->cm_name);
		ctl->cm_missing_logged = true;
		return;
	}
	/*
	 * A quarter of the writes is left to admissions: a pod bound during a
	 * fleet-wide edit waits behind the writes queued, not behind every
	 * node still to plan (5,000 nodes take minutes).
	 *
	 * The scan goes on where the last one stopped, and ends once it saw every
	 * dirty node: a 5,000-node edit written a few dozen at a time walks the map
	 * about once, not once per completed write (that walk was a tenth of the
	 * controller's CPU during such an edit).
	 */
	node_max = pending_cap(ctl) - pending_cap(ctl) / 4;
	start = ctl->scan_at;
	for (size_t step = 0; step < m->cap && seen < ctl->dirty; step++) {
		i = (start + step) & (m->cap - 1);
		if (!m->keys[i] || m->keys[i] == TOMB)
			continue;
		n = m->vals[i];
		if (!n->dirty)
			continue;
		if (n->busy) {
			seen++; /* dirty, left for later */
			continue;
		}
		if (ctl->in_flight + k >= node_max) {
			ctl->scan_at = i;
			break;
		}
		n->dirty = false;
		ctl->dirty--;
		batch[k++] = n;
		ctl->scan_at = (i + 1) & (m->cap - 1);
		if (k == PLAN_BATCH) {
			reconcile_batch(ctl, batch, k);
			k = 0;
			if (ctl->publishing)
				return;
		}
	}
	if (k)
		reconcile_batch(ctl, batch, k);
}

/* ---- pods ----------------------------------------------------------------------------- */

static json_t *reduce_containers(const json_t *list)
{
	json_t *out = json_array(), *c;
	size_t i;

	json_array_foreach ((json_t *)list, i, c) {
		json_t *r = json_object();
		copy_key(r, c, "name");
		copy_key(r, c, "resources");
		copy_key(
			r, c,
			"restartPolicy"); /* a sidecar's devices count as the kubelet counts them */
		json_array_append_new(out, r);
	}
	return out;
}

static json_t *reduce_pod(const json_t *pod)
{
	const json_t *md = json_object_get(pod, "metadata");
	const json_t *spec = json_object_get(pod, "spec");
	json_t *m = json_object(), *s = json_object(), *st = json_object();

	copy_key(m, md, "name");
	copy_key(m, md, "namespace");
	copy_key(m, md, "uid");
	copy_key(m, md, "resourceVersion");
	copy_key(m, md, "annotations");
	copy_key(m, md, "deletionTimestamp");
	copy_key(s, spec, "nodeName");
	json_object_set_new(s, "containers",
			    reduce_containers(json_object_get(spec, "containers")));
	if (json_object_get(spec, "initContainers"))
		json_object_set_new(s, "initContainers",
				    reduce_containers(json_object_get(spec, "initContainers")));
	/* What the kubelet's prepare of DRA claims reads (draprepare_pod). */
	copy_key(s, spec, "resourceClaims");
	copy_key(st, json_object_get(pod, "status"), "resourceClaimStatuses");
	copy_key(st, json_object_get(pod, "status"), "phase");
	return json_pack("{s:o,s:o,s:o}", "metadata", m, "spec", s, "status", st);
}

/* What a pod holds while it runs: its containers' nvidia.com/ requests (limits when unset). */
static void pod_counts(struct controller *ctl, struct cpod *p, const json_t *red)
{
	const json_t *cs = kobj_get(red, "spec.containers");
	json_t *c;
	size_t i;

	p->n_req = 0;
	json_array_foreach ((json_t *)cs, i, c) {
		const json_t *req = kobj_map(c, "resources.requests");
		const json_t *lim = kobj_map(c, "resources.limits");
		const char *k;
		json_t *v;
		json_object_foreach ((json_t *)lim, k, v)
			if (!strncmp(k, "nvidia.com/", 11) && !json_object_get(req, k))
				add_count(p->req, &p->n_req, res_id(ctl, k), quantity_count(v));
		json_object_foreach ((json_t *)req, k, v)
			if (!strncmp(k, "nvidia.com/", 11))
				add_count(p->req, &p->n_req, res_id(ctl, k), quantity_count(v));
	}
}

static void pod_free(struct cpod *p)
{
	if (!p)
		return;
	free(p->key);
	free(p->uid);
	free(p->node);
	free(p->text);
	free(p);
}

static void set_state(struct controller *ctl, struct cpod *p, uint8_t st)
{
	if (p->state == POD_WAITING && st != POD_WAITING)
		ctl->waiting--;
	if (p->state != POD_WAITING && st == POD_WAITING)
		ctl->waiting++;
	p->state = st;
}

static void pod_forget(struct controller *ctl, struct cpod *p)
{
	map_del(&ctl->pods, p->key);
	set_state(ctl, p, POD_DONE);
	if (p->busy)
		p->key[0] = '\0';
	else
		pod_free(p);
}

static void pod_store(struct controller *ctl, const json_t *pod, bool from_write)
{
	const char *ns = kobj_namespace(pod), *name = kobj_name(pod);
	const char *node = kobj_string(pod, "spec.nodeName");
	const char *phase = kobj_string(pod, "status.phase");
	const char *adm = kobj_annotation(pod, LEDGER_ANN_ADMITTED);
	struct cpod *p;
	char *key;
	json_t *red;
	uint8_t st;

	if (!ns || !name || !node || !node[0])
		return;
	key = gs_xasprintf("%s/%s", ns, name);
	p = map_get(&ctl->pods, key);
	if (p && p->rv && rv_of(pod) && rv_of(pod) < p->rv && !from_write) {
		free(key);
		return;
	}
	if (p && p->uid && kobj_string(pod, "metadata.uid") &&
	    strcmp(p->uid, kobj_string(pod, "metadata.uid")) != 0) {
		/* A new pod of the same name. */
		pod_forget(ctl, p);
		p = NULL;
	}
	if (!p) {
		p = gs_xcalloc(1, sizeof(*p));
		p->key = key;
		p->state = POD_DONE;
		map_put(&ctl->pods, p->key, p);
	} else {
		free(key);
	}
	p->gen = ctl->pod_gen;
	p->rv = rv_of(pod);
	free(p->uid);
	p->uid = gs_xstrdup(kobj_string(pod, "metadata.uid") ? kobj_string(pod, "metadata.uid")
							     : "");
	free(p->node);
	p->node = gs_xstrdup(node);
	red = reduce_pod(pod);
	free(p->text);
	p->text = json_dumps(red, JSON_COMPACT | JSON_SORT_KEYS);
	pod_counts(ctl, p, red);
	json_decref(red);
	/*
	 * A pod being deleted holds its devices until it is gone or finished:
	 * the kubelet's device manager frees only what its active pods no
	 * longer hold, and a terminating pod stays active until its containers
	 * stopped (k8s.io/kubernetes v1.37.2 pkg/kubelet/kubelet_pods.go
	 * filterOutInactivePods, cm/devicemanager/manager.go
	 * UpdateAllocatedDevices). One never admitted is nothing to decide.
	 */
	if (phase && (!strcmp(phase, "Succeeded") || !strcmp(phase, "Failed")))
		st = !strcmp(phase, "Failed") && !(adm && !strcmp(adm, "true")) ? POD_FAILED
										: POD_DONE;
	else if (adm && !strcmp(adm, "true"))
		st = POD_ADMITTED;
	else if (kobj_string(pod, "metadata.deletionTimestamp"))
		st = POD_DONE;
	else
		st = POD_WAITING;
	set_state(ctl, p, st);
}

static void pod_list_begin(void *arg)
{
	struct controller *ctl = arg;

	ctl->pod_gen++;
}

static void pod_event(void *arg, enum kube_event ev, json_t *obj)
{
	struct controller *ctl = arg;

	if (ev == KUBE_EV_DELETED) {
		char *key = gs_xasprintf("%s/%s", kobj_namespace(obj) ? kobj_namespace(obj) : "",
					 kobj_name(obj) ? kobj_name(obj) : "");
		struct cpod *p = map_get(&ctl->pods, key);
		if (p)
			pod_forget(ctl, p);
		free(key);
		return;
	}
	pod_store(ctl, obj, false);
}

static void pod_list_end(void *arg)
{
	struct controller *ctl = arg;
	struct cpod *p;

	MAP_FOREACH (&ctl->pods, i, p)
		if (p->gen != ctl->pod_gen)
			pod_forget(ctl, p);
	if (!ctl->pods_synced)
		ctl_log(ctl, "pods listed: %zu bound, %zu waiting for admission", ctl->pods.n,
			ctl->waiting);
	ctl->pods_synced = true;
}

static void on_pod_written(void *arg, const struct kube_result *r)
{
	struct write_ctx *w = arg;
	struct controller *ctl = w->ctl;
	struct cpod *p = w->pod;
	struct cnode *n;

	ctl->in_flight--;
	p->busy = false;
	n = p->key[0] ? map_get(&ctl->nodes, p->node) : NULL;
	if (n)
		n->admitting = false;
	if (!p->key[0]) {
		pod_free(p);
	} else if (!r) {
		/* Never sent: decided again at the next tick. */
	} else if (!r->error) {
		json_t *pod = json_loadb(r->body, r->len, 0, NULL);
		ctl_log(ctl, "pod %s: %s", p->key, w->what);
		if (pod)
			pod_store(ctl, pod, true);
		json_decref(pod);
	} else if (r->code == 404 || r->code == 409 ||
		   kube_status_invalid_field(r->st, "metadata.uid")) {
		/*
		 * Deleted, or a namesake with another uid (its uid refused: 422,
		 * metadata.uid is immutable): the watch tells what is there.
		 */
		ctl_log(ctl, "pod %s: %s (%s)", p->key, r->error,
			r->code == 404 ? "gone" : "replaced");
		pod_forget(ctl, p);
	} else {
		/*
		 * Not decided again at once: a write refused for good (a 403 when
		 * the RBAC lacks pods/status) would otherwise loop, with an Event
		 * posted per attempt.
		 */
		ctl->write_errors++;
		p->failed_ms = mono_ms();
		ctl_log(ctl, "pod %s: writing the admission failed: %s; again in %lds", p->key,
			r->error, RETRY_LATER_MS / 1000);
	}
	free(w->what);
	free(w);
}

static void write_pod(struct controller *ctl, struct cpod *p, struct cnode *n, const char *path,
		      json_t *patch, const char *what, const char *ctype)
{
	struct write_ctx *w = gs_xcalloc(1, sizeof(*w));
	char *body;

	/* The pod we decided for, not a namesake made since: a changed uid is a 409. */
	json_object_set_new(json_object_get(patch, "metadata"), "uid", json_string(p->uid));
	body = json_dumps(patch, JSON_COMPACT);
	w->ctl = ctl;
	w->pod = p;
	w->what = gs_xstrdup(what);
	ctl_request(ctl, "PATCH", path, ctype ? ctype : "application/merge-patch+json", body,
		    on_pod_written, w);
	p->busy = true;
	if (n)
		n->admitting = true;
	free(body);
}

static json_t *holders_of(struct controller *ctl, const char *node)
{
	json_t *arr = json_array();
	struct cpod *p;

	MAP_FOREACH (&ctl->pods, i, p)
		if (p->state == POD_ADMITTED && !strcmp(p->node, node)) {
			json_t *o = json_loads(p->text, 0, NULL);
			if (o)
				json_array_append_new(arr, o);
		}
	return arr;
}

/*
 * The kubelet's rejectPod (pkg/kubelet/kubelet.go): phase Failed with the
 * reason and "Pod was rejected: " + message, and a Warning Event with the
 * same reason and the message.
 */
static void refuse_pod(struct controller *ctl, struct cpod *p, struct cnode *n, const char *reason,
		       const char *message)
{
	const char *slash = strchr(p->key, '/');
	char *ns = gs_xstrndup(p->key, (size_t)(slash - p->key));
	const char *name = slash + 1;
	char *what = gs_xasprintf("failed admission: %s: %s", reason, message);
	char *status_msg = gs_xasprintf("Pod was rejected: %s", message);
	json_t *patch = json_pack("{s:{},s:{s:s,s:s,s:s}}", "metadata", "status", "phase", "Failed",
				  "reason", reason, "message", status_msg);
	char *path = gs_xasprintf("/api/v1/namespaces/%s/pods/%s/status", ns, name);

	write_pod(ctl, p, n, path, patch, what, NULL);
	post_event(ctl, "Pod", ns, name, p->uid, p->node, reason, message);
	ctl->refused++;
	json_decref(patch);
	free(path);
	free(status_msg);
	free(what);
	free(ns);
}

/* A pod whose admission hook reads the cluster (CONTROLLER_ADMIT_LATER). */
struct deciding {
	struct controller *ctl;
	char *key, *node;
	struct deciding *next;
};

static void admit_one(struct controller *ctl, struct cpod *p);

static void deciding_free(struct deciding *dc)
{
	free(dc->key);
	free(dc->node);
	free(dc);
}

/* The hook's reads ended: the pod is decided again at once, with what they found. */
static void pod_ready(void *arg)
{
	struct deciding *dc = arg;
	struct controller *ctl = dc->ctl;
	struct cnode *n = map_get(&ctl->nodes, dc->node);
	struct cpod *p = map_get(&ctl->pods, dc->key);

	for (struct deciding **pp = &ctl->deciding; *pp; pp = &(*pp)->next)
		if (*pp == dc) {
			*pp = dc->next;
			break;
		}
	ctl->in_flight--;
	if (n)
		n->admitting = false;
	if (p) {
		p->deciding = false;
		if (!ctl->draining && p->state == POD_WAITING && !p->busy)
			admit_one(ctl, p);
	}
	deciding_free(dc);
}

static void admit_one(struct controller *ctl, struct cpod *p)
{
	struct cnode *n = map_get(&ctl->nodes, p->node);
	struct controller_verdict v = {.admit = true};
	const char *slash = strchr(p->key, '/');
	char *ns = gs_xstrndup(p->key, (size_t)(slash - p->key));
	const char *name = slash + 1;
	json_t *patch;
	char *path;

	if (n && n->admitting)
		goto out;
	if (n && kubelet_touched(n)) {
		/* The kubelet started again and its device plugin has not registered yet. */
		json_t *node = node_json(n), *pod = json_loads(p->text, 0, NULL);
		json_t *held = held_on(ctl, n->name);
		long long now = (long long)time(NULL);
		struct kubelet_plan k;
		char *reason = NULL, *message = NULL;
		int r;

		kubelet_plan_node(node, now, &k);
		r = pod ? kubelet_pod_verdict(&k, node, pod, false, held, now, &reason, &message)
			: 0;
		kubelet_plan_release(&k);
		json_decref(held);
		json_decref(pod);
		json_decref(node);
		if (r) {
			refuse_pod(ctl, p, n, reason, message);
			free(reason);
			free(message);
			goto out;
		}
	}
	if (n && ctl->o.admit) {
		struct controller_admission in;
		struct gs_error err;
		json_t *node = node_json(n), *pod = json_loads(p->text, 0, NULL);
		json_t *holders = holders_of(ctl, n->name);
		struct deciding *dc = NULL;
		int rc;

		in.node = node;
		in.configmap = ctl->configmap;
		in.pod = pod;
		in.holders = holders;
		dc = gs_xcalloc(1, sizeof(*dc));
		dc->ctl = ctl;
		dc->key = gs_xstrdup(p->key);
		dc->node = gs_xstrdup(n->name);
		in.ready = pod_ready;
		in.ready_arg = dc;
		gs_error_clear(&err);
		rc = ctl->o.admit(ctl->o.admit_arg, &in, &v, &err);
		json_decref(node);
		json_decref(pod);
		json_decref(holders);
		if (rc == CONTROLLER_ADMIT_LATER) {
			/* Its node's other pods wait, as behind a decision written. */
			dc->next = ctl->deciding;
			ctl->deciding = dc;
			p->deciding = true;
			n->admitting = true;
			ctl->in_flight++;
			goto out;
		}
		deciding_free(dc);
		if (rc < 0) {
			/* E.g. the claims could not be listed (403): not again at the next tick. */
			p->failed_ms = mono_ms();
			ctl_log(ctl, "pod %s: admission could not decide: %s; again in %lds",
				p->key, err.msg, RETRY_LATER_MS / 1000);
			goto out;
		}
	}
	if (v.admit) {
		json_t *ann = v.annotations ? v.annotations : json_object();
		json_object_set_new(ann, LEDGER_ANN_ADMITTED, json_string("true"));
		patch = json_pack("{s:{s:o}}", "metadata", "annotations", ann);
		path = gs_xasprintf("/api/v1/namespaces/%s/pods/%s", ns, name);
		write_pod(ctl, p, n, path, patch,
			  n ? "admitted" : "admitted (its node declares no GPUs)", NULL);
		p->held_at = 0;
		ctl->admitted++;
		json_decref(patch);
		free(path);
	} else if (v.hold) {
		const char *reason = v.reason ? v.reason : "";
		const char *message = v.message ? v.message : "";
		char *what = gs_xasprintf("held: %s: %s", reason, message);
		/* Strategic: conditions merge by type, the scheduler's PodScheduled stays. */
		patch = json_pack("{s:{},s:o}", "metadata", "status",
				  v.status ? v.status : json_object());
		path = gs_xasprintf("/api/v1/namespaces/%s/pods/%s/status", ns, name);
		write_pod(ctl, p, n, path, patch, what, "application/strategic-merge-patch+json");
		post_event(ctl, "Pod", ns, name, p->uid, p->node, reason, message);
		p->held_at = time(NULL);
		p->held_node_rv = n ? n->rv : 0;
		free(what);
		json_decref(v.annotations);
		json_decref(patch);
		free(path);
	} else {
		refuse_pod(ctl, p, n, v.reason ? v.reason : "UnexpectedAdmissionError",
			   v.message ? v.message : "");
		json_decref(v.annotations);
	}
out:
	free(v.reason);
	free(v.message);
	free(ns);
}

/* Held and nothing changed since: its node is the same and the retry is not due. */
static bool held(struct controller *ctl, const struct cpod *p)
{
	const struct cnode *n = map_get(&ctl->nodes, p->node);

	return p->held_at && (!n || n->rv == p->held_node_rv) &&
	       time(NULL) - p->held_at < CONTROLLER_HOLD_RETRY_S;
}

static void admit_pods(struct controller *ctl)
{
	struct cpod *p;

	if (!ctl->waiting || !ctl->pods_synced || !ctl->nodes_synced || !ctl->cm_synced)
		return;
	MAP_FOREACH (&ctl->pods, i, p) {
		if (ctl->in_flight >= pending_cap(ctl))
			break;
		if (p->state != POD_WAITING || p->busy || p->deciding || held(ctl, p))
			continue;
		if (p->failed_ms && mono_ms() - p->failed_ms < RETRY_LATER_MS)
			continue;
		admit_one(ctl, p);
	}
}

/* ---- node Leases (docs/guide/controller.md "Leases that stop") -------------------------- */

#define LEASE_PATH "/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases"
#define HEAL_TICK_MS 1000L   /* how often the Leases are looked at */
#define HEAL_VERIFY_MS 2000L /* Leases read again at most this often */
/*
 * The duration a healing renewal writes: the Lease stays expired for anyone
 * who wants to hold it (kwok's tryAcquireOrRenew, node_lease_controller.go:305-318),
 * so a kwok started again takes it at its first try, while the renewTime
 * moves for kube-controller-manager, which reads nothing else of it.
 */
#define HEAL_LEASE_SECONDS 1
#define HEAL_RESTORE_TRIES 5

/*
 * A Lease of kube-node-lease as the healing keeps it. The heal clock
 * (monotonic ms) says when things were seen, never the renewTime itself: a
 * holder's clock may differ from ours, as kube-controller-manager's
 * probeTimestamp does (tryUpdateNodeHealth).
 */
struct clease {
	char *name;
	unsigned long long rv;
	struct shared_text *holder; /* spec.holderIdentity; NULL = none */
	struct shared_text *was;    /* the holder that stopped, while healing */
	long long renew_us;	    /* spec.renewTime as last seen */
	long long moved_ms;	    /* someone else last moved renewTime then (or first seen) */
	long long ours_us;	    /* the renewTime of gpushare's last renewal; 0 = none */
	long long ours_ms, ready_ms, stall_ms;
	long next_ms; /* the wait before the next renewal */
	unsigned renewals;
	uint32_t gen;
	int duration, was_duration;
	uint8_t restore; /* tries left to give the holder its duration back */
	bool owned, busy, healing;
};

static long long heal_now(const struct controller *ctl)
{
	return ctl->o.clock_ms ? ctl->o.clock_ms() : mono_ms();
}

/* Whether the apiserver answers: the healing counts from when it does again. */
static void api_answered(struct controller *ctl, bool answered)
{
	if (!answered) {
		if (ctl->api_since_ms && ctl->healing)
			ctl_log(ctl,
				"node Leases: the apiserver does not answer; no Lease is renewed "
				"until it does");
		ctl->api_since_ms = 0;
	} else if (!ctl->api_since_ms) {
		ctl->api_since_ms = heal_now(ctl);
	}
}

/* An answer of the apiserver, or none (the connection, a 5xx or 429 after the retries). */
static bool no_answer(const struct kube_result *r)
{
	return r->code == 0 || r->code >= 500 || r->code == 429;
}

static long long wall_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (long long)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

static const char *holder_name(const struct shared_text *t)
{
	return t ? t->s : "(no holder)";
}

static void lease_free(struct controller *ctl, struct clease *l)
{
	text_release(ctl, l->holder);
	text_release(ctl, l->was);
	free(l->name);
	free(l);
}

static void heal_end(struct controller *ctl, struct clease *l)
{
	if (!l->healing)
		return;
	l->healing = false;
	ctl->healing--;
	text_release(ctl, l->was);
	l->was = NULL;
	l->ours_us = 0;
}

/* Gone (deleted, or not relisted); one whose write is in flight is freed when it ends. */
static void lease_forget(struct controller *ctl, struct clease *l)
{
	if (l->healing)
		ctl_log(ctl,
			"node %s: its Lease is gone; gpushare no longer renews it (%u renewals)",
			l->name, l->renewals);
	heal_end(ctl, l);
	map_del(&ctl->leases, l->name);
	if (l->busy)
		l->name[0] = '\0';
	else
		lease_free(ctl, l);
}

static void lease_set_holder(struct controller *ctl, struct clease *l, const char *holder)
{
	if (l->holder && holder && !strcmp(l->holder->s, holder))
		return;
	text_release(ctl, l->holder);
	l->holder = holder ? text_intern(ctl, gs_xstrdup(holder)) : NULL;
}

struct lease_write {
	struct controller *ctl;
	struct clease *l;
	bool restore;
};

static void lease_write(struct controller *ctl, struct clease *l, json_t *patch, bool restore);

/* The holder that stopped renews again, or a new one took the Lease: hand it back. */
static void heal_handback(struct controller *ctl, struct clease *l, const struct heartbeat_lease *h,
			  long long now)
{
	bool same = l->was && h->holder && !strcmp(l->was->s, h->holder);

	ctl->lease_handbacks++;
	ctl_log(ctl,
		"node %s: Lease renewed by %s again %llds after gpushare took over; gpushare stops "
		"renewing it (%u renewals)",
		l->name, h->holder ? h->holder : "(no holder)", (now - l->stall_ms) / 1000,
		l->renewals);
	/* The holder renews without setting its duration: give back what it had. */
	if (same && h->duration == HEAL_LEASE_SECONDS && l->was_duration != HEAL_LEASE_SECONDS)
		l->restore = HEAL_RESTORE_TRIES;
	heal_end(ctl, l);
}

/* Take in a Lease as listed, watched or written back. */
static void lease_store(struct controller *ctl, const json_t *obj, bool from_write)
{
	const char *name = kobj_name(obj);
	struct heartbeat_lease h;
	unsigned long long rv = rv_of(obj);
	long long now = heal_now(ctl);
	struct clease *l;
	bool moved, fresh = false;

	if (!name)
		return;
	heartbeat_lease_read(obj, &h);
	l = map_get(&ctl->leases, name);
	if (!l) {
		fresh = true;
		l = gs_xcalloc(1, sizeof(*l));
		l->name = gs_xstrdup(name);
		map_put(&ctl->leases, l->name, l);
		l->moved_ms = now;
		l->renew_us = h.renew_us;
	}
	l->gen = ctl->lease_gen;
	if (l->rv && rv && rv < l->rv && !from_write)
		return; /* older than what a write already showed */
	moved = h.renew_us != l->renew_us && !(l->ours_us && h.renew_us == l->ours_us);
	if (moved) {
		/* Renewed by someone else: its holder, or a new one. */
		l->moved_ms = now;
		if (l->healing)
			heal_handback(ctl, l, &h, now);
	}
	l->renew_us = h.renew_us;
	l->rv = rv;
	l->duration = h.duration;
	l->owned = h.owned;
	lease_set_holder(ctl, l, h.holder);
	if ((moved || fresh) && l->holder)
		l->holder->moved_ms = now; /* the holder lives: it renews, or creates Leases */
	if (l->restore && !l->busy && !l->healing) {
		/* Its duration back, nothing else: one conditional write. */
		char rvs[24];
		json_t *p;

		if (!h.holder || h.duration != HEAL_LEASE_SECONDS) {
			l->restore = 0;
			return;
		}
		snprintf(rvs, sizeof(rvs), "%llu", l->rv);
		p = json_pack("{s:{s:s},s:{s:i}}", "metadata", "resourceVersion", rvs, "spec",
			      "leaseDurationSeconds", l->was_duration);
		l->restore--;
		lease_write(ctl, l, p, true);
	}
}

static void on_lease_written(void *arg, const struct kube_result *r)
{
	struct lease_write *w = arg;
	struct controller *ctl = w->ctl;
	struct clease *l = w->l;

	ctl->in_flight--;
	l->busy = false;
	if (r)
		api_answered(ctl, !no_answer(r));
	if (!l->name[0]) {
		lease_free(ctl, l); /* deleted meanwhile */
	} else if (!r) {
		/* Never sent: the next scan renews it. */
	} else if (!r->error) {
		json_t *lease = json_loadb(r->body, r->len, 0, NULL);
		if (lease)
			lease_store(ctl, lease, true);
		json_decref(lease);
		if (w->restore) {
			l->restore = 0;
			ctl_log(ctl, "node %s: Lease duration %ds given back to %s", l->name,
				l->duration, holder_name(l->holder));
		}
	} else if (r->code == 409) {
		/* Written by someone else since it was read: never overwritten; the watch says by
		 * whom. */
		ctl_log(ctl, "node %s: Lease changed since gpushare read it (409); not %s", l->name,
			w->restore ? "given its duration back" : "renewed");
	} else if (r->code == 404) {
		ctl_log(ctl, "node %s: Lease gone before gpushare renewed it", l->name);
	} else {
		ctl->write_errors++;
		ctl_log(ctl, "node %s: %s its Lease failed: %s; again at the next look", l->name,
			w->restore ? "giving back the duration of" : "renewing", r->error);
		if (!w->restore)
			l->ours_ms = 0;
	}
	free(w);
}

static void lease_write(struct controller *ctl, struct clease *l, json_t *patch, bool restore)
{
	struct lease_write *w = gs_xcalloc(1, sizeof(*w));
	char *path = gs_xasprintf(LEASE_PATH "/%s", l->name);
	char *body = json_dumps(patch, JSON_COMPACT);

	w->ctl = ctl;
	w->l = l;
	w->restore = restore;
	ctl_request(ctl, "PATCH", path, "application/merge-patch+json", body, on_lease_written, w);
	l->busy = true;
	json_decref(patch);
	free(body);
	free(path);
}

/*
 * One renewal as the node's kubelet writes it (engine/heartbeat.h): now,
 * conditional on the resourceVersion seen, the Node as owner when it has
 * none, the holder kept, the duration HEAL_LEASE_SECONDS.
 */
static void lease_renew(struct controller *ctl, struct clease *l, const struct cnode *n,
			long long now)
{
	long long us = wall_us();
	char rvs[24];

	if (us <= l->renew_us)
		us = l->renew_us + 1; /* forward, whatever the clocks say */
	snprintf(rvs, sizeof(rvs), "%llu", l->rv);
	l->ours_us = us;
	l->ours_ms = now;
	l->next_ms = heartbeat_renew_ms(l->was_duration, &ctl->rng);
	l->renewals++;
	ctl->lease_renewals++;
	lease_write(ctl, l,
		    heartbeat_lease_patch(NULL, HEAL_LEASE_SECONDS, us, l->rv ? rvs : NULL,
					  l->owned ? NULL : n->name, l->owned ? NULL : n->uid),
		    false);
}

/* Found stalled: the Warning Event's text (malloc'd), posted once the renewals are queued. */
static char *heal_start(struct controller *ctl, struct clease *l, const struct cnode *n,
			long long idle_ms, long long now)
{
	char *msg;

	l->healing = true;
	l->stall_ms = now;
	l->renewals = 0;
	l->was = l->holder;
	if (l->was)
		l->was->refs++;
	l->was_duration = l->duration ? l->duration : HEARTBEAT_LEASE_SECONDS;
	ctl->healing++;
	ctl->lease_stalls++;
	msg = gs_xasprintf(
		"Lease kube-node-lease/%s not renewed by %s for %llds while the apiserver answered "
		"(kwok v0.8.0 can stop renewing every node Lease); gpushare renews it every %lds "
		"as the node's kubelet would, so the node stays Ready, until its holder or a new "
		"kwok renews it",
		l->name, holder_name(l->holder), idle_ms / 1000,
		(long)(l->was_duration / HEARTBEAT_RENEW_FRACTION));
	ctl_log(ctl, "node %s: warning: %s", n->name, msg);
	return msg;
}

struct verify {
	struct controller *ctl;
	long long sent_ms;
};

/*
 * The Leases read again before any is renewed, as kube-controller-manager
 * reads a Lease its cache shows expired before it marks the node Unknown
 * (NodeControllerLeaseCircuitBreaker, on from v1.37:
 * node_lifecycle_controller.go :962-990): a watch can lag or hang on an
 * apiserver that is going away (its old streams stay open while it no
 * longer answers), and a Lease renewed meanwhile shows here. What the LIST
 * shows is taken in as watch events; an answer is also the proof that the
 * apiserver answers now.
 */
static void on_leases_verified(void *arg, const struct kube_result *r)
{
	struct verify *v = arg;
	struct controller *ctl = v->ctl;

	ctl->in_flight--;
	ctl->verify_busy = false;
	if (r) {
		api_answered(ctl, !no_answer(r));
		if (!r->error) {
			json_t *list = json_loadb(r->body, r->len, 0, NULL), *item;
			size_t i;

			json_array_foreach (json_object_get(list, "items"), i, item)
				lease_store(ctl, item, false);
			json_decref(list);
			ctl->verified_ms = v->sent_ms;
		} else if (!no_answer(r)) {
			ctl->write_errors++;
			ctl_log(ctl, "node Leases: listing them failed: %s", r->error);
		}
	}
	free(v);
}

static void leases_verify(struct controller *ctl, long long now)
{
	struct verify *v = gs_xcalloc(1, sizeof(*v));

	v->ctl = ctl;
	v->sent_ms = now;
	ctl->verify_busy = true;
	ctl->verify_sent_ms = now;
	ctl_request(ctl, "GET", LEASE_PATH, NULL, NULL, on_leases_verified, v);
}

/*
 * Look at every Lease of a managed node, at most once per HEAL_TICK_MS:
 * one nobody renewed for heal_after_ms while the apiserver answered, and
 * that a LIST sent after that still shows so, is renewed, then every
 * quarter of its duration while the apiserver answers; the node's Ready
 * posted again when kube-controller-manager marked it lost meanwhile.
 * Nodes in a kubelet restart's window are left to it (kubelet_writes holds
 * their Lease).
 */
static void heal_scan(struct controller *ctl)
{
	long long now = heal_now(ctl), after = ctl->o.heal_after_ms;
	struct clease *l;
	bool verify = false;
	/* The stalls' Events, after every renewal: a fleet-wide stall renews first. */
	char **events = NULL;
	size_t n_events = 0;

	if (!ctl->o.heal_leases || ctl->draining || now - ctl->heal_scan_ms < HEAL_TICK_MS)
		return;
	ctl->heal_scan_ms = now;
	if (!ctl->leases_synced || !ctl->nodes_synced)
		return;
	MAP_FOREACH (&ctl->leases, i, l) {
		struct cnode *n = map_get(&ctl->nodes, l->name);
		long long since = l->moved_ms > ctl->api_since_ms ? l->moved_ms : ctl->api_since_ms;

		/* A holder that renews any of its Leases lives: it is late, not stalled. */
		if (l->holder && l->holder->moved_ms > since)
			since = l->holder->moved_ms;

		if (!n || kubelet_touched(n)) {
			if (l->healing)
				ctl_log(ctl, "node %s: %s; gpushare stops renewing its Lease",
					l->name,
					n ? "in a kubelet restart's window" : "no longer managed");
			heal_end(ctl, l);
			continue;
		}
		if (l->busy)
			continue;
		if (!ctl->api_since_ms) {
			/* Asked again until it answers: an open watch alone may not tell. */
			verify |= l->healing || now - since >= after;
			continue;
		}
		if (!l->healing) {
			if (now - since < after)
				continue;
			if (ctl->verified_ms < since + after) {
				verify = true;
				continue;
			}
			events = gs_xrealloc(events, (n_events + 1) * 2 * sizeof(*events));
			events[2 * n_events] = gs_xstrdup(n->name);
			events[2 * n_events + 1] = heal_start(ctl, l, n, now - since, now);
			n_events++;
		}
		if (!l->ours_ms || now - l->ours_ms >= l->next_ms)
			lease_renew(ctl, l, n, now);
		if (n->lost && (!l->ready_ms || now - l->ready_ms >= l->next_ms)) {
			/* The kubelet posts its conditions again once it sees them changed. */
			json_t *p = heartbeat_status_patch(NULL, true, (long long)time(NULL));
			char *path = gs_xasprintf("/api/v1/nodes/%s/status", n->name);

			ctl_log(ctl,
				"node %s: Ready again as its kubelet posts it (its Lease is "
				"renewed)",
				n->name);
			write_aux(ctl, n->name, path, "application/strategic-merge-patch+json", p,
				  "writing its Ready condition");
			l->ready_ms = now;
			ctl->lease_ready_writes++;
			json_decref(p);
			free(path);
		}
	}
	if (verify && !ctl->verify_busy && now - ctl->verify_sent_ms >= HEAL_VERIFY_MS)
		leases_verify(ctl, now);
	for (size_t i = 0; i < n_events; i++) {
		const char *node = events[2 * i];
		post_event(ctl, "Node", NULL, node, node, node, "LeaseNotRenewed",
			   events[2 * i + 1]);
		free(events[2 * i]);
		free(events[2 * i + 1]);
	}
	free(events);
}

static void lease_list_begin(void *arg)
{
	struct controller *ctl = arg;

	ctl->lease_gen++;
}

static void lease_event(void *arg, enum kube_event ev, json_t *obj)
{
	struct controller *ctl = arg;
	struct clease *l;

	if (ev == KUBE_EV_DELETED) {
		const char *name = kobj_name(obj);
		if (name && (l = map_get(&ctl->leases, name)))
			lease_forget(ctl, l);
		return;
	}
	lease_store(ctl, obj, false);
}

static void lease_list_end(void *arg)
{
	struct controller *ctl = arg;
	struct clease *l;

	MAP_FOREACH (&ctl->leases, i, l)
		if (l->gen != ctl->lease_gen)
			lease_forget(ctl, l);
	if (!ctl->leases_synced && ctl->o.heal_leases)
		ctl_log(ctl,
			"node Leases listed: %zu; one of a managed node not renewed for %lds "
			"while the apiserver answers is renewed by gpushare",
			ctl->leases.n, ctl->o.heal_after_ms / 1000);
	ctl->leases_synced = true;
}

/* The Lease watch answers, or failed: so does the apiserver. */
static void lease_state(void *arg, bool open)
{
	api_answered(arg, open);
}

/* ---- the controller ------------------------------------------------------------------- */

static const struct kube_watch_ops watch_ops[CONTROLLER_WATCH_N] = {
	[CONTROLLER_WATCH_CONFIGMAP] = {.list_begin = cm_list_begin,
					.event = cm_event,
					.list_end = cm_list_end},
	[CONTROLLER_WATCH_NODES] = {.list_begin = node_list_begin,
				    .event = node_event,
				    .list_end = node_list_end},
	[CONTROLLER_WATCH_PODS] = {.list_begin = pod_list_begin,
				   .event = pod_event,
				   .list_end = pod_list_end},
	[CONTROLLER_WATCH_SLICES] = {.list_begin = slice_list_begin,
				     .event = slice_event,
				     .list_end = slice_list_end},
	[CONTROLLER_WATCH_LEASES] = {.list_begin = lease_list_begin,
				     .event = lease_event,
				     .list_end = lease_list_end,
				     .state = lease_state},
};

const struct kube_watch_ops *controller_watch_ops(enum controller_watch w)
{
	return &watch_ops[w];
}

int controller_new(struct controller **out, struct kube_loop *l, const struct controller_opts *o,
		   struct gs_error *err)
{
	const struct kube_watch_ops *cm_ops = &watch_ops[CONTROLLER_WATCH_CONFIGMAP];
	const struct kube_watch_ops *node_ops = &watch_ops[CONTROLLER_WATCH_NODES];
	const struct kube_watch_ops *pod_ops = &watch_ops[CONTROLLER_WATCH_PODS];
	const struct kube_watch_ops *slice_ops = &watch_ops[CONTROLLER_WATCH_SLICES];
	const struct kube_watch_ops *lease_ops = &watch_ops[CONTROLLER_WATCH_LEASES];
	struct controller *ctl = gs_xcalloc(1, sizeof(*ctl));
	char *path, *field;

	ctl->l = l;
	ctl->o = *o;
	if (ctl->o.heal_after_ms <= 0)
		ctl->o.heal_after_ms = CONTROLLER_HEAL_AFTER_MS;
	ctl->rng = (uint64_t)wall_us() | 1u;
	ctl->cm_ns =
		gs_xstrdup(o->configmap_namespace ? o->configmap_namespace : GS_DEFAULT_NAMESPACE);
	ctl->cm_name = gs_xstrdup(o->configmap_name ? o->configmap_name : GS_DEFAULT_CONFIGMAP);
	ctl->ev_ns = gs_xstrdup(o->event_namespace ? o->event_namespace : "default");
	if (!l) {
		*out = ctl;
		return 0;
	}
	path = gs_xasprintf("/api/v1/namespaces/%s/configmaps", ctl->cm_ns);
	field = gs_xasprintf("metadata.name=%s", ctl->cm_name);
	if (kube_loop_watch(l, path, NULL, field, cm_ops, ctl, NULL) < 0 ||
	    kube_loop_watch(l, "/api/v1/nodes", o->node_selector, NULL, node_ops, ctl, NULL) < 0 ||
	    kube_loop_watch(l, "/api/v1/pods", NULL, "spec.nodeName!=", pod_ops, ctl, NULL) < 0 ||
	    (o->publish &&
	     kube_loop_watch(l, "/apis/resource.k8s.io/v1/resourceslices", NULL,
			     "spec.driver=" DRASLICE_DRIVER, slice_ops, ctl, NULL) < 0) ||
	    (o->heal_leases &&
	     kube_loop_watch(l, LEASE_PATH, NULL, NULL, lease_ops, ctl, NULL) < 0)) {
		gs_error_set(err, "cannot watch %s (bad namespace or name?)", path);
		free(path);
		free(field);
		controller_free(ctl);
		*out = NULL;
		return -1;
	}
	free(path);
	free(field);
	*out = ctl;
	return 0;
}

void controller_free(struct controller *ctl)
{
	struct cnode *n;
	struct cpod *p;

	if (!ctl)
		return;
	/* What was never handed to a loop ends first: its callbacks touch nodes and pods. */
	{
		struct controller_effect *e;
		size_t k = controller_take_effects(ctl, &e);

		for (size_t i = 0; i < k; i++) {
			if (e[i].method)
				e[i].done(e[i].arg, NULL);
			else if (e[i].drop)
				e[i].drop(e[i].arg);
		}
		controller_effects_free(e, k);
	}
	MAP_FOREACH (&ctl->nodes, i, n)
		node_free(ctl, n);
	MAP_FOREACH (&ctl->pods, i, p)
		pod_free(p);
	{
		struct clease *l;

		MAP_FOREACH (&ctl->leases, i, l)
			lease_free(ctl, l);
		free(ctl->leases.keys);
		free(ctl->leases.vals);
	}
	free(ctl->nodes.keys);
	free(ctl->nodes.vals);
	free(ctl->texts.keys);
	free(ctl->texts.vals);
	echoes_clear(ctl);
	free(ctl->pods.keys);
	free(ctl->pods.vals);
	for (size_t i = 0; i < ctl->n_res; i++)
		free(ctl->res_names[i]);
	json_decref(ctl->configmap);
	free(ctl->cm_ns);
	free(ctl->cm_name);
	free(ctl->ev_ns);
	while (ctl->event_retries) {
		struct event_post *ep = ctl->event_retries;
		ctl->event_retries = ep->next;
		event_post_free(ep);
	}
	/* Hooks still reading: their loop goes after the controller, never calling back. */
	while (ctl->deciding) {
		struct deciding *dc = ctl->deciding;
		ctl->deciding = dc->next;
		deciding_free(dc);
	}
	if (ctl->publishing) {
		sync_report_release(&ctl->publishing->rep);
		free(ctl->publishing);
	}
	held_slices_judge(ctl, false);
	free(ctl->held);
	free(ctl);
}

size_t controller_take_effects(struct controller *ctl, struct controller_effect **out)
{
	size_t n = ctl->n_out;

	*out = ctl->outbox;
	ctl->outbox = NULL;
	ctl->n_out = ctl->cap_out = 0;
	return n;
}

void controller_effects_free(struct controller_effect *e, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free(e[i].path);
		free(e[i].body);
	}
	free(e);
}

/* Hand the outbox to the loop: the I/O of what the events and the tick decided. */
static void flush(struct controller *ctl)
{
	struct controller_effect *e;
	size_t n;

	if (!ctl->l)
		return;
	n = controller_take_effects(ctl, &e);
	for (size_t i = 0; i < n; i++) {
		if (!e[i].method)
			kube_loop_after(ctl->l, e[i].delay_ms, e[i].fire, e[i].arg);
		else if (kube_loop_request(ctl->l, e[i].method, e[i].path, e[i].ctype, e[i].body,
					   e[i].body ? strlen(e[i].body) : 0, e[i].done,
					   e[i].arg) < 0)
			e[i].done(e[i].arg, NULL);
	}
	controller_effects_free(e, n);
}

void controller_tick(struct controller *ctl)
{
	if (!ctl->draining) {
		reconcile_nodes(ctl);
		admit_pods(ctl);
		heal_scan(ctl);
	}
	/* Also while draining: a 409's re-read or a retry timer the answers asked for. */
	flush(ctl);
}

bool controller_ready(const struct controller *ctl)
{
	return ctl->cm_synced && ctl->nodes_synced && ctl->pods_synced;
}

void controller_drain(struct controller *ctl)
{
	ctl->draining = true;
}

void controller_metrics(const struct controller *ctl, struct strbuf *out)
{
	static const struct kube_loop_stats none;
	const struct kube_loop_stats *s = ctl->l ? kube_loop_stats(ctl->l) : &none;
	static const char *const classes[6] = {"none", "1xx", "2xx", "3xx", "4xx", "5xx"};
	uint64_t per_strategy[ST_N] = {0};
	uint64_t alloc[MAX_RES] = {0}, used[MAX_RES] = {0};
	struct cnode *n;
	struct cpod *p;

	MAP_FOREACH (&ctl->nodes, i, n) {
		per_strategy[n->strategy]++;
		for (uint8_t k = 0; k < n->n_alloc; k++)
			alloc[n->alloc[k].id] += n->alloc[k].n;
	}
	MAP_FOREACH (&ctl->pods, i, p)
		if (p->state == POD_ADMITTED && map_get(&ctl->nodes, p->node))
			for (uint8_t k = 0; k < p->n_req; k++)
				used[p->req[k].id] += p->req[k].n;

#define COUNTER(name, help, v)                                                                     \
	strbuf_addf(out, "# HELP %s %s\n# TYPE %s counter\n%s %" PRIu64 "\n", name, help, name,    \
		    name, (uint64_t)(v))
#define GAUGE(name, help, v)                                                                       \
	strbuf_addf(out, "# HELP %s %s\n# TYPE %s gauge\n%s %" PRIu64 "\n", name, help, name,      \
		    name, (uint64_t)(v))
	COUNTER("gpushare_reconciles_total", "Node reconciles (plans) run.", ctl->reconciles);
	COUNTER("gpushare_node_patches_total", "Node advertisements written.", ctl->node_patches);
	COUNTER("gpushare_reconcile_failures_total",
		"Node reconciles whose config was invalid or missing (node kept as it was).",
		ctl->plan_failures);
	COUNTER("gpushare_events_total", "Warning Events posted.", ctl->events_posted);
	COUNTER("gpushare_pods_admitted_total", "Pods admitted.", ctl->admitted);
	COUNTER("gpushare_pods_refused_total", "Pods failed at admission.", ctl->refused);
	COUNTER("gpushare_api_requests_total", "API request attempts started.", s->requests);
	COUNTER("gpushare_api_retries_total", "API requests retried.", s->retries);
	GAUGE("gpushare_api_in_flight_limit",
	      "API requests the loop runs at once now (it follows the apiserver's latency).",
	      ctl->l ? kube_loop_limit(ctl->l) : 0);
	strbuf_addf(out, "# HELP gpushare_api_errors_total API requests that failed for good, by "
			 "HTTP status class (none = no response).\n"
			 "# TYPE gpushare_api_errors_total counter\n");
	for (int k = 0; k < 6; k++)
		if (k != 1 && k != 2 && k != 3)
			strbuf_addf(out, "gpushare_api_errors_total{code=\"%s\"} %" PRIu64 "\n",
				    classes[k], s->errors_by_code[k]);
	strbuf_addf(out, "gpushare_api_errors_total{code=\"409\"} %" PRIu64 "\n", s->errors_409);
	strbuf_addf(out, "gpushare_api_errors_total{code=\"410\"} %" PRIu64 "\n", s->errors_410);
	strbuf_addf(out, "gpushare_api_errors_total{code=\"422\"} %" PRIu64 "\n", s->errors_422);
	strbuf_addf(out, "gpushare_api_errors_total{code=\"429\"} %" PRIu64 "\n", s->errors_429);
	COUNTER("gpushare_watch_restarts_total", "Watches re-opened (ended, failed or expired).",
		s->watch_restarts);
	COUNTER("gpushare_relists_total", "Lists after the first (410 Gone).", s->relists);
	COUNTER("gpushare_slice_resyncs_total",
		"Nodes planned again because someone else changed or deleted their ResourceSlice.",
		ctl->slice_resyncs);
	COUNTER("gpushare_lease_stalls_total",
		"Managed nodes found with a Lease nobody renewed for --heal-leases-after while the "
		"apiserver answered.",
		ctl->lease_stalls);
	COUNTER("gpushare_lease_renewals_total",
		"Lease renewals gpushare wrote for such nodes, as their kubelet would.",
		ctl->lease_renewals);
	COUNTER("gpushare_lease_handbacks_total",
		"Leases gpushare renewed that someone else renewed again (gpushare stopped).",
		ctl->lease_handbacks);
	COUNTER("gpushare_lease_ready_writes_total",
		"Ready conditions posted again on such nodes kube-controller-manager marked "
		"Unknown.",
		ctl->lease_ready_writes);
	GAUGE("gpushare_leases_healing", "Managed nodes whose Lease gpushare renews now.",
	      ctl->healing);
	GAUGE("gpushare_ready", "1 once the ConfigMap, nodes and pods were listed.",
	      controller_ready(ctl) ? 1 : 0);
	GAUGE("gpushare_pods_waiting", "Bound pods waiting for admission.", ctl->waiting);
	strbuf_addf(out, "# HELP gpushare_nodes Managed nodes by sharing strategy "
			 "(nvidia.com/gpu.sharing-strategy).\n# TYPE gpushare_nodes gauge\n");
	for (int k = 0; k < ST_N; k++)
		strbuf_addf(out, "gpushare_nodes{strategy=\"%s\"} %" PRIu64 "\n", strategy_names[k],
			    per_strategy[k]);
	strbuf_addf(out, "# HELP gpushare_slots Allocatable slots of managed nodes by resource: "
			 "used by admitted pods, and free.\n# TYPE gpushare_slots gauge\n");
	for (size_t k = 0; k < ctl->n_res; k++) {
		uint64_t u = used[k], a = alloc[k];
		struct strbuf label = STRBUF_INIT;
		/* A label value in the text format's escapes: the name is from objects. */
		escape_prom_label(&label, ctl->res_names[k]);
		strbuf_addf(out, "gpushare_slots{resource=\"%s\",state=\"used\"} %" PRIu64 "\n",
			    label.buf, u);
		strbuf_addf(out, "gpushare_slots{resource=\"%s\",state=\"free\"} %" PRIu64 "\n",
			    label.buf, a > u ? a - u : 0);
		strbuf_release(&label);
	}
#undef COUNTER
#undef GAUGE
}
