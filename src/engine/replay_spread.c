#include "engine/replay_spread.h"

#include <math.h>
#include <stdlib.h>

#include "base/wrapper.h"
#include "base/banned.h"

/* r's point at `pct`, or NULL. */
static const struct replay_point *point_at(const struct replay_result *r, int pct)
{
	for (size_t i = 0; i < r->n_points; i++)
		if (r->points[i].pct == pct)
			return &r->points[i];
	return NULL;
}

struct replay_spread_point *replay_spread(const struct replay_result *const *runs, size_t n_runs,
					  size_t *n)
{
	struct replay_spread_point *out = NULL;
	const struct replay_point **at;
	size_t k = 0;

	*n = 0;
	if (!n_runs || !runs[0]->n_points)
		return NULL;
	at = gs_xcalloc(n_runs, sizeof(*at));
	out = gs_xcalloc(runs[0]->n_points, sizeof(*out));
	for (size_t i = 0; i < runs[0]->n_points; i++) {
		int pct = runs[0]->points[i].pct;
		size_t j;
		for (j = 0; j < n_runs && (at[j] = point_at(runs[j], pct)); j++)
			;
		if (j < n_runs)
			continue;
		struct replay_spread_point *p = &out[k++];
		double sum = 0, sq = 0, asked = 0, frag = 0;
		p->pct = pct;
		p->runs = n_runs;
		p->alloc_min = p->alloc_max = at[0]->alloc_pct;
		p->pending_min = p->pending_max = at[0]->pending;
		for (j = 0; j < n_runs; j++) {
			const struct replay_point *a = at[j];
			sum += a->alloc_pct;
			asked += a->asked_pct;
			frag += a->frag_pct;
			p->alloc_min = fmin(p->alloc_min, a->alloc_pct);
			p->alloc_max = fmax(p->alloc_max, a->alloc_pct);
			if (a->pending < p->pending_min)
				p->pending_min = a->pending;
			if (a->pending > p->pending_max)
				p->pending_max = a->pending;
		}
		p->alloc_mean = sum / (double)n_runs;
		p->asked_mean = asked / (double)n_runs;
		p->frag_mean = frag / (double)n_runs;
		for (j = 0; j < n_runs; j++) {
			double d = at[j]->alloc_pct - p->alloc_mean;
			sq += d * d;
		}
		p->alloc_sd = sqrt(sq / (double)n_runs);
	}
	free(at);
	if (!k) {
		free(out);
		return NULL;
	}
	*n = k;
	return out;
}

double replay_spread_outside(const struct replay_spread_point *p, double alloc)
{
	if (alloc < p->alloc_min)
		return p->alloc_min - alloc;
	if (alloc > p->alloc_max)
		return alloc - p->alloc_max;
	return 0;
}
