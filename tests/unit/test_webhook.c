#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/kobj.h"
#include "base/strbuf.h"
#include "engine/webhook.h"

/*
 * The webhook's decision on AdmissionReviews around pods, against the
 * lab's fleet as recorded from the e2e apiserver (tests/unit/data/explain:
 * lab-node-0 2 whole GPUs under config "default", lab-node-1 8 time-sliced
 * slots under "shared" with failRequestsGreaterThanOne, lab-node-2 MIG
 * mixed with nvidia.com/mig-1g.10gb=7). Refusal texts quote the kubelet
 * (k8s-device-plugin v0.20.0 internal/rm/rm.go ValidateRequest) and the apiserver's validation
 * (k8s.io/kubernetes v1.34.4 pkg/apis/core/validation/validation.go).
 */
#define DATA "tests/unit/data/explain/"

static json_t *load(const char *name)
{
	json_error_t je;
	json_t *j = json_load_file(name, 0, &je);
	if (!j)
		fail_msg("%s: %s", name, je.text);
	return j;
}

struct fx {
	json_t *nodes;
	struct dpconfig_set *set;
	const struct catalog *cat;
	struct webhook_fleet fleet;
};

static int setup(void **state)
{
	struct fx *f = calloc(1, sizeof(*f));
	struct gs_error err;
	json_t *cm = load(DATA "configmap.json");

	f->nodes = load(DATA "nodes.json");
	if (dpconfig_set_from_configmap(NULL, cm, &f->set, &err) || catalog_builtin(&f->cat, &err))
		fail_msg("%s", err.msg);
	json_decref(cm);
	f->fleet = (struct webhook_fleet){f->nodes, f->set, f->cat};
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fx *f = *state;
	json_decref(f->nodes);
	dpconfig_set_free(f->set);
	free(f);
	return 0;
}

/*
 * A CREATE review of a pod with one container "work"; `spec_extra` is
 * spliced into the spec (e.g. a nodeSelector), `resources` is the
 * container's resources object.
 */
static char *review(const char *op, const char *spec_extra, const char *resources)
{
	return gs_xasprintf(
		"{\"apiVersion\":\"admission.k8s.io/v1\",\"kind\":\"AdmissionReview\","
		"\"request\":{\"uid\":\"705ab4f5-6393-11e8-b7cc-42010a800002\","
		"\"kind\":{\"group\":\"\",\"version\":\"v1\",\"kind\":\"Pod\"},"
		"\"resource\":{\"group\":\"\",\"version\":\"v1\",\"resource\":\"pods\"},"
		"\"namespace\":\"gpu-share\",\"operation\":\"%s\","
		"\"object\":{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":"
		"\"p\",\"namespace\":\"gpu-share\"},\"spec\":{%s%s\"containers\":[{\"name\":"
		"\"work\",\"image\":\"pause\",\"resources\":%s}]}}}}",
		op, spec_extra, *spec_extra ? "," : "", resources);
}

/* Run one review; returns the response object (owned by *answer). */
static const json_t *judge(const struct webhook_fleet *fl, const char *body, json_t **answer,
			   struct webhook_verdict *v)
{
	struct gs_error err;

	if (webhook_review(fl, body, strlen(body), answer, v, &err))
		fail_msg("review failed: %s", err.msg);
	assert_string_equal(kobj_text(*answer, "apiVersion"), "admission.k8s.io/v1");
	assert_string_equal(kobj_text(*answer, "kind"), "AdmissionReview");
	assert_string_equal(kobj_text(*answer, "response.uid"),
			    "705ab4f5-6393-11e8-b7cc-42010a800002");
	return json_object_get(*answer, "response");
}

static void expect_refused(const json_t *resp, const char *needle)
{
	assert_true(json_is_false(json_object_get(resp, "allowed")));
	assert_int_equal(
		json_integer_value(json_object_get(json_object_get(resp, "status"), "code")), 403);
	assert_string_equal(kobj_text(resp, "status.reason"), "Forbidden");
	const char *msg = kobj_text(resp, "status.message");
	if (!strstr(msg, needle))
		fail_msg("message lacks '%s': %s", needle, msg);
}

static void expect_allowed(const json_t *resp)
{
	assert_true(json_is_true(json_object_get(resp, "allowed")));
	assert_null(json_object_get(resp, "status"));
}

#define SHARED_SEL "\"nodeSelector\":{\"nvidia.com/device-plugin.config\":\"shared\"}"
#define DEFAULT_SEL "\"nodeSelector\":{\"nvidia.com/device-plugin.config\":\"default\"}"
#define GPU(n) "{\"limits\":{\"nvidia.com/gpu\":\"" n "\"}}"

static void test_two_slices_on_shared_node(void **state)
{
	struct fx *f = *state;
	char *body = review("CREATE", SHARED_SEL, GPU("2"));
	json_t *a;
	struct webhook_verdict v;
	const json_t *r = judge(&f->fleet, body, &a, &v);

	/* The kubelet's words, as the pod would fail with them. */
	expect_refused(r, "UnexpectedAdmissionError: Allocate failed due to rpc error: code = "
			  "Unknown desc = invalid allocation request for \"nvidia.com/gpu\": "
			  "invalid request: maximum request size for shared resources is 1; "
			  "found 2, which is unexpected");
	expect_refused(r, "lab-node-1");
	expect_refused(r, "config \"shared\"");
	expect_refused(r, "ask for 1 per container");
	/* The selector keeps it off lab-node-0: no alternative is offered. */
	assert_null(strstr(kobj_text(r, "status.message"), "lab-node-0"));
	assert_false(v.allowed);
	assert_true(v.judged);
	webhook_verdict_release(&v);
	json_decref(a);
	free(body);
}

static void test_two_slices_anywhere_names_the_alternative(void **state)
{
	struct fx *f = *state;
	char *body = review("CREATE", "", GPU("2"));
	json_t *a;
	const json_t *r = judge(&f->fleet, body, &a, NULL);

	expect_refused(r, "the pod can be scheduled to lab-node-1");
	expect_refused(r, "keep the pod on nodes that do not share it (lab-node-0)");
	json_decref(a);
	free(body);
}

static void test_two_whole_gpus_allowed(void **state)
{
	struct fx *f = *state;
	char *body = review("CREATE", DEFAULT_SEL, GPU("2"));
	json_t *a;
	const json_t *r = judge(&f->fleet, body, &a, NULL);

	expect_allowed(r);
	json_decref(a);
	free(body);
}

static void test_one_slice_allowed(void **state)
{
	struct fx *f = *state;
	char *body = review("CREATE", SHARED_SEL, GPU("1"));
	json_t *a;
	struct webhook_verdict v;
	const json_t *r = judge(&f->fleet, body, &a, &v);

	expect_allowed(r);
	assert_null(json_object_get(r, "warnings"));
	assert_null(v.message);
	webhook_verdict_release(&v);
	json_decref(a);
	free(body);
}

/* Without the ConfigMap the webhook cannot know the node shares: it lets it through. */
static void test_two_slices_without_configmap(void **state)
{
	struct fx *f = *state;
	struct webhook_fleet fl = {.nodes = f->nodes, .configs = NULL, .cat = f->cat};
	char *body = review("CREATE", SHARED_SEL, GPU("2"));
	json_t *a;
	const json_t *r = judge(&fl, body, &a, NULL);

	expect_allowed(r);
	json_decref(a);
	free(body);
}

static void test_gpu_on_mig_node_names_profiles(void **state)
{
	struct fx *f = *state;
	char *body = review("CREATE", "\"nodeSelector\":{\"nvidia.com/mig.strategy\":\"mixed\"}",
			    GPU("1"));
	json_t *a;
	const json_t *r = judge(&f->fleet, body, &a, NULL);

	expect_refused(r, "the one node this pod's nodeSelector, node affinity and tolerations "
			  "allow does not advertise nvidia.com/gpu");
	expect_refused(r, "node lab-node-2: this node advertises profiles, not whole GPUs (MIG "
			  "mixed strategy): nvidia.com/mig-1g.10gb=7; ask for one of those "
			  "instead of nvidia.com/gpu");
	json_decref(a);
	free(body);
}

static void test_profile_no_node_advertises(void **state)
{
	struct fx *f = *state;
	char *body = review("CREATE", "", "{\"limits\":{\"nvidia.com/mig-3g.40gb\":\"1\"}}");
	json_t *a;
	const json_t *r = judge(&f->fleet, body, &a, NULL);

	expect_refused(r, "no node advertises nvidia.com/mig-3g.40gb");
	expect_refused(r, "node lab-node-2: this node advertises other MIG profiles: "
			  "nvidia.com/mig-1g.10gb=7");
	expect_refused(r, "node lab-node-0: this node advertises whole GPUs");
	json_decref(a);
	free(body);
}

/*
 * Two names no node advertises, one the start of the other: what is said
 * of each is about that name (the hints of nvidia.com/mig-7g.10 are not
 * those of nvidia.com/mig-7g.1), and each MIG profile hint once.
 */
static void test_unadvertised_names_apart(void **state)
{
	struct fx *f = *state;
	char *body = review("CREATE", "",
			    "{\"limits\":{\"nvidia.com/mig-7g.1\":\"1\","
			    "\"nvidia.com/mig-7g.10\":\"1\"}}");
	json_t *a;
	const json_t *r = judge(&f->fleet, body, &a, NULL);
	const char *msg = kobj_text(r, "status.message");
	const char *second = strstr(msg, "no node advertises nvidia.com/mig-7g.10");

	expect_refused(r, "no node advertises nvidia.com/mig-7g.1;");
	assert_non_null(second);
	/* Before the second name's part: only the first name's hints. */
	char *first = gs_xstrndup(msg, (size_t)(second - msg));
	assert_null(strstr(first, "instead of nvidia.com/mig-7g.10"));
	assert_null(strstr(first, "nvidia.com/mig-7g.10: no node's GPU offers"));
	assert_non_null(strstr(first, "instead of nvidia.com/mig-7g.1;"));
	assert_non_null(
		strstr(first, "nvidia.com/mig-7g.1: no node's GPU offers MIG profile 7g.1 "));
	assert_non_null(strstr(second, "instead of nvidia.com/mig-7g.10;"));
	free(first);
	json_decref(a);
	free(body);
}

/* The apiserver's own validation: its refusal, word for word (src/engine/podvalidate.h). */
static void test_api_rules(void **state)
{
	struct fx *f = *state;
	static const struct {
		const char *res, *want;
	} cases[] = {
		{"{\"limits\":{\"nvidia.com/gpu\":\"500m\"},\"requests\":{\"nvidia.com/gpu\":"
		 "\"500m\"}}",
		 "Pod \"p\" is invalid: [spec.containers[0].resources.limits[nvidia.com/gpu]: "
		 "Invalid value: \"500m\": must be an integer, "
		 "spec.containers[0].resources.requests[nvidia.com/gpu]: Invalid value: \"500m\": "
		 "must be an integer]"},
		{"{\"limits\":{\"nvidia.com/gpu\":\"2\"},\"requests\":{\"nvidia.com/gpu\":\"1\"}}",
		 "Pod \"p\" is invalid: spec.containers[0].resources.requests: Invalid value: "
		 "\"1\": must be equal to nvidia.com/gpu limit of 2"},
		{"{\"requests\":{\"nvidia.com/gpu\":\"1\"}}",
		 "Pod \"p\" is invalid: spec.containers[0].resources.limits: Required value: Limit "
		 "must be set for non overcommitable resources"},
		/* a whole number whose MilliValue() wraps around int64 */
		{"{\"limits\":{\"nvidia.com/gpu\":\"1Ei\"},\"requests\":{\"nvidia.com/gpu\":"
		 "\"1Ei\"}}",
		 "Pod \"p\" is invalid: [spec.containers[0].resources.limits[nvidia.com/gpu]: "
		 "Invalid value: \"1Ei\": must be an integer, "
		 "spec.containers[0].resources.requests[nvidia.com/gpu]: Invalid value: \"1Ei\": "
		 "must be an integer]"},
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char *body = review("CREATE", DEFAULT_SEL, cases[i].res);
		json_t *a;
		const json_t *r = judge(&f->fleet, body, &a, NULL);
		expect_refused(r, cases[i].want);
		/* The whole message is the apiserver's, nothing before or after it. */
		assert_string_equal(kobj_text(r, "status.message"), cases[i].want);
		json_decref(a);
		free(body);
	}
}

/*
 * `body` after `edit` (a JSON Pointer-ish path into the review, the last
 * step set to `value`, or removed when value is NULL), as text.
 */
static char *edited(const char *body, const char *path, json_t *value)
{
	json_t *r = json_loads(body, 0, NULL), *at = r;
	char *copy = gs_xstrdup(path), *last = copy, *dot;

	while ((dot = strchr(last, '.'))) {
		*dot = '\0';
		at = json_object_get(at, last);
		last = dot + 1;
	}
	if (value)
		json_object_set_new(at, last, value);
	else
		json_object_del(at, last);
	char *text = json_dumps(r, JSON_COMPACT);
	json_decref(r);
	free(copy);
	return text;
}

/* The review is refused as unreadable (the server's 400), its message holding `needle`. */
static void expect_unjudgeable(const struct webhook_fleet *fl, const char *body, const char *needle)
{
	struct gs_error err;
	json_t *a = NULL;
	struct webhook_verdict v = {0};

	if (webhook_review(fl, body, strlen(body), &a, &v, &err) == 0)
		fail_msg("answered, not refused (%s): %s", needle, body);
	assert_null(a);
	if (!strstr(err.msg, needle))
		fail_msg("error lacks '%s': %s", needle, err.msg);
}

/*
 * What deploy/webhook.yaml's configuration never sends (a Pod that is not a
 * CREATE, a subresource, another kind or version) and reviews whose request
 * cannot be read are not answered: an error, which the server turns into a
 * 400 for the apiserver's failurePolicy, never "allowed".
 */
static void test_unjudgeable(void **state)
{
	struct fx *f = *state;
	char *good = review("CREATE", SHARED_SEL, GPU("2"));
	static const struct {
		const char *path, *value, *needle;
	} cases[] = {
		{"request.object", NULL, "request.object is absent"},
		{"request.object", "null", "request.object is null"},
		{"request.object", "[]", "request.object is an array"},
		{"request.object", "\"pod\"", "request.object is a string"},
		{"request.kind", NULL, "request.kind is absent"},
		{"request.kind", "null", "request.kind is null"},
		{"request.kind", "\"Pod\"", "request.kind is a string"},
		{"request.kind.kind", NULL, "request.kind lacks a group, version or kind"},
		{"request.kind.group", NULL, "request.kind lacks a group, version or kind"},
		{"request.kind.version", "\"v2\"", "request.kind is v2 Pod"},
		{"request.kind.kind", "\"Secret\"", "request.kind is v1 Secret"},
		{"request.operation", NULL, "request.operation is absent"},
		{"request.operation", "\"create\"", "request.operation is \"create\""},
		{"request.operation", "\"UPDATE\"", "request.operation is UPDATE for a Pod"},
		{"request.operation", "\"DELETE\"", "request.operation is DELETE for a Pod"},
		{"request.operation", "\"CONNECT\"", "request.operation is CONNECT for a Pod"},
		{"request.subResource", "\"status\"", "request.subResource is \"status\""},
		{"request.subResource", "7", "request.subResource is a number"},
		{"request.uid", NULL, "no request.uid"},
		{"request.uid", "\"\"", "no request.uid"},
		{"request", "[]", "request is an array"},
		{"request.object.kind", "\"Secret\"",
		 "request.object is apiVersion \"v1\" kind \"Secret\", but request.kind says v1 "
		 "Pod"},
		{"request.object.kind", NULL, "kind \"\", but request.kind says v1 Pod"},
		{"request.object.apiVersion", "\"apps/v1\"", "apiVersion \"apps/v1\" kind \"Pod\""},
		{"request.object.spec", NULL, "request.object.spec is absent, not an object"},
		{"request.object.spec", "[]", "request.object.spec is an array, not an object"},
		{"request.object.spec.containers", NULL,
		 "request.object.spec.containers is absent: a pod has at least one container"},
		{"request.object.spec.containers", "[]", "containers is an empty array"},
		{"request.object.spec.containers", "[null]",
		 "containers[0] is null, not an object"},
		{"request.object.spec.initContainers", "{}",
		 "request.object.spec.initContainers is an object, not an array"},
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		json_t *val =
			cases[i].value ? json_loads(cases[i].value, JSON_DECODE_ANY, NULL) : NULL;
		char *body = edited(good, cases[i].path, val);
		expect_unjudgeable(&f->fleet, body, cases[i].needle);
		free(body);
	}
	/* Judged as sent, the same review is refused: the cases above are not. */
	json_t *a;
	expect_refused(judge(&f->fleet, good, &a, NULL), "found 2, which is unexpected");
	json_decref(a);
	free(good);
}

/* A review of a workload whose pod template asks for `limits` on the shared node. */
static char *workload_review(const char *op, const char *group, const char *kind,
			     const char *wrap_open, const char *wrap_close, const char *limits,
			     const char *old_limits)
{
	struct strbuf sb = STRBUF_INIT;
	const char *tmpl =
		"{\"metadata\":{\"labels\":{\"app\":\"w\"}},\"spec\":{\"nodeSelector\":"
		"{\"nvidia.com/device-plugin.config\":\"shared\"},\"containers\":[{"
		"\"name\":\"work\",\"image\":\"pause\",\"resources\":{\"limits\":%s}}]}}";
	char *t = gs_xasprintf(tmpl, limits);
	char *ot = old_limits ? gs_xasprintf(tmpl, old_limits) : NULL;

	strbuf_addf(&sb,
		    "{\"apiVersion\":\"admission.k8s.io/v1\",\"kind\":\"AdmissionReview\","
		    "\"request\":{\"uid\":\"705ab4f5-6393-11e8-b7cc-42010a800002\","
		    "\"kind\":{\"group\":\"%s\",\"version\":\"v1\",\"kind\":\"%s\"},"
		    "\"namespace\":\"gpu-share\",\"operation\":\"%s\",",
		    group, kind, op);
	const char *api = *group ? (!strcmp(group, "apps") ? "apps/v1" : "batch/v1") : "v1";
	strbuf_addf(&sb,
		    "\"object\":{\"apiVersion\":\"%s\",\"kind\":\"%s\",\"metadata\":{\"name\":"
		    "\"w\",\"namespace\":\"gpu-share\"},%s%s%s}",
		    api, kind, wrap_open, t, wrap_close);
	if (ot)
		strbuf_addf(&sb,
			    ",\"oldObject\":{\"apiVersion\":\"%s\",\"kind\":\"%s\",\"metadata\":{"
			    "\"name\":\"w\",\"namespace\":\"gpu-share\"},%s%s%s}",
			    api, kind, wrap_open, ot, wrap_close);
	strbuf_addstr(&sb, "}}");
	free(t);
	free(ot);
	return strbuf_detach(&sb, NULL);
}

static void test_workloads(void **state)
{
	struct fx *f = *state;
	json_t *a;
	struct webhook_verdict v;
	char *body;

	/* A Deployment of two-slice pods: refused at its own creation. */
	body = workload_review("CREATE", "apps", "Deployment",
			       "\"spec\":{\"replicas\":3,\"template\":", "}",
			       "{\"nvidia.com/gpu\":\"2\"}", NULL);
	expect_refused(judge(&f->fleet, body, &a, NULL),
		       "the pods of Deployment w (spec.template): the pod can be scheduled to "
		       "lab-node-1, where container \"work\" asks for 2 nvidia.com/gpu");
	json_decref(a);
	free(body);

	/* The same in a CronJob, two templates deep. */
	body = workload_review("CREATE", "batch", "CronJob",
			       "\"spec\":{\"schedule\":\"* * * * *\",\"jobTemplate\":{\"spec\":{"
			       "\"template\":",
			       "}}}", "{\"nvidia.com/gpu\":\"2\"}", NULL);
	expect_refused(judge(&f->fleet, body, &a, NULL),
		       "the pods of CronJob w (spec.jobTemplate.spec.template)");
	json_decref(a);
	free(body);

	/* The apiserver's rules at the paths of the object as sent. */
	body = workload_review("CREATE", "apps", "StatefulSet", "\"spec\":{\"template\":", "}",
			       "{\"nvidia.com/gpu\":\"1.5\"}", NULL);
	expect_refused(judge(&f->fleet, body, &a, NULL),
		       "StatefulSet.apps \"w\" is invalid: "
		       "spec.template.spec.containers[0].resources.limits[nvidia.com/gpu]: Invalid "
		       "value: \"1500m\": must be an integer");
	json_decref(a);
	free(body);

	/* UPDATE with the template unchanged (a scale): never refused, not even judged. */
	body = workload_review("UPDATE", "apps", "Deployment", "\"spec\":{\"template\":", "}",
			       "{\"nvidia.com/gpu\":\"2\"}", "{\"nvidia.com/gpu\":\"2\"}");
	expect_allowed(judge(&f->fleet, body, &a, &v));
	assert_false(v.judged);
	webhook_verdict_release(&v);
	json_decref(a);
	free(body);

	/* UPDATE that changes the template to two slices: judged and refused. */
	body = workload_review("UPDATE", "apps", "Deployment", "\"spec\":{\"template\":", "}",
			       "{\"nvidia.com/gpu\":\"2\"}", "{\"nvidia.com/gpu\":\"1\"}");
	expect_refused(judge(&f->fleet, body, &a, NULL), "found 2, which is unexpected");
	json_decref(a);
	free(body);

	/* A workload without a template is not what the apiserver sends: not answered, and
	 * nothing leaks (fuzz). */
	static const char nospec[] =
		"{\"apiVersion\":\"admission.k8s.io/v1\",\"kind\":\"AdmissionReview\",\"request\":{"
		"\"uid\":\"705ab4f5-6393-11e8-b7cc-42010a800002\",\"kind\":{\"group\":\"apps\","
		"\"version\":\"v1\",\"kind\":\"Deployment\"},\"operation\":\"CREATE\",\"object\":{"
		"\"apiVersion\":\"apps/"
		"v1\",\"kind\":\"Deployment\",\"metadata\":{\"name\":\"w\"}}}}";
	expect_unjudgeable(&f->fleet, nospec, "request.object.spec.template.spec is absent");

	/* What deploy/webhook.yaml never sends for a workload, or an UPDATE without its old
	 * object: not answered. */
	body = workload_review("UPDATE", "apps", "Deployment", "\"spec\":{\"template\":", "}",
			       "{\"nvidia.com/gpu\":\"2\"}", "{\"nvidia.com/gpu\":\"2\"}");
	char *e = edited(body, "request.operation", json_string("DELETE"));
	expect_unjudgeable(&f->fleet, e, "request.operation is DELETE for a Deployment");
	free(e);
	e = edited(body, "request.oldObject", NULL);
	expect_unjudgeable(&f->fleet, e, "request.oldObject is absent");
	free(e);
	e = edited(body, "request.oldObject.kind", json_string("ReplicaSet"));
	expect_unjudgeable(&f->fleet, e,
			   "request.oldObject is apiVersion \"apps/v1\" kind "
			   "\"ReplicaSet\", but request.kind says apps/v1 Deployment");
	free(e);
	e = edited(body, "request.kind.version", json_string("v1beta1"));
	expect_unjudgeable(&f->fleet, e, "request.kind is apps/v1beta1 Deployment");
	free(e);
	e = edited(body, "request.subResource", json_string("scale"));
	expect_unjudgeable(&f->fleet, e, "request.subResource is \"scale\"");
	free(e);
	free(body);

	/* A good template passes. */
	body = workload_review("CREATE", "batch", "Job", "\"spec\":{\"template\":", "}",
			       "{\"nvidia.com/gpu\":\"1\"}", NULL);
	expect_allowed(judge(&f->fleet, body, &a, NULL));
	json_decref(a);
	free(body);
}

#define BOUND(node) "\"nodeName\":\"" node "\""

/* A refusal whose message holds every needle of a NULL-terminated list. */
static void expect_refused_all(const json_t *resp, const char *const *needles)
{
	for (; *needles; needles++)
		expect_refused(resp, *needles);
}

/*
 * spec.nodeName: the scheduler never sees the pod, the named node's kubelet
 * alone judges it, so only that node counts (not the time-sliced node the
 * pod cannot go to, not the whole-GPU node that would have saved it).
 */
static void test_bound_pod_judged_on_its_node(void **state)
{
	struct fx *f = *state;
	json_t *a;
	char *body;

	/* Two whole GPUs on the unshared node: allowed, lab-node-1's sharing is irrelevant. */
	body = review("CREATE", BOUND("lab-node-0"), GPU("2"));
	expect_allowed(judge(&f->fleet, body, &a, NULL));
	json_decref(a);
	free(body);

	/* One slice on the shared node, two MIG instances on the MIG node: allowed. */
	body = review("CREATE", BOUND("lab-node-1"), GPU("1"));
	expect_allowed(judge(&f->fleet, body, &a, NULL));
	json_decref(a);
	free(body);
	body = review("CREATE", BOUND("lab-node-2"),
		      "{\"limits\":{\"nvidia.com/mig-1g.10gb\":\"2\"}}");
	expect_allowed(judge(&f->fleet, body, &a, NULL));
	json_decref(a);
	free(body);

	/* nvidia.com/gpu on the MIG-only node: the kubelet would admit it with no GPU. */
	body = review("CREATE", BOUND("lab-node-2"), GPU("1"));
	expect_refused_all(
		judge(&f->fleet, body, &a, NULL),
		(const char *const[]){
			"the pod is bound to node lab-node-2 (spec.nodeName), which does not "
			"advertise nvidia.com/gpu: the kubelet admits the pod all the same",
			"removeMissingExtendedResources",
			"node lab-node-2: this node advertises profiles, not whole GPUs (MIG mixed "
			"strategy): nvidia.com/mig-1g.10gb=7; ask for one of those instead of "
			"nvidia.com/gpu",
			NULL});
	json_decref(a);
	free(body);

	/* Two slices on the shared node: the plugin's words, the bound node named. */
	body = review("CREATE", BOUND("lab-node-1"), GPU("2"));
	expect_refused_all(
		judge(&f->fleet, body, &a, NULL),
		(const char *const[]){
			"the pod is bound to node lab-node-1 (spec.nodeName), where container "
			"\"work\" asks for 2 nvidia.com/gpu, shared by time-slicing with "
			"failRequestsGreaterThanOne (config \"shared\")",
			"UnexpectedAdmissionError: Allocate failed due to rpc error: code = "
			"Unknown "
			"desc = invalid allocation request for \"nvidia.com/gpu\": invalid "
			"request: "
			"maximum request size for shared resources is 1; found 2, which is "
			"unexpected",
			NULL});
	assert_null(
		strstr(kobj_text(json_object_get(a, "response"), "status.message"), "lab-node-0"));
	json_decref(a);
	free(body);

	/* More GPUs than the bound node has: the device manager's words. */
	body = review("CREATE", BOUND("lab-node-0"), GPU("3"));
	expect_refused_all(
		judge(&f->fleet, body, &a, NULL),
		(const char *const[]){
			"the pod is bound to node lab-node-0 (spec.nodeName): container \"work\" "
			"asks for 3 nvidia.com/gpu, more than the node's 2 even with no other pod "
			"on it",
			"UnexpectedAdmissionError: Allocate failed due to requested number of "
			"devices unavailable for nvidia.com/gpu. Requested: 3, Available: 2, which "
			"is unexpected",
			NULL});
	assert_null(
		strstr(kobj_text(json_object_get(a, "response"), "status.message"), "lab-node-1"));
	json_decref(a);
	free(body);

	/* A node that does not exist: the pod would wait for pod GC. */
	body = review("CREATE", BOUND("lab-node-9"), GPU("1"));
	expect_refused(judge(&f->fleet, body, &a, NULL),
		       "spec.nodeName names node \"lab-node-9\", which does not exist: no kubelet "
		       "will run the pod");
	expect_refused(json_object_get(a, "response"), "DeletionByPodGC");
	json_decref(a);
	free(body);

	/* The same in a workload's template. */
	body = workload_review("CREATE", "apps", "Deployment", "\"spec\":{\"template\":", "}",
			       "{\"nvidia.com/gpu\":\"1\"}", NULL);
	char *e = edited(body, "request.object.spec.template.spec.nodeName",
			 json_string("lab-node-2"));
	expect_refused(judge(&f->fleet, e, &a, NULL),
		       "the pods of Deployment w (spec.template): the pod is bound to node "
		       "lab-node-2 (spec.nodeName), which does not advertise nvidia.com/gpu");
	json_decref(a);
	free(e);
	free(body);
}

/* Containers in order, as the device manager hands devices out (init devices reused). */
static void test_bound_pod_containers(void **state)
{
	struct fx *f = *state;
	char *base = review("CREATE", BOUND("lab-node-0"), GPU("1"));
	json_t *a;
	char *body;

	/* 1 then 2 whole GPUs of 2: the second container finds 1 left. */
	body = edited(base, "request.object.spec.containers",
		      json_pack("[{s:s,s:{s:{s:s}}},{s:s,s:{s:{s:s}}}]", "name", "a", "resources",
				"limits", "nvidia.com/gpu", "1", "name", "b", "resources", "limits",
				"nvidia.com/gpu", "2"));
	expect_refused_all(judge(&f->fleet, body, &a, NULL),
			   (const char *const[]){
				   "container \"b\" asks for 2 nvidia.com/gpu, and the containers "
				   "before it leave 1 of the node's 2",
				   "Requested: 2, Available: 1, which is unexpected", NULL});
	json_decref(a);
	free(body);

	/* An init container's 2 GPUs are reused by the app container's 2: it fits. */
	body = edited(base, "request.object.spec.initContainers",
		      json_pack("[{s:s,s:{s:{s:s}}}]", "name", "init", "resources", "limits",
				"nvidia.com/gpu", "2"));
	char *both = edited(body, "request.object.spec.containers",
			    json_pack("[{s:s,s:{s:{s:s}}}]", "name", "a", "resources", "limits",
				      "nvidia.com/gpu", "2"));
	expect_allowed(judge(&f->fleet, both, &a, NULL));
	json_decref(a);
	free(both);
	free(body);

	/* A sidecar keeps its GPU: the app container reuses the plain init container's 1 only. */
	body = edited(base, "request.object.spec.initContainers",
		      json_pack("[{s:s,s:s,s:{s:{s:s}}},{s:s,s:{s:{s:s}}}]", "name", "side",
				"restartPolicy", "Always", "resources", "limits", "nvidia.com/gpu",
				"1", "name", "init", "resources", "limits", "nvidia.com/gpu", "1"));
	both = edited(body, "request.object.spec.containers",
		      json_pack("[{s:s,s:{s:{s:s}}}]", "name", "a", "resources", "limits",
				"nvidia.com/gpu", "2"));
	expect_refused_all(judge(&f->fleet, both, &a, NULL),
			   (const char *const[]){
				   "container \"a\" asks for 2 nvidia.com/gpu, and the containers "
				   "before it leave 0 of the node's 2 besides the 1 it takes over "
				   "from an init container",
				   "Requested: 1, Available: 0, which is unexpected", NULL});
	json_decref(a);
	free(both);
	free(body);
	free(base);
}

/* A resource the bound node shows at 0 (its plugin gone): the kubelet's predicate refuses. */
static void test_bound_pod_resource_at_zero(void **state)
{
	struct fx *f = *state;
	json_t *nodes = json_deep_copy(f->nodes), *n;
	size_t i;

	json_array_foreach (json_object_get(nodes, "items"), i, n)
		if (!strcmp(kobj_text(n, "metadata.name"), "lab-node-0"))
			json_object_set_new(
				json_object_get(json_object_get(n, "status"), "allocatable"),
				"nvidia.com/gpu", json_string("0"));
	struct webhook_fleet fl = {.nodes = nodes, .configs = f->set, .cat = f->cat};
	char *body = review("CREATE", BOUND("lab-node-0"), GPU("1"));
	json_t *a;

	expect_refused(judge(&fl, body, &a, NULL),
		       "the pod is bound to node lab-node-0 (spec.nodeName), which shows "
		       "nvidia.com/gpu at 0 (no device plugin serves it there now): the kubelet "
		       "refuses it, the pod fails with OutOfnvidia.com/gpu: Node didn't have "
		       "enough resource: nvidia.com/gpu, requested: 1, used: 0, capacity: 0");
	json_decref(a);
	free(body);
	json_decref(nodes);
}

static void test_no_fleet_and_no_node_selected(void **state)
{
	struct fx *f = *state;
	struct webhook_fleet none = {.nodes = NULL, .configs = NULL, .cat = f->cat};
	char *body = review("CREATE", SHARED_SEL, GPU("2"));
	char *nowhere = review("CREATE", "\"nodeSelector\":{\"zone\":\"nowhere\"}", GPU("2"));
	json_t *a;

	const json_t *r = judge(&none, body, &a, NULL);
	expect_allowed(r);
	assert_non_null(strstr(json_string_value(json_array_get(json_object_get(r, "warnings"), 0)),
			       "the node list is not known yet"));
	json_decref(a);

	/* No node selected: the scheduler keeps it Pending; admitted with a warning. */
	r = judge(&f->fleet, nowhere, &a, NULL);
	expect_allowed(r);
	assert_non_null(strstr(json_string_value(json_array_get(json_object_get(r, "warnings"), 0)),
			       "no node matches"));
	json_decref(a);
	free(body);
	free(nowhere);
}

static void test_bad_reviews(void **state)
{
	struct fx *f = *state;
	struct gs_error err;
	json_t *a = NULL;
	static const char *const bad[] = {
		"not json",
		"{\"apiVersion\":\"admission.k8s.io/v1beta1\",\"kind\":\"AdmissionReview\","
		"\"request\":{\"uid\":\"x\"}}",
		"{\"apiVersion\":\"admission.k8s.io/v1\",\"kind\":\"AdmissionReview\","
		"\"request\":{}}",
		"{\"apiVersion\":\"admission.k8s.io/v1\",\"kind\":\"AdmissionReview\"}",
		"[]",
	};

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		assert_int_equal(webhook_review(&f->fleet, bad[i], strlen(bad[i]), &a, NULL, &err),
				 -1);
		assert_null(a);
		assert_true(err.msg[0] != '\0');
	}
	assert_int_equal(webhook_review(&f->fleet, "{}", WEBHOOK_MAX_BODY + 1, &a, NULL, &err), -1);
	assert_non_null(strstr(err.msg, "more than"));

	/* A quantity that does not parse cannot be judged: an error, never a crash. */
	char *body = review("CREATE", "", "{\"limits\":{\"nvidia.com/gpu\":\"two\"}}");
	assert_int_equal(webhook_review(&f->fleet, body, strlen(body), &a, NULL, &err), -1);
	assert_non_null(strstr(err.msg, "nvidia.com/gpu"));
	free(body);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_two_slices_on_shared_node),
		cmocka_unit_test(test_two_slices_anywhere_names_the_alternative),
		cmocka_unit_test(test_two_whole_gpus_allowed),
		cmocka_unit_test(test_one_slice_allowed),
		cmocka_unit_test(test_two_slices_without_configmap),
		cmocka_unit_test(test_gpu_on_mig_node_names_profiles),
		cmocka_unit_test(test_profile_no_node_advertises),
		cmocka_unit_test(test_unadvertised_names_apart),
		cmocka_unit_test(test_api_rules),
		cmocka_unit_test(test_unjudgeable),
		cmocka_unit_test(test_workloads),
		cmocka_unit_test(test_bound_pod_judged_on_its_node),
		cmocka_unit_test(test_bound_pod_containers),
		cmocka_unit_test(test_bound_pod_resource_at_zero),
		cmocka_unit_test(test_no_fleet_and_no_node_selected),
		cmocka_unit_test(test_bad_reviews),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
