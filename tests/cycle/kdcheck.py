#!/usr/bin/python3
"""kdcheck.py VMCORE INFO.TXT

Completeness of one saved (kdump-compressed) dump without a reference:
every page its bitmap lists must have a descriptor inside the file whose
data reads back (decompresses) to one whole page, and the number of
non-zero pages must be what the capture reported ("pages kept N" in the
info.txt that `kdumpinit save --dir` wrote next to it). A dump cut short,
a descriptor past the end or a torn page fails. Uses kdcmp.py's reader.
Exit 0 OK, 1 FAIL, 2 usage/unreadable.
"""
import os
import re
import struct
import sys
import zlib

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'tools'))
import kdcmp  # noqa: E402


def main():
    if len(sys.argv) != 3:
        print(__doc__.strip().splitlines()[0], file=sys.stderr)
        return 2
    try:
        with open(sys.argv[2]) as f:
            m = re.search(r'^pages kept\s+(\d+)', f.read(), re.M)
        if not m:
            print('kdcheck: no "pages kept" line in %s' % sys.argv[2])
            return 2
        want = int(m.group(1))
        got = len(kdcmp.kdump_pages(sys.argv[1]))
    except (OSError, ValueError, struct.error, zlib.error) as e:
        print('kdcheck: %s' % e)
        return 1
    print('%d non-zero pages read back whole, the capture reported %d' % (got, want))
    return 0 if got == want else 1


if __name__ == '__main__':
    sys.exit(main())
