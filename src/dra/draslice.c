#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dra/draslice.h"
#include "base/jsonsort.h"
#include "model/kobj.h"
#include "base/strbuf.h"
#include "base/banned.h"

int draslice_node_wants_dra(const json_t *node)
{
	const char *v = kobj_label(node, DRASLICE_LABEL_PATH);

	return v && !strcmp(v, DRASLICE_PATH_DRA);
}

void draslice_profile_name(const char *profile, char *out, size_t size)
{
	size_t n = 0;

	if (!size)
		return;
	for (const char *p = profile; *p && n + 1 < size; p++) {
		char c = *p;

		if (c == '.')
			continue;
		if (c >= 'A' && c <= 'Z')
			c = (char)(c - 'A' + 'a');
		if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-'))
			c = '-';
		out[n++] = c;
	}
	out[n] = '\0';
}

/* go-nvlib's architecture name for a compute capability. */
static const char *architecture(int major, int minor)
{
	switch (major) {
	case 7:
		return minor >= 5 ? "Turing" : "Volta";
	case 8:
		return minor == 9 ? "Ada Lovelace" : "Ampere";
	case 9:
		return "Hopper";
	case 10:
	case 11:
	case 12:
		return "Blackwell";
	default:
		return "Unknown";
	}
}

/*
 * Masterminds semver's coercion of a driver version: "570.124.06" ->
 * "570.124.6", "570.124" -> "570.124.0". nodehw has checked the form.
 */
static void semver(const char *v, char *out, size_t size)
{
	long part[3] = {0, 0, 0};
	int i = 0;

	for (const char *p = v; *p && i < 3; p++) {
		if (*p == '.') {
			i++;
			continue;
		}
		if (*p >= '0' && *p <= '9' && part[i] < 100000000)
			part[i] = part[i] * 10 + (*p - '0');
	}
	snprintf(out, size, "%ld.%ld.%ld", part[0], part[1], part[2]);
}

/* FNV-1a, for synthetic but stable UUIDs. */
static uint64_t fnv(const char *s, uint64_t h)
{
	for (; *s; s++) {
		h ^= (unsigned char)*s;
		h *= 0x100000001b3ULL;
	}
	return h;
}

/* "<prefix><uuid v4 form>" from `key`: the same node and device give the same UUID. */
static void synthetic_uuid(const char *prefix, const char *key, char *out, size_t size)
{
	uint64_t a = fnv(key, 0xcbf29ce484222325ULL), b = fnv(key, a ^ 0x9e3779b97f4a7c15ULL);

	snprintf(out, size, "%s%08x-%04x-4%03x-8%03x-%012llx", prefix, (unsigned)(a >> 32),
		 (unsigned)(a >> 16) & 0xffff, (unsigned)a & 0xfff, (unsigned)(b >> 48) & 0xfff,
		 (unsigned long long)(b & 0xffffffffffffULL));
}

/* A BinarySI quantity of MiB as resource.Quantity writes it: "80Gi", "9728Mi". */
static json_t *mib_quantity(long mib)
{
	char q[32];

	if (mib % 1024 == 0)
		snprintf(q, sizeof(q), "%ldGi", mib / 1024);
	else
		snprintf(q, sizeof(q), "%ldMi", mib);
	return json_pack("{s:s}", "value", q);
}

static json_t *count_quantity(long v)
{
	char q[32];

	snprintf(q, sizeof(q), "%ld", v);
	return json_pack("{s:s}", "value", q);
}

static void attr_string(json_t *attrs, const char *key, const char *v)
{
	json_object_set_new(attrs, key, json_pack("{s:s}", "string", v));
}

static void attr_version(json_t *attrs, const char *key, const char *v)
{
	json_object_set_new(attrs, key, json_pack("{s:s}", "version", v));
}

/* What every device of one physical GPU shares. */
struct gpu_facts {
	const struct catalog_gpu *model;
	int minor;
	char uuid[64];
	char bus_id[32];
	const char *driver_version; /* semver */
	const char *cuda_version;   /* semver */
	int numa;		    /* resource.kubernetes.io/numaNode; -1: not published */
};

static void common_attrs(json_t *attrs, const struct gpu_facts *g)
{
	char cc[32];

	snprintf(cc, sizeof(cc), "%d.%d.0", g->model->cc_major, g->model->cc_minor);
	attr_string(attrs, "productName", g->model->name);
	attr_string(attrs, "brand", "Nvidia");
	attr_string(attrs, "architecture", architecture(g->model->cc_major, g->model->cc_minor));
	attr_version(attrs, "cudaComputeCapability", cc);
	attr_version(attrs, "driverVersion", g->driver_version);
	attr_version(attrs, "cudaDriverVersion", g->cuda_version);
	attr_string(attrs, "resource.kubernetes.io/pciBusID", g->bus_id);
	if (g->numa >= 0)
		json_object_set_new(attrs, "resource.kubernetes.io/numaNode",
				    json_pack("{s:I}", "int", (json_int_t)g->numa));
}

void draslice_opts_from_gates(struct draslice_opts *o, const struct draprepare_gates *g)
{
	o->dynamic_mig = g->dynamic_mig;
	o->driver = g->driver;
	o->shares = g->shares;
	if (!draprepare_consumable_shares(g))
		o->shares.mode = DRADRIVER_SHARES_DISABLED;
	o->list_attributes = g->dra_list_type_attributes;
}

static const struct dradriver *opts_driver(const struct draslice_opts *o)
{
	return o && o->driver ? o->driver : dradriver_newest();
}

/*
 * applyConsumableShares (v0.5.0 cmd/gpu-kubelet-plugin/consumable_shares.go)
 * on a full GPU or MIG device: allowMultipleAllocations, and a requestPolicy
 * on its memory (rounded down to 1Mi, which a MiB size already is): step
 * 1Mi, range 0 (unlimited, N) or 1Mi (memory) to all of it, default 0
 * (unlimited, N) or all of it (memory); with N also a capacity `shares` of
 * N, default 1, range 1..N step 1.
 */
static void apply_shares(json_t *dev, const struct draslice_opts *o)
{
	json_t *cap, *mem;
	const char *memv;

	if (!o || o->shares.mode == DRADRIVER_SHARES_DISABLED)
		return;
	cap = json_object_get(dev, "capacity");
	if (!cap) {
		cap = json_object();
		json_object_set_new(dev, "capacity", cap);
	}
	/*
	 * Without DRAConsumableCapacity the apiserver keeps the capacities the
	 * driver publishes but drops allowMultipleAllocations and every
	 * requestPolicy (k8s.io/kubernetes v1.35.4
	 * pkg/registry/resource/resourceslice/strategy.go
	 * dropDisabledDRAConsumableCapacityFields): publish what it keeps.
	 */
	if (!o->consumable_capacity) {
		if (o->shares.mode == DRADRIVER_SHARES_COUNT) {
			char n[32];

			snprintf(n, sizeof(n), "%lld", o->shares.count);
			json_object_set_new(cap, "shares", json_pack("{s:s}", "value", n));
		}
		return;
	}
	json_object_set_new(dev, "allowMultipleAllocations", json_true());
	mem = json_object_get(cap, "memory");
	if (!mem || !(memv = json_string_value(json_object_get(mem, "value"))))
		return;
	bool all = o->shares.mode == DRADRIVER_SHARES_MEMORY;
	json_object_set_new(mem, "requestPolicy",
			    json_pack("{s:s, s:{s:s, s:s, s:s}}", "default", all ? memv : "0",
				      "validRange", "min", all ? "1Mi" : "0", "max", memv, "step",
				      "1Mi"));
	if (o->shares.mode == DRADRIVER_SHARES_COUNT) {
		char n[32];

		snprintf(n, sizeof(n), "%lld", o->shares.count);
		json_object_set_new(cap, "shares",
				    json_pack("{s:s, s:{s:s, s:{s:s, s:s, s:s}}}", "value", n,
					      "requestPolicy", "default", "1", "validRange", "min",
					      "1", "max", n, "step", "1"));
	}
}

/*
 * The NUMA node of every GPU (NODEHW_ANN_NUMA, "0,0,1,1"), into numa[0..n):
 * -1 where not known or not published. The driver reads sysfs numa_node
 * (v0.5.0 numa.go, deviceattribute.GetNUMANodeAttributeByPCIBusID) and
 * leaves the attribute out at -1 ("no NUMA affinity") or on any error.
 */
static int numa_nodes(const json_t *node, const struct ydoc_stream *src, const char *name,
		      const struct draslice_opts *o, int *numa, int n, struct gs_warnings *warnings,
		      struct gs_error *err)
{
	const char *v = kobj_annotation(node, NODEHW_ANN_NUMA);
	int i = 0;

	for (int k = 0; k < n; k++)
		numa[k] = -1;
	if (!v || !opts_driver(o)->numa_node)
		return 0;
	if (o && o->list_attributes) {
		gs_warnings_add(warnings,
				"DRAListTypeAttributes: the driver publishes numaNode as a list "
				"with the same-socket NUMA nodes, which %s does not give; "
				"numaNode is left out",
				NODEHW_ANN_NUMA);
		return 0;
	}
	for (const char *p = v; *p; i++) {
		char *end;
		long x = strtol(p, &end, 10);

		if (end == p || (*end && *end != ',') || x < -1 || x > 1023 || i >= n) {
			ydoc_error_at_key(src, kobj_annotations(node), NODEHW_ANN_NUMA, err,
					  "node '%s': %s: '%s' is not one NUMA node (0-1023, -1 "
					  "for none) per GPU, %d GPUs",
					  name, NODEHW_ANN_NUMA, v, n);
			return -1;
		}
		numa[i] = (int)x;
		p = *end ? end + 1 : end;
	}
	if (i != n) {
		ydoc_error_at_key(src, kobj_annotations(node), NODEHW_ANN_NUMA, err,
				  "node '%s': %s: '%s' names %d NUMA nodes for %d GPUs", name,
				  NODEHW_ANN_NUMA, v, i, n);
		return -1;
	}
	return 0;
}

static json_t *full_gpu(const struct gpu_facts *g)
{
	json_t *attrs = json_object(), *dev;
	char name[32];

	snprintf(name, sizeof(name), "gpu-%d", g->minor);
	attr_string(attrs, "type", "gpu");
	attr_string(attrs, "uuid", g->uuid);
	common_attrs(attrs, g);
	dev = json_pack("{s:s, s:o, s:{s:o}}", "name", name, "attributes", attrs, "capacity",
			"memory", mib_quantity(g->model->memory_mib));
	return dev;
}

void draslice_gpu_uuid(const char *node, int minor, char *out, size_t size)
{
	char key[512];

	snprintf(key, sizeof(key), "%s/gpu-%d", node, minor);
	synthetic_uuid("GPU-", key, out, size);
}

static json_t *mig_device(const struct gpu_facts *g, const struct draslice_mig_instance *in)
{
	const struct catalog_mig_profile *p = in->profile;
	json_t *attrs = json_object(), *cap = json_object();

	attr_string(attrs, "type", "mig");
	attr_string(attrs, "uuid", in->uuid);
	attr_string(attrs, "parentUUID", g->uuid);
	attr_string(attrs, "profile", p->name);
	common_attrs(attrs, g);
	json_object_set_new(cap, "multiprocessors", count_quantity(p->multiprocessors));
	json_object_set_new(cap, "copyEngines", count_quantity(p->copy_engines));
	json_object_set_new(cap, "decoders", count_quantity(p->decoders));
	json_object_set_new(cap, "encoders", count_quantity(p->encoders));
	json_object_set_new(cap, "jpegEngines", count_quantity(p->jpeg));
	json_object_set_new(cap, "ofaEngines", count_quantity(p->ofa));
	json_object_set_new(cap, "memory", mib_quantity(p->memory_mib));
	for (int i = in->start; i < in->start + p->placement_size; i++) {
		char slice[32];

		snprintf(slice, sizeof(slice), "memorySlice%d", i);
		json_object_set_new(cap, slice, count_quantity(1));
	}
	return json_pack("{s:s, s:o, s:o}", "name", in->name, "attributes", attrs, "capacity", cap);
}

/*
 * Placement of a layout's instances. NVML places an instance created
 * without a placement itself; gpushare fixes one answer: the largest
 * instances first, each at the lowest start that still lets the rest fit
 * (a search over the few starts; at most 8 instances).
 */
static bool place(const struct catalog_mig_profile *const *inst, size_t n, size_t i, unsigned used,
		  int *starts)
{
	if (i == n)
		return true;
	for (int k = 0; k < inst[i]->n_placements; k++) {
		int s = inst[i]->placements[k];
		unsigned mask = ((1u << inst[i]->placement_size) - 1u) << s;

		if (used & mask)
			continue;
		starts[i] = s;
		if (place(inst, n, i + 1, used | mask, starts))
			return true;
	}
	return false;
}

static int larger_first(const void *a, const void *b)
{
	const struct catalog_mig_profile *x = *(const struct catalog_mig_profile *const *)a;
	const struct catalog_mig_profile *y = *(const struct catalog_mig_profile *const *)b;

	if (x->placement_size != y->placement_size)
		return y->placement_size - x->placement_size;
	if (x->gi_slices != y->gi_slices)
		return y->gi_slices - x->gi_slices;
	return strcmp(x->name, y->name);
}

int draslice_mig_instances(const char *node, const struct catalog_gpu *model, int minor,
			   const struct catalog_mig_count *devices, size_t n_devices,
			   struct draslice_mig_instance *out, size_t cap, struct gs_error *err)
{
	const struct catalog_mig_profile *inst[16];
	int starts[16];
	size_t n = 0;

	for (size_t i = 0; i < n_devices; i++) {
		const struct catalog_mig_profile *p =
			catalog_gpu_profile(model, devices[i].profile);

		if (!p || p->gi_profile_id < 0 || !p->n_placements) {
			gs_error_set(err,
				     "MIG profile '%s' of '%s': the catalog has no GI profile id "
				     "or placements for it (a `gip` record in data/gpus.tab)",
				     devices[i].profile, model->name);
			return -1;
		}
		for (int c = 0; c < devices[i].count; c++) {
			if (n == sizeof(inst) / sizeof(inst[0]) || n == cap) {
				gs_error_set(err, "GPU %d: more MIG instances than fit", minor);
				return -1;
			}
			inst[n++] = p;
		}
	}
	qsort(inst, n, sizeof(inst[0]), larger_first);
	if (!place(inst, n, 0, 0, starts)) {
		gs_error_set(err, "GPU %d (%s): no placement fits the layout's instances", minor,
			     model->name);
		return -1;
	}
	for (size_t i = 0; i < n; i++) {
		char pname[64], key[512];

		out[i].profile = inst[i];
		out[i].start = starts[i];
		draslice_profile_name(inst[i]->name, pname, sizeof(pname));
		snprintf(out[i].name, sizeof(out[i].name), "gpu-%d-mig-%s-%d-%d", minor, pname,
			 inst[i]->gi_profile_id, starts[i]);
		snprintf(key, sizeof(key), "%s/%s", node, out[i].name);
		synthetic_uuid("MIG-", key, out[i].uuid, sizeof(out[i].uuid));
	}
	return (int)n;
}

static int mig_devices(const char *node, const struct gpu_facts *g, const struct catalog_gpu_mig *m,
		       json_t *devices, const struct draslice_opts *o, struct gs_error *err)
{
	struct draslice_mig_instance inst[DRASLICE_MAX_MIG];
	int n = draslice_mig_instances(node, g->model, g->minor, m->devices, m->n_devices, inst,
				       DRASLICE_MAX_MIG, err);

	if (n < 0)
		return -1;
	for (int i = 0; i < n; i++) {
		json_t *d = mig_device(g, &inst[i]);

		apply_shares(d, o);
		json_array_append_new(devices, d);
	}
	return 0;
}

/* A slice object of the node's pool around `devices` (taken), as the driver's controller writes it.
 */
static json_t *slice_object(const struct nodehw *hw, const json_t *node, json_t *devices,
			    json_t *shared, int count, struct gs_warnings *warnings)
{
	const char *uid = kobj_string(node, "metadata.uid");
	char gen_name[512];
	json_t *meta, *slice;

	snprintf(gen_name, sizeof(gen_name), "%s-%s-", hw->name, DRASLICE_DRIVER);
	meta = json_pack("{s:s}", "generateName", gen_name);
	if (uid && *uid)
		json_object_set_new(meta, "ownerReferences",
				    json_pack("[{s:s, s:s, s:s, s:s, s:b}]", "apiVersion", "v1",
					      "kind", "Node", "name", hw->name, "uid", uid,
					      "controller", 1));
	else if (warnings)
		gs_warnings_add(warnings, "no metadata.uid: the slice has no ownerReference to "
					  "the Node (the apiserver's Node has one)");
	slice = json_pack("{s:s, s:s, s:o, s:{s:s, s:s, s:{s:s, s:i, s:i}}}", "apiVersion",
			  "resource.k8s.io/v1", "kind", "ResourceSlice", "metadata", meta, "spec",
			  "driver", DRASLICE_DRIVER, "nodeName", hw->name, "pool", "name", hw->name,
			  "generation", 1, "resourceSliceCount", count);
	/* NULL: a slice of counter sets alone (the split form). */
	if (devices)
		json_object_set_new(json_object_get(slice, "spec"), "devices", devices);
	if (shared)
		json_object_set_new(json_object_get(slice, "spec"), "sharedCounters", shared);
	return slice;
}

static void gpu_facts_init(struct gpu_facts *g, const struct nodehw *hw,
			   const struct catalog_gpu *model, int minor, const char *driver,
			   const char *cuda, int numa)
{
	memset(g, 0, sizeof(*g));
	g->numa = numa;
	g->model = model;
	g->minor = minor;
	g->driver_version = driver;
	g->cuda_version = cuda;
	draslice_gpu_uuid(hw->name, minor, g->uuid, sizeof(g->uuid));
	snprintf(g->bus_id, sizeof(g->bus_id), "%04x:%02x:00.0", (minor + 1) >> 8,
		 (minor + 1) & 0xff);
}

static int total_gpus(const struct nodehw *hw)
{
	int total = 0;

	for (size_t i = 0; i < hw->n_gpus; i++)
		total += hw->gpus[i].count;
	return total;
}

/* The warning when the apiserver would drop the consumable-shares fields. */
static void shares_dropped(const struct draslice_opts *o, struct gs_warnings *warnings)
{
	if (o && o->shares.mode != DRADRIVER_SHARES_DISABLED && !o->consumable_capacity)
		gs_warnings_add(
			warnings,
			"--consumable-shares: an apiserver without the "
			"DRAConsumableCapacity feature gate (off by default before 1.36) drops "
			"allowMultipleAllocations "
			"and requestPolicy silently; published as it keeps them (capacities "
			"without policy), so each device goes to one claim (--alpha-gates: the "
			"cluster has the gate)");
}

int draslice_build(const struct catalog *cat, const struct nodehw *hw, const json_t *node,
		   const struct ydoc_stream *src, json_t **out, struct gs_warnings *warnings,
		   struct gs_error *err)
{
	return draslice_build_with(cat, hw, node, src, NULL, out, warnings, err);
}

int draslice_build_with(const struct catalog *cat, const struct nodehw *hw, const json_t *node,
			const struct ydoc_stream *src, const struct draslice_opts *o, json_t **out,
			struct gs_warnings *warnings, struct gs_error *err)
{
	json_t *devices;
	char driver[32], cuda[32];
	int minor = 0, rc = -1, n_gpus = total_gpus(hw);
	int *numa = gs_xcalloc((size_t)n_gpus + 1, sizeof(*numa));

	*out = NULL;
	if (numa_nodes(node, src, hw->name, o, numa, n_gpus, warnings, err)) {
		free(numa);
		return -1;
	}
	shares_dropped(o, warnings);
	devices = json_array();
	semver(hw->driver_version, driver, sizeof(driver));
	snprintf(cuda, sizeof(cuda), "%d.%d.0", hw->cuda_major, hw->cuda_minor);
	for (size_t i = 0; i < hw->n_gpus; i++) {
		const struct catalog_gpu *model = hw->gpus[i].model;
		struct catalog_gpu_mig m = {0};

		if (model->mig && hw->mig_config &&
		    catalog_layout_apply(cat, hw->mig_config, model, &m, err)) {
			char msg[1024];

			gs_error_str(err, msg, sizeof(msg));
			ydoc_error_at_key(src, kobj_labels(node), NODEHW_LABEL_MIG_CONFIG, err,
					  "node '%s': %s", hw->name, msg);
			rc = DRASLICE_LAYOUT_FAILED;
			goto fail;
		}
		for (int c = 0; c < hw->gpus[i].count; c++, minor++) {
			struct gpu_facts g;

			gpu_facts_init(&g, hw, model, minor, driver, cuda, numa[minor]);
			if (m.result != CATALOG_APPLY_OK || !m.mig_enabled) {
				json_t *full = full_gpu(&g);

				apply_shares(full, o);
				json_array_append_new(devices, full);
				continue;
			}
			if (!m.n_devices) {
				gs_warnings_add(warnings,
						"GPU %d is in MIG mode with no MIG devices; the "
						"driver publishes nothing for it",
						minor);
				continue;
			}
			if (mig_devices(hw->name, &g, &m, devices, o, err)) {
				char msg[1024];

				gs_error_str(err, msg, sizeof(msg));
				ydoc_error_at_key(src, kobj_labels(node), NODEHW_LABEL_MIG_CONFIG,
						  err, "node '%s': %s", hw->name, msg);
				goto fail;
			}
		}
	}
	if (json_array_size(devices) > DRASLICE_MAX_DEVICES) {
		gs_error_set(err, "node '%s': %zu devices, more than one ResourceSlice holds (%d)",
			     hw->name, json_array_size(devices), DRASLICE_MAX_DEVICES);
		goto fail;
	}
	*out = slice_object(hw, node, jsonsort_by_member(devices, "name"), NULL, 1, warnings);
	free(numa);
	return 0;
fail:
	json_decref(devices);
	free(numa);
	return rc;
}

/* ---- dynamic MIG (driver gate DynamicMIG; docs/guide/dra.md "Dynamic MIG") ---- */

/* The capacities, in the driver's PartCapacities order of names. */
enum { CAP_SM, CAP_CE, CAP_DEC, CAP_ENC, CAP_JPG, CAP_OFA, CAP_MEM, N_CAPS };
static const char *const cap_names[N_CAPS] = {"multiprocessors", "copyEngines", "decoders",
					      "encoders",	 "jpegEngines", "ofaEngines",
					      "memory"};
/* camelToDNSName of each (partitions.go capacitiesToCounters, mig.go). */
static const char *const counter_names[N_CAPS] = {"multiprocessors", "copy-engines", "decoders",
						  "encoders",	     "jpeg-engines", "ofa-engines",
						  "memory"};

static void profile_caps(const struct catalog_mig_profile *p, long v[N_CAPS])
{
	v[CAP_SM] = p->multiprocessors;
	v[CAP_CE] = p->copy_engines;
	v[CAP_DEC] = p->decoders;
	v[CAP_ENC] = p->encoders;
	v[CAP_JPG] = p->jpeg;
	v[CAP_OFA] = p->ofa;
	v[CAP_MEM] = p->memory_mib;
}

/* A capacity or counter value: memory in bytes as a BinarySI quantity, the rest plain. */
static json_t *cap_value(int k, long v)
{
	return k == CAP_MEM ? mib_quantity(v) : count_quantity(v);
}

/* {capacity name: {value}} or {counter name: {value}} for `v`, plus memory-slice counters. */
static json_t *cap_map(const long v[N_CAPS], bool counters, int slice_start, int slice_n)
{
	json_t *m = json_object();

	for (int k = 0; k < N_CAPS; k++)
		json_object_set_new(m, counters ? counter_names[k] : cap_names[k],
				    cap_value(k, v[k]));
	for (int i = slice_start; counters && i < slice_start + slice_n; i++) {
		char name[32];

		snprintf(name, sizeof(name), "memory-slice-%d", i);
		json_object_set_new(m, name, count_quantity(1));
	}
	return m;
}

/*
 * The profiles the driver walks (nvlib.go inspectMigProfilesAndPlacements):
 * every GPU-instance profile with C == G, the media-extension ones
 * included (GI profile 1_SLICE_REV1 with CI profile 1_SLICE; only the CI
 * profile 1_SLICE_REV1 is skipped), each at every placement NVML offers.
 */
static bool dynamic_profile(const struct catalog_mig_profile *p)
{
	return p->ci_slices == p->gi_slices;
}

static json_t *consumes(const char *set, json_t *counters)
{
	return json_pack("[{s:s, s:o}]", "counterSet", set, "counters", counters);
}

/*
 * One GPU's slice in the dynamic form: its counter set (*shared), the full
 * GPU, every placement. NULL with err for a GPU that is not MIG-capable.
 */
static json_t *dynamic_gpu_devices(const char *node, const struct gpu_facts *g, json_t **shared,
				   const struct draslice_opts *o, struct gs_warnings *warnings,
				   struct gs_error *err)
{
	const struct catalog_migset *ms = g->model->mig;
	json_t *devices = json_array(), *full;
	long max[N_CAPS] = {0};
	int slices = 0;
	bool any = false;
	char set[64];

	snprintf(set, sizeof(set), "gpu-%d-counter-set", g->minor);
	for (size_t i = 0; ms && i < ms->n_profiles; i++) {
		const struct catalog_mig_profile *p = &ms->profiles[i];
		long v[N_CAPS];
		char pname[64];

		if (!dynamic_profile(p))
			continue;
		if (p->gi_profile_id < 0 || !p->n_placements) {
			gs_warnings_add(warnings,
					"GPU %d (%s): MIG profile '%s' has no GI profile id or "
					"placements in the catalog; its devices are left out",
					g->minor, g->model->name, p->name);
			continue;
		}
		profile_caps(p, v);
		draslice_profile_name(p->name, pname, sizeof(pname));
		for (int k = 0; k < N_CAPS; k++)
			if (v[k] > max[k])
				max[k] = v[k];
		if (p->placement_size > slices)
			slices = p->placement_size;
		any = true;
		for (int j = 0; j < p->n_placements; j++) {
			json_t *attrs = json_object(), *dev;
			char name[128];

			snprintf(name, sizeof(name), "gpu-%d-mig-%s-%d-%d", g->minor, pname,
				 p->gi_profile_id, p->placements[j]);
			/* PartAttributes: no uuid (the device does not exist yet). */
			attr_string(attrs, "type", "mig");
			attr_string(attrs, "parentUUID", g->uuid);
			attr_string(attrs, "profile", p->name);
			common_attrs(attrs, g);
			dev = json_pack("{s:s, s:o, s:o, s:o}", "name", name, "attributes", attrs,
					"capacity", cap_map(v, false, 0, 0), "consumesCounters",
					consumes(set, cap_map(v, true, p->placements[j],
							      p->placement_size)));
			apply_shares(dev, o);
			json_array_append_new(devices, dev);
		}
	}
	/* The full GPU: the per-capacity maximum over the profiles, every counter. */
	full = full_gpu(g);
	if (any) {
		json_object_set_new(full, "capacity", cap_map(max, false, 0, 0));
		json_object_set_new(full, "consumesCounters",
				    consumes(set, cap_map(max, true, 0, slices)));
		*shared = json_pack("[{s:s, s:o}]", "name", set, "counters",
				    cap_map(max, true, 0, slices));
	} else if (opts_driver(o)->dynamic_mig_plain_gpu) {
		/*
		 * v0.5.0 partitions.go: no MIG profile walked, so no counter set
		 * (PartSharedCounterSets, PartConsumesCounters return nil) and
		 * the NVML memory total as capacity (PartCapacities falls back
		 * to fullGpuCapacity).
		 */
	} else {
		/*
		 * Not MIG-capable: the driver walks no profile, so its maxima
		 * are empty: no capacity, and a counter set and consumption
		 * without counters (Go's omitempty drops the empty maps). The
		 * apiserver refuses that slice ("spec.sharedCounters[0].counters:
		 * Required value"), so the driver never publishes the node.
		 */
		gs_error_set(err,
			     "GPU %d (%s) is not MIG-capable: with DynamicMIG the driver "
			     "publishes it with an empty counter set, which the apiserver refuses "
			     "(spec.sharedCounters[0].counters: Required value); nothing is "
			     "published for the node",
			     g->minor, g->model->name);
		json_decref(full);
		json_decref(devices);
		return NULL;
	}
	(void)node;
	apply_shares(full, o);
	json_array_append_new(devices, full);
	return jsonsort_by_member(devices, "name");
}

int draslice_build_pool(const struct catalog *cat, const struct nodehw *hw, const json_t *node,
			const struct ydoc_stream *src, const struct draslice_opts *o, json_t **out,
			struct gs_warnings *warnings, struct gs_error *err)
{
	json_t *pool, *slice = NULL;
	char driver[32], cuda[32];
	int minor = 0, total = 0, r, *numa;

	*out = NULL;
	if (!o || !o->dynamic_mig) {
		r = draslice_build_with(cat, hw, node, src, o, &slice, warnings, err);
		if (r)
			return r;
		*out = json_pack("[o]", slice);
		return 0;
	}
	if (!o->partitionable) {
		gs_error_set(
			err,
			"node '%s': the DRA driver's DynamicMIG gate needs the apiserver's "
			"DRAPartitionableDevices feature gate: without it the apiserver drops "
			"sharedCounters and consumesCounters silently, and the scheduler would "
			"allocate overlapping MIG devices of one GPU (and the GPU itself) to "
			"different claims; nothing is published (start the cluster with "
			"GS_DRA_ALPHA=1, or leave DynamicMIG off)",
			hw->name);
		return DRASLICE_NEEDS_PARTITIONABLE;
	}
	/* Both releases' driver.go shouldUseSplitResourceSlices: server version >= 1.35.0. */
	const bool split = o->counters_apart;
	total = total_gpus(hw);
	numa = gs_xcalloc((size_t)total + 1, sizeof(*numa));
	if (numa_nodes(node, src, hw->name, o, numa, total, warnings, err)) {
		free(numa);
		return -1;
	}
	shares_dropped(o, warnings);
	if (hw->mig_config)
		gs_warnings_add(warnings,
				"%s=%s plays no part with DynamicMIG: the driver makes MIG devices "
				"when it prepares a claim",
				NODEHW_LABEL_MIG_CONFIG, hw->mig_config);
	semver(hw->driver_version, driver, sizeof(driver));
	snprintf(cuda, sizeof(cuda), "%d.%d.0", hw->cuda_major, hw->cuda_minor);
	pool = json_array();
	json_t *sets = split ? json_array() : NULL; /* every GPU's counter sets, split */
	for (size_t i = 0; i < hw->n_gpus; i++) {
		for (int c = 0; c < hw->gpus[i].count; c++, minor++) {
			struct gpu_facts g;
			json_t *shared = NULL, *devices;

			gpu_facts_init(&g, hw, hw->gpus[i].model, minor, driver, cuda, numa[minor]);
			devices = dynamic_gpu_devices(hw->name, &g, &shared, o, warnings, err);
			if (!devices) {
				gs_error_prefix(err, "node '%s': ", hw->name);
				json_decref(pool);
				json_decref(sets);
				free(numa);
				return -1;
			}
			if (json_array_size(devices) > DRASLICE_MAX_DEVICES) {
				gs_error_set(err,
					     "node '%s': GPU %d: %zu devices, more than one "
					     "ResourceSlice holds (%d)",
					     hw->name, minor, json_array_size(devices),
					     DRASLICE_MAX_DEVICES);
				json_decref(devices);
				json_decref(shared);
				json_decref(pool);
				json_decref(sets);
				free(numa);
				return -1;
			}
			if (split) {
				if (shared)
					json_array_extend(sets, shared);
				json_decref(shared);
				shared = NULL;
			}
			json_array_append_new(pool, slice_object(hw, node, devices, shared,
								 split ? total + 1 : total,
								 minor ? NULL : warnings));
		}
	}
	if (split) {
		/* The counter sets' slice goes first, as the driver emits it. */
		json_array_insert_new(pool, 0, slice_object(hw, node, NULL, sets, total + 1, NULL));
	}
	*out = pool;
	free(numa);
	return 0;
}

size_t draslice_pool_devices(const json_t *pool)
{
	size_t n = 0;

	for (size_t i = 0; i < json_array_size(pool); i++)
		n += json_array_size(kobj_get(json_array_get(pool, i), "spec.devices"));
	return n;
}

static json_t *device_class(const char *name, const char *type, const char *extended)
{
	char cel[256];
	json_t *c;

	snprintf(cel, sizeof(cel), "device.driver == '%s' && device.attributes['%s'].type == '%s'",
		 DRASLICE_DRIVER, DRASLICE_DRIVER, type);
	c = json_pack("{s:s, s:s, s:{s:s}, s:{s:[{s:{s:s}}]}}", "apiVersion", "resource.k8s.io/v1",
		      "kind", "DeviceClass", "metadata", "name", name, "spec", "selectors", "cel",
		      "expression", cel);
	if (extended)
		json_object_set_new(json_object_get(c, "spec"), "extendedResourceName",
				    json_string(extended));
	return c;
}

json_t *draslice_device_classes(int extended_resource)
{
	json_t *a = json_array();

	json_array_append_new(a, device_class("gpu.nvidia.com", "gpu",
					      extended_resource ? "nvidia.com/gpu" : NULL));
	json_array_append_new(a, device_class("mig.nvidia.com", "mig", NULL));
	return a;
}
