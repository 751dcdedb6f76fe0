/*
 * soak: a seeded random run on the local control plane that checks, after
 * every step, that gpushare's books balance (docs/design/soak.md).
 *
 *   soak --cluster-dir DIR --gpushare BIN [--steps N] [--seed S]
 *        [--shrink-seconds N] [--replay FILE] [--keep]
 *
 * Exit status: 0 every invariant held after every step; 1 one did not (the
 * failing invariant, the objects involved and a shrunk failing sequence
 * are printed); 2 bad usage or a cluster the soak cannot use.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <time.h>
#include <unistd.h>

#include "model/kobj.h"
#include "model/names.h"
#include "tests/soak/soak.h"

struct soak {
	struct soak_cluster cl;
	struct world *w;
	struct checker *ck;
	const struct catalog *cat;
	uint64_t seed;
	long steps;
	double shrink_s;
	bool quiet;
	/* counts */
	long kinds[K_N][O_N];
	double t_apply[K_N], t_settle[K_N], t_check[K_N]; /* seconds spent, by kind */
	long transient[INV_N]; /* violations seen that went away while waited for */
	double longest[INV_N]; /* the longest such wait, seconds */
	long settle_timeouts, checks, eventual_waits, recounts;
	json_t *seen_admitted, *seen_refused, *seen_pods; /* uid sets */
	long walks_ended[2];				  /* success, failed */
	json_t *walk_state;				  /* node -> last state seen */
	/* the failure */
	struct violations failed;
	struct snapshot failed_at;
};

/* ---- settling ------------------------------------------------------------------------- */

static bool node_kind(int k)
{
	return k == K_CM_REPLICAS || k == K_CM_SHARING || k == K_CM_FAIL1 || k == K_CM_MIG ||
	       k == K_NODE_CONFIG || k == K_MIG || k == K_MIG_UNSTALL || k == K_FAULT_GPU ||
	       k == K_FAULT_CLEAR || k == K_RESTART_PLUGIN || k == K_KUBELET;
}

static long long reconciles(struct soak *S)
{
	json_t *m;
	struct gs_error err;
	long long n = -1;

	if (soak_metrics(&S->cl, &m, &err) < 0)
		return -1;
	n = json_integer_value(json_object_get(m, "gpushare_reconciles_total"));
	json_decref(m);
	return n;
}

static bool scheduled_tried(const json_t *pod)
{
	const json_t *conds = kobj_get(pod, "status.conditions"), *c;
	size_t i;

	json_array_foreach ((json_t *)conds, i, c)
		if (!strcmp(kobj_text(c, "type"), "PodScheduled"))
			return true;
	return false;
}

/* The soak's pods are all decided, deleted or tried by the scheduler. */
static bool quiet(const json_t *pods)
{
	size_t i;
	json_t *p;

	json_array_foreach ((json_t *)pods, i, p) {
		const char *adm = kobj_annotation(p, LEDGER_ANN_ADMITTED);
		const char *phase = kobj_text(p, "status.phase");
		if (!soak_pod(p))
			continue;
		/* Being deleted: kwok removes it in its time; the checks count it as held. */
		if (kobj_string(p, "metadata.deletionTimestamp"))
			continue;
		if (!strcmp(phase, "Succeeded") || !strcmp(phase, "Failed"))
			continue;
		if (*kobj_text(p, "spec.nodeName")) {
			if (!adm || strcmp(adm, "true"))
				return false;
		} else if (!scheduled_tried(p)) {
			return false;
		}
	}
	return true;
}

/*
 * Wait, bounded, until the step's effects have settled: the pods decided,
 * a node step planned by the controller. Returns the last PodList's items.
 */
static json_t *settle(struct soak *S, int kind, long long before)
{
	double start = soak_now();
	double limit = kind == K_KILL_CONTROLLER || kind == K_RESTART_APISERVER ? 30.0
		       : node_kind(kind)					? 1.0
										: 3.0;
	double min = kind == K_DEPLOY || kind == K_SCALE || kind == K_JOB ? 0.05 : 0.0;
	json_t *list = NULL, *items = NULL;
	struct gs_error err;

	for (;;) {
		bool ok;
		json_decref(list);
		list = NULL;
		if (kube_list(S->cl.c, "/api/v1/pods", NULL, &list, &err) < 0) {
			soak_sleep_ms(200);
			if (soak_now() - start > limit + 60) {
				fprintf(stderr, "soak: cannot list pods: %s\n", err.msg);
				return json_array();
			}
			continue;
		}
		items = json_object_get(list, "items");
		ok = quiet(items) && soak_now() - start >= min;
		if (ok &&
		    (node_kind(kind) || kind == K_KILL_CONTROLLER || kind == K_RESTART_APISERVER)) {
			long long now = reconciles(S);
			ok = now >= 0 && (before < 0 || now > before || !node_kind(kind));
		}
		if (ok)
			break;
		if (soak_now() - start > limit) {
			S->settle_timeouts++;
			break;
		}
		soak_sleep_ms(40);
	}
	items = json_incref(items);
	json_decref(list);
	return items;
}

/* ---- counting what happened ------------------------------------------------------------ */

static void observe(struct soak *S, const struct snapshot *s)
{
	size_t i;
	json_t *p, *n;

	json_array_foreach (s->pods, i, p) {
		const char *uid = kobj_text(p, "metadata.uid");
		const char *adm = kobj_annotation(p, LEDGER_ANN_ADMITTED);
		if (!soak_pod(p))
			continue;
		json_object_set_new(S->seen_pods, uid, json_true());
		if (adm && !strcmp(adm, "true"))
			json_object_set_new(S->seen_admitted, uid, json_true());
		else if (!strcmp(kobj_text(p, "status.phase"), "Failed") &&
			 *kobj_text(p, "spec.nodeName"))
			json_object_set_new(S->seen_refused, uid, json_true());
	}
	json_array_foreach (s->nodes, i, n) {
		const char *st = kobj_label(n, "nvidia.com/mig.config.state");
		const char *was = json_string_value(json_object_get(S->walk_state, kobj_name(n)));
		if (!st || !kobj_label(n, SOAK_LABEL))
			continue;
		if (was && !strcmp(was, "pending") && strcmp(st, "pending"))
			S->walks_ended[strcmp(st, "success") ? 1 : 0]++;
		json_object_set_new(S->walk_state, kobj_name(n), json_string(st));
	}
}

/* ---- checking ------------------------------------------------------------------------- */

/*
 * Ask kube-controller-manager's quota controller to count again. Its count
 * can be wrong for its whole resync period (5 minutes): a replenishment
 * recounts from its informers (syncResourceQuota), and one whose cache had
 * not yet seen a new pod was seen to undo admission's increment (and let a
 * fifth one-GPU pod in under a hard limit of 4). Only a change of
 * spec.hard makes it sync a quota at once (k8s.io/kubernetes v1.37.2
 * pkg/controller/resourcequota/resource_quota_controller.go UpdateFunc), so
 * a hard limit on a resource nobody asks for is moved.
 */
static void recount_quotas(struct soak *S)
{
	static const char *const ns[] = {"soak-a", "soak-b"};
	struct gs_error err;
	char v[32];

	snprintf(v, sizeof(v), "%ld", ++S->recounts);
	for (size_t i = 0; i < 2; i++) {
		char *path = gs_xasprintf("/api/v1/namespaces/%s/resourcequotas/soak-quota", ns[i]);
		json_t *patch = json_pack("{s:{s:{s:s}}}", "spec", "hard",
					  "requests.example.com/soak-recount", v);
		if (kube_patch(S->cl.c, path, KUBE_PATCH_MERGE, patch, NULL, &err) < 0)
			fprintf(stderr, "soak: asking for a quota recount: %s\n", err.msg);
		json_decref(patch);
		free(path);
	}
}

/* Some violation is of invariant inv. */
static bool has_inv(const struct violations *vs, enum soak_invariant inv)
{
	for (size_t i = 0; i < vs->n; i++)
		if (vs->v[i].inv == inv)
			return true;
	return false;
}

/* Every violation is of invariant inv. */
static bool only(const struct violations *vs, enum soak_invariant inv)
{
	for (size_t i = 0; i < vs->n; i++)
		if (vs->v[i].inv != inv)
			return false;
	return true;
}

static bool has_hard(const struct violations *vs)
{
	for (size_t i = 0; i < vs->n; i++)
		if (!vs->v[i].eventual)
			return true;
	return false;
}

/*
 * Every invariant after a step: a violation that may only lag (the books,
 * quota) is waited for up to 45 s (150 s after a restart), any other must
 * still hold a second later (two lists are not one instant). Returns 0, or
 * -1 with S->failed filled; pods is taken.
 */
static int check(struct soak *S, json_t *pods)
{
	double first = 0, t;
	struct gs_error err;
	struct violations vs = {0};
	bool counted[INV_N] = {0};
	long wait_ms = 25;
	bool recounted = false;

	for (;;) {
		struct snapshot s;
		if (snapshot_take(&S->cl, pods, &s, &err) < 0) {
			pods = NULL;
			if (!first)
				first = soak_now();
			if (soak_now() - first > 180) {
				fprintf(stderr, "soak: cannot read the cluster: %s\n", err.msg);
				exit(2);
			}
			soak_sleep_ms(500);
			continue;
		}
		pods = NULL;
		violations_release(&vs);
		checker_run(S->ck, &s, &S->cl, &vs);
		S->checks++;
		if (!vs.n) {
			for (int i = 0; i < INV_N; i++)
				if (counted[i] && soak_now() - first > S->longest[i])
					S->longest[i] = soak_now() - first;
			observe(S, &s);
			snapshot_release(&s);
			return 0;
		}
		t = soak_now();
		if (!first) {
			first = t;
			S->eventual_waits++;
		}
		for (size_t i = 0; i < vs.n; i++)
			if (!counted[vs.v[i].inv]) {
				counted[vs.v[i].inv] = true;
				S->transient[vs.v[i].inv]++;
			}
		double limit = has_hard(&vs)		     ? 1.0
			       : t - S->cl.restarted_at < 90 ? 150.0
			       : only(&vs, INV_QUOTA)	     ? 30.0
							     : 10.0;
		/* The quota controller's count may be stale: it is asked once to count again. */
		if (!recounted && t - first > 3.0 && has_inv(&vs, INV_QUOTA) && !has_hard(&vs)) {
			recount_quotas(S);
			recounted = true;
		}
		if (t - first > limit) {
			bool last[INV_N] = {0};
			for (size_t i = 0; i < vs.n; i++)
				last[vs.v[i].inv] = true;
			for (int i = 0; i < INV_N; i++)
				S->transient[i] -= last[i];
			S->failed = vs;
			S->failed_at = s;
			return -1;
		}
		snapshot_release(&s);
		soak_sleep_ms(has_hard(&vs) ? 250 : wait_ms);
		if (wait_ms < 400)
			wait_ms *= 2;
	}
}

/* ---- one step --------------------------------------------------------------------------- */

/* 0 held, 1 an invariant failed, -1 the step could not be applied (err). */
static int one_step(struct soak *S, const char *line, struct gs_error *err)
{
	int kind = soak_kind_of(line);
	enum soak_outcome o;
	long long before = node_kind(kind) ? reconciles(S) : -1;
	int tries = 0;

	double t0 = soak_now(), t1, t2;
	json_t *pods;
	int rc;

	while (step_apply(&S->cl, S->w, line, &o, err) < 0) {
		if (++tries == 3)
			return -1;
		soak_sleep_ms(2000);
	}
	S->kinds[kind][o]++;
	t1 = soak_now();
	/* Nothing written: no plan to wait for. */
	pods = settle(S, o == O_NOOP && node_kind(kind) ? -1 : kind, before);
	t2 = soak_now();
	rc = check(S, pods) < 0 ? 1 : 0;
	S->t_apply[kind] += t1 - t0;
	S->t_settle[kind] += t2 - t1;
	S->t_check[kind] += soak_now() - t2;
	return rc;
}

static void print_violations(const struct violations *vs)
{
	for (size_t i = 0; i < vs->n; i++)
		printf("  %s: %s\n", soak_invariant_names[vs->v[i].inv], vs->v[i].what);
}

/* ---- replay and shrink ------------------------------------------------------------------ */

struct seq {
	char **l;
	size_t n;
};

static void seq_free(struct seq *q)
{
	for (size_t i = 0; i < q->n; i++)
		free(q->l[i]);
	free(q->l);
	q->l = NULL;
	q->n = 0;
}

static struct seq seq_copy(char *const *l, size_t n)
{
	struct seq q = {gs_xcalloc(n + 1, sizeof(char *)), n};

	for (size_t i = 0; i < n; i++)
		q.l[i] = gs_xstrdup(l[i]);
	return q;
}

static void reset_or_die(struct soak *S)
{
	struct gs_error err;

	if (soak_reset(&S->cl, S->w, &err) < 0) {
		fprintf(stderr, "soak: cannot reset the cluster: %s\n", err.msg);
		exit(2);
	}
	checker_reset(S->ck);
	json_object_clear(S->walk_state);
}

/*
 * Run q from a reset state. Returns how many steps ran when invariant
 * `inv` failed at the last of them (-1 = any invariant), or 0 when the
 * sequence passed (or failed otherwise).
 */
static size_t replay(struct soak *S, const struct seq *q, int inv)
{
	struct gs_error err;

	reset_or_die(S);
	for (size_t i = 0; i < q->n; i++) {
		int rc = one_step(S, q->l[i], &err);
		if (rc < 0) {
			fprintf(stderr, "soak: replay step '%s' failed: %s\n", q->l[i], err.msg);
			return 0;
		}
		if (rc > 0) {
			bool same = inv < 0;
			for (size_t k = 0; k < S->failed.n; k++)
				same = same || (int)S->failed.v[k].inv == inv;
			violations_release(&S->failed);
			snapshot_release(&S->failed_at);
			return same ? i + 1 : 0;
		}
	}
	return 0;
}

/*
 * Shrink a failing sequence within S->shrink_s seconds: the shortest
 * suffix that still fails (1, 2, 4, ... steps), then chunks removed
 * (halves down to single steps) while it still fails the same invariant,
 * each candidate replayed once from a reset state. *minimal says whether
 * every single-step removal was tried and none still failed.
 */
static struct seq shrink(struct soak *S, const struct seq *full, int inv, bool *minimal,
			 int *replays)
{
	double end = soak_now() + S->shrink_s;
	struct seq cand = seq_copy(full->l, full->n);
	size_t n;

	*minimal = false;
	*replays = 0;
	for (size_t k = 1; k < cand.n && soak_now() < end; k *= 2) {
		struct seq suf = seq_copy(cand.l + cand.n - k, k);
		(*replays)++;
		if ((n = replay(S, &suf, inv))) {
			suf.n = n;
			seq_free(&cand);
			cand = suf;
			fprintf(stderr, "soak: shrink: the last %zu steps fail alone\n", n);
			break;
		}
		seq_free(&suf);
	}
	for (size_t chunk = cand.n / 2 ? cand.n / 2 : 1; chunk >= 1 && soak_now() < end;
	     chunk /= 2) {
		bool removed = false;
		for (size_t i = 0; i < cand.n && cand.n > 1 && soak_now() < end;) {
			size_t m = chunk < cand.n - i ? chunk : cand.n - i;
			struct seq t = {gs_xcalloc(cand.n + 1, sizeof(char *)), 0};
			for (size_t j = 0; j < cand.n; j++)
				if (j < i || j >= i + m)
					t.l[t.n++] = gs_xstrdup(cand.l[j]);
			(*replays)++;
			if ((n = replay(S, &t, inv))) {
				for (size_t j = n; j < t.n; j++)
					free(t.l[j]);
				t.n = n;
				seq_free(&cand);
				cand = t;
				removed = true;
				fprintf(stderr, "soak: shrink: %zu steps still fail\n", cand.n);
			} else {
				seq_free(&t);
				i += m;
			}
		}
		if (chunk == 1) {
			*minimal = !removed || soak_now() < end;
			break;
		}
	}
	return cand;
}

/* ---- the run ---------------------------------------------------------------------------- */

static void report_counts(const struct soak *S, double secs, long done)
{
	printf("soak: seed %llu, %ld steps in %.1f s (%.2f steps/s)\n", (unsigned long long)S->seed,
	       done, secs, secs > 0 ? (double)done / secs : 0.0);
	printf("steps by kind: count (applied/refused/nothing to do), mean seconds to apply, "
	       "settle, check:\n");
	for (int k = 0; k < K_N; k++) {
		long n = S->kinds[k][O_DONE] + S->kinds[k][O_REFUSED] + S->kinds[k][O_NOOP];
		double d = n ? (double)n : 1.0;
		printf("  %-18s %6ld  (%ld/%ld/%ld)  %.3f %.3f %.3f\n", soak_kind_names[k], n,
		       S->kinds[k][O_DONE], S->kinds[k][O_REFUSED], S->kinds[k][O_NOOP],
		       S->t_apply[k] / d, S->t_settle[k] / d, S->t_check[k] / d);
	}
	printf("events: %zu pods, %zu admitted, %zu refused by their node, MIG walks ended %ld "
	       "success %ld failed\n",
	       json_object_size(S->seen_pods), json_object_size(S->seen_admitted),
	       json_object_size(S->seen_refused), S->walks_ended[0], S->walks_ended[1]);
	printf("checks: %ld snapshots x %d invariants; %ld waits for lagging state, %ld settle "
	       "timeouts, %ld quota recounts asked\n",
	       S->checks, INV_N, S->eventual_waits, S->settle_timeouts, S->recounts);
	printf("violations seen and gone within the wait (longest wait):");
	for (int i = 0; i < INV_N; i++)
		printf(" %s %ld (%.1f s)", soak_invariant_names[i], S->transient[i], S->longest[i]);
	printf("\n");
}

static void dump_failure(const struct soak *S, const char *path)
{
	json_t *doc = json_pack("{s:O,s:O,s:O,s:O,s:O}", "pods", S->failed_at.pods, "nodes",
				S->failed_at.nodes, "configmap",
				S->failed_at.configmap ? S->failed_at.configmap : json_null(),
				"quotas", S->failed_at.quotas, "metrics",
				S->failed_at.metrics ? S->failed_at.metrics : json_null());

	if (json_dump_file(doc, path, JSON_INDENT(1) | JSON_SORT_KEYS) == 0)
		printf("soak: the cluster's objects at the failure are in %s\n", path);
	json_decref(doc);
}

static int read_lines(const char *path, struct seq *q)
{
	FILE *f = fopen(path, "r");
	char buf[1024];
	size_t cap = 0;

	if (!f)
		return -1;
	while (fgets(buf, sizeof(buf), f)) {
		char *s = buf;
		size_t n = strcspn(s, "\r\n");
		s[n] = '\0';
		while (*s == ' ' || (*s >= '0' && *s <= '9'))
			s++; /* a printed sequence's numbers */
		if (!*s || *s == '#')
			continue;
		if (soak_kind_of(s) < 0) {
			fprintf(stderr, "soak: %s: not a step: '%s'\n", path, s);
			fclose(f);
			return -1;
		}
		if (q->n + 1 >= cap) {
			cap = cap ? 2 * cap : 64;
			q->l = gs_xrealloc(q->l, cap * sizeof(char *));
		}
		q->l[q->n++] = gs_xstrdup(s);
	}
	fclose(f);
	return 0;
}

static void usage(void)
{
	fprintf(stderr,
		"usage: soak --cluster-dir DIR --gpushare BIN [--scripts DIR] [--steps N] "
		"[--seed S]\n"
		"            [--shrink-seconds N] [--replay FILE] [--failure-dir DIR] [--keep]\n");
	exit(2);
}

static char *env_value(const char *file, const char *key)
{
	FILE *f = fopen(file, "r");
	char buf[1024], *v = NULL;
	size_t k = strlen(key);

	if (!f)
		return NULL;
	while (!v && fgets(buf, sizeof(buf), f))
		if (!strncmp(buf, key, k) && buf[k] == '=') {
			buf[strcspn(buf, "\n")] = '\0';
			v = gs_xstrdup(buf + k + 1);
		}
	fclose(f);
	return v;
}

int main(int argc, char **argv)
{
	struct soak S = {0};
	const char *dir = getenv("GS_CLUSTER_DIR"), *replay_file = NULL, *fdir = ".";
	char *envfile, *port, *kubeconfig;
	struct kube_config_opts ko = {0};
	struct kube_client_opts co = {0};
	struct gs_error err;
	bool keep = false, have_seed = false, missing_key = false;
	struct seq done = {0};
	size_t cap = 0;
	double t0;
	int rc = 0;

	S.steps = 10000;
	S.shrink_s = 600;
	S.cl.scripts = "scripts/cluster";
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
		if (!strcmp(a, "--keep")) {
			keep = true;
			continue;
		}
		if (!strcmp(a, "--quiet")) {
			S.quiet = true;
			continue;
		}
		if (!strcmp(a, "--fault-cli")) {
			S.cl.fault_cli = true;
			continue;
		}
		if (!strcmp(a, "--missing-key")) {
			missing_key = true;
			continue;
		}
		if (!v)
			usage();
		i++;
		if (!strcmp(a, "--cluster-dir"))
			dir = v;
		else if (!strcmp(a, "--gpushare"))
			S.cl.gpushare = v;
		else if (!strcmp(a, "--scripts"))
			S.cl.scripts = v;
		else if (!strcmp(a, "--steps"))
			S.steps = atol(v);
		else if (!strcmp(a, "--seed")) {
			S.seed = strtoull(v, NULL, 10);
			have_seed = *v != '\0';
		} else if (!strcmp(a, "--shrink-seconds"))
			S.shrink_s = atof(v);
		else if (!strcmp(a, "--replay"))
			replay_file = v;
		else if (!strcmp(a, "--failure-dir"))
			fdir = v;
		else
			usage();
	}
	if (!dir || !S.cl.gpushare || S.steps < 1)
		usage();
	if (!have_seed)
		S.seed = (uint64_t)time(NULL) ^ ((uint64_t)getpid() << 32);
	envfile = gs_xasprintf("%s/env", dir);
	port = env_value(envfile, "GS_CONTROLLER_PORT");
	kubeconfig = env_value(envfile, "GS_KUBECONFIG");
	free(envfile);
	if (!port || !kubeconfig) {
		fprintf(stderr,
			"soak: %s/env has no GS_CONTROLLER_PORT or GS_KUBECONFIG: start the "
			"cluster with scripts/cluster/up.sh\n",
			dir);
		return 2;
	}
	/* One soak per cluster: two would make and delete each other's objects. */
	{
		char *lock = gs_xasprintf("%s/soak.lock", dir);
		struct flock fl = {.l_type = F_WRLCK, .l_whence = SEEK_SET};
		int fd = open(lock, O_RDWR | O_CREAT, 0644);
		if (fd < 0 || fcntl(fd, F_SETLK, &fl) < 0) {
			fprintf(stderr, "soak: %s is held: another soak runs on this cluster\n",
				lock);
			return 2;
		}
		free(lock); /* fd stays open: the lock lasts as long as the run */
	}
	setenv("GS_CLUSTER_DIR", dir, 1);
	S.cl.dir = dir;
	S.cl.controller_port = atoi(port);
	S.cl.kubeconfig = kubeconfig;
	ko.kubeconfig = kubeconfig;
	co.retry_unreachable = true;
	co.deadline_ms = 180000;
	if (kube_client_open(&S.cl.c, &ko, &co, &err) < 0 || catalog_builtin(&S.cat, &err) < 0) {
		fprintf(stderr, "soak: %s\n", err.msg);
		return 2;
	}
	S.w = world_new(S.seed);
	world_allow_missing_key(S.w, missing_key);
	S.ck = checker_new(S.cat);
	S.seen_admitted = json_object();
	S.seen_refused = json_object();
	S.seen_pods = json_object();
	S.walk_state = json_object();
	setvbuf(stdout, NULL, _IOLBF, 0);

	if (replay_file) {
		struct seq q = {0};
		size_t n;
		if (read_lines(replay_file, &q) < 0) {
			fprintf(stderr, "soak: cannot read %s\n", replay_file);
			return 2;
		}
		printf("soak: replaying %zu steps of %s from a reset state\n", q.n, replay_file);
		reset_or_die(&S);
		t0 = soak_now();
		for (n = 0; n < q.n; n++) {
			int r = one_step(&S, q.l[n], &err);
			if (r < 0) {
				fprintf(stderr, "soak: step '%s': %s\n", q.l[n], err.msg);
				return 2;
			}
			if (r > 0) {
				printf("soak: FAILED at step %zu '%s':\n", n + 1, q.l[n]);
				print_violations(&S.failed);
				rc = 1;
				break;
			}
		}
		if (!rc)
			printf("soak: every invariant held after each of the %zu steps (%.1f s)\n",
			       q.n, soak_now() - t0);
		seq_free(&q);
		return rc;
	}

	printf("soak: seed %llu, %ld steps (replay with --seed %llu)\n", (unsigned long long)S.seed,
	       S.steps, (unsigned long long)S.seed);
	reset_or_die(&S);
	t0 = soak_now();
	double last_print = t0;
	long i;
	for (i = 0; i < S.steps; i++) {
		/* A short run still plays every kind once: the kinds not yet seen come last. */
		int force = -1, unseen = 0;
		for (int k = 0; k < K_N; k++)
			unseen += !(world_seen(S.w) & (1u << k));
		if (unseen && S.steps - i <= unseen)
			for (int k = 0; k < K_N && force < 0; k++)
				if (!(world_seen(S.w) & (1u << k)))
					force = k;
		json_t *pods = NULL;
		if (kube_list(S.cl.c, "/api/v1/pods", NULL, &pods, &err) < 0) {
			fprintf(stderr, "soak: cannot list pods: %s\n", err.msg);
			return 2;
		}
		char *line = world_next(S.w, json_object_get(pods, "items"), force);
		json_decref(pods);
		if (done.n + 1 >= cap) {
			cap = cap ? 2 * cap : 1024;
			done.l = gs_xrealloc(done.l, cap * sizeof(char *));
		}
		done.l[done.n++] = line;
		int r = one_step(&S, line, &err);
		if (r < 0) {
			fprintf(stderr, "soak: step %ld '%s' could not be applied: %s\n", i + 1,
				line, err.msg);
			return 2;
		}
		if (r > 0) {
			rc = 1;
			break;
		}
		if (!S.quiet && soak_now() - last_print > 30) {
			last_print = soak_now();
			fprintf(stderr, "soak: %ld/%ld steps, %.1f s, %.2f steps/s\n", i + 1,
				S.steps, last_print - t0, (double)(i + 1) / (last_print - t0));
		}
	}
	double secs = soak_now() - t0;
	if (rc == 0) {
		printf("soak: every invariant held after each of the %ld steps\n", S.steps);
		report_counts(&S, secs, S.steps);
	} else {
		struct seq min;
		bool minimal;
		int replays;
		char *path = gs_xasprintf("%s/soak-failure.json", fdir);
		char *steps_path = gs_xasprintf("%s/soak-failure.steps", fdir);
		int inv = (int)S.failed.v[0].inv;
		FILE *f;

		printf("soak: FAILED at step %zu '%s' (seed %llu):\n", done.n, done.l[done.n - 1],
		       (unsigned long long)S.seed);
		print_violations(&S.failed);
		dump_failure(&S, path);
		report_counts(&S, secs, (long)done.n);
		printf("soak: the steps before it (at most 14):\n");
		for (size_t k = done.n < 15 ? 0 : done.n - 15; k + 1 < done.n; k++)
			printf("  %zu %s\n", k + 1, done.l[k]);
		violations_release(&S.failed);
		snapshot_release(&S.failed_at);
		printf("soak: shrinking for at most %.0f s: the shortest failing suffix, then "
		       "chunks "
		       "removed, each candidate replayed once from a reset state\n",
		       S.shrink_s);
		min = shrink(&S, &done, inv, &minimal, &replays);
		printf("soak: failing sequence of %zu steps (of %zu) after %d replays, %s, failing "
		       "%s:\n",
		       min.n, done.n, replays,
		       minimal ? "1-minimal (no single step can go)" : "not minimal (time ran out)",
		       soak_invariant_names[inv]);
		f = fopen(steps_path, "w");
		for (size_t k = 0; k < min.n; k++) {
			printf("  %zu %s\n", k + 1, min.l[k]);
			if (f)
				fprintf(f, "%s\n", min.l[k]);
		}
		if (f) {
			fclose(f);
			printf("soak: replay it with: soak --replay %s (same cluster flags)\n",
			       steps_path);
		}
		seq_free(&min);
		free(path);
		free(steps_path);
	}
	if (!keep) {
		if (soak_cleanup(&S.cl, &err) < 0)
			fprintf(stderr, "soak: cleanup: %s\n", err.msg);
	}
	seq_free(&done);
	world_free(S.w);
	checker_free(S.ck);
	kube_client_free(S.cl.c);
	json_decref(S.cl.configmap);
	json_decref(S.seen_admitted);
	json_decref(S.seen_refused);
	json_decref(S.seen_pods);
	json_decref(S.walk_state);
	free(port);
	free(kubeconfig);
	return rc;
}
