#!/usr/bin/python3
"""keys: where the page filter's VMCOREINFO keys are in a vmcore file.

usage: keys.py HEADER VMCORE
       keys.py covers BASE.img OTHER.img
       keys.py serve

HEADER is kernel/vmcoreinfo.h: its VI_KEYS table says which keys the
filter reads (policy other than NONE) under which names. Prints

    machine N                     the ELF e_machine (62 x86_64, 183 arm64)
    OFFSET POLICY NAME OTHER      one line per such key in VMCORE's note;
                                  OTHER: its name under other kernels
                                  (7.1's compound_info, compound_head
                                  before), or "-"

OFFSET is the file offset of the key's first letter, the one keys.sh
flips to make the key unknown while the file stays the same length. A key
the note gives twice is listed once (the first line is the one read).

"covers" reads only the chunk headers of two kdumpinit dumps (their PAGES
chunks' bitmaps: stored pages and pages left out for being zero) and exits
0 when every pfn BASE has is in OTHER, 1 with the count missing: the pfn
half of tests/tools/subset.py, without saving either dump.

"serve" answers requests on stdin, one a line, so that a run of hundreds of
cases starts Python once: "covers BASE.img OTHER.img" as above, or "subset
BASE.elf OTHER.elf" (tests/tools/subset.py: every page of BASE in OTHER,
byte for byte). Each answer is one line, "ok WHAT" or "fail WHAT".
"""
import mmap
import os
import re
import struct
import sys

PAGE = 4096
BITS = [[b for b in range(8) if v >> b & 1] for v in range(256)]
ROW = re.compile(r'X\(\s*(\w+)\s*,\s*"([^"]+)"\s*,\s*\w+\s*,\s*(NULL|"[^"]+")\s*,\s*(\w+)')


def table(path):
    text = open(path, encoding="utf-8").read().replace("\\\n", " ")
    keys = []
    for ident, name, alias, policy in ROW.findall(text):
        if policy == "NONE":
            continue
        other = alias.strip('"') if alias != "NULL" else "-"
        keys.append((name, policy, other))
        if alias != "NULL":
            keys.append((other, policy, name))
    return keys


def note(m):
    if m[:4] != b"\x7fELF" or m[4] != 2:
        raise SystemExit("keys: not an ELF64 file")
    machine, = struct.unpack_from("<H", m, 18)
    phoff, = struct.unpack_from("<Q", m, 32)
    phentsize, phnum = struct.unpack_from("<HH", m, 54)
    for i in range(phnum):
        t, _f, off, _va, _pa, filesz = struct.unpack_from("<IIQQQQ", m, phoff + i * phentsize)
        if t != 4:
            continue
        o, end = off, off + filesz
        while o + 12 <= end:
            namesz, descsz, _typ = struct.unpack_from("<III", m, o)
            name = o + 12
            desc = name + ((namesz + 3) & ~3)
            if m[name:name + namesz].rstrip(b"\0") == b"VMCOREINFO":
                return machine, desc, desc + descsz
            o = desc + ((descsz + 3) & ~3)
    raise SystemExit("keys: no VMCOREINFO note")


def pfns(path):
    """Every pfn a dump records (stored or zero), as a set."""
    have = set()
    hdr = struct.Struct("<4sHHIIQQQQ")
    with open(path, "rb") as f:
        sb = f.read(112)
        if sb[:8] != b"KDUMPINT":
            raise SystemExit(f"keys: {path}: no kdumpinit superblock")
        off = struct.unpack_from("<Q", sb, 104)[0]
        while True:
            f.seek(off)
            h = f.read(hdr.size)
            if len(h) < hdr.size:
                break
            magic, typ, _hs, length, _fl, _id, _seq, _ph, _hh = hdr.unpack(h)
            if magic != b"KDCK":
                break
            if typ == 5:
                head = f.read(24)
                pfn, count, _nst, nzero, _flags = struct.unpack("<QIIII", head)
                words = (count + 31) // 32
                maps = f.read(4 * words * (2 if nzero else 1))
                for m in range(2 if nzero else 1):
                    for j, byte in enumerate(maps[4 * words * m:4 * words * (m + 1)]):
                        for b in BITS[byte]:
                            have.add(pfn + 8 * j + b)
            if typ == 7:
                break
            off += (hdr.size + length + 7) & ~7
    return have


def covers(base, other):
    need, have = pfns(base), pfns(other)
    missing = sorted(need - have)
    if missing:
        print(f"{len(missing)} of {len(need)} pages missing (first: {[hex(p) for p in missing[:5]]})")
        return 1
    print(f"all {len(need)} pages there ({len(have)} in all)")
    return 0


def subset(base, other):
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tools"))
    import subset as sub
    nm, need = sub.pages(base)
    hm, have = sub.pages(other)
    missing = [p for p in need if p not in have]
    differ = [p for p in need if p in have and nm[need[p]:need[p] + PAGE] != hm[have[p]:have[p] + PAGE]]
    nm.close()
    hm.close()
    if missing or differ:
        return 1, (f"{len(missing)} of {len(need)} pages missing "
                   f"(first: {[hex(p) for p in sorted(missing)[:5]]}), {len(differ)} differ")
    return 0, f"all {len(need)} pages there, identical ({len(have)} in all)"


def serve():
    for line in sys.stdin:
        words = line.split()
        try:
            if len(words) == 3 and words[0] == "subset":
                rc, what = subset(words[1], words[2])
            elif len(words) == 3 and words[0] == "covers":
                need, have = pfns(words[1]), pfns(words[2])
                missing = sorted(need - have)
                rc = 1 if missing else 0
                what = (f"{len(missing)} of {len(need)} pages missing "
                        f"(first: {[hex(p) for p in missing[:5]]})" if missing else
                        f"all {len(need)} pages there ({len(have)} in all)")
            else:
                rc, what = 1, f"bad request: {line.strip()}"
        except (OSError, ValueError, SystemExit) as e:
            rc, what = 1, f"{words}: {e}"
        print(("fail " if rc else "ok ") + what, flush=True)


def main():
    if len(sys.argv) == 2 and sys.argv[1] == "serve":
        return serve()
    if len(sys.argv) == 4 and sys.argv[1] == "covers":
        sys.exit(covers(sys.argv[2], sys.argv[3]))
    if len(sys.argv) != 3:
        raise SystemExit(__doc__)
    keys = table(sys.argv[1])
    f = open(sys.argv[2], "rb")
    m = mmap.mmap(f.fileno(), 0, prot=mmap.PROT_READ)
    machine, lo, hi = note(m)
    text = bytes(m[lo:hi])
    print(f"machine {machine}")
    for name, policy, other in keys:
        k = name.encode() + b"="
        at = 0 if text.startswith(k) else text.find(b"\n" + k)
        if at < 0:
            continue
        if at or not text.startswith(k):
            at += 1
        print(f"{lo + at} {policy} {name} {other}")


if __name__ == "__main__":
    main()
