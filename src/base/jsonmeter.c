#include "base/jsonmeter.h"

#include <jansson.h>
#include <malloc.h>
#include <stdlib.h>

#include "base/banned.h"

/* Per thread: only the thread that began counting is limited. */
static _Thread_local struct {
	bool on, over;
	size_t limit, held, peak;
} meter;

static void *meter_malloc(size_t n)
{
	void *p;

	if (!meter.on)
		return malloc(n);
	if (meter.over || meter.held >= meter.limit || n > meter.limit - meter.held) {
		meter.over = true;
		return NULL;
	}
	p = malloc(n);
	if (p) {
		/* What malloc gave, not what was asked: the bound is on memory. */
		meter.held += malloc_usable_size(p);
		if (meter.held > meter.peak)
			meter.peak = meter.held;
	}
	return p;
}

static void meter_free(void *p)
{
	if (p && meter.on) {
		size_t n = malloc_usable_size(p);
		meter.held = n < meter.held ? meter.held - n : 0;
	}
	free(p);
}

void json_meter_install(void)
{
	json_set_alloc_funcs(meter_malloc, meter_free);
}

void json_meter_begin(size_t limit)
{
	meter.on = true;
	meter.over = false;
	meter.limit = limit;
	meter.held = meter.peak = 0;
}

bool json_meter_end(size_t *peak)
{
	meter.on = false;
	if (peak)
		*peak = meter.peak;
	return meter.over;
}
