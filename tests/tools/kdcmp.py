#!/usr/bin/python3
"""kdcmp.py MAKEDUMPFILE.kdump SAVED.elf

The differential oracle for page filtering. MAKEDUMPFILE.kdump is
makedumpfile's kdump-compressed output (pages raw, or zlib with -c); SAVED.elf
is `kdumpinit save --format elf` output at the same dump level.

makedumpfile's ELF output (-E) is no oracle: it keeps excluded runs shorter
than 256 pages to save program headers. Its kdump output is exact per pfn:
the second bitmap holds every dumped pfn (zero pages included: they share
one zero block).

Passes when the set of non-zero pages kept is the same on both sides and
every such page has the same bytes. Exit 0 OK, 1 FAIL, 2 usage/unreadable.
"""
import mmap
import struct
import sys
import zlib

PAGE = 4096
ZERO = bytes(PAGE)


def kdump_pages(path):
    f = open(path, 'rb')
    m = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)
    if m[:8] != b'KDUMP   ':
        raise ValueError('%s: not a kdump-compressed file' % path)
    # disk_dump_header: signature[8], header_version, utsname[390], pad,
    # timestamp (16 at 408), then status, block_size, sub_hdr_size,
    # bitmap_blocks, max_mapnr at 424.
    _st, bs, sub, bmb, maxnr = struct.unpack_from('<iiiiI', m, 424)
    if bs != PAGE or sub < 1 or bmb < 2:
        raise ValueError('%s: unexpected header (block %d)' % (path, bs))
    # kdump_sub_header: the 64-bit max_mapnr lives at offset 64 of it
    # (after phys_base, dump_level, split, start/end_pfn, vmcoreinfo and
    # notes offsets/sizes, eraseinfo...), for dumps past 2^32 pfns.
    bm = m[bs * (1 + sub):bs * (1 + sub + bmb)]
    b2 = bm[len(bm) // 2:]
    maxnr = min(maxnr, len(b2) * 8)
    desc = bs * (1 + sub + bmb)
    out = {}
    k = 0
    for byte_i, byte in enumerate(b2):
        if not byte:
            continue
        for bit in range(8):
            if not (byte >> bit) & 1:
                continue
            pfn = byte_i * 8 + bit
            if pfn >= maxnr:
                break
            off, size, flags, _pf = struct.unpack_from('<qIIQ', m, desc + 24 * k)
            k += 1
            data = m[off:off + size]
            if flags & 1:
                data = zlib.decompress(data)
            elif flags:
                raise ValueError('%s: pfn %#x compressed with flags %#x; '
                                 'run makedumpfile without -l/-p/-z' % (path, pfn, flags))
            if len(data) != PAGE:
                raise ValueError('%s: pfn %#x has %d bytes' % (path, pfn, len(data)))
            if data != ZERO:
                out[pfn] = data
    return out


def elf_pages(path):
    f = open(path, 'rb')
    m = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)
    if m[:4] != b'\x7fELF' or m[4] != 2:
        raise ValueError('%s: not a 64-bit ELF' % path)
    phoff, = struct.unpack_from('<Q', m, 32)
    phnum, = struct.unpack_from('<H', m, 56)
    if phnum == 0xffff:
        shoff, = struct.unpack_from('<Q', m, 40)
        phnum, = struct.unpack_from('<I', m, shoff + 44)
    out = {}
    for i in range(phnum):
        typ, _fl, off, _va, pa, fsz, _msz, _al = struct.unpack_from('<IIQQQQQQ', m, phoff + 56 * i)
        if typ != 1:
            continue
        for q in range(0, fsz - fsz % PAGE, PAGE):
            if (pa + q) % PAGE:
                continue  # partial pages at unaligned ends: not comparable
            data = m[off + q:off + q + PAGE]
            if data != ZERO:
                pfn = (pa + q) // PAGE
                if pfn in out and out[pfn] != data:
                    raise ValueError('%s: pfn %#x differs between two PT_LOADs' % (path, pfn))
                out[pfn] = data
    return out


def main():
    if len(sys.argv) != 3:
        print(__doc__.strip().splitlines()[0], file=sys.stderr)
        return 2
    try:
        md = kdump_pages(sys.argv[1])
        ours = elf_pages(sys.argv[2])
    except (OSError, ValueError, struct.error, zlib.error) as e:
        print('kdcmp: %s' % e)
        print('result: FAIL')
        return 2
    only_md = sorted(set(md) - set(ours))
    only_ours = sorted(set(ours) - set(md))
    diff = sorted(p for p in set(md) & set(ours) if md[p] != ours[p])
    print('makedumpfile kept %d non-zero pages, kdumpinit %d' % (len(md), len(ours)))
    print('only makedumpfile %d, only kdumpinit %d, bytes differ %d'
          % (len(only_md), len(only_ours), len(diff)))
    for name, lst in (('only makedumpfile', only_md), ('only kdumpinit', only_ours), ('differ', diff)):
        if lst:
            print('  %s: %s' % (name, ' '.join('%#x' % p for p in lst[:10])))
    ok = not (only_md or only_ours or diff)
    print('result: %s' % ('OK' if ok else 'FAIL'))
    return 0 if ok else 1


if __name__ == '__main__':
    sys.exit(main())
