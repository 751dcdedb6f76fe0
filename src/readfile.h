#ifndef GS_READFILE_H
#define GS_READFILE_H

#include <stddef.h>

#include "error.h"

/*
 * Read a whole file ("-" = standard input) into a new NUL-terminated buffer
 * (*len excludes the NUL). Fails, with the path in the message, when it
 * cannot be read or holds more than max_bytes.
 */
int gs_read_file(const char *path, size_t max_bytes, char **out, size_t *len,
		 struct gs_error *err) GS_WUR;

/*
 * The same, mapped rather than copied when it is a regular file (no NUL is
 * added then). Release with gs_file_release.
 */
struct gs_file {
	const char *data;
	size_t len;
	int mapped;
};

int gs_file_open(const char *path, size_t max_bytes, struct gs_file *out,
		 struct gs_error *err) GS_WUR;
void gs_file_release(struct gs_file *f);

#endif
