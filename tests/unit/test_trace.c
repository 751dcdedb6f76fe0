/*
 * fleet/trace: the CSV readers of the trace's node and pod lists. Good
 * input in any column order, and every kind of bad input reported at its
 * file:line:col.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fleet/trace.h"

static void nodes_read(void **state)
{
	(void)state;
	const char *csv = "sn,cpu_milli,memory_mib,gpu,model\r\n"
			  "openb-node-0000,32000,262144,0,\r\n"
			  "openb-node-0001,96000,393216,8,G2\r\n"
			  "\n";
	struct replay_trace t = {0};
	struct gs_error err;

	assert_int_equal(trace_parse_nodes("n.csv", csv, strlen(csv), &t, &err), 0);
	assert_int_equal(t.n_nodes, 2);
	assert_string_equal(t.nodes[0].name, "openb-node-0000");
	assert_int_equal(t.nodes[0].gpus, 0);
	assert_string_equal(t.nodes[0].model, "");
	assert_int_equal(t.nodes[1].cpu_milli, 96000);
	assert_int_equal(t.nodes[1].memory_mib, 393216);
	assert_int_equal(t.nodes[1].gpus, 8);
	assert_string_equal(t.nodes[1].model, "G2");
	replay_trace_release(&t);
}

static void tasks_read_any_order(void **state)
{
	(void)state;
	/* The trace's own header, then columns moved around and gpu_spec absent. */
	const char *a = "name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,"
			"creation_time,deletion_time,scheduled_time\n"
			"openb-pod-0001,6000,12288,1,460,,LS,Running,427061,12902960,427061\n"
			"openb-pod-0002,88000,327680,8,1000,V100M32|G3,BE,Failed,1,2,3\n"
			"openb-pod-0003,4000,8192,0,0,,BE,Pending,1,,\n";
	const char *b = "gpu_milli,num_gpu,name,memory_mib,cpu_milli\n"
			"250,1,x,1024,500\n";
	struct replay_trace t = {0};
	struct gs_error err;

	assert_int_equal(trace_parse_tasks("p.csv", a, strlen(a), 0, &t, &err), 0);
	assert_int_equal(t.n_tasks, 3);
	assert_int_equal(t.tasks[0].gpu_milli, 460);
	assert_int_equal(t.tasks[0].num_gpu, 1);
	assert_string_equal(t.tasks[0].gpu_spec, "");
	assert_int_equal(t.tasks[1].num_gpu, 8);
	assert_string_equal(t.tasks[1].gpu_spec, "V100M32|G3");
	assert_int_equal(t.tasks[2].cpu_milli, 4000);
	/* Times are not read without TRACE_TIMES: the third task lacks some. */
	assert_int_equal(t.tasks[0].created, -1);
	assert_int_equal(t.tasks[0].deleted, -1);
	replay_trace_release(&t);
	assert_int_equal(trace_parse_tasks("p.csv", b, strlen(b), 0, &t, &err), 0);
	assert_string_equal(t.tasks[0].name, "x");
	assert_int_equal(t.tasks[0].cpu_milli, 500);
	assert_int_equal(t.tasks[0].gpu_milli, 250);
	assert_string_equal(t.tasks[0].gpu_spec, "");
	replay_trace_release(&t);
}

struct bad {
	int nodes; /* 1: a node list, 0: a pod list */
	const char *csv;
	const char *want;
};

#define NH "sn,cpu_milli,memory_mib,gpu,model\n"
#define PH "name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec\n"
#define TH                                                                                         \
	"name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,creation_time,deletion_time,"        \
	"scheduled_time\n"

static const struct bad bads[] = {
	{1, "", "f.csv:1:1: empty file: the first line must name the columns"},
	{1, "sn,cpu_milli,memory_mib,gpu\n", "f.csv:1:1: no column 'model' in the header"},
	{1, "sn,cpu_milli,memory_mib,gpu,model,gpu\n", "f.csv:1:35: column 'gpu' named twice"},
	{1, NH "a,1,2,0\n", "f.csv:2:1: 4 fields, the header names 5"},
	{1, NH "a,1,2,0,,x\n", "f.csv:2:10: 6 fields, the header names 5"},
	{1, NH "a,1x,2,0,\n", "f.csv:2:4: cpu_milli: '1x' is not a whole number"},
	{1, NH "a,-1,2,0,\n", "f.csv:2:3: cpu_milli: '-1' is not a whole number"},
	{1, NH "a,,2,0,\n", "f.csv:2:3: cpu_milli: empty, expected a number"},
	{1, NH "a,1,2,65,T4\n", "f.csv:2:7: gpu: 65 is above the limit 64"},
	{1, NH "a,1,99999999999999999999,0,\n",
	 "f.csv:2:5: memory_mib: 99999999999999999999 is above the limit 4294967296"},
	{1, NH "a,1,2,2,K80\n",
	 "f.csv:2:9: model 'K80': unknown GPU model (known: A10, G1, G2, G3, P100, T4, "
	 "V100M16, V100M32)"},
	{1, NH "a,1,2,2,\n", "f.csv:2:9: model '': a node with GPUs needs their model"},
	{1, NH "a,1,2,0,T4\n", "f.csv:2:9: model 'T4': a model on a node without GPUs"},
	{1, NH "a,1,2,1,T 4\n", "f.csv:2:10: model: unexpected ' ' in 'T 4' (a GPU model code)"},
	{1, NH "Node-A,1,2,0,\n",
	 "f.csv:2:1: sn: 'Node-A' is not a valid object name (lower-case letters, digits, '-' "
	 "and '.', starting and ending with a letter or digit)"},
	{1, NH "a,1,2,0,\nb,1,2,0,\na,1,2,0,\n", "f.csv:4:1: sn 'a' already on line 2"},
	{1, NH "\"a\",1,2,0,\n", "f.csv:2:1: quoted fields are not supported"},
	{0, PH "p,1,2,0,5,\n",
	 "f.csv:2:9: gpu_milli 5 with num_gpu 0: a task without GPUs asks for no gpu_milli"},
	{0, PH "p,1,2,1,0,\n",
	 "f.csv:2:9: gpu_milli 0 with num_gpu 1: a task with GPUs asks for some gpu_milli (1 "
	 "to 1000)"},
	{0, PH "p,1,2,2,500,\n",
	 "f.csv:2:9: gpu_milli 500 with num_gpu 2: a task of several GPUs takes them whole "
	 "(gpu_milli 1000)"},
	{0, PH "p,1,2,1,1001,\n", "f.csv:2:9: gpu_milli: 1001 is above the limit 1000"},
	{0, PH "p,1,2,1,500,T4;G2\n",
	 "f.csv:2:15: gpu_spec: unexpected ';' in 'T4;G2' (a GPU model code, or several "
	 "separated by '|')"},
	{0, PH "p,1,2,1,500,\np,1,2,1,500,\n", "f.csv:3:1: name 'p' already on line 2"},
	{0, "name,cpu_milli,memory_mib,num_gpu\n",
	 "f.csv:1:1: no column 'gpu_milli' in the header"},
};

/* TRACE_TIMES: the three times, an empty scheduled_time -1 (never scheduled in the trace). */
static void tasks_times(void **state)
{
	(void)state;
	const char *a = "name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,"
			"creation_time,deletion_time,scheduled_time\n"
			"openb-pod-0001,6000,12288,1,460,,LS,Running,427061,12902960,427061\n"
			"openb-pod-0003,4000,8192,0,0,,BE,Pending,7,7,\n";
	const char *b = "deletion_time,name,cpu_milli,memory_mib,num_gpu,gpu_milli,creation_time\n"
			"30,x,1,1,1,250,20\n";
	struct replay_trace t = {0};
	struct gs_error err;

	assert_int_equal(trace_parse_tasks("p.csv", a, strlen(a), TRACE_TIMES, &t, &err), 0);
	assert_int_equal(t.tasks[0].created, 427061);
	assert_int_equal(t.tasks[0].deleted, 12902960);
	assert_int_equal(t.tasks[0].scheduled, 427061);
	assert_int_equal(t.tasks[1].created, 7);
	assert_int_equal(t.tasks[1].deleted, 7);
	assert_int_equal(t.tasks[1].scheduled, -1);
	replay_trace_release(&t);
	assert_int_equal(trace_parse_tasks("p.csv", b, strlen(b), TRACE_TIMES, &t, &err), 0);
	assert_int_equal(t.tasks[0].created, 20);
	assert_int_equal(t.tasks[0].deleted, 30);
	assert_int_equal(t.tasks[0].scheduled, -1);
	replay_trace_release(&t);
}

/* With departures (TRACE_TIMES) the times are needed: pod lists, "csv" then "want". */
static const char *const bad_times[][2] = {
	{PH "p,1,2,1,500,\n", "f.csv:1:1: no column 'creation_time' in the header"},
	{TH "p,1,2,1,500,,10,,\n", "f.csv:2:17: deletion_time: empty, expected a number"},
	{TH "p,1,2,1,500,,,20,\n", "f.csv:2:14: creation_time: empty, expected a number"},
	{TH "p,1,2,1,500,,10,9,\n", "f.csv:2:17: deletion_time 9 is before creation_time 10"},
	{TH "p,1,2,1,500,,10,1e3,\n", "f.csv:2:18: deletion_time: '1e3' is not a whole number"},
	{TH "p,1,2,1,500,,10,20,x\n", "f.csv:2:20: scheduled_time: 'x' is not a whole number"},
};

static void bad_input_positions(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(bads) / sizeof(bads[0]); i++) {
		struct replay_trace t = {0};
		struct gs_error err;
		char buf[512];
		const struct bad *b = &bads[i];
		int rc = b->nodes ? trace_parse_nodes("f.csv", b->csv, strlen(b->csv), &t, &err)
				  : trace_parse_tasks("f.csv", b->csv, strlen(b->csv), 0, &t, &err);
		if (rc == 0)
			fail_msg("case %zu: accepted '%s'", i, b->csv);
		if (strcmp(gs_error_str(&err, buf, sizeof(buf)), b->want))
			fail_msg("case %zu:\n got  %s\n want %s", i, buf, b->want);
		replay_trace_release(&t);
	}
	for (size_t i = 0; i < sizeof(bad_times) / sizeof(bad_times[0]); i++) {
		struct replay_trace t = {0};
		struct gs_error err;
		char buf[512];
		const char *csv = bad_times[i][0], *want = bad_times[i][1];
		if (trace_parse_tasks("f.csv", csv, strlen(csv), TRACE_TIMES, &t, &err) == 0)
			fail_msg("times case %zu: accepted '%s'", i, csv);
		if (strcmp(gs_error_str(&err, buf, sizeof(buf)), want))
			fail_msg("times case %zu:\n got  %s\n want %s", i, buf, want);
		replay_trace_release(&t);
		/* The replay without departures does not look at them. */
		if (strstr(want, "creation_time' in") == NULL &&
		    trace_parse_tasks("f.csv", csv, strlen(csv), 0, &t, &err) < 0)
			fail_msg("times case %zu: refused without TRACE_TIMES: %s", i, err.msg);
		replay_trace_release(&t);
	}
}

static void load_names_the_file(void **state)
{
	(void)state;
	struct replay_trace t = {0};
	struct gs_error err;
	char buf[512];

	assert_int_equal(trace_load("/nonexistent/n.csv", "/nonexistent/p.csv", 0, &t, &err), -1);
	assert_non_null(strstr(gs_error_str(&err, buf, sizeof(buf)), "/nonexistent/n.csv"));
	assert_int_equal(trace_load("-", "-", 0, &t, &err), -1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(nodes_read),	       cmocka_unit_test(tasks_read_any_order),
		cmocka_unit_test(tasks_times),	       cmocka_unit_test(bad_input_positions),
		cmocka_unit_test(load_names_the_file),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
