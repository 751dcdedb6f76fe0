#ifndef GS_YDOCFAST_H
#define GS_YDOCFAST_H

#include <stddef.h>
#include <yaml.h>

/*
 * A scanner for the YAML that manifests are mostly made of, several times
 * faster than libyaml because it neither copies nor decodes: block mappings
 * and sequences (indentless ones too), single-line plain and quoted
 * scalars, single-line flow collections, comments, `---` separators, ASCII
 * only. For such input it emits exactly the events libyaml's parser would
 * (types, scalar values and styles, start marks of scalars and collection
 * starts; the marks of end events and of document events are not
 * reproduced). Anything else (tabs, CR, non-ASCII, tags, anchors, aliases,
 * block scalars, multi-line scalars, escapes in double quotes, directives,
 * `?` keys, odd indentation, and every syntax error) makes it give up and
 * return 1 before libyaml could have said anything different; the caller
 * then parses with libyaml. Scalar values point into buf or into scratch
 * memory valid only during the emit call.
 *
 * emit returns 0 to go on; anything else stops the scan and is returned.
 * Returns 0 when the whole stream was emitted.
 */
typedef int (*ydoc_fast_emit)(void *ctx, const yaml_event_t *ev);

int ydoc_fast_parse(const char *buf, size_t len, ydoc_fast_emit emit, void *ctx);

#endif
