#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/kubeversion.h"
#include "base/strbuf.h"
#include "base/escape.h"
#include "base/banned.h"

/*
 * pkg/scheduler/framework/plugins/dynamicresources/dynamicresources.go
 * PostFilter: "no new claims to deallocate" and "still not schedulable"
 * through v1.36.3; v1.37.2 returns fwk.NewStatus(fwk.Unschedulable) with no
 * message. "deallocation of ResourceClaim completed" when it deallocates a
 * claim: the same text in every dynamicresources.go read (v1.34 on); for
 * v1.37.2 assumed unchanged, as that path's status was not read there.
 * pkg/features/kube_features.go: DRAExtendedResource (1.34 Alpha,
 * default false; 1.36 Beta, default true; 1.37 GA, LockToDefault);
 * DRAConsumableCapacity (1.34 Alpha, default false; 1.36 Beta, default true).
 */
#define DEALLOCATED "deallocation of ResourceClaim completed"
static const struct kubeversion releases[] = {
	/* version, minor, DRAExtendedResource default, its stage, locked, claims charged its
	   name, PostFilter texts (no claims, still, deallocated), counters apart,
	   BalancedAllocation by change, DRAConsumableCapacity default */
	{"v1.34.4", 34, false, KUBEGATE_ALPHA, false, false, "no new claims to deallocate",
	 "still not schedulable", DEALLOCATED, false, false, false},
	{"v1.35.4", 35, false, KUBEGATE_ALPHA, false, true, "no new claims to deallocate",
	 "still not schedulable", DEALLOCATED, true, false, false},
	{"v1.36.3", 36, true, KUBEGATE_BETA, false, true, "no new claims to deallocate",
	 "still not schedulable", DEALLOCATED, true, true, true},
	{"v1.37.2", 37, true, KUBEGATE_GA, true, true, NULL, NULL, DEALLOCATED, true, true, true},
};
#define N_RELEASES (sizeof(releases) / sizeof(releases[0]))

const struct kubeversion *kubeversion_newest(void)
{
	return &releases[N_RELEASES - 1];
}

const char *kubeversion_list(void)
{
	static char list[128];

	if (!list[0])
		for (size_t i = 0; i < N_RELEASES; i++)
			snprintf(list + strlen(list), sizeof(list) - strlen(list), "%s%s",
				 i ? ", " : "", releases[i].version);
	return list;
}

/* 1.x's minor of "v1.36.3", "1.36", "v1.36.3+k3s1"; -1 when it is none. */
static long minor_of(const char *version)
{
	const char *p = version ? version : "";
	char *end;
	long minor;

	if (*p == 'v')
		p++;
	if (strtol(p, &end, 10) != 1 || end == p || *end != '.')
		return -1;
	p = end + 1;
	minor = strtol(p, &end, 10);
	if (end == p || (*end && *end != '.' && *end != '+' && *end != '-'))
		return -1;
	return minor;
}

const struct kubeversion *kubeversion_for_server(const char *git_version)
{
	long minor = minor_of(git_version);

	if (minor < 0)
		return NULL;
	if (minor <= releases[0].minor)
		return &releases[0];
	for (size_t i = 0; i < N_RELEASES; i++)
		if (releases[i].minor == minor)
			return &releases[i];
	return &releases[N_RELEASES - 1];
}

const struct kubeversion *kubeversion_parse(const char *version, struct gs_error *err)
{
	long minor = minor_of(version);

	for (size_t i = 0; i < N_RELEASES && minor >= 0; i++)
		if (releases[i].minor == minor)
			return &releases[i];
	struct strbuf sb = STRBUF_INIT;
	escape_quoted(&sb, version ? version : "", version ? strlen(version) : 0);
	gs_error_set(err, "unknown Kubernetes version %s (gpushare models %s)", sb.buf,
		     kubeversion_list());
	strbuf_release(&sb);
	return NULL;
}

const char *kubegate_stage_name(enum kubegate_stage stage)
{
	switch (stage) {
	case KUBEGATE_ALPHA:
		return "alpha";
	case KUBEGATE_BETA:
		return "beta";
	case KUBEGATE_GA:
		return "GA";
	}
	return "?";
}

void kubegates_defaults(struct kubegates *g, const struct kubeversion *kv)
{
	g->dra_extended_resource = kv->dra_extended_resource;
	g->dra_consumable_capacity = kv->dra_consumable_capacity;
}

int kubegates_check(const struct kubegates *g, const struct kubeversion *kv, struct gs_error *err)
{
	if (kv->dra_extended_resource_locked &&
	    g->dra_extended_resource != kv->dra_extended_resource) {
		/* component-base featuregate's words */
		gs_error_set(err,
			     "cannot set feature gate DRAExtendedResource to %s, feature is "
			     "locked to %s",
			     g->dra_extended_resource ? "true" : "false",
			     kv->dra_extended_resource ? "true" : "false");
		return -1;
	}
	return 0;
}

int kubegates_parse(struct kubegates *g, const char *spec, struct gs_error *err)
{
	const char *p = spec;

	while (*p) {
		size_t len = strcspn(p, ",");
		const char *eq = memchr(p, '=', len);
		size_t klen = eq ? (size_t)(eq - p) : len;
		const char *val = eq ? eq + 1 : "";
		size_t vlen = eq ? len - klen - 1 : 0;
		bool on;

		if (vlen == 4 && !strncmp(val, "true", 4))
			on = true;
		else if (vlen == 5 && !strncmp(val, "false", 5))
			on = false;
		else {
			gs_error_set(err, "feature gate '%.*s': want NAME=true or NAME=false",
				     (int)len, p);
			return -1;
		}
		bool *gate = NULL;
		if (klen == strlen("DRAExtendedResource") &&
		    !strncmp(p, "DRAExtendedResource", klen))
			gate = &g->dra_extended_resource;
		else if (klen == strlen("DRAConsumableCapacity") &&
			 !strncmp(p, "DRAConsumableCapacity", klen))
			gate = &g->dra_consumable_capacity;
		if (!gate) {
			gs_error_set(err,
				     "unknown feature gate '%.*s' (gpushare models: "
				     "DRAExtendedResource, DRAConsumableCapacity)",
				     (int)klen, p);
			return -1;
		}
		*gate = on;
		p += len;
		if (*p == ',')
			p++;
	}
	return 0;
}
