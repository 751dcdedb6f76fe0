#define GS_CURLAPI_NO_MACROS
#include "kube/curlapi.h"

#include <dlfcn.h>

#include "base/banned.h"

struct curl_api curl_api;

int curl_api_load(struct gs_error *err)
{
	void *h;

	if (curl_api.loaded)
		return 0;
	h = dlopen(GS_LIBCURL_SONAME, RTLD_NOW | RTLD_LOCAL);
	if (!h) {
		gs_error_set(err, "cannot load %s (Debian package libcurl4): %s", GS_LIBCURL_SONAME,
			     dlerror());
		return -1;
	}
#define LOAD(name)                                                                                 \
	*(void **)&curl_api.name = dlsym(h, #name);                                                \
	if (!curl_api.name) {                                                                      \
		gs_error_set(err, "%s lacks %s", GS_LIBCURL_SONAME, #name);                        \
		return -1;                                                                         \
	}
	GS_CURL_API(LOAD)
#undef LOAD
	curl_api.loaded = 1;
	return 0;
}
