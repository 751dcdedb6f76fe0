#include "base/readfile.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/banned.h"

/*
 * The size from fstat is only a hint for the first allocation: the file is
 * read until read(2) says end of file, so one that shrinks or grows while
 * it is read gives what was read, never a fault (a mapping of a file that
 * shrinks raises SIGBUS on the lost pages).
 */
int gs_read_file(const char *path, size_t max_bytes, char **out, size_t *len, struct gs_error *err)
{
	int fd;
	struct stat st;
	size_t cap = 65536, n = 0;
	char *buf;

	*out = NULL;
	*len = 0;
	if (!strcmp(path, "-"))
		fd = STDIN_FILENO;
	else
		fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		gs_error_set(err, "cannot open '%s': %s", path, strerror(errno));
		return -1;
	}
	if (fstat(fd, &st) == 0) {
		if (S_ISDIR(st.st_mode)) {
			gs_error_set(err, "cannot read '%s': %s", path, strerror(EISDIR));
			goto fail_fd;
		}
		if (S_ISREG(st.st_mode) && st.st_size > 0) {
			if ((unsigned long long)st.st_size > max_bytes)
				goto too_big;
			/* One byte more than the size, so that end of file costs no growth. */
			cap = (size_t)st.st_size + 2;
		}
	}
	buf = gs_xmalloc(cap);
	for (;;) {
		ssize_t r;

		if (n + 1 >= cap) {
			if (n > max_bytes) {
				free(buf);
				goto too_big;
			}
			cap = cap > SIZE_MAX / 2 ? SIZE_MAX : cap * 2;
			buf = gs_xrealloc(buf, cap);
		}
		r = read(fd, buf + n, cap - 1 - n);
		if (r < 0) {
			if (errno == EINTR)
				continue;
			gs_error_set(err, "cannot read '%s': %s", path, strerror(errno));
			free(buf);
			goto fail_fd;
		}
		if (r == 0)
			break;
		n += (size_t)r;
		if (n > max_bytes) {
			free(buf);
			goto too_big;
		}
	}
	if (fd != STDIN_FILENO)
		close(fd);
	buf[n] = '\0';
	*out = buf;
	*len = n;
	return 0;

too_big:
	gs_error_set(err, "'%s' is larger than the limit of %zu bytes", path, max_bytes);
fail_fd:
	if (fd != STDIN_FILENO)
		close(fd);
	return -1;
}

int gs_file_open(const char *path, size_t max_bytes, struct gs_file *out, struct gs_error *err)
{
	char *buf;
	size_t len;

	out->data = NULL;
	out->len = 0;
	if (gs_read_file(path, max_bytes, &buf, &len, err))
		return -1;
	out->data = buf;
	out->len = len;
	return 0;
}

void gs_file_release(struct gs_file *f)
{
	if (!f || !f->data)
		return;
	free((void *)(uintptr_t)f->data);
	f->data = NULL;
	f->len = 0;
}
