#ifndef GS_REPLAY_CHART_H
#define GS_REPLAY_CHART_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "engine/replay.h"
#include "base/strbuf.h"

/*
 * The replay's charts (docs/guide/replay.md "Charts"): one line chart per
 * measure, one curve per run (a design, or the time-slicing replay). x is
 * the arrived GPU request (% of capacity), or in trace time (a replay with
 * departures) the time since the first arrival. The measures: the GPU
 * allocation ratio (the paper's, asked_pct), the fragmentation ratio
 * (frag_pct), the stranded GPUs (stranded_milli, design runs only), the
 * running tasks (in trace time only) and the pending tasks; a legend naming
 * each curve, axis ticks and labels, a title naming the trace's files and
 * the seed and the inflation (or, in trace time, the seed and the span). Pure: points
 * in, text out. Every string from the caller (file names, curve names,
 * details) goes through escape_html; the page fetches nothing and runs
 * nothing.
 */

/* One curve. Everything is borrowed. */
struct replay_chart_series {
	const char *name;		   /* the legend's label: a design's name */
	const char *detail;		   /* its tooltip ("* time-slicing x4"); NULL for none */
	const struct replay_point *points; /* by pct, as the replay made them; a lone
					      point is drawn as a dot, none leaves the
					      series in the legend only */
	size_t n_points;		   /* of points, or of steps in trace time */
	const struct replay_tpoint *steps; /* in trace time, instead of points: the
					      1% steps of the span, each drawn at its end */
};

/* What the charts draw and their title says. Everything is borrowed. */
struct replay_chart {
	const char *nodes_file, *pods_file; /* as given: the title shows their base names */
	uint64_t seed; /* of the workload and the ties (in trace time: the ties) */
	double inflate;
	size_t n_nodes, n_gpus;
	size_t n_arrived, n_original;
	double asked_pct; /* the workload's GPU request, % of capacity */
	bool stranded;	  /* the points carry stranded_milli (design runs): draw it */
	/* In trace time (--departures): the series' steps are drawn against the
	   time since `start`; the title names the span and n_ran of the
	   n_arrived tasks ran. */
	bool trace_time;
	int64_t start, end; /* trace seconds: the first arrival, the last departure */
	size_t n_ran;
	const struct replay_chart_series *series;
	size_t n_series;
};

/* How many charts c makes: 4 with stranded GPUs or in trace time (running tasks), else 3. */
size_t replay_chart_count(const struct replay_chart *c);

/*
 * One standalone SVG document (an XML declaration first), 1000 units wide:
 * the title, the legend, the charts two by two, a line of notes.
 */
void replay_chart_svg(const struct replay_chart *c, struct strbuf *out);

/*
 * One self-contained HTML page (inline CSS and SVG, no script; a
 * Content-Security-Policy that lets nothing load): the title, the run in
 * one line (id "summary"), the legend, then each chart as an inline <svg>
 * that scales with the window, in a grid that wraps.
 */
void replay_chart_html(const struct replay_chart *c, struct strbuf *out);

#endif
