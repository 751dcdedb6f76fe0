#include "engine/sync_plan.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "engine/advertise.h"
#include "engine/health.h"
#include "engine/kubeletrestart.h"
#include "engine/migwalk.h"
#include "model/catalog.h"
#include "model/defaults.h"
#include "model/dpconfig.h"
#include "dra/draprepare.h"
#include "dra/draslice.h"
#include "engine/mergepatch.h"
#include "model/nodehw.h"
#include "base/strbuf.h"
#include "model/kobj.h"
#include "base/banned.h"

const char *sync_outcome_name(enum sync_outcome o)
{
	switch (o) {
	case SYNC_UPDATED:
		return "updated";
	case SYNC_UNCHANGED:
		return "unchanged";
	case SYNC_SKIPPED:
		return "skipped";
	case SYNC_FAILED:
		return "failed";
	}
	return "?";
}

static struct sync_node *add_node(struct sync_report *rep, const char *name)
{
	struct sync_node *n;

	rep->nodes = gs_xrealloc(rep->nodes, (rep->n + 1) * sizeof(*rep->nodes));
	n = &rep->nodes[rep->n++];
	memset(n, 0, sizeof(*n));
	n->name = gs_xstrdup(name ? name : "");
	gs_warnings_init(&n->warnings);
	return n;
}

void sync_node_fail(struct sync_node *n, const char *fmt, const char *msg)
{
	n->outcome = SYNC_FAILED;
	free(n->message);
	n->message = gs_xasprintf(fmt, msg);
}

/* Quantities as strings, as they appear in a Node's status. */
static json_t *resources_as_strings(const json_t *resources)
{
	json_t *out = json_object();
	const char *k;
	json_t *v;

	json_object_foreach ((json_t *)resources, k, v) {
		if (json_is_integer(v)) {
			char buf[32];
			snprintf(buf, sizeof(buf), "%lld", (long long)json_integer_value(v));
			json_object_set_new(out, k, json_string(buf));
		} else {
			json_object_set(out, k, v);
		}
	}
	return out;
}

/*
 * A node on the DRA path (docs/guide/dra.md): the DRA driver's slice instead of
 * the device plugin's resources. NVIDIA's stacks never run the device
 * plugin or GFD on such a node, so every nvidia.com resource and every
 * label gpushare recorded goes, except mig-manager's state label: static
 * MIG still needs mig-manager to apply nvidia.com/mig.config.
 */
static void plan_dra(const struct catalog *cat, const json_t *node, const struct sync_opts *o,
		     struct sync_node *n)
{
	struct draprepare_gates def, gates;
	struct draslice_opts so = {.dynamic_mig = false, .partitionable = o->dra_partitionable};
	struct advertise_options ao = {0};
	struct advertisement *adv = NULL;
	struct nodehw *hw = NULL;
	json_t *labels = json_object(), *none = json_object(), *patch = NULL, *slice = NULL;
	json_t *annotations = NULL;
	struct mergepatch_want want = {.labels = labels, .resources = none, .remove_gone = true};
	struct health_faults faults = {0};
	struct gs_error err;
	int r;

	n->dra = true;
	n->resources = json_object();
	gs_error_clear(&err);
	if (nodehw_from_node(cat, node, NULL, &hw, &n->warnings, &err) < 0) {
		sync_node_fail(n, "%s", err.msg);
		goto out;
	}
	draprepare_gates_default(&def);
	if (draprepare_gates_for_node(node, &def, &gates, &err) < 0) {
		sync_node_fail(n, "%s", err.msg);
		goto out;
	}
	draslice_opts_from_gates(&so, &gates);
	/*
	 * The alpha cluster turns DRAConsumableCapacity on with
	 * DRAPartitionableDevices; the probe of the one stands for both.
	 */
	so.consumable_capacity = o->dra_partitionable;
	so.counters_apart = o->dra_counters_apart;
	if (so.dynamic_mig && !so.partitionable && o->dra_probe_error) {
		sync_node_fail(n, "DynamicMIG: %s", o->dra_probe_error);
		goto out;
	}
	r = draslice_build_pool(cat, hw, node, NULL, &so, &slice, &n->warnings, &err);
	if (r == -1 || r == DRASLICE_NEEDS_PARTITIONABLE) {
		sync_node_fail(n, "%s", err.msg);
		goto out;
	}
	if (health_from_node(node, hw->name, hw->total, NULL, &faults, &err) < 0) {
		sync_node_fail(n, "%s", err.msg);
		goto out;
	}
	if (r == 0 && (faults.n || kobj_annotation(node, NODEHW_ANN_UNHEALTHY))) {
		struct gs_warnings why;
		char *state = NULL;
		gs_warnings_init(&why);
		if (health_dra(slice, &faults, NULL, so.dynamic_mig,
			       kobj_annotation(node, NODEHW_ANN_UNHEALTHY),
			       kobj_annotation(node, NODEHW_ANN_RESTARTED_AT), o->now, &state,
			       &why)) {
			struct strbuf sb = STRBUF_INIT;
			for (size_t i = 0; i < why.n; i++)
				strbuf_addsep(&sb, "; ", why.items[i]);
			n->health_event = strbuf_detach(&sb, NULL);
		}
		annotations = json_pack("{s:s}", NODEHW_ANN_UNHEALTHY, state);
		want.annotations = annotations;
		free(state);
		gs_warnings_release(&why);
	}
	health_faults_release(&faults);
	/* mig-manager's verdict on the layout, as on the device-plugin path. */
	if (advertise_node(cat, node, NULL, &ao, &adv, &err) == 0) {
		json_t *state = json_object_get(adv->owned_labels, ADVERTISE_LABEL_MIG_STATE);
		if (state)
			json_object_set(labels, ADVERTISE_LABEL_MIG_STATE, state);
	}
	if (mergepatch_node(node, &want, &patch, &n->warnings, &err) < 0) {
		sync_node_fail(n, "%s", err.msg);
		goto out;
	}
	n->outcome = json_object_size(patch) ? SYNC_UPDATED : SYNC_UNCHANGED;
	if (json_object_size(patch))
		n->patch = json_incref(patch);
	if (r == DRASLICE_LAYOUT_FAILED)
		sync_node_fail(n, "%s; the driver keeps publishing the GPUs' previous layout",
			       adv && adv->failure ? adv->failure : err.msg);
	else {
		n->pool = json_incref(slice);
		n->slice = json_incref(json_array_get(slice, 0));
	}
out:
	json_decref(annotations);
	json_decref(labels);
	json_decref(none);
	json_decref(patch);
	json_decref(slice);
	advertisement_free(adv);
	nodehw_free(hw);
}

static bool same_str(const char *a, const char *b)
{
	return a == b || (a && b && !strcmp(a, b));
}

/* A copy of `node` whose nvidia.com/mig.config names the layout the GPUs hold. */
static json_t *node_with_layout(const json_t *node, const char *layout)
{
	json_t *copy = json_deep_copy(node);
	json_t *md = json_object_get(copy, "metadata"), *labels;

	labels = json_object_get(md, "labels");
	if (!json_is_object(labels)) {
		labels = json_object();
		json_object_set_new(md, "labels", labels);
	}
	if (layout)
		json_object_set_new(labels, NODEHW_LABEL_MIG_CONFIG, json_string(layout));
	else
		json_object_del(labels, NODEHW_LABEL_MIG_CONFIG);
	return copy;
}

/*
 * mig-manager's part of what the node shows (engine/migwalk.h): its state
 * label; while the device plugin is gone, the kubelet's view of its
 * resources (k8s.io/kubernetes v1.37.2 pkg/kubelet/cm/devicemanager/manager.go:
 * PluginDisconnected marks every device unhealthy, so allocatable 0 and
 * capacity kept; GetCapacity drops the resource once endpointStopGracePeriod
 * passed, and nodestatus/setters.go writes its capacity 0); and GFD, paused
 * too, refreshes no label.
 */
static void walk_advertisement(const struct migwalk *w, const json_t *node,
			       struct advertisement *adv)
{
	const char *k;
	json_t *v;

	if (w->state) {
		json_object_set_new(adv->owned_labels, ADVERTISE_LABEL_MIG_STATE,
				    json_string(w->state));
		json_object_set_new(adv->labels, ADVERTISE_LABEL_MIG_STATE, json_string(w->state));
	}
	if (!w->plugin_down)
		return;
	if (kobj_label(node, ADVERTISE_LABEL_TIMESTAMP))
		json_object_set_new(adv->owned_labels, ADVERTISE_LABEL_TIMESTAMP,
				    json_string(kobj_label(node, ADVERTISE_LABEL_TIMESTAMP)));
	json_decref(adv->allocatable);
	adv->allocatable = json_object();
	json_object_foreach (adv->resources, k, v) {
		json_object_set_new(adv->allocatable, k, json_integer(0));
		if (w->capacity_gone)
			json_object_set_new(adv->resources, k, json_integer(0));
	}
}

/* mig-manager's own writes: the operands' labels and gpushare's record of the walk. */
static void walk_patch(const struct migwalk *w, const json_t *node, json_t *patch)
{
	const char *k;
	json_t *v;

	json_object_foreach (w->labels, k, v)
		if (!same_str(kobj_label(node, k), json_string_value(v)))
			mergepatch_set(patch, "metadata", "labels", k, json_incref(v));
	if (w->record && !same_str(kobj_annotation(node, NODEHW_ANN_MIG_RECORD), w->record))
		mergepatch_set(patch, "metadata", "annotations", NODEHW_ANN_MIG_RECORD,
			       json_string(w->record));
}

/*
 * The kubelet's view while the device plugin has not registered again
 * (engine/kubeletrestart.h): the checkpoint names the resources with no
 * healthy device, capacity 0 and allocatable 0 (k8s.io/kubernetes v1.37.2
 * pkg/kubelet/cm/devicemanager/manager.go readCheckpoint :561-566,
 * GetCapacity :477-490); once endpointStopGracePeriod passed they are
 * dropped and nodestatus/setters.go:274-284 writes capacity 0 all the same.
 * GFD keeps its labels.
 */
static void kubelet_advertisement(struct advertisement *adv)
{
	const char *k;
	json_t *v;

	json_decref(adv->allocatable);
	adv->allocatable = json_object();
	json_object_foreach (adv->resources, k, v) {
		json_object_set_new(adv->allocatable, k, json_integer(0));
		json_object_set_new(adv->resources, k, json_integer(0));
	}
}

/* What the controller writes for the kubelet beside the advertisement. */
static void kubelet_report(const struct kubelet_plan *k, struct sync_node *n)
{
	n->kubelet_window = k->phase == KUBELET_WINDOW;
	n->kubelet_status = json_incref(k->status_patch);
	n->kubelet_lease = json_incref(k->lease_patch);
	if (k->status_patch && k->why)
		n->kubelet_event = gs_xstrdup(k->why);
	if (k->replan_at)
		n->replan_at = k->replan_at;
	for (size_t i = 0; i < k->notes.n; i++)
		gs_warnings_add(&n->warnings, "%s", k->notes.items[i]);
}

/* When the device plugin last started, as declared (0: not declared or unreadable). */
static long long plugin_start_of(const json_t *node)
{
	long long t = migwalk_parse_time(kobj_annotation(node, NODEHW_ANN_RESTARTED_AT));

	return t < 0 ? 0 : t;
}

/* What one node should advertise, into a new entry of rep. No I/O. */
static void plan_one(const struct catalog *cat, const json_t *node, const struct dpconfig_set *set,
		     const struct sync_opts *o, struct sync_report *rep)
{
	struct advertise_options ao = {.default_config = o->default_config,
				       .fallbacks = o->fallbacks,
				       .disable_healthchecks = o->disable_healthchecks,
				       .enable_healthchecks = o->enable_healthchecks};
	const char *name;
	struct advertisement *adv = NULL;
	struct sync_node *n;
	struct gs_error err;
	json_t *patch = NULL, *shown = NULL;
	struct migwalk walk;
	struct kubelet_plan kub;
	json_t *restarted = NULL;
	bool walking = false;

	name = kobj_name(node);
	n = add_node(rep, name);
	gs_error_clear(&err);
	/* Real GPU nodes have a real device plugin: only declared ones are ours. */
	if (!kobj_annotation(node, NODEHW_ANN_PRODUCT)) {
		n->outcome = SYNC_SKIPPED;
		n->message = gs_xstrdup("no " NODEHW_ANN_PRODUCT " annotation");
		return;
	}
	kubelet_plan_node(node, o->now, &kub);
	kubelet_report(&kub, n);
	if (draslice_node_wants_dra(node)) {
		plan_dra(cat, node, o, n);
		kubelet_plan_release(&kub);
		return;
	}
	if (kub.plugin_started_at > plugin_start_of(node)) {
		/* The plugin restarted when kubelet.sock was made again: devices come back. */
		char ts[32];
		time_t t = (time_t)kub.plugin_started_at;
		struct tm tm;
		gmtime_r(&t, &tm);
		strftime(ts, sizeof(ts), "%Y-%m-%dT%H:%M:%SZ", &tm);
		restarted = json_deep_copy(node);
		json_object_set_new(
			json_object_get(json_object_get(restarted, "metadata"), "annotations"),
			NODEHW_ANN_RESTARTED_AT, json_string(ts));
		node = restarted;
	}
	if (o->mig_walk) {
		struct nodehw *hw = NULL;
		const char *rec = kobj_annotation(node, NODEHW_ANN_MIG_RECORD);
		/* Counted only where a walk may end now: the count walks every pod. */
		unsigned pods = o->gpu_pods && rec && strstr(rec, "\"step\"")
					? o->gpu_pods(o->gpu_pods_arg, name)
					: 0;
		if (nodehw_from_node(cat, node, NULL, &hw, &n->warnings, &err) < 0 ||
		    migwalk_plan(cat, node, hw, o->now, pods, &walk, &err) < 0) {
			nodehw_free(hw);
			sync_node_fail(n, "%s", err.msg);
			goto out;
		}
		walking = true;
		if (!same_str(walk.layout, hw->mig_config))
			shown = node_with_layout(node, walk.layout);
		nodehw_free(hw);
		for (size_t i = 0; i < walk.notes.n; i++)
			gs_warnings_add(&n->warnings, "%s", walk.notes.items[i]);
		/* mig-manager's part, whatever the plugin makes of the layout below. */
		n->mig_patch = json_object();
		walk_patch(&walk, node, n->mig_patch);
		if (walk.state &&
		    !same_str(kobj_label(node, ADVERTISE_LABEL_MIG_STATE), walk.state))
			mergepatch_set(n->mig_patch, "metadata", "labels",
				       ADVERTISE_LABEL_MIG_STATE, json_string(walk.state));
		if (!json_object_size(n->mig_patch)) {
			json_decref(n->mig_patch);
			n->mig_patch = NULL;
		}
		if (walk.replan_at && (!n->replan_at || walk.replan_at < n->replan_at))
			n->replan_at = walk.replan_at;
		n->mig_failed = walk.ended && !strcmp(walk.ended, "failed");
		if (walk.why && (walk.record || walk.ended))
			n->mig_event = gs_xstrdup(walk.why);
	}
	if (health_advertise_node(cat, shown ? shown : node, set, &ao, &adv, &err) < 0) {
		sync_node_fail(n, "%s", err.msg);
		goto out;
	}
	for (size_t i = 0; i < adv->warnings.n; i++)
		gs_warnings_add(&n->warnings, "%s", adv->warnings.items[i]);
	n->config = adv->config_name ? gs_xstrdup(adv->config_name) : NULL;
	if (adv->outcome == ADVERTISE_REFUSED) {
		sync_node_fail(n, "%s", adv->failure);
		goto out;
	}
	n->resources = resources_as_strings(adv->resources);
	if (adv->newly_unhealthy) {
		struct strbuf sb = STRBUF_INIT;
		const char *res;
		json_t *ids, *id;
		size_t k;
		/* The plugin's log line (internal/plugin/server.go:279), once per device. */
		json_object_foreach (adv->newly_unhealthy, res, ids)
			json_array_foreach (ids, k, id)
				strbuf_addf(&sb, "%s'%s' device marked unhealthy: %s",
					    sb.len ? "; " : "", res, json_string_value(id));
		n->health_event = strbuf_detach(&sb, NULL);
	}
	if (walking)
		walk_advertisement(&walk, node, adv);
	if (kub.phase == KUBELET_WINDOW)
		kubelet_advertisement(adv);
	if (advertise_patch(adv, node, &patch, &n->warnings, &err) < 0) {
		sync_node_fail(n, "%s", err.msg);
		goto out;
	}
	if (walking)
		walk_patch(&walk, node, patch);
	if (!json_object_size(patch)) {
		n->outcome = SYNC_UNCHANGED;
	} else {
		n->patch = json_incref(patch);
		n->outcome = SYNC_UPDATED;
	}
	/* The plugin or mig-manager fails: what the rest publishes is written, and it fails. */
	if (adv->outcome == ADVERTISE_MIG_FAILED)
		sync_node_fail(n, "%s (nvidia.com/mig.config.state=failed written)", adv->failure);
	else if (adv->failure)
		sync_node_fail(n,
			       "%s (GFD's labels written; the plugin's resources at 0, as kubelet "
			       "shows a plugin gone 5 minutes)",
			       adv->failure);
out:
	json_decref(patch);
	json_decref(shown);
	json_decref(restarted);
	if (walking)
		migwalk_release(&walk);
	kubelet_plan_release(&kub);
	advertisement_free(adv);
}

int sync_report_failed(const struct sync_report *rep)
{
	for (size_t i = 0; i < rep->n; i++)
		if (rep->nodes[i].outcome == SYNC_FAILED)
			return 1;
	return 0;
}

int sync_plan(const json_t *configmap, const json_t *nodes, const struct sync_opts *o,
	      struct sync_report *rep, struct gs_error *err)
{
	const char *ns = o->configmap_namespace ? o->configmap_namespace : GS_DEFAULT_NAMESPACE;
	const char *cm_name = o->configmap_name ? o->configmap_name : GS_DEFAULT_CONFIGMAP;
	const json_t *items = json_is_array(nodes) ? nodes : json_object_get(nodes, "items");
	const struct catalog *cat;
	struct dpconfig_set *set = NULL;
	size_t i;
	json_t *node;

	memset(rep, 0, sizeof(*rep));
	if (!json_is_array(items)) {
		gs_error_set(err, "the node list has no items");
		return -1;
	}
	if (catalog_builtin(&cat, err) < 0)
		return -1;
	if (configmap && dpconfig_set_from_configmap(NULL, configmap, &set, err) < 0) {
		gs_error_prefix(err, "ConfigMap %s/%s: ", ns, cm_name);
		return -1;
	}
	json_array_foreach ((json_t *)items, i, node) {
		const char *name = kobj_name(node);
		if (!o->only_node || (name && !strcmp(o->only_node, name)))
			plan_one(cat, node, set, o, rep);
	}
	dpconfig_set_free(set);
	return sync_report_failed(rep);
}

/* ---- the DRA objects (docs/guide/dra.md "Publishing") ---- */

static const json_t *items_of(const json_t *list)
{
	return json_is_array(list) ? list : json_object_get(list, "items");
}

static struct sync_op *add_op(struct sync_report *rep, enum sync_op_action action, const char *node,
			      const char *kind, const char *name)
{
	const char *base = strcmp(kind, "DeviceClass") ? SLICES_PATH : CLASSES_PATH;
	struct sync_op *op;

	rep->ops = gs_xrealloc(rep->ops, (rep->n_ops + 1) * sizeof(*rep->ops));
	op = &rep->ops[rep->n_ops++];
	memset(op, 0, sizeof(*op));
	op->action = action;
	op->node = node ? gs_xstrdup(node) : NULL;
	op->kind = gs_xstrdup(kind);
	op->name = name ? gs_xstrdup(name) : NULL;
	op->path = action == SYNC_OP_CREATE ? gs_xstrdup(base)
					    : gs_xasprintf("%s/%s", base, name ? name : "");
	return op;
}

static json_int_t pool_generation(const json_t *slice)
{
	return json_integer_value(kobj_get(slice, "spec.pool.generation"));
}

/* upstream's sameSlice: as many devices, every wanted name present. */
static bool same_device_names(const json_t *have, const json_t *want)
{
	const json_t *a = kobj_get(have, "spec.devices"), *b = kobj_get(want, "spec.devices");
	size_t i, j;

	if (json_array_size(a) != json_array_size(b))
		return false;
	for (i = 0; i < json_array_size(b); i++) {
		const char *name = kobj_text(json_array_get(b, i), "name");
		for (j = 0; j < json_array_size(a); j++)
			if (!strcmp(kobj_text(json_array_get(a, j), "name"), name))
				break;
		if (j == json_array_size(a))
			return false;
	}
	return true;
}

/* A gpu.nvidia.com slice published for node `node`. */
static bool on_node(const json_t *slice, const char *node)
{
	return !strcmp(kobj_text(slice, "spec.nodeName"), node) &&
	       !strcmp(kobj_text(slice, "spec.driver"), DRASLICE_DRIVER);
}

/* The slice's controller is this Node object (a recreated node's old slice is not). */
static bool owned_by(const json_t *slice, const char *node_uid)
{
	const json_t *refs = kobj_get(slice, "metadata.ownerReferences");
	size_t i;

	if (!node_uid)
		return true;
	for (i = 0; i < json_array_size(refs); i++) {
		const json_t *r = json_array_get(refs, i);
		if (!strcmp(kobj_text(r, "kind"), "Node") && !strcmp(kobj_text(r, "uid"), node_uid))
			return true;
	}
	return false;
}

static void delete_slice(struct sync_report *rep, const char *node, const json_t *slice)
{
	struct sync_op *op = add_op(rep, SYNC_OP_DELETE, node, "ResourceSlice", kobj_name(slice));
	op->generation = pool_generation(slice);
}

/* An array field of a slice spec, absent and empty alike. */
static bool same_list(const json_t *a, const json_t *b)
{
	if (!json_array_size(a) && !json_array_size(b))
		return true;
	return json_equal((json_t *)a, (json_t *)b);
}

/*
 * Whether an existing slice differs from the wanted one in what the
 * driver's controller compares (pool, nodeSelector, allNodes, devices,
 * sharedCounters, perDeviceNodeSelection).
 */
static bool slice_changed(const json_t *have, const json_t *want_spec, const json_t *pool)
{
	static const char *const never[] = {"nodeSelector", "allNodes", "perDeviceNodeSelection"};
	const json_t *spec = kobj_map(have, "spec");

	for (size_t i = 0; i < sizeof(never) / sizeof(*never); i++) {
		const json_t *v = json_object_get(spec, never[i]);
		if (v && !json_is_null(v) && !json_is_false(v))
			return true;
	}
	return !json_equal(json_object_get(spec, "pool"), (json_t *)pool) ||
	       !json_equal(json_object_get(spec, "devices"),
			   json_object_get(want_spec, "devices")) ||
	       !same_list(json_object_get(spec, "sharedCounters"),
			  json_object_get(want_spec, "sharedCounters"));
}

/* Whether `s` is a slice of node n's own pool, published for this Node object. */
static bool in_pool(const json_t *s, const struct sync_node *n, const char *node_uid)
{
	return on_node(s, n->name) && !strcmp(kobj_text(s, "spec.pool.name"), n->name) &&
	       owned_by(s, node_uid);
}

/*
 * One DRA node's pool, as the driver's resourceslice controller
 * (k8s.io/dynamic-resource-allocation v0.34 resourceslice/
 * resourceslicecontroller.go, syncPool) reconciles it.
 */
static void plan_node_slice(struct sync_report *rep, struct sync_node *n, const json_t *items)
{
	const json_t *ref = json_array_get(kobj_get(n->slice, "metadata.ownerReferences"), 0);
	const char *node_uid = kobj_string(ref, "uid");
	size_t w = json_array_size(n->pool), i, k, current = 0, before = rep->n_ops;
	const json_t **match = gs_xcalloc(w ? w : 1, sizeof(*match));
	bool *changed = gs_xcalloc(w ? w : 1, sizeof(*changed));
	size_t matched = 0, n_changed = 0;
	const json_t *s;
	json_int_t gen = 0;
	bool bumped = false;
	json_t *pool;

	/* A slice on this node in another pool, or of an earlier Node object, goes. */
	json_array_foreach ((json_t *)items, i, s) {
		if (!on_node(s, n->name))
			continue;
		if (!in_pool(s, n, node_uid))
			delete_slice(rep, n->name, s);
		else if (pool_generation(s) > gen)
			gen = pool_generation(s);
	}
	/* Everything older is obsolete. */
	json_array_foreach ((json_t *)items, i, s) {
		if (!in_pool(s, n, node_uid))
			continue;
		if (pool_generation(s) < gen)
			delete_slice(rep, n->name, s);
		else
			current++;
	}
	/* One existing and one wanted slice match whatever they hold; else by device names. */
	json_array_foreach ((json_t *)items, i, s) {
		bool found = false;

		if (!in_pool(s, n, node_uid) || pool_generation(s) < gen)
			continue;
		for (k = 0; k < w && !found; k++) {
			if (match[k] ||
			    !(current == 1 && w == 1
				      ? true
				      : same_device_names(s, json_array_get(n->pool, k))))
				continue;
			match[k] = s;
			matched++;
			found = true;
		}
		if (!found)
			delete_slice(rep, n->name, s);
	}
	pool = json_pack("{s:s, s:I, s:I}", "name", n->name, "generation", gen,
			 "resourceSliceCount", (json_int_t)w);
	for (k = 0; k < w; k++)
		if (match[k] &&
		    slice_changed(match[k], kobj_map(json_array_get(n->pool, k), "spec"), pool)) {
			changed[k] = true;
			n_changed++;
		}
	/* "Kept generation because at most one update API call is necessary"; else bumped. */
	if (matched < w || n_changed > 1) {
		gen++;
		bumped = true;
	}
	json_object_set_new(pool, "generation", json_integer(gen));
	for (k = 0; k < w; k++) {
		const json_t *want_spec = kobj_map(json_array_get(n->pool, k), "spec");
		struct sync_op *op;
		json_t *body, *spec;

		if (match[k] && !changed[k] && !bumped)
			continue;
		if (match[k]) {
			body = json_deep_copy(match[k]);
			spec = json_object_get(body, "spec");
			json_object_set(spec, "devices", json_object_get(want_spec, "devices"));
			json_object_del(spec, "nodeSelector");
			json_object_del(spec, "allNodes");
			json_object_del(spec, "perDeviceNodeSelection");
			json_object_del(spec, "sharedCounters");
			if (json_object_get(want_spec, "sharedCounters"))
				json_object_set(spec, "sharedCounters",
						json_object_get(want_spec, "sharedCounters"));
			op = add_op(rep, SYNC_OP_UPDATE, n->name, "ResourceSlice",
				    kobj_name(match[k]));
		} else {
			body = json_deep_copy(json_array_get(n->pool, k));
			spec = json_object_get(body, "spec");
			op = add_op(rep, SYNC_OP_CREATE, n->name, "ResourceSlice", NULL);
		}
		json_object_set(spec, "pool", pool);
		op->body = body;
		op->generation = gen;
	}
	json_decref(pool);
	free(match);
	free(changed);
	if (rep->n_ops > before && n->outcome == SYNC_UNCHANGED)
		n->outcome = SYNC_UPDATED;
}

static const json_t *find_named(const json_t *items, const char *name)
{
	size_t i;
	const json_t *o;

	json_array_foreach ((json_t *)items, i, o) {
		if (!strcmp(kobj_text(o, "metadata.name"), name))
			return o;
	}
	return NULL;
}

/*
 * The chart's DeviceClasses. Only what the chart sets is compared and
 * written: a class's config a person added stays. extendedResourceName is
 * sent as the chart renders it for v1; an apiserver without the
 * DRAExtendedResource gate drops it, so its absence is no difference.
 */
static void plan_classes(struct sync_report *rep, const json_t *have)
{
	json_t *want = draslice_device_classes(1), *c;
	size_t i;

	json_array_foreach (want, i, c) {
		const char *name = kobj_name(c);
		const json_t *cur = find_named(have, name);
		const json_t *ws = kobj_map(c, "spec"), *cs = kobj_map(cur, "spec");
		const json_t *ext = json_object_get(cs, "extendedResourceName");
		struct sync_op *op;
		json_t *body;

		if (cur &&
		    json_equal(json_object_get(cs, "selectors"),
			       json_object_get(ws, "selectors")) &&
		    (!ext || json_equal(ext, json_object_get(ws, "extendedResourceName"))))
			continue;
		if (!cur) {
			op = add_op(rep, SYNC_OP_CREATE, NULL, "DeviceClass", name);
			op->body = json_incref(c);
			continue;
		}
		body = json_deep_copy(cur);
		json_object_update(json_object_get(body, "spec"), (json_t *)ws);
		if (!json_object_get(ws, "extendedResourceName"))
			json_object_del(json_object_get(body, "spec"), "extendedResourceName");
		op = add_op(rep, SYNC_OP_UPDATE, NULL, "DeviceClass", name);
		op->body = body;
	}
	json_decref(want);
}

void sync_plan_dra(struct sync_report *rep, const json_t *slices, const json_t *classes)
{
	const json_t *items = items_of(slices), *s;
	json_t *none = json_array();
	bool any_dra = false;
	size_t i, j;

	if (!json_is_array(items))
		items = none;
	for (i = 0; i < rep->n; i++)
		any_dra |= rep->nodes[i].dra;
	if (any_dra)
		plan_classes(rep, json_is_array(items_of(classes)) ? items_of(classes) : none);
	for (i = 0; i < rep->n; i++) {
		struct sync_node *n = &rep->nodes[i];
		size_t before = rep->n_ops;

		if (n->outcome == SYNC_SKIPPED)
			continue;
		if (n->dra) {
			if (n->pool)
				plan_node_slice(rep, n, items);
			continue;
		}
		/* Not (or no longer) on the DRA path: the driver is gone, its slices go. */
		json_array_foreach ((json_t *)items, j, s) {
			if (on_node(s, n->name))
				delete_slice(rep, n->name, s);
		}
		if (rep->n_ops > before && n->outcome == SYNC_UNCHANGED)
			n->outcome = SYNC_UPDATED;
	}
	json_decref(none);
}

bool sync_wants_dynamic_mig(const json_t *nodes)
{
	const json_t *items = items_of(nodes), *node;
	struct draprepare_gates def, g;
	struct gs_error err;
	size_t i;

	draprepare_gates_default(&def);
	json_array_foreach ((json_t *)items, i, node) {
		if (!draslice_node_wants_dra(node) || !kobj_annotation(node, NODEHW_ANN_PRODUCT))
			continue;
		if (draprepare_gates_for_node(node, &def, &g, &err) == 0 &&
		    (g.dynamic_mig || draprepare_consumable_shares(&g)))
			return true;
	}
	return false;
}

char *sync_resources_text(const struct sync_node *n)
{
	struct strbuf sb = STRBUF_INIT;
	const char *k;
	json_t *v;

	json_object_foreach (n->resources, k, v)
		strbuf_addf(&sb, "%s%s=%s", sb.len ? " " : "", k, json_string_value(v));
	return strbuf_detach(&sb, NULL);
}

void sync_report_release(struct sync_report *rep)
{
	for (size_t i = 0; i < rep->n; i++) {
		struct sync_node *n = &rep->nodes[i];
		free(n->name);
		free(n->config);
		free(n->message);
		free(n->health_event);
		free(n->mig_event);
		free(n->kubelet_event);
		json_decref(n->kubelet_status);
		json_decref(n->kubelet_lease);
		json_decref(n->mig_patch);
		json_decref(n->patch);
		json_decref(n->slice);
		json_decref(n->pool);
		json_decref(n->resources);
		gs_warnings_release(&n->warnings);
	}
	free(rep->nodes);
	rep->nodes = NULL;
	rep->n = 0;
	for (size_t i = 0; i < rep->n_ops; i++) {
		struct sync_op *op = &rep->ops[i];
		free(op->node);
		free(op->kind);
		free(op->name);
		free(op->path);
		free(op->result_rv);
		json_decref(op->body);
	}
	free(rep->ops);
	rep->ops = NULL;
	rep->n_ops = 0;
}
