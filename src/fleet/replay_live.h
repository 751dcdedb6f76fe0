#ifndef GS_REPLAY_LIVE_H
#define GS_REPLAY_LIVE_H

#include <stdbool.h>

#include "base/error.h"
#include "engine/replay.h"
#include "model/catalog.h"

/*
 * `gpushare replay --live`: the replay's arrivals against a real cluster
 * (docs/guide/replay.md "Live"). The trace's nodes become fake Nodes
 * (kwok runs them), labelled gpushare.io/replay=<run> and with a
 * device-plugin config key of their own in the ConfigMap, advertised by
 * gpushare's controller already running in the cluster; the tasks become
 * Pods created one at a time in arrival order, each waited for until
 * kube-scheduler bound it and the controller admitted it (or the scheduler
 * found it unschedulable), so both see the offline order. The places are
 * then read back (replay_cluster_places) and measured by replay_measure.
 */

#define REPLAY_LIVE_LABEL "gpushare.io/replay" /* on the run's nodes and pods: the run id */
#define REPLAY_LIVE_KWOK "kwok.x-k8s.io/node"  /* "fake": kwok manages the node */
#define REPLAY_LIVE_IMAGE "registry.k8s.io/pause:3.10"
#define REPLAY_LIVE_NAMESPACE "gpushare-replay" /* default namespace of the pods */

struct kube_client;

struct replay_live_opts {
	const char *ns;	     /* the pods' namespace, created if absent */
	const char *cm_ns;   /* the device-plugin ConfigMap the controller reads */
	const char *cm_name; /* (created if absent; only the run's key is written) */
	const char *run;     /* run id (a label value); NULL: "r" + time and pid in hex */
	bool keep;	     /* leave the nodes, pods and ConfigMap key */
	long timeout_ms;     /* for one wait: the nodes' advertisement, one pod */
	/* Progress lines ("created 40 nodes", ...), never a credential. NULL = silent. */
	void (*progress)(void *arg, const char *line);
	void *progress_arg;
};

/*
 * Run the replay of `tr` under `o` on the cluster `c` talks to; *out as
 * replay_run's. Unless lo->keep, everything made is deleted at the end,
 * also after a failure (the namespace only when this run created it, else
 * the run's pods); a failed cleanup is a progress line, not a failure.
 * Fails with the apiserver's words (a cluster that cannot be reached: the
 * kubectl-like line), or a timeout naming what was waited for.
 */
int replay_live_run(struct kube_client *c, const struct catalog *cat, const struct replay_trace *tr,
		    const struct replay_opts *o, const struct replay_live_opts *lo,
		    struct replay_result **out, struct gs_error *err) GS_WUR;

#endif
