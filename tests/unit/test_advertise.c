#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/advertise.h"
#include "engine/mergepatch.h"
#include "model/kobj.h"

/*
 * Every expected value below is upstream's: the capacities of k8s-device-plugin
 * v0.20.0 internal/rm/device_map.go, the worked examples of the GPU Operator
 * docs (gpu-operator/gpu-sharing.rst, gpu-operator-mig.rst), the messages of
 * cmd/nvidia-device-plugin/main.go validateFlags, or the lab's outcomes
 * (README.md, The lab).
 */

static const struct catalog *cat(void)
{
	const struct catalog *c;
	struct gs_error err;

	if (catalog_builtin(&c, &err))
		fail_msg("catalog: %s", err.msg);
	return c;
}

/* A Node JSON with the given labels/annotations bodies (JSON object members). */
static json_t *node(const char *labels, const char *annotations, const char *status)
{
	char buf[8192];
	json_error_t je;
	json_t *n;

	snprintf(
		buf, sizeof(buf),
		"{\"apiVersion\":\"v1\",\"kind\":\"Node\",\"metadata\":{\"name\":\"n1\","
		"\"labels\":{%s},\"annotations\":{%s}},\"status\":%s}",
		labels ? labels : "", annotations ? annotations : "",
		status ? status
		       : "{\"capacity\":{\"cpu\":\"32\",\"memory\":\"256Gi\",\"pods\":\"110\"},"
			 "\"allocatable\":{\"cpu\":\"32\",\"memory\":\"256Gi\",\"pods\":\"110\"}}");
	n = json_loads(buf, 0, &je);
	if (!n)
		fail_msg("bad test node: %s: %s", je.text, buf);
	return n;
}

static char hwbuf[512];
static const char *hw(const char *product, const char *count)
{
	snprintf(hwbuf, sizeof(hwbuf),
		 "\"gpushare.io/gpu-product\":\"%s\",\"gpushare.io/gpu-count\":\"%s\"", product,
		 count);
	return hwbuf;
}

static struct advertisement *compute(const json_t *n, const struct dpconfig *cfg)
{
	struct nodehw *h;
	struct advertisement *adv;
	struct gs_warnings w;
	struct gs_error err;

	gs_warnings_init(&w);
	if (nodehw_from_node(cat(), n, NULL, &h, &w, &err))
		fail_msg("nodehw: %s", err.msg);
	if (advertise_compute(cat(), h, cfg, cfg ? cfg->name : "", &adv, &err))
		fail_msg("compute: %s", err.msg);
	nodehw_free(h);
	gs_warnings_release(&w);
	return adv;
}

static struct advertisement *run(const char *labels, const char *ann, const struct dpconfig *cfg)
{
	json_t *n = node(labels, ann, NULL);
	struct advertisement *adv = compute(n, cfg);
	json_decref(n);
	return adv;
}

static long res(const struct advertisement *adv, const char *name)
{
	const json_t *v = json_object_get(adv->resources, name);
	return v ? (long)json_integer_value(v) : -1;
}

static const char *lab(const struct advertisement *adv, const char *key)
{
	return json_string_value(json_object_get(adv->labels, key));
}

static bool warned(const struct advertisement *adv, const char *needle)
{
	for (size_t i = 0; i < adv->warnings.n; i++)
		if (strstr(adv->warnings.items[i], needle))
			return true;
	return false;
}

static void ok(const struct advertisement *adv)
{
	if (adv->failure)
		fail_msg("unexpected failure: %s", adv->failure);
}

/* ---- configs built by hand, as dpconfig_parse would leave them ---- */

static struct dpconfig cfg_base(const char *name, const char *mig)
{
	struct dpconfig c;

	memset(&c, 0, sizeof(c));
	c.name = (char *)name;
	c.mig_strategy = (char *)mig;
	c.fail_on_init_error = -1;
	c.time_slicing.fail_requests_greater_than_one = -1;
	c.mps.fail_requests_greater_than_one = -1;
	return c;
}

static struct dp_replicated_resource rr[4];

static struct dpconfig cfg_share(const char *name, const char *mig, bool mps, const char *res_name,
				 int replicas, bool rename)
{
	struct dpconfig c = cfg_base(name, mig);
	struct dp_sharing *s = mps ? &c.mps : &c.time_slicing;
	static char renamed[4][96];
	static int slot;

	slot = (slot + 1) % 4;
	rr[slot].name = (char *)res_name;
	rr[slot].replicas = replicas;
	rr[slot].rename = NULL;
	if (rename) {
		snprintf(renamed[slot], sizeof(renamed[slot]), "%s.shared", res_name);
		rr[slot].rename = renamed[slot];
	}
	s->present = true;
	s->rename_by_default = rename;
	s->resources = &rr[slot];
	s->n_resources = 1;
	return c;
}

/* ---- k8s-device-plugin v0.20.0 internal/rm/device_map.go rows and GPU Operator docs
 * gpu-operator/gpu-sharing.rst worked examples ---- */

/* GPU Operator docs gpu-operator/gpu-sharing.rst; k8s-device-plugin v0.20.0
 * internal/rm/device_map.go "No sharing, MIG off". */
static void plain_t4(void **state)
{
	struct advertisement *a = run(NULL, hw("Tesla T4", "4"), NULL);

	(void)state;
	ok(a);
	assert_int_equal(res(a, "nvidia.com/gpu"), 4);
	assert_int_equal(json_object_size(a->resources), 1);
	assert_string_equal(lab(a, "nvidia.com/gpu.count"), "4");
	assert_string_equal(lab(a, "nvidia.com/gpu.replicas"), "1");
	assert_string_equal(lab(a, "nvidia.com/gpu.sharing-strategy"), "none");
	assert_string_equal(lab(a, "nvidia.com/gpu.product"), "Tesla-T4");
	assert_string_equal(lab(a, "nvidia.com/gpu.memory"), "15360");
	assert_string_equal(lab(a, "nvidia.com/gpu.family"), "turing");
	assert_string_equal(lab(a, "nvidia.com/gpu.compute.major"), "7");
	assert_string_equal(lab(a, "nvidia.com/gpu.compute.minor"), "5");
	assert_string_equal(lab(a, "nvidia.com/mig.capable"), "false");
	assert_string_equal(lab(a, "nvidia.com/mps.capable"), "false");
	assert_null(lab(a, "nvidia.com/mig.strategy"));
	/* Node-level labels of every GPU node (internal/lm/nvml.go, machine-type.go, vgpu.go). */
	assert_string_equal(lab(a, "nvidia.com/gpu.mode"), "compute");
	assert_string_equal(lab(a, "nvidia.com/gpu.machine"), "unknown");
	assert_string_equal(lab(a, "nvidia.com/vgpu.present"), "false");
	assert_string_equal(lab(a, "nvidia.com/cuda.driver.major"), "580");
	assert_string_equal(lab(a, "nvidia.com/cuda.driver.minor"), "65");
	assert_string_equal(lab(a, "nvidia.com/cuda.driver.rev"), "06");
	assert_string_equal(lab(a, "nvidia.com/cuda.driver-version.full"), "580.65.06");
	assert_string_equal(lab(a, "nvidia.com/cuda.runtime.major"), "13");
	assert_string_equal(lab(a, "nvidia.com/cuda.runtime.minor"), "0");
	assert_string_equal(lab(a, "nvidia.com/cuda.runtime-version.full"), "13.0");
	assert_non_null(lab(a, "nvidia.com/gfd.timestamp"));
	assert_null(lab(a, "nvidia.com/mig.config.state")); /* no mig.config, no mig-manager */
	assert_int_equal(json_object_size(a->labels), 26);
	advertisement_free(a);
}

/* A declared driver and machine; a two-part driver version has an empty revision. */
static void driver_and_machine(void **state)
{
	struct advertisement *a = run(
		NULL,
		"\"gpushare.io/gpu-product\":\"Tesla T4\",\"gpushare.io/gpu-count\":\"1\","
		"\"gpushare.io/driver-version\":\"535.104\",\"gpushare.io/machine\":\"PowerEdge "
		"R750xa (Dell)\"",
		NULL);

	(void)state;
	ok(a);
	assert_string_equal(lab(a, "nvidia.com/cuda.driver.rev"), "");
	assert_string_equal(lab(a, "nvidia.com/cuda.driver-version.revision"), "");
	assert_string_equal(lab(a, "nvidia.com/cuda.driver-version.full"), "535.104");
	assert_string_equal(lab(a, "nvidia.com/cuda.runtime-version.full"), "12.2");
	assert_string_equal(lab(a, "nvidia.com/gpu.machine"), "PowerEdge-R750xa-Dell");
	advertisement_free(a);
}

/* GPU Operator docs gpu-operator/gpu-sharing.rst: time-slicing ×4 on 4× T4. */
static void timeslicing_t4(void **state)
{
	struct dpconfig c = cfg_share("shared", NULL, false, "nvidia.com/gpu", 4, false);
	struct advertisement *a = run(NULL, hw("Tesla T4", "4"), &c);

	(void)state;
	ok(a);
	assert_int_equal(res(a, "nvidia.com/gpu"), 16);
	assert_string_equal(lab(a, "nvidia.com/gpu.count"), "4");
	assert_string_equal(lab(a, "nvidia.com/gpu.replicas"), "4");
	assert_string_equal(lab(a, "nvidia.com/gpu.sharing-strategy"), "time-slicing");
	assert_string_equal(lab(a, "nvidia.com/gpu.product"), "Tesla-T4-SHARED");
	assert_string_equal(lab(a, "nvidia.com/mps.capable"), "false");
	advertisement_free(a);
}

/* GPU Operator docs gpu-operator/gpu-sharing.rst: renameByDefault → nvidia.com/gpu.shared, product
 * without -SHARED. */
static void rename_by_default(void **state)
{
	struct dpconfig c = cfg_share("shared", NULL, false, "nvidia.com/gpu", 4, true);
	char ann[1024];
	struct advertisement *a = run(NULL, hw("Tesla T4", "4"), &c);

	(void)state;
	ok(a);
	assert_int_equal(res(a, "nvidia.com/gpu.shared"), 16);
	assert_int_equal(res(a, "nvidia.com/gpu"), -1);
	assert_string_equal(lab(a, "nvidia.com/gpu.product"), "Tesla-T4");
	assert_string_equal(lab(a, "nvidia.com/gpu.replicas"), "4");
	assert_null(lab(a, "nvidia.com/gpu.shared.count"));
	assert_true(warned(a, "renameByDefault"));
	advertisement_free(a);

	/* Registered before → kept at 0 (k8s.io/kubernetes v1.34.4
	 * pkg/kubelet/nodestatus/setters.go). */
	snprintf(ann, sizeof(ann), "%s,\"gpushare.io/managed-resources\":\"nvidia.com/gpu\"",
		 hw("Tesla T4", "4"));
	a = run(NULL, ann, &c);
	assert_int_equal(res(a, "nvidia.com/gpu.shared"), 16);
	assert_int_equal(res(a, "nvidia.com/gpu"), 0);
	advertisement_free(a);
}

/* GPU Operator docs gpu-operator/gpu-sharing.rst: MPS ×4. */
static void mps_t4(void **state)
{
	struct dpconfig c = cfg_share("mps", NULL, true, "nvidia.com/gpu", 4, false);
	struct advertisement *a = run(NULL, hw("Tesla T4", "4"), &c);

	(void)state;
	ok(a);
	assert_int_equal(a->sharing, DP_SHARING_MPS);
	assert_int_equal(res(a, "nvidia.com/gpu"), 16);
	assert_string_equal(lab(a, "nvidia.com/gpu.sharing-strategy"), "mps");
	assert_string_equal(lab(a, "nvidia.com/gpu.product"), "Tesla-T4-SHARED");
	assert_string_equal(lab(a, "nvidia.com/mps.capable"), "true");
	advertisement_free(a);
}

/* k8s-device-plugin v0.20.0 cmd/mps-control-daemon/mps/daemon.go: MPS replicas ≤ 48 for CC ≥ 7.5, ≤
 * 16 otherwise (V100 is 7.0). */
static void mps_max_replicas(void **state)
{
	struct dpconfig c = cfg_share("mps", NULL, true, "nvidia.com/gpu", 17, false);
	struct advertisement *a = run(NULL, hw("Tesla V100-SXM2-16GB", "1"), &c);

	(void)state;
	assert_non_null(a->failure);
	assert_non_null(strstr(a->failure, "invalid MPS configuration: invalid device maximum "
					   "allowed replicas exceeded: 17 > 16"));
	advertisement_free(a);
	a = run(NULL, hw("Tesla T4", "1"), &c);
	ok(a);
	assert_int_equal(res(a, "nvidia.com/gpu"), 17);
	advertisement_free(a);
	c = cfg_share("mps", NULL, true, "nvidia.com/gpu", 49, false);
	a = run(NULL, hw("Tesla T4", "1"), &c);
	assert_non_null(strstr(a->failure, "exceeded: 49 > 48"));
	advertisement_free(a);
}

/* k8s-device-plugin v0.20.0 internal/rm/device_map.go: per-resource rename is ignored → same as no
 * rename (dpconfig resets it). */
static void mig_none_any_state(void **state)
{
	struct advertisement *a = run("\"nvidia.com/mig.config\":\"all-1g.10gb\"",
				      hw("NVIDIA H100 80GB HBM3", "2"), NULL);

	(void)state;
	ok(a);
	/* k8s-device-plugin v0.20.0 internal/rm/device_map.go "MIG none, any MIG state": whole
	 * GPUs. k8s-device-plugin v0.20.0 internal/lm/mig-strategy.go: MIG parents labelled without
	 * sharing.
	 */
	assert_int_equal(res(a, "nvidia.com/gpu"), 2);
	assert_int_equal(json_object_size(a->resources), 1);
	assert_string_equal(lab(a, "nvidia.com/gpu.replicas"), "0");
	assert_string_equal(lab(a, "nvidia.com/mig.capable"), "true");
	assert_null(lab(a, "nvidia.com/mig.strategy"));
	assert_true(warned(a, "MIG strategy is none"));
	advertisement_free(a);
}

/* GPU Operator docs gpu-operator/gpu-operator-mig.rst: single, 1× H100 80GB, all-1g.10gb. */
static void single_h100(void **state)
{
	struct dpconfig c = cfg_base("single", "single");
	struct advertisement *a = run("\"nvidia.com/mig.config\":\"all-1g.10gb\"",
				      hw("NVIDIA H100 80GB HBM3", "1"), &c);

	(void)state;
	ok(a);
	assert_int_equal(res(a, "nvidia.com/gpu"), 7);
	assert_string_equal(lab(a, "nvidia.com/mig.strategy"), "single");
	assert_string_equal(lab(a, "nvidia.com/mig.capable"), "true");
	assert_string_equal(lab(a, "nvidia.com/gpu.count"), "7");
	assert_string_equal(lab(a, "nvidia.com/gpu.product"), "NVIDIA-H100-80GB-HBM3-MIG-1g.10gb");
	assert_string_equal(lab(a, "nvidia.com/gpu.replicas"), "1");
	assert_string_equal(lab(a, "nvidia.com/gpu.sharing-strategy"), "none");
	assert_string_equal(lab(a, "nvidia.com/gpu.memory"), "9984");
	assert_string_equal(lab(a, "nvidia.com/gpu.multiprocessors"), "16");
	assert_string_equal(lab(a, "nvidia.com/gpu.slices.gi"), "1");
	assert_string_equal(lab(a, "nvidia.com/gpu.slices.ci"), "1");
	assert_string_equal(lab(a, "nvidia.com/gpu.engines.copy"), "1");
	assert_string_equal(lab(a, "nvidia.com/gpu.engines.decoder"), "1");
	assert_string_equal(lab(a, "nvidia.com/gpu.engines.encoder"), "0");
	assert_string_equal(lab(a, "nvidia.com/gpu.engines.jpeg"), "1");
	assert_string_equal(lab(a, "nvidia.com/gpu.engines.ofa"), "0");
	assert_string_equal(lab(a, "nvidia.com/gpu.family"), "hopper");
	assert_string_equal(lab(a, "nvidia.com/gpu.compute.major"), "9");
	assert_string_equal(lab(a, "nvidia.com/gpu.compute.minor"), "0");
	advertisement_free(a);

	/* GPU Operator docs gpu-operator/gpu-operator-mig.rst variants: 8× A100-40GB all-1g.5gb
	 * gives 56; 1× H100 all-3g.40gb gives 2. */
	a = run("\"nvidia.com/mig.config\":\"all-1g.5gb\"", hw("NVIDIA A100-SXM4-40GB", "8"), &c);
	ok(a);
	assert_int_equal(res(a, "nvidia.com/gpu"), 56);
	assert_string_equal(lab(a, "nvidia.com/gpu.count"), "56");
	advertisement_free(a);
	a = run("\"nvidia.com/mig.config\":\"all-3g.40gb\"", hw("NVIDIA H100 80GB HBM3", "1"), &c);
	assert_string_equal(lab(a, "nvidia.com/gpu.count"), "2");
	assert_string_equal(lab(a, "nvidia.com/gpu.product"), "NVIDIA-H100-80GB-HBM3-MIG-3g.40gb");
	assert_string_equal(lab(a, "nvidia.com/gpu.slices.gi"), "3");
	assert_string_equal(lab(a, "nvidia.com/gpu.slices.ci"), "3");
	advertisement_free(a);

	/* k8s-device-plugin v0.20.0 internal/rm/device_map.go "MIG single, no GPU MIG-enabled":
	 * like none, but mig.strategy=single. */
	a = run(NULL, hw("NVIDIA H100 80GB HBM3", "2"), &c);
	ok(a);
	assert_int_equal(res(a, "nvidia.com/gpu"), 2);
	assert_string_equal(lab(a, "nvidia.com/mig.strategy"), "single");
	assert_string_equal(lab(a, "nvidia.com/gpu.replicas"), "1");
	advertisement_free(a);
}

/* GPU Operator docs gpu-operator/gpu-operator-mig.rst: single + time-slicing ×2, old-driver
 * A100-SXM4-40GB. */
static void single_timeslicing(void **state)
{
	struct dpconfig c = cfg_share("ts", "single", false, "nvidia.com/gpu", 2, false);
	struct advertisement *a =
		run("\"nvidia.com/mig.config\":\"all-1g.5gb\"", hw("A100-SXM4-40GB", "1"), &c);

	(void)state;
	ok(a);
	assert_int_equal(res(a, "nvidia.com/gpu"), 14);
	assert_string_equal(lab(a, "nvidia.com/gpu.product"), "A100-SXM4-40GB-MIG-1g.5gb-SHARED");
	assert_string_equal(lab(a, "nvidia.com/gpu.replicas"), "2");
	assert_string_equal(lab(a, "nvidia.com/gpu.sharing-strategy"), "time-slicing");
	assert_string_equal(lab(a, "nvidia.com/gpu.count"), "7");
	advertisement_free(a);
}

/* GPU Operator docs gpu-operator/gpu-operator-mig.rst: mixed, 1× H100 80GB, all-balanced. */
static void mixed_h100_balanced(void **state)
{
	struct dpconfig c = cfg_base("mixed", "mixed");
	struct advertisement *a = run("\"nvidia.com/mig.config\":\"all-balanced\"",
				      hw("NVIDIA H100 80GB HBM3", "1"), &c);

	(void)state;
	ok(a);
	assert_int_equal(res(a, "nvidia.com/mig-1g.10gb"), 2);
	assert_int_equal(res(a, "nvidia.com/mig-2g.20gb"), 1);
	assert_int_equal(res(a, "nvidia.com/mig-3g.40gb"), 1);
	assert_int_equal(res(a, "nvidia.com/gpu"), -1);
	assert_int_equal(json_object_size(a->resources), 3);
	assert_string_equal(lab(a, "nvidia.com/mig.strategy"), "mixed");
	assert_string_equal(lab(a, "nvidia.com/gpu.count"), "1");
	assert_string_equal(lab(a, "nvidia.com/gpu.replicas"), "0");
	assert_string_equal(lab(a, "nvidia.com/gpu.sharing-strategy"), "none");
	assert_string_equal(lab(a, "nvidia.com/gpu.product"), "NVIDIA-H100-80GB-HBM3");
	assert_string_equal(lab(a, "nvidia.com/gpu.memory"), "81559");
	assert_string_equal(lab(a, "nvidia.com/mig-1g.10gb.count"), "2");
	assert_string_equal(lab(a, "nvidia.com/mig-1g.10gb.memory"), "9984");
	assert_string_equal(lab(a, "nvidia.com/mig-1g.10gb.multiprocessors"), "16");
	assert_string_equal(lab(a, "nvidia.com/mig-1g.10gb.product"),
			    "NVIDIA-H100-80GB-HBM3-MIG-1g.10gb");
	assert_string_equal(lab(a, "nvidia.com/mig-1g.10gb.replicas"), "1");
	assert_string_equal(lab(a, "nvidia.com/mig-1g.10gb.sharing-strategy"), "none");
	assert_string_equal(lab(a, "nvidia.com/mig-1g.10gb.engines.jpeg"), "1");
	assert_string_equal(lab(a, "nvidia.com/mig-2g.20gb.count"), "1");
	assert_string_equal(lab(a, "nvidia.com/mig-2g.20gb.memory"), "20096");
	assert_string_equal(lab(a, "nvidia.com/mig-2g.20gb.multiprocessors"), "32");
	assert_string_equal(lab(a, "nvidia.com/mig-2g.20gb.engines.copy"), "2");
	assert_string_equal(lab(a, "nvidia.com/mig-2g.20gb.engines.decoder"), "2");
	assert_string_equal(lab(a, "nvidia.com/mig-3g.40gb.memory"), "40320");
	assert_string_equal(lab(a, "nvidia.com/mig-3g.40gb.multiprocessors"), "60");
	assert_string_equal(lab(a, "nvidia.com/mig-3g.40gb.slices.gi"), "3");
	assert_string_equal(lab(a, "nvidia.com/mig-3g.40gb.engines.ofa"), "0");
	/* MIG resources carry no family/compute labels (k8s-device-plugin v0.20.0
	 * internal/lm/resource.go). */
	assert_null(lab(a, "nvidia.com/mig-1g.10gb.family"));
	advertisement_free(a);
}

/* GPU Operator docs gpu-operator/gpu-operator-mig.rst; k8s-device-plugin v0.20.0
 * internal/rm/device_map.go "mixed + time-slicing nvidia.com/mig-1g.5gb ×N". */
static void mixed_timeslicing(void **state)
{
	struct dpconfig c = cfg_share("ts", "mixed", false, "nvidia.com/mig-1g.5gb", 2, false);
	struct advertisement *a = run("\"nvidia.com/mig.config\":\"all-1g.5gb\"",
				      hw("NVIDIA A100-SXM4-40GB", "1"), &c);

	(void)state;
	ok(a);
	assert_int_equal(res(a, "nvidia.com/mig-1g.5gb"), 14);
	assert_string_equal(lab(a, "nvidia.com/mig-1g.5gb.count"), "7");
	assert_string_equal(lab(a, "nvidia.com/mig-1g.5gb.replicas"), "2");
	assert_string_equal(lab(a, "nvidia.com/mig-1g.5gb.sharing-strategy"), "time-slicing");
	assert_string_equal(lab(a, "nvidia.com/mig-1g.5gb.product"),
			    "NVIDIA-A100-SXM4-40GB-MIG-1g.5gb-SHARED");
	assert_string_equal(lab(a, "nvidia.com/mig-1g.5gb.memory"), "4864");
	assert_string_equal(lab(a, "nvidia.com/mig-1g.5gb.multiprocessors"), "14");
	advertisement_free(a);

	/* Only listed names are replicated (k8s-device-plugin v0.20.0 internal/rm/device_map.go):
	 * 3g.20gb stays exclusive. */
	a = run("\"nvidia.com/mig.config\":\"all-balanced\"", hw("NVIDIA A100-SXM4-40GB", "1"), &c);
	assert_int_equal(res(a, "nvidia.com/mig-1g.5gb"), 4);
	assert_int_equal(res(a, "nvidia.com/mig-2g.10gb"), 1);
	assert_int_equal(res(a, "nvidia.com/mig-3g.20gb"), 1);
	assert_string_equal(lab(a, "nvidia.com/mig-3g.20gb.replicas"), "1");
	advertisement_free(a);

	/* With renameByDefault: nvidia.com/mig-1g.5gb.shared. */
	c = cfg_share("ts", "mixed", false, "nvidia.com/mig-1g.5gb", 2, true);
	a = run("\"nvidia.com/mig.config\":\"all-1g.5gb\"", hw("NVIDIA A100-SXM4-40GB", "1"), &c);
	assert_int_equal(res(a, "nvidia.com/mig-1g.5gb.shared"), 14);
	assert_int_equal(res(a, "nvidia.com/mig-1g.5gb"), -1);
	assert_string_equal(lab(a, "nvidia.com/mig-1g.5gb.product"),
			    "NVIDIA-A100-SXM4-40GB-MIG-1g.5gb");
	advertisement_free(a);
}

/* k8s-device-plugin v0.20.0 internal/rm/device_map.go mixed: MIG resources + nvidia.com/gpu for
 * non-MIG GPUs; all-enabled contributes nothing. */
static void mixed_edges(void **state)
{
	struct dpconfig c = cfg_base("mixed", "mixed");
	struct advertisement *a = run("\"nvidia.com/mig.config\":\"all-enabled\"",
				      hw("NVIDIA A100-SXM4-80GB", "2"), &c);

	(void)state;
	ok(a);
	assert_int_equal(json_object_size(a->resources), 0);
	assert_true(warned(a, "no MIG devices"));
	assert_string_equal(lab(a, "nvidia.com/gpu.count"), "2");
	advertisement_free(a);

	a = run("\"nvidia.com/mig.config\":\"all-1g.10gb\"",
		"\"gpushare.io/gpu-product\":\"NVIDIA A100-SXM4-80GB,Tesla T4\","
		"\"gpushare.io/gpu-count\":\"1,2\"",
		&c);
	ok(a);
	assert_int_equal(res(a, "nvidia.com/mig-1g.10gb"), 7);
	assert_int_equal(res(a, "nvidia.com/gpu"), 2);
	assert_true(warned(a, "2 GPU models"));
	assert_true(warned(a, "not MIG-capable"));
	advertisement_free(a);
}

/* The lab's outcomes (steps 2 and 3 of README.md, The lab). */
static void seed_outcomes(void **state)
{
	struct dpconfig shared = cfg_share("shared", NULL, false, "nvidia.com/gpu", 4, false);
	struct dpconfig dflt = cfg_base("default", "none");
	struct advertisement *a;

	(void)state;
	shared.time_slicing.fail_requests_greater_than_one = 1;
	a = run("\"nvidia.com/device-plugin.config\":\"shared\"", hw("Tesla T4", "2"), &shared);
	ok(a);
	assert_int_equal(res(a, "nvidia.com/gpu"), 8);
	advertisement_free(a);
	shared = cfg_share("shared", NULL, false, "nvidia.com/gpu", 3, false);
	a = run(NULL, hw("Tesla T4", "2"), &shared);
	assert_int_equal(res(a, "nvidia.com/gpu"), 6);
	advertisement_free(a);
	a = run(NULL, hw("NVIDIA A100-SXM4-80GB", "2"), &dflt);
	assert_int_equal(res(a, "nvidia.com/gpu"), 2);
	advertisement_free(a);

	/* lab-node-2: a hand-set mixed strategy beats the config's none. */
	a = run("\"nvidia.com/mig.strategy\":\"mixed\",\"nvidia.com/mig.config\":\"all-1g.10gb\"",
		hw("NVIDIA A100-SXM4-80GB", "1"), &dflt);
	ok(a);
	assert_string_equal(a->mig_strategy, "mixed");
	assert_string_equal(a->mig_strategy_source, "label");
	assert_int_equal(res(a, "nvidia.com/mig-1g.10gb"), 7);
	assert_int_equal(res(a, "nvidia.com/gpu"), -1);
	assert_true(warned(a, "overrides flags.migStrategy"));
	/* The person's label is not gpushare's to own. */
	assert_string_equal(lab(a, "nvidia.com/mig.strategy"), "mixed");
	assert_null(json_object_get(a->owned_labels, "nvidia.com/mig.strategy"));
	advertisement_free(a);

	/* The seed's "A100 40GB" claim: 4, not 7 (mig-parted v0.15.0
	 * deployments/systemd/config-default.yaml), with a warning. */
	a = run("\"nvidia.com/mig.strategy\":\"mixed\",\"nvidia.com/mig.config\":\"all-1g.10gb\"",
		hw("NVIDIA A100-SXM4-40GB", "1"), &dflt);
	ok(a);
	assert_int_equal(res(a, "nvidia.com/mig-1g.10gb"), 4);
	assert_true(warned(a, "gives 4 x 1g.10gb"));
	assert_true(warned(a, "NVIDIA A100-SXM4-80GB"));
	assert_true(warned(a, "1g.5gb"));
	advertisement_free(a);
}

/* k8s-device-plugin v0.20.0 cmd/nvidia-device-plugin/main.go validateFlags; GFD's MPS refusal;
 * mig-manager failure. */
static void refusals(void **state)
{
	struct dpconfig single = cfg_base("s", "single");
	struct dpconfig mps_mixed = cfg_share("m", "mixed", true, "nvidia.com/gpu", 4, false);
	struct dpconfig mps_single = cfg_share("m", "single", true, "nvidia.com/gpu", 4, false);
	struct dpconfig mps_none = cfg_share("m", "none", true, "nvidia.com/gpu", 4, false);
	struct advertisement *a;

	(void)state;
	a = run(NULL, hw("Tesla T4", "1"), &mps_mixed);
	assert_non_null(a->failure);
	/* Only the plugin fails: GFD labels MPS-capable (no GPU has MIG on). */
	assert_int_equal(a->outcome, ADVERTISE_PLUGIN_DOWN);
	assert_string_equal(lab(a, "nvidia.com/mps.capable"), "true");
	assert_non_null(strstr(a->failure, "unable to validate flags: using --mig-strategy=mixed "
					   "is not supported with MPS"));
	assert_int_equal(json_object_size(a->resources), 0);
	advertisement_free(a);

	a = run("\"nvidia.com/mig.strategy\":\"bogus\"", hw("Tesla T4", "1"), NULL);
	assert_string_equal(a->failure, "nvidia-device-plugin: error starting plugins: unable to "
					"validate flags: unknown MIG strategy: bogus");
	assert_int_equal(a->outcome, ADVERTISE_REFUSED); /* GFD: unknown strategy: bogus */
	advertisement_free(a);

	a = run("\"nvidia.com/mig.config\":\"all-enabled\"", hw("NVIDIA H100 80GB HBM3", "1"),
		&single);
	assert_non_null(strstr(a->failure,
			       "error building device map from config.resources: invalid MIG "
			       "configuration: at least one device with migEnabled=true was not "
			       "configured correctly: device 0 has no MIG devices configured"));
	/* GFD still labels, with the MIG-INVALID values (k8s-device-plugin v0.20.0
	 * internal/lm/mig-strategy.go). */
	assert_int_equal(a->outcome, ADVERTISE_PLUGIN_DOWN);
	assert_string_equal(lab(a, "nvidia.com/mig.config.state"), "success");
	assert_string_equal(lab(a, "nvidia.com/gpu.product"), "NVIDIA-H100-80GB-HBM3-MIG-INVALID");
	assert_string_equal(lab(a, "nvidia.com/gpu.count"), "0");
	assert_string_equal(lab(a, "nvidia.com/gpu.replicas"), "0");
	assert_string_equal(lab(a, "nvidia.com/gpu.sharing-strategy"), "");
	assert_string_equal(lab(a, "nvidia.com/gpu.memory"), "0");
	assert_string_equal(lab(a, "nvidia.com/mig.strategy"), "single");
	advertisement_free(a);

	a = run("\"nvidia.com/mig.config\":\"all-balanced\"", hw("NVIDIA H100 80GB HBM3", "1"),
		&single);
	assert_non_null(strstr(a->failure, "invalid MIG configuration: more than one MIG device "
					   "type present on node"));
	advertisement_free(a);

	a = run("\"nvidia.com/mig.config\":\"all-1g.10gb\"",
		"\"gpushare.io/gpu-product\":\"NVIDIA H100 80GB HBM3,NVIDIA L4\","
		"\"gpushare.io/gpu-count\":\"1,1\"",
		&single);
	assert_non_null(strstr(a->failure, "all devices on the node must be configured with the "
					   "same migEnabled value"));
	assert_string_equal(lab(a, "nvidia.com/gpu.product"), "NVIDIA-H100-80GB-HBM3-MIG-INVALID");
	advertisement_free(a);

	a = run("\"nvidia.com/mig.config\":\"all-1g.10gb\"", hw("NVIDIA H100 80GB HBM3", "1"),
		&mps_single);
	assert_non_null(strstr(a->failure, "failed to create plugin: sharing using MPS is not "
					   "supported for MIG devices"));
	assert_int_equal(a->outcome, ADVERTISE_REFUSED); /* GFD refuses MPS with MIG too */
	advertisement_free(a);

	a = run("\"nvidia.com/mig.config\":\"all-1g.10gb\"", hw("NVIDIA H100 80GB HBM3", "1"),
		&mps_none);
	assert_non_null(strstr(a->failure, "gpu-feature-discovery: error creating labeler: error "
					   "creating sharing labeler: failed to check MPS-capable: "
					   "MPS sharing is not supported for mig devices"));
	assert_int_equal(a->outcome, ADVERTISE_REFUSED);
	advertisement_free(a);

	a = run("\"nvidia.com/mig.config\":\"all-1g.5gb\"", hw("NVIDIA H100 80GB HBM3", "1"),
		&single);
	assert_non_null(a->failure);
	assert_non_null(strstr(a->failure, "mig-manager:"));
	assert_non_null(strstr(a->failure, "nvidia.com/mig.config.state=failed"));
	assert_int_equal(a->outcome, ADVERTISE_MIG_FAILED);
	assert_string_equal(lab(a, "nvidia.com/mig.config.state"), "failed");
	assert_int_equal(json_object_size(a->labels), 1);
	advertisement_free(a);
}

/* k8s-device-plugin v0.20.0 api/config/v1/resources.go NewResourceName, api/config/v1/config.go
 * DisableResourceNamingInConfig: names that match nothing, and the same name twice. */
static void sharing_warnings(void **state)
{
	struct dpconfig c = cfg_share("ts", NULL, false, "nvidia.com/mig-1g.10gb", 4, false);
	struct dp_replicated_resource two[2] = {
		{.name = "nvidia.com/gpu", .replicas = 2},
		{.name = "nvidia.com/gpu", .replicas = 4},
	};
	struct advertisement *a = run(NULL, hw("Tesla T4", "2"), &c);

	(void)state;
	ok(a);
	assert_int_equal(res(a, "nvidia.com/gpu"), 2);
	assert_true(warned(a, "'nvidia.com/mig-1g.10gb' matches nothing"));
	/* The time-sliced name matched nothing, so GFD reports no sharing for the GPU. */
	assert_string_equal(lab(a, "nvidia.com/gpu.replicas"), "1");
	advertisement_free(a);

	c.time_slicing.resources = two;
	c.time_slicing.n_resources = 2;
	a = run(NULL, hw("Tesla T4", "2"), &c);
	ok(a);
	/* Replica ids overwrite each other: max(replicas) per GPU; GFD shows the first entry. */
	assert_int_equal(res(a, "nvidia.com/gpu"), 8);
	assert_string_equal(lab(a, "nvidia.com/gpu.replicas"), "2");
	assert_true(warned(a, "more than once"));
	advertisement_free(a);
}

static void no_gpus(void **state)
{
	struct advertisement *a = run(NULL, NULL, NULL);

	(void)state;
	ok(a);
	assert_int_equal(json_object_size(a->resources), 0);
	assert_int_equal(json_object_size(a->labels), 0);
	assert_true(warned(a, "no GPU declared"));
	advertisement_free(a);
}

static void bad_nodes(void **state)
{
	static const char *const docs[] = {
		"[]",
		"{\"kind\":\"Pod\",\"metadata\":{\"name\":\"x\"}}",
		"{\"kind\":\"Node\",\"metadata\":{}}",
		"{\"kind\":\"Node\",\"metadata\":{\"name\":\"x\",\"labels\":{\"a\":1}}}",
		"{\"kind\":\"Node\",\"metadata\":{\"name\":\"x\",\"annotations\":{\"gpushare.io/"
		"gpu-product\":\"Tesla T4\"}}}",
		"{\"kind\":\"Node\",\"metadata\":{\"name\":\"x\",\"annotations\":{\"gpushare.io/"
		"gpu-product\":\"Voodoo 2\",\"gpushare.io/gpu-count\":\"1\"}}}",
		"{\"kind\":\"Node\",\"metadata\":{\"name\":\"x\",\"annotations\":{\"gpushare.io/"
		"gpu-product\":\"Tesla T4\",\"gpushare.io/gpu-count\":\"0\"}}}",
		"{\"kind\":\"Node\",\"metadata\":{\"name\":\"x\",\"annotations\":{\"gpushare.io/"
		"gpu-product\":\"Tesla T4\",\"gpushare.io/gpu-count\":\"-1\"}}}",
		"{\"kind\":\"Node\",\"metadata\":{\"name\":\"x\",\"annotations\":{\"gpushare.io/"
		"gpu-product\":\"Tesla T4\",\"gpushare.io/gpu-count\":\"999\"}}}",
		"{\"kind\":\"Node\",\"metadata\":{\"name\":\"x\",\"annotations\":{\"gpushare.io/"
		"gpu-product\":\"Tesla T4,Tesla T4\",\"gpushare.io/gpu-count\":\"1\"}}}",
	};
	struct nodehw *h;
	struct gs_warnings w;
	struct gs_error err;

	(void)state;
	gs_warnings_init(&w);
	for (size_t i = 0; i < sizeof(docs) / sizeof(docs[0]); i++) {
		json_t *n = json_loads(docs[i], 0, NULL);
		assert_non_null(n);
		assert_int_equal(nodehw_from_node(cat(), n, NULL, &h, &w, &err), -1);
		assert_null(h);
		assert_true(err.msg[0] != '\0');
		json_decref(n);
	}
	gs_warnings_release(&w);
}

/* ---- ownership and the merge patch ---- */

/* RFC 7386 merge patch, for the idempotency checks. */
static void merge(json_t *target, const json_t *patch)
{
	mergepatch_apply(target, patch);
}

static json_t *patch_of(const struct advertisement *a, const json_t *n, struct gs_warnings *w)
{
	json_t *p;
	struct gs_error err;

	if (advertise_patch(a, n, &p, w, &err))
		fail_msg("patch: %s", err.msg);
	return p;
}

static const char *pget(const json_t *p, const char *a, const char *b, const char *k)
{
	const json_t *v = json_object_get(json_object_get(json_object_get(p, a), b), k);
	return json_is_string(v) ? json_string_value(v) : json_is_null(v) ? "<null>" : NULL;
}

static void patch_lifecycle(void **state)
{
	struct dpconfig shared = cfg_share("shared", NULL, false, "nvidia.com/gpu", 4, false);
	struct dpconfig renamed = cfg_share("shared", NULL, false, "nvidia.com/gpu", 4, true);
	json_t *n = node("\"nvidia.com/device-plugin.config\":\"shared\",\"team\":\"a\"",
			 hw("Tesla T4", "2"), NULL);
	struct advertisement *a;
	struct gs_warnings w;
	json_t *p;

	(void)state;
	gs_warnings_init(&w);

	/* First write. */
	a = compute(n, &shared);
	p = patch_of(a, n, &w);
	assert_string_equal(pget(p, "status", "capacity", "nvidia.com/gpu"), "8");
	assert_string_equal(pget(p, "status", "allocatable", "nvidia.com/gpu"), "8");
	assert_null(pget(p, "status", "capacity", "cpu"));
	assert_null(pget(p, "status", "capacity", "pods"));
	assert_string_equal(pget(p, "metadata", "labels", "nvidia.com/gpu.product"),
			    "Tesla-T4-SHARED");
	assert_null(pget(p, "metadata", "labels", "team"));
	assert_string_equal(pget(p, "metadata", "annotations", "gpushare.io/managed-resources"),
			    "nvidia.com/gpu");
	assert_non_null(strstr(pget(p, "metadata", "annotations", "gpushare.io/managed-labels"),
			       "nvidia.com/gpu.replicas=4"));
	merge(n, p);
	json_decref(p);
	advertisement_free(a);

	/* Nothing changed → empty patch. */
	a = compute(n, &shared);
	p = patch_of(a, n, &w);
	assert_int_equal(json_object_size(p), 0);
	json_decref(p);
	advertisement_free(a);

	/* renameByDefault: gpu → 0, gpu.shared appears; labels owned change. */
	a = compute(n, &renamed);
	p = patch_of(a, n, &w);
	assert_string_equal(pget(p, "status", "capacity", "nvidia.com/gpu"), "0");
	assert_string_equal(pget(p, "status", "allocatable", "nvidia.com/gpu"), "0");
	assert_string_equal(pget(p, "status", "capacity", "nvidia.com/gpu.shared"), "8");
	assert_string_equal(pget(p, "metadata", "labels", "nvidia.com/gpu.product"), "Tesla-T4");
	merge(n, p);
	json_decref(p);
	advertisement_free(a);
	a = compute(n, &renamed);
	p = patch_of(a, n, &w);
	assert_int_equal(json_object_size(p), 0);
	json_decref(p);
	advertisement_free(a);

	/* Hardware declaration removed: owned labels go, resources drop to 0. */
	json_object_del(json_object_get(json_object_get(n, "metadata"), "annotations"),
			"gpushare.io/gpu-product");
	json_object_del(json_object_get(json_object_get(n, "metadata"), "annotations"),
			"gpushare.io/gpu-count");
	a = compute(n, &renamed);
	p = patch_of(a, n, &w);
	assert_string_equal(pget(p, "metadata", "labels", "nvidia.com/gpu.product"), "<null>");
	assert_string_equal(pget(p, "metadata", "labels", "nvidia.com/mig.capable"), "<null>");
	assert_null(pget(p, "metadata", "labels", "team"));
	assert_null(pget(p, "metadata", "labels", "nvidia.com/device-plugin.config"));
	assert_string_equal(pget(p, "status", "capacity", "nvidia.com/gpu.shared"), "0");
	assert_null(pget(p, "status", "capacity", "nvidia.com/gpu")); /* already 0 */
	assert_string_equal(pget(p, "metadata", "annotations", "gpushare.io/managed-labels"),
			    "<null>");
	merge(n, p);
	json_decref(p);
	advertisement_free(a);
	a = compute(n, &renamed);
	p = patch_of(a, n, &w);
	assert_int_equal(json_object_size(p), 0);
	json_decref(p);
	advertisement_free(a);
	json_decref(n);
	gs_warnings_release(&w);
}

/* A person's mig.strategy is a declaration; gpushare's own copy is not. */
static void strategy_ownership(void **state)
{
	struct dpconfig single = cfg_base("s", "single");
	struct dpconfig none = cfg_base("d", "none");
	json_t *n = node(NULL, hw("NVIDIA H100 80GB HBM3", "1"), NULL);
	struct advertisement *a;
	struct gs_warnings w;
	json_t *p;

	(void)state;
	gs_warnings_init(&w);
	a = compute(n, &single);
	p = patch_of(a, n, &w);
	assert_string_equal(pget(p, "metadata", "labels", "nvidia.com/mig.strategy"), "single");
	merge(n, p);
	json_decref(p);
	advertisement_free(a);

	/* Its own output is not read back: the config says none now → label removed. */
	a = compute(n, &none);
	assert_string_equal(a->mig_strategy, "none");
	p = patch_of(a, n, &w);
	assert_string_equal(pget(p, "metadata", "labels", "nvidia.com/mig.strategy"), "<null>");
	merge(n, p);
	json_decref(p);
	advertisement_free(a);

	/* A person sets mixed: a declaration, kept and never recorded as gpushare's. */
	json_object_set_new(json_object_get(json_object_get(n, "metadata"), "labels"),
			    "nvidia.com/mig.strategy", json_string("mixed"));
	a = compute(n, &none);
	assert_string_equal(a->mig_strategy, "mixed");
	p = patch_of(a, n, &w);
	assert_null(pget(p, "metadata", "labels", "nvidia.com/mig.strategy"));
	merge(n, p);
	json_decref(p);
	assert_null(strstr(kobj_annotation(n, "gpushare.io/managed-labels"), "mig.strategy"));
	advertisement_free(a);
	a = compute(n, &single);
	assert_string_equal(a->mig_strategy, "mixed");
	p = patch_of(a, n, &w);
	assert_int_equal(json_object_size(p), 0);
	json_decref(p);
	advertisement_free(a);
	json_decref(n);
	gs_warnings_release(&w);
}

static void foreign_things(void **state)
{
	json_t *n =
		node("\"nvidia.com/gpu.product\":\"NVIDIA-A100-SXM4-40GB\"", hw("Tesla T4", "1"),
		     "{\"capacity\":{\"cpu\":\"4\",\"nvidia.com/mig-1g.10gb\":\"7\"},"
		     "\"allocatable\":{\"cpu\":\"4\",\"nvidia.com/mig-1g.10gb\":\"7\"}}");
	struct advertisement *a = compute(n, NULL);
	struct gs_warnings w;
	struct gs_error err;
	json_t *p;

	(void)state;
	gs_warnings_init(&w);
	p = patch_of(a, n, &w);
	assert_string_equal(pget(p, "metadata", "labels", "nvidia.com/gpu.product"), "Tesla-T4");
	assert_null(pget(p, "status", "capacity", "nvidia.com/mig-1g.10gb"));
	assert_int_equal(w.n, 2);
	assert_non_null(strstr(w.items[0], "was not written by gpushare"));
	assert_non_null(strstr(w.items[1], "nvidia.com/mig-1g.10gb"));
	json_decref(p);
	advertisement_free(a);

	/* A refused node gives no patch at all. */
	a = run("\"nvidia.com/mig.strategy\":\"bogus\"", hw("Tesla T4", "1"), NULL);
	p = (json_t *)1;
	assert_int_equal(advertise_patch(a, n, &p, &w, &err), -1);
	assert_null(p);
	assert_non_null(strstr(err.msg, "unknown MIG strategy"));
	advertisement_free(a);
	json_decref(n);
	gs_warnings_release(&w);
}

static void records_roundtrip(void **state)
{
	json_t *o = json_object();
	char *s;
	int ok_;
	json_t *n, *back;

	(void)state;
	json_object_set_new(o, "b", json_string("2"));
	json_object_set_new(o, "a", json_string(""));
	s = nodehw_format_labels(o);
	assert_string_equal(s, "a=,b=2");
	n = node(NULL,
		 "\"gpushare.io/managed-labels\":\"a=,b=2\","
		 "\"gpushare.io/managed-resources\":\"x,,y\"",
		 NULL);
	back = nodehw_managed_labels(n, &ok_);
	assert_int_equal(ok_, 1);
	assert_true(json_equal(back, o));
	json_decref(back);
	back = nodehw_managed_resources(n, &ok_);
	assert_int_equal(ok_, 0); /* empty item */
	assert_int_equal(json_object_size(back), 0);
	json_decref(back);
	free(s);
	json_decref(n);
	json_decref(o);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(plain_t4),
		cmocka_unit_test(driver_and_machine),
		cmocka_unit_test(timeslicing_t4),
		cmocka_unit_test(rename_by_default),
		cmocka_unit_test(mps_t4),
		cmocka_unit_test(mps_max_replicas),
		cmocka_unit_test(mig_none_any_state),
		cmocka_unit_test(single_h100),
		cmocka_unit_test(single_timeslicing),
		cmocka_unit_test(mixed_h100_balanced),
		cmocka_unit_test(mixed_timeslicing),
		cmocka_unit_test(mixed_edges),
		cmocka_unit_test(seed_outcomes),
		cmocka_unit_test(refusals),
		cmocka_unit_test(sharing_warnings),
		cmocka_unit_test(no_gpus),
		cmocka_unit_test(bad_nodes),
		cmocka_unit_test(patch_lifecycle),
		cmocka_unit_test(strategy_ownership),
		cmocka_unit_test(foreign_things),
		cmocka_unit_test(records_roundtrip),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
