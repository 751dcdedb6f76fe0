#include "kube/kubeclient.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "kube/kubeloop.h"
#include "model/kobj.h"
#include "base/banned.h"

#define WAIT_POLL_FLOOR_MS 1000L
#define STEP_MS 1000L /* one loop step at most: a retry's wait or the answer end it sooner */

struct kube_client {
	struct kube_conn *conn;
	struct kube_loop *loop; /* the calls' own, made at the first call */
	struct kube_status last;
	char *body; /* the last successful call's response */
	size_t len;
};

int kube_client_new(struct kube_client **out, const struct kube_config *cfg,
		    const struct kube_client_opts *opts, struct gs_error *err)
{
	struct kube_client *c;

	*out = NULL;
	c = gs_xcalloc(1, sizeof(*c));
	if (kube_conn_new(&c->conn, cfg, opts, err) < 0) {
		free(c);
		return -1;
	}
	kube_status_init(&c->last);
	*out = c;
	return 0;
}

int kube_client_open(struct kube_client **out, const struct kube_config_opts *opts,
		     const struct kube_client_opts *copts, struct gs_error *err)
{
	struct kube_config *cfg;
	int rc;

	*out = NULL;
	if (kube_config_load(&cfg, opts, err) != 0)
		return -1;
	rc = kube_client_new(out, cfg, copts, err);
	kube_config_free(cfg);
	return rc;
}

void kube_client_free(struct kube_client *c)
{
	if (!c)
		return;
	kube_loop_free(c->loop);
	kube_conn_free(c->conn);
	kube_status_release(&c->last);
	free(c->body);
	free(c);
}

const struct kube_status *kube_last_status(const struct kube_client *c)
{
	return &c->last;
}

const char *kube_client_namespace(const struct kube_client *c)
{
	return kube_conn_namespace(c->conn);
}

struct kube_conn *kube_client_conn(struct kube_client *c)
{
	return c->conn;
}

#define now_ms kube_loop_now

/* Between two polls of kube_wait: its interval is the caller's. */
static void sleep_ms(long long ms)
{
	struct timespec ts;

	if (ms <= 0)
		return;
	ts.tv_sec = (time_t)(ms / 1000);
	ts.tv_nsec = (long)(ms % 1000) * 1000000L;
	while (nanosleep(&ts, &ts) == -1 && errno == EINTR)
		;
}

/* ---- one call: a one-request run of the loop -------------------------------------------- */

static void set_last_transport(struct kube_client *c)
{
	kube_status_release(&c->last);
	kube_status_init(&c->last);
}

/* What the loop told of the call. */
struct call {
	struct kube_client *c;
	bool done;
	int rc;
	struct gs_error *err;
};

static void on_answer(void *arg, const struct kube_result *r)
{
	struct call *k = arg;
	struct kube_client *c = k->c;

	k->done = true;
	set_last_transport(c);
	free(c->body);
	c->body = NULL;
	c->len = 0;
	if (!r->error) {
		c->body = gs_xstrndup(r->body, r->len);
		c->len = r->len;
		k->rc = 0;
		return;
	}
	gs_error_set(k->err, "%s", r->error);
	if (r->st) {
		kube_status_release(&c->last);
		kube_status_copy(&c->last, r->st);
		k->rc = KUBE_E_STATUS;
	} else {
		k->rc = -1;
	}
}

static int invalid_path(const char *path, struct gs_error *err)
{
	char *q = kube_go_quote(path ? path : "", path ? strnlen(path, 200) : 0);

	gs_error_set(err, "invalid API path %s", q);
	free(q);
	return -1;
}

/* The calls' loop, made at the first: one request at a time, the client's response cap. */
static int loop_ready(struct kube_client *c, struct gs_error *err)
{
	struct kube_loop_opts lo = {.max_in_flight = 1,
				    .max_body_bytes = kube_conn_opts(c->conn)->max_response_bytes};

	return c->loop ? 0 : kube_loop_new(&c->loop, c->conn, &lo, err);
}

/* Step the loop until *done. */
static int run(struct kube_client *c, const bool *done, struct gs_error *err)
{
	while (!*done) {
		if (kube_loop_step(c->loop, NULL, 0, NULL, STEP_MS, err) < 0) {
			/* What was queued goes with the loop, its callbacks never called. */
			kube_loop_free(c->loop);
			c->loop = NULL;
			return -1;
		}
	}
	return 0;
}

/*
 * Perform method on path until its deadline, retrying as the policy says
 * (kube/kuberetry.h). On success c->body holds the response.
 */
static int do_request(struct kube_client *c, const char *method, const char *path,
		      const char *ctype, const char *req, size_t req_len, long long deadline,
		      struct gs_error *err)
{
	struct call k = {.c = c, .done = false, .rc = -1, .err = err};

	set_last_transport(c);
	if (!kube_path_valid(path))
		return invalid_path(path, err);
	if (loop_ready(c, err) < 0)
		return -1;
	if (kube_loop_request_by(c->loop, method, path, ctype, req, req ? req_len : 0, deadline,
				 on_answer, &k) < 0) {
		gs_error_set(err, "%s %s%s: cannot make a libcurl handle", method,
			     kube_conn_base_url(c->conn), path);
		return -1;
	}
	if (run(c, &k.done, err) < 0)
		return -1;
	return k.rc;
}

static int decode_body(struct kube_client *c, const char *method, const char *path, json_t **out,
		       struct gs_error *err)
{
	json_error_t jerr;
	json_t *v;

	if (!out)
		return 0;
	*out = NULL;
	if (!c->len) {
		*out = json_object();
		return 0;
	}
	v = json_loadb(c->body, c->len, JSON_DECODE_ANY, &jerr);
	if (!v) {
		gs_error_set(err, "%s %s: the response is not JSON: %s", method, path, jerr.text);
		return -1;
	}
	*out = v;
	return 0;
}

static int json_call(struct kube_client *c, const char *method, const char *path, const char *ctype,
		     const json_t *obj, json_t **out, long long deadline, struct gs_error *err)
{
	char *req = NULL;
	int rc;

	if (out)
		*out = NULL;
	if (obj) {
		req = json_dumps(obj, JSON_COMPACT | JSON_ENCODE_ANY);
		if (!req) {
			gs_error_set(err, "%s %s: cannot encode the request body", method, path);
			return -1;
		}
	}
	rc = do_request(c, method, path, ctype, req, req ? strlen(req) : 0, deadline, err);
	free(req);
	if (rc != 0)
		return rc;
	return decode_body(c, method, path, out, err);
}

static long long deadline_from_now(struct kube_client *c)
{
	return kube_loop_now() + kube_conn_opts(c->conn)->deadline_ms;
}

int kube_get(struct kube_client *c, const char *path, json_t **out, struct gs_error *err)
{
	return json_call(c, "GET", path, NULL, NULL, out, deadline_from_now(c), err);
}

int kube_create(struct kube_client *c, const char *path, const json_t *obj, json_t **out,
		struct gs_error *err)
{
	return json_call(c, "POST", path, "application/json", obj, out, deadline_from_now(c), err);
}

int kube_put(struct kube_client *c, const char *path, const json_t *obj, json_t **out,
	     struct gs_error *err)
{
	return json_call(c, "PUT", path, "application/json", obj, out, deadline_from_now(c), err);
}

int kube_patch(struct kube_client *c, const char *path, enum kube_patch_type type,
	       const json_t *patch, json_t **out, struct gs_error *err)
{
	const char *ct = type == KUBE_PATCH_STRATEGIC ? "application/strategic-merge-patch+json"
			 : type == KUBE_PATCH_JSON    ? "application/json-patch+json"
						      : "application/merge-patch+json";

	if (!patch) {
		gs_error_set(err, "PATCH %s: no patch given", path ? path : "");
		return -1;
	}
	return json_call(c, "PATCH", path, ct, patch, out, deadline_from_now(c), err);
}

int kube_delete(struct kube_client *c, const char *path, const json_t *body, json_t **out,
		struct gs_error *err)
{
	return json_call(c, "DELETE", path, "application/json", body, out, deadline_from_now(c),
			 err);
}

int kube_request(struct kube_client *c, const char *method, const char *path,
		 const char *content_type, const char *req_body, size_t req_len, char **body,
		 size_t *len, struct gs_error *err)
{
	int rc;

	if (body)
		*body = NULL;
	if (len)
		*len = 0;
	if (!method || !method[0] ||
	    strspn(method, "ABCDEFGHIJKLMNOPQRSTUVWXYZ") != strlen(method)) {
		gs_error_set(err, "invalid HTTP method");
		return -1;
	}
	rc = do_request(c, method, path, content_type, req_body, req_len, deadline_from_now(c),
			err);
	if (rc != 0)
		return rc;
	if (body)
		*body = gs_xstrndup(c->body ? c->body : "", c->len);
	if (len)
		*len = c->len;
	return 0;
}

/* ---- LIST ------------------------------------------------------------------------------ */

/* What the loop told of the list. */
struct listing {
	struct call k;
	json_t *list;
};

static void on_list(void *arg, json_t *list, const struct kube_result *r)
{
	struct listing *x = arg;

	if (list) {
		x->k.done = true;
		x->k.rc = 0;
		x->list = list;
		set_last_transport(x->k.c);
		return;
	}
	on_answer(&x->k, r);
}

int kube_list(struct kube_client *c, const char *path, const struct kube_list_opts *lo,
	      json_t **out, struct gs_error *err)
{
	struct listing x = {.k = {.c = c, .done = false, .rc = -1, .err = err}, .list = NULL};

	*out = NULL;
	if (path && strchr(path, '?') && (strstr(path, "continue=") || strstr(path, "limit="))) {
		gs_error_set(err, "GET %s: kube_list sets limit and continue itself", path);
		return -1;
	}
	set_last_transport(c);
	if (!kube_path_valid(path))
		return invalid_path(path, err);
	if (loop_ready(c, err) < 0)
		return -1;
	if (kube_loop_list(c->loop, path, lo ? lo->label_selector : NULL,
			   lo ? lo->field_selector : NULL, deadline_from_now(c), on_list, &x) < 0) {
		gs_error_set(err, "GET %s%s: cannot make a libcurl handle",
			     kube_conn_base_url(c->conn), path);
		return -1;
	}
	if (run(c, &x.k.done, err) < 0)
		return -1;
	*out = x.list;
	return x.k.rc;
}

/* ---- wait ------------------------------------------------------------------------------ */

int kube_wait(struct kube_client *c, const char *path, kube_wait_fn pred, void *arg,
	      long timeout_ms, long interval_ms, json_t **out, struct gs_error *err)
{
	const struct kube_client_opts *o = kube_conn_opts(c->conn);
	long long start = now_ms(), deadline = start + (timeout_ms > 0 ? timeout_ms : 0);
	struct gs_error why;

	if (out)
		*out = NULL;
	if (interval_ms <= 0)
		interval_ms = 200;
	gs_error_clear(&why);
	for (;;) {
		json_t *obj = NULL;
		long long left = deadline - now_ms();
		int rc, r;

		/*
		 * One GET may retry within the wait's own deadline, but always
		 * gets a floor of one request (or a second) so the last poll
		 * is a real one.
		 */
		if (left < WAIT_POLL_FLOOR_MS)
			left = WAIT_POLL_FLOOR_MS < o->request_timeout_ms ? WAIT_POLL_FLOOR_MS
									  : o->request_timeout_ms;
		if (left > o->deadline_ms)
			left = o->deadline_ms;
		rc = json_call(c, "GET", path, NULL, NULL, &obj, now_ms() + left, err);
		if (rc == KUBE_E_STATUS && c->last.code == 404)
			obj = NULL;
		else if (rc != 0)
			return rc;
		gs_error_clear(&why);
		r = pred(obj, arg, &why);
		if (r > 0) {
			set_last_transport(c);
			if (out)
				*out = obj;
			else
				json_decref(obj);
			return 0;
		}
		json_decref(obj);
		if (r < 0) {
			gs_error_set(err, "waiting for %s: %s", path,
				     why.msg[0] ? why.msg : "the condition failed");
			return -1;
		}
		left = deadline - now_ms();
		if (left <= 0) {
			gs_error_set(err, "timed out after %.1fs waiting for %s%s%s",
				     (double)(now_ms() - start) / 1000.0, path,
				     why.msg[0] ? ": " : "", why.msg);
			return -1;
		}
		sleep_ms(left < interval_ms ? left : interval_ms);
	}
}
