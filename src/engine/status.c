#include "engine/status.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/escape.h"
#include "base/jsonsort.h"
#include "engine/advertise.h"
#include "model/dpconfig_set.h"
#include "dra/draslice.h"
#include "model/isolation.h"
#include "model/kobj.h"
#include "engine/ledger.h"
#include "model/nodehw.h"
#include "model/quantity.h"
#include "base/strbuf.h"
#include "base/banned.h"

static void ns_add(json_t *set, const char *holder)
{
	const char *slash = strchr(holder, '/');
	size_t len = slash ? (size_t)(slash - holder) : strlen(holder);
	size_t i;
	json_t *v;

	json_array_foreach (set, i, v)
		if (strlen(json_string_value(v)) == len &&
		    !strncmp(json_string_value(v), holder, len))
			return;
	json_array_append_new(set, json_stringn(holder, len));
}

static json_t *sharing_entry(json_t *namespaces, const char *how, const char *what)
{
	const struct isolation_method *m = isolation_method_find(how);

	jsonsort_strings(namespaces);
	return json_pack("{s:o, s:s, s:s, s:s, s:s, s:s, s:s}", "namespaces", namespaces, "method",
			 how, "what", what, "memory", m->memory, "memoryWhy", m->memory_why,
			 "fault", m->fault, "faultWhy", m->fault_why);
}

/*
 * Per GPU: which namespaces share it and how isolated they are. Several
 * namespaces on replicas of one device share it by the node's sharing
 * method; several on different MIG instances of one card are kept apart by
 * MIG.
 */
static void add_sharing(const struct ledger *l, json_t *gpu_json, int g)
{
	json_t *out = json_array(), *mig_ns = json_array();
	size_t i = 0;

	while (i < l->n_devices) {
		size_t j = i;
		json_t *ns = json_array();

		while (j < l->n_devices && !strcmp(l->devices[j].base, l->devices[i].base) &&
		       !strcmp(l->devices[j].resource, l->devices[i].resource))
			j++;
		if (l->devices[i].gpu == g) {
			for (size_t k = i; k < j; k++)
				if (l->devices[k].holder) {
					ns_add(ns, l->devices[k].holder);
					if (l->devices[k].profile)
						ns_add(mig_ns, l->devices[k].holder);
				}
		}
		if (json_array_size(ns) > 1 && l->devices[i].replica >= 0) {
			char *what = l->devices[i].profile
					     ? gs_xasprintf("replicas of MIG instance %s@%d",
							    l->devices[i].profile,
							    l->devices[i].mig_start)
					     : gs_xstrdup("replicas of the whole GPU");
			json_array_append_new(
				out, sharing_entry(json_incref(ns),
						   dp_sharing_strategy_name(l->sharing), what));
			free(what);
		}
		json_decref(ns);
		i = j;
	}
	if (json_array_size(mig_ns) > 1)
		json_array_append_new(
			out, sharing_entry(json_incref(mig_ns), "mig", "different MIG instances"));
	json_decref(mig_ns);
	json_object_set_new(gpu_json, "sharing", out);
}

/* Bound, active pods asking for a resource of the node that carry no ledger record. */
static json_t *unrecorded(const struct ledger *l, const json_t *pods)
{
	json_t *out = json_array();
	size_t i;
	json_t *pod;

	json_array_foreach ((json_t *)pods, i, pod) {
		const char *phase = kobj_text(pod, "status.phase");
		const json_t *spec = kobj_map(pod, "spec");
		const char *lists[] = {"initContainers", "containers"};
		bool asks = false;

		if (strcmp(kobj_text(pod, "spec.nodeName"), l->node) ||
		    !strcmp(phase, "Succeeded") || !strcmp(phase, "Failed") ||
		    kobj_annotation(pod, LEDGER_ANN_DEVICES))
			continue;
		for (size_t k = 0; k < 2; k++) {
			size_t ci;
			json_t *c;

			json_array_foreach (json_object_get(spec, lists[k]), ci, c) {
				const char *r;
				json_t *v;

				json_object_foreach ((json_t *)kobj_map(c, "resources.limits"), r,
						     v)
					asks |= ledger_count(l, r, NULL) > 0;
			}
		}
		if (asks) {
			char *key = ledger_pod_key(pod);
			json_array_append_new(out, json_string(key));
			free(key);
		}
	}
	return out;
}

static json_t *node_status(const struct catalog *cat, const json_t *node,
			   const struct dpconfig_set *set, const json_t *pods,
			   const struct status_opts *o, struct gs_warnings *warnings)
{
	struct advertise_options ao = {.default_config = o ? o->default_config : NULL,
				       .fallbacks = o ? o->fallbacks : NULL};
	struct advertisement *adv = NULL;
	struct nodehw *hw = NULL;
	struct ledger *l = NULL;
	const struct dpconfig *cfg = NULL;
	struct gs_warnings w;
	struct gs_error err;
	json_t *out = NULL, *gpu;
	size_t gi;

	gs_warnings_init(&w);
	if (advertise_node(cat, node, set, &ao, &adv, &err) < 0 ||
	    nodehw_from_node(cat, node, NULL, &hw, &w, &err) < 0)
		goto fail;
	if (set && adv->config_name && *adv->config_name) {
		long k = dpconfig_set_find(set, adv->config_name);
		cfg = k >= 0 ? dpconfig_set_get(set, (size_t)k, NULL) : NULL;
	}
	if (ledger_new(cat, hw, adv, cfg, &l, &err) < 0)
		goto fail;
	ledger_rebuild(l, pods, warnings);
	out = ledger_to_json(l);
	json_array_foreach (json_object_get(out, "gpus"), gi, gpu)
		add_sharing(l, gpu, (int)gi);
	json_object_set_new(out, "failure", adv->failure ? json_string(adv->failure) : json_null());
	json_object_set_new(out, "unrecorded", unrecorded(l, pods));
	goto done;
fail:
	gs_warnings_add(warnings, "node %s: %s", kobj_text(node, "metadata.name"), err.msg);
	out = json_pack("{s:s, s:s}", "node", kobj_text(node, "metadata.name"), "error", err.msg);
done:
	ledger_free(l);
	nodehw_free(hw);
	advertisement_free(adv);
	gs_warnings_release(&w);
	return out;
}

int status_build(const struct catalog *cat, const json_t *configmap, const json_t *nodes,
		 const json_t *pods, const struct draclaims_objects *dra,
		 const struct status_opts *o, json_t **out, struct gs_warnings *warnings,
		 struct gs_error *err)
{
	struct dpconfig_set *set = NULL;
	json_t *list = json_array(), *on = json_object(), *none = json_array();
	size_t i;
	json_t *node, *pod;

	*out = NULL;
	if (configmap && dpconfig_set_from_configmap(NULL, configmap, &set, err) < 0) {
		json_decref(list);
		json_decref(on);
		json_decref(none);
		return -1;
	}
	/* The pods by the node they are bound to, read once: a node's ledger
	 * looks at its own (in list order), not at every pod. */
	json_array_foreach ((json_t *)pods, i, pod) {
		const char *nn = kobj_text(pod, "spec.nodeName");
		json_t *arr = json_object_get(on, nn);
		if (!arr) {
			arr = json_array();
			json_object_set_new(on, nn, arr);
		}
		json_array_append(arr, pod);
	}
	json_array_foreach ((json_t *)nodes, i, node) {
		if (!kobj_annotation(node, NODEHW_ANN_PRODUCT))
			continue;
		if (o && o->only_node && strcmp(kobj_text(node, "metadata.name"), o->only_node))
			continue;
		if (draslice_node_wants_dra(node)) {
			if (dra) {
				struct draclaims_objects d = *dra;
				d.pods = pods;
				json_array_append_new(list, draclaims_node_status(node, &d));
			}
			continue;
		}
		const json_t *mine = json_object_get(on, kobj_text(node, "metadata.name"));
		json_array_append_new(list,
				      node_status(cat, node, set, mine ? mine : none, o, warnings));
	}
	json_decref(on);
	json_decref(none);
	dpconfig_set_free(set);
	*out = json_pack("{s:o}", "nodes", list);
	return 0;
}

/* ---- the table ---- */

#define NCOL 7
static const char *const heads[NCOL] = {"NODE",	    "GPU",    "PRODUCT", "SLICE",
					"RESOURCE", "HOLDER", "DEVICE"};

struct row {
	char *c[NCOL];
};

struct rows {
	struct row *v;
	size_t n, cap;
};

/* A cell as the table shows it: one line (escape_line), so a name cannot break a row. */
static char *cell(char *raw)
{
	char *c = escape_line_dup(raw);

	free(raw);
	return c;
}

static void row_add(struct rows *r, char *c0, char *c1, char *c2, char *c3, char *c4, char *c5,
		    char *c6)
{
	if (r->n == r->cap) {
		r->cap = r->cap ? 2 * r->cap : 64;
		r->v = gs_xrealloc(r->v, r->cap * sizeof(*r->v));
	}
	r->v[r->n++] = (struct row){
		{cell(c0), cell(c1), cell(c2), cell(c3), cell(c4), cell(c5), cell(c6)}};
}

/* ---- DRA nodes: one row per published device ---- */

#define DRA_NCOL 8
static const char *const dra_heads[DRA_NCOL] = {"NODE",	 "DEVICE",  "PRODUCT", "PROFILE",
						"CLAIM", "REQUEST", "PODS",    "PREPARE"};

static const json_t *claim_entry(const json_t *node, const char *key)
{
	size_t i;
	json_t *c;

	json_array_foreach (json_object_get(node, "claims"), i, c)
		if (!strcmp(kobj_text(c, "claim"), key))
			return c;
	return NULL;
}

static char *joined(const json_t *arr, const char *sep)
{
	struct strbuf sb = STRBUF_INIT;
	size_t i;
	json_t *v;

	json_array_foreach (arr, i, v)
		strbuf_addsep(&sb, sep, json_string_value(v));
	return strbuf_detach(&sb, NULL);
}

static void dra_notes(struct strbuf *notes, const json_t *node)
{
	const char *name = kobj_text(node, "node");
	size_t i;
	json_t *v;

	escape_addf(notes, "%s: DRA (gpushare.io/path=dra), driver %s", name,
		    kobj_text(node, "driver"));
	if (json_is_integer(json_object_get(node, "generation")))
		escape_addf(notes, ", pool %s generation %lld", kobj_text(node, "pool"),
			    (long long)json_integer_value(json_object_get(node, "generation")));
	escape_addf(notes, "; %lld devices, %lld free",
		    (long long)json_integer_value(json_object_get(node, "total")),
		    (long long)json_array_size(json_object_get(node, "free")));
	if (json_array_size(json_object_get(node, "shared")))
		escape_addf(notes, ", %lld shared",
			    (long long)json_array_size(json_object_get(node, "shared")));
	if (kobj_string(node, "gates"))
		escape_addf(notes, "; driver gates %s", kobj_text(node, "gates"));
	strbuf_addch(notes, '\n');
	if (json_array_size(json_object_get(node, "blocked")))
		escape_addf(notes,
			    "%s: %lld devices are blocked: they share counters with allocated "
			    "devices (DRAPartitionableDevices) and what they need is used up\n",
			    name, (long long)json_array_size(json_object_get(node, "blocked")));
	if (kobj_string(node, "failure"))
		escape_addf(notes, "%s: %s\n", name, kobj_text(node, "failure"));
	json_array_foreach (json_object_get(node, "claims"), i, v) {
		char *devs = NULL;
		struct strbuf d = STRBUF_INIT;
		size_t k;
		json_t *r;

		json_array_foreach (json_object_get(v, "devices"), k, r)
			strbuf_addsep(&d, ", ", kobj_text(r, "device"));
		devs = strbuf_detach(&d, NULL);
		if (!strcmp(kobj_text(v, "prepare"), "failed"))
			escape_addf(notes, "%s: claim %s (%s) failed prepare: %s\n", name,
				    kobj_text(v, "claim"), devs, kobj_text(v, "message"));
		else if (kobj_string(v, "lastRefusal"))
			escape_addf(
				notes,
				"%s: claim %s (%s) prepared after %lld refusal%s, the last: %s\n",
				name, kobj_text(v, "claim"), devs,
				(long long)json_integer_value(json_object_get(v, "refusals")),
				json_integer_value(json_object_get(v, "refusals")) == 1 ? "" : "s",
				kobj_text(v, "lastRefusal"));
		free(devs);
	}
	json_array_foreach (json_object_get(node, "sharing"), i, v) {
		char *pods = joined(json_object_get(v, "pods"), ", ");
		char *devs = joined(json_object_get(v, "devices"), ", ");
		char *ns = joined(json_object_get(v, "namespaces"), ", ");
		if (kobj_string(v, "claim"))
			escape_addf(notes,
				    "%s %s: pods %s share claim %s (%s, %s): memory isolation %s: "
				    "%s; fault isolation %s: %s\n",
				    name, devs, pods, kobj_text(v, "claim"), kobj_text(v, "method"),
				    kobj_text(v, "what"), kobj_text(v, "memory"),
				    kobj_text(v, "memoryWhy"), kobj_text(v, "fault"),
				    kobj_text(v, "faultWhy"));
		else
			escape_addf(notes,
				    "%s GPU %s: namespaces %s share it (%s, %s: %s): memory "
				    "isolation %s: %s; fault isolation %s: %s\n",
				    name, kobj_text(v, "parentUUID"), ns, kobj_text(v, "method"),
				    kobj_text(v, "what"), devs, kobj_text(v, "memory"),
				    kobj_text(v, "memoryWhy"), kobj_text(v, "fault"),
				    kobj_text(v, "faultWhy"));
		free(pods);
		free(devs);
		free(ns);
	}
	json_array_foreach (json_object_get(node, "devices"), i, v) {
		if (!json_object_get(v, "shares"))
			continue;
		escape_addf(notes, "%s %s: shared by %zu claim%s (allowMultipleAllocations)", name,
			    kobj_text(v, "name"), json_array_size(json_object_get(v, "claims")),
			    json_array_size(json_object_get(v, "claims")) == 1 ? "" : "s");
		draclaims_add_left(notes, v, ": left ", "");
		strbuf_addch(notes, '\n');
	}
	json_array_foreach (json_object_get(node, "orphans"), i, v)
		escape_addf(notes,
			    "%s: claim %s is allocated %s, which the slice does not publish\n",
			    name, kobj_text(v, "claim"), kobj_text(v, "device"));
}

static void dra_row(char *row[DRA_NCOL], char ***cells, size_t *n, size_t *cap)
{
	if (*n + DRA_NCOL > *cap) {
		*cap = *cap ? 2 * *cap : 16 * DRA_NCOL;
		*cells = gs_xrealloc(*cells, *cap * sizeof(**cells));
	}
	for (size_t col = 0; col < DRA_NCOL; col++)
		(*cells)[(*n)++] = cell(row[col]);
}

/* "gpu (shares 60)": the request and what its share consumed that is not zero. */
static char *share_request(const json_t *share)
{
	struct strbuf sb = STRBUF_INIT, what = STRBUF_INIT;
	const char *k;
	json_t *v;

	strbuf_addstr(&sb, kobj_text(share, "request"));
	json_object_foreach ((json_t *)json_object_get(share, "consumedCapacity"), k, v) {
		struct quantity q;
		struct gs_error e;
		if (quantity_from_json(&q, v, &e) == 0 && quantity_is_zero(&q))
			continue;
		strbuf_addf(&what, "%s%s %s", what.len ? ", " : "", k,
			    json_is_string(v) ? json_string_value(v) : "?");
	}
	if (what.len)
		strbuf_addf(&sb, " (%s)", what.buf);
	strbuf_release(&what);
	return strbuf_detach(&sb, NULL);
}

/* A shared device (allowMultipleAllocations): a row per share, its claim's pods and verdict. */
static void dra_share_rows(const json_t *node, const json_t *d, char ***cells, size_t *n,
			   size_t *cap)
{
	size_t i;
	json_t *sh;

	json_array_foreach (json_object_get(d, "shares"), i, sh) {
		const json_t *c = claim_entry(node, kobj_text(sh, "claim"));
		char *row[DRA_NCOL] = {
			gs_xstrdup(kobj_text(node, "node")),
			gs_xstrdup(kobj_text(d, "name")),
			gs_xstrdup(kobj_text(d, "product")),
			gs_xstrdup(kobj_string(d, "profile") ? kobj_text(d, "profile") : "-"),
			gs_xstrdup(kobj_text(sh, "claim")),
			share_request(sh),
			json_array_size(json_object_get(sh, "pods"))
				? joined(json_object_get(sh, "pods"), ",")
				: gs_xstrdup("-"),
			gs_xstrdup(c ? kobj_text(c, "prepare") : "-"),
		};
		dra_row(row, cells, n, cap);
	}
}

static void dra_table(const json_t *status, struct strbuf *sb, struct strbuf *notes)
{
	char **cells = NULL;
	size_t n = 0, cap = 0, width[DRA_NCOL] = {0}, i, k;
	json_t *node, *d;

	json_array_foreach (json_object_get(status, "nodes"), i, node) {
		if (strcmp(kobj_text(node, "path"), DRASLICE_PATH_DRA))
			continue;
		dra_notes(notes, node);
		json_array_foreach (json_object_get(node, "devices"), k, d) {
			if (json_object_get(d, "shares")) {
				dra_share_rows(node, d, &cells, &n, &cap);
				continue;
			}
			const json_t *c = kobj_string(d, "claim")
						  ? claim_entry(node, kobj_text(d, "claim"))
						  : NULL;
			char *row[DRA_NCOL] = {
				gs_xstrdup(kobj_text(node, "node")),
				gs_xstrdup(kobj_text(d, "name")),
				gs_xstrdup(kobj_text(d, "product")),
				gs_xstrdup(kobj_string(d, "profile") ? kobj_text(d, "profile")
								     : "-"),
				gs_xstrdup(c ? kobj_text(c, "claim") : "-"),
				gs_xstrdup(kobj_string(d, "request") ? kobj_text(d, "request")
								     : "-"),
				c && json_array_size(json_object_get(c, "pods"))
					? joined(json_object_get(c, "pods"), ",")
					: gs_xstrdup("-"),
				gs_xstrdup(c				 ? kobj_text(c, "prepare")
					   : kobj_string(d, "blockedBy") ? "blocked"
									 : "free"),
			};
			dra_row(row, &cells, &n, &cap);
		}
	}
	if (!n)
		return;
	for (size_t col = 0; col < DRA_NCOL; col++)
		width[col] = strlen(dra_heads[col]);
	for (i = 0; i < n; i++)
		if (strlen(cells[i]) > width[i % DRA_NCOL])
			width[i % DRA_NCOL] = strlen(cells[i]);
	if (sb->len)
		strbuf_addch(sb, '\n');
	for (size_t col = 0; col < DRA_NCOL; col++) {
		if (col == DRA_NCOL - 1)
			escape_addf(sb, "%s\n", dra_heads[col]);
		else
			escape_addf(sb, "%-*s  ", (int)width[col], dra_heads[col]);
	}
	for (i = 0; i < n; i++) {
		if (i % DRA_NCOL == DRA_NCOL - 1)
			escape_addf(sb, "%s\n", cells[i]);
		else
			escape_addf(sb, "%-*s  ", (int)width[i % DRA_NCOL], cells[i]);
		free(cells[i]);
	}
	free(cells);
}

char *status_table(const json_t *status)
{
	struct rows rows = {0};
	struct strbuf sb, notes;
	size_t width[NCOL], i;
	json_t *node;

	strbuf_init(&sb, 4096);
	strbuf_init(&notes, 1024);
	row_add(&rows, gs_xstrdup(heads[0]), gs_xstrdup(heads[1]), gs_xstrdup(heads[2]),
		gs_xstrdup(heads[3]), gs_xstrdup(heads[4]), gs_xstrdup(heads[5]),
		gs_xstrdup(heads[6]));
	json_array_foreach (json_object_get(status, "nodes"), i, node) {
		const char *name = kobj_text(node, "node");
		size_t gi, k;
		json_t *gpu, *v;

		if (!strcmp(kobj_text(node, "path"), DRASLICE_PATH_DRA))
			continue;
		if (kobj_string(node, "error")) {
			escape_addf(&notes, "%s: cannot be read: %s\n", name,
				    kobj_text(node, "error"));
			continue;
		}
		escape_addf(&notes, "%s: config %s, %s%s", name,
			    *kobj_text(node, "config") ? kobj_text(node, "config") : "(empty)",
			    strcmp(kobj_text(node, "sharing"), "none") ? kobj_text(node, "sharing")
								       : "not shared",
			    json_is_true(json_object_get(node, "failRequestsGreaterThanOne"))
				    ? " (more than one replica per container is refused)"
				    : "");
		{
			const char *r;
			json_t *c;
			json_object_foreach ((json_t *)kobj_map(node, "resources"), r, c)
				escape_addf(
					&notes, "; %s %lld free of %lld", r,
					(long long)json_integer_value(json_object_get(c, "free")),
					(long long)json_integer_value(
						json_object_get(c, "registered")));
		}
		strbuf_addch(&notes, '\n');
		if (kobj_string(node, "failure"))
			escape_addf(&notes, "%s: registers no device: %s\n", name,
				    kobj_text(node, "failure"));
		json_array_foreach (json_object_get(node, "gpus"), gi, gpu) {
			size_t di, si;
			json_t *d, *sh;
			bool any = false;

			json_array_foreach (json_object_get(gpu, "devices"), di, d) {
				const json_t *mig = kobj_map(d, "mig");
				const json_t *rep = json_object_get(d, "replica");
				char *slice;

				if (mig && rep)
					slice = gs_xasprintf("%s@%lld::%lld",
							     kobj_text(mig, "profile"),
							     (long long)json_integer_value(
								     json_object_get(mig, "start")),
							     (long long)json_integer_value(rep));
				else if (mig)
					slice = gs_xasprintf(
						"%s@%lld", kobj_text(mig, "profile"),
						(long long)json_integer_value(
							json_object_get(mig, "start")));
				else if (rep)
					slice = gs_xasprintf("::%lld",
							     (long long)json_integer_value(rep));
				else
					slice = gs_xstrdup("whole");
				row_add(&rows, gs_xstrdup(name),
					gs_xasprintf("%lld",
						     (long long)json_integer_value(
							     json_object_get(gpu, "index"))),
					gs_xstrdup(kobj_text(gpu, "product")), slice,
					gs_xstrdup(kobj_text(d, "resource")),
					gs_xstrdup(kobj_string(d, "holder") ? kobj_text(d, "holder")
									    : "-"),
					gs_xstrdup(kobj_text(d, "id")));
				any = true;
			}
			if (!any)
				row_add(&rows, gs_xstrdup(name),
					gs_xasprintf("%lld",
						     (long long)json_integer_value(
							     json_object_get(gpu, "index"))),
					gs_xstrdup(kobj_text(gpu, "product")), gs_xstrdup("-"),
					gs_xstrdup("-"), gs_xstrdup("-"),
					gs_xstrdup(kobj_text(gpu, "uuid")));
			json_array_foreach (json_object_get(gpu, "sharing"), si, sh) {
				struct strbuf ns;
				strbuf_init(&ns, 64);
				json_array_foreach (json_object_get(sh, "namespaces"), k, v)
					strbuf_addsep(&ns, ", ", json_string_value(v));
				escape_addf(&notes,
					    "%s GPU %lld: namespaces %s share it (%s, %s): memory "
					    "isolation %s: %s; fault isolation %s: %s\n",
					    name,
					    (long long)json_integer_value(
						    json_object_get(gpu, "index")),
					    ns.buf, kobj_text(sh, "method"), kobj_text(sh, "what"),
					    kobj_text(sh, "memory"), kobj_text(sh, "memoryWhy"),
					    kobj_text(sh, "fault"), kobj_text(sh, "faultWhy"));
				strbuf_release(&ns);
			}
		}
		json_array_foreach (json_object_get(node, "orphans"), k, v)
			escape_addf(&notes,
				    "%s: %s holds %s (%s), which the node no longer registers\n",
				    name, kobj_text(v, "holder"), kobj_text(v, "id"),
				    kobj_text(v, "resource"));
		json_array_foreach (json_object_get(node, "unrecorded"), k, v)
			escape_addf(&notes,
				    "%s: %s asks for a device but carries no %s record: what it "
				    "holds is not shown\n",
				    name, json_string_value(v), LEDGER_ANN_DEVICES);
	}
	for (size_t c = 0; c < NCOL; c++) {
		width[c] = 0;
		for (size_t r = 0; r < rows.n; r++)
			if (strlen(rows.v[r].c[c]) > width[c])
				width[c] = strlen(rows.v[r].c[c]);
	}
	if (rows.n > 1)
		for (size_t r = 0; r < rows.n; r++) {
			for (size_t c = 0; c < NCOL; c++) {
				if (c == NCOL - 1)
					escape_addf(&sb, "%s\n", rows.v[r].c[c]);
				else
					escape_addf(&sb, "%-*s  ", (int)width[c], rows.v[r].c[c]);
			}
		}
	for (size_t r = 0; r < rows.n; r++)
		for (size_t c = 0; c < NCOL; c++)
			free(rows.v[r].c[c]);
	free(rows.v);
	dra_table(status, &sb, &notes);
	if (!json_array_size(json_object_get(status, "nodes")))
		strbuf_addstr(&sb, "no managed node (none declares gpushare.io/gpu-product)\n");
	if (notes.len) {
		if (sb.len)
			strbuf_addch(&sb, '\n');
		strbuf_add(&sb, notes.buf, notes.len);
	}
	strbuf_release(&notes);
	return strbuf_detach(&sb, NULL);
}
