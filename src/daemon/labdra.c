#include "daemon/labdra.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/escape.h"
#include "daemon/apply.h"
#include "daemon/labkit.h"
#include "dra/draprepare.h"
#include "dra/draslice.h"
#include "model/kobj.h"
#include "kube/kubeclient.h"
#include "base/strbuf.h"
#include "fleet/sync.h"
#include "yaml/ydoc.h"
#include "base/banned.h"

#define DEMO_NS "dra-demo"
#define TEAM_NS "dra-team-a"
#define QUOTA_NAME "gpu-quota"
#define QUOTA_KEY "gpu.nvidia.com.deviceclass.resource.k8s.io/devices"
#define CLAIMS "/apis/resource.k8s.io/v1/namespaces/%s/resourceclaims"

static const char *const node_names[] = {"dra-node-0", "dra-node-1", "dra-node-2"};
#define MIG_NODE "dra-node-2"

struct labdra {
	struct labkit kit;
	struct labdra_report *rep;
};

/* ---- conditions ---- */

/* Gone, or at least not being deleted: a namespace still Terminating refuses new objects. */
static int not_terminating(const json_t *ns, void *arg, struct gs_error *why)
{
	(void)arg;
	if (!ns || strcmp(kobj_text(ns, "status.phase"), "Terminating"))
		return 1;
	gs_error_set(why, "the namespace is still Terminating from an earlier run");
	return 0;
}

static int node_ready(const json_t *node, void *arg, struct gs_error *why)
{
	const json_t *v;
	size_t i;
	int ready = 0;

	(void)arg;
	json_array_foreach ((json_t *)kobj_get(node, "status.conditions"), i, v) {
		if (!strcmp(kobj_text(v, "type"), "Ready"))
			ready = !strcmp(kobj_text(v, "status"), "True");
	}
	json_array_foreach ((json_t *)kobj_get(node, "spec.taints"), i, v) {
		if (!strcmp(kobj_text(v, "key"), "node.kubernetes.io/not-ready"))
			ready = 0;
	}
	if (!ready)
		gs_error_set(why, "not Ready, or still tainted not-ready (are kwok and "
				  "kube-controller-manager running?)");
	return ready;
}

/* Bound, or the scheduler's reason why not. */
static int pod_scheduled(const json_t *pod, void *arg, struct gs_error *why)
{
	const json_t *v;
	size_t i;

	(void)arg;
	if (kobj_string(pod, "spec.nodeName"))
		return 1;
	json_array_foreach ((json_t *)kobj_get(pod, "status.conditions"), i, v) {
		if (!strcmp(kobj_text(v, "type"), "PodScheduled") && kobj_string(v, "message")) {
			gs_error_set(why, "%s", kobj_text(v, "message"));
			return 0;
		}
	}
	gs_error_set(why, pod ? "the scheduler has not decided yet (no event: is "
				"resourceclaim-controller in kube-controller-manager's list?)"
			      : "the pod does not exist");
	return 0;
}

static int pod_running(const json_t *pod, void *arg, struct gs_error *why)
{
	(void)arg;
	if (!strcmp(kobj_text(pod, "status.phase"), "Running"))
		return 1;
	gs_error_set(why, "phase %s",
		     *kobj_text(pod, "status.phase") ? kobj_text(pod, "status.phase") : "unset");
	return 0;
}

static int quota_hard(const json_t *q, void *arg, struct gs_error *why)
{
	(void)arg;
	if (json_object_get(kobj_get(q, "status.hard"), QUOTA_KEY))
		return 1;
	gs_error_set(why, "status.hard has no %s yet (resourcequota controller)", QUOTA_KEY);
	return 0;
}

/* ---- steps ---- */

static int step_namespaces(struct labdra *lab, struct gs_error *err)
{
	const char *nss[] = {DEMO_NS, TEAM_NS};

	labkit_say(&lab->kit, "1. namespaces %s and %s", DEMO_NS, TEAM_NS);
	for (size_t i = 0; i < sizeof(nss) / sizeof(nss[0]); i++) {
		char *path = gs_xasprintf("/api/v1/namespaces/%s", nss[i]);
		int w = labkit_wait(&lab->kit, path, not_terminating, NULL, NULL, err);
		free(path);
		if (w < 0)
			return -1;
	}
	if (labkit_apply_file(&lab->kit, "k8s/dra/namespaces.yaml", err) < 0)
		return -1;
	/* The ServiceAccount admission plugin refuses pods until "default" exists. */
	for (size_t i = 0; i < sizeof(nss) / sizeof(nss[0]); i++) {
		char *path = gs_xasprintf("/api/v1/namespaces/%s/serviceaccounts/default", nss[i]);
		int w = labkit_wait(&lab->kit, path, labkit_exists, NULL, NULL, err);
		free(path);
		if (w < 0)
			return -1;
	}
	return 0;
}

/* What sync does for the lab's nodes: the DRA driver reads no device-plugin config. */
static int publish(struct labdra *lab, struct gs_error *err)
{
	json_t *nodes = json_array(), *slices = NULL, *classes = NULL;
	json_t *cm = json_pack("{s:s, s:s, s:{s:s}, s:{}}", "apiVersion", "v1", "kind", "ConfigMap",
			       "metadata", "name", "none", "data");
	struct sync_opts so = {0};
	struct sync_report *sr = &lab->rep->sync;
	int rc = -1;

	for (size_t i = 0; i < sizeof(node_names) / sizeof(node_names[0]); i++) {
		char *path = gs_xasprintf("/api/v1/nodes/%s", node_names[i]);
		json_t *n = NULL;
		int g = kube_get(lab->kit.c, path, &n, err);

		free(path);
		if (g < 0)
			goto out;
		json_array_append_new(nodes, n);
	}
	sync_report_release(sr);
	if (sync_plan(cm, nodes, &so, sr, err) < 0 ||
	    sync_read_dra(lab->kit.c, &slices, &classes, err) < 0)
		goto out;
	sync_plan_dra(sr, slices, classes);
	if (sync_write(lab->kit.c, sr) < 0)
		goto out; /* never: failures are per node, below */
	for (size_t i = 0; i < sr->n_ops; i++)
		if (!sr->ops[i].node)
			labkit_say(&lab->kit, "  DeviceClass %s %s", sr->ops[i].name,
				   sr->ops[i].action == SYNC_OP_CREATE ? "created" : "updated");
	for (size_t i = 0; i < sr->n; i++) {
		const struct sync_node *n = &sr->nodes[i];

		if (n->outcome == SYNC_FAILED) {
			gs_error_set(err, "node %s could not be published: %s", n->name,
				     n->message);
			goto out;
		}
		labkit_say(&lab->kit, "  node %s: %s, ResourceSlice of %zu devices", n->name,
			   sync_outcome_name(n->outcome),
			   json_array_size(kobj_get(n->slice, "spec.devices")));
	}
	rc = 0;
out:
	json_decref(cm);
	json_decref(nodes);
	json_decref(slices);
	json_decref(classes);
	return rc;
}

static int step_nodes(struct labdra *lab, struct gs_error *err)
{
	labkit_say(&lab->kit,
		   "2-3. DRA nodes dra-node-0 (2 x A100 80GB), dra-node-1 (2 x T4), dra-node-2 "
		   "(A100 80GB in all-1g.10gb): the driver's ResourceSlices and DeviceClasses");
	/*
	 * Twice: gpushare's controller publishes the same nodes as soon as they
	 * appear, and a slice both made at once is settled by the second pass
	 * (two current slices with the same devices: one is kept).
	 */
	if (labkit_apply_file(&lab->kit, "k8s/dra/nodes.yaml", err) < 0 || publish(lab, err) < 0 ||
	    publish(lab, err) < 0)
		return -1;
	for (size_t i = 0; i < sizeof(node_names) / sizeof(node_names[0]); i++) {
		char *path = gs_xasprintf("/api/v1/nodes/%s", node_names[i]);
		int w = labkit_wait(&lab->kit, path, node_ready, NULL, NULL, err);
		free(path);
		if (w < 0)
			return -1;
	}
	labkit_say(&lab->kit, "  nodes Ready, no not-ready taint");
	return 0;
}

static struct labdra_placement *placement(struct labdra *lab, const char *ns, const char *pod)
{
	struct labdra_report *rep = lab->rep;
	struct labdra_placement *p;

	for (size_t i = 0; i < rep->n_pods; i++)
		if (!strcmp(rep->pods[i].namespace, ns) && !strcmp(rep->pods[i].pod, pod))
			return &rep->pods[i];
	rep->pods = gs_xrealloc(rep->pods, (rep->n_pods + 1) * sizeof(*rep->pods));
	p = &rep->pods[rep->n_pods++];
	memset(p, 0, sizeof(*p));
	p->namespace = gs_xstrdup(ns);
	p->pod = gs_xstrdup(pod);
	return p;
}

/* The pod's first claim: named in the pod, or made for it from a template. */
static const char *first_claim(const json_t *pod)
{
	const json_t *rc = json_array_get(kobj_get(pod, "spec.resourceClaims"), 0);
	const json_t *st = json_array_get(kobj_get(pod, "status.resourceClaimStatuses"), 0);

	if (kobj_string(rc, "resourceClaimName"))
		return kobj_string(rc, "resourceClaimName");
	return kobj_string(st, "resourceClaimName");
}

/* Wait until the pod is bound; where it went is read from its claim's status.allocation. */
static int place(struct labdra *lab, const char *ns, const char *name, struct gs_error *err)
{
	char *path = gs_xasprintf("/api/v1/namespaces/%s/pods/%s", ns, name), *cpath = NULL;
	json_t *pod = NULL, *claim = NULL;
	struct labdra_placement *p;
	struct strbuf devs = STRBUF_INIT;
	const json_t *r, *terms;
	size_t i;
	int rc = -1;

	if (labkit_wait(&lab->kit, path, pod_scheduled, NULL, &pod, err) < 0) {
		gs_error_prefix(err, "pod %s/%s was not scheduled: ", ns, name);
		goto out;
	}
	if (!first_claim(pod)) {
		gs_error_set(err, "pod %s/%s is bound but names no ResourceClaim", ns, name);
		goto out;
	}
	cpath = gs_xasprintf(CLAIMS "/%s", ns, first_claim(pod));
	if (kube_get(lab->kit.c, cpath, &claim, err) < 0)
		goto out;
	json_array_foreach ((json_t *)kobj_get(claim, "status.allocation.devices.results"), i, r)
		strbuf_addf(&devs, "%s%s/%s", devs.len ? " " : "", kobj_text(r, "pool"),
			    kobj_text(r, "device"));
	terms = kobj_get(claim, "status.allocation.nodeSelector.nodeSelectorTerms");
	p = placement(lab, ns, name);
	free(p->claim);
	free(p->node);
	free(p->device);
	p->claim = gs_xstrdup(kobj_name(claim));
	p->node = gs_xstrdup(json_string_value(json_array_get(
		kobj_get(json_array_get(kobj_get(json_array_get(terms, 0), "matchFields"), 0),
			 "values"),
		0)));
	if (!p->node)
		p->node = gs_xstrdup("");
	p->device = strbuf_detach(&devs, NULL);
	labkit_say(&lab->kit, "  pod %s/%s -> %s %s (claim %s, status.allocation)", ns, name,
		   p->node, p->device, p->claim);
	rc = 0;
out:
	strbuf_release(&devs);
	json_decref(pod);
	json_decref(claim);
	free(path);
	free(cpath);
	return rc;
}

static const struct labdra_placement *placed(const struct labdra *lab, const char *ns,
					     const char *pod)
{
	for (size_t i = 0; i < lab->rep->n_pods; i++)
		if (!strcmp(lab->rep->pods[i].namespace, ns) && !strcmp(lab->rep->pods[i].pod, pod))
			return &lab->rep->pods[i];
	return NULL;
}

static int step_mig_job(struct labdra *lab, struct gs_error *err)
{
	const struct labdra_placement *mig, *plain;

	labkit_say(&lab->kit, "4. mig-job (mig.nvidia.com, profile == '1g.10gb') and plain-gpu "
			      "(gpu.nvidia.com)");
	if (labkit_apply_file(&lab->kit, "k8s/dra/mig-job.yaml", err) < 0 ||
	    place(lab, DEMO_NS, "mig-job", err) < 0 || place(lab, DEMO_NS, "plain-gpu", err) < 0)
		return -1;
	mig = placed(lab, DEMO_NS, "mig-job");
	plain = placed(lab, DEMO_NS, "plain-gpu");
	if (strcmp(mig->node, MIG_NODE) || !strstr(mig->device, "-mig-1g10gb-")) {
		gs_error_set(err, "mig-job got %s on %s, not a 1g.10gb MIG device of %s",
			     mig->device, mig->node, MIG_NODE);
		return -1;
	}
	if (!strcmp(plain->node, MIG_NODE) || strstr(plain->device, "-mig-")) {
		gs_error_set(err,
			     "plain-gpu got %s on %s: a whole-GPU claim must never get a MIG "
			     "device",
			     plain->device, plain->node);
		return -1;
	}
	return 0;
}

/* A list's items carry no kind or apiVersion: give them theirs. */
static void kinds(json_t *list, const char *kind)
{
	size_t i;
	json_t *o;

	json_array_foreach (json_object_get(list, "items"), i, o) {
		json_object_set_new(o, "kind", json_string(kind));
		json_object_set_new(o, "apiVersion", json_string("resource.k8s.io/v1"));
	}
}

/* What the driver's prepare gives ts-pod-1 on its node now, with the node's driver gates. */
static int prepare_now(struct labdra *lab, const char *node_name, struct draprepare_result *res,
		       struct gs_error *err)
{
	char *npath = gs_xasprintf("/api/v1/nodes/%s", node_name);
	char *claims_path = gs_xasprintf(CLAIMS, DEMO_NS);
	struct kube_list_opts lo = {.label_selector = NULL, .field_selector = NULL};
	struct draprepare_gates cluster, gates;
	json_t *node = NULL, *pod = NULL, *claims = NULL, *slices = NULL;
	char *field = gs_xasprintf("spec.nodeName=%s", node_name);
	int rc = -1;

	lo.field_selector = field;
	draprepare_gates_default(&cluster);
	if (kube_get(lab->kit.c, npath, &node, err) < 0 ||
	    kube_get(lab->kit.c, "/api/v1/namespaces/" DEMO_NS "/pods/ts-pod-1", &pod, err) < 0 ||
	    kube_list(lab->kit.c, claims_path, NULL, &claims, err) < 0 ||
	    kube_list(lab->kit.c, "/apis/resource.k8s.io/v1/resourceslices", &lo, &slices, err) <
		    0 ||
	    draprepare_gates_for_node(node, &cluster, &gates, err) < 0)
		goto out;
	kinds(claims, "ResourceClaim");
	kinds(slices, "ResourceSlice");
	rc = draprepare_pod(pod, json_object_get(claims, "items"), json_object_get(slices, "items"),
			    &gates, NULL, 0, res, err);
out:
	free(npath);
	free(claims_path);
	free(field);
	json_decref(node);
	json_decref(pod);
	json_decref(claims);
	json_decref(slices);
	return rc;
}

/* The kubelet's Warning for ts-pod-1 exists (the controller played prepare). */
static int prepare_event(const json_t *list, void *arg, struct gs_error *why)
{
	const json_t *ev;
	size_t i;

	(void)arg;
	json_array_foreach ((json_t *)json_object_get(list, "items"), i, ev) {
		if (!strcmp(kobj_text(ev, "involvedObject.name"), "ts-pod-1") &&
		    !strcmp(kobj_text(ev, "reason"), DRAPREPARE_EVENT_REASON))
			return 1;
	}
	gs_error_set(why, "no %s event on ts-pod-1", DRAPREPARE_EVENT_REASON);
	return 0;
}

static int set_gates(struct labdra *lab, const char *node, const char *gates, struct gs_error *err)
{
	char *path = gs_xasprintf("/api/v1/nodes/%s", node);
	json_t *patch =
		json_pack("{s:{s:{s:o}}}", "metadata", "annotations", DRAPREPARE_ANNOTATION_GATES,
			  gates ? json_string(gates) : json_null());
	int rc = kube_patch(lab->kit.c, path, KUBE_PATCH_MERGE, patch, NULL, err);

	json_decref(patch);
	free(path);
	return rc;
}

static int step_time_slicing(struct labdra *lab, struct gs_error *err)
{
	const struct labdra_placement *p1, *p2;
	struct draprepare_result res;
	struct strbuf out = STRBUF_INIT;
	const char *pods[] = {"ts-pod-1", "ts-pod-2"};
	char *node = NULL;
	int rc = -1;

	labkit_say(&lab->kit,
		   "5. one ResourceClaim shared-t4 (GpuConfig TimeSlicing) named by two pods");
	draprepare_result_init(&res);
	/* The driver starts with its default gates. */
	if (set_gates(lab, "dra-node-1", NULL, err) < 0 ||
	    labkit_apply_file(&lab->kit, "k8s/dra/shared-t4.yaml", err) < 0 ||
	    place(lab, DEMO_NS, pods[0], err) < 0 || place(lab, DEMO_NS, pods[1], err) < 0)
		goto out;
	p1 = placed(lab, DEMO_NS, pods[0]);
	p2 = placed(lab, DEMO_NS, pods[1]);
	if (strcmp(p1->device, p2->device) || strcmp(p1->claim, p2->claim)) {
		gs_error_set(err,
			     "ts-pod-1 got %s and ts-pod-2 %s: one shared claim gives one device",
			     p1->device, p2->device);
		goto out;
	}
	node = gs_xstrdup(p1->node);
	if (prepare_now(lab, node, &res, err) < 0)
		goto out;
	if (res.outcome == DRAPREPARE_OK) {
		gs_error_set(err,
			     "the driver's prepare accepted TimeSlicing with its default gates");
		goto out;
	}
	free(lab->rep->prepare_before);
	lab->rep->prepare_before = gs_xstrdup(res.event_message);
	labkit_say(&lab->kit, "  default driver gates: Warning %s: %s", DRAPREPARE_EVENT_REASON,
		   res.event_message);
	escape_addf(&out, "# the driver's default feature gates\n%s/%s Warning %s: %s\n", DEMO_NS,
		    pods[0], DRAPREPARE_EVENT_REASON, res.event_message);
	{
		/* Where gpushare's controller plays the kubelet, the cluster shows it too. */
		struct gs_error none;
		long keep = lab->kit.wait_ms;

		lab->kit.wait_ms = keep < 15000 ? keep : 15000;
		if (labkit_wait(&lab->kit, "/api/v1/namespaces/" DEMO_NS "/events", prepare_event,
				NULL, NULL, &none) == 0)
			labkit_say(&lab->kit,
				   "  the cluster shows it: ts-pod-1 Pending (ContainerCreating), "
				   "Warning %s",
				   DRAPREPARE_EVENT_REASON);
		else
			labkit_say(&lab->kit, "  (no controller plays the kubelet's prepare here: "
					      "the pods run as "
					      "kwok lets them)");
		lab->kit.wait_ms = keep;
	}

	if (set_gates(lab, node, "TimeSlicingSettings=true", err) < 0)
		goto out;
	draprepare_result_release(&res);
	draprepare_result_init(&res);
	if (prepare_now(lab, node, &res, err) < 0)
		goto out;
	if (res.outcome != DRAPREPARE_OK || !res.n_devices) {
		gs_error_set(err, "prepare with TimeSlicingSettings=true: %s",
			     res.event_message ? res.event_message : "no device");
		goto out;
	}
	free(lab->rep->prepare_after);
	lab->rep->prepare_after =
		gs_xasprintf("%s %s, sharing %s, interval %s (%s config)", res.devices[0].device,
			     res.devices[0].uuid, res.devices[0].sharing, res.devices[0].interval,
			     res.devices[0].config_source);
	labkit_say(&lab->kit, "  %s=TimeSlicingSettings=true on %s: prepared %s",
		   DRAPREPARE_ANNOTATION_GATES, node, lab->rep->prepare_after);
	escape_addf(&out, "# %s: TimeSlicingSettings=true\n%s/%s prepared: %s\n",
		    DRAPREPARE_ANNOTATION_GATES, DEMO_NS, pods[0], lab->rep->prepare_after);
	for (size_t i = 0; i < sizeof(pods) / sizeof(pods[0]); i++) {
		char *path = gs_xasprintf("/api/v1/namespaces/%s/pods/%s", DEMO_NS, pods[i]);
		int w = labkit_wait(&lab->kit, path, pod_running, NULL, NULL, err);

		free(path);
		if (w < 0) {
			gs_error_prefix(err, "pod %s/%s does not run: ", DEMO_NS, pods[i]);
			goto out;
		}
	}
	labkit_say(&lab->kit, "  ts-pod-1 and ts-pod-2 Running on %s", p1->device);
	rc = labkit_write_out(&lab->kit, "out/dra/prepare.txt", out.buf ? out.buf : "", err);
out:
	draprepare_result_release(&res);
	strbuf_release(&out);
	free(node);
	return rc;
}

static int step_quota(struct labdra *lab, struct gs_error *err)
{
	const char *qpath = "/api/v1/namespaces/" TEAM_NS "/resourcequotas/" QUOTA_NAME;
	struct labkit_quota_want two = {.key = QUOTA_KEY, .want = 2};

	labkit_say(&lab->kit, "6. %s quota: %s=2, two one-GPU claims, then one more", TEAM_NS,
		   QUOTA_KEY);
	if (labkit_apply_file(&lab->kit, "k8s/dra/gpu-quota.yaml", err) < 0 ||
	    labkit_wait(&lab->kit, qpath, quota_hard, NULL, NULL, err) < 0 ||
	    labkit_apply_file(&lab->kit, "k8s/dra/team-a-claims.yaml", err) < 0 ||
	    labkit_wait(&lab->kit, qpath, labkit_quota_used_reaches, &two, NULL, err) < 0 ||
	    place(lab, TEAM_NS, "team-a-0", err) < 0 || place(lab, TEAM_NS, "team-a-1", err) < 0)
		return -1;
	return labkit_quota_refuses(&lab->kit, "k8s/dra/team-over.yaml", "out/dra/quota-denied.txt",
				    "creation", qpath, QUOTA_NAME, QUOTA_KEY,
				    &lab->rep->quota_denied, &lab->rep->quota_used, err);
}

static int step_placement(struct labdra *lab, struct gs_error *err)
{
	struct strbuf sb = STRBUF_INIT;
	int rc;

	labkit_say(&lab->kit, "7. where every claim landed (status.allocation)");
	for (size_t i = 0; i < lab->rep->n_pods; i++) {
		const struct labdra_placement *p = &lab->rep->pods[i];
		strbuf_addf(&sb, "%s/%s=%s %s claim=%s\n", p->namespace, p->pod, p->node, p->device,
			    p->claim);
	}
	rc = labkit_write_out(&lab->kit, "out/dra/placement.txt", sb.buf ? sb.buf : "", err);
	strbuf_release(&sb);
	return rc;
}

int labdra_run(struct kube_client *c, const struct lab_opts *o, struct labdra_report *rep,
	       struct gs_error *err)
{
	struct labdra lab = {.rep = rep};
	int (*steps[])(struct labdra *, struct gs_error *) = {
		step_namespaces,   step_nodes, step_mig_job,
		step_time_slicing, step_quota, step_placement,
	};

	labkit_init(&lab.kit, c, o);
	memset(rep, 0, sizeof(*rep));
	gs_warnings_init(&rep->notes);
	for (size_t i = 0; i < sizeof(steps) / sizeof(steps[0]); i++)
		if (steps[i](&lab, err) < 0)
			return -1;
	return 0;
}

void labdra_report_release(struct labdra_report *rep)
{
	sync_report_release(&rep->sync);
	for (size_t i = 0; i < rep->n_pods; i++) {
		free(rep->pods[i].namespace);
		free(rep->pods[i].pod);
		free(rep->pods[i].claim);
		free(rep->pods[i].node);
		free(rep->pods[i].device);
	}
	free(rep->pods);
	free(rep->quota_denied);
	free(rep->quota_used);
	free(rep->prepare_before);
	free(rep->prepare_after);
	gs_warnings_release(&rep->notes);
	memset(rep, 0, sizeof(*rep));
}
