#!/usr/bin/python3
"""mdcmp: check that two filtered vmcores keep the same non-zero pages.

usage: mdcmp.py A B [--list N]

A and B are dumps of the same /proc/vmcore written by page-filtering
tools: ELF vmcores (`kdumpinit save --format elf`, `makedumpfile -E`) or
kdump-compressed files (`makedumpfile -d LEVEL` with no compression, or
zlib -c; not LZO, snappy, zstd or the flattened -F format). The format is
recognised by its signature. Pages are compared by physical address.

ELF: excluded runs are PT_LOADs with p_filesz < p_memsz, and the two
tools may split the PT_LOADs differently, so a file's pages are the union
over its PT_LOADs. A page is *held* when some byte of it lies in the
p_filesz part of a PT_LOAD (bytes past p_filesz read as zero).
kdump-compressed: a page is held when its bit is set in the second
(dumpable) bitmap; its bytes come from its page descriptor.

A page is *kept-nonzero* when it is held and not all zero. The check: A and
B keep the same set of non-zero pages, with identical bytes. Zero pages,
held or not, do not count: dropping a zero page and keeping it are the same
to a reader.

Note that `makedumpfile -E` is not an exact reference: it writes excluded
runs shorter than 256 pages into the file anyway (PFN_EXCLUDED), so its
ELF output holds pages its bitmap excluded. Its kdump-compressed output
(the bitmap) is exact.

The kernel-text PT_LOAD maps the same physical memory a second time. A
reader may use either mapping, so where two PT_LOADs of one ELF file map a
page (by p_memsz), both must read the same bytes (zero-filled past
p_filesz); any page where they disagree is reported and fails the check.

Prints the counts, up to --list (default 10) physical addresses of each
kind of difference, then `result: OK` or `result: FAIL`. Exit 0 when the
files agree, 1 otherwise (also for unreadable input).
"""
import argparse
import bisect
import mmap
import os
import struct
import sys
import zlib

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from vmcmp import Core, ElfError, PAGE, ZERO  # noqa: E402

BLOCK = 256 * PAGE
ZERO_BLOCK = bytes(BLOCK)
KDUMP_SIGNATURE = b"KDUMP   "
# disk_dump_header (x86_64): header_version at 8; after the 6 x 65-byte
# utsname at 12 and a 16-byte timeval at 408: status, block_size,
# sub_hdr_size, bitmap_blocks, max_mapnr (32-bit) at 424.
KDUMP_HDR = struct.Struct("<8si390x6x16xIiiII")
UTS_MACHINE = 12 + 4 * 65  # utsname.machine, 65 bytes
# kdump_sub_header: phys_base, dump_level, split, start_pfn, end_pfn,
# offset/size of vmcoreinfo, note, eraseinfo, then (version 6) 64-bit
# start_pfn, end_pfn, max_mapnr.
KDUMP_SUB = struct.Struct("<QiiQQqQqQqQQQQ")
PAGE_DESC = struct.Struct("<qIIQ")  # offset, size, flags, page_flags
DH_ZLIB, DH_LZO, DH_SNAPPY, DH_INCOMPLETE, DH_ZSTD = 0x1, 0x2, 0x4, 0x8, 0x20


class Held:
    """A file's held bytes by physical address: disjoint sorted intervals
    [lo, hi) whose bytes are buf[off:off + hi - lo]."""

    def __init__(self, intervals):
        self.lo = [iv[0] for iv in intervals]
        self.hi = [iv[1] for iv in intervals]
        self.buf = [iv[2] for iv in intervals]
        self.off = [iv[3] for iv in intervals]

    def at(self, p):
        """Index of the interval holding byte p, or None."""
        i = bisect.bisect_right(self.lo, p) - 1
        return i if i >= 0 and p < self.hi[i] else None

    def read(self, i, p, n):
        off = self.off[i] + p - self.lo[i]
        return self.buf[i][off:off + n]

    def page(self, pfn):
        """(held, bytes) of one page, composed from every interval."""
        lo, hi = pfn * PAGE, (pfn + 1) * PAGE
        i = max(0, bisect.bisect_right(self.lo, lo) - 1)
        buf, held = bytearray(PAGE), False
        while i < len(self.lo) and self.lo[i] < hi:
            a, b = max(lo, self.lo[i]), min(hi, self.hi[i])
            if a < b:
                buf[a - lo:b - lo] = self.read(i, a, b - a)
                held = True
            i += 1
        return held, bytes(buf)

    def pfns_cut(self):
        """Page numbers that an interval boundary cuts."""
        out = set()
        for lo, hi in zip(self.lo, self.hi):
            if lo % PAGE:
                out.add(lo // PAGE)
            if hi % PAGE:
                out.add(hi // PAGE)
        return out


class ElfDump:
    kind = "ELF"

    def __init__(self, path):
        self.core = Core(path)
        self.machine = self.core.machine
        self.notes = self.core.notes
        self.what = f"ELF, {len(self.core.loads)} PT_LOADs"

    def held(self):
        """Where file parts overlap (the kernel-text alias) the first one by
        address wins: alias_check() makes sure they agree."""
        parts = sorted(((s.paddr, s.paddr + s.filesz, s) for s in self.core.loads if s.filesz),
                       key=lambda p: (p[0], -p[1]))
        out, end = [], 0
        for lo, hi, seg in parts:
            lo = max(lo, end)
            if lo < hi:
                out.append((lo, hi, self.core.mm, seg.offset + lo - seg.paddr))
                end = hi
        return Held(out)

    def alias_check(self, rep, kind):
        """Where two PT_LOADs map the same physical bytes (by p_memsz), both
        must read alike, zero-filled past p_filesz."""
        core = self.core
        loads = sorted((s for s in core.loads if s.memsz), key=lambda s: s.paddr)
        active, bad = [], set()
        for seg in loads:
            active = [t for t in active if t.paddr + t.memsz > seg.paddr]
            for t in active:
                p, hi = seg.paddr, min(seg.paddr + seg.memsz, t.paddr + t.memsz)
                while p < hi:
                    n = min(BLOCK, hi - p)
                    x, y = core.read(seg, p, n), core.read(t, p, n)
                    if x != y:
                        for o in range(0, n, PAGE):
                            if x[o:o + PAGE] != y[o:o + PAGE]:
                                bad.add((p + o) // PAGE)
                    p += n
            active.append(seg)
        for pfn in sorted(bad):
            rep.add(kind, pfn * PAGE)


class KdumpDump:
    """A kdump-compressed file (makedumpfile's default format), x86_64."""
    kind = "kdump-compressed"
    machine = 62  # EM_X86_64: the header layout above is x86_64's

    def __init__(self, path):
        self.path = path
        with open(path, "rb") as f:
            self.size = os.fstat(f.fileno()).st_size
            self.mm = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)
        if self.size < KDUMP_HDR.size:
            raise ElfError(f"{path}: too short for a kdump header")
        (_sig, self.version, self.status, bs, sub_blocks, bitmap_blocks,
         max32) = KDUMP_HDR.unpack_from(self.mm, 0)
        machine = self.mm[UTS_MACHINE:UTS_MACHINE + 65].split(b"\0")[0]
        if machine != b"x86_64":
            raise ElfError(f"{path}: utsname machine {machine!r}, only x86_64 is supported")
        if bs != PAGE:
            raise ElfError(f"{path}: block size {bs}, only {PAGE} is supported")
        if self.status & DH_INCOMPLETE:
            raise ElfError(f"{path}: the dump is marked incomplete")
        if bs + KDUMP_SUB.size > self.size:
            raise ElfError(f"{path}: too short for a kdump sub header")
        sub = KDUMP_SUB.unpack_from(self.mm, bs)
        self.dump_level, split = sub[1], sub[2]
        if split:
            raise ElfError(f"{path}: a --split part, not a whole dump")
        note_off, note_size = sub[7], sub[8]
        self.max_mapnr = sub[13] if self.version >= 6 else max32
        self.notes = (self.mm[note_off:note_off + note_size]
                      if self.version >= 4 and note_size else b"")
        bitmap_off = (1 + sub_blocks) * bs
        half = bitmap_blocks * bs // 2
        self.bitmap2_off = bitmap_off + half
        self.bitmap_len = half
        self.desc_off = bitmap_off + bitmap_blocks * bs
        if self.desc_off > self.size:
            raise ElfError(f"{path}: bitmaps past end of file")
        self.ndumped = sum(bin(b).count("1") for b in self.bitmap2())
        self.what = (f"kdump-compressed v{self.version}, dump level {self.dump_level}, "
                     f"{self.ndumped} pages dumpable")

    def bitmap2(self):
        n = min(self.bitmap_len, -(-self.max_mapnr // 8))
        return self.mm[self.bitmap2_off:self.bitmap2_off + n]

    def dumpable(self):
        """Dumpable pfns, in order."""
        for i, b in enumerate(self.bitmap2()):
            if b:
                for bit in range(8):
                    if b >> bit & 1 and i * 8 + bit < self.max_mapnr:
                        yield i * 8 + bit

    def held(self):
        """Raw pages at consecutive offsets become one interval; zlib pages
        are decompressed into memory. Zero pages are left out: held or not
        makes no difference to the verdict, and the shared zero page that
        makedumpfile points every excluded zero page at would otherwise
        cost an interval each."""
        need = self.desc_off + self.ndumped * PAGE_DESC.size
        if need > self.size:
            raise ElfError(f"{self.path}: page descriptors past end of file")
        out = []
        cur = None  # [lo, hi, buf, off] being extended
        zero_offs = set()
        top = 0     # highest data offset seen: a lower one is a shared page
        for k, pfn in enumerate(self.dumpable()):
            off, size, flags, _pf = PAGE_DESC.unpack_from(self.mm, self.desc_off + k * PAGE_DESC.size)
            p = pfn * PAGE
            if off + size > self.size or off < 0:
                raise ElfError(f"{self.path}: pfn {pfn:#x}: page data past end of file")
            if flags == 0 and size == PAGE:
                if off < top or off in zero_offs:
                    if off in zero_offs:
                        continue
                    if self.mm[off:off + PAGE] == ZERO:
                        zero_offs.add(off)
                        continue
                top = max(top, off)
                if cur and cur[2] is self.mm and cur[1] == p and cur[3] + (p - cur[0]) == off:
                    cur[1] += PAGE
                    continue
                cur = [p, p + PAGE, self.mm, off]
                out.append(cur)
                continue
            if flags & ~DH_ZLIB:
                raise ElfError(f"{self.path}: pfn {pfn:#x}: page flags {flags:#x} "
                               "(only raw and zlib pages are supported)")
            top = max(top, off)
            data = zlib.decompress(self.mm[off:off + size])
            if len(data) != PAGE:
                raise ElfError(f"{self.path}: pfn {pfn:#x}: zlib page of {len(data)} bytes")
            if cur and isinstance(cur[2], bytearray) and cur[1] == p:
                cur[2] += data
                cur[1] += PAGE
            else:
                cur = [p, p + PAGE, bytearray(data), 0]
                out.append(cur)
        return Held([tuple(c) for c in out])

    def alias_check(self, rep, kind):
        """A pfn-indexed format has no aliases."""


def open_dump(path):
    with open(path, "rb") as f:
        head = f.read(8)
    if head == KDUMP_SIGNATURE:
        return KdumpDump(path)
    if head == b"makedump":
        raise ElfError(f"{path}: flattened makedumpfile format (-F): "
                       "rearrange it with makedumpfile -R first")
    return ElfDump(path)


class Report:
    def __init__(self, nlist):
        self.nlist = nlist
        self.kept = {"A": 0, "B": 0}
        self.lists = {"only-in-A": [], "only-in-B": [], "byte mismatches": [],
                      "A alias disagreements": [], "B alias disagreements": []}
        self.counts = dict.fromkeys(self.lists, 0)

    def add(self, kind, paddr):
        self.counts[kind] += 1
        if len(self.lists[kind]) < self.nlist:
            self.lists[kind].append(paddr)

    @property
    def ok(self):
        return not any(self.counts.values())


def page_verdict(rep, p, a, b):
    """a, b: page bytes or None (not held)."""
    na = a is not None and a != ZERO
    nb = b is not None and b != ZERO
    rep.kept["A"] += na
    rep.kept["B"] += nb
    if na and nb:
        if a != b:
            rep.add("byte mismatches", p)
    elif na:
        rep.add("only-in-A", p)
    elif nb:
        rep.add("only-in-B", p)


def run_pages(rep, ha, ia, hb, ib, lo, hi):
    """Whole pages [lo, hi) held by interval ia of A (or None) and ib of B
    (or None) throughout."""
    while lo < hi:
        n = min(BLOCK, hi - lo)
        ra = ha.read(ia, lo, n) if ia is not None else None
        rb = hb.read(ib, lo, n) if ib is not None else None
        z = ZERO_BLOCK[:n]
        if (ra is None or ra == z) and (rb is None or rb == z):
            lo += n
            continue
        if ra is not None and rb is not None and ra == rb:
            nz = sum(1 for o in range(0, n, PAGE) if ra[o:o + PAGE] != ZERO)
            rep.kept["A"] += nz
            rep.kept["B"] += nz
        else:
            for o in range(0, n, PAGE):
                page_verdict(rep, lo + o,
                             None if ra is None else ra[o:o + PAGE],
                             None if rb is None else rb[o:o + PAGE])
        lo += n


def compare_held(rep, ha, hb):
    slow = ha.pfns_cut() | hb.pfns_cut()
    edges = sorted(set(ha.lo) | set(ha.hi) | set(hb.lo) | set(hb.hi))
    for lo, hi in zip(edges, edges[1:]):
        ia, ib = ha.at(lo), hb.at(lo)
        if ia is None and ib is None:
            continue
        plo = -(-lo // PAGE) * PAGE
        phi = hi // PAGE * PAGE
        # Pages cut by an interval boundary are settled one by one below.
        while plo < phi and plo // PAGE in slow:
            plo += PAGE
        while phi > plo and (phi // PAGE - 1) in slow:
            phi -= PAGE
        if plo < phi:
            run_pages(rep, ha, ia, hb, ib, plo, phi)
    for pfn in sorted(slow):
        held_a, a = ha.page(pfn)
        held_b, b = hb.page(pfn)
        page_verdict(rep, pfn * PAGE, a if held_a else None, b if held_b else None)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("a", metavar="A")
    ap.add_argument("b", metavar="B")
    ap.add_argument("--list", type=int, default=10, metavar="N",
                    help="addresses listed per kind of difference (default 10)")
    args = ap.parse_args()
    rep = Report(args.list)
    try:
        a, b = open_dump(args.a), open_dump(args.b)
        if a.machine != b.machine:
            raise ElfError(f"e_machine differs: {a.machine} in A, {b.machine} in B")
        a.alias_check(rep, "A alias disagreements")
        b.alias_check(rep, "B alias disagreements")
        compare_held(rep, a.held(), b.held())
    except (OSError, ElfError, struct.error, ValueError, zlib.error) as e:
        print(f"mdcmp: {e}", file=sys.stderr)
        return 1

    print(f"A: {args.a}: {a.what}")
    print(f"B: {args.b}: {b.what}")
    print(f"notes: {'identical' if a.notes == b.notes else 'differ'} "
          f"({len(a.notes)} and {len(b.notes)} bytes; not part of the verdict)")
    print(f"A kept non-zero: {rep.kept['A']}")
    print(f"B kept non-zero: {rep.kept['B']}")
    for kind, n in rep.counts.items():
        print(f"{kind}: {n}")
        for p in rep.lists[kind]:
            print(f"  paddr {p:#014x}")
        if n > len(rep.lists[kind]):
            print(f"  ... {n - len(rep.lists[kind])} more")
    print("result: " + ("OK" if rep.ok else "FAIL"))
    return 0 if rep.ok else 1


if __name__ == "__main__":
    sys.exit(main())
