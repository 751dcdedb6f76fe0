#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <cmocka.h>
#include <stdlib.h>
#include <string.h>

#include "model/catalog.h"
#include "model/dpconfig_set.h"
#include "engine/report.h"
#include "engine/plan.h"
#include "engine/sync_plan.h"

/*
 * The fleet picture's model and text, from the objects recorded after
 * `gpushare lab` (tests/unit/data/explain: three nodes, seven pods, the
 * ConfigMap, team-a's quota at 2/2), and escaping of names a user chose.
 */

#define DATA "tests/unit/data/explain"

struct fixture {
	json_t *nodes, *pods, *cm, *quotas;
	struct dpconfig_set *set;
	const struct catalog *cat;
	struct report_model *m;
};

static json_t *load(const char *path)
{
	json_error_t je;
	json_t *j = json_load_file(path, 0, &je);

	assert_non_null(j);
	return j;
}

static int setup(void **state)
{
	struct fixture *f = calloc(1, sizeof(*f));
	struct gs_error err;

	f->nodes = load(DATA "/nodes.json");
	f->pods = load(DATA "/pods.json");
	f->cm = load(DATA "/configmap.json");
	f->quotas = load(DATA "/quota-team-a.json");
	assert_int_equal(catalog_builtin(&f->cat, &err), 0);
	assert_int_equal(dpconfig_set_from_configmap(NULL, f->cm, &f->set, &err), 0);
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *f = *state;

	report_model_free(f->m);
	dpconfig_set_free(f->set);
	json_decref(f->nodes);
	json_decref(f->pods);
	json_decref(f->cm);
	json_decref(f->quotas);
	free(f);
	return 0;
}

static struct report_model *build(struct fixture *f)
{
	struct report_input in = {.nodes = f->nodes,
				  .pods = f->pods,
				  .quotas = f->quotas,
				  .configs = f->set,
				  .cat = f->cat,
				  .source = "test"};
	struct gs_error err;

	report_model_free(f->m);
	f->m = NULL;
	assert_int_equal(report_model_build(&in, &f->m, &err), 0);
	return f->m;
}

static const struct report_node *node(const struct report_model *m, const char *name)
{
	for (size_t i = 0; i < m->n_nodes; i++)
		if (!strcmp(m->nodes[i].name, name))
			return &m->nodes[i];
	fail_msg("no node %s", name);
	return NULL;
}

static long pod(const struct report_model *m, const char *ns, const char *name)
{
	for (size_t i = 0; i < m->n_pods; i++)
		if (!strcmp(m->pods[i].namespace, ns) && !strcmp(m->pods[i].name, name))
			return (long)i;
	fail_msg("no pod %s/%s", ns, name);
	return -1;
}

/* Who holds slot s of card c: "ns/name" or "free". */
static const char *holder(const struct report_model *m, const struct report_node *n, size_t c,
			  size_t s, char *buf, size_t size)
{
	long p;

	assert_true(c < n->n_cards);
	assert_true(s < n->cards[c].n_slots);
	p = n->cards[c].slots[s].pod;
	if (p < 0)
		return "free";
	snprintf(buf, size, "%s/%s", m->pods[p].namespace, m->pods[p].name);
	return buf;
}

static void seed_cards(void **state)
{
	struct fixture *f = *state;
	const struct report_model *m = build(f);
	const struct report_node *n;

	assert_int_equal(m->n_nodes, 3);
	assert_int_equal(m->n_cards, 5);
	assert_int_equal(m->n_pods, 7);

	n = node(m, "lab-node-0"); /* config default: two whole A100s */
	assert_int_equal(n->n_cards, 2);
	assert_int_equal(n->cards[0].isolation, REPORT_ISO_WHOLE);
	assert_int_equal(n->cards[0].n_slots, 1);
	assert_string_equal(n->cards[0].slots[0].resource, "nvidia.com/gpu");
	assert_int_equal(n->cards[0].memory_mib, 81920);

	n = node(m, "lab-node-1"); /* shared: time-slicing, 4 replicas per T4 */
	assert_string_equal(n->sharing, "time-slicing");
	assert_int_equal(n->n_cards, 2);
	for (size_t c = 0; c < 2; c++) {
		assert_int_equal(n->cards[c].isolation, REPORT_ISO_NONE);
		assert_int_equal(n->cards[c].n_slots, 4);
		assert_string_equal(n->cards[c].slots[3].label, "#3");
		assert_non_null(strstr(n->cards[c].slots[3].device, "::3"));
	}

	n = node(m, "lab-node-2"); /* MIG mixed, all-1g.10gb: 7 instances */
	assert_int_equal(n->n_cards, 1);
	assert_true(n->cards[0].mig);
	assert_int_equal(n->cards[0].isolation, REPORT_ISO_HARDWARE);
	assert_int_equal(n->cards[0].n_slots, 7);
	assert_string_equal(n->cards[0].slots[6].resource, "nvidia.com/mig-1g.10gb");
	assert_int_equal(n->cards[0].slots[6].domain, 6);
}

/*
 * No pod carries the ledger annotation: devices follow the requests in
 * creation order (all in the same second here, so the list's order:
 * notebook, team-a-0, team-a-1), the distributed policy spreading replicas
 * over the T4s.
 */
static void seed_holders(void **state)
{
	struct fixture *f = *state;
	const struct report_model *m = build(f);
	const struct report_node *n = node(m, "lab-node-1");
	char b[128];

	assert_string_equal(holder(m, n, 0, 0, b, sizeof(b)), "gpu-share/notebook");
	assert_string_equal(holder(m, n, 1, 0, b, sizeof(b)), "team-a/team-a-0");
	assert_string_equal(holder(m, n, 0, 1, b, sizeof(b)), "team-a/team-a-1");
	assert_string_equal(holder(m, n, 1, 1, b, sizeof(b)), "free");
	/* gpu-share and team-a on T4 0: one memory, no isolation */
	assert_non_null(n->cards[0].shared_memory);
	assert_string_equal(n->cards[0].shared_memory, "gpu-share, team-a");
	assert_null(n->cards[1].shared_memory);

	n = node(m, "lab-node-0");
	assert_string_equal(holder(m, n, 0, 0, b, sizeof(b)), "gpu-share/batch-train");
	assert_string_equal(holder(m, n, 1, 0, b, sizeof(b)), "gpu-share/plain-gpu");
	n = node(m, "lab-node-2");
	assert_string_equal(holder(m, n, 0, 0, b, sizeof(b)), "gpu-share/mig-job");
	assert_string_equal(holder(m, n, 0, 1, b, sizeof(b)), "gpu-share/prod-inference");
	assert_null(n->cards[0].shared_memory);
	for (size_t p = 0; p < m->n_pods; p++) {
		assert_int_equal(m->pods[p].origin, REPORT_FROM_REQUESTS);
		assert_int_equal(m->pods[p].held, 1);
	}

	assert_int_equal(m->n_namespaces, 2);
	assert_string_equal(m->namespaces[0], "gpu-share");
	assert_string_equal(m->namespaces[1], "team-a");
	assert_int_equal(m->n_quotas, 1);
	assert_string_equal(m->quotas[0].resource, "requests.nvidia.com/gpu");
	assert_string_equal(m->quotas[0].used, "2");
	assert_true(m->quotas[0].fraction > 0.99 && m->quotas[0].fraction < 1.01);
}

static json_t *pod_json(struct fixture *f, const char *name)
{
	size_t i;
	json_t *p;

	json_array_foreach (json_object_get(f->pods, "items"), i, p)
		if (!strcmp(json_string_value(
				    json_object_get(json_object_get(p, "metadata"), "name")),
			    name))
			return p;
	fail_msg("no pod %s", name);
	return NULL;
}

/* The controller's two annotations: the devices, and admitted (docs/guide/report.md). */
static void annotate(json_t *p, const char *value, bool admitted)
{
	json_t *meta = json_object_get(p, "metadata");
	json_t *ann = json_object_get(meta, "annotations");

	if (!ann) {
		ann = json_object();
		json_object_set_new(meta, "annotations", ann);
	}
	json_object_set_new(ann, "gpushare.io/devices", json_string(value));
	if (admitted)
		json_object_set_new(ann, "gpushare.io/admitted", json_string("true"));
}

/*
 * The ledger annotation of an admitted pod wins over the derived order; one
 * of a pod not admitted yet counts for nothing.
 */
static void ledger_annotation(void **state)
{
	struct fixture *f = *state;
	const struct report_model *m = build(f);
	char *id = strdup(node(m, "lab-node-1")->cards[1].slots[3].device), *v;
	char b[128];
	const struct report_node *n;

	v = malloc(strlen(id) + 64);
	snprintf(v, strlen(id) + 64, "{\"nvidia.com/gpu\":[\"%s\"]}", id);
	annotate(pod_json(f, "team-a-1"), v, true);
	annotate(pod_json(f, "notebook"), "{\"nvidia.com/gpu\":[\"GPU-elsewhere::0\"]}", false);
	m = build(f);
	n = node(m, "lab-node-1");
	assert_string_equal(holder(m, n, 1, 3, b, sizeof(b)), "team-a/team-a-1");
	assert_int_equal(m->pods[pod(m, "team-a", "team-a-1")].origin, REPORT_FROM_LEDGER);
	/* notebook is not admitted: from its requests, as before */
	assert_int_equal(m->pods[pod(m, "gpu-share", "notebook")].origin, REPORT_FROM_REQUESTS);
	/* each T4 has one taken now: team-a-0 goes to the lower index */
	assert_string_equal(holder(m, n, 0, 0, b, sizeof(b)), "gpu-share/notebook");
	assert_string_equal(holder(m, n, 0, 1, b, sizeof(b)), "team-a/team-a-0");
	assert_string_equal(holder(m, n, 1, 0, b, sizeof(b)), "free");
	assert_non_null(n->cards[0].shared_memory);
	assert_null(n->cards[1].shared_memory);
	free(v);
	free(id);
}

/* A pod the kubelet would refuse holds nothing and says why, in the kubelet's words. */
static void kubelet_refusal(void **state)
{
	struct fixture *f = *state;
	const struct report_model *m;
	const struct report_pod *p;

	json_array_append_new(json_object_get(f->pods, "items"), load(DATA "/pod-two.json"));
	m = build(f);
	assert_int_equal(m->n_pods, 8);
	p = &m->pods[pod(m, "e2e-explain-rec", "two")];
	assert_int_equal(p->held, 0);
	assert_int_equal(p->origin, REPORT_FROM_NONE);
	assert_string_equal(p->requests, "nvidia.com/gpu=2");
	assert_non_null(p->note);
	assert_non_null(strstr(p->note, "UnexpectedAdmissionError"));
	assert_non_null(strstr(p->note, "maximum request size for shared resources is 1; found 2"));
}

/* A DRA node: its cards, no device-plugin devices, nobody drawn on them. */
static void dra_node(void **state)
{
	struct fixture *f = *state;
	json_t *n0 = json_array_get(json_object_get(f->nodes, "items"), 0);
	const struct report_model *m;
	const struct report_node *n;

	json_object_set_new(json_object_get(json_object_get(n0, "metadata"), "labels"),
			    "gpushare.io/path", json_string("dra"));
	m = build(f);
	n = node(m, "lab-node-0");
	assert_true(n->dra);
	assert_int_equal(n->n_cards, 2);
	assert_int_equal(n->cards[0].n_slots, 0);
	assert_int_equal(m->pods[pod(m, "gpu-share", "batch-train")].held, 0);
	assert_int_equal(m->pods[pod(m, "gpu-share", "batch-train")].origin, REPORT_FROM_NONE);
	assert_false(node(m, "lab-node-1")->dra);
}

/* Kinds of the DRA recording (tests/golden/status-dra/list.json) as an array. */
static json_t *dra_items(const json_t *list, const char *kind)
{
	json_t *out = json_array(), *it;
	size_t i;

	json_array_foreach (json_object_get(list, "items"), i, it)
		if (!strcmp(json_string_value(json_object_get(it, "kind")), kind))
			json_array_append(out, it);
	return out;
}

/*
 * DRA nodes with their slices and claims: each device a slot per pod of the
 * claim allocated it, judged against the recorded claims' allocation and
 * reservedFor.
 */
static void dra_claims(void **state)
{
	struct fixture *f = *state;
	json_t *list = load("tests/golden/status-dra/list.json");
	json_t *nodes = dra_items(list, "Node"), *pods = dra_items(list, "Pod");
	json_t *slices = dra_items(list, "ResourceSlice"),
	       *claims = dra_items(list, "ResourceClaim");
	struct report_input in = {.nodes = nodes,
				  .pods = pods,
				  .quotas = NULL,
				  .configs = NULL,
				  .cat = f->cat,
				  .source = "test",
				  .slices = slices,
				  .claims = claims};
	struct gs_error err;
	const struct report_node *n;
	const json_t *c;
	size_t i;

	report_model_free(f->m);
	f->m = NULL;
	assert_int_equal(report_model_build(&in, &f->m, &err), 0);
	json_array_foreach (claims, i, c) {
		const json_t *res = json_array_get(
			json_object_get(
				json_object_get(
					json_object_get(json_object_get(c, "status"), "allocation"),
					"devices"),
				"results"),
			0);
		const json_t *rf = json_object_get(json_object_get(c, "status"), "reservedFor");
		const char *ns = json_string_value(
			json_object_get(json_object_get(c, "metadata"), "namespace"));
		const char *dev = json_string_value(json_object_get(res, "device"));
		size_t held = 0;

		if (!res)
			continue;
		n = node(f->m, json_string_value(json_object_get(res, "pool")));
		assert_true(n->dra_claims);
		for (size_t k = 0; k < n->n_cards; k++)
			for (size_t s = 0; s < n->cards[k].n_slots; s++) {
				const struct report_slot *sl = &n->cards[k].slots[s];
				if (strcmp(sl->device, dev))
					continue;
				assert_true(sl->pod >= 0);
				assert_string_equal(f->m->pods[sl->pod].namespace, ns);
				assert_string_equal(f->m->pods[sl->pod].name,
						    json_string_value(json_object_get(
							    json_array_get(rf, held), "name")));
				assert_int_equal(f->m->pods[sl->pod].origin, REPORT_FROM_CLAIM);
				held++;
			}
		assert_int_equal(held, json_array_size(rf));
	}
	n = node(f->m, "dra-node-2");
	assert_int_equal(n->n_cards, 1);
	assert_int_equal(n->cards[0].n_slots, 7);
	assert_true(n->cards[0].mig);
	assert_int_equal(n->cards[0].isolation, REPORT_ISO_HARDWARE);
	n = node(f->m, "dra-node-1");
	assert_int_equal(n->cards[0].n_slots, 2); /* shared-t4's two pods on gpu-0 */
	assert_int_equal(n->cards[0].isolation, REPORT_ISO_NONE);
	json_decref(list);
	json_decref(nodes);
	json_decref(pods);
	json_decref(slices);
	json_decref(claims);
}

/* A pod and a namespace named like markup come out as text, in the page and the SVG. */
static void hostile_names(void **state)
{
	struct fixture *f = *state;
	json_t *p = pod_json(f, "notebook"), *meta = json_object_get(p, "metadata");
	const char *evil = "<script>alert('x')</script>\"><img src=x onerror=alert(1)>";
	struct strbuf sb = STRBUF_INIT;
	const struct report_model *m;

	json_object_set_new(meta, "name", json_string(evil));
	json_object_set_new(meta, "namespace", json_string("a\"b<c>"));
	m = build(f);
	report_html(m, &sb);
	assert_null(strstr(sb.buf, "<script"));
	assert_null(strstr(sb.buf, "<img"));
	assert_null(strstr(sb.buf, "alert('x')"));
	assert_non_null(strstr(sb.buf, "&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt;&quot;&gt;"
				       "&lt;img src=x onerror=alert(1)&gt;"));
	assert_non_null(strstr(sb.buf, "data-pod=\"a&quot;b&lt;c&gt;/&lt;script&gt;"));
	strbuf_reset(&sb);
	report_svg(m, &sb);
	assert_null(strstr(sb.buf, "<script"));
	assert_non_null(strstr(sb.buf, "a&quot;b&lt;c&gt;/&lt;script&gt;"));
	strbuf_release(&sb);
}

/* The page holds a node group per node, a row per pod, and fetches nothing. */
static void page_shape(void **state)
{
	struct fixture *f = *state;
	const struct report_model *m = build(f);
	struct strbuf sb = STRBUF_INIT;
	size_t nodes = 0, pods = 0;

	report_html(m, &sb);
	for (const char *p = sb.buf; (p = strstr(p, "<section class=\"node\"")); p++)
		nodes++;
	for (const char *p = sb.buf; (p = strstr(p, "<tr class=\"pod\"")); p++)
		pods++;
	assert_int_equal(nodes, 3);
	assert_int_equal(pods, 7);
	assert_non_null(strstr(sb.buf, "default-src 'none'"));
	/* no reference to anything outside the page (the SVG namespace is a name, not a fetch) */
	assert_null(strstr(sb.buf, "href"));
	assert_null(strstr(sb.buf, " src="));
	assert_null(strstr(sb.buf, "url("));
	assert_null(strstr(sb.buf, "@import"));
	assert_null(strstr(sb.buf, "https://"));
	assert_non_null(strstr(sb.buf, "isolation: hardware (MIG)"));
	assert_non_null(strstr(sb.buf, "tenants share memory"));
	strbuf_release(&sb);
}

/*
 * The page leads with the summary: headroom per pool equal to plan's for the
 * same fleet, the nodes sync_plan refuses, and identical nodes folded into
 * one group with their count.
 */
static void summary_first(void **state)
{
	struct fixture *f = *state;
	json_t *items = json_object_get(f->nodes, "items");
	json_t *bad = json_deep_copy(json_array_get(items, 1));
	struct sync_opts so = {0};
	struct sync_report rep;
	struct plan_result *r = NULL;
	struct gs_error err;
	struct strbuf sb = STRBUF_INIT;
	const char *sum, *node;

	/* two empty copies of lab-node-0: one group of 2 */
	for (int i = 0; i < 2; i++) {
		json_t *c = json_deep_copy(json_array_get(items, 0));
		json_object_set_new(json_object_get(c, "metadata"), "name",
				    json_string(i ? "copy-b" : "copy-a"));
		json_array_append_new(items, c);
	}
	/* a node whose config key the ConfigMap lacks: refused */
	json_object_set_new(json_object_get(bad, "metadata"), "name", json_string("bad-node"));
	json_object_set_new(json_object_get(json_object_get(bad, "metadata"), "labels"),
			    "nvidia.com/device-plugin.config", json_string("no-such-config"));
	json_array_append_new(items, bad);
	assert_true(sync_plan(f->cm, f->nodes, &so, &rep, &err) >= 0);
	struct report_input in = {.nodes = f->nodes,
				  .pods = f->pods,
				  .quotas = f->quotas,
				  .configs = f->set,
				  .cat = f->cat,
				  .sync = &rep};
	assert_int_equal(report_model_build(&in, &f->m, &err), 0);
	assert_int_equal(f->m->n_refused, 1);
	assert_string_equal(f->m->refused[0].node, "bad-node");

	/* the same headroom as plan's, pool by pool */
	json_t *none = json_array();
	struct plan_input pin = {
		.nodes = f->nodes, .existing = f->pods, .pods = none, .configs = f->set};
	assert_int_equal(plan_run(&pin, &r, &err), 0);
	assert_int_equal(f->m->n_pools, r->n_pools);
	assert_true(r->n_pools >= 3);
	for (size_t i = 0; i < r->n_pools; i++) {
		assert_string_equal(f->m->pools[i].pool, r->pools[i].pool);
		assert_string_equal(f->m->pools[i].resource, r->pools[i].resource);
		assert_int_equal(f->m->pools[i].registered, r->pools[i].registered);
		assert_int_equal(f->m->pools[i].held, r->pools[i].held);
		assert_int_equal(f->m->pools[i].free, r->pools[i].free);
	}

	report_html(f->m, &sb);
	sum = strstr(sb.buf, "<section id=\"summary\">");
	node = strstr(sb.buf, "class=\"node\"");
	assert_non_null(sum);
	assert_non_null(node);
	assert_true(sum < node);
	assert_true(strstr(sb.buf, "id=\"refused\"") < node);
	assert_true(strstr(sb.buf, "<li data-node=\"bad-node\">") < node);
	assert_true(strstr(sb.buf, "id=\"quotas\"") < node);
	assert_true(strstr(sb.buf, "<tr class=\"pool\">") < node);
	assert_non_null(strstr(sb.buf, "<details class=\"group\" data-count=\"2\">"));
	assert_non_null(strstr(sb.buf, "<span data-node=\"copy-b\">"));
	strbuf_release(&sb);
	plan_result_free(r);
	json_decref(none);
	sync_report_release(&rep);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(seed_cards, setup, teardown),
		cmocka_unit_test_setup_teardown(seed_holders, setup, teardown),
		cmocka_unit_test_setup_teardown(ledger_annotation, setup, teardown),
		cmocka_unit_test_setup_teardown(kubelet_refusal, setup, teardown),
		cmocka_unit_test_setup_teardown(dra_node, setup, teardown),
		cmocka_unit_test_setup_teardown(dra_claims, setup, teardown),
		cmocka_unit_test_setup_teardown(hostile_names, setup, teardown),
		cmocka_unit_test_setup_teardown(page_shape, setup, teardown),
		cmocka_unit_test_setup_teardown(summary_first, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
