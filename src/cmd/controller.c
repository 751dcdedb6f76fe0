#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include "base/escape.h"
#include "engine/admission.h"
#include "model/catalog.h"
#include "cmd/cmd.h"
#include "daemon/controller.h"
#include "daemon/draadmit.h"
#include "dra/draslice.h"
#include "model/defaults.h"
#include "model/dpconfig_set.h"
#include "cmd/kubecontext.h"
#include "cmd/offline.h"
#include "kube/kubeloop.h"
#include "daemon/opsserver.h"
#include "cmd/parseopt.h"
#include "base/banned.h"

#define CONTROLLER_LIST_PAGE 100u /* `limit` of the list pages */

#define DRAIN_LIMIT_MS 30000L /* SIGTERM: in-flight writes get this long to finish */

static int signal_pipe[2] = {-1, -1};

static void on_signal(int sig)
{
	int saved = errno;
	char c = (char)sig;

	if (write(signal_pipe[1], &c, 1) < 0) {
		/* The pipe is full: a signal is pending already. */
	}
	errno = saved;
}

/*
 * One line per event on stderr, UTC time first (ISO 8601, milliseconds).
 * The text goes through escape_line: a name or an apiserver's message
 * holding a line break or a terminal escape cannot add a line of its own.
 */
static void log_line(void *arg, const char *line)
{
	struct strbuf sb = STRBUF_INIT;
	struct timeval tv;
	struct tm tm;
	char ts[32];

	(void)arg;
	gettimeofday(&tv, NULL);
	gmtime_r(&tv.tv_sec, &tm);
	strftime(ts, sizeof(ts), "%Y-%m-%dT%H:%M:%S", &tm);
	strbuf_addf(&sb, "%s.%03ldZ ", ts, (long)(tv.tv_usec / 1000));
	escape_line_str(&sb, line);
	strbuf_addch(&sb, '\n');
	fwrite(sb.buf, 1, sb.len, stderr);
	fflush(stderr);
	strbuf_release(&sb);
}

static void logf_(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void logf_(const char *fmt, ...)
{
	char line[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	log_line(NULL, line);
}

static const char *const usage_lines[] = {"gpushare controller [options]", NULL};

static const struct parseopt_example controller_examples[] = {
	{"keep the cluster's GPU nodes advertising; metrics on port 9090",
	 "gpushare controller --listen 127.0.0.1:9090"},
	{"only the nodes of one pool, under the lab's ConfigMap",
	 "gpushare controller -l pool=gpu --configmap gpu-share/device-plugin-configs"},
	{NULL, NULL},
};
static const struct parseopt_usage controller_usage = {
	"controller",
	usage_lines,
	"Keep every node that declares its GPUs (annotation gpushare.io/gpu-product)\n"
	"advertising what NVIDIA's device plugin and GPU feature discovery would publish\n"
	"under the device-plugin ConfigMap, and admit the pods bound to a node as its\n"
	"kubelet would: lists and watches the ConfigMap, the nodes and the bound pods,\n"
	"and reconciles on every change until SIGTERM or SIGINT\n"
	"(docs/guide/controller.md).\n"
	"An invalid config or a missing key keeps the node's last good advertisement and\n"
	"posts a Warning Event on the node. A managed node's Lease that nobody renews\n"
	"while the apiserver answers (kwok v0.8.0 can stop renewing them) is renewed as\n"
	"its kubelet would until someone else renews it again, so the node stays Ready.\n"
	"Logs one line per event on stderr.\n",
	"Exit status: 0 stopped by a signal after finishing what was in flight, 2 bad\n"
	"usage or no usable cluster connection.\n",
	controller_examples,
	NULL,
};

/* arg is &ctl: the ops server answers before the controller exists. */
static void ops_metrics(void *arg, struct strbuf *out)
{
	struct controller *const *ctl = arg;

	if (*ctl)
		controller_metrics(*ctl, out);
}

static bool ops_ready(void *arg)
{
	struct controller *const *ctl = arg;

	return *ctl && controller_ready(*ctl);
}

static long long mono_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/*
 * The kubelet's admission (docs/guide/status.md): the device manager's and the
 * plugin's decision against the node's ledger, rebuilt from the pods that
 * hold its devices. Admitted pods get their gpushare.io/devices record. A
 * DRA node has no device-plugin resources: admitted here, its claims are
 * prepared elsewhere.
 */
static int admit_hook(void *arg, const struct controller_admission *in,
		      struct controller_verdict *out, struct gs_error *err)
{
	struct admission_decision d;
	char *text;

	if (draslice_node_wants_dra(in->node)) {
		out->admit = true;
		return 0;
	}
	if (admission_ctx_decide(arg, in->node, in->configmap, in->pod, in->holders, &d, err) < 0)
		return -1;
	out->admit = d.admit;
	if (d.admit) {
		text = ledger_annotation_format(d.devices);
		out->annotations = json_pack("{s:s}", LEDGER_ANN_DEVICES, text);
		free(text);
	} else {
		out->reason = d.reason;
		out->message = d.message;
		d.reason = d.message = NULL;
	}
	admission_decision_release(&d);
	return 0;
}

/*
 * The DRA half of a plan (docs/guide/dra.md): the slices and classes of the
 * planned nodes, read and written on the controller's loop (sync_read_dra_loop,
 * sync_write_dra_loop), the plan's node writes waiting for its end.
 *
 * That read costs a LIST and two GETs, so it is made only for a plan that can
 * change something: a node on the DRA path, or one that may still hold a slice
 * of the driver (it had one at the last LIST, or was on the DRA path at an
 * earlier plan). The first plan always reads. A ConfigMap edit of a fleet
 * without DRA nodes then writes its nodes without a pause per batch
 * (docs/guide/controller.md "Scale").
 */
struct dra_publish {
	struct kube_loop *l;
	bool listed;  /* the slices were listed once */
	char **nodes; /* sorted: the nodes that may hold a slice */
	size_t n, cap;
	/* the plan being published */
	struct sync_report *rep;
	json_t *slices, *classes;
	void (*done)(void *done_arg);
	void *done_arg;
};

static int cmp_name(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static bool may_hold_slice(const struct dra_publish *p, const char *name)
{
	return p->n && bsearch(&name, p->nodes, p->n, sizeof(*p->nodes), cmp_name) != NULL;
}

static void slice_holder_add(struct dra_publish *p, const char *name)
{
	if (may_hold_slice(p, name))
		return;
	if (p->n == p->cap) {
		p->cap = p->cap ? 2 * p->cap : 16;
		p->nodes = gs_xrealloc(p->nodes, p->cap * sizeof(*p->nodes));
	}
	p->nodes[p->n++] = gs_xstrdup(name);
	qsort(p->nodes, p->n, sizeof(*p->nodes), cmp_name);
}

static void slice_holder_del(struct dra_publish *p, const char *name)
{
	char **at = p->n ? bsearch(&name, p->nodes, p->n, sizeof(*p->nodes), cmp_name) : NULL;

	if (!at)
		return;
	free(*at);
	memmove(at, at + 1, (size_t)(p->nodes + p->n - (at + 1)) * sizeof(*p->nodes));
	p->n--;
}

static void slice_holders_release(struct dra_publish *p)
{
	for (size_t i = 0; i < p->n; i++)
		free(p->nodes[i]);
	free(p->nodes);
	p->nodes = NULL;
	p->n = p->cap = 0;
}

/* The plan's DRA half ended (published or not): its nodes go next. */
static void publish_end(struct dra_publish *p)
{
	void (*done)(void *done_arg) = p->done;

	json_decref(p->slices);
	json_decref(p->classes);
	p->slices = p->classes = NULL;
	p->rep = NULL;
	p->done = NULL;
	done(p->done_arg);
}

static void on_dra_written(void *arg, int rc)
{
	struct dra_publish *p = arg;
	struct sync_report *rep = p->rep;
	size_t i;

	if (rc)
		logf_("DRA: some slice or class could not be written (see the nodes below)");
	for (i = 0; i < rep->n; i++) {
		const struct sync_node *n = &rep->nodes[i];
		if (n->outcome == SYNC_SKIPPED)
			continue;
		if (n->dra)
			slice_holder_add(p, n->name);
		else if (!rc)
			slice_holder_del(p, n->name); /* its slices were deleted */
	}
	for (i = 0; i < rep->n_ops; i++) {
		const struct sync_op *op = &rep->ops[i];
		logf_("%s%s%s %s %s (generation %lld)", op->node ? "node " : "",
		      op->node ? op->node : "", op->node ? ": ResourceSlice" : "DeviceClass",
		      op->name ? op->name : "(new)",
		      op->action == SYNC_OP_CREATE   ? "created"
		      : op->action == SYNC_OP_UPDATE ? "updated"
						     : "deleted",
		      op->generation);
	}
	publish_end(p);
}

static void on_dra_read(void *arg, json_t *slices, json_t *classes, const struct gs_error *err)
{
	struct dra_publish *p = arg;
	json_t *items, *s;
	size_t i;

	if (!slices) {
		logf_("DRA slices not published: %s", err->msg);
		publish_end(p);
		return;
	}
	p->slices = slices;
	p->classes = classes;
	/* What the LIST shows is who holds a slice now (the driver's, by its field selector). */
	p->listed = true;
	slice_holders_release(p);
	items = json_is_array(slices) ? slices : json_object_get(slices, "items");
	json_array_foreach (items, i, s) {
		const char *node =
			json_string_value(json_object_get(json_object_get(s, "spec"), "nodeName"));
		if (node)
			slice_holder_add(p, node);
	}
	sync_plan_dra(p->rep, slices, classes);
	sync_write_dra_loop(p->l, p->rep, on_dra_written, p);
}

/* The controller's publish hook (controller_opts.publish). */
static void publish_dra(void *arg, struct sync_report *rep, void (*done)(void *done_arg),
			void *done_arg)
{
	struct dra_publish *p = arg;
	bool any = false;

	for (size_t i = 0; i < rep->n && !any; i++) {
		const struct sync_node *n = &rep->nodes[i];
		any = n->outcome != SYNC_SKIPPED &&
		      (!p->listed || n->dra || n->slice_touched || may_hold_slice(p, n->name));
	}
	p->rep = rep;
	p->done = done;
	p->done_arg = done_arg;
	if (!any) {
		publish_end(p);
		return;
	}
	if (sync_read_dra_loop(p->l, on_dra_read, p) < 0) {
		logf_("DRA slices not published: cannot make a request");
		publish_end(p);
	}
}

/*
 * --fallback-strategies: config-manager would refuse an unknown word only
 * when a node without a config label reaches it; the controller serves
 * every node for as long as it runs, so the word is refused here, at once.
 */
static int parse_fallbacks(const struct option *opt, const char *arg, struct gs_error *err)
{
	if (dpconfig_fallbacks_check(arg, err) < 0)
		return -1;
	*(const char **)opt->value = arg;
	return 0;
}

int cmd_controller(int argc, char **argv)
{
	struct kube_context kx = {0};
	struct controller_opts co = {0};
	struct admission_ctx *actx = NULL;
	const struct catalog *cat;
	struct configmap_ref cm = {.ns = NULL, .name = NULL, .given = false};
	struct kube_loop_opts lo = {0};
	struct kube_loop *l = NULL;
	struct controller *ctl = NULL;
	struct draadmit dra = {0};
	struct dra_publish publish = {.l = NULL, .listed = false, .nodes = NULL, .n = 0, .cap = 0};
	struct opsserver *ops = NULL;
	const char *listen = NULL;
	struct gs_error err;
	char buf[2048], probe_err[1024];
	long max_in_flight = 0, heal_after_ms = CONTROLLER_HEAL_AFTER_MS;
	bool heal_leases = true;
	int rc = EXIT_USAGE, n;
	bool stopping = false;
	long long stop_at = 0;
	struct option opts[] = {
		OPT_CALLBACK(0, "configmap", &cm, "NS/NAME",
			     "device-plugin ConfigMap [" GS_DEFAULT_CONFIGMAP_REF "]",
			     parse_configmap_ref),
		OPT_STRING('l', "selector", &co.node_selector, "SELECTOR",
			   "manage only the nodes this label selector matches, e.g. "
			   "pool=gpu,tier!=dev [every node declaring its GPUs]"),
		OPT_STRING(0, "default-config", &co.default_config, "KEY",
			   "config-manager's DEFAULT_CONFIG [unset]"),
		OPT_CALLBACK_VALUES(0, "fallback-strategies", &co.fallbacks, "LIST",
				    "config-manager's FALLBACK_STRATEGIES, tried in order:\n"
				    "named, single, empty, comma-separated [named,single]",
				    parse_fallbacks, dpconfig_fallback_strategies),
		OPT_STRING(0, "disable-healthchecks", &co.disable_healthchecks, "LIST",
			   "the device plugin's DP_DISABLE_HEALTHCHECKS: XIDs it skips besides "
			   "13,31,43,45,68,109, or all [unset]"),
		OPT_STRING(0, "enable-healthchecks", &co.enable_healthchecks, "LIST",
			   "the device plugin's DP_ENABLE_HEALTHCHECKS: XIDs it checks even so "
			   "[unset]"),
		OPT_STRING(0, "listen", &listen, "HOST:PORT",
			   "serve /healthz, /readyz and /metrics over HTTP there [off]"),
		OPT_INT(0, "max-in-flight", &max_in_flight, "N",
			"API requests at once, at most: from 16 (or N when lower), more while the "
			"apiserver answers as fast [64]",
			1, 256),
		OPT_BOOL(0, "heal-leases", &heal_leases,
			 "renew the Lease of a managed node nobody renews while the apiserver "
			 "answers, as its kubelet would (kwok v0.8.0's stall); =false lets the "
			 "node go NotReady [true]"),
		OPT_DURATION(0, "heal-leases-after", &heal_after_ms, "DURATION",
			     "how long a Lease goes unrenewed before gpushare renews it (11s-1h) "
			     "[25s]",
			     3600000L),
		OPT_KUBE_CONNECTION(&kx.opts),
		OPT_END(),
	};

	configmap_ref_init(&cm);
	n = parse_options(argc, argv, opts, &controller_usage);
	if (n < 0) {
		rc = parseopt_exit(n);
		goto out;
	}
	if (n > 0) {
		gs_error_set(&err, "unexpected argument '%s'", argv[0]);
		rc = usage_error(&controller_usage, &err);
		goto out;
	}
	if (heal_after_ms < CONTROLLER_HEAL_AFTER_MIN_MS) {
		/* A live kwok renews every 10 s: sooner would take its next renewal for a stall. */
		gs_error_set(&err,
			     "option '--heal-leases-after' must be at least %lds: the kubelet (and "
			     "kwok) renews a Lease every 10s",
			     CONTROLLER_HEAL_AFTER_MIN_MS / 1000);
		rc = usage_error(&controller_usage, &err);
		goto out;
	}
	co.configmap_namespace = cm.ns;
	co.configmap_name = cm.name;
	co.heal_leases = heal_leases;
	co.heal_after_ms = heal_after_ms;
	co.log = log_line;
	draadmit_init(&dra, NULL);
	if (catalog_builtin(&cat, &err) < 0) {
		fprintf(stderr, "gpushare controller: %s\n", gs_error_str(&err, buf, sizeof(buf)));
		goto out;
	}
	{
		struct advertise_options ao = {.default_config = co.default_config,
					       .fallbacks = co.fallbacks,
					       .disable_healthchecks = co.disable_healthchecks,
					       .enable_healthchecks = co.enable_healthchecks};
		actx = admission_ctx_new(cat, &ao);
	}
	co.admit = admit_hook;
	co.admit_arg = actx;
	lo.max_in_flight = (unsigned)max_in_flight;
	/*
	 * Pages of 100, not kubeloop's 250: a page is decoded whole, and a page of
	 * 250 nodes (about 6 kB of JSON each) took the peak RSS of a controller
	 * started beside 5,000 nodes to 31 MB; 100 keeps it at 21 MB (50: 17.7).
	 */
	lo.list_page_size = CONTROLLER_LIST_PAGE;
	lo.log = log_line;
	/* First, so a bad --listen is said before anything is dialed. */
	if (listen) {
		struct opsserver_opts oo = {
			.ready = ops_ready, .metrics = ops_metrics, .arg = &ctl, .log = log_line};
		if (opsserver_start(&ops, listen, &oo, &err) < 0) {
			rc = usage_error(&controller_usage, &err);
			goto out;
		}
	}
	/* It outlives apiserver restarts: an apiserver that refuses is waited for. */
	kx.retry_unreachable = true;
	if (kube_context_open(&kx, "controller", &err) < 0) {
		fprintf(stderr, "gpushare controller: %s\n", gs_error_str(&err, buf, sizeof(buf)));
		goto out;
	}
	/* One synchronous call first: a wrong address or credential is said at once, and exits. */
	const struct kubeversion *kv = NULL;
	if (sync_probe_version(kx.client, &kv, &err) < 0) {
		fprintf(stderr, "gpushare controller: %s\n", gs_error_str(&err, buf, sizeof(buf)));
		goto out;
	}
	co.dra_counters_apart = kv->slice_counters_apart;
	logf_("the apiserver behaves as Kubernetes %s: ResourceSlices hold sharedCounters %s",
	      kv->version, kv->slice_counters_apart ? "and devices apart" : "with the devices");
	/* Whether nodes whose DRA driver runs DynamicMIG can be published (docs/guide/dra.md). */
	if (sync_probe_partitionable(kx.client, &co.dra_partitionable, &err) < 0) {
		co.dra_probe_error = gs_error_str(&err, probe_err, sizeof(probe_err));
		logf_("DRA: %s; nodes whose driver runs DynamicMIG are not published",
		      co.dra_probe_error);
	} else
		logf_("DRA: the apiserver %s sharedCounters (DRAPartitionableDevices %s)",
		      co.dra_partitionable ? "keeps" : "drops",
		      co.dra_partitionable ? "on" : "off");
	if (pipe(signal_pipe) != 0 || fcntl(signal_pipe[0], F_SETFL, O_NONBLOCK) != 0 ||
	    fcntl(signal_pipe[1], F_SETFL, O_NONBLOCK) != 0) {
		fprintf(stderr, "gpushare controller: pipe: %s\n", strerror(errno));
		goto out;
	}
	signal(SIGTERM, on_signal);
	signal(SIGINT, on_signal);
	signal(SIGPIPE, SIG_IGN);
	/* Pods on DRA nodes are prepared as the driver would first (docs/guide/dra.md). */
	dra.next = co.admit;
	dra.next_arg = co.admit_arg;
	co.admit = draadmit_decide;
	co.admit_arg = &dra;
	co.publish = publish_dra;
	co.publish_arg = &publish;
	if (kube_loop_new(&l, kube_client_conn(kx.client), &lo, &err) < 0) {
		fprintf(stderr, "gpushare controller: %s\n", gs_error_str(&err, buf, sizeof(buf)));
		goto out;
	}
	/* The DRA half reads and writes on the loop too: nothing in it waits. */
	dra.l = l;
	publish.l = l;
	if (controller_new(&ctl, l, &co, &err) < 0) {
		fprintf(stderr, "gpushare controller: %s\n", gs_error_str(&err, buf, sizeof(buf)));
		goto out;
	}
	if (ops)
		logf_("serving /healthz, /readyz and /metrics on http://%s", listen);
	logf_("started: configmap %s/%s, nodes %s, Lease healing %s",
	      cm.ns ? cm.ns : GS_DEFAULT_NAMESPACE, cm.name ? cm.name : GS_DEFAULT_CONFIGMAP,
	      co.node_selector ? co.node_selector : "(all declaring GPUs)",
	      heal_leases ? "on" : "off (--heal-leases=false)");
	for (;;) {
		int fds[2];
		bool readable[2] = {false, false};
		size_t nfds = 0;
		long wait = 250; /* also bounds a watch event left in a TLS buffer */

		fds[nfds++] = signal_pipe[0];
		if (ops) {
			fds[nfds++] = opsserver_fd(ops);
			wait = opsserver_timeout_ms(ops, wait);
		}
		if (kube_loop_step(l, fds, nfds, readable, wait, &err) < 0) {
			logf_("error: %s", err.msg);
			rc = EXIT_FINDING;
			break;
		}
		if (readable[0]) {
			char c[16];
			while (read(signal_pipe[0], c, sizeof(c)) > 0)
				;
			if (!stopping) {
				stopping = true;
				stop_at = mono_ms() + DRAIN_LIMIT_MS;
				controller_drain(ctl);
				kube_loop_stop_watches(l);
				logf_("stopping: finishing %zu request(s) in flight",
				      kube_loop_pending(l));
			}
		}
		if (ops)
			opsserver_run(ops);
		controller_tick(ctl);
		if (stopping && !kube_loop_pending(l)) {
			logf_("stopped");
			rc = EXIT_OK;
			break;
		}
		if (stopping && mono_ms() > stop_at) {
			logf_("stopped with %zu request(s) unfinished after %lds",
			      kube_loop_pending(l), DRAIN_LIMIT_MS / 1000);
			rc = EXIT_OK;
			break;
		}
	}
out:
	opsserver_stop(ops);
	controller_free(ctl);
	admission_ctx_free(actx);
	kube_loop_free(l);
	if (signal_pipe[0] >= 0) {
		close(signal_pipe[0]);
		close(signal_pipe[1]);
	}
	configmap_ref_release(&cm);
	draadmit_release(&dra);
	slice_holders_release(&publish);
	kube_context_release(&kx);
	return rc;
}
