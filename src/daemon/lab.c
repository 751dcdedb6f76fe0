#include "daemon/lab.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "daemon/apply.h"
#include "daemon/labkit.h"
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
	struct labkit kit;
	struct lab_report *rep;
};

/* ---- conditions to wait for ---- */

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

/* ---- steps ---- */

static int step_namespaces_and_configmap(struct lab *lab, struct gs_error *err)
{
	struct ydoc_stream *s;
	json_t *cm = NULL;
	const char *nss[] = {LAB_NS, TEAM_NS};
	int rc = -1;

	labkit_say(&lab->kit,
		   "1. namespaces and the device-plugin ConfigMap (keys default, shared)");
	if (labkit_apply_file(&lab->kit, "k8s/namespaces.yaml", err) < 0)
		return -1;
	/* The ServiceAccount admission plugin refuses pods until "default" exists. */
	for (size_t i = 0; i < sizeof(nss) / sizeof(nss[0]); i++) {
		char *path = gs_xasprintf("/api/v1/namespaces/%s/serviceaccounts/default", nss[i]);
		int w = labkit_wait(&lab->kit, path, labkit_exists, NULL, NULL, err);
		free(path);
		if (w < 0)
			return -1;
	}
	if (labkit_load(&lab->kit, "k8s/device-plugin-configs.yaml", &s, err) < 0)
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
	rc = labkit_apply_one(&lab->kit, cm, err);
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
	int rc = sync_run(lab->kit.c, &so, &sr, err);

	for (size_t i = 0; i < sr.n; i++) {
		const struct sync_node *n = &sr.nodes[i];
		char *res;

		if (n->outcome == SYNC_SKIPPED)
			continue;
		res = sync_resources_text(n);
		labkit_say(&lab->kit, "  node %s [config %s]: %s%s%s", n->name,
			   n->config && *n->config ? n->config : "(empty)",
			   sync_outcome_name(n->outcome),
			   n->outcome == SYNC_FAILED ? ": " : (*res ? ", advertises " : ""),
			   n->outcome == SYNC_FAILED ? n->message : res);
		free(res);
		for (size_t w = 0; w < n->warnings.n; w++) {
			char *note = gs_xasprintf("node %s: %s", n->name, n->warnings.items[w]);
			labkit_say(&lab->kit, "    warning: %s", n->warnings.items[w]);
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

	labkit_say(&lab->kit, "2-3. fake GPU nodes lab-node-0 (default), lab-node-1 (shared), "
			      "lab-node-2 (MIG mixed)");
	if (labkit_apply_file(&lab->kit, "k8s/lab-nodes.yaml", err) < 0)
		return -1;
	if (sync_nodes(lab, err) < 0)
		return -1;
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		char *path = gs_xasprintf("/api/v1/nodes/%s", names[i]);
		int w = labkit_wait(&lab->kit, path, node_ready, NULL, NULL, err);
		free(path);
		if (w < 0)
			return -1;
	}
	labkit_say(&lab->kit, "  nodes Ready, no not-ready taint");
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

	if (labkit_apply_file(&lab->kit, rel, err) < 0 || labkit_load(&lab->kit, rel, &s, err) < 0)
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
		rc = labkit_wait(&lab->kit, item, pod_scheduled, NULL, &pod, err);
		free(item);
		if (rc < 0) {
			gs_error_prefix(err, "pod %s/%s was not scheduled: ", ns, name);
			json_decref(pod);
			break;
		}
		why = explain(lab, doc);
		placement_add(lab, ns, name, kobj_string(pod, "spec.nodeName"), why);
		labkit_say(&lab->kit, "  pod %s/%s -> %s (%s)", ns, name,
			   kobj_string(pod, "spec.nodeName"), why);
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
	labkit_say(&lab->kit, "4. mig-job and plain-gpu: no node constraints, only resource names");
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
	if (labkit_load(&lab->kit, rel, &s, err) < 0)
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
	const char *qpath = "/api/v1/namespaces/" TEAM_NS "/resourcequotas/" QUOTA_NAME;
	struct labkit_quota_want admitted = {.key = QUOTA_KEY, .want = 0};

	labkit_say(&lab->kit, "5. team-a quota: %s=2, two one-GPU pods, then one more", QUOTA_KEY);
	if (labkit_apply_file(&lab->kit, "k8s/gpu-quota.yaml", err) < 0 ||
	    labkit_wait(&lab->kit, qpath, quota_enforced, NULL, NULL, err) < 0 ||
	    place_pods(lab, "k8s/team-a-pods.yaml", err) < 0 ||
	    gpus_requested(lab, "k8s/team-a-pods.yaml", &admitted.want, err) < 0 ||
	    labkit_wait(&lab->kit, qpath, labkit_quota_used_reaches, &admitted, NULL, err) < 0)
		return -1;
	return labkit_quota_refuses(&lab->kit, "k8s/team-over.yaml", "out/quota-denied.txt",
				    "admission", qpath, QUOTA_NAME, QUOTA_KEY,
				    &lab->rep->quota_denied, &lab->rep->quota_used, err);
}

static int step_check(struct lab *lab, struct gs_error *err)
{
	const char *files[] = {"k8s/mig-job.yaml", "k8s/team-a-pods.yaml", "k8s/team-over.yaml",
			       "k8s/placement.yaml"};
	char *script = labkit_path(&lab->kit, "bin/check-request.sh");
	int rc = 0;

	labkit_say(&lab->kit, "6. check requests before deploy (bin/check-request.sh)");
	if (access(script, X_OK) < 0) {
		gs_error_set(err, "%s is missing or not executable", script);
		free(script);
		return -1;
	}
	free(script);
	for (size_t i = 0; i < sizeof(files) / sizeof(files[0]) && rc == 0; i++) {
		char *path = labkit_path(&lab->kit, files[i]);
		struct check_report cr;

		check_report_init(&cr);
		rc = check_file(path, 0, CHECK_ENGINE_STREAM, &cr, err);
		if (rc == 0) {
			bool refused = false;
			for (size_t f = 0; f < cr.n; f++)
				refused |= cr.items[f].kind == CHECK_NOTE;
			labkit_say(&lab->kit, "  %s: %s", files[i],
				   refused ? "refused by the apiserver"
				   : cr.n  ? "OVER"
					   : "OK");
			for (size_t f = 0; f < cr.n; f++) {
				if (cr.items[f].kind == CHECK_NOTE)
					labkit_say(&lab->kit, "    %s", cr.items[f].text);
				else
					labkit_say(&lab->kit, "    OVER=%s=%s",
						   cr.items[f].container, cr.items[f].count);
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

	labkit_say(&lab->kit, "7. add the mps config; isolation of each method");
	if (labkit_apply_file(&lab->kit, "k8s/device-plugin-configs.yaml", err) < 0)
		return -1;
	if (sync_nodes(lab, err) < 0)
		return -1;
	text = isolation_env_text();
	rc = labkit_write_out(&lab->kit, "out/isolation.txt", text, err);
	free(text);
	return rc;
}

static int step_placement(struct lab *lab, struct gs_error *err)
{
	const char *pods[] = {"prod-inference", "notebook", "batch-train"};
	struct strbuf sb = STRBUF_INIT;
	int rc;

	labkit_say(&lab->kit, "8. place prod-inference, notebook and batch-train by node labels");
	if (place_pods(lab, "k8s/placement.yaml", err) < 0)
		return -1;
	for (size_t i = 0; i < sizeof(pods) / sizeof(pods[0]); i++)
		strbuf_addf(&sb, "%s=%s\n", pods[i], placed_on(lab, LAB_NS, pods[i]));
	rc = labkit_write_out(&lab->kit, "out/placement.txt", sb.buf, err);
	strbuf_release(&sb);
	return rc;
}

/* After the eight steps: the fleet as it now stands, as one page (docs/guide/report.md). */
static int step_fleet(struct lab *lab, struct gs_error *err)
{
	struct report_model *m = NULL;
	struct strbuf sb = STRBUF_INIT;
	int rc = -1;

	if (report_live(lab->kit.c, LAB_NS, CM_NAME, &m, err) == 0) {
		report_html(m, &sb);
		rc = labkit_write_out(&lab->kit, "out/fleet.html", sb.buf, err);
	}
	strbuf_release(&sb);
	report_model_free(m);
	return rc;
}

int lab_run(struct kube_client *c, const struct lab_opts *o, struct lab_report *rep,
	    struct gs_error *err)
{
	struct lab lab = {.rep = rep};
	int (*steps[])(struct lab *, struct gs_error *) = {
		step_namespaces_and_configmap, step_nodes,     step_mig_job, step_quota, step_check,
		step_mps_and_isolation,	       step_placement, step_fleet,
	};

	labkit_init(&lab.kit, c, o);
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
