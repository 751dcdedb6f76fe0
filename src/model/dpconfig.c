#include "model/dpconfig.h"

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/strbuf.h"
#include "base/banned.h"

/*
 * The config model: what a decoded device-plugin config holds, its
 * findings (diags), and the plugin's start-time validation. Decoding lives
 * in dpdecode.c, the ConfigMap of named configs in dpconfig_set.c.
 */

#define N(a) (sizeof(a) / sizeof((a)[0]))

/* ------------------------------------------------------------------ diags */

void dp_diags_init(struct dp_diags *d)
{
	d->items = NULL;
	d->n = 0;
	d->cap = 0;
}

void dp_diags_release(struct dp_diags *d)
{
	if (!d)
		return;
	for (size_t i = 0; i < d->n; i++) {
		free(d->items[i].file);
		free(d->items[i].msg);
	}
	free(d->items);
	dp_diags_init(d);
}

struct dp_diag *dp_diags_vadd(struct dp_diags *d, enum dp_level level, enum dp_stage stage,
			      const char *file, struct ydoc_pos pos, const char *fmt, va_list ap)
{
	struct dp_diag *x;
	struct strbuf msg = STRBUF_INIT;

	if (d->n == d->cap) {
		d->cap = d->cap ? d->cap * 2 : 8;
		d->items = gs_xrealloc(d->items, d->cap * sizeof(*d->items));
	}
	x = &d->items[d->n++];
	x->level = level;
	x->stage = stage;
	x->upstream = false;
	x->file = gs_xstrdup(file ? file : "");
	x->pos = pos;
	strbuf_vaddf(&msg, fmt, ap);
	x->msg = strbuf_detach(&msg, NULL);
	return x;
}

void dp_diags_add(struct dp_diags *d, enum dp_level level, enum dp_stage stage, const char *file,
		  struct ydoc_pos pos, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	dp_diags_vadd(d, level, stage, file, pos, fmt, ap);
	va_end(ap);
}

#define LOAD_CHAIN                                                                                 \
	"error starting plugins: unable to load config: unable to finalize config: unable to "     \
	"parse config file: error parsing config file: "

const char *dp_diag_chain(const struct dp_diag *d, char *buf, size_t size)
{
	const char *prefix = "";

	switch (d->stage) {
	case DP_STAGE_YAML:
		prefix = LOAD_CHAIN "unmarshal error: error converting YAML to JSON: ";
		break;
	case DP_STAGE_DECODE:
		prefix = LOAD_CHAIN
			"unmarshal error: error unmarshaling JSON: while decoding JSON: ";
		break;
	case DP_STAGE_VERSION:
		prefix = LOAD_CHAIN;
		break;
	case DP_STAGE_VALIDATE:
		prefix = "error starting plugins: unable to validate flags: ";
		break;
	case DP_STAGE_SELECT:
	case DP_STAGE_NONE:
		break;
	}
	snprintf(buf, size, "%s%s", prefix, d->msg);
	return buf;
}

void dp_diag_to_error(const struct dp_diag *x, struct gs_error *err)
{
	if (x->pos.line > 0)
		gs_error_at(err, x->file, x->pos.line, x->pos.col, "%s", x->msg);
	else if (x->file[0])
		gs_error_at(err, x->file, 0, 0, "%s", x->msg);
	else
		gs_error_set(err, "%s", x->msg);
}

void dp_diag_addstr(struct strbuf *sb, const struct dp_diag *d)
{
	if (d->file[0] && d->pos.line > 0 && d->pos.col > 0)
		strbuf_addf(sb, "%s:%d:%d: ", d->file, d->pos.line, d->pos.col);
	else if (d->file[0] && d->pos.line > 0)
		strbuf_addf(sb, "%s:%d: ", d->file, d->pos.line);
	else if (d->file[0])
		strbuf_addf(sb, "%s: ", d->file);
	strbuf_addstr(sb, d->msg);
}

const struct dp_key *dpconfig_key(const struct dpconfig *c, const char *path)
{
	const struct dp_key *found = NULL;

	for (size_t i = 0; c && i < c->n_keys; i++)
		if (!strcmp(c->keys[i].path, path))
			found = &c->keys[i]; /* the last one decoded is in force */
	return found;
}

/* --------------------------------------------------------- dpconfig */

struct dpconfig *dpconfig_new(const char *name)
{
	struct dpconfig *c = gs_xcalloc(1, sizeof(*c));

	c->name = gs_xstrdup(name ? name : "");
	c->fail_on_init_error = -1;
	c->time_slicing.fail_requests_greater_than_one = -1;
	c->mps.fail_requests_greater_than_one = -1;
	return c;
}

void dp_sharing_reset(struct dp_sharing *sh)
{
	for (size_t i = 0; i < sh->n_resources; i++) {
		free(sh->resources[i].name);
		free(sh->resources[i].rename);
	}
	free(sh->resources);
	memset(sh, 0, sizeof(*sh));
	sh->fail_requests_greater_than_one = -1;
}

/* json.Unmarshal(raw, &bool) from a hand-written decoder. */
void dpconfig_clear_device_list(struct dpconfig *c)
{
	for (size_t i = 0; i < c->n_device_list_strategies; i++)
		free(c->device_list_strategies[i]);
	free(c->device_list_strategies);
	c->device_list_strategies = NULL;
	c->n_device_list_strategies = 0;
	c->device_list_strategy = NULL;
}

void dpconfig_free(struct dpconfig *c)
{
	if (!c)
		return;
	free(c->name);
	free(c->mig_strategy);
	free(c->mps_root);
	free(c->device_id_strategy);
	free(c->device_discovery_strategy);
	free(c->shared_devices_allocation_policy);
	free(c->version);
	free(c->nvidia_driver_root);
	dpconfig_clear_device_list(c);
	free(c->imex_channel_ids);
	dp_sharing_reset(&c->time_slicing);
	dp_sharing_reset(&c->mps);
	for (size_t i = 0; i < c->n_keys; i++) {
		free(c->keys[i].path);
		free(c->keys[i].written);
	}
	free(c->keys);
	free(c);
}

static bool is_replicated(const struct dp_sharing *sh)
{
	for (size_t i = 0; i < sh->n_resources; i++)
		if (sh->resources[i].replicas > 1)
			return true;
	return false;
}

enum dp_sharing_strategy dpconfig_sharing_strategy(const struct dpconfig *c)
{
	if (c->mps.present && is_replicated(&c->mps))
		return DP_SHARING_MPS;
	if (is_replicated(&c->time_slicing))
		return DP_SHARING_TIME_SLICING;
	return DP_SHARING_NONE;
}

const struct dp_sharing *dpconfig_replicated(const struct dpconfig *c)
{
	return c->mps.present ? &c->mps : &c->time_slicing;
}

const char *dp_sharing_strategy_name(enum dp_sharing_strategy s)
{
	switch (s) {
	case DP_SHARING_MPS:
		return "mps";
	case DP_SHARING_TIME_SLICING:
		return "time-slicing";
	case DP_SHARING_NONE:
		break;
	}
	return "none";
}

/* ----------------------------------------------------------- validate */

static bool one_of(const char *s, const char *const *set, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (!strcmp(s, set[i]))
			return true;
	return false;
}

static struct ydoc_pos where(const struct dpconfig *c, const char *path)
{
	const struct dp_key *k = dpconfig_key(c, path);
	return k ? k->pos : (struct ydoc_pos){0, 0};
}

/* The flag at `path` against its allowed values: upstream's "<what><value>" when none fits. */
static bool check_choice(const struct dpconfig *c, const char *file, struct dp_diags *diags,
			 const char *path, const char *value, const char *const *allowed, size_t n,
			 const char *what)
{
	if (one_of(value, allowed, n))
		return true;
	dp_diags_add(diags, DP_ERROR, DP_STAGE_VALIDATE, file, where(c, path), "%s%s", what, value);
	return false;
}

size_t dpconfig_validate_all(const struct dpconfig *c, const char *file, struct dp_diags *diags)
{
	static const char *const dls[] = {"envvar", "volume-mounts", "cdi-annotations", "cdi-cri"};
	static const char *const ids[] = {"uuid", "index"};
	static const char *const policies[] = {"distributed", "packed"};
	static const char *const discovery[] = {"auto", "nvml", "tegra"};
	static const char *const mig[] = {"none", "single", "mixed"};
	const char *mig_strategy = c->mig_strategy ? c->mig_strategy : DP_DEFAULT_MIG_STRATEGY;
	const char *id =
		c->device_id_strategy ? c->device_id_strategy : DP_DEFAULT_DEVICE_ID_STRATEGY;
	const char *policy = c->shared_devices_allocation_policy
				     ? c->shared_devices_allocation_policy
				     : DP_DEFAULT_ALLOCATION_POLICY;
	const char *disc = c->device_discovery_strategy ? c->device_discovery_strategy
							: DP_DEFAULT_DEVICE_DISCOVERY_STRATEGY;
	size_t before = diags->n;

	if (!file)
		file = c->name;
	/* row 3: a list as given, or the first entry when only that was set */
	const char *const *lists = (const char *const *)c->device_list_strategies;
	size_t n_lists = c->n_device_list_strategies;
	if (!lists && c->device_list_strategy) {
		lists = (const char *const *)&c->device_list_strategy;
		n_lists = 1;
	}
	for (size_t i = 0; i < n_lists; i++)
		if (!check_choice(c, file, diags, "flags.plugin.deviceListStrategy", lists[i], dls,
				  N(dls),
				  "invalid --device-list-strategy option: invalid strategy: "))
			break;
	check_choice(c, file, diags, "flags.plugin.deviceIDStrategy", id, ids, N(ids),
		     "invalid --device-id-strategy option: ");
	check_choice(c, file, diags, "flags.plugin.sharedDevicesAllocationPolicy", policy, policies,
		     N(policies), "invalid --shared-devices-allocation-policy option: ");
	if (dpconfig_sharing_strategy(c) == DP_SHARING_MPS) {
		if (!strcmp(mig_strategy, "mixed"))
			dp_diags_add(diags, DP_ERROR, DP_STAGE_VALIDATE, file,
				     where(c, "flags.migStrategy"),
				     "using --mig-strategy=mixed is not supported with MPS");
		if (!c->mps_root || !*c->mps_root)
			dp_diags_add(diags, DP_ERROR, DP_STAGE_VALIDATE, file,
				     c->mps_root ? where(c, "flags.mpsRoot") : c->mps.pos,
				     "using MPS requires --mps-root to be specified");
	}
	check_choice(c, file, diags, "flags.deviceDiscoveryStrategy", disc, discovery, N(discovery),
		     "invalid --device-discovery-strategy option ");
	check_choice(c, file, diags, "flags.migStrategy", mig_strategy, mig, N(mig),
		     "unknown MIG strategy: ");
	if (!(c->n_imex_channel_ids == 0 ||
	      (c->n_imex_channel_ids == 1 && c->imex_channel_ids[0] == 0))) {
		struct strbuf chan_ids = STRBUF_INIT;
		for (size_t i = 0; i < c->n_imex_channel_ids; i++)
			strbuf_addf(&chan_ids, "%s%d", i ? " " : "", c->imex_channel_ids[i]);
		dp_diags_add(
			diags, DP_ERROR, DP_STAGE_VALIDATE, file, where(c, "imex.channelIDs"),
			"invalid IMEX channel IDs: invalid IMEX config: channelIDs must be [] or "
			"[0]; found [%s]",
			chan_ids.buf);
		strbuf_release(&chan_ids);
	}
	if (diags->n > before)
		diags->items[before].upstream = true;
	return diags->n - before;
}

int dpconfig_validate(const struct dpconfig *c, struct gs_error *err)
{
	struct dp_diags diags;
	int rc = 0;

	dp_diags_init(&diags);
	if (dpconfig_validate_all(c, c->name, &diags)) {
		/* the plugin stops at the first; keep the bare message, as its log has it */
		gs_error_set(err, "%s", diags.items[0].msg);
		rc = -1;
	}
	dp_diags_release(&diags);
	return rc;
}
