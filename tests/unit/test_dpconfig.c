/*
 * The device-plugin config rules of k8s-device-plugin v0.20.0 api/config/v1/ and the
 * ConfigMap selection of k8s-device-plugin v0.20.0 cmd/config-manager/main.go updateConfigName.
 * Every expected message is upstream's text.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/dpconfig_set.h"

#define RFC1123                                                                                    \
	"[a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' " \
	"or '.', and must start and end with an alphanumeric character (e.g. 'example.com', "      \
	"regex used for validation is "                                                            \
	"'[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')]"

static const struct ydoc_pos no_origin = {.line = 0, .col = 0};

static struct dpconfig *parse_ok(const char *yaml)
{
	struct dpconfig *c = NULL;
	struct gs_error err;

	if (dpconfig_parse("c.yaml", yaml, strlen(yaml), no_origin, &c, NULL, &err) != 0)
		fail_msg("unexpected error: %s\n--- config:\n%s", err.msg, yaml);
	return c;
}

/* The error upstream reports (innermost text), and its position when line > 0. */
static void expect_error_at(const char *yaml, const char *msg, int line, int col)
{
	struct dpconfig *c = NULL;
	struct gs_error err;

	if (dpconfig_parse("c.yaml", yaml, strlen(yaml), no_origin, &c, NULL, &err) == 0)
		fail_msg("parsed, want error '%s'\n--- config:\n%s", msg, yaml);
	assert_null(c);
	if (strcmp(err.msg, msg))
		fail_msg("error '%s'\n   want '%s'\n--- config:\n%s", err.msg, msg, yaml);
	if (line && (err.line != line || err.col != col))
		fail_msg("'%s' at %d:%d, want %d:%d", msg, err.line, err.col, line, col);
}

static void expect_error(const char *yaml, const char *msg)
{
	expect_error_at(yaml, msg, 0, 0);
}

/* All diags of a parse; caller releases. */
static int parse_diags(const char *yaml, struct dpconfig **c, struct dp_diags *d)
{
	struct gs_error err;

	dp_diags_init(d);
	return dpconfig_parse_diags("c.yaml", NULL, yaml, strlen(yaml), no_origin, c, d, &err);
}

static bool has_diag(const struct dp_diags *d, enum dp_level level, const char *msg)
{
	for (size_t i = 0; i < d->n; i++)
		if (d->items[i].level == level && !strcmp(d->items[i].msg, msg))
			return true;
	return false;
}

static bool has_diag_prefix(const struct dp_diags *d, enum dp_level level, const char *msg)
{
	for (size_t i = 0; i < d->n; i++)
		if (d->items[i].level == level && !strncmp(d->items[i].msg, msg, strlen(msg)))
			return true;
	return false;
}

static void expect_validate(const char *yaml, const char *msg)
{
	struct dpconfig *c = parse_ok(yaml);
	struct gs_error err;
	int rc = dpconfig_validate(c, &err);

	if (!msg) {
		if (rc)
			fail_msg("validate failed: %s\n--- config:\n%s", err.msg, yaml);
	} else {
		if (!rc)
			fail_msg("validate passed, want '%s'\n--- config:\n%s", msg, yaml);
		if (strcmp(err.msg, msg))
			fail_msg("validate '%s'\n         want '%s'", err.msg, msg);
	}
	dpconfig_free(c);
}

/* k8s-device-plugin v0.20.0 api/config/v1/config.go */
static void empty_and_version(void **state)
{
	struct dpconfig *c;

	(void)state;
	c = parse_ok("");
	assert_int_equal(dpconfig_sharing_strategy(c), DP_SHARING_NONE);
	assert_null(c->mig_strategy);
	assert_int_equal(c->fail_on_init_error, -1);
	dpconfig_free(c);
	c = parse_ok("# only a comment\n");
	dpconfig_free(c);
	c = parse_ok("flags:\n  migStrategy: single\n"); /* missing version means v1 */
	assert_string_equal(c->mig_strategy, "single");
	dpconfig_free(c);
	c = parse_ok("version: \"\"\n");
	dpconfig_free(c);
	c = parse_ok("version: v1\n");
	assert_string_equal(c->version, "v1");
	dpconfig_free(c);
	expect_error_at("version: v2\n", "unknown version: v2", 1, 10);
	/* sigs.k8s.io/yaml hands a number aimed at a string field over as text */
	expect_error("version: 1\n", "unknown version: 1");
	expect_error("version: 1.0\n", "unknown version: 1");
	expect_error(
		"version: [v1]\n",
		"json: cannot unmarshal array into Go struct field Config.version of type string");
	/* a document that is not a mapping */
	expect_error("- a\n- b\n", "json: cannot unmarshal array into Go value of type v1.Config");
	expect_error("hello\n", "json: cannot unmarshal string into Go value of type v1.Config");
	/* only the first YAML document is read */
	c = parse_ok("version: v1\n---\nversion: v9\n");
	dpconfig_free(c);
}

/* k8s-device-plugin v0.20.0 api/config/v1/config.go: Go struct fields fold case, hand-written
 * decoders do not; unknown keys are ignored. */
static void key_case_rules(void **state)
{
	struct dpconfig *c;
	struct dp_diags d;

	(void)state;
	c = parse_ok("VERSION: v1\nFlags:\n  MIGSTRATEGY: mixed\nsharing:\n  timeslicing:\n"
		     "    resources:\n    - name: gpu\n      replicas: 2\n");
	assert_string_equal(c->mig_strategy, "mixed");
	assert_int_equal(dpconfig_sharing_strategy(c), DP_SHARING_TIME_SLICING);
	dpconfig_free(c);
	c = parse_ok("Sharing:\n  MPS:\n    resources:\n    - name: gpu\n      replicas: 2\n"
		     "IMEX:\n  ChannelIDs: [0]\n");
	assert_int_equal(dpconfig_sharing_strategy(c), DP_SHARING_MPS);
	assert_int_equal(c->n_imex_channel_ids, 1);
	dpconfig_free(c);

	expect_error(
		"sharing:\n  timeSlicing:\n    resources:\n    - name: gpu\n      Replicas: 4\n",
		"no replicas specified");
	expect_error(
		"sharing:\n  timeSlicing:\n    resources:\n    - Name: gpu\n      replicas: 4\n",
		"no resource name specified");
	expect_error(
		"sharing:\n  timeSlicing:\n    Resources:\n    - name: gpu\n      replicas: 4\n",
		"no resources specified");
	/* RenameByDefault is not renameByDefault: ignored */
	c = parse_ok("sharing:\n  timeSlicing:\n    RenameByDefault: true\n    resources:\n"
		     "    - name: gpu\n      replicas: 4\n");
	assert_null(c->time_slicing.resources[0].rename);
	assert_false(c->time_slicing.rename_by_default);
	dpconfig_free(c);

	/* unknown keys anywhere are ignored, and lint hears about them */
	assert_int_equal(parse_diags("foo: 1\nflags:\n  bar: 2\n  plugin:\n    baz: 3\nsharing:\n"
				     "  timeSlicing:\n    qux: 1\n    resources:\n    - name: gpu\n"
				     "      replicas: 2\n      quux: 1\n",
				     &c, &d),
			 0);
	assert_true(has_diag_prefix(&d, DP_WARNING, "unknown key 'foo' is ignored (one of: "));
	assert_true(has_diag_prefix(&d, DP_WARNING, "unknown key 'bar' is ignored (one of: "));
	assert_true(has_diag_prefix(&d, DP_WARNING, "unknown key 'baz' is ignored (one of: "));
	/* nothing close: the keys of the block are listed */
	assert_true(has_diag(&d, DP_WARNING,
			     "unknown key 'qux' is ignored (one of: renameByDefault, "
			     "failRequestsGreaterThanOne, resources)"));
	assert_true(has_diag_prefix(&d, DP_WARNING, "unknown key 'quux' is ignored (one of: "));
	dp_diags_release(&d);
	dpconfig_free(c);

	assert_int_equal(
		parse_diags("sharing:\n  timeSlicing:\n    failRequestGreaterThanOne: true\n"
			    "    resources:\n    - name: gpu\n      replicas: 2\n",
			    &c, &d),
		0);
	assert_true(has_diag(&d, DP_WARNING,
			     "unknown key 'failRequestGreaterThanOne' is ignored; did you mean "
			     "'failRequestsGreaterThanOne'?"));
	assert_int_equal(c->time_slicing.fail_requests_greater_than_one, -1);
	dp_diags_release(&d);
	dpconfig_free(c);

	/* of two spellings of one field, the later in sorted order wins */
	c = parse_ok("flags:\n  migstrategy: single\n  MigStrategy: mixed\n");
	assert_string_equal(c->mig_strategy, "single"); /* "MigStrategy" < "migstrategy" */
	dpconfig_free(c);
}

/* k8s-device-plugin v0.20.0 api/config/v1/flags.go: flag types */
static void flag_types(void **state)
{
	struct dpconfig *c;

	(void)state;
	c = parse_ok("flags:\n  migStrategy: none\n  failOnInitError: false\n  mpsRoot: /run/x\n"
		     "  plugin:\n    deviceListStrategy: [envvar, cdi-cri]\n"
		     "    deviceIDStrategy: index\n    sharedDevicesAllocationPolicy: packed\n"
		     "  gfd:\n    sleepInterval: 30s\n");
	assert_int_equal(c->fail_on_init_error, 0);
	assert_string_equal(c->mps_root, "/run/x");
	assert_int_equal(c->n_device_list_strategies, 2);
	assert_string_equal(c->device_list_strategy, "envvar");
	assert_string_equal(c->device_list_strategies[1], "cdi-cri");
	assert_string_equal(c->device_id_strategy, "index");
	assert_string_equal(c->shared_devices_allocation_policy, "packed");
	dpconfig_free(c);
	c = parse_ok("flags:\n  plugin:\n    deviceListStrategy: volume-mounts\n"
		     "  gfd:\n    sleepInterval: infinite\n");
	assert_string_equal(c->device_list_strategy, "volume-mounts");
	dpconfig_free(c);
	/* no coercion under flags: Flags embeds CommandLineFlags */
	expect_error(
		"flags:\n  migStrategy: 1\n",
		"json: cannot unmarshal number into Go struct field Flags.flags.migStrategy of "
		"type string");
	expect_error(
		"flags:\n  failOnInitError: \"yes\"\n",
		"json: cannot unmarshal string into Go struct field Flags.flags.failOnInitError "
		"of type bool");
	expect_error("flags:\n  plugin:\n    deviceIDStrategy: [uuid]\n",
		     "json: cannot unmarshal array into Go struct field "
		     "PluginCommandLineFlags.flags.plugin.deviceIDStrategy of type string");
	expect_error(
		"flags: [1]\n",
		"json: cannot unmarshal array into Go struct field Config.flags of type v1.Flags");
	expect_error(
		"flags:\n  plugin: 3\n",
		"json: cannot unmarshal number into Go struct field Flags.flags.plugin of type "
		"v1.PluginCommandLineFlags");
	expect_error("flags:\n  plugin:\n    deviceListStrategy: 5\n",
		     "invalid deviceListStrategy: 5");
	expect_error("flags:\n  plugin:\n    deviceListStrategy: [envvar, 1]\n",
		     "invalid deviceListStrategy: [\"envvar\",1]");
	expect_error("flags:\n  gfd:\n    sleepInterval: 10x\n",
		     "time: unknown unit \"x\" in duration \"10x\"");
	expect_error("flags:\n  gfd:\n    sleepInterval: ten\n", "time: invalid duration \"ten\"");
	expect_error("flags:\n  gfd:\n    sleepInterval: true\n", "invalid duration");
	expect_error("imex:\n  channelIDs: [a]\n",
		     "json: cannot unmarshal string into Go struct field Imex.imex.channelIDs of "
		     "type int");
	expect_error("imex:\n  channelIDs: 0\n",
		     "json: cannot unmarshal number into Go struct field Imex.imex.channelIDs of "
		     "type []int");
}

/* k8s-device-plugin v0.20.0 api/config/v1/config.go DisableResourceNamingInConfig */
static void resources_section(void **state)
{
	struct dpconfig *c;
	struct dp_diags d;

	(void)state;
	expect_error("resources:\n  gpus:\n  - name: a100\n",
		     "resources must have a 'pattern' field set");
	expect_error("resources:\n  mig:\n  - pattern: '1g.10gb'\n",
		     "resources must have a 'name' field set");
	expect_error("resources:\n  gpus:\n  - pattern: '*'\n    name: A100\n",
		     "incorrect format for resource name 'nvidia.com/A100': " RFC1123);
	expect_error("resources: []\n", "json: cannot unmarshal array into Go struct field "
					"Config.resources of type v1.Resources");
	assert_int_equal(
		parse_diags("resources:\n  gpus:\n  - pattern: '*A100*'\n    name: a100\n", &c, &d),
		0);
	assert_true(c->resources_customised);
	assert_true(
		has_diag(&d, DP_WARNING,
			 "Customizing the 'resources' field is not yet supported in the config. "
			 "Ignoring..."));
	dp_diags_release(&d);
	dpconfig_free(c);
	/* empty lists: nothing to discard, no warning */
	assert_int_equal(parse_diags("resources:\n  gpus: []\n", &c, &d), 0);
	assert_false(
		has_diag(&d, DP_WARNING,
			 "Customizing the 'resources' field is not yet supported in the config. "
			 "Ignoring..."));
	dp_diags_release(&d);
	dpconfig_free(c);
}

/* k8s-device-plugin v0.20.0 api/config/v1/replicas.go */
static void sharing_blocks(void **state)
{
	struct dpconfig *c;
	const struct dp_sharing *sh;

	(void)state;
	expect_error("sharing:\n  timeSlicing: {}\n", "no resources specified");
	expect_error("sharing:\n  mps: {}\n", "no resources specified");
	expect_error("sharing:\n  timeSlicing:\n    resources: []\n", "no resources specified");
	expect_error("sharing:\n  timeSlicing:\n    renameByDefault: true\n",
		     "no resources specified");
	/* bare timeSlicing: is null, and the value field's decoder still runs */
	expect_error_at("sharing:\n  timeSlicing:\n", "no resources specified", 2, 3);
	/* bare mps: is a nil pointer: no error, no sharing */
	c = parse_ok("sharing:\n  mps:\n");
	assert_false(c->mps.present);
	assert_int_equal(dpconfig_sharing_strategy(c), DP_SHARING_NONE);
	dpconfig_free(c);

	expect_error("sharing:\n  timeSlicing:\n    resources:\n    - replicas: 4\n",
		     "no resource name specified");
	expect_error("sharing:\n  timeSlicing:\n    resources:\n    - name: gpu\n",
		     "no replicas specified");
	expect_error_at("sharing:\n  timeSlicing:\n    resources:\n    - name: gpu\n"
			"      replicas: 1\n",
			"number of replicas must be >= 2", 5, 17);
	expect_error("sharing:\n  mps:\n    resources:\n    - name: gpu\n      replicas: 1\n",
		     "number of replicas must be >= 2");
	expect_error(
		"sharing:\n  timeSlicing:\n    resources:\n    - name: gpu\n      replicas: 0\n",
		"number of replicas must be >= 2");
	expect_error(
		"sharing:\n  timeSlicing:\n    resources:\n    - name: gpu\n      replicas: -3\n",
		"number of replicas must be >= 2");
	expect_error("sharing:\n  timeSlicing:\n    resources:\n    - name: gpu\n      replicas:\n",
		     "number of replicas must be >= 2");
	expect_error("sharing:\n  timeSlicing:\n    resources:\n    - name: gpu\n"
		     "      replicas: \"4\"\n",
		     "json: cannot unmarshal string into Go value of type int");
	expect_error("sharing:\n  timeSlicing:\n    resources:\n    - name: gpu\n"
		     "      replicas: 2.5\n",
		     "json: cannot unmarshal number 2.5 into Go value of type int");
	expect_error("sharing:\n  timeSlicing:\n    resources: {name: gpu}\n",
		     "json: cannot unmarshal object into Go value of type []v1.ReplicatedResource");
	expect_error(
		"sharing:\n  timeSlicing: [1]\n",
		"json: cannot unmarshal array into Go value of type map[string]json.RawMessage");
	expect_error(
		"sharing:\n  timeSlicing:\n    resources:\n    - gpu\n",
		"json: cannot unmarshal string into Go value of type map[string]json.RawMessage");
	expect_error("sharing:\n  timeSlicing:\n    renameByDefault: \"yes\"\n    resources:\n"
		     "    - name: gpu\n      replicas: 2\n",
		     "json: cannot unmarshal string into Go value of type bool");

	/* a float that is whole reaches Go as "4" */
	c = parse_ok(
		"sharing:\n  timeSlicing:\n    resources:\n    - name: gpu\n      replicas: 4.0\n");
	assert_int_equal(c->time_slicing.resources[0].replicas, 4);
	dpconfig_free(c);

	/* the lab's `shared` config */
	c = parse_ok("version: v1\nflags:\n  migStrategy: none\nsharing:\n  timeSlicing:\n"
		     "    failRequestsGreaterThanOne: true\n    resources:\n"
		     "    - name: nvidia.com/gpu\n      replicas: 4\n");
	sh = dpconfig_replicated(c);
	assert_ptr_equal(sh, &c->time_slicing);
	assert_int_equal(sh->n_resources, 1);
	assert_string_equal(sh->resources[0].name, "nvidia.com/gpu");
	assert_int_equal(sh->resources[0].replicas, 4);
	assert_null(sh->resources[0].rename);
	assert_int_equal(sh->fail_requests_greater_than_one, 1);
	assert_string_equal(dp_sharing_strategy_name(dpconfig_sharing_strategy(c)), "time-slicing");
	dpconfig_free(c);

	/* renameByDefault: <name>.shared; name normalised */
	c = parse_ok(
		"sharing:\n  timeSlicing:\n    renameByDefault: true\n    resources:\n"
		"    - name: gpu\n      replicas: 2\n    - name: mig-1g.10gb\n      replicas: 3\n");
	assert_string_equal(c->time_slicing.resources[0].name, "nvidia.com/gpu");
	assert_string_equal(c->time_slicing.resources[0].rename, "nvidia.com/gpu.shared");
	assert_string_equal(c->time_slicing.resources[1].rename, "nvidia.com/mig-1g.10gb.shared");
	assert_int_equal(c->time_slicing.fail_requests_greater_than_one, -1);
	dpconfig_free(c);

	/* both set: MPS silently wins */
	c = parse_ok(
		"sharing:\n  timeSlicing:\n    resources:\n    - name: gpu\n      replicas: 8\n"
		"  mps:\n    resources:\n    - name: gpu\n      replicas: 2\n");
	assert_int_equal(dpconfig_sharing_strategy(c), DP_SHARING_MPS);
	assert_ptr_equal(dpconfig_replicated(c), &c->mps);
	assert_int_equal(dpconfig_replicated(c)->resources[0].replicas, 2);
	assert_string_equal(dp_sharing_strategy_name(DP_SHARING_MPS), "mps");
	assert_string_equal(dp_sharing_strategy_name(DP_SHARING_NONE), "none");
	dpconfig_free(c);
}

/* k8s-device-plugin v0.20.0 api/config/v1/replicas.go */
static void devices_union(void **state)
{
	struct dpconfig *c;
	struct dp_diags d;
	static const char *head =
		"sharing:\n  timeSlicing:\n    resources:\n    - name: gpu\n      replicas: 2\n";
	static const struct {
		const char *devices, *msg;
	} table[] = {
		{"some", "devices set as 'some' but the only valid string input is 'all'"},
		{"", "devices set as '' but the only valid string input is 'all'"},
		{"0", "devices set as '0' but a count of devices must be > 0"},
		{"-2", "devices set as '-2' but a count of devices must be > 0"},
		{"[x]", "unsupported type for device in devices list: x, string"},
		{"[0, GPU-123]", "unsupported type for device in devices list: GPU-123, string"},
		{"[1.5]", "unsupported type for device in devices list: , string"},
		{"[-1]", "unsupported type for device in devices list: , string"},
		{"[true]", "unsupported type for device in devices list: , string"},
		{"[\"1:2:3\"]", "unsupported type for device in devices list: 1:2:3, string"},
		{"{a: 1}", "unrecognized type for devices spec: {\"a\":1}"},
		{"1.5", "unrecognized type for devices spec: 1.5"},
		{"true", "unrecognized type for devices spec: true"},
	};
	char yaml[512];

	(void)state;
	for (size_t i = 0; i < sizeof(table) / sizeof(table[0]); i++) {
		snprintf(yaml, sizeof(yaml), "%s      devices: %s\n", head, table[i].devices);
		expect_error(yaml, table[i].msg);
	}
	snprintf(yaml, sizeof(yaml), "%s      devices: all\n", head);
	c = parse_ok(yaml);
	dpconfig_free(c);
	snprintf(yaml, sizeof(yaml),
		 "%s      devices: [0, \"1\", \"0:1\", GPU-b1028956-cfa2-0990-bf4a-5da9abb51763,\n"
		 "        MIG-b1028956-cfa2-0990-bf4a-5da9abb51763,\n"
		 "        MIG-GPU-b1028956-cfa2-0990-bf4a-5da9abb51763/3/0]\n",
		 head);
	assert_int_equal(parse_diags(yaml, &c, &d), 0);
	assert_true(
		has_diag(&d, DP_WARNING,
			 "Customizing the 'devices' field in sharing.timeSlicing.resources is not "
			 "yet supported in the config. Ignoring..."));
	dp_diags_release(&d);
	dpconfig_free(c);
	snprintf(yaml, sizeof(yaml), "%s      devices: 2\n", head);
	assert_int_equal(parse_diags(yaml, &c, &d), 0);
	assert_int_equal(d.n, 1);
	dp_diags_release(&d);
	dpconfig_free(c);
}

/* k8s-device-plugin v0.20.0 api/config/v1/resources.go NewResourceName */
static void resource_names(void **state)
{
	char yaml[512];
	char name[80];
	struct dpconfig *c;

	(void)state;
	static const char *fmt =
		"sharing:\n  timeSlicing:\n    resources:\n    - name: %s\n      replicas: 2\n";
	snprintf(yaml, sizeof(yaml), fmt, "example.com/gpu");
	expect_error(yaml,
		     "incorrect format for resource name 'nvidia.com/example.com/gpu': " RFC1123);
	snprintf(yaml, sizeof(yaml), fmt, "GPU");
	expect_error(yaml, "incorrect format for resource name 'nvidia.com/GPU': " RFC1123);
	snprintf(yaml, sizeof(yaml), fmt, "my_gpu");
	expect_error(yaml, "incorrect format for resource name 'nvidia.com/my_gpu': " RFC1123);
	snprintf(yaml, sizeof(yaml), fmt, "gpu+x");
	expect_error(yaml, "incorrect format for resource name 'nvidia.com/gpu+x': " RFC1123);
	snprintf(yaml, sizeof(yaml), fmt, "gpu-");
	expect_error(yaml, "incorrect format for resource name 'nvidia.com/gpu-': " RFC1123);
	snprintf(yaml, sizeof(yaml), fmt, "\"\"");
	expect_error(yaml, "incorrect format for resource name 'nvidia.com/': " RFC1123);
	snprintf(yaml, sizeof(yaml), fmt, "7");
	expect_error(yaml, "json: cannot unmarshal number into Go value of type string");

	/* 63 characters in all: "nvidia.com/" is 11 */
	memset(name, 'a', 52);
	name[52] = '\0';
	snprintf(yaml, sizeof(yaml), fmt, name);
	c = parse_ok(yaml);
	assert_int_equal(strlen(c->time_slicing.resources[0].name), 63);
	dpconfig_free(c);
	memset(name, 'a', 53);
	name[53] = '\0';
	snprintf(yaml, sizeof(yaml), fmt, name);
	char want[160];
	snprintf(want, sizeof(want),
		 "fully-qualified resource name must be 63 characters or less: nvidia.com/%s",
		 name);
	expect_error(yaml, want);

	/* rename follows the same rules */
	expect_error(
		"sharing:\n  timeSlicing:\n    resources:\n    - name: gpu\n      replicas: 2\n"
		"      rename: Shared\n",
		"incorrect format for resource name 'nvidia.com/Shared': " RFC1123);
	/* not checked against what exists */
	snprintf(yaml, sizeof(yaml), fmt, "foo");
	c = parse_ok(yaml);
	assert_string_equal(c->time_slicing.resources[0].name, "nvidia.com/foo");
	dpconfig_free(c);
}

/* k8s-device-plugin v0.20.0 cmd/nvidia-device-plugin/main.go validateFlags */
static void validation(void **state)
{
	static const char *mps =
		"sharing:\n  mps:\n    resources:\n    - name: gpu\n      replicas: 2\n";
	char yaml[512];

	(void)state;
	expect_validate("", NULL);
	expect_validate("flags:\n  plugin:\n    deviceListStrategy: foo\n",
			"invalid --device-list-strategy option: invalid strategy: foo");
	expect_validate("flags:\n  plugin:\n    deviceListStrategy: [envvar, bar]\n",
			"invalid --device-list-strategy option: invalid strategy: bar");
	expect_validate("flags:\n  plugin:\n    deviceIDStrategy: serial\n",
			"invalid --device-id-strategy option: serial");
	expect_validate("flags:\n  plugin:\n    sharedDevicesAllocationPolicy: spread\n",
			"invalid --shared-devices-allocation-policy option: spread");
	snprintf(yaml, sizeof(yaml), "flags:\n  migStrategy: mixed\n  mpsRoot: /run/nvidia/mps\n%s",
		 mps);
	expect_validate(yaml, "using --mig-strategy=mixed is not supported with MPS");
	expect_validate(mps, "using MPS requires --mps-root to be specified");
	snprintf(yaml, sizeof(yaml), "flags:\n  mpsRoot: \"\"\n%s", mps);
	expect_validate(yaml, "using MPS requires --mps-root to be specified");
	snprintf(yaml, sizeof(yaml), "flags:\n  mpsRoot: /run/nvidia/mps\n%s", mps);
	expect_validate(yaml, NULL);
	expect_validate("flags:\n  deviceDiscoveryStrategy: vfio\n",
			"invalid --device-discovery-strategy option vfio");
	expect_validate("flags:\n  migStrategy: Mixed\n", "unknown MIG strategy: Mixed");
	expect_validate("flags:\n  migStrategy: \"\"\n", "unknown MIG strategy: ");
	expect_validate(
		"imex:\n  channelIDs: [1, 2]\n",
		"invalid IMEX channel IDs: invalid IMEX config: channelIDs must be [] or [0]; "
		"found [1 2]");
	expect_validate("imex:\n  channelIDs: [0]\n", NULL);
	expect_validate("imex:\n  channelIDs: []\n", NULL);
	/* rows in upstream's order: the device-ID strategy before the MIG strategy */
	expect_validate("flags:\n  migStrategy: x\n  plugin:\n    deviceIDStrategy: z\n",
			"invalid --device-id-strategy option: z");
	/* time-slicing with mixed is fine */
	expect_validate("flags:\n  migStrategy: mixed\nsharing:\n  timeSlicing:\n    resources:\n"
			"    - name: mig-1g.10gb\n      replicas: 2\n",
			NULL);
}

static void chains(void **state)
{
	struct dpconfig *c;
	struct dp_diags d;
	char buf[1024];

	(void)state;
	assert_int_equal(parse_diags("sharing:\n  timeSlicing:\n", &c, &d), -1);
	assert_true(d.items[0].upstream);
	assert_string_equal(
		dp_diag_chain(&d.items[0], buf, sizeof(buf)),
		"error starting plugins: unable to load config: unable to finalize "
		"config: unable to parse config file: error parsing config file: unmarshal "
		"error: error unmarshaling JSON: while decoding JSON: no resources "
		"specified");
	dp_diags_release(&d);
	assert_int_equal(parse_diags("version: v2\n", &c, &d), -1);
	assert_string_equal(
		dp_diag_chain(&d.items[d.n - 1], buf, sizeof(buf)),
		"error starting plugins: unable to load config: unable to finalize "
		"config: unable to parse config file: error parsing config file: unknown "
		"version: v2");
	dp_diags_release(&d);
	c = parse_ok("flags:\n  migStrategy: bogus\n");
	dp_diags_init(&d);
	assert_int_equal(dpconfig_validate_all(c, "c.yaml", &d), 1);
	assert_string_equal(
		dp_diag_chain(&d.items[0], buf, sizeof(buf)),
		"error starting plugins: unable to validate flags: unknown MIG strategy: "
		"bogus");
	assert_int_equal(d.items[0].pos.line, 2);
	dp_diags_release(&d);
	dpconfig_free(c);
}

/* Which error upstream reports when there are several. */
static void upstream_pick(void **state)
{
	(void)state;
	/* sorted keys: sharing.mps is decoded before sharing.timeSlicing */
	expect_error("sharing:\n  timeSlicing:\n    resources: []\n  mps:\n    resources:\n"
		     "    - name: gpu\n      replicas: 1\n",
		     "number of replicas must be >= 2");
	/* a saved type mismatch loses to a later hand-written decoder's error */
	expect_error("flags:\n  migStrategy: 1\nsharing:\n  timeSlicing: {}\n",
		     "no resources specified");
	/* two saved mismatches: the first in sorted order */
	expect_error(
		"version: [1]\nflags:\n  mpsRoot: 2\n",
		"json: cannot unmarshal number into Go struct field Flags.flags.mpsRoot of type "
		"string");
	/* within one resource: name, devices, replicas, rename */
	expect_error(
		"sharing:\n  timeSlicing:\n    resources:\n    - name: Bad\n      replicas: 1\n",
		"incorrect format for resource name 'nvidia.com/Bad': " RFC1123);
	/* decode errors come before the version check */
	expect_error("version: v3\nsharing:\n  mps: {}\n", "no resources specified");
}

/* k8s-device-plugin v0.20.0 api/config/v1/config.go DisableResourceNamingInConfig */
static void silent_overrides(void **state)
{
	struct dpconfig *c;
	struct dp_diags d;
	struct gs_warnings w;
	struct gs_error err;
	const char *yaml;

	(void)state;
	/* rename without renameByDefault: reset to none */
	assert_int_equal(parse_diags("sharing:\n  timeSlicing:\n    resources:\n    - name: gpu\n"
				     "      replicas: 2\n      rename: gpu.fast\n",
				     &c, &d),
			 0);
	assert_null(c->time_slicing.resources[0].rename);
	assert_true(
		has_diag(&d, DP_WARNING,
			 "Setting the 'rename' field in sharing.timeSlicing.resources is not yet "
			 "supported in the config. Ignoring..."));
	dp_diags_release(&d);
	dpconfig_free(c);
	/* renameByDefault with another rename: forced to <name>.shared; mps variant */
	assert_int_equal(
		parse_diags("flags:\n  mpsRoot: /m\nsharing:\n  mps:\n    renameByDefault: "
			    "true\n    resources:\n    - name: gpu\n      replicas: 2\n"
			    "      rename: other\n",
			    &c, &d),
		0);
	assert_string_equal(c->mps.resources[0].rename, "nvidia.com/gpu.shared");
	assert_true(
		has_diag(&d, DP_WARNING,
			 "Setting the 'rename' field in sharing.mps.resources is not yet supported "
			 "in the config. Ignoring..."));
	dp_diags_release(&d);
	dpconfig_free(c);
	/* renameByDefault with rename equal to the default: no warning */
	assert_int_equal(parse_diags("sharing:\n  timeSlicing:\n    renameByDefault: true\n"
				     "    resources:\n    - name: gpu\n      replicas: 2\n"
				     "      rename: gpu.shared\n",
				     &c, &d),
			 0);
	assert_int_equal(d.n, 0);
	dp_diags_release(&d);
	dpconfig_free(c);
	/* mps failRequestsGreaterThanOne is kept as written (its meaning depends on the version) */
	c = parse_ok("sharing:\n  mps:\n    failRequestsGreaterThanOne: false\n    resources:\n"
		     "    - name: gpu\n      replicas: 2\n");
	assert_int_equal(c->mps.fail_requests_greater_than_one, 0);
	assert_true(c->mps.fail_requests_pos.line == 3);
	dpconfig_free(c);
	/* the same name twice: both kept, a warning */
	assert_int_equal(
		parse_diags("sharing:\n  timeSlicing:\n    resources:\n    - name: gpu\n"
			    "      replicas: 2\n    - name: nvidia.com/gpu\n      replicas: 4\n",
			    &c, &d),
		0);
	assert_int_equal(c->time_slicing.n_resources, 2);
	assert_int_equal(d.n, 1);
	assert_int_equal(d.items[0].level, DP_WARNING);
	assert_int_equal(d.items[0].pos.line, 6);
	dp_diags_release(&d);
	dpconfig_free(c);

	/* dpconfig_parse hands the plugin's own log lines over, with positions */
	yaml = "sharing:\n  timeSlicing:\n    resources:\n    - name: gpu\n      replicas: 2\n"
	       "      devices: 1\n";
	gs_warnings_init(&w);
	assert_int_equal(dpconfig_parse("c.yaml", yaml, strlen(yaml), no_origin, &c, &w, &err), 0);
	assert_int_equal(w.n, 1);
	assert_string_equal(w.items[0], "c.yaml:6:16: Customizing the 'devices' field in "
					"sharing.timeSlicing.resources is not yet supported in the "
					"config. Ignoring...");
	gs_warnings_release(&w);
	dpconfig_free(c);
}

static void keys_recorded(void **state)
{
	struct dpconfig *c;
	const struct dp_key *k;

	(void)state;
	c = parse_ok("flags:\n  plugin:\n    DeviceIDStrategy: index\nsharing:\n  timeslicing:\n"
		     "    resources:\n    - name: gpu\n      replicas: 2\n");
	k = dpconfig_key(c, "flags.plugin.deviceIDStrategy");
	assert_non_null(k);
	assert_string_equal(k->written, "DeviceIDStrategy");
	assert_int_equal(k->pos.line, 3);
	assert_non_null(dpconfig_key(c, "sharing.timeSlicing"));
	assert_null(dpconfig_key(c, "sharing.mps"));
	dpconfig_free(c);
}

/* ---- k8s-device-plugin v0.20.0 cmd/config-manager/main.go updateConfigName ---- */

/*
 * Long user text reaches the finding whole: a 600-character resource name
 * and a 400-character duration were cut at 511 and 255 bytes.
 */
static void long_values_whole(void **state)
{
	char name[601], dur[401], *yaml;
	struct dpconfig *c = NULL;
	struct dp_diags d;

	(void)state;
	memset(name, 'a', sizeof(name) - 1);
	name[sizeof(name) - 1] = '\0';
	memset(dur, '1', sizeof(dur) - 1);
	dur[sizeof(dur) - 1] = '\0';
	yaml = gs_xasprintf("version: v1\n"
			    "sharing:\n"
			    "  timeSlicing:\n"
			    "    resources:\n"
			    "    - name: %s\n"
			    "      replicas: 2\n"
			    "flags:\n"
			    "  gfd:\n"
			    "    sleepInterval: \"%s\"\n",
			    name, dur);
	assert_int_equal(parse_diags(yaml, &c, &d), -1);
	char *want_name = gs_xasprintf("fully-qualified resource name must be 63 characters or "
				       "less: nvidia.com/%s",
				       name);
	char *want_dur = gs_xasprintf("time: missing unit in duration \"%s\"", dur);
	assert_true(has_diag(&d, DP_ERROR, want_name));
	assert_true(has_diag(&d, DP_ERROR, want_dur));
	free(want_name);
	free(want_dur);
	dp_diags_release(&d);
	free(yaml);
}

static struct ydoc_stream *load(const char *text)
{
	struct ydoc_stream *s;
	struct gs_error err;

	if (ydoc_load_buffer("cm.yaml", text, strlen(text), no_origin, &ydoc_default_limits, &s,
			     &err))
		fail_msg("yaml: %s", err.msg);
	return s;
}

static struct dpconfig_set *set_from(const char *text, struct ydoc_stream **s)
{
	struct dpconfig_set *set;
	struct gs_error err;

	*s = load(text);
	if (dpconfig_set_from_configmap(*s, ydoc_stream_doc(*s, 0), &set, &err))
		fail_msg("set: %s", err.msg);
	return set;
}

static const char *select_msg(const struct dpconfig_set *set, const char *label, const char *def,
			      const char *fallbacks, const char **name)
{
	static struct gs_error err;
	struct dpconfig_choice c;

	if (dpconfig_set_select(set, label, def, fallbacks, &c, &err) == 0) {
		*name = c.name;
		return NULL;
	}
	*name = c.name;
	return err.msg;
}

static const char *lab_cm = "apiVersion: v1\n"
			    "kind: ConfigMap\n"
			    "metadata:\n"
			    "  name: device-plugin-configs\n"
			    "data:\n"
			    "  default: |-\n"
			    "    version: v1\n"
			    "    flags:\n"
			    "      migStrategy: none\n"
			    "  shared: |-\n"
			    "    version: v1\n"
			    "    sharing:\n"
			    "      timeSlicing:\n"
			    "        resources:\n"
			    "        - name: nvidia.com/gpu\n"
			    "          replicas: 4\n"
			    "  broken: |-\n"
			    "    sharing:\n"
			    "      timeSlicing:\n"
			    "        resources:\n"
			    "        - name: nvidia.com/gpu\n"
			    "          replicas: 1\n";

static void selection(void **state)
{
	struct ydoc_stream *s;
	struct dpconfig_set *set = set_from(lab_cm, &s);
	const char *name;
	const struct dpconfig *c;
	struct dpconfig_choice ch;
	const struct gs_error *perr = NULL;
	struct gs_error err;

	(void)state;
	assert_int_equal(dpconfig_set_count(set), 3);
	assert_string_equal(dpconfig_set_key(set, 1), "shared");
	c = dpconfig_set_get(set, 1, &perr);
	assert_non_null(c);
	assert_string_equal(c->name, "shared");
	assert_int_equal(c->time_slicing.resources[0].replicas, 4);
	/* the broken key keeps its error, at its line in the ConfigMap file */
	assert_null(dpconfig_set_get(set, 2, &perr));
	assert_non_null(perr);
	assert_string_equal(perr->msg, "number of replicas must be >= 2");
	assert_string_equal(perr->file, "cm.yaml");
	assert_int_equal(perr->line, 22);
	assert_int_equal(perr->col, 21);

	/* 2: the label wins, or fails */
	assert_null(select_msg(set, "shared", NULL, NULL, &name));
	assert_string_equal(name, "shared");
	assert_string_equal(select_msg(set, "mps", NULL, NULL, &name),
			    "specified config mps does not exist");
	assert_string_equal(select_msg(set, "mps", "default", "empty", &name),
			    "specified config mps does not exist");
	/* config-manager's own failure names no key */
	assert_int_equal(dpconfig_set_select(set, "mps", NULL, NULL, &ch, &err), -1);
	assert_int_equal(ch.key, -1);
	assert_string_equal(ch.name, "");
	assert_null(ch.config);
	/* the chosen key's parse error, and which key failed */
	assert_int_equal(dpconfig_set_select(set, "broken", NULL, NULL, &ch, &err), -1);
	assert_string_equal(err.msg, "number of replicas must be >= 2");
	assert_int_equal(err.line, 22);
	assert_int_equal(ch.key, 2);
	assert_string_equal(ch.name, "broken");
	assert_null(ch.config);
	/* ... also when another key fails with the very same message */
	assert_int_equal(dpconfig_set_select(set, NULL, NULL, "single", &ch, &err), -1);
	assert_int_equal(ch.key, -1);
	/* a success names its key */
	assert_int_equal(dpconfig_set_select(set, "shared", NULL, NULL, &ch, &err), 0);
	assert_int_equal(ch.key, 1);
	assert_non_null(ch.config);
	/* 3: DEFAULT_CONFIG, and upstream's two-space message */
	assert_null(select_msg(set, "", "shared", NULL, &name));
	assert_string_equal(name, "shared");
	assert_string_equal(select_msg(set, NULL, "nope", NULL, &name),
			    "specified config  does not exist");
	/* 4: fallbacks */
	assert_null(select_msg(set, NULL, NULL, NULL, &name)); /* named,single */
	assert_string_equal(name, "default");
	assert_null(select_msg(set, NULL, "", "named", &name));
	assert_string_equal(name, "default");
	assert_string_equal(select_msg(set, NULL, NULL, "single", &name),
			    "no config was set, no default was provided, and all fallbacks failed");
	assert_int_equal(dpconfig_set_select(set, NULL, NULL, "single,empty", &ch, &err), 0);
	assert_null(ch.config);
	assert_string_equal(ch.name, "");
	assert_int_equal(ch.key, -1);
	assert_string_equal(select_msg(set, NULL, NULL, "bogus,named", &name),
			    "unknown fallback strategy: bogus");
	/* an unknown strategy after one that matched is never reached */
	assert_null(select_msg(set, NULL, NULL, "named,bogus", &name));
	assert_string_equal(select_msg(set, NULL, NULL, "", &name),
			    "no config was set, no default was provided, and all fallbacks failed");
	dpconfig_set_free(set);
	ydoc_stream_free(s);

	/* single: exactly one key */
	set = set_from("kind: ConfigMap\ndata:\n  only: |-\n    version: v1\n", &s);
	assert_null(select_msg(set, NULL, NULL, NULL, &name));
	assert_string_equal(name, "only");
	assert_string_equal(select_msg(set, NULL, NULL, "named", &name),
			    "no config was set, no default was provided, and all fallbacks failed");
	dpconfig_set_free(set);
	ydoc_stream_free(s);

	/* 1: no keys at all, whatever else is given */
	set = set_from("kind: ConfigMap\ndata: {}\n", &s);
	assert_string_equal(select_msg(set, "x", "y", "empty", &name),
			    "no configuration files available");
	dpconfig_set_free(set);
	ydoc_stream_free(s);
}

/* FALLBACK_STRATEGIES checked whole, split as the selection splits it. */
static void fallbacks_checked(void **state)
{
	struct gs_error err;

	(void)state;
	assert_int_equal(dpconfig_fallbacks_check("named,single", &err), 0);
	assert_int_equal(dpconfig_fallbacks_check(" empty , named ", &err), 0);
	assert_int_equal(dpconfig_fallbacks_check("", &err), 0); /* no fallback at all */
	assert_int_equal(dpconfig_fallbacks_check(NULL, &err), 0);
	/* a word the selection reaches only after one that matched is refused too */
	assert_int_equal(dpconfig_fallbacks_check("named,bogus", &err), -1);
	assert_string_equal(err.msg,
			    "unknown fallback strategy 'bogus' (one of: named, single, empty)");
	assert_int_equal(dpconfig_fallbacks_check("singel", &err), -1);
	assert_string_equal(err.msg, "unknown fallback strategy 'singel'; did you mean 'single'?");
	/* an empty word, as the selection refuses it */
	assert_int_equal(dpconfig_fallbacks_check("named,", &err), -1);
	assert_string_equal(err.msg, "unknown fallback strategy '' (one of: named, single, empty)");
	assert_int_equal(dpconfig_fallbacks_check("Named", &err), -1);
}

static void configmap_shapes(void **state)
{
	struct ydoc_stream *s;
	struct dpconfig_set *set;
	const struct dpconfig *c;
	const struct gs_error *perr = NULL;
	struct gs_error err;

	(void)state;
	/* binaryData keys are files too; ".." keys are skipped */
	set = set_from("kind: ConfigMap\n"
		       "data:\n"
		       "  ..data: |-\n    version: v1\n"
		       "  plain: 7\n"
		       "  nothing:\n"
		       "binaryData:\n"
		       /* "version: v1\nsharing:\n  mps:\n" */
		       "  bin: dmVyc2lvbjogdjEKc2hhcmluZzoKICBtcHM6Cg==\n",
		       &s);
	assert_int_equal(dpconfig_set_count(set), 3);
	assert_int_equal(dpconfig_set_find(set, "..data"), -1);
	assert_int_equal(dpconfig_set_own_diags(set)->n, 1);
	/* a number is kept as its text: "7" is a scalar, not a Config */
	assert_null(dpconfig_set_get(set, (size_t)dpconfig_set_find(set, "plain"), &perr));
	assert_string_equal(perr->msg,
			    "json: cannot unmarshal number into Go value of type v1.Config");
	/* null is an empty file: the empty config */
	c = dpconfig_set_get(set, (size_t)dpconfig_set_find(set, "nothing"), &perr);
	assert_non_null(c);
	assert_int_equal(dpconfig_sharing_strategy(c), DP_SHARING_NONE);
	c = dpconfig_set_get(set, (size_t)dpconfig_set_find(set, "bin"), &perr);
	assert_non_null(c);
	assert_false(c->mps.present);
	dpconfig_set_free(set);
	ydoc_stream_free(s);

	/* not a ConfigMap */
	s = load("kind: Secret\ndata: {}\n");
	assert_int_equal(dpconfig_set_from_configmap(s, ydoc_stream_doc(s, 0), &set, &err), -1);
	assert_non_null(strstr(err.msg, "expected kind ConfigMap"));
	ydoc_stream_free(s);
	/* JSON from the apiserver: no stream, no positions */
	json_t *cm = json_pack("{s:s, s:{s:s}}", "kind", "ConfigMap", "data", "x",
			       "sharing:\n  timeSlicing: {}\n");
	assert_int_equal(dpconfig_set_from_configmap(NULL, cm, &set, &err), 0);
	assert_null(dpconfig_set_get(set, 0, &perr));
	assert_string_equal(perr->msg, "no resources specified");
	dpconfig_set_free(set);
	json_decref(cm);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(empty_and_version),
		cmocka_unit_test(key_case_rules),
		cmocka_unit_test(flag_types),
		cmocka_unit_test(resources_section),
		cmocka_unit_test(sharing_blocks),
		cmocka_unit_test(devices_union),
		cmocka_unit_test(resource_names),
		cmocka_unit_test(validation),
		cmocka_unit_test(chains),
		cmocka_unit_test(upstream_pick),
		cmocka_unit_test(silent_overrides),
		cmocka_unit_test(keys_recorded),
		cmocka_unit_test(long_values_whole),
		cmocka_unit_test(selection),
		cmocka_unit_test(fallbacks_checked),
		cmocka_unit_test(configmap_shapes),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
