#include "fleet/design.h"

#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "base/didyoumean.h"
#include "base/readfile.h"
#include "base/strbuf.h"
#include "base/wrapper.h"
#include "yaml/ydoc.h"
#include "base/banned.h"

/* The trace's GPU codes (docs/guide/replay.md), and "*" for the rest. */
static const char *const pool_names[] = {"A10", "G1",	   "G2",      "G3", "P100",
					 "T4",	"V100M16", "V100M32", "*"};
#define N_POOL_NAMES (sizeof(pool_names) / sizeof(pool_names[0]))

static const char *const forms[] = {"timeSlicing", "mig", "draShares", "whole"};

struct reader {
	const struct catalog *cat;
	const struct ydoc_stream *s;
	struct gs_error *err;
};

/* "unknown key 'x' in <where>; did you mean 'y'? (one of: ...)" at the key's value. */
static int unknown_key(struct reader *rd, const json_t *obj, const char *key, const char *where,
		       const char *const *known, size_t n_known)
{
	struct strbuf hint = STRBUF_INIT;

	dym_suggest(&hint, key, known, n_known, NULL);
	ydoc_error_at_key(rd->s, obj, key, rd->err, "unknown key '%s' in %s%s", key, where,
			  hint.buf);
	strbuf_release(&hint);
	return -1;
}

/* Every key of obj among known[]. */
static int keys_known(struct reader *rd, const json_t *obj, const char *where,
		      const char *const *known, size_t n_known)
{
	const char *k;
	json_t *v;

	json_object_foreach ((json_t *)obj, k, v) {
		size_t i;
		for (i = 0; i < n_known && strcmp(k, known[i]); i++)
			;
		if (i == n_known)
			return unknown_key(rd, obj, k, where, known, n_known);
	}
	return 0;
}

/* An integer lo..hi under key (required unless def >= lo). */
static int int_at(struct reader *rd, const json_t *obj, const char *key, long lo, long hi, long def,
		  int *out)
{
	const json_t *v = json_object_get(obj, key);

	if (!v && def >= lo) {
		*out = (int)def;
		return 0;
	}
	if (!v) {
		ydoc_error_at_key(rd->s, obj, NULL, rd->err, "'%s' is required", key);
		return -1;
	}
	if (!json_is_integer(v)) {
		ydoc_error_at_key(rd->s, obj, key, rd->err,
				  "%s must be a whole number from %ld to %ld, not %s", key, lo, hi,
				  ydoc_kind_name(v));
		return -1;
	}
	if (json_integer_value(v) < lo || json_integer_value(v) > hi) {
		ydoc_error_at_key(rd->s, obj, key, rd->err,
				  "%s must be a whole number from %ld to %ld, not %lld", key, lo,
				  hi, (long long)json_integer_value(v));
		return -1;
	}
	*out = (int)json_integer_value(v);
	return 0;
}

static const char *string_at(struct reader *rd, const json_t *obj, const char *key)
{
	const json_t *v = json_object_get(obj, key);

	if (!v)
		ydoc_error_at_key(rd->s, obj, NULL, rd->err, "'%s' is required", key);
	else if (!json_is_string(v) || !*json_string_value(v))
		ydoc_error_at_key(rd->s, obj, key, rd->err, "%s must be a non-empty string, not %s",
				  key, ydoc_kind_name(v));
	else
		return json_string_value(v);
	return NULL;
}

/*
 * "; did you mean one of 'a', 'b', 'c'?": the three MIG-capable GPUs (by
 * their current NVML names, "NVIDIA ...") nearest `gpu` in memory.
 */
static void mig_capable_near(const struct catalog *cat, const struct catalog_gpu *gpu,
			     struct strbuf *out)
{
	const struct catalog_gpu *best[3] = {NULL, NULL, NULL};
	size_t n = 0;

	for (size_t i = 0; i < catalog_gpu_count(cat); i++) {
		const struct catalog_gpu *g = catalog_gpu_at(cat, i);
		long d = labs((long)g->memory_mib - gpu->memory_mib);
		size_t k;
		if (!g->mig || strncmp(g->name, "NVIDIA ", 7))
			continue;
		for (k = n; k > 0 && labs((long)best[k - 1]->memory_mib - gpu->memory_mib) > d; k--)
			if (k < 3)
				best[k] = best[k - 1];
		if (k < 3) {
			best[k] = g;
			if (n < 3)
				n++;
		}
	}
	for (size_t k = 0; k < n; k++)
		strbuf_addf(out, "%s'%s'", k ? ", " : "; did you mean one of ", best[k]->name);
	if (n)
		strbuf_addstr(out, "?");
}

/* mig: {gpu, layout}: a MIG-capable catalog GPU and a layout that makes MIG devices on it. */
static int read_mig(struct reader *rd, const json_t *m, struct replay_pool_design *p)
{
	static const char *const keys[] = {"gpu", "layout"};
	const char *gpu, *layout;
	struct strbuf hint = STRBUF_INIT;
	struct catalog_gpu_mig applied;
	struct gs_error e;

	if (keys_known(rd, m, "mig", keys, 2) < 0 || !(gpu = string_at(rd, m, "gpu")) ||
	    !(layout = string_at(rd, m, "layout")))
		return -1;
	p->gpu = catalog_find_gpu(rd->cat, gpu);
	if (!p->gpu) {
		catalog_gpu_hint(rd->cat, gpu, &hint);
		ydoc_error_at_key(rd->s, m, "gpu", rd->err, "unknown GPU model '%s'%s", gpu,
				  hint.buf);
		goto fail;
	}
	if (!p->gpu->mig) {
		mig_capable_near(rd->cat, p->gpu, &hint);
		ydoc_error_at_key(rd->s, m, "gpu", rd->err,
				  "'%s' is not MIG-capable: a MIG pool names a MIG-capable catalog "
				  "GPU (none of the trace's GPUs is)%s (see 'gpushare catalog')",
				  p->gpu->name, hint.buf);
		goto fail;
	}
	if (catalog_layout_apply(rd->cat, layout, p->gpu, &applied, &e) < 0) {
		ydoc_error_at_key(rd->s, m, "layout", rd->err, "%s", e.msg);
		goto fail;
	}
	if (applied.result != CATALOG_APPLY_OK || !applied.mig_enabled || !applied.n_devices) {
		catalog_layout_hint(rd->cat, "", p->gpu, &hint);
		ydoc_error_at_key(rd->s, m, "layout", rd->err,
				  "layout '%s' makes no MIG devices on %s%s", layout, p->gpu->name,
				  hint.buf);
		goto fail;
	}
	p->layout = gs_xstrdup(layout);
	return 0;
fail:
	strbuf_release(&hint);
	return -1;
}

/* One pool: a mapping with exactly one of the forms. */
static int read_pool(struct reader *rd, const json_t *pools, const char *code, const json_t *v,
		     struct replay_pool_design *p)
{
	const char *form = NULL;
	const json_t *body = NULL;
	const char *k;
	json_t *x;
	size_t i;

	for (i = 0; i < N_POOL_NAMES && strcmp(code, pool_names[i]); i++)
		;
	if (i == N_POOL_NAMES)
		return unknown_key(rd, pools, code, "pools (the trace's GPU models, or '*')",
				   pool_names, N_POOL_NAMES);
	if (!json_is_object(v) || json_object_size(v) != 1) {
		ydoc_error_at_key(rd->s, pools, code, rd->err,
				  "pool %s takes one of timeSlicing, mig, draShares or whole, not "
				  "%s",
				  code,
				  json_is_object(v) ? (json_object_size(v) ? "several" : "none")
						    : ydoc_kind_name(v));
		return -1;
	}
	json_object_foreach ((json_t *)v, k, x) {
		form = k;
		body = x;
	}
	if (keys_known(rd, v, "a pool", forms, 4) < 0)
		return -1;
	p->pool = gs_xstrdup(code);
	if (!strcmp(form, "whole")) {
		p->how = REPLAY_WHOLE;
		if (!json_is_null(body) && !(json_is_object(body) && !json_object_size(body))) {
			ydoc_error_at_key(rd->s, v, form, rd->err, "whole takes nothing: write {}");
			return -1;
		}
		return 0;
	}
	if (!json_is_object(body)) {
		ydoc_error_at_key(rd->s, v, form, rd->err, "%s must be a mapping, not %s", form,
				  ydoc_kind_name(body));
		return -1;
	}
	if (!strcmp(form, "timeSlicing")) {
		static const char *const keys[] = {"replicas"};
		p->how = REPLAY_TIME_SLICING;
		return keys_known(rd, body, "timeSlicing", keys, 1) < 0 ||
				       int_at(rd, body, "replicas", 2, REPLAY_MAX_REPLICAS, 0,
					      &p->replicas) < 0
			       ? -1
			       : 0;
	}
	if (!strcmp(form, "draShares")) {
		static const char *const keys[] = {"shares"};
		p->how = REPLAY_DRA_SHARES;
		return keys_known(rd, body, "draShares", keys, 1) < 0 ||
				       int_at(rd, body, "shares", 1, REPLAY_MAX_SHARES, 100,
					      &p->shares) < 0
			       ? -1
			       : 0;
	}
	p->how = REPLAY_MIG;
	return read_mig(rd, body, p);
}

/* The file's name without its folders and a .yaml/.yml ending. */
static char *default_name(const char *path)
{
	const char *base = strrchr(path, '/');
	size_t len;

	base = base ? base + 1 : path;
	len = strlen(base);
	if (len > 5 && !strcmp(base + len - 5, ".yaml"))
		len -= 5;
	else if (len > 4 && !strcmp(base + len - 4, ".yml"))
		len -= 4;
	return gs_xstrndup(base, len);
}

int design_parse(const struct catalog *cat, const char *name, const char *text, size_t len,
		 struct replay_design *out, struct gs_error *err)
{
	static const char *const top[] = {"name", "pools"};
	struct ydoc_stream *s = NULL;
	struct reader rd = {cat, NULL, err};
	struct ydoc_limits lim = ydoc_default_limits;
	const json_t *doc, *pools, *v;
	const char *k;
	json_t *x;
	int rc = -1;

	memset(out, 0, sizeof(*out));
	lim.max_bytes = DESIGN_MAX_BYTES;
	lim.max_docs = 1;
	if (ydoc_load_buffer(name, text, len, (struct ydoc_pos){0, 0}, &lim, &s, err) < 0)
		return -1;
	rd.s = s;
	doc = ydoc_stream_count(s) ? ydoc_stream_doc(s, 0) : NULL;
	if (!json_is_object(doc)) {
		ydoc_error_at(s, doc, err, "a design is a mapping with 'pools', not %s",
			      doc ? ydoc_kind_name(doc) : "empty");
		goto out;
	}
	if (keys_known(&rd, doc, "a design", top, 2) < 0)
		goto out;
	v = json_object_get(doc, "name");
	if (v &&
	    (!json_is_string(v) || !*json_string_value(v) || strlen(json_string_value(v)) > 63)) {
		ydoc_error_at_key(s, doc, "name", err,
				  "name must be a non-empty string of at most 63 characters");
		goto out;
	}
	out->name = v ? gs_xstrdup(json_string_value(v)) : default_name(name);
	pools = json_object_get(doc, "pools");
	if (!json_is_object(pools) || !json_object_size(pools)) {
		ydoc_error_at_key(s, doc, pools ? "pools" : NULL, err,
				  "'pools' must map trace GPU models (or '*') to how they share, "
				  "as in pools: {'*': {timeSlicing: {replicas: 4}}}");
		goto out;
	}
	out->pools = gs_xcalloc(json_object_size(pools) + 1, sizeof(*out->pools));
	json_object_foreach ((json_t *)pools, k, x) {
		if (read_pool(&rd, pools, k, x, &out->pools[out->n_pools]) < 0) {
			free(out->pools[out->n_pools].pool);
			goto out;
		}
		out->n_pools++;
	}
	rc = 0;
out:
	ydoc_stream_free(s);
	if (rc < 0)
		replay_design_release(out);
	return rc;
}

int design_load(const struct catalog *cat, const char *path, struct replay_design *out,
		struct gs_error *err)
{
	char *buf = NULL;
	size_t len = 0;
	int rc;

	memset(out, 0, sizeof(*out));
	if (gs_read_file(path, DESIGN_MAX_BYTES, &buf, &len, err) < 0)
		return -1;
	rc = design_parse(cat, path, buf, len, out, err);
	free(buf);
	return rc;
}
