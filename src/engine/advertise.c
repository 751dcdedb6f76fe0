#include "engine/advertise.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "engine/mergepatch.h"
#include "base/strbuf.h"
#include "base/banned.h"

#define RES_GPU "nvidia.com/gpu"

/* One physical GPU after mig-manager did its work. */
struct gpu_state {
	const struct catalog_gpu *model;
	bool mig_enabled;
	struct catalog_mig_count devices[8];
	size_t n_devices;
};

struct ctx {
	const struct catalog *cat;
	const struct nodehw *hw;
	const struct dpconfig *config;
	struct advertisement *adv;
	struct gpu_state *gpu;
	size_t n;
	const struct dp_sharing *sharing; /* block in force, NULL when none */
	bool layout_applied;		  /* mig-manager ran and succeeded */
	long long now;			  /* for nvidia.com/gfd.timestamp */
};

static void fail(struct advertisement *adv, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void fail(struct advertisement *adv, const char *fmt, ...)
{
	struct strbuf sb = STRBUF_INIT;
	va_list ap;

	if (adv->failure)
		return; /* the first refusal is what the cluster shows */
	va_start(ap, fmt);
	strbuf_vaddf(&sb, fmt, ap);
	va_end(ap);
	adv->failure = strbuf_detach(&sb, NULL);
}

#define PLUGIN_FAIL "nvidia-device-plugin: error starting plugins: "
#define BUILD_MAP                                                                                  \
	"error getting plugins: unable to create plugins: failed to construct resource managers: " \
	"error building device map: error building device map from config.resources: "

static struct advertisement *adv_new(const struct nodehw *hw, const char *config_name)
{
	struct advertisement *adv = gs_xcalloc(1, sizeof(*adv));

	adv->node = gs_xstrdup(hw->name);
	adv->config_name = config_name ? gs_xstrdup(config_name) : NULL;
	adv->gpus = json_array();
	adv->resources = json_object();
	adv->labels = json_object();
	adv->owned_labels = json_object();
	gs_warnings_init(&adv->warnings);
	gs_warnings_init(&adv->health_why);
	return adv;
}

void advertisement_free(struct advertisement *adv)
{
	if (!adv)
		return;
	free(adv->node);
	free(adv->config_name);
	free(adv->mig_strategy);
	json_decref(adv->gpus);
	json_decref(adv->resources);
	json_decref(adv->labels);
	json_decref(adv->owned_labels);
	free(adv->failure);
	gs_warnings_release(&adv->warnings);
	json_decref(adv->allocatable);
	json_decref(adv->unhealthy);
	json_decref(adv->newly_unhealthy);
	free(adv->health_state);
	gs_warnings_release(&adv->health_why);
	free(adv);
}

static const char *block_name(const struct ctx *c)
{
	return c->adv->sharing == DP_SHARING_MPS ? "mps" : "timeSlicing";
}

/* The first sharing entry for `name` (GFD reports the first one, k8s-device-plugin v0.20.0
 * api/config/v1/config.go DisableResourceNamingInConfig). */
static const struct dp_replicated_resource *entry_for(const struct ctx *c, const char *name)
{
	if (!c->sharing)
		return NULL;
	for (size_t i = 0; i < c->sharing->n_resources; i++)
		if (!strcmp(c->sharing->resources[i].name, name))
			return &c->sharing->resources[i];
	return NULL;
}

static void set_label(struct ctx *c, const char *key, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void set_label(struct ctx *c, const char *key, const char *fmt, ...)
{
	char buf[256];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	json_object_set_new(c->adv->labels, key, json_string(buf));
}

static void set_rlabel(struct ctx *c, const char *res, const char *suffix, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static void set_rlabel(struct ctx *c, const char *res, const char *suffix, const char *fmt, ...)
{
	char key[256], buf[256];
	va_list ap;

	snprintf(key, sizeof(key), "%s.%s", res, suffix);
	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	json_object_set_new(c->adv->labels, key, json_string(buf));
}

static void add_count(json_t *obj, const char *name, json_int_t n)
{
	json_t *v = json_object_get(obj, name);
	json_object_set_new(obj, name, json_integer((v ? json_integer_value(v) : 0) + n));
}

/* "GPU 2" or "GPUs 0-3, 6": the indices i with pick(c, i, arg). A new string. */
static char *gpu_list(const struct ctx *c, bool (*pick)(const struct ctx *, size_t, const void *),
		      const void *arg)
{
	struct strbuf sb = STRBUF_INIT;
	size_t n = 0;

	for (size_t i = 0; i < c->n; i++)
		n += pick(c, i, arg);
	strbuf_addf(&sb, "GPU%s ", n > 1 ? "s" : "");
	for (size_t i = 0, first = 1; i < c->n; i++) {
		size_t j = i;
		if (!pick(c, i, arg))
			continue;
		while (j + 1 < c->n && pick(c, j + 1, arg))
			j++;
		if (j == i)
			strbuf_addf(&sb, "%s%zu", first ? "" : ", ", i);
		else
			strbuf_addf(&sb, "%s%zu-%zu", first ? "" : ", ", i, j);
		first = 0;
		i = j;
	}
	return strbuf_detach(&sb, NULL);
}

static bool first_of_model(const struct ctx *c, size_t i)
{
	for (size_t j = 0; j < i; j++)
		if (c->gpu[j].model == c->gpu[i].model)
			return false;
	return true;
}

static bool pick_model(const struct ctx *c, size_t i, const void *model)
{
	return c->gpu[i].model == model;
}

static bool pick_not_capable(const struct ctx *c, size_t i, const void *unused)
{
	(void)unused;
	return c->gpu[i].model->mig == NULL;
}

static bool pick_empty_mig(const struct ctx *c, size_t i, const void *unused)
{
	(void)unused;
	return c->gpu[i].mig_enabled && c->gpu[i].n_devices == 0;
}

/* ---- hardware: what mig-manager leaves on each GPU (mig-parted v0.15.0 api/spec/v1/spec.go,
 * deployments/systemd/config-default.yaml) ---- */

/* The seed's trap (mig-parted v0.15.0 deployments/systemd/config-default.yaml): a 1-slice profile
 * that fits 7 times on other models but fewer here. */
static void warn_short_layout(struct ctx *c, const char *layout, const struct gpu_state *g)
{
	const struct catalog_mig_profile *p, *smallest = NULL;
	struct strbuf others = STRBUF_INIT;
	char *gpus;

	if (g->n_devices != 1)
		return;
	p = catalog_gpu_profile(g->model, g->devices[0].profile);
	if (!p || p->gi_slices != 1 || g->devices[0].count >= g->model->mig->compute_slices)
		return;
	for (size_t i = 0; i < catalog_gpu_count(c->cat); i++) {
		const struct catalog_gpu *o = catalog_gpu_at(c->cat, i);
		const struct catalog_mig_profile *op = catalog_gpu_profile(o, p->name);
		bool listed = false;
		if (!op || o->mig == g->model->mig || op->instances != o->mig->compute_slices)
			continue;
		for (size_t j = 0; j < i; j++)
			listed |= catalog_gpu_at(c->cat, j)->mig == o->mig &&
				  catalog_gpu_profile(catalog_gpu_at(c->cat, j), p->name);
		if (listed)
			continue; /* one model per geometry keeps the message short */
		strbuf_addsep(&others, ", ", o->name);
	}
	if (!others.len)
		return;
	for (size_t i = 0; i < g->model->mig->n_profiles; i++) {
		const struct catalog_mig_profile *q = &g->model->mig->profiles[i];
		if (q->gi_slices == 1 && !strchr(q->name, '+') && !strchr(q->name, '-') &&
		    (!smallest || q->instances > smallest->instances))
			smallest = q;
	}
	gpus = gpu_list(c, pick_model, g->model);
	gs_warnings_add(&c->adv->warnings,
			"layout %s gives %d x %s per %s (%s), not %d: %s x %d is the "
			"profile of other models (%s, ...)%s%s%s",
			layout, g->devices[0].count, p->name, g->model->name, gpus,
			g->model->mig->compute_slices, p->name, g->model->mig->compute_slices,
			others.buf, smallest ? "; this GPU's seven-way profile is " : "",
			smallest ? smallest->name : "",
			smallest ? " (mig-parted v0.15.0 deployments/systemd/config-default.yaml)"
				 : "");
	free(gpus);
	strbuf_release(&others);
}

static int apply_layout(struct ctx *c)
{
	const char *layout = c->hw->mig_config;
	bool any_capable = false;
	bool warned_nomatch = false, warned_gen = false;

	for (size_t i = 0; i < c->n; i++)
		any_capable |= c->gpu[i].model->mig != NULL;
	if (!layout)
		return 0;
	if (!any_capable) {
		gs_warnings_add(&c->adv->warnings,
				"%s=%s is ignored: no GPU on the node is MIG-capable "
				"(mig-manager runs only on MIG-capable nodes)",
				NODEHW_LABEL_MIG_CONFIG, layout);
		return 0;
	}
	for (size_t i = 0; i < c->n; i++) {
		struct gpu_state *g = &c->gpu[i];
		struct catalog_gpu_mig m;
		struct gs_error e;

		if (!g->model->mig)
			continue;
		if (catalog_layout_apply(c->cat, layout, g->model, &m, &e)) {
			fail(c->adv, "mig-manager: %s (GPU %zu, %s=failed)", e.msg, i,
			     "nvidia.com/mig.config.state");
			return -1;
		}
		if (m.result == CATALOG_APPLY_NO_MATCH) {
			if (!warned_nomatch)
				gs_warnings_add(
					&c->adv->warnings,
					"layout %s has no entry for %s (every entry "
					"has a device-filter): mig-manager leaves the GPU as it "
					"is, taken here as MIG disabled; a generated mig config "
					"would fail instead",
					layout, g->model->name);
			warned_nomatch = true;
			continue;
		}
		if (m.generated && !warned_gen) {
			gs_warnings_add(&c->adv->warnings,
					"layout %s is not in the default mig-parted config; "
					"built as mig-manager's generated config would (%s x %d)",
					layout, m.devices[0].profile, m.devices[0].count);
			warned_gen = true;
		}
		g->mig_enabled = m.mig_enabled;
		g->n_devices = m.n_devices;
		memcpy(g->devices, m.devices, sizeof(m.devices));
		/* Once per model: every GPU of a model gets the same layout. */
		if (first_of_model(c, i))
			warn_short_layout(c, layout, g);
	}
	c->layout_applied = true;
	for (size_t i = 0; i < c->n; i++) {
		bool many;
		if (c->gpu[i].model->mig || !strcmp(layout, "all-disabled"))
			continue;
		char *gpus = gpu_list(c, pick_not_capable, NULL);
		many = !strncmp(gpus, "GPUs", 4);
		gs_warnings_add(&c->adv->warnings,
				"%s %s not MIG-capable; layout %s leaves %s whole", gpus,
				many ? "are" : "is", layout, many ? "them" : "it");
		free(gpus);
		break;
	}
	return 0;
}

/* ---- the device plugin (k8s-device-plugin v0.20.0 internal/rm/device_map.go,
 * cmd/nvidia-device-plugin/main.go validateFlags) ---- */

static bool any_mig_enabled(const struct ctx *c)
{
	for (size_t i = 0; i < c->n; i++)
		if (c->gpu[i].mig_enabled)
			return true;
	return false;
}

static int validate_flags(struct ctx *c)
{
	const char *s = c->adv->mig_strategy;
	struct gs_error e;

	if (strcmp(s, "none") && strcmp(s, "single") && strcmp(s, "mixed")) {
		fail(c->adv, PLUGIN_FAIL "unable to validate flags: unknown MIG strategy: %s", s);
		return -1;
	}
	if (c->config) {
		/* Env beats file (k8s-device-plugin v0.20.0 api/config/v1/flags.go): validate what
		 * is in force, with MPS_ROOT as installers set it (gpu-operator
		 * controllers/object_controls.go and the Helm chart
		 * deployments/helm/nvidia-device-plugin). */
		struct dpconfig eff = *c->config;
		eff.mig_strategy = c->adv->mig_strategy;
		if (!eff.mps_root || !*eff.mps_root)
			eff.mps_root = DP_INSTALLER_MPS_ROOT;
		if (dpconfig_validate(&eff, &e)) {
			fail(c->adv, PLUGIN_FAIL "unable to validate flags: %s", e.msg);
			return -1;
		}
	}
	if (c->adv->sharing == DP_SHARING_MPS && !strcmp(s, "mixed")) {
		fail(c->adv, PLUGIN_FAIL "unable to validate flags: using --mig-strategy=mixed is "
					 "not supported with MPS");
		return -1;
	}
	return 0;
}

/* Device counts per resource before replication; 0 or a failure. */
static int device_map(struct ctx *c, json_t *map)
{
	const char *strategy = c->adv->mig_strategy;
	int full = 0, mig_devices = 0;
	const struct catalog_mig_profile *first = NULL;
	bool differ = false, warned_empty = false;

	for (size_t i = 0; i < c->n; i++)
		if (!c->gpu[i].mig_enabled || !strcmp(strategy, "none"))
			full++;
	if (full)
		add_count(map, RES_GPU, full);
	if (!strcmp(strategy, "none"))
		return 0;

	for (size_t i = 0; i < c->n; i++) {
		const struct gpu_state *g = &c->gpu[i];
		if (!g->mig_enabled)
			continue;
		if (g->n_devices == 0) {
			if (!strcmp(strategy, "single")) {
				fail(c->adv,
				     PLUGIN_FAIL BUILD_MAP
				     "invalid MIG configuration: at least one device with "
				     "migEnabled=true was not configured correctly: device %zu has "
				     "no MIG devices configured",
				     i);
				return -1;
			}
			if (!warned_empty) {
				char *gpus = gpu_list(c, pick_empty_mig, NULL);
				gs_warnings_add(
					&c->adv->warnings,
					"%s: MIG enabled but no MIG devices, so nothing is "
					"advertised for %s (the plugin only logs 'device %zu "
					"has no MIG devices configured')",
					gpus, strncmp(gpus, "GPUs", 4) ? "it" : "them", i);
				free(gpus);
			}
			warned_empty = true;
			continue;
		}
		for (size_t j = 0; j < g->n_devices; j++) {
			const struct catalog_mig_profile *p =
				catalog_gpu_profile(g->model, g->devices[j].profile);
			char res[160], pr[128];
			if (first && p != first)
				differ = true;
			if (!first)
				first = p;
			mig_devices += g->devices[j].count;
			if (!strcmp(strategy, "mixed")) {
				catalog_profile_resource(p->name, pr, sizeof(pr));
				snprintf(res, sizeof(res), "nvidia.com/mig-%s", pr);
				add_count(map, res, g->devices[j].count);
			}
		}
	}
	if (!strcmp(strategy, "single")) {
		if (differ) {
			fail(c->adv,
			     PLUGIN_FAIL BUILD_MAP "invalid MIG configuration: more than one "
						   "MIG device type present on node");
			return -1;
		}
		if (full && mig_devices) {
			fail(c->adv,
			     PLUGIN_FAIL BUILD_MAP "all devices on the node must be "
						   "configured with the same migEnabled value");
			return -1;
		}
		if (mig_devices)
			add_count(map, RES_GPU, mig_devices);
	}
	return 0;
}

/* updateDeviceMapWithReplicas: listed names are replicated (and renamed), the rest copied. */
static void replicate(struct ctx *c, json_t *map)
{
	json_t *out;
	const char *name;
	json_t *v;
	bool dup_warned = false;

	if (!c->sharing || c->adv->sharing == DP_SHARING_NONE)
		return;
	out = json_object();
	json_object_foreach (map, name, v) {
		if (!entry_for(c, name))
			json_object_set(out, name, v);
	}
	for (size_t i = 0; i < c->sharing->n_resources; i++) {
		const struct dp_replicated_resource *r = &c->sharing->resources[i];
		json_t *have = json_object_get(map, r->name);
		int replicas = r->replicas;
		bool seen = false;

		for (size_t j = 0; j < i; j++)
			seen |= !strcmp(c->sharing->resources[j].name, r->name);
		if (seen) {
			if (!dup_warned)
				gs_warnings_add(
					&c->adv->warnings,
					"config '%s': sharing.%s lists '%s' more than once: "
					"replica ids overwrite each other, so each GPU gets the "
					"largest replicas while GFD labels the first entry's",
					c->adv->config_name, block_name(c), r->name);
			dup_warned = true;
			continue;
		}
		for (size_t j = i + 1; j < c->sharing->n_resources; j++)
			if (!strcmp(c->sharing->resources[j].name, r->name) &&
			    c->sharing->resources[j].replicas > replicas)
				replicas = c->sharing->resources[j].replicas;
		if (!have || json_integer_value(have) == 0) {
			gs_warnings_add(
				&c->adv->warnings,
				"config '%s': sharing.%s resource '%s' matches nothing on the "
				"node (it advertises %s); the plugin ignores it silently",
				c->adv->config_name, block_name(c), r->name,
				json_object_size(map) ? "other resources" : "no GPU resource");
			continue;
		}
		add_count(out, r->rename ? r->rename : r->name,
			  json_integer_value(have) * replicas);
		if (r->rename && !strcmp(r->name, RES_GPU))
			gs_warnings_add(
				&c->adv->warnings,
				"config '%s': renameByDefault advertises %s as %s; %s is no "
				"longer offered on the node and pods asking for it will not "
				"fit there",
				c->adv->config_name, r->name, r->rename, r->name);
	}
	json_object_clear(map);
	json_object_update(map, out);
	json_decref(out);
}

/* After the plugin: MPS-only runtime refusals (k8s-device-plugin v0.20.0 internal/plugin/mps.go,
 * cmd/mps-control-daemon/mps/daemon.go). */
static int check_mps(struct ctx *c)
{
	if (c->adv->sharing != DP_SHARING_MPS)
		return 0;
	if (!strcmp(c->adv->mig_strategy, "single") && any_mig_enabled(c)) {
		fail(c->adv,
		     PLUGIN_FAIL "error getting plugins: unable to create plugins: failed "
				 "to create plugin: sharing using MPS is not supported for MIG "
				 "devices");
		return -1;
	}
	for (size_t i = 0; i < c->sharing->n_resources; i++) {
		const struct dp_replicated_resource *r = &c->sharing->resources[i];
		if (strcmp(r->name, RES_GPU))
			continue;
		for (size_t g = 0; g < c->n; g++) {
			const struct catalog_gpu *m = c->gpu[g].model;
			/* The daemon compares against 7.5 (k8s-device-plugin v0.20.0
			 * cmd/mps-control-daemon/mps/daemon.go): V100 gets 16. */
			int max = (m->cc_major > 7 || (m->cc_major == 7 && m->cc_minor >= 5)) ? 48
											      : 16;
			if (r->replicas > max) {
				fail(c->adv,
				     "mps-control-daemon: invalid MPS configuration: invalid "
				     "device "
				     "maximum allowed replicas exceeded: %d > %d",
				     r->replicas, max);
				return -1;
			}
		}
	}
	return 0;
}

/*
 * GFD's own refusals (cmd/gpu-feature-discovery/main.go validateFlags,
 * internal/lm/nvml.go, internal/lm/mig-strategy.go): it checks far less than
 * the plugin (k8s-device-plugin v0.20.0 cmd/nvidia-device-plugin/main.go validateFlags). Returns -1
 * and the message when it would crash-loop.
 */
static int gfd_failure(const struct ctx *c, char *msg, size_t size)
{
	const char *s = c->adv->mig_strategy;
	const char *d = c->config ? c->config->device_discovery_strategy : NULL;

	if (d && strcmp(d, "auto") && strcmp(d, "nvml") && strcmp(d, "tegra") &&
	    strcmp(d, "vfio")) {
		snprintf(msg, size,
			 "gpu-feature-discovery: unable to load config: unable to validate flags: "
			 "invalid --device-discovery-strategy option %s",
			 d);
		return -1;
	}
	if (c->adv->sharing == DP_SHARING_MPS && any_mig_enabled(c)) {
		snprintf(msg, size,
			 "gpu-feature-discovery: error creating labeler: error creating sharing "
			 "labeler: failed to check MPS-capable: MPS sharing is not supported for "
			 "mig devices");
		return -1;
	}
	if (strcmp(s, "none") && strcmp(s, "single") && strcmp(s, "mixed")) {
		snprintf(msg, size,
			 "gpu-feature-discovery: error creating labeler: error creating resource "
			 "labeler: failed to construct MIG resource labeler: unknown strategy: %s",
			 s);
		return -1;
	}
	return 0;
}

/* ---- GPU feature discovery labels (k8s-device-plugin v0.20.0 internal/lm/) ---- */

static void sharing_labels(struct ctx *c, const char *res, int *replicas, const char **strategy,
			   bool *shared_suffix)
{
	const struct dp_replicated_resource *r = entry_for(c, res);

	*replicas = r ? r->replicas : 1;
	*strategy = *replicas > 1 ? dp_sharing_strategy_name(c->adv->sharing) : "none";
	*shared_suffix = r && r->replicas > 1 && !r->rename;
}

/* One model's full-GPU labeller (NewGPUResourceLabeler); sharing NULL = "without sharing". */
static void model_labels(struct ctx *c, const struct catalog_gpu *m, bool with_sharing)
{
	int count = 0, replicas = 0;
	bool shared = false;
	const char *strategy = "none";

	for (size_t j = 0; j < c->n; j++)
		count += c->gpu[j].model == m; /* MIG-enabled and full GPUs of the model */
	if (with_sharing)
		sharing_labels(c, RES_GPU, &replicas, &strategy, &shared);
	set_label(c, RES_GPU ".count", "%d", count);
	set_label(c, RES_GPU ".replicas", "%d", replicas);
	set_label(c, RES_GPU ".sharing-strategy", "%s", strategy);
	set_label(c, RES_GPU ".product", "%s%s", m->label, shared ? "-SHARED" : "");
	if (m->memory_mib) /* else an earlier labeller's value stays (Merge) */
		set_label(c, RES_GPU ".memory", "%d", m->memory_mib);
	if (m->cc_major) {
		set_label(c, RES_GPU ".family", "%s", catalog_family(m->cc_major, m->cc_minor));
		set_label(c, RES_GPU ".compute.major", "%d", m->cc_major);
		set_label(c, RES_GPU ".compute.minor", "%d", m->cc_minor);
	}
}

/* Does model m have a GPU with mig_enabled == on? */
static bool model_has(const struct ctx *c, const struct catalog_gpu *m, bool on)
{
	for (size_t i = 0; i < c->n; i++)
		if (c->gpu[i].model == m && c->gpu[i].mig_enabled == on)
			return true;
	return false;
}

/*
 * newGPULabelers (internal/lm/mig-strategy.go): one labeller per model of
 * MIG-enabled GPUs, without sharing, then one per model of full GPUs, with
 * it; later labellers overwrite earlier ones (k8s-device-plugin v0.20.0
 * internal/lm/mig-strategy.go). So a full GPU's labels win over a MIG-enabled GPU's whatever the
 * declaration order. Among models of one kind upstream's order is a Go map's; gpushare takes
 * declaration order and warns.
 */
static void full_gpu_labels(struct ctx *c)
{
	const struct catalog_gpu *last = NULL;
	size_t models = 0;

	for (int pass = 0; pass < 2; pass++) {
		bool full = pass == 1;
		for (size_t i = 0; i < c->n; i++) {
			const struct catalog_gpu *m = c->gpu[i].model;
			if (!first_of_model(c, i) || !model_has(c, m, !full))
				continue;
			model_labels(c, m, full);
			last = m;
		}
	}
	for (size_t i = 0; i < c->n; i++)
		models += first_of_model(c, i);
	if (models > 1)
		gs_warnings_add(&c->adv->warnings,
				"it holds %zu GPU models: GFD writes the same nvidia.com/gpu.* "
				"labels once per model, MIG-enabled models first, and among "
				"those of one kind the last one wins in no defined order "
				"('Multiple device types detected'); shown here: %s",
				models, last->name);
}

static void mig_labels(struct ctx *c, const char *res, const struct catalog_gpu *parent,
		       const struct catalog_mig_profile *p, int count)
{
	char pr[128];
	int replicas;
	const char *strategy;
	bool shared;

	catalog_profile_resource(p->name, pr, sizeof(pr));
	sharing_labels(c, res, &replicas, &strategy, &shared);
	set_rlabel(c, res, "count", "%d", count);
	set_rlabel(c, res, "replicas", "%d", replicas);
	set_rlabel(c, res, "sharing-strategy", "%s", strategy);
	set_rlabel(c, res, "product", "%s-MIG-%s%s", parent->label, pr, shared ? "-SHARED" : "");
	set_rlabel(c, res, "memory", "%d", p->memory_mib);
	set_rlabel(c, res, "multiprocessors", "%d", p->multiprocessors);
	set_rlabel(c, res, "slices.gi", "%d", p->gi_slices);
	set_rlabel(c, res, "slices.ci", "%d", p->ci_slices);
	set_rlabel(c, res, "engines.copy", "%d", p->copy_engines);
	set_rlabel(c, res, "engines.decoder", "%d", p->decoders);
	set_rlabel(c, res, "engines.encoder", "%d", p->encoders);
	set_rlabel(c, res, "engines.jpeg", "%d", p->jpeg);
	set_rlabel(c, res, "engines.ofa", "%d", p->ofa);
}

/* Single strategy: empty MIG GPU, MIG on/off mixed, or several device types (k8s-device-plugin
 * v0.20.0 internal/lm/mig-strategy.go). */
static bool single_invalid(const struct ctx *c)
{
	const struct catalog_mig_profile *first = NULL;
	bool on = false, off = false;

	for (size_t i = 0; i < c->n; i++) {
		const struct gpu_state *g = &c->gpu[i];
		on |= g->mig_enabled;
		off |= !g->mig_enabled;
		if (!g->mig_enabled)
			continue;
		if (g->n_devices == 0)
			return true;
		for (size_t j = 0; j < g->n_devices; j++) {
			const struct catalog_mig_profile *p =
				catalog_gpu_profile(g->model, g->devices[j].profile);
			if (first && p != first)
				return true;
			first = p;
		}
	}
	return on && off;
}

/* Whether `layout` leaves this node valid under the single strategy (as single_invalid). */
static bool single_layout_ok(const struct ctx *c, const char *layout)
{
	const struct catalog_mig_profile *first = NULL;
	bool on = false, off = false;

	for (size_t i = 0; i < c->n; i++) {
		const struct catalog_gpu *g = c->gpu[i].model;
		struct catalog_gpu_mig m;
		struct gs_error e;
		if (!g->mig) {
			off = true;
			continue;
		}
		if (catalog_layout_apply(c->cat, layout, g, &m, &e))
			return false;
		if (m.result != CATALOG_APPLY_OK)
			return false; /* left as it was: that is no fix */
		if (!m.mig_enabled) {
			off = true;
			continue;
		}
		on = true;
		if (m.n_devices != 1)
			return false;
		const struct catalog_mig_profile *p = catalog_gpu_profile(g, m.devices[0].profile);
		if (first && p != first)
			return false;
		first = p;
	}
	return !(on && off);
}

/*
 * What would work where the single strategy finds the node's MIG layout
 * invalid: the layouts of the table that leave every GPU with one and
 * the same MIG device type (or MIG off everywhere), and migStrategy
 * mixed, which advertises each profile under its own name.
 */
static void single_hint(struct ctx *c)
{
	struct strbuf ok = STRBUF_INIT;
	size_t n_ok = 0;

	for (size_t i = 0; i < catalog_layout_count(c->cat); i++) {
		const char *name = catalog_layout_at(c->cat, i)->name;
		if (!single_layout_ok(c, name))
			continue;
		if (n_ok++ < 8)
			strbuf_addsep(&ok, ", ", name);
	}
	if (n_ok > 8)
		strbuf_addf(&ok, ", ... (%zu in all: 'gpushare catalog MODEL')", n_ok);
	gs_warnings_add(&c->adv->warnings,
			"migStrategy single needs every GPU of the node MIG-enabled with one and "
			"the same MIG profile, or MIG off on all; %s%s%s%s; or set migStrategy "
			"mixed, which advertises each profile as nvidia.com/mig-<profile>",
			n_ok ? "layouts (" NODEHW_LABEL_MIG_CONFIG ") that do so here: " : "",
			n_ok ? ok.buf : "no layout of the default mig-parted config does so here",
			n_ok && c->hw->mig_config ? " instead of " : "",
			n_ok && c->hw->mig_config ? c->hw->mig_config : "");
	strbuf_release(&ok);
}

static void gfd_labels(struct ctx *c)
{
	const char *strategy = c->adv->mig_strategy;
	bool capable = false;

	if (c->n == 0)
		return;
	for (size_t i = 0; i < c->n; i++)
		capable |= c->gpu[i].model->mig != NULL;
	/* newVersionLabeler (internal/lm/nvml.go): deprecated and current names. */
	{
		const struct nodehw *hw = c->hw;
		const char *v = hw->driver_version, *dot1 = strchr(v, '.');
		const char *dot2 = dot1 ? strchr(dot1 + 1, '.') : NULL;
		char major[16], minor[16], rev[16];
		snprintf(major, sizeof(major), "%.*s", (int)(dot1 - v), v);
		snprintf(minor, sizeof(minor), "%.*s",
			 (int)(dot2 ? (size_t)(dot2 - dot1 - 1) : strlen(dot1 + 1)), dot1 + 1);
		snprintf(rev, sizeof(rev), "%s", dot2 ? dot2 + 1 : "");
		set_label(c, "nvidia.com/cuda.driver.major", "%s", major);
		set_label(c, "nvidia.com/cuda.driver.minor", "%s", minor);
		set_label(c, "nvidia.com/cuda.driver.rev", "%s", rev);
		set_label(c, "nvidia.com/cuda.runtime.major", "%d", hw->cuda_major);
		set_label(c, "nvidia.com/cuda.runtime.minor", "%d", hw->cuda_minor);
		set_label(c, "nvidia.com/cuda.driver-version.major", "%s", major);
		set_label(c, "nvidia.com/cuda.driver-version.minor", "%s", minor);
		set_label(c, "nvidia.com/cuda.driver-version.revision", "%s", rev);
		set_label(c, "nvidia.com/cuda.driver-version.full", "%s", v);
		set_label(c, "nvidia.com/cuda.runtime-version.major", "%d", hw->cuda_major);
		set_label(c, "nvidia.com/cuda.runtime-version.minor", "%d", hw->cuda_minor);
		set_label(c, "nvidia.com/cuda.runtime-version.full", "%d.%d", hw->cuda_major,
			  hw->cuda_minor);
		/* newMachineTypeLabeler (internal/lm/machine-type.go). */
		set_label(c, "nvidia.com/gpu.machine", "%s", hw->machine);
	}
	/* NewTimestampLabeler (internal/lm/timestamp.go); flags.gfd.noTimestamp is not modelled. */
	set_label(c, ADVERTISE_LABEL_TIMESTAMP, "%lld", c->now);
	/* newGPUModeLabeler: every catalog model is a 3D controller (PCI class 0x0302). */
	set_label(c, "nvidia.com/gpu.mode", "compute");
	/* NewVGPULabeler (internal/lm/vgpu.go): gpushare models no vGPU. */
	set_label(c, "nvidia.com/vgpu.present", "false");
	set_label(c, "nvidia.com/mig.capable", "%s", capable ? "true" : "false");
	set_label(c, "nvidia.com/mps.capable", "%s",
		  c->adv->sharing == DP_SHARING_MPS && !any_mig_enabled(c) ? "true" : "false");
	if (strcmp(strategy, "none"))
		set_label(c, NODEHW_LABEL_MIG_STRATEGY, "%s", strategy);
	full_gpu_labels(c);

	if (!strcmp(strategy, "single") && any_mig_enabled(c)) {
		if (single_invalid(c)) {
			single_hint(c);
			/* newInvalidMigStrategyLabeler(migEnabledDevices[0], ...) */
			size_t first = 0;
			while (!c->gpu[first].mig_enabled)
				first++;
			set_label(c, RES_GPU ".product", "%s-MIG-INVALID",
				  c->gpu[first].model->label);
			set_label(c, RES_GPU ".count", "0");
			set_label(c, RES_GPU ".replicas", "0");
			set_label(c, RES_GPU ".sharing-strategy", "%s", "");
			set_label(c, RES_GPU ".memory", "0");
			return;
		}
		for (size_t i = 0; i < c->n; i++) {
			const struct gpu_state *g = &c->gpu[i];
			int total = 0;
			if (!g->mig_enabled)
				continue;
			for (size_t j = 0; j < c->n; j++)
				for (size_t k = 0; k < c->gpu[j].n_devices; k++)
					total += c->gpu[j].devices[k].count;
			mig_labels(c, RES_GPU, g->model,
				   catalog_gpu_profile(g->model, g->devices[0].profile), total);
			break;
		}
	} else if (!strcmp(strategy, "mixed")) {
		for (size_t i = 0; i < c->n; i++) {
			const struct gpu_state *g = &c->gpu[i];
			for (size_t j = 0; g->mig_enabled && j < g->n_devices; j++) {
				const struct catalog_mig_profile *p =
					catalog_gpu_profile(g->model, g->devices[j].profile);
				char pr[128], res[160];
				int total = 0;
				bool earlier = false;
				/* The profile's first device names it (newMigStrategyMixedLabeler).
				 */
				for (size_t a = 0; a < i; a++)
					for (size_t b = 0;
					     c->gpu[a].mig_enabled && b < c->gpu[a].n_devices; b++)
						earlier |= !strcmp(c->gpu[a].devices[b].profile,
								   p->name);
				if (earlier)
					continue;
				catalog_profile_resource(p->name, pr, sizeof(pr));
				snprintf(res, sizeof(res), "nvidia.com/mig-%s", pr);
				for (size_t a = 0; a < c->n; a++)
					for (size_t b = 0;
					     c->gpu[a].mig_enabled && b < c->gpu[a].n_devices; b++)
						if (!strcmp(c->gpu[a].devices[b].profile, p->name))
							total += c->gpu[a].devices[b].count;
				mig_labels(c, res, g->model, p, total);
			}
		}
	}
}

/* ---- putting it together ---- */

static void describe_gpus(struct ctx *c)
{
	for (size_t i = 0; i < c->n; i++) {
		json_t *g = json_object(), *d = json_object();
		for (size_t j = 0; j < c->gpu[i].n_devices; j++)
			json_object_set_new(d, c->gpu[i].devices[j].profile,
					    json_integer(c->gpu[i].devices[j].count));
		json_object_set_new(g, "index", json_integer((json_int_t)i));
		json_object_set_new(g, "product", json_string(c->gpu[i].model->name));
		json_object_set_new(g, "migEnabled", json_boolean(c->gpu[i].mig_enabled));
		json_object_set_new(g, "migDevices", d);
		json_array_append_new(c->adv->gpus, g);
	}
}

static void resolve_strategy(struct ctx *c)
{
	const struct nodehw *hw = c->hw;
	const char *from_config = c->config ? c->config->mig_strategy : NULL;

	if (hw->declared_mig_strategy) {
		c->adv->mig_strategy = gs_xstrdup(hw->declared_mig_strategy);
		c->adv->mig_strategy_source = "label";
		if (from_config && strcmp(from_config, hw->declared_mig_strategy))
			gs_warnings_add(&c->adv->warnings,
					"%s=%s overrides flags.migStrategy: %s of config "
					"'%s' (as the MIG_STRATEGY environment overrides the file)",
					NODEHW_LABEL_MIG_STRATEGY, hw->declared_mig_strategy,
					from_config, c->adv->config_name);
	} else if (from_config) {
		c->adv->mig_strategy = gs_xstrdup(from_config);
		c->adv->mig_strategy_source = "config";
	} else {
		c->adv->mig_strategy = gs_xstrdup("none");
		c->adv->mig_strategy_source = "default";
	}
}

static void mig_none_warning(struct ctx *c)
{
	if (strcmp(c->adv->mig_strategy, "none") || !any_mig_enabled(c))
		return;
	gs_warnings_add(&c->adv->warnings,
			"%s=%s enables MIG but the MIG strategy is none: the plugin "
			"advertises whole GPUs and no MIG device (declare %s or set "
			"flags.migStrategy)",
			NODEHW_LABEL_MIG_CONFIG, c->hw->mig_config, NODEHW_LABEL_MIG_STRATEGY);
}

int advertise_compute(const struct catalog *cat, const struct nodehw *hw,
		      const struct dpconfig *config, const char *config_name,
		      struct advertisement **out, struct gs_error *err)
{
	struct ctx c = {.cat = cat, .hw = hw, .config = config, .now = (long long)time(NULL)};
	json_t *map = NULL;
	char gfd_msg[512];
	size_t k = 0;
	const char *name;
	json_t *v;

	(void)err;
	c.adv = adv_new(hw, config_name ? config_name : "");
	*out = c.adv;
	c.adv->sharing = config ? dpconfig_sharing_strategy(config) : DP_SHARING_NONE;
	c.sharing =
		config && c.adv->sharing != DP_SHARING_NONE ? dpconfig_replicated(config) : NULL;
	resolve_strategy(&c);

	c.n = (size_t)hw->total;
	c.gpu = gs_xcalloc(c.n ? c.n : 1, sizeof(*c.gpu));
	for (size_t i = 0; i < hw->n_gpus; i++)
		for (int j = 0; j < hw->gpus[i].count; j++)
			c.gpu[k++].model = hw->gpus[i].model;
	if (c.n == 0)
		gs_warnings_add(&c.adv->warnings,
				"no GPU declared (annotations %s and %s); it advertises "
				"nothing",
				NODEHW_ANN_PRODUCT, NODEHW_ANN_COUNT);

	if (apply_layout(&c)) {
		/* mig-manager's state alone; the GPUs keep a layout gpushare cannot know. */
		c.adv->outcome = ADVERTISE_MIG_FAILED;
		json_object_set_new(c.adv->labels, ADVERTISE_LABEL_MIG_STATE,
				    json_string("failed"));
		json_object_update(c.adv->owned_labels, c.adv->labels);
		goto done;
	}
	describe_gpus(&c);
	if (c.n == 0)
		goto vanished;

	/* The plugin: the first refusal is the message the node shows. */
	map = json_object();
	if (!validate_flags(&c)) {
		mig_none_warning(&c);
		if (!device_map(&c, map)) {
			replicate(&c, map);
			check_mps(&c);
		}
	}
	/* GFD, a separate DaemonSet: it fails only on its own checks. */
	if (gfd_failure(&c, gfd_msg, sizeof(gfd_msg))) {
		fail(c.adv, "%s", gfd_msg);
		c.adv->outcome = ADVERTISE_REFUSED;
		goto done;
	}
	gfd_labels(&c);
	if (c.layout_applied) /* mig-manager's setState(migStateSuccess) */
		json_object_set_new(c.adv->labels, ADVERTISE_LABEL_MIG_STATE,
				    json_string("success"));
	if (c.adv->failure) {
		c.adv->outcome = ADVERTISE_PLUGIN_DOWN;
		goto vanished; /* nothing registered: every resource it had goes to 0 */
	}
	json_object_foreach (map, name, v) {
		if (json_integer_value(v) >
		    0) /* k8s-device-plugin v0.20.0 cmd/nvidia-device-plugin/main.go startPlugins:
			  zero devices, no registration */
			json_object_set(c.adv->resources, name, v);
	}

vanished:
	json_object_foreach (hw->managed_resources, name, v) {
		if (!json_object_get(c.adv->resources, name))
			json_object_set_new(c.adv->resources, name, json_integer(0));
	}
	json_object_update(c.adv->owned_labels, c.adv->labels);
	if (hw->declared_mig_strategy)
		json_object_del(c.adv->owned_labels, NODEHW_LABEL_MIG_STRATEGY);
done:
	json_decref(map);
	free(c.gpu);
	return 0;
}

/* The plugin's whole log line for key i's fatal error, with where it is. */
static void parse_failure(struct advertisement *adv, const struct dpconfig_set *set, size_t i,
			  const struct gs_error *e)
{
	const struct dp_diags *d = dpconfig_set_diags(set, i);
	char chain[2048], where[512];

	for (size_t k = 0; d && k < d->n; k++) {
		const struct dp_diag *x = &d->items[k];
		if (x->level != DP_ERROR || !x->upstream)
			continue;
		if (x->pos.line > 0)
			snprintf(where, sizeof(where), " (%s:%d:%d)", x->file, x->pos.line,
				 x->pos.col);
		else
			where[0] = '\0';
		fail(adv, "nvidia-device-plugin: %s%s", dp_diag_chain(x, chain, sizeof(chain)),
		     where);
		return;
	}
	fail(adv, PLUGIN_FAIL "%s", gs_error_str(e, chain, sizeof(chain)));
}

/* What upstream logs (or does silently) about the chosen config (k8s-device-plugin v0.20.0
 * api/config/v1/config.go DisableResourceNamingInConfig). */
static void config_warnings(struct gs_warnings *w, const struct dpconfig_set *set, const char *key)
{
	long i = *key ? dpconfig_set_find(set, key) : -1;
	const struct dp_diags *d = i >= 0 ? dpconfig_set_diags(set, (size_t)i) : NULL;

	for (size_t k = 0; d && k < d->n; k++) {
		const struct dp_diag *x = &d->items[k];
		if (x->level != DP_WARNING)
			continue;
		if (x->pos.line > 0)
			gs_warnings_add(w, "%s:%d:%d: config '%s': %s", x->file, x->pos.line,
					x->pos.col, key, x->msg);
		else
			gs_warnings_add(w, "config '%s': %s", key, x->msg);
	}
}

int advertise_node(const struct catalog *cat, const json_t *node, const struct dpconfig_set *set,
		   const struct advertise_options *opt, struct advertisement **out,
		   struct gs_error *err)
{
	struct nodehw *hw;
	struct gs_warnings w;
	const struct dpconfig *config = NULL;
	const char *chosen = "";
	int rc;

	*out = NULL;
	gs_warnings_init(&w);
	if (nodehw_from_node(cat, node, opt ? opt->source : NULL, &hw, &w, err)) {
		gs_warnings_release(&w);
		return -1;
	}

	if (set) {
		struct gs_error e;
		struct dpconfig_choice choice;
		if (dpconfig_set_select(set, hw->config_label, opt ? opt->default_config : NULL,
					opt ? opt->fallbacks : NULL, &choice, &e)) {
			char msg[2048];
			struct advertisement *adv = adv_new(hw, NULL);
			if (choice.key >= 0)
				parse_failure(adv, set, (size_t)choice.key, &e);
			else
				fail(adv, "config-manager: %s", gs_error_str(&e, msg, sizeof(msg)));
			adv->mig_strategy = gs_xstrdup("none");
			adv->mig_strategy_source = "default";
			adv->outcome = ADVERTISE_REFUSED;
			for (size_t i = 0; i < w.n; i++)
				gs_warnings_add(&adv->warnings, "%s", w.items[i]);
			gs_warnings_release(&w);
			nodehw_free(hw);
			*out = adv;
			return 0;
		}
		config = choice.config;
		chosen = choice.name;
	}
	if (set)
		config_warnings(&w, set, chosen);
	rc = advertise_compute(cat, hw, config, chosen, out, err);
	if (rc == 0 && opt && opt->now &&
	    json_object_get((*out)->labels, ADVERTISE_LABEL_TIMESTAMP)) {
		char ts[32];
		snprintf(ts, sizeof(ts), "%lld", opt->now);
		json_object_set_new((*out)->labels, ADVERTISE_LABEL_TIMESTAMP, json_string(ts));
		json_object_set_new((*out)->owned_labels, ADVERTISE_LABEL_TIMESTAMP,
				    json_string(ts));
	}
	if (rc == 0 && w.n) {
		/* Node-reading warnings first: they explain what follows. */
		struct gs_warnings merged;
		gs_warnings_init(&merged);
		for (size_t i = 0; i < w.n; i++)
			gs_warnings_add(&merged, "%s", w.items[i]);
		for (size_t i = 0; i < (*out)->warnings.n; i++)
			gs_warnings_add(&merged, "%s", (*out)->warnings.items[i]);
		gs_warnings_release(&(*out)->warnings);
		(*out)->warnings = merged;
	}
	gs_warnings_release(&w);
	nodehw_free(hw);
	return rc;
}

/* ---- the merge patch (mergepatch.c) ---- */

int advertise_patch(const struct advertisement *adv, const json_t *node, json_t **patch,
		    struct gs_warnings *warnings, struct gs_error *err)
{
	struct mergepatch_want want = {
		.labels = adv->owned_labels,
		.refresh_label = ADVERTISE_LABEL_TIMESTAMP,
		.resources = adv->outcome == ADVERTISE_MIG_FAILED ? NULL : adv->resources,
		.keep_unlisted = adv->outcome == ADVERTISE_MIG_FAILED,
		.allocatable = adv->outcome == ADVERTISE_MIG_FAILED ? NULL : adv->allocatable,
	};
	json_t *ann = NULL;
	int rc;

	*patch = NULL;
	if (adv->outcome == ADVERTISE_REFUSED) {
		gs_error_set(err, "node '%s': no patch: %s", adv->node, adv->failure);
		return -1;
	}
	if (adv->health_state) {
		ann = json_pack("{s:s}", NODEHW_ANN_UNHEALTHY, adv->health_state);
		want.annotations = ann;
	}
	rc = mergepatch_node(node, &want, patch, warnings, err);
	json_decref(ann);
	return rc;
}

/* The attributes of a nvidia.com/gpu.* or nvidia.com/mig-<profile>.* family (set_rlabel). */
static const char *const family_attrs[] = {
	"count",	   "replicas",	    "sharing-strategy", "product",	"memory",
	"family",	   "compute.major", "compute.minor",	"machine",	"mode",
	"multiprocessors", "slices.gi",	    "slices.ci",	"engines.copy", "engines.decoder",
	"engines.encoder", "engines.jpeg",  "engines.ofa",
};

static const char *const node_labels[] = {
	ADVERTISE_LABEL_TIMESTAMP, "nvidia.com/vgpu.present", "nvidia.com/mig.capable",
	"nvidia.com/mps.capable",  NODEHW_LABEL_MIG_STRATEGY, ADVERTISE_LABEL_MIG_STATE,
};

bool advertise_gfd_label(const char *key)
{
	const char *attr = NULL;
	size_t n = sizeof(family_attrs) / sizeof(family_attrs[0]);

	if (!strncmp(key, "nvidia.com/cuda.", 16))
		return true;
	for (size_t i = 0; i < sizeof(node_labels) / sizeof(node_labels[0]); i++)
		if (!strcmp(key, node_labels[i]))
			return true;
	if (!strncmp(key, RES_GPU ".", strlen(RES_GPU ".")))
		attr = key + strlen(RES_GPU ".");
	for (size_t i = 0; attr && i < n; i++)
		if (!strcmp(attr, family_attrs[i]))
			return true;
	if (strncmp(key, "nvidia.com/mig-", 15))
		return false;
	/* nvidia.com/mig-<profile>.<attr>: the profile holds dots too (1g.10gb.me). */
	for (size_t i = 0; i < n; i++) {
		size_t kl = strlen(key), al = strlen(family_attrs[i]);
		if (kl > 15 + al + 1 && key[kl - al - 1] == '.' &&
		    !strcmp(key + kl - al, family_attrs[i]))
			return true;
	}
	return false;
}

json_t *advertisement_to_json(const struct advertisement *adv)
{
	json_t *o = json_object(), *cap = json_object();
	const char *key;
	json_t *v;

	json_object_foreach (adv->resources, key, v) {
		char q[32];
		snprintf(q, sizeof(q), "%" JSON_INTEGER_FORMAT, json_integer_value(v));
		json_object_set_new(cap, key, json_string(q));
	}
	json_object_set_new(o, "node", json_string(adv->node));
	json_object_set_new(o, "config",
			    adv->config_name ? json_string(adv->config_name) : json_null());
	json_object_set_new(o, "migStrategy",
			    adv->mig_strategy ? json_string(adv->mig_strategy) : json_null());
	json_object_set_new(o, "migStrategySource",
			    adv->mig_strategy_source ? json_string(adv->mig_strategy_source)
						     : json_null());
	json_object_set_new(o, "sharingStrategy",
			    json_string(dp_sharing_strategy_name(adv->sharing)));
	json_object_set(o, "gpus", adv->gpus);
	json_object_set(o, "capacity", cap);
	{
		json_t *alloc = json_deep_copy(cap);
		json_object_foreach (adv->allocatable, key, v) {
			char q[32];
			snprintf(q, sizeof(q), "%" JSON_INTEGER_FORMAT, json_integer_value(v));
			json_object_set_new(alloc, key, json_string(q));
		}
		json_object_set_new(o, "allocatable", alloc);
	}
	json_decref(cap);
	if (adv->unhealthy) {
		json_t *why = json_array();
		json_object_set(o, "unhealthyDevices", adv->unhealthy);
		for (size_t i = 0; i < adv->health_why.n; i++)
			json_array_append_new(why, json_string(adv->health_why.items[i]));
		json_object_set_new(o, "health", why);
	} else if (adv->health_why.n) {
		json_t *why = json_array();
		for (size_t i = 0; i < adv->health_why.n; i++)
			json_array_append_new(why, json_string(adv->health_why.items[i]));
		json_object_set_new(o, "health", why);
	}
	json_object_set(o, "labels", adv->labels);
	if (adv->failure) {
		static const char *const outcomes[] = {"ok", "plugin-down", "mig-failed",
						       "refused"};
		json_object_set_new(o, "error", json_string(adv->failure));
		json_object_set_new(o, "outcome", json_string(outcomes[adv->outcome]));
	}
	return o;
}
