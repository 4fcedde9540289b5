#!/usr/bin/python3
"""chunks: list the chunk stream of a kdumpinit dump (docs/FORMAT.md).

usage: chunks.py IMAGE

Prints one line per chunk header that has the chunk magic, following the
lengths from the superblock's data_offset:
    OFFSET TYPE LEN SEQ DUMP_ID
(decimal; OFFSET is the header's device offset, DUMP_ID hex). Stops at the
first offset without the magic, after END, or at the end of the file.
Hashes are not checked: this only finds where chunks are, so that tests
can damage one on purpose.
"""
import struct
import sys

HDR = struct.Struct("<4sHHIIQQQQ")


def main():
    if len(sys.argv) != 2:
        print(__doc__.strip().split("\n")[2], file=sys.stderr)
        return 2
    with open(sys.argv[1], "rb") as f:
        data = f.read()
    if data[:8] != b"KDUMPINT":
        print("chunks: no kdumpinit superblock", file=sys.stderr)
        return 1
    off = struct.unpack_from("<Q", data, 104)[0]
    while off + HDR.size <= len(data):
        magic, typ, _hs, length, _fl, dump_id, seq, _ph, _hh = HDR.unpack_from(data, off)
        if magic != b"KDCK":
            break
        print(f"{off} {typ} {length} {seq} {dump_id:016x}")
        if typ == 7:
            break
        off += (HDR.size + length + 7) & ~7
    return 0


if __name__ == "__main__":
    sys.exit(main())
