#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd.h"
#include "dpconfig_set.h"
#include "draprepare.h"
#include "dratranslate.h"
#include "parseopt.h"
#include "strbuf.h"
#include "ydoc.h"
#include "banned.h"

static const char *const dra_lines[] = {"gpushare dra translate --configmap CM.yaml [MANIFEST...]",
					NULL};

static const struct parseopt_usage dra_usage = {
	"dra",
	dra_lines,
	"The DRA path (docs/dra.md). Subcommands:\n"
	"  translate   the DRA form of a device-plugin ConfigMap, quotas and manifests\n",
	NULL,
};

static const struct parseopt_usage translate_usage = {
	"dra translate",
	dra_lines,
	"Print the DRA form (resource.k8s.io/v1, Kubernetes 1.34 without alpha gates,\n"
	"NVIDIA's DRA driver v25.12.0) of a device-plugin ConfigMap and of the\n"
	"manifests that rely on it: shared ResourceClaims instead of time-slicing and\n"
	"MPS replicas, ResourceClaimTemplates instead of nvidia.com/gpu and\n"
	"nvidia.com/mig-<profile> limits, <class>.deviceclass.resource.k8s.io/devices\n"
	"quotas, DRA-labelled gpushare nodes; other objects unchanged. The output is a\n"
	"YAML stream for `kubectl apply -f -`; comment lines under each item list what\n"
	"does not carry over and why (docs/dra.md, \"Translate\").\n",
	"exit status: 0 ok, 2 bad input or usage.\n",
};

static void print_error(const struct gs_error *err)
{
	char buf[2048];
	fprintf(stderr, "error: %s\n", gs_error_str(err, buf, sizeof(buf)));
}

static int translate(int argc, char **argv)
{
	const char *cm_path = NULL, *gates_spec = NULL;
	struct option opts[] = {
		OPT_STRING(0, "configmap", &cm_path, "FILE",
			   "the device-plugin ConfigMap (one per file), as for lint"),
		OPT_STRING(0, "driver-gates", &gates_spec, "GATES",
			   "the DRA driver's feature gates the notes judge sharing settings\n"
			   "against, in its FEATURE_GATES syntax (default: the driver's own,\n"
			   "e.g. TimeSlicingSettings=true,MPSSupport=true)"),
		OPT_END(),
	};
	int n = parse_options(argc, argv, opts, &translate_usage);
	struct gs_error err;
	struct draprepare_gates gates;
	struct ydoc_stream *cs = NULL;
	const json_t *cm = NULL;
	struct dpconfig_set *set = NULL;
	struct dratranslate *t = NULL;
	struct strbuf out = STRBUF_INIT;
	int rc = EXIT_USAGE;

	if (n < 0)
		return parseopt_exit(n);
	gs_error_clear(&err);
	if (!cm_path) {
		gs_error_set(&err, "say which ConfigMap: --configmap CM.yaml");
		return usage_error(&translate_usage, &err);
	}
	draprepare_gates_default(&gates);
	if (gates_spec && draprepare_gates_parse(&gates, gates_spec, &err)) {
		gs_error_prefix(&err, "--driver-gates: ");
		return usage_error(&translate_usage, &err);
	}
	if (dpconfig_set_load_file(cm_path, &cs, &cm, &set, &err) < 0) {
		print_error(&err);
		goto out;
	}
	t = dratranslate_new(set, cm_path, cm, &gates);
	for (int i = 0; i < n; i++) {
		struct ydoc_stream *s = NULL;
		if (ydoc_load_file(argv[i], &ydoc_default_limits, &s, &err) < 0 ||
		    dratranslate_stream(t, s, &err) < 0) {
			ydoc_stream_free(s);
			print_error(&err);
			goto out;
		}
		ydoc_stream_free(s);
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
	ydoc_stream_free(cs);
	return rc;
}

int cmd_dra(int argc, char **argv)
{
	if (argc >= 2 && !strcmp(argv[1], "translate"))
		return translate(argc - 1, argv + 1);
	struct option opts[] = {OPT_END()};
	int n = parse_options(argc, argv, opts, &dra_usage);
	struct gs_error err;
	if (n < 0)
		return parseopt_exit(n);
	if (n == 0)
		gs_error_set(&err, "say which subcommand: translate");
	else
		gs_error_set(&err, "'%s' is not a dra subcommand; see 'gpushare dra --help'",
			     argv[0]);
	return usage_error(&dra_usage, &err);
}
