#ifndef GS_POOLS_H
#define GS_POOLS_H

#include <jansson.h>
#include <stddef.h>

/*
 * Headroom of GPU pools (docs/guide/plan.md "pools"): per pool and nvidia.com/
 * resource, what the nodes register, what the pods there hold, what is
 * free and what is stranded. A pool is the nodes' gpushare.io/pool label,
 * else their GPU model (gpushare.io/gpu-product, else GFD's product label),
 * which a what-if of configs or layouts does not change. `gpushare plan`
 * prints it after a batch; `gpushare report` leads with it.
 *
 *	struct pools t;
 *	pools_init(&t);
 *	for each node, each nvidia.com/ resource it registers:
 *		pools_add(&t, node, resource, allocatable, requested_there);
 *	pools_finish(&t, pending, &uses, &n);
 */

/* One pool and one nvidia.com/ resource. */
struct pool_use {
	char *pool;
	char *resource;
	size_t nodes;
	/* registered: the nodes' allocatable; held: what pods there request;
	   free = registered - held (not below 0); stranded: free, while a pod
	   asking for that resource stays pending (capacity that fits none of them) */
	long long registered, held, free, stranded;
};

/* The tally being made (contents private to pools.c). */
struct pools {
	json_t *index; /* "pool\x1fresource" -> index into uses */
	struct pool_use *uses;
	size_t n, cap;
};

/* The pool of a node: its gpushare.io/pool label, else its GPU model, else "?". Caller frees. */
char *pools_name_of(const json_t *node);

void pools_init(struct pools *t);
/*
 * Count one node's `resource`: `registered` allocatable, `held` requested by
 * the pods bound there. Resources outside nvidia.com/ and nothing registered
 * are not counted. `*pool` caches the node's pool name between calls for one
 * node (start with NULL; the caller frees it).
 */
void pools_add(struct pools *t, const json_t *node, char **pool, const char *resource,
	       long long registered, long long held);
/*
 * Free and stranded of every pool (`pending`: an object whose keys are the
 * resources a pending pod asks for; NULL = none), in order of first
 * appearance, into *out (owned by the caller, pools_free_uses) and *n. The
 * tally is released.
 */
void pools_finish(struct pools *t, const json_t *pending, struct pool_use **out, size_t *n);
/* Stranded of each use: its free when `pending` (as above) names its resource, else 0. */
void pools_strand(struct pool_use *uses, size_t n, const json_t *pending);
void pools_free_uses(struct pool_use *uses, size_t n);

#endif
