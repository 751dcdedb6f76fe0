#ifndef GS_KUBECLIENT_H
#define GS_KUBECLIENT_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#include "base/error.h"
#include "kube/kubeconfig.h"
#include "kube/kubeconn.h"
#include "kube/kubestatus.h"

/*
 * The blocking Kubernetes API client: JSON in and out (jansson), one call
 * at a time, each a one-request run of an event loop of its own
 * (kube/kubeloop.h) over the client's connection (kube/kubeconn.h: TLS,
 * credentials, proxy, the retry policy), as libcurl's easy interface runs
 * on its multi interface. Connections are kept alive between calls. The
 * contract (which failures are retried, what is never printed) is in
 * docs/design/kubeclient.md. Not thread-safe: one client per thread.
 *
 * `path` is the API path with its query, e.g. "/api/v1/namespaces/team-a/pods"
 * or "/apis/apps/v1/deployments?labelSelector=a%3Db"; it is appended to the
 * server URL (which may carry a path prefix).
 *
 * Every request returns 0 on success, or:
 *   KUBE_E_STATUS  the apiserver answered with a failure status; err->msg
 *                  is the Status `message` byte for byte (or client-go's
 *                  generic text when the body is no Status), and
 *                  kube_last_status() has code, reason and details;
 *   -1             anything else (connection, TLS, timeout, bad response,
 *                  bad arguments); kube_last_status()->code is 0.
 *
 * The proxy, if any, is decided once in kube_client_new as client-go
 * decides it (kube/proxy.h).
 */
enum { KUBE_E_STATUS = -2 };

struct kube_client;

/*
 * Connect-free setup from cfg (which may be freed afterwards). opts may be
 * NULL. Fails only for an unusable config (bad server URL, token file
 * unreadable, a proxy that is no URL, a credential that a proxy would carry
 * in clear text to an http:// server).
 */
int kube_client_new(struct kube_client **out, const struct kube_config *cfg,
		    const struct kube_client_opts *opts, struct gs_error *err) GS_WUR;
void kube_client_free(struct kube_client *c);
/*
 * What commands call: kube_config_load(opts) then kube_client_new(copts),
 * the configuration freed in between. copts may be NULL.
 */
int kube_client_open(struct kube_client **out, const struct kube_config_opts *opts,
		     const struct kube_client_opts *copts, struct gs_error *err) GS_WUR;

/* The Status of the last failed call (code 0 after success or a transport failure). */
const struct kube_status *kube_last_status(const struct kube_client *c);
/* The namespace of the configuration the client was made from. */
const char *kube_client_namespace(const struct kube_client *c);
/* The client's connection, for an event loop of the caller's (kube_loop_new). */
struct kube_conn *kube_client_conn(struct kube_client *c);

/* *out (may be NULL to discard) receives the response object, caller frees. */
int kube_get(struct kube_client *c, const char *path, json_t **out, struct gs_error *err) GS_WUR;
int kube_create(struct kube_client *c, const char *path, const json_t *obj, json_t **out,
		struct gs_error *err) GS_WUR;
int kube_put(struct kube_client *c, const char *path, const json_t *obj, json_t **out,
	     struct gs_error *err) GS_WUR;

enum kube_patch_type {
	KUBE_PATCH_MERGE,     /* application/merge-patch+json (RFC 7386) */
	KUBE_PATCH_STRATEGIC, /* application/strategic-merge-patch+json (built-in kinds only) */
	KUBE_PATCH_JSON,      /* application/json-patch+json (RFC 6902; patch is an array) */
};
/* For the status subresource, patch ".../nodes/<name>/status". */
int kube_patch(struct kube_client *c, const char *path, enum kube_patch_type type,
	       const json_t *patch, json_t **out, struct gs_error *err) GS_WUR;
/* body: DeleteOptions or NULL. A 200 `Status` of success is success. */
int kube_delete(struct kube_client *c, const char *path, const json_t *body, json_t **out,
		struct gs_error *err) GS_WUR;

struct kube_list_opts {
	const char *label_selector; /* NULL = none; escaped by the client */
	const char *field_selector;
};
/*
 * LIST a collection, following `continue` tokens, into one object shaped
 * like the first page with every page's items in `items` and no
 * `metadata.continue`. When a continue token expires (410 Expired) the list
 * restarts once without paging. lo may be NULL.
 */
int kube_list(struct kube_client *c, const char *path, const struct kube_list_opts *lo,
	      json_t **out, struct gs_error *err) GS_WUR;

/*
 * Any verb, raw bytes. content_type NULL = "application/json". On success
 * *body (NUL-terminated, caller frees, may be NULL to discard) holds the
 * response body and *len its length.
 */
int kube_request(struct kube_client *c, const char *method, const char *path,
		 const char *content_type, const char *req_body, size_t req_len, char **body,
		 size_t *len, struct gs_error *err) GS_WUR;

/*
 * Condition for kube_wait: obj is the object, or NULL when it does not
 * exist (404). Return 1 when satisfied, 0 to keep waiting (optionally
 * filling `why` with what is still missing, used in the timeout message),
 * negative to give up (with `why` filled).
 */
typedef int (*kube_wait_fn)(const json_t *obj, void *arg, struct gs_error *why);
/*
 * GET path every interval_ms until pred holds or timeout_ms passes. On
 * success *out (may be NULL) receives the last object (NULL if it did not
 * exist). Timeout message: `timed out after <n>s waiting for <path>: <why>`.
 * Errors other than 404 end the wait with that error. The last poll may
 * run past timeout_ms by up to one request (at most a second or the
 * request timeout).
 */
int kube_wait(struct kube_client *c, const char *path, kube_wait_fn pred, void *arg,
	      long timeout_ms, long interval_ms, json_t **out, struct gs_error *err) GS_WUR;

#endif
