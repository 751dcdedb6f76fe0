#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "kube/kubeconfig.h"

/*
 * kubectl's kubeconfig rules (docs/design/kubeclient.md, which cites client-go's
 * loader.go): KUBECONFIG merge (first file to set a key wins, whole
 * entries), --kubeconfig/--context overrides, relative paths against the
 * defining file, *-data over files, in-cluster fallback.
 */

#define DATA "tests/unit/data/kubeconfig"

static char tmpdir[64];

static int setup(void **state)
{
	(void)state;
	snprintf(tmpdir, sizeof(tmpdir), "/tmp/gs-kubeconfig-XXXXXX");
	return mkdtemp(tmpdir) ? 0 : -1;
}

static int teardown(void **state)
{
	char cmd[128];

	(void)state;
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
	return system(cmd) == 0 ? 0 : -1;
}

/* Write text to tmpdir/name; returns the path (static buffer per call site use). */
static const char *write_tmp(const char *name, const char *text)
{
	static char path[4][256];
	static int k;
	char *p = path[k++ % 4];
	FILE *f;

	snprintf(p, 256, "%s/%s", tmpdir, name);
	f = fopen(p, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
	return p;
}

static int load(const char *kubeconfig_env, const struct kube_config_opts *o,
		struct kube_config **cfg, struct gs_error *err)
{
	struct kube_config_env env = {
		.kubeconfig = kubeconfig_env,
		.home = tmpdir, /* holds no .kube/config unless a test writes one */
	};
	gs_error_clear(err);
	return kube_config_load_env(cfg, o, &env, err);
}

static char *slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	char *b = calloc(1, 1 << 16);

	assert_non_null(f);
	*len = fread(b, 1, (1 << 16) - 1, f);
	fclose(f);
	return b;
}

static void assert_pem(const struct kube_pem *p, const char *file, const char *origin)
{
	size_t n;
	char *want = slurp(file, &n);

	assert_non_null(p->data);
	assert_int_equal(p->len, n);
	assert_memory_equal(p->data, want, n);
	assert_string_equal(p->origin, origin);
	free(want);
}

static void merge_first_file_wins(void **state)
{
	struct kube_config *cfg;
	struct gs_error err;

	(void)state;
	assert_int_equal(load(DATA "/a.yaml:" DATA "/sub/b.yaml", NULL, &cfg, &err), 0);
	assert_string_equal(cfg->source, DATA "/a.yaml:" DATA "/sub/b.yaml");
	assert_string_equal(cfg->context, "ctx-a"); /* a sets current-context first */
	assert_string_equal(cfg->cluster, "shared");
	assert_string_equal(cfg->server, "https://a.example:6443"); /* a's entry, '/' dropped */
	assert_false(cfg->insecure_skip_tls_verify); /* b's `shared` is never consulted */
	assert_string_equal(cfg->namespace, "team-a");
	assert_string_equal(cfg->user, "admin-a");
	assert_null(cfg->token); /* b's admin-a token is not merged into a's admin-a */
	assert_pem(&cfg->ca, DATA "/pki/ca.crt", DATA "/pki/ca.crt");
	assert_pem(&cfg->client_cert, DATA "/pki/admin.crt", DATA "/pki/admin.crt");
	assert_pem(&cfg->client_key, DATA "/pki/admin.key", DATA "/pki/admin.key");
	assert_null(cfg->tls_server_name);
	kube_config_free(cfg);
}

static void merge_reversed_and_relative_paths(void **state)
{
	struct kube_config *cfg;
	struct gs_error err;

	(void)state;
	assert_int_equal(load(DATA "/sub/b.yaml:" DATA "/a.yaml", NULL, &cfg, &err), 0);
	assert_string_equal(cfg->context, "ctx-b");
	assert_string_equal(cfg->cluster, "only-b");
	assert_string_equal(cfg->server, "https://b.example:6443");
	assert_string_equal(cfg->tls_server_name, "kubernetes");
	/* Relative to sub/, where b.yaml lives, not to the working directory. */
	assert_pem(&cfg->ca, DATA "/sub/ca-b.crt", DATA "/sub/ca-b.crt");
	assert_string_equal(cfg->token, "token-from-file-b"); /* trimmed */
	assert_string_equal(cfg->token_file, DATA "/sub/token.txt");
	assert_string_equal(cfg->namespace, "default");
	assert_null(cfg->client_cert.data);
	kube_config_free(cfg);
}

static void context_override_uses_winning_entry(void **state)
{
	struct kube_config_opts o = {.context = "ctx-a"};
	struct kube_config *cfg;
	struct gs_error err;

	(void)state;
	/* b comes first, so b's ctx-a is the one that counts. */
	assert_int_equal(load(DATA "/sub/b.yaml:" DATA "/a.yaml", &o, &cfg, &err), 0);
	assert_string_equal(cfg->context, "ctx-a");
	assert_string_equal(cfg->cluster, "only-b");
	assert_string_equal(cfg->user, "token-user");
	assert_string_equal(cfg->token, "s3cret-token-b");
	assert_null(cfg->token_file);
	kube_config_free(cfg);
}

static void data_fields_win_over_files(void **state)
{
	struct kube_config_opts o = {.context = "ctx-data"};
	struct kube_config *cfg;
	struct gs_error err;

	(void)state;
	assert_int_equal(load(DATA "/a.yaml:" DATA "/sub/b.yaml", &o, &cfg, &err), 0);
	/* certificate-authority points at a missing file; the -data field wins. */
	assert_pem(&cfg->ca, DATA "/sub/ca-b.crt", "cluster \"data-b\" certificate-authority-data");
	assert_pem(&cfg->client_cert, DATA "/pki/admin.crt",
		   "user \"data-user\" client-certificate-data");
	assert_pem(&cfg->client_key, DATA "/pki/admin.key", "user \"data-user\" client-key-data");
	assert_string_equal(cfg->server, "https://10.0.0.1");
	assert_string_equal(cfg->namespace, "gpu-share");
	kube_config_free(cfg);
}

static void server_without_scheme(void **state)
{
	struct kube_config_opts o = {.context = "ctx-plain"};
	struct kube_config *cfg;
	struct gs_error err;

	(void)state;
	/* client-go's DefaultServerURL: no TLS settings means http. */
	assert_int_equal(load(DATA "/a.yaml", &o, &cfg, &err), 0);
	assert_string_equal(cfg->server, "http://127.0.0.1:8080");
	assert_null(cfg->user);
	assert_null(cfg->token);
	kube_config_free(cfg);
}

static void missing_list_entries_are_skipped(void **state)
{
	struct kube_config *cfg;
	struct gs_error err;

	(void)state;
	assert_int_equal(
		load("/nonexistent/one::" DATA "/a.yaml:" DATA "/a.yaml", NULL, &cfg, &err), 0);
	assert_string_equal(cfg->source, DATA "/a.yaml"); /* empty and duplicate entries dropped */
	assert_string_equal(cfg->context, "ctx-a");
	kube_config_free(cfg);
}

static void explicit_file_overrides_env(void **state)
{
	struct kube_config_opts o = {.kubeconfig = DATA "/a.yaml"};
	struct kube_config_opts missing = {.kubeconfig = "/nonexistent/kubeconfig"};
	struct kube_config *cfg;
	struct gs_error err;

	(void)state;
	assert_int_equal(load(DATA "/sub/b.yaml", &o, &cfg, &err), 0);
	assert_string_equal(cfg->source, DATA "/a.yaml");
	assert_string_equal(cfg->context, "ctx-a");
	kube_config_free(cfg);

	assert_int_equal(load(DATA "/sub/b.yaml", &missing, &cfg, &err), -1);
	assert_null(cfg);
	assert_string_equal(err.msg,
			    "kubeconfig \"/nonexistent/kubeconfig\": No such file or directory");
}

static void home_config_when_env_unset(void **state)
{
	struct kube_config *cfg;
	struct gs_error err;
	char dir[128];

	(void)state;
	snprintf(dir, sizeof(dir), "%s/.kube", tmpdir);
	assert_int_equal(mkdir(dir, 0700), 0);
	write_tmp(".kube/config", "clusters:\n- name: c\n  cluster: {server: \"https://h:1\"}\n"
				  "contexts:\n- name: x\n  context: {cluster: c}\n"
				  "current-context: x\n");
	assert_int_equal(load(NULL, NULL, &cfg, &err), 0);
	assert_string_equal(cfg->server, "https://h:1");
	kube_config_free(cfg);
	/* An empty KUBECONFIG counts as unset, as in client-go. */
	assert_int_equal(load("", NULL, &cfg, &err), 0);
	kube_config_free(cfg);
}

static void context_not_found(void **state)
{
	struct kube_config_opts o = {.context = "nope"};
	struct kube_config *cfg;
	struct gs_error err;

	(void)state;
	assert_int_equal(load(DATA "/a.yaml", &o, &cfg, &err), -1);
	assert_null(cfg);
	assert_string_equal(err.msg, "context \"nope\" not found in kubeconfig " DATA "/a.yaml");
}

static void cluster_and_user_overrides(void **state)
{
	struct kube_config_opts o = {.cluster = "only-b", .user = "token-user", .namespace = "ns1"};
	struct kube_config_opts bad = {.user = "ghost"};
	struct kube_config *cfg;
	struct gs_error err;

	(void)state;
	assert_int_equal(load(DATA "/a.yaml:" DATA "/sub/b.yaml", &o, &cfg, &err), 0);
	assert_string_equal(cfg->context, "ctx-a");
	assert_string_equal(cfg->cluster, "only-b");
	assert_string_equal(cfg->token, "s3cret-token-b");
	assert_string_equal(cfg->namespace, "ns1");
	kube_config_free(cfg);
	assert_int_equal(load(DATA "/a.yaml", &bad, &cfg, &err), -1);
	assert_string_equal(err.msg, "user \"ghost\" not found in kubeconfig " DATA "/a.yaml");
}

static void insecure_flag_clears_ca(void **state)
{
	struct kube_config_opts o = {.insecure_skip_tls_verify = true};
	struct kube_config *cfg;
	struct gs_error err;

	(void)state;
	assert_int_equal(load(DATA "/a.yaml", &o, &cfg, &err), 0);
	assert_true(cfg->insecure_skip_tls_verify);
	assert_null(cfg->ca.data);
	kube_config_free(cfg);
}

/* A kubeconfig with one cluster "c", one user "u" and context "x" using them. */
static const char *with_entries(const char *name, const char *cluster_body, const char *user_body)
{
	char text[4096];

	snprintf(text, sizeof(text),
		 "apiVersion: v1\n"
		 "clusters:\n"
		 "- name: c\n"
		 "  cluster:\n"
		 "%s"
		 "users:\n"
		 "- name: u\n"
		 "  user:\n"
		 "%s"
		 "contexts:\n"
		 "- name: x\n"
		 "  context: {cluster: c, user: u}\n"
		 "current-context: x\n",
		 cluster_body, user_body);
	return write_tmp(name, text);
}

static void expect_error(const char *path, int line, int col, const char *msg)
{
	struct kube_config_opts o = {.kubeconfig = path};
	struct kube_config *cfg;
	struct gs_error err;

	assert_int_equal(load(NULL, &o, &cfg, &err), -1);
	assert_null(cfg);
	assert_string_equal(err.msg, msg);
	if (line) {
		assert_string_equal(err.file, path);
		assert_int_equal(err.line, line);
		assert_int_equal(err.col, col);
	}
}

static void bad_base64(void **state)
{
	const char *p;

	(void)state;
	p = with_entries("b64.yaml",
			 "    server: https://x\n"
			 "    certificate-authority-data: \"!!not base64\"\n",
			 "    token: t\n");
	/* Line 6, the value after "    certificate-authority-data: " (32 columns). */
	expect_error(p, 6, 33, "cluster \"c\": certificate-authority-data is not valid base64");
	p = with_entries("b64b.yaml", "    server: https://x\n",
			 "    client-certificate-data: TUlTU0lORyBQQURESU5H\n" /* ok */
			 "    client-key-data: SECRETKEYMATERIAL\n");
	expect_error(p, 10, 22, "user \"u\": client-key-data is not valid base64");
}

static void missing_files_named(void **state)
{
	char want[512];
	const char *p;

	(void)state;
	p = with_entries("ca.yaml",
			 "    server: https://x\n"
			 "    certificate-authority: no/such/ca.crt\n",
			 "    token: t\n");
	snprintf(want, sizeof(want),
		 "cluster \"c\": certificate-authority \"%s/no/such/ca.crt\": No such file or "
		 "directory",
		 tmpdir);
	expect_error(p, 6, 28, want);
	p = with_entries("tf.yaml", "    server: https://x\n", "    tokenFile: /nonexistent/tok\n");
	expect_error(p, 9, 16,
		     "user \"u\": tokenFile \"/nonexistent/tok\": No such file or directory");
}

static void rejected_combinations(void **state)
{
	const char *p;

	(void)state;
	p = with_entries("exec.yaml", "    server: https://x\n",
			 "    exec:\n      command: aws\n      apiVersion: "
			 "client.authentication.k8s.io/v1\n");
	expect_error(
		p, 10, 7,
		"user \"u\": exec credential plugins are not supported; use a token, tokenFile "
		"or client certificate");
	p = with_entries("basic.yaml", "    server: https://x\n",
			 "    token: tok-SECRET\n    username: admin\n    password: pw-SECRET\n");
	expect_error(p, 10, 15,
		     "more than one authentication method found for user \"u\"; found token, basic "
		     "auth; only one is allowed");
	write_tmp("ca.crt", "-----BEGIN CERTIFICATE-----\nQQ==\n-----END CERTIFICATE-----\n");
	p = with_entries("insecure.yaml",
			 "    server: https://x\n"
			 "    insecure-skip-tls-verify: true\n"
			 "    certificate-authority: ca.crt\n",
			 "    token: t\n");
	expect_error(
		p, 6, 31,
		"cluster \"c\": a certificate authority and insecure-skip-tls-verify cannot both "
		"be set");
	p = with_entries("certonly.yaml", "    server: https://x\n",
			 "    client-certificate-data: LS0tLS1CRUdJTiBDRVJUSUZJQ0FURS0tLS0t\n");
	expect_error(p, 9, 30,
		     "user \"u\": client-certificate needs client-key (or client-key-data)");
	p = with_entries("both.yaml", "    server: https://x\n",
			 "    client-certificate-data: LS0tLS1CRUdJTiBDRVJUSUZJQ0FURS0tLS0t\n"
			 "    client-certificate: x.crt\n");
	expect_error(p, 9, 30,
		     "user \"u\": client-certificate-data and client-certificate are both "
		     "specified; use one");
	/* "not a cert" in base64: decodes, but is no PEM. */
	p = with_entries(
		"notpem.yaml",
		"    server: https://x\n    certificate-authority-data: bm90IGEgY2VydA==\n",
		"    token: t\n");
	expect_error(p, 6, 33,
		     "cluster \"c\": certificate-authority-data holds no PEM certificate");
	p = with_entries("noserver.yaml", "    insecure-skip-tls-verify: true\n", "    token: t\n");
	expect_error(p, 5, 5, "cluster \"c\" has no server");
	p = with_entries("scheme.yaml", "    server: ftp://x\n", "    token: t\n");
	expect_error(p, 5, 13,
		     "cluster \"c\": server \"ftp://x\" must be an https:// or http:// URL");
	p = with_entries("type.yaml",
			 "    server: https://x\n    insecure-skip-tls-verify: yes-please\n",
			 "    token: t\n");
	expect_error(p, 6, 31, "cluster \"c\": insecure-skip-tls-verify must be true or false");
}

static void duplicate_names_in_one_file(void **state)
{
	const char *p;

	(void)state;
	p = write_tmp("dup.yaml", "clusters:\n"
				  "- name: c\n  cluster: {server: \"https://a\"}\n"
				  "- name: c\n  cluster: {server: \"https://b\"}\n"
				  "current-context: x\n");
	expect_error(p, 4, 9, "duplicate name \"c\" in clusters");
	p = write_tmp("nocc.yaml", "clusters:\n- name: c\n  cluster: {server: \"https://a\"}\n");
	{
		char want[256];
		snprintf(want, sizeof(want),
			 "no current-context is set in kubeconfig %s; pass --context", p);
		expect_error(p, 0, 0, want);
	}
	p = write_tmp("list.yaml", "- just\n- a list\n");
	expect_error(p, 1, 1, "a kubeconfig must be a mapping");
}

static void secrets_never_in_messages(void **state)
{
	static const char *const cases[][2] = {
		{"s1.yaml", "    client-certificate-data: LS0tLS1CRUdJTiBDRVJUSUZJQ0FURS0tLS0t\n"
			    "    client-key-data: c2VjcmV0LWtleS1tYXRlcmlhbA@@\n"},
		{"s2.yaml", "    token: tok-SECRET\n    password: pw-SECRET\n"},
		{"s3.yaml", "    client-certificate-data: LS0tLS1CRUdJTiBDRVJUSUZJQ0FURS0tLS0t\n"
			    "    client-key-data: c2VjcmV0LWtleS1tYXRlcmlhbA==\n"},
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct kube_config_opts o = {
			.kubeconfig =
				with_entries(cases[i][0], "    server: https://x\n", cases[i][1])};
		struct kube_config *cfg;
		struct gs_error err;
		char buf[2048];

		assert_int_equal(load(NULL, &o, &cfg, &err), -1);
		gs_error_str(&err, buf, sizeof(buf));
		assert_null(strstr(buf, "SECRET"));
		assert_null(strstr(buf, "c2VjcmV0"));
		assert_null(strstr(buf, "secret-key-material"));
		assert_non_null(strstr(buf, "user \"u\""));
	}
}

/* The loaded kubeconfig's whole error, "file:line:col: msg", for a secret search. */
static void load_fails(const char *path, char *buf, size_t size, struct gs_error *err)
{
	struct kube_config_opts o = {.kubeconfig = path};
	struct kube_config *cfg;

	assert_int_equal(load(NULL, &o, &cfg, err), -1);
	assert_null(cfg);
	gs_error_str(err, buf, size);
}

/* A YAML tag that does not fit its value: the error names the tags, never the value. */
static void tagged_values_never_quoted(void **state)
{
	static const char *const fields[] = {
		"token",    "password", "username", "client-key-data", "client-certificate-data",
		"tokenFile"};
	static const char *const tags[] = {"!!int", "!!float", "!!bool", "!!timestamp", "!!null"};

	(void)state;
	for (size_t f = 0; f < sizeof(fields) / sizeof(fields[0]); f++) {
		for (size_t t = 0; t < sizeof(tags) / sizeof(tags[0]); t++) {
			char body[256], want[192], buf[2048];
			struct gs_error err;
			const char *p;

			snprintf(body, sizeof(body), "    %s: %s tok-SECRET-%zu\n", fields[f],
				 tags[t], t);
			p = with_entries("tag.yaml", "    server: https://x\n", body);
			load_fails(p, buf, sizeof(buf), &err);
			snprintf(want, sizeof(want),
				 "users[0].user.%s: cannot decode !!str as a %s (value not shown)",
				 fields[f], tags[t]);
			assert_string_equal(err.msg, want);
			assert_int_equal(err.line, 9);
			assert_int_equal(err.col, (int)(4 + strlen(fields[f]) + 2 + 1));
			assert_null(strstr(buf, "SECRET"));
		}
	}
	{
		char buf[2048];
		struct gs_error err;
		const char *p;

		/* !!binary with bad base64, a tagged key, the server, a bad UTF-8 byte. */
		p = with_entries("bin.yaml", "    server: https://x\n",
				 "    password: !!binary tok-SECRET!\n");
		load_fails(p, buf, sizeof(buf), &err);
		assert_string_equal(
			err.msg, "users[0].user.password: !!binary value contains invalid base64 "
				 "data");
		/* A key's error has its mapping's path; keys that are no field show as `*`. */
		p = with_entries("key.yaml", "    server: https://x\n",
				 "    !!int tok-SECRET: x\n");
		load_fails(p, buf, sizeof(buf), &err);
		assert_string_equal(
			err.msg, "users[0].user: cannot decode !!str as a !!int (value not shown)");
		p = with_entries("unknown.yaml", "    server: https://x\n",
				 "    tok-SECRET:\n      - token: !!int x\n");
		load_fails(p, buf, sizeof(buf), &err);
		assert_string_equal(err.msg, "users[0].user.*[0].token: cannot decode !!str as a "
					     "!!int (value not shown)");
		assert_null(strstr(buf, "SECRET"));
		p = with_entries("srv.yaml", "    server: !!bool https://u:SECRET@x/?t=SECRET\n",
				 "    token: t\n");
		load_fails(p, buf, sizeof(buf), &err);
		assert_string_equal(err.msg, "clusters[0].cluster.server: cannot decode !!str as a "
					     "!!bool (value not shown)");
		p = with_entries("utf8.yaml", "    server: https://x\n",
				 "    password: SECRET\xc3(\n");
		load_fails(p, buf, sizeof(buf), &err);
		assert_null(strstr(buf, "SECRET"));
		assert_null(strstr(buf, "byte 0x"));
	}
}

static void server_url_not_echoed(void **state)
{
	char buf[2048];
	struct gs_error err;
	const char *p;

	(void)state;
	p = with_entries("ftp.yaml", "    server: ftp://u:pw-SECRET@x/?t=SECRET#SECRET\n",
			 "    token: t\n");
	load_fails(p, buf, sizeof(buf), &err);
	assert_string_equal(
		err.msg, "cluster \"c\": server \"ftp://x/\" must be an https:// or http:// URL");
	assert_null(strstr(buf, "SECRET"));
}

/* CR, LF, NUL or any control character would reach a header or the URL: refused. */
static void control_characters_refused(void **state)
{
	static const struct {
		const char *cluster, *user, *msg;
		int line, col;
	} cases[] = {
		{"    server: https://x\n", "    token: \"tok-SECRET\\r\\nX-Injected: 1\"\n",
		 "user \"u\": token must not contain control characters (found 0x0d; value not "
		 "shown)",
		 9, 12},
		{"    server: https://x\n", "    username: \"admin\\nX-Injected: 1\"\n",
		 "user \"u\": username must not contain control characters (found 0x0a; value not "
		 "shown)",
		 9, 15},
		{"    server: https://x\n", "    username: a\n    password: \"pw-SECRET\\x01\"\n",
		 "user \"u\": password must not contain control characters (found 0x01; value not "
		 "shown)",
		 10, 15},
		{"    server: https://x\n", "    token: \"tok-SECRET\\0rest\"\n",
		 "user \"u\": token contains a NUL byte (value not shown)", 9, 12},
		{"    server: \"https://x/\\r\\nX-Injected: 1\"\n", "    token: t\n",
		 "cluster \"c\": server must not contain control characters (found 0x0d; value not "
		 "shown)",
		 5, 13},
		{"    server: https://x\n    tls-server-name: \"k\\tx\"\n", "    token: t\n",
		 "cluster \"c\": tls-server-name must not contain control characters (found 0x09; "
		 "value not shown)",
		 6, 22},
		/* base64 may be folded over lines: the newline passes, the content is judged. */
		{"    server: https://x\n    certificate-authority-data: \"bm90\\nIGEgY2VydA==\"\n",
		 "    token: t\n",
		 "cluster \"c\": certificate-authority-data holds no PEM certificate", 6, 33},
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char buf[2048];
		struct gs_error err;
		const char *p = with_entries("ctl.yaml", cases[i].cluster, cases[i].user);

		load_fails(p, buf, sizeof(buf), &err);
		assert_string_equal(err.msg, cases[i].msg);
		assert_int_equal(err.line, cases[i].line);
		assert_int_equal(err.col, cases[i].col);
		assert_null(strstr(buf, "SECRET"));
	}
}

/* tokenFile: Go's strings.TrimSpace at the ends, no control character inside. */
static void token_file_trimmed_and_checked(void **state)
{
	static const struct {
		const char *content; /* after the first byte, which the loop writes */
		size_t len;
		const char *token, *why;
	} cases[] = {
		{" \v\f tok-ok \xc2\xa0\xe2\x80\x83\r\n", 17, "tok-ok", NULL},
		{"tok-ok\n\n", 8, "tok-ok", NULL},
		{"  tok-SECRET\r\nX-Injected: 1\n", 28, NULL,
		 "the token must not contain control characters (found 0x0d; value not shown)"},
		{"tok-SECRET\0rest\n", 16, NULL,
		 "the token must not contain control characters (found 0x00; value not shown)"},
		{"tok-SECRET\x7fX\n", 13, NULL,
		 "the token must not contain control characters (found 0x7f; value not shown)"},
		{" \r\n\t", 4, NULL, "is empty"},
	};
	char tok[192];
	const char *p;

	(void)state;
	snprintf(tok, sizeof(tok), "%s/tok", tmpdir);
	p = with_entries("tf.yaml", "    server: https://x\n", "    tokenFile: tok\n");
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct kube_config_opts o = {.kubeconfig = p};
		struct kube_config *cfg;
		struct gs_error err;
		char buf[2048], want[512];
		FILE *f = fopen(tok, "wb");

		assert_non_null(f);
		assert_int_equal(fwrite(cases[i].content, 1, cases[i].len, f), cases[i].len);
		fclose(f);
		if (cases[i].token) {
			assert_int_equal(load(NULL, &o, &cfg, &err), 0);
			assert_string_equal(cfg->token, cases[i].token);
			kube_config_free(cfg);
			continue;
		}
		load_fails(p, buf, sizeof(buf), &err);
		snprintf(want, sizeof(want), "user \"u\": tokenFile \"%s\"%s%s", tok,
			 strcmp(cases[i].why, "is empty") ? ": " : " ", cases[i].why);
		assert_string_equal(err.msg, want);
		assert_int_equal(err.line, 9);
		assert_int_equal(err.col, 16);
		assert_null(strstr(buf, "SECRET"));
	}
}

static void in_cluster_fallback(void **state)
{
	struct kube_config_env env = {
		.home = tmpdir, .service_host = "10.96.0.1", .service_port = "443"};
	struct kube_config_opts o = {.namespace = "override"};
	struct kube_config *cfg;
	struct gs_error err;
	char sa[128], path[192], buf[256];

	(void)state;
	snprintf(sa, sizeof(sa), "%s/sa", tmpdir);
	env.sa_dir = sa;
	assert_int_equal(mkdir(sa, 0700), 0);
	/* No token yet: the error names the file. */
	assert_int_equal(kube_config_load_env(&cfg, NULL, &env, &err), -1);
	snprintf(buf, sizeof(buf),
		 "in-cluster config: service account token \"%s/token\": No such file or directory",
		 sa);
	assert_string_equal(err.msg, buf);

	write_tmp("sa/token", "eyJhbGciOi.sa-token\n");
	snprintf(path, sizeof(path), "%s/pki/ca.crt", DATA);
	{
		size_t n;
		char *ca = slurp(path, &n);
		write_tmp("sa/ca.crt", ca);
		free(ca);
	}
	write_tmp("sa/namespace", "gpu-share");
	/* The service-account token is checked as a tokenFile is. */
	write_tmp("sa/token", "eyJhbGciOi.SECRET\r\nX-Injected: 1\n");
	assert_int_equal(kube_config_load_env(&cfg, NULL, &env, &err), -1);
	snprintf(buf, sizeof(buf),
		 "in-cluster config: service account token \"%s/token\": the token must not "
		 "contain control characters (found 0x0d; value not shown)",
		 sa);
	assert_string_equal(err.msg, buf);
	write_tmp("sa/token", "eyJhbGciOi.sa-token\n");
	assert_int_equal(kube_config_load_env(&cfg, NULL, &env, &err), 0);
	assert_string_equal(cfg->source, "in-cluster");
	assert_string_equal(cfg->server, "https://10.96.0.1:443");
	assert_string_equal(cfg->token, "eyJhbGciOi.sa-token");
	snprintf(buf, sizeof(buf), "%s/token", sa);
	assert_string_equal(cfg->token_file, buf);
	snprintf(buf, sizeof(buf), "%s/ca.crt", sa);
	assert_pem(&cfg->ca, path, buf);
	assert_string_equal(cfg->namespace, "gpu-share");
	assert_null(cfg->context);
	kube_config_free(cfg);

	env.service_host = "fd00::1";
	env.pod_namespace = "from-downward-api";
	assert_int_equal(kube_config_load_env(&cfg, &o, &env, &err), 0);
	assert_string_equal(cfg->server, "https://[fd00::1]:443");
	assert_string_equal(cfg->namespace, "override");
	kube_config_free(cfg);
	/* clientcmd: $POD_NAMESPACE before the service account's namespace file. */
	assert_int_equal(kube_config_load_env(&cfg, NULL, &env, &err), 0);
	assert_string_equal(cfg->namespace, "from-downward-api");
	kube_config_free(cfg);
	env.pod_namespace = NULL;

	/* A CA that is not PEM is said at load, not at the first request. */
	write_tmp("sa/ca.crt", "not a certificate\n");
	assert_int_equal(kube_config_load_env(&cfg, NULL, &env, &err), -1);
	assert_non_null(strstr(err.msg, "in-cluster config"));
	/* --insecure-skip-tls-verify does without it. */
	{
		struct kube_config_opts insecure = {.insecure_skip_tls_verify = true};
		assert_int_equal(kube_config_load_env(&cfg, &insecure, &env, &err), 0);
		assert_null(cfg->ca.data);
		assert_true(cfg->insecure_skip_tls_verify);
		kube_config_free(cfg);
	}
	{
		size_t n;
		char *ca = slurp(path, &n);
		write_tmp("sa/ca.crt", ca);
		free(ca);
	}

	/* A kubeconfig with content takes precedence over in-cluster. */
	env.kubeconfig = DATA "/a.yaml";
	assert_int_equal(kube_config_load_env(&cfg, NULL, &env, &err), 0);
	assert_string_equal(cfg->context, "ctx-a");
	kube_config_free(cfg);
}

static void nothing_found(void **state)
{
	struct kube_config *cfg;
	struct gs_error err;
	const char *empty;
	char want[512];

	(void)state;
	assert_int_equal(load("/nonexistent/a:/nonexistent/b", NULL, &cfg, &err), -1);
	assert_string_equal(err.msg, "no kubeconfig found (no file in KUBECONFIG exists) and "
				     "unable to load in-cluster configuration, "
				     "KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT must be "
				     "defined; pass --kubeconfig or set KUBECONFIG");
	empty = write_tmp("empty.yaml", "# nothing\n");
	assert_int_equal(load(empty, NULL, &cfg, &err), -1);
	snprintf(want, sizeof(want),
		 "kubeconfig %s is empty and unable to load in-cluster configuration, "
		 "KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT must be defined; pass "
		 "--kubeconfig",
		 empty);
	assert_string_equal(err.msg, want);
	/* The host alone is not a cluster (client-go wants both). */
	{
		struct kube_config_env env = {.kubeconfig = empty, .service_host = "10.96.0.1"};
		assert_int_equal(kube_config_load_env(&cfg, NULL, &env, &err), -1);
		assert_string_equal(err.msg, want);
	}
}

/* kubectl's --server and --token: they override the cluster's server and the user's token. */
static void server_and_token_flags(void **state)
{
	struct kube_config_opts o = {.server = "https://flag.example:7443/", .token = "flag-token"};
	struct kube_config_opts only = {.server = "127.0.0.1:1", .token = "t"};
	struct kube_config_opts bad = {.server = "ftp://x"};
	struct kube_config_opts crlf = {.server = "https://x", .token = "t\r\nX-Evil: 1"};
	struct kube_config *cfg;
	struct gs_error err;

	(void)state;
	/* The context's cluster entry stays (CA), its server is replaced. */
	assert_int_equal(load(DATA "/a.yaml", &o, &cfg, &err), 0);
	assert_string_equal(cfg->context, "ctx-a");
	assert_string_equal(cfg->server, "https://flag.example:7443");
	assert_non_null(cfg->ca.data);
	assert_string_equal(cfg->token, "flag-token");
	assert_null(cfg->token_file);
	kube_config_free(cfg);

	/* A tokenFile is replaced too (no rotation from it any more). */
	assert_int_equal(load(DATA "/sub/b.yaml", &o, &cfg, &err), 0);
	assert_string_equal(cfg->token, "flag-token");
	assert_null(cfg->token_file);
	kube_config_free(cfg);

	/* No kubeconfig at all: the flags are the whole configuration. */
	assert_int_equal(load(NULL, &only, &cfg, &err), 0);
	assert_string_equal(cfg->server, "http://127.0.0.1:1");
	assert_string_equal(cfg->source, "command-line flags");
	assert_null(cfg->context);
	assert_string_equal(cfg->namespace, "default");
	assert_string_equal(cfg->token, "t");
	kube_config_free(cfg);

	assert_int_equal(load(NULL, &bad, &cfg, &err), -1);
	assert_string_equal(err.msg, "--server must be an https:// or http:// URL");
	assert_int_equal(load(NULL, &crlf, &cfg, &err), -1);
	assert_string_equal(err.msg, "--token holds a control character (a line break?)");
}

int main(void)
{
#define T(f) cmocka_unit_test_setup_teardown(f, setup, teardown)
	const struct CMUnitTest tests[] = {
		T(merge_first_file_wins),
		T(merge_reversed_and_relative_paths),
		T(context_override_uses_winning_entry),
		T(data_fields_win_over_files),
		T(server_without_scheme),
		T(missing_list_entries_are_skipped),
		T(explicit_file_overrides_env),
		T(home_config_when_env_unset),
		T(context_not_found),
		T(cluster_and_user_overrides),
		T(insecure_flag_clears_ca),
		T(bad_base64),
		T(missing_files_named),
		T(rejected_combinations),
		T(duplicate_names_in_one_file),
		T(secrets_never_in_messages),
		T(tagged_values_never_quoted),
		T(server_url_not_echoed),
		T(control_characters_refused),
		T(token_file_trimmed_and_checked),
		T(in_cluster_fallback),
		T(nothing_found),
		T(server_and_token_flags),
	};
#undef T
	return cmocka_run_group_tests(tests, NULL, NULL);
}
