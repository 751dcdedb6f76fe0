#ifndef GS_REPORT_LIVE_H
#define GS_REPORT_LIVE_H

#include <jansson.h>

#include "base/error.h"
#include "engine/report.h"

/* The fleet picture's reader for a live cluster: what `gpushare report` and the lab draw. */

struct kube_client;

/*
 * GET what the picture needs from a cluster: the nodes, the pods that have
 * not ended, every ResourceQuota, and the device-plugin ConfigMap
 * (cm_namespace/cm_name; *configmap NULL when it does not exist).
 */
int report_read(struct kube_client *c, const char *cm_namespace, const char *cm_name,
		json_t **nodes, json_t **pods, json_t **quotas, json_t **configmap,
		struct gs_error *err) GS_WUR;

/* report_read, then report_model_build on what it read (`gpushare report`, `gpushare lab`). */
int report_live(struct kube_client *c, const char *cm_namespace, const char *cm_name,
		struct report_model **out, struct gs_error *err) GS_WUR;

#endif
