#ifndef GS_DESIGN_H
#define GS_DESIGN_H

#include "base/error.h"
#include "engine/replay_design.h"
#include "model/catalog.h"

/*
 * The reader of a replay design file (docs/guide/replay.md "Sharing
 * designs"): one YAML document,
 *
 *	name: mig-balanced            # optional; default: the file's name without .yaml
 *	pools:
 *	  G2: {mig: {gpu: "NVIDIA A100-SXM4-80GB", layout: all-balanced}}
 *	  T4: {draShares: {shares: 100}}
 *	  "*": {timeSlicing: {replicas: 4}}
 *
 * each pool a trace GPU code or "*" (the rest), with exactly one of
 * timeSlicing {replicas}, mig {gpu, layout}, draShares {shares} or whole
 * {}. Everything is checked here, against the catalog for MIG (a
 * MIG-capable GPU, a layout that makes MIG devices on it); bad input
 * fails at file:line:col with what is wrong and, for names, the nearest
 * right ones.
 */

#define DESIGN_MAX_BYTES (64u << 10)

int design_load(const struct catalog *cat, const char *path, struct replay_design *out,
		struct gs_error *err) GS_WUR;
int design_parse(const struct catalog *cat, const char *name, const char *text, size_t len,
		 struct replay_design *out, struct gs_error *err) GS_WUR;

#endif
