#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "kube/kubelimit.h"

/*
 * The event loop's in-flight limit (kube/kubelimit.h) against model
 * apiservers: one whose answers take as long at any concurrency (latency
 * bounds the rate: the limit should climb), one whose answers take as long
 * as the queue in front of them (saturated: more at once buys nothing and
 * the limit should stay low), one that is saturated beyond a knee.
 */

/* Drive the limit as the loop does: always using it, each answer timed by rtt(limit). */
static unsigned drive(struct kube_limit *k, double (*rtt)(unsigned limit), unsigned answers,
		      unsigned *highest)
{
	*highest = kube_limit_get(k);
	for (unsigned i = 0; i < answers; i++) {
		unsigned lim = kube_limit_get(k);
		kube_limit_sample(k, rtt(lim), lim);
		if (kube_limit_get(k) > *highest)
			*highest = kube_limit_get(k);
		assert_true(kube_limit_get(k) >= k->min && kube_limit_get(k) <= k->max);
	}
	return kube_limit_get(k);
}

static double flat(unsigned limit)
{
	(void)limit;
	return 73;
}

/* 200 answers a second, whatever the concurrency: Little's law. */
static double saturated(unsigned limit)
{
	return limit * 5.0;
}

/* Flat to 32 at once, saturated beyond. */
static double knee(unsigned limit)
{
	return limit <= 32 ? 73 : 73.0 * limit / 32;
}

static void init_clamps(void **state)
{
	struct kube_limit k;

	(void)state;
	kube_limit_init(&k, 16, 64);
	assert_int_equal(kube_limit_get(&k), 16);
	kube_limit_init(&k, 16, 8);
	assert_int_equal(kube_limit_get(&k), 8);
	assert_int_equal(k.min, 8);
	kube_limit_init(&k, 0, 0);
	assert_int_equal(kube_limit_get(&k), 1);
}

/* Latency bounds the rate: the ceiling is reached within a few rounds. */
static void climbs_while_latency_holds(void **state)
{
	struct kube_limit k;
	unsigned highest;

	(void)state;
	kube_limit_init(&k, 16, 64);
	assert_int_equal(drive(&k, flat, 300, &highest), 64);
	/* And one that may run only one at a time stays there. */
	kube_limit_init(&k, 1, 1);
	assert_int_equal(drive(&k, flat, 300, &highest), 1);
}

/* Saturated: growing only queues at the apiserver, so it barely does. */
static void stays_low_when_saturated(void **state)
{
	struct kube_limit k;
	unsigned highest;

	(void)state;
	kube_limit_init(&k, 16, 64);
	drive(&k, saturated, 1000, &highest);
	assert_true(highest <= 25);
	/* Beyond the knee it stops short of the ceiling. */
	kube_limit_init(&k, 16, 64);
	drive(&k, knee, 1000, &highest);
	assert_true(highest >= 32);
	assert_true(highest <= 50);
}

/* Not using the limit says nothing about a higher one. */
static void app_limited_does_not_grow(void **state)
{
	struct kube_limit k;

	(void)state;
	kube_limit_init(&k, 16, 64);
	for (int i = 0; i < 500; i++)
		kube_limit_sample(&k, 73, 10);
	assert_int_equal(kube_limit_get(&k), 16);
}

/*
 * Answers slowing down (the apiserver got busy): back to the floor within a
 * few rounds, never below. A slowness that lasts becomes the new normal once
 * the fast rounds are out of the window.
 */
static void shrinks_when_answers_slow(void **state)
{
	struct kube_limit k;
	unsigned highest;

	(void)state;
	kube_limit_init(&k, 16, 64);
	assert_int_equal(drive(&k, flat, 300, &highest), 64);
	for (int i = 0; i < 400; i++)
		kube_limit_sample(&k, 400, kube_limit_get(&k));
	assert_int_equal(kube_limit_get(&k), 16);
	for (int i = 0; i < 16 * (int)KUBE_LIMIT_ROUNDS; i++)
		kube_limit_sample(&k, 400, kube_limit_get(&k));
	assert_true(kube_limit_get(&k) > 16);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(init_clamps),
		cmocka_unit_test(climbs_while_latency_holds),
		cmocka_unit_test(stays_low_when_saturated),
		cmocka_unit_test(app_limited_does_not_grow),
		cmocka_unit_test(shrinks_when_answers_slow),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
