#include "base/strbuf.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/wrapper.h"
#include "base/banned.h"

/* What an unallocated strbuf points at: always "" (nothing may write to it). */
char strbuf_slopbuf[1];

void strbuf_init(struct strbuf *sb, size_t hint)
{
	sb->alloc = 0;
	sb->len = 0;
	sb->buf = strbuf_slopbuf;
	if (hint)
		strbuf_grow(sb, hint);
}

void strbuf_release(struct strbuf *sb)
{
	if (sb->alloc)
		free(sb->buf);
	strbuf_init(sb, 0);
}

char *strbuf_detach(struct strbuf *sb, size_t *len)
{
	char *s;

	if (len)
		*len = sb->len;
	if (!sb->alloc)
		s = gs_xstrdup("");
	else
		s = sb->buf;
	strbuf_init(sb, 0);
	return s;
}

void strbuf_grow(struct strbuf *sb, size_t extra)
{
	size_t need;

	if (extra > SIZE_MAX - sb->len - 1)
		abort(); /* no length of text in memory gets here */
	need = sb->len + extra + 1;
	if (need <= sb->alloc)
		return;
	size_t alloc = sb->alloc ? sb->alloc : 64;
	while (alloc < need)
		alloc = alloc > SIZE_MAX / 2 ? need : alloc * 2;
	if (!sb->alloc) {
		sb->buf = gs_xmalloc(alloc);
		sb->buf[0] = '\0';
	} else {
		sb->buf = gs_xrealloc(sb->buf, alloc);
	}
	sb->alloc = alloc;
}

void strbuf_setlen(struct strbuf *sb, size_t len)
{
	if (!sb->alloc)
		return; /* empty, and slopbuf stays "" */
	if (len >= sb->alloc)
		len = sb->alloc - 1;
	sb->len = len;
	sb->buf[len] = '\0';
}

void strbuf_add(struct strbuf *sb, const void *data, size_t len)
{
	if (!len)
		return;
	strbuf_grow(sb, len);
	memcpy(sb->buf + sb->len, data, len);
	sb->len += len;
	sb->buf[sb->len] = '\0';
}

void strbuf_addstr(struct strbuf *sb, const char *s)
{
	strbuf_add(sb, s, strlen(s));
}

void strbuf_addch(struct strbuf *sb, int c)
{
	char ch = (char)c;

	strbuf_add(sb, &ch, 1);
}

void strbuf_vaddf(struct strbuf *sb, const char *fmt, va_list ap)
{
	va_list aq;
	int n;

	strbuf_grow(sb, 64);
	va_copy(aq, ap);
	n = vsnprintf(sb->buf + sb->len, sb->alloc - sb->len, fmt, aq);
	va_end(aq);
	if (n < 0) {
		sb->buf[sb->len] = '\0'; /* an encoding error: add nothing */
		return;
	}
	if ((size_t)n >= sb->alloc - sb->len) {
		strbuf_grow(sb, (size_t)n);
		n = vsnprintf(sb->buf + sb->len, sb->alloc - sb->len, fmt, ap);
		if (n < 0) {
			sb->buf[sb->len] = '\0';
			return;
		}
	}
	sb->len += (size_t)n;
}

void strbuf_addf(struct strbuf *sb, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	strbuf_vaddf(sb, fmt, ap);
	va_end(ap);
}

void strbuf_addsep(struct strbuf *sb, const char *sep, const char *s)
{
	if (sb->len)
		strbuf_addstr(sb, sep);
	strbuf_addstr(sb, s);
}

char *strbuf_copy_to(const struct strbuf *sb, char *dst, size_t size)
{
	size_t n = sb->len;

	if (!size)
		return dst;
	if (n >= size) {
		n = size - 1;
		/* back off continuation bytes so no character is cut in two */
		while (n > 0 && ((unsigned char)sb->buf[n] & 0xc0) == 0x80)
			n--;
	}
	memcpy(dst, sb->buf, n);
	dst[n] = '\0';
	return dst;
}

char *gs_xasprintf(const char *fmt, ...)
{
	struct strbuf sb = STRBUF_INIT;
	va_list ap;

	va_start(ap, fmt);
	strbuf_vaddf(&sb, fmt, ap);
	va_end(ap);
	/* Its own size: callers keep many short ones (plan's 3 per pod). */
	if (sb.alloc > sb.len + 1) {
		sb.buf = gs_xrealloc(sb.buf, sb.len + 1);
		sb.alloc = sb.len + 1;
	}
	return strbuf_detach(&sb, NULL);
}
