#include "kube/kuberetry.h"

#include <limits.h>
#include <string.h>
#include <strings.h>

#include "base/banned.h"

#define WATCH_MAX_BACKOFF_STEP 8u /* a failing watch waits at most base * 2^7, capped */
#define RETRY_AFTER_CAP_S 86400L

void kube_retry_policy_defaults(struct kube_retry_policy *p)
{
	if (!p->max_attempts)
		p->max_attempts = KUBE_RETRY_ATTEMPTS;
	if (p->base_ms <= 0)
		p->base_ms = KUBE_RETRY_BASE_MS;
	if (p->max_ms <= 0)
		p->max_ms = KUBE_RETRY_MAX_MS;
	if (p->deadline_ms <= 0)
		p->deadline_ms = KUBE_RETRY_DEADLINE_MS;
}

uint64_t kube_rng_next(uint64_t *s)
{
	/* xorshift64*: jitter only, not security. */
	uint64_t x = *s;

	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	*s = x;
	return x * 2685821657736338717ULL;
}

uint64_t kube_rng_seed(long long now_ms, const void *salt)
{
	uint64_t s = (uint64_t)now_ms ^ ((uint64_t)(uintptr_t)salt << 16);

	return s ? s : 0x9e3779b97f4a7c15ULL;
}

long kube_retry_delay(const struct kube_retry_policy *p, const char *method,
		      enum kube_attempt_end end, int code, bool sent_nothing, long retry_after_s,
		      unsigned attempt, long long left_ms, uint64_t *rng)
{
	bool idempotent = strcmp(method, "POST") != 0;
	bool retry;
	long long d = p->base_ms;

	if (attempt >= p->max_attempts)
		return -1;
	switch (end) {
	case KUBE_END_ANSWERED:
		retry = code == 429 || (code >= 500 && idempotent);
		break;
	case KUBE_END_UNREACHABLE:
		/* kubectl fails at once there; a daemon waits for its apiserver. */
		retry = p->retry_unreachable && (idempotent || sent_nothing);
		break;
	case KUBE_END_TRANSIENT:
		retry = idempotent || sent_nothing;
		break;
	default:
		retry = false;
	}
	if (!retry)
		return -1;
	if (end == KUBE_END_ANSWERED && retry_after_s > 0) {
		d = (long long)retry_after_s * 1000;
	} else {
		for (unsigned i = 1; i < attempt && d < p->max_ms; i++)
			d *= 2;
		if (d > p->max_ms)
			d = p->max_ms;
		d = d / 2 + (long long)(kube_rng_next(rng) % (uint64_t)(d / 2 + 1));
	}
	/* A wait that would end past the deadline: fail now with what we have. */
	return d < left_ms ? (long)d : -1;
}

long kube_watch_delay(const struct kube_retry_policy *p, unsigned failures, int code,
		      long retry_after_s, uint64_t *rng)
{
	struct kube_retry_policy w = *p;
	unsigned step = failures < WATCH_MAX_BACKOFF_STEP ? failures : WATCH_MAX_BACKOFF_STEP;
	bool answered = code >= 500 || code == 429;
	long delay;

	w.max_attempts = UINT_MAX;
	if (w.max_ms > KUBE_WATCH_BACKOFF_MAX_MS)
		w.max_ms = KUBE_WATCH_BACKOFF_MAX_MS;
	delay = kube_retry_delay(&w, "GET", answered ? KUBE_END_ANSWERED : KUBE_END_TRANSIENT, code,
				 true, retry_after_s, step + 1, LLONG_MAX, rng);
	return delay < 0 ? w.max_ms : delay;
}

long kube_retry_after_header(const char *line, size_t n)
{
	static const char name[] = "retry-after:";
	size_t k = sizeof(name) - 1, i = k;
	long v = 0;

	if (n <= k || strncasecmp(line, name, k) != 0)
		return -1;
	while (i < n && (line[i] == ' ' || line[i] == '\t'))
		i++;
	while (i < n && line[i] >= '0' && line[i] <= '9' && v < RETRY_AFTER_CAP_S)
		v = v * 10 + (line[i++] - '0');
	return v < RETRY_AFTER_CAP_S ? v : RETRY_AFTER_CAP_S;
}

long kube_retry_after(long header_s, int code, const struct kube_status *st)
{
	if (header_s > 0)
		return header_s;
	return code == 429 && st ? st->retry_after_s : 0;
}
