#ifndef GS_SVG_H
#define GS_SVG_H

#include <stddef.h>

#include "base/strbuf.h"

/*
 * The pieces gpushare's self-contained pages and pictures share
 * (`gpushare report`'s fleet, `gpushare replay`'s charts): text placed in
 * SVG and kept inside its box, the colours series take, the fonts, and the
 * head of an HTML page that fetches nothing. Every string a caller passes
 * as text goes through escape_html (base/escape.h); class names and style
 * sheets are the caller's own constants.
 */

/* The font stack of every picture and page (CSS font-family value). */
#define SVG_FONT_FAMILY "'DejaVu Sans', 'Liberation Sans', Arial, sans-serif"

/* Colours: Tableau 10, the i-th of a series or a namespace is svg_colour(i % SVG_N_COLOURS). */
#define SVG_N_COLOURS 10
/* Fill colour i (taken modulo SVG_N_COLOURS), "#4e79a7" ... */
const char *svg_colour(size_t i);
/* The text colour that reads on svg_colour(i): "#fff" or "#111". */
const char *svg_ink(size_t i);

/* Characters (not bytes) of a UTF-8 text, for width estimates. */
size_t svg_chars(const char *s);
/* The estimated width of `s` at font size `size`: 0.6 em per character. */
double svg_text_width(const char *s, int size);

/*
 * <text x y font-size [class]>s</text> and a line break, `s` escaped;
 * squeezed into maxw (textLength, lengthAdjust spacingAndGlyphs) when
 * maxw > 0 and the estimate says it is wider. cls NULL: no class.
 */
void svg_text(struct strbuf *sb, int x, int y, int size, int maxw, const char *cls, const char *s);

/*
 * The start of a self-contained HTML page up to its <body>: UTF-8, a
 * Content-Security-Policy that lets nothing load or run (inline styles
 * and data: images only), the viewport, `title` (escaped) and the style
 * sheet `style` (the caller's constant, not escaped).
 */
void svg_page_head(struct strbuf *sb, const char *title, const char *style);

#endif
