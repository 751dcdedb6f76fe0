#ifndef GS_CHECK_H
#define GS_CHECK_H

#include <jansson.h>
#include <stddef.h>

#include "base/error.h"
#include "yaml/ydoc.h"

/*
 * Pre-deploy checks of GPU requests in manifests (the lab's
 * check-request.sh, k8s-device-plugin v0.20.0 internal/rm/rm.go ValidateRequest; k8s.io/kubernetes
 * v1.34.4 pkg/apis/core/validation/validation.go).
 *
 * Looked at: every document of a stream; objects of kind Pod (spec),
 * Deployment, StatefulSet, DaemonSet, ReplicaSet, ReplicationController,
 * Job (spec.template.spec), CronJob (spec.jobTemplate.spec.template.spec),
 * PodTemplate (template.spec), and the items of List and <Kind>List (an item
 * without a kind takes the list's; Lists within Lists to any depth, as
 * kubectl flattens them). Other kinds and non-mapping documents
 * are skipped. In each pod spec, `containers` then `initContainers`, in
 * document order.
 *
 * Always: a container whose nvidia.com/gpu limit or request is more than 1
 * gives a CHECK_OVER finding with that count; when both are, the larger.
 * Values are read as the apiserver reads a resource.Quantity decoded from
 * YAML: 2, "2", 2000m, 1e1 and 2.0 are all 2; null is 0.
 * Always too: what kube-apiserver's validation refuses at create
 * (src/engine/podvalidate.h), each refusal a CHECK_NOTE in its words,
 * after the object's other findings. Other CHECK_NOTE rules are opt-in
 * (check_rules).
 *
 * Bad input (YAML errors, a quantity that does not parse, a mapping where a
 * list belongs, ...) is an error, never a clean result.
 */

enum check_rules {
	/* More than 1 of any other nvidia.com/ resource (gpu.shared, mig-*):
	 * refused at allocation when shared with failRequestsGreaterThanOne (k8s-device-plugin
	 * v0.20.0 internal/rm/rm.go ValidateRequest). */
	CHECK_SHARED_RESOURCES = 1u << 1,
};

enum check_engine {
	CHECK_ENGINE_STREAM, /* filtered load: builds only what the rules read */
	CHECK_ENGINE_TREE,   /* full trees; same results, slower */
};

enum check_finding_kind {
	CHECK_OVER,
	CHECK_NOTE,
};

struct check_finding {
	enum check_finding_kind kind;
	/* The container name as shown: itself when it is a valid container
	 * name (a DNS-1123 label), else double-quoted with \\, \", \n, \r, \t
	 * and \xHH escapes ('=' and bytes outside printable ASCII), so that no
	 * name can end a line or add an '='; absent: the two characters ""). */
	char *container;
	char *count; /* CHECK_OVER: the quantity, as Quantity.String() prints it */
	char *text;  /* CHECK_NOTE: "file:line:col: container \"c\": ..." (no container part
			for the apiserver's refusals of the pod's own fields) */
};

struct check_report {
	struct check_finding *items;
	size_t n;
	size_t cap;
};

void check_report_init(struct check_report *r);
void check_report_release(struct check_report *r);

/*
 * Check one stream already loaded (full or filtered). Findings are
 * appended to rep; on error nothing from this stream is kept and err has
 * "file:line:col: what".
 */
int check_stream(const struct ydoc_stream *s, unsigned rules, struct check_report *rep,
		 struct gs_error *err) GS_WUR;

/*
 * Check one object already decoded without positions (from the apiserver,
 * e.g. an AdmissionReview's request.object): the same walk as check_stream,
 * and CHECK_NOTE texts read "container \"c\": ..." with no file:line:col.
 */
int check_object_tree(const json_t *obj, unsigned rules, struct check_report *rep,
		      struct gs_error *err) GS_WUR;

/* Load (with the chosen engine) and check a buffer or a file ("-" = stdin). */
int check_buffer(const char *name, const char *buf, size_t len, unsigned rules,
		 enum check_engine engine, struct check_report *rep, struct gs_error *err) GS_WUR;
int check_file(const char *path, unsigned rules, enum check_engine engine, struct check_report *rep,
	       struct gs_error *err) GS_WUR;

#endif
