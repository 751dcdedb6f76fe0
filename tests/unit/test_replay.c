/*
 * engine/replay: the replicas a task asks for, the typical mix, the paper's
 * fragmentation of one node, and a whole replay on a fleet small enough to
 * check by hand (expected values worked out in the comments).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/replay.h"
#include "base/wrapper.h"
#include "engine/replay_design.h"
#include "engine/replay_events.h"
#include "engine/replay_spread.h"
#include "fleet/design.h"

static void replicas_asked(void **state)
{
	(void)state;
	struct replay_task share = {.num_gpu = 1, .gpu_milli = 460};
	struct replay_task quarter = {.num_gpu = 1, .gpu_milli = 250};
	struct replay_task two = {.num_gpu = 2, .gpu_milli = 1000};
	struct replay_task none = {0};
	struct replay_task third = {.num_gpu = 1, .gpu_milli = 333};
	struct replay_task over = {.num_gpu = 1, .gpu_milli = 334};

	/* 1000 / 4 = 250 a replica: 460 needs 2, 250 exactly 1, two whole GPUs 8. */
	assert_int_equal(replay_task_replicas(&share, 4), 2);
	assert_int_equal(replay_task_replicas(&quarter, 4), 1);
	assert_int_equal(replay_task_replicas(&two, 4), 8);
	assert_int_equal(replay_task_replicas(&none, 4), 0);
	/* 1000 / 3 = 333.3: 333 fits one replica, 334 does not. */
	assert_int_equal(replay_task_replicas(&third, 3), 1);
	assert_int_equal(replay_task_replicas(&over, 3), 2);
	assert_int_equal(replay_task_replicas(&share, 1), 1);
}

static struct replay_task task(const char *name, long cpu, int num, int milli, const char *spec)
{
	return (struct replay_task){(char *)name, cpu, 1024, num, milli, (char *)spec, -1, -1, -1};
}

static void typical_mix_cut_at_95(void **state)
{
	(void)state;
	struct replay_task t[20];
	size_t n;

	/*
	 * 19 tasks of one shape and 1 of another: the first shape alone covers
	 * 19/20 = 95% of the tasks, so the mix is that shape, renormalised to 1.
	 */
	for (int i = 0; i < 19; i++)
		t[i] = task("a", 1000, 1, 500, "");
	t[19] = task("b", 2000, 0, 0, "");
	struct replay_typical *m = replay_typical_mix(t, 20, &n);
	assert_int_equal(n, 1);
	assert_int_equal(m[0].gpu_milli, 500);
	assert_true(fabs(m[0].weight - 1.0) < 1e-12);
	free(m);

	/*
	 * 3 + 1 of 4: 3/4 < 95%, so both shapes, weights 0.75 and 0.25, the more
	 * popular first; a cpu of 0 counts as the scheduler's 100m.
	 */
	t[0] = task("a", 0, 0, 0, "");
	t[1] = task("b", 1000, 1, 1000, "T4");
	t[2] = task("c", 1000, 1, 1000, "T4");
	t[3] = task("d", 1000, 1, 1000, "T4");
	m = replay_typical_mix(t, 4, &n);
	assert_int_equal(n, 2);
	assert_int_equal(m[0].gpu_milli, 1000);
	assert_string_equal(m[0].gpu_spec, "T4");
	assert_true(fabs(m[0].weight - 0.75) < 1e-12);
	assert_int_equal(m[1].cpu_milli, 100);
	assert_true(fabs(m[1].weight - 0.25) < 1e-12);
	free(m);
}

static void node_fragmentation(void **state)
{
	(void)state;
	/* Two cards, 1000 and 250 idle (1250 in all); 4000 cpu left; a T4 node. */
	double left[] = {1000, 250}, idle;
	struct replay_typical mix[] = {
		{1000, 500, 1, "",
		 0.5}, /* fits card 0 (q3): card 1 (250 < 500) is frag: 0.5 x 250 */
		{8000, 1000, 1, "", 0.25}, /* a card fits, the cpu does not (q4): 0.25 x 1250 */
		{1000, 0, 0, "", 0.25},	   /* a cpu task (xl): all idle GPU, 0.25 x 1250 */
	};
	/* 125 + 312.5 + 312.5 = 750 */
	assert_true(fabs(replay_node_frag(left, 2, 4000, "T4", mix, 3, &idle) - 750) < 1e-9);
	assert_true(fabs(idle - 1250) < 1e-9);
	/* The first shape asks for a V100M32: no access, all idle: 625 + 312.5 + 312.5 */
	mix[0].gpu_spec = "V100M32|A10";
	assert_true(fabs(replay_node_frag(left, 2, 4000, "T4", mix, 3, &idle) - 1250) < 1e-9);
	/* ... or a T4 among others: back to 750. */
	mix[0].gpu_spec = "V100M32|T4";
	assert_true(fabs(replay_node_frag(left, 2, 4000, "T4", mix, 3, &idle) - 750) < 1e-9);
	/* Two cards of 500 wanted (num_gpu 2): only one card fits: q2, all idle. */
	mix[0] = (struct replay_typical){1000, 500, 2, "", 0.5};
	assert_true(fabs(replay_node_frag(left, 2, 4000, "T4", mix, 3, &idle) - 1250) < 1e-9);
	/* No idle GPU: no fragmentation. */
	double full[] = {0, 0};
	assert_true(replay_node_frag(full, 2, 4000, "T4", mix, 3, &idle) == 0);
	assert_true(idle == 0);
}

static const struct replay_point *point(const struct replay_result *r, int pct)
{
	for (size_t i = 0; i < r->n_points; i++)
		if (r->points[i].pct == pct)
			return &r->points[i];
	return NULL;
}

static void tiny_fleet(void **state)
{
	(void)state;
	const struct catalog *cat;
	struct gs_error err;
	char buf[512];
	/* One node, 2 T4s (capacity 2000 milli), 8 cores; 4 replicas per GPU (250 each). */
	struct replay_node nodes[] = {{"n", 8000, 65536, 2, "T4"}};
	/* a: a whole GPU (4 replicas); b: 500 (2 replicas). 1500 of 2000 asked. */
	struct replay_task tasks[] = {
		{"a", 1000, 1024, 1, 1000, "", -1, -1, -1},
		{"b", 1000, 1024, 1, 500, "", -1, -1, -1},
	};
	struct replay_trace tr = {nodes, 1, tasks, 2};
	/* 0.75 x 2000 = 1500: exactly the trace, nothing drawn. */
	struct replay_opts o = {.replicas = 4, .seed = 1, .inflate = 0.75};
	struct replay_result *r = NULL;

	assert_int_equal(catalog_builtin(&cat, &err), 0);
	if (replay_run(cat, &tr, &o, &r, &err) < 0)
		fail_msg("%s", gs_error_str(&err, buf, sizeof(buf)));
	assert_int_equal(r->n_places, 2);
	assert_int_equal(r->n_original, 2);
	assert_int_equal(r->bound, 2);
	assert_int_equal(r->pending, 0);
	/*
	 * The plugin hands out replicas one at a time from the card with the
	 * fewest taken: whichever comes first, a ends with 2 replicas on each
	 * card (500 + 500), b with one on each (250 + 250).
	 */
	for (size_t i = 0; i < 2; i++) {
		const struct replay_place *p = &r->places[i];
		int each = !strcmp(p->name, "a") ? 2 : 1;
		assert_true(p->bound);
		assert_int_equal(p->node, 0);
		assert_int_equal(p->n_cards, 2);
		assert_int_equal(p->replicas[0], each);
		assert_int_equal(p->replicas[1], each);
	}
	/*
	 * After both (arrived 1500 = 75%): 6 of 8 replicas held, 1500 milli:
	 * allocation 75%, asked 75%. Each card has 250 idle (500 in all) and
	 * 6000 cpu left. The mix: a and b, 0.5 each. a needs a card with 1000
	 * idle: none (q2), 0.5 x 500; b a card with 500: none (q2), 0.5 x 500:
	 * frag 500 of 500 idle, 100%. By replica counts: 2 free replicas; a
	 * wants 4 (frag, 0.5 x 500), b wants 2 (fits): 250 of 500, 50%.
	 */
	const struct replay_point *p = point(r, 75);
	assert_non_null(p);
	assert_int_equal(p->samples, 1);
	assert_true(fabs(p->alloc_pct - 75) < 1e-9);
	assert_true(fabs(p->asked_pct - 75) < 1e-9);
	assert_true(fabs(p->idle_milli - 500) < 1e-9);
	assert_true(fabs(p->frag_milli - 500) < 1e-9);
	assert_true(fabs(p->frag_pct - 100) < 1e-9);
	assert_true(fabs(p->frag_sched_pct - 50) < 1e-9);
	assert_int_equal(p->bound, 2);
	/*
	 * Before anything arrived (0%): 2000 idle on two whole cards, both
	 * shapes fit, no card too small: frag 0.
	 */
	p = point(r, 0);
	assert_non_null(p);
	assert_true(p->frag_milli == 0);
	assert_true(fabs(p->idle_milli - 2000) < 1e-9);
	replay_result_free(r);
}

static void inflation_draws(void **state)
{
	(void)state;
	const struct catalog *cat;
	struct gs_error err;
	char buf[512];
	struct replay_node nodes[] = {{"n", 64000, 65536, 4, "V100M16"},
				      {"cpu", 8000, 8192, 0, ""}};
	struct replay_task tasks[] = {
		{"a", 1000, 1024, 1, 1000, "", -1, -1, -1},
		{"b", 1000, 1024, 1, 500, "P100", -1, -1, -1},
	};
	struct replay_trace tr = {nodes, 2, tasks, 2};
	/* 2 x 4000 = 8000 milli wanted: draws are added while the next one fits. */
	struct replay_opts o = {.replicas = 4, .seed = 7, .inflate = 2};
	struct replay_result *r = NULL;

	assert_int_equal(catalog_builtin(&cat, &err), 0);
	if (replay_run(cat, &tr, &o, &r, &err) < 0)
		fail_msg("%s", gs_error_str(&err, buf, sizeof(buf)));
	assert_true(r->n_places > 2);
	assert_true(r->arrived_milli <= 8000 && r->arrived_milli > 7000);
	for (size_t i = 0; i < r->n_places; i++) {
		const struct replay_place *p = &r->places[i];
		/* b asks for a P100: there is none, it stays pending. */
		if (!strcmp(tasks[p->task].name, "b"))
			assert_false(p->bound);
		if (i >= 2)
			assert_non_null(strstr(p->name, "-tuned-"));
	}
	/* 4 a fit (16 replicas); the rest wait. */
	assert_int_equal(r->places[0].node == 0 || r->places[0].node == -1, 1);
	size_t bound = 0;
	for (size_t i = 0; i < r->n_places; i++)
		bound += r->places[i].bound;
	assert_int_equal(bound, r->bound);
	assert_true(r->bound <= 4);
	replay_result_free(r);

	o.inflate = 0;
	assert_int_equal(replay_run(cat, &tr, &o, &r, &err), -1);
	o.inflate = 1;
	o.replicas = 0;
	assert_int_equal(replay_run(cat, &tr, &o, &r, &err), -1);
}

/* Task -> MIG profile on an A100 80GB (7 compute slices): the fewest slices covering gpu_milli. */
static void mig_profile_of_task(void **state)
{
	(void)state;
	const struct catalog *cat = NULL;
	struct gs_error err;
	struct catalog_gpu_mig bal, one, seven;
	const struct catalog_mig_profile *p;
	int count;

	assert_int_equal(catalog_builtin(&cat, &err), 0);
	const struct catalog_gpu *a100 = catalog_find_gpu(cat, "NVIDIA A100-SXM4-80GB");
	assert_non_null(a100);
	assert_int_equal(catalog_layout_apply(cat, "all-balanced", a100, &bal, &err), 0);
	assert_int_equal(catalog_layout_apply(cat, "all-1g.10gb", a100, &one, &err), 0);
	assert_int_equal(catalog_layout_apply(cat, "all-7g.80gb", a100, &seven, &err), 0);

	/* all-balanced: 1g (1/7 = 142.9 milli), 2g (285.7), 3g (428.6). */
	p = replay_mig_profile(a100, &bal, 110, 1, &count);
	assert_string_equal(p->name, "1g.10gb");
	assert_int_equal(count, 1);
	p = replay_mig_profile(a100, &bal, 142, 1, &count);
	assert_string_equal(p->name, "1g.10gb");
	/* 143 > 1000 / 7: one slice is too small. */
	p = replay_mig_profile(a100, &bal, 143, 1, &count);
	assert_string_equal(p->name, "2g.20gb");
	p = replay_mig_profile(a100, &bal, 250, 1, &count);
	assert_string_equal(p->name, "2g.20gb");
	p = replay_mig_profile(a100, &bal, 428, 1, &count);
	assert_string_equal(p->name, "3g.40gb");
	/* 460 needs 4 slices, a whole GPU needs 7g: all-balanced has neither. */
	assert_null(replay_mig_profile(a100, &bal, 460, 1, &count));
	assert_int_equal(count, 0);
	assert_null(replay_mig_profile(a100, &bal, 1000, 1, &count));
	/* all-1g.10gb holds only 1g. */
	assert_string_equal(replay_mig_profile(a100, &one, 50, 1, &count)->name, "1g.10gb");
	assert_null(replay_mig_profile(a100, &one, 200, 1, &count));
	/* all-7g.80gb: a share takes the whole 7g; two whole GPUs two instances. */
	assert_string_equal(replay_mig_profile(a100, &seven, 50, 1, &count)->name, "7g.80gb");
	assert_int_equal(count, 1);
	assert_string_equal(replay_mig_profile(a100, &seven, 1000, 2, &count)->name, "7g.80gb");
	assert_int_equal(count, 2);
	/* No GPU, none. */
	assert_null(replay_mig_profile(a100, &seven, 0, 0, &count));
}

/* Task -> DRA shares: ceil(gpu_milli x S / 1000) of one device, or all S of num_gpu devices. */
static void dra_shares_of_task(void **state)
{
	(void)state;
	int count;

	assert_int_equal(replay_dra_shares(460, 1, 100, &count), 46);
	assert_int_equal(count, 1);
	assert_int_equal(replay_dra_shares(461, 1, 100, &count), 47);
	assert_int_equal(replay_dra_shares(1, 1, 100, &count), 1);
	assert_int_equal(replay_dra_shares(999, 1, 100, &count), 100);
	assert_int_equal(replay_dra_shares(1000, 2, 100, &count), 100);
	assert_int_equal(count, 2);
	assert_int_equal(replay_dra_shares(250, 1, 4, &count), 1);
	assert_int_equal(replay_dra_shares(0, 0, 100, &count), 0);
	assert_int_equal(count, 0);
}

static const char *const fleet_yaml[] = {
	"pools: {'*': {mig: {gpu: NVIDIA A100-SXM4-80GB, layout: all-balanced}}}\n",
	"pools: {'*': {draShares: {shares: 100}}}\n",
	"pools: {'*': {timeSlicing: {replicas: 4}}}\n",
	"pools: {'*': {whole: {}}}\n",
};

/*
 * One node of 1 GPU, tasks of 460, 250, 110 and 110 milli (no drawn
 * copies at inflation 1): under all-balanced 460 fits nothing, 250 takes
 * the 2g (2/7), the 110s the two 1g; the 3g stays idle, usable by no
 * typical shape but 460's (which does not fit): stranded. Under DRA shares
 * all four fit one device (46 + 25 + 11 + 11 = 93 shares). Under whole
 * GPUs only the first to arrive.
 */
static void design_runs(void **state)
{
	(void)state;
	const struct catalog *cat = NULL;
	struct gs_error err;
	struct replay_node nodes[] = {{"n0", 64000, 262144, 1, "T4"}};
	struct replay_task tasks[] = {task("a", 1000, 1, 460, ""), task("b", 1000, 1, 250, ""),
				      task("c", 1000, 1, 110, ""), task("d", 1000, 1, 110, "")};
	struct replay_trace tr = {nodes, 1, tasks, 4};
	struct replay_opts o = {.replicas = 4, .seed = 42, .inflate = 0.93};
	struct replay_design d[4];
	struct replay_design_result *r;

	assert_int_equal(catalog_builtin(&cat, &err), 0);
	for (size_t i = 0; i < 4; i++)
		assert_int_equal(design_parse(cat, "t.yaml", fleet_yaml[i], strlen(fleet_yaml[i]),
					      &d[i], &err),
				 0);
	assert_string_equal(d[0].name, "t");

	assert_int_equal(replay_design_run(cat, &tr, &o, &d[0], &r, &err), 0);
	assert_int_equal(r->n_arrived, 4);
	assert_int_equal(r->bound, 3);
	assert_int_equal(r->pending, 1);
	assert_int_equal(r->no_fit, 1);
	const struct replay_point *end = &r->points[r->n_points - 1];
	/* held: 2/7 + 2 x 1/7 = 4/7 of the GPU; asked 470 milli. */
	assert_true(fabs(end->alloc_pct - 100.0 * 4 / 7) < 1e-6);
	assert_true(fabs(end->asked_pct - 47.0) < 1e-6);
	assert_true(fabs(end->idle_milli - 3000.0 / 7) < 1e-6);
	assert_true(fabs(end->stranded_milli - 3000.0 / 7) < 1e-6);
	assert_true(fabs(end->frag_pct - 100.0) < 1e-6);
	replay_design_result_free(r);

	assert_int_equal(replay_design_run(cat, &tr, &o, &d[1], &r, &err), 0);
	assert_int_equal(r->bound, 4);
	end = &r->points[r->n_points - 1];
	assert_true(fabs(end->alloc_pct - 93.0) < 1e-6);
	assert_true(fabs(end->idle_milli - 70.0) < 1e-6);
	replay_design_result_free(r);

	/* Time-slicing x4: 2 + 1 + 1 replicas, then none left for the last. */
	assert_int_equal(replay_design_run(cat, &tr, &o, &d[2], &r, &err), 0);
	assert_int_equal(r->bound, 3);
	assert_int_equal(r->no_fit, 0);
	replay_design_result_free(r);

	assert_int_equal(replay_design_run(cat, &tr, &o, &d[3], &r, &err), 0);
	assert_int_equal(r->bound, 1);
	end = &r->points[r->n_points - 1];
	assert_true(fabs(end->alloc_pct - 100.0) < 1e-6);
	replay_design_result_free(r);

	/* A design silent on the trace's model. */
	struct replay_design g2only;
	const char *y = "pools: {G2: {whole: {}}}\n";
	assert_int_equal(design_parse(cat, "g.yaml", y, strlen(y), &g2only, &err), 0);
	assert_int_equal(replay_design_run(cat, &tr, &o, &g2only, &r, &err), -1);
	assert_non_null(strstr(err.msg, "'T4'"));
	replay_design_release(&g2only);
	for (size_t i = 0; i < 4; i++)
		replay_design_release(&d[i]);
}

/*
 * A live replay measures the places a cluster shows with the offline code:
 * the offline run's places copied into an unplaced workload and measured
 * give the same points, bit for bit. A card overfilled or a node the trace
 * lacks is refused, naming the pod.
 */
static void measure_from_places(void **state)
{
	(void)state;
	const struct catalog *cat;
	struct gs_error err;
	char buf[512];
	struct replay_node nodes[] = {{"g", 32000, 65536, 4, "T4"},
				      {"h", 16000, 65536, 2, "P100"},
				      {"cpu", 8000, 8192, 0, ""}};
	struct replay_task tasks[] = {
		{"a", 4000, 1024, 1, 1000, "", -1, -1, -1},
		{"b", 2000, 1024, 1, 460, "", -1, -1, -1},
		{"c", 1000, 1024, 1, 250, "T4", -1, -1, -1},
		{"d", 3000, 1024, 0, 0, "", -1, -1, -1},
		{"e", 8000, 1024, 2, 1000, "", -1, -1, -1},
	};
	struct replay_trace tr = {nodes, 3, tasks, 5};
	struct replay_opts o = {.replicas = 4, .seed = 3, .inflate = 1.5};
	struct replay_result *off = NULL, *live = NULL;

	assert_int_equal(catalog_builtin(&cat, &err), 0);
	if (replay_run(cat, &tr, &o, &off, &err) < 0)
		fail_msg("%s", gs_error_str(&err, buf, sizeof(buf)));
	if (replay_prepare(&tr, &o, &live, &err) < 0)
		fail_msg("%s", gs_error_str(&err, buf, sizeof(buf)));
	assert_int_equal(live->n_places, off->n_places);
	assert_int_equal(live->n_points, 0);
	assert_true(off->bound > 2 && off->pending > 0);
	for (size_t i = 0; i < off->n_places; i++) {
		const struct replay_place *a = &off->places[i];
		struct replay_place *b = &live->places[i];
		assert_string_equal(a->name, b->name);
		assert_false(b->bound);
		b->bound = a->bound;
		b->node = a->node;
		b->n_cards = a->n_cards;
		b->cards = gs_xcalloc((size_t)a->n_cards + 1, sizeof(int));
		b->replicas = gs_xcalloc((size_t)a->n_cards + 1, sizeof(int));
		for (int c = 0; c < a->n_cards; c++) {
			b->cards[c] = a->cards[c];
			b->replicas[c] = a->replicas[c];
		}
	}
	if (replay_measure(&tr, live, &err) < 0)
		fail_msg("%s", gs_error_str(&err, buf, sizeof(buf)));
	assert_int_equal(live->bound, off->bound);
	assert_int_equal(live->pending, off->pending);
	assert_int_equal(live->n_points, off->n_points);
	assert_memory_equal(live->points, off->points, off->n_points * sizeof(*off->points));

	/* Measured again after a change: the points are replaced, not added to. */
	size_t k;
	for (k = 0; k < live->n_places && !(live->places[k].bound && live->places[k].n_cards); k++)
		;
	assert_true(k < live->n_places);
	live->places[k].replicas[0] += 4; /* more than a card's 4 replicas */
	assert_int_equal(replay_measure(&tr, live, &err), -1);
	assert_non_null(strstr(err.msg, live->places[k].name));
	assert_non_null(strstr(err.msg, "replicas on card"));
	live->places[k].replicas[0] -= 4;
	live->places[k].node = 7;
	assert_int_equal(replay_measure(&tr, live, &err), -1);
	assert_non_null(strstr(err.msg, "bound to no node of the trace"));
	live->places[k].node = off->places[k].node;
	assert_int_equal(replay_measure(&tr, live, &err), 0);
	assert_memory_equal(live->points, off->points, off->n_points * sizeof(*off->points));
	replay_result_free(off);
	replay_result_free(live);
}

/*
 * In trace time: one T4 (4 replicas). a holds it whole from 0 to 10; b (whole
 * too, arrives at 5) waits and gets the card when a leaves: the device
 * plugin's ledger gave a's replicas back, so the kubelet admits b on the same
 * card. c arrives at 12 and leaves at 15 while b holds the card: it never
 * runs.
 */
static void departures_free_the_card(void **state)
{
	(void)state;
	const struct catalog *cat;
	struct gs_error err;
	char buf[512];
	struct replay_node nodes[] = {{"n", 8000, 65536, 1, "T4"}};
	struct replay_task tasks[] = {
		{"a", 1000, 1024, 1, 1000, "", 0, 10, 0},
		{"c", 1000, 1024, 1, 1000, "", 12, 15, -1},
		{"b", 1000, 1024, 1, 1000, "", 5, 20, 5},
	};
	struct replay_trace tr = {nodes, 1, tasks, 3};
	struct replay_opts o = {.replicas = 4};
	struct replay_result *r = NULL;

	assert_int_equal(catalog_builtin(&cat, &err), 0);
	if (replay_events_run(cat, &tr, &o, &r, &err) < 0)
		fail_msg("%s", gs_error_str(&err, buf, sizeof(buf)));
	const struct replay_timeline *tl = r->timeline;
	assert_non_null(tl);
	/* In creation order: a, b, c. */
	assert_string_equal(r->places[1].name, "b");
	assert_true(r->places[1].bound);
	assert_int_equal(r->places[1].placed_at, 10);
	assert_int_equal(r->places[1].left_at, 20);
	assert_int_equal(r->places[1].n_cards, 1);
	assert_int_equal(r->places[1].replicas[0], 4);
	assert_string_equal(r->places[2].name, "c");
	assert_int_equal(r->places[2].placed_at, -1);
	assert_int_equal(r->bound, 2);
	assert_int_equal(r->pending, 1);
	assert_int_equal(tl->start, 0);
	assert_int_equal(tl->end, 20);
	assert_int_equal(tl->attempts, 4); /* three arrivals, b's retry */
	assert_int_equal(tl->max_pending, 1);
	/* The card is held all along: every 1% step (0.2 s) at 100%, but while
	   nothing runs (never here). Step 50 ends at 10 s: b waited until then. */
	assert_int_equal(tl->n_points, REPLAY_STEPS);
	assert_true(fabs(tl->points[49].alloc_pct - 100) < 1e-9);
	assert_int_equal(tl->points[49].pending, 1);
	assert_int_equal(tl->points[50].pending, 0);
	/* Waits: a 0, b 5, c never ran. */
	const struct replay_waits *all = &tl->waits[tl->n_waits - 1];
	assert_string_equal(all->pool, "all");
	assert_int_equal(all->tasks, 3);
	assert_int_equal(all->ran, 2);
	assert_int_equal(all->never, 1);
	assert_true(fabs(all->mean - 2.5) < 1e-9);
	assert_int_equal(all->p50, 0);
	assert_int_equal(all->max, 5);
	replay_result_free(r);

	/* Without times (read without TRACE_TIMES) it is refused. */
	tasks[0].created = -1;
	assert_int_equal(replay_events_run(cat, &tr, &o, &r, &err), -1);
	assert_non_null(strstr(err.msg, "task a: no creation_time"));
}

/*
 * tie_offset: six identical T4 nodes and tasks of one shape, so the
 * scheduler's scores tie among the nodes of equal load at every arrival
 * and only the draws among them pick the node. The workload (the names'
 * order) follows seed alone; the nodes follow seed + tie_offset: seed 5
 * with offset 3 places exactly as seed 8 (the shapes arrive alike, only
 * the names differ), and differently from seed 5 with offset 0.
 */
static struct replay_result *run_ties(const struct catalog *cat, const struct replay_trace *tr,
				      uint64_t seed, uint64_t offset)
{
	struct replay_opts o = {.replicas = 4, .seed = seed, .inflate = 1, .tie_offset = offset};
	struct replay_result *r = NULL;
	struct gs_error err;
	char buf[512];

	if (replay_run(cat, tr, &o, &r, &err) < 0)
		fail_msg("%s", gs_error_str(&err, buf, sizeof(buf)));
	return r;
}

static bool same_nodes(const struct replay_result *a, const struct replay_result *b)
{
	for (size_t i = 0; i < a->n_places; i++)
		if (a->places[i].node != b->places[i].node)
			return false;
	return true;
}

static bool same_names(const struct replay_result *a, const struct replay_result *b)
{
	for (size_t i = 0; i < a->n_places; i++)
		if (strcmp(a->places[i].name, b->places[i].name))
			return false;
	return true;
}

static void tie_offset_draws_the_ties(void **state)
{
	(void)state;
	const struct catalog *cat;
	struct gs_error err;
	struct replay_node nodes[6];
	struct replay_task tasks[12];
	static char *const node_names[] = {"n0", "n1", "n2", "n3", "n4", "n5"};
	static char *const names[] = {"t00", "t01", "t02", "t03", "t04", "t05",
				      "t06", "t07", "t08", "t09", "t10", "t11"};

	for (int i = 0; i < 6; i++)
		nodes[i] = (struct replay_node){node_names[i], 104000, 524288, 2, (char *)"T4"};
	for (int i = 0; i < 12; i++)
		tasks[i] = task(names[i], 1000, 1, 500, "");
	struct replay_trace tr = {nodes, 6, tasks, 12};
	assert_int_equal(catalog_builtin(&cat, &err), 0);

	struct replay_result *s5 = run_ties(cat, &tr, 5, 0), *s5o3 = run_ties(cat, &tr, 5, 3),
			     *s8 = run_ties(cat, &tr, 8, 0);
	/* 12 GPUs at 1.0: the 12 tasks (6000 milli), then 12 draws. */
	assert_int_equal(s5->n_places, 24);
	assert_int_equal(s5o3->n_places, 24);
	assert_int_equal(s8->n_places, 24);
	assert_true(same_names(s5, s5o3));
	assert_false(same_names(s5, s8));
	assert_true(same_nodes(s5o3, s8));
	assert_false(same_nodes(s5, s5o3));
	/* Every task is bound either way: ties move pods, not the allocation here. */
	assert_int_equal(s5->bound, 24);
	assert_int_equal(s5o3->bound, 24);
	replay_result_free(s5);
	replay_result_free(s5o3);
	replay_result_free(s8);
}

/* A result holding only points: pct, alloc, asked, frag, pending. */
static struct replay_result *points_of(const double (*v)[5], size_t n)
{
	struct replay_result *r = gs_xcalloc(1, sizeof(*r));
	r->points = gs_xcalloc(n, sizeof(*r->points));
	r->n_points = n;
	for (size_t i = 0; i < n; i++)
		r->points[i] = (struct replay_point){.pct = (int)v[i][0],
						     .alloc_pct = v[i][1],
						     .asked_pct = v[i][2],
						     .frag_pct = v[i][3],
						     .pending = (size_t)v[i][4]};
	return r;
}

/*
 * replay_spread: three runs; 20% is missing from the second and 30% from
 * the first, so only 0, 10 and 40 are in every run. At 10%: allocations 9,
 * 10 and 14: mean 11, range 9..14, population sd sqrt((4 + 1 + 9) / 3).
 */
static void spread_of_runs(void **state)
{
	(void)state;
	const double a[][5] = {
		{0, 0, 0, 10, 0}, {10, 9, 8, 20, 0}, {20, 19, 18, 30, 1}, {40, 39, 36, 50, 2}};
	const double b[][5] = {{0, 0, 0, 12, 0}, {10, 10, 9, 23, 1}, {40, 40, 37, 51, 3}};
	const double c[][5] = {
		{0, 0, 0, 14, 0}, {10, 14, 13, 26, 0}, {30, 29, 27, 40, 2}, {40, 39.5, 38, 49, 2}};
	struct replay_result *r[3] = {points_of(a, 4), points_of(b, 3), points_of(c, 4)};
	const struct replay_result *const *runs = (const struct replay_result *const *)r;
	size_t n;

	struct replay_spread_point *sp = replay_spread(runs, 3, &n);
	assert_int_equal(n, 3);
	assert_int_equal(sp[0].pct, 0);
	assert_int_equal(sp[1].pct, 10);
	assert_int_equal(sp[2].pct, 40);
	const struct replay_spread_point *p = &sp[1];
	assert_int_equal(p->runs, 3);
	assert_true(fabs(p->alloc_mean - 11) < 1e-12);
	assert_true(p->alloc_min == 9 && p->alloc_max == 14);
	assert_true(fabs(p->alloc_sd - sqrt(14.0 / 3)) < 1e-12);
	assert_true(fabs(p->asked_mean - 10) < 1e-12);
	assert_true(fabs(p->frag_mean - 23) < 1e-12);
	assert_int_equal(p->pending_min, 0);
	assert_int_equal(p->pending_max, 1);
	assert_true(fabs(sp[2].alloc_mean - 39.5) < 1e-12);
	assert_int_equal(sp[2].pending_min, 2);
	assert_int_equal(sp[2].pending_max, 3);
	assert_true(sp[0].alloc_sd == 0);

	/* How far a live value lies outside 9..14: below, above, within, on the edge. */
	assert_true(fabs(replay_spread_outside(p, 8.25) - 0.75) < 1e-12);
	assert_true(fabs(replay_spread_outside(p, 14.5) - 0.5) < 1e-12);
	assert_true(replay_spread_outside(p, 11.5) == 0);
	assert_true(replay_spread_outside(p, 14) == 0);
	free(sp);

	/* One run: its own values, range a point. */
	sp = replay_spread(runs + 1, 1, &n);
	assert_int_equal(n, 3);
	assert_true(sp[2].alloc_mean == 40 && sp[2].alloc_min == 40 && sp[2].alloc_max == 40);
	assert_true(sp[2].alloc_sd == 0);
	free(sp);

	/* No runs, or no percent every run has: nothing. */
	assert_null(replay_spread(runs, 0, &n));
	assert_int_equal(n, 0);
	const double d[][5] = {{50, 50, 50, 50, 0}};
	struct replay_result *other = points_of(d, 1);
	const struct replay_result *two[] = {r[0], other};
	assert_null(replay_spread(two, 2, &n));
	assert_int_equal(n, 0);
	for (int i = 0; i < 3; i++)
		replay_result_free(r[i]);
	replay_result_free(other);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(replicas_asked),
		cmocka_unit_test(typical_mix_cut_at_95),
		cmocka_unit_test(node_fragmentation),
		cmocka_unit_test(tiny_fleet),
		cmocka_unit_test(inflation_draws),
		cmocka_unit_test(mig_profile_of_task),
		cmocka_unit_test(dra_shares_of_task),
		cmocka_unit_test(design_runs),
		cmocka_unit_test(measure_from_places),
		cmocka_unit_test(departures_free_the_card),
		cmocka_unit_test(tie_offset_draws_the_ties),
		cmocka_unit_test(spread_of_runs),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
