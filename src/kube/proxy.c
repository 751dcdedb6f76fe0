#include "kube/proxy.h"

#include <arpa/inet.h>
#include <stdlib.h>
#include <string.h>

#include "base/strbuf.h"
#include "base/wrapper.h"
#include "kube/curlapi.h"
#include "kube/kubeconfig.h"
#include "base/banned.h"

/*
 * Go's rules are golang.org/x/net/http/httpproxy (proxy.go: FromEnvironment,
 * proxyForURL, useProxy, config.init, the matchers), which net/http's
 * ProxyFromEnvironment and so client-go use; client-go adds only the
 * kubeconfig's proxy-url (tools/clientcmd: http.ProxyURL, for every request).
 */

void kube_proxy_env_read(struct kube_proxy_env *env)
{
	static const char *const names[3][2] = {
		{"HTTP_PROXY", "http_proxy"},
		{"HTTPS_PROXY", "https_proxy"},
		{"NO_PROXY", "no_proxy"},
	};
	const char *vals[3] = {NULL, NULL, NULL}, *from[3] = {NULL, NULL, NULL};
	const char *rm;

	/* getEnvAny: the first name whose value is not empty. */
	for (size_t i = 0; i < 3; i++)
		for (size_t j = 0; j < 2 && !vals[i]; j++) {
			const char *v = getenv(names[i][j]);
			if (v && v[0]) {
				vals[i] = v;
				from[i] = names[i][j];
			}
		}
	env->http_proxy = vals[0];
	env->http_var = from[0];
	env->https_proxy = vals[1];
	env->https_var = from[1];
	env->no_proxy = vals[2];
	rm = getenv("REQUEST_METHOD");
	env->cgi = rm && rm[0];
}

void kube_proxy_release(struct kube_proxy *p)
{
	if (!p)
		return;
	free(p->url);
	free(p->raw);
	free(p->shown);
	free(p->host);
	free(p->hostport);
	memset(p, 0, sizeof(*p));
}

/* ---- matching (useProxy) ----------------------------------------------------------------- */

struct ip {
	int family;	     /* 4 or 6; an IPv4-mapped IPv6 address is 4, as Go's To4() */
	unsigned char b[16]; /* 4 or 16 bytes */
};

/* s[0..n) as an IP address (no zone); *mapped tells an IPv4-mapped IPv6 spelling. */
static bool ip_parse(const char *s, size_t n, struct ip *ip, bool *mapped)
{
	static const unsigned char v4mapped[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
	char buf[64];

	if (mapped)
		*mapped = false;
	if (!n || n >= sizeof(buf))
		return false;
	memcpy(buf, s, n);
	buf[n] = '\0';
	if (inet_pton(AF_INET, buf, ip->b) == 1) {
		ip->family = 4;
		return true;
	}
	if (inet_pton(AF_INET6, buf, ip->b) != 1)
		return false;
	ip->family = 6;
	if (!memcmp(ip->b, v4mapped, sizeof(v4mapped))) {
		memmove(ip->b, ip->b + 12, 4);
		ip->family = 4;
		if (mapped)
			*mapped = true;
	}
	return true;
}

static bool ip_loopback(const struct ip *ip)
{
	static const unsigned char one[16] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1};

	return ip->family == 4 ? ip->b[0] == 127 : !memcmp(ip->b, one, 16);
}

static bool ip_equal(const struct ip *a, const struct ip *b)
{
	return a->family == b->family && !memcmp(a->b, b->b, a->family == 4 ? 4 : 16);
}

/* The first `bits` bits of a and b agree (same family). */
static bool prefix_equal(const struct ip *a, const struct ip *b, int bits)
{
	int i = 0;

	if (a->family != b->family)
		return false;
	for (; bits >= 8; bits -= 8, i++)
		if (a->b[i] != b->b[i])
			return false;
	return !bits || !((a->b[i] ^ b->b[i]) & (unsigned char)(0xff00 >> bits));
}

/*
 * Go's net.ParseCIDR: ADDR/BITS, no zone, BITS decimal up to the address's
 * length. An IPv4-mapped IPv6 network matches IPv4 addresses with the last
 * 32 bits of its mask (IPNet.Contains).
 */
static bool cidr_parse(const char *p, struct ip *net, int *bits)
{
	const char *slash = strchr(p, '/'), *d;
	bool mapped;
	long n = 0;

	if (!slash || !ip_parse(p, (size_t)(slash - p), net, &mapped) || !slash[1])
		return false;
	for (d = slash + 1; *d; d++) {
		if (*d < '0' || *d > '9')
			return false;
		n = n * 10 + (*d - '0');
		if (n > 128)
			return false;
	}
	if (n > (net->family == 4 && !mapped ? 32 : 128))
		return false;
	if (mapped)
		n = n > 96 ? n - 96 : 0;
	*bits = (int)n;
	return true;
}

/*
 * Go's net.SplitHostPort over s (NUL-terminated): host and port as offsets
 * into s, brackets of "[v6]:port" dropped. False for no port, too many
 * colons and stray brackets.
 */
static bool split_host_port(const char *s, size_t *h0, size_t *h1, const char **port)
{
	const char *last = strrchr(s, ':');
	size_t j = 0, k = 0;

	if (!last)
		return false;
	if (s[0] == '[') {
		const char *end = strchr(s, ']');
		if (!end || end + 1 != last)
			return false; /* missing ']', missing port or too many colons */
		*h0 = 1;
		*h1 = (size_t)(end - s);
		j = 1;
		k = (size_t)(end - s) + 1;
	} else {
		*h0 = 0;
		*h1 = (size_t)(last - s);
		if (memchr(s, ':', *h1))
			return false;
	}
	if (strchr(s + j, '[') || strchr(s + k, ']'))
		return false;
	*port = last + 1;
	return true;
}

static bool is_ascii(const char *s)
{
	for (; *s; s++)
		if ((unsigned char)*s >= 0x80)
			return false;
	return true;
}

/*
 * Go's idnaASCII: an ASCII name as it is, another in punycode (libcurl's
 * IDN support, when loaded and built with it), a leading dot kept. Caller
 * frees.
 */
static char *idna_ascii(const char *name)
{
	bool dot = name[0] == '.';
	CURLU *u;
	char *h = NULL, *out = NULL;

	if (is_ascii(name) || !curl_api.loaded)
		return gs_xstrdup(name);
	u = curl_url();
	if (u && curl_url_set(u, CURLUPART_HOST, name + dot, 0) == CURLUE_OK &&
	    curl_url_get(u, CURLUPART_HOST, &h, CURLU_PUNYCODE) == CURLUE_OK && is_ascii(h))
		out = gs_xasprintf("%s%s", dot ? "." : "", h);
	curl_free(h);
	curl_url_cleanup(u);
	return out ? out : gs_xstrdup(name);
}

static bool is_space(char c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r';
}

/* s[0..n) trimmed of ASCII white space and lower-cased (Go's TrimSpace and ToLower). */
static char *trim_lower(const char *s, size_t n)
{
	char *out;

	while (n && is_space(s[0]))
		s++, n--;
	while (n && is_space(s[n - 1]))
		n--;
	out = gs_xstrndup(s, n);
	for (char *p = out; *p; p++)
		if (*p >= 'A' && *p <= 'Z')
			*p = (char)(*p - 'A' + 'a');
	return out;
}

/*
 * One NO_PROXY entry (config.init) against host (trimmed, lower case,
 * punycode), port, and ip when host is an IP address.
 */
static bool entry_matches(const char *entry, size_t len, const char *host, const char *port,
			  const struct ip *ip)
{
	char *p = trim_lower(entry, len), *dom;
	const char *pport = "", *phost;
	size_t h0, h1;
	struct ip pip;
	int bits;
	bool match = false, match_host;

	if (!p[0])
		goto out;
	if (!strcmp(p, "*")) {
		match = true;
		goto out;
	}
	if (cidr_parse(p, &pip, &bits)) {
		match = ip && prefix_equal(&pip, ip, bits);
		goto out;
	}
	if (split_host_port(p, &h0, &h1, &pport)) {
		if (h1 == h0)
			goto out; /* no host part: ignored */
		p[h1] = '\0';
		phost = p + h0;
	} else {
		phost = p;
		pport = "";
	}
	if (ip_parse(phost, strlen(phost), &pip, NULL)) {
		match = ip && ip_equal(&pip, ip) && (!pport[0] || !strcmp(pport, port));
		goto out;
	}
	if (!phost[0] || ip)
		goto out; /* a domain never matches an IP address */
	if (!strncmp(phost, "*.", 2))
		phost++;
	match_host = phost[0] != '.';
	{
		char *d = match_host ? gs_xasprintf(".%s", phost) : gs_xstrdup(phost);
		dom = idna_ascii(d);
		free(d);
	}
	{
		size_t hl = strlen(host), dl = strlen(dom);
		if ((hl >= dl && !strcmp(host + hl - dl, dom)) ||
		    (match_host && !strcmp(host, dom + 1)))
			match = !pport[0] || !strcmp(pport, port);
	}
	free(dom);
out:
	free(p);
	return match;
}

static enum kube_proxy_why use_proxy(const char *no_proxy, const char *host_in, const char *port)
{
	size_t n = strlen(host_in);
	char *host, *bare, *low;
	const char *zone;
	struct ip ip;
	bool is_ip;
	enum kube_proxy_why why = KUBE_PROXY_SET;

	/* url.Hostname(): an IPv6 address without its brackets. */
	if (n >= 2 && host_in[0] == '[' && host_in[n - 1] == ']')
		bare = gs_xstrndup(host_in + 1, n - 2);
	else
		bare = gs_xstrdup(host_in);
	host = idna_ascii(bare);
	free(bare);
	if (!strcmp(host, "localhost")) {
		free(host);
		return KUBE_PROXY_LOOPBACK;
	}
	/* netip.ParseAddr takes an IPv6 zone ("fe80::1%eth0"). */
	zone = strchr(host, ':') ? strchr(host, '%') : NULL;
	is_ip = ip_parse(host, zone ? (size_t)(zone - host) : strlen(host), &ip, NULL);
	if (is_ip && ip_loopback(&ip)) {
		free(host);
		return KUBE_PROXY_LOOPBACK;
	}
	low = trim_lower(host, strlen(host));
	free(host);
	for (const char *e = no_proxy; e && *e;) {
		size_t len = strcspn(e, ",");
		if (entry_matches(e, len, low, port, is_ip ? &ip : NULL)) {
			why = KUBE_PROXY_NO_PROXY;
			break;
		}
		e += len;
		if (*e == ',')
			e++;
	}
	free(low);
	return why;
}

bool kube_proxy_use(const char *no_proxy, const char *host, const char *port)
{
	return use_proxy(no_proxy, host, port ? port : "") == KUBE_PROXY_SET;
}

/* ---- the choice ---------------------------------------------------------------------------- */

static const char *default_port(const char *scheme)
{
	/* Go's portMap for proxies; https proxies on 443 as Go dials them. */
	if (!strcmp(scheme, "http"))
		return "80";
	if (!strcmp(scheme, "https"))
		return "443";
	return "1080";
}

/* "(from HTTPS_PROXY)" or "(the cluster's proxy-url)", for messages. */
static void where(char *buf, size_t size, const char *from)
{
	if (!strcmp(from, "proxy-url"))
		snprintf(buf, size, "the cluster's proxy-url");
	else
		snprintf(buf, size, "from %s", from);
}

/*
 * Fill out from the value val (from `from`). A value without "scheme://"
 * from the environment is http:// (Go's parseProxy); proxy-url was checked
 * at load and is taken as written.
 */
static int proxy_parse(struct kube_proxy *out, const char *val, const char *from, bool env,
		       struct gs_error *err)
{
	char *full = env && !strstr(val, "://") ? gs_xasprintf("http://%s", val) : gs_xstrdup(val);
	char *scheme = NULL, *host = NULL, *port = NULL, *url = NULL, *shown = kube_url_shown(full);
	CURLU *u = curl_url();
	char wh[64];
	int rc = -1;

	where(wh, sizeof(wh), from);
	if (!u || kube_ctl_char(full, strlen(full)) >= 0 ||
	    curl_url_set(u, CURLUPART_URL, full, CURLU_NON_SUPPORT_SCHEME) != CURLUE_OK ||
	    curl_url_get(u, CURLUPART_SCHEME, &scheme, 0) != CURLUE_OK ||
	    curl_url_get(u, CURLUPART_HOST, &host, 0) != CURLUE_OK || !host[0]) {
		gs_error_set(err, "proxy \"%s\" (%s) is not a valid URL", shown, wh);
		goto out;
	}
	if (strcmp(scheme, "http") != 0 && strcmp(scheme, "https") != 0 &&
	    strcmp(scheme, "socks5") != 0 && strcmp(scheme, "socks5h") != 0) {
		gs_error_set(err,
			     "proxy \"%s\" (%s) must be an http://, https://, socks5:// or "
			     "socks5h:// URL",
			     shown, wh);
		goto out;
	}
	if (curl_url_get(u, CURLUPART_PORT, &port, 0) != CURLUE_OK) {
		if (curl_url_set(u, CURLUPART_PORT, default_port(scheme), 0) != CURLUE_OK ||
		    curl_url_get(u, CURLUPART_PORT, &port, 0) != CURLUE_OK) {
			gs_error_set(err, "proxy \"%s\" (%s) is not a valid URL", shown, wh);
			goto out;
		}
	}
	out->shown = gs_xasprintf("%s://%s:%s", scheme, host, port);
	/* Go's SOCKS5 dialer hands the name to the proxy: libcurl's socks5h. */
	if ((!strcmp(scheme, "socks5") &&
	     curl_url_set(u, CURLUPART_SCHEME, "socks5h", CURLU_NON_SUPPORT_SCHEME) != CURLUE_OK) ||
	    curl_url_get(u, CURLUPART_URL, &url, 0) != CURLUE_OK) {
		gs_error_set(err, "proxy \"%s\" (%s) is not a valid URL", shown, wh);
		goto out;
	}
	out->why = KUBE_PROXY_SET;
	out->url = gs_xstrdup(url);
	out->raw = gs_xstrdup(val);
	out->host = gs_xstrdup(host);
	out->hostport = gs_xasprintf("%s:%s", host, port);
	out->from = from;
	rc = 0;
out:
	if (rc != 0)
		kube_proxy_release(out);
	curl_free(scheme);
	curl_free(host);
	curl_free(port);
	curl_free(url);
	curl_url_cleanup(u);
	free(shown);
	free(full);
	return rc;
}

int kube_proxy_choose(struct kube_proxy *out, const char *proxy_url,
		      const struct kube_proxy_env *env, const char *scheme, const char *host,
		      const char *port, struct gs_error *err)
{
	struct kube_proxy_env mine;
	const char *val = NULL, *from = NULL;

	memset(out, 0, sizeof(*out));
	if (proxy_url && proxy_url[0])
		return proxy_parse(out, proxy_url, "proxy-url", false, err);
	if (!env) {
		kube_proxy_env_read(&mine);
		env = &mine;
	}
	if (!strcmp(scheme, "https")) {
		val = env->https_proxy;
		from = env->https_var;
	} else if (!strcmp(scheme, "http")) {
		val = env->http_proxy;
		from = env->http_var;
		if (val && env->cgi) {
			/* An attacker sets HTTP_PROXY through a Proxy: request header. */
			gs_error_set(err,
				     "refusing to use the %s value in a CGI environment "
				     "(REQUEST_METHOD is set); see golang.org/s/cgihttpproxy",
				     from ? from : "HTTP_PROXY");
			return -1;
		}
	}
	out->why = KUBE_PROXY_NONE_SET;
	if (!val)
		return 0;
	out->why = use_proxy(env->no_proxy, host, port);
	if (out->why != KUBE_PROXY_SET)
		return 0;
	return proxy_parse(out, val, from ? from : "the environment", true, err);
}

int kube_proxy_apply(void *curl, const struct kube_proxy *p, bool https)
{
	CURL *h = curl;
	const char *url = p && p->url ? p->url : "";

	/* "" disables libcurl's own look at http_proxy, ALL_PROXY and the rest. */
	if (curl_easy_setopt(h, CURLOPT_PROXY, url) != CURLE_OK ||
	    curl_easy_setopt(h, CURLOPT_NOPROXY, "") != CURLE_OK ||
	    curl_easy_setopt(h, CURLOPT_HTTPPROXYTUNNEL, url[0] && https ? 1L : 0L) != CURLE_OK)
		return -1;
	return 0;
}
