#ifndef GS_LABKIT_H
#define GS_LABKIT_H

#include <stdint.h>

#include <jansson.h>

#include "base/error.h"
#include "kube/kubeclient.h"

struct ydoc_stream;

/* How a lab runs: where, how patiently, and who hears of it. */
struct lab_opts {
	const char *dir; /* the working directory holding k8s/ and bin/; NULL = "." */
	long wait_ms;	 /* longest wait for one condition; 0 = 120000 */
	/* Called with one line per thing done (no trailing newline). */
	void (*progress)(void *arg, const char *line);
	void *progress_arg;
};

/*
 * What the lab and its DRA form share: where the working directory is, how
 * long one condition may take, the progress lines, and the steps every
 * scenario takes (apply a manifest, wait for a condition, write a file under
 * out/, see a quota refuse an object). Borrowed: the client and the options
 * live as long as the run.
 */
struct labkit {
	struct kube_client *c;
	const struct lab_opts *o;
	const char *dir; /* o->dir, or "." */
	long wait_ms;	 /* o->wait_ms, or 120000 */
};

void labkit_init(struct labkit *kit, struct kube_client *c, const struct lab_opts *o);

/* One progress line (no trailing newline); nothing when no one listens. */
void labkit_say(const struct labkit *kit, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* <dir>/<rel>, for the caller to free. */
char *labkit_path(const struct labkit *kit, const char *rel);

/* The documents of <dir>/<rel>; the caller frees *s. */
int labkit_load(const struct labkit *kit, const char *rel, struct ydoc_stream **s,
		struct gs_error *err) GS_WUR;

/* Create or bring in line one object; err names it when the apiserver refuses. */
int labkit_apply_one(const struct labkit *kit, const json_t *obj, struct gs_error *err) GS_WUR;

/* Apply every object of a manifest file, in order; err names the file and the object. */
int labkit_apply_file(const struct labkit *kit, const char *rel, struct gs_error *err) GS_WUR;

/* kube_wait at the lab's pace: every 250 ms, up to wait_ms. */
int labkit_wait(const struct labkit *kit, const char *path, kube_wait_fn pred, void *arg,
		json_t **out, struct gs_error *err) GS_WUR;

/* Write <dir>/<rel> whole (a temporary file renamed), creating its folders. */
int labkit_write_out(const struct labkit *kit, const char *rel, const char *text,
		     struct gs_error *err) GS_WUR;

/* ---- conditions for labkit_wait ---- */

/* The object exists. */
int labkit_exists(const json_t *obj, void *arg, struct gs_error *why);

/* A quota's status.used of one resource has reached what was admitted. */
struct labkit_quota_want {
	const char *key; /* e.g. "requests.nvidia.com/gpu" */
	int64_t want;
};
int labkit_quota_used_reaches(const json_t *q, void *arg, struct gs_error *why);

/*
 * Create the first object of the manifest <rel>, which the ResourceQuota
 * <quota_name> must refuse. 0 with *denied the apiserver's message (the
 * caller frees), said as "refused at <when>", and what `kubectl apply -f
 * <rel>` prints for it written to <out_rel>; then *used the quota's
 * "used/hard" of <key>, read from <quota_path>. -1 when the object was
 * admitted (it is deleted again) or refused for another reason.
 */
int labkit_quota_refuses(const struct labkit *kit, const char *rel, const char *out_rel,
			 const char *when, const char *quota_path, const char *quota_name,
			 const char *key, char **denied, char **used, struct gs_error *err) GS_WUR;

#endif
