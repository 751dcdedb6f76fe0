#ifndef GS_CATALOG_H
#define GS_CATALOG_H

#include <stdbool.h>
#include <stddef.h>

#include "base/error.h"

/*
 * What gpushare knows about NVIDIA GPUs: models (by the name NVML reports),
 * their memory and compute capability, MIG geometry and profiles, and
 * mig-parted's named layouts (k8s-device-plugin v0.20.0 internal/lm/resource.go; NVIDIA MIG User
 * Guide). The data is one table, data/gpus.tab, embedded at build time.
 *
 * Everything returned is borrowed from the catalog and lives as long as it.
 */

struct catalog;

/* One GPU-instance profile of a MIG geometry (NVIDIA MIG User Guide (Supported MIG Profiles)). */
struct catalog_mig_profile {
	const char *name;    /* as NVML names it: "1g.10gb", "1g.10gb+me" */
	int instances;	     /* max instances on one GPU */
	int memory_mib;	     /* the nvidia.com/mig-*.memory label value */
	int multiprocessors; /* SMs */
	int gi_slices;
	int ci_slices;
	int copy_engines;
	int decoders;
	int encoders;
	int jpeg;
	int ofa;
	const char *source; /* provenance of memory/SM/engines: spec, obs, lgip, mock, est */
	/*
	 * From the table's `gip` record (NVIDIA's DRA driver names MIG devices
	 * by them): the GPU-instance profile id nvidia-smi mig -lgip shows,
	 * -1 when the table has none; the memory slices one instance covers
	 * and the placement starts NVML offers, in slice units.
	 */
	int gi_profile_id;
	int placement_size;
	int placements[8];
	int n_placements;
	const char *gip_source;
};

struct catalog_migset {
	const char *id;
	int compute_slices; /* 7, or 4 on A30 / RTX PRO */
	int memory_slices;
	const struct catalog_mig_profile *profiles;
	size_t n_profiles;
};

/* One model as one driver generation names it. */
struct catalog_gpu {
	const char *name;     /* NVML name: "NVIDIA A100-SXM4-80GB", "Tesla T4" */
	const char *label;    /* sanitized for labels: "NVIDIA-A100-SXM4-80GB" */
	unsigned long pci_id; /* device id as in device-filters: 0x20B210DE */
	int cc_major;
	int cc_minor;
	int memory_mib; /* nvidia.com/gpu.memory */
	const char *source;
	const struct catalog_migset *mig; /* NULL: not MIG-capable */
};

/* A profile and how many instances of it, in a layout or on a GPU. */
struct catalog_mig_count {
	const char *profile;
	int count;
};

/* One entry of a mig-parted named config (mig-parted v0.15.0 api/spec/v1/spec.go); devices are
 * always `all`. */
struct catalog_layout_entry {
	const unsigned long *filter; /* PCI ids; n_filter == 0 means no device-filter */
	size_t n_filter;
	bool mig_enabled;
	const struct catalog_mig_count *devices;
	size_t n_devices;
};

struct catalog_layout {
	const char *name;
	const struct catalog_layout_entry *entries;
	size_t n_entries;
};

/* The one mig-parted release every layout of the table comes from. */
struct catalog_release {
	const char *project; /* "mig-parted" */
	const char *version; /* "v0.15.0" */
	const char *commit;  /* the tag's commit */
	const char
		*file; /* the config in that release: "deployments/systemd/config-default.yaml" */
};

/* The embedded table, parsed on first use. Fails only if the build embedded a broken table. */
int catalog_builtin(const struct catalog **out, struct gs_error *err) GS_WUR;

/* Parse a table in data/gpus.tab's format; `name` labels errors (name:line:col). */
int catalog_parse(const char *name, const char *text, size_t len, struct catalog **out,
		  struct gs_error *err) GS_WUR;
void catalog_free(struct catalog *cat);

size_t catalog_gpu_count(const struct catalog *cat);
const struct catalog_gpu *catalog_gpu_at(const struct catalog *cat, size_t i);

/*
 * A model by its NVML name ("NVIDIA A100-SXM4-80GB"), its label form
 * ("NVIDIA-A100-SXM4-80GB") or an old driver's name ("A100-SXM4-40GB").
 * Case and runs of blanks do not matter. NULL when unknown.
 */
const struct catalog_gpu *catalog_find_gpu(const struct catalog *cat, const char *name);

/* A profile of this GPU by NVML name ("1g.10gb+me"); NULL when the GPU lacks it. */
const struct catalog_mig_profile *catalog_gpu_profile(const struct catalog_gpu *gpu,
						      const char *profile);

const struct catalog_layout *catalog_find_layout(const struct catalog *cat, const char *name);
/* Layouts in table order (each name once). */
size_t catalog_layout_count(const struct catalog *cat);
const struct catalog_layout *catalog_layout_at(const struct catalog *cat, size_t i);
/* The release the layouts come from; NULL for a table without layouts. */
const struct catalog_release *catalog_release(const struct catalog *cat);

/* What a layout does to one GPU. */
enum catalog_apply {
	CATALOG_APPLY_OK,	/* an entry matched; mig_enabled and devices are set */
	CATALOG_APPLY_NO_MATCH, /* every entry has a device-filter and none fits: GPU left as is */
	CATALOG_APPLY_NOT_CAPABLE, /* not MIG-capable: `devices: all` entries skip it, left as is */
};

struct catalog_gpu_mig {
	enum catalog_apply result;
	bool mig_enabled;
	bool generated; /* layout not in the static table; built by the generated-config rule */
	struct catalog_mig_count devices[8];
	size_t n_devices;
};

/*
 * Apply the named layout to one GPU as mig-parted's apply would (mig-parted v0.15.0
 * api/spec/v1/spec.go, deployments/systemd/config-default.yaml,
 * cmd/nvidia-mig-parted/apply/config.go): the entries are walked in order and
 * each one whose device-filter matches is applied, so the last match is what
 * the GPU ends with; a GPU no entry matches, or one that is not MIG-capable
 * (every entry says `devices: all`), is left as it is. A name missing from
 * the static table but of the form all-<profile> is built with the
 * generated-config rule (that profile at its max count), flagged in
 * out->generated. Fails as mig-manager would (state `failed`): unknown
 * layout, a profile the GPU lacks, more instances or slices than fit.
 */
int catalog_layout_apply(const struct catalog *cat, const char *layout_name,
			 const struct catalog_gpu *gpu, struct catalog_gpu_mig *out,
			 struct gs_error *err) GS_WUR;

/*
 * True when the named layout configures this GPU: mig-parted applies one of
 * its entries (the device-filter lets the GPU in) and it fits. False for a
 * GPU that is not MIG-capable.
 */
bool catalog_layout_fits(const struct catalog *cat, const char *layout_name,
			 const struct catalog_gpu *gpu);

/*
 * What to say after a name the catalog lacks, appended to out (base/didyoumean.h):
 *
 * catalog_gpu_hint: "; did you mean 'NAME'?" among the models whose label
 * form holds `name` ("H100"), else the nearest (with or without the
 * "NVIDIA-" vendor), then " (see 'gpushare catalog')".
 *
 * catalog_layout_hint: among the layouts that fit `gpu` (every layout when
 * gpu is NULL), then where to see them.
 *
 * catalog_profile_hint: among the MIG profiles of `gpu` (of every model when
 * NULL), by NVML name or, with resource_form, as resource names write them
 * ("1g.10gb.me"); then the choices, or where to see them.
 */
void catalog_gpu_hint(const struct catalog *cat, const char *name, struct strbuf *out);
void catalog_layout_hint(const struct catalog *cat, const char *name, const struct catalog_gpu *gpu,
			 struct strbuf *out);
void catalog_profile_hint(const struct catalog *cat, const struct catalog_gpu *gpu,
			  const char *name, bool resource_form, struct strbuf *out);

/* GFD's sanitize rule (k8s-device-plugin v0.20.0 internal/lm/resource.go): keep [A-Za-z0-9-_. ],
 * blanks runs become '-'. */
void catalog_sanitize(const char *in, char *out, size_t size);
/* The nvidia.com/gpu.family value for a compute capability (k8s-device-plugin v0.20.0
 * internal/lm/resource.go). */
const char *catalog_family(int cc_major, int cc_minor);
/* The resource/label name part of a profile: '+' becomes '.' ("1g.10gb.me"). */
void catalog_profile_resource(const char *profile, char *out, size_t size);

#endif
