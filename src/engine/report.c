#include "engine/report.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "engine/admission.h"
#include "engine/advertise.h"
#include "dra/draclaims.h"
#include "dra/draslice.h"
#include "model/isolation.h"
#include "model/kobj.h"
#include "engine/ledger.h"
#include "engine/plan.h"
#include "model/nodehw.h"
#include "model/quantity.h"
#include "base/escape.h"
#include "base/svg.h"
#include "base/banned.h"

const char *report_isolation_name(enum report_isolation iso)
{
	switch (iso) {
	case REPORT_ISO_WHOLE:
		return "whole card";
	case REPORT_ISO_NONE:
		return "isolation: none";
	case REPORT_ISO_MPS:
		return "isolation: MPS limits";
	case REPORT_ISO_HARDWARE:
		return "isolation: hardware (MIG)";
	}
	return "?";
}

/* ---- the model ---- */

/* A pod's extended-resource requests: {"nvidia.com/gpu": n}, as the scheduler sums them. */
static json_t *pod_requests(const json_t *pod)
{
	json_t *sum = json_object(), *init = json_object();

	for (size_t l = 0; l < 2; l++) {
		const json_t *arr = kobj_get(pod, l ? "spec.initContainers" : "spec.containers"),
			     *c;
		size_t i;
		json_array_foreach (arr, i, c) {
			const json_t *lim = kobj_map(c, "resources.limits");
			const json_t *req = kobj_map(c, "resources.requests");
			const char *k;
			json_t *v;
			json_t *seen = json_object();
			/* Extended resources: request = limit; a limit alone sets the request. */
			for (int pass = 0; pass < 2; pass++) {
				json_object_foreach ((json_t *)(pass ? req : lim), k, v) {
					struct quantity q;
					struct gs_error e;
					int64_t n;
					if (!strchr(k, '/') || json_object_get(seen, k) ||
					    quantity_from_json(&q, v, &e) < 0 ||
					    quantity_value(&q, &n) < 0 || n <= 0)
						continue;
					json_object_set_new(seen, k, json_true());
					json_t *into = l ? init : sum;
					json_int_t have =
						json_integer_value(json_object_get(into, k));
					json_object_set_new(
						into, k,
						json_integer(l ? (have > n ? have : n) : have + n));
				}
			}
			json_decref(seen);
		}
	}
	/* An init container runs alone: the pod needs the larger of the two. */
	const char *k;
	json_t *v;
	json_object_foreach (init, k, v) {
		if (json_integer_value(v) > json_integer_value(json_object_get(sum, k)))
			json_object_set(sum, k, v);
	}
	json_decref(init);
	return sum;
}

static char *requests_text(const json_t *req)
{
	struct strbuf sb = STRBUF_INIT;
	const char *k;
	json_t *v;

	json_object_foreach ((json_t *)req, k, v) {
		if (sb.len)
			strbuf_addch(&sb, ' ');
		strbuf_addf(&sb, "%s=%lld", k, (long long)json_integer_value(v));
	}
	return strbuf_detach(&sb, NULL);
}

/* "nvidia.com/gpu=8 ..." of the resources it advertises above 0. */
static char *resources_text(const struct advertisement *adv)
{
	struct strbuf sb = STRBUF_INIT;
	const char *k;
	json_t *v;

	json_object_foreach (adv->resources, k, v) {
		if (json_integer_value(v) <= 0)
			continue;
		if (sb.len)
			strbuf_addch(&sb, ' ');
		strbuf_addf(&sb, "%s=%lld", k, (long long)json_integer_value(v));
	}
	return strbuf_detach(&sb, NULL);
}

static const struct dpconfig *chosen_config(const struct dpconfig_set *set, const char *name)
{
	const struct gs_error *e;
	long i = set && name && *name ? dpconfig_set_find(set, name) : -1;

	return i >= 0 ? dpconfig_set_get(set, (size_t)i, &e) : NULL;
}

/* The ledger of every drawn node, by the node's index in the model. */
struct building {
	struct report_model *m;
	struct ledger **ledgers;
	const json_t **node_objs; /* the Node of each model node */
	char **keys;		  /* ledger_pod_key of each model pod */
	json_t *pod_by_key;	  /* key -> index into m->pods */
	json_t *node_by_name;	  /* name -> index into m->nodes */
	json_t *ns_seen;	  /* the namespaces in m->namespaces, as a set */
};

/*
 * The node and its ledger (src/engine/ledger.c: the device IDs the plugin
 * registers, per physical GPU). A node whose ledger cannot be made (its
 * devices do not add up) is drawn with its cards and the reason.
 */
static int build_node(struct building *b, const struct report_input *in, const json_t *node,
		      struct gs_error *err)
{
	struct report_model *m = b->m;
	struct advertisement *adv = NULL;
	struct nodehw *hw = NULL;
	struct gs_warnings w;
	struct report_node *rn;
	struct ledger *l = NULL;
	struct gs_error le;

	if (!kobj_annotation(node, NODEHW_ANN_PRODUCT)) {
		m->skipped_nodes++;
		return 0;
	}
	gs_warnings_init(&w);
	if (advertise_node(in->cat, node, in->configs, NULL, &adv, err) < 0 ||
	    nodehw_from_node(in->cat, node, NULL, &hw, &w, err) < 0) {
		gs_warnings_release(&w);
		advertisement_free(adv);
		gs_error_prefix(err, "node %s: ", kobj_text(node, "metadata.name"));
		return -1;
	}
	gs_warnings_release(&w);
	m->nodes = gs_xrealloc(m->nodes, (m->n_nodes + 1) * sizeof(*m->nodes));
	b->ledgers = gs_xrealloc(b->ledgers, (m->n_nodes + 1) * sizeof(*b->ledgers));
	b->node_objs = gs_xrealloc(b->node_objs, (m->n_nodes + 1) * sizeof(*b->node_objs));
	b->node_objs[m->n_nodes] = node;
	rn = &m->nodes[m->n_nodes];
	memset(rn, 0, sizeof(*rn));
	rn->name = gs_xstrdup(kobj_text(node, "metadata.name"));
	rn->config = gs_xstrdup(adv->config_name ? adv->config_name : "");
	rn->sharing = gs_xstrdup(dp_sharing_strategy_name(adv->sharing));
	rn->mig_strategy = gs_xstrdup(adv->mig_strategy ? adv->mig_strategy : "none");
	rn->failure = adv->failure ? gs_xstrdup(adv->failure) : NULL;
	rn->resources = resources_text(adv);
	if (draslice_node_wants_dra(node)) {
		/* No device plugin: its GPUs go out as a ResourceSlice (docs/guide/dra.md). */
		rn->dra = true;
		free(rn->sharing);
		rn->sharing = gs_xstrdup("DRA");
		free(rn->resources);
		rn->resources = gs_xstrdup("");
		free(rn->failure);
		rn->failure = NULL;
		rn->n_cards = (size_t)hw->total;
		rn->cards = gs_xcalloc(rn->n_cards ? rn->n_cards : 1, sizeof(*rn->cards));
		for (size_t g = 0, k = 0; g < hw->n_gpus; g++)
			for (int j = 0; j < hw->gpus[g].count; j++, k++) {
				rn->cards[k].index = (int)k;
				rn->cards[k].product = gs_xstrdup(hw->gpus[g].model->name);
				rn->cards[k].memory_mib = hw->gpus[g].model->memory_mib;
			}
		m->n_cards += rn->n_cards;
	} else if (ledger_new(in->cat, hw, adv, chosen_config(in->configs, adv->config_name), &l,
			      &le) < 0) {
		free(rn->failure);
		rn->failure = gs_xasprintf("no device ledger: %s", le.msg);
		l = NULL;
	}
	json_object_set_new(b->node_by_name, rn->name, json_integer((json_int_t)m->n_nodes));
	b->ledgers[m->n_nodes++] = l;
	advertisement_free(adv);
	nodehw_free(hw);
	return 0;
}

static long index_of(const json_t *map, const char *key)
{
	const json_t *v = json_object_get(map, key);
	return json_is_integer(v) ? (long)json_integer_value(v) : -1;
}

/* Devices and orphans `key` holds in l. */
static size_t held_by(const struct ledger *l, const char *key, size_t *orphans)
{
	size_t n = 0;

	*orphans = 0;
	for (size_t d = 0; d < l->n_devices; d++)
		n += l->devices[d].holder && !strcmp(l->devices[d].holder, key);
	for (size_t o = 0; o < l->n_orphans; o++)
		*orphans += !strcmp(l->orphans[o].holder, key);
	return n;
}

/* Creation order (RFC 3339 sorts as text), then the list's order. */
struct pod_order {
	const json_t *pod;
	const char *created;
	size_t index;
};

static int cmp_order(const void *a, const void *b)
{
	const struct pod_order *x = a, *y = b;
	int c = strcmp(x->created, y->created);

	if (c)
		return c;
	return x->index < y->index ? -1 : x->index > y->index;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static void add_namespace(struct report_model *m, json_t *seen, const char *ns)
{
	if (json_object_get(seen, ns))
		return;
	json_object_set_new(seen, ns, json_true());
	m->namespaces = gs_xrealloc(m->namespaces, (m->n_namespaces + 1) * sizeof(char *));
	m->namespaces[m->n_namespaces++] = gs_xstrdup(ns);
}

static void add_note(char **note, const char *fmt, const char *a, const char *b)
{
	char *more = gs_xasprintf(fmt, a, b);

	if (*note) {
		char *both = gs_xasprintf("%s; %s", *note, more);
		free(*note);
		free(more);
		more = both;
	}
	*note = more;
}

/*
 * Who holds what: first every admitted pod's ledger annotation
 * (ledger_rebuild), then, in creation order, every other pod bound to a
 * drawn node gets what the kubelet would give it now (admission_decide on
 * what is left).
 */
static int build_pods(struct building *b, const struct report_input *in, struct gs_error *err)
{
	struct report_model *m = b->m;
	const json_t *items = json_is_array(in->pods) ? in->pods : kobj_get(in->pods, "items");
	size_t n = json_array_size(items), k = 0;
	struct pod_order *ord = gs_xcalloc(n ? n : 1, sizeof(*ord));
	const json_t *p;
	size_t i;
	int rc = 0;

	json_array_foreach (items, i, p) {
		const char *phase = kobj_text(p, "status.phase");
		if (!json_is_object(p) || !strcmp(phase, "Succeeded") || !strcmp(phase, "Failed"))
			continue;
		ord[k].pod = p;
		ord[k].created = kobj_text(p, "metadata.creationTimestamp");
		ord[k].index = i;
		k++;
	}
	qsort(ord, k, sizeof(*ord), cmp_order);
	/* Each ledger reads only its node's pods. */
	json_t **on = gs_xcalloc(m->n_nodes ? m->n_nodes : 1, sizeof(*on));
	json_array_foreach (items, i, p) {
		long ni = index_of(b->node_by_name, kobj_text(p, "spec.nodeName"));
		if (ni < 0)
			continue;
		if (!on[ni])
			on[ni] = json_array();
		json_array_append(on[ni], (json_t *)p);
	}
	for (size_t x = 0; x < m->n_nodes; x++) {
		if (b->ledgers[x] && on[x])
			ledger_rebuild(b->ledgers[x], on[x], &m->notes);
		json_decref(on[x]);
	}
	free(on);
	m->pods = gs_xcalloc(k ? k : 1, sizeof(*m->pods));
	b->keys = gs_xcalloc(k ? k : 1, sizeof(*b->keys));
	for (size_t j = 0; j < k && rc == 0; j++) {
		struct report_pod *rp = &m->pods[m->n_pods++];
		const json_t *pod = ord[j].pod;
		const char *ns = kobj_text(pod, "metadata.namespace");
		const char *node = kobj_text(pod, "spec.nodeName");
		const char *phase = kobj_text(pod, "status.phase");
		long ni = *node ? index_of(b->node_by_name, node) : -1;
		struct ledger *l = ni >= 0 ? b->ledgers[ni] : NULL;
		json_t *req = pod_requests(pod);
		size_t orphans = 0;

		rp->namespace = gs_xstrdup(*ns ? ns : "default");
		rp->name = gs_xstrdup(kobj_text(pod, "metadata.name"));
		rp->node = *node ? gs_xstrdup(node) : NULL;
		/* Manifests carry no status: bound or not is all they say. */
		rp->phase = gs_xstrdup(*phase ? phase : *node ? "(bound)" : "(not bound)");
		rp->requests = requests_text(req);
		json_decref(req);
		rp->node_index = ni;
		b->keys[j] = ledger_pod_key(pod);
		json_object_set_new(b->pod_by_key, b->keys[j], json_integer((json_int_t)j));
		add_namespace(m, b->ns_seen, rp->namespace);
		if (!l)
			continue;
		rp->held = held_by(l, b->keys[j], &orphans);
		if (rp->held || orphans) {
			rp->origin = REPORT_FROM_LEDGER;
			if (orphans)
				add_note(&rp->note,
					 "holds %s device ID%s the node no longer registers",
					 orphans == 1 ? "a" : "some", orphans == 1 ? "" : "s");
			continue;
		}
		if (ledger_pod_active(pod) && kobj_annotation(pod, LEDGER_ANN_DEVICES))
			continue; /* admitted, its annotation unreadable: a note says so */
		struct admission_decision d;
		struct gs_error e;
		int r = admission_decide(l, pod, &d, &e);
		if (r < 0) {
			gs_error_set(err, "pod %s: %s", b->keys[j], e.msg);
			rc = -1;
		} else if (!d.admit) {
			add_note(&rp->note, "the kubelet would refuse it: %s: %s",
				 d.reason ? d.reason : "", d.message ? d.message : "");
		} else if (json_object_size(d.devices)) {
			if (ledger_hold(l, b->keys[j], d.devices, &e) == 0) {
				rp->held = held_by(l, b->keys[j], &orphans);
				rp->origin = REPORT_FROM_REQUESTS;
			}
		}
		admission_decision_release(&d);
	}
	free(ord);
	return rc;
}

/* The cards of node ni, their devices and who holds them, from its ledger. */
static void build_cards(struct building *b, size_t ni)
{
	struct report_model *m = b->m;
	struct report_node *rn = &m->nodes[ni];
	const struct ledger *l = b->ledgers[ni];

	if (!l)
		return;
	rn->n_cards = l->n_gpus;
	rn->cards = gs_xcalloc(l->n_gpus ? l->n_gpus : 1, sizeof(*rn->cards));
	for (size_t g = 0; g < l->n_gpus; g++) {
		struct report_card *c = &rn->cards[g];
		bool replicated = false;

		c->index = l->gpus[g].index;
		c->product = gs_xstrdup(l->gpus[g].product);
		c->memory_mib = l->gpus[g].memory_mib;
		for (size_t d = 0; d < l->n_devices; d++) {
			const struct ledger_device *dev = &l->devices[d];
			struct report_slot *s;
			if (dev->gpu != (int)g)
				continue;
			c->slots = gs_xrealloc(c->slots, (c->n_slots + 1) * sizeof(*c->slots));
			s = &c->slots[c->n_slots++];
			s->resource = gs_xstrdup(dev->resource);
			s->device = gs_xstrdup(dev->id);
			if (dev->replica >= 0)
				s->label = dev->profile ? gs_xasprintf("%s #%d", dev->profile,
								       dev->replica)
							: gs_xasprintf("#%d", dev->replica);
			else
				s->label = gs_xstrdup(dev->profile ? dev->profile : "whole");
			s->domain = dev->mig_start >= 0 ? dev->mig_start : 0;
			s->pod = dev->holder ? index_of(b->pod_by_key, dev->holder) : -1;
			c->mig |= dev->profile != NULL;
			replicated |= dev->replica >= 0;
		}
		c->isolation = c->mig			      ? REPORT_ISO_HARDWARE
			       : !replicated		      ? REPORT_ISO_WHOLE
			       : l->sharing == DP_SHARING_MPS ? REPORT_ISO_MPS
							      : REPORT_ISO_NONE;
	}
	m->n_cards += rn->n_cards;
}

/*
 * A DRA node's devices on its cards (src/dra/draclaims.c): each device of its
 * slice, with one slot per pod of the claim allocated it (several pods of
 * one claim share the device, as replicas do), else one free slot. MIG
 * devices are memory domains of their own.
 */
static void build_dra_slots(struct building *b, const struct report_input *in, size_t ni)
{
	struct report_model *m = b->m;
	struct report_node *rn = &m->nodes[ni];
	const json_t *pods = json_is_array(in->pods) ? in->pods : kobj_get(in->pods, "items");
	struct draclaims_objects o = {.slices = in->slices,
				      .claims = in->claims,
				      .templates = NULL,
				      .pods = pods,
				      .events = NULL};
	json_t *st, *d;
	size_t k;

	if (!rn->dra || !in->slices)
		return;
	rn->dra_claims = true;
	st = draclaims_node_status(b->node_objs[ni], &o);
	json_array_foreach (json_object_get(st, "devices"), k, d) {
		json_int_t g = json_integer_value(json_object_get(d, "gpu"));
		const json_t *who = json_object_get(d, "pods");
		size_t n = json_array_size(who) ? json_array_size(who) : 1;
		struct report_card *c = NULL;

		for (size_t x = 0; x < rn->n_cards; x++)
			if (rn->cards[x].index == g)
				c = &rn->cards[x];
		if (!c)
			continue;
		c->slots = gs_xrealloc(c->slots, (c->n_slots + n) * sizeof(*c->slots));
		for (size_t p = 0; p < n; p++) {
			struct report_slot *s = &c->slots[c->n_slots++];
			const char *key = json_string_value(json_array_get(who, p));
			s->resource = kobj_string(d, "claim") ? gs_xasprintf("ResourceClaim %s",
									     kobj_text(d, "claim"))
							      : gs_xstrdup(DRASLICE_DRIVER);
			s->device = gs_xstrdup(kobj_text(d, "name"));
			s->label = gs_xstrdup(kobj_string(d, "profile") ? kobj_text(d, "profile")
									: "whole");
			s->domain = kobj_string(d, "profile") ? (int)k + 1 : 0;
			s->pod = key ? index_of(b->pod_by_key, key) : -1;
			if (s->pod >= 0) {
				m->pods[s->pod].held++;
				m->pods[s->pod].origin = REPORT_FROM_CLAIM;
			}
		}
		c->mig |= kobj_string(d, "profile") != NULL;
		if (c->mig)
			c->isolation = REPORT_ISO_HARDWARE;
		else if (n > 1)
			c->isolation = REPORT_ISO_NONE;
	}
	json_decref(st);
}

/* Namespaces that share one memory domain of the card, or NULL. */
static char *shared_memory(const struct report_model *m, const struct report_card *c)
{
	char *out = NULL;

	if (c->isolation == REPORT_ISO_WHOLE)
		return NULL;
	for (size_t a = 0; a < c->n_slots && !out; a++) {
		const struct report_slot *sa = &c->slots[a];
		char **names = NULL;
		size_t nn = 0;
		if (sa->pod < 0)
			continue;
		/* every namespace holding a slot of sa's domain */
		for (size_t b = 0; b < c->n_slots; b++) {
			const struct report_slot *sb = &c->slots[b];
			const char *ns;
			size_t x;
			if (sb->pod < 0 || sb->domain != sa->domain)
				continue;
			ns = m->pods[sb->pod].namespace;
			for (x = 0; x < nn && strcmp(names[x], ns); x++)
				;
			if (x == nn) {
				names = gs_xrealloc(names, (nn + 1) * sizeof(*names));
				names[nn++] = (char *)ns;
			}
		}
		if (nn > 1) {
			struct strbuf sb = STRBUF_INIT;
			qsort(names, nn, sizeof(*names), cmp_str);
			for (size_t x = 0; x < nn; x++)
				strbuf_addsep(&sb, ", ", names[x]);
			out = strbuf_detach(&sb, NULL);
		}
		free(names);
	}
	return out;
}

/* ---- quotas ---- */

static double fraction(const char *used, const char *hard)
{
	struct quantity u, h;
	struct gs_error e;
	int64_t um, hm;

	if (!used || !hard || quantity_parse(&u, used, strlen(used), &e) < 0 ||
	    quantity_parse(&h, hard, strlen(hard), &e) < 0 || quantity_milli_value(&u, &um) < 0 ||
	    quantity_milli_value(&h, &hm) < 0)
		return 0;
	if (hm <= 0)
		return um > 0 ? 1 : 0;
	return (double)um / (double)hm;
}

static void build_quotas(struct report_model *m, json_t *ns_seen, const json_t *list)
{
	const json_t *items = json_is_array(list) ? list : kobj_get(list, "items"), *q;
	size_t i;

	json_array_foreach (items, i, q) {
		const json_t *hard = kobj_map(q, "status.hard");
		const json_t *used = kobj_map(q, "status.used");
		const char *ns = kobj_text(q, "metadata.namespace");
		const char *k;
		json_t *v;
		if (!hard) /* not enforced yet: the spec is what it will be */
			hard = kobj_map(q, "spec.hard");
		json_object_foreach ((json_t *)hard, k, v) {
			struct report_quota *rq;
			const char *u = json_string_value(json_object_get(used, k));
			if (!json_is_string(v))
				continue;
			m->quotas = gs_xrealloc(m->quotas, (m->n_quotas + 1) * sizeof(*m->quotas));
			rq = &m->quotas[m->n_quotas++];
			rq->namespace = gs_xstrdup(*ns ? ns : "default");
			rq->name = gs_xstrdup(kobj_text(q, "metadata.name"));
			rq->resource = gs_xstrdup(k);
			rq->hard = gs_xstrdup(json_string_value(v));
			rq->used = u ? gs_xstrdup(u) : NULL;
			rq->fraction = fraction(u, rq->hard);
			add_namespace(m, ns_seen, rq->namespace);
		}
	}
}

/* ---- the summary ---- */

/*
 * Headroom per pool as `gpushare plan` counts it: the plan of the fleet with
 * every pod already there and no batch, stranded for the resources an
 * unbound pod asks for. A fleet plan cannot read is a note, not a failure.
 */
static void build_pools(struct report_model *m, const struct report_input *in)
{
	const json_t *items = json_is_array(in->pods) ? in->pods : kobj_get(in->pods, "items");
	json_t *nodes = json_is_array(in->nodes) ? json_pack("{s:O}", "items", in->nodes)
						 : json_incref((json_t *)in->nodes);
	json_t *existing =
		json_pack("{s:o}", "items", items ? json_copy((json_t *)items) : json_array());
	json_t *pending = json_object();
	struct plan_input pin = {.nodes = nodes, .existing = existing, .configs = in->configs};
	struct plan *p = NULL;
	struct plan_result *r;
	struct gs_error e;
	const json_t *pod;
	size_t i;

	if (plan_new(&pin, &p, &e) < 0) {
		gs_warnings_add(&m->notes, "no headroom per pool: %s", e.msg);
		goto out;
	}
	r = plan_finish(p);
	json_array_foreach (items, i, pod) {
		const char *phase = kobj_text(pod, "status.phase");
		json_t *req;
		const char *k;
		json_t *v;
		if (*kobj_text(pod, "spec.nodeName") || !strcmp(phase, "Succeeded") ||
		    !strcmp(phase, "Failed"))
			continue;
		req = pod_requests(pod);
		json_object_foreach (req, k, v)
			json_object_set_new(pending, k, json_true());
		json_decref(req);
	}
	pools_strand(r->pools, r->n_pools, pending);
	m->pools = r->pools;
	m->n_pools = r->n_pools;
	r->pools = NULL;
	r->n_pools = 0;
	plan_result_free(r);
out:
	json_decref(pending);
	json_decref(existing);
	json_decref(nodes);
}

static void build_refused(struct report_model *m, const struct sync_report *sync)
{
	for (size_t i = 0; sync && i < sync->n; i++) {
		const struct sync_node *sn = &sync->nodes[i];
		if (sn->outcome != SYNC_FAILED)
			continue;
		m->refused = gs_xrealloc(m->refused, (m->n_refused + 1) * sizeof(*m->refused));
		m->refused[m->n_refused].node = gs_xstrdup(sn->name);
		m->refused[m->n_refused++].reason = gs_xstrdup(sn->message ? sn->message : "");
	}
}

int report_model_build(const struct report_input *in, struct report_model **out,
		       struct gs_error *err)
{
	struct report_model *m = gs_xcalloc(1, sizeof(*m));
	struct building b = {.m = m,
			     .ledgers = NULL,
			     .node_objs = NULL,
			     .keys = NULL,
			     .pod_by_key = json_object(),
			     .node_by_name = json_object(),
			     .ns_seen = json_object()};
	const json_t *items = json_is_array(in->nodes) ? in->nodes : kobj_get(in->nodes, "items");
	const json_t *node;
	size_t i, n_nodes;
	int rc = 0;

	*out = NULL;
	gs_warnings_init(&m->notes);
	m->source = in->source ? gs_xstrdup(in->source) : NULL;
	json_array_foreach (items, i, node) {
		if ((rc = build_node(&b, in, node, err)) < 0)
			break;
	}
	if (rc == 0)
		rc = build_pods(&b, in, err);
	for (size_t n = 0; rc == 0 && n < m->n_nodes; n++) {
		build_cards(&b, n);
		build_dra_slots(&b, in, n);
		for (size_t c = 0; c < m->nodes[n].n_cards; c++)
			m->nodes[n].cards[c].shared_memory =
				shared_memory(m, &m->nodes[n].cards[c]);
	}
	if (rc == 0 && in->quotas)
		build_quotas(m, b.ns_seen, in->quotas);
	if (rc == 0) {
		build_pools(m, in);
		build_refused(m, in->sync);
	}
	if (m->n_namespaces) /* qsort(NULL, 0) is undefined: a fleet without pods has none */
		qsort(m->namespaces, m->n_namespaces, sizeof(char *), cmp_str);
	n_nodes = m->n_nodes;
	for (size_t n = 0; n < n_nodes; n++)
		ledger_free(b.ledgers[n]);
	free(b.ledgers);
	free(b.node_objs);
	for (size_t p = 0; b.keys && p < m->n_pods; p++)
		free(b.keys[p]);
	free(b.keys);
	json_decref(b.pod_by_key);
	json_decref(b.node_by_name);
	json_decref(b.ns_seen);
	if (rc < 0) {
		report_model_free(m);
		return -1;
	}
	*out = m;
	return 0;
}

void report_model_free(struct report_model *m)
{
	if (!m)
		return;
	for (size_t n = 0; n < m->n_nodes; n++) {
		struct report_node *rn = &m->nodes[n];
		for (size_t c = 0; c < rn->n_cards; c++) {
			struct report_card *rc = &rn->cards[c];
			for (size_t s = 0; s < rc->n_slots; s++) {
				free(rc->slots[s].resource);
				free(rc->slots[s].device);
				free(rc->slots[s].label);
			}
			free(rc->slots);
			free(rc->product);
			free(rc->shared_memory);
		}
		free(rn->cards);
		free(rn->name);
		free(rn->config);
		free(rn->sharing);
		free(rn->mig_strategy);
		free(rn->failure);
		free(rn->resources);
	}
	free(m->nodes);
	for (size_t p = 0; p < m->n_pods; p++) {
		free(m->pods[p].namespace);
		free(m->pods[p].name);
		free(m->pods[p].node);
		free(m->pods[p].phase);
		free(m->pods[p].requests);
		free(m->pods[p].note);
	}
	free(m->pods);
	for (size_t q = 0; q < m->n_quotas; q++) {
		free(m->quotas[q].namespace);
		free(m->quotas[q].name);
		free(m->quotas[q].resource);
		free(m->quotas[q].used);
		free(m->quotas[q].hard);
	}
	free(m->quotas);
	for (size_t i = 0; i < m->n_namespaces; i++)
		free(m->namespaces[i]);
	free(m->namespaces);
	free(m->source);
	gs_warnings_release(&m->notes);
	pools_free_uses(m->pools, m->n_pools);
	for (size_t i = 0; i < m->n_refused; i++) {
		free(m->refused[i].node);
		free(m->refused[i].reason);
	}
	free(m->refused);
	free(m);
}

/* ---- drawing ---- */

#define W 1000	    /* picture width */
#define M 16	    /* margin */
#define CARD_W 230  /* card width */
#define CARD_GAP 14 /* between cards */
#define SLOT_GAP 4  /* between slots */
#define LINE 18	    /* one line of text */
#define FREE_FILL "#f4f4f4"

static size_t ns_index(const struct report_model *m, const char *ns)
{
	for (size_t i = 0; i < m->n_namespaces; i++)
		if (!strcmp(m->namespaces[i], ns))
			return i;
	return 0;
}

static const char *ns_fill(const struct report_model *m, const char *ns)
{
	return svg_colour(ns_index(m, ns));
}

static const char *ns_ink(const struct report_model *m, const char *ns)
{
	return svg_ink(ns_index(m, ns));
}

/* A pill with a tooltip; returns its width. */
static int badge(struct strbuf *sb, int x, int y, const char *cls, const char *label,
		 const char *tip)
{
	int w = (int)(7.0 * (double)svg_chars(label)) + 14;

	strbuf_addf(sb, "<g class=\"badge %s\"><title>", cls);
	escape_html(sb, tip);
	strbuf_addf(sb,
		    "</title><rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"18\" rx=\"9\"/>"
		    "<text x=\"%d\" y=\"%d\" font-size=\"11\">",
		    x, y, w, x + 7, y + 13);
	escape_html(sb, label);
	strbuf_addstr(sb, "</text></g>\n");
	return w;
}

static const char *iso_class(enum report_isolation iso)
{
	switch (iso) {
	case REPORT_ISO_WHOLE:
		return "iso-whole";
	case REPORT_ISO_NONE:
		return "iso-none";
	case REPORT_ISO_MPS:
		return "iso-mps";
	case REPORT_ISO_HARDWARE:
		return "iso-hw";
	}
	return "";
}

/* Why, from isolation.c's table. */
static char *iso_tip(enum report_isolation iso)
{
	size_t n;
	const struct isolation_method *im = isolation_methods(&n);
	int i = iso == REPORT_ISO_NONE ? 0 : iso == REPORT_ISO_MPS ? 1 : 2;

	if (iso == REPORT_ISO_WHOLE)
		return gs_xstrdup("not shared: the device plugin hands out the whole card to one "
				  "container");
	if ((size_t)i >= n)
		return gs_xstrdup("");
	return gs_xasprintf("%s: memory isolation %s (%s); fault isolation %s (%s)", im[i].name,
			    im[i].memory, im[i].memory_why, im[i].fault, im[i].fault_why);
}

static void slot_layout(size_t n, int *cols, int *h)
{
	*cols = n <= 4 ? (int)(n ? n : 1) : n <= 8 ? 4 : n <= 64 ? 8 : 16;
	*h = n <= 64 ? 24 : 12;
}

static int card_height(const struct report_card *c)
{
	int cols, h, rows;

	slot_layout(c->n_slots, &cols, &h);
	rows = (int)((c->n_slots + (size_t)cols - 1) / (size_t)cols);
	return 40 + 22 * (c->shared_memory ? 2 : 1) + rows * (h + SLOT_GAP) + 8 +
	       (c->n_slots ? 0 : LINE);
}

static void draw_card(struct strbuf *sb, const struct report_model *m, const struct report_node *n,
		      const struct report_card *c, int x, int y, int h)
{
	char *tip = iso_tip(c->isolation), *title;
	int cols, sh, by = y + 40;
	int sw;

	slot_layout(c->n_slots, &cols, &sh);
	sw = (CARD_W - 20 - (cols - 1) * SLOT_GAP) / cols;
	strbuf_addstr(sb, "<g class=\"card\" data-card=\"");
	escape_html(sb, n->name);
	strbuf_addf(sb, "/%d\">\n", c->index);
	strbuf_addf(sb,
		    "<rect class=\"card-box\" x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" "
		    "rx=\"6\"/>\n",
		    x, y, CARD_W, h);
	title = gs_xasprintf("GPU %d · %s", c->index, c->product);
	svg_text(sb, x + 10, y + 17, 12, CARD_W - 20, "card-title", title);
	free(title);
	title = c->mig ? gs_xasprintf("%d MiB · MIG, %zu device%s", c->memory_mib, c->n_slots,
				      c->n_slots == 1 ? "" : "s")
		       : gs_xasprintf("%d MiB · %zu device%s", c->memory_mib, c->n_slots,
				      c->n_slots == 1 ? "" : "s");
	svg_text(sb, x + 10, y + 32, 11, CARD_W - 20, "muted", title);
	free(title);
	if (n->dra)
		badge(sb, x + 10, by, "iso-whole", "DRA",
		      "allocated through ResourceClaims (NVIDIA's DRA driver), not the device "
		      "plugin");
	else
		badge(sb, x + 10, by, iso_class(c->isolation), report_isolation_name(c->isolation),
		      tip);
	free(tip);
	by += 22;
	if (c->shared_memory) {
		char *t = gs_xasprintf("namespaces %s share this card's memory%s", c->shared_memory,
				       c->mig ? " (one MIG instance)" : "");
		badge(sb, x + 10, by, "shared", "tenants share memory", t);
		free(t);
		by += 22;
	}
	if (!c->n_slots)
		svg_text(sb, x + 10, by + 14, 11, CARD_W - 20, "muted",
			 n->dra ? "a DRA device: see its ResourceClaims" : "advertises no device");
	for (size_t s = 0; s < c->n_slots; s++) {
		const struct report_slot *sl = &c->slots[s];
		int sx = x + 10 + (int)(s % (size_t)cols) * (sw + SLOT_GAP);
		int sy = by + (int)(s / (size_t)cols) * (sh + SLOT_GAP);
		const struct report_pod *p = sl->pod >= 0 ? &m->pods[sl->pod] : NULL;
		strbuf_addstr(sb, "<g class=\"slot\"");
		if (p) {
			strbuf_addstr(sb, " data-pod=\"");
			escape_html(sb, p->namespace);
			strbuf_addch(sb, '/');
			escape_html(sb, p->name);
			strbuf_addch(sb, '"');
		}
		strbuf_addstr(sb, "><title>");
		escape_html(sb, sl->resource);
		strbuf_addstr(sb, " ");
		escape_html(sb, sl->device);
		strbuf_addstr(sb, p ? ": " : ": free");
		if (p) {
			escape_html(sb, p->namespace);
			strbuf_addch(sb, '/');
			escape_html(sb, p->name);
		}
		strbuf_addf(sb,
			    "</title><rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" rx=\"3\" "
			    "fill=\"%s\"%s/>",
			    sx, sy, sw, sh, p ? ns_fill(m, p->namespace) : FREE_FILL,
			    p ? "" : " class=\"free\"");
		if (sh >= 20) {
			strbuf_addf(sb, "<text x=\"%d\" y=\"%d\" font-size=\"10\" fill=\"%s\"",
				    sx + 4, sy + 15, p ? ns_ink(m, p->namespace) : "#666");
			if (0.6 * 10 * (double)svg_chars(sl->label) > sw - 8)
				strbuf_addf(sb,
					    " textLength=\"%d\" lengthAdjust=\"spacingAndGlyphs\"",
					    sw - 8 > 4 ? sw - 8 : 4);
			strbuf_addch(sb, '>');
			escape_html(sb, sl->label);
			strbuf_addstr(sb, "</text>");
		}
		strbuf_addstr(sb, "</g>\n");
	}
	strbuf_addstr(sb, "</g>\n");
}

/* The line under a DRA node's name in the picture and the page: what its boxes show. */
static const char *dra_note(const struct report_node *n)
{
	return n->dra_claims ? "DRA node (gpushare.io/path=dra): each device of its "
			       "ResourceSlice with the pods of the ResourceClaim allocated it "
			       "(status.allocation, reservedFor)"
			     : "DRA node (gpushare.io/path=dra): its GPUs are a ResourceSlice, "
			       "allocated through ResourceClaims; who holds them is not drawn";
}

/* "GPU 0 #1, GPU 1 #0": the devices pod pi holds on node n. */
static char *held_text(const struct report_node *n, long pi)
{
	struct strbuf sb = STRBUF_INIT;

	for (size_t c = 0; c < n->n_cards; c++)
		for (size_t s = 0; s < n->cards[c].n_slots; s++)
			if (n->cards[c].slots[s].pod == pi) {
				if (sb.len)
					strbuf_addstr(&sb, ", ");
				strbuf_addf(&sb, "GPU %d %s", n->cards[c].index,
					    n->cards[c].slots[s].label);
			}
	return strbuf_detach(&sb, NULL);
}

static const char *origin_text(enum report_origin o)
{
	return o == REPORT_FROM_LEDGER	   ? "from the ledger"
	       : o == REPORT_FROM_REQUESTS ? "from its requests"
	       : o == REPORT_FROM_CLAIM	   ? "from its ResourceClaim"
					   : "holds no GPU device here";
}

/* One line for a pod: colour key, ns/name, what it holds. */
static void pod_line(struct strbuf *sb, const struct report_model *m, const struct report_node *n,
		     long pi, int y)
{
	const struct report_pod *p = &m->pods[pi];
	struct strbuf t = STRBUF_INIT;
	char *held = n ? held_text(n, pi) : gs_xstrdup("");

	strbuf_addstr(sb, "<g class=\"pod\" data-pod=\"");
	escape_html(sb, p->namespace);
	strbuf_addch(sb, '/');
	escape_html(sb, p->name);
	strbuf_addf(sb,
		    "\"><rect x=\"%d\" y=\"%d\" width=\"12\" height=\"12\" rx=\"2\" fill=\"%s\"/>",
		    M + 4, y - 10, ns_fill(m, p->namespace));
	strbuf_addf(&t, "%s/%s", p->namespace, p->name);
	if (n)
		strbuf_addf(&t, ": %s (%s)", *held ? held : "no device", origin_text(p->origin));
	else
		strbuf_addf(&t, ": %s, not bound to a node%s%s", p->phase,
			    *p->requests ? "; asks for " : "", p->requests);
	if (p->note)
		strbuf_addf(&t, "; %s", p->note);
	svg_text(sb, M + 22, y, 12, W - 2 * M - 22, NULL, t.buf);
	strbuf_addstr(sb, "</g>\n");
	strbuf_release(&t);
	free(held);
}

/* The node block from y; returns the y below it. */
static int draw_node(struct strbuf *sb, const struct report_model *m, const struct report_node *n,
		     int y)
{
	struct strbuf t = STRBUF_INIT;
	int per_row = (W - 2 * M + CARD_GAP) / (CARD_W + CARD_GAP);

	strbuf_addstr(sb, "<g class=\"node\" data-node=\"");
	escape_html(sb, n->name);
	strbuf_addstr(sb, "\">\n");
	svg_text(sb, M, y + 16, 15, W - 2 * M, "node-title", n->name);
	strbuf_addf(&t, "config %s · sharing %s · MIG strategy %s · advertises %s",
		    *n->config ? n->config : "(none)", n->sharing, n->mig_strategy,
		    *n->resources ? n->resources : "nothing");
	svg_text(sb, M, y + 34, 11, W - 2 * M, "muted", t.buf);
	y += 42;
	if (n->failure) {
		svg_text(sb, M, y + 12, 11, W - 2 * M, "failure", n->failure);
		y += LINE;
	}
	if (n->dra) {
		svg_text(sb, M, y + 12, 11, W - 2 * M, "muted", dra_note(n));
		y += LINE;
	}
	for (size_t c = 0; c < n->n_cards; c += (size_t)per_row) {
		int h = 0;
		for (size_t k = c; k < n->n_cards && k < c + (size_t)per_row; k++) {
			int ch = card_height(&n->cards[k]);
			h = ch > h ? ch : h;
		}
		for (size_t k = c; k < n->n_cards && k < c + (size_t)per_row; k++)
			draw_card(sb, m, n, &n->cards[k], M + (int)(k - c) * (CARD_W + CARD_GAP), y,
				  h);
		y += h + CARD_GAP;
	}
	y += 6;
	for (size_t p = 0; p < m->n_pods; p++)
		if (m->pods[p].node_index == (long)(n - m->nodes)) {
			y += LINE;
			pod_line(sb, m, n, (long)p, y);
		}
	strbuf_addstr(sb, "</g>\n");
	strbuf_release(&t);
	return y + 24;
}

static int draw_legend(struct strbuf *sb, const struct report_model *m, int y)
{
	int x = M;

	if (!m->n_namespaces)
		return y;
	strbuf_addstr(sb, "<g class=\"legend\">\n");
	for (size_t i = 0; i < m->n_namespaces; i++) {
		int w = 22 + (int)(7.2 * (double)svg_chars(m->namespaces[i])) + 18;
		if (w > W - 2 * M)
			w = W - 2 * M;
		if (x + w > W - M && x > M) {
			x = M;
			y += LINE;
		}
		strbuf_addstr(sb, "<g class=\"ns\" data-namespace=\"");
		escape_html(sb, m->namespaces[i]);
		strbuf_addf(sb,
			    "\"><rect x=\"%d\" y=\"%d\" width=\"14\" height=\"14\" rx=\"2\" "
			    "fill=\"%s\"/>",
			    x, y - 11, svg_colour(i));
		svg_text(sb, x + 20, y, 12, w - 22, NULL, m->namespaces[i]);
		strbuf_addstr(sb, "</g>\n");
		x += w;
	}
	strbuf_addstr(sb, "</g>\n");
	return y + LINE + 8;
}

static int draw_quotas(struct strbuf *sb, const struct report_model *m, int y)
{
	const int label_w = 430, bar_x = M + 440, bar_w = 300;

	if (!m->n_quotas)
		return y;
	svg_text(sb, M, y + 16, 15, 0, "section", "Quotas");
	y += 26;
	for (size_t i = 0; i < m->n_quotas; i++) {
		const struct report_quota *q = &m->quotas[i];
		double f = q->fraction > 1 ? 1 : q->fraction < 0 ? 0 : q->fraction;
		char *label = gs_xasprintf("%s/%s %s", q->namespace, q->name, q->resource);
		char *val = gs_xasprintf("%s / %s%s", q->used ? q->used : "?", q->hard,
					 !q->used	    ? " (not counted yet)"
					 : q->fraction >= 1 ? " full"
							    : "");
		y += LINE + 4;
		strbuf_addstr(sb, "<g class=\"quota\" data-namespace=\"");
		escape_html(sb, q->namespace);
		strbuf_addstr(sb, "\">");
		svg_text(sb, M, y, 12, label_w, NULL, label);
		strbuf_addf(sb,
			    "<rect class=\"bar\" x=\"%d\" y=\"%d\" width=\"%d\" height=\"14\" "
			    "rx=\"3\"/><rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"14\" rx=\"3\" "
			    "fill=\"%s\"/>",
			    bar_x, y - 11, bar_w, bar_x, y - 11, (int)(f * bar_w + 0.5),
			    ns_fill(m, q->namespace));
		svg_text(sb, bar_x + bar_w + 10, y, 12, W - M - (bar_x + bar_w + 10),
			 q->fraction >= 1 ? "full" : NULL, val);
		strbuf_addstr(sb, "</g>\n");
		free(label);
		free(val);
	}
	return y + 24;
}

static size_t unbound(const struct report_model *m)
{
	size_t n = 0;

	for (size_t p = 0; p < m->n_pods; p++)
		n += m->pods[p].node_index < 0;
	return n;
}

static char *summary(const struct report_model *m)
{
	struct strbuf sb = STRBUF_INIT;
	size_t shared = 0;

	for (size_t n = 0; n < m->n_nodes; n++)
		for (size_t c = 0; c < m->nodes[n].n_cards; c++)
			shared += m->nodes[n].cards[c].shared_memory != NULL;
	strbuf_addf(&sb, "%zu node%s · %zu GPU%s · %zu pod%s", m->n_nodes,
		    m->n_nodes == 1 ? "" : "s", m->n_cards, m->n_cards == 1 ? "" : "s", m->n_pods,
		    m->n_pods == 1 ? "" : "s");
	if (unbound(m))
		strbuf_addf(&sb, " (%zu not on a GPU node)", unbound(m));
	strbuf_addf(&sb, " · %zu card%s where namespaces share memory", shared,
		    shared == 1 ? "" : "s");
	if (m->skipped_nodes)
		strbuf_addf(&sb, " · %zu node%s without GPUs not shown", m->skipped_nodes,
			    m->skipped_nodes == 1 ? "" : "s");
	return strbuf_detach(&sb, NULL);
}

static const char svg_style[] =
	"<style>\n"
	"text{fill:#222}\n"
	".muted{fill:#666}\n"
	".node-title,.section,.title{font-weight:bold}\n"
	".card-box{fill:#fff;stroke:#888;stroke-width:1}\n"
	".card-title{font-weight:bold}\n"
	".free{stroke:#bbb;stroke-dasharray:3 2}\n"
	".badge rect{stroke:none}\n"
	".iso-whole rect{fill:#e3e3e3}.iso-none rect{fill:#fbd1c4}\n"
	".iso-mps rect{fill:#fde7b0}.iso-hw rect{fill:#cde8c8}\n"
	".shared rect{fill:#c0392b}.shared text{fill:#fff;font-weight:bold}\n"
	".failure{fill:#b00}\n"
	".bar{fill:#eee;stroke:#ccc}\n"
	".full{fill:#b00;font-weight:bold}\n"
	"</style>\n";

/* The <svg> element (without an XML declaration). */
static void svg_element(const struct report_model *m, struct strbuf *out)
{
	struct strbuf body = STRBUF_INIT;
	char *sum = summary(m);
	int y = 0;

	svg_text(&body, M, y + 24, 18, W - 2 * M, "title", "GPU fleet");
	svg_text(&body, M, y + 44, 12, W - 2 * M, "summary", sum);
	y = draw_legend(&body, m, y + 68);
	for (size_t n = 0; n < m->n_nodes; n++)
		y = draw_node(&body, m, &m->nodes[n], y);
	if (unbound(m)) {
		svg_text(&body, M, y + 16, 15, 0, "section", "Not on a GPU node");
		y += 20;
		for (size_t p = 0; p < m->n_pods; p++)
			if (!m->pods[p].node || m->pods[p].node_index < 0) {
				y += LINE;
				pod_line(&body, m, NULL, (long)p, y);
			}
		y += 24;
	}
	y = draw_quotas(&body, m, y);
	strbuf_addf(out,
		    "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" "
		    "viewBox=\"0 0 %d %d\" font-family=\"" SVG_FONT_FAMILY "\" role=\"img\" "
		    "aria-label=\"",
		    W, y + M, W, y + M);
	escape_html(out, sum);
	strbuf_addstr(out, "\">\n<title>gpushare: GPU fleet</title>\n");
	strbuf_addstr(out, svg_style);
	strbuf_add(out, body.buf, body.len);
	strbuf_addstr(out, "</svg>\n");
	strbuf_release(&body);
	free(sum);
}

void report_svg(const struct report_model *m, struct strbuf *out)
{
	strbuf_addstr(out, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
	svg_element(m, out);
}

/* ---- the page ---- */

/* `s` escaped, with a line-break opportunity (<wbr>) after each - / _ = so long names wrap there.
 */
static void escape_breakable(struct strbuf *sb, const char *s)
{
	const char *p = s ? s : "";

	while (*p) {
		size_t n = strcspn(p, "-/_=");
		char *part = gs_xstrndup(p, n + (p[n] != 0));
		escape_html(sb, part);
		free(part);
		p += n;
		if (!*p)
			break;
		p++;
		if (*p)
			strbuf_addstr(sb, "<wbr>");
	}
}

/* A table cell: a name ("nm") wraps only after - / _ =, other text at spaces; cut, the title has
 * it. */
static void cell(struct strbuf *sb, const char *cls, const char *s)
{
	strbuf_addf(sb, "<td class=\"%s\" title=\"", cls);
	escape_html(sb, s);
	strbuf_addstr(sb, "\">");
	if (!strcmp(cls, "nm"))
		escape_breakable(sb, s);
	else
		escape_html(sb, s);
	strbuf_addstr(sb, "</td>");
}

/* An element whose text may be cut with an ellipsis: the whole text in its title. */
static void clipped(struct strbuf *sb, const char *tag, const char *cls, const char *s)
{
	strbuf_addf(sb, "<%s class=\"clip %s\" title=\"", tag, cls);
	escape_html(sb, s);
	strbuf_addstr(sb, "\">");
	escape_html(sb, s);
	strbuf_addf(sb, "</%s>", tag);
}

static void html_badge(struct strbuf *sb, const char *cls, const char *label, const char *tip)
{
	strbuf_addf(sb, "<span class=\"badge %s\" title=\"", cls);
	escape_html(sb, tip);
	strbuf_addstr(sb, "\">");
	escape_html(sb, label);
	strbuf_addstr(sb, "</span>");
}

static void key(struct strbuf *sb, const struct report_model *m, const char *ns)
{
	strbuf_addf(sb, "<span class=\"key\" style=\"background:%s\"></span>", ns_fill(m, ns));
}

static const char html_style[] =
	"*{box-sizing:border-box}\n"
	"body{font-family:'DejaVu Sans','Liberation Sans',Arial,sans-serif;margin:0;"
	"padding:12px 16px;color:#222;font-size:14px}\n"
	"h1{font-size:20px;margin:0 0 2px}\n"
	"h2{font-size:16px;margin:18px 0 6px}\n"
	"h3{font-size:15px;margin:0}\n"
	".muted{color:#666}\n"
	".clip{display:block;overflow:hidden;text-overflow:ellipsis;white-space:nowrap;"
	"min-width:0;max-width:100%}\n"
	".key{display:inline-block;width:12px;height:12px;border-radius:2px;margin-right:6px;"
	"vertical-align:-1px;flex:none}\n"
	"#summary{display:grid;grid-template-columns:repeat(auto-fit,minmax(min(100%,340px),1fr));"
	"gap:10px;margin:8px 0;align-items:start}\n"
	".panel{border:1px solid #ccc;border-radius:6px;padding:8px 10px;min-width:0}\n"
	".panel h2{margin:0 0 6px;font-size:15px}\n"
	".wide{grid-column:1/-1}\n"
	"table{border-collapse:collapse;width:100%;table-layout:fixed;font-size:13px}\n"
	"td,th{border-bottom:1px solid #ddd;padding:3px 4px;text-align:left;vertical-align:top;"
	"overflow:hidden;text-overflow:ellipsis;overflow-wrap:normal;word-break:normal}\n"
	"th{font-weight:bold;font-size:12px;white-space:nowrap}\n"
	".num{text-align:right}\n"
	".bar{height:12px;background:#eee;border:1px solid #ccc;border-radius:3px;overflow:hidden;"
	"min-width:40px}\n"
	".bar>span{display:block;height:100%}\n"
	".quota{display:grid;grid-template-columns:minmax(0,3fr) minmax(60px,2fr) auto;gap:8px;"
	"align-items:center;margin:3px 0;font-size:13px}\n"
	".res{font-size:11px}\n"
	".full,.failure,.refused li{color:#b00}\n"
	".full{font-weight:bold}\n"
	".legend{display:flex;flex-wrap:wrap;gap:4px 14px;margin:6px 0 0;font-size:13px}\n"
	".legend>span{display:inline-flex;align-items:center;min-width:0;max-width:100%}\n"
	".node{border-top:1px solid #ccc;padding:8px 0;min-width:0}\n"
	".meta{margin:2px 0 6px;font-size:12px}\n"
	".cards{display:grid;grid-template-columns:repeat(auto-fill,minmax(min(100%,230px),1fr));"
	"gap:10px;margin:6px 0}\n"
	".card{border:1px solid #888;border-radius:6px;padding:6px 8px;min-width:0;"
	"background:#fff}\n"
	".card-title{font-weight:bold;font-size:13px}\n"
	".card .muted{font-size:12px}\n"
	".badge{display:inline-block;border-radius:9px;padding:1px 7px;font-size:11px;"
	"margin:3px 4px 3px 0;max-width:100%;overflow:hidden;text-overflow:ellipsis;"
	"white-space:nowrap;vertical-align:top}\n"
	".iso-whole{background:#e3e3e3}.iso-none{background:#fbd1c4}\n"
	".iso-mps{background:#fde7b0}.iso-hw{background:#cde8c8}\n"
	".shared{background:#c0392b;color:#fff;font-weight:bold}\n"
	".slots{display:grid;grid-template-columns:repeat(auto-fill,minmax(60px,1fr));gap:4px;"
	"margin-top:4px}\n"
	".slot{height:22px;border-radius:3px;font-size:10px;line-height:14px;padding:3px 4px;"
	"overflow:hidden;text-overflow:ellipsis;white-space:nowrap;min-width:0}\n"
	".slot.free{background:#f4f4f4;border:1px dashed #bbb;color:#666}\n"
	".podlines{list-style:none;padding:0;margin:4px 0;font-size:13px}\n"
	".podlines li{margin:2px 0;overflow-wrap:normal}\n"
	"details.group{border-top:1px solid #ccc;padding:8px 0}\n"
	"details.group>summary{cursor:pointer;font-size:15px}\n"
	".members{font-size:12px;margin:4px 0}\n";

/* Whether node n's devices are all free. */
static bool all_free(const struct report_node *n)
{
	for (size_t c = 0; c < n->n_cards; c++)
		for (size_t s = 0; s < n->cards[c].n_slots; s++)
			if (n->cards[c].slots[s].pod >= 0)
				return false;
	return true;
}

/*
 * What makes two nodes draw the same: config, sharing, MIG strategy, what
 * they advertise, refusal, and per card its model, memory, isolation,
 * devices and each device's holder namespace (or free). Caller frees.
 */
static char *node_shape(const struct report_model *m, const struct report_node *n)
{
	struct strbuf sb = STRBUF_INIT;

	strbuf_addf(&sb, "%s\x1f%s\x1f%s\x1f%s\x1f%s\x1f%d%d", n->config, n->sharing,
		    n->mig_strategy, n->resources, n->failure ? n->failure : "", n->dra,
		    n->dra_claims);
	for (size_t c = 0; c < n->n_cards; c++) {
		const struct report_card *rc = &n->cards[c];
		strbuf_addf(&sb, "\x1e%d\x1f%s\x1f%d\x1f%d\x1f%s", rc->index, rc->product,
			    rc->memory_mib, (int)rc->isolation,
			    rc->shared_memory ? rc->shared_memory : "");
		for (size_t s = 0; s < rc->n_slots; s++) {
			const struct report_slot *sl = &rc->slots[s];
			strbuf_addf(&sb, "\x1d%s\x1f%s\x1f%s", sl->resource, sl->label,
				    sl->pod >= 0 ? m->pods[sl->pod].namespace : "");
		}
	}
	return strbuf_detach(&sb, NULL);
}

/* One card; `with_holders`: each device names its pod (a group's cards name the namespace). */
static void html_card(struct strbuf *sb, const struct report_model *m, const struct report_node *n,
		      const struct report_card *c, bool with_holders)
{
	char *t;

	strbuf_addstr(sb, "<div class=\"card\" data-card=\"");
	escape_html(sb, n->name);
	strbuf_addf(sb, "/%d\">", c->index);
	t = gs_xasprintf("GPU %d · %s", c->index, c->product);
	clipped(sb, "div", "card-title", t);
	free(t);
	t = gs_xasprintf("%d MiB · %s%zu device%s", c->memory_mib, c->mig ? "MIG, " : "",
			 c->n_slots, c->n_slots == 1 ? "" : "s");
	clipped(sb, "div", "muted", t);
	free(t);
	strbuf_addstr(sb, "<div>");
	if (n->dra) {
		html_badge(sb, "iso-whole", "DRA",
			   "allocated through ResourceClaims (NVIDIA's DRA driver), not the device "
			   "plugin");
	} else {
		char *tip = iso_tip(c->isolation);
		html_badge(sb, iso_class(c->isolation), report_isolation_name(c->isolation), tip);
		free(tip);
	}
	if (c->shared_memory) {
		t = gs_xasprintf("namespaces %s share this card's memory%s", c->shared_memory,
				 c->mig ? " (one MIG instance)" : "");
		html_badge(sb, "shared", "tenants share memory", t);
		free(t);
	}
	strbuf_addstr(sb, "</div>");
	if (!c->n_slots)
		strbuf_addf(sb, "<div class=\"muted\">%s</div>",
			    n->dra ? "a DRA device: see its ResourceClaims"
				   : "advertises no device");
	else
		strbuf_addstr(sb, "<div class=\"slots\">");
	for (size_t s = 0; s < c->n_slots; s++) {
		const struct report_slot *sl = &c->slots[s];
		const struct report_pod *p = sl->pod >= 0 ? &m->pods[sl->pod] : NULL;
		strbuf_addstr(sb, p ? "<span class=\"slot\"" : "<span class=\"slot free\"");
		if (p && with_holders) {
			strbuf_addstr(sb, " data-pod=\"");
			escape_html(sb, p->namespace);
			strbuf_addch(sb, '/');
			escape_html(sb, p->name);
			strbuf_addch(sb, '"');
		}
		if (p)
			strbuf_addf(sb, " style=\"background:%s;color:%s\"",
				    ns_fill(m, p->namespace), ns_ink(m, p->namespace));
		strbuf_addstr(sb, " title=\"");
		escape_html(sb, sl->resource);
		strbuf_addch(sb, ' ');
		escape_html(sb, sl->device);
		if (p && with_holders) {
			strbuf_addstr(sb, ": ");
			escape_html(sb, p->namespace);
			strbuf_addch(sb, '/');
			escape_html(sb, p->name);
		} else if (p) {
			strbuf_addstr(sb, ": held by a pod of ");
			escape_html(sb, p->namespace);
		} else {
			strbuf_addstr(sb, ": free");
		}
		strbuf_addstr(sb, "\">");
		escape_html(sb, sl->label);
		strbuf_addstr(sb, "</span>");
	}
	if (c->n_slots)
		strbuf_addstr(sb, "</div>");
	strbuf_addstr(sb, "</div>\n");
}

/* One pod's line: colour key, ns/name (and its node when `say_node`), what it holds. */
static void html_pod_line(struct strbuf *sb, const struct report_model *m,
			  const struct report_node *n, long pi, bool say_node)
{
	const struct report_pod *p = &m->pods[pi];
	char *held = n ? held_text(n, pi) : gs_xstrdup("");
	struct strbuf t = STRBUF_INIT;

	strbuf_addstr(sb, "<li data-pod=\"");
	escape_html(sb, p->namespace);
	strbuf_addch(sb, '/');
	escape_html(sb, p->name);
	strbuf_addstr(sb, "\">");
	key(sb, m, p->namespace);
	strbuf_addf(&t, "%s/%s", p->namespace, p->name);
	escape_breakable(sb, t.buf);
	strbuf_reset(&t);
	if (n) {
		if (say_node)
			strbuf_addf(&t, " on %s", n->name);
		strbuf_addf(&t, ": %s (%s)", *held ? held : "no device", origin_text(p->origin));
	} else {
		strbuf_addf(&t, ": %s, not bound to a node%s%s", p->phase,
			    *p->requests ? "; asks for " : "", p->requests);
	}
	if (p->note)
		strbuf_addf(&t, "; %s", p->note);
	escape_breakable(sb, t.buf);
	strbuf_addstr(sb, "</li>\n");
	strbuf_release(&t);
	free(held);
}

/* Node n's config line, refusal and cards (its pods are listed by the caller). */
static void html_node_body(struct strbuf *sb, const struct report_model *m,
			   const struct report_node *n, bool with_holders)
{
	struct strbuf t = STRBUF_INIT;

	strbuf_addf(&t, "config %s · sharing %s · MIG strategy %s · advertises %s",
		    *n->config ? n->config : "(none)", n->sharing, n->mig_strategy,
		    *n->resources ? n->resources : "nothing");
	strbuf_addstr(sb, "<p class=\"meta muted\">");
	escape_breakable(sb, t.buf);
	strbuf_addstr(sb, "</p>\n");
	if (n->failure) {
		strbuf_addstr(sb, "<p class=\"failure\">");
		escape_breakable(sb, n->failure);
		strbuf_addstr(sb, "</p>\n");
	}
	if (n->dra)
		strbuf_addf(sb, "<p class=\"muted meta\">%s</p>\n", dra_note(n));
	strbuf_addstr(sb, "<div class=\"cards\">\n");
	for (size_t c = 0; c < n->n_cards; c++)
		html_card(sb, m, n, &n->cards[c], with_holders);
	strbuf_addstr(sb, "</div>\n");
	strbuf_release(&t);
}

/* "8 × NVIDIA A100-SXM4-80GB": the node's cards by model, in card order. */
static char *cards_text(const struct report_node *n)
{
	struct strbuf sb = STRBUF_INIT;

	for (size_t c = 0; c < n->n_cards;) {
		size_t k = c;
		while (k < n->n_cards && !strcmp(n->cards[k].product, n->cards[c].product))
			k++;
		if (sb.len)
			strbuf_addstr(&sb, ", ");
		strbuf_addf(&sb, "%zu × %s", k - c, n->cards[c].product);
		c = k;
	}
	if (!sb.len)
		strbuf_addstr(&sb, "no card");
	return strbuf_detach(&sb, NULL);
}

/* The pods bound to each drawn node, in model order: idx[start[n] .. start[n + 1]). */
struct pods_by_node {
	long *idx;
	size_t *start; /* n_nodes + 1 */
};

static void pods_by_node_init(struct pods_by_node *b, const struct report_model *m)
{
	size_t *fill = gs_xcalloc(m->n_nodes + 1, sizeof(*fill));

	b->start = gs_xcalloc(m->n_nodes + 2, sizeof(*b->start));
	b->idx = gs_xcalloc(m->n_pods + 1, sizeof(*b->idx));
	for (size_t p = 0; p < m->n_pods; p++)
		if (m->pods[p].node_index >= 0)
			b->start[m->pods[p].node_index + 1]++;
	for (size_t n = 0; n < m->n_nodes; n++)
		b->start[n + 1] += b->start[n];
	for (size_t p = 0; p < m->n_pods; p++) {
		long ni = m->pods[p].node_index;
		if (ni >= 0)
			b->idx[b->start[ni] + fill[ni]++] = (long)p;
	}
	free(fill);
}

static void pod_lines(struct strbuf *sb, const struct report_model *m, const struct pods_by_node *b,
		      size_t ni, bool say_node)
{
	if (b->start[ni] == b->start[ni + 1])
		return;
	strbuf_addstr(sb, "<ul class=\"podlines\">\n");
	for (size_t k = b->start[ni]; k < b->start[ni + 1]; k++)
		html_pod_line(sb, m, &m->nodes[ni], b->idx[k], say_node);
	strbuf_addstr(sb, "</ul>\n");
}

/*
 * Every node, in list order; nodes that draw the same (node_shape) are one
 * <details> at the first one's place, with their count and names, the
 * cards drawn once and the pods of each.
 */
static void html_nodes(struct strbuf *sb, const struct report_model *m)
{
	json_t *by_shape = json_object();
	size_t *group = gs_xcalloc(m->n_nodes + 1, sizeof(*group)); /* node -> first of its shape */
	size_t *count = gs_xcalloc(m->n_nodes + 1, sizeof(*count));
	struct pods_by_node b;

	pods_by_node_init(&b, m);
	for (size_t n = 0; n < m->n_nodes; n++) {
		char *shape = node_shape(m, &m->nodes[n]);
		json_t *at = json_object_get(by_shape, shape);
		group[n] = at ? (size_t)json_integer_value(at) : n;
		if (!at)
			json_object_set_new(by_shape, shape, json_integer((json_int_t)n));
		count[group[n]]++;
		free(shape);
	}
	for (size_t n = 0; n < m->n_nodes; n++) {
		const struct report_node *rn = &m->nodes[n];
		if (group[n] != n)
			continue;
		if (count[n] == 1) {
			strbuf_addstr(sb, "<section class=\"node\" data-node=\"");
			escape_html(sb, rn->name);
			strbuf_addstr(sb, "\">");
			clipped(sb, "h3", "node-title", rn->name);
			html_node_body(sb, m, rn, true);
			pod_lines(sb, m, &b, n, false);
			strbuf_addstr(sb, "</section>\n");
			continue;
		}
		char *cards = cards_text(rn);
		strbuf_addf(sb,
			    "<details class=\"group\" data-count=\"%zu\"><summary><b>%zu nodes</b> "
			    "like ",
			    count[n], count[n]);
		escape_breakable(sb, rn->name);
		strbuf_addstr(sb, ": ");
		escape_breakable(sb, cards);
		strbuf_addstr(sb, ", config ");
		escape_html(sb, *rn->config ? rn->config : "(none)");
		strbuf_addf(sb, "%s</summary>\n",
			    all_free(rn) ? ", all free" : ", the same devices held");
		free(cards);
		strbuf_addstr(sb, "<p class=\"members muted\">");
		for (size_t k = n, first = 1; k < m->n_nodes; k++)
			if (group[k] == n) {
				strbuf_addstr(sb, first ? "" : ", ");
				strbuf_addstr(sb, "<span data-node=\"");
				escape_html(sb, m->nodes[k].name);
				strbuf_addstr(sb, "\">");
				escape_breakable(sb, m->nodes[k].name);
				strbuf_addstr(sb, "</span>");
				first = 0;
			}
		strbuf_addstr(sb, "</p>\n");
		html_node_body(sb, m, rn, false);
		for (size_t k = n; k < m->n_nodes; k++)
			if (group[k] == n)
				pod_lines(sb, m, &b, k, true);
		strbuf_addstr(sb, "</details>\n");
	}
	free(b.idx);
	free(b.start);
	free(group);
	free(count);
	json_decref(by_shape);
}

static void bar(struct strbuf *sb, double f, const char *fill)
{
	f = f > 1 ? 1 : f < 0 ? 0 : f;
	strbuf_addf(sb,
		    "<div class=\"bar\"><span style=\"width:%.1f%%;background:%s\"></span></div>",
		    f * 100, fill);
}

static void html_pools(struct strbuf *sb, const struct report_model *m)
{
	strbuf_addstr(sb, "<div class=\"panel wide\" id=\"headroom\"><h2>Headroom per pool</h2>\n");
	if (!m->n_pools) {
		strbuf_addstr(sb, "<p class=\"muted\">No node registers an nvidia.com/ "
				  "resource.</p></div>\n");
		return;
	}
	strbuf_addstr(sb,
		      "<table><colgroup><col style=\"width:18%\"><col style=\"width:20%\">"
		      "<col style=\"width:7%\"><col style=\"width:11%\"><col style=\"width:8%\">"
		      "<col style=\"width:8%\"><col style=\"width:10%\"><col style=\"width:18%\">"
		      "</colgroup>\n"
		      "<tr><th>pool</th><th>resource</th><th class=\"num\">nodes</th>"
		      "<th class=\"num\" title=\"allocatable\">registered</th>"
		      "<th class=\"num\">held</th><th class=\"num\">free</th>"
		      "<th class=\"num\" title=\"free while a pod asking for it stays pending\">"
		      "stranded</th><th>held of registered</th></tr>\n");
	for (size_t i = 0; i < m->n_pools; i++) {
		const struct pool_use *u = &m->pools[i];
		strbuf_addstr(sb, "<tr class=\"pool\">");
		cell(sb, "nm", u->pool);
		cell(sb, "nm", u->resource);
		strbuf_addf(sb,
			    "<td class=\"num\">%zu</td><td class=\"num\">%lld</td>"
			    "<td class=\"num\">%lld</td><td class=\"num\">%lld</td>"
			    "<td class=\"num%s\">%lld</td><td>",
			    u->nodes, u->registered, u->held, u->free, u->stranded ? " full" : "",
			    u->stranded);
		bar(sb, u->registered ? (double)u->held / (double)u->registered : 0, "#4e79a7");
		strbuf_addstr(sb, "</td></tr>\n");
	}
	strbuf_addstr(sb, "</table></div>\n");
}

static void html_quota(struct strbuf *sb, const struct report_model *m,
		       const struct report_quota *q)
{
	char *label = gs_xasprintf("%s/%s", q->namespace, q->name);
	char *val = gs_xasprintf("%s / %s%s", q->used ? q->used : "?", q->hard,
				 !q->used	    ? " (not counted yet)"
				 : q->fraction >= 1 ? " full"
						    : "");

	strbuf_addstr(sb, "<div class=\"quota\" data-namespace=\"");
	escape_html(sb, q->namespace);
	strbuf_addstr(sb, "\"><span>");
	escape_breakable(sb, label);
	clipped(sb, "span", "muted res", q->resource);
	strbuf_addstr(sb, "</span>");
	bar(sb, q->fraction, ns_fill(m, q->namespace));
	strbuf_addf(sb, "<span class=\"%s\">", q->fraction >= 1 ? "full" : "");
	escape_html(sb, val);
	strbuf_addstr(sb, "</span></div>\n");
	free(label);
	free(val);
}

static void html_quotas(struct strbuf *sb, const struct report_model *m)
{
	size_t gpu = 0;

	for (size_t i = 0; i < m->n_quotas; i++)
		gpu += strstr(m->quotas[i].resource, "nvidia.com/") != NULL;
	strbuf_addstr(sb, "<div class=\"panel\" id=\"quotas\"><h2>GPU quotas</h2>\n");
	if (!gpu)
		strbuf_addstr(sb, "<p class=\"muted\">No ResourceQuota limits an nvidia.com/ "
				  "resource.</p>\n");
	for (size_t i = 0; i < m->n_quotas; i++)
		if (strstr(m->quotas[i].resource, "nvidia.com/"))
			html_quota(sb, m, &m->quotas[i]);
	if (gpu < m->n_quotas) {
		strbuf_addf(sb,
			    "<details><summary class=\"muted\">%zu other quota item%s</summary>\n",
			    m->n_quotas - gpu, m->n_quotas - gpu == 1 ? "" : "s");
		for (size_t i = 0; i < m->n_quotas; i++)
			if (!strstr(m->quotas[i].resource, "nvidia.com/"))
				html_quota(sb, m, &m->quotas[i]);
		strbuf_addstr(sb, "</details>\n");
	}
	strbuf_addstr(sb, "</div>\n");
}

static void html_refused(struct strbuf *sb, const struct report_model *m)
{
	strbuf_addf(sb, "<div class=\"panel\" id=\"refused\"><h2>Refused nodes: %zu</h2>\n",
		    m->n_refused);
	if (!m->n_refused) {
		strbuf_addstr(sb, "<p class=\"muted\">The stack accepts every GPU node's "
				  "device-plugin config.</p></div>\n");
		return;
	}
	if (m->n_refused > 5)
		strbuf_addstr(sb, "<details><summary>which, and why</summary>");
	strbuf_addstr(sb, "<ul class=\"refused\">\n");
	for (size_t i = 0; i < m->n_refused; i++) {
		strbuf_addstr(sb, "<li data-node=\"");
		escape_html(sb, m->refused[i].node);
		strbuf_addstr(sb, "\"><b>");
		escape_breakable(sb, m->refused[i].node);
		strbuf_addstr(sb, "</b>: ");
		escape_breakable(sb, m->refused[i].reason);
		strbuf_addstr(sb, "</li>\n");
	}
	strbuf_addstr(sb, "</ul>\n");
	if (m->n_refused > 5)
		strbuf_addstr(sb, "</details>");
	strbuf_addstr(sb, "</div>\n");
}

static void html_legend(struct strbuf *sb, const struct report_model *m)
{
	if (!m->n_namespaces)
		return;
	strbuf_addstr(sb, "<div class=\"legend\">");
	for (size_t i = 0; i < m->n_namespaces; i++) {
		strbuf_addstr(sb, "<span data-namespace=\"");
		escape_html(sb, m->namespaces[i]);
		strbuf_addstr(sb, "\">");
		key(sb, m, m->namespaces[i]);
		clipped(sb, "span", "", m->namespaces[i]);
		strbuf_addstr(sb, "</span>");
	}
	strbuf_addstr(sb, "</div>\n");
}

void report_html(const struct report_model *m, struct strbuf *out)
{
	char *sum = summary(m);

	svg_page_head(out, "gpushare: GPU fleet", html_style);
	strbuf_addstr(out, "<body>\n<main>\n<header><h1>GPU fleet</h1>"
			   "<p class=\"muted\" id=\"counts\">");
	escape_html(out, sum);
	strbuf_addstr(out, "</p>");
	html_legend(out, m);
	strbuf_addstr(out, "</header>\n<section id=\"summary\">\n");
	html_pools(out, m);
	html_quotas(out, m);
	html_refused(out, m);
	strbuf_addstr(out, "</section>\n<h2>Nodes</h2>\n");
	html_nodes(out, m);
	if (unbound(m)) {
		strbuf_addstr(out, "<section class=\"unbound\"><h2>Not on a GPU node</h2>\n"
				   "<ul class=\"podlines\">\n");
		for (size_t p = 0; p < m->n_pods; p++)
			if (m->pods[p].node_index < 0)
				html_pod_line(out, m, NULL, (long)p, false);
		strbuf_addstr(out, "</ul></section>\n");
	}
	strbuf_addstr(out, "<h2>Pods</h2>\n<table id=\"pods\"><colgroup><col style=\"width:12%\">"
			   "<col style=\"width:20%\"><col style=\"width:14%\">"
			   "<col style=\"width:10%\"><col style=\"width:16%\">"
			   "<col style=\"width:14%\"><col style=\"width:14%\"></colgroup>\n"
			   "<tr><th>namespace</th><th>pod</th>"
			   "<th>node</th><th>phase</th><th>asks for</th><th>devices</th>"
			   "<th>from</th></tr>\n");
	for (size_t p = 0; p < m->n_pods; p++) {
		const struct report_pod *rp = &m->pods[p];
		const struct report_node *n =
			rp->node_index >= 0 ? &m->nodes[rp->node_index] : NULL;
		char *held = n ? held_text(n, (long)p) : gs_xstrdup("");
		strbuf_addstr(out, "<tr class=\"pod\" data-pod=\"");
		escape_html(out, rp->namespace);
		strbuf_addch(out, '/');
		escape_html(out, rp->name);
		strbuf_addstr(out, "\"><td class=\"nm\" title=\"");
		escape_html(out, rp->namespace);
		strbuf_addstr(out, "\">");
		key(out, m, rp->namespace);
		escape_breakable(out, rp->namespace);
		strbuf_addstr(out, "</td>");
		cell(out, "nm", rp->name);
		cell(out, "nm", rp->node ? rp->node : "");
		cell(out, "", rp->phase);
		cell(out, "nm", rp->requests);
		cell(out, "", held);
		cell(out, "", rp->origin == REPORT_FROM_NONE ? "" : origin_text(rp->origin));
		strbuf_addstr(out, "</tr>\n");
		free(held);
	}
	strbuf_addstr(out, "</table>\n");
	if (m->source) {
		strbuf_addstr(out, "<p class=\"muted\">");
		escape_breakable(out, m->source);
		strbuf_addstr(out, "</p>\n");
	}
	if (m->notes.n) {
		strbuf_addstr(out, "<h2>Notes</h2>\n<ul>\n");
		for (size_t i = 0; i < m->notes.n; i++) {
			strbuf_addstr(out, "<li>");
			escape_breakable(out, m->notes.items[i]);
			strbuf_addstr(out, "</li>\n");
		}
		strbuf_addstr(out, "</ul>\n");
	}
	strbuf_addstr(out, "</main>\n</body>\n</html>\n");
	free(sum);
}
