#include "engine/kubeletrestart.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/strbuf.h"
#include "base/wrapper.h"
#include "engine/devicewalk.h"
#include "engine/heartbeat.h"
#include "engine/migwalk.h"
#include "model/kobj.h"
#include "model/names.h"
#include "base/banned.h"

/* Where upstream does what is played (docs/guide/faults.md cites the same lines). */
#define DM "k8s.io/kubernetes v1.37.2 pkg/kubelet/cm/devicemanager/manager.go"

const char *kubelet_kind_name(enum kubelet_kind k)
{
	return k == KUBELET_REBOOT ? "reboot" : "restart";
}

static int fail_at(struct gs_error *err, size_t *bad_col, size_t col, const char *what)
{
	*bad_col = col;
	gs_error_set(err, "character %zu: %s", col, what);
	return -1;
}

int kubelet_fault_parse(const char *value, struct kubelet_fault *out, size_t *bad_col,
			struct gs_error *err)
{
	const char *p = value, *at, *comma;
	char ts[32];
	size_t len;
	long n = 0;

	memset(out, 0, sizeof(*out));
	*bad_col = 0;
	if (!strncmp(p, "restart@", 8)) {
		out->kind = KUBELET_RESTART;
		p += 8;
	} else if (!strncmp(p, "reboot@", 7)) {
		out->kind = KUBELET_REBOOT;
		p += 7;
	} else {
		return fail_at(err, bad_col, 1, "expected 'restart@' or 'reboot@'");
	}
	at = p;
	comma = strchr(at, ',');
	len = comma ? (size_t)(comma - at) : strlen(at);
	if (len < sizeof(ts)) {
		memcpy(ts, at, len);
		ts[len] = '\0';
		out->at = migwalk_parse_time(ts);
	}
	if (len >= sizeof(ts) || out->at < 0)
		return fail_at(err, bad_col, (size_t)(at - value) + 1,
			       "expected an RFC 3339 time in UTC (2026-12-03T10:00:00Z)");
	out->seconds =
		out->kind == KUBELET_REBOOT ? KUBELET_REBOOT_SECONDS : KUBELET_RESTART_SECONDS;
	if (!comma)
		return 0;
	p = comma + 1;
	if (!*p)
		return fail_at(err, bad_col, (size_t)(p - value) + 1,
			       "expected the seconds until the device plugin registers (0-86400)");
	for (; *p; p++) {
		if (*p < '0' || *p > '9' || n > KUBELET_MAX_SECONDS)
			return fail_at(err, bad_col, (size_t)(p - value) + 1,
				       "expected the seconds until the device plugin registers "
				       "(0-86400)");
		n = n * 10 + (*p - '0');
	}
	if (n > KUBELET_MAX_SECONDS)
		return fail_at(err, bad_col, (size_t)(comma - value) + 2,
			       "expected the seconds until the device plugin registers (0-86400)");
	out->seconds = (int)n;
	return 0;
}

static void fmt_time(long long t, char *out, size_t size)
{
	time_t tt = (time_t)t;
	struct tm tm;

	gmtime_r(&tt, &tm);
	strftime(out, size, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

char *kubelet_fault_format(const struct kubelet_fault *f)
{
	char ts[32];

	fmt_time(f->at, ts, sizeof(ts));
	return gs_xasprintf("%s@%s,%d", kubelet_kind_name(f->kind), ts, f->seconds);
}

/* The node's Ready condition, or NULL. */
static const json_t *ready_of(const json_t *node)
{
	const json_t *conds = kobj_get(node, "status.conditions");
	size_t i;
	json_t *c;

	json_array_foreach ((json_t *)conds, i, c)
		if (!strcmp(kobj_text(c, "type"), "Ready"))
			return c;
	return NULL;
}

/* The window's own Ready=False: what this plan writes, nobody else. */
static bool shows_window(const json_t *node)
{
	const json_t *c = ready_of(node);

	return c && !strcmp(kobj_text(c, "status"), "False") &&
	       !strcmp(kobj_text(c, "reason"), "KubeletNotReady") &&
	       !strcmp(kobj_text(c, "message"), KUBELET_NOT_READY_MESSAGE);
}

/*
 * The node's Lease as its kubelet holds it (holder the node's name): renewed
 * now for KUBELET_LEASE_SECONDS, or (release) let lapse within a second so
 * that whoever ran the node before takes it back.
 */
static json_t *lease_patch(const char *name, bool release, long long now)
{
	return heartbeat_lease_patch(name, release ? 1 : KUBELET_LEASE_SECONDS, now * 1000000, NULL,
				     NULL, NULL);
}

void kubelet_plan_node(const json_t *node, long long now, struct kubelet_plan *out)
{
	const char *v = kobj_annotation(node, NODEHW_ANN_KUBELET_RESTART);
	const char *name = kobj_text(node, "metadata.name");
	struct gs_error e;
	size_t col;

	memset(out, 0, sizeof(*out));
	gs_warnings_init(&out->notes);
	if (!now)
		now = (long long)time(NULL);
	if (v && *v) {
		if (kubelet_fault_parse(v, &out->fault, &col, &e) < 0)
			gs_warnings_add(
				&out->notes,
				"annotation " NODEHW_ANN_KUBELET_RESTART
				" \"%s\": %s; ignored ('gpushare fault kubelet NODE --clear' "
				"removes it)",
				v, e.msg);
		else
			out->declared = true;
	}
	if (out->declared) {
		out->until = out->fault.at + out->fault.seconds;
		if (now >= out->until)
			out->plugin_started_at = out->until;
	}
	if (out->declared && now < out->fault.at) {
		/* Declared for later: nothing yet. */
		out->replan_at = out->fault.at;
		return;
	}
	if (out->declared && now < out->until) {
		char ts[32];

		out->phase = KUBELET_WINDOW;
		out->capacity_removed = now >= out->fault.at + KUBELET_STOP_GRACE_SECONDS;
		if (!shows_window(node))
			out->status_patch =
				heartbeat_status_patch(KUBELET_NOT_READY_MESSAGE, false, now);
		out->lease_patch = lease_patch(name, false, now);
		out->replan_at = now + KUBELET_LEASE_RENEW_SECONDS < out->until
					 ? now + KUBELET_LEASE_RENEW_SECONDS
					 : out->until;
		fmt_time(out->until, ts, sizeof(ts));
		out->why = gs_xasprintf(
			"kubelet %s at %llds: the device manager read its checkpoint, every "
			"resource the plugin registered has no healthy device until the plugin "
			"registers again at %s (" DM " readCheckpoint :561-566, GetCapacity "
			":477-490%s); node Ready=False (KubeletNotReady)",
			out->fault.kind == KUBELET_REBOOT ? "rebooted" : "restarted",
			now - out->fault.at, ts,
			out->capacity_removed ? "; past endpointStopGracePeriod the resources "
						"are dropped, :493-511"
					      : "");
		return;
	}
	if (shows_window(node)) {
		/* Over (or no longer declared): the kubelet posts Ready, its Lease goes back. */
		out->phase = KUBELET_RECOVERING;
		out->status_patch = heartbeat_status_patch(NULL, false, now);
		out->lease_patch = lease_patch(name, true, now);
		out->why = gs_xstrdup("the device plugin registered again: the node is Ready and "
				      "advertises its devices");
	}
}

void kubelet_plan_release(struct kubelet_plan *p)
{
	json_decref(p->status_patch);
	json_decref(p->lease_patch);
	free(p->why);
	gs_warnings_release(&p->notes);
	memset(p, 0, sizeof(*p));
}

/* ---- the device manager's admission in the window ---- */

struct verdict {
	const struct kubelet_plan *k;
	const json_t *node, *pod, *held;
	bool readmit, removed;
	char *reason, *message;
};

static bool registered(const struct verdict *v, const char *res)
{
	return !v->removed && json_object_get(kobj_map(v->node, "status.capacity"), res);
}

static bool held(const struct verdict *v, const char *res)
{
	return json_integer_value(json_object_get(v->held, res)) > 0;
}

/* isDevicePluginResource (manager.go:1109-1120): registered, or devices still allocated. */
static bool serves(void *arg, const char *res)
{
	const struct verdict *v = arg;

	return !strncmp(res, "nvidia.com/", 11) && (registered(v, res) || held(v, res));
}

/* devicesToAllocate (manager.go:604-658) for one container and resource. */
static int step(void *arg, const struct devicewalk_step *st)
{
	struct verdict *v = arg;
	/* An app container or a sidecar still runs after a restart; a plain init container exited.
	 */
	bool running = v->readmit && v->k->fault.kind == KUBELET_RESTART &&
		       !strcmp(kobj_text(v->pod, "status.phase"), "Running") && !st->leaves;

	if (running)
		return 0; /* :632-635 */
	v->reason = gs_xstrdup("UnexpectedAdmissionError");
	if (!registered(v, st->resource))
		v->message = gs_xasprintf("Allocate failed due to cannot allocate unregistered "
					  "device %s, which is unexpected",
					  st->resource); /* :647-649 */
	else
		v->message = gs_xasprintf("Allocate failed due to no healthy devices present; "
					  "cannot allocate unhealthy devices %s, which is "
					  "unexpected",
					  st->resource); /* :651-654 */
	return 1;
}

/*
 * The general predicate (lifecycle/predicate.go:229, :396-398) for a
 * resource no plugin serves any more that the node shows at 0 (past
 * endpointStopGracePeriod): the pod's request, app containers summed or
 * the largest init container, whichever is more.
 */
static int predicate(struct verdict *v)
{
	const json_t *cap = kobj_map(v->node, "status.capacity");
	const char *res;
	json_t *q;

	json_object_foreach ((json_t *)cap, res, q) {
		int64_t sum = 0, init = 0, a;
		size_t i;
		json_t *c;

		if (strncmp(res, "nvidia.com/", 11) || serves(v, res))
			continue;
		json_array_foreach (kobj_get(v->pod, "spec.containers"), i, c)
			if (devicewalk_ask(c, res, &a, NULL) == 0)
				sum += a;
		json_array_foreach (kobj_get(v->pod, "spec.initContainers"), i, c)
			if (devicewalk_ask(c, res, &a, NULL) == 0 && a > init)
				init = a;
		if (init > sum)
			sum = init;
		if (sum <= 0)
			continue;
		v->reason = gs_xasprintf("OutOf%s", res);
		v->message = gs_xasprintf("Node didn't have enough resource: %s, requested: %lld, "
					  "used: 0, capacity: 0",
					  res, (long long)sum);
		return 1;
	}
	return 0;
}

int kubelet_pod_verdict(const struct kubelet_plan *k, const json_t *node, const json_t *pod,
			bool readmit, const json_t *held_, long long now, char **reason,
			char **message)
{
	struct verdict v = {.k = k, .node = node, .pod = pod, .held = held_, .readmit = readmit};
	int r;

	*reason = *message = NULL;
	if (k->phase != KUBELET_WINDOW)
		return 0;
	if (!now)
		now = (long long)time(NULL);
	v.removed = now >= k->fault.at + KUBELET_STOP_GRACE_SECONDS;
	r = devicewalk_pod(pod, serves, step, &v, NULL);
	if (r <= 0 && !readmit && v.removed)
		r = predicate(&v);
	if (r <= 0) {
		free(v.reason);
		free(v.message);
		return 0;
	}
	*reason = v.reason;
	*message = v.message;
	return 1;
}
