#include "engine/podvalidate.h"

#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/quantity.h"
#include "base/strbuf.h"
#include "base/wrapper.h"
#include "base/banned.h"

/*
 * Read from k8s.io/kubernetes v1.34.4: pkg/apis/core/validation/validation.go
 * (ValidatePodCreate, ValidatePodSpec, validateContainers,
 * validateInitContainers, validateEphemeralContainers,
 * validateResourceRequirements, ValidateResourceQuantityValue,
 * validateContainerResourceName, validatePodResourceName,
 * validatePodResourceConsistency, ValidatePodTemplateSpec),
 * pkg/apis/core/helper/helpers.go (the resource name sets),
 * pkg/apis/core/v1/defaults.go (SetDefaults_Pod, SetDefaults_ResourceList),
 * k8s.io/apimachinery v0.34.4 pkg/util/validation (IsQualifiedName,
 * IsDNS1123Subdomain, RegexError) and pkg/util/validation/field/errors.go
 * (ErrorBody, ToAggregate), pkg/api/errors (NewInvalid).
 */

#define HUGEPAGES "hugepages-"

/* ---- the report ---- */

void podvalidate_report_init(struct podvalidate_report *r)
{
	memset(r, 0, sizeof(*r));
}

void podvalidate_report_release(struct podvalidate_report *r)
{
	for (size_t i = 0; i < r->n; i++) {
		free(r->items[i].field);
		free(r->items[i].body);
	}
	free(r->items);
	free(r->kind);
	free(r->name);
	podvalidate_report_init(r);
}

struct ctx {
	const struct ydoc_stream *s;
	struct podvalidate_report *rep;
	struct gs_error *err;
	bool is_pod; /* a Pod: defaulted as SetDefaults_Pod does */
};

/* Where the value under key sits in the file (nothing without a stream). */
static struct ydoc_pos pos_of(const struct ctx *c, const json_t *obj, const char *key)
{
	struct ydoc_pos p = {0, 0};

	if (c->s && obj)
		(void)ydoc_stream_key_pos(c->s, obj, key, &p);
	return p;
}

/* The texts "FIELD: BODY" of e and of (field, body) are the same. */
static bool same_text(const struct podvalidate_error *e, const char *field, const char *body)
{
	size_t fa = strlen(e->field), fb = strlen(field);
	const char *a = e->field, *b = field;
	size_t la = fa + 2 + strlen(e->body), lb = fb + 2 + strlen(body);

	if (la != lb)
		return false;
	for (size_t i = 0; i < la; i++) {
		char ca = i < fa ? a[i] : i == fa ? ':' : i == fa + 1 ? ' ' : e->body[i - fa - 2];
		char cb = i < fb ? b[i] : i == fb ? ':' : i == fb + 1 ? ' ' : body[i - fb - 2];
		if (ca != cb)
			return false;
	}
	return true;
}

static void add(struct ctx *c, const json_t *container, struct ydoc_pos pos, const char *field,
		const char *fmt, ...) __attribute__((format(printf, 5, 6)));

/* One field.Error; a text seen before is dropped, as ToAggregate drops it. */
static void add(struct ctx *c, const json_t *container, struct ydoc_pos pos, const char *field,
		const char *fmt, ...)
{
	struct podvalidate_report *r = c->rep;
	struct strbuf body = STRBUF_INIT;
	va_list ap;

	va_start(ap, fmt);
	strbuf_vaddf(&body, fmt, ap);
	va_end(ap);
	for (size_t i = 0; i < r->n; i++) {
		if (same_text(&r->items[i], field, body.buf)) {
			strbuf_release(&body);
			return;
		}
	}
	if (r->n == r->cap) {
		r->cap = r->cap ? r->cap * 2 : 8;
		r->items = gs_xrealloc(r->items, r->cap * sizeof(*r->items));
	}
	r->items[r->n].field = gs_xstrdup(field);
	r->items[r->n].body = strbuf_detach(&body, NULL);
	r->items[r->n].container = container;
	r->items[r->n].pos = pos;
	r->n++;
}

/*
 * A string as Go's encoding/json writes it (the BadValue of a ResourceName
 * is rendered with json.Marshal): HTML characters escaped, invalid UTF-8 as
 * U+FFFD, U+2028 and U+2029 escaped.
 */
static void add_json_string(struct strbuf *sb, const char *s)
{
	static const char hex[] = "0123456789abcdef";
	const unsigned char *p = (const unsigned char *)s;

	strbuf_addch(sb, '"');
	while (*p) {
		unsigned char b = *p;

		if (b < 0x80) {
			switch (b) {
			case '"':
			case '\\':
				strbuf_addch(sb, '\\');
				strbuf_addch(sb, (char)b);
				break;
			case '\b':
				strbuf_addstr(sb, "\\b");
				break;
			case '\f':
				strbuf_addstr(sb, "\\f");
				break;
			case '\n':
				strbuf_addstr(sb, "\\n");
				break;
			case '\r':
				strbuf_addstr(sb, "\\r");
				break;
			case '\t':
				strbuf_addstr(sb, "\\t");
				break;
			default:
				if (b < 0x20 || b == '<' || b == '>' || b == '&') {
					strbuf_addstr(sb, "\\u00");
					strbuf_addch(sb, hex[b >> 4]);
					strbuf_addch(sb, hex[b & 15]);
				} else {
					strbuf_addch(sb, (char)b);
				}
			}
			p++;
			continue;
		}
		/* a UTF-8 sequence: copied when valid, else U+FFFD for its first byte */
		size_t n = b >= 0xf0 ? 4 : b >= 0xe0 ? 3 : b >= 0xc0 ? 2 : 0;
		unsigned long cp = n == 4 ? b & 7u : n == 3 ? b & 15u : b & 31u;
		bool ok = n >= 2 && b >= 0xc2 && b <= 0xf4;
		for (size_t i = 1; ok && i < n; i++) {
			ok = (p[i] & 0xc0) == 0x80;
			cp = cp << 6 | (p[i] & 0x3fu);
		}
		if (ok)
			ok = !(n == 3 && (cp < 0x800 || (cp >= 0xd800 && cp <= 0xdfff))) &&
			     !(n == 4 && (cp < 0x10000 || cp > 0x10ffff));
		if (!ok) {
			strbuf_addstr(sb, "\\ufffd");
			p++;
			continue;
		}
		if (cp == 0x2028 || cp == 0x2029)
			strbuf_addstr(sb, cp == 0x2028 ? "\\u2028" : "\\u2029");
		else
			strbuf_add(sb, (const char *)p, n);
		p += n;
	}
	strbuf_addch(sb, '"');
}

/* ---- names (apimachinery pkg/util/validation, core/helper) ---- */

#define QNAME_FMT "([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]"
#define QNAME_MSG                                                                                  \
	"must consist of alphanumeric characters, '-', '_' or '.', and must start and end with "   \
	"an alphanumeric character"
#define QNAME_REGEX_ERROR                                                                          \
	QNAME_MSG " (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is "   \
		  "'" QNAME_FMT "')"
#define DNS1123_SUBDOMAIN_FMT "[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*"
#define DNS1123_SUBDOMAIN_REGEX_ERROR                                                              \
	"a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' "  \
	"or '.', and must start and end with an alphanumeric character (e.g. 'example.com', "      \
	"regex used for validation is '" DNS1123_SUBDOMAIN_FMT "')"

static bool is_alnum(char ch)
{
	return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9');
}

static bool is_lower_alnum(char ch)
{
	return (ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9');
}

/* ^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$ */
static bool qname_matches(const char *s, size_t n)
{
	if (!n || !is_alnum(s[0]) || !is_alnum(s[n - 1]))
		return false;
	for (size_t i = 1; i + 1 < n; i++)
		if (!is_alnum(s[i]) && s[i] != '-' && s[i] != '_' && s[i] != '.')
			return false;
	return true;
}

/* ^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$ */
static bool dns1123_subdomain_matches(const char *s, size_t n)
{
	size_t start = 0;

	for (size_t i = 0; i <= n; i++) {
		if (i < n && s[i] != '.') {
			if (!is_lower_alnum(s[i]) && s[i] != '-')
				return false;
			continue;
		}
		/* a label s[start, i) */
		if (i == start || !is_lower_alnum(s[start]) || !is_lower_alnum(s[i - 1]))
			return false;
		start = i + 1;
	}
	return true;
}

struct msgs {
	const char *m[4];
	size_t n;
	char *owned[4];
};

static void msgs_release(struct msgs *m)
{
	for (size_t i = 0; i < m->n; i++)
		free(m->owned[i]);
}

static void msgs_add(struct msgs *m, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void msgs_add(struct msgs *m, const char *fmt, ...)
{
	struct strbuf sb = STRBUF_INIT;
	va_list ap;

	va_start(ap, fmt);
	strbuf_vaddf(&sb, fmt, ap);
	va_end(ap);
	m->owned[m->n] = strbuf_detach(&sb, NULL);
	m->m[m->n] = m->owned[m->n];
	m->n++;
}

/* validation.IsQualifiedName: its messages, in its order. */
static void is_qualified_name(const char *value, struct msgs *out)
{
	const char *slash = strchr(value, '/');
	const char *name = value;

	out->n = 0;
	if (slash) {
		if (strchr(slash + 1, '/')) {
			msgs_add(out, "a qualified name " QNAME_REGEX_ERROR
				      " with an optional DNS subdomain prefix and '/' (e.g. "
				      "'example.com/MyName')");
			return;
		}
		size_t plen = (size_t)(slash - value);
		if (!plen) {
			msgs_add(out, "prefix part must be non-empty");
		} else {
			if (plen > 253)
				msgs_add(out, "prefix part must be no more than 253 characters");
			if (!dns1123_subdomain_matches(value, plen))
				msgs_add(out, "prefix part " DNS1123_SUBDOMAIN_REGEX_ERROR);
		}
		name = slash + 1;
	}
	size_t n = strlen(name);
	if (!n)
		msgs_add(out, "name part must be non-empty");
	else if (n > 63)
		msgs_add(out, "name part must be no more than 63 characters");
	if (!qname_matches(name, n))
		msgs_add(out, "name part " QNAME_REGEX_ERROR);
}

static bool in_set(const char *s, const char *const *set)
{
	for (; *set; set++)
		if (!strcmp(s, *set))
			return true;
	return false;
}

static bool has_prefix(const char *s, const char *prefix)
{
	return !strncmp(s, prefix, strlen(prefix));
}

static bool is_hugepages(const char *name)
{
	return has_prefix(name, HUGEPAGES);
}

/* helper.IsStandardResourceName */
static bool is_standard_resource(const char *name)
{
	static const char *const standard[] = {"cpu",
					       "memory",
					       "ephemeral-storage",
					       "requests.cpu",
					       "requests.memory",
					       "requests.ephemeral-storage",
					       "limits.cpu",
					       "limits.memory",
					       "limits.ephemeral-storage",
					       "pods",
					       "resourcequotas",
					       "services",
					       "replicationcontrollers",
					       "secrets",
					       "configmaps",
					       "persistentvolumeclaims",
					       "storage",
					       "requests.storage",
					       "services.nodeports",
					       "services.loadbalancers",
					       NULL};

	return in_set(name, standard) || is_hugepages(name) ||
	       has_prefix(name, "requests." HUGEPAGES);
}

/* helper.IsStandardContainerResourceName */
static bool is_standard_container_resource(const char *name)
{
	static const char *const standard[] = {"cpu", "memory", "ephemeral-storage", NULL};

	return in_set(name, standard) || is_hugepages(name);
}

/* helper.IsNativeResource: unqualified, or in *kubernetes.io/ */
static bool is_native(const char *name)
{
	return !strchr(name, '/') || strstr(name, "kubernetes.io/");
}

/*
 * helper.IsExtendedResourceName: not native, not "requests.*", and a
 * qualified name once "requests." is put before it (which makes the prefix
 * 9 characters longer).
 */
static bool is_extended(const char *name)
{
	const char *slash = strchr(name, '/');
	size_t plen;

	if (is_native(name) || has_prefix(name, "requests."))
		return false;
	plen = (size_t)(slash - name); /* not native: there is a slash */
	if (strchr(slash + 1, '/') || !plen || plen + 9 > 253 ||
	    !dns1123_subdomain_matches(name, plen))
		return false;
	size_t n = strlen(slash + 1);
	return n && n <= 63 && qname_matches(slash + 1, n);
}

/* helper.IsOvercommitAllowed */
static bool overcommit_allowed(const char *name)
{
	return is_native(name) && !is_hugepages(name);
}

/* helper.IsIntegerResourceName */
static bool is_integer_resource(const char *name)
{
	static const char *const integer[] = {"pods",
					      "resourcequotas",
					      "services",
					      "replicationcontrollers",
					      "secrets",
					      "configmaps",
					      "persistentvolumeclaims",
					      "services.nodeports",
					      "services.loadbalancers",
					      NULL};

	/* those names have no '/', an extended one has */
	return strchr(name, '/') ? is_extended(name) : in_set(name, integer);
}

/* ---- resource lists, as the apiserver holds them after defaulting ---- */

struct res {
	const char *name;    /* borrowed key */
	struct quantity raw; /* as decoded */
	struct quantity q;   /* RoundUp(-3), as validated */
	const json_t *list;  /* the mapping it is written in, for its position */
	const char *key;     /* its key there; NULL: the list itself */
};

struct rlist {
	bool set; /* a non-nil map: present and not null */
	struct res *items;
	size_t n;
	size_t cap;
};

struct requirements {
	const json_t *resources; /* the mapping, NULL when absent */
	struct rlist limits, requests;
	bool claims_set;
	bool sidecar; /* an init container with restartPolicy Always */
};

static void requirements_release(struct requirements *r)
{
	free(r->limits.items);
	free(r->requests.items);
}

static struct res *rlist_find(const struct rlist *l, const char *name)
{
	for (size_t i = 0; i < l->n; i++)
		if (!strcmp(l->items[i].name, name))
			return &l->items[i];
	return NULL;
}

static struct res *rlist_push(struct rlist *l, const struct res *r)
{
	if (l->n == l->cap) {
		l->cap = l->cap ? l->cap * 2 : 4;
		l->items = gs_xrealloc(l->items, l->cap * sizeof(*l->items));
	}
	l->items[l->n] = *r;
	l->set = true;
	return &l->items[l->n++];
}

static const char *qstr(const struct quantity *q, char *buf)
{
	return quantity_string(q, buf, QUANTITY_STR_MAX);
}

/* The quantity under key, as Quantity.UnmarshalJSON reads it (an integer past int64 exactly). */
static int read_quantity(struct ctx *c, const json_t *list, const char *key, const char *fld,
			 const char *which, struct quantity *out)
{
	const json_t *v = json_object_get(list, key);
	const char *digits;
	struct gs_error e;
	int rc;

	if (!ydoc_stream_exact_int(c->s, v, &digits))
		rc = quantity_from_json(out, v, &e);
	else if (digits)
		rc = quantity_parse(out, digits, strlen(digits), &e);
	else {
		gs_error_set(&e, "quantity is longer than %d characters", QUANTITY_MAX_LEN);
		rc = -1;
	}
	if (rc) {
		ydoc_error_at_key(c->s, list, key, c->err, "%s.%s[%s]: %s", fld, which, key, e.msg);
		return -1;
	}
	return 0;
}

static int read_list(struct ctx *c, const json_t *resources, const char *which, const char *fld,
		     struct rlist *out)
{
	const json_t *list = json_object_get(resources, which);
	const char *key;
	json_t *v;

	memset(out, 0, sizeof(*out));
	if (!json_is_object(list))
		return 0;
	out->set = true;
	out->cap = json_object_size(list);
	out->items = out->cap ? gs_xmalloc(out->cap * sizeof(*out->items)) : NULL;
	json_object_foreach ((json_t *)list, key, v) {
		struct res *r = &out->items[out->n]; /* room for every key */

		if (read_quantity(c, list, key, fld, which, &r->raw))
			return -1;
		r->name = key;
		r->list = list;
		r->key = key;
		r->q = r->raw;
		quantity_round_up_milli(&r->q); /* SetDefaults_ResourceList */
		out->n++;
	}
	return 0;
}

/* The requirements of one container (or of the pod), defaulted. */
static int read_requirements(struct ctx *c, const json_t *owner, const char *fld, bool copy_limits,
			     struct requirements *out)
{
	const json_t *res = json_object_get(owner, "resources");
	const json_t *claims, *policy = json_object_get(owner, "restartPolicy");

	memset(out, 0, sizeof(*out));
	out->sidecar = json_is_string(policy) && !strcmp(json_string_value(policy), "Always");
	if (!json_is_object(res))
		return 0;
	out->resources = res;
	claims = json_object_get(res, "claims");
	out->claims_set = claims && !json_is_null(claims);
	if (read_list(c, res, "limits", fld, &out->limits) ||
	    read_list(c, res, "requests", fld, &out->requests))
		return -1;
	if (!copy_limits || !out->limits.set)
		return 0;
	/* SetDefaults_Pod: a limit without a request gives its value to the request */
	out->requests.set = true;
	for (size_t i = 0, n = out->limits.n; i < n; i++)
		if (!rlist_find(&out->requests, out->limits.items[i].name))
			rlist_push(&out->requests, &out->limits.items[i]);
	return 0;
}

/* ---- sums over containers (component-helpers resource, v0.34.4) ---- */

/* addResourceList(list, src) on the raw or the rounded values. */
static int sum_into(struct rlist *list, const struct rlist *src, bool raw, struct gs_error *err)
{
	for (size_t i = 0; i < src->n; i++) {
		const struct res *r = &src->items[i];
		struct res *have = rlist_find(list, r->name);

		if (!have) {
			rlist_push(list, r);
			continue;
		}
		struct quantity *a = raw ? &have->raw : &have->q;
		if (quantity_add(a, a, raw ? &r->raw : &r->q, err) < 0)
			return -1;
	}
	return 0;
}

/* maxResourceList(list, src). */
static void max_into(struct rlist *list, const struct rlist *src, bool raw)
{
	for (size_t i = 0; i < src->n; i++) {
		const struct res *r = &src->items[i];
		struct res *have = rlist_find(list, r->name);

		if (!have)
			rlist_push(list, r);
		else if (quantity_cmp(raw ? &r->raw : &r->q, raw ? &have->raw : &have->q) > 0)
			*have = *r;
	}
}

/*
 * AggregateContainerRequests / AggregateContainerLimits: the containers'
 * sum, or more where an init container (with the sidecars started before
 * it) asks more.
 */
static int aggregate(const struct requirements *ctr, size_t n_ctr, const struct requirements *init,
		     size_t n_init, bool limits, bool raw, struct rlist *out, struct gs_error *err)
{
	struct rlist sidecars = {0}, inits = {0}, tmp;
	int rc = -1;

	memset(out, 0, sizeof(*out));
	for (size_t i = 0; i < n_ctr; i++)
		if (sum_into(out, limits ? &ctr[i].limits : &ctr[i].requests, raw, err) < 0)
			goto fail;
	for (size_t i = 0; i < n_init; i++) {
		const struct rlist *l = limits ? &init[i].limits : &init[i].requests;

		if (init[i].sidecar) {
			if (sum_into(out, l, raw, err) < 0 || sum_into(&sidecars, l, raw, err) < 0)
				goto fail;
			max_into(&inits, &sidecars, raw);
			continue;
		}
		memset(&tmp, 0, sizeof(tmp));
		if (sum_into(&tmp, l, raw, err) < 0 || sum_into(&tmp, &sidecars, raw, err) < 0) {
			free(tmp.items);
			goto fail;
		}
		max_into(&inits, &tmp, raw);
		free(tmp.items);
	}
	max_into(out, &inits, raw);
	rc = 0;
fail:
	free(sidecars.items);
	free(inits.items);
	if (rc < 0) {
		free(out->items);
		memset(out, 0, sizeof(*out));
	}
	return rc;
}

/* resourcehelper.IsSupportedPodLevelResource */
static bool pod_level_supported(const char *name)
{
	return !strcmp(name, "cpu") || !strcmp(name, "memory") || !strncmp(name, "hugepages-", 10);
}

/*
 * SetDefaults_Pod with PodLevelResources (on by default in v1.34), on the
 * raw values, before the lists are rounded: defaultHugePagePodLimits, then
 * defaultPodRequests.
 */
static int default_pod_level(struct requirements *pod, const struct requirements *ctr, size_t n_ctr,
			     const struct requirements *init, size_t n_init, struct gs_error *err)
{
	struct rlist agg;
	size_t first_new;

	if (!pod->resources)
		return 0;
	first_new = pod->limits.n;
	if (pod->limits.n || pod->requests.n) {
		if (aggregate(ctr, n_ctr, init, n_init, true, true, &agg, err) < 0)
			return -1;
		for (size_t i = 0; i < agg.n; i++) {
			struct res r = agg.items[i];
			if (!pod_level_supported(r.name) || strncmp(r.name, "hugepages-", 10) ||
			    rlist_find(&pod->requests, r.name) || rlist_find(&pod->limits, r.name))
				continue;
			r.list = pod->resources;
			r.key = "limits";
			rlist_push(&pod->limits, &r);
		}
		free(agg.items);
	}
	for (size_t i = first_new; i < pod->limits.n; i++) {
		pod->limits.items[i].q = pod->limits.items[i].raw;
		quantity_round_up_milli(&pod->limits.items[i].q);
	}
	if (!pod->limits.n)
		return 0;
	first_new = pod->requests.n;
	if (aggregate(ctr, n_ctr, init, n_init, false, true, &agg, err) < 0)
		return -1;
	for (size_t i = 0; i < agg.n; i++) {
		struct res r = agg.items[i];
		if (rlist_find(&pod->requests, r.name) || !pod_level_supported(r.name) ||
		    !overcommit_allowed(r.name))
			continue;
		r.list = pod->resources;
		r.key = "requests";
		rlist_push(&pod->requests, &r);
	}
	free(agg.items);
	for (size_t i = 0, n = pod->limits.n; i < n; i++)
		if (!rlist_find(&pod->requests, pod->limits.items[i].name) &&
		    pod_level_supported(pod->limits.items[i].name))
			rlist_push(&pod->requests, &pod->limits.items[i]);
	for (size_t i = first_new; i < pod->requests.n; i++) {
		pod->requests.items[i].q = pod->requests.items[i].raw;
		quantity_round_up_milli(&pod->requests.items[i].q);
	}
	return 0;
}

/* ---- the rules ---- */

/*
 * The field of an error about one resource, "FLD.WHICH[NAME]", made only
 * when a first error needs it: the rules run for every resource of every
 * container, errors are rare.
 */
struct res_field {
	const char *fld, *which, *name;
	const struct res *r;
	char *text;
};

static const char *res_field(struct res_field *f)
{
	if (!f->text)
		f->text = gs_xasprintf("%s.%s[%s]", f->fld, f->which, f->name);
	return f->text;
}

/* A name valid for IsQualifiedName, without building its messages. */
static bool qualified_ok(const char *value)
{
	const char *slash = strchr(value, '/'), *name = value;

	if (slash) {
		size_t plen = (size_t)(slash - value);
		if (strchr(slash + 1, '/') || !plen || plen > 253 ||
		    !dns1123_subdomain_matches(value, plen))
			return false;
		name = slash + 1;
	}
	size_t n = strlen(name);
	return n && n <= 63 && qname_matches(name, n);
}

/* validateContainerResourceName has nothing to say (the common case, no allocation). */
static bool container_name_ok(const char *name)
{
	if (!strchr(name, '/'))
		return is_standard_container_resource(name) && qualified_ok(name);
	return qualified_ok(name) && (is_native(name) || is_extended(name));
}

/* validateResourceName + validateContainerResourceName, or validatePodResourceName. */
static void name_rules(struct ctx *c, const json_t *container, struct res_field *f, bool pod_level)
{
	const char *name = f->name;
	struct strbuf value = STRBUF_INIT;
	struct ydoc_pos pos;
	struct msgs m;
	bool slash = strchr(name, '/') != NULL;

	if (!pod_level && container_name_ok(name))
		return;
	pos = pos_of(c, f->r->list, f->r->key);
	add_json_string(&value, name);
	is_qualified_name(name, &m);
	for (size_t i = 0; i < m.n; i++)
		add(c, container, pos, res_field(f), "Invalid value: %s: %s", value.buf, m.m[i]);
	if (!m.n && !slash && !is_standard_resource(name))
		add(c, container, pos, res_field(f),
		    "Invalid value: %s: must be a standard resource type or fully qualified",
		    value.buf);
	if (pod_level) {
		/* only when the name itself is valid */
		if (!m.n && (slash || is_standard_resource(name)) && strcmp(name, "cpu") &&
		    strcmp(name, "memory") && !is_hugepages(name))
			add(c, container, pos, res_field(f),
			    "Unsupported value: %s: supported values: \"cpu\", \"hugepages-\", "
			    "\"memory\"",
			    value.buf);
	} else if (!slash) {
		if (!is_standard_container_resource(name))
			add(c, container, pos, res_field(f),
			    "Invalid value: %s: must be a standard resource for containers",
			    value.buf);
	} else if (!is_native(name) && !is_extended(name)) {
		add(c, container, pos, res_field(f),
		    "Invalid value: %s: doesn't follow extended resource name standard", value.buf);
	}
	msgs_release(&m);
	strbuf_release(&value);
}

/* helper.IsHugePageResourceValueDivisible (Go's int64 arithmetic). */
static bool hugepage_divisible(const char *name, const struct quantity *q)
{
	const char *size = name + strlen(HUGEPAGES);
	struct quantity page;
	struct gs_error e;
	int64_t pv;

	if (quantity_parse(&page, size, strlen(size), &e) < 0)
		return false;
	if (quantity_sign(&page) <= 0 || quantity_go_milli_value(&page) % 1000 != 0)
		return false;
	pv = quantity_go_value(&page);
	if (pv == 0) /* upstream divides by zero here */
		return false;
	if (pv == -1)
		return true;
	return quantity_go_value(q) % pv == 0;
}

/* ValidateResourceQuantityValue, then validateResourceQuantityHugePageValue. */
static void value_rules(struct ctx *c, const json_t *container, struct res_field *f)
{
	const struct res *r = f->r;
	bool negative = quantity_sign(&r->q) < 0;
	bool fraction = is_integer_resource(r->name) && !quantity_is_k8s_integer(&r->q);
	bool page = is_hugepages(r->name) && !hugepage_divisible(r->name, &r->q);
	char qs[QUANTITY_STR_MAX];
	struct ydoc_pos pos;

	if (!negative && !fraction && !page)
		return;
	pos = pos_of(c, r->list, r->key);
	qstr(&r->q, qs);
	if (negative)
		add(c, container, pos, res_field(f),
		    "Invalid value: \"%s\": must be greater than or equal to 0", qs);
	if (fraction)
		add(c, container, pos, res_field(f), "Invalid value: \"%s\": must be an integer",
		    qs);
	if (page)
		add(c, container, pos, res_field(f),
		    "Invalid value: \"%s\": %s is not positive integer multiple of %s", qs, qs,
		    r->name);
}

static bool is_cpu_or_memory(const char *name)
{
	return !strcmp(name, "cpu") || !strcmp(name, "memory");
}

/* One resource of a list: its name and value (field and position made only for an error). */
static void resource_rules(struct ctx *c, const json_t *container, const char *fld,
			   const char *which, const struct res *r, bool pod_level)
{
	struct res_field f = {fld, which, r->name, r, NULL};

	name_rules(c, container, &f, pod_level);
	value_rules(c, container, &f);
	free(f.text);
}

/* validateResourceRequirements: every limit, then every request, then hugepages' need. */
static void requirements_rules(struct ctx *c, const json_t *container, const char *fld,
			       const struct requirements *rq, bool pod_level)
{
	bool cpu_or_memory = false, hugepages = false;
	char qs[QUANTITY_STR_MAX], ls[QUANTITY_STR_MAX];

	for (size_t i = 0; i < rq->limits.n; i++) {
		const struct res *r = &rq->limits.items[i];

		resource_rules(c, container, fld, "limits", r, pod_level);
		hugepages |= is_hugepages(r->name);
		cpu_or_memory |= is_cpu_or_memory(r->name);
	}
	for (size_t i = 0; i < rq->requests.n; i++) {
		const struct res *r = &rq->requests.items[i];
		const struct res *lim = rlist_find(&rq->limits, r->name);
		char *path = NULL;

		resource_rules(c, container, fld, "requests", r, pod_level);
		if (lim) {
			int cmp = quantity_cmp(&r->q, &lim->q);
			if (cmp != 0 && !overcommit_allowed(r->name)) {
				path = gs_xasprintf("%s.requests", fld);
				add(c, container, pos_of(c, r->list, r->key), path,
				    "Invalid value: \"%s\": must be equal to %s limit of %s",
				    qstr(&r->q, qs), r->name, qstr(&lim->q, ls));
			} else if (cmp > 0) {
				path = gs_xasprintf("%s.requests", fld);
				add(c, container, pos_of(c, r->list, r->key), path,
				    "Invalid value: \"%s\": must be less than or equal to %s limit "
				    "of %s",
				    qstr(&r->q, qs), r->name, qstr(&lim->q, ls));
			}
		} else if (!overcommit_allowed(r->name)) {
			path = gs_xasprintf("%s.limits", fld);
			add(c, container, pos_of(c, r->list, r->key), path,
			    "Required value: Limit must be set for non overcommitable resources");
		}
		free(path);
		hugepages |= is_hugepages(r->name);
		cpu_or_memory |= is_cpu_or_memory(r->name);
	}
	if (hugepages && !cpu_or_memory) {
		struct ydoc_pos pos = {0, 0};
		if (c->s)
			(void)ydoc_stream_pos(c->s, rq->resources, &pos);
		add(c, container, pos, fld, "Forbidden: HugePages require cpu or memory");
	}
}

/* "SPEC.LIST[I].resources", made for every container: without printf. */
static char *container_fld(const char *spec_path, const char *list, size_t i)
{
	struct strbuf sb = STRBUF_INIT;
	char num[24];
	size_t k = sizeof(num) - 1;

	num[k] = '\0';
	do {
		num[--k] = (char)('0' + i % 10);
		i /= 10;
	} while (i);
	strbuf_addstr(&sb, spec_path);
	strbuf_addch(&sb, '.');
	strbuf_addstr(&sb, list);
	strbuf_addch(&sb, '[');
	strbuf_addstr(&sb, num + k);
	strbuf_addstr(&sb, "].resources");
	return strbuf_detach(&sb, NULL);
}

/* Every container's requirements of spec[list], defaulted; *n of them. */
static int read_containers(struct ctx *c, const json_t *spec, const char *spec_path,
			   const char *list, struct requirements **out, size_t *n)
{
	const json_t *arr = json_object_get(spec, list);
	const json_t *ctr;
	size_t i;

	*n = json_array_size(arr);
	*out = gs_xcalloc(*n + 1, sizeof(**out));
	json_array_foreach ((json_t *)arr, i, ctr) {
		char *fld = container_fld(spec_path, list, i);
		/* SetDefaults_Pod copies limits to requests in containers and init containers */
		int rc = json_is_object(ctr) ? read_requirements(c, ctr, fld, c->is_pod, &(*out)[i])
					     : 0;

		free(fld);
		if (rc)
			return -1;
	}
	return 0;
}

static void containers_free(struct requirements *r, size_t n)
{
	for (size_t i = 0; r && i < n; i++)
		requirements_release(&r[i]);
	free(r);
}

static void containers_rules(struct ctx *c, const json_t *spec, const char *spec_path,
			     const char *list, const struct requirements *rq)
{
	const json_t *arr = json_object_get(spec, list);

	for (size_t i = 0; i < json_array_size(arr); i++) {
		char *fld = container_fld(spec_path, list, i);

		requirements_rules(c, json_array_get(arr, i), fld, &rq[i], false);
		free(fld);
	}
}

/* validateEphemeralContainers' resource rules: the common ones, then the allow list. */
static int ephemeral_rules(struct ctx *c, const json_t *spec, const char *spec_path)
{
	const json_t *arr = json_object_get(spec, "ephemeralContainers");
	const json_t *ctr;
	size_t i;

	json_array_foreach ((json_t *)arr, i, ctr) {
		struct requirements rq;
		char *fld;

		if (!json_is_object(ctr))
			continue;
		fld = gs_xasprintf("%s.ephemeralContainers[%zu].resources", spec_path, i);
		/* ephemeral containers are not defaulted */
		if (read_requirements(c, ctr, fld, false, &rq)) {
			requirements_release(&rq);
			free(fld);
			return -1;
		}
		requirements_rules(c, ctr, fld, &rq, false);
		/* validateFieldAllowList: Resources is not a field of an ephemeral container */
		if (rq.limits.set || rq.requests.set || rq.claims_set)
			add(c, ctr, pos_of(c, ctr, "resources"), fld,
			    "Forbidden: cannot be set for an Ephemeral Container");
		requirements_release(&rq);
		free(fld);
	}
	return 0;
}

/* validatePodResources: spec.resources, when set, then validatePodResourceConsistency. */
static int pod_resources_rules(struct ctx *c, const json_t *spec, const char *fld,
			       const struct requirements *pod, const struct requirements *ctr,
			       size_t n_ctr, const struct requirements *init, size_t n_init)
{
	char qs[QUANTITY_STR_MAX], as[QUANTITY_STR_MAX];
	struct rlist agg;

	if (!pod->resources)
		return 0;
	if (pod->claims_set) {
		char *claims = gs_xasprintf("%s.claims", fld);
		add(c, NULL, pos_of(c, pod->resources, "claims"), claims,
		    "Forbidden: claims cannot be set for Resources at pod-level");
		free(claims);
	}
	requirements_rules(c, NULL, fld, pod, true);

	/* pod-level requests at least the containers' */
	if (aggregate(ctr, n_ctr, init, n_init, false, false, &agg, c->err) < 0)
		return -1;
	for (size_t i = 0; i < agg.n; i++) {
		const struct res *p = rlist_find(&pod->requests, agg.items[i].name);

		if (!p || quantity_cmp(&agg.items[i].q, &p->q) <= 0)
			continue;
		char *field = gs_xasprintf("%s.requests[%s]", fld, p->name);
		add(c, NULL, pos_of(c, p->list, p->key), field,
		    "Invalid value: \"%s\": must be greater than or equal to aggregate container "
		    "requests of %s",
		    qstr(&p->q, qs), qstr(&agg.items[i].q, as));
		free(field);
	}
	free(agg.items);
	/* pod-level hugepage limits at least the containers' */
	if (aggregate(ctr, n_ctr, init, n_init, true, false, &agg, c->err) < 0)
		return -1;
	for (size_t i = 0; i < agg.n; i++) {
		const struct res *p = rlist_find(&pod->limits, agg.items[i].name);

		if (!is_hugepages(agg.items[i].name) || !p ||
		    quantity_cmp(&agg.items[i].q, &p->q) <= 0)
			continue;
		char *field = gs_xasprintf("%s.limits[%s]", fld, p->name);
		add(c, NULL, pos_of(c, p->list, p->key), field,
		    "Invalid value: \"%s\": must be greater than or equal to aggregate container "
		    "limits of %s",
		    qstr(&p->q, qs), qstr(&agg.items[i].q, as));
		free(field);
	}
	free(agg.items);
	/* no container limit above the pod's */
	const json_t *arr = json_object_get(spec, "containers");
	for (size_t i = 0; i < n_ctr; i++) {
		for (size_t k = 0; k < ctr[i].limits.n; k++) {
			const struct res *cl = &ctr[i].limits.items[k];
			const struct res *pl = rlist_find(&pod->limits, cl->name);

			if (!pl || quantity_cmp(&cl->q, &pl->q) <= 0)
				continue;
			char *field =
				gs_xasprintf("%s.containers[%zu][%s].limits", fld, i, cl->name);
			add(c, json_array_get(arr, i), pos_of(c, cl->list, cl->key), field,
			    "Invalid value: \"%s\": must be less than or equal to pod limits of %s",
			    qstr(&cl->q, qs), qstr(&pl->q, as));
			free(field);
		}
	}
	return 0;
}

static bool has_items(const json_t *spec, const char *key)
{
	return json_array_size(json_object_get(spec, key)) > 0;
}

/* ValidatePodSpec's resource rules, then the create or template rule on ephemeral containers. */
static int spec_rules(struct ctx *c, const json_t *spec, const char *spec_path)
{
	struct requirements *ctr = NULL, *init = NULL, pod = {0};
	size_t n_ctr = 0, n_init = 0;
	char *fld = gs_xasprintf("%s.resources", spec_path);
	int rc = -1;

	if (read_containers(c, spec, spec_path, "containers", &ctr, &n_ctr) ||
	    read_containers(c, spec, spec_path, "initContainers", &init, &n_init) ||
	    (json_is_object(json_object_get(spec, "resources")) &&
	     read_requirements(c, spec, fld, false, &pod)) ||
	    (c->is_pod && default_pod_level(&pod, ctr, n_ctr, init, n_init, c->err) < 0))
		goto out;
	containers_rules(c, spec, spec_path, "containers", ctr);
	containers_rules(c, spec, spec_path, "initContainers", init);
	if (ephemeral_rules(c, spec, spec_path) < 0 ||
	    pod_resources_rules(c, spec, fld, &pod, ctr, n_ctr, init, n_init) < 0)
		goto out;
	if (has_items(spec, "ephemeralContainers")) {
		char *field = gs_xasprintf("%s.ephemeralContainers", spec_path);
		add(c, NULL, pos_of(c, spec, "ephemeralContainers"), field,
		    c->is_pod ? "Forbidden: cannot be set on create"
			      : "Forbidden: ephemeral containers not allowed in pod template");
		free(field);
	}
	rc = 0;
out:
	containers_free(ctr, n_ctr);
	containers_free(init, n_init);
	requirements_release(&pod);
	free(fld);
	return rc;
}

/* ---- objects ---- */

static const struct kind {
	const char *kind;
	const char *group_kind; /* schema.GroupKind.String() */
	const char *spec[6];	/* the keys down to the pod spec */
} kinds[] = {
	{"Pod", "Pod", {"spec", NULL}},
	{"Deployment", "Deployment.apps", {"spec", "template", "spec", NULL}},
	{"ReplicaSet", "ReplicaSet.apps", {"spec", "template", "spec", NULL}},
	{"StatefulSet", "StatefulSet.apps", {"spec", "template", "spec", NULL}},
	{"DaemonSet", "DaemonSet.apps", {"spec", "template", "spec", NULL}},
	{"Job", "Job.batch", {"spec", "template", "spec", NULL}},
	{"CronJob", "CronJob.batch", {"spec", "jobTemplate", "spec", "template", "spec", NULL}},
	{"ReplicationController", "ReplicationController", {"spec", "template", "spec", NULL}},
	{"PodTemplate", "PodTemplate", {"template", "spec", NULL}},
};

int podvalidate_object(const json_t *obj, const char *kind, const struct ydoc_stream *s,
		       struct podvalidate_report *out, struct gs_error *err)
{
	const json_t *kv = json_object_get(obj, "kind");
	const struct kind *k = NULL;
	struct ctx c = {s, out, err, false};
	struct strbuf path = STRBUF_INIT;
	const json_t *spec = obj;
	int rc = 0;

	podvalidate_report_init(out);
	if (json_is_string(kv) && *json_string_value(kv))
		kind = json_string_value(kv);
	for (size_t i = 0; kind && i < sizeof(kinds) / sizeof(kinds[0]); i++)
		if (!strcmp(kind, kinds[i].kind))
			k = &kinds[i];
	if (!k || !json_is_object(obj))
		return 0;
	for (const char *const *key = k->spec; *key && spec; key++) {
		spec = json_object_get(spec, *key);
		if (!json_is_object(spec))
			spec = NULL;
		strbuf_addf(&path, "%s%s", path.len ? "." : "", *key);
	}
	const json_t *name = json_object_get(json_object_get(obj, "metadata"), "name");
	out->kind = gs_xstrdup(k->group_kind);
	out->name = gs_xstrdup(json_is_string(name) ? json_string_value(name) : "");
	c.is_pod = !strcmp(k->kind, "Pod");
	if (spec && spec_rules(&c, spec, path.buf) < 0) {
		podvalidate_report_release(out);
		rc = -1;
	}
	strbuf_release(&path);
	return rc;
}

/* strconv.Quote, for the object's name in the message (%q). */
static void add_go_quoted(struct strbuf *sb, const char *s)
{
	static const char hex[] = "0123456789abcdef";

	strbuf_addch(sb, '"');
	for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
		switch (*p) {
		case '"':
		case '\\':
			strbuf_addch(sb, '\\');
			strbuf_addch(sb, (char)*p);
			continue;
		case '\a':
			strbuf_addstr(sb, "\\a");
			continue;
		case '\b':
			strbuf_addstr(sb, "\\b");
			continue;
		case '\f':
			strbuf_addstr(sb, "\\f");
			continue;
		case '\n':
			strbuf_addstr(sb, "\\n");
			continue;
		case '\r':
			strbuf_addstr(sb, "\\r");
			continue;
		case '\t':
			strbuf_addstr(sb, "\\t");
			continue;
		case '\v':
			strbuf_addstr(sb, "\\v");
			continue;
		default:
			if (*p < 0x20 || *p == 0x7f) {
				strbuf_addstr(sb, "\\x");
				strbuf_addch(sb, hex[*p >> 4]);
				strbuf_addch(sb, hex[*p & 15]);
			} else {
				strbuf_addch(sb, (char)*p);
			}
		}
	}
	strbuf_addch(sb, '"');
}

char *podvalidate_message(const struct podvalidate_report *r)
{
	struct strbuf sb = STRBUF_INIT;

	if (!r->n)
		return NULL;
	strbuf_addf(&sb, "%s ", r->kind);
	add_go_quoted(&sb, r->name);
	strbuf_addf(&sb, " is invalid: %s", r->n > 1 ? "[" : "");
	for (size_t i = 0; i < r->n; i++)
		strbuf_addf(&sb, "%s%s: %s", i ? ", " : "", r->items[i].field, r->items[i].body);
	if (r->n > 1)
		strbuf_addch(&sb, ']');
	return strbuf_detach(&sb, NULL);
}

int podvalidate_refusal(const json_t *obj, const struct ydoc_stream *s, char **message,
			struct gs_error *err)
{
	struct podvalidate_report r;

	*message = NULL;
	if (podvalidate_object(obj, NULL, s, &r, err) < 0)
		return -1;
	*message = podvalidate_message(&r);
	podvalidate_report_release(&r);
	return 0;
}
