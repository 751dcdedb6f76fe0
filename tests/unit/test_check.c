/*
 * check: the two engines (filtered stream, full tree) must agree on every
 * input, findings and errors alike; expected verdicts follow the lab's
 * contract (the lab's step 6, README.md) and k8s.io/kubernetes v1.34.4
 * pkg/apis/core/validation/validation.go.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/check.h"

/* Everything a run produced, as text, so runs compare with one strcmp. */
static char *run(const char *text, unsigned rules, enum check_engine engine)
{
	struct check_report rep;
	struct gs_error err;
	char buf[2048];
	char *out = gs_xstrdup(""), *next;
	int rc;

	check_report_init(&rep);
	rc = check_buffer("in.yaml", text, strlen(text), rules, engine, &rep, &err);
	if (rc) {
		assert_int_equal(rep.n, 0);
		next = gs_xasprintf("error: %s\n", gs_error_str(&err, buf, sizeof(buf)));
		free(out);
		out = next;
	}
	for (size_t i = 0; i < rep.n; i++) {
		const struct check_finding *f = &rep.items[i];

		if (f->kind == CHECK_OVER)
			next = gs_xasprintf("%sOVER=%s=%s\n", out, f->container, f->count);
		else
			next = gs_xasprintf("%s%s\n", out, f->text);
		free(out);
		out = next;
	}
	check_report_release(&rep);
	return out;
}

static void expect(const char *text, unsigned rules, const char *want)
{
	char *a = run(text, rules, CHECK_ENGINE_STREAM);
	char *b = run(text, rules, CHECK_ENGINE_TREE);

	if (strcmp(a, b))
		print_error("engines differ on:\n%s\nstream:\n%s\ntree:\n%s\n", text, a, b);
	assert_string_equal(a, b);
	if (want)
		assert_string_equal(a, want);
	free(a);
	free(b);
}

static void contract(void **state)
{
	(void)state;
	expect("", 0, "");
	/* Past int64: exact where Go keeps the integer (uint64, big.Int), on every path. */
	expect("kind: Pod\nspec:\n  containers:\n  - name: a\n    resources:\n      limits:\n"
	       "        nvidia.com/gpu: 18446744073709551615\n  - name: b\n    resources:\n"
	       "      requests:\n        nvidia.com/gpu: 0x10000000000000000\n",
	       0,
	       "OVER=a=18446744073709551615\nOVER=b=18446744073709551616\n"
	       "in.yaml:11:25: container \"b\": spec.containers[1].resources.limits: Required "
	       "value: "
	       "Limit must be set for non overcommitable resources\n");
	expect("kind: Pod\nspec: {containers: [{name: a, resources: {limits: {nvidia.com/gpu: "
	       "9223372036854775808}}}, {name: b, resources: {limits: {nvidia.com/gpu: "
	       "18446744073709551616}}}]}\n",
	       0, "OVER=a=9223372036854775808\nOVER=b=18446744073709552k\n");
	expect("kind: Pod\nspec: {containers: [{name: a, resources: {limits: {nvidia.com/gpu: "
	       "0x100000000000000000000000000000000000000000000000000000000000000000000000000000000"
	       "0000"
	       "000000000000}}}]}\n",
	       0,
	       "error: in.yaml:2:68: spec.containers[0].resources.limits[nvidia.com/gpu]: quantity "
	       "is longer than 64 characters\n");
	/* Names that are not DNS-1123 labels are quoted: no line or '=' of their own. */
	expect("kind: Pod\nspec: {containers: [{name: \"g\\nOK=1\", resources: {limits: "
	       "{nvidia.com/gpu: 2}}}, {name: ok-1, resources: {limits: {nvidia.com/gpu: 2}}}]}\n",
	       0, "OVER=\"g\\nOK\\x3d1\"=2\nOVER=ok-1=2\n");
	expect("kind: Pod\nspec:\n  containers:\n  - name: a\n    resources: {limits: "
	       "{nvidia.com/gpu: 2}}\n",
	       0, "OVER=a=2\n");
	expect("kind: Pod\nspec:\n  containers:\n  - name: a\n    resources: {requests: "
	       "{nvidia.com/gpu: '3'}}\n",
	       0,
	       "OVER=a=3\nin.yaml:5:44: container \"a\": spec.containers[0].resources.limits: "
	       "Required value: Limit must be set for non overcommitable resources\n");
	expect("kind: Pod\nspec:\n  containers:\n  - name: a\n    resources: {limits: "
	       "{nvidia.com/gpu: 1}}\n",
	       0, "");
	/* Both over 1: the larger. */
	expect("kind: Pod\nspec: {containers: [{name: a, resources: {limits: {nvidia.com/gpu: 2}, "
	       "requests: {nvidia.com/gpu: 5}}}]}\n",
	       0,
	       "OVER=a=5\nin.yaml:2:99: container \"a\": spec.containers[0].resources.requests: "
	       "Invalid value: \"5\": must be equal to nvidia.com/gpu limit of 2\n");
	/* Quantity forms: 2000m is 2, 2.0 is 2, null is 0. */
	expect("kind: Pod\nspec: {containers: [{name: m, resources: {limits: {nvidia.com/gpu: "
	       "2000m}}},"
	       " {name: f, resources: {limits: {nvidia.com/gpu: 2.0}}},"
	       " {name: n, resources: {limits: {nvidia.com/gpu: null}}}]}\n",
	       0, "OVER=m=2\nOVER=f=2\n");
	/* A numeric container name reads as text. */
	expect("kind: Pod\nspec: {containers: [{name: 42, resources: {limits: {nvidia.com/gpu: "
	       "2}}}]}\n",
	       0, "OVER=42=2\n");
	/* Duplicate keys: the last wins, as in non-strict decoding. */
	expect("kind: Pod\nspec:\n  containers: [{name: gone, resources: {limits: {nvidia.com/gpu: "
	       "9}}}]\n"
	       "  containers: [{name: kept, resources: {limits: {nvidia.com/gpu: 2}}}]\n",
	       0, "OVER=kept=2\n");
	expect("kind: Pod\nkind: Service\nspec: {containers: [{name: a, resources: {limits: "
	       "{nvidia.com/gpu: 2}}}]}\n",
	       0, "");
}

static void engines_agree_on_errors(void **state)
{
	static const char *const inputs[] = {
		"a: b: c\n",
		"kind: Pod\nspec: {containers: {name: x}}\n",
		"kind: Pod\nspec: {containers: [5]}\n",
		"kind: Pod\nspec: {containers: [{name: [x]}]}\n",
		"kind: Pod\nspec: {containers: [{name: a, resources: {limits: {nvidia.com/gpu: "
		"abc}}}]}\n",
		"kind: Pod\nspec: {containers: [{name: a, resources: {limits: {nvidia.com/gpu: "
		"[1]}}}]}\n",
		"kind: Pod\nspec: {containers: [{name: a, resources: 7}]}\n",
		"kind: List\nitems: {a: 1}\n",
		"kind: List\nitems: [1]\n",
		/* Errors inside parts the stream engine drops must still be errors. */
		"kind: Pod\nmetadata: {labels: {a: .inf}}\n",
		"kind: Pod\nmetadata: {labels: {a: !!int x}}\n",
		"kind: Pod\nmetadata: {labels: {~: x}}\n",
		"kind: Pod\nmetadata: {labels: {? [a] : x}}\n",
		"kind: Pod\nmetadata: {<<: 5}\n",
		"kind: Pod\nmetadata: {<<: [{a: 1}, 5]}\n",
		"kind: Pod\nmetadata: {<<: [{a: 1}, [2], !!int q]}\n",
		"kind: Pod\nmetadata: {x: !!binary '*'}\n",
		"kind: Pod\nmetadata: {!!binary '*': x}\n",
		"kind: Pod\nmetadata: &m {a: 1}\nspec: {containers: [{<<: *m, name: q, resources: "
		"{limits: {nvidia.com/gpu: 3}}}]}\n",
		"kind: Pod\nmetadata: {a: *nope}\n",
		"kind: Pod\nspec: {containers: [{name: a, resources: {limits: {nvidia.com/gpu: "
		"2}}}]}\n---\n[\n",
		"kind: Pod\nspec:\n  containers:\n  - {name: a, resources: {limits: "
		"{example.com/x: -1, "
		"nvidia.com/gpu: 1.5}, requests: {nvidia.com/gpu: 1, nvidia.com/mig-1g.5gb: 4}}}\n",
		"kind: Deployment\nspec:\n  template:\n    spec:\n      <<: {containers: [{name: "
		"m, resources: "
		"{limits: {nvidia.com/gpu: 2}}}]}\n",
		"kind: Pod\nspec: {containers: [{name: a, resources: {limits: {nvidia.com/gpu: "
		"2}}}], "
		"initContainers: x}\n",
		/* an anchored .nan key is fine until an alias makes it a value */
		"kind: Pod\nx: [&n .NaN: 1]\n",
		"kind: Pod\nx: [&n .NaN: 1]\ny: *n\n",
		"kind: Pod\nx: {&n .inf: 1}\ny: {*n : 2}\n",
		"x: [&a [&a 1], *a]\n",
	};

	(void)state;
	for (size_t i = 0; i < sizeof(inputs) / sizeof(inputs[0]); i++)
		expect(inputs[i], CHECK_SHARED_RESOURCES, NULL);
	/* and a few verdicts among them */
	expect(inputs[0], 0,
	       "error: in.yaml:1:5: mapping values are not allowed in this context\n");
	expect(inputs[9], 0,
	       "error: in.yaml:2:24: json: unsupported value: +Inf (JSON, which Kubernetes reads, "
	       "has no infinity)\n");
	expect(inputs[13], 0,
	       "error: in.yaml:2:16: map merge requires map or sequence of maps as the value\n");
	expect(inputs[18], 0, "OVER=q=3\n");
	expect(inputs[22], 0, "OVER=m=2\n");
	/* A YAML error anywhere beats a bad value earlier on, as if the stream were loaded first.
	 */
	expect("kind: Pod\nspec:\n  containers:\n  - name: a\n    resources: {limits: "
	       "{nvidia.com/gpu: two}}\n"
	       "---\n[\n",
	       0,
	       "error: in.yaml:8:1: did not find expected node content (while parsing a flow node "
	       "at line 8 column 1)\n");
}

static void api_rules_texts(void **state)
{
	(void)state;
	expect("kind: Pod\nspec:\n  containers:\n  - name: a\n    resources:\n      limits: "
	       "{nvidia.com/gpu: 2}\n"
	       "      requests: {nvidia.com/gpu: 1}\n",
	       0,
	       "OVER=a=2\nin.yaml:7:34: container \"a\": spec.containers[0].resources.requests: "
	       "Invalid value: "
	       "\"1\": must be equal to nvidia.com/gpu limit of 2\n");
	/* cpu is no extended resource: it may be overcommitted and fractional. */
	expect("kind: Pod\nspec:\n  containers:\n  - name: a\n    resources: {requests: {cpu: "
	       "500m}}\n",
	       0, "");
	expect("kind: Pod\nspec:\n  containers:\n  - name: a\n    resources: {limits: "
	       "{example.com/dev: -1}}\n",
	       0,
	       "in.yaml:5:43: container \"a\": "
	       "spec.containers[0].resources.limits[example.com/dev]: Invalid "
	       "value: \"-1\": must be greater than or equal to 0\n"
	       /* a Pod's requests are defaulted from its limits */
	       "in.yaml:5:43: container \"a\": "
	       "spec.containers[0].resources.requests[example.com/dev]: Invalid "
	       "value: \"-1\": must be greater than or equal to 0\n");
}

/* n Lists, one inside the other, around a Pod asking for 3 GPUs (flow style). */
static char *nested_lists(int n)
{
	const char *pod = "{kind: Pod, spec: {containers: [{name: deep, resources: {limits: "
			  "{nvidia.com/gpu: 3}}}]}}";
	size_t cap = strlen(pod) + (size_t)n * 32 + 1, at = 0;
	char *t = gs_xmalloc(cap);

	for (int i = 0; i < n; i++)
		at += (size_t)snprintf(t + at, cap - at, "{kind: List, items: [");
	at += (size_t)snprintf(t + at, cap - at, "%s", pod);
	for (int i = 0; i < n; i++)
		at += (size_t)snprintf(t + at, cap - at, "]}");
	snprintf(t + at, cap - at, "\n");
	return t;
}

/* Nested Lists are followed to the bottom, or fail loudly: never a silent OK. */
static void nested_lists_are_followed(void **state)
{
	char *t;
	struct ydoc_limits lim = ydoc_default_limits;
	struct ydoc_stream *s;
	struct check_report rep;
	struct gs_error err;
	char buf[2048];

	(void)state;
	/* 8 used to be the end of the walk; 125 (and the Pod's 6 levels) fill the YAML limit. */
	static const int depths[] = {1, 8, 9, 10, 64, 125};

	for (size_t i = 0; i < sizeof(depths) / sizeof(depths[0]); i++) {
		t = nested_lists(depths[i]);
		expect(t, 0, "OVER=deep=3\n");
		free(t);
	}
	/* Deeper than the YAML nesting limit: the loader's error. */
	t = nested_lists(126);
	expect(t, 0, "error: in.yaml:1:2703: nesting is deeper than the limit of 256 levels\n");
	free(t);
	/* A tree loaded with a larger depth limit: the walk's own guard. */
	lim.max_depth = 4000;
	t = nested_lists(1001);
	assert_int_equal(
		ydoc_load_buffer("in.yaml", t, strlen(t), (struct ydoc_pos){0, 0}, &lim, &s, &err),
		0);
	check_report_init(&rep);
	assert_int_equal(check_stream(s, 0, &rep, &err), -1);
	assert_int_equal(rep.n, 0);
	assert_string_equal(gs_error_str(&err, buf, sizeof(buf)),
			    "in.yaml:1:21021: items: Lists nested more than 1000 deep");
	check_report_release(&rep);
	ydoc_stream_free(s);
	free(t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(contract),
		cmocka_unit_test(engines_agree_on_errors),
		cmocka_unit_test(api_rules_texts),
		cmocka_unit_test(nested_lists_are_followed),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
