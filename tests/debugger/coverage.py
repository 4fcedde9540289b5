#!/usr/bin/python3
"""coverage: the pfns a debugger read from a raw vmcore against dbgset's tiers.

usage: coverage.py RAW FACTS NM KDUMP TIERS NAME=PFNS...

RAW    the raw ELF vmcore the readers read (x86_64)
FACTS  `name value` lines from the vmlinux (pfns-read.sh's facts file)
NM     `nm -n VMLINUX` (addresses before KASLR)
KDUMP  RAW captured at level 31 and saved with --format kdump: its second
       bitmap says which pfns the dump keeps (zero pages included)
TIERS  dbgset's "TIER PFN" lines
NAME=PFNS  a reader's pfns, one a line (pfnmap.py pfns)

Prints per reader an ok or FAIL line (ok: tier 0 holds every kept pfn the
reader read), a `counts` line and a `class` line per uncovered pfn (tier 0
misses it), every one of them; coverage.sh shows up to 20 in FAIL. With
the strace log next to PFNS (X.strace for X.pfns), each uncovered pfn
also gets the reads that start in it and the strings found there.
"""
import bisect
import collections
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from pfnmap import PAGE, START_KERNEL_MAP, Classifier, KdumpMap, Vmcore, file_reads, load_facts  # noqa: E402


def reads_in(vc, log, want):
    """pfn -> the physical addresses of the reads in STRACE log that start
    in it (the bytes a reader asked for), in order."""
    at = collections.defaultdict(list)

    def cover(off, n):
        pa = vc.off_to_phys(off)
        if pa is not None and pa >> 12 in want and pa not in at[pa >> 12]:
            at[pa >> 12].append(pa)

    for off, n in file_reads(log):
        cover(off, n)
    return at


def text_at(vc, pa):
    """A printable string at pa, if one starts there."""
    b = (vc.readp(pa, 40) or b"").split(b"\0")[0]
    if len(b) >= 2 and all(32 <= c < 127 for c in b):
        return '"' + b.decode() + '"'
    return None


class Symbols:
    """The vmlinux's symbols, moved by KERNELOFFSET."""

    def __init__(self, path, koff):
        rows = []
        for line in open(path):
            w = line.split()
            if len(w) != 3 or w[1] in "aAUwWvVN" or w[2].startswith(".L"):
                continue
            rows.append((int(w[0], 16) + koff, w[2]))
        rows.sort()
        self.addr = [a for a, _ in rows]
        self.name = [n for _, n in rows]

    def at(self, va):
        i = bisect.bisect_right(self.addr, va) - 1
        if i < 0:
            return "?"
        if va - self.addr[i] >= PAGE:
            return f"no symbol in the 4 KiB below ({self.name[i]}+{va - self.addr[i]:#x})"
        return f"{self.name[i]}+{va - self.addr[i]:#x}"

    def within(self, lo, hi, most=3):
        i = bisect.bisect_left(self.addr, lo)
        out = []
        while i < len(self.addr) and self.addr[i] < hi and len(out) < most + 1:
            out.append(self.name[i])
            i += 1
        if len(out) > most:
            out[most:] = ["..."]
        return out


def slab_cache(vc, cl, f, pfn):
    """The name of the kmem_cache a slab page belongs to."""
    sp = cl.vmemmap_base + pfn * vc.num("SIZE(page)")
    ch = vc.u64(sp + vc.num("OFFSET(page.compound_head)", 8))
    if ch is not None and ch & 1:
        sp = ch - 1
    cache = vc.u64(sp + f["slab.slab_cache"])
    name = vc.u64(cache + f["kmem_cache.name"]) if cache else None
    b = (vc.read(name, 32) or b"") if name else b""
    return b.split(b"\0")[0].decode(errors="replace") or "?"


def section(f, koff, va):
    spans = [("_text", "_etext", "text"), ("__start_rodata", "__end_rodata", "rodata"),
             ("_sdata", "_edata", "data"), ("__init_begin", "__init_end", "init (freed)"),
             ("__bss_start", "__bss_stop", "bss"), ("__bss_stop", "_end", "brk"),
             ("_edata", "__init_begin", "data after _edata")]
    for a, b, name in spans:
        if a in f and b in f and f[a] + koff <= va < f[b] + koff:
            return name
    return "alignment gap (freed)"


def main():
    a = sys.argv[1:]
    if len(a) < 6:
        sys.exit(__doc__.split("\n\n")[1])
    raw, factsfile, nmfile, kdump, tiersfile = a[:5]
    vc = Vmcore(raw)
    facts = load_facts(factsfile)
    syms = Symbols(nmfile, vc.koff)
    kept = set(KdumpMap(kdump).pfns)
    t0, t1 = set(), set()
    for line in open(tiersfile):
        w = line.split()
        if len(w) == 2:
            (t0 if w[0] == "0" else t1).add(int(w[1]))
    t1 -= t0
    print(f"tiers tier0 {len(t0)} {len(t0) * PAGE / 1e6:.1f} tier1 {len(t1)} {len(t1) * PAGE / 1e6:.1f} "
          f"kept {len(kept)} {len(kept) * PAGE / 1e6:.1f}")
    cl = None
    for spec in a[5:]:
        name, _, path = spec.partition("=")
        read = set(int(x) for x in open(path) if x.strip())
        k = read & kept
        c0 = k & t0
        c1 = (k & t1) - t0
        miss = sorted(k - t0 - t1)
        unc = sorted(k - t0)
        print(f"counts {name} read {len(read)} kept {len(k)} tier0 {len(c0)} tier1 {len(c1)} "
              f"neither {len(miss)} notkept {len(read) - len(k)}")
        if unc and cl is None:
            cl = Classifier(vc, facts)
            mods = {}
            for va, pa, size in cl.leaves:
                if 0xffffffffa0000000 <= va < 0xffffffffff000000 and not (START_KERNEL_MAP <= va < 0xffffffffc0000000):
                    for q in range(pa >> 12, (pa + size) >> 12):
                        mods[q] = va + (q - (pa >> 12)) * PAGE
        log = path[:-len(".pfns")] + ".strace" if path.endswith(".pfns") else ""
        at = reads_in(vc, log, set(unc)) if unc and os.path.exists(log) else {}
        for p in unc:
            c = cl.classify(p)
            where = "tier1" if p in t1 else "neither"
            extra = ""
            if p in cl.image_pfns:
                va = p * PAGE - vc.phys_base + START_KERNEL_MAP
                sec = section(facts, vc.koff, va)
                inside = syms.within(va, va + PAGE)
                extra = f" | image {sec}: {syms.at(va)}" + (f" (in it: {', '.join(inside)})" if inside else "")
            if c == "slab" and "slab.slab_cache" in facts and "kmem_cache.name" in facts:
                extra += f" | cache {slab_cache(vc, cl, facts, p)}"
            if p in mods:
                extra += f" | va {mods[p]:#x}"
            strs = [t for t in (text_at(vc, pa) for pa in at.get(p, [])) if t]
            if strs:
                extra += f" | {len(at[p])} reads, strings: " + ", ".join(dict.fromkeys(strs[:4]))
            elif at.get(p):
                va0 = at[p][0] - vc.phys_base + START_KERNEL_MAP
                extra += f" | {len(at[p])} reads, first at {va0:#x} ({syms.at(va0)})" \
                    if p in cl.image_pfns else f" | {len(at[p])} reads"
            print(f"class {name} {where} {p:#x} {c}{extra}")
        sums = collections.Counter(cl.classify(p) for p in unc) if unc else {}
        for c, n in sorted(sums.items(), key=lambda x: -x[1]):
            print(f"sum {name} {n} {c}")


if __name__ == "__main__":
    main()
