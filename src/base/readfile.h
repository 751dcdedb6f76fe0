#ifndef GS_READFILE_H
#define GS_READFILE_H

#include <stddef.h>

#include "base/error.h"

/*
 * Read a whole file ("-" = standard input) into a new NUL-terminated buffer
 * (*len excludes the NUL). Fails, with the path in the message, when it
 * cannot be read or holds more than max_bytes. The file is read with
 * read(2) until end of file, never mapped: a file that changes size while
 * it is read gives the bytes read, and the buffer never depends on the file
 * afterwards (a mapping would fault, SIGBUS, once the file shrinks).
 */
int gs_read_file(const char *path, size_t max_bytes, char **out, size_t *len,
		 struct gs_error *err) GS_WUR;

/*
 * The same, as a (data, len) pair released with gs_file_release: a private
 * copy, whatever happens to the file later.
 */
struct gs_file {
	const char *data; /* NUL-terminated */
	size_t len;
};

int gs_file_open(const char *path, size_t max_bytes, struct gs_file *out,
		 struct gs_error *err) GS_WUR;
void gs_file_release(struct gs_file *f);

#endif
