#!/usr/bin/python3
"""mkring: small ELF vmcores whose printk ring is intact or damaged, for
tests/corrupt/rings.sh (kernel/dmesg.c's salvage).

usage: mkring.py OUTDIR

Writes OUTDIR/CASE.vmcore for each case below, from the fake kernel of
tests/fuzz/mkcorpus.py (x86_64 page tables, a ring of 8 descriptors and a
1 KiB data ring holding 5 records r0..r4, ids 20..24, in slots 4..7 and
0, r3's block wrapped to the start of the data ring), with
OFFSET(printk_info.seq) added. OUTDIR/CASE.want lists the first lines of
the records the log must show, in order, or "none" when nothing may be
recovered.

  intact        nothing damaged: read from tail_id to head_id
  wild-ids      head_id and tail_id random: every record salvaged, in
                sequence order (slot order is 24, 20, 21, 22, 23)
  head-only     only head_id random
  ends-empty    head_id/tail_id valid but framing a reusable descriptor
  garbage       wild ids, and the 3 free slots hold finalized garbage:
                ids of other slots, a seq of another slot, text beyond
                the data ring, a data block whose id word is another's
  wild-lpos     wild ids, and r2's text positions 3 data rings apart
  bad-block-id  wild ids, and r1's data block names another descriptor
  bad-seq       wild ids, and r3's seq is one more than its slot allows
  dataless      wild ids, and r0 carries the kernel's no-data lpos
  gone          wild ids, every descriptor random
  no-seq-key    wild ids, and VMCOREINFO without OFFSET(printk_info.seq)
"""
import os
import random
import struct
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'fuzz'))
import mkcorpus  # noqa: E402

PAGE = 4096
# Where build_memory puts the ring (mkcorpus.py: page 1).
RB, DESCS, INFOS, TEXT = PAGE + 256, PAGE + 1024, PAGE + 2048, PAGE + 3072
COUNT, SIZE = 8, 1024
# Each record's first line as `dmesg` prints it after its time stamp (mkcorpus.py's texts).
MSGS = ['Linux version 6.1.0-fuzz', 'Command line: console=ttyS0', 'two', r'bytes \x01\xff\x7f',
        'Kernel panic - not syncing: fuzz']


def base():
    mem, vi = mkcorpus.build_memory(kind='61', program=mkcorpus.prog_mixed, vmemmap_4k=True)
    vi = vi.rstrip('\0') + 'OFFSET(printk_info.seq)=0\n\0'
    return bytearray(mem), vi


def q(mem, pa, v):
    struct.pack_into('<Q', mem, pa, v & (1 << 64) - 1)


def rq(mem, pa):
    return struct.unpack_from('<Q', mem, pa)[0]


def slot_of(rid):
    return rid % COUNT


def case(name, mem, vi, rnd):
    wild = name not in ('intact', 'head-only', 'ends-empty')
    if wild:
        q(mem, RB + 24, rnd.getrandbits(62))
        q(mem, RB + 32, rnd.getrandbits(62))
    want = list(range(5))
    if name == 'head-only':
        q(mem, RB + 24, rnd.getrandbits(62))
    elif name == 'ends-empty':
        # tail = head = a free slot's id, its state reusable (3).
        q(mem, DESCS + 1 * 24, (3 << 62) | 25)
        q(mem, RB + 24, 25)
        q(mem, RB + 32, 25)
    elif name == 'garbage':
        for k, s in enumerate((1, 2, 3)):
            d, i = DESCS + s * 24, INFOS + s * 88
            if k == 0:      # an id of another slot
                q(mem, d, (2 << 62) | (s + 1))
                q(mem, i, s)
            elif k == 1:    # right id, seq of another slot
                q(mem, d, (2 << 62) | (8 + s))
                q(mem, i, s + 1)
            else:           # right id and seq, text far outside
                q(mem, d, (2 << 62) | (8 + s))
                q(mem, i, 8 + s)
                q(mem, d + 8, 0x7fffffff00000000)
                q(mem, d + 16, 0x7fffffff00000040)
            struct.pack_into('<H', mem, i + 16, 200)
    elif name == 'wild-lpos':
        d = DESCS + slot_of(22) * 24
        q(mem, d + 16, rq(mem, d + 8) + 3 * SIZE)
        want.remove(2)
    elif name == 'bad-block-id':
        d = DESCS + slot_of(21) * 24
        begin, nxt = rq(mem, d + 8), rq(mem, d + 16)
        off = begin % SIZE if begin // SIZE == nxt // SIZE else 0
        q(mem, TEXT + off, 23)
        want.remove(1)
    elif name == 'bad-seq':
        q(mem, INFOS + slot_of(23) * 88, 24)
        want.remove(3)
    elif name == 'dataless':
        d = DESCS + slot_of(20) * 24
        q(mem, d + 8, 1)
        q(mem, d + 16, 1)
        want.remove(0)
    elif name == 'gone':
        for s in range(COUNT):
            for w in range(3):
                q(mem, DESCS + s * 24 + w * 8, rnd.getrandbits(64))
        want = None
    elif name == 'no-seq-key':
        vi = vi.replace('OFFSET(printk_info.seq)=0\n', '')
        want = None
    return mem, vi, want


CASES = ['intact', 'wild-ids', 'head-only', 'ends-empty', 'garbage', 'wild-lpos', 'bad-block-id',
         'bad-seq', 'dataless', 'gone', 'no-seq-key']


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    outdir = sys.argv[1]
    os.makedirs(outdir, exist_ok=True)
    for name in CASES:
        rnd = random.Random(name)
        mem, vi = base()
        mem, vi, want = case(name, mem, vi, rnd)
        n = len(mem)
        core = mkcorpus.elf_vmcore(bytes(mem), vi, [(0, 0, n)])
        with open(os.path.join(outdir, name + '.vmcore'), 'wb') as f:
            f.write(core)
        with open(os.path.join(outdir, name + '.want'), 'w') as f:
            f.write('none\n' if want is None else ''.join(MSGS[k] + '\n' for k in want))


if __name__ == '__main__':
    main()
