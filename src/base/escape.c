#include "base/escape.h"

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/types.h>

#include "base/banned.h"

static const char hex[] = "0123456789abcdef";

static void add_hex_byte(struct strbuf *sb, unsigned char c)
{
	char e[4] = {'\\', 'x', hex[c >> 4], hex[c & 15]};

	strbuf_add(sb, e, sizeof(e));
}

/*
 * The length of the valid UTF-8 sequence at p (at most n bytes), its code
 * point in *cp; 0 when the bytes there are not one (RFC 3629: no overlong
 * form, no surrogate, nothing past U+10FFFF).
 */
static size_t utf8_seq(const unsigned char *p, size_t n, uint32_t *cp)
{
	size_t len;
	uint32_t c, min;

	if (p[0] < 0x80) {
		*cp = p[0];
		return 1;
	}
	if (p[0] >= 0xc2 && p[0] <= 0xdf)
		len = 2, c = p[0] & 0x1f, min = 0x80;
	else if (p[0] >= 0xe0 && p[0] <= 0xef)
		len = 3, c = p[0] & 0x0f, min = 0x800;
	else if (p[0] >= 0xf0 && p[0] <= 0xf4)
		len = 4, c = p[0] & 0x07, min = 0x10000;
	else
		return 0;
	if (len > n)
		return 0;
	for (size_t i = 1; i < len; i++) {
		if ((p[i] & 0xc0) != 0x80)
			return 0;
		c = (c << 6) | (p[i] & 0x3f);
	}
	if (c < min || c > 0x10ffff || (c >= 0xd800 && c <= 0xdfff))
		return 0;
	*cp = c;
	return len;
}

/* A character that ends a line or steers a terminal or the reading order. */
static int is_format_control(uint32_t cp)
{
	return (cp >= 0x80 && cp <= 0x9f) || cp == 0x2028 || cp == 0x2029 ||
	       (cp >= 0x202a && cp <= 0x202e) || (cp >= 0x2066 && cp <= 0x2069) || cp == 0xfeff;
}

void escape_line(struct strbuf *sb, const char *s, size_t len)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t i = 0;

	strbuf_grow(sb, len);
	while (i < len) {
		unsigned char c = p[i];
		uint32_t cp;
		size_t n;

		if (c >= 0x20 && c < 0x7f) {
			strbuf_addch(sb, c);
			i++;
		} else if (c == '\n' || c == '\r' || c == '\t') {
			strbuf_addch(sb, '\\');
			strbuf_addch(sb, c == '\n' ? 'n' : c == '\r' ? 'r' : 't');
			i++;
		} else if (c < 0x80 || !(n = utf8_seq(p + i, len - i, &cp))) {
			add_hex_byte(sb, c);
			i++;
		} else if (is_format_control(cp)) {
			strbuf_addf(sb, "\\u%04x", (unsigned)cp);
			i += n;
		} else {
			strbuf_add(sb, p + i, n);
			i += n;
		}
	}
}

void escape_line_str(struct strbuf *sb, const char *s)
{
	if (s)
		escape_line(sb, s, strlen(s));
}

char *escape_line_dup(const char *s)
{
	struct strbuf sb = STRBUF_INIT;

	escape_line_str(&sb, s);
	return strbuf_detach(&sb, NULL);
}

size_t escape_line_width(const char *s)
{
	struct strbuf sb = STRBUF_INIT;
	size_t n;

	escape_line_str(&sb, s);
	n = sb.len;
	strbuf_release(&sb);
	return n;
}

void escape_html(struct strbuf *sb, const char *s)
{
	const unsigned char *p = (const unsigned char *)(s ? s : "");
	size_t len = strlen((const char *)p), i = 0;

	strbuf_grow(sb, len);
	while (i < len) {
		unsigned char c = p[i];
		uint32_t cp = c;
		size_t n = utf8_seq(p + i, len - i, &cp);

		if (!n || (c < 0x20 && c != '\t' && c != '\n') || c == 0x7f || cp == 0xfffe ||
		    cp == 0xffff) {
			strbuf_addstr(sb, "\xEF\xBF\xBD"); /* U+FFFD, one per byte */
			i++;
			continue;
		}
		switch (c) {
		case '&':
			strbuf_addstr(sb, "&amp;");
			break;
		case '<':
			strbuf_addstr(sb, "&lt;");
			break;
		case '>':
			strbuf_addstr(sb, "&gt;");
			break;
		case '"':
			strbuf_addstr(sb, "&quot;");
			break;
		case '\'':
			strbuf_addstr(sb, "&#39;");
			break;
		default:
			strbuf_add(sb, p + i, n);
		}
		i += n;
	}
}

void escape_quoted(struct strbuf *sb, const char *s, size_t len)
{
	strbuf_grow(sb, len + 2);
	strbuf_addch(sb, '"');
	for (size_t i = 0; i < len; i++) {
		unsigned char c = (unsigned char)s[i];

		if (c == '"' || c == '\\') {
			strbuf_addch(sb, '\\');
			strbuf_addch(sb, c);
		} else if (c == '\n') {
			strbuf_addstr(sb, "\\n");
		} else if (c == '\r') {
			strbuf_addstr(sb, "\\r");
		} else if (c == '\t') {
			strbuf_addstr(sb, "\\t");
		} else if (c < 0x20 || c >= 0x7f || c == '=') {
			add_hex_byte(sb, c);
		} else {
			strbuf_addch(sb, c);
		}
	}
	strbuf_addch(sb, '"');
}

static int is_plain_word(const char *s)
{
	if (!*s)
		return 0;
	for (; *s; s++)
		if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') ||
		      (*s >= '0' && *s <= '9') || *s == '.' || *s == '_' || *s == '-'))
			return 0;
	return 1;
}

void escape_name(struct strbuf *sb, const char *s)
{
	if (!s)
		s = "";
	if (is_plain_word(s))
		strbuf_addstr(sb, s);
	else
		escape_quoted(sb, s, strlen(s));
}

char *escape_name_dup(const char *s)
{
	struct strbuf sb = STRBUF_INIT;

	escape_name(&sb, s);
	return strbuf_detach(&sb, NULL);
}

void escape_cel_string(struct strbuf *sb, const char *s)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t len = strlen(s), i = 0;

	strbuf_addch(sb, '\'');
	while (i < len) {
		unsigned char c = p[i];
		uint32_t cp;
		size_t n;

		if (c == '\\' || c == '\'') {
			strbuf_addch(sb, '\\');
			strbuf_addch(sb, c);
			i++;
		} else if (c == '\n' || c == '\r' || c == '\t') {
			strbuf_addch(sb, '\\');
			strbuf_addch(sb, c == '\n' ? 'n' : c == '\r' ? 'r' : 't');
			i++;
		} else if (c < 0x20 || c == 0x7f) {
			add_hex_byte(sb, c);
			i++;
		} else if (c < 0x80) {
			strbuf_addch(sb, c);
			i++;
		} else if ((n = utf8_seq(p + i, len - i, &cp))) {
			strbuf_add(sb, p + i, n);
			i += n;
		} else {
			add_hex_byte(sb, c);
			i++;
		}
	}
	strbuf_addch(sb, '\'');
}

void escape_prom_label(struct strbuf *sb, const char *s)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t len = strlen(s), i = 0;

	while (i < len) {
		unsigned char c = p[i];
		uint32_t cp;
		size_t n;

		if (c == '\\' || c == '"') {
			strbuf_addch(sb, '\\');
			strbuf_addch(sb, c);
			i++;
		} else if (c == '\n') {
			strbuf_addstr(sb, "\\n");
			i++;
		} else if (c >= 0x20 && c < 0x7f) {
			strbuf_addch(sb, c);
			i++;
		} else if (c >= 0x80 && (n = utf8_seq(p + i, len - i, &cp))) {
			strbuf_add(sb, p + i, n);
			i += n;
		} else {
			strbuf_addch(sb, '\\');
			add_hex_byte(sb, c);
			i++;
		}
	}
}

/* One conversion of a printf format, read by escape_vaddf. */
struct conv {
	char flags[8];
	int width, prec; /* -1: none */
	char len[3];	 /* "", "hh", "h", "l", "ll", "j", "z", "t", "L" */
	char type;	 /* 0: not one escape_vaddf knows */
};

/* Parse the conversion after a '%' at *p; *p is moved past it. */
static void conv_parse(const char **p, struct conv *c)
{
	const char *q = *p;
	size_t nf = 0;

	memset(c, 0, sizeof(*c));
	c->width = c->prec = -1;
	while (*q && strchr("-+ #0", *q) && nf + 1 < sizeof(c->flags))
		c->flags[nf++] = *q++;
	if (*q == '*') {
		c->width = -2; /* from the arguments */
		q++;
	} else if (*q >= '0' && *q <= '9') {
		c->width = 0;
		while (*q >= '0' && *q <= '9' && c->width < 100000)
			c->width = c->width * 10 + (*q++ - '0');
	}
	if (*q == '.') {
		q++;
		c->prec = 0;
		if (*q == '*') {
			c->prec = -2;
			q++;
		} else {
			while (*q >= '0' && *q <= '9' && c->prec < 100000)
				c->prec = c->prec * 10 + (*q++ - '0');
		}
	}
	if ((q[0] == 'h' && q[1] == 'h') || (q[0] == 'l' && q[1] == 'l')) {
		c->len[0] = q[0], c->len[1] = q[1];
		q += 2;
	} else if (*q && strchr("hljztL", *q)) {
		c->len[0] = *q++;
	}
	if (*q && strchr("diouxXfFeEgGaAcsp", *q))
		c->type = *q++;
	*p = q;
}

/* The conversion written out again with its width and precision as numbers. */
static void conv_spec(const struct conv *c, bool with_prec, char *out, size_t size)
{
	struct strbuf sb = STRBUF_INIT;

	strbuf_addch(&sb, '%');
	strbuf_addstr(&sb, c->flags);
	if (c->width >= 0)
		strbuf_addf(&sb, "%d", c->width);
	if (with_prec && c->prec >= 0)
		strbuf_addf(&sb, ".%d", c->prec);
	strbuf_addstr(&sb, c->len);
	strbuf_addch(&sb, c->type);
	strbuf_copy_to(&sb, out, size);
	strbuf_release(&sb);
}

void escape_vaddf(struct strbuf *sb, const char *fmt, va_list ap)
{
	const char *p = fmt;

	while (*p) {
		const char *pct = strchr(p, '%');
		struct conv c;
		char spec[48];

		if (!pct) {
			strbuf_addstr(sb, p);
			return;
		}
		strbuf_add(sb, p, (size_t)(pct - p));
		p = pct + 1;
		if (*p == '%') {
			strbuf_addch(sb, '%');
			p++;
			continue;
		}
		conv_parse(&p, &c);
		if (c.width == -2) {
			c.width = va_arg(ap, int);
			if (c.width < 0) {
				/* A negative width is the '-' flag and its size. */
				size_t nf = strlen(c.flags);
				if (nf + 1 < sizeof(c.flags))
					c.flags[nf] = '-';
				c.width = c.width == -2147483647 - 1 ? 2147483647 : -c.width;
			}
		}
		if (c.prec == -2) {
			c.prec = va_arg(ap, int);
			if (c.prec < 0)
				c.prec = -1;
		}
		if (!c.type) {
			/* Not a conversion this knows (the format attribute checks the
			 * callers): the rest is not read. */
			strbuf_addstr(sb, pct);
			return;
		}
		if (c.type == 's' || c.type == 'c') {
			struct strbuf esc = STRBUF_INIT;
			char ch;
			const char *s;
			size_t n;

			if (c.type == 'c') {
				ch = (char)va_arg(ap, int);
				s = &ch;
				n = 1;
			} else {
				s = va_arg(ap, const char *);
				if (!s)
					s = "(null)";
				n = c.prec >= 0 ? strnlen(s, (size_t)c.prec) : strlen(s);
			}
			escape_line(&esc, s, n);
			c.type = 's';
			c.len[0] = '\0';
			conv_spec(&c, false, spec, sizeof(spec));
			strbuf_addf(sb, spec, esc.buf);
			strbuf_release(&esc);
			continue;
		}
		conv_spec(&c, true, spec, sizeof(spec));
		if (c.type == 'p') {
			strbuf_addf(sb, spec, va_arg(ap, void *));
		} else if (strchr("fFeEgGaA", c.type)) {
			if (c.len[0] == 'L')
				strbuf_addf(sb, spec, va_arg(ap, long double));
			else
				strbuf_addf(sb, spec, va_arg(ap, double));
		} else if (c.type == 'd' || c.type == 'i') {
			if (!strcmp(c.len, "l"))
				strbuf_addf(sb, spec, va_arg(ap, long));
			else if (!strcmp(c.len, "ll"))
				strbuf_addf(sb, spec, va_arg(ap, long long));
			else if (!strcmp(c.len, "j"))
				strbuf_addf(sb, spec, va_arg(ap, intmax_t));
			else if (!strcmp(c.len, "z"))
				strbuf_addf(sb, spec, va_arg(ap, ssize_t));
			else if (!strcmp(c.len, "t"))
				strbuf_addf(sb, spec, va_arg(ap, ptrdiff_t));
			else
				strbuf_addf(sb, spec, va_arg(ap, int));
		} else {
			if (!strcmp(c.len, "l"))
				strbuf_addf(sb, spec, va_arg(ap, unsigned long));
			else if (!strcmp(c.len, "ll"))
				strbuf_addf(sb, spec, va_arg(ap, unsigned long long));
			else if (!strcmp(c.len, "j"))
				strbuf_addf(sb, spec, va_arg(ap, uintmax_t));
			else if (!strcmp(c.len, "z"))
				strbuf_addf(sb, spec, va_arg(ap, size_t));
			else if (!strcmp(c.len, "t"))
				strbuf_addf(sb, spec, va_arg(ap, ptrdiff_t));
			else
				strbuf_addf(sb, spec, va_arg(ap, unsigned int));
		}
	}
}

void escape_addf(struct strbuf *sb, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	escape_vaddf(sb, fmt, ap);
	va_end(ap);
}
