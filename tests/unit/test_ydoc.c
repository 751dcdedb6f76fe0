/*
 * Expected values follow go-yaml v2's resolve() as vendored by
 * sigs.k8s.io/yaml (goyaml.v2/resolve.go, decode.go) and Go's strconv /
 * encoding/json; error texts and marks are libyaml's.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "yaml/ydoc.h"

static const struct ydoc_pos no_origin = {.line = 0, .col = 0};

static struct ydoc_stream *load_ok(const char *text)
{
	struct ydoc_stream *s = NULL;
	struct gs_error err;
	char buf[2048];

	if (ydoc_load_buffer("t.yaml", text, strlen(text), no_origin, NULL, &s, &err)) {
		print_error("unexpected error: %s\n", gs_error_str(&err, buf, sizeof(buf)));
		fail();
	}
	return s;
}

/* Loads text expecting failure; returns "file:line:col: msg" in a static buffer. */
static const char *load_err(const char *text, const struct ydoc_limits *lim)
{
	static char buf[2048];
	struct ydoc_stream *s = NULL;
	struct gs_error err;

	assert_int_equal(ydoc_load_buffer("t.yaml", text, strlen(text), no_origin, lim, &s, &err),
			 -1);
	assert_null(s);
	return gs_error_str(&err, buf, sizeof(buf));
}

static json_t *get(json_t *o, const char *k)
{
	json_t *v = json_object_get(o, k);
	if (!v)
		print_error("missing key %s\n", k);
	assert_non_null(v);
	return v;
}

static void expect_int(json_t *o, const char *k, long long want)
{
	json_t *v = get(o, k);
	if (!json_is_integer(v))
		print_error("%s: not an integer (type %d)\n", k, json_typeof(v));
	assert_true(json_is_integer(v));
	assert_int_equal(json_integer_value(v), want);
}

static void expect_real(json_t *o, const char *k, double want)
{
	json_t *v = get(o, k);
	if (!json_is_real(v))
		print_error("%s: not a real (type %d)\n", k, json_typeof(v));
	assert_true(json_is_real(v));
	assert_true(json_real_value(v) == want);
}

static void expect_str(json_t *o, const char *k, const char *want)
{
	json_t *v = get(o, k);
	if (!json_is_string(v))
		print_error("%s: not a string (type %d)\n", k, json_typeof(v));
	assert_true(json_is_string(v));
	assert_string_equal(json_string_value(v), want);
}

static void scalars_resolve_like_go_yaml_v2(void **state)
{
	struct ydoc_stream *s;
	json_t *d;

	(void)state;
	s = load_ok("int: 2\n"
		    "quoted: \"2\"\n"
		    "single: '2'\n"
		    "neg: -3\n"
		    "plus: +1\n"
		    "hex: 0x1F\n"
		    "oct_o: 0o17\n"
		    "oct_0: 017\n"
		    "bin: 0b101\n"
		    "under: 1_000\n"
		    "not_octal: 08\n"
		    "real: 1.5\n"
		    "exp: 1e1\n"
		    "dot: .5\n"
		    "trail: 1.\n"
		    "max: 9223372036854775807\n"
		    "above: 9223372036854775808\n"
		    "huge: 1e999\n"
		    "yes: yes\n"
		    "Yes_: Yes\n"
		    "on_: on\n"
		    "off_: OFF\n"
		    "y_: y\n"
		    "mixed: yES\n"
		    "t: true\n"
		    "null_: null\n"
		    "tilde: ~\n"
		    "empty:\n"
		    "date: 2001-12-14\n"
		    "merge_text: '<<'\n"
		    "word: hello world\n"
		    "inf_word: inf\n"
		    "block: |\n"
		    "  two\n"
		    "  lines\n");
	assert_int_equal(ydoc_stream_count(s), 1);
	d = ydoc_stream_doc(s, 0);
	expect_int(d, "int", 2);
	expect_str(d, "quoted", "2");
	expect_str(d, "single", "2");
	expect_int(d, "neg", -3);
	expect_int(d, "plus", 1);
	expect_int(d, "hex", 31);
	expect_int(d, "oct_o", 15);
	expect_int(d, "oct_0", 15);
	expect_int(d, "bin", 5);
	expect_int(d, "under", 1000);
	/* ParseInt("08", 0) fails, the float pattern matches: float 8. */
	expect_real(d, "not_octal", 8.0);
	expect_real(d, "real", 1.5);
	expect_real(d, "exp", 10.0);
	expect_real(d, "dot", 0.5);
	expect_real(d, "trail", 1.0);
	expect_int(d, "max", 9223372036854775807LL);
	expect_real(d, "above", 9223372036854775808.0);
	/* ParseFloat range error: go-yaml keeps the text. */
	expect_str(d, "huge", "1e999");
	/* The key `yes` itself is a bool, turned into the key "true". */
	assert_true(json_is_true(get(d, "true")));
	assert_true(json_is_true(get(d, "Yes_")));
	assert_true(json_is_true(get(d, "on_")));
	assert_true(json_is_false(get(d, "off_")));
	assert_true(json_is_true(get(d, "y_")));
	expect_str(d, "mixed", "yES");
	assert_true(json_is_true(get(d, "t")));
	assert_true(json_is_null(get(d, "null_")));
	assert_true(json_is_null(get(d, "tilde")));
	assert_true(json_is_null(get(d, "empty")));
	expect_str(d, "date", "2001-12-14");
	expect_str(d, "merge_text", "<<");
	expect_str(d, "word", "hello world");
	expect_str(d, "inf_word", "inf");
	expect_str(d, "block", "two\nlines\n");
	ydoc_stream_free(s);
}

static void tags(void **state)
{
	struct ydoc_stream *s;
	json_t *d;

	(void)state;
	s = load_ok("a: !!str 2\n"
		    "b: !!int \"12\"\n"
		    "c: !!float 2\n"
		    "d: !custom 5\n"
		    "e: !!binary aGVsbG8=\n"
		    "f: !!bool yes\n"
		    "g: ! 7\n"
		    "h: !!null ''\n");
	d = ydoc_stream_doc(s, 0);
	expect_str(d, "a", "2");
	expect_int(d, "b", 12);
	expect_real(d, "c", 2.0);
	expect_str(d, "d", "5");
	expect_str(d, "e", "hello");
	assert_true(json_is_true(get(d, "f")));
	expect_str(d, "g", "7");
	assert_true(json_is_null(get(d, "h")));
	ydoc_stream_free(s);

	assert_string_equal(load_err("a: !!int abc\n", NULL),
			    "t.yaml:1:4: cannot decode !!str `abc` as a !!int");
	assert_string_equal(load_err("a: !!bool 3\n", NULL),
			    "t.yaml:1:4: cannot decode !!int `3` as a !!bool");
	assert_string_equal(load_err("a: !!binary '#'\n", NULL),
			    "t.yaml:1:4: !!binary value contains invalid base64 data");
}

static void keys_become_strings(void **state)
{
	struct ydoc_stream *s;
	json_t *d;

	(void)state;
	s = load_ok("1: int\n"
		    "1.5: float\n"
		    "false: bool\n"
		    "0x10: hex\n"
		    "1e6: big\n"
		    "'quoted': q\n"
		    ".inf: inf\n");
	d = ydoc_stream_doc(s, 0);
	expect_str(d, "1", "int");
	expect_str(d, "1.5", "float");
	expect_str(d, "false", "bool");
	expect_str(d, "16", "hex");
	/* FormatFloat(1e6, 'g', -1, 32) */
	expect_str(d, "1e+06", "big");
	expect_str(d, "quoted", "q");
	expect_str(d, ".inf", "inf");
	assert_int_equal(json_object_size(d), 7);
	ydoc_stream_free(s);

	assert_string_equal(load_err("~: x\n", NULL),
			    "t.yaml:1:1: null is not supported as a mapping key");
	assert_string_equal(load_err("? [a]\n: b\n", NULL),
			    "t.yaml:1:3: invalid map key: a mapping or sequence cannot be a key");
}

static void documents(void **state)
{
	struct ydoc_stream *s;

	(void)state;
	s = load_ok("");
	assert_int_equal(ydoc_stream_count(s), 0);
	ydoc_stream_free(s);

	s = load_ok("# only a comment\n");
	assert_int_equal(ydoc_stream_count(s), 0);
	ydoc_stream_free(s);

	s = load_ok("a: 1\n---\n---\n- x\n...\n--- 5\n");
	assert_int_equal(ydoc_stream_count(s), 4);
	expect_int(ydoc_stream_doc(s, 0), "a", 1);
	assert_true(json_is_null(ydoc_stream_doc(s, 1)));
	assert_string_equal(json_string_value(json_array_get(ydoc_stream_doc(s, 2), 0)), "x");
	assert_int_equal(json_integer_value(ydoc_stream_doc(s, 3)), 5);
	assert_null(ydoc_stream_doc(s, 4));
	assert_string_equal(ydoc_stream_name(s), "t.yaml");
	ydoc_stream_free(s);
}

static void anchors_aliases_merges(void **state)
{
	struct ydoc_stream *s;
	json_t *d;

	(void)state;
	/* (keys avoid y/n: YAML 1.1 reads them as booleans) */
	s = load_ok("base: &b {x: 1, w: 2}\n"
		    "other: &o {w: 3, z: 4}\n"
		    "copy: *b\n"
		    "over: {<<: *b, x: 9}\n"
		    "list: {<<: [*b, *o]}\n"
		    "late: {x: 5, <<: *b}\n"
		    "inline: {<<: {k: v}}\n"
		    "scalar: &s hello\n"
		    "again: *s\n"
		    "dup: 1\n"
		    "dup: 2\n");
	d = ydoc_stream_doc(s, 0);
	expect_int(get(d, "copy"), "x", 1);
	expect_int(get(d, "over"), "x", 9);
	expect_int(get(d, "over"), "w", 2);
	/* A merged list: earlier maps win. */
	expect_int(get(d, "list"), "w", 2);
	expect_int(get(d, "list"), "z", 4);
	/* go-yaml v2 merges in place: a merge after a key overwrites it. */
	expect_int(get(d, "late"), "x", 1);
	expect_str(get(d, "inline"), "k", "v");
	expect_str(d, "again", "hello");
	/* Non-strict decoding: the last duplicate wins. */
	expect_int(d, "dup", 2);
	ydoc_stream_free(s);

	/* An anchor still referenced after its key was overwritten stays valid. */
	s = load_ok("a: &x {k: 1}\na: 2\nb: *x\n");
	expect_int(get(ydoc_stream_doc(s, 0), "b"), "k", 1);
	ydoc_stream_free(s);

	assert_string_equal(load_err("a: *nope\n", NULL),
			    "t.yaml:1:4: unknown anchor 'nope' referenced");
	assert_string_equal(load_err("a: &a [*a]\n", NULL),
			    "t.yaml:1:8: anchor 'a' value contains itself");
	assert_string_equal(load_err("a: {<<: 5}\n", NULL),
			    "t.yaml:1:9: map merge requires map or sequence of maps as the value");
	/* Anchors do not cross documents. */
	assert_string_equal(load_err("a: &a 1\n---\nb: *a\n", NULL),
			    "t.yaml:3:4: unknown anchor 'a' referenced");
}

static void non_json_values_fail(void **state)
{
	(void)state;
	assert_string_equal(
		load_err("a:\n  b: .inf\n", NULL),
		"t.yaml:2:6: json: unsupported value: +Inf (JSON, which Kubernetes reads, "
		"has no infinity)");
	assert_string_equal(load_err("- .nan\n", NULL),
			    "t.yaml:1:3: json: unsupported value: NaN (JSON, which Kubernetes "
			    "reads, has no NaN)");
}

/* Errors at a key's value, at the mapping when the key is missing, bare without a stream. */
static void errors_at_keys(void **state)
{
	struct ydoc_stream *s = load_ok("a: 1\nb:\n  c: x\n");
	const json_t *doc = ydoc_stream_doc(s, 0), *b = json_object_get(doc, "b");
	struct gs_error err;
	char buf[2048];

	(void)state;
	ydoc_error_at_key(s, b, "c", &err, "bad %s", "c");
	assert_string_equal(gs_error_str(&err, buf, sizeof(buf)), "t.yaml:3:6: bad c");
	ydoc_error_at_key(s, b, "missing", &err, "no key");
	assert_string_equal(gs_error_str(&err, buf, sizeof(buf)), "t.yaml:3:3: no key");
	ydoc_error_at_key(s, doc, NULL, &err, "top");
	assert_string_equal(gs_error_str(&err, buf, sizeof(buf)), "t.yaml:1:1: top");
	ydoc_error_at_key(s, NULL, "a", &err, "nothing known");
	assert_string_equal(gs_error_str(&err, buf, sizeof(buf)), "t.yaml: nothing known");
	ydoc_error_at_key(NULL, doc, "a", &err, "from the apiserver");
	assert_string_equal(gs_error_str(&err, buf, sizeof(buf)), "from the apiserver");
	ydoc_stream_free(s);
}

static void positions(void **state)
{
	struct ydoc_stream *s;
	struct ydoc_pos p;
	json_t *d, *spec, *list;

	(void)state;
	s = load_ok("kind: Pod\n"
		    "spec:\n"
		    "  enabled: true\n"
		    "  nothing:\n"
		    "  list:\n"
		    "    - 7\n"
		    "    - null\n");
	d = ydoc_stream_doc(s, 0);
	assert_int_equal(ydoc_stream_pos(s, d, &p), 0);
	assert_int_equal(p.line, 1);
	assert_int_equal(p.col, 1);
	assert_int_equal(ydoc_stream_pos(s, get(d, "kind"), &p), 0);
	assert_int_equal(p.line, 1);
	assert_int_equal(p.col, 7);
	spec = get(d, "spec");
	/* Singletons have no position of their own... */
	assert_int_equal(ydoc_stream_pos(s, get(spec, "enabled"), &p), -1);
	assert_int_equal(p.line, 0);
	/* ...but their slot has. */
	assert_int_equal(ydoc_stream_key_pos(s, spec, "enabled", &p), 0);
	assert_int_equal(p.line, 3);
	assert_int_equal(p.col, 12);
	/* An empty value sits at its key. */
	assert_int_equal(ydoc_stream_key_pos(s, spec, "nothing", &p), 0);
	assert_int_equal(p.line, 4);
	assert_int_equal(p.col, 3);
	assert_int_equal(ydoc_stream_key_pos(s, spec, "absent", &p), -1);
	list = get(spec, "list");
	assert_int_equal(ydoc_stream_index_pos(s, list, 1, &p), 0);
	assert_int_equal(p.line, 7);
	assert_int_equal(p.col, 7);
	assert_int_equal(ydoc_stream_pos(s, json_array_get(list, 0), &p), 0);
	assert_int_equal(p.line, 6);
	assert_int_equal(p.col, 7);
	assert_int_equal(ydoc_stream_index_pos(s, list, 2, &p), -1);
	ydoc_stream_free(s);
}

static void error_at_node(void **state)
{
	struct ydoc_stream *s;
	struct gs_error err;
	char buf[2048];

	(void)state;
	s = load_ok("a:\n  b: x\n");
	ydoc_error_at(s, get(get(ydoc_stream_doc(s, 0), "a"), "b"), &err, "bad %s", "value");
	assert_string_equal(gs_error_str(&err, buf, sizeof(buf)), "t.yaml:2:6: bad value");
	ydoc_stream_free(s);
}

static void syntax_errors(void **state)
{
	(void)state;
	assert_string_equal(load_err("a: b: c\n", NULL),
			    "t.yaml:1:5: mapping values are not allowed in this context");
	assert_string_equal(
		load_err("a:\n  - x\n  y: z\n", NULL),
		"t.yaml:3:3: did not find expected '-' indicator (while parsing a block "
		"collection at line 2 column 3)");
	assert_string_equal(
		load_err("a: \"open\n", NULL),
		"t.yaml:2:1: found unexpected end of stream (while scanning a quoted scalar "
		"at line 1 column 4)");
	/* Reader errors: invalid UTF-8, positioned by counting characters. */
	assert_string_equal(load_err("a: 1\nbb: \xff\n", NULL),
			    "t.yaml:2:5: invalid leading UTF-8 octet (byte 0xFF)");
}

static void limits(void **state)
{
	struct ydoc_limits lim = ydoc_default_limits;
	char *deep;
	const char *laughs = "a: &a [x, x, x, x, x, x, x, x, x, x]\n"
			     "b: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a, *a]\n"
			     "c: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b, *b]\n"
			     "d: &d [*c, *c, *c, *c, *c, *c, *c, *c, *c, *c]\n"
			     "e: &e [*d, *d, *d, *d, *d, *d, *d, *d, *d, *d]\n"
			     "f: &f [*e, *e, *e, *e, *e, *e, *e, *e, *e, *e]\n"
			     "g: &g [*f, *f, *f, *f, *f, *f, *f, *f, *f, *f]\n"
			     "h: &h [*g, *g, *g, *g, *g, *g, *g, *g, *g, *g]\n";

	(void)state;
	assert_string_equal(
		load_err(laughs, NULL),
		"t.yaml:7:16: document has more than 4194304 nodes once aliases are expanded");

	deep = calloc(1, 1000);
	memset(deep, '[', 300);
	assert_string_equal(load_err(deep, NULL),
			    "t.yaml:1:257: nesting is deeper than the limit of 256 levels");
	/* Depth counts through aliases too. */
	lim.max_depth = 3;
	assert_string_equal(load_err("a: &a [[1]]\nb: [*a]\n", &lim),
			    "t.yaml:2:5: nesting is deeper than the limit of 3 levels");
	free(deep);

	lim = ydoc_default_limits;
	lim.max_docs = 2;
	assert_string_equal(load_err("1\n---\n2\n---\n3\n", &lim),
			    "t.yaml:4:1: more than 2 documents");
	lim = ydoc_default_limits;
	lim.max_bytes = 4;
	assert_string_equal(load_err("a: 12\n", &lim),
			    "t.yaml: input is larger than the limit of 4 bytes");
}

/* "a:" then n anchored items (&a0 0, &a1 1, ...), then "b:" with an alias to each. */
static char *many_anchors(size_t n, int aliases)
{
	size_t cap = 64 + n * 48, at = 0;
	char *t = malloc(cap);

	at += (size_t)snprintf(t + at, cap - at, "a:\n");
	for (size_t i = 0; i < n; i++)
		at += (size_t)snprintf(t + at, cap - at, "- &a%zu %zu\n", i, i);
	if (aliases) {
		at += (size_t)snprintf(t + at, cap - at, "b:\n");
		for (size_t i = 0; i < n; i++)
			at += (size_t)snprintf(t + at, cap - at, "- *a%zu\n", i);
	}
	return t;
}

/*
 * Anchors are hashed: 100,000 anchors and as many aliases (minutes with a
 * linear lookup) load, and their number is capped by max_anchors.
 */
static void many_anchors_and_the_anchor_limit(void **state)
{
	struct ydoc_limits lim = ydoc_default_limits;
	struct ydoc_stream *s;
	char *text;
	json_t *b;

	(void)state;
	assert_int_equal(ydoc_default_limits.max_anchors, 100000);
	text = many_anchors(100000, 1);
	s = load_ok(text);
	b = get(ydoc_stream_doc(s, 0), "b");
	assert_int_equal(json_array_size(b), 100000);
	assert_int_equal(json_integer_value(json_array_get(b, 0)), 0);
	assert_int_equal(json_integer_value(json_array_get(b, 99999)), 99999);
	ydoc_stream_free(s);
	free(text);

	/* One more distinct name is refused where it is defined. */
	text = many_anchors(100001, 0);
	assert_string_equal(load_err(text, NULL),
			    "t.yaml:100002:3: more than 100000 anchors in one document (the "
			    "anchor limit)");
	free(text);

	/* The limit counts names in one document: redefinitions and other documents are free. */
	lim.max_anchors = 2;
	s = NULL;
	{
		struct gs_error err;
		const char *ok =
			"a: &x 1\nb: &y 2\nc: &x 3\nd: *x\n---\ne: &z [1]\nf: &w {}\ng: *z\n";

		assert_int_equal(
			ydoc_load_buffer("t.yaml", ok, strlen(ok), no_origin, &lim, &s, &err), 0);
		expect_int(ydoc_stream_doc(s, 0), "d", 3);
		ydoc_stream_free(s);
	}
	assert_string_equal(load_err("a: &x 1\nb: &y 2\nc: &z [1]\n", &lim),
			    "t.yaml:3:4: more than 2 anchors in one document (the anchor limit)");
	assert_string_equal(load_err("a: &x 1\nb: &y 2\n&z c: 3\n", &lim),
			    "t.yaml:3:1: more than 2 anchors in one document (the anchor limit)");
}

static void expect_exact(const struct ydoc_stream *s, json_t *o, const char *k, const char *want)
{
	const char *digits = NULL;
	json_t *v = get(o, k);
	int exact = ydoc_stream_exact_int(s, v, &digits);

	if (!want) {
		assert_int_equal(exact, 0);
		assert_null(digits);
		return;
	}
	if (!exact)
		print_error("%s: not an exact integer\n", k);
	assert_int_equal(exact, 1);
	assert_string_equal(digits, want);
}

/*
 * Integers past int64 that go-yaml keeps exactly (resolve.go: a uint64 from
 * ParseUint, a big.Int after ParseUint's range error): their digits, as
 * encoding/json writes them, next to the approximating real.
 */
static void integers_past_int64_are_exact(void **state)
{
	struct ydoc_stream *s;
	json_t *d;
	struct ydoc_resolved r;
	struct gs_error err;

	(void)state;
	s = load_ok("u64max: 18446744073709551615\n"
		    "i64max1: 9223372036854775808\n"
		    "under: 1_8446_7440_7370_9551_615\n"
		    "hex: 0xFFFFFFFFFFFFFFFF\n"
		    "octal: 01777777777777777777777\n"
		    "hexbig: 0x1_0000_0000_0000_0000\n"
		    "binbig: 0b10000000000000000000000000000000000000000000000000000000000000000\n"
		    "octbig: 0o7777777777777777777777777\n"
		    "huge: "
		    "0x1000000000000000000000000000000000000000000000000000000000000000000000000000"
		    "000000000000000000\n"
		    "anchored: &a 18446744073709551614\n"
		    "alias: *a\n"
		    "dec264: 18446744073709551616\n"
		    "plus: +9223372036854775808\n"
		    "small: 42\n"
		    "neghex: -0x1FFFFFFFFFFFFFFFFF\n");
	d = ydoc_stream_doc(s, 0);
	expect_exact(s, d, "u64max", "18446744073709551615");
	expect_real(d, "u64max", 18446744073709551615.0);
	expect_exact(s, d, "i64max1", "9223372036854775808");
	expect_exact(s, d, "under", "18446744073709551615");
	expect_exact(s, d, "hex", "18446744073709551615");
	expect_exact(s, d, "octal", "18446744073709551615");
	expect_exact(s, d, "hexbig", "18446744073709551616");
	expect_exact(s, d, "binbig", "18446744073709551616");
	expect_exact(s, d, "octbig", "37778931862957161709567");
	/* 2^380: exact in Go, more digits than any quantity holds here */
	{
		const char *digits = "x";

		assert_int_equal(ydoc_stream_exact_int(s, get(d, "huge"), &digits), 1);
		assert_null(digits);
	}
	expect_exact(s, d, "anchored", "18446744073709551614");
	expect_exact(s, d, "alias", "18446744073709551614");
	/* Past 2^64 in decimal, or signed: go-yaml's float64, as approximate as Go's. */
	expect_exact(s, d, "dec264", NULL);
	expect_real(d, "dec264", 18446744073709551616.0);
	expect_exact(s, d, "plus", NULL);
	expect_exact(s, d, "small", NULL);
	/* ParseUint's error is a syntax error here, not a range error: no big.Int, a string. */
	expect_str(d, "neghex", "-0x1FFFFFFFFFFFFFFFFF");
	ydoc_stream_free(s);

	assert_int_equal(ydoc_resolve(NULL, "18446744073709551615", 20, 1, &r, &err), 0);
	assert_int_equal(r.type, YDOC_SCALAR_IS_REAL);
	assert_int_equal(r.exact_int, 1);
	assert_int_equal(ydoc_resolve(NULL, "9223372036854775807", 19, 1, &r, &err), 0);
	assert_int_equal(r.type, YDOC_SCALAR_IS_INT);
	assert_int_equal(r.exact_int, 0);
}

static void origin_and_block_content(void **state)
{
	const char *cm = "apiVersion: v1\n"
			 "kind: ConfigMap\n"
			 "data:\n"
			 "  shared: |-\n"
			 "    version: v1\n"
			 "    sharing:\n"
			 "      timeSlicing: a: b\n"
			 "  explicit: |2\n"
			 "     indented\n"
			 "  plain: x\n";
	struct ydoc_stream *s, *inner = NULL;
	struct ydoc_pos o;
	struct gs_error err;
	char buf[2048];
	json_t *data, *shared;

	(void)state;
	s = load_ok(cm);
	data = get(ydoc_stream_doc(s, 0), "data");
	shared = get(data, "shared");
	assert_int_equal(ydoc_stream_content_origin(s, shared, &o), 0);
	assert_int_equal(o.line, 5);
	assert_int_equal(o.col, 5);
	/* The embedded YAML's error lands on the file's line and column. */
	assert_int_equal(ydoc_load_buffer("cm.yaml", json_string_value(shared),
					  json_string_length(shared), o, NULL, &inner, &err),
			 -1);
	assert_null(inner);
	assert_string_equal(gs_error_str(&err, buf, sizeof(buf)),
			    "cm.yaml:7:21: mapping values are not allowed in this context");
	/* |2 under a key at column 3: content at column 3 + 2. */
	assert_int_equal(ydoc_stream_content_origin(s, get(data, "explicit"), &o), 0);
	assert_int_equal(o.line, 9);
	assert_int_equal(o.col, 5);
	expect_str(data, "explicit", " indented\n");
	/* Other scalars: their own start. */
	assert_int_equal(ydoc_stream_content_origin(s, get(data, "plain"), &o), 0);
	assert_int_equal(o.line, 10);
	assert_int_equal(o.col, 10);
	ydoc_stream_free(s);
}

static void resolve_api(void **state)
{
	struct ydoc_resolved r;
	struct gs_error err;

	(void)state;
	assert_int_equal(ydoc_resolve(NULL, "<<", 2, 1, &r, &err), 0);
	assert_true(r.merge);
	assert_int_equal(ydoc_resolve(NULL, "<<", 2, 0, &r, &err), 0);
	assert_false(r.merge);
	assert_int_equal(r.type, YDOC_SCALAR_IS_STRING);
	assert_int_equal(ydoc_resolve(NULL, "-0x10", 5, 1, &r, &err), 0);
	assert_int_equal(r.type, YDOC_SCALAR_IS_INT);
	assert_int_equal(r.integer, -16);
	assert_int_equal(ydoc_resolve(NULL, "2000m", 5, 1, &r, &err), 0);
	assert_int_equal(r.type, YDOC_SCALAR_IS_STRING);
	assert_int_equal(ydoc_resolve("tag:yaml.org,2002:float", "0x10", 4, 0, &r, &err), 0);
	assert_int_equal(r.type, YDOC_SCALAR_IS_REAL);
	assert_true(r.real == 16.0);
	assert_int_equal(ydoc_resolve("tag:yaml.org,2002:timestamp", "2001-12-14", 10, 0, &r, &err),
			 0);
	assert_int_equal(r.type, YDOC_SCALAR_IS_STRING);
	assert_int_equal(ydoc_resolve("tag:yaml.org,2002:timestamp", "later", 5, 0, &r, &err), -1);
	assert_string_equal(err.msg, "cannot decode !!str `later` as a !!timestamp");
}

static void load_file_errors(void **state)
{
	struct ydoc_stream *s = NULL;
	struct gs_error err;
	char buf[2048];

	(void)state;
	assert_int_equal(ydoc_load_file("/nonexistent/x.yaml", NULL, &s, &err), -1);
	assert_null(s);
	assert_string_equal(gs_error_str(&err, buf, sizeof(buf)),
			    "cannot open '/nonexistent/x.yaml': No such file or directory");
}

/* kubectl get -o yaml writes Lists; manifests readers take their items. */
static void load_manifests_expands_lists(void **state)
{
	char path[] = "/tmp/gs-ydoc-XXXXXX";
	const char *text = "apiVersion: v1\nkind: List\nitems:\n"
			   "- {kind: Node, metadata: {name: a}}\n"
			   "- kind: Node\n  metadata: {name: b}\n"
			   "---\nkind: Pod\nmetadata: {name: p}\n"
			   "---\nkind: PodList\nitems: []\n"
			   "---\nkind: NotAList\nitems: {}\n";
	struct ydoc_stream *s = NULL;
	struct gs_error err;
	struct ydoc_pos p;
	int fd;

	(void)state;
	fd = mkstemp(path);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	close(fd);
	assert_int_equal(ydoc_load_manifests(path, NULL, &s, &err), 0);
	unlink(path);
	assert_int_equal(ydoc_stream_count(s), 4);
	assert_string_equal(json_string_value(json_object_get(
				    json_object_get(ydoc_stream_doc(s, 0), "metadata"), "name")),
			    "a");
	assert_string_equal(json_string_value(json_object_get(
				    json_object_get(ydoc_stream_doc(s, 1), "metadata"), "name")),
			    "b");
	assert_string_equal(json_string_value(json_object_get(ydoc_stream_doc(s, 2), "kind")),
			    "Pod");
	assert_string_equal(json_string_value(json_object_get(ydoc_stream_doc(s, 3), "kind")),
			    "NotAList");
	/* Items keep their place in the file for error messages. */
	assert_int_equal(ydoc_stream_key_pos(s, ydoc_stream_doc(s, 1), "metadata", &p), 0);
	assert_int_equal(p.line, 6);
	assert_int_equal(p.col, 13);
	ydoc_stream_free(s);
}

static int keep_only_keep(void *ctx, int parent, const char *key, size_t len)
{
	(void)ctx;
	(void)parent;
	return key && len == 4 && !memcmp(key, "keep", 4) ? YDOC_KEEP_ALL : YDOC_SKIP;
}

static void filtered_load(void **state)
{
	static const struct ydoc_filter filter = {
		.root_role = 1, .child_role = keep_only_keep, .ctx = NULL};
	struct ydoc_stream *s;
	struct gs_error err;
	struct ydoc_pos p;
	json_t *d;
	const char *text = "drop: {a: [1, 2]}\nkeep:\n  b: 2\n";
	const char *aliased = "drop: &d {a: 1}\nkeep: *d\n";

	(void)state;
	assert_int_equal(ydoc_load_buffer_filtered("f.yaml", text, strlen(text), no_origin, NULL,
						   &filter, &s, &err),
			 0);
	d = ydoc_stream_doc(s, 0);
	assert_int_equal(json_object_size(d), 1);
	expect_int(get(d, "keep"), "b", 2);
	assert_int_equal(ydoc_stream_pos(s, json_object_get(get(d, "keep"), "b"), &p), 0);
	assert_int_equal(p.line, 3);
	assert_int_equal(p.col, 6);
	ydoc_stream_free(s);

	/* An alias may point into a dropped part: the load keeps everything. */
	assert_int_equal(ydoc_load_buffer_filtered("f.yaml", aliased, strlen(aliased), no_origin,
						   NULL, &filter, &s, &err),
			 0);
	d = ydoc_stream_doc(s, 0);
	expect_int(get(d, "keep"), "a", 1);
	expect_int(get(d, "drop"), "a", 1);
	ydoc_stream_free(s);

	/* Dropped parts fail as they would in a full load. */
	assert_int_equal(ydoc_load_buffer_filtered("f.yaml", "drop: [.nan]\n", 13, no_origin, NULL,
						   &filter, &s, &err),
			 -1);
	assert_null(s);
	assert_int_equal(err.line, 1);
	assert_int_equal(err.col, 8);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(scalars_resolve_like_go_yaml_v2),
		cmocka_unit_test(tags),
		cmocka_unit_test(errors_at_keys),
		cmocka_unit_test(keys_become_strings),
		cmocka_unit_test(documents),
		cmocka_unit_test(anchors_aliases_merges),
		cmocka_unit_test(many_anchors_and_the_anchor_limit),
		cmocka_unit_test(integers_past_int64_are_exact),
		cmocka_unit_test(non_json_values_fail),
		cmocka_unit_test(positions),
		cmocka_unit_test(error_at_node),
		cmocka_unit_test(syntax_errors),
		cmocka_unit_test(limits),
		cmocka_unit_test(origin_and_block_content),
		cmocka_unit_test(resolve_api),
		cmocka_unit_test(load_file_errors),
		cmocka_unit_test(load_manifests_expands_lists),
		cmocka_unit_test(filtered_load),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
