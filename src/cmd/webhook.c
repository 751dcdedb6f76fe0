#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <microhttpd.h>

#include "base/escape.h"
#include "base/jsonmeter.h"
#include "model/catalog.h"
#include "cmd/cmd.h"
#include "daemon/httpguard.h"
#include "daemon/opsserver.h"
#include "model/defaults.h"
#include "model/dpconfig_set.h"
#include "engine/explain_offline.h"
#include "model/kobj.h"
#include "cmd/kubecontext.h"
#include "kube/kubeloop.h"
#include "cmd/offline.h"
#include "cmd/parseopt.h"
#include "fleet/fleet.h"
#include "base/readfile.h"
#include "base/strbuf.h"
#include "engine/webhook.h"
#include "yaml/ydoc.h"
#include "base/banned.h"

/*
 * gpushare webhook: the validating admission webhook over HTTPS
 * (libmicrohttpd with GnuTLS). One internal polling thread answers the
 * apiserver; the main thread refreshes the fleet (nodes and the
 * device-plugin ConfigMap) and watches the certificate files; with
 * --health-listen, a plain-HTTP server in a thread of its own answers the
 * probes and /metrics whatever the reviews' server is doing. A review
 * holds the fleet's mutex for its judgement only (well under a millisecond
 * on the seed's fleet), a refresh only to swap the pointer.
 */

#define WEBHOOK_MAX_PEM (1u << 20)
#define WEBHOOK_MAX_FILE (256u << 20)
#define WEBHOOK_TICK_MS 200
/*
 * What one review's tree may take (jansson's objects for the body's JSON):
 * an ordinary pod's is well under a megabyte, but JSON of small values costs
 * 20 to 80 times its size as a tree (6 MiB of env entries: 108 MB).
 */
#define WEBHOOK_MAX_TREE (16u << 20)

/*
 * The limits of the reviews' server (docs/guide/webhook.md, "Limits"). The
 * apiserver waits timeoutSeconds for an answer (10 s by default, 5 s in
 * deploy/webhook.yaml) and sends its request at once: headers not in after
 * 2 s, or a request not done after 10 s, belong to no caller still waiting.
 * Bodies: 16 MiB in memory at once, the last 4 MiB only for bodies of
 * 64 KiB or less (any ordinary pod), so two 6 MiB uploads at most, and
 * large uploads never keep a small review waiting.
 */
static const struct httpguard_limits webhook_limits = {
	.max_conns = 128,
	.max_per_ip = 32,
	.idle_s = 10,
	.header_ms = 2000,
	.request_ms = 10000,
	.crowded_at = 96,
	.crowded_header_ms = 500,
	.body_budget = 16u << 20,
	.small_body = 64u << 10,
	.small_reserve = 4u << 20,
};

static volatile sig_atomic_t stopping;

static void on_signal(int sig)
{
	(void)sig;
	stopping = 1;
}

static const char *const usage_lines[] = {
	"gpushare webhook --tls-cert-file FILE --tls-private-key-file FILE [--port N] [options]",
	"gpushare webhook ... -f FILE|DIR|- [-f ...] [-R] [--configmap NS/NAME]",
	"gpushare webhook --review REVIEW.json [-f FILE|DIR|- ...] [--configmap NS/NAME]",
	NULL,
};

static const struct parseopt_example webhook_examples[] = {
	{"judge one AdmissionReview against the lab's nodes and ConfigMap",
	 "gpushare webhook --review deploy/examples/admission-review.json -f k8s/"},
	{"serve HTTPS on port 8443 for the cluster in KUBECONFIG (deploy/webhook.yaml)",
	 "gpushare webhook --tls-cert-file tls.crt --tls-private-key-file tls.key --port 8443"},
	{NULL, NULL},
};
static const struct parseopt_usage webhook_usage = {
	"webhook",
	usage_lines,
	"A validating admission webhook (AdmissionReview admission.k8s.io/v1, HTTPS\n"
	"on POST /validate; GET /healthz and /readyz) that refuses at creation a Pod,\n"
	"or a workload whose pod template makes such pods (Deployment, Job, ...), that\n"
	"would fail later: extended-resource quantities the apiserver rejects\n"
	"(not integers, a request without an equal limit), a nvidia.com/ resource no\n"
	"node the pod can land on advertises (naming what they do advertise), and more\n"
	"than one slice of a resource shared with failRequestsGreaterThanOne on a node\n"
	"it can land on (with the kubelet's UnexpectedAdmissionError words).\n"
	"\n"
	"The fleet comes from the cluster (every node and the device-plugin ConfigMap,\n"
	"listed then watched), or with -f from files: their Nodes advertised as\n"
	"gpushare would under the ConfigMap --configmap names found among them\n"
	"(docs/guide/cli.md). The certificate and key are read\n"
	"again when either file changes. --health-listen serves /healthz, /readyz and\n"
	"/metrics over plain HTTP from a thread of their own, for the kubelet's probes.\n"
	"Connections, deadlines and memory are bounded (docs/guide/webhook.md, \"Limits\").\n"
	"--review judges one AdmissionReview from a file and prints the answer, without\n"
	"a server. See docs/guide/webhook.md.\n",
	"Exit status: 0 stopped by SIGTERM/SIGINT (--review: allowed), 1 (--review)\n"
	"refused, 2 bad usage, input, certificate or port.\n",
	webhook_examples,
	NULL,
};

/*
 * One event, one line on stderr after "gpushare webhook: ". The text goes
 * through escape_line: whatever a review, a ConfigMap or the apiserver put
 * in it (a line break, an ANSI escape, invalid UTF-8), the event stays one
 * line. Written in one call, so the server's lines and the main thread's
 * do not interleave.
 */
static void wlog(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void wlog(const char *fmt, ...)
{
	struct strbuf raw = STRBUF_INIT, line = STRBUF_INIT;
	va_list ap;

	va_start(ap, fmt);
	strbuf_vaddf(&raw, fmt, ap);
	va_end(ap);
	strbuf_addstr(&line, "gpushare webhook: ");
	escape_line(&line, raw.buf, raw.len);
	strbuf_addch(&line, '\n');
	fwrite(line.buf, 1, line.len, stderr);
	strbuf_release(&raw);
	strbuf_release(&line);
}

/* ---- the fleet ------------------------------------------------------------ */

struct fleet_gen {
	json_t *nodes; /* a NodeList, advertised */
	json_t *configmap;
	struct dpconfig_set *set;
	struct fleet *files; /* offline: the objects read (the ConfigMap's positions) */
	size_t n_nodes;
};

static void fleet_gen_free(struct fleet_gen *g)
{
	if (!g)
		return;
	json_decref(g->nodes);
	json_decref(g->configmap);
	dpconfig_set_free(g->set);
	if (g->files)
		fleet_release(g->files);
	free(g->files);
	free(g);
}

/* From files: their Nodes as sync_plan would advertise them under the ConfigMap cm names. */
static int fleet_load_files(const struct fleet_sources *src, const struct configmap_ref *cm,
			    struct fleet_gen **out, struct gs_error *err)
{
	struct fleet_gen *g = gs_xcalloc(1, sizeof(*g));
	struct explain_fleet ef = {0};
	const json_t *c = NULL;
	int rc = -1;

	g->files = gs_xcalloc(1, sizeof(*g->files));
	fleet_init(g->files);
	if (fleet_read(g->files, src, err) < 0 ||
	    fleet_configmap(g->files, cm->ns, cm->name, &c, err) < 0 ||
	    (c && dpconfig_set_from_configmap(fleet_stream_of(g->files, c), c, &g->set, err) < 0))
		goto out;
	if (!json_array_size(g->files->nodes)) {
		gs_error_set(err, "no Node among the files");
		goto out;
	}
	if (explain_fleet_advertise(g->files->nodes, NULL, c, &ef, err) < 0)
		goto out;
	if (!c)
		cmd_eprintf("gpushare webhook: no ConfigMap %s/%s among the files: every node gets "
			    "the device plugin's defaults\n",
			    cm->ns, cm->name);
	g->nodes = json_incref(ef.nodes);
	g->n_nodes = json_array_size(json_object_get(ef.nodes, "items"));
	*out = g;
	g = NULL;
	rc = 0;
out:
	explain_fleet_release(&ef);
	fleet_gen_free(g);
	return rc;
}

/* From the cluster: every node, and the ConfigMap (absent is fine: no shared configs). */
static int fleet_load_live(struct kube_client *kc, const char *cm_ns, const char *cm_name,
			   struct fleet_gen **out, struct gs_error *err)
{
	struct fleet_gen *g = gs_xcalloc(1, sizeof(*g));
	char *path = gs_xasprintf("/api/v1/namespaces/%s/configmaps/%s", cm_ns, cm_name);
	int rc = -1, r;

	r = kube_get(kc, path, &g->configmap, err);
	if (r == KUBE_E_STATUS && kube_last_status(kc)->code == 404) {
		g->configmap = NULL;
		gs_error_clear(err);
		r = 0;
	}
	if (r < 0) {
		gs_error_prefix(err, "reading the ConfigMap %s/%s: ", cm_ns, cm_name);
		goto out;
	}
	if (g->configmap && dpconfig_set_from_configmap(NULL, g->configmap, &g->set, err) < 0) {
		gs_error_prefix(err, "configmap %s/%s: ", cm_ns, cm_name);
		goto out;
	}
	if (kube_list(kc, "/api/v1/nodes", NULL, &g->nodes, err) < 0) {
		gs_error_prefix(err, "listing nodes: ");
		goto out;
	}
	g->n_nodes = json_array_size(json_object_get(g->nodes, "items"));
	*out = g;
	g = NULL;
	rc = 0;
out:
	free(path);
	fleet_gen_free(g);
	return rc;
}

/* ---- the fleet, live: list+watch of the nodes and of the ConfigMap ------------- */

/*
 * What the watches keep: each node reduced to what the decision reads
 * (name, labels, annotations, taints, unschedulable, allocatable), by name,
 * and the ConfigMap. A fleet generation is made from them at most once a
 * second after a change, so a busy cluster's node updates cost one rebuild
 * a second, not one per event.
 */
struct fleet_watch {
	json_t *nodes;	    /* name -> reduced Node */
	json_t *listed;	    /* names seen since the current (re)list began; NULL outside one */
	json_t *configmap;  /* NULL = absent */
	bool cm_listed_any; /* the ConfigMap was seen since its (re)list began */
	json_t *cm_good;    /* the last ConfigMap whose configs parse; NULL = none */
	bool nodes_synced, cm_synced, dirty, cm_changed;
	const char *cm_ns, *cm_name;
};

static json_t *node_reduced(const json_t *node)
{
	const json_t *md = json_object_get(node, "metadata");
	const json_t *spec = json_object_get(node, "spec");

	return json_pack("{s:s,s:s,s:{s:O?,s:O?,s:O?},s:{s:O?,s:O?},s:{s:O?}}", "apiVersion", "v1",
			 "kind", "Node", "metadata", "name", json_object_get(md, "name"), "labels",
			 json_object_get(md, "labels"), "annotations",
			 json_object_get(md, "annotations"), "spec", "taints",
			 json_object_get(spec, "taints"), "unschedulable",
			 json_object_get(spec, "unschedulable"), "status", "allocatable",
			 json_object_get(json_object_get(node, "status"), "allocatable"));
}

static void nodes_list_begin(void *arg)
{
	struct fleet_watch *w = arg;

	json_decref(w->listed);
	w->listed = json_object();
}

static void nodes_event(void *arg, enum kube_event ev, json_t *obj)
{
	struct fleet_watch *w = arg;
	const char *name = kobj_text(obj, "metadata.name");
	json_t *red;

	if (!*name)
		return;
	if (ev == KUBE_EV_DELETED) {
		if (json_object_del(w->nodes, name) == 0)
			w->dirty = true;
		return;
	}
	if (ev == KUBE_EV_LISTED && w->listed)
		json_object_set_new(w->listed, name, json_true());
	red = node_reduced(obj);
	if (!red)
		return;
	if (json_equal(red, json_object_get(w->nodes, name))) {
		json_decref(red);
		return;
	}
	json_object_set_new(w->nodes, name, red);
	w->dirty = true;
}

static void nodes_list_end(void *arg)
{
	struct fleet_watch *w = arg;
	const char *name;
	json_t *v, *gone = json_array();
	size_t i;

	/* What the (re)list did not show is gone. */
	json_object_foreach (w->nodes, name, v)
		if (!json_object_get(w->listed, name))
			json_array_append_new(gone, json_string(name));
	json_array_foreach (gone, i, v)
		json_object_del(w->nodes, json_string_value(v));
	w->dirty |= json_array_size(gone) > 0;
	json_decref(gone);
	json_decref(w->listed);
	w->listed = NULL;
	w->nodes_synced = true;
	w->dirty = true;
}

static void cm_list_begin(void *arg)
{
	struct fleet_watch *w = arg;

	w->cm_listed_any = false;
}

static void cm_set(struct fleet_watch *w, json_t *cm)
{
	if (cm ? json_equal(json_object_get(cm, "data"), json_object_get(w->configmap, "data")) &&
			    w->configmap
	       : !w->configmap)
		return;
	json_decref(w->configmap);
	w->configmap = cm ? json_pack("{s:s,s:s,s:{s:s,s:s},s:O?}", "apiVersion", "v1", "kind",
				      "ConfigMap", "metadata", "name", w->cm_name, "namespace",
				      w->cm_ns, "data", json_object_get(cm, "data"))
			  : NULL;
	w->dirty = w->cm_changed = true;
}

static void cm_event(void *arg, enum kube_event ev, json_t *obj)
{
	struct fleet_watch *w = arg;

	if (ev == KUBE_EV_LISTED)
		w->cm_listed_any = true;
	cm_set(w, ev == KUBE_EV_DELETED ? NULL : obj);
}

static void cm_list_end(void *arg)
{
	struct fleet_watch *w = arg;

	/* A (re)list that did not show it: it is gone. */
	if (!w->cm_listed_any)
		cm_set(w, NULL);
	w->cm_synced = true;
	w->dirty = true;
}

/*
 * A generation from what the watches hold. A ConfigMap whose configs do not
 * parse is reported once and the last good one used (the device plugin
 * itself would keep running on the config it had).
 */
static struct fleet_gen *fleet_from_watch(struct fleet_watch *w)
{
	struct fleet_gen *g = gs_xcalloc(1, sizeof(*g));
	json_t *items = json_array(), *v;
	const char *name;
	struct gs_error err;
	char buf[2048];

	json_object_foreach (w->nodes, name, v)
		json_array_append(items, v);
	g->nodes =
		json_pack("{s:s,s:s,s:o}", "apiVersion", "v1", "kind", "NodeList", "items", items);
	g->n_nodes = json_array_size(items);
	if (w->cm_changed && w->configmap) {
		struct dpconfig_set *set = NULL;
		if (dpconfig_set_from_configmap(NULL, w->configmap, &set, &err) < 0) {
			wlog("configmap %s/%s: %s; judging with the last one that was valid%s",
			     w->cm_ns, w->cm_name, gs_error_str(&err, buf, sizeof(buf)),
			     w->cm_good ? "" : " (none: no node shares)");
		} else {
			json_decref(w->cm_good);
			w->cm_good = json_incref(w->configmap);
			dpconfig_set_free(set);
		}
	} else if (w->cm_changed) {
		json_decref(w->cm_good);
		w->cm_good = NULL;
	}
	w->cm_changed = false;
	if (w->cm_good) {
		g->configmap = json_incref(w->cm_good);
		if (dpconfig_set_from_configmap(NULL, g->configmap, &g->set, &err) < 0)
			g->set = NULL;
	}
	return g;
}

static void fleet_watch_release(struct fleet_watch *w)
{
	json_decref(w->nodes);
	json_decref(w->listed);
	json_decref(w->configmap);
	json_decref(w->cm_good);
}

static void loop_log(void *arg, const char *line)
{
	(void)arg;
	wlog("%s", line);
}

/* ---- the server ----------------------------------------------------------- */

struct server {
	pthread_mutex_t mu;
	struct fleet_gen *fleet; /* NULL until the first load */
	const struct catalog *cat;
	unsigned long reviews, refused, too_complex;
	double total_ms, max_ms;
	/* One review's tree at a time, however many daemons serve (a reload). */
	pthread_mutex_t parse_mu;
	struct httpguard *guard;
};

struct request {
	struct strbuf body; /* allocated once, to the size reserved */
	size_t reserved;    /* bytes of the guard's body budget held */
	bool too_big, over_budget;
};

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static enum MHD_Result reply_with(struct MHD_Connection *conn, unsigned code, char *text,
				  const char *type, const char *retry_after)
{
	struct MHD_Response *resp =
		MHD_create_response_from_buffer(strlen(text), text, MHD_RESPMEM_MUST_FREE);
	enum MHD_Result r;

	if (!resp) {
		free(text);
		return MHD_NO;
	}
	MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE, type);
	if (retry_after)
		MHD_add_response_header(resp, MHD_HTTP_HEADER_RETRY_AFTER, retry_after);
	r = MHD_queue_response(conn, code, resp);
	MHD_destroy_response(resp);
	return r;
}

static enum MHD_Result reply(struct MHD_Connection *conn, unsigned code, char *text,
			     const char *type)
{
	return reply_with(conn, code, text, type, NULL);
}

static enum MHD_Result reply_text(struct MHD_Connection *conn, unsigned code, const char *msg)
{
	return reply(conn, code, gs_xasprintf("%s\n", msg), "text/plain; charset=utf-8");
}

static void request_free_body(struct server *sv, struct request *rq)
{
	strbuf_release(&rq->body);
	httpguard_body_release(sv->guard, rq->reserved);
	rq->reserved = 0;
}

/*
 * Parse one review body under the tree's ceiling, then judge it; logs one line
 * per review on stderr. The body is freed once parsed: the tree is all that
 * is read after.
 */
static enum MHD_Result validate(struct server *sv, struct MHD_Connection *conn, struct request *rq)
{
	struct gs_error err;
	struct webhook_verdict v = {0};
	json_t *answer = NULL, *review = NULL;
	char buf[2048];
	double t0 = now_ms(), dt;
	int r;

	pthread_mutex_lock(&sv->parse_mu);
	json_meter_begin(WEBHOOK_MAX_TREE);
	r = webhook_review_parse(rq->body.buf, rq->body.len, &review, &err);
	bool over = json_meter_end(NULL);
	request_free_body(sv, rq);
	if (over) {
		json_decref(review);
		pthread_mutex_unlock(&sv->parse_mu);
		pthread_mutex_lock(&sv->mu);
		sv->too_complex++;
		pthread_mutex_unlock(&sv->mu);
		wlog("a review that takes more than %u MiB to read, refused",
		     WEBHOOK_MAX_TREE >> 20);
		snprintf(buf, sizeof(buf),
			 "gpushare webhook: the review takes more than %u MiB to read (its JSON "
			 "holds too many values)",
			 WEBHOOK_MAX_TREE >> 20);
		return reply_text(conn, MHD_HTTP_CONTENT_TOO_LARGE, buf);
	}
	if (r < 0) {
		pthread_mutex_unlock(&sv->parse_mu);
		gs_error_str(&err, buf, sizeof(buf));
		wlog("bad review: %s", buf);
		return reply_text(conn, MHD_HTTP_BAD_REQUEST, buf);
	}

	pthread_mutex_lock(&sv->mu);
	if (!sv->fleet) {
		pthread_mutex_unlock(&sv->mu);
		json_decref(review);
		pthread_mutex_unlock(&sv->parse_mu);
		return reply_text(conn, MHD_HTTP_SERVICE_UNAVAILABLE,
				  "gpushare webhook: the node list is not loaded yet");
	}
	struct webhook_fleet f = {
		.nodes = sv->fleet->nodes, .configs = sv->fleet->set, .cat = sv->cat};
	r = webhook_review_tree(&f, review, &answer, &v, &err);
	dt = now_ms() - t0;
	sv->reviews++;
	sv->total_ms += dt;
	if (dt > sv->max_ms)
		sv->max_ms = dt;
	if (r == 0 && !v.allowed)
		sv->refused++;
	pthread_mutex_unlock(&sv->mu);

	if (r < 0) {
		json_decref(review);
		pthread_mutex_unlock(&sv->parse_mu);
		gs_error_str(&err, buf, sizeof(buf));
		wlog("bad review: %s", buf);
		return reply_text(conn, MHD_HTTP_BAD_REQUEST, buf);
	}
	/* Only names and the verdict: a review may carry a pod's env values. */
	const char *ns = kobj_text(review, "request.namespace");
	const char *name = kobj_text(review, "request.name");
	if (!*name)
		name = kobj_text(review, "request.object.metadata.name");
	if (!*name)
		name = kobj_text(review, "request.object.metadata.generateName");
	/* The fields as names (quoted unless plain words), so none can pass for another. */
	char *op = escape_name_dup(kobj_text(review, "request.operation"));
	char *kind = escape_name_dup(kobj_text(review, "request.kind.kind"));
	char *ns_shown = escape_name_dup(ns), *name_shown = escape_name_dup(name);
	wlog("%s %s %s/%s: %s (%.3f ms)%s%s", op, kind, ns_shown, name_shown,
	     !v.judged	 ? "not judged"
	     : v.allowed ? "allowed"
			 : "refused",
	     dt, v.message ? ": " : "", v.message ? v.message : "");
	free(op);
	free(kind);
	free(ns_shown);
	free(name_shown);
	json_decref(review);
	pthread_mutex_unlock(&sv->parse_mu);
	webhook_verdict_release(&v);
	char *text = json_dumps(answer, JSON_COMPACT);
	json_decref(answer);
	if (!text)
		return MHD_NO;
	return reply(conn, MHD_HTTP_OK, text, "application/json");
}

static void server_log(void *arg, const char *line)
{
	(void)arg;
	wlog("%s", line);
}

static bool server_ready(void *arg)
{
	struct server *sv = arg;

	pthread_mutex_lock(&sv->mu);
	bool ready = sv->fleet != NULL;
	pthread_mutex_unlock(&sv->mu);
	return ready;
}

/* /metrics of --health-listen: the reviews, and the reviews' server's connections. */
static void server_metrics(void *arg, struct strbuf *out)
{
	struct server *sv = arg;

	pthread_mutex_lock(&sv->mu);
	strbuf_addf(out,
		    "# HELP gpushare_webhook_reviews_total Reviews judged (any verdict).\n"
		    "# TYPE gpushare_webhook_reviews_total counter\n"
		    "gpushare_webhook_reviews_total %lu\n"
		    "# HELP gpushare_webhook_refused_total Reviews refused.\n"
		    "# TYPE gpushare_webhook_refused_total counter\n"
		    "gpushare_webhook_refused_total %lu\n"
		    "# HELP gpushare_webhook_too_complex_total Reviews answered 413: their JSON "
		    "takes more than %u MiB to read.\n"
		    "# TYPE gpushare_webhook_too_complex_total counter\n"
		    "gpushare_webhook_too_complex_total %lu\n"
		    "# HELP gpushare_webhook_review_seconds_max The slowest review.\n"
		    "# TYPE gpushare_webhook_review_seconds_max gauge\n"
		    "gpushare_webhook_review_seconds_max %.6f\n",
		    sv->reviews, sv->refused, WEBHOOK_MAX_TREE >> 20, sv->too_complex,
		    sv->max_ms / 1e3);
	pthread_mutex_unlock(&sv->mu);
	httpguard_metrics(sv->guard, "webhook", out);
}

static enum MHD_Result handle(void *cls, struct MHD_Connection *conn, const char *url,
			      const char *method, const char *version, const char *upload_data,
			      size_t *upload_data_size, void **con_cls)
{
	struct server *sv = cls;
	struct request *rq = *con_cls;

	(void)version;
	if (!rq)
		httpguard_headers_in(sv->guard, conn);
	bool get = !strcmp(method, "GET") || !strcmp(method, "HEAD");
	if (get && (!strcmp(url, "/healthz") || !strcmp(url, "/readyz"))) {
		if (!strcmp(url, "/healthz") || server_ready(sv))
			return reply_text(conn, MHD_HTTP_OK, "ok");
		return reply_text(conn, MHD_HTTP_SERVICE_UNAVAILABLE,
				  "the node list is not loaded yet");
	}
	if (strcmp(url, "/validate"))
		return reply_text(conn, MHD_HTTP_NOT_FOUND, "not found");
	if (strcmp(method, "POST"))
		return reply_text(conn, MHD_HTTP_METHOD_NOT_ALLOWED, "POST only");
	if (!rq) {
		const char *cl =
			MHD_lookup_connection_value(conn, MHD_HEADER_KIND, "Content-Length");
		/* Without a length (chunked), room for the largest body is held. */
		unsigned long long want = cl ? strtoull(cl, NULL, 10) : WEBHOOK_MAX_BODY;
		if (want > WEBHOOK_MAX_BODY)
			return reply_text(conn, MHD_HTTP_CONTENT_TOO_LARGE,
					  "the review is larger than the webhook reads");
		rq = gs_xcalloc(1, sizeof(*rq));
		/* Over the budget: the body is read and dropped, then 503 (no reset mid-upload). */
		if (httpguard_body_reserve(sv->guard, (size_t)want) < 0) {
			rq->over_budget = true;
		} else {
			rq->reserved = (size_t)want;
			strbuf_init(&rq->body, rq->reserved);
		}
		*con_cls = rq;
		return MHD_YES;
	}
	if (*upload_data_size) {
		if (rq->over_budget || rq->too_big)
			;
		else if (rq->body.len + *upload_data_size <= rq->reserved)
			strbuf_add(&rq->body, upload_data, *upload_data_size);
		else {
			rq->too_big = true;
			request_free_body(sv, rq);
		}
		*upload_data_size = 0;
		return MHD_YES;
	}
	/* Busy: client-go's rest client waits Retry-After and sends the request again. */
	if (rq->over_budget)
		return reply_with(conn, MHD_HTTP_SERVICE_UNAVAILABLE,
				  gs_xasprintf("gpushare webhook: busy: other reviews' bodies fill "
					       "its memory budget; try again\n"),
				  "text/plain; charset=utf-8", "1");
	if (rq->too_big)
		return reply_text(conn, MHD_HTTP_CONTENT_TOO_LARGE,
				  "the review is larger than the webhook reads");
	return validate(sv, conn, rq);
}

static void completed(void *cls, struct MHD_Connection *conn, void **con_cls,
		      enum MHD_RequestTerminationCode toe)
{
	struct server *sv = cls;
	struct request *rq = *con_cls;

	(void)toe;
	if (rq) {
		request_free_body(sv, rq);
		free(rq);
		*con_cls = NULL;
	}
	httpguard_request_done(sv->guard, conn);
}

/* The certificate files as last read, and how to tell they changed. */
struct tls_files {
	const char *cert_path, *key_path;
	char *cert, *key;
	struct stat cert_st, key_st;
};

static bool same_stat(const struct stat *a, const struct stat *b)
{
	return a->st_ino == b->st_ino && a->st_size == b->st_size &&
	       a->st_mtim.tv_sec == b->st_mtim.tv_sec && a->st_mtim.tv_nsec == b->st_mtim.tv_nsec;
}

/* Read both files; 1 when they differ from what `t` holds (then t has them), 0 same. */
static int tls_read(struct tls_files *t, bool force, struct gs_error *err)
{
	struct stat cs, ks;
	char *cert = NULL, *key = NULL;
	size_t len;

	/* stat(2) follows the symlinks a mounted Secret swaps (..data). */
	if (stat(t->cert_path, &cs) < 0) {
		gs_error_set(err, "%s: %s", t->cert_path, strerror(errno));
		return -1;
	}
	if (stat(t->key_path, &ks) < 0) {
		gs_error_set(err, "%s: %s", t->key_path, strerror(errno));
		return -1;
	}
	if (!force && same_stat(&cs, &t->cert_st) && same_stat(&ks, &t->key_st))
		return 0;
	if (gs_read_file(t->cert_path, WEBHOOK_MAX_PEM, &cert, &len, err) < 0)
		return -1;
	if (gs_read_file(t->key_path, WEBHOOK_MAX_PEM, &key, &len, err) < 0) {
		free(cert);
		return -1;
	}
	free(t->cert);
	free(t->key);
	t->cert = cert;
	t->key = key;
	t->cert_st = cs;
	t->key_st = ks;
	return 1;
}

static struct MHD_Daemon *start_daemon(struct server *sv, const struct sockaddr_in *addr,
				       MHD_socket listen_fd, const char *cert, const char *key)
{
	unsigned flags =
		MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_TLS | MHD_USE_ITC | MHD_USE_ERROR_LOG;
	struct MHD_OptionItem opts[HTTPGUARD_MHD_OPTIONS + 6];
	/* The guard's first: its logger must be the first option libmicrohttpd reads. */
	size_t n = httpguard_mhd_options(sv->guard, opts);

	opts[n++] = (struct MHD_OptionItem){MHD_OPTION_HTTPS_MEM_CERT, 0, (void *)cert};
	opts[n++] = (struct MHD_OptionItem){MHD_OPTION_HTTPS_MEM_KEY, 0, (void *)key};
	opts[n++] =
		(struct MHD_OptionItem){MHD_OPTION_HTTPS_PRIORITIES, 0,
					(void *)"NORMAL:-VERS-SSL3.0:-VERS-TLS1.0:-VERS-TLS1.1"};
	opts[n++] = (struct MHD_OptionItem){MHD_OPTION_NOTIFY_COMPLETED, (intptr_t)completed, sv};
	opts[n++] = listen_fd != MHD_INVALID_SOCKET
			    ? (struct MHD_OptionItem){MHD_OPTION_LISTEN_SOCKET, listen_fd, NULL}
			    : (struct MHD_OptionItem){MHD_OPTION_SOCK_ADDR, 0, (void *)addr};
	opts[n] = (struct MHD_OptionItem){MHD_OPTION_END, 0, NULL};
	return MHD_start_daemon(flags, ntohs(addr->sin_port), NULL, NULL, handle, sv,
				MHD_OPTION_ARRAY, opts, MHD_OPTION_END);
}

/* Whether GnuTLS takes the pair: a daemon with no socket and no thread, stopped at once. */
static bool tls_pair_loads(const char *cert, const char *key)
{
	struct MHD_Daemon *probe = MHD_start_daemon(
		MHD_USE_TLS | MHD_USE_NO_LISTEN_SOCKET, 0, NULL, NULL, handle, NULL,
		MHD_OPTION_HTTPS_MEM_CERT, cert, MHD_OPTION_HTTPS_MEM_KEY, key, MHD_OPTION_END);

	if (!probe)
		return false;
	MHD_stop_daemon(probe);
	return true;
}

/*
 * Hand the listening socket to a daemon with the new pair (MHD_quiesce_daemon:
 * the old one accepts nothing more and finishes what it has). A pair that
 * does not load is never tried: the old daemon goes on. -1 only when no
 * daemon serves any more.
 */
static int reload(struct server *sv, const struct sockaddr_in *addr, struct MHD_Daemon **d,
		  const struct tls_files *tls, const char *oc, const char *ok)
{
	struct MHD_Daemon *nd;
	MHD_socket fd, spare;

	if (!tls_pair_loads(tls->cert, tls->key)) {
		wlog("the new certificate or key does not load (%s, %s); keeping the old pair",
		     tls->cert_path, tls->key_path);
		return 0;
	}
	fd = MHD_quiesce_daemon(*d);
	if (fd == MHD_INVALID_SOCKET) {
		wlog("cannot hand the socket over; keeping the old certificate");
		return 0;
	}
	/* A daemon that fails to start closes the socket it was given: keep a copy. */
	spare = dup(fd);
	nd = start_daemon(sv, addr, fd, tls->cert, tls->key);
	if (nd) {
		wlog("certificate reloaded");
		if (spare >= 0)
			close(spare);
	} else {
		wlog("the new pair did not start; keeping the old one");
		nd = spare >= 0 ? start_daemon(sv, addr, spare, oc, ok) : NULL;
	}
	MHD_stop_daemon(*d);
	*d = nd;
	return nd ? 0 : -1;
}

/* --review: one AdmissionReview from a file, the answer on stdout. */
static int review_once(const char *path, const struct fleet_gen *g, const struct catalog *cat)
{
	struct gs_error err;
	struct webhook_verdict v = {0};
	struct webhook_fleet f = {
		.nodes = g ? g->nodes : NULL, .configs = g ? g->set : NULL, .cat = cat};
	json_t *answer = NULL;
	char *body, buf[2048];
	size_t len;
	int rc;

	if (gs_read_file(path, WEBHOOK_MAX_BODY, &body, &len, &err) < 0 ||
	    webhook_review(&f, body, len, &answer, &v, &err) < 0) {
		if (!strcmp(err.file, "review"))
			snprintf(err.file, sizeof(err.file), "%s", path);
		wlog("%s", gs_error_str(&err, buf, sizeof(buf)));
		free(body);
		return EXIT_USAGE;
	}
	free(body);
	char *text = json_dumps(answer, JSON_INDENT(2));
	printf("%s\n", text ? text : "");
	free(text);
	rc = v.allowed ? EXIT_OK : EXIT_FINDING;
	json_decref(answer);
	webhook_verdict_release(&v);
	return rc;
}

static void swap_fleet(struct server *sv, struct fleet_gen *g)
{
	struct fleet_gen *old;

	pthread_mutex_lock(&sv->mu);
	old = sv->fleet;
	sv->fleet = g;
	pthread_mutex_unlock(&sv->mu);
	fleet_gen_free(old);
}

/* SIGINT and SIGTERM end the serving loop; a peer gone mid-write is no signal. */
static void stop_on_signals(void)
{
	struct sigaction sa = {0};

	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
}

/* Watch the Nodes and the ConfigMap into fw, on a new *loop (the caller frees both). */
static int watch_fleet(struct kube_client *kc, const struct configmap_ref *cmref,
		       struct fleet_watch *fw, struct kube_loop **loop, struct gs_error *err)
{
	static const struct kube_watch_ops node_ops = {
		.list_begin = nodes_list_begin, .event = nodes_event, .list_end = nodes_list_end};
	static const struct kube_watch_ops cm_ops = {
		.list_begin = cm_list_begin, .event = cm_event, .list_end = cm_list_end};
	struct kube_loop_opts lo = {.log = loop_log};
	char *path, *field;
	int r;

	fw->nodes = json_object();
	fw->cm_ns = cmref->ns;
	fw->cm_name = cmref->name;
	path = gs_xasprintf("/api/v1/namespaces/%s/configmaps", cmref->ns);
	field = gs_xasprintf("metadata.name=%s", cmref->name);
	r = kube_loop_new(loop, kube_client_conn(kc), &lo, err);
	if (r == 0 &&
	    (kube_loop_watch(*loop, "/api/v1/nodes", NULL, NULL, &node_ops, fw, NULL) < 0 ||
	     kube_loop_watch(*loop, path, NULL, field, &cm_ops, fw, NULL) < 0)) {
		gs_error_set(err, "cannot watch %s (bad namespace or name?)", path);
		r = -1;
	}
	free(path);
	free(field);
	return r < 0 ? -1 : 0;
}

/*
 * Serve until a signal: step the watches (when there is a loop), rebuild the
 * fleet from them at most once a second, and take a certificate changed on
 * disk. 0 when stopped, -1 with err when serving cannot go on.
 */
static int serve(struct server *sv, const struct sockaddr_in *addr, struct MHD_Daemon **d,
		 struct tls_files *tls, struct kube_loop *loop, struct fleet_watch *fw,
		 const struct configmap_ref *cmref, const char *bind, long port,
		 struct gs_error *err)
{
	char buf[2048];
	double next_build = 0, next_tls = now_ms() + 1000;

	while (!stopping) {
		double t = now_ms();
		if (loop) {
			if (kube_loop_step(loop, NULL, 0, NULL, WEBHOOK_TICK_MS, err) < 0)
				return -1;
			t = now_ms();
		}
		if (loop && fw->dirty && fw->nodes_synced && fw->cm_synced && t >= next_build) {
			bool first = !sv->fleet;
			struct fleet_gen *ng = fleet_from_watch(fw);
			fw->dirty = false;
			if (first)
				wlog("%zu nodes, ConfigMap %s/%s %s", ng->n_nodes, cmref->ns,
				     cmref->name, fw->configmap ? "read" : "absent");
			swap_fleet(sv, ng);
			next_build = t + 1000;
		}
		if (t >= next_tls) {
			char *oc = gs_xstrdup(tls->cert), *ok = gs_xstrdup(tls->key);
			int ch = tls_read(tls, false, err);
			if (ch < 0)
				wlog("%s (keeping the certificate)",
				     gs_error_str(err, buf, sizeof(buf)));
			else if (ch > 0 && reload(sv, addr, d, tls, oc, ok) < 0) {
				gs_error_set(err, "cannot serve again on %s:%ld", bind, port);
				free(oc);
				free(ok);
				return -1;
			}
			free(oc);
			free(ok);
			next_tls = t + 1000;
		}
		if (!loop) {
			struct timespec ts = {0, WEBHOOK_TICK_MS * 1000000L};
			nanosleep(&ts, NULL);
		}
	}
	return 0;
}

int cmd_webhook(int argc, char **argv)
{
	struct kube_context kx = {0};
	struct gs_error err;
	char buf[2048];
	const char *cert_path = NULL, *key_path = NULL, *bind = "0.0.0.0", *cm_arg = NULL;
	const char *review_path = NULL, *health_listen = NULL;
	long port = 8443;
	struct configmap_ref cmref;
	struct fleet_sources src = {0};
	const struct catalog *cat = NULL;
	struct fleet_gen *g = NULL;
	struct tls_files tls = {0};
	struct MHD_Daemon *d = NULL;
	struct opsserver *health = NULL;
	struct server sv = {0};
	struct kube_loop *loop = NULL;
	struct fleet_watch fw = {0};
	bool mu_init = false;
	int rc = EXIT_USAGE, n;
	struct option opts[] = {
		OPT_STRING(0, "tls-cert-file", &cert_path, "FILE",
			   "the serving certificate (PEM, chain allowed)"),
		OPT_STRING(0, "tls-private-key-file", &key_path, "FILE", "its private key (PEM)"),
		OPT_STRING(0, "bind-address", &bind, "IPV4", "address to listen on [0.0.0.0]"),
		OPT_INT(0, "port", &port, "N", "HTTPS port [8443]", 1, 65535),
		OPT_STRING(0, "health-listen", &health_listen, "HOST:PORT",
			   "serve /healthz, /readyz and /metrics over plain\nHTTP there, in a "
			   "thread of their own [off]"),
		OPT_STRING(0, "configmap", &cm_arg, "NS/NAME",
			   "device-plugin ConfigMap [" GS_DEFAULT_CONFIGMAP_REF
			   "];\nwith -f, the ConfigMap of that name among the files"),
		OPT_STRING(0, "review", &review_path, "FILE",
			   "judge one AdmissionReview (JSON, - = stdin), print\nthe answer, exit"),
		OPT_FLEET_SOURCES(&src),
		OPT_GROUP("Older form, the same as -f FILE:"),
		OPT_CALLBACK(0, "nodes", &src, "FILE", "", parse_fleet_source),
		OPT_KUBE_CONNECTION(&kx.opts),
		OPT_END(),
	};

	/* Before any thread: each review's parse is bounded (WEBHOOK_MAX_TREE). */
	json_meter_install();
	configmap_ref_init(&cmref);
	n = parse_options(argc, argv, opts, &webhook_usage);
	if (n < 0) {
		rc = parseopt_exit(n);
		goto out;
	}
	if (n > 0) {
		gs_error_set(&err, "unexpected argument '%s'", argv[0]);
		goto usage_error;
	}
	if (!review_path && (!cert_path || !key_path)) {
		gs_error_set(&err, "the server needs --tls-cert-file and --tls-private-key-file");
		goto usage_error;
	}
	struct sockaddr_in addr = {0};
	addr.sin_family = AF_INET;
	addr.sin_port = htons((uint16_t)port);
	if (inet_pton(AF_INET, bind, &addr.sin_addr) != 1) {
		gs_error_set(&err, "option '--bind-address' expects an IPv4 address, got '%s'",
			     bind);
		goto usage_error;
	}
	if (cm_arg && configmap_ref_parse(&cmref, cm_arg, &err) < 0)
		goto usage_error;
	if (catalog_builtin(&cat, &err) < 0)
		goto fail;

	if (src.n) {
		if (fleet_load_files(&src, &cmref, &g, &err) < 0)
			goto fail;
	} else if (!review_path || cm_arg) {
		/* Serving runs until stopped; --review is one-shot. */
		kx.retry_unreachable = !review_path;
		if (kube_context_open(&kx, "webhook", &err) < 0)
			goto fail;
	}
	if (review_path) {
		if (!g && kx.client &&
		    fleet_load_live(kx.client, cmref.ns, cmref.name, &g, &err) < 0)
			goto fail;
		rc = review_once(review_path, g, cat);
		goto out;
	}

	tls.cert_path = cert_path;
	tls.key_path = key_path;
	if (tls_read(&tls, true, &err) < 0)
		goto fail;
	if (!MHD_is_feature_supported(MHD_FEATURE_TLS)) {
		gs_error_set(&err, "this libmicrohttpd has no TLS support");
		goto fail;
	}
	pthread_mutex_init(&sv.mu, NULL);
	pthread_mutex_init(&sv.parse_mu, NULL);
	sv.guard = httpguard_new(&webhook_limits, server_log, NULL);
	mu_init = true;
	sv.cat = cat;
	if (g) {
		sv.fleet = g;
		g = NULL;
	}
	stop_on_signals();

	/* First, so a bad --health-listen is said before the reviews are served. */
	if (health_listen) {
		struct opsserver_opts oo = {.ready = server_ready,
					    .metrics = server_metrics,
					    .arg = &sv,
					    .own_thread = true,
					    .name = "health",
					    .flag = "--health-listen",
					    .log = server_log};
		if (opsserver_start(&health, health_listen, &oo, &err) < 0) {
			rc = usage_error(&webhook_usage, &err);
			goto out;
		}
		wlog("serving /healthz, /readyz and /metrics on http://%s", health_listen);
	}
	d = start_daemon(&sv, &addr, MHD_INVALID_SOCKET, tls.cert, tls.key);
	if (!d) {
		gs_error_set(&err,
			     "cannot serve HTTPS on %s:%ld (port in use, or a certificate and key "
			     "that do not load or do not match: %s, %s)",
			     bind, port, cert_path, key_path);
		goto fail;
	}
	wlog("serving https://%s:%ld/validate", bind, port);
	if (httpguard_start_thread(sv.guard, &err) < 0)
		goto fail;

	if (kx.client && watch_fleet(kx.client, &cmref, &fw, &loop, &err) < 0)
		goto fail;

	if (serve(&sv, &addr, &d, &tls, loop, &fw, &cmref, bind, port, &err) < 0)
		goto fail;
	wlog("stopping: %lu reviews, %lu refused, %.3f ms mean, "
	     "%.3f ms max",
	     sv.reviews, sv.refused, sv.reviews ? sv.total_ms / (double)sv.reviews : 0.0,
	     sv.max_ms);
	rc = EXIT_OK;
	goto out;

fail:
	wlog("%s", gs_error_str(&err, buf, sizeof(buf)));
	rc = EXIT_USAGE;
	goto out;
usage_error:
	rc = usage_error(&webhook_usage, &err);
out:
	opsserver_stop(health);
	if (d)
		MHD_stop_daemon(d);
	kube_loop_free(loop);
	fleet_watch_release(&fw);
	if (mu_init) {
		httpguard_free(sv.guard);
		fleet_gen_free(sv.fleet);
		pthread_mutex_destroy(&sv.parse_mu);
		pthread_mutex_destroy(&sv.mu);
	}
	fleet_gen_free(g);
	free(tls.cert);
	free(tls.key);
	configmap_ref_release(&cmref);
	fleet_sources_release(&src);
	kube_context_release(&kx);
	return rc;
}
