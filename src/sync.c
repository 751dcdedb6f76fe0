#include "sync.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "advertise.h"
#include "catalog.h"
#include "defaults.h"
#include "dpconfig.h"
#include "kubeclient.h"
#include "nodehw.h"
#include "strbuf.h"
#include "kobj.h"
#include "banned.h"

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

static void node_failed(struct sync_node *n, const char *fmt, const char *msg)
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
 * Labels and annotations live on the node, capacity and allocatable on its
 * status subresource (the main resource ignores status changes): two
 * PATCHes, metadata first so a failure leaves the resources as they were.
 */
static int write_patch(struct kube_client *c, const char *name, const json_t *patch,
		       struct gs_error *err)
{
	const json_t *meta = json_object_get(patch, "metadata");
	const json_t *status = json_object_get(patch, "status");
	char *path = gs_xasprintf("/api/v1/nodes/%s", name);
	char *status_path = gs_xasprintf("/api/v1/nodes/%s/status", name);
	int rc = 0;

	if (meta && json_object_size(meta)) {
		json_t *p = json_pack("{s:O}", "metadata", meta);
		rc = kube_patch(c, path, KUBE_PATCH_MERGE, p, NULL, err);
		json_decref(p);
	}
	if (rc == 0 && status && json_object_size(status)) {
		json_t *p = json_pack("{s:O}", "status", status);
		rc = kube_patch(c, status_path, KUBE_PATCH_MERGE, p, NULL, err);
		json_decref(p);
	}
	free(path);
	free(status_path);
	return rc;
}

/* What one node should advertise, into a new entry of rep. No I/O. */
static void plan_one(const struct catalog *cat, const json_t *node, const struct dpconfig_set *set,
		     const struct sync_opts *o, struct sync_report *rep)
{
	struct advertise_options ao = {o->default_config, o->fallbacks};
	const char *name;
	struct advertisement *adv = NULL;
	struct sync_node *n;
	struct gs_error err;
	json_t *patch = NULL;

	name = kobj_name(node);
	n = add_node(rep, name);
	gs_error_clear(&err);
	/* Real GPU nodes have a real device plugin: only declared ones are ours. */
	if (!kobj_annotation(node, NODEHW_ANN_PRODUCT)) {
		n->outcome = SYNC_SKIPPED;
		n->message = gs_xstrdup("no " NODEHW_ANN_PRODUCT " annotation");
		return;
	}
	if (advertise_node(cat, node, set, &ao, &adv, &err) < 0) {
		node_failed(n, "%s", err.msg);
		return;
	}
	for (size_t i = 0; i < adv->warnings.n; i++)
		gs_warnings_add(&n->warnings, "%s", adv->warnings.items[i]);
	n->config = adv->config_name ? gs_xstrdup(adv->config_name) : NULL;
	if (adv->outcome == ADVERTISE_REFUSED) {
		node_failed(n, "%s", adv->failure);
		goto out;
	}
	n->resources = resources_as_strings(adv->resources);
	if (advertise_patch(adv, node, &patch, &n->warnings, &err) < 0) {
		node_failed(n, "%s", err.msg);
		goto out;
	}
	if (!json_object_size(patch)) {
		n->outcome = SYNC_UNCHANGED;
	} else {
		n->patch = json_incref(patch);
		n->outcome = SYNC_UPDATED;
	}
	/* The plugin or mig-manager fails: what the rest publishes is written, and it fails. */
	if (adv->outcome == ADVERTISE_MIG_FAILED)
		node_failed(n, "%s (nvidia.com/mig.config.state=failed written)", adv->failure);
	else if (adv->failure)
		node_failed(n,
			    "%s (GFD's labels written; the plugin's resources at 0, as kubelet "
			    "shows a plugin gone 5 minutes)",
			    adv->failure);
out:
	json_decref(patch);
	advertisement_free(adv);
}

static int failed(const struct sync_report *rep)
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
	if (dpconfig_set_from_configmap(NULL, configmap, &set, err) < 0) {
		gs_error_prefix(err, "ConfigMap %s/%s: ", ns, cm_name);
		return -1;
	}
	json_array_foreach ((json_t *)items, i, node) {
		const char *name = kobj_name(node);
		if (!o->only_node || (name && !strcmp(o->only_node, name)))
			plan_one(cat, node, set, o, rep);
	}
	dpconfig_set_free(set);
	return failed(rep);
}

int sync_write(struct kube_client *c, struct sync_report *rep)
{
	for (size_t i = 0; i < rep->n; i++) {
		struct sync_node *n = &rep->nodes[i];
		struct gs_error err;

		gs_error_clear(&err);
		/* A failed node may still carry what the rest of the stack publishes. */
		if ((n->outcome == SYNC_UPDATED || n->outcome == SYNC_FAILED) && n->patch &&
		    write_patch(c, n->name, n->patch, &err) < 0)
			node_failed(n, "writing the advertisement: %s", err.msg);
	}
	return failed(rep);
}

int sync_read(struct kube_client *c, const struct sync_opts *o, json_t **configmap, json_t **nodes,
	      struct gs_error *err)
{
	const char *ns = o->configmap_namespace ? o->configmap_namespace : GS_DEFAULT_NAMESPACE;
	const char *cm_name = o->configmap_name ? o->configmap_name : GS_DEFAULT_CONFIGMAP;
	char *path = gs_xasprintf("/api/v1/namespaces/%s/configmaps/%s", ns, cm_name);
	int rc = -1;

	*configmap = *nodes = NULL;
	if (kube_get(c, path, configmap, err) < 0) {
		gs_error_prefix(err, "reading the device-plugin ConfigMap %s/%s: ", ns, cm_name);
		goto out;
	}
	free(path);
	if (o->only_node) {
		json_t *one = NULL;
		path = gs_xasprintf("/api/v1/nodes/%s", o->only_node);
		if (kube_get(c, path, &one, err) < 0)
			goto out;
		*nodes = json_pack("{s:[o]}", "items", one);
	} else {
		path = gs_xstrdup("/api/v1/nodes");
		if (kube_list(c, path, NULL, nodes, err) < 0)
			goto out;
	}
	rc = 0;
out:
	free(path);
	if (rc < 0) {
		json_decref(*configmap);
		json_decref(*nodes);
		*configmap = *nodes = NULL;
	}
	return rc;
}

int sync_run(struct kube_client *c, const struct sync_opts *o, struct sync_report *rep,
	     struct gs_error *err)
{
	json_t *cm, *nodes;
	int rc;

	memset(rep, 0, sizeof(*rep));
	if (sync_read(c, o, &cm, &nodes, err) < 0)
		return -1;
	rc = sync_plan(cm, nodes, o, rep, err);
	if (rc >= 0 && !o->dry_run)
		rc = sync_write(c, rep);
	json_decref(cm);
	json_decref(nodes);
	return rc;
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
		json_decref(n->patch);
		json_decref(n->resources);
		gs_warnings_release(&n->warnings);
	}
	free(rep->nodes);
	rep->nodes = NULL;
	rep->n = 0;
}
