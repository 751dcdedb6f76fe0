#include "kube/kubeclient.h"

#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "kube/curlapi.h"
#include "base/version.h"
#include "model/kobj.h"
#include "kube/proxy.h"
#include "base/banned.h"

#define DEF_REQUEST_TIMEOUT_MS 30000L
#define DEF_CONNECT_TIMEOUT_MS 10000L
#define DEF_DEADLINE_MS 60000L
#define DEF_MAX_ATTEMPTS 8u
#define DEF_BACKOFF_BASE_MS 200L
#define DEF_BACKOFF_MAX_MS 10000L
#define DEF_MAX_RESPONSE (64u * 1024 * 1024)
#define DEF_MAX_LIST_ITEMS 1000000u
#define DEF_PAGE_SIZE 500u
#define MAX_URL_LEN 8192u
#define DEF_TOKEN_REREAD_MS 60000L /* client-go's cached file token source period */
#define SERVER_TEXT_MAX 1024u	   /* a non-Status error body quoted in a message */
#define WAIT_POLL_FLOOR_MS 1000L
#define PROXY_URLS 2u /* the chosen proxy as configured, and as libcurl is given it */

struct buf {
	char *p;
	size_t len;
	size_t cap;
	size_t max;
	bool overflow;
};

/*
 * What one attempt's TLS handshake showed, from libcurl's debug callback
 * (OpenSSL's message callback underneath): enough to tell a server that
 * wants a client certificate, or that does not speak TLS, from a network
 * failure, since libcurl reports both as a send or receive error.
 */
struct tls_seen {
	bool cert_request; /* the server sent a CertificateRequest */
	int alert;	   /* the last alert received, else -1 */
	bool not_tls;	   /* the first record header was not TLS */
	bool plain_http;   /* ... it was printable text, as "HTTP/" */
};

struct kube_client {
	CURL *curl;
	char *base; /* URL prefix requests are appended to */
	char *ns;
	char *trust; /* what the server is verified against, for TLS errors */
	char *token_file;
	long long token_checked_ms;
	struct timespec token_mtime;
	struct curl_slist *connect_to;
	struct kube_client_opts o;
	char *user_agent;
	char errbuf[CURL_ERROR_SIZE];
	struct kube_status last;
	uint64_t rng;
	struct buf body;
	long retry_after_hdr;
	bool https;
	bool has_client_cert;
	char *server_shown; /* scheme://host:port, for TLS messages */
	char *verify_name;  /* the name the certificate is checked against */
	char *cert_origin;  /* where the client certificate came from, or NULL */
	char *user_desc;    /* `user "u"` or "the configuration", for TLS messages */
	struct tls_seen tls;
	char *sent_secret; /* the token or base64 user:password; masked in messages */
	char *proxy_userinfo[PROXY_URLS]; /* masked in messages too */
	size_t n_proxy_userinfo;

	char *server_host; /* the host dialed (an IPv6 address in brackets) */
	char *server_port;
	char *server_hostport;	 /* host:port, for connection messages */
	struct kube_proxy proxy; /* how the server is reached (kube/proxy.h) */
};

static long long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

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

/* Overwrite a secret before it goes back to the allocator. */
static void wipe_free(char *s)
{
	volatile char *v = s;

	if (!s)
		return;
	while (*v)
		*v++ = '\0';
	free(s);
}

static uint64_t rng_next(uint64_t *s)
{
	/* xorshift64*: jitter only, not security. */
	uint64_t x = *s;

	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	*s = x;
	return x * 2685821657736338717ULL;
}

static void trace(struct kube_client *c, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void trace(struct kube_client *c, const char *fmt, ...)
{
	char line[MAX_URL_LEN + 256];
	va_list ap;

	if (!c->o.trace)
		return;
	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	c->o.trace(c->o.trace_arg, line);
}

/* ---- Status ---------------------------------------------------------------------------- */

static void status_init(struct kube_status *st)
{
	st->code = 0;
	st->reason = gs_xstrdup("");
	st->message = gs_xstrdup("");
	st->details = NULL;
	st->retry_after_s = 0;
}

void kube_status_release(struct kube_status *st)
{
	if (!st)
		return;
	free(st->reason);
	free(st->message);
	json_decref(st->details);
	st->reason = NULL;
	st->message = NULL;
	st->details = NULL;
	st->code = 0;
	st->retry_after_s = 0;
}

/* Go's %q, close enough for a quoted server text: printable ASCII kept, the rest escaped. */
static char *go_quote(const char *s, size_t len)
{
	size_t cap = len * 4 + 3, o = 0;
	char *q = gs_xmalloc(cap);

	q[o++] = '"';
	for (size_t i = 0; i < len; i++) {
		unsigned char ch = (unsigned char)s[i];
		if (ch == '"' || ch == '\\') {
			q[o++] = '\\';
			q[o++] = (char)ch;
		} else if (ch == '\n') {
			q[o++] = '\\';
			q[o++] = 'n';
		} else if (ch == '\t') {
			q[o++] = '\\';
			q[o++] = 't';
		} else if (ch < 0x20 || ch == 0x7f) {
			o += (size_t)snprintf(q + o, cap - o, "\\x%02x", ch);
		} else {
			q[o++] = (char)ch;
		}
	}
	q[o++] = '"';
	q[o] = '\0';
	return q;
}

/* client-go's NewGenericServerResponse texts by HTTP code (409 and 5xx are worked out). */
struct generic_text {
	int code;
	const char *reason;
	const char *text;  /* NULL: the server's own text */
	bool server_first; /* the server's text when it sent one */
};

static const struct generic_text generic_texts[] = {
	{404, "NotFound", "the server could not find the requested resource", false},
	{400, "BadRequest", "the server rejected our request for an unknown reason", false},
	{401, "Unauthorized", "the server has asked for the client to provide credentials", false},
	{403, "Forbidden", "the server does not allow access to the requested resource", true},
	{405, "MethodNotAllowed", "the server does not allow this method on the requested resource",
	 false},
	{406, "NotAcceptable",
	 "the server was unable to respond with a content type that the client supports", true},
	{415, "UnsupportedMediaType", NULL, true},
	{422, "Invalid", "the server rejected our request due to an error in our request", false},
	{429, "TooManyRequests",
	 "the server has received too many requests and has asked us to try again later", false},
	{503, "ServiceUnavailable", "the server is currently unable to handle the request", false},
	{504, "Timeout",
	 "the server was unable to return a response in the time allotted, but may still be "
	 "processing the request",
	 false},
};

/* client-go's NewGenericServerResponse texts, for error bodies that are no Status. */
static void generic_status(struct kube_status *st, int code, const char *method, const char *body,
			   size_t len)
{
	const char *reason = "Unknown";
	char *msg = NULL;
	char *server;

	/* client-go trims the text and quotes it; cap what we quote. */
	while (len && (body[0] == ' ' || body[0] == '\n' || body[0] == '\r' || body[0] == '\t')) {
		body++;
		len--;
	}
	while (len && (body[len - 1] == ' ' || body[len - 1] == '\n' || body[len - 1] == '\r' ||
		       body[len - 1] == '\t'))
		len--;
	if (len > SERVER_TEXT_MAX)
		len = SERVER_TEXT_MAX;
	server = gs_xstrndup(body ? body : "", body ? len : 0);

	if (code == 409) {
		reason = method && !strcmp(method, "POST") ? "AlreadyExists" : "Conflict";
		msg = gs_xstrdup("the server reported a conflict");
	}
	for (size_t i = 0; !msg && i < sizeof(generic_texts) / sizeof(generic_texts[0]); i++) {
		const struct generic_text *t = &generic_texts[i];
		if (t->code != code)
			continue;
		reason = t->reason;
		msg = gs_xstrdup(t->server_first && (server[0] || !t->text) ? server : t->text);
	}
	if (!msg && code >= 500) {
		char *q = go_quote(server, strlen(server));
		reason = "InternalError";
		msg = gs_xasprintf("an error on the server (%s) has prevented the request "
				   "from succeeding",
				   q);
		free(q);
	} else if (!msg) {
		msg = gs_xasprintf("the server responded with the status code %d but did "
				   "not return more information",
				   code);
	}
	free(server);
	free(st->reason);
	free(st->message);
	st->reason = gs_xstrdup(reason);
	st->message = msg;
}

void kube_status_from_response(struct kube_status *st, int http_code, const char *method,
			       const char *body, size_t len)
{
	json_t *root = NULL, *v;
	json_error_t jerr;
	const char *kind;

	status_init(st);
	st->code = http_code;
	if (body && len)
		root = json_loadb(body, len, 0, &jerr);
	kind = kobj_kind(root);
	if (!json_is_object(root) || !kind || strcmp(kind, "Status") != 0) {
		generic_status(st, http_code, method, body, body ? len : 0);
		json_decref(root);
		return;
	}
	/* Fill the generic texts first so an absent field still reads well. */
	generic_status(st, http_code, method, "", 0);
	v = json_object_get(root, "message");
	if (json_is_string(v) && json_string_length(v) > 0) {
		free(st->message);
		st->message = gs_xstrndup(json_string_value(v), json_string_length(v));
	}
	v = json_object_get(root, "reason");
	if (json_is_string(v) && json_string_length(v) > 0) {
		free(st->reason);
		st->reason = gs_xstrdup(json_string_value(v));
	}
	v = json_object_get(root, "details");
	if (json_is_object(v)) {
		json_t *ra = json_object_get(v, "retryAfterSeconds");
		st->details = json_incref(v);
		if (json_is_integer(ra) && json_integer_value(ra) > 0)
			st->retry_after_s = (long)json_integer_value(ra);
	}
	json_decref(root);
}

bool kube_status_invalid_field(const struct kube_status *st, const char *field)
{
	json_t *c;
	size_t i;

	if (!st || st->code != 422)
		return false;
	json_array_foreach (json_object_get(st->details, "causes"), i, c) {
		const char *f = json_string_value(json_object_get(c, "field"));
		if (f && !strcmp(f, field))
			return true;
	}
	return false;
}

/* ---- setup ----------------------------------------------------------------------------- */

static size_t on_body(char *ptr, size_t size, size_t nmemb, void *userdata)
{
	struct buf *b = userdata;
	size_t n = size * nmemb;

	if (n > b->max - b->len) {
		b->overflow = true;
		return 0;
	}
	if (b->len + n + 1 > b->cap) {
		size_t cap = b->cap ? b->cap : 16384;
		while (cap < b->len + n + 1)
			cap *= 2;
		b->p = gs_xrealloc(b->p, cap);
		b->cap = cap;
	}
	memcpy(b->p + b->len, ptr, n);
	b->len += n;
	b->p[b->len] = '\0';
	return n;
}

static size_t on_header(char *ptr, size_t size, size_t nmemb, void *userdata)
{
	struct kube_client *c = userdata;
	size_t n = size * nmemb;
	static const char name[] = "retry-after:";
	size_t k = sizeof(name) - 1;

	if (n > k && !strncasecmp(ptr, name, k)) {
		long v = 0;
		size_t i = k;
		while (i < n && (ptr[i] == ' ' || ptr[i] == '\t'))
			i++;
		/* Delay-seconds only; the apiserver never sends the HTTP-date form. */
		while (i < n && ptr[i] >= '0' && ptr[i] <= '9' && v < 86400)
			v = v * 10 + (ptr[i++] - '0');
		c->retry_after_hdr = v;
	}
	return n;
}

/* Bound service-account tokens rotate: look at the file again every minute. */
static void refresh_token(struct kube_client *c)
{
	struct stat sb;
	char *tok = NULL;
	struct timespec mt;
	struct gs_error terr;
	long long now;

	if (!c->token_file)
		return;
	now = now_ms();
	if (now - c->token_checked_ms < c->o.token_reread_ms)
		return;
	c->token_checked_ms = now;
	if (stat(c->token_file, &sb) != 0)
		return;
	if (sb.st_mtim.tv_sec == c->token_mtime.tv_sec &&
	    sb.st_mtim.tv_nsec == c->token_mtime.tv_nsec)
		return;
	/*
	 * On a read error keep the token we have, as client-go does; so too for
	 * a token that could not go into a header.
	 */
	if (kube_token_file_read(c->token_file, &tok, &mt, &terr) != 0) {
		trace(c, "tokenFile %s; keeping the current token", terr.msg);
		return;
	}
	c->token_mtime = mt;
	curl_easy_setopt(c->curl, CURLOPT_XOAUTH2_BEARER, tok);
	wipe_free(c->sent_secret);
	c->sent_secret = tok;
}

void kube_client_unauthorized(struct kube_client *c)
{
	/* Due at once; refresh_token still reads the file only when its mtime changed. */
	if (c->token_file)
		c->token_checked_ms = now_ms() - c->o.token_reread_ms;
}

/* Base64 (RFC 4648, padded) of s, as an Authorization: Basic header carries it. */
static char *base64(const char *s)
{
	static const char tab[] =
		"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
	size_t n = strlen(s), o = 0;
	char *out = gs_xmalloc(n / 3 * 4 + 5);

	for (size_t i = 0; i < n; i += 3) {
		unsigned v = (unsigned char)s[i] << 16;
		if (i + 1 < n)
			v |= (unsigned char)s[i + 1] << 8;
		if (i + 2 < n)
			v |= (unsigned char)s[i + 2];
		out[o++] = tab[v >> 18 & 63];
		out[o++] = tab[v >> 12 & 63];
		out[o++] = i + 1 < n ? tab[v >> 6 & 63] : '=';
		out[o++] = i + 2 < n ? tab[v & 63] : '=';
	}
	out[o] = '\0';
	return out;
}

/*
 * What goes on the wire as a credential (the bearer token, or the Basic
 * user:password in base64) is masked with '*' wherever it appears in
 * p[0..n): a proxy or a debugging server may quote the request back in an
 * error body, and that body becomes a message.
 */
static void mask_one(const char *sec, char *p, size_t n)
{
	size_t k = sec ? strlen(sec) : 0;

	if (!k || !p)
		return;
	for (size_t i = 0; i + k <= n; i++)
		if (p[i] == sec[0] && !memcmp(p + i, sec, k)) {
			memset(p + i, '*', k);
			i += k - 1;
		}
}

static void mask_secret(const struct kube_client *c, char *p, size_t n)
{
	mask_one(c->sent_secret, p, n);
	for (size_t i = 0; i < c->n_proxy_userinfo; i++)
		mask_one(c->proxy_userinfo[i], p, n);
}

/*
 * libcurl quotes a proxy URL it cannot use whole (`Unsupported proxy syntax
 * in 'u:pw@[x'`), also one it took from the environment: the userinfo of
 * every proxy it may use is masked in messages as the token is.
 */
static void note_proxy_userinfo(struct kube_client *c, const char *url)
{
	const char *end, *auth, *at = NULL;

	if (!url || !url[0] || c->n_proxy_userinfo == PROXY_URLS)
		return;
	end = url + strcspn(url, "?#");
	auth = strstr(url, "://");
	auth = auth && auth < end ? auth + 3 : url;
	for (const char *q = auth; q < end; q++)
		if (*q == '@')
			at = q;
	if (at && at > auth)
		c->proxy_userinfo[c->n_proxy_userinfo++] = gs_xstrndup(auth, (size_t)(at - auth));
}

static int set_blob(CURL *curl, CURLoption opt, const struct kube_pem *pem)
{
	struct curl_blob blob;

	blob.data = pem->data;
	blob.len = pem->len;
	blob.flags = CURL_BLOB_COPY;
	return curl_easy_setopt(curl, opt, &blob) == CURLE_OK ? 0 : -1;
}

/*
 * libcurl's debug callback, on for https only. It looks at handshake
 * messages and record headers received (CURLINFO_SSL_DATA_IN) and ignores
 * everything else: headers out carry the Authorization header, which is
 * never looked at or kept.
 */
static int on_debug(CURL *curl, curl_infotype type, char *data, size_t size, void *userp)
{
	struct tls_seen *t = userp;
	const unsigned char *d = (const unsigned char *)data;

	(void)curl;
	if (type != CURLINFO_SSL_DATA_IN || !size)
		return 0;
	if (size == 5 && !t->not_tls && (d[0] < 20 || d[0] > 24 || d[1] != 3)) {
		/* A record header that is no TLS content type and version. */
		t->not_tls = true;
		/* "HTTP/" from a server, "<!DOC" from one that answers HTTP/0.9 style. */
		t->plain_http = true;
		for (size_t i = 0; i < size; i++)
			t->plain_http = t->plain_http && d[i] >= 0x20 && d[i] < 0x7f;
	} else if (size == 2 && (d[0] == 1 || d[0] == 2)) {
		t->alert = d[1];
	} else if (size >= 4 && d[0] == 13 &&
		   ((size_t)d[1] << 16 | (size_t)d[2] << 8 | d[3]) == size - 4) {
		t->cert_request = true;
	}
	return 0;
}

/* Split the server URL; reject what kubectl would not dial. */
static int parse_server(struct kube_client *c, const struct kube_config *cfg, struct gs_error *err)
{
	CURLU *u = curl_url();
	char *scheme = NULL, *host = NULL, *port = NULL, *path = NULL, *user = NULL, *q = NULL;
	char *shown = NULL;
	int rc = -1, ch;
	size_t plen;

	if (!u)
		goto out;
	if (!cfg->server || !cfg->server[0]) {
		gs_error_set(err, "no server in the configuration");
		goto out;
	}
	/* Messages show the URL without userinfo, query or fragment. */
	shown = kube_url_shown(cfg->server);
	if ((ch = kube_ctl_char(cfg->server, strlen(cfg->server))) >= 0) {
		gs_error_set(err,
			     "server \"%s\" must not contain control characters (found 0x%02x)",
			     shown, ch);
		goto out;
	}
	if (cfg->tls_server_name &&
	    (ch = kube_ctl_char(cfg->tls_server_name, strlen(cfg->tls_server_name))) >= 0) {
		gs_error_set(err,
			     "tls-server-name must not contain control characters (found 0x%02x)",
			     ch);
		goto out;
	}
	if (curl_url_set(u, CURLUPART_URL, cfg->server, 0) != CURLUE_OK ||
	    curl_url_get(u, CURLUPART_SCHEME, &scheme, 0) != CURLUE_OK ||
	    curl_url_get(u, CURLUPART_HOST, &host, 0) != CURLUE_OK ||
	    curl_url_get(u, CURLUPART_PORT, &port, CURLU_DEFAULT_PORT) != CURLUE_OK ||
	    curl_url_get(u, CURLUPART_PATH, &path, 0) != CURLUE_OK) {
		gs_error_set(err, "server \"%s\" is not a valid URL", shown);
		goto out;
	}
	if (strcmp(scheme, "https") != 0 && strcmp(scheme, "http") != 0) {
		gs_error_set(err, "server \"%s\": scheme must be https or http", shown);
		goto out;
	}
	/* client-go would send them; we refuse, and never echo them. */
	if (curl_url_get(u, CURLUPART_USER, &user, 0) == CURLUE_OK) {
		gs_error_set(err,
			     "server \"%s\": credentials in the URL are not allowed (not shown); "
			     "use a token or client certificate",
			     shown);
		goto out;
	}
	if (curl_url_get(u, CURLUPART_QUERY, &q, 0) == CURLUE_OK ||
	    curl_url_get(u, CURLUPART_FRAGMENT, &q, 0) == CURLUE_OK) {
		gs_error_set(err, "server \"%s\": a query or fragment is not allowed (not shown)",
			     shown);
		goto out;
	}
	plen = strlen(path);
	while (plen && path[plen - 1] == '/')
		plen--;
	path[plen] = '\0';
	if (cfg->tls_server_name && cfg->tls_server_name[0] && !strcmp(scheme, "https")) {
		/*
		 * Go's tls.Config.ServerName: SNI and verification use the name,
		 * the connection goes to the server's address.
		 */
		char *ct;
		c->base = gs_xasprintf("%s://%s:%s%s", scheme, cfg->tls_server_name, port, path);
		ct = gs_xasprintf("%s:%s:%s:%s", cfg->tls_server_name, port, host, port);
		c->connect_to = curl_slist_append(NULL, ct);
		free(ct);
	} else {
		c->base = gs_xasprintf("%s://%s:%s%s", scheme, host, port, path);
	}
	c->https = !strcmp(scheme, "https");
	c->verify_name = gs_xstrdup(
		cfg->tls_server_name && cfg->tls_server_name[0] ? cfg->tls_server_name : host);
	c->server_shown = gs_xasprintf("%s://%s:%s", scheme, host, port);
	c->server_host = gs_xstrdup(host);
	c->server_port = gs_xstrdup(port);
	c->server_hostport = gs_xasprintf("%s:%s", host, port);
	rc = 0;
out:
	curl_free(scheme);
	curl_free(host);
	curl_free(port);
	curl_free(path);
	curl_free(user);
	curl_free(q);
	free(shown);
	curl_url_cleanup(u);
	return rc;
}

/* What goes into the Authorization header must not hold a control character. */
static int check_credentials(const struct kube_config *cfg, struct gs_error *err)
{
	static const char *const names[] = {"the bearer token", "the username", "the password"};
	const char *vals[] = {cfg->token, cfg->username, cfg->password};

	for (size_t i = 0; i < sizeof(vals) / sizeof(vals[0]); i++) {
		int ch = vals[i] ? kube_ctl_char(vals[i], strlen(vals[i])) : -1;
		if (ch >= 0) {
			gs_error_set(err,
				     "%s must not contain control characters (found 0x%02x; value "
				     "not shown)",
				     names[i], ch);
			return -1;
		}
	}
	return 0;
}

static void opts_defaults(struct kube_client_opts *o, const struct kube_client_opts *in)
{
	if (in)
		*o = *in;
	else
		memset(o, 0, sizeof(*o));
	if (o->request_timeout_ms <= 0)
		o->request_timeout_ms = DEF_REQUEST_TIMEOUT_MS;
	if (o->connect_timeout_ms <= 0)
		o->connect_timeout_ms = DEF_CONNECT_TIMEOUT_MS;
	if (o->deadline_ms <= 0)
		o->deadline_ms = DEF_DEADLINE_MS;
	if (!o->max_attempts)
		o->max_attempts = DEF_MAX_ATTEMPTS;
	if (o->backoff_base_ms <= 0)
		o->backoff_base_ms = DEF_BACKOFF_BASE_MS;
	if (o->backoff_max_ms <= 0)
		o->backoff_max_ms = DEF_BACKOFF_MAX_MS;
	if (!o->max_response_bytes)
		o->max_response_bytes = DEF_MAX_RESPONSE;
	if (!o->max_list_items)
		o->max_list_items = DEF_MAX_LIST_ITEMS;
	if (!o->list_page_size)
		o->list_page_size = DEF_PAGE_SIZE;
	if (o->token_reread_ms <= 0)
		o->token_reread_ms = DEF_TOKEN_REREAD_MS;
}

/* "(from HTTPS_PROXY)" or "(the cluster's proxy-url)". */
static const char *proxy_origin(const struct kube_client *c, char *buf, size_t size)
{
	if (!strcmp(c->proxy.from, "proxy-url"))
		snprintf(buf, size, "the cluster's proxy-url");
	else
		snprintf(buf, size, "from %s", c->proxy.from);
	return buf;
}

/*
 * A credential for an http:// server would cross the proxy in clear text
 * (client-go sends it; a tunnel would not hide it either): refused.
 */
static void refuse_clear_text(const struct kube_client *c, const struct kube_config *cfg,
			      struct gs_error *err)
{
	char wh[64];
	bool url = !strcmp(c->proxy.from, "proxy-url");

	gs_error_set(err,
		     "refusing to send %s for %s through the proxy %s (%s) in clear text: use an "
		     "https:// server, or %s",
		     cfg->token && cfg->token[0] ? "the bearer token" : "the basic credentials",
		     c->server_shown, c->proxy.shown, proxy_origin(c, wh, sizeof(wh)),
		     url ? "drop the cluster's proxy-url" : "name the host in NO_PROXY");
}

/* One trace line on how the server is reached. */
static void trace_proxy(struct kube_client *c)
{
	char wh[64];

	switch (c->proxy.why) {
	case KUBE_PROXY_SET:
		trace(c, "%s: through the proxy %s (%s%s)", c->server_shown, c->proxy.shown,
		      proxy_origin(c, wh, sizeof(wh)), c->https ? ", CONNECT tunnel" : "");
		break;
	case KUBE_PROXY_LOOPBACK:
		trace(c, "%s: direct (a loopback address is never proxied)", c->server_shown);
		break;
	case KUBE_PROXY_NO_PROXY:
		trace(c, "%s: direct (NO_PROXY)", c->server_shown);
		break;
	case KUBE_PROXY_NONE_SET:
		break;
	}
}

#define SETOPT(opt, val)                                                                           \
	do {                                                                                       \
		if (curl_easy_setopt(c->curl, opt, val) != CURLE_OK) {                             \
			gs_error_set(err, "libcurl does not support %s", #opt);                    \
			goto fail;                                                                 \
		}                                                                                  \
	} while (0)

int kube_client_new(struct kube_client **out, const struct kube_config *cfg,
		    const struct kube_client_opts *opts, struct gs_error *err)
{
	struct kube_client *c;

	*out = NULL;
	if (curl_api_load(err) < 0)
		return -1;
	if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK) {
		gs_error_set(err, "cannot initialise libcurl");
		return -1;
	}
	c = gs_xcalloc(1, sizeof(*c));
	opts_defaults(&c->o, opts);
	if (cfg->request_timeout_ms > 0)
		c->o.request_timeout_ms = cfg->request_timeout_ms;
	c->user_agent =
		gs_xstrdup(c->o.user_agent ? c->o.user_agent : "gpushare/" GPUSHARE_VERSION);
	c->o.user_agent = c->user_agent;
	c->ns = gs_xstrdup(cfg->namespace && cfg->namespace[0] ? cfg->namespace : "default");
	c->body.max = c->o.max_response_bytes;
	c->rng = (uint64_t)now_ms() ^ ((uint64_t)getpid() << 32) ^ (uint64_t)(uintptr_t)c;
	if (!c->rng)
		c->rng = 0x9e3779b97f4a7c15ULL;
	status_init(&c->last);
	c->curl = curl_easy_init();
	if (!c->curl) {
		gs_error_set(err, "cannot initialise libcurl");
		goto fail;
	}
	if (parse_server(c, cfg, err) != 0 || check_credentials(cfg, err) != 0)
		goto fail;

	SETOPT(CURLOPT_NOSIGNAL, 1L);
	SETOPT(CURLOPT_PROTOCOLS_STR, "http,https");
	SETOPT(CURLOPT_FOLLOWLOCATION, 0L);
	SETOPT(CURLOPT_CONNECTTIMEOUT_MS, c->o.connect_timeout_ms);
	SETOPT(CURLOPT_TCP_KEEPALIVE, 1L);
	SETOPT(CURLOPT_ERRORBUFFER, c->errbuf);
	SETOPT(CURLOPT_USERAGENT, c->user_agent);
	SETOPT(CURLOPT_ACCEPT_ENCODING, "");
	SETOPT(CURLOPT_WRITEFUNCTION, on_body);
	SETOPT(CURLOPT_WRITEDATA, &c->body);
	SETOPT(CURLOPT_HEADERFUNCTION, on_header);
	SETOPT(CURLOPT_HEADERDATA, c);
	if (c->https) {
		SETOPT(CURLOPT_DEBUGFUNCTION, on_debug);
		SETOPT(CURLOPT_DEBUGDATA, &c->tls);
		SETOPT(CURLOPT_VERBOSE, 1L);
	}
	c->user_desc = cfg->user ? gs_xasprintf("user \"%s\"", cfg->user)
				 : gs_xstrdup("the configuration");
	if (c->connect_to)
		SETOPT(CURLOPT_CONNECT_TO, c->connect_to);
	if (cfg->proxy_url && cfg->proxy_url[0] && !kube_proxy_url_ok(cfg->proxy_url)) {
		char *shown = kube_url_shown(cfg->proxy_url);
		gs_error_set(err, "proxy \"%s\" must be an http://, https:// or socks5:// URL",
			     shown);
		free(shown);
		goto fail;
	}
	/* The proxy is decided here, as client-go does; libcurl never reads the environment. */
	if (kube_proxy_choose(&c->proxy, cfg->proxy_url, NULL, c->https ? "https" : "http",
			      c->server_host, c->server_port, err) != 0)
		goto fail;
	note_proxy_userinfo(c, c->proxy.raw);
	note_proxy_userinfo(c, c->proxy.url);
	if (kube_proxy_apply(c->curl, &c->proxy, c->https) != 0) {
		gs_error_set(err, "libcurl does not support proxies");
		goto fail;
	}

	if (cfg->insecure_skip_tls_verify) {
		SETOPT(CURLOPT_SSL_VERIFYPEER, 0L);
		SETOPT(CURLOPT_SSL_VERIFYHOST, 0L);
		c->trust = gs_xstrdup("nothing (insecure-skip-tls-verify)");
	} else {
		SETOPT(CURLOPT_SSL_VERIFYPEER, 1L);
		SETOPT(CURLOPT_SSL_VERIFYHOST, 2L);
		if (cfg->ca.data) {
			if (set_blob(c->curl, CURLOPT_CAINFO_BLOB, &cfg->ca) != 0) {
				gs_error_set(err, "libcurl cannot take a CA from memory");
				goto fail;
			}
			/* Trust only the cluster's CA, as kubectl does. */
			SETOPT(CURLOPT_CAPATH, NULL);
			c->trust =
				gs_xasprintf("the CA in %s",
					     cfg->ca.origin ? cfg->ca.origin : "the configuration");
		} else {
			c->trust = gs_xstrdup("the system trust store");
		}
	}
	if (cfg->client_cert.data) {
		if (!cfg->client_key.data) {
			gs_error_set(err, "a client certificate needs a client key");
			goto fail;
		}
		if (set_blob(c->curl, CURLOPT_SSLCERT_BLOB, &cfg->client_cert) != 0 ||
		    set_blob(c->curl, CURLOPT_SSLKEY_BLOB, &cfg->client_key) != 0) {
			gs_error_set(err, "libcurl cannot take a client certificate from memory");
			goto fail;
		}
		SETOPT(CURLOPT_SSLCERTTYPE, "PEM");
		SETOPT(CURLOPT_SSLKEYTYPE, "PEM");
		c->has_client_cert = true;
		c->cert_origin = gs_xstrdup(cfg->client_cert.origin ? cfg->client_cert.origin
								    : "the configuration");
	}
	if (cfg->token && cfg->token[0]) {
		SETOPT(CURLOPT_HTTPAUTH, (long)CURLAUTH_BEARER);
		SETOPT(CURLOPT_XOAUTH2_BEARER, cfg->token);
		c->sent_secret = gs_xstrdup(cfg->token);
		if (cfg->token_file) {
			c->token_file = gs_xstrdup(cfg->token_file);
			c->token_checked_ms = now_ms();
			struct stat sb;
			if (stat(cfg->token_file, &sb) == 0)
				c->token_mtime = sb.st_mtim;
		}
	} else if (cfg->username && cfg->username[0]) {
		SETOPT(CURLOPT_HTTPAUTH, (long)CURLAUTH_BASIC);
		SETOPT(CURLOPT_USERNAME, cfg->username);
		SETOPT(CURLOPT_PASSWORD, cfg->password ? cfg->password : "");
		{
			char *up = gs_xasprintf("%s:%s", cfg->username,
						cfg->password ? cfg->password : "");
			c->sent_secret = base64(up);
			wipe_free(up);
		}
	}
	if (c->proxy.url && !c->https && c->sent_secret) {
		refuse_clear_text(c, cfg, err);
		goto fail;
	}
	trace_proxy(c);
	*out = c;
	return 0;
fail:
	kube_client_free(c);
	return -1;
}

#undef SETOPT

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
	if (c->curl)
		curl_easy_cleanup(c->curl);
	curl_slist_free_all(c->connect_to);
	free(c->base);
	free(c->ns);
	free(c->trust);
	free(c->server_shown);
	free(c->server_host);
	free(c->server_port);
	free(c->server_hostport);
	kube_proxy_release(&c->proxy);
	wipe_free(c->sent_secret);
	for (size_t i = 0; i < c->n_proxy_userinfo; i++)
		wipe_free(c->proxy_userinfo[i]);
	free(c->verify_name);
	free(c->cert_origin);
	free(c->user_desc);
	free(c->token_file);
	free(c->user_agent);
	free(c->body.p);
	kube_status_release(&c->last);
	free(c);
	curl_global_cleanup();
}

const struct kube_status *kube_last_status(const struct kube_client *c)
{
	return &c->last;
}

const char *kube_client_namespace(const struct kube_client *c)
{
	return c->ns;
}

void *kube_client_easy(struct kube_client *c)
{
	CURL *h;

	refresh_token(c);
	h = curl_easy_duphandle(c->curl);
	if (!h)
		return NULL;
	/* What pointed into c belongs to the caller's handle from here. */
	curl_easy_setopt(h, CURLOPT_VERBOSE, 0L);
	curl_easy_setopt(h, CURLOPT_DEBUGFUNCTION, NULL);
	curl_easy_setopt(h, CURLOPT_DEBUGDATA, NULL);
	curl_easy_setopt(h, CURLOPT_ERRORBUFFER, NULL);
	curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, NULL);
	curl_easy_setopt(h, CURLOPT_WRITEDATA, NULL);
	curl_easy_setopt(h, CURLOPT_HEADERFUNCTION, NULL);
	curl_easy_setopt(h, CURLOPT_HEADERDATA, NULL);
	curl_easy_setopt(h, CURLOPT_HTTPHEADER, NULL);
	return h;
}

const char *kube_client_base_url(const struct kube_client *c)
{
	return c->base;
}

void kube_client_mask(const struct kube_client *c, char *p, size_t n)
{
	mask_secret(c, p, n);
}

/* ---- one call, with retries ------------------------------------------------------------ */

static bool transient_curl(CURLcode cc)
{
	switch (cc) {
	case CURLE_COULDNT_RESOLVE_HOST:
	case CURLE_COULDNT_RESOLVE_PROXY:
	case CURLE_COULDNT_CONNECT:
	case CURLE_OPERATION_TIMEDOUT:
	case CURLE_SEND_ERROR:
	case CURLE_RECV_ERROR:
	case CURLE_GOT_NOTHING:
	case CURLE_PARTIAL_FILE:
	case CURLE_HTTP2:
	case CURLE_HTTP2_STREAM:
	case CURLE_AGAIN:
		return true;
	default:
		return false;
	}
}

static bool tls_verify_error(CURLcode cc)
{
	return cc == CURLE_PEER_FAILED_VERIFICATION || cc == CURLE_SSL_CACERT_BADFILE ||
	       cc == CURLE_SSL_CERTPROBLEM || cc == CURLE_SSL_PINNEDPUBKEYNOTMATCH;
}

/* A TLS alert's name (RFC 8446 6.2), for the ones a refused client certificate draws. */
static const char *alert_name(int a)
{
	switch (a) {
	case 40:
		return "handshake failure";
	case 42:
		return "bad certificate";
	case 43:
		return "unsupported certificate";
	case 44:
		return "certificate revoked";
	case 45:
		return "certificate expired";
	case 46:
		return "certificate unknown";
	case 48:
		return "unknown CA";
	case 49:
		return "access denied";
	case 116:
		return "certificate required";
	default:
		return NULL;
	}
}

/*
 * A TLS failure the user must fix (nothing a retry would change): fills why
 * with what to tell them and returns true. False for anything else, which
 * keeps libcurl's text and the retry policy.
 *
 * libcurl reports a server that refuses the client's (missing) certificate
 * as whatever the socket said first: a receive error carrying the alert, a
 * send error (EPIPE) or an unrelated getpeername() failure when the reset
 * won the race. A CertificateRequest seen in this attempt's handshake, then
 * a failure before any response, is that refusal.
 */
static bool tls_failure(struct kube_client *c, CURLcode cc, char *why, size_t size)
{
	const struct tls_seen *t = &c->tls;
	long vr = 0;

	if (!c->https)
		return false;
	if (t->not_tls) {
		snprintf(why, size,
			 "the server at %s answered %s, not TLS (is the URL's scheme right?)",
			 c->server_shown, t->plain_http ? "in plain HTTP" : "with something else");
		return true;
	}
	if (t->cert_request &&
	    (cc == CURLE_SSL_CONNECT_ERROR || cc == CURLE_SEND_ERROR || cc == CURLE_RECV_ERROR ||
	     cc == CURLE_GOT_NOTHING || cc == CURLE_SSL_CLIENTCERT)) {
		const char *an = t->alert >= 0 ? alert_name(t->alert) : NULL;
		char alert[64] = "";
		if (an)
			snprintf(alert, sizeof(alert), " (TLS alert: %s)", an);
		if (!c->has_client_cert)
			snprintf(why, size,
				 "the server at %s requires a client certificate and %s has none%s",
				 c->server_shown, c->user_desc, alert);
		else
			snprintf(why, size,
				 "the server at %s did not accept the client certificate from %s%s",
				 c->server_shown, c->cert_origin, alert);
		return true;
	}
	if (cc == CURLE_PEER_FAILED_VERIFICATION) {
		const char *x509;
		char name[320];
		curl_easy_getinfo(c->curl, CURLINFO_SSL_VERIFYRESULT, &vr);
		switch (vr) {
		case 2:	 /* X509_V_ERR_UNABLE_TO_GET_ISSUER_CERT */
		case 18: /* X509_V_ERR_DEPTH_ZERO_SELF_SIGNED_CERT */
		case 19: /* X509_V_ERR_SELF_SIGNED_CERT_IN_CHAIN */
		case 20: /* X509_V_ERR_UNABLE_TO_GET_ISSUER_CERT_LOCALLY */
		case 21: /* X509_V_ERR_UNABLE_TO_VERIFY_LEAF_SIGNATURE */
			x509 = "certificate signed by unknown authority";
			break;
		case 9:	 /* X509_V_ERR_CERT_NOT_YET_VALID */
		case 10: /* X509_V_ERR_CERT_HAS_EXPIRED */
			x509 = "certificate has expired or is not yet valid";
			break;
		case 1:	 /* libcurl's own host name check failed */
		case 62: /* X509_V_ERR_HOSTNAME_MISMATCH */
			snprintf(name, sizeof(name), "certificate is not valid for %s",
				 c->verify_name);
			x509 = name;
			break;
		default:
			x509 = NULL;
		}
		if (x509) {
			snprintf(why, size,
				 "tls: failed to verify certificate: x509: %s (server verified "
				 "against %s; libcurl: %s)",
				 x509, c->trust, c->errbuf[0] ? c->errbuf : curl_easy_strerror(cc));
			return true;
		}
		return false;
	}
	if (cc == CURLE_SSL_CONNECT_ERROR) {
		snprintf(why, size, "TLS handshake with the server at %s failed: %s",
			 c->server_shown, c->errbuf[0] ? c->errbuf : curl_easy_strerror(cc));
		return true;
	}
	return false;
}

/*
 * A server (or proxy) that cannot be reached at all: the connection was
 * refused, there is no route to it, or its name does not resolve. Fills
 * why with kubectl's words (k8s.io/kubectl pkg/cmd/util/helpers.go,
 * StandardErrorMessage) and returns true; false for anything else.
 */
static bool unreachable(struct kube_client *c, CURLcode cc, char *why, size_t size)
{
	char peer[512], wh[64];
	long oserr = 0;

	if (cc != CURLE_COULDNT_CONNECT && cc != CURLE_COULDNT_RESOLVE_HOST &&
	    cc != CURLE_COULDNT_RESOLVE_PROXY)
		return false;
	if (cc == CURLE_COULDNT_RESOLVE_HOST) {
		snprintf(why, size, "Unable to connect to the server %s: could not resolve host %s",
			 c->server_hostport, c->server_host);
		return true;
	}
	/* Through a proxy, the connection that failed is the one to the proxy. */
	if (c->proxy.url)
		snprintf(peer, sizeof(peer), "proxy %s (%s)", c->proxy.hostport,
			 proxy_origin(c, wh, sizeof(wh)));
	else
		snprintf(peer, sizeof(peer), "server %s", c->server_hostport);
	if (cc == CURLE_COULDNT_RESOLVE_PROXY) {
		snprintf(why, size, "Unable to connect to the %s: could not resolve host %s", peer,
			 c->proxy.host ? c->proxy.host : "");
		return true;
	}
	curl_easy_getinfo(c->curl, CURLINFO_OS_ERRNO, &oserr);
	if (oserr == ECONNREFUSED)
		snprintf(why, size,
			 "The connection to the %s was refused - did you specify the right host or "
			 "port?",
			 peer);
	else if (oserr == EHOSTUNREACH)
		snprintf(why, size, "Unable to connect to the %s: no route to host", peer);
	else if (oserr == ENETUNREACH)
		snprintf(why, size, "Unable to connect to the %s: network is unreachable", peer);
	else
		return false;
	return true;
}

/* Delay before attempt `n+1` (n >= 1): base * 2^(n-1), capped, with half of it jittered. */
static long long backoff_ms(struct kube_client *c, unsigned n)
{
	long long d = c->o.backoff_base_ms;

	for (unsigned i = 1; i < n && d < c->o.backoff_max_ms; i++)
		d *= 2;
	if (d > c->o.backoff_max_ms)
		d = c->o.backoff_max_ms;
	return d / 2 + (long long)(rng_next(&c->rng) % (uint64_t)(d / 2 + 1));
}

static bool valid_path(const char *path)
{
	if (!path || path[0] != '/')
		return false;
	for (const char *p = path; *p; p++)
		if ((unsigned char)*p <= ' ' || *p == 0x7f || *p == '#')
			return false;
	return strlen(path) < MAX_URL_LEN;
}

static void set_last_transport(struct kube_client *c)
{
	kube_status_release(&c->last);
	status_init(&c->last);
}

static void set_method(struct kube_client *c, const char *method, const char *req, size_t len)
{
	bool has_body = req != NULL;

	curl_easy_setopt(c->curl, CURLOPT_NOBODY, 0L);
	if (!strcmp(method, "GET") || (!has_body && strcmp(method, "POST") != 0)) {
		curl_easy_setopt(c->curl, CURLOPT_HTTPGET, 1L);
		curl_easy_setopt(c->curl, CURLOPT_CUSTOMREQUEST,
				 strcmp(method, "GET") ? method : NULL);
		return;
	}
	curl_easy_setopt(c->curl, CURLOPT_POST, 1L);
	curl_easy_setopt(c->curl, CURLOPT_POSTFIELDS, req ? req : "");
	curl_easy_setopt(c->curl, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)(req ? len : 0));
	curl_easy_setopt(c->curl, CURLOPT_CUSTOMREQUEST, strcmp(method, "POST") ? method : NULL);
}

/*
 * Perform method on path. Idempotent verbs are retried on 5xx and on any
 * transient connection failure; POST only on 429 and on failures before a
 * byte of the request went out. On return c->body holds the last body.
 */
static int do_request(struct kube_client *c, const char *method, const char *path,
		      const char *ctype, const char *req, size_t req_len, long long deadline,
		      struct gs_error *err)
{
	bool idempotent = strcmp(method, "POST") != 0;
	struct curl_slist *hdrs = NULL;
	char *url, *ct_hdr = NULL;
	long long start = now_ms();
	unsigned attempt;
	int rc = -1;
	bool tls_fatal = false, unreach = false;
	char tls_why[sizeof(err->msg)], unreach_why[sizeof(err->msg)];

	set_last_transport(c);
	if (!valid_path(path)) {
		char *q = go_quote(path ? path : "", path ? strnlen(path, 200) : 0);
		gs_error_set(err, "invalid API path %s", q);
		free(q);
		return -1;
	}
	url = gs_xasprintf("%s%s", c->base, path);
	hdrs = curl_slist_append(hdrs, "Accept: application/json");
	if (req) {
		ct_hdr = gs_xasprintf("Content-Type: %s", ctype ? ctype : "application/json");
		hdrs = curl_slist_append(hdrs, ct_hdr);
	}
	/* No 100-continue round trip: the apiserver reads bodies at once. */
	hdrs = curl_slist_append(hdrs, "Expect:");
	curl_easy_setopt(c->curl, CURLOPT_URL, url);
	curl_easy_setopt(c->curl, CURLOPT_HTTPHEADER, hdrs);
	set_method(c, method, req, req_len);

	for (attempt = 1;; attempt++) {
		long long t0 = now_ms(), left = deadline - t0, wait = -1;
		long code = 0;
		curl_off_t sent = 0;
		CURLcode cc;
		bool retry;

		if (left <= 0)
			left = 1;
		unreach = false;
		refresh_token(c);
		c->body.len = 0;
		c->body.overflow = false;
		if (c->body.p)
			c->body.p[0] = '\0';
		c->retry_after_hdr = 0;
		c->errbuf[0] = '\0';
		memset(&c->tls, 0, sizeof(c->tls));
		c->tls.alert = -1;
		curl_easy_setopt(
			c->curl, CURLOPT_TIMEOUT_MS,
			(long)(left < c->o.request_timeout_ms ? left : c->o.request_timeout_ms));
		cc = curl_easy_perform(c->curl);
		if (cc == CURLE_OK) {
			curl_easy_getinfo(c->curl, CURLINFO_RESPONSE_CODE, &code);
			trace(c, "%s %s -> %ld in %lld ms (attempt %u)", method, url, code,
			      now_ms() - t0, attempt);
			if (code >= 200 && code < 300) {
				rc = 0;
				break;
			}
			if (code == 401)
				kube_client_unauthorized(c);
			kube_status_release(&c->last);
			mask_secret(c, c->body.p, c->body.len);
			kube_status_from_response(&c->last, (int)code, method, c->body.p,
						  c->body.len);
			if (c->retry_after_hdr > 0)
				c->last.retry_after_s = c->retry_after_hdr;
			retry = code == 429 || (idempotent && code >= 500);
			if (retry && c->retry_after_hdr > 0)
				wait = c->retry_after_hdr * 1000LL;
			else if (retry && code == 429 && c->last.retry_after_s > 0)
				wait = c->last.retry_after_s * 1000LL;
		} else {
			curl_easy_getinfo(c->curl, CURLINFO_REQUEST_SIZE, &sent);
			trace(c, "%s %s -> %s in %lld ms (attempt %u)", method, url,
			      curl_easy_strerror(cc), now_ms() - t0, attempt);
			tls_fatal = tls_failure(c, cc, tls_why, sizeof(tls_why));
			unreach =
				!tls_fatal && unreachable(c, cc, unreach_why, sizeof(unreach_why));
			/* kubectl fails at once there; a daemon waits for its apiserver. */
			retry = !c->body.overflow && !tls_fatal && transient_curl(cc) &&
				(idempotent || sent == 0) && (!unreach || c->o.retry_unreachable);
		}
		if (retry && attempt < c->o.max_attempts) {
			if (wait < 0)
				wait = backoff_ms(c, attempt);
			if (now_ms() + wait < deadline) {
				trace(c, "%s %s: retrying in %lld ms", method, url, wait);
				sleep_ms(wait);
				continue;
			}
		}
		/* Final failure: say what, and how hard we tried. */
		if (cc == CURLE_OK && !c->https && code == 400 && c->body.p &&
		    strstr(c->body.p, "Client sent an HTTP request to an HTTPS server")) {
			/* Go's net/http on a TLS port; client-go would say "BadRequest". */
			gs_error_set(err,
				     "%s %s: the server at %s speaks TLS, not plain HTTP (is the "
				     "URL's scheme right? use https://)",
				     method, url, c->server_shown);
			set_last_transport(c);
		} else if (cc == CURLE_OK) {
			gs_error_set(err, "%s", c->last.message);
			rc = KUBE_E_STATUS;
		} else if (tls_fatal) {
			gs_error_set(err, "%s %s: %s", method, url, tls_why);
		} else if (c->body.overflow) {
			gs_error_set(err, "%s %s: response larger than %zu bytes", method, url,
				     c->o.max_response_bytes);
		} else {
			const char *why = c->errbuf[0] ? c->errbuf : curl_easy_strerror(cc);
			char tries[96] = "";
			if (attempt > 1)
				snprintf(tries, sizeof(tries),
					 " (gave up after %u attempts in %.1fs)", attempt,
					 (double)(now_ms() - start) / 1000.0);
			if (unreach)
				gs_error_set(err, "%s%s", unreach_why, tries);
			else if (tls_verify_error(cc))
				gs_error_set(err, "%s %s: %s (server verified against %s)%s",
					     method, url, why, c->trust, tries);
			else
				gs_error_set(err, "%s %s: %s%s", method, url, why, tries);
		}
		break;
	}
	if (rc == 0)
		set_last_transport(c);
	else
		mask_secret(c, err->msg, strlen(err->msg));
	curl_easy_setopt(c->curl, CURLOPT_HTTPHEADER, NULL);
	curl_slist_free_all(hdrs);
	free(ct_hdr);
	free(url);
	return rc;
}

static int decode_body(struct kube_client *c, const char *method, const char *path, json_t **out,
		       struct gs_error *err)
{
	json_error_t jerr;
	json_t *v;

	if (!out)
		return 0;
	*out = NULL;
	if (!c->body.len) {
		*out = json_object();
		return 0;
	}
	v = json_loadb(c->body.p, c->body.len, JSON_DECODE_ANY, &jerr);
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
	return now_ms() + c->o.deadline_ms;
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
		*body = gs_xstrndup(c->body.p ? c->body.p : "", c->body.len);
	if (len)
		*len = c->body.len;
	return 0;
}

/* ---- LIST ------------------------------------------------------------------------------ */

/* Percent-encode for a query value: RFC 3986 unreserved characters pass. */
static void query_append(char **url, const char *key, const char *val)
{
	size_t n = strlen(val);
	char *enc = gs_xmalloc(n * 3 + 1), *next;
	size_t o = 0;

	for (size_t i = 0; i < n; i++) {
		unsigned char ch = (unsigned char)val[i];
		if ((ch >= 'A' && ch <= 'Z') || (ch >= 'a' && ch <= 'z') ||
		    (ch >= '0' && ch <= '9') || ch == '-' || ch == '.' || ch == '_' || ch == '~') {
			enc[o++] = (char)ch;
		} else {
			static const char hex[] = "0123456789ABCDEF";
			enc[o++] = '%';
			enc[o++] = hex[ch >> 4];
			enc[o++] = hex[ch & 15];
		}
	}
	enc[o] = '\0';
	next = gs_xasprintf("%s%c%s=%s", *url, strchr(*url, '?') ? '&' : '?', key, enc);
	free(enc);
	free(*url);
	*url = next;
}

static int list_once(struct kube_client *c, const char *path, const struct kube_list_opts *lo,
		     bool paged, long long deadline, json_t **out, struct gs_error *err)
{
	json_t *acc = NULL, *md;
	char *token = NULL;
	int rc = 0;

	*out = NULL;
	for (;;) {
		char *p = gs_xstrdup(path);
		json_t *resp = NULL, *pitems;
		const char *cont;

		if (lo && lo->label_selector && lo->label_selector[0])
			query_append(&p, "labelSelector", lo->label_selector);
		if (lo && lo->field_selector && lo->field_selector[0])
			query_append(&p, "fieldSelector", lo->field_selector);
		if (paged) {
			char lim[32];
			snprintf(lim, sizeof(lim), "%u", c->o.list_page_size);
			query_append(&p, "limit", lim);
		}
		if (token)
			query_append(&p, "continue", token);
		free(token);
		token = NULL;
		rc = json_call(c, "GET", p, NULL, NULL, &resp, deadline, err);
		free(p);
		if (rc != 0)
			break;
		pitems = json_object_get(resp, "items");
		if (!json_is_object(resp) ||
		    (pitems && !json_is_array(pitems) && !json_is_null(pitems))) {
			gs_error_set(err, "GET %s: the response is not a list", path);
			json_decref(resp);
			rc = -1;
			break;
		}
		cont = kobj_string(resp, "metadata.continue");
		if (cont && cont[0])
			token = gs_xstrdup(cont);
		if (!acc) {
			acc = resp;
			if (!json_is_array(pitems))
				json_object_set_new(acc, "items", json_array());
		} else {
			if (json_is_array(pitems))
				json_array_extend(json_object_get(acc, "items"), pitems);
			json_decref(resp);
		}
		if (json_array_size(json_object_get(acc, "items")) > c->o.max_list_items) {
			gs_error_set(err, "GET %s: more than %zu items", path, c->o.max_list_items);
			rc = -1;
			break;
		}
		if (!token)
			break;
	}
	free(token);
	if (rc != 0) {
		json_decref(acc);
		return rc;
	}
	md = json_object_get(acc, "metadata");
	if (json_is_object(md)) {
		json_object_del(md, "continue");
		json_object_del(md, "remainingItemCount");
	}
	*out = acc;
	return 0;
}

int kube_list(struct kube_client *c, const char *path, const struct kube_list_opts *lo,
	      json_t **out, struct gs_error *err)
{
	long long deadline = deadline_from_now(c);
	int rc;

	*out = NULL;
	if (path && strchr(path, '?') && (strstr(path, "continue=") || strstr(path, "limit="))) {
		gs_error_set(err, "GET %s: kube_list sets limit and continue itself", path);
		return -1;
	}
	rc = list_once(c, path, lo, true, deadline, out, err);
	/* An expired continue token: client-go's pager falls back to one full list. */
	if (rc == KUBE_E_STATUS && c->last.code == 410 && !strcmp(c->last.reason, "Expired")) {
		trace(c, "GET %s: continue token expired, listing without paging", path);
		rc = list_once(c, path, lo, false, deadline, out, err);
	}
	return rc;
}

/* ---- wait ------------------------------------------------------------------------------ */

int kube_wait(struct kube_client *c, const char *path, kube_wait_fn pred, void *arg,
	      long timeout_ms, long interval_ms, json_t **out, struct gs_error *err)
{
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
			left = WAIT_POLL_FLOOR_MS < c->o.request_timeout_ms
				       ? WAIT_POLL_FLOOR_MS
				       : c->o.request_timeout_ms;
		if (left > c->o.deadline_ms)
			left = c->o.deadline_ms;
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
