#!/usr/bin/python3
"""drgnopen: can drgn (libkdumpfile) open a saved dump and read the
crashed kernel's memory through its own page tables?

usage: drgnopen.py DUMP

Opens DUMP (kdump-compressed or ELF) with drgn and no debug info, takes
SYMBOL(init_uts_ns) and OSRELEASE from the dump's VMCOREINFO, and reads
init_uts_ns by its virtual address: drgn walks the kernel page tables
(swapper_pg_dir) in the dump to do that. The release string must be
there. So the dump must hold the page tables and init_uts_ns's page:
what a cut-short dump loses first when it is written in pfn order.
Exit 0 and one line when it reads; 1 with the reason when not.
"""
import re
import sys

import drgn


def vmcoreinfo(path):
    # The VMCOREINFO text sits near the start of both formats.
    with open(path, "rb") as f:
        head = f.read(64 << 20)
    sym = re.search(rb"SYMBOL\(init_uts_ns\)=([0-9a-f]+)", head)
    rel = re.search(rb"OSRELEASE=([^\n\0]+)", head)
    if not sym or not rel:
        raise SystemExit("drgnopen: no VMCOREINFO with init_uts_ns and OSRELEASE in " + path)
    return int(sym.group(1), 16), rel.group(1)


def main():
    if len(sys.argv) != 2:
        raise SystemExit(__doc__)
    path = sys.argv[1]
    addr, release = vmcoreinfo(path)
    prog = drgn.Program()
    try:
        prog.set_core_dump(path)
        data = prog.read(addr, 512)
    except Exception as e:  # drgn.FaultError, ValueError, OSError
        print(f"drgnopen: {path}: {type(e).__name__}: {e}")
        return 1
    if release not in data:
        print(f"drgnopen: {path}: init_uts_ns at {addr:#x} read, but without '{release.decode()}'")
        return 1
    print(f"drgnopen: {path}: drgn reads init_uts_ns at {addr:#x}: release {release.decode()}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
