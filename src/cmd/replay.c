#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/wrapper.h"
#include "cmd/cmd.h"
#include "cmd/kubecontext.h"
#include "cmd/offline.h"
#include "cmd/output.h"
#include "cmd/parseopt.h"
#include "engine/replay.h"
#include "engine/replay_chart.h"
#include "engine/replay_design.h"
#include "engine/replay_events.h"
#include "engine/replay_spread.h"
#include "fleet/design.h"
#include "fleet/replay_live.h"
#include "fleet/trace.h"
#include "model/catalog.h"
#include "base/banned.h"

static const char *const usage_lines[] = {
	"gpushare replay NODES.csv PODS.csv [--replicas N] [--seed N] [--inflate X]\n"
	"                [--placements OUT.csv] [--html FILE] [--svg FILE]\n"
	"                [-o table|csv|json|yaml]",
	"gpushare replay NODES.csv PODS.csv --tie-seeds N [--replicas N] [--seed N]\n"
	"                [--inflate X] [-o table|csv]",
	"gpushare replay NODES.csv PODS.csv --design FILE [--design FILE...] [--seed N]\n"
	"                [--inflate X] [--html FILE] [--svg FILE]\n"
	"                [-o table|csv|json|yaml]",
	"gpushare replay NODES.csv PODS.csv --departures [--replicas N] [--seed N]\n"
	"                [--placements OUT.csv] [--html FILE] [--svg FILE]\n"
	"                [-o table|csv|json|yaml]",
	"gpushare replay NODES.csv PODS.csv --live [--compare [--tie-seeds N]] [--namespace NS]\n"
	"                [--keep] [--timeout DURATION] [--configmap NS/NAME] [--kubeconfig FILE] "
	"...",
	NULL,
};

static const struct parseopt_example replay_examples[] = {
	{"replay a small trace, 4 replicas per GPU",
	 "gpushare replay tests/golden/replay-small/nodes.csv tests/golden/replay-small/pods.csv"},
	{"compare time-slicing x4 with MIG and with DRA shares on the same workload, and\n"
	 "draw the comparison, one curve per design, into replay.html",
	 "gpushare replay tests/golden/replay-small/nodes.csv tests/golden/replay-small/pods.csv "
	 "--design docs/guide/designs/ts4.yaml --design docs/guide/designs/mig-balanced.yaml "
	 "--design docs/guide/designs/dra-shares.yaml --html replay.html"},
	{"the same workload on the cluster in KUBECONFIG (kube-scheduler places, gpushare's\n"
	 "controller gives cards), side by side with 30 offline runs' mean and range",
	 "gpushare replay tests/golden/replay-small/nodes.csv tests/golden/replay-small/pods.csv "
	 "--live --compare --tie-seeds 30"},
	{"in trace time: tasks arrive, wait when nothing fits, and leave; every 1% of\n"
	 "the span as CSV, with when each task was placed",
	 "gpushare replay tests/golden/replay-departures/nodes.csv "
	 "tests/golden/replay-departures/pods.csv --departures -o csv --placements -"},
	{NULL, NULL},
};
static const struct parseopt_usage replay_usage = {
	"replay",
	usage_lines,
	"Replay a GPU-sharing trace in the form of Alibaba's cluster-trace-gpu-v2023\n"
	"(node list and pod list CSV) offline: every GPU node time-sliced with N\n"
	"replicas per GPU (failRequestsGreaterThanOne false), every task a Pod asking\n"
	"for replicas of nvidia.com/gpu (a share: ceil(gpu_milli / (1000 / N)); whole\n"
	"GPUs: num_gpu x N), the workload as the FGD paper's simulator builds it\n"
	"(every task, shuffled, then draws with replacement up to X times the GPU\n"
	"capacity), placed in arrival order as kube-scheduler v1.37.2's default profile\n"
	"would (plan), each pod's replicas picked as the device plugin would. Prints,\n"
	"per percent of arrived GPU request, the GPU allocation ratio and the paper's\n"
	"fragmentation ratio (docs/guide/replay.md).\n"
	"\n"
	"With --tie-seeds N the same workload is replayed N times, the scheduler's\n"
	"draws among tied nodes from seeds --seed to --seed+N-1, and the allocation's\n"
	"mean, range and standard deviation over the runs are printed per percent:\n"
	"kube-scheduler breaks ties at random, so one run is one draw among these.\n"
	"\n"
	"With --design, each design file (YAML: per trace GPU model, time-slicing,\n"
	"MIG, DRA consumable shares or whole GPUs) is replayed on the same workload\n"
	"and the designs are compared: allocation at 100% and at the end, held GPU,\n"
	"fragmentation at 80%, stranded GPUs, pending tasks.\n"
	"\n"
	"With --departures the trace's own tasks are replayed once each in trace time:\n"
	"a task arrives at its creation_time and leaves at its deletion_time; one that\n"
	"fits nowhere waits, and the waiting tasks are tried again in arrival order\n"
	"when a bound task leaves; --seed seeds only the scheduler's pick among tied\n"
	"nodes. Prints, per 1% of the trace's span, the same ratios averaged over\n"
	"time and the tasks running and waiting, then the waits (arrival to\n"
	"placement) per pool.\n"
	"\n"
	"--html writes the same as charts, one self-contained page (inline CSS and\n"
	"SVG, nothing is fetched): per measure (allocation, fragmentation, stranded\n"
	"GPUs with --design, pending tasks) a chart against the arrived %, one curve\n"
	"per design or run; with --departures against trace time, running tasks\n"
	"instead of stranded GPUs; --svg the charts alone. FILE '-' is standard\n"
	"output, which then holds only the chart.\n"
	"\n"
	"--live replays the same workload on a cluster instead: one fake Node (kwok) per\n"
	"trace node, its own key in the device-plugin ConfigMap, the Pods created one at\n"
	"a time in arrival order, each waited for until kube-scheduler bound it and\n"
	"gpushare's controller (running in the cluster) admitted it, or it is\n"
	"unschedulable; the cards each pod got are read back and measured as offline.\n"
	"Everything made is deleted at the end unless --keep. --compare sets it beside\n"
	"the offline run, or with --tie-seeds N beside the N runs' mean and range.\n",
	"Exit status: 0 the replay ran (pending pods are part of the result), 2 bad\n"
	"usage or input, or the cluster failed or timed out.\n",
	replay_examples,
	NULL,
};

#define REPLAY_MAX_DESIGNS 16

static int parse_inflate(const struct option *opt, const char *arg, struct gs_error *err)
{
	double *x = opt->value;
	char *end;

	errno = 0;
	*x = strtod(arg, &end);
	if (errno || end == arg || *end || !(*x > 0) || *x > 1000) {
		gs_error_set(err, "--inflate takes a number above 0 (at most 1000), not '%s'", arg);
		return -1;
	}
	return 0;
}

/* ---- --departures: the replay in trace time ---------------------------------------- */

static void print_events_table(const struct replay_result *r, const struct replay_opts *o)
{
	const struct replay_timeline *tl = r->timeline;

	printf("nodes %zu, GPUs %zu, time-slicing %d replicas per GPU, in trace time with "
	       "departures, seed %llu\n",
	       r->n_nodes, r->n_gpus, r->replicas, (unsigned long long)o->seed);
	double span = (double)(tl->end - tl->start);
	bool days = span >= 2 * 86400;
	printf("tasks %zu in creation order, trace time %lld to %lld s (%.1f %s)\n", r->n_places,
	       (long long)tl->start, (long long)tl->end, span / (days ? 86400 : 3600),
	       days ? "days" : "hours");
	printf("ran %zu, never ran %zu (refused %zu); scheduling attempts %zu (%zu retries), "
	       "longest queue %zu\n\n",
	       r->bound, r->pending, tl->failed, tl->attempts, tl->retries, tl->max_pending);
	printf("%6s %12s %8s %8s %8s %8s %8s\n", "TIME%", "TIME", "ALLOC%", "ASKED%", "FRAG%",
	       "RUNNING", "PENDING");
	for (size_t i = 0; i < tl->n_points; i++) {
		const struct replay_tpoint *p = &tl->points[i];
		if (p->pct % 10)
			continue;
		printf("%6d %12lld %8.2f %8.2f %8.2f %8zu %8zu\n", p->pct, (long long)p->time,
		       p->alloc_pct, p->asked_pct, p->frag_pct, p->running, p->pending);
	}
	printf("\nwaits, arrival to placement (trace seconds, over the tasks that ran):\n");
	printf("%-12s %7s %7s %7s %10s %8s %8s %8s\n", "POOL", "TASKS", "RAN", "NEVER", "MEAN",
	       "P50", "P95", "MAX");
	for (size_t i = 0; i < tl->n_waits; i++) {
		const struct replay_waits *w = &tl->waits[i];
		printf("%-12s %7zu %7zu %7zu %10.1f %8lld %8lld %8lld\n", w->pool, w->tasks, w->ran,
		       w->never, w->mean, (long long)w->p50, (long long)w->p95, (long long)w->max);
	}
}

static void print_events_csv(const struct replay_result *r)
{
	const struct replay_timeline *tl = r->timeline;

	printf("time_pct,time,arrived,left,alloc_pct,asked_pct,frag_pct,frag_milli,idle_milli,"
	       "frag_sched_pct,running,pending\n");
	for (size_t i = 0; i < tl->n_points; i++) {
		const struct replay_tpoint *p = &tl->points[i];
		printf("%d,%lld,%zu,%zu,%.4f,%.4f,%.4f,%.1f,%.1f,%.4f,%zu,%zu\n", p->pct,
		       (long long)p->time, p->arrived, p->left, p->alloc_pct, p->asked_pct,
		       p->frag_pct, p->frag_milli, p->idle_milli, p->frag_sched_pct, p->running,
		       p->pending);
	}
}

static json_t *real4(double v);

static json_t *events_doc(const struct replay_result *r, const struct replay_trace *tr,
			  const struct replay_opts *o, json_t *typical)
{
	const struct replay_timeline *tl = r->timeline;
	json_t *steps = json_array(), *waits = json_array();

	for (size_t i = 0; i < tl->n_points; i++) {
		const struct replay_tpoint *p = &tl->points[i];
		json_array_append_new(
			steps,
			json_pack("{s:i,s:I,s:I,s:I,s:o,s:o,s:o,s:o,s:o,s:o,s:I,s:I}", "time_pct",
				  p->pct, "time", (json_int_t)p->time, "arrived",
				  (json_int_t)p->arrived, "left", (json_int_t)p->left, "alloc_pct",
				  real4(p->alloc_pct), "asked_pct", real4(p->asked_pct), "frag_pct",
				  real4(p->frag_pct), "frag_milli", real4(p->frag_milli),
				  "idle_milli", real4(p->idle_milli), "frag_sched_pct",
				  real4(p->frag_sched_pct), "running", (json_int_t)p->running,
				  "pending", (json_int_t)p->pending));
	}
	for (size_t i = 0; i < tl->n_waits; i++) {
		const struct replay_waits *w = &tl->waits[i];
		json_array_append_new(
			waits, json_pack("{s:s,s:I,s:I,s:I,s:o,s:I,s:I,s:I}", "pool", w->pool,
					 "tasks", (json_int_t)w->tasks, "ran", (json_int_t)w->ran,
					 "never", (json_int_t)w->never, "mean", real4(w->mean),
					 "p50", (json_int_t)w->p50, "p95", (json_int_t)w->p95,
					 "max", (json_int_t)w->max));
	}
	return json_pack(
		"{s:i,s:b,s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:o,"
		"s:o,s:o}",
		"replicas", r->replicas, "departures", 1, "seed", (json_int_t)o->seed, "nodes",
		(json_int_t)r->n_nodes, "gpus", (json_int_t)r->n_gpus, "trace_tasks",
		(json_int_t)tr->n_tasks, "arrived", (json_int_t)r->n_places, "arrived_milli",
		(json_int_t)r->arrived_milli, "bound", (json_int_t)r->bound, "pending",
		(json_int_t)r->pending, "start", (json_int_t)tl->start, "end", (json_int_t)tl->end,
		"attempts", (json_int_t)tl->attempts, "retries", (json_int_t)tl->retries,
		"max_pending", (json_int_t)tl->max_pending, "refused", (json_int_t)tl->failed,
		"typical", typical, "steps", steps, "waits", waits);
}

/* The columns --departures adds to a placement row: when it was bound and its wait. */
static void placement_times(FILE *f, const struct replay_place *p, const struct replay_trace *tr)
{
	if (p->placed_at < 0)
		fputs(",,", f);
	else
		fprintf(f, ",%lld,%lld", (long long)p->placed_at,
			(long long)(p->placed_at - tr->tasks[p->task].created));
}

/* The point at `pct`, or NULL. */
static const struct replay_point *point_at(const struct replay_result *r, int pct)
{
	for (size_t i = 0; i < r->n_points; i++)
		if (r->points[i].pct == pct)
			return &r->points[i];
	return NULL;
}

/* The header's lines of a replay: the fleet, the options, the workload. */
static void print_head(const struct replay_result *r, const struct replay_opts *o)
{
	printf("nodes %zu, GPUs %zu, time-slicing %d replicas per GPU, seed %llu, inflation %g\n",
	       r->n_nodes, r->n_gpus, r->replicas, (unsigned long long)o->seed, o->inflate);
	printf("tasks arrived %zu (%zu of the trace, %zu drawn), GPU asked %.2f%% of capacity\n",
	       r->n_places, r->n_original, r->n_places - r->n_original,
	       100.0 * (double)r->arrived_milli / (double)r->capacity_milli);
}

static void print_table(const struct replay_result *r, const struct replay_opts *o)
{
	int last = r->n_points ? r->points[r->n_points - 1].pct : 0;
	const struct replay_point *p80 = point_at(r, 80), *pl = point_at(r, last);

	print_head(r, o);
	printf("typical mix: %zu task shapes\n\n", r->n_typical);
	printf("%8s %8s %8s %8s %12s %8s %8s\n", "ARRIVED%", "ALLOC%", "ASKED%", "FRAG%",
	       "FRAG-GPU", "BOUND", "PENDING");
	for (size_t i = 0; i < r->n_points; i++) {
		const struct replay_point *p = &r->points[i];
		if (p->pct % 10 && p->pct != last)
			continue;
		printf("%8d %8.2f %8.2f %8.2f %12.1f %8zu %8zu\n", p->pct, p->alloc_pct,
		       p->asked_pct, p->frag_pct, p->frag_milli / 1000.0, p->bound, p->pending);
	}
	printf("\nat %d%% arrived: GPU allocation %.2f%% (asked %.2f%%)\n", last,
	       pl ? pl->alloc_pct : 0, pl ? pl->asked_pct : 0);
	if (p80)
		printf("at 80%% arrived: fragmentation %.2f%% (by replica counts %.2f%%)\n",
		       p80->frag_pct, p80->frag_sched_pct);
	else
		printf("at 80%% arrived: no arrival within 1%% of it\n");
}

static void print_csv(const struct replay_result *r)
{
	printf("arrived_pct,samples,alloc_pct,asked_pct,frag_pct,frag_milli,idle_milli,"
	       "frag_sched_pct,bound,pending\n");
	for (size_t i = 0; i < r->n_points; i++) {
		const struct replay_point *p = &r->points[i];
		printf("%d,%zu,%.4f,%.4f,%.4f,%.1f,%.1f,%.4f,%zu,%zu\n", p->pct, p->samples,
		       p->alloc_pct, p->asked_pct, p->frag_pct, p->frag_milli, p->idle_milli,
		       p->frag_sched_pct, p->bound, p->pending);
	}
}

/* A double rounded to 4 decimals, so the JSON does not carry float noise. */
static json_t *real4(double v)
{
	return json_real(round(v * 10000.0) / 10000.0);
}

static int print_doc(const struct replay_result *r, const struct replay_trace *tr,
		     const struct replay_opts *o, enum output_format fmt, struct gs_error *err)
{
	json_t *points = json_array(), *typical = json_array();

	for (size_t i = 0; i < r->n_typical; i++) {
		const struct replay_typical *t = &r->typical[i];
		json_array_append_new(typical,
				      json_pack("{s:I,s:i,s:i,s:s,s:o}", "cpu_milli",
						(json_int_t)t->cpu_milli, "num_gpu", t->num_gpu,
						"gpu_milli", t->gpu_milli, "gpu_spec", t->gpu_spec,
						"weight", real4(t->weight)));
	}
	for (size_t i = 0; i < r->n_points; i++) {
		const struct replay_point *p = &r->points[i];
		json_array_append_new(
			points,
			json_pack("{s:i,s:I,s:o,s:o,s:o,s:o,s:o,s:o,s:I,s:I}", "arrived_pct",
				  p->pct, "samples", (json_int_t)p->samples, "alloc_pct",
				  real4(p->alloc_pct), "asked_pct", real4(p->asked_pct), "frag_pct",
				  real4(p->frag_pct), "frag_milli", real4(p->frag_milli),
				  "idle_milli", real4(p->idle_milli), "frag_sched_pct",
				  real4(p->frag_sched_pct), "bound", (json_int_t)p->bound,
				  "pending", (json_int_t)p->pending));
	}
	if (r->timeline) {
		json_decref(points);
		points = NULL;
	}
	json_t *j = r->timeline ? events_doc(r, tr, o, typical)
				: json_pack("{s:i,s:I,s:o,s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:o,s:o}",
					    "replicas", r->replicas, "seed", (json_int_t)o->seed,
					    "inflate", real4(o->inflate), "nodes",
					    (json_int_t)r->n_nodes, "gpus", (json_int_t)r->n_gpus,
					    "trace_tasks", (json_int_t)tr->n_tasks, "arrived",
					    (json_int_t)r->n_places, "drawn",
					    (json_int_t)(r->n_places - r->n_original),
					    "arrived_milli", (json_int_t)r->arrived_milli, "bound",
					    (json_int_t)r->bound, "pending", (json_int_t)r->pending,
					    "typical", typical, "points", points);
	json_t *doc = output_stamp(j, "Replay");
	int rc = output_print(doc, fmt, 0, err);
	json_decref(doc);
	json_decref(j);
	return rc;
}

/* One row per arrival: name, step, node, cards and milli on each (';'-separated), or pending. */
static int write_placements(const char *path, const struct replay_result *r,
			    const struct replay_trace *tr, struct gs_error *err)
{
	bool out = !strcmp(path, "-");
	FILE *f = out ? stdout : fopen(path, "w");

	if (!f) {
		gs_error_set(err, "cannot write '%s': %s", path, strerror(errno));
		return -1;
	}
	fprintf(f, "name,step,verdict,node,cards,milli%s\n", r->timeline ? ",placed,wait" : "");
	for (size_t i = 0; i < r->n_places; i++) {
		const struct replay_place *p = &r->places[i];
		fprintf(f, "%s,%zu,%s,%s,", p->name, i + 1, p->bound ? "bound" : "pending",
			p->bound ? tr->nodes[p->node].name : "");
		for (int c = 0; c < p->n_cards; c++)
			fprintf(f, "%s%d", c ? ";" : "", p->cards[c]);
		fputc(',', f);
		for (int c = 0; c < p->n_cards; c++) {
			double m = (double)p->replicas[c] * 1000.0 / r->replicas;
			if (m == floor(m))
				fprintf(f, "%s%.0f", c ? ";" : "", m);
			else
				fprintf(f, "%s%.2f", c ? ";" : "", m);
		}
		if (r->timeline)
			placement_times(f, p, tr);
		fputc('\n', f);
	}
	if (out)
		return 0; /* main() checks standard output */
	if (ferror(f) | (fclose(f) != 0)) {
		gs_error_set(err, "cannot write '%s': %s", path, strerror(errno));
		return -1;
	}
	return 0;
}

/* ---- --design: one run per design, compared ------------------------------------ */

struct designs {
	const char **paths;
	size_t n;
};

static int add_design(const struct option *opt, const char *arg, struct gs_error *err)
{
	struct designs *d = opt->value;

	if (d->n >= REPLAY_MAX_DESIGNS) {
		gs_error_set(err, "--design: at most %d designs", REPLAY_MAX_DESIGNS);
		return -1;
	}
	d->paths = gs_xrealloc(d->paths, (d->n + 1) * sizeof(*d->paths));
	d->paths[d->n++] = arg;
	return 0;
}

/* What the comparison takes from one run. */
struct summary {
	int end; /* the last percent */
	const struct replay_point *p100, *p80, *pend;
};

static struct summary summarize(const struct replay_design_result *r)
{
	struct summary s = {0};

	for (size_t i = 0; i < r->n_points; i++) {
		const struct replay_point *p = &r->points[i];
		if (p->pct == 100)
			s.p100 = p;
		if (p->pct == 80)
			s.p80 = p;
	}
	if (r->n_points) {
		s.pend = &r->points[r->n_points - 1];
		s.end = s.pend->pct;
	}
	return s;
}

static void describe_pools(const struct replay_design *d, struct strbuf *out)
{
	for (size_t k = 0; k < d->n_pools; k++) {
		strbuf_addf(out, "%s%s ", k ? "; " : "", d->pools[k].pool);
		replay_pool_describe(&d->pools[k], out);
	}
}

static void cell(const struct replay_point *p, double v, int width, int prec)
{
	if (p)
		printf(" %*.*f", width, prec, v);
	else
		printf(" %*s", width, "-");
}

static void print_compare_table(struct replay_design_result **res, const struct replay_design *d,
				size_t n, const struct replay_opts *o)
{
	const struct replay_design_result *r0 = res[0];
	struct summary s0 = summarize(r0);
	char h_end[32], h_held[32], h_st[32];

	printf("nodes %zu, GPUs %zu, seed %llu, inflation %g\n", r0->n_nodes, r0->n_gpus,
	       (unsigned long long)o->seed, o->inflate);
	printf("tasks arrived %zu (%zu of the trace, %zu drawn), GPU asked %.2f%% of capacity\n",
	       r0->n_arrived, r0->n_original, r0->n_arrived - r0->n_original,
	       100.0 * (double)r0->arrived_milli / (double)r0->capacity_milli);
	printf("typical mix: %zu task shapes\n\n", r0->n_typical);
	for (size_t i = 0; i < n; i++) {
		struct strbuf sb = STRBUF_INIT;
		describe_pools(&d[i], &sb);
		printf("%s: %s\n", d[i].name, sb.buf);
		strbuf_release(&sb);
	}
	snprintf(h_end, sizeof(h_end), "ALLOC@%d%%", s0.end);
	snprintf(h_held, sizeof(h_held), "HELD@%d%%", s0.end);
	snprintf(h_st, sizeof(h_st), "STRAND@%d%%", s0.end);
	printf("\n%-16s %10s %10s %10s %9s %10s %11s %8s %7s\n", "DESIGN", "ALLOC@100%", h_end,
	       h_held, "FRAG@80%", "STRAND@80%", h_st, "PENDING", "NO-FIT");
	for (size_t i = 0; i < n; i++) {
		struct summary s = summarize(res[i]);
		printf("%-16s", res[i]->name);
		cell(s.p100, s.p100 ? s.p100->asked_pct : 0, 10, 2);
		cell(s.pend, s.pend ? s.pend->asked_pct : 0, 10, 2);
		cell(s.pend, s.pend ? s.pend->alloc_pct : 0, 10, 2);
		cell(s.p80, s.p80 ? s.p80->frag_pct : 0, 9, 2);
		cell(s.p80, s.p80 ? s.p80->stranded_milli / 1000.0 : 0, 10, 1);
		cell(s.pend, s.pend ? s.pend->stranded_milli / 1000.0 : 0, 11, 1);
		printf(" %8zu %7zu\n", res[i]->pending, res[i]->no_fit);
	}
	printf("\nALLOC: the paper's GPU allocation ratio (gpu_milli of the bound tasks over\n"
	       "the capacity); HELD: what the design hands out (replicas, MIG instances,\n"
	       "shares, GPUs, rounded up); FRAG: the paper's fragmentation ratio; STRAND:\n"
	       "idle GPU no typical task can use where it is, in GPUs; NO-FIT: pending tasks\n"
	       "that no pool of the design can express.\n");
}

static void csv_cell(const struct replay_point *p, double v)
{
	if (p)
		printf(",%.4f", v);
	else
		printf(",");
}

static void print_compare_csv(struct replay_design_result **res, size_t n)
{
	printf("design,alloc_100_pct,end_pct,alloc_end_pct,held_end_pct,frag_80_pct,"
	       "stranded_80_gpus,stranded_end_gpus,bound,pending,no_fit\n");
	for (size_t i = 0; i < n; i++) {
		struct summary s = summarize(res[i]);
		printf("%s", res[i]->name);
		csv_cell(s.p100, s.p100 ? s.p100->asked_pct : 0);
		printf(",%d", s.end);
		csv_cell(s.pend, s.pend ? s.pend->asked_pct : 0);
		csv_cell(s.pend, s.pend ? s.pend->alloc_pct : 0);
		csv_cell(s.p80, s.p80 ? s.p80->frag_pct : 0);
		csv_cell(s.p80, s.p80 ? s.p80->stranded_milli / 1000.0 : 0);
		csv_cell(s.pend, s.pend ? s.pend->stranded_milli / 1000.0 : 0);
		printf(",%zu,%zu,%zu\n", res[i]->bound, res[i]->pending, res[i]->no_fit);
	}
}

static json_t *opt_real(const struct replay_point *p, double v)
{
	return p ? real4(v) : json_null();
}

static json_t *pool_json(const struct replay_pool_design *p)
{
	switch (p->how) {
	case REPLAY_TIME_SLICING:
		return json_pack("{s:s,s:s,s:i}", "pool", p->pool, "sharing", "timeSlicing",
				 "replicas", p->replicas);
	case REPLAY_MIG:
		return json_pack("{s:s,s:s,s:s,s:s}", "pool", p->pool, "sharing", "mig", "gpu",
				 p->gpu->name, "layout", p->layout);
	case REPLAY_DRA_SHARES:
		return json_pack("{s:s,s:s,s:i}", "pool", p->pool, "sharing", "draShares", "shares",
				 p->shares);
	case REPLAY_WHOLE:
		break;
	}
	return json_pack("{s:s,s:s}", "pool", p->pool, "sharing", "whole");
}

static int print_compare_doc(struct replay_design_result **res, const struct replay_design *d,
			     size_t n, const struct replay_trace *tr, const struct replay_opts *o,
			     enum output_format fmt, struct gs_error *err)
{
	json_t *designs = json_array();
	const struct replay_design_result *r0 = res[0];

	for (size_t i = 0; i < n; i++) {
		struct summary s = summarize(res[i]);
		json_t *pools = json_array(), *points = json_array();
		for (size_t k = 0; k < d[i].n_pools; k++)
			json_array_append_new(pools, pool_json(&d[i].pools[k]));
		for (size_t k = 0; k < res[i]->n_points; k++) {
			const struct replay_point *p = &res[i]->points[k];
			json_array_append_new(
				points,
				json_pack("{s:i,s:I,s:o,s:o,s:o,s:o,s:o,s:o,s:I,s:I}",
					  "arrived_pct", p->pct, "samples", (json_int_t)p->samples,
					  "alloc_pct", real4(p->asked_pct), "held_pct",
					  real4(p->alloc_pct), "frag_pct", real4(p->frag_pct),
					  "frag_milli", real4(p->frag_milli), "idle_milli",
					  real4(p->idle_milli), "stranded_milli",
					  real4(p->stranded_milli), "bound", (json_int_t)p->bound,
					  "pending", (json_int_t)p->pending));
		}
		json_array_append_new(
			designs,
			json_pack("{s:s,s:o,s:{s:o,s:i,s:o,s:o,s:o,s:o,s:o,s:I,s:I,s:I},s:o}",
				  "name", d[i].name, "pools", pools, "summary", "alloc_100_pct",
				  opt_real(s.p100, s.p100 ? s.p100->asked_pct : 0), "end_pct",
				  s.end, "alloc_end_pct",
				  opt_real(s.pend, s.pend ? s.pend->asked_pct : 0), "held_end_pct",
				  opt_real(s.pend, s.pend ? s.pend->alloc_pct : 0), "frag_80_pct",
				  opt_real(s.p80, s.p80 ? s.p80->frag_pct : 0), "stranded_80_gpus",
				  opt_real(s.p80, s.p80 ? s.p80->stranded_milli / 1000.0 : 0),
				  "stranded_end_gpus",
				  opt_real(s.pend, s.pend ? s.pend->stranded_milli / 1000.0 : 0),
				  "bound", (json_int_t)res[i]->bound, "pending",
				  (json_int_t)res[i]->pending, "no_fit", (json_int_t)res[i]->no_fit,
				  "points", points));
	}
	json_t *j = json_pack(
		"{s:I,s:o,s:I,s:I,s:I,s:I,s:I,s:I,s:i,s:o}", "seed", (json_int_t)o->seed, "inflate",
		real4(o->inflate), "nodes", (json_int_t)r0->n_nodes, "gpus", (json_int_t)r0->n_gpus,
		"trace_tasks", (json_int_t)tr->n_tasks, "arrived", (json_int_t)r0->n_arrived,
		"drawn", (json_int_t)(r0->n_arrived - r0->n_original), "arrived_milli",
		(json_int_t)r0->arrived_milli, "typical", (int)r0->n_typical, "designs", designs);
	json_t *doc = output_stamp(j, "ReplayComparison");
	int rc = output_print(doc, fmt, 0, err);
	json_decref(doc);
	json_decref(j);
	return rc;
}

/* ---- --html, --svg: the charts ------------------------------------------------- */

/* Where the charts go (NULL: not asked for) and what their title names. */
struct charts {
	const char *html, *svg;
	const char *nodes_file, *pods_file;
};

static bool on_stdout(const char *path)
{
	return path && !strcmp(path, "-");
}

/* Whether a chart takes standard output (then it is all that is printed there). */
static bool charts_on_stdout(const struct charts *ch)
{
	return on_stdout(ch->html) || on_stdout(ch->svg);
}

static struct replay_chart chart_of(const struct charts *ch, const struct replay_opts *o,
				    size_t n_nodes, size_t n_gpus, size_t n_arrived,
				    size_t n_original, int64_t arrived_milli,
				    int64_t capacity_milli)
{
	return (struct replay_chart){
		.nodes_file = ch->nodes_file,
		.pods_file = ch->pods_file,
		.seed = o->seed,
		.inflate = o->inflate,
		.n_nodes = n_nodes,
		.n_gpus = n_gpus,
		.n_arrived = n_arrived,
		.n_original = n_original,
		.asked_pct =
			capacity_milli ? 100.0 * (double)arrived_milli / (double)capacity_milli : 0,
	};
}

/* Write the page and/or the picture of c; say what was written on standard error. */
static int write_charts(const struct charts *ch, const struct replay_chart *c, struct gs_error *err)
{
	struct strbuf sb = STRBUF_INIT;
	int rc = -1;

	if (ch->html) {
		replay_chart_html(c, &sb);
		if (output_write_file(ch->html, &sb, err) < 0)
			goto out;
	}
	if (ch->svg) {
		strbuf_reset(&sb);
		replay_chart_svg(c, &sb);
		if (output_write_file(ch->svg, &sb, err) < 0)
			goto out;
	}
	cmd_eprintf("gpushare replay: wrote %s%s%s: %zu charts, %zu curve%s\n",
		    ch->html ? ch->html : "", ch->html && ch->svg ? " and " : "",
		    ch->svg ? ch->svg : "", replay_chart_count(c), c->n_series,
		    c->n_series == 1 ? "" : "s");
	rc = 0;
out:
	strbuf_release(&sb);
	return rc;
}

/* The designs' charts: one curve per design, named as the comparison names it. */
static int design_charts(const struct charts *ch, struct replay_design_result **res,
			 const struct replay_design *d, size_t n, const struct replay_opts *o,
			 struct gs_error *err)
{
	const struct replay_design_result *r0 = res[0];
	struct replay_chart c = chart_of(ch, o, r0->n_nodes, r0->n_gpus, r0->n_arrived,
					 r0->n_original, r0->arrived_milli, r0->capacity_milli);
	struct replay_chart_series *s = gs_xcalloc(n, sizeof(*s));
	struct strbuf *details = gs_xcalloc(n, sizeof(*details));
	int rc;

	for (size_t i = 0; i < n; i++) {
		strbuf_init(&details[i], 0);
		describe_pools(&d[i], &details[i]);
		s[i] = (struct replay_chart_series){.name = res[i]->name,
						    .detail = details[i].buf,
						    .points = res[i]->points,
						    .n_points = res[i]->n_points};
	}
	c.stranded = true;
	c.series = s;
	c.n_series = n;
	rc = write_charts(ch, &c, err);
	for (size_t i = 0; i < n; i++)
		strbuf_release(&details[i]);
	free(details);
	free(s);
	return rc;
}

/* Load every design, run each on the same workload, print the comparison. */
static int run_designs(const struct catalog *cat, const struct replay_trace *tr,
		       const struct designs *paths, const struct replay_opts *o,
		       enum output_format fmt, const struct charts *ch, struct gs_error *err)
{
	struct replay_design *d = gs_xcalloc(paths->n + 1, sizeof(*d));
	struct replay_design_result **res = gs_xcalloc(paths->n + 1, sizeof(*res));
	size_t loaded = 0, ran = 0;
	int rc = -1;

	for (; loaded < paths->n; loaded++)
		if (design_load(cat, paths->paths[loaded], &d[loaded], err) < 0)
			goto out;
	for (; ran < paths->n; ran++)
		if (replay_design_run(cat, tr, o, &d[ran], &res[ran], err) < 0)
			goto out;
	if ((ch->html || ch->svg) && design_charts(ch, res, d, ran, o, err) < 0)
		goto out;
	rc = 0;
	if (charts_on_stdout(ch))
		goto out; /* the chart is the output */
	if (fmt == OUTPUT_CSV)
		print_compare_csv(res, ran);
	else if (output_is_doc(fmt))
		rc = print_compare_doc(res, d, ran, tr, o, fmt, err);
	else
		print_compare_table(res, d, ran, o);
out:
	for (size_t i = 0; i < ran; i++)
		replay_design_result_free(res[i]);
	for (size_t i = 0; i < loaded; i++)
		replay_design_release(&d[i]);
	free(res);
	free(d);
	return rc;
}

/*
 * The replay's charts: its one curve, time-slicing xN; with --live, the live
 * run's, after the offline run's when --compare ran it too (off non-NULL);
 * with --departures, its steps in trace time.
 */
static int replay_charts(const struct charts *ch, const struct replay_result *off,
			 const struct replay_result *r, bool live, const struct replay_opts *o,
			 struct gs_error *err)
{
	struct replay_chart c = chart_of(ch, o, r->n_nodes, r->n_gpus, r->n_places, r->n_original,
					 r->arrived_milli, r->capacity_milli);
	struct replay_chart_series s[2];
	char name[64];
	size_t n = 0;

	snprintf(name, sizeof(name), "time-slicing x%d", r->replicas);
	if (off)
		s[n++] = (struct replay_chart_series){.name = "offline (plan)",
						      .detail = name,
						      .points = off->points,
						      .n_points = off->n_points};
	if (r->timeline) {
		c.trace_time = true;
		c.start = r->timeline->start;
		c.end = r->timeline->end;
		c.n_ran = r->bound;
		s[n++] = (struct replay_chart_series){.name = name,
						      .steps = r->timeline->points,
						      .n_points = r->timeline->n_points};
	} else
		s[n++] = (struct replay_chart_series){.name = live ? "live (the cluster)" : name,
						      .detail = live ? name : NULL,
						      .points = r->points,
						      .n_points = r->n_points};
	c.series = s;
	c.n_series = n;
	return write_charts(ch, &c, err);
}

/* --tie-seeds offline: the runs' spread every 10% (and the last), or CSV every percent. */
static void print_spread(const struct replay_spread_point *sp, size_t n,
			 const struct replay_result *r, const struct replay_opts *o, size_t runs,
			 bool csv)
{
	int last = n ? sp[n - 1].pct : 0;
	const struct replay_spread_point *widest = NULL;

	if (csv) {
		printf("arrived_pct,runs,alloc_mean,alloc_min,alloc_max,alloc_sd,asked_mean,"
		       "frag_mean,pending_min,pending_max\n");
		for (size_t i = 0; i < n; i++)
			printf("%d,%zu,%.4f,%.4f,%.4f,%.4f,%.4f,%.4f,%zu,%zu\n", sp[i].pct,
			       sp[i].runs, sp[i].alloc_mean, sp[i].alloc_min, sp[i].alloc_max,
			       sp[i].alloc_sd, sp[i].asked_mean, sp[i].frag_mean, sp[i].pending_min,
			       sp[i].pending_max);
		return;
	}
	print_head(r, o);
	printf("%zu runs, the scheduler's draws among tied nodes from seeds %llu to %llu\n\n", runs,
	       (unsigned long long)o->seed, (unsigned long long)(o->seed + runs - 1));
	printf("%8s %10s %9s %9s %8s %7s %8s %8s %11s\n", "ARRIVED%", "ALLOC-MEAN", "ALLOC-MIN",
	       "ALLOC-MAX", "SD", "RANGE", "ASKED%", "FRAG%", "PENDING");
	for (size_t i = 0; i < n; i++) {
		const struct replay_spread_point *p = &sp[i];
		if (p->pct % 10 && p->pct != last)
			continue;
		char pending[48];
		snprintf(pending, sizeof(pending), "%zu-%zu", p->pending_min, p->pending_max);
		printf("%8d %10.2f %9.2f %9.2f %8.2f %7.2f %8.2f %8.2f %11s\n", p->pct,
		       p->alloc_mean, p->alloc_min, p->alloc_max, p->alloc_sd,
		       p->alloc_max - p->alloc_min, p->asked_mean, p->frag_mean, pending);
		if (!(p->pct % 10) && (!widest || p->alloc_max - p->alloc_min >
							  widest->alloc_max - widest->alloc_min))
			widest = p;
	}
	if (!widest)
		printf("\nno 10%% step in every run\n");
	else if (widest->alloc_max == widest->alloc_min)
		printf("\nthe allocation is the same in every run at every 10%% step\n");
	else
		printf("\nwidest range of the allocation at a 10%% step: %.2f points (%.2f to "
		       "%.2f), "
		       "at %d%%\n",
		       widest->alloc_max - widest->alloc_min, widest->alloc_min, widest->alloc_max,
		       widest->pct);
}

/*
 * live against the offline runs at the percents all have, as a table every
 * 10% or CSV: the offline columns are the runs' means (one run: its own),
 * DIFF live - offline; with several runs the table adds the range and how
 * far live lies outside it.
 */
static void print_compare(const struct replay_spread_point *sp, size_t n,
			  const struct replay_result *live, const struct replay_opts *o,
			  size_t runs, bool csv)
{
	double worst = -1, worst_out = -1;
	int worst_pct = 0, out_pct = 0;

	if (csv)
		printf("arrived_pct,alloc_offline,alloc_live,alloc_diff,asked_offline,asked_live,"
		       "asked_diff,frag_offline,frag_live,frag_diff,alloc_min,alloc_max,"
		       "alloc_outside\n");
	else if (runs == 1)
		printf("\noffline (plan) and live (the cluster), every 10%% arrived; DIFF = live - "
		       "offline, in points\n%8s %9s %9s %7s %9s %9s %7s %9s %9s %7s\n",
		       "ARRIVED%", "ALLOC-OFF", "ALLOC-LIV", "DIFF", "ASKED-OFF", "ASKED-LIV",
		       "DIFF", "FRAG-OFF", "FRAG-LIV", "DIFF");
	else
		printf("\noffline (plan, %zu runs: ties drawn from seeds %llu to %llu) and live "
		       "(the "
		       "cluster), every 10%% arrived;\nOFF the runs' mean, MIN and MAX their "
		       "range, "
		       "DIFF = live - mean, OUT how far live lies outside the range, in points\n"
		       "%8s %9s %9s %9s %9s %7s %6s %9s %9s %7s %9s %9s %7s\n",
		       runs, (unsigned long long)o->seed, (unsigned long long)(o->seed + runs - 1),
		       "ARRIVED%", "ALLOC-OFF", "ALLOC-MIN", "ALLOC-MAX", "ALLOC-LIV", "DIFF",
		       "OUT", "ASKED-OFF", "ASKED-LIV", "DIFF", "FRAG-OFF", "FRAG-LIV", "DIFF");
	for (size_t i = 0; i < n; i++) {
		const struct replay_spread_point *a = &sp[i];
		const struct replay_point *b = point_at(live, a->pct);
		if (!b || (!csv && a->pct % 10))
			continue;
		double d = b->alloc_pct - a->alloc_mean,
		       out = replay_spread_outside(a, b->alloc_pct);
		if (csv)
			printf("%d,%.4f,%.4f,%.4f,%.4f,%.4f,%.4f,%.4f,%.4f,%.4f,%.4f,%.4f,%.4f\n",
			       a->pct, a->alloc_mean, b->alloc_pct, d, a->asked_mean, b->asked_pct,
			       b->asked_pct - a->asked_mean, a->frag_mean, b->frag_pct,
			       b->frag_pct - a->frag_mean, a->alloc_min, a->alloc_max, out);
		else if (runs == 1)
			printf("%8d %9.2f %9.2f %+7.2f %9.2f %9.2f %+7.2f %9.2f %9.2f %+7.2f\n",
			       a->pct, a->alloc_mean, b->alloc_pct, d, a->asked_mean, b->asked_pct,
			       b->asked_pct - a->asked_mean, a->frag_mean, b->frag_pct,
			       b->frag_pct - a->frag_mean);
		else
			printf("%8d %9.2f %9.2f %9.2f %9.2f %+7.2f %6.2f %9.2f %9.2f %+7.2f %9.2f "
			       "%9.2f %+7.2f\n",
			       a->pct, a->alloc_mean, a->alloc_min, a->alloc_max, b->alloc_pct, d,
			       out, a->asked_mean, b->asked_pct, b->asked_pct - a->asked_mean,
			       a->frag_mean, b->frag_pct, b->frag_pct - a->frag_mean);
		if (a->pct % 10)
			continue;
		if (fabs(d) > worst) {
			worst = fabs(d);
			worst_pct = a->pct;
		}
		if (out > worst_out) {
			worst_out = out;
			out_pct = a->pct;
		}
	}
	if (csv)
		return;
	if (worst < 0)
		printf("\nno 10%% step in both runs\n");
	else if (runs == 1)
		printf("\nlargest allocation difference at a 10%% step: %.2f points, at %d%%\n",
		       worst, worst_pct);
	else {
		printf("\nlargest allocation difference from the offline mean at a 10%% step: %.2f "
		       "points, at %d%%\n",
		       worst, worst_pct);
		if (worst_out > 0)
			printf("live outside the offline runs' range at a 10%% step: by at most "
			       "%.2f "
			       "points, at %d%%\n",
			       worst_out, out_pct);
		else
			printf("live within the offline runs' range at every 10%% step\n");
	}
}

static void live_progress(void *arg, const char *line)
{
	(void)arg;
	cmd_eprintf("gpushare replay: %s\n", line);
}

int cmd_replay(int argc, char **argv)
{
	struct gs_error err;
	char buf[2048];
	long replicas = -1, seed = -1; /* -1, 0: not given (4, 42, 1.3) */
	struct designs designs = {0};
	double inflate = 0;
	bool departures = false;
	const char *placements = NULL;
	enum output_format fmt = OUTPUT_DEFAULT;
	struct charts ch = {0};
	int n, rc = EXIT_USAGE;
	const struct catalog *cat = NULL;
	struct replay_trace tr = {0};
	long tie_seeds = 0; /* 0: not given (one run) */
	struct replay_result **runs = NULL, *live_r = NULL;
	const struct replay_result *res = NULL;
	struct replay_spread_point *sp = NULL;
	size_t n_runs = 1, n_sp = 0;
	struct kube_context kx = {0};
	struct configmap_ref cm;
	bool live = false, compare = false, keep = false, usage_ok = false;
	const char *ns = NULL;
	long timeout_ms = 60000;
	struct option opts[] = {
		OPT_INT(0, "replicas", &replicas, "N", "time-slicing replicas per GPU [4]", 1,
			REPLAY_MAX_REPLICAS),
		OPT_INT(0, "seed", &seed, "N",
			"seed of the shuffle, the draws and the\nscheduler's pick among tied nodes "
			"[42]",
			0, 2147483647L),
		OPT_CALLBACK(0, "inflate", &inflate, "X",
			     "GPU asked by the workload, times the capacity [1.3]", parse_inflate),
		OPT_INT(0, "tie-seeds", &tie_seeds, "N",
			"replay N times, the scheduler's pick among tied nodes\ndrawn from seeds "
			"--seed to --seed+N-1 (the workload\nfrom --seed): the allocation's mean "
			"and range",
			1, REPLAY_MAX_TIE_SEEDS),
		OPT_BOOL(0, "departures", &departures,
			 "replay in trace time: tasks arrive at creation_time,\nwait when "
			 "nothing fits, leave at deletion_time"),
		OPT_STRING(0, "placements", &placements, "OUT.csv",
			   "write where each task went (node, cards, milli);\n- for standard "
			   "output, before the measures"),
		OPT_CALLBACK(0, "design", &designs, "FILE",
			     "a sharing design (YAML, docs/guide/replay.md); repeatable:\n"
			     "one run per design on the same workload, compared",
			     add_design),
		OPT_OUTPUT(
			&fmt, OUTPUT_TABLES | OUTPUT_ALLOW(OUTPUT_CSV),
			"table (every 10%), csv (every 1%), json or yaml\n(kind Replay) [table]"),
		OPT_STRING(0, "html", &ch.html, "FILE",
			   "the charts (a curve per design or run) as one page;\n- for standard "
			   "output, instead of -o"),
		OPT_STRING(0, "svg", &ch.svg, "FILE", "the charts alone, as SVG"),
		OPT_GROUP("Live (docs/guide/replay.md):"),
		OPT_BOOL(0, "live", &live,
			 "replay on the cluster: kube-scheduler places, gpushare's\n"
			 "controller gives cards"),
		OPT_BOOL(0, "compare", &compare,
			 "with --live, the offline run too and the differences per 10%\n"
			 "(-o csv: per 1%); with --tie-seeds N, the N runs' mean\nand range"),
		OPT_STRING(0, "namespace", &ns, "NS",
			   "the pods' namespace, created if absent [" REPLAY_LIVE_NAMESPACE "]"),
		OPT_BOOL(0, "keep", &keep, "leave the nodes, pods and ConfigMap key at the end"),
		OPT_DURATION(0, "timeout", &timeout_ms, "DURATION",
			     "limit of one wait (the nodes' advertisement, one pod) [60s]",
			     86400000L),
		OPT_CALLBACK(0, "configmap", &cm, "NS/NAME",
			     "the device-plugin ConfigMap the controller reads\n"
			     "[gpu-share/device-plugin-configs]",
			     parse_configmap_ref),
		OPT_KUBE_CONNECTION(&kx.opts),
		OPT_END(),
	};

	configmap_ref_init(&cm);
	n = parse_options(argc, argv, opts, &replay_usage);
	if (n < 0) {
		rc = parseopt_exit(n);
		goto out;
	}
	if (n != 2)
		gs_error_set(&err, "replay takes two files, NODES.csv and PODS.csv");
	else if (designs.n && departures)
		gs_error_set(&err, "--design compares designs on the paper's shuffled, inflated "
				   "workload, which has no departures: not with --departures");
	else if (designs.n && live)
		gs_error_set(&err, "--design replays offline: not with --live");
	else if (designs.n && (replicas >= 0 || placements))
		gs_error_set(&err, "--design says how each pool shares its GPUs: not with "
				   "--replicas or --placements");
	else if (departures && (live || compare))
		gs_error_set(&err, "--departures replays offline (a live replay creates the "
				   "pods, it does not delete them): not with --live or --compare");
	else if (departures && inflate > 0)
		gs_error_set(&err, "--departures replays the trace's own tasks once each, in "
				   "creation order: --inflate (of the paper's inflated workload) "
				   "does not apply");
	else if (!live && (compare || keep || ns || cm.given || timeout_ms != 60000))
		gs_error_set(&err, "--%s needs --live",
			     compare	? "compare"
			     : keep	? "keep"
			     : ns	? "namespace"
			     : cm.given ? "configmap"
					: "timeout");
	else if (compare && output_is_doc(fmt))
		gs_error_set(&err, "--compare prints a table or CSV, not -o json or yaml");
	else if (tie_seeds && (designs.n || departures))
		gs_error_set(&err,
			     "--tie-seeds reruns the replay of the shuffled, inflated workload "
			     "with other draws among tied nodes: not with --%s",
			     designs.n ? "design" : "departures");
	else if (tie_seeds && live && !compare)
		gs_error_set(&err, "--tie-seeds with --live needs --compare: the live run is one "
				   "draw among ties, set beside the offline runs");
	else if (tie_seeds && !live && (placements || ch.html || ch.svg || output_is_doc(fmt)))
		gs_error_set(&err,
			     "--tie-seeds prints the runs' spread as a table or CSV: not with %s",
			     placements ? "--placements"
			     : ch.html	? "--html"
			     : ch.svg	? "--svg"
					: "-o json or yaml");
	else if (charts_on_stdout(&ch) && ((on_stdout(ch.html) && on_stdout(ch.svg)) ||
					   fmt != OUTPUT_DEFAULT || on_stdout(placements)))
		gs_error_set(&err, "--%s - writes the chart to standard output: not with %s",
			     on_stdout(ch.html) ? "html" : "svg",
			     on_stdout(ch.html) && on_stdout(ch.svg) ? "--svg -"
			     : fmt != OUTPUT_DEFAULT		     ? "-o"
								     : "--placements -");
	else
		usage_ok = true;
	if (!usage_ok) {
		rc = usage_error(&replay_usage, &err);
		goto out;
	}
	if (fmt == OUTPUT_DEFAULT)
		fmt = OUTPUT_TABLE;
	ch.nodes_file = argv[0];
	ch.pods_file = argv[1];
	struct replay_opts o = {.replicas = replicas < 0 ? 4 : (int)replicas,
				.seed = (uint64_t)(seed >= 0 ? seed : 42),
				.inflate = inflate > 0 ? inflate : 1.3};
	if (designs.n) {
		if (catalog_builtin(&cat, &err) < 0 ||
		    trace_load(argv[0], argv[1], 0, &tr, &err) < 0 ||
		    run_designs(cat, &tr, &designs, &o, fmt, &ch, &err) < 0)
			goto fail;
		rc = EXIT_OK;
		goto out;
	}
	if (catalog_builtin(&cat, &err) < 0 ||
	    trace_load(argv[0], argv[1], departures ? TRACE_TIMES : 0, &tr, &err) < 0)
		goto fail;
	/* Offline: one run, or with --tie-seeds N the same workload with ties drawn anew. */
	if (tie_seeds)
		n_runs = (size_t)tie_seeds;
	runs = gs_xcalloc(n_runs, sizeof(*runs));
	if (departures) {
		if (replay_events_run(cat, &tr, &o, &runs[0], &err) < 0)
			goto fail;
	} else if (!live || compare) {
		for (size_t i = 0; i < n_runs; i++) {
			struct replay_opts oi = o;
			oi.tie_offset = i;
			if (replay_run(cat, &tr, &oi, &runs[i], &err) < 0)
				goto fail;
		}
		sp = replay_spread((const struct replay_result *const *)runs, n_runs, &n_sp);
	}
	res = runs[0];
	if (live) {
		struct replay_live_opts lo = {
			.ns = ns ? ns : REPLAY_LIVE_NAMESPACE,
			.cm_ns = cm.ns,
			.cm_name = cm.name,
			.keep = keep,
			.timeout_ms = timeout_ms,
			.progress = live_progress,
		};
		if (kube_context_open(&kx, "replay", &err) < 0 ||
		    replay_live_run(kx.client, cat, &tr, &o, &lo, &live_r, &err) < 0)
			goto fail;
		res = live_r;
	}
	if (placements && write_placements(placements, res, &tr, &err) < 0)
		goto fail;
	if ((ch.html || ch.svg) &&
	    replay_charts(&ch, live ? runs[0] : NULL, res, live, &o, &err) < 0)
		goto fail;
	if (charts_on_stdout(&ch)) {
		rc = EXIT_OK; /* the chart is the output */
		goto out;
	}
	if (compare && fmt == OUTPUT_CSV)
		print_compare(sp, n_sp, res, &o, n_runs, true);
	else if (tie_seeds && !live)
		print_spread(sp, n_sp, res, &o, n_runs, fmt == OUTPUT_CSV);
	else if (fmt == OUTPUT_CSV && res->timeline)
		print_events_csv(res);
	else if (fmt == OUTPUT_CSV)
		print_csv(res);
	else if (output_is_doc(fmt)) {
		if (print_doc(res, &tr, &o, fmt, &err) < 0)
			goto fail;
	} else if (res->timeline)
		print_events_table(res, &o);
	else {
		print_table(res, &o);
		if (compare)
			print_compare(sp, n_sp, res, &o, n_runs, false);
	}
	rc = EXIT_OK;
	goto out;
fail:
	cmd_eprintf("gpushare replay: %s\n", gs_error_str(&err, buf, sizeof(buf)));
out:
	free(designs.paths);
	free(sp);
	for (size_t i = 0; runs && i < n_runs; i++)
		replay_result_free(runs[i]);
	free(runs);
	replay_result_free(live_r);
	replay_trace_release(&tr);
	kube_context_release(&kx);
	configmap_ref_release(&cm);
	return rc;
}
