#!/usr/bin/python3
"""vmcmp: check a saved ELF vmcore against the raw vmcore it came from.

usage: vmcmp.py REFERENCE SAVED [--mode nonzero|all]

REFERENCE is the raw vmcore (ELF64 ET_CORE). SAVED is an ELF vmcore as
`kdumpinit save --format elf` writes it: its PT_LOADs may split the
reference's, and excluded runs are PT_LOADs with p_filesz < p_memsz.

Pages are matched by physical address, and every SAVED PT_LOAD that maps
a page (by p_memsz) must read back the reference bytes, missing bytes
reading as zero: with the kernel-text alias a reader may take either
mapping. Mode nonzero (the default): every non-zero reference page must
therefore be in the file part of each SAVED PT_LOAD that maps it, and no
all-zero page may be in any file part. Mode all: every page a reference
PT_LOAD holds in its file must be in the file part of each SAVED PT_LOAD
that maps it the same way (same p_vaddr - p_paddr), identical. In both
modes the PT_NOTE bytes must match, and SAVED's PT_LOADs must map the same
virtual ranges onto the same physical ones (none missing, none invented).

Exit 0 when everything matches, 1 otherwise (also for unreadable input).
"""
import argparse
import bisect
import mmap
import os
import struct
import sys

PAGE = 4096
ZERO = bytes(PAGE)
BLOCK = 256 * PAGE  # bytes compared at once on the fast path
ZERO_BLOCK = bytes(BLOCK)
PT_LOAD, PT_NOTE = 1, 4
ET_CORE = 4
PN_XNUM = 0xFFFF
EHDR = struct.Struct("<16sHHIQQQIHHHHHH")
PHDR = struct.Struct("<IIQQQQQQ")
SHDR_INFO_OFF = 44  # Elf64_Shdr.sh_info
MAX_LISTED = 10
U64 = (1 << 64) - 1


class ElfError(Exception):
    pass


class Load:
    __slots__ = ("index", "offset", "vaddr", "paddr", "filesz", "memsz")

    def __init__(self, index, offset, vaddr, paddr, filesz, memsz):
        self.index = index
        self.offset = offset
        self.vaddr = vaddr
        self.paddr = paddr
        self.filesz = filesz
        self.memsz = memsz

    @property
    def delta(self):
        """vaddr - paddr: two PT_LOADs map alike only if this matches."""
        return (self.vaddr - self.paddr) & U64


class Core:
    """An ELF64 little-endian core file, mapped read-only."""

    def __init__(self, path):
        self.path = path
        with open(path, "rb") as f:
            self.size = os.fstat(f.fileno()).st_size
            if self.size < EHDR.size:
                raise ElfError(f"{path}: {self.size} bytes, too short for an ELF header")
            self.mm = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)
        self._parse_ehdr()
        self._parse_phdrs()

    def _parse_ehdr(self):
        (ident, etype, self.machine, _ver, _entry, self.phoff, self.shoff,
         _flags, _ehsize, phentsize, phnum, _shentsize, _shnum,
         _shstrndx) = EHDR.unpack_from(self.mm, 0)
        if ident[:4] != b"\x7fELF" or ident[4] != 2 or ident[5] != 1:
            raise ElfError(f"{self.path}: not an ELF64 little-endian file")
        if etype != ET_CORE:
            raise ElfError(f"{self.path}: e_type {etype}, not ET_CORE")
        if phentsize != PHDR.size:
            raise ElfError(f"{self.path}: e_phentsize {phentsize}")
        if phnum == PN_XNUM:
            # Extended numbering: the real count is section 0's sh_info.
            if not self.shoff or self.shoff + 64 > self.size:
                raise ElfError(f"{self.path}: PN_XNUM without section header 0")
            phnum = struct.unpack_from("<I", self.mm, self.shoff + SHDR_INFO_OFF)[0]
        self.phnum = phnum

    def _parse_phdrs(self):
        if self.phoff + self.phnum * PHDR.size > self.size:
            raise ElfError(f"{self.path}: program header table past end of file")
        self.loads = []
        notes = []
        for i in range(self.phnum):
            (ptype, _fl, off, vaddr, paddr, filesz, memsz,
             _al) = PHDR.unpack_from(self.mm, self.phoff + i * PHDR.size)
            if ptype not in (PT_LOAD, PT_NOTE):
                continue
            if off + filesz > self.size:
                raise ElfError(f"{self.path}: phdr {i} data [{off:#x}+{filesz:#x}] "
                               f"past end of file ({self.size:#x})")
            if ptype == PT_NOTE:
                notes.append(self.mm[off:off + filesz])
                continue
            if filesz > memsz or paddr + memsz > U64 or vaddr + memsz > U64 + 1:
                raise ElfError(f"{self.path}: phdr {i} has bad sizes "
                               f"(filesz {filesz:#x}, memsz {memsz:#x})")
            self.loads.append(Load(i, off, vaddr, paddr, filesz, memsz))
        self.notes = b"".join(notes)

    def read(self, seg, paddr, n):
        """n bytes of seg at paddr; bytes past p_filesz read as zero."""
        rel = paddr - seg.paddr
        have = max(0, min(n, seg.filesz - rel))
        data = self.mm[seg.offset + rel:seg.offset + rel + have]
        return data if have == n else data + bytes(n - have)


class Mapped:
    """SAVED's PT_LOADs cut into disjoint pieces by physical address, each
    with every segment whose p_memsz covers it. A piece can have several
    (the kernel-text alias maps the same memory twice), and a reader may
    use any of them, so each must read back the reference bytes."""

    def __init__(self, core):
        loads = sorted((s for s in core.loads if s.memsz), key=lambda s: s.paddr)
        edges = sorted({p for s in loads for p in (s.paddr, s.paddr + s.memsz)})
        self.starts, self.ends, self.holders = [], [], []
        active, nxt = [], 0
        for lo, hi in zip(edges, edges[1:]):
            while nxt < len(loads) and loads[nxt].paddr <= lo:
                active.append(loads[nxt])
                nxt += 1
            active = [s for s in active if s.paddr + s.memsz > lo]
            if active:
                self.starts.append(lo)
                self.ends.append(hi)
                self.holders.append(tuple(active))

    def lookup(self, lo, hi):
        """Pieces overlapping [lo, hi) as (start, end, holders), clipped."""
        i = bisect.bisect_right(self.starts, lo) - 1
        if i < 0 or self.ends[i] <= lo:
            i += 1
        out = []
        while i < len(self.starts) and self.starts[i] < hi:
            out.append((max(lo, self.starts[i]), min(hi, self.ends[i]), self.holders[i]))
            i += 1
        return out


class Report:
    def __init__(self):
        self.pages = self.nonzero_kept = self.zero_dropped = 0
        self.zero_kept = self.mismatches = 0
        self.problems = []

    def problem(self, text):
        self.problems.append(text)


def covered(pieces, lo, hi):
    """Do the (disjoint, sorted) pieces cover [lo, hi) without a gap?"""
    at = lo
    for s, e, _h in pieces:
        if s > at:
            return False
        at = e
    return at >= hi


class PageView:
    """What SAVED holds for one reference page, through every mapping."""

    def __init__(self, saved, pieces, ref_bytes, lo, need_end, delta):
        self.wrong = None      # first (phdr index, reads zero?) that differs
        self.in_file = False   # some byte sits in a saved file part
        # [lo, need_end) is in the file part of every holder that maps it
        # the way the reference PT_LOAD does (same vaddr - paddr).
        self.all_in_file = True
        for s, e, holders in pieces:
            want = ref_bytes[s - lo:e - lo]
            for seg in holders:
                fe = seg.paddr + seg.filesz
                if s < fe:
                    self.in_file = True
                if seg.delta == delta and min(e, need_end) > max(s, fe):
                    self.all_in_file = False
                if self.wrong is None and saved.read(seg, s, e - s) != want:
                    self.wrong = (seg.index, fe <= s)


def check_page(rep, mode, ref_bytes, ref_file_end, lo, saved, mapped, rseg):
    hi = lo + len(ref_bytes)
    is_zero = ref_bytes == ZERO[:len(ref_bytes)]
    pieces = mapped.lookup(lo, hi)
    need_end = max(lo, min(hi, ref_file_end)) if mode == "all" else lo
    view = PageView(saved, pieces, ref_bytes, lo, need_end, rseg.delta)
    rep.pages += 1
    if not covered(pieces, lo, hi):
        why = "not mapped by any saved PT_LOAD"
    elif view.wrong and view.wrong[1]:
        why = f"non-zero page missing from saved phdr {view.wrong[0]} (reads as zero)"
    elif view.wrong:
        why = f"saved bytes differ in phdr {view.wrong[0]}"
    elif mode == "nonzero" and is_zero and view.in_file:
        rep.zero_kept += 1
        why = "zero page kept in a saved file part"
    elif not view.all_in_file:
        why = "page missing from saved file parts"
    else:
        if is_zero:
            rep.zero_kept += mode == "all"
            rep.zero_dropped += mode == "nonzero"
        else:
            rep.nonzero_kept += 1
        return
    rep.mismatches += 1
    rep.problem(f"paddr {lo:#014x} (reference phdr {rseg.index}): {why}")


def single_holder(mapped, lo):
    """The one saved PT_LOAD mapping lo, and where that stays true; else None."""
    i = bisect.bisect_right(mapped.starts, lo) - 1
    if i < 0 or mapped.ends[i] <= lo or len(mapped.holders[i]) != 1:
        return None, lo
    return mapped.holders[i][0], mapped.ends[i]


def fast_block(rep, mode, rb, lo, in_file, sb, slow):
    """Whole pages [lo, lo+len(rb)) mapped by one saved PT_LOAD, all in its
    file part (sb = its bytes) or all past it. One compare settles the
    block when it matches; a page that needs a verdict goes to slow(lo)."""
    n = len(rb)
    if in_file and rb != sb:
        for o in range(0, n, PAGE):
            slow(lo + o)
        return
    if not in_file and rb == ZERO_BLOCK[:n] and mode == "nonzero":
        rep.pages += n // PAGE
        rep.zero_dropped += n // PAGE
        return
    for o in range(0, n, PAGE):
        zero = rb[o:o + PAGE] == ZERO
        if in_file and not zero:
            rep.nonzero_kept += 1
        elif in_file and mode == "all":
            rep.zero_kept += 1
        elif not in_file and zero and mode == "nonzero":
            rep.zero_dropped += 1
        else:
            slow(lo + o)
            continue
        rep.pages += 1


def fast_run(rep, mode, ref, seg, lo, saved, mapped, slow):
    """Checks page-aligned [lo, x) the cheap way, for multi-GB files; returns
    x, or lo when the page at lo needs check_page (several mappings, a
    partial page, a reference tail)."""
    holder, piece_end = single_holder(mapped, lo)
    if holder is None or lo % PAGE:
        return lo
    fe = holder.paddr + holder.filesz
    stop = min(seg.paddr + seg.filesz, piece_end, fe if lo < fe else piece_end)
    stop = lo + (stop - lo) // PAGE * PAGE
    while lo < stop:
        n = min(BLOCK, stop - lo)
        roff = seg.offset + lo - seg.paddr
        rb = ref.mm[roff:roff + n]
        sb = None
        if lo < fe:
            soff = holder.offset + lo - holder.paddr
            sb = saved.mm[soff:soff + n]
        fast_block(rep, mode, rb, lo, lo < fe, sb, slow)
        lo += n
    return lo


def check_pages(rep, mode, ref, saved):
    mapped = Mapped(saved)
    for seg in ref.loads:
        end, file_end = seg.paddr + seg.memsz, seg.paddr + seg.filesz

        def slow(lo, seg=seg, end=end, file_end=file_end):
            hi = min(end, (lo // PAGE + 1) * PAGE)
            check_page(rep, mode, ref.read(seg, lo, hi - lo), file_end, lo, saved,
                       mapped, seg)
            return hi

        lo = seg.paddr
        while lo < end:
            nxt = fast_run(rep, mode, ref, seg, lo, saved, mapped, slow)
            lo = nxt if nxt > lo else slow(lo)


def merge(intervals):
    """Sorted, coalesced intervals, with their starts for bisect."""
    out = []
    for lo, hi in sorted(intervals):
        if out and lo <= out[-1][1]:
            out[-1][1] = max(out[-1][1], hi)
        else:
            out.append([lo, hi])
    return [m[0] for m in out], out


def inside(merged, lo, hi):
    starts, spans = merged
    i = bisect.bisect_right(starts, lo) - 1
    return i >= 0 and spans[i][0] <= lo and hi <= spans[i][1]


def by_delta(core):
    groups = {}
    for s in core.loads:
        groups.setdefault(s.delta, []).append((s.paddr, s.paddr + s.memsz))
    return {d: merge(v) for d, v in groups.items()}


def check_vaddr(rep, ref, saved):
    """Each reference PT_LOAD's (vaddr, paddr) range must be covered by
    saved PT_LOADs with the same mapping, and each saved PT_LOAD must lie
    inside a reference one: a save that drops the kernel-text alias or
    shifts p_vaddr breaks gdb and crash even when every page is there."""
    ref_map, sav_map = by_delta(ref), by_delta(saved)
    for seg in ref.loads:
        if not inside(sav_map.get(seg.delta, ([], [])), seg.paddr, seg.paddr + seg.memsz):
            rep.problem(f"reference phdr {seg.index} (vaddr {seg.vaddr:#x}, paddr "
                        f"{seg.paddr:#x}, memsz {seg.memsz:#x}) not fully mapped in saved")
    for seg in saved.loads:
        if not inside(ref_map.get(seg.delta, ([], [])), seg.paddr, seg.paddr + seg.memsz):
            rep.problem(f"saved phdr {seg.index} (vaddr {seg.vaddr:#x}, paddr "
                        f"{seg.paddr:#x}, memsz {seg.memsz:#x}) maps memory the "
                        f"reference does not")


def check_notes(rep, ref, saved):
    if ref.notes != saved.notes:
        rep.problem(f"PT_NOTE contents differ ({len(ref.notes)} bytes in reference, "
                    f"{len(saved.notes)} in saved)")


def compare(ref, saved, mode):
    rep = Report()
    if ref.machine != saved.machine:
        rep.problem(f"e_machine {saved.machine}, reference has {ref.machine}")
    check_notes(rep, ref, saved)
    check_vaddr(rep, ref, saved)
    check_pages(rep, mode, ref, saved)
    return rep


def expect_excluded(rep, addrs):
    """Turns "missing" problems for the given pages into passes."""
    missing = {}
    for p in rep.problems:
        if p.startswith("paddr ") and "reads as zero" in p:
            missing.setdefault(int(p.split()[1], 16), []).append(p)
    n = 0
    for a in addrs:
        # Once per PT_LOAD that maps it (the kernel-text alias too).
        for p in missing.get(a, []):
            rep.problems.remove(p)
            rep.mismatches -= 1
        n += a in missing
    print(f"allowed missing: {len(addrs)} pages, {n} of them missing")


def print_report(rep, mode):
    print(f"mode: {mode}")
    print(f"pages compared: {rep.pages}")
    print(f"non-zero kept: {rep.nonzero_kept}")
    if mode == "nonzero":
        print(f"zero dropped: {rep.zero_dropped}")
    else:
        print(f"zero kept: {rep.zero_kept}")
    print(f"mismatches: {rep.mismatches}")
    print(f"problems: {len(rep.problems)}")
    for text in rep.problems[:MAX_LISTED]:
        print(f"  {text}")
    if len(rep.problems) > MAX_LISTED:
        print(f"  ... {len(rep.problems) - MAX_LISTED} more")
    print("result: " + ("OK" if not rep.problems else "FAIL"))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("reference")
    ap.add_argument("saved")
    ap.add_argument("--mode", choices=("nonzero", "all"), default="nonzero")
    ap.add_argument("--excluded", default="",
                    help="comma-separated physical addresses of pages that may be missing "
                         "although non-zero (pages the test poisoned: hwpoison pages are always "
                         "excluded; the caller checks the count elsewhere)")
    args = ap.parse_args()
    try:
        ref = Core(args.reference)
        saved = Core(args.saved)
    except (OSError, ElfError, struct.error, ValueError) as e:
        print(f"vmcmp: {e}", file=sys.stderr)
        return 1
    rep = compare(ref, saved, args.mode)
    if args.excluded:
        expect_excluded(rep, [int(a, 0) & ~(PAGE - 1) for a in args.excluded.split(",")])
    print_report(rep, args.mode)
    return 0 if not rep.problems else 1


if __name__ == "__main__":
    sys.exit(main())
