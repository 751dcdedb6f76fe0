#ifndef GS_PODVALIDATE_H
#define GS_PODVALIDATE_H

#include <jansson.h>
#include <stddef.h>

#include "base/error.h"
#include "yaml/ydoc.h"

/*
 * kube-apiserver v1.34's validation, at create, of what a pod asks of
 * resources (k8s.io/kubernetes pkg/apis/core/validation, docs/guide/check.md):
 * the rules a pod must pass before quota, scheduling or the kubelet see it.
 * Pure: an object in, the apiserver's errors out, no I/O.
 *
 * Objects: a Pod (defaulted first as the apiserver defaults it: a
 * container's limits copied to its missing requests), and the pod template
 * of Deployment, ReplicaSet, StatefulSet, DaemonSet (apps), Job, CronJob
 * (batch), ReplicationController and PodTemplate (no such copy for
 * templates). Every resource list is rounded up to the milli first
 * (SetDefaults_ResourceList). Then, in the apiserver's order:
 *   - each container, init container (sidecars alike) and ephemeral
 *     container: validateResourceRequirements -- every limit, then every
 *     request: the name (a standard container resource or a valid extended
 *     name), not negative, a whole number for extended resources (the
 *     int64 MilliValue() rule), hugepages a multiple of their page size;
 *     a request equal to its limit for extended resources and hugepages,
 *     at most its limit for the rest, and a limit required for the former;
 *     "HugePages require cpu or memory";
 *   - an ephemeral container with resources: forbidden;
 *   - spec.resources (pod-level resources, on by default in v1.34): the
 *     same rules with the pod-level names (cpu, memory, hugepages-*), and
 *     no container limit above the pod's;
 *   - ephemeral containers at all: refused on create (a Pod) or in a
 *     template.
 * Not modelled (docs/guide/check.md): every rule not about resources (a pod
 * refused for those gets them from the apiserver too), resource claims,
 * the defaulting of spec.resources and its sums over containers.
 *
 * Texts are the apiserver's, byte for byte: field.Error's "FIELD: Invalid
 * value: VALUE: DETAIL", "FIELD: Required value: DETAIL", "FIELD:
 * Forbidden: DETAIL", "FIELD: Unsupported value: VALUE: supported values:
 * ...". Within one resource list the apiserver walks a Go map, in no fixed
 * order; here the list's order in the object.
 */

struct podvalidate_error {
	char *field;		 /* "spec.containers[0].resources.limits[nvidia.com/gpu]" */
	char *body;		 /* "Invalid value: \"500m\": must be an integer" */
	const json_t *container; /* the container it is about (borrowed); NULL: the pod spec */
	struct ydoc_pos pos;	 /* where it is in the file; line 0: unknown */
};

struct podvalidate_report {
	char *kind; /* schema.GroupKind.String(): "Pod", "Deployment.apps" */
	char *name; /* metadata.name */
	/* the errors, in order, each text once (as ErrorList.ToAggregate keeps them) */
	struct podvalidate_error *items;
	size_t n;
	size_t cap;
};

void podvalidate_report_init(struct podvalidate_report *r);
void podvalidate_report_release(struct podvalidate_report *r);

/*
 * Validate obj, whose kind is its own "kind" or, when it has none,
 * `kind` (a List's items; NULL = none). Another kind gives no errors.
 * s: the stream obj was loaded from (exact integers past int64, and
 * positions), or NULL for a tree without one (from the apiserver). Shapes
 * the apiserver would not decode (a list where a mapping belongs) are
 * skipped: they are the reader's to report. Fails only on a quantity that
 * does not parse, err then "FILE:LINE:COL: FIELD: message" (position with
 * a stream); out is left empty.
 */
int podvalidate_object(const json_t *obj, const char *kind, const struct ydoc_stream *s,
		       struct podvalidate_report *out, struct gs_error *err) GS_WUR;

/*
 * The apiserver's refusal as its Status message says it (errors.NewInvalid):
 * `Pod "x" is invalid: ERROR`, or `... is invalid: [ERROR, ERROR]` for
 * several. NULL when r has no error. New string.
 */
char *podvalidate_message(const struct podvalidate_report *r);

/*
 * Both at once: *message is the refusal (podvalidate_message) or NULL when
 * the apiserver takes obj. Fails as podvalidate_object.
 */
int podvalidate_refusal(const json_t *obj, const struct ydoc_stream *s, char **message,
			struct gs_error *err) GS_WUR;

#endif
