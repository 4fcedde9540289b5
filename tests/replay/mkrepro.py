#!/usr/bin/python3
"""Replay inputs: the part of a real vmcore the capture reads before its pages.

A capture reads a vmcore in two phases: first the headers, VMCOREINFO, the
kernel log, the debugger-page finder (page tables, mem_section, task
structs, stacks, modules...) and the memory map's decision, then the pages
themselves. The first phase ends with the console's "memory map:" line
(or the first "capture:" progress line), and it is where the finder's hangs
were (an address sum that wraps in the finder). A reproducer keeps the file's size, its headers (up to the
first PT_LOAD's data) and every 4 KiB block of the file the first phase
read; everything else reads as zeros when the reproducer is rebuilt as a
sparse file. The finder then walks the same words as on the whole vmcore.

  mkrepro.py record VMCORE OUT [--bin KDUMPINIT]... [--timeout S] [--level N]
      Runs each KDUMPINIT (default build/kdumpinit) under strace on VMCORE
      (capture --no-mmap --threads 1: every read a pread64), takes the
      offsets read from the vmcore before the "memory map:" line (the union
      over the binaries: an old one that hangs and a new one that goes
      further read different pages), writes OUT (xz), then rebuilds it and
      runs each binary on the rebuilt file to show it behaves as on the
      whole vmcore: the same "debugger pages first" line, or a hang again.
      Prints one line per binary: BIN full=... replay=...
  mkrepro.py rebuild REPRO FILE
      Writes the sparse vmcore FILE from REPRO.
  mkrepro.py info REPRO
      Prints the file size, the extents and the bytes they hold.

The format (little-endian, the whole of it one xz stream):
  "KDIREPRO" u32 version (1) u32 block (4096) u64 file_size u32 n u32 0
  n x (u64 offset, u64 length)   extents, sorted, not overlapping
  the extents' bytes, in order
"""
import lzma
import os
import re
import shutil
import struct
import subprocess
import sys
import tempfile
import time

MAGIC = b"KDIREPRO"
BLOCK = 4096
TOP = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def die(msg):
    sys.stderr.write("mkrepro: %s\n" % msg)
    sys.exit(1)


def headers_end(path):
    """Where the first PT_LOAD's data starts: the ELF header, the program
    headers and the notes lie before it."""
    with open(path, "rb") as f:
        e = f.read(64)
        if e[:4] != b"\x7fELF" or e[4] != 2:
            die("%s is not a 64-bit ELF file" % path)
        phoff, = struct.unpack_from("<Q", e, 32)
        phentsize, phnum = struct.unpack_from("<HH", e, 54)
        f.seek(phoff)
        ph = f.read(phentsize * phnum)
    end = phoff + phentsize * phnum
    loads = []
    for i in range(phnum):
        p_type, _, off, _, _, filesz = struct.unpack_from("<IIQQQQ", ph, i * phentsize)
        if p_type == 1 and filesz:
            loads.append(off)
        elif p_type == 4:
            end = max(end, off + filesz)
    return max(end, min(loads) if loads else end)


def trace_reads(binary, vmcore, out_dir, timeout, level):
    """Runs one capture under strace; returns (blocks read in the first
    phase, exit status, stderr text, seconds)."""
    trace = os.path.join(out_dir, "strace.txt")
    output = os.path.join(out_dir, "out.img")
    for p in (trace, output):
        if os.path.exists(p):
            os.unlink(p)
    # timeout under strace: it ends the capture, and strace with it.
    cmd = ["strace", "-f", "-qq", "-s", "40", "-e", "trace=open,openat,pread64,write",
           "-o", trace, "timeout", str(timeout), binary, "capture", "--vmcore", vmcore, "--output", output, "--level", str(level),
           "--threads", "1", "--no-mmap"]
    t = time.time()
    r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    secs = time.time() - t
    blocks = set()
    fds = set()
    vreal = os.path.realpath(vmcore)
    popen = re.compile(r'open(?:at)?\((?:AT_FDCWD, )?"([^"]*)", .*\) += (-?\d+)')
    pread = re.compile(r'pread64\((\d+), .*, (\d+), (\d+)\) += (-?\d+)')
    # The console line that ends the first phase: the memory map's (from
    # before the finder's wrap was fixed, and after it), or the pages' progress.
    done = re.compile(r'write\(2, "kdumpinit: (memory map|capture):')
    with open(trace, errors="replace") as f:
        for line in f:
            m = pread.search(line)
            if m:
                fd, n, off, got = (int(x) for x in m.groups())
                if fd in fds and got > 0:
                    for b in range(off // BLOCK, (off + got - 1) // BLOCK + 1):
                        blocks.add(b)
                continue
            if done.search(line):
                break
            m = popen.search(line)
            if m:
                path, fd = m.group(1), int(m.group(2))
                if fd < 0:
                    continue
                # One process with threads: one fd table.
                if os.path.realpath(path) == vreal:
                    fds.add(fd)
                else:
                    fds.discard(fd)
    os.unlink(trace)
    if os.path.exists(output):
        os.unlink(output)
    return blocks, r.returncode, r.stderr.decode(errors="replace"), secs


def finder_line(text):
    m = re.search(r"debugger pages first: (\d+) pages", text)
    return m.group(1) if m else None


def outcome(rc, text):
    """hang, or the finder's page count (or 'none'), and the exit."""
    if rc == 124:
        return "hang"
    return "exit%d:finder=%s" % (rc, finder_line(text) or "none")


def write_repro(vmcore, blocks, out):
    size = os.path.getsize(vmcore)
    hend = headers_end(vmcore)
    for b in range(0, (hend + BLOCK - 1) // BLOCK):
        blocks.add(b)
    blocks = sorted(b for b in blocks if b * BLOCK < size)
    ext = []
    for b in blocks:
        if ext and ext[-1][0] + ext[-1][1] == b * BLOCK:
            ext[-1][1] += BLOCK
        else:
            ext.append([b * BLOCK, BLOCK])
    if ext and ext[-1][0] + ext[-1][1] > size:
        ext[-1][1] = size - ext[-1][0]
    body = [MAGIC, struct.pack("<IIQII", 1, BLOCK, size, len(ext), 0)]
    body += [struct.pack("<QQ", o, n) for o, n in ext]
    with open(vmcore, "rb") as f:
        for o, n in ext:
            f.seek(o)
            d = f.read(n)
            if len(d) != n:
                die("short read of %s at %d" % (vmcore, o))
            body.append(d)
    raw = b"".join(body)
    with open(out + ".tmp", "wb") as f:
        f.write(lzma.compress(raw, format=lzma.FORMAT_XZ, preset=9 | lzma.PRESET_EXTREME))
    os.rename(out + ".tmp", out)
    return size, len(ext), sum(n for _, n in ext)


def read_repro(path):
    with open(path, "rb") as f:
        raw = lzma.decompress(f.read())
    if raw[:8] != MAGIC:
        die("%s is not a reproducer" % path)
    ver, block, size, n, _ = struct.unpack_from("<IIQII", raw, 8)
    if ver != 1:
        die("%s: version %d" % (path, ver))
    at = 8 + 24
    ext = [struct.unpack_from("<QQ", raw, at + 16 * i) for i in range(n)]
    at += 16 * n
    return size, ext, raw, at


def rebuild(path, out):
    size, ext, raw, at = read_repro(path)
    with open(out, "wb") as f:
        f.truncate(size)
        for o, n in ext:
            if o + n > size:
                die("%s: an extent past the end" % path)
            f.seek(o)
            f.write(raw[at:at + n])
            at += n
    return size, ext


def cmd_record(args):
    bins, timeout, level = [], 30, 31
    pos = []
    i = 0
    while i < len(args):
        a = args[i]
        if a in ("--bin", "--timeout", "--level") and i + 1 < len(args):
            if a == "--bin":
                bins.append(os.path.abspath(args[i + 1]))
            elif a == "--timeout":
                timeout = int(args[i + 1])
            else:
                level = int(args[i + 1])
            i += 2
            continue
        pos.append(a)
        i += 1
    if len(pos) != 2:
        die("usage: mkrepro.py record VMCORE OUT [--bin KDUMPINIT]... [--timeout S] [--level N]")
    vmcore, out = pos
    if not bins:
        bins = [os.path.join(TOP, "build", "kdumpinit")]
    if not shutil.which("strace"):
        die("strace is not installed")
    work = tempfile.mkdtemp(prefix="mkrepro.")
    try:
        blocks = set()
        full = {}
        for b in bins:
            got, rc, err, secs = trace_reads(b, vmcore, work, timeout, level)
            full[b] = outcome(rc, err)
            blocks |= got
            sys.stderr.write("mkrepro: %s on the whole vmcore: %s, %d blocks read in the first phase (%.1f s)\n"
                             % (b, full[b], len(got), secs))
        size, n, held = write_repro(vmcore, blocks, out)
        sys.stderr.write("mkrepro: %s: %d extents, %d bytes of %d, %d bytes compressed\n"
                         % (out, n, held, size, os.path.getsize(out)))
        # The reproducer must make each binary do what the vmcore did.
        sparse = os.path.join(work, "replay.vmcore")
        rebuild(out, sparse)
        bad = 0
        for b in bins:
            _, rc, err, secs = trace_reads(b, sparse, work, timeout, level)
            rep = outcome(rc, err)
            print("%s full=%s replay=%s" % (b, full[b], rep))
            if rep != full[b]:
                bad += 1
        if bad:
            die("the reproducer does not behave as the whole vmcore for %d binaries" % bad)
    finally:
        shutil.rmtree(work, ignore_errors=True)


def main():
    if len(sys.argv) < 2 or sys.argv[1] in ("-h", "--help"):
        sys.stdout.write(__doc__)
        return
    cmd, args = sys.argv[1], sys.argv[2:]
    if cmd == "record":
        cmd_record(args)
    elif cmd == "rebuild" and len(args) == 2:
        rebuild(args[0], args[1])
    elif cmd == "info" and len(args) == 1:
        size, ext, _, _ = read_repro(args[0])
        print("file size %d, %d extents, %d bytes held, %d compressed"
              % (size, len(ext), sum(n for _, n in ext), os.path.getsize(args[0])))
    else:
        die("unknown command (record, rebuild, info)")


if __name__ == "__main__":
    main()
