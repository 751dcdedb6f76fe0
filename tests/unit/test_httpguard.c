#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "daemon/httpguard.h"

/*
 * The guard on a real libmicrohttpd daemon driven from this thread (as the
 * controller drives its ops server), with a clock the test moves: a client
 * that has not sent its headers by the deadline is closed, one that has is
 * given the request's deadline, a kept-alive connection starts again after
 * each answer, a crowded server cuts earlier; the body budget.
 */

static long long fake_now;

static long long fake_clock(void)
{
	return fake_now;
}

static const struct httpguard_limits limits = {
	.max_conns = 8,
	.max_per_ip = 8,
	.idle_s = 60,
	.header_ms = 2000,
	.request_ms = 10000,
	.crowded_at = 4,
	.crowded_header_ms = 500,
	.body_budget = 1000,
	.small_body = 100,
	.small_reserve = 300,
	.clock_ms = fake_clock,
};

struct server {
	struct MHD_Daemon *d;
	struct httpguard *g;
	int epoll_fd, port;
};

static enum MHD_Result handle(void *cls, struct MHD_Connection *conn, const char *url,
			      const char *method, const char *version, const char *upload_data,
			      size_t *upload_data_size, void **con_cls)
{
	struct server *s = cls;
	static const char ok[] = "ok\n";

	(void)url;
	(void)method;
	(void)version;
	(void)upload_data;
	if (!*con_cls) {
		*con_cls = s;
		httpguard_headers_in(s->g, conn);
		return MHD_YES;
	}
	if (*upload_data_size) {
		*upload_data_size = 0;
		return MHD_YES;
	}
	struct MHD_Response *r =
		MHD_create_response_from_buffer(3, (void *)ok, MHD_RESPMEM_PERSISTENT);
	enum MHD_Result res = MHD_queue_response(conn, 200, r);
	MHD_destroy_response(r);
	return res;
}

static void completed(void *cls, struct MHD_Connection *conn, void **con_cls,
		      enum MHD_RequestTerminationCode toe)
{
	struct server *s = cls;

	(void)toe;
	*con_cls = NULL;
	httpguard_request_done(s->g, conn);
}

static void start(struct server *s)
{
	struct MHD_OptionItem opts[HTTPGUARD_MHD_OPTIONS + 2];
	const union MHD_DaemonInfo *info;
	size_t n;

	s->g = httpguard_new(&limits, NULL, NULL);
	n = httpguard_mhd_options(s->g, opts);
	opts[n++] = (struct MHD_OptionItem){MHD_OPTION_NOTIFY_COMPLETED, (intptr_t)completed, s};
	opts[n] = (struct MHD_OptionItem){MHD_OPTION_END, 0, NULL};
	s->d = MHD_start_daemon(MHD_USE_EPOLL, 0, NULL, NULL, handle, s, MHD_OPTION_ARRAY, opts,
				MHD_OPTION_END);
	assert_non_null(s->d);
	info = MHD_get_daemon_info(s->d, MHD_DAEMON_INFO_EPOLL_FD);
	s->epoll_fd = info->epoll_fd;
	info = MHD_get_daemon_info(s->d, MHD_DAEMON_INFO_BIND_PORT);
	s->port = info->port;
}

static void stop(struct server *s)
{
	MHD_stop_daemon(s->d);
	httpguard_free(s->g);
}

static int dial(const struct server *s, const char *what)
{
	struct sockaddr_in sa = {0};
	int fd = socket(AF_INET, SOCK_STREAM, 0);

	assert_true(fd >= 0);
	sa.sin_family = AF_INET;
	sa.sin_port = htons((uint16_t)s->port);
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	assert_int_equal(connect(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	if (*what)
		assert_int_equal(write(fd, what, strlen(what)), (ssize_t)strlen(what));
	fcntl(fd, F_SETFL, O_NONBLOCK);
	return fd;
}

/* Let the daemon take in what is pending (new connections, bytes), sweeping at each turn. */
static void turn(struct server *s, int times)
{
	for (int i = 0; i < times; i++) {
		struct pollfd p = {s->epoll_fd, POLLIN, 0};
		poll(&p, 1, 5);
		httpguard_sweep(s->g, 1000);
		MHD_run(s->d);
	}
}

/* Read what the server sent; true when it closed the connection. */
static bool closed(struct server *s, int fd, char *buf, size_t size)
{
	size_t got = 0;

	buf[0] = '\0';
	for (int i = 0; i < 40; i++) {
		turn(s, 1);
		ssize_t n = read(fd, buf + got, size - 1 - got);
		if (n > 0) {
			got += (size_t)n;
			buf[got] = '\0';
		} else if (n == 0) {
			return true;
		}
	}
	return false;
}

static void header_deadline(void **state)
{
	struct server s;
	struct httpguard_stats st;
	char buf[1024];

	(void)state;
	fake_now = 1000;
	start(&s);
	int slow = dial(&s, "GET / HTTP/1.1\r\nHost: x\r\n"); /* headers never end */
	turn(&s, 5);
	fake_now = 2000;
	int done = dial(&s, "GET / HTTP/1.1\r\nHost: x\r\n\r\n"); /* answered at 2000 */
	assert_false(closed(&s, done, buf, sizeof(buf)));
	assert_non_null(strstr(buf, " 200 "));
	fake_now = 2999;
	assert_false(closed(&s, slow, buf, sizeof(buf)));
	fake_now = 3000; /* 2 s since its start: the slow one goes */
	assert_true(closed(&s, slow, buf, sizeof(buf)));
	/* The answered one, kept alive, waits for its next request from its answer on. */
	assert_false(closed(&s, done, buf, sizeof(buf)));
	fake_now = 4000;
	assert_true(closed(&s, done, buf, sizeof(buf)));
	httpguard_stats(s.g, &st);
	assert_int_equal(st.cut_headers, 2);
	assert_int_equal(st.cut_request, 0);
	close(slow);
	close(done);
	turn(&s, 5);
	httpguard_stats(s.g, &st);
	assert_int_equal(st.conns, 0);
	stop(&s);
}

static void request_deadline(void **state)
{
	struct server s;
	struct httpguard_stats st;
	char buf[1024];

	(void)state;
	fake_now = 5000;
	start(&s);
	/* Headers in, the body trickles: the request's 10 s, not the headers' 2 s. */
	int fd = dial(&s, "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\nab");
	turn(&s, 5);
	fake_now += 9999;
	assert_false(closed(&s, fd, buf, sizeof(buf)));
	fake_now += 1;
	assert_true(closed(&s, fd, buf, sizeof(buf)));
	httpguard_stats(s.g, &st);
	assert_int_equal(st.cut_request, 1);
	assert_int_equal(st.cut_headers, 0);
	close(fd);
	stop(&s);
}

static void crowded(void **state)
{
	struct server s;
	struct httpguard_stats st;
	int fds[4];
	char buf[1024];

	(void)state;
	fake_now = 0;
	start(&s);
	for (int i = 0; i < 3; i++)
		fds[i] = dial(&s, "G");
	turn(&s, 5);
	fake_now = 500; /* 3 open: not crowded, they have 2 s */
	assert_false(closed(&s, fds[0], buf, sizeof(buf)));
	fds[3] = dial(&s, "G");
	turn(&s, 5);
	/* 4 open: crowded, and those waiting 0.5 s for their headers go; the new one stays. */
	for (int i = 0; i < 3; i++)
		assert_true(closed(&s, fds[i], buf, sizeof(buf)));
	assert_false(closed(&s, fds[3], buf, sizeof(buf)));
	httpguard_stats(s.g, &st);
	assert_int_equal(st.cut_crowded, 3);
	for (int i = 0; i < 4; i++)
		close(fds[i]);
	stop(&s);
}

static void body_budget(void **state)
{
	struct httpguard *g = httpguard_new(&limits, NULL, NULL);
	struct httpguard_stats st;

	(void)state;
	/* Large bodies share 1000 - 300 bytes; small ones may use the last 300 too. */
	assert_int_equal(httpguard_body_reserve(g, 400), 0);
	assert_int_equal(httpguard_body_reserve(g, 300), 0);
	assert_int_equal(httpguard_body_reserve(g, 101), -1);
	for (int i = 0; i < 3; i++)
		assert_int_equal(httpguard_body_reserve(g, 100), 0);
	assert_int_equal(httpguard_body_reserve(g, 1), -1);
	httpguard_stats(g, &st);
	assert_int_equal(st.body_bytes, 1000);
	assert_int_equal(st.body_refused, 2);
	httpguard_body_release(g, 400);
	assert_int_equal(httpguard_body_reserve(g, 101), -1); /* 700 + 101 > 700 for large */
	assert_int_equal(httpguard_body_reserve(g, 100), 0);
	assert_int_equal(httpguard_body_reserve(g, 2000), -1);
	httpguard_stats(g, &st);
	assert_int_equal(st.body_bytes, 700);
	httpguard_free(g);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(header_deadline),
		cmocka_unit_test(request_deadline),
		cmocka_unit_test(crowded),
		cmocka_unit_test(body_budget),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
