#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd/cmd.h"
#include "cmd/output.h"
#include "cmd/parseopt.h"
#include "engine/replay.h"
#include "fleet/trace.h"
#include "model/catalog.h"
#include "base/banned.h"

static const char *const usage_lines[] = {
	"gpushare replay NODES.csv PODS.csv [--replicas N] [--seed N] [--inflate X]\n"
	"                [--placements OUT.csv] [-o table|csv|json|yaml]",
	NULL,
};

static const struct parseopt_example replay_examples[] = {
	{"replay a small trace, 4 replicas per GPU",
	 "gpushare replay tests/golden/replay-small/nodes.csv tests/golden/replay-small/pods.csv"},
	{"2 replicas, another seed, every 1% as CSV with the placements",
	 "gpushare replay tests/golden/replay-small/nodes.csv tests/golden/replay-small/pods.csv "
	 "--replicas 2 --seed 7 -o csv --placements -"},
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
	"fragmentation ratio (docs/guide/replay.md).\n",
	"Exit status: 0 the replay ran (pending pods are part of the result), 2 bad\n"
	"usage or input.\n",
	replay_examples,
	NULL,
};

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

/* The point at `pct`, or NULL. */
static const struct replay_point *point_at(const struct replay_result *r, int pct)
{
	for (size_t i = 0; i < r->n_points; i++)
		if (r->points[i].pct == pct)
			return &r->points[i];
	return NULL;
}

static void print_table(const struct replay_result *r, const struct replay_opts *o)
{
	int last = r->n_points ? r->points[r->n_points - 1].pct : 0;
	const struct replay_point *p80 = point_at(r, 80), *pl = point_at(r, last);

	printf("nodes %zu, GPUs %zu, time-slicing %d replicas per GPU, seed %llu, inflation %g\n",
	       r->n_nodes, r->n_gpus, r->replicas, (unsigned long long)o->seed, o->inflate);
	printf("tasks arrived %zu (%zu of the trace, %zu drawn), GPU asked %.2f%% of capacity\n",
	       r->n_places, r->n_original, r->n_places - r->n_original,
	       100.0 * (double)r->arrived_milli / (double)r->capacity_milli);
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
	json_t *j = json_pack(
		"{s:i,s:I,s:o,s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:o,s:o}", "replicas", r->replicas,
		"seed", (json_int_t)o->seed, "inflate", real4(o->inflate), "nodes",
		(json_int_t)r->n_nodes, "gpus", (json_int_t)r->n_gpus, "trace_tasks",
		(json_int_t)tr->n_tasks, "arrived", (json_int_t)r->n_places, "drawn",
		(json_int_t)(r->n_places - r->n_original), "arrived_milli",
		(json_int_t)r->arrived_milli, "bound", (json_int_t)r->bound, "pending",
		(json_int_t)r->pending, "typical", typical, "points", points);
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
	fprintf(f, "name,step,verdict,node,cards,milli\n");
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

int cmd_replay(int argc, char **argv)
{
	struct gs_error err;
	char buf[2048];
	long replicas = 4, seed = 42;
	double inflate = 1.3;
	const char *placements = NULL;
	enum output_format fmt = OUTPUT_TABLE;
	int n, rc = EXIT_USAGE;
	const struct catalog *cat = NULL;
	struct replay_trace tr = {0};
	struct replay_result *res = NULL;
	struct option opts[] = {
		OPT_INT(0, "replicas", &replicas, "N", "time-slicing replicas per GPU [4]", 1,
			REPLAY_MAX_REPLICAS),
		OPT_INT(0, "seed", &seed, "N", "seed of the shuffle and the draws [42]", 0,
			2147483647L),
		OPT_CALLBACK(0, "inflate", &inflate, "X",
			     "GPU asked by the workload, times the capacity [1.3]", parse_inflate),
		OPT_STRING(0, "placements", &placements, "OUT.csv",
			   "write where each task went (node, cards, milli);\n- for standard "
			   "output, before the measures"),
		OPT_OUTPUT(
			&fmt, OUTPUT_TABLES | OUTPUT_ALLOW(OUTPUT_CSV),
			"table (every 10%), csv (every 1%), json or yaml\n(kind Replay) [table]"),
		OPT_END(),
	};

	n = parse_options(argc, argv, opts, &replay_usage);
	if (n < 0)
		return parseopt_exit(n);
	if (n != 2) {
		gs_error_set(&err, "replay takes two files, NODES.csv and PODS.csv");
		return usage_error(&replay_usage, &err);
	}
	struct replay_opts o = {
		.replicas = (int)replicas, .seed = (uint64_t)seed, .inflate = inflate};
	if (catalog_builtin(&cat, &err) < 0 || trace_load(argv[0], argv[1], &tr, &err) < 0 ||
	    replay_run(cat, &tr, &o, &res, &err) < 0 ||
	    (placements && write_placements(placements, res, &tr, &err) < 0))
		goto fail;
	if (fmt == OUTPUT_CSV)
		print_csv(res);
	else if (output_is_doc(fmt)) {
		if (print_doc(res, &tr, &o, fmt, &err) < 0)
			goto fail;
	} else
		print_table(res, &o);
	rc = EXIT_OK;
	goto out;
fail:
	cmd_eprintf("gpushare replay: %s\n", gs_error_str(&err, buf, sizeof(buf)));
out:
	replay_result_free(res);
	replay_trace_release(&tr);
	return rc;
}
