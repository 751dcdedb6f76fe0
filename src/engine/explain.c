#include <stdlib.h>
#include <string.h>

#include "engine/explain.h"
#include "dra/draalloc.h"
#include "dra/draclaims.h"
#include "dra/draextended.h"
#include "dra/draslice.h"
#include "base/gonum.h"
#include "model/kobj.h"
#include "model/quantity.h"
#include "base/strbuf.h"
#include "model/names.h"
#include "base/banned.h"

/* ---- small helpers ------------------------------------------------------ */

static char *qstr(const struct quantity *q)
{
	char buf[QUANTITY_STR_MAX];
	return gs_xstrdup(quantity_string(q, buf, sizeof(buf)));
}

static int qparse(struct quantity *q, const json_t *v, const char *what, struct gs_error *err)
{
	if (quantity_from_json(q, v, err) < 0) {
		gs_error_prefix(err, "%s: ", what);
		return -1;
	}
	return 0;
}

/* a - b; the result's format is a's. */
static int qsub(struct quantity *out, const struct quantity *a, const struct quantity *b,
		struct gs_error *err)
{
	struct quantity nb = *b;

	if (!quantity_is_zero(&nb))
		nb.negative = !nb.negative;
	nb.text[0] = '\0';
	return quantity_add(out, a, &nb, err);
}

/* obj[key] += q (obj maps names to quantity strings). */
static int add_into(json_t *obj, const char *key, const struct quantity *q, struct gs_error *err)
{
	struct quantity cur;
	const json_t *v = json_object_get(obj, key);

	if (v) {
		if (qparse(&cur, v, key, err) < 0 || quantity_add(&cur, &cur, q, err) < 0)
			return -1;
	} else {
		cur = *q;
	}
	char *s = qstr(&cur);
	json_object_set_new(obj, key, json_string(s));
	free(s);
	return 0;
}

/* obj[key] = max(obj[key], q). */
static int max_into(json_t *obj, const char *key, const struct quantity *q, struct gs_error *err)
{
	struct quantity cur;
	const json_t *v = json_object_get(obj, key);

	if (v) {
		if (qparse(&cur, v, key, err) < 0)
			return -1;
		if (quantity_cmp(&cur, q) >= 0)
			return 0;
	}
	char *s = qstr(q);
	json_object_set_new(obj, key, json_string(s));
	free(s);
	return 0;
}

/* ---- what a pod asks for -------------------------------------------------- */

/* A container's requests; a limit without a request counts as the request (API defaulting). */
static int container_requests(const json_t *c, json_t *into, int mode, struct gs_error *err)
{
	const json_t *res = json_object_get(c, "resources");
	const json_t *req = json_object_get(res, "requests");
	const json_t *lim = json_object_get(res, "limits");
	const char *k;
	json_t *v;
	struct quantity q;

	json_object_foreach ((json_t *)req, k, v) {
		if (qparse(&q, v, k, err) < 0)
			return -1;
		if ((mode ? max_into(into, k, &q, err) : add_into(into, k, &q, err)) < 0)
			return -1;
	}
	json_object_foreach ((json_t *)lim, k, v) {
		if (json_object_get(req, k))
			continue;
		if (qparse(&q, v, k, err) < 0)
			return -1;
		if ((mode ? max_into(into, k, &q, err) : add_into(into, k, &q, err)) < 0)
			return -1;
	}
	return 0;
}

static bool is_sidecar(const json_t *c)
{
	return !strcmp(kobj_text(c, "restartPolicy"), "Always");
}

/*
 * The scheduler's effective request (computePodResourceRequest): the sum of
 * the containers and sidecars, or an init container's own (plus the
 * sidecars started before it) when larger, plus spec.overhead.
 */
int explain_pod_requests(const json_t *pod, json_t **out, struct gs_error *err)
{
	const json_t *spec = json_object_get(pod, "spec");
	json_t *sum = json_object(), *sidecars = json_object(), *tmp;
	const json_t *c;
	const char *k;
	json_t *v;
	size_t i;
	struct quantity q;

	json_array_foreach (json_object_get(spec, "containers"), i, c)
		if (container_requests(c, sum, 0, err) < 0)
			goto fail;
	json_array_foreach (json_object_get(spec, "initContainers"), i, c) {
		if (is_sidecar(c)) {
			if (container_requests(c, sidecars, 0, err) < 0 ||
			    container_requests(c, sum, 0, err) < 0)
				goto fail;
			continue;
		}
		tmp = json_deep_copy(sidecars);
		if (container_requests(c, tmp, 0, err) < 0) {
			json_decref(tmp);
			goto fail;
		}
		json_object_foreach (tmp, k, v) {
			if (qparse(&q, v, k, err) < 0 || max_into(sum, k, &q, err) < 0) {
				json_decref(tmp);
				goto fail;
			}
		}
		json_decref(tmp);
	}
	json_object_foreach (json_object_get(spec, "overhead"), k, v)
		if (qparse(&q, v, k, err) < 0 || add_into(sum, k, &q, err) < 0)
			goto fail;
	json_decref(sidecars);
	*out = sum;
	return 0;
fail:
	json_decref(sum);
	json_decref(sidecars);
	return -1;
}

static bool pod_terminal(const json_t *pod)
{
	const char *phase = kobj_text(pod, "status.phase");
	return !strcmp(phase, "Succeeded") || !strcmp(phase, "Failed");
}

/* ---- node filters --------------------------------------------------------- */

bool explain_tolerates(const json_t *tols, const json_t *taint)
{
	const json_t *t;
	size_t i;

	json_array_foreach (tols, i, t) {
		const char *eff = kobj_text(t, "effect"), *key = kobj_text(t, "key");
		const char *op = kobj_text(t, "operator");

		if (*eff && strcmp(eff, kobj_text(taint, "effect")))
			continue;
		if (*key && strcmp(key, kobj_text(taint, "key")))
			continue;
		if (!strcmp(op, "Exists"))
			return true;
		if ((!*op || !strcmp(op, "Equal")) && *key &&
		    !strcmp(kobj_text(t, "value"), kobj_text(taint, "value")))
			return true;
	}
	return false;
}

static bool value_in(const json_t *values, const char *v)
{
	const json_t *x;
	size_t i;

	json_array_foreach (values, i, x)
		if (json_is_string(x) && !strcmp(json_string_value(x), v))
			return true;
	return false;
}

static bool int_of(const char *s, long long *out)
{
	char *end;

	if (!*s)
		return false;
	*out = strtoll(s, &end, 10);
	return !*end;
}

/* One matchExpressions/matchFields requirement against a value (NULL = absent). */
static bool requirement_holds(const json_t *r, const char *have)
{
	const char *op = kobj_text(r, "operator");
	const json_t *values = json_object_get(r, "values");
	long long a, b;

	if (!strcmp(op, "In"))
		return have && value_in(values, have);
	if (!strcmp(op, "NotIn"))
		return !have || !value_in(values, have);
	if (!strcmp(op, "Exists"))
		return have != NULL;
	if (!strcmp(op, "DoesNotExist"))
		return have == NULL;
	if (!strcmp(op, "Gt") || !strcmp(op, "Lt")) {
		const json_t *v0 = json_array_get(values, 0);
		if (!have || json_array_size(values) != 1 || !int_of(have, &a) ||
		    !int_of(json_is_string(v0) ? json_string_value(v0) : "", &b))
			return false;
		return !strcmp(op, "Gt") ? a > b : a < b;
	}
	return false;
}

/* "zone In [a, b]: the node has zone=c" */
static char *requirement_text(const json_t *r, const char *key, const char *have)
{
	struct strbuf sb = STRBUF_INIT;
	const json_t *values = json_object_get(r, "values"), *x;
	size_t i;

	strbuf_addf(&sb, "%s %s", key, kobj_text(r, "operator"));
	if (json_array_size(values)) {
		strbuf_addf(&sb, " [");
		json_array_foreach (values, i, x)
			strbuf_addf(&sb, "%s%s", i ? ", " : "",
				    json_is_string(x) ? json_string_value(x) : "?");
		strbuf_addf(&sb, "]");
	}
	if (have)
		strbuf_addf(&sb, ": the node has %s=%s", key, have);
	else
		strbuf_addf(&sb, ": the node has no such label");
	return strbuf_detach(&sb, NULL);
}

/* NULL when the term selects the node, else the first requirement it fails. */
char *explain_term_mismatch(const json_t *term, const json_t *node)
{
	const json_t *exprs = json_object_get(term, "matchExpressions");
	const json_t *fields = json_object_get(term, "matchFields");
	const json_t *r;
	size_t i;

	/* An empty term selects nothing (NodeSelectorTerm's contract). */
	if (!json_array_size(exprs) && !json_array_size(fields))
		return gs_xstrdup("an empty term selects no node");
	json_array_foreach (exprs, i, r) {
		const char *key = kobj_text(r, "key"), *have = kobj_label(node, key);
		if (!requirement_holds(r, have))
			return requirement_text(r, key, have);
	}
	json_array_foreach (fields, i, r) {
		const char *key = kobj_text(r, "key");
		const char *have =
			!strcmp(key, "metadata.name") ? kobj_text(node, "metadata.name") : NULL;
		if (!requirement_holds(r, have))
			return requirement_text(r, key, have);
	}
	return NULL;
}

/* NULL when the node passes nodeSelector and required node affinity, else why not. */
char *explain_selector_mismatch(const json_t *spec, const json_t *node)
{
	const char *k;
	json_t *v;

	json_object_foreach (json_object_get(spec, "nodeSelector"), k, v) {
		const char *want = json_is_string(v) ? json_string_value(v) : "";
		const char *have = kobj_label(node, k);
		if (!have)
			return gs_xasprintf("nodeSelector %s=%s: the node has no such label", k,
					    want);
		if (strcmp(have, want))
			return gs_xasprintf("nodeSelector %s=%s: the node has %s=%s", k, want, k,
					    have);
	}
	const json_t *req =
		json_object_get(json_object_get(kobj_get(spec, "affinity.nodeAffinity"),
						"requiredDuringSchedulingIgnoredDuringExecution"),
				"nodeSelectorTerms");
	if (req) {
		struct strbuf sb = STRBUF_INIT;
		const json_t *t;
		size_t i;
		json_array_foreach (req, i, t) {
			char *why = explain_term_mismatch(t, node);
			if (!why) {
				strbuf_release(&sb);
				return NULL;
			}
			if (json_array_size(req) == 1)
				strbuf_addf(&sb, "node affinity %s", why);
			else
				strbuf_addf(&sb, "%sterm %zu: %s",
					    sb.len ? "; "
						   : "no term of the required node affinity "
						     "matches: ",
					    i + 1, why);
			free(why);
		}
		if (!sb.len)
			strbuf_addf(&sb, "the required node affinity has no term");
		return strbuf_detach(&sb, NULL);
	}
	return NULL;
}

/* ---- GPU hints ------------------------------------------------------------ */

static int64_t alloc_int(const json_t *node, const char *res)
{
	const json_t *v = json_object_get(kobj_get(node, "status.allocatable"), res);
	struct quantity q;
	struct gs_error e;
	int64_t n = 0;

	if (!v || quantity_from_json(&q, v, &e) < 0 || quantity_value(&q, &n) < 0)
		return 0;
	return n;
}

static char *advertised(const json_t *node, const char *prefix)
{
	const json_t *alloc = kobj_get(node, "status.allocatable");
	size_t len = strlen(prefix);
	struct strbuf sb = STRBUF_INIT;
	const char *k;
	json_t *v;

	json_object_foreach ((json_t *)alloc, k, v) {
		char num[GONUM_BUFSZ];
		const char *text = json_string_value(v);
		if (strncmp(k, prefix, len) || alloc_int(node, k) <= 0)
			continue;
		if (!text && gonum_json_number(v, num, sizeof(num)) == 0)
			text = num;
		strbuf_addf(&sb, "%s%s=%s", sb.len ? " " : "", k, text ? text : "");
	}
	return strbuf_detach(&sb, NULL);
}

#define NODE_MAX_MODELS 16

/*
 * The models on a node, up to `max`: every one gpushare's annotation
 * declares ("A,B"), and the one its GFD product label names (suffixes cut;
 * a real-stack node has only that, and on a node of several models GFD
 * labels only one of them). Returns how many.
 */
static size_t node_models(const struct catalog *cat, const json_t *node,
			  const struct catalog_gpu **out, size_t max)
{
	const char *p = kobj_label(node, "nvidia.com/gpu.product");
	size_t n = 0;
	char *buf;

	if (p) {
		buf = gs_xstrdup(p);
		char *mig = strstr(buf, "-MIG-");
		size_t len = strlen(buf);
		if (mig)
			*mig = '\0';
		else if (len > 7 && !strcmp(buf + len - 7, "-SHARED"))
			buf[len - 7] = '\0';
		const struct catalog_gpu *g = catalog_find_gpu(cat, buf);
		if (g && n < max)
			out[n++] = g;
		free(buf);
	}
	p = kobj_annotation(node, NODEHW_ANN_PRODUCT);
	while (p && *p && n < max) {
		size_t len = strcspn(p, ",");
		const char *b = p, *e = p + len;
		while (b < e && (*b == ' ' || *b == '\t'))
			b++;
		while (e > b && (e[-1] == ' ' || e[-1] == '\t'))
			e--;
		buf = gs_xstrndup(b, (size_t)(e - b));
		const struct catalog_gpu *g = catalog_find_gpu(cat, buf);
		free(buf);
		bool seen = false;
		for (size_t i = 0; i < n; i++)
			seen |= out[i] == g;
		if (g && !seen)
			out[n++] = g;
		p += len + (p[len] == ',');
	}
	return n;
}

static bool gpu_offers(const struct catalog_gpu *g, const char *profile_res)
{
	char buf[64];

	if (!g || !g->mig)
		return false;
	for (size_t i = 0; i < g->mig->n_profiles; i++) {
		catalog_profile_resource(g->mig->profiles[i].name, buf, sizeof(buf));
		if (!strcmp(buf, profile_res))
			return true;
	}
	return false;
}

/*
 * The GPU models of the nodes, each once, in the order of the first node
 * with it: what the per-request hints look at instead of every node.
 */
struct fleet_models {
	const struct catalog_gpu **g;
	size_t n;
};

static void fleet_models_init(struct fleet_models *m, const struct catalog *cat,
			      const json_t *nodes)
{
	const json_t *node;
	size_t i;

	memset(m, 0, sizeof(*m));
	if (!cat)
		return;
	json_array_foreach (json_object_get(nodes, "items"), i, node) {
		const struct catalog_gpu *on[NODE_MAX_MODELS];
		size_t n_on = node_models(cat, node, on, NODE_MAX_MODELS);
		for (size_t j = 0; j < n_on; j++) {
			size_t k;
			for (k = 0; k < m->n && m->g[k] != on[j]; k++)
				;
			if (k < m->n)
				continue;
			m->g = gs_xrealloc(m->g, (m->n + 1) * sizeof(*m->g));
			m->g[m->n++] = on[j];
		}
	}
}

/* nvidia.com/mig-<p>: no node's GPU model has profile p. The hint, or NULL. */
static const char *hint_mig_profile(struct explain_pod *e, const struct explain_pod_input *in,
				    const struct fleet_models *models, const char *res)
{
	struct strbuf names = STRBUF_INIT, offer = STRBUF_INIT;
	size_t n_offer = 0;
	const char *hint = NULL;
	char *prof = gs_xstrdup(res + strlen("nvidia.com/mig-"));

	size_t pl = strlen(prof);
	if (pl > 7 && !strcmp(prof + pl - 7, ".shared"))
		prof[pl - 7] = '\0';
	for (size_t i = 0; i < models->n; i++) {
		const struct catalog_gpu *g = models->g[i];
		if (gpu_offers(g, prof))
			goto out;
		if (!strstr(names.buf, g->name))
			strbuf_addsep(&names, ", ", g->name);
	}
	for (size_t g = 0; g < catalog_gpu_count(in->cat); g++) {
		const struct catalog_gpu *m = catalog_gpu_at(in->cat, g);
		if (!gpu_offers(m, prof) || strstr(offer.buf, m->name))
			continue;
		if (n_offer++ < 4)
			strbuf_addsep(&offer, ", ", m->name);
	}
	gs_warnings_add(&e->hints, "%s: no node's GPU offers MIG profile %s (nodes have: %s); %s%s",
			res, prof, names.len ? names.buf : "no known GPU model",
			n_offer ? "it exists on " : "no known GPU model has it", offer.buf);
	hint = e->hints.items[e->hints.n - 1];
out:
	free(prof);
	strbuf_release(&names);
	strbuf_release(&offer);
	return hint;
}

/*
 * nodeSelector nvidia.com/<R>.product=V where the nodes say V-SHARED or
 * V-MIG-<profile>. Each hint is recorded as about the request
 * nvidia.com/<R> when the pod asks for it (positions in req_pos).
 */
static void hint_product_selector(struct explain_pod *e, const struct explain_pod_input *in,
				  const json_t *req_pos)
{
	const json_t *spec = json_object_get(in->pod, "spec");
	const char *k;
	json_t *v;

	json_object_foreach (json_object_get(spec, "nodeSelector"), k, v) {
		size_t kl = strlen(k);
		if (strncmp(k, "nvidia.com/", 11) || kl < 8 || strcmp(k + kl - 8, ".product") ||
		    !json_is_string(v))
			continue;
		const char *want = json_string_value(v);
		size_t wl = strlen(want);
		const json_t *node;
		size_t i;
		char *near = NULL;
		bool exact = false;

		json_array_foreach (json_object_get(in->nodes, "items"), i, node) {
			const char *have = kobj_label(node, k);
			if (!have)
				continue;
			if (!strcmp(have, want))
				exact = true;
			else if (!near && !strncmp(have, want, wl) &&
				 (!strcmp(have + wl, "-SHARED") || !strncmp(have + wl, "-MIG-", 5)))
				near = gs_xasprintf("%s is labelled %s=%s",
						    kobj_text(node, "metadata.name"), k, have);
		}
		if (!exact && near) {
			gs_warnings_add(
				&e->hints,
				"nodeSelector %s=%s matches no node, but %s: GPU feature discovery "
				"appends -SHARED to the product of a shared (time-sliced or MPS) "
				"resource and -MIG-<profile> to a MIG one",
				k, want, near);
			char *res = gs_xstrndup(k, kl - 8);
			const json_t *pos = json_object_get(req_pos, res);
			if (pos)
				e->request_hints[json_integer_value(pos)].selector =
					e->hints.items[e->hints.n - 1];
			free(res);
		}
		free(near);
	}
}

char *explain_admission_message(const struct explain_admission_fail *f)
{
	return gs_xasprintf("Allocate failed due to rpc error: code = Unknown desc = invalid "
			    "allocation request for \"%s\": invalid request: maximum request size "
			    "for shared resources is 1; found %lld, which is unexpected",
			    f->resource, f->count);
}

size_t explain_admission_failures(const struct dpconfig_set *configs, const json_t *node,
				  const json_t *pod, explain_admission_fn fn, void *ctx)
{
	struct dpconfig_choice choice;
	struct gs_error e;
	size_t n = 0;

	if (!configs ||
	    dpconfig_set_select(configs, kobj_label(node, "nvidia.com/device-plugin.config"), NULL,
				NULL, &choice, &e) < 0 ||
	    !choice.config)
		return 0;
	const struct dpconfig *cfg = choice.config;
	enum dp_sharing_strategy st = dpconfig_sharing_strategy(cfg);
	const struct dp_sharing *sh = dpconfig_replicated(cfg);
	if (st == DP_SHARING_NONE)
		return 0;
	/* time-slicing: only when set; MPS: default true (v0.20), forced before. */
	bool enforced = st == DP_SHARING_MPS ? sh->fail_requests_greater_than_one != 0
					     : sh->fail_requests_greater_than_one == 1;
	if (!enforced)
		return 0;
	const json_t *spec = json_object_get(pod, "spec");
	const char *lists[] = {"initContainers", "containers"};
	for (size_t l = 0; l < 2; l++) {
		const json_t *c;
		size_t i;
		json_array_foreach (json_object_get(spec, lists[l]), i, c) {
			json_t *r = json_object();
			if (container_requests(c, r, 0, &e) < 0) {
				json_decref(r);
				continue;
			}
			for (size_t k = 0; k < sh->n_resources; k++) {
				const char *name = sh->resources[k].rename ? sh->resources[k].rename
									   : sh->resources[k].name;
				const json_t *v = json_object_get(r, name);
				struct quantity q;
				int64_t cnt;
				if (!v || quantity_from_json(&q, v, &e) < 0 ||
				    quantity_value(&q, &cnt) < 0 || cnt <= 1)
					continue;
				struct explain_admission_fail f = {
					.container = kobj_text(c, "name"),
					.resource = name,
					.count = (long long)cnt,
					.config = choice.name,
					.strategy = dp_sharing_strategy_name(st)};
				n++;
				if (fn)
					fn(ctx, &f);
			}
			json_decref(r);
		}
	}
	return n;
}

/* What the per-node work of one explain_pod call shares. */
struct explain_ctx {
	const struct explain_pod_input *in;
	const struct explain_usage *usage;
	const json_t *req_pos; /* request name -> its position in e->requests */
	/* Nodes on which a pod the same as in->pod is bound: what the others use
	 * there (per usage slot; NULL = the slot's own). */
	json_t **own_used;
	size_t *own_bound;
	/* DRAExtendedResource on and a DeviceClass names one of the pod's
	 * requests: resource -> class, and the devices of the slices less what
	 * the claims of other pods hold. NULL otherwise. */
	json_t *ext_classes;
	struct draalloc *dra;
};

/* The hint just added to n->hints is about the request at `pos`, unless one came first. */
static void hint_about(struct explain_node *n, size_t pos)
{
	if (pos < n->n_res && !n->res[pos].hint)
		n->res[pos].hint = n->hints.items[n->hints.n - 1];
}

static void hint_one_failure(void *ctx, const struct explain_admission_fail *f)
{
	struct explain_node *n = ctx;
	char *msg = explain_admission_message(f);

	n->fails_admission = true;
	gs_warnings_add(
		&n->hints,
		"container \"%s\" asks for %lld %s, shared by %s with "
		"failRequestsGreaterThanOne (config \"%s\"): the scheduler admits it but the "
		"device plugin refuses it at Allocate, the pod fails with "
		"UnexpectedAdmissionError: %s",
		f->container, f->count, f->resource, f->strategy, f->config, msg);
	free(msg);
}

/* Per node: the request would reach Allocate and fail there (k8s-device-plugin v0.20.0
 * internal/rm/rm.go ValidateRequest). */
static void hint_fail_over_one(struct explain_node *n, const struct explain_ctx *x,
			       const json_t *node)
{
	explain_admission_failures(x->in->configs, node, x->in->pod, hint_one_failure, n);
}

/*
 * A DRA node (gpushare.io/path=dra) advertises no nvidia.com/ resource: the
 * DRA driver and the device plugin never run on one node (dra-driver-nvidia-gpu v25.12.0
 * deployments/helm/nvidia-dra-driver-gpu/templates/), and without DRAExtendedResource no limit maps
 * to a device class (docs/guide/dra.md#translate-gpushare-dra-translate-srcdradratranslatec).
 */
static void hint_dra_node(struct explain_node *n, const json_t *requests, const json_t *node,
			  const json_t *slices)
{
	const char *k;
	json_t *v;
	struct strbuf names = STRBUF_INIT;
	char *devs;

	size_t pos = 0;
	/* A resource a DeviceClass serves here is DynamicResources' (dra_takes). */
	json_object_foreach ((json_t *)requests, k, v)
		if (!strncmp(k, "nvidia.com/", 11) && !n->res[pos++].dra_class)
			strbuf_addsep(&names, ", ", k);
	if (names.len) {
		pos = 0;
		devs = draclaims_device_names(kobj_text(node, "metadata.name"), slices);
		gs_warnings_add(
			&n->hints,
			"this node is on the DRA path (gpushare.io/path=dra): it advertises "
			"no nvidia.com/* resource, so %s cannot fit here; its GPUs are the "
			"devices of its %s ResourceSlice (%s): ask for them with a "
			"ResourceClaim of class gpu.nvidia.com (mig.nvidia.com for MIG "
			"devices) named in spec.resourceClaims",
			names.buf, DRASLICE_DRIVER, *devs ? devs : "none published yet");
		free(devs);
		/* It is about every nvidia.com/ name it lists. */
		json_object_foreach ((json_t *)requests, k, v) {
			if (!strncmp(k, "nvidia.com/", 11) && !n->res[pos].dra_class)
				hint_about(n, pos);
			pos++;
		}
	}
	strbuf_release(&names);
}

/* Per node: the pod asks for a name the node publishes differently. */
static void hint_names(struct explain_node *n, const json_t *requests, const json_t *node)
{
	const char *k;
	json_t *v;
	size_t pos = 0;
	/* What the node advertises of MIG profiles and whole GPUs, read on first need. */
	char *migs = NULL, *whole = NULL;

	json_object_foreach ((json_t *)requests, k, v) {
		size_t at = pos++, before = n->hints.n;
		if (strncmp(k, "nvidia.com/", 11) || alloc_int(node, k) > 0)
			continue;
		char *shared = gs_xasprintf("%s.shared", k);
		if (alloc_int(node, shared) > 0) {
			gs_warnings_add(&n->hints,
					"advertises %s, not %s: its device-plugin config sets "
					"renameByDefault, so shared GPUs go by the .shared name; "
					"ask for %s",
					shared, k, shared);
		} else if (!strcmp(k, "nvidia.com/gpu")) {
			if (!migs)
				migs = advertised(node, "nvidia.com/mig-");
			if (*migs)
				gs_warnings_add(
					&n->hints,
					"this node advertises profiles, not whole GPUs (MIG mixed "
					"strategy): %s; ask for one of those instead of "
					"nvidia.com/gpu",
					migs);
		} else if (!strncmp(k, "nvidia.com/mig-", 15)) {
			if (!migs)
				migs = advertised(node, "nvidia.com/mig-");
			if (!whole)
				whole = advertised(node, "nvidia.com/gpu");
			if (*migs)
				gs_warnings_add(
					&n->hints,
					"this node advertises other MIG profiles: %s; ask for "
					"one of those instead of %s",
					migs, k);
			else if (*whole)
				gs_warnings_add(
					&n->hints,
					"this node advertises whole GPUs or their shares, not "
					"MIG profiles: %s; ask for that instead of %s, or give "
					"the node a MIG layout (nvidia.com/mig.config) and the "
					"mixed strategy",
					whole, k);
		}
		if (n->hints.n > before)
			hint_about(n, at);
		free(shared);
	}
	free(migs);
	free(whole);
}

/* ---- the pods bound to each node ------------------------------------------- */

struct usage_slot {
	json_t *used; /* resource -> quantity string, summed in pod order */
	size_t bound; /* the non-terminal pods bound here */
	size_t first; /* its first pod's record, NO_POD when none; then usage_pod.next_here */
};

/*
 * What is kept of a counted pod: who it is and what it asks for, to sum
 * its node again without it. One allocation: uid, namespace, name, then
 * n_req resource and quantity pairs, each string NUL-terminated.
 */
struct usage_pod {
	char *text;
	const char *uid, *ns, *name, *req;
	size_t n_req;
	size_t slot;
	size_t next_here; /* the next pod on the same node, NO_POD at the end */
};

static void usage_pod_init(struct usage_pod *up, const json_t *p, const json_t *requests)
{
	const char *parts[] = {kobj_text(p, "metadata.uid"), kobj_text(p, "metadata.namespace"),
			       kobj_text(p, "metadata.name")};
	size_t len = 0, at = 0;
	const char *k;
	json_t *v;

	for (size_t i = 0; i < 3; i++)
		len += strlen(parts[i]) + 1;
	json_object_foreach ((json_t *)requests, k, v)
		len += strlen(k) + strlen(json_string_value(v)) + 2;
	up->text = gs_xmalloc(len);
	for (size_t i = 0; i < 3; i++) {
		size_t n = strlen(parts[i]) + 1;
		memcpy(up->text + at, parts[i], n);
		at += n;
	}
	up->n_req = 0;
	json_object_foreach ((json_t *)requests, k, v) {
		const char *q = json_string_value(v);
		memcpy(up->text + at, k, strlen(k) + 1);
		at += strlen(k) + 1;
		memcpy(up->text + at, q, strlen(q) + 1);
		at += strlen(q) + 1;
		up->n_req++;
	}
	up->uid = up->text;
	up->ns = up->uid + strlen(up->uid) + 1;
	up->name = up->ns + strlen(up->ns) + 1;
	up->req = up->name + strlen(up->name) + 1;
}

/* The kept pod's requests summed into `into`, as add_requests summed them. */
static int usage_pod_add_to(const struct usage_pod *up, json_t *into, struct gs_error *err)
{
	const char *k = up->req;
	struct quantity q;

	for (size_t i = 0; i < up->n_req; i++) {
		const char *v = k + strlen(k) + 1;
		if (quantity_parse(&q, v, strlen(v), err) < 0 || add_into(into, k, &q, err) < 0)
			return -1;
		k = v + strlen(v) + 1;
	}
	return 0;
}

struct explain_usage {
	json_t *slot_of;	  /* node name -> slot */
	struct usage_slot *slots; /* one per distinct node name */
	size_t n_slots;
	size_t *last; /* per slot: its last pod's record, to append */
	struct usage_pod *pods;
	size_t n_pods, cap_pods;
	/* The counted pods by uid and by "namespace/name": the first, then next[]. */
	json_t *by_uid, *by_name;
	size_t *next_uid, *next_name;
};

#define NO_POD ((size_t)-1)

/* requests summed into `into` (resource -> quantity string). */
static int add_requests(json_t *into, const json_t *requests, struct gs_error *err)
{
	const char *k;
	json_t *v;
	struct quantity q;

	json_object_foreach ((json_t *)requests, k, v)
		if (qparse(&q, v, k, err) < 0 || add_into(into, k, &q, err) < 0)
			return -1;
	return 0;
}

static char *name_key(const char *ns, const char *name)
{
	return gs_xasprintf("%s/%s", ns, name);
}

/* Pod i heads the chain of `key` in `map`; the former head follows it. */
static void chain(json_t *map, size_t *next, const char *key, size_t i)
{
	const json_t *head = json_object_get(map, key);

	next[i] = head ? (size_t)json_integer_value(head) : NO_POD;
	json_object_set_new(map, key, json_integer((json_int_t)i));
}

int explain_usage_begin(const json_t *nodes, struct explain_usage **out, struct gs_error *err)
{
	const json_t *nitems = json_object_get(nodes, "items"), *node;
	struct explain_usage *u;
	size_t i;

	*out = NULL;
	if (json_array_size(nitems) > EXPLAIN_MAX_NODES) {
		gs_error_set(err, "more than %d nodes or %d pods", EXPLAIN_MAX_NODES,
			     EXPLAIN_MAX_PODS);
		return -1;
	}
	u = gs_xcalloc(1, sizeof(*u));
	u->slot_of = json_object();
	u->by_uid = json_object();
	u->by_name = json_object();
	json_array_foreach (nitems, i, node) {
		const char *name = kobj_text(node, "metadata.name");
		if (!json_object_get(u->slot_of, name))
			json_object_set_new(u->slot_of, name,
					    json_integer((json_int_t)u->n_slots++));
	}
	u->slots = gs_xcalloc(u->n_slots + 1, sizeof(*u->slots));
	u->last = gs_xcalloc(u->n_slots + 1, sizeof(size_t));
	for (i = 0; i < u->n_slots; i++) {
		u->slots[i].used = json_object();
		u->slots[i].first = NO_POD;
	}
	*out = u;
	return 0;
}

int explain_usage_add(struct explain_usage *u, const json_t *p, struct gs_error *err)
{
	const json_t *at = json_object_get(u->slot_of, kobj_text(p, "spec.nodeName"));
	json_t *r;

	if (!at || pod_terminal(p))
		return 0;
	if (u->n_pods >= EXPLAIN_MAX_PODS) {
		gs_error_set(err, "more than %d nodes or %d pods", EXPLAIN_MAX_NODES,
			     EXPLAIN_MAX_PODS);
		return -1;
	}
	size_t si = (size_t)json_integer_value(at);
	struct usage_slot *s = &u->slots[si];
	if (explain_pod_requests(p, &r, err) < 0 || add_requests(s->used, r, err) < 0) {
		json_decref(r);
		gs_error_prefix(err, "pod %s/%s: ", kobj_text(p, "metadata.namespace"),
				kobj_text(p, "metadata.name"));
		return -1;
	}
	if (u->n_pods == u->cap_pods) {
		u->cap_pods = u->cap_pods ? 2 * u->cap_pods : 64;
		u->pods = gs_xrealloc(u->pods, u->cap_pods * sizeof(*u->pods));
		u->next_uid = gs_xrealloc(u->next_uid, u->cap_pods * sizeof(size_t));
		u->next_name = gs_xrealloc(u->next_name, u->cap_pods * sizeof(size_t));
	}
	size_t i = u->n_pods++;
	struct usage_pod *up = &u->pods[i];
	usage_pod_init(up, p, r);
	json_decref(r);
	up->slot = si;
	up->next_here = NO_POD;
	if (s->first == NO_POD)
		s->first = i;
	else
		u->pods[u->last[si]].next_here = i;
	u->last[si] = i;
	s->bound++;
	if (*up->uid)
		chain(u->by_uid, u->next_uid, up->uid, i);
	char *key = name_key(up->ns, up->name);
	chain(u->by_name, u->next_name, key, i);
	free(key);
	return 0;
}

int explain_usage_new(const json_t *nodes, const json_t *pods, struct explain_usage **out,
		      struct gs_error *err)
{
	const json_t *pitems = json_object_get(pods, "items"), *p;
	size_t i;

	if (json_array_size(pitems) > EXPLAIN_MAX_PODS) {
		*out = NULL;
		gs_error_set(err, "more than %d nodes or %d pods", EXPLAIN_MAX_NODES,
			     EXPLAIN_MAX_PODS);
		return -1;
	}
	if (explain_usage_begin(nodes, out, err) < 0)
		return -1;
	json_array_foreach (pitems, i, p) {
		if (explain_usage_add(*out, p, err) < 0) {
			explain_usage_free(*out);
			*out = NULL;
			return -1;
		}
	}
	return 0;
}

void explain_usage_free(struct explain_usage *u)
{
	if (!u)
		return;
	for (size_t i = 0; i < u->n_slots; i++)
		json_decref(u->slots[i].used);
	for (size_t i = 0; i < u->n_pods; i++)
		free(u->pods[i].text);
	free(u->pods);
	free(u->slots);
	free(u->last);
	json_decref(u->slot_of);
	json_decref(u->by_uid);
	json_decref(u->by_name);
	free(u->next_uid);
	free(u->next_name);
	free(u);
}

/*
 * A kept pod is the same as `pod`: the same uid when both have one, else the
 * same namespace and name.
 */
static bool same_as(const struct usage_pod *up, const json_t *pod)
{
	const char *uid = kobj_text(pod, "metadata.uid");

	if (*up->uid && *uid)
		return !strcmp(up->uid, uid);
	return !strcmp(up->ns, kobj_text(pod, "metadata.namespace")) &&
	       !strcmp(up->name, kobj_text(pod, "metadata.name"));
}

/* Mark the slot of every counted pod of the chain from `i` that is the same as `pod`. */
static void mark_same(const struct explain_usage *u, const size_t *next, size_t i,
		      const json_t *pod, bool *hit)
{
	for (; i != NO_POD; i = next[i])
		if (same_as(&u->pods[i], pod))
			hit[u->pods[i].slot] = true;
}

/*
 * The explained pod may be in the list itself: on its node, what the other
 * pods use is summed again without it (the slots where it is not keep
 * theirs).
 */
static int own_usage(struct explain_ctx *x, struct gs_error *err)
{
	const struct explain_usage *u = x->usage;
	const json_t *pod = x->in->pod, *v;
	const char *uid = kobj_text(pod, "metadata.uid");
	bool *hit = gs_xcalloc(u->n_slots + 1, sizeof(bool)), any = false;
	char *key = name_key(kobj_text(pod, "metadata.namespace"), kobj_text(pod, "metadata.name"));

	if (*uid && (v = json_object_get(u->by_uid, uid)))
		mark_same(u, u->next_uid, (size_t)json_integer_value(v), pod, hit);
	if ((v = json_object_get(u->by_name, key)))
		mark_same(u, u->next_name, (size_t)json_integer_value(v), pod, hit);
	free(key);
	for (size_t s = 0; s < u->n_slots; s++)
		any |= hit[s];
	if (any) {
		x->own_used = gs_xcalloc(u->n_slots + 1, sizeof(json_t *));
		x->own_bound = gs_xcalloc(u->n_slots + 1, sizeof(size_t));
	}
	for (size_t s = 0; any && s < u->n_slots; s++) {
		if (!hit[s])
			continue;
		x->own_used[s] = json_object();
		for (size_t k = u->slots[s].first; k != NO_POD; k = u->pods[k].next_here) {
			if (same_as(&u->pods[k], pod))
				continue;
			x->own_bound[s]++;
			if (usage_pod_add_to(&u->pods[k], x->own_used[s], err) < 0) {
				free(hit);
				return -1;
			}
		}
	}
	free(hit);
	return 0;
}

static void own_usage_release(struct explain_ctx *x)
{
	for (size_t s = 0; x->own_used && s < x->usage->n_slots; s++)
		json_decref(x->own_used[s]);
	free(x->own_used);
	free(x->own_bound);
}

/* ---- explain pod ---------------------------------------------------------- */

/*
 * DynamicResources' Filter for the requests delegated on node n: the pod's
 * extended-resource claim allocated from the node's devices, nothing taken.
 * When it does not fit, each delegated resource gets why every device of
 * the node did not take it (the allocator's lines about other nodes left out).
 */
static bool dra_takes(const struct explain_ctx *x, struct explain_node *n, const json_t *delegated)
{
	json_t *claim = draextended_claim(kobj_text(x->in->pod, "metadata.namespace"),
					  kobj_text(x->in->pod, "metadata.name"), delegated);
	struct draalloc_result res;
	struct gs_error ignored; /* the claim is one draextended_claim made */
	bool ok = draalloc_claim_on(x->dra, claim, n->name, false, &res, &ignored) == 0 &&
		  res.outcome == DRAALLOC_ALLOCATED;

	json_decref(claim);
	if (!ok) {
		struct strbuf sb = STRBUF_INIT;
		size_t nl = strlen(n->name);
		for (const char *l = res.why; l && *l;) {
			const char *end = strchr(l, '\n');
			size_t len = end ? (size_t)(end - l) : strlen(l);
			if (len > nl + 3 && !strncmp(l, "  ", 2) && !strncmp(l + 2, n->name, nl) &&
			    l[2 + nl] == ' ')
				strbuf_addf(&sb, "%s%.*s", sb.len ? "\n" : "", (int)(len - nl - 3),
					    l + nl + 3);
			l = end ? end + 1 : l + len;
		}
		if (!sb.len && res.outcome != DRAALLOC_UNSCHEDULABLE && res.why)
			strbuf_addstr(&sb, res.why);
		if (!sb.len)
			strbuf_addstr(&sb, "the node publishes no device of the class");
		for (size_t i = 0; i < n->n_res; i++)
			if (n->res[i].dra_class)
				n->res[i].dra_why = gs_xstrdup(sb.buf);
		strbuf_release(&sb);
	}
	for (size_t i = 0; i < n->n_res; i++)
		if (n->res[i].dra_class)
			n->res[i].fits = ok;
	draalloc_result_release(&res);
	return ok;
}

static int explain_one_node(struct explain_pod *e, const struct explain_ctx *x, const json_t *node,
			    struct explain_node *n, struct gs_error *err)
{
	const struct explain_pod_input *in = x->in;
	const json_t *spec = json_object_get(in->pod, "spec");
	const json_t *alloc = kobj_get(node, "status.allocatable");
	const json_t *used = NULL;
	size_t i, bound_pods = 0;
	const char *k;
	json_t *v;

	n->name = gs_xstrdup(kobj_text(node, "metadata.name"));
	n->bound = e->node && !strcmp(e->node, n->name);
	n->advertised = advertised(node, "nvidia.com/");
	gs_warnings_init(&n->reasons);
	gs_warnings_init(&n->hints);

	const json_t *at = json_object_get(x->usage->slot_of, n->name);
	if (at) {
		size_t s = (size_t)json_integer_value(at);
		used = x->usage->slots[s].used;
		bound_pods = x->usage->slots[s].bound;
		if (x->own_used && x->own_used[s]) {
			used = x->own_used[s];
			bound_pods = x->own_bound[s];
		}
	}

	json_t *delegated = json_array();
	n->res = gs_xcalloc(json_object_size(e->requests) + 1, sizeof(*n->res));
	json_object_foreach (e->requests, k, v) {
		struct explain_resource *r = &n->res[n->n_res++];
		struct quantity want, have, busy, left;
		const json_t *a = json_object_get(alloc, k), *u = json_object_get(used, k);

		quantity_from_int64(&have, 0, QUANTITY_DECIMAL_SI);
		quantity_from_int64(&busy, 0, QUANTITY_DECIMAL_SI);
		r->name = gs_xstrdup(k);
		if (qparse(&want, v, k, err) < 0 || (a && qparse(&have, a, k, err) < 0) ||
		    (u && qparse(&busy, u, k, err) < 0) || qsub(&left, &have, &busy, err) < 0) {
			json_decref(delegated);
			return -1;
		}
		r->requested = qstr(&want);
		r->allocatable = qstr(&have);
		r->used = qstr(&busy);
		r->free = qstr(&left);
		/* Zero requests are skipped by NodeResourcesFit. */
		r->fits = quantity_is_zero(&want) || quantity_cmp(&want, &left) <= 0;
		const char *cls = json_string_value(json_object_get(x->ext_classes, k));
		/* shouldDelegateResourceToDRA: the node's allocatable lacks it. */
		if (cls && !quantity_is_zero(&want) && quantity_is_zero(&have)) {
			r->dra_class = gs_xstrdup(cls);
			int64_t count = INT64_MAX;
			if (quantity_value(&want, &count) < 0)
				count = INT64_MAX; /* more than any node has */
			json_array_append_new(delegated,
					      json_pack("{s:s,s:s,s:I}", "name", k, "class", cls,
							"count", (json_int_t)count));
			continue;
		}
		if (!r->fits)
			gs_warnings_add(&n->reasons, "Insufficient %s", k);
	}
	if (json_array_size(delegated) && !dra_takes(x, n, delegated))
		/* DynamicResources' Filter, UnschedulableAndUnresolvable */
		gs_warnings_add(&n->reasons, "cannot allocate all claims");
	json_decref(delegated);
	if (alloc_int(node, "pods") < (int64_t)bound_pods + 1)
		gs_warnings_add(&n->reasons, "Too many pods");
	size_t capacity_reasons = n->reasons.n;

	char *why = explain_selector_mismatch(spec, node);
	if (why) {
		gs_warnings_add(&n->reasons,
				"node(s) didn't match Pod's node affinity/selector (%s)", why);
		free(why);
	}
	const json_t *tols = json_object_get(spec, "tolerations");
	const json_t *nspec = json_object_get(node, "spec");
	if (json_is_true(json_object_get(nspec, "unschedulable"))) {
		json_t *t = json_pack("{s:s,s:s}", "key", "node.kubernetes.io/unschedulable",
				      "effect", "NoSchedule");
		if (!explain_tolerates(tols, t))
			gs_warnings_add(&n->reasons, "node(s) were unschedulable");
		json_decref(t);
	}
	const json_t *t;
	json_array_foreach (json_object_get(nspec, "taints"), i, t) {
		const char *eff = kobj_text(t, "effect");
		if (strcmp(eff, "NoSchedule") && strcmp(eff, "NoExecute"))
			continue;
		if (!explain_tolerates(tols, t))
			/* v1.34's TaintToleration no longer names the taint; the
			 * parenthesis does, in kubectl taint's syntax. */
			gs_warnings_add(&n->reasons, "node(s) had untolerated taint(s) (%s%s%s:%s)",
					kobj_text(t, "key"), *kobj_text(t, "value") ? "=" : "",
					kobj_text(t, "value"), eff);
	}
	n->fits = n->reasons.n == 0;
	n->selected = n->reasons.n == capacity_reasons;

	if (draslice_node_wants_dra(node))
		hint_dra_node(n, e->requests, node, in->slices);
	else
		hint_names(n, e->requests, node);
	if (n->fits || n->bound)
		hint_fail_over_one(n, x, node);
	return 0;
}

/* A claim the explained pod holds itself: made for it (owned by it) or named in its status. */
static bool pod_own_claim(const json_t *pod, const json_t *claim)
{
	const char *uid = kobj_text(pod, "metadata.uid");
	const json_t *o;
	size_t i;

	json_array_foreach (kobj_get(claim, "metadata.ownerReferences"), i, o)
		if (*uid && !strcmp(kobj_text(o, "uid"), uid))
			return true;
	return !strcmp(kobj_text(claim, "metadata.namespace"),
		       kobj_text(pod, "metadata.namespace")) &&
	       *kobj_text(claim, "metadata.name") &&
	       !strcmp(kobj_text(claim, "metadata.name"),
		       kobj_text(pod, "status.extendedResourceClaimStatus.resourceClaimName"));
}

/*
 * DRAExtendedResource, on by the gates or the release: when a DeviceClass
 * names a resource the pod asks for, the classes and the devices other
 * pods' claims leave.
 */
static void ext_init(struct explain_ctx *x, const json_t *requests)
{
	const struct explain_pod_input *in = x->in;
	const struct kubeversion *kv = in->kube ? in->kube : kubeversion_newest();
	bool on = in->gates ? in->gates->dra_extended_resource : kv->dra_extended_resource;
	const char *k;
	json_t *v, *classes;
	bool any = false;

	if (!on || !json_array_size(in->device_classes))
		return;
	classes = draextended_classes(in->device_classes);
	json_object_foreach ((json_t *)requests, k, v)
		any |= json_object_get(classes, k) != NULL;
	if (!any) {
		json_decref(classes);
		return;
	}
	x->ext_classes = classes;
	x->dra = draalloc_new(in->slices);
	if (!(in->gates ? in->gates->dra_consumable_capacity : kv->dra_consumable_capacity))
		draalloc_without_consumable_capacity(x->dra);
	for (size_t i = 0; i < json_array_size(in->claims); i++) {
		const json_t *c = json_array_get(in->claims, i);
		if (kobj_map(c, "status.allocation") && !pod_own_claim(in->pod, c))
			draalloc_take(x->dra, c);
	}
}

int explain_pod(const struct explain_pod_input *in, struct explain_pod **out, struct gs_error *err)
{
	const json_t *status = json_object_get(in->pod, "status");
	const json_t *nodes = json_object_get(in->nodes, "items");
	struct explain_pod *e;
	struct explain_usage *own = NULL;
	struct explain_ctx x = {in, in->usage, NULL, NULL, NULL, NULL, NULL};
	struct fleet_models models = {0};
	json_t *req_pos = NULL;
	const json_t *c, *node;
	const char *k;
	json_t *v;
	size_t i;
	int rc = -1;

	*out = NULL;
	if (!json_is_object(in->pod) || strcmp(kobj_text(in->pod, "kind"), "Pod") ||
	    !*kobj_text(in->pod, "metadata.name")) {
		gs_error_set(err, "not a Pod object");
		return -1;
	}
	if (!json_is_array(nodes)) {
		gs_error_set(err, "the node list has no items");
		return -1;
	}
	if (json_array_size(nodes) > EXPLAIN_MAX_NODES ||
	    json_array_size(json_object_get(in->pods, "items")) > EXPLAIN_MAX_PODS) {
		gs_error_set(err, "more than %d nodes or %d pods", EXPLAIN_MAX_NODES,
			     EXPLAIN_MAX_PODS);
		return -1;
	}
	e = gs_xcalloc(1, sizeof(*e));
	gs_warnings_init(&e->hints);
	e->namespace = gs_xstrdup(kobj_text(in->pod, "metadata.namespace"));
	e->name = gs_xstrdup(kobj_text(in->pod, "metadata.name"));
	const char *nn = kobj_text(in->pod, "spec.nodeName");
	e->node = *nn ? gs_xstrdup(nn) : NULL;
	e->phase = gs_xstrdup(kobj_text(status, "phase"));
	if (json_object_get(status, "reason")) {
		e->status_reason = gs_xstrdup(kobj_text(status, "reason"));
		e->status_message = gs_xstrdup(kobj_text(status, "message"));
	}
	e->scheduled = -1;
	json_array_foreach (json_object_get(status, "conditions"), i, c) {
		if (strcmp(kobj_text(c, "type"), "PodScheduled"))
			continue;
		e->scheduled = !strcmp(kobj_text(c, "status"), "True");
		if (json_object_get(c, "reason"))
			e->sched_reason = gs_xstrdup(kobj_text(c, "reason"));
		if (json_object_get(c, "message"))
			e->sched_message = gs_xstrdup(kobj_text(c, "message"));
	}
	if (explain_pod_requests(in->pod, &e->requests, err) < 0) {
		gs_error_prefix(err, "pod %s/%s: ", e->namespace, e->name);
		goto out;
	}
	req_pos = json_object();
	i = 0;
	json_object_foreach (e->requests, k, v)
		json_object_set_new(req_pos, k, json_integer((json_int_t)i++));
	e->request_hints = gs_xcalloc(json_object_size(e->requests) + 1, sizeof(*e->request_hints));
	x.req_pos = req_pos;
	if (!x.usage) {
		if (explain_usage_new(in->nodes, in->pods, &own, err) < 0)
			goto out;
		x.usage = own;
	}
	if (own_usage(&x, err) < 0)
		goto out;
	ext_init(&x, e->requests);

	e->nodes = gs_xcalloc(json_array_size(nodes) + 1, sizeof(*e->nodes));
	json_array_foreach (nodes, i, node)
		if (explain_one_node(e, &x, node, &e->nodes[e->n_nodes++], err) < 0)
			goto out;

	hint_product_selector(e, in, req_pos);
	if (in->cat) {
		fleet_models_init(&models, in->cat, in->nodes);
		i = 0;
		json_object_foreach (e->requests, k, v) {
			if (!strncmp(k, "nvidia.com/mig-", 15))
				e->request_hints[i].profile = hint_mig_profile(e, in, &models, k);
			i++;
		}
	}
	rc = 0;
out:
	free(models.g);
	own_usage_release(&x);
	json_decref(x.ext_classes);
	draalloc_free(x.dra);
	explain_usage_free(own);
	json_decref(req_pos);
	if (rc < 0)
		explain_pod_free(e);
	else
		*out = e;
	return rc;
}

bool explain_pod_is_placed(const struct explain_pod *e)
{
	return e->node && strcmp(e->phase, "Failed");
}

void explain_pod_free(struct explain_pod *e)
{
	if (!e)
		return;
	for (size_t i = 0; i < e->n_nodes; i++) {
		struct explain_node *n = &e->nodes[i];
		for (size_t r = 0; r < n->n_res; r++) {
			free(n->res[r].name);
			free(n->res[r].requested);
			free(n->res[r].allocatable);
			free(n->res[r].used);
			free(n->res[r].free);
			free(n->res[r].dra_class);
			free(n->res[r].dra_why);
		}
		free(n->res);
		free(n->name);
		free(n->advertised);
		gs_warnings_release(&n->reasons);
		gs_warnings_release(&n->hints);
	}
	free(e->nodes);
	free(e->request_hints);
	free(e->namespace);
	free(e->name);
	free(e->node);
	free(e->phase);
	free(e->status_reason);
	free(e->status_message);
	free(e->sched_reason);
	free(e->sched_message);
	json_decref(e->requests);
	gs_warnings_release(&e->hints);
	free(e);
}

/* ---- explain quota -------------------------------------------------------- */

#define EXPLAIN_MAX_ARG 256

/* Add what asking for q of `name` counts against quotas into *usage (created when NULL). */
static int usage_add(json_t **usage, const char *name, const struct quantity *q,
		     struct gs_error *err)
{
	struct quantity one;

	if (!*usage) {
		*usage = json_object();
		quantity_from_int64(&one, 1, QUANTITY_DECIMAL_SI);
		if (add_into(*usage, "pods", &one, err) < 0 ||
		    add_into(*usage, "count/pods", &one, err) < 0)
			return -1;
	}
	if (!strncmp(name, "requests.", 9) || !strncmp(name, "limits.", 7) ||
	    !strncmp(name, "count/", 6) || !strcmp(name, "pods"))
		return add_into(*usage, name, q, err);
	/* The pod evaluator (pkg/quota/v1/evaluator/core/pods.go). */
	if (!strcmp(name, "cpu") || !strcmp(name, "memory") || !strcmp(name, "ephemeral-storage") ||
	    !strncmp(name, "hugepages-", 10)) {
		char *req = gs_xasprintf("requests.%s", name);
		int r = add_into(*usage, name, q, err) < 0 || add_into(*usage, req, q, err) < 0;
		free(req);
		return r ? -1 : 0;
	}
	char *req = gs_xasprintf("requests.%s", name);
	int r = add_into(*usage, req, q, err);
	free(req);
	return r;
}

int explain_quota_add_pod(json_t **usage, const json_t *pod, struct gs_error *err)
{
	json_t *req = NULL, *lim = json_object();
	const json_t *c;
	const char *k;
	json_t *v;
	size_t i;
	struct quantity q, one;
	int rc = -1;

	if (explain_pod_requests(pod, &req, err) < 0)
		goto out;
	/* One pod more: usage_add counts it when it creates the usage. */
	quantity_from_int64(&q, 0, QUANTITY_DECIMAL_SI);
	quantity_from_int64(&one, 1, QUANTITY_DECIMAL_SI);
	if (*usage ? add_into(*usage, "pods", &one, err) < 0 ||
			     add_into(*usage, "count/pods", &one, err) < 0
		   : usage_add(usage, "pods", &q, err) < 0)
		goto out;
	json_object_foreach (req, k, v)
		if (qparse(&q, v, k, err) < 0 || usage_add(usage, k, &q, err) < 0)
			goto out;
	/* limits.<name>: the containers' limits, summed. */
	json_array_foreach (kobj_get(pod, "spec.containers"), i, c)
		json_object_foreach (json_object_get(json_object_get(c, "resources"), "limits"), k,
				     v) {
			char *name = gs_xasprintf("limits.%s", k);
			int r = qparse(&q, v, k, err) < 0 || add_into(lim, name, &q, err) < 0;
			free(name);
			if (r)
				goto out;
		}
	json_object_foreach (lim, k, v)
		if (qparse(&q, v, k, err) < 0 || usage_add(usage, k, &q, err) < 0)
			goto out;
	rc = 0;
out:
	json_decref(req);
	json_decref(lim);
	return rc;
}

bool explain_quota_usage_is_claim(const json_t *usage)
{
	return json_object_get(usage, DRACLAIMS_QUOTA_COUNT) != NULL;
}

/* A quota name the ResourceClaim evaluator counts (resource_claims.go MatchingResources). */
static bool claim_resource(const char *name)
{
	size_t n = strlen(name), k = strlen(DRACLAIMS_QUOTA_SUFFIX);

	return !strcmp(name, DRACLAIMS_QUOTA_COUNT) ||
	       (n > k && !strcmp(name + n - k, DRACLAIMS_QUOTA_SUFFIX));
}

int explain_quota_add_request(json_t **usage, const char *arg, struct gs_error *err)
{
	const char *eq = strchr(arg, '=');
	struct quantity q;
	char name[EXPLAIN_MAX_ARG];

	if (!eq || eq == arg || !eq[1] || (size_t)(eq - arg) >= sizeof(name)) {
		gs_error_set(err, "--request takes RESOURCE=QUANTITY, not '%s'", arg);
		return -1;
	}
	memcpy(name, arg, (size_t)(eq - arg));
	name[eq - arg] = '\0';
	if (quantity_parse(&q, eq + 1, strlen(eq + 1), err) < 0) {
		gs_error_prefix(err, "--request %s: ", name);
		return -1;
	}
	if (quantity_sign(&q) < 0) {
		gs_error_set(err, "--request %s: a request cannot be negative", name);
		return -1;
	}
	/* A claim's usage: one claim, its devices per class; no pod is counted. */
	if (*usage && claim_resource(name) != explain_quota_usage_is_claim(*usage)) {
		gs_error_set(err,
			     "--request %s: a ResourceClaim's quota names and a pod's cannot be "
			     "asked for together (a claim is created apart from its pods)",
			     name);
		return -1;
	}
	if (claim_resource(name)) {
		struct quantity one;
		if (!*usage) {
			*usage = json_object();
			quantity_from_int64(&one, 1, QUANTITY_DECIMAL_SI);
			if (add_into(*usage, DRACLAIMS_QUOTA_COUNT, &one, err) < 0)
				return -1;
		}
		if (!strcmp(name, DRACLAIMS_QUOTA_COUNT))
			return 0; /* one claim, counted already */
		return add_into(*usage, name, &q, err);
	}
	return usage_add(usage, name, &q, err);
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* prettyPrint: "k=v,k=v", keys sorted, of `list` restricted to `keys`. */
static char *pretty(const json_t *list, const char **keys, size_t n)
{
	struct strbuf sb = STRBUF_INIT;

	for (size_t i = 0; i < n; i++) {
		struct quantity q;
		struct gs_error e;
		char qb[QUANTITY_STR_MAX];
		const json_t *v = json_object_get(list, keys[i]);
		const char *s = "0";
		if (v && quantity_from_json(&q, v, &e) == 0)
			s = quantity_string(&q, qb, sizeof(qb));
		strbuf_addf(&sb, "%s%s=%s", i ? "," : "", keys[i], s);
	}
	return strbuf_detach(&sb, NULL);
}

/* checkRequest of k8s.io/apiserver/pkg/admission/plugin/resourcequota/controller.go. */
/*
 * The containers (and init containers) of the pod lacking `key` in the
 * quota evaluator's per-container usage (enforcePodContainerConstraints,
 * pkg/quota/v1/evaluator/core/pods.go): requests cpu/memory (a limit
 * without a request defaults it) count as cpu and requests.cpu (memory
 * alike), limits as limits.cpu / limits.memory. Names sorted, joined by
 * ","; NULL when none lacks it.
 */
static char *containers_lacking(const json_t *pod, const char *key)
{
	const char *lists[] = {"spec.containers", "spec.initContainers"};
	const char **names = NULL;
	size_t n = 0, cap = 0;
	bool want_limit = !strncmp(key, "limits.", 7);
	const char *res = strchr(key, '.') ? strchr(key, '.') + 1 : key;

	for (size_t l = 0; l < 2; l++) {
		const json_t *c;
		size_t i;
		json_array_foreach (kobj_get(pod, lists[l]), i, c) {
			const json_t *r = json_object_get(c, "resources");
			const json_t *req = json_object_get(r, "requests");
			const json_t *lim = json_object_get(r, "limits");
			bool has = want_limit
					   ? json_object_get(lim, res) != NULL
					   : json_object_get(req, res) || json_object_get(lim, res);
			if (has)
				continue;
			if (n == cap) {
				cap = cap ? 2 * cap : 8;
				names = gs_xrealloc(names, cap * sizeof(*names));
			}
			names[n++] = kobj_text(c, "name");
		}
	}
	if (!n)
		return NULL;
	qsort(names, n, sizeof(*names), cmp_str);
	struct strbuf sb = STRBUF_INIT;
	for (size_t i = 0; i < n; i++)
		if (!i || strcmp(names[i], names[i - 1]))
			strbuf_addf(&sb, "%s%s", sb.len ? "," : "", names[i]);
	free(names);
	return strbuf_detach(&sb, NULL);
}

static int judge(struct explain_quota *eq, const json_t *quota, const json_t *usage,
		 const char *container, const json_t *pod, struct gs_error *err)
{
	const json_t *st = json_object_get(quota, "status");
	const json_t *hard = json_object_get(st, "hard"), *used = json_object_get(st, "used");
	const char **exceeded = gs_xcalloc(json_object_size(usage) + 1, sizeof(char *));
	const char **unknown = gs_xcalloc(json_object_size(usage) + 1, sizeof(char *));
	size_t n_ex = 0, n_unk = 0;
	const char *k;
	json_t *v;
	int rc = 0;

	eq->verdict = EXPLAIN_ADMIT;
	if (!json_object_size(hard)) {
		eq->verdict = EXPLAIN_UNCONSTRAINED;
		goto out;
	}
	/*
	 * Constraints: cpu/memory keys in a quota require every container to
	 * declare them; the message names the containers that do not.
	 */
	static const char *const constrained[] = {"cpu",    "limits.cpu",   "limits.memory",
						  "memory", "requests.cpu", "requests.memory"};
	char *missing = NULL;
	/* The ResourceClaim evaluator has no constraints (resource_claims.go Constraints). */
	size_t n_constrained = explain_quota_usage_is_claim(usage)
				       ? 0
				       : sizeof(constrained) / sizeof(constrained[0]);
	for (size_t i = 0; i < n_constrained; i++) {
		if (!json_object_get(hard, constrained[i]))
			continue;
		char *who = NULL;
		if (pod)
			who = containers_lacking(pod, constrained[i]);
		else if (!json_object_get(usage, constrained[i]))
			who = gs_xstrdup(container);
		if (!who)
			continue;
		char *t = gs_xasprintf("%s%s%s for: %s", missing ? missing : "",
				       missing ? "; " : "", constrained[i], who);
		free(who);
		free(missing);
		missing = t;
	}
	if (missing) {
		eq->verdict = EXPLAIN_REFUSE;
		eq->message = gs_xasprintf("failed quota: %s: must specify %s", eq->name, missing);
		free(missing);
		goto out;
	}
	json_object_foreach ((json_t *)usage, k, v) {
		const json_t *h = json_object_get(hard, k);
		if (!h)
			continue;
		if (!json_object_get(used, k))
			unknown[n_unk++] = k;
	}
	if (n_unk) {
		qsort(unknown, n_unk, sizeof(*unknown), cmp_str);
		char *names = gs_xstrdup("");
		for (size_t i = 0; i < n_unk; i++) {
			char *t = gs_xasprintf("%s%s%s", names, i ? "," : "", unknown[i]);
			free(names);
			names = t;
		}
		eq->verdict = EXPLAIN_REFUSE;
		eq->message = gs_xasprintf("status unknown for quota: %s, resources: %s", eq->name,
					   names);
		free(names);
		goto out;
	}
	json_object_foreach ((json_t *)usage, k, v) {
		const json_t *h = json_object_get(hard, k);
		struct quantity qh, qu, qr, sum;
		if (!h)
			continue;
		if (qparse(&qh, h, k, err) < 0 ||
		    qparse(&qu, json_object_get(used, k), k, err) < 0 ||
		    qparse(&qr, v, k, err) < 0 || quantity_add(&sum, &qu, &qr, err) < 0) {
			rc = -1;
			goto out;
		}
		if (quantity_cmp(&sum, &qh) > 0)
			exceeded[n_ex++] = k;
	}
	if (n_ex) {
		qsort(exceeded, n_ex, sizeof(*exceeded), cmp_str);
		char *r = pretty(usage, exceeded, n_ex), *u = pretty(used, exceeded, n_ex);
		char *h = pretty(hard, exceeded, n_ex);
		eq->verdict = EXPLAIN_REFUSE;
		eq->message =
			gs_xasprintf("exceeded quota: %s, requested: %s, used: %s, limited: %s",
				     eq->name, r, u, h);
		free(r);
		free(u);
		free(h);
	}
out:
	free(exceeded);
	free(unknown);
	return rc;
}

static int quota_report(const json_t *quota_list, const json_t *usage, const char *container,
			const json_t *pod, struct explain_quota_report **out, struct gs_error *err);

int explain_quota(const json_t *quota_list, const json_t *usage, const char *container,
		  struct explain_quota_report **out, struct gs_error *err)
{
	return quota_report(quota_list, usage, container, NULL, out, err);
}

int explain_quota_pod(const json_t *quota_list, const json_t *pod,
		      struct explain_quota_report **out, struct gs_error *err)
{
	json_t *usage = NULL;
	int rc = -1;

	*out = NULL;
	if (explain_quota_add_pod(&usage, pod, err) == 0)
		rc = quota_report(quota_list, usage, NULL, pod, out, err);
	json_decref(usage);
	return rc;
}

static int quota_report(const json_t *quota_list, const json_t *usage, const char *container,
			const json_t *pod, struct explain_quota_report **out, struct gs_error *err)
{
	const json_t *items = json_object_get(quota_list, "items");
	struct explain_quota_report *r;
	const json_t *q;
	size_t i;

	*out = NULL;
	if (!json_is_array(items)) {
		gs_error_set(err, "the ResourceQuota list has no items");
		return -1;
	}
	if (json_array_size(items) > EXPLAIN_MAX_QUOTAS) {
		gs_error_set(err, "more than %d quotas", EXPLAIN_MAX_QUOTAS);
		return -1;
	}
	r = gs_xcalloc(1, sizeof(*r));
	r->quotas = gs_xcalloc(json_array_size(items) + 1, sizeof(*r->quotas));
	r->usage = usage ? json_deep_copy(usage) : NULL;
	json_array_foreach (items, i, q) {
		struct explain_quota *eq = &r->quotas[r->n++];
		const json_t *spec = json_object_get(q, "spec"), *st = json_object_get(q, "status");
		const json_t *hard = json_object_get(st, "hard"),
			     *used = json_object_get(st, "used");
		const char *k;
		json_t *v;

		if (!r->namespace)
			r->namespace = gs_xstrdup(kobj_text(q, "metadata.namespace"));
		eq->name = gs_xstrdup(kobj_text(q, "metadata.name"));
		eq->enforced = json_object_size(hard) > 0;
		eq->scoped = json_array_size(json_object_get(spec, "scopes")) > 0 ||
			     json_object_get(spec, "scopeSelector") != NULL;
		if (!eq->enforced)
			hard = json_object_get(spec, "hard");
		eq->items = gs_xcalloc(json_object_size(hard) + 1, sizeof(*eq->items));
		/* jansson keeps insertion order; the apiserver's is sorted already. */
		json_object_foreach ((json_t *)hard, k, v) {
			struct explain_quota_item *it = &eq->items[eq->n_items++];
			struct quantity qh, qu, left;
			const json_t *u = json_object_get(used, k);
			it->resource = gs_xstrdup(k);
			if (qparse(&qh, v, k, err) < 0)
				goto fail;
			it->hard = qstr(&qh);
			if (u && eq->enforced) {
				if (qparse(&qu, u, k, err) < 0 || qsub(&left, &qh, &qu, err) < 0)
					goto fail;
				it->used = qstr(&qu);
				it->headroom = qstr(&left);
			}
		}
		eq->verdict = EXPLAIN_NO_REQUEST;
		if (usage && judge(eq, q, usage, container ? container : "main", pod, err) < 0)
			goto fail;
		continue;
	fail:
		gs_error_prefix(err, "quota %s: ", eq->name);
		explain_quota_report_free(r);
		return -1;
	}
	if (!r->namespace)
		r->namespace = gs_xstrdup(kobj_text(quota_list, "metadata.namespace"));
	*out = r;
	return 0;
}

void explain_quota_report_free(struct explain_quota_report *r)
{
	if (!r)
		return;
	for (size_t i = 0; i < r->n; i++) {
		struct explain_quota *q = &r->quotas[i];
		for (size_t j = 0; j < q->n_items; j++) {
			free(q->items[j].resource);
			free(q->items[j].hard);
			free(q->items[j].used);
			free(q->items[j].headroom);
		}
		free(q->items);
		free(q->name);
		free(q->message);
	}
	free(r->quotas);
	free(r->namespace);
	json_decref(r->usage);
	free(r);
}
