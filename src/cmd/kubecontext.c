#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kubecontext.h"
#include "banned.h"

char *kube_context_display_url(const char *server)
{
	const char *scheme_end = strstr(server, "://");
	const char *host = scheme_end ? scheme_end + 3 : server;
	size_t auth_len = strcspn(host, "/?#");
	const char *at = memchr(host, '@', auth_len);
	size_t rest;
	char *out;

	if (at) {
		/* Keep the scheme, drop user:password@. */
		size_t scheme_len = (size_t)(host - server);
		const char *after = at + 1;
		rest = strcspn(after, "?#");
		out = gs_xmalloc(scheme_len + rest + 1);
		memcpy(out, server, scheme_len);
		memcpy(out + scheme_len, after, rest);
		out[scheme_len + rest] = '\0';
	} else {
		rest = (size_t)(host - server) + strcspn(host, "?#");
		out = gs_xstrndup(server, rest);
	}
	/* Control characters never reach the terminal. */
	for (char *p = out; *p; p++)
		if ((unsigned char)*p < 0x20 || *p == 0x7f)
			*p = '?';
	return out;
}

int kube_context_open(struct kube_context *kx, const char *cmd, struct gs_error *err)
{
	char *url;

	if (kube_config_load(&kx->cfg, &kx->opts, err) < 0)
		return -1;
	url = kube_context_display_url(kx->cfg->server);
	if (kx->cfg->context)
		fprintf(stderr, "gpushare %s: cluster %s, context %s\n", cmd, url,
			kx->cfg->context);
	else
		fprintf(stderr, "gpushare %s: cluster %s (%s)\n", cmd, url, kx->cfg->source);
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
