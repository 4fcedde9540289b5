#!/usr/bin/python3
"""hdrcheck.py VMCORE: the arm64 ELF core header, as the crash kernel's
/proc/vmcore showed it (a raw copy), against the crashed kernel's own
VMCOREINFO: one PT_LOAD is the kernel image (vaddr - paddr =
NUMBER(kimage_voffset), holding SYMBOL(_stext)), every other PT_LOAD is
the linear map (vaddr - paddr = -2^VA_BITS - PHYS_OFFSET, 5.4+ layout),
and the notes include VMCOREINFO. Prints one line per finding; exit 0 when
all hold, 1 otherwise, 2 unreadable."""
import struct
import sys


def main(path):
    f = open(path, 'rb')
    eh = f.read(64)
    if eh[:4] != b'\x7fELF' or eh[4] != 2 or eh[5] != 1:
        print('not a little-endian ELF64 file')
        return 2
    machine = struct.unpack_from('<H', eh, 18)[0]
    phoff, = struct.unpack_from('<Q', eh, 32)
    phentsize, phnum = struct.unpack_from('<HH', eh, 54)
    f.seek(phoff)
    phs = [struct.unpack('<IIQQQQQQ', f.read(phentsize)[:56]) for _ in range(phnum)]
    info = {}
    for p_type, _, off, _, _, filesz, _, _ in phs:
        if p_type != 4:
            continue
        f.seek(off)
        data = f.read(filesz)
        i = 0
        while i + 12 <= len(data):
            nsz, dsz, _ = struct.unpack_from('<III', data, i)
            name = data[i + 12:i + 12 + nsz].rstrip(b'\0')
            desc = data[i + 12 + ((nsz + 3) & ~3):][:dsz]
            if name == b'VMCOREINFO':
                for line in desc.decode('ascii', 'replace').splitlines():
                    k, _, v = line.partition('=')
                    info[k] = v
            i += 12 + ((nsz + 3) & ~3) + ((dsz + 3) & ~3)
    ok = True

    def need(cond, what):
        nonlocal ok
        print(('ok   ' if cond else 'FAIL ') + what)
        ok = ok and cond
    need(machine == 183, 'e_machine %d (EM_AARCH64 is 183)' % machine)
    need('NUMBER(kimage_voffset)' in info, 'VMCOREINFO note present, with kimage_voffset')
    if not ok:
        return 1
    voff = int(info['NUMBER(kimage_voffset)'], 0)
    stext = int(info['SYMBOL(_stext)'], 16)
    vabits = int(info['NUMBER(VA_BITS)'], 0)
    physoff = int(info['NUMBER(PHYS_OFFSET)'], 0)
    lin = ((-(1 << vabits)) - physoff) & (2**64 - 1)
    loads = [(va, pa, memsz) for t, _, _, va, pa, _, memsz, _ in phs if t == 1]
    image = [x for x in loads if (x[0] - x[1]) & (2**64 - 1) == voff]
    need(len(image) == 1 and image[0][0] <= stext < image[0][0] + image[0][2],
         'one PT_LOAD is the kernel image (vaddr - paddr = kimage_voffset 0x%x) and holds _stext' % voff)
    rest = [x for x in loads if x not in image]
    need(rest and all((va - pa) & (2**64 - 1) == lin for va, pa, _ in rest),
         '%d linear-map PT_LOADs, vaddr - paddr = -2^%d - PHYS_OFFSET' % (len(rest), vabits))
    return 0 if ok else 1


if __name__ == '__main__':
    if len(sys.argv) != 2:
        print(__doc__)
        sys.exit(2)
    sys.exit(main(sys.argv[1]))
