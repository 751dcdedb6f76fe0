#ifndef GS_KUBERETRY_H
#define GS_KUBERETRY_H

/*
 * The one retry policy of every apiserver request, blocking or not
 * (docs/design/kubeclient.md "Retries"). Pure: no I/O, no clock.
 *
 *   failure                              GET, PUT, PATCH, DELETE   POST
 *   429 Too Many Requests                retried                   retried
 *   5xx                                  retried                   not (it may be created)
 *   unreachable: refused, no route,      retried only with retry_unreachable (a daemon);
 *   a name that does not resolve         a one-shot command fails at once, as kubectl
 *   other failure before anything sent   retried                   retried
 *   lost or timed out after it was sent  retried                   not
 *   TLS failure, other 4xx, bad URL,     not retried; 409 is the caller's to re-read
 *   response too large
 *
 * Delay before attempt n+1: base * 2^(n-1), capped at max_ms, its upper half
 * random (jitter). A Retry-After (the header, or a 429 Status's
 * details.retryAfterSeconds) replaces it. No retry may end past the
 * deadline: the request then fails at once with what it has.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "kube/kubestatus.h"

/*
 * The limits, one set for every request. 10 attempts from 250 ms doubling
 * to 4 s span 11-22 s of outage; the short cap means a request waits at
 * most 4 s once the apiserver is back (a restart takes seconds).
 */
#define KUBE_RETRY_ATTEMPTS 10u
#define KUBE_RETRY_BASE_MS 250L
#define KUBE_RETRY_MAX_MS 4000L
#define KUBE_RETRY_DEADLINE_MS 60000L /* all attempts and waits of one request */
/*
 * A watch is the controller's view of the cluster: it is tried again within
 * 2 s (one request per watch), so what changed during an outage is seen
 * seconds after the apiserver answers again. client-go's reflector waits up
 * to 30 s (0.8 s doubling, k8s.io/client-go tools/cache/reflector.go).
 */
#define KUBE_WATCH_BACKOFF_MAX_MS 2000L

struct kube_retry_policy {
	unsigned max_attempts;	/* [KUBE_RETRY_ATTEMPTS] */
	long base_ms;		/* [KUBE_RETRY_BASE_MS] */
	long max_ms;		/* [KUBE_RETRY_MAX_MS] */
	long deadline_ms;	/* [KUBE_RETRY_DEADLINE_MS] */
	bool retry_unreachable; /* a daemon that must outlive an apiserver restart [false] */
};

/* Zero fields take the defaults in brackets. */
void kube_retry_policy_defaults(struct kube_retry_policy *p);

/* How an attempt ended. */
enum kube_attempt_end {
	KUBE_END_ANSWERED,    /* an HTTP status came back (code) */
	KUBE_END_TRANSIENT,   /* no answer; a retry may cure it (reset, timeout, refused...) */
	KUBE_END_UNREACHABLE, /* the server or proxy cannot be reached at all */
	KUBE_END_FATAL,	      /* no retry changes it: TLS, a bad URL, a response too large */
};

/*
 * The decision after attempt `attempt` (1 = the first): the delay in ms
 * before the next, or -1 not to retry. code is the HTTP status for
 * KUBE_END_ANSWERED; sent_nothing when no byte of the request went out;
 * retry_after_s from kube_retry_after (0 = none); left_ms the time before
 * the request's deadline. *rng is the jitter's state (kube_rng_seed).
 */
long kube_retry_delay(const struct kube_retry_policy *p, const char *method,
		      enum kube_attempt_end end, int code, bool sent_nothing, long retry_after_s,
		      unsigned attempt, long long left_ms, uint64_t *rng);

/*
 * A watch's wait after its `failures`-th failure in a row (0 = the first):
 * kube_retry_delay's doubling from the base, capped at the lower of max_ms
 * and KUBE_WATCH_BACKOFF_MAX_MS, or a 429/5xx's Retry-After. A watch never
 * gives up.
 */
long kube_watch_delay(const struct kube_retry_policy *p, unsigned failures, int code,
		      long retry_after_s, uint64_t *rng);

/*
 * One response header line (as libcurl hands it, CRLF included): the
 * seconds of a Retry-After header (delay-seconds, capped at a day; the
 * apiserver never sends the HTTP-date form, which reads as 0), or -1 for
 * any other header.
 */
long kube_retry_after_header(const char *line, size_t n);
/* What to wait before retrying an answer: the header's seconds, else a 429 Status's. */
long kube_retry_after(long header_s, int code, const struct kube_status *st);

/* A jitter state from the clock and `salt` (never 0); the generator (xorshift64*). */
uint64_t kube_rng_seed(long long now_ms, const void *salt);
uint64_t kube_rng_next(uint64_t *s);

#endif
