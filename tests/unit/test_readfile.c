/*
 * readfile: a file is read into memory of its own, so nothing that happens
 * to the file afterwards (or while it is read) can fault the reader.
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

#include "base/readfile.h"

static char *temp_file(size_t size)
{
	char *path = gs_xstrdup("/tmp/gs-readfile-XXXXXX");
	int fd = mkstemp(path);
	char block[4096];

	assert_true(fd >= 0);
	for (size_t i = 0; i < sizeof(block); i++)
		block[i] = (char)('a' + i % 26);
	for (size_t done = 0; done < size;) {
		size_t n = size - done < sizeof(block) ? size - done : sizeof(block);

		assert_int_equal(write(fd, block, n), (ssize_t)n);
		done += n;
	}
	close(fd);
	return path;
}

/* A file cut short after it was opened: the bytes read stay readable (a mapping would SIGBUS). */
static void file_truncated_after_open_keeps_its_bytes(void **state)
{
	size_t size = 1u << 20;
	char *path = temp_file(size);
	struct gs_file f;
	struct gs_error err;
	unsigned long sum = 0;

	(void)state;
	assert_int_equal(gs_file_open(path, size, &f, &err), 0);
	assert_int_equal(f.len, size);
	assert_int_equal(truncate(path, 0), 0);
	for (size_t i = 0; i < f.len; i++)
		sum += (unsigned char)f.data[i];
	assert_true(sum > 0);
	assert_int_equal(f.data[f.len - 1], (char)('a' + (size - 1) % 4096 % 26));
	assert_int_equal(f.data[f.len], '\0');
	gs_file_release(&f);
	unlink(path);
	free(path);
}

/* The size stat gives is a hint only: /proc files say 0 and hold text. */
static void size_from_stat_is_not_trusted(void **state)
{
	char *buf;
	size_t len;
	struct gs_error err;
	struct stat st;

	(void)state;
	if (stat("/proc/self/status", &st) != 0)
		skip();
	assert_int_equal(st.st_size, 0);
	assert_int_equal(gs_read_file("/proc/self/status", 1 << 20, &buf, &len, &err), 0);
	assert_true(len > 0);
	assert_non_null(strstr(buf, "Name:"));
	free(buf);
}

/* max_bytes is inclusive: a file of exactly the limit is read, one byte more is not. */
static void limit_is_inclusive(void **state)
{
	char *path = temp_file(1000), *buf;
	size_t len;
	struct gs_error err;

	(void)state;
	assert_int_equal(gs_read_file(path, 1000, &buf, &len, &err), 0);
	assert_int_equal(len, 1000);
	free(buf);
	assert_int_equal(gs_read_file(path, 999, &buf, &len, &err), -1);
	assert_null(buf);
	assert_non_null(strstr(err.msg, "larger than the limit of 999 bytes"));
	unlink(path);
	free(path);
}

/* A pipe has no size at all: read to its end, past the first allocation. */
static void pipe_is_read_to_its_end(void **state)
{
	char *path = temp_file(300000), *buf;
	size_t len;
	struct gs_error err;
	int saved = dup(STDIN_FILENO), fd;

	(void)state;
	fd = open(path, O_RDONLY);
	assert_true(fd >= 0 && saved >= 0);
	assert_int_equal(dup2(fd, STDIN_FILENO), STDIN_FILENO);
	close(fd);
	assert_int_equal(gs_read_file("-", 1 << 20, &buf, &len, &err), 0);
	assert_int_equal(len, 300000);
	free(buf);
	dup2(saved, STDIN_FILENO);
	close(saved);
	unlink(path);
	free(path);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(file_truncated_after_open_keeps_its_bytes),
		cmocka_unit_test(size_from_stat_is_not_trusted),
		cmocka_unit_test(limit_is_inclusive),
		cmocka_unit_test(pipe_is_read_to_its_end),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
