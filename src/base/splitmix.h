#ifndef GS_SPLITMIX_H
#define GS_SPLITMIX_H

#include <stddef.h>
#include <stdint.h>

/*
 * SplitMix64 (Steele, Lea, Flood 2014): the one seeded generator the
 * replay's shuffles, plan's draws among tied nodes and the soak's steps
 * take from, so that a seed names the same stream everywhere.
 */
struct splitmix {
	uint64_t s;
};

uint64_t splitmix_next(struct splitmix *r);

/* Uniform in [0, n), n > 0, without modulo bias (rejection). */
size_t splitmix_below(struct splitmix *r, size_t n);

#endif
