#ifndef GS_CURLAPI_H
#define GS_CURLAPI_H

/*
 * libcurl, loaded at run time. libcurl (and the ~30 libraries it pulls in)
 * costs every process about 20 ms of dynamic loading; only the commands
 * that talk to an apiserver need it, so kubeclient and kubeloop load it on
 * first use (curl_api_load) instead of linking it: `check` and the other
 * offline commands start without it.
 *
 * Include this header instead of <curl/curl.h>: after it, the usual names
 * (curl_easy_setopt, curl_multi_perform, ...) call through the loaded
 * pointers. Calling one before curl_api_load() succeeded is a crash.
 */

/* Calls go through pointers loaded at run time (below); no type-check macros. */
#define CURL_DISABLE_TYPECHECK
#include <curl/curl.h>

#include "base/error.h"

#define GS_LIBCURL_SONAME "libcurl.so.4"

#define GS_CURL_API(X)                                                                             \
	X(curl_easy_cleanup)                                                                       \
	X(curl_easy_duphandle)                                                                     \
	X(curl_easy_getinfo)                                                                       \
	X(curl_easy_init)                                                                          \
	X(curl_easy_perform)                                                                       \
	X(curl_easy_setopt)                                                                        \
	X(curl_easy_strerror)                                                                      \
	X(curl_free)                                                                               \
	X(curl_global_cleanup)                                                                     \
	X(curl_global_init)                                                                        \
	X(curl_multi_add_handle)                                                                   \
	X(curl_multi_cleanup)                                                                      \
	X(curl_multi_info_read)                                                                    \
	X(curl_multi_init)                                                                         \
	X(curl_multi_perform)                                                                      \
	X(curl_multi_poll)                                                                         \
	X(curl_multi_remove_handle)                                                                \
	X(curl_multi_setopt)                                                                       \
	X(curl_multi_strerror)                                                                     \
	X(curl_slist_append)                                                                       \
	X(curl_slist_free_all)                                                                     \
	X(curl_url)                                                                                \
	X(curl_url_cleanup)                                                                        \
	X(curl_url_get)                                                                            \
	X(curl_url_set)

#define GS_CURL_API_FIELD(name) __typeof__(name) *name;
struct curl_api {
	int loaded;
	GS_CURL_API(GS_CURL_API_FIELD)
};
#undef GS_CURL_API_FIELD

extern struct curl_api curl_api;

/* Load libcurl once per process; -1 with err when it is missing or too old. */
int curl_api_load(struct gs_error *err) GS_WUR;

#ifndef GS_CURLAPI_NO_MACROS
/* curl.h wraps these in argument-count macros. */
#undef curl_easy_getinfo
#undef curl_easy_setopt
#undef curl_multi_setopt
#define curl_easy_cleanup (curl_api.curl_easy_cleanup)
#define curl_easy_duphandle (curl_api.curl_easy_duphandle)
#define curl_easy_getinfo (curl_api.curl_easy_getinfo)
#define curl_easy_init (curl_api.curl_easy_init)
#define curl_easy_perform (curl_api.curl_easy_perform)
#define curl_easy_setopt (curl_api.curl_easy_setopt)
#define curl_easy_strerror (curl_api.curl_easy_strerror)
#define curl_free (curl_api.curl_free)
#define curl_global_cleanup (curl_api.curl_global_cleanup)
#define curl_global_init (curl_api.curl_global_init)
#define curl_multi_add_handle (curl_api.curl_multi_add_handle)
#define curl_multi_cleanup (curl_api.curl_multi_cleanup)
#define curl_multi_info_read (curl_api.curl_multi_info_read)
#define curl_multi_init (curl_api.curl_multi_init)
#define curl_multi_perform (curl_api.curl_multi_perform)
#define curl_multi_poll (curl_api.curl_multi_poll)
#define curl_multi_remove_handle (curl_api.curl_multi_remove_handle)
#define curl_multi_setopt (curl_api.curl_multi_setopt)
#define curl_multi_strerror (curl_api.curl_multi_strerror)
#define curl_slist_append (curl_api.curl_slist_append)
#define curl_slist_free_all (curl_api.curl_slist_free_all)
#define curl_url (curl_api.curl_url)
#define curl_url_cleanup (curl_api.curl_url_cleanup)
#define curl_url_get (curl_api.curl_url_get)
#define curl_url_set (curl_api.curl_url_set)
#endif

#endif
