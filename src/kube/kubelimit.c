#include "kube/kubelimit.h"

#include "base/banned.h"

#define GROW_BELOW 1.25	 /* the round's mean against the lowest: grow under it */
#define SHRINK_ABOVE 1.5 /* shrink over it */
#define MIN_ROUND 4u	 /* answers a round averages, at least */

void kube_limit_init(struct kube_limit *k, unsigned min, unsigned max)
{
	if (!max)
		max = 1;
	if (!min || min > max)
		min = max;
	k->min = min;
	k->max = max;
	k->limit = min;
	k->sum = 0;
	k->n = 0;
	k->used = false;
	k->rounds = 0;
}

void kube_limit_sample(struct kube_limit *k, double rtt_ms, unsigned in_flight)
{
	double mean, lowest;
	unsigned kept;

	k->sum += rtt_ms > 0.1 ? rtt_ms : 0.1;
	k->n++;
	if (in_flight >= k->limit)
		k->used = true;
	/* A round: as many answers as the limit, at least MIN_ROUND. */
	if (k->n < (k->limit > MIN_ROUND ? k->limit : MIN_ROUND))
		return;
	mean = k->sum / k->n;
	k->means[k->rounds++ % KUBE_LIMIT_ROUNDS] = mean;
	kept = k->rounds < KUBE_LIMIT_ROUNDS ? k->rounds : KUBE_LIMIT_ROUNDS;
	lowest = mean;
	for (unsigned i = 0; i < kept; i++)
		if (k->means[i] < lowest)
			lowest = k->means[i];
	if (mean < lowest * GROW_BELOW && k->used) {
		unsigned next = k->limit + (k->limit + 3) / 4;
		k->limit = next < k->max ? next : k->max;
	} else if (mean > lowest * SHRINK_ABOVE) {
		unsigned next = k->limit - k->limit / 5;
		k->limit = next > k->min ? next : k->min;
	}
	k->sum = 0;
	k->n = 0;
	k->used = false;
}

unsigned kube_limit_get(const struct kube_limit *k)
{
	return k->limit;
}
