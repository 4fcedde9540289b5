#!/usr/bin/python3
"""streamdamage: damage to the chunk stream of a real dump, and what the
reader must make of it (tests/damage/run.sh; docs/FORMAT.md, "Reading
past damage").

usage: streamdamage.py judge [--full] [--kinds K,...] [--key SEC --plain PLAIN]
                             [--label L] [--record FILE] [--workers N]
                             KDUMPINIT IMAGE REF_ELF
       streamdamage.py selftest [--key SEC --plain PLAIN] KDUMPINIT IMAGE REF_ELF
       streamdamage.py table FILE [FILE]
       streamdamage.py seeds IMAGE OUTDIR PREFIX [SEALED_OUTDIR]

judge: runs KDUMPINIT on damaged copies of IMAGE (a capture, with no other
  dump on it) and prints one ok/FAIL line per kind of damage, named
  LABEL/KIND, and one "pages LABEL/KIND: ..." line with the pages each
  trial's save holds. REF_ELF is the undamaged dump's `save --format
  elf` (with --key for a sealed one). A sealed IMAGE needs --key (its
  secret key) and --plain: a capture of the same vmcore at the same level
  without the key, whose PAGES chunks say which pfns each sealed one
  holds (the same blocks in the same order; sealtool.py's rule).
  After each damage:
    - `info` exits 5 (incomplete: never 4, empty, nor 0) and names a chunk
      the damage touched, on its state line or its "lost" lines;
    - `save --check` exits 0 (a dump to save);
    - `save --format elf` exits 5 and holds every page of every chunk the
      damage did not touch, byte for byte the undamaged save's page, and
      no page with other bytes (nor one the undamaged save lacks). Pages
      of touched chunks may be missing.
  A chunk is touched when a damaged byte lies in its span (header,
  payload, padding). Without VMCOREINFO and SEGMENTS (and in a sealed dump
  SEAL, which holds the key) no page can be placed: damage to one of them
  is still said (info 5, the chunk named, save --check 0), and whatever a
  save writes must be right, but no page is required.
  KIND (all of it with --full; without, a share: two chunk types per
  header field, 3 blocks of each size, START's and END's first two):
    header-FIELD  one byte of FIELD (magic type hdr_size len flags dump_id
                  seq payload_hash hdr_hash) changed in one chunk of each
                  type present (PAGES: one of the EARLY pass and one of the
                  first), the hashes left as they were
    block-512     512 random bytes at 20 offsets across the stream
    block-4k      4 KiB of random bytes at 20 offsets
    zero-1m       the MiB in the middle of the stream zeroed
    start         START: a header byte, a payload byte, its first sector
                  zeroed
    end           END: a header byte, a payload byte, all of it zeroed
  --record FILE appends one line per trial: LABEL KIND GROUP SAVED WANT N
  ok|FAIL (GROUP: the chunk type of a header kind, else -; SAVED: the
  pages of the undamaged save its save holds, byte for byte; WANT: those
  the untouched chunks hold; N: the undamaged save's pages). Exits 1
  when a kind fails.
selftest: the judge must be able to fail: an intact copy judged as
  damaged, and a page changed in a clear dump with its hashes forged
  again (the save then holds other bytes), must each be refused.
table: the records of FILE (and of a second FILE, an older reader's, side
  by side): per label and kind (the header kinds per chunk type), the
  mean pages saved of N, the fewest, the fewest the untouched chunks
  hold, and the trials that failed.
seeds: fuzz_dumpfile seeds (compact layout, control byte 0) from a clear
  capture IMAGE: the dump cut down to a handful of chunks (its metadata,
  the kernel log cut to 1 KiB, the shortest PAGES chunks that store pages,
  two of the EARLY pass and four of the first, and an END whose counts
  are those of what is kept), each under 64 KiB, then
  damaged: a PAGES byte, START's header, 512 random bytes over two
  chunks, END; and two that have the harness damage a PAGES chunk
  (control bit 6) and forge its hashes again (bits 6 and 7); written as
  OUTDIR/PREFIX-*. With SEALED_OUTDIR, fuzz_sealed seeds of the intact
  stream too, as is and with a PAGES chunk tampered (SEALED_OUTDIR/PREFIX,
  PREFIX-tamper).
"""
import concurrent.futures
import mmap
import os
import random
import re
import struct
import subprocess
import sys
import tempfile
import threading

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tools"))
from sealtool import (CHAIN, END, PAD, PAGES, SEAL, SEGS, START, TNAME, VMCI, Chunk, chunks,  # noqa: E402
                      span, stored_pfns, xxh64)

PAGE = 4096
FIELDS = [("magic", 0, 4), ("type", 4, 2), ("hdr_size", 6, 2), ("len", 8, 4), ("flags", 12, 4),
          ("dump_id", 16, 8), ("seq", 24, 8), ("payload_hash", 32, 8), ("hdr_hash", 40, 8)]
KINDS = ["header-" + f[0] for f in FIELDS] + ["block-512", "block-4k", "zero-1m", "start", "end"]
EARLY_FLAG = 4


def elf_loads(m):
    """[(pfn, file offset, pages)]: the page-aligned file parts of an ELF
    core's PT_LOADs."""
    if m[:4] != b"\x7fELF" or m[4] != 2:
        raise ValueError("not a 64-bit ELF")
    phoff, = struct.unpack_from("<Q", m, 32)
    phentsize, phnum = struct.unpack_from("<HH", m, 54)
    if phnum == 0xFFFF:
        shoff, = struct.unpack_from("<Q", m, 40)
        phnum, = struct.unpack_from("<I", m, shoff + 44)
    out = []
    for i in range(phnum):
        typ, _fl, off, _va, pa, filesz, _msz, _al = struct.unpack_from("<IIQQQQQQ", m, phoff + i * phentsize)
        if typ != 1 or not filesz:
            continue
        if pa % PAGE or off % PAGE or filesz % PAGE:
            raise ValueError("PT_LOAD %d is not page-aligned" % i)
        out.append((pa // PAGE, off, filesz // PAGE))
    return out


def elf_pages(path):
    """{pfn: bytes}: every page an ELF core's PT_LOADs hold in the file
    (zero pages too; a pfn two PT_LOADs alias is one page)."""
    pages = {}
    with open(path, "rb") as f:
        m = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)
        try:
            for pfn, off, n in elf_loads(m):
                for k in range(n):
                    o = off + k * PAGE
                    if o + PAGE > len(m):
                        raise ValueError("%s: a PT_LOAD runs past the file's end" % path)
                    pg = m[o:o + PAGE]
                    if pages.setdefault(pfn + k, pg) != pg:
                        raise ValueError("%s: pfn %#x twice, with other bytes" % (path, pfn + k))
        finally:
            m.close()
    return pages


def compare(path, ref):
    """The save at PATH against the undamaged one's pages REF: (pfns it
    holds with REF's bytes, [pfns with other bytes or not in REF])."""
    same, bad = set(), []
    with open(path, "rb") as f:
        if os.fstat(f.fileno()).st_size == 0:
            return same, bad
        m = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)
        try:
            for pfn, off, n in elf_loads(m):
                for k in range(n):
                    o = off + k * PAGE
                    if o + PAGE > len(m) or m[o:o + PAGE] != ref.get(pfn + k):
                        bad.append(pfn + k)
                    else:
                        same.add(pfn + k)
        finally:
            m.close()
    return same, bad


class Trial:
    __slots__ = ("what", "patches", "touched", "group")

    def __init__(self, what, patches, touched, group="-"):
        self.what, self.patches, self.touched, self.group = what, patches, touched, group


class Judge:
    def __init__(self, k, image, ref_elf, key=None, plain=None, workers=2, label="dump"):
        self.k, self.key, self.label, self.workers = k, key, label, workers
        with open(image, "rb") as f:
            self.img = f.read()
        self.cs = chunks(self.img)
        if not self.cs or self.cs[0].type != START or self.cs[-1].type != END:
            raise SystemExit("streamdamage: %s: not one whole dump (START ... END)" % image)
        self.base, self.end = self.cs[0].off, self.cs[-1].off + span(self.cs[-1].len)
        self.sealed = self.cs[0].flags == 0 and any(c.type == SEAL for c in self.cs)
        if self.sealed != bool(key):
            raise SystemExit("streamdamage: %s is %ssealed: --key and --plain go with a sealed dump"
                             % (image, "" if self.sealed else "not "))
        self.pfns, self.passflags = self.map_pfns(plain)
        self.ref = elf_pages(ref_elf)
        allp = frozenset().union(*self.pfns.values())
        if set(self.ref) != allp:
            raise SystemExit("streamdamage: %s holds %d pages, the PAGES chunks store %d (%d differ)"
                             % (ref_elf, len(self.ref), len(allp), len(set(self.ref) ^ allp)))
        self.n = len(self.ref)
        # Nothing can be placed without these: damage to them costs every
        # page (still said, and what is saved must be right).
        # In a sealed dump SEAL's tag covers START and CHAIN too: with one
        # of them lost nothing is opened (closed on doubt), and it is said.
        need = {VMCI, SEGS} | ({SEAL, START, CHAIN} if self.sealed else set())
        self.needed = frozenset(c.seq for c in self.cs if c.type in need)
        self.dir = tempfile.mkdtemp(prefix="streamdamage.", dir=os.environ.get("STREAMDAMAGE_TMP"))
        self.lock = threading.Lock()
        self.devs = []
        for i in range(workers):
            dev = os.path.join(self.dir, "dev%d" % i)
            with open(dev, "wb") as f:
                f.write(self.img)
            self.devs.append((dev, os.path.join(self.dir, "save%d.elf" % i)))

    def cleanup(self):
        for f in os.listdir(self.dir):
            os.unlink(os.path.join(self.dir, f))
        os.rmdir(self.dir)

    def map_pfns(self, plain):
        """{seq: pfns its PAGES chunk stores}, {seq: its pass flags}."""
        pfns = {c.seq: frozenset() for c in self.cs}
        flags = {}
        if not self.sealed:
            for c in self.cs:
                if c.type == PAGES:
                    p = c.payload(self.img)
                    pfns[c.seq] = frozenset(stored_pfns(p))
                    flags[c.seq] = struct.unpack_from("<I", p, 20)[0]
            return pfns, flags
        with open(plain, "rb") as f:
            pimg = f.read()
        cp = [c for c in chunks(pimg) if c.type != PAD]
        rest = [c for c in self.cs if c.type not in (SEAL, PAD)]
        if [c.type for c in rest] != [c.type for c in cp]:
            raise SystemExit("streamdamage: the plain capture's chunks are not the sealed one's")
        for c, q in zip(rest, cp):
            if c.type == PAGES:
                p = q.payload(pimg)
                pfns[c.seq] = frozenset(stored_pfns(p))
                flags[c.seq] = struct.unpack_from("<I", p, 20)[0]
        return pfns, flags

    # ------------------------------------------------------------ trials

    def touched(self, patches):
        t = set()
        for off, b in patches:
            for c in self.cs:
                if c.off < off + len(b) and off < c.off + span(c.len):
                    t.add(c.seq)
        return frozenset(t)

    def trial(self, what, patches, group="-"):
        return Trial(what, patches, self.touched(patches), group)

    def name(self, c):
        n = TNAME.get(c.type, str(c.type))
        if c.type == PAGES:
            n += " (EARLY)" if self.passflags.get(c.seq, 0) & EARLY_FLAG else ""
        return "%s seq %d" % (n, c.seq)

    def group(self, c):
        """The chunk's type, for the table (PAGES: its pass)."""
        if c.type == PAGES:
            return "PAGES-early" if self.passflags.get(c.seq, 0) & EARLY_FLAG else "PAGES-first"
        return TNAME.get(c.type, str(c.type))

    def one_of_each(self):
        """One chunk of each type present; PAGES: one of the EARLY pass and
        one of the first (the middle one of each), PAD the middle one."""
        picks, seen = [], set()
        for c in self.cs:
            if c.type in (PAGES, PAD) or c.type in seen:
                continue
            seen.add(c.type)
            picks.append(c)
        for sel in (lambda c: c.type == PAGES and self.passflags.get(c.seq, 0) & EARLY_FLAG,
                    lambda c: c.type == PAGES and not self.passflags.get(c.seq, 0) & EARLY_FLAG,
                    lambda c: c.type == PAD):
            xs = [c for c in self.cs if sel(c)]
            if xs:
                picks.append(xs[len(xs) // 2])
        return sorted(picks, key=lambda c: c.seq)

    def flip(self, at, rnd):
        return [(at, bytes([self.img[at] ^ rnd.randrange(1, 256)]))]

    def trials(self, kind, full, rnd):
        if kind.startswith("header-"):
            field = kind[7:]
            fi = [f[0] for f in FIELDS].index(field)
            _f, fo, fs = FIELDS[fi]
            picks = self.one_of_each()
            if not full:	# a share: two types per field, turning with it (all types once)
                picks = sorted({picks[fi % len(picks)].seq: picks[fi % len(picks)],
                                picks[(fi + len(FIELDS)) % len(picks)].seq:
                                picks[(fi + len(FIELDS)) % len(picks)]}.values(), key=lambda c: c.seq)
            return [self.trial("%s: byte %d of %s" % (self.name(c), b, field), self.flip(c.off + fo + b, rnd),
                               self.group(c))
                    for c in picks for b in [rnd.randrange(fs)]]
        length = self.end - self.base
        if kind in ("block-512", "block-4k"):
            bs = 512 if kind == "block-512" else 4096
            n = 20 if full else 3
            out = []
            for i in range(n):
                at = self.base + int((i + rnd.random()) * length / n)
                at -= at % bs
                at = max(at, self.base)
                out.append(self.trial("%d random bytes at stream offset %d" % (bs, at - self.base),
                                      [(at, rnd.randbytes(bs))]))
            return out
        if kind == "zero-1m":
            at = self.base + (length // 2) // (1 << 20) * (1 << 20)
            return [self.trial("the MiB at stream offset %d zeroed" % (at - self.base), [(at, bytes(1 << 20))])]
        if kind in ("start", "end"):
            c = self.cs[0] if kind == "start" else self.cs[-1]
            t = [self.trial("%s: header byte 40 (hdr_hash)" % self.name(c), self.flip(c.off + 40, rnd)),
                 self.trial("%s: payload byte 4" % self.name(c), self.flip(c.off + 52, rnd))]
            if kind == "start":
                t.append(self.trial("its first 512-byte sector zeroed", [(c.off, bytes(512))]))
            else:
                t.append(self.trial("%s zeroed" % self.name(c), [(c.off, bytes(span(c.len)))]))
            return t if full else t[:2]
        raise SystemExit("streamdamage: unknown kind %s" % kind)

    # ------------------------------------------------------------ judging

    def run(self, *args):
        r = subprocess.run([self.k] + list(args), stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        return r.returncode, r.stdout.decode(errors="replace"), r.stderr.decode(errors="replace")

    def keyargs(self):
        return ["--key", self.key] if self.key else []

    def named(self, out):
        """The chunk numbers info names on its state line and its "lost"
        lines (and the lines that go on from them)."""
        seqs, block = set(), False
        for ln in out.splitlines():
            head = ln[:12].strip()
            if head:
                block = head in ("state", "lost", "gaps")
            if not block:
                continue
            for a, b in re.findall(r"chunks? (\d+)(?:-(\d+))?", ln):
                seqs.update(range(int(a), int(b or a) + 1))
        return seqs

    def check(self, dev, out_path, t):
        """(why or None, pages of the undamaged save it holds)."""
        whys = []
        rc, out, err = self.run("info", dev, *self.keyargs())
        st = next((ln for ln in out.splitlines() if ln.startswith("state")), "")
        if rc != 5 or not re.match(r"state +incomplete", st):
            whys.append("info exit %d, %r (want 5, incomplete)%s" % (rc, st[13:90], (" " + err.strip()[:100]) if err else ""))
        elif not self.named(out) & t.touched:
            whys.append("info names no chunk it touched (%s): %r" % (
                ",".join(map(str, sorted(t.touched))), " | ".join(
                    ln for ln in out.splitlines() if ln.startswith(("state", "lost", "gaps")))[:200]))
        rc, _out, err = self.run("save", dev, "--check")
        if rc != 0:
            whys.append("save --check exit %d, want 0 %s" % (rc, err.strip()[:100]))
        if os.path.exists(out_path):
            os.unlink(out_path)
        rc, _out, err = self.run("save", dev, *self.keyargs(), "--output", out_path, "--format", "elf")
        needed = bool(t.touched & self.needed)
        same, bad = set(), []
        if os.path.exists(out_path):
            try:
                same, bad = compare(out_path, self.ref)
            except ValueError as e:
                whys.append("the save does not parse: %s" % e)
        if not needed and rc != 5:
            whys.append("save exit %d, want 5: %s" % (rc, err.strip()[:120]))
        if bad:
            whys.append("the save holds %d pages with other bytes than the undamaged save's (pfn %#x...)"
                        % (len(bad), bad[0]))
        if not needed:
            want = frozenset().union(*(v for s, v in self.pfns.items() if s not in t.touched))
            miss = want - same
            if miss:
                whys.append("%d pages of untouched chunks missing (pfn %#x...; saved %d of %d)"
                            % (len(miss), min(miss), len(same), self.n))
        return ("; ".join(whys) or None), len(same)

    def judge_one(self, t):
        with self.lock:
            dev, out_path = self.devs.pop()
        fd = os.open(dev, os.O_RDWR)
        try:
            for off, b in t.patches:
                os.pwrite(fd, b, off)
            return self.check(dev, out_path, t)
        finally:
            for off, b in t.patches:
                os.pwrite(fd, self.img[off:off + len(b)], off)
            os.close(fd)
            if os.path.exists(out_path):
                os.unlink(out_path)
            with self.lock:
                self.devs.append((dev, out_path))

    def judge(self, trials):
        with concurrent.futures.ThreadPoolExecutor(self.workers) as ex:
            return list(ex.map(self.judge_one, trials))

    def want_of(self, t):
        if t.touched & self.needed:
            return 0
        return len(frozenset().union(*(v for s, v in self.pfns.items() if s not in t.touched)))


def judge_main(a):
    opts = {"--kinds": None, "--key": None, "--plain": None, "--label": "dump", "--record": None,
            "--workers": "2"}
    full = False
    pos = []
    while a:
        x = a.pop(0)
        if x == "--full":
            full = True
        elif x in opts and a:
            opts[x] = a.pop(0)
        else:
            pos.append(x)
    if len(pos) != 3 or bool(opts["--key"]) != bool(opts["--plain"]):
        print(__doc__.strip().split("\n\n")[0], file=sys.stderr)
        return 2
    kinds = opts["--kinds"].split(",") if opts["--kinds"] else KINDS
    j = Judge(pos[0], pos[1], pos[2], opts["--key"], opts["--plain"], int(opts["--workers"]),
              opts["--label"])
    failed = 0
    try:
        for kind in kinds:
            # Each kind its own seed: a kind's trials do not change when
            # another is added or left out.
            rnd = random.Random("%s/%d" % (kind, j.end - j.base))
            ts = j.trials(kind, full, rnd)
            res = j.judge(ts)
            bad = [(t, w) for t, (w, _n) in zip(ts, res) if w]
            name = "%s/%s" % (j.label, kind)
            saved = [n for _w, n in res]
            wants = [j.want_of(t) for t in ts]
            if bad:
                failed += 1
                print("FAIL %s: %d of %d trials: %s" % (name, len(bad), len(ts), "; ".join(
                    "[%s: %s]" % (t.what, w) for t, w in bad[:3])))
                for t, w in bad[3:]:
                    print("info %s: also [%s: %s]" % (name, t.what, w))
            else:
                print("ok %s (%d trials)" % (name, len(ts)))
            print("pages %s: %d trials, saved %d..%d (mean %.0f) of %d; the untouched chunks hold >= %d"
                  % (name, len(ts), min(saved), max(saved), sum(saved) / len(saved), j.n, min(wants)))
            sys.stdout.flush()
            if opts["--record"]:
                with open(opts["--record"], "a") as f:
                    for t, (w, n), want in zip(ts, res, wants):
                        f.write("%s %s %s %d %d %d %s\n" % (j.label, kind, t.group, n, want, j.n,
                                                            "FAIL" if w else "ok"))
    finally:
        j.cleanup()
    return 1 if failed else 0


def selftest_main(a):
    key = plain = None
    pos = []
    while a:
        x = a.pop(0)
        if x == "--key" and a:
            key = a.pop(0)
        elif x == "--plain" and a:
            plain = a.pop(0)
        else:
            pos.append(x)
    if len(pos) != 3:
        print(__doc__.strip().split("\n\n")[0], file=sys.stderr)
        return 2
    j = Judge(pos[0], pos[1], pos[2], key, plain, 1, "selftest")
    failed = 0
    try:
        # An intact copy, judged as if its middle PAGES chunk were damaged.
        pages = [c for c in j.cs if c.type == PAGES]
        c = pages[len(pages) // 2]
        why, _n = j.judge([Trial("intact", [], frozenset([c.seq]))])[0]
        ok = why and "info exit 0" in why
        print("%s selftest/intact_copy_is_not_taken_for_damaged%s" % (
            "ok" if ok else "FAIL", "" if ok else ": the judge passed it (%s)" % why))
        failed += not ok
        if not j.sealed:
            # A raw page of a PAGES chunk changed, both hashes forged: the
            # reader cannot tell, the save holds other bytes.
            at = None
            for q in pages:
                p = q.payload(j.img)
                _pfn, count, nstored, nzero, _fl = struct.unpack_from("<QIIII", p, 0)
                bm = (count + 31) // 32 * 4
                o = 24 + bm * (2 if nzero else 1)
                data = o + 4 * nstored
                for k in range(nstored):
                    w, = struct.unpack_from("<I", p, o + 4 * k)
                    if not w & 0x80000000 and w & 0xFFFFFF == PAGE:
                        at = (q, data + 2048)
                        break
                    data += w & 0xFFFFFF
                if at:
                    break
            if not at:
                print("FAIL selftest/changed_page_is_seen: no raw page in the dump")
                failed += 1
            else:
                q, rel = at
                chunk = bytearray(j.img[q.off:q.off + 48 + q.len])
                chunk[48 + rel] ^= 0x10
                struct.pack_into("<Q", chunk, 32, xxh64(bytes(chunk[48:])))
                struct.pack_into("<Q", chunk, 40, 0)
                struct.pack_into("<Q", chunk, 40, xxh64(bytes(chunk[:48])))
                # and a byte of another chunk's header, so that the dump is
                # incomplete and only the page is the judge's to find
                other = pages[0] if pages[0] is not q else pages[1]
                patches = [(q.off, bytes(chunk)), (other.off + 40, bytes([j.img[other.off + 40] ^ 1]))]
                why, _n = j.judge([Trial("changed page", patches, frozenset([other.seq]))])[0]
                ok = why and "other bytes" in why
                print("%s selftest/changed_page_is_seen%s" % (
                    "ok" if ok else "FAIL", "" if ok else ": not seen (%s)" % why))
                failed += not ok
    finally:
        j.cleanup()
    return 1 if failed else 0


def table_main(a):
    """The records of each FILE side by side, one row per label and kind
    (the header kinds one row per chunk type, all fields together)."""
    recs = []
    for path in a:
        r = {}
        with open(path) as f:
            for ln in f:
                x = ln.split()
                if len(x) != 7:
                    continue
                label, kind, group, n, want, total, st = x
                row = "header @ " + group if kind.startswith("header-") else kind
                r.setdefault((label, row), []).append((int(n), int(want), int(total), st == "ok"))
        recs.append(r)
    order = ["header @ " + g for g in ("START", "CHAIN", "SEAL", "NOTES", "VMCOREINFO", "SEGMENTS",
                                       "SETTINGS", "DMESG", "STEPS", "DEBUGGER", "PAGES-early",
                                       "PAGES-first", "PAD", "GAP", "END")] + KINDS
    labels = []
    for r in recs:
        for k in r:
            if k[0] not in labels:
                labels.append(k[0])
    keys = sorted({k for r in recs for k in r}, key=lambda k: (
        labels.index(k[0]), order.index(k[1]) if k[1] in order else len(order), k[1]))
    for k in keys:
        cols = []
        for r in recs:
            x = r.get(k)
            if not x:
                cols.append("-")
                continue
            saved = [t[0] for t in x]
            cols.append("%6.0f of %d (min %d; untouched %d), %d/%d fail" % (
                sum(saved) / len(saved), x[0][2], min(saved), min(t[1] for t in x),
                sum(1 for t in x if not t[3]), len(x)))
        print("%-12s %-22s %s" % (k[0], k[1], "  |  ".join(cols)))
    return 0


# ---------------------------------------------------------------- seeds

SB_AREA = 4096
DATA_MIN = 128 << 10


def build_stream(parts, dump_id):
    """The chunks PARTS ([(type, flags, payload)]) as a stream: seq from
    0, hashes right."""
    out = bytearray()
    offs = []
    for seq, (typ, fl, p) in enumerate(parts):
        h = bytearray(struct.pack("<4sHHIIQQQQ", b"KDCK", typ, 48, len(p), fl, dump_id, seq, xxh64(p), 0))
        struct.pack_into("<Q", h, 40, xxh64(bytes(h)))
        offs.append(len(out))
        out += h + p + bytes(span(len(p)) - 48 - len(p))
    return out, offs


def seeds_main(a):
    if len(a) not in (3, 4):
        print(__doc__.strip().split("\n\n")[0], file=sys.stderr)
        return 2
    image, outdir, prefix = a[:3]
    sealed_dir = a[3] if len(a) == 4 else None
    with open(image, "rb") as f:
        img = f.read()
    cs = chunks(img)
    if cs[0].flags:
        raise SystemExit("streamdamage: seeds: %s is sealed" % image)
    meta = [c for c in cs if c.type not in (PAGES, END, PAD)]
    pages = [c for c in cs if c.type == PAGES]
    early = [c for c in pages if struct.unpack_from("<I", img, c.off + 48 + 20)[0] & EARLY_FLAG]
    first = [c for c in pages if c not in early]
    def small(cs, n, room):
        """The N shortest chunks that store pages, within ROOM bytes."""
        out = []
        for c in sorted(cs, key=lambda c: c.len):
            if len(out) < n and struct.unpack_from("<I", img, c.off + 48 + 12)[0] and c.len <= room:
                out.append(c)
                room -= c.len
        return out
    keep = sorted(small(early, 2, 8192) + small(first, 4, 16384), key=lambda c: c.seq)
    parts = []
    stored = 0
    for c in meta + keep:
        p = c.payload(img)
        if c.type == 6:	# DMESG: its last KiB (the panic)
            p = p[-1024:]
        if c.type == PAGES:
            stored += struct.unpack_from("<I", p, 12)[0]
        parts.append((c.type, c.flags, p))
    # END: the counts of what is kept (a dump cut down, marked incomplete)
    e = bytearray(cs[-1].payload(img))
    nchunks = len(parts) + 1
    body, _o = build_stream(parts, cs[0].dump_id)
    struct.pack_into("<I", e, 0, struct.unpack_from("<I", e, 0)[0] | 1)	# INCOMPLETE
    struct.pack_into("<QQQQQ", e, 16, stored, stored, stored * PAGE, len(body) + span(len(e)), nchunks)
    for i in range(9):
        struct.pack_into("<Q", e, 56 + 8 * i, 0)
    parts.append((END, 0, bytes(e)))
    stream, offs = build_stream(parts, cs[0].dump_id)
    sb = bytearray(img[:448])
    struct.pack_into("<Q", sb, 104, DATA_MIN)
    struct.pack_into("<Q", sb, 440, 0)
    struct.pack_into("<Q", sb, 440, xxh64(bytes(sb)))
    head = bytes([0]) + bytes(sb).ljust(SB_AREA, b"\0")	# control byte 0, the superblock area
    rnd = random.Random(prefix)
    pg = [i for i, p in enumerate(parts) if p[0] == PAGES]
    mid = pg[len(pg) // 2]

    def at(i, rel):
        return offs[i] + rel

    variants = {"intact": []}
    variants["flip-pages"] = [(at(mid, 48 + len(parts[mid][2]) // 2), None)]
    variants["start-header"] = [(at(0, 40), None)]
    b = at(pg[1], 0) + 48 + len(parts[pg[1]][2]) - 200	# over the end of one PAGES chunk into the next
    variants["block-512"] = [(b + i, rnd.randrange(256)) for i in range(512)]
    variants["end"] = [(at(len(parts) - 1, 60), None)]
    # the harness's own damage (fuzz_dumpfile.c, control bits 6 and 7):
    # chunk k, byte at, XOR x; with bit 7 its hashes forged again
    harness = {"harness-damage": (0x40, mid, 48 + len(parts[mid][2]) // 3),
               "harness-forge": (0xC0, mid, 48 + len(parts[mid][2]) - 1)}
    os.makedirs(outdir, exist_ok=True)
    for name, edits in list(variants.items()) + [(n, []) for n in harness]:
        s = bytearray(stream)
        for o, v in edits:
            s[o] = s[o] ^ 0x20 if v is None else v
        data = head + bytes(s)
        if name in harness:
            ctl, k, rel = harness[name]
            data = bytes([ctl]) + struct.pack("<HHB", k, rel, 0x10) + data[1:]
        if len(data) >= 65536:
            raise SystemExit("streamdamage: seed %s is %d bytes" % (name, len(data)))
        with open(os.path.join(outdir, "%s-%s" % (prefix, name)), "wb") as f:
            f.write(data)
        print("%s-%s: %d bytes, %d chunks (%d PAGES)" % (prefix, name, len(data), len(parts), len(pg)))
    if sealed_dir:
        # fuzz_sealed: control byte, the chunk to tamper (u16, counted in
        # the sealed stream: SEAL comes in after CHAIN) and the payload
        # byte (u16), then the superblock area and the stream
        os.makedirs(sealed_dir, exist_ok=True)
        for name, ctl in (("", 0), ("-tamper", 2)):
            data = struct.pack("<BHH", ctl, mid + 1, 100) + head[1:] + bytes(stream)
            with open(os.path.join(sealed_dir, prefix + name), "wb") as f:
                f.write(data)
            print("%s%s (fuzz_sealed): %d bytes" % (prefix, name, len(data)))
    return 0


def main():
    a = sys.argv[1:]
    cmd = a.pop(0) if a else ""
    if cmd == "judge":
        return judge_main(a)
    if cmd == "selftest":
        return selftest_main(a)
    if cmd == "table" and 1 <= len(a) <= 2:
        return table_main(a)
    if cmd == "seeds":
        return seeds_main(a)
    print(__doc__.strip().split("\n\n")[0], file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main())
