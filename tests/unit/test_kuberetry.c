#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <limits.h>
#include <string.h>

#include "kube/kuberetry.h"

/*
 * The one retry policy (kube/kuberetry.h) every request follows, blocking or
 * on the event loop: which failures are retried per verb, the backoff, the
 * deadline, Retry-After, and a watch's own waits. The table is
 * docs/design/kubeclient.md "Retries"; the verbs' rule is client-go's
 * (k8s.io/client-go rest/request.go retries GET-like requests, never a POST
 * that may have been applied).
 */

#define NONE LLONG_MAX /* no deadline in sight */

static struct kube_retry_policy policy(void)
{
	struct kube_retry_policy p = {.base_ms = 100, .max_ms = 1000};

	kube_retry_policy_defaults(&p);
	return p;
}

static long decide(const struct kube_retry_policy *p, const char *method, enum kube_attempt_end end,
		   int code, bool sent_nothing, long retry_after_s)
{
	uint64_t rng = 42;

	return kube_retry_delay(p, method, end, code, sent_nothing, retry_after_s, 1, NONE, &rng);
}

static void defaults(void **state)
{
	struct kube_retry_policy p = {0};

	(void)state;
	kube_retry_policy_defaults(&p);
	assert_int_equal(p.max_attempts, 10);
	assert_int_equal(p.base_ms, 250);
	assert_int_equal(p.max_ms, 4000);
	assert_int_equal(p.deadline_ms, 60000);
	assert_false(p.retry_unreachable);
	/* What is set stays. */
	p = (struct kube_retry_policy){.max_attempts = 3, .base_ms = 7};
	kube_retry_policy_defaults(&p);
	assert_int_equal(p.max_attempts, 3);
	assert_int_equal(p.base_ms, 7);
}

/* docs/design/kubeclient.md "Retries", row by row. */
static void by_verb_and_failure(void **state)
{
	static const struct {
		const char *method;
		enum kube_attempt_end end;
		int code;
		bool sent_nothing, daemon, retried;
	} rows[] = {
		/* 429: every verb. */
		{"GET", KUBE_END_ANSWERED, 429, false, false, true},
		{"POST", KUBE_END_ANSWERED, 429, false, false, true},
		/* 5xx: not POST, which may have created the object. */
		{"GET", KUBE_END_ANSWERED, 503, false, false, true},
		{"PATCH", KUBE_END_ANSWERED, 500, false, false, true},
		{"PUT", KUBE_END_ANSWERED, 502, false, false, true},
		{"DELETE", KUBE_END_ANSWERED, 504, false, false, true},
		{"POST", KUBE_END_ANSWERED, 503, false, false, false},
		/* Other answers are the caller's (409: read again). */
		{"GET", KUBE_END_ANSWERED, 400, false, false, false},
		{"GET", KUBE_END_ANSWERED, 401, false, false, false},
		{"GET", KUBE_END_ANSWERED, 403, false, false, false},
		{"GET", KUBE_END_ANSWERED, 404, false, false, false},
		{"PUT", KUBE_END_ANSWERED, 409, false, false, false},
		{"GET", KUBE_END_ANSWERED, 410, false, false, false},
		{"PATCH", KUBE_END_ANSWERED, 422, false, false, false},
		/* No answer: POST only when nothing was sent. */
		{"POST", KUBE_END_TRANSIENT, 0, true, false, true},
		{"POST", KUBE_END_TRANSIENT, 0, false, false, false},
		{"PATCH", KUBE_END_TRANSIENT, 0, false, false, true},
		{"GET", KUBE_END_TRANSIENT, 0, true, false, true},
		/* Unreachable: a one-shot command fails at once, a daemon waits. */
		{"GET", KUBE_END_UNREACHABLE, 0, true, false, false},
		{"POST", KUBE_END_UNREACHABLE, 0, true, false, false},
		{"GET", KUBE_END_UNREACHABLE, 0, true, true, true},
		{"POST", KUBE_END_UNREACHABLE, 0, true, true, true},
		/* TLS, a bad URL, a response too large: never. */
		{"GET", KUBE_END_FATAL, 0, true, true, false},
		{"GET", KUBE_END_FATAL, 0, false, false, false},
	};

	(void)state;
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		struct kube_retry_policy p = policy();
		long d;

		p.retry_unreachable = rows[i].daemon;
		d = decide(&p, rows[i].method, rows[i].end, rows[i].code, rows[i].sent_nothing, 0);
		if (rows[i].retried != (d >= 0))
			fail_msg("row %zu: %s end %d code %d: delay %ld", i, rows[i].method,
				 rows[i].end, rows[i].code, d);
	}
}

/* base * 2^(n-1) capped, the lower half fixed, the upper half random; attempts run out. */
static void backoff(void **state)
{
	struct kube_retry_policy p = policy();
	uint64_t rng = 7;

	(void)state;
	for (unsigned a = 1; a < p.max_attempts; a++) {
		long cap = 100L << (a - 1), lo = 1 << 30, hi = 0;
		if (cap > 1000)
			cap = 1000;
		for (int k = 0; k < 200; k++) {
			long d = kube_retry_delay(&p, "GET", KUBE_END_ANSWERED, 503, false, 0, a,
						  NONE, &rng);
			lo = d < lo ? d : lo;
			hi = d > hi ? d : hi;
		}
		assert_true(lo >= cap / 2);
		assert_true(hi <= cap);
		assert_true(hi > lo); /* jittered */
	}
	assert_int_equal(kube_retry_delay(&p, "GET", KUBE_END_ANSWERED, 503, false, 0,
					  p.max_attempts, NONE, &rng),
			 -1);
	p.max_attempts = 1;
	assert_int_equal(kube_retry_delay(&p, "GET", KUBE_END_TRANSIENT, 0, true, 0, 1, NONE, &rng),
			 -1);
}

/* Retry-After replaces the backoff, for the answers that are retried only. */
static void retry_after_replaces_backoff(void **state)
{
	struct kube_retry_policy p = policy();

	(void)state;
	assert_int_equal(decide(&p, "PATCH", KUBE_END_ANSWERED, 429, false, 3), 3000);
	assert_int_equal(decide(&p, "GET", KUBE_END_ANSWERED, 503, false, 2), 2000);
	/* Beyond the backoff cap: honoured as sent. */
	assert_int_equal(decide(&p, "POST", KUBE_END_ANSWERED, 429, false, 30), 30000);
	assert_int_equal(decide(&p, "POST", KUBE_END_ANSWERED, 503, false, 2), -1);
	assert_int_equal(decide(&p, "GET", KUBE_END_ANSWERED, 404, false, 5), -1);
}

/* No wait may end past the deadline: the request fails at once instead. */
static void deadline(void **state)
{
	struct kube_retry_policy p = policy();
	uint64_t rng = 1;

	(void)state;
	assert_int_equal(
		kube_retry_delay(&p, "GET", KUBE_END_ANSWERED, 429, false, 30, 1, 500, &rng), -1);
	assert_int_equal(
		kube_retry_delay(&p, "GET", KUBE_END_ANSWERED, 429, false, 1, 1, 1001, &rng), 1000);
	assert_int_equal(
		kube_retry_delay(&p, "GET", KUBE_END_ANSWERED, 429, false, 1, 1, 1000, &rng), -1);
	/* The first backoff is 50-100 ms here. */
	assert_int_equal(kube_retry_delay(&p, "GET", KUBE_END_TRANSIENT, 0, true, 0, 1, 40, &rng),
			 -1);
	assert_true(kube_retry_delay(&p, "GET", KUBE_END_TRANSIENT, 0, true, 0, 1, 101, &rng) >=
		    50);
	assert_int_equal(kube_retry_delay(&p, "GET", KUBE_END_TRANSIENT, 0, true, 0, 1, 0, &rng),
			 -1);
}

/* A watch tries again within 2 s however long the outage, so it sees the apiserver back at once. */
static void watch_delays(void **state)
{
	struct kube_retry_policy p = {.base_ms = 250, .max_ms = 30000};
	uint64_t rng = 7;
	long d, longest = 0;

	(void)state;
	kube_retry_policy_defaults(&p);
	/* The first failures wait as short requests do: 250 ms doubling, upper half random. */
	d = kube_watch_delay(&p, 0, 0, 0, &rng);
	assert_true(d >= 125 && d <= 250);
	d = kube_watch_delay(&p, 2, 503, 0, &rng);
	assert_true(d >= 500 && d <= 1000);
	/* Then never more than 2 s, even where short requests may wait 30 s. */
	for (unsigned f = 0; f < 40; f++) {
		d = kube_watch_delay(&p, f, f % 2 ? 0 : 503, 0, &rng);
		assert_true(d > 0 && d <= 2000);
		if (d > longest)
			longest = d;
	}
	assert_true(longest >= 1000);
	/* Never gives up, whatever the attempts and the failure (403: RBAC not there yet). */
	p.max_attempts = 1;
	assert_true(kube_watch_delay(&p, 100, 403, 0, &rng) > 0);
	/* A lower max_ms wins; the server's Retry-After replaces the backoff. */
	p.base_ms = 20;
	p.max_ms = 200;
	for (unsigned f = 0; f < 12; f++)
		assert_true(kube_watch_delay(&p, f, 0, 0, &rng) <= 200);
	assert_int_equal(kube_watch_delay(&p, 9, 429, 1, &rng), 1000);
}

static long header(const char *line)
{
	return kube_retry_after_header(line, strlen(line));
}

static void retry_after_header(void **state)
{
	struct kube_status st = {.code = 429, .retry_after_s = 4};

	(void)state;
	assert_int_equal(header("Retry-After: 3\r\n"), 3);
	assert_int_equal(header("retry-after:7\r\n"), 7);
	assert_int_equal(header("RETRY-AFTER: \t 12\r\n"), 12);
	assert_int_equal(header("Retry-After: 0\r\n"), 0);
	/* Capped at a day. */
	assert_int_equal(header("Retry-After: 9999999999999\r\n"), 86400);
	/* The HTTP-date form, which the apiserver never sends: no wait of its own. */
	assert_int_equal(header("Retry-After: Wed, 21 Oct 2015 07:28:00 GMT\r\n"), 0);
	/* Other headers, and no header at all. */
	assert_int_equal(header("Content-Type: application/json\r\n"), -1);
	assert_int_equal(header("Retry-After-Extra: 3\r\n"), -1);
	assert_int_equal(header("Retry-After:"), -1);
	assert_int_equal(header("HTTP/1.1 429 Too Many Requests\r\n"), -1);
	/* The header wins; else a 429 Status's details.retryAfterSeconds; else none. */
	assert_int_equal(kube_retry_after(2, 429, &st), 2);
	assert_int_equal(kube_retry_after(0, 429, &st), 4);
	st.code = 503;
	assert_int_equal(kube_retry_after(0, 503, &st), 0);
	assert_int_equal(kube_retry_after(5, 503, &st), 5);
	assert_int_equal(kube_retry_after(0, 429, NULL), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(defaults),
		cmocka_unit_test(by_verb_and_failure),
		cmocka_unit_test(backoff),
		cmocka_unit_test(retry_after_replaces_backoff),
		cmocka_unit_test(deadline),
		cmocka_unit_test(watch_delays),
		cmocka_unit_test(retry_after_header),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
