#!/usr/bin/env python3
"""Differential test: `gpushare plan` against the real kube-scheduler.

Environment (tests/e2e/run.sh sets the cluster part):
  GPUSHARE, TOP, GS_APISERVER, GS_CA, GS_ADMIN_TOKEN, KUBECONFIG
  DIFF_SEED    run seed (default 1)          DIFF_CASES  how many cases (200)
  DIFF_ONLY    comma-separated case indices to run (a reproducer)
  DIFF_BATCH   cases applied to the cluster at once (200)
  DIFF_NODES   N (100..5000): large cases of N nodes each, one case at a time,
               their nodes created one by one in file order, so that the
               scheduler samples (docs/design/difftest.md, "Large fleets")
  DIFF_OUT     where case files and results go (TOP/out/difftest)
  DIFF_ADMISSION  on|off|auto: whether the cluster plays kubelet admission
               (gpushare controller); auto looks for its pid file
  DIFF_NO_PLAN=1  only record what the cluster did (no comparison)
  DIFF_KEEP=1  leave the objects in the cluster (to look at them)

Exit 0 when every pod agrees (see docs/design/difftest.md for what agreement
means), 1 otherwise, 2 when the harness itself failed.
"""

import json
import os
import shutil
import subprocess
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import compare  # noqa: E402
import gen  # noqa: E402
from kube import ApiError, Kube  # noqa: E402

CASE_KEY, BATCH_KEY = gen.CASE_KEY, gen.BATCH_KEY
ADMITTED = "gpushare.io/admitted"
# Set with ADMITTED when the controller plays the device plugin's admission.
LEDGER = "gpushare.io/devices"
# Agreement, or not comparable for want of kubelet admission in the cluster.
OK_KINDS = ("same", "tie", "sample", "unplayed", "uncompared")
WORKERS = 4
# In plan's copy of a case only: each node labelled with its name, so that a
# pod can be sent to one node through every filter (a "sample" pod).
STEER_KEY = "gpushare.io/difftest-node"
# In plan's copy only: the two nodes a pod is confined to (pair_check).
PAIR_KEY = "gpushare.io/difftest-pair"
# The shared ConfigMap's `default` when the harness has to make it.
DEFAULT_CONFIG = "version: v1\nflags:\n  migStrategy: none"


def log(msg):
    sys.stdout.write(msg + "\n")
    sys.stdout.flush()


class Harness:
    def __init__(self):
        self.top = os.environ.get("TOP", os.getcwd())
        self.gpushare = os.environ["GPUSHARE"]
        self.seed = os.environ.get("DIFF_SEED", "1")
        self.ncases = int(os.environ.get("DIFF_CASES", "200"))
        only = os.environ.get("DIFF_ONLY", "").strip()
        self.indices = ([int(x) for x in only.split(",") if x.strip()] if only
                        else list(range(self.ncases)))
        self.batch_size = int(os.environ.get("DIFF_BATCH", "200"))
        large = os.environ.get("DIFF_NODES", "").strip()
        self.large = int(large) if large else None
        if self.large is not None:
            # One case in the cluster at a time: its nodes are (nearly) all
            # the scheduler has, in the order they were created.
            self.batch_size = 1
        self.out = os.environ.get("DIFF_OUT", os.path.join(self.top, "out", "difftest"))
        self.no_plan = os.environ.get("DIFF_NO_PLAN") == "1"
        adm = os.environ.get("DIFF_ADMISSION", "auto")
        if adm == "auto":
            state = os.environ.get("GS_CLUSTER_DIR", os.path.join(self.top, ".cluster"))
            pids = os.path.join(state, "pids")
            adm = "on" if os.path.isdir(pids) and any(
                "controller" in f and "manager" not in f for f in os.listdir(pids)) else "off"
        self.admission = adm == "on"
        self.k = Kube()
        self.local = threading.local()
        self.tainted_since, self.nudged = {}, set()
        # In every name only: a namespace of an earlier run may still be going.
        self.tag = "".join("abcdefghijklmnopqrstuvwxyz"[b % 26] for b in os.urandom(3))

    # --- the cluster side ---------------------------------------------------
    def node_reasons(self):
        """How each node of the cluster fails a pod of a case it is not in:
        name -> (case label or None, the scheduler's reason). Filters run in
        order and the first failing one speaks: NodeUnschedulable, then
        TaintToleration (another case's taint, or any NoSchedule/NoExecute
        taint of a node outside every case), then NodeAffinity (the case's
        nodeSelector)."""
        out = {}
        for n in self.k.list("/api/v1/nodes"):
            spec = n.get("spec") or {}
            case = (n["metadata"].get("labels") or {}).get(CASE_KEY)
            if spec.get("unschedulable"):
                reason = compare.UNSCHEDULABLE
            elif case is not None or any(t.get("effect") in ("NoSchedule", "NoExecute")
                                         for t in spec.get("taints") or []):
                reason = compare.TAINTS
            else:
                reason = compare.AFFINITY
            out[n["metadata"]["name"]] = (case, reason)
        return out

    def foreign_for(self, case, node_reasons):
        """The reasons other than the taint one of the nodes outside case
        `case` (the taint count comes out of the message's total)."""
        out = {}
        for name, (c, reason) in node_reasons.items():
            if c != str(case) and reason != compare.TAINTS:
                out[reason] = out.get(reason, 0) + 1
        return out

    def each(self, fn, items):
        """fn(kube, item) for every item, on WORKERS connections at once (the
        apiserver answers several requests at a time); results in order."""
        def run(item):
            k = getattr(self.local, "k", None)
            if k is None:
                k = self.local.k = Kube()
            return fn(k, item)
        with ThreadPoolExecutor(max_workers=WORKERS) as ex:
            return list(ex.map(run, items))

    def apply_batch(self, bno, cases):
        """Create the batch's objects; returns {case index: [real outcome per pod]}."""
        k, blabel = self.k, {BATCH_KEY: str(bno)}
        t0 = time.time()
        nodes = [n for c in cases for n in c["nodes"]]
        # Nodes first: kwok and the node-lifecycle controller make them Ready
        # while the namespaces are made. A large case's one by one, in file
        # order: the scheduler's cache (and so its filter pass) takes them in
        # the order they are created, which is the order plan reads.
        def post_node(kk, n):
            kk.must("POST", "/api/v1/nodes", {
                key: n[key] for key in ("apiVersion", "kind", "metadata", "spec")})
        if self.large is not None:
            for n in nodes:
                post_node(k, n)
        else:
            self.each(post_node, nodes)
        self.each(lambda kk, ns: kk.must("POST", "/api/v1/namespaces", {
            "apiVersion": "v1", "kind": "Namespace",
            "metadata": {"name": ns, "labels": dict(blabel)}}),
            [ns for c in cases for ns in c["namespaces"]])
        data = {}
        for c in cases:
            data.update(c["configmap"]["data"])
        data.pop("default", None)
        k.must("PATCH", self.cm_path, {"data": data}, "application/merge-patch+json")
        phases = [("create", time.time())]
        names = {n["metadata"]["name"] for n in nodes}
        self.wait("nodes Ready without not-ready taints", 90, lambda: self.nodes_ready(names),
                  lambda: self.not_ready)
        phases.append(("ready", time.time()))
        # kwok's node-initialize stage writes its own capacity (cpu 1k, ...)
        # into a node that has none when it first sees it: cpu, memory and
        # pods go in once it has, then sync adds the GPUs.
        self.each(lambda kk, n: kk.must("PATCH", "/api/v1/nodes/%s/status" % n["metadata"][
            "name"], {"status": n["status"]}, "application/merge-patch+json"), nodes)
        self.sync_nodes()
        phases.append(("sync", time.time()))
        # Meanwhile KCM made the namespaces' ServiceAccounts (pods need them).
        want_sa = {ns for c in cases for ns in c["namespaces"]}
        self.wait("default ServiceAccounts", 60, lambda: want_sa <= {
            sa["metadata"]["namespace"] for sa in k.list(
                "/api/v1/serviceaccounts?fieldSelector=metadata.name%3Ddefault")})
        quotas = [q for c in cases for q in c["quotas"]]
        self.each(lambda kk, q: kk.must("POST", "/api/v1/namespaces/%s/resourcequotas" % q[
            "metadata"]["namespace"], q), quotas)
        self.wait("quota status.hard", 60, lambda: sum(
            1 for q in k.list("/api/v1/resourcequotas")
            if q["metadata"]["namespace"] in want_sa and (q.get("status") or {}).get("hard")
        ) >= len(quotas))
        phases.append(("quotas", time.time()))
        want = {n["metadata"]["name"]: n["status"]["allocatable"] for n in nodes}
        for n in k.list("/api/v1/nodes", BATCH_KEY + "=" + str(bno)):
            have = (n.get("status") or {}).get("allocatable") or {}
            w = want.get(n["metadata"]["name"], {})
            if any(have.get(r) != v for r, v in w.items()):
                raise RuntimeError("node %s: allocatable %s, written %s" % (
                    n["metadata"]["name"], json.dumps(have), json.dumps(w)))
        log("batch %d: %d cases, %d nodes, %d namespaces up in %.1fs (%s)" % (
            bno, len(cases), len(names), len(want_sa), time.time() - t0, ", ".join(
                "%s %.1fs" % (p[0], p[1] - t0) for p in phases)))
        # The scheduler learns of nodes through its informer: give the last
        # node update a moment to reach it.
        time.sleep(1.0)
        foreign = self.node_reasons()
        t1 = time.time()
        res = self.create_pods(bno, cases)
        log("batch %d: pods decided in %.1fs" % (bno, time.time() - t1))
        return res, foreign

    def sync_nodes(self):
        """One `gpushare sync` of every node that declares GPUs, from the
        shared ConfigMap (nodes of other tests keep their keys, so sync
        leaves them as they are). Exit 1 is a node whose config fails, which
        some cases mean to have. (One run writes the nodes one after the
        other, yet on a loaded machine it was faster than a `--node` run per
        node, each reading the whole ConfigMap.)"""
        p = subprocess.run([self.gpushare, "sync"], capture_output=True, text=True)
        if p.returncode not in (0, 1):
            raise RuntimeError("gpushare sync: exit %d: %s" % (p.returncode, p.stderr[-2000:]))

    def nodes_ready(self, names):
        ready = 0
        why = {}
        for n in self.k.list("/api/v1/nodes", "%s" % CASE_KEY):
            if n["metadata"]["name"] not in names:
                continue
            cond = {c["type"]: c["status"] for c in (n.get("status") or {}).get("conditions", [])}
            taints = [t["key"] for t in (n.get("spec") or {}).get("taints") or []]
            # node.kubernetes.io/unschedulable comes with spec.unschedulable.
            bad = [t for t in taints
                   if t.startswith("node.kubernetes.io/") and t != "node.kubernetes.io/unschedulable"]
            if cond.get("Ready") == "True" and not bad:
                ready += 1
            else:
                if cond.get("Ready") == "True" and bad == ["node.kubernetes.io/not-ready"]:
                    self.nudge(n["metadata"]["name"])
                k = "Ready=%s %s" % (cond.get("Ready", "-"), ",".join(bad) or "no taint")
                why[k] = why.get(k, 0) + 1
        # Said when the wait gives up: which nodes are not ready, and how.
        self.not_ready = "%d of %d ready; the others: %s" % (
            ready, len(names), "; ".join("%d %s" % (v, k) for k, v in sorted(why.items())) or "not listed")
        return ready == len(names)

    def nudge(self, name):
        """kube-controller-manager takes a node's not-ready NoSchedule taint off
        when it handles an update of a Ready node. Under load it can handle the
        node's creation after kwok made it Ready and add the taint late; the
        next update then comes with kwok's heartbeat, about 10 minutes later (a
        kubelet's status update would come sooner). A node seen Ready and so
        tainted for 10 s is touched once (an annotation) to bring that update."""
        seen = self.tainted_since.setdefault(name, time.time())
        if time.time() - seen < 10 or name in self.nudged:
            return
        self.nudged.add(name)
        self.k.must("PATCH", "/api/v1/nodes/" + name,
                    {"metadata": {"annotations": {"gpushare.io/difftest-nudge": "1"}}},
                    "application/merge-patch+json")

    def wait(self, what, limit, cond, detail=None):
        end = time.time() + limit
        while not cond():
            if time.time() > end:
                raise RuntimeError("timed out after %ds waiting for %s%s" % (
                    limit, what, " (%s)" % detail() if detail else ""))
            time.sleep(0.2)

    def create_pods(self, bno, cases):
        """Pods in rounds: round r creates the r-th pod of every case, then waits
        until each is bound (and admitted or failed) or reported unschedulable.
        Within a case the order is the manifests' order."""
        results = {c["index"]: [] for c in cases}
        rounds = max(len(c["pods"]) for c in cases)
        for r in range(rounds):
            waiting = {}
            batch = [c for c in cases if r < len(c["pods"])]

            def create(kk, c):
                pod = c["pods"][r]
                return kk.call("POST", "/api/v1/namespaces/%s/pods" %
                               pod["metadata"]["namespace"], pod)

            for c, (status, body) in zip(batch, self.each(create, batch)):
                pod = c["pods"][r]
                if status == 201:
                    res = {"verdict": None, "node": None, "reason": ""}
                    waiting[(pod["metadata"]["namespace"], pod["metadata"]["name"])] = res
                else:
                    msg = body.get("message", "") if isinstance(body, dict) else str(body)
                    res = {"verdict": "refused", "node": None, "reason": msg,
                           "http": status}
                results[c["index"]].append(res)
            self.wait_decided(waiting, 90)
            if any(res["verdict"] == "failed" for res in waiting.values()):
                # A failed pod frees its node's resources once the scheduler's
                # informer has seen it terminal: let it, before the next pod.
                time.sleep(1.0)
        return results

    def wait_decided(self, waiting, limit):
        end = time.time() + limit
        while True:
            undecided = 0
            for p in self.k.list("/api/v1/pods", BATCH_KEY):
                key = (p["metadata"]["namespace"], p["metadata"]["name"])
                res = waiting.get(key)
                if res is None or res["verdict"]:
                    continue
                decided = self.outcome(p)
                if decided:
                    res.update(decided)
            undecided = sum(1 for r in waiting.values() if not r["verdict"])
            if not undecided:
                return
            if time.time() > end:
                for r in waiting.values():
                    if not r["verdict"]:
                        r.update({"verdict": "undecided", "reason": "no decision in %ds" % limit})
                return
            time.sleep(0.15)

    def outcome(self, p):
        spec, st = p.get("spec") or {}, p.get("status") or {}
        node = spec.get("nodeName")
        if node:
            if st.get("phase") == "Failed":
                return {"verdict": "failed", "node": node,
                        "reason": st.get("message", ""), "phase_reason": st.get("reason")}
            ann = p["metadata"].get("annotations") or {}
            if not self.admission or ann.get(ADMITTED):
                return {"verdict": "bound", "node": node, "reason": "",
                        "ledger": LEDGER in ann}
            return None
        for c in st.get("conditions") or []:
            if c.get("type") == "PodScheduled" and c.get("status") == "False":
                return {"verdict": "pending", "node": None, "reason": c.get("message", ""),
                        "cond_reason": c.get("reason")}
        return None

    def recheck(self, cases, results):
        """A pod judged unschedulable that the scheduler later bound (or the
        reverse) means the test did not wait long enough: a harness error."""
        now = {(p["metadata"]["namespace"], p["metadata"]["name"]): p
               for p in self.k.list("/api/v1/pods", BATCH_KEY)}
        late = []
        for c in cases:
            for pod, res in zip(c["pods"], results[c["index"]]):
                p = now.get((pod["metadata"]["namespace"], pod["metadata"]["name"]))
                if p is None or res["verdict"] in ("refused", "undecided"):
                    continue
                o = self.outcome(p)
                if o and (o["verdict"], o["node"]) != (res["verdict"], res["node"]):
                    late.append("case %d pod %s: first %s %s, later %s %s" % (
                        c["index"], pod["metadata"]["name"], res["verdict"], res["node"],
                        o["verdict"], o["node"]))
        return late

    def delete_batch(self, cases):
        self.each(lambda kk, ns: kk.call("DELETE", "/api/v1/namespaces/" + ns),
                  [ns for c in cases for ns in c["namespaces"]])
        self.each(lambda kk, n: kk.call("DELETE", "/api/v1/nodes/" + n["metadata"]["name"]),
                  [n for c in cases for n in c["nodes"]])

    def configmap_setup(self):
        """The shared device-plugin ConfigMap: made (with its namespace) when
        absent, and left there; its `default` is what every case's unlabelled
        nodes get."""
        ns, name = gen.CONFIGMAP
        self.cm_path = "/api/v1/namespaces/%s/configmaps/%s" % (ns, name)

        def usable():
            status, obj = self.k.call("GET", "/api/v1/namespaces/" + ns)
            return status == 404 or (obj.get("status") or {}).get("phase") != "Terminating"

        self.wait("namespace %s to finish terminating" % ns, 120, usable)
        status, _ = self.k.call("GET", "/api/v1/namespaces/" + ns)
        if status == 404:
            self.k.must("POST", "/api/v1/namespaces", {
                "apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}})
        status, cm = self.k.call("GET", self.cm_path)
        if status == 404:
            cm = {"apiVersion": "v1", "kind": "ConfigMap",
                  "metadata": {"name": name, "namespace": ns},
                  "data": {"default": DEFAULT_CONFIG}}
            self.k.must("POST", "/api/v1/namespaces/%s/configmaps" % ns, cm)
        elif status != 200:
            raise RuntimeError("GET %s: HTTP %d" % (self.cm_path, status))
        self.default_config = (cm.get("data") or {}).get("default")

    def configmap_restore(self, cases):
        self.k.call("PATCH", self.cm_path, {"data": {
            key: None for c in cases for key in c["configmap"]["data"] if key != "default"}},
            "application/merge-patch+json")

    # --- the plan side ------------------------------------------------------
    def target(self):
        """plan models this cluster: its release (/version) and, where the
        alpha DRA gates are on, DRAExtendedResource."""
        if not hasattr(self, "_target"):
            status, ver = self.k.call("GET", "/version")
            if status != 200:
                raise RuntimeError("GET /version: HTTP %d" % status)
            self._target = ["--kubernetes-version", ver["gitVersion"]]
            if os.environ.get("GS_DRA_GATES") == "1":
                self._target += ["--feature-gates", "DRAExtendedResource=true"]
        return self._target

    def dra_objects(self):
        """The cluster's DeviceClasses, ResourceSlices and ResourceClaims (an
        earlier test's DeviceClass may serve nvidia.com/gpu by DRA), read once
        into one List that every plan reads."""
        path = os.path.join(self.out, "dra-objects.json")
        if not getattr(self, "_dra_read", False):
            items = []
            for res in ("deviceclasses", "resourceslices", "resourceclaims"):
                status, lst = self.k.call("GET", "/apis/resource.k8s.io/v1/" + res)
                if status == 404:
                    continue  # DRA's API off: nothing to serve
                if status != 200:
                    raise RuntimeError("GET %s: HTTP %d" % (res, status))
                kind = {"deviceclasses": "DeviceClass", "resourceslices": "ResourceSlice",
                        "resourceclaims": "ResourceClaim"}[res]
                for o in lst.get("items") or []:
                    items.append(dict(o, apiVersion="resource.k8s.io/v1", kind=kind))
            os.makedirs(self.out, exist_ok=True)
            with open(path, "w", encoding="utf-8") as f:
                json.dump({"apiVersion": "v1", "kind": "List", "items": items}, f)
            self._dra_read = True
        return path

    def run_plan(self, c, d, pods=None, nodes=None):
        paths = gen.write_case(dict(c, pods=pods if pods is not None else c["pods"],
                                    nodes=nodes if nodes is not None else c["nodes"]), d)
        cmd = [self.gpushare, "plan", "-f", paths["pods"], "-f", paths["nodes"],
               "-f", paths["configmap"], "--configmap", "%s/%s" % gen.CONFIGMAP,
               "-f", self.dra_objects()] + self.target()
        if c["quotas"]:
            cmd += ["-f", paths["quotas"]]
        cmd += ["-o", "json"]
        with open(os.path.join(d, "plan-command.txt"), "w", encoding="utf-8") as f:
            f.write(" ".join(["gpushare"] + cmd[1:]) + "\n")
        p = subprocess.run(cmd, capture_output=True, text=True)
        try:
            out = json.loads(p.stdout)
            byname = {(x["namespace"], x["name"]): x for x in out["pods"]}
        except (ValueError, KeyError, TypeError):
            return None, "exit %d, not the JSON of contract 5: %s%s" % (
                p.returncode, p.stdout[:300], p.stderr[:300])
        return [byname.get((q["metadata"]["namespace"], q["metadata"]["name"]), {})
                for q in (pods if pods is not None else c["pods"])], None

    def pair_check(self, c, real, i, p, d):
        """Pod i's kind when plan's lists were cut (it names at most 16 tied
        and 16 feasible nodes) and the scheduler's node is not among those
        named: plan again, the earlier pods pinned where the scheduler put
        them (as plan had them: after a tie or sample plan continues from
        such a run), pod i confined by a nodeSelector to plan's node and the
        scheduler's (a label only plan's copy of those two carries). Equal
        resource scores and taint and affinity counts stay equal on the two
        alone, so they tie there exactly when they tied among all."""
        pods = json.loads(json.dumps(c["pods"]))
        for j in range(i):
            if real[j]["verdict"] in ("bound", "failed"):
                pods[j]["spec"]["nodeName"] = real[j]["node"]
        spec = pods[i]["spec"]
        spec["nodeSelector"] = dict(spec.get("nodeSelector") or {}, **{PAIR_KEY: "1"})
        nodes = json.loads(json.dumps(c["nodes"]))
        for n in nodes:
            if n["metadata"]["name"] in (real[i]["node"], p.get("node")):
                n["metadata"].setdefault("labels", {})[PAIR_KEY] = "1"
        plan2, err = self.run_plan(c, os.path.join(d, "pair-%d" % i), pods, nodes)
        if plan2 is None:
            return "plan-error", "plan with the pod on two nodes failed: " + err
        return compare.pair_kind(real[i], p, plan2[i])

    def judge_case(self, c, real, foreign):
        """Compares one case pod by pod. After a tie the two fleets differ, so
        plan is asked again with the earlier pods pinned where the scheduler
        put them (spec.nodeName), and the rest is judged against that."""
        d = os.path.join(self.out, "case-%d" % c["index"])
        plan, err = self.run_plan(c, d)
        lines, kinds = [], []
        if plan is None:
            return ["plan failed: " + err], ["plan-error"] * len(c["pods"])
        stale = False
        for i, (pod, r) in enumerate(zip(c["pods"], real)):
            p = plan[i]
            if r["verdict"] == "undecided":
                kinds.append("undecided")
                lines.append("%s: the cluster gave no decision" % pod["metadata"]["name"])
                continue
            if r["verdict"] == "pending":
                norm = compare.normalize_fit_error(r["reason"], len(c["nodes"]),
                                                   self.foreign_for(c["index"], foreign))
                r["normalized"] = norm
            if stale:
                kinds.append("uncompared")
                continue
            kind, note = compare.compare_pod(r, p)
            if kind in ("node", "score") and compare.lists_cut(p):
                kind, note = self.pair_check(c, real, i, p, d)
            if (kind == "verdict" and p.get("verdict") == "failed" and r["verdict"] == "bound"
                    and r["node"] == p.get("node") and not r.get("ledger")):
                # No device admission in this cluster (no controller, or one
                # that admits every pod: no ledger annotation): the pod keeps
                # its devices there, so the case's later pods are not comparable.
                kind, note = "unplayed", "plan: failed on %s (%s); no device admission here" % (
                    p.get("node"), p.get("reason"))
                stale = True
            if kind == "same" and r["verdict"] in ("pending", "refused", "failed"):
                real_reason = r.get("normalized") if r["verdict"] == "pending" else r["reason"]
                if not compare.reasons_agree(real_reason, p.get("reason")):
                    kind = "reason"
                    note = "cluster: %s\n      plan:    %s" % (
                        real_reason or r["reason"] + " (could not take the other cases out)",
                        p.get("reason"))
            kinds.append(kind)
            if kind != "same":
                lines.append("%s/%s: %s: %s" % (pod["metadata"]["namespace"],
                                                 pod["metadata"]["name"], kind, note))
            if kind in ("tie", "sample"):
                pods = [dict(q) for q in c["pods"]]
                for j in range(i + 1):
                    if real[j]["verdict"] in ("bound", "failed"):
                        pods[j] = json.loads(json.dumps(pods[j]))
                        pods[j]["spec"]["nodeName"] = real[j]["node"]
                nodes = None
                if kind == "sample":
                    # plan never scored the scheduler's node (outside its
                    # sample, or below its choice there): not spec.nodeName,
                    # which only the kubelet's admission judges, but a
                    # selector on a label of that node alone, so that plan
                    # runs every filter on it and must bind the pod there.
                    spec = pods[i]["spec"]
                    del spec["nodeName"]
                    spec["nodeSelector"] = dict(spec.get("nodeSelector") or {},
                                                **{STEER_KEY: r["node"]})
                    nodes = json.loads(json.dumps(c["nodes"]))
                    for n in nodes:
                        n["metadata"].setdefault("labels", {})[STEER_KEY] = n["metadata"]["name"]
                plan2, err = self.run_plan(c, os.path.join(d, "pinned-%d" % i), pods, nodes)
                if plan2 is None:
                    lines.append("plan with pinned pods failed: " + err)
                    kinds += ["plan-error"] * (len(c["pods"]) - i - 1)
                    break
                # The pod itself, on the scheduler's node: bound or failed
                # there as the cluster says.
                k2, note2 = compare.compare_pod(r, plan2[i])
                if (k2 == "verdict" and plan2[i].get("verdict") == "failed"
                        and r["verdict"] == "bound" and not r.get("ledger")):
                    k2, note2, stale = "unplayed", "no device admission here", True
                if k2 != "same":
                    kinds[-1] = k2
                    lines[-1] += "; pinned to %s: %s" % (r["node"], note2)
                plan[i + 1:] = plan2[i + 1:]
        with open(os.path.join(d, "result.json"), "w", encoding="utf-8") as f:
            json.dump({"cluster": real, "plan": plan, "kinds": kinds}, f, indent=1)
        return lines, kinds

    # --- the run ------------------------------------------------------------
    def run(self):
        t0 = time.time()
        shutil.rmtree(self.out, ignore_errors=True)
        os.makedirs(self.out)
        log("difftest: seed %s, %d cases, batches of %d, names dt%s*, kubelet admission %s" % (
            self.seed, len(self.indices), self.batch_size, self.tag,
            "played by the controller" if self.admission else "not played (no controller)"))
        totals, bad_cases, late_all, recap = {}, [], [], []
        self.configmap_setup()
        npods = 0
        for b in range(0, len(self.indices), self.batch_size):
            idx = self.indices[b:b + self.batch_size]
            cases = [gen.case(self.seed, i, self.tag, self.large) for i in idx]
            for c in cases:
                if self.default_config is not None:
                    c["configmap"]["data"]["default"] = self.default_config
                for obj in c["nodes"] + c["pods"]:
                    obj["metadata"].setdefault("labels", {})[BATCH_KEY] = str(b)
            try:
                results, foreign = self.apply_batch(b, cases)
                late_all += self.recheck(cases, results)
            finally:
                if os.environ.get("DIFF_KEEP") != "1":
                    self.delete_batch(cases)
                    self.configmap_restore(cases)
            for c in cases:
                real = results[c["index"]]
                npods += len(real)
                if self.no_plan:
                    d = os.path.join(self.out, "case-%d" % c["index"])
                    gen.write_case(c, d)
                    with open(os.path.join(d, "cluster.json"), "w", encoding="utf-8") as f:
                        json.dump(real, f, indent=1)
                    for r in real:
                        totals[r["verdict"]] = totals.get(r["verdict"], 0) + 1
                    continue
                lines, kinds = self.judge_case(c, real, foreign)
                for kd in kinds:
                    totals[kd] = totals.get(kd, 0) + 1
                bad = [kd for kd in kinds if kd not in OK_KINDS]
                log("case %d (DIFF_SEED=%s DIFF_ONLY=%d): %d/%d pods agree%s" % (
                    c["index"], self.seed, c["index"], len(kinds) - len(bad), len(kinds),
                    "" if not bad else "  <- " + os.path.join(self.out, "case-%d" % c["index"])))
                for ln in lines:
                    log("    " + ln)
                if bad:
                    bad_cases.append(c["index"])
                    recap += ["case %d: %s" % (c["index"], ln) for ln in lines
                              if ln.split(": ")[1:2] not in (["tie"], ["sample"])]
        wall = time.time() - t0
        if self.no_plan:
            log("note: difftest: cluster only (DIFF_NO_PLAN=1): %d pods: %s; %.0fs" % (
                npods, ", ".join("%s %d" % kv for kv in sorted(totals.items())), wall))
            return 2 if late_all else 0
        agree = totals.get("same", 0) + totals.get("tie", 0) + totals.get("sample", 0)
        skipped = totals.get("unplayed", 0) + totals.get("uncompared", 0)
        compared = npods - skipped
        log("note: difftest: seed %s: %d cases, %d pods compared: %d agree (%.1f%%): %d same, "
            "%d tie, %d sample; %d disagree: %s; %d/%d cases fully agree; %.0fs" % (
                self.seed, len(self.indices), compared, agree, 100.0 * agree / max(compared, 1),
                totals.get("same", 0), totals.get("tie", 0), totals.get("sample", 0),
                compared - agree,
                ", ".join("%s %d" % kv for kv in sorted(totals.items())
                          if kv[0] not in OK_KINDS) or "none",
                len(self.indices) - len(bad_cases), len(self.indices), wall))
        if skipped:
            log("note: difftest: %d pods not compared: plan fails them at the kubelet's device "
                "admission, which this cluster does not play (the pod was admitted without "
                "gpushare.io/devices), and %d later pods of those cases" % (totals.get("unplayed", 0), totals.get("uncompared", 0)))
        for ln in late_all:
            log("harness: a decision changed after it was read: " + ln)
        if recap:
            log("difftest: the disagreements again:")
            for ln in recap[:30]:
                log("  " + ln)
        if bad_cases:
            log("difftest: reproduce one case: DIFF_SEED=%s DIFF_ONLY=%d "
                "E2E_ONLY=test_plan_differential make e2e (files in %s)" % (
                    self.seed, bad_cases[0], os.path.join(self.out, "case-%d" % bad_cases[0])))
        return 1 if bad_cases or late_all else 0


def main():
    try:
        return Harness().run()
    except (ApiError, RuntimeError, OSError) as e:
        log("difftest: harness error: %s" % e)
        return 2


if __name__ == "__main__":
    sys.exit(main())
