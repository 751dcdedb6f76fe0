/*
 * libFuzzer target for kubeconfig loading: any file either loads into a
 * configuration with an http(s) server, a namespace and a source, or fails
 * with a message. The input goes through a temporary file, as a
 * kubeconfig always does.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kube/kubeconfig.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static char path[64];

static void remove_tmp(void)
{
	unlink(path);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct kube_config_env env = {.home = "/nonexistent"};
	struct kube_config *cfg;
	struct gs_error err;
	FILE *f;

	if (!path[0]) {
		int fd;
		snprintf(path, sizeof(path), "/tmp/gs-fuzz-kubeconfig-XXXXXX");
		fd = mkstemp(path);
		if (fd < 0)
			abort();
		close(fd);
		atexit(remove_tmp);
	}
	f = fopen(path, "wb");
	if (!f)
		abort();
	if (size)
		fwrite(data, 1, size, f);
	fclose(f);
	env.kubeconfig = path;
	if (kube_config_load_env(&cfg, NULL, &env, &err) != 0) {
		if (!err.msg[0] || cfg)
			abort();
		return 0;
	}
	if (!cfg->server ||
	    (strncmp(cfg->server, "https://", 8) && strncmp(cfg->server, "http://", 7)) ||
	    !cfg->namespace || !cfg->namespace[0] || !cfg->source)
		abort();
	if ((cfg->client_cert.data == NULL) != (cfg->client_key.data == NULL))
		abort();
	kube_config_free(cfg);
	return 0;
}
