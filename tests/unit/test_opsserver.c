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

#include "daemon/opsserver.h"

/*
 * The ops endpoints served from the caller's loop: a client on a socket,
 * the server driven only through opsserver_fd/opsserver_run, as the
 * controller's loop drives it.
 */

static bool is_ready;

static bool ready(void *arg)
{
	(void)arg;
	return is_ready;
}

static void metrics(void *arg, struct strbuf *out)
{
	strbuf_addf(out, "# TYPE x counter\nx %d\n", *(int *)arg);
}

/* Send a raw request, run the server until the client sees EOF; the answer into buf. */
static void ask(struct opsserver *s, const char *req, char *buf, size_t size)
{
	struct sockaddr_in sa = {0};
	int fd = socket(AF_INET, SOCK_STREAM, 0);
	size_t got = 0;

	assert_true(fd >= 0);
	sa.sin_family = AF_INET;
	sa.sin_port = htons((uint16_t)opsserver_port(s));
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	assert_int_equal(connect(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	assert_int_equal(write(fd, req, strlen(req)), (ssize_t)strlen(req));
	fcntl(fd, F_SETFL, O_NONBLOCK);
	for (int i = 0; i < 400; i++) {
		struct pollfd p[2] = {{opsserver_fd(s), POLLIN, 0}, {fd, POLLIN, 0}};
		ssize_t n;
		poll(p, 2, (int)opsserver_timeout_ms(s, 10));
		opsserver_run(s);
		n = read(fd, buf + got, size - 1 - got);
		if (n > 0)
			got += (size_t)n;
		else if (n == 0)
			break;
	}
	buf[got] = '\0';
	close(fd);
}

static void endpoints(void **state)
{
	int value = 42;
	struct opsserver_opts o = {.ready = ready, .metrics = metrics, .arg = &value};
	struct opsserver *s;
	struct gs_error err;
	char buf[4096];

	(void)state;
	assert_int_equal(opsserver_start(&s, "127.0.0.1:0", &o, &err), 0);
	assert_true(opsserver_port(s) > 0);
	assert_true(opsserver_fd(s) >= 0);

	ask(s, "GET /healthz HTTP/1.0\r\n\r\n", buf, sizeof(buf));
	assert_non_null(strstr(buf, "HTTP/1.0 200") ? buf : strstr(buf, "HTTP/1.1 200"));
	assert_non_null(strstr(buf, "\r\n\r\nok\n"));

	is_ready = false;
	ask(s, "GET /readyz HTTP/1.0\r\n\r\n", buf, sizeof(buf));
	assert_non_null(strstr(buf, " 503 "));
	assert_non_null(strstr(buf, "not ready"));
	is_ready = true;
	ask(s, "GET /readyz HTTP/1.0\r\n\r\n", buf, sizeof(buf));
	assert_non_null(strstr(buf, " 200 "));

	ask(s, "GET /metrics HTTP/1.0\r\n\r\n", buf, sizeof(buf));
	assert_non_null(strstr(buf, " 200 "));
	assert_non_null(strstr(buf, "text/plain; version=0.0.4"));
	assert_non_null(strstr(buf, "\nx 42\n"));
	value = 43;
	ask(s, "GET /metrics HTTP/1.0\r\n\r\n", buf, sizeof(buf));
	assert_non_null(strstr(buf, "\nx 43\n"));

	ask(s, "GET /nope HTTP/1.0\r\n\r\n", buf, sizeof(buf));
	assert_non_null(strstr(buf, " 404 "));
	ask(s, "POST /metrics HTTP/1.0\r\nContent-Length: 0\r\n\r\n", buf, sizeof(buf));
	assert_non_null(strstr(buf, " 405 "));
	opsserver_stop(s);
}

static void bad_listen(void **state)
{
	struct opsserver_opts o = {.ready = ready, .metrics = metrics, .arg = NULL};
	struct opsserver *s;
	struct gs_error err;
	static const char *const bad[] = {"8080", "127.0.0.1:", "127.0.0.1:99999", "host:80",
					  "127.0.0.1:8x"};

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		assert_int_equal(opsserver_start(&s, bad[i], &o, &err), -1);
		assert_null(s);
		assert_non_null(strstr(err.msg, "HOST:PORT"));
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(endpoints),
		cmocka_unit_test(bad_listen),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
