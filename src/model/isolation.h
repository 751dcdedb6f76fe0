#ifndef GS_ISOLATION_H
#define GS_ISOLATION_H

#include <stddef.h>

/* What each way of sharing a GPU isolates: yes / partial / no, and why. */
struct isolation_method {
	const char *name;
	const char *resource;
	const char *divides;
	const char *memory;
	const char *memory_why;
	const char *fault;
	const char *fault_why;
};

/* time-slicing, mps, mig, in that order. */
const struct isolation_method *isolation_methods(size_t *n);
/* The method called `name` ("time-slicing", "mps", "mig"), or NULL. */
const struct isolation_method *isolation_method_find(const char *name);

/* The lab's five KEY=value lines (out/isolation.txt), newline-terminated. Caller frees. */
char *isolation_env_text(void);

#endif
