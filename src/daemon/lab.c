#include "daemon/lab.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "daemon/apply.h"
#include "model/catalog.h"
#include "engine/check.h"
#include "model/isolation.h"
#include "model/defaults.h"
#include "kube/kubeclient.h"
#include "model/quantity.h"
#include "engine/report.h"
#include "fleet/report_live.h"
#include "base/strbuf.h"
#include "fleet/sync.h"
#include "yaml/ydoc.h"
#include "model/kobj.h"
#include "base/banned.h"

#define LAB_NS GS_DEFAULT_NAMESPACE
#define TEAM_NS "team-a"
#define CM_NAME GS_DEFAULT_CONFIGMAP
#define QUOTA_NAME "gpu-quota"
#define QUOTA_KEY "requests.nvidia.com/gpu"
#define MPS_KEY "mps"

struct lab {
	struct kube_client *c;
	const struct lab_opts *o;
	struct lab_report *rep;
	const char *dir;
	long wait_ms;
};

static void say(struct lab *lab, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void say(struct lab *lab, const char *fmt, ...)
{
	struct strbuf line = STRBUF_INIT;
	va_list ap;

	if (!lab->o->progress)
		return;
	va_start(ap, fmt);
	strbuf_vaddf(&line, fmt, ap);
	va_end(ap);
	lab->o->progress(lab->o->progress_arg, line.buf);
	strbuf_release(&line);
}

static char *lab_path(const struct lab *lab, const char *rel)
{
	return gs_xasprintf("%s/%s", lab->dir, rel);
}

static int load(struct lab *lab, const char *rel, struct ydoc_stream **s, struct gs_error *err)
{
	char *path = lab_path(lab, rel);
	int rc = ydoc_load_file(path, NULL, s, err);

	free(path);
	return rc;
}

static int apply_one(struct lab *lab, const json_t *obj, struct gs_error *err)
{
	enum apply_result r;
	const char *ns = kobj_namespace(obj);

	if (apply_object(lab->c, obj, &r, NULL, err) < 0) {
		gs_error_prefix(err, "%s %s%s%s: ", kobj_kind(obj), ns ? ns : "", ns ? "/" : "",
				kobj_name(obj));
		return -1;
	}
	say(lab, "  %s %s%s%s %s", kobj_kind(obj), ns ? ns : "", ns ? "/" : "", kobj_name(obj),
	    apply_result_name(r));
	return 0;
}

/* Apply every document of a manifest file, in order. */
static int apply_file(struct lab *lab, const char *rel, struct gs_error *err)
{
	struct ydoc_stream *s;
	int rc = 0;

	if (load(lab, rel, &s, err) < 0)
		return -1;
	for (size_t i = 0; i < ydoc_stream_count(s) && rc == 0; i++) {
		json_t *doc = ydoc_stream_doc(s, i);
		if (json_is_object(doc))
			rc = apply_one(lab, doc, err);
	}
	ydoc_stream_free(s);
	return rc;
}

/* ---- conditions to wait for ---- */

static int exists(const json_t *obj, void *arg, struct gs_error *why)
{
	(void)arg;
	if (obj)
		return 1;
	gs_error_set(why, "it does not exist yet");
	return 0;
}

static int node_ready(const json_t *node, void *arg, struct gs_error *why)
{
	const json_t *conds = kobj_get(node, "status.conditions");
	const json_t *taints = kobj_get(node, "spec.taints");
	const json_t *v;
	size_t i;
	int ready = 0;

	(void)arg;
	if (!node) {
		gs_error_set(why, "the node does not exist");
		return 0;
	}
	json_array_foreach (conds, i, v) {
		if (!strcmp(kobj_string(v, "type") ? kobj_string(v, "type") : "", "Ready"))
			ready = kobj_string(v, "status") &&
				!strcmp(kobj_string(v, "status"), "True");
	}
	if (!ready) {
		gs_error_set(why, "condition Ready is not True (is kwok running?)");
		return 0;
	}
	json_array_foreach (taints, i, v) {
		const char *key = kobj_string(v, "key");
		if (key && !strcmp(key, "node.kubernetes.io/not-ready")) {
			gs_error_set(why, "taint node.kubernetes.io/not-ready is still set "
					  "(is kube-controller-manager running?)");
			return 0;
		}
	}
	return 1;
}

static int quota_enforced(const json_t *q, void *arg, struct gs_error *why)
{
	(void)arg;
	if (q && json_object_get(kobj_get(q, "status.hard"), QUOTA_KEY))
		return 1;
	gs_error_set(why,
		     "status.hard has no %s yet: the resource quota controller of "
		     "kube-controller-manager has not synced it, and until it does the "
		     "apiserver admits everything",
		     QUOTA_KEY);
	return 0;
}

/*
 * Quota admission reads the quota from an informer cache: until that cache
 * has seen usage of the pods just created, a further pod could slip
 * through. Wait until status.used reaches what was admitted.
 */
static int quota_used_reaches(const json_t *q, void *arg, struct gs_error *why)
{
	const json_t *used = json_object_get(kobj_get(q, "status.used"), QUOTA_KEY);
	int64_t want = *(const int64_t *)arg, have = 0;
	struct quantity qty;
	struct gs_error ignored;

	if (used && quantity_from_json(&qty, used, &ignored) == 0 &&
	    quantity_value(&qty, &have) == 0 && have >= want)
		return 1;
	gs_error_set(why, "status.used %s is %s, want %lld", QUOTA_KEY,
		     json_is_string(used) ? json_string_value(used) : "unset", (long long)want);
	return 0;
}

/* Scheduled, or definitely not: the scheduler's verdict is in PodScheduled. */
static int pod_scheduled(const json_t *pod, void *arg, struct gs_error *why)
{
	const json_t *conds = kobj_get(pod, "status.conditions");
	const json_t *v;
	size_t i;

	(void)arg;
	if (!pod) {
		gs_error_set(why, "the pod does not exist");
		return 0;
	}
	if (kobj_string(pod, "spec.nodeName"))
		return 1;
	json_array_foreach (conds, i, v) {
		const char *type = kobj_string(v, "type");
		const char *msg = kobj_string(v, "message");
		if (type && !strcmp(type, "PodScheduled") && msg) {
			gs_error_set(why, "%s", msg);
			return 0;
		}
	}
	gs_error_set(why, "the scheduler has not decided yet");
	return 0;
}

static int wait_for(struct lab *lab, const char *path, kube_wait_fn pred, json_t **out,
		    struct gs_error *err)
{
	return kube_wait(lab->c, path, pred, NULL, lab->wait_ms, 250, out, err);
}

/* ---- files ---- */

static int write_out(struct lab *lab, const char *rel, const char *text, struct gs_error *err)
{
	char *dir = lab_path(lab, "out");
	char *path = lab_path(lab, rel);
	char *tmp = gs_xasprintf("%s.tmp", path);
	FILE *f;
	int rc = -1;

	if (mkdir(dir, 0777) < 0 && errno != EEXIST) {
		gs_error_set(err, "cannot create '%s': %s", dir, strerror(errno));
		goto out;
	}
	f = fopen(tmp, "w");
	if (!f) {
		gs_error_set(err, "cannot write '%s': %s", tmp, strerror(errno));
		goto out;
	}
	fputs(text, f);
	if (fclose(f) != 0 || rename(tmp, path) < 0) {
		gs_error_set(err, "cannot write '%s': %s", path, strerror(errno));
		unlink(tmp);
		goto out;
	}
	say(lab, "  wrote %s", rel);
	rc = 0;
out:
	free(dir);
	free(path);
	free(tmp);
	return rc;
}

/* ---- steps ---- */

static int step_namespaces_and_configmap(struct lab *lab, struct gs_error *err)
{
	struct ydoc_stream *s;
	json_t *cm = NULL;
	const char *nss[] = {LAB_NS, TEAM_NS};
	int rc = -1;

	say(lab, "1. namespaces and the device-plugin ConfigMap (keys default, shared)");
	if (apply_file(lab, "k8s/namespaces.yaml", err) < 0)
		return -1;
	/* The ServiceAccount admission plugin refuses pods until "default" exists. */
	for (size_t i = 0; i < sizeof(nss) / sizeof(nss[0]); i++) {
		char *path = gs_xasprintf("/api/v1/namespaces/%s/serviceaccounts/default", nss[i]);
		int w = wait_for(lab, path, exists, NULL, err);
		free(path);
		if (w < 0)
			return -1;
	}
	if (load(lab, "k8s/device-plugin-configs.yaml", &s, err) < 0)
		return -1;
	long at = kobj_find(s, 0, "ConfigMap", NULL);
	if (at >= 0)
		cm = json_deep_copy(ydoc_stream_doc(s, (size_t)at));
	ydoc_stream_free(s);
	if (!cm) {
		gs_error_set(err, "k8s/device-plugin-configs.yaml holds no ConfigMap");
		return -1;
	}
	/* Step 7 adds the mps key; until then the ConfigMap holds the first two. */
	json_object_del(json_object_get(cm, "data"), MPS_KEY);
	rc = apply_one(lab, cm, err);
	json_decref(cm);
	return rc;
}

static void note_once(struct lab *lab, const char *text)
{
	for (size_t i = 0; i < lab->rep->notes.n; i++)
		if (!strcmp(lab->rep->notes.items[i], text))
			return;
	gs_warnings_add(&lab->rep->notes, "%s", text);
}

/*
 * The seed says an A100 40GB cut into 1g.10gb gives seven. mig-parted's
 * all-1g.10gb gives seven only on 80GB-class cards; say what it gives on
 * the card the seed names, from the same catalog the advertisement uses.
 */
static void note_seed_mig_claim(struct lab *lab)
{
	const struct catalog *cat;
	const struct catalog_gpu *a100_40;
	struct catalog_gpu_mig mig;
	struct gs_error err;

	if (catalog_builtin(&cat, &err) < 0)
		return;
	a100_40 = catalog_find_gpu(cat, "NVIDIA A100-SXM4-40GB");
	if (!a100_40 || catalog_layout_apply(cat, "all-1g.10gb", a100_40, &mig, &err) < 0 ||
	    mig.result != CATALOG_APPLY_OK || mig.n_devices != 1)
		return;
	gs_warnings_add(&lab->rep->notes,
			"lab-node-2 is an 80GB-class A100: mig-parted's all-1g.10gb gives 7 x "
			"1g.10gb there, but %d on an A100 40GB, whose seven-way profile is 1g.5gb",
			mig.devices[0].count);
}

static int sync_nodes(struct lab *lab, struct gs_error *err)
{
	struct sync_opts so = {.configmap_namespace = LAB_NS,
			       .configmap_name = CM_NAME,
			       .default_config = NULL,
			       .fallbacks = NULL,
			       .only_node = NULL,
			       .dry_run = false};
	struct sync_report sr = {0};
	int rc = sync_run(lab->c, &so, &sr, err);

	for (size_t i = 0; i < sr.n; i++) {
		const struct sync_node *n = &sr.nodes[i];
		char *res;

		if (n->outcome == SYNC_SKIPPED)
			continue;
		res = sync_resources_text(n);
		say(lab, "  node %s [config %s]: %s%s%s", n->name,
		    n->config && *n->config ? n->config : "(empty)", sync_outcome_name(n->outcome),
		    n->outcome == SYNC_FAILED ? ": " : (*res ? ", advertises " : ""),
		    n->outcome == SYNC_FAILED ? n->message : res);
		free(res);
		for (size_t w = 0; w < n->warnings.n; w++) {
			char *note = gs_xasprintf("node %s: %s", n->name, n->warnings.items[w]);
			say(lab, "    warning: %s", n->warnings.items[w]);
			note_once(lab, note);
			free(note);
		}
	}
	if (rc > 0 && !err->msg[0])
		gs_error_set(err, "some nodes could not be synced (see above)");
	if (rc == 0) {
		/* The report of the last sync is the lab's own record of the nodes. */
		sync_report_release(&lab->rep->sync);
		lab->rep->sync = sr;
	} else {
		sync_report_release(&sr);
	}
	return rc == 0 ? 0 : -1;
}

static int step_nodes(struct lab *lab, struct gs_error *err)
{
	const char *names[] = {"lab-node-0", "lab-node-1", "lab-node-2"};

	say(lab, "2-3. fake GPU nodes lab-node-0 (default), lab-node-1 (shared), "
		 "lab-node-2 (MIG mixed)");
	if (apply_file(lab, "k8s/lab-nodes.yaml", err) < 0)
		return -1;
	if (sync_nodes(lab, err) < 0)
		return -1;
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		char *path = gs_xasprintf("/api/v1/nodes/%s", names[i]);
		int w = wait_for(lab, path, node_ready, NULL, err);
		free(path);
		if (w < 0)
			return -1;
	}
	say(lab, "  nodes Ready, no not-ready taint");
	note_seed_mig_claim(lab);
	return 0;
}

static void placement_add(struct lab *lab, const char *ns, const char *pod, const char *node,
			  const char *why)
{
	struct lab_report *rep = lab->rep;

	for (size_t i = 0; i < rep->n_pods; i++) {
		struct lab_placement *p = &rep->pods[i];
		if (!strcmp(p->namespace, ns) && !strcmp(p->pod, pod)) {
			free(p->node);
			free(p->why);
			p->node = gs_xstrdup(node);
			p->why = gs_xstrdup(why);
			return;
		}
	}
	rep->pods = gs_xrealloc(rep->pods, (rep->n_pods + 1) * sizeof(*rep->pods));
	rep->pods[rep->n_pods++] = (struct lab_placement){gs_xstrdup(ns), gs_xstrdup(pod),
							  gs_xstrdup(node), gs_xstrdup(why)};
}

/* Why the scheduler could only choose where it did: resources, then selectors. */
static char *explain(const struct lab *lab, const json_t *pod)
{
	const json_t *spec = json_object_get(pod, "spec");
	const json_t *sel = json_object_get(spec, "nodeSelector");
	const json_t *containers = json_object_get(spec, "containers");
	struct strbuf sb = STRBUF_INIT;
	const json_t *c;
	const char *k;
	json_t *v;
	size_t i;

	json_array_foreach (containers, i, c) {
		json_object_foreach ((json_t *)kobj_get(c, "resources.limits"), k, v) {
			if (strncmp(k, "nvidia.com/", 11))
				continue;
			strbuf_addf(&sb, "%sneeds %s; advertised by", sb.len ? "; " : "", k);
			int any = 0;
			for (size_t n = 0; n < lab->rep->sync.n; n++) {
				const struct sync_node *sn = &lab->rep->sync.nodes[n];
				const json_t *q = json_object_get(sn->resources, k);
				if (q && strcmp(json_string_value(q), "0")) {
					strbuf_addf(&sb, " %s(%s)", sn->name, json_string_value(q));
					any = 1;
				}
			}
			if (!any)
				strbuf_addstr(&sb, " no node");
		}
	}
	json_object_foreach ((json_t *)sel, k, v) {
		strbuf_addf(&sb, "%snodeSelector %s=%s", sb.len ? "; " : "", k,
			    json_is_string(v) ? json_string_value(v) : "?");
	}
	return strbuf_detach(&sb, NULL);
}

/* Create the pods of a file, then wait for the scheduler's verdict on each. */
static int place_pods(struct lab *lab, const char *rel, struct gs_error *err)
{
	struct ydoc_stream *s;
	int rc = 0;

	if (apply_file(lab, rel, err) < 0 || load(lab, rel, &s, err) < 0)
		return -1;
	for (size_t i = 0; i < ydoc_stream_count(s) && rc == 0; i++) {
		const json_t *doc = ydoc_stream_doc(s, i);
		const char *ns = kobj_namespace(doc);
		const char *name = kobj_name(doc);
		char *item = NULL;
		json_t *pod = NULL;
		char *why;

		if (!json_is_object(doc) || apply_paths(doc, NULL, &item, err) < 0) {
			rc = json_is_object(doc) ? -1 : 0;
			continue;
		}
		rc = wait_for(lab, item, pod_scheduled, &pod, err);
		free(item);
		if (rc < 0) {
			gs_error_prefix(err, "pod %s/%s was not scheduled: ", ns, name);
			json_decref(pod);
			break;
		}
		why = explain(lab, doc);
		placement_add(lab, ns, name, kobj_string(pod, "spec.nodeName"), why);
		say(lab, "  pod %s/%s -> %s (%s)", ns, name, kobj_string(pod, "spec.nodeName"),
		    why);
		free(why);
		json_decref(pod);
	}
	ydoc_stream_free(s);
	return rc;
}

static const char *placed_on(const struct lab *lab, const char *ns, const char *pod)
{
	for (size_t i = 0; i < lab->rep->n_pods; i++)
		if (!strcmp(lab->rep->pods[i].namespace, ns) && !strcmp(lab->rep->pods[i].pod, pod))
			return lab->rep->pods[i].node;
	return "";
}

static int step_mig_job(struct lab *lab, struct gs_error *err)
{
	say(lab, "4. mig-job and plain-gpu: no node constraints, only resource names");
	if (place_pods(lab, "k8s/mig-job.yaml", err) < 0)
		return -1;
	if (!strcmp(placed_on(lab, LAB_NS, "plain-gpu"), placed_on(lab, LAB_NS, "mig-job"))) {
		gs_error_set(err, "mig-job and plain-gpu landed on the same node %s",
			     placed_on(lab, LAB_NS, "mig-job"));
		return -1;
	}
	return 0;
}

/* Sum of nvidia.com/gpu limits of the pods in a manifest (requests default to limits). */
static int gpus_requested(struct lab *lab, const char *rel, int64_t *sum, struct gs_error *err)
{
	struct ydoc_stream *s;
	int rc = 0;

	*sum = 0;
	if (load(lab, rel, &s, err) < 0)
		return -1;
	for (size_t i = 0; i < ydoc_stream_count(s) && rc == 0; i++) {
		const json_t *c;
		size_t j;

		json_array_foreach (json_object_get(json_object_get(ydoc_stream_doc(s, i), "spec"),
						    "containers"),
				    j, c) {
			const json_t *v =
				json_object_get(kobj_get(c, "resources.limits"), "nvidia.com/gpu");
			struct quantity q;
			int64_t n;

			if (!v)
				continue;
			if (quantity_from_json(&q, v, err) < 0 || quantity_value(&q, &n) < 0) {
				gs_error_prefix(err, "%s: ", rel);
				rc = -1;
				break;
			}
			*sum += n;
		}
	}
	ydoc_stream_free(s);
	return rc;
}

static int step_quota(struct lab *lab, struct gs_error *err)
{
	struct ydoc_stream *s = NULL;
	const json_t *over;
	json_t *q = NULL;
	char *item = NULL, *coll = NULL, *text = NULL;
	int rc = -1;

	say(lab, "5. team-a quota: %s=2, two one-GPU pods, then one more", QUOTA_KEY);
	if (apply_file(lab, "k8s/gpu-quota.yaml", err) < 0)
		return -1;
	if (wait_for(lab, "/api/v1/namespaces/" TEAM_NS "/resourcequotas/" QUOTA_NAME,
		     quota_enforced, NULL, err) < 0)
		return -1;
	if (place_pods(lab, "k8s/team-a-pods.yaml", err) < 0)
		return -1;
	{
		int64_t admitted = 0;
		if (gpus_requested(lab, "k8s/team-a-pods.yaml", &admitted, err) < 0 ||
		    kube_wait(lab->c, "/api/v1/namespaces/" TEAM_NS "/resourcequotas/" QUOTA_NAME,
			      quota_used_reaches, &admitted, lab->wait_ms, 250, NULL, err) < 0)
			return -1;
	}

	if (load(lab, "k8s/team-over.yaml", &s, err) < 0)
		return -1;
	over = ydoc_stream_count(s) ? ydoc_stream_doc(s, 0) : NULL;
	if (!json_is_object(over) || apply_paths(over, &coll, &item, err) < 0) {
		if (!err->msg[0])
			gs_error_set(err, "k8s/team-over.yaml holds no object");
		goto out;
	}
	if (kube_create(lab->c, coll, over, NULL, err) == 0) {
		struct gs_error ignored;
		/* Leave no over-quota pod behind; the error below is what matters. */
		if (kube_delete(lab->c, item, NULL, NULL, &ignored) < 0) {
		}
		gs_error_set(err, "team-over was admitted: quota %s did not refuse it", QUOTA_NAME);
		goto out;
	}
	if (kube_last_status(lab->c)->code == 409 ||
	    !strstr(kube_last_status(lab->c)->message, "exceeded quota")) {
		gs_error_prefix(err, "team-over: expected a quota refusal, got: ");
		goto out;
	}
	/* What `kubectl apply -f k8s/team-over.yaml 2>&1` prints for the same refusal. */
	text = gs_xasprintf("Error from server (%s): error when creating \"k8s/team-over.yaml\": "
			    "%s\n",
			    kube_last_status(lab->c)->reason, kube_last_status(lab->c)->message);
	free(lab->rep->quota_denied);
	lab->rep->quota_denied = gs_xstrdup(kube_last_status(lab->c)->message);
	say(lab, "  refused at admission: %s", lab->rep->quota_denied);
	if (write_out(lab, "out/quota-denied.txt", text, err) < 0)
		goto out;
	if (kube_get(lab->c, "/api/v1/namespaces/" TEAM_NS "/resourcequotas/" QUOTA_NAME, &q, err) <
	    0)
		goto out;
	{
		const json_t *st = json_object_get(q, "status");
		const char *u = json_string_value(json_object_get(kobj_map(st, "used"), QUOTA_KEY));
		const char *h = json_string_value(json_object_get(kobj_map(st, "hard"), QUOTA_KEY));
		free(lab->rep->quota_used);
		lab->rep->quota_used = gs_xasprintf("%s/%s", u ? u : "?", h ? h : "?");
	}
	rc = 0;
out:
	json_decref(q);
	ydoc_stream_free(s);
	free(item);
	free(coll);
	free(text);
	return rc;
}

static int step_check(struct lab *lab, struct gs_error *err)
{
	const char *files[] = {"k8s/mig-job.yaml", "k8s/team-a-pods.yaml", "k8s/team-over.yaml",
			       "k8s/placement.yaml"};
	char *script = lab_path(lab, "bin/check-request.sh");
	int rc = 0;

	say(lab, "6. check requests before deploy (bin/check-request.sh)");
	if (access(script, X_OK) < 0) {
		gs_error_set(err, "%s is missing or not executable", script);
		free(script);
		return -1;
	}
	free(script);
	for (size_t i = 0; i < sizeof(files) / sizeof(files[0]) && rc == 0; i++) {
		char *path = lab_path(lab, files[i]);
		struct check_report cr;

		check_report_init(&cr);
		rc = check_file(path, 0, CHECK_ENGINE_STREAM, &cr, err);
		if (rc == 0) {
			bool refused = false;
			for (size_t f = 0; f < cr.n; f++)
				refused |= cr.items[f].kind == CHECK_NOTE;
			say(lab, "  %s: %s", files[i],
			    refused ? "refused by the apiserver"
			    : cr.n  ? "OVER"
				    : "OK");
			for (size_t f = 0; f < cr.n; f++) {
				if (cr.items[f].kind == CHECK_NOTE)
					say(lab, "    %s", cr.items[f].text);
				else
					say(lab, "    OVER=%s=%s", cr.items[f].container,
					    cr.items[f].count);
			}
		}
		check_report_release(&cr);
		free(path);
	}
	return rc;
}

static int step_mps_and_isolation(struct lab *lab, struct gs_error *err)
{
	char *text;
	int rc;

	say(lab, "7. add the mps config; isolation of each method");
	if (apply_file(lab, "k8s/device-plugin-configs.yaml", err) < 0)
		return -1;
	if (sync_nodes(lab, err) < 0)
		return -1;
	text = isolation_env_text();
	rc = write_out(lab, "out/isolation.txt", text, err);
	free(text);
	return rc;
}

static int step_placement(struct lab *lab, struct gs_error *err)
{
	const char *pods[] = {"prod-inference", "notebook", "batch-train"};
	struct strbuf sb = STRBUF_INIT;
	int rc;

	say(lab, "8. place prod-inference, notebook and batch-train by node labels");
	if (place_pods(lab, "k8s/placement.yaml", err) < 0)
		return -1;
	for (size_t i = 0; i < sizeof(pods) / sizeof(pods[0]); i++)
		strbuf_addf(&sb, "%s=%s\n", pods[i], placed_on(lab, LAB_NS, pods[i]));
	rc = write_out(lab, "out/placement.txt", sb.buf, err);
	strbuf_release(&sb);
	return rc;
}

/* After the eight steps: the fleet as it now stands, as one page (docs/report.md). */
static int step_fleet(struct lab *lab, struct gs_error *err)
{
	struct report_model *m = NULL;
	struct strbuf sb = STRBUF_INIT;
	int rc = -1;

	if (report_live(lab->c, LAB_NS, CM_NAME, &m, err) == 0) {
		report_html(m, &sb);
		rc = write_out(lab, "out/fleet.html", sb.buf, err);
	}
	strbuf_release(&sb);
	report_model_free(m);
	return rc;
}

int lab_run(struct kube_client *c, const struct lab_opts *o, struct lab_report *rep,
	    struct gs_error *err)
{
	struct lab lab = {.c = c,
			  .o = o,
			  .rep = rep,
			  .dir = o->dir ? o->dir : ".",
			  .wait_ms = o->wait_ms ? o->wait_ms : 120000};
	int (*steps[])(struct lab *, struct gs_error *) = {
		step_namespaces_and_configmap, step_nodes,     step_mig_job, step_quota, step_check,
		step_mps_and_isolation,	       step_placement, step_fleet,
	};

	memset(rep, 0, sizeof(*rep));
	gs_warnings_init(&rep->notes);
	for (size_t i = 0; i < sizeof(steps) / sizeof(steps[0]); i++)
		if (steps[i](&lab, err) < 0)
			return -1;
	return 0;
}

void lab_report_release(struct lab_report *rep)
{
	sync_report_release(&rep->sync);
	for (size_t i = 0; i < rep->n_pods; i++) {
		free(rep->pods[i].namespace);
		free(rep->pods[i].pod);
		free(rep->pods[i].node);
		free(rep->pods[i].why);
	}
	free(rep->pods);
	free(rep->quota_denied);
	free(rep->quota_used);
	gs_warnings_release(&rep->notes);
	memset(rep, 0, sizeof(*rep));
}
