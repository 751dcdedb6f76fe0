#ifndef GS_DRATRANSLATE_H
#define GS_DRATRANSLATE_H

#include <jansson.h>
#include <stddef.h>

#include "model/dpconfig_set.h"
#include "dra/draprepare.h"
#include "base/error.h"
#include "base/strbuf.h"
#include "yaml/ydoc.h"

/*
 * Device-plugin configs, quotas and workload manifests mapped to their DRA
 * form for Kubernetes 1.34 without alpha gates and NVIDIA's DRA driver
 * v25.12.0 (docs/guide/dra.md#translate-gpushare-dra-translate-srcdradratranslatec), each with what
 * does not carry over and why. The contract is in docs/guide/dra.md ("Translate").
 */

/* One input item: a config of the ConfigMap, or one object of a manifest. */
struct dratranslate_item {
	char *source;		  /* "k8s/placement.yaml:7:1", "CM.yaml:17:12" */
	char *subject;		  /* "Pod gpu-share/notebook", "device-plugin config \"shared\"" */
	json_t *objects;	  /* the objects to apply for it, in order (may be empty) */
	struct gs_warnings notes; /* what does not carry over, and why */
};

struct dratranslate;

/*
 * A translation of the configs of `set` (the ConfigMap read from `cm_file`,
 * `configmap` its object, for the name and positions). `gates` are the DRA
 * driver's feature gates the notes judge sharing settings against (NULL:
 * the driver's defaults).
 */
struct dratranslate *dratranslate_new(const struct dpconfig_set *set, const char *cm_file,
				      const json_t *configmap,
				      const struct draprepare_gates *gates);
/* Translate every document of a manifest stream, in order (Lists item by item). */
int dratranslate_stream(struct dratranslate *t, const struct ydoc_stream *s,
			struct gs_error *err) GS_WUR;
/* Translate one object of stream s (a List item by item), after those before it. */
int dratranslate_object(struct dratranslate *t, const struct ydoc_stream *s, json_t *obj,
			struct gs_error *err) GS_WUR;

/* Notes that need every manifest first (quota use); call once, after the last stream. */
void dratranslate_finish(struct dratranslate *t);
size_t dratranslate_count(const struct dratranslate *t);
const struct dratranslate_item *dratranslate_item(const struct dratranslate *t, size_t i);
/*
 * The whole translation as a YAML stream to `kubectl apply -f`: a header,
 * then per item its notes as comment lines and its objects as documents.
 */
int dratranslate_yaml(const struct dratranslate *t, struct strbuf *out,
		      struct gs_error *err) GS_WUR;
void dratranslate_free(struct dratranslate *t);

#endif
