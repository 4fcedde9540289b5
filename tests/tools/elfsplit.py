#!/usr/bin/python3
"""elfsplit: rewrite an ELF vmcore with its PT_LOADs cut and its bytes
changed on purpose, for mdcmp_selftest.sh.

usage: elfsplit.py IN OUT [--split K:OFF]... [--flip PADDR]... [--zero PADDR]...
                   [--unhold PADDR]... [--xnum]

--split K:OFF   cut PT_LOAD number K (0-based among PT_LOADs, negative
                counts from the end) OFF bytes in (any OFF, aligned or not)
--flip PADDR    flip the last byte of the page at PADDR in the first
                PT_LOAD (by phdr order) whose file part holds that byte
--zero PADDR    overwrite the page at PADDR with zeros wherever it is held
                (held, but all zero)
--unhold PADDR  make the page at PADDR excluded in every PT_LOAD holding
                it: the PT_LOAD is cut around it, the page becomes a
                p_filesz < p_memsz tail
--xnum          write e_phnum = PN_XNUM even when the count fits
Cuts, changes and exclusions are applied to the bytes as they are in IN;
the other program headers (PT_NOTE) are copied.
"""
import argparse
import os
import struct
import sys

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from vmcmp import Core, EHDR, PHDR, PAGE, PN_XNUM, PT_LOAD, PT_NOTE  # noqa: E402


class Piece:
    """[paddr, paddr+memsz) of one output PT_LOAD; data = its file bytes."""

    def __init__(self, vaddr, paddr, data, memsz):
        self.vaddr, self.paddr, self.data, self.memsz = vaddr, paddr, bytearray(data), memsz


def cut(p, off):
    """Split piece p off bytes in: two pieces."""
    a = Piece(p.vaddr, p.paddr, p.data[:off], off)
    b = Piece(p.vaddr + off, p.paddr + off, p.data[off:], p.memsz - off)
    return a, b


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("inp")
    ap.add_argument("out")
    ap.add_argument("--split", action="append", default=[])
    ap.add_argument("--flip", action="append", default=[], type=lambda s: int(s, 0))
    ap.add_argument("--zero", action="append", default=[], type=lambda s: int(s, 0))
    ap.add_argument("--unhold", action="append", default=[], type=lambda s: int(s, 0))
    ap.add_argument("--xnum", action="store_true")
    args = ap.parse_args()
    core = Core(args.inp)
    groups = [[Piece(s.vaddr, s.paddr, core.mm[s.offset:s.offset + s.filesz], s.memsz)]
              for s in core.loads]
    for spec in args.split:
        k, off = (int(x, 0) for x in spec.split(":"))
        g = groups[k]
        at = g[0].paddr + off
        for i, p in enumerate(g):
            if p.paddr < at < p.paddr + p.memsz:
                if at - p.paddr > len(p.data):
                    raise SystemExit("elfsplit: cannot cut inside a zero tail")
                g[i:i + 1] = cut(p, at - p.paddr)
                break
        else:
            raise SystemExit(f"elfsplit: nothing to cut at {spec}")
    pieces = [p for g in groups for p in g]
    for paddr in args.unhold:
        new, hit = [], False
        for p in pieces:
            rel = paddr - p.paddr
            if 0 <= rel < len(p.data):
                hit = True
                if rel:
                    a, p = cut(p, rel)
                    new.append(a)
                a, p = cut(p, min(PAGE, p.memsz))
                a.data = bytearray()  # the page as an excluded run
                new.append(a)
                if p.memsz:
                    new.append(p)
            else:
                new.append(p)
        if not hit:
            raise SystemExit(f"elfsplit: no PT_LOAD holds {paddr:#x}")
        pieces = new
    for paddr in args.flip:
        last = paddr + PAGE - 1
        for p in pieces:
            if 0 <= last - p.paddr < len(p.data):
                p.data[last - p.paddr] ^= 1
                break
        else:
            raise SystemExit(f"elfsplit: no PT_LOAD holds {last:#x}")
    for paddr in args.zero:
        hit = False
        for p in pieces:
            a, b = max(paddr, p.paddr), min(paddr + PAGE, p.paddr + len(p.data))
            if a < b:
                p.data[a - p.paddr:b - p.paddr] = bytes(b - a)
                hit = True
        if not hit:
            raise SystemExit(f"elfsplit: no PT_LOAD holds the page at {paddr:#x}")

    notes = core.notes
    phnum = 1 + len(pieces)
    xnum = args.xnum or phnum >= PN_XNUM
    hdr = EHDR.size + phnum * PHDR.size + (64 if xnum else 0)
    note_off = hdr
    off = -(-(note_off + len(notes)) // PAGE) * PAGE
    phdrs = [PHDR.pack(PT_NOTE, 0, note_off, 0, 0, len(notes), len(notes), 0)]
    for p in pieces:
        phdrs.append(PHDR.pack(PT_LOAD, 7, off, p.vaddr, p.paddr, len(p.data), p.memsz, 0))
        off += len(p.data)
    ident = b"\x7fELF\x02\x01\x01" + bytes(9)
    ehdr = EHDR.pack(ident, 4, core.machine, 1, 0, EHDR.size,
                     EHDR.size + phnum * PHDR.size if xnum else 0, 0, EHDR.size,
                     PHDR.size, PN_XNUM if xnum else phnum, 64 if xnum else 0,
                     1 if xnum else 0, 0)
    with open(args.out, "wb") as f:
        f.write(ehdr)
        f.write(b"".join(phdrs))
        if xnum:
            f.write(struct.pack("<IIQQQQIIQQ", 0, 0, 0, 0, 0, 1, 0, phnum, 0, 0))
        f.write(notes)
        f.write(bytes(-(-(note_off + len(notes)) // PAGE) * PAGE - f.tell()))
        for p in pieces:
            f.write(p.data)
    return 0


if __name__ == "__main__":
    sys.exit(main())
