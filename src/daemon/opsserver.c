#include "daemon/opsserver.h"

#include <arpa/inet.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "daemon/httpguard.h"
#include "base/banned.h"

/*
 * The limits (docs/guide/controller.md, "Operations endpoints"): probes and
 * scrapes send a GET of a few hundred bytes and read an answer of a few
 * kilobytes. The kubelet gives a probe 1 s (timeoutSeconds) by default, so
 * headers not in after 2 s belong to no probe; the kubelet, Prometheus and a
 * port-forward need a few connections each, 8 per address; 32 in all.
 */
static const struct httpguard_limits ops_limits = {
	.max_conns = 32,
	.max_per_ip = 8,
	.idle_s = 10,
	.header_ms = 2000,
	.request_ms = 10000,
	.crowded_at = 24,
	.crowded_header_ms = 500,
};

struct opsserver {
	struct MHD_Daemon *d;
	struct httpguard *guard;
	struct opsserver_opts o;
	int fd;
	int port;
};

static enum MHD_Result reply(struct MHD_Connection *conn, unsigned code, const char *ctype,
			     char *text, size_t len)
{
	struct MHD_Response *resp =
		MHD_create_response_from_buffer(len, text, MHD_RESPMEM_MUST_FREE);
	enum MHD_Result r;

	if (!resp) {
		free(text);
		return MHD_NO;
	}
	MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE, ctype);
	r = MHD_queue_response(conn, code, resp);
	MHD_destroy_response(resp);
	return r;
}

static enum MHD_Result text(struct MHD_Connection *conn, unsigned code, const char *msg)
{
	char *s = gs_xasprintf("%s\n", msg);

	return reply(conn, code, "text/plain; charset=utf-8", s, strlen(s));
}

static enum MHD_Result handle(void *cls, struct MHD_Connection *conn, const char *url,
			      const char *method, const char *version, const char *upload_data,
			      size_t *upload_data_size, void **con_cls)
{
	struct opsserver *s = cls;

	(void)version;
	(void)upload_data;
	if (!*con_cls) {
		*con_cls = s; /* seen: its headers are in */
		httpguard_headers_in(s->guard, conn);
	}
	if (*upload_data_size) {
		*upload_data_size = 0; /* bodies are ignored */
		return MHD_YES;
	}
	if (strcmp(method, "GET") != 0 && strcmp(method, "HEAD") != 0)
		return text(conn, MHD_HTTP_METHOD_NOT_ALLOWED, "GET only");
	if (!strcmp(url, "/healthz") || !strcmp(url, "/livez"))
		return text(conn, MHD_HTTP_OK, "ok");
	if (!strcmp(url, "/readyz"))
		return s->o.ready && s->o.ready(s->o.arg) ? text(conn, MHD_HTTP_OK, "ok")
							  : text(conn, MHD_HTTP_SERVICE_UNAVAILABLE,
								 "not ready: the ConfigMap, nodes "
								 "and pods are not all listed yet");
	if (!strcmp(url, "/metrics")) {
		struct strbuf sb = STRBUF_INIT;
		size_t len;
		char *body;
		if (s->o.metrics)
			s->o.metrics(s->o.arg, &sb);
		httpguard_metrics(s->guard, s->o.name ? s->o.name : "ops", &sb);
		body = strbuf_detach(&sb, &len);
		return reply(conn, MHD_HTTP_OK, "text/plain; version=0.0.4; charset=utf-8", body,
			     len);
	}
	return text(conn, MHD_HTTP_NOT_FOUND, "not found");
}

static void completed(void *cls, struct MHD_Connection *conn, void **con_cls,
		      enum MHD_RequestTerminationCode toe)
{
	struct opsserver *s = cls;

	(void)toe;
	*con_cls = NULL;
	httpguard_request_done(s->guard, conn);
}

static int parse_listen(const char *listen, const char *flag, struct sockaddr_in *sa,
			struct gs_error *err)
{
	const char *colon = strrchr(listen, ':');
	char host[64];
	char *end;
	long port;

	memset(sa, 0, sizeof(*sa));
	sa->sin_family = AF_INET;
	if (!colon || (size_t)(colon - listen) >= sizeof(host))
		goto bad;
	memcpy(host, listen, (size_t)(colon - listen));
	host[colon - listen] = '\0';
	port = strtol(colon + 1, &end, 10);
	if (!colon[1] || *end || port < 0 || port > 65535)
		goto bad;
	sa->sin_port = htons((uint16_t)port);
	if (!host[0] || !strcmp(host, "0.0.0.0"))
		sa->sin_addr.s_addr = htonl(INADDR_ANY);
	else if (!strcmp(host, "localhost"))
		sa->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	else if (inet_pton(AF_INET, host, &sa->sin_addr) != 1)
		goto bad;
	return 0;
bad:
	gs_error_set(err, "option '%s' takes HOST:PORT with an IPv4 address, got '%s'", flag,
		     listen);
	return -1;
}

int opsserver_start(struct opsserver **out, const char *listen, const struct opsserver_opts *o,
		    struct gs_error *err)
{
	struct opsserver *s;
	struct sockaddr_in sa;
	const union MHD_DaemonInfo *info;

	*out = NULL;
	if (parse_listen(listen, o->flag ? o->flag : "--listen", &sa, err) < 0)
		return -1;
	s = gs_xcalloc(1, sizeof(*s));
	s->o = *o;
	s->guard = httpguard_new(&ops_limits, o->log, o->arg);
	s->fd = -1;
	struct MHD_OptionItem opts[HTTPGUARD_MHD_OPTIONS + 3];
	size_t n = httpguard_mhd_options(s->guard, opts);
	opts[n++] = (struct MHD_OptionItem){MHD_OPTION_SOCK_ADDR, 0, (void *)&sa};
	opts[n++] = (struct MHD_OptionItem){MHD_OPTION_NOTIFY_COMPLETED, (intptr_t)completed, s};
	opts[n++] = (struct MHD_OptionItem){MHD_OPTION_END, 0, NULL};
	/* Without a thread of its own, the caller's loop polls the epoll descriptor. */
	s->d = MHD_start_daemon(o->own_thread ? MHD_USE_AUTO_INTERNAL_THREAD | MHD_USE_ERROR_LOG
					      : MHD_USE_EPOLL | MHD_USE_ERROR_LOG,
				0, NULL, NULL, handle, s, MHD_OPTION_ARRAY, opts, MHD_OPTION_END);
	if (!s->d) {
		gs_error_set(err, "cannot serve on %s (address in use?)", listen);
		goto fail;
	}
	info = MHD_get_daemon_info(s->d, MHD_DAEMON_INFO_BIND_PORT);
	s->port = info ? info->port : 0;
	if (o->own_thread) {
		if (httpguard_start_thread(s->guard, err) < 0)
			goto fail;
	} else {
		info = MHD_get_daemon_info(s->d, MHD_DAEMON_INFO_EPOLL_FD);
		s->fd = info ? info->epoll_fd : -1;
		if (s->fd < 0) {
			gs_error_set(err, "libmicrohttpd has no epoll descriptor");
			goto fail;
		}
	}
	*out = s;
	return 0;
fail:
	if (s->d)
		MHD_stop_daemon(s->d);
	httpguard_free(s->guard);
	free(s);
	return -1;
}

int opsserver_fd(const struct opsserver *s)
{
	return s->fd;
}

int opsserver_port(const struct opsserver *s)
{
	return s->port;
}

long opsserver_timeout_ms(const struct opsserver *s, long max_ms)
{
	MHD_UNSIGNED_LONG_LONG t;

	/* Until the next deadline a connection has: it is closed then. */
	max_ms = httpguard_sweep(s->guard, max_ms);
	if (MHD_get_timeout(s->d, &t) == MHD_YES && (long long)t < max_ms)
		return (long)t;
	return max_ms;
}

void opsserver_run(struct opsserver *s)
{
	httpguard_sweep(s->guard, 0);
	MHD_run(s->d);
}

void opsserver_stop(struct opsserver *s)
{
	if (!s)
		return;
	MHD_stop_daemon(s->d);
	httpguard_free(s->guard);
	free(s);
}
