#include <stdarg.h>
#include <stdio.h>

#include "base/escape.h"
#include "cmd/cmd.h"
#include "base/strbuf.h"
#include "base/banned.h"

static void vprint(FILE *f, const char *fmt, va_list ap)
{
	struct strbuf sb = STRBUF_INIT;

	escape_vaddf(&sb, fmt, ap);
	fwrite(sb.buf, 1, sb.len, f);
	strbuf_release(&sb);
}

void cmd_printf(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vprint(stdout, fmt, ap);
	va_end(ap);
}

void cmd_eprintf(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vprint(stderr, fmt, ap);
	va_end(ap);
}
