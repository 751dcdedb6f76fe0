#include "kube/kubeconn.h"

#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "kube/curlapi.h"
#include "base/version.h"
#include "kube/proxy.h"
#include "base/banned.h"

#define DEF_REQUEST_TIMEOUT_MS 30000L
#define DEF_CONNECT_TIMEOUT_MS 10000L
#define DEF_MAX_RESPONSE (64u * 1024 * 1024)
#define DEF_MAX_LIST_ITEMS 1000000u
#define DEF_PAGE_SIZE 500u
#define DEF_TOKEN_REREAD_MS 60000L /* client-go's cached file token source period */
#define PROXY_URLS 2u		   /* the chosen proxy as configured, and as libcurl is given it */

_Static_assert(KUBE_ERRBUF_SIZE == CURL_ERROR_SIZE, "libcurl's error buffer size");

struct kube_conn {
	CURL *curl; /* the template every request's handle is copied from */
	char *base; /* URL prefix requests are appended to */
	char *ns;
	char *trust; /* what the server is verified against, for TLS errors */
	char *token_file;
	long long token_checked_ms;
	struct timespec token_mtime;
	unsigned token_gen; /* bumped when the token changed */
	struct curl_slist *connect_to;
	struct kube_client_opts o;
	struct kube_retry_policy policy;
	char *user_agent;
	bool https;
	bool has_client_cert;
	char *server_shown; /* scheme://host:port, for TLS messages */
	char *verify_name;  /* the name the certificate is checked against */
	char *cert_origin;  /* where the client certificate came from, or NULL */
	char *user_desc;    /* `user "u"` or "the configuration", for TLS messages */
	char *sent_secret;  /* the token or base64 user:password; masked in messages */
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

void kube_conn_trace(struct kube_conn *c, const char *fmt, ...)
{
	char line[KUBE_MAX_URL + 256];
	va_list ap;

	if (!c->o.trace)
		return;
	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	c->o.trace(c->o.trace_arg, line);
}

/* ---- credentials ------------------------------------------------------------------------ */

/* Bound service-account tokens rotate: look at the file again every minute. */
static void refresh_token(struct kube_conn *c)
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
		kube_conn_trace(c, "tokenFile %s; keeping the current token", terr.msg);
		return;
	}
	c->token_mtime = mt;
	curl_easy_setopt(c->curl, CURLOPT_XOAUTH2_BEARER, tok);
	wipe_free(c->sent_secret);
	c->sent_secret = tok;
	c->token_gen++;
}

void kube_conn_unauthorized(struct kube_conn *c)
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

static void mask_secret(const struct kube_conn *c, char *p, size_t n)
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
static void note_proxy_userinfo(struct kube_conn *c, const char *url)
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
	struct kube_wire *t = userp;
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
static int parse_server(struct kube_conn *c, const struct kube_config *cfg, struct gs_error *err)
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
	if (!o->max_response_bytes)
		o->max_response_bytes = DEF_MAX_RESPONSE;
	if (!o->max_list_items)
		o->max_list_items = DEF_MAX_LIST_ITEMS;
	if (!o->list_page_size)
		o->list_page_size = DEF_PAGE_SIZE;
	if (o->token_reread_ms <= 0)
		o->token_reread_ms = DEF_TOKEN_REREAD_MS;
}

/* The retry policy's limits (kube/kuberetry.h), written back so the options show them. */
static void policy_from_opts(struct kube_retry_policy *p, struct kube_client_opts *o)
{
	p->max_attempts = o->max_attempts;
	p->base_ms = o->backoff_base_ms;
	p->max_ms = o->backoff_max_ms;
	p->deadline_ms = o->deadline_ms;
	p->retry_unreachable = o->retry_unreachable;
	kube_retry_policy_defaults(p);
	o->max_attempts = p->max_attempts;
	o->backoff_base_ms = p->base_ms;
	o->backoff_max_ms = p->max_ms;
	o->deadline_ms = p->deadline_ms;
}

/* "(from HTTPS_PROXY)" or "(the cluster's proxy-url)". */
static const char *proxy_origin(const struct kube_conn *c, char *buf, size_t size)
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
static void refuse_clear_text(const struct kube_conn *c, const struct kube_config *cfg,
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
static void trace_proxy(struct kube_conn *c)
{
	char wh[64];

	switch (c->proxy.why) {
	case KUBE_PROXY_SET:
		kube_conn_trace(c, "%s: through the proxy %s (%s%s)", c->server_shown,
				c->proxy.shown, proxy_origin(c, wh, sizeof(wh)),
				c->https ? ", CONNECT tunnel" : "");
		break;
	case KUBE_PROXY_LOOPBACK:
		kube_conn_trace(c, "%s: direct (a loopback address is never proxied)",
				c->server_shown);
		break;
	case KUBE_PROXY_NO_PROXY:
		kube_conn_trace(c, "%s: direct (NO_PROXY)", c->server_shown);
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

int kube_conn_new(struct kube_conn **out, const struct kube_config *cfg,
		  const struct kube_client_opts *opts, struct gs_error *err)
{
	struct kube_conn *c;

	*out = NULL;
	if (curl_api_load(err) < 0)
		return -1;
	if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK) {
		gs_error_set(err, "cannot initialise libcurl");
		return -1;
	}
	c = gs_xcalloc(1, sizeof(*c));
	opts_defaults(&c->o, opts);
	policy_from_opts(&c->policy, &c->o);
	if (cfg->request_timeout_ms > 0)
		c->o.request_timeout_ms = cfg->request_timeout_ms;
	c->user_agent =
		gs_xstrdup(c->o.user_agent ? c->o.user_agent : "gpushare/" GPUSHARE_VERSION);
	c->o.user_agent = c->user_agent;
	c->ns = gs_xstrdup(cfg->namespace && cfg->namespace[0] ? cfg->namespace : "default");
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
	SETOPT(CURLOPT_USERAGENT, c->user_agent);
	SETOPT(CURLOPT_ACCEPT_ENCODING, "");
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
	kube_conn_free(c);
	return -1;
}

#undef SETOPT

void kube_conn_free(struct kube_conn *c)
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
	free(c);
	curl_global_cleanup();
}

const struct kube_client_opts *kube_conn_opts(const struct kube_conn *c)
{
	return &c->o;
}

const struct kube_retry_policy *kube_conn_policy(const struct kube_conn *c)
{
	return &c->policy;
}

const char *kube_conn_namespace(const struct kube_conn *c)
{
	return c->ns;
}

const char *kube_conn_base_url(const struct kube_conn *c)
{
	return c->base;
}

void kube_conn_mask(const struct kube_conn *c, char *p, size_t n)
{
	mask_secret(c, p, n);
}

/* ---- one request's handle ------------------------------------------------------------ */

void *kube_conn_handle(struct kube_conn *c, struct kube_wire *w)
{
	CURL *h;

	refresh_token(c);
	h = curl_easy_duphandle(c->curl);
	if (!h)
		return NULL;
	w->token_gen = c->token_gen;
	curl_easy_setopt(h, CURLOPT_ERRORBUFFER, w->errbuf);
	/* Only received handshake messages and record headers are looked at. */
	if (c->https) {
		curl_easy_setopt(h, CURLOPT_DEBUGFUNCTION, on_debug);
		curl_easy_setopt(h, CURLOPT_DEBUGDATA, w);
		curl_easy_setopt(h, CURLOPT_VERBOSE, 1L);
	}
	return h;
}

void kube_conn_attempt(struct kube_conn *c, void *h, struct kube_wire *w)
{
	w->errbuf[0] = '\0';
	w->why[0] = '\0';
	w->cert_request = w->not_tls = w->plain_http = false;
	w->alert = -1;
	refresh_token(c);
	if (w->token_gen != c->token_gen && c->sent_secret) {
		curl_easy_setopt(h, CURLOPT_XOAUTH2_BEARER, c->sent_secret);
		w->token_gen = c->token_gen;
	}
}

/* ---- what a failed attempt means ----------------------------------------------------- */

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
static bool tls_failure(struct kube_conn *c, CURL *h, CURLcode cc, struct kube_wire *t)
{
	char *why = t->why;
	size_t size = sizeof(t->why);
	const char *lib = t->errbuf[0] ? t->errbuf : curl_easy_strerror(cc);
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
		curl_easy_getinfo(h, CURLINFO_SSL_VERIFYRESULT, &vr);
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
				 x509, c->trust, lib);
			return true;
		}
		return false;
	}
	if (cc == CURLE_SSL_CONNECT_ERROR) {
		snprintf(why, size, "TLS handshake with the server at %s failed: %s",
			 c->server_shown, lib);
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
static bool unreachable(struct kube_conn *c, CURL *h, CURLcode cc, char *why, size_t size)
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
	curl_easy_getinfo(h, CURLINFO_OS_ERRNO, &oserr);
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

enum kube_attempt_end kube_conn_diagnose(struct kube_conn *c, void *h, int cc, struct kube_wire *w)
{
	if (tls_failure(c, h, (CURLcode)cc, w))
		return KUBE_END_FATAL;
	if (unreachable(c, h, (CURLcode)cc, w->why, sizeof(w->why)))
		return KUBE_END_UNREACHABLE;
	w->why[0] = '\0';
	return transient_curl((CURLcode)cc) ? KUBE_END_TRANSIENT : KUBE_END_FATAL;
}

char *kube_conn_failure(struct kube_conn *c, const char *method, const char *url, int cc,
			const struct kube_wire *w, enum kube_attempt_end end, bool overflow,
			size_t max_body, unsigned attempts, long long elapsed_ms)
{
	const char *why = w->errbuf[0] ? w->errbuf : curl_easy_strerror((CURLcode)cc);
	char tries[96] = "";
	char *msg;

	if (attempts > 1)
		snprintf(tries, sizeof(tries), " (gave up after %u attempts in %.1fs)", attempts,
			 (double)elapsed_ms / 1000.0);
	if (overflow)
		msg = gs_xasprintf("%s %s: response larger than %zu bytes", method, url, max_body);
	else if (end == KUBE_END_FATAL && w->why[0])
		msg = gs_xasprintf("%s %s: %s", method, url, w->why);
	else if (end == KUBE_END_UNREACHABLE)
		msg = gs_xasprintf("%s%s", w->why, tries);
	else if (tls_verify_error((CURLcode)cc))
		msg = gs_xasprintf("%s %s: %s (server verified against %s)%s", method, url, why,
				   c->trust, tries);
	else
		msg = gs_xasprintf("%s %s: %s%s", method, url, why, tries);
	mask_secret(c, msg, strlen(msg));
	return msg;
}

char *kube_conn_tls_port(struct kube_conn *c, const char *method, const char *url, int code,
			 const char *body)
{
	/* Go's net/http on a TLS port; client-go would say "BadRequest". */
	if (c->https || code != 400 || !body ||
	    !strstr(body, "Client sent an HTTP request to an HTTPS server"))
		return NULL;
	return gs_xasprintf("%s %s: the server at %s speaks TLS, not plain HTTP (is the URL's "
			    "scheme right? use https://)",
			    method, url, c->server_shown);
}

/* ---- paths ------------------------------------------------------------------------------- */

bool kube_path_valid(const char *path)
{
	if (!path || path[0] != '/')
		return false;
	for (const char *p = path; *p; p++)
		if ((unsigned char)*p <= ' ' || *p == 0x7f || *p == '#')
			return false;
	return strlen(path) < KUBE_MAX_URL;
}

/* Percent-encode for a query value: RFC 3986 unreserved characters pass. */
void kube_query_append(char **url, const char *key, const char *val)
{
	static const char hex[] = "0123456789ABCDEF";
	size_t n = strlen(val), o = 0;
	char *enc = gs_xmalloc(n * 3 + 1), *next;

	for (size_t i = 0; i < n; i++) {
		unsigned char ch = (unsigned char)val[i];
		if ((ch >= 'A' && ch <= 'Z') || (ch >= 'a' && ch <= 'z') ||
		    (ch >= '0' && ch <= '9') || ch == '-' || ch == '.' || ch == '_' || ch == '~') {
			enc[o++] = (char)ch;
		} else {
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
