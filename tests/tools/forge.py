#!/usr/bin/python3
"""forge: edit a kdumpinit dump, or an ELF vmcore, the way someone who
forges the checksums again could (docs/FORMAT.md), for tests that must
show the reader is not fooled by intact-looking chunks.

usage: forge.py IMAGE delete-pages N     drop the Nth PAGES chunk (0-based)
       forge.py IMAGE early-end N        END moved to right after the Nth PAGES
       forge.py IMAGE retype-pages N     the Nth PAGES chunk becomes a PAD
       forge.py IMAGE segment I FIELD=V...   SEGMENTS entry I edited
                                         (paddr vaddr memsz filesz)
       forge.py CORE phdr I FIELD=V...   ELF program header I edited
                                         (type offset paddr vaddr memsz filesz)

Dump edits keep every chunk intact: chunks after an edit are renumbered
and each changed header or payload gets its XXH64 again. Values take
Python integer syntax (0x..., 1<<46 as 2**46). The file is rewritten in
place (a dump keeps its size; zeros fill what a deletion frees).
"""
import os
import struct
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "fuzz"))
from mkcorpus import xxh64  # noqa: E402  (pure Python, seed 0)

SEG_FIELDS = {"paddr": 0, "vaddr": 8, "memsz": 16, "filesz": 24}
PH_FIELDS = {"type": (0, "<I"), "offset": (8, "<Q"), "vaddr": (16, "<Q"), "paddr": (24, "<Q"),
             "filesz": (32, "<Q"), "memsz": (40, "<Q")}


def span(ln):
    return (48 + ln + 7) & ~7


def read_chunks(img):
    """[(header bytes, payload bytes)] from data_offset up to END."""
    base = struct.unpack_from("<Q", img, 104)[0]
    out, pos = [], base
    while pos + 48 <= len(img) and img[pos:pos + 4] == b"KDCK":
        ln = struct.unpack_from("<I", img, pos + 8)[0]
        out.append((bytearray(img[pos:pos + 48]), bytes(img[pos + 48:pos + 48 + ln])))
        if struct.unpack_from("<H", img, pos + 4)[0] == 7:
            break
        pos += span(ln)
    return base, out


def write_chunks(img, base, chs, edited=()):
    """The chunks again from base, renumbered, hashes right; zeros to the
    old end of the stream."""
    old_end = base
    _, old = read_chunks(img)
    for h, p in old:
        old_end += span(len(p))
    pos = base
    for seq, (h, p) in enumerate(chs):
        if struct.unpack_from("<I", h, 8)[0] != len(p) or any(h is e for e in edited):
            struct.pack_into("<I", h, 8, len(p))
            struct.pack_into("<Q", h, 32, xxh64(p))
        struct.pack_into("<Q", h, 24, seq)
        struct.pack_into("<Q", h, 40, 0)
        struct.pack_into("<Q", h, 40, xxh64(bytes(h)))
        img[pos:pos + 48] = h
        img[pos + 48:pos + 48 + len(p)] = p
        pad = span(len(p)) - 48 - len(p)
        img[pos + 48 + len(p):pos + 48 + len(p) + pad] = bytes(pad)
        pos += span(len(p))
    if pos < old_end:
        img[pos:old_end] = bytes(old_end - pos)


def ctype(c):
    return struct.unpack_from("<H", c[0], 4)[0]


def nth_pages(chs, n):
    idx = [i for i, c in enumerate(chs) if ctype(c) == 5]
    if n >= len(idx):
        sys.exit("forge: no PAGES chunk %d (there are %d)" % (n, len(idx)))
    return idx[n]


def assignments(args, fields):
    out = []
    for a in args:
        k, _, v = a.partition("=")
        if k not in fields:
            sys.exit("forge: unknown field %s" % k)
        out.append((fields[k], int(eval(v, {"__builtins__": {}}))))
    return out


def edit_dump(img, op, args):
    base, chs = read_chunks(img)
    edited = []
    if op == "delete-pages":
        del chs[nth_pages(chs, int(args[0]))]
    elif op == "early-end":
        end = chs.pop()
        if ctype(end) != 7:
            sys.exit("forge: the dump has no END")
        chs = chs[:nth_pages(chs, int(args[0])) + 1] + [end]
    elif op == "retype-pages":
        struct.pack_into("<H", chs[nth_pages(chs, int(args[0]))][0], 4, 8)
    elif op == "segment":
        k = [i for i, c in enumerate(chs) if ctype(c) == 4][0]
        p = bytearray(chs[k][1])
        i = int(args[0])
        for off, v in assignments(args[1:], SEG_FIELDS):
            struct.pack_into("<Q", p, 40 * i + off, v)
        chs[k] = (chs[k][0], bytes(p))
        edited.append(chs[k][0])
    else:
        sys.exit(__doc__.strip().split("\n")[2])
    write_chunks(img, base, chs, edited)


def edit_phdr(img, args):
    phoff = struct.unpack_from("<Q", img, 32)[0]
    phentsize, phnum = struct.unpack_from("<HH", img, 54)
    i = int(args[0])
    if i >= phnum:
        sys.exit("forge: no program header %d" % i)
    for (off, fmt), v in assignments(args[1:], PH_FIELDS):
        struct.pack_into(fmt, img, phoff + i * phentsize + off, v)


def main():
    if len(sys.argv) < 4:
        print(__doc__.strip().split("\n")[2], file=sys.stderr)
        return 2
    path, op, args = sys.argv[1], sys.argv[2], sys.argv[3:]
    with open(path, "rb") as f:
        img = bytearray(f.read())
    if op == "phdr":
        edit_phdr(img, args)
    else:
        edit_dump(img, op, args)
    with open(path, "r+b") as f:
        f.write(img)
    return 0


if __name__ == "__main__":
    sys.exit(main())
