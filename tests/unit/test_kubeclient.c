#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <fcntl.h>
#include <netdb.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "kube/kubeclient.h"

/*
 * The client against recorded apiserver bodies (tests/unit/data/kube, see
 * its README) and against kube_fault_server.py, a local peer that fails on
 * purpose. Expected texts come from docs/design/kubeclient.md and
 * k8s.io/apiserver v0.34.4 pkg/admission/plugin/resourcequota/controller.go, not from the program's
 * output.
 */

#define DATA "tests/unit/data/kube"
#define SERVER "tests/unit/kube_fault_server.py"
#define PROXY "tests/unit/recording_proxy.py"
#define QUOTA_MSG                                                                                  \
	"pods \"team-over\" is forbidden: exceeded quota: gpu-quota, requested: "                  \
	"requests.nvidia.com/gpu=1, used: requests.nvidia.com/gpu=2, limited: "                    \
	"requests.nvidia.com/gpu=2"

/* ---- recorded Status bodies ------------------------------------------------------------ */

static char *slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	char *b = calloc(1, 1 << 16);

	assert_non_null(f);
	*len = fread(b, 1, (1 << 16) - 1, f);
	fclose(f);
	return b;
}

static void parse_fixture(const char *name, int code, const char *method, struct kube_status *st)
{
	char path[256];
	size_t n;
	char *body;

	snprintf(path, sizeof(path), DATA "/%s.json", name);
	body = slurp(path, &n);
	kube_status_from_response(st, code, method, body, n);
	free(body);
}

static void status_quota_verbatim(void **state)
{
	struct kube_status st;

	(void)state;
	parse_fixture("status-403-quota", 403, "POST", &st);
	assert_int_equal(st.code, 403);
	assert_string_equal(st.reason, "Forbidden");
	assert_string_equal(st.message, QUOTA_MSG);
	assert_string_equal(json_string_value(json_object_get(st.details, "name")), "team-over");
	assert_string_equal(json_string_value(json_object_get(st.details, "kind")), "pods");
	kube_status_release(&st);
}

static void status_fixtures(void **state)
{
	static const struct {
		const char *file;
		int code;
		const char *method, *reason, *message;
		long retry_after;
	} cases[] = {
		{"status-404-notfound", 404, "GET", "NotFound", "pods \"nope\" not found", 0},
		{"status-409-alreadyexists", 409, "POST", "AlreadyExists",
		 "namespaces \"default\" already exists", 0},
		{"status-409-conflict", 409, "PUT", "Conflict",
		 "Operation cannot be fulfilled on namespaces \"default\": the object has been "
		 "modified; please apply your changes to the latest version and try again",
		 0},
		{"status-422-invalid", 422, "POST", "Invalid",
		 "Pod \"bad-request\" is invalid: spec.containers[0].resources.requests: Invalid "
		 "value: \"2\": must be equal to nvidia.com/gpu limit of 1",
		 0},
		{"status-401-unauthorized", 401, "GET", "Unauthorized", "Unauthorized", 0},
		{"status-403-rbac", 403, "GET", "Forbidden",
		 "nodes is forbidden: User \"e2e-user\" cannot list resource \"nodes\" in API "
		 "group "
		 "\"\" at the cluster scope",
		 0},
		{"status-429-toomany", 429, "GET", "TooManyRequests",
		 "Too many requests, please try again later.", 1},
		{"status-500-internal", 500, "GET", "InternalError",
		 "Internal error occurred: resource quota evaluation timed out", 0},
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct kube_status st;
		parse_fixture(cases[i].file, cases[i].code, cases[i].method, &st);
		assert_int_equal(st.code, cases[i].code);
		assert_string_equal(st.reason, cases[i].reason);
		assert_string_equal(st.message, cases[i].message);
		assert_int_equal(st.retry_after_s, cases[i].retry_after);
		kube_status_release(&st);
	}
	{
		struct kube_status st;
		json_t *causes;
		parse_fixture("status-422-invalid", 422, "POST", &st);
		causes = json_object_get(st.details, "causes");
		assert_int_equal(json_array_size(causes), 1);
		assert_string_equal(
			json_string_value(json_object_get(json_array_get(causes, 0), "field")),
			"spec.containers[0].resources.requests");
		assert_false(kube_status_invalid_field(&st, "metadata.uid"));
		assert_true(
			kube_status_invalid_field(&st, "spec.containers[0].resources.requests"));
		kube_status_release(&st);
	}
	{
		/* A PATCH carrying the uid of a node since deleted and re-created. */
		struct kube_status st;
		parse_fixture("status-422-uid-immutable", 422, "PATCH", &st);
		assert_string_equal(st.reason, "Invalid");
		assert_true(kube_status_invalid_field(&st, "metadata.uid"));
		assert_false(kube_status_invalid_field(&st, "metadata.name"));
		kube_status_release(&st);
		parse_fixture("status-409-conflict", 409, "PUT", &st);
		assert_false(kube_status_invalid_field(&st, "metadata.uid"));
		kube_status_release(&st);
		assert_false(kube_status_invalid_field(NULL, "metadata.uid"));
	}
}

/* client-go's NewGenericServerResponse texts for bodies that are no Status. */
static void status_generic(void **state)
{
	static const struct {
		int code;
		const char *method, *body, *reason, *message;
	} cases[] = {
		{404, "GET", "404 page not found\n", "NotFound",
		 "the server could not find the requested resource"},
		{409, "POST", "", "AlreadyExists", "the server reported a conflict"},
		{409, "PUT", "", "Conflict", "the server reported a conflict"},
		{401, "GET", "", "Unauthorized",
		 "the server has asked for the client to provide credentials"},
		{403, "GET", "  denied by proxy\n", "Forbidden", "denied by proxy"},
		{500, "GET", "oops: \"backend\" down\n", "InternalError",
		 "an error on the server (\"oops: \\\"backend\\\" down\") has prevented the "
		 "request "
		 "from succeeding"},
		{502, "GET", "<html>bad gateway</html>", "InternalError",
		 "an error on the server (\"<html>bad gateway</html>\") has prevented the request "
		 "from succeeding"},
		{503, "GET", "", "ServiceUnavailable",
		 "the server is currently unable to handle the request"},
		{504, "GET", "", "Timeout",
		 "the server was unable to return a response in the time allotted, but may still "
		 "be processing the request"},
		{418, "GET", "teapot", "Unknown",
		 "the server responded with the status code 418 but did not return more "
		 "information"},
		/* JSON that is no Status counts as text. */
		{404, "GET", "{\"kind\":\"Pod\"}", "NotFound",
		 "the server could not find the requested resource"},
		/* A Status without message or reason falls back to the generic ones. */
		{404, "GET", "{\"kind\":\"Status\",\"code\":404}", "NotFound",
		 "the server could not find the requested resource"},
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct kube_status st;
		kube_status_from_response(&st, cases[i].code, cases[i].method, cases[i].body,
					  strlen(cases[i].body));
		assert_int_equal(st.code, cases[i].code);
		assert_string_equal(st.reason, cases[i].reason);
		assert_string_equal(st.message, cases[i].message);
		assert_null(st.details);
		kube_status_release(&st);
	}
}

/* ---- against the fault server ---------------------------------------------------------- */

struct peer {
	pid_t pid;
	int port;
	char dir[64]; /* PKI, for the TLS server */
};

static struct peer plain, tls, tls12;

static int start_script(struct peer *p, const char *script, const char *const *extra)
{
	int fds[2];
	char line[32];
	FILE *f;
	const char *argv[12] = {"python3", script};
	size_t n = 2;

	for (; extra && *extra && n < 11; extra++)
		argv[n++] = *extra;
	argv[n] = NULL;
	if (access(script, R_OK) != 0 || system("python3 -c '' 2>/dev/null") != 0)
		return -1;
	if (pipe(fds) != 0)
		return -1;
	p->pid = fork();
	if (p->pid < 0)
		return -1;
	if (p->pid == 0) {
		dup2(fds[1], 1);
		close(fds[0]);
		close(fds[1]);
		execvp("python3", (char *const *)argv);
		_exit(127);
	}
	close(fds[1]);
	f = fdopen(fds[0], "r");
	if (!f || !fgets(line, sizeof(line), f)) {
		if (f)
			fclose(f);
		return -1;
	}
	fclose(f);
	p->port = atoi(line);
	return p->port > 0 ? 0 : -1;
}

static int start_peer(struct peer *p, const char *const *extra)
{
	return start_script(p, SERVER, extra);
}

static void stop_peer(struct peer *p)
{
	if (p->pid > 0) {
		kill(p->pid, SIGTERM);
		waitpid(p->pid, NULL, 0);
		p->pid = 0;
	}
}

static int setup_plain(void **state)
{
	(void)state;
	if (start_peer(&plain, NULL) != 0)
		plain.port = 0; /* tests skip */
	return 0;
}

static int teardown_plain(void **state)
{
	(void)state;
	stop_peer(&plain);
	return 0;
}

struct tracelog {
	int lines;
	int retries;
	int attempts; /* requests that went out (or tried to) */
	char last[512];
};

static void on_trace(void *arg, const char *line)
{
	struct tracelog *t = arg;

	t->lines++;
	if (strstr(line, ": retrying in "))
		t->retries++;
	if (strstr(line, " (attempt "))
		t->attempts++;
	snprintf(t->last, sizeof(t->last), "%s", line);
}

static struct kube_config *cfg_for(const char *scheme, int port)
{
	struct kube_config *cfg = calloc(1, sizeof(*cfg));

	cfg->server = gs_xasprintf("%s://127.0.0.1:%d", scheme, port);
	cfg->namespace = gs_xstrdup("team-a");
	return cfg;
}

/* A client for the plain peer with fast retries; tl may be NULL. */
static struct kube_client *client(struct tracelog *tl, const char *token)
{
	struct kube_client_opts o = {
		.backoff_base_ms = 20,
		.backoff_max_ms = 100,
		.deadline_ms = 5000,
		.list_page_size = 3,
		.trace = on_trace,
		.trace_arg = tl,
	};
	struct kube_config *cfg = cfg_for("http", plain.port);
	struct kube_client *c;
	struct gs_error err;

	if (!tl)
		o.trace = NULL;
	if (token)
		cfg->token = gs_xstrdup(token);
	assert_int_equal(kube_client_new(&c, cfg, &o, &err), 0);
	kube_config_free(cfg);
	return c;
}

static long long ms_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static const char *hdr(const json_t *echo, const char *name)
{
	return json_string_value(json_object_get(json_object_get(echo, "headers"), name));
}

static long count_of(struct kube_client *c, const char *key)
{
	char path[128];
	json_t *o;
	struct gs_error err;
	long n;

	snprintf(path, sizeof(path), "/count/%s", key);
	assert_int_equal(kube_get(c, path, &o, &err), 0);
	n = (long)json_integer_value(json_object_get(o, "count"));
	json_decref(o);
	return n;
}

#define NEED_PEER(p)                                                                               \
	do {                                                                                       \
		if (!(p).port)                                                                     \
			skip();                                                                    \
	} while (0)

static void get_headers_and_keepalive(void **state)
{
	struct kube_client *c;
	json_t *a, *b;
	struct gs_error err;

	(void)state;
	NEED_PEER(plain);
	c = client(NULL, "test-token");
	assert_string_equal(kube_client_namespace(c), "team-a");
	assert_int_equal(kube_get(c, "/echo/api/v1/nodes?x=1", &a, &err), 0);
	assert_string_equal(json_string_value(json_object_get(a, "method")), "GET");
	assert_string_equal(json_string_value(json_object_get(a, "path")),
			    "/echo/api/v1/nodes?x=1");
	assert_string_equal(hdr(a, "accept"), "application/json");
	assert_string_equal(hdr(a, "authorization"), "Bearer test-token");
	assert_string_equal(hdr(a, "user-agent"), "gpushare/0.1.0");
	assert_null(hdr(a, "expect"));
	assert_int_equal(kube_get(c, "/echo/2", &b, &err), 0);
	/* One connection for both: keep-alive. */
	assert_int_equal(json_integer_value(json_object_get(a, "clientPort")),
			 json_integer_value(json_object_get(b, "clientPort")));
	json_decref(a);
	json_decref(b);
	assert_int_equal(kube_last_status(c)->code, 0);
	kube_client_free(c);
}

static void basic_auth(void **state)
{
	struct kube_config *cfg;
	struct kube_client *c;
	json_t *a;
	struct gs_error err;

	(void)state;
	NEED_PEER(plain);
	cfg = cfg_for("http", plain.port);
	cfg->username = gs_xstrdup("user");
	cfg->password = gs_xstrdup("pass");
	assert_int_equal(kube_client_new(&c, cfg, NULL, &err), 0);
	kube_config_free(cfg);
	assert_int_equal(kube_get(c, "/echo", &a, &err), 0);
	assert_string_equal(hdr(a, "authorization"), "Basic dXNlcjpwYXNz"); /* base64 user:pass */
	json_decref(a);
	kube_client_free(c);
}

/* A server that quotes the credential back: the message masks it. */
static void echoed_credentials_masked(void **state)
{
	struct kube_config *cfg;
	struct kube_client *c;
	struct gs_error err;

	(void)state;
	NEED_PEER(plain);
	c = client(NULL, "tok-SECRET-1234");
	assert_int_equal(kube_get(c, "/quote/500", NULL, &err), KUBE_E_STATUS);
	assert_string_equal(err.msg, "an error on the server (\"denied; you sent Authorization: "
				     "Bearer ***************\") has prevented the request from "
				     "succeeding");
	assert_null(strstr(kube_last_status(c)->message, "SECRET"));
	kube_client_free(c);

	cfg = cfg_for("http", plain.port);
	cfg->username = gs_xstrdup("user");
	cfg->password = gs_xstrdup("pass");
	assert_int_equal(kube_client_new(&c, cfg, NULL, &err), 0);
	kube_config_free(cfg);
	assert_int_equal(kube_get(c, "/quote/403", NULL, &err), KUBE_E_STATUS);
	assert_string_equal(err.msg, "denied; you sent Authorization: Basic ************");
	assert_null(strstr(kube_last_status(c)->message, "dXNlcjpwYXNz"));
	kube_client_free(c);
}

static void verbs_and_content_types(void **state)
{
	static const struct {
		enum kube_patch_type t;
		const char *ct;
	} patches[] = {
		{KUBE_PATCH_MERGE, "application/merge-patch+json"},
		{KUBE_PATCH_STRATEGIC, "application/strategic-merge-patch+json"},
		{KUBE_PATCH_JSON, "application/json-patch+json"},
	};
	struct kube_client *c;
	json_t *obj =
		json_pack("{s:s,s:{s:s}}", "kind", "Namespace", "metadata", "name", "gpu-share");
	json_t *r, *sent;
	struct gs_error err;

	(void)state;
	NEED_PEER(plain);
	c = client(NULL, NULL);
	assert_int_equal(kube_create(c, "/echo/api/v1/namespaces", obj, &r, &err), 0);
	assert_string_equal(json_string_value(json_object_get(r, "method")), "POST");
	assert_string_equal(hdr(r, "content-type"), "application/json");
	assert_null(hdr(r, "authorization"));
	sent = json_loads(json_string_value(json_object_get(r, "body")), 0, NULL);
	assert_true(json_equal(sent, obj));
	json_decref(sent);
	json_decref(r);

	assert_int_equal(kube_put(c, "/echo/put", obj, &r, &err), 0);
	assert_string_equal(json_string_value(json_object_get(r, "method")), "PUT");
	json_decref(r);

	for (size_t i = 0; i < 3; i++) {
		json_t *p = json_pack("{s:{s:{s:s}}}", "status", "capacity", "nvidia.com/gpu", "8");
		assert_int_equal(kube_patch(c, "/echo/api/v1/nodes/lab-node-1/status", patches[i].t,
					    p, &r, &err),
				 0);
		assert_string_equal(json_string_value(json_object_get(r, "method")), "PATCH");
		assert_string_equal(hdr(r, "content-type"), patches[i].ct);
		sent = json_loads(json_string_value(json_object_get(r, "body")), 0, NULL);
		assert_true(json_equal(sent, p));
		json_decref(sent);
		json_decref(r);
		json_decref(p);
	}

	assert_int_equal(kube_delete(c, "/echo/del", NULL, &r, &err), 0);
	assert_string_equal(json_string_value(json_object_get(r, "method")), "DELETE");
	assert_string_equal(json_string_value(json_object_get(r, "body")), "");
	json_decref(r);
	/* GET after a body-carrying verb sends no body. */
	assert_int_equal(kube_get(c, "/echo/after", &r, &err), 0);
	assert_string_equal(json_string_value(json_object_get(r, "method")), "GET");
	assert_string_equal(json_string_value(json_object_get(r, "body")), "");
	json_decref(r);
	json_decref(obj);
	kube_client_free(c);
}

static void status_failures_reach_caller(void **state)
{
	struct kube_client *c;
	struct tracelog tl = {0};
	json_t *obj = json_pack("{s:s}", "kind", "Pod"), *r = (json_t *)1;
	const struct kube_status *st;
	struct gs_error err;

	(void)state;
	NEED_PEER(plain);
	c = client(&tl, NULL);
	assert_int_equal(kube_create(c, "/fixture/status-403-quota/403", obj, &r, &err),
			 KUBE_E_STATUS);
	assert_null(r);
	assert_string_equal(err.msg, QUOTA_MSG); /* byte for byte */
	st = kube_last_status(c);
	assert_int_equal(st->code, 403);
	assert_string_equal(st->reason, "Forbidden");
	assert_string_equal(st->message, QUOTA_MSG);
	assert_string_equal(json_string_value(json_object_get(st->details, "name")), "team-over");
	assert_int_equal(tl.retries, 0); /* 4xx: no retry */

	assert_int_equal(kube_get(c, "/fixture/status-404-notfound/404", &r, &err), KUBE_E_STATUS);
	assert_string_equal(kube_last_status(c)->reason, "NotFound");
	assert_string_equal(err.msg, "pods \"nope\" not found");
	assert_int_equal(kube_get(c, "/no/such/route", &r, &err), KUBE_E_STATUS);
	assert_string_equal(err.msg, "the server could not find the requested resource");
	assert_int_equal(tl.retries, 0);

	/* A success clears the last status. */
	assert_int_equal(kube_get(c, "/echo", NULL, &err), 0);
	assert_int_equal(kube_last_status(c)->code, 0);
	assert_string_equal(kube_last_status(c)->message, "");

	/* A Status of success on DELETE is success. */
	assert_int_equal(kube_delete(c, "/fixture/status-200-delete-success/200", NULL, &r, &err),
			 0);
	assert_string_equal(json_string_value(json_object_get(r, "status")), "Success");
	json_decref(r);
	json_decref(obj);
	kube_client_free(c);
}

static void retry_idempotent_on_5xx(void **state)
{
	struct kube_client *c;
	struct tracelog tl = {0};
	json_t *r, *obj;
	struct gs_error err;

	(void)state;
	NEED_PEER(plain);
	c = client(&tl, NULL);
	assert_int_equal(kube_get(c, "/flaky/g503/2/503", &r, &err), 0);
	assert_int_equal(json_integer_value(json_object_get(r, "attempts")), 3);
	assert_int_equal(tl.retries, 2);
	json_decref(r);
	tl.retries = 0;
	obj = json_object();
	assert_int_equal(kube_patch(c, "/flaky/p500/1/500", KUBE_PATCH_MERGE, obj, &r, &err), 0);
	json_decref(r);
	json_decref(obj);
	assert_int_equal(tl.retries, 1);
	kube_client_free(c);
}

static void post_not_retried_on_5xx(void **state)
{
	struct kube_client *c;
	struct tracelog tl = {0};
	json_t *obj = json_object(), *r;
	struct gs_error err;

	(void)state;
	NEED_PEER(plain);
	c = client(&tl, NULL);
	assert_int_equal(kube_create(c, "/flaky/c503/1/503", obj, &r, &err), KUBE_E_STATUS);
	assert_int_equal(kube_last_status(c)->code, 503);
	assert_string_equal(err.msg, "flaky c503 attempt 1");
	assert_int_equal(tl.retries, 0);
	assert_int_equal(count_of(c, "c503"), 1);
	json_decref(obj);
	kube_client_free(c);
}

static void retry_after_honoured_for_post(void **state)
{
	struct kube_client *c;
	struct tracelog tl = {0};
	json_t *obj = json_object(), *r;
	struct gs_error err;
	long long t0;

	(void)state;
	NEED_PEER(plain);
	c = client(&tl, NULL);
	t0 = ms_now();
	assert_int_equal(kube_create(c, "/flaky/c429/1/429/1", obj, &r, &err), 0);
	/* Retry-After: 1 means a full second, not the 20 ms backoff. */
	assert_true(ms_now() - t0 >= 1000);
	assert_int_equal(json_integer_value(json_object_get(r, "attempts")), 2);
	assert_int_equal(tl.retries, 1);
	json_decref(r);
	json_decref(obj);
	kube_client_free(c);
}

static void retry_after_beyond_deadline_gives_up(void **state)
{
	struct kube_client_opts o = {.deadline_ms = 500, .backoff_base_ms = 10};
	struct kube_config *cfg;
	struct kube_client *c;
	struct gs_error err;
	long long t0;

	(void)state;
	NEED_PEER(plain);
	cfg = cfg_for("http", plain.port);
	assert_int_equal(kube_client_new(&c, cfg, &o, &err), 0);
	kube_config_free(cfg);
	t0 = ms_now();
	assert_int_equal(kube_get(c, "/flaky/late/5/429/30", NULL, &err), KUBE_E_STATUS);
	assert_true(ms_now() - t0 < 400); /* did not sleep 30 s into a 0.5 s deadline */
	assert_int_equal(kube_last_status(c)->code, 429);
	assert_int_equal(kube_last_status(c)->retry_after_s, 30);
	kube_client_free(c);
}

static void connection_loss(void **state)
{
	struct kube_client *c;
	struct tracelog tl = {0};
	json_t *obj = json_object(), *r;
	struct gs_error err;

	(void)state;
	NEED_PEER(plain);
	/* A fresh client: the POST is its first request on a new connection. */
	c = client(&tl, NULL);
	assert_int_equal(kube_create(c, "/drop/cpost/1", obj, &r, &err), -1);
	assert_int_equal(kube_last_status(c)->code, 0);
	assert_non_null(strstr(err.msg, "POST http://127.0.0.1:"));
	assert_int_equal(tl.retries, 0); /* the request went out: may have been applied */
	assert_int_equal(count_of(c, "cpost"), 1);
	kube_client_free(c);

	c = client(&tl, NULL);
	tl.retries = 0;
	assert_int_equal(kube_get(c, "/drop/cget/2", &r, &err), 0);
	assert_int_equal(json_integer_value(json_object_get(r, "attempts")), 3);
	json_decref(r);
	json_decref(obj);
	kube_client_free(c);
}

static int closed_port(void)
{
	/* Start and stop a peer: its port is then (very likely) closed. */
	struct peer p = {0};
	int port;

	if (start_peer(&p, NULL) != 0)
		return 0;
	port = p.port;
	stop_peer(&p);
	return port;
}

/* A daemon's client (retry_unreachable) waits for an apiserver that refuses. */
static void connect_refused_retried_until_deadline(void **state)
{
	struct kube_client_opts o = {.deadline_ms = 600,
				     .backoff_base_ms = 50,
				     .backoff_max_ms = 100,
				     .retry_unreachable = true};
	struct tracelog tl = {0};
	struct kube_config *cfg;
	struct kube_client *c;
	json_t *obj = json_object();
	struct gs_error err;
	int port = closed_port();
	long long t0;

	(void)state;
	if (!port)
		skip();
	o.trace = on_trace;
	o.trace_arg = &tl;
	cfg = cfg_for("http", port);
	assert_int_equal(kube_client_new(&c, cfg, &o, &err), 0);
	kube_config_free(cfg);
	t0 = ms_now();
	/* Nothing was sent, so even POST is retried. */
	assert_int_equal(kube_create(c, "/api/v1/namespaces", obj, NULL, &err), -1);
	assert_true(ms_now() - t0 < 1500);
	assert_true(tl.retries >= 2);
	assert_int_equal(tl.attempts, tl.retries + 1);
	assert_non_null(strstr(err.msg, "The connection to the server 127.0.0.1:"));
	assert_non_null(strstr(err.msg, " (gave up after "));
	assert_int_equal(kube_last_status(c)->code, 0);
	json_decref(obj);
	kube_client_free(c);
}

/*
 * A one-shot command's client fails at once on a refused connection, with
 * kubectl's words: one attempt, whatever the verb.
 */
static void connect_refused_fails_at_once(void **state)
{
	struct kube_client_opts o = {.deadline_ms = 5000, .backoff_base_ms = 50};
	json_t *obj = json_object();
	char want[256];
	int port = closed_port();

	(void)state;
	if (!port)
		skip();
	snprintf(want, sizeof(want),
		 "The connection to the server 127.0.0.1:%d was refused - did you specify the "
		 "right host or port?",
		 port);
	o.trace = on_trace;
	for (int post = 0; post < 2; post++) {
		struct kube_config *cfg = cfg_for("http", port);
		struct tracelog tl = {0};
		struct kube_client *c;
		struct gs_error err;
		int rc;

		o.trace_arg = &tl;
		assert_int_equal(kube_client_new(&c, cfg, &o, &err), 0);
		kube_config_free(cfg);
		rc = post ? kube_create(c, "/api/v1/namespaces", obj, NULL, &err)
			  : kube_get(c, "/api/v1/nodes", NULL, &err);
		assert_int_equal(rc, -1);
		assert_string_equal(err.msg, want);
		assert_int_equal(tl.attempts, 1);
		assert_int_equal(tl.retries, 0);
		assert_int_equal(kube_last_status(c)->code, 0);
		kube_client_free(c);
	}
	json_decref(obj);
}

/* A name that does not resolve fails at once too. */
static void unresolvable_fails_at_once(void **state)
{
	struct kube_client_opts o = {.deadline_ms = 5000, .backoff_base_ms = 50};
	struct tracelog tl = {0};
	struct kube_config *cfg = calloc(1, sizeof(*cfg));
	struct kube_client *c;
	struct addrinfo *ai = NULL;
	struct gs_error err;

	(void)state;
	/* RFC 6761: .invalid never resolves; a resolver that says otherwise lies. */
	if (getaddrinfo("nosuch.invalid", "80", NULL, &ai) == 0) {
		freeaddrinfo(ai);
		free(cfg);
		skip();
	}
	o.trace = on_trace;
	o.trace_arg = &tl;
	cfg->server = gs_xstrdup("http://nosuch.invalid:8080");
	assert_int_equal(kube_client_new(&c, cfg, &o, &err), 0);
	kube_config_free(cfg);
	assert_int_equal(kube_get(c, "/api/v1/nodes", NULL, &err), -1);
	assert_string_equal(err.msg, "Unable to connect to the server nosuch.invalid:8080: could "
				     "not resolve host nosuch.invalid");
	assert_int_equal(tl.attempts, 1);
	kube_client_free(c);
}

static void request_timeout(void **state)
{
	struct kube_client_opts o = {
		.request_timeout_ms = 200, .deadline_ms = 700, .backoff_base_ms = 10};
	struct kube_config *cfg;
	struct kube_client *c;
	struct gs_error err;
	long long t0;

	(void)state;
	NEED_PEER(plain);
	cfg = cfg_for("http", plain.port);
	assert_int_equal(kube_client_new(&c, cfg, &o, &err), 0);
	kube_config_free(cfg);
	t0 = ms_now();
	assert_int_equal(kube_get(c, "/slow/3000", NULL, &err), -1);
	assert_true(ms_now() - t0 < 1500);
	assert_non_null(strstr(err.msg, "GET http://127.0.0.1:"));
	assert_non_null(strstr(err.msg, "/slow/3000: "));
	assert_non_null(strstr(err.msg, "(gave up after "));
	kube_client_free(c);
}

static void response_cap(void **state)
{
	struct kube_client_opts o = {.max_response_bytes = 1000};
	struct kube_config *cfg;
	struct kube_client *c;
	struct gs_error err;
	json_t *r;
	char want[128];

	(void)state;
	NEED_PEER(plain);
	cfg = cfg_for("http", plain.port);
	assert_int_equal(kube_client_new(&c, cfg, &o, &err), 0);
	kube_config_free(cfg);
	assert_int_equal(kube_get(c, "/big/900", &r, &err), 0);
	assert_int_equal(json_string_length(r), 900);
	json_decref(r);
	assert_int_equal(kube_get(c, "/big/5000", &r, &err), -1);
	snprintf(want, sizeof(want),
		 "GET http://127.0.0.1:%d/big/5000: response larger than 1000 bytes", plain.port);
	assert_string_equal(err.msg, want);
	kube_client_free(c);
}

static void list_follows_continue(void **state)
{
	struct kube_list_opts lo = {.label_selector = "app=x,tier in (a,b)",
				    .field_selector = "spec.nodeName=lab-node-1"};
	struct kube_client *c;
	struct tracelog tl = {0};
	json_t *l, *items, *md;
	struct gs_error err;

	(void)state;
	NEED_PEER(plain);
	c = client(&tl, NULL);
	assert_int_equal(kube_list(c, "/api/v1/pods", &lo, &l, &err), 0);
	assert_int_equal(tl.lines, 3); /* 7 items, pages of 3 */
	assert_non_null(strstr(tl.last, "continue=tok-6"));
	items = json_object_get(l, "items");
	assert_int_equal(json_array_size(items), 7);
	for (size_t i = 0; i < 7; i++) {
		json_t *m = json_object_get(json_array_get(items, i), "metadata");
		char name[16];
		snprintf(name, sizeof(name), "pod-%zu", i);
		assert_string_equal(json_string_value(json_object_get(m, "name")), name);
		assert_string_equal(json_string_value(json_object_get(
					    json_object_get(m, "annotations"), "labelSelector")),
				    "app=x,tier in (a,b)");
		assert_string_equal(json_string_value(json_object_get(
					    json_object_get(m, "annotations"), "fieldSelector")),
				    "spec.nodeName=lab-node-1");
	}
	md = json_object_get(l, "metadata");
	assert_string_equal(json_string_value(json_object_get(md, "resourceVersion")), "4242");
	assert_null(json_object_get(md, "continue"));
	assert_null(json_object_get(md, "remainingItemCount"));
	assert_string_equal(json_string_value(json_object_get(l, "kind")), "PodList");
	json_decref(l);
	kube_client_free(c);
}

static void list_restarts_when_continue_expires(void **state)
{
	struct kube_client *c;
	struct tracelog tl = {0};
	json_t *l;
	struct gs_error err;

	(void)state;
	NEED_PEER(plain);
	c = client(&tl, NULL);
	assert_int_equal(kube_list(c, "/api/v1/expiring", NULL, &l, &err), 0);
	assert_int_equal(json_array_size(json_object_get(l, "items")), 7);
	assert_string_equal(
		json_string_value(json_object_get(
			json_object_get(json_array_get(json_object_get(l, "items"), 0), "metadata"),
			"name")),
		"pod-0");
	json_decref(l);
	assert_int_equal(kube_list(c, "/api/v1/pods?limit=2", NULL, &l, &err), -1);
	kube_client_free(c);
}

static int wait_for_attempts(const json_t *obj, void *arg, struct gs_error *why)
{
	(void)arg;
	if (!obj) {
		gs_error_set(why, "the object does not exist yet");
		return 0;
	}
	return json_object_get(obj, "attempts") != NULL;
}

static int never(const json_t *obj, void *arg, struct gs_error *why)
{
	(void)obj;
	(void)arg;
	gs_error_set(why, "pod \"nope\" does not exist");
	return 0;
}

static int refuse(const json_t *obj, void *arg, struct gs_error *why)
{
	(void)obj;
	(void)arg;
	gs_error_set(why, "pod failed");
	return -1;
}

static void wait_polls(void **state)
{
	struct kube_client *c;
	json_t *r;
	struct gs_error err;
	long long t0;

	(void)state;
	NEED_PEER(plain);
	c = client(NULL, NULL);
	/* Two 404s (absent), then the object. */
	assert_int_equal(
		kube_wait(c, "/flaky/w404/2/404", wait_for_attempts, NULL, 5000, 20, &r, &err), 0);
	assert_int_equal(json_integer_value(json_object_get(r, "attempts")), 3);
	json_decref(r);
	t0 = ms_now();
	assert_int_equal(
		kube_wait(c, "/fixture/status-404-notfound/404", never, NULL, 300, 50, &r, &err),
		-1);
	assert_true(ms_now() - t0 >= 300);
	assert_null(r);
	assert_non_null(strstr(err.msg, "timed out after 0."));
	assert_non_null(strstr(err.msg, "s waiting for /fixture/status-404-notfound/404: pod "
					"\"nope\" does not exist"));
	assert_int_equal(kube_wait(c, "/echo", refuse, NULL, 300, 50, NULL, &err), -1);
	assert_string_equal(err.msg, "waiting for /echo: pod failed");
	/* Errors other than 404 end the wait at once. */
	assert_int_equal(
		kube_wait(c, "/fixture/status-403-rbac/403", never, NULL, 5000, 50, NULL, &err),
		KUBE_E_STATUS);
	kube_client_free(c);
}

/* Connections the plain peer accepted so far, asked over a new one. */
static long plain_connections(void)
{
	struct kube_client *c = client(NULL, NULL);
	long n;
	json_t *r;
	struct gs_error err;

	assert_int_equal(kube_get(c, "/connections", &r, &err), 0);
	n = (long)json_integer_value(json_object_get(r, "count"));
	json_decref(r);
	kube_client_free(c);
	return n;
}

/* An https:// URL at a server that speaks plain HTTP: one attempt, and why. */
static void tls_plain_http_server(void **state)
{
	struct tracelog tl = {0};
	struct kube_client_opts o = {
		.deadline_ms = 5000, .backoff_base_ms = 20, .trace = on_trace, .trace_arg = &tl};
	struct kube_config *cfg = cfg_for("https", plain.port);
	struct kube_client *c;
	struct gs_error err;
	char want[256];
	long before;

	(void)state;
	NEED_PEER(plain);
	before = plain_connections();
	assert_int_equal(kube_client_new(&c, cfg, &o, &err), 0);
	kube_config_free(cfg);
	assert_int_equal(kube_get(c, "/echo", NULL, &err), -1);
	kube_client_free(c);
	snprintf(want, sizeof(want),
		 "GET https://127.0.0.1:%d/echo: the server at https://127.0.0.1:%d answered in "
		 "plain HTTP, not TLS (is the URL's scheme right?)",
		 plain.port, plain.port);
	assert_string_equal(err.msg, want);
	assert_int_equal(tl.retries, 0);
	assert_int_equal(plain_connections() - before, 2); /* one attempt, one count */
}

static void bad_arguments(void **state)
{
	struct kube_config *cfg;
	struct kube_client *c;
	struct gs_error err;

	(void)state;
	cfg = cfg_for("http", 1);
	assert_int_equal(kube_client_new(&c, cfg, NULL, &err), 0);
	assert_int_equal(kube_get(c, "api/v1/nodes", NULL, &err), -1);
	assert_string_equal(err.msg, "invalid API path \"api/v1/nodes\"");
	assert_int_equal(kube_get(c, "/api/v1/nodes?labelSelector=a b", NULL, &err), -1);
	/* A path never reaches the terminal raw: no forged line. */
	assert_int_equal(kube_get(c, "/api/v1/namespaces/a\nOK b", NULL, &err), -1);
	assert_string_equal(err.msg, "invalid API path \"/api/v1/namespaces/a\\nOK b\"");
	assert_int_equal(kube_request(c, "get", "/x", NULL, NULL, 0, NULL, NULL, &err), -1);
	kube_client_free(c);

	free(cfg->server);
	cfg->server = gs_xstrdup("https://admin:hunter2@127.0.0.1:6443");
	assert_int_equal(kube_client_new(&c, cfg, NULL, &err), -1);
	assert_null(c);
	assert_string_equal(err.msg,
			    "server \"https://127.0.0.1:6443\": credentials in the URL are "
			    "not allowed (not shown); use a token or client certificate");
	free(cfg->server);
	cfg->server = gs_xstrdup("https://127.0.0.1:6443");
	cfg->proxy_url = gs_xstrdup("gopher://u:SECRET@proxy/");
	assert_int_equal(kube_client_new(&c, cfg, NULL, &err), -1);
	assert_string_equal(
		err.msg, "proxy \"gopher://proxy/\" must be an http://, https:// or socks5:// URL");
	free(cfg->proxy_url);
	cfg->proxy_url = NULL;
	free(cfg->server);
	cfg->server = gs_xstrdup("ftp://127.0.0.1");
	assert_int_equal(kube_client_new(&c, cfg, NULL, &err), -1);
	assert_string_equal(err.msg, "server \"ftp://127.0.0.1\": scheme must be https or http");
	kube_config_free(cfg);
}

/* No message quotes a URL's userinfo, query or fragment, whatever else is wrong with it. */
static void server_url_never_echoed(void **state)
{
	static const struct {
		const char *server, *msg;
	} cases[] = {
		{"https://admin:pw-SECRET@127.0.0.1:6443/",
		 "server \"https://127.0.0.1:6443/\": credentials in the URL are not allowed (not "
		 "shown); use a token or client certificate"},
		{"https://127.0.0.1:6443/?token=SECRET",
		 "server \"https://127.0.0.1:6443/\": a query or fragment is not allowed (not "
		 "shown)"},
		{"https://127.0.0.1:6443/prefix#SECRET",
		 "server \"https://127.0.0.1:6443/prefix\": a query or fragment is not allowed "
		 "(not "
		 "shown)"},
		{"ftp://u:SECRET@h/?t=SECRET", "server \"ftp://h/\": scheme must be https or http"},
		{"https://u:SECRET@[::1/?t=SECRET", "server \"https://[::1/\" is not a valid URL"},
		/* A '/' inside the password: all before the last '@' is dropped. */
		{"https://u:SEC/RET@h:1", "server \"https://h:1\" is not a valid URL"},
		{"https://h:1/\r\nX-Injected: SECRET",
		 "server \"https://h:1/%0D%0AX-Injected:%20SECRET\" must not contain control "
		 "characters (found 0x0d)"},
	};
	struct kube_config *cfg = cfg_for("https", 1);
	struct kube_client *c;
	struct gs_error err;

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		free(cfg->server);
		cfg->server = gs_xstrdup(cases[i].server);
		assert_int_equal(kube_client_new(&c, cfg, NULL, &err), -1);
		assert_string_equal(err.msg, cases[i].msg);
		if (i < 5)
			assert_null(strstr(err.msg, "SECRET"));
	}
	kube_config_free(cfg);
}

/* A proxy from the environment that is no URL is refused without its userinfo. */
static void env_proxy_userinfo_masked(void **state)
{
	struct kube_client_opts o = {.max_attempts = 1};
	struct kube_config *cfg = cfg_for("http", 1);
	struct kube_client *c;
	struct gs_error err;
	int rc;

	(void)state;
	free(cfg->server);
	cfg->server = gs_xstrdup("http://0.0.0.0:1"); /* no loopback: the proxy applies */
	setenv("http_proxy", "u:pw-SECRET@[x", 1);
	rc = kube_client_new(&c, cfg, &o, &err);
	unsetenv("http_proxy");
	kube_config_free(cfg);
	assert_int_equal(rc, -1);
	assert_null(strstr(err.msg, "SECRET"));
	assert_string_equal(err.msg, "proxy \"http://[x\" (from http_proxy) is not a valid URL");
}

/* A CR or LF in a credential would add header lines: refused, never quoted. */
static void header_values_refused(void **state)
{
	static const char *const fields[] = {"the bearer token", "the username", "the password"};
	struct kube_client *c;
	struct gs_error err;

	(void)state;
	for (size_t i = 0; i < 3; i++) {
		struct kube_config *cfg = cfg_for("https", 1);
		char want[160];
		char **slot = i == 0 ? &cfg->token : i == 1 ? &cfg->username : &cfg->password;
		if (i == 2)
			cfg->username = gs_xstrdup("admin");
		*slot = gs_xstrdup("tok-SECRET\r\nX-Injected: 1");
		assert_int_equal(kube_client_new(&c, cfg, NULL, &err), -1);
		snprintf(want, sizeof(want),
			 "%s must not contain control characters (found 0x0d; value not shown)",
			 fields[i]);
		assert_string_equal(err.msg, want);
		kube_config_free(cfg);
	}
	{
		struct kube_config *cfg = cfg_for("https", 1);
		cfg->token = gs_xstrdup("tok\tSECRET");
		assert_int_equal(kube_client_new(&c, cfg, NULL, &err), -1);
		assert_null(strstr(err.msg, "SECRET"));
		kube_config_free(cfg);
	}
}

static void raw_request(void **state)
{
	struct kube_client *c;
	char *body;
	size_t len;
	struct gs_error err;

	(void)state;
	NEED_PEER(plain);
	c = client(NULL, NULL);
	assert_int_equal(
		kube_request(c, "POST", "/echo/raw", "text/plain", "hi", 2, &body, &len, &err), 0);
	assert_int_equal(len, strlen(body));
	assert_non_null(strstr(body, "\"body\": \"hi\""));
	assert_non_null(strstr(body, "\"content-type\": \"text/plain\""));
	free(body);
	kube_client_free(c);
}

static void open_from_kubeconfig(void **state)
{
	char path[] = "/tmp/gs-kubeclient-kc-XXXXXX";
	struct kube_config_opts o = {
		.kubeconfig = path, .namespace = "gpu-share", .request_timeout_ms = 300};
	struct kube_client_opts co = {.deadline_ms = 400};
	struct kube_client *c;
	struct gs_error err;
	json_t *r;
	FILE *f;
	int fd;
	long long t0;

	(void)state;
	NEED_PEER(plain);
	fd = mkstemp(path);
	assert_true(fd >= 0);
	f = fdopen(fd, "w");
	fprintf(f,
		"apiVersion: v1\nkind: Config\ncurrent-context: peer\n"
		"clusters:\n- name: peer\n  cluster:\n    server: http://127.0.0.1:%d\n"
		"users:\n- name: u\n  user:\n    token: from-kubeconfig\n"
		"contexts:\n- name: peer\n  context: {cluster: peer, user: u}\n",
		plain.port);
	fclose(f);
	assert_int_equal(kube_client_open(&c, &o, &co, &err), 0);
	unlink(path);
	assert_string_equal(kube_client_namespace(c), "gpu-share");
	assert_int_equal(kube_get(c, "/echo", &r, &err), 0);
	assert_string_equal(hdr(r, "authorization"), "Bearer from-kubeconfig");
	json_decref(r);
	/* --request-timeout reaches the client. */
	t0 = ms_now();
	assert_int_equal(kube_get(c, "/slow/2000", NULL, &err), -1);
	assert_true(ms_now() - t0 < 1000);
	kube_client_free(c);

	assert_int_equal(kube_client_open(&c, &o, NULL, &err), -1);
	assert_null(c);
	assert_non_null(strstr(err.msg, "No such file or directory"));
}

static void write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

static void token_file_rotation(void **state)
{
	char path[] = "/tmp/gs-kubeclient-token-XXXXXX";
	/* 400 ms: the "not yet due" step must fit in it, under ASan on a busy machine too. */
	struct kube_client_opts o = {.token_reread_ms = 400};
	struct kube_config *cfg;
	struct kube_client *c;
	struct gs_error err;
	struct timespec later[2], started, now;
	json_t *r;
	int fd;

	(void)state;
	NEED_PEER(plain);
	fd = mkstemp(path);
	assert_true(fd >= 0);
	close(fd);
	write_file(path, "first-token\n");
	cfg = cfg_for("http", plain.port);
	cfg->token = gs_xstrdup("first-token");
	cfg->token_file = gs_xstrdup(path);
	clock_gettime(CLOCK_MONOTONIC, &started);
	assert_int_equal(kube_client_new(&c, cfg, &o, &err), 0);
	kube_config_free(cfg);
	assert_int_equal(kube_get(c, "/echo", &r, &err), 0);
	assert_string_equal(hdr(r, "authorization"), "Bearer first-token");
	json_decref(r);
	/* The kubelet swaps the file; a new mtime is what the client looks for. */
	write_file(path, "  rotated-token\n");
	clock_gettime(CLOCK_REALTIME, &later[0]);
	later[0].tv_sec += 5;
	later[1] = later[0];
	assert_int_equal(utimensat(AT_FDCWD, path, later, 0), 0);
	assert_int_equal(kube_get(c, "/echo", &r, &err), 0);
	clock_gettime(CLOCK_MONOTONIC, &now);
	/*
	 * Not yet due: judged only when the machine was quick enough for the
	 * interval not to have passed (valgrind on a loaded machine is not).
	 */
	if ((now.tv_sec - started.tv_sec) * 1000 + (now.tv_nsec - started.tv_nsec) / 1000000 <
	    o.token_reread_ms)
		assert_string_equal(hdr(r, "authorization"), "Bearer first-token");
	json_decref(r);
	nanosleep(&(struct timespec){0, 500 * 1000 * 1000}, NULL);
	assert_int_equal(kube_get(c, "/echo", &r, &err), 0);
	assert_string_equal(hdr(r, "authorization"), "Bearer rotated-token");
	json_decref(r);
	/* A token that would split the header keeps the token in use, too. */
	write_file(path, "  tok-SECRET\r\nX-Injected: 1\n");
	later[0].tv_sec += 5;
	later[1] = later[0];
	assert_int_equal(utimensat(AT_FDCWD, path, later, 0), 0);
	nanosleep(&(struct timespec){0, 500 * 1000 * 1000}, NULL);
	assert_int_equal(kube_get(c, "/echo", &r, &err), 0);
	assert_string_equal(hdr(r, "authorization"), "Bearer rotated-token");
	assert_null(hdr(r, "x-injected"));
	json_decref(r);
	/* An unreadable file keeps the token in use. */
	unlink(path);
	nanosleep(&(struct timespec){0, 500 * 1000 * 1000}, NULL);
	assert_int_equal(kube_get(c, "/echo", &r, &err), 0);
	assert_string_equal(hdr(r, "authorization"), "Bearer rotated-token");
	json_decref(r);
	kube_client_free(c);
}

/* client-go: a 401 makes the next request look at the token file, not at the next minute. */
static void token_file_after_401(void **state)
{
	char path[] = "/tmp/gs-kubeclient-token-XXXXXX";
	struct kube_client_opts o = {.token_reread_ms = 3600 * 1000};
	struct kube_config *cfg;
	struct kube_client *c;
	struct gs_error err;
	struct timespec later[2];
	json_t *r;
	int fd;

	(void)state;
	NEED_PEER(plain);
	fd = mkstemp(path);
	assert_true(fd >= 0);
	close(fd);
	write_file(path, "first-token\n");
	cfg = cfg_for("http", plain.port);
	cfg->token = gs_xstrdup("first-token");
	cfg->token_file = gs_xstrdup(path);
	assert_int_equal(kube_client_new(&c, cfg, &o, &err), 0);
	kube_config_free(cfg);
	write_file(path, "rotated-token\n");
	clock_gettime(CLOCK_REALTIME, &later[0]);
	later[0].tv_sec += 5;
	later[1] = later[0];
	assert_int_equal(utimensat(AT_FDCWD, path, later, 0), 0);
	/* Rotated, but not due for an hour. */
	assert_int_equal(kube_get(c, "/echo", &r, &err), 0);
	assert_string_equal(hdr(r, "authorization"), "Bearer first-token");
	json_decref(r);
	/* The old token refused: the next request takes the file's. */
	assert_int_equal(kube_get(c, "/flaky/unauthorized/1/401", NULL, &err), KUBE_E_STATUS);
	assert_int_equal(kube_last_status(c)->code, 401);
	assert_int_equal(kube_get(c, "/echo", &r, &err), 0);
	assert_string_equal(hdr(r, "authorization"), "Bearer rotated-token");
	json_decref(r);
	unlink(path);
	kube_client_free(c);
}

/* ---- proxies -------------------------------------------------------------------------- */

static const char *const proxy_vars[] = {"HTTP_PROXY",	"http_proxy", "HTTPS_PROXY",
					 "https_proxy", "NO_PROXY",   "no_proxy",
					 "ALL_PROXY",	"all_proxy",  "REQUEST_METHOD"};

static void clear_proxy_env(void)
{
	for (size_t i = 0; i < sizeof(proxy_vars) / sizeof(proxy_vars[0]); i++)
		unsetenv(proxy_vars[i]);
}

/* recording_proxy.py, with the log of what it was asked for. */
struct proxy {
	struct peer p;
	char log[64];
	char url[64];
};

/* The running proxy, stopped (and the environment cleared) after each proxy test. */
static struct proxy px;

static int proxy_teardown(void **state)
{
	(void)state;
	stop_peer(&px.p);
	if (px.log[0])
		unlink(px.log);
	px.log[0] = '\0';
	clear_proxy_env();
	return 0;
}

/* Start recording_proxy.py as px with an empty log; false when it cannot run. */
static bool proxy_start(void)
{
	const char *args[2] = {px.log, NULL};
	int fd;

	memset(&px.p, 0, sizeof(px.p));
	snprintf(px.log, sizeof(px.log), "/tmp/gs-proxy-log-XXXXXX");
	fd = mkstemp(px.log);
	if (fd < 0)
		return false;
	close(fd);
	if (start_script(&px.p, PROXY, args) != 0) {
		unlink(px.log);
		px.log[0] = '\0';
		return false;
	}
	snprintf(px.url, sizeof(px.url), "http://127.0.0.1:%d", px.p.port);
	return true;
}

/* One line per request the proxy was asked for (caller frees). */
static char *proxy_log(void)
{
	size_t n;

	return slurp(px.log, &n);
}

static int log_lines(void)
{
	char *s = proxy_log();
	int n = 0;

	for (char *p = s; *p; p++)
		n += *p == '\n';
	free(s);
	return n;
}

/*
 * GET /echo from server (a URL) with a bearer token and the kubeconfig's
 * proxy-url (both may be NULL): the call's result, or -9 when the client
 * could not be made (err says why).
 */
static int get_echo(const char *server, const char *token, const char *proxy_url,
		    struct tracelog *tl, struct gs_error *err)
{
	struct kube_client_opts o = {
		.deadline_ms = 5000, .backoff_base_ms = 20, .backoff_max_ms = 100};
	struct kube_config *cfg = calloc(1, sizeof(*cfg));
	struct kube_client *c;
	int rc;

	if (tl) {
		o.trace = on_trace;
		o.trace_arg = tl;
	}
	cfg->server = gs_xstrdup(server);
	if (token)
		cfg->token = gs_xstrdup(token);
	if (proxy_url)
		cfg->proxy_url = gs_xstrdup(proxy_url);
	rc = kube_client_new(&c, cfg, &o, err);
	kube_config_free(cfg);
	if (rc != 0)
		return -9;
	rc = kube_get(c, "/echo", NULL, err);
	kube_client_free(c);
	return rc;
}

/*
 * Loopback is never proxied (Go's useProxy), whatever the environment says:
 * the bearer token goes to the server, not to the proxy. libcurl alone
 * would hand both to http_proxy or ALL_PROXY.
 */
static void proxy_loopback_bypassed(void **state)
{
	static const char *const vars[] = {"http_proxy",  "HTTP_PROXY", "https_proxy",
					   "HTTPS_PROXY", "ALL_PROXY",	"all_proxy"};
	struct tracelog tl = {0};
	struct gs_error err;
	char url[64], *log;

	(void)state;
	NEED_PEER(plain);
	if (!proxy_start())
		skip();
	for (size_t i = 0; i < sizeof(vars) / sizeof(vars[0]); i++)
		setenv(vars[i], px.url, 1);
	snprintf(url, sizeof(url), "http://127.0.0.1:%d", plain.port);
	assert_int_equal(get_echo(url, "tok-loopback", NULL, &tl, &err), 0);
	assert_non_null(strstr(tl.last, "(attempt 1)"));
	snprintf(url, sizeof(url), "http://localhost:%d", plain.port);
	assert_int_equal(get_echo(url, "tok-loopback", NULL, NULL, &err), 0);
	log = proxy_log();
	assert_string_equal(log, "");
	free(log);
}

/* HTTP_PROXY, upper case, wins over http_proxy (libcurl reads only the lower case). */
static void proxy_http_upper_case(void **state)
{
	struct gs_error err;
	char url[64], want[128], dead[64], *log;
	int port = closed_port();

	(void)state;
	NEED_PEER(plain);
	if (!port || !proxy_start())
		skip();
	snprintf(dead, sizeof(dead), "http://127.0.0.1:%d", port);
	setenv("HTTP_PROXY", px.url, 1);
	setenv("http_proxy", dead, 1);
	/* 0.0.0.0 reaches this machine, and is no loopback address. */
	snprintf(url, sizeof(url), "http://0.0.0.0:%d", plain.port);
	assert_int_equal(get_echo(url, NULL, NULL, NULL, &err), 0);
	log = proxy_log();
	snprintf(want, sizeof(want), "GET http://0.0.0.0:%d/echo auth=none\n", plain.port);
	assert_string_equal(log, want);
	free(log);
}

/* ALL_PROXY is no variable of Go's: nothing goes to it. */
static void proxy_all_proxy_ignored(void **state)
{
	struct gs_error err;
	char url[64];

	(void)state;
	NEED_PEER(plain);
	if (!proxy_start())
		skip();
	setenv("ALL_PROXY", px.url, 1);
	setenv("all_proxy", px.url, 1);
	snprintf(url, sizeof(url), "http://0.0.0.0:%d", plain.port);
	assert_int_equal(get_echo(url, NULL, NULL, NULL, &err), 0);
	assert_int_equal(log_lines(), 0);
}

/*
 * NO_PROXY as Go reads it, where libcurl reads it otherwise: a port,
 * upper case before lower case, a leading dot for subdomains only.
 * http_proxy (which libcurl would use too) points at the proxy.
 */
static void proxy_no_proxy_rules(void **state)
{
	struct {
		const char *upper, *lower, *host;
		bool proxied;
	} cases[] = {
		{"0.0.0.0:%d", NULL, "0.0.0.0", false},		    /* the server's port */
		{"0.0.0.0:1", NULL, "0.0.0.0", true},		    /* another port */
		{"0.0.0.0", "elsewhere.invalid", "0.0.0.0", false}, /* NO_PROXY first */
		{"10.0.0.0/8, 0.0.0.0/32", NULL, "0.0.0.0", false}, /* a CIDR */
		{NULL, "*", "0.0.0.0", false},
		/* apiserver.invalid resolves only through the proxy (it dials 127.0.0.1). */
		{".apiserver.invalid", NULL, "apiserver.invalid", true}, /* subdomains only */
		{"*.apiserver.invalid", NULL, "apiserver.invalid", true},
		{"other.invalid,apiserver.invalid:1", NULL, "apiserver.invalid", true},
	};

	(void)state;
	NEED_PEER(plain);
	if (!proxy_start())
		skip();
	setenv("http_proxy", px.url, 1);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct gs_error err;
		char url[96], entry[96];
		int before = log_lines(), rc;

		unsetenv("NO_PROXY");
		unsetenv("no_proxy");
		if (cases[i].upper) {
			snprintf(entry, sizeof(entry), cases[i].upper, plain.port);
			setenv("NO_PROXY", entry, 1);
		}
		if (cases[i].lower)
			setenv("no_proxy", cases[i].lower, 1);
		snprintf(url, sizeof(url), "http://%s:%d", cases[i].host, plain.port);
		rc = get_echo(url, NULL, NULL, NULL, &err);
		if (rc != 0 || (log_lines() - before == 1) != cases[i].proxied)
			fail_msg("NO_PROXY=%s no_proxy=%s %s: rc %d (%s), proxied %d, want %d",
				 cases[i].upper ? entry : "", cases[i].lower ? cases[i].lower : "",
				 url, rc, rc ? err.msg : "", log_lines() - before,
				 cases[i].proxied);
	}
}

/*
 * A credential for an http:// server would cross the proxy in clear text:
 * the client is not made, nothing is sent.
 */
static void proxy_refuses_clear_text_credentials(void **state)
{
	struct kube_config *cfg;
	struct kube_client *c;
	struct gs_error err;
	char url[64], want[512];

	(void)state;
	NEED_PEER(plain);
	if (!proxy_start())
		skip();
	setenv("http_proxy", px.url, 1);
	snprintf(url, sizeof(url), "http://0.0.0.0:%d", plain.port);
	assert_int_equal(get_echo(url, "tok-SECRET", NULL, NULL, &err), -9);
	snprintf(want, sizeof(want),
		 "refusing to send the bearer token for http://0.0.0.0:%d through the proxy "
		 "http://127.0.0.1:%d (from http_proxy) in clear text: use an https:// server, or "
		 "name the host in NO_PROXY",
		 plain.port, px.p.port);
	assert_string_equal(err.msg, want);
	/* Basic credentials through a kubeconfig's proxy-url alike. */
	cfg = cfg_for("http", plain.port);
	cfg->username = gs_xstrdup("u");
	cfg->password = gs_xstrdup("pw-SECRET");
	cfg->proxy_url = gs_xstrdup(px.url);
	assert_int_equal(kube_client_new(&c, cfg, NULL, &err), -1);
	kube_config_free(cfg);
	snprintf(want, sizeof(want),
		 "refusing to send the basic credentials for http://127.0.0.1:%d through the proxy "
		 "http://127.0.0.1:%d (the cluster's proxy-url) in clear text: use an https:// "
		 "server, or drop the cluster's proxy-url",
		 plain.port, px.p.port);
	assert_string_equal(err.msg, want);
	/* Without a credential the request goes through. */
	assert_int_equal(get_echo(url, NULL, NULL, NULL, &err), 0);
	assert_int_equal(log_lines(), 1);
}

/* A kubeconfig's proxy-url carries every request: neither NO_PROXY nor loopback apply. */
static void proxy_url_wins(void **state)
{
	struct gs_error err;
	char url[64], want[128], *log;

	(void)state;
	NEED_PEER(plain);
	if (!proxy_start())
		skip();
	setenv("NO_PROXY", "*", 1);
	snprintf(url, sizeof(url), "http://127.0.0.1:%d", plain.port);
	assert_int_equal(get_echo(url, NULL, px.url, NULL, &err), 0);
	log = proxy_log();
	snprintf(want, sizeof(want), "GET http://127.0.0.1:%d/echo auth=none\n", plain.port);
	assert_string_equal(log, want);
	free(log);
}

/* A proxy that refuses: kubectl's words about the proxy, one attempt. */
static void proxy_refused_fails_at_once(void **state)
{
	struct tracelog tl = {0};
	struct gs_error err;
	char dead[64], want[256];
	int port = closed_port();

	(void)state;
	if (!port)
		skip();
	snprintf(dead, sizeof(dead), "127.0.0.1:%d", port); /* no scheme: http:// */
	setenv("HTTP_PROXY", dead, 1);
	assert_int_equal(get_echo("http://0.0.0.0:1", NULL, NULL, &tl, &err), -1);
	snprintf(want, sizeof(want),
		 "The connection to the proxy 127.0.0.1:%d (from HTTP_PROXY) was refused - did "
		 "you specify the right host or port?",
		 port);
	assert_string_equal(err.msg, want);
	assert_int_equal(tl.attempts, 1);
}

/* ---- TLS ------------------------------------------------------------------------------- */

static int setup_tls(void **state)
{
	char cmd[256], cert[128], key[128], ca[128];
	const char *args[6] = {"--tls", cert, key, "--client-ca", ca, NULL};

	(void)state;
	snprintf(tls.dir, sizeof(tls.dir), "/tmp/gs-kubeclient-XXXXXX");
	tls.port = 0;
	if (!mkdtemp(tls.dir))
		return 0;
	snprintf(cmd, sizeof(cmd), DATA "/mkpki.sh %s >/dev/null 2>&1", tls.dir);
	if (system(cmd) != 0)
		return 0;
	snprintf(cert, sizeof(cert), "%s/srv.crt", tls.dir);
	snprintf(key, sizeof(key), "%s/srv.key", tls.dir);
	snprintf(ca, sizeof(ca), "%s/ca.crt", tls.dir);
	if (start_peer(&tls, args) != 0)
		tls.port = 0;
	{
		const char *args12[7] = {"--tls", cert, key, "--client-ca", ca, "--tls12", NULL};
		if (start_peer(&tls12, args12) != 0)
			tls12.port = 0;
	}
	return 0;
}

static int teardown_tls(void **state)
{
	char cmd[128];

	(void)state;
	stop_peer(&tls);
	stop_peer(&tls12);
	if (tls.dir[0]) {
		snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tls.dir);
		if (system(cmd) != 0)
			return -1;
	}
	return 0;
}

static void load_pem(struct kube_pem *p, const char *name)
{
	char path[160];

	snprintf(path, sizeof(path), "%s/%s", tls.dir, name);
	p->data = (unsigned char *)slurp(path, &p->len);
	p->origin = gs_xstrdup(path);
}

static struct kube_config *tls_cfg_at(int port, const char *ca, bool client_cert)
{
	struct kube_config *cfg = cfg_for("https", port);

	if (ca)
		load_pem(&cfg->ca, ca);
	if (client_cert) {
		load_pem(&cfg->client_cert, "cli.crt");
		load_pem(&cfg->client_key, "cli.key");
	}
	return cfg;
}

static struct kube_config *tls_cfg(const char *ca, bool client_cert)
{
	return tls_cfg_at(tls.port, ca, client_cert);
}

static int tls_get(struct kube_config *cfg, json_t **r, struct tracelog *tl, struct gs_error *err)
{
	struct kube_client_opts o = {
		.deadline_ms = 5000, .backoff_base_ms = 20, .trace = on_trace, .trace_arg = tl};
	struct kube_client *c;
	int rc;

	assert_int_equal(kube_client_new(&c, cfg, &o, err), 0);
	kube_config_free(cfg);
	rc = kube_get(c, "/echo", r, err);
	kube_client_free(c);
	return rc;
}

/*
 * TCP connections the TLS peer accepted so far, asked over a new connection
 * of a client it accepts (so each call adds one itself).
 */
static long tls_connections_at(int port)
{
	struct kube_config *cfg = tls_cfg_at(port, "ca.crt", true);
	struct kube_client *c;
	struct gs_error err;
	json_t *r;
	long n;

	assert_int_equal(kube_client_new(&c, cfg, NULL, &err), 0);
	kube_config_free(cfg);
	assert_int_equal(kube_get(c, "/connections", &r, &err), 0);
	n = (long)json_integer_value(json_object_get(r, "count"));
	json_decref(r);
	kube_client_free(c);
	return n;
}

static long tls_connections(void)
{
	return tls_connections_at(tls.port);
}

static void tls_verified_with_client_cert(void **state)
{
	struct tracelog tl = {0};
	struct gs_error err;
	json_t *r;

	(void)state;
	NEED_PEER(tls);
	assert_int_equal(tls_get(tls_cfg("ca.crt", true), &r, &tl, &err), 0);
	assert_string_equal(json_string_value(json_object_get(r, "clientCN")), "gs-test-client");
	json_decref(r);
}

static void tls_server_name(void **state)
{
	struct tracelog tl = {0};
	struct kube_config *cfg;
	struct gs_error err;
	json_t *r;

	(void)state;
	NEED_PEER(tls);
	/* The certificate names "kubernetes"; the address is 127.0.0.1. */
	cfg = tls_cfg("ca.crt", true);
	cfg->tls_server_name = gs_xstrdup("kubernetes");
	assert_int_equal(tls_get(cfg, &r, &tl, &err), 0);
	assert_non_null(hdr(r, "host"));
	assert_memory_equal(hdr(r, "host"), "kubernetes:", 11);
	json_decref(r);

	cfg = tls_cfg("ca.crt", true);
	cfg->tls_server_name = gs_xstrdup("wrong.example");
	assert_int_equal(tls_get(cfg, &r, &tl, &err), -1);
	assert_non_null(strstr(err.msg, "https://wrong.example:"));
	assert_non_null(strstr(err.msg, ": tls: failed to verify certificate: x509: certificate is "
					"not valid for wrong.example (server verified against "
					"the CA in "));
	assert_int_equal(tl.retries, 0); /* verification failures are final */
}

static void tls_wrong_ca(void **state)
{
	struct tracelog tl = {0};
	struct gs_error err;
	json_t *r;
	char want[512];
	long before;

	(void)state;
	NEED_PEER(tls);
	before = tls_connections();
	assert_int_equal(tls_get(tls_cfg("other.crt", true), &r, &tl, &err), -1);
	snprintf(want, sizeof(want),
		 "GET https://127.0.0.1:%d/echo: tls: failed to verify certificate: x509: "
		 "certificate signed by unknown authority (server verified against the CA in "
		 "%s/other.crt; libcurl: SSL certificate problem: ",
		 tls.port, tls.dir);
	assert_memory_equal(err.msg, want, strlen(want));
	assert_int_equal(tl.retries, 0);
	assert_int_equal(tls_connections() - before, 2); /* one attempt, one count */
	/* No CA at all: the system store does not know our test CA either. */
	assert_int_equal(tls_get(tls_cfg(NULL, true), &r, &tl, &err), -1);
	assert_non_null(strstr(err.msg, "x509: certificate signed by unknown authority (server "
					"verified against the system trust store; libcurl: "));
}

static void tls_insecure(void **state)
{
	struct tracelog tl = {0};
	struct kube_config *cfg;
	struct gs_error err;
	json_t *r;

	(void)state;
	NEED_PEER(tls);
	cfg = tls_cfg(NULL, true);
	cfg->insecure_skip_tls_verify = true;
	assert_int_equal(tls_get(cfg, &r, &tl, &err), 0);
	assert_string_equal(json_string_value(json_object_get(r, "clientCN")), "gs-test-client");
	json_decref(r);
}

static void tls_client_cert_required(void **state)
{
	struct tracelog tl = {0};
	struct gs_error err;
	json_t *r;

	(void)state;
	NEED_PEER(tls);
	/*
	 * The peer asks for a certificate, gets none and closes the connection:
	 * libcurl says "Send failure: Broken pipe", a receive error or
	 * "getpeername() failed", whichever the race gives; we say why, at once.
	 */
	for (int i = 0; i < 3; i++) {
		struct kube_config *cfg = tls_cfg("ca.crt", false);
		char want[256];
		long before = tls_connections();

		cfg->user = gs_xstrdup("admin");
		tl.retries = 0;
		assert_int_equal(tls_get(cfg, &r, &tl, &err), -1);
		snprintf(want, sizeof(want),
			 "GET https://127.0.0.1:%d/echo: the server at https://127.0.0.1:%d "
			 "requires "
			 "a client certificate and user \"admin\" has none",
			 tls.port, tls.port);
		assert_memory_equal(err.msg, want, strlen(want));
		assert_int_equal(tl.retries, 0);
		assert_int_equal(tls_connections() - before, 2); /* one attempt, one count */
	}
}

/* TLS 1.2: the refusal fails the handshake itself (CURLE_SSL_CONNECT_ERROR). */
static void tls12_client_cert_required(void **state)
{
	struct tracelog tl = {0};
	struct kube_config *cfg;
	struct gs_error err;
	char want[256];
	json_t *r;
	long before;

	(void)state;
	NEED_PEER(tls12);
	cfg = tls_cfg_at(tls12.port, "ca.crt", false);
	before = tls_connections_at(tls12.port);
	assert_int_equal(tls_get(cfg, &r, &tl, &err), -1);
	snprintf(want, sizeof(want),
		 "GET https://127.0.0.1:%d/echo: the server at https://127.0.0.1:%d requires a "
		 "client certificate and the configuration has none (TLS alert: handshake failure)",
		 tls12.port, tls12.port);
	assert_string_equal(err.msg, want);
	assert_int_equal(tl.retries, 0);
	assert_int_equal(tls_connections_at(tls12.port) - before, 2);
}

/*
 * https through a proxy is a CONNECT tunnel (the proxy sees no header), to
 * HTTPS_PROXY before https_proxy; with tls-server-name the tunnel goes to
 * the server's address and the certificate is checked against the name.
 */
static void tls_through_proxy_connect(void **state)
{
	struct tracelog tl = {0};
	struct kube_config *cfg;
	struct gs_error err;
	char dead[64], want[160], *log;
	json_t *r;
	int port = closed_port();

	(void)state;
	NEED_PEER(tls);
	if (!port || !proxy_start())
		skip();
	snprintf(dead, sizeof(dead), "http://127.0.0.1:%d", port);
	setenv("HTTPS_PROXY", px.url, 1);
	setenv("https_proxy", dead, 1);
	/* A name only the proxy resolves (it dials 127.0.0.1); the certificate holds it. */
	cfg = tls_cfg("ca.crt", true);
	free(cfg->server);
	cfg->server = gs_xasprintf("https://kubernetes:%d", tls.port);
	cfg->token = gs_xstrdup("tok-SECRET");
	assert_int_equal(tls_get(cfg, &r, &tl, &err), 0);
	assert_string_equal(hdr(r, "authorization"), "Bearer tok-SECRET");
	json_decref(r);
	cfg = tls_cfg("ca.crt", true);
	free(cfg->server);
	cfg->server = gs_xasprintf("https://0.0.0.0:%d", tls.port);
	cfg->tls_server_name = gs_xstrdup("kubernetes");
	assert_int_equal(tls_get(cfg, &r, &tl, &err), 0);
	json_decref(r);
	log = proxy_log();
	snprintf(want, sizeof(want), "CONNECT kubernetes:%d\nCONNECT 0.0.0.0:%d\n", tls.port,
		 tls.port);
	assert_string_equal(log, want);
	free(log);
}

/* http:// at a TLS port: the apiserver's Go answers 400, we say what it means. */
static void tls_port_spoken_to_in_http(void **state)
{
	struct tracelog tl = {0};
	struct kube_config *cfg;
	struct gs_error err;
	char want[256];
	json_t *r;
	long before;

	(void)state;
	NEED_PEER(tls);
	cfg = cfg_for("http", tls.port);
	before = tls_connections();
	assert_int_equal(tls_get(cfg, &r, &tl, &err), -1);
	snprintf(want, sizeof(want),
		 "GET http://127.0.0.1:%d/echo: the server at http://127.0.0.1:%d speaks TLS, not "
		 "plain HTTP (is the URL's scheme right? use https://)",
		 tls.port, tls.port);
	assert_string_equal(err.msg, want);
	assert_int_equal(tl.retries, 0);
	assert_int_equal(tls_connections() - before, 2);
}

static void tls_client_cert_refused(void **state)
{
	struct tracelog tl = {0};
	struct kube_config *cfg = NULL;
	struct gs_error err;
	char want[256];
	json_t *r;
	long before;

	(void)state;
	NEED_PEER(tls);
	/* A certificate from a CA the peer does not trust. */
	cfg = tls_cfg("ca.crt", false);
	load_pem(&cfg->client_cert, "other.crt");
	load_pem(&cfg->client_key, "other.key");
	before = tls_connections();
	assert_int_equal(tls_get(cfg, &r, &tl, &err), -1);
	snprintf(want, sizeof(want),
		 "GET https://127.0.0.1:%d/echo: the server at https://127.0.0.1:%d did not accept "
		 "the client certificate from %s/other.crt",
		 tls.port, tls.port, tls.dir);
	assert_memory_equal(err.msg, want, strlen(want));
	assert_int_equal(tl.retries, 0);
	assert_int_equal(tls_connections() - before, 2);
}

int main(void)
{
	const struct CMUnitTest offline[] = {
		cmocka_unit_test(status_quota_verbatim),
		cmocka_unit_test(status_fixtures),
		cmocka_unit_test(status_generic),
		cmocka_unit_test(bad_arguments),
		cmocka_unit_test(server_url_never_echoed),
		cmocka_unit_test(header_values_refused),
		cmocka_unit_test(env_proxy_userinfo_masked),
	};
	const struct CMUnitTest net[] = {
		cmocka_unit_test(get_headers_and_keepalive),
		cmocka_unit_test(basic_auth),
		cmocka_unit_test(echoed_credentials_masked),
		cmocka_unit_test(verbs_and_content_types),
		cmocka_unit_test(status_failures_reach_caller),
		cmocka_unit_test(retry_idempotent_on_5xx),
		cmocka_unit_test(post_not_retried_on_5xx),
		cmocka_unit_test(retry_after_honoured_for_post),
		cmocka_unit_test(retry_after_beyond_deadline_gives_up),
		cmocka_unit_test(connection_loss),
		cmocka_unit_test(connect_refused_retried_until_deadline),
		cmocka_unit_test(connect_refused_fails_at_once),
		cmocka_unit_test(unresolvable_fails_at_once),
		cmocka_unit_test(request_timeout),
		cmocka_unit_test(response_cap),
		cmocka_unit_test(list_follows_continue),
		cmocka_unit_test(list_restarts_when_continue_expires),
		cmocka_unit_test(wait_polls),
		cmocka_unit_test(raw_request),
		cmocka_unit_test(open_from_kubeconfig),
		cmocka_unit_test(token_file_rotation),
		cmocka_unit_test(token_file_after_401),
		cmocka_unit_test(tls_plain_http_server),
		cmocka_unit_test_teardown(proxy_loopback_bypassed, proxy_teardown),
		cmocka_unit_test_teardown(proxy_http_upper_case, proxy_teardown),
		cmocka_unit_test_teardown(proxy_all_proxy_ignored, proxy_teardown),
		cmocka_unit_test_teardown(proxy_no_proxy_rules, proxy_teardown),
		cmocka_unit_test_teardown(proxy_refuses_clear_text_credentials, proxy_teardown),
		cmocka_unit_test_teardown(proxy_url_wins, proxy_teardown),
		cmocka_unit_test_teardown(proxy_refused_fails_at_once, proxy_teardown),
	};
	const struct CMUnitTest tlsnet[] = {
		cmocka_unit_test(tls_verified_with_client_cert),
		cmocka_unit_test(tls_server_name),
		cmocka_unit_test(tls_wrong_ca),
		cmocka_unit_test(tls_insecure),
		cmocka_unit_test(tls_client_cert_required),
		cmocka_unit_test(tls_client_cert_refused),
		cmocka_unit_test(tls12_client_cert_required),
		cmocka_unit_test(tls_port_spoken_to_in_http),
		cmocka_unit_test_teardown(tls_through_proxy_connect, proxy_teardown),
	};
	int fails = 0;

	/* The proxy tests set what they need; nothing from the caller's environment. */
	clear_proxy_env();
	fails += cmocka_run_group_tests(offline, NULL, NULL);
	fails += cmocka_run_group_tests(net, setup_plain, teardown_plain);
	fails += cmocka_run_group_tests(tlsnet, setup_tls, teardown_tls);
	return fails ? 1 : 0;
}
