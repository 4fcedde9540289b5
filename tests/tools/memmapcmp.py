#!/usr/bin/python3
"""memmapcmp: check kdumpinit's exclusion of the memory map's pages against
makedumpfile's filter and its -e, on one raw x86_64 vmcore and one level.

usage: memmapcmp.py RAW KEPT MD MDE OURS [--list N]

  RAW   the raw vmcore (a byte copy of /proc/vmcore)
  KEPT  makedumpfile -d (LEVEL without bit 1), kdump-compressed: the pages
        the struct-page rules keep, zero or not
  MD    makedumpfile -d LEVEL: the reference filter
  MDE   makedumpfile -d LEVEL -e: the reference exclusion
  OURS  kdumpinit save --format elf of a capture at LEVEL with the exclusion

The memory map is found here independently of kdumpinit: mem_section's
present sections, their struct pages at section_mem_map + pfn * SIZE(page),
each virtual page translated through the old kernel's page tables
(tests/debugger/pfnmap.py). A page of struct pages is *needed* when one
of the pfns it describes is in KEPT or is not in the vmcore at all.

Checks (each failure listed, then `result: OK` or `result: FAIL`):
  rule   OURS holds exactly MD's non-zero pages, less the memory-map pages
         that are not needed;
  -e     every page where MDE and OURS differ is a memory-map page, and
         either one MDE keeps although it is not needed (a makedumpfile
         quirk: it only drops runs of at least 128 free pfns inside one
         physically contiguous piece of the map, cut at 32768-pfn blocks)
         or one MDE drops because the pfns it describes are zero pages
         (kdumpinit keeps the struct pages of the pages it records as zero:
         they are in the dump).
Prints the counts of each kind. Exit 0 when all holds, 1 otherwise.
"""
import argparse
import os
import struct
import sys

sys.dont_write_bytecode = True
here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, here)
sys.path.insert(0, os.path.join(here, "..", "debugger"))
from mdcmp import KdumpDump, open_dump  # noqa: E402
from pfnmap import Vmcore  # noqa: E402

PAGE = 4096
ZERO = bytes(PAGE)


def backing(vc):
    """{backing pfn: [virtual page]}, the coded map and SIZE(page)."""
    root, ssize = vc.sym("mem_section"), vc.num("SIZE(mem_section)")
    moff = vc.num("OFFSET(mem_section.section_mem_map)", 0)
    spage = vc.num("SIZE(page)")
    per = 1 << (vc.num("NUMBER(SECTION_SIZE_BITS)") - 12)
    out, cmap = {}, None
    for i in range(vc.num("LENGTH(mem_section)")):
        p = vc.u64(root + i * 8)
        if not p:
            continue
        for j in range(PAGE // ssize):
            smm = vc.u64(p + j * ssize + moff)
            if not smm or not smm & 1:
                continue
            nr = i * (PAGE // ssize) + j
            m = smm & ~0x1f
            if cmap is None:
                cmap = m
            elif m != cmap:
                raise SystemExit("memmapcmp: the memory map is not one virtual array")
            va, end = m + nr * per * spage, m + (nr + 1) * per * spage
            for vp in range(va // PAGE, -(-end // PAGE)):
                pa = vc.vtop(vp * PAGE)
                if pa is not None:
                    out.setdefault(pa // PAGE, []).append(vp)
    return out, cmap, spage


def present(vc):
    r = sorted((pa // PAGE, -(-(pa + fsz) // PAGE)) for _o, _va, pa, fsz in vc.loads if fsz)
    out = []
    for lo, hi in r:
        if out and lo <= out[-1][1]:
            out[-1][1] = max(out[-1][1], hi)
        else:
            out.append([lo, hi])
    return out


def held_nonzero(path):
    """Pages held and not all zero (zero pages are the same to a reader
    held or not, and makedumpfile keeps their bits in its bitmap)."""
    h = open_dump(path).held()
    out = set()
    for lo, hi, buf, off in zip(h.lo, h.hi, h.buf, h.off):
        for p in range(lo // PAGE, -(-hi // PAGE)):
            a, b = max(lo, p * PAGE), min(hi, (p + 1) * PAGE)
            if buf[off + a - lo:off + b - lo].count(0) != b - a:
                out.add(p)
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("raw")
    ap.add_argument("kept")
    ap.add_argument("md")
    ap.add_argument("mde")
    ap.add_argument("ours")
    ap.add_argument("--list", type=int, default=10)
    a = ap.parse_args()

    vc = Vmcore(a.raw)
    back, cmap, spage = backing(vc)
    ranges = present(vc)
    import bisect
    starts = [r[0] for r in ranges]

    def is_present(p):
        i = bisect.bisect_right(starts, p) - 1
        return i >= 0 and p < ranges[i][1]

    kept = set(KdumpDump(a.kept).dumpable())
    md = held_nonzero(a.md)
    mde = held_nonzero(a.mde)
    ours = held_nonzero(a.ours)

    def described(vp):
        lo = max(0, (vp * PAGE - cmap)) // spage
        hi = (vp * PAGE + PAGE - 1 - cmap) // spage
        return range(lo, hi + 1)

    def needed(b, keep):
        return any(p in keep or not is_present(p) for vp in back[b] for p in described(vp))

    fails, lists = 0, {}

    def note(kind, p):
        lists.setdefault(kind, []).append(p)

    unneeded = {b for b in back if not needed(b, kept)}
    expect = md - unneeded
    for p in sorted(expect - ours):
        note("rule: kept by the rule, not in OURS", p)
    for p in sorted(ours - expect):
        note("rule: in OURS, not kept by the rule", p)
    for p in sorted(mde - ours):
        if p in back and p in unneeded:
            note("-e quirk: makedumpfile -e keeps a page that describes only pages left out", p)
        else:
            note("-e FAIL: makedumpfile -e keeps it, kdumpinit does not", p)
    for p in sorted(ours - mde):
        if p in back and not needed(p, md):
            note("-e zero: makedumpfile -e drops it, its pfns being zero pages", p)
        else:
            note("-e FAIL: kdumpinit keeps it, makedumpfile -e does not", p)

    nb = sum(1 for b in back if is_present(b) and b in md)
    print(f"memory map: {len(back)} pages ({nb} kept by the level), "
          f"{len(unneeded & md)} describe only pages left out")
    print(f"kept non-zero: OURS {len(ours)}, makedumpfile -e {len(mde)}, makedumpfile {len(md)}")
    for kind, ps in sorted(lists.items()):
        bad = "FAIL" in kind or kind.startswith("rule")
        fails += bad * len(ps)
        print(f"{kind}: {len(ps)}")
        for p in ps[:a.list]:
            print(f"  pfn {p:#x}")
    print("result:", "FAIL" if fails else "OK")
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
