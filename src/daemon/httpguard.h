#ifndef GS_HTTPGUARD_H
#define GS_HTTPGUARD_H

/*
 * What keeps a libmicrohttpd server answering its good clients while others
 * send slowly or hold large uploads (docs/guide/webhook.md, "Limits"):
 *
 *   - deadlines counted from a request's start (the connection's accept,
 *     or on a kept-alive connection the end of the previous answer), not
 *     from the last byte read: the request line and headers within
 *     header_ms, the whole request within request_ms. libmicrohttpd's own
 *     MHD_OPTION_CONNECTION_TIMEOUT only counts idle time, which a client
 *     sending one byte a second resets forever;
 *   - when the server is crowded (crowded_at connections or more), a
 *     connection still waiting for its headers gets crowded_header_ms: a
 *     good client sends them in milliseconds, so slots go back to it;
 *   - connections at once (max_conns) and from one client address
 *     (max_per_ip), which libmicrohttpd enforces;
 *   - one memory budget for the request bodies buffered across all
 *     connections (body_budget), of which the last small_reserve bytes
 *     serve only bodies of small_body bytes or less: large uploads cannot
 *     starve the small reviews every pod makes.
 *
 * A late connection is closed with shutdown(2) on its socket, from
 * whichever thread sweeps: libmicrohttpd sees end-of-stream and closes it
 * itself, in its own thread, as if the client had gone. This is safe from
 * another thread because the guard forgets a connection in
 * MHD_CONNECTION_NOTIFY_CLOSED, which libmicrohttpd calls before it closes
 * the descriptor, and both happen under the guard's mutex: a descriptor the
 * guard still knows is open and is that connection's.
 */

#include <microhttpd.h>
#include <stdbool.h>
#include <stddef.h>

#include "base/error.h"
#include "base/strbuf.h"

struct httpguard_limits {
	unsigned max_conns;  /* connections at once (MHD_OPTION_CONNECTION_LIMIT) */
	unsigned max_per_ip; /* from one client address (MHD_OPTION_PER_IP_CONNECTION_LIMIT) */
	unsigned idle_s;     /* no byte either way for this long (MHD_OPTION_CONNECTION_TIMEOUT) */
	long header_ms;	     /* request line and headers in, from the request's start */
	long request_ms;     /* the whole request in and answered, from its start */
	unsigned crowded_at; /* connections from which a server is crowded */
	long crowded_header_ms;	     /* header_ms then */
	size_t body_budget;	     /* bytes of request bodies held at once, all connections */
	size_t small_body;	     /* a body this size or less may use the reserve below */
	size_t small_reserve;	     /* the last bytes of the budget, kept for small bodies */
	long long (*clock_ms)(void); /* monotonic milliseconds; NULL = CLOCK_MONOTONIC (tests) */
};

struct httpguard_stats {
	size_t conns;		    /* open now */
	size_t body_bytes;	    /* reserved for bodies now */
	unsigned long cut_headers;  /* closed: headers not in by their deadline */
	unsigned long cut_crowded;  /* closed: the same, by the crowded deadline */
	unsigned long cut_request;  /* closed: the request not done by its deadline */
	unsigned long body_refused; /* bodies refused for the budget */
};

struct httpguard;

/*
 * A guard of these limits, for one server (any number of its daemons).
 * libmicrohttpd's messages go to log (NULL = dropped), prefixed
 * "libmicrohttpd: ", one a second at most: under attack it has one for
 * each connection cut, and the log is no place for thousands a second.
 * log is called from libmicrohttpd's threads.
 */
struct httpguard *httpguard_new(const struct httpguard_limits *l,
				void (*log)(void *arg, const char *line), void *log_arg);
/* Stops its sweeping thread; the daemons using it must be stopped first. NULL is fine. */
void httpguard_free(struct httpguard *g);

/*
 * The MHD options that hook the guard in; `opts` has room for
 * HTTPGUARD_MHD_OPTIONS items. Put them first: libmicrohttpd warns when its
 * logger option is not the first it reads.
 */
#define HTTPGUARD_MHD_OPTIONS 5
size_t httpguard_mhd_options(struct httpguard *g, struct MHD_OptionItem *opts);

/* From the access handler's first call for a request: its headers are in. */
void httpguard_headers_in(struct httpguard *g, struct MHD_Connection *c);
/* From MHD_OPTION_NOTIFY_COMPLETED: the request is over; a kept-alive connection's next one starts.
 */
void httpguard_request_done(struct httpguard *g, struct MHD_Connection *c);

/*
 * Reserve `n` bytes of the body budget before buffering them: 0, or -1 when
 * they do not fit now (answer 503 with Retry-After; the client may try again).
 */
int httpguard_body_reserve(struct httpguard *g, size_t n) GS_WUR;
void httpguard_body_release(struct httpguard *g, size_t n);

/*
 * Close the connections past their deadlines. Returns the milliseconds until
 * the next deadline (at most max_ms). Any thread; for a server driven from
 * the caller's loop (MHD_run), call it each turn.
 */
long httpguard_sweep(struct httpguard *g, long max_ms);
/* A thread that sweeps every 100 ms, for servers in libmicrohttpd's own thread. */
int httpguard_start_thread(struct httpguard *g, struct gs_error *err) GS_WUR;

void httpguard_stats(struct httpguard *g, struct httpguard_stats *out);
/* The stats in Prometheus text, labelled server="NAME". */
void httpguard_metrics(struct httpguard *g, const char *name, struct strbuf *out);

#endif
