#!/usr/bin/python3
"""damage: corrupt the crashed kernel's memory in a copy of a real x86_64
ELF vmcore, the way a failing machine might have left it (the
corrupt suite).

usage: damage.py CORE FAULT [--seed N]

Faults:
  struct-pages     random bytes over 8 MiB of the struct-page array (the
                   struct pages of 131072 pfns in the middle of RAM), then
                   every 64th struct page made a buddy page with an order
                   no zone has (40): an implausible struct page
  vmemmap-table    the page-table page holding the vmemmap's leaf entries
                   for those pfns overwritten with random bytes
  top-table        the top-level page table (init_top_pgt) overwritten
                   with random bytes: nothing translates any more
  mem-section      the section_mem_map of three sections (sections 2..4)
                   replaced by random values with the present bit set
  printk-ids       the descriptor ring's head_id and tail_id random
  printk-wild      head_id/tail_id random, and every third record but the
                   last 64 (by seq) damaged: random state/lpos/seq, text
                   positions past the data ring, a data block's id word
  printk-gone      every descriptor overwritten with random bytes
  vi-mem_section   VMCOREINFO's SYMBOL(mem_section) one page off
  vi-prb           VMCOREINFO's SYMBOL(prb) one page off
  vi-top-pgt       VMCOREINFO's SYMBOL(init_top_pgt) one page off
  vi-phys_base     VMCOREINFO's NUMBER(phys_base) one page off
  vi-page-size     VMCOREINFO's SIZE(page) 4096 larger (a page off)

Structures are found as kdumpinit finds them (kernel/kmem.c): VMCOREINFO
for the symbols, the kernel's own page tables for kernel virtual
addresses, the PT_LOADs for physical addresses. The file is edited in
place (the note keeps its length: a longer value takes its room from a
kallsyms line, which kdumpinit does not read).

Prints what it did as "key=value" lines, which the suite checks against:
  fault=NAME, pfns=N (pfns whose struct pages were damaged; 0 if none),
  pfn_first=, pfn_last=, implausible=N (struct pages made implausible),
  panic=TEXT (not printed: the suite greps the clean log for it).
"""
import os
import random
import re
import struct
import sys

PAGE = 4096
START_KERNEL_MAP = 0xffffffff80000000
ADDR_MASK = 0x000ffffffffff000
PT_LOAD, PT_NOTE = 1, 4


class Core:
    def __init__(self, path):
        self.f = open(path, 'r+b')
        eh = self.f.read(64)
        if eh[:4] != b'\x7fELF' or eh[4] != 2 or struct.unpack_from('<H', eh, 18)[0] != 62:
            sys.exit('damage.py: %s is not an x86_64 ELF64 core' % path)
        phoff, = struct.unpack_from('<Q', eh, 32)
        phentsize, phnum = struct.unpack_from('<HH', eh, 54)
        self.loads, self.notes = [], []
        for i in range(phnum):
            self.f.seek(phoff + i * phentsize)
            p_type, _, off, _, paddr, filesz, _ = struct.unpack('<IIQQQQQ', self.f.read(48))
            if p_type == PT_LOAD:
                self.loads.append((paddr, filesz, off))
            elif p_type == PT_NOTE:
                self.notes.append((off, filesz))
        self.vi_off, self.vi_text = self._vmcoreinfo()
        self.vi = dict(l.split('=', 1) for l in self.vi_text.splitlines() if '=' in l)

    def _vmcoreinfo(self):
        for off, size in self.notes:
            self.f.seek(off)
            blob = self.f.read(size)
            pos = 0
            while pos + 12 <= len(blob):
                namesz, descsz, _ = struct.unpack_from('<III', blob, pos)
                name = blob[pos + 12:pos + 12 + namesz].rstrip(b'\0')
                dpos = pos + 12 + ((namesz + 3) & ~3)
                if name == b'VMCOREINFO':
                    return off + dpos, blob[dpos:dpos + descsz].decode('ascii', 'replace')
                pos = dpos + ((descsz + 3) & ~3)
        sys.exit('damage.py: no VMCOREINFO note')

    def num(self, key, base=16):
        return int(self.vi[key], base)

    def foff(self, pa, n=1):
        """File offset of physical [pa, pa+n), or None."""
        for paddr, filesz, off in self.loads:
            if paddr <= pa and pa + n <= paddr + filesz:
                return off + pa - paddr
        return None

    def pread(self, pa, n):
        o = self.foff(pa, n)
        if o is None:
            raise KeyError('physical %#x not in the core' % pa)
        self.f.seek(o)
        return self.f.read(n)

    def pwrite(self, pa, data):
        """Writes every copy: the kernel image's PT_LOAD overlaps RAM's."""
        n = 0
        for paddr, filesz, off in self.loads:
            if paddr <= pa and pa + len(data) <= paddr + filesz:
                self.f.seek(off + pa - paddr)
                self.f.write(data)
                n += 1
        if not n:
            raise KeyError('physical %#x not in the core' % pa)

    def q(self, pa):
        return struct.unpack('<Q', self.pread(pa, 8))[0]

    # -- kernel virtual addresses, through the kernel's own page tables
    def top(self):
        return self.num('SYMBOL(init_top_pgt)') - START_KERNEL_MAP + int(self.vi['NUMBER(phys_base)'])

    def walk(self, va):
        """(pa, the physical address of the leaf entry, its level)."""
        levels = 5 if int(self.vi.get('NUMBER(pgtable_l5_enabled)', '0')) else 4
        table = self.top()
        for level in range(levels, 0, -1):
            ent_pa = table + ((va >> (12 + 9 * (level - 1))) & 511) * 8
            e = self.q(ent_pa)
            if not e & 1:
                raise KeyError('%#x not mapped (level %d)' % (va, level))
            if level == 1 or (level <= 3 and e & 0x80):
                span = 1 << (12 + 9 * (level - 1))
                return (e & ADDR_MASK & ~(span - 1)) + (va & (span - 1)), ent_pa, level
            table = e & ADDR_MASK
        raise AssertionError

    def vtop(self, va):
        return self.walk(va)[0]

    def kread(self, va, n):
        return self.pread(self.vtop(va), n)

    def kq(self, va):
        return struct.unpack('<Q', self.kread(va, 8))[0]

    def kwrite(self, va, data):
        """Writes data at va, page by page (each page may sit elsewhere)."""
        done = 0
        while done < len(data):
            n = min(len(data) - done, PAGE - ((va + done) % PAGE))
            self.pwrite(self.vtop(va + done), data[done:done + n])
            done += n

    # -- struct pages (as kernel/memmap.c finds them)
    def section_entry(self, nr):
        """The kernel virtual address of mem_section nr's struct."""
        ms_size = int(self.vi['SIZE(mem_section)'])
        per_root = PAGE // ms_size
        roots = self.num('SYMBOL(mem_section)')
        mpb, ssb = int(self.vi['NUMBER(MAX_PHYSMEM_BITS)']), int(self.vi['NUMBER(SECTION_SIZE_BITS)'])
        extreme = ((1 << (mpb - ssb)) + per_root - 1) // per_root
        if 'LENGTH(mem_section)' not in self.vi or int(self.vi['LENGTH(mem_section)']) == extreme:
            return self.kq(roots + (nr // per_root) * 8) + (nr % per_root) * ms_size
        return roots + nr * ms_size

    def sec_shift(self):
        return int(self.vi['NUMBER(SECTION_SIZE_BITS)']) - 12

    def struct_page_va(self, pfn):
        nr = pfn >> self.sec_shift()
        ent = self.section_entry(nr) + int(self.vi['OFFSET(mem_section.section_mem_map)'])
        coded = self.kq(ent) & ~0x1f
        return coded + pfn * int(self.vi['SIZE(page)'])

    def pfn_span(self):
        """The pfns the core holds, as sorted disjoint (first, end): the
        kernel image's PT_LOAD repeats part of RAM's."""
        merged = []
        for a, b in sorted((p >> 12, (p + n) >> 12) for p, n, _ in self.loads):
            if merged and a <= merged[-1][1]:
                merged[-1][1] = max(merged[-1][1], b)
            else:
                merged.append([a, b])
        return [tuple(m) for m in merged]

    def ram_pfns(self, lo, hi):
        """How many of pfns [lo, hi) the core holds."""
        return sum(max(0, min(b, hi) - max(a, lo)) for a, b in self.pfn_span())

    def middle_pfns(self, n):
        a, b = max(self.pfn_span(), key=lambda s: s[1] - s[0])
        first = max(a, (a + b) // 2 - n // 2)
        first = (first + 4095) & ~4095
        return first, min(n, b - first)

    # -- the printk ring
    def ring(self):
        vi = self.vi
        prb = self.kq(self.num('SYMBOL(prb)'))
        dr = prb + int(vi['OFFSET(printk_ringbuffer.desc_ring)'])
        tr = prb + int(vi['OFFSET(printk_ringbuffer.text_data_ring)'])
        cbits = struct.unpack('<I', self.kread(dr + int(vi['OFFSET(prb_desc_ring.count_bits)']), 4))[0]
        sbits = struct.unpack('<I', self.kread(tr + int(vi['OFFSET(prb_data_ring.size_bits)']), 4))[0]
        return dict(dr=dr, count=1 << cbits, size=1 << sbits,
                    descs=self.kq(dr + int(vi['OFFSET(prb_desc_ring.descs)'])),
                    infos=self.kq(dr + int(vi['OFFSET(prb_desc_ring.infos)'])),
                    data=self.kq(tr + int(vi['OFFSET(prb_data_ring.data)'])),
                    dsz=int(vi['SIZE(prb_desc)']), isz=int(vi['SIZE(printk_info)']))

    def vi_set(self, key, value):
        """Replaces KEY's value in the note by one of the same length."""
        m = re.search(r'(?m)^' + re.escape(key) + r'=(.*)$', self.vi_text)
        if not m:
            sys.exit('damage.py: VMCOREINFO has no %s' % key)
        text = self.vi_text[:m.start(1)] + value + self.vi_text[m.end(1):]
        # The note keeps its size: a longer value takes its characters
        # from the end of a kallsyms line, which kdumpinit does not read.
        d = len(text) - len(self.vi_text)
        if d:
            k = re.search(r'(?m)^SYMBOL\(kallsyms_[a-z_]+\)=[0-9a-f]{%d,}$' % (d + 1), text)
            if d < 0 or not k:
                sys.exit('damage.py: no room in the note for %s=%s' % (key, value))
            text = text[:k.end() - d] + text[k.end():]
        assert len(text) == len(self.vi_text)
        self.f.seek(self.vi_off)
        self.f.write(text.encode())


def out(**kv):
    for k, v in kv.items():
        print('%s=%s' % (k, v))


def struct_pages(c, rnd):
    first, n = c.middle_pfns(131072)
    spage = int(c.vi['SIZE(page)'])
    va = c.struct_page_va(first)
    c.kwrite(va, rnd.randbytes(n * spage))
    # An order no zone has: the buddy check must keep these, and count them.
    mc, pv = int(c.vi['OFFSET(page._mapcount)']), int(c.vi['OFFSET(page.private)'])
    buddy = int(c.vi['NUMBER(PAGE_BUDDY_MAPCOUNT_VALUE)']) & 0xffffffff
    flags_off = int(c.vi['OFFSET(page.flags)'])
    head_off = int(c.vi.get('OFFSET(page.compound_head)', '8'))
    k = 0
    for pfn in range(first, first + n, 64):
        sp = va + (pfn - first) * spage
        c.kwrite(sp + flags_off, struct.pack('<Q', 0))
        c.kwrite(sp + head_off, struct.pack('<Q', 0))
        c.kwrite(sp + mc, struct.pack('<I', buddy))
        c.kwrite(sp + pv, struct.pack('<Q', 40))
        k += 1
    out(pfns=n, pfn_first=first, pfn_last=first + n - 1, implausible=k)


def vmemmap_table(c, rnd):
    first, n = c.middle_pfns(131072)
    _, ent_pa, level = c.walk(c.struct_page_va(first))
    table = ent_pa & ~(PAGE - 1)
    c.pwrite(table, rnd.randbytes(PAGE))
    # A leaf table maps 512 leaves of 2^(12+9(level-1)) bytes of struct pages.
    span = 512 << (12 + 9 * (level - 1))
    base = c.struct_page_va(0)
    lo = ((c.struct_page_va(first) - base) // span * span) // int(c.vi['SIZE(page)'])
    out(pfns=c.ram_pfns(lo, lo + span // int(c.vi['SIZE(page)'])), pfn_first=lo,
        table_level=level, table_pa='%#x' % table)


def top_table(c, rnd):
    c.pwrite(c.top(), rnd.randbytes(PAGE))
    out(pfns=sum(b - a for a, b in c.pfn_span()))


def mem_section(c, rnd):
    off = int(c.vi['OFFSET(mem_section.section_mem_map)'])
    pfns = 0
    per = 1 << c.sec_shift()
    for nr in (2, 3, 4):
        c.kwrite(c.section_entry(nr) + off, struct.pack('<Q', rnd.getrandbits(64) | 1))
        pfns += c.ram_pfns(nr * per, (nr + 1) * per)
    out(pfns=pfns, sections='2,3,4')


def printk(c, rnd, fault):
    g = c.ring()
    vi = c.vi
    ctr = int(vi.get('OFFSET(atomic_long_t.counter)', '0'))
    for key in ('OFFSET(prb_desc_ring.head_id)', 'OFFSET(prb_desc_ring.tail_id)'):
        c.kwrite(g['dr'] + int(vi[key]) + ctr, struct.pack('<Q', rnd.getrandbits(62)))
    if fault == 'printk-gone':
        c.kwrite(g['descs'], rnd.randbytes(g['count'] * g['dsz']))
        out(damaged=g['count'])
        return
    if fault != 'printk-wild':
        out(damaged=0)
        return
    st_off = int(vi['OFFSET(prb_desc.state_var)']) + ctr
    lp = int(vi['OFFSET(prb_desc.text_blk_lpos)'])
    seq_off = int(vi['OFFSET(printk_info.seq)'])
    used = []
    for slot in range(g['count']):
        sv = struct.unpack('<Q', c.kread(g['descs'] + slot * g['dsz'] + st_off, 8))[0]
        if (sv >> 62) in (1, 2):
            used.append((struct.unpack('<Q', c.kread(g['infos'] + slot * g['isz'] + seq_off, 8))[0], slot))
    used.sort()
    victims = used[:-64][::3]   # the panic and its trace are in the last 64
    for k, (seq, slot) in enumerate(victims):
        d = g['descs'] + slot * g['dsz']
        how = k % 5
        if how == 0:      # random state_var: id, state, both
            c.kwrite(d + st_off, struct.pack('<Q', rnd.getrandbits(64)))
        elif how == 1:    # text positions far past the data ring
            c.kwrite(d + lp, struct.pack('<QQ', rnd.getrandbits(63) & ~7, rnd.getrandbits(63) & ~7))
        elif how == 2:    # a block that claims the whole ring and more
            b = struct.unpack('<Q', c.kread(d + lp, 8))[0]
            c.kwrite(d + lp + 8, struct.pack('<Q', (b + 3 * g['size']) & (1 << 64) - 1))
        elif how == 3:    # the seq of another slot
            c.kwrite(g['infos'] + slot * g['isz'] + seq_off, struct.pack('<Q', seq + 1))
        else:             # the data block's id word
            b = struct.unpack('<Q', c.kread(d + lp, 8))[0]
            c.kwrite(g['data'] + (b & (g['size'] - 1)), struct.pack('<Q', rnd.getrandbits(64)))
    out(damaged=len(victims), records=len(used))


def vi_page_off(c, key, base=16):
    v = c.vi[key]
    new = ('%0*x' if base == 16 else '%d') % (len(v), int(v, base) + PAGE) if base == 16 \
        else '%d' % (int(v, base) + PAGE)
    c.vi_set(key, new)
    out(key=key, old=v, new=new)


def main():
    args = sys.argv[1:]
    seed = 15
    if '--seed' in args:
        i = args.index('--seed')
        seed = int(args[i + 1])
        del args[i:i + 2]
    if len(args) != 2:
        sys.exit(__doc__)
    core, fault = args
    c = Core(core)
    rnd = random.Random(seed)
    print('fault=%s' % fault)
    if fault == 'struct-pages':
        struct_pages(c, rnd)
    elif fault == 'vmemmap-table':
        vmemmap_table(c, rnd)
    elif fault == 'top-table':
        top_table(c, rnd)
    elif fault == 'mem-section':
        mem_section(c, rnd)
    elif fault in ('printk-ids', 'printk-wild', 'printk-gone'):
        printk(c, rnd, fault)
    elif fault == 'vi-mem_section':
        vi_page_off(c, 'SYMBOL(mem_section)')
    elif fault == 'vi-prb':
        vi_page_off(c, 'SYMBOL(prb)')
    elif fault == 'vi-top-pgt':
        vi_page_off(c, 'SYMBOL(init_top_pgt)')
    elif fault == 'vi-phys_base':
        vi_page_off(c, 'NUMBER(phys_base)', 10)
    elif fault == 'vi-page-size':
        vi_page_off(c, 'SIZE(page)', 10)
    else:
        sys.exit('damage.py: unknown fault %s\n%s' % (fault, __doc__))
    c.f.close()


if __name__ == '__main__':
    main()
