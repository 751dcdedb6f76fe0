#ifndef GS_WRAPPER_H
#define GS_WRAPPER_H

#include <stddef.h>

/*
 * Memory: the one rule (every module reaches this header through error.h).
 *
 *  - Whoever allocates frees. A function that hands memory over says so
 *    where it is declared: "caller frees" for a char *, "new reference" for
 *    a json_t *, an out-param S ** for an S the caller ends with S_free.
 *  - Each owning type S has one S_free(struct S *): contents and struct,
 *    NULL-safe. S_release frees the contents of an S the caller holds (on
 *    the stack, in an array); S_init sets one up without allocating it.
 *  - Pointers are borrowed unless said otherwise. A `const` pointer,
 *    parameter or field, is borrowed: for the call, or for the life of the
 *    struct holding it, from the object named at the field ("borrowed from
 *    the catalog"). A non-const pointer field is owned by its struct and
 *    freed by its S_free or S_release; one that is not says "borrowed" at
 *    the field. A callback's context or a destination (void *arg, void *value)
 *    is always the caller's.
 *  - json_t (jansson's counted references): a json_t * parameter is
 *    borrowed for the call (kept past it only after json_incref), const or
 *    not (non-const: the callee may change it, e.g. mergepatch_apply); a
 *    parameter whose reference the callee takes says "stolen" (jansson's
 *    *_new functions, mergepatch_set). A json_t * returned, or stored
 *    through json_t **out, is a new reference the caller decrefs; a
 *    const json_t * returned (kobj_get) and a result marked "Borrowed"
 *    (ydoc_stream_doc) live as long as the object they come from. A
 *    json_t ** that is also read ("created when NULL") is the caller's
 *    object, updated in place.
 */

/* Allocation that never returns NULL: an out-of-memory CLI has no better move. */
void *gs_xmalloc(size_t n);
void *gs_xcalloc(size_t n, size_t size);
void *gs_xrealloc(void *p, size_t n);
char *gs_xstrdup(const char *s);
char *gs_xstrndup(const char *s, size_t n);

#endif
