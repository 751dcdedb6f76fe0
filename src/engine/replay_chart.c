#include "engine/replay_chart.h"

#include <math.h>
#include <string.h>

#include "base/escape.h"
#include "base/svg.h"
#include "base/banned.h"

/* One chart, in its own units (the page scales it to the window). */
#define CW 480
#define CH 300
#define PX0 58 /* the plot area */
#define PX1 (CW - 16)
#define PY0 34
#define PY1 (CH - 48)

/* The standalone picture: two charts a row. */
#define M 16  /* margin */
#define GAP 8 /* between charts */
#define W (2 * CW + GAP + 2 * M)

enum metric { MET_ALLOC, MET_FRAG, MET_STRANDED, MET_RUNNING, MET_PENDING, MET_N };

struct metric_info {
	const char *id;		  /* data-metric */
	const char *title;	  /* the chart's */
	const char *y_label;	  /* the y axis' */
	const char *unit;	  /* after a value in the chart's description */
	const char *caption;	  /* what it measures (the page's figure caption) */
	const char *caption_time; /* the same in trace time */
	int decimals;		  /* of a value in the description */
	bool percent;		  /* 0..100 */
	bool integer;		  /* a count: ticks at whole numbers */
};

static const struct metric_info metrics[MET_N] = {
	[MET_ALLOC] = {"alloc", "GPU allocation ratio", "% of GPU capacity", "%",
		       "The gpu_milli of the bound tasks over the GPU capacity (the FGD paper's "
		       "GPU allocation ratio). Dashed: all the GPU that arrived placed, and 100% "
		       "arrived.",
		       "The gpu_milli of the running tasks over the GPU capacity (the FGD paper's "
		       "GPU allocation ratio), averaged over each 1% of the trace's span.",
		       2, true, false},
	[MET_FRAG] =
		{"frag", "Fragmentation ratio", "% of idle GPU", "%",
		 "The paper's fragmentation ratio: the idle GPU the typical task mix cannot "
		 "use where it is, weighted by the mix, over the idle GPU.",
		 "The paper's fragmentation ratio (the idle GPU the typical task mix cannot "
		 "use where it is, weighted by the mix, over the idle GPU), averaged over each "
		 "1% of the trace's span.",
		 2, true, false},
	[MET_STRANDED] = {"stranded", "Stranded GPUs", "GPUs", " GPUs",
			  "Idle GPU that no typical task shape can use where it is, in GPUs.", NULL,
			  1, false, false},
	[MET_RUNNING] = {"running", "Running tasks", "tasks", " tasks", NULL,
			 "Tasks bound and not yet deleted at the end of each 1% of the trace's "
			 "span.",
			 0, false, true},
	[MET_PENDING] = {"pending", "Pending tasks", "tasks", " tasks",
			 "Tasks that arrived and found no node (nothing departs).",
			 "Tasks waiting for a node at the end of each 1% of the trace's span; they "
			 "are tried again when a bound task leaves.",
			 0, false, true},
};

/* Curve s's value of measure m at its point k. */
static double value(const struct replay_chart *c, enum metric m,
		    const struct replay_chart_series *s, size_t k)
{
	if (c->trace_time) {
		const struct replay_tpoint *t = &s->steps[k];
		return m == MET_ALLOC	  ? t->asked_pct
		       : m == MET_FRAG	  ? t->frag_pct
		       : m == MET_RUNNING ? (double)t->running
					  : (double)t->pending;
	}
	const struct replay_point *p = &s->points[k];
	return m == MET_ALLOC	   ? p->asked_pct
	       : m == MET_FRAG	   ? p->frag_pct
	       : m == MET_STRANDED ? p->stranded_milli / 1000.0
				   : (double)p->pending;
}

/* The unit of the time axis: the largest of which the span holds two. */
struct time_unit {
	const char *name;
	double seconds;
};

static const struct time_unit *time_unit(const struct replay_chart *c)
{
	static const struct time_unit units[] = {
		{"days", 86400}, {"hours", 3600}, {"minutes", 60}, {"seconds", 1}};
	double span = (double)(c->end - c->start);
	size_t i = 0;

	while (i < 3 && span < 2 * units[i].seconds)
		i++;
	return &units[i];
}

/* Curve s's x at its point k: the arrived %, or the time since the start in time_unit. */
static double x_at(const struct replay_chart *c, const struct replay_chart_series *s, size_t k)
{
	if (c->trace_time)
		return (double)(s->steps[k].time - c->start) / time_unit(c)->seconds;
	return s->points[k].pct;
}

static void x_label(struct strbuf *sb, const struct replay_chart *c)
{
	if (c->trace_time)
		strbuf_addf(sb, "trace time (%s since the first arrival)", time_unit(c)->name);
	else
		strbuf_addstr(sb, "arrived GPU request (% of capacity)");
}

static const char *caption(const struct replay_chart *c, enum metric m)
{
	return c->trace_time ? metrics[m].caption_time : metrics[m].caption;
}

static bool drawn(const struct replay_chart *c, enum metric m)
{
	if (m == MET_STRANDED)
		return c->stranded && !c->trace_time;
	if (m == MET_RUNNING)
		return c->trace_time;
	return true;
}

size_t replay_chart_count(const struct replay_chart *c)
{
	size_t n = 0;

	for (enum metric m = 0; m < MET_N; m++)
		n += drawn(c, m);
	return n;
}

/* ---- axes ---- */

struct axis {
	double max, step;
	int decimals; /* of the tick labels */
};

/* A step of 1, 2 or 5 x 10^k that cuts `range` into about `target` parts. */
static double nice_step(double range, int target)
{
	double raw = range / target, mag = pow(10, floor(log10(raw))), f = raw / mag;

	return (f <= 1 + 1e-9 ? 1 : f <= 2 + 1e-9 ? 2 : f <= 5 + 1e-9 ? 5 : 10) * mag;
}

static struct axis axis_to(double max, int target, bool integer)
{
	struct axis a;

	if (!(max > 0))
		max = integer ? target : 1;
	a.step = nice_step(max, target);
	if (integer && a.step < 1)
		a.step = 1;
	a.max = ceil(max / a.step - 1e-9) * a.step;
	a.decimals = a.step >= 1 ? 0 : (int)ceil(-log10(a.step) - 1e-9);
	return a;
}

static struct axis x_axis(const struct replay_chart *c)
{
	double max = 0;

	for (size_t i = 0; i < c->n_series; i++)
		for (size_t k = 0; k < c->series[i].n_points; k++)
			max = fmax(max, x_at(c, &c->series[i], k));
	return axis_to(max, 8, !c->trace_time);
}

static struct axis y_axis(const struct replay_chart *c, enum metric m)
{
	double max = 0;

	for (size_t i = 0; i < c->n_series; i++)
		for (size_t k = 0; k < c->series[i].n_points; k++)
			max = fmax(max, value(c, m, &c->series[i], k));
	if (metrics[m].percent && max <= 100)
		return (struct axis){100, 20, 0};
	return axis_to(max, 5, metrics[m].integer);
}

static double to_x(const struct axis *a, double v)
{
	return PX0 + v / a->max * (PX1 - PX0);
}

static double to_y(const struct axis *a, double v)
{
	return PY1 - v / a->max * (PY1 - PY0);
}

/* ---- one chart ---- */

/* Curve i's stroke: its colour, dashed once the colours come round again. */
static void stroke(struct strbuf *sb, size_t i)
{
	strbuf_addf(sb, " stroke=\"%s\"", svg_colour(i));
	if (i >= SVG_N_COLOURS)
		strbuf_addstr(sb, " stroke-dasharray=\"6 3\"");
}

/* "name: detail", or the name alone. */
static void series_tip(struct strbuf *sb, const struct replay_chart_series *s)
{
	escape_html(sb, s->name);
	if (s->detail && *s->detail) {
		strbuf_addstr(sb, ": ");
		escape_html(sb, s->detail);
	}
}

/* The chart in words, escaped for an attribute: each curve's value at its last point. */
static void describe(struct strbuf *sb, const struct replay_chart *c, enum metric m)
{
	const struct metric_info *mi = &metrics[m];
	struct strbuf t = STRBUF_INIT;

	strbuf_addf(&t, "%s (%s) by ", mi->title, mi->y_label);
	x_label(&t, c);
	strbuf_addch(&t, ':');
	for (size_t i = 0; i < c->n_series; i++) {
		const struct replay_chart_series *s = &c->series[i];
		size_t k = s->n_points - 1;
		strbuf_addf(&t, "%s %s", i ? ";" : "", s->name);
		if (s->n_points && c->trace_time)
			strbuf_addf(&t, " %.*f%s at %.1f %s", mi->decimals, value(c, m, s, k),
				    mi->unit, x_at(c, s, k), time_unit(c)->name);
		else if (s->n_points)
			strbuf_addf(&t, " %.*f%s at %d%%", mi->decimals, value(c, m, s, k),
				    mi->unit, s->points[k].pct);
		else
			strbuf_addstr(&t, " no point");
	}
	escape_html(sb, t.buf);
	strbuf_release(&t);
}

static void tick_label(struct strbuf *sb, int x, int y, const char *cls, double v, int decimals)
{
	char num[32];

	snprintf(num, sizeof(num), "%.*f", decimals, v);
	svg_text(sb, x, y, 11, 0, cls, num);
}

/* The chart's elements in its own units (0..CW, 0..CH). */
static void draw_chart(struct strbuf *sb, const struct replay_chart *c, enum metric m,
		       const struct axis *ax)
{
	const struct metric_info *mi = &metrics[m];
	struct axis ay = y_axis(c, m);
	struct strbuf xl = STRBUF_INIT;
	int mid = (PY0 + PY1) / 2;

	strbuf_addf(sb, "<rect class=\"bg\" x=\"0\" y=\"0\" width=\"%d\" height=\"%d\"/>\n", CW,
		    CH);
	svg_text(sb, PX0, 20, 14, PX1 - PX0, "ct", mi->title);
	for (int k = 0; k * ay.step <= ay.max + 1e-9; k++) {
		double v = k * ay.step, y = to_y(&ay, v);
		strbuf_addf(sb,
			    "<line class=\"grid\" x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\"/>\n",
			    PX0, y, PX1, y);
		tick_label(sb, PX0 - 6, (int)lround(y) + 4, "yt", v, ay.decimals);
	}
	for (int k = 0; k * ax->step <= ax->max + 1e-9; k++) {
		double v = k * ax->step, x = to_x(ax, v);
		strbuf_addf(sb,
			    "<line class=\"grid\" x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\"/>\n",
			    x, PY0, x, PY1 + 4);
		tick_label(sb, (int)lround(x), PY1 + 17, "xt", v, ax->decimals);
	}
	strbuf_addf(sb, "<rect class=\"frame\" x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\"/>\n",
		    PX0, PY0, PX1 - PX0, PY1 - PY0);
	if (!c->trace_time && ax->max >= 100)
		strbuf_addf(sb,
			    "<line class=\"ref\" x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\"/>\n",
			    to_x(ax, 100), PY0, to_x(ax, 100), PY1);
	if (m == MET_ALLOC && !c->trace_time) {
		double knee = fmin(100, ax->max);
		strbuf_addf(sb,
			    "<polyline class=\"ref\" points=\"%.1f,%.1f %.1f,%.1f %.1f,%.1f\"/>\n",
			    to_x(ax, 0), to_y(&ay, 0), to_x(ax, knee), to_y(&ay, knee),
			    to_x(ax, ax->max), to_y(&ay, knee));
	}
	x_label(&xl, c);
	svg_text(sb, (PX0 + PX1) / 2, CH - 12, 12, PX1 - PX0, "axis", xl.buf);
	strbuf_release(&xl);
	strbuf_addf(sb,
		    "<text class=\"axis\" x=\"16\" y=\"%d\" font-size=\"12\" "
		    "transform=\"rotate(-90 16 %d)\">",
		    mid, mid);
	escape_html(sb, mi->y_label);
	strbuf_addstr(sb, "</text>\n");
	for (size_t i = 0; i < c->n_series; i++) {
		const struct replay_chart_series *s = &c->series[i];
		if (!s->n_points)
			continue; /* in the legend, nothing to draw */
		if (s->n_points == 1) {
			strbuf_addf(sb, "<circle class=\"curve\" data-series=\"%zu\"", i);
			stroke(sb, i);
			strbuf_addf(sb, " cx=\"%.1f\" cy=\"%.1f\" r=\"3\">",
				    to_x(ax, x_at(c, s, 0)), to_y(&ay, value(c, m, s, 0)));
		} else {
			strbuf_addf(sb, "<polyline class=\"curve\" data-series=\"%zu\"", i);
			stroke(sb, i);
			strbuf_addstr(sb, " points=\"");
			for (size_t k = 0; k < s->n_points; k++)
				strbuf_addf(sb, "%s%.1f,%.1f", k ? " " : "",
					    to_x(ax, x_at(c, s, k)), to_y(&ay, value(c, m, s, k)));
			strbuf_addstr(sb, "\">");
		}
		strbuf_addstr(sb, "<title>");
		series_tip(sb, s);
		strbuf_addstr(sb,
			      s->n_points == 1 ? "</title></circle>\n" : "</title></polyline>\n");
	}
}

/* ---- the title ---- */

static const char *base_name(const char *path)
{
	const char *slash = strrchr(path ? path : "", '/');

	return slash && slash[1] ? slash + 1 : path ? path : "";
}

static void title_text(struct strbuf *sb, const struct replay_chart *c)
{
	if (c->trace_time) {
		strbuf_addf(sb, "Replay of %s and %s in trace time, with departures, seed %llu",
			    base_name(c->nodes_file), base_name(c->pods_file),
			    (unsigned long long)c->seed);
		return;
	}
	strbuf_addf(sb, "Replay of %s and %s, seed %llu, inflation %g", base_name(c->nodes_file),
		    base_name(c->pods_file), (unsigned long long)c->seed, c->inflate);
}

static void subtitle_text(struct strbuf *sb, const struct replay_chart *c)
{
	if (c->trace_time) {
		const struct time_unit *u = time_unit(c);
		strbuf_addf(sb,
			    "%zu nodes, %zu GPUs \xC2\xB7 %zu tasks in creation order, %zu ran, "
			    "%zu never ran \xC2\xB7 trace time %lld to %lld s (%.1f %s)",
			    c->n_nodes, c->n_gpus, c->n_arrived, c->n_ran, c->n_arrived - c->n_ran,
			    (long long)c->start, (long long)c->end,
			    (double)(c->end - c->start) / u->seconds, u->name);
		return;
	}
	strbuf_addf(sb,
		    "%zu nodes, %zu GPUs \xC2\xB7 %zu tasks arrived (%zu of the trace, %zu drawn), "
		    "GPU asked %.2f%% of capacity",
		    c->n_nodes, c->n_gpus, c->n_arrived, c->n_original,
		    c->n_arrived - c->n_original, c->asked_pct);
}

static const char chart_style[] =
	".chart text{fill:#222}\n"
	".chart .bg{fill:#fff}\n"
	".chart .ct{font-weight:bold}\n"
	".chart .xt,.chart .axis{text-anchor:middle}\n"
	".chart .yt{text-anchor:end}\n"
	".chart .xt,.chart .yt{fill:#444}\n"
	".chart .frame{fill:none;stroke:#888}\n"
	".chart .grid{stroke:#e6e6e6}\n"
	".chart .ref{fill:none;stroke:#999;stroke-dasharray:4 3}\n"
	".chart .curve{fill:none;stroke-width:2;stroke-linejoin:round;stroke-linecap:round}\n";

/* Under the charts: what they measure, in lines of at most 160 characters. */
#define N_NOTES 3
static const char *const notes[N_NOTES] = {
	"Allocation: the gpu_milli of the bound tasks over the capacity (the FGD paper's); "
	"fragmentation: the paper's ratio of the idle GPU;",
	"stranded: idle GPU no typical task can use where it is; pending: tasks that found no "
	"node. Dashed grey: 100% arrived, and all arrived GPU placed.",
	"Curves that coincide are drawn over each other, the later one on top "
	"(docs/guide/replay.md, \"Charts\").",
};
static const char *const notes_time[N_NOTES] = {
	"Allocation: the gpu_milli of the running tasks over the capacity (the FGD paper's); "
	"fragmentation: the paper's ratio of the idle GPU.",
	"Both are averaged over each 1% of the trace's span; running and pending: the tasks bound "
	"and waiting for a node at the step's end.",
	"Each point is drawn at the end of its step; curves that coincide are drawn over each "
	"other (docs/guide/replay.md, \"Charts\").",
};

/* ---- the picture ---- */

/* The legend from y (a baseline) on, in rows that wrap; returns the y below it. */
static int svg_legend(struct strbuf *sb, const struct replay_chart *c, int y)
{
	int x = M, room = W - 2 * M - 30;

	strbuf_addstr(sb, "<g class=\"legend\">\n");
	for (size_t i = 0; i < c->n_series; i++) {
		const struct replay_chart_series *s = &c->series[i];
		int tw = (int)ceil(svg_text_width(s->name, 12)), w = 30 + (tw < room ? tw : room);
		if (x > M && x + w > W - M) {
			x = M;
			y += 20;
		}
		strbuf_addf(sb, "<g class=\"key\" data-series=\"%zu\"><title>", i);
		series_tip(sb, s);
		strbuf_addf(sb,
			    "</title><line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" "
			    "stroke-width=\"3\"",
			    x, y - 4, x + 22, y - 4);
		stroke(sb, i);
		strbuf_addstr(sb, "/>\n");
		svg_text(sb, x + 30, y, 12, room, NULL, s->name);
		strbuf_addstr(sb, "</g>\n");
		x += w + 18;
	}
	strbuf_addstr(sb, "</g>\n");
	return y + 14;
}

void replay_chart_svg(const struct replay_chart *c, struct strbuf *out)
{
	struct strbuf body = STRBUF_INIT, t = STRBUF_INIT;
	struct axis ax = x_axis(c);
	int y, n = 0;

	title_text(&t, c);
	svg_text(&body, M, 26, 18, W - 2 * M, "title", t.buf);
	strbuf_reset(&t);
	subtitle_text(&t, c);
	svg_text(&body, M, 46, 12, W - 2 * M, "muted", t.buf);
	y = svg_legend(&body, c, 70) + 6;
	for (enum metric m = 0; m < MET_N; m++) {
		if (!drawn(c, m))
			continue;
		strbuf_addf(&body,
			    "<g class=\"chart\" data-metric=\"%s\" transform=\"translate(%d %d)\" "
			    "role=\"img\" aria-label=\"",
			    metrics[m].id, M + (n % 2) * (CW + GAP), y + (n / 2) * (CH + GAP));
		describe(&body, c, m);
		strbuf_addstr(&body, "\">\n");
		draw_chart(&body, c, m, &ax);
		strbuf_addstr(&body, "</g>\n");
		n++;
	}
	y += ((n + 1) / 2) * (CH + GAP) + 10;
	for (size_t k = 0; k < N_NOTES; k++, y += 15)
		svg_text(&body, M, y, 11, W - 2 * M, "muted",
			 c->trace_time ? notes_time[k] : notes[k]);
	y += M - 15;

	strbuf_addstr(out, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
	strbuf_addf(out,
		    "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" "
		    "viewBox=\"0 0 %d %d\" font-family=\"" SVG_FONT_FAMILY "\" role=\"img\" "
		    "aria-label=\"",
		    W, y, W, y);
	strbuf_reset(&t);
	title_text(&t, c);
	escape_html(out, t.buf);
	strbuf_addstr(out, "\">\n<title>");
	escape_html(out, t.buf);
	strbuf_addstr(out, "</title>\n<style>\ntext{fill:#222}\n.title{font-weight:bold}\n"
			   ".muted{fill:#666}\n");
	strbuf_addstr(out, chart_style);
	strbuf_addstr(out, "</style>\n");
	strbuf_add(out, body.buf, body.len);
	strbuf_addstr(out, "</svg>\n");
	strbuf_release(&body);
	strbuf_release(&t);
}

/* ---- the page ---- */

static const char page_style[] =
	"*{box-sizing:border-box}\n"
	"body{font-family:" SVG_FONT_FAMILY ";margin:0;padding:12px 16px;color:#222;"
	"font-size:14px}\n"
	"h1{font-size:20px;margin:0 0 4px;overflow-wrap:anywhere}\n"
	".muted{color:#666}\n"
	"#summary{margin:0 0 6px;overflow-wrap:anywhere}\n"
	".legend{display:flex;flex-wrap:wrap;gap:4px 18px;margin:4px 0 10px;font-size:13px}\n"
	".legend>span{display:inline-flex;align-items:center;min-width:0;max-width:100%}\n"
	".swatch{display:inline-block;width:24px;height:0;margin-right:6px;flex:none}\n"
	".clip{display:block;overflow:hidden;text-overflow:ellipsis;white-space:nowrap;"
	"min-width:0;max-width:100%}\n"
	"#charts{display:grid;grid-template-columns:repeat(auto-fit,minmax(min(100%,440px),1fr));"
	"gap:12px}\n"
	"figure{margin:0;border:1px solid #ccc;border-radius:6px;padding:6px;min-width:0}\n"
	"figcaption{font-size:12px;margin:4px 2px 0}\n"
	"svg.chart{display:block;width:100%;height:auto;max-width:640px;margin:0 auto}\n";

void replay_chart_html(const struct replay_chart *c, struct strbuf *out)
{
	struct strbuf t = STRBUF_INIT;
	struct axis ax = x_axis(c);

	title_text(&t, c);
	{
		struct strbuf style = STRBUF_INIT;
		strbuf_addstr(&style, page_style);
		strbuf_addstr(&style, chart_style);
		svg_page_head(out, t.buf, style.buf);
		strbuf_release(&style);
	}
	strbuf_addstr(out, "<body>\n<main>\n<header><h1>");
	escape_html(out, t.buf);
	strbuf_addstr(out, "</h1>\n<p class=\"muted\" id=\"summary\">");
	strbuf_reset(&t);
	subtitle_text(&t, c);
	escape_html(out, t.buf);
	strbuf_addstr(out, "</p>\n<div class=\"legend\" id=\"legend\">");
	for (size_t i = 0; i < c->n_series; i++) {
		strbuf_addf(out, "<span class=\"key\" data-series=\"%zu\" title=\"", i);
		series_tip(out, &c->series[i]);
		strbuf_addf(out,
			    "\"><span class=\"swatch\" style=\"border-top:3px %s %s\"></span>"
			    "<span class=\"clip\">",
			    i >= SVG_N_COLOURS ? "dashed" : "solid", svg_colour(i));
		escape_html(out, c->series[i].name);
		strbuf_addstr(out, "</span></span>");
	}
	strbuf_addstr(out, "</div>\n</header>\n<section id=\"charts\">\n");
	for (enum metric m = 0; m < MET_N; m++) {
		if (!drawn(c, m))
			continue;
		strbuf_addf(out,
			    "<figure><svg class=\"chart\" data-metric=\"%s\" xmlns=\"http://"
			    "www.w3.org/2000/svg\" viewBox=\"0 0 %d %d\" role=\"img\" "
			    "aria-label=\"",
			    metrics[m].id, CW, CH);
		describe(out, c, m);
		strbuf_addstr(out, "\">\n");
		draw_chart(out, c, m, &ax);
		strbuf_addstr(out, "</svg>\n<figcaption class=\"muted\">");
		escape_html(out, caption(c, m));
		strbuf_addstr(out, "</figcaption></figure>\n");
	}
	strbuf_addstr(out, "</section>\n<p class=\"muted\" id=\"notes\">");
	for (size_t k = 0; k < N_NOTES; k++) {
		strbuf_addstr(out, k ? " " : "");
		escape_html(out, c->trace_time ? notes_time[k] : notes[k]);
	}
	strbuf_addstr(out, "</p>\n</main>\n</body>\n</html>\n");
	strbuf_release(&t);
}
