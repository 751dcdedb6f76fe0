#include "engine/check.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/escape.h"
#include "engine/podvalidate.h"
#include "model/quantity.h"
#include "base/readfile.h"
#include "base/strbuf.h"
#include "base/banned.h"

#define GPU "nvidia.com/gpu"
/*
 * kubectl flattens a List item that is a List again, to any depth
 * (cli-runtime resource.FlattenListVisitor); so do we. The loader's depth
 * limit (256 levels, two per List) comes first; this guard only bounds
 * the recursion for trees loaded with other limits, with an error.
 */
#define MAX_LIST_NESTING 1000

void check_report_init(struct check_report *r)
{
	r->items = NULL;
	r->n = 0;
	r->cap = 0;
}

static void finding_release(struct check_finding *f)
{
	free(f->container);
	free(f->count);
	free(f->text);
}

void check_report_release(struct check_report *r)
{
	for (size_t i = 0; i < r->n; i++)
		finding_release(&r->items[i]);
	free(r->items);
	check_report_init(r);
}

static struct check_finding *report_add(struct check_report *r, enum check_finding_kind kind,
					const char *container)
{
	struct check_finding *f;

	if (r->n == r->cap) {
		r->cap = r->cap ? r->cap * 2 : 16;
		r->items = gs_xrealloc(r->items, r->cap * sizeof(*r->items));
	}
	f = &r->items[r->n++];
	memset(f, 0, sizeof(*f));
	f->kind = kind;
	f->container = gs_xstrdup(container);
	return f;
}

static void report_truncate(struct check_report *r, size_t n)
{
	while (r->n > n)
		finding_release(&r->items[--r->n]);
}

/* ---- the walk ---- */

/*
 * Field paths ("spec.containers[0]") are built for every container, so
 * without printf: this runs per pod of big streams.
 */
struct path {
	char s[512];
	size_t n;
};

static void path_add(struct path *p, const char *part)
{
	size_t len = strlen(part);

	if (len > sizeof(p->s) - 1 - p->n)
		len = sizeof(p->s) - 1 - p->n;
	memcpy(p->s + p->n, part, len);
	p->n += len;
	p->s[p->n] = '\0';
}

static void path_add_index(struct path *p, size_t i)
{
	char num[24];
	size_t k = sizeof(num) - 1;

	num[k] = '\0';
	do {
		num[--k] = (char)('0' + i % 10);
		i /= 10;
	} while (i);
	path_add(p, "[");
	path_add(p, num + k);
	path_add(p, "]");
}

struct walk {
	const struct ydoc_stream *s;
	unsigned rules;
	struct check_report *rep;
	struct gs_error *err;
};

static int fail_at(struct walk *w, struct ydoc_pos pos, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int fail_at(struct walk *w, struct ydoc_pos pos, const char *fmt, ...)
{
	struct strbuf msg = STRBUF_INIT;
	va_list ap;

	va_start(ap, fmt);
	strbuf_vaddf(&msg, fmt, ap);
	va_end(ap);
	gs_error_at(w->err, ydoc_stream_name(w->s), pos.line, pos.col, "%s", msg.buf);
	strbuf_release(&msg);
	return -1;
}

static struct ydoc_pos key_pos(const struct walk *w, const json_t *obj, const char *key)
{
	struct ydoc_pos p;

	(void)ydoc_stream_key_pos(w->s, obj, key, &p);
	return p;
}

static struct ydoc_pos index_pos(const struct walk *w, const json_t *arr, size_t i)
{
	struct ydoc_pos p;

	(void)ydoc_stream_index_pos(w->s, arr, i, &p);
	return p;
}

/*
 * obj[key] when it is a mapping: *out is NULL when absent or null (Go
 * decodes null into a zero value); any other type is bad input.
 */
static int get_map(struct walk *w, const json_t *obj, const char *key, const char *path,
		   json_t **out)
{
	json_t *v = json_object_get(obj, key);

	*out = NULL;
	if (!v || json_is_null(v))
		return 0;
	if (!json_is_object(v))
		return fail_at(w, key_pos(w, obj, key), "%s%s%s: expected a mapping, found %s",
			       path, *path ? "." : "", key, ydoc_kind_name(v));
	*out = v;
	return 0;
}

static int get_list(struct walk *w, const json_t *obj, const char *key, const char *path,
		    json_t **out)
{
	json_t *v = json_object_get(obj, key);

	*out = NULL;
	if (!v || json_is_null(v))
		return 0;
	if (!json_is_array(v))
		return fail_at(w, key_pos(w, obj, key), "%s%s%s: expected a list, found %s", path,
			       *path ? "." : "", key, ydoc_kind_name(v));
	*out = v;
	return 0;
}

/* ValidateDNS1123Label, the rule for container names: [a-z0-9]([-a-z0-9]*[a-z0-9])?, <= 63. */
static int is_dns1123_label(const char *s, size_t len)
{
	if (!len || len > 63 || s[0] == '-' || s[len - 1] == '-')
		return 0;
	for (size_t i = 0; i < len; i++)
		if (!((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= '0' && s[i] <= '9') || s[i] == '-'))
			return 0;
	return 1;
}

/*
 * A container name as findings show it: a valid name as it is; any other
 * through escape_quoted (double-quoted, with \\, \", \n, \r, \t and \xHH
 * for '=' and every byte outside printable ASCII), so it can neither end a
 * line nor add an '='.
 */
static char *shown_name(const char *s, size_t len)
{
	struct strbuf sb = STRBUF_INIT;

	if (is_dns1123_label(s, len))
		return gs_xstrndup(s, len);
	escape_quoted(&sb, s, len);
	return strbuf_detach(&sb, NULL);
}

/*
 * metav1-style name: sigs.k8s.io/yaml turns a number or boolean for a
 * string field into text. *out is the name as shown (shown_name).
 */
static int container_name(struct walk *w, const json_t *c, const char *path, char **out)
{
	json_t *v = json_object_get(c, "name");
	struct ydoc_resolved r = {0};
	char num[64], *text;
	const char *digits;
	size_t len;

	*out = NULL;
	if (!v || json_is_null(v)) {
		*out = shown_name("", 0);
		return 0;
	}
	switch (json_typeof(v)) {
	case JSON_STRING:
		*out = shown_name(json_string_value(v), json_string_length(v));
		return 0;
	case JSON_INTEGER:
		snprintf(num, sizeof(num), "%lld", (long long)json_integer_value(v));
		break;
	case JSON_REAL:
		if (ydoc_stream_exact_int(w->s, v, &digits) && digits) {
			/* a uint64: FormatUint, exactly */
			snprintf(num, sizeof(num), "%.63s", digits);
			break;
		}
		r.type = YDOC_SCALAR_IS_REAL;
		r.real = json_real_value(v);
		if (ydoc_resolved_key(&r, NULL, 0, &text, &len, w->err))
			return -1;
		*out = shown_name(text, len);
		free(text);
		return 0;
	case JSON_TRUE:
	case JSON_FALSE:
		snprintf(num, sizeof(num), "%s", json_is_true(v) ? "true" : "false");
		break;
	default:
		return fail_at(w, key_pos(w, c, "name"), "%s.name: expected a string, found %s",
			       path, ydoc_kind_name(v));
	}
	*out = shown_name(num, strlen(num));
	return 0;
}

struct res_value {
	int present;
	struct quantity q;
	struct ydoc_pos pos;
};

static int read_quantity(struct walk *w, const json_t *list, const char *key, const char *path,
			 const char *which, struct res_value *out)
{
	json_t *v = json_object_get(list, key);
	const char *digits;
	int rc;

	memset(out, 0, sizeof(*out));
	if (!v)
		return 0;
	out->present = 1;
	out->pos = key_pos(w, list, key);
	/* Beyond int64 Go keeps an integer exactly (uint64, big.Int): its digits, not the real. */
	if (!ydoc_stream_exact_int(w->s, v, &digits))
		rc = quantity_from_json(&out->q, v, w->err);
	else if (digits)
		rc = quantity_parse(&out->q, digits, strlen(digits), w->err);
	else { /* more digits than ydoc keeps, so more than a quantity may have */
		gs_error_set(w->err, "quantity is longer than %d characters", QUANTITY_MAX_LEN);
		rc = -1;
	}
	if (rc) {
		char msg[sizeof(w->err->msg)];

		memcpy(msg, w->err->msg, sizeof(msg));
		return fail_at(w, out->pos, "%s.resources.%s[%s]: %s", path, which, key, msg);
	}
	return 0;
}

/* The larger of the values above 1, or NULL. */
static const struct quantity *over_one(const struct res_value *lim, const struct res_value *req)
{
	int l = lim->present && quantity_cmp_int64(&lim->q, 1) > 0;
	int r = req->present && quantity_cmp_int64(&req->q, 1) > 0;

	if (l && r)
		return quantity_cmp(&lim->q, &req->q) >= 0 ? &lim->q : &req->q;
	return l ? &lim->q : r ? &req->q : NULL;
}

static void note(struct walk *w, const char *container, struct ydoc_pos pos, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static void note(struct walk *w, const char *container, struct ydoc_pos pos, const char *fmt, ...)
{
	struct check_finding *f = report_add(w->rep, CHECK_NOTE, container);
	char msg[1024], where[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (pos.line > 0)
		snprintf(where, sizeof(where), "%s:%d:%d: ", ydoc_stream_name(w->s), pos.line,
			 pos.col);
	else if (w->s)
		snprintf(where, sizeof(where), "%s: ", ydoc_stream_name(w->s));
	else
		where[0] = '\0';
	/*
	 * A name that is not valid comes quoted already (shown_name). The file
	 * name and the message (it quotes resource names as written) go
	 * through escape_line: a finding is one line, never an OVER= or OK.
	 */
	struct strbuf sb = STRBUF_INIT;
	escape_line_str(&sb, where);
	strbuf_addf(&sb, container[0] == '"' ? "container %s: " : "container \"%s\": ", container);
	escape_line_str(&sb, msg);
	f->text = strbuf_detach(&sb, NULL);
}

/*
 * A refusal of the apiserver as a finding: "FILE:LINE:COL: container \"c\":
 * FIELD: BODY" (no container part for the pod's own fields), through
 * escape_line as every note: resource names are quoted as written.
 */
static int refusal_note(struct walk *w, const struct podvalidate_error *e)
{
	struct check_finding *f;
	struct strbuf sb = STRBUF_INIT;
	char where[512], *cname = NULL;

	if (e->container && container_name(w, e->container, "container", &cname))
		return -1;
	if (e->pos.line > 0)
		snprintf(where, sizeof(where), "%s:%d:%d: ", ydoc_stream_name(w->s), e->pos.line,
			 e->pos.col);
	else if (w->s)
		snprintf(where, sizeof(where), "%s: ", ydoc_stream_name(w->s));
	else
		where[0] = '\0';
	escape_line_str(&sb, where);
	/* A name that is not valid comes quoted already (shown_name). */
	if (cname)
		strbuf_addf(&sb, cname[0] == '"' ? "container %s: " : "container \"%s\": ", cname);
	escape_line_str(&sb, e->field);
	strbuf_addstr(&sb, ": ");
	escape_line_str(&sb, e->body);
	f = report_add(w->rep, CHECK_NOTE, cname ? cname : "");
	f->text = strbuf_detach(&sb, NULL);
	free(cname);
	return 0;
}

/* kube-apiserver's validation of the object's resources, as refusals. */
static int api_rules(struct walk *w, const json_t *obj, const char *kind)
{
	struct podvalidate_report rep;
	int rc = 0;

	if (podvalidate_object(obj, kind, w->s, &rep, w->err) < 0)
		return -1;
	for (size_t i = 0; i < rep.n && !rc; i++)
		rc = refusal_note(w, &rep.items[i]);
	podvalidate_report_release(&rep);
	return rc;
}

static int shared_rule_one(struct walk *w, const char *cname, const char *path,
			   const json_t *limits, const json_t *requests, const char *res)
{
	struct res_value lim = {0}, req = {0};
	const struct quantity *over;
	char qs[QUANTITY_STR_MAX];

	if (limits && read_quantity(w, limits, res, path, "limits", &lim))
		return -1;
	if (requests && read_quantity(w, requests, res, path, "requests", &req))
		return -1;
	over = over_one(&lim, &req);
	if (over)
		note(w, cname, over == &lim.q ? lim.pos : req.pos,
		     "%s: %s asks for more than 1; where the device plugin shares it "
		     "(time-slicing, or "
		     "MPS) with failRequestsGreaterThanOne, the pod fails admission "
		     "(UnexpectedAdmissionError: maximum request size for shared resources is 1)",
		     res, quantity_string(over, qs, sizeof(qs)));
	return 0;
}

static int is_other_nvidia(const char *res)
{
	return !strncmp(res, "nvidia.com/", 11) && strcmp(res, GPU);
}

static int shared_rule(struct walk *w, const char *cname, const char *path, const json_t *limits,
		       const json_t *requests)
{
	const char *res;
	json_t *v;

	json_object_foreach ((json_t *)limits, res, v) {
		if (is_other_nvidia(res) && shared_rule_one(w, cname, path, limits, requests, res))
			return -1;
	}
	json_object_foreach ((json_t *)requests, res, v) {
		if (is_other_nvidia(res) && !(limits && json_object_get(limits, res)) &&
		    shared_rule_one(w, cname, path, NULL, requests, res))
			return -1;
	}
	return 0;
}

static int check_container(struct walk *w, const json_t *c, const char *path)
{
	json_t *resources, *limits = NULL, *requests = NULL;
	struct res_value lim = {0}, req = {0};
	const struct quantity *over;
	char *cname;
	char qs[QUANTITY_STR_MAX];
	int rc = -1;

	if (container_name(w, c, path, &cname))
		return -1;
	if (get_map(w, c, "resources", path, &resources))
		goto out;
	if (resources) {
		struct path rpath = {.s = "", .n = 0};

		path_add(&rpath, path);
		path_add(&rpath, ".resources");
		if (get_map(w, resources, "limits", rpath.s, &limits) ||
		    get_map(w, resources, "requests", rpath.s, &requests))
			goto out;
	}
	if ((limits && read_quantity(w, limits, GPU, path, "limits", &lim)) ||
	    (requests && read_quantity(w, requests, GPU, path, "requests", &req)))
		goto out;
	over = over_one(&lim, &req);
	if (over)
		report_add(w->rep, CHECK_OVER, cname)->count =
			gs_xstrdup(quantity_string(over, qs, sizeof(qs)));
	if ((w->rules & CHECK_SHARED_RESOURCES) && shared_rule(w, cname, path, limits, requests))
		goto out;
	rc = 0;
out:
	free(cname);
	return rc;
}

static int check_podspec(struct walk *w, const json_t *spec, const char *path)
{
	static const char *const lists[] = {"containers", "initContainers"};

	for (size_t l = 0; l < 2; l++) {
		json_t *arr, *c;
		size_t i;

		if (get_list(w, spec, lists[l], path, &arr))
			return -1;
		json_array_foreach (arr, i, c) {
			struct path cpath = {.s = "", .n = 0};

			if (json_is_null(c))
				continue;
			path_add(&cpath, path);
			path_add(&cpath, ".");
			path_add(&cpath, lists[l]);
			path_add_index(&cpath, i);
			if (!json_is_object(c))
				return fail_at(w, index_pos(w, arr, i),
					       "%s: expected a mapping, found %s", cpath.s,
					       ydoc_kind_name(c));
			if (check_container(w, c, cpath.s))
				return -1;
		}
	}
	return 0;
}

/* Follow keys through mappings; *out NULL when a step is absent or null. */
static int descend(struct walk *w, const json_t *obj, const char *const *keys, json_t **out)
{
	struct path path = {.s = "", .n = 0};
	const json_t *cur = obj;

	*out = NULL;
	for (; *keys; keys++) {
		json_t *next;

		if (get_map(w, cur, *keys, path.s, &next))
			return -1;
		if (!next)
			return 0;
		if (path.n)
			path_add(&path, ".");
		path_add(&path, *keys);
		cur = next;
	}
	*out = (json_t *)cur;
	return 0;
}

static int is_list_kind(const char *kind)
{
	size_t n = strlen(kind);

	return n >= 4 && !strcmp(kind + n - 4, "List");
}

static int check_object(struct walk *w, const json_t *obj, const char *default_kind, int nesting)
{
	static const char *const pod[] = {"spec", NULL};
	static const char *const workload[] = {"spec", "template", "spec", NULL};
	static const char *const cronjob[] = {"spec",	  "jobTemplate", "spec",
					      "template", "spec",	 NULL};
	static const char *const podtemplate[] = {"template", "spec", NULL};
	static const char *const workload_kinds[] = {
		"Deployment", "StatefulSet", "DaemonSet", "ReplicaSet", "ReplicationController",
		"Job",	      NULL};
	json_t *kindv = json_object_get(obj, "kind");
	const char *kind = json_is_string(kindv) ? json_string_value(kindv) : NULL;
	const char *const *path = NULL;
	json_t *spec;
	struct path pathstr = {.s = "", .n = 0};

	if (!kind || !*kind)
		kind = default_kind;
	if (!kind)
		return 0;
	if (is_list_kind(kind)) {
		json_t *items, *item;
		size_t i;
		char *item_kind;
		int rc = 0;

		if (get_list(w, obj, "items", "", &items))
			return -1;
		if (items && nesting >= MAX_LIST_NESTING)
			return fail_at(w, key_pos(w, obj, "items"),
				       "items: Lists nested more than %d deep", MAX_LIST_NESTING);
		item_kind = gs_xstrndup(kind, strlen(kind) - 4); /* "FooList" -> "Foo" */
		json_array_foreach (items, i, item) {
			if (json_is_null(item))
				continue;
			if (!json_is_object(item)) {
				rc = fail_at(w, index_pos(w, items, i),
					     "items[%zu]: expected a mapping, found %s", i,
					     ydoc_kind_name(item));
				break;
			}
			if (check_object(w, item, item_kind[0] ? item_kind : NULL, nesting + 1)) {
				rc = -1;
				break;
			}
		}
		free(item_kind);
		return rc;
	}
	if (!strcmp(kind, "Pod"))
		path = pod;
	else if (!strcmp(kind, "CronJob"))
		path = cronjob;
	else if (!strcmp(kind, "PodTemplate"))
		path = podtemplate;
	for (size_t i = 0; !path && workload_kinds[i]; i++)
		if (!strcmp(kind, workload_kinds[i]))
			path = workload;
	if (!path)
		return 0;
	if (descend(w, obj, path, &spec))
		return -1;
	if (!spec)
		return 0;
	for (const char *const *k = path; *k; k++) {
		if (k != path)
			path_add(&pathstr, ".");
		path_add(&pathstr, *k);
	}
	if (check_podspec(w, spec, pathstr.s))
		return -1;
	return api_rules(w, obj, kind);
}

int check_stream(const struct ydoc_stream *s, unsigned rules, struct check_report *rep,
		 struct gs_error *err)
{
	struct walk w = {.s = s, .rules = rules, .rep = rep, .err = err};
	size_t before = rep->n;

	for (size_t i = 0; i < ydoc_stream_count(s); i++) {
		json_t *doc = ydoc_stream_doc(s, i);

		if (json_is_object(doc) && check_object(&w, doc, NULL, 0)) {
			report_truncate(rep, before);
			return -1;
		}
	}
	return 0;
}

int check_object_tree(const json_t *obj, unsigned rules, struct check_report *rep,
		      struct gs_error *err)
{
	struct walk w = {.s = NULL, .rules = rules, .rep = rep, .err = err};
	size_t before = rep->n;

	if (json_is_object(obj) && check_object(&w, obj, NULL, 0)) {
		report_truncate(rep, before);
		return -1;
	}
	return 0;
}

/* ---- the filter: exactly the paths check_object() reads ---- */

enum role {
	R_OBJECT = 1,
	R_ITEMS,
	R_SPEC,
	R_TEMPLATE,
	R_CONTAINERS,
	R_CONTAINER,
	R_RESOURCES,
	R_RESOURCE_LIST,
};

#define key_is(key, len, want) ((key) && (len) == sizeof(want) - 1 && !memcmp((key), (want), (len)))

static int child_role(void *ctx, int parent, const char *key, size_t len)
{
	(void)ctx;
	switch (parent) {
	case R_OBJECT:
		if (key_is(key, len, "kind"))
			return YDOC_KEEP_ALL;
		if (key_is(key, len, "spec"))
			return R_SPEC;
		if (key_is(key, len, "items"))
			return R_ITEMS;
		if (key_is(key, len, "template"))
			return R_TEMPLATE;
		return YDOC_SKIP;
	case R_ITEMS:
		return key ? YDOC_SKIP : R_OBJECT;
	case R_SPEC:
		/* Pod spec, workload spec and job spec at once: kind may come later. */
		if (key_is(key, len, "containers") || key_is(key, len, "initContainers") ||
		    key_is(key, len, "ephemeralContainers"))
			return R_CONTAINERS;
		if (key_is(key, len, "template") || key_is(key, len, "jobTemplate"))
			return R_TEMPLATE;
		/* the pod's own resources (spec.resources) */
		return key_is(key, len, "resources") ? R_RESOURCES : YDOC_SKIP;
	case R_TEMPLATE:
		return key_is(key, len, "spec") ? R_SPEC : YDOC_SKIP;
	case R_CONTAINERS:
		return key ? YDOC_SKIP : R_CONTAINER;
	case R_CONTAINER:
		if (key_is(key, len, "name") || key_is(key, len, "restartPolicy"))
			return YDOC_KEEP_ALL;
		return key_is(key, len, "resources") ? R_RESOURCES : YDOC_SKIP;
	case R_RESOURCES:
		if (key_is(key, len, "limits") || key_is(key, len, "requests"))
			return R_RESOURCE_LIST;
		/* only whether it is set matters */
		return key_is(key, len, "claims") ? YDOC_KEEP_ALL : YDOC_SKIP;
	case R_RESOURCE_LIST:
		/* the apiserver's validation reads every name and value */
		return YDOC_KEEP_ALL;
	default:
		return YDOC_SKIP;
	}
}

static const struct ydoc_filter check_filter = {
	.root_role = R_OBJECT, .child_role = child_role, .ctx = NULL};

struct each {
	struct walk w;
	size_t before;
};

static int check_one_document(void *ctx, const struct ydoc_stream *s, json_t *doc, size_t index,
			      struct gs_error *err)
{
	struct each *e = ctx;

	if (index == 0) /* also after a restart in full */
		report_truncate(e->w.rep, e->before);
	e->w.s = s;
	e->w.err = err;
	return json_is_object(doc) ? check_object(&e->w, doc, NULL, 0) : 0;
}

int check_buffer(const char *name, const char *buf, size_t len, unsigned rules,
		 enum check_engine engine, struct check_report *rep, struct gs_error *err)
{
	struct ydoc_stream *s;
	struct ydoc_pos none = {.line = 0, .col = 0};
	struct each e = {{NULL, rules, rep, err}, rep->n};
	int rc;

	if (engine == CHECK_ENGINE_STREAM) {
		/* Document by document, building only what check_object() reads. */
		if (ydoc_each_document(name, buf, len, none, NULL, &check_filter,
				       check_one_document, &e, err)) {
			report_truncate(rep, e.before);
			return -1;
		}
		return 0;
	}
	if (ydoc_load_buffer(name, buf, len, none, NULL, &s, err))
		return -1;
	rc = check_stream(s, rules, rep, err);
	ydoc_stream_free(s);
	return rc;
}

int check_file(const char *path, unsigned rules, enum check_engine engine, struct check_report *rep,
	       struct gs_error *err)
{
	struct gs_file f;
	int rc;

	if (gs_file_open(path, ydoc_default_limits.max_bytes, &f, err))
		return -1;
	rc = check_buffer(strcmp(path, "-") ? path : "<stdin>", f.data, f.len, rules, engine, rep,
			  err);
	gs_file_release(&f);
	return rc;
}
