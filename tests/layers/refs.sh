#!/bin/sh
# Every reference a reader meets must resolve inside the repository or name
# an upstream source. Fails when a tracked file cites a document that is not
# in the repository: a numbered section sign (the repository numbers no
# sections of its own), or a path outside the checkout. .ci/run may look for
# tools on a fresh machine; this file names the patterns.
# Usage: tests/layers/refs.sh [DIR]   (DIR: a git checkout, default .)
set -eu
top=${1:-.}
sect=$(printf '\302\247')
self=tests/layers/refs.sh
bad=$(git -C "$top" ls-files -z |
	(cd "$top" && xargs -0 grep -n -I -F \
		-e "$sect" -e "/work/shared" -e "../shared" -e "/work/wt" -- 2>/dev/null) |
	grep -v -e "^\.ci/run:" -e "^$self:" || true)
if [ -n "$bad" ]; then
	printf '%s\n' "$bad" | sed 's/$/  <- a reference outside the repository: name the upstream source or a docs page/' >&2
	exit 1
fi
n=$(git -C "$top" ls-files | wc -l)
echo "refs: $n tracked files cite nothing outside the repository"

# Every relative markdown link (README.md, docs/, src/, tests/; outside code)
# and every docs/... path those files mention must name a tracked file or
# folder: a page moved or renamed leaves no reader at a dead end.
python3 - "$top" <<'EOF'
import os, re, subprocess, sys
top = sys.argv[1]


def ls(*where):
    out = subprocess.run(['git', '-C', top, 'ls-files', '-z', '--', *where],
                         capture_output=True, check=True).stdout
    return [f for f in out.decode().split('\0') if f]


tracked = set()
for f in ls():
    while f:
        tracked.add(f)
        f = os.path.dirname(f)
path_re = re.compile(r'(?<![A-Za-z0-9_./-])docs/[A-Za-z0-9_./-]*')
link_re = re.compile(r'\]\(([^()\s]+)(?:\s+"[^"]*")?\)')
bad = []
n_paths = n_links = 0
for f in ls('README.md', 'docs', 'src', 'tests'):
    try:
        with open(os.path.join(top, f), encoding='utf-8') as fh:
            lines = fh.read().split('\n')
    except (UnicodeDecodeError, OSError):
        continue
    for n, line in enumerate(lines, 1):
        for m in path_re.finditer(line):
            p = os.path.normpath(m.group(0).rstrip('.'))
            n_paths += 1
            if p not in tracked:
                bad.append(f'{f}:{n}: {m.group(0)}: no such file in the repository')
    if not f.endswith('.md'):
        continue
    fence = False
    for n, line in enumerate(lines, 1):
        if re.match(r'\s*(```|~~~)', line):
            fence = not fence
            continue
        if fence:
            continue
        for m in link_re.finditer(re.sub(r'(`+).+?\1', '', line)):
            t = m.group(1)
            if re.match(r'[A-Za-z][A-Za-z0-9+.-]*:', t) or t.startswith('#'):
                continue
            n_links += 1
            t = t.split('#')[0].split('?')[0]
            where = '' if t.startswith('/') else os.path.dirname(f)
            p = os.path.normpath(os.path.join(where, t.lstrip('/')))
            if p != '.' and p not in tracked:
                bad.append(f'{f}:{n}: link ({m.group(1)}): no such file in the repository')
for b in bad:
    print(b, file=sys.stderr)
if bad:
    sys.exit(1)
print(f'refs: {n_paths} docs/ paths and {n_links} relative links resolve')
EOF
