#ifndef GS_FLEET_H
#define GS_FLEET_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#include "base/error.h"
#include "yaml/ydoc.h"

/*
 * One snapshot of a fleet: the Kubernetes objects every command reasons
 * about, sorted by kind, read from manifest files, directories and standard
 * input as `kubectl apply -f` reads them (read_files.c), and the pods their
 * workloads would make (workloads.c). Commands turn it into the inputs of
 * the engine (plan, explain, report, status); the engine never sees this
 * type.
 *
 * Ownership: the fleet owns every object (the trees of the files it read,
 * with their source positions, and the pods it made). The arrays below are
 * the fleet's; their elements are borrowed by whoever reads them and live
 * until fleet_release. Objects are in reading order: files in the order
 * given, a directory's files in name order, documents in file order, a
 * List's items in place of the List.
 */

struct fleet {
	json_t *objects; /* every object of the kinds below, in reading order */
	json_t *all;	 /* every object read, kinds no command reads included, in
			    reading order (for commands that pass objects on: dra translate) */
	json_t *configmaps;
	json_t *nodes;
	json_t *pods;	   /* the Pods as read */
	json_t *workloads; /* Deployment, ReplicaSet, ReplicationController, StatefulSet,
			      DaemonSet, Job, CronJob */
	json_t *quotas;	   /* ResourceQuota */
	json_t *limitranges;
	json_t *slices;		 /* ResourceSlice */
	json_t *claims;		 /* ResourceClaim */
	json_t *claim_templates; /* ResourceClaimTemplate */
	json_t *device_classes;	 /* DeviceClass */
	json_t *events;		 /* Event (the kubelet's and controllers' words, DRA) */
	size_t n_ignored;	 /* objects of kinds no command reads (Namespace, Service, ...) */
	size_t n_files;		 /* files read */

	/*
	 * Pods streamed (stream_pods set before fleet_read): top-level Pod
	 * documents are checked as they are read and not kept; the pods and
	 * workloads are listed in `entries`, in reading order, and
	 * fleet_each_pod reads the streamed ones again. f->pods holds only the
	 * Pods of Lists then.
	 */
	bool stream_pods;
	struct fleet_entry *entries;
	size_t n_entries;
	size_t n_streamed; /* Pods streamed (not in f->pods) */

	/* private */
	size_t cap_entries;
	struct fleet_file *files; /* the files streamed Pods are read again from */
	size_t n_kept_files;
	json_t *pod_seen; /* "namespace/name" -> [hash, hash, "file:line:col"] (stream_pods) */
	struct ydoc_stream **streams;
	size_t n_streams, cap_streams;
	json_t *seen; /* "Kind/namespace/name" -> the object, for duplicates */
	bool stdin_used;
};

/*
 * A Pod or a workload, in reading order (stream_pods). obj is the object
 * (a workload, or a Pod of a List) or NULL for a Pod streamed: document
 * `doc` of file `file`, at `pos`, named `id` ("namespace/name").
 */
struct fleet_entry {
	const json_t *obj;
	bool workload;
	bool there; /* a Pod already there (fleet_pod_is_there) */
	size_t file;
	size_t doc;
	struct ydoc_pos pos;
	char *id;
};

struct fleet_file {
	char *name;
	char *buf;
	size_t len;
};

/* Where the objects come from: -f FILE|DIR|- (repeatable) and -R. */
struct fleet_sources {
	const char **paths; /* borrowed (argv) */
	size_t n, cap;
	bool recursive;
};

/* Limits on what one read may walk. */
#define FLEET_MAX_FILES 10000
#define FLEET_MAX_DEPTH 64

void fleet_init(struct fleet *f);
void fleet_release(struct fleet *f);

void fleet_sources_add(struct fleet_sources *src, const char *path);
void fleet_sources_release(struct fleet_sources *src);

/*
 * Read every path of src into f, as kubectl's -f does: a file whatever its
 * name; a directory's .json, .yaml and .yml files in name order (other
 * files are skipped), its subdirectories only with src->recursive, where
 * they come in name order among the files (a depth-first walk); "-" is
 * standard input, once. Every document must be a Kubernetes object (a
 * mapping with a kind); empty documents are skipped; a List (kind ending in
 * List, with items) stands for its items. Fails at file:line:col on YAML or
 * JSON that does not parse, a document that is no object, an object of a
 * kind the fleet reads without metadata.name, or one read twice with
 * different contents (same kind, namespace and name; the same object twice,
 * as a pod recorded alone and in its PodList, counts once); on a path that
 * does not exist; and when nothing at all was read ("no objects"), naming
 * the paths.
 */
int fleet_read(struct fleet *f, const struct fleet_sources *src, struct gs_error *err) GS_WUR;

/* One path of fleet_read's (a file, a directory, or "-"). */
int fleet_read_path(struct fleet *f, const char *path, bool recursive, struct gs_error *err) GS_WUR;

/*
 * Add the objects of a loaded stream (taken: the fleet frees it). For
 * callers that loaded YAML themselves; fleet_read uses it for each file.
 */
int fleet_add_stream(struct fleet *f, struct ydoc_stream *s, struct gs_error *err) GS_WUR;

/*
 * Every entry of a fleet read with stream_pods, in reading order: fn gets
 * each with its object (a workload, a Pod of a List, or a streamed Pod
 * read again from its file, freed when fn returns). fn returns 0 or -1
 * with err filled, which stops the walk.
 */
typedef int (*fleet_entry_fn)(void *ctx, const struct fleet_entry *e, const json_t *pod,
			      struct gs_error *err);
int fleet_each_entry(const struct fleet *f, fleet_entry_fn fn, void *ctx,
		     struct gs_error *err) GS_WUR;

/*
 * One file's text `buf` (named `name`) read document by document
 * (stream_pods): 1 when the fleet keeps buf (its Pods are read again
 * from it), 0 when the caller frees it, -1 on error (err at file:line:col).
 */
int fleet_read_streamed(struct fleet *f, const char *name, char *buf, size_t len,
			struct gs_error *err) GS_WUR;

/* The stream obj (or any node inside it) was read from; NULL for objects the fleet made. */
const struct ydoc_stream *fleet_stream_of(const struct fleet *f, const json_t *obj);

/*
 * A Pod already there: recorded from a cluster (status.phase, which the
 * apiserver gives every pod, or metadata.uid; a Pending one counts against
 * quota and holds no node). Every other Pod is to be created, one with
 * spec.nodeName too: `kubectl apply` of it skips the scheduler, and the
 * kubelet of that node admits or fails it.
 */
bool fleet_pod_is_there(const json_t *pod);

/* The object's namespace as the apiserver gives it: metadata.namespace, else "default". */
const char *fleet_namespace_of(const json_t *obj);

/*
 * The device-plugin ConfigMap: the one named `name` in namespace `ns` (an
 * object without metadata.namespace is in "default", as kubectl applies
 * it). *out is NULL when there is none; fails when two match.
 */
int fleet_configmap(const struct fleet *f, const char *ns, const char *name, const json_t **out,
		    struct gs_error *err) GS_WUR;

/*
 * "namespace/name" of every ConfigMap of f named `name` in another
 * namespace, or of every ConfigMap when none has that name, comma-separated
 * (a new string, "" when there is none): what to say when fleet_configmap
 * found nothing.
 */
char *fleet_configmap_others(const struct fleet *f, const char *name);

/* The same as ydoc_error_at_key, at obj in whichever stream of f holds it. */
void fleet_error_at(const struct fleet *f, const json_t *obj, const char *key, struct gs_error *err,
		    const char *fmt, ...) __attribute__((format(printf, 5, 6)));

#endif
