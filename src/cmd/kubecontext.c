#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd/cmd.h"
#include "cmd/kubecontext.h"
#include "base/banned.h"

int kube_context_open(struct kube_context *kx, const char *cmd, struct gs_error *err)
{
	char *url;

	if (kube_config_load(&kx->cfg, &kx->opts, err) < 0)
		return -1;
	url = kube_url_shown(kx->cfg->server);
	if (kx->cfg->context)
		cmd_eprintf("gpushare %s: cluster %s, context %s\n", cmd, url, kx->cfg->context);
	else
		cmd_eprintf("gpushare %s: cluster %s (%s)\n", cmd, url, kx->cfg->source);
	free(url);
	if (kube_client_new(&kx->client, kx->cfg, NULL, err) < 0)
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
