#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <stdlib.h>

#include "kube/kubeconfig.h"

/* What a live command may print of the server URL: no credentials, no query. */
static void display_url(void **state)
{
	static const char *const cases[][2] = {
		{"https://127.0.0.1:6443", "https://127.0.0.1:6443"},
		{"https://api.example/prefix", "https://api.example/prefix"},
		{"https://user:secret@api.example:443/p", "https://api.example:443/p"},
		{"https://api.example/p?token=abc#frag", "https://api.example/p"},
		{"https://u@h?x=@y", "https://h"},
		{"http://h/a\nb", "http://h/a%0Ab"},
		{"https://user:pa/ss@h/p", "https://h/p"},
		{"host-only:8080", "host-only:8080"},
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char *s = kube_url_shown(cases[i][0]);
		assert_string_equal(s, cases[i][1]);
		free(s);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(display_url),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
