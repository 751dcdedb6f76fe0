#!/usr/bin/env python3
"""The house's include rules (docs/design/layout.md), checked by `make test`.

Every C file under src/ lives in a layer folder; an #include "layer/x.h" may
point only to its own layer or one below; the engines and everything under
them never include the Kubernetes client; no two modules include each other,
directly or around a circle. Prints each broken rule as FILE:LINE: message and
exits 1, or prints a one-line summary and exits 0.
"""
import os
import re
import sys

LAYERS = ['base', 'yaml', 'model', 'kube', 'dra', 'engine', 'fleet', 'daemon', 'cmd']
RANK = {name: i for i, name in enumerate(LAYERS)}
# Layers that decide or describe, never talk to an apiserver.
NO_KUBE = {'base', 'yaml', 'model', 'dra', 'engine'}
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"')


def module(path):
    """src/engine/plan.c -> engine/plan"""
    rel = os.path.relpath(path, 'src')
    return os.path.splitext(rel)[0]


def main():
    top = sys.argv[1] if len(sys.argv) > 1 else '.'
    os.chdir(top)
    problems = []
    edges = {}
    files = 0
    for entry in sorted(os.listdir('src')):
        p = os.path.join('src', entry)
        if os.path.isfile(p) and entry != 'main.c':
            problems.append(f'{p}:1: only main.c lives in src/ itself; '
                            f'move it to the folder of its layer ({", ".join(LAYERS)})')
        elif os.path.isdir(p) and entry not in RANK:
            problems.append(f'{p}/: not a layer; the layers are {", ".join(LAYERS)}')
    for root, _, names in os.walk('src'):
        for name in sorted(names):
            if not name.endswith(('.c', '.h')):
                continue
            path = os.path.join(root, name)
            files += 1
            rel = os.path.relpath(path, 'src')
            layer = rel.split('/')[0] if '/' in rel else 'main'
            mod = module(path)
            with open(path, encoding='utf-8', errors='replace') as f:
                for lineno, line in enumerate(f, 1):
                    m = INCLUDE.match(line)
                    if not m:
                        continue
                    target = m.group(1)
                    where = f'{path}:{lineno}'
                    if '/' not in target:
                        problems.append(f'{where}: write the include with its layer, '
                                        f'"LAYER/{target}"')
                        continue
                    tlayer = target.split('/')[0]
                    if tlayer not in RANK:
                        problems.append(f'{where}: "{target}" is in no layer')
                        continue
                    if not os.path.exists(os.path.join('src', target)):
                        problems.append(f'{where}: "{target}" does not exist')
                        continue
                    if layer != 'main' and RANK[tlayer] > RANK[layer]:
                        problems.append(f'{where}: {layer} includes "{target}" from {tlayer}, '
                                        f'a layer above it (arrows only point down: '
                                        f'{" < ".join(LAYERS)})')
                    if layer in NO_KUBE and tlayer == 'kube':
                        problems.append(f'{where}: {layer} includes the Kubernetes client '
                                        f'"{target}"; only fleet, daemon and cmd talk to an '
                                        f'apiserver')
                    tmod = os.path.splitext(target)[0]
                    if tmod != mod:
                        edges.setdefault(mod, set()).add(tmod)
    # Circles between modules (Tarjan's strongly connected components).
    index, low, stack, on, sccs = {}, {}, [], set(), []
    counter = [0]

    def strong(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in sorted(edges.get(v, ())):
            if w not in index:
                strong(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                sccs.append(sorted(comp))

    sys.setrecursionlimit(10000)
    for v in sorted(edges):
        if v not in index:
            strong(v)
    for comp in sccs:
        problems.append(f'src/{comp[0]}: modules include each other in a circle: '
                        f'{" -> ".join(comp)} -> {comp[0]}')
    for p in problems:
        print(p)
    if problems:
        print(f'layers: {len(problems)} broken include rule(s) in {files} files', file=sys.stderr)
        return 1
    n = sum(len(v) for v in edges.values())
    print(f'layers: {files} files, {n} module arrows, all downward, no circle')
    return 0


if __name__ == '__main__':
    sys.exit(main())
