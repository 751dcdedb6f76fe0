#include "base/svg.h"

#include "base/escape.h"
#include "base/banned.h"

/* Tableau 10 (Tableau's default palette since 10.0), with the ink that reads on each. */
static const char *const palette[SVG_N_COLOURS] = {"#4e79a7", "#f28e2b", "#e15759", "#76b7b2",
						   "#59a14f", "#edc948", "#b07aa1", "#ff9da7",
						   "#9c755f", "#bab0ac"};
static const char *const ink[SVG_N_COLOURS] = {"#fff", "#111", "#fff", "#111", "#fff",
					       "#111", "#fff", "#111", "#fff", "#111"};

const char *svg_colour(size_t i)
{
	return palette[i % SVG_N_COLOURS];
}

const char *svg_ink(size_t i)
{
	return ink[i % SVG_N_COLOURS];
}

size_t svg_chars(const char *s)
{
	size_t n = 0;

	for (const unsigned char *p = (const unsigned char *)(s ? s : ""); *p; p++)
		n += (*p & 0xC0) != 0x80;
	return n;
}

double svg_text_width(const char *s, int size)
{
	return 0.6 * size * (double)svg_chars(s);
}

void svg_text(struct strbuf *sb, int x, int y, int size, int maxw, const char *cls, const char *s)
{
	strbuf_addf(sb, "<text x=\"%d\" y=\"%d\" font-size=\"%d\"", x, y, size);
	if (cls)
		strbuf_addf(sb, " class=\"%s\"", cls);
	if (maxw > 0 && svg_text_width(s, size) > maxw)
		strbuf_addf(sb, " textLength=\"%d\" lengthAdjust=\"spacingAndGlyphs\"", maxw);
	strbuf_addch(sb, '>');
	escape_html(sb, s);
	strbuf_addstr(sb, "</text>\n");
}

void svg_page_head(struct strbuf *sb, const char *title, const char *style)
{
	strbuf_addstr(sb, "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
			  /* Nothing may load: styles are inline, there is no script. */
			  "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src "
			  "'none'; style-src 'unsafe-inline'; img-src data:\">\n"
			  "<meta name=\"viewport\" content=\"width=device-width, "
			  "initial-scale=1\">\n<title>");
	escape_html(sb, title);
	strbuf_addstr(sb, "</title>\n<style>\n");
	strbuf_addstr(sb, style);
	strbuf_addstr(sb, "</style>\n</head>\n");
}
