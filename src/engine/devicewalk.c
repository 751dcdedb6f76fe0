#include "engine/devicewalk.h"

#include <stdlib.h>
#include <string.h>

#include "base/wrapper.h"
#include "model/kobj.h"
#include "model/quantity.h"
#include "base/banned.h"

int devicewalk_ask(const json_t *c, const char *resource, int64_t *out, struct gs_error *err)
{
	const json_t *v = json_object_get(kobj_map(c, "resources.limits"), resource);
	struct quantity q;
	int64_t n;

	if (!v)
		v = json_object_get(kobj_map(c, "resources.requests"), resource);
	*out = 0;
	if (!v)
		return 0;
	if (quantity_from_json(&q, v, err) < 0)
		goto fail;
	if (quantity_value(&q, &n) < 0) {
		gs_error_set(err, "quantity out of range");
		goto fail;
	}
	*out = n;
	return 0;
fail:
	gs_error_prefix(err, "container \"%s\": %s: ", kobj_text(c, "name"), resource);
	return -1;
}

static int by_str(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* The container's resource names, limits and requests, once each, sorted; *names grows. */
static size_t resource_names(const json_t *c, const char ***names, size_t *cap)
{
	const json_t *lists[] = {kobj_map(c, "resources.limits"),
				 kobj_map(c, "resources.requests")};
	size_t n = 0, want = json_object_size(lists[0]) + json_object_size(lists[1]);

	if (want > *cap) {
		*names = gs_xrealloc(*names, want * sizeof(**names));
		*cap = want;
	}
	for (size_t l = 0; l < 2; l++) {
		const char *k;
		json_t *v;

		json_object_foreach ((json_t *)lists[l], k, v) {
			bool seen = false;
			for (size_t i = 0; i < n && !seen; i++)
				seen = !strcmp((*names)[i], k);
			if (!seen)
				(*names)[n++] = k;
		}
	}
	if (n > 1)
		qsort(*names, n, sizeof(**names), by_str);
	return n;
}

/* devicesToReuse, counted: per resource, the devices plain init containers left. */
struct reusable {
	const char *resource;
	int64_t n;
};

static size_t reusable_at(struct reusable **r, size_t *n, const char *resource)
{
	for (size_t i = 0; i < *n; i++)
		if (!strcmp((*r)[i].resource, resource))
			return i;
	*r = gs_xrealloc(*r, (*n + 1) * sizeof(**r));
	(*r)[*n] = (struct reusable){resource, 0};
	return (*n)++;
}

int devicewalk_pod(const json_t *pod, devicewalk_serves_fn *serves, devicewalk_step_fn *step,
		   void *arg, struct gs_error *err)
{
	const char *lists[] = {"initContainers", "containers"};
	const json_t *spec = kobj_map(pod, "spec");
	struct reusable *reuse = NULL;
	const char **names = NULL;
	size_t n_reuse = 0, cap_names = 0;
	int rc = 0;

	for (size_t l = 0; l < 2 && !rc; l++) {
		const json_t *c;
		size_t i;

		json_array_foreach (json_object_get(spec, lists[l]), i, c) {
			size_t nn = resource_names(c, &names, &cap_names);
			bool init = l == 0;
			bool leaves = init && strcmp(kobj_text(c, "restartPolicy"), "Always");

			for (size_t k = 0; k < nn && !rc; k++) {
				struct devicewalk_step st = {.container = c,
							     .resource = names[k],
							     .init = init,
							     .leaves = leaves};
				size_t at;

				if (!serves(arg, names[k]))
					continue;
				if (devicewalk_ask(c, names[k], &st.ask, err) < 0) {
					if (err) {
						rc = -1;
						break;
					}
					st.ask = 0;
				}
				if (st.ask <= 0)
					continue;
				at = reusable_at(&reuse, &n_reuse, names[k]);
				st.reused = st.ask < reuse[at].n ? st.ask : reuse[at].n;
				st.fresh = st.ask - st.reused;
				rc = step(arg, &st);
				/* The container's devices join the reusable set, or leave it. */
				reuse[at].n += leaves ? st.fresh : -st.reused;
			}
			if (rc)
				break;
		}
	}
	free(reuse);
	free(names);
	return rc;
}
