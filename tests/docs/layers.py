#!/usr/bin/python3
"""layers.py TOP: the folders include only the folders below them.

The order is docs/DESIGN.md's: main, host, arm, init, config, capture,
dump, kernel, arch, lib. Every #include "..." in TOP/FOLDER/*.[ch] must name a file in the
same folder or in one later in that order. Prints one "FAIL" line per
include that climbs, or "ok layers: N includes across M folders", and
exits 1 on any climb (or when it finds nothing to check)."""
import glob
import os
import re
import sys

ORDER = ['main', 'host', 'arm', 'init', 'config', 'capture', 'dump', 'kernel', 'arch', 'lib']


def main():
    top = sys.argv[1]
    rank = {d: i for i, d in enumerate(ORDER)}
    bad, n = [], 0
    for d in ORDER:
        for f in sorted(glob.glob(os.path.join(top, d, '*.[ch]'))):
            for line, inc in enumerate(open(f, encoding='utf-8').read().split('\n'), 1):
                m = re.match(r'\s*#\s*include\s+"([^"]+)"', inc)
                if not m:
                    continue
                target = os.path.normpath(os.path.join(d, m.group(1))).split(os.sep)[0]
                if target == d:
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
    for b in bad:
        print('FAIL layers: ' + b)
    if not n:
        print('FAIL layers: no include between folders found under ' + top)
        return 1
    if not bad:
        print('ok layers: %d includes between folders, none climbs (%s)' % (n, ' > '.join(ORDER)))
    return 1 if bad else 0


sys.exit(main())
