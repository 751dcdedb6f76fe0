#include "base/didyoumean.h"

#include <stdbool.h>
#include <string.h>

#include "base/banned.h"

enum { MAX_LEN = 255 };

static int fold(int c)
{
	return c >= 'A' && c <= 'Z' ? c + 32 : c;
}

static size_t min3(size_t a, size_t b, size_t c)
{
	size_t m = a < b ? a : b;
	return m < c ? m : c;
}

/*
 * Optimal string alignment distance over three rows (the one before the
 * previous is needed for a swap), as git's levenshtein.c with unit costs.
 */
size_t dym_distance(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b);
	size_t rows[3][MAX_LEN + 1];
	size_t *r0 = rows[0], *r1 = rows[1], *r2 = rows[2];

	if (la > MAX_LEN || lb > MAX_LEN)
		return (size_t)-1;
	for (size_t j = 0; j <= lb; j++)
		r1[j] = j;
	for (size_t i = 0; i < la; i++) {
		size_t *t;
		r2[0] = i + 1;
		for (size_t j = 0; j < lb; j++) {
			size_t cost = fold((unsigned char)a[i]) != fold((unsigned char)b[j]);
			r2[j + 1] = min3(r1[j] + cost, r1[j + 1] + 1, r2[j] + 1);
			if (i > 0 && j > 0 &&
			    fold((unsigned char)a[i]) == fold((unsigned char)b[j - 1]) &&
			    fold((unsigned char)a[i - 1]) == fold((unsigned char)b[j]) &&
			    r0[j - 1] + 1 < r2[j + 1])
				r2[j + 1] = r0[j - 1] + 1;
		}
		t = r0;
		r0 = r1;
		r1 = r2;
		r2 = t;
	}
	return r1[lb];
}

/*
 * Close means at most a third of the word changed (at least one edit, at
 * most four): "plna" -> plan, "jsn" -> json, "renameByDefualt" ->
 * renameByDefault, while "foo" suggests nothing of "yaml".
 */
void dym_init(struct dym *d, const char *word)
{
	size_t n = strlen(word);

	memset(d, 0, sizeof(*d));
	d->word = word;
	d->limit = n / 3 < 1 ? 1 : n / 3 > 4 ? 4 : n / 3;
	d->best_dist = (size_t)-1;
}

static bool seen(const struct dym *d, const char *name)
{
	for (size_t i = 0; i < d->n_all && i < DYM_LIST_MAX; i++)
		if (!strcmp(d->all[i], name))
			return true;
	for (size_t i = 0; i < d->n_best; i++)
		if (!strcmp(d->best[i], name))
			return true;
	return false;
}

void dym_offer_at(struct dym *d, const char *name, size_t dist)
{
	if (seen(d, name))
		return;
	if (d->n_all < DYM_LIST_MAX)
		d->all[d->n_all] = name;
	d->n_all++;
	/* A name that must be rewritten whole is no suggestion. */
	if (dist > d->limit || dist >= strlen(name) || dist > d->best_dist)
		return;
	if (dist < d->best_dist) {
		d->best_dist = dist;
		d->n_best = 0;
	}
	if (d->n_best < DYM_MAX)
		d->best[d->n_best++] = name;
}

void dym_offer(struct dym *d, const char *name)
{
	dym_offer_at(d, name, dym_distance(d->word, name));
}

size_t dym_result(const struct dym *d, const char *const **names)
{
	*names = d->best;
	return d->n_best;
}

void dym_add_hint(const struct dym *d, struct strbuf *out)
{
	if (d->n_best == 1) {
		strbuf_addf(out, "; did you mean '%s'?", d->best[0]);
		return;
	}
	if (d->n_best == 0)
		return;
	strbuf_addstr(out, "; did you mean one of ");
	for (size_t i = 0; i < d->n_best; i++)
		strbuf_addf(out, "%s'%s'", i ? ", " : "", d->best[i]);
	strbuf_addch(out, '?');
}

void dym_add_choices(const struct dym *d, struct strbuf *out, const char *listing)
{
	dym_add_hint(d, out);
	if (d->n_all && d->n_all <= DYM_LIST_MAX) {
		if (d->n_best)
			return; /* the suggestion says enough */
		strbuf_addstr(out, " (one of: ");
		for (size_t i = 0; i < d->n_all; i++)
			strbuf_addf(out, "%s%s", i ? ", " : "", d->all[i]);
		strbuf_addch(out, ')');
	} else if (listing) {
		strbuf_addf(out, " (see '%s')", listing);
	}
}

void dym_suggest(struct strbuf *out, const char *word, const char *const *set, size_t n,
		 const char *listing)
{
	struct dym d;

	dym_init(&d, word);
	for (size_t i = 0; i < n; i++)
		dym_offer(&d, set[i]);
	dym_add_choices(&d, out, listing);
}
