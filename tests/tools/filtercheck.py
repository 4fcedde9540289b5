#!/usr/bin/python3
"""filtercheck.py (the filter-synthetic suite): compare what kdumpinit kept with what mkvmcore --mm expects.

usage: filtercheck.py EXPECT NAME LEVEL:ELF:INFO:LOG [LEVEL:ELF:INFO:LOG ...]

EXPECT is the FILE.expect that `mkvmcore --mm` wrote next to the vmcore.
For each dump level: ELF is `kdumpinit save --format elf` of the capture
at that level, INFO the output of `kdumpinit info` on the capture and LOG
the capture's stderr.

Checks, per level:
  - the pfns in the file part of the ELF's PT_LOADs (the kept pages) are
    exactly the vmcore's pfns minus every pfn the expectation excludes at
    that level (zero pages included when bit 1 is set);
  - the PT_LOADs map (p_memsz) exactly the vmcore's pfns;
  - "info" reports, per class, the number of excluded pfns the
    expectation gives, no unreadable pages, and the kept count;
  - every pfn the expectation lists as unreadable (struct page cannot be
    read) is kept, unless a readable head's range excludes it;
  - the capture's "N pages kept because their struct page could not be
    read" equals the expectation's count of such pfns (absent means 0;
    not checked when no section at all could be read, since kdumpinit
    then does not walk struct pages).

Prints "ok NAME/dL" or "FAIL NAME/dL: why" (with up to 8 example pfns
and the object the generator put there) per level. Exit 0 when all pass.
"""
import bisect
import re
import struct
import sys

PAGE = 4096
PT_LOAD = 1
PN_XNUM = 0xFFFF
CLASSES = ("zero", "cache", "cache-private", "user", "free", "hwpoison", "offline", "memmap")
EXAMPLES = 8


def ranges_of(words):
    for w in words:
        a, _, b = w.partition("-")
        yield int(a), int(b or a)


class Expect:
    def __init__(self, path, levels):
        self.pfns = []          # inclusive ranges
        self.nosection = False
        self.objs = []          # (pfn, npfn, type), sorted
        self.unreadable = {}
        self.unreadable_pfns = []  # inclusive ranges
        self.excl = {L: {} for L in levels}   # level -> {class: [ranges]}
        self.header = ""
        want = {str(L) for L in levels}
        with open(path) as f:
            for line in f:
                if line.startswith("level "):
                    parts = line.split()
                    if parts[1] in want:
                        self.excl[int(parts[1])][parts[2]] = list(ranges_of(parts[3:]))
                elif line.startswith("obj "):
                    _, p, n, t = line.split()
                    self.objs.append((int(p), int(n), t))
                elif line.startswith("unreadable-pfns"):
                    self.unreadable_pfns = list(ranges_of(line.split()[1:]))
                elif line.startswith("unreadable "):
                    _, L, n = line.split()
                    self.unreadable[int(L)] = int(n)
                elif line.startswith("pfns"):
                    self.pfns = list(ranges_of(line.split()[1:]))
                elif line.startswith("nosection "):
                    self.nosection = line.split()[1] == "1"
                elif line.startswith("layout "):
                    self.header = line.strip()
        self.objs.sort()
        self.obj_starts = [o[0] for o in self.objs]

    def what(self, pfn):
        i = bisect.bisect_right(self.obj_starts, pfn) - 1
        while i >= 0:
            p, n, t = self.objs[i]
            if p <= pfn < p + n:
                return "%s@%d+%d" % (t, p, n)
            if p + 262144 < pfn:
                break
            i -= 1
        return "kernel"


def read_elf(path):
    """[(paddr, filesz, memsz)] of the PT_LOADs."""
    with open(path, "rb") as f:
        eh = f.read(64)
        if len(eh) < 64 or eh[:4] != b"\x7fELF" or eh[4] != 2:
            raise ValueError("not an ELF64 file")
        phoff, = struct.unpack_from("<Q", eh, 32)
        shoff, = struct.unpack_from("<Q", eh, 40)
        phentsize, phnum = struct.unpack_from("<HH", eh, 54)
        if phnum == PN_XNUM:
            f.seek(shoff)
            sh = f.read(64)
            phnum, = struct.unpack_from("<I", sh, 44)
        f.seek(phoff)
        tab = f.read(phnum * phentsize)
        if len(tab) != phnum * phentsize:
            raise ValueError("program headers cut short")
    loads = []
    for i in range(phnum):
        p_type, _, _, _, paddr, filesz, memsz, _ = struct.unpack_from("<IIQQQQQQ", tab, i * phentsize)
        if p_type == PT_LOAD:
            loads.append((paddr, filesz, memsz))
    return loads


def parse_info(path):
    counts, kept = {}, None
    with open(path) as f:
        for line in f:
            m = re.match(r"^(?:excluded)?\s+(\S+)\s+(\d+) pages$", line)
            if m and m.group(1) in CLASSES + ("unreadable",):
                counts[m.group(1)] = int(m.group(2))
            m = re.match(r"^pages kept\s+(\d+)", line)
            if m:
                kept = int(m.group(1))
    return counts, kept


def parse_log(path):
    with open(path, errors="replace") as f:
        m = re.search(r"(\d+) pages kept because their struct page could not be read", f.read())
    return int(m.group(1)) if m else 0


def check_level(E, L, elf, info, log):
    why = []
    pfnset = set()
    for a, b in E.pfns:
        pfnset.update(range(a, b + 1))
    cls = {}
    counts = {c: 0 for c in CLASSES}
    for c, rr in E.excl[L].items():
        for a, b in rr:
            for p in range(a, b + 1):
                cls[p] = c
            counts[c] += b - a + 1
    try:
        loads = read_elf(elf)
    except (OSError, ValueError) as e:
        return ["saved ELF %s unreadable: %s" % (elf, e)]
    kept, mapped = set(), set()
    for paddr, filesz, memsz in loads:
        if paddr % PAGE or filesz % PAGE or memsz % PAGE:
            why.append("PT_LOAD at 0x%x not page aligned" % paddr)
        kept.update(range(paddr // PAGE, (paddr + filesz) // PAGE))
        mapped.update(range(paddr // PAGE, (paddr + memsz) // PAGE))
    if mapped != pfnset:
        extra, miss = sorted(mapped - pfnset), sorted(pfnset - mapped)
        why.append("PT_LOADs map %d pfns not in the vmcore %s and miss %d %s"
                   % (len(extra), extra[:EXAMPLES], len(miss), miss[:EXAMPLES]))
    want_kept = pfnset - set(cls)
    # unreadable struct pages: kept, unless a readable head's range covers them
    unread = set()
    for a, b in E.unreadable_pfns:
        unread.update(range(a, b + 1))
    # (zero pages are dropped after the struct-page rules: not by them)
    rules_keep = unread - {p for p, c in cls.items() if c != "zero"}
    lost = sorted((rules_keep & want_kept) - kept)
    if lost:
        why.append("%d pfns whose struct page is unreadable were excluded, e.g. %s"
                   % (len(lost), lost[:EXAMPLES]))
    if len(rules_keep) != E.unreadable.get(L, 0):
        why.append("internal: expectation lists %d unreadable kept pfns, counts %d"
                   % (len(rules_keep), E.unreadable.get(L, 0)))
    dropped = sorted(want_kept - kept)     # should be kept, were excluded
    leaked = sorted(kept & set(cls))       # should be excluded, were kept
    if dropped:
        why.append("%d pfns excluded that must be kept, e.g. %s" % (
            len(dropped), ", ".join("%d(%s)" % (p, E.what(p)) for p in dropped[:EXAMPLES])))
    if leaked:
        by = {}
        for p in leaked:
            by.setdefault(cls[p], []).append(p)
        for c, ps in sorted(by.items()):
            why.append("%d pfns kept that must be excluded as %s, e.g. %s" % (
                len(ps), c, ", ".join("%d(%s)" % (p, E.what(p)) for p in ps[:EXAMPLES])))
    try:
        got, got_kept = parse_info(info)
    except OSError as e:
        return why + ["info output unreadable: %s" % e]
    for c in CLASSES:
        if got.get(c, 0) != counts[c]:
            why.append("info: %s %d, expected %d" % (c, got.get(c, 0), counts[c]))
    if got.get("unreadable", 0):
        why.append("info: %d unreadable pages, expected 0" % got["unreadable"])
    if got_kept != len(want_kept):
        why.append("info: pages kept %s, expected %d" % (got_kept, len(want_kept)))
    if not E.nosection:
        try:
            n = parse_log(log)
        except OSError as e:
            n = None
            why.append("capture log unreadable: %s" % e)
        if n is not None and n != E.unreadable.get(L, 0):
            why.append("capture reports %d pages with unreadable struct pages, expected %d"
                       % (n, E.unreadable.get(L, 0)))
    return why


def main(argv):
    if len(argv) < 4:
        print(__doc__.strip().splitlines()[2], file=sys.stderr)
        return 2
    expect, name, specs = argv[1], argv[2], [s.split(":", 3) for s in argv[3:]]
    levels = [int(s[0]) for s in specs]
    try:
        E = Expect(expect, levels)
    except (OSError, ValueError) as e:
        for L in levels:
            print("FAIL %s/d%d: expectation %s unreadable: %s" % (name, L, expect, e))
        return 1
    fails = 0
    for L, elf, info, log in ((int(s[0]), s[1], s[2], s[3]) for s in specs):
        why = check_level(E, L, elf, info, log)
        if why:
            fails += 1
            print("FAIL %s/d%d: %s" % (name, L, "; ".join(why)))
        else:
            print("ok %s/d%d" % (name, L))
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
