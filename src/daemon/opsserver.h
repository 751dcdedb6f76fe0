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
 * a timer due.
 */

#include <stdbool.h>

#include "base/error.h"
#include "base/strbuf.h"

struct opsserver_opts {
	bool (*ready)(void *arg);
	void (*metrics)(void *arg, struct strbuf *out);
	void *arg;
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
