#!/usr/bin/python3
"""unalign: make a vmcore whose PT_LOADs start and end inside pages.

usage: unalign.py IN OUT [--shift BYTES] [--cut BYTES]

IN is a mkvmcore file made with --sparse-gap 0 and at least two RAM
segments, so that the first two PT_LOADs are back to back both in
physical memory and in the file (mkvmcore cannot make unaligned ends by
itself). OUT is IN with the boundary between them moved down by --shift
bytes (default 0x800): the first segment then ends, and the second starts,
in the middle of one page, which each covers in part. The last PT_LOAD
also loses --cut bytes at its end (default 0x300). Physical addresses
keep their bytes, so OUT is a consistent vmcore, and every page still
reads the same through any segment that holds it.
"""
import argparse
import shutil
import struct
import sys

EHDR = struct.Struct("<16sHHIQQQIHHHHHH")
PHDR = struct.Struct("<IIQQQQQQ")
PT_LOAD = 1


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("inp")
    ap.add_argument("out")
    ap.add_argument("--shift", type=lambda s: int(s, 0), default=0x800)
    ap.add_argument("--cut", type=lambda s: int(s, 0), default=0x300)
    a = ap.parse_args()
    shutil.copyfile(a.inp, a.out)
    with open(a.out, "r+b") as f:
        eh = EHDR.unpack(f.read(EHDR.size))
        phoff, phnum = eh[5], eh[10]
        f.seek(phoff)
        ph = [list(PHDR.unpack(f.read(PHDR.size))) for _ in range(phnum)]
        loads = [p for p in ph if p[0] == PT_LOAD]
        if len(loads) < 2:
            sys.exit("unalign: need two PT_LOADs")
        # fields: type flags offset vaddr paddr filesz memsz align
        s0, s1, last = loads[0], loads[1], loads[-1]
        if s0[4] + s0[6] != s1[4] or s0[2] + s0[5] != s1[2] or s0[5] != s0[6]:
            sys.exit("unalign: the first two PT_LOADs are not back to back (use --sparse-gap 0)")
        d = a.shift
        s0[5] -= d
        s0[6] -= d
        for i in (2, 3, 4):
            s1[i] -= d
        s1[5] += d
        s1[6] += d
        last[5] -= a.cut
        last[6] -= a.cut
        f.seek(phoff)
        for p in ph:
            f.write(PHDR.pack(*p))
    return 0


if __name__ == "__main__":
    sys.exit(main())
