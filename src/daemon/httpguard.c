#include "daemon/httpguard.h"

#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>

#include "base/wrapper.h"
#include "base/banned.h"

/* One open connection, from MHD_CONNECTION_NOTIFY_STARTED to _CLOSED. */
struct guarded {
	struct guarded *prev, *next;
	int fd;
	long long start_ms; /* the current request's start */
	bool headers_in;    /* the access handler has seen the current request */
	bool cut;	    /* shut down by the guard: not again */
};

struct httpguard {
	pthread_mutex_t mu;
	struct httpguard_limits l;
	struct guarded *head;
	struct httpguard_stats st;
	/* the sweeping thread, when started */
	pthread_t thread;
	pthread_cond_t wake;
	bool thread_on, stopping;
	/* libmicrohttpd's messages, one a second */
	void (*log)(void *arg, const char *line);
	void *log_arg;
	long long log_next_ms;
	unsigned long log_dropped;
};

static long long mono_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static long long now_ms(const struct httpguard *g)
{
	return g->l.clock_ms ? g->l.clock_ms() : mono_ms();
}

struct httpguard *httpguard_new(const struct httpguard_limits *l,
				void (*log)(void *arg, const char *line), void *log_arg)
{
	struct httpguard *g = gs_xcalloc(1, sizeof(*g));
	pthread_condattr_t ca;

	g->l = *l;
	g->log = log;
	g->log_arg = log_arg;
	pthread_mutex_init(&g->mu, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&g->wake, &ca);
	pthread_condattr_destroy(&ca);
	return g;
}

void httpguard_free(struct httpguard *g)
{
	struct guarded *e, *next;

	if (!g)
		return;
	if (g->thread_on) {
		pthread_mutex_lock(&g->mu);
		g->stopping = true;
		pthread_cond_signal(&g->wake);
		pthread_mutex_unlock(&g->mu);
		pthread_join(g->thread, NULL);
	}
	/* Stopped daemons said CLOSED for every connection; anything left is theirs no more. */
	for (e = g->head; e; e = next) {
		next = e->next;
		free(e);
	}
	pthread_cond_destroy(&g->wake);
	pthread_mutex_destroy(&g->mu);
	free(g);
}

static void on_connection(void *cls, struct MHD_Connection *c, void **socket_context,
			  enum MHD_ConnectionNotificationCode code)
{
	struct httpguard *g = cls;
	struct guarded *e;

	if (code == MHD_CONNECTION_NOTIFY_STARTED) {
		const union MHD_ConnectionInfo *ci =
			MHD_get_connection_info(c, MHD_CONNECTION_INFO_CONNECTION_FD);
		e = gs_xcalloc(1, sizeof(*e));
		e->fd = ci ? ci->connect_fd : -1;
		pthread_mutex_lock(&g->mu);
		e->start_ms = now_ms(g);
		e->next = g->head;
		if (g->head)
			g->head->prev = e;
		g->head = e;
		g->st.conns++;
		pthread_mutex_unlock(&g->mu);
		*socket_context = e;
		return;
	}
	e = *socket_context;
	if (!e)
		return;
	pthread_mutex_lock(&g->mu);
	if (e->prev)
		e->prev->next = e->next;
	else
		g->head = e->next;
	if (e->next)
		e->next->prev = e->prev;
	g->st.conns--;
	pthread_mutex_unlock(&g->mu);
	free(e);
	*socket_context = NULL;
}

static void on_mhd_message(void *cls, const char *fmt, va_list ap)
{
	struct httpguard *g = cls;
	char msg[512], line[640];
	unsigned long dropped;
	size_t len;

	if (!g->log)
		return;
	pthread_mutex_lock(&g->mu);
	long long now = now_ms(g);
	if (now < g->log_next_ms) {
		g->log_dropped++;
		pthread_mutex_unlock(&g->mu);
		return;
	}
	g->log_next_ms = now + 1000;
	dropped = g->log_dropped;
	g->log_dropped = 0;
	pthread_mutex_unlock(&g->mu);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	len = strlen(msg);
	while (len && (msg[len - 1] == '\n' || msg[len - 1] == '\r'))
		msg[--len] = '\0';
	if (dropped)
		snprintf(line, sizeof(line), "libmicrohttpd: %s (%lu more messages not shown)", msg,
			 dropped);
	else
		snprintf(line, sizeof(line), "libmicrohttpd: %s", msg);
	g->log(g->log_arg, line);
}

size_t httpguard_mhd_options(struct httpguard *g, struct MHD_OptionItem *opts)
{
	size_t n = 0;

	opts[n++] =
		(struct MHD_OptionItem){MHD_OPTION_EXTERNAL_LOGGER, (intptr_t)on_mhd_message, g};
	opts[n++] = (struct MHD_OptionItem){MHD_OPTION_CONNECTION_LIMIT, g->l.max_conns, NULL};
	opts[n++] =
		(struct MHD_OptionItem){MHD_OPTION_PER_IP_CONNECTION_LIMIT, g->l.max_per_ip, NULL};
	opts[n++] = (struct MHD_OptionItem){MHD_OPTION_CONNECTION_TIMEOUT, g->l.idle_s, NULL};
	opts[n++] =
		(struct MHD_OptionItem){MHD_OPTION_NOTIFY_CONNECTION, (intptr_t)on_connection, g};
	return n;
}

static struct guarded *guarded_of(struct MHD_Connection *c)
{
	const union MHD_ConnectionInfo *ci =
		MHD_get_connection_info(c, MHD_CONNECTION_INFO_SOCKET_CONTEXT);

	return ci ? ci->socket_context : NULL;
}

void httpguard_headers_in(struct httpguard *g, struct MHD_Connection *c)
{
	struct guarded *e = guarded_of(c);

	if (!e)
		return;
	pthread_mutex_lock(&g->mu);
	e->headers_in = true;
	pthread_mutex_unlock(&g->mu);
}

void httpguard_request_done(struct httpguard *g, struct MHD_Connection *c)
{
	struct guarded *e = guarded_of(c);

	if (!e)
		return;
	pthread_mutex_lock(&g->mu);
	e->headers_in = false;
	e->start_ms = now_ms(g);
	pthread_mutex_unlock(&g->mu);
}

int httpguard_body_reserve(struct httpguard *g, size_t n)
{
	size_t limit = g->l.body_budget;
	int rc = -1;

	if (n > g->l.small_body)
		limit = limit > g->l.small_reserve ? limit - g->l.small_reserve : 0;
	pthread_mutex_lock(&g->mu);
	if (n <= limit && g->st.body_bytes <= limit - n) {
		g->st.body_bytes += n;
		rc = 0;
	} else {
		g->st.body_refused++;
	}
	pthread_mutex_unlock(&g->mu);
	return rc;
}

void httpguard_body_release(struct httpguard *g, size_t n)
{
	pthread_mutex_lock(&g->mu);
	g->st.body_bytes = n < g->st.body_bytes ? g->st.body_bytes - n : 0;
	pthread_mutex_unlock(&g->mu);
}

long httpguard_sweep(struct httpguard *g, long max_ms)
{
	long long now = now_ms(g), next = max_ms;
	struct guarded *e;

	pthread_mutex_lock(&g->mu);
	bool crowded = g->l.crowded_at && g->st.conns >= g->l.crowded_at;
	for (e = g->head; e; e = e->next) {
		long span = e->headers_in ? g->l.request_ms
			    : crowded	  ? g->l.crowded_header_ms
					  : g->l.header_ms;
		long long left = e->start_ms + span - now;
		if (e->cut || e->fd < 0)
			continue;
		if (left > 0) {
			if (left < next)
				next = left;
			continue;
		}
		/* libmicrohttpd reads end-of-stream and closes it in its own thread. */
		shutdown(e->fd, SHUT_RDWR);
		e->cut = true;
		if (e->headers_in)
			g->st.cut_request++;
		else if (crowded && now - e->start_ms < g->l.header_ms)
			g->st.cut_crowded++;
		else
			g->st.cut_headers++;
	}
	pthread_mutex_unlock(&g->mu);
	return (long)next;
}

static void *sweeper(void *arg)
{
	struct httpguard *g = arg;

	pthread_mutex_lock(&g->mu);
	while (!g->stopping) {
		struct timespec ts;
		pthread_mutex_unlock(&g->mu);
		long wait = httpguard_sweep(g, 100);
		pthread_mutex_lock(&g->mu);
		if (g->stopping)
			break;
		if (wait < 10)
			wait = 10;
		clock_gettime(CLOCK_MONOTONIC, &ts);
		ts.tv_nsec += (wait % 1000) * 1000000L;
		ts.tv_sec += wait / 1000 + ts.tv_nsec / 1000000000L;
		ts.tv_nsec %= 1000000000L;
		pthread_cond_timedwait(&g->wake, &g->mu, &ts);
	}
	pthread_mutex_unlock(&g->mu);
	return NULL;
}

int httpguard_start_thread(struct httpguard *g, struct gs_error *err)
{
	int rc = pthread_create(&g->thread, NULL, sweeper, g);

	if (rc != 0) {
		gs_error_set(err, "cannot start the connection sweeper: %s", strerror(rc));
		return -1;
	}
	g->thread_on = true;
	return 0;
}

void httpguard_stats(struct httpguard *g, struct httpguard_stats *out)
{
	pthread_mutex_lock(&g->mu);
	*out = g->st;
	pthread_mutex_unlock(&g->mu);
}

void httpguard_metrics(struct httpguard *g, const char *name, struct strbuf *out)
{
	struct httpguard_stats s;

	httpguard_stats(g, &s);
	strbuf_addf(out,
		    "# HELP gpushare_http_connections Connections open.\n"
		    "# TYPE gpushare_http_connections gauge\n"
		    "gpushare_http_connections{server=\"%s\"} %zu\n",
		    name, s.conns);
	strbuf_addf(out,
		    "# HELP gpushare_http_connections_cut_total Connections closed by the server: "
		    "headers or request not in by their deadline (crowded: the shorter one of a "
		    "crowded server).\n"
		    "# TYPE gpushare_http_connections_cut_total counter\n"
		    "gpushare_http_connections_cut_total{server=\"%s\",deadline=\"headers\"} %lu\n"
		    "gpushare_http_connections_cut_total{server=\"%s\",deadline=\"crowded\"} %lu\n"
		    "gpushare_http_connections_cut_total{server=\"%s\",deadline=\"request\"} %lu\n",
		    name, s.cut_headers, name, s.cut_crowded, name, s.cut_request);
	if (!g->l.body_budget)
		return;
	strbuf_addf(out,
		    "# HELP gpushare_http_body_bytes Bytes reserved for request bodies in memory.\n"
		    "# TYPE gpushare_http_body_bytes gauge\n"
		    "gpushare_http_body_bytes{server=\"%s\"} %zu\n"
		    "# HELP gpushare_http_body_refused_total Requests answered 503: their body did "
		    "not fit in the memory budget then.\n"
		    "# TYPE gpushare_http_body_refused_total counter\n"
		    "gpushare_http_body_refused_total{server=\"%s\"} %lu\n",
		    name, s.body_bytes, name, s.body_refused);
}
