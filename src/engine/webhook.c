#include <stdlib.h>
#include <string.h>

#include "engine/check.h"
#include "engine/explain.h"
#include "model/kobj.h"
#include "base/strbuf.h"
#include "engine/webhook.h"
#include "base/banned.h"

void webhook_verdict_release(struct webhook_verdict *v)
{
	if (!v)
		return;
	free(v->message);
	v->message = NULL;
	gs_warnings_release(&v->warnings);
}

static const struct explain_resource *node_res(const struct explain_node *n, const char *name)
{
	for (size_t i = 0; i < n->n_res; i++)
		if (!strcmp(n->res[i].name, name))
			return &n->res[i];
	return NULL;
}

static bool advertises(const struct explain_node *n, const char *res)
{
	const struct explain_resource *r = node_res(n, res);
	return r && strcmp(r->allocatable, "0") != 0;
}

static bool is_zero(const char *q)
{
	return !strcmp(q, "0");
}

/* "a, b, c and 2 more" of the nodes for which pick() holds. */
static void add_names(struct strbuf *sb, const struct explain_pod *e,
		      bool (*pick)(const struct explain_node *, const void *), const void *arg)
{
	size_t shown = 0, more = 0;

	for (size_t i = 0; i < e->n_nodes; i++) {
		if (!pick(&e->nodes[i], arg))
			continue;
		if (shown < WEBHOOK_MAX_NAMED)
			strbuf_addf(sb, "%s%s", shown++ ? ", " : "", e->nodes[i].name);
		else
			more++;
	}
	if (more)
		strbuf_addf(sb, " and %zu more", more);
}

static bool pick_failing(const struct explain_node *n, const void *arg)
{
	(void)arg;
	return n->fits && n->fails_admission;
}

static bool pick_fine(const struct explain_node *n, const void *arg)
{
	(void)arg;
	return n->fits && !n->fails_admission;
}

static bool pick_advertising(const struct explain_node *n, const void *res)
{
	return n->selected && advertises(n, res);
}

/*
 * Rule 2: what the pod can land on does not advertise `res`. The nodes'
 * own hints (explain's hint_names: .shared names, MIG profiles instead of
 * whole GPUs) say what to ask for instead; a node without one says what it
 * advertises.
 */
static void refuse_unadvertised(struct strbuf *msg, const struct explain_pod *e, const char *res,
				size_t n_selected)
{
	size_t shown = 0, more = 0;

	strbuf_addsep(msg, "; ", "");
	if (n_selected == e->n_nodes)
		strbuf_addf(msg, "no node advertises %s", res);
	else if (n_selected == 1)
		strbuf_addf(msg,
			    "the one node this pod's nodeSelector, node affinity and tolerations "
			    "allow does not advertise %s",
			    res);
	else
		strbuf_addf(msg,
			    "none of the %zu node%s this pod's nodeSelector, node affinity and "
			    "tolerations allow advertises %s",
			    n_selected, n_selected == 1 ? "" : "s", res);
	for (size_t i = 0; i < e->n_nodes; i++) {
		const struct explain_node *n = &e->nodes[i];
		const char *hint = NULL;

		if (!n->selected)
			continue;
		for (size_t h = 0; h < n->hints.n && !hint; h++)
			if (strstr(n->hints.items[h], res))
				hint = n->hints.items[h];
		if (!hint && !*n->advertised)
			continue;
		if (shown++ >= WEBHOOK_MAX_NAMED) {
			more++;
			continue;
		}
		if (hint)
			strbuf_addf(msg, "; node %s: %s", n->name, hint);
		else
			strbuf_addf(msg, "; node %s advertises %s", n->name, n->advertised);
	}
	if (more)
		strbuf_addf(msg, "; and %zu more node%s", more, more == 1 ? "" : "s");
	if (!shown)
		strbuf_addf(msg, "; %s advertises no nvidia.com/ resource",
			    n_selected == 1 ? "that node" : "none of them");
	for (size_t h = 0; h < e->hints.n; h++)
		if (strstr(e->hints.items[h], res))
			strbuf_addf(msg, "; %s", e->hints.items[h]);
}

/* Rule 3: a node the pod can land on refuses more than 1 slice at Allocate. */
static void refuse_over_one(struct strbuf *msg, const struct explain_pod *e)
{
	const struct explain_node *first = NULL;
	const char *hint = NULL;

	for (size_t i = 0; i < e->n_nodes && !first; i++)
		if (pick_failing(&e->nodes[i], NULL))
			first = &e->nodes[i];
	for (size_t h = 0; first && h < first->hints.n && !hint; h++)
		if (strstr(first->hints.items[h], "failRequestsGreaterThanOne"))
			hint = first->hints.items[h];
	strbuf_addsep(msg, "; ", "");
	strbuf_addf(msg, "the pod can be scheduled to ");
	add_names(msg, e, pick_failing, NULL);
	strbuf_addf(msg, ", where %s", hint ? hint : "the device plugin refuses it");
	strbuf_addf(msg, "; ask for 1 per container (two slices are the same GPU shared twice, not "
			 "twice the GPU)");
	struct strbuf fine = STRBUF_INIT;
	add_names(&fine, e, pick_fine, NULL);
	if (fine.len)
		strbuf_addf(msg,
			    ", or keep the pod on nodes that do not share it (%s) with a "
			    "nodeSelector or node affinity",
			    fine.buf);
	strbuf_release(&fine);
}

/* The kinds whose pods the webhook judges through their template, and where it is. */
static const struct workload {
	const char *group, *kind, *path;
} workloads[] = {
	{"apps", "Deployment", "spec.template"},
	{"apps", "ReplicaSet", "spec.template"},
	{"apps", "StatefulSet", "spec.template"},
	{"apps", "DaemonSet", "spec.template"},
	{"batch", "Job", "spec.template"},
	{"batch", "CronJob", "spec.jobTemplate.spec.template"},
	{"", "ReplicationController", "spec.template"},
	{"", "PodTemplate", "template"},
};

static const struct workload *workload_of(const char *group, const char *kind)
{
	for (size_t i = 0; i < sizeof(workloads) / sizeof(workloads[0]); i++)
		if (!strcmp(workloads[i].group, group) && !strcmp(workloads[i].kind, kind))
			return &workloads[i];
	return NULL;
}

/* The Pod a template makes: its metadata and spec, named after the workload. */
static json_t *template_pod(const json_t *obj, const struct workload *w)
{
	const json_t *t = kobj_get(obj, w->path);
	json_t *md = json_deep_copy(json_object_get(t, "metadata"));

	if (!json_is_object(md)) {
		json_decref(md);
		md = json_object();
	}
	json_object_set_new(md, "name", json_string(kobj_text(obj, "metadata.name")));
	json_object_set_new(md, "namespace", json_string(kobj_text(obj, "metadata.namespace")));
	json_t *spec = json_object_get(t, "spec");
	return json_pack("{s:s,s:s,s:o,s:o}", "apiVersion", "v1", "kind", "Pod", "metadata", md,
			 "spec", json_is_object(spec) ? json_incref(spec) : json_object());
}

int webhook_judge_pod(const struct webhook_fleet *f, const json_t *obj, struct webhook_verdict *v,
		      struct gs_error *err)
{
	struct check_report rep;
	struct strbuf msg = STRBUF_INIT;
	struct explain_pod *e = NULL;
	const char *api = kobj_text(obj, "apiVersion"), *slash = strchr(api, '/');
	char *group = gs_xstrndup(api, slash ? (size_t)(slash - api) : 0);
	const struct workload *w = workload_of(group, kobj_text(obj, "kind"));
	json_t *made = NULL;
	const json_t *pod = obj;

	memset(v, 0, sizeof(*v));
	gs_warnings_init(&v->warnings);
	v->judged = true;
	free(group);
	if (w)
		pod = made = template_pod(obj, w);

	/* 1. The apiserver's rules, in its words (paths within the object as sent). */
	check_report_init(&rep);
	if (check_object_tree(obj, CHECK_API_RULES, &rep, err) < 0) {
		check_report_release(&rep);
		json_decref(made);
		gs_error_prefix(err, "%s: ", kobj_text(obj, "kind"));
		return -1;
	}
	for (size_t i = 0; i < rep.n; i++)
		if (rep.items[i].kind == CHECK_NOTE)
			strbuf_addsep(&msg, "; ", rep.items[i].text);
	check_report_release(&rep);

	/* 2 and 3 need the fleet, and quantities that parse. */
	if (!msg.len && f->nodes) {
		struct explain_pod_input in = {.pod = pod,
					       .nodes = f->nodes,
					       .pods = NULL,
					       .configs = f->configs,
					       .cat = f->cat};
		if (explain_pod(&in, &e, err) < 0) {
			strbuf_release(&msg);
			json_decref(made);
			return -1;
		}
	}
	if (e && e->n_nodes) {
		size_t n_selected = 0;
		const char *k;
		json_t *q;

		for (size_t i = 0; i < e->n_nodes; i++)
			n_selected += e->nodes[i].selected;
		if (!n_selected)
			gs_warnings_add(
				&v->warnings,
				"gpushare: no node matches this pod's nodeSelector, node "
				"affinity and tolerations; it stays Pending until one does");
		json_object_foreach (e->requests, k, q) {
			if (strncmp(k, "nvidia.com/", 11) || is_zero(json_string_value(q)))
				continue;
			bool any = false;
			for (size_t i = 0; i < e->n_nodes && !any; i++)
				any = pick_advertising(&e->nodes[i], k) ||
				      (!n_selected && advertises(&e->nodes[i], k));
			if (!any)
				refuse_unadvertised(&msg, e, k,
						    n_selected ? n_selected : e->n_nodes);
		}
		bool failing = false;
		for (size_t i = 0; i < e->n_nodes; i++)
			failing |= pick_failing(&e->nodes[i], NULL);
		if (failing)
			refuse_over_one(&msg, e);
	} else if (!f->nodes) {
		gs_warnings_add(&v->warnings, "gpushare: the node list is not known yet: only the "
					      "apiserver's resource rules were checked");
	}
	explain_pod_free(e);
	json_decref(made);

	if (msg.len) {
		v->allowed = false;
		v->code = 403;
		if (w && strncmp(msg.buf, "container ", 10)) {
			/* Rules 2 and 3 speak of "the pod": say which pods. */
			v->message =
				gs_xasprintf("the pods of %s %s (%s): %s", w->kind,
					     kobj_text(obj, "metadata.name"), w->path, msg.buf);
			strbuf_release(&msg);
		} else {
			v->message = strbuf_detach(&msg, NULL);
		}
	} else {
		v->allowed = true;
		v->code = 200;
		strbuf_release(&msg);
	}
	return 0;
}

int webhook_review(const struct webhook_fleet *f, const char *body, size_t len, json_t **out,
		   struct webhook_verdict *verdict, struct gs_error *err)
{
	json_error_t je;
	json_t *review, *req, *resp;
	struct webhook_verdict v;
	int rc = -1;

	*out = NULL;
	memset(&v, 0, sizeof(v));
	if (len > WEBHOOK_MAX_BODY) {
		gs_error_set(err, "the review is %zu bytes, more than %u", len, WEBHOOK_MAX_BODY);
		return -1;
	}
	review = json_loadb(body, len, JSON_REJECT_DUPLICATES, &je);
	if (!review) {
		gs_error_at(err, "review", je.line, je.column, "%s", je.text);
		return -1;
	}
	const char *api = kobj_text(review, "apiVersion");
	req = json_object_get(review, "request");
	if (!json_is_object(review) || strcmp(kobj_text(review, "kind"), "AdmissionReview") ||
	    strcmp(api, "admission.k8s.io/v1")) {
		gs_error_set(err,
			     "not an AdmissionReview of admission.k8s.io/v1 (kind \"%s\", "
			     "apiVersion \"%s\")",
			     kobj_text(review, "kind"), api);
		goto out;
	}
	const json_t *uid = json_object_get(req, "uid");
	if (!json_is_object(req) || !json_is_string(uid) || !*json_string_value(uid)) {
		gs_error_set(err, "the AdmissionReview has no request.uid");
		goto out;
	}
	const json_t *obj = json_object_get(req, "object");
	const char *op = kobj_text(req, "operation"), *kind = kobj_text(req, "kind.kind");
	const struct workload *w = workload_of(kobj_text(req, "kind.group"), kind);
	bool judge = !*kobj_text(req, "subResource") && json_is_object(obj);
	if (!strcmp(kind, "Pod") && !*kobj_text(req, "kind.group"))
		judge &= !strcmp(op, "CREATE");
	else if (w)
		/* A workload's pods change only with its template: a scale or a
		 * status update of one made before is never refused. */
		judge &= !strcmp(op, "CREATE") ||
			 (!strcmp(op, "UPDATE") &&
			  !json_equal(kobj_get(obj, w->path),
				      kobj_get(json_object_get(req, "oldObject"), w->path)));
	else
		judge = false;
	if (judge) {
		if (webhook_judge_pod(f, obj, &v, err) < 0)
			goto out;
	} else {
		gs_warnings_init(&v.warnings);
		v.allowed = true;
		v.code = 200;
	}

	resp = json_pack("{s:O,s:b}", "uid", uid, "allowed", v.allowed);
	if (!v.allowed) {
		/* Texts come from decoded JSON (valid UTF-8) and escaped names; guard anyway. */
		json_t *m = json_string(v.message);
		json_object_set_new(resp, "status",
				    json_pack("{s:i,s:s,s:o}", "code", v.code, "reason",
					      "Forbidden", "message",
					      m ? m : json_string("refused by gpushare")));
	}
	if (v.warnings.n) {
		json_t *warn = json_array();
		for (size_t i = 0; i < v.warnings.n; i++)
			json_array_append_new(warn, json_string(v.warnings.items[i]));
		json_object_set_new(resp, "warnings", warn);
	}
	*out = json_pack("{s:s,s:s,s:o}", "apiVersion", "admission.k8s.io/v1", "kind",
			 "AdmissionReview", "response", resp);
	if (verdict) {
		*verdict = v;
		memset(&v, 0, sizeof(v));
	}
	rc = 0;
out:
	webhook_verdict_release(&v);
	json_decref(review);
	return rc;
}
