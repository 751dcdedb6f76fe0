#ifndef GS_REPORT_H
#define GS_REPORT_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#include "engine/pools.h"
#include "engine/sync_plan.h"
#include "model/catalog.h"
#include "model/dpconfig_set.h"
#include "base/error.h"
#include "base/strbuf.h"

/*
 * The fleet picture (docs/guide/report.md): every GPU node, its physical cards,
 * on each card the devices the device plugin hands out (time-slice or MPS
 * replicas, MIG instances, the whole card), who holds each one, what
 * isolates the tenants of a card, and each namespace's quota use.
 *
 * Two steps, both pure: report_model_build turns recorded objects (a
 * NodeList, a PodList, a ResourceQuotaList, the device-plugin ConfigMap's
 * configs) into a report_model; report_html and report_svg turn a model
 * into text. Every string that reaches the text went through
 * escape_html (base/escape.h). report_live.h reads a cluster.
 */

/* What isolates the tenants of one card (isolation_methods() in isolation.h says why). */
enum report_isolation {
	REPORT_ISO_WHOLE,    /* not shared: one device, the whole card */
	REPORT_ISO_NONE,     /* time-slicing: replicas share memory and faults */
	REPORT_ISO_MPS,	     /* MPS: per-client memory and thread limits, one context */
	REPORT_ISO_HARDWARE, /* MIG: instances with their own memory and engines */
};

/* Where a pod's devices come from. */
enum report_origin {
	REPORT_FROM_NONE,     /* holds no device shown here */
	REPORT_FROM_LEDGER,   /* the gpushare.io/devices annotation */
	REPORT_FROM_REQUESTS, /* derived from its requests (docs/guide/report.md) */
	REPORT_FROM_CLAIM,    /* a ResourceClaim allocated on a DRA node reserved for it */
};

/* One device the plugin would hand out. */
struct report_slot {
	char *resource; /* "nvidia.com/gpu", "nvidia.com/mig-1g.10gb", "nvidia.com/gpu.shared" */
	char *device;	/* the device ID as the ledger names it */
	char *label;	/* short: "#2" (replica), "1g.10gb" (MIG instance), "whole" */
	int domain;	/* its memory domain on the card: the MIG instance, else 0 */
	long pod;	/* index into report_model.pods; -1 free */
};

struct report_card {
	int index; /* NVML index */
	char *product;
	int memory_mib;
	bool mig; /* MIG instances are what the plugin hands out */
	enum report_isolation isolation;
	struct report_slot *slots;
	size_t n_slots;
	/* "gpu-share, team-a": namespaces sharing one memory domain; NULL when none. */
	char *shared_memory;
};

struct report_node {
	char *name;
	char *config;	    /* the chosen device-plugin config key; "" for none */
	char *sharing;	    /* "none", "time-slicing", "mps" */
	char *mig_strategy; /* "none", "single", "mixed" */
	char *failure;	    /* why the stack refuses the node; NULL when it does not */
	char *resources;    /* "nvidia.com/gpu=8": what it advertises */
	bool dra;	    /* gpushare.io/path=dra: cards shown, no device-plugin devices */
	bool dra_claims;    /* DRA: its slice's devices drawn with the claims' pods */
	struct report_card *cards;
	size_t n_cards;
};

struct report_pod {
	char *namespace;
	char *name;
	char *node;	 /* NULL: not bound */
	long node_index; /* into report_model.nodes; -1 when not bound to a drawn node */
	char *phase;
	char *requests; /* "nvidia.com/gpu=1"; "" when it asks for no extended resource */
	enum report_origin origin; /* where its devices below come from */
	char *note;		   /* what the picture cannot show of it; NULL when nothing */
	size_t held;		   /* devices it holds in the picture */
};

struct report_quota {
	char *namespace;
	char *name;
	char *resource;
	char *used; /* NULL: the quota controller has not counted yet */
	char *hard;
	double fraction; /* used / hard, for the bar; 0 when unknown */
};

/* A node the NVIDIA stack refuses (sync_plan's failures, `gpushare plan`'s refusedNodes). */
struct report_refused {
	char *node;
	char *reason;
};

struct report_model {
	struct report_node *nodes;
	size_t n_nodes;
	size_t skipped_nodes; /* nodes that declare no GPU, left out */
	struct report_pod *pods;
	size_t n_pods;
	struct report_quota *quotas;
	size_t n_quotas;
	char **namespaces; /* sorted, each once: of pods and quotas; colour i is namespace i */
	size_t n_namespaces;
	size_t n_cards;
	char *source; /* where the objects came from, shown on the page */
	struct gs_warnings notes;
	/* Headroom per pool and nvidia.com/ resource, as `gpushare plan` counts it
	   (pools.h): held by the pods bound there, stranded while an unbound pod
	   asks for the resource. */
	struct pool_use *pools;
	size_t n_pools;
	struct report_refused *refused; /* in node order */
	size_t n_refused;
};

struct report_input {
	const json_t *nodes;		    /* a NodeList (or an array of Nodes) */
	const json_t *pods;		    /* a PodList; NULL = none */
	const json_t *quotas;		    /* a ResourceQuotaList; NULL = none */
	const struct dpconfig_set *configs; /* the device-plugin ConfigMap; NULL = none */
	const struct catalog *cat;
	const char *source; /* "cluster https://...", "files ..."; NULL = not shown */
	/* ResourceSlices and ResourceClaims (arrays); NULL = a DRA node's devices not drawn */
	const json_t *slices;
	const json_t *claims;
	/* sync_plan's report on these nodes: its failed ones are the refused nodes; NULL = none */
	const struct sync_report *sync;
};

/*
 * The model of the fleet. Nodes keep their order; pods that ended
 * (Succeeded, Failed) are left out. A pod's devices come from its
 * gpushare.io/devices annotation when every ID in it names a device of its
 * node, else from its requests as the device plugin's preferred allocation
 * would hand them out (docs/guide/report.md). Fails only on input that is not
 * the objects it should be (a node the catalog cannot read).
 */
int report_model_build(const struct report_input *in, struct report_model **out,
		       struct gs_error *err) GS_WUR;
void report_model_free(struct report_model *m);

/*
 * One self-contained HTML page (inline CSS, nothing fetched): the summary
 * first (headroom per pool, quota bars, refused nodes), then the nodes
 * drawn in boxes that follow the window's width (identical nodes folded
 * into one <details> with their count), then the pod table.
 */
void report_html(const struct report_model *m, struct strbuf *out);
/* One standalone SVG document: the same picture. */
void report_svg(const struct report_model *m, struct strbuf *out);

/* "Isolation: none", "MPS limits", "hardware (MIG)", "whole card". */
const char *report_isolation_name(enum report_isolation iso);

#endif
