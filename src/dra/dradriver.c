/*
 * The DRA driver's releases (docs/guide/dra.md "Driver releases"). v25.12.0 read
 * at tag v25.12.0 (commit 0882da8720c2); v0.5.0 read from the module
 * sigs.k8s.io/dra-driver-nvidia-gpu@v0.5.0 (go.sum
 * h1:CjUBJwemlt4kYy5AN+I7Ce4mMp9V4VKR97EBogSoDus=).
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dra/dradriver.h"
#include "base/escape.h"
#include "base/strbuf.h"
#include "model/kobj.h"
#include "base/banned.h"

static const struct dradriver releases[DRADRIVER_N_RELEASES] = {
	[DRADRIVER_V25_12_0] =
		{
			.release = DRADRIVER_V25_12_0,
			.version = "v25.12.0",
			.consumable_shares = false,
			.numa_node = false,
			.implicit_time_slicing = true,
			.v05_prepare_texts = false,
			.dynamic_mig_plain_gpu = false,
		},
	[DRADRIVER_V0_5_0] =
		{
			.release = DRADRIVER_V0_5_0,
			.version = "v0.5.0",
			/* cmd/gpu-kubelet-plugin/consumable_shares.go */
			.consumable_shares = true,
			/* cmd/gpu-kubelet-plugin/numa.go */
			.numa_node = true,
			/* v0.4.1 commit 67ad0a71 "Stop injecting implicit TimeSlicing" */
			.implicit_time_slicing = false,
			/* device_state.go getConfigResultsMap, api/.../validate.go */
			.v05_prepare_texts = true,
			/* partitions.go PartCapacities, PartSharedCounterSets */
			.dynamic_mig_plain_gpu = true,
		},
};

const struct dradriver *dradriver_get(enum dradriver_release r)
{
	return (unsigned)r < DRADRIVER_N_RELEASES ? &releases[r] : &releases[DRADRIVER_NEWEST];
}

const struct dradriver *dradriver_newest(void)
{
	return &releases[DRADRIVER_NEWEST];
}

const struct dradriver *dradriver_parse(const char *version, struct gs_error *err)
{
	struct strbuf sb = STRBUF_INIT;

	for (size_t i = 0; i < DRADRIVER_N_RELEASES; i++)
		if (version && !strcmp(version, releases[i].version))
			return &releases[i];
	escape_quoted(&sb, version ? version : "", version ? strlen(version) : 0);
	gs_error_set(err, "unknown DRA driver release %s (gpushare models %s and %s)", sb.buf,
		     releases[DRADRIVER_V25_12_0].version, releases[DRADRIVER_V0_5_0].version);
	strbuf_release(&sb);
	return NULL;
}

const char *dradriver_node_setting(const json_t *node, const char *key)
{
	const char *v = kobj_annotation(node, key);

	return v ? v : kobj_label(node, key);
}

const struct dradriver *dradriver_for_node(const json_t *node, const struct dradriver *def,
					   struct gs_error *err)
{
	const char *v = dradriver_node_setting(node, DRADRIVER_ANN_VERSION);
	const struct dradriver *d;

	if (!v)
		return def ? def : dradriver_newest();
	d = dradriver_parse(v, err);
	if (!d)
		gs_error_prefix(err, "node \"%s\": %s: ", kobj_text(node, "metadata.name"),
				DRADRIVER_ANN_VERSION);
	return d;
}

/* Go's strconv.Atoi: an optional sign, decimal digits, within int64. */
static int go_atoi(const char *s, long long *out)
{
	const char *p = s;
	bool neg = false;
	unsigned long long v = 0;

	if (*p == '+' || *p == '-')
		neg = *p++ == '-';
	if (!*p)
		return -1;
	for (; *p; p++) {
		if (*p < '0' || *p > '9')
			return -1;
		if (v > (ULLONG_MAX - 9) / 10)
			return -1;
		v = v * 10 + (unsigned)(*p - '0');
	}
	if (v > (unsigned long long)LLONG_MAX + (neg ? 1u : 0u))
		return -1;
	*out = neg ? (long long)(0 - v) : (long long)v;
	return 0;
}

int dradriver_shares_parse(const char *v, struct dradriver_shares *out, struct gs_error *err)
{
	long long n = 0;

	out->mode = DRADRIVER_SHARES_DISABLED;
	out->count = 0;
	if (!strcmp(v, "disabled"))
		return 0;
	if (!strcmp(v, "memory")) {
		out->mode = DRADRIVER_SHARES_MEMORY;
		return 0;
	}
	if (!strcmp(v, "unlimited")) {
		out->mode = DRADRIVER_SHARES_UNLIMITED;
		return 0;
	}
	if (go_atoi(v, &n) || n <= 0) {
		struct strbuf sb = STRBUF_INIT;

		escape_quoted(&sb, v, strlen(v));
		gs_error_set(err,
			     "invalid value for --consumable-shares: %s (must be 'disabled', "
			     "'memory', 'unlimited', or a positive integer)",
			     sb.buf);
		strbuf_release(&sb);
		return -1;
	}
	out->mode = DRADRIVER_SHARES_COUNT;
	out->count = n;
	return 0;
}

void dradriver_shares_string(const struct dradriver_shares *s, char *buf, size_t size)
{
	switch (s->mode) {
	case DRADRIVER_SHARES_UNLIMITED:
		snprintf(buf, size, "unlimited");
		break;
	case DRADRIVER_SHARES_MEMORY:
		snprintf(buf, size, "memory");
		break;
	case DRADRIVER_SHARES_COUNT:
		snprintf(buf, size, "%lld", s->count);
		break;
	default:
		snprintf(buf, size, "disabled");
	}
}
