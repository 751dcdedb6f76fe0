#ifndef GS_JSONMETER_H
#define GS_JSONMETER_H

/*
 * A ceiling on what jansson may allocate on one thread between
 * json_meter_begin and json_meter_end: past it, jansson's allocations on that
 * thread fail, so json_loadb stops with an error instead of building a tree
 * of any size. A JSON text costs far more as a tree than as bytes (6 MiB of
 * `{}` elements is 480 MB of jansson objects), so a cap on the body alone
 * does not bound a parse.
 *
 * jansson's allocator is swapped once (json_meter_install, before any
 * thread that uses jansson starts) for malloc and free that count on the
 * threads metering and behave as malloc and free everywhere else, so blocks
 * allocated before or after, or on other threads, are freed as usual.
 */

#include <stdbool.h>
#include <stddef.h>

void json_meter_install(void);
/* From now on this thread's jansson allocations may hold `limit` bytes at most. */
void json_meter_begin(size_t limit);
/* Stop counting; true when an allocation was refused. *peak (NULL = not wanted) gets the most held.
 */
bool json_meter_end(size_t *peak);

#endif
