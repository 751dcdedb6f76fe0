/*
 * The manifest reader: files, directories and standard input, as kubectl's
 * -f and -R read them (k8s.io/cli-runtime pkg/resource: Builder.Path and
 * ExpandPathsToFileVisitors walk a directory with filepath.Walk, in name
 * order, skip subdirectories unless recursive and, inside a directory,
 * files whose extension is not .json, .yaml or .yml; a file named
 * explicitly is read whatever its name; "-" is standard input, which one
 * command can read once).
 */
#include "fleet/fleet.h"

#include <dirent.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "base/readfile.h"
#include "base/strbuf.h"
#include "base/banned.h"

#define STDIN_NAME "<stdin>"

/* kubectl's FileExtensions: only these are read inside a directory. */
static bool manifest_name(const char *name)
{
	const char *dot = strrchr(name, '.');

	return dot && (!strcmp(dot, ".json") || !strcmp(dot, ".yaml") || !strcmp(dot, ".yml"));
}

static int read_file(struct fleet *f, const char *path, struct gs_error *err)
{
	struct ydoc_stream *s = NULL;
	struct ydoc_pos none = {0, 0};
	char *buf;
	size_t len;

	if (f->n_files >= FLEET_MAX_FILES) {
		gs_error_set(err, "more than %d files to read", FLEET_MAX_FILES);
		return -1;
	}
	if (!strcmp(path, "-")) {
		if (f->stdin_used) {
			gs_error_set(err, "standard input cannot be read twice ('-' given twice)");
			return -1;
		}
		f->stdin_used = true;
	}
	if (gs_read_file(path, ydoc_default_limits.max_bytes, &buf, &len, err) < 0)
		return -1;
	if (f->stream_pods) {
		int k = fleet_read_streamed(f, strcmp(path, "-") ? path : STDIN_NAME, buf, len,
					    err);
		if (k <= 0)
			free(buf);
		if (k < 0)
			return -1;
		f->n_files++;
		return 0;
	}
	int r = ydoc_load_buffer(strcmp(path, "-") ? path : STDIN_NAME, buf, len, none,
				 &ydoc_default_limits, &s, err);
	free(buf);
	if (r < 0)
		return -1;
	f->n_files++;
	return fleet_add_stream(f, s, err);
}

static int cmp_names(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The entries of dir, sorted by name bytewise (as Go's filepath.Walk), without . and ... */
static int list_dir(const char *dir, char ***out, size_t *n_out, struct gs_error *err)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	char **names = NULL;
	size_t n = 0, cap = 0;

	*out = NULL;
	*n_out = 0;
	if (!d) {
		gs_error_set(err, "cannot read directory '%s': %s", dir, strerror(errno));
		return -1;
	}
	errno = 0;
	while ((de = readdir(d))) {
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		if (n == cap) {
			cap = cap ? cap * 2 : 16;
			names = gs_xrealloc(names, cap * sizeof(*names));
		}
		names[n++] = gs_xstrdup(de->d_name);
		errno = 0;
	}
	if (errno) {
		gs_error_set(err, "cannot read directory '%s': %s", dir, strerror(errno));
		for (size_t i = 0; i < n; i++)
			free(names[i]);
		free(names);
		closedir(d);
		return -1;
	}
	closedir(d);
	if (n)
		qsort(names, n, sizeof(*names), cmp_names);
	*out = names;
	*n_out = n;
	return 0;
}

/*
 * filepath.Walk below the root: entries are not followed when they are
 * symbolic links (Lstat), so a link is a file here, read when its name is a
 * manifest's. *subdirs counts the subdirectories skipped.
 */
static int walk(struct fleet *f, const char *dir, bool recursive, unsigned depth, size_t *subdirs,
		struct gs_error *err)
{
	char **names;
	size_t n;
	int rc = 0;

	if (depth > FLEET_MAX_DEPTH) {
		gs_error_set(err, "'%s': directories nested more than %d deep", dir,
			     FLEET_MAX_DEPTH);
		return -1;
	}
	if (list_dir(dir, &names, &n, err) < 0)
		return -1;
	for (size_t i = 0; i < n && rc == 0; i++) {
		size_t l = strlen(dir);
		char *path =
			gs_xasprintf("%s%s%s", dir, l && dir[l - 1] == '/' ? "" : "/", names[i]);
		struct stat st;
		if (lstat(path, &st) < 0) {
			gs_error_set(err, "cannot read '%s': %s", path, strerror(errno));
			rc = -1;
		} else if (S_ISDIR(st.st_mode)) {
			if (recursive)
				rc = walk(f, path, recursive, depth + 1, subdirs, err);
			else
				(*subdirs)++;
		} else if (manifest_name(names[i])) {
			rc = read_file(f, path, err);
		}
		free(path);
	}
	for (size_t i = 0; i < n; i++)
		free(names[i]);
	free(names);
	return rc;
}

/* What a path gave nothing for: said when the whole read found no object. */
static void note_empty(struct strbuf *why, const char *path, size_t subdirs)
{
	strbuf_addstr(why, why->len ? ", nor has '"
				    : "a directory is read for its .json, .yaml and "
				      ".yml files, and '");
	strbuf_addf(why, "%s' has none", path);
	if (subdirs)
		strbuf_addf(why, " (its %zu subdirector%s read only with -R)", subdirs,
			    subdirs == 1 ? "y is" : "ies are");
}

static int read_path(struct fleet *f, const char *path, bool recursive, struct strbuf *why,
		     struct gs_error *err)
{
	struct stat st;
	size_t before = f->n_files, subdirs = 0;

	if (!strcmp(path, "-"))
		return read_file(f, path, err);
	if (stat(path, &st) < 0) {
		if (errno == ENOENT)
			gs_error_set(err, "the path '%s' does not exist", path);
		else
			gs_error_set(err, "the path '%s' cannot be accessed: %s", path,
				     strerror(errno));
		return -1;
	}
	if (!S_ISDIR(st.st_mode))
		return read_file(f, path, err);
	if (walk(f, path, recursive, 0, &subdirs, err) < 0)
		return -1;
	if (f->n_files == before && why)
		note_empty(why, path, subdirs);
	return 0;
}

int fleet_read_path(struct fleet *f, const char *path, bool recursive, struct gs_error *err)
{
	struct strbuf why = STRBUF_INIT;
	size_t before = json_array_size(f->objects) + f->n_ignored + f->n_streamed;
	int rc = read_path(f, path, recursive, &why, err);

	if (rc == 0 && json_array_size(f->objects) + f->n_ignored + f->n_streamed == before) {
		gs_error_set(err, "no objects in '%s'%s%s", path, why.len ? ": " : "",
			     why.len ? why.buf : "");
		rc = -1;
	}
	strbuf_release(&why);
	return rc;
}

int fleet_read(struct fleet *f, const struct fleet_sources *src, struct gs_error *err)
{
	struct strbuf why = STRBUF_INIT, paths = STRBUF_INIT;
	int rc = 0;

	for (size_t i = 0; i < src->n && rc == 0; i++)
		rc = read_path(f, src->paths[i], src->recursive, &why, err);
	if (rc == 0 && !json_array_size(f->objects) && !f->n_ignored && !f->n_streamed) {
		for (size_t i = 0; i < src->n; i++) {
			char *q = gs_xasprintf("'%s'", src->paths[i]);
			strbuf_addsep(&paths, ", ", q);
			free(q);
		}
		gs_error_set(err, "no objects in %s%s%s", src->n ? paths.buf : "no files",
			     why.len ? ": " : "", why.len ? why.buf : "");
		rc = -1;
	}
	strbuf_release(&why);
	strbuf_release(&paths);
	return rc;
}
