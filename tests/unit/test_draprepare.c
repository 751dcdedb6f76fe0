#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dra/draprepare.h"
#include "model/kobj.h"
#include "json_fixture.h"

/*
 * Expected texts come from the driver's own code: its api package and
 * device_state.go's selection loop, compiled from the v25.12.0 tag with its
 * vendored apimachinery and run on the same claims (docs/guide/dra.md, "Prepare").
 */

/*
 * The release the tests below judge: v25.12.0 unless a test says v0.5.0
 * (whose texts come from that release's source, docs/guide/dra.md).
 */
static const struct dradriver *release;

static void gates_init(struct draprepare_gates *g)
{
	draprepare_gates_default_for(g, release ? release : dradriver_get(DRADRIVER_V25_12_0));
}

#define GV "\"apiVersion\":\"resource.nvidia.com/v1beta1\""
#define DECODE "error getting opaque device configs: error decoding config parameters: "

/* A T4 node with gpu-0 and gpu-1, and an A100 in all-1g.10gb (two of its devices). */
static const char *slices_json =
	"[{\"kind\":\"ResourceSlice\",\"spec\":{\"driver\":\"gpu.nvidia.com\",\"nodeName\":\"n\","
	"\"devices\":["
	"{\"name\":\"gpu-0\",\"attributes\":{\"type\":{\"string\":\"gpu\"},\"uuid\":{\"string\":"
	"\"GPU-0\"}}},"
	"{\"name\":\"gpu-1\",\"attributes\":{\"type\":{\"string\":\"gpu\"},\"uuid\":{\"string\":"
	"\"GPU-1\"}}},"
	"{\"name\":\"gpu-2-mig-1g10gb-19-0\",\"attributes\":{\"type\":{\"string\":\"mig\"},"
	"\"uuid\":{\"string\":\"MIG-0\"}}},"
	"{\"name\":\"gpu-2-mig-1g10gb-19-1\",\"attributes\":{\"type\":{\"string\":\"mig\"},"
	"\"uuid\":{\"string\":\"MIG-1\"}}}]}},"
	"{\"kind\":\"ResourceSlice\",\"spec\":{\"driver\":\"other.example.com\",\"devices\":["
	"{\"name\":\"gpu-9\",\"attributes\":{\"type\":{\"string\":\"gpu\"}}}]}}]";

/*
 * A claim dra-demo/shared-t4 (uid u-1) allocated `results` (a JSON array
 * text) with `configs` (a JSON array text of allocation configs).
 */
static json_t *claim(const char *results, const char *configs)
{
	char buf[8192];
	snprintf(buf, sizeof(buf),
		 "{\"apiVersion\":\"resource.k8s.io/v1\",\"kind\":\"ResourceClaim\","
		 "\"metadata\":{\"namespace\":\"dra-demo\",\"name\":\"shared-t4\",\"uid\":\"u-1\"},"
		 "\"status\":{\"allocation\":{\"devices\":{\"results\":%s,\"config\":%s}}}}",
		 results, configs);
	return loads(buf);
}

#define GPU0                                                                                       \
	"[{\"request\":\"gpu\",\"driver\":\"gpu.nvidia.com\",\"pool\":\"n\",\"device\":\"gpu-0\"}" \
	"]"
#define MIG0                                                                                       \
	"[{\"request\":\"mig\",\"driver\":\"gpu.nvidia.com\",\"pool\":\"n\",\"device\":"           \
	"\"gpu-2-mig-1g10gb-19-0\"}]"

/* One claim config for request `req` with these parameters. */
static char *one_config(const char *source, const char *req, const char *params)
{
	char buf[4096];
	snprintf(buf, sizeof(buf),
		 "[{\"source\":\"%s\",\"requests\":[\"%s\"],\"opaque\":{\"driver\":\"gpu.nvidia."
		 "com\","
		 "\"parameters\":%s}}]",
		 source, req, params);
	return strdup(buf);
}

struct run {
	struct draprepare_result r;
};

static void prepare_with(const char *results, const char *configs, const char *gates,
			 struct draprepare_result *r)
{
	struct draprepare_gates g;
	struct gs_error err;
	json_t *c = claim(results, configs);
	json_t *sl = loads(slices_json);

	gates_init(&g);
	if (gates && draprepare_gates_parse(&g, gates, &err))
		fail_msg("gates: %s", err.msg);
	if (draprepare_claim(c, sl, &g, NULL, 0, r, &err))
		fail_msg("draprepare_claim: %s", err.msg);
	json_decref(c);
	json_decref(sl);
}

/* The driver's innermost error for a GPU claim with one claim config on request gpu. */
static void expect_gpu(const char *params, const char *gates, const char *want)
{
	struct draprepare_result r;
	char *cfg = one_config("FromClaim", "gpu", params);

	prepare_with(GPU0, cfg, gates, &r);
	free(cfg);
	if (!want) {
		assert_int_equal(r.outcome, DRAPREPARE_OK);
	} else {
		assert_int_equal(r.outcome, DRAPREPARE_REFUSED);
		assert_string_equal(r.step_error, want);
	}
	draprepare_result_release(&r);
}

static void expect_mig(const char *params, const char *gates, const char *want)
{
	struct draprepare_result r;
	char *cfg = one_config("FromClaim", "mig", params);

	prepare_with(MIG0, cfg, gates, &r);
	free(cfg);
	if (!want) {
		assert_int_equal(r.outcome, DRAPREPARE_OK);
	} else {
		assert_int_equal(r.outcome, DRAPREPARE_REFUSED);
		assert_string_equal(r.step_error, want);
	}
	draprepare_result_release(&r);
}

#define TS_LONG                                                                                    \
	"{" GV ",\"kind\":\"GpuConfig\",\"sharing\":{\"strategy\":\"TimeSlicing\","                \
	"\"timeSlicingConfig\":{\"interval\":\"Long\"}}}"

/* dra-driver-nvidia-gpu v25.12.0 cmd/gpu-kubelet-plugin/device_state.go prepareDevices,
 * demo/specs/quickstart/v1/: the whole event for a time-sliced shared claim under the default
 * gates. */
static void timeslicing_refused_by_default(void **state)
{
	struct draprepare_result r;
	char *cfg = one_config("FromClaim", "gpu", TS_LONG);

	(void)state;
	prepare_with(GPU0, cfg, NULL, &r);
	free(cfg);
	assert_int_equal(r.outcome, DRAPREPARE_REFUSED);
	assert_string_equal(
		r.step_error,
		"error validating GPU config: unknown GPU sharing strategy: TimeSlicing");
	assert_string_equal(r.driver_error,
			    "error preparing devices for claim dra-demo/shared-t4:u-1: prepare "
			    "devices failed: error validating GPU config: unknown GPU sharing "
			    "strategy: TimeSlicing");
	assert_string_equal(r.event_message,
			    "Failed to prepare dynamic resources: prepare dynamic resources: "
			    "NodePrepareResources failed for ResourceClaim shared-t4: error "
			    "preparing devices for claim dra-demo/shared-t4:u-1: prepare devices "
			    "failed: error validating GPU config: unknown GPU sharing strategy: "
			    "TimeSlicing");
	assert_int_equal(r.n_devices, 0);
	draprepare_result_release(&r);
}

/* The same claim with TimeSlicingSettings on: gpu-0, time-sliced Long. */
static void timeslicing_accepted_with_gate(void **state)
{
	struct draprepare_result r;
	char *cfg = one_config("FromClaim", "gpu", TS_LONG);

	(void)state;
	prepare_with(GPU0, cfg, "TimeSlicingSettings=true", &r);
	free(cfg);
	assert_int_equal(r.outcome, DRAPREPARE_OK);
	assert_int_equal(r.n_devices, 1);
	assert_string_equal(r.devices[0].device, "gpu-0");
	assert_string_equal(r.devices[0].uuid, "GPU-0");
	assert_string_equal(r.devices[0].sharing, "TimeSlicing");
	assert_string_equal(r.devices[0].interval, "Long");
	assert_string_equal(r.devices[0].config_source, "FromClaim");
	assert_int_equal(r.devices[0].config_index, 0);
	assert_null(r.event_message);
	draprepare_result_release(&r);
}

/* No config at all: the driver's default GpuConfig; with TimeSlicingSettings, TimeSlicing/Default.
 */
static void defaults(void **state)
{
	struct draprepare_result r;
	char *s;

	(void)state;
	prepare_with(GPU0, "[]", NULL, &r);
	assert_int_equal(r.outcome, DRAPREPARE_OK);
	assert_string_equal(r.devices[0].config_source, "default");
	assert_string_equal(r.devices[0].config_kind, "GpuConfig");
	assert_string_equal(r.devices[0].sharing, "");
	s = json_dumps(r.devices[0].config, JSON_COMPACT);
	assert_string_equal(s, "{\"kind\":\"GpuConfig\",\"apiVersion\":\"resource.nvidia.com/"
			       "v1beta1\"}");
	free(s);
	draprepare_result_release(&r);

	prepare_with(GPU0, "[]", "TimeSlicingSettings=true", &r);
	s = json_dumps(r.devices[0].config, JSON_COMPACT);
	assert_string_equal(s, "{\"kind\":\"GpuConfig\",\"apiVersion\":\"resource.nvidia.com/"
			       "v1beta1\",\"sharing\":{\"strategy\":\"TimeSlicing\","
			       "\"timeSlicingConfig\":{\"interval\":\"Default\"}}}");
	free(s);
	assert_string_equal(r.devices[0].interval, "Default");
	draprepare_result_release(&r);

	prepare_with(MIG0, "[]", "TimeSlicingSettings=true", &r);
	assert_string_equal(r.devices[0].config_kind, "MigDeviceConfig");
	assert_string_equal(r.devices[0].sharing, "TimeSlicing");
	assert_string_equal(r.devices[0].interval, ""); /* never set on MIG devices */
	draprepare_result_release(&r);
}

/* dra-driver-nvidia-gpu v25.12.0 api/nvidia.com/resource/v1beta1/: every refusal, with the driver's
 * text. */
static void strategy_refusals(void **state)
{
	(void)state;
	expect_gpu("{" GV ",\"kind\":\"GpuConfig\"}", NULL, NULL);
	expect_gpu("{" GV ",\"kind\":\"GpuConfig\",\"sharing\":{\"strategy\":\"MPS\"}}", NULL,
		   "error validating GPU config: unknown GPU sharing strategy: MPS");
	expect_gpu("{" GV ",\"kind\":\"GpuConfig\",\"sharing\":{\"strategy\":\"MPS\"}}",
		   "MPSSupport=true", NULL);
	expect_gpu("{" GV ",\"kind\":\"GpuConfig\",\"sharing\":{\"strategy\":\"MPS\"}}",
		   "TimeSlicingSettings=true",
		   "error validating GPU config: unknown GPU sharing strategy: MPS");
	expect_gpu("{" GV ",\"kind\":\"GpuConfig\",\"sharing\":{\"strategy\":\"Exclusive\"}}",
		   "TimeSlicingSettings=true,MPSSupport=true",
		   "error validating GPU config: unknown GPU sharing strategy: Exclusive");
}

static void interval_refused(void **state)
{
	(void)state;
	const char *p = "{" GV ",\"kind\":\"GpuConfig\",\"sharing\":{\"strategy\":\"TimeSlicing\","
			"\"timeSlicingConfig\":{\"interval\":\"VeryLong\"}}}";
	expect_gpu(p, "TimeSlicingSettings=true,MPSSupport=true",
		   "error validating GPU config: unknown time-slice interval: VeryLong");
	/* with the gate off the strategy is refused first */
	expect_gpu(p, NULL,
		   "error validating GPU config: unknown GPU sharing strategy: TimeSlicing");
}

static void thread_percentage_refused(void **state)
{
	(void)state;
	expect_gpu("{" GV ",\"kind\":\"GpuConfig\",\"sharing\":{\"strategy\":\"MPS\",\"mpsConfig\":"
		   "{\"defaultActiveThreadPercentage\":150}}}",
		   "MPSSupport=true",
		   "error validating GPU config: active thread percentage must not be greater "
		   "than 100");
	expect_gpu("{" GV ",\"kind\":\"GpuConfig\",\"sharing\":{\"strategy\":\"MPS\",\"mpsConfig\":"
		   "{\"defaultActiveThreadPercentage\":-1}}}",
		   "MPSSupport=true",
		   "error validating GPU config: active thread percentage must not be negative");
	expect_gpu("{" GV ",\"kind\":\"GpuConfig\",\"sharing\":{\"strategy\":\"MPS\",\"mpsConfig\":"
		   "{\"defaultActiveThreadPercentage\":100,\"defaultPinnedDeviceMemoryLimit\":"
		   "\"10Gi\"}}}",
		   "MPSSupport=true", NULL);
}

/* Strict decoding: unknown fields, with every one named, case-sensitive. */
static void unknown_fields(void **state)
{
	(void)state;
	expect_gpu("{" GV ",\"kind\":\"GpuConfig\",\"sharing\":{\"strategy\":\"TimeSlicing\","
		   "\"replicas\":4}}",
		   NULL, DECODE "strict decoding error: unknown field \"sharing.replicas\"");
	expect_gpu("{" GV
		   ",\"kind\":\"GpuConfig\",\"sharing\":{\"replicas\":4,\"Strategy\":\"x\"}}",
		   "TimeSlicingSettings=true",
		   DECODE "strict decoding error: unknown field \"sharing.replicas\", unknown "
			  "field \"sharing.Strategy\"");
	expect_mig("{" GV ",\"kind\":\"MigDeviceConfig\",\"sharing\":{\"strategy\":\"TimeSlicing\","
		   "\"timeSlicingConfig\":{\"interval\":\"Long\"}}}",
		   NULL,
		   DECODE "strict decoding error: unknown field \"sharing.timeSlicingConfig\"");
	expect_gpu("{" GV ",\"kind\":\"GpuConfig\",\"metadata\":{\"name\":\"x\"}}", NULL,
		   DECODE "strict decoding error: unknown field \"metadata\"");
	expect_gpu("{\"APIVERSION\":\"resource.nvidia.com/v1beta1\",\"Kind\":\"GpuConfig\"}", NULL,
		   DECODE "strict decoding error: unknown field \"APIVERSION\", unknown field "
			  "\"Kind\"");
}

/* Wrong JSON types: encoding/json's first type error. */
static void wrong_types(void **state)
{
	(void)state;
	expect_gpu("{" GV ",\"kind\":\"GpuConfig\",\"sharing\":{\"strategy\":5}}", NULL,
		   DECODE "json: cannot unmarshal number into Go struct field "
			  "GpuSharing.sharing.strategy of type v1beta1.GpuSharingStrategy");
	expect_gpu("{" GV ",\"kind\":\"GpuConfig\",\"sharing\":\"x\"}", NULL,
		   DECODE "json: cannot unmarshal string into Go struct field GpuConfig.sharing of "
			  "type v1beta1.GpuSharing");
	expect_gpu("{" GV ",\"kind\":\"GpuConfig\",\"sharing\":{\"strategy\":\"MPS\",\"mpsConfig\":"
		   "{\"defaultActiveThreadPercentage\":1.5}}}",
		   "MPSSupport=true",
		   DECODE "json: cannot unmarshal number 1.5 into Go struct field "
			  "MpsConfig.sharing.mpsConfig.defaultActiveThreadPercentage of type int");
	expect_gpu("{" GV ",\"kind\":\"GpuConfig\",\"sharing\":{\"strategy\":\"MPS\",\"mpsConfig\":"
		   "{\"defaultActiveThreadPercentage\":\"50\"}}}",
		   NULL,
		   DECODE "json: cannot unmarshal string into Go struct field "
			  "MpsConfig.sharing.mpsConfig.defaultActiveThreadPercentage of type int");
	expect_gpu("{" GV ",\"kind\":\"GpuConfig\",\"sharing\":{\"strategy\":\"MPS\","
		   "\"timeSlicingConfig\":{\"interval\":5}}}",
		   NULL,
		   DECODE "json: cannot unmarshal number into Go struct field "
			  "TimeSlicingConfig.sharing.timeSlicingConfig.interval of type "
			  "v1beta1.TimeSliceInterval");
	expect_gpu("{" GV ",\"kind\":\"GpuConfig\",\"sharing\":{\"strategy\":\"MPS\",\"mpsConfig\":"
		   "{\"defaultPerDevicePinnedMemoryLimit\":\"x\"}}}",
		   NULL,
		   DECODE "json: cannot unmarshal string into Go struct field "
			  "MpsConfig.sharing.mpsConfig.defaultPerDevicePinnedMemoryLimit of type "
			  "v1beta1.MpsPerDevicePinnedMemoryLimit");
	/* a quantity's own error stops decoding and wins over a type error seen before */
	expect_gpu("{" GV ",\"kind\":\"GpuConfig\",\"sharing\":{\"strategy\":\"MPS\",\"mpsConfig\":"
		   "{\"defaultActiveThreadPercentage\":\"50\",\"defaultPinnedDeviceMemoryLimit\":"
		   "\"abc\"}}}",
		   NULL,
		   DECODE "quantities must match the regular expression "
			  "'^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'");
	/* type errors win over unknown fields */
	expect_gpu("{" GV ",\"kind\":\"GpuConfig\",\"bogus\":1,\"sharing\":{\"strategy\":true}}",
		   NULL,
		   DECODE "json: cannot unmarshal bool into Go struct field "
			  "GpuSharing.sharing.strategy of type v1beta1.GpuSharingStrategy");
}

/* Kinds and versions: the scheme's own words. */
static void kinds_and_versions(void **state)
{
	(void)state;
	expect_gpu("{" GV ",\"kind\":\"FooConfig\"}", NULL,
		   DECODE "no kind \"FooConfig\" is registered for version "
			  "\"resource.nvidia.com/v1beta1\" in scheme "
			  "\"/build/api/nvidia.com/resource/v1beta1/api.go:63\"");
	expect_gpu("{\"apiVersion\":\"resource.nvidia.com/v1\",\"kind\":\"GpuConfig\"}", NULL,
		   DECODE
		   "no kind \"GpuConfig\" is registered for version \"resource.nvidia.com/v1\" "
		   "in scheme \"/build/api/nvidia.com/resource/v1beta1/api.go:63\"");
	expect_gpu("{\"kind\":\"GpuConfig\"}", NULL,
		   DECODE "Object 'apiVersion' is missing in '{\"kind\":\"GpuConfig\"}'");
	expect_gpu("{" GV "}", NULL,
		   DECODE "Object 'Kind' is missing in '{\"apiVersion\":\"resource.nvidia.com/"
			  "v1beta1\"}'");
	expect_gpu("{\"apiVersion\":\"a/b/c\",\"kind\":\"GpuConfig\"}", NULL,
		   DECODE "unexpected GroupVersion string: a/b/c");
	expect_gpu("{\"apiVersion\":5,\"kind\":\"GpuConfig\"}", NULL,
		   DECODE "couldn't get version/kind; json parse error: json: cannot unmarshal "
			  "number into Go struct field .apiVersion of type string");
	expect_gpu("[1]", NULL,
		   DECODE
		   "couldn't get version/kind; json parse error: json: cannot unmarshal array "
		   "into Go value of type struct { APIVersion string "
		   "\"json:\\\"apiVersion,omitempty\\\"\"; Kind string "
		   "\"json:\\\"kind,omitempty\\\"\" }");
	/* a registered kind that is no device config, unscoped or scoped */
	expect_gpu("{" GV ",\"kind\":\"ComputeDomainChannelConfig\",\"domainID\":\"x\"}", NULL,
		   "runtime object is not a recognized configuration");
}

/* dra-driver-nvidia-gpu v25.12.0 cmd/gpu-kubelet-plugin/device_state.go prepareDevices: a scoped
 * config of the wrong kind fails; an unscoped one is skipped. */
static void kind_mismatch(void **state)
{
	struct draprepare_result r;
	char *cfg;

	(void)state;
	expect_gpu("{" GV ",\"kind\":\"MigDeviceConfig\"}", NULL,
		   "cannot apply MigDeviceConfig to device type gpu (request: gpu)");
	expect_mig("{" GV ",\"kind\":\"GpuConfig\"}", NULL,
		   "cannot apply GpuConfig to device type mig (request: mig)");
	expect_gpu("{" GV ",\"kind\":\"VfioDeviceConfig\"}", NULL,
		   "cannot apply VfioDeviceConfig to device type gpu (request: gpu)");

	/* unscoped GpuConfig with a bad strategy: skipped for the MIG device */
	prepare_with(MIG0,
		     "[{\"source\":\"FromClaim\",\"opaque\":{\"driver\":\"gpu.nvidia.com\","
		     "\"parameters\":{" GV ",\"kind\":\"GpuConfig\",\"sharing\":{\"strategy\":"
		     "\"TimeSlicing\"}}}}]",
		     NULL, &r);
	assert_int_equal(r.outcome, DRAPREPARE_OK);
	assert_string_equal(r.devices[0].config_source, "default");
	draprepare_result_release(&r);

	/* another driver's config is not decoded at all */
	cfg = one_config("FromClaim", "gpu", "{\"kind\":\"Nonsense\"}");
	cfg[strlen(cfg) - 1] = '\0';
	char buf[1024];
	snprintf(buf, sizeof(buf),
		 "%s,{\"source\":\"FromClaim\",\"requests\":[\"gpu\"],"
		 "\"opaque\":{\"driver\":\"other.example.com\",\"parameters\":"
		 "{\"kind\":\"Nonsense\"}}}]",
		 cfg);
	free(cfg);
	/* the first is ours and fails: Nonsense has no apiVersion */
	prepare_with(GPU0, buf, NULL, &r);
	assert_int_equal(r.outcome, DRAPREPARE_REFUSED);
	assert_string_equal(r.step_error, DECODE "Object 'apiVersion' is missing in "
						 "'{\"kind\":\"Nonsense\"}'");
	draprepare_result_release(&r);
}

/* Precedence: class configs, then claim configs, the later winning; scoped or not. */
static void precedence(void **state)
{
	struct draprepare_result r;

	(void)state;
	/* the claim's config listed first still beats the class's listed after it */
	prepare_with(GPU0,
		     "[{\"source\":\"FromClaim\",\"requests\":[\"gpu\"],\"opaque\":{\"driver\":"
		     "\"gpu.nvidia.com\",\"parameters\":{" GV ",\"kind\":\"GpuConfig\",\"sharing\":"
		     "{\"strategy\":\"MPS\"}}}},"
		     "{\"source\":\"FromClass\",\"requests\":[\"gpu\"],\"opaque\":{\"driver\":"
		     "\"gpu.nvidia.com\",\"parameters\":{" GV ",\"kind\":\"GpuConfig\",\"sharing\":"
		     "{\"strategy\":\"TimeSlicing\"}}}}]",
		     "TimeSlicingSettings=true,MPSSupport=true", &r);
	assert_int_equal(r.outcome, DRAPREPARE_OK);
	assert_string_equal(r.devices[0].sharing, "MPS");
	assert_string_equal(r.devices[0].config_source, "FromClaim");
	assert_int_equal(r.devices[0].config_index, 0);
	draprepare_result_release(&r);

	/* a later unscoped claim config beats an earlier scoped one */
	prepare_with(GPU0,
		     "[{\"source\":\"FromClaim\",\"requests\":[\"gpu\"],\"opaque\":{\"driver\":"
		     "\"gpu.nvidia.com\",\"parameters\":{" GV ",\"kind\":\"GpuConfig\",\"sharing\":"
		     "{\"strategy\":\"MPS\"}}}},"
		     "{\"source\":\"FromClaim\",\"opaque\":{\"driver\":"
		     "\"gpu.nvidia.com\",\"parameters\":{" GV ",\"kind\":\"GpuConfig\"}}}]",
		     "TimeSlicingSettings=true,MPSSupport=true", &r);
	assert_string_equal(r.devices[0].sharing, "TimeSlicing");
	assert_int_equal(r.devices[0].config_index, 1);
	draprepare_result_release(&r);

	/* a config for "acc" does not reach the subrequest result "acc/mig" (device_state.go
	 * matches the exact string) */
	prepare_with("[{\"request\":\"acc/mig\",\"driver\":\"gpu.nvidia.com\",\"pool\":\"n\","
		     "\"device\":\"gpu-2-mig-1g10gb-19-0\"}]",
		     "[{\"source\":\"FromClaim\",\"requests\":[\"acc\"],\"opaque\":{\"driver\":"
		     "\"gpu.nvidia.com\",\"parameters\":{" GV ",\"kind\":\"GpuConfig\"}}}]",
		     NULL, &r);
	assert_int_equal(r.outcome, DRAPREPARE_OK);
	assert_string_equal(r.devices[0].config_source, "default");
	draprepare_result_release(&r);

	/* an invalid source */
	prepare_with(GPU0,
		     "[{\"source\":\"FromNowhere\",\"opaque\":{\"driver\":\"gpu.nvidia.com\"}}]",
		     NULL, &r);
	assert_string_equal(
		r.step_error,
		"error getting opaque device configs: invalid config source: FromNowhere");
	draprepare_result_release(&r);
}

/* A device the node does not publish, and one another claim holds. */
static void devices_missing_and_held(void **state)
{
	struct draprepare_result r;
	struct draprepare_gates g;
	struct gs_error err;
	const struct draprepare_held held[] = {{"u-0", "gpu-0", NULL}};
	json_t *c, *sl = loads(slices_json);

	(void)state;
	prepare_with("[{\"request\":\"gpu\",\"driver\":\"gpu.nvidia.com\",\"pool\":\"n\","
		     "\"device\":\"gpu-9\"}]",
		     "[]", NULL, &r);
	assert_string_equal(r.step_error, "requested device is not allocatable: gpu-9");
	draprepare_result_release(&r);

	gates_init(&g);
	c = claim(GPU0, "[]");
	assert_int_equal(draprepare_claim(c, sl, &g, held, 1, &r, &err), 0);
	assert_int_equal(r.outcome, DRAPREPARE_REFUSED);
	assert_string_equal(r.driver_error,
			    "error preparing devices for claim dra-demo/shared-t4:u-1: unable to "
			    "prepare claim u-1: requested device gpu-0 is already allocated to "
			    "different claim u-0");
	draprepare_result_release(&r);

	/* the claim's own UID in the checkpoint: already prepared, answered at once */
	const struct draprepare_held mine[] = {{"u-1", "gpu-0", NULL}};
	assert_int_equal(draprepare_claim(c, sl, &g, mine, 1, &r, &err), 0);
	assert_int_equal(r.outcome, DRAPREPARE_OK);
	assert_true(r.already_prepared);
	assert_int_equal(r.n_devices, 1);
	draprepare_result_release(&r);
	json_decref(c);

	/* prepared under TimeSlicingSettings, the gate now off: still prepared */
	c = claim(GPU0, "[{\"source\":\"FromClaim\",\"requests\":[\"gpu\"],\"opaque\":{"
			"\"driver\":\"gpu.nvidia.com\",\"parameters\":" TS_LONG "}}]");
	assert_int_equal(draprepare_claim(c, sl, &g, mine, 1, &r, &err), 0);
	assert_int_equal(r.outcome, DRAPREPARE_OK);
	assert_true(r.already_prepared);
	assert_null(r.event_message);
	draprepare_result_release(&r);
	assert_int_equal(draprepare_claim(c, sl, &g, NULL, 0, &r, &err), 0);
	assert_int_equal(r.outcome, DRAPREPARE_REFUSED);
	draprepare_result_release(&r);
	json_decref(c);
	json_decref(sl);
}

/* timeSlicingConfig: {} with the gate on: Validate dereferences a nil interval. */
static void nil_interval_crashes(void **state)
{
	struct draprepare_result r;
	char *cfg = one_config("FromClaim", "gpu",
			       "{" GV ",\"kind\":\"GpuConfig\",\"sharing\":{\"strategy\":"
			       "\"TimeSlicing\",\"timeSlicingConfig\":{}}}");

	(void)state;
	prepare_with(GPU0, cfg, "TimeSlicingSettings=true", &r);
	free(cfg);
	assert_int_equal(r.outcome, DRAPREPARE_CRASHED);
	assert_non_null(strstr(r.event_message, "NodePrepareResources: rpc error"));
	draprepare_result_release(&r);
}

/* applySharingConfig: settings of the other strategy, per-device MPS limits. */
static void apply_errors(void **state)
{
	(void)state;
	expect_gpu("{" GV ",\"kind\":\"GpuConfig\",\"sharing\":{\"strategy\":\"TimeSlicing\","
		   "\"mpsConfig\":{}}}",
		   "TimeSlicingSettings=true,MPSSupport=true",
		   "error applying config: error getting timeslice config for requests '[gpu]' in "
		   "claim 'u-1': cannot use MpsConfig with the 'TimeSlicing' strategy");
	expect_gpu("{" GV ",\"kind\":\"GpuConfig\",\"sharing\":{\"strategy\":\"MPS\","
		   "\"timeSlicingConfig\":{\"interval\":\"Long\"}}}",
		   "MPSSupport=true",
		   "error applying config: error getting MPS configuration: cannot use "
		   "TimeSlicingConfig with the 'MPS' strategy");
	expect_gpu("{" GV ",\"kind\":\"GpuConfig\",\"sharing\":{\"strategy\":\"MPS\",\"mpsConfig\":"
		   "{\"defaultPerDevicePinnedMemoryLimit\":{\"3\":\"1Gi\"}}}}",
		   "MPSSupport=true",
		   "error applying config: error starting MPS control daemon: error transforming "
		   "DefaultPerDevicePinnedMemoryLimit into string: invalid device: invalid device "
		   "index: 3");
	expect_gpu("{" GV ",\"kind\":\"GpuConfig\",\"sharing\":{\"strategy\":\"MPS\",\"mpsConfig\":"
		   "{\"defaultPerDevicePinnedMemoryLimit\":{\"GPU-0\":\"1Gi\",\"0\":\"2Gi\"}}}}",
		   "MPSSupport=true", NULL);
}

static void gates(void **state)
{
	struct draprepare_gates g;
	struct gs_error err;
	char buf[512];

	(void)state;
	gates_init(&g);
	assert_false(g.time_slicing_settings);
	assert_false(g.mps_support);
	assert_true(g.imex_daemons_with_dns_names);
	assert_int_equal(
		draprepare_gates_parse(&g, " TimeSlicingSettings=true , MPSSupport=1", &err), 0);
	assert_true(g.time_slicing_settings);
	assert_true(g.mps_support);
	assert_int_equal(draprepare_gates_parse(&g, "Bogus=true", &err), -1);
	assert_string_equal(err.msg, "unrecognized feature gate: Bogus");
	assert_int_equal(draprepare_gates_parse(&g, "MPSSupport", &err), -1);
	assert_string_equal(err.msg, "missing bool value for MPSSupport");
	assert_int_equal(draprepare_gates_parse(&g, "MPSSupport=yes", &err), -1);
	assert_string_equal(err.msg, "invalid value of MPSSupport=yes, err: strconv.ParseBool: "
				     "parsing \"yes\": invalid syntax");
	assert_int_equal(draprepare_gates_parse(&g, "DynamicMIG=true", &err), -1);
	assert_string_equal(
		err.msg, "feature gate DynamicMIG is currently mutually exclusive with MPSSupport");
	assert_true(g.mps_support); /* unchanged on error */
	assert_int_equal(draprepare_gates_parse(&g, "ContextualLogging=false", &err), 0);
	draprepare_gates_string(&g, buf, sizeof(buf));
	assert_non_null(strstr(buf, "TimeSlicingSettings=true,MPSSupport=true,DynamicMIG=false"));

	/* per node: the annotation on top of the cluster's */
	struct draprepare_gates cluster, node_g;
	gates_init(&cluster);
	json_t *node = loads("{\"kind\":\"Node\",\"metadata\":{\"name\":\"dra-t4\",\"annotations\":"
			     "{\"gpushare.io/dra-feature-gates\":\"TimeSlicingSettings=true\"}}}");
	assert_int_equal(draprepare_gates_for_node(node, &cluster, &node_g, &err), 0);
	assert_true(node_g.time_slicing_settings);
	json_object_set_new(json_object_get(json_object_get(node, "metadata"), "annotations"),
			    "gpushare.io/dra-feature-gates", json_string("Nope=true"));
	assert_int_equal(draprepare_gates_for_node(node, &cluster, &node_g, &err), -1);
	assert_string_equal(err.msg, "node \"dra-t4\": annotation gpushare.io/dra-feature-gates: "
				     "unrecognized feature gate: Nope");
	json_decref(node);
}

/* The kubelet's checks before the driver, and a two-pod shared claim. */
static void pods(void **state)
{
	struct draprepare_result r;
	struct draprepare_gates g;
	struct gs_error err;
	json_t *sl = loads(slices_json);
	json_t *claims = json_array();
	json_t *c = claim(GPU0, "[{\"source\":\"FromClaim\",\"requests\":[\"gpu\"],\"opaque\":{"
				"\"driver\":\"gpu.nvidia.com\",\"parameters\":" TS_LONG "}}]");
	json_object_set_new(
		json_object_get(c, "status"), "reservedFor",
		loads("[{\"resource\":\"pods\",\"name\":\"ts-pod-1\",\"uid\":\"p-1\"}]"));
	json_array_append_new(claims, c);
	json_t *pod = loads("{\"kind\":\"Pod\",\"metadata\":{\"namespace\":\"dra-demo\",\"name\":"
			    "\"ts-pod-1\",\"uid\":\"p-1\"},\"spec\":{\"containers\":[{\"name\":"
			    "\"ctr\",\"image\":\"ubuntu:22.04\"}],\"resourceClaims\":[{\"name\":"
			    "\"gpu\",\"resourceClaimName\":\"shared-t4\"}]}}");

	(void)state;
	gates_init(&g);
	assert_int_equal(draprepare_pod(pod, claims, sl, &g, NULL, 0, &r, &err), 0);
	assert_int_equal(r.outcome, DRAPREPARE_REFUSED);
	assert_string_equal(r.claim_name, "shared-t4");
	assert_non_null(
		strstr(r.event_message, "ResourceClaim shared-t4: error preparing devices"));
	draprepare_result_release(&r);

	assert_int_equal(draprepare_gates_parse(&g, "TimeSlicingSettings=true", &err), 0);
	assert_int_equal(draprepare_pod(pod, claims, sl, &g, NULL, 0, &r, &err), 0);
	assert_int_equal(r.outcome, DRAPREPARE_OK);
	assert_int_equal(r.n_devices, 1);
	draprepare_result_release(&r);

	/* a second pod not in reservedFor */
	json_object_set_new(json_object_get(pod, "metadata"), "uid", json_string("p-2"));
	json_object_set_new(json_object_get(pod, "metadata"), "name", json_string("ts-pod-2"));
	assert_int_equal(draprepare_pod(pod, claims, sl, &g, NULL, 0, &r, &err), 0);
	assert_int_equal(r.outcome, DRAPREPARE_KUBELET);
	assert_string_equal(r.event_message,
			    "Failed to prepare dynamic resources: prepare dynamic resources: pod "
			    "ts-pod-2 (p-2) is not allowed to use ResourceClaim shared-t4 (u-1)");
	draprepare_result_release(&r);

	/* a claim that does not exist */
	json_array_clear(claims);
	assert_int_equal(draprepare_pod(pod, claims, sl, &g, NULL, 0, &r, &err), 0);
	assert_string_equal(r.kubelet_error,
			    "prepare dynamic resources: fetch ResourceClaim shared-t4: "
			    "resourceclaims.resource.k8s.io \"shared-t4\" not found");
	draprepare_result_release(&r);

	/* a template claim not generated yet */
	json_t *pc = json_array_get(kobj_get(pod, "spec.resourceClaims"), 0);
	json_object_del(pc, "resourceClaimName");
	json_object_set_new(pc, "resourceClaimTemplateName", json_string("t"));
	assert_int_equal(draprepare_pod(pod, claims, sl, &g, NULL, 0, &r, &err), 0);
	assert_string_equal(r.kubelet_error,
			    "prepare dynamic resources: pod \"dra-demo/ts-pod-2\": "
			    "ResourceClaim not created yet");
	draprepare_result_release(&r);

	json_decref(pod);
	json_decref(claims);
	json_decref(sl);
}

static void pending_status(void **state)
{
	(void)state;
	json_t *pod = loads("{\"kind\":\"Pod\",\"spec\":{\"containers\":[{\"name\":\"a\",\"image\":"
			    "\"i\"},{\"name\":\"b\",\"image\":\"i\"}]}}");
	json_t *st = draprepare_pending_status(pod);
	char *s = json_dumps(st, JSON_COMPACT);
	assert_string_equal(
		s,
		"{\"phase\":\"Pending\",\"conditions\":[{\"type\":\"PodReadyToStartContainers\","
		"\"status\":\"False\"},{\"type\":\"Initialized\",\"status\":\"True\"},"
		"{\"type\":\"Ready\",\"status\":\"False\",\"reason\":\"ContainersNotReady\","
		"\"message\":\"containers with unready status: [a b]\"},{\"type\":"
		"\"ContainersReady\",\"status\":\"False\",\"reason\":\"ContainersNotReady\","
		"\"message\":\"containers with unready status: [a b]\"}],\"containerStatuses\":"
		"[{\"name\":\"a\",\"image\":\"i\",\"ready\":false,\"restartCount\":0,\"started\":"
		"false,\"state\":{\"waiting\":{\"reason\":\"ContainerCreating\"}}},{\"name\":\"b\","
		"\"image\":\"i\",\"ready\":false,\"restartCount\":0,\"started\":false,\"state\":"
		"{\"waiting\":{\"reason\":\"ContainerCreating\"}}}]}");
	free(s);
	json_decref(st);
	json_decref(pod);
}

static void unallocated(void **state)
{
	struct draprepare_result r;
	struct draprepare_gates g;
	struct gs_error err;
	json_t *c =
		loads("{\"kind\":\"ResourceClaim\",\"metadata\":{\"name\":\"x\",\"uid\":\"u\"}}");

	(void)state;
	gates_init(&g);
	assert_int_equal(draprepare_claim(c, NULL, &g, NULL, 0, &r, &err), 0);
	assert_int_equal(r.outcome, DRAPREPARE_KUBELET);
	assert_string_equal(r.kubelet_error,
			    "prepare dynamic resources: ResourceClaim x: not allocated");
	draprepare_result_release(&r);
	json_decref(c);
	c = loads("{\"kind\":\"Pod\"}");
	assert_int_equal(draprepare_claim(c, NULL, &g, NULL, 0, &r, &err), -1);
	json_decref(c);
}

/* ---- v0.5.0 (sigs.k8s.io/dra-driver-nvidia-gpu@v0.5.0) ---- */

static void with_release(enum dradriver_release r)
{
	release = dradriver_get(r);
}

/* v0.4.1 on: no implicit TimeSlicing; v0.5.0's texts for the same refusals. */
static void v05_prepare_texts(void **state)
{
	struct draprepare_result r;

	(void)state;
	with_release(DRADRIVER_V0_5_0);
	prepare_with(GPU0, "[]", "TimeSlicingSettings=true", &r);
	assert_int_equal(r.outcome, DRAPREPARE_OK);
	assert_string_equal(r.devices[0].sharing, "");
	assert_string_equal(r.devices[0].interval, "");
	draprepare_result_release(&r);
	expect_gpu(TS_LONG, NULL,
		   "error validating GPU config: \"TimeSlicing\" is selected as the GPU sharing "
		   "strategy, but the \"TimeSlicingSettings\" feature gate is not enabled");
	expect_gpu("{" GV ",\"kind\":\"GpuConfig\",\"sharing\":{\"strategy\":\"Bogus\"}}", NULL,
		   "error validating GPU config: unknown GPU sharing strategy: Bogus, supported "
		   "GPU sharing strategies: TimeSlicing, MPS");
	expect_gpu("{" GV ",\"kind\":\"GpuConfig\",\"sharing\":{\"strategy\":\"TimeSlicing\","
		   "\"timeSlicingConfig\":{\"interval\":\"VeryLong\"}}}",
		   "TimeSlicingSettings=true",
		   "error validating GPU config: unknown time-slice interval: VeryLong, supported "
		   "time-slice intervals: Default, Short, Medium, Long");
	expect_gpu("{" GV ",\"kind\":\"MigDeviceConfig\"}", NULL,
		   "cannot apply MigDeviceConfig to device \"gpu-0\" of type \"gpu\" (request: "
		   "gpu)");
	prepare_with("[{\"request\":\"gpu\",\"driver\":\"gpu.nvidia.com\",\"pool\":\"n\","
		     "\"device\":\"gpu-9\"}]",
		     "[]", NULL, &r);
	assert_string_equal(r.step_error, "allocatable not found for device \"gpu-9\"");
	draprepare_result_release(&r);
	/* an unscoped ComputeDomainChannelConfig matches no device: skipped */
	prepare_with(
		GPU0,
		"[{\"source\":\"FromClaim\",\"requests\":[],\"opaque\":{\"driver\":\"gpu.nvidia."
		"com\",\"parameters\":{" GV ",\"kind\":\"ComputeDomainChannelConfig\"}}}]",
		NULL, &r);
	assert_int_equal(r.outcome, DRAPREPARE_OK);
	draprepare_result_release(&r);
	release = NULL;
}

/* v0.5.0's gates: the new ones, its checks, and v25.12.0 not knowing them. */
static void v05_gates(void **state)
{
	struct draprepare_gates g, cluster, node_g;
	struct gs_error err;
	json_t *node;

	(void)state;
	draprepare_gates_default(&g);
	assert_ptr_equal(g.driver, dradriver_get(DRADRIVER_V0_5_0));
	assert_int_equal(draprepare_gates_parse(&g, "ConsumableShares=true", &err), 0);
	assert_true(g.consumable_shares);
	assert_int_equal(draprepare_gates_parse(&g, "DeviceMetadata=true", &err), -1);
	assert_string_equal(err.msg, "feature gate DeviceMetadata requires PassthroughSupport to "
				     "also be enabled");
	assert_int_equal(draprepare_gates_parse(
				 &g, "PassthroughSupport=true,NVMLDeviceHealthCheck=true", &err),
			 -1);
	assert_string_equal(err.msg, "feature gate PassthroughSupport is currently mutually "
				     "exclusive with NVMLDeviceHealthCheck");
	draprepare_gates_default_for(&g, dradriver_get(DRADRIVER_V25_12_0));
	assert_int_equal(draprepare_gates_parse(&g, "ConsumableShares=true", &err), -1);
	assert_string_equal(err.msg, "unrecognized feature gate: ConsumableShares");

	/* per node: release, gates, --consumable-shares */
	draprepare_gates_default(&cluster);
	node = loads("{\"kind\":\"Node\",\"metadata\":{\"name\":\"n\",\"labels\":{"
		     "\"gpushare.io/dra-consumable-shares\":\"100\"},\"annotations\":{"
		     "\"gpushare.io/dra-feature-gates\":\"ConsumableShares=true\"}}}");
	assert_int_equal(draprepare_gates_for_node(node, &cluster, &node_g, &err), 0);
	assert_true(draprepare_consumable_shares(&node_g));
	assert_int_equal(node_g.shares.mode, DRADRIVER_SHARES_COUNT);
	assert_int_equal(node_g.shares.count, 100);
	json_object_set_new(json_object_get(json_object_get(node, "metadata"), "annotations"),
			    "gpushare.io/dra-feature-gates", json_string("MPSSupport=true"));
	assert_int_equal(draprepare_gates_for_node(node, &cluster, &node_g, &err), -1);
	assert_string_equal(err.msg, "node \"n\": gpushare.io/dra-consumable-shares: "
				     "--consumable-shares requires feature gate ConsumableShares "
				     "to be enabled");
	json_object_set_new(json_object_get(json_object_get(node, "metadata"), "annotations"),
			    "gpushare.io/dra-feature-gates", json_string("ConsumableShares=true"));
	json_object_set_new(json_object_get(json_object_get(node, "metadata"), "labels"),
			    "gpushare.io/dra-consumable-shares", json_string("0"));
	assert_int_equal(draprepare_gates_for_node(node, &cluster, &node_g, &err), -1);
	assert_string_equal(err.msg, "node \"n\": gpushare.io/dra-consumable-shares: invalid "
				     "value for --consumable-shares: \"0\" (must be 'disabled', "
				     "'memory', 'unlimited', or a positive integer)");
	json_object_set_new(json_object_get(json_object_get(node, "metadata"), "labels"),
			    "gpushare.io/dra-driver-version", json_string("v25.12.0"));
	assert_int_equal(draprepare_gates_for_node(node, &cluster, &node_g, &err), -1);
	assert_string_equal(err.msg, "node \"n\": annotation gpushare.io/dra-feature-gates: "
				     "unrecognized feature gate: ConsumableShares");
	json_object_set_new(json_object_get(json_object_get(node, "metadata"), "labels"),
			    "gpushare.io/dra-driver-version", json_string("v0.4"));
	assert_int_equal(draprepare_gates_for_node(node, &cluster, &node_g, &err), -1);
	assert_string_equal(err.msg, "node \"n\": gpushare.io/dra-driver-version: unknown DRA "
				     "driver release \"v0.4\" (gpushare models v25.12.0 and "
				     "v0.5.0)");
	json_decref(node);
}

/* Gates of v0.5.0 with ConsumableShares and --consumable-shares=100. */
static void shares_gates(struct draprepare_gates *g)
{
	struct gs_error err;

	draprepare_gates_default_for(g, dradriver_get(DRADRIVER_V0_5_0));
	if (draprepare_gates_parse(g, "ConsumableShares=true,TimeSlicingSettings=true", &err))
		fail_msg("gates: %s", err.msg);
	g->shares.mode = DRADRIVER_SHARES_COUNT;
	g->shares.count = 100;
}

/* Consumable shares: a held device is prepared again when the configs agree. */
static void shares_overlap(void **state)
{
	struct draprepare_result r;
	struct draprepare_gates g;
	struct gs_error err;
	json_t *c = claim(GPU0, "[]"), *sl = loads(slices_json);
	json_t *plain = loads("{\"kind\":\"GpuConfig\",\"apiVersion\":\"resource.nvidia.com/"
			      "v1beta1\"}");
	json_t *ts = loads("{\"kind\":\"GpuConfig\",\"apiVersion\":\"resource.nvidia.com/v1beta1\","
			   "\"sharing\":{\"strategy\":\"TimeSlicing\",\"timeSlicingConfig\":{"
			   "\"interval\":\"Long\"}}}");
	struct draprepare_held held[] = {{"u-0", "gpu-0", plain}};

	(void)state;
	shares_gates(&g);
	assert_int_equal(draprepare_claim(c, sl, &g, held, 1, &r, &err), 0);
	assert_int_equal(r.outcome, DRAPREPARE_OK);
	assert_false(r.already_prepared);
	assert_int_equal(r.n_devices, 1);
	draprepare_result_release(&r);

	held[0].config = ts;
	assert_int_equal(draprepare_claim(c, sl, &g, held, 1, &r, &err), 0);
	assert_int_equal(r.outcome, DRAPREPARE_REFUSED);
	assert_string_equal(r.driver_error,
			    "error preparing devices for claim dra-demo/shared-t4:u-1: unable to "
			    "prepare claim u-1: requested device gpu-0 has conflicting "
			    "configuration with already prepared claim u-0");
	draprepare_result_release(&r);

	/* without consumable shares the overlap is refused as before */
	g.shares.mode = DRADRIVER_SHARES_DISABLED;
	held[0].config = plain;
	assert_int_equal(draprepare_claim(c, sl, &g, held, 1, &r, &err), 0);
	assert_int_equal(r.outcome, DRAPREPARE_REFUSED);
	assert_non_null(strstr(r.driver_error, "is already allocated to different claim u-0"));
	draprepare_result_release(&r);
	json_decref(c);

	/* MPS is refused with consumable shares */
	shares_gates(&g);
	assert_int_equal(draprepare_gates_parse(&g, "MPSSupport=true", &err), 0);
	c = claim(GPU0, "[{\"source\":\"FromClaim\",\"requests\":[\"gpu\"],\"opaque\":{"
			"\"driver\":\"gpu.nvidia.com\",\"parameters\":{" GV
			",\"kind\":\"GpuConfig\",\"sharing\":{\"strategy\":\"MPS\"}}}}]");
	assert_int_equal(draprepare_claim(c, sl, &g, NULL, 0, &r, &err), 0);
	assert_int_equal(r.outcome, DRAPREPARE_REFUSED);
	assert_string_equal(r.step_error, "error applying config: MPS sharing is not supported "
					  "when consumable shares is enabled");
	draprepare_result_release(&r);
	json_decref(c);
	json_decref(sl);
	json_decref(plain);
	json_decref(ts);
}

/* Unprepare: a shared device is torn down only when its last claim goes. */
static void unprepare_refcount(void **state)
{
	struct draprepare_gates g;
	struct draprepare_device dev = {.device = "gpu-0", .type = "gpu", .sharing = "TimeSlicing"};
	struct draprepare_device plain = {.device = "gpu-1", .type = "gpu", .sharing = ""};
	struct draprepare_device devs[2];
	struct draprepare_unprepared out[2];
	const struct draprepare_held held[] = {
		{"u-a", "gpu-0", NULL}, {"u-b", "gpu-0", NULL}, {"u-a", "gpu-1", NULL}};

	(void)state;
	devs[0] = dev;
	devs[1] = plain;
	shares_gates(&g);
	/* u-a goes first: u-b still holds gpu-0, so its slice stays */
	draprepare_unprepare(&g, "u-a", devs, 2, held, 3, out);
	assert_int_equal(out[0].what, DRAPREPARE_TEARDOWN_KEPT);
	assert_string_equal(out[0].by, "u-b");
	/* gpu-1 had no time slice set (v0.4.1 on): nothing to reset */
	assert_int_equal(out[1].what, DRAPREPARE_TEARDOWN_NONE);
	/* u-b, the last: the slice goes back to Default */
	draprepare_unprepare(&g, "u-b", devs, 1, held + 1, 1, out);
	assert_int_equal(out[0].what, DRAPREPARE_TEARDOWN_TIMESLICE);
	assert_null(out[0].by);

	/* v25.12.0: every full GPU is reset, shared or not */
	draprepare_gates_default_for(&g, dradriver_get(DRADRIVER_V25_12_0));
	g.time_slicing_settings = true;
	draprepare_unprepare(&g, "u-a", devs, 2, held, 3, out);
	assert_int_equal(out[0].what, DRAPREPARE_TEARDOWN_TIMESLICE);
	assert_int_equal(out[1].what, DRAPREPARE_TEARDOWN_TIMESLICE);

	/* DynamicMIG: the MIG device is destroyed only by its last claim */
	struct draprepare_device mig = {
		.device = "gpu-0-mig-1g10gb-19-0", .type = "mig", .sharing = ""};
	const struct draprepare_held mheld[] = {{"u-a", "gpu-0-mig-1g10gb-19-0", NULL},
						{"u-b", "gpu-0-mig-1g10gb-19-0", NULL}};
	shares_gates(&g);
	g.dynamic_mig = true;
	draprepare_unprepare(&g, "u-a", &mig, 1, mheld, 2, out);
	assert_int_equal(out[0].what, DRAPREPARE_TEARDOWN_KEPT);
	draprepare_unprepare(&g, "u-b", &mig, 1, mheld + 1, 1, out);
	assert_int_equal(out[0].what, DRAPREPARE_TEARDOWN_DELETE_MIG);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(timeslicing_refused_by_default),
		cmocka_unit_test(timeslicing_accepted_with_gate),
		cmocka_unit_test(defaults),
		cmocka_unit_test(strategy_refusals),
		cmocka_unit_test(interval_refused),
		cmocka_unit_test(thread_percentage_refused),
		cmocka_unit_test(unknown_fields),
		cmocka_unit_test(wrong_types),
		cmocka_unit_test(kinds_and_versions),
		cmocka_unit_test(kind_mismatch),
		cmocka_unit_test(precedence),
		cmocka_unit_test(devices_missing_and_held),
		cmocka_unit_test(nil_interval_crashes),
		cmocka_unit_test(apply_errors),
		cmocka_unit_test(gates),
		cmocka_unit_test(pods),
		cmocka_unit_test(pending_status),
		cmocka_unit_test(unallocated),
		cmocka_unit_test(v05_prepare_texts),
		cmocka_unit_test(v05_gates),
		cmocka_unit_test(shares_overlap),
		cmocka_unit_test(unprepare_refcount),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
