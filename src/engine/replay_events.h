#ifndef GS_REPLAY_EVENTS_H
#define GS_REPLAY_EVENTS_H

#include <stddef.h>
#include <stdint.h>

#include "base/error.h"
#include "engine/replay.h"
#include "model/catalog.h"

/*
 * The replay in trace time (`gpushare replay --departures`,
 * docs/guide/replay.md): the trace's own tasks, each once, arrive at their
 * creation_time and leave at their deletion_time (the times
 * trace_parse_tasks reads with TRACE_TIMES). A task that fits nowhere
 * waits in a queue; when a bound task leaves, its node's resources and its
 * replicas go back (plan_remove, ledger_release) and the queue is tried
 * again in arrival order (kube-scheduler's PrioritySort with every priority
 * equal); a task still waiting at its deletion_time never ran. Measured
 * per 1% of the trace's span: the GPU allocation and fragmentation of
 * replay.h, averaged over time, and the tasks running and waiting; per
 * task its wait; per pool the waits' summary. Pure: no I/O.
 */

/*
 * Run it (o->inflate is not read: the trace's tasks come once each, in
 * creation order, ties in trace order; o->seed seeds only the scheduler's
 * draws among tied nodes). Fails as replay_run does,
 * and on tasks without times. The result's places are in arrival order,
 * `timeline` set, `points` empty; `trace` is borrowed as for replay_run.
 */
int replay_events_run(const struct catalog *cat, const struct replay_trace *trace,
		      const struct replay_opts *o, struct replay_result **out,
		      struct gs_error *err) GS_WUR;

#endif
