#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd/cmd.h"
#include "cmd/offline.h"
#include "fleet/fleet.h"
#include "model/dpconfig_set.h"
#include "dra/draalloc.h"
#include "dra/draprepare.h"
#include "model/kobj.h"
#include "dra/dratranslate.h"
#include "cmd/parseopt.h"
#include "base/strbuf.h"
#include "yaml/ydoc.h"
#include "base/banned.h"

static const char *const dra_lines[] = {
	"gpushare dra translate -f FILE|DIR|- [-f ...] [-R] [--configmap NS/NAME]",
	"gpushare dra prepare --slices SLICES.yaml [--driver-gates GATES] CLAIM.yaml...",
	"gpushare dra allocate --slices SLICES.yaml CLAIM.yaml...", NULL};
static const char *const translate_lines[] = {
	"gpushare dra translate -f FILE|DIR|- [-f ...] [-R] [--configmap NS/NAME] "
	"[--driver-gates GATES] [--driver-version V]",
	NULL};
static const char *const prepare_lines[] = {
	"gpushare dra prepare --slices SLICES.yaml [--driver-gates GATES] [--driver-version V] "
	"CLAIM.yaml...",
	NULL};
static const char *const allocate_lines[] = {
	"gpushare dra allocate --slices SLICES.yaml CLAIM.yaml...", NULL};

#define OPT_DRIVER_VERSION(v)                                                                      \
	OPT_STRING(0, "driver-version", (v), "V",                                                  \
		   "the DRA driver's release: v25.12.0 or v0.5.0 (default: v0.5.0,\n"              \
		   "the newest gpushare models)")

static const char *const dra_subcommands[] = {"translate", "prepare", "allocate", NULL};
static const struct parseopt_example dra_examples[] = {
	{"the DRA form of the lab", "gpushare dra translate -f k8s/"},
	{"what the DRA driver answers the kubelet for allocated claims",
	 "gpushare dra prepare --slices tests/golden/dra-prepare-default/slices.yaml "
	 "tests/golden/dra-prepare-default/claims.yaml"},
	{NULL, NULL},
};
static const struct parseopt_usage dra_usage = {
	"dra",
	dra_lines,
	"The DRA path (docs/guide/dra.md). Subcommands:\n"
	"  translate   the DRA form of a device-plugin ConfigMap, quotas and manifests\n"
	"  prepare     what NVIDIA's DRA driver would answer the kubelet for allocated claims\n"
	"  allocate    where the scheduler would allocate claims, consumable capacity included\n",
	NULL,
	dra_examples,
	dra_subcommands,
};

static const struct parseopt_example translate_examples[] = {
	{"the DRA form of the lab's ConfigMap, quota and pods", "gpushare dra translate -f k8s/"},
	{"judged against driver gates that allow time-slicing and MPS settings",
	 "gpushare dra translate -f k8s/ --driver-gates TimeSlicingSettings=true,MPSSupport=true"},
	{"straight into a cluster", "gpushare dra translate -f k8s/ | kubectl apply -f -"},
	{NULL, NULL},
};
static const struct parseopt_usage translate_usage = {
	"dra translate",
	translate_lines,
	"Print the DRA form (resource.k8s.io/v1, Kubernetes 1.34 without alpha gates,\n"
	"NVIDIA's DRA driver, --driver-version) of a device-plugin ConfigMap and of the\n"
	"manifests that rely on it: shared ResourceClaims instead of time-slicing and\n"
	"MPS replicas, ResourceClaimTemplates instead of nvidia.com/gpu and\n"
	"nvidia.com/mig-<profile> limits, <class>.deviceclass.resource.k8s.io/devices\n"
	"quotas, DRA-labelled gpushare nodes; other objects unchanged. The output is a\n"
	"YAML stream for `kubectl apply -f -`; comment lines under each item list what\n"
	"does not carry over and why (docs/guide/dra.md, \"Translate\"). The ConfigMap\n"
	"is the one --configmap names among the files; FILE... without -f is the same\n"
	"as -f each.\n",
	"exit status: 0 ok, 2 bad input or usage.\n",
	translate_examples,
	NULL,
};

static void print_error(const struct gs_error *err)
{
	char buf[2048];
	fprintf(stderr, "gpushare dra: %s\n", gs_error_str(err, buf, sizeof(buf)));
}

/* The release's default gates, then --driver-gates on them. */
static int driver_gates(const char *version, const char *spec, struct draprepare_gates *g,
			struct gs_error *err)
{
	const struct dradriver *d = dradriver_newest();

	if (version && !(d = dradriver_parse(version, err))) {
		gs_error_prefix(err, "--driver-version: ");
		return -1;
	}
	draprepare_gates_default_for(g, d);
	if (spec && draprepare_gates_parse(g, spec, err)) {
		gs_error_prefix(err, "--driver-gates: ");
		return -1;
	}
	return 0;
}

static int translate(int argc, char **argv)
{
	const char *gates_spec = NULL, *version = NULL;
	struct fleet_sources src = {0};
	struct configmap_ref cmref;
	struct option opts[] = {
		OPT_CALLBACK(0, "configmap", &cmref, "NS/NAME",
			     "the device-plugin ConfigMap among the files\n"
			     "[gpu-share/device-plugin-configs]; none there: the\n"
			     "device plugin's defaults",
			     parse_configmap_ref),
		OPT_STRING(0, "driver-gates", &gates_spec, "GATES",
			   "the DRA driver's feature gates the notes judge sharing settings\n"
			   "against, in its FEATURE_GATES syntax (default: the driver's own,\n"
			   "e.g. TimeSlicingSettings=true,MPSSupport=true)"),
		OPT_DRIVER_VERSION(&version),
		OPT_FLEET_SOURCES(&src),
		OPT_END(),
	};
	struct gs_error err;
	struct draprepare_gates gates;
	struct fleet f;
	const json_t *cm = NULL;
	json_t *obj;
	struct dpconfig_set *set = NULL;
	struct dratranslate *t = NULL;
	struct strbuf out = STRBUF_INIT;
	int rc = EXIT_USAGE, n;
	size_t i;

	configmap_ref_init(&cmref);
	fleet_init(&f);
	n = parse_options(argc, argv, opts, &translate_usage);
	if (n < 0) {
		rc = parseopt_exit(n);
		goto out;
	}
	gs_error_clear(&err);
	for (int a = 0; a < n; a++)
		fleet_sources_add(&src, argv[a]);
	if (!src.n) {
		gs_error_set(&err, "say what to translate: -f FILE|DIR|- (the ConfigMap and the "
				   "manifests)");
		rc = usage_error(&translate_usage, &err);
		goto out;
	}
	if (driver_gates(version, gates_spec, &gates, &err)) {
		rc = usage_error(&translate_usage, &err);
		goto out;
	}
	if (fleet_read(&f, &src, &err) < 0 ||
	    offline_configmap(&f, &cmref, "dra translate", true, &cm, &set, &err) < 0) {
		print_error(&err);
		goto out;
	}
	t = dratranslate_new(set, cm ? ydoc_stream_name(fleet_stream_of(&f, cm)) : NULL, cm,
			     &gates);
	json_array_foreach (f.all, i, obj)
		if (dratranslate_object(t, fleet_stream_of(&f, obj), obj, &err) < 0) {
			print_error(&err);
			goto out;
		}
	dratranslate_finish(t);
	if (dratranslate_yaml(t, &out, &err) < 0) {
		print_error(&err);
		goto out;
	}
	fwrite(out.buf, 1, out.len, stdout);
	rc = EXIT_OK;
out:
	strbuf_release(&out);
	dratranslate_free(t);
	dpconfig_set_free(set);
	fleet_release(&f);
	fleet_sources_release(&src);
	configmap_ref_release(&cmref);
	return rc;
}

static const struct parseopt_example prepare_examples[] = {
	{"prepare allocated claims with the driver's default gates",
	 "gpushare dra prepare --slices tests/golden/dra-prepare-default/slices.yaml "
	 "tests/golden/dra-prepare-default/claims.yaml"},
	{"with time-slicing settings allowed",
	 "gpushare dra prepare --driver-gates TimeSlicingSettings=true --slices "
	 "tests/golden/dra-prepare-timeslicing/slices.yaml "
	 "tests/golden/dra-prepare-timeslicing/claims.yaml"},
	{NULL, NULL},
};
static const struct parseopt_usage prepare_usage = {
	"dra prepare",
	prepare_lines,
	"For each allocated ResourceClaim in the files (kubectl get resourceclaim -o yaml),\n"
	"what NVIDIA's DRA driver (--driver-version) answers when the kubelet asks it to prepare\n"
	"the claim on a node that publishes SLICES (kubectl get resourceslices -o yaml, or\n"
	"gpushare advertise --dra): the devices and the sharing they get, or the Warning\n"
	"event FailedPrepareDynamicResources the pod would show\n"
	"(docs/guide/dra.md, \"Prepare\").\n",
	"exit status: 0 every claim prepared, 1 a claim refused, 2 bad input or usage.\n",
	prepare_examples,
	NULL,
};

/* Every object of a stream, Lists opened, into `out`. */
static void collect(const struct ydoc_stream *s, const char *kind, json_t *out)
{
	for (size_t i = 0; i < ydoc_stream_count(s); i++) {
		json_t *d = ydoc_stream_doc(s, i);
		const json_t *items = json_object_get(d, "items");
		if (json_is_array(items)) {
			for (size_t j = 0; j < json_array_size(items); j++)
				if (kobj_is(json_array_get(items, j), kind))
					json_array_append(out, json_array_get(items, j));
		} else if (kobj_is(d, kind)) {
			json_array_append(out, d);
		}
	}
}

/*
 * The ResourceSlices of --slices and the ResourceClaims of each CLAIM file,
 * appended to slices and claims (which hold their own references). Prints
 * what is wrong and returns -1; a CLAIM file without a claim is wrong.
 */
static int read_slices_and_claims(const char *slices_path, char **files, int n, json_t *slices,
				  json_t *claims)
{
	struct ydoc_stream *ss = NULL;
	struct gs_error err;

	if (ydoc_load_manifests(slices_path, &ydoc_default_limits, &ss, &err) < 0) {
		print_error(&err);
		return -1;
	}
	collect(ss, "ResourceSlice", slices);
	ydoc_stream_free(ss);
	for (int i = 0; i < n; i++) {
		struct ydoc_stream *cs = NULL;
		if (ydoc_load_manifests(files[i], &ydoc_default_limits, &cs, &err) < 0) {
			print_error(&err);
			return -1;
		}
		size_t before = json_array_size(claims);
		collect(cs, "ResourceClaim", claims);
		ydoc_stream_free(cs);
		if (json_array_size(claims) == before) {
			cmd_eprintf("error: %s: no ResourceClaim in the file\n", files[i]);
			return -1;
		}
	}
	return 0;
}

/*
 * What the driver reads of the slices for a claim is the first slice
 * (of gpu.nvidia.com) publishing each device it was given: found through
 * one index (device name -> that slice), not a search per claim.
 */
static json_t *first_slices(const json_t *slices)
{
	json_t *first = json_object(), *sl, *d;
	size_t i, k;

	json_array_foreach (slices, i, sl) {
		if (strcmp(kobj_text(sl, "spec.driver"), DRAPREPARE_DRIVER))
			continue;
		json_array_foreach (kobj_get(sl, "spec.devices"), k, d)
			if (!json_object_get(first, kobj_text(d, "name")))
				json_object_set_new(first, kobj_text(d, "name"),
						    json_integer((json_int_t)i));
	}
	return first;
}

static int cmp_index(const void *a, const void *b)
{
	size_t x = *(const size_t *)a, y = *(const size_t *)b;
	return x < y ? -1 : x > y;
}

/* The slices the claim's devices come first in, in their order: all the driver finds them in. */
static json_t *claim_slices(const json_t *claim, const json_t *slices, const json_t *first)
{
	const json_t *results = kobj_get(claim, "status.allocation.devices.results"), *r, *at;
	size_t *idx = gs_xcalloc(json_array_size(results) + 1, sizeof(size_t)), n = 0, i;
	json_t *out = json_array();

	json_array_foreach (results, i, r)
		if ((at = json_object_get(first, kobj_text(r, "device"))))
			idx[n++] = (size_t)json_integer_value(at);
	qsort(idx, n, sizeof(*idx), cmp_index);
	for (i = 0; i < n; i++)
		if (!i || idx[i] != idx[i - 1])
			json_array_append(out, json_array_get(slices, idx[i]));
	free(idx);
	return out;
}

static int prepare(int argc, char **argv)
{
	const char *slices_path = NULL, *gates_spec = NULL, *version = NULL;
	struct option opts[] = {
		OPT_STRING(0, "slices", &slices_path, "FILE",
			   "the node's ResourceSlices (a List, or documents)"),
		OPT_STRING(0, "driver-gates", &gates_spec, "GATES",
			   "the driver's feature gates, FEATURE_GATES syntax (default: the\n"
			   "driver's own, e.g. TimeSlicingSettings=true,MPSSupport=true)"),
		OPT_DRIVER_VERSION(&version),
		OPT_END(),
	};
	int n = parse_options(argc, argv, opts, &prepare_usage);
	struct gs_error err;
	struct draprepare_gates gates;
	json_t *slices = json_array(), *claims = json_array(), *first = NULL;
	int rc = EXIT_USAGE;

	if (n < 0) {
		json_decref(slices);
		json_decref(claims);
		return parseopt_exit(n);
	}
	gs_error_clear(&err);
	if (!slices_path || n == 0 || driver_gates(version, gates_spec, &gates, &err)) {
		if (!slices_path)
			gs_error_set(&err, "say which node's slices: --slices SLICES.yaml");
		else if (n == 0)
			gs_error_set(&err, "say which claims: CLAIM.yaml");
		json_decref(slices);
		json_decref(claims);
		return usage_error(&prepare_usage, &err);
	}
	if (read_slices_and_claims(slices_path, argv, n, slices, claims) < 0)
		goto out;
	rc = EXIT_OK;
	first = first_slices(slices);
	for (size_t i = 0; i < json_array_size(claims); i++) {
		const json_t *c = json_array_get(claims, i);
		struct draprepare_result r;
		json_t *mine = claim_slices(c, slices, first);
		int bad = draprepare_claim(c, mine, &gates, NULL, 0, &r, &err);
		json_decref(mine);
		if (bad) {
			print_error(&err);
			rc = EXIT_USAGE;
			break;
		}
		const char *ns = kobj_text(c, "metadata.namespace");
		cmd_printf("%s%s%s: %s\n", ns, *ns ? "/" : "", kobj_text(c, "metadata.name"),
			   r.outcome == DRAPREPARE_OK ? "prepared" : "refused");
		for (size_t d = 0; d < r.n_devices; d++) {
			const struct draprepare_device *dv = &r.devices[d];
			bool def = !strcmp(dv->config_source, "default");
			cmd_printf("  %s: %s (%s, %s), %s %s%s, %s%s%s%s\n", dv->request,
				   dv->device, dv->type, *dv->uuid ? dv->uuid : "no uuid",
				   def ? "the driver's default" : dv->config_source,
				   dv->config_kind, def ? "" : " config",
				   *dv->sharing ? "sharing " : "no sharing", dv->sharing,
				   *dv->interval ? ", interval " : "", dv->interval);
		}
		if (r.outcome != DRAPREPARE_OK) {
			cmd_printf("  Warning %s: %s\n", DRAPREPARE_EVENT_REASON, r.event_message);
			if (r.outcome == DRAPREPARE_CRASHED)
				cmd_printf("  (the driver's plugin panics on this claim: %s)\n",
					   r.step_error);
			if (rc == EXIT_OK)
				rc = EXIT_FINDING;
		}
		draprepare_result_release(&r);
	}
out:
	json_decref(first);
	json_decref(slices);
	json_decref(claims);
	return rc;
}

static const struct parseopt_example allocate_examples[] = {
	{"share devices with allowMultipleAllocations among claims",
	 "gpushare dra allocate --slices tests/golden/dra-allocate-shares/slices.yaml "
	 "tests/golden/dra-allocate-shares/claims.yaml"},
	{"claims that ask for memory capacity",
	 "gpushare dra allocate --slices tests/golden/dra-allocate-memory/slices.yaml "
	 "tests/golden/dra-allocate-memory/claims.yaml"},
	{NULL, NULL},
};
static const struct parseopt_usage allocate_usage = {
	"dra allocate",
	allocate_lines,
	"Allocate the ResourceClaims in the files, one after another, from the\n"
	"gpu.nvidia.com devices of SLICES as the scheduler's DRA allocator does with\n"
	"DRAConsumableCapacity (Kubernetes 1.34): a device with allowMultipleAllocations\n"
	"goes to several claims while its capacities last, each claim consuming its\n"
	"capacity.requests rounded up per the requestPolicy. Claims already allocated\n"
	"count as in use. Prints per claim where it goes, or the scheduler's words and\n"
	"why each device did not take it (docs/guide/dra.md, \"Allocation offline\").\n",
	"exit status: 0 every claim allocated, 1 a claim not, 2 bad input or usage.\n",
	allocate_examples,
	NULL,
};

static int allocate(int argc, char **argv)
{
	const char *slices_path = NULL;
	struct option opts[] = {
		OPT_STRING(0, "slices", &slices_path, "FILE",
			   "the nodes' ResourceSlices (a List, or documents)"),
		OPT_END(),
	};
	int n = parse_options(argc, argv, opts, &allocate_usage);
	struct gs_error err;
	json_t *slices = json_array(), *claims = json_array();
	struct draalloc *a = NULL;
	int rc = EXIT_USAGE;

	if (n < 0) {
		json_decref(slices);
		json_decref(claims);
		return parseopt_exit(n);
	}
	gs_error_clear(&err);
	if (!slices_path || n == 0) {
		gs_error_set(&err, !slices_path ? "say which slices: --slices SLICES.yaml"
						: "say which claims: CLAIM.yaml");
		json_decref(slices);
		json_decref(claims);
		return usage_error(&allocate_usage, &err);
	}
	if (read_slices_and_claims(slices_path, argv, n, slices, claims) < 0)
		goto out;
	a = draalloc_new(slices);
	for (size_t i = 0; i < json_array_size(claims); i++)
		if (kobj_map(json_array_get(claims, i), "status.allocation"))
			draalloc_take(a, json_array_get(claims, i));
	rc = EXIT_OK;
	for (size_t i = 0; i < json_array_size(claims); i++) {
		const json_t *c = json_array_get(claims, i);
		const char *ns = kobj_text(c, "metadata.namespace");
		struct draalloc_result r;

		if (kobj_map(c, "status.allocation"))
			continue;
		if (draalloc_claim(a, c, &r, &err) < 0) {
			print_error(&err);
			rc = EXIT_USAGE;
			break;
		}
		cmd_printf("%s%s%s: ", ns, *ns ? "/" : "", kobj_text(c, "metadata.name"));
		if (r.outcome == DRAALLOC_ALLOCATED) {
			const json_t *res = kobj_get(r.allocation, "devices.results");
			cmd_printf("allocated on %s\n", r.node);
			for (size_t d = 0; d < json_array_size(res); d++) {
				const json_t *x = json_array_get(res, d);
				const char *k;
				json_t *v;
				cmd_printf("  %s: %s", kobj_text(x, "request"),
					   kobj_text(x, "device"));
				if (kobj_string(x, "shareID"))
					cmd_printf(", shareID %s, consumedCapacity",
						   kobj_text(x, "shareID"));
				json_object_foreach (json_object_get(x, "consumedCapacity"), k, v)
					cmd_printf(" %s=%s", k, json_string_value(v));
				cmd_printf("\n");
			}
		} else {
			const char *what = r.outcome == DRAALLOC_UNSCHEDULABLE ? "not allocated"
					   : r.outcome == DRAALLOC_NOT_JUDGED  ? "not judged"
									       : "allocator error";
			/* one line each: the first the scheduler's, then why per device */
			const char *p = r.why;
			for (int line = 0; *p || !line; line++) {
				const char *nl = strchr(p, '\n');
				int len = nl ? (int)(nl - p) : (int)strlen(p);
				if (!line)
					cmd_printf("%s: %.*s\n", what, len, p);
				else
					cmd_printf("  %.*s\n", len, p);
				p += len + (nl ? 1 : 0);
			}
			if (rc == EXIT_OK)
				rc = EXIT_FINDING;
		}
		draalloc_result_release(&r);
	}
out:
	draalloc_free(a);
	json_decref(slices);
	json_decref(claims);
	return rc;
}

int cmd_dra(int argc, char **argv)
{
	if (argc >= 2 && !strcmp(argv[1], "allocate"))
		return allocate(argc - 1, argv + 1);
	if (argc >= 2 && !strcmp(argv[1], "translate"))
		return translate(argc - 1, argv + 1);
	if (argc >= 2 && !strcmp(argv[1], "prepare"))
		return prepare(argc - 1, argv + 1);
	struct option opts[] = {OPT_END()};
	int n = parse_options(argc, argv, opts, &dra_usage);
	struct gs_error err;
	if (n < 0)
		return parseopt_exit(n);
	if (n == 0)
		gs_error_set(&err, "say which subcommand: translate, prepare, allocate");
	else
		gs_error_set(&err, "'%s' is not a dra subcommand; see 'gpushare dra --help'",
			     argv[0]);
	return usage_error(&dra_usage, &err);
}
