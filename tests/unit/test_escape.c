#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/escape.h"
#include "base/strbuf.h"

/* Names an attacker picks: line breaks, a YAML document marker, comment and
 * quote characters, tabs, an ANSI escape, YAML's other breaks (NEL, LS, PS),
 * a bidi override, invalid UTF-8 (a stray continuation byte, a cut
 * sequence, an overlong '/', a surrogate). */
static const char *const nasty[] = {
	"evil\n---\napiVersion: v1\nkind: Secret\n#",
	"a\r\nb",
	"tab\there",
	"quote\"back\\slash",
	"# not a comment",
	"\x1b[31mred\x1b[0m",
	"nel\xc2\x85ls\xe2\x80\xa8ps\xe2\x80\xa9",
	"rlo\xe2\x80\xae"
	"cba",
	"stray\x80",
	"cut\xe2\x80",
	"overlong\xc0\xaf",
	"surrogate\xed\xa0\x80",
	"del\x7f",
	"bom\xef\xbb\xbf",
};

static struct strbuf line_of(const char *s)
{
	struct strbuf sb = STRBUF_INIT;

	escape_line_str(&sb, s);
	return sb;
}

/* No byte a terminal or a YAML reader takes as a break or a control. */
static void assert_one_clean_line(const char *s)
{
	for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
		assert_true(*p >= 0x20 && *p != 0x7f);
		if (*p >= 0x80) {
			/* only valid UTF-8 and never C1, LS, PS, the bidi controls */
			int n = *p >= 0xf0 ? 4 : *p >= 0xe0 ? 3 : 2;
			assert_true(*p >= 0xc2 && *p <= 0xf4);
			for (int i = 1; i < n; i++)
				assert_int_equal(p[i] & 0xc0, 0x80);
			assert_false(p[0] == 0xc2 && p[1] < 0xa0);
			assert_false(p[0] == 0xe2 && p[1] == 0x80 && p[2] >= 0xa8 && p[2] <= 0xae);
			assert_false(p[0] == 0xe2 && p[1] == 0x81 && p[2] >= 0xa6 && p[2] <= 0xa9);
			assert_false(p[0] == 0xef && p[1] == 0xbb && p[2] == 0xbf);
			p += n - 1;
		}
	}
}

static void line_rule(void **state)
{
	static const struct {
		const char *in, *out;
	} cases[] = {
		{"plain text: a/b \"q\" back\\slash", "plain text: a/b \"q\" back\\slash"},
		{"evil\n---\nkind: Secret", "evil\\n---\\nkind: Secret"},
		{"a\r\nb\tc", "a\\r\\nb\\tc"},
		{"\x1b[31mred", "\\x1b[31mred"},
		{"nel\xc2\x85ls\xe2\x80\xa8ps\xe2\x80\xa9", "nel\\u0085ls\\u2028ps\\u2029"},
		{"rlo\xe2\x80\xae", "rlo\\u202e"},
		{"stray\x80 cut\xe2\x80", "stray\\x80 cut\\xe2\\x80"},
		{"overlong\xc0\xaf", "overlong\\xc0\\xaf"},
		{"surrogate\xed\xa0\x80", "surrogate\\xed\\xa0\\x80"},
		{"del\x7f", "del\\x7f"},
		{"caf\xc3\xa9 \xe2\x86\x92 \xf0\x9f\x98\x80",
		 "caf\xc3\xa9 \xe2\x86\x92 \xf0\x9f\x98\x80"},
	};
	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct strbuf sb = line_of(cases[i].in);
		assert_string_equal(sb.buf, cases[i].out);
		strbuf_release(&sb);
	}
	for (size_t i = 0; i < sizeof(nasty) / sizeof(nasty[0]); i++) {
		struct strbuf sb = line_of(nasty[i]);
		assert_one_clean_line(sb.buf);
		strbuf_release(&sb);
	}
	/* A NUL inside the given length is escaped too. */
	struct strbuf sb = STRBUF_INIT;
	escape_line(&sb, "a\0b", 3);
	assert_string_equal(sb.buf, "a\\x00b");
	strbuf_release(&sb);
	char *d = escape_line_dup(NULL);
	assert_string_equal(d, "");
	free(d);
}

static void quoted_and_names(void **state)
{
	struct strbuf sb = STRBUF_INIT;
	char *s;

	(void)state;
	escape_quoted(&sb, "x\nOK", 4);
	assert_string_equal(sb.buf, "\"x\\nOK\"");
	strbuf_reset(&sb);
	escape_quoted(&sb, "a=b\"\\\t\x1b\xc3\xa9", 9);
	assert_string_equal(sb.buf, "\"a\\x3db\\\"\\\\\\t\\x1b\\xc3\\xa9\"");
	strbuf_release(&sb);

	s = escape_name_dup("team-a.pod_1");
	assert_string_equal(s, "team-a.pod_1");
	free(s);
	s = escape_name_dup("");
	assert_string_equal(s, "\"\"");
	free(s);
	s = escape_name_dup(NULL);
	assert_string_equal(s, "\"\"");
	free(s);
	s = escape_name_dup("x: allowed (0.1 ms)\ngpushare webhook: CREATE");
	assert_string_equal(s, "\"x: allowed (0.1 ms)\\ngpushare webhook: CREATE\"");
	free(s);
	s = escape_name_dup("a/b");
	assert_string_equal(s, "\"a/b\"");
	free(s);
	/* Every nasty name: quoted, printable ASCII only, one pair of quotes. */
	for (size_t i = 0; i < sizeof(nasty) / sizeof(nasty[0]); i++) {
		s = escape_name_dup(nasty[i]);
		size_t n = strlen(s), quotes = 0;
		assert_true(n >= 2 && s[0] == '"' && s[n - 1] == '"');
		for (size_t k = 0; k < n; k++) {
			assert_true(s[k] >= 0x20 && s[k] < 0x7f);
			if (s[k] == '"' && (k == 0 || s[k - 1] != '\\'))
				quotes++;
		}
		assert_int_equal(quotes, 2);
		free(s);
	}
}

static void cel_and_prom(void **state)
{
	struct strbuf sb = STRBUF_INIT;

	(void)state;
	escape_cel_string(&sb, "1g.10gb' || true || '");
	assert_string_equal(sb.buf, "'1g.10gb\\' || true || \\''");
	strbuf_reset(&sb);
	escape_cel_string(&sb, "a\\b\n\x01\xc3\xa9\x80");
	assert_string_equal(sb.buf, "'a\\\\b\\n\\x01\xc3\xa9\\x80'");
	strbuf_reset(&sb);
	escape_prom_label(&sb, "a\"b\\c\nd\x01\x80\xc3\xa9");
	assert_string_equal(sb.buf, "a\\\"b\\\\c\\nd\\\\x01\\\\x80\xc3\xa9");
	strbuf_release(&sb);
}

/* Markup becomes text; UTF-8 stays; what XML 1.0 forbids becomes U+FFFD, one per byte. */
static void html_text(void **state)
{
	struct strbuf sb = STRBUF_INIT;

	(void)state;
	escape_html(&sb, "<script>alert(\"x\")</script>&'");
	assert_string_equal(sb.buf, "&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;&amp;&#39;");
	strbuf_reset(&sb);
	escape_html(&sb, "gr\xC3\xBC\xC3\x9F\x01x\xFFy\xE2\x82");
	assert_string_equal(sb.buf, "gr\xC3\xBC\xC3\x9F\xEF\xBF\xBDx\xEF\xBF\xBDy\xEF\xBF\xBD"
				    "\xEF\xBF\xBD");
	strbuf_reset(&sb);
	/* tab and line feed kept; DEL, U+FFFF, a surrogate and an overlong '<' replaced */
	escape_html(&sb, "a\tb\nc\x7f\xEF\xBF\xBF\xED\xA0\x80\xC0\xBC");
	assert_string_equal(sb.buf, "a\tb\nc\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD"
				    "\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD");
	strbuf_reset(&sb);
	escape_html(&sb, NULL);
	assert_int_equal(sb.len, 0);
	strbuf_release(&sb);
}

/* escape_addf formats as strbuf_addf does, but for what %s and %c bring. */
static void addf_like_printf(void **state)
{
	struct strbuf sb = STRBUF_INIT;
	char want[256];

	(void)state;
	escape_addf(&sb, "%d|%5i|%-4ld|%lld|%zu|%03x|%X|%o|%hhu|%%|%.2f|%8.3e|%g|%jd|%td|%p", -3,
		    42, 7L, -9000000000LL, (size_t)12, 10u, 255u, 8u, (unsigned char)200, 3.14159,
		    1234.5, 0.5, (intmax_t)-1, (ptrdiff_t)5, (void *)0);
	snprintf(want, sizeof(want),
		 "%d|%5i|%-4ld|%lld|%zu|%03x|%X|%o|%hhu|%%|%.2f|%8.3e|%g|%jd|%td|%p", -3, 42, 7L,
		 -9000000000LL, (size_t)12, 10u, 255u, 8u, (unsigned char)200, 3.14159, 1234.5, 0.5,
		 (intmax_t)-1, (ptrdiff_t)5, (void *)0);
	assert_string_equal(sb.buf, want);
	strbuf_reset(&sb);
	escape_addf(&sb, "[%-*s][%*s][%.*s][%-6s][%.3s][%c]\n", 6, "ab", -5, "cd", 2, "efgh", "x",
		    "abcdef", 'z');
	assert_string_equal(sb.buf, "[ab    ][cd   ][ef][x     ][abc][z]\n");
	strbuf_reset(&sb);
	/* The format's line breaks stay; the arguments' are escaped. */
	escape_addf(&sb, "node %s: %s\n  - %s\n", "a\nb", "x\x1b[2Jy", "--- #");
	assert_string_equal(sb.buf, "node a\\nb: x\\x1b[2Jy\n  - --- #\n");
	strbuf_reset(&sb);
	/* A %.*s cut is taken before escaping, so it never splits an escape. */
	escape_addf(&sb, "%.*s|%c", 3, "a\nbc", '\n');
	assert_string_equal(sb.buf, "a\\nb|\\n");
	strbuf_release(&sb);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(line_rule),	    cmocka_unit_test(quoted_and_names),
		cmocka_unit_test(cel_and_prom),	    cmocka_unit_test(html_text),
		cmocka_unit_test(addf_like_printf),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
