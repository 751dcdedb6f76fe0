#ifndef GS_KUBECONTEXT_H
#define GS_KUBECONTEXT_H

/*
 * The one place a live command (sync, lab, explain) goes from its flags to
 * a client: the connection flags are one option group spliced into the
 * command's table, kube_context_open() loads the kubeconfig they point at,
 * makes the client and says once, on standard error, which cluster and
 * context it talks to (the server URL without credentials or query).
 *
 *	struct kube_context kx = {0};
 *	struct option opts[] = { ..., OPT_KUBE_CONNECTION(&kx.opts), OPT_END() };
 *	if (kube_context_open(&kx, "sync", &err) < 0) ...
 *	... kx.client ...
 *	kube_context_release(&kx);
 */

#include "kube/kubeclient.h"
#include "kube/kubeconfig.h"
#include "cmd/parseopt.h"

struct kube_context {
	struct kube_config_opts opts; /* filled by the flags of OPT_KUBE_CONNECTION */
	/*
	 * Set by a command that runs until stopped (controller, webhook, sync
	 * --interval): an apiserver that refuses connections or does not
	 * resolve is waited for (retried with backoff), as it is during a
	 * restart. One-shot commands fail at once, as kubectl does.
	 */
	bool retry_unreachable;
	struct kube_config *cfg;    /* after open */
	struct kube_client *client; /* after open */
};

/*
 * kubectl's connection flags. No -n/--namespace: every live command names
 * its namespaces itself (NS/NAME arguments, --configmap NS/NAME).
 */
#define OPT_KUBE_CONNECTION(ko)                                                                    \
	OPT_GROUP("Connection (as kubectl's):"),                                                   \
		OPT_STRING(0, "kubeconfig", &(ko)->kubeconfig, "FILE",                             \
			   "kubeconfig to use [$KUBECONFIG, else ~/.kube/config]"),                \
		OPT_STRING(0, "context", &(ko)->context, "NAME",                                   \
			   "kubeconfig context to use [current-context]"),                         \
		OPT_STRING(0, "cluster", &(ko)->cluster, "NAME",                                   \
			   "kubeconfig cluster to use instead of the context's"),                  \
		OPT_STRING(0, "user", &(ko)->user, "NAME",                                         \
			   "kubeconfig user to use instead of the context's"),                     \
		OPT_STRING(0, "server", &(ko)->server, "URL",                                      \
			   "the apiserver's address, instead of the cluster's"),                   \
		OPT_STRING(0, "token", &(ko)->token, "TOKEN",                                      \
			   "bearer token, instead of the user's"),                                 \
		OPT_BOOL(0, "insecure-skip-tls-verify", &(ko)->insecure_skip_tls_verify,           \
			 "do not verify the apiserver's certificate (unsafe)"),                    \
		OPT_DURATION(0, "request-timeout", &(ko)->request_timeout_ms, "DURATION",          \
			     "limit for one request, e.g. 30s, 2m [30s]", 86400000L),              \
		OPT_INT('v', "v", &(ko)->verbosity, "LEVEL",                                       \
			"log level, as kubectl's: 6 or more prints each request attempt and\n"     \
			"the proxy used, on standard error [0]",                                   \
			0, 10)

/*
 * Load the configuration, make the client, print "gpushare CMD: cluster
 * URL, context NAME" to stderr. -1 with err filled (nothing printed) when
 * the kubeconfig or the client cannot be made. With -v 6 or more, the
 * client's trace lines (one per attempt, never a header or body) follow on
 * stderr as "gpushare CMD: LINE". cmd must outlive the client.
 */
int kube_context_open(struct kube_context *kx, const char *cmd, struct gs_error *err) GS_WUR;
void kube_context_release(struct kube_context *kx);

#endif
