#!/usr/bin/python3
"""drgnlog: can drgn read the crashed kernel's log out of a saved dump,
through the dump's own page tables?

usage: drgnlog.py DUMP [--want TEXT]

Opens DUMP (kdump-compressed or ELF) with drgn and no debug info, and
walks the printk ring buffer (the lockless one of Linux 5.10 on) with
nothing but the dump's VMCOREINFO: SYMBOL(prb), the SIZE() and OFFSET()
of printk_ringbuffer, prb_desc_ring, prb_data_ring, prb_desc and
printk_info. Every read goes through drgn, which translates the kernel's
virtual addresses with the page tables in the dump, so the ring's
descriptors, infos and text must all be in it. Finalized and committed
records are read in id order, from tail_id to head_id.

Exit 0 and one line when at least one record reads and TEXT (default:
the sysrq panic, "sysrq triggered crash") is in one of them; 1 with the
reason otherwise.
"""
import argparse
import re
import sys

import drgn

SV_SHIFT = 62                     # the two state bits on top of state_var
ID_MASK = (1 << SV_SHIFT) - 1
COMMITTED, FINALIZED = 1, 2


def vmcoreinfo(path):
    # The VMCOREINFO text sits near the start of both formats.
    with open(path, "rb") as f:
        head = f.read(64 << 20)
    i = head.find(b"OSRELEASE=")
    if i < 0:
        raise SystemExit(f"drgnlog: no VMCOREINFO in {path}")
    text = head[i:i + 16384].split(b"\0")[0].decode("ascii", "replace")
    return dict(m.groups() for m in re.finditer(r"^([A-Z_]+\([^)]*\)|[A-Z_]+)=(.*)$", text, re.M))


def main():
    ap = argparse.ArgumentParser(usage=__doc__.split("\n")[3])
    ap.add_argument("dump")
    ap.add_argument("--want", default="sysrq triggered crash")
    a = ap.parse_args()
    vi = vmcoreinfo(a.dump)

    def off(k):
        return int(vi[f"OFFSET({k})"])

    def size(k):
        return int(vi[f"SIZE({k})"])

    try:
        sym = int(vi["SYMBOL(prb)"], 16)
        o_desc, o_text = off("printk_ringbuffer.desc_ring"), off("printk_ringbuffer.text_data_ring")
        o_bits, o_descs, o_infos = off("prb_desc_ring.count_bits"), off("prb_desc_ring.descs"), off("prb_desc_ring.infos")
        o_head, o_tail = off("prb_desc_ring.head_id"), off("prb_desc_ring.tail_id")
        o_sbits, o_data = off("prb_data_ring.size_bits"), off("prb_data_ring.data")
        o_sv, o_lpos = off("prb_desc.state_var"), off("prb_desc.text_blk_lpos")
        o_begin, o_next = off("prb_data_blk_lpos.begin"), off("prb_data_blk_lpos.next")
        o_seq, o_len = off("printk_info.seq"), off("printk_info.text_len")
        s_desc, s_info = size("prb_desc"), size("printk_info")
    except KeyError as e:
        print(f"drgnlog: {a.dump}: VMCOREINFO lacks {e}")
        return 1

    prog = drgn.Program()
    try:
        prog.set_core_dump(a.dump)
        u64 = lambda addr: prog.read_u64(addr)  # noqa: E731
        u32 = lambda addr: prog.read_u32(addr)  # noqa: E731
        rb = u64(sym)                    # prb is a pointer to the ring buffer
        dr, tr = rb + o_desc, rb + o_text
        count_bits, descs, infos = u32(dr + o_bits), u64(dr + o_descs), u64(dr + o_infos)
        head, tail = u64(dr + o_head) & ID_MASK, u64(dr + o_tail) & ID_MASK
        size_bits, data = u32(tr + o_sbits), u64(tr + o_data)
        if count_bits > 24 or size_bits > 32:
            print(f"drgnlog: {a.dump}: implausible ring ({count_bits} count bits, {size_bits} size bits)")
            return 1
        dmask, n = (1 << size_bits) - 1, 1 << count_bits
        records = []
        i = tail
        for _ in range(n):
            idx = i & (n - 1)
            d = descs + idx * s_desc
            sv = u64(d + o_sv)
            if sv & ID_MASK == i and sv >> SV_SHIFT in (COMMITTED, FINALIZED):
                begin, nxt = u64(d + o_lpos + o_begin), u64(d + o_lpos + o_next)
                inf = infos + idx * s_info
                seq, tlen = u64(inf + o_seq), prog.read_u16(inf + o_len)
                # A block that wraps is stored whole at the ring's start;
                # its text follows the block's id (one unsigned long).
                start = 0 if begin >> size_bits != nxt >> size_bits else begin & dmask
                if tlen and start + 8 + tlen <= dmask + 1:
                    text = prog.read(data + start + 8, tlen).decode("utf-8", "replace")
                    records.append((seq, text))
            if i == head:
                break
            i = (i + 1) & ID_MASK
    except Exception as e:  # drgn.FaultError, ValueError, OSError
        print(f"drgnlog: {a.dump}: {type(e).__name__}: {e}")
        return 1
    if not records:
        print(f"drgnlog: {a.dump}: no record read (tail id {tail}, head id {head})")
        return 1
    records.sort()
    hit = [t for _s, t in records if a.want in t]
    if not hit:
        print(f"drgnlog: {a.dump}: {len(records)} records read, none with '{a.want}'; last: {records[-1][1][:100]}")
        return 1
    print(f"drgnlog: {a.dump}: drgn reads the kernel log: {len(records)} records "
          f"(seq {records[0][0]}..{records[-1][0]}), with '{hit[0][:80]}'")
    return 0


if __name__ == "__main__":
    sys.exit(main())
