#!/usr/bin/python3
"""layers.py TOP: the folders include only the folders below them.

The order is docs/DESIGN.md's: main, host, arm, init, net, config, capture,
dump, kernel, arch, lib. Every #include "..." in TOP/FOLDER/*.[ch] must name a file in the
same folder or in one later in that order. Prints one "FAIL" line per
include that climbs, or "ok layers: N includes across M folders", and
exits 1 on any climb (or when it finds nothing to check).

Within a folder, modules (a .c and its .h, by name) must not include
each other in a circle either: FOLDER/a.[ch] including b.h makes a
depend on b, and a path back from b to a is one "FAIL ... circle" line.
Between folders the order already forbids one. KNOWN names the circles
left on purpose, each with why; one that is gone must leave the list."""
import glob
import os
import re
import sys

# Circles known and left: "folder/a folder/b" as cycle() spells them.
KNOWN = {
    # diskdump_open fills a struct vmcore (a kdump-compressed file read as
    # the crashed kernel's memory) and vmcore_open_saved/vmcore_close call
    # it back: one reader with two back ends, not yet split.
    'kernel/diskdump kernel/vmcore',
}

ORDER = ['main', 'host', 'arm', 'init', 'net', 'config', 'capture', 'dump', 'kernel', 'arch', 'lib']


def cycle(deps, start):
    """The shortest path of modules from start back to start, or None."""
    prev, todo = {start: None}, [start]
    while todo:
        nxt = []
        for m in todo:
            for t in sorted(deps.get(m, ())):
                if t == start:
                    path = [m]
                    while prev[path[-1]] is not None:
                        path.append(prev[path[-1]])
                    return path[::-1] + [start]
                if t not in prev:
                    prev[t] = m
                    nxt.append(t)
        todo = nxt
    return None


def main():
    top = sys.argv[1]
    rank = {d: i for i, d in enumerate(ORDER)}
    bad, n = [], 0
    deps = {}	# 'folder/module' -> the modules of the same folder it includes
    for d in ORDER:
        for f in sorted(glob.glob(os.path.join(top, d, '*.[ch]'))):
            for line, inc in enumerate(open(f, encoding='utf-8').read().split('\n'), 1):
                m = re.match(r'\s*#\s*include\s+"([^"]+)"', inc)
                if not m:
                    continue
                target = os.path.normpath(os.path.join(d, m.group(1))).split(os.sep)[0]
                if target == d:
                    me = d + '/' + os.path.splitext(os.path.basename(f))[0]
                    it = os.path.splitext(os.path.normpath(os.path.join(d, m.group(1))))[0]
                    if it != me:
                        deps.setdefault(me, set()).add(it)
                    continue
                n += 1
                if target not in rank:
                    bad.append('%s/%s:%d includes %s, outside the layers' % (d, os.path.basename(f), line, m.group(1)))
                elif rank[target] < rank[d]:
                    bad.append('%s/%s:%d includes %s: %s is above %s' % (d, os.path.basename(f), line, m.group(1), target, d))
    # A folder of C code outside the order would go unchecked; and the
    # order is the one docs/DESIGN.md draws, or the two have drifted.
    skip = {'tests', 'deps', 'build', 'debian', 'dist', 'docs', 'initramfs'}
    for d in sorted(os.listdir(top)):
        if d in rank or d in skip or d.startswith('.') or not os.path.isdir(os.path.join(top, d)):
            continue
        if glob.glob(os.path.join(top, d, '*.[ch]')):
            bad.append('%s/ holds C code but is not in the layer order' % d)
    design = os.path.join(top, 'docs', 'DESIGN.md')
    if os.path.exists(design):
        drawn = [l.strip() for l in open(design, encoding='utf-8') if ' -> ' in l and l.startswith('    ')]
        if ' -> '.join(ORDER) not in drawn:
            bad.append('docs/DESIGN.md does not draw the order %s' % ' -> '.join(ORDER))
    seen = set()
    for m in sorted(deps):
        c = cycle(deps, m)
        key = ' '.join(sorted(set(c or ())))
        if not c or key in seen:
            continue
        seen.add(key)
        if key not in KNOWN:
            bad.append('a circle of includes: %s' % ' -> '.join(c))
    for key in sorted(KNOWN - seen):
        bad.append('the circle %s is gone: take it out of KNOWN' % key)
    for b in bad:
        print('FAIL layers: ' + b)
    if not n:
        print('FAIL layers: no include between folders found under ' + top)
        return 1
    if not bad:
        print('ok layers: %d includes between folders, none climbs (%s); no circle within a folder%s'
              % (n, ' > '.join(ORDER), ' but %d known' % len(KNOWN) if KNOWN else ''))
    return 1 if bad else 0


sys.exit(main())
