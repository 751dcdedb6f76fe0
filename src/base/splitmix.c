#include "base/splitmix.h"

uint64_t splitmix_next(struct splitmix *r)
{
	uint64_t z = (r->s += 0x9e3779b97f4a7c15ULL);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

size_t splitmix_below(struct splitmix *r, size_t n)
{
	uint64_t limit = UINT64_MAX - UINT64_MAX % n, x;

	do
		x = splitmix_next(r);
	while (x >= limit);
	return (size_t)(x % n);
}
