#include "engine/migwalk.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/strbuf.h"
#include "base/wrapper.h"
#include "model/kobj.h"
#include "model/names.h"
#include "base/banned.h"

/* Where upstream does what is played (docs/guide/faults.md cites the same lines). */
#define RECONF "mig-parted v0.15.0 pkg/mig/reconfigure/reconfigure.go"
#define MAIN "mig-parted v0.15.0 cmd/nvidia-mig-manager/main.go"

/*
 * The operands mig-manager pauses, always written (maybeSetPaused and
 * maybeSetTrue turn an absent label into a value, reconfigure.go:371-386,
 * 519-531); gpu.deploy.client only when the node has it.
 */
static const char *const operands[] = {
	"nvidia.com/gpu.deploy.device-plugin", "nvidia.com/gpu.deploy.gpu-feature-discovery",
	"nvidia.com/gpu.deploy.dcgm-exporter", "nvidia.com/gpu.deploy.dcgm",
	"nvidia.com/gpu.deploy.nvsm",
};
#define CLIENT_LABEL "nvidia.com/gpu.deploy.client"

/* Days since 1970-01-01 of a civil date (H. Hinnant's days_from_civil). */
static long long days_from_civil(long long y, unsigned m, unsigned d)
{
	long long era;
	unsigned yoe, doy, doe;

	y -= m <= 2;
	era = (y >= 0 ? y : y - 399) / 400;
	yoe = (unsigned)(y - era * 400);
	doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
	doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
	return era * 146097 + (long long)doe - 719468;
}

/* n digits at *p into *v; advances only on success. */
static int take_digits(const char **p, int n, unsigned *v)
{
	unsigned x = 0;

	for (int i = 0; i < n; i++) {
		char c = (*p)[i];
		if (c < '0' || c > '9')
			return -1;
		x = x * 10 + (unsigned)(c - '0');
	}
	*p += n;
	*v = x;
	return 0;
}

static int take_char(const char **p, char c)
{
	if (**p != c)
		return -1;
	(*p)++;
	return 0;
}

long long migwalk_parse_time(const char *s)
{
	unsigned y, mo, d, h, mi, se;
	const char *p = s;

	if (!s || take_digits(&p, 4, &y) || take_char(&p, '-') || take_digits(&p, 2, &mo) ||
	    take_char(&p, '-') || take_digits(&p, 2, &d) || take_char(&p, 'T') ||
	    take_digits(&p, 2, &h) || take_char(&p, ':') || take_digits(&p, 2, &mi) ||
	    take_char(&p, ':') || take_digits(&p, 2, &se) || take_char(&p, 'Z') || *p)
		return -1;
	if (mo < 1 || mo > 12 || d < 1 || d > 31 || h > 23 || mi > 59 || se > 60)
		return -1;
	return days_from_civil(y, mo, d) * 86400 + h * 3600 + mi * 60 + se;
}

static void fmt_time(long long t, char *out, size_t size)
{
	time_t tt = (time_t)t;
	struct tm tm;

	gmtime_r(&tt, &tm);
	strftime(out, size, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

/* What mig-manager remembers, read back from gpushare.io/mig-reconfigure. */
struct record {
	bool present;
	const char *config, *applied, *step; /* borrowed from doc */
	long long paused_at, since;
	json_t *doc;
};

static void record_read(const json_t *node, struct record *r, struct gs_warnings *notes)
{
	const char *v = kobj_annotation(node, NODEHW_ANN_MIG_RECORD);
	json_t *doc;

	memset(r, 0, sizeof(*r));
	if (!v)
		return;
	doc = json_loads(v, 0, NULL);
	if (!json_is_object(doc) || !json_is_string(json_object_get(doc, "config"))) {
		gs_warnings_add(notes, NODEHW_ANN_MIG_RECORD
				" is unreadable: taken as absent (the label's "
				"layout counts as applied)");
		json_decref(doc);
		return;
	}
	r->present = true;
	r->doc = doc;
	r->config = json_string_value(json_object_get(doc, "config"));
	r->applied = json_string_value(json_object_get(doc, "applied"));
	r->step = json_string_value(json_object_get(doc, "step"));
	if (r->applied && !*r->applied)
		r->applied = NULL;
	if (r->step && strcmp(r->step, "pending") && strcmp(r->step, "stalled"))
		r->step = NULL;
	if (r->step) {
		r->paused_at =
			migwalk_parse_time(json_string_value(json_object_get(doc, "pausedAt")));
		r->since = migwalk_parse_time(json_string_value(json_object_get(doc, "since")));
		if (r->paused_at < 0 || r->since < 0) {
			gs_warnings_add(notes, NODEHW_ANN_MIG_RECORD
					" has no readable pausedAt/since: the walk starts again");
			r->paused_at = r->since = -1;
		}
	}
}

static char *record_text(const char *config, const char *applied, const char *step,
			 long long paused_at, long long since)
{
	json_t *o = json_pack("{s:s,s:s}", "config", config, "applied", applied ? applied : "");
	char ts[32];
	char *s;

	if (step) {
		json_object_set_new(o, "step", json_string(step));
		fmt_time(paused_at, ts, sizeof(ts));
		json_object_set_new(o, "pausedAt", json_string(ts));
		fmt_time(since, ts, sizeof(ts));
		json_object_set_new(o, "since", json_string(ts));
	}
	s = json_dumps(o, JSON_COMPACT | JSON_SORT_KEYS);
	json_decref(o);
	return s;
}

/* maybeSetPaused / maybeSetTrue (reconfigure.go:581-593): "false" stays, the rest is set. */
static json_t *operand_labels(const json_t *node, const char *value)
{
	json_t *o = json_object();
	const char *client = kobj_label(node, CLIENT_LABEL);

	for (size_t i = 0; i < sizeof(operands) / sizeof(operands[0]); i++) {
		const char *cur = kobj_label(node, operands[i]);
		json_object_set_new(o, operands[i],
				    json_string(cur && !strcmp(cur, "false") ? "false" : value));
	}
	if (client && *client)
		json_object_set_new(o, CLIENT_LABEL,
				    json_string(!strcmp(client, "false") ? "false" : value));
	return o;
}

/* mig-parted assert --valid-config, then apply, on every MIG-capable GPU: the catalog's word. */
static int layout_ok(const struct catalog *cat, const struct nodehw *hw, const char *layout,
		     struct gs_error *why)
{
	for (size_t i = 0; i < hw->n_gpus; i++) {
		struct catalog_gpu_mig m;
		if (hw->gpus[i].model->mig &&
		    catalog_layout_apply(cat, layout, hw->gpus[i].model, &m, why) < 0)
			return -1;
	}
	return 0;
}

static int seconds_of(const json_t *node, struct gs_warnings *notes)
{
	const char *v = kobj_annotation(node, NODEHW_ANN_MIG_SECONDS);
	long n = 0;

	if (!v)
		return MIGWALK_DEFAULT_SECONDS;
	for (const char *p = v; *p; p++) {
		if (*p < '0' || *p > '9' || n > MIGWALK_MAX_SECONDS) {
			n = -1;
			break;
		}
		n = n * 10 + (*p - '0');
	}
	if (!*v || n < 0 || n > MIGWALK_MAX_SECONDS) {
		gs_warnings_add(notes,
				NODEHW_ANN_MIG_SECONDS "=\"%s\" is not a number of seconds "
						       "(0-%d): %d taken",
				v, MIGWALK_MAX_SECONDS, MIGWALK_DEFAULT_SECONDS);
		return MIGWALK_DEFAULT_SECONDS;
	}
	return (int)n;
}

static const char *fault_of(const json_t *node, struct gs_warnings *notes)
{
	const char *v = kobj_annotation(node, NODEHW_ANN_MIG_FAULT);

	if (!v || !*v)
		return NULL;
	if (!strcmp(v, "stall") || !strcmp(v, "fail"))
		return v;
	gs_warnings_add(notes, NODEHW_ANN_MIG_FAULT "=\"%s\" is ignored: 'stall' or 'fail'", v);
	return NULL;
}

static void set_str(char **dst, const char *s)
{
	free(*dst);
	*dst = s ? gs_xstrdup(s) : NULL;
}

/* The walk ends: the layout applied (success) or not (failed), operands back (setState). */
static void finish(struct migwalk *w, const json_t *node, const char *config, const char *applied,
		   const char *failure)
{
	w->step = MIGWALK_IDLE;
	w->state = failure ? "failed" : "success";
	w->ended = w->state;
	set_str(&w->layout, failure ? applied : config);
	set_str(&w->config, config);
	w->labels = operand_labels(node, "true");
	w->record = record_text(config, failure ? applied : config, NULL, 0, 0);
	if (failure)
		w->failure = gs_xstrdup(failure);
}

int migwalk_plan(const struct catalog *cat, const json_t *node, const struct nodehw *hw,
		 long long now, unsigned gpu_pods, struct migwalk *w, struct gs_error *err)
{
	const char *label = hw->mig_config;
	const char *fault;
	struct record r;
	struct gs_error e;
	bool capable = false, started = false;

	(void)err;
	memset(w, 0, sizeof(*w));
	gs_warnings_init(&w->notes);
	if (!now)
		now = (long long)time(NULL);
	for (size_t i = 0; i < hw->n_gpus; i++)
		capable |= hw->gpus[i].model->mig != NULL;
	w->step = MIGWALK_OFF;
	set_str(&w->layout, label);
	if (!capable)
		return 0; /* mig-manager runs on MIG-capable nodes only */
	record_read(node, &r, &w->notes);
	w->seconds = seconds_of(node, &w->notes);
	fault = fault_of(node, &w->notes);
	if (!r.present) {
		/* First sight: the layout the label names is the one the GPUs came up with. */
		if (label && layout_ok(cat, hw, label, &e) == 0) {
			w->step = MIGWALK_IDLE;
			set_str(&w->config, label);
			w->record = record_text(label, label, NULL, 0, 0);
		}
		return 0;
	}
	set_str(&w->config, r.config);
	set_str(&w->layout, r.applied);
	if (!r.step) {
		w->step = MIGWALK_IDLE;
		if (!label || !strcmp(label, r.config)) {
			/* An empty label is never acted on (main.go:103-110): the GPUs keep theirs.
			 */
			if (strcmp(r.config, r.applied ? r.applied : ""))
				w->state = "failed";
			goto out;
		}
		/* A new value (main.go:572-576): validateMigConfig first (reconfigure.go:137-140).
		 */
		if (layout_ok(cat, hw, label, &e) < 0) {
			char *msg = gs_xasprintf("mig-manager: %s", e.msg);
			finish(w, node, label, r.applied, msg);
			w->why = gs_xasprintf(
				"%s=%s is not valid for these GPUs: state failed at "
				"once (never pending), operands left at true, the GPUs "
				"keep %s (" RECONF ":137-140, 540-579)",
				NODEHW_LABEL_MIG_CONFIG, label,
				r.applied ? r.applied : "their layout");
			free(msg);
			goto out;
		}
		if (r.applied && !strcmp(label, r.applied)) {
			/* isConfigAlreadyApplied (reconfigure.go:142-146). */
			finish(w, node, label, r.applied, NULL);
			w->why = gs_xasprintf(
				"%s is already applied: state success (" RECONF ":142-146)", label);
			goto out;
		}
		/* pending, then the operands paused (reconfigure.go:158-168). */
		w->step = MIGWALK_PENDING;
		started = true; /* shown pending at least once, however short the walk */
		set_str(&w->config, label);
		w->paused_at = w->since = now;
		w->record = record_text(label, r.applied, "pending", now, now);
	} else {
		w->paused_at = r.paused_at < 0 ? now : r.paused_at;
		w->since = r.since < 0 ? now : r.since;
		w->step = !strcmp(r.step, "stalled") ? MIGWALK_STALLED : MIGWALK_PENDING;
		if (r.since < 0)
			w->record = record_text(r.config, r.applied, r.step, w->paused_at, now);
	}
	/* Walking: pending, operands paused, the device plugin gone. */
	w->state = "pending";
	w->labels = operand_labels(node, MIGWALK_PAUSED);
	w->plugin_down = true;
	w->capacity_gone = now >= w->paused_at + MIGWALK_STOP_GRACE_SECONDS;
	if (fault && !strcmp(fault, "stall")) {
		if (w->step != MIGWALK_STALLED) {
			free(w->record);
			w->record = record_text(w->config, r.applied, "stalled", w->paused_at,
						w->since);
		}
		w->step = MIGWALK_STALLED;
		w->why = gs_xasprintf(
			"stalled toward %s (" NODEHW_ANN_MIG_FAULT "=stall): the operands did not "
			"terminate within 5 minutes and mig-manager returned without setState, "
			"leaving state pending and the operands paused until the label changes or "
			"mig-manager restarts (" RECONF ":170-172, mig-parted#485; fixed after "
			"v0.15.0 by mig-parted#484)",
			w->config);
		if (!w->capacity_gone)
			w->replan_at = w->paused_at + MIGWALK_STOP_GRACE_SECONDS;
		goto out;
	}
	if (w->step == MIGWALK_STALLED) {
		/* The stall gone: mig-manager restarted (AddFunc, main.go:569-571) runs again. */
		w->step = MIGWALK_PENDING;
		w->since = now;
		free(w->record);
		w->record = record_text(w->config, r.applied, "pending", w->paused_at, now);
	}
	if (started || now < w->since + w->seconds) {
		w->why = gs_xasprintf(
			"reconfiguring toward %s since %llds: state pending, operands paused "
			"(" RECONF ":158-172), the device plugin gone",
			w->config, now - w->since);
		w->replan_at = w->since + w->seconds;
		if (!w->capacity_gone && w->paused_at + MIGWALK_STOP_GRACE_SECONDS < w->replan_at)
			w->replan_at = w->paused_at + MIGWALK_STOP_GRACE_SECONDS;
		goto out;
	}
	{
		char *config = gs_xstrdup(w->config);
		const char *applied = r.applied;
		char *msg = NULL;

		w->plugin_down = w->capacity_gone = false;
		json_decref(w->labels);
		w->labels = NULL;
		free(w->record);
		w->record = NULL;
		if (fault && !strcmp(fault, "fail"))
			msg = gs_xasprintf("mig-manager: applying %s failed (" NODEHW_ANN_MIG_FAULT
					   "=fail)",
					   config);
		else if (gpu_pods)
			msg = gs_xasprintf(
				"mig-manager: applying %s failed: %u pod%s on the node hold%s GPUs "
				"(NVML: In use by another client); mig-manager evicts only its "
				"operands",
				config, gpu_pods, gpu_pods == 1 ? "" : "s",
				gpu_pods == 1 ? "s" : "");
		finish(w, node, config, applied, msg);
		w->why = msg ? gs_xasprintf("%s: state failed, operands back, the GPUs keep %s "
					    "(" RECONF ":206-209, 540-579)",
					    msg, applied ? applied : "their layout")
			     : gs_xasprintf("%s applied: state success, operands back, the device "
					    "plugin registers the new layout (" RECONF ":206-239)",
					    config);
		free(msg);
		free(config);
		/* A value set during the walk is read next (the loop, main.go:436-447). */
		if (label && strcmp(label, w->config))
			w->replan_at = now;
	}
out:
	json_decref(r.doc);
	return 0;
}

void migwalk_release(struct migwalk *w)
{
	free(w->layout);
	free(w->config);
	json_decref(w->labels);
	free(w->record);
	free(w->failure);
	free(w->why);
	gs_warnings_release(&w->notes);
	memset(w, 0, sizeof(*w));
}

json_t *migwalk_node_as_held(const json_t *node, bool *plugin_down)
{
	struct gs_warnings notes;
	struct record r;
	const char *label = kobj_label(node, NODEHW_LABEL_MIG_CONFIG);
	json_t *copy = NULL, *md, *labels;

	*plugin_down = false;
	gs_warnings_init(&notes);
	record_read(node, &r, &notes);
	gs_warnings_release(&notes);
	if (!r.present)
		return NULL;
	*plugin_down = r.step != NULL;
	if (label && *label && r.applied && !strcmp(label, r.applied))
		goto out;
	if ((!label || !*label) && !r.applied)
		goto out;
	copy = json_deep_copy(node);
	md = json_object_get(copy, "metadata");
	labels = json_object_get(md, "labels");
	if (!json_is_object(labels)) {
		labels = json_object();
		json_object_set_new(md, "labels", labels);
	}
	if (r.applied)
		json_object_set_new(labels, NODEHW_LABEL_MIG_CONFIG, json_string(r.applied));
	else
		json_object_del(labels, NODEHW_LABEL_MIG_CONFIG);
out:
	json_decref(r.doc);
	return copy;
}
