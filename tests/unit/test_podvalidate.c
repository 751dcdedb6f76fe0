/*
 * podvalidate: kube-apiserver v1.34's validation of what a pod asks of
 * resources. Every expected message is the one k8s.io/kubernetes v1.34.4's
 * ValidatePodCreate (ValidateDeployment for the Deployment) gives for the
 * same manifest after the apiserver's defaulting, word for word; where
 * several errors come from one resource list the apiserver's order is that
 * of a Go map (random), ours the manifest's.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/podvalidate.h"

#define POD(name, spec)                                                                            \
	"apiVersion: v1\nkind: Pod\nmetadata: {name: " name ", namespace: default}\nspec:\n" spec

/* The refusal of the first document of text, or NULL. */
static char *refusal(const char *text)
{
	struct ydoc_stream *s;
	struct ydoc_pos none = {0, 0};
	struct gs_error err;
	char *msg = NULL;

	if (ydoc_load_buffer("in.yaml", text, strlen(text), none, NULL, &s, &err) < 0)
		fail_msg("%s", err.msg);
	if (podvalidate_refusal(ydoc_stream_doc(s, 0), s, &msg, &err) < 0)
		fail_msg("%s", err.msg);
	ydoc_stream_free(s);
	return msg;
}

static void expect(const char *text, const char *want)
{
	char *got = refusal(text);

	if (!want && got)
		fail_msg("refused, want accepted:\n%s\n%s", text, got);
	if (want && !got)
		fail_msg("accepted, want refused:\n%s", text);
	if (want)
		assert_string_equal(got, want);
	free(got);
}

static void extended_resources(void **state)
{
	(void)state;
	expect(POD("fits", "  containers:\n  - {name: a, image: x, resources: {limits: "
			   "{nvidia.com/gpu: 1}}}\n"),
	       NULL);
	/* A limit gives its value to the missing request (SetDefaults_Pod): two errors. */
	expect(POD("half", "  containers:\n  - {name: a, image: x, resources: {limits: "
			   "{nvidia.com/gpu: 0.5}}}\n"),
	       "Pod \"half\" is invalid: [spec.containers[0].resources.limits[nvidia.com/gpu]: "
	       "Invalid value: \"500m\": must be an integer, "
	       "spec.containers[0].resources.requests[nvidia.com/gpu]: Invalid value: \"500m\": "
	       "must be an integer]");
	expect(POD("no-limit", "  containers:\n  - {name: a, image: x, resources: {requests: "
			       "{nvidia.com/gpu: 1}}}\n"),
	       "Pod \"no-limit\" is invalid: spec.containers[0].resources.limits: Required value: "
	       "Limit must be set for non overcommitable resources");
	expect(POD("unequal", "  containers:\n  - {name: a, image: x, resources: {limits: "
			      "{nvidia.com/gpu: 2}, requests: {nvidia.com/gpu: 1}}}\n"),
	       "Pod \"unequal\" is invalid: spec.containers[0].resources.requests: Invalid value: "
	       "\"1\": must be equal to nvidia.com/gpu limit of 2");
	expect(POD("negative", "  containers:\n  - {name: a, image: x, resources: {limits: "
			       "{nvidia.com/gpu: -1}}}\n"),
	       "Pod \"negative\" is invalid: [spec.containers[0].resources.limits[nvidia.com/gpu]: "
	       "Invalid value: \"-1\": must be greater than or equal to 0, "
	       "spec.containers[0].resources.requests[nvidia.com/gpu]: Invalid value: \"-1\": "
	       "must be greater than or equal to 0]");
	/* The same text twice is said once (ErrorList.ToAggregate). */
	expect(POD("two-without", "  containers:\n  - {name: a, image: x, resources: {requests: "
				  "{nvidia.com/gpu: 1, nvidia.com/mig-1g.10gb: 1}}}\n"),
	       "Pod \"two-without\" is invalid: spec.containers[0].resources.limits: Required "
	       "value: Limit must be set for non overcommitable resources");
	/* Rounded to the milli before validation: 1.0001 and 1.0002 are both 1001m. */
	expect(POD("round", "  containers:\n  - {name: a, image: x, resources: {limits: "
			    "{nvidia.com/gpu: 1.0001}, requests: {nvidia.com/gpu: 1.0002}}}\n"),
	       "Pod \"round\" is invalid: [spec.containers[0].resources.limits[nvidia.com/gpu]: "
	       "Invalid value: \"1001m\": must be an integer, "
	       "spec.containers[0].resources.requests[nvidia.com/gpu]: Invalid value: \"1001m\": "
	       "must be an integer]");
	/* cpu may be overcommitted, not past its limit */
	expect(POD("cpu", "  containers:\n  - {name: a, image: x, resources: {limits: {cpu: 1, "
			  "nvidia.com/gpu: 1}, requests: {cpu: 2}}}\n"),
	       "Pod \"cpu\" is invalid: spec.containers[0].resources.requests: Invalid value: "
	       "\"2\": must be less than or equal to cpu limit of 1");
	expect(POD("hugepages", "  containers:\n  - {name: a, image: x, resources: {limits: "
				"{hugepages-2Mi: 3Mi, nvidia.com/gpu: 1}}}\n"),
	       "Pod \"hugepages\" is invalid: "
	       "[spec.containers[0].resources.limits[hugepages-2Mi]: Invalid value: \"3Mi\": 3Mi "
	       "is not positive integer multiple of hugepages-2Mi, "
	       "spec.containers[0].resources.requests[hugepages-2Mi]: Invalid value: \"3Mi\": 3Mi "
	       "is not positive integer multiple of hugepages-2Mi, spec.containers[0].resources: "
	       "Forbidden: HugePages require cpu or memory]");
}

/* MilliValue() % 1000 with upstream's int64 wrap-around decides "must be an integer". */
static void integer_rule_wraps(void **state)
{
	(void)state;
	expect(POD("exbi", "  containers:\n  - {name: a, image: x, resources: {limits: "
			   "{nvidia.com/gpu: 1Ei}}}\n"),
	       "Pod \"exbi\" is invalid: [spec.containers[0].resources.limits[nvidia.com/gpu]: "
	       "Invalid value: \"1Ei\": must be an integer, "
	       "spec.containers[0].resources.requests[nvidia.com/gpu]: Invalid value: \"1Ei\": "
	       "must be an integer]");
	expect(POD("ten-peta", "  containers:\n  - {name: a, image: x, resources: {limits: "
			       "{nvidia.com/gpu: 10000000000000000}}}\n"),
	       "Pod \"ten-peta\" is invalid: [spec.containers[0].resources.limits[nvidia.com/gpu]: "
	       "Invalid value: \"10P\": must be an integer, "
	       "spec.containers[0].resources.requests[nvidia.com/gpu]: Invalid value: \"10P\": "
	       "must be an integer]");
	/* times 1000 this wraps to -1000: accepted */
	expect(POD("int64-max", "  containers:\n  - {name: a, image: x, resources: {limits: "
				"{nvidia.com/gpu: 9223372036854775807}}}\n"),
	       NULL);
	expect(POD("forms",
		   "  containers:\n"
		   "  - {name: a, image: x, resources: {limits: {nvidia.com/gpu: 1000m}}}\n"
		   "  - {name: b, image: x, resources: {limits: {nvidia.com/gpu: \"1e3\"}}}\n"
		   "  - {name: c, image: x, resources: {limits: {nvidia.com/gpu: 1k}}}\n"
		   "  - {name: d, image: x, resources: {limits: {nvidia.com/gpu: 2Mi}}}\n"),
	       NULL);
}

static void every_container(void **state)
{
	(void)state;
	/* init containers, regular and sidecar alike */
	expect(POD("inits", "  initContainers:\n"
			    "  - {name: setup, image: x, resources: {requests: {nvidia.com/gpu: "
			    "1}}}\n"
			    "  - {name: sidecar, image: x, restartPolicy: Always, resources: "
			    "{limits: {nvidia.com/gpu: 0.5}}}\n"
			    "  containers:\n  - {name: a, image: x}\n"),
	       "Pod \"inits\" is invalid: [spec.initContainers[0].resources.limits: Required "
	       "value: Limit must be set for non overcommitable resources, "
	       "spec.initContainers[1].resources.limits[nvidia.com/gpu]: Invalid value: \"500m\": "
	       "must be an integer, spec.initContainers[1].resources.requests[nvidia.com/gpu]: "
	       "Invalid value: \"500m\": must be an integer]");
	expect(POD("ephemeral", "  containers:\n  - {name: a, image: x}\n"
				"  ephemeralContainers:\n  - {name: debug, image: x, resources: "
				"{limits: {nvidia.com/gpu: 1}}}\n"),
	       "Pod \"ephemeral\" is invalid: [spec.ephemeralContainers[0].resources: Forbidden: "
	       "cannot be set for an Ephemeral Container, spec.ephemeralContainers: Forbidden: "
	       "cannot be set on create]");
	expect(POD("pod-level", "  resources: {limits: {nvidia.com/gpu: 1}}\n"
				"  containers:\n  - {name: a, image: x, resources: {limits: "
				"{nvidia.com/gpu: 2}}}\n"),
	       "Pod \"pod-level\" is invalid: [spec.resources.limits[nvidia.com/gpu]: Unsupported "
	       "value: \"nvidia.com/gpu\": supported values: \"cpu\", \"hugepages-\", \"memory\", "
	       "spec.resources.containers[0][nvidia.com/gpu].limits: Invalid value: \"2\": must "
	       "be less than or equal to pod limits of 1]");
	expect(POD("names", "  containers:\n  - {name: a, image: x, resources: {limits: {gpu: "
			    "1}}}\n"),
	       "Pod \"names\" is invalid: [spec.containers[0].resources.limits[gpu]: Invalid "
	       "value: \"gpu\": must be a standard resource type or fully qualified, "
	       "spec.containers[0].resources.limits[gpu]: Invalid value: \"gpu\": must be a "
	       "standard resource for containers, spec.containers[0].resources.requests[gpu]: "
	       "Invalid value: \"gpu\": must be a standard resource type or fully qualified, "
	       "spec.containers[0].resources.requests[gpu]: Invalid value: \"gpu\": must be a "
	       "standard resource for containers]");
}

/* A workload's pod template: no limit-to-request copy, its own path and kind. */
static void templates(void **state)
{
	(void)state;
	expect("apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: train}\nspec:\n"
	       "  selector: {matchLabels: {a: b}}\n  template:\n    metadata: {labels: {a: b}}\n"
	       "    spec:\n      containers:\n"
	       "      - {name: a, image: x, resources: {limits: {nvidia.com/gpu: 0.5}}}\n"
	       "      - {name: b, image: x, resources: {requests: {nvidia.com/gpu: 1}}}\n"
	       "      ephemeralContainers:\n      - {name: e, image: x}\n",
	       "Deployment.apps \"train\" is invalid: "
	       "[spec.template.spec.containers[0].resources.limits[nvidia.com/gpu]: Invalid "
	       "value: \"500m\": must be an integer, "
	       "spec.template.spec.containers[1].resources.limits: Required value: Limit must be "
	       "set for non overcommitable resources, spec.template.spec.ephemeralContainers: "
	       "Forbidden: ephemeral containers not allowed in pod template]");
	expect("apiVersion: batch/v1\nkind: CronJob\nmetadata: {name: nightly}\nspec:\n"
	       "  jobTemplate:\n    spec:\n      template:\n        spec:\n          containers:\n"
	       "          - {name: a, image: x, resources: {requests: {nvidia.com/gpu: 1}}}\n",
	       "CronJob.batch \"nightly\" is invalid: "
	       "spec.jobTemplate.spec.template.spec.containers[0].resources.limits: Required "
	       "value: Limit must be set for non overcommitable resources");
	/* other kinds are not looked at */
	expect("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\nspec:\n  containers:\n"
	       "  - {name: a, resources: {requests: {nvidia.com/gpu: 1}}}\n",
	       NULL);
}

/* Positions, containers and the texts one by one; bad quantities are errors. */
static void report(void **state)
{
	const char *text = POD("p", "  containers:\n"
				    "  - name: a\n"
				    "    resources:\n"
				    "      requests: {nvidia.com/gpu: 1}\n");
	const char *bad = POD("p", "  containers:\n  - {name: a, resources: {limits: {cpu: "
				   "two}}}\n");
	struct ydoc_stream *s;
	struct ydoc_pos none = {0, 0};
	struct podvalidate_report r;
	struct gs_error err;
	char buf[2048];

	(void)state;
	assert_int_equal(ydoc_load_buffer("in.yaml", text, strlen(text), none, NULL, &s, &err), 0);
	assert_int_equal(podvalidate_object(ydoc_stream_doc(s, 0), NULL, s, &r, &err), 0);
	assert_int_equal(r.n, 1);
	assert_string_equal(r.kind, "Pod");
	assert_string_equal(r.name, "p");
	assert_string_equal(r.items[0].field, "spec.containers[0].resources.limits");
	assert_string_equal(r.items[0].body,
			    "Required value: Limit must be set for non overcommitable resources");
	assert_ptr_equal(
		r.items[0].container,
		json_array_get(json_object_get(json_object_get(ydoc_stream_doc(s, 0), "spec"),
					       "containers"),
			       0));
	assert_int_equal(r.items[0].pos.line, 8);
	assert_int_equal(r.items[0].pos.col, 34);
	podvalidate_report_release(&r);
	ydoc_stream_free(s);

	assert_int_equal(ydoc_load_buffer("in.yaml", bad, strlen(bad), none, NULL, &s, &err), 0);
	assert_int_equal(podvalidate_object(ydoc_stream_doc(s, 0), NULL, s, &r, &err), -1);
	assert_int_equal(r.n, 0);
	assert_string_equal(gs_error_str(&err, buf, sizeof(buf)),
			    "in.yaml:6:41: spec.containers[0].resources.limits[cpu]: quantities "
			    "must match the regular expression "
			    "'^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'");
	ydoc_stream_free(s);
}

/* The object's name is quoted as Go's %q quotes it. */
static void name_quoted(void **state)
{
	json_t *pod = json_pack("{s:s,s:{s:s},s:{s:[{s:s,s:{s:{s:i}}}]}}", "kind", "Pod",
				"metadata", "name", "a\"b\n", "spec", "containers", "name", "a",
				"resources", "requests", "nvidia.com/gpu", 1);
	struct gs_error err;
	char *msg;

	(void)state;
	assert_int_equal(podvalidate_refusal(pod, NULL, &msg, &err), 0);
	assert_string_equal(msg, "Pod \"a\\\"b\\n\" is invalid: spec.containers[0].resources."
				 "limits: Required value: Limit must be set for non "
				 "overcommitable resources");
	free(msg);
	json_decref(pod);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(extended_resources),
		cmocka_unit_test(integer_rule_wraps),
		cmocka_unit_test(every_container),
		cmocka_unit_test(templates),
		cmocka_unit_test(report),
		cmocka_unit_test(name_quoted),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
