/*
 * libFuzzer target for `gpushare check`: the stream engine (fast scanner,
 * filtered load) and the tree engine (libyaml, full trees) must report the
 * same findings and the same errors for every input and every rule set.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "engine/check.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static char *render(const char *text, size_t size, unsigned rules, enum check_engine engine)
{
	struct check_report rep;
	struct gs_error err;
	char buf[2048];
	char *out = gs_xstrdup(""), *next;

	check_report_init(&rep);
	if (check_buffer("f.yaml", text, size, rules, engine, &rep, &err)) {
		if (rep.n || !err.msg[0])
			abort();
		next = gs_xasprintf("error %s\n", gs_error_str(&err, buf, sizeof(buf)));
		free(out);
		out = next;
	}
	for (size_t i = 0; i < rep.n; i++) {
		const struct check_finding *f = &rep.items[i];

		next = gs_xasprintf("%s%d %s %s %s\n", out, (int)f->kind, f->container,
				    f->count ? f->count : "-", f->text ? f->text : "-");
		free(out);
		out = next;
	}
	check_report_release(&rep);
	return out;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *text = (const char *)data;
	unsigned rules = size ? data[0] & 3 : 0;
	char *a, *b;

	if (size > (64u << 10))
		return 0;
	a = render(text, size, rules, CHECK_ENGINE_STREAM);
	b = render(text, size, rules, CHECK_ENGINE_TREE);
	if (strcmp(a, b))
		abort();
	free(a);
	free(b);
	return 0;
}
