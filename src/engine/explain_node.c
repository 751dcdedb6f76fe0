#include "engine/explain_node.h"

#include "engine/health.h"
#include "engine/kubeletrestart.h"
#include "engine/migwalk.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/escape.h"
#include "engine/advertise.h"
#include "engine/ledger.h"
#include "model/dpconfig.h"
#include "dra/draslice.h"
#include "model/kobj.h"
#include "model/nodehw.h"
#include "base/strbuf.h"
#include "base/banned.h"

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* The keys of an object, sorted (borrowed). */
static const char **sorted_keys(const json_t *obj, size_t *n)
{
	const char **keys = gs_xcalloc(json_object_size(obj) + 1, sizeof(char *));
	const char *k;
	json_t *v;

	*n = 0;
	json_object_foreach ((json_t *)obj, k, v)
		keys[(*n)++] = k;
	qsort(keys, *n, sizeof(*keys), cmp_str);
	return keys;
}

/* config-manager's choice, in words (dpconfig_set_select's order, k8s-device-plugin v0.20.0
 * cmd/config-manager/main.go updateConfigName). */
static void why_config(struct strbuf *sb, const struct dpconfig_set *set, const char *label,
		       const struct advertisement *adv)
{
	if (!set) {
		escape_addf(sb,
			    "config: the empty config (the plugin's defaults): no device-plugin "
			    "ConfigMap\n");
		return;
	}
	if (label) {
		if (dpconfig_set_find(set, label) >= 0)
			escape_addf(sb,
				    "config: \"%s\": the node's label "
				    "nvidia.com/device-plugin.config=%s names a key of the "
				    "ConfigMap\n",
				    label, label);
		else
			escape_addf(
				sb,
				"config: none: the node's label nvidia.com/device-plugin.config=%s "
				"names no key of the ConfigMap (it has: ",
				label);
		if (dpconfig_set_find(set, label) < 0) {
			for (size_t i = 0; i < dpconfig_set_count(set); i++)
				escape_addf(sb, "%s%s", i ? ", " : "", dpconfig_set_key(set, i));
			escape_addf(sb,
				    "); config-manager fails: specified config %s does not "
				    "exist\n",
				    label);
		}
		return;
	}
	if (adv->config_name && *adv->config_name && !strcmp(adv->config_name, "default"))
		escape_addf(sb,
			    "config: \"default\": the node has no "
			    "nvidia.com/device-plugin.config label and DEFAULT_CONFIG is unset, "
			    "so config-manager's first fallback (named) takes the key named "
			    "\"default\"\n");
	else if (adv->config_name && *adv->config_name)
		escape_addf(
			sb,
			"config: \"%s\": the node has no nvidia.com/device-plugin.config label, "
			"DEFAULT_CONFIG is unset and the ConfigMap has no key \"default\", so "
			"the fallback single takes its only key\n",
			adv->config_name);
	else
		escape_addf(sb,
			    "config: none: the node has no nvidia.com/device-plugin.config "
			    "label, DEFAULT_CONFIG is unset, the ConfigMap has no key \"default\" "
			    "and more than one key, so every fallback (named, single) fails\n");
}

static const char *strategy_source(const char *src)
{
	if (!strcmp(src, "label"))
		return "the node's own nvidia.com/mig.strategy label, set by hand";
	if (!strcmp(src, "config"))
		return "the config's flags.migStrategy";
	return "the plugin's default";
}

/* "1 x Tesla T4 (15360 MiB each), 2 x NVIDIA A100-SXM4-80GB (81920 MiB each)" */
static void cards_text(struct strbuf *sb, const struct nodehw *hw)
{
	for (size_t i = 0; i < hw->n_gpus; i++)
		escape_addf(sb, "%s%d x %s (%d MiB each)", i ? ", " : "", hw->gpus[i].count,
			    hw->gpus[i].model->name, hw->gpus[i].model->memory_mib);
}

static void gpus_line(struct strbuf *sb, const struct nodehw *hw)
{
	escape_addf(sb, "GPUs: ");
	cards_text(sb, hw);
	if (!hw->n_gpus)
		escape_addf(sb, "none declared");
	escape_addf(sb, "; driver %s (CUDA %d.%d)\n", hw->driver_version, hw->cuda_major,
		    hw->cuda_minor);
}

/* Per GPU: "GPU 0: MIG 7 x 1g.10gb" or "GPU 0: whole". */
static void mig_lines(struct strbuf *sb, const struct advertisement *adv)
{
	const json_t *g;
	size_t i;

	json_array_foreach (adv->gpus, i, g) {
		const json_t *devs = json_object_get(g, "migDevices");
		escape_addf(sb, "  GPU %zu (%s): ", i, kobj_text(g, "product"));
		if (!json_is_true(json_object_get(g, "migEnabled"))) {
			escape_addf(sb, "MIG disabled\n");
			continue;
		}
		size_t n;
		const char **keys = sorted_keys(devs, &n);
		escape_addf(sb, "MIG enabled:");
		for (size_t k = 0; k < n; k++)
			escape_addf(sb, "%s %lld x %s", k ? "," : "",
				    (long long)json_integer_value(json_object_get(devs, keys[k])),
				    keys[k]);
		escape_addf(sb, "%s\n", n ? "" : " no instances");
		free(keys);
	}
}

static void sharing_lines(struct strbuf *sb, const struct dpconfig_set *set,
			  const struct advertisement *adv)
{
	long key = set && adv->config_name && *adv->config_name
			   ? dpconfig_set_find(set, adv->config_name)
			   : -1;
	const struct gs_error *perr;
	const struct dpconfig *cfg = key >= 0 ? dpconfig_set_get(set, (size_t)key, &perr) : NULL;

	escape_addf(sb, "sharing: %s", dp_sharing_strategy_name(adv->sharing));
	if (!cfg || adv->sharing == DP_SHARING_NONE) {
		escape_addf(sb, "\n");
		return;
	}
	const struct dp_sharing *sh = dpconfig_replicated(cfg);
	bool enforced = adv->sharing == DP_SHARING_MPS ? sh->fail_requests_greater_than_one != 0
						       : sh->fail_requests_greater_than_one == 1;
	for (size_t i = 0; i < sh->n_resources; i++)
		escape_addf(sb, "%s %s x%d per device%s%s", i ? "," : ";", sh->resources[i].name,
			    sh->resources[i].replicas, sh->resources[i].rename ? " as " : "",
			    sh->resources[i].rename ? sh->resources[i].rename : "");
	escape_addf(sb, "; failRequestsGreaterThanOne %s\n",
		    enforced ? "on: a container asking for more than 1 fails at Allocate"
			     : "off: more than 1 is allowed (and is no more GPU)");
}

/*
 * Why allocatable is below capacity: the faults the node declares, what the
 * device plugin does with each (and where upstream does it), the devices
 * out, and how they come back.
 */
static void health_lines(struct strbuf *sb, const json_t *node, const struct advertisement *adv)
{
	const char *decl = kobj_annotation(node, NODEHW_ANN_GPU_HEALTH);
	const char *restarted = kobj_annotation(node, NODEHW_ANN_RESTARTED_AT);
	const char *res;
	json_t *ids, *id;
	size_t k;

	if (!adv->health_why.n && !adv->unhealthy)
		return;
	escape_addf(sb, "GPU health (" NODEHW_ANN_GPU_HEALTH "=%s; device plugin %s%s):\n",
		    decl && *decl ? decl : "(none)",
		    restarted ? "restarted at " : "never restarted", restarted ? restarted : "");
	for (size_t i = 0; i < adv->health_why.n; i++)
		escape_addf(sb, "  %s\n", adv->health_why.items[i]);
	json_object_foreach (adv->unhealthy, res, ids) {
		escape_addf(sb, "  unhealthy %s devices (allocatable < capacity):\n", res);
		json_array_foreach (ids, k, id)
			escape_addf(sb, "    %s\n", json_string_value(id));
	}
	if (adv->unhealthy)
		escape_addf(sb, "  the plugin never marks a device healthy again while it runs "
				"(k8s-device-plugin v0.20.0 internal/plugin/server.go:277 "
				"\"FIXME: there is no way to recover from the Unhealthy state\"); "
				"pods holding one keep running; clear the fault, then `gpushare "
				"fault restart-plugin` brings it back\n");
}

/*
 * Where mig-manager's walk is (engine/migwalk.h), from the record `gpushare
 * controller` keeps on the node; nothing when there is none.
 */
static void walk_lines(struct strbuf *sb, const struct catalog *cat, const json_t *node,
		       const struct nodehw *hw)
{
	struct migwalk w;
	struct gs_error err;

	if (!kobj_annotation(node, NODEHW_ANN_MIG_RECORD) ||
	    migwalk_plan(cat, node, hw, 0, 0, &w, &err) < 0)
		return;
	if (w.step == MIGWALK_PENDING || w.step == MIGWALK_STALLED) {
		long long left = w.paused_at + MIGWALK_STOP_GRACE_SECONDS - (long long)time(NULL);
		escape_addf(sb, "MIG reconfiguration: %s toward %s, the GPUs still hold %s\n",
			    w.step == MIGWALK_STALLED ? "stalled" : "pending",
			    w.config ? w.config : "?", w.layout ? w.layout : "no layout");
		escape_addf(sb, "  %s\n", w.why ? w.why : "");
		escape_addf(sb,
			    "  why the GPUs read 0: mig-manager set nvidia.com/gpu.deploy.device-"
			    "plugin=" MIGWALK_PAUSED ", so the device plugin is gone; the kubelet "
			    "marks its devices unhealthy (allocatable 0) and %s\n",
			    w.capacity_gone ? "dropped them once endpointStopGracePeriod (5m) "
					      "passed (capacity 0 too)"
					    : "keeps capacity until endpointStopGracePeriod (5m) "
					      "passes");
		if (!w.capacity_gone && left > 0)
			escape_addf(sb, "  capacity goes to 0 in %llds unless the walk ends\n",
				    left);
		if (w.step == MIGWALK_STALLED)
			escape_addf(sb, "  remove " NODEHW_ANN_MIG_FAULT
					" ('gpushare fault mig NODE --no-fault') and the walk "
					"completes\n");
	} else if (w.step == MIGWALK_IDLE && w.state && !strcmp(w.state, "failed")) {
		escape_addf(sb,
			    "MIG reconfiguration: the change to %s failed (nvidia.com/"
			    "mig.config.state=failed); the GPUs keep %s until the label names "
			    "another layout\n",
			    w.config ? w.config : "?", w.layout ? w.layout : "their layout");
	}
	for (size_t i = 0; i < w.notes.n; i++)
		escape_addf(sb, "note: %s\n", w.notes.items[i]);
	migwalk_release(&w);
}

/*
 * A kubelet restart or node reboot the node declares (engine/kubeletrestart.h):
 * where its window is and why the GPUs read 0; nothing when steady.
 */
static void kubelet_lines(struct strbuf *sb, const json_t *node)
{
	struct kubelet_plan k;
	long long now = (long long)time(NULL);

	kubelet_plan_node(node, now, &k);
	if (k.phase == KUBELET_WINDOW) {
		escape_addf(sb,
			    "kubelet: %s %llds ago (" NODEHW_ANN_KUBELET_RESTART "); the device "
			    "plugin registers again in %llds\n",
			    k.fault.kind == KUBELET_REBOOT ? "the node rebooted"
							   : "the kubelet restarted",
			    now - k.fault.at, k.until - now);
		escape_addf(sb,
			    "  why the GPUs read 0: the kubelet's device manager read its "
			    "checkpoint and knows every resource the plugin registered with no "
			    "healthy device until the plugin registers again (capacity and "
			    "allocatable 0%s); the node is NotReady meanwhile\n",
			    k.capacity_removed ? "; past endpointStopGracePeriod (5m) the "
						 "resources are dropped, still written 0"
					       : "");
		escape_addf(sb,
			    "  pods bound now fail UnexpectedAdmissionError (\"no healthy "
			    "devices present\"); %s\n",
			    k.fault.kind == KUBELET_REBOOT
				    ? "after a reboot nothing ran, so every GPU pod failed its "
				      "re-admission; a bare pod stays Failed (kubernetes#125579)"
				    : "running pods kept their devices from the checkpoint, except "
				      "those whose init container asked for GPUs "
				      "(kubernetes#124345, #138446)");
	} else if (k.phase == KUBELET_RECOVERING) {
		escape_addf(sb, "kubelet: the window is over; the controller marks the node "
				"Ready and the plugin's devices come back\n");
	} else if (k.declared && k.replan_at) {
		escape_addf(sb, "kubelet: a %s is declared for %llds from now\n",
			    kubelet_kind_name(k.fault.kind), k.replan_at - now);
	}
	for (size_t i = 0; i < k.notes.n; i++)
		escape_addf(sb, "note: %s\n", k.notes.items[i]);
	kubelet_plan_release(&k);
}

int explain_node(const struct catalog *cat, const json_t *node, const struct dpconfig_set *set,
		 char **out, struct gs_error *err)
{
	struct nodehw *hw = NULL;
	struct advertisement *adv = NULL;
	struct gs_warnings w;
	struct strbuf sb = STRBUF_INIT;
	struct advertise_options ao = {0};
	int rc = -1;

	*out = NULL;
	gs_warnings_init(&w);
	if (nodehw_from_node(cat, node, NULL, &hw, &w, err) < 0 ||
	    health_advertise_node(cat, node, set, &ao, &adv, err) < 0)
		goto done;
	escape_addf(&sb, "node %s\n", kobj_text(node, "metadata.name"));
	if (!kobj_annotation(node, NODEHW_ANN_PRODUCT)) {
		escape_addf(&sb, "not a gpushare node: no " NODEHW_ANN_PRODUCT " annotation, so "
				 "gpushare advertises nothing for it\n");
		rc = 0;
		goto done;
	}
	gpus_line(&sb, hw);
	if (draslice_node_wants_dra(node)) {
		escape_addf(&sb, "DRA node (gpushare.io/path=dra): no nvidia.com resources or GFD "
				 "labels; NVIDIA's DRA driver publishes a ResourceSlice instead "
				 "(gpushare advertise --dra)\n");
		rc = 0;
		goto done;
	}
	why_config(&sb, set, hw->config_label, adv);
	if (adv->mig_strategy)
		escape_addf(&sb, "MIG strategy: %s, from %s\n", adv->mig_strategy,
			    strategy_source(adv->mig_strategy_source));
	if (hw->mig_config)
		escape_addf(&sb, "MIG layout: nvidia.com/mig.config=%s\n", hw->mig_config);
	else
		escape_addf(&sb, "MIG layout: none (no nvidia.com/mig.config label)\n");
	mig_lines(&sb, adv);
	walk_lines(&sb, cat, node, hw);
	kubelet_lines(&sb, node);
	sharing_lines(&sb, set, adv);
	if (adv->failure)
		escape_addf(&sb, "refused: %s\n", adv->failure);
	if (adv->outcome == ADVERTISE_REFUSED) {
		escape_addf(&sb, "the node shows nothing new: config-manager or GFD fails\n");
	} else {
		size_t n;
		const char **keys = sorted_keys(adv->resources, &n);
		escape_addf(&sb, "resources (capacity %s allocatable):%s\n",
			    adv->allocatable ? "and" : "=", n ? "" : " none");
		for (size_t i = 0; i < n; i++) {
			const json_t *a = json_object_get(adv->allocatable, keys[i]);
			json_int_t c = json_integer_value(json_object_get(adv->resources, keys[i]));
			if (a && json_integer_value(a) != c)
				escape_addf(&sb, "  %s: %lld, allocatable %lld\n", keys[i],
					    (long long)c, (long long)json_integer_value(a));
			else
				escape_addf(&sb, "  %s: %lld\n", keys[i], (long long)c);
		}
		free(keys);
		health_lines(&sb, node, adv);
		keys = sorted_keys(adv->labels, &n);
		escape_addf(&sb, "labels GPU feature discovery sets:\n");
		for (size_t i = 0; i < n; i++) {
			if (!strcmp(keys[i], ADVERTISE_LABEL_TIMESTAMP))
				escape_addf(&sb, "  %s=<when it runs>\n", keys[i]);
			else
				escape_addf(
					&sb, "  %s=%s\n", keys[i],
					json_string_value(json_object_get(adv->labels, keys[i])));
		}
		free(keys);
	}
	for (size_t i = 0; i < adv->warnings.n; i++)
		escape_addf(&sb, "note: %s\n", adv->warnings.items[i]);
	rc = 0;
done:
	if (rc == 0)
		*out = strbuf_detach(&sb, NULL);
	strbuf_release(&sb);
	gs_warnings_release(&w);
	advertisement_free(adv);
	nodehw_free(hw);
	return rc;
}

/* ---- the node in one line, for explain pod ---------------------------------- */

/* What the devices of one resource on one GPU are. */
enum slot_kind {
	SLOT_WHOLE,	  /* the whole GPU */
	SLOT_REPLICAS,	  /* time-slicing or MPS replicas of the whole GPU */
	SLOT_MIG,	  /* MIG instances */
	SLOT_MIG_REPLICAS /* replicas of MIG instances */
};

/* GPUs of one model with the same devices of a resource. */
struct slot_group {
	const char *product;
	int memory_mib;
	enum slot_kind kind;
	size_t per_gpu; /* devices of the resource on each GPU (replicas: the same on all) */
	size_t slots;	/* on all of the group's GPUs */
	size_t gpus;
};

static void slot_kind_text(struct strbuf *sb, const struct slot_group *g)
{
	switch (g->kind) {
	case SLOT_WHOLE:
		escape_addf(sb, "a whole GPU each");
		break;
	case SLOT_REPLICAS:
		escape_addf(sb, "%zu per GPU sharing its %d MiB", g->per_gpu, g->memory_mib);
		break;
	case SLOT_MIG:
		escape_addf(sb, "MIG instances, each with its own memory");
		break;
	case SLOT_MIG_REPLICAS:
		escape_addf(sb, "replicas of MIG instances, each sharing its instance's memory");
		break;
	}
}

/*
 * "; nvidia.com/gpu 8 slots on 2 GPUs, 4 per GPU sharing its 15360 MiB" per
 * resource of the ledger; GPUs of several models (or of one model cut
 * differently) each described apart: "; nvidia.com/gpu 12 slots: 4 on 1
 * Tesla T4 (4 per GPU sharing its 15360 MiB), 8 on 2 NVIDIA
 * A100-SXM4-80GB (4 per GPU sharing its 81920 MiB)".
 */
static void slots_text(struct strbuf *sb, const struct ledger *l)
{
	size_t *count = gs_xcalloc(l->n_gpus + 1, sizeof(*count));
	enum slot_kind *kind = gs_xcalloc(l->n_gpus + 1, sizeof(*kind));
	struct slot_group *groups = gs_xcalloc(l->n_gpus + 1, sizeof(*groups));

	for (size_t d = 0; d < l->n_devices;) {
		const char *res = l->devices[d].resource;
		size_t total = 0, n_groups = 0;

		memset(count, 0, l->n_gpus * sizeof(*count));
		for (; d < l->n_devices && !strcmp(l->devices[d].resource, res); d++) {
			const struct ledger_device *dev = &l->devices[d];
			if (dev->gpu < 0 || (size_t)dev->gpu >= l->n_gpus)
				continue;
			count[dev->gpu]++;
			total++;
			kind[dev->gpu] =
				dev->profile ? (dev->replica >= 0 ? SLOT_MIG_REPLICAS : SLOT_MIG)
					     : (dev->replica >= 0 ? SLOT_REPLICAS : SLOT_WHOLE);
		}
		for (size_t g = 0; g < l->n_gpus; g++) {
			size_t k;
			if (!count[g])
				continue;
			/* Only replicas differ by model: they share the card's memory. */
			for (k = 0; k < n_groups; k++)
				if (groups[k].kind == kind[g] &&
				    (kind[g] != SLOT_REPLICAS ||
				     (!strcmp(groups[k].product, l->gpus[g].product) &&
				      groups[k].per_gpu == count[g])))
					break;
			if (k == n_groups)
				groups[n_groups++] =
					(struct slot_group){.product = l->gpus[g].product,
							    .memory_mib = l->gpus[g].memory_mib,
							    .kind = kind[g],
							    .per_gpu = count[g]};
			groups[k].gpus++;
			groups[k].slots += count[g];
		}
		escape_addf(sb, "; %s %zu slot%s", res, total, total == 1 ? "" : "s");
		if (n_groups == 1 && groups[0].kind == SLOT_REPLICAS) {
			escape_addf(sb, " on %zu GPU%s, ", groups[0].gpus,
				    groups[0].gpus == 1 ? "" : "s");
			slot_kind_text(sb, &groups[0]);
		} else if (n_groups == 1) {
			escape_addf(sb, ", ");
			slot_kind_text(sb, &groups[0]);
		} else {
			for (size_t k = 0; k < n_groups; k++) {
				const struct slot_group *gr = &groups[k];
				escape_addf(sb, "%s %zu on %zu ", k ? "," : ":", gr->slots,
					    gr->gpus);
				if (gr->kind == SLOT_REPLICAS)
					escape_addf(sb, "%s", gr->product);
				else
					escape_addf(sb, "GPU%s", gr->gpus == 1 ? "" : "s");
				escape_addf(sb, " (");
				slot_kind_text(sb, gr);
				escape_addf(sb, ")");
			}
		}
	}
	free(count);
	free(kind);
	free(groups);
}

int explain_node_summary(const struct catalog *cat, const json_t *node,
			 const struct dpconfig_set *set, char **cards, char **slots,
			 struct gs_error *err)
{
	struct nodehw *hw = NULL;
	struct advertisement *adv = NULL;
	struct ledger *l = NULL;
	struct advertise_options ao = {0};
	struct gs_warnings w;
	struct strbuf c = STRBUF_INIT, sl = STRBUF_INIT;
	const struct dpconfig *cfg = NULL;
	int rc = -1;

	*cards = *slots = NULL;
	gs_warnings_init(&w);
	if (nodehw_from_node(cat, node, NULL, &hw, &w, err) < 0)
		goto out;
	cards_text(&c, hw);
	if (hw->n_gpus && !draslice_node_wants_dra(node)) {
		if (advertise_node(cat, node, set, &ao, &adv, err) < 0)
			goto out;
		if (set && adv->config_name && *adv->config_name) {
			long k = dpconfig_set_find(set, adv->config_name);
			const struct gs_error *perr;
			cfg = k >= 0 ? dpconfig_set_get(set, (size_t)k, &perr) : NULL;
		}
		if (ledger_new(cat, hw, adv, cfg, &l, err) < 0)
			goto out;
		slots_text(&sl, l);
	}
	*cards = strbuf_detach(&c, NULL);
	*slots = strbuf_detach(&sl, NULL);
	rc = 0;
out:
	if (rc < 0)
		gs_error_prefix(err, "node %s: ", kobj_text(node, "metadata.name"));
	strbuf_release(&c);
	strbuf_release(&sl);
	ledger_free(l);
	advertisement_free(adv);
	nodehw_free(hw);
	gs_warnings_release(&w);
	return rc;
}
