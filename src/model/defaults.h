#ifndef GS_DEFAULTS_H
#define GS_DEFAULTS_H

/*
 * Names gpushare uses unless told otherwise, defined once: the namespace
 * the lab and the device plugin live in, and the ConfigMap of named
 * device-plugin configs (the Helm chart's config.name).
 */
#define GS_DEFAULT_NAMESPACE "gpu-share"
#define GS_DEFAULT_CONFIGMAP "device-plugin-configs"
/* "gpu-share/device-plugin-configs", as --configmap takes it. */
#define GS_DEFAULT_CONFIGMAP_REF GS_DEFAULT_NAMESPACE "/" GS_DEFAULT_CONFIGMAP

#endif
