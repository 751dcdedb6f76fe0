/*
 * labkit: the lab's files under out/ are written whole, the folders they sit
 * in made on the way (out/ for the lab, out/dra/ for its DRA form), and each
 * write is said once.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/strbuf.h"
#include "daemon/labkit.h"

static void record(void *arg, const char *line)
{
	strbuf_addf(arg, "%s\n", line);
}

static char *slurp(const char *path)
{
	FILE *f = fopen(path, "r");
	char buf[256];
	size_t n;

	assert_non_null(f);
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	return gs_xstrdup(buf);
}

/* <dir>/<rel> holds want (NULL: is an empty folder); then it is removed. */
static void assert_file_then_remove(const struct labkit *kit, const char *rel, const char *want)
{
	char *path = labkit_path(kit, rel);

	if (want) {
		char *text = slurp(path);

		assert_string_equal(text, want);
		free(text);
		assert_int_equal(unlink(path), 0);
	} else {
		assert_int_equal(rmdir(path), 0);
	}
	free(path);
}

static void write_out_makes_the_folders_of_the_file(void **state)
{
	char dir[] = "/tmp/gs-labkit-XXXXXX";
	struct strbuf said = STRBUF_INIT;
	struct lab_opts o = {.progress = record, .progress_arg = &said};
	struct labkit kit;
	struct gs_error err;

	(void)state;
	assert_non_null(mkdtemp(dir));
	o.dir = dir;
	labkit_init(&kit, NULL, &o);
	assert_int_equal(kit.wait_ms, 120000);
	assert_int_equal(labkit_write_out(&kit, "out/dra/prepare.txt", "one\n", &err), 0);
	assert_int_equal(labkit_write_out(&kit, "out/placement.txt", "two\n", &err), 0);
	assert_string_equal(said.buf, "  wrote out/dra/prepare.txt\n  wrote out/placement.txt\n");

	assert_file_then_remove(&kit, "out/dra/prepare.txt", "one\n");
	assert_file_then_remove(&kit, "out/placement.txt", "two\n");
	assert_file_then_remove(&kit, "out/dra", NULL);
	assert_file_then_remove(&kit, "out", NULL);
	assert_int_equal(rmdir(dir), 0);
	strbuf_release(&said);
}

/* A folder that cannot be made is named in the error; nothing is said. */
static void write_out_names_the_folder_it_cannot_make(void **state)
{
	struct strbuf said = STRBUF_INIT;
	struct lab_opts o = {
		.dir = "/nonexistent-gs-labkit", .progress = record, .progress_arg = &said};
	struct labkit kit;
	struct gs_error err;

	(void)state;
	labkit_init(&kit, NULL, &o);
	assert_int_equal(labkit_write_out(&kit, "out/dra/x.txt", "x", &err), -1);
	assert_non_null(strstr(err.msg, "cannot create '/nonexistent-gs-labkit/out'"));
	assert_int_equal(said.len, 0);
	strbuf_release(&said);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(write_out_makes_the_folders_of_the_file),
		cmocka_unit_test(write_out_names_the_folder_it_cannot_make),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
