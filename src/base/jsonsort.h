#ifndef GS_JSONSORT_H
#define GS_JSONSORT_H

#include <jansson.h>

/*
 * JSON arrays put in order in place, for output that reads the same on
 * every run (Go's maps, and so the objects Kubernetes components write,
 * have no order of their own). Each takes arr borrowed and returns it, so
 * that a sorted array can be packed at once: json_pack("{s:o}", "pods",
 * jsonsort_strings(pods)). Sorting is qsort's: elements that compare equal
 * keep no particular order.
 */

/* Strings in strcmp order; every element must be a string. */
json_t *jsonsort_strings(json_t *arr);
/* Objects in strcmp order of their string member `key` (absent or no string: ""). */
json_t *jsonsort_by_member(json_t *arr, const char *key);

#endif
