#ifndef GS_KUBECONN_H
#define GS_KUBECONN_H

#include <stdbool.h>
#include <stddef.h>

#include "base/error.h"
#include "kube/kubeconfig.h"
#include "kube/kuberetry.h"
#include "kube/kubestatus.h"

/*
 * How an apiserver is reached, decided once from a kubeconfig: the server
 * URL, TLS (verified unless the kubeconfig or a flag says otherwise),
 * credentials (a rotating token file looked at again), the proxy (as
 * client-go decides it, kube/proxy.h), timeouts and the retry policy
 * (kube/kuberetry.h). It makes the libcurl handle of each request and tells
 * what a failed attempt means, in words a user can act on; it sends
 * nothing itself. The event loop (kube/kubeloop.h) runs the requests, and
 * the blocking client (kube/kubeclient.h) is a one-request run of a loop.
 * The contract (which failures are retried, what is never printed) is in
 * docs/design/kubeclient.md.
 */

/* Zero fields take the defaults in brackets. */
struct kube_client_opts {
	long request_timeout_ms;   /* one attempt, connect included [30000] */
	long connect_timeout_ms;   /* [10000] */
	long deadline_ms;	   /* all attempts and waits of one request [60000] */
	unsigned max_attempts;	   /* [10] */
	long backoff_base_ms;	   /* first retry delay [250] */
	long backoff_max_ms;	   /* cap of one backoff delay [4000]; Retry-After is
				      honoured as sent, within the deadline */
	size_t max_response_bytes; /* one response body of a blocking call [64 MiB] */
	size_t max_list_items;	   /* kube_list total [1000000] */
	unsigned list_page_size;   /* kube_list `limit` [500] */
	const char *user_agent;	   /* ["gpushare/<version>"] */
	long token_reread_ms;	   /* look at a tokenFile again after this long [60000] */
	/*
	 * A server that cannot be reached at all (connection refused, no
	 * route, a name that does not resolve) fails at once with kubectl's
	 * words, as kubectl does [false]; true retries it like any transient
	 * failure, for a daemon that must outlive an apiserver restart.
	 */
	bool retry_unreachable;
	/*
	 * One line per attempt and per retry decision (method, URL, HTTP
	 * status, timing); never headers or bodies. NULL = silent.
	 */
	void (*trace)(void *arg, const char *line);
	void *trace_arg;
};

struct kube_conn;

/*
 * Connect-free setup from cfg (which may be freed afterwards). opts may be
 * NULL. Fails only for an unusable config (bad server URL, token file
 * unreadable, a proxy that is no URL, a credential that a proxy would carry
 * in clear text to an http:// server).
 */
int kube_conn_new(struct kube_conn **out, const struct kube_config *cfg,
		  const struct kube_client_opts *opts, struct gs_error *err) GS_WUR;
void kube_conn_free(struct kube_conn *c);

/* The options with their defaults filled in. */
const struct kube_client_opts *kube_conn_opts(const struct kube_conn *c);
/* The retry policy's limits, from the options. */
const struct kube_retry_policy *kube_conn_policy(const struct kube_conn *c);
/* The namespace of the configuration. */
const char *kube_conn_namespace(const struct kube_conn *c);
/* scheme://host:port[/prefix] that API paths are appended to. */
const char *kube_conn_base_url(const struct kube_conn *c);
/* One trace line (opts.trace), when tracing. */
void kube_conn_trace(struct kube_conn *c, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* ---- one request's handle ------------------------------------------------------------ */

#define KUBE_ERRBUF_SIZE 256 /* CURL_ERROR_SIZE */

/*
 * What one attempt showed beyond its result code, for kube_conn_diagnose:
 * libcurl's error text and what the TLS handshake looked like (libcurl's
 * debug callback, https only: received handshake messages and record
 * headers, nothing else). Lives as long as its handle.
 */
struct kube_wire {
	char errbuf[KUBE_ERRBUF_SIZE];
	bool cert_request; /* the server sent a CertificateRequest */
	int alert;	   /* the last TLS alert received, else -1 */
	bool not_tls;	   /* the first record header was not TLS */
	bool plain_http;   /* ... it was printable text, as "HTTP/" */
	unsigned token_gen;
	char why[1024]; /* kube_conn_diagnose's words for TLS and unreachable failures */
};

/*
 * A new libcurl easy handle (a CURL *, the caller frees it with
 * curl_easy_cleanup) carrying the server, TLS, proxy, connect timeout and
 * credentials, reporting into w. The caller sets the URL (the base URL
 * plus an API path), method, headers, body callbacks and timeout. NULL
 * when libcurl cannot copy the handle.
 */
void *kube_conn_handle(struct kube_conn *c, struct kube_wire *w);
/*
 * Before each attempt on handle h: w is cleared, and the token file looked
 * at again when due (a rotated token reaches h).
 */
void kube_conn_attempt(struct kube_conn *c, void *h, struct kube_wire *w);
/*
 * The apiserver answered 401 to a request with these credentials: the token
 * file is looked at again before the next attempt instead of at the next
 * minute (client-go's tokenSourceTransport resets its cached token on a 401).
 */
void kube_conn_unauthorized(struct kube_conn *c);

/*
 * An attempt on h ended with libcurl's code cc (a CURLcode, not CURLE_OK):
 * transient, unreachable (w->why has kubectl's words), or fatal (a TLS
 * failure a user must fix, w->why says what; or anything else no retry
 * changes).
 */
enum kube_attempt_end kube_conn_diagnose(struct kube_conn *c, void *h, int cc, struct kube_wire *w);
/*
 * The message of a request that got no usable answer after `attempts`
 * attempts over elapsed_ms (malloc'd, secrets masked): METHOD URL first,
 * then what failed, then how hard it tried (docs/design/kubeclient.md
 * "Errors"). overflow: the response passed max_body bytes.
 */
char *kube_conn_failure(struct kube_conn *c, const char *method, const char *url, int cc,
			const struct kube_wire *w, enum kube_attempt_end end, bool overflow,
			size_t max_body, unsigned attempts, long long elapsed_ms);
/*
 * An answer from a plain-HTTP URL that is Go's net/http on a TLS port (400
 * "Client sent an HTTP request to an HTTPS server"): the message saying so
 * (malloc'd), else NULL.
 */
char *kube_conn_tls_port(struct kube_conn *c, const char *method, const char *url, int code,
			 const char *body);

/* Mask with '*' whatever goes on the wire as a credential in p[0..n). */
void kube_conn_mask(const struct kube_conn *c, char *p, size_t n);

/* ---- paths ------------------------------------------------------------------------------- */

#define KUBE_MAX_URL 8192u

/* An API path: starts with '/', no space, control character or '#'. */
bool kube_path_valid(const char *path);
/* Append key=val to *url (malloc'd, replaced) with '?' or '&', val percent-encoded. */
void kube_query_append(char **url, const char *key, const char *val);

#endif
