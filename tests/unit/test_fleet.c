/*
 * fleet: the snapshot and its manifest reader. Files, directories (kubectl
 * reads only .json, .yaml and .yml files in a directory, in name order, and
 * its subdirectories only with -R), standard input, Lists as `kubectl get
 * -o yaml|json` writes them, and every error at file:line:col.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fleet/fleet.h"
#include "model/kobj.h"

struct tmp {
	char dir[64];
};

static void tmp_make(struct tmp *t)
{
	snprintf(t->dir, sizeof(t->dir), "/tmp/gs-fleet-XXXXXX");
	assert_non_null(mkdtemp(t->dir));
}

/* Write `text` to DIR/name (subdirectories made as needed); returns the path (static buffer). */
static const char *put(const struct tmp *t, const char *name, const char *text)
{
	static char path[512];
	char sub[512];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", t->dir, name);
	for (char *p = strchr(path + strlen(t->dir) + 1, '/'); p; p = strchr(p + 1, '/')) {
		snprintf(sub, sizeof(sub), "%.*s", (int)(p - path), path);
		mkdir(sub, 0700);
	}
	f = fopen(path, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
	return path;
}

static void tmp_remove(struct tmp *t)
{
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", t->dir);
	assert_int_equal(system(cmd), 0);
}

static const char *node_yaml = "apiVersion: v1\nkind: Node\nmetadata:\n  name: %s\n";

static char *node_doc(const char *name)
{
	char *s = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&s, &len);

	fprintf(f, node_yaml, name);
	fclose(f);
	return s;
}

/* The names of the objects of an array, joined by spaces. */
static char *names(const json_t *arr)
{
	char *s = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&s, &len);
	const json_t *o;
	size_t i;

	json_array_foreach (arr, i, o)
		fprintf(f, "%s%s", i ? " " : "", kobj_text(o, "metadata.name"));
	fclose(f);
	return s;
}

static void assert_names(const json_t *arr, const char *want)
{
	char *got = names(arr);
	assert_string_equal(got, want);
	free(got);
}

static int read_one(struct fleet *f, const char *path, bool recursive, struct gs_error *err)
{
	struct fleet_sources src = {0};
	int r;

	fleet_sources_add(&src, path);
	src.recursive = recursive;
	r = fleet_read(f, &src, err);
	fleet_sources_release(&src);
	return r;
}

/* Every kind goes to its array, in reading order; kinds no command reads are counted. */
static void kinds_sorted(void **state)
{
	struct tmp t;
	struct fleet f;
	struct gs_error err;

	(void)state;
	tmp_make(&t);
	const char *p =
		put(&t, "all.yaml",
		    "kind: Node\nmetadata: {name: n1}\n---\n"
		    "kind: Pod\nmetadata: {name: p1, namespace: a}\nspec: {containers: []}\n"
		    "---\n"
		    "kind: ConfigMap\nmetadata: {name: device-plugin-configs, namespace: "
		    "gpu-share}\n---\n"
		    "kind: ResourceQuota\nmetadata: {name: q, namespace: a}\n"
		    "spec: {hard: {requests.nvidia.com/gpu: '2'}}\n---\n"
		    "kind: LimitRange\nmetadata: {name: lr, namespace: a}\n"
		    "spec: {limits: [{type: Container, default: {cpu: '1'}}]}\n---\n"
		    "kind: Deployment\nmetadata: {name: d}\n---\n"
		    "kind: StatefulSet\nmetadata: {name: s}\n---\n"
		    "kind: Job\nmetadata: {name: j}\n---\n"
		    "kind: CronJob\nmetadata: {name: c}\n---\n"
		    "kind: DaemonSet\nmetadata: {name: ds}\n---\n"
		    "kind: ReplicaSet\nmetadata: {name: rs}\n---\n"
		    "kind: ResourceSlice\nmetadata: {name: sl}\n---\n"
		    "kind: ResourceClaim\nmetadata: {name: cl}\n---\n"
		    "kind: ResourceClaimTemplate\nmetadata: {name: ct}\n---\n"
		    "kind: DeviceClass\nmetadata: {name: dc}\n---\n"
		    "kind: Event\nmetadata: {name: ev}\n---\n"
		    "---\n"
		    "kind: Namespace\nmetadata: {name: a}\n---\n"
		    "kind: Service\nmetadata: {name: svc}\n---\n"
		    "kind: Node\nmetadata: {name: n2}\n");
	fleet_init(&f);
	assert_int_equal(read_one(&f, p, false, &err), 0);
	assert_names(f.nodes, "n1 n2");
	assert_names(f.pods, "p1");
	assert_names(f.configmaps, "device-plugin-configs");
	assert_names(f.quotas, "q");
	assert_names(f.limitranges, "lr");
	assert_names(f.workloads, "d s j c ds rs");
	assert_names(f.slices, "sl");
	assert_names(f.claims, "cl");
	assert_names(f.claim_templates, "ct");
	assert_names(f.device_classes, "dc");
	assert_names(f.events, "ev");
	assert_int_equal(f.n_ignored, 2);
	assert_int_equal(f.n_files, 1);
	assert_names(f.objects, "n1 p1 device-plugin-configs q lr d s j c ds rs sl cl ct dc ev n2");
	assert_names(f.all,
		     "n1 p1 device-plugin-configs q lr d s j c ds rs sl cl ct dc ev a svc n2");
	fleet_release(&f);
	tmp_remove(&t);
}

/* `kubectl get -o yaml` and `-o json` Lists stand for their items, nested ones too. */
static void lists_as_they_come(void **state)
{
	struct tmp t;
	struct fleet f;
	struct gs_error err;

	(void)state;
	tmp_make(&t);
	put(&t, "d/a.yaml",
	    "apiVersion: v1\nkind: List\nitems:\n"
	    "- kind: Node\n  metadata: {name: n1}\n"
	    "- kind: NodeList\n  items:\n  - kind: Node\n    metadata: {name: n2}\n");
	put(&t, "d/b.json",
	    "{\"apiVersion\":\"v1\",\"kind\":\"PodList\",\"metadata\":{\"resourceVersion\":\"7\"},"
	    "\"items\":[{\"kind\":\"Pod\",\"metadata\":{\"name\":\"p1\"},\"spec\":{}},"
	    "{\"kind\":\"Pod\",\"metadata\":{\"name\":\"p2\"},\"spec\":{}}]}\n");
	char dir[128];
	snprintf(dir, sizeof(dir), "%s/d", t.dir);
	fleet_init(&f);
	assert_int_equal(read_one(&f, dir, false, &err), 0);
	assert_names(f.nodes, "n1 n2");
	assert_names(f.pods, "p1 p2");
	assert_int_equal(f.n_files, 2);
	fleet_release(&f);
	tmp_remove(&t);
}

/*
 * A directory: its .json/.yaml/.yml files in name order; other files
 * (README.md, notes.txt, a .yaml~ backup) skipped; subdirectories only
 * with -R, in their place in name order (b/deeper/ comes before b/x.yaml).
 */
static void directory_and_recursive(void **state)
{
	struct tmp t;
	struct fleet f;
	struct gs_error err;
	char *n[6];

	(void)state;
	tmp_make(&t);
	for (int i = 0; i < 6; i++) {
		char name[16];
		snprintf(name, sizeof(name), "n%d", i);
		n[i] = node_doc(name);
	}
	put(&t, "c.yml", n[3]);
	put(&t, "a.yaml", n[0]);
	put(&t, "b/x.yaml", n[1]);
	put(&t, "b/deeper/y.json", "{\"kind\":\"Node\",\"metadata\":{\"name\":\"n2\"}}");
	put(&t, "README.md", "# not a manifest: kind: Node\n");
	put(&t, "notes.txt", "kind: Node\nmetadata: {name: nope}\n");
	put(&t, "c.yaml~", "{{{ not even YAML");
	put(&t, "d.json", n[4]);

	fleet_init(&f);
	assert_int_equal(read_one(&f, t.dir, false, &err), 0);
	assert_names(f.nodes, "n0 n3 n4");
	assert_int_equal(f.n_files, 3);
	fleet_release(&f);

	fleet_init(&f);
	assert_int_equal(read_one(&f, t.dir, true, &err), 0);
	assert_names(f.nodes, "n0 n2 n1 n3 n4");
	fleet_release(&f);

	/* A file named explicitly is read whatever its name. */
	char path[160];
	snprintf(path, sizeof(path), "%s/notes.txt", t.dir);
	fleet_init(&f);
	assert_int_equal(read_one(&f, path, false, &err), 0);
	assert_names(f.nodes, "nope");
	fleet_release(&f);

	/* Several sources: in the order given. */
	struct fleet_sources src = {0};
	char sub[160];
	snprintf(sub, sizeof(sub), "%s/b", t.dir);
	fleet_sources_add(&src, sub);
	fleet_sources_add(&src, path);
	fleet_init(&f);
	assert_int_equal(fleet_read(&f, &src, &err), 0);
	assert_names(f.nodes, "n1 nope");
	fleet_release(&f);
	fleet_sources_release(&src);

	for (int i = 0; i < 6; i++)
		free(n[i]);
	tmp_remove(&t);
}

/* Standard input ("-"), read once; its errors name it <stdin>. */
static void standard_input(void **state)
{
	struct tmp t;
	struct fleet f;
	struct gs_error err;
	char buf[1024];
	int saved = dup(STDIN_FILENO);

	(void)state;
	tmp_make(&t);
	const char *p = put(&t, "in.yaml", "kind: Node\nmetadata: {name: from-stdin}\n");
	int fd = open(p, O_RDONLY);
	assert_true(fd >= 0);
	assert_int_equal(dup2(fd, STDIN_FILENO), STDIN_FILENO);
	close(fd);
	fleet_init(&f);
	struct fleet_sources src = {0};
	fleet_sources_add(&src, "-");
	assert_int_equal(fleet_read(&f, &src, &err), 0);
	assert_names(f.nodes, "from-stdin");
	/* Twice: kubectl's "standard input cannot be used for multiple arguments". */
	assert_int_equal(fleet_read_path(&f, "-", false, &err), -1);
	assert_string_equal(gs_error_str(&err, buf, sizeof(buf)),
			    "standard input cannot be read twice ('-' given twice)");
	fleet_release(&f);
	fleet_sources_release(&src);

	p = put(&t, "bad.yaml", "kind: Node\nmetadata: {name: x\n");
	fd = open(p, O_RDONLY);
	assert_int_equal(dup2(fd, STDIN_FILENO), STDIN_FILENO);
	close(fd);
	fleet_init(&f);
	assert_int_equal(fleet_read_path(&f, "-", false, &err), -1);
	assert_string_equal(err.file, "<stdin>");
	assert_int_equal(err.line, 3);
	fleet_release(&f);

	assert_int_equal(dup2(saved, STDIN_FILENO), STDIN_FILENO);
	close(saved);
	tmp_remove(&t);
}

/* The message of reading `text` as the file bad.yaml. */
static void expect_error(const char *text, const char *want)
{
	struct tmp t;
	struct fleet f;
	struct gs_error err;
	char buf[1024], full[1024];

	tmp_make(&t);
	const char *p = put(&t, "bad.yaml", text);
	snprintf(full, sizeof(full), "%s/bad.yaml%s", t.dir, want);
	fleet_init(&f);
	assert_int_equal(read_one(&f, p, false, &err), -1);
	assert_string_equal(gs_error_str(&err, buf, sizeof(buf)), full);
	fleet_release(&f);
	tmp_remove(&t);
}

/* Bad input: file:line:col and what is wrong. */
static void errors_at_their_place(void **state)
{
	(void)state;
	expect_error("kind: Node\nmetadata:\n  name: [a\n",
		     ":4:1: did not find expected ',' or ']' (while parsing a flow sequence at "
		     "line 3 column 9)");
	expect_error("kind: Node\nmetadata: {name: a}\n---\n- 1\n- 2\n",
		     ":4:1: expected a Kubernetes object (a mapping), got a list");
	expect_error("apiVersion: v1\nmetadata: {name: a}\n",
		     ":1:1: not a Kubernetes object: kind not set");
	expect_error("kind: 3\n", ":1:7: kind: expected a kind name, got an integer");
	expect_error("kind: Node\nmetadata: {labels: {}}\n", ":1:1: Node: metadata.name not set");
	expect_error("kind: Pod\nmetadata: {name: a}\nspec:\n  containers:\n  - name: c\n"
		     "    resources: {limits: {nvidia.com/gpu: one}}\n",
		     ":6:42: limits nvidia.com/gpu: quantities must match the regular expression "
		     "'^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'");
	expect_error("kind: ResourceQuota\nmetadata: {name: q}\nspec:\n  hard:\n"
		     "    requests.cpu: lots\n",
		     ":5:19: spec.hard requests.cpu: quantities must match the regular expression "
		     "'^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'");
	expect_error("kind: LimitRange\nmetadata: {name: l}\nspec:\n  limits:\n"
		     "  - type: Container\n    defaultRequest: {memory: 1Gb}\n",
		     ":6:30: defaultRequest memory: quantities must match the regular expression "
		     "'^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'");
}

/* An object read twice: once if it is the same, else an error naming where it was first. */
static void duplicate_names_the_first(void **state)
{
	struct tmp t;
	struct fleet f;
	struct gs_error err;
	char want[512];

	(void)state;
	tmp_make(&t);
	put(&t, "a.yaml", "kind: Node\nmetadata: {name: node-a}\n");
	put(&t, "b.json",
	    "{\"kind\": \"List\", \"items\": [{\"kind\": \"Node\", "
	    "\"metadata\": {\"name\": \"node-a\"}}]}\n");
	/* The same object twice (recorded alone and in a List) counts once. */
	fleet_init(&f);
	assert_int_equal(read_one(&f, t.dir, false, &err), 0);
	assert_names(f.nodes, "node-a");
	fleet_release(&f);
	put(&t, "c.yaml", "# again\nkind: Node\nmetadata: {name: node-a, labels: {x: y}}\n");
	fleet_init(&f);
	assert_int_equal(read_one(&f, t.dir, false, &err), -1);
	snprintf(want, sizeof(want),
		 "Node node-a read twice, and differently (first at %s/a.yaml:1:1)", t.dir);
	assert_string_equal(err.msg, want);
	assert_int_equal(err.line, 2);
	fleet_release(&f);
	tmp_remove(&t);
}

/* Nothing read: the paths, and why a directory gave nothing. */
static void empty_directory_and_missing_path(void **state)
{
	struct tmp t;
	struct fleet f;
	struct gs_error err;
	char buf[1024], want[1024], path[160];

	(void)state;
	tmp_make(&t);
	fleet_init(&f);
	assert_int_equal(read_one(&f, t.dir, false, &err), -1);
	snprintf(want, sizeof(want),
		 "no objects in '%s': a directory is read for its .json, .yaml and .yml files, "
		 "and '%s' has none",
		 t.dir, t.dir);
	assert_string_equal(gs_error_str(&err, buf, sizeof(buf)), want);
	fleet_release(&f);

	/* Only a subdirectory and a README: -R is what it needs. */
	put(&t, "README.md", "hello\n");
	put(&t, "sub/n.yaml", "kind: Node\nmetadata: {name: node-a}\n");
	fleet_init(&f);
	assert_int_equal(read_one(&f, t.dir, false, &err), -1);
	snprintf(want, sizeof(want),
		 "no objects in '%s': a directory is read for its .json, .yaml and .yml files, "
		 "and '%s' has none (its 1 subdirectory is read only with -R)",
		 t.dir, t.dir);
	assert_string_equal(gs_error_str(&err, buf, sizeof(buf)), want);
	fleet_release(&f);
	fleet_init(&f);
	assert_int_equal(read_one(&f, t.dir, true, &err), 0);
	assert_names(f.nodes, "node-a");
	fleet_release(&f);

	/* A file of comments only. */
	const char *p = put(&t, "empty.yaml", "# nothing\n---\n");
	fleet_init(&f);
	assert_int_equal(read_one(&f, p, false, &err), -1);
	snprintf(want, sizeof(want), "no objects in '%s'", p);
	assert_string_equal(gs_error_str(&err, buf, sizeof(buf)), want);
	fleet_release(&f);

	snprintf(path, sizeof(path), "%s/nope", t.dir);
	fleet_init(&f);
	assert_int_equal(read_one(&f, path, false, &err), -1);
	snprintf(want, sizeof(want), "the path '%s' does not exist", path);
	assert_string_equal(gs_error_str(&err, buf, sizeof(buf)), want);
	fleet_release(&f);
	tmp_remove(&t);
}

/* The device-plugin ConfigMap by namespace and name; no namespace is "default". */
static void configmap_by_name(void **state)
{
	struct tmp t;
	struct fleet f;
	struct gs_error err;
	const json_t *cm;

	(void)state;
	tmp_make(&t);
	const char *p = put(&t, "cms.yaml",
			    "kind: ConfigMap\nmetadata: {name: other, namespace: gpu-share}\n---\n"
			    "kind: ConfigMap\nmetadata: {name: device-plugin-configs}\n"
			    "data: {a: b}\n---\n"
			    "kind: ConfigMap\nmetadata: {name: device-plugin-configs, namespace: "
			    "gpu-share}\ndata: {c: d}\n");
	fleet_init(&f);
	assert_int_equal(read_one(&f, p, false, &err), 0);
	assert_int_equal(fleet_configmap(&f, "gpu-share", "device-plugin-configs", &cm, &err), 0);
	assert_string_equal(kobj_text(cm, "data.c"), "d");
	assert_ptr_equal(fleet_stream_of(&f, cm), fleet_stream_of(&f, kobj_get(cm, "data")));
	assert_non_null(fleet_stream_of(&f, cm));
	assert_int_equal(fleet_configmap(&f, "default", "device-plugin-configs", &cm, &err), 0);
	assert_string_equal(kobj_text(cm, "data.a"), "b");
	assert_int_equal(fleet_configmap(&f, "x", "device-plugin-configs", &cm, &err), 0);
	assert_null(cm);
	char *others = fleet_configmap_others(&f, "device-plugin-configs");
	assert_string_equal(others,
			    "default/device-plugin-configs, gpu-share/device-plugin-configs");
	free(others);
	others = fleet_configmap_others(&f, "nope");
	assert_string_equal(others, "gpu-share/other, default/device-plugin-configs, "
				    "gpu-share/device-plugin-configs");
	free(others);
	fleet_release(&f);
	tmp_remove(&t);
}

static int entry_name(void *ctx, const struct fleet_entry *e, const json_t *obj,
		      struct gs_error *err)
{
	FILE *f = ctx;

	(void)err;
	fprintf(f, "%s%s%s ", kobj_text(obj, "metadata.name"), e->obj ? "" : "*",
		e->there ? "(there)" : "");
	return 0;
}

/* The error reading `text` gives, with the Pods kept or streamed (NULL: none). */
static char *read_error(const struct tmp *t, const char *text, bool stream)
{
	struct fleet f;
	struct gs_error err;
	char buf[1200];
	const char *p = put(t, "e.yaml", text);

	fleet_init(&f);
	f.stream_pods = stream;
	int r = read_one(&f, p, false, &err);
	fleet_release(&f);
	return r < 0 ? strdup(gs_error_str(&err, buf, sizeof(buf))) : NULL;
}

/*
 * stream_pods: the Pods of a file are checked, listed in reading order and
 * let go (a List's are kept), read again by fleet_each_entry; the rest of
 * the fleet keeps its positions; every error is the one a whole read gives.
 */
static void pods_streamed(void **state)
{
	struct tmp t;
	struct fleet f;
	struct gs_error err;
	struct ydoc_pos pos;
	char *got = NULL;
	size_t len = 0;

	(void)state;
	tmp_make(&t);
	const char *p1 = "kind: Pod\nmetadata: {name: p1, namespace: a}\nspec: {containers: []}\n";
	char *text = NULL;
	size_t tlen = 0;
	FILE *tf = open_memstream(&text, &tlen);
	fprintf(tf,
		"kind: Node\nmetadata: {name: n1}\n---\n%s---\n"
		"kind: Deployment\nmetadata: {name: d}\n---\n"
		"kind: Pod\nmetadata: {name: p2, namespace: a}\nspec: {containers: []}\n"
		"status: {phase: Running}\n---\n"
		"kind: PodList\nitems:\n- kind: Pod\n  metadata: {name: p3}\n  spec: {}\n---\n"
		"%s---\nkind: Node\nmetadata: {name: n2}\n",
		p1, p1);
	fclose(tf);
	const char *path = put(&t, "all.yaml", text);
	fleet_init(&f);
	f.stream_pods = true;
	assert_int_equal(read_one(&f, path, false, &err), 0);
	assert_names(f.pods, "p3");
	assert_names(f.nodes, "n1 n2");
	assert_int_equal(f.n_streamed, 2);
	assert_int_equal(f.n_entries, 4);
	FILE *out = open_memstream(&got, &len);
	assert_int_equal(fleet_each_entry(&f, entry_name, out, &err), 0);
	fclose(out);
	assert_string_equal(got, "p1* d p2*(there) p3 ");
	free(got);
	const json_t *n2 = json_array_get(f.nodes, 1);
	assert_int_equal(ydoc_stream_pos(fleet_stream_of(&f, n2), n2, &pos), 0);
	assert_int_equal(pos.line, 26);
	assert_int_equal(pos.col, 1);
	fleet_release(&f);
	free(text);

	static const char *const bad[] = {
		/* a second reading, different */
		"kind: Pod\nmetadata: {name: p}\nspec: {}\n---\n"
		"kind: Pod\nmetadata: {name: p}\nspec: {nodeName: x}\n",
		/* in a List first */
		"kind: PodList\nitems:\n- kind: Pod\n  metadata: {name: p}\n  spec: {}\n---\n"
		"kind: Pod\nmetadata: {name: p}\nspec: {nodeName: x}\n",
		/* a quantity, after a bad object that comes first */
		"kind: Node\nmetadata: {name: 3}\n---\n"
		"kind: Pod\nmetadata: {name: p}\nspec:\n  containers:\n"
		"  - resources: {limits: {cpu: lots}}\n",
		"kind: Pod\nmetadata: {name: p}\nspec:\n  containers:\n"
		"  - resources: {limits: {cpu: lots}}\n---\nkind: Node\nmetadata: {name: 3}\n",
		/* no name; then YAML that does not parse comes first */
		"kind: Pod\nmetadata: {namespace: a}\n",
		"kind: Pod\nmetadata: {namespace: a}\n---\nkind: Node\nmetadata: {name: [x}\n",
		"kind: Pod\nmetadata: {name: p}\nspec: 3\n",
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		char *whole = read_error(&t, bad[i], false),
		     *streamed = read_error(&t, bad[i], true);
		assert_non_null(whole);
		assert_non_null(streamed);
		assert_string_equal(streamed, whole);
		free(whole);
		free(streamed);
	}
	tmp_remove(&t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(kinds_sorted),
		cmocka_unit_test(lists_as_they_come),
		cmocka_unit_test(directory_and_recursive),
		cmocka_unit_test(standard_input),
		cmocka_unit_test(errors_at_their_place),
		cmocka_unit_test(duplicate_names_the_first),
		cmocka_unit_test(empty_directory_and_missing_path),
		cmocka_unit_test(configmap_by_name),
		cmocka_unit_test(pods_streamed),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
