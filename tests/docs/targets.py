#!/usr/bin/python3
"""targets.py FILE...: the make invocations the documents name, one per line
as "MAKEFILE TARGET" (MAKEFILE is '-' for the top Makefile).

Read from inline code (`make X`), lines of fenced code blocks that start
with make, and table cells; prose such as "make a stale chunk" is not code
and is not read."""
import re
import sys

CALL = re.compile(r'^make((?:\s+-f\s+\S+)?)((?:\s+[A-Z_]+=\S*)*)((?:\s+-\S+)*)\s+([a-z][a-z0-9-]*)\b')
seen = set()


def take(code):
    m = CALL.match(code.strip())
    if not m:
        return
    mk = m.group(1).split()[-1] if m.group(1).strip() else '-'
    key = (mk, m.group(4))
    if key not in seen:
        seen.add(key)
        print('%s %s' % key)


for path in sys.argv[1:]:
    fenced = False
    for line in open(path, encoding='utf-8'):
        if line.lstrip().startswith('```'):
            fenced = not fenced
            continue
        if fenced or line.startswith('    '):
            take(line)
        for span in re.findall(r'`([^`]+)`', line):
            take(span)
