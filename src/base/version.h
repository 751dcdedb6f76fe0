#ifndef GS_VERSION_H
#define GS_VERSION_H

/* gpushare's own release. */
#define GPUSHARE_VERSION "0.1.0"

/*
 * The upstream releases gpushare models, each in one place (`gpushare
 * version` prints them): the Kubernetes whose scheduler, kubelet, quota and
 * validation rules it follows, and NVIDIA's device plugin (with GFD and
 * config-manager), mig-parted (the named MIG layouts of data/gpus.tab) and
 * DRA driver. Each is the default and the newest modelled: Kubernetes
 * v1.34.4 to v1.36.3 are also modelled on request (model/kubeversion.h,
 * --kubernetes-version), the DRA driver v25.12.0 per node
 * (dra/dradriver.h).
 */
#define GPUSHARE_KUBERNETES_VERSION "v1.37.2"
#define GPUSHARE_DEVICE_PLUGIN_VERSION "v0.20.0"
#define GPUSHARE_MIG_PARTED_VERSION "v0.15.0"
#define GPUSHARE_DRA_DRIVER_VERSION "v0.5.0"

#endif
