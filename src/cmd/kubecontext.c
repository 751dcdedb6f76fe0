#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd/cmd.h"
#include "cmd/kubecontext.h"
#include "base/banned.h"

/* kubectl logs each request from --v=6 on (k8s.io/client-go rest/request.go). */
#define TRACE_LEVEL 6

static void trace_line(void *arg, const char *line)
{
	fprintf(stderr, "gpushare %s: %s\n", (const char *)arg, line);
}

int kube_context_open(struct kube_context *kx, const char *cmd, struct gs_error *err)
{
	struct kube_client_opts co = {0};
	char *url;

	if (kube_config_load(&kx->cfg, &kx->opts, err) < 0)
		return -1;
	url = kube_url_shown(kx->cfg->server);
	if (kx->cfg->context)
		cmd_eprintf("gpushare %s: cluster %s, context %s\n", cmd, url, kx->cfg->context);
	else
		cmd_eprintf("gpushare %s: cluster %s (%s)\n", cmd, url, kx->cfg->source);
	free(url);
	co.retry_unreachable = kx->retry_unreachable;
	if (kx->opts.verbosity >= TRACE_LEVEL) {
		co.trace = trace_line;
		co.trace_arg = (void *)cmd;
	}
	if (kube_client_new(&kx->client, kx->cfg, &co, err) < 0)
		return -1;
	return 0;
}

void kube_context_release(struct kube_context *kx)
{
	kube_client_free(kx->client);
	kube_config_free(kx->cfg);
	kx->client = NULL;
	kx->cfg = NULL;
}
