#include "engine/replay_cluster.h"

#include <stdlib.h>
#include <string.h>

#include "engine/advertise.h"
#include "engine/ledger.h"
#include "model/dpconfig_set.h"
#include "model/kobj.h"
#include "model/names.h"
#include "model/nodehw.h"
#include "base/wrapper.h"
#include "base/banned.h"

/* The ledger of one Node object under the ConfigMap's configs, as status builds it. */
static int node_ledger(const struct catalog *cat, const json_t *node,
		       const struct dpconfig_set *set, struct ledger **out, struct gs_error *err)
{
	struct advertisement *adv = NULL;
	struct nodehw *hw = NULL;
	const struct dpconfig *cfg = NULL;
	struct gs_warnings w;
	int rc = -1;

	gs_warnings_init(&w);
	if (advertise_node(cat, node, set, NULL, &adv, err) < 0 ||
	    nodehw_from_node(cat, node, NULL, &hw, &w, err) < 0)
		goto out;
	if (adv->failure) {
		gs_error_set(err, "%s", adv->failure);
		goto out;
	}
	if (set && adv->config_name && *adv->config_name) {
		long k = dpconfig_set_find(set, adv->config_name);
		cfg = k >= 0 ? dpconfig_set_get(set, (size_t)k, NULL) : NULL;
	}
	rc = ledger_new(cat, hw, adv, cfg, out, err);
out:
	advertisement_free(adv);
	nodehw_free(hw);
	gs_warnings_release(&w);
	return rc;
}

/* The PodScheduled=False condition's "reason: message", or "". */
static char *unscheduled_reason(const json_t *pod)
{
	size_t i;
	json_t *c;

	json_array_foreach (json_object_get(json_object_get(pod, "status"), "conditions"), i, c)
		if (!strcmp(kobj_text(c, "type"), "PodScheduled") &&
		    !strcmp(kobj_text(c, "status"), "False"))
			return gs_xasprintf("%s: %s", kobj_text(c, "reason"),
					    kobj_text(c, "message"));
	return gs_xstrdup("");
}

/* One bound, admitted pod: its cards from its record. */
static int take_devices(const struct replay_trace *tr, struct replay_result *r,
			struct replay_place *pl, const json_t *pod, const struct ledger *l,
			struct gs_error *err)
{
	const char *text = kobj_annotation(pod, LEDGER_ANN_DEVICES);
	int want = replay_task_replicas(&tr->tasks[pl->task], r->replicas), have = 0;
	json_t *devices;

	if (!text || !*text) {
		if (!want)
			return 0;
		gs_error_set(err, "admitted without the %s record", LEDGER_ANN_DEVICES);
		return -1;
	}
	devices = ledger_annotation_parse(text, err);
	if (!devices)
		return -1;
	if (l)
		replay_place_devices(pl, l, devices);
	json_decref(devices);
	for (int c = 0; c < pl->n_cards; c++)
		have += pl->replicas[c];
	if (have != want) {
		gs_error_set(err, "holds %d replicas of the node's cards, asks for %d", have, want);
		return -1;
	}
	return 0;
}

int replay_cluster_places(const struct catalog *cat, const struct replay_trace *tr,
			  struct replay_result *r, const json_t *configmap, const json_t *nodes,
			  const json_t *pods, struct gs_error *err)
{
	json_t *by_name = json_object(), *node_index = json_object(), *o;
	struct ledger **ledgers = gs_xcalloc(tr->n_nodes + 1, sizeof(*ledgers));
	struct dpconfig_set *set = NULL;
	size_t i;
	int rc = -1;

	if (configmap && dpconfig_set_from_configmap(NULL, configmap, &set, err) < 0) {
		gs_error_prefix(err, "the device-plugin ConfigMap: ");
		goto out;
	}
	for (i = 0; i < tr->n_nodes; i++)
		json_object_set_new(node_index, tr->nodes[i].name, json_integer((json_int_t)i));
	json_array_foreach ((json_t *)nodes, i, o) {
		json_t *k = json_object_get(node_index, kobj_text(o, "metadata.name"));
		size_t n = k ? (size_t)json_integer_value(k) : 0;
		if (!k || tr->nodes[n].gpus <= 0 || ledgers[n])
			continue;
		if (node_ledger(cat, o, set, &ledgers[n], err) < 0) {
			gs_error_prefix(err, "node %s: ", tr->nodes[n].name);
			goto out;
		}
	}
	json_array_foreach ((json_t *)pods, i, o)
		json_object_set(by_name, kobj_text(o, "metadata.name"), o);
	for (i = 0; i < r->n_places; i++) {
		struct replay_place *pl = &r->places[i];
		const json_t *pod = json_object_get(by_name, pl->name);
		const char *node = kobj_text(pod, "spec.nodeName");
		const char *adm = kobj_annotation(pod, LEDGER_ANN_ADMITTED);
		json_t *k;

		free(pl->reason);
		pl->reason = NULL;
		pl->bound = false;
		pl->node = -1;
		if (!pod) {
			gs_error_set(err, "pod %s: not found", pl->name);
			goto out;
		}
		if (!*node) {
			pl->reason = unscheduled_reason(pod);
			continue;
		}
		k = json_object_get(node_index, node);
		if (!k) {
			gs_error_set(err, "pod %s: bound to node %s, none of the trace's", pl->name,
				     node);
			goto out;
		}
		if (!strcmp(kobj_text(pod, "status.phase"), "Failed")) {
			pl->reason = gs_xasprintf("%s: %s", kobj_text(pod, "status.reason"),
						  kobj_text(pod, "status.message"));
			continue;
		}
		if (!adm || strcmp(adm, "true")) {
			gs_error_set(err, "pod %s: bound to node %s, not admitted yet", pl->name,
				     node);
			goto out;
		}
		pl->node = (long)json_integer_value(k);
		pl->bound = true;
		if (take_devices(tr, r, pl, pod, ledgers[pl->node], err) < 0) {
			gs_error_prefix(err, "pod %s on node %s: ", pl->name, node);
			goto out;
		}
	}
	rc = 0;
out:
	for (i = 0; i < tr->n_nodes; i++)
		ledger_free(ledgers[i]);
	free(ledgers);
	dpconfig_set_free(set);
	json_decref(by_name);
	json_decref(node_index);
	return rc;
}
