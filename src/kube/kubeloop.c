#include "kube/kubeloop.h"

#include <errno.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

#include "base/escape.h"
#include "kube/curlapi.h"
#include "kube/kubelimit.h"
#include "model/kobj.h"
#include "base/banned.h"

#define DEF_IN_FLIGHT 64u
#define DEF_MIN_IN_FLIGHT 16u
#define DEF_PAGE 250u
#define DEF_MAX_BODY (32u * 1024 * 1024)
#define DEF_WATCH_TIMEOUT_S 300L
#define MAX_EXTRA_FDS 8u
#define SHORT_POLL_MS 10L /* poll timeout while a short request runs */

struct buf {
	char *p;
	size_t len, cap, max;
	bool overflow;
};

struct req {
	struct kube_loop *l;
	CURL *h;
	char *method, *url, *ctype, *body;
	size_t blen;
	struct curl_slist *hdrs;
	unsigned attempt, max_attempts;
	long long due;	    /* of the next attempt, while it waits */
	long long started;  /* the first attempt */
	long long t0;	    /* this attempt */
	long long deadline; /* no attempt or wait past it */
	struct buf resp;
	long retry_after; /* the header's seconds, 0 = none */
	struct kube_wire wire;
	kube_done_fn done;
	void (*drop)(void *arg); /* frees arg when the loop is freed before done */
	void *arg;
	struct kube_watch *w; /* a watch's list page or stream */
	bool stream;
	bool counted; /* takes a slot of max_in_flight */
	struct req *next;
};

struct timer {
	long long due;
	void (*fn)(void *arg);
	void *arg;
	struct timer *next;
};

struct kube_watch {
	struct kube_loop *l;
	char *path, *label_selector, *field_selector;
	struct kube_watch_ops ops;
	void *arg;
	char *rv;
	char *cont;
	unsigned failures;
	bool relist_pending, stream_failed, stopped, listing;
	bool unpaged; /* the next list without limit (a continue token expired) */
	struct kube_stream stream;
	struct req *active;
	struct kube_watch *next;
};

struct kube_loop {
	struct kube_conn *c;
	struct kube_loop_opts o;
	CURLM *multi;
	struct req *queue, *queue_tail; /* waiting for a slot */
	struct req *delayed;		/* waiting to retry */
	struct req *running;		/* in the multi handle */
	unsigned in_flight;		/* counted requests running */
	struct kube_limit limit;	/* how many may (kube/kubelimit.h) */
	unsigned short_running;		/* requests running that are no watch stream */
	size_t pending;			/* counted requests anywhere */
	struct timer *timers;
	struct kube_watch *watches;
	struct kube_loop_stats stats;
	uint64_t rng;
};

long long kube_loop_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

#define now_ms kube_loop_now

static void loop_log(struct kube_loop *l, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static void loop_log(struct kube_loop *l, const char *fmt, ...)
{
	char line[1024];
	va_list ap;

	if (!l->o.log)
		return;
	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	kube_conn_mask(l->c, line, strlen(line));
	/* One event, one line, whatever an apiserver's message holds. */
	char *shown = escape_line_dup(line);
	l->o.log(l->o.log_arg, shown);
	free(shown);
}

/* ---- pure parts -------------------------------------------------------------------------- */

int kube_stream_feed(struct kube_stream *s, const char *data, size_t n, kube_line_fn fn, void *arg)
{
	size_t start = 0;

	for (size_t i = 0; i < n; i++) {
		if (data[i] != '\n')
			continue;
		if (s->len) {
			/* The line began in an earlier chunk. */
			size_t k = i - start;
			if (s->len + k > s->max)
				goto too_long;
			if (s->len + k + 1 > s->cap) {
				s->cap = s->len + k + 1;
				s->p = gs_xrealloc(s->p, s->cap);
			}
			memcpy(s->p + s->len, data + start, k);
			s->len += k;
			s->p[s->len] = '\0';
			int rc = s->len ? fn(arg, s->p, s->len) : 0;
			s->len = 0;
			if (rc)
				return rc;
		} else if (i > start) {
			if (i - start > s->max)
				goto too_long;
			int rc = fn(arg, data + start, i - start);
			if (rc)
				return rc;
		}
		start = i + 1;
	}
	if (start < n) {
		size_t k = n - start;
		if (s->len + k > s->max)
			goto too_long;
		if (s->len + k + 1 > s->cap) {
			size_t cap = s->cap ? s->cap : 4096;
			while (cap < s->len + k + 1)
				cap *= 2;
			s->p = gs_xrealloc(s->p, cap);
			s->cap = cap;
		}
		memcpy(s->p + s->len, data + start, k);
		s->len += k;
		s->p[s->len] = '\0';
	}
	/* A long line's buffer is not kept once the line is done. */
	if (!s->len && s->cap > 65536) {
		free(s->p);
		s->p = NULL;
		s->cap = 0;
	}
	return 0;
too_long:
	s->len = 0;
	return -1;
}

void kube_stream_release(struct kube_stream *s)
{
	free(s->p);
	s->p = NULL;
	s->len = s->cap = 0;
}

int kube_watch_event_parse(struct kube_watch_event *ev, const char *line, size_t len,
			   struct gs_error *err)
{
	json_error_t je;
	json_t *root;
	const char *type;

	memset(ev, 0, sizeof(*ev));
	root = json_loadb(line, len, JSON_ALLOW_NUL, &je);
	if (!root) {
		gs_error_set(err, "watch event: %s at column %d", je.text, je.column);
		return -1;
	}
	type = json_string_value(json_object_get(root, "type"));
	ev->object = json_incref(json_object_get(root, "object"));
	if (!type || !json_is_object(ev->object)) {
		gs_error_set(err, "watch event without type or object");
		goto fail;
	}
	if (!strcmp(type, "ADDED"))
		ev->type = KUBE_WE_ADDED;
	else if (!strcmp(type, "MODIFIED"))
		ev->type = KUBE_WE_MODIFIED;
	else if (!strcmp(type, "DELETED"))
		ev->type = KUBE_WE_DELETED;
	else if (!strcmp(type, "BOOKMARK"))
		ev->type = KUBE_WE_BOOKMARK;
	else if (!strcmp(type, "ERROR"))
		ev->type = KUBE_WE_ERROR;
	else {
		gs_error_set(err, "watch event of unknown type \"%.32s\"", type);
		goto fail;
	}
	json_decref(root);
	if (ev->type == KUBE_WE_ERROR)
		ev->code = (int)json_integer_value(json_object_get(ev->object, "code"));
	else
		ev->resource_version = json_string_value(json_object_get(
			json_object_get(ev->object, "metadata"), "resourceVersion"));
	return 0;
fail:
	json_decref(root);
	json_decref(ev->object);
	ev->object = NULL;
	return -1;
}

void kube_watch_event_release(struct kube_watch_event *ev)
{
	json_decref(ev->object);
	memset(ev, 0, sizeof(*ev));
}

/* ---- requests --------------------------------------------------------------------------- */

static size_t on_header(char *ptr, size_t size, size_t nmemb, void *userdata)
{
	struct req *r = userdata;
	size_t n = size * nmemb;
	long v = kube_retry_after_header(ptr, n);

	if (r->stream && r->w && (n == 2 || n == 1) && (ptr[0] == '\r' || ptr[0] == '\n')) {
		/* The end of a watch stream's headers: open when it is a 200. */
		long code = 0;
		curl_easy_getinfo(r->h, CURLINFO_RESPONSE_CODE, &code);
		if (code == 200 && !r->w->stopped && r->w->ops.state)
			r->w->ops.state(r->w->arg, true);
		return n;
	}
	if (v >= 0)
		r->retry_after = v;
	return n;
}

static int buf_add(struct buf *b, const char *p, size_t n)
{
	if (n > b->max - b->len) {
		b->overflow = true;
		return -1;
	}
	if (b->len + n + 1 > b->cap) {
		size_t cap = b->cap ? b->cap : 16384;
		while (cap < b->len + n + 1)
			cap *= 2;
		b->p = gs_xrealloc(b->p, cap);
		b->cap = cap;
	}
	memcpy(b->p + b->len, p, n);
	b->len += n;
	b->p[b->len] = '\0';
	return 0;
}

static int watch_line(void *arg, const char *line, size_t len);

static size_t on_body(char *ptr, size_t size, size_t nmemb, void *userdata)
{
	struct req *r = userdata;
	size_t n = size * nmemb;
	long code = 0;

	if (r->stream) {
		curl_easy_getinfo(r->h, CURLINFO_RESPONSE_CODE, &code);
		if (code == 200) {
			struct kube_watch *w = r->w;
			if (kube_stream_feed(&w->stream, ptr, n, watch_line, w) != 0) {
				w->stream_failed = !w->relist_pending;
				return 0; /* ends the transfer; on_stream_end decides */
			}
			return n;
		}
	}
	return buf_add(&r->resp, ptr, n) == 0 ? n : 0;
}

static void req_free(struct req *r)
{
	if (!r)
		return;
	if (r->h)
		curl_easy_cleanup(r->h);
	curl_slist_free_all(r->hdrs);
	free(r->method);
	free(r->url);
	free(r->ctype);
	free(r->body);
	free(r->resp.p);
	free(r);
}

static void list_remove(struct req **head, struct req *r)
{
	for (struct req **p = head; *p; p = &(*p)->next)
		if (*p == r) {
			*p = r->next;
			r->next = NULL;
			return;
		}
}

/* The request's handle: the connection's settings, then its URL, method, headers, body. */
static int req_prepare(struct req *r, struct gs_error *err)
{
	struct kube_loop *l = r->l;
	CURL *h = kube_conn_handle(l->c, &r->wire);

	if (!h) {
		gs_error_set(err, "cannot make a libcurl handle");
		return -1;
	}
	r->h = h;
	r->hdrs = curl_slist_append(r->hdrs, "Accept: application/json");
	if (r->body) {
		char *ct =
			gs_xasprintf("Content-Type: %s", r->ctype ? r->ctype : "application/json");
		r->hdrs = curl_slist_append(r->hdrs, ct);
		free(ct);
	}
	/* No 100-continue round trip: the apiserver reads bodies at once. */
	r->hdrs = curl_slist_append(r->hdrs, "Expect:");
	curl_easy_setopt(h, CURLOPT_URL, r->url);
	curl_easy_setopt(h, CURLOPT_HTTPHEADER, r->hdrs);
	curl_easy_setopt(h, CURLOPT_PRIVATE, r);
	curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, on_body);
	curl_easy_setopt(h, CURLOPT_WRITEDATA, r);
	curl_easy_setopt(h, CURLOPT_HEADERFUNCTION, on_header);
	curl_easy_setopt(h, CURLOPT_HEADERDATA, r);
	/*
	 * HTTP/1.1, one connection per transfer at a time (kept alive and
	 * reused): over HTTP/2, libcurl 7.88 was seen to leave a response that
	 * arrived while it read another stream of the same connection
	 * unprocessed until the poll timed out (up to a second per write). On
	 * the bench's 1,000 nodes, short requests multiplexed over one HTTP/2
	 * connection (CURLPIPE_MULTIPLEX, CURLOPT_PIPEWAIT) made the edit 2.4
	 * times slower at 64 in flight and 2.6 times at 16, against HTTP/1.1 at
	 * the same load (docs/guide/controller.md "Scale").
	 */
	curl_easy_setopt(h, CURLOPT_HTTP_VERSION, (long)CURL_HTTP_VERSION_1_1);
	if (r->stream) {
		/* The server ends a watch after timeoutSeconds; a minute more is a dead peer. */
		long t = 0;
		const char *q = strstr(r->url, "timeoutSeconds=");
		if (q)
			t = strtol(q + 15, NULL, 10);
		curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, (t + 60) * 1000L);
		/* Nothing received for 3 minutes (bookmarks come every minute): dead. */
		curl_easy_setopt(h, CURLOPT_LOW_SPEED_LIMIT, 1L);
		curl_easy_setopt(h, CURLOPT_LOW_SPEED_TIME, 180L);
	}
	if (!strcmp(r->method, "GET") || (!r->body && strcmp(r->method, "POST") != 0)) {
		curl_easy_setopt(h, CURLOPT_HTTPGET, 1L);
		if (strcmp(r->method, "GET") != 0)
			curl_easy_setopt(h, CURLOPT_CUSTOMREQUEST, r->method);
	} else {
		curl_easy_setopt(h, CURLOPT_POST, 1L);
		curl_easy_setopt(h, CURLOPT_POSTFIELDS, r->body ? r->body : "");
		curl_easy_setopt(h, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)r->blen);
		curl_easy_setopt(h, CURLOPT_CUSTOMREQUEST,
				 strcmp(r->method, "POST") ? r->method : NULL);
	}
	return 0;
}

static void req_start(struct req *r)
{
	struct kube_loop *l = r->l;

	r->attempt++;
	r->resp.len = 0;
	r->resp.overflow = false;
	if (r->resp.p)
		r->resp.p[0] = '\0';
	r->retry_after = 0;
	r->t0 = now_ms();
	if (r->attempt == 1)
		r->started = r->t0;
	kube_conn_attempt(l->c, r->h, &r->wire);
	if (!r->stream) {
		/* One attempt: the request timeout, never past the deadline. */
		long long left = r->deadline - r->t0;
		long t = kube_conn_opts(l->c)->request_timeout_ms;
		curl_easy_setopt(r->h, CURLOPT_TIMEOUT_MS,
				 (long)(left < 1   ? 1
					: left < t ? left
						   : t));
	}
	r->next = l->running;
	l->running = r;
	if (r->counted)
		l->in_flight++;
	if (!r->stream)
		l->short_running++;
	l->stats.requests++;
	curl_multi_add_handle(l->multi, r->h);
}

static struct req *req_new(struct kube_loop *l, const char *method, const char *path,
			   const char *ctype, const char *body, size_t len)
{
	struct req *r = gs_xcalloc(1, sizeof(*r));

	r->l = l;
	r->method = gs_xstrdup(method);
	r->url = gs_xasprintf("%s%s", kube_conn_base_url(l->c), path);
	r->ctype = ctype ? gs_xstrdup(ctype) : NULL;
	if (body) {
		r->body = gs_xmalloc(len + 1);
		memcpy(r->body, body, len);
		r->body[len] = '\0';
		r->blen = len;
	}
	r->resp.max = l->o.max_body_bytes;
	r->max_attempts = kube_conn_policy(l->c)->max_attempts;
	r->deadline = now_ms() + kube_conn_policy(l->c)->deadline_ms;
	return r;
}

static int loop_request(struct kube_loop *l, const char *method, const char *path,
			const char *ctype, const char *body, size_t len, long long deadline,
			kube_done_fn done, void (*drop)(void *arg), void *arg)
{
	struct req *r;
	struct gs_error err;

	if (!kube_path_valid(path))
		return -1;
	r = req_new(l, method, path, ctype, body, len);
	if (deadline > 0)
		r->deadline = deadline;
	r->done = done;
	r->drop = drop;
	r->arg = arg;
	r->counted = true;
	if (req_prepare(r, &err) < 0) {
		req_free(r);
		return -1;
	}
	if (l->queue_tail)
		l->queue_tail->next = r;
	else
		l->queue = r;
	l->queue_tail = r;
	l->pending++;
	return 0;
}

int kube_loop_request_by(struct kube_loop *l, const char *method, const char *path,
			 const char *ctype, const char *body, size_t len, long long deadline,
			 kube_done_fn done, void *arg)
{
	return loop_request(l, method, path, ctype, body, len, deadline, done, NULL, arg);
}

int kube_loop_request(struct kube_loop *l, const char *method, const char *path, const char *ctype,
		      const char *body, size_t len, kube_done_fn done, void *arg)
{
	return loop_request(l, method, path, ctype, body, len, 0, done, NULL, arg);
}

static void count_failure(struct kube_loop *l, long code)
{
	l->stats.errors_by_code[code / 100 < 6 ? code / 100 : 5]++;
	if (code == 409)
		l->stats.errors_409++;
	else if (code == 410)
		l->stats.errors_410++;
	else if (code == 422)
		l->stats.errors_422++;
	else if (code == 429)
		l->stats.errors_429++;
}

/* The last attempt is over: tell the owner (st: the apiserver's failure; error: the message). */
static void req_finish(struct req *r, long code, const struct kube_status *st, const char *error)
{
	struct kube_loop *l = r->l;
	struct kube_result res = {0};

	if (r->counted)
		l->pending--;
	res.code = (int)code;
	res.body = r->resp.p ? r->resp.p : "";
	res.len = r->resp.len;
	res.attempts = r->attempt;
	res.st = st;
	res.error = error;
	if (error)
		count_failure(l, st ? code : 0);
	if (r->done)
		r->done(r->arg, &res);
	req_free(r);
}

/*
 * A transfer completed: retry it later (kube/kuberetry.h), or finish it
 * with the apiserver's Status or the connection's words for the failure.
 */
static void req_done(struct req *r, CURLcode cc)
{
	struct kube_loop *l = r->l;
	struct kube_status st;
	struct kube_retry_policy policy;
	enum kube_attempt_end end = KUBE_END_ANSWERED;
	long code = 0, delay;
	long long now = now_ms();
	curl_off_t sent = 0;
	char *msg;
	bool have_st = false;

	curl_multi_remove_handle(l->multi, r->h);
	list_remove(&l->running, r);
	/* How long the apiserver took, at how many at once: the limit's input. */
	if (r->counted)
		kube_limit_sample(&l->limit, (double)(now - r->t0), l->in_flight--);
	if (!r->stream)
		l->short_running--;
	curl_easy_getinfo(r->h, CURLINFO_RESPONSE_CODE, &code);
	curl_easy_getinfo(r->h, CURLINFO_REQUEST_SIZE, &sent);
	if (cc == CURLE_OK)
		kube_conn_trace(l->c, "%s %s -> %ld in %lld ms (attempt %u)", r->method, r->url,
				code, now - r->t0, r->attempt);
	else
		kube_conn_trace(l->c, "%s %s -> %s in %lld ms (attempt %u)", r->method, r->url,
				curl_easy_strerror(cc), now - r->t0, r->attempt);
	if (cc == CURLE_OK && code >= 200 && code < 300) {
		req_finish(r, code, NULL, NULL);
		return;
	}
	if (cc == CURLE_OK) {
		if (code == 401)
			kube_conn_unauthorized(l->c);
		msg = kube_conn_tls_port(l->c, r->method, r->url, (int)code, r->resp.p);
		if (msg) {
			req_finish(r, 0, NULL, msg);
			free(msg);
			return;
		}
		kube_conn_mask(l->c, r->resp.p, r->resp.len);
		kube_status_from_response(&st, (int)code, r->method, r->resp.p, r->resp.len);
		if (r->retry_after > 0)
			st.retry_after_s = r->retry_after;
		have_st = true;
	} else {
		code = 0;
		end = r->resp.overflow ? KUBE_END_FATAL
				       : kube_conn_diagnose(l->c, r->h, cc, &r->wire);
	}
	policy = *kube_conn_policy(l->c);
	policy.max_attempts = r->max_attempts;
	delay = kube_retry_delay(&policy, r->method, end, (int)code, sent == 0,
				 have_st ? kube_retry_after(r->retry_after, (int)code, &st) : 0,
				 r->attempt, r->deadline - now, &l->rng);
	if (delay >= 0) {
		l->stats.retries++;
		kube_conn_trace(l->c, "%s %s: retrying in %ld ms", r->method, r->url, delay);
		if (code)
			loop_log(l, "%s %s -> %ld; retrying in %ld ms (attempt %u)", r->method,
				 r->url, code, delay, r->attempt);
		else
			loop_log(l, "%s %s: %s; retrying in %ld ms (attempt %u)", r->method, r->url,
				 r->wire.why[0]	     ? r->wire.why
				 : r->wire.errbuf[0] ? r->wire.errbuf
						     : curl_easy_strerror(cc),
				 delay, r->attempt);
		if (have_st)
			kube_status_release(&st);
		r->due = now + delay;
		r->next = l->delayed;
		l->delayed = r;
		return;
	}
	if (have_st) {
		req_finish(r, code, &st, st.message);
		kube_status_release(&st);
		return;
	}
	msg = kube_conn_failure(l->c, r->method, r->url, cc, &r->wire, end, r->resp.overflow,
				r->resp.max, r->attempt, now - r->started);
	req_finish(r, 0, NULL, msg);
	free(msg);
}

/* ---- a whole list ------------------------------------------------------------------------ */

struct list_op {
	struct kube_loop *l;
	char *path, *label, *field;
	long long deadline;
	bool paged, restarted;
	char *cont;
	json_t *acc;
	kube_list_fn done;
	void *arg;
};

static void list_op_free(struct list_op *o)
{
	free(o->path);
	free(o->label);
	free(o->field);
	free(o->cont);
	json_decref(o->acc);
	free(o);
}

/* The list failed: code 0 and msg, or the page's own result r. */
static void list_fail(struct list_op *o, const struct kube_result *r, const char *msg)
{
	struct kube_result mine = {.code = 0, .body = "", .error = msg};

	o->done(o->arg, NULL, r ? r : &mine);
	list_op_free(o);
}

static void on_list_answer(void *arg, const struct kube_result *r);

static void list_op_drop(void *arg)
{
	list_op_free(arg);
}

static int list_page(struct list_op *o)
{
	const struct kube_client_opts *co = kube_conn_opts(o->l->c);
	char *p = gs_xstrdup(o->path);
	int rc;

	if (o->label)
		kube_query_append(&p, "labelSelector", o->label);
	if (o->field)
		kube_query_append(&p, "fieldSelector", o->field);
	if (o->paged) {
		char lim[32];
		snprintf(lim, sizeof(lim), "%u", co->list_page_size);
		kube_query_append(&p, "limit", lim);
	}
	if (o->cont)
		kube_query_append(&p, "continue", o->cont);
	free(o->cont);
	o->cont = NULL;
	rc = loop_request(o->l, "GET", p, NULL, NULL, 0, o->deadline, on_list_answer, list_op_drop,
			  o);
	free(p);
	return rc;
}

static void on_list_answer(void *arg, const struct kube_result *r)
{
	struct list_op *o = arg;
	const struct kube_client_opts *co = kube_conn_opts(o->l->c);
	json_t *page, *items, *md;
	json_error_t jerr;
	const char *cont;
	char msg[1024];

	if (r->error) {
		/* An expired continue token: client-go's pager falls back to one full list. */
		if (r->st && r->st->code == 410 && !strcmp(r->st->reason, "Expired") &&
		    !o->restarted) {
			kube_conn_trace(o->l->c,
					"GET %s: continue token expired, listing without paging",
					o->path);
			o->restarted = true;
			o->paged = false;
			json_decref(o->acc);
			o->acc = NULL;
			if (list_page(o) == 0)
				return;
		}
		list_fail(o, r, NULL);
		return;
	}
	page = r->len ? json_loadb(r->body, r->len, JSON_DECODE_ANY, &jerr) : json_object();
	if (!page) {
		snprintf(msg, sizeof(msg), "GET %s: the response is not JSON: %s", o->path,
			 jerr.text);
		list_fail(o, NULL, msg);
		return;
	}
	items = json_object_get(page, "items");
	if (!json_is_object(page) || (items && !json_is_array(items) && !json_is_null(items))) {
		json_decref(page);
		snprintf(msg, sizeof(msg), "GET %s: the response is not a list", o->path);
		list_fail(o, NULL, msg);
		return;
	}
	cont = kobj_string(page, "metadata.continue");
	if (cont && cont[0])
		o->cont = gs_xstrdup(cont);
	if (!o->acc) {
		o->acc = page;
		if (!json_is_array(items))
			json_object_set_new(o->acc, "items", json_array());
	} else {
		if (json_is_array(items))
			json_array_extend(json_object_get(o->acc, "items"), items);
		json_decref(page);
	}
	if (json_array_size(json_object_get(o->acc, "items")) > co->max_list_items) {
		snprintf(msg, sizeof(msg), "GET %s: more than %zu items", o->path,
			 co->max_list_items);
		list_fail(o, NULL, msg);
		return;
	}
	if (o->cont) {
		if (list_page(o) < 0) {
			snprintf(msg, sizeof(msg), "GET %s: cannot make a libcurl handle", o->path);
			list_fail(o, NULL, msg);
		}
		return;
	}
	md = json_object_get(o->acc, "metadata");
	if (json_is_object(md)) {
		json_object_del(md, "continue");
		json_object_del(md, "remainingItemCount");
	}
	page = o->acc;
	o->acc = NULL;
	o->done(o->arg, page, NULL);
	list_op_free(o);
}

int kube_loop_list(struct kube_loop *l, const char *path, const char *label_selector,
		   const char *field_selector, long long deadline, kube_list_fn done, void *arg)
{
	struct list_op *o;

	if (!kube_path_valid(path))
		return -1;
	o = gs_xcalloc(1, sizeof(*o));
	o->l = l;
	o->path = gs_xstrdup(path);
	o->label = label_selector && label_selector[0] ? gs_xstrdup(label_selector) : NULL;
	o->field = field_selector && field_selector[0] ? gs_xstrdup(field_selector) : NULL;
	o->deadline = deadline > 0 ? deadline : now_ms() + kube_conn_policy(l->c)->deadline_ms;
	o->paged = true;
	o->done = done;
	o->arg = arg;
	if (list_page(o) < 0) {
		list_op_free(o);
		return -1;
	}
	return 0;
}

/* ---- watches ---------------------------------------------------------------------------- */

/* A URL being built, query appended (a NULL value adds nothing). */
struct strbuf_lite {
	char *s;
};

static void query_add(struct strbuf_lite *q, const char *key, const char *val)
{
	if (val)
		kube_query_append(&q->s, key, val);
}

static void watch_list(struct kube_watch *w);
static void watch_open(struct kube_watch *w);

static void watch_start_req(struct kube_watch *w, struct req *r, kube_done_fn done)
{
	struct gs_error err;

	r->w = w;
	r->done = done;
	r->arg = w;
	r->max_attempts = 1; /* the watch backs off itself */
	if (req_prepare(r, &err) < 0) {
		loop_log(w->l, "watch %s: %s", w->path, err.msg);
		req_free(r);
		return;
	}
	w->active = r;
	req_start(r);
}

static void watch_later(void *arg)
{
	struct kube_watch *w = arg;

	if (w->stopped)
		return;
	if (w->rv && !w->relist_pending)
		watch_open(w);
	else
		watch_list(w);
}

static void watch_backoff(struct kube_watch *w, const struct kube_result *res)
{
	long delay = kube_watch_delay(kube_conn_policy(w->l->c), w->failures, res->code,
				      res->st ? res->st->retry_after_s : 0, &w->l->rng);

	w->failures++;
	if (w->ops.state)
		w->ops.state(w->arg, false);
	loop_log(w->l, "watch %s: %s; again in %ld ms", w->path,
		 res->error ? res->error : "stream ended", delay);
	kube_loop_after(w->l, delay, watch_later, w);
}

static void on_list_page(void *arg, const struct kube_result *res)
{
	struct kube_watch *w = arg;
	json_t *page, *items, *item;
	json_error_t je;
	const char *cont, *rv;
	size_t i;

	w->active = NULL;
	if (w->stopped)
		return;
	if (res->code == 410) {
		/* The continue token expired: from the start, unpaged, as client-go's pager. */
		free(w->cont);
		w->cont = NULL;
		w->unpaged = true;
		w->l->stats.relists++;
		loop_log(w->l, "list %s: %s; listing again", w->path, res->error);
		watch_list(w);
		return;
	}
	if (res->error) {
		free(w->cont);
		w->cont = NULL;
		watch_backoff(w, res);
		return;
	}
	page = json_loadb(res->body, res->len, 0, &je);
	items = json_object_get(page, "items");
	if (!json_is_array(items)) {
		struct kube_result bad = *res;
		bad.error = "the list answer holds no items";
		json_decref(page);
		free(w->cont);
		w->cont = NULL;
		watch_backoff(w, &bad);
		return;
	}
	if (w->ops.state)
		w->ops.state(w->arg, true);
	json_array_foreach (items, i, item)
		w->ops.event(w->arg, KUBE_EV_LISTED, item);
	cont = json_string_value(json_object_get(json_object_get(page, "metadata"), "continue"));
	rv = json_string_value(
		json_object_get(json_object_get(page, "metadata"), "resourceVersion"));
	free(w->cont);
	w->cont = cont && cont[0] ? gs_xstrdup(cont) : NULL;
	if (!w->cont) {
		free(w->rv);
		w->rv = rv ? gs_xstrdup(rv) : NULL;
	}
	json_decref(page);
	if (w->cont) {
		watch_list(w);
		return;
	}
	w->listing = false;
	w->relist_pending = false;
	w->failures = 0;
	if (w->ops.list_end)
		w->ops.list_end(w->arg);
	watch_open(w);
}

static void watch_list(struct kube_watch *w)
{
	struct strbuf_lite q = {.s = gs_xstrdup(w->path)};
	char lim[16];

	if (!w->cont) {
		w->listing = true;
		if (w->ops.list_begin)
			w->ops.list_begin(w->arg);
	}
	snprintf(lim, sizeof(lim), "%u", w->l->o.list_page_size);
	query_add(&q, "limit", w->unpaged ? NULL : lim);
	w->unpaged = false;
	query_add(&q, "continue", w->cont);
	query_add(&q, "labelSelector", w->label_selector);
	query_add(&q, "fieldSelector", w->field_selector);
	watch_start_req(w, req_new(w->l, "GET", q.s, NULL, NULL, 0), on_list_page);
	free(q.s);
}

static int watch_line(void *arg, const char *line, size_t len)
{
	struct kube_watch *w = arg;
	struct kube_watch_event ev;
	struct gs_error err;
	int rc = 0;

	if (w->stopped)
		return 1;
	if (kube_watch_event_parse(&ev, line, len, &err) < 0) {
		loop_log(w->l, "watch %s: %s", w->path, err.msg);
		return 1;
	}
	if (ev.resource_version && ev.type != KUBE_WE_ERROR) {
		free(w->rv);
		w->rv = gs_xstrdup(ev.resource_version);
	}
	switch (ev.type) {
	case KUBE_WE_ADDED:
		w->ops.event(w->arg, KUBE_EV_ADDED, ev.object);
		break;
	case KUBE_WE_MODIFIED:
		w->ops.event(w->arg, KUBE_EV_MODIFIED, ev.object);
		break;
	case KUBE_WE_DELETED:
		w->ops.event(w->arg, KUBE_EV_DELETED, ev.object);
		break;
	case KUBE_WE_BOOKMARK:
		break;
	case KUBE_WE_ERROR:
		if (ev.code == 410) {
			w->relist_pending = true;
		} else {
			const char *m = json_string_value(json_object_get(ev.object, "message"));
			loop_log(w->l, "watch %s: error event %d: %s", w->path, ev.code,
				 m ? m : "");
		}
		rc = 1;
		break;
	}
	kube_watch_event_release(&ev);
	w->failures = rc ? w->failures : 0;
	return rc;
}

static void on_stream_end(void *arg, const struct kube_result *res)
{
	struct kube_watch *w = arg;

	w->active = NULL;
	w->stream.len = 0;
	if (w->stopped)
		return;
	w->l->stats.watch_restarts++;
	if (w->relist_pending || res->code == 410) {
		w->l->stats.relists++;
		loop_log(w->l, "watch %s: resourceVersion %s expired (410 Gone); listing again",
			 w->path, w->rv ? w->rv : "?");
		w->relist_pending = true;
		free(w->rv);
		w->rv = NULL;
		watch_list(w);
		return;
	}
	if (!res->error && !w->stream_failed) {
		/* The server closed the watch (timeoutSeconds): resume at once. */
		watch_open(w);
		return;
	}
	w->stream_failed = false;
	watch_backoff(w, res);
}

static void watch_open(struct kube_watch *w)
{
	struct strbuf_lite q = {.s = gs_xstrdup(w->path)};
	char t[24];
	struct req *r;

	/* client-go's reflector: a timeout between min and 2*min, so watches do not end together.
	 */
	snprintf(t, sizeof(t), "%ld",
		 w->l->o.watch_timeout_s + (long)(kube_rng_next(&w->l->rng) %
						  (uint64_t)(w->l->o.watch_timeout_s + 1)));
	query_add(&q, "watch", "1");
	query_add(&q, "allowWatchBookmarks", "true");
	query_add(&q, "resourceVersion", w->rv);
	query_add(&q, "timeoutSeconds", t);
	query_add(&q, "labelSelector", w->label_selector);
	query_add(&q, "fieldSelector", w->field_selector);
	r = req_new(w->l, "GET", q.s, NULL, NULL, 0);
	r->stream = true;
	w->stream.max = w->l->o.max_body_bytes;
	w->stream.len = 0;
	watch_start_req(w, r, on_stream_end);
	free(q.s);
}

int kube_loop_watch(struct kube_loop *l, const char *path, const char *label_selector,
		    const char *field_selector, const struct kube_watch_ops *ops, void *arg,
		    struct kube_watch **out)
{
	struct kube_watch *w;

	if (!kube_path_valid(path) || strchr(path, '?') || !ops || !ops->event)
		return -1;
	w = gs_xcalloc(1, sizeof(*w));
	w->l = l;
	w->path = gs_xstrdup(path);
	w->label_selector = label_selector && label_selector[0] ? gs_xstrdup(label_selector) : NULL;
	w->field_selector = field_selector && field_selector[0] ? gs_xstrdup(field_selector) : NULL;
	w->ops = *ops;
	w->arg = arg;
	w->next = l->watches;
	l->watches = w;
	if (out)
		*out = w;
	watch_list(w);
	return 0;
}

static void watch_abort(struct kube_watch *w)
{
	struct kube_loop *l = w->l;
	struct req *r = w->active;

	w->stopped = true;
	if (!r)
		return;
	w->active = NULL;
	for (struct req *x = l->running; x; x = x->next)
		if (x == r) {
			curl_multi_remove_handle(l->multi, r->h);
			list_remove(&l->running, r);
			if (!r->stream)
				l->short_running--;
			req_free(r);
			return;
		}
	list_remove(&l->delayed, r);
	req_free(r);
}

void kube_loop_stop_watches(struct kube_loop *l)
{
	for (struct kube_watch *w = l->watches; w; w = w->next)
		watch_abort(w);
}

/* ---- the loop --------------------------------------------------------------------------- */

int kube_loop_new(struct kube_loop **out, struct kube_conn *c, const struct kube_loop_opts *o,
		  struct gs_error *err)
{
	struct kube_loop *l;

	*out = NULL;
	if (curl_api_load(err) < 0)
		return -1;
	l = gs_xcalloc(1, sizeof(*l));
	if (o)
		l->o = *o;
	if (!l->o.max_in_flight)
		l->o.max_in_flight = DEF_IN_FLIGHT;
	if (!l->o.min_in_flight)
		l->o.min_in_flight = DEF_MIN_IN_FLIGHT;
	kube_limit_init(&l->limit, l->o.min_in_flight, l->o.max_in_flight);
	if (!l->o.list_page_size)
		l->o.list_page_size = DEF_PAGE;
	if (!l->o.max_body_bytes)
		l->o.max_body_bytes = DEF_MAX_BODY;
	if (l->o.watch_timeout_s <= 0)
		l->o.watch_timeout_s = DEF_WATCH_TIMEOUT_S;
	l->c = c;
	l->rng = kube_rng_seed(now_ms() ^ ((long long)getpid() << 32), l);
	l->multi = curl_multi_init();
	if (!l->multi) {
		gs_error_set(err, "cannot initialise libcurl's multi interface");
		free(l);
		return -1;
	}
	curl_multi_setopt(l->multi, CURLMOPT_PIPELINING, (long)CURLPIPE_MULTIPLEX);
	*out = l;
	return 0;
}

/* Requests the loop still held when freed: their callbacks are never called. */
static void free_list(struct req *r)
{
	while (r) {
		struct req *n = r->next;
		if (r->drop)
			r->drop(r->arg);
		req_free(r);
		r = n;
	}
}

void kube_loop_free(struct kube_loop *l)
{
	if (!l)
		return;
	for (struct req *r = l->running; r; r = r->next)
		curl_multi_remove_handle(l->multi, r->h);
	free_list(l->running);
	free_list(l->queue);
	free_list(l->delayed);
	while (l->timers) {
		struct timer *t = l->timers->next;
		free(l->timers);
		l->timers = t;
	}
	while (l->watches) {
		struct kube_watch *w = l->watches->next;
		free(l->watches->path);
		free(l->watches->label_selector);
		free(l->watches->field_selector);
		free(l->watches->rv);
		free(l->watches->cont);
		kube_stream_release(&l->watches->stream);
		free(l->watches);
		l->watches = w;
	}
	curl_multi_cleanup(l->multi);
	free(l);
}

void kube_loop_after(struct kube_loop *l, long ms, void (*fn)(void *arg), void *arg)
{
	struct timer *t = gs_xcalloc(1, sizeof(*t));

	t->due = now_ms() + (ms > 0 ? ms : 0);
	t->fn = fn;
	t->arg = arg;
	t->next = l->timers;
	l->timers = t;
}

/* Fire due timers and retries, start what fits; returns ms until the next due thing. */
static long long run_due(struct kube_loop *l)
{
	long long now = now_ms(), next = -1;
	bool again = true;

	while (again) {
		again = false;
		for (struct timer **p = &l->timers; *p;) {
			struct timer *t = *p;
			if (t->due <= now) {
				*p = t->next;
				t->fn(t->arg);
				free(t);
				again = true;
				break; /* fn may have added timers */
			}
			p = &t->next;
		}
	}
	for (struct req **p = &l->delayed; *p;) {
		struct req *r = *p;
		if (r->due <= now) {
			*p = r->next;
			r->next = NULL;
			if (r->counted) {
				/* Back to the head of the queue: it has waited already. */
				r->next = l->queue;
				l->queue = r;
				if (!l->queue_tail)
					l->queue_tail = r;
			} else {
				req_start(r);
			}
			continue;
		}
		p = &r->next;
	}
	while (l->queue && l->in_flight < kube_limit_get(&l->limit)) {
		struct req *r = l->queue;
		l->queue = r->next;
		if (!l->queue)
			l->queue_tail = NULL;
		r->next = NULL;
		req_start(r);
	}
	for (struct timer *t = l->timers; t; t = t->next)
		if (next < 0 || t->due < next)
			next = t->due;
	for (struct req *r = l->delayed; r; r = r->next)
		if (next < 0 || r->due < next)
			next = r->due;
	return next < 0 ? -1 : (next > now ? next - now : 0);
}

int kube_loop_step(struct kube_loop *l, const int *fds, size_t nfds, bool *readable,
		   long timeout_ms, struct gs_error *err)
{
	struct curl_waitfd wfd[MAX_EXTRA_FDS];
	long long due = run_due(l);
	int running = 0, numfds = 0, left;
	CURLMcode mc;
	CURLMsg *m;

	if (nfds > MAX_EXTRA_FDS)
		nfds = MAX_EXTRA_FDS;
	for (size_t i = 0; i < nfds; i++) {
		wfd[i].fd = fds[i];
		wfd[i].events = CURL_WAIT_POLLIN;
		wfd[i].revents = 0;
	}
	if (due >= 0 && due < timeout_ms)
		timeout_ms = (long)due;
	/*
	 * While a short request runs, look again soon even when no socket
	 * woke us: bytes libcurl's TLS layer has already read (OpenSSL buffers
	 * whole records) do not make the socket readable again, and libcurl
	 * 7.88's poll was seen to sleep on them for the whole timeout.
	 */
	if (l->short_running && timeout_ms > SHORT_POLL_MS)
		timeout_ms = SHORT_POLL_MS;
	mc = curl_multi_perform(l->multi, &running);
	if (mc == CURLM_OK)
		mc = curl_multi_poll(l->multi, wfd, (unsigned)nfds, (int)timeout_ms, &numfds);
	if (mc != CURLM_OK && mc != CURLM_UNKNOWN_OPTION) {
		gs_error_set(err, "libcurl: %s", curl_multi_strerror(mc));
		return -1;
	}
	for (size_t i = 0; readable && i < nfds; i++)
		readable[i] = (wfd[i].revents & (CURL_WAIT_POLLIN | CURL_WAIT_POLLPRI)) != 0;
	mc = curl_multi_perform(l->multi, &running);
	if (mc != CURLM_OK) {
		gs_error_set(err, "libcurl: %s", curl_multi_strerror(mc));
		return -1;
	}
	while ((m = curl_multi_info_read(l->multi, &left))) {
		struct req *r = NULL;
		if (m->msg != CURLMSG_DONE)
			continue;
		curl_easy_getinfo(m->easy_handle, CURLINFO_PRIVATE, (char **)&r);
		if (r)
			req_done(r, m->data.result);
	}
	run_due(l);
	return 0;
}

size_t kube_loop_pending(const struct kube_loop *l)
{
	return l->pending;
}

const struct kube_loop_stats *kube_loop_stats(const struct kube_loop *l)
{
	return &l->stats;
}

unsigned kube_loop_limit(const struct kube_loop *l)
{
	return kube_limit_get(&l->limit);
}
