#ifndef GS_EXPLAIN_NODE_H
#define GS_EXPLAIN_NODE_H

#include <jansson.h>

#include "model/catalog.h"
#include "model/dpconfig_set.h"
#include "base/error.h"

/*
 * `gpushare explain node`: which device-plugin config a node gets and why
 * (config-manager's choice: the nvidia.com/device-plugin.config label,
 * DEFAULT_CONFIG, the fallbacks), its MIG strategy and where it comes from,
 * its MIG layout, the sharing, and the numbers NVIDIA's stack would publish
 * (capacity = allocatable per resource, GPU feature discovery's labels)
 * (docs/guide/explain.md). Pure: the same text from a live Node and from a
 * manifest, since only the node's declared hardware and labels and the
 * ConfigMap count (gpushare's own labels and annotations on a live node are
 * recognised as its own).
 */

/*
 * The report, lines ending in '\n', into *out (allocated). `set` NULL: no
 * ConfigMap. Fails on a node that is not one (no name, unreadable
 * annotations, unknown GPU model), err says which.
 */
int explain_node(const struct catalog *cat, const json_t *node, const struct dpconfig_set *set,
		 char **out, struct gs_error *err) GS_WUR;

/*
 * The node in a line for explain pod, each GPU model apart: *cards the
 * declared cards ("1 x Tesla T4 (15360 MiB each), 2 x NVIDIA
 * A100-SXM4-80GB (81920 MiB each)"), *slots per resource the device plugin
 * registers under `set` its devices on those cards ("; nvidia.com/gpu 12
 * slots: 4 on 1 Tesla T4 (4 per GPU sharing its 15360 MiB), 8 on 2 NVIDIA
 * A100-SXM4-80GB (4 per GPU sharing its 81920 MiB)"; "" when it registers
 * none, or on the DRA path). Both allocated. Fails as explain_node does, or
 * when the devices cannot be laid out (ledger_new).
 */
int explain_node_summary(const struct catalog *cat, const json_t *node,
			 const struct dpconfig_set *set, char **cards, char **slots,
			 struct gs_error *err) GS_WUR;

#endif
