#ifndef GS_TRACE_H
#define GS_TRACE_H

#include <stddef.h>

#include "base/error.h"
#include "engine/replay.h"

/*
 * Readers of the CSV files of Alibaba's cluster-trace-gpu-v2023
 * (docs/guide/replay.md): a node list (sn, cpu_milli, memory_mib, gpu, model)
 * and a pod list (name, cpu_milli, memory_mib, num_gpu, gpu_milli,
 * gpu_spec; other columns are ignored). The first line names the columns,
 * in any order. Fields are plain (no quoting); CRLF line ends are taken.
 * Bad input fails with `file:line:col: what is wrong`.
 */

#define TRACE_MAX_BYTES (256u << 20)
#define TRACE_MAX_NAME 253 /* a Kubernetes object name */

/* Parse `text` (len bytes, named `file` in errors) into t->nodes. */
int trace_parse_nodes(const char *file, const char *text, size_t len, struct replay_trace *t,
		      struct gs_error *err) GS_WUR;
/*
 * What a pod list must carry besides the tasks' shapes. TRACE_TIMES (a
 * replay with departures): the columns creation_time and deletion_time,
 * whole numbers of seconds, deletion not before creation; scheduled_time
 * when present (empty: never scheduled). Without it the times are not read
 * (-1).
 */
#define TRACE_TIMES 1u

/* Parse `text` into t->tasks. */
int trace_parse_tasks(const char *file, const char *text, size_t len, unsigned flags,
		      struct replay_trace *t, struct gs_error *err) GS_WUR;
/* Read both files ("-" is standard input for one of them). */
int trace_load(const char *nodes_path, const char *tasks_path, unsigned flags,
	       struct replay_trace *t, struct gs_error *err) GS_WUR;

#endif
