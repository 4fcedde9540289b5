#!/usr/bin/env python3
"""Test helper for the claim gate (tests/unit/run.sh).

  devsig.py end KIND IMAGE     writes an end-of-device signature: md0.90,
                               md1.0 (with the checksums libblkid verifies),
                               ddf, imsm, gpt (backup header, last 512-byte
                               sector) or gpt4k (last 4 KiB sector)
  devsig.py reoffset IMAGE N   sets the claim superblock's data_offset to N
                               and re-checksums it (docs/FORMAT.md)
  devsig.py lease FILE READY   holds a read lease on FILE until killed, and
                               ignores the break: an O_RDWR open of FILE then
                               blocks for fs.lease-break-time (45 s), the
                               way a read from a failing disk blocks. READY
                               is created once the lease is held.

Offsets and magics are the documented ones (the kernel's md_p.h, SNIA DDF,
UEFI), written from scratch here.
"""
import fcntl
import os
import signal
import struct
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'fuzz'))
from mkcorpus import xxh64  # noqa: E402

MD_MAGIC = 0xa92b4efc


def fold(s):
    return ((s & 0xffffffff) + (s >> 32)) & 0xffffffff


def md090(size):
    # The last 64 KiB-aligned 64 KiB; 4096 bytes, csum over all of them.
    off = (size & ~0xffff) - 0x10000
    sb = bytearray(4096)
    struct.pack_into('<IIII', sb, 0, MD_MAGIC, 0, 90, 0)
    struct.pack_into('<I', sb, 152, fold(sum(struct.unpack('<1024I', bytes(sb)))))
    return off, bytes(sb)


def md10(size):
    # 8 KiB from the end, 4 KiB aligned; super_offset names that sector;
    # max_dev 0: the checksum covers the 256-byte header.
    off = (((size // 512) - 16) & ~7) * 512
    sb = bytearray(256)
    struct.pack_into('<II', sb, 0, MD_MAGIC, 1)
    sb[16:32] = bytes(range(1, 17))
    struct.pack_into('<QQ', sb, 136, off // 512, off // 512)
    struct.pack_into('<I', sb, 216, fold(sum(struct.unpack('<64I', bytes(sb)))))
    return off, bytes(sb)


def ddf(size):
    return size - 512, b'\xde\x11\xde\x11' + b'\0' * 4 + b'G' * 24 + b'01.02.00'


def imsm(size):
    return size - 1024, b'Intel Raid ISM Cfg Sig. 1.0.00\0\0'


def gpt(size):
    return size - 512, b'EFI PART' + struct.pack('<II', 0x10000, 92)


def gpt4k(size):
    return size - 4096, b'EFI PART' + struct.pack('<II', 0x10000, 92)


def end(kind, path):
    size = os.path.getsize(path)
    off, data = {'md0.90': md090, 'md1.0': md10, 'ddf': ddf, 'imsm': imsm,
                 'gpt': gpt, 'gpt4k': gpt4k}[kind](size)
    with open(path, 'r+b') as f:
        f.seek(off)
        f.write(data)


def reoffset(path, n):
    with open(path, 'r+b') as f:
        sb = bytearray(f.read(448))
        struct.pack_into('<Q', sb, 104, n)
        struct.pack_into('<Q', sb, 440, 0)
        struct.pack_into('<Q', sb, 440, xxh64(bytes(sb)))
        f.seek(0)
        f.write(sb)


def lease(path, ready):
    signal.signal(signal.SIGIO, signal.SIG_IGN)
    fd = os.open(path, os.O_RDONLY)
    fcntl.fcntl(fd, 1024, fcntl.F_RDLCK)  # F_SETLEASE
    open(ready, 'w').close()
    while True:
        time.sleep(60)


def main():
    a = sys.argv[1:]
    if len(a) == 3 and a[0] == 'end':
        end(a[1], a[2])
    elif len(a) == 3 and a[0] == 'reoffset':
        reoffset(a[1], int(a[2], 0))
    elif len(a) == 3 and a[0] == 'lease':
        lease(a[1], a[2])
    else:
        sys.exit(__doc__)


if __name__ == '__main__':
    main()
