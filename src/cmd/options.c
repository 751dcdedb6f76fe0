#include <string.h>

#include "cmd.h"
#include "banned.h"

int cmd_option_value(int argc, char **argv, int *i, const char *const *names, size_t n,
		     const char **val, struct gs_error *err)
{
	const char *a = argv[*i];

	for (size_t k = 0; k < n; k++) {
		size_t len = strlen(names[k]);

		if (!strcmp(a, names[k])) {
			if (*i + 1 >= argc) {
				gs_error_set(err, "%s needs a value", names[k]);
				return -2;
			}
			*val = argv[++*i];
			return (int)k;
		}
		if (!strncmp(a, names[k], len) && a[len] == '=') {
			*val = a + len + 1;
			return (int)k;
		}
	}
	return -1;
}
