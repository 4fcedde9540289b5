#!/usr/bin/env python3
"""Regenerates the seed corpora in tests/fuzz/corpus/ (committed; run this
only to refresh them).

    tests/fuzz/mkcorpus.py [--kdumpinit build/kdumpinit]
                           [--mkvmcore build/tools/mkvmcore] [--out tests/fuzz/corpus]

Everything is synthetic and built here from first principles:

* fuzz_memmap / fuzz_dmesg: fake physical memory in the layout of
  fuzz_vmcore_mem.h holding x86_64 page tables (4- and 5-level, 1 GiB,
  2 MiB and 4 KiB leaves), a SPARSEMEM_EXTREME mem_section, struct pages
  of every class the filter knows (cache, private, anon, THP, hugetlb,
  buddy, hwpoison, offline, slab) in the 6.1 and 6.12 layouts, and a
  printk ring buffer with a few records;
* fuzz_vmcore: ELF vmcores, from mkvmcore and from the same fake memory;
* fuzz_dumpfile: device images written by `kdumpinit capture` from those
  vmcores, claim re-made at data_offset 131072 (KDI_DATA_MIN, the lowest
  the claim rule takes) and stored in the harness's compact layout (the
  4 KiB superblock area, then the stream; fuzz_dumpfile.c expands it) so
  that each stays small, with control byte 0, plus truncated and
  re-hashed variants;
* fuzz_vmcoreinfo, fuzz_config: texts and disk heads;
* regress-*: reproducers of bugs the fuzzers found (now fixed), derived
  from the seeds above; see crashes/README.md. Other regress-* files in a
  corpus directory (added by hand) are left alone, and so are real-*
  (damaged real dumps made small by tests/damage/streamdamage.py seeds);
  every other file there is replaced.

Seeds are kept under 64 KiB each. The captures carry random dump ids and
times, so a rerun changes those bytes; nothing else depends on chance.
"""
import argparse
import os
import shutil
import struct
import subprocess
import sys
import tempfile

PAGE = 4096
DATA_MIN = 128 << 10    # dump/format.h KDI_DATA_MIN: the lowest data_offset claimed
SB_AREA = 4096          # dump/format.h KDI_SB_AREA: the stream's offset in a compact seed
START_KERNEL_MAP = 0xffffffff80000000
INIT_TOP_PGT = 0xffffffff82a0a000
PTE_P = 0x63            # present, rw, accessed, dirty
PTE_PSE = 0x80

M64 = (1 << 64) - 1


def s32(v):
    return v & 0xffffffff


# ---------------------------------------------------------------- xxh64
P1, P2, P3, P4, P5 = (0x9E3779B185EBCA87, 0xC2B2AE3D27D4EB4F, 0x165667B19E3779F9,
                      0x85EBCA77C2B2AE63, 0x27D4EB2F165667C5)


def _rotl(x, r):
    return ((x << r) | (x >> (64 - r))) & M64


def _round(acc, v):
    acc = (acc + v * P2) & M64
    return (_rotl(acc, 31) * P1) & M64


def _merge(acc, v):
    acc ^= _round(0, v)
    return (acc * P1 + P4) & M64


def xxh64(data, seed=0):
    """XXH64 from its public specification (tests the seeds, not the tool)."""
    n = len(data)
    i = 0
    if n >= 32:
        v1 = (seed + P1 + P2) & M64
        v2 = (seed + P2) & M64
        v3 = seed
        v4 = (seed - P1) & M64
        while i + 32 <= n:
            a, b, c, d = struct.unpack_from('<4Q', data, i)
            v1, v2, v3, v4 = _round(v1, a), _round(v2, b), _round(v3, c), _round(v4, d)
            i += 32
        h = (_rotl(v1, 1) + _rotl(v2, 7) + _rotl(v3, 12) + _rotl(v4, 18)) & M64
        for v in (v1, v2, v3, v4):
            h = _merge(h, v)
    else:
        h = (seed + P5) & M64
    h = (h + n) & M64
    while i + 8 <= n:
        (k,) = struct.unpack_from('<Q', data, i)
        h ^= _round(0, k)
        h = (_rotl(h, 27) * P1 + P4) & M64
        i += 8
    if i + 4 <= n:
        (k,) = struct.unpack_from('<I', data, i)
        h ^= (k * P1) & M64
        h = (_rotl(h, 23) * P2 + P3) & M64
        i += 4
    while i < n:
        h ^= (data[i] * P5) & M64
        h = (_rotl(h, 11) * P1) & M64
        i += 1
    h ^= h >> 33
    h = (h * P2) & M64
    h ^= h >> 29
    h = (h * P3) & M64
    h ^= h >> 32
    return h


# ---------------------------------------------------------------- fake memory
class Mem:
    def __init__(self, npages):
        self.b = bytearray(npages * PAGE)
        # Page 0: struct pages (pfn p at p * 64, up to pfn 15), mem_section
        # and init_uts_ns; page 1: the printk ring; tables from page 2.
        self.next = 2

    def alloc(self):
        p = self.next
        self.next += 1
        assert p * PAGE < len(self.b), "out of fake pages"
        return p * PAGE

    def put(self, pa, data):
        self.b[pa:pa + len(data)] = data

    def q(self, pa, v):
        struct.pack_into('<Q', self.b, pa, v & M64)

    def rq(self, pa):
        return struct.unpack_from('<Q', self.b, pa)[0]


class PageTables:
    """x86_64 page tables in Mem; tables shared where entries agree."""

    def __init__(self, mem, levels):
        self.m = mem
        self.levels = levels
        self.root = mem.alloc()
        self.tables = {}

    def _table(self, level, va):
        key = (level, va >> (12 + 9 * level))
        if key not in self.tables:
            self.tables[key] = self.m.alloc()
        return self.tables[key]

    def map(self, va, pa, leaf_level, shared=None):
        """Maps va -> pa with a leaf at leaf_level (3: 1 GiB, 2: 2 MiB,
        1: 4 KiB). `shared` names a table page to reuse below the root."""
        table = self.root
        for level in range(self.levels, leaf_level, -1):
            idx = (va >> (12 + 9 * (level - 1))) & 511
            e = self.m.rq(table + idx * 8)
            if e & 1:
                table = e & 0x000ffffffffff000
                continue
            nxt = shared.get(level - 1) if shared else None
            if nxt is None:
                nxt = self._table(level - 1, va)
            self.m.q(table + idx * 8, nxt | PTE_P)
            table = nxt
        idx = (va >> (12 + 9 * (leaf_level - 1))) & 511
        self.m.q(table + idx * 8, pa | PTE_P | (PTE_PSE if leaf_level > 1 else 0))


LAYOUT_61 = dict(flags=0, head=8, dtor=16, order=17, mapping=24, private=40,
                 mapcount=48, refcount=52, size=64)


def vmcoreinfo_text(v):
    return ''.join('%s=%s\n' % kv for kv in v) + '\0'


def base_keys(kind, direct, ms_sym, phys_base, l5):
    L = LAYOUT_61
    keys = [
        ('OSRELEASE', '6.12.0-fuzz' if kind == '612' else '6.1.0-fuzz'),
        ('PAGESIZE', '4096'),
        ('SYMBOL(init_uts_ns)', None),       # filled by the caller
        ('OFFSET(uts_namespace.name)', '0'),
        ('SYMBOL(init_top_pgt)', '%x' % INIT_TOP_PGT),
        ('NUMBER(phys_base)', str(phys_base)),
        ('SYMBOL(mem_section)', '%x' % ms_sym),
        ('LENGTH(mem_section)', '262144' if l5 else '2048'),
        ('SIZE(mem_section)', '32' if l5 else '16'),
        ('OFFSET(mem_section.section_mem_map)', '0'),
        ('NUMBER(SECTION_SIZE_BITS)', '27'),
        ('NUMBER(MAX_PHYSMEM_BITS)', '52' if l5 else '46'),
        ('SIZE(page)', str(L['size'])),
        ('OFFSET(page.flags)', str(L['flags'])),
        ('OFFSET(page._refcount)', str(L['refcount'])),
        ('OFFSET(page.mapping)', str(L['mapping'])),
        ('OFFSET(page.lru)', '8'),
        ('OFFSET(page._mapcount)', str(L['mapcount'])),
        ('OFFSET(page.private)', str(L['private'])),
        ('OFFSET(page.compound_head)', str(L['head'])),
        ('LENGTH(zone.free_area)', '11'),
        ('NUMBER(pgtable_l5_enabled)', '1' if l5 else '0'),
        # Every x86_64 kernel since 4.16 exports it; without it (or
        # pgtable_l5_enabled) kdumpinit does not walk the page tables.
        ('NUMBER(sme_mask)', '0'),
    ]
    if kind == '61':
        keys += [
            ('OFFSET(page.compound_dtor)', str(L['dtor'])),
            ('OFFSET(page.compound_order)', str(L['order'])),
            ('NUMBER(PG_lru)', '4'), ('NUMBER(PG_private)', '13'),
            ('NUMBER(PG_swapcache)', '10'), ('NUMBER(PG_swapbacked)', '19'),
            ('NUMBER(PG_slab)', '9'), ('NUMBER(PG_hwpoison)', '23'),
            ('NUMBER(PG_head_mask)', '65536'),
            ('NUMBER(PAGE_BUDDY_MAPCOUNT_VALUE)', '-129'),
            ('NUMBER(PAGE_OFFLINE_MAPCOUNT_VALUE)', '-257'),
            ('NUMBER(HUGETLB_PAGE_DTOR)', '2'),
        ]
    else:
        keys += [
            ('NUMBER(PG_lru)', '5'), ('NUMBER(PG_private)', '12'),
            ('NUMBER(PG_swapcache)', '9'), ('NUMBER(PG_swapbacked)', '18'),
            ('NUMBER(PG_hwpoison)', '22'), ('NUMBER(PG_head_mask)', '64'),
            ('NUMBER(PAGE_BUDDY_MAPCOUNT_VALUE)', '-268435456'),
            ('NUMBER(PAGE_OFFLINE_MAPCOUNT_VALUE)', '-251658240'),
            ('NUMBER(PAGE_HUGETLB_MAPCOUNT_VALUE)', '-201326592'),
            ('NUMBER(PAGE_SLAB_MAPCOUNT_VALUE)', '-184549376'),
        ]
    keys.append(('CRASHTIME', '1700000000'))
    return keys


PRB_KEYS = [
    ('SIZE(printk_ringbuffer)', '88'),
    ('OFFSET(printk_ringbuffer.desc_ring)', '0'),
    ('OFFSET(printk_ringbuffer.text_data_ring)', '48'),
    ('OFFSET(prb_desc_ring.count_bits)', '0'),
    ('OFFSET(prb_desc_ring.descs)', '8'),
    ('OFFSET(prb_desc_ring.infos)', '16'),
    ('OFFSET(prb_desc_ring.head_id)', '24'),
    ('OFFSET(prb_desc_ring.tail_id)', '32'),
    ('SIZE(prb_desc)', '24'),
    ('OFFSET(prb_desc.state_var)', '0'),
    ('OFFSET(prb_desc.text_blk_lpos)', '8'),
    ('OFFSET(prb_data_blk_lpos.begin)', '0'),
    ('OFFSET(prb_data_blk_lpos.next)', '8'),
    ('SIZE(printk_info)', '88'),
    ('OFFSET(printk_info.seq)', '0'),
    ('OFFSET(printk_info.ts_nsec)', '8'),
    ('OFFSET(printk_info.text_len)', '16'),
    ('OFFSET(prb_data_ring.size_bits)', '0'),
    ('OFFSET(prb_data_ring.data)', '8'),
    ('OFFSET(atomic_long_t.counter)', '0'),
]


def build_memory(kind='61', l5=False, npages=15, vmemmap_4k=False, direct_2m=False,
                 program=None, prb=True, small_sections=False):
    """Returns (memory bytes, VMCOREINFO text) for a fake crashed kernel.

    memmap reads a window's struct pages in one piece per page-table leaf
    and section, and a piece must lie in one PT_LOAD: with a 1 GiB or 2 MiB
    vmemmap leaf that is 256 KiB, more than these files hold. Such
    variants use small_sections (SECTION_SIZE_BITS 15: 8 pfns, 512 bytes
    of struct pages per section; LENGTH(mem_section) left out)."""
    direct = 0xff11000000000000 if l5 else 0xffff888000000000
    vmemmap = 0xffd4000000000000 if l5 else 0xffffea0000000000
    m = Mem(npages)
    pt = PageTables(m, 5 if l5 else 4)
    # One PUD page serves the direct map, vmemmap and the kernel image:
    # all three start with a 1 GiB leaf onto physical 0.
    shared = {}
    if not (vmemmap_4k or direct_2m):
        pud = m.alloc()
        shared = {3: pud}
        if l5:
            shared[4] = m.alloc()
    if direct_2m:
        pt.map(direct, 0, 2)
    else:
        pt.map(direct, 0, 3, shared)
    if vmemmap_4k:
        pt.map(vmemmap, 0, 1)      # the struct pages: physical page 0
    else:
        pt.map(vmemmap, 0, 3, shared)
    pt.map(START_KERNEL_MAP, 0, 3, shared)
    # cr3 = init_top_pgt - __START_KERNEL_map + phys_base
    phys_base = pt.root - (INIT_TOP_PGT - START_KERNEL_MAP)

    # mem_section: root array, then the sections of root 0.
    ms = 1024                               # roots 0..255, then the sections
    ms_size = 32 if l5 else 16
    m.q(ms, direct + ms + 2048)
    for nr in range((npages + 7) // 8 if small_sections else 1):
        m.q(ms + 2048 + nr * ms_size, vmemmap | 0x3)    # present | has mem_map
    ms_sym = direct + ms

    keys = base_keys(kind, direct, ms_sym, phys_base, l5)
    if small_sections:
        keys = [kv for kv in keys if kv[0] != 'LENGTH(mem_section)']
        keys = [('NUMBER(SECTION_SIZE_BITS)', '15') if kv[0] == 'NUMBER(SECTION_SIZE_BITS)' else kv
                for kv in keys]
    uts_pa = ms + 2048 + 128                # after the sections
    uts = b''.join(s.ljust(65, b'\0') for s in
                   (b'Linux', b'fuzzhost', keys[0][1].encode(), b'#1 SMP', b'x86_64', b'(none)'))
    m.put(uts_pa, uts)
    keys[2] = ('SYMBOL(init_uts_ns)', '%x' % ((uts_pa - phys_base + START_KERNEL_MAP) & M64))

    if prb:
        keys += PRB_KEYS
        ring = PAGE
        var, rb, descs, infos = ring, ring + 256, ring + 1024, ring + 2048
        text = ring + 3072                   # 1 KiB text ring
        cbits, sbits = 3, 10
        m.q(var, START_KERNEL_MAP + rb)         # prb -> the ring
        struct.pack_into('<I', m.b, rb + 0, cbits)
        m.q(rb + 8, direct + descs)
        m.q(rb + 16, direct + infos)
        struct.pack_into('<I', m.b, rb + 48, sbits)
        m.q(rb + 56, direct + text)
        msgs = [b'Linux version 6.1.0-fuzz', b'Command line: console=ttyS0',
                b'two\nlines', b'bytes \x01\xff\x7f', b'Kernel panic - not syncing: fuzz']
        size = 1 << sbits
        lpos = 0x100000000 - 100               # near a wrap of the logical space
        first = 20
        for k, t in enumerate(msgs):
            rid = first + k
            blk = 8 + len(t)
            blk = (blk + 7) & ~7
            begin = lpos
            if (lpos % size) + blk > size:
                # A wrapped block, as the kernel stores it: begin stays at
                # the end of the ring, the data starts the ring, next counts
                # from there.
                nxt = lpos + (size - lpos % size) + blk
                off = 0
            else:
                nxt = lpos + blk
                off = begin % size
            m.q(text + off, rid)
            m.put(text + off + 8, t)
            d = descs + (rid % (1 << cbits)) * 24
            m.q(d, (2 << 62) | rid)              # finalized
            m.q(d + 8, begin)
            m.q(d + 16, nxt)
            i = infos + (rid % (1 << cbits)) * 88
            m.q(i, rid)
            m.q(i + 8, 1000000 * (k + 1) * 1234567)
            struct.pack_into('<H', m.b, i + 16, len(t))
            lpos = nxt
        m.q(rb + 24, first + len(msgs) - 1)      # head_id
        m.q(rb + 32, first)                      # tail_id
        keys.append(('SYMBOL(prb)', '%x' % (START_KERNEL_MAP + var)))

    # Struct pages at physical 0: pfn p at p * 64.
    if program:
        program(m, kind, vmemmap, npages)
    for p in range(m.next):                      # used pages: reserved
        if m.rq(p * 64) == 0:
            m.q(p * 64, 1 << 12)
    build_memory.used = m.next                   # pages before the zero tail
    return bytes(m.b), vmcoreinfo_text(keys)


def sp(m, pfn, **f):
    L = LAYOUT_61
    base = pfn * L['size']
    for k, v in f.items():
        if k in ('mapcount', 'refcount'):
            struct.pack_into('<I', m.b, base + L[k], s32(v))
        elif k in ('dtor', 'order'):
            m.b[base + L[k]] = v
        else:
            m.q(base + L[k], v)


def prog_mixed(m, kind, vmemmap, n):
    """One page of each class from pfn 8 on (pfns below hold tables)."""
    lru, priv, head, hwp = (4, 13, 1 << 16, 23) if kind == '61' else (5, 12, 1 << 6, 22)
    buddy = -129 if kind == '61' else -268435456
    offline = -257 if kind == '61' else -251658240
    sp(m, 8, flags=1 << lru, mapping=0xffff888000200000, mapcount=-1)          # cache
    sp(m, 9, flags=(1 << lru) | (1 << priv), mapping=0xffff888000200000, private=1)
    sp(m, 10, mapping=0xffff888000300001, flags=1 << lru)                      # anon
    sp(m, 11, flags=1 << hwp)
    # pfns 12, 13: an anon THP of order 1; 14: offline
    sp(m, 12, flags=head | (1 << lru), mapping=0xffff888000300001)
    if kind == '61':
        sp(m, 13, head=vmemmap + 12 * 64 + 1, dtor=1, order=1)
    else:
        sp(m, 13, head=vmemmap + 12 * 64 + 1, flags=1)
    sp(m, 14, mapcount=offline)
    sp(m, 7, mapcount=buddy, private=0)


def prog_free(m, kind, vmemmap, n):
    buddy = -129 if kind == '61' else -268435456
    sp(m, 8, mapcount=buddy, private=3)          # 8..15 free
    if kind == '612':
        sp(m, 7, mapcount=-184549376)            # slab page type


def prog_hugetlb(m, kind, vmemmap, n):
    head = (1 << 16) if kind == '61' else (1 << 6)
    if kind == '61':
        sp(m, 8, flags=head)
        sp(m, 9, head=vmemmap + 8 * 64 + 1, dtor=2, order=2)
        sp(m, 14, flags=1 << 9)                  # PG_slab
    else:
        sp(m, 8, flags=head, mapcount=-201326592)
        sp(m, 9, head=vmemmap + 8 * 64 + 1, flags=2)
        sp(m, 14, flags=1 << 7, mapping=0xffff888000300001)   # Q1: bit 7 as slab
    for p in range(10, 12):
        sp(m, p, head=vmemmap + 8 * 64 + 1)
    sp(m, 12, mapcount=-129 if kind == '61' else -268435456, private=1)


def fz_header(segs, flags=0, level=31, fpages=0):
    """fuzz_vmcore_mem.h header: segs = [(paddr, filesz, extra, fileoff)];
    the file is zero-extended to fpages pages."""
    if len(segs) > 1:
        flags |= 1
    s0 = segs[0]
    s1 = segs[1] if len(segs) > 1 else (0, 0, 0, 0)
    return struct.pack('<BBHQIIQIII', flags, level, fpages, s0[0], s0[1], s0[2],
                       s1[0], s1[1], s1[2], s1[3])


def fz_seed(hdr, vi, mem):
    """A fuzz_vmcore_mem.h input: memory trimmed of its zero tail (the
    header's fpages puts it back)."""
    body = mem.rstrip(b'\0')
    body = body + b'\0' * (-len(body) % 8)
    return hdr + vi.encode() + body


def edit_vmcoreinfo(seed, edits, mem_edit=None):
    """The seed with VMCOREINFO lines replaced, added (value) or removed
    (None), and its memory edited in place by mem_edit."""
    hdr, rest = seed[:40], seed[40:]
    nul = rest.index(b'\0')
    lines, mem = rest[:nul].decode().split('\n'), bytearray(rest[nul + 1:])
    for k, v in edits.items():
        hit = [i for i, l in enumerate(lines) if l.startswith(k + '=')]
        for i in hit:
            lines[i] = None if v is None else '%s=%s' % (k, v)
        if not hit and v is not None:
            lines.insert(0, '%s=%s' % (k, v))
    if mem_edit:
        mem_edit(mem)
    return hdr + '\n'.join(l for l in lines if l is not None).encode() + b'\0' + bytes(mem)


def rehash_stream(img, base=SB_AREA):
    """Chunk hashes recomputed after an edit: a device image that reads
    back intact, so that what is tested is the parser behind the hashes."""
    img = bytearray(img)
    for pos, _, ln in chunks(bytes(img), base):
        struct.pack_into('<Q', img, pos + 32, xxh64(bytes(img[pos + 48:pos + 48 + ln])))
        struct.pack_into('<Q', img, pos + 40, 0)
        struct.pack_into('<Q', img, pos + 40, xxh64(bytes(img[pos:pos + 48])))
    return bytes(img)


# ---------------------------------------------------------------- the debugger's pages
# fuzz_dbgpages: a kernel the finder (kernel/dbgpages.c) can open all the
# way: a symbol table (kallsyms) naming init_task, init_pid_ns and
# node_data, tasks on init_task's lists, a pid xarray, node_data, stacks.
# The words a real kernel holds near the top of the address space
# (ERR_PTR values, -1, list poison) sit where the finder reads them.
TASK_HEADS = 0x2f00     # init_task's list heads: the last 128 bytes of its 12 KiB
POISON1, POISON2 = 0xdead000000000100, 0xdead000000000122   # LIST_POISON1/2
# Words near 2^64 the finder must pass over without wrapping: unaligned
# ERR_PTRs (-1, -ENOENT, -EFAULT). Each of NEAR_TOP is one bit from an
# aligned address in the top page (ERR_PTR(-4096), (-4088), (-16),
# (-256)), which a finder that wraps walks the whole address space from:
# the fuzzer's bit flips get there. TOP_LAST is ERR_PTR(-ENOEXEC), whose
# 8 bytes end exactly at 2^64; it marks the top page seen for the rest of
# the walk (the finder looks at one word per page), so only the last task
# holds it, last.
TOP_SAFE = [M64, M64 - 1, M64 - 13]
NEAR_TOP = [0xfffffffffffff001, 0xfffffffffffff009, 0xfffffffffffffff1, 0xffffffffffffff01]
TOP_LAST = M64 - 7
ARM64_IMAGE = 0xffff800080000000       # KIMAGE_VADDR, 48-bit VA


def dbg_kallsyms(m, pa, lin, syms, enc='base', stext=None):
    """kallsyms at pa (at most 2 KiB): tokens of one character each (token
    t is the byte t), a name a token per character. syms: [(type+name,
    its pa)]. enc 'base': offsets from kallsyms_relative_base (= lin);
    'place': from each entry's own place (7.x, no relative base).
    Returns VMCOREINFO keys."""
    tt, ti, num, rel, offs, names = pa, pa + 512, pa + 1024, pa + 1032, pa + 1040, pa + 1280
    for t in range(256):
        m.b[tt + 2 * t] = t
        struct.pack_into('<H', m.b, ti + 2 * t, 2 * t)
    struct.pack_into('<I', m.b, num, len(syms))
    at = names
    for i, (name, spa) in enumerate(syms):
        nb = name.encode()
        m.put(at, bytes([len(nb)]) + nb)
        at += 1 + len(nb)
        off = spa if enc == 'base' else spa - (offs + 4 * i)
        struct.pack_into('<i', m.b, offs + 4 * i, off)
    assert at <= pa + 2048
    keys = [('SYMBOL(kallsyms_names)', '%x' % (lin + names)),
            ('SYMBOL(kallsyms_num_syms)', '%x' % (lin + num)),
            ('SYMBOL(kallsyms_offsets)', '%x' % (lin + offs)),
            ('SYMBOL(kallsyms_token_table)', '%x' % (lin + tt)),
            ('SYMBOL(kallsyms_token_index)', '%x' % (lin + ti))]
    if enc == 'base':
        m.q(rel, lin)
        keys.append(('SYMBOL(kallsyms_relative_base)', '%x' % (lin + rel)))
    if stext is not None:
        keys.append(('SYMBOL(_stext)', '%x' % (lin + stext)))
    return keys


def dbg_kernel(m, page, lin, v):
    """The finder's structures from physical page `page` on (kallsyms and
    the small objects there, the tasks' heads on the next page), virtual
    lin + pa. v: the variant's dict. Returns (VMCOREINFO keys, the pa of
    a stack, the first byte past what was written)."""
    K = page * PAGE
    H = K + PAGE                        # the tasks' list heads
    T = H - TASK_HEADS                  # init_task
    tasks = [T, T + 0x100, T + 0x200]   # init_task, A, B: 256 bytes apart
    N, ND, PG, PIDNS, XA, XA2, PID = (H + 0x400, H + 0x410, H + 0x500, H + 0x600,
                                      H + 0x700, H + 0x940, H + 0xb80)
    MM = H + 0xc80                      # what the tasks' "mm" points at
    end = H + 0xd00

    def head(t, k):
        return t + TASK_HEADS + 16 * k

    for t in tasks:                     # 8 empty heads each
        for k in range(8):
            m.q(head(t, k), lin + head(t, k))
            m.q(head(t, k) + 8, lin + head(t, k))
    # init_task.tasks (head 0): init_task -> A -> B -> init_task
    ring = [head(t, 0) for t in tasks]
    for i, h in enumerate(ring):
        m.q(h, lin + ring[(i + 1) % 3])
        m.q(h + 8, lin + ring[i - 1])
    # init_task's head 1 holds one node that is no task (a children list)
    m.q(head(T, 1), lin + N)
    m.q(head(T, 1) + 8, lin + N)
    m.q(N, lin + head(T, 1))
    m.q(N + 8, lin + head(T, 1))
    if v.get('poison_head'):            # a list_del'ed head in B
        m.q(head(tasks[2], 3), POISON1)
        m.q(head(tasks[2], 3) + 8, POISON2)
    # What follows each task's heads: pointers, and the words near 2^64
    # (the variant's first: the finder looks at one word per page).
    for t in tasks:
        words = v.get('task_words', []) + NEAR_TOP + [lin + MM, POISON1, POISON2] + TOP_SAFE
        words += [TOP_LAST] if t == tasks[-1] else []
        for i, w in enumerate(words):
            m.q(t + TASK_HEADS + 0x80 + 8 * i, w)
    # node_data[1] -> a pglist_data
    m.q(ND, v.get('node', lin + PG))
    # init_pid_ns.idr.idr_rt.xa_head (at 8): a node, slots at 40
    m.q(PIDNS + 8, lin + XA + 2)
    # Slots: a struct pid, a child node, poison (a pointer and an internal
    # entry), a pid whose 128 bytes pass 2^64, and entries one bit from a
    # node and a pid in the top page (low bits 3 and 1: neither kind).
    slots = v.get('xa_slots', []) + [lin + PID, lin + XA2 + 2, POISON1, POISON2, M64 - 7,
                                     0xfffffffffffff003, 0xffffffffffffff01]
    for i, sl in enumerate(slots):
        m.q(XA + 40 + 8 * i, sl)
    m.q(XA2 + 40, lin + PID + 128)
    m.q(XA2 + 48, lin + XA + 2)         # back up the tree: seen already
    m.q(PID, 1)
    syms = [('Tstartup_64', K), ('T_stext', K + 4096), ('Dinit_task', T),
            ('Dinit_pid_ns', PIDNS), ('Dnode_data', ND), ('Bzz_last', end)]
    keys = dbg_kallsyms(m, K, lin, syms, v.get('enc', 'base'),
                        K + 4096 if v.get('stext', True) else None)
    keys += [('SYMBOL(node_data)', '%x' % (lin + ND)), ('LENGTH(node_data)', '1'),
             ('SIZE(pglist_data)', str(v.get('pglist_size', 256)))]
    return keys, H + 0x100, end


def x86_root(vi):
    """The physical address of a build_memory kernel's top table."""
    pb = int([l for l in vi.split('\n') if l.startswith('NUMBER(phys_base)=')][0].split('=')[1])
    return (INIT_TOP_PGT - START_KERNEL_MAP + pb) & M64


def dbg_x86(v):
    """A fuzz_dbgpages seed of an x86_64 kernel (build_memory's) with the
    finder's structures after its pages; v may also ask for page tables
    made to cost: 'cea_huge' (the cpu_entry_area's PUD all 1 GiB leaves),
    'selfref' (a table whose 512 entries are itself, under a kernel-half
    slot), 'names_alias' (kallsyms_names in 8 GiB of 0xff bytes: one page
    mapped again and again)."""
    l5 = v.get('l5', False)
    mem, vi = build_memory(kind='612' if l5 else '61', l5=l5, npages=32,
                           program=prog_free if l5 else prog_mixed,
                           small_sections=v.get('small_sections', False), vmemmap_4k=not l5)
    m = Mem(32)
    m.b[:] = mem
    used = build_memory.used
    lin = 0xff11000000000000 if l5 else 0xffff888000000000
    keys, stack, end = dbg_kernel(m, used, lin, v)
    root = x86_root(vi)
    if 'ms_root1' in v:                 # mem_section's second root (build_memory: at 1024)
        m.q(1024 + 8, v['ms_root1'])
    extra = end
    npage = (extra + PAGE - 1) // PAGE

    def new():
        nonlocal npage
        npage += 1
        return (npage - 1) * PAGE
    assert not l5 or not any(v.get(k) for k in ('cea_huge', 'selfref', 'names_alias'))
    if v.get('cea_huge'):               # PGD[508]: 0xfffffe0000000000
        pud = new()
        m.q(root + 508 * 8, pud | PTE_P)
        for i in range(512):
            m.q(pud + 8 * i, (i << 30) | PTE_P | PTE_PSE)
    if v.get('selfref'):                # PGD[300]: 0xffff960000000000
        q = new()
        m.q(root + 300 * 8, q | PTE_P)
        for i in range(512):
            m.q(q + 8 * i, q | PTE_P)
    if v.get('names_alias'):            # PGD[402]: 0xffffc90000000000
        pud, pmd, pte, ff = new(), new(), new(), new()
        m.q(root + 402 * 8, pud | PTE_P)
        for i in range(8):
            m.q(pud + 8 * i, pmd | PTE_P)
        for i in range(512):
            m.q(pmd + 8 * i, pte | PTE_P)
            m.q(pte + 8 * i, ff | PTE_P)
        m.put(ff, b'\xff' * PAGE)
        num = [kv for kv in keys if kv[0] == 'SYMBOL(kallsyms_num_syms)'][0][1]
        struct.pack_into('<I', m.b, int(num, 16) - lin, 4 << 20)
        keys = [kv for kv in keys if kv[0] != 'SYMBOL(kallsyms_names)']
        keys.append(('SYMBOL(kallsyms_names)', 'ffffc90000000000'))
    vi = vi.rstrip('\0') + ''.join('%s=%s\n' % kv for kv in keys + v.get('keys', [])) + '\0'
    for k, val in v.get('edit', {}).items():
        vi = '\n'.join(l for l in vi.split('\n') if not l.startswith(k + '='))
        vi = '%s=%s\n' % (k, val) + vi
    n = npage * PAGE
    body = bytes(m.b[:n])
    return vi, body, [lin + stack + 0x40, M64 - 0xffe, M64]


def dbg_arm64(v):
    """An arm64 kernel (48-bit VA, 4 levels, the 5.4+ layout with
    TCR_EL1_T1SZ: the linear map arithmetic from 0xffff000000000000 onto
    physical 0): page tables mapping the image at KIMAGE_VADDR (a 2 MiB
    block, then a table of 4 KiB pages), init_uts_ns in the image, and the
    finder's structures in the linear map."""
    lin = 0xffff000000000000
    m = Mem(32)
    pgd, pud, pmd, pte = PAGE, 2 * PAGE, 3 * PAGE, 4 * PAGE
    va = ARM64_IMAGE
    m.q(pgd + ((va >> 39) & 511) * 8, pud | 3)
    m.q(pud + ((va >> 30) & 511) * 8, pmd | 3)
    m.q(pmd + ((va >> 21) & 511) * 8, 0 | 0x401)          # 2 MiB block onto pa 0, AF
    m.q(pmd + (((va >> 21) & 511) + 1) * 8, pte | 3)
    for i in range(8):                                    # 4 KiB pages onto pa 0..
        m.q(pte + 8 * i, (i * PAGE) | 0x403)
    uts = 0x100
    m.put(uts, b''.join(s.ljust(65, b'\0') for s in
                        (b'Linux', b'fuzzarm', b'6.1.0-fuzz', b'#1 SMP', b'aarch64', b'(none)')))
    keys, stack, end = dbg_kernel(m, 5, lin, v)
    voff = ARM64_IMAGE                                    # image at pa 0
    keys = [('OSRELEASE', '6.1.0-fuzz'), ('PAGESIZE', '4096'),
            ('SYMBOL(swapper_pg_dir)', '%x' % (voff + pgd)),
            ('NUMBER(kimage_voffset)', '0x%x' % voff), ('NUMBER(VA_BITS)', '48'),
            ('NUMBER(TCR_EL1_T1SZ)', '16'), ('NUMBER(PHYS_OFFSET)', '0x0'),
            ('SYMBOL(init_uts_ns)', '%x' % (voff + uts)),
            ('OFFSET(uts_namespace.name)', '0')] + keys + v.get('keys', [])
    vi = ''.join('%s=%s\n' % kv for kv in keys) + '\0'
    n = (end + PAGE - 1) // PAGE * PAGE
    return vi, bytes(m.b[:n]), [lin + stack + 0x40, ARM64_IMAGE + 0x1234, M64 - 0xfff]


def dbg_seed(arch, v, ctl=0x30):
    """A fuzz_dbgpages input: the control byte (ctl: 3 PRSTATUS notes, the
    budget and work caps the capture would give), three stack pointers,
    then fuzz_vmcore_mem.h's layout over the kernel's memory."""
    vi, body, sps = (dbg_arm64 if arch == 'arm64' else dbg_x86)(v)
    ctl |= 1 if arch == 'arm64' else 0
    n = len(body)
    hdr = fz_header([(0, n, 0, 0)], fpages=n // PAGE + v.get('zero_pages', 0))
    return bytes([ctl]) + struct.pack('<3Q', *sps) + fz_seed(hdr, vi, body)


# Seeds that hang or crash the finder while the bug is open go to
# tests/fuzz/crashes/ as dbgpages-NAME (crashes/README.md); once fixed,
# take the name out of here and they join the corpus as
# regress-dbgpages-NAME.
DBG_OPEN = set()
DBG_VARIANTS = [
    # name, arch, variant, control byte
    ('x86-tasks', 'x86', {}, 0x30),
    ('x86-tasks-5l', 'x86', {'l5': True}, 0x30),
    ('x86-tasks-place', 'x86', {'enc': 'place'}, 0x30),
    ('x86-tasks-nostext', 'x86', {'stext': False}, 0x30),
    ('x86-poison-head', 'x86', {'poison_head': True}, 0x30),
    ('x86-tasks-budget64', 'x86', {}, 0x38),
    ('x86-tasks-nomemmap-work', 'x86', {}, 0x32 | 0x80),
    ('arm64-tasks', 'arm64', {}, 0x30),
    ('arm64-poison-head', 'arm64', {'poison_head': True}, 0x30),
    # regress-dbgpages-* (crashes/README.md #13-#16; each hung e0a2743,
    # fixed in 9705e3b): words in the top page of the address space, where
    # add_area's `v += ps` wrapped to 0 and walked all of it (the finder's wrap): a
    # task's word ERR_PTR(-EBUSY), a pid xarray node at ERR_PTR(-4096) (an
    # entry ending in 2) and a struct pid at ERR_PTR(-ERESTARTSYS),
    # node_data[0] 8 KiB below 2^64, init_uts_ns 768 bytes below it, a
    # mem_section root 6 KiB below it.
    ('errptr-task-word', 'x86', {'task_words': [M64 - 15]}, 0x30),
    ('errptr-task-word-arm64', 'arm64', {'task_words': [M64 - 15]}, 0x30),
    ('xa-node-top', 'x86', {'xa_slots': [0xfffffffffffff002]}, 0x30),
    ('xa-pid-top', 'x86', {'xa_slots': [M64 - 511]}, 0x30),
    ('node-data-top', 'x86', {'node': M64 - 8191, 'pglist_size': 6144}, 0x30),
    ('uts-top', 'x86', {'edit': {'SYMBOL(init_uts_ns)': 'fffffffffffffd00'}}, 0x30),
    ('memsection-root-top', 'x86', {'ms_root1': M64 - 6143}, 0x30),
    # 2^30 mem_section roots (MAX_PHYSMEM_BITS 52, SECTION_SIZE_BITS 15),
    # each read by add_memsection: now the work cap's (-ETIME).
    ('memsection-roots', 'x86', {'l5': True, 'small_sections': True}, 0x30),
    # Page tables made to cost (dbgpages' walk and on_leaf: cea-huge took
    # 134 M runs_add calls, 10 s), and a symbol table whose names never
    # end (kallsyms: 4 Mi names of 32 Ki tokens). walk-selfref is open:
    # 2^18 tables of 512 leaves each, 134 M on_leaf calls the work cap
    # does not count (3-8 s under ASan).
    ('cea-huge', 'x86', {'cea_huge': True}, 0x30),
    ('walk-selfref', 'x86', {'selfref': True}, 0x30),
    ('kallsyms-names-alias', 'x86', {'names_alias': True}, 0x30),
]


def dbg_seeds(add, crashes):
    for name, arch, v, ctl in DBG_VARIANTS:
        data = dbg_seed(arch, v, ctl)
        if name in DBG_OPEN:
            crashes['dbgpages-' + name] = data
            continue
        crashes['dbgpages-' + name] = None     # fixed: no longer in crashes/
        if name.startswith(('x86-', 'arm64-')):
            add('fuzz_dbgpages', name, data)
        else:
            add('fuzz_dbgpages', 'regress-dbgpages-' + name, data)


# ---------------------------------------------------------------- ELF vmcores
def elf_vmcore(mem, vmcoreinfo, segs, cpus=1):
    """ET_CORE x86_64: PT_NOTE (NT_PRSTATUS per cpu, VMCOREINFO) and PT_LOADs
    of `segs` = [(paddr, file_offset_in_mem, length)]."""
    def note(name, ntype, desc):
        n = name + b'\0'
        return (struct.pack('<III', len(n), len(desc), ntype) + n.ljust((len(n) + 3) & ~3, b'\0')
                + desc.ljust((len(desc) + 3) & ~3, b'\0'))
    notes = b''.join(note(b'CORE', 1, struct.pack('<I', c).rjust(36, b'\0').ljust(336, b'\0'))
                     for c in range(cpus))
    vi = vmcoreinfo.rstrip('\0').encode()
    notes += note(b'VMCOREINFO', 0, vi)
    phnum = 1 + len(segs)
    hdr_end = 64 + 56 * phnum
    data_off = (hdr_end + len(notes) + PAGE - 1) // PAGE * PAGE
    eh = struct.pack('<16sHHIQQQIHHHHHH', b'\x7fELF\x02\x01\x01' + b'\0' * 9, 4, 62, 1,
                     0, 64, 0, 0, 64, 56, phnum, 0, 0, 0)
    ph = struct.pack('<IIQQQQQQ', 4, 0, hdr_end, 0, 0, len(notes), len(notes), 0)
    body = b''
    off = data_off
    for paddr, moff, length in segs:
        ph += struct.pack('<IIQQQQQQ', 1, 7, off, 0xffff888000000000 + paddr, paddr,
                          length, length, 0)
        body += mem[moff:moff + length]
        off += length
    out = eh + ph + notes
    return out.ljust(data_off, b'\0') + body


# ---------------------------------------------------------------- device images
def reclaim_small(img):
    """A capture image (claim at 0, stream at its data_offset) re-claimed at
    data_offset DATA_MIN, in fuzz_dumpfile's compact layout: the 4 KiB
    superblock area, then the stream at input offset 4096; the harness
    puts the zeros up to data_offset back (fuzz_dumpfile.c expand_image)."""
    (doff,) = struct.unpack_from('<Q', img, 104)
    sb = bytearray(img[:448])
    struct.pack_into('<Q', sb, 104, DATA_MIN)
    struct.pack_into('<Q', sb, 440, 0)
    struct.pack_into('<Q', sb, 440, xxh64(bytes(sb)))
    return bytes(sb).ljust(SB_AREA, b'\0') + img[doff:]


def chunks(img, base=SB_AREA):
    out = []
    pos = base
    while pos + 48 <= len(img) and img[pos:pos + 4] == b'KDCK':
        (ln,) = struct.unpack_from('<I', img, pos + 8)
        (typ,) = struct.unpack_from('<H', img, pos + 4)
        out.append((pos, typ, ln))
        pos += (48 + ln + 7) & ~7
    return out


def capture(kdumpinit, vmcore_bytes, level, tmp, name):
    vpath = os.path.join(tmp, name + '.vmcore')
    dpath = os.path.join(tmp, name + '.img')
    with open(vpath, 'wb') as f:
        f.write(vmcore_bytes)
    if os.path.exists(dpath):
        os.unlink(dpath)
    r = subprocess.run([kdumpinit, 'capture', '--vmcore', vpath, '--output', dpath,
                        '--level', str(level), '--threads', '1'],
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    if r.returncode not in (0, 5):
        sys.exit('capture %s failed (%d): %s' % (name, r.returncode, r.stdout.decode()))
    with open(dpath, 'rb') as f:
        return reclaim_small(f.read())


# ---------------------------------------------------------------- config seeds
def gpt_disk(sector=512, names=('dumpdisk', 'root'), n_entries=4):
    disk = bytearray(sector * 2 + max(n_entries * 128, sector))
    # protective MBR
    disk[446 + 4] = 0xee
    disk[510:512] = b'\x55\xaa'
    h = bytearray(92)
    h[0:8] = b'EFI PART'
    struct.pack_into('<IIIIQQQQ16sQIII', h, 8, 0x10000, 92, 0, 0, 1, 100, 34, 90,
                     bytes(range(16)), 2, n_entries, 128, 0)
    disk[sector:sector + 92] = h
    for i, nm in enumerate(names):
        e = bytearray(128)
        e[0:16] = bytes([0xaf, 0x3d, 0xc6, 0x0f, 0x83, 0x84, 0x72, 0x47,
                         0x8e, 0x79, 0x3d, 0x69, 0xd8, 0x47, 0x7d, 0xe4])
        e[16:32] = bytes((i * 16 + k) & 0xff for k in range(16))
        struct.pack_into('<QQQ', e, 32, 2048 * (i + 1), 2048 * (i + 2) - 1, 0)
        e[56:56 + 2 * len(nm)] = nm.encode('utf-16-le')
        disk[2 * sector + 128 * i:2 * sector + 128 * (i + 1)] = e
    return bytes(disk)


def mbr_disk():
    d = bytearray(1024)
    struct.pack_into('<I', d, 440, 0xdeadbeef)
    for i in range(2):
        e = 446 + 16 * i
        d[e + 4] = 0x83
        struct.pack_into('<II', d, e + 8, 2048 * (i + 1), 2048)
    d[510:512] = b'\x55\xaa'
    return bytes(d)


def config_seed(sector_shift, partno, selmax, cmdline, conf, kv, sel, blob):
    return (struct.pack('<BHB', sector_shift, partno, selmax) + cmdline + b'\0' + conf + b'\0' +
            kv + b'\0' + sel + b'\0' + blob)


# ---------------------------------------------------------------- main
def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--kdumpinit', default='build/kdumpinit')
    ap.add_argument('--mkvmcore', default='build/tools/mkvmcore')
    ap.add_argument('--out', default='tests/fuzz/corpus')
    ap.add_argument('--only', metavar='TARGET',
                    help='write only this target\'s seeds (fuzz_dbgpages: needs no build)')
    a = ap.parse_args()
    seeds = {}
    crashes = {}

    def add(target, name, data):
        assert len(data) < 65536, '%s/%s is %d bytes' % (target, name, len(data))
        seeds.setdefault(target, {})[name] = data

    dbg_seeds(add, crashes)
    write_crashes(os.path.join(os.path.dirname(os.path.abspath(a.out)), 'crashes'), crashes)
    if a.only == 'fuzz_dbgpages':
        write_seeds(a.out, seeds)
        return

    tmp = tempfile.mkdtemp(prefix='kdi-fuzz-')
    try:
        # -- fake kernels
        variants = [
            ('61-4l-mixed', dict(kind='61', program=prog_mixed, vmemmap_4k=True)),
            ('61-4l-free', dict(kind='61', program=prog_free, small_sections=True)),
            ('61-4l-hugetlb-4k', dict(kind='61', program=prog_hugetlb, vmemmap_4k=True)),
            ('612-4l-mixed-2m', dict(kind='612', program=prog_mixed, direct_2m=True,
                                     small_sections=True)),
            ('612-5l-free', dict(kind='612', l5=True, program=prog_free, small_sections=True)),
            ('612-5l-hugetlb-4k', dict(kind='612', l5=True, program=prog_hugetlb, vmemmap_4k=True)),
            ('61-noprb', dict(kind='61', program=prog_mixed, prb=False, small_sections=True)),
        ]
        for name, kw in variants:
            mem, vi = build_memory(**kw)
            n = len(mem)
            one = fz_header([(0, n, 0, 0)], fpages=n // PAGE)
            add('fuzz_memmap', name, fz_seed(one, vi, mem))
            if name in ('61-4l-mixed', '612-5l-free', '612-5l-hugetlb-4k'):
                add('fuzz_dmesg', name, fz_seed(one, vi, mem))
            add('fuzz_vmcoreinfo', name, b'\x3f' + vi.encode().rstrip(b'\0'))
            if name == '61-4l-mixed':
                used = build_memory.used * PAGE
                # Two segments: the same file bytes seen again at pfns
                # 16.. (struct pages in page 0), and at 1 MiB (struct
                # pages outside the file: unreadable).
                add('fuzz_memmap', name + '-alias', fz_seed(
                    fz_header([(0, n, 0, 0), (16 * PAGE, 4 * PAGE, 0, 0)], fpages=n // PAGE),
                    vi, mem))
                add('fuzz_memmap', name + '-level8',
                    fz_seed(fz_header([(0, n, 0, 0)], flags=2, level=8, fpages=n // PAGE), vi, mem))
                add('fuzz_memmap', name + '-2seg', fz_seed(
                    fz_header([(0, used, 0, 0), (1 << 20, 4 * PAGE, PAGE, 0)]), vi, mem[:used]))
                add('fuzz_memmap', name + '-truncated',
                    fz_seed(fz_header([(0, n, 3 * PAGE, 0)]), vi, mem[:used + PAGE]))
            core = elf_vmcore(mem, vi, [(0, 0, n)], cpus=2)
            # fuzz_vmcore reads headers and notes: a few pages will do.
            add('fuzz_vmcore', name, elf_vmcore(mem, vi, [(0, 0, PAGE), (1 << 20, PAGE, PAGE)]))
            for level in (31, 1) if name in ('61-4l-mixed', '612-5l-free') else (31,):
                img = capture(a.kdumpinit, core, level, tmp, '%s-d%d' % (name, level))
                add('fuzz_dumpfile', '%s-d%d' % (name, level), b'\0' + img)

        # -- mkvmcore vmcores (no kernel structures: zero pages only)
        mk = [
            ('mk-2seg', ['--mem', '96K', '--segments', '2', '--zero-pct', '40', '--cpus', '2']),
            ('mk-3seg-gap', ['--mem', '64K', '--segments', '3', '--sparse-gap', '64K',
                             '--zero-pct', '60', '--cpus', '1']),
            ('mk-allzero', ['--mem', '128K', '--segments', '1', '--zero-pct', '100']),
            ('mk-alias', ['--mem', '32K', '--segments', '1', '--text-alias', '--zero-pct', '50']),
            ('mk-truncate', ['--mem', '64K', '--segments', '2', '--bad', 'truncate']),
        ]
        bad = ['no-vmcoreinfo', 'exec', 'badphdr', 'short-header', 'filesz-lt-memsz']
        for name, args in mk + [('mk-bad-' + b, ['--mem', '16K', '--bad', b]) for b in bad]:
            vpath = os.path.join(tmp, name + '.vmcore')
            subprocess.run([a.mkvmcore, '-o', vpath] + args, check=True,
                           stdout=subprocess.DEVNULL)
            with open(vpath, 'rb') as f:
                core = f.read()
            if len(core) < 65536:
                add('fuzz_vmcore', name, core)
            if name.startswith('mk-bad'):
                continue
            img = capture(a.kdumpinit, core, 31, tmp, name)
            if len(img) < 65535:
                add('fuzz_dumpfile', name, b'\0' + img)
            elif name == 'mk-2seg':
                sys.exit('mk-2seg capture is too big for a seed: %d' % len(img))

        # -- dumpfile variants from one image
        base = seeds['fuzz_dumpfile']['61-4l-mixed-d31'][1:]
        ch = chunks(base)
        types = [t for _, t, _ in ch]
        assert types[0] == 1 and types[-1] == 7, types
        # cut inside the first PAGES chunk, and right before END
        pages = [c for c in ch if c[1] == 5]
        add('fuzz_dumpfile', 'cut-in-pages', b'\0' + base[:pages[0][0] + 100])
        add('fuzz_dumpfile', 'cut-before-end', b'\0' + base[:ch[-1][0]])
        add('fuzz_dumpfile', 'cut-after-meta', b'\0' + base[:pages[0][0]])
        # a payload byte flipped: re-hashed by the harness (control 2)
        flipped = bytearray(base)
        flipped[pages[0][0] + 48 + 30] ^= 0x40
        add('fuzz_dumpfile', 'flip-pages-rehash', b'\x02' + bytes(flipped))
        add('fuzz_dumpfile', 'flip-pages-raw', b'\0' + bytes(flipped))
        # the same image saved with zlib and two threads
        add('fuzz_dumpfile', '61-4l-mixed-d31-zlib2', b'\x18' + base)
        # superblock only, and an unclaimed blank head
        add('fuzz_dumpfile', 'claim-only', b'\0' + base[:SB_AREA])
        add('fuzz_dumpfile', 'blank', b'\0' + bytes(8192))

        # -- reproducers of fixed bugs (regress-*: see crashes/README.md)
        mixed = seeds['fuzz_memmap']['61-4l-mixed']

        def pfn7_private(v):
            return lambda mem: struct.pack_into('<Q', mem, 7 * 64 + 40, v)
        W = str(M64 - 7)                          # an offset that wraps when 8 is added
        for name, edits, me in [
                ('buddy-order-shift', {'LENGTH(zone.free_area)': None}, pfn7_private(64)),
                ('unaccepted-order-shift', {'LENGTH(zone.free_area)': '100',
                                            'NUMBER(PAGE_UNACCEPTED_MAPCOUNT_VALUE)': '-1'}, None),
                ('page-offset-wraps', {'OFFSET(page.flags)': W}, None),
                ('section-map-offset-wraps', {'OFFSET(mem_section.section_mem_map)': W}, None)]:
            add('fuzz_memmap', 'regress-memmap-' + name, edit_vmcoreinfo(mixed, edits, me))
        for name, edits in [
                ('desc-ring-offset-wraps', {'OFFSET(printk_ringbuffer.desc_ring)': str(M64)}),
                ('count-bits-offset', {'OFFSET(prb_desc_ring.count_bits)': '1000000'}),
                ('tail-id-offset', {'OFFSET(prb_desc_ring.tail_id)': '1000000'}),
                ('desc-state-offset', {'OFFSET(prb_desc.state_var)': '4096'}),
                ('info-text-len-offset', {'OFFSET(printk_info.text_len)': '100000'}),
                ('atomic-counter-offset', {'OFFSET(atomic_long_t.counter)': '1000000'}),
                ('huge-alloc', {'OFFSET(prb_desc_ring.count_bits)': '24', 'SIZE(prb_desc)': '256',
                                'SIZE(printk_info)': '1024'})]:
            add('fuzz_dmesg', 'regress-dmesg-' + name, edit_vmcoreinfo(mixed, edits))

        # Damaged rings for the salvage scan (kernel/dmesg.c): head_id and
        # tail_id wild, then also a free slot holding a record that claims
        # another slot's seq, and the data ring's first block id changed.
        def ring_edit(*what):
            def edit(mem):
                rb, descs, infos = PAGE + 256, PAGE + 1024, PAGE + 2048
                struct.pack_into('<QQ', mem, rb + 24, 0x2bad1dea5eed, 0x1234567)
                if 'garbage' in what:
                    struct.pack_into('<QQQ', mem, descs + 24, (2 << 62) | 9, 0, 40)
                    struct.pack_into('<Q', mem, infos + 88, 2)
                if 'block' in what:
                    struct.pack_into('<Q', mem, PAGE + 3072, 99)
            return edit
        add('fuzz_dmesg', 'salvage-wild-ids', edit_vmcoreinfo(mixed, {}, ring_edit()))
        add('fuzz_dmesg', 'salvage-garbage', edit_vmcoreinfo(mixed, {}, ring_edit('garbage', 'block')))
        img = bytearray(seeds['fuzz_dumpfile']['61-4l-mixed-d31'][1:])
        for pos, typ, ln in chunks(bytes(img)):
            if typ == 2:
                struct.pack_into('<H', img, pos + 4, 8)          # NOTES -> PAD
        add('fuzz_dumpfile', 'regress-dumpfile-no-notes-memcpy-null', b'\0' + rehash_stream(img))
        img = bytearray(seeds['fuzz_dumpfile']['61-4l-mixed-d31'][1:])
        for pos, typ, ln in chunks(bytes(img)):
            if typ == 4:                                          # vaddr 0, memsz = filesz = 2^60
                struct.pack_into('<QQQ', img, pos + 48 + 8, 0, 1 << 60, 1 << 60)
        add('fuzz_dumpfile', 'regress-dumpfile-huge-segment-timeout', b'\0' + rehash_stream(img))
        # PT_LOADs the dump's reader would refuse: the capture kept them and
        # wrote a dump nothing could read (fuzz_vmcore asserts segment_valid)
        core = bytearray(seeds['fuzz_vmcore']['61-4l-mixed'])
        struct.pack_into('<Q', core, 64 + 56 * 1 + 16, M64 - 4 * PAGE + 1)   # vaddr wraps
        add('fuzz_vmcore', 'regress-vmcore-segment-vaddr-wraps', bytes(core))
        core = bytearray(seeds['fuzz_vmcore']['61-4l-mixed'])
        struct.pack_into('<Q', core, 64 + 56 * 2 + 24, (1 << 56) - 2048)     # paddr past 2^56
        add('fuzz_vmcore', 'regress-vmcore-segment-past-2-56', bytes(core))
        # forge mode (control bit 5, fuzz_dumpfile.c forge_edit): every chunk
        # intact, the stream not what END counts; each read as complete
        # before END was cross-checked
        img = seeds['fuzz_dumpfile']['61-4l-mixed-d31'][1:]
        ch = chunks(img)
        n, pg = len(ch), [i for i, (_, t, _) in enumerate(ch) if t == 5][0]

        def ed(op, k, a=0, b=0, v=0):
            return bytes([op, k, a, b]) + struct.pack('<I', v)
        for name, edits in [
                ('pages-deleted', [ed(0, pg)]),
                ('early', [ed(2, n - 1, pg), ed(7, pg)]),
                ('pages-as-pad', [ed(3, pg, 7)]),
                ('huge-segment', [ed(5, 0, 0, 10, 1 << 30), ed(5, 0, 0, 11, 1 << 30)])]:
            add('fuzz_dumpfile', 'regress-dumpfile-end-' + name,
                bytes([0x20, len(edits)]) + b''.join(edits) + img)

        # -- VMCOREINFO texts
        add('fuzz_vmcoreinfo', 'empty', b'\0')
        add('fuzz_vmcoreinfo', 'odd-values',
            b'\x07NUMBER(phys_base)=-450887680\nNUMBER(PAGE_BUDDY_MAPCOUNT_VALUE)=4026531840\n'
            b'SYMBOL(mem_section)=0\nSIZE(page)=0x40\nPAGESIZE=+4096\nOFFSET(page.flags)=-1\n'
            b'NUMBER(SECTION_SIZE_BITS)=1b\nOSRELEASE=' + b'x' * 80 + b'\nno equals sign\n='
            b'\nKERNELOFFSET=1a000000\nCRASHTIME=99999999999999999999999\nPAGESIZE=4096')

        # -- config
        claim = base[:4096]
        add('fuzz_config', 'typical', config_seed(
            0, 1, 7,
            b'BOOT_IMAGE=/vmlinuz root=/dev/vda1 kdumpinit.dev="SERIAL=abc 1,/dev/vdb" '
            b'kdumpinit.level=31 kdumpinit.final=poweroff kdumpinit.verbose=2',
            b'# kdumpinit.conf\ndev = LABEL=dumpdisk\nlevel=17\nthreads = 4\nwait = "60"\n'
            b'stall=0\nbogus = 1\nnot a line\nkdumpinit.final = halt\n',
            b'kdumpinit.wait=86401', b'UUID=4dd0515a-86ba-435f-acb8-bf974b8c021c,PARTLABEL=x',
            gpt_disk()))
        add('fuzz_config', 'gpt4k', config_seed(
            3, 2, 0, b'kdumpinit.dev=PARTUUID=0fc63daf-8483-4772-8e79-3d69d8477de4 kdumpinit.threads',
            b'', b'level=abc', b'/dev/../etc/shadow,/dev/vdb,PARTUUID=,',
            gpt_disk(4096, names=('a' * 40,), n_entries=1)))
        add('fuzz_config', 'mbr', config_seed(
            0, 2, 3, b'quiet kdumpinit.level=0x1f "kdumpinit.stall=300" kdumpinit.wait=-1',
            b'dev=' + b'/dev/x' * 100, b'final=reboot', b'SERIAL=' + b's' * 130, mbr_disk()))
        ext = bytearray(8192)
        ext[1080:1082] = b'\x53\xef'
        ext[-512:-504] = b'EFI PART'
        add('fuzz_config', 'claim', config_seed(1, 1, 1, b'', b'', b'', b'LABEL=dumpdisk', claim))
        add('fuzz_config', 'ext4', config_seed(0, 5, 2, b'kdumpinit.', b'=\n', b'=', b',', bytes(ext)))
    finally:
        shutil.rmtree(tmp)

    write_seeds(a.out, {t: f for t, f in seeds.items() if not a.only or t == a.only})


def write_crashes(d, crashes):
    """The open findings mkcorpus.py makes (name: bytes), and those it
    made that are fixed now (name: None), which leave crashes/."""
    for name, data in sorted(crashes.items()):
        path = os.path.join(d, name)
        if data is None:
            if os.path.exists(path):
                os.unlink(path)
            continue
        with open(path, 'wb') as f:
            f.write(data)
        print('crashes/%s: %d bytes (open)' % (name, len(data)))


def write_seeds(out, seeds):
    # Seeds made here replace what is there; files named regress-* that
    # this script does not make (added by hand) are kept, and real-*
    # (tests/damage/streamdamage.py seeds).
    total = 0
    for target, files in sorted(seeds.items()):
        d = os.path.join(out, target)
        os.makedirs(d, exist_ok=True)
        for old in os.listdir(d):
            if old not in files and not old.startswith(('regress-', 'real-')):
                os.unlink(os.path.join(d, old))
        for name, data in sorted(files.items()):
            with open(os.path.join(d, name), 'wb') as f:
                f.write(data)
        kept = sorted(os.listdir(d))
        size = sum(os.path.getsize(os.path.join(d, x)) for x in kept)
        total += size
        print('%-16s %3d seeds, %7d bytes' % (target, len(kept), size))
    print('total %d bytes' % total)


if __name__ == '__main__':
    main()
