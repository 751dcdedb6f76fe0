#ifndef GS_WEBHOOK_H
#define GS_WEBHOOK_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#include "model/catalog.h"
#include "model/dpconfig_set.h"
#include "base/error.h"

/*
 * The validating admission webhook's decision (docs/guide/webhook.md): refuse at
 * create time a Pod that the apiserver would take but that would fail
 * later, with a message a user can act on. Pure: an AdmissionReview and the
 * fleet in, the AdmissionReview answer out; no I/O.
 *
 * What is refused (in a Pod, or in the pod template of a workload), in this order (every finding is
 * kept, joined by "; "):
 *   1. kube-apiserver's own validation of what the pod asks of resources
 *      (src/engine/podvalidate.h): its refusal word for word, alone,
 *      `Pod "x" is invalid: ...` (`Deployment.apps "x" is invalid: ...` for
 *      a workload) -- not an integer, negative, a request without a limit
 *      or unequal to it, a bad resource name;
 *   2. a nvidia.com/ resource that no node the pod can land on advertises
 *      (nodes its nodeSelector, required node affinity and tolerations
 *      allow), naming what those nodes do advertise;
 *   3. more than 1 of a resource that a node the pod can land on (and fit,
 *      on an empty node) shares with failRequestsGreaterThanOne: the
 *      device plugin refuses it at Allocate, and the message carries the
 *      kubelet's UnexpectedAdmissionError text.
 * Rules 2 and 3 read the nodes as the apiserver shows them (advertised by
 * gpushare or the real stack) and the device-plugin configs; explain's
 * evaluator (explain_pod) does the per-node work. A pod with spec.nodeName
 * skips the scheduler: rules 2 and 3 then judge the named node alone, as
 * its kubelet's admission would with no other pod there (more than its
 * allocatable, more than 1 where failRequestsGreaterThanOne holds, a
 * resource shown at 0, a nvidia.com/ resource it does not list, which the
 * kubelet admits without a device), and a node that does not exist is
 * refused (the pod would wait for the pod garbage collector).
 */

struct webhook_fleet {
	const json_t *nodes;		    /* a NodeList; NULL = unknown (rules 2, 3 skipped) */
	const struct dpconfig_set *configs; /* the device-plugin ConfigMap; NULL = absent */
	const struct catalog *cat;	    /* for MIG profile hints; NULL = none */
};

struct webhook_verdict {
	bool allowed;
	bool judged;   /* false: not a Pod CREATE, nothing was looked at */
	int code;      /* HTTP-style status for status.code: 200, or 403 refused */
	char *message; /* why refused; NULL when allowed */
	/* AdmissionResponse.warnings: shown by kubectl, the pod is admitted */
	struct gs_warnings warnings;
};

/* Largest AdmissionReview body read (the apiserver caps an object at 3 MiB). */
#define WEBHOOK_MAX_BODY (6u << 20)
/* Nodes named in one message before "and N more". */
#define WEBHOOK_MAX_NAMED 4

/*
 * Judge one Pod (as the apiserver decoded it), or the pods a workload's
 * template makes (Deployment, ReplicaSet, StatefulSet, DaemonSet, Job,
 * CronJob, ReplicationController, PodTemplate): rule 1 at the paths of the
 * object as sent, rules 2 and 3 on a Pod with the template's spec, the
 * message then saying "the pods of Deployment NAME (spec.template): ...".
 * Fails only on quantities that do not parse (err says which); the
 * verdict is then unset.
 */
int webhook_judge_pod(const struct webhook_fleet *f, const json_t *pod, struct webhook_verdict *v,
		      struct gs_error *err) GS_WUR;
void webhook_verdict_release(struct webhook_verdict *v);

/*
 * Parse an AdmissionReview (admission.k8s.io/v1) request, judge it, and
 * make the AdmissionReview response: response.uid echoed, allowed,
 * status {code, reason "Forbidden", message} when refused, warnings. Judged:
 * a Pod on CREATE; a workload on CREATE, and on UPDATE when its pod template
 * changed. A workload's UPDATE with the template unchanged (a scale made
 * before the webhook) is allowed unseen. *verdict (NULL = not wanted) gets
 * the verdict, owned by the caller.
 *
 * Fails, never answering, on what it cannot judge: a body that is not such
 * a review; a request without a uid, a kind or a known operation; what
 * deploy/webhook.yaml's configuration never sends (a Pod other than on
 * CREATE, a workload on DELETE or CONNECT, a subresource, another kind or
 * version); an object (or an UPDATE's oldObject) absent, not an object, of
 * another kind than the request's, or without a pod spec holding
 * containers; a quantity that does not parse. err says what; the server
 * answers 400 and the apiserver's failurePolicy decides.
 */
int webhook_review(const struct webhook_fleet *f, const char *body, size_t len, json_t **out,
		   struct webhook_verdict *verdict, struct gs_error *err) GS_WUR;
/*
 * The same in two steps, for a server that bounds the parse and reads the
 * tree again (names for its log) without parsing twice: the body's tree
 * (the caller's to decref), then the answer from it.
 */
int webhook_review_parse(const char *body, size_t len, json_t **review,
			 struct gs_error *err) GS_WUR;
int webhook_review_tree(const struct webhook_fleet *f, const json_t *review, json_t **out,
			struct webhook_verdict *verdict, struct gs_error *err) GS_WUR;

#endif
