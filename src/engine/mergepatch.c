#include "engine/mergepatch.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/nodehw.h"
#include "model/quantity.h"
#include "model/kobj.h"
#include "base/banned.h"

void mergepatch_set(json_t *patch, const char *a, const char *b, const char *key, json_t *value)
{
	json_t *x = json_object_get(patch, a), *y;

	if (!x) {
		x = json_object();
		json_object_set_new(patch, a, x);
	}
	y = json_object_get(x, b);
	if (!y) {
		y = json_object();
		json_object_set_new(x, b, y);
	}
	json_object_set_new(y, key, value);
}

void mergepatch_apply(json_t *target, const json_t *patch)
{
	const char *k;
	json_t *v;

	json_object_foreach ((json_t *)patch, k, v) {
		if (json_is_null(v)) {
			json_object_del(target, k);
		} else if (json_is_object(v)) {
			json_t *t = json_object_get(target, k);
			if (!json_is_object(t)) {
				t = json_object();
				json_object_set_new(target, k, t);
			}
			mergepatch_apply(t, v);
		} else {
			json_object_set(target, k, v);
		}
	}
}

/* A quantity as the node holds it, compared by value ("8", 8 and "8000m" are all 8). */
static bool quantity_equals(const json_t *have, json_int_t want)
{
	struct quantity q;
	struct gs_error e;

	return have && !quantity_from_json(&q, have, &e) && quantity_cmp_int64(&q, want) == 0;
}

static bool quantity_nonzero(const json_t *v)
{
	struct quantity q;
	struct gs_error e;

	return !quantity_from_json(&q, v, &e) && !quantity_is_zero(&q);
}

static bool recorded(const json_t *prev, const char *key, const char *cur)
{
	const json_t *mine = json_object_get(prev, key);
	return cur && json_is_string(mine) && !strcmp(json_string_value(mine), cur);
}

/* A recorded label gpushare no longer wants, still as it left it: it goes. */
static bool label_removed(const json_t *node, const json_t *labels, const json_t *prev,
			  const char *key)
{
	return !json_object_get(labels, key) && recorded(prev, key, kobj_label(node, key));
}

/*
 * The labels to own, with the refresh label at the node's value when no
 * other owned label changes (a real GFD rewrites its timestamp only when it
 * starts, and it restarts when its config or the node's GPUs change).
 */
static json_t *effective_labels(const json_t *node, const struct mergepatch_want *want,
				const json_t *prev)
{
	json_t *out = json_deep_copy(want->labels);
	const char *r = want->refresh_label, *key, *cur;
	json_t *v;

	if (!r || !json_object_get(out, r))
		return out;
	cur = kobj_label(node, r);
	if (!recorded(prev, r, cur))
		return out;
	json_object_foreach ((json_t *)want->labels, key, v) {
		const char *now = kobj_label(node, key);
		if (strcmp(key, r) && (!now || strcmp(now, json_string_value(v))))
			return out;
	}
	json_object_foreach ((json_t *)prev, key, v) {
		if (strcmp(key, r) && label_removed(node, want->labels, prev, key))
			return out;
	}
	json_object_set_new(out, r, json_string(cur));
	return out;
}

static void patch_annotation(json_t *patch, const json_t *node, const char *key, char *value)
{
	const char *cur = kobj_annotation(node, key);

	if (!*value) {
		if (cur)
			mergepatch_set(patch, "metadata", "annotations", key, json_null());
	} else if (!cur || strcmp(cur, value)) {
		mergepatch_set(patch, "metadata", "annotations", key, json_string(value));
	}
	free(value);
}

static void patch_labels(json_t *p, const json_t *node, const json_t *labels, const json_t *prev,
			 struct gs_warnings *warnings)
{
	const char *key;
	json_t *v;

	json_object_foreach ((json_t *)labels, key, v) {
		const char *cur = kobj_label(node, key);
		if (cur && !strcmp(cur, json_string_value(v)))
			continue;
		if (cur && !recorded(prev, key, cur))
			gs_warnings_add(warnings,
					"label %s=%s was not written by gpushare; it becomes %s as "
					"GFD would write it",
					key, cur, json_string_value(v));
		mergepatch_set(p, "metadata", "labels", key, json_string(json_string_value(v)));
	}
	json_object_foreach ((json_t *)prev, key, v) {
		/* Only what is still as gpushare left it; a changed value is a person's now. */
		if (label_removed(node, labels, prev, key))
			mergepatch_set(p, "metadata", "labels", key, json_null());
	}
}

/* Recorded resources no longer listed, and nvidia.com ones at 0, go from one status map. */
static void remove_gone(json_t *p, const json_t *have, const char *field, const json_t *resources,
			const json_t *prev)
{
	const char *key;
	json_t *v;

	json_object_foreach ((json_t *)have, key, v) {
		if (json_object_get(resources, key))
			continue;
		if (json_object_get(prev, key) ||
		    (!strncmp(key, "nvidia.com/", 11) && !quantity_nonzero(v)))
			mergepatch_set(p, "status", field, key, json_null());
	}
}

static void patch_resources(json_t *p, const json_t *node, const json_t *resources,
			    const json_t *allocatable, const json_t *prev, bool remove,
			    struct gs_warnings *warnings)
{
	const json_t *cap = kobj_map(node, "status.capacity");
	const json_t *alloc = kobj_map(node, "status.allocatable");
	json_t *own = json_object();
	const char *key;
	json_t *v;

	json_object_foreach ((json_t *)resources, key, v) {
		char q[32];
		json_int_t n = json_integer_value(v);
		const json_t *hc = cap ? json_object_get(cap, key) : NULL;
		const json_t *ha = alloc ? json_object_get(alloc, key) : NULL;
		snprintf(q, sizeof(q), "%" JSON_INTEGER_FORMAT, n);
		if (n > 0)
			json_object_set_new(own, key, json_true());
		else if (!hc && !ha)
			continue; /* nothing left to zero */
		if (!quantity_equals(hc, n))
			mergepatch_set(p, "status", "capacity", key, json_string(q));
		if (json_is_integer(json_object_get(allocatable, key)) && n > 0) {
			n = json_integer_value(json_object_get(allocatable, key));
			snprintf(q, sizeof(q), "%" JSON_INTEGER_FORMAT, n);
		}
		if (!quantity_equals(ha, n))
			mergepatch_set(p, "status", "allocatable", key, json_string(q));
	}
	if (remove) {
		remove_gone(p, cap, "capacity", resources, prev);
		remove_gone(p, alloc, "allocatable", resources, prev);
	}
	/* nvidia.com resources on the node that nobody here accounts for. */
	if (cap) {
		json_object_foreach ((json_t *)cap, key, v) {
			if (strncmp(key, "nvidia.com/", 11) || json_object_get(resources, key) ||
			    json_object_get(prev, key) || !quantity_nonzero(v))
				continue;
			gs_warnings_add(warnings,
					"status has %s which gpushare did not write and the node's "
					"hardware would not advertise; left as it is",
					key);
		}
	}
	patch_annotation(p, node, NODEHW_ANN_MANAGED_RESOURCES, nodehw_format_names(own));
	json_decref(own);
}

int mergepatch_node(const json_t *node, const struct mergepatch_want *want, json_t **patch,
		    struct gs_warnings *warnings, struct gs_error *err)
{
	json_t *p, *prev_labels, *prev_res, *labels;
	const char *key;
	json_t *v;
	int ok;

	*patch = NULL;
	if (!json_is_object(want->labels) ||
	    (want->resources && !json_is_object(want->resources))) {
		gs_error_set(err, "merge patch: labels and resources must be objects");
		return -1;
	}
	json_object_foreach ((json_t *)want->labels, key, v) {
		if (!json_is_string(v)) {
			gs_error_set(err, "merge patch: label %s is not a string", key);
			return -1;
		}
	}
	p = json_object();
	prev_labels = nodehw_managed_labels(node, &ok);
	prev_res = nodehw_managed_resources(node, &ok);
	labels = effective_labels(node, want, prev_labels);
	if (want->keep_unlisted) {
		json_object_foreach (prev_labels, key, v) {
			if (!json_object_get(labels, key) &&
			    recorded(prev_labels, key, kobj_label(node, key)))
				json_object_set(labels, key, v);
		}
	}

	patch_labels(p, node, labels, prev_labels, warnings);
	if (want->resources)
		patch_resources(p, node, want->resources, want->allocatable, prev_res,
				want->remove_gone, warnings);
	json_object_foreach ((json_t *)want->annotations, key, v)
		patch_annotation(p, node, key, gs_xstrdup(json_string_value(v)));
	patch_annotation(p, node, NODEHW_ANN_MANAGED_LABELS, nodehw_format_labels(labels));

	json_decref(labels);
	json_decref(prev_labels);
	json_decref(prev_res);
	*patch = p;
	return 0;
}
