#!/usr/bin/python3
"""absent: check that given physical pages are not stored in an ELF vmcore.

usage: absent.py SAVED ADDR[,ADDR...]

SAVED is an ELF vmcore as `kdumpinit save --format elf` writes it; a page
is stored when some PT_LOAD holds it in its file part (p_filesz), and
left out when every PT_LOAD that maps it ends its file part before it.
The e2e harness uses this for hwpoisoned pages: at level 1 `info` counts
them as hwpoison, but at higher levels a poisoned page that is also free,
cache or user memory is counted in that class (makedumpfile's order), so
the count alone cannot show they were all left out.

Exit 0 when none of the pages is stored and each is mapped by some
PT_LOAD (so an address outside the dump fails too), 1 otherwise.
"""
import os
import struct
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from vmcmp import Core, ElfError, PAGE  # noqa: E402


def main():
    if len(sys.argv) != 3:
        print(__doc__.split("\n\n")[1], file=sys.stderr)
        return 2
    try:
        core = Core(sys.argv[1])
        addrs = [int(a, 0) & ~(PAGE - 1) for a in sys.argv[2].split(",") if a]
    except (OSError, ElfError, struct.error, ValueError) as e:
        print(f"absent: {e}", file=sys.stderr)
        return 1
    if not addrs:
        print("absent: no addresses given", file=sys.stderr)
        return 2
    bad = 0
    for a in addrs:
        maps = [s for s in core.loads if s.paddr <= a < s.paddr + s.memsz]
        stored = [s for s in maps if a < s.paddr + s.filesz]
        if not maps:
            print(f"paddr {a:#x}: not mapped by any PT_LOAD")
            bad += 1
        elif stored:
            print(f"paddr {a:#x}: stored (phdr {stored[0].index})")
            bad += 1
        else:
            print(f"paddr {a:#x}: left out")
    print(f"result: {'OK' if not bad else 'FAIL'} ({len(addrs) - bad} of {len(addrs)} left out)")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
