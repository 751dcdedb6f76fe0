#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kube/curlapi.h"
#include "kube/proxy.h"

/*
 * The proxy decision against the cases of Go's own tests
 * (golang.org/x/net/http/httpproxy proxy_test.go: proxyForURLTests,
 * UseProxyTests, TestAllNoProxy, TestInvalidNoProxy, the FromEnvironment
 * tests), with two deliberate differences written out in the table: a
 * proxy's port is made explicit (Go dials "http://proxy" on 80, libcurl
 * would dial 1080), and a scheme no transport dials ("foo://host") is an
 * error at once instead of at the first request.
 */

/* ---- useProxy ------------------------------------------------------------------------------ */

static const char *const go_no_proxy =
	"foobar.com, .barbaz.net, *.wildcard.io, 192.168.1.1, 192.168.1.2:81, 192.168.1.3:80, "
	"10.0.0.0/30, 2001:db8::52:0:1, [2001:db8::52:0:2]:443, [2001:db8::52:0:3]:80, "
	"2002:db8:a::45/64";

static const struct {
	const char *host;
	bool proxied;
} go_use_proxy[] = {
	/* Never proxy localhost: */
	{"localhost", false},
	{"127.0.0.1", false},
	{"127.0.0.2", false},
	{"[::1]", false},
	{"[::2]", true}, /* not a loopback address */

	{"192.168.1.1", false},		       /* matches exact IPv4 */
	{"192.168.1.2", true},		       /* ports do not match */
	{"192.168.1.3", false},		       /* matches exact IPv4:port */
	{"192.168.1.4", true},		       /* no match */
	{"10.0.0.2", false},		       /* matches IPv4/CIDR */
	{"[2001:db8::52:0:1]", false},	       /* matches exact IPv6 */
	{"[2001:db8::52:0:2]", true},	       /* no match */
	{"[2001:db8::52:0:3]", false},	       /* matches exact [IPv6]:port */
	{"[2002:db8:a::123]", false},	       /* matches IPv6/CIDR */
	{"[fe80::424b:c8be:1643:a1b6]", true}, /* no match */

	{"barbaz.net", true},	       /* does not match as .barbaz.net */
	{"www.barbaz.net", false},     /* does match as .barbaz.net */
	{"foobar.com", false},	       /* does match as foobar.com */
	{"www.foobar.com", false},     /* match because NO_PROXY includes "foobar.com" */
	{"foofoobar.com", true},       /* not match as a part of foobar.com */
	{"baz.com", true},	       /* not match as a part of barbaz.com */
	{"localhost.net", true},       /* not match as suffix of address */
	{"local.localhost", true},     /* not match as prefix as address */
	{"barbarbaz.net", true},       /* not match, wrong domain */
	{"wildcard.io", true},	       /* does not match as *.wildcard.io */
	{"nested.wildcard.io", false}, /* match as *.wildcard.io */
	{"awildcard.io", true},	       /* not a match because of '*' */
};

#define N(a) (sizeof(a) / sizeof((a)[0]))

static void use_proxy_go_cases(void **state)
{
	(void)state;
	for (size_t i = 0; i < N(go_use_proxy); i++) {
		bool got = kube_proxy_use(go_no_proxy, go_use_proxy[i].host, "80");
		if (got != go_use_proxy[i].proxied)
			fail_msg("useProxy(%s:80) = %d, want %d", go_use_proxy[i].host, got,
				 go_use_proxy[i].proxied);
	}
}

static void use_proxy_all_and_invalid(void **state)
{
	(void)state;
	/* TestAllNoProxy: "*" excludes everything. */
	for (size_t i = 0; i < N(go_use_proxy); i++)
		assert_false(kube_proxy_use("*", go_use_proxy[i].host, "80"));
	assert_false(kube_proxy_use("example.com, *", "elsewhere.org", "443"));
	/* TestInvalidNoProxy: an entry without a host is ignored, nothing breaks. */
	assert_true(kube_proxy_use(":1", "example.com", "80"));
	assert_true(kube_proxy_use(",, ,", "example.com", "80"));
	assert_true(kube_proxy_use(NULL, "example.com", "80"));
}

/* Beyond Go's table: what the rules above imply for an apiserver's address. */
static void use_proxy_more(void **state)
{
	static const struct {
		const char *no_proxy, *host, *port;
		bool proxied;
	} cases[] = {
		/* Loopback whatever NO_PROXY says, in every spelling of it. */
		{NULL, "127.255.0.9", "6443", false},
		{NULL, "[::ffff:127.0.0.1]", "6443", false},
		{NULL, "::1", "6443", false},
		{NULL, "0.0.0.0", "6443", true}, /* no loopback address */
		{NULL, "localhost.", "6443", true},
		/* Ports compare as written; a port-less entry matches any port. */
		{"api.corp:6443", "api.corp", "6443", false},
		{"api.corp:6443", "api.corp", "443", true},
		{"10.0.0.5:6443", "10.0.0.5", "6443", false},
		{"10.0.0.5", "10.0.0.5", "1", false},
		/* Case and spaces around entries do not matter. */
		{"  API.Corp  ,x", "api.corp", "443", false},
		{"api.corp", "API.CORP", "443", false},
		/* A domain entry never matches an address, nor an address a name. */
		{"10.0.0.5", "ten.corp", "443", true},
		{"corp", "10.0.0.5", "443", true},
		/* CIDRs: the family must agree; an IPv4-mapped network is IPv4. */
		{"10.0.0.0/8", "10.200.3.4", "443", false},
		{"10.0.0.0/8", "11.0.0.1", "443", true},
		{"10.0.0.0/8", "[::ffff:10.1.2.3]", "443", false},
		{"::ffff:10.0.0.0/104", "10.1.2.3", "443", false},
		{"fd00::/8", "10.1.2.3", "443", true},
		{"10.0.0.0/33", "10.0.0.1", "443", true}, /* no CIDR, no address, no name */
		/* An IPv6 zone is an address's: no domain entry matches it. */
		{"example.com", "[1000::%25.example.com]", "123", true},
	};

	(void)state;
	for (size_t i = 0; i < N(cases); i++) {
		bool got = kube_proxy_use(cases[i].no_proxy, cases[i].host, cases[i].port);
		if (got != cases[i].proxied)
			fail_msg("no_proxy=%s host %s:%s: proxied %d, want %d",
				 cases[i].no_proxy ? cases[i].no_proxy : "(none)", cases[i].host,
				 cases[i].port, got, cases[i].proxied);
	}
}

/* ---- proxyForURL ----------------------------------------------------------------------------- */

struct url_case {
	const char *http, *https, *no_proxy;
	bool cgi;
	const char *scheme, *host, *port; /* the request; NULL = http://example.com */
	const char *want;		  /* the proxy as shown, "<nil>", or "error: <text>" */
};

static const struct url_case go_proxy_for_url[] = {
	{"127.0.0.1:8080", NULL, NULL, false, NULL, NULL, NULL, "http://127.0.0.1:8080"},
	{"cache.corp.example.com:1234", NULL, NULL, false, NULL, NULL, NULL,
	 "http://cache.corp.example.com:1234"},
	{"cache.corp.example.com", NULL, NULL, false, NULL, NULL, NULL,
	 "http://cache.corp.example.com:80"},
	/* single label domain is recognized as scheme by url.Parse */
	{"localhost", NULL, NULL, false, NULL, NULL, NULL, "http://localhost:80"},
	{"https://cache.corp.example.com", NULL, NULL, false, NULL, NULL, NULL,
	 "https://cache.corp.example.com:443"},
	{"http://127.0.0.1:8080", NULL, NULL, false, NULL, NULL, NULL, "http://127.0.0.1:8080"},
	{"https://127.0.0.1:8080", NULL, NULL, false, NULL, NULL, NULL, "https://127.0.0.1:8080"},
	{"socks5://127.0.0.1", NULL, NULL, false, NULL, NULL, NULL, "socks5://127.0.0.1:1080"},
	/* Go preserves unknown schemes (and fails at the request); refused here. */
	{"foo://host", NULL, NULL, false, NULL, NULL, NULL,
	 "error: proxy \"foo://host\" (from HTTP_PROXY) must be an http://, https://, socks5:// "
	 "or socks5h:// URL"},
	/* Don't use secure for http */
	{"http.proxy.tld", "secure.proxy.tld", NULL, false, "http", "insecure.tld", "80",
	 "http://http.proxy.tld:80"},
	/* Use secure for https. */
	{"http.proxy.tld", "secure.proxy.tld", NULL, false, "https", "secure.tld", "443",
	 "http://secure.proxy.tld:80"},
	{"http.proxy.tld", "https://secure.proxy.tld", NULL, false, "https", "secure.tld", "443",
	 "https://secure.proxy.tld:443"},
	{"http.proxy.tld", NULL, NULL, false, "https", "secure.tld", "443", "<nil>"},
	{"http.proxy.tld", NULL, NULL, false, "ftp", "insecure.tld", "21", "<nil>"},
	/* don't use HTTP_PROXY in a CGI environment, where HTTP_PROXY can be attacker-controlled */
	{"http://10.1.2.3:8080", NULL, NULL, true, NULL, NULL, NULL,
	 "error: refusing to use the HTTP_PROXY value in a CGI environment (REQUEST_METHOD is "
	 "set); see golang.org/s/cgihttpproxy"},
	/* HTTPS proxy is still used even in CGI environment. */
	{NULL, "https://secure.proxy.tld", NULL, true, "https", "secure.tld", "443",
	 "https://secure.proxy.tld:443"},
	{NULL, NULL, NULL, false, NULL, NULL, NULL, "<nil>"},
	{"proxy", NULL, "example.com", false, "http", "example.com", "80", "<nil>"},
	{"proxy", NULL, ".example.com", false, "http", "example.com", "80", "http://proxy:80"},
	{"proxy", NULL, "ample.com", false, "http", "example.com", "80", "http://proxy:80"},
	{"proxy", NULL, "example.com", false, "http", "foo.example.com", "80", "<nil>"},
	{"proxy", NULL, ".foo.com", false, "http", "example.com", "80", "http://proxy:80"},
	{"proxy", NULL, ".\xe7\xa4\xba\xe4\xbe\x8b.com", false, "http",
	 "www.\xe7\xa4\xba\xe4\xbe\x8b.com", "80", "<nil>"},
	{"proxy", NULL, "example.com", false, "http", "[1000::%25.example.com]", "123",
	 "http://proxy:80"},
};

/* The same, where a name must be converted to punycode. */
static const struct url_case go_proxy_for_url_idn[] = {
	{"proxy", NULL, "xn--fsq092h.com", false, "http", "www.\xe7\xa4\xba\xe4\xbe\x8b.com", "80",
	 "<nil>"},
	{"proxy", NULL, "\xe7\xa4\xba\xe4\xbe\x8b.com", false, "http", "www.xn--fsq092h.com", "80",
	 "<nil>"},
};

static void check_url_case(const struct url_case *c)
{
	struct kube_proxy_env env = {c->http,
				     c->https,
				     c->no_proxy,
				     c->http ? "HTTP_PROXY" : NULL,
				     c->https ? "HTTPS_PROXY" : NULL,
				     c->cgi};
	struct kube_proxy p;
	struct gs_error err;
	char got[1100];
	int rc;

	rc = kube_proxy_choose(&p, NULL, &env, c->scheme ? c->scheme : "http",
			       c->host ? c->host : "example.com", c->port ? c->port : "80", &err);
	if (rc != 0)
		snprintf(got, sizeof(got), "error: %s", err.msg);
	else
		snprintf(got, sizeof(got), "%s", p.url ? p.shown : "<nil>");
	if (strcmp(got, c->want) != 0)
		fail_msg("http_proxy=%s https_proxy=%s no_proxy=%s req=%s://%s:%s: got %s, want %s",
			 c->http ? c->http : "", c->https ? c->https : "",
			 c->no_proxy ? c->no_proxy : "", c->scheme ? c->scheme : "http",
			 c->host ? c->host : "example.com", c->port ? c->port : "80", got, c->want);
	kube_proxy_release(&p);
}

/* Whether this libcurl converts names to punycode (7.88's CURLU_PUNYCODE fails). */
static bool libcurl_idn(void)
{
	CURLU *u = curl_url();
	char *h = NULL;
	bool ok = u &&
		  curl_url_set(u, CURLUPART_HOST, "\xe7\xa4\xba\xe4\xbe\x8b.com", 0) == CURLUE_OK &&
		  curl_url_get(u, CURLUPART_HOST, &h, CURLU_PUNYCODE) == CURLUE_OK &&
		  !strcmp(h, "xn--fsq092h.com");

	curl_free(h);
	curl_url_cleanup(u);
	return ok;
}

static void proxy_for_url_go_cases(void **state)
{
	struct gs_error err;
	bool idn;

	(void)state;
	if (curl_api_load(&err) != 0)
		skip(); /* URL parsing needs libcurl */
	idn = libcurl_idn();
	for (size_t i = 0; i < N(go_proxy_for_url); i++)
		check_url_case(&go_proxy_for_url[i]);
	for (size_t i = 0; idn && i < N(go_proxy_for_url_idn); i++)
		check_url_case(&go_proxy_for_url_idn[i]);
}

/* What libcurl is handed: the port explicit, socks5 as socks5h (the proxy resolves names). */
static void libcurl_url(void **state)
{
	struct kube_proxy_env env = {"socks5://u:pw@gw", NULL, NULL, "http_proxy", NULL, false};
	struct kube_proxy p;
	struct gs_error err;

	(void)state;
	if (curl_api_load(&err) != 0)
		skip();
	assert_int_equal(kube_proxy_choose(&p, NULL, &env, "http", "api.corp", "80", &err), 0);
	assert_string_equal(p.url, "socks5h://u:pw@gw:1080/");
	assert_string_equal(p.shown, "socks5://gw:1080");
	assert_string_equal(p.hostport, "gw:1080");
	assert_string_equal(p.raw, "socks5://u:pw@gw");
	assert_string_equal(p.from, "http_proxy");
	kube_proxy_release(&p);
	/* A kubeconfig's proxy-url carries every request, loopback and NO_PROXY too. */
	env.no_proxy = "*";
	assert_int_equal(
		kube_proxy_choose(&p, "http://gw", &env, "https", "127.0.0.1", "6443", &err), 0);
	assert_int_equal(p.why, KUBE_PROXY_SET);
	assert_string_equal(p.url, "http://gw:80/");
	assert_string_equal(p.from, "proxy-url");
	kube_proxy_release(&p);
	/* A value that is no URL is refused, its userinfo not shown. */
	env.http_proxy = "u:pw-SECRET@[x";
	env.no_proxy = NULL;
	assert_int_equal(kube_proxy_choose(&p, NULL, &env, "http", "api.corp", "80", &err), -1);
	assert_string_equal(err.msg, "proxy \"http://[x\" (from http_proxy) is not a valid URL");
	/* ... but only when it applies: loopback never looks at it. */
	assert_int_equal(kube_proxy_choose(&p, NULL, &env, "http", "127.0.0.1", "80", &err), 0);
	assert_int_equal(p.why, KUBE_PROXY_LOOPBACK);
	assert_null(p.url);
	kube_proxy_release(&p);
}

/* ---- FromEnvironment ------------------------------------------------------------------------ */

static const char *const vars[] = {"HTTP_PROXY",     "http_proxy", "HTTPS_PROXY",
				   "https_proxy",    "NO_PROXY",   "no_proxy",
				   "REQUEST_METHOD", "ALL_PROXY",  "all_proxy"};

static void clear_env(void)
{
	for (size_t i = 0; i < N(vars); i++)
		unsetenv(vars[i]);
}

/*
 * One reading of the environment: the variables set (on top of what the case
 * before left, unless fresh), and what kube_proxy_env_read makes of them.
 */
struct env_case {
	const char *why;
	bool fresh; /* clear every variable first */
	const char *set[4][2];
	const char *http, *http_var, *https, *https_var, *no_proxy;
	bool cgi;
};

static const struct env_case env_cases[] = {
	{"TestFromEnvironment",
	 true,
	 {{"HTTP_PROXY", "httpproxy"}, {"HTTPS_PROXY", "httpsproxy"}, {"NO_PROXY", "noproxy"}},
	 "httpproxy",
	 "HTTP_PROXY",
	 "httpsproxy",
	 "HTTPS_PROXY",
	 "noproxy",
	 false},
	{"TestFromEnvironmentWithRequestMethod",
	 false,
	 {{"REQUEST_METHOD", "PUT"}},
	 "httpproxy",
	 "HTTP_PROXY",
	 "httpsproxy",
	 "HTTPS_PROXY",
	 "noproxy",
	 true},
	{"TestFromEnvironmentLowerCase",
	 true,
	 {{"http_proxy", "httpproxy"}, {"https_proxy", "httpsproxy"}, {"no_proxy", "noproxy"}},
	 "httpproxy",
	 "http_proxy",
	 "httpsproxy",
	 "https_proxy",
	 "noproxy",
	 false},
	/* Upper case wins; an empty upper-case value counts as unset (getEnvAny). */
	{"upper case wins",
	 false,
	 {{"HTTPS_PROXY", "upper"}, {"NO_PROXY", ""}},
	 "httpproxy",
	 "http_proxy",
	 "upper",
	 "HTTPS_PROXY",
	 "noproxy",
	 false},
};

static void from_environment(void **state)
{
	struct kube_proxy_env env;
	struct kube_proxy p;
	struct gs_error err;

	(void)state;
	for (size_t i = 0; i < N(env_cases); i++) {
		const struct env_case *c = &env_cases[i];

		if (c->fresh)
			clear_env();
		for (size_t v = 0; v < N(c->set) && c->set[v][0]; v++)
			setenv(c->set[v][0], c->set[v][1], 1);
		kube_proxy_env_read(&env);
		print_message("%s\n", c->why);
		assert_string_equal(env.http_proxy, c->http);
		assert_string_equal(env.http_var, c->http_var);
		assert_string_equal(env.https_proxy, c->https);
		assert_string_equal(env.https_var, c->https_var);
		assert_string_equal(env.no_proxy, c->no_proxy);
		assert_int_equal(env.cgi, c->cgi);
	}
	/* ALL_PROXY is no variable of Go's: nothing is proxied by it. */
	clear_env();
	setenv("ALL_PROXY", "http://gw:3128", 1);
	setenv("all_proxy", "http://gw:3128", 1);
	kube_proxy_env_read(&env);
	assert_null(env.http_proxy);
	assert_null(env.https_proxy);
	if (curl_api_load(&err) == 0) {
		assert_int_equal(
			kube_proxy_choose(&p, NULL, NULL, "https", "api.corp", "443", &err), 0);
		assert_int_equal(p.why, KUBE_PROXY_NONE_SET);
		assert_null(p.url);
		kube_proxy_release(&p);
	}
	clear_env();
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(use_proxy_go_cases), cmocka_unit_test(use_proxy_all_and_invalid),
		cmocka_unit_test(use_proxy_more),     cmocka_unit_test(proxy_for_url_go_cases),
		cmocka_unit_test(libcurl_url),	      cmocka_unit_test(from_environment),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
