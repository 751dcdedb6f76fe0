#ifndef GS_MERGEPATCH_H
#define GS_MERGEPATCH_H

#include <jansson.h>
#include <stdbool.h>

#include "base/error.h"

/*
 * The JSON merge patch (RFC 7386, application/merge-patch+json) that brings
 * the parts of a Node gpushare owns to a wanted state, and nothing else:
 *
 *   {"metadata":{"labels":{..},"annotations":{..}},
 *    "status":{"capacity":{..},"allocatable":{..}}}
 *
 * only what changes, empty sections left out ({} when nothing changes).
 * Ownership is what gpushare recorded writing (the annotations
 * gpushare.io/managed-labels and gpushare.io/managed-resources, nodehw.h);
 * the rules are in docs/guide/advertise.md ("What gpushare owns").
 */

struct mergepatch_want {
	/* key -> string: every label gpushare owns now. */
	const json_t *labels;
	/*
	 * A label in `labels` (nvidia.com/gfd.timestamp) whose wanted value is
	 * written only when some other owned label changes, or when the node
	 * lacks it or holds a value gpushare did not record; otherwise the
	 * node's value is kept. NULL: none.
	 */
	const char *refresh_label;
	/*
	 * name -> integer: every extended resource in capacity and
	 * allocatable; 0 means "was gpushare's, now gone" (kept at 0, as
	 * kubelet keeps a vanished device-plugin resource, then dropped from
	 * the record). NULL leaves the status and the resource record alone.
	 */
	const json_t *resources;
	/*
	 * Labels recorded before and absent from `labels` are left alone and
	 * stay recorded while the node still holds the recorded value (a
	 * partial update: mig-manager's state label alone).
	 */
	bool keep_unlisted;
	/*
	 * Resources gpushare recorded and `resources` no longer lists, and
	 * nvidia.com resources at 0 (what an earlier switch-off left), are
	 * removed (null) from capacity and allocatable instead of kept at 0: a
	 * node on the DRA path advertises no nvidia.com resource (docs/guide/dra.md).
	 */
	bool remove_gone;
	/*
	 * name -> integer: allocatable where it differs from `resources`
	 * (devices marked unhealthy, docs/guide/faults.md); NULL = equal.
	 */
	const json_t *allocatable;
	/* key -> string: gpushare.io/ annotations to hold this value ("" = removed); NULL = none.
	 */
	const json_t *annotations;
};

/*
 * The patch from `node` (as it is now) to `want`. Labels gpushare recorded
 * and no longer wants become null, unless a person changed them since.
 * Warnings (without the node's name: the caller names it once): hand-set
 * labels it overwrites, nvidia.com resources on the node it does not account
 * for. *patch is a new reference. Never fails today; returns -1 with err on
 * a malformed `want`.
 */
int mergepatch_node(const json_t *node, const struct mergepatch_want *want, json_t **patch,
		    struct gs_warnings *warnings, struct gs_error *err) GS_WUR;

/* Set patch.<a>.<b>.<key> = value (stolen), creating the objects on the way. */
void mergepatch_set(json_t *patch, const char *a, const char *b, const char *key, json_t *value);

/* Apply an RFC 7386 merge patch to target in place (null deletes). */
void mergepatch_apply(json_t *target, const json_t *patch);

#endif
