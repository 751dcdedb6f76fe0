/*
 * The deployment and version knobs of lint (gpu-operator controllers/object_controls.go and the
 * Helm chart deployments/helm/nvidia-device-plugin, k8s-device-plugin v0.20.0 CHANGELOG.md,
 * deployments/helm/nvidia-device-plugin/values.yaml; gpu-operator controllers/object_controls.go);
 * the rules themselves are pinned by tests/golden/lint-*.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <string.h>

#include "engine/dplint.h"

static void versions(void **state)
{
	int minor = 0;

	(void)state;
	assert_int_equal(dplint_parse_version("v0.20.0", &minor), 0);
	assert_int_equal(minor, 20);
	assert_int_equal(dplint_parse_version("0.17", &minor), 0);
	assert_int_equal(minor, 17);
	assert_int_equal(dplint_parse_version("v0.12.3", &minor), 0);
	assert_int_equal(minor, 12);
	assert_int_equal(dplint_parse_version("v0.11.0", &minor), -1); /* before config v1 */
	assert_int_equal(dplint_parse_version("v0.21.0", &minor), -1);
	assert_int_equal(dplint_parse_version("v1.0.0", &minor), -1);
	assert_int_equal(dplint_parse_version("v0.x", &minor), -1);
}

static void installers(void **state)
{
	enum dplint_installer i;
	struct dplint_options o;

	(void)state;
	assert_int_equal(dplint_parse_installer("helm", &i), 0);
	assert_int_equal(i, DPLINT_HELM);
	assert_int_equal(dplint_parse_installer("operator", &i), 0);
	assert_int_equal(i, DPLINT_OPERATOR);
	assert_int_equal(dplint_parse_installer("none", &i), 0);
	assert_int_equal(i, DPLINT_BARE);
	assert_int_equal(dplint_parse_installer("kustomize", &i), -1);
	dplint_options_init(&o);
	assert_int_equal(o.installer, DPLINT_HELM);
	assert_int_equal(o.plugin_minor, DPLINT_LATEST_MINOR);
}

/* Keys newer than the release are reported once per block (k8s-device-plugin v0.20.0 CHANGELOG.md).
 */
static void unknown_to_old_releases(void **state)
{
	static const char *yaml = "flags:\n  mpsRoot: /m\nsharing:\n  mps:\n    resources:\n"
				  "    - name: gpu\n      replicas: 2\nimex:\n  channelIDs: [0]\n";
	const struct ydoc_pos origin = {.line = 0, .col = 0};
	struct dpconfig *c;
	struct dplint_options o;
	struct dp_diags d;
	struct gs_error err;
	size_t unknown = 0;

	(void)state;
	assert_int_equal(dpconfig_parse("c.yaml", yaml, strlen(yaml), origin, &c, NULL, &err), 0);
	dplint_options_init(&o);
	o.plugin_minor = 14;
	dp_diags_init(&d);
	dplint_config(c, "c.yaml", &o, &d);
	for (size_t i = 0; i < d.n; i++)
		if (strstr(d.items[i].msg, "is unknown to plugin v0.14"))
			unknown++;
	/* flags.mpsRoot, sharing.mps, imex: not each key below them */
	assert_int_equal(unknown, 3);
	/* with mps ignored, v0.14 shares nothing here */
	bool said = false;
	for (size_t i = 0; i < d.n; i++)
		said |= !strcmp(d.items[i].msg, "with sharing.mps ignored, plugin v0.14 uses none");
	assert_true(said);
	dp_diags_release(&d);

	o.plugin_minor = 20;
	dp_diags_init(&d);
	dplint_config(c, "c.yaml", &o, &d);
	assert_int_equal(d.n, 0);
	dp_diags_release(&d);
	dpconfig_free(c);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(versions),
		cmocka_unit_test(installers),
		cmocka_unit_test(unknown_to_old_releases),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
