#ifndef GS_APPLY_H
#define GS_APPLY_H

#include <jansson.h>

#include "base/error.h"

struct kube_client;

/*
 * Put manifests into the cluster the way a person would with
 * `kubectl apply`, for the kinds the lab uses (Namespace, Node, ConfigMap,
 * Pod, ResourceQuota, ServiceAccount, LimitRange, Secret, and
 * resource.k8s.io/v1 ResourceClaim and ResourceClaimTemplate).
 */

enum apply_result {
	APPLY_CREATED,
	APPLY_CONFIGURED, /* existed and was changed */
	APPLY_UNCHANGED,
};

/* "created", "configured", "unchanged": kubectl's words. */
const char *apply_result_name(enum apply_result r);

/*
 * API paths of obj: its collection ("/api/v1/namespaces/team-a/pods") and
 * itself (".../pods/team-over"). Either out-pointer may be NULL; the caller
 * frees what it receives. Fails for unsupported kinds and missing names.
 */
int apply_paths(const json_t *obj, char **collection, char **item, struct gs_error *err) GS_WUR;

/*
 * Create obj, or bring an existing one in line: labels, annotations, spec
 * and data are merge-patched (ConfigMap data keys absent from obj are
 * removed). A Pod's spec is immutable: an existing pod whose containers,
 * resources or node selector differ is reported as an error naming the
 * difference rather than silently deleted. Node status is left alone
 * (gpushare sync owns it). On failure err holds the apiserver's message
 * verbatim (kube_last_status has the code).
 */
int apply_object(struct kube_client *c, const json_t *obj, enum apply_result *result, json_t **out,
		 struct gs_error *err) GS_WUR;

#endif
