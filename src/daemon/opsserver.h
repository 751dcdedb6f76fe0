#ifndef GS_OPSSERVER_H
#define GS_OPSSERVER_H

/*
 * The controller's operations endpoints over plain HTTP (libmicrohttpd):
 *   GET /healthz   200 "ok" while the process runs its loop
 *   GET /readyz    200 "ok" once ready() holds, else 503 "not ready: ..."
 *   GET /metrics   Prometheus text exposition (version 0.0.4) from metrics()
 * Anything else is 404; a method other than GET/HEAD is 405.
 *
 * It runs inside the caller's event loop, no thread: opsserver_fd() is one
 * descriptor (libmicrohttpd's epoll set) to poll for reading with the
 * others, opsserver_run() serves what is ready without blocking, and
 * opsserver_timeout_ms() shortens the caller's wait when libmicrohttpd has
 * a timer due or a connection a deadline. With own_thread it runs in a
 * thread of its own instead (libmicrohttpd's): opsserver_fd() is -1, and
 * ready() and metrics() are called from that thread.
 *
 * Its connections are bounded (daemon/httpguard.h): 32 at once, 8 from one
 * client address, the request's headers within 2 s of its start (0.5 s
 * when 24 are open), the whole request within 10 s; a client sending one
 * byte at a time holds a slot for 2 s, not for ever.
 */

#include <stdbool.h>

#include "base/error.h"
#include "base/strbuf.h"

struct opsserver_opts {
	bool (*ready)(void *arg);
	void (*metrics)(void *arg, struct strbuf *out);
	void *arg;
	bool own_thread;  /* serve from a thread of its own, not the caller's loop */
	const char *name; /* server="NAME" in its connection metrics; NULL = "ops" */
	const char *flag; /* the option named in a bad HOST:PORT's error; NULL = "--listen" */
	/* libmicrohttpd's messages, one a second at most (NULL = dropped); from its thread */
	void (*log)(void *arg, const char *line);
};

struct opsserver;

/* listen: "HOST:PORT" (IPv4 address or "localhost"; PORT 0 picks one, see opsserver_port). */
int opsserver_start(struct opsserver **out, const char *listen, const struct opsserver_opts *o,
		    struct gs_error *err) GS_WUR;
int opsserver_fd(const struct opsserver *s);
int opsserver_port(const struct opsserver *s);
long opsserver_timeout_ms(const struct opsserver *s, long max_ms);
void opsserver_run(struct opsserver *s);
void opsserver_stop(struct opsserver *s);

#endif
