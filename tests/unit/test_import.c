#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/advertise.h"
#include "engine/mergepatch.h"
#include "engine/sync_plan.h"
#include "fleet/import.h"
#include "model/kobj.h"
#include "model/names.h"
#include "model/nodehw.h"

/*
 * import reads GFD's labels back into gpushare's declarations. The round
 * trip below is the contract: a node declared to gpushare, advertised
 * (sync_plan + its merge patch: what a real node shows, docs/guide/advertise.md
 * names each label's upstream source), stripped of gpushare's annotations,
 * imported, must give back the declaration and a check with no difference.
 */

static const struct catalog *cat(void)
{
	const struct catalog *c;
	struct gs_error err;

	if (catalog_builtin(&c, &err))
		fail_msg("catalog: %s", err.msg);
	return c;
}

static struct ydoc_stream *load(const char *name, const char *text)
{
	struct ydoc_stream *s;
	struct gs_error err;

	if (ydoc_load_buffer(name, text, strlen(text), (struct ydoc_pos){0, 0},
			     &ydoc_default_limits, &s, &err))
		fail_msg("yaml: %s", err.msg);
	return s;
}

static const char CM[] = "apiVersion: v1\n"
			 "kind: ConfigMap\n"
			 "metadata: {name: device-plugin-configs, namespace: gpu-operator}\n"
			 "data:\n"
			 "  none: |-\n"
			 "    version: v1\n"
			 "    flags: {migStrategy: none}\n"
			 "  mixed: |-\n"
			 "    version: v1\n"
			 "    flags: {migStrategy: mixed}\n"
			 "  single: |-\n"
			 "    version: v1\n"
			 "    flags: {migStrategy: single}\n"
			 "  ts4: |-\n"
			 "    version: v1\n"
			 "    sharing:\n"
			 "      timeSlicing:\n"
			 "        resources: [{name: nvidia.com/gpu, replicas: 4}]\n"
			 "  rename: |-\n"
			 "    version: v1\n"
			 "    sharing:\n"
			 "      timeSlicing:\n"
			 "        renameByDefault: true\n"
			 "        resources: [{name: nvidia.com/gpu, replicas: 2}]\n"
			 "  mps: |-\n"
			 "    version: v1\n"
			 "    sharing:\n"
			 "      mps:\n"
			 "        resources: [{name: nvidia.com/gpu, replicas: 3}]\n"
			 "  mixed-ts: |-\n"
			 "    version: v1\n"
			 "    flags: {migStrategy: mixed}\n"
			 "    sharing:\n"
			 "      timeSlicing:\n"
			 "        resources: [{name: nvidia.com/mig-1g.10gb, replicas: 2}]\n";

static json_t *configmap(struct ydoc_stream **s)
{
	*s = load("cm.yaml", CM);
	return ydoc_stream_doc(*s, 0);
}

/* One declared node: model, count, config key, layout (NULL: none). */
struct declared {
	const char *product, *count, *config, *layout, *driver, *machine;
};

static json_t *declared_node(const char *name, const struct declared *d)
{
	json_t *n = json_pack("{s:s,s:s,s:{s:s,s:{s:s},s:{s:s,s:s}},s:{s:{s:s,s:s,s:s},"
			      "s:{s:s,s:s,s:s}}}",
			      "apiVersion", "v1", "kind", "Node", "metadata", "name", name,
			      "labels", "kubernetes.io/hostname", name, "annotations",
			      NODEHW_ANN_PRODUCT, d->product, NODEHW_ANN_COUNT, d->count, "status",
			      "capacity", "cpu", "32", "memory", "256Gi", "pods", "110",
			      "allocatable", "cpu", "32", "memory", "256Gi", "pods", "110");
	json_t *labels = json_object_get(json_object_get(n, "metadata"), "labels");
	json_t *ann = json_object_get(json_object_get(n, "metadata"), "annotations");

	if (d->config)
		json_object_set_new(labels, NODEHW_LABEL_CONFIG, json_string(d->config));
	if (d->layout)
		json_object_set_new(labels, NODEHW_LABEL_MIG_CONFIG, json_string(d->layout));
	if (d->driver)
		json_object_set_new(ann, NODEHW_ANN_DRIVER, json_string(d->driver));
	if (d->machine)
		json_object_set_new(ann, NODEHW_ANN_MACHINE, json_string(d->machine));
	return n;
}

/*
 * What the real node shows: the declared node after gpushare's plan, with
 * gpushare's own annotations gone (a real node has none) and kubelet's
 * conditions added.
 */
static json_t *real_from(const json_t *declared, const json_t *cm)
{
	json_t *nodes = json_pack("[O]", declared), *real = json_deep_copy(declared);
	struct sync_opts so = {0};
	struct sync_report rep;
	struct gs_error err;

	if (sync_plan(cm, nodes, &so, &rep, &err) < 0)
		fail_msg("plan: %s", err.msg);
	assert_int_equal(rep.n, 1);
	if (rep.nodes[0].outcome == SYNC_FAILED)
		fail_msg("declared node fails: %s", rep.nodes[0].message);
	mergepatch_apply(real, rep.nodes[0].patch);
	json_object_set_new(json_object_get(real, "metadata"), "annotations",
			    json_pack("{s:s}",
				      "volumes.kubernetes.io/controller-managed-attach-detach",
				      "true"));
	json_object_set_new(json_object_get(real, "status"), "conditions",
			    json_pack("[{s:s,s:s}]", "type", "Ready", "status", "True"));
	sync_report_release(&rep);
	json_decref(nodes);
	return real;
}

/* Import one node given as JSON text; the stream is returned for the import's lifetime. */
static struct import *import_json(const json_t *node, struct ydoc_stream **s, bool anonymise)
{
	struct import_opts o = {.anonymise = anonymise};
	struct import *im = import_new(cat(), &o);
	char *text = json_dumps(node, JSON_INDENT(1));
	struct gs_warnings w;
	struct gs_error err;

	*s = load("nodes.yaml", text);
	free(text);
	gs_warnings_init(&w);
	if (import_add_stream(im, *s, &w, &err))
		fail_msg("import: %s", err.msg);
	gs_warnings_release(&w);
	return im;
}

static json_t *twins_of(const struct import *im)
{
	struct gs_warnings notes;
	struct gs_error err;
	json_t *t;

	gs_warnings_init(&notes);
	if (import_twins(im, &t, &notes, &err))
		fail_msg("twins: %s", err.msg);
	gs_warnings_release(&notes);
	return t;
}

static const struct declared cases[] = {
	/* A MIG-mixed A100, a time-sliced T4 (-SHARED), a plain H100, a MIG-single H100. */
	{"NVIDIA A100-SXM4-80GB", "8", "mixed", "all-balanced", "550.127.05", "p4de.24xlarge"},
	{"Tesla T4", "4", "ts4", NULL, "535.183.01", "g4dn.12xlarge"},
	{"NVIDIA H100 80GB HBM3", "8", "none", "all-disabled", "570.133.20", "PowerEdge XE9680"},
	{"NVIDIA H100 80GB HBM3", "8", "single", "all-1g.10gb", NULL, NULL},
	/* More of what GFD writes: rename, MPS, shared MIG devices, a 40GB A100 single. */
	{"NVIDIA L4", "2", "rename", NULL, "580.65.06", NULL},
	{"NVIDIA L40S", "1", "mps", NULL, NULL, NULL},
	{"NVIDIA A100-SXM4-80GB", "2", "mixed-ts", "all-1g.10gb", NULL, NULL},
	{"NVIDIA A100-SXM4-40GB", "4", "single", "all-3g.20gb", NULL, NULL},
	{"NVIDIA H100 80GB HBM3", "1", "mixed", "all-disabled", NULL, NULL},
	{"NVIDIA A30", "2", "mixed", "all-balanced", NULL, NULL},
};

static void round_trip(void **state)
{
	struct ydoc_stream *cms;
	const json_t *cm = configmap(&cms);

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const struct declared *d = &cases[i];
		json_t *decl = declared_node("gpu-1", d), *real = real_from(decl, cm), *twins;
		struct import_check_opts co = {.configmap = cm};
		struct import_check c;
		struct ydoc_stream *s;
		struct import *im;
		const json_t *twin;
		struct gs_error err;
		char machine[128];

		assert_null(kobj_annotation(real, NODEHW_ANN_PRODUCT));
		im = import_json(real, &s, false);
		twins = twins_of(im);
		twin = json_array_get(twins, 0);
		/* The declaration comes back, in the catalog's NVML name. */
		assert_string_equal(kobj_annotation(twin, NODEHW_ANN_PRODUCT), d->product);
		assert_string_equal(kobj_annotation(twin, NODEHW_ANN_COUNT), d->count);
		assert_string_equal(kobj_annotation(twin, NODEHW_ANN_DRIVER),
				    d->driver ? d->driver : NODEHW_DEFAULT_DRIVER);
		catalog_sanitize(d->machine ? d->machine : "", machine, sizeof(machine));
		if (d->machine)
			assert_string_equal(kobj_annotation(twin, NODEHW_ANN_MACHINE), machine);
		else
			assert_null(kobj_annotation(twin, NODEHW_ANN_MACHINE));
		assert_string_equal(kobj_annotation(twin, IMPORT_ANN_KWOK), "fake");
		assert_string_equal(kobj_label(twin, NODEHW_LABEL_CONFIG), d->config);
		if (d->layout)
			assert_string_equal(kobj_label(twin, NODEHW_LABEL_MIG_CONFIG), d->layout);
		assert_null(kobj_label(twin, "nvidia.com/gpu.product"));
		assert_null(kobj_get(twin, "status.conditions"));
		assert_null(kobj_annotation(twin, "volumes.kubernetes.io/controller-managed-"
						  "attach-detach"));

		if (import_check(im, &co, &c, &err))
			fail_msg("check: %s", err.msg);
		for (size_t k = 0; k < c.n; k++)
			print_error("case %zu (%s): %s: real %s, twin %s\n", i, d->product,
				    c.diffs[k].field, c.diffs[k].real ? c.diffs[k].real : "-",
				    c.diffs[k].twin ? c.diffs[k].twin : "-");
		assert_int_equal(c.n, 0);
		assert_int_equal(c.nodes, 1);
		assert_int_equal(c.gpu_nodes, 1);
		import_check_release(&c);
		json_decref(twins);
		import_free(im);
		ydoc_stream_free(s);
		json_decref(real);
		json_decref(decl);
	}
	ydoc_stream_free(cms);
}

/* The strategy: GFD's label kept; else mixed from nvidia.com/mig-* resources, single from the
 * product. */
static void strategy_inferred(void **state)
{
	struct ydoc_stream *cms, *s;
	const json_t *cm = configmap(&cms);
	struct declared mixed = {.product = "NVIDIA A100-SXM4-80GB",
				 .count = "1",
				 .config = "mixed",
				 .layout = "all-1g.10gb"};
	struct declared single = {.product = "NVIDIA H100 80GB HBM3",
				  .count = "2",
				  .config = "single",
				  .layout = "all-1g.20gb"};
	json_t *decl, *real, *twins;
	struct import *im;

	(void)state;
	decl = declared_node("m", &mixed);
	real = real_from(decl, cm);
	json_object_del(json_object_get(json_object_get(real, "metadata"), "labels"),
			NODEHW_LABEL_MIG_STRATEGY);
	im = import_json(real, &s, false);
	twins = twins_of(im);
	assert_string_equal(kobj_label(json_array_get(twins, 0), NODEHW_LABEL_MIG_STRATEGY),
			    "mixed");
	json_decref(twins);
	import_free(im);
	ydoc_stream_free(s);
	json_decref(real);
	json_decref(decl);

	decl = declared_node("s", &single);
	real = real_from(decl, cm);
	assert_string_equal(kobj_label(real, "nvidia.com/gpu.count"), "8"); /* MIG devices */
	json_object_del(json_object_get(json_object_get(real, "metadata"), "labels"),
			NODEHW_LABEL_MIG_STRATEGY);
	im = import_json(real, &s, false);
	twins = twins_of(im);
	assert_string_equal(kobj_label(json_array_get(twins, 0), NODEHW_LABEL_MIG_STRATEGY),
			    "single");
	assert_string_equal(kobj_annotation(json_array_get(twins, 0), NODEHW_ANN_COUNT), "2");
	json_decref(twins);
	import_free(im);
	ydoc_stream_free(s);
	json_decref(real);
	json_decref(decl);
	ydoc_stream_free(cms);
}

/* Import must fail on `yaml` with a message holding each of `want`. */
static void fails(const char *yaml, const char *const *want)
{
	struct import *im = import_new(cat(), NULL);
	struct ydoc_stream *s = load("nodes.yaml", yaml);
	struct gs_warnings w;
	struct gs_error err;
	char buf[2048];

	gs_warnings_init(&w);
	assert_int_equal(import_add_stream(im, s, &w, &err), -1);
	gs_error_str(&err, buf, sizeof(buf));
	for (size_t i = 0; want[i]; i++)
		if (!strstr(buf, want[i]))
			fail_msg("'%s' not in: %s", want[i], buf);
	gs_warnings_release(&w);
	import_free(im);
	ydoc_stream_free(s);
}

#define NODE_HEAD                                                                                  \
	"apiVersion: v1\n"                                                                         \
	"kind: Node\n"                                                                             \
	"metadata:\n"                                                                              \
	"  name: gpu-7\n"                                                                          \
	"  labels:\n"

static void bad_input(void **state)
{
	(void)state;
	/* Unknown model: node, label, file:line:col, a suggestion; the suffixes said. */
	fails(NODE_HEAD "    nvidia.com/gpu.product: NVIDIA-A100-SXM4-94GB-SHARED\n"
			"    nvidia.com/gpu.count: \"2\"\n",
	      (const char *const[]){
		      "nodes.yaml:6:29: ", "node 'gpu-7'", "nvidia.com/gpu.product",
		      "unknown GPU model 'NVIDIA-A100-SXM4-94GB'",
		      "(from 'NVIDIA-A100-SXM4-94GB-SHARED')",
		      "did you mean one of 'NVIDIA A100-SXM4-40GB', 'A100-SXM4-40GB', "
		      "'NVIDIA A100-SXM4-80GB'?",
		      NULL});
	fails(NODE_HEAD "    nvidia.com/gpu.product: A100-SXM4-80GB\n"
			"    nvidia.com/gpu.count: \"2\"\n",
	      (const char *const[]){"did you mean 'NVIDIA A100-SXM4-80GB'", NULL});
	fails(NODE_HEAD "    nvidia.com/gpu.product: H100\n"
			"    nvidia.com/gpu.count: \"2\"\n",
	      (const char *const[]){"did you mean one of 'NVIDIA H100 80GB HBM3'", NULL});
	/* A profile the model lacks. */
	fails(NODE_HEAD "    nvidia.com/gpu.product: NVIDIA-A100-SXM4-80GB-MIG-1g.5gb\n"
			"    nvidia.com/gpu.count: \"7\"\n"
			"    nvidia.com/mig.config: all-1g.10gb\n",
	      (const char *const[]){"'1g.5gb' is no MIG profile of NVIDIA A100-SXM4-80GB", NULL});
	/* Single: MIG devices that are no whole number of GPUs, or no layout to count them. */
	fails(NODE_HEAD "    nvidia.com/gpu.product: NVIDIA-A100-SXM4-80GB-MIG-1g.10gb\n"
			"    nvidia.com/gpu.count: \"9\"\n"
			"    nvidia.com/mig.config: all-1g.10gb\n",
	      (const char *const[]){"nodes.yaml:7:27: ", "9 MIG devices is not a whole number",
				    "at 7 per GPU", NULL});
	fails(NODE_HEAD "    nvidia.com/gpu.product: NVIDIA-A100-SXM4-80GB-MIG-1g.10gb\n"
			"    nvidia.com/gpu.count: \"7\"\n",
	      (const char *const[]){"without label nvidia.com/mig.config", NULL});
	fails(NODE_HEAD "    nvidia.com/gpu.product: NVIDIA-A100-SXM4-80GB-MIG-INVALID\n"
			"    nvidia.com/gpu.count: \"0\"\n",
	      (const char *const[]){"MIG-INVALID", "publishes no GPU count", NULL});
	fails(NODE_HEAD "    nvidia.com/gpu.product: Tesla-T4\n",
	      (const char *const[]){"nvidia.com/gpu.count is missing", NULL});
	fails(NODE_HEAD "    nvidia.com/gpu.product: Tesla-T4\n"
			"    nvidia.com/gpu.count: \"0\"\n",
	      (const char *const[]){"'0' is not a GPU count", NULL});
	/* GPUs without GFD: no model to declare, never a guess. */
	fails(NODE_HEAD "    kubernetes.io/hostname: gpu-7\n"
			"status:\n"
			"  capacity: {cpu: \"8\", nvidia.com/gpu: \"4\"}\n",
	      (const char *const[]){"nodes.yaml:8:40: ", "status.capacity has nvidia.com/gpu",
				    "no label nvidia.com/gpu.product", NULL});
	/* A driver branch gpushare does not know. */
	fails(NODE_HEAD "    nvidia.com/gpu.product: Tesla-T4\n"
			"    nvidia.com/gpu.count: \"1\"\n"
			"    nvidia.com/cuda.driver.major: \"390\"\n"
			"    nvidia.com/cuda.driver.minor: \"157\"\n",
	      (const char *const[]){"nvidia.com/cuda.driver.major", "'390.157'", NULL});
	/* The same node twice. */
	fails(NODE_HEAD "    a: b\n---\n" NODE_HEAD "    a: c\n",
	      (const char *const[]){"node 'gpu-7' appears twice (first at nodes.yaml:4:9)", NULL});
	/* A label that is no string, as everywhere gpushare reads a node. */
	fails(NODE_HEAD "    nvidia.com/gpu.count: 2\n",
	      (const char *const[]){"expected a string, got an integer", NULL});
}

static const char REAL[] =
	"apiVersion: v1\n"
	"kind: List\n"
	"items:\n"
	"- apiVersion: v1\n"
	"  kind: Node\n"
	"  metadata:\n"
	"    name: zeta.example.internal\n"
	"    uid: 1b2c\n"
	"    resourceVersion: \"77\"\n"
	"    creationTimestamp: \"2025-06-02T08:14:51Z\"\n"
	"    annotations: {csi.volume.kubernetes.io/nodeid: '{\"x\":\"i-0abc\"}'}\n"
	"    labels:\n"
	"      kubernetes.io/hostname: zeta\n"
	"      topology.kubernetes.io/zone: us-east-1b\n"
	"      topology.kubernetes.io/region: us-east-1\n"
	"      eks.amazonaws.com/nodegroup: prod-gpu\n"
	"      example.com/owner-node: zeta-spare\n"
	"      example.com/peer: zeta\n"
	"      team: ml\n"
	"      nvidia.com/gpu.product: Tesla-T4-SHARED\n"
	"      nvidia.com/gpu.count: \"1\"\n"
	"      nvidia.com/device-plugin.config: ts4\n"
	"      nvidia.com/gpu.present: \"true\"\n"
	"      nvidia.com/gpu.clique: abc.1\n"
	"  spec:\n"
	"    providerID: aws:///us-east-1b/i-0abc\n"
	"    podCIDR: 10.244.1.0/24\n"
	"    unschedulable: true\n"
	"    taints:\n"
	"    - {key: node.kubernetes.io/unschedulable, effect: NoSchedule, timeAdded: "
	"\"2025-07-01T00:00:00Z\"}\n"
	"    - {key: node.kubernetes.io/not-ready, effect: NoExecute, timeAdded: "
	"\"2025-07-01T00:00:00Z\"}\n"
	"    - {key: dedicated, value: zeta, effect: NoSchedule}\n"
	"  status:\n"
	"    capacity: {cpu: \"8\", memory: 32Gi, pods: \"110\", nvidia.com/gpu: \"4\", "
	"example.com/fpga: \"1\"}\n"
	"    allocatable: {cpu: \"7\", memory: 30Gi, pods: \"110\", nvidia.com/gpu: \"4\"}\n"
	"    conditions: [{type: Ready, status: \"True\"}]\n"
	"    addresses: [{type: InternalIP, address: 10.0.0.9}]\n"
	"    nodeInfo: {kubeletVersion: v1.32.5}\n"
	"    images: [{names: [x], sizeBytes: 1}]\n"
	"    daemonEndpoints: {kubeletEndpoint: {Port: 10250}}\n"
	"    volumesInUse: [a]\n"
	"- apiVersion: v1\n"
	"  kind: Node\n"
	"  metadata:\n"
	"    name: alpha.example.internal\n"
	"    labels:\n"
	"      kubernetes.io/hostname: alpha\n"
	"      topology.kubernetes.io/zone: us-east-1a\n"
	"      topology.kubernetes.io/region: us-east-1\n"
	"  status:\n"
	"    capacity: {cpu: \"4\", memory: 8Gi, pods: \"110\"}\n"
	"- apiVersion: v1\n"
	"  kind: Pod\n"
	"  metadata: {name: p}\n";

/* What a twin keeps and drops (docs/guide/import.md "What a twin keeps"). */
static void twin_shape(void **state)
{
	struct import *im = import_new(cat(), NULL);
	struct ydoc_stream *s = load("nodes.yaml", REAL);
	struct gs_warnings w;
	struct gs_error err;
	const json_t *t, *taints;
	json_t *twins;

	(void)state;
	gs_warnings_init(&w);
	assert_int_equal(import_add_stream(im, s, &w, &err), 0);
	/* The Pod is skipped, with where it is. */
	assert_int_equal(w.n, 1);
	assert_non_null(strstr(w.items[0], "nodes.yaml:"));
	assert_non_null(strstr(w.items[0], "skipped: a Pod, not a Node"));
	twins = twins_of(im);
	assert_int_equal(json_array_size(twins), 2);
	t = json_array_get(twins, 0);
	assert_string_equal(kobj_name(t), "zeta.example.internal");
	assert_string_equal(kobj_annotation(t, NODEHW_ANN_PRODUCT), "Tesla T4");
	assert_string_equal(kobj_annotation(t, NODEHW_ANN_COUNT), "1");
	assert_null(kobj_annotation(t, NODEHW_ANN_DRIVER)); /* GFD wrote none: the default */
	assert_null(kobj_annotation(t, "csi.volume.kubernetes.io/nodeid"));
	assert_string_equal(kobj_annotation(t, IMPORT_ANN_TTL), "0");
	assert_string_equal(kobj_label(t, "type"), "kwok");
	assert_string_equal(kobj_label(t, "team"), "ml");
	assert_string_equal(kobj_label(t, "nvidia.com/gpu.present"), "true");
	assert_string_equal(kobj_label(t, "nvidia.com/gpu.clique"), "abc.1"); /* not modelled */
	assert_null(kobj_label(t, "nvidia.com/gpu.count"));
	assert_null(kobj_get(t, "metadata.uid"));
	assert_null(kobj_get(t, "metadata.resourceVersion"));
	assert_null(kobj_get(t, "metadata.creationTimestamp"));
	assert_null(kobj_get(t, "spec.providerID"));
	assert_null(kobj_get(t, "spec.podCIDR"));
	assert_true(json_is_true(kobj_get(t, "spec.unschedulable")));
	taints = kobj_get(t, "spec.taints");
	assert_int_equal(json_array_size(taints), 2); /* not-ready is the machine's state */
	assert_string_equal(kobj_text(json_array_get(taints, 0), "key"),
			    "node.kubernetes.io/unschedulable");
	assert_null(kobj_get(json_array_get(taints, 0), "timeAdded"));
	assert_string_equal(kobj_text(json_array_get(taints, 1), "key"), "dedicated");
	assert_string_equal(kobj_text(t, "status.capacity.cpu"), "8");
	assert_string_equal(kobj_text(t, "status.allocatable.memory"), "30Gi");
	assert_string_equal(kobj_text(t, "status.capacity.example.com/fpga"), "");
	assert_non_null(json_object_get(kobj_map(t, "status.capacity"), "example.com/fpga"));
	assert_null(json_object_get(kobj_map(t, "status.capacity"), "nvidia.com/gpu"));
	for (const char *const *f =
		     (const char *const[]){"conditions", "addresses", "nodeInfo", "images",
					   "daemonEndpoints", "volumesInUse", NULL};
	     *f; f++)
		assert_null(json_object_get(kobj_map(t, "status"), *f));
	/* A node without GPUs: no declaration. */
	t = json_array_get(twins, 1);
	assert_null(kobj_annotation(t, NODEHW_ANN_PRODUCT));
	assert_string_equal(kobj_annotation(t, IMPORT_ANN_KWOK), "fake");
	json_decref(twins);
	gs_warnings_release(&w);
	import_free(im);
	ydoc_stream_free(s);
}

static void anonymise(void **state)
{
	struct import_opts o = {.anonymise = true};
	struct import *im = import_new(cat(), &o);
	struct ydoc_stream *s = load("nodes.yaml", REAL);
	struct gs_warnings w, notes;
	struct gs_error err;
	const json_t *t;
	json_t *twins;
	struct import_check c;

	(void)state;
	gs_warnings_init(&w);
	gs_warnings_init(&notes);
	assert_int_equal(import_add_stream(im, s, &w, &err), 0);
	assert_int_equal(import_add_pool(im, "paper=1x1xTesla-T4", &err), 0);
	assert_int_equal(import_twins(im, &twins, &notes, &err), 0);
	/* In input order; numbered by sorted original name, per kind. */
	t = json_array_get(twins, 0);
	assert_string_equal(kobj_name(t), "gpu-node-0001");
	assert_string_equal(kobj_label(t, "kubernetes.io/hostname"), "gpu-node-0001");
	assert_string_equal(kobj_label(t, "example.com/peer"), "gpu-node-0001");
	assert_null(kobj_label(t, "example.com/owner-node")); /* holds the name */
	assert_null(kobj_label(t, "eks.amazonaws.com/nodegroup"));
	assert_string_equal(kobj_label(t, "topology.kubernetes.io/zone"), "zone-2");
	assert_string_equal(kobj_label(t, "topology.kubernetes.io/region"), "region-1");
	assert_string_equal(kobj_label(t, "team"), "ml");
	assert_string_equal(kobj_text(json_array_get(kobj_get(t, "spec.taints"), 1), "value"),
			    "gpu-node-0001");
	t = json_array_get(twins, 1);
	assert_string_equal(kobj_name(t), "node-0001");
	assert_string_equal(kobj_label(t, "topology.kubernetes.io/zone"), "zone-1");
	assert_string_equal(kobj_name(json_array_get(twins, 2)), "paper-0001");
	/* Nothing of the original names is left. */
	{
		char *all = json_dumps(twins, 0);
		assert_null(strstr(all, "zeta"));
		assert_null(strstr(all, "alpha.example"));
		assert_null(strstr(all, "\"alpha\""));
		assert_null(strstr(all, "us-east"));
		assert_null(strstr(all, "prod-gpu"));
		free(all);
	}
	assert_true(notes.n >= 3);
	assert_non_null(strstr(notes.items[0], "2 nodes renamed"));
	/* An anonymised import cannot be checked against the real names. */
	assert_int_equal(import_check(im, NULL, &c, &err), -1);
	import_check_release(&c);
	json_decref(twins);
	gs_warnings_release(&w);
	gs_warnings_release(&notes);
	import_free(im);
	ydoc_stream_free(s);
}

static void pools(void **state)
{
	struct import *im = import_new(cat(), NULL);
	struct gs_error err;
	json_t *twins;
	const json_t *t;
	static const struct {
		const char *spec, *want;
	} bad[] = {
		{"Train=1x1xTesla-T4", "name 'Train' must be lower-case"},
		{"t=0x1xTesla-T4", "'0' is not a node count"},
		{"t=1x0xTesla-T4", "'0' is not a GPU count"},
		{"t=1x1", "expected COUNTxGPUSxMODEL"},
		{"t", "expected NAME=COUNTxGPUSxMODEL"},
		{"t=1x1xTesla-T4,colour=red", "unknown key 'colour'"},
		{"t=1x1xTesla-T4,strategy=maybe", "strategy=maybe"},
		{"t=1x1xTesla-T4,mig=all-1g.10gb", "Tesla T4 is not MIG-capable"},
		{"t=1x1xNVIDIA-H100-80GB-HBM3,mig=all-1g.5gb", "does not have"},
		{"t=1x1xTesla-T4,cpu=-2", "cpu=-2 is not a positive quantity"},
		{"t=1x1xTesla-T4,driver=390.1", "driver=390.1"},
		{"t=1x1xTesla-T5", "did you mean 'Tesla T4'"},
	};

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		assert_int_equal(import_add_pool(im, bad[i].spec, &err), -1);
		if (!strstr(err.msg, bad[i].want))
			fail_msg("%s: '%s' not in: %s", bad[i].spec, bad[i].want, err.msg);
	}
	assert_int_equal(import_count(im), 0);
	assert_int_equal(import_add_pool(im,
					 "infer=2x1xNVIDIA-A100-SXM4-80GB,mig=all-1g.10gb,"
					 "strategy=mixed,config=mixed,cpu=16,memory=64Gi,pods=50,"
					 "driver=550.127.05",
					 &err),
			 0);
	assert_int_equal(import_add_pool(im, "infer=1x1xTesla-T4", &err), -1);
	assert_non_null(strstr(err.msg, "node 'infer-0001' exists already"));
	twins = twins_of(im);
	assert_int_equal(json_array_size(twins), 2);
	t = json_array_get(twins, 1);
	assert_string_equal(kobj_name(t), "infer-0002");
	assert_string_equal(kobj_label(t, IMPORT_LABEL_POOL), "infer");
	assert_string_equal(kobj_label(t, NODEHW_LABEL_MIG_CONFIG), "all-1g.10gb");
	assert_string_equal(kobj_label(t, NODEHW_LABEL_MIG_STRATEGY), "mixed");
	assert_string_equal(kobj_label(t, NODEHW_LABEL_CONFIG), "mixed");
	assert_string_equal(kobj_annotation(t, NODEHW_ANN_PRODUCT), "NVIDIA A100-SXM4-80GB");
	assert_string_equal(kobj_annotation(t, NODEHW_ANN_DRIVER), "550.127.05");
	assert_string_equal(kobj_text(t, "status.allocatable.cpu"), "16");
	assert_string_equal(kobj_text(t, "status.capacity.pods"), "50");
	json_decref(twins);
	import_free(im);
}

static const struct import_diff *diff(const struct import_check *c, const char *field)
{
	for (size_t i = 0; i < c->n; i++)
		if (!strcmp(c->diffs[i].field, field))
			return &c->diffs[i];
	return NULL;
}

/* A real node that does not show what its twin would: every field listed. */
static void check_differs(void **state)
{
	struct ydoc_stream *cms, *s;
	const json_t *cm = configmap(&cms);
	struct declared h100 = {.product = "NVIDIA H100 80GB HBM3", .count = "4", .config = "none"};
	json_t *decl = declared_node("h", &h100), *real = real_from(decl, cm);
	json_t *labels = json_object_get(json_object_get(real, "metadata"), "labels");
	json_t *status = json_object_get(real, "status");
	struct import_check_opts co = {.configmap = cm};
	struct import_check c;
	const struct import_diff *d;
	struct import *im;
	struct gs_error err;

	(void)state;
	json_object_set_new(json_object_get(status, "allocatable"), "nvidia.com/gpu",
			    json_string("8"));
	/* 0 and absent are one to the scheduler; "4.0"-like forms are equal by value. */
	json_object_set_new(json_object_get(status, "capacity"), "nvidia.com/mig-1g.10gb",
			    json_string("0"));
	json_object_set_new(json_object_get(status, "capacity"), "nvidia.com/gpu",
			    json_string("4000m"));
	json_object_set_new(labels, "nvidia.com/gpu.memory", json_string("80000"));
	json_object_set_new(labels, "nvidia.com/gfd.timestamp", json_string("1"));
	json_object_del(labels, "nvidia.com/vgpu.present");
	im = import_json(real, &s, false);
	assert_int_equal(import_check(im, &co, &c, &err), 0);
	assert_int_equal(c.n, 3);
	assert_int_equal(c.nodes_differing, 1);
	d = diff(&c, "allocatable nvidia.com/gpu");
	assert_non_null(d);
	assert_string_equal(d->node, "h");
	assert_string_equal(d->real, "8");
	assert_string_equal(d->twin, "4");
	d = diff(&c, "label nvidia.com/gpu.memory");
	assert_non_null(d);
	assert_string_equal(d->real, "80000");
	assert_string_equal(d->twin, "81559");
	d = diff(&c, "label nvidia.com/vgpu.present");
	assert_non_null(d);
	assert_null(d->real);
	assert_string_equal(d->twin, "false");
	import_check_release(&c);

	/* Without the ConfigMap the twin runs the empty config; the node's config is unread. */
	assert_int_equal(import_check(im, NULL, &c, &err), 0);
	assert_int_equal(c.config_labels, 1);
	import_check_release(&c);
	import_free(im);
	ydoc_stream_free(s);
	json_decref(real);
	json_decref(decl);
	ydoc_stream_free(cms);
}

/* Every label advertise writes is in a family import drops (it would write it again). */
static void gfd_label_families(void **state)
{
	struct ydoc_stream *cms;
	const json_t *cm = configmap(&cms);

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		json_t *decl = declared_node("n", &cases[i]), *real = real_from(decl, cm);
		const char *k;
		json_t *v;
		json_object_foreach (json_object_get(json_object_get(real, "metadata"), "labels"),
				     k, v) {
			if (!strcmp(k, "kubernetes.io/hostname") ||
			    !strcmp(k, NODEHW_LABEL_CONFIG) || !strcmp(k, NODEHW_LABEL_MIG_CONFIG))
				assert_false(advertise_gfd_label(k));
			else if (!advertise_gfd_label(k))
				fail_msg("advertise wrote %s, not in a GFD family", k);
		}
		json_decref(real);
		json_decref(decl);
	}
	for (const char *const *k =
		     (const char *const[]){"nvidia.com/gpu.present", "nvidia.com/gpu.deploy.driver",
					   "nvidia.com/gpu.clique", "nvidia.com/gpu.imex-domain",
					   "nvidia.com/mig-1g.10gb", "nvidia.com/migx.count",
					   "nvidia.com/vgpu.host-driver-version", NULL};
	     *k; k++)
		if (advertise_gfd_label(*k))
			fail_msg("%s taken for GFD's", *k);
	ydoc_stream_free(cms);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(round_trip),	 cmocka_unit_test(strategy_inferred),
		cmocka_unit_test(bad_input),	 cmocka_unit_test(twin_shape),
		cmocka_unit_test(anonymise),	 cmocka_unit_test(pools),
		cmocka_unit_test(check_differs), cmocka_unit_test(gfd_label_families),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
