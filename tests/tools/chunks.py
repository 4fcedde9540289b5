#!/usr/bin/python3
"""chunks: list the chunk stream of a kdumpinit dump (docs/FORMAT.md).

usage: chunks.py [--pages] IMAGE

Prints one line per chunk header that has the chunk magic, following the
lengths from the superblock's data_offset:
    OFFSET TYPE LEN SEQ DUMP_ID [FLAGS]
(decimal; OFFSET is the header's device offset, DUMP_ID hex; FLAGS, for a
PAGES chunk whose payload header is in the file, its pass flags: 1 LINKED,
2 LATER, 4 EARLY). Stops at the
first offset without the magic, after END, or at the end of the file.
Hashes are not checked: this only finds where chunks are, so that tests
can damage one on purpose.

--pages prints only the PAGES chunks, as "LEN PAYLOAD_HASH" (hex): what
must be the same for two captures of one vmcore, whatever their thread
count or read path (dump ids, times and the superblock differ).
"""
import struct
import sys

HDR = struct.Struct("<4sHHIIQQQQ")


def main():
    args = sys.argv[1:]
    pages = bool(args) and args[0] == "--pages"
    if pages:
        args = args[1:]
    if len(args) != 1:
        print(__doc__.strip().split("\n")[2], file=sys.stderr)
        return 2
    with open(args[0], "rb") as f:
        data = f.read()
    if data[:8] != b"KDUMPINT":
        print("chunks: no kdumpinit superblock", file=sys.stderr)
        return 1
    off = struct.unpack_from("<Q", data, 104)[0]
    while off + HDR.size <= len(data):
        magic, typ, _hs, length, _fl, dump_id, seq, ph, _hh = HDR.unpack_from(data, off)
        if magic != b"KDCK":
            break
        if not pages:
            fl = ""
            if typ == 5 and off + HDR.size + 24 <= len(data):
                fl = " %d" % struct.unpack_from("<I", data, off + HDR.size + 20)[0]
            print(f"{off} {typ} {length} {seq} {dump_id:016x}{fl}")
        elif typ == 5:
            print(f"{length} {ph:016x}")
        if typ == 7:
            break
        off += (HDR.size + length + 7) & ~7
    return 0


if __name__ == "__main__":
    sys.exit(main())
