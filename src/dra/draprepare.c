/*
 * The DRA driver's prepare decision (dra-driver-nvidia-gpu v25.12.0
 * pkg/featuregates/featuregates.go, cmd/gpu-kubelet-plugin/device_state.go prepareDevices), read
 * from kubernetes-sigs/dra-driver-nvidia-gpu v25.12.0: cmd/gpu-kubelet-plugin/driver.go
 * nodePrepareResource (outer wrapping) cmd/gpu-kubelet-plugin/device_state.go Prepare,
 * prepareDevices, GetOpaqueDeviceConfigs, applySharingConfig api/nvidia.com/resource/v1beta1/ the
 * opaque kinds, Normalize, Validate vendor/k8s.io/apimachinery/.../serializer/json  the strict
 * decoder and from Kubernetes v1.34.4 pkg/kubelet/cm/dra/manager.go for the kubelet.
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "dra/draprepare.h"
#include "base/gonum.h"
#include "model/kobj.h"
#include "model/quantity.h"
#include "base/strbuf.h"
#include "base/banned.h"

#define API_GROUP "resource.nvidia.com"
#define API_VERSION "v1beta1"
/*
 * The scheme's name in "no kind ... is registered" errors: the file and
 * line of runtime.NewScheme() in api.go (apimachinery naming.GetNameFromCallsite).
 * The released image builds in WORKDIR /build without -trimpath
 * (deployments/container/Dockerfile, Makefile), so the path is this one.
 */
#define SCHEME_NAME "/build/api/nvidia.com/resource/v1beta1/api.go:63"

/* ---- feature gates ---- */

struct gate_def {
	const char *name;
	size_t off;
	bool def;
	enum dradriver_release since; /* the first release modelled that has it */
};

#define GATE(n, f, d, r)                                                                           \
	{                                                                                          \
		n, offsetof(struct draprepare_gates, f), d, r                                      \
	}
static const struct gate_def gate_defs[] = {
	GATE("TimeSlicingSettings", time_slicing_settings, false, DRADRIVER_V25_12_0),
	GATE("MPSSupport", mps_support, false, DRADRIVER_V25_12_0),
	GATE("DynamicMIG", dynamic_mig, false, DRADRIVER_V25_12_0),
	GATE("PassthroughSupport", passthrough_support, false, DRADRIVER_V25_12_0),
	GATE("NVMLDeviceHealthCheck", nvml_device_health_check, false, DRADRIVER_V25_12_0),
	GATE("IMEXDaemonsWithDNSNames", imex_daemons_with_dns_names, true, DRADRIVER_V25_12_0),
	GATE("ComputeDomainCliques", compute_domain_cliques, true, DRADRIVER_V25_12_0),
	GATE("CrashOnNVLinkFabricErrors", crash_on_nvlink_fabric_errors, true, DRADRIVER_V25_12_0),
	GATE("DeviceMetadata", device_metadata, false, DRADRIVER_V0_5_0),
	GATE("FabricManagerPartitioning", fabric_manager_partitioning, false, DRADRIVER_V0_5_0),
	GATE("HostManagedIMEXDaemon", host_managed_imex_daemon, false, DRADRIVER_V0_5_0),
	GATE("DRAListTypeAttributes", dra_list_type_attributes, false, DRADRIVER_V0_5_0),
	GATE("ConsumableShares", consumable_shares, false, DRADRIVER_V0_5_0),
};
#define N_GATES (sizeof(gate_defs) / sizeof(gate_defs[0]))
/* Gates the driver's gate set also knows (logsapi.AddFeatureGates): accepted, no effect here. */
static const char *const logging_gates[] = {"ContextualLogging", "LoggingAlphaOptions",
					    "LoggingBetaOptions", "AllAlpha", "AllBeta"};

static bool *gate_ptr(struct draprepare_gates *g, size_t i)
{
	return (bool *)((char *)g + gate_defs[i].off);
}

static const struct dradriver *gates_driver(const struct draprepare_gates *g)
{
	return g->driver ? g->driver : dradriver_newest();
}

static bool gate_known(const struct draprepare_gates *g, size_t i)
{
	return gate_defs[i].since <= gates_driver(g)->release;
}

void draprepare_gates_default_for(struct draprepare_gates *g, const struct dradriver *d)
{
	memset(g, 0, sizeof(*g));
	g->driver = d ? d : dradriver_newest();
	for (size_t i = 0; i < N_GATES; i++)
		*gate_ptr(g, i) = gate_known(g, i) && gate_defs[i].def;
}

void draprepare_gates_default(struct draprepare_gates *g)
{
	draprepare_gates_default_for(g, NULL);
}

bool draprepare_consumable_shares(const struct draprepare_gates *g)
{
	return gates_driver(g)->consumable_shares && g->consumable_shares &&
	       g->shares.mode != DRADRIVER_SHARES_DISABLED;
}

/* Go's strconv.ParseBool. */
static int parse_go_bool(const char *s, bool *out)
{
	static const char *const t[] = {"1", "t", "T", "TRUE", "true", "True"};
	static const char *const f[] = {"0", "f", "F", "FALSE", "false", "False"};

	for (size_t i = 0; i < 6; i++) {
		if (!strcmp(s, t[i])) {
			*out = true;
			return 0;
		}
		if (!strcmp(s, f[i])) {
			*out = false;
			return 0;
		}
	}
	return -1;
}

static char *trim_dup(const char *s, size_t n)
{
	while (n && isspace((unsigned char)*s)) {
		s++;
		n--;
	}
	while (n && isspace((unsigned char)s[n - 1]))
		n--;
	return gs_xstrndup(s, n);
}

/* featuregates.ValidateFeatureGates of the release, in its order. */
static int gates_validate(const struct draprepare_gates *n, struct gs_error *err)
{
	const char *a = NULL, *b = NULL;
	bool v05 = gates_driver(n)->release >= DRADRIVER_V0_5_0;

	if (n->compute_domain_cliques && !n->imex_daemons_with_dns_names) {
		gs_error_set(err, "feature gate %s requires %s to also be enabled",
			     "ComputeDomainCliques", "IMEXDaemonsWithDNSNames");
		return -1;
	}
	if (n->dynamic_mig && n->passthrough_support)
		a = "DynamicMIG", b = "PassthroughSupport";
	else if (n->dynamic_mig && n->nvml_device_health_check)
		a = "DynamicMIG", b = "NVMLDeviceHealthCheck";
	else if (n->dynamic_mig && n->mps_support)
		a = "DynamicMIG", b = "MPSSupport";
	else if (v05 && n->passthrough_support && n->nvml_device_health_check)
		a = "PassthroughSupport", b = "NVMLDeviceHealthCheck";
	if (a) {
		gs_error_set(err, "feature gate %s is currently mutually exclusive with %s", a, b);
		return -1;
	}
	if (v05 && n->device_metadata && !n->passthrough_support) {
		gs_error_set(err, "feature gate %s requires %s to also be enabled",
			     "DeviceMetadata", "PassthroughSupport");
		return -1;
	}
	return 0;
}

/* component-base featuregate.(*featureGate).Set, then featuregates.ValidateFeatureGates. */
int draprepare_gates_parse(struct draprepare_gates *g, const char *spec, struct gs_error *err)
{
	struct draprepare_gates n = *g;
	const char *p = spec ? spec : "";

	if (!n.driver)
		n.driver = dradriver_newest();
	while (*p) {
		const char *end = strchr(p, ',');
		size_t len = end ? (size_t)(end - p) : strlen(p);
		char *item = trim_dup(p, len);
		p += len + (end ? 1 : 0);
		if (!*item) {
			free(item);
			continue;
		}
		char *eq = strchr(item, '=');
		if (!eq) {
			gs_error_set(err, "missing bool value for %s", item);
			free(item);
			return -1;
		}
		*eq = '\0';
		char *k = trim_dup(item, strlen(item));
		char *v = trim_dup(eq + 1, strlen(eq + 1));
		free(item);
		bool b;
		if (parse_go_bool(v, &b)) {
			gs_error_set(
				err,
				"invalid value of %s=%s, err: strconv.ParseBool: parsing \"%s\": "
				"invalid syntax",
				k, v, v);
			free(k);
			free(v);
			return -1;
		}
		size_t i;
		for (i = 0; i < N_GATES; i++)
			if (!strcmp(k, gate_defs[i].name) && gate_known(&n, i))
				break;
		if (i < N_GATES) {
			*gate_ptr(&n, i) = b;
		} else {
			size_t j;
			for (j = 0; j < sizeof(logging_gates) / sizeof(logging_gates[0]); j++)
				if (!strcmp(k, logging_gates[j]))
					break;
			if (j == sizeof(logging_gates) / sizeof(logging_gates[0])) {
				gs_error_set(err, "unrecognized feature gate: %s", k);
				free(k);
				free(v);
				return -1;
			}
		}
		free(k);
		free(v);
	}
	if (gates_validate(&n, err))
		return -1;
	*g = n;
	return 0;
}

int draprepare_gates_for_node(const json_t *node, const struct draprepare_gates *cluster,
			      struct draprepare_gates *out, struct gs_error *err)
{
	struct draprepare_gates g = *cluster;
	const struct dradriver *d = dradriver_for_node(node, gates_driver(cluster), err);
	const char *v = kobj_annotation(node, DRAPREPARE_ANNOTATION_GATES);
	const char *shares = dradriver_node_setting(node, DRADRIVER_ANN_SHARES);
	const char *name = kobj_text(node, "metadata.name");

	if (!d)
		return -1;
	g.driver = d;
	/* A gate the node's release does not have does not exist there. */
	for (size_t i = 0; i < N_GATES; i++)
		if (!gate_known(&g, i))
			*gate_ptr(&g, i) = false;
	if (v && draprepare_gates_parse(&g, v, err)) {
		gs_error_prefix(err, "node \"%s\": annotation %s: ", name,
				DRAPREPARE_ANNOTATION_GATES);
		return -1;
	}
	if (shares) {
		/* cmd/gpu-kubelet-plugin/main.go: urfave/cli, then validateFlags */
		if (!d->consumable_shares) {
			gs_error_set(err,
				     "node \"%s\": %s: the driver %s has no such flag: flag "
				     "provided but not defined: -consumable-shares",
				     name, DRADRIVER_ANN_SHARES, d->version);
			return -1;
		}
		if (strcmp(shares, "disabled") && !g.consumable_shares) {
			gs_error_set(err,
				     "node \"%s\": %s: --consumable-shares requires feature gate "
				     "ConsumableShares to be enabled",
				     name, DRADRIVER_ANN_SHARES);
			return -1;
		}
		if (dradriver_shares_parse(shares, &g.shares, err)) {
			gs_error_prefix(err, "node \"%s\": %s: ", name, DRADRIVER_ANN_SHARES);
			return -1;
		}
	}
	*out = g;
	return 0;
}

void draprepare_gates_string(const struct draprepare_gates *g, char *buf, size_t size)
{
	struct strbuf sb = STRBUF_INIT;

	for (size_t i = 0; i < N_GATES; i++) {
		if (!gate_known(g, i))
			continue;
		strbuf_addf(&sb, "%s%s=%s", sb.len ? "," : "", gate_defs[i].name,
			    *gate_ptr((struct draprepare_gates *)g, i) ? "true" : "false");
	}
	strbuf_copy_to(&sb, buf, size);
	strbuf_release(&sb);
}

/* ---- results ---- */

void draprepare_result_init(struct draprepare_result *r)
{
	memset(r, 0, sizeof(*r));
}

static void device_release(struct draprepare_device *d)
{
	free(d->request);
	free(d->pool);
	free(d->device);
	free(d->type);
	free(d->uuid);
	free(d->config_source);
	free(d->config_kind);
	free(d->sharing);
	free(d->interval);
	json_decref(d->config);
}

void draprepare_result_release(struct draprepare_result *r)
{
	if (!r)
		return;
	free(r->claim_name);
	free(r->claim_uid);
	free(r->step_error);
	free(r->driver_error);
	free(r->kubelet_error);
	free(r->event_message);
	for (size_t i = 0; i < r->n_devices; i++)
		device_release(&r->devices[i]);
	free(r->devices);
	draprepare_result_init(r);
}

/* ---- the strict decoder (apimachinery json serializer, Strict: true) ---- */

enum ftype { F_STRING, F_INT, F_QUANTITY, F_QMAP, F_STRUCT, F_ANY };

struct schema;
struct field {
	const char *name;
	enum ftype type;
	const char *gotype; /* for "of type X" */
	const struct schema *sub;
};
struct schema {
	const char *goname;
	const struct field *fields;
};

static const struct field f_ts[] = {
	{"interval", F_STRING, "v1beta1.TimeSliceInterval", NULL},
	{NULL, 0, NULL, NULL},
};
static const struct schema s_ts = {.goname = "TimeSlicingConfig", .fields = f_ts};
static const struct field f_mps[] = {
	{"defaultActiveThreadPercentage", F_INT, "int", NULL},
	{"defaultPinnedDeviceMemoryLimit", F_QUANTITY, "resource.Quantity", NULL},
	{"defaultPerDevicePinnedMemoryLimit", F_QMAP, "v1beta1.MpsPerDevicePinnedMemoryLimit",
	 NULL},
	{NULL, 0, NULL, NULL},
};
static const struct schema s_mps = {.goname = "MpsConfig", .fields = f_mps};
static const struct field f_gpu_sharing[] = {
	{"strategy", F_STRING, "v1beta1.GpuSharingStrategy", NULL},
	{"timeSlicingConfig", F_STRUCT, "v1beta1.TimeSlicingConfig", &s_ts},
	{"mpsConfig", F_STRUCT, "v1beta1.MpsConfig", &s_mps},
	{NULL, 0, NULL, NULL},
};
static const struct schema s_gpu_sharing = {.goname = "GpuSharing", .fields = f_gpu_sharing};
static const struct field f_mig_sharing[] = {
	{"strategy", F_STRING, "v1beta1.GpuSharingStrategy", NULL},
	{"mpsConfig", F_STRUCT, "v1beta1.MpsConfig", &s_mps},
	{NULL, 0, NULL, NULL},
};
static const struct schema s_mig_sharing = {.goname = "MigDeviceSharing", .fields = f_mig_sharing};
static const struct field f_gpu[] = {
	{"apiVersion", F_STRING, "string", NULL},
	{"kind", F_STRING, "string", NULL},
	{"sharing", F_STRUCT, "v1beta1.GpuSharing", &s_gpu_sharing},
	{NULL, 0, NULL, NULL},
};
static const struct schema s_gpu = {.goname = "GpuConfig", .fields = f_gpu};
static const struct field f_mig[] = {
	{"apiVersion", F_STRING, "string", NULL},
	{"kind", F_STRING, "string", NULL},
	{"sharing", F_STRUCT, "v1beta1.MigDeviceSharing", &s_mig_sharing},
	{NULL, 0, NULL, NULL},
};
static const struct schema s_mig = {.goname = "MigDeviceConfig", .fields = f_mig};
static const struct field f_vfio[] = {
	{"apiVersion", F_STRING, "string", NULL},
	{"kind", F_STRING, "string", NULL},
	{NULL, 0, NULL, NULL},
};
static const struct schema s_vfio = {.goname = "VfioDeviceConfig", .fields = f_vfio};

enum cfg_kind { K_GPU, K_MIG, K_VFIO, K_OTHER };

struct kind_def {
	const char *name;
	enum cfg_kind kind;
	const struct schema *schema; /* NULL: fields not checked (not a GPU kind) */
};
/* scheme.AddKnownTypes in api.go, plus metav1.AddToGroupVersion's WatchEvent. */
static const struct kind_def kinds[] = {
	{"GpuConfig", K_GPU, &s_gpu},
	{"MigDeviceConfig", K_MIG, &s_mig},
	{"VfioDeviceConfig", K_VFIO, &s_vfio},
	{"ComputeDomainChannelConfig", K_OTHER, NULL},
	{"ComputeDomainDaemonConfig", K_OTHER, NULL},
	{"ComputeDomain", K_OTHER, NULL},
	{"ComputeDomainClique", K_OTHER, NULL},
	{"WatchEvent", K_OTHER, NULL},
};
/* metav1.AddToGroupVersion's unversioned kinds: scheme.New finds them under any version. */
static const char *const unversioned_kinds[] = {
	"Status",	   "APIVersions",   "APIGroupList", "APIGroup",
	"APIResourceList", "ListOptions",   "GetOptions",   "DeleteOptions",
	"CreateOptions",   "UpdateOptions", "PatchOptions",
};

struct decode_state {
	struct strbuf type_err;	 /* the first type error (encoding/json saveError) */
	struct strbuf abort_err; /* an Unmarshaler's error: decoding stops */
	struct strbuf strict;	 /* "unknown field ..." joined by ", " */
};

/* The text of a number as it would sit in the JSON. */
static void number_text(const json_t *v, char *buf, size_t size)
{
	if (json_is_integer(v))
		snprintf(buf, size, "%" JSON_INTEGER_FORMAT, json_integer_value(v));
	else
		gonum_format_float(json_real_value(v), 'g', 64, buf, size);
}

static void type_error(struct decode_state *st, const char *value, const char *goname,
		       const char *path, const char *gotype)
{
	if (st->type_err.len)
		return;
	strbuf_addf(&st->type_err,
		    "json: cannot unmarshal %s into Go struct field %s.%s of type %s", value,
		    goname, path, gotype);
}

/* resource.Quantity.UnmarshalJSON on the value's JSON text. */
static void decode_quantity(struct decode_state *st, const json_t *v)
{
	char text[64];
	struct quantity q;
	struct gs_error e;

	if (st->abort_err.len || json_is_null(v))
		return;
	if (json_is_string(v)) {
		const char *s = json_string_value(v);
		size_t n = json_string_length(v);
		while (n && isspace((unsigned char)*s)) {
			s++;
			n--;
		}
		while (n && isspace((unsigned char)s[n - 1]))
			n--;
		if (quantity_parse(&q, s, n, &e))
			strbuf_addstr(&st->abort_err, e.msg);
		return;
	}
	if (json_is_number(v)) {
		number_text(v, text, sizeof(text));
		if (quantity_parse(&q, text, strlen(text), &e))
			strbuf_addstr(&st->abort_err, e.msg);
		return;
	}
	/* true, false, {...}, [...]: none matches the quantity expression */
	const char *t = json_is_true(v) ? "true" : json_is_false(v) ? "false" : "{";
	if (quantity_parse(&q, t, strlen(t), &e))
		strbuf_addstr(&st->abort_err, e.msg);
}

static void decode_object(struct decode_state *st, const struct schema *sc, const json_t *obj,
			  const char *prefix);

static void decode_field(struct decode_state *st, const struct schema *sc, const struct field *f,
			 const json_t *v, const char *path)
{
	char num[64];

	if (st->abort_err.len || json_is_null(v))
		return; /* null leaves a Go value as it is */
	switch (f->type) {
	case F_STRING:
		if (!json_is_string(v))
			type_error(st, gonum_json_kind(v), sc->goname, path, f->gotype);
		break;
	case F_INT:
		if (json_is_integer(v))
			break;
		if (json_is_real(v)) {
			char val[80];
			number_text(v, num, sizeof(num));
			snprintf(val, sizeof(val), "number %s", num);
			type_error(st, val, sc->goname, path, f->gotype);
		} else {
			type_error(st, gonum_json_kind(v), sc->goname, path, f->gotype);
		}
		break;
	case F_QUANTITY:
		decode_quantity(st, v);
		break;
	case F_QMAP:
		if (!json_is_object(v)) {
			type_error(st, gonum_json_kind(v), sc->goname, path, f->gotype);
			break;
		}
		const char *k;
		const json_t *qv;
		json_object_foreach ((json_t *)v, k, qv)
			decode_quantity(st, qv);
		break;
	case F_STRUCT:
		if (!json_is_object(v)) {
			type_error(st, gonum_json_kind(v), sc->goname, path, f->gotype);
			break;
		}
		decode_object(st, f->sub, v, path);
		break;
	case F_ANY:
		break;
	}
}

/* sigs.k8s.io/json UnmarshalStrict: case-sensitive names, unknown fields collected. */
static void decode_object(struct decode_state *st, const struct schema *sc, const json_t *obj,
			  const char *prefix)
{
	const char *key;
	const json_t *v;

	json_object_foreach ((json_t *)obj, key, v) {
		if (st->abort_err.len)
			return;
		char *path = prefix ? gs_xasprintf("%s.%s", prefix, key) : gs_xstrdup(key);
		const struct field *f = sc->fields;
		while (f->name && strcmp(f->name, key))
			f++;
		if (!f->name)
			strbuf_addf(&st->strict, "%sunknown field \"%s\"",
				    st->strict.len ? ", " : "", path);
		else
			decode_field(st, sc, f, v, path);
		free(path);
	}
}

struct cfg {
	enum cfg_kind kind;
	const char *kind_name;
	const json_t *requests; /* borrowed; NULL for the defaults */
	long index;		/* in allocation.devices.config; -1 for a default */
	const char *source;	/* "FromClass" / "FromClaim" / "default" */
	/* GpuConfig / MigDeviceConfig, decoded */
	bool has_sharing;
	char *strategy;
	bool has_ts;
	char *interval; /* NULL: absent */
	bool has_mps;
	json_t *mps; /* the mpsConfig object (a new reference), NULL when absent */
};

static void cfg_release(struct cfg *c)
{
	free(c->strategy);
	free(c->interval);
	json_decref(c->mps);
}

static const json_t *get_nonnull(const json_t *obj, const char *key)
{
	const json_t *v = json_object_get(obj, key);
	return json_is_null(v) ? NULL : v;
}

/* The Go "%s" of a JSON text for "Object 'Kind' is missing in '...'" (the raw parameters). */
static char *raw_json(const json_t *v)
{
	char *s = json_dumps(v, JSON_COMPACT | JSON_SORT_KEYS | JSON_ENCODE_ANY);
	return s ? s : gs_xstrdup("");
}

/*
 * runtime.Decode(StrictDecoder, raw): 0 with *c filled, -1 with the
 * decoder's message in msg.
 */
static int decode_config(const json_t *params, struct cfg *c, struct strbuf *msg)
{
	/* DefaultMetaFactory.Interpret: encoding/json, case-insensitive names, last one wins */
	const char *apiversion = "", *kind = "";
	const char *terr = NULL;
	char *terr_buf = NULL;

	if (!params || json_is_null(params)) {
		/* an empty RawExtension: encoding/json on no bytes */
		strbuf_addstr(msg, "couldn't get version/kind; json parse error: unexpected end of "
				   "JSON input");
		return -1;
	}
	if (!json_is_object(params)) {
		strbuf_addf(
			msg,
			"couldn't get version/kind; json parse error: json: cannot unmarshal %s "
			"into Go value of type struct { APIVersion string "
			"\"json:\\\"apiVersion,omitempty\\\"\"; Kind string "
			"\"json:\\\"kind,omitempty\\\"\" }",
			gonum_json_kind(params));
		return -1;
	}
	if (json_is_object(params)) {
		const char *key;
		const json_t *v;
		json_object_foreach ((json_t *)params, key, v) {
			const char *field = !strcasecmp(key, "apiVersion") ? "apiVersion"
					    : !strcasecmp(key, "kind")	   ? "kind"
									   : NULL;
			if (!field || json_is_null(v))
				continue;
			if (!json_is_string(v)) {
				if (!terr) {
					terr_buf = gs_xasprintf(
						"json: cannot unmarshal %s into Go struct field "
						".%s of type string",
						gonum_json_kind(v), field);
					terr = terr_buf;
				}
				continue;
			}
			if (field[0] == 'a')
				apiversion = json_string_value(v);
			else
				kind = json_string_value(v);
		}
	}
	if (terr) {
		strbuf_addf(msg, "couldn't get version/kind; json parse error: %s", terr);
		free(terr_buf);
		return -1;
	}
	/* schema.ParseGroupVersion */
	char group[256] = "", version[256] = "";
	if (*apiversion && strcmp(apiversion, "/")) {
		const char *slash = strchr(apiversion, '/');
		if (!slash) {
			snprintf(version, sizeof(version), "%s", apiversion);
		} else if (strchr(slash + 1, '/')) {
			strbuf_addf(msg, "unexpected GroupVersion string: %s", apiversion);
			return -1;
		} else {
			snprintf(group, sizeof(group), "%.*s", (int)(slash - apiversion),
				 apiversion);
			snprintf(version, sizeof(version), "%s", slash + 1);
		}
	}
	if (!*kind) {
		char *raw = raw_json(params);
		strbuf_addf(msg, "Object 'Kind' is missing in '%s'", raw);
		free(raw);
		return -1;
	}
	if (!*version) {
		char *raw = raw_json(params);
		strbuf_addf(msg, "Object 'apiVersion' is missing in '%s'", raw);
		free(raw);
		return -1;
	}
	/* scheme.New */
	const struct kind_def *kd = NULL;
	if (!strcmp(group, API_GROUP) && !strcmp(version, API_VERSION))
		for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++)
			if (!strcmp(kinds[i].name, kind))
				kd = &kinds[i];
	bool unversioned = false;
	for (size_t i = 0; !kd && i < sizeof(unversioned_kinds) / sizeof(unversioned_kinds[0]); i++)
		if (!strcmp(unversioned_kinds[i], kind))
			unversioned = true;
	if (!kd && !unversioned) {
		strbuf_addf(msg,
			    "no kind \"%s\" is registered for version \"%s%s%s\" in scheme \"%s\"",
			    kind, group, *group ? "/" : "", version, SCHEME_NAME);
		return -1;
	}
	c->kind = kd ? kd->kind : K_OTHER;
	c->kind_name = kd ? kd->name : "";
	if (!kd || !kd->schema)
		return 0; /* not a GPU kind: its fields are not checked here (docs/guide/dra.md) */

	struct decode_state st = {
		.type_err = STRBUF_INIT, .abort_err = STRBUF_INIT, .strict = STRBUF_INIT};
	decode_object(&st, kd->schema, params, NULL);
	int rc = 0;
	if (st.abort_err.len) {
		strbuf_addstr(msg, st.abort_err.buf);
		rc = -1;
	} else if (st.type_err.len) {
		strbuf_addstr(msg, st.type_err.buf);
		rc = -1;
	} else if (st.strict.len) {
		strbuf_addf(msg, "strict decoding error: %s", st.strict.buf);
		rc = -1;
	}
	strbuf_release(&st.abort_err);
	strbuf_release(&st.type_err);
	strbuf_release(&st.strict);
	if (rc)
		return rc;

	const json_t *sh = get_nonnull(params, "sharing");
	if (sh && (c->kind == K_GPU || c->kind == K_MIG)) {
		c->has_sharing = true;
		const json_t *s = get_nonnull(sh, "strategy");
		c->strategy = gs_xstrdup(s ? json_string_value(s) : "");
		const json_t *ts = c->kind == K_GPU ? get_nonnull(sh, "timeSlicingConfig") : NULL;
		if (ts) {
			c->has_ts = true;
			const json_t *iv = get_nonnull(ts, "interval");
			if (iv)
				c->interval = gs_xstrdup(json_string_value(iv));
		}
		const json_t *mps = get_nonnull(sh, "mpsConfig");
		if (mps) {
			c->has_mps = true;
			c->mps = json_deep_copy(mps);
		}
	}
	return 0;
}

/* ---- Normalize and Validate (api/nvidia.com/resource/v1beta1) ---- */

enum check { CHECK_OK, CHECK_ERROR, CHECK_PANIC };

static void normalize(struct cfg *c, const struct draprepare_gates *g)
{
	if (c->kind != K_GPU && c->kind != K_MIG)
		return;
	if (!c->has_sharing) {
		/* v0.4.1 on: no sharing stays none (commit 67ad0a71) */
		if (!g->time_slicing_settings || !gates_driver(g)->implicit_time_slicing)
			return;
		c->has_sharing = true;
		free(c->strategy);
		c->strategy = gs_xstrdup("TimeSlicing");
	}
	if (c->kind == K_GPU && g->time_slicing_settings && !strcmp(c->strategy, "TimeSlicing") &&
	    !c->has_ts) {
		c->has_ts = true;
		c->interval = gs_xstrdup("Default");
	}
	if (g->mps_support && !strcmp(c->strategy, "MPS") && !c->has_mps) {
		c->has_mps = true;
		c->mps = json_object();
	}
}

static enum check validate(const struct cfg *c, const struct draprepare_gates *g,
			   struct strbuf *msg)
{
	if ((c->kind != K_GPU && c->kind != K_MIG) || !c->has_sharing)
		return CHECK_OK;
	bool ts = !strcmp(c->strategy, "TimeSlicing"), mps = !strcmp(c->strategy, "MPS");
	bool v05 = gates_driver(g)->v05_prepare_texts;
	if (!((g->time_slicing_settings && ts) || (g->mps_support && mps))) {
		if (v05 && (ts || mps))
			/* v0.5.0 api/nvidia.com/resource/v1beta1/validate.go */
			strbuf_addf(msg,
				    "\"%s\" is selected as the GPU sharing strategy, but the "
				    "\"%s\" feature gate is not enabled",
				    c->strategy, ts ? "TimeSlicingSettings" : "MPSSupport");
		else if (v05)
			strbuf_addf(msg,
				    "unknown GPU sharing strategy: %s, supported GPU sharing "
				    "strategies: TimeSlicing, MPS",
				    c->strategy);
		else
			strbuf_addf(msg, "unknown GPU sharing strategy: %s", c->strategy);
		return CHECK_ERROR;
	}
	if (g->time_slicing_settings && ts) {
		if (c->kind == K_MIG)
			return CHECK_OK;
		/* TimeSlicingConfig.Validate dereferences Interval: a nil one panics */
		if (!c->interval)
			return CHECK_PANIC;
		static const char *const ok[] = {"Default", "Short", "Medium", "Long"};
		for (size_t i = 0; i < 4; i++)
			if (!strcmp(c->interval, ok[i]))
				return CHECK_OK;
		strbuf_addf(msg, "unknown time-slice interval: %s", c->interval);
		if (v05)
			strbuf_addstr(msg, ", supported time-slice intervals: Default, Short, "
					   "Medium, Long");
		return CHECK_ERROR;
	}
	/* MPS */
	const json_t *atp = c->mps ? get_nonnull(c->mps, "defaultActiveThreadPercentage") : NULL;
	if (atp) {
		json_int_t p = json_integer_value(atp);
		if (p < 0) {
			strbuf_addstr(msg, "active thread percentage must not be negative");
			return CHECK_ERROR;
		}
		if (p > 100) {
			strbuf_addstr(msg, "active thread percentage must not be greater than 100");
			return CHECK_ERROR;
		}
	}
	return CHECK_OK;
}

/* ---- prepare ---- */

struct slice_device {
	const char *name, *type, *uuid;
};

static const char *attr_string(const json_t *dev, const char *key)
{
	const json_t *a = json_object_get(json_object_get(dev, "attributes"), key);
	const char *s = kobj_string(a, "string");
	if (!s) {
		char full[128];
		snprintf(full, sizeof(full), "%s/%s", DRAPREPARE_DRIVER, key);
		s = kobj_string(json_object_get(json_object_get(dev, "attributes"), full),
				"string");
	}
	return s;
}

static int find_device(const json_t *slices, const char *name, struct slice_device *out)
{
	size_t n = json_is_array(slices) ? json_array_size(slices) : (slices ? 1 : 0);

	for (size_t i = 0; i < n; i++) {
		const json_t *sl = json_is_array(slices) ? json_array_get(slices, i) : slices;
		if (strcmp(kobj_text(sl, "spec.driver"), DRAPREPARE_DRIVER))
			continue;
		const json_t *devs = kobj_get(sl, "spec.devices");
		for (size_t j = 0; j < json_array_size(devs); j++) {
			const json_t *d = json_array_get(devs, j);
			if (strcmp(kobj_text(d, "name"), name))
				continue;
			out->name = name;
			out->type = attr_string(d, "type");
			out->uuid = attr_string(d, "uuid");
			if (!out->type)
				out->type = "unknown";
			if (!out->uuid)
				out->uuid = "";
			return 0;
		}
	}
	return -1;
}

static bool requests_contain(const json_t *reqs, const char *r)
{
	for (size_t i = 0; i < json_array_size(reqs); i++)
		if (json_string_value(json_array_get(reqs, i)) &&
		    !strcmp(json_string_value(json_array_get(reqs, i)), r))
			return true;
	return false;
}

static const char *kind_type_name(enum cfg_kind k)
{
	return k == K_GPU ? "GpuConfig" : k == K_MIG ? "MigDeviceConfig" : "VfioDeviceConfig";
}

static bool kind_fits(enum cfg_kind k, const char *type)
{
	switch (k) {
	case K_GPU:
		return !strcmp(type, "gpu");
	case K_MIG:
		return !strcmp(type, "mig") || !strcmp(type, "migdyn");
	case K_VFIO:
		return !strcmp(type, "vfio");
	default:
		return true;
	}
}

/* The GpuConfig / MigDeviceConfig as the driver holds it after Normalize (json.Marshal order). */
static json_t *cfg_json(const struct cfg *c)
{
	json_t *o = json_object();

	json_object_set_new(o, "kind", json_string(c->kind_name));
	json_object_set_new(o, "apiVersion", json_string(API_GROUP "/" API_VERSION));
	if (c->has_sharing) {
		json_t *s = json_object();
		json_object_set_new(s, "strategy", json_string(c->strategy));
		if (c->has_ts) {
			json_t *ts = json_object();
			if (c->interval)
				json_object_set_new(ts, "interval", json_string(c->interval));
			json_object_set_new(s, "timeSlicingConfig", ts);
		}
		if (c->has_mps)
			json_object_set(s, "mpsConfig", c->mps);
		json_object_set_new(o, "sharing", s);
	}
	return o;
}

static void finish_refusal(struct draprepare_result *out, const json_t *claim, const char *step,
			   bool overlap)
{
	const char *ns = kobj_text(claim, "metadata.namespace");
	const char *name = kobj_text(claim, "metadata.name");
	const char *uid = kobj_text(claim, "metadata.uid");

	out->outcome = DRAPREPARE_REFUSED;
	out->step_error = gs_xstrdup(step);
	/* driver.go nodePrepareResource and device_state.go Prepare */
	out->driver_error =
		gs_xasprintf("error preparing devices for claim %s/%s:%s: %s%s", ns, name, uid,
			     overlap ? "" : "prepare devices failed: ", step);
	/* manager.go prepareResources and PrepareResources */
	out->kubelet_error =
		gs_xasprintf("prepare dynamic resources: NodePrepareResources failed for "
			     "ResourceClaim %s: %s",
			     name, out->driver_error);
	out->event_message =
		gs_xasprintf("Failed to prepare dynamic resources: %s", out->kubelet_error);
}

static void finish_kubelet(struct draprepare_result *out, const char *inner)
{
	out->outcome = DRAPREPARE_KUBELET;
	out->kubelet_error = gs_xasprintf("prepare dynamic resources: %s", inner);
	out->event_message =
		gs_xasprintf("Failed to prepare dynamic resources: %s", out->kubelet_error);
}

static void finish_crash(struct draprepare_result *out, const char *what)
{
	out->outcome = DRAPREPARE_CRASHED;
	out->step_error = gs_xstrdup(what);
	/*
	 * The plugin's gRPC interceptor logs the panic and panics again
	 * (kubeletplugin/nonblockinggrpcserver.go); grpc-go does not recover,
	 * so the plugin process exits and the kubelet's call fails with a
	 * transport error. Its exact text depends on timing; this is grpc-go's
	 * usual one for a server gone mid-call.
	 */
	out->kubelet_error = gs_xstrdup(
		"prepare dynamic resources: NodePrepareResources: rpc error: code = Unavailable "
		"desc = error reading from server: EOF");
	out->event_message =
		gs_xasprintf("Failed to prepare dynamic resources: %s", out->kubelet_error);
}

static void add_device(struct draprepare_result *out, const json_t *res,
		       const struct slice_device *sd, const struct cfg *c)
{
	out->devices = gs_xrealloc(out->devices, (out->n_devices + 1) * sizeof(*out->devices));
	struct draprepare_device *d = &out->devices[out->n_devices++];
	memset(d, 0, sizeof(*d));
	d->request = gs_xstrdup(kobj_text(res, "request"));
	d->pool = gs_xstrdup(kobj_text(res, "pool"));
	d->device = gs_xstrdup(kobj_text(res, "device"));
	d->type = gs_xstrdup(sd->type);
	d->uuid = gs_xstrdup(sd->uuid);
	d->config_source = gs_xstrdup(c->source);
	d->config_index = c->index;
	d->config_kind = gs_xstrdup(c->kind_name);
	d->sharing = gs_xstrdup(c->has_sharing ? c->strategy : "");
	d->interval =
		gs_xstrdup(c->has_ts && c->interval && !strcmp(sd->type, "gpu") ? c->interval : "");
	d->config = cfg_json(c);
}

/* "%v" of a Go []string: "[a b]". */
static void go_list(struct strbuf *sb, const char *const *items, size_t n)
{
	strbuf_addch(sb, '[');
	for (size_t i = 0; i < n; i++)
		strbuf_addf(sb, "%s%s", i ? " " : "", items[i]);
	strbuf_addch(sb, ']');
}

/* MpsPerDevicePinnedMemoryLimit.Normalize's key checks (sharing.go), run by MPS daemon start. */
static int mps_limits_check(const json_t *mps, const char *const *uuids, size_t n,
			    struct strbuf *msg)
{
	const json_t *m = mps ? get_nonnull(mps, "defaultPerDevicePinnedMemoryLimit") : NULL;
	const char *k;
	const json_t *v;

	json_object_foreach ((json_t *)m, k, v) {
		bool found = false;
		for (size_t i = 0; i < n; i++)
			if (!strcmp(uuids[i], k))
				found = true;
		if (!found) {
			char *end;
			long idx = strtol(k, &end, 10);
			if (!*k || *end) {
				strbuf_addf(msg,
					    "invalid device: unable to parse key as an integer: %s",
					    k);
				return -1;
			}
			if (idx < 0 || (size_t)idx >= n) {
				strbuf_addf(msg, "invalid device: invalid device index: %ld", idx);
				return -1;
			}
		}
		struct quantity q;
		struct gs_error e;
		int64_t bytes = 0;
		if (!quantity_from_json(&q, v, &e) && !quantity_value(&q, &bytes) &&
		    bytes / 1024 / 1024 <= 0) {
			char qs[QUANTITY_STR_MAX];
			strbuf_addf(msg, "invalid limit: value set too low: %s: %s", k,
				    quantity_string(&q, qs, sizeof(qs)));
			return -1;
		}
	}
	return 0;
}

int draprepare_claim(const json_t *claim, const json_t *slices,
		     const struct draprepare_gates *gates, const struct draprepare_held *held,
		     size_t n_held, struct draprepare_result *out, struct gs_error *err)
{
	draprepare_result_init(out);
	if (!json_is_object(claim) || strcmp(kobj_text(claim, "kind"), "ResourceClaim")) {
		gs_error_set(err, "not a ResourceClaim");
		return -1;
	}
	const char *name = kobj_text(claim, "metadata.name");
	const char *uid = kobj_text(claim, "metadata.uid");
	out->claim_name = gs_xstrdup(name);
	out->claim_uid = gs_xstrdup(uid);

	const json_t *alloc = kobj_map(claim, "status.allocation");
	if (!alloc) {
		/*
		 * The kubelet checks this first (claiminfo.go newClaimInfoFromClaim),
		 * so the driver's own "claim not yet allocated" is never reached.
		 */
		char *m = gs_xasprintf("ResourceClaim %s: not allocated", name);
		finish_kubelet(out, m);
		free(m);
		return 0;
	}
	const json_t *results = kobj_get(alloc, "devices.results");
	bool v05 = gates_driver(gates)->v05_prepare_texts;
	bool shares = draprepare_consumable_shares(gates);
	/* Overlaps consumable shares allow when the configs agree: (result, held) pairs. */
	size_t *share_res = gs_xcalloc(n_held + 1, sizeof(*share_res));
	const struct draprepare_held **share_held = gs_xcalloc(n_held + 1, sizeof(*share_held));
	size_t n_share = 0;

	/* Prepare: a claim already prepared on the node is answered from the checkpoint */
	for (size_t i = 0; i < n_held; i++)
		if (held[i].claim_uid && !strcmp(held[i].claim_uid, uid)) {
			out->already_prepared = true;
			break;
		}
	if (!out->already_prepared) {
		/* validateNoOverlappingPreparedDevices: non-admin results vs other claims */
		for (size_t r = 0; r < json_array_size(results); r++) {
			const json_t *res = json_array_get(results, r);
			if (strcmp(kobj_text(res, "driver"), DRAPREPARE_DRIVER) ||
			    json_is_true(json_object_get(res, "adminAccess")))
				continue;
			for (size_t i = 0; i < n_held; i++) {
				if (!held[i].device ||
				    strcmp(held[i].device, kobj_text(res, "device")))
					continue;
				struct slice_device sd;
				if (shares && !find_device(slices, held[i].device, &sd) &&
				    strcmp(sd.type, "vfio")) {
					if (n_share < n_held) {
						share_res[n_share] = r;
						share_held[n_share++] = &held[i];
					}
					continue;
				}
				char *step = gs_xasprintf("unable to prepare claim %s: requested "
							  "device %s is already allocated to "
							  "different claim %s",
							  uid, held[i].device, held[i].claim_uid);
				finish_refusal(out, claim, step, true);
				free(step);
				free(share_res);
				free(share_held);
				return 0;
			}
		}
	}

	/* GetOpaqueDeviceConfigs: class configs first, then the claim's; decode strictly */
	const json_t *cfgs = kobj_get(alloc, "devices.config");
	size_t n_cfg = json_array_size(cfgs);
	struct cfg *list = gs_xcalloc(n_cfg + 2, sizeof(*list));
	size_t n = 0;
	struct strbuf msg = STRBUF_INIT;
	int refused = 0;

	list[n++] = (struct cfg){
		.kind = K_MIG, .kind_name = "MigDeviceConfig", .index = -1, .source = "default"};
	list[n++] = (struct cfg){
		.kind = K_GPU, .kind_name = "GpuConfig", .index = -1, .source = "default"};
	for (size_t i = 0; i < n_cfg && !refused; i++) {
		const char *src = kobj_text(json_array_get(cfgs, i), "source");
		if (strcmp(src, "FromClass") && strcmp(src, "FromClaim")) {
			strbuf_addf(
				&msg,
				"error getting opaque device configs: invalid config source: %s",
				src);
			refused = 1;
		}
	}
	for (int pass = 0; pass < 2 && !refused; pass++) {
		const char *want = pass == 0 ? "FromClass" : "FromClaim";
		for (size_t i = 0; i < n_cfg && !refused; i++) {
			const json_t *ce = json_array_get(cfgs, i);
			if (strcmp(kobj_text(ce, "source"), want))
				continue;
			const json_t *opaque = kobj_map(ce, "opaque");
			if (!opaque) {
				strbuf_addstr(&msg,
					      "error getting opaque device configs: only opaque "
					      "parameters are supported by this driver");
				refused = 1;
				break;
			}
			if (strcmp(kobj_text(opaque, "driver"), DRAPREPARE_DRIVER))
				continue;
			struct cfg c = {.index = (long)i, .source = want};
			c.requests = json_object_get(ce, "requests");
			struct strbuf dm = STRBUF_INIT;
			if (decode_config(json_object_get(opaque, "parameters"), &c, &dm)) {
				/* GetOpaqueDeviceConfigs %w, then prepareDevices %v */
				strbuf_addf(&msg,
					    "error getting opaque device configs: error decoding "
					    "config parameters: %s",
					    dm.buf);
				refused = 1;
				cfg_release(&c);
			} else {
				list[n++] = c;
			}
			strbuf_release(&dm);
		}
	}

	/* Per result: the last config naming its request, or unscoped and of its kind */
	size_t n_res = json_array_size(results);
	long *pick = gs_xcalloc(n_res + 1, sizeof(*pick));
	struct slice_device *sdev = gs_xcalloc(n_res + 1, sizeof(*sdev));
	for (size_t r = 0; r < n_res && !refused; r++) {
		const json_t *res = json_array_get(results, r);
		pick[r] = -1;
		if (strcmp(kobj_text(res, "driver"), DRAPREPARE_DRIVER))
			continue;
		const char *dev = kobj_text(res, "device");
		const char *req = kobj_text(res, "request");
		if (find_device(slices, dev, &sdev[r])) {
			if (v05)
				strbuf_addf(&msg, "allocatable not found for device \"%s\"", dev);
			else
				strbuf_addf(&msg, "requested device is not allocatable: %s", dev);
			refused = 1;
			break;
		}
		/* the driver's own type of an abstract MIG device (types.go) */
		const char *itype = sdev[r].type;
		if (gates->dynamic_mig && !strcmp(itype, "mig") && !*sdev[r].uuid)
			itype = "migdyn";
		for (size_t k = n; k-- > 0;) {
			struct cfg *c = &list[k];
			if (c->requests && requests_contain(c->requests, req)) {
				if (c->kind != K_OTHER && !kind_fits(c->kind, sdev[r].type)) {
					if (v05)
						strbuf_addf(&msg,
							    "cannot apply %s to device \"%s\" of "
							    "type \"%s\" (request: %s)",
							    kind_type_name(c->kind), dev, itype,
							    req);
					else
						strbuf_addf(&msg,
							    "cannot apply %s to device type %s "
							    "(request: %s)",
							    kind_type_name(c->kind), sdev[r].type,
							    req);
					refused = 1;
					break;
				}
				pick[r] = (long)k;
				break;
			}
			if (json_array_size(c->requests) == 0) {
				/* v0.5.0 matchesDeviceType: no device kind matches nothing */
				if (c->kind == K_OTHER && v05)
					continue;
				if (c->kind != K_OTHER && !kind_fits(c->kind, sdev[r].type))
					continue;
				pick[r] = (long)k;
				break;
			}
		}
	}

	/*
	 * validateNoOverlappingPreparedDevices with consumable shares: a device
	 * another claim holds is shared when both normalized configs are equal.
	 */
	for (size_t k = 0; k < n_share && !refused; k++) {
		long pk = pick[share_res[k]];
		if (!share_held[k]->config || pk < 0 || list[pk].kind == K_OTHER)
			continue;
		normalize(&list[pk], gates);
		json_t *mine = cfg_json(&list[pk]);
		bool same = json_equal(mine, (json_t *)share_held[k]->config);
		json_decref(mine);
		if (!same) {
			char *step =
				gs_xasprintf("unable to prepare claim %s: requested device %s "
					     "has conflicting configuration with already "
					     "prepared claim %s",
					     uid, share_held[k]->device, share_held[k]->claim_uid);
			strbuf_reset(&msg);
			strbuf_addstr(&msg, step);
			free(step);
			refused = 2; /* not wrapped in "prepare devices failed" */
		}
	}

	/*
	 * Normalize, Validate and apply each config in use. The driver walks a
	 * Go map here, so with two bad configs which one it names is random;
	 * this takes them in the order of their first result.
	 */
	bool *done = gs_xcalloc(n + 1, sizeof(*done));
	enum check crash = CHECK_OK;
	for (size_t r = 0; r < n_res && !refused; r++) {
		if (pick[r] < 0 || done[pick[r]])
			continue;
		struct cfg *c = &list[pick[r]];
		done[pick[r]] = true;
		if (c->kind == K_OTHER) {
			strbuf_addstr(&msg, "runtime object is not a recognized configuration");
			refused = 1;
			break;
		}
		normalize(c, gates);
		struct strbuf vm = STRBUF_INIT;
		enum check ck = validate(c, gates, &vm);
		if (ck == CHECK_PANIC) {
			crash = ck;
			refused = 1;
			strbuf_addstr(&msg, "runtime error: invalid memory address or nil pointer "
					    "dereference");
		} else if (ck == CHECK_ERROR) {
			strbuf_addf(&msg, "error validating GPU config: %s", vm.buf);
			refused = 1;
		}
		strbuf_release(&vm);
		if (refused)
			break;
		/* applySharingConfig */
		const char *reqs[64], *uuids[64];
		size_t nr = 0;
		for (size_t q = 0; q < n_res && nr < 64; q++)
			if (pick[q] == pick[r]) {
				reqs[nr] = kobj_text(json_array_get(results, q), "request");
				uuids[nr++] = sdev[q].uuid;
			}
		if (c->has_sharing && gates->time_slicing_settings &&
		    !strcmp(c->strategy, "TimeSlicing") && c->kind == K_GPU && c->has_mps) {
			strbuf_addstr(&msg, "error applying config: error getting timeslice config "
					    "for requests '");
			go_list(&msg, reqs, nr);
			strbuf_addf(&msg,
				    "' in claim '%s': cannot use MpsConfig with the "
				    "'TimeSlicing' strategy",
				    uid);
			refused = 1;
			break;
		}
		if (c->has_sharing && gates->mps_support && !strcmp(c->strategy, "MPS")) {
			if (shares) {
				strbuf_addstr(&msg, "error applying config: MPS sharing is not "
						    "supported when consumable shares is enabled");
				refused = 1;
				break;
			}
			if (c->kind == K_GPU && c->has_ts) {
				strbuf_addstr(&msg, "error applying config: error getting MPS "
						    "configuration: cannot use TimeSlicingConfig "
						    "with the 'MPS' strategy");
				refused = 1;
				break;
			}
			struct strbuf lm = STRBUF_INIT;
			if (mps_limits_check(c->mps, uuids, nr, &lm)) {
				strbuf_addf(&msg,
					    "error applying config: error starting MPS control "
					    "daemon: error transforming "
					    "DefaultPerDevicePinnedMemoryLimit into string: %s",
					    lm.buf);
				refused = 1;
			}
			strbuf_release(&lm);
			if (refused)
				break;
		}
	}

	if (out->already_prepared && (refused || crash == CHECK_PANIC)) {
		/*
		 * Prepared before (under other gates, say): the driver answers from
		 * its checkpoint and decides nothing again. gpushare keeps no
		 * checkpoint, so the devices are not listed.
		 */
		out->outcome = DRAPREPARE_OK;
	} else if (crash == CHECK_PANIC) {
		finish_crash(out, msg.buf);
	} else if (refused) {
		finish_refusal(out, claim, msg.buf, refused == 2);
	} else {
		out->outcome = DRAPREPARE_OK;
		for (size_t r = 0; r < n_res; r++)
			if (pick[r] >= 0)
				add_device(out, json_array_get(results, r), &sdev[r],
					   &list[pick[r]]);
	}
	strbuf_release(&msg);
	for (size_t k = 0; k < n; k++)
		cfg_release(&list[k]);
	free(list);
	free(pick);
	free(sdev);
	free(done);
	free(share_res);
	free(share_held);
	return 0;
}

/* ---- unprepare (device_state.go unprepareDevices) ---- */

static const char *held_by_other(const char *claim_uid, const char *device,
				 const struct draprepare_held *held, size_t n_held)
{
	for (size_t i = 0; i < n_held; i++)
		if (held[i].claim_uid && held[i].device && strcmp(held[i].claim_uid, claim_uid) &&
		    !strcmp(held[i].device, device))
			return held[i].claim_uid;
	return NULL;
}

void draprepare_unprepare(const struct draprepare_gates *gates, const char *claim_uid,
			  const struct draprepare_device *devices, size_t n,
			  const struct draprepare_held *held, size_t n_held,
			  struct draprepare_unprepared *out)
{
	const struct dradriver *d = gates_driver(gates);
	bool shares = draprepare_consumable_shares(gates);

	for (size_t i = 0; i < n; i++) {
		const struct draprepare_device *dv = &devices[i];
		const char *other =
			shares ? held_by_other(claim_uid, dv->device, held, n_held) : NULL;
		bool undo = false;

		out[i].device = dv->device;
		out[i].by = NULL;
		out[i].what = DRAPREPARE_TEARDOWN_NONE;
		if (!strcmp(dv->type, "gpu") && gates->time_slicing_settings) {
			/*
			 * v25.12.0: every full GPU goes back to the default slice;
			 * v0.4.1 on: where prepare set one (TimeSliceApplied).
			 */
			undo = d->implicit_time_slicing || !strcmp(dv->sharing, "TimeSlicing");
			if (undo)
				out[i].what = DRAPREPARE_TEARDOWN_TIMESLICE;
		} else if (!strcmp(dv->type, "mig") && gates->dynamic_mig) {
			undo = true;
			out[i].what = DRAPREPARE_TEARDOWN_DELETE_MIG;
		}
		if (undo && other) {
			out[i].what = DRAPREPARE_TEARDOWN_KEPT;
			out[i].by = other;
		}
	}
}

/* ---- the kubelet's view of a pod ---- */

static const json_t *find_claim(const json_t *claims, const char *ns, const char *name)
{
	size_t n = json_is_array(claims) ? json_array_size(claims) : 0;
	for (size_t i = 0; i < n; i++) {
		const json_t *c = json_array_get(claims, i);
		if (!strcmp(kobj_text(c, "metadata.name"), name) &&
		    !strcmp(kobj_text(c, "metadata.namespace"), ns))
			return c;
	}
	return NULL;
}

static bool controlled_by(const json_t *claim, const char *pod_uid)
{
	const json_t *refs = kobj_get(claim, "metadata.ownerReferences");
	for (size_t i = 0; i < json_array_size(refs); i++) {
		const json_t *r = json_array_get(refs, i);
		if (json_is_true(json_object_get(r, "controller")))
			return !strcmp(kobj_text(r, "uid"), pod_uid);
	}
	return false;
}

static bool reserved_for(const json_t *claim, const char *pod_uid)
{
	const json_t *rf = kobj_get(claim, "status.reservedFor");
	for (size_t i = 0; i < json_array_size(rf); i++)
		if (!strcmp(kobj_text(json_array_get(rf, i), "uid"), pod_uid))
			return true;
	return false;
}

int draprepare_pod(const json_t *pod, const json_t *claims, const json_t *slices,
		   const struct draprepare_gates *gates, const struct draprepare_held *held,
		   size_t n_held, struct draprepare_result *out, struct gs_error *err)
{
	draprepare_result_init(out);
	if (!json_is_object(pod) || strcmp(kobj_text(pod, "kind"), "Pod")) {
		gs_error_set(err, "not a Pod");
		return -1;
	}
	const char *ns = kobj_text(pod, "metadata.namespace");
	const char *pname = kobj_text(pod, "metadata.name");
	const char *puid = kobj_text(pod, "metadata.uid");
	const json_t *pcs = kobj_get(pod, "spec.resourceClaims");
	size_t n = json_array_size(pcs);
	const json_t **found = gs_xcalloc(n + 1, sizeof(*found));
	char *fail = NULL;

	/* the validation pass: nothing is prepared unless every claim passes */
	for (size_t i = 0; i < n && !fail; i++) {
		const json_t *pc = json_array_get(pcs, i);
		const char *pcname = kobj_text(pc, "name");
		const char *cname = kobj_string(pc, "resourceClaimName");
		bool owner = false;
		if (!cname && kobj_string(pc, "resourceClaimTemplateName")) {
			const json_t *sts = kobj_get(pod, "status.resourceClaimStatuses");
			size_t j;
			for (j = 0; j < json_array_size(sts); j++)
				if (!strcmp(kobj_text(json_array_get(sts, j), "name"), pcname))
					break;
			if (j == json_array_size(sts)) {
				fail = gs_xasprintf("pod \"%s/%s\": ResourceClaim not created yet",
						    ns, pname);
				break;
			}
			cname = kobj_string(json_array_get(sts, j), "resourceClaimName");
			if (!cname)
				continue; /* nothing to prepare */
			owner = true;
		} else if (!cname) {
			fail = gs_xasprintf("pod \"%s/%s\", spec.resourceClaim \"%s\": none of the "
					    "supported fields are set",
					    ns, pname, pcname);
			break;
		}
		const json_t *c = find_claim(claims, ns, cname);
		if (!c) {
			fail = gs_xasprintf(
				"fetch ResourceClaim %s: resourceclaims.resource.k8s.io "
				"\"%s\" not found",
				cname, cname);
			break;
		}
		if (owner && !controlled_by(c, puid)) {
			fail = gs_xasprintf(
				"ResourceClaim %s/%s was not created for pod %s/%s (pod "
				"is not owner)",
				ns, cname, ns, pname);
			break;
		}
		if (!reserved_for(c, puid)) {
			fail = gs_xasprintf(
				"pod %s (%s) is not allowed to use ResourceClaim %s (%s)", pname,
				puid, cname, kobj_text(c, "metadata.uid"));
			break;
		}
		if (!kobj_map(c, "status.allocation")) {
			fail = gs_xasprintf("ResourceClaim %s: not allocated", cname);
			break;
		}
		found[i] = c;
	}
	if (fail) {
		out->claim_name = gs_xstrdup("");
		out->claim_uid = gs_xstrdup("");
		finish_kubelet(out, fail);
		free(fail);
		free(found);
		return 0;
	}
	out->outcome = DRAPREPARE_OK;
	out->claim_name = gs_xstrdup("");
	out->claim_uid = gs_xstrdup("");
	for (size_t i = 0; i < n; i++) {
		if (!found[i])
			continue;
		struct draprepare_result one;
		if (draprepare_claim(found[i], slices, gates, held, n_held, &one, err)) {
			free(found);
			draprepare_result_release(out);
			return -1;
		}
		if (one.outcome != DRAPREPARE_OK) {
			draprepare_result_release(out);
			*out = one;
			free(found);
			return 0;
		}
		out->devices = gs_xrealloc(out->devices, (out->n_devices + one.n_devices + 1) *
								 sizeof(*out->devices));
		memcpy(out->devices + out->n_devices, one.devices,
		       one.n_devices * sizeof(*one.devices));
		out->n_devices += one.n_devices;
		free(one.devices);
		one.devices = NULL;
		one.n_devices = 0;
		draprepare_result_release(&one);
	}
	free(found);
	return 0;
}

static json_t *condition(const char *type, const char *reason, const char *message)
{
	json_t *c = json_pack("{s:s, s:s}", "type", type, "status", reason ? "False" : "True");
	if (reason && *reason)
		json_object_set_new(c, "reason", json_string(reason));
	if (message)
		json_object_set_new(c, "message", json_string(message));
	return c;
}

static json_t *waiting_statuses(const json_t *containers, const char *reason, const char *images)
{
	json_t *a = json_array();
	(void)images;
	for (size_t i = 0; i < json_array_size(containers); i++) {
		const json_t *c = json_array_get(containers, i);
		json_array_append_new(a, json_pack("{s:s, s:s, s:b, s:i, s:b, s:{s:{s:s}}}", "name",
						   kobj_text(c, "name"), "image",
						   kobj_text(c, "image"), "ready", 0,
						   "restartCount", 0, "started", 0, "state",
						   "waiting", "reason", reason));
	}
	return a;
}

json_t *draprepare_pending_status(const json_t *pod)
{
	const json_t *ctrs = kobj_get(pod, "spec.containers");
	const json_t *inits = kobj_get(pod, "spec.initContainers");
	bool has_init = json_array_size(inits) > 0;
	struct strbuf unready = STRBUF_INIT, incomplete = STRBUF_INIT;
	const char **names =
		gs_xcalloc(json_array_size(ctrs) + json_array_size(inits) + 1, sizeof(*names));
	size_t nn = 0;

	/* restartable (sidecar) init containers count as unready too */
	for (size_t i = 0; i < json_array_size(inits); i++) {
		const json_t *c = json_array_get(inits, i);
		if (!strcmp(kobj_text(c, "restartPolicy"), "Always"))
			names[nn++] = kobj_text(c, "name");
	}
	for (size_t i = 0; i < json_array_size(ctrs); i++)
		names[nn++] = kobj_text(json_array_get(ctrs, i), "name");
	strbuf_addstr(&unready, "containers with unready status: ");
	go_list(&unready, names, nn);
	nn = 0;
	for (size_t i = 0; i < json_array_size(inits); i++)
		names[nn++] = kobj_text(json_array_get(inits, i), "name");
	strbuf_addstr(&incomplete, "containers with incomplete status: ");
	go_list(&incomplete, names, nn);
	free(names);

	const char *reason = has_init ? "PodInitializing" : "ContainerCreating";
	json_t *conds = json_array();
	json_array_append_new(conds, condition("PodReadyToStartContainers", "", NULL));
	json_array_append_new(conds, has_init ? condition("Initialized", "ContainersNotInitialized",
							  incomplete.buf)
					      : condition("Initialized", NULL, NULL));
	json_array_append_new(conds, condition("Ready", "ContainersNotReady", unready.buf));
	json_array_append_new(conds,
			      condition("ContainersReady", "ContainersNotReady", unready.buf));
	json_t *st = json_pack("{s:s, s:o, s:o}", "phase", "Pending", "conditions", conds,
			       "containerStatuses", waiting_statuses(ctrs, reason, NULL));
	if (has_init)
		json_object_set_new(st, "initContainerStatuses",
				    waiting_statuses(inits, reason, NULL));
	strbuf_release(&unready);
	strbuf_release(&incomplete);
	return st;
}
