#!/usr/bin/python3
"""mksaved: write a hand-made "saved" ELF vmcore from a raw one, for
vmcmp_selftest.sh. It stands in for `kdumpinit save --format elf`, and
can break its output on purpose so the test can see vmcmp fail.

usage: mksaved.py REFERENCE OUT [--keep nonzero|all] [--split-pages N]
                  [--xnum] [--mutate M ...]

--keep nonzero drops all-zero pages (p_filesz < p_memsz runs); --keep all
copies every page. --split-pages N starts a new PT_LOAD every N data pages.
--xnum writes e_phnum = PN_XNUM even when the count would fit.
--in-load K aims the page mutations at the reference's PT_LOAD number K
(0-based among PT_LOADs, negative counts from the end).
Mutations (each hits the first page it applies to):
  flip-byte         flip the last byte of the first kept non-zero page
  drop-nonzero      drop the first non-zero page
  drop-almost-zero  drop the first page whose only non-zero byte is the last
  keep-zero         keep the first all-zero page
  alter-note        flip a byte of the PT_NOTE copy
  alter-vaddr       shift the first saved PT_LOAD's p_vaddr by a page
  drop-last-load    leave out the reference's last PT_LOAD entirely
"""
import argparse
import os
import struct
import sys

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from vmcmp import Core, EHDR, PHDR, PAGE, ZERO, PN_XNUM, PT_LOAD, PT_NOTE  # noqa: E402

MUTATIONS = ("flip-byte", "drop-nonzero", "drop-almost-zero", "keep-zero",
             "alter-note", "alter-vaddr", "drop-last-load")


class Out:
    """One saved PT_LOAD: data pages, then a zero tail."""

    def __init__(self, paddr, vaddr):
        self.paddr, self.vaddr = paddr, vaddr
        self.pages = []
        self.memsz = 0

    @property
    def filesz(self):
        return len(self.pages) * PAGE


def almost_zero_last(page):
    return page[-1] != 0 and page.count(0) == PAGE - 1


class Saver:
    def __init__(self, keep, split, mutations):
        self.keep, self.split = keep, split
        self.pending = set(mutations)
        self.outs = []

    def _once(self, name):
        if name in self.pending:
            self.pending.discard(name)
            return True
        return False

    def _wanted(self, page, in_file):
        if not in_file:
            return False
        zero = page == ZERO
        if zero and self._once("keep-zero"):
            return True
        if not zero and self._once("drop-nonzero"):
            return False
        if almost_zero_last(page) and self._once("drop-almost-zero"):
            return False
        return self.keep == "all" or not zero

    def _add(self, cur, paddr, vaddr, page, keep):
        if keep:
            if cur is None or cur.memsz > cur.filesz or (
                    self.split and len(cur.pages) >= self.split):
                cur = Out(paddr, vaddr)
                self.outs.append(cur)
            if page != ZERO and self._once("flip-byte"):
                page = page[:-1] + bytes([page[-1] ^ 1])
            cur.pages.append(page)
        elif cur is None:
            cur = Out(paddr, vaddr)
            self.outs.append(cur)
        cur.memsz += PAGE
        return cur

    def add_load(self, ref, seg, aim):
        if seg.paddr % PAGE or seg.memsz % PAGE:
            raise SystemExit("mksaved: reference PT_LOADs must be page aligned")
        held = self.pending
        if not aim:
            self.pending = set()
        cur = None
        for rel in range(0, seg.memsz, PAGE):
            page = ref.read(seg, seg.paddr + rel, PAGE)
            keep = self._wanted(page, rel < seg.filesz)
            cur = self._add(cur, seg.paddr + rel, seg.vaddr + rel, page, keep)
        if not aim:
            self.pending = held


def write(path, ref, outs, notes, xnum):
    phnum = 1 + len(outs)
    use_xnum = xnum or phnum >= PN_XNUM
    shoff = EHDR.size + phnum * PHDR.size if use_xnum else 0
    note_off = EHDR.size + phnum * PHDR.size + (64 if use_xnum else 0)
    data = -(-(note_off + len(notes)) // PAGE) * PAGE
    phdrs = [PHDR.pack(PT_NOTE, 0, note_off, 0, 0, len(notes), len(notes), 0)]
    off = data
    for o in outs:
        phdrs.append(PHDR.pack(PT_LOAD, 7, off, o.vaddr, o.paddr, o.filesz, o.memsz, 0))
        off += o.filesz
    ident = b"\x7fELF\x02\x01\x01" + bytes(9)
    ehdr = EHDR.pack(ident, 4, ref.machine, 1, 0, EHDR.size, shoff, 0, EHDR.size,
                     PHDR.size, PN_XNUM if use_xnum else phnum,
                     64 if use_xnum else 0, 1 if use_xnum else 0, 0)
    with open(path, "wb") as f:
        f.write(ehdr)
        f.write(b"".join(phdrs))
        if use_xnum:
            # SHT_NULL section 0: sh_size = e_shnum, sh_info = real phnum.
            f.write(struct.pack("<IIQQQQIIQQ", 0, 0, 0, 0, 0, 1, 0, phnum, 0, 0))
        f.write(notes)
        f.write(bytes(data - f.tell()))
        for o in outs:
            f.write(b"".join(o.pages))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("reference")
    ap.add_argument("out")
    ap.add_argument("--keep", choices=("nonzero", "all"), default="nonzero")
    ap.add_argument("--split-pages", type=int, default=0)
    ap.add_argument("--xnum", action="store_true")
    ap.add_argument("--mutate", action="append", default=[], choices=MUTATIONS)
    ap.add_argument("--in-load", type=int)
    args = ap.parse_args()
    ref = Core(args.reference)
    saver = Saver(args.keep, args.split_pages, args.mutate)
    loads = ref.loads[:-1] if "drop-last-load" in args.mutate else ref.loads
    saver.pending.discard("drop-last-load")
    aim = None if args.in_load is None else ref.loads[args.in_load]
    for seg in loads:
        saver.add_load(ref, seg, aim is None or seg is aim)
    notes = ref.notes
    if saver._once("alter-note"):
        notes = notes[:-1] + bytes([notes[-1] ^ 1])
    if saver.outs and saver._once("alter-vaddr"):
        saver.outs[0].vaddr += PAGE
    if saver.pending:
        raise SystemExit(f"mksaved: mutation found nothing to hit: {sorted(saver.pending)}")
    write(args.out, ref, saver.outs, notes, args.xnum)
    return 0


if __name__ == "__main__":
    sys.exit(main())
