/*
 * The fast scanner must agree with libyaml event for event wherever it does
 * not decline, and must not decline the plain manifests it exists for.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "ydocfast_diff.h"

static int diff(const char *text)
{
	return ydocfast_diff(text, strlen(text));
}

/* Inputs the fast scanner must take (and get right). */
static const char *const accepted[] = {
	"",
	"# just a comment\n",
	"a: 1\n",
	"a: 1",
	"a:\n",
	"a:",
	"key: value with spaces   \n",
	"key: value # comment\nnext: x#y\n",
	"url: http://example.com:8080/x\n",
	"a: b:c\n",
	"'quoted key': \"double\"\nsingle: 'it''s'\nempty: ''\nempty2: \"\"\n",
	"a:\n  b:\n    c: 1\n  d: 2\ne: 3\n",
	"list:\n- a\n- b\nnext: 1\n",
	"list:\n  - a\n  -   b\n",
	"- a\n- b\n",
	"-\n- x\n-\n",
	"- name: x\n  image: y\n- name: z\n",
	"containers:\n- name: x\n  resources:\n    limits: {nvidia.com/gpu: 2}\n- name: y\n",
	"args: [\"--a\", '--b', c, 1.5, -2, ~]\nempty: {}\nempty2: []\n",
	"m: {a: 1, \"b\": 'x', c: [1, 2, {d: e}]}\n",
	"a: 1\n---\nb: 2\n",
	"---\na: 1\n---\n---\n- x\n",
	"--- # comment\na: 1\n",
	"---\n",
	"---\n# nothing\n---\n",
	"just a scalar\n",
	"---\n  indented: root\n  second: key\n",
	"a:\n\n  # comment inside\n\n  b: 1\n",
	"key:    \n  value on next line\nother: 1\n",
	"a: -1\nb: -x\nc: .5\nd: +3\ne: 0x1F\n",
	"k: v\n\n\n",
	"a: 'x' # c\nb: \"y\"   \n",
	"- [a, b]\n- {c: d}\n",
	"x: '# not a comment'\n",
	"a:\n- b: 1\n  c: 2\n-\n  d: 3\n",
	NULL,
};

/* Inputs libyaml rejects or that hold constructs left to libyaml. */
static const char *const other[] = {
	"a: b: c\n",
	"a:\n  - x\n  y: z\n",
	"a: \"open\n",
	"a: 'open\nclose'\n",
	"a: |\n  block\n",
	"a: >\n  folded\n",
	"a: &x 1\nb: *x\n",
	"a: !!str 1\n",
	"a: \"esc\\n\"\n",
	"a:\tb\n",
	"a: b\r\n",
	"a: caf\xc3\xa9\n",
	"? complex\n: value\n",
	"%YAML 1.1\n---\na: 1\n",
	"a: 1\n...\n",
	"--- a\n",
	"a: plain\n  continued\n",
	"a:\n    b: 1\n  c: 2\n",
	"- - nested\n",
	"key: - x\n",
	"[a, b]: c\n",
	"a: [1,\n 2]\n",
	"a: {b}\n",
	"a: [a, , b]\n",
	"a: [a,]\n",
	"a: [a b]\n",
	"a: {a:1}\n",
	"a: @x\n",
	"a: `x\n",
	"a: %x\n",
	"a: ]\n",
	"a: 1\nb\n",
	"a: 1\n- b\n",
	"- a\nb: 1\n",
	"a: 1\n b: 2\n",
	"  a: 1\nb: 2\n",
	"root\nmore\n",
	"a: 'x'y\n",
	"a: \"x\"#c\n",
	"a: ---x\n",
	"- a\n  - b\n",
	"a:\n- b\n - c\n",
	"a:\x7f\n",
	"\xef\xbb\xbf"
	"a: 1\n",
	"-x: 1\n",
	"a: [-]\n",
	"a: [--x]\n",
	"a: {b: [c, {d: e}], f: 'g'}\n",
	"a:    \"x\":  y\n",
	"a  : 1\n",
	"\"a\" : 1\n",
	"a:\n  - b\n  -\n  - c\n",
	"a: 1 # c\n  b: 2\n",
	"#c\n  a: 1\n",
	NULL,
};

static void agrees_and_takes_plain_manifests(void **state)
{
	(void)state;
	for (size_t i = 0; accepted[i]; i++) {
		int rc = diff(accepted[i]);

		if (rc != 1)
			print_error("case %zu (%s): %s\n", i, rc ? "disagrees" : "declined",
				    accepted[i]);
		assert_int_equal(rc, 1);
	}
}

static void agrees_or_declines(void **state)
{
	(void)state;
	for (size_t i = 0; other[i]; i++) {
		int rc = diff(other[i]);

		if (rc < 0)
			print_error("case %zu disagrees\n", i);
		assert_true(rc >= 0);
	}
}

/* Every prefix of a realistic stream: truncation lands mid-token everywhere. */
static void prefixes(void **state)
{
	const char *pod = "apiVersion: v1\n"
			  "kind: Pod\n"
			  "metadata:\n"
			  "  name: trainer-0   # the first\n"
			  "  labels: {app: train, 'tier': \"gpu\"}\n"
			  "spec:\n"
			  "  containers:\n"
			  "  - name: main\n"
			  "    image: nvcr.io/nvidia/pytorch:24.05-py3\n"
			  "    args: [\"--epochs\", '10']\n"
			  "    env:\n"
			  "    - name: X\n"
			  "      value: \"1\"\n"
			  "    resources:\n"
			  "      limits:\n"
			  "        nvidia.com/gpu: 2\n"
			  "      requests:\n"
			  "\n"
			  "        nvidia.com/gpu: '2'\n"
			  "---\n"
			  "- a\n"
			  "-\n"
			  "  - b\n";
	size_t n = strlen(pod);

	(void)state;
	assert_int_equal(diff(pod), 1);
	for (size_t i = 0; i <= n; i++)
		assert_true(ydocfast_diff(pod, i) >= 0);
}

static int stop_at_third(void *ctx, const yaml_event_t *ev)
{
	int *count = ctx;

	(void)ev;
	return ++*count == 3 ? 7 : 0;
}

static void emit_can_stop(void **state)
{
	int count = 0;

	(void)state;
	assert_int_equal(ydoc_fast_parse("a: 1\nb: 2\n", 10, stop_at_third, &count), 7);
	assert_int_equal(count, 3);
}

/* libyaml drops a simple key that starts more than 1024 characters before its ':'. */
static void long_keys(void **state)
{
	char *buf = malloc(4096);

	(void)state;
	for (int n = 1020; n <= 1030; n++) {
		static const char *const shapes[] = {
			"%s: v\n", "a: {%s: v}\n", "a: {x: 1, %s: v}\n", "- %s: v\n", "'%s': v\n"};
		char key[1100];

		memset(key, 'k', (size_t)n);
		key[n] = '\0';
		for (size_t i = 0; i < sizeof(shapes) / sizeof(shapes[0]); i++) {
			snprintf(buf, 4096, shapes[i], key);
			assert_true(diff(buf) >= 0);
		}
	}
	free(buf);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(agrees_and_takes_plain_manifests),
		cmocka_unit_test(agrees_or_declines),
		cmocka_unit_test(prefixes),
		cmocka_unit_test(emit_can_stop),
		cmocka_unit_test(long_keys),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
