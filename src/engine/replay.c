#include "engine/replay.h"

#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "engine/admission.h"
#include "engine/advertise.h"
#include "engine/explain_offline.h"
#include "engine/ledger.h"
#include "engine/plan.h"
#include "engine/replay_int.h"
#include "engine/sync_plan.h"
#include "model/dpconfig_set.h"
#include "model/kobj.h"
#include "model/nodehw.h"
#include "base/splitmix.h"
#include "base/strbuf.h"
#include "base/wrapper.h"
#include "base/banned.h"

/*
 * The workload, the typical mix and the fragmentation are the paper's
 * simulator's (hkust-adsl/kubernetes-scheduler-simulator,
 * pkg/simulator/simulator.go SortClusterPods and tuneUpPods,
 * pkg/utils/frag.go GetTypicalPods and NodeGpuShareFragAmount,
 * experiments/analysis/merge_*_discrete.py); docs/guide/replay.md says what each
 * step takes from where.
 */

void replay_trace_release(struct replay_trace *t)
{
	for (size_t i = 0; i < t->n_nodes; i++) {
		free(t->nodes[i].name);
		free(t->nodes[i].model);
	}
	for (size_t i = 0; i < t->n_tasks; i++) {
		free(t->tasks[i].name);
		free(t->tasks[i].gpu_spec);
	}
	free(t->nodes);
	free(t->tasks);
	memset(t, 0, sizeof(*t));
}

/* The trace's GPU codes (cluster-trace-gpu-v2023) and the catalog GPU each stands for. */
static const struct {
	const char *code;
	const char *product;
} models[] = {
	{"A10", "NVIDIA A10"},
	{"G1", "NVIDIA A10G"}, /* undisclosed: placeholders, docs/guide/replay.md */
	{"G2", "NVIDIA L4"},
	{"G3", "NVIDIA L40"},
	{"P100", "Tesla P100-PCIE-16GB"},
	{"T4", "Tesla T4"},
	{"V100M16", "Tesla V100-SXM2-16GB"},
	{"V100M32", "Tesla V100-SXM2-32GB"},
};

const char *replay_gpu_product(const char *code)
{
	for (size_t i = 0; i < sizeof(models) / sizeof(models[0]); i++)
		if (!strcmp(models[i].code, code))
			return models[i].product;
	return NULL;
}

int replay_task_replicas(const struct replay_task *t, int replicas)
{
	if (t->num_gpu <= 0 || t->gpu_milli <= 0)
		return 0;
	if (t->gpu_milli >= REPLAY_MILLI)
		return t->num_gpu * replicas;
	/* ceil(gpu_milli / (1000 / N)) = ceil(gpu_milli * N / 1000) */
	return (t->gpu_milli * replicas + REPLAY_MILLI - 1) / REPLAY_MILLI;
}

static int64_t task_total_milli(const struct replay_task *t)
{
	return (int64_t)t->num_gpu * t->gpu_milli;
}

/* ---- the typical mix ------------------------------------------------------- */

/* GetPodResource: the scheduler's non-zero cpu (100m for none). */
static int64_t nonzero_cpu(const struct replay_task *t)
{
	return t->cpu_milli ? t->cpu_milli : 100;
}

/* PodResource.Less: cpu, gpu milli, gpu count, gpu type. */
static int shape_cmp(int64_t ca, int ga, int na, const char *sa, int64_t cb, int gb, int nb,
		     const char *sb)
{
	if (ca != cb)
		return ca < cb ? -1 : 1;
	if (ga != gb)
		return ga < gb ? -1 : 1;
	if (na != nb)
		return na < nb ? -1 : 1;
	return strcmp(sa, sb);
}

static int task_shape_cmp(const void *a, const void *b)
{
	const struct replay_task *x = *(const struct replay_task *const *)a;
	const struct replay_task *y = *(const struct replay_task *const *)b;

	return shape_cmp(nonzero_cpu(x), x->gpu_milli, x->num_gpu, x->gpu_spec, nonzero_cpu(y),
			 y->gpu_milli, y->num_gpu, y->gpu_spec);
}

/* sort.Reverse of TargetPodList.Less: more popular first, ties by the larger shape. */
static int typical_cmp(const void *a, const void *b)
{
	const struct replay_typical *x = a, *y = b;

	if (x->weight != y->weight)
		return x->weight > y->weight ? -1 : 1;
	return -shape_cmp(x->cpu_milli, x->gpu_milli, x->num_gpu, x->gpu_spec, y->cpu_milli,
			  y->gpu_milli, y->num_gpu, y->gpu_spec);
}

struct replay_typical *replay_typical_mix(const struct replay_task *tasks, size_t n_tasks,
					  size_t *n)
{
	const struct replay_task **sorted = gs_xcalloc(n_tasks + 1, sizeof(*sorted));
	struct replay_typical *mix = gs_xcalloc(n_tasks + 1, sizeof(*mix));
	size_t m = 0, i = 0;
	double total = (double)n_tasks, cum = 0, expected = 95.0 * total / 100.0;

	for (size_t k = 0; k < n_tasks; k++)
		sorted[k] = &tasks[k];
	qsort(sorted, n_tasks, sizeof(*sorted), task_shape_cmp);
	for (size_t k = 0; k < n_tasks; k++) {
		const struct replay_task *t = sorted[k];
		if (!m || task_shape_cmp(&sorted[k - 1], &sorted[k]))
			mix[m++] = (struct replay_typical){nonzero_cpu(t), t->gpu_milli, t->num_gpu,
							   t->gpu_spec, 0};
		mix[m - 1].weight += 1; /* a count until normalised */
	}
	free(sorted);
	qsort(mix, m, sizeof(*mix), typical_cmp);
	/* podIncreaseStep 1: one shape at a time until 95% of the tasks are covered. */
	while (cum < expected && i < m) {
		cum += mix[i].weight;
		mix[i].weight /= total;
		i++;
	}
	if (i < m) {
		for (size_t k = 0; k < i; k++)
			mix[k].weight /= cum / total;
		m = i;
	}
	*n = m;
	return mix;
}

/* IsNodeAccessibleToPodByType. */
bool replay_accessible(const char *model, const char *spec)
{
	size_t len = strlen(model);

	if (!*spec)
		return true;
	if (!*model)
		return false;
	for (const char *p = spec; *p;) {
		const char *bar = strchr(p, '|');
		size_t l = bar ? (size_t)(bar - p) : strlen(p);
		if (l == len && !strncmp(p, model, len))
			return true;
		if (!bar)
			break;
		p = bar + 1;
	}
	return false;
}

double replay_node_frag(const double *left, int n_cards, int64_t cpu_left, const char *model,
			const struct replay_typical *mix, size_t n_mix, double *idle)
{
	double total = 0, frag = 0;

	for (int c = 0; c < n_cards; c++)
		total += left[c];
	*idle = total;
	if (total <= 0)
		return 0;
	for (size_t k = 0; k < n_mix; k++) {
		const struct replay_typical *t = &mix[k];
		int fit = 0;
		double part = 0;
		/* A cpu task (xl/xr) and a node of another model (no_access): all idle. */
		if (t->gpu_milli == 0 || !replay_accessible(model, t->gpu_spec)) {
			frag += t->weight * total;
			continue;
		}
		for (int c = 0; c < n_cards; c++) {
			if (left[c] >= t->gpu_milli)
				fit++;
			else
				part += left[c];
		}
		if (fit >= t->num_gpu && cpu_left >= t->cpu_milli)
			frag += t->weight * part; /* q3: the cards too small for it (q2) */
		else
			frag += t->weight * total; /* q1, q2, q4 */
	}
	return frag;
}

/* The same judged as the scheduler does under time-slicing: by free replicas on the node. */
static double node_frag_sched(int free_replicas, double idle, int64_t cpu_left, const char *model,
			      const struct replay_typical *mix, size_t n_mix, int replicas)
{
	double frag = 0;

	if (idle <= 0)
		return 0;
	for (size_t k = 0; k < n_mix; k++) {
		const struct replay_typical *t = &mix[k];
		struct replay_task as = {.num_gpu = t->num_gpu, .gpu_milli = t->gpu_milli};
		int want = replay_task_replicas(&as, replicas);
		if (!want || !replay_accessible(model, t->gpu_spec) || want > free_replicas ||
		    cpu_left < t->cpu_milli)
			frag += t->weight * idle;
	}
	return frag;
}

/* ---- the fleet as Kubernetes objects --------------------------------------- */

static json_t *quantity(int64_t v, const char *suffix)
{
	char buf[48];

	snprintf(buf, sizeof(buf), "%lld%s", (long long)v, suffix);
	return json_string(buf);
}

json_t *replay_node_object(const struct replay_node *n, const char *config_key)
{
	json_t *labels = json_pack("{s:s}", "kubernetes.io/hostname", n->name);
	json_t *ann = json_object();
	json_t *res = json_pack("{s:o,s:o,s:s}", "cpu", quantity(n->cpu_milli, "m"), "memory",
				quantity(n->memory_mib, "Mi"), "pods", "110");

	if (n->gpus > 0) {
		char count[16];
		snprintf(count, sizeof(count), "%d", n->gpus);
		json_object_set_new(labels, REPLAY_LABEL_MODEL, json_string(n->model));
		json_object_set_new(labels, NODEHW_LABEL_CONFIG, json_string(config_key));
		json_object_set_new(ann, NODEHW_ANN_PRODUCT,
				    json_string(replay_gpu_product(n->model)));
		json_object_set_new(ann, NODEHW_ANN_COUNT, json_string(count));
	}
	return json_pack("{s:s,s:s,s:{s:s,s:o,s:o},s:{s:O,s:o}}", "apiVersion", "v1", "kind",
			 "Node", "metadata", "name", n->name, "labels", labels, "annotations", ann,
			 "status", "capacity", res, "allocatable", res);
}

char *replay_config_text(int replicas)
{
	return gs_xasprintf("version: v1\n"
			    "flags:\n"
			    "  migStrategy: none\n"
			    "sharing:\n"
			    "  timeSlicing:\n"
			    "    failRequestsGreaterThanOne: false\n"
			    "    resources:\n"
			    "    - name: nvidia.com/gpu\n"
			    "      replicas: %d\n",
			    replicas);
}

static json_t *configmap_object(int replicas)
{
	char *text = replay_config_text(replicas);
	json_t *cm = json_pack("{s:s,s:s,s:{s:s,s:s},s:{s:s}}", "apiVersion", "v1", "kind",
			       "ConfigMap", "metadata", "name", "device-plugin-configs",
			       "namespace", "gpu-operator", "data", REPLAY_CONFIG_KEY, text);
	free(text);
	return cm;
}

json_t *replay_pod_object(const struct replay_task *t, const char *name, int replicas)
{
	json_t *req = json_pack("{s:o,s:o}", "cpu", quantity(t->cpu_milli, "m"), "memory",
				quantity(t->memory_mib, "Mi"));
	json_t *lim = json_object();
	json_t *spec;
	int want = replay_task_replicas(t, replicas);

	if (want) {
		json_object_set_new(req, "nvidia.com/gpu", quantity(want, ""));
		json_object_set_new(lim, "nvidia.com/gpu", quantity(want, ""));
	}
	spec = json_pack("{s:[{s:s,s:s,s:{s:o,s:o}}]}", "containers", "name", "main", "image",
			 "trace", "resources", "requests", req, "limits", lim);
	if (*t->gpu_spec) {
		json_t *values = json_array();
		const char *p = t->gpu_spec;
		for (;;) {
			const char *bar = strchr(p, '|');
			size_t l = bar ? (size_t)(bar - p) : strlen(p);
			if (l)
				json_array_append_new(values, json_stringn(p, l));
			if (!bar)
				break;
			p = bar + 1;
		}
		json_object_set_new(spec, "affinity",
				    json_pack("{s:{s:{s:[{s:[{s:s,s:s,s:o}]}]}}}", "nodeAffinity",
					      "requiredDuringSchedulingIgnoredDuringExecution",
					      "nodeSelectorTerms", "matchExpressions", "key",
					      REPLAY_LABEL_MODEL, "operator", "In", "values",
					      values));
	}
	return json_pack("{s:s,s:s,s:{s:s,s:s},s:o}", "apiVersion", "v1", "kind", "Pod", "metadata",
			 "name", name, "namespace", "default", "spec", spec);
}

/* ---- the workload ------------------------------------------------------------ */

static const struct replay_task *name_base;

static int by_name(const void *a, const void *b)
{
	return strcmp(name_base[*(const size_t *)a].name, name_base[*(const size_t *)b].name);
}

/*
 * SortClusterPods with shufflePod (by name, then a Fisher-Yates shuffle),
 * then TunePodsByNodeTotalResource: draws with replacement appended while
 * the next one's per-GPU milli still fits under the target (tuneUpPods
 * compares gpu_milli, adds num_gpu x gpu_milli), or random tasks removed
 * until the total is under it (tuneDownPods).
 */
int replay_workload(const struct replay_trace *tr, const struct replay_opts *o, int64_t capacity,
		    size_t **order_out, size_t *n_out, size_t *n_original, struct gs_error *err)
{
	struct splitmix r = {o->seed};
	size_t n = tr->n_tasks, cap = n + 16;
	size_t *order = gs_xcalloc(cap, sizeof(*order));
	double target = o->inflate * (double)capacity;
	int64_t total = 0;

	for (size_t i = 0; i < n; i++) {
		order[i] = i;
		total += task_total_milli(&tr->tasks[i]);
	}
	if (total <= 0) {
		free(order);
		gs_error_set(err, "the trace's tasks ask for no GPU");
		return -1;
	}
	name_base = tr->tasks;
	qsort(order, n, sizeof(*order), by_name);
	name_base = NULL;
	for (size_t i = n; i > 1; i--) {
		size_t j = splitmix_below(&r, i), t = order[i - 1];
		order[i - 1] = order[j];
		order[j] = t;
	}
	*n_original = n;
	while ((double)total > target && n > 0) {
		size_t j = splitmix_below(&r, n);
		total -= task_total_milli(&tr->tasks[order[j]]);
		memmove(&order[j], &order[j + 1], (n - j - 1) * sizeof(*order));
		n--;
		(*n_original)--;
	}
	for (;;) {
		size_t j = splitmix_below(&r, tr->n_tasks);
		const struct replay_task *t = &tr->tasks[j];
		if ((double)(total + t->gpu_milli) > target)
			break;
		if (n >= REPLAY_MAX_ARRIVALS) {
			free(order);
			gs_error_set(err, "an inflation of %g needs more than %d pods", o->inflate,
				     REPLAY_MAX_ARRIVALS);
			return -1;
		}
		if (n == cap) {
			cap *= 2;
			order = gs_xrealloc(order, cap * sizeof(*order));
		}
		order[n++] = j;
		total += task_total_milli(t);
	}
	*order_out = order;
	*n_out = n;
	return 0;
}

/* ---- placing offline: plan, then the device plugin -------------------------- */

static int build_ledgers(const struct catalog *cat, const struct replay_trace *tr,
			 const json_t *nodes, const struct dpconfig_set *set,
			 struct ledger **ledgers, int replicas, struct gs_error *err)
{
	for (size_t i = 0; i < tr->n_nodes; i++) {
		const json_t *node = json_array_get(json_object_get(nodes, "items"), i);
		struct advertisement *adv = NULL;
		struct nodehw *hw = NULL;
		struct gs_warnings w;
		int rc = -1;

		if (!tr->nodes[i].gpus)
			continue;
		gs_warnings_init(&w);
		if (advertise_node(cat, node, set, NULL, &adv, err) < 0 ||
		    nodehw_from_node(cat, node, NULL, &hw, &w, err) < 0)
			goto next;
		if (adv->failure) {
			gs_error_set(err, "%s", adv->failure);
			goto next;
		}
		long k = dpconfig_set_find(set, REPLAY_CONFIG_KEY);
		if (ledger_new(cat, hw, adv, dpconfig_set_get(set, (size_t)k, NULL), &ledgers[i],
			       err) < 0)
			goto next;
		size_t have = ledger_count(ledgers[i], "nvidia.com/gpu", NULL);
		if (have != (size_t)tr->nodes[i].gpus * (size_t)replicas) {
			gs_error_set(err, "%zu replicas registered, %d expected", have,
				     tr->nodes[i].gpus * replicas);
			goto next;
		}
		rc = 0;
	next:
		advertisement_free(adv);
		nodehw_free(hw);
		gs_warnings_release(&w);
		if (rc < 0) {
			gs_error_prefix(err, "node %s: ", tr->nodes[i].name);
			return -1;
		}
	}
	return 0;
}

void replay_place_devices(struct replay_place *pl, const struct ledger *l, const json_t *devices)
{
	const char *res;
	json_t *ids, *id;
	size_t i;

	free(pl->cards);
	free(pl->replicas);
	pl->n_cards = 0;
	pl->cards = gs_xcalloc(l->n_gpus + 1, sizeof(int));
	pl->replicas = gs_xcalloc(l->n_gpus + 1, sizeof(int));
	json_object_foreach ((json_t *)devices, res, ids)
		json_array_foreach (ids, i, id) {
			long k = ledger_find(l, json_string_value(id));
			int g = k >= 0 ? l->devices[k].gpu : -1;
			if (g < 0 || (size_t)g >= l->n_gpus)
				continue;
			int c;
			for (c = 0; c < pl->n_cards && pl->cards[c] != l->gpus[g].index; c++)
				;
			if (c == pl->n_cards) {
				pl->cards[c] = l->gpus[g].index;
				pl->n_cards++;
			}
			pl->replicas[c]++;
		}
}

int replay_allocate(struct ledger *l, const json_t *pod, struct replay_place *pl,
		    struct gs_error *err)
{
	struct admission_decision d;
	char *holder;

	if (admission_decide(l, pod, &d, err) < 0)
		return -1;
	if (!d.admit) {
		pl->bound = false;
		pl->reason = gs_xasprintf("%s: %s", d.reason, d.message);
		admission_decision_release(&d);
		return 0;
	}
	replay_place_devices(pl, l, d.devices);
	holder = gs_xasprintf("default/%s", pl->name);
	int rc = ledger_hold(l, holder, d.devices, err);
	free(holder);
	admission_decision_release(&d);
	return rc;
}

/* Each pod's verdict from the plan: bound to a node (index), or not with the reason. */
static int take_verdicts(struct replay_result *r, const struct plan_result *plan,
			 const json_t *node_index, struct gs_error *err)
{
	for (size_t i = 0; i < r->n_places; i++) {
		struct replay_place *pl = &r->places[i];
		const struct plan_pod *pp = &plan->pods[i];
		if (pp->verdict != PLAN_BOUND) {
			pl->reason = gs_xasprintf("%s: %s", plan_verdict_name(pp->verdict),
						  pp->reason ? pp->reason : "");
			continue;
		}
		json_t *v = json_object_get(node_index, pp->node);
		if (!v) {
			gs_error_set(err, "pod %s: bound to an unknown node", pl->name);
			return -1;
		}
		pl->node = (long)json_integer_value(v);
		pl->bound = true;
	}
	return 0;
}

int replay_fleet_build(const struct catalog *cat, const struct replay_trace *tr, int replicas,
		       struct replay_fleet *f, struct gs_error *err)
{
	json_t *nodes = json_array();
	int rc = -1;

	memset(f, 0, sizeof(*f));
	f->node_index = json_object();
	for (size_t i = 0; i < tr->n_nodes; i++) {
		json_array_append_new(nodes, replay_node_object(&tr->nodes[i], REPLAY_CONFIG_KEY));
		json_object_set_new(f->node_index, tr->nodes[i].name, json_integer((json_int_t)i));
	}
	f->configmap = configmap_object(replicas);
	if (dpconfig_set_from_configmap(NULL, f->configmap, &f->set, err) < 0 ||
	    explain_fleet_advertise(nodes, NULL, f->configmap, &f->fleet, err) < 0)
		goto out;
	/* Only the advertised nodes are needed from here: the patches go before a plan. */
	sync_report_release(&f->fleet.plan);
	f->ledgers = gs_xcalloc(tr->n_nodes + 1, sizeof(*f->ledgers));
	f->n_nodes = tr->n_nodes;
	rc = build_ledgers(cat, tr, f->fleet.nodes, f->set, f->ledgers, replicas, err);
out:
	json_decref(nodes);
	return rc;
}

void replay_fleet_release(struct replay_fleet *f)
{
	for (size_t i = 0; f->ledgers && i < f->n_nodes; i++)
		ledger_free(f->ledgers[i]);
	free(f->ledgers);
	explain_fleet_release(&f->fleet);
	dpconfig_set_free(f->set);
	json_decref(f->configmap);
	json_decref(f->node_index);
	memset(f, 0, sizeof(*f));
}

/*
 * plan_run places the whole ordered batch (arrival without departures);
 * then, pod by pod in arrival order, each bound pod's replicas are
 * allocated on its node's ledger as the kubelet and the device plugin would.
 */
static int place_offline(const struct catalog *cat, const struct replay_trace *tr,
			 const struct replay_opts *o, struct replay_result *r, struct gs_error *err)
{
	json_t *pods = json_array();
	struct replay_fleet f;
	struct plan_result *plan = NULL;
	int rc = -1;

	for (size_t i = 0; i < r->n_places; i++)
		json_array_append_new(pods, replay_pod_object(&tr->tasks[r->places[i].task],
							      r->places[i].name, o->replicas));
	if (replay_fleet_build(cat, tr, o->replicas, &f, err) < 0)
		goto out;
	/* The scheduler's draws among tied nodes (plan_sched): seed + tie_offset. */
	struct plan_input in = {.nodes = f.fleet.nodes,
				.pods = pods,
				.configs = f.set,
				.sched = {.seed = o->seed + o->tie_offset}};
	if (plan_run(&in, &plan, err) < 0 || take_verdicts(r, plan, f.node_index, err) < 0)
		goto out;
	plan_result_free(plan);
	plan = NULL;
	for (size_t i = 0; i < r->n_places; i++) {
		struct replay_place *pl = &r->places[i];
		if (pl->bound && replay_task_replicas(&tr->tasks[pl->task], o->replicas) &&
		    replay_allocate(f.ledgers[pl->node], json_array_get(pods, i), pl, err) < 0) {
			gs_error_prefix(err, "pod %s: ", pl->name);
			goto out;
		}
	}
	rc = 0;
out:
	plan_result_free(plan);
	replay_fleet_release(&f);
	json_decref(pods);
	return rc;
}

/* ---- the measures ------------------------------------------------------------ */

static void node_measure(const struct replay_node *tn, struct rnode *rn,
			 const struct replay_typical *mix, size_t n_mix, int replicas, double *left)
{
	int free_replicas = 0;
	int64_t cpu_left = tn->cpu_milli - rn->cpu_used;

	for (int c = 0; c < rn->n_cards; c++) {
		left[c] = (double)(replicas - rn->held[c]) * REPLAY_MILLI / replicas;
		free_replicas += replicas - rn->held[c];
	}
	rn->frag = replay_node_frag(left, rn->n_cards, cpu_left, tn->model, mix, n_mix, &rn->idle);
	rn->frag_sched =
		node_frag_sched(free_replicas, rn->idle, cpu_left, tn->model, mix, n_mix, replicas);
}

/*
 * Add (sign 1) or take back (-1) a bound place's replicas on its node's
 * cards; fails on a card the node lacks, overfull or holding fewer.
 */
static int hold_cards(const struct replay_trace *tr, struct rnode *rn,
		      const struct replay_place *pl, int replicas, int sign, struct gs_error *err)
{
	struct rnode *x = &rn[pl->node];

	for (int c = 0; c < pl->n_cards; c++) {
		int card = pl->cards[c];
		int to = card >= 0 && card < x->n_cards ? x->held[card] + sign * pl->replicas[c]
							: -1;
		if (pl->replicas[c] < 0 || to < 0 || to > replicas) {
			gs_error_set(err,
				     "pod %s: %d replicas %s card %d of node %s, which has %d "
				     "cards of %d replicas (%d held)",
				     pl->name, pl->replicas[c], sign > 0 ? "on" : "off", card,
				     tr->nodes[pl->node].name, x->n_cards, replicas,
				     card >= 0 && card < x->n_cards ? x->held[card] : 0);
			return -1;
		}
		x->held[card] = to;
	}
	return 0;
}

void replay_meter_init(struct replay_meter *m, const struct replay_trace *tr,
		       const struct replay_result *r)
{
	int max_cards = 0;

	memset(m, 0, sizeof(*m));
	m->tr = tr;
	m->r = r;
	m->rn = gs_xcalloc(tr->n_nodes + 1, sizeof(*m->rn));
	for (size_t i = 0; i < tr->n_nodes; i++) {
		m->rn[i].n_cards = tr->nodes[i].gpus > 0 ? tr->nodes[i].gpus : 0;
		m->rn[i].held = gs_xcalloc((size_t)m->rn[i].n_cards + 1, sizeof(int));
		if (m->rn[i].n_cards > max_cards)
			max_cards = m->rn[i].n_cards;
	}
	m->left = gs_xcalloc((size_t)max_cards + 1, sizeof(double));
	for (size_t i = 0; i < tr->n_nodes; i++) {
		node_measure(&tr->nodes[i], &m->rn[i], r->typical, r->n_typical, r->replicas,
			     m->left);
		m->frag += m->rn[i].frag;
		m->idle += m->rn[i].idle;
		m->frag_sched += m->rn[i].frag_sched;
	}
}

int replay_meter_move(struct replay_meter *m, const struct replay_place *pl, int sign,
		      struct gs_error *err)
{
	const struct replay_task *t = &m->tr->tasks[pl->task];
	const struct replay_result *r = m->r;

	if (pl->node < 0 || (size_t)pl->node >= m->tr->n_nodes) {
		gs_error_set(err, "pod %s: bound to no node of the trace", pl->name);
		return -1;
	}
	if (hold_cards(m->tr, m->rn, pl, r->replicas, sign, err) < 0)
		return -1;
	struct rnode *x = &m->rn[pl->node];
	x->cpu_used += sign * t->cpu_milli;
	m->frag -= x->frag;
	m->idle -= x->idle;
	m->frag_sched -= x->frag_sched;
	node_measure(&m->tr->nodes[pl->node], x, r->typical, r->n_typical, r->replicas, m->left);
	m->frag += x->frag;
	m->idle += x->idle;
	m->frag_sched += x->frag_sched;
	m->held += sign * replay_task_replicas(t, r->replicas);
	m->asked += sign * task_total_milli(t);
	return 0;
}

double replay_meter_alloc(const struct replay_meter *m)
{
	return (double)m->held * REPLAY_MILLI / m->r->replicas;
}

void replay_meter_release(struct replay_meter *m)
{
	for (size_t i = 0; m->rn && i < m->tr->n_nodes; i++)
		free(m->rn[i].held);
	free(m->rn);
	free(m->left);
	memset(m, 0, sizeof(*m));
}

/* merge_*_discrete.py: per percent, the mean of the rows rounding to it, else of those within 1. */
struct replay_point *replay_bucket(const struct replay_row *rows, size_t n_rows, int64_t capacity,
				   size_t *n_points)
{
	int max = 0;
	int *pct = gs_xcalloc(n_rows + 1, sizeof(int));
	struct replay_point *points;

	for (size_t i = 0; i < n_rows; i++) {
		pct[i] = (int)rint((double)rows[i].arrived * 100.0 / (double)capacity);
		if (pct[i] > max)
			max = pct[i];
	}
	points = gs_xcalloc((size_t)max + 2, sizeof(*points));
	*n_points = 0;
	for (int k = 0; k <= max; k++) {
		struct replay_point *p = &points[*n_points];
		for (int pass = 0; pass < 2 && !p->samples; pass++)
			for (size_t i = 0; i < n_rows; i++) {
				if (pass ? (pct[i] < k - 1 || pct[i] > k + 1) : pct[i] != k)
					continue;
				p->samples++;
				p->alloc_pct += rows[i].alloc;
				p->asked_pct += rows[i].asked;
				p->frag_milli += rows[i].frag;
				p->idle_milli += rows[i].idle;
				p->stranded_milli += rows[i].stranded;
				p->frag_pct +=
					rows[i].idle > 0 ? 100 * rows[i].frag / rows[i].idle : 0;
				p->frag_sched_pct +=
					rows[i].idle > 0 ? 100 * rows[i].frag_sched / rows[i].idle
							 : 0;
				p->bound = rows[i].bound;
				p->pending = rows[i].pending;
			}
		if (!p->samples)
			continue;
		double n = (double)p->samples, cap = (double)capacity;
		p->pct = k;
		p->alloc_pct = 100 * p->alloc_pct / n / cap;
		p->asked_pct = 100 * p->asked_pct / n / cap;
		p->frag_milli /= n;
		p->idle_milli /= n;
		p->stranded_milli /= n;
		p->frag_pct /= n;
		p->frag_sched_pct /= n;
		(*n_points)++;
	}
	free(pct);
	return points;
}

int replay_measure(const struct replay_trace *tr, struct replay_result *r, struct gs_error *err)
{
	struct replay_meter m;
	struct replay_row *rows = gs_xcalloc(r->n_places + 2, sizeof(*rows));
	int64_t arrived = 0;
	int rc = -1;

	free(r->points);
	r->points = NULL;
	r->n_points = 0;
	r->bound = r->pending = 0;
	replay_meter_init(&m, tr, r);
	rows[0] = (struct replay_row){0, 0, 0, m.frag, m.idle, m.frag_sched, 0, 0, 0};
	for (size_t i = 0; i < r->n_places; i++) {
		struct replay_place *pl = &r->places[i];
		arrived += task_total_milli(&tr->tasks[pl->task]);
		if (pl->bound) {
			if (replay_meter_move(&m, pl, 1, err) < 0)
				goto out;
			r->bound++;
		} else {
			pl->node = -1;
			r->pending++;
		}
		rows[i + 1] = (struct replay_row){
			arrived, replay_meter_alloc(&m), (double)m.asked, m.frag,
			m.idle,	 m.frag_sched,		 r->bound,	  r->pending,
			0};
	}
	r->points = replay_bucket(rows, r->n_places + 1, r->capacity_milli, &r->n_points);
	rc = 0;
out:
	replay_meter_release(&m);
	free(rows);
	return rc;
}

int replay_check_size(const struct replay_trace *tr, struct gs_error *err)
{
	if (tr->n_nodes <= REPLAY_MAX_NODES && tr->n_tasks <= REPLAY_MAX_TASKS)
		return 0;
	gs_error_set(err, "more than %d nodes or %d tasks", REPLAY_MAX_NODES, REPLAY_MAX_TASKS);
	return -1;
}

int replay_result_new(const struct replay_trace *tr, int replicas, struct replay_result **out,
		      struct gs_error *err)
{
	struct replay_result *r = NULL;

	*out = NULL;
	if (replicas < 1 || replicas > REPLAY_MAX_REPLICAS) {
		gs_error_set(err, "replicas must be 1..%d", REPLAY_MAX_REPLICAS);
		return -1;
	}
	if (replay_check_size(tr, err) < 0)
		return -1;
	r = gs_xcalloc(1, sizeof(*r));
	r->replicas = replicas;
	r->n_nodes = tr->n_nodes;
	for (size_t i = 0; i < tr->n_nodes; i++) {
		const struct replay_node *n = &tr->nodes[i];
		if (n->gpus > 0 && !replay_gpu_product(n->model)) {
			gs_error_set(err, "node %s: no catalog GPU for the trace's model '%s'",
				     n->name, n->model);
			replay_result_free(r);
			return -1;
		}
		r->n_gpus += (size_t)(n->gpus > 0 ? n->gpus : 0);
	}
	r->capacity_milli = (int64_t)r->n_gpus * REPLAY_MILLI;
	if (!r->capacity_milli || !tr->n_tasks) {
		gs_error_set(err, "nothing to replay: the trace has %s",
			     tr->n_tasks ? "no GPU" : "no task");
		replay_result_free(r);
		return -1;
	}
	r->typical = replay_typical_mix(tr->tasks, tr->n_tasks, &r->n_typical);
	*out = r;
	return 0;
}

int replay_prepare(const struct replay_trace *tr, const struct replay_opts *o,
		   struct replay_result **out, struct gs_error *err)
{
	struct replay_result *r = NULL;
	size_t *order = NULL, n_order = 0, n_original = 0;
	int rc = -1;

	*out = NULL;
	if (o->replicas < 1 || o->replicas > REPLAY_MAX_REPLICAS || !(o->inflate > 0) ||
	    o->inflate > 1000) {
		gs_error_set(err, "replicas must be 1..%d and the inflation above 0 (at most 1000)",
			     REPLAY_MAX_REPLICAS);
		goto out;
	}
	if (replay_result_new(tr, o->replicas, &r, err) < 0 ||
	    replay_workload(tr, o, r->capacity_milli, &order, &n_order, &n_original, err) < 0)
		goto out;
	r->n_original = n_original;
	r->places = gs_xcalloc(n_order + 1, sizeof(*r->places));
	for (size_t i = 0; i < n_order; i++) {
		const struct replay_task *t = &tr->tasks[order[i]];
		struct replay_place *pl = &r->places[r->n_places++];
		pl->task = order[i];
		pl->node = -1;
		pl->name = i < n_original ? gs_xstrdup(t->name)
					  : gs_xasprintf("%s-tuned-%zu", t->name, i - n_original);
		pl->placed_at = pl->left_at = -1;
		r->arrived_milli += task_total_milli(t);
	}
	*out = r;
	r = NULL;
	rc = 0;
out:
	free(order);
	replay_result_free(r);
	return rc;
}

int replay_run(const struct catalog *cat, const struct replay_trace *tr,
	       const struct replay_opts *o, struct replay_result **out, struct gs_error *err)
{
	struct replay_result *r = NULL;

	*out = NULL;
	if (replay_prepare(tr, o, &r, err) < 0)
		return -1;
	if (place_offline(cat, tr, o, r, err) < 0 || replay_measure(tr, r, err) < 0) {
		replay_result_free(r);
		return -1;
	}
	*out = r;
	return 0;
}

void replay_result_free(struct replay_result *r)
{
	if (!r)
		return;
	for (size_t i = 0; i < r->n_places; i++) {
		free(r->places[i].name);
		free(r->places[i].reason);
		free(r->places[i].cards);
		free(r->places[i].replicas);
	}
	free(r->places);
	free(r->points);
	free(r->typical);
	replay_timeline_free(r->timeline);
	free(r);
}

void replay_timeline_free(struct replay_timeline *t)
{
	if (!t)
		return;
	for (size_t i = 0; i < t->n_waits; i++)
		free(t->waits[i].pool);
	free(t->waits);
	free(t->points);
	free(t);
}
