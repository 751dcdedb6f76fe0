#include "fleet/import.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "base/strbuf.h"
#include "base/wrapper.h"
#include "engine/advertise.h"
#include "engine/mergepatch.h"
#include "engine/sync_plan.h"
#include "model/kobj.h"
#include "model/names.h"
#include "model/nodehw.h"
#include "model/quantity.h"
#include "base/banned.h"

/* GFD's labels import reads (docs/guide/advertise.md lists their upstream source). */
#define L_PRODUCT "nvidia.com/gpu.product"
#define L_COUNT "nvidia.com/gpu.count"
#define L_MACHINE "nvidia.com/gpu.machine"
#define L_DRIVER_FULL "nvidia.com/cuda.driver-version.full"
#define L_DRIVER_MAJOR "nvidia.com/cuda.driver-version.major"
#define L_DRIVER_MINOR "nvidia.com/cuda.driver-version.minor"
#define L_DRIVER_REV "nvidia.com/cuda.driver-version.revision"
#define L_OLD_MAJOR "nvidia.com/cuda.driver.major"
#define L_OLD_MINOR "nvidia.com/cuda.driver.minor"
#define L_OLD_REV "nvidia.com/cuda.driver.rev"
#define L_HOSTNAME "kubernetes.io/hostname"

#define SUFFIX_SHARED "-SHARED" /* GFD's product under sharing without rename */
#define SUFFIX_MIG "-MIG-"	/* GFD's product of a MIG device: <parent>-MIG-<profile> */
#define MAX_PRODUCT 256

const struct import_ignored import_ignored_labels[] = {
	{"nvidia.com/gfd.timestamp",
	 "when GFD last started on the real node; the twin's is when gpushare first "
	 "advertised it"},
};
const size_t import_n_ignored_labels =
	sizeof(import_ignored_labels) / sizeof(import_ignored_labels[0]);

const struct import_anon_rule import_anon_rules[] = {
	{"alpha.eksctl.io/", "eksctl: the cluster's and the node group's names, instance ids"},
	{"eks.amazonaws.com/", "EKS: node group, its AMI and launch template"},
	{"k8s.io/cloud-provider-aws", "the AWS cloud provider's cluster id"},
	{"topology.k8s.aws/", "AWS: the physical zone id"},
	{"topology.ebs.csi.aws.com/", "AWS EBS CSI: the zone, again"},
	{"karpenter.sh/nodepool", "Karpenter: the NodePool's name"},
	{"karpenter.sh/provisioner-name", "Karpenter: the Provisioner's name"},
	{"karpenter.k8s.aws/ec2nodeclass", "Karpenter: the EC2NodeClass's name"},
	{"cloud.google.com/gke-nodepool", "GKE: the node pool's name"},
	{"topology.gke.io/", "GKE: the zone, again"},
	{"kubernetes.azure.com/cluster", "AKS: the cluster's resource group"},
	{"kubernetes.azure.com/agentpool", "AKS: the agent pool's name"},
	{"kubernetes.azure.com/node-image-version", "AKS: the node image"},
	{"agentpool", "AKS: the agent pool's name"},
	{"cluster.x-k8s.io/", "Cluster API: the cluster's, machine set's and deployment's names"},
	{"kops.k8s.io/", "kOps: the instance group's name"},
};
const size_t import_n_anon_rules = sizeof(import_anon_rules) / sizeof(import_anon_rules[0]);

/* Taints a twin does not carry: the state of the real machine, not a choice. */
static const char *const state_taints[] = {
	"node.kubernetes.io/not-ready",
	"node.kubernetes.io/unreachable",
	"node.kubernetes.io/memory-pressure",
	"node.kubernetes.io/disk-pressure",
	"node.kubernetes.io/pid-pressure",
	"node.kubernetes.io/network-unavailable",
	"node.cloudprovider.kubernetes.io/uninitialized",
	"node.cloudprovider.kubernetes.io/shutdown",
	"ToBeDeletedByClusterAutoscaler",
	"DeletionCandidateOfClusterAutoscaler",
};

static const char *const zone_keys[] = {
	"topology.kubernetes.io/zone",
	"failure-domain.beta.kubernetes.io/zone",
};
static const char *const region_keys[] = {
	"topology.kubernetes.io/region",
	"failure-domain.beta.kubernetes.io/region",
};

struct import_node {
	const json_t *real; /* NULL for a pool's node */
	const struct ydoc_stream *src;
	char *name;
	json_t *twin;
	bool gpus;
};

struct import {
	const struct catalog *cat;
	struct import_opts opts;
	struct import_node *nodes;
	size_t n, cap;
};

struct import *import_new(const struct catalog *cat, const struct import_opts *o)
{
	struct import *im = gs_xcalloc(1, sizeof(*im));

	im->cat = cat;
	if (o)
		im->opts = *o;
	return im;
}

void import_free(struct import *im)
{
	if (!im)
		return;
	for (size_t i = 0; i < im->n; i++) {
		free(im->nodes[i].name);
		json_decref(im->nodes[i].twin);
	}
	free(im->nodes);
	free(im);
}

size_t import_count(const struct import *im)
{
	return im->n;
}

static struct import_node *find_node(const struct import *im, const char *name)
{
	for (size_t i = 0; i < im->n; i++)
		if (!strcmp(im->nodes[i].name, name))
			return &im->nodes[i];
	return NULL;
}

static int add_node(struct import *im, const json_t *real, const struct ydoc_stream *src,
		    const char *name, json_t *twin, bool gpus, struct gs_error *err)
{
	struct import_node *n;

	if (im->n >= IMPORT_MAX_NODES) {
		json_decref(twin);
		gs_error_set(err, "more than %d nodes", IMPORT_MAX_NODES);
		return -1;
	}
	if (im->n == im->cap) {
		im->cap = im->cap ? im->cap * 2 : 16;
		im->nodes = gs_xrealloc(im->nodes, im->cap * sizeof(*im->nodes));
	}
	n = &im->nodes[im->n++];
	n->real = real;
	n->src = src;
	n->name = gs_xstrdup(name);
	n->twin = twin;
	n->gpus = gpus;
	return 0;
}

/* ---- names ---- */

/* "a-z0-9" with '-' inside, as a node name's first label must be; at most `max`. */
static bool dns_label_ok(const char *s, size_t max)
{
	size_t n = strlen(s);

	if (n == 0 || n > max || !isalnum((unsigned char)s[0]) || !isalnum((unsigned char)s[n - 1]))
		return false;
	for (const char *p = s; *p; p++)
		if (!(islower((unsigned char)*p) || isdigit((unsigned char)*p) || *p == '-'))
			return false;
	return true;
}

static bool has_suffix(const char *s, const char *suffix)
{
	size_t n = strlen(s), m = strlen(suffix);
	return n >= m && !strcmp(s + n - m, suffix);
}

/* Keys in sorted order, for output a person can diff. New object, values shared. */
static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

static json_t *sorted_object(const json_t *obj)
{
	size_t n = json_object_size(obj), i = 0;
	const char **keys = gs_xcalloc(n ? n : 1, sizeof(*keys));
	json_t *out = json_object(), *v;
	const char *k;

	json_object_foreach ((json_t *)obj, k, v)
		keys[i++] = k;
	qsort(keys, n, sizeof(*keys), cmp_str);
	for (i = 0; i < n; i++)
		json_object_set(out, keys[i], json_object_get(obj, keys[i]));
	free(keys);
	return out;
}

/* ---- what GFD says about the GPUs ---- */

struct gfd {
	const struct catalog_gpu *model; /* NULL: no GPU */
	int count;
	const char *strategy; /* inferred when the node has no mig.strategy label; NULL = none */
	char *driver;	      /* NULL: GFD wrote no driver version */
	const char *machine;  /* NULL: none, or GFD's "unknown" */
	bool shared;
};

static bool nonzero(const json_t *v)
{
	struct quantity q;
	struct gs_error e;

	return !quantity_from_json(&q, v, &e) && !quantity_is_zero(&q);
}

/* The first nvidia.com resource the node's capacity holds above 0, or NULL. */
static const char *gpu_resource(const json_t *node)
{
	const json_t *cap = kobj_map(node, "status.capacity");
	const char *k;
	json_t *v;

	json_object_foreach ((json_t *)cap, k, v)
		if (!strncmp(k, "nvidia.com/", 11) && nonzero(v))
			return k;
	return NULL;
}

/* A MIG device resource above 0 (kubelet keeps one a plugin no longer offers at 0). */
static bool has_mig_resource(const json_t *node)
{
	const json_t *cap = kobj_map(node, "status.capacity");
	const char *k;
	json_t *v;

	json_object_foreach ((json_t *)cap, k, v)
		if (!strncmp(k, "nvidia.com/mig-", 15) && nonzero(v))
			return true;
	return false;
}

static int parse_int(const char *s, long max, long *out)
{
	long v = 0;

	if (!*s)
		return -1;
	for (; *s; s++) {
		if (!isdigit((unsigned char)*s))
			return -1;
		v = v * 10 + (*s - '0');
		if (v > max)
			return -1;
	}
	*out = v;
	return 0;
}

/* The model of GFD's product text (suffixes already cut), or an error at the label. */
static const struct catalog_gpu *product_model(const struct catalog *cat,
					       const struct ydoc_stream *s, const json_t *node,
					       const char *name, const char *text,
					       struct gs_error *err)
{
	const struct catalog_gpu *g = catalog_find_gpu(cat, text);
	const char *full = kobj_label(node, L_PRODUCT);
	struct strbuf hint = STRBUF_INIT;
	char from[MAX_PRODUCT + 16] = "";

	if (g)
		return g;
	catalog_gpu_hint(cat, text, &hint);
	if (strcmp(full, text))
		snprintf(from, sizeof(from), " (from '%s')", full);
	ydoc_error_at_key(s, kobj_labels(node), L_PRODUCT, err,
			  "node '%s': label %s: unknown GPU model '%s'%s%s", name, L_PRODUCT, text,
			  from, hint.buf);
	strbuf_release(&hint);
	return NULL;
}

/*
 * Under the single strategy GFD's gpu.count counts MIG devices: the GPUs
 * are that count over what the layout makes of one GPU.
 */
static int single_gpus(const struct catalog *cat, const struct ydoc_stream *s, const json_t *node,
		       const char *name, const struct catalog_gpu *model, const char *profile,
		       long devices, int *out, struct gs_error *err)
{
	const char *layout = kobj_label(node, NODEHW_LABEL_MIG_CONFIG);
	const json_t *labels = kobj_labels(node);
	struct catalog_gpu_mig m;
	struct gs_error e;
	long per = 0;

	if (!layout || !*layout) {
		ydoc_error_at_key(s, labels, L_PRODUCT, err,
				  "node '%s': label %s is a MIG device of the single strategy, "
				  "where %s counts MIG devices, not GPUs; without label %s "
				  "gpushare cannot tell how many GPUs hold them",
				  name, L_PRODUCT, L_COUNT, NODEHW_LABEL_MIG_CONFIG);
		return -1;
	}
	if (catalog_layout_apply(cat, layout, model, &m, &e)) {
		ydoc_error_at_key(
			s, labels, NODEHW_LABEL_MIG_CONFIG, err,
			"node '%s': label %s: %s (needed to count the GPUs behind %s=%ld)", name,
			NODEHW_LABEL_MIG_CONFIG, e.msg, L_COUNT, devices);
		return -1;
	}
	for (size_t i = 0; m.result == CATALOG_APPLY_OK && m.mig_enabled && i < m.n_devices; i++) {
		char pr[128];
		catalog_profile_resource(m.devices[i].profile, pr, sizeof(pr));
		if (!strcmp(pr, profile) || !strcmp(m.devices[i].profile, profile))
			per += m.devices[i].count;
	}
	if (per == 0) {
		ydoc_error_at_key(s, labels, NODEHW_LABEL_MIG_CONFIG, err,
				  "node '%s': label %s: layout '%s' makes no %s device of a %s, "
				  "yet %s says so",
				  name, NODEHW_LABEL_MIG_CONFIG, layout, profile, model->name,
				  L_PRODUCT);
		return -1;
	}
	if (devices % per || devices / per > NODEHW_MAX_GPUS || devices == 0) {
		ydoc_error_at_key(s, labels, L_COUNT, err,
				  "node '%s': label %s: %ld MIG devices is not a whole number of "
				  "GPUs (1 to %d) at %ld per GPU (layout %s)",
				  name, L_COUNT, devices, NODEHW_MAX_GPUS, per, layout);
		return -1;
	}
	*out = (int)(devices / per);
	return 0;
}

/* The driver version GFD wrote (current labels, else the deprecated ones), checked. */
static int read_driver(const struct ydoc_stream *s, const json_t *node, const char *name,
		       struct gfd *g, struct gs_error *err)
{
	const char *at = L_DRIVER_FULL, *full = kobj_label(node, L_DRIVER_FULL);
	const char *const sets[2][3] = {{L_DRIVER_MAJOR, L_DRIVER_MINOR, L_DRIVER_REV},
					{L_OLD_MAJOR, L_OLD_MINOR, L_OLD_REV}};
	int major, minor;

	if (full && *full) {
		g->driver = gs_xstrdup(full);
	} else {
		for (int i = 0; i < 2 && !g->driver; i++) {
			const char *ma = kobj_label(node, sets[i][0]);
			const char *mi = kobj_label(node, sets[i][1]);
			const char *rev = kobj_label(node, sets[i][2]);
			if (!ma || !mi)
				continue;
			at = sets[i][0];
			g->driver = rev && *rev ? gs_xasprintf("%s.%s.%s", ma, mi, rev)
						: gs_xasprintf("%s.%s", ma, mi);
		}
	}
	if (!g->driver)
		return 0;
	if (!nodehw_driver_version_ok(g->driver)) {
		ydoc_error_at_key(s, kobj_labels(node), at, err,
				  "node '%s': label %s: driver '%s' is not X.Y[.Z]", name, at,
				  g->driver);
		return -1;
	}
	if (nodehw_cuda_version(g->driver, &major, &minor)) {
		ydoc_error_at_key(s, kobj_labels(node), at, err,
				  "node '%s': label %s: driver '%s' is of a branch gpushare does "
				  "not know the CUDA version of",
				  name, at, g->driver);
		return -1;
	}
	return 0;
}

/* GFD's labels back into hardware: model, count, strategy, driver, machine. */
static int read_gfd(const struct catalog *cat, const struct ydoc_stream *s, const json_t *node,
		    const char *name, struct gfd *g, struct gs_error *err)
{
	const json_t *labels = kobj_labels(node);
	const char *prod = kobj_label(node, L_PRODUCT), *cnt = kobj_label(node, L_COUNT);
	const char *profile = NULL, *res, *mach;
	char text[MAX_PRODUCT + 1];
	char *mig;
	long count;

	memset(g, 0, sizeof(*g));
	if (!prod || !*prod) {
		res = gpu_resource(node);
		if (res) {
			ydoc_error_at_key(s, kobj_map(node, "status.capacity"), res, err,
					  "node '%s': status.capacity has %s but the node has no "
					  "label %s: GPU feature discovery does not run there, and "
					  "gpushare cannot tell the GPU model",
					  name, res, L_PRODUCT);
			return -1;
		}
		return 0;
	}
	if (strlen(prod) > MAX_PRODUCT) {
		ydoc_error_at_key(s, labels, L_PRODUCT, err,
				  "node '%s': label %s is longer than %d characters", name,
				  L_PRODUCT, MAX_PRODUCT);
		return -1;
	}
	snprintf(text, sizeof(text), "%s", prod);
	if (has_suffix(text, SUFFIX_SHARED)) {
		g->shared = true;
		text[strlen(text) - strlen(SUFFIX_SHARED)] = '\0';
	}
	if ((mig = strstr(text, SUFFIX_MIG)) != NULL) {
		for (char *p = mig; (p = strstr(p + 1, SUFFIX_MIG));)
			mig = p;
		*mig = '\0';
		profile = mig + strlen(SUFFIX_MIG);
	}
	if (!(g->model = product_model(cat, s, node, name, text, err)))
		return -1;
	if (profile && !strcmp(profile, "INVALID")) {
		ydoc_error_at_key(s, labels, L_PRODUCT, err,
				  "node '%s': label %s is %s: under the single strategy its MIG "
				  "layout is invalid (several profiles, or MIG on some GPUs only) "
				  "and GFD publishes no GPU count; fix the layout or import the "
				  "node once it is valid",
				  name, L_PRODUCT, prod);
		return -1;
	}
	if (profile) {
		bool known = false;
		for (size_t i = 0; g->model->mig && i < g->model->mig->n_profiles; i++) {
			char pr[128];
			catalog_profile_resource(g->model->mig->profiles[i].name, pr, sizeof(pr));
			known |= !strcmp(pr, profile) ||
				 !strcmp(g->model->mig->profiles[i].name, profile);
		}
		if (!known) {
			struct strbuf hint = STRBUF_INIT;
			catalog_profile_hint(cat, g->model, profile, true, &hint);
			ydoc_error_at_key(s, labels, L_PRODUCT, err,
					  "node '%s': label %s: '%s' is no MIG profile of %s%s",
					  name, L_PRODUCT, profile, g->model->name, hint.buf);
			strbuf_release(&hint);
			return -1;
		}
	}
	if (!cnt) {
		ydoc_error_at_key(s, labels, L_PRODUCT, err,
				  "node '%s': label %s is set but %s is missing (GFD writes both)",
				  name, L_PRODUCT, L_COUNT);
		return -1;
	}
	if (parse_int(cnt, (long)NODEHW_MAX_GPUS * 8, &count) ||
	    (!profile && (count < 1 || count > NODEHW_MAX_GPUS))) {
		ydoc_error_at_key(s, labels, L_COUNT, err,
				  "node '%s': label %s: '%s' is not a GPU count from 1 to %d", name,
				  L_COUNT, cnt, NODEHW_MAX_GPUS);
		return -1;
	}
	if (profile) {
		if (single_gpus(cat, s, node, name, g->model, profile, count, &g->count, err))
			return -1;
	} else {
		g->count = (int)count;
	}
	/* The strategy: GFD's label when there is one (kept on the twin), else from what shows. */
	if (!kobj_label(node, NODEHW_LABEL_MIG_STRATEGY) ||
	    !*kobj_label(node, NODEHW_LABEL_MIG_STRATEGY))
		g->strategy = has_mig_resource(node) ? "mixed" : profile ? "single" : NULL;
	if (read_driver(s, node, name, g, err))
		return -1;
	mach = kobj_label(node, L_MACHINE);
	if (mach && *mach && strcmp(mach, NODEHW_DEFAULT_MACHINE))
		g->machine = mach;
	return 0;
}

/* Warnings about a twin that will not advertise what its node shows, unless told more. */
static void gfd_warnings(const struct catalog *cat, const json_t *node, const char *name,
			 const struct gfd *g, struct gs_warnings *w)
{
	const char *layout = kobj_label(node, NODEHW_LABEL_MIG_CONFIG);
	struct catalog_gpu_mig m;
	struct gs_error e;

	if (g->shared && !kobj_label(node, NODEHW_LABEL_CONFIG))
		gs_warnings_add(w,
				"node '%s': %s ends in %s (its GPUs are shared) but it has no "
				"label %s: its sharing comes from the plugin's default config; "
				"the twin shares the same only under the same default",
				name, L_PRODUCT, SUFFIX_SHARED, NODEHW_LABEL_CONFIG);
	if (layout && *layout && g->model->mig &&
	    catalog_layout_apply(cat, layout, g->model, &m, &e))
		gs_warnings_add(w,
				"node '%s': label %s: %s; the twin's mig-manager fails "
				"(nvidia.com/mig.config.state=failed)",
				name, NODEHW_LABEL_MIG_CONFIG, e.msg);
}

/* ---- the twin ---- */

static bool is_state_taint(const char *key)
{
	for (size_t i = 0; i < sizeof(state_taints) / sizeof(state_taints[0]); i++)
		if (!strcmp(key, state_taints[i]))
			return true;
	return false;
}

/* Taints chosen by people or controllers that stay, without the real clock's timeAdded. */
static json_t *twin_taints(const json_t *node)
{
	const json_t *taints = kobj_get(node, "spec.taints");
	json_t *out = json_array(), *t;
	size_t i;

	json_array_foreach ((json_t *)taints, i, t) {
		json_t *copy;
		if (!json_is_object(t) || is_state_taint(kobj_text(t, "key")))
			continue;
		copy = json_deep_copy(t);
		json_object_del(copy, "timeAdded");
		json_array_append_new(out, copy);
	}
	return out;
}

/* The non-nvidia.com resources of one status map: nvidia.com ones are gpushare's to write. */
static json_t *twin_resources(const json_t *node, const char *path)
{
	const json_t *have = kobj_map(node, path);
	json_t *out = json_object(), *v;
	const char *k;

	json_object_foreach ((json_t *)have, k, v)
		if (strncmp(k, "nvidia.com/", 11))
			json_object_set(out, k, v);
	return out;
}

static json_t *node_object(const char *name, json_t *labels, json_t *annotations, json_t *spec,
			   json_t *capacity, json_t *allocatable)
{
	json_t *twin = json_object(), *meta = json_object(), *status = json_object();

	json_object_set_new(twin, "apiVersion", json_string("v1"));
	json_object_set_new(twin, "kind", json_string("Node"));
	json_object_set_new(meta, "name", json_string(name));
	json_object_set_new(meta, "labels", sorted_object(labels));
	json_object_set_new(meta, "annotations", sorted_object(annotations));
	json_object_set_new(twin, "metadata", meta);
	if (json_object_size(spec))
		json_object_set(twin, "spec", spec);
	json_object_set_new(status, "capacity", capacity);
	json_object_set_new(status, "allocatable", allocatable);
	json_object_set_new(twin, "status", status);
	json_decref(labels);
	json_decref(annotations);
	json_decref(spec);
	return twin;
}

/* kwok plays the node (the lab's conventions, k8s/lab-nodes.yaml). */
static void kwok_marks(json_t *labels, json_t *annotations)
{
	if (!json_object_get(labels, "type"))
		json_object_set_new(labels, "type", json_string("kwok"));
	json_object_set_new(annotations, IMPORT_ANN_KWOK, json_string("fake"));
	json_object_set_new(annotations, IMPORT_ANN_TTL, json_string("0"));
}

static void declare_gpus(json_t *annotations, const struct catalog_gpu *model, int count,
			 const char *driver, const char *machine)
{
	json_object_set_new(annotations, NODEHW_ANN_PRODUCT, json_string(model->name));
	json_object_set_new(annotations, NODEHW_ANN_COUNT, json_sprintf("%d", count));
	if (driver)
		json_object_set_new(annotations, NODEHW_ANN_DRIVER, json_string(driver));
	if (machine)
		json_object_set_new(annotations, NODEHW_ANN_MACHINE, json_string(machine));
}

/* A twin must read back as gpushare reads nodes; anything else is a bug here. */
static int verify_twin(const struct catalog *cat, const json_t *twin, struct gs_error *err)
{
	struct nodehw *hw = NULL;
	struct gs_warnings w;
	int rc;

	gs_warnings_init(&w);
	rc = nodehw_from_node(cat, twin, NULL, &hw, &w, err);
	if (rc == 0 && w.n) {
		gs_error_set(err, "node '%s': the twin does not read back: %s", hw->name,
			     w.items[0]);
		rc = -1;
	}
	nodehw_free(hw);
	gs_warnings_release(&w);
	return rc;
}

static int import_real(struct import *im, const struct ydoc_stream *s, const json_t *real,
		       struct gs_warnings *warnings, struct gs_error *err)
{
	struct nodehw *hw = NULL;
	struct gs_warnings ignored;
	struct import_node *seen;
	struct gfd g;
	json_t *labels, *annotations, *spec, *taints, *twin, *v;
	const char *k, *name;
	int rc;

	/* The shape of a Node, checked as everywhere gpushare reads one. */
	gs_warnings_init(&ignored);
	rc = nodehw_from_node(im->cat, real, s, &hw, &ignored, err);
	gs_warnings_release(&ignored);
	if (rc)
		return -1;
	name = kobj_name(real);
	nodehw_free(hw);
	if ((seen = find_node(im, name)) != NULL) {
		struct ydoc_pos pos = {.line = 0, .col = 0};
		if (seen->src)
			(void)ydoc_stream_key_pos(seen->src, kobj_get(seen->real, "metadata"),
						  "name", &pos);
		ydoc_error_at_key(s, kobj_get(real, "metadata"), "name", err,
				  "node '%s' appears twice (first at %s:%d:%d)", name,
				  seen->src ? ydoc_stream_name(seen->src) : "a pool", pos.line,
				  pos.col);
		return -1;
	}
	if (read_gfd(im->cat, s, real, name, &g, err)) {
		free(g.driver);
		return -1;
	}
	if (g.model)
		gfd_warnings(im->cat, real, name, &g, warnings);

	labels = json_object();
	json_object_foreach ((json_t *)kobj_labels(real), k, v) {
		if (!advertise_gfd_label(k) || !strcmp(k, NODEHW_LABEL_MIG_STRATEGY))
			json_object_set(labels, k, v);
	}
	if (g.strategy)
		json_object_set_new(labels, NODEHW_LABEL_MIG_STRATEGY, json_string(g.strategy));
	annotations = json_object();
	kwok_marks(labels, annotations);
	if (g.model)
		declare_gpus(annotations, g.model, g.count, g.driver, g.machine);
	spec = json_object();
	taints = twin_taints(real);
	if (json_array_size(taints))
		json_object_set(spec, "taints", taints);
	json_decref(taints);
	if (json_is_true(kobj_get(real, "spec.unschedulable")))
		json_object_set_new(spec, "unschedulable", json_true());
	twin = node_object(name, labels, annotations, spec, twin_resources(real, "status.capacity"),
			   twin_resources(real, "status.allocatable"));
	free(g.driver);
	if (verify_twin(im->cat, twin, err)) {
		json_decref(twin);
		return -1;
	}
	return add_node(im, real, s, name, twin, g.model != NULL, err);
}

/* A List (List, NodeList, ...) as kubectl writes it: its items stand for it. */
static bool is_list(const json_t *doc)
{
	const char *kind = kobj_kind(doc);
	size_t n = kind ? strlen(kind) : 0;

	return n >= 4 && !strcmp(kind + n - 4, "List") &&
	       json_is_array(json_object_get(doc, "items"));
}

static int add_doc(struct import *im, const struct ydoc_stream *s, const json_t *doc,
		   struct gs_warnings *warnings, struct gs_error *err)
{
	const char *kind = kobj_kind(doc);

	if (json_is_null(doc))
		return 0;
	if (!json_is_object(doc) || !kind || strcmp(kind, "Node")) {
		struct gs_error e;
		char buf[1536];
		ydoc_error_at(s, doc, &e, "skipped: %s%s, not a Node",
			      kind ? "a " : "an object without kind", kind ? kind : "");
		gs_warnings_add(warnings, "%s", gs_error_str(&e, buf, sizeof(buf)));
		return 0;
	}
	return import_real(im, s, doc, warnings, err);
}

int import_add_stream(struct import *im, const struct ydoc_stream *s, struct gs_warnings *warnings,
		      struct gs_error *err)
{
	for (size_t i = 0; i < ydoc_stream_count(s); i++) {
		const json_t *doc = ydoc_stream_doc(s, i), *item;
		size_t k;

		if (!is_list(doc)) {
			if (add_doc(im, s, doc, warnings, err))
				return -1;
			continue;
		}
		json_array_foreach (json_object_get(doc, "items"), k, item)
			if (add_doc(im, s, item, warnings, err))
				return -1;
	}
	return 0;
}

int import_add_fleet(struct import *im, const struct fleet *f, const json_t *skip,
		     struct gs_warnings *warnings, struct gs_error *err)
{
	const json_t *obj;
	size_t i;

	json_array_foreach (f->all, i, obj)
		if (obj != skip && add_doc(im, fleet_stream_of(f, obj), obj, warnings, err))
			return -1;
	return 0;
}

/* ---- pools ---- */

struct pool {
	char name[64];
	long count, gpus;
	const struct catalog_gpu *model;
	const char *config, *mig, *strategy, *cpu, *memory, *pods, *driver;
};

static int pool_quantity(const char *spec, const char *key, const char *val, struct gs_error *err)
{
	struct quantity q;
	struct gs_error e;

	if (quantity_parse(&q, val, strlen(val), &e) || quantity_sign(&q) <= 0) {
		gs_error_set(err, "pool '%s': %s=%s is not a positive quantity", spec, key, val);
		return -1;
	}
	return 0;
}

/* key=value after the shape; values borrow `buf`. */
static int pool_option(struct pool *p, const char *spec, char *kv, struct gs_error *err)
{
	char *eq = strchr(kv, '=');
	const char *key = kv, *val;
	long n;

	if (!eq || eq == kv || !eq[1]) {
		gs_error_set(err, "pool '%s': '%s' is not KEY=VALUE", spec, kv);
		return -1;
	}
	*eq = '\0';
	val = eq + 1;
	if (!strcmp(key, "config")) {
		p->config = val;
	} else if (!strcmp(key, "mig")) {
		p->mig = val;
	} else if (!strcmp(key, "strategy")) {
		if (strcmp(val, "none") && strcmp(val, "single") && strcmp(val, "mixed")) {
			gs_error_set(err,
				     "pool '%s': strategy=%s: the MIG strategy is none, single "
				     "or mixed",
				     spec, val);
			return -1;
		}
		p->strategy = val;
	} else if (!strcmp(key, "cpu") || !strcmp(key, "memory")) {
		if (pool_quantity(spec, key, val, err))
			return -1;
		*(!strcmp(key, "cpu") ? &p->cpu : &p->memory) = val;
	} else if (!strcmp(key, "pods")) {
		if (parse_int(val, 100000, &n) || n < 1) {
			gs_error_set(err,
				     "pool '%s': pods=%s is not a whole number from 1 to 100000",
				     spec, val);
			return -1;
		}
		p->pods = val;
	} else if (!strcmp(key, "driver")) {
		int ma, mi;
		if (!nodehw_driver_version_ok(val) || nodehw_cuda_version(val, &ma, &mi)) {
			gs_error_set(err,
				     "pool '%s': driver=%s is not a driver version X.Y[.Z] of a "
				     "branch gpushare knows (e.g. %s)",
				     spec, val, NODEHW_DEFAULT_DRIVER);
			return -1;
		}
		p->driver = val;
	} else {
		gs_error_set(err,
			     "pool '%s': unknown key '%s' (config, mig, strategy, cpu, memory, "
			     "pods, driver)",
			     spec, key);
		return -1;
	}
	return 0;
}

/* "COUNTxGPUSxMODEL". */
static int pool_shape(const struct catalog *cat, struct pool *p, const char *spec, char *shape,
		      struct gs_error *err)
{
	char *x1 = strchr(shape, 'x'), *x2 = x1 ? strchr(x1 + 1, 'x') : NULL;
	struct strbuf hint = STRBUF_INIT;

	if (!x1 || !x2 || !x2[1]) {
		gs_error_set(err,
			     "pool '%s': expected COUNTxGPUSxMODEL after '=', as in "
			     "4x8xNVIDIA-H100-80GB-HBM3",
			     spec);
		return -1;
	}
	*x1 = *x2 = '\0';
	if (parse_int(shape, IMPORT_MAX_POOL, &p->count) || p->count < 1) {
		gs_error_set(err, "pool '%s': '%s' is not a node count from 1 to %d", spec, shape,
			     IMPORT_MAX_POOL);
		return -1;
	}
	if (parse_int(x1 + 1, NODEHW_MAX_GPUS, &p->gpus) || p->gpus < 1) {
		gs_error_set(err, "pool '%s': '%s' is not a GPU count from 1 to %d", spec, x1 + 1,
			     NODEHW_MAX_GPUS);
		return -1;
	}
	if ((p->model = catalog_find_gpu(cat, x2 + 1)) != NULL)
		return 0;
	catalog_gpu_hint(cat, x2 + 1, &hint);
	gs_error_set(err, "pool '%s': unknown GPU model '%s'%s", spec, x2 + 1, hint.buf);
	strbuf_release(&hint);
	return -1;
}

static int pool_parse(const struct catalog *cat, struct pool *p, const char *spec, char *buf,
		      struct gs_error *err)
{
	char *eq = strchr(buf, '='), *comma, *rest;

	memset(p, 0, sizeof(*p));
	if (!eq) {
		gs_error_set(err, "pool '%s': expected NAME=COUNTxGPUSxMODEL[,KEY=VALUE...]", spec);
		return -1;
	}
	*eq = '\0';
	if (!dns_label_ok(buf, 40)) {
		gs_error_set(err,
			     "pool '%s': name '%s' must be lower-case letters, digits and '-', "
			     "alphanumeric at both ends, at most 40 characters",
			     spec, buf);
		return -1;
	}
	snprintf(p->name, sizeof(p->name), "%s", buf);
	rest = eq + 1;
	comma = strchr(rest, ',');
	if (comma)
		*comma = '\0';
	if (pool_shape(cat, p, spec, rest, err))
		return -1;
	while (comma) {
		char *kv = comma + 1;
		comma = strchr(kv, ',');
		if (comma)
			*comma = '\0';
		if (pool_option(p, spec, kv, err))
			return -1;
	}
	if (p->mig) {
		struct catalog_gpu_mig m;
		struct gs_error e;
		if (!p->model->mig) {
			gs_error_set(err, "pool '%s': mig=%s: %s is not MIG-capable", spec, p->mig,
				     p->model->name);
			return -1;
		}
		if (catalog_layout_apply(cat, p->mig, p->model, &m, &e)) {
			gs_error_set(err, "pool '%s': mig=%s: %s", spec, p->mig, e.msg);
			return -1;
		}
	}
	return 0;
}

int import_add_pool(struct import *im, const char *spec, struct gs_error *err)
{
	char *buf = gs_xstrdup(spec);
	struct pool p;
	int rc = -1;

	if (pool_parse(im->cat, &p, spec, buf, err))
		goto out;
	for (long i = 1; i <= p.count; i++) {
		char name[96];
		json_t *labels = json_object(), *annotations = json_object(), *res = json_object();
		json_t *twin;

		snprintf(name, sizeof(name), "%s-%04ld", p.name, i);
		json_object_set_new(labels, L_HOSTNAME, json_string(name));
		json_object_set_new(labels, IMPORT_LABEL_POOL, json_string(p.name));
		if (p.config)
			json_object_set_new(labels, NODEHW_LABEL_CONFIG, json_string(p.config));
		if (p.mig)
			json_object_set_new(labels, NODEHW_LABEL_MIG_CONFIG, json_string(p.mig));
		if (p.strategy)
			json_object_set_new(labels, NODEHW_LABEL_MIG_STRATEGY,
					    json_string(p.strategy));
		kwok_marks(labels, annotations);
		declare_gpus(annotations, p.model, (int)p.gpus, p.driver, NULL);
		/* The lab nodes' machine (k8s/lab-nodes.yaml) unless told otherwise. */
		json_object_set_new(res, "cpu", json_string(p.cpu ? p.cpu : "32"));
		json_object_set_new(res, "memory", json_string(p.memory ? p.memory : "256Gi"));
		json_object_set_new(res, "pods", json_string(p.pods ? p.pods : "110"));
		twin = node_object(name, labels, annotations, json_object(), json_deep_copy(res),
				   res);
		if (find_node(im, name)) {
			gs_error_set(err, "pool '%s': node '%s' exists already", spec, name);
			json_decref(twin);
			goto out;
		}
		if (verify_twin(im->cat, twin, err)) {
			json_decref(twin);
			goto out;
		}
		if (add_node(im, NULL, NULL, name, twin, true, err))
			goto out;
	}
	rc = 0;
out:
	free(buf);
	return rc;
}

/* ---- anonymising ---- */

static const struct import_anon_rule *anon_rule(const char *key)
{
	for (size_t i = 0; i < import_n_anon_rules; i++) {
		const char *r = import_anon_rules[i].key;
		size_t n = strlen(r);
		bool prefix = r[n - 1] == '/' || r[n - 1] == '-';
		if (prefix ? !strncmp(key, r, n) : !strcmp(key, r))
			return &import_anon_rules[i];
	}
	return NULL;
}

static bool in_list(const char *key, const char *const *list, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (!strcmp(key, list[i]))
			return true;
	return false;
}

#define N_ZONE_KEYS (sizeof(zone_keys) / sizeof(zone_keys[0]))
#define N_REGION_KEYS (sizeof(region_keys) / sizeof(region_keys[0]))

/* Every value of the keys on the imported twins, sorted, -> "<prefix>-N". */
static json_t *value_map(const struct import *im, const char *const *keys, size_t n_keys,
			 const char *prefix)
{
	json_t *seen = json_object(), *map = json_object(), *sorted, *v;
	const char *k;
	size_t i = 0;

	for (size_t j = 0; j < im->n; j++) {
		if (!im->nodes[j].real)
			continue;
		for (size_t x = 0; x < n_keys; x++) {
			const char *val = kobj_label(im->nodes[j].twin, keys[x]);
			if (val)
				json_object_set_new(seen, val, json_true());
		}
	}
	sorted = sorted_object(seen);
	json_object_foreach (sorted, k, v)
		json_object_set_new(map, k, json_sprintf("%s-%zu", prefix, ++i));
	json_decref(sorted);
	json_decref(seen);
	return map;
}

static int cmp_node_name(const void *a, const void *b)
{
	const struct import_node *x = *(const struct import_node *const *)a;
	const struct import_node *y = *(const struct import_node *const *)b;
	return strcmp(x->name, y->name);
}

/* New names, in the order of im->nodes (pools keep theirs). */
static char **anon_names(const struct import *im)
{
	const struct import_node **order = gs_xcalloc(im->n + 1, sizeof(*order));
	char **names = gs_xcalloc(im->n + 1, sizeof(*names));
	size_t n = 0, gpu = 0, cpu = 0;

	for (size_t i = 0; i < im->n; i++)
		if (im->nodes[i].real)
			order[n++] = &im->nodes[i];
	qsort(order, n, sizeof(*order), cmp_node_name);
	for (size_t i = 0; i < n; i++) {
		size_t at = (size_t)(order[i] - im->nodes);
		names[at] = order[i]->gpus ? gs_xasprintf("gpu-node-%04zu", ++gpu)
					   : gs_xasprintf("node-%04zu", ++cpu);
	}
	for (size_t i = 0; i < im->n; i++)
		if (!names[i])
			names[i] = gs_xstrdup(im->nodes[i].name);
	free(order);
	return names;
}

static void count_drop(json_t *dropped, const char *key)
{
	json_t *v = json_object_get(dropped, key);
	json_object_set_new(dropped, key, json_integer(v ? json_integer_value(v) + 1 : 1));
}

/* One twin (a copy) renamed; labels dropped or renamed. */
static void anonymise_twin(json_t *twin, const char *old, const char *name, const json_t *zones,
			   const json_t *regions, json_t *dropped)
{
	json_t *meta = json_object_get(twin, "metadata");
	json_t *labels = json_object_get(meta, "labels"), *out = json_object(), *v, *t;
	const char *host = kobj_label(twin, L_HOSTNAME), *k;
	char *host_copy = host ? gs_xstrdup(host) : NULL;
	size_t i;

	json_object_foreach (labels, k, v) {
		const char *val = json_string_value(v);
		if (anon_rule(k)) {
			count_drop(dropped, k);
		} else if (in_list(k, zone_keys, N_ZONE_KEYS)) {
			json_object_set(out, k, json_object_get(zones, val));
		} else if (in_list(k, region_keys, N_REGION_KEYS)) {
			json_object_set(out, k, json_object_get(regions, val));
		} else if (!strcmp(val, old) || (host_copy && !strcmp(val, host_copy))) {
			json_object_set_new(out, k, json_string(name));
		} else if (strstr(val, old) ||
			   (host_copy && *host_copy && strstr(val, host_copy))) {
			count_drop(dropped, k); /* it holds the node's name */
		} else {
			json_object_set(out, k, v);
		}
	}
	json_object_set_new(meta, "labels", out);
	json_object_set_new(meta, "name", json_string(name));
	json_array_foreach (kobj_get(twin, "spec.taints"), i, t) {
		const char *val = kobj_string(t, "value");
		if (val && (!strcmp(val, old) || (host_copy && !strcmp(val, host_copy))))
			json_object_set_new(t, "value", json_string(name));
	}
	free(host_copy);
}

int import_twins(const struct import *im, json_t **out, struct gs_warnings *notes,
		 struct gs_error *err)
{
	json_t *twins = json_array(), *seen = json_object();
	json_t *zones = NULL, *regions = NULL, *dropped = NULL;
	char **names = NULL;
	size_t renamed = 0;
	int rc = -1;

	*out = NULL;
	if (im->opts.anonymise) {
		names = anon_names(im);
		zones = value_map(im, zone_keys, N_ZONE_KEYS, "zone");
		regions = value_map(im, region_keys, N_REGION_KEYS, "region");
		dropped = json_object();
	}
	for (size_t i = 0; i < im->n; i++) {
		json_t *twin = json_deep_copy(im->nodes[i].twin);
		if (names && im->nodes[i].real) {
			anonymise_twin(twin, im->nodes[i].name, names[i], zones, regions, dropped);
			renamed++;
		}
		json_array_append_new(twins, twin);
		if (json_object_get(seen, kobj_name(twin))) {
			gs_error_set(err, "two nodes would be named '%s'", kobj_name(twin));
			goto out;
		}
		json_object_set_new(seen, kobj_name(twin), json_true());
	}
	if (names) {
		const char *k;
		json_t *v;
		gs_warnings_add(
			notes,
			"anonymised: %zu node%s renamed (gpu-node-NNNN with GPUs, node-NNNN "
			"without, by sorted name), %zu zone%s and %zu region%s renamed",
			renamed, renamed == 1 ? "" : "s", json_object_size(zones),
			json_object_size(zones) == 1 ? "" : "s", json_object_size(regions),
			json_object_size(regions) == 1 ? "" : "s");
		json_t *sorted = sorted_object(dropped);
		json_object_foreach (sorted, k, v) {
			const struct import_anon_rule *r = anon_rule(k);
			gs_warnings_add(notes,
					"anonymised: label %s dropped on %" JSON_INTEGER_FORMAT
					" node%s (%s)",
					k, json_integer_value(v),
					json_integer_value(v) == 1 ? "" : "s",
					r ? r->why : "its value holds the node's name");
		}
		json_decref(sorted);
	}
	*out = json_incref(twins);
	rc = 0;
out:
	for (size_t i = 0; names && i < im->n; i++)
		free(names[i]);
	free(names);
	json_decref(zones);
	json_decref(regions);
	json_decref(dropped);
	json_decref(seen);
	json_decref(twins);
	return rc;
}

/* ---- the check ---- */

static void add_diff(struct import_check *c, const char *node, const char *field, const char *real,
		     const char *twin)
{
	struct import_diff *d;

	c->diffs = gs_xrealloc(c->diffs, (c->n + 1) * sizeof(*c->diffs));
	d = &c->diffs[c->n++];
	d->node = gs_xstrdup(node);
	d->field = gs_xstrdup(field);
	d->real = real ? gs_xstrdup(real) : NULL;
	d->twin = twin ? gs_xstrdup(twin) : NULL;
}

static bool ignored_label(const char *key)
{
	for (size_t i = 0; i < import_n_ignored_labels; i++)
		if (!strcmp(key, import_ignored_labels[i].label))
			return true;
	return false;
}

/* The nvidia.com/ keys of both maps, sorted (a new object of keys). */
static json_t *nvidia_keys(const json_t *a, const json_t *b)
{
	json_t *keys = json_object(), *sorted, *v;
	const char *k;

	json_object_foreach ((json_t *)a, k, v)
		if (!strncmp(k, "nvidia.com/", 11))
			json_object_set_new(keys, k, json_true());
	json_object_foreach ((json_t *)b, k, v)
		if (!strncmp(k, "nvidia.com/", 11))
			json_object_set_new(keys, k, json_true());
	sorted = sorted_object(keys);
	json_decref(keys);
	return sorted;
}

static void compare_labels(struct import_check *c, const char *node, const json_t *real,
			   const json_t *twin)
{
	const json_t *a = kobj_labels(real), *b = kobj_labels(twin);
	json_t *keys = nvidia_keys(a, b), *v;
	const char *k;

	json_object_foreach (keys, k, v) {
		const char *x = json_string_value(json_object_get(a, k));
		const char *y = json_string_value(json_object_get(b, k));
		char field[512];
		if (ignored_label(k) || (x && y && !strcmp(x, y)))
			continue;
		snprintf(field, sizeof(field), "label %s", k);
		add_diff(c, node, field, x, y);
	}
	json_decref(keys);
}

/* A status value as text ("8"), NULL when absent. */
static const char *quantity_text(const json_t *v, char *buf, size_t size)
{
	if (!v)
		return NULL;
	if (json_is_string(v))
		return json_string_value(v);
	if (json_is_integer(v)) {
		snprintf(buf, size, "%" JSON_INTEGER_FORMAT, json_integer_value(v));
		return buf;
	}
	snprintf(buf, size, "(%s)", ydoc_kind_name(v));
	return buf;
}

/* Same quantity; absent counts as 0, as the scheduler sees it. */
static bool same_quantity(const json_t *a, const json_t *b)
{
	struct quantity qa, qb;
	struct gs_error e;

	if (a && quantity_from_json(&qa, a, &e))
		return false;
	if (b && quantity_from_json(&qb, b, &e))
		return false;
	if (!a)
		quantity_from_int64(&qa, 0, QUANTITY_DECIMAL_SI);
	if (!b)
		quantity_from_int64(&qb, 0, QUANTITY_DECIMAL_SI);
	return quantity_cmp(&qa, &qb) == 0;
}

static void compare_resources(struct import_check *c, const char *node, const char *what,
			      const json_t *real, const json_t *twin)
{
	char path[64];
	const json_t *a, *b;
	json_t *keys, *v;
	const char *k;

	snprintf(path, sizeof(path), "status.%s", what);
	a = kobj_map(real, path);
	b = kobj_map(twin, path);
	keys = nvidia_keys(a, b);
	json_object_foreach (keys, k, v) {
		const json_t *x = json_object_get(a, k), *y = json_object_get(b, k);
		char field[512], bx[64], by[64];
		if (same_quantity(x, y))
			continue;
		snprintf(field, sizeof(field), "%s %s", what, k);
		add_diff(c, node, field, quantity_text(x, bx, sizeof(bx)),
			 quantity_text(y, by, sizeof(by)));
	}
	json_decref(keys);
}

int import_check(const struct import *im, const struct import_check_opts *o,
		 struct import_check *out, struct gs_error *err)
{
	struct sync_opts so = {0};
	struct sync_report rep;
	json_t *twins = json_array();
	const json_t *cm = o ? o->configmap : NULL;
	size_t *at = gs_xcalloc(im->n + 1, sizeof(*at)), k = 0;
	int rc = -1;

	memset(out, 0, sizeof(*out));
	gs_warnings_init(&out->notes);
	memset(&rep, 0, sizeof(rep));
	if (im->opts.anonymise) {
		gs_error_set(err, "an anonymised import has no real node names to compare with");
		goto out;
	}
	for (size_t i = 0; i < im->n; i++) {
		if (!im->nodes[i].real)
			continue;
		at[k++] = i;
		json_array_append(twins, im->nodes[i].twin);
	}
	so.default_config = o ? o->default_config : NULL;
	so.fallbacks = o ? o->fallbacks : NULL;
	if (sync_plan(cm, twins, &so, &rep, err) < 0)
		goto out;
	for (size_t j = 0; j < rep.n && j < k; j++) {
		const struct import_node *n = &im->nodes[at[j]];
		const struct sync_node *s = &rep.nodes[j];
		json_t *after = json_deep_copy(n->twin);
		size_t before = out->n;

		if (s->patch)
			mergepatch_apply(after, s->patch);
		if (s->outcome == SYNC_FAILED)
			gs_warnings_add(&out->notes, "node '%s': the twin's stack fails: %s",
					n->name, s->message);
		for (size_t w = 0; w < s->warnings.n; w++)
			gs_warnings_add(&out->notes, "node '%s': %s", n->name,
					s->warnings.items[w]);
		compare_labels(out, n->name, n->real, after);
		compare_resources(out, n->name, "capacity", n->real, after);
		compare_resources(out, n->name, "allocatable", n->real, after);
		json_decref(after);
		out->nodes++;
		out->gpu_nodes += n->gpus;
		out->config_labels += kobj_label(n->real, NODEHW_LABEL_CONFIG) != NULL;
		out->nodes_differing += out->n > before;
	}
	rc = 0;
out:
	sync_report_release(&rep);
	json_decref(twins);
	free(at);
	return rc;
}

void import_check_release(struct import_check *c)
{
	for (size_t i = 0; i < c->n; i++) {
		free(c->diffs[i].node);
		free(c->diffs[i].field);
		free(c->diffs[i].real);
		free(c->diffs[i].twin);
	}
	free(c->diffs);
	gs_warnings_release(&c->notes);
	memset(c, 0, sizeof(*c));
}
