/*
 * engine/replay_chart: the axes (steps of 1, 2 or 5 x 10^k, counts in whole
 * numbers, an axis of zeros), the curves (one per series, a lone point as a
 * circle, none for an empty series, dashed once the ten colours come round),
 * the charts drawn (stranded GPUs only for design runs), the title's base
 * names, the charts in trace time (a replay with departures: the time axis
 * and its unit, running tasks instead of stranded GPUs, no 100%-arrived
 * line), and the escaping of every name, on points made by hand.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/replay_chart.h"
#include "base/strbuf.h"

/* Points at 0, 10, ... 10 x (n - 1) % arrived: allocation and pending rising. */
static struct replay_point *ramp(size_t n, double stranded_gpus, size_t pending_per_step)
{
	struct replay_point *p = calloc(n, sizeof(*p));

	for (size_t i = 0; i < n; i++)
		p[i] = (struct replay_point){.pct = (int)(10 * i),
					     .asked_pct = 7.0 * (double)i,
					     .frag_pct = 50,
					     .stranded_milli = 1000.0 * stranded_gpus,
					     .pending = pending_per_step * i};
	return p;
}

static size_t count(const char *hay, const char *needle)
{
	size_t n = 0;

	for (const char *p = strstr(hay, needle); p; p = strstr(p + 1, needle))
		n++;
	return n;
}

/* The text of chart `metric` of the picture (up to the next chart). */
static char *chart_of(const char *svg, const char *metric)
{
	char key[64];
	const char *a, *b;

	snprintf(key, sizeof(key), "data-metric=\"%s\"", metric);
	a = strstr(svg, key);
	if (!a)
		return NULL;
	b = strstr(a + 1, "<g class=\"chart\"");
	return b ? strndup(a, (size_t)(b - a)) : strdup(a);
}

static void axes_and_curves(void **state)
{
	struct replay_point *p = ramp(14, 0.3, 0), *q = ramp(1, 0.3, 0);
	struct replay_chart_series s[3] = {{"ts4", "* time-slicing x4", p, 14, NULL},
					   {"one", NULL, q, 1, NULL},
					   {"none", NULL, NULL, 0, NULL}};
	struct replay_chart c = {.nodes_file = "/data/openb/nodes.csv",
				 .pods_file = "pods.csv",
				 .seed = 42,
				 .inflate = 1.3,
				 .stranded = true,
				 .series = s,
				 .n_series = 3};
	struct strbuf sb = STRBUF_INIT;
	char *ch;

	(void)state;
	assert_int_equal(replay_chart_count(&c), 4);
	replay_chart_svg(&c, &sb);
	assert_non_null(strstr(sb.buf, "<title>Replay of nodes.csv and pods.csv, seed 42, "
				       "inflation 1.3</title>"));
	/* x: 0..130 arrived in steps of 20, up to 140 */
	ch = chart_of(sb.buf, "alloc");
	assert_non_null(ch);
	assert_non_null(strstr(ch, "class=\"xt\">140</text>"));
	assert_null(strstr(ch, "class=\"xt\">160</text>"));
	assert_null(strstr(ch, "class=\"xt\">10</text>"));
	/* y: a percentage, 0..100 by 20 */
	assert_int_equal(count(ch, "class=\"yt\""), 6);
	assert_non_null(strstr(ch, "class=\"yt\">100</text>"));
	/* the first series a polyline of 14 points, the lone point a circle, the empty none */
	assert_int_equal(count(ch, "<polyline class=\"curve\" data-series=\"0\""), 1);
	assert_int_equal(count(ch, "<circle class=\"curve\" data-series=\"1\""), 1);
	assert_int_equal(count(ch, "data-series=\"2\""), 0);
	assert_non_null(strstr(ch, "<title>ts4: * time-slicing x4</title></polyline>"));
	/* 0% at the plot's bottom left, 130% at 7 x 13 = 91% */
	assert_non_null(strstr(ch, "points=\"58.0,252.0 87.0,"));
	assert_non_null(strstr(ch, " 435.0,"));
	free(ch);
	/* stranded 0.3 GPU: 0..0.3 by 0.1, one decimal */
	ch = chart_of(sb.buf, "stranded");
	assert_non_null(ch);
	assert_non_null(strstr(ch, "class=\"yt\">0.3</text>"));
	assert_non_null(strstr(ch, "class=\"yt\">0.1</text>"));
	free(ch);
	/* no pending at all: 0..5 tasks by 1, whole numbers */
	ch = chart_of(sb.buf, "pending");
	assert_non_null(ch);
	assert_non_null(strstr(ch, "class=\"yt\">5</text>"));
	assert_null(strstr(ch, "class=\"yt\">0.5</text>"));
	free(ch);
	strbuf_release(&sb);

	/* without stranded GPUs (the time-slicing replay): three charts, in the page too */
	c.stranded = false;
	assert_int_equal(replay_chart_count(&c), 3);
	replay_chart_html(&c, &sb);
	assert_int_equal(count(sb.buf, "<svg class=\"chart\""), 3);
	assert_null(strstr(sb.buf, "data-metric=\"stranded\""));
	assert_int_equal(count(sb.buf, "<span class=\"key\""), 3);
	strbuf_release(&sb);
	free(p);
	free(q);
}

/* Eleven series: the eleventh takes the first colour again, dashed, in the picture and the page. */
static void colours_come_round(void **state)
{
	struct replay_point *p = ramp(3, 1, 2);
	struct replay_chart_series s[11];
	char names[11][8];
	struct replay_chart c = {
		.nodes_file = "n.csv", .pods_file = "p.csv", .stranded = true, .series = s};
	struct strbuf sb = STRBUF_INIT;

	(void)state;
	for (size_t i = 0; i < 11; i++) {
		snprintf(names[i], sizeof(names[i]), "d%zu", i);
		s[i] = (struct replay_chart_series){names[i], NULL, p, 3, NULL};
	}
	c.n_series = 11;
	replay_chart_svg(&c, &sb);
	/* two legend keys and two curves in each of the four charts; one key and four dashed */
	assert_int_equal(count(sb.buf, "stroke=\"#4e79a7\""), 2 + 2 * 4);
	assert_int_equal(count(sb.buf, "stroke=\"#4e79a7\" stroke-dasharray=\"6 3\""), 1 + 4);
	assert_int_equal(count(sb.buf, "data-series=\"10\" stroke=\"#4e79a7\" "
				       "stroke-dasharray"),
			 4);
	strbuf_reset(&sb);
	replay_chart_html(&c, &sb);
	assert_int_equal(count(sb.buf, "border-top:3px dashed #4e79a7"), 1);
	assert_int_equal(count(sb.buf, "border-top:3px solid #4e79a7"), 1);
	strbuf_release(&sb);
	free(p);
}

/*
 * In trace time: 100 steps over 3 days from t = 1000 s, x in days since the
 * first arrival (0..3, the last step at 3); four charts, running where
 * stranded was; the 100%-arrived line and the allocation's knee gone (also
 * when the axis passes 100, over 150 days); over 400 s, x in minutes.
 */
static void in_trace_time(void **state)
{
	struct replay_tpoint t[100];
	struct replay_chart_series s[1] = {{"time-slicing x4", NULL, NULL, 100, t}};
	struct replay_chart c = {.nodes_file = "n.csv",
				 .pods_file = "p.csv",
				 .seed = 42,
				 .inflate = 1.3,
				 .n_arrived = 9,
				 .n_ran = 7,
				 .trace_time = true,
				 .start = 1000,
				 .end = 1000 + 3 * 86400,
				 .series = s,
				 .n_series = 1};
	struct strbuf sb = STRBUF_INIT;
	char *ch;

	(void)state;
	for (int i = 0; i < 100; i++)
		t[i] = (struct replay_tpoint){.pct = i + 1,
					      .time = 1000 + (int64_t)(i + 1) * 3 * 864,
					      .asked_pct = i < 50 ? 40 : 20,
					      .frag_pct = 10,
					      .running = (size_t)(i % 7),
					      .pending = i < 50 ? 3 : 0};
	assert_int_equal(replay_chart_count(&c), 4);
	replay_chart_svg(&c, &sb);
	assert_non_null(strstr(sb.buf, "<title>Replay of n.csv and p.csv in trace time, with "
				       "departures, seed 42</title>"));
	assert_null(strstr(sb.buf, "inflation"));
	assert_non_null(strstr(sb.buf, "9 tasks in creation order, 7 ran, 2 never ran "
				       "\xC2\xB7 trace time 1000 to 260200 s (3.0 days)"));
	assert_null(strstr(sb.buf, "data-metric=\"stranded\""));
	assert_null(strstr(sb.buf, "class=\"ref\""));
	ch = chart_of(sb.buf, "alloc");
	assert_non_null(ch);
	assert_non_null(strstr(ch, ">trace time (days since the first arrival)</text>"));
	/* x: 0..3 days by 0.5; the first step ends at 0.03 days, the last at 3 */
	assert_non_null(strstr(ch, "class=\"xt\">3.0</text>"));
	assert_null(strstr(ch, "class=\"xt\">3.5</text>"));
	assert_non_null(strstr(ch, "points=\"62.1,164.8 "));
	assert_non_null(strstr(ch, " 464.0,208.4\">"));
	assert_non_null(strstr(ch, "time-slicing x4 20.00% at 3.0 days"));
	free(ch);
	ch = chart_of(sb.buf, "running");
	assert_non_null(ch);
	assert_non_null(strstr(ch, "class=\"yt\">6</text>"));
	free(ch);
	ch = chart_of(sb.buf, "pending");
	assert_non_null(ch);
	assert_non_null(strstr(ch, "time-slicing x4 0 tasks at 3.0 days"));
	free(ch);
	strbuf_reset(&sb);
	replay_chart_html(&c, &sb);
	assert_int_equal(count(sb.buf, "<svg class=\"chart\""), 4);
	assert_non_null(strstr(sb.buf, "Tasks bound and not yet deleted"));
	assert_null(strstr(sb.buf, "nothing departs"));

	/* a span of 400 s: minutes, 0..7 */
	c.end = c.start + 400;
	for (int i = 0; i < 100; i++)
		t[i].time = 1000 + (int64_t)(i + 1) * 4;
	strbuf_reset(&sb);
	replay_chart_svg(&c, &sb);
	ch = chart_of(sb.buf, "frag");
	assert_non_null(ch);
	assert_non_null(strstr(ch, ">trace time (minutes since the first arrival)</text>"));
	assert_non_null(strstr(ch, "class=\"xt\">7</text>"));
	free(ch);

	/* 150 days, as the openb trace's: 0..160 by 20, and still no line at 100 */
	c.end = c.start + 150 * 86400;
	for (int i = 0; i < 100; i++)
		t[i].time = 1000 + (int64_t)(i + 1) * 1500 * 86400 / 1000;
	strbuf_reset(&sb);
	replay_chart_svg(&c, &sb);
	assert_non_null(strstr(sb.buf, "class=\"xt\">160</text>"));
	assert_null(strstr(sb.buf, "class=\"ref\""));
	strbuf_release(&sb);
}

/* Names from files: text in the picture and the page, never markup. */
static void names_escaped(void **state)
{
	struct replay_point *p = ramp(3, 0, 1);
	const char *evil = "<script>alert('x')</script>\"&";
	struct replay_chart_series s[1] = {{evil, evil, p, 3, NULL}};
	struct replay_chart c = {.nodes_file = "a<b>/n&.csv",
				 .pods_file = "\"p\".csv",
				 .stranded = true,
				 .series = s,
				 .n_series = 1};
	struct strbuf sb = STRBUF_INIT;

	(void)state;
	replay_chart_svg(&c, &sb);
	replay_chart_html(&c, &sb);
	assert_null(strstr(sb.buf, "<script"));
	assert_null(strstr(sb.buf, "n&.csv"));
	assert_non_null(strstr(sb.buf, "Replay of n&amp;.csv and &quot;p&quot;.csv"));
	/* in each document: the key's tooltip (name: detail) and text, the four charts'
	   descriptions, the four curves' tooltips (name: detail) */
	assert_int_equal(
		count(sb.buf, "&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt;&quot;&amp;"),
		2 * (2 + 1 + 4 + 4 * 2));
	strbuf_release(&sb);
	free(p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(axes_and_curves),
		cmocka_unit_test(colours_come_round),
		cmocka_unit_test(in_trace_time),
		cmocka_unit_test(names_escaped),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
