#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cmd/cmd.h"
#include "cmd/kubecontext.h"
#include "cmd/output.h"
#include "cmd/parseopt.h"
#include "engine/health.h"
#include "engine/kubeletrestart.h"
#include "engine/mergepatch.h"
#include "model/catalog.h"
#include "model/kobj.h"
#include "model/names.h"
#include "model/nodehw.h"
#include "base/strbuf.h"
#include "base/wrapper.h"
#include "base/banned.h"

/*
 * gpushare fault: declare GPU health faults on a node (docs/guide/faults.md). It
 * writes only the node's gpushare.io/gpu-health or
 * gpushare.io/device-plugin-restarted-at annotation (one merge patch of the
 * Node); `gpushare controller` plays what the device plugin or the DRA
 * driver then does. `fault mig` writes nvidia.com/mig.config and the
 * gpushare.io/mig-* declarations; the controller walks it as mig-manager.
 */

static const char *const usage_lines[] = {
	"gpushare fault gpu NODE INDEX=xid:N|INDEX=xid:N/GI/CI|INDEX=lost... [options]",
	"gpushare fault clear NODE [INDEX...] [options]",
	"gpushare fault restart-plugin NODE [options]",
	"gpushare fault mig NODE [--config LAYOUT] [--stall|--fail|--no-fault] [--seconds N] "
	"[options]",
	"gpushare fault kubelet NODE --restart|--reboot|--clear [--seconds N] [options]",
	NULL,
};

static const char *const fault_subcommands[] = {"gpu", "clear",	  "restart-plugin",
						"mig", "kubelet", NULL};
static const struct parseopt_example fault_examples[] = {
	{"an Xid 79 (GPU fallen off the bus) on GPU 0 of lab-node-1, in the cluster in KUBECONFIG",
	 "gpushare fault gpu lab-node-1 0=xid:79"},
	{"a new MIG layout, walked by mig-manager in 30 seconds",
	 "gpushare fault mig lab-node-2 --config all-3g.40gb --seconds 30"},
	{"the same, wedged as mig-parted#485 (state pending, nvidia.com/gpu 0); --no-fault ends it",
	 "gpushare fault mig lab-node-2 --config all-1g.10gb --stall"},
	{"reboot lab-node-1: NotReady and no GPUs for 90 s, its GPU pods fail re-admission",
	 "gpushare fault kubelet lab-node-1 --reboot --seconds 90"},
	{NULL, NULL},
};
static const struct parseopt_usage fault_usage = {
	"fault",
	usage_lines,
	"Declare what NVML would report on a fake GPU node, in its annotation\n"
	"gpushare.io/gpu-health (GPU index = the GPU's minor):\n"
	"  gpu            add or replace faults: an Xid critical error (xid:79; xid:N/GI/CI\n"
	"                 for one MIG instance), or a GPU lost (lost)\n"
	"  clear          remove the faults of the GPUs named, or every fault\n"
	"  restart-plugin stamp gpushare.io/device-plugin-restarted-at with now, as\n"
	"                 `kubectl rollout restart` would restart the plugin: devices\n"
	"                 no longer declared unhealthy come back\n"
	"  mig            change nvidia.com/mig.config as a person would, and declare how\n"
	"                 mig-manager's walk goes: --stall (pending forever, the\n"
	"                 mig-parted#485 wedge), --fail (the apply fails), --no-fault\n"
	"                 (it completes), --seconds (how long it takes, default 5)\n"
	"  kubelet        the kubelet restarts (--restart) or the node reboots (--reboot)\n"
	"                 now: NotReady and every device-plugin resource at 0 until the\n"
	"                 plugin registers --seconds later (10 / 60); pods bound meanwhile\n"
	"                 fail UnexpectedAdmissionError, running ones keep their devices\n"
	"                 (restart) or fail re-admission (reboot); --clear removes it\n"
	"The device plugin marks one device per GPU unhealthy (one replica under\n"
	"time-slicing) and never recovers until restarted; the DRA driver taints the\n"
	"device (docs/guide/faults.md); `gpushare controller` walks a MIG change as\n"
	"k8s-mig-manager does (docs/guide/faults.md \"MIG reconfiguration\").\n",
	"Exit status: 0 written (or nothing to change), 2 bad usage, a node that\n"
	"cannot be read or written. GPUSHARE_NOW=SECONDS fixes the time restart-plugin\n"
	"and kubelet write.\n",
	fault_examples,
	fault_subcommands,
};

enum fault_verb { FAULT_GPU, FAULT_CLEAR, FAULT_RESTART };

/* A node name as a path segment: a DNS subdomain (RFC 1123), nothing else. */
static int node_name_ok(const char *s)
{
	size_t n = strlen(s);

	if (!n || n > 253)
		return 0;
	for (const char *p = s; *p; p++)
		if (!((*p >= 'a' && *p <= 'z') || (*p >= '0' && *p <= '9') || *p == '-' ||
		      *p == '.'))
			return 0;
	return 1;
}

/* The faults named on the command line, one entry per argument. */
static int parse_args(char **args, int n, struct health_faults *out, struct gs_error *err)
{
	memset(out, 0, sizeof(*out));
	for (int i = 0; i < n; i++) {
		struct health_faults one;
		struct gs_error e;
		size_t col;

		if (health_parse(args[i], &one, &col, &e) < 0 || one.n != 1) {
			if (one.n > 1 || (!col && !*args[i]))
				gs_error_set(&e, "one entry per argument");
			health_faults_release(&one);
			gs_error_set(err, "argument '%s': %s", args[i], e.msg);
			health_faults_release(out);
			return -1;
		}
		out->items = gs_xrealloc(out->items, (out->n + 1) * sizeof(*out->items));
		out->items[out->n++] = one.items[0];
		health_faults_release(&one);
	}
	return 0;
}

static int parse_indexes(char **args, int n, int *idx, struct gs_error *err)
{
	for (int i = 0; i < n; i++) {
		char *end;
		long v = strtol(args[i], &end, 10);
		if (!*args[i] || *end || v < 0 || v > 255 || args[i][0] == '+' ||
		    args[i][0] == '-') {
			gs_error_set(err, "argument '%s': expected a GPU index (0-255)", args[i]);
			return -1;
		}
		idx[i] = (int)v;
	}
	return 0;
}

static void rfc3339_now(char *out, size_t size)
{
	const char *fixed = getenv("GPUSHARE_NOW");
	time_t t = fixed ? (time_t)strtoll(fixed, NULL, 10) : time(NULL);
	struct tm tm;

	gmtime_r(&t, &tm);
	strftime(out, size, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

/*
 * The annotation value after `verb` (malloc'd; NULL = remove it), from the
 * node as it is. Fails when the node declares no GPUs, names an index it
 * lacks, or holds a value the verb cannot build on.
 */
static int next_value(enum fault_verb verb, const json_t *node, const char *name,
		      const struct health_faults *add, const int *idx, int n_idx, char **value,
		      struct gs_error *err)
{
	const struct catalog *cat;
	struct nodehw *hw = NULL;
	struct gs_warnings w;
	struct health_faults cur;
	int rc = -1;

	*value = NULL;
	gs_warnings_init(&w);
	if (verb == FAULT_RESTART) {
		char ts[32];
		rfc3339_now(ts, sizeof(ts));
		*value = gs_xstrdup(ts);
		return 0;
	}
	if (verb == FAULT_CLEAR && !n_idx)
		return 0;
	if (catalog_builtin(&cat, err) < 0 || nodehw_from_node(cat, node, NULL, &hw, &w, err) < 0)
		goto out;
	if (!hw->total) {
		gs_error_set(err, "node '%s' declares no GPUs (annotation " NODEHW_ANN_PRODUCT ")",
			     name);
		goto out;
	}
	if (health_from_node(node, name, hw->total, NULL, &cur, err) < 0) {
		char msg[2048];
		gs_error_str(err, msg, sizeof(msg));
		gs_error_set(err, "%s; 'gpushare fault clear %s' removes every fault", msg, name);
		goto out;
	}
	for (size_t i = 0; verb == FAULT_GPU && i < add->n; i++) {
		const struct health_fault *f = &add->items[i];
		size_t k;
		if (f->gpu >= hw->total) {
			gs_error_set(err, "node '%s' has no GPU %d (it declares %d: 0-%d)", name,
				     f->gpu, hw->total, hw->total - 1);
			health_faults_release(&cur);
			goto out;
		}
		for (k = 0; k < cur.n; k++)
			if (cur.items[k].gpu == f->gpu && cur.items[k].gi == f->gi &&
			    cur.items[k].ci == f->ci)
				break;
		if (k == cur.n) {
			cur.items = gs_xrealloc(cur.items, (cur.n + 1) * sizeof(*cur.items));
			cur.n++;
		}
		cur.items[k] = *f;
	}
	if (verb == FAULT_CLEAR) {
		size_t keep = 0;
		for (size_t i = 0; i < cur.n; i++) {
			int drop = 0;
			for (int j = 0; j < n_idx; j++)
				drop |= cur.items[i].gpu == idx[j];
			if (!drop)
				cur.items[keep++] = cur.items[i];
		}
		cur.n = keep;
	}
	*value = cur.n ? health_format(&cur) : NULL;
	health_faults_release(&cur);
	rc = 0;
out:
	nodehw_free(hw);
	gs_warnings_release(&w);
	return rc;
}

/* What every verb takes besides its own options: --dry-run, -o, the connection. */
struct fault_common {
	struct kube_context kx;
	enum output_format format;
	bool dry_run;
};

/* The options of struct fault_common, last in every verb's table. */
#define OPT_FAULT_COMMON(c)                                                                        \
	OPT_BOOL(0, "dry-run", &(c)->dry_run, "print the patch, write nothing"),                   \
		OPT_OUTPUT(&(c)->format, OUTPUT_TABLES,                                            \
			   "table (default), json or yaml (kind FaultResult)"),                    \
		OPT_KUBE_CONNECTION(&(c)->kx.opts)

/*
 * A verb's command line parsed with opts, its first positional the node
 * (argv[0] after parsing). A verb taking no more positionals passes
 * no_more, and `hint` ends the message naming one (may be ""). Returns how
 * many positionals follow the node, or -1 after saying what is wrong, *rc
 * the exit status.
 */
static int parse_node_args(int argc, char **argv, const struct option *opts, bool no_more,
			   const char *hint, int *rc)
{
	struct gs_error err;
	int n = parse_options(argc, argv, opts, &fault_usage);

	if (n < 0) {
		*rc = parseopt_exit(n);
		return -1;
	}
	if (n < 1)
		gs_error_set(&err, "say which node");
	else if (!node_name_ok(argv[0]))
		gs_error_set(&err, "'%s' is not a node name", argv[0]);
	else if (no_more && n > 1)
		gs_error_set(&err, "unexpected argument '%s'%s", argv[1], hint);
	else
		return n - 1;
	*rc = usage_error(&fault_usage, &err);
	return -1;
}

/*
 * The dry run announced, the cluster opened and node `name` read into
 * *node; *path its API path (caller frees both, also on failure). -1 after
 * printing why.
 */
static int read_node(struct fault_common *c, const char *name, char **path, json_t **node)
{
	struct gs_error err;
	char buf[2048];

	if (c->dry_run)
		fprintf(stderr, "gpushare fault: dry run: nothing will be written\n");
	if (kube_context_open(&c->kx, "fault", &err) < 0) {
		fprintf(stderr, "gpushare fault: %s\n", gs_error_str(&err, buf, sizeof(buf)));
		return -1;
	}
	*path = gs_xasprintf("/api/v1/nodes/%s", name);
	if (kube_get(c->kx.client, *path, node, &err) < 0) {
		cmd_eprintf("gpushare fault: %s\n", gs_error_str(&err, buf, sizeof(buf)));
		return -1;
	}
	return 0;
}

/* The merge patch of the node sent, unless a dry run. -1 after printing why. */
static int write_patch(struct fault_common *c, const char *path, const char *name, json_t *patch)
{
	struct gs_error err;
	char buf[2048];

	if (c->dry_run || kube_patch(c->kx.client, path, KUBE_PATCH_MERGE, patch, NULL, &err) >= 0)
		return 0;
	cmd_eprintf("gpushare fault: node '%s': %s\n", name, gs_error_str(&err, buf, sizeof(buf)));
	return -1;
}

/* The FaultResult document of o in c->format (o borrowed). -1 after printing why. */
static int print_result(const struct fault_common *c, json_t *o)
{
	struct gs_error err;
	char buf[2048];
	json_t *doc = output_stamp(o, "FaultResult");
	int r = output_print(doc, c->format, JSON_SORT_KEYS, &err);

	json_decref(doc);
	if (r < 0)
		cmd_eprintf("gpushare fault: %s\n", gs_error_str(&err, buf, sizeof(buf)));
	return r;
}

/* Whether a value stays as it is (NULL: absent). */
static bool unchanged(const char *before, const char *after)
{
	return (!before && !after) || (before && after && !strcmp(before, after));
}

/* One table line: the key's value before and after. */
static void print_change(const char *name, const char *key, const char *before, const char *after,
			 bool same, bool dry_run)
{
	cmd_printf("%s: %s \"%s\" -> %s%s%s%s\n", name, key, before ? before : "",
		   after ? "\"" : "(removed)", after ? after : "", after ? "\"" : "",
		   same	     ? " (unchanged)"
		   : dry_run ? " (dry run)"
			     : "");
}

/* A dry run's patch, after the table lines. */
static void print_dry_patch(bool dry_run, const json_t *patch)
{
	if (dry_run && patch) {
		char *s = json_dumps(patch, JSON_INDENT(2) | JSON_SORT_KEYS);
		puts(s);
		free(s);
	}
}

/*
 * A one-annotation verb's write (gpu, clear, restart-plugin, kubelet):
 * annotation `key` of node to `value` (NULL: removed). *before is its
 * value now (borrowed from node); *patch the merge patch sent, NULL when
 * nothing changes. -1 after printing why.
 */
static int set_annotation(struct fault_common *c, const char *path, const char *name,
			  const json_t *node, const char *key, const char *value,
			  const char **before, json_t **patch)
{
	*before = kobj_annotation(node, key);
	*patch = NULL;
	if (unchanged(*before, value))
		return 0;
	*patch = json_pack("{s:{s:{s:o}}}", "metadata", "annotations", key,
			   value ? json_string(value) : json_null());
	return write_patch(c, path, name, *patch);
}

/* What set_annotation did: a FaultResult, or the table line. -1 after printing why. */
static int print_annotation(const struct fault_common *c, const char *name, const char *key,
			    const char *before, const char *value, json_t *patch)
{
	json_t *o;
	int r;

	if (!output_is_doc(c->format)) {
		print_change(name, key, before, value, !patch, c->dry_run);
		print_dry_patch(c->dry_run, patch);
		return 0;
	}
	o = json_pack("{s:s,s:s,s:s?,s:s?,s:O?,s:b,s:b}", "node", name, "annotation", key, "before",
		      before, "after", value, "patch", patch, "changed", patch != NULL, "dryRun",
		      c->dry_run);
	r = print_result(c, o);
	json_decref(o);
	return r;
}

static int run(enum fault_verb verb, int argc, char **argv)
{
	struct fault_common c = {.format = OUTPUT_TABLE};
	const char *name;
	const char *key = verb == FAULT_RESTART ? NODEHW_ANN_RESTARTED_AT : NODEHW_ANN_GPU_HEALTH;
	struct health_faults add = {0};
	int idx[256], n, rc = EXIT_USAGE;
	char *value = NULL, *path = NULL, buf[2048];
	const char *before;
	json_t *node = NULL, *patch = NULL;
	struct gs_error err;
	struct option opts[] = {
		OPT_FAULT_COMMON(&c),
		OPT_END(),
	};

	n = parse_node_args(argc, argv, opts, verb == FAULT_RESTART, "", &rc);
	if (n < 0)
		return rc;
	name = argv[0];
	if (verb == FAULT_GPU && n < 1) {
		gs_error_set(&err, "say which GPU and fault, e.g. 0=xid:79 or 1=lost");
		return usage_error(&fault_usage, &err);
	}
	if (n > (int)(sizeof(idx) / sizeof(idx[0]))) {
		gs_error_set(&err, "at most 256 entries");
		return usage_error(&fault_usage, &err);
	}
	if ((verb == FAULT_GPU && parse_args(argv + 1, n, &add, &err) < 0) ||
	    (verb == FAULT_CLEAR && parse_indexes(argv + 1, n, idx, &err) < 0))
		return usage_error(&fault_usage, &err);
	if (read_node(&c, name, &path, &node) < 0)
		goto out;
	if (next_value(verb, node, name, &add, idx, n, &value, &err) < 0) {
		cmd_eprintf("gpushare fault: %s\n", gs_error_str(&err, buf, sizeof(buf)));
		goto out;
	}
	if (set_annotation(&c, path, name, node, key, value, &before, &patch) < 0 ||
	    print_annotation(&c, name, key, before, value, patch) < 0)
		goto out;
	rc = EXIT_OK;
out:
	health_faults_release(&add);
	json_decref(node);
	json_decref(patch);
	free(value);
	free(path);
	kube_context_release(&c.kx);
	return rc;
}

/* A label value (RFC 1123 label-ish, as the apiserver takes one): [A-Za-z0-9._-], at most 63. */
static bool label_value_ok(const char *s)
{
	size_t n = strlen(s);

	if (!n || n > 63)
		return false;
	for (const char *p = s; *p; p++)
		if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
		      (*p >= '0' && *p <= '9') || *p == '-' || *p == '.' || *p == '_'))
			return false;
	return true;
}

struct mig_change {
	const char *part; /* "labels" or "annotations" */
	const char *key;
	const char *after; /* NULL = removed */
	const char *before;
};

/*
 * gpushare fault mig: one merge patch of the Node carrying the label
 * nvidia.com/mig.config and the annotations gpushare.io/mig-fault and
 * gpushare.io/mig-reconfigure-seconds; only what changes.
 */
static int run_mig(int argc, char **argv)
{
	struct fault_common c = {.format = OUTPUT_TABLE};
	const char *name, *layout = NULL;
	bool stall = false, fail = false, no_fault = false;
	long seconds = -1;
	char secs[24], *path = NULL;
	struct mig_change ch[3];
	size_t n_ch = 0;
	json_t *node = NULL, *patch = NULL;
	struct gs_error err;
	int rc = EXIT_USAGE;
	struct option opts[] = {
		OPT_STRING(0, "config", &layout, "LAYOUT",
			   "the new nvidia.com/mig.config (a mig-parted layout, e.g. all-1g.10gb)"),
		OPT_BOOL(0, "stall", &stall,
			 "the walk wedges: state pending forever (mig-parted#485)"),
		OPT_BOOL(0, "fail", &fail, "the apply fails: state failed, the old layout kept"),
		OPT_BOOL(0, "no-fault", &no_fault, "remove the fault: a stalled walk completes"),
		OPT_INT(0, "seconds", &seconds, "N", "how long the walk takes [5]", 0, 86400),
		OPT_FAULT_COMMON(&c),
		OPT_END(),
	};

	if (parse_node_args(argc, argv, opts, true, " (the layout goes in --config)", &rc) < 0)
		return rc;
	name = argv[0];
	if (stall + fail + no_fault > 1) {
		gs_error_set(&err, "--stall, --fail and --no-fault exclude each other");
		return usage_error(&fault_usage, &err);
	}
	if (!layout && !stall && !fail && !no_fault && seconds < 0) {
		gs_error_set(&err, "say what changes: --config, --stall, --fail, --no-fault or "
				   "--seconds");
		return usage_error(&fault_usage, &err);
	}
	if (layout && !label_value_ok(layout)) {
		gs_error_set(&err, "--config '%s' is not a label value ([A-Za-z0-9._-], 1-63)",
			     layout);
		return usage_error(&fault_usage, &err);
	}
	if (layout)
		ch[n_ch++] = (struct mig_change){"labels", NODEHW_LABEL_MIG_CONFIG, layout, NULL};
	if (stall || fail || no_fault)
		ch[n_ch++] = (struct mig_change){"annotations", NODEHW_ANN_MIG_FAULT,
						 stall	? "stall"
						 : fail ? "fail"
							: NULL,
						 NULL};
	if (seconds >= 0) {
		snprintf(secs, sizeof(secs), "%ld", seconds);
		ch[n_ch++] = (struct mig_change){"annotations", NODEHW_ANN_MIG_SECONDS, secs, NULL};
	}
	if (read_node(&c, name, &path, &node) < 0)
		goto out;
	patch = json_object();
	for (size_t i = 0; i < n_ch; i++) {
		ch[i].before = !strcmp(ch[i].part, "labels") ? kobj_label(node, ch[i].key)
							     : kobj_annotation(node, ch[i].key);
		if (unchanged(ch[i].before, ch[i].after))
			continue;
		mergepatch_set(patch, "metadata", ch[i].part, ch[i].key,
			       ch[i].after ? json_string(ch[i].after) : json_null());
	}
	if (!json_object_size(patch)) {
		json_decref(patch);
		patch = NULL;
	} else if (write_patch(&c, path, name, patch) < 0)
		goto out;
	if (output_is_doc(c.format)) {
		json_t *changes = json_array(), *o;
		int r;
		for (size_t i = 0; i < n_ch; i++)
			json_array_append_new(
				changes,
				json_pack("{s:s,s:s,s:s?,s:s?}", "kind",
					  !strcmp(ch[i].part, "labels") ? "label" : "annotation",
					  "key", ch[i].key, "before", ch[i].before, "after",
					  ch[i].after));
		o = json_pack("{s:s,s:o,s:O?,s:b,s:b}", "node", name, "changes", changes, "patch",
			      patch, "changed", patch != NULL, "dryRun", c.dry_run);
		r = print_result(&c, o);
		json_decref(o);
		if (r < 0)
			goto out;
	} else {
		for (size_t i = 0; i < n_ch; i++)
			print_change(name, ch[i].key, ch[i].before, ch[i].after,
				     unchanged(ch[i].before, ch[i].after), c.dry_run);
		print_dry_patch(c.dry_run, patch);
	}
	rc = EXIT_OK;
out:
	json_decref(node);
	json_decref(patch);
	free(path);
	kube_context_release(&c.kx);
	return rc;
}

/*
 * gpushare fault kubelet: one merge patch of the Node carrying
 * gpushare.io/kubelet-restart = "<restart|reboot>@<now>,<seconds>", or its
 * removal (--clear); `gpushare controller` plays the window
 * (engine/kubeletrestart.h).
 */
static int run_kubelet(int argc, char **argv)
{
	struct fault_common c = {.format = OUTPUT_TABLE};
	const char *name, *key = NODEHW_ANN_KUBELET_RESTART, *before;
	bool restart = false, reboot = false, clear = false;
	long seconds = -1;
	char *value = NULL, *path = NULL;
	json_t *node = NULL, *patch = NULL;
	struct gs_error err;
	int rc = EXIT_USAGE;
	struct option opts[] = {
		OPT_BOOL(0, "restart", &restart,
			 "the kubelet restarts: running pods keep their devices"),
		OPT_BOOL(0, "reboot", &reboot, "the node reboots: its GPU pods fail re-admission"),
		OPT_BOOL(0, "clear", &clear, "remove the declaration (a window still open ends)"),
		OPT_INT(0, "seconds", &seconds, "N",
			"until the device plugin registers again [10 restart, 60 reboot]", 0,
			KUBELET_MAX_SECONDS),
		OPT_FAULT_COMMON(&c),
		OPT_END(),
	};

	if (parse_node_args(argc, argv, opts, true, "", &rc) < 0)
		return rc;
	name = argv[0];
	if (restart + reboot + clear != 1) {
		gs_error_set(&err, "say one of --restart, --reboot or --clear");
		return usage_error(&fault_usage, &err);
	}
	if (clear && seconds >= 0) {
		gs_error_set(&err, "--seconds goes with --restart or --reboot");
		return usage_error(&fault_usage, &err);
	}
	if (!clear) {
		const char *fixed = getenv("GPUSHARE_NOW");
		struct kubelet_fault f = {
			.kind = reboot ? KUBELET_REBOOT : KUBELET_RESTART,
			.at = fixed ? strtoll(fixed, NULL, 10) : (long long)time(NULL),
			.seconds = seconds >= 0 ? (int)seconds
				   : reboot	? KUBELET_REBOOT_SECONDS
						: KUBELET_RESTART_SECONDS,
		};
		value = kubelet_fault_format(&f);
	}
	if (read_node(&c, name, &path, &node) < 0)
		goto out;
	if (!kobj_annotation(node, NODEHW_ANN_PRODUCT)) {
		cmd_eprintf(
			"gpushare fault: node '%s' declares no GPUs (annotation " NODEHW_ANN_PRODUCT
			"): gpushare does not play its kubelet\n",
			name);
		goto out;
	}
	if (set_annotation(&c, path, name, node, key, value, &before, &patch) < 0 ||
	    print_annotation(&c, name, key, before, value, patch) < 0)
		goto out;
	rc = EXIT_OK;
out:
	json_decref(node);
	json_decref(patch);
	free(value);
	free(path);
	kube_context_release(&c.kx);
	return rc;
}

int cmd_fault(int argc, char **argv)
{
	static const struct {
		const char *name;
		enum fault_verb verb;
	} verbs[] = {{"gpu", FAULT_GPU}, {"clear", FAULT_CLEAR}, {"restart-plugin", FAULT_RESTART}};
	struct option opts[] = {OPT_END()};
	struct gs_error err;
	int n;

	if (argc >= 2 && !strcmp(argv[1], "mig"))
		return run_mig(argc - 1, argv + 1);
	if (argc >= 2 && !strcmp(argv[1], "kubelet"))
		return run_kubelet(argc - 1, argv + 1);
	for (size_t i = 0; argc >= 2 && i < sizeof(verbs) / sizeof(verbs[0]); i++)
		if (!strcmp(argv[1], verbs[i].name))
			return run(verbs[i].verb, argc - 1, argv + 1);
	n = parse_options(argc, argv, opts, &fault_usage);
	if (n < 0)
		return parseopt_exit(n);
	if (n == 0)
		gs_error_set(&err,
			     "say which subcommand: gpu, clear, restart-plugin, mig, kubelet");
	else
		gs_error_set(&err, "'%s' is not a fault subcommand; see 'gpushare fault --help'",
			     argv[0]);
	return usage_error(&fault_usage, &err);
}
