#ifndef GS_KUBELOOP_H
#define GS_KUBELOOP_H

/*
 * One event loop for many apiserver requests at once (docs/guide/controller.md):
 * libcurl's multi interface under one thread, a bounded number of requests
 * in flight, and list+watch streams that resume from their
 * resourceVersion. Connection, proxy, TLS, credentials, secret masking and
 * the retry policy are those of a kube_conn (kubeconn.h), which the loop
 * borrows. This is the one transport: the blocking client (kubeclient.h) is
 * a one-request run of a loop, as libcurl's easy interface runs on its multi
 * interface.
 *
 * Nothing here prints: what happens is told through callbacks, one line per
 * retry or watch restart through kube_loop_opts.log, and one line per
 * attempt and retry through the connection's trace.
 *
 * Retries follow kube/kuberetry.h: 429 always, 5xx except POST, failures
 * before anything was sent always, after it except POST, an unreachable
 * server only for a daemon (retry_unreachable); never TLS failures or other
 * 4xx (409 is the caller's to re-read); within the request's deadline.
 */

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/error.h"
#include "kube/kubeconn.h"
#include "kube/kuberetry.h"
#include "kube/kubestatus.h"

struct kube_loop;

/* Zero fields take the defaults in brackets; the retry limits are the connection's. */
struct kube_loop_opts {
	/*
	 * Short requests at once (watches are not counted): a limit that starts
	 * at min_in_flight [16] and grows to max_in_flight [64] while answers
	 * come back as fast, shrinking back when they slow (kube/kubelimit.h).
	 * min_in_flight above max_in_flight is lowered to it.
	 */
	unsigned max_in_flight;
	unsigned min_in_flight;
	unsigned list_page_size; /* `limit` of a watch's list pages [250] */
	size_t max_body_bytes;	 /* one response, one list page, one watch event [32 MiB] */
	long watch_timeout_s;	 /* server-side timeoutSeconds, randomised up to 2x [300] */
	void (*log)(void *arg, const char *line); /* retries, restarts; NULL = silent */
	void *log_arg;
};

/* The outcome of one request, valid only during the callback. */
struct kube_result {
	int code;	  /* HTTP status; 0 when no usable answer arrived */
	const char *body; /* NUL-terminated response body ("" when none) */
	size_t len;
	const struct kube_status *st; /* the apiserver's failure Status (code not 2xx), else NULL */
	const char *error;	      /* the failure as a message (secrets masked); NULL on 2xx */
	unsigned attempts;
};

typedef void (*kube_done_fn)(void *arg, const struct kube_result *r);

/* c is borrowed and must outlive the loop; o may be NULL. */
int kube_loop_new(struct kube_loop **out, struct kube_conn *c, const struct kube_loop_opts *o,
		  struct gs_error *err) GS_WUR;
/* Aborts whatever is still in flight without calling its callbacks. */
void kube_loop_free(struct kube_loop *l);

/*
 * Queue a request (method GET, POST, PATCH, PUT, DELETE; path as in
 * kube_request; body copied, may be NULL; ctype NULL = application/json).
 * done is called exactly once, from kube_loop_step, after the last attempt.
 */
int kube_loop_request(struct kube_loop *l, const char *method, const char *path, const char *ctype,
		      const char *body, size_t len, kube_done_fn done, void *arg) GS_WUR;
/*
 * The same with the request's deadline (monotonic ms, kube_loop_now; 0 = the
 * policy's deadline_ms from now): no attempt or wait goes past it.
 */
int kube_loop_request_by(struct kube_loop *l, const char *method, const char *path,
			 const char *ctype, const char *body, size_t len, long long deadline,
			 kube_done_fn done, void *arg) GS_WUR;
/* The monotonic clock deadlines are in, in ms. */
long long kube_loop_now(void);

/*
 * LIST a collection (path as in kube_request, its own query kept) in pages
 * of the connection's list_page_size, following `continue` tokens, into one
 * object shaped like the first page with every page's items in `items` and
 * no metadata.continue or remainingItemCount. When a continue token expires
 * (410 Expired) the list starts again once without paging, as client-go's
 * pager does. Selectors may be NULL; deadline as for kube_loop_request_by
 * covers every page. done is called exactly once, from kube_loop_step: with
 * the list (the callee's to free) and r NULL, or with NULL and the failure:
 * the failed page's result, or code 0 and a message for an answer that is
 * no list or for more than max_list_items items.
 */
typedef void (*kube_list_fn)(void *arg, json_t *list, const struct kube_result *r);
int kube_loop_list(struct kube_loop *l, const char *path, const char *label_selector,
		   const char *field_selector, long long deadline, kube_list_fn done,
		   void *arg) GS_WUR;

/* What a watch tells its owner. */
enum kube_event {
	KUBE_EV_LISTED, /* an object of a (re)list */
	KUBE_EV_ADDED,
	KUBE_EV_MODIFIED,
	KUBE_EV_DELETED,
};

struct kube_watch_ops {
	/* A list begins: relisted objects follow as KUBE_EV_LISTED. */
	void (*list_begin)(void *arg);
	/* obj is borrowed for the call. */
	void (*event)(void *arg, enum kube_event ev, json_t *obj);
	/* The list ended: what was not listed since list_begin is gone. */
	void (*list_end)(void *arg);
	/*
	 * Whether the apiserver answers the watch, also while nothing in the
	 * collection changes: open true once a list page arrives or the watch
	 * stream opens (its 200), open false when the watch failed and waits to
	 * try again (refused, 5xx, a stream cut). A stream the server ends after
	 * timeoutSeconds is re-opened without a call. NULL = not told.
	 */
	void (*state)(void *arg, bool open);
};

struct kube_watch;

/*
 * List then watch a collection (path such as "/api/v1/nodes"), paging the
 * list and resuming the watch from the last resourceVersion seen (bookmarks
 * included). A watch that ends is resumed; 410 Gone (an expired
 * resourceVersion or continue token) relists; 429/5xx/connection failures
 * back off. Selectors may be NULL. The watch belongs to the loop.
 */
int kube_loop_watch(struct kube_loop *l, const char *path, const char *label_selector,
		    const char *field_selector, const struct kube_watch_ops *ops, void *arg,
		    struct kube_watch **out) GS_WUR;

/* Stop every watch (no more callbacks from them); short requests go on. */
void kube_loop_stop_watches(struct kube_loop *l);

/* A timer: fn(arg) once, from kube_loop_step, after ms. */
void kube_loop_after(struct kube_loop *l, long ms, void (*fn)(void *arg), void *arg);

/*
 * Run the loop once: wait up to timeout_ms (less when a timer or retry is
 * due) for the network or for one of `fds` to become readable, then do the
 * transfers and call what completed. readable[i] (may be NULL) tells which
 * fds were readable. Returns 0, or -1 with err when libcurl's multi handle
 * fails.
 */
int kube_loop_step(struct kube_loop *l, const int *fds, size_t nfds, bool *readable,
		   long timeout_ms, struct gs_error *err) GS_WUR;

/* Short requests queued, waiting to retry or in flight. */
size_t kube_loop_pending(const struct kube_loop *l);
/* Short requests that may run at once now (kube_loop_opts.max_in_flight). */
unsigned kube_loop_limit(const struct kube_loop *l);

struct kube_loop_stats {
	uint64_t requests; /* attempts started */
	uint64_t retries;
	uint64_t watch_restarts;    /* a watch re-opened for any reason */
	uint64_t relists;	    /* lists after the first (410, stream errors) */
	uint64_t errors_by_code[6]; /* final failures: [0] no response, [k] kxx */
	uint64_t errors_409, errors_410, errors_422, errors_429;
};
const struct kube_loop_stats *kube_loop_stats(const struct kube_loop *l);

/* ---- pure parts (unit-tested on recorded data) -------------------------------------------- */

/*
 * A watch stream's bytes into events: one JSON object per line
 * ({"type":..., "object":...}). Lines longer than max are an error.
 */
struct kube_stream {
	char *p;
	size_t len, cap, max;
};
/* Called per complete line: return non-zero to stop feeding. */
typedef int (*kube_line_fn)(void *arg, const char *line, size_t len);
/* 0, the callback's non-zero value, or -1 when a line passes max (the buffer is dropped). */
int kube_stream_feed(struct kube_stream *s, const char *data, size_t n, kube_line_fn fn, void *arg);
void kube_stream_release(struct kube_stream *s);

/* One watch event line, decoded. */
struct kube_watch_event {
	enum {
		KUBE_WE_ADDED,
		KUBE_WE_MODIFIED,
		KUBE_WE_DELETED,
		KUBE_WE_BOOKMARK,
		KUBE_WE_ERROR, /* object is a Status: code in `code` (410 = relist) */
	} type;
	json_t *object;		      /* owned by the event */
	const char *resource_version; /* the object's, into object; NULL if none */
	int code;		      /* for KUBE_WE_ERROR */
};
/* -1 with err for a line that is no watch event. */
int kube_watch_event_parse(struct kube_watch_event *ev, const char *line, size_t len,
			   struct gs_error *err) GS_WUR;
void kube_watch_event_release(struct kube_watch_event *ev);

#endif
