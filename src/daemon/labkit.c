#include "daemon/labkit.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/strbuf.h"
#include "daemon/apply.h"
#include "model/kobj.h"
#include "model/quantity.h"
#include "yaml/ydoc.h"
#include "base/banned.h"

void labkit_init(struct labkit *kit, struct kube_client *c, const struct lab_opts *o)
{
	kit->c = c;
	kit->o = o;
	kit->dir = o->dir ? o->dir : ".";
	kit->wait_ms = o->wait_ms ? o->wait_ms : 120000;
}

void labkit_say(const struct labkit *kit, const char *fmt, ...)
{
	struct strbuf line = STRBUF_INIT;
	va_list ap;

	if (!kit->o->progress)
		return;
	va_start(ap, fmt);
	strbuf_vaddf(&line, fmt, ap);
	va_end(ap);
	kit->o->progress(kit->o->progress_arg, line.buf);
	strbuf_release(&line);
}

char *labkit_path(const struct labkit *kit, const char *rel)
{
	return gs_xasprintf("%s/%s", kit->dir, rel);
}

int labkit_load(const struct labkit *kit, const char *rel, struct ydoc_stream **s,
		struct gs_error *err)
{
	char *path = labkit_path(kit, rel);
	int rc = ydoc_load_file(path, NULL, s, err);

	free(path);
	return rc;
}

int labkit_apply_one(const struct labkit *kit, const json_t *obj, struct gs_error *err)
{
	enum apply_result r;
	const char *ns = kobj_namespace(obj);

	if (apply_object(kit->c, obj, &r, NULL, err) < 0) {
		gs_error_prefix(err, "%s %s%s%s: ", kobj_kind(obj), ns ? ns : "", ns ? "/" : "",
				kobj_name(obj));
		return -1;
	}
	labkit_say(kit, "  %s %s%s%s %s", kobj_kind(obj), ns ? ns : "", ns ? "/" : "",
		   kobj_name(obj), apply_result_name(r));
	return 0;
}

int labkit_apply_file(const struct labkit *kit, const char *rel, struct gs_error *err)
{
	struct ydoc_stream *s;
	int rc = 0;

	if (labkit_load(kit, rel, &s, err) < 0)
		return -1;
	for (size_t i = 0; i < ydoc_stream_count(s) && rc == 0; i++) {
		const json_t *doc = ydoc_stream_doc(s, i);

		if (!json_is_object(doc))
			continue;
		rc = labkit_apply_one(kit, doc, err);
		if (rc < 0)
			gs_error_prefix(err, "%s: ", rel);
	}
	ydoc_stream_free(s);
	return rc;
}

int labkit_wait(const struct labkit *kit, const char *path, kube_wait_fn pred, void *arg,
		json_t **out, struct gs_error *err)
{
	return kube_wait(kit->c, path, pred, arg, kit->wait_ms, 250, out, err);
}

/* mkdir of every folder <rel> names below the working directory. */
static int make_folders(const struct labkit *kit, const char *rel, struct gs_error *err)
{
	for (const char *slash = strchr(rel, '/'); slash; slash = strchr(slash + 1, '/')) {
		char *d = gs_xasprintf("%s/%.*s", kit->dir, (int)(slash - rel), rel);
		int bad = mkdir(d, 0777) < 0 && errno != EEXIST;

		if (bad)
			gs_error_set(err, "cannot create '%s': %s", d, strerror(errno));
		free(d);
		if (bad)
			return -1;
	}
	return 0;
}

int labkit_write_out(const struct labkit *kit, const char *rel, const char *text,
		     struct gs_error *err)
{
	char *path = labkit_path(kit, rel);
	char *tmp = gs_xasprintf("%s.tmp", path);
	FILE *f;
	int rc = -1;

	if (make_folders(kit, rel, err) < 0)
		goto out;
	f = fopen(tmp, "w");
	if (!f) {
		gs_error_set(err, "cannot write '%s': %s", tmp, strerror(errno));
		goto out;
	}
	fputs(text, f);
	if (fclose(f) != 0 || rename(tmp, path) < 0) {
		gs_error_set(err, "cannot write '%s': %s", path, strerror(errno));
		unlink(tmp);
		goto out;
	}
	labkit_say(kit, "  wrote %s", rel);
	rc = 0;
out:
	free(path);
	free(tmp);
	return rc;
}

int labkit_exists(const json_t *obj, void *arg, struct gs_error *why)
{
	(void)arg;
	if (obj)
		return 1;
	gs_error_set(why, "it does not exist yet");
	return 0;
}

/*
 * Quota admission reads the quota from an informer cache: until that cache
 * has seen usage of the objects just created, a further one could slip
 * through. Hence waiting until status.used reaches what was admitted.
 */
int labkit_quota_used_reaches(const json_t *q, void *arg, struct gs_error *why)
{
	const struct labkit_quota_want *w = arg;
	const json_t *used = json_object_get(kobj_get(q, "status.used"), w->key);
	int64_t have = 0;
	struct quantity qty;
	struct gs_error ignored;

	if (used && quantity_from_json(&qty, used, &ignored) == 0 &&
	    quantity_value(&qty, &have) == 0 && have >= w->want)
		return 1;
	gs_error_set(why, "status.used %s is %s, want %lld", w->key,
		     json_is_string(used) ? json_string_value(used) : "unset", (long long)w->want);
	return 0;
}

int labkit_quota_refuses(const struct labkit *kit, const char *rel, const char *out_rel,
			 const char *when, const char *quota_path, const char *quota_name,
			 const char *key, char **denied, char **used, struct gs_error *err)
{
	struct ydoc_stream *s = NULL;
	const struct kube_status *st;
	const json_t *over;
	json_t *q = NULL;
	char *item = NULL, *coll = NULL, *text = NULL;
	int rc = -1;

	if (labkit_load(kit, rel, &s, err) < 0)
		return -1;
	over = ydoc_stream_count(s) ? ydoc_stream_doc(s, 0) : NULL;
	if (!json_is_object(over) || apply_paths(over, &coll, &item, err) < 0) {
		if (!err->msg[0])
			gs_error_set(err, "%s holds no object", rel);
		goto out;
	}
	if (kube_create(kit->c, coll, over, NULL, err) == 0) {
		struct gs_error ignored;
		/* Leave no over-quota object behind; the error below is what matters. */
		if (kube_delete(kit->c, item, NULL, NULL, &ignored) < 0) {
		}
		gs_error_set(err, "team-over was admitted: quota %s did not refuse it", quota_name);
		goto out;
	}
	st = kube_last_status(kit->c);
	if (st->code == 409 || !strstr(st->message, "exceeded quota")) {
		gs_error_prefix(err, "team-over: expected a quota refusal, got: ");
		goto out;
	}
	/* What `kubectl apply -f <rel> 2>&1` prints for the same refusal. */
	text = gs_xasprintf("Error from server (%s): error when creating \"%s\": %s\n", st->reason,
			    rel, st->message);
	free(*denied);
	*denied = gs_xstrdup(st->message);
	labkit_say(kit, "  refused at %s: %s", when, *denied);
	if (labkit_write_out(kit, out_rel, text, err) < 0 ||
	    kube_get(kit->c, quota_path, &q, err) < 0)
		goto out;
	{
		const json_t *qs = json_object_get(q, "status");
		const char *u = json_string_value(json_object_get(kobj_map(qs, "used"), key));
		const char *h = json_string_value(json_object_get(kobj_map(qs, "hard"), key));

		free(*used);
		*used = gs_xasprintf("%s/%s", u ? u : "?", h ? h : "?");
	}
	rc = 0;
out:
	json_decref(q);
	ydoc_stream_free(s);
	free(item);
	free(coll);
	free(text);
	return rc;
}
