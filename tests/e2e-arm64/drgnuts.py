#!/usr/bin/python3
"""drgnuts.py KDUMP: drgn (python3-drgn, with libkdumpfile) opens KDUMP, a
`kdumpinit save --format kdump` file of an arm64 crash, on this host, and
reads the crashed kernel's init_uts_ns by its virtual address (drgn's own
arm64 page-table walk; no debug info: the address and offset come from the
file's VMCOREINFO, which this script reads from the kdump sub-header's
copy). Prints "ARCH SYSNAME RELEASE"; exit 0 when drgn says AARCH64 and
the sysname is Linux, 1 otherwise, 2 when drgn is missing or fails."""
import struct
import sys

try:
    import drgn
except ImportError:
    print('python3-drgn is not installed')
    sys.exit(2)


def vmcoreinfo(path):
    with open(path, 'rb') as f:
        head = f.read(8 << 20)
    i = head.find(b'SYMBOL(init_uts_ns)=')
    if i < 0:
        raise ValueError('no VMCOREINFO with SYMBOL(init_uts_ns) in the first 8 MiB')
    end = head.find(b'\0', i)
    start = head.rfind(b'OSRELEASE=', 0, i)
    text = head[start if start >= 0 else i:end].decode('ascii', 'replace')
    return dict(line.partition('=')[::2] for line in text.splitlines() if '=' in line)


def main(path):
    vi = vmcoreinfo(path)
    addr = int(vi['SYMBOL(init_uts_ns)'], 16) + int(vi.get('OFFSET(uts_namespace.name)', '0'), 0)
    prog = drgn.Program()
    try:
        prog.set_core_dump(path)
        raw = prog.read(addr, 65 * 3)
    except Exception as e:  # drgn raises its own error types
        print('drgn: %s' % e)
        return 2
    sysname = raw[:65].split(b'\0')[0].decode('ascii', 'replace')
    release = raw[130:195].split(b'\0')[0].decode('ascii', 'replace')
    arch = str(prog.platform.arch).split('.')[-1]
    print(arch, sysname, release)
    return 0 if arch == 'AARCH64' and sysname == 'Linux' else 1


if __name__ == '__main__':
    if len(sys.argv) != 2:
        print(__doc__)
        sys.exit(2)
    sys.exit(main(sys.argv[1]))
