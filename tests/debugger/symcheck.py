#!/usr/bin/python3
"""symcheck: does kdumpinit's kallsyms lookup (kernel/kallsyms.c, which
the debugger-page finder runs once for all its names) give the addresses
the kernel's own debug info gives?

usage: symcheck.py DBGSET RAW VMLINUX

The names: the finder's (kernel/dbgpages.c's sym_name and read_first,
parsed from the source) and a sample of the vmlinux's symbol table (every
STEP-th text, data, rodata and bss symbol whose name occurs once, so that
the first match kallsyms gives is the only one, and which kallsyms keeps:
not the export tables' __kstrtab_ and __ksymtab_ names). `DBGSET --syms RAW NAME...`
looks them up in the dump; drgn, given VMLINUX, gives each name's address
after KASLR. A name both know must have the same address; one the vmlinux
has and the lookup did not find is a failure too (the finder asks for
some in two spellings, sys_open and __x64_sys_open: only those the
vmlinux has are compared).
A kernel without KALLSYMS_ALL (no init_task in kallsyms: Debian 12's
arm64) is checked on code symbols alone. Per-CPU symbols of x86_64 before 6.15 (offsets, not addresses: below
4 GiB in the vmlinux) are not compared: drgn 0.0.22 relocates them.
Prints "ok N names" or "FAIL" lines, then exits 0 or 1.
"""
import os
import re
import subprocess
import sys

import drgn

STEP = 499


def finder_names(top):
    src = open(os.path.join(top, "kernel", "dbgpages.c")).read()
    names = []
    for table in ("sym_name", "read_first"):
        m = re.search(r"static const char \*const " + table + r"\[[^\]]*\] = \{(.*?)\};", src, re.S)
        if not m:
            raise SystemExit(f"symcheck: no {table}[] in kernel/dbgpages.c")
        names += re.findall(r'"([^"]+)"', m.group(1))
    return names


def sample(vmlinux):
    out = subprocess.run(["nm", vmlinux], capture_output=True, text=True, check=True).stdout
    lines = [line.split() for line in out.splitlines()]
    at = {f[2]: int(f[0], 16) for f in lines if len(f) == 3}
    stext, etext = at.get("_stext", 0), at.get("_etext", 1 << 64)
    seen, order, percpu, text = {}, [], set(), set()
    for f in lines:
        if len(f) != 3 or f[1] not in "tTdDbBrR":
            continue
        name = f[2]
        # code outside _stext.._etext (.exit.text of built-in drivers,
        # which arm64 keeps) is not in kallsyms
        if f[1] in "tT" and not stext <= int(f[0], 16) < etext:
            continue
        if int(f[0], 16) < 1 << 32:
            percpu.add(name)
        if f[1] in "tT":
            text.add(name)
        if name not in seen:
            order.append(name)
        seen[name] = seen.get(name, 0) + 1
    # scripts/kallsyms leaves out the export tables' own symbols, and
    # before 6.2 its own tables
    skip = ("__kstrtab", "__ksymtab", "__kcrctab", "__crc_", "kallsyms_")
    order = [n for n in order if not n.startswith(skip)]
    return [n for n in order[::STEP] if seen[n] == 1 and "." not in n], percpu, text


def main():
    if len(sys.argv) != 4:
        raise SystemExit(__doc__)
    dbgset, raw, vmlinux = sys.argv[1:]
    top = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
    fnames = finder_names(top)
    some, percpu, text = sample(vmlinux)
    names = list(dict.fromkeys(fnames + some))
    out = subprocess.run([dbgset, "--syms", raw] + names, capture_output=True, text=True)
    if out.returncode != 0:
        print(f"FAIL dbgset --syms: {out.stderr.strip()}")
        sys.exit(1)
    got = dict(line.split() for line in out.stdout.splitlines())
    prog = drgn.Program()
    prog.set_core_dump(raw)
    prog.load_debug_info([vmlinux])
    # A kernel without KALLSYMS_ALL (Debian 12's arm64) has only code in
    # kallsyms: then only code is compared.
    code_only = got.get("init_task", "0") == "0"
    bad, compared = [], 0
    for n in names:
        if code_only and n not in text:
            continue
        a = int(got.get(n, "0"), 16)
        try:
            want = prog.symbol(n).address
        except LookupError:
            want = None
        if want is None:
            if a:
                bad.append(f"{n}: found at {a:#x}, the vmlinux has no such symbol")
            continue
        if n in percpu:
            # x86_64 before 6.15: an offset into each CPU's area, which
            # kallsyms holds absolute and drgn 0.0.22 moves by KASLR's
            # offset as if it were an address
            continue
        compared += 1
        if a != want:
            bad.append(f"{n}: {a:#x}, the vmlinux says {want:#x}")
    for b in bad[:20]:
        print(f"FAIL {b}")
    if bad or compared < 50:
        print(f"FAIL {len(bad)} of {compared} names wrong (at least 50 must be compared)")
        sys.exit(1)
    what = " (code only: no KALLSYMS_ALL)" if code_only else ""
    print(f"ok {compared} names{what} at the vmlinux's addresses")


if __name__ == "__main__":
    main()
