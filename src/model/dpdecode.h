#ifndef GS_DPDECODE_H
#define GS_DPDECODE_H

#include <jansson.h>
#include <stddef.h>

#include "model/dpconfig.h"

/*
 * The device plugin's Go decoding of its config, replayed (dpdecode.c):
 * dpconfig_parse and dpconfig_parse_diags (declared in dpconfig.h) are its
 * entry points. What follows is shared by the dpconfig modules only
 * (dpconfig.c, dpdecode.c, dpconfig_set.c).
 */

/*
 * The text sigs.k8s.io/yaml gives a scalar aimed at a Go string: integers
 * in decimal, floats as strconv.FormatFloat(f, 'g', -1, 32), booleans
 * "true"/"false", null "". Returns 0, or -1 for an array or object. buf
 * should hold GONUM_BUFSZ bytes.
 */
int dpdecode_scalar_text(const json_t *v, char *buf, size_t size);

#endif
