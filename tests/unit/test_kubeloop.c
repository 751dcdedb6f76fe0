#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "kube/kubeclient.h"
#include "kube/kubeloop.h"

/*
 * kubeloop's pure parts on a watch stream recorded from the e2e apiserver
 * (tests/unit/data/kube/watch-nodes.jsonl, see its README), and the loop
 * itself against kube_fault_server.py: retries by verb, Retry-After, list
 * paging, an expired continue token, the client's proxy (recording_proxy.py).
 */

#define DATA "tests/unit/data/kube"
#define SERVER "tests/unit/kube_fault_server.py"
#define PROXY "tests/unit/recording_proxy.py"

static char *slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	char *b = calloc(1, 1 << 20);

	assert_non_null(f);
	*len = fread(b, 1, (1 << 20) - 1, f);
	fclose(f);
	return b;
}

struct seen {
	int lines;
	char types[16][12];
	char rvs[16][24];
};

static int on_line(void *arg, const char *line, size_t len)
{
	struct seen *s = arg;
	struct kube_watch_event ev;
	struct gs_error err;
	static const char *const names[] = {"ADDED", "MODIFIED", "DELETED", "BOOKMARK", "ERROR"};

	assert_int_equal(kube_watch_event_parse(&ev, line, len, &err), 0);
	if (s->lines < 16) {
		snprintf(s->types[s->lines], sizeof(s->types[0]), "%s", names[ev.type]);
		snprintf(s->rvs[s->lines], sizeof(s->rvs[0]), "%s",
			 ev.resource_version ? ev.resource_version : "");
	}
	s->lines++;
	kube_watch_event_release(&ev);
	return 0;
}

/* Whatever the chunking, the same events come out, in order. */
static void stream_chunks(void **state)
{
	size_t n;
	char *data = slurp(DATA "/watch-nodes.jsonl", &n);
	static const size_t sizes[] = {1, 2, 7, 100, 4096, 1 << 20};
	struct seen whole = {0};

	(void)state;
	for (size_t k = 0; k < sizeof(sizes) / sizeof(sizes[0]); k++) {
		struct kube_stream s = {.max = 1 << 20};
		struct seen got = {0};
		for (size_t off = 0; off < n; off += sizes[k]) {
			size_t len = n - off < sizes[k] ? n - off : sizes[k];
			assert_int_equal(kube_stream_feed(&s, data + off, len, on_line, &got), 0);
		}
		assert_int_equal(s.len, 0); /* the recording ends with a newline */
		if (k == 0)
			whole = got;
		assert_int_equal(got.lines, whole.lines);
		for (int i = 0; i < got.lines && i < 16; i++) {
			assert_string_equal(got.types[i], whole.types[i]);
			assert_string_equal(got.rvs[i], whole.rvs[i]);
		}
		kube_stream_release(&s);
	}
	/* Recorded: two label edits, then two bookmarks. */
	assert_int_equal(whole.lines, 4);
	assert_string_equal(whole.types[0], "MODIFIED");
	assert_string_equal(whole.types[1], "MODIFIED");
	assert_string_equal(whole.types[2], "BOOKMARK");
	assert_true(atol(whole.rvs[1]) > atol(whole.rvs[0]));
	assert_true(atol(whole.rvs[3]) >= atol(whole.rvs[1]));
	free(data);
}

static void stream_partial_and_limit(void **state)
{
	struct kube_stream s = {.max = 64};
	struct seen got = {0};
	const char *ev =
		"{\"type\":\"DELETED\",\"object\":{\"metadata\":{\"resourceVersion\":\"7\"}}}";
	char big[200];

	(void)state;
	s.max = 1024;
	assert_int_equal(kube_stream_feed(&s, ev, 20, on_line, &got), 0);
	assert_int_equal(got.lines, 0);
	assert_int_equal(kube_stream_feed(&s, ev + 20, strlen(ev) - 20, on_line, &got), 0);
	assert_int_equal(got.lines, 0); /* no newline yet */
	assert_int_equal(kube_stream_feed(&s, "\n\n", 2, on_line, &got), 0);
	assert_int_equal(got.lines, 1); /* the empty line is no event */
	assert_string_equal(got.types[0], "DELETED");
	assert_string_equal(got.rvs[0], "7");
	/* A line over the cap fails, whether in one chunk or several. */
	s.max = 64;
	memset(big, 'x', sizeof(big));
	assert_int_equal(kube_stream_feed(&s, big, sizeof(big), on_line, &got), -1);
	assert_int_equal(kube_stream_feed(&s, big, 40, on_line, &got), 0);
	assert_int_equal(kube_stream_feed(&s, big, 40, on_line, &got), -1);
	assert_int_equal(got.lines, 1);
	kube_stream_release(&s);
}

static void event_parse(void **state)
{
	/*
	 * The watch cache's answer to a resourceVersion older than it holds,
	 * in kube-apiserver's shape (apiserver/pkg/storage/cacher,
	 * errors.NewResourceExpired: "too old resource version: %d (%d)").
	 */
	const char *gone =
		"{\"type\":\"ERROR\",\"object\":{\"kind\":\"Status\",\"apiVersion\":\"v1\","
		"\"metadata\":{},\"status\":\"Failure\",\"message\":\"too old resource "
		"version: 1 (356)\",\"reason\":\"Expired\",\"code\":410}}";
	struct kube_watch_event ev;
	struct gs_error err;

	(void)state;
	assert_int_equal(kube_watch_event_parse(&ev, gone, strlen(gone), &err), 0);
	assert_int_equal(ev.type, KUBE_WE_ERROR);
	assert_int_equal(ev.code, 410);
	assert_null(ev.resource_version);
	kube_watch_event_release(&ev);
	assert_int_equal(kube_watch_event_parse(&ev, "{\"type\":", 8, &err), -1);
	assert_non_null(strstr(err.msg, "watch event"));
	assert_int_equal(kube_watch_event_parse(&ev, "{\"type\":\"SYNC\",\"object\":{}}", 27, &err),
			 -1);
	assert_non_null(strstr(err.msg, "unknown type \"SYNC\""));
	assert_int_equal(kube_watch_event_parse(&ev, "{\"type\":\"ADDED\"}", 16, &err), -1);
}

/* ---- the loop against kube_fault_server.py --------------------------------------------- */

static pid_t peer_pid;
static int peer_port;

/* Run python3 script [arg]: its pid in *pid, the port it prints first (0 when it cannot run). */
static int start_py(const char *script, const char *arg, pid_t *pid)
{
	int fds[2], port = 0;
	char line[32];
	FILE *f;

	if (access(script, R_OK) != 0 || system("python3 -c '' 2>/dev/null") != 0 || pipe(fds))
		return 0;
	*pid = fork();
	if (*pid == 0) {
		dup2(fds[1], 1);
		close(fds[0]);
		close(fds[1]);
		execlp("python3", "python3", script, arg, (char *)NULL);
		_exit(127);
	}
	close(fds[1]);
	f = fdopen(fds[0], "r");
	if (f && fgets(line, sizeof(line), f))
		port = atoi(line);
	if (f)
		fclose(f);
	return port;
}

static int setup_peer(void **state)
{
	(void)state;
	peer_port = start_py(SERVER, NULL, &peer_pid);
	return 0;
}

static int teardown_peer(void **state)
{
	(void)state;
	if (peer_pid > 0) {
		kill(peer_pid, SIGTERM);
		waitpid(peer_pid, NULL, 0);
	}
	return 0;
}

struct done {
	int calls, code;
	unsigned attempts;
	char error[512];
	char body[512];
};

static void on_done(void *arg, const struct kube_result *r)
{
	struct done *d = arg;

	d->calls++;
	d->code = r->code;
	d->attempts = r->attempts;
	snprintf(d->error, sizeof(d->error), "%s", r->error ? r->error : "");
	snprintf(d->body, sizeof(d->body), "%s", r->body);
}

static struct kube_loop *loop_at(struct kube_client **c, const char *server, const char *token)
{
	struct kube_config cfg = {0};
	/* A daemon's client: an apiserver that refuses is waited for. */
	struct kube_client_opts co = {.backoff_base_ms = 20,
				      .backoff_max_ms = 200,
				      .max_attempts = 4,
				      .retry_unreachable = true};
	struct kube_loop_opts o = {.list_page_size = 3};
	struct kube_loop *l;
	struct gs_error err;

	cfg.server = (char *)server;
	cfg.token = (char *)token;
	assert_int_equal(kube_client_new(c, &cfg, &co, &err), 0);
	assert_int_equal(kube_loop_new(&l, kube_client_conn(*c), &o, &err), 0);
	return l;
}

static struct kube_loop *loop_for_peer(struct kube_client **c, const char *token)
{
	char server[64];

	snprintf(server, sizeof(server), "http://127.0.0.1:%d", peer_port);
	return loop_at(c, server, token);
}

static void run_until(struct kube_loop *l, int *flag, int want)
{
	struct gs_error err;

	for (int i = 0; i < 500 && *flag < want; i++)
		assert_int_equal(kube_loop_step(l, NULL, 0, NULL, 20, &err), 0);
}

static void loop_retries(void **state)
{
	struct kube_client *c;
	struct kube_loop *l;
	struct done a = {0}, b = {0}, p = {0}, q = {0}, e = {0};
	const char *patch = "{\"x\":1}";

	(void)state;
	if (!peer_port)
		skip();
	l = loop_for_peer(&c, "s3cr3t-token");
	/* GET: two 503s, then the answer. */
	assert_int_equal(kube_loop_request(l, "GET", "/flaky/g/2/503", NULL, NULL, 0, on_done, &a),
			 0);
	/* PATCH through a 429 with Retry-After: 1. */
	assert_int_equal(kube_loop_request(l, "PATCH", "/flaky/p/1/429/1",
					   "application/merge-patch+json", patch, strlen(patch),
					   on_done, &p),
			 0);
	/* POST is not repeated after a 503. */
	assert_int_equal(kube_loop_request(l, "POST", "/flaky/b/1/503", NULL, patch, strlen(patch),
					   on_done, &b),
			 0);
	/* Attempts run out: the last Status is the message. */
	assert_int_equal(kube_loop_request(l, "GET", "/flaky/e/9/500", NULL, NULL, 0, on_done, &e),
			 0);
	/* A server quoting the token back: masked. */
	assert_int_equal(kube_loop_request(l, "GET", "/quote/403", NULL, NULL, 0, on_done, &q), 0);
	assert_int_equal(kube_loop_pending(l), 5);
	run_until(l, &p.calls, 1);
	run_until(l, &e.calls, 1);
	run_until(l, &a.calls, 1);
	run_until(l, &b.calls, 1);
	run_until(l, &q.calls, 1);
	assert_int_equal(a.calls, 1);
	assert_int_equal(a.code, 200);
	assert_int_equal(a.attempts, 3);
	assert_non_null(strstr(a.body, "\"method\": \"GET\""));
	assert_int_equal(p.code, 200);
	assert_int_equal(p.attempts, 2);
	assert_non_null(strstr(p.body, "merge-patch+json"));
	assert_int_equal(b.code, 503);
	assert_int_equal(b.attempts, 1);
	assert_string_equal(b.error, "flaky b attempt 1");
	assert_int_equal(e.code, 500);
	assert_int_equal(e.attempts, 4);
	assert_string_equal(e.error, "flaky e attempt 4");
	assert_int_equal(q.code, 403);
	assert_null(strstr(q.error, "s3cr3t-token"));
	assert_non_null(strstr(q.error, "************"));
	assert_int_equal(kube_loop_pending(l), 0);
	assert_true(kube_loop_stats(l)->retries >= 5);
	kube_loop_free(l);
	kube_client_free(c);
}

struct listing {
	int begins, ends, items;
};

static void lb(void *arg)
{
	struct listing *x = arg;
	x->begins++;
	x->items = 0;
}
static void ev(void *arg, enum kube_event e, json_t *obj)
{
	struct listing *x = arg;
	(void)obj;
	if (e == KUBE_EV_LISTED)
		x->items++;
}
static void le(void *arg)
{
	((struct listing *)arg)->ends++;
}

static void loop_list_pages(void **state)
{
	static const struct kube_watch_ops ops = {.list_begin = lb, .event = ev, .list_end = le};
	struct kube_client *c;
	struct kube_loop *l;
	struct listing a = {0}, x = {0};

	(void)state;
	if (!peer_port)
		skip();
	l = loop_for_peer(&c, NULL);
	/* 7 pods in pages of 3. */
	assert_int_equal(kube_loop_watch(l, "/api/v1/pods", "app=x", NULL, &ops, &a, NULL), 0);
	/* Every continue token expired: listed again, unpaged. */
	assert_int_equal(kube_loop_watch(l, "/api/v1/expiring", NULL, NULL, &ops, &x, NULL), 0);
	run_until(l, &a.ends, 1);
	run_until(l, &x.ends, 1);
	assert_int_equal(a.begins, 1);
	assert_int_equal(a.items, 7);
	assert_int_equal(x.begins, 2);
	assert_int_equal(x.items, 7);
	assert_int_equal(kube_loop_stats(l)->relists, 1);
	kube_loop_stop_watches(l);
	kube_loop_free(l);
	kube_client_free(c);
}

struct states {
	char log[16]; /* 'o' open, 'f' failed, in order */
	size_t n;
};

static void st(void *arg, bool open)
{
	struct states *x = arg;

	if (x->n + 1 < sizeof(x->log))
		x->log[x->n++] = open ? 'o' : 'f';
}
static void ev_none(void *arg, enum kube_event e, json_t *obj)
{
	(void)arg;
	(void)e;
	(void)obj;
}

static void run_until_n(struct kube_loop *l, const size_t *n, size_t want)
{
	struct gs_error err;

	for (int i = 0; i < 500 && *n < want; i++)
		assert_int_equal(kube_loop_step(l, NULL, 0, NULL, 20, &err), 0);
}

/*
 * A watch tells whether the apiserver answers, while nothing changes: its
 * list and its stream's 200 are "open", a cut stream "failed", the stream
 * opened again "open"; a list the server refuses is "failed" at each try.
 */
static void loop_watch_state(void **state)
{
	static const struct kube_watch_ops ops = {.event = ev_none, .state = st};
	struct kube_client *c;
	struct kube_loop *l;
	struct states a = {0}, b = {0};

	(void)state;
	if (!peer_port)
		skip();
	l = loop_for_peer(&c, NULL);
	assert_int_equal(kube_loop_watch(l, "/api/v1/cut", NULL, NULL, &ops, &a, NULL), 0);
	assert_int_equal(kube_loop_watch(l, "/flaky/wst/9/503", NULL, NULL, &ops, &b, NULL), 0);
	run_until_n(l, &a.n, 4);
	run_until_n(l, &b.n, 2);
	/* The list, the stream's 200, the cut, the stream again. */
	assert_string_equal(a.log, "oofo");
	assert_true(b.n >= 2);
	assert_int_equal(strspn(b.log, "f"), b.n);
	kube_loop_stop_watches(l);
	kube_loop_free(l);
	kube_client_free(c);
}

/*
 * The loop's handles carry the client's proxy decision: HTTP_PROXY (upper
 * case, which libcurl alone ignores) for a non-loopback server, nothing
 * for a loopback one even with http_proxy and ALL_PROXY set.
 */
static void loop_through_proxy(void **state)
{
	char log[] = "/tmp/gs-loop-proxy-XXXXXX", url[64], server[64], want[128];
	struct kube_client *c, *c2;
	struct kube_loop *l, *l2;
	struct done a = {0}, b = {0};
	pid_t pid = 0;
	int fd = mkstemp(log), port;
	size_t n;
	char *got;

	(void)state;
	assert_true(fd >= 0);
	close(fd);
	port = peer_port ? start_py(PROXY, log, &pid) : 0;
	if (!port) {
		unlink(log);
		skip();
	}
	snprintf(url, sizeof(url), "http://127.0.0.1:%d", port);
	setenv("HTTP_PROXY", url, 1);
	setenv("http_proxy", url, 1);
	setenv("ALL_PROXY", url, 1);
	/* 0.0.0.0 reaches this machine, and is no loopback address. */
	snprintf(server, sizeof(server), "http://0.0.0.0:%d", peer_port);
	l = loop_at(&c, server, NULL);
	l2 = loop_for_peer(&c2, "loop-token");
	unsetenv("HTTP_PROXY");
	unsetenv("http_proxy");
	unsetenv("ALL_PROXY");
	assert_int_equal(kube_loop_request(l, "GET", "/echo", NULL, NULL, 0, on_done, &a), 0);
	assert_int_equal(kube_loop_request(l2, "GET", "/echo", NULL, NULL, 0, on_done, &b), 0);
	run_until(l, &a.calls, 1);
	run_until(l2, &b.calls, 1);
	kube_loop_free(l);
	kube_client_free(c);
	kube_loop_free(l2);
	kube_client_free(c2);
	kill(pid, SIGTERM);
	waitpid(pid, NULL, 0);
	got = slurp(log, &n);
	unlink(log);
	assert_int_equal(a.code, 200);
	assert_int_equal(b.code, 200);
	snprintf(want, sizeof(want), "GET http://0.0.0.0:%d/echo auth=none\n", peer_port);
	assert_string_equal(got, want);
	free(got);
}

/* A daemon's loop (retry_unreachable): an apiserver that refuses is waited for (retried). */
static void loop_retries_refused(void **state)
{
	struct kube_client *c;
	struct kube_loop *l;
	struct done a = {0};
	char server[64], want[160];
	pid_t pid = 0;
	int port = start_py(SERVER, NULL, &pid);

	(void)state;
	if (!port)
		skip();
	kill(pid, SIGTERM);
	waitpid(pid, NULL, 0);
	snprintf(server, sizeof(server), "http://127.0.0.1:%d", port);
	l = loop_at(&c, server, NULL);
	assert_int_equal(kube_loop_request(l, "GET", "/echo", NULL, NULL, 0, on_done, &a), 0);
	run_until(l, &a.calls, 1);
	assert_int_equal(a.calls, 1);
	assert_int_equal(a.code, 0);
	assert_int_equal(a.attempts, 4);
	/* The blocking client's words: one transport, one way of saying it. */
	snprintf(want, sizeof(want),
		 "The connection to the server 127.0.0.1:%d was refused - did you specify the "
		 "right host or port? (gave up after 4 attempts in ",
		 port);
	assert_non_null(strstr(a.error, want));
	kube_loop_free(l);
	kube_client_free(c);
}

/*
 * A request's deadline bounds its retries: a Retry-After that would end
 * past it fails the request at once with the answer it has.
 */
static void loop_deadline(void **state)
{
	struct kube_client *c;
	struct kube_loop *l;
	struct done a = {0}, b = {0};
	long long t0;

	(void)state;
	if (!peer_port)
		skip();
	l = loop_for_peer(&c, NULL);
	t0 = kube_loop_now();
	assert_int_equal(kube_loop_request_by(l, "GET", "/flaky/dl/5/429/30", NULL, NULL, 0,
					      t0 + 500, on_done, &a),
			 0);
	/* Within it, the same wait is taken. */
	assert_int_equal(kube_loop_request_by(l, "GET", "/flaky/dl2/1/429/1", NULL, NULL, 0,
					      t0 + 5000, on_done, &b),
			 0);
	run_until(l, &a.calls, 1);
	assert_true(kube_loop_now() - t0 < 400);
	assert_int_equal(a.code, 429);
	assert_int_equal(a.attempts, 1);
	run_until(l, &b.calls, 1);
	assert_true(kube_loop_now() - t0 >= 1000);
	assert_int_equal(b.code, 200);
	assert_int_equal(b.attempts, 2);
	kube_loop_free(l);
	kube_client_free(c);
}

/* A response over max_body_bytes fails, not retried, and says so as the blocking client does. */
static void loop_response_cap(void **state)
{
	struct kube_client *c;
	struct kube_loop *l;
	struct kube_config cfg = {0};
	struct kube_loop_opts o = {.max_body_bytes = 1000};
	struct done a = {0}, b = {0};
	char server[64], want[128];
	struct gs_error err;

	(void)state;
	if (!peer_port)
		skip();
	snprintf(server, sizeof(server), "http://127.0.0.1:%d", peer_port);
	cfg.server = server;
	assert_int_equal(kube_client_new(&c, &cfg, NULL, &err), 0);
	assert_int_equal(kube_loop_new(&l, kube_client_conn(c), &o, &err), 0);
	assert_int_equal(kube_loop_request(l, "GET", "/big/900", NULL, NULL, 0, on_done, &a), 0);
	assert_int_equal(kube_loop_request(l, "GET", "/big/5000", NULL, NULL, 0, on_done, &b), 0);
	run_until(l, &a.calls, 1);
	run_until(l, &b.calls, 1);
	assert_int_equal(a.code, 200);
	assert_int_equal(b.code, 0);
	assert_int_equal(b.attempts, 1);
	snprintf(want, sizeof(want), "GET %s/big/5000: response larger than 1000 bytes", server);
	assert_string_equal(b.error, want);
	kube_loop_free(l);
	kube_client_free(c);
}

/* n requests of /slow/ms through a loop whose limit goes up to max; the ms they all took. */
static long long slow_batch(unsigned max, int n, int ms, unsigned *limit)
{
	struct kube_client *c;
	struct kube_loop *l;
	struct kube_config cfg = {0};
	struct kube_loop_opts o = {.max_in_flight = max};
	struct done *d = calloc((size_t)n, sizeof(*d));
	char server[64], path[32];
	struct gs_error err;
	long long t0;
	int done = 0;

	snprintf(server, sizeof(server), "http://127.0.0.1:%d", peer_port);
	snprintf(path, sizeof(path), "/slow/%d", ms);
	cfg.server = server;
	assert_int_equal(kube_client_new(&c, &cfg, NULL, &err), 0);
	assert_int_equal(kube_loop_new(&l, kube_client_conn(c), &o, &err), 0);
	t0 = kube_loop_now();
	for (int i = 0; i < n; i++)
		assert_int_equal(kube_loop_request(l, "GET", path, NULL, NULL, 0, on_done, &d[i]),
				 0);
	while (done < n) {
		assert_int_equal(kube_loop_step(l, NULL, 0, NULL, 20, &err), 0);
		done = 0;
		for (int i = 0; i < n; i++)
			done += d[i].calls;
	}
	t0 = kube_loop_now() - t0;
	for (int i = 0; i < n; i++)
		assert_int_equal(d[i].code, 200);
	*limit = kube_loop_limit(l);
	kube_loop_free(l);
	kube_client_free(c);
	free(d);
	return t0;
}

/*
 * Where latency, not the server, bounds the rate (every answer takes 200 ms
 * however many run), the loop's limit climbs from 16 and the same requests
 * take a fraction of the time a fixed 16 at once takes (3.75 s at least).
 */
static void loop_limit_follows_latency(void **state)
{
	unsigned fixed_limit, limit;
	long long fixed, adaptive;

	(void)state;
	if (!peer_port)
		skip();
	fixed = slow_batch(16, 300, 200, &fixed_limit);
	adaptive = slow_batch(0, 300, 200, &limit);
	print_message("300 answers of 200 ms: %lld ms at 16 at once, %lld ms from 16 up to 64 "
		      "(limit %u at the end)\n",
		      fixed, adaptive, limit);
	assert_int_equal(fixed_limit, 16);
	assert_true(limit > 32);
	if (adaptive * 4 > fixed * 3)
		fail_msg("300 answers of 200 ms: %lld ms up to 64 at once, %lld ms at 16", adaptive,
			 fixed);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(stream_chunks),
		cmocka_unit_test(stream_partial_and_limit),
		cmocka_unit_test(event_parse),
		cmocka_unit_test(loop_retries),
		cmocka_unit_test(loop_list_pages),
		cmocka_unit_test(loop_through_proxy),
		cmocka_unit_test(loop_retries_refused),
		cmocka_unit_test(loop_watch_state),
		cmocka_unit_test(loop_deadline),
		cmocka_unit_test(loop_response_cap),
		cmocka_unit_test(loop_limit_follows_latency),
	};
	return cmocka_run_group_tests(tests, setup_peer, teardown_peer);
}
