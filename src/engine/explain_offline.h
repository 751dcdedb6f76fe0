#ifndef GS_EXPLAIN_OFFLINE_H
#define GS_EXPLAIN_OFFLINE_H

#include <jansson.h>

#include "base/error.h"
#include "engine/sync_plan.h"
#include "yaml/ydoc.h"

/*
 * The objects `explain pod` reads from a cluster, made from manifests
 * before the cluster exists (docs/guide/explain.md): the nodes as gpushare would
 * advertise them, the pods already bound, and the quotas as the quota
 * controller fills them in. Pure: no I/O, the streams are loaded already.
 */

struct explain_fleet {
	json_t *nodes; /* a NodeList: every Node of the stream, advertised */
	json_t *pods;  /* a PodList: every Pod of the stream */
	struct sync_report
		plan; /* sync_plan's report, one entry per Node (patches applied: NULL) */
	json_t *kept; /* explain_fleet_advertise_in_place: the values patches replaced */
};

/*
 * Every Node of `s` with sync_plan's patch under `configmap` applied
 * (labels, capacity, allocatable as gpushare would publish them; a node the
 * stack refuses keeps what it shows, its reason in plan), allocatable pods
 * 110 (kubelet's default) when the manifest has none; every Pod of `s` and
 * of `more_pods` (NULL = none) as the pods already there (those with
 * spec.nodeName bound to that node). Fails when `s` holds no Node or the
 * ConfigMap is unusable.
 */
int explain_fleet_build(const struct ydoc_stream *s, const struct ydoc_stream *more_pods,
			const json_t *configmap, struct explain_fleet *out,
			struct gs_error *err) GS_WUR;
/*
 * The same from objects: `nodes` an array of Nodes (none is fine: an empty
 * fleet), `pods` an array of the Pods already there (NULL = none); both are
 * copied; `configmap` NULL: none, every node gets the empty config. Fails
 * only when the ConfigMap is unusable.
 */
int explain_fleet_advertise(const json_t *nodes, const json_t *pods, const json_t *configmap,
			    struct explain_fleet *out, struct gs_error *err) GS_WUR;
/*
 * The same on the caller's nodes themselves (an array of Nodes, no pods),
 * for a caller that reads them only as advertised from then on: the
 * objects are changed where they are (a map shared with another node through
 * a YAML alias is still copied first), so a large fleet is not held twice.
 * The values a patch replaces or removes are kept until
 * explain_fleet_release, so that no object read from a file is freed while
 * its stream may still be asked for positions.
 */
int explain_fleet_advertise_in_place(json_t *nodes, const json_t *configmap,
				     struct explain_fleet *out, struct gs_error *err) GS_WUR;
void explain_fleet_release(struct explain_fleet *f);

/*
 * A ResourceQuotaList of the ResourceQuotas of `s` in namespace `ns` (no
 * metadata.namespace: "default"), each with the status the quota controller
 * gives it: hard = spec.hard, used = what the pods of `pods` (a PodList) in
 * `ns` count, 0 for the rest. A pod counts as the quota controller charges
 * it (k8s.io/kubernetes v1.37.2 pkg/quota/v1/evaluator/core/pods.go
 * QuotaV1Pod): not when Succeeded or Failed, nor when stuck terminating
 * (its deletionTimestamp plus deletionGracePeriodSeconds passed by the
 * clock). Fails on a quantity that does not parse, at its file:line:col.
 */
int explain_quota_list_build(const struct ydoc_stream *s, const char *ns, const json_t *pods,
			     json_t **out, struct gs_error *err) GS_WUR;
/*
 * The same from `quotas`, an array of ResourceQuota objects (other kinds
 * and namespaces skipped), whose quantities were checked
 * (explain_quantities_check on spec.hard). A quota recorded from a cluster
 * (status.used set) keeps the status recorded; both functions apply that
 * rule.
 */
int explain_quota_list_from(const json_t *quotas, const char *ns, const json_t *pods, json_t **out,
			    struct gs_error *err) GS_WUR;
/*
 * The same for every namespace of `quotas` at once: *out maps each (in the
 * order of its first quota) to its list. The pods are read once, whatever
 * the number of namespaces.
 */
int explain_quota_lists_from(const json_t *quotas, const json_t *pods, json_t **out,
			     struct gs_error *err) GS_WUR;

/*
 * The same a pod at a time: explain_quota_sum_new(quotas, only_ns)
 * (borrowed), explain_quota_sum_add for each pod in order (not kept),
 * then explain_quota_sum_lists for what explain_quota_lists_from gives
 * (only_ns NULL) or, under only_ns, that namespace's list in a map of one;
 * it may be asked again after more pods. A pod stuck terminating is judged
 * by the clock when explain_quota_sum_new ran.
 */
struct explain_quota_sum;
struct explain_quota_sum *explain_quota_sum_new(const json_t *quotas, const char *only_ns);
int explain_quota_sum_add(struct explain_quota_sum *q, const json_t *pod,
			  struct gs_error *err) GS_WUR;
int explain_quota_sum_lists(const struct explain_quota_sum *q, json_t **out,
			    struct gs_error *err) GS_WUR;
void explain_quota_sum_free(struct explain_quota_sum *q);

/*
 * Every value of `map` (requests, limits, a quota's hard, a LimitRange
 * item's default, ...; NULL = none) is a quantity; else err at its
 * file:line:col in s (s NULL: the message alone), "WHAT KEY: why".
 */
int explain_quantities_check(const struct ydoc_stream *s, const json_t *map, const char *what,
			     struct gs_error *err) GS_WUR;

/*
 * Every request and limit of the pod's containers parses as a quantity;
 * else err at its file:line:col.
 */
int explain_pod_check(const struct ydoc_stream *s, const json_t *pod, struct gs_error *err) GS_WUR;

#endif
