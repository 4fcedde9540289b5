#!/usr/bin/python3
"""pagecheck: check a saved ELF vmcore of a possibly incomplete dump
against the raw vmcore it came from, page by page.

usage: pagecheck.py REFERENCE SAVED [--require all|prefix|some]
                    [--min N] [--max N] [--less] [--early DUMP]

tests/tools/vmcmp.py demands that every non-zero page be there; a dump
cut short (device full, truncated vmcore, damaged chunk) holds only some.
This checks what such a save must still get right:

* SAVED is a well-formed ELF64 ET_CORE: every program header's data lies
  inside the file, p_filesz <= p_memsz, the machine and the PT_NOTE bytes
  are the reference's;
* its PT_LOADs map the same virtual ranges onto the same physical ones as
  the reference's (none missing, none invented);
* every byte SAVED holds in a PT_LOAD's file part equals the reference's
  byte at that physical address, and lies where the reference has data;
* a page is held whole or not at all, the same way in every mapping.

REFERENCE may itself be truncated (a vmcore cut short): bytes past its end
are taken as not available, not as zero.

What must be present (non-zero reference pages, by pfn):
  --require all     every one (default)
  --require prefix  those present are exactly the first P in pfn order
                    (a dump stops at a point and keeps what came before);
                    with --early DUMP, the pages DUMP's EARLY chunks hold
                    (the debugger's pages, written before the rest:
                    docs/FORMAT.md) are left out of that order, and must
                    all be present
  --require some    no rule beyond the byte checks
  --min N / --max N bounds on P;  --less: P < the number of non-zero pages
Exit 0 when all holds, 1 otherwise.
"""
import argparse
import os
import struct
import sys

PAGE = 4096
ZERO = bytes(PAGE)
PT_LOAD, PT_NOTE = 1, 4
ET_CORE = 4
PN_XNUM = 0xFFFF
EHDR = struct.Struct("<16sHHIQQQIHHHHHH")
PHDR = struct.Struct("<IIQQQQQQ")
MAX_LISTED = 10


class Bad(Exception):
    pass


class Load:
    __slots__ = ("index", "offset", "vaddr", "paddr", "filesz", "memsz", "avail")

    def __init__(self, index, offset, vaddr, paddr, filesz, memsz, avail):
        self.index, self.offset, self.vaddr, self.paddr = index, offset, vaddr, paddr
        self.filesz, self.memsz, self.avail = filesz, memsz, avail

    @property
    def delta(self):
        return (self.vaddr - self.paddr) & ((1 << 64) - 1)


class Elf:
    def __init__(self, path, strict):
        with open(path, "rb") as f:
            self.data = f.read()
        self.path, d = path, self.data
        if len(d) < EHDR.size:
            raise Bad(f"{path}: {len(d)} bytes, no ELF header")
        (ident, etype, self.machine, _v, _e, phoff, shoff, _fl, _eh, phentsize, phnum,
         _she, _shn, _shs) = EHDR.unpack_from(d, 0)
        if ident[:4] != b"\x7fELF" or ident[4] != 2 or ident[5] != 1:
            raise Bad(f"{path}: not ELF64 little-endian")
        if etype != ET_CORE:
            raise Bad(f"{path}: e_type {etype}, not ET_CORE")
        if phentsize != PHDR.size:
            raise Bad(f"{path}: e_phentsize {phentsize}")
        if phnum == PN_XNUM:
            if not shoff or shoff + 64 > len(d):
                raise Bad(f"{path}: PN_XNUM without section header 0")
            phnum = struct.unpack_from("<I", d, shoff + 44)[0]
        if phoff + phnum * PHDR.size > len(d):
            raise Bad(f"{path}: program headers past the end of the file")
        self.loads, notes = [], []
        for i in range(phnum):
            (pt, _f, off, vaddr, paddr, filesz, memsz, _a) = PHDR.unpack_from(d, phoff + i * PHDR.size)
            if pt not in (PT_LOAD, PT_NOTE):
                continue
            if strict and off + filesz > len(d):
                raise Bad(f"{path}: phdr {i} data [{off:#x}+{filesz:#x}] past the end ({len(d):#x})")
            if pt == PT_NOTE:
                notes.append(d[off:off + filesz])
                continue
            if filesz > memsz:
                raise Bad(f"{path}: phdr {i}: p_filesz {filesz:#x} > p_memsz {memsz:#x}")
            avail = max(0, min(filesz, len(d) - off))
            self.loads.append(Load(i, off, vaddr, paddr, filesz, memsz, avail))
        self.notes = b"".join(notes)


def pieces(lo, hi):
    """(pfn, start-in-page, end-in-page) for [lo, hi)."""
    a = lo
    while a < hi:
        pfn = a // PAGE
        e = min(hi, (pfn + 1) * PAGE)
        yield pfn, a - pfn * PAGE, e - pfn * PAGE
        a = e


def add_iv(ivs, s, e):
    ivs.append((s, e))
    ivs.sort()
    out = []
    for a, b in ivs:
        if out and a <= out[-1][1]:
            out[-1] = (out[-1][0], max(out[-1][1], b))
        else:
            out.append((a, b))
    ivs[:] = out


def clip(ivs, s, e):
    return [(max(a, s), min(b, e)) for a, b in ivs if min(b, e) > max(a, s)]


def within(ivs, s, e):
    return any(a <= s and e <= b for a, b in ivs)


def merged(spans):
    out = []
    for lo, hi in sorted(spans):
        if out and lo <= out[-1][1]:
            out[-1][1] = max(out[-1][1], hi)
        else:
            out.append([lo, hi])
    return out


def inside(spans, lo, hi):
    return any(a <= lo and hi <= b for a, b in spans)


def check(ref, sav, args):
    problems = []
    if ref.machine != sav.machine:
        problems.append(f"e_machine {sav.machine}, reference {ref.machine}")
    if ref.notes != sav.notes:
        problems.append(f"PT_NOTE differs ({len(sav.notes)} bytes, reference {len(ref.notes)})")

    # Mapping layout: same (vaddr - paddr) ranges both ways.
    def by_delta(e):
        g = {}
        for s in e.loads:
            g.setdefault(s.delta, []).append((s.paddr, s.paddr + s.memsz))
        return {k: merged(v) for k, v in g.items()}
    rmap, smap = by_delta(ref), by_delta(sav)
    for s in ref.loads:
        if s.memsz and not inside(smap.get(s.delta, []), s.paddr, s.paddr + s.memsz):
            problems.append(f"reference phdr {s.index} (paddr {s.paddr:#x}, memsz {s.memsz:#x}) "
                            f"not mapped alike in saved")
    for s in sav.loads:
        if s.memsz and not inside(rmap.get(s.delta, []), s.paddr, s.paddr + s.memsz):
            problems.append(f"saved phdr {s.index} (paddr {s.paddr:#x}, memsz {s.memsz:#x}) "
                            f"maps memory the reference does not")

    # Reference bytes by pfn: page buffer and the intervals it has data for.
    rdata, ravail = {}, {}
    for s in ref.loads:
        for pfn, a, b in pieces(s.paddr, s.paddr + s.avail):
            buf = rdata.get(pfn)
            if buf is None:
                buf = rdata[pfn] = bytearray(PAGE)
                ravail[pfn] = []
            src = s.offset + pfn * PAGE + a - s.paddr
            buf[a:b] = ref.data[src:src + b - a]
            add_iv(ravail[pfn], a, b)
    nonzero = sorted(p for p, buf in rdata.items() if buf != ZERO)
    nzset = set(nonzero)

    # What every saved mapping holds of each pfn: "in" or "out".
    state = {}
    bad_bytes = 0
    for s in sav.loads:
        fend = s.paddr + s.filesz
        for pfn, a, b in pieces(s.paddr, s.paddr + s.memsz):
            need = clip(ravail.get(pfn, []), a, b)
            base = pfn * PAGE
            fa, fb = max(a, s.paddr - base), min(b, fend - base)
            have = [(fa, fb)] if fb > fa else []
            # File bytes must be reference bytes.
            for x, y in have:
                if not within(ravail.get(pfn, []), x, y):
                    problems.append(f"saved phdr {s.index} holds paddr {base + x:#x}..{base + y:#x}, "
                                    f"where the reference has no data")
                    continue
                off = s.offset + base + x - s.paddr
                if sav.data[off:off + y - x] != rdata[pfn][x:y]:
                    bad_bytes += 1
                    if bad_bytes <= MAX_LISTED:
                        problems.append(f"pfn {pfn:#x}: saved bytes differ in phdr {s.index}")
            if not need:
                continue
            full = all(within(have, x, y) for x, y in need)
            none = not any(min(y, fb) > max(x, fa) for x, y in need)
            if not full and not none:
                problems.append(f"pfn {pfn:#x}: only part of the page is in phdr {s.index}")
                continue
            st = "in" if full else "out"
            prev = state.setdefault(pfn, st)
            if prev != st:
                problems.append(f"pfn {pfn:#x}: held by one mapping and not by another")
    if bad_bytes > MAX_LISTED:
        problems.append(f"... {bad_bytes - MAX_LISTED} more pages with wrong bytes")
    unmapped = [p for p in nonzero if p not in state]
    if unmapped:
        problems.append(f"{len(unmapped)} non-zero reference pages not mapped at all "
                        f"(first pfn {unmapped[0]:#x})")

    present = [p for p in nonzero if state.get(p) == "in"]
    n, total = len(present), len(nonzero)
    early = early_pfns(args.early) if args.early else set()
    if early:
        lost = [p for p in nonzero if p in early and state.get(p) != "in"]
        if lost:
            problems.append(f"{len(lost)} pages of the EARLY pass missing (first pfn {lost[0]:#x})")
        order = [p for p in nonzero if p not in early]
        rest = [p for p in order if state.get(p) == "in"]
        if args.require == "prefix" and rest != order[:len(rest)]:
            gap = next(p for p in order[:len(rest)] if state.get(p) != "in")
            problems.append(f"present pages after the EARLY pass are not a prefix: pfn {gap:#x} "
                            f"missing, pfn {rest[-1]:#x} present")
    if args.require == "all" and n != total:
        missing = [p for p in nonzero if state.get(p) != "in"]
        problems.append(f"{total - n} non-zero pages missing (first pfn {missing[0]:#x})")
    if args.require == "prefix" and not early and present != nonzero[:n]:
        gap = next(p for p in nonzero[:n] if state.get(p) != "in")
        problems.append(f"present pages are not a prefix: pfn {gap:#x} missing, "
                        f"pfn {present[-1]:#x} present")
    if args.min is not None and n < args.min:
        problems.append(f"{n} non-zero pages present, want at least {args.min}")
    if args.max is not None and n > args.max:
        problems.append(f"{n} non-zero pages present, want at most {args.max}")
    if args.less and n >= total:
        problems.append(f"all {total} non-zero pages present, want fewer (an incomplete dump)")
    return problems, n, total


def early_pfns(path):
    """The pfns a kdumpinit dump's EARLY PAGES chunks store or record as
    zero (flags bit 2; docs/FORMAT.md), following the chunk stream from
    data_offset as tests/tools/chunks.py does."""
    with open(path, "rb") as f:
        data = f.read()
    out = set()
    if data[:8] != b"KDUMPINT":
        return out
    off = struct.unpack_from("<Q", data, 104)[0]
    while off + 48 <= len(data):
        magic, typ, _hs, length = struct.unpack_from("<4sHHI", data, off)
        if magic != b"KDCK" or off + 48 + length > len(data):
            break
        if typ == 5 and length >= 24:
            pfn, count, _ns, nzero, flags = struct.unpack_from("<QIIII", data, off + 48)
            if flags & 4:
                bl = (count + 31) // 32 * 4
                bm = data[off + 72:off + 72 + bl]
                zb = data[off + 72 + bl:off + 72 + 2 * bl] if nzero else bytes(bl)
                for i in range(count):
                    if (bm[i // 8] | zb[i // 8]) >> (i % 8) & 1:
                        out.add(pfn + i)
        if typ == 7:
            break
        off += (48 + length + 7) & ~7
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("reference")
    ap.add_argument("saved")
    ap.add_argument("--require", choices=("all", "prefix", "some"), default="all")
    ap.add_argument("--min", type=int)
    ap.add_argument("--max", type=int)
    ap.add_argument("--less", action="store_true")
    ap.add_argument("--early")
    args = ap.parse_args()
    try:
        ref = Elf(args.reference, strict=False)
        sav = Elf(args.saved, strict=True)
    except (OSError, Bad, struct.error) as e:
        print(f"pagecheck: {e}", file=sys.stderr)
        print("result: FAIL")
        return 1
    problems, n, total = check(ref, sav, args)
    print(f"non-zero pages: {total}, present: {n}")
    for p in problems[:MAX_LISTED + 2]:
        print(f"  {p}")
    if len(problems) > MAX_LISTED + 2:
        print(f"  ... {len(problems) - MAX_LISTED - 2} more")
    print("result: " + ("OK" if not problems else "FAIL"))
    return 0 if not problems else 1


if __name__ == "__main__":
    sys.dont_write_bytecode = True
    sys.exit(main())
