#include "base/jsonsort.h"

#include <stdlib.h>
#include <string.h>

#include "base/wrapper.h"
#include "base/banned.h"

static int by_string(const void *a, const void *b)
{
	return strcmp(json_string_value(*(json_t *const *)a),
		      json_string_value(*(json_t *const *)b));
}

json_t *jsonsort_strings(json_t *arr)
{
	size_t n = json_array_size(arr);
	json_t **v = gs_xcalloc(n ? n : 1, sizeof(*v));

	for (size_t i = 0; i < n; i++)
		v[i] = json_incref(json_array_get(arr, i));
	qsort(v, n, sizeof(*v), by_string);
	json_array_clear(arr);
	for (size_t i = 0; i < n; i++)
		json_array_append_new(arr, v[i]);
	free(v);
	return arr;
}

struct keyed {
	const char *key;
	json_t *v;
};

static int by_key(const void *a, const void *b)
{
	return strcmp(((const struct keyed *)a)->key, ((const struct keyed *)b)->key);
}

json_t *jsonsort_by_member(json_t *arr, const char *key)
{
	size_t n = json_array_size(arr);
	struct keyed *v = gs_xcalloc(n ? n : 1, sizeof(*v));

	for (size_t i = 0; i < n; i++) {
		const char *k = json_string_value(json_object_get(json_array_get(arr, i), key));

		v[i].v = json_incref(json_array_get(arr, i));
		v[i].key = k ? k : "";
	}
	qsort(v, n, sizeof(*v), by_key);
	json_array_clear(arr);
	for (size_t i = 0; i < n; i++)
		json_array_append_new(arr, v[i].v);
	free(v);
	return arr;
}
