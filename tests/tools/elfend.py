#!/usr/bin/python3
"""Print the end of the ELF64 image at the start of FILE: the largest
p_offset + p_filesz over the program headers (and the end of the headers
themselves). A raw copy of /proc/vmcore on a bigger disk ends there."""
import struct
import sys


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: elfend.py FILE")
    with open(sys.argv[1], "rb") as f:
        eh = f.read(64)
        if len(eh) < 64 or eh[:4] != b"\x7fELF" or eh[4] != 2 or eh[5] != 1:
            sys.exit("elfend.py: %s: not a little-endian ELF64 file" % sys.argv[1])
        phoff, = struct.unpack_from("<Q", eh, 32)
        phentsize, phnum = struct.unpack_from("<HH", eh, 54)
        if phnum == 0 or phentsize < 56:
            sys.exit("elfend.py: %s: no program headers" % sys.argv[1])
        f.seek(phoff)
        ph = f.read(phentsize * phnum)
        if len(ph) < phentsize * phnum:
            sys.exit("elfend.py: %s: truncated program headers" % sys.argv[1])
    end = phoff + phentsize * phnum
    for i in range(phnum):
        _, _, off, _, _, filesz, _, _ = struct.unpack_from("<IIQQQQQQ", ph, i * phentsize)
        end = max(end, off + filesz)
    print(end)


main()
