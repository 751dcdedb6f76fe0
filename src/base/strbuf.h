#ifndef GS_STRBUF_H
#define GS_STRBUF_H

#include <stdarg.h>
#include <stddef.h>

/*
 * A growable string (git's strbuf): buf is never NULL and always
 * NUL-terminated, len counts the bytes before that NUL (the text may hold
 * NULs of its own), alloc is what is allocated (0: buf points at a shared
 * empty string and nothing is owned).
 *
 * Growing never fails: memory comes from gs_xrealloc, which ends the
 * program when there is none, and a length that would overflow size_t
 * aborts. What goes in is capped where it is read (ydoc limits, request
 * and response caps), so a buffer stays within a few times its input.
 *
 *   struct strbuf sb = STRBUF_INIT;
 *   strbuf_addf(&sb, "%s=%d", key, n);
 *   use(sb.buf);
 *   strbuf_release(&sb);          (or: char *s = strbuf_detach(&sb, NULL);)
 */
struct strbuf {
	size_t alloc;
	size_t len;
	char *buf;
};

extern char strbuf_slopbuf[];
#define STRBUF_INIT                                                                                \
	{                                                                                          \
		0, 0, strbuf_slopbuf                                                               \
	}

void strbuf_init(struct strbuf *sb, size_t hint);
/* Free the contents; sb is empty and usable again. */
void strbuf_release(struct strbuf *sb);
/* The text, now the caller's to free (never NULL); *len gets its length when len != NULL. */
char *strbuf_detach(struct strbuf *sb, size_t *len);
/* Room for at least `extra` more bytes (and the NUL) without another allocation. */
void strbuf_grow(struct strbuf *sb, size_t extra);
/* Cut (or, within what is allocated, keep) the text at len bytes. */
void strbuf_setlen(struct strbuf *sb, size_t len);
#define strbuf_reset(sb) strbuf_setlen((sb), 0)

void strbuf_add(struct strbuf *sb, const void *data, size_t len);
void strbuf_addstr(struct strbuf *sb, const char *s);
void strbuf_addch(struct strbuf *sb, int c);
void strbuf_addf(struct strbuf *sb, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void strbuf_vaddf(struct strbuf *sb, const char *fmt, va_list ap)
	__attribute__((format(printf, 2, 0)));
/* Add `s` joined to what is there by `sep` when the buffer is not empty. */
void strbuf_addsep(struct strbuf *sb, const char *sep, const char *s);

/*
 * Copy the text into a fixed array of `size` bytes (for structs that keep
 * one, such as gs_error): cut at a UTF-8 character boundary when it does not
 * fit, always NUL-terminated. Returns dst.
 */
char *strbuf_copy_to(const struct strbuf *sb, char *dst, size_t size);

/* A formatted string in a new allocation (never NULL); the caller frees it. */
char *gs_xasprintf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif
