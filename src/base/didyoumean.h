#ifndef GS_DIDYOUMEAN_H
#define GS_DIDYOUMEAN_H

#include <stddef.h>

#include "base/strbuf.h"

/*
 * "Did you mean" for a name from a closed set (git's help_unknown_cmd):
 * the candidates nearest the word by Damerau-Levenshtein distance (optimal
 * string alignment: insert, delete, substitute, swap two neighbours; ASCII
 * case ignored), offered only when close, at most DYM_MAX of them.
 *
 *	struct dym d;
 *	dym_init(&d, word);
 *	for (...) dym_offer(&d, name_i);
 *	dym_add_hint(&d, &msg);           "; did you mean 'x'?"
 *	dym_add_choices(&d, &msg, "gpushare catalog");
 *
 * The struct borrows the word and every name offered: they must outlive it.
 */

enum { DYM_MAX = 3, DYM_LIST_MAX = 12 };

struct dym {
	const char *word;
	size_t limit; /* largest distance still "close" */
	const char *best[DYM_MAX];
	size_t best_dist;
	size_t n_best;
	const char *all[DYM_LIST_MAX]; /* the first names offered, for the choices */
	size_t n_all;		       /* distinct names offered */
};

/* Distance between a and b; (size_t)-1 when either is longer than 255 bytes. */
size_t dym_distance(const char *a, const char *b);

void dym_init(struct dym *d, const char *word);
/* Offer one name of the set; a repeat of one of the first twelve names or of a
 * suggestion is dropped, so offer each name once where the set is larger. */
void dym_offer(struct dym *d, const char *name);
/* Offer one name with a distance the caller computed (0: a strong match). */
void dym_offer_at(struct dym *d, const char *name, size_t dist);
/* How many names are suggested (0 when none is close); *names gets them, best first. */
size_t dym_result(const struct dym *d, const char *const **names);

/* "; did you mean 'a'?" or "; did you mean one of 'a', 'b', 'c'?"; nothing when none is close. */
void dym_add_hint(const struct dym *d, struct strbuf *out);
/*
 * The hint, then: when at most DYM_LIST_MAX names were offered and none is
 * close, " (one of: a, b, c)"; when more were offered, " (see 'LISTING')"
 * (nothing when listing is NULL).
 */
void dym_add_choices(const struct dym *d, struct strbuf *out, const char *listing);

/* The lot for a set held as an array: offer each of set[0..n-1], then dym_add_choices. */
void dym_suggest(struct strbuf *out, const char *word, const char *const *set, size_t n,
		 const char *listing);

#endif
