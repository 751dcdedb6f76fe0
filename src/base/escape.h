#ifndef GS_ESCAPE_H
#define GS_ESCAPE_H

#include <stdarg.h>
#include <stddef.h>

#include "base/strbuf.h"

/*
 * How text gpushare did not write itself (names and values from
 * manifests, AdmissionReviews, ConfigMaps, apiserver answers, and messages
 * quoting them) goes into each output format, so it can never end a line,
 * start a YAML document, forge a log line or break a table. One rule per
 * format; each appends to `sb` and never fails.
 *
 *   format                                 rule
 *   log line, YAML comment, table cell,    escape_line (escape_addf: every
 *     one line of human text (findings,      %s of a format through it)
 *     notes, error messages)
 *   a name inside such a line              escape_name (escape_quoted)
 *   YAML values, JSON                      libyaml's emitter (yamlout.h) and
 *                                          jansson: they quote and escape
 *   HTML and SVG text and attributes       escape_html
 *   a CEL string literal                   escape_cel_string
 *   a Prometheus label value               escape_prom_label
 */

/*
 * Text kept on one line, readable: printable ASCII and valid UTF-8 stay as
 * they are (a backslash too); \n, \r and \t for those; \xHH for the other
 * C0 controls, DEL and every byte that is not part of valid UTF-8 (a
 * stray continuation byte, a cut or overlong sequence, a surrogate);
 * \uHHHH for the characters that end a line or steer a terminal or the
 * reading order when kept: C1 controls (U+0080-U+009F, NEL among them),
 * U+2028 and U+2029 (line and paragraph separators: YAML and JavaScript
 * breaks), the bidirectional embeddings, overrides and isolates
 * (U+202A-U+202E, U+2066-U+2069) and U+FEFF. So the result holds no line
 * break of any YAML reader, no ANSI escape and no invalid UTF-8.
 */
void escape_line(struct strbuf *sb, const char *s, size_t len);
/* escape_line of a NUL-terminated string (NULL adds nothing). */
void escape_line_str(struct strbuf *sb, const char *s);
/* escape_line of a string, as a new string the caller frees (NULL gives ""). */
char *escape_line_dup(const char *s);
/* How many bytes escape_line makes of a string: its width in a table column. */
size_t escape_line_width(const char *s);

/*
 * strbuf_addf for a line of human text: every %s (and %c) argument goes
 * through escape_line, a %.*s's cut first; the format's own text, line
 * breaks included, is kept as written. So a format that ends in "\n" adds
 * exactly one line whatever its arguments hold. Conversions: those of
 * printf without %n, positional arguments or wide strings.
 */
void escape_addf(struct strbuf *sb, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void escape_vaddf(struct strbuf *sb, const char *fmt, va_list ap)
	__attribute__((format(printf, 2, 0)));

/*
 * `s` as text for HTML and XML (SVG), in an element or an attribute value
 * (quoted with " or '): & < > " ' as entities; a C0 control character
 * other than tab and line feed, DEL, U+FFFE, U+FFFF and each byte that is
 * not part of valid UTF-8 as U+FFFD, so the result is well-formed XML 1.0
 * text that can neither close the element or attribute it sits in nor
 * open another. NULL adds nothing.
 */
void escape_html(struct strbuf *sb, const char *s);

/*
 * A value shown double-quoted, so that where it ends is never in doubt:
 * \\ and \", \n, \r, \t, and \xHH for '=' and every byte outside printable
 * ASCII (so neither a line break, an ANSI escape, invalid UTF-8 nor an '='
 * of a key=value line comes through). `gpushare check` shows container
 * names so (docs/guide/check.md).
 */
void escape_quoted(struct strbuf *sb, const char *s, size_t len);

/*
 * A name (namespace, object name, kind, operation) inside a line: as it is
 * when it is a plain word, one or more of [A-Za-z0-9._-], which every
 * Kubernetes object name is; otherwise escape_quoted (the empty name too).
 */
void escape_name(struct strbuf *sb, const char *s);
/* escape_name as a new string the caller frees (NULL shows as ""). */
char *escape_name_dup(const char *s);

/*
 * A CEL string literal in single quotes ('...'): \\ and \', \n, \r, \t,
 * \xHH for the other control characters (CEL reads it as that code point)
 * and for each byte that is not part of valid UTF-8; other UTF-8 as it is.
 * A value can never end the literal and add to the expression.
 */
void escape_cel_string(struct strbuf *sb, const char *s);

/*
 * A label value of Prometheus' text format, between the quotes the caller
 * writes: \\, \" and \n as the format defines them; the other control
 * characters and each byte that is not part of valid UTF-8 as the text
 * \xHH, its backslash escaped (the format has no escape for them: a
 * reader sees the four characters).
 */
void escape_prom_label(struct strbuf *sb, const char *s);

#endif
