#include "base/wrapper.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/banned.h"

static void oom(void)
{
	fputs("gpushare: out of memory\n", stderr);
	abort();
}

void *gs_xmalloc(size_t n)
{
	void *p = malloc(n ? n : 1);
	if (!p)
		oom();
	return p;
}

void *gs_xcalloc(size_t n, size_t size)
{
	void *p = calloc(n ? n : 1, size ? size : 1);
	if (!p)
		oom();
	return p;
}

void *gs_xrealloc(void *p, size_t n)
{
	void *q = realloc(p, n ? n : 1);
	if (!q)
		oom();
	return q;
}

char *gs_xstrdup(const char *s)
{
	return gs_xstrndup(s, strlen(s));
}

char *gs_xstrndup(const char *s, size_t n)
{
	char *p = gs_xmalloc(n + 1);
	memcpy(p, s, n);
	p[n] = '\0';
	return p;
}
