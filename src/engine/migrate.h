#ifndef GS_MIGRATE_H
#define GS_MIGRATE_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#include "base/error.h"
#include "model/dpconfig_set.h"
#include "model/kubeversion.h"
#include "yaml/ydoc.h"

/*
 * A rehearsal of moving a fleet from NVIDIA's device plugin to its DRA
 * driver, pool by pool (docs/guide/migrate.md): what each pool publishes
 * on the DRA path, whether each workload keeps working on the mixed fleet
 * that results, and where each ResourceQuota charges the devices after the
 * move, as the Kubernetes release `kube` does it. Pure: objects in, a
 * result out, no I/O; the objects may come from files or from a cluster.
 *
 *	struct migrate_input in = {.nodes = ..., .objects = ..., .pool = "Tesla T4"};
 *	struct migrate_result *r;
 *	if (migrate_run(&in, &r, &err) < 0) ...
 *	json_t *doc = migrate_result_json(r);
 *	migrate_result_free(r);
 */

enum migrate_verdict {
	MIGRATE_UNCHANGED,   /* keeps working as written */
	MIGRATE_NEEDS_CLAIM, /* keeps working once the claims printed are written */
	MIGRATE_BREAKS,	     /* no pool serves what it names */
};

const char *migrate_verdict_name(enum migrate_verdict v);

/* One object to judge, and the stream it was read from (NULL: none, e.g. live). */
struct migrate_object {
	const json_t *obj;
	const struct ydoc_stream *stream;
};

struct migrate_input {
	/* The Nodes (an array) as read or as the cluster holds them, hardware declared. */
	const json_t *nodes;
	const json_t *configmap;	/* the device-plugin ConfigMap; NULL = none */
	const struct dpconfig_set *set; /* its configs; NULL = none */
	const char *cm_file;		/* where the ConfigMap was read (for the claims' notes) */
	/* Pods and workloads (Deployment, ReplicaSet, ReplicationController,
	   StatefulSet, DaemonSet, Job, CronJob) in reading order; other kinds skipped. */
	const struct migrate_object *objects;
	size_t n_objects;
	const json_t *quotas;		/* ResourceQuotas (an array); NULL = none */
	const char *pool;		/* the one pool that moves; NULL = every pool */
	const struct kubeversion *kube; /* the release judged; NULL = kubeversion_newest() */
	const struct kubegates *gates;	/* its gates; NULL = the release's defaults */
};

/* One pool after the move. */
struct migrate_pool {
	char *name;
	bool dra; /* on the DRA path after the move */
	size_t n_nodes;
	/* Per node: {"name", "gpus", "mig": {profile: n}} on the DRA path,
	   {"name", "resources": {name: count}} on the device plugin's; "refused": why,
	   when the stack would publish nothing for it. */
	json_t *nodes;
};

struct migrate_workload {
	char *kind;
	char *ns;
	char *name;
	char *source; /* "file:line:col", "" when unknown */
	long pods;    /* pods it makes (a Pod: 1) */
	enum migrate_verdict verdict;
	/* [{"resource", "count", "verdict", "route", "pools", "why"}], route one of
	   device-plugin, extended-resource, either, claim, none */
	json_t *resources;
	json_t *objects;   /* the ResourceClaimTemplates and ResourceClaims to write */
	json_t *rewritten; /* the object naming its claims; NULL when it needs none */
	json_t *claims;	   /* names of the claims its pods use (written here or before) */
	json_t *notes;	   /* what the claims need of the DRA driver (its alpha gates) */
};

/* One GPU-related hard limit of a ResourceQuota. */
struct migrate_quota {
	char *ns;
	char *name;
	char *resource;
	long long hard;
	long long before;      /* charged by the workloads on the device plugin */
	long long after;       /* charged after the move, whatever node the pods land on */
	long long after_maybe; /* charged besides, when pods that fit both stacks land on DRA */
	char *how;	       /* what charges it after the move, and the source that says so */
};

struct migrate_result {
	char *kubernetes_version;
	bool extended_resource; /* DRAExtendedResource on */
	char *gate; /* "GA, locked on", "beta, on by default", "alpha, off by default" */
	struct migrate_pool *pools;
	size_t n_pools;
	json_t *device_classes; /* as the apiserver stores them */
	struct migrate_workload *workloads;
	size_t n_workloads;
	struct migrate_quota *quotas;
	size_t n_quotas;
	/* Per namespace: devices charged twice or not at all; refused nodes. */
	struct gs_warnings notes;
};

/*
 * Rehearse the move. Fails on DRAExtendedResource off where it is locked on (1.37), a pool that is
 * not in the fleet (err names the pools), an unusable ConfigMap, or quantities that do not parse.
 */
int migrate_run(const struct migrate_input *in, struct migrate_result **out,
		struct gs_error *err) GS_WUR;
/* {"kubernetesVersion", "draExtendedResource", "pools", "deviceClasses", "workloads",
   "quotas", "notes"}; a new reference. */
json_t *migrate_result_json(const struct migrate_result *r);
/* Whether some workload breaks. */
bool migrate_result_breaks(const struct migrate_result *r);
void migrate_result_free(struct migrate_result *r);

#endif
