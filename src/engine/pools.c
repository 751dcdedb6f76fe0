#include "engine/pools.h"

#include <stdlib.h>
#include <string.h>

#include "base/wrapper.h"
#include "model/kobj.h"
#include "model/names.h"
#include "model/nodehw.h"
#include "base/banned.h"

char *pools_name_of(const json_t *node)
{
	const json_t *labels = kobj_get(node, "metadata.labels");
	const char *pool = json_string_value(json_object_get(labels, IMPORT_LABEL_POOL));
	const char *model = json_string_value(
		json_object_get(kobj_get(node, "metadata.annotations"), NODEHW_ANN_PRODUCT));

	if (!model || !*model)
		model = json_string_value(json_object_get(labels, "nvidia.com/gpu.product"));
	if (pool && *pool)
		return gs_xstrdup(pool);
	return gs_xstrdup(model && *model ? model : "?");
}

void pools_init(struct pools *t)
{
	memset(t, 0, sizeof(*t));
	t->index = json_object();
}

void pools_add(struct pools *t, const json_t *node, char **pool, const char *resource,
	       long long registered, long long held)
{
	struct pool_use *u;
	json_t *at;
	char *key;

	if (strncmp(resource, "nvidia.com/", 11) || registered <= 0)
		return;
	if (!*pool)
		*pool = pools_name_of(node);
	key = gs_xasprintf("%s\x1f%s", *pool, resource);
	at = json_object_get(t->index, key);
	if (at) {
		u = &t->uses[json_integer_value(at)];
	} else {
		if (t->n == t->cap) {
			t->cap = t->cap ? 2 * t->cap : 8;
			t->uses = gs_xrealloc(t->uses, t->cap * sizeof(*t->uses));
		}
		json_object_set_new(t->index, key, json_integer((json_int_t)t->n));
		u = &t->uses[t->n++];
		memset(u, 0, sizeof(*u));
		u->pool = gs_xstrdup(*pool);
		u->resource = gs_xstrdup(resource);
	}
	free(key);
	u->nodes++;
	u->registered += registered;
	u->held += held;
}

void pools_finish(struct pools *t, const json_t *pending, struct pool_use **out, size_t *n)
{
	for (size_t i = 0; i < t->n; i++) {
		struct pool_use *u = &t->uses[i];
		u->free = u->registered - u->held;
		if (u->free < 0)
			u->free = 0;
	}
	pools_strand(t->uses, t->n, pending);
	json_decref(t->index);
	*out = t->uses;
	*n = t->n;
	memset(t, 0, sizeof(*t));
}

void pools_strand(struct pool_use *uses, size_t n, const json_t *pending)
{
	for (size_t i = 0; i < n; i++)
		uses[i].stranded = json_object_get(pending, uses[i].resource) ? uses[i].free : 0;
}

void pools_free_uses(struct pool_use *uses, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free(uses[i].pool);
		free(uses[i].resource);
	}
	free(uses);
}
