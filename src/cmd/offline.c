#include "cmd/offline.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cmd/cmd.h"
#include "dra/draalloc.h"
#include "fleet/workloads.h"
#include "model/defaults.h"
#include "model/kobj.h"
#include "base/banned.h"

void configmap_ref_init(struct configmap_ref *ref)
{
	ref->ns = gs_xstrdup(GS_DEFAULT_NAMESPACE);
	ref->name = gs_xstrdup(GS_DEFAULT_CONFIGMAP);
	ref->given = false;
}

void configmap_ref_release(struct configmap_ref *ref)
{
	free(ref->ns);
	free(ref->name);
	ref->ns = ref->name = NULL;
}

static bool ends_with(const char *s, const char *tail)
{
	size_t n = strlen(s), t = strlen(tail);

	return n >= t && !strcmp(s + n - t, tail);
}

int configmap_ref_parse(struct configmap_ref *ref, const char *arg, struct gs_error *err)
{
	const char *slash = strchr(arg, '/');
	bool bad = !slash || slash == arg || !slash[1] || strchr(slash + 1, '/');
	struct stat st;

	if ((stat(arg, &st) == 0 && !S_ISDIR(st.st_mode)) ||
	    (bad &&
	     (ends_with(arg, ".yaml") || ends_with(arg, ".yml") || ends_with(arg, ".json")))) {
		gs_error_set(err,
			     "option '--configmap' takes NAMESPACE/NAME (the ConfigMap), not a "
			     "file: give '%s' with -f",
			     arg);
		return -1;
	}
	if (bad) {
		gs_error_set(err, "option '--configmap' takes NAMESPACE/NAME, got '%s'", arg);
		return -1;
	}
	free(ref->ns);
	free(ref->name);
	ref->ns = gs_xstrndup(arg, (size_t)(slash - arg));
	ref->name = gs_xstrdup(slash + 1);
	ref->given = true;
	return 0;
}

int parse_configmap_ref(const struct option *opt, const char *arg, struct gs_error *err)
{
	return configmap_ref_parse(opt->value, arg, err);
}

int parse_fleet_source(const struct option *opt, const char *arg, struct gs_error *err)
{
	struct fleet_sources *src = opt->value;

	if (!*arg) {
		gs_error_set(err, "option '-f' needs a file, a directory or '-'");
		return -1;
	}
	fleet_sources_add(src, arg);
	return 0;
}

void offline_configmap_missing(const struct fleet *f, const struct configmap_ref *cm,
			       struct gs_error *err)
{
	char *others = fleet_configmap_others(f, cm->name);

	gs_error_set(err, "no ConfigMap %s/%s among the files%s%s%s", cm->ns, cm->name,
		     *others ? " (read: " : "", others,
		     *others ? "; --configmap NS/NAME names another)" : "");
	free(others);
}

int offline_configmap(const struct fleet *f, const struct configmap_ref *cm, const char *cmd,
		      bool note, const json_t **out, struct dpconfig_set **set,
		      struct gs_error *err)
{
	*set = NULL;
	if (fleet_configmap(f, cm->ns, cm->name, out, err) < 0)
		return -1;
	if (*out)
		return dpconfig_set_from_configmap(fleet_stream_of(f, *out), *out, set, err);
	if (note) {
		char *others = fleet_configmap_others(f, cm->name);
		cmd_eprintf("gpushare %s: no ConfigMap %s/%s among the files: every node gets the "
			    "device plugin's defaults%s%s%s\n",
			    cmd, cm->ns, cm->name, *others ? " (read: " : "", others,
			    *others ? "; --configmap NS/NAME names another)" : "");
		free(others);
	}
	return 0;
}

/* A gate the release leaves off that the files' objects need: the apiserver would drop
 * their fields without a word, so plan says it. */
static void note_gates(const struct offline_fleet *of, const char *cmd)
{
	struct kubegates g;
	const struct kubeversion *kv = kube_target_gates(&of->kube, &g);

	if (!g.dra_consumable_capacity &&
	    draalloc_uses_consumable_capacity(of->f.slices, of->f.claims, of->f.claim_templates))
		cmd_eprintf("gpushare %s: DRAConsumableCapacity is off in %s (%s): the apiserver "
			    "drops the claims' capacity requests and the devices' "
			    "allowMultipleAllocations, so each claim takes a device whole "
			    "(--feature-gates DRAConsumableCapacity=true for a cluster that turns "
			    "it on)\n",
			    cmd, kv->version, kv->dra_consumable_capacity ? "set off" : "alpha");
}

static int load(struct offline_fleet *of, const struct fleet_sources *src,
		const struct configmap_ref *cm, const char *cmd, bool stream, struct gs_error *err)
{
	json_t *existing = NULL;
	struct kube_target kube = of->kube;
	struct plan_sched sched = of->sched;
	int rc = -1;

	memset(of, 0, sizeof(*of));
	of->kube = kube;
	of->sched = sched;
	fleet_init(&of->f);
	of->f.stream_pods = of->streamed = stream;
	if (fleet_read(&of->f, src, err) < 0 ||
	    offline_configmap(&of->f, cm, cmd, json_array_size(of->f.nodes) > 0, &of->configmap,
			      &of->set, err) < 0)
		goto out;
	/* The nodes first: DaemonSets are judged against the nodes as advertised.
	 * Streamed, nothing reads the nodes as written again: advertised in place. */
	if ((stream ? explain_fleet_advertise_in_place(of->f.nodes, of->configmap, &of->adv, err)
		    : explain_fleet_advertise(of->f.nodes, NULL, of->configmap, &of->adv, err)) < 0)
		goto out;
	if (stream) {
		rc = fleet_pods_check(&of->f, of->adv.nodes, &of->n_batch, err);
		goto out;
	}
	if (fleet_pods(&of->f, of->adv.nodes, &existing, &of->batch, err) < 0)
		goto out;
	of->n_batch = json_array_size(of->batch);
	json_decref(of->adv.pods);
	of->adv.pods = json_incref(existing);
	rc = 0;
out:
	if (rc == 0)
		note_gates(of, cmd);
	json_decref(existing);
	return rc;
}

int offline_fleet_load(struct offline_fleet *of, const struct fleet_sources *src,
		       const struct configmap_ref *cm, const char *cmd, struct gs_error *err)
{
	return load(of, src, cm, cmd, false, err);
}

int offline_fleet_stream(struct offline_fleet *of, const struct fleet_sources *src,
			 const struct configmap_ref *cm, const char *cmd, struct gs_error *err)
{
	return load(of, src, cm, cmd, true, err);
}

struct each_pod {
	int (*fn)(void *ctx, const json_t *pod, struct gs_error *err);
	void *ctx;
};

int offline_each_pod(const struct offline_fleet *of, bool there,
		     int (*fn)(void *ctx, const json_t *pod, struct gs_error *err), void *ctx,
		     struct gs_error *err)
{
	const json_t *p;
	size_t i;

	if (of->streamed)
		return fleet_pods_each(&of->f, of->adv.nodes, there, fn, ctx, err);
	json_array_foreach (there ? json_object_get(of->adv.pods, "items") : of->batch, i, p)
		if (fn(ctx, p, err) < 0)
			return -1;
	return 0;
}

static int add_existing(void *ctx, const json_t *pod, struct gs_error *err)
{
	return plan_add_existing(ctx, pod, err);
}

int parse_kube_version(const struct option *opt, const char *arg, struct gs_error *err)
{
	struct kube_target *kt = opt->value;

	kt->kv = kubeversion_parse(arg, err);
	return kt->kv ? 0 : -1;
}

int parse_feature_gates(const struct option *opt, const char *arg, struct gs_error *err)
{
	struct kube_target *kt = opt->value;
	struct kubegates g = {0};

	/* Checked now; applied over the release's defaults once both flags are read. */
	if (kubegates_parse(&g, arg, err) < 0)
		return -1;
	kt->gates = arg;
	return 0;
}

/* kt's release (the newest when none is named) and its gates: the release's defaults, then
 * --feature-gates. */
static const struct kubeversion *kube_target_resolve(const struct kube_target *kt,
						     struct kubegates *g, struct gs_error *err)
{
	const struct kubeversion *kv = kt->kv ? kt->kv : kubeversion_newest();

	kubegates_defaults(g, kv);
	if (kt->gates && kubegates_parse(g, kt->gates, err) < 0)
		return NULL;
	return kv;
}

int kube_target_check(const struct kube_target *kt, struct gs_error *err)
{
	struct kubegates g;
	const struct kubeversion *kv = kube_target_resolve(kt, &g, err);

	return kv ? kubegates_check(&g, kv, err) : -1;
}

const struct kubeversion *kube_target_gates(const struct kube_target *kt, struct kubegates *gates)
{
	struct gs_error ignored; /* kube_target_check said it after the options */
	const struct kubeversion *kv = kube_target_resolve(kt, gates, &ignored);

	if (!kv) {
		kv = kt->kv ? kt->kv : kubeversion_newest();
		kubegates_defaults(gates, kv);
	}
	return kv;
}

void offline_plan_input(const struct offline_fleet *of, struct kubegates *gates,
			struct plan_input *in)
{
	const struct kubeversion *kv = kube_target_gates(&of->kube, gates);

	memset(in, 0, sizeof(*in));
	in->nodes = of->adv.nodes;
	in->quotas = of->f.quotas;
	in->configs = of->set;
	in->kube = kv;
	in->gates = gates;
	in->device_classes = of->f.device_classes;
	in->slices = of->f.slices;
	in->claims = of->f.claims;
	in->claim_templates = of->f.claim_templates;
	in->sched = of->sched;
}

int offline_plan_begin(const struct offline_fleet *of, struct plan **out, struct gs_error *err)
{
	struct kubegates gates;
	struct plan_input in;

	offline_plan_input(of, &gates, &in);

	if (plan_begin(&in, out, err) < 0)
		return -1;
	if (offline_each_pod(of, true, add_existing, *out, err) < 0 || plan_start(*out, err) < 0) {
		plan_free(*out);
		*out = NULL;
		return -1;
	}
	return 0;
}

void offline_fleet_release(struct offline_fleet *of)
{
	explain_fleet_release(&of->adv);
	dpconfig_set_free(of->set);
	json_decref(of->batch);
	fleet_release(&of->f);
	memset(of, 0, sizeof(*of));
}

json_t *offline_pods_after(const struct offline_fleet *of, const struct plan_result *r, size_t upto)
{
	json_t *items = json_array(), *p;
	size_t i;

	json_array_foreach (json_object_get(of->adv.pods, "items"), i, p)
		json_array_append(items, p);
	for (i = 0; r && i < upto && i < r->n_pods && i < json_array_size(of->batch); i++) {
		const struct plan_pod *o = &r->pods[i];
		json_t *pod;
		if (o->verdict == PLAN_REFUSED || o->verdict == PLAN_FAILED)
			continue;
		pod = json_array_get(of->batch, i);
		if (o->verdict == PLAN_BOUND && o->node) {
			pod = json_deep_copy(pod);
			json_t *spec = json_object_get(pod, "spec");
			if (json_is_object(spec))
				json_object_set_new(spec, "nodeName", json_string(o->node));
			json_array_append_new(items, pod);
		} else {
			json_array_append(items, pod);
		}
	}
	return json_pack("{s:s,s:s,s:o}", "apiVersion", "v1", "kind", "PodList", "items", items);
}
