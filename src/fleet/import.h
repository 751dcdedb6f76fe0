#ifndef GS_IMPORT_H
#define GS_IMPORT_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#include "base/error.h"
#include "fleet/fleet.h"
#include "model/catalog.h"
#include "yaml/ydoc.h"

/*
 * Twins of real GPU nodes, for kwok (docs/guide/import.md). From Node objects as a
 * cluster where NVIDIA's device plugin and GPU feature discovery (GFD) run
 * shows them (`kubectl get nodes -o yaml`), the Node gpushare plays instead:
 * its GPUs declared with gpushare's annotations (nodehw.h), read back from
 * GFD's labels; its CPU, memory, pods, other labels and taints kept; what only
 * the real machine has (conditions, addresses, nodeInfo, images, ...)
 * dropped. Also fleets that exist only on paper (pools), and the check that
 * gpushare advertises for each twin what its real node shows. No I/O.
 */

#define IMPORT_ANN_KWOK "kwok.x-k8s.io/node" /* "fake": kwok plays the node */
#define IMPORT_ANN_TTL "node.alpha.kubernetes.io/ttl"
#define IMPORT_MAX_NODES 100000 /* twins in one import */
#define IMPORT_MAX_POOL 10000	/* nodes of one pool */

struct import_opts {
	/*
	 * Rename the imported nodes gpu-node-NNNN (nodes with GPUs) and
	 * node-NNNN (the others), numbered by sorted original name; zones and
	 * regions zone-N, region-N; drop the labels that name the cluster, its
	 * account or its machines (import_anon_rules). Pools keep their names.
	 */
	bool anonymise;
};

/* Opaque: the nodes read so far, each with its twin. */
struct import;

struct import *import_new(const struct catalog *cat, const struct import_opts *o);
void import_free(struct import *im);

/*
 * Every Node of `s` (a stream from ydoc_load_manifests: Lists stand for
 * their items), borrowed: the stream must outlive `im`. Fails on bad input
 * with file:line:col: a malformed Node, a GFD product name the catalog does
 * not know (with a suggestion), a count or driver GFD would not write, GPU
 * resources without GFD's labels, a node name seen before. Other kinds of
 * objects are skipped with a warning; so is nothing else.
 */
int import_add_stream(struct import *im, const struct ydoc_stream *s, struct gs_warnings *warnings,
		      struct gs_error *err) GS_WUR;

/*
 * The same for every object of a fleet read with fleet_read (fleet.h, its
 * `all`), in reading order: f must outlive `im`. `skip` (NULL: none) is an object read
 * for another purpose, the device-plugin ConfigMap of the check, skipped
 * without a warning.
 */
int import_add_fleet(struct import *im, const struct fleet *f, const json_t *skip,
		     struct gs_warnings *warnings, struct gs_error *err) GS_WUR;

/*
 * A fleet on paper: NAME=COUNTxGPUSxMODEL[,config=KEY][,mig=LAYOUT]
 * [,strategy=none|single|mixed][,cpu=Q][,memory=Q][,pods=N][,driver=X.Y.Z]
 * gives COUNT nodes NAME-0001... with GPUS GPUs of MODEL each (docs/guide/import.md).
 */
int import_add_pool(struct import *im, const char *spec, struct gs_error *err) GS_WUR;

/* Nodes added so far. */
size_t import_count(const struct import *im);

/*
 * The twins, in the order they were added, anonymised when asked: a new
 * array of new objects. `notes` says what anonymising renamed and dropped.
 * Fails when two twins end up with one name.
 */
int import_twins(const struct import *im, json_t **out, struct gs_warnings *notes,
		 struct gs_error *err) GS_WUR;

/* ---- the check ---- */

/* One field where a real node and what gpushare advertises for its twin differ. */
struct import_diff {
	char *node;
	char *field; /* "label nvidia.com/gpu.replicas", "capacity nvidia.com/gpu", ... */
	char *real;  /* NULL: absent */
	char *twin;  /* NULL: absent */
};

struct import_check_opts {
	/* The device-plugin ConfigMap; NULL = none: the plugin runs without a config file. */
	const json_t *configmap;
	const char *default_config; /* config-manager's DEFAULT_CONFIG; NULL = unset */
	const char *fallbacks;	    /* FALLBACK_STRATEGIES; NULL = named,single */
};

struct import_check {
	struct import_diff *diffs; /* by node in input order, then field */
	size_t n;
	size_t nodes;	  /* real nodes compared */
	size_t gpu_nodes; /* of which with GPUs */
	size_t nodes_differing;
	size_t config_labels; /* real nodes labelled nvidia.com/device-plugin.config */
	/* What gpushare's stack says about the twins (failures, warnings), each "node 'X': ...". */
	struct gs_warnings notes;
};

/*
 * Node by node, what each imported real node shows (its nvidia.com labels,
 * nvidia.com resources in capacity and allocatable) against what gpushare's sync_plan
 * advertises for its twin under `o` (the twin after its merge patch).
 * Quantities compare by value, and a resource at 0 equals an absent one (the
 * scheduler sees no difference; kubelet keeps a resource whose plugin left
 * at 0). Labels in import_ignored_labels are not compared. Pools have no
 * real node and are not part of it; an anonymised import cannot be checked.
 * Fails only on an unusable ConfigMap.
 */
int import_check(const struct import *im, const struct import_check_opts *o,
		 struct import_check *out, struct gs_error *err) GS_WUR;
void import_check_release(struct import_check *c);

/* A label the check does not compare, and why. */
struct import_ignored {
	const char *label;
	const char *why;
};

extern const struct import_ignored import_ignored_labels[];
extern const size_t import_n_ignored_labels;

/* A label anonymising drops: a key, or every key under a prefix ending in '/' or '-'. */
struct import_anon_rule {
	const char *key;
	const char *why;
};

extern const struct import_anon_rule import_anon_rules[];
extern const size_t import_n_anon_rules;

#endif
