/*
 * The soak's world: the nodes, namespaces and device-plugin configs it
 * plays with, the generator of steps (weighted kinds, seeded), and each
 * step applied through the apiserver, `gpushare fault` or the cluster's
 * component script.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "model/kobj.h"
#include "model/names.h"
#include "model/nodehw.h"
#include "base/splitmix.h"
#include "tests/soak/soak.h"

const char *const soak_namespaces[SOAK_NS_N] = {"soak-a", "soak-b", "soak-c"};

const char *const soak_kind_names[K_N] = {
	[K_POD] = "pod",
	[K_DELETE_POD] = "delete-pod",
	[K_DEPLOY] = "deploy",
	[K_SCALE] = "scale",
	[K_DELETE_DEPLOY] = "delete-deploy",
	[K_JOB] = "job",
	[K_DELETE_JOB] = "delete-job",
	[K_CM_REPLICAS] = "cm-replicas",
	[K_CM_SHARING] = "cm-sharing",
	[K_CM_FAIL1] = "cm-fail1",
	[K_CM_MIG] = "cm-mig",
	[K_NODE_CONFIG] = "node-config",
	[K_MIG] = "mig",
	[K_MIG_UNSTALL] = "mig-unstall",
	[K_FAULT_GPU] = "fault-gpu",
	[K_FAULT_CLEAR] = "fault-clear",
	[K_RESTART_PLUGIN] = "restart-plugin",
	[K_KUBELET] = "kubelet",
	[K_GC] = "gc",
	[K_KILL_CONTROLLER] = "kill-controller",
	[K_RESTART_APISERVER] = "restart-apiserver",
};

/* Weights per 10,000 steps. */
static const int kind_weight[K_N] = {
	[K_POD] = 2300,	       [K_DELETE_POD] = 1700,	 [K_DEPLOY] = 350,
	[K_SCALE] = 450,       [K_DELETE_DEPLOY] = 250,	 [K_JOB] = 550,
	[K_DELETE_JOB] = 100,  [K_CM_REPLICAS] = 400,	 [K_CM_SHARING] = 200,
	[K_CM_FAIL1] = 100,    [K_CM_MIG] = 150,	 [K_NODE_CONFIG] = 200,
	[K_MIG] = 400,	       [K_MIG_UNSTALL] = 150,	 [K_FAULT_GPU] = 600,
	[K_FAULT_CLEAR] = 400, [K_RESTART_PLUGIN] = 400, [K_KUBELET] = 100,
	[K_GC] = 50,	       [K_KILL_CONTROLLER] = 60, [K_RESTART_APISERVER] = 5,
};

/* Soak pods at most; above it a creation becomes a deletion. */
#define POD_CAP 36

/* ---- the fleet -------------------------------------------------------------------------- */

struct node_def {
	const char *name, *product;
	int count;
	const char *config;	    /* its nvidia.com/device-plugin.config at first */
	const char *mig;	    /* its nvidia.com/mig.config at first; NULL = none */
	const char *const *layouts; /* what `mig` steps pick from; NULL = not a MIG node */
};

static const char *const layouts_80[] = {
	"all-1g.10gb",	"all-2g.20gb", "all-3g.40gb", "all-balanced",
	"all-disabled", "all-7g.80gb", "all-1g.5gb",  NULL};
static const char *const layouts_40[] = {
	"all-1g.5gb",	"all-2g.10gb", "all-3g.20gb", "all-balanced",
	"all-disabled", "all-7g.40gb", NULL};

#define NODE_N 5
static const struct node_def node_defs[NODE_N] = {
	{"soak-t4", "Tesla T4", 2, "soak-ts", NULL, NULL},
	{"soak-a10", "NVIDIA A10", 2, "soak-mps", NULL, NULL},
	{"soak-a100", "NVIDIA A100-SXM4-80GB", 2, "soak-whole", NULL, NULL},
	{"soak-mig", "NVIDIA A100-SXM4-80GB", 1, "soak-mig", "all-1g.10gb", layouts_80},
	{"soak-mig2", "NVIDIA A100-SXM4-40GB", 2, "soak-mig2", "all-2g.10gb", layouts_40},
};

/* The plain nodes' config keys a node-config step picks from ("soak-missing" is no key). */
static const char *const plain_keys[] = {"soak-ts", "soak-mps", "soak-whole", "soak-missing"};

enum sharing { SH_NONE, SH_TS, SH_MPS };
static const char *const sharing_names[] = {"none", "time-slicing", "mps"};
static const char *const mig_names[] = {"none", "single", "mixed"};

struct cfgkey {
	const char *key;
	int sharing, replicas, fail1, mig;
};

#define KEY_N 5
static const struct cfgkey key_defs[KEY_N] = {
	{"soak-ts", SH_TS, 4, 1, 0},	  {"soak-mps", SH_MPS, 2, 0, 0},
	{"soak-whole", SH_NONE, 4, 0, 0}, {"soak-mig", SH_NONE, 4, 0, 2},
	{"soak-mig2", SH_NONE, 4, 0, 1},
};

/* What pods ask for, with weights. */
static const struct {
	const char *res;
	int n, weight;
} shapes[] = {
	{"nvidia.com/gpu", 1, 40},	   {"nvidia.com/gpu", 2, 8},
	{"nvidia.com/mig-1g.10gb", 1, 14}, {"nvidia.com/mig-2g.20gb", 1, 5},
	{"nvidia.com/mig-3g.40gb", 1, 5},  {"nvidia.com/mig-1g.5gb", 1, 6},
	{"nvidia.com/mig-2g.10gb", 1, 5},  {"nvidia.com/mig-3g.20gb", 1, 3},
};
#define SHAPE_N (sizeof(shapes) / sizeof(shapes[0]))

struct workload {
	char ns[16], name[24];
	int replicas;
	bool job;
};

struct world {
	struct splitmix rng;
	unsigned serial;
	struct cfgkey keys[KEY_N];
	char config[NODE_N][24]; /* each node's config label */
	char mig[NODE_N][24];	 /* each MIG node's layout label */
	bool stalled[NODE_N];
	long long restarted[NODE_N]; /* the last restart-plugin stamp (Unix seconds) */
	char health[NODE_N][2][16];  /* each GPU's gpushare.io/gpu-health entry, "" = healthy */
	struct workload *wl;
	size_t n_wl, cap_wl;
	unsigned seen_kinds; /* bit per kind applied */
	bool missing_key;    /* node-config may name a key the ConfigMap lacks */
};

/* ---- random ----------------------------------------------------------------------------- */

static int pick(struct world *w, int n)
{
	return n <= 0 ? 0 : (int)(splitmix_next(&w->rng) % (uint64_t)n);
}

static bool chance(struct world *w, int percent)
{
	return pick(w, 100) < percent;
}

/* ---- the model -------------------------------------------------------------------------- */

struct world *world_new(uint64_t seed)
{
	struct world *w = gs_xcalloc(1, sizeof(*w));

	w->rng.s = seed;
	world_reset(w);
	return w;
}

void world_free(struct world *w)
{
	if (!w)
		return;
	free(w->wl);
	free(w);
}

void world_reset(struct world *w)
{
	memcpy(w->keys, key_defs, sizeof(w->keys));
	for (int i = 0; i < NODE_N; i++) {
		snprintf(w->config[i], sizeof(w->config[i]), "%s", node_defs[i].config);
		snprintf(w->mig[i], sizeof(w->mig[i]), "%s",
			 node_defs[i].mig ? node_defs[i].mig : "");
		w->stalled[i] = false;
		memset(w->health[i], 0, sizeof(w->health[i]));
	}
	w->n_wl = 0;
}

static int node_index(const char *name)
{
	for (int i = 0; i < NODE_N; i++)
		if (!strcmp(node_defs[i].name, name))
			return i;
	return -1;
}

static struct cfgkey *key_of(struct world *w, const char *key)
{
	for (int i = 0; i < KEY_N; i++)
		if (!strcmp(w->keys[i].key, key))
			return &w->keys[i];
	return NULL;
}

static struct workload *workload_of(struct world *w, const char *ns, const char *name)
{
	for (size_t i = 0; i < w->n_wl; i++)
		if (!strcmp(w->wl[i].ns, ns) && !strcmp(w->wl[i].name, name))
			return &w->wl[i];
	return NULL;
}

/* A line split at blanks: at most 8 words, pointing into buf. */
struct words {
	char buf[512];
	char *w[8];
	int n;
};

static void split(const char *line, struct words *ws)
{
	char *p;

	snprintf(ws->buf, sizeof(ws->buf), "%s", line);
	ws->n = 0;
	p = ws->buf;
	while (*p && ws->n < 8) {
		while (*p == ' ')
			*p++ = '\0';
		if (!*p)
			break;
		ws->w[ws->n++] = p;
		while (*p && *p != ' ')
			p++;
	}
	for (int i = ws->n; i < 8; i++)
		ws->w[i] = "";
}

void world_allow_missing_key(struct world *w, bool on)
{
	w->missing_key = on;
}

unsigned world_seen(const struct world *w)
{
	return w->seen_kinds;
}

int soak_kind_of(const char *line)
{
	struct words ws;

	split(line, &ws);
	for (int k = 0; k < K_N; k++)
		if (ws.n && !strcmp(ws.w[0], soak_kind_names[k]))
			return k;
	return -1;
}

void world_note(struct world *w, const char *line)
{
	struct words ws;
	struct cfgkey *k;
	struct workload *wl;
	int kind = soak_kind_of(line), i;

	split(line, &ws);
	if (kind >= 0)
		w->seen_kinds |= 1u << kind;
	switch (kind) {
	case K_DEPLOY:
	case K_JOB:
		if (workload_of(w, ws.w[1], ws.w[2]))
			break;
		if (w->n_wl == w->cap_wl) {
			w->cap_wl = w->cap_wl ? 2 * w->cap_wl : 16;
			w->wl = gs_xrealloc(w->wl, w->cap_wl * sizeof(*w->wl));
		}
		wl = &w->wl[w->n_wl++];
		memset(wl, 0, sizeof(*wl));
		snprintf(wl->ns, sizeof(wl->ns), "%s", ws.w[1]);
		snprintf(wl->name, sizeof(wl->name), "%s", ws.w[2]);
		wl->replicas = atoi(ws.w[3]);
		wl->job = kind == K_JOB;
		break;
	case K_SCALE:
		if ((wl = workload_of(w, ws.w[1], ws.w[2])))
			wl->replicas = atoi(ws.w[3]);
		break;
	case K_DELETE_DEPLOY:
	case K_DELETE_JOB:
		if ((wl = workload_of(w, ws.w[1], ws.w[2])))
			*wl = w->wl[--w->n_wl];
		break;
	case K_CM_REPLICAS:
		if ((k = key_of(w, ws.w[1])))
			k->replicas = atoi(ws.w[2]);
		break;
	case K_CM_SHARING:
		if ((k = key_of(w, ws.w[1])))
			for (int s = 0; s < 3; s++)
				if (!strcmp(ws.w[2], sharing_names[s]))
					k->sharing = s;
		break;
	case K_CM_FAIL1:
		if ((k = key_of(w, ws.w[1])))
			k->fail1 = !strcmp(ws.w[2], "true");
		break;
	case K_CM_MIG:
		if ((k = key_of(w, ws.w[1])))
			for (int s = 0; s < 3; s++)
				if (!strcmp(ws.w[2], mig_names[s]))
					k->mig = s;
		break;
	case K_NODE_CONFIG:
		if ((i = node_index(ws.w[1])) >= 0)
			snprintf(w->config[i], sizeof(w->config[i]), "%s", ws.w[2]);
		break;
	case K_MIG:
		if ((i = node_index(ws.w[1])) >= 0) {
			snprintf(w->mig[i], sizeof(w->mig[i]), "%s", ws.w[2]);
			w->stalled[i] = !strcmp(ws.w[4], "stall");
		}
		break;
	case K_MIG_UNSTALL:
		if ((i = node_index(ws.w[1])) >= 0)
			w->stalled[i] = false;
		break;
	case K_FAULT_GPU:
		if ((i = node_index(ws.w[1])) >= 0) {
			int g = atoi(ws.w[2]);
			const char *eq = strchr(ws.w[2], '=');
			if (g >= 0 && g < 2 && eq)
				snprintf(w->health[i][g], sizeof(w->health[i][g]), "%s", eq + 1);
		}
		break;
	case K_FAULT_CLEAR:
		if ((i = node_index(ws.w[1])) >= 0) {
			for (int g = 0; g < 2; g++)
				if (!*ws.w[2] || atoi(ws.w[2]) == g)
					w->health[i][g][0] = '\0';
		}
		break;
	default:
		break;
	}
}

/* ---- the generator ---------------------------------------------------------------------- */

/* The soak's pods not being deleted (into out), and how many of them still run or wait. */
static size_t soak_pods(const json_t *pods, const json_t **out, size_t max, size_t *live)
{
	size_t n = 0, i;
	json_t *p;

	*live = 0;
	json_array_foreach ((json_t *)pods, i, p) {
		const char *phase = kobj_text(p, "status.phase");
		if (!soak_pod(p) || kobj_string(p, "metadata.deletionTimestamp"))
			continue;
		if (n < max)
			out[n++] = p;
		*live += strcmp(phase, "Succeeded") && strcmp(phase, "Failed");
	}
	return n;
}

/*
 * A pod's request. A workload's pods ask for one device: a ReplicaSet whose
 * pods a node refuses makes new ones at once, a storm that would fill the
 * run (real, and no different from one refused pod to the invariants).
 */
static void add_shape(struct world *w, struct strbuf *sb, bool one)
{
	int total = 0, r;
	size_t i;

	for (i = 0; i < SHAPE_N; i++)
		total += one && shapes[i].n > 1 ? 0 : shapes[i].weight;
	r = pick(w, total);
	for (i = 0; i < SHAPE_N - 1; i++) {
		int wt = one && shapes[i].n > 1 ? 0 : shapes[i].weight;
		if (r < wt)
			break;
		r -= wt;
	}
	strbuf_addf(sb, " %s=%d", shapes[i].res, shapes[i].n);
}

static const char *any_ns(struct world *w)
{
	return soak_namespaces[pick(w, SOAK_NS_N)];
}

static int pick_kind(struct world *w)
{
	int total = 0, r, k;

	for (k = 0; k < K_N; k++)
		total += kind_weight[k];
	r = pick(w, total);
	for (k = 0; k < K_N - 1 && r >= kind_weight[k]; k++)
		r -= kind_weight[k];
	return k;
}

static struct workload *pick_workload(struct world *w, bool job)
{
	size_t n = 0;

	for (size_t i = 0; i < w->n_wl; i++)
		n += w->wl[i].job == job;
	if (!n)
		return NULL;
	n = (size_t)pick(w, (int)n);
	for (size_t i = 0; i < w->n_wl; i++)
		if (w->wl[i].job == job && n-- == 0)
			return &w->wl[i];
	return NULL;
}

char *world_next(struct world *w, const json_t *pods, int force)
{
	struct strbuf sb = STRBUF_INIT;
	const json_t *mine[256];
	size_t live, n_mine = soak_pods(pods, mine, 256, &live);
	int kind = force >= 0 ? force : pick_kind(w), i;
	struct workload *wl;
	struct cfgkey *k;

again:
	/* Full: make room instead. */
	if (force < 0 && live >= POD_CAP &&
	    (kind == K_POD || kind == K_DEPLOY || kind == K_JOB || kind == K_SCALE))
		kind = K_DELETE_POD;
	switch (kind) {
	case K_POD:
		strbuf_addf(&sb, "pod %s p%u", any_ns(w), ++w->serial);
		add_shape(w, &sb, false);
		if (chance(w, 30))
			strbuf_addf(&sb, " on=%s", node_defs[pick(w, NODE_N)].name);
		break;
	case K_DELETE_POD:
		if (!n_mine) {
			kind = K_POD;
			goto again;
		}
		i = pick(w, (int)n_mine);
		strbuf_addf(&sb, "delete-pod %s %s", kobj_namespace(mine[i]), kobj_name(mine[i]));
		break;
	case K_DEPLOY:
		strbuf_addf(&sb, "deploy %s d%u %d", any_ns(w), ++w->serial, 1 + pick(w, 3));
		add_shape(w, &sb, true);
		break;
	case K_SCALE:
		if (!(wl = pick_workload(w, false))) {
			kind = K_DEPLOY;
			goto again;
		}
		strbuf_addf(&sb, "scale %s %s %d", wl->ns, wl->name, pick(w, 4));
		break;
	case K_DELETE_DEPLOY:
		if (!(wl = pick_workload(w, false))) {
			kind = K_DEPLOY;
			goto again;
		}
		strbuf_addf(&sb, "delete-deploy %s %s", wl->ns, wl->name);
		break;
	case K_JOB:
		strbuf_addf(&sb, "job %s j%u %d %d", any_ns(w), ++w->serial, 1 + pick(w, 2),
			    1 + pick(w, 3));
		add_shape(w, &sb, false);
		break;
	case K_DELETE_JOB:
		if (!(wl = pick_workload(w, true))) {
			kind = K_JOB;
			goto again;
		}
		strbuf_addf(&sb, "delete-job %s %s", wl->ns, wl->name);
		break;
	case K_CM_REPLICAS:
		k = &w->keys[pick(w, 2)]; /* soak-ts, soak-mps */
		strbuf_addf(&sb, "cm-replicas %s %d", k->key,
			    2 + (k->replicas - 2 + 1 + pick(w, 4)) % 5);
		break;
	case K_CM_SHARING:
		k = &w->keys[pick(w, 3)]; /* soak-ts, soak-mps, soak-whole */
		strbuf_addf(&sb, "cm-sharing %s %s", k->key,
			    sharing_names[(k->sharing + 1 + pick(w, 2)) % 3]);
		break;
	case K_CM_FAIL1:
		k = &w->keys[0];
		strbuf_addf(&sb, "cm-fail1 %s %s", k->key, k->fail1 ? "false" : "true");
		break;
	case K_CM_MIG:
		k = &w->keys[3 + pick(w, 2)]; /* soak-mig, soak-mig2 */
		strbuf_addf(&sb, "cm-mig %s %s", k->key, mig_names[(k->mig + 1 + pick(w, 2)) % 3]);
		break;
	case K_NODE_CONFIG: {
		const char *key;
		i = pick(w, 3);
		do
			key = plain_keys[w->missing_key && chance(w, 10) ? 3 : pick(w, 3)];
		while (!strcmp(key, w->config[i]));
		strbuf_addf(&sb, "node-config %s %s", node_defs[i].name, key);
		break;
	}
	case K_MIG: {
		const char *const *l;
		int n = 0, r = pick(w, 100);
		i = 3 + pick(w, 2);
		for (l = node_defs[i].layouts; *l; l++)
			n++;
		strbuf_addf(&sb, "mig %s %s %d %s", node_defs[i].name,
			    node_defs[i].layouts[pick(w, n)], pick(w, 4),
			    r < 70   ? "ok"
			    : r < 85 ? "stall"
				     : "fail");
		break;
	}
	case K_MIG_UNSTALL:
		i = 3 + pick(w, 2);
		if (w->stalled[3] != w->stalled[4])
			i = w->stalled[3] ? 3 : 4;
		strbuf_addf(&sb, "mig-unstall %s", node_defs[i].name);
		break;
	case K_FAULT_GPU: {
		static const char *const faults[] = {"xid:79", "xid:79", "xid:48", "xid:48",
						     "xid:13", "xid:94", "xid:31", "lost"};
		i = pick(w, NODE_N);
		strbuf_addf(&sb, "fault-gpu %s %d=%s", node_defs[i].name,
			    pick(w, node_defs[i].count), faults[pick(w, 8)]);
		break;
	}
	case K_FAULT_CLEAR:
		i = pick(w, NODE_N);
		strbuf_addf(&sb, "fault-clear %s", node_defs[i].name);
		if (chance(w, 50))
			strbuf_addf(&sb, " %d", pick(w, node_defs[i].count));
		break;
	case K_RESTART_PLUGIN:
		strbuf_addf(&sb, "restart-plugin %s", node_defs[pick(w, NODE_N)].name);
		break;
	case K_KUBELET:
		strbuf_addf(&sb, "kubelet %s %s %d", node_defs[pick(w, NODE_N)].name,
			    chance(w, 60) ? "restart" : "reboot", 1 + pick(w, 8));
		break;
	case K_GC:
		strbuf_addstr(&sb, "gc");
		break;
	case K_KILL_CONTROLLER:
		strbuf_addstr(&sb, "kill-controller");
		break;
	case K_RESTART_APISERVER:
	default:
		strbuf_addstr(&sb, "restart-apiserver");
		break;
	}
	return strbuf_detach(&sb, NULL);
}

/* ---- objects ------------------------------------------------------------------------------ */

static json_t *container(const char *res_eq)
{
	char res[128];
	const char *eq = strchr(res_eq, '=');
	json_t *lim = json_object();

	if (eq) {
		snprintf(res, sizeof(res), "%.*s", (int)(eq - res_eq), res_eq);
		json_object_set_new(lim, res, json_string(eq + 1));
	}
	return json_pack("[{s:s,s:s,s:{s:o}}]", "name", "main", "image",
			 "registry.k8s.io/pause:3.10", "resources", "limits", lim);
}

static json_t *labels(const char *app)
{
	json_t *l = json_pack("{s:s}", SOAK_LABEL, "1");

	if (app)
		json_object_set_new(l, "soak-app", json_string(app));
	return l;
}

static json_t *pod_object(const struct words *ws)
{
	json_t *spec = json_pack("{s:o}", "containers", container(ws->w[3]));

	if (!strncmp(ws->w[4], "on=", 3))
		json_object_set_new(spec, "nodeSelector",
				    json_pack("{s:s}", "kubernetes.io/hostname", ws->w[4] + 3));
	return json_pack("{s:s,s:s,s:{s:s,s:s,s:o},s:o}", "apiVersion", "v1", "kind", "Pod",
			 "metadata", "name", ws->w[2], "namespace", ws->w[1], "labels",
			 labels(NULL), "spec", spec);
}

static json_t *deployment_object(const struct words *ws)
{
	return json_pack("{s:s,s:s,s:{s:s,s:s,s:o},s:{s:i,s:{s:{s:s}},s:{s:{s:o},s:{s:o}}}}",
			 "apiVersion", "apps/v1", "kind", "Deployment", "metadata", "name",
			 ws->w[2], "namespace", ws->w[1], "labels", labels(NULL), "spec",
			 "replicas", atoi(ws->w[3]), "selector", "matchLabels", "soak-app",
			 ws->w[2], "template", "metadata", "labels", labels(ws->w[2]), "spec",
			 "containers", container(ws->w[4]));
}

static json_t *job_object(const struct words *ws)
{
	return json_pack("{s:s,s:s,s:{s:s,s:s,s:o},s:{s:i,s:i,s:i,s:i,s:{s:{s:o},s:{s:s,s:o}}}}",
			 "apiVersion", "batch/v1", "kind", "Job", "metadata", "name", ws->w[2],
			 "namespace", ws->w[1], "labels", labels(NULL), "spec", "parallelism",
			 atoi(ws->w[3]), "completions", atoi(ws->w[4]), "backoffLimit", 2,
			 "ttlSecondsAfterFinished", 20, "template", "metadata", "labels",
			 labels(ws->w[2]), "spec", "restartPolicy", "Never", "containers",
			 container(ws->w[5]));
}

/* The device-plugin config of one key, as a person would write it. */
static char *key_yaml(const struct cfgkey *k)
{
	struct strbuf sb = STRBUF_INIT;

	strbuf_addf(&sb, "version: v1\nflags:\n  migStrategy: %s\n", mig_names[k->mig]);
	if (k->sharing != SH_NONE) {
		strbuf_addf(&sb, "sharing:\n  %s:\n", k->sharing == SH_TS ? "timeSlicing" : "mps");
		if (k->sharing == SH_TS)
			strbuf_addf(&sb, "    failRequestsGreaterThanOne: %s\n",
				    k->fail1 ? "true" : "false");
		strbuf_addf(&sb, "    resources:\n    - name: nvidia.com/gpu\n      replicas: %d\n",
			    k->replicas);
	}
	return strbuf_detach(&sb, NULL);
}

static json_t *node_object(const struct node_def *d)
{
	char count[16];
	json_t *res = json_pack("{s:s,s:s,s:s}", "cpu", "64", "memory", "512Gi", "pods", "110");
	json_t *lab = json_pack("{s:s,s:s,s:s,s:s}", "kubernetes.io/hostname", d->name, "type",
				"kwok", SOAK_LABEL, "1", NODEHW_LABEL_CONFIG, d->config);

	if (d->mig)
		json_object_set_new(lab, NODEHW_LABEL_MIG_CONFIG, json_string(d->mig));
	snprintf(count, sizeof(count), "%d", d->count);
	return json_pack("{s:s,s:s,s:{s:s,s:o,s:{s:s,s:s,s:s,s:s}},s:{s:O,s:o}}", "apiVersion",
			 "v1", "kind", "Node", "metadata", "name", d->name, "labels", lab,
			 "annotations", "kwok.x-k8s.io/node", "fake",
			 "node.alpha.kubernetes.io/ttl", "0", NODEHW_ANN_PRODUCT, d->product,
			 NODEHW_ANN_COUNT, count, "status", "capacity", res, "allocatable", res);
}

/* ---- applying a step ---------------------------------------------------------------------- */

/* 0 done, 1 refused (4xx but 404/409), 2 nothing to act on (404, 409), -1 failed. */
static int verdict(struct soak_cluster *cl, int rc)
{
	const struct kube_status *st = kube_last_status(cl->c);

	if (rc == 0)
		return 0;
	if (rc == KUBE_E_STATUS && (st->code == 404 || st->code == 409))
		return 2;
	if (rc == KUBE_E_STATUS && st->code >= 400 && st->code < 500)
		return 1;
	return -1;
}

static int outcome_of(int v, enum soak_outcome *o)
{
	*o = v == 0 ? O_DONE : v == 1 ? O_REFUSED : O_NOOP;
	return v < 0 ? -1 : 0;
}

/* What `gpushare fault` writes (src/cmd/fault.c), as one merge patch of the Node. */
static int fault_patch(struct soak_cluster *cl, struct world *w, const struct words *ws,
		       long long stamp, struct gs_error *err)
{
	int i = node_index(ws->w[1]), kind = soak_kind_of(ws->w[0]), rc;
	json_t *ann = json_object(), *lab = json_object(), *patch;
	char *path;

	if (i < 0)
		return 2;
	if (kind == K_FAULT_GPU || kind == K_FAULT_CLEAR) {
		struct strbuf sb = STRBUF_INIT;
		for (int g = 0; g < 2; g++)
			if (w->health[i][g][0])
				strbuf_addf(&sb, "%s%d=%s", sb.len ? "," : "", g, w->health[i][g]);
		json_object_set_new(ann, NODEHW_ANN_GPU_HEALTH,
				    sb.len ? json_string(sb.buf) : json_null());
		strbuf_release(&sb);
	} else if (kind == K_RESTART_PLUGIN) {
		char ts[32];
		time_t t = (time_t)stamp;
		struct tm tm;
		gmtime_r(&t, &tm);
		strftime(ts, sizeof(ts), "%Y-%m-%dT%H:%M:%SZ", &tm);
		json_object_set_new(ann, NODEHW_ANN_RESTARTED_AT, json_string(ts));
	} else if (kind == K_KUBELET) {
		/* gpushare fault kubelet: "<restart|reboot>@<now>,<seconds>"
		 * (engine/kubeletrestart.h) */
		char ts[32], *v;
		time_t t = (time_t)stamp;
		struct tm tm;
		gmtime_r(&t, &tm);
		strftime(ts, sizeof(ts), "%Y-%m-%dT%H:%M:%SZ", &tm);
		v = gs_xasprintf("%s@%s,%s", ws->w[2], ts, ws->w[3]);
		json_object_set_new(ann, NODEHW_ANN_KUBELET_RESTART, json_string(v));
		free(v);
	} else if (kind == K_MIG) {
		json_object_set_new(lab, NODEHW_LABEL_MIG_CONFIG, json_string(ws->w[2]));
		json_object_set_new(ann, NODEHW_ANN_MIG_SECONDS, json_string(ws->w[3]));
		json_object_set_new(ann, NODEHW_ANN_MIG_FAULT,
				    !strcmp(ws->w[4], "stall")	? json_string("stall")
				    : !strcmp(ws->w[4], "fail") ? json_string("fail")
								: json_null());
	} else {
		json_object_set_new(ann, NODEHW_ANN_MIG_FAULT, json_null());
	}
	patch = json_pack("{s:{s:o,s:o}}", "metadata", "labels", lab, "annotations", ann);
	path = gs_xasprintf("/api/v1/nodes/%s", ws->w[1]);
	rc = kube_patch(cl->c, path, KUBE_PATCH_MERGE, patch, NULL, err);
	free(path);
	json_decref(patch);
	return verdict(cl, rc);
}

static int gpushare_fault(struct soak_cluster *cl, struct world *w, const struct words *ws,
			  struct gs_error *err)
{
	char *argv[16], *out = NULL, now[32];
	int n = 0, rc;
	long long stamp = 0;

	if (!strcmp(ws->w[0], "kubelet"))
		stamp = (long long)soak_wall();
	if (!strcmp(ws->w[0], "restart-plugin")) {
		/* Stamped to the second: two restarts in one second would be one. */
		int i = node_index(ws->w[1]);
		stamp = (long long)soak_wall();
		if (i >= 0) {
			if (stamp <= w->restarted[i])
				stamp = w->restarted[i] + 1;
			w->restarted[i] = stamp;
		}
	}
	if (!cl->fault_cli)
		return fault_patch(cl, w, ws, stamp, err);

	argv[n++] = (char *)cl->gpushare;
	argv[n++] = "fault";
	if (!strcmp(ws->w[0], "fault-gpu")) {
		argv[n++] = "gpu";
		argv[n++] = ws->w[1];
		argv[n++] = ws->w[2];
	} else if (!strcmp(ws->w[0], "fault-clear")) {
		argv[n++] = "clear";
		argv[n++] = ws->w[1];
		if (*ws->w[2])
			argv[n++] = ws->w[2];
	} else if (!strcmp(ws->w[0], "restart-plugin")) {
		snprintf(now, sizeof(now), "%lld", stamp);
		setenv("GPUSHARE_NOW", now, 1);
		argv[n++] = "restart-plugin";
		argv[n++] = ws->w[1];
	} else if (!strcmp(ws->w[0], "kubelet")) {
		argv[n++] = "kubelet";
		argv[n++] = ws->w[1];
		argv[n++] = !strcmp(ws->w[2], "reboot") ? "--reboot" : "--restart";
		argv[n++] = "--seconds";
		argv[n++] = ws->w[3];
	} else if (!strcmp(ws->w[0], "mig")) {
		argv[n++] = "mig";
		argv[n++] = ws->w[1];
		argv[n++] = "--config";
		argv[n++] = ws->w[2];
		argv[n++] = "--seconds";
		argv[n++] = ws->w[3];
		argv[n++] = !strcmp(ws->w[4], "stall")	? "--stall"
			    : !strcmp(ws->w[4], "fail") ? "--fail"
							: "--no-fault";
	} else {
		argv[n++] = "mig";
		argv[n++] = ws->w[1];
		argv[n++] = "--no-fault";
	}
	argv[n++] = "--kubeconfig";
	argv[n++] = (char *)cl->kubeconfig;
	argv[n] = NULL;
	rc = soak_run(argv, &out);
	unsetenv("GPUSHARE_NOW");
	if (rc != 0) {
		size_t len = out ? strlen(out) : 0;
		while (len && out[len - 1] == '\n')
			out[--len] = '\0';
		gs_error_set(err, "gpushare fault: exit %d: %s", rc, out ? out : "");
	}
	free(out);
	return rc == 0 ? 0 : -1;
}

static int patch_key(struct soak_cluster *cl, struct world *w, const char *key,
		     struct gs_error *err)
{
	struct cfgkey *k = key_of(w, key);
	char *yaml;
	json_t *patch;
	int rc;

	if (!k)
		return 2;
	yaml = key_yaml(k);
	patch = json_pack("{s:{s:s}}", "data", key, yaml);
	json_decref(cl->configmap);
	cl->configmap = NULL;
	rc = kube_patch(cl->c, "/api/v1/namespaces/" SOAK_CM_NS "/configmaps/" SOAK_CM_NAME,
			KUBE_PATCH_MERGE, patch, &cl->configmap, err);
	json_decref(patch);
	free(yaml);
	return verdict(cl, rc);
}

/* A node step that would change nothing (the soak knows what it wrote). */
static bool already(const struct world *w, int kind, const struct words *ws)
{
	int i = node_index(ws->w[1]);

	if (i < 0)
		return false;
	switch (kind) {
	case K_FAULT_CLEAR:
		for (int g = 0; g < 2; g++)
			if ((!*ws->w[2] || atoi(ws->w[2]) == g) && w->health[i][g][0])
				return false;
		return true;
	case K_FAULT_GPU: {
		const char *eq = strchr(ws->w[2], '=');
		int g = atoi(ws->w[2]);
		return eq && g >= 0 && g < 2 && !strcmp(w->health[i][g], eq + 1);
	}
	case K_MIG_UNSTALL:
		return !w->stalled[i];
	case K_NODE_CONFIG:
		return !strcmp(w->config[i], ws->w[2]);
	default:
		return false;
	}
}

int step_apply(struct soak_cluster *cl, struct world *w, const char *line,
	       enum soak_outcome *outcome, struct gs_error *err)
{
	struct words ws;
	int kind = soak_kind_of(line), v = -1;
	char *path = NULL;
	json_t *obj = NULL, *out = NULL;

	split(line, &ws);
	*outcome = O_DONE;
	gs_error_clear(err);
	if (already(w, kind, &ws)) {
		world_note(w, line);
		*outcome = O_NOOP;
		return 0;
	}
	world_note(w, line);
	switch (kind) {
	case K_POD:
		obj = pod_object(&ws);
		path = gs_xasprintf("/api/v1/namespaces/%s/pods", ws.w[1]);
		v = verdict(cl, kube_create(cl->c, path, obj, NULL, err));
		break;
	case K_DELETE_POD:
		path = gs_xasprintf("/api/v1/namespaces/%s/pods/%s", ws.w[1], ws.w[2]);
		v = verdict(cl, kube_delete(cl->c, path, NULL, NULL, err));
		break;
	case K_DEPLOY:
		obj = deployment_object(&ws);
		path = gs_xasprintf("/apis/apps/v1/namespaces/%s/deployments", ws.w[1]);
		v = verdict(cl, kube_create(cl->c, path, obj, NULL, err));
		break;
	case K_SCALE:
		obj = json_pack("{s:{s:i}}", "spec", "replicas", atoi(ws.w[3]));
		path = gs_xasprintf("/apis/apps/v1/namespaces/%s/deployments/%s", ws.w[1], ws.w[2]);
		v = verdict(cl, kube_patch(cl->c, path, KUBE_PATCH_MERGE, obj, NULL, err));
		break;
	case K_DELETE_DEPLOY:
	case K_DELETE_JOB:
		obj = json_pack("{s:s}", "propagationPolicy", "Background");
		path = gs_xasprintf("/apis/%s/namespaces/%s/%s/%s",
				    kind == K_DELETE_JOB ? "batch/v1" : "apps/v1", ws.w[1],
				    kind == K_DELETE_JOB ? "jobs" : "deployments", ws.w[2]);
		v = verdict(cl, kube_delete(cl->c, path, obj, NULL, err));
		break;
	case K_JOB:
		obj = job_object(&ws);
		path = gs_xasprintf("/apis/batch/v1/namespaces/%s/jobs", ws.w[1]);
		v = verdict(cl, kube_create(cl->c, path, obj, NULL, err));
		break;
	case K_CM_REPLICAS:
	case K_CM_SHARING:
	case K_CM_FAIL1:
	case K_CM_MIG:
		v = patch_key(cl, w, ws.w[1], err);
		break;
	case K_NODE_CONFIG:
		obj = json_pack("{s:{s:{s:s}}}", "metadata", "labels", NODEHW_LABEL_CONFIG,
				ws.w[2]);
		path = gs_xasprintf("/api/v1/nodes/%s", ws.w[1]);
		v = verdict(cl, kube_patch(cl->c, path, KUBE_PATCH_MERGE, obj, NULL, err));
		break;
	case K_MIG:
	case K_MIG_UNSTALL:
	case K_FAULT_GPU:
	case K_FAULT_CLEAR:
	case K_RESTART_PLUGIN:
	case K_KUBELET:
		v = gpushare_fault(cl, w, &ws, err);
		break;
	case K_GC:
		/* kube-controller-manager's pod GC, sooner: the Failed pods a refusing node piles
		 * up. */
		obj = json_pack("{s:i}", "gracePeriodSeconds", 0);
		v = 0;
		for (int i = 0; i < SOAK_NS_N && v == 0; i++) {
			free(path);
			path = gs_xasprintf(
				"/api/v1/namespaces/%s/pods?fieldSelector=status.phase%%3DFailed",
				soak_namespaces[i]);
			v = verdict(cl, kube_delete(cl->c, path, obj, NULL, err));
			if (v == 2)
				v = 0;
		}
		break;
	case K_KILL_CONTROLLER:
		v = soak_component_restart(cl, "controller", "KILL", err);
		break;
	case K_RESTART_APISERVER:
		v = soak_component_restart(cl, "kube-apiserver", "TERM", err);
		break;
	default:
		gs_error_set(err, "not a step: '%s'", line);
		v = -1;
		break;
	}
	json_decref(obj);
	json_decref(out);
	free(path);
	return outcome_of(v, outcome);
}

/* ---- reset and cleanup ---------------------------------------------------------------------- */

static int wait_sa(struct soak_cluster *cl, const char *ns, struct gs_error *err)
{
	char *path = gs_xasprintf("/api/v1/namespaces/%s/serviceaccounts/default", ns);
	int rc = -1;

	for (int i = 0; i < 600; i++) {
		if (kube_get(cl->c, path, NULL, err) == 0) {
			rc = 0;
			break;
		}
		soak_sleep_ms(100);
	}
	if (rc < 0)
		gs_error_prefix(err, "namespace %s has no default ServiceAccount: ", ns);
	free(path);
	return rc;
}

static int ensure_namespace(struct soak_cluster *cl, const char *ns, struct gs_error *err)
{
	char *path = gs_xasprintf("/api/v1/namespaces/%s", ns);
	json_t *obj = NULL;
	int rc = -1;

	for (int i = 0; i < 1200; i++) {
		int g = kube_get(cl->c, path, &obj, err);
		if (g == 0 && !strcmp(kobj_text(obj, "status.phase"), "Terminating")) {
			json_decref(obj);
			obj = NULL;
			soak_sleep_ms(250);
			continue;
		}
		json_decref(obj);
		obj = NULL;
		if (g == 0) {
			rc = 0;
			break;
		}
		if (kube_last_status(cl->c)->code != 404)
			break;
		obj = json_pack("{s:s,s:s,s:{s:s,s:{s:s}}}", "apiVersion", "v1", "kind",
				"Namespace", "metadata", "name", ns, "labels", SOAK_LABEL, "1");
		g = kube_create(cl->c, "/api/v1/namespaces", obj, NULL, err);
		json_decref(obj);
		obj = NULL;
		if (g == 0 || kube_last_status(cl->c)->code == 409) {
			rc = 0;
			break;
		}
		break;
	}
	free(path);
	return rc < 0 ? -1 : wait_sa(cl, ns, err);
}

static int delete_collection(struct soak_cluster *cl, const char *path, struct gs_error *err)
{
	json_t *opts =
		json_pack("{s:s,s:i}", "propagationPolicy", "Background", "gracePeriodSeconds", 0);
	int rc = kube_delete(cl->c, path, opts, NULL, err);

	json_decref(opts);
	return rc == 0 || kube_last_status(cl->c)->code == 404 ? 0 : -1;
}

static int count_items(struct soak_cluster *cl, const char *path, size_t *n, struct gs_error *err)
{
	json_t *list = NULL;

	if (kube_list(cl->c, path, NULL, &list, err) < 0)
		return -1;
	*n = json_array_size(json_object_get(list, "items"));
	json_decref(list);
	return 0;
}

static int empty_namespaces(struct soak_cluster *cl, struct gs_error *err)
{
	static const char *const kinds[] = {
		"apis/apps/v1/namespaces/%s/deployments", "apis/apps/v1/namespaces/%s/replicasets",
		"apis/batch/v1/namespaces/%s/jobs", "api/v1/namespaces/%s/pods"};
	char path[256];
	size_t n = 0;

	for (int i = 0; i < SOAK_NS_N; i++)
		for (size_t k = 0; k < 4; k++) {
			path[0] = '/';
			snprintf(path + 1, sizeof(path) - 1, kinds[k], soak_namespaces[i]);
			if (delete_collection(cl, path, err) < 0)
				return -1;
		}
	for (int t = 0; t < 1200; t++) {
		size_t total = 0;
		for (int i = 0; i < SOAK_NS_N; i++) {
			snprintf(path, sizeof(path), "/api/v1/namespaces/%s/pods",
				 soak_namespaces[i]);
			if (count_items(cl, path, &n, err) < 0)
				return -1;
			total += n;
			if (n) /* what a controller made since */
				for (size_t k = 0; k < 4; k++) {
					path[0] = '/';
					snprintf(path + 1, sizeof(path) - 1, kinds[k],
						 soak_namespaces[i]);
					if (delete_collection(cl, path, err) < 0)
						return -1;
				}
		}
		if (!total)
			return 0;
		soak_sleep_ms(250);
	}
	gs_error_set(err, "the soak namespaces still have pods after 5 minutes");
	return -1;
}

static int reset_quotas(struct soak_cluster *cl, struct gs_error *err)
{
	static const struct {
		const char *ns, *k1, *v1, *k2, *v2;
	} q[] = {
		{"soak-a", "requests.nvidia.com/gpu", "6", "pods", "14"},
		{"soak-b", "requests.nvidia.com/mig-1g.10gb", "3", "requests.nvidia.com/gpu", "4"},
	};

	for (size_t i = 0; i < sizeof(q) / sizeof(q[0]); i++) {
		char *path = gs_xasprintf("/api/v1/namespaces/%s/resourcequotas", q[i].ns);
		char *one = gs_xasprintf("%s/soak-quota", path);
		json_t *obj = json_pack("{s:s,s:s,s:{s:s,s:s},s:{s:{s:s,s:s}}}", "apiVersion", "v1",
					"kind", "ResourceQuota", "metadata", "name", "soak-quota",
					"namespace", q[i].ns, "spec", "hard", q[i].k1, q[i].v1,
					q[i].k2, q[i].v2);
		int rc = kube_delete(cl->c, one, NULL, NULL, err);
		if (rc == 0 || kube_last_status(cl->c)->code == 404)
			rc = kube_create(cl->c, path, obj, NULL, err);
		json_decref(obj);
		free(one);
		free(path);
		if (rc < 0)
			return -1;
	}
	return 0;
}

static json_t *keys_data(const struct world *w, bool remove)
{
	json_t *data = json_object();

	for (int i = 0; i < KEY_N; i++) {
		char *y = key_yaml(&w->keys[i]);
		json_object_set_new(data, w->keys[i].key, remove ? json_null() : json_string(y));
		free(y);
	}
	return data;
}

static int reset_configmap(struct soak_cluster *cl, const struct world *w, struct gs_error *err)
{
	const char *path = "/api/v1/namespaces/" SOAK_CM_NS "/configmaps/" SOAK_CM_NAME;
	json_t *obj;
	int rc;

	obj = json_pack("{s:s,s:s,s:{s:s}}", "apiVersion", "v1", "kind", "Namespace", "metadata",
			"name", SOAK_CM_NS);
	rc = kube_create(cl->c, "/api/v1/namespaces", obj, NULL, err);
	json_decref(obj);
	if (rc < 0 && kube_last_status(cl->c)->code != 409)
		return -1;
	json_decref(cl->configmap);
	cl->configmap = NULL;
	obj = json_pack("{s:o}", "data", keys_data(w, false));
	rc = kube_patch(cl->c, path, KUBE_PATCH_MERGE, obj, NULL, err);
	if (rc < 0 && kube_last_status(cl->c)->code == 404) {
		json_object_set_new(obj, "apiVersion", json_string("v1"));
		json_object_set_new(obj, "kind", json_string("ConfigMap"));
		json_object_set_new(
			obj, "metadata",
			json_pack("{s:s,s:s}", "name", SOAK_CM_NAME, "namespace", SOAK_CM_NS));
		rc = kube_create(cl->c, "/api/v1/namespaces/" SOAK_CM_NS "/configmaps", obj, NULL,
				 err);
	}
	json_decref(obj);
	return rc < 0 ? -1 : 0;
}

static int delete_nodes(struct soak_cluster *cl, struct gs_error *err)
{
	for (int i = 0; i < NODE_N; i++) {
		char *path = gs_xasprintf("/api/v1/nodes/%s", node_defs[i].name);
		int rc = kube_delete(cl->c, path, NULL, NULL, err);
		if (rc < 0 && kube_last_status(cl->c)->code != 404) {
			free(path);
			return -1;
		}
		for (int t = 0; t < 1200 && kube_get(cl->c, path, NULL, err) == 0; t++)
			soak_sleep_ms(100);
		free(path);
	}
	return 0;
}

/* Ready, untainted, and advertised by the controller (GFD's product label written). */
static bool node_up(const json_t *n)
{
	const json_t *conds = kobj_get(n, "status.conditions"), *c;
	bool ready = false;
	size_t i;

	json_array_foreach ((json_t *)conds, i, c)
		if (!strcmp(kobj_text(c, "type"), "Ready") &&
		    !strcmp(kobj_text(c, "status"), "True"))
			ready = true;
	return ready && json_array_size(kobj_get(n, "spec.taints")) == 0 &&
	       kobj_label(n, "nvidia.com/gpu.product");
}

int soak_reset(struct soak_cluster *cl, struct world *w, struct gs_error *err)
{
	world_reset(w);
	for (int i = 0; i < SOAK_NS_N; i++)
		if (ensure_namespace(cl, soak_namespaces[i], err) < 0)
			return -1;
	if (empty_namespaces(cl, err) < 0 || reset_quotas(cl, err) < 0 ||
	    delete_nodes(cl, err) < 0 || reset_configmap(cl, w, err) < 0)
		return -1;
	for (int i = 0; i < NODE_N; i++) {
		json_t *obj = node_object(&node_defs[i]);
		int rc = kube_create(cl->c, "/api/v1/nodes", obj, NULL, err);
		json_decref(obj);
		if (rc < 0)
			return -1;
	}
	for (int i = 0; i < NODE_N; i++) {
		char *path = gs_xasprintf("/api/v1/nodes/%s", node_defs[i].name);
		json_t *n = NULL;
		int t;
		for (t = 0; t < 1200; t++) {
			if (kube_get(cl->c, path, &n, err) < 0) {
				free(path);
				return -1;
			}
			bool up = node_up(n);
			json_decref(n);
			if (up)
				break;
			soak_sleep_ms(100);
		}
		free(path);
		if (t == 1200) {
			gs_error_set(err, "node %s not Ready and advertised after 2 minutes",
				     node_defs[i].name);
			return -1;
		}
	}
	return 0;
}

int soak_cleanup(struct soak_cluster *cl, struct gs_error *err)
{
	struct world *w = world_new(0);
	json_t *obj = json_pack("{s:o}", "data", keys_data(w, true));
	int rc = 0;

	world_free(w);
	if (empty_namespaces(cl, err) < 0)
		rc = -1;
	for (int i = 0; i < SOAK_NS_N; i++) {
		char *path = gs_xasprintf("/api/v1/namespaces/%s", soak_namespaces[i]);
		if (kube_delete(cl->c, path, NULL, NULL, err) < 0 &&
		    kube_last_status(cl->c)->code != 404)
			rc = -1;
		free(path);
	}
	if (delete_nodes(cl, err) < 0)
		rc = -1;
	if (kube_patch(cl->c, "/api/v1/namespaces/" SOAK_CM_NS "/configmaps/" SOAK_CM_NAME,
		       KUBE_PATCH_MERGE, obj, NULL, err) < 0 &&
	    kube_last_status(cl->c)->code != 404)
		rc = -1;
	json_decref(obj);
	return rc;
}
