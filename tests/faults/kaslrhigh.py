#!/usr/bin/python3
"""kaslrhigh: is the crashed kernel's image above where a cut dump's
pfn-order pass stopped, and above where a pure pfn-order capture of as
many pages would have stopped? Then a dump written in pfn order alone
would have lost the page tables and init_uts_ns; one written kernel's
pages first (docs/FORMAT.md, two passes) keeps them.

usage: kaslrhigh.py DUMP RAW [--limit OFFSET] [--pages N]

DUMP   the kdumpinit device image, cut short (no END)
RAW    the raw /proc/vmcore copy of the same crash (ELF)
--limit OFFSET  the device offset of the first chunk that is not intact
       (what `kdumpinit info` names in its state line); chunks from there
       on are not counted. Without it every chunk whose header checks out
       and whose payload lies in the file is counted.
--pages N  the pages `info` says the dump keeps: the chunks counted must
       store exactly that many (a check that this reads the stream as
       kdumpinit does)

Everything about the kernel comes from the dump itself: the kernel-text
PT_LOAD of its SEGMENTS chunk (where KASLR put the image), SYMBOL() and
NUMBER(phys_base) of its VMCOREINFO chunk (init_top_pgt, init_uts_ns).
From its PAGES chunks: the last pfn the first pass (the kernel's pages)
scanned, and the highest pfn the LATER pass (the rest, in pfn order)
stored before the cut. From RAW: the pfn of the N-th non-zero page in pfn
order, N the pages the cut dump stored: where a capture in pfn order alone
(level 1 keeps every non-zero page) would have stopped with as many pages.

Prints one line of figures; exit 0 when the kernel image's first pfn,
init_top_pgt's and init_uts_ns's are all above the LATER pass's cut,
init_top_pgt's and init_uts_ns's (what drgn and crash need to read
anything) also above where pfn order alone would have stopped, and both
pages are stored in first-pass chunks; 1 with the reason otherwise.
"""
import argparse
import mmap
import re
import struct
import sys

sys.path.insert(0, __file__.rsplit("/", 3)[0] + "/tests/fuzz")
from mkcorpus import xxh64  # noqa: E402  (pure Python, seed 0)

HDR = struct.Struct("<4sHHIIQQQQ")
PAGES_HDR = struct.Struct("<QIIII")
SEG = struct.Struct("<QQQQII")
LATER = 2
PAGE = 4096
KTEXT = 0xFFFFFFFF80000000  # __START_KERNEL_map: pa = va - KTEXT + phys_base


def chunks(data, limit):
    """(offset, type, payload) of the intact-looking chunks before LIMIT."""
    off = struct.unpack_from("<Q", data, 104)[0]
    dump_id = None
    seq = 0
    while off + HDR.size <= len(data) and (limit is None or off < limit):
        magic, typ, _hs, length, _fl, did, sq, _ph, hh = HDR.unpack_from(data, off)
        if magic != b"KDCK":
            break
        h = bytearray(data[off:off + HDR.size])
        h[40:48] = bytes(8)
        if xxh64(bytes(h)) != hh or (dump_id is not None and (did != dump_id or sq != seq)):
            break
        if off + HDR.size + length > len(data):
            break
        dump_id, seq = did, sq + 1
        yield off, typ, data[off + HDR.size:off + HDR.size + length]
        if typ == 7:
            break
        off += (HDR.size + length + 7) & ~7


def bits(bm, count):
    for i in range(count):
        if bm[i >> 3] >> (i & 7) & 1:
            yield i


def raw_nonzero(path):
    """Non-zero pfns of an ELF vmcore, each once, in pfn order."""
    with open(path, "rb") as f:
        eh = f.read(64)
        phoff, = struct.unpack_from("<Q", eh, 32)
        phentsize, phnum = struct.unpack_from("<HH", eh, 54)
        f.seek(phoff)
        ph = f.read(phentsize * phnum)
        pfns = set()
        zero = bytes(PAGE)
        for i in range(phnum):
            typ, _fl, off, _va, pa, filesz, _memsz, _al = struct.unpack_from("<IIQQQQQQ", ph, i * phentsize)
            if typ != 1:
                continue
            f.seek(off)
            for p in range(filesz // PAGE):
                if f.read(PAGE) != zero:
                    pfns.add((pa >> 12) + p)
    return sorted(pfns)


def main():
    ap = argparse.ArgumentParser(usage=__doc__.split("\n")[3])
    ap.add_argument("dump")
    ap.add_argument("raw")
    ap.add_argument("--limit", type=int)
    ap.add_argument("--pages", type=int)
    a = ap.parse_args()
    # The device image is mostly sparse: map it, read only the chunks.
    with open(a.dump, "rb") as f:
        data = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)
    if data[:8] != b"KDUMPINT":
        print(f"kaslrhigh: {a.dump}: no kdumpinit superblock")
        return 1

    info = segs = None
    first_end = None          # last pfn the first pass covered
    later_max = None          # highest pfn a LATER chunk stored
    first_stored = set()
    stored = 0
    for _off, typ, p in chunks(data, a.limit):
        if typ == 3:
            info = p.decode("ascii", "replace")
        elif typ == 4:
            segs = [SEG.unpack_from(p, i) for i in range(0, len(p) - SEG.size + 1, SEG.size)]
        elif typ == 5:
            pfn, count, nstored, _nzero, flags = PAGES_HDR.unpack_from(p)
            bm = p[PAGES_HDR.size:PAGES_HDR.size + (count + 31) // 32 * 4]
            stored += nstored
            if flags & LATER:
                got = [pfn + i for i in bits(bm, count)]
                if got:
                    later_max = max(later_max or 0, got[-1])
            else:
                first_end = pfn + count - 1
                first_stored.update(pfn + i for i in bits(bm, count))
    if info is None or segs is None:
        print("kaslrhigh: no VMCOREINFO or SEGMENTS chunk in the dump")
        return 1

    def num(key):
        m = re.search(r"^" + re.escape(key) + r"=(-?[0-9a-fx]+)$", info, re.M)
        if not m:
            raise SystemExit(f"kaslrhigh: no {key} in the dump's VMCOREINFO")
        return m.group(1)

    phys_base = int(num("NUMBER(phys_base)"), 0)
    pfn_of = {s: (int(num(f"SYMBOL({s})"), 16) - KTEXT + phys_base) >> 12 for s in ("init_top_pgt", "init_uts_ns")}
    text = [s for s in segs if s[1] >= KTEXT]
    if len(text) != 1:
        print(f"kaslrhigh: {len(text)} kernel-text segments in the dump (want 1)")
        return 1
    kpa, _kva, kmem = text[0][0], text[0][1], text[0][2]
    kfirst, klast = kpa >> 12, (kpa + kmem - 1) >> 12
    if a.pages is not None and stored != a.pages:
        print(f"kaslrhigh: the chunks read store {stored} pages, info says {a.pages}")
        return 1
    if later_max is None:
        print(f"kaslrhigh: no LATER chunk before the cut (first pass to pfn {first_end:#x}): "
              "the cut did not come in the pfn-order pass")
        return 1
    nz = raw_nonzero(a.raw)
    pure = nz[stored - 1] if stored <= len(nz) else nz[-1]
    mb = kpa / (1 << 20)
    print(f"kaslrhigh: kernel image at pfn {kfirst:#x}-{klast:#x} ({mb:.0f} MiB, "
          f"{kmem / (1 << 20):.1f} MiB), init_top_pgt pfn {pfn_of['init_top_pgt']:#x}, "
          f"init_uts_ns pfn {pfn_of['init_uts_ns']:#x}; first pass to pfn {first_end:#x}, "
          f"LATER pass cut after pfn {later_max:#x}; {stored} pages stored, "
          f"in pfn order alone they end at pfn {pure:#x}")
    bad = []
    for name, pfn in (("kernel image", kfirst), ("init_top_pgt", pfn_of["init_top_pgt"]),
                      ("init_uts_ns", pfn_of["init_uts_ns"])):
        if not kfirst <= pfn <= klast:
            bad.append(f"{name} pfn {pfn:#x} outside the kernel image")
        if pfn <= later_max:
            bad.append(f"{name} pfn {pfn:#x} not above the LATER pass's cut ({later_max:#x})")
    # What drgn and crash need first: pfn order alone would have lost them.
    for name in ("init_top_pgt", "init_uts_ns"):
        if pfn_of[name] <= pure:
            bad.append(f"{name} pfn {pfn_of[name]:#x} not above where pfn order alone stops ({pure:#x})")
    for name in ("init_top_pgt", "init_uts_ns"):
        if pfn_of[name] not in first_stored:
            bad.append(f"{name}'s page is not stored in a first-pass chunk")
    if bad:
        print("kaslrhigh: " + "; ".join(bad))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
