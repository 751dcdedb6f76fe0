#include "engine/dplint.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/catalog.h"
#include "base/banned.h"

#define LABEL "nvidia.com/device-plugin.config"
#define MPS_MAX_CLIENTS                                                                            \
	48		       /* compute capability >= 7.5 (k8s-device-plugin v0.20.0             \
				  cmd/mps-control-daemon/mps/daemon.go) */
#define MPS_MAX_CLIENTS_OLD 16 /* below 7.5, V100 included */
/* The MPS control daemon's refusal past its client limit: replicas, limit. */
#define MPS_REFUSAL                                                                                \
	"the MPS control daemon fails with 'invalid MPS configuration: invalid device maximum "    \
	"allowed replicas exceeded: %d > %d'"

void dplint_options_init(struct dplint_options *o)
{
	memset(o, 0, sizeof(*o));
	o->installer = DPLINT_HELM;
	o->plugin_minor = DPLINT_LATEST_MINOR;
}

int dplint_parse_version(const char *s, int *minor)
{
	char *end;
	long m;

	if (*s == 'v')
		s++;
	if (strncmp(s, "0.", 2))
		return -1;
	m = strtol(s + 2, &end, 10);
	if (end == s + 2 || (*end && *end != '.') || m < 12 || m > DPLINT_LATEST_MINOR)
		return -1;
	*minor = (int)m;
	return 0;
}

int dplint_parse_installer(const char *s, enum dplint_installer *out)
{
	if (!strcmp(s, "helm"))
		*out = DPLINT_HELM;
	else if (!strcmp(s, "operator") || !strcmp(s, "gpu-operator"))
		*out = DPLINT_OPERATOR;
	else if (!strcmp(s, "none") || !strcmp(s, "bare"))
		*out = DPLINT_BARE;
	else
		return -1;
	return 0;
}

static const char *cp_mig_strategy(const struct dplint_options *o)
{
	return o->cluster_policy_mig_strategy ? o->cluster_policy_mig_strategy : "single";
}

static bool sets_mps_root(const struct dplint_options *o)
{
	return o->installer != DPLINT_BARE && !o->no_mps_root;
}

static struct ydoc_pos key_at(const struct dpconfig *c, const char *path)
{
	const struct dp_key *k = dpconfig_key(c, path);
	struct ydoc_pos none = {.line = 0, .col = 0};

	return k ? k->pos : none;
}

/* Keys a release does not know yet: it ignores them silently (k8s-device-plugin v0.20.0
 * CHANGELOG.md). */
static const struct {
	const char *path;
	int minor;
} introduced[] = {
	{"flags.gfd.machineTypeFile", 14},
	{"sharing.mps", 15},
	{"flags.mpsRoot", 15},
	{"flags.useNodeFeatureAPI", 15},
	{"flags.plugin.cdiAnnotationPrefix", 15},
	{"flags.nvidiaDevRoot", 16},
	{"flags.deviceDiscoveryStrategy", 16},
	{"imex", 17},
	{"flags.gdrcopyEnabled", 18},
	{"flags.plugin.sharedDevicesAllocationPolicy", 20},
};

static bool known_in(const char *path, int minor)
{
	for (size_t i = 0; i < sizeof(introduced) / sizeof(introduced[0]); i++) {
		size_t n = strlen(introduced[i].path);
		if (!strncmp(path, introduced[i].path, n) && (!path[n] || path[n] == '.'))
			return minor >= introduced[i].minor;
	}
	return true;
}

static bool mig_profile_known(const char *part)
{
	const struct catalog *cat;
	struct gs_error err;
	char res[64];

	if (catalog_builtin(&cat, &err))
		return true; /* no catalog, no verdict */
	for (size_t i = 0; i < catalog_gpu_count(cat); i++) {
		const struct catalog_gpu *g = catalog_gpu_at(cat, i);
		if (!g->mig)
			continue;
		for (size_t j = 0; j < g->mig->n_profiles; j++) {
			catalog_profile_resource(g->mig->profiles[j].name, res, sizeof(res));
			if (!strcmp(res, part))
				return true;
		}
	}
	return false;
}

static void lint_names(const struct dp_sharing *sh, bool mps, const char *mig_strategy,
		       const char *file, struct dp_diags *out)
{
	for (size_t i = 0; i < sh->n_resources; i++) {
		const struct dp_replicated_resource *r = &sh->resources[i];
		const char *part = r->name + strlen("nvidia.com/");
		bool is_gpu = !strcmp(r->name, "nvidia.com/gpu");
		bool is_mig = !strncmp(part, "mig-", 4);

		if (!is_gpu && !is_mig) {
			dp_diags_add(out, DP_WARNING, DP_STAGE_NONE, file, r->pos,
				     "'%s' is not a resource the plugin advertises (only "
				     "nvidia.com/gpu and nvidia.com/mig-<profile>): this entry is "
				     "silently ignored",
				     r->name);
			continue;
		}
		if (is_mig && !mig_profile_known(part + 4)) {
			struct strbuf hint = STRBUF_INIT;
			const struct catalog *cat;
			struct gs_error err;
			if (catalog_builtin(&cat, &err) == 0)
				catalog_profile_hint(cat, NULL, part + 4, true, &hint);
			dp_diags_add(
				out, DP_WARNING, DP_STAGE_NONE, file, r->pos,
				"no known GPU has a MIG profile named '%s': this entry matches "
				"nothing and is silently ignored%s",
				part + 4, hint.buf);
			strbuf_release(&hint);
		}
		if (is_mig && mps) {
			dp_diags_add(
				out, DP_WARNING, DP_STAGE_NONE, file, r->pos,
				"MPS shares full GPUs only: '%s' is a MIG device (the plugin "
				"fails with 'sharing using MPS is not supported for MIG devices' "
				"where it exists, and the MPS daemon skips it)",
				r->name);
		} else if (is_mig && strcmp(mig_strategy, "mixed")) {
			dp_diags_add(out, DP_NOTE, DP_STAGE_NONE, file, r->pos,
				     "'%s' exists only with migStrategy mixed (in force here: %s); "
				     "under single, MIG devices are advertised as nvidia.com/gpu",
				     r->name, mig_strategy);
		}
		if (mps && r->replicas > MPS_MAX_CLIENTS)
			dp_diags_add(out, DP_WARNING, DP_STAGE_NONE, file, r->replicas_pos,
				     "MPS serves at most %d clients per GPU (compute capability >= "
				     "7.5): " MPS_REFUSAL " and nothing is advertised",
				     MPS_MAX_CLIENTS, r->replicas, MPS_MAX_CLIENTS);
		else if (mps && r->replicas > MPS_MAX_CLIENTS_OLD)
			dp_diags_add(out, DP_NOTE, DP_STAGE_NONE, file, r->replicas_pos,
				     "on GPUs below compute capability 7.5 (V100 included) MPS "
				     "serves at most %d clients: there " MPS_REFUSAL,
				     MPS_MAX_CLIENTS_OLD, r->replicas, MPS_MAX_CLIENTS_OLD);
	}
}

void dplint_config(const struct dpconfig *c, const char *file, const struct dplint_options *o,
		   struct dp_diags *out)
{
	struct dpconfig eff = *c;
	const char *file_mig = c->mig_strategy;
	const char *mig_strategy;
	const struct dp_sharing *active;
	enum dp_sharing_strategy strategy;

	if (!file)
		file = c->name;

	/* Keys this release does not know are dropped before anything else. */
	for (size_t i = 0; i < c->n_keys; i++) {
		if (known_in(c->keys[i].path, o->plugin_minor))
			continue;
		/* report the block, not each key under it */
		bool parent_reported = false;
		for (size_t j = 0; j < i; j++) {
			size_t n = strlen(c->keys[j].path);
			if (!strncmp(c->keys[i].path, c->keys[j].path, n) &&
			    c->keys[i].path[n] == '.' &&
			    !known_in(c->keys[j].path, o->plugin_minor))
				parent_reported = true;
		}
		if (!parent_reported)
			dp_diags_add(
				out, DP_WARNING, DP_STAGE_NONE, file, c->keys[i].pos,
				"'%s' is unknown to plugin v0.%d and silently ignored (it came "
				"later)",
				c->keys[i].path, o->plugin_minor);
	}
	if (o->plugin_minor < 15)
		eff.mps.present = false;
	if (o->plugin_minor < 20)
		eff.shared_devices_allocation_policy = NULL;
	if (o->plugin_minor < 17)
		eff.n_imex_channel_ids = 0;
	if (o->plugin_minor < 16)
		eff.device_discovery_strategy = NULL;
	if (o->plugin_minor < 15)
		eff.mps_root = NULL;

	/* gpu-operator controllers/object_controls.go and the Helm chart
	 * deployments/helm/nvidia-device-plugin: the GPU Operator's MIG_STRATEGY beats the file */
	if (o->installer == DPLINT_OPERATOR) {
		eff.mig_strategy = (char *)cp_mig_strategy(o);
		if (file_mig)
			dp_diags_add(
				out, strcmp(file_mig, eff.mig_strategy) ? DP_WARNING : DP_NOTE,
				DP_STAGE_NONE, file, key_at(c, "flags.migStrategy"),
				"flags.migStrategy '%s' is overridden under the GPU Operator: it "
				"sets MIG_STRATEGY=%s from ClusterPolicy spec.mig.strategy, and "
				"the environment beats the file",
				file_mig, eff.mig_strategy);
	}
	mig_strategy = eff.mig_strategy ? eff.mig_strategy : DP_DEFAULT_MIG_STRATEGY;
	strategy = dpconfig_sharing_strategy(&eff);
	active = dpconfig_replicated(&eff);

	/* k8s-device-plugin v0.20.0 cmd/nvidia-device-plugin/main.go validateFlags in the
	 * deployment's terms */
	if (strategy == DP_SHARING_MPS && (!eff.mps_root || !*eff.mps_root) && sets_mps_root(o)) {
		dp_diags_add(
			out, DP_WARNING, DP_STAGE_NONE, file, c->mps.pos,
			"MPS needs mpsRoot: the %s sets MPS_ROOT=%s so this works there, but a "
			"plugin started without it fails with 'using MPS requires --mps-root "
			"to be specified' (pass --no-mps-root to lint for such a deployment)",
			o->installer == DPLINT_OPERATOR ? "GPU Operator" : "Helm chart",
			DP_INSTALLER_MPS_ROOT);
		eff.mps_root = (char *)DP_INSTALLER_MPS_ROOT;
	}
	dpconfig_validate_all(&eff, file, out);

	/* k8s-device-plugin v0.20.0 api/config/v1/replicas.go: both blocks */
	if (c->time_slicing.present && eff.mps.present)
		dp_diags_add(out, DP_WARNING, DP_STAGE_NONE, file, c->time_slicing.pos,
			     "both sharing.timeSlicing and sharing.mps are set: MPS silently wins "
			     "and this timeSlicing block is ignored (the docs call them mutually "
			     "exclusive; nothing enforces it)");
	if (c->mps.present && !eff.mps.present)
		dp_diags_add(out, DP_NOTE, DP_STAGE_NONE, file, c->mps.pos,
			     "with sharing.mps ignored, plugin v0.%d uses %s", o->plugin_minor,
			     dp_sharing_strategy_name(strategy));

	if (strategy == DP_SHARING_NONE)
		return;

	/* k8s-device-plugin v0.20.0 internal/rm/rm.go ValidateRequest: failRequestsGreaterThanOne
	 * by version */
	if (strategy == DP_SHARING_MPS && active->fail_requests_greater_than_one == 0) {
		if (o->plugin_minor >= 20)
			dp_diags_add(
				out, DP_NOTE, DP_STAGE_NONE, file, active->fail_requests_pos,
				"failRequestsGreaterThanOne: false under mps is honoured from "
				"v0.20 only: containers may get several MPS replicas here, while "
				"v0.15-v0.19 ignore it and reject requests for more than 1");
		else
			dp_diags_add(
				out, DP_WARNING, DP_STAGE_NONE, file, active->fail_requests_pos,
				"failRequestsGreaterThanOne: false under mps is ignored by "
				"plugin v0.%d: it forces true and rejects requests for more than "
				"1 (honoured from v0.20)",
				o->plugin_minor);
	}
	if (strategy == DP_SHARING_TIME_SLICING && active->fail_requests_greater_than_one != 1)
		dp_diags_add(
			out, DP_NOTE, DP_STAGE_NONE, file,
			active->fail_requests_pos.line ? active->fail_requests_pos : active->pos,
			"failRequestsGreaterThanOne is not true: a container asking for 2 or "
			"more replicas is admitted and may get replicas of the same GPU, which "
			"it then sees only once");

	/* renameByDefault: the plain name disappears from the node */
	if (active->rename_by_default && active->n_resources)
		dp_diags_add(out, DP_WARNING, DP_STAGE_NONE, file, active->rename_by_default_pos,
			     "renameByDefault: true advertises '%s' instead of '%s': pods that "
			     "request '%s' cannot be scheduled on nodes using this config",
			     active->resources[0].rename, active->resources[0].name,
			     active->resources[0].name);

	lint_names(active, strategy == DP_SHARING_MPS, mig_strategy, file, out);
}

void dplint_set(const struct dpconfig_set *set, const char *file, struct ydoc_pos at,
		const struct dplint_options *o, struct dp_diags *out)
{
	const char *fallbacks = o->fallbacks;
	struct dpconfig_choice chosen;
	struct gs_error err;
	size_t n = dpconfig_set_count(set);

	if (!fallbacks)
		fallbacks = o->installer == DPLINT_OPERATOR ? "empty" : "named,single";
	if (n == 0) {
		dp_diags_add(out, DP_ERROR, DP_STAGE_SELECT, file, at,
			     "no configuration files available");
		out->items[out->n - 1].upstream = true;
		return;
	}
	if (dpconfig_set_select(set, "", o->default_config, fallbacks, &chosen, &err)) {
		if (chosen.key >= 0) {
			dp_diags_add(out, DP_WARNING, DP_STAGE_NONE, file, at,
				     "nodes without the %s label get config '%s', which does not "
				     "load: the plugin crash-loops there",
				     LABEL, chosen.name);
			return;
		}
		dp_diags_add(
			out, DP_WARNING, DP_STAGE_NONE, file, at,
			"nodes without the %s label get no config: config-manager fails with "
			"'%s' (FALLBACK_STRATEGIES=%s), the pod stays in Init:CrashLoopBackOff "
			"and nothing is advertised%s",
			LABEL, err.msg, fallbacks,
			o->installer == DPLINT_HELM && n > 1 && !o->default_config
				? "; add a key named 'default' or set the chart's "
				  "config.default (with an embedded config.map the chart "
				  "refuses to render: 'A default config must be provided when "
				  "more than one configuration is set in 'config.map'.')"
				: "");
		return;
	}
	if (!*chosen.name)
		dp_diags_add(out, DP_NOTE, DP_STAGE_NONE, file, at,
			     "nodes without the %s label get the empty config: no sharing, flags "
			     "from the command line and environment only",
			     LABEL);
	else
		dp_diags_add(out, DP_NOTE, DP_STAGE_NONE, file, at,
			     "nodes without the %s label get config '%s'", LABEL, chosen.name);
}
