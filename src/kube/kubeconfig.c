#include "kube/kubeconfig.h"

#include <errno.h>
#include <jansson.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <yaml.h> /* libyaml: found in the system dirs, src/ is -iquote only */

#include "yaml/ydoc.h"
#include "base/banned.h"

#define MAX_KUBECONFIG_BYTES (16u * 1024 * 1024)
#define MAX_KUBECONFIG_FILES 64u
#define MAX_PEM_FILE (4u * 1024 * 1024)
#define MAX_TOKEN_FILE (64u * 1024)
#define MAX_NAMESPACE_FILE 4096u
#define DEFAULT_SA_DIR "/var/run/secrets/kubernetes.io/serviceaccount"
/* client-go's rest.ErrNotInCluster, word for word. */
#define NOT_IN_CLUSTER                                                                             \
	"unable to load in-cluster configuration, KUBERNETES_SERVICE_HOST and "                    \
	"KUBERNETES_SERVICE_PORT must be defined"

/* One loaded kubeconfig file. */
struct kc_file {
	char *path;
	char *dir; /* for relative paths in its entries */
	struct ydoc_stream *ys;
	json_t *doc; /* borrowed from ys; NULL when the file is empty */
};

/* A named entry of clusters/users/contexts, after merging. */
struct kc_entry {
	const char *name;
	json_t *body; /* the `cluster`/`user`/`context` mapping; may be NULL */
	json_t *item; /* the list item, for positions */
	const struct kc_file *file;
};

struct kc_map {
	struct kc_entry *v;
	size_t n;
	size_t cap;
};

struct kc_merged {
	struct kc_file *files;
	size_t n_files;
	struct kc_map clusters, users, contexts;
	const char *current_context;
	bool any; /* some file held anything at all */
};

/* ---- small helpers --------------------------------------------------------------------- */

static void wipe(void *p, size_t n)
{
	volatile unsigned char *v = p;

	while (n--)
		*v++ = 0;
}

static void wipe_str(char *s)
{
	if (s) {
		wipe(s, strlen(s));
		free(s);
	}
}

static void pem_release(struct kube_pem *p, bool secret)
{
	if (p->data && secret)
		wipe(p->data, p->len);
	free(p->data);
	free(p->origin);
	p->data = NULL;
	p->len = 0;
	p->origin = NULL;
}

void kube_config_free(struct kube_config *cfg)
{
	if (!cfg)
		return;
	free(cfg->source);
	free(cfg->context);
	free(cfg->cluster);
	free(cfg->user);
	free(cfg->namespace);
	free(cfg->server);
	free(cfg->tls_server_name);
	free(cfg->proxy_url);
	pem_release(&cfg->ca, false);
	pem_release(&cfg->client_cert, false);
	pem_release(&cfg->client_key, true);
	wipe_str(cfg->token);
	free(cfg->token_file);
	free(cfg->username);
	wipe_str(cfg->password);
	free(cfg);
}

static char *dir_of(const char *path)
{
	const char *slash = strrchr(path, '/');

	if (!slash)
		return gs_xstrdup(".");
	if (slash == path)
		return gs_xstrdup("/");
	return gs_xstrndup(path, (size_t)(slash - path));
}

/* client-go's ResolvePaths: relative to the defining file's directory, no `~`. */
static char *resolve(const struct kc_file *f, const char *p)
{
	if (p[0] == '/' || !f)
		return gs_xstrdup(p);
	return gs_xasprintf("%s/%s", f->dir, p);
}

/*
 * Read a whole file of at most max bytes. On failure sets errno-style text
 * in *why (static) and returns -1. The buffer gets a trailing NUL not
 * counted in *len.
 */
static int read_file(const char *path, size_t max, unsigned char **data, size_t *len,
		     const char **why)
{
	FILE *f = fopen(path, "rb");
	unsigned char *buf;
	size_t n;
	struct stat sb;

	*data = NULL;
	*len = 0;
	if (!f) {
		*why = strerror(errno);
		return -1;
	}
	if (fstat(fileno(f), &sb) == 0 && S_ISDIR(sb.st_mode)) {
		fclose(f);
		*why = "is a directory";
		return -1;
	}
	buf = gs_xmalloc(max + 1);
	n = fread(buf, 1, max + 1, f);
	if (ferror(f)) {
		*why = strerror(errno ? errno : EIO);
		fclose(f);
		free(buf);
		return -1;
	}
	fclose(f);
	if (n > max) {
		wipe(buf, max + 1);
		free(buf);
		*why = "file too large";
		return -1;
	}
	buf[n] = '\0';
	*data = buf;
	*len = n;
	return 0;
}

static char *trim_dup(const unsigned char *s, size_t n)
{
	size_t b = 0, e = n;

	while (b < e && strchr(" \t\r\n", s[b]) && s[b])
		b++;
	while (e > b && strchr(" \t\r\n", s[e - 1]) && s[e - 1])
		e--;
	return gs_xstrndup((const char *)s + b, e - b);
}

/* Go's base64.StdEncoding, which ignores \r and \n. Returns -1 on bad input. */
static int b64_decode(const char *s, size_t n, unsigned char **out, size_t *out_len)
{
	unsigned char *o = gs_xmalloc(n / 4 * 3 + 4);
	size_t len = 0, q = 0, pad = 0;
	unsigned acc = 0;

	for (size_t i = 0; i < n; i++) {
		int ch = (unsigned char)s[i], v;
		if (ch == '\r' || ch == '\n')
			continue;
		if (ch == '=') {
			pad++;
			v = 0;
		} else {
			if (pad)
				goto bad; /* data after padding */
			if (ch >= 'A' && ch <= 'Z')
				v = ch - 'A';
			else if (ch >= 'a' && ch <= 'z')
				v = ch - 'a' + 26;
			else if (ch >= '0' && ch <= '9')
				v = ch - '0' + 52;
			else if (ch == '+')
				v = 62;
			else if (ch == '/')
				v = 63;
			else
				goto bad;
		}
		acc = acc << 6 | (unsigned)v;
		if (++q == 4) {
			if (pad > 2)
				goto bad;
			o[len++] = (unsigned char)(acc >> 16);
			if (pad < 2)
				o[len++] = (unsigned char)(acc >> 8);
			if (pad < 1)
				o[len++] = (unsigned char)acc;
			acc = 0;
			q = 0;
		}
	}
	if (q != 0)
		goto bad;
	*out = o;
	*out_len = len;
	return 0;
bad:
	wipe(o, n / 4 * 3 + 4);
	free(o);
	return -1;
}

/* Error at `key` of `obj` inside file f, "file:line:col: ...". */
static void at_key(const struct kc_file *f, const json_t *obj, const char *key,
		   struct gs_error *err, const char *fmt, ...)
	__attribute__((format(printf, 5, 6)));

static void at_key(const struct kc_file *f, const json_t *obj, const char *key,
		   struct gs_error *err, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	ydoc_verror_at_key(f ? f->ys : NULL, obj, key, err, fmt, ap);
	va_end(ap);
}

/* Optional string field: NULL when absent or null; -1 when of another type. */
static int get_str(const struct kc_file *f, const json_t *obj, const char *key, const char *what,
		   const char **out, struct gs_error *err)
{
	json_t *v = json_object_get(obj, key);

	*out = NULL;
	if (!v || json_is_null(v))
		return 0;
	if (!json_is_string(v)) {
		at_key(f, obj, key, err, "%s: %s must be a string", what, key);
		return -1;
	}
	if (strlen(json_string_value(v)) != json_string_length(v)) {
		at_key(f, obj, key, err, "%s: %s contains a NUL byte (value not shown)", what, key);
		return -1;
	}
	{
		/* base64 `*-data` may be folded over lines; nothing else may hold a control. */
		const unsigned char *s = (const unsigned char *)json_string_value(v);
		size_t kl = strlen(key);
		bool data = kl > 5 && !strcmp(key + kl - 5, "-data");
		for (; *s; s++) {
			if ((*s >= 0x20 && *s != 0x7f) || (data && (*s == '\r' || *s == '\n')))
				continue;
			at_key(f, obj, key, err,
			       "%s: %s must not contain control characters (found 0x%02x; value "
			       "not shown)",
			       what, key, *s);
			return -1;
		}
	}
	*out = json_string_value(v);
	return 0;
}

static int get_bool(const struct kc_file *f, const json_t *obj, const char *key, const char *what,
		    bool *out, struct gs_error *err)
{
	json_t *v = json_object_get(obj, key);

	*out = false;
	if (!v || json_is_null(v))
		return 0;
	if (!json_is_boolean(v)) {
		at_key(f, obj, key, err, "%s: %s must be true or false", what, key);
		return -1;
	}
	*out = json_is_true(v);
	return 0;
}

int kube_ctl_char(const char *s, size_t len)
{
	for (size_t i = 0; i < len; i++) {
		unsigned char ch = (unsigned char)s[i];
		if (ch < 0x20 || ch == 0x7f)
			return ch;
	}
	return -1;
}

bool kube_proxy_url_ok(const char *url)
{
	static const char *const schemes[] = {"http://", "https://", "socks5://", "socks5h://"};

	for (size_t i = 0; i < sizeof(schemes) / sizeof(schemes[0]); i++)
		if (!strncmp(url, schemes[i], strlen(schemes[i])) && url[strlen(schemes[i])])
			return kube_ctl_char(url, strlen(url)) < 0;
	return false;
}

/* Append p[0..n) to out at *o, bytes outside printable ASCII as %XX. */
static void append_shown(char *out, size_t *o, const char *p, size_t n)
{
	static const char hex[] = "0123456789ABCDEF";

	for (size_t i = 0; i < n; i++) {
		unsigned char ch = (unsigned char)p[i];
		if (ch <= 0x20 || ch >= 0x7f) {
			out[(*o)++] = '%';
			out[(*o)++] = hex[ch >> 4];
			out[(*o)++] = hex[ch & 15];
		} else {
			out[(*o)++] = (char)ch;
		}
	}
}

char *kube_url_shown(const char *url)
{
	const char *p = url ? url : "", *sep = strstr(p, "://"), *auth, *end, *host;
	char *out = gs_xmalloc(strlen(p) * 3 + 1);
	size_t o = 0;

	end = p + strcspn(p, "?#");
	if (sep && sep > end)
		sep = NULL; /* a "://" inside the query is no scheme */
	auth = sep ? sep + 3 : p;
	host = auth;
	for (const char *q = auth; q < end; q++)
		if (*q == '@')
			host = q + 1;
	append_shown(out, &o, p, (size_t)(auth - p));
	append_shown(out, &o, host, (size_t)(end - host));
	out[o] = '\0';
	return out;
}

/* Bytes of a white-space rune (Go's unicode.IsSpace) starting at s[i], else 0. */
static size_t space_at(const unsigned char *s, size_t n, size_t i)
{
	if (strchr(" \t\n\v\f\r", s[i]) && s[i])
		return 1;
	if (i + 1 < n && s[i] == 0xc2 && (s[i + 1] == 0x85 || s[i + 1] == 0xa0))
		return 2; /* NEL, NO-BREAK SPACE */
	if (i + 2 < n && s[i] == 0xe1 && s[i + 1] == 0x9a && s[i + 2] == 0x80)
		return 3; /* OGHAM SPACE MARK */
	if (i + 2 < n && s[i] == 0xe2 && s[i + 1] == 0x80 &&
	    (s[i + 2] <= 0x8a || s[i + 2] == 0xa8 || s[i + 2] == 0xa9 || s[i + 2] == 0xaf))
		return 3; /* U+2000..200A, LINE/PARAGRAPH SEPARATOR, NARROW NBSP */
	if (i + 2 < n && s[i] == 0xe2 && s[i + 1] == 0x81 && s[i + 2] == 0x9f)
		return 3; /* MEDIUM MATHEMATICAL SPACE */
	if (i + 2 < n && s[i] == 0xe3 && s[i + 1] == 0x80 && s[i + 2] == 0x80)
		return 3; /* IDEOGRAPHIC SPACE */
	return 0;
}

/* Go's strings.TrimSpace over s[0..n): the kept range in *b, *e. */
static void go_trim_space(const unsigned char *s, size_t n, size_t *b, size_t *e)
{
	size_t k;

	*b = 0;
	*e = n;
	while (*b < *e && (k = space_at(s, *e, *b)) != 0)
		*b += k;
	while (*e > *b) {
		size_t back = 0;
		for (size_t w = 1; w <= 3 && w <= *e - *b && !back; w++)
			if (space_at(s, *e, *e - w) == w)
				back = w;
		if (!back)
			break;
		*e -= back;
	}
}

int kube_token_file_read(const char *path, char **token, struct timespec *mtime,
			 struct gs_error *err)
{
	FILE *f = fopen(path, "rb");
	unsigned char *buf;
	size_t n, b, e;
	struct stat sb;
	int ch;

	*token = NULL;
	if (!f) {
		gs_error_set(err, "\"%s\": %s", path, strerror(errno));
		return -1;
	}
	if (fstat(fileno(f), &sb) == 0 && S_ISDIR(sb.st_mode)) {
		fclose(f);
		gs_error_set(err, "\"%s\": is a directory", path);
		return -1;
	}
	if (mtime)
		*mtime = sb.st_mtim;
	buf = gs_xmalloc(MAX_TOKEN_FILE + 1);
	n = fread(buf, 1, MAX_TOKEN_FILE + 1, f);
	if (ferror(f) || n > MAX_TOKEN_FILE) {
		gs_error_set(err, "\"%s\": %s", path,
			     n > MAX_TOKEN_FILE ? "file too large" : strerror(errno ? errno : EIO));
		fclose(f);
		wipe(buf, MAX_TOKEN_FILE + 1);
		free(buf);
		return -1;
	}
	fclose(f);
	go_trim_space(buf, n, &b, &e);
	ch = kube_ctl_char((const char *)buf + b, e - b);
	if (b == e)
		gs_error_set(err, "\"%s\" is empty", path);
	else if (ch >= 0)
		gs_error_set(err,
			     "\"%s\": the token must not contain control characters (found "
			     "0x%02x; value not shown)",
			     path, ch);
	else
		*token = gs_xstrndup((const char *)buf + b, e - b);
	wipe(buf, n);
	free(buf);
	return *token ? 0 : -1;
}

/* ---- loading and merging --------------------------------------------------------------- */

static void merged_release(struct kc_merged *m)
{
	for (size_t i = 0; i < m->n_files; i++) {
		free(m->files[i].path);
		free(m->files[i].dir);
		ydoc_stream_free(m->files[i].ys);
	}
	free(m->files);
	free(m->clusters.v);
	free(m->users.v);
	free(m->contexts.v);
	memset(m, 0, sizeof(*m));
}

static const struct kc_entry *map_find(const struct kc_map *m, const char *name)
{
	for (size_t i = 0; i < m->n; i++)
		if (!strcmp(m->v[i].name, name))
			return &m->v[i];
	return NULL;
}

/*
 * Merge one list (`clusters`, `users`, `contexts`) of file f into map:
 * a name the map already has is kept (the first file wins, whole entry);
 * a name twice in one file is an error, as in client-go's conversion.
 */
static int merge_list(struct kc_merged *m, struct kc_map *map, const struct kc_file *f,
		      const char *list, const char *inner, struct gs_error *err)
{
	json_t *arr = json_object_get(f->doc, list);
	size_t first_of_file = map->n;
	size_t i;
	json_t *item;

	if (!arr || json_is_null(arr))
		return 0;
	if (!json_is_array(arr)) {
		at_key(f, f->doc, list, err, "%s must be a list", list);
		return -1;
	}
	json_array_foreach (arr, i, item) {
		json_t *name = json_object_get(item, "name"), *body;
		const struct kc_entry *old;

		if (!json_is_object(item)) {
			at_key(f, item, NULL, err, "%s[%zu] must be a mapping", list, i);
			return -1;
		}
		if (!json_is_string(name) || !json_string_length(name)) {
			at_key(f, item, "name", err, "%s[%zu] needs a name", list, i);
			return -1;
		}
		body = json_object_get(item, inner);
		if (body && !json_is_null(body) && !json_is_object(body)) {
			at_key(f, item, inner, err, "%s[%zu].%s must be a mapping", list, i, inner);
			return -1;
		}
		old = map_find(map, json_string_value(name));
		if (old && (size_t)(old - map->v) >= first_of_file) {
			at_key(f, item, "name", err, "duplicate name \"%s\" in %s",
			       json_string_value(name), list);
			return -1;
		}
		m->any = true;
		if (old)
			continue;
		if (map->n == map->cap) {
			map->cap = map->cap ? map->cap * 2 : 8;
			map->v = gs_xrealloc(map->v, map->cap * sizeof(*map->v));
		}
		map->v[map->n].name = json_string_value(name);
		map->v[map->n].body = json_is_object(body) ? body : NULL;
		map->v[map->n].item = item;
		map->v[map->n].file = f;
		map->n++;
	}
	return 0;
}

#define PATH_MAX_DEPTH 64u

/* One open mapping or sequence on the way to a node. */
struct path_frame {
	bool is_map;
	bool want_key; /* mapping: the next scalar is a key */
	char *key;     /* mapping: the key of the value being read */
	size_t index;  /* sequence: the index of the item being read */
};

/* The keys of a kubeconfig (client-go's clientcmd/api/v1 types); others show as `*`. */
static const char *shown_key(const char *key)
{
	static const char *const known[] = {"apiVersion",
					    "kind",
					    "preferences",
					    "clusters",
					    "users",
					    "contexts",
					    "current-context",
					    "extensions",
					    "extension",
					    "name",
					    "cluster",
					    "user",
					    "context",
					    "server",
					    "tls-server-name",
					    "insecure-skip-tls-verify",
					    "certificate-authority",
					    "certificate-authority-data",
					    "proxy-url",
					    "disable-compression",
					    "client-certificate",
					    "client-certificate-data",
					    "client-key",
					    "client-key-data",
					    "token",
					    "tokenFile",
					    "as",
					    "as-uid",
					    "as-groups",
					    "as-user-extra",
					    "username",
					    "password",
					    "auth-provider",
					    "exec",
					    "namespace",
					    "colors",
					    "config",
					    "command",
					    "args",
					    "env",
					    "installHint",
					    "provideClusterInfo",
					    "interactiveMode"};

	for (size_t i = 0; key && i < sizeof(known) / sizeof(known[0]); i++)
		if (!strcmp(key, known[i]))
			return key;
	return "*";
}

static char *path_of(const struct path_frame *fr, size_t n)
{
	char *p = gs_xstrdup("");

	for (size_t i = 0; i < n; i++) {
		char *next = fr[i].is_map
				     ? gs_xasprintf("%s%s%s", p, i ? "." : "", shown_key(fr[i].key))
				     : gs_xasprintf("%s[%zu]", p, fr[i].index);
		free(p);
		p = next;
	}
	return p;
}

static void path_next(struct path_frame *fr, size_t n)
{
	if (!n)
		return;
	if (fr[n - 1].is_map) {
		free(fr[n - 1].key);
		fr[n - 1].key = NULL;
		fr[n - 1].want_key = true;
	} else {
		fr[n - 1].index++;
	}
}

/*
 * The path (`users[0].user.token`) of the node that starts at line:col of
 * buf, or NULL when none does: a YAML error there is the parser's, not a
 * value's. A key's error gets its mapping's path. Only kubeconfig field
 * names are shown (any other key is `*`), never a value.
 */
static char *path_at(const unsigned char *buf, size_t len, int line, int col)
{
	struct path_frame fr[PATH_MAX_DEPTH];
	size_t n = 0;
	yaml_parser_t parser;
	yaml_event_t ev;
	char *found = NULL;
	bool done = false;

	if (!yaml_parser_initialize(&parser))
		return NULL;
	yaml_parser_set_input_string(&parser, buf, len);
	while (!done && yaml_parser_parse(&parser, &ev)) {
		yaml_event_type_t t = ev.type;
		bool node = t == YAML_SCALAR_EVENT || t == YAML_MAPPING_START_EVENT ||
			    t == YAML_SEQUENCE_START_EVENT || t == YAML_ALIAS_EVENT;
		bool is_key = n && fr[n - 1].is_map && fr[n - 1].want_key;

		if (node && (int)ev.start_mark.line + 1 == line &&
		    (int)ev.start_mark.column + 1 == col) {
			found = path_of(fr, is_key ? n - 1 : n);
			done = true;
		} else if (t == YAML_STREAM_END_EVENT) {
			done = true;
		} else if (t == YAML_SCALAR_EVENT && is_key) {
			fr[n - 1].key = gs_xstrndup((const char *)ev.data.scalar.value,
						    ev.data.scalar.length);
			fr[n - 1].want_key = false;
		} else if (t == YAML_SCALAR_EVENT || t == YAML_ALIAS_EVENT) {
			path_next(fr, n);
		} else if (t == YAML_MAPPING_START_EVENT || t == YAML_SEQUENCE_START_EVENT) {
			if (is_key || n == PATH_MAX_DEPTH) {
				done = true; /* a complex key, or too deep: no path */
			} else {
				fr[n].is_map = t == YAML_MAPPING_START_EVENT;
				fr[n].want_key = true;
				fr[n].key = NULL;
				fr[n].index = 0;
				n++;
			}
		} else if (t == YAML_MAPPING_END_EVENT || t == YAML_SEQUENCE_END_EVENT) {
			if (n)
				free(fr[--n].key);
			path_next(fr, n);
		}
		yaml_event_delete(&ev);
	}
	while (n)
		free(fr[--n].key);
	yaml_parser_delete(&parser);
	return found;
}

/* Prefix a positioned YAML error with the path of the value it is about, if any. */
static void prefix_path(const char *path, struct gs_error *err)
{
	unsigned char *buf;
	size_t len;
	const char *why;
	char *p;

	if (err->line <= 0 || read_file(path, MAX_KUBECONFIG_BYTES, &buf, &len, &why) != 0)
		return;
	p = path_at(buf, len, err->line, err->col);
	wipe(buf, len);
	free(buf);
	if (p && p[0])
		gs_error_prefix(err, "%s: ", p);
	free(p);
}

static int load_one(struct kc_merged *m, const char *path, bool must_exist, struct gs_error *err)
{
	struct ydoc_limits lim = ydoc_default_limits;
	struct kc_file *f;
	struct stat sb;
	json_t *doc = NULL, *cc;
	size_t ndocs;

	if (stat(path, &sb) != 0) {
		/* kubectl skips missing KUBECONFIG entries; an explicit file must exist. */
		if (errno == ENOENT && !must_exist)
			return 0;
		gs_error_set(err, "kubeconfig \"%s\": %s", path, strerror(errno));
		return -1;
	}
	/* m->files was sized for the whole list: entries point into it. */
	f = &m->files[m->n_files];
	memset(f, 0, sizeof(*f));
	lim.max_bytes = MAX_KUBECONFIG_BYTES;
	lim.hide_values = true; /* a credentials file: errors never quote its scalars */
	if (ydoc_load_file(path, &lim, &f->ys, err) != 0) {
		if (!err->file[0])
			gs_error_prefix(err, "kubeconfig \"%s\": ", path);
		else
			prefix_path(path, err);
		return -1;
	}
	f->path = gs_xstrdup(path);
	f->dir = dir_of(path);
	m->n_files++;
	ndocs = ydoc_stream_count(f->ys);
	for (size_t i = 0; i < ndocs; i++) {
		json_t *d = ydoc_stream_doc(f->ys, i);
		if (!d || json_is_null(d))
			continue;
		if (doc) {
			ydoc_error_at(f->ys, d, err, "a kubeconfig holds one YAML document");
			return -1;
		}
		doc = d;
	}
	if (!doc)
		return 0; /* an empty file is an empty config */
	if (!json_is_object(doc)) {
		ydoc_error_at(f->ys, doc, err, "a kubeconfig must be a mapping");
		return -1;
	}
	f->doc = doc;
	if (merge_list(m, &m->clusters, f, "clusters", "cluster", err) != 0 ||
	    merge_list(m, &m->users, f, "users", "user", err) != 0 ||
	    merge_list(m, &m->contexts, f, "contexts", "context", err) != 0)
		return -1;
	cc = json_object_get(doc, "current-context");
	if (cc && !json_is_null(cc) && !json_is_string(cc)) {
		at_key(f, doc, "current-context", err, "current-context must be a string");
		return -1;
	}
	if (json_string_length(cc) > 0) {
		m->any = true;
		if (!m->current_context)
			m->current_context = json_string_value(cc);
	}
	return 0;
}

/* The file list kubectl would read, in order; caller frees. */
static char **file_list(const struct kube_config_opts *opts, const struct kube_config_env *env,
			size_t *n, bool *explicit_file)
{
	char **v = NULL;
	const char *list;

	*n = 0;
	*explicit_file = false;
	if (opts && opts->kubeconfig && opts->kubeconfig[0]) {
		v = gs_xmalloc(sizeof(*v));
		v[(*n)++] = gs_xstrdup(opts->kubeconfig);
		*explicit_file = true;
		return v;
	}
	list = env->kubeconfig;
	if (list && list[0]) {
		const char *p = list;
		while (*p) {
			const char *e = strchr(p, ':');
			size_t len = e ? (size_t)(e - p) : strlen(p);
			bool dup = false;
			char *one = gs_xstrndup(p, len);
			for (size_t i = 0; i < *n; i++)
				dup = dup || !strcmp(v[i], one);
			if (!len || dup) {
				free(one);
			} else {
				v = gs_xrealloc(v, (*n + 1) * sizeof(*v));
				v[(*n)++] = one;
			}
			p += len;
			if (*p == ':')
				p++;
		}
		return v;
	}
	if (env->home && env->home[0]) {
		v = gs_xmalloc(sizeof(*v));
		v[(*n)++] = gs_xasprintf("%s/.kube/config", env->home);
	}
	return v;
}

/* ---- the chosen cluster and user ------------------------------------------------------- */

static bool looks_pem(const unsigned char *d, size_t n, const char *label)
{
	char begin[64];
	size_t bl;

	snprintf(begin, sizeof(begin), "-----BEGIN %s", label);
	bl = strlen(begin);
	for (size_t i = 0; i + bl <= n; i++)
		if (!memcmp(d + i, begin, bl))
			return true;
	return false;
}

static bool looks_pem_key(const unsigned char *d, size_t n)
{
	static const char tail[] = "PRIVATE KEY-----";
	size_t tl = sizeof(tail) - 1;

	if (!looks_pem(d, n, ""))
		return false;
	for (size_t i = 0; i + tl <= n; i++)
		if (!memcmp(d + i, tail, tl))
			return true;
	return false;
}

/*
 * Fill pem from `<key>-data` (base64, wins as in client-go) or `<key>`
 * (a file). what = e.g. `cluster "c"`. Never quotes the content.
 */
static int load_pem(const struct kc_entry *e, const char *key, const char *what,
		    bool data_and_file_is_error, struct kube_pem *pem, struct gs_error *err)
{
	char dkey[64];
	const char *data, *file;

	snprintf(dkey, sizeof(dkey), "%s-data", key);
	if (get_str(e->file, e->body, dkey, what, &data, err) != 0 ||
	    get_str(e->file, e->body, key, what, &file, err) != 0)
		return -1;
	if (data && !data[0])
		data = NULL;
	if (file && !file[0])
		file = NULL;
	if (data && file && data_and_file_is_error) {
		/* client-go refuses this combination for client credentials. */
		at_key(e->file, e->body, dkey, err, "%s: %s and %s are both specified; use one",
		       what, dkey, key);
		return -1;
	}
	if (data) {
		if (b64_decode(data, strlen(data), &pem->data, &pem->len) != 0) {
			at_key(e->file, e->body, dkey, err, "%s: %s is not valid base64", what,
			       dkey);
			return -1;
		}
		pem->origin = gs_xasprintf("%s %s", what, dkey);
	} else if (file) {
		char *path = resolve(e->file, file);
		const char *why;
		if (read_file(path, MAX_PEM_FILE, &pem->data, &pem->len, &why) != 0) {
			at_key(e->file, e->body, key, err, "%s: %s \"%s\": %s", what, key, path,
			       why);
			free(path);
			return -1;
		}
		pem->origin = path;
	}
	return 0;
}

static int pem_check(const struct kc_entry *e, const char *key, const struct kube_pem *pem,
		     bool is_key, const char *what, struct gs_error *err)
{
	const char *kind = is_key ? "private key" : "certificate";
	bool ok;

	if (!pem->data)
		return 0;
	ok = is_key ? looks_pem_key(pem->data, pem->len)
		    : looks_pem(pem->data, pem->len, "CERTIFICATE");
	if (ok)
		return 0;
	if (!e)
		gs_error_set(err, "%s: \"%s\" holds no PEM %s", what, pem->origin, kind);
	else if (!strncmp(pem->origin, what, strlen(what))) {
		char dkey[64];
		snprintf(dkey, sizeof(dkey), "%s-data", key);
		at_key(e->file, e->body, dkey, err, "%s: %s holds no PEM %s", what, dkey, kind);
	} else
		at_key(e->file, e->body, key, err, "%s: %s \"%s\" holds no PEM %s", what, key,
		       pem->origin, kind);
	return -1;
}

/*
 * What a server URL carries that no message may show, or NULL: userinfo
 * (anything before the last '@' ahead of a '?' or '#', as kube_url_shown
 * drops it), a query or a fragment. Refused at load, so whatever prints
 * cfg->server later cannot show a credential.
 */
static const char *server_secret_part(const char *server)
{
	const char *end = server + strcspn(server, "?#"), *auth = strstr(server, "://");

	auth = auth && auth < end ? auth + 3 : server;
	if (memchr(auth, '@', (size_t)(end - auth)))
		return "credentials";
	return *end == '?' ? "a query" : *end == '#' ? "a fragment" : NULL;
}

/* The --server flag's value: an http(s) URL or a bare host[:port]. Never echoed. */
static int check_server_flag(const char *server, struct gs_error *err)
{
	const char *secret = server_secret_part(server);

	if (secret) {
		gs_error_set(err, "--server must not carry %s (not shown)", secret);
		return -1;
	}
	if (strstr(server, "://") && strncmp(server, "https://", 8) != 0 &&
	    strncmp(server, "http://", 7) != 0) {
		gs_error_set(err, "--server must be an https:// or http:// URL");
		return -1;
	}
	for (const char *p = server; *p; p++)
		if ((unsigned char)*p < 0x20 || *p == 0x7f) {
			gs_error_set(err, "--server holds a control character");
			return -1;
		}
	return 0;
}

/*
 * --token, as kubectl's override: it replaces the user's token and tokenFile;
 * with basic auth it is the second authentication method kubectl refuses.
 */
static int apply_token_flag(struct kube_config *cfg, const struct kube_config_opts *opts,
			    struct gs_error *err)
{
	if (!opts || !opts->token || !opts->token[0])
		return 0;
	for (const char *p = opts->token; *p; p++)
		if ((unsigned char)*p < 0x20 || *p == 0x7f) {
			gs_error_set(err, "--token holds a control character (a line break?)");
			return -1;
		}
	if (cfg->username) {
		gs_error_set(err,
			     "more than one authentication method found for user \"%s\"; found "
			     "token (--token), basic auth; only one is allowed",
			     cfg->user ? cfg->user : "");
		return -1;
	}
	wipe_str(cfg->token);
	free(cfg->token_file);
	cfg->token_file = NULL;
	cfg->token = gs_xstrdup(opts->token);
	return 0;
}

/* client-go's DefaultServerURL: no scheme means https when TLS is configured, else http. */
static char *normalize_server(const char *server, bool tls)
{
	size_t n;
	char *s;

	if (strstr(server, "://"))
		s = gs_xstrdup(server);
	else
		s = gs_xasprintf("%s%s", tls ? "https://" : "http://", server);
	n = strlen(s);
	while (n > 0 && s[n - 1] == '/' && !(n >= 3 && s[n - 2] == '/' && s[n - 3] == ':'))
		s[--n] = '\0';
	return s;
}

/* --server with no cluster entry to start from: the flags are the whole cluster. */
static int flags_cluster(struct kube_config *cfg, const struct kube_config_opts *opts,
			 struct gs_error *err)
{
	if (check_server_flag(opts->server, err) != 0)
		return -1;
	cfg->insecure_skip_tls_verify = opts->insecure_skip_tls_verify;
	cfg->server = gs_xstrdup(opts->server);
	return 0;
}

/* Nothing but flags (no kubeconfig content): --server and maybe --token. */
static int from_flags(struct kube_config *cfg, const struct kube_config_opts *opts,
		      struct gs_error *err)
{
	char *s;

	if (!cfg->source)
		cfg->source = gs_xstrdup("command-line flags");
	cfg->namespace =
		gs_xstrdup(opts->namespace && opts->namespace[0] ? opts->namespace : "default");
	if (flags_cluster(cfg, opts, err) != 0 || apply_token_flag(cfg, opts, err) != 0)
		return -1;
	s = normalize_server(cfg->server, cfg->insecure_skip_tls_verify);
	free(cfg->server);
	cfg->server = s;
	return 0;
}

static int load_cluster(struct kube_config *cfg, const struct kc_entry *e,
			const struct kube_config_opts *opts, struct gs_error *err)
{
	char *what = gs_xasprintf("cluster \"%s\"", e->name);
	const char *server, *sni, *proxy;
	bool insecure;
	int rc = -1;
	json_t *empty = json_object();
	struct kc_entry ee = *e;

	if (!ee.body)
		ee.body = empty;
	if (get_str(e->file, ee.body, "server", what, &server, err) != 0 ||
	    get_str(e->file, ee.body, "tls-server-name", what, &sni, err) != 0 ||
	    get_str(e->file, ee.body, "proxy-url", what, &proxy, err) != 0 ||
	    get_bool(e->file, ee.body, "insecure-skip-tls-verify", what, &insecure, err) != 0)
		goto out;
	if (opts && opts->server && opts->server[0]) {
		/* --server replaces the entry's server; the rest of the entry stays. */
		if (check_server_flag(opts->server, err) != 0)
			goto out;
		server = opts->server;
	}
	if (!server || !server[0]) {
		at_key(e->file, e->body ? e->body : e->item, NULL, err, "%s has no server", what);
		goto out;
	}
	if (strstr(server, "://") && strncmp(server, "https://", 8) != 0 &&
	    strncmp(server, "http://", 7) != 0) {
		char *shown = kube_url_shown(server);
		at_key(e->file, ee.body, "server", err,
		       "%s: server \"%s\" must be an https:// or http:// URL", what, shown);
		free(shown);
		goto out;
	}
	if (server_secret_part(server)) {
		char *shown = kube_url_shown(server);
		at_key(e->file, ee.body, "server", err,
		       "%s: server \"%s\" must not carry %s (not shown)%s", what, shown,
		       server_secret_part(server),
		       strcmp(server_secret_part(server), "credentials")
			       ? ""
			       : "; use a token, tokenFile or client certificate");
		free(shown);
		goto out;
	}
	if (opts && opts->insecure_skip_tls_verify) {
		/* The flag clears the CA, as kubectl's override does. */
		insecure = true;
	} else {
		if (load_pem(&ee, "certificate-authority", what, false, &cfg->ca, err) != 0)
			goto out;
		if (insecure && cfg->ca.data) {
			at_key(e->file, ee.body, "insecure-skip-tls-verify", err,
			       "%s: a certificate authority and insecure-skip-tls-verify cannot "
			       "both be set",
			       what);
			goto out;
		}
		if (pem_check(&ee, "certificate-authority", &cfg->ca, false, what, err) != 0)
			goto out;
	}
	cfg->insecure_skip_tls_verify = insecure;
	cfg->tls_server_name = sni && sni[0] ? gs_xstrdup(sni) : NULL;
	if (proxy && proxy[0] && !kube_proxy_url_ok(proxy)) {
		char *shown = kube_url_shown(proxy);
		at_key(e->file, ee.body, "proxy-url", err,
		       "%s: proxy-url \"%s\" must be an http://, https:// or socks5:// URL", what,
		       shown);
		free(shown);
		goto out;
	}
	cfg->proxy_url = proxy && proxy[0] ? gs_xstrdup(proxy) : NULL;
	/* TLS-ness of a scheme-less server is decided after the user is read. */
	cfg->server = gs_xstrdup(server);
	rc = 0;
out:
	json_decref(empty);
	free(what);
	return rc;
}

/* "<key>" when the mapping has it, else "<key>-data": where to point an error. */
static const char *some_key(const json_t *body, const char *key)
{
	return json_object_get(body, key)   ? key
	       : !strcmp(key, "client-key") ? "client-key-data"
					    : "client-certificate-data";
}

static const char *const unsupported_user_fields[][2] = {
	{"exec", "exec credential plugins"},
	{"auth-provider", "auth-provider plugins"},
	{"as", "impersonation (as)"},
	{"as-uid", "impersonation (as-uid)"},
	{"as-groups", "impersonation (as-groups)"},
	{"as-user-extra", "impersonation (as-user-extra)"},
};

static int load_user(struct kube_config *cfg, const struct kc_entry *e, struct gs_error *err)
{
	char *what = gs_xasprintf("user \"%s\"", e->name);
	const char *token, *token_file, *username, *password;
	int rc = -1;

	if (!e->body) {
		free(what);
		return 0;
	}
	for (size_t i = 0; i < sizeof(unsupported_user_fields) / sizeof(unsupported_user_fields[0]);
	     i++) {
		json_t *v = json_object_get(e->body, unsupported_user_fields[i][0]);
		bool empty = !v || json_is_null(v) ||
			     (json_is_string(v) && !json_string_length(v)) ||
			     (json_is_array(v) && !json_array_size(v)) ||
			     (json_is_object(v) && !json_object_size(v));
		if (!empty) {
			at_key(e->file, e->body, unsupported_user_fields[i][0], err,
			       "%s: %s are not supported; use a token, tokenFile or client "
			       "certificate",
			       what, unsupported_user_fields[i][1]);
			goto out;
		}
	}
	if (get_str(e->file, e->body, "token", what, &token, err) != 0 ||
	    get_str(e->file, e->body, "tokenFile", what, &token_file, err) != 0 ||
	    get_str(e->file, e->body, "username", what, &username, err) != 0 ||
	    get_str(e->file, e->body, "password", what, &password, err) != 0)
		goto out;
	if (load_pem(e, "client-certificate", what, true, &cfg->client_cert, err) != 0 ||
	    load_pem(e, "client-key", what, true, &cfg->client_key, err) != 0)
		goto out;
	if (cfg->client_cert.data && !cfg->client_key.data) {
		at_key(e->file, e->body, some_key(e->body, "client-certificate"), err,
		       "%s: client-certificate needs client-key (or client-key-data)", what);
		goto out;
	}
	if (cfg->client_key.data && !cfg->client_cert.data) {
		at_key(e->file, e->body, some_key(e->body, "client-key"), err,
		       "%s: client-key needs client-certificate (or client-certificate-data)",
		       what);
		goto out;
	}
	if (pem_check(e, "client-certificate", &cfg->client_cert, false, what, err) != 0 ||
	    pem_check(e, "client-key", &cfg->client_key, true, what, err) != 0)
		goto out;
	if (((token && token[0]) || (token_file && token_file[0])) &&
	    ((username && username[0]) || (password && password[0]))) {
		at_key(e->file, e->body, "username", err,
		       "more than one authentication method found for %s; found token, basic "
		       "auth; only one is allowed",
		       what);
		goto out;
	}
	if (token && token[0]) {
		cfg->token = gs_xstrdup(token);
	} else if (token_file && token_file[0]) {
		char *path = resolve(e->file, token_file);
		struct gs_error terr;
		if (kube_token_file_read(path, &cfg->token, NULL, &terr) != 0) {
			at_key(e->file, e->body, "tokenFile", err, "%s: tokenFile %s", what,
			       terr.msg);
			free(path);
			goto out;
		}
		cfg->token_file = path;
	}
	if (username && username[0]) {
		cfg->username = gs_xstrdup(username);
		cfg->password = gs_xstrdup(password ? password : "");
	}
	rc = 0;
out:
	free(what);
	return rc;
}

static char *source_of(const struct kc_merged *m)
{
	size_t len = 1;
	char *s;

	for (size_t i = 0; i < m->n_files; i++)
		len += strlen(m->files[i].path) + 1;
	s = gs_xmalloc(len);
	s[0] = '\0';
	for (size_t i = 0, o = 0; i < m->n_files; i++) {
		size_t l = strlen(m->files[i].path);
		if (i)
			s[o++] = ':';
		memcpy(s + o, m->files[i].path, l + 1);
		o += l;
	}
	return s;
}

static bool has_server_flag(const struct kube_config_opts *opts)
{
	return opts && opts->server && opts->server[0];
}

static int from_kubeconfig(struct kube_config *cfg, const struct kc_merged *m,
			   const struct kube_config_opts *opts, struct gs_error *err)
{
	const char *ctx_name =
		opts && opts->context && opts->context[0] ? opts->context : m->current_context;
	const char *cluster_name = NULL, *user_name = NULL, *ns = NULL;
	const struct kc_entry *ctx = NULL, *cl, *us = NULL;

	if (ctx_name) {
		ctx = map_find(&m->contexts, ctx_name);
		if (!ctx) {
			gs_error_set(err, "context \"%s\" not found in kubeconfig %s", ctx_name,
				     cfg->source);
			return -1;
		}
		cfg->context = gs_xstrdup(ctx_name);
		if (ctx->body) {
			char *what = gs_xasprintf("context \"%s\"", ctx_name);
			int r = get_str(ctx->file, ctx->body, "cluster", what, &cluster_name,
					err) ||
				get_str(ctx->file, ctx->body, "user", what, &user_name, err) ||
				get_str(ctx->file, ctx->body, "namespace", what, &ns, err);
			free(what);
			if (r)
				return -1;
		}
	}
	if (opts && opts->cluster && opts->cluster[0])
		cluster_name = opts->cluster;
	if (opts && opts->user && opts->user[0])
		user_name = opts->user;
	if (!ctx_name && !(opts && opts->cluster && opts->cluster[0]) && !has_server_flag(opts)) {
		gs_error_set(err, "no current-context is set in kubeconfig %s; pass --context",
			     cfg->source);
		return -1;
	}
	/* With --server, a cluster entry is optional: the flag is the whole cluster. */
	cl = NULL;
	if (cluster_name && cluster_name[0]) {
		cl = map_find(&m->clusters, cluster_name);
		if (!cl) {
			gs_error_set(err, "cluster \"%s\" not found in kubeconfig %s", cluster_name,
				     cfg->source);
			return -1;
		}
		cfg->cluster = gs_xstrdup(cluster_name);
	} else if (!has_server_flag(opts)) {
		gs_error_set(err, "context \"%s\" names no cluster (in kubeconfig %s)", ctx_name,
			     cfg->source);
		return -1;
	}
	if (user_name && user_name[0]) {
		us = map_find(&m->users, user_name);
		if (!us) {
			gs_error_set(err, "user \"%s\" not found in kubeconfig %s", user_name,
				     cfg->source);
			return -1;
		}
		cfg->user = gs_xstrdup(user_name);
	}
	if (opts && opts->namespace && opts->namespace[0])
		ns = opts->namespace;
	cfg->namespace = gs_xstrdup(ns && ns[0] ? ns : "default");
	if (cl ? load_cluster(cfg, cl, opts, err) != 0 : flags_cluster(cfg, opts, err) != 0)
		return -1;
	if (us && load_user(cfg, us, err) != 0)
		return -1;
	if (apply_token_flag(cfg, opts, err) != 0)
		return -1;
	{
		char *s = normalize_server(cfg->server, cfg->ca.data || cfg->client_cert.data ||
								cfg->insecure_skip_tls_verify);
		free(cfg->server);
		cfg->server = s;
	}
	return 0;
}

static int in_cluster(struct kube_config *cfg, const struct kube_config_opts *opts,
		      const struct kube_config_env *env, struct gs_error *err)
{
	const char *dir = env->sa_dir && env->sa_dir[0] ? env->sa_dir : DEFAULT_SA_DIR;
	char *path;
	unsigned char *data;
	size_t len;
	const char *why;

	cfg->source = gs_xstrdup("in-cluster");
	path = gs_xasprintf("%s/token", dir);
	if (kube_token_file_read(path, &cfg->token, NULL, err) != 0) {
		gs_error_prefix(err, "in-cluster config: service account token ");
		free(path);
		return -1;
	}
	cfg->token_file = path;
	/*
	 * rest.InClusterConfig logs an unreadable ca.crt and goes on with the
	 * system's trust store, which cannot verify the cluster's own CA: the
	 * first request would fail on the certificate. Said here instead.
	 */
	cfg->insecure_skip_tls_verify = opts && opts->insecure_skip_tls_verify;
	if (!cfg->insecure_skip_tls_verify) {
		path = gs_xasprintf("%s/ca.crt", dir);
		if (read_file(path, MAX_PEM_FILE, &cfg->ca.data, &cfg->ca.len, &why) != 0) {
			gs_error_set(err, "in-cluster config: \"%s\": %s", path, why);
			free(path);
			return -1;
		}
		cfg->ca.origin = path;
		if (pem_check(NULL, NULL, &cfg->ca, false, "in-cluster config", err) != 0)
			return -1;
	}
	/*
	 * clientcmd's namespace for in-cluster: -n, else $POD_NAMESPACE (the
	 * downward API), else the service account's namespace file, else default.
	 */
	if (opts && opts->namespace && opts->namespace[0]) {
		cfg->namespace = gs_xstrdup(opts->namespace);
	} else if (env->pod_namespace && env->pod_namespace[0]) {
		cfg->namespace = gs_xstrdup(env->pod_namespace);
	} else {
		path = gs_xasprintf("%s/namespace", dir);
		if (read_file(path, MAX_NAMESPACE_FILE, &data, &len, &why) == 0) {
			cfg->namespace = trim_dup(data, len);
			free(data);
		}
		free(path);
	}
	if (!cfg->namespace || !cfg->namespace[0]) {
		free(cfg->namespace);
		cfg->namespace = gs_xstrdup("default");
	}
	/* net.JoinHostPort: brackets around an IPv6 literal. */
	if (strchr(env->service_host, ':'))
		cfg->server = gs_xasprintf("https://[%s]:%s", env->service_host, env->service_port);
	else
		cfg->server = gs_xasprintf("https://%s:%s", env->service_host, env->service_port);
	return apply_token_flag(cfg, opts, err);
}

int kube_config_load_env(struct kube_config **out, const struct kube_config_opts *opts,
			 const struct kube_config_env *env, struct gs_error *err)
{
	struct kc_merged m;
	struct kube_config *cfg;
	char **files;
	size_t n;
	bool explicit_file;
	int rc = -1;

	*out = NULL;
	memset(&m, 0, sizeof(m));
	files = file_list(opts, env, &n, &explicit_file);
	if (n > MAX_KUBECONFIG_FILES) {
		gs_error_set(err, "KUBECONFIG lists more than %u files", MAX_KUBECONFIG_FILES);
		goto out;
	}
	m.files = gs_xcalloc(n ? n : 1, sizeof(*m.files));
	for (size_t i = 0; i < n; i++) {
		if (load_one(&m, files[i], explicit_file, err) != 0)
			goto out;
	}
	cfg = gs_xcalloc(1, sizeof(*cfg));
	if (opts)
		cfg->request_timeout_ms = opts->request_timeout_ms;
	if (!m.any) {
		/* kubectl: an empty merged config means in-cluster, when that is possible. */
		if (has_server_flag(opts)) {
			rc = from_flags(cfg, opts, err);
		} else if (env->service_host && env->service_host[0] && env->service_port &&
			   env->service_port[0]) {
			rc = in_cluster(cfg, opts, env, err);
		} else if (m.n_files) {
			char *src = source_of(&m);
			gs_error_set(err, "kubeconfig %s is empty and %s; pass --kubeconfig", src,
				     NOT_IN_CLUSTER);
			free(src);
		} else {
			gs_error_set(err,
				     "no kubeconfig found (%s) and %s; pass --kubeconfig "
				     "or set KUBECONFIG",
				     env->kubeconfig && env->kubeconfig[0]
					     ? "no file in KUBECONFIG exists"
				     : env->home && env->home[0] ? "~/.kube/config does not exist"
								 : "HOME is not set",
				     NOT_IN_CLUSTER);
		}
	} else {
		cfg->source = source_of(&m);
		rc = from_kubeconfig(cfg, &m, opts, err);
	}
	if (rc == 0)
		*out = cfg;
	else
		kube_config_free(cfg);
out:
	for (size_t i = 0; i < n; i++)
		free(files[i]);
	free(files);
	merged_release(&m);
	return rc;
}

int kube_config_load(struct kube_config **out, const struct kube_config_opts *opts,
		     struct gs_error *err)
{
	struct kube_config_env env = {
		.kubeconfig = getenv("KUBECONFIG"),
		.home = getenv("HOME"),
		.service_host = getenv("KUBERNETES_SERVICE_HOST"),
		.service_port = getenv("KUBERNETES_SERVICE_PORT"),
		.pod_namespace = getenv("POD_NAMESPACE"),
		.sa_dir = getenv("GPUSHARE_SERVICEACCOUNT_DIR"),
	};

	return kube_config_load_env(out, opts, &env, err);
}
