#ifndef GS_WRAPPER_H
#define GS_WRAPPER_H

#include <stddef.h>

/* Allocation that never returns NULL: an out-of-memory CLI has no better move. */
void *gs_xmalloc(size_t n);
void *gs_xcalloc(size_t n, size_t size);
void *gs_xrealloc(void *p, size_t n);
char *gs_xstrdup(const char *s);
char *gs_xstrndup(const char *s, size_t n);

#endif
