#!/usr/bin/python3
"""tamper: what a forger with write access to the dump device, and
without the secret key, can do to the chunk stream of a real sealed
dump, and what `info --key` must make of it (tests/damage/run.sh;
docs/FORMAT.md, "Sealed dumps": the whole stream authenticated).

usage: tamper.py judge [--label L] KDUMPINIT IMAGE SECKEY
       tamper.py selftest KDUMPINIT IMAGE SECKEY

judge: IMAGE holds one sealed dump, complete, and SECKEY opens it. For
  the first chunk of each type in the stream (and for PAGES, also the
  smallest one and an empty one, where a block kept nothing), each of:
    pad-clear  the chunk rewritten as a clear PAD of the same length and
               seq (zeros; flags 0): what a reader skips in a clear dump
    pad-auth   its type set to PAD, flags and payload kept
    retype     its type set to another type of the same mode (a sealed
               type for a sealed chunk, END for a tagged one)
    drop       the chunk taken out, the stream after it moved up
    dup        the chunk repeated right after itself
    swap       the chunk and the one after it exchanged
    cut        the stream cut right before the chunk (the rest zeroed)
  with every XXH64 forged again, so that only the tags can tell. Each
  copy must make `info --key SECKEY` exit non-zero, never say "complete,
  authenticated", and name a chunk (or say the dump cannot be opened).
  Not cases, as they change nothing a reader could see or leave no dump
  to speak of: END repeated after itself (a reader stops at the first
  END), a PAD retyped as PAD, and a cut before START (the device then
  holds no dump: sealing keeps a dump secret and intact, it cannot keep
  it from being destroyed). Prints one ok/FAIL line per case and
  exits 1 when one failed.
selftest: the judge must be able to fail: the untouched IMAGE, judged
  as if tampered, must be refused.
"""
import concurrent.futures
import os
import struct
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tools"))
import sealtool  # noqa: E402
from sealtool import (AUTH, END, MODE, PAD, PAGES, SEALED, TNAME, chunks, reforge,  # noqa: E402
                      span)

KINDS = ["pad-clear", "pad-auth", "retype", "drop", "dup", "swap", "cut"]
DMESG, NOTES = 6, 2


def stream_end(cs):
    return cs[-1].off + span(cs[-1].len)


def tampered(img, cs, k, kind):
    """A copy of IMAGE's bytes with chunk k tampered as KIND, or None when
    KIND changes nothing there."""
    b = bytearray(img)
    c = cs[k]
    whole = bytes(img[c.off:c.off + span(c.len)])
    end = stream_end(cs)
    if kind == "pad-clear":
        b[c.off + 48:c.off + span(c.len)] = bytes(span(c.len) - 48)
        struct.pack_into("<HHI", b, c.off + 4, PAD, 48, c.len)
        struct.pack_into("<I", b, c.off + 12, 0)
        reforge(b, c.off)
    elif kind == "pad-auth":
        if c.type == PAD:
            return None
        struct.pack_into("<H", b, c.off + 4, PAD)
        reforge(b, c.off, payload=False)
    elif kind == "retype":
        mode = MODE.get(c.type, 0)
        if mode == SEALED:
            other = DMESG if c.type != DMESG else NOTES
        elif c.type != END:
            other = END
        else:
            other = PAD
        struct.pack_into("<H", b, c.off + 4, other)
        reforge(b, c.off, payload=False)
    elif kind == "drop":
        rest = bytes(img[c.off + len(whole):end])
        b[c.off:end] = rest + bytes(len(whole))
    elif kind == "dup":
        if c.type == END:
            return None
        rest = bytes(img[c.off:end])
        tail = end + len(whole)
        if tail > len(b):
            b.extend(bytes(tail - len(b)))
        b[c.off:tail] = whole + rest
    elif kind == "swap":
        if k + 1 >= len(cs):
            return None
        d = cs[k + 1]
        nxt = bytes(img[d.off:d.off + span(d.len)])
        b[c.off:c.off + len(whole) + len(nxt)] = nxt + whole
    elif kind == "cut":
        if k == 0:
            return None
        b[c.off:end] = bytes(end - c.off)
    return b


def info(kdi, path, sec):
    p = subprocess.run([kdi, "info", "--key", sec, path], stdout=subprocess.PIPE,
                       stderr=subprocess.STDOUT, timeout=300)
    return p.returncode, p.stdout.decode(errors="replace")


def verdict(rc, out):
    """None when the damage is said, else why not."""
    if rc == 0:
        return "info --key exits 0"
    if "complete, authenticated" in out:
        return "info --key says 'complete, authenticated'"
    if "chunk" not in out and "cannot be opened" not in out:
        return "info --key names no chunk: " + out.replace("\n", "|")[:300]
    return None


def targets(cs, img):
    """(label, index) of the chunks to tamper with: the first of each type,
    the smallest PAGES chunk, an empty PAD of a block that kept nothing."""
    out, seen = [], set()
    for i, c in enumerate(cs):
        if c.type not in seen:
            seen.add(c.type)
            out.append((TNAME.get(c.type, str(c.type)), i))
    pages = [i for i, c in enumerate(cs) if c.type == PAGES]
    if pages:
        out.append(("PAGES-smallest", min(pages, key=lambda i: cs[i].len)))
    empty = [i for i, c in enumerate(cs) if c.type == PAD and c.len == sealtool.TAG and i > 0 and
             cs[i - 1].type == PAGES]
    if empty:
        out.append(("PAD-empty-block", empty[len(empty) // 2]))
    return out


def judge(kdi, image, sec, label, selftest=False):
    with open(image, "rb") as f:
        img = f.read()
    cs = chunks(img)
    if not cs or cs[-1].type != END:
        print("FAIL %s/setup: no END in %s" % (label, image))
        return 1
    rc, out = info(kdi, image, sec)
    if rc != 0 or "complete, authenticated" not in out:
        print("FAIL %s/setup: the untouched dump is not 'complete, authenticated' (exit %d): %s" %
              (label, rc, out.replace("\n", "|")[:300]))
        return 1
    if selftest:
        why = verdict(rc, out)
        print(("ok %s/selftest: the untouched dump is refused as tampered (%s)" % (label, why))
              if why else "FAIL %s/selftest: the judge takes an untouched dump for tampered" % label)
        return 0 if why else 1
    # Two at a time: each trial is one `info --key` reading the whole dump.
    trials = [(name, k, kind) for name, k in targets(cs, img) for kind in KINDS]
    tmpdir = tempfile.mkdtemp(prefix="tamper.", dir=os.environ.get("STREAMDAMAGE_TMP"))

    def run(i):
        name, k, kind = trials[i]
        b = tampered(img, cs, k, kind)
        if b is None:
            return None
        path = os.path.join(tmpdir, "t%d" % i)
        with open(path, "wb") as f:
            f.write(b)
        del b
        try:
            return info(kdi, path, sec)
        finally:
            os.unlink(path)

    fails = 0
    try:
        with concurrent.futures.ThreadPoolExecutor(2) as ex:
            for i, res in enumerate(ex.map(run, range(len(trials)))):
                if res is None:
                    continue
                rc, out = res
                name, k, kind = trials[i]
                why = verdict(rc, out)
                case = "%s/tamper-%s-%s" % (label, name, kind)
                if why:
                    fails += 1
                    print("FAIL %s: chunk %d: %s" % (case, cs[k].seq, why))
                else:
                    said = [l for l in out.splitlines() if "chunk" in l or "opened" in l]
                    print("ok %s: exit %d, %s" % (case, rc, (said[0] if said else "").strip()[:160]))
    finally:
        os.rmdir(tmpdir)
    return 1 if fails else 0


def main():
    a = sys.argv[1:]
    label = "sealed"
    if len(a) >= 2 and a[1] == "--label":
        label = a[2]
        del a[1:3]
    if len(a) != 4 or a[0] not in ("judge", "selftest"):
        print(__doc__.strip().split("\n\n")[1], file=sys.stderr)
        return 2
    return judge(a[1], a[2], a[3], label, selftest=a[0] == "selftest")


if __name__ == "__main__":
    sys.exit(main())
