#ifndef GS_KUBESTATUS_H
#define GS_KUBESTATUS_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

/*
 * A failed request's answer as client-go reads it: the apiserver's
 * metav1.Status, or client-go's generic text when the body is no Status
 * (docs/design/kubeclient.md "Errors"). Pure: no I/O.
 */

/* A failed request's Status (metav1.Status). Strings are "" when absent, never NULL. */
struct kube_status {
	int code;	    /* HTTP status, 0 when no response arrived */
	char *reason;	    /* e.g. "NotFound", "AlreadyExists", "Forbidden", "Conflict" */
	char *message;	    /* verbatim, untruncated */
	json_t *details;    /* the `details` object or NULL; owned by the status */
	long retry_after_s; /* Retry-After header or details.retryAfterSeconds, else 0 */
};

/* An empty Status (code 0, "" texts): what a success or a transport failure leaves. */
void kube_status_init(struct kube_status *st);
/* Parse a response body into st (release with kube_status_release). Never fails. */
void kube_status_from_response(struct kube_status *st, int http_code, const char *method,
			       const char *body, size_t len);
/* A copy of src into dst (released first by the caller). */
void kube_status_copy(struct kube_status *dst, const struct kube_status *src);
void kube_status_release(struct kube_status *st);
/*
 * st is a 422 Invalid that names `field` among its causes. A PATCH that
 * carries metadata.uid as a precondition gets one for "metadata.uid" ("field
 * is immutable") when the object was deleted and re-created under the same
 * name: a PATCH has no uid precondition of its own, only PUT and DELETE do
 * (k8s.io/apiserver pkg/endpoints/handlers/patch.go, v0.34). NULL st: false.
 */
bool kube_status_invalid_field(const struct kube_status *st, const char *field);

/* Go's %q, close enough for a quoted server text or path (malloc'd). */
char *kube_go_quote(const char *s, size_t len);

#endif
