#!/usr/bin/python3
"""subset: is every page one saved ELF vmcore holds also in another, with
the same bytes?

usage: subset.py SMALL_LEVEL_DUMP.elf BIG.elf   (arguments: NEED HAVE)

NEED and HAVE are ELF vmcores as `kdumpinit save --format elf` writes them
(excluded runs as p_filesz < p_memsz). Every physical page that NEED holds
in the file part of a PT_LOAD must be held by HAVE too, byte for byte.
Used to show that a level-1 dump cut short still holds every page that a
level-31 dump of the same vmcore keeps: the kernel's pages come first.
Exit 0 and one line when it holds; 1 with the first pages missing.
"""
import mmap
import struct
import sys

PAGE = 4096


def pages(path):
    f = open(path, "rb")
    m = mmap.mmap(f.fileno(), 0, prot=mmap.PROT_READ)
    if m[:4] != b"\x7fELF" or m[4] != 2:
        raise SystemExit(f"subset: {path}: not an ELF64 file")
    phoff, = struct.unpack_from("<Q", m, 32)
    phentsize, phnum = struct.unpack_from("<HH", m, 54)
    held = {}
    for i in range(phnum):
        t, _fl, off, _va, pa, filesz, _memsz, _al = struct.unpack_from("<IIQQQQQQ", m, phoff + i * phentsize)
        if t != 1:
            continue
        for k in range(filesz // PAGE):
            held.setdefault((pa // PAGE) + k, off + k * PAGE)
    return m, held


def main():
    if len(sys.argv) != 3:
        raise SystemExit(__doc__)
    nm, need = pages(sys.argv[1])
    hm, have = pages(sys.argv[2])
    missing = [p for p in need if p not in have]
    differ = [p for p in need if p in have and nm[need[p]:need[p] + PAGE] != hm[have[p]:have[p] + PAGE]]
    if missing or differ:
        print(f"subset: {len(missing)} of {len(need)} pages missing from {sys.argv[2]} "
              f"(first: {[hex(p) for p in sorted(missing)[:5]]}), {len(differ)} differ")
        return 1
    print(f"subset: all {len(need)} pages of {sys.argv[1]} are in {sys.argv[2]} ({len(have)} pages), identical")
    return 0


if __name__ == "__main__":
    sys.exit(main())
