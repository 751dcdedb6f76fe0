#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <cmocka.h>
#include <stdlib.h>
#include <string.h>

#include "engine/kubeletrestart.h"

/*
 * A kubelet restart or node reboot (engine/kubeletrestart.h): the
 * declaration read strictly, the window's phases, and the device manager's
 * verdicts in kubelet v1.37.2's words.
 */

#define T0 1796335660LL /* 2026-12-03T22:07:40Z */

static void parse_and_format(void **state)
{
	struct kubelet_fault f;
	struct gs_error err;
	size_t col;
	char *s;

	(void)state;
	assert_int_equal(kubelet_fault_parse("reboot@2026-12-03T22:07:40Z", &f, &col, &err), 0);
	assert_int_equal(f.kind, KUBELET_REBOOT);
	assert_int_equal(f.at, T0);
	assert_int_equal(f.seconds, KUBELET_REBOOT_SECONDS);
	assert_int_equal(kubelet_fault_parse("restart@2026-12-03T22:07:40Z,25", &f, &col, &err), 0);
	assert_int_equal(f.kind, KUBELET_RESTART);
	assert_int_equal(f.seconds, 25);
	s = kubelet_fault_format(&f);
	assert_string_equal(s, "restart@2026-12-03T22:07:40Z,25");
	free(s);

	assert_int_equal(kubelet_fault_parse("crash@2026-12-03T22:07:40Z", &f, &col, &err), -1);
	assert_int_equal(col, 1);
	assert_int_equal(kubelet_fault_parse("restart@2026-12-03 22:07:40Z", &f, &col, &err), -1);
	assert_int_equal(col, 9);
	assert_string_equal(err.msg, "character 9: expected an RFC 3339 time in UTC "
				     "(2026-12-03T10:00:00Z)");
	assert_int_equal(kubelet_fault_parse("reboot@2026-12-03T22:07:40Z,9x", &f, &col, &err), -1);
	assert_int_equal(col, 30);
	assert_int_equal(kubelet_fault_parse("reboot@2026-12-03T22:07:40Z,86401", &f, &col, &err),
			 -1);
	assert_int_equal(kubelet_fault_parse("reboot@2026-12-03T22:07:40Z,", &f, &col, &err), -1);
}

/* A node with 8 nvidia.com/gpu registered, the declaration `decl` and Ready `ready`. */
static json_t *node(const char *decl, const char *ready_status, const char *ready_msg)
{
	json_t *n = json_pack("{s:{s:s,s:{s:s}},s:{s:{s:s},s:[{s:s,s:s,s:s,s:s}]}}", "metadata",
			      "name", "n1", "annotations", "gpushare.io/gpu-product", "Tesla T4",
			      "status", "capacity", "nvidia.com/gpu", "0", "conditions", "type",
			      "Ready", "status", ready_status, "reason",
			      strcmp(ready_status, "True") ? "KubeletNotReady" : "KubeletReady",
			      "message", ready_msg);

	assert_non_null(n);
	if (decl)
		json_object_set_new(json_object_get(json_object_get(n, "metadata"), "annotations"),
				    "gpushare.io/kubelet-restart", json_string(decl));
	return n;
}

static const char *ready_in(const json_t *patch)
{
	return json_string_value(json_object_get(
		json_array_get(json_object_get(json_object_get(patch, "status"), "conditions"), 0),
		"status"));
}

static void window_phases(void **state)
{
	json_t *n =
		node("restart@2026-12-03T22:07:40Z,30", "True", "kubelet is posting ready status");
	struct kubelet_plan k;

	(void)state;
	/* Declared for later: nothing yet, planned again then. */
	kubelet_plan_node(n, T0 - 5, &k);
	assert_int_equal(k.phase, KUBELET_STEADY);
	assert_int_equal(k.replan_at, T0);
	kubelet_plan_release(&k);

	/* In the window: Ready=False, the Lease held as the kubelet holds it, renewed in 10 s. */
	kubelet_plan_node(n, T0 + 3, &k);
	assert_int_equal(k.phase, KUBELET_WINDOW);
	assert_string_equal(ready_in(k.status_patch), "False");
	assert_string_equal(json_string_value(json_object_get(
				    json_object_get(k.lease_patch, "spec"), "holderIdentity")),
			    "n1");
	assert_int_equal(json_integer_value(json_object_get(json_object_get(k.lease_patch, "spec"),
							    "leaseDurationSeconds")),
			 40);
	assert_int_equal(k.replan_at, T0 + 13);
	kubelet_plan_release(&k);
	/* The last renewal is cut to the window's end. */
	kubelet_plan_node(n, T0 + 25, &k);
	assert_int_equal(k.replan_at, T0 + 30);
	kubelet_plan_release(&k);
	json_decref(n);

	/* Already NotReady: only the Lease is renewed. */
	n = node("restart@2026-12-03T22:07:40Z,30", "False", KUBELET_NOT_READY_MESSAGE);
	kubelet_plan_node(n, T0 + 3, &k);
	assert_null(k.status_patch);
	assert_non_null(k.lease_patch);
	kubelet_plan_release(&k);

	/* Over: Ready again, the Lease let lapse, the plugin started at the window's end. */
	kubelet_plan_node(n, T0 + 31, &k);
	assert_int_equal(k.phase, KUBELET_RECOVERING);
	assert_string_equal(ready_in(k.status_patch), "True");
	assert_int_equal(json_integer_value(json_object_get(json_object_get(k.lease_patch, "spec"),
							    "leaseDurationSeconds")),
			 1);
	assert_int_equal(k.plugin_started_at, T0 + 30);
	kubelet_plan_release(&k);
	json_decref(n);

	/* The declaration removed mid-window: the same. */
	n = node(NULL, "False", KUBELET_NOT_READY_MESSAGE);
	kubelet_plan_node(n, T0 + 3, &k);
	assert_int_equal(k.phase, KUBELET_RECOVERING);
	kubelet_plan_release(&k);
	json_decref(n);

	/* Someone else's NotReady is not ours to end. */
	n = node(NULL, "False", "PLEG is not healthy");
	kubelet_plan_node(n, T0 + 3, &k);
	assert_int_equal(k.phase, KUBELET_STEADY);
	assert_null(k.status_patch);
	kubelet_plan_release(&k);
	json_decref(n);

	/* Unreadable: a note, nothing played. */
	n = node("restart@yesterday", "True", "kubelet is posting ready status");
	kubelet_plan_node(n, T0 + 3, &k);
	assert_int_equal(k.phase, KUBELET_STEADY);
	assert_int_equal(k.notes.n, 1);
	kubelet_plan_release(&k);
	json_decref(n);
}

/* A pod asking `gpus` in its app container, `init` in a plain init container (0: none). */
static json_t *pod(const char *phase, const char *gpus, const char *init, bool sidecar)
{
	json_t *p =
		json_pack("{s:{s:s,s:s},s:{s:[{s:s,s:{s:{s:s}}}]},s:{s:s}}", "metadata", "name",
			  "p", "namespace", "default", "spec", "containers", "name", "main",
			  "resources", "limits", "nvidia.com/gpu", gpus, "status", "phase", phase);

	if (init)
		json_object_set_new(json_object_get(p, "spec"), "initContainers",
				    json_pack("[{s:s,s:s?,s:{s:{s:s}}}]", "name", "prep",
					      "restartPolicy", sidecar ? "Always" : NULL,
					      "resources", "limits", "nvidia.com/gpu", init));
	return p;
}

static int verdict(const char *decl, long long now, json_t *p, bool readmit, const json_t *held,
		   char **reason, char **message)
{
	json_t *n = node(decl, "False", KUBELET_NOT_READY_MESSAGE);
	struct kubelet_plan k;
	int r;

	kubelet_plan_node(n, now, &k);
	r = kubelet_pod_verdict(&k, n, p, readmit, held, now, reason, message);
	kubelet_plan_release(&k);
	json_decref(n);
	json_decref(p);
	return r;
}

#define NO_HEALTHY                                                                                 \
	"Allocate failed due to no healthy devices present; cannot allocate unhealthy devices "    \
	"nvidia.com/gpu, which is unexpected"

static void device_manager_verdicts(void **state)
{
	const char *restart = "restart@2026-12-03T22:07:40Z,1000";
	const char *reboot = "reboot@2026-12-03T22:07:40Z,1000";
	json_t *held = json_pack("{s:i}", "nvidia.com/gpu", 2);
	char *reason, *message;

	(void)state;
	/* A pod bound in the window. */
	assert_int_equal(verdict(restart, T0 + 5, pod("Pending", "1", NULL, false), false, NULL,
				 &reason, &message),
			 1);
	assert_string_equal(reason, "UnexpectedAdmissionError");
	assert_string_equal(message, NO_HEALTHY);
	free(reason);
	free(message);

	/* A restart: a running container keeps its devices (manager.go:632-635). */
	assert_int_equal(verdict(restart, T0 + 5, pod("Running", "1", NULL, false), true, held,
				 &reason, &message),
			 0);
	/* ... a sidecar runs too ... */
	assert_int_equal(verdict(restart, T0 + 5, pod("Running", "1", "1", true), true, held,
				 &reason, &message),
			 0);
	/* ... but a plain init container exited: kubernetes#124345, #138446. */
	assert_int_equal(verdict(restart, T0 + 5, pod("Running", "1", "1", false), true, held,
				 &reason, &message),
			 1);
	assert_string_equal(message, NO_HEALTHY);
	free(reason);
	free(message);
	/* A reboot: nothing runs, the pod fails (kubernetes#125579). */
	assert_int_equal(verdict(reboot, T0 + 5, pod("Running", "1", NULL, false), true, held,
				 &reason, &message),
			 1);
	assert_string_equal(message, NO_HEALTHY);
	free(reason);
	free(message);

	/* Past endpointStopGracePeriod: no longer registered. Devices still held... */
	assert_int_equal(verdict(restart, T0 + 301, pod("Pending", "1", NULL, false), false, held,
				 &reason, &message),
			 1);
	assert_string_equal(message, "Allocate failed due to cannot allocate unregistered device "
				     "nvidia.com/gpu, which is unexpected");
	free(reason);
	free(message);
	/* ... none held: the predicate, against capacity 0. */
	assert_int_equal(verdict(restart, T0 + 301, pod("Pending", "2", NULL, false), false, NULL,
				 &reason, &message),
			 1);
	assert_string_equal(reason, "OutOfnvidia.com/gpu");
	assert_string_equal(message, "Node didn't have enough resource: nvidia.com/gpu, "
				     "requested: 2, used: 0, capacity: 0");
	free(reason);
	free(message);

	/* Outside the window the kubelet has nothing to say. */
	assert_int_equal(verdict(restart, T0 + 2000, pod("Pending", "1", NULL, false), false, NULL,
				 &reason, &message),
			 0);
	json_decref(held);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(parse_and_format),
		cmocka_unit_test(window_phases),
		cmocka_unit_test(device_manager_verdicts),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
