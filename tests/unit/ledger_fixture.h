/* Nodes and their ledgers for test_ledger and test_admission: real advertise + dpconfig. */
#ifndef LEDGER_FIXTURE_H
#define LEDGER_FIXTURE_H

#include <stdio.h>
#include <string.h>

#include "engine/advertise.h"
#include "model/dpconfig.h"
#include "engine/ledger.h"

/* The seed's configs (k8s/device-plugin-configs.yaml) and variations. */
#define CFG_SHARED                                                                              \
	"version: v1\nflags:\n  migStrategy: none\nsharing:\n  timeSlicing:\n"                 \
	"    failRequestsGreaterThanOne: true\n    resources:\n    - name: nvidia.com/gpu\n"    \
	"      replicas: 4\n"
#define CFG_TS_LOOSE                                                                            \
	"version: v1\nsharing:\n  timeSlicing:\n    resources:\n    - name: nvidia.com/gpu\n" \
	"      replicas: 4\n"
#define CFG_MPS                                                                                 \
	"version: v1\nsharing:\n  mps:\n    failRequestsGreaterThanOne: false\n"                \
	"    resources:\n    - name: nvidia.com/gpu\n      replicas: 4\n"
#define CFG_RENAMED                                                                             \
	"version: v1\nsharing:\n  timeSlicing:\n    renameByDefault: true\n"                    \
	"    resources:\n    - name: nvidia.com/gpu\n      replicas: 2\n"

static const struct catalog *fx_cat(void)
{
	const struct catalog *c;
	struct gs_error err;

	if (catalog_builtin(&c, &err))
		fail_msg("catalog: %s", err.msg);
	return c;
}

/* A Node named `name` with `product` x `count`, extra labels/annotations (JSON members). */
static json_t *fx_node(const char *name, const char *product, int count, const char *labels,
		       const char *annotations)
{
	char buf[4096];
	json_error_t je;
	json_t *n;

	snprintf(buf, sizeof(buf),
		 "{\"apiVersion\":\"v1\",\"kind\":\"Node\",\"metadata\":{\"name\":\"%s\","
		 "\"labels\":{%s},\"annotations\":{\"gpushare.io/gpu-product\":\"%s\","
		 "\"gpushare.io/gpu-count\":\"%d\"%s%s}},\"status\":{}}",
		 name, labels ? labels : "", product, count, annotations ? "," : "",
		 annotations ? annotations : "");
	n = json_loads(buf, 0, &je);
	if (!n)
		fail_msg("bad test node: %s", je.text);
	return n;
}

/* The ledger of `node` under config text `cfg` (NULL: none). */
static struct ledger *fx_ledger(const json_t *node, const char *cfg)
{
	struct dpconfig *c = NULL;
	struct nodehw *hw;
	struct advertisement *adv;
	struct gs_warnings w;
	struct gs_error err;
	struct ledger *l;

	gs_warnings_init(&w);
	if (cfg && dpconfig_parse("cfg", cfg, strlen(cfg), (struct ydoc_pos){0, 0}, &c, &w, &err))
		fail_msg("config: %s", err.msg);
	if (nodehw_from_node(fx_cat(), node, NULL, &hw, &w, &err))
		fail_msg("nodehw: %s", err.msg);
	if (advertise_compute(fx_cat(), hw, c, c ? "cfg" : "", &adv, &err))
		fail_msg("advertise: %s", err.msg);
	if (ledger_new(fx_cat(), hw, adv, c, &l, &err))
		fail_msg("ledger: %s", err.msg);
	advertisement_free(adv);
	nodehw_free(hw);
	dpconfig_free(c);
	gs_warnings_release(&w);
	return l;
}

/* A Pod bound to `node`: containers given as a JSON array text. */
static json_t *fx_pod(const char *ns, const char *name, const char *node, const char *init,
		      const char *containers)
{
	char buf[4096];
	json_error_t je;
	json_t *p;

	snprintf(buf, sizeof(buf),
		 "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"namespace\":\"%s\","
		 "\"name\":\"%s\",\"uid\":\"u-%s\"},\"spec\":{\"nodeName\":\"%s\","
		 "\"initContainers\":%s,\"containers\":%s},\"status\":{\"phase\":\"Pending\"}}",
		 ns, name, name, node, init ? init : "[]", containers);
	p = json_loads(buf, 0, &je);
	if (!p)
		fail_msg("bad test pod: %s: %s", je.text, buf);
	return p;
}

/* One container asking `n` of `res` (limits, as the API defaults them). */
static const char *fx_ask(char *buf, size_t size, const char *cname, const char *res, int n)
{
	snprintf(buf, size, "{\"name\":\"%s\",\"resources\":{\"limits\":{\"%s\":\"%d\"}}}", cname,
		 res, n);
	return buf;
}

#endif
