/*
 * fleet workloads: the pods each controller would create on apply
 * (k8s.io/kubernetes v1.34 pkg/controller): Deployment and ReplicaSet
 * replicas, StatefulSet ordinals, the job controller's parallelism capped
 * by completions, one Job of a CronJob, a DaemonSet's pod per node the
 * daemonset controller judges, and what the apiserver refuses of them.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fleet/fleet.h"
#include "fleet/workloads.h"
#include "model/kobj.h"
#include "yaml/ydoc.h"

/* A fleet read from YAML text (the stream named "w.yaml"). */
static void load(struct fleet *f, const char *yaml)
{
	struct ydoc_stream *s = NULL;
	struct ydoc_pos none = {0, 0};
	struct gs_error err;

	fleet_init(f);
	if (ydoc_load_buffer("w.yaml", yaml, strlen(yaml), none, &ydoc_default_limits, &s, &err) <
		    0 ||
	    fleet_add_stream(f, s, &err) < 0)
		fail_msg("load: %s:%d:%d: %s", err.file, err.line, err.col, err.msg);
}

/* "ns/name ns/name ..." of an array of pods. */
static char *names(const json_t *pods)
{
	char *s = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&s, &len);
	const json_t *p;
	size_t i;

	json_array_foreach (pods, i, p)
		fprintf(m, "%s%s/%s", i ? " " : "", kobj_text(p, "metadata.namespace"),
			kobj_text(p, "metadata.name"));
	fclose(m);
	return s;
}

/* The pods of the fleet's first workload, judged against its nodes (as read). */
static json_t *pods_of(struct fleet *f)
{
	json_t *out = json_array();
	struct gs_error err;

	if (fleet_workload_pods(f, json_array_get(f->workloads, 0), f->nodes, out, &err) < 0)
		fail_msg("fleet_workload_pods: %s:%d:%d: %s", err.file, err.line, err.col, err.msg);
	return out;
}

static void expect_pods(const char *yaml, const char *want)
{
	struct fleet f;
	json_t *pods;
	char *got;

	load(&f, yaml);
	pods = pods_of(&f);
	got = names(pods);
	assert_string_equal(got, want);
	free(got);
	json_decref(pods);
	fleet_release(&f);
}

/* The error of expanding the first workload: "line:col: message". */
static void expect_error(const char *yaml, const char *want)
{
	struct fleet f;
	json_t *out = json_array();
	struct gs_error err;
	char got[1200];

	load(&f, yaml);
	assert_int_equal(
		fleet_workload_pods(&f, json_array_get(f.workloads, 0), f.nodes, out, &err), -1);
	snprintf(got, sizeof(got), "%d:%d: %s", err.line, err.col, err.msg);
	assert_string_equal(got, want);
	json_decref(out);
	fleet_release(&f);
}

#define TEMPLATE                                                                                   \
	"  template:\n"                                                                            \
	"    metadata: {labels: {app: a}, annotations: {note: kept}}\n"                            \
	"    spec:\n"                                                                              \
	"      containers:\n"                                                                      \
	"      - name: c\n"                                                                        \
	"        resources: {limits: {nvidia.com/gpu: 1}}\n"

/*
 * Deployment: replicas (default 1), NAME-HASH-i, the template's labels plus
 * pod-template-hash. The hash of this template, FNV-32a of its JSON with
 * sorted keys (1288610201) written with the apiserver's SafeEncodeString
 * alphabet, worked out by hand in Python: 56ddb54645.
 */
static void deployment(void **state)
{
	struct fleet f;
	json_t *pods;

	(void)state;
	expect_pods("kind: Deployment\nmetadata: {name: d, namespace: t}\nspec:\n"
		    "  selector: {matchLabels: {app: a}}\n" TEMPLATE,
		    "t/d-56ddb54645-0");
	load(&f, "kind: Deployment\nmetadata: {name: web}\nspec:\n  replicas: 3\n"
		 "  selector: {matchLabels: {app: a}}\n" TEMPLATE);
	pods = pods_of(&f);
	assert_int_equal(json_array_size(pods), 3);
	const json_t *p = json_array_get(pods, 2);
	const char *hash = kobj_label(p, "pod-template-hash");
	assert_non_null(hash);
	char want[64];
	snprintf(want, sizeof(want), "web-%s-2", hash);
	assert_string_equal(kobj_text(p, "metadata.name"), want);
	/* The hash is the apiserver-safe alphabet's, as the controller writes it. */
	assert_true(strspn(hash, "bcdfghjklmnpqrstvwxz2456789") == strlen(hash));
	assert_string_equal(kobj_text(p, "metadata.namespace"), "default");
	assert_string_equal(kobj_label(p, "app"), "a");
	assert_string_equal(kobj_annotation(p, "note"), "kept");
	assert_string_equal(kobj_text(json_array_get(kobj_get(p, "spec.containers"), 0), "name"),
			    "c");
	assert_string_equal(kobj_text(p, "kind"), "Pod");
	json_decref(pods);
	fleet_release(&f);
	expect_pods("kind: Deployment\nmetadata: {name: d}\nspec:\n  replicas: 0\n"
		    "  selector: {matchLabels: {app: a}}\n" TEMPLATE,
		    "");
}

/* ReplicaSet and ReplicationController: NAME-i; an RC's selector is a map, defaulted. */
static void replicasets(void **state)
{
	(void)state;
	expect_pods("kind: ReplicaSet\nmetadata: {name: rs, namespace: t}\nspec:\n  replicas: 2\n"
		    "  selector: {matchExpressions: [{key: app, operator: In, values: [a, b]}]}\n"
		    "" TEMPLATE,
		    "t/rs-0 t/rs-1");
	expect_pods("kind: ReplicationController\nmetadata: {name: rc}\nspec:\n  replicas: "
		    "2\n" TEMPLATE,
		    "default/rc-0 default/rc-1");
	expect_error("kind: ReplicationController\nmetadata: {name: rc}\nspec:\n"
		     "  selector: {app: b}\n" TEMPLATE,
		     "6:24: spec.template.metadata.labels: Invalid value: `selector` does not "
		     "match template `labels`");
}

/* StatefulSet: NAME-0..N-1 from spec.ordinals.start, the controller's labels. */
static void statefulset(void **state)
{
	struct fleet f;
	json_t *pods;

	(void)state;
	expect_pods("kind: StatefulSet\nmetadata: {name: s, namespace: t}\nspec:\n  replicas: 2\n"
		    "  selector: {matchLabels: {app: a}}\n" TEMPLATE,
		    "t/s-0 t/s-1");
	load(&f, "kind: StatefulSet\nmetadata: {name: s}\nspec:\n  replicas: 3\n"
		 "  ordinals: {start: 5}\n  selector: {matchLabels: {app: a}}\n" TEMPLATE);
	pods = pods_of(&f);
	char *got = names(pods);
	assert_string_equal(got, "default/s-5 default/s-6 default/s-7");
	free(got);
	assert_string_equal(
		kobj_label(json_array_get(pods, 1), "statefulset.kubernetes.io/pod-name"), "s-6");
	assert_string_equal(kobj_label(json_array_get(pods, 1), "apps.kubernetes.io/pod-index"),
			    "6");
	json_decref(pods);
	fleet_release(&f);
}

/* Job: parallelism (default 1), at most completions; suspended or parallelism 0: none. */
static void job(void **state)
{
	(void)state;
	expect_pods("kind: Job\nmetadata: {name: j}\nspec:\n" TEMPLATE, "default/j-0");
	expect_pods("kind: Job\nmetadata: {name: j}\nspec:\n  parallelism: 3\n" TEMPLATE,
		    "default/j-0 default/j-1 default/j-2");
	expect_pods("kind: Job\nmetadata: {name: j}\nspec:\n  parallelism: 5\n  completions: 2\n"
		    "" TEMPLATE,
		    "default/j-0 default/j-1");
	expect_pods("kind: Job\nmetadata: {name: j}\nspec:\n  parallelism: 2\n  completions: 9\n"
		    "" TEMPLATE,
		    "default/j-0 default/j-1");
	expect_pods("kind: Job\nmetadata: {name: j}\nspec:\n  parallelism: 0\n" TEMPLATE, "");
	expect_pods("kind: Job\nmetadata: {name: j}\nspec:\n  suspend: true\n  parallelism: 4\n"
		    "" TEMPLATE,
		    "");
	struct fleet f;
	load(&f, "kind: Job\nmetadata: {name: j}\nspec:\n" TEMPLATE);
	json_t *pods = pods_of(&f);
	assert_string_equal(kobj_label(json_array_get(pods, 0), "job-name"), "j");
	assert_string_equal(kobj_label(json_array_get(pods, 0), "batch.kubernetes.io/job-name"),
			    "j");
	json_decref(pods);
	fleet_release(&f);
}

/* CronJob: one Job's worth of spec.jobTemplate; suspended: none. */
static void cronjob(void **state)
{
	(void)state;
	expect_pods("kind: CronJob\nmetadata: {name: c, namespace: t}\nspec:\n"
		    "  schedule: '*/5 * * * *'\n  jobTemplate:\n    spec:\n      parallelism: 3\n"
		    "      completions: 2\n      template:\n"
		    "        spec: {containers: [{name: c}]}\n",
		    "t/c-0 t/c-1");
	expect_pods("kind: CronJob\nmetadata: {name: c}\nspec:\n  suspend: true\n"
		    "  jobTemplate:\n    spec:\n      template:\n"
		    "        spec: {containers: [{name: c}]}\n",
		    "");
	expect_error("kind: CronJob\nmetadata: {name: c}\nspec: {schedule: x}\n",
		     "1:1: CronJob c: spec.jobTemplate.spec: Required value");
}

#define NODES                                                                                      \
	"kind: Node\nmetadata: {name: gpu-a, labels: {gpu: 'yes'}}\n---\n"                         \
	"kind: Node\nmetadata: {name: gpu-tainted, labels: {gpu: 'yes'}}\n"                        \
	"spec: {taints: [{key: dedicated, value: ml, effect: NoSchedule}]}\n---\n"                 \
	"kind: Node\nmetadata: {name: cpu, labels: {gpu: 'no'}}\n---\n"                            \
	"kind: Node\nmetadata: {name: gpu-cordoned, labels: {gpu: 'yes'}}\n"                       \
	"spec:\n  unschedulable: true\n"                                                           \
	"  taints: [{key: node.kubernetes.io/unschedulable, effect: NoSchedule},\n"                \
	"           {key: node.kubernetes.io/not-ready, effect: NoExecute}]\n---\n"                \
	"kind: Node\nmetadata: {name: gpu-soft, labels: {gpu: 'yes'}}\n"                           \
	"spec: {taints: [{key: x, effect: PreferNoSchedule}]}\n---\n"

/*
 * DaemonSet: a pod per node whose labels its nodeSelector and required
 * affinity select and whose NoSchedule/NoExecute taints it tolerates, with
 * the tolerations the controller adds (unschedulable, not-ready, ...);
 * PreferNoSchedule does not keep it away. Each pod gets the required
 * affinity to its node the controller writes.
 */
static void daemonset(void **state)
{
	struct fleet f;
	json_t *pods;

	(void)state;
	expect_pods(NODES "kind: DaemonSet\nmetadata: {name: ds, namespace: t}\nspec:\n"
			  "  selector: {matchLabels: {app: a}}\n" TEMPLATE,
		    "t/ds-gpu-a t/ds-cpu t/ds-gpu-cordoned t/ds-gpu-soft");
	expect_pods(NODES "kind: DaemonSet\nmetadata: {name: ds}\nspec:\n"
			  "  selector: {matchLabels: {app: a}}\n"
			  "  template:\n    metadata: {labels: {app: a}}\n    spec:\n"
			  "      nodeSelector: {gpu: 'yes'}\n"
			  "      tolerations: [{key: dedicated, operator: Equal, value: ml}]\n"
			  "      containers: [{name: c}]\n",
		    "default/ds-gpu-a default/ds-gpu-tainted default/ds-gpu-cordoned "
		    "default/ds-gpu-soft");
	expect_pods(
		NODES
		"kind: DaemonSet\nmetadata: {name: ds}\nspec:\n"
		"  selector: {matchLabels: {app: a}}\n"
		"  template:\n    metadata: {labels: {app: a}}\n    spec:\n"
		"      affinity:\n        nodeAffinity:\n"
		"          requiredDuringSchedulingIgnoredDuringExecution:\n"
		"            nodeSelectorTerms:\n"
		"            - matchExpressions: [{key: gpu, operator: NotIn, values: ['yes']}]\n"
		"      containers: [{name: c}]\n",
		"default/ds-cpu");
	load(&f, NODES "kind: DaemonSet\nmetadata: {name: ds}\nspec:\n"
		       "  selector: {matchLabels: {app: a}}\n"
		       "  template:\n    metadata: {labels: {app: a}}\n    spec:\n"
		       "      hostNetwork: true\n"
		       "      nodeSelector: {gpu: 'no'}\n"
		       "      affinity:\n        nodeAffinity:\n"
		       "          requiredDuringSchedulingIgnoredDuringExecution:\n"
		       "            nodeSelectorTerms:\n"
		       "            - matchExpressions: [{key: gpu, operator: Exists}]\n"
		       "      containers: [{name: c}]\n");
	pods = pods_of(&f);
	assert_int_equal(json_array_size(pods), 1);
	const json_t *spec = kobj_get(json_array_get(pods, 0), "spec");
	char *aff = json_dumps(kobj_get(spec, "affinity.nodeAffinity"), JSON_COMPACT);
	assert_string_equal(aff,
			    "{\"requiredDuringSchedulingIgnoredDuringExecution\":"
			    "{\"nodeSelectorTerms\":[{\"matchFields\":[{\"key\":\"metadata.name\","
			    "\"operator\":\"In\",\"values\":[\"cpu\"]}]}]}}");
	free(aff);
	char *tols = json_dumps(json_object_get(spec, "tolerations"), JSON_COMPACT);
	assert_non_null(strstr(tols, "{\"key\":\"node.kubernetes.io/unschedulable\","
				     "\"operator\":\"Exists\",\"effect\":\"NoSchedule\"}"));
	assert_non_null(strstr(tols, "{\"key\":\"node.kubernetes.io/network-unavailable\","
				     "\"operator\":\"Exists\",\"effect\":\"NoSchedule\"}"));
	assert_non_null(strstr(tols, "{\"key\":\"node.kubernetes.io/not-ready\","
				     "\"operator\":\"Exists\",\"effect\":\"NoExecute\"}"));
	free(tols);
	json_decref(pods);
	fleet_release(&f);
	/* No node: no pod. */
	expect_pods("kind: DaemonSet\nmetadata: {name: ds}\nspec:\n"
		    "  selector: {matchLabels: {app: a}}\n" TEMPLATE,
		    "");
}

/* What the apiserver refuses of a workload, at its file:line:col. */
static void refused(void **state)
{
	(void)state;
	expect_error("kind: Deployment\nmetadata: {name: d}\nspec:\n" TEMPLATE,
		     "1:1: Deployment d: spec.selector: Required value");
	expect_error("kind: Deployment\nmetadata: {name: d}\nspec:\n  selector: {}\n" TEMPLATE,
		     "4:13: spec.selector: Invalid value: an empty selector selects every pod (the "
		     "apiserver refuses it)");
	expect_error("kind: StatefulSet\nmetadata: {name: s}\nspec:\n"
		     "  selector: {matchLabels: {app: b}}\n" TEMPLATE,
		     "6:24: spec.template.metadata.labels: Invalid value: `selector` does not "
		     "match template `labels`");
	expect_error("kind: Deployment\nmetadata: {name: d}\nspec:\n  replicas: two\n"
		     "  selector: {matchLabels: {app: a}}\n" TEMPLATE,
		     "4:13: spec.replicas: expected a whole number >= 0, got a string");
	expect_error("kind: Job\nmetadata: {name: j}\nspec:\n  parallelism: -1\n" TEMPLATE,
		     "4:16: spec.parallelism: expected a whole number >= 0, got an integer");
	expect_error("kind: ReplicaSet\nmetadata: {name: r}\nspec:\n  replicas: 100001\n"
		     "  selector: {matchLabels: {app: a}}\n" TEMPLATE,
		     "4:13: spec.replicas: 100001 pods, more than 100000 from one workload");
	expect_error("kind: Job\nmetadata: {name: j}\nspec: {parallelism: 1}\n",
		     "1:1: Job j: spec.template: Required value");
	expect_error("kind: Job\nmetadata: {name: j}\nspec:\n  template: {metadata: {}}\n",
		     "4:13: spec.template.spec: Required value");
	expect_error("kind: Job\nmetadata: {name: j}\nspec:\n  template:\n    spec:\n"
		     "      containers:\n      - name: c\n"
		     "        resources: {requests: {cpu: lots}}\n",
		     "8:37: requests cpu: quantities must match the regular expression "
		     "'^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'");
}

/*
 * fleet_pods: bare Pods and workloads' pods in reading order; pods recorded
 * (status, uid) are already there, a Pod to create with spec.nodeName is
 * not; a workload recorded from a cluster (uid) made its pods already; two
 * pods of one name are refused.
 */
static void pods_in_reading_order(void **state)
{
	struct fleet f;
	json_t *existing, *batch;
	struct gs_error err;
	char *got;

	(void)state;
	load(&f, "kind: Pod\nmetadata: {name: first, namespace: t}\nspec: {containers: []}\n---\n"
		 "kind: Job\nmetadata: {name: j, namespace: t}\nspec:\n  parallelism: 2\n" TEMPLATE
		 "---\n"
		 "kind: Pod\nmetadata: {name: pinned, namespace: t}\n"
		 "spec: {nodeName: node-1, containers: []}\n---\n"
		 "kind: Pod\nmetadata: {name: bound, namespace: t}\n"
		 "spec: {nodeName: node-1, containers: []}\nstatus: {phase: Running}\n---\n"
		 "kind: Pod\nmetadata: {name: pending, namespace: t}\nspec: {containers: []}\n"
		 "status: {phase: Pending}\n---\n"
		 "kind: Pod\nmetadata: {name: created, namespace: t, uid: u-1}\n"
		 "spec: {containers: []}\n---\n"
		 "kind: Deployment\nmetadata: {name: old, uid: u-1234}\nspec:\n"
		 "  selector: {matchLabels: {app: a}}\n" TEMPLATE "---\n"
		 "kind: Pod\nmetadata: {name: last, namespace: t}\nspec: {containers: []}\n");
	assert_int_equal(fleet_pods(&f, NULL, &existing, &batch, &err), 0);
	got = names(batch);
	assert_string_equal(got, "t/first t/j-0 t/j-1 t/pinned t/last");
	free(got);
	got = names(json_object_get(existing, "items"));
	assert_string_equal(got, "t/bound t/pending t/created");
	free(got);
	json_decref(existing);
	json_decref(batch);
	fleet_release(&f);

	load(&f, "kind: Pod\nmetadata: {name: s-0}\nspec: {containers: []}\n---\n"
		 "kind: StatefulSet\nmetadata: {name: s}\nspec:\n"
		 "  selector: {matchLabels: {app: a}}\n" TEMPLATE);
	assert_int_equal(fleet_pods(&f, NULL, &existing, &batch, &err), -1);
	assert_string_equal(err.msg,
			    "pod default/s-0 of StatefulSet s at w.yaml:5:1: a pod of that "
			    "name is there already (the Pod at w.yaml:1:1)");
	fleet_release(&f);
}

/* The resources of container i of a pod, as compact JSON. */
static char *resources(const json_t *pod, const char *list, size_t i)
{
	const json_t *r = json_object_get(json_array_get(kobj_get(pod, list), i), "resources");

	return r ? json_dumps(r, JSON_COMPACT | JSON_SORT_KEYS) : strdup("null");
}

static void expect_resources(const json_t *pod, const char *list, size_t i, const char *want)
{
	char *got = resources(pod, list, i);
	assert_string_equal(got, want);
	free(got);
}

#define LIMITRANGE                                                                                 \
	"kind: LimitRange\nmetadata: {name: lr, namespace: t}\nspec:\n  limits:\n"                 \
	"  - type: Container\n    default: {cpu: '2', memory: 1Gi}\n"                              \
	"    defaultRequest: {cpu: 500m}\n"                                                        \
	"  - type: Pod\n    max: {cpu: '64'}\n---\n"

/*
 * LimitRanger: a missing limit from `default`, a missing request from
 * `defaultRequest`, a request the container's own limit gives first (the
 * apiserver's defaulting), init containers too; Pod items give no default;
 * another namespace is left alone.
 */
static void limitranger_defaults(void **state)
{
	struct fleet f;
	json_t *pod;

	(void)state;
	load(&f, LIMITRANGE
	     "kind: Pod\nmetadata: {name: p, namespace: t}\nspec:\n"
	     "  initContainers: [{name: i}]\n"
	     "  containers:\n"
	     "  - name: bare\n"
	     "  - name: limit-only\n"
	     "    resources: {limits: {cpu: '1'}}\n"
	     "  - name: own\n"
	     "    resources: {requests: {cpu: 100m, memory: 64Mi}, limits: {memory: 2Gi}}\n"
	     "---\n"
	     "kind: Pod\nmetadata: {name: q, namespace: other}\nspec:\n"
	     "  containers: [{name: c}]\n");
	pod = json_deep_copy(json_array_get(f.pods, 0));
	assert_true(fleet_limitranges_apply(&f, pod));
	expect_resources(
		pod, "spec.containers", 0,
		"{\"limits\":{\"cpu\":\"2\",\"memory\":\"1Gi\"},\"requests\":{\"cpu\":\"500m\","
		"\"memory\":\"1Gi\"}}");
	expect_resources(
		pod, "spec.containers", 1,
		"{\"limits\":{\"cpu\":\"1\",\"memory\":\"1Gi\"},\"requests\":{\"cpu\":\"1\","
		"\"memory\":\"1Gi\"}}");
	expect_resources(
		pod, "spec.containers", 2,
		"{\"limits\":{\"cpu\":\"2\",\"memory\":\"2Gi\"},\"requests\":{\"cpu\":\"100m\","
		"\"memory\":\"64Mi\"}}");
	expect_resources(
		pod, "spec.initContainers", 0,
		"{\"limits\":{\"cpu\":\"2\",\"memory\":\"1Gi\"},\"requests\":{\"cpu\":\"500m\","
		"\"memory\":\"1Gi\"}}");
	json_decref(pod);
	pod = json_deep_copy(json_array_get(f.pods, 1));
	assert_false(fleet_limitranges_apply(&f, pod));
	expect_resources(pod, "spec.containers", 0, "null");
	json_decref(pod);
	fleet_release(&f);
}

/*
 * A LimitRange item as the apiserver stores it: max gives a missing
 * default, default and then min a missing defaultRequest; of two
 * LimitRanges the first sets a key and the second only what is left.
 */
static void limitranger_item_defaults(void **state)
{
	struct fleet f;
	json_t *pod;

	(void)state;
	load(&f, "kind: LimitRange\nmetadata: {name: a, namespace: t}\nspec:\n  limits:\n"
		 "  - type: Container\n    max: {cpu: '4'}\n    min: {memory: 32Mi}\n---\n"
		 "kind: LimitRange\nmetadata: {name: b, namespace: t}\nspec:\n  limits:\n"
		 "  - type: Container\n    default: {cpu: '1', ephemeral-storage: 1Gi}\n---\n"
		 "kind: Pod\nmetadata: {name: p, namespace: t}\nspec: {containers: [{name: c}]}\n");
	pod = json_deep_copy(json_array_get(f.pods, 0));
	assert_true(fleet_limitranges_apply(&f, pod));
	expect_resources(
		pod, "spec.containers", 0,
		"{\"limits\":{\"cpu\":\"4\",\"ephemeral-storage\":\"1Gi\"},"
		"\"requests\":{\"cpu\":\"4\",\"ephemeral-storage\":\"1Gi\",\"memory\":\"32Mi\"}}");
	json_decref(pod);
	fleet_release(&f);
}

/* fleet_pods applies them to the pods to create, never to those already there or as read. */
static void limitranger_in_fleet_pods(void **state)
{
	struct fleet f;
	json_t *existing, *batch;
	struct gs_error err;

	(void)state;
	load(&f, LIMITRANGE "kind: Pod\nmetadata: {name: p, namespace: t}\n"
			    "spec: {containers: [{name: c}]}\n---\n"
			    "kind: Pod\nmetadata: {name: there, namespace: t}\n"
			    "spec: {nodeName: node-1, containers: [{name: c}]}\n"
			    "status: {phase: Running}\n---\n"
			    "kind: Job\nmetadata: {name: j, namespace: t}\nspec:\n"
			    "  template: {spec: {containers: [{name: c}]}}\n");
	assert_int_equal(fleet_pods(&f, NULL, &existing, &batch, &err), 0);
	assert_int_equal(json_array_size(batch), 2);
	expect_resources(
		json_array_get(batch, 0), "spec.containers", 0,
		"{\"limits\":{\"cpu\":\"2\",\"memory\":\"1Gi\"},\"requests\":{\"cpu\":\"500m\","
		"\"memory\":\"1Gi\"}}");
	expect_resources(
		json_array_get(batch, 1), "spec.containers", 0,
		"{\"limits\":{\"cpu\":\"2\",\"memory\":\"1Gi\"},\"requests\":{\"cpu\":\"500m\","
		"\"memory\":\"1Gi\"}}");
	expect_resources(json_array_get(json_object_get(existing, "items"), 0), "spec.containers",
			 0, "null");
	expect_resources(json_array_get(f.pods, 0), "spec.containers", 0, "null");
	json_decref(existing);
	json_decref(batch);
	fleet_release(&f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(deployment),
		cmocka_unit_test(replicasets),
		cmocka_unit_test(statefulset),
		cmocka_unit_test(job),
		cmocka_unit_test(cronjob),
		cmocka_unit_test(daemonset),
		cmocka_unit_test(refused),
		cmocka_unit_test(pods_in_reading_order),
		cmocka_unit_test(limitranger_defaults),
		cmocka_unit_test(limitranger_item_defaults),
		cmocka_unit_test(limitranger_in_fleet_pods),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
