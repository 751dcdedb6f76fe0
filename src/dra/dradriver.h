#ifndef GS_DRADRIVER_H
#define GS_DRADRIVER_H

#include <jansson.h>
#include <stdbool.h>

#include "base/error.h"
#include "model/names.h"

/*
 * The releases of NVIDIA's DRA driver (gpu.nvidia.com, kubernetes-sigs/
 * dra-driver-nvidia-gpu) gpushare plays, and every fact that differs
 * between them, in one table: the slices, prepare and unprepare switch on
 * these fields, never on a release compared by hand. docs/guide/dra.md
 * ("Driver releases") names the source file of each.
 */

enum dradriver_release {
	DRADRIVER_V25_12_0, /* tag v25.12.0, commit 0882da87 (NVIDIA/k8s-dra-driver-gpu) */
	DRADRIVER_V0_5_0,   /* v0.5.0, module sigs.k8s.io/dra-driver-nvidia-gpu */
	DRADRIVER_N_RELEASES,
};
/* What a node runs unless it says otherwise. */
#define DRADRIVER_NEWEST DRADRIVER_V0_5_0

struct dradriver {
	enum dradriver_release release;
	const char *version; /* "v25.12.0" */
	/* The gate ConsumableShares and the flag --consumable-shares exist. */
	bool consumable_shares;
	/* Devices carry resource.kubernetes.io/numaNode when sysfs knows it. */
	bool numa_node;
	/*
	 * TimeSlicingSettings on: a config without sharing becomes TimeSlicing
	 * (DefaultGpuConfig, Normalize), and unprepare resets the time slice of
	 * every full GPU; later releases reset it only where prepare set it.
	 */
	bool implicit_time_slicing;
	/*
	 * Prepare's texts name the device: "allocatable not found for device
	 * \"gpu-9\"", "cannot apply GpuConfig to device \"x\" of type \"mig\"";
	 * a strategy whose gate is off is "\"TimeSlicing\" is selected as the GPU
	 * sharing strategy, but the \"TimeSlicingSettings\" feature gate is not
	 * enabled"; an unscoped config of no device kind is skipped.
	 */
	bool v05_prepare_texts;
	/* DynamicMIG: a GPU without MIG profiles is published plain (memory, no counters). */
	bool dynamic_mig_plain_gpu;
};

/* The release's facts. */
const struct dradriver *dradriver_get(enum dradriver_release r);
/* The newest release modelled. */
const struct dradriver *dradriver_newest(void);
/* "v25.12.0" -> its facts; NULL with err naming the known versions. */
const struct dradriver *dradriver_parse(const char *version, struct gs_error *err) GS_WUR;

/*
 * A node's setting read from its annotation `key`, else its label `key`
 * (borrowed; NULL when neither is there).
 */
const char *dradriver_node_setting(const json_t *node, const char *key);

/*
 * The release a node's driver runs: DRADRIVER_ANN_VERSION, else `def`.
 * NULL with err ("node \"N\": gpushare.io/dra-driver-version: ...").
 */
const struct dradriver *dradriver_for_node(const json_t *node, const struct dradriver *def,
					   struct gs_error *err) GS_WUR;

/* The kubelet plugin's --consumable-shares (cmd/gpu-kubelet-plugin/main.go). */
enum dradriver_shares_mode {
	DRADRIVER_SHARES_DISABLED,
	DRADRIVER_SHARES_UNLIMITED, /* memory capacity, default 0 */
	DRADRIVER_SHARES_MEMORY,    /* memory capacity, default all of it */
	DRADRIVER_SHARES_COUNT,	    /* a `shares` capacity of `count` */
};
struct dradriver_shares {
	enum dradriver_shares_mode mode;
	long long count;
};

/*
 * Parse a --consumable-shares value as the plugin's flag check does:
 * "disabled", "memory", "unlimited" or a positive integer (Go's
 * strconv.Atoi). Error: "invalid value for --consumable-shares: \"x\" (must
 * be 'disabled', 'memory', 'unlimited', or a positive integer)".
 */
int dradriver_shares_parse(const char *v, struct dradriver_shares *out,
			   struct gs_error *err) GS_WUR;
/* "disabled", "unlimited", "memory" or the count, into buf. */
void dradriver_shares_string(const struct dradriver_shares *s, char *buf, size_t size);

#endif
