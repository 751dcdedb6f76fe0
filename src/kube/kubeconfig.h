#ifndef GS_KUBECONFIG_H
#define GS_KUBECONFIG_H

#include <stdbool.h>
#include <stddef.h>
#include <time.h>

#include "base/error.h"

/*
 * Where the apiserver is and how to authenticate, found the way kubectl
 * finds it (docs/design/kubeclient.md): `--kubeconfig` (one file, must exist), else
 * the colon-separated KUBECONFIG list (missing files skipped, merged: the
 * first file to set a map key or current-context wins), else
 * ~/.kube/config; when none of them holds anything, the in-cluster service
 * account. Relative file paths in an entry resolve against the directory of
 * the file that defined the entry.
 *
 * Secrets (token, password, client key) are held here but never appear in
 * any message this module or kubeclient produces.
 */

/* What a command's flags may override. All fields may be NULL/false. */
struct kube_config_opts {
	const char *kubeconfig;	       /* --kubeconfig: overrides KUBECONFIG */
	const char *context;	       /* --context: overrides current-context */
	const char *cluster;	       /* --cluster: overrides the context's cluster */
	const char *user;	       /* --user: overrides the context's user */
	const char *namespace;	       /* -n/--namespace: overrides the context's namespace */
	const char *server;	       /* --server: overrides the cluster's server */
	const char *token;	       /* --token: overrides the user's token (secret) */
	bool insecure_skip_tls_verify; /* --insecure-skip-tls-verify */
	long request_timeout_ms;       /* --request-timeout; 0 = kubeclient's default */
	long verbosity; /* -v/--v: kubectl's log level, for the client (src/cmd/kubecontext.h) */
};

/* A PEM blob read from a `*-data` field or a file, plus where it came from. */
struct kube_pem {
	unsigned char *data; /* NULL when absent; not NUL-terminated */
	size_t len;
	char *origin; /* the file path, or e.g. `user "admin" client-key-data` */
};

struct kube_config {
	char *source;	 /* the kubeconfig file(s) used, or "in-cluster" */
	char *context;	 /* the context used; NULL for in-cluster */
	char *cluster;	 /* cluster entry name; NULL for in-cluster */
	char *user;	 /* user entry name; NULL for in-cluster */
	char *namespace; /* the context's namespace, else "default" */

	char *server;	       /* scheme://host[:port][/prefix], no trailing '/' */
	char *tls_server_name; /* NULL = the server's host */
	char *proxy_url;       /* NULL = the environment's proxy settings */
	bool insecure_skip_tls_verify;
	struct kube_pem ca; /* NULL data = the system trust store */
	struct kube_pem client_cert;
	struct kube_pem client_key; /* secret */

	char *token;	  /* secret; the `token` field, or tokenFile's content at load */
	char *token_file; /* NULL, or re-read by kubeclient when it changes (rotation) */
	char *username;	  /* basic auth */
	char *password;	  /* secret */

	long request_timeout_ms; /* from opts; 0 = default */
};

/* Where kube_config_load_env looks; kube_config_load fills it from the process. */
struct kube_config_env {
	const char *kubeconfig;	   /* $KUBECONFIG, NULL/"" = unset */
	const char *home;	   /* $HOME, for ~/.kube/config */
	const char *service_host;  /* $KUBERNETES_SERVICE_HOST */
	const char *service_port;  /* $KUBERNETES_SERVICE_PORT */
	const char *pod_namespace; /* $POD_NAMESPACE: the in-cluster namespace before the file's */
	/*
	 * The service account's token, ca.crt and namespace; NULL/"" =
	 * /var/run/secrets/kubernetes.io/serviceaccount. kube_config_load takes
	 * $GPUSHARE_SERVICEACCOUNT_DIR (tests, non-standard mounts).
	 */
	const char *sa_dir;
};

/*
 * Load the configuration the flags and environment point at. On failure
 * returns -1, *out is NULL and err says what is missing or wrong (with
 * file:line:col for a malformed kubeconfig).
 */
int kube_config_load(struct kube_config **out, const struct kube_config_opts *opts,
		     struct gs_error *err) GS_WUR;
int kube_config_load_env(struct kube_config **out, const struct kube_config_opts *opts,
			 const struct kube_config_env *env, struct gs_error *err) GS_WUR;

void kube_config_free(struct kube_config *cfg);

/*
 * What a message may show of a URL: scheme, host, port and path. Userinfo,
 * query and fragment are dropped (everything before the last '@' that
 * precedes any '?' or '#' counts as userinfo), and bytes outside printable
 * ASCII become %XX, so the result never carries a credential or a line
 * break. Never NULL; caller frees.
 */
char *kube_url_shown(const char *url);

/*
 * The first control character (C0 or DEL) in s[0..len) as its byte value,
 * or -1 when there is none. Values that go into an HTTP header or the URL
 * (token, username, password, server, ...) are refused when this finds one:
 * a CR or LF would add header lines, as kubectl's net/http refuses too.
 */
int kube_ctl_char(const char *s, size_t len);

/*
 * Whether a proxy URL has a scheme client-go dials (http, https, socks5;
 * libcurl's socks5h too). libcurl would quote any other whole, userinfo
 * included, in its error.
 */
bool kube_proxy_url_ok(const char *url);

/*
 * Read a bearer token file as client-go does (the whole file, then Go's
 * strings.TrimSpace), refusing an empty token and one holding a control
 * character. *token receives it (wipe it, then free); *mtime, when not
 * NULL, the file's modification time. err says `"PATH": what is wrong`,
 * never the content.
 */
int kube_token_file_read(const char *path, char **token, struct timespec *mtime,
			 struct gs_error *err) GS_WUR;

#endif
