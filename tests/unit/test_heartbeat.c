#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <string.h>

#include "engine/heartbeat.h"

/* A node's heartbeats as its kubelet writes them (engine/heartbeat.h). */

static const char *text(const json_t *o, const char *a, const char *b)
{
	return json_string_value(json_object_get(json_object_get(o, a), b));
}

static void micro_times(void **state)
{
	(void)state;
	/* metav1.MicroTime as the apiserver returns it, and whole seconds. */
	assert_true(heartbeat_parse_micro("2026-12-03T10:00:00.123456Z") ==
		    1796292000LL * 1000000 + 123456);
	assert_true(heartbeat_parse_micro("2026-12-03T10:00:00Z") == 1796292000LL * 1000000);
	/* Fewer or more digits: microseconds, the rest dropped. */
	assert_true(heartbeat_parse_micro("2026-12-03T10:00:00.5Z") ==
		    1796292000LL * 1000000 + 500000);
	assert_true(heartbeat_parse_micro("2026-12-03T10:00:00.123456789Z") ==
		    1796292000LL * 1000000 + 123456);
	assert_true(heartbeat_parse_micro(NULL) == -1);
	assert_true(heartbeat_parse_micro("2026-12-03T10:00:00.Z") == -1);
	assert_true(heartbeat_parse_micro("2026-12-03T10:00:00.12+01:00") == -1);
	assert_true(heartbeat_parse_micro("2026-12-03T10:00:00.1234567890Z") == -1);
	assert_true(heartbeat_parse_micro("yesterday") == -1);
}

static void lease_read(void **state)
{
	json_t *l = json_loads("{\"metadata\":{\"name\":\"n1\",\"resourceVersion\":\"77\","
			       "\"ownerReferences\":[{\"kind\":\"Node\"}]},\"spec\":{"
			       "\"holderIdentity\":\"kwok-1\",\"leaseDurationSeconds\":40,"
			       "\"renewTime\":\"2026-12-03T10:00:00.000001Z\"}}",
			       0, NULL);
	struct heartbeat_lease h;

	(void)state;
	heartbeat_lease_read(l, &h);
	assert_string_equal(h.holder, "kwok-1");
	assert_string_equal(h.rv, "77");
	assert_int_equal(h.duration, 40);
	assert_true(h.renew_us == 1796292000LL * 1000000 + 1);
	assert_true(h.owned);
	json_decref(l);
	/* Nothing readable: no holder, no duration, renewTime -1. */
	l = json_loads("{\"spec\":{\"leaseDurationSeconds\":\"40\",\"renewTime\":7}}", 0, NULL);
	heartbeat_lease_read(l, &h);
	assert_null(h.holder);
	assert_null(h.rv);
	assert_int_equal(h.duration, 0);
	assert_true(h.renew_us == -1);
	assert_false(h.owned);
	json_decref(l);
}

static void lease_patches(void **state)
{
	json_t *p;
	const json_t *owner;

	(void)state;
	/* A renewal as the holder itself writes it: renewTime only, six digits. */
	p = heartbeat_lease_patch(NULL, 0, 1796292000LL * 1000000 + 42, NULL, NULL, NULL);
	assert_string_equal(text(p, "spec", "renewTime"), "2026-12-03T10:00:00.000042Z");
	assert_int_equal(json_object_size(json_object_get(p, "spec")), 1);
	assert_null(json_object_get(p, "metadata"));
	json_decref(p);
	/* Held under a name, for a duration, conditional on the resourceVersion, owned by the
	 * Node. */
	p = heartbeat_lease_patch("n1", 40, 1796292000LL * 1000000, "77", "n1", "uid-1");
	assert_string_equal(text(p, "spec", "holderIdentity"), "n1");
	assert_int_equal(json_integer_value(json_object_get(json_object_get(p, "spec"),
							    "leaseDurationSeconds")),
			 40);
	assert_string_equal(text(p, "metadata", "resourceVersion"), "77");
	owner = json_array_get(json_object_get(json_object_get(p, "metadata"), "ownerReferences"),
			       0);
	assert_string_equal(json_string_value(json_object_get(owner, "kind")), "Node");
	assert_string_equal(json_string_value(json_object_get(owner, "name")), "n1");
	assert_string_equal(json_string_value(json_object_get(owner, "uid")), "uid-1");
	json_decref(p);
}

static void renew_interval(void **state)
{
	uint64_t rng = 0;
	long lo = 1 << 30, hi = 0;

	(void)state;
	/* A quarter of 40 s, up to 4% later; a quarter of the Lease's own duration. */
	for (int i = 0; i < 2000; i++) {
		long ms = heartbeat_renew_ms(0, &rng);
		assert_true(ms >= 10000 && ms <= 10400);
		lo = ms < lo ? ms : lo;
		hi = ms > hi ? ms : hi;
	}
	assert_true(lo < 10050 && hi > 10350);
	assert_true(heartbeat_renew_ms(8, &rng) >= 2000 && heartbeat_renew_ms(8, &rng) <= 2080);
}

static void status_patches(void **state)
{
	json_t *p = heartbeat_status_patch(NULL, true, 1796292000LL);
	const json_t *conds = json_object_get(json_object_get(p, "status"), "conditions"), *c;
	size_t i;
	int seen = 0;

	(void)state;
	assert_int_equal(json_array_size(conds), 4);
	json_array_foreach (conds, i, c) {
		const char *type = json_string_value(json_object_get(c, "type"));
		const char *st = json_string_value(json_object_get(c, "status"));

		assert_string_equal(json_string_value(json_object_get(c, "lastHeartbeatTime")),
				    "2026-12-03T10:00:00Z");
		if (!strcmp(type, "Ready")) {
			assert_string_equal(st, "True");
			assert_string_equal(json_string_value(json_object_get(c, "message")),
					    "kubelet is posting ready status");
			seen |= 1;
		} else {
			assert_string_equal(st, "False");
			seen |= !strcmp(type, "MemoryPressure") ? 2
				: !strcmp(type, "DiskPressure") ? 4
				: !strcmp(type, "PIDPressure")	? 8
								: 16;
		}
	}
	assert_int_equal(seen, 15);
	json_decref(p);
	/* Not ready: the Ready condition alone, with the message given. */
	p = heartbeat_status_patch("runtime down", false, 1796292000LL);
	conds = json_object_get(json_object_get(p, "status"), "conditions");
	assert_int_equal(json_array_size(conds), 1);
	c = json_array_get(conds, 0);
	assert_string_equal(json_string_value(json_object_get(c, "status")), "False");
	assert_string_equal(json_string_value(json_object_get(c, "reason")), "KubeletNotReady");
	assert_string_equal(json_string_value(json_object_get(c, "message")), "runtime down");
	json_decref(p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(micro_times),	  cmocka_unit_test(lease_read),
		cmocka_unit_test(lease_patches),  cmocka_unit_test(renew_interval),
		cmocka_unit_test(status_patches),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
