#ifndef GS_KUBELOOP_H
#define GS_KUBELOOP_H

/*
 * One event loop for many apiserver requests at once (docs/guide/controller.md):
 * libcurl's multi interface under one thread, a bounded number of requests
 * in flight, and list+watch streams that resume from their
 * resourceVersion. Connection, proxy, TLS, credentials and secret masking
 * are those of a kube_client (kubeclient.h), which the loop borrows: its
 * handles are copies of the client's (kube_client_easy).
 *
 * Nothing here prints: what happens is told through callbacks, and one
 * line per retry or watch restart through kube_loop_opts.log.
 *
 * Retries (kube_retry_delay, also used by watches):
 *   429                         retried, every verb, after Retry-After when sent
 *   5xx                         retried except POST (it may have been created)
 *   connection failed before
 *   anything was sent           retried, every verb (refused and unresolvable
 *                               too: the loop's owners outlive apiserver restarts)
 *   lost after it was sent      retried except POST
 *   TLS failure, other 4xx      not retried; 409 is the caller's to re-read
 * Delay: base * 2^(attempt-1) capped at max, the upper half random; a
 * Retry-After (header or a 429 Status's details.retryAfterSeconds) replaces it.
 */

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/error.h"
#include "kube/kubeclient.h"

struct kube_loop;

struct kube_loop_opts {
	unsigned max_in_flight;	 /* short requests at once [16]; watches are not counted */
	unsigned max_attempts;	 /* of one short request [10] */
	long backoff_base_ms;	 /* [250] */
	long backoff_max_ms;	 /* [4000]; a watch's own backoff stops at 2000 */
	long request_timeout_ms; /* one attempt of a short request [30000] */
	unsigned list_page_size; /* `limit` of a watch's list pages [250] */
	size_t max_body_bytes;	 /* one response, one list page, one watch event [32 MiB] */
	long watch_timeout_s;	 /* server-side timeoutSeconds, randomised up to 2x [300] */
	void (*log)(void *arg, const char *line); /* retries, restarts; NULL = silent */
	void *log_arg;
};

/* The outcome of one request, valid only during the callback. */
struct kube_result {
	int code;	  /* HTTP status; 0 when no response arrived */
	const char *body; /* NUL-terminated response body ("" when none) */
	size_t len;
	const struct kube_status *st; /* the failure's Status when code is not 2xx, else NULL */
	const char *error;	      /* the failure as a message (secrets masked); NULL on 2xx */
	unsigned attempts;
};

typedef void (*kube_done_fn)(void *arg, const struct kube_result *r);

int kube_loop_new(struct kube_loop **out, struct kube_client *c, const struct kube_loop_opts *o,
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

/*
 * The retry decision: the delay in ms before attempt `attempt`+1, or -1
 * not to retry. code is the HTTP status (0 = none); sent_nothing when a
 * transport failure happened before any byte of the request went out;
 * transient when that failure is one a retry may cure (not TLS, not a bad
 * URL); retry_after_s from the answer (0 = none). *rng is the jitter's state.
 */
long kube_retry_delay(const char *method, int code, bool transient, bool sent_nothing,
		      long retry_after_s, unsigned attempt, unsigned max_attempts, long base_ms,
		      long max_ms, uint64_t *rng);

/*
 * A watch's wait after its `failures`-th failure in a row (0 = the first):
 * kube_retry_delay's doubling from base_ms, capped at the lower of max_ms
 * and 2 s, or a 429/5xx's Retry-After.
 */
long kube_watch_delay(unsigned failures, int code, long retry_after_s, long base_ms, long max_ms,
		      uint64_t *rng);

#endif
