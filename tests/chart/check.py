#!/usr/bin/env python3
"""Check what `helm template` rendered from deploy/chart/gpushare.

Usage: check.py SCENARIO RENDERED.yaml [KEY=VALUE...]
  default   the chart's default values, release "gpushare" in gpushare-system:
            the kinds deploy/controller.yaml and deploy/webhook.yaml install
            (their Namespace aside), the same RBAC rules, webhook rules,
            args, probes and names, a generated serving certificate the
            caBundle verifies
  options   ci/options-values.yaml, release "lab" in gpushare-lab: every
            option shows where it should (KEY=VALUE: crt=, key=, ca= files)
  secret    webhook.tls.source=secret: no Secret rendered, the caBundle given
  certmanager  webhook.tls.source=cert-manager: Issuer, Certificate, the
            inject-ca-from annotation, no caBundle
  controller-only  webhook.enabled=false

Prints one line per failed expectation and exits 1 if any.
"""
import base64
import collections
import os
import subprocess
import sys
import tempfile

import yaml

TOP = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
failures = []


def expect(cond, what):
    if not cond:
        failures.append(what)
    return cond


def load(path):
    with open(path) as f:
        return [d for d in yaml.safe_load_all(f) if d]


def kinds(docs):
    return collections.Counter(d["kind"] for d in docs)


def one(docs, kind, name=None):
    found = [d for d in docs if d["kind"] == kind and (name is None or d["metadata"]["name"] == name)]
    if not expect(len(found) == 1, f"want one {kind} {name or ''}, found {len(found)}"):
        return {}
    return found[0]


def app_version():
    with open(os.path.join(TOP, "deploy/chart/gpushare/Chart.yaml")) as f:
        chart = yaml.safe_load(f)
    with open(os.path.join(TOP, "src/base/version.h")) as f:
        src = f.read()
    want = src.split('GPUSHARE_VERSION "')[1].split('"')[0]
    expect(chart["appVersion"] == want, f"Chart.yaml appVersion {chart['appVersion']} is not gpushare's {want} (src/base/version.h)")
    return chart["appVersion"]


def container(dep):
    return dep.get("spec", {}).get("template", {}).get("spec", {}).get("containers", [{}])[0]


def pod_spec(dep):
    return dep.get("spec", {}).get("template", {}).get("spec", {})


def pem_check(crt_pem, ca_pem, dns):
    """openssl: the certificate verifies against the CA and names dns."""
    with tempfile.TemporaryDirectory() as d:
        crt, ca = os.path.join(d, "tls.crt"), os.path.join(d, "ca.crt")
        with open(crt, "w") as f:
            f.write(crt_pem)
        with open(ca, "w") as f:
            f.write(ca_pem)
        v = subprocess.run(["openssl", "verify", "-CAfile", ca, crt], capture_output=True, text=True)
        expect(v.returncode == 0, f"the serving certificate does not verify against the caBundle: {v.stdout}{v.stderr}".strip())
        s = subprocess.run(["openssl", "x509", "-noout", "-ext", "subjectAltName", "-in", crt], capture_output=True, text=True)
        expect(f"DNS:{dns}" in s.stdout, f"the serving certificate's SAN lacks DNS:{dns}: {s.stdout.strip()}")


def b64d(s):
    return base64.b64decode(s).decode()


def check_rbac_as_deploy(docs, prefix, comps=("controller", "webhook")):
    """Rules of each ClusterRole/Role equal those of deploy/*.yaml."""
    for comp in comps:
        ref = load(os.path.join(TOP, f"deploy/{comp}.yaml"))
        for kind in ("ClusterRole", "Role"):
            want = one(ref, kind, f"gpushare-{comp}").get("rules")
            got = one(docs, kind, f"{prefix}-{comp}").get("rules")
            expect(got == want, f"{kind} {prefix}-{comp}: rules differ from deploy/{comp}.yaml:\n  got  {got}\n  want {want}")


def check_wiring(docs, ns):
    """Names that must agree across objects."""
    for dep in [d for d in docs if d["kind"] == "Deployment"]:
        name = dep["metadata"]["name"]
        spec = pod_spec(dep)
        sa = spec.get("serviceAccountName")
        expect(any(d["kind"] == "ServiceAccount" and d["metadata"]["name"] == sa for d in docs), f"Deployment {name}: ServiceAccount {sa} is not rendered")
        for b in [d for d in docs if d["kind"] in ("ClusterRoleBinding", "RoleBinding") and d["metadata"]["name"] == name]:
            expect(b["subjects"] == [{"kind": "ServiceAccount", "name": sa, "namespace": ns}], f"{b['kind']} {name}: subjects {b['subjects']}")
            expect(b["roleRef"]["name"] == name, f"{b['kind']} {name}: roleRef {b['roleRef']}")
        labels = dep["spec"]["template"]["metadata"]["labels"]
        sel = dep["spec"]["selector"]["matchLabels"]
        expect(all(labels.get(k) == v for k, v in sel.items()), f"Deployment {name}: selector {sel} does not match its pods' labels")
        expect(dep["metadata"].get("namespace") == ns, f"Deployment {name}: namespace {dep['metadata'].get('namespace')}, want {ns}")
    vwc = [d for d in docs if d["kind"] == "ValidatingWebhookConfiguration"]
    if vwc:
        svc_ref = vwc[0]["webhooks"][0]["clientConfig"]["service"]
        svc = one(docs, "Service", svc_ref["name"])
        expect(svc.get("metadata", {}).get("namespace") == svc_ref["namespace"], f"the webhook's Service is in {svc.get('metadata', {}).get('namespace')}, the configuration calls {svc_ref['namespace']}")
        wh = one(docs, "Deployment", svc_ref["name"])
        labels = wh.get("spec", {}).get("template", {}).get("metadata", {}).get("labels", {})
        expect(all(labels.get(k) == v for k, v in svc.get("spec", {}).get("selector", {}).items()), f"Service {svc_ref['name']}: selector matches no webhook pod")
        port_names = [p["name"] for p in container(wh).get("ports", [])]
        expect(svc.get("spec", {}).get("ports", [{}])[0].get("targetPort") in port_names, "the Service's targetPort names no container port")


def fake_node_rule(key, values):
    return {"key": key, "operator": "NotIn", "values": values}


def scenario_default(docs):
    version = app_version()
    ref_c = load(os.path.join(TOP, "deploy/controller.yaml"))
    ref_w = load(os.path.join(TOP, "deploy/webhook.yaml"))
    want = kinds(ref_c) + kinds(ref_w)
    del want["Namespace"]  # helm install --create-namespace makes it
    want["Secret"] += 1  # the generated serving certificate
    expect(kinds(docs) == want, f"kinds {dict(kinds(docs))}, want {dict(want)}")
    for d in docs:
        if d["kind"] not in ("ClusterRole", "ClusterRoleBinding", "ValidatingWebhookConfiguration"):
            expect(d["metadata"].get("namespace") in ("gpushare-system", "gpu-share"), f"{d['kind']} {d['metadata']['name']}: namespace {d['metadata'].get('namespace')}")
    names = sorted((d["kind"], d["metadata"]["name"]) for d in docs if d["kind"] != "Secret")
    ref_names = sorted((d["kind"], d["metadata"]["name"]) for d in ref_c + ref_w if d["kind"] != "Namespace")
    expect(names == ref_names, f"names {names}\n  differ from deploy/'s {ref_names}")
    check_rbac_as_deploy(docs, "gpushare")
    check_wiring(docs, "gpushare-system")
    for comp, ref in (("controller", ref_c), ("webhook", ref_w)):
        got, want_dep = one(docs, "Deployment", f"gpushare-{comp}"), one(ref, "Deployment", f"gpushare-{comp}")
        gc, wc = container(got), container(want_dep)
        expect(gc.get("image") == f"localhost/gpushare:{version}", f"{comp} image {gc.get('image')}")
        expect(set(wc["args"]) <= set(gc.get("args", [])), f"{comp} args {gc.get('args')} lack some of deploy/'s {wc['args']}")
        expect("--configmap=gpu-share/device-plugin-configs" in gc.get("args", []), f"{comp} args {gc.get('args')} lack --configmap")
        for k in ("ports", "livenessProbe", "readinessProbe", "resources", "volumeMounts"):
            expect(gc.get(k) == wc.get(k), f"{comp} container {k}: {gc.get(k)}, deploy/ has {wc.get(k)}")
        if comp == "controller":
            expect(gc.get("securityContext") == wc.get("securityContext"), f"controller securityContext {gc.get('securityContext')}")
        gs, ws = pod_spec(got), pod_spec(want_dep)
        expect(got["spec"].get("replicas") == want_dep["spec"].get("replicas"), f"{comp} replicas {got['spec'].get('replicas')}")
        expect(got["spec"].get("strategy") == want_dep["spec"].get("strategy"), f"{comp} strategy {got['spec'].get('strategy')}")
        expect(gs.get("securityContext") == ref_c[-1]["spec"]["template"]["spec"]["securityContext"], f"{comp} pod securityContext {gs.get('securityContext')}")
        expect(gs.get("affinity") == {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [{"matchExpressions": [fake_node_rule("type", ["kwok"])]}]}}}, f"{comp} affinity {gs.get('affinity')} does not keep it off type=kwok nodes")
        if comp == "webhook":
            expect(gs.get("volumes") == ws.get("volumes"), f"webhook volumes {gs.get('volumes')}")
    vwc, ref_vwc = one(docs, "ValidatingWebhookConfiguration", "gpushare"), one(ref_w, "ValidatingWebhookConfiguration", "gpushare")
    if vwc:
        got_w, want_w = dict(vwc["webhooks"][0]), dict(ref_vwc["webhooks"][0])
        ca = got_w["clientConfig"].pop("caBundle", "")
        want_w["clientConfig"].pop("caBundle", None)
        expect(got_w == want_w, f"webhook pods.gpushare.io differs from deploy/webhook.yaml's:\n  got  {got_w}\n  want {want_w}")
        secret = one(docs, "Secret", "gpushare-webhook-tls")
        if secret:
            expect(secret["type"] == "kubernetes.io/tls", f"Secret type {secret['type']}")
            expect(secret["data"]["ca.crt"] == ca, "the Secret's ca.crt is not the caBundle")
            pem_check(b64d(secret["data"]["tls.crt"]), b64d(ca), "gpushare-webhook.gpushare-system.svc")
            expect(b64d(secret["data"]["tls.key"]).startswith("-----BEGIN RSA PRIVATE KEY-----"), "tls.key is not a PEM key")


def scenario_options(docs, files):
    ns = "gpushare-lab"
    want = collections.Counter({"ServiceAccount": 2, "ClusterRole": 2, "ClusterRoleBinding": 2, "Role": 2, "RoleBinding": 2, "Deployment": 2, "Service": 1, "Secret": 1, "ValidatingWebhookConfiguration": 1, "ConfigMap": 1})
    expect(kinds(docs) == want, f"kinds {dict(kinds(docs))}, want {dict(want)}")
    check_wiring(docs, ns)
    cm = one(docs, "ConfigMap", "dp")
    expect(cm.get("metadata", {}).get("namespace") == "gpu-configs", f"ConfigMap namespace {cm.get('metadata', {}).get('namespace')}")
    expect(sorted(cm.get("data", {})) == ["default", "mps"], f"ConfigMap keys {sorted(cm.get('data', {}))}")
    expect("replicas: 4" in cm.get("data", {}).get("mps", ""), "ConfigMap mps lacks its text")
    for comp in ("controller", "webhook"):
        role = one(docs, "Role", f"lab-gpushare-{comp}")
        expect(role.get("metadata", {}).get("namespace") == "gpu-configs", f"Role {comp} namespace {role.get('metadata', {}).get('namespace')}")
        expect(role.get("rules", [{}])[0].get("resourceNames") == ["dp"], f"Role {comp} resourceNames {role.get('rules')}")
        dep = one(docs, "Deployment", f"lab-gpushare-{comp}")
        c, spec = container(dep), pod_spec(dep)
        expect(c.get("image") == "registry.example.com/tools/gpushare:0.1.0-test", f"{comp} image {c.get('image')}")
        expect(c.get("imagePullPolicy") == "Always", f"{comp} pull policy {c.get('imagePullPolicy')}")
        expect("--configmap=gpu-configs/dp" in c.get("args", []), f"{comp} args {c.get('args')}")
        expect(spec.get("imagePullSecrets") == [{"name": "regcred"}], f"{comp} imagePullSecrets {spec.get('imagePullSecrets')}")
        expect(spec.get("nodeSelector") == {"kubernetes.io/os": "linux"}, f"{comp} nodeSelector {spec.get('nodeSelector')}")
        expect(spec.get("tolerations", [{}])[0].get("key") == "dedicated", f"{comp} tolerations {spec.get('tolerations')}")
        expect(spec.get("priorityClassName") == "system-cluster-critical", f"{comp} priorityClassName {spec.get('priorityClassName')}")
        expect(dep["spec"]["template"]["metadata"].get("annotations") == {"prometheus.io/scrape": "true"}, f"{comp} pod annotations")
        rule = fake_node_rule("node.example.com/fake", ["true", "yes"])
        terms = spec.get("affinity", {}).get("nodeAffinity", {}).get("requiredDuringSchedulingIgnoredDuringExecution", {}).get("nodeSelectorTerms", [])
        want_terms = [{"matchExpressions": [{"key": "pool", "operator": "In", "values": [p]}, rule]} for p in ("infra", "system")]
        expect(terms == want_terms, f"{comp} node affinity terms {terms}, want each term with the fake-node rule: {want_terms}")
    c = container(one(docs, "Deployment", "lab-gpushare-controller"))
    for a in ("--selector=type=kwok,gpushare.io/controller!=off", "--default-config=default", "--fallback-strategies=named,single", "--max-in-flight=8", "--listen=0.0.0.0:9090", "-v", "4"):
        expect(a in c.get("args", []), f"controller args {c.get('args')} lack {a}")
    expect(c.get("ports") == [{"name": "metrics", "containerPort": 9090}], f"controller ports {c.get('ports')}")
    groups = {g for r in one(docs, "ClusterRole", "lab-gpushare-controller").get("rules", []) for g in r["apiGroups"]}
    # The core group, and the node Leases a kubelet restart window holds (docs/guide/faults.md).
    expect(groups == {"", "coordination.k8s.io"}, f"controller.dra=false keeps API groups {groups}")
    w = one(docs, "Deployment", "lab-gpushare-webhook")
    expect(w.get("spec", {}).get("replicas") == 3, "webhook replicas")
    c = container(w)
    for a in ("--port=9443", "--health-listen=0.0.0.0:9081"):
        expect(a in c.get("args", []), f"webhook args {c.get('args')} lack {a}")
    expect(pod_spec(w).get("volumes") == [{"name": "tls", "secret": {"secretName": "lab-webhook-serving"}}], f"webhook volumes {pod_spec(w).get('volumes')}")
    secret = one(docs, "Secret", "lab-webhook-serving")
    pem = {k: open(v).read() for k, v in files.items()}
    if secret:
        expect(b64d(secret["data"]["tls.crt"]) == pem["crt"], "Secret tls.crt is not webhook.tls.crt")
        expect(b64d(secret["data"]["tls.key"]) == pem["key"], "Secret tls.key is not webhook.tls.key")
    wh = one(docs, "ValidatingWebhookConfiguration", "lab-gpushare").get("webhooks", [{}])[0]
    expect(b64d(wh.get("clientConfig", {}).get("caBundle", "")) == pem["ca"], "caBundle is not webhook.tls.ca")
    expect(wh.get("clientConfig", {}).get("service") == {"namespace": ns, "name": "lab-gpushare-webhook", "path": "/validate", "port": 443}, f"clientConfig.service {wh.get('clientConfig', {}).get('service')}")
    expect(wh.get("failurePolicy") == "Fail" and wh.get("timeoutSeconds") == 3, f"failurePolicy {wh.get('failurePolicy')} timeoutSeconds {wh.get('timeoutSeconds')}")
    sel = wh.get("namespaceSelector", {}).get("matchExpressions", [{}])[0].get("values")
    expect(sel == ["kube-system", "monitoring", ns], f"namespaceSelector values {sel}, want the excluded ones and the release's namespace")


def scenario_secret(docs):
    expect("Secret" not in kinds(docs), "source=secret renders a Secret")
    wh = one(docs, "ValidatingWebhookConfiguration", "gpushare").get("webhooks", [{}])[0]
    expect(wh.get("clientConfig", {}).get("caBundle") == "Q0FCVU5ETEU=", f"caBundle {wh.get('clientConfig', {}).get('caBundle')}")
    dep = one(docs, "Deployment", "gpushare-webhook")
    expect(pod_spec(dep).get("volumes", [{}])[0].get("secret", {}).get("secretName") == "my-serving-cert", f"webhook volumes {pod_spec(dep).get('volumes')}")


def scenario_certmanager(docs):
    k = kinds(docs)
    expect(k["Secret"] == 0 and k["Issuer"] == 1 and k["Certificate"] == 1, f"kinds {dict(k)}")
    cert = one(docs, "Certificate", "gpushare-webhook")
    expect(cert.get("spec", {}).get("secretName") == "gpushare-webhook-tls", f"Certificate secretName {cert.get('spec', {}).get('secretName')}")
    expect("gpushare-webhook.gpushare-system.svc" in cert.get("spec", {}).get("dnsNames", []), f"Certificate dnsNames {cert.get('spec', {}).get('dnsNames')}")
    expect(cert.get("spec", {}).get("issuerRef", {}).get("name") == "gpushare-webhook-selfsigned", f"issuerRef {cert.get('spec', {}).get('issuerRef')}")
    vwc = one(docs, "ValidatingWebhookConfiguration", "gpushare")
    expect(vwc.get("metadata", {}).get("annotations") == {"cert-manager.io/inject-ca-from": "gpushare-system/gpushare-webhook"}, f"annotations {vwc.get('metadata', {}).get('annotations')}")
    expect("caBundle" not in vwc.get("webhooks", [{}])[0].get("clientConfig", {}), "a caBundle besides cert-manager's injection")


def scenario_controller_only(docs):
    want = collections.Counter({"ServiceAccount": 1, "ClusterRole": 1, "ClusterRoleBinding": 1, "Role": 1, "RoleBinding": 1, "Deployment": 1})
    expect(kinds(docs) == want, f"kinds {dict(kinds(docs))}, want {dict(want)}")
    check_rbac_as_deploy(docs, "gpushare", ("controller",))
    check_wiring(docs, "gpushare-system")


def main(argv):
    if len(argv) < 3:
        print(__doc__, file=sys.stderr)
        return 2
    scenario, path = argv[1], argv[2]
    files = dict(a.split("=", 1) for a in argv[3:])
    docs = load(path)
    {
        "default": lambda: scenario_default(docs),
        "options": lambda: scenario_options(docs, files),
        "secret": lambda: scenario_secret(docs),
        "certmanager": lambda: scenario_certmanager(docs),
        "controller-only": lambda: scenario_controller_only(docs),
    }[scenario]()
    for f in failures:
        print(f"chart {scenario}: {f}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
