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
