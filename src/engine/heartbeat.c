#include "engine/heartbeat.h"

#include <stdio.h>
#include <string.h>
#include <time.h>

#include "engine/migwalk.h"
#include "model/kobj.h"
#include "base/banned.h"

long long heartbeat_parse_micro(const char *s)
{
	char whole[24];
	const char *dot;
	long long t, us = 0;
	int digits = 0;

	if (!s)
		return -1;
	dot = strchr(s, '.');
	if (!dot)
		return (t = migwalk_parse_time(s)) < 0 ? -1 : t * 1000000;
	if ((size_t)(dot - s) + 2 > sizeof(whole))
		return -1;
	memcpy(whole, s, (size_t)(dot - s));
	whole[dot - s] = 'Z';
	whole[dot - s + 1] = '\0';
	t = migwalk_parse_time(whole);
	if (t < 0)
		return -1;
	for (s = dot + 1; *s >= '0' && *s <= '9'; s++, digits++)
		if (digits < 6)
			us = us * 10 + (*s - '0');
	if (!digits || digits > 9 || s[0] != 'Z' || s[1])
		return -1;
	for (; digits < 6; digits++)
		us *= 10;
	return t * 1000000 + us;
}

void heartbeat_lease_read(const json_t *lease, struct heartbeat_lease *out)
{
	const json_t *d = kobj_get(lease, "spec.leaseDurationSeconds");
	const json_t *owners = kobj_get(lease, "metadata.ownerReferences");

	memset(out, 0, sizeof(*out));
	out->holder = kobj_string(lease, "spec.holderIdentity");
	out->rv = kobj_string(lease, "metadata.resourceVersion");
	out->duration =
		json_is_integer(d) && json_integer_value(d) > 0 && json_integer_value(d) <= 86400
			? (int)json_integer_value(d)
			: 0;
	out->renew_us = heartbeat_parse_micro(kobj_string(lease, "spec.renewTime"));
	out->owned = json_array_size(owners) > 0;
}

/* metav1.MicroTime's RFC3339Micro, in UTC. */
static void fmt_micro(long long us, char *out, size_t size)
{
	time_t tt = (time_t)(us / 1000000);
	struct tm tm;
	char sec[24];

	gmtime_r(&tt, &tm);
	strftime(sec, sizeof(sec), "%Y-%m-%dT%H:%M:%S", &tm);
	snprintf(out, size, "%s.%06lldZ", sec, us % 1000000);
}

json_t *heartbeat_lease_patch(const char *holder, int duration, long long now_us, const char *rv,
			      const char *node, const char *node_uid)
{
	char ts[40];
	json_t *spec, *patch;

	fmt_micro(now_us, ts, sizeof(ts));
	spec = json_pack("{s:s}", "renewTime", ts);
	if (holder)
		json_object_set_new(spec, "holderIdentity", json_string(holder));
	if (duration > 0)
		json_object_set_new(spec, "leaseDurationSeconds", json_integer(duration));
	patch = json_pack("{s:o}", "spec", spec);
	if (rv || (node && node_uid)) {
		json_t *md = json_object();

		if (rv)
			json_object_set_new(md, "resourceVersion", json_string(rv));
		if (node && node_uid)
			json_object_set_new(md, "ownerReferences",
					    json_pack("[{s:s,s:s,s:s,s:s}]", "apiVersion", "v1",
						      "kind", "Node", "name", node, "uid",
						      node_uid));
		json_object_set_new(patch, "metadata", md);
	}
	return patch;
}

long heartbeat_renew_ms(int duration, uint64_t *rng)
{
	long base = (duration > 0 ? duration : HEARTBEAT_LEASE_SECONDS) * 1000L /
		    HEARTBEAT_RENEW_FRACTION;
	uint64_t x = *rng ? *rng : 0x9e3779b97f4a7c15ull;

	x ^= x << 13;
	x ^= x >> 7;
	x ^= x << 17;
	*rng = x;
	return base + (long)(x % (uint64_t)(base * HEARTBEAT_JITTER_PERCENT / 100 + 1));
}

static json_t *condition(const char *type, const char *status, const char *reason,
			 const char *message, const char *ts)
{
	return json_pack("{s:s,s:s,s:s,s:s,s:s,s:s}", "type", type, "status", status, "reason",
			 reason, "message", message, "lastHeartbeatTime", ts, "lastTransitionTime",
			 ts);
}

json_t *heartbeat_status_patch(const char *not_ready, bool pressures, long long now)
{
	time_t tt = (time_t)now;
	struct tm tm;
	char ts[32];
	json_t *conds = json_array();

	gmtime_r(&tt, &tm);
	strftime(ts, sizeof(ts), "%Y-%m-%dT%H:%M:%SZ", &tm);
	if (pressures) {
		json_array_append_new(
			conds, condition("MemoryPressure", "False", "KubeletHasSufficientMemory",
					 "kubelet has sufficient memory available", ts));
		json_array_append_new(conds,
				      condition("DiskPressure", "False", "KubeletHasNoDiskPressure",
						"kubelet has no disk pressure", ts));
		json_array_append_new(conds,
				      condition("PIDPressure", "False", "KubeletHasSufficientPID",
						"kubelet has sufficient PID available", ts));
	}
	json_array_append_new(
		conds, not_ready ? condition("Ready", "False", "KubeletNotReady", not_ready, ts)
				 : condition("Ready", "True", "KubeletReady",
					     "kubelet is posting ready status", ts));
	return json_pack("{s:{s:o}}", "status", "conditions", conds);
}
