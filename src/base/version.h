#ifndef GS_VERSION_H
#define GS_VERSION_H

/* gpushare's own release. */
#define GPUSHARE_VERSION "0.1.0"

/*
 * The upstream releases gpushare models, each in one place (`gpushare
 * version` prints them): the Kubernetes whose scheduler, kubelet, quota and
 * validation rules it follows, and NVIDIA's device plugin (with GFD and
 * config-manager), mig-parted (the named MIG layouts of data/gpus.tab) and
 * DRA driver.
 */
#define GPUSHARE_KUBERNETES_VERSION "v1.34.4"
#define GPUSHARE_DEVICE_PLUGIN_VERSION "v0.20.0"
#define GPUSHARE_MIG_PARTED_VERSION "v0.15.0"
#define GPUSHARE_DRA_DRIVER_VERSION "v25.12.0"

#endif
