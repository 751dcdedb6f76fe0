#ifndef GS_PLAN_DRA_H
#define GS_PLAN_DRA_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#include "dra/draalloc.h"

/*
 * The scheduler's DynamicResources plugin for a pod's own claims
 * (spec.resourceClaims), for plan (docs/guide/plan.md "DRA claims"), read
 * from k8s.io/kubernetes pkg/scheduler/framework/plugins/dynamicresources/
 * dynamicresources.go (PreEnqueue, PreFilter, Filter, PostFilter, Reserve):
 * a claim named by resourceClaimName is looked up among the input's
 * ResourceClaims, one from a ResourceClaimTemplate is made in memory as
 * the resourceclaim controller would (pkg/controller/resourceclaim); an
 * allocated claim pins the pod to its allocation's nodeSelector; the
 * others are allocated on each node with draalloc, together with the
 * extended-resource claim if any; Reserve keeps the chosen node's
 * allocation for the pods after. Every json_t passed in is borrowed.
 */

struct plan_dra;

/* The input's claims, templates and classes (arrays; NULL = none). */
struct plan_dra *plan_dra_new(const json_t *claims, const json_t *templates, const json_t *classes);
void plan_dra_free(struct plan_dra *d);

enum plan_dra_reject {
	PLAN_DRA_OK,
	PLAN_DRA_PREENQUEUE, /* the pod never reaches a scheduling cycle */
	PLAN_DRA_PREFILTER,  /* UnschedulableAndUnresolvable on every node */
};

/* Filter's verdict on one node. */
enum plan_dra_filter {
	PLAN_DRA_FITS,
	PLAN_DRA_CANNOT_ALLOCATE, /* "cannot allocate all claims" */
	PLAN_DRA_UNAVAILABLE,	  /* "resourceclaim not available on the node" */
};

/* One pod's claims after PreFilter (plan_dra_pod_release frees it). */
struct plan_dra_pod {
	size_t n;	   /* spec.resourceClaims read */
	char **names;	   /* the pod's names for them */
	json_t **claims;   /* the claims (references) */
	const char **tmpl; /* the template each came from, or NULL */
	char **not_judged; /* why draalloc does not judge it, or NULL */
	enum plan_dra_reject reject;
	char *message;	  /* reject: the plugin's status message */
	char *hint;	  /* reject: what the resourceclaim controller says, or NULL */
	bool *unavail;	  /* per claim: Filter found its allocation's node selector failing */
	bool unavailable; /* on some node, for some claim */
};

/*
 * PreEnqueue and PreFilter for `pod`: its claims found or made, the
 * classes they ask for checked. Fills *out (reject and message when the
 * pod goes no further).
 */
void plan_dra_prefilter(struct plan_dra *d, const json_t *pod, struct plan_dra_pod *out);
void plan_dra_pod_release(struct plan_dra_pod *pp);

/*
 * Filter on `node` (a Node object): the allocated claims' node selectors,
 * then the unallocated judged claims and `extra` (the extended-resource
 * claim, or NULL) allocated together on it. With commit, what it
 * allocates is taken and *allocs (new) holds each allocation, `extra`'s
 * last.
 */
enum plan_dra_filter plan_dra_filter(struct draalloc *a, struct plan_dra_pod *pp,
				     const json_t *node, const json_t *extra, bool commit,
				     json_t **allocs);

/*
 * Reserve and PreBind on `node`: the claims Filter allocated (allocs, as
 * plan_dra_filter filled it) are allocated from now on and every claim is
 * reserved for the pod. Returns the pod's claims as plan prints them
 * (docs/guide/plan.md), a new array.
 */
json_t *plan_dra_reserve(struct plan_dra *d, struct plan_dra_pod *pp, const json_t *pod,
			 const json_t *allocs);

/* The pod's claims as plan prints them for a pod not bound: no devices. */
json_t *plan_dra_unbound_json(const struct plan_dra_pod *pp);

/*
 * Why the pod's unallocated judged claims fit no node, device by device
 * (draalloc's reasons, from the state now): at most `max` lines such as
 * "request gpu (type gpu, shares 20): dra-t4 gpu-0: shares: 10 left of
 * 100 (...), the request consumes 20", each appended to *lines (n_lines
 * counts them), then "... and N more" when cut.
 */
void plan_dra_why(struct draalloc *a, const struct plan_dra_pod *pp, size_t max, char ***lines,
		  size_t *n_lines);

/*
 * PostFilter: true when some claim of the pod is allocated where Filter
 * found it unavailable and reserved for no other pod, which the plugin
 * deallocates.
 */
bool plan_dra_deallocates(const struct plan_dra_pod *pp, const json_t *pod);

#endif
