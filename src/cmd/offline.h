#ifndef GS_CMD_OFFLINE_H
#define GS_CMD_OFFLINE_H

/*
 * What every command that reasons about a fleet offline shares (plan,
 * explain, report, status; docs/guide/cli.md "Reading a fleet from files"): the
 * source flags -f/--filename and -R/--recursive, kubectl's; --configmap
 * NS/NAME, which names the device-plugin ConfigMap live and offline alike
 * (offline, the ConfigMap of that name among the objects read); and the
 * fleet those make: the snapshot, its ConfigMap, the nodes as gpushare
 * would advertise them, the pods already there and the pods to create.
 *
 *	struct fleet_sources src = {0};
 *	struct configmap_ref cm = CONFIGMAP_REF_INIT;
 *	struct option opts[] = { OPT_CONFIGMAP_REF(&cm), OPT_FLEET_SOURCES(&src), ... };
 *	...
 *	struct offline_fleet of;
 *	if (offline_fleet_load(&of, &src, &cm, "plan", &err) < 0) ...
 */

#include <jansson.h>
#include <stdbool.h>

#include "model/dpconfig_set.h"
#include "engine/explain_offline.h"
#include "fleet/fleet.h"
#include "cmd/parseopt.h"
#include "engine/plan.h"
#include "model/kubeversion.h"

/* The device-plugin ConfigMap's namespace and name (owned). */
struct configmap_ref {
	char *ns;
	char *name;
	bool given; /* set by --configmap, not the default */
};

/* gpu-share/device-plugin-configs unless --configmap says otherwise. */
void configmap_ref_init(struct configmap_ref *ref);
void configmap_ref_release(struct configmap_ref *ref);

/*
 * --configmap NS/NAME into ref. A value that names a file (one that exists,
 * or a name ending in .yaml, .yml or .json that is no NAMESPACE/NAME) is
 * refused with what to write instead (-f FILE): the flag names the object,
 * never a file, on every command.
 */
int configmap_ref_parse(struct configmap_ref *ref, const char *arg, struct gs_error *err) GS_WUR;
/* The same as an option callback (value: struct configmap_ref *). */
int parse_configmap_ref(const struct option *opt, const char *arg, struct gs_error *err);
/* -f PATH and its aliases: one more source (value: struct fleet_sources *). */
int parse_fleet_source(const struct option *opt, const char *arg, struct gs_error *err);

#define OPT_CONFIGMAP_REF(ref)                                                                     \
	OPT_CALLBACK(0, "configmap", (ref), "NS/NAME",                                             \
		     "device-plugin ConfigMap [gpu-share/device-plugin-configs];\n"                \
		     "with -f, the ConfigMap of that name among the files",                        \
		     parse_configmap_ref)

#define OPT_FLEET_SOURCES(src)                                                                     \
	OPT_GROUP("Offline (objects from files instead of a cluster, as kubectl's -f reads "       \
		  "them):"),                                                                       \
		OPT_CALLBACK('f', "filename", (src), "FILE|DIR|-",                                 \
			     "manifests or recorded objects (kubectl get -o yaml|json):\n"         \
			     "a file, a directory's .json/.yaml/.yml files, or\n"                  \
			     "'-' for standard input; repeatable",                                 \
			     parse_fleet_source),                                                  \
		OPT_FLAG('R', "recursive", &(src)->recursive,                                      \
			 "read the directories of -f and their subdirectories")

/*
 * The device-plugin ConfigMap cm names among the objects of f (*out, borrowed
 * from f; NULL when there is none) and its configs (*set, owned; NULL when
 * there is none). None there: when `note`, a note on stderr says that every
 * node gets the device plugin's defaults, naming the ConfigMaps that were
 * read. Fails on a ConfigMap that matches twice or whose configs the device
 * plugin's config-manager could not read.
 */
int offline_configmap(const struct fleet *f, const struct configmap_ref *cm, const char *cmd,
		      bool note, const json_t **out, struct dpconfig_set **set,
		      struct gs_error *err) GS_WUR;

/*
 * The error for a ConfigMap cm names that is not among the objects of f,
 * for commands that need one: "no ConfigMap NS/NAME among the files", with
 * the ConfigMaps that were read.
 */
void offline_configmap_missing(const struct fleet *f, const struct configmap_ref *cm,
			       struct gs_error *err);

/* The fleet an offline command reasons about (all owned). */
/*
 * --kubernetes-version and --feature-gates: the release whose scheduler
 * plan and explain model (default the newest) and the gates a cluster
 * sets apart from its defaults. Zeroed: the newest, its defaults.
 */
struct kube_target {
	const struct kubeversion *kv;
	const char *gates; /* "DRAExtendedResource=true", applied over kv's defaults */
};
int parse_kube_version(const struct option *opt, const char *arg, struct gs_error *err);
/* After the options: the gates the release cannot take are refused (a usage error). */
int kube_target_check(const struct kube_target *kt, struct gs_error *err) GS_WUR;
/* kt's release (the newest when none is named) and, into *gates, its gates with --feature-gates
 * applied; call after kube_target_check. */
const struct kubeversion *kube_target_gates(const struct kube_target *kt, struct kubegates *gates);
int parse_feature_gates(const struct option *opt, const char *arg, struct gs_error *err);

#define OPT_KUBE_TARGET(t)                                                                         \
	OPT_CALLBACK(0, "kubernetes-version", (t), "VERSION",                                      \
		     "the Kubernetes release whose scheduler and kubelet\n"                        \
		     "are modelled: v1.34.4, v1.35.4, v1.36.3 or v1.37.2\n"                        \
		     "(v1.36 and 1.36 name v1.36.3) [v1.37.2]",                                    \
		     parse_kube_version),                                                          \
		OPT_CALLBACK(0, "feature-gates", (t), "GATES",                                     \
			     "gates the cluster sets apart from its release's\n"                   \
			     "defaults: DRAExtendedResource=true|false,\n"                         \
			     "DRAConsumableCapacity=true|false",                                   \
			     parse_feature_gates)

struct offline_fleet {
	struct fleet f;
	const json_t *configmap;  /* the device-plugin ConfigMap, borrowed from f; NULL = none */
	struct dpconfig_set *set; /* its configs; NULL = none */
	/* The Nodes of f as gpushare would advertise them under the ConfigMap
	   (adv.nodes), and the pods already there (adv.pods, fleet_pod_is_there) */
	struct explain_fleet adv;
	json_t *batch;	/* the pods to create, workloads' included, in reading order (an array);
			   NULL when streamed */
	size_t n_batch; /* how many */
	bool streamed;	/* offline_fleet_stream: the pods are read again when asked for
			   (offline_each_pod); adv.pods and batch hold none */
	struct kube_target kube; /* set before loading (kept by it): the plan's release */
	struct plan_sched sched; /* set before loading (kept by it): how the plan's scheduler
				    samples and draws (zero: the default) */
};

/*
 * Read the sources, find the ConfigMap named by cm (none: every node gets
 * the device plugin's defaults, and a note on stderr says so, naming the
 * ConfigMaps that were read), advertise the nodes, and split the pods into
 * those already there and the batch. `cmd` names the command in the note.
 * On failure, err is filled; of is released either way by
 * offline_fleet_release.
 */
int offline_fleet_load(struct offline_fleet *of, const struct fleet_sources *src,
		       const struct configmap_ref *cm, const char *cmd,
		       struct gs_error *err) GS_WUR;
void offline_fleet_release(struct offline_fleet *of);

/*
 * The same, keeping only the fleet: the Pods are checked as they are read
 * (the same errors, in the same order) and let go, then read again one at
 * a time by offline_each_pod.
 */
int offline_fleet_stream(struct offline_fleet *of, const struct fleet_sources *src,
			 const struct configmap_ref *cm, const char *cmd,
			 struct gs_error *err) GS_WUR;

/*
 * fn for each pod already there (`there`) or each pod of the batch, in
 * reading order; the pod is borrowed until fn returns. Stops at fn's -1.
 */
int offline_each_pod(const struct offline_fleet *of, bool there,
		     int (*fn)(void *ctx, const json_t *pod, struct gs_error *err), void *ctx,
		     struct gs_error *err) GS_WUR;

/*
 * The plan's input on the fleet: its advertised nodes, quotas and
 * configs, the release of of->kube and the DRA objects read
 * (DeviceClasses, ResourceSlices, ResourceClaims). *gates is filled and
 * must outlive *in.
 */
void offline_plan_input(const struct offline_fleet *of, struct kubegates *gates,
			struct plan_input *in);

/* plan_new on the fleet with the pods already there, read one at a time. */
int offline_plan_begin(const struct offline_fleet *of, struct plan **out,
		       struct gs_error *err) GS_WUR;

/*
 * The pods present after the first `upto` pods of the batch were placed
 * as `r` (plan_run on of->batch; NULL = none placed) says: those already
 * there, then each bound pod of the batch with spec.nodeName set to its
 * node and each pending one unbound (it counts against quota and holds no
 * node); refused and failed pods are not there. A new PodList.
 */
json_t *offline_pods_after(const struct offline_fleet *of, const struct plan_result *r,
			   size_t upto);

#endif
