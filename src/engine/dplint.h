#ifndef GS_DPLINT_H
#define GS_DPLINT_H

#include <stdbool.h>

#include "model/dpconfig_set.h"

/*
 * Traps in device-plugin configs that the plugin itself does not report,
 * or reports only on the node: deployment overrides (spec
 * gpu-operator controllers/object_controls.go and the Helm chart
 * deployments/helm/nvidia-device-plugin), version differences (k8s-device-plugin v0.20.0
 * CHANGELOG.md, internal/rm/rm.go ValidateRequest), MPS limits (k8s-device-plugin v0.20.0
 * cmd/mps-control-daemon/mps/daemon.go), names that match nothing (k8s-device-plugin v0.20.0
 * api/config/v1/resources.go NewResourceName), and what config-manager picks for unlabelled nodes
 * (k8s-device-plugin v0.20.0 cmd/config-manager/main.go updateConfigName,
 * deployments/helm/nvidia-device-plugin/values.yaml; gpu-operator controllers/object_controls.go).
 * Findings go to a dp_diags list; nothing is printed here.
 */

enum dplint_installer {
	DPLINT_HELM,	 /* k8s-device-plugin chart: MPS_ROOT set, fallbacks named,single */
	DPLINT_OPERATOR, /* GPU Operator: MPS_ROOT and MIG_STRATEGY set, fallback empty */
	DPLINT_BARE,	 /* the plugin on its own: nothing set for it */
};

struct dplint_options {
	enum dplint_installer installer;
	int plugin_minor; /* the plugin release v0.<minor>; 12..20 */
	/* GPU Operator: ClusterPolicy spec.mig.strategy (NULL: the chart's "single"). */
	const char *cluster_policy_mig_strategy;
	bool no_mps_root;	    /* the deployment does not set MPS_ROOT */
	const char *default_config; /* DEFAULT_CONFIG, NULL: unset */
	const char *fallbacks;	    /* FALLBACK_STRATEGIES, NULL: the installer's */
};

#define DPLINT_LATEST_MINOR 20

/* Helm chart, plugin v0.20. */
void dplint_options_init(struct dplint_options *o);
/* "v0.20.0", "0.17", "v0.15.1" -> 20, 17, 15. Fails outside v0.12..v0.20. */
int dplint_parse_version(const char *s, int *minor) GS_WUR;
/* "helm", "operator", "none". */
int dplint_parse_installer(const char *s, enum dplint_installer *out) GS_WUR;

/* Findings for one config that parsed (validation in the deployment's terms, traps). */
void dplint_config(const struct dpconfig *c, const char *file, const struct dplint_options *o,
		   struct dp_diags *out);

/* Findings for the ConfigMap as a whole: what unlabelled nodes get. `at` locates the data. */
void dplint_set(const struct dpconfig_set *set, const char *file, struct ydoc_pos at,
		const struct dplint_options *o, struct dp_diags *out);

#endif
