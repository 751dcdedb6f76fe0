#ifndef GS_KUBELIMIT_H
#define GS_KUBELIMIT_H

/*
 * How many short requests the event loop keeps in flight: a limit that
 * grows while answers come back as fast as the fastest lately, and shrinks
 * when they slow down, in the spirit of TCP Vegas (Brakmo and Peterson,
 * 1995: compare the round trip now with the lowest seen; Netflix's
 * concurrency-limits applies it to requests, VegasLimit.java). Where
 * latency, not the apiserver's CPU, bounds the rate (an idle control
 * plane, a distant one), more at once means more done per second and the
 * limit climbs to its ceiling; where the apiserver is saturated, more at
 * once only queues there (slower answers for every client, leases
 * included) and the limit stays near its floor. It never goes below the
 * floor: never slower than a fixed floor.
 *
 * Per round (as many answers as the limit): the mean round trip against
 * the lowest round mean of the last KUBE_LIMIT_ROUNDS rounds: under 1.25
 * times it, and the limit was used, grow by a quarter; over 1.5 times,
 * shrink by a fifth. Pure: the caller measures.
 */

#include <stdbool.h>

#define KUBE_LIMIT_ROUNDS 64u

struct kube_limit {
	unsigned limit;			 /* current, in [min, max] */
	unsigned min, max;		 /* floor and ceiling */
	double sum;			 /* round trips of this round, ms */
	unsigned n;			 /* answers in this round */
	bool used;			 /* the limit was reached in this round */
	double means[KUBE_LIMIT_ROUNDS]; /* the last rounds' means, a ring */
	unsigned rounds;		 /* rounds seen */
};

/* Start at the floor min (lowered to max when above it; max 0 counts as 1). */
void kube_limit_init(struct kube_limit *k, unsigned min, unsigned max);
/* One answer came back after rtt_ms with in_flight requests running, itself included. */
void kube_limit_sample(struct kube_limit *k, double rtt_ms, unsigned in_flight);
/* The requests that may run at once now. */
unsigned kube_limit_get(const struct kube_limit *k);

#endif
