#include "model/catalog.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "base/didyoumean.h"
#include "base/banned.h"

/* Caps: the table is ours, but a bad edit must give an error, not a crash. */
#define MAX_TOKENS 64
#define MAX_RECORDS 4096
#define MAX_FILTER 64
#define MAX_LAYOUT_DEVICES 8 /* sizeof(catalog_gpu_mig.devices) */
#define MAX_NAME 128

struct pci_group {
	char *name;
	unsigned long *ids;
	size_t n;
};

struct catalog {
	struct pci_group *groups;
	size_t n_groups;
	struct catalog_migset **migsets;
	size_t n_migsets;
	struct catalog_gpu *gpus;
	size_t n_gpus;
	struct catalog_layout **layouts;
	size_t n_layouts;
	struct catalog_release *release;
	size_t records;
};

/* Generated from data/gpus.tab (mk/catalog.mk). */
extern const char catalog_data[];
extern const size_t catalog_data_len;

struct token {
	const char *s; /* NUL-terminated copy in the line buffer */
	int col;
};

/*
 * Split one line into blank-separated tokens; "..." groups blanks into one.
 * The line buffer is modified in place. Returns the count, or -1 on error.
 */
static int tokenize(char *line, const char *name, int lineno, struct token *tok,
		    struct gs_error *err)
{
	int n = 0;
	char *p = line;

	for (;;) {
		while (*p == ' ' || *p == '\t' || *p == '\r')
			p++;
		if (!*p)
			break;
		if (n == MAX_TOKENS) {
			gs_error_at(err, name, lineno, (int)(p - line) + 1, "more than %d fields",
				    MAX_TOKENS);
			return -1;
		}
		tok[n].col = (int)(p - line) + 1;
		if (*p == '"') {
			char *end = strchr(p + 1, '"');
			if (!end) {
				gs_error_at(err, name, lineno, tok[n].col, "unterminated quote");
				return -1;
			}
			*end = '\0';
			tok[n].s = p + 1;
			p = end + 1;
			if (*p && *p != ' ' && *p != '\t' && *p != '\r') {
				gs_error_at(err, name, lineno, (int)(p - line) + 1,
					    "expected a blank after the closing quote");
				return -1;
			}
		} else {
			tok[n].s = p;
			while (*p && *p != ' ' && *p != '\t' && *p != '\r')
				p++;
			if (*p)
				*p++ = '\0';
			n++;
			continue;
		}
		n++;
	}
	return n;
}

/* A decimal int in [0, max]; the whole token. */
static int parse_int(const char *s, int max, int *out)
{
	long v = 0;

	if (!isdigit((unsigned char)*s))
		return -1;
	for (; *s; s++) {
		if (!isdigit((unsigned char)*s))
			return -1;
		v = v * 10 + (*s - '0');
		if (v > max)
			return -1;
	}
	*out = (int)v;
	return 0;
}

/* "0x" followed by 1-8 hex digits. */
static int parse_pci(const char *s, unsigned long *out)
{
	unsigned long v = 0;
	size_t n = 0;

	if (s[0] != '0' || (s[1] != 'x' && s[1] != 'X'))
		return -1;
	for (s += 2; *s; s++, n++) {
		int d;
		if (n == 8)
			return -1;
		if (*s >= '0' && *s <= '9')
			d = *s - '0';
		else if (*s >= 'a' && *s <= 'f')
			d = *s - 'a' + 10;
		else if (*s >= 'A' && *s <= 'F')
			d = *s - 'A' + 10;
		else
			return -1;
		v = v * 16 + (unsigned long)d;
	}
	if (n == 0)
		return -1;
	*out = v;
	return 0;
}

/* "MAJOR.MINOR" */
static int parse_cc(const char *s, int *major, int *minor)
{
	char buf[16];
	const char *dot = strchr(s, '.');

	if (!dot || (size_t)(dot - s) >= sizeof(buf))
		return -1;
	memcpy(buf, s, (size_t)(dot - s));
	buf[dot - s] = '\0';
	return parse_int(buf, 99, major) || parse_int(dot + 1, 99, minor) ? -1 : 0;
}

static struct catalog_migset *find_migset(const struct catalog *cat, const char *id)
{
	for (size_t i = 0; i < cat->n_migsets; i++)
		if (!strcmp(cat->migsets[i]->id, id))
			return cat->migsets[i];
	return NULL;
}

static const struct pci_group *find_group(const struct catalog *cat, const char *name)
{
	for (size_t i = 0; i < cat->n_groups; i++)
		if (!strcmp(cat->groups[i].name, name))
			return &cat->groups[i];
	return NULL;
}

static bool valid_name(const char *s)
{
	size_t n = strlen(s);

	if (n == 0 || n > MAX_NAME)
		return false;
	for (; *s; s++)
		if (!isalnum((unsigned char)*s) && !strchr("-_.+", *s))
			return false;
	return true;
}

#define FAIL(tk, ...)                                                                              \
	do {                                                                                       \
		gs_error_at(err, name, lineno, (tk).col, __VA_ARGS__);                             \
		return -1;                                                                         \
	} while (0)

static int rec_pci(struct catalog *cat, const char *name, int lineno, const struct token *t, int n,
		   struct gs_error *err)
{
	struct pci_group *g;

	if (n < 3)
		FAIL(t[0], "pci: want GROUP and at least one ID");
	if (!valid_name(t[1].s))
		FAIL(t[1], "pci: bad group name '%s'", t[1].s);
	if (find_group(cat, t[1].s))
		FAIL(t[1], "pci: group '%s' defined twice", t[1].s);
	if (n - 2 > MAX_FILTER)
		FAIL(t[2], "pci: more than %d ids", MAX_FILTER);
	cat->groups = gs_xrealloc(cat->groups, (cat->n_groups + 1) * sizeof(*cat->groups));
	g = &cat->groups[cat->n_groups++];
	g->name = gs_xstrdup(t[1].s);
	g->ids = gs_xcalloc((size_t)(n - 2), sizeof(*g->ids));
	g->n = 0;
	for (int i = 2; i < n; i++) {
		if (parse_pci(t[i].s, &g->ids[g->n]))
			FAIL(t[i], "pci: bad PCI id '%s' (want 0x20B010DE)", t[i].s);
		g->n++;
	}
	return 0;
}

static int rec_migset(struct catalog *cat, const char *name, int lineno, const struct token *t,
		      int n, struct gs_error *err)
{
	struct catalog_migset *ms;
	int cs, mems;

	if (n != 4)
		FAIL(t[0], "migset: want ID COMPUTE-SLICES MEMORY-SLICES");
	if (!valid_name(t[1].s))
		FAIL(t[1], "migset: bad id '%s'", t[1].s);
	if (find_migset(cat, t[1].s))
		FAIL(t[1], "migset: '%s' defined twice", t[1].s);
	if (parse_int(t[2].s, 16, &cs) || cs == 0)
		FAIL(t[2], "migset: bad compute slices '%s'", t[2].s);
	if (parse_int(t[3].s, 16, &mems) || mems == 0)
		FAIL(t[3], "migset: bad memory slices '%s'", t[3].s);
	ms = gs_xcalloc(1, sizeof(*ms));
	ms->id = gs_xstrdup(t[1].s);
	ms->compute_slices = cs;
	ms->memory_slices = mems;
	cat->migsets = gs_xrealloc(cat->migsets, (cat->n_migsets + 1) * sizeof(*cat->migsets));
	cat->migsets[cat->n_migsets++] = ms;
	return 0;
}

static int rec_mig(struct catalog *cat, const char *name, int lineno, const struct token *t, int n,
		   struct gs_error *err)
{
	static const char *const what[] = {"instances", "memory MiB",	"SMs",	    "GI slices",
					   "CI slices", "copy engines", "decoders", "encoders",
					   "jpeg",	"ofa"};
	static const int max[] = {64, 1 << 22, 1024, 16, 16, 64, 64, 64, 64, 64};
	struct catalog_migset *ms;
	struct catalog_mig_profile *p;
	int v[10];

	if (n != 14)
		FAIL(t[0], "mig: want SET PROFILE INSTANCES MIB SMS GI CI CE DEC ENC JPG OFA SRC");
	ms = find_migset(cat, t[1].s);
	if (!ms)
		FAIL(t[1], "mig: unknown migset '%s'", t[1].s);
	if (!valid_name(t[2].s))
		FAIL(t[2], "mig: bad profile '%s'", t[2].s);
	for (size_t i = 0; i < ms->n_profiles; i++)
		if (!strcmp(ms->profiles[i].name, t[2].s))
			FAIL(t[2], "mig: profile '%s' listed twice in '%s'", t[2].s, ms->id);
	for (int i = 0; i < 10; i++)
		if (parse_int(t[3 + i].s, max[i], &v[i]))
			FAIL(t[3 + i], "mig: bad %s '%s'", what[i], t[3 + i].s);
	if (v[0] == 0 || v[3] == 0 || v[4] == 0 || v[3] > ms->compute_slices)
		FAIL(t[3], "mig: profile '%s' has impossible instances or slices", t[2].s);
	ms->profiles = gs_xrealloc((void *)ms->profiles, (ms->n_profiles + 1) * sizeof(*p));
	p = (struct catalog_mig_profile *)&ms->profiles[ms->n_profiles++];
	memset(p, 0, sizeof(*p));
	p->name = gs_xstrdup(t[2].s);
	p->instances = v[0];
	p->memory_mib = v[1];
	p->multiprocessors = v[2];
	p->gi_slices = v[3];
	p->ci_slices = v[4];
	p->copy_engines = v[5];
	p->decoders = v[6];
	p->encoders = v[7];
	p->jpeg = v[8];
	p->ofa = v[9];
	p->source = gs_xstrdup(t[13].s);
	p->gi_profile_id = -1;
	return 0;
}

/* gip SET PROFILE ID SIZE STARTS SRC: "gip a100-80gb 1g.10gb 19 1 0,1,2,3,4,5,6 doc". */
static int rec_gip(struct catalog *cat, const char *name, int lineno, const struct token *t, int n,
		   struct gs_error *err)
{
	struct catalog_migset *ms;
	struct catalog_mig_profile *p = NULL;
	const char *s;
	int id, size;

	if (n != 7)
		FAIL(t[0], "gip: want SET PROFILE ID SIZE STARTS SRC");
	ms = find_migset(cat, t[1].s);
	if (!ms)
		FAIL(t[1], "gip: unknown migset '%s'", t[1].s);
	for (size_t i = 0; i < ms->n_profiles; i++)
		if (!strcmp(ms->profiles[i].name, t[2].s))
			p = (struct catalog_mig_profile *)&ms->profiles[i];
	if (!p)
		FAIL(t[2], "gip: no profile '%s' in '%s' (list it with `mig` first)", t[2].s,
		     ms->id);
	if (p->gi_profile_id >= 0)
		FAIL(t[2], "gip: profile '%s' of '%s' listed twice", t[2].s, ms->id);
	if (parse_int(t[3].s, 63, &id))
		FAIL(t[3], "gip: bad profile id '%s'", t[3].s);
	if (parse_int(t[4].s, ms->memory_slices, &size) || size == 0)
		FAIL(t[4], "gip: bad placement size '%s'", t[4].s);
	p->n_placements = 0;
	s = t[5].s;
	for (;;) {
		char num[8];
		size_t len = strcspn(s, ",");
		int start;

		if (p->n_placements == 8 || len == 0 || len >= sizeof(num))
			FAIL(t[5], "gip: bad placement starts '%s'", t[5].s);
		memcpy(num, s, len);
		num[len] = '\0';
		if (parse_int(num, ms->memory_slices - size, &start))
			FAIL(t[5], "gip: placement '%s' does not fit %d slices", num,
			     ms->memory_slices);
		p->placements[p->n_placements++] = start;
		if (!s[len])
			break;
		s += len + 1;
	}
	p->gi_profile_id = id;
	p->placement_size = size;
	p->gip_source = gs_xstrdup(t[6].s);
	return 0;
}

static int rec_gpu(struct catalog *cat, const char *name, int lineno, const struct token *t, int n,
		   struct gs_error *err)
{
	struct catalog_gpu g = {0};
	char label[256];

	if (n != 7)
		FAIL(t[0], "gpu: want PCI-ID CC MEMORY-MIB MIGSET|- SRC \"NVML NAME\"");
	if (parse_pci(t[1].s, &g.pci_id))
		FAIL(t[1], "gpu: bad PCI id '%s'", t[1].s);
	if (parse_cc(t[2].s, &g.cc_major, &g.cc_minor))
		FAIL(t[2], "gpu: bad compute capability '%s' (want 8.0)", t[2].s);
	if (parse_int(t[3].s, 1 << 24, &g.memory_mib))
		FAIL(t[3], "gpu: bad memory '%s'", t[3].s);
	if (strcmp(t[4].s, "-")) {
		g.mig = find_migset(cat, t[4].s);
		if (!g.mig)
			FAIL(t[4], "gpu: unknown migset '%s'", t[4].s);
	}
	if (!*t[6].s || strlen(t[6].s) > MAX_NAME)
		FAIL(t[6], "gpu: bad NVML name");
	if (catalog_find_gpu(cat, t[6].s))
		FAIL(t[6], "gpu: '%s' listed twice", t[6].s);
	catalog_sanitize(t[6].s, label, sizeof(label));
	g.name = gs_xstrdup(t[6].s);
	g.label = gs_xstrdup(label);
	g.source = gs_xstrdup(t[5].s);
	cat->gpus = gs_xrealloc(cat->gpus, (cat->n_gpus + 1) * sizeof(*cat->gpus));
	cat->gpus[cat->n_gpus++] = g;
	return 0;
}

static int rec_release(struct catalog *cat, const char *name, int lineno, const struct token *t,
		       int n, struct gs_error *err)
{
	struct catalog_release *r;

	if (n != 5)
		FAIL(t[0], "release: want PROJECT VERSION COMMIT FILE");
	if (cat->release)
		FAIL(t[0], "release: named twice (one table holds one release's layouts)");
	for (int i = 1; i < 5; i++)
		if (!*t[i].s || strlen(t[i].s) > MAX_NAME)
			FAIL(t[i], "release: bad field '%s'", t[i].s);
	r = gs_xcalloc(1, sizeof(*r));
	r->project = gs_xstrdup(t[1].s);
	r->version = gs_xstrdup(t[2].s);
	r->commit = gs_xstrdup(t[3].s);
	r->file = gs_xstrdup(t[4].s);
	cat->release = r;
	return 0;
}

static int rec_layout(struct catalog *cat, const char *name, int lineno, const struct token *t,
		      int n, struct gs_error *err)
{
	struct catalog_layout *lay = NULL;
	struct catalog_layout_entry *e;
	unsigned long ids[MAX_FILTER];
	size_t n_ids = 0;
	struct catalog_mig_count *dev;
	bool on;

	if (!cat->release)
		FAIL(t[0], "layout: no release record before it (which mig-parted release?)");
	if (n < 4)
		FAIL(t[0], "layout: want NAME FILTER on|off [PROFILE=COUNT ...]");
	if (!valid_name(t[1].s))
		FAIL(t[1], "layout: bad name '%s'", t[1].s);
	if (!strcmp(t[3].s, "on"))
		on = true;
	else if (!strcmp(t[3].s, "off"))
		on = false;
	else
		FAIL(t[3], "layout: want on or off, not '%s'", t[3].s);
	if (!on && n > 4)
		FAIL(t[4], "layout: MIG devices on an entry with MIG off");
	if (n - 4 > MAX_LAYOUT_DEVICES)
		FAIL(t[4], "layout: more than %d profiles in one entry", MAX_LAYOUT_DEVICES);
	if (strcmp(t[2].s, "-")) {
		char buf[1024];
		char *p = buf, *comma;
		if (strlen(t[2].s) >= sizeof(buf))
			FAIL(t[2], "layout: filter too long");
		memcpy(buf, t[2].s, strlen(t[2].s) + 1);
		do {
			comma = strchr(p, ',');
			if (comma)
				*comma = '\0';
			if (*p == '@') {
				const struct pci_group *g = find_group(cat, p + 1);
				if (!g)
					FAIL(t[2], "layout: unknown pci group '%s'", p + 1);
				for (size_t i = 0; i < g->n; i++) {
					if (n_ids == MAX_FILTER)
						FAIL(t[2], "layout: filter has too many ids");
					ids[n_ids++] = g->ids[i];
				}
			} else {
				if (n_ids == MAX_FILTER)
					FAIL(t[2], "layout: filter has too many ids");
				if (parse_pci(p, &ids[n_ids]))
					FAIL(t[2], "layout: bad PCI id '%s'", p);
				n_ids++;
			}
			p = comma ? comma + 1 : NULL;
		} while (p);
	}
	for (size_t i = 0; i < cat->n_layouts; i++)
		if (!strcmp(cat->layouts[i]->name, t[1].s))
			lay = cat->layouts[i];
	if (!lay) {
		lay = gs_xcalloc(1, sizeof(*lay));
		lay->name = gs_xstrdup(t[1].s);
		cat->layouts =
			gs_xrealloc(cat->layouts, (cat->n_layouts + 1) * sizeof(*cat->layouts));
		cat->layouts[cat->n_layouts++] = lay;
	}
	lay->entries = gs_xrealloc((void *)lay->entries, (lay->n_entries + 1) * sizeof(*e));
	e = (struct catalog_layout_entry *)&lay->entries[lay->n_entries++];
	memset(e, 0, sizeof(*e));
	e->mig_enabled = on;
	if (n_ids) {
		unsigned long *f = gs_xcalloc(n_ids, sizeof(*f));
		memcpy(f, ids, n_ids * sizeof(*f));
		e->filter = f;
		e->n_filter = n_ids;
	}
	if (n > 4) {
		dev = gs_xcalloc((size_t)(n - 4), sizeof(*dev));
		e->devices = dev;
		for (int i = 4; i < n; i++) {
			char prof[MAX_NAME + 1];
			const char *eq = strchr(t[i].s, '=');
			size_t len = eq ? (size_t)(eq - t[i].s) : 0;
			if (!eq || len == 0 || len > MAX_NAME)
				FAIL(t[i], "layout: want PROFILE=COUNT, not '%s'", t[i].s);
			memcpy(prof, t[i].s, len);
			prof[len] = '\0';
			if (!valid_name(prof))
				FAIL(t[i], "layout: bad profile '%s'", prof);
			if (parse_int(eq + 1, 64, &dev[i - 4].count) || dev[i - 4].count == 0)
				FAIL(t[i], "layout: bad count in '%s'", t[i].s);
			dev[i - 4].profile = gs_xstrdup(prof);
			e->n_devices++;
		}
	}
	return 0;
}

#undef FAIL

static int parse_line(struct catalog *cat, const char *name, int lineno, char *line,
		      struct gs_error *err)
{
	struct token t[MAX_TOKENS];
	int n = tokenize(line, name, lineno, t, err);

	if (n < 0)
		return -1;
	if (n == 0 || t[0].s[0] == '#')
		return 0;
	if (++cat->records > MAX_RECORDS) {
		gs_error_at(err, name, lineno, 1, "more than %d records", MAX_RECORDS);
		return -1;
	}
	if (!strcmp(t[0].s, "pci"))
		return rec_pci(cat, name, lineno, t, n, err);
	if (!strcmp(t[0].s, "migset"))
		return rec_migset(cat, name, lineno, t, n, err);
	if (!strcmp(t[0].s, "mig"))
		return rec_mig(cat, name, lineno, t, n, err);
	if (!strcmp(t[0].s, "gip"))
		return rec_gip(cat, name, lineno, t, n, err);
	if (!strcmp(t[0].s, "gpu"))
		return rec_gpu(cat, name, lineno, t, n, err);
	if (!strcmp(t[0].s, "layout"))
		return rec_layout(cat, name, lineno, t, n, err);
	if (!strcmp(t[0].s, "release"))
		return rec_release(cat, name, lineno, t, n, err);
	gs_error_at(err, name, lineno, t[0].col, "unknown record '%s'", t[0].s);
	return -1;
}

int catalog_parse(const char *name, const char *text, size_t len, struct catalog **out,
		  struct gs_error *err)
{
	struct catalog *cat = gs_xcalloc(1, sizeof(*cat));
	size_t pos = 0;
	int lineno = 0;

	*out = NULL;
	while (pos < len) {
		const char *nl = memchr(text + pos, '\n', len - pos);
		size_t l = nl ? (size_t)(nl - (text + pos)) : len - pos;
		char *line = gs_xstrndup(text + pos, l);
		int rc;

		lineno++;
		if (strlen(line) != l) {
			gs_error_at(err, name, lineno, (int)strlen(line) + 1, "NUL byte in table");
			rc = -1;
		} else {
			rc = parse_line(cat, name, lineno, line, err);
		}
		free(line);
		if (rc) {
			catalog_free(cat);
			return -1;
		}
		pos += l + (nl ? 1 : 0);
	}
	*out = cat;
	return 0;
}

void catalog_free(struct catalog *cat)
{
	if (!cat)
		return;
	for (size_t i = 0; i < cat->n_groups; i++) {
		free(cat->groups[i].name);
		free(cat->groups[i].ids);
	}
	free(cat->groups);
	for (size_t i = 0; i < cat->n_migsets; i++) {
		struct catalog_migset *ms = cat->migsets[i];
		for (size_t j = 0; j < ms->n_profiles; j++) {
			free((void *)ms->profiles[j].name);
			free((void *)ms->profiles[j].source);
			free((void *)ms->profiles[j].gip_source);
		}
		free((void *)ms->profiles);
		free((void *)ms->id);
		free(ms);
	}
	free(cat->migsets);
	for (size_t i = 0; i < cat->n_gpus; i++) {
		free((void *)cat->gpus[i].name);
		free((void *)cat->gpus[i].label);
		free((void *)cat->gpus[i].source);
	}
	free(cat->gpus);
	for (size_t i = 0; i < cat->n_layouts; i++) {
		struct catalog_layout *lay = cat->layouts[i];
		for (size_t j = 0; j < lay->n_entries; j++) {
			const struct catalog_layout_entry *e = &lay->entries[j];
			for (size_t k = 0; k < e->n_devices; k++)
				free((void *)e->devices[k].profile);
			free((void *)e->devices);
			free((void *)e->filter);
		}
		free((void *)lay->entries);
		free((void *)lay->name);
		free(lay);
	}
	free(cat->layouts);
	if (cat->release) {
		free((void *)cat->release->project);
		free((void *)cat->release->version);
		free((void *)cat->release->commit);
		free((void *)cat->release->file);
		free(cat->release);
	}
	free(cat);
}

static struct catalog *builtin;

static void free_builtin(void)
{
	catalog_free(builtin);
	builtin = NULL;
}

int catalog_builtin(const struct catalog **out, struct gs_error *err)
{
	if (!builtin) {
		struct catalog *cat;
		if (catalog_parse("data/gpus.tab", catalog_data, catalog_data_len, &cat, err))
			return -1;
		builtin = cat;
		atexit(free_builtin);
	}
	*out = builtin;
	return 0;
}

size_t catalog_gpu_count(const struct catalog *cat)
{
	return cat->n_gpus;
}

const struct catalog_gpu *catalog_gpu_at(const struct catalog *cat, size_t i)
{
	return i < cat->n_gpus ? &cat->gpus[i] : NULL;
}

/* Case-insensitive compare where runs of blanks and '-' between words are equal. */
static bool same_model(const char *a, const char *b)
{
	char sa[256], sb[256];

	catalog_sanitize(a, sa, sizeof(sa));
	catalog_sanitize(b, sb, sizeof(sb));
	for (size_t i = 0;; i++) {
		if (tolower((unsigned char)sa[i]) != tolower((unsigned char)sb[i]))
			return false;
		if (!sa[i])
			return true;
	}
}

const struct catalog_gpu *catalog_find_gpu(const struct catalog *cat, const char *name)
{
	if (!name || strlen(name) > MAX_NAME * 2)
		return NULL;
	/* An exact NVML name first: sanitizing may map two names to one label. */
	for (size_t i = 0; i < cat->n_gpus; i++)
		if (!strcmp(cat->gpus[i].name, name))
			return &cat->gpus[i];
	for (size_t i = 0; i < cat->n_gpus; i++)
		if (same_model(cat->gpus[i].name, name))
			return &cat->gpus[i];
	return NULL;
}

const struct catalog_mig_profile *catalog_gpu_profile(const struct catalog_gpu *gpu,
						      const char *profile)
{
	if (!gpu->mig)
		return NULL;
	for (size_t i = 0; i < gpu->mig->n_profiles; i++)
		if (!strcmp(gpu->mig->profiles[i].name, profile))
			return &gpu->mig->profiles[i];
	return NULL;
}

const struct catalog_layout *catalog_find_layout(const struct catalog *cat, const char *name)
{
	for (size_t i = 0; i < cat->n_layouts; i++)
		if (!strcmp(cat->layouts[i]->name, name))
			return cat->layouts[i];
	return NULL;
}

size_t catalog_layout_count(const struct catalog *cat)
{
	return cat->n_layouts;
}

const struct catalog_layout *catalog_layout_at(const struct catalog *cat, size_t i)
{
	return i < cat->n_layouts ? cat->layouts[i] : NULL;
}

const struct catalog_release *catalog_release(const struct catalog *cat)
{
	return cat->release;
}

/* mig-parted's MatchesDeviceFilter: no filter matches every GPU, else one id must be the GPU's. */
static bool entry_matches(const struct catalog_layout_entry *e, const struct catalog_gpu *gpu)
{
	if (e->n_filter == 0)
		return true;
	for (size_t i = 0; i < e->n_filter; i++)
		if (e->filter[i] == gpu->pci_id)
			return true;
	return false;
}

/* all-<profile with '+' as '.'> → the GPU's profile of that name, if any. */
static const struct catalog_mig_profile *generated_profile(const char *layout,
							   const struct catalog_gpu *gpu)
{
	char res[MAX_NAME + 1];

	if (strncmp(layout, "all-", 4) || !gpu->mig)
		return NULL;
	for (size_t i = 0; i < gpu->mig->n_profiles; i++) {
		catalog_profile_resource(gpu->mig->profiles[i].name, res, sizeof(res));
		if (!strcmp(res, layout + 4))
			return &gpu->mig->profiles[i];
	}
	return NULL;
}

/* One matching entry applied to the GPU (mig-parted's SetMigConfig), or the reason it fails. */
static int apply_entry(const char *layout_name, const struct catalog_layout_entry *e,
		       const struct catalog_gpu *gpu, struct catalog_gpu_mig *out,
		       struct gs_error *err)
{
	int slices = 0;

	out->result = CATALOG_APPLY_OK;
	out->mig_enabled = e->mig_enabled;
	out->n_devices = 0;
	if (!e->mig_enabled)
		return 0;
	for (size_t i = 0; i < e->n_devices; i++) {
		const struct catalog_mig_profile *p =
			catalog_gpu_profile(gpu, e->devices[i].profile);
		if (!p) {
			gs_error_set(err,
				     "layout %s asks for MIG profile %s, which %s does not have",
				     layout_name, e->devices[i].profile, gpu->name);
			return -1;
		}
		if (e->devices[i].count > p->instances) {
			gs_error_set(err, "layout %s asks for %d x %s, but at most %d fit on %s",
				     layout_name, e->devices[i].count, p->name, p->instances,
				     gpu->name);
			return -1;
		}
		slices += e->devices[i].count * p->gi_slices;
		out->devices[out->n_devices].profile = p->name;
		out->devices[out->n_devices].count = e->devices[i].count;
		out->n_devices++;
	}
	if (slices > gpu->mig->compute_slices) {
		gs_error_set(err, "layout %s needs %d compute slices, but %s has %d", layout_name,
			     slices, gpu->name, gpu->mig->compute_slices);
		return -1;
	}
	return 0;
}

static int layout_apply(const struct catalog *cat, const char *layout_name,
			const struct catalog_gpu *gpu, struct catalog_gpu_mig *out,
			struct gs_error *err)
{
	const struct catalog_layout *lay = catalog_find_layout(cat, layout_name);

	memset(out, 0, sizeof(*out));
	out->result = CATALOG_APPLY_NO_MATCH;
	if (!lay) {
		const struct catalog_mig_profile *p = generated_profile(layout_name, gpu);
		if (!p) {
			gs_error_set(err, "selected mig-config not present: %s", layout_name);
			return -1;
		}
		out->result = CATALOG_APPLY_OK;
		out->generated = true;
		out->mig_enabled = true;
		out->devices[0].profile = p->name;
		out->devices[0].count = p->instances;
		out->n_devices = 1;
		return 0;
	}
	for (size_t i = 0; i < lay->n_entries; i++) {
		if (!entry_matches(&lay->entries[i], gpu))
			continue;
		if (!gpu->mig) {
			/* apply/config.go: "Skipping -- non MIG-capable GPU" (devices: all). */
			out->result = CATALOG_APPLY_NOT_CAPABLE;
			return 0;
		}
		if (apply_entry(layout_name, &lay->entries[i], gpu, out, err))
			return -1;
	}
	return 0;
}

bool catalog_layout_fits(const struct catalog *cat, const char *layout_name,
			 const struct catalog_gpu *gpu)
{
	struct catalog_gpu_mig m;
	struct gs_error e;

	return gpu->mig && layout_apply(cat, layout_name, gpu, &m, &e) == 0 &&
	       m.result == CATALOG_APPLY_OK;
}

void catalog_layout_hint(const struct catalog *cat, const char *name, const struct catalog_gpu *gpu,
			 struct strbuf *out)
{
	struct dym d;

	dym_init(&d, name);
	for (size_t i = 0; i < cat->n_layouts; i++)
		if (!gpu || catalog_layout_fits(cat, cat->layouts[i]->name, gpu))
			dym_offer(&d, cat->layouts[i]->name);
	dym_add_hint(&d, out);
	if (gpu)
		strbuf_addf(out, " (see 'gpushare catalog \"%s\"')", gpu->name);
	else
		strbuf_addstr(out, " (see 'gpushare catalog MODEL')");
}

int catalog_layout_apply(const struct catalog *cat, const char *layout_name,
			 const struct catalog_gpu *gpu, struct catalog_gpu_mig *out,
			 struct gs_error *err)
{
	struct strbuf sb = STRBUF_INIT;

	if (layout_apply(cat, layout_name, gpu, out, err) == 0)
		return 0;
	/* mig-manager's words first, then what would have worked on this GPU. */
	strbuf_addstr(&sb, err->msg);
	catalog_layout_hint(cat, layout_name, gpu, &sb);
	strbuf_copy_to(&sb, err->msg, sizeof(err->msg));
	strbuf_release(&sb);
	return -1;
}

/* `s` without a leading "NVIDIA-" (any case): old and new driver names differ by it. */
static const char *no_vendor(const char *s)
{
	return !strncasecmp(s, "NVIDIA-", 7) ? s + 7 : s;
}

static void lower(const char *in, char *out, size_t size)
{
	size_t i = 0;

	for (; in[i] && i + 1 < size; i++)
		out[i] = (char)tolower((unsigned char)in[i]);
	out[i] = '\0';
}

void catalog_gpu_hint(const struct catalog *cat, const char *name, struct strbuf *out)
{
	char s[MAX_NAME * 2], low[MAX_NAME * 2], lab[MAX_NAME * 2];
	const char *const *best;
	struct dym d;
	size_t n, held = 0;

	catalog_sanitize(name, s, sizeof(s));
	lower(s, low, sizeof(low));
	dym_init(&d, no_vendor(s));
	/* The models whose label form holds the name ("H100") come first. */
	for (size_t i = 0; strlen(low) >= 2 && i < cat->n_gpus; i++) {
		lower(cat->gpus[i].label, lab, sizeof(lab));
		if (strstr(lab, low)) {
			dym_offer_at(&d, cat->gpus[i].name, 0);
			held++;
		}
	}
	/* Else the nearest, with or without the vendor. */
	for (size_t i = 0; !held && i < cat->n_gpus; i++) {
		const struct catalog_gpu *g = &cat->gpus[i];
		size_t a = dym_distance(g->label, s);
		size_t b = dym_distance(no_vendor(g->label), no_vendor(s));
		dym_offer_at(&d, g->name, a < b ? a : b);
	}
	n = dym_result(&d, &best);
	if (n == 1 && strcmp(best[0], catalog_find_gpu(cat, best[0])->label))
		strbuf_addf(out, "; did you mean '%s' (label form '%s')?", best[0],
			    catalog_find_gpu(cat, best[0])->label);
	else
		dym_add_hint(&d, out);
	strbuf_addstr(out, " (see 'gpushare catalog')");
}

void catalog_profile_hint(const struct catalog *cat, const struct catalog_gpu *gpu,
			  const char *name, bool resource_form, struct strbuf *out)
{
	char res[MAX_NAME + 1];
	struct dym d;
	struct strbuf names = STRBUF_INIT;
	size_t n_names = 0;
	/* Resource forms are made here: keep them while d holds them. */
	char(*keep)[MAX_NAME + 1] = NULL;
	size_t cap = 0;

	dym_init(&d, name);
	for (size_t i = 0; i < cat->n_gpus; i++) {
		const struct catalog_gpu *g = &cat->gpus[i];
		if (!g->mig || (gpu && g != gpu))
			continue;
		for (size_t j = 0; j < g->mig->n_profiles; j++) {
			const char *p = g->mig->profiles[j].name;
			bool seen = false;
			if (resource_form) {
				catalog_profile_resource(p, res, sizeof(res));
				p = res;
			}
			for (size_t k = 0; k < n_names && !seen; k++)
				seen = !strcmp(keep[k], p);
			if (seen)
				continue;
			if (n_names == cap) {
				cap = cap ? cap * 2 : 64;
				keep = gs_xrealloc(keep, cap * sizeof(*keep));
			}
			snprintf(keep[n_names++], sizeof(*keep), "%s", p);
		}
	}
	for (size_t k = 0; k < n_names; k++)
		dym_offer(&d, keep[k]);
	dym_add_choices(&d, &names, gpu ? NULL : "gpushare catalog MODEL");
	strbuf_addstr(out, names.buf);
	strbuf_release(&names);
	free(keep);
}

void catalog_sanitize(const char *in, char *out, size_t size)
{
	size_t n = 0;
	bool blank = false;

	if (size == 0)
		return;
	for (; *in; in++) {
		char c = *in;
		if (c == ' ') {
			blank = n > 0; /* leading blanks vanish */
			continue;
		}
		if (!isalnum((unsigned char)c) && c != '-' && c != '_' && c != '.')
			continue;
		if (blank && n + 1 < size)
			out[n++] = '-';
		blank = false;
		if (n + 1 < size)
			out[n++] = c;
	}
	out[n] = '\0';
}

const char *catalog_family(int major, int minor)
{
	switch (major) {
	case 1:
		return "tesla";
	case 2:
		return "fermi";
	case 3:
		return "kepler";
	case 5:
		return "maxwell";
	case 6:
		return "pascal";
	case 7:
		return minor < 5 ? "volta" : "turing";
	case 8:
		return minor < 9 ? "ampere" : "ada-lovelace";
	case 9:
		return "hopper";
	case 10:
	case 12:
		return "blackwell";
	case 13:
		return "rubin";
	default:
		return "undefined";
	}
}

void catalog_profile_resource(const char *profile, char *out, size_t size)
{
	size_t n = 0;

	if (size == 0)
		return;
	for (; *profile && n + 1 < size; profile++)
		out[n++] = *profile == '+' ? '.' : *profile;
	out[n] = '\0';
}
