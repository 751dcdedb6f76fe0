/* JSON text into a json_t for the unit tests: a bad text fails the test, naming it. */
#ifndef JSON_FIXTURE_H
#define JSON_FIXTURE_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <jansson.h>

/* A new reference; the caller decrefs it (or packs it with "o"). */
static inline json_t *loads(const char *text)
{
	json_error_t je;
	json_t *j = json_loads(text, 0, &je);

	if (!j)
		fail_msg("bad test JSON: %s: %s", je.text, text);
	return j;
}

#endif
