#!/usr/bin/python3
"""pfnmap: which physical pages of a raw x86_64 vmcore a debugger read.

usage:
  pfnmap.py pfns VMCORE STRACELOG          > PFNS   (one pfn a line, sorted)
  pfnmap.py classify VMCORE FACTS PFNS...  > TABLE
  pfnmap.py recommend VMCORE PFNS...       > TABLE

`pfns` turns an strace log of a debugger's reads of VMCORE (pread64, or
lseek then read, or mmap; traced with -P VMCORE -y -s 0) into the pfns
those bytes lie in: through the PT_LOAD headers of an ELF vmcore (bytes
outside every PT_LOAD, headers and notes, are counted on stderr), or
through the bitmap and page descriptors of a kdump-compressed file (the
zero block that all zero pages share is no pfn).

`classify` puts every pfn of each PFNS file in one class (the first that
matches, in the order of CLASSES below) and prints one table: a row per
class, a column per file. FACTS is a file of `name value` lines that
pfns-read.sh gets from the vmlinux (symbol addresses before KASLR, struct
offsets from gdb); everything else comes from the dump itself: VMCOREINFO,
the PRSTATUS notes and the old kernel's page tables, walked here from
SYMBOL(init_top_pgt).

`recommend` builds a first pass from the dump alone (no FACTS: what
kdumpinit has at capture time), part by part, and prints how much of
each PFNS file the parts hold so far (class Recommend).
"""
import bisect
import collections
import re
import struct
import sys

PAGE = 4096
START_KERNEL_MAP = 0xffffffff80000000
PTE_ADDR = 0x000ffffffffff000
PRESENT, HUGE = 0x1, 0x80


class Vmcore:
    def __init__(self, path):
        self.f = open(path, "rb")
        eh = self.pread(0, 64)
        if eh[:4] != b"\x7fELF" or eh[4] != 2:
            raise SystemExit(f"pfnmap: {path}: not a 64-bit ELF")
        phoff, = struct.unpack_from("<Q", eh, 32)
        phentsize, phnum = struct.unpack_from("<HH", eh, 54)
        self.loads, self.notes = [], []
        for i in range(phnum):
            t, _fl, off, va, pa, fsz, _msz, _al = struct.unpack_from(
                "<IIQQQQQQ", self.pread(phoff + i * phentsize, 56))
            if t == 1:
                self.loads.append((off, va, pa, fsz))
            elif t == 4:
                self.notes.append((off, fsz))
        self.vi, self.prstatus = {}, []
        for off, sz in self.notes:
            self._notes(self.pread(off, sz))
        self.phys_base = self.num("NUMBER(phys_base)")
        self.sme = self.num("NUMBER(sme_mask)", 0)
        self.levels = 5 if self.num("NUMBER(pgtable_l5_enabled)", 0) else 4
        self.koff = int(self.vi.get("KERNELOFFSET", "0"), 16)
        self.top = self.sym("init_top_pgt") - START_KERNEL_MAP + self.phys_base
        self._tlb = {}

    def pread(self, off, n):
        self.f.seek(off)
        return self.f.read(n)

    def _notes(self, b):
        i = 0
        while i + 12 <= len(b):
            nsz, dsz, typ = struct.unpack_from("<III", b, i)
            name = b[i + 12:i + 12 + nsz].rstrip(b"\0")
            d0 = i + 12 + (nsz + 3 & ~3)
            desc = b[d0:d0 + dsz]
            i = d0 + (dsz + 3 & ~3)
            if name == b"VMCOREINFO":
                for line in desc.decode("ascii", "replace").split("\n"):
                    k, _, v = line.partition("=")
                    if v:
                        self.vi[k] = v.rstrip("\0")
            elif name == b"CORE" and typ == 1:
                regs = struct.unpack_from("<27Q", desc, 112)
                self.prstatus.append({"rsp": regs[19], "rip": regs[16], "gs_base": regs[21]})

    def num(self, k, default=None):
        if k not in self.vi:
            if default is None:
                raise SystemExit(f"pfnmap: VMCOREINFO lacks {k}")
            return default
        return int(self.vi[k], 0)

    def sym(self, name):
        return int(self.vi[f"SYMBOL({name})"], 16)

    # physical reads through the PT_LOADs
    def off_to_phys(self, off):
        for o, _va, pa, fsz in self.loads:
            if o <= off < o + fsz:
                return pa + off - o
        return None

    def readp(self, pa, n):
        for o, _va, p, fsz in self.loads:
            if p <= pa and pa + n <= p + fsz:
                return self.pread(o + pa - p, n)
        return None

    def u64p(self, pa):
        b = self.readp(pa, 8)
        return None if b is None else struct.unpack("<Q", b)[0]

    # the old kernel's page tables
    def vtop(self, va):
        pg = va & ~(PAGE - 1)
        if pg not in self._tlb:
            self._tlb[pg] = self._walk1(pg)
        base = self._tlb[pg]
        return None if base is None else base + (va & (PAGE - 1))

    def _walk1(self, va):
        table = self.top
        for lvl in range(self.levels, 0, -1):
            shift = 12 + 9 * (lvl - 1)
            e = self.u64p(table + ((va >> shift) & 511) * 8)
            if e is None or not e & PRESENT:
                return None
            e &= ~self.sme
            if lvl == 1 or (lvl <= 3 and e & HUGE):
                mask = (1 << shift) - 1
                return (e & PTE_ADDR & ~mask) + (va & mask)
            table = e & PTE_ADDR
        return None

    def read(self, va, n):
        out = b""
        while n:
            k = min(n, PAGE - (va & (PAGE - 1)))
            pa = self.vtop(va)
            b = None if pa is None else self.readp(pa, k)
            if b is None:
                return None
            out, va, n = out + b, va + k, n - k
        return out

    def u64(self, va):
        b = self.read(va, 8)
        return None if b is None else struct.unpack("<Q", b)[0]

    def u32(self, va):
        b = self.read(va, 4)
        return None if b is None else struct.unpack("<I", b)[0]

    def walk_all(self):
        """Every table page under init_top_pgt, and the leaves outside the
        direct map as (va, pa, size)."""
        tables, leaves = set(), []
        self.leaf_flags = {}

        def rec(table, lvl, vbase):
            tables.add(table >> 12)
            shift = 12 + 9 * (lvl - 1)
            raw = self.readp(table, PAGE)
            if raw is None:
                return
            for i, e in enumerate(struct.unpack("<512Q", raw)):
                if not e & PRESENT:
                    continue
                e &= ~self.sme
                va = vbase | (i << shift)
                if lvl == self.levels and i >= 256:
                    va |= ~((1 << (shift + 9)) - 1) & 0xffffffffffffffff
                if lvl == 1 or (lvl <= 3 and e & HUGE):
                    size = 1 << shift
                    leaves.append((va, e & PTE_ADDR & ~(size - 1), size))
                    self.leaf_flags[va] = e
                else:
                    rec(e & PTE_ADDR, lvl - 1, va)
        rec(self.top, self.levels, 0)
        return tables, leaves


class KdumpMap:
    """File offset -> pfn for a kdump-compressed file (the 2nd bitmap says
    which pfns were dumped; their page_desc entries follow in pfn order)."""

    def __init__(self, path):
        f = open(path, "rb")
        h = f.read(464)
        bs, sub, bmb, mapnr = struct.unpack_from("<iiII", h, 428)
        f.seek(bs)
        s = f.read(104)
        if struct.unpack_from("<Q", s, 96)[0]:
            mapnr = struct.unpack_from("<Q", s, 96)[0]
        half = bmb // 2 * bs
        f.seek((1 + sub) * bs + half)
        bm = f.read(half)
        pfns = [i * 8 + b for i, byte in enumerate(bm) if byte for b in range(8) if byte >> b & 1]
        pfns = [p for p in pfns if p < mapnr]
        self.pfns = pfns           # every dumped pfn, zero pages included
        f.seek((1 + sub + bmb) * bs)
        descs = f.read(24 * len(pfns))
        count = collections.Counter()
        runs = []
        for i, p in enumerate(pfns):
            off, size = struct.unpack_from("<qI", descs, 24 * i)
            runs.append((off, size, p))
            count[off] += 1
        # the zero page is one block shared by every zero pfn: not a pfn
        self.runs = sorted(r for r in runs if count[r[0]] == 1)
        self.starts = [r[0] for r in self.runs]


def cmd_pfns(vmcore, log):
    with open(vmcore, "rb") as f:
        kd = f.read(8) == b"KDUMP   "
    if kd:
        return cmd_pfns_kdump(vmcore, log)
    vc = Vmcore(vmcore)
    pfns, outside = set(), 0

    def cover(off, n):
        nonlocal outside
        end = off + n
        while off < end:
            pa = vc.off_to_phys(off)
            step = min(end, (off // PAGE + 1) * PAGE) - off
            if pa is None:
                outside += step
            else:
                pfns.add(pa >> 12)
                step = min(step, PAGE - (pa & (PAGE - 1)))
            off += step

    for off, n in file_reads(log):
        cover(off, n)
    for p in sorted(pfns):
        print(p)
    print(f"pfnmap: {log}: {len(pfns)} pfns, {outside} bytes outside the PT_LOADs", file=sys.stderr)


def file_reads(log):
    """(offset, length) of every read of the traced file in an strace log,
    whichever way it was made: pread64 at its offset, read at the file
    position that openat and lseek set and reads move."""
    pos = {}
    for call, fd, off, ret in syscalls(log):
        if call == "openat":
            pos[str(ret)] = 0
        elif call == "lseek":
            pos[fd] = ret
        elif call == "read":
            if ret:
                yield pos.get(fd, 0), ret
            pos[fd] = pos.get(fd, 0) + ret
        elif ret:
            yield off, ret


def syscalls(log):
    rx = re.compile(r"^(?:\[pid\s+)?(\d+)\]?\s+(pread64|read|lseek|openat)\((\d+|AT_FDCWD)<[^>]*>, (.*)\) += (-?\d+)")
    for line in open(log, errors="replace"):
        m = rx.match(line)
        if not m:
            continue
        _pid, call, fd, args, ret = m.groups()
        ret = int(ret)
        if ret < 0:
            continue
        off = int(args.rsplit(",", 1)[1]) if call == "pread64" else None
        yield call, fd, off, ret
    # A mapping of the file counts as a read of all it maps (crash maps a
    # kdump-compressed file's bitmaps, not its pages).
    mx = re.compile(r"^(?:\[pid\s+)?\d+\]?\s+mmap\([^,]*, (\d+), [^,]*, [^,]*, (\d+)<[^>]*>, (0x[0-9a-f]+|\d+)\)")
    for line in open(log, errors="replace"):
        m = mx.match(line)
        if m:
            yield "pread64", m.group(2), int(m.group(3), 0), int(m.group(1))


def cmd_pfns_kdump(dump, log):
    km = KdumpMap(dump)
    pfns = set()

    def cover(off, n):
        # every page whose stored bytes overlap [off, off + n)
        i = max(0, bisect.bisect_right(km.starts, off) - 1)
        while i < len(km.runs) and km.runs[i][0] < off + n:
            o, size, p = km.runs[i]
            if o + size > off:
                pfns.add(p)
            i += 1

    for off, n in file_reads(log):
        cover(off, n)
    for p in sorted(pfns):
        print(p)
    print(f"pfnmap: {log}: {len(pfns)} pfns (kdump-compressed)", file=sys.stderr)


def load_facts(path):
    facts = {}
    for line in open(path):
        k, _, v = line.strip().partition(" ")
        if v:
            facts[k] = int(v, 0)
    return facts


class Classifier:
    def __init__(self, vc, facts):
        self.vc, self.f = vc, facts
        koff = vc.koff
        rd = lambda s: vc.u64(facts[s] + koff)  # noqa: E731  a pointer-sized variable
        self.page_offset = rd("page_offset_base")
        self.vmalloc_base = rd("vmalloc_base")
        self.vmemmap_base = rd("vmemmap_base")
        self.cls = {}              # pfn -> class, first writer wins
        tables, leaves = vc.walk_all()
        self.leaves = leaves
        for p in tables:
            self.put(p, "page tables (init_top_pgt tree)")
        self.mem_section()
        self.printk()
        self.percpu()
        self.stacks_and_tasks()
        self.image()
        self.regions()

    def put(self, pfn, name):
        self.cls.setdefault(pfn, name)

    def put_va(self, va, n, name):
        pg = va & ~(PAGE - 1)
        while pg < va + n:
            pa = self.vc.vtop(pg)
            if pa is not None:
                self.put(pa >> 12, name)
            pg += PAGE

    def mem_section(self):
        vc = self.vc
        root = vc.sym("mem_section")
        nroots = vc.num("LENGTH(mem_section)")
        ssize = vc.num("SIZE(mem_section)")
        self.put_va(root, nroots * 8, "mem_section root")
        per_root = PAGE // ssize
        self.sections = []
        for i in range(nroots):
            p = vc.u64(root + i * 8)
            if p:
                self.put_va(p, PAGE, "mem_section arrays")
                for j in range(per_root):
                    smm = vc.u64(p + j * ssize)
                    if smm:
                        self.sections.append((i * per_root + j, smm))
        # the usage maps (pageblock flags, subsection map) are the second word
        for nr, _smm in self.sections:
            p = vc.u64(root + (nr // per_root) * 8) + (nr % per_root) * ssize
            u = vc.u64(p + 8)
            if u:
                self.put_va(u, 64, "mem_section usage maps")

    def printk(self):
        vc = self.vc
        o = lambda k: vc.num(f"OFFSET({k})")  # noqa: E731
        rb = vc.u64(vc.sym("prb"))
        self.put_va(vc.sym("prb"), 8, "printk ring")
        self.put_va(rb, vc.num("SIZE(printk_ringbuffer)"), "printk ring")
        dr = rb + o("printk_ringbuffer.desc_ring")
        tr = rb + o("printk_ringbuffer.text_data_ring")
        n = 1 << vc.u32(dr + o("prb_desc_ring.count_bits"))
        self.put_va(vc.u64(dr + o("prb_desc_ring.descs")), n * vc.num("SIZE(prb_desc)"), "printk ring")
        self.put_va(vc.u64(dr + o("prb_desc_ring.infos")), n * vc.num("SIZE(printk_info)"), "printk ring")
        self.put_va(vc.u64(tr + o("prb_data_ring.data")), 1 << vc.u32(tr + o("prb_data_ring.size_bits")), "printk ring")

    def percpu(self):
        vc, f = self.vc, self.f
        ncpu = vc.u32(f["nr_cpu_ids"] + vc.koff)
        unit = vc.u32(f["pcpu_unit_size"] + vc.koff)
        self.percpu_offsets = []
        # zero-based (an absolute 0) until 6.14; from 6.15 a kernel-image
        # address, which KASLR moves
        start = f.get("__per_cpu_start", 0)
        if start:
            start += vc.koff
        for cpu in range(ncpu):
            off = vc.u64(f["__per_cpu_offset"] + vc.koff + cpu * 8)
            self.percpu_offsets.append(off)
            self.put_va(off + start, unit, "per-CPU areas")
        self.percpu_unit = unit

    def stacks_and_tasks(self):
        vc, f = self.vc, self.f
        koff = vc.koff
        head = f["init_task"] + koff
        o_tasks, o_stack, tsize = f["task_struct.tasks"], f["task_struct.stack"], f["sizeof.task_struct"]
        tsz = f.get("THREAD_SIZE", 16384)
        tasks, t = [], head
        for _ in range(100000):
            tasks.append(t)
            nxt = vc.u64(t + o_tasks)
            if nxt is None:
                break
            t = nxt - o_tasks
            if t == head:
                break
        # threads: the thread list of each group leader
        o_tg = f.get("task_struct.thread_group")
        if o_tg is not None:
            more = []
            for t in tasks:
                h = t + o_tg
                p = vc.u64(h)
                while p and p != h and len(more) < 100000:
                    more.append(p - o_tg)
                    p = vc.u64(p)
            tasks += [t for t in more if t not in set(tasks)]
        self.ntasks = len(tasks)
        rsps = [r["rsp"] for r in vc.prstatus]
        for t in tasks:
            st = vc.u64(t + o_stack)
            if st and any(st <= r < st + tsz for r in rsps):
                self.put_va(st, tsz, "stacks of the CPUs' tasks (prstatus rsp)")
        for t in tasks:
            st = vc.u64(t + o_stack)
            if st:
                self.put_va(st, tsz, "other task stacks")
        for t in tasks:
            self.put_va(t, tsize, "task_structs")

    def image(self):
        f, vc = self.f, self.vc
        # The init sections and the gaps that align text and rodata to 2 MiB
        # are freed after boot and reused by anything: page_kind() says
        # what they hold now.
        spans = [("_text", "_etext", "image text"),
                 ("__start_rodata", "__end_rodata", "image rodata (and ro_after_init)"),
                 ("_sdata", "_edata", "image data"),
                 ("__bss_start", "__bss_stop", "image bss"),
                 ("__bss_stop", "_end", "image brk"),
                 ("_edata", "__init_begin", "image data")]
        pb = vc.phys_base
        # "in the kernel image": the PT_LOAD that maps the kernel's text
        # mapping (vaddr at or above __START_KERNEL_map)
        self.image_pfns = set()
        for _o, va, pa, fsz in vc.loads:
            if va >= START_KERNEL_MAP:
                self.image_pfns.update(range(pa >> 12, (pa + fsz + PAGE - 1) >> 12))
        for a, b, name in spans:
            if a not in f or b not in f:
                continue
            lo = f[a] + vc.koff - START_KERNEL_MAP + pb
            hi = f[b] + vc.koff - START_KERNEL_MAP + pb
            for p in range(lo >> 12, (hi + PAGE - 1) >> 12):
                self.put(p, name)

    def regions(self):
        vm = self.vmemmap_base
        vmalloc = self.vmalloc_base
        self.vmemmap_pfns = set()
        for va, pa, size in self.leaves:
            if vm <= va < vm + (1 << 40):
                name = "struct page array (vmemmap)"
            elif vmalloc <= va < vmalloc + (32 << 40):
                name = "other vmalloc"
            elif va >= 0xffffffffa0000000 + (1 << 29) and va < 0xffffffffff000000:
                name = "modules"
            elif 0xfffffe0000000000 <= va < 0xffffff0000000000:
                name = "cpu_entry_area"
            else:
                continue
            for p in range(pa >> 12, (pa + size) >> 12):
                self.put(p, name)

    def page_kind(self, pfn):
        """slab / other, from the pfn's struct page."""
        vc = self.vc
        sp = self.vmemmap_base + pfn * vc.num("SIZE(page)")
        flags = vc.u64(sp)
        if flags is None:
            return "no struct page"
        ch = vc.u64(sp + vc.num("OFFSET(page.compound_head)", 8))
        head = sp
        if ch is not None and ch & 1:
            head = ch - 1
            flags = vc.u64(head) or 0
        mc = vc.u32(head + vc.num("OFFSET(page._mapcount)")) or 0
        own = vc.u32(sp + vc.num("OFFSET(page._mapcount)")) or 0
        if "NUMBER(PG_slab)" in vc.vi:        # before 6.10: a page flag
            if flags >> vc.num("NUMBER(PG_slab)") & 1:
                return "slab"
            if own == vc.num("NUMBER(PAGE_BUDDY_MAPCOUNT_VALUE)") & 0xffffffff:
                return "other (free)"
            if flags >> 12 & 1:               # PG_reserved on 6.1
                return "other (PG_reserved)"
        else:                                 # 6.10 on: a page type
            if mc >> 24 == 0xf5:
                return "slab"
            if own >> 24 == 0xf0:
                return "other (free)"
        if flags >> vc.num("NUMBER(PG_lru)") & 1:
            return "other (LRU: page cache, anon)"
        return "other (no slab, LRU or reserved mark)"

    def classify(self, pfn):
        c = self.cls.get(pfn)
        if c is None:
            c = self.page_kind(pfn)
            self.cls[pfn] = c
        return c


ORDER = ["page tables (init_top_pgt tree)", "mem_section root", "mem_section arrays",
         "mem_section usage maps", "printk ring", "per-CPU areas",
         "stacks of the CPUs' tasks (prstatus rsp)", "other task stacks", "task_structs",
         "image text", "image rodata (and ro_after_init)", "image data", "image bss",
         "image brk", "struct page array (vmemmap)", "modules",
         "cpu_entry_area", "other vmalloc", "slab", "other (PG_reserved)", "other (free)",
         "other (LRU: page cache, anon)",
         "other (no slab, LRU or reserved mark)", "no struct page"]


def cmd_classify(vmcore, factsfile, files):
    vc = Vmcore(vmcore)
    cl = Classifier(vc, load_facts(factsfile))
    sets = [set(int(x) for x in open(p) if x.strip()) for p in files]
    counts = [collections.Counter(cl.classify(p) for p in s) for s in sets]
    inimg = [sum(1 for p in s if p in cl.image_pfns) for s in sets]
    freed = [sum(1 for p in s if p in cl.image_pfns and not cl.cls[p].startswith(("image", "page tables", "printk", "mem_section")))
             for s in sets]
    names = [p.rsplit("/", 1)[-1].removesuffix(".pfns") for p in files]
    print(f"# {vc.vi.get('OSRELEASE')}: {len(vc.prstatus)} CPUs, {cl.ntasks} tasks, "
          f"per-CPU unit {cl.percpu_unit} bytes, {len(cl.sections)} present sections")
    print("| class | " + " | ".join(names) + " |")
    print("|---|" + "---:|" * len(names))
    seen = set().union(*counts)
    for c in ORDER + sorted(seen - set(ORDER)):
        if c in seen:
            print(f"| {c} | " + " | ".join(str(k[c]) for k in counts) + " |")
    print("| **total** | " + " | ".join(str(len(s)) for s in sets) + " |")
    print("| in the kernel image | " + " | ".join(str(k) for k in inimg) + " |")
    print("| of which in its freed parts (init, alignment gaps), reused | " + " | ".join(str(k) for k in freed) + " |")
    print("| outside it | " + " | ".join(str(len(s) - k) for s, k in zip(sets, inimg)) + " |")


class Recommend:
    """The first pass as kdumpinit could find it with no vmlinux: from
    VMCOREINFO, the PRSTATUS notes, the PT_LOADs and the old kernel's page
    tables only. Each part is a set of pfns."""

    def __init__(self, vc):
        self.vc = vc
        tables, self.leaves = vc.walk_all()
        self.parts = collections.OrderedDict()
        img = [(pa, fsz) for _o, va, pa, fsz in vc.loads if va >= START_KERNEL_MAP]
        self.image = set()
        for pa, fsz in img:
            self.image.update(range(pa >> 12, (pa + fsz + PAGE - 1) >> 12))
        rw, ro, x = self.image_by_permission()
        P = self.parts
        P["page tables"] = set(tables)
        P["mem_section root, arrays, usage maps"] = self.mem_section()
        P["node_data, the pglist_data of each node"] = self.node_data()
        P["printk ring"] = self.printk()
        P["CPUs' stacks (prstatus rsp, 16 KiB)"] = self.stacks()
        P["per-CPU areas: cpu_entry_area pages, 128 KiB below, 256 KiB above"] = self.percpu()
        P["modules' memory (module area mappings)"] = self.region(0xffffffffc0000000, 0xffffffffff000000)
        P["image, writable (data, bss)"] = rw
        P["one pointer hop from the parts above (direct map, vmalloc)"] = self.hop(set().union(*P.values()) - P["page tables"])
        P["image, read-only not executable (rodata, ro_after_init)"] = ro
        P["image, executable (text)"] = x
        P["struct page array (vmemmap)"] = self.vmemmap()
        P["slab pages"] = self.slab()

    def hop(self, src):
        # Every aligned word of the source pages that is the address of a
        # page in the direct map (its base: a PT_LOAD's vaddr - paddr) or in
        # the vmalloc/vmemmap part of the kernel half (through the page
        # tables) names a page that is added. Zero pages add nothing.
        vc = self.vc
        po = min((va - pa for _o, va, pa, _f in vc.loads if va < START_KERNEL_MAP), default=None)
        top = max(pa + f for _o, _va, pa, f in vc.loads)
        out = set()
        for p in sorted(src):
            b = vc.readp(p << 12, PAGE)
            if b is None or b.count(0) == PAGE:
                continue
            for w in struct.unpack("<512Q", b):
                if w < 0xff00000000000000 or w >= START_KERNEL_MAP:
                    continue
                if po is not None and po <= w < po + top:
                    out.add((w - po) >> 12)
                elif w >= 0xffffc00000000000:
                    pa = vc.vtop(w)
                    if pa is not None:
                        out.add(pa >> 12)
        return out

    def node_data(self):
        vc = self.vc
        out = set()
        arr = vc.sym("node_data")
        for i in range(vc.num("LENGTH(node_data)", 1)):
            p = vc.u64(arr + i * 8)
            if p:
                out |= self.range_va(arr + i * 8, 8) | self.range_va(p, vc.num("SIZE(pglist_data)"))
        return out

    def range_va(self, va, n):
        out = set()
        pg = va & ~(PAGE - 1)
        while pg < va + n:
            pa = self.vc.vtop(pg)
            if pa is not None:
                out.add(pa >> 12)
            pg += PAGE
        return out

    def mem_section(self):
        vc = self.vc
        root, ssize = vc.sym("mem_section"), vc.num("SIZE(mem_section)")
        out = self.range_va(root, vc.num("LENGTH(mem_section)") * 8)
        self.sections = []
        for i in range(vc.num("LENGTH(mem_section)")):
            p = vc.u64(root + i * 8)
            if not p:
                continue
            out |= self.range_va(p, PAGE)
            for j in range(PAGE // ssize):
                smm = vc.u64(p + j * ssize)
                if smm:
                    self.sections.append((i * (PAGE // ssize) + j, smm))
                    u = vc.u64(p + j * ssize + 8)
                    if u:
                        out |= self.range_va(u, 64)
        return out

    def printk(self):
        vc = self.vc
        o = lambda k: vc.num(f"OFFSET({k})")  # noqa: E731
        rb = vc.u64(vc.sym("prb"))
        out = self.range_va(vc.sym("prb"), 8) | self.range_va(rb, vc.num("SIZE(printk_ringbuffer)"))
        dr = rb + o("printk_ringbuffer.desc_ring")
        tr = rb + o("printk_ringbuffer.text_data_ring")
        n = 1 << vc.u32(dr + o("prb_desc_ring.count_bits"))
        out |= self.range_va(vc.u64(dr + o("prb_desc_ring.descs")), n * vc.num("SIZE(prb_desc)"))
        out |= self.range_va(vc.u64(dr + o("prb_desc_ring.infos")), n * vc.num("SIZE(printk_info)"))
        out |= self.range_va(vc.u64(tr + o("prb_data_ring.data")), 1 << vc.u32(tr + o("prb_data_ring.size_bits")))
        return out

    def stacks(self):
        # THREAD_SIZE is 16 KiB on x86_64 (with KASAN 32: not Debian's)
        out = set()
        for r in self.vc.prstatus:
            out |= self.range_va(r["rsp"] & ~0x3fff, 0x4000)
        return out

    def image_by_permission(self):
        rw, ro, x = set(), set(), set()
        for va, pa, size in self.leaves:
            if not START_KERNEL_MAP <= va < 0xffffffffc0000000:
                continue
            e = self.vc.leaf_flags[va]
            for p in range(pa >> 12, (pa + size) >> 12):
                if p not in self.image:
                    continue
                if not e >> 63 & 1:
                    x.add(p)
                elif e & 2:
                    rw.add(p)
                else:
                    ro.add(p)
        return rw, ro, x

    def region(self, lo, hi):
        out = set()
        for va, pa, size in self.leaves:
            if lo <= va < hi:
                out.update(range(pa >> 12, (pa + size) >> 12))
        return out

    def percpu(self):
        # The cpu_entry_area maps, per CPU, pages of that CPU's static
        # per-CPU area (GDT, TSS, entry and exception stacks); the area's
        # other variables lie around them.
        out = set()
        for p in self.region(0xfffffe0000000000, 0xffffff0000000000):
            if p in self.image:
                continue
            out.update(range(p - 32, p + 64))
        return out

    def vmemmap(self):
        # section_mem_map, its flag bits cleared, is the struct page of pfn 0
        # (the vmemmap base) in every section
        vc = self.vc
        out = set()
        psz = vc.num("SIZE(page)")
        per = 1 << (vc.num("NUMBER(SECTION_SIZE_BITS)") - 12)
        for nr, smm in self.sections:
            base = (smm & ~0x3f) + nr * per * psz
            out |= self.range_va(base, per * psz)
        self.vmemmap_base = self.sections[0][1] & ~0x3f if self.sections else 0
        return out

    def slab(self):
        vc = self.vc
        psz = vc.num("SIZE(page)")
        out = set()
        per = 1 << (vc.num("NUMBER(SECTION_SIZE_BITS)") - 12)
        o_mc = vc.num("OFFSET(page._mapcount)")
        o_ch = vc.num("OFFSET(page.compound_head)", 8) if "OFFSET(page.compound_head)" in vc.vi else None
        for nr, _smm in self.sections:
            raw = vc.read(self.vmemmap_base + nr * per * psz, per * psz)
            if raw is None:
                continue
            for i in range(per):
                sp = raw[i * psz:(i + 1) * psz]
                flags, = struct.unpack_from("<Q", sp, 0)
                if o_ch is not None:
                    ch, = struct.unpack_from("<Q", sp, o_ch)
                    if ch & 1:
                        continue          # tails follow their head below
                if "NUMBER(PG_slab)" in vc.vi:
                    is_slab = flags >> vc.num("NUMBER(PG_slab)") & 1
                else:
                    is_slab = struct.unpack_from("<I", sp, o_mc)[0] >> 24 == 0xf5
                if is_slab:
                    order = 0
                    if flags & vc.num("NUMBER(PG_head_mask)", 1 << 16) and i + 1 < per:
                        t = raw[(i + 1) * psz:(i + 2) * psz]
                        order = t[vc.num("OFFSET(page.compound_order)", 17)] if "OFFSET(page.compound_order)" in vc.vi else struct.unpack_from("<Q", t, 0)[0] & 0xff
                    out.update(range(nr * per + i, nr * per + i + (1 << order)))
        return out


def cmd_recommend(vmcore, files):
    vc = Vmcore(vmcore)
    r = Recommend(vc)
    # vmemmap() found the sections; slab() needs its base: keep the order
    sets = [set(int(x) for x in open(p) if x.strip()) for p in files]
    names = [p.rsplit("/", 1)[-1].removesuffix(".pfns") for p in files]
    print("| part (cumulative) | pages | non-zero | non-zero so far | " + " | ".join(names) + " |")
    print("|---|---:|---:|---:|" + "---:|" * len(names))
    cum, cumnz = set(), 0
    for name, part in r.parts.items():
        new = part - cum
        nz = 0
        for p in new:
            b = vc.readp(p << 12, PAGE)
            nz += b is not None and b.count(0) != PAGE
        cum |= part
        cumnz += nz
        cov = [f"{100 * len(s & cum) / len(s):.0f} %" if s else "-" for s in sets]
        print(f"| + {name} | {len(new)} | {nz} | {cumnz} ({cumnz * PAGE / 1e6:.1f} MB) | " + " | ".join(cov) + " |")
    print("| (pfns measured) | | | | " + " | ".join(str(len(s)) for s in sets) + " |")
    for n, s in zip(names, sets):
        miss = sorted(s - cum)
        if miss:
            print(f"# {n}: {len(miss)} pfns outside: " + " ".join(str(p) for p in miss[:40]) + (" ..." if len(miss) > 40 else ""))


def main():
    a = sys.argv[1:]
    if len(a) == 3 and a[0] == "pfns":
        cmd_pfns(a[1], a[2])
    elif len(a) >= 3 and a[0] == "recommend":
        cmd_recommend(a[1], a[2:])
    elif len(a) >= 4 and a[0] == "classify":
        cmd_classify(a[1], a[2], a[3:])
    else:
        sys.exit(__doc__.split("\n\n")[1])


if __name__ == "__main__":
    main()
