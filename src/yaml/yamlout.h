#ifndef GS_YAMLOUT_H
#define GS_YAMLOUT_H

#include <jansson.h>

#include "base/error.h"
#include "base/strbuf.h"

/*
 * A JSON tree written as one YAML document (libyaml's emitter, block
 * style, keys in the object's order), appended to `out` without the
 * document markers. A string that a Kubernetes YAML reader (ydoc's
 * resolver: YAML 1.1 as sigs.k8s.io/yaml) would read as anything but the
 * same string is quoted ("2", "true", "on", "", "1e3"), so the document
 * reads back as the tree. Fails only when libyaml does (err gets its text).
 */
int yamlout_document(const json_t *doc, struct strbuf *out, struct gs_error *err) GS_WUR;

#endif
