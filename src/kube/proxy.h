#ifndef GS_KUBE_PROXY_H
#define GS_KUBE_PROXY_H

/*
 * Which proxy, if any, carries the requests to an apiserver: decided here
 * as client-go decides it, never by libcurl. libcurl's own reading of the
 * environment differs from Go's (it honours ALL_PROXY, reads lower case
 * before upper case, ignores HTTP_PROXY, has its own NO_PROXY grammar and
 * proxies loopback addresses), so kube_proxy_apply sets CURLOPT_PROXY and
 * CURLOPT_NOPROXY on every handle, explicitly empty for a direct
 * connection.
 *
 * The rules (docs/design/kubeclient.md, "Proxies"): a kubeconfig cluster's
 * proxy-url carries every request (client-go's http.ProxyURL); otherwise
 * the environment, read as Go's golang.org/x/net/http/httpproxy reads it:
 * HTTPS_PROXY/https_proxy for https, HTTP_PROXY/http_proxy for http (the
 * upper-case name wins when both are set and not empty), NO_PROXY/no_proxy
 * excluding hosts, localhost and loopback addresses never proxied, and
 * HTTP_PROXY refused when REQUEST_METHOD is set (a CGI environment).
 *
 * Both transports use this: kubeclient sets it on its handle, and
 * kubeloop's handles are copies of that handle (kube_client_easy).
 */

#include <stdbool.h>

#include "base/error.h"

/* The environment, as httpproxy.FromEnvironment reads it. Values NULL when unset or empty. */
struct kube_proxy_env {
	const char *http_proxy;	 /* HTTP_PROXY, else http_proxy */
	const char *https_proxy; /* HTTPS_PROXY, else https_proxy */
	const char *no_proxy;	 /* NO_PROXY, else no_proxy */
	const char *http_var;	 /* the name http_proxy came from, for messages */
	const char *https_var;
	bool cgi; /* REQUEST_METHOD is set */
};

/* Fill env from getenv(); the strings are the environment's. */
void kube_proxy_env_read(struct kube_proxy_env *env);

enum kube_proxy_why {
	KUBE_PROXY_SET,	     /* a proxy is used */
	KUBE_PROXY_NONE_SET, /* no proxy-url, and no variable for the scheme */
	KUBE_PROXY_LOOPBACK, /* localhost or a loopback address: never proxied */
	KUBE_PROXY_NO_PROXY, /* NO_PROXY/no_proxy names the host */
};

/* The outcome; release with kube_proxy_release. */
struct kube_proxy {
	enum kube_proxy_why why;
	char *url;	  /* what libcurl dials: port explicit, socks5 as socks5h; NULL = direct */
	char *raw;	  /* the value as configured (may hold userinfo), NULL = direct */
	char *shown;	  /* url without userinfo, for messages */
	char *host;	  /* the proxy's host, for messages */
	char *hostport;	  /* host:port, for messages */
	const char *from; /* "proxy-url", "HTTPS_PROXY", "https_proxy", ... (static) */
};

void kube_proxy_release(struct kube_proxy *p);

/*
 * Decide the proxy for requests to scheme://host:port (host as in a URL,
 * an IPv6 address in brackets or not; port always given). proxy_url is the
 * kubeconfig cluster's proxy-url (NULL or "" = none), env the environment
 * (NULL = kube_proxy_env_read). A proxy value without "scheme://" is taken
 * as http:// (Go's parseProxy); its port defaults to the scheme's (80, 443,
 * 1080), as Go dials it, not libcurl's 1080 for every scheme. Needs libcurl
 * loaded (curl_api_load).
 *
 * -1 with err when the chosen value is no http, https, socks5 or socks5h
 * URL with a host (the value is shown without userinfo), or when HTTP_PROXY
 * applies in a CGI environment.
 */
int kube_proxy_choose(struct kube_proxy *out, const char *proxy_url,
		      const struct kube_proxy_env *env, const char *scheme, const char *host,
		      const char *port, struct gs_error *err) GS_WUR;

/*
 * Go's httpproxy useProxy: whether a request to host:port goes through the
 * environment's proxy given no_proxy (NULL = none). False for "localhost"
 * and loopback addresses whatever no_proxy says. no_proxy is a comma list
 * of "*" (nothing is proxied), IP addresses and CIDRs, domain names (the
 * name and its subdomains), ".domain" and "*.domain" (subdomains only),
 * each with an optional ":port" ([IPv6]:port). Matching ignores case and
 * the spaces around entries; non-ASCII names compare in punycode when
 * the loaded libcurl converts them (7.88's CURLU_PUNYCODE fails: then as
 * written).
 */
bool kube_proxy_use(const char *no_proxy, const char *host, const char *port);

/*
 * Set p on a libcurl handle (a CURL *): CURLOPT_PROXY (empty = direct),
 * CURLOPT_NOPROXY empty (the decision is made), and for https a CONNECT
 * tunnel (CURLOPT_HTTPPROXYTUNNEL), so a proxy sees no request header.
 * -1 when libcurl refuses an option.
 */
int kube_proxy_apply(void *curl, const struct kube_proxy *p, bool https) GS_WUR;

#endif
