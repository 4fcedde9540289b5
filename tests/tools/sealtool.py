#!/usr/bin/python3
"""sealtool: the checks of tests/unit/sealed.sh on sealed dumps
(capture --pubkey: docs/CLI.md "Sealed dumps", dump/seal.h).

usage: sealtool.py scan VMCORE IMAGE
       sealtool.py strings IMAGE NEEDLE...
       sealtool.py samples PLAIN IMAGE
       sealtool.py layout SEALED PLAIN
       sealtool.py samestream A B
       sealtool.py attack WHAT K SECFILE VMCORE SEALED PLAIN [OTHER]

scan: how many distinct pages of VMCORE's PT_LOAD memory with 16 or more
  non-zero bytes appear in IMAGE at any byte offset, printed as "found N
  of M", then at how many of the 8 byte phases (offset mod 8) they were
  found. (A page of one byte and zeros is found wherever zeros come
  before such a byte, as before the first chunk's magic: left out.) Each
  page is indexed by one non-zero 8-byte word for each of the 8 phases a
  copy can have against IMAGE's 8-byte grid; IMAGE's aligned words are
  looked up in that index and each hit compared whole (of 16 non-zero
  bytes one at least lies on the grid, which misses at most 7 at each
  end).
strings: one "COUNT NEEDLE" line per needle (occurrences in IMAGE).
samples: 32-byte windows (16+ distinct byte values) taken from the
  payloads of PLAIN's PAGES chunks; prints "found N of M" in IMAGE.
layout: the sealed stream against the plain capture of the same vmcore
  (ok/FAIL lines): START version 9 and 8, SEAL at seq 2, the flags of
  every type, PAGES payloads 16 bytes longer.
samestream: exit 0 when A and B hold the same chunk stream byte for byte
  (each from its own superblock's data_offset to the end of END).
attack: runs K (kdumpinit) on damaged copies of SEALED and prints one
  ok/FAIL line per kind of damage. PLAIN is a capture of the same vmcore
  without the key, at the same level and threads: its PAGES chunks say
  which pfns each sealed PAGES chunk holds (same order, same payloads).
  Every save of a damaged copy (--format elf) must hold exactly the pages
  of the chunks before the damage (each equal to VMCORE's page), and
  info --key must say where it stopped. WHAT:
    tamper   one byte changed in the payload of each chunk, every byte of
             the smallest PAGES chunk, of SEGMENTS, DEBUGGER, START,
             CHAIN, SEAL and END, tag bytes of each (XXH64s re-forged)
    headers  header fields a forger can change: SEALED flag cleared or
             turned into AUTH, PAGES retyped as another sealed type,
             START's version lowered to 4
    cuts     the stream zeroed from many points on (power cut)
    reorder  two PAGES chunks swapped, seqs renumbered
    replay   a PAGES chunk of OTHER (the same vmcore sealed to the same
             key again) put in place of SEALED's, dump_id and seq its
    dup      a PAGES chunk repeated (seqs after it renumbered), and
             repeated with its own seq
    drop     a PAGES chunk retyped as a clear PAD: END's counts catch it
    selftest the judge itself (OTHER: PLAIN again): an intact copy judged
             as damaged, one chunk too many expected, and a raw page changed
             in the plain dump (no tags there, so it reaches the save) must
             each be refused
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

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "fuzz"))
from mkcorpus import xxh64  # noqa: E402  (pure Python, seed 0)

HDR = struct.Struct("<4sHHIIQQQQ")
PAGE = 4096
ZERO = bytes(PAGE)
Z8 = bytes(8)
TAG = 32	# a tag's length: 32 (AEGIS-256, versions 7 and 9), 16 before; chunks() sets it
SEALED, AUTH = 1, 2
START, NOTES, VMCI, SEGS, PAGES, DMESG, END, PAD, SETTINGS, GAP, CHAIN, DBG, SEAL, STEPS = range(1, 15)
TNAME = {1: "START", 2: "NOTES", 3: "VMCOREINFO", 4: "SEGMENTS", 5: "PAGES", 6: "DMESG", 7: "END",
         8: "PAD", 9: "SETTINGS", 10: "GAP", 11: "CHAIN", 12: "DEBUGGER", 13: "SEAL", 14: "STEPS"}
MODE = {NOTES: SEALED, VMCI: SEALED, SEGS: SEALED, PAGES: SEALED, DMESG: SEALED, SETTINGS: SEALED,
        DBG: SEALED, STEPS: SEALED, SEAL: AUTH, END: AUTH, START: 0, CHAIN: 0, GAP: AUTH, PAD: AUTH}


def tags_len(c):
    """The tag bytes after a sealed chunk's payload: version 7 seals a
    PAGES chunk in three parts, a tag each."""
    return 3 * TAG if c.type == PAGES and TAG == 32 else TAG


def span(ln):
    return (48 + ln + 7) & ~7


class Chunk:
    __slots__ = ("off", "type", "hs", "len", "flags", "dump_id", "seq", "ph", "hh")

    def __init__(self, img, off):
        (_m, self.type, self.hs, self.len, self.flags, self.dump_id, self.seq, self.ph,
         self.hh) = HDR.unpack_from(img, off)
        self.off = off

    @property
    def end(self):	# the byte after the payload
        return self.off + 48 + self.len

    def payload(self, img):
        return bytes(img[self.off + 48:self.end])

    def name(self):
        return "%s seq %d" % (TNAME.get(self.type, str(self.type)), self.seq)


def chunks(img):
    """The chunk headers from the superblock's data_offset up to END."""
    if img[:8] != b"KDUMPINT":
        raise SystemExit("sealtool: no kdumpinit superblock")
    pos = struct.unpack_from("<Q", img, 104)[0]
    out = []
    global TAG
    while pos + 48 <= len(img) and img[pos:pos + 4] == b"KDCK":
        c = Chunk(img, pos)
        v = struct.unpack_from("<I", img, pos + 48)[0] if c.type == START and c.len >= 4 else 0
        if v >= 5 and v != 8:	# a sealed dump's (a clear one's, 4 or 8, says nothing of tags)
            TAG = 32 if v in (7, 9) else 16
        out.append(c)
        if c.type == END:
            break
        pos += span(c.len)
    return out


def reforge(img, off, payload=True):
    """The chunk at OFF gets its XXH64s again (payload_hash over the bytes
    on the device, hdr_hash over the header with that field zero)."""
    if payload:
        ln = struct.unpack_from("<I", img, off + 8)[0]
        struct.pack_into("<Q", img, off + 32, xxh64(bytes(img[off + 48:off + 48 + ln])))
    struct.pack_into("<Q", img, off + 40, 0)
    struct.pack_into("<Q", img, off + 40, xxh64(bytes(img[off:off + 48])))


def load_pages(path):
    """{pfn: bytes} of the non-zero pages an ELF core's PT_LOADs hold (a
    raw vmcore or a save --format elf)."""
    out = {}
    with open(path, "rb") as f:
        size = os.fstat(f.fileno()).st_size
        if size == 0:
            return out
        m = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)
        if m[:4] != b"\x7fELF" or m[4] != 2:
            raise ValueError("%s: not a 64-bit ELF" % path)
        phoff, = struct.unpack_from("<Q", m, 32)
        phentsize, phnum = struct.unpack_from("<HH", m, 54)
        if phnum == 0xFFFF:
            shoff, = struct.unpack_from("<Q", m, 40)
            phnum, = struct.unpack_from("<I", m, shoff + 44)
        for i in range(phnum):
            typ, _fl, off, _va, pa, filesz, _msz, _al = struct.unpack_from(
                "<IIQQQQQQ", m, phoff + i * phentsize)
            if typ != 1 or pa % PAGE or off % PAGE:
                continue
            for k in range(filesz // PAGE):
                o = off + k * PAGE
                if o + PAGE > size:
                    break
                pg = m[o:o + PAGE]
                if pg != ZERO:
                    out[pa // PAGE + k] = pg
        m.close()
    return out


def stored_pfns(payload):
    """The pfns a clear PAGES payload stores (struct kdi_pages + bitmap)."""
    pfn, count, _nstored, _nzero, _fl = struct.unpack_from("<QIIII", payload, 0)
    bm = payload[24:24 + (count + 7) // 8]
    return [pfn + i for i in range(count) if bm[i >> 3] >> (i & 7) & 1]


def read_extents(path):
    """[(offset, bytes)]: the file's data, holes left out (runs closer
    than 1 MiB read as one)."""
    fd = os.open(path, os.O_RDONLY)
    try:
        size = os.fstat(fd).st_size
        ext, p = [], 0
        while p < size:
            try:
                d = os.lseek(fd, p, os.SEEK_DATA)
            except OSError:
                break
            h = os.lseek(fd, d, os.SEEK_HOLE)
            if ext and d - ext[-1][1] < (1 << 20):
                ext[-1][1] = h
            else:
                ext.append([d, h])
            p = h
        if not ext and size:
            ext = [[0, size]]
        out = []
        for a, b in ext:
            a &= ~(PAGE - 1)
            out.append((a, os.pread(fd, b - a, a)))
        return out
    finally:
        os.close(fd)


# ---------------------------------------------------------------- scan

def scan(vmcore, image, min_nonzero=16):
    vm = {p: pg for p, pg in load_pages(vmcore).items() if PAGE - pg.count(0) >= min_nonzero}
    index = {}
    for pfn, pg in vm.items():
        for r in range(8):
            best, bo = None, -1
            tried = 0
            for o in range(r, PAGE - 7, 8):
                w = pg[o:o + 8]
                if w == Z8:
                    continue
                d = len(set(w))
                if best is None or d > len(set(best)):
                    best, bo = w, o
                tried += 1
                if d >= 6 or tried >= 16:
                    break
            # 16 non-zero bytes: at most 14 lie off the grid (7 at each end)
            index.setdefault(int.from_bytes(best, "little"), []).append((pfn, bo))
    found, phases = set(), set()
    for base, data in read_extents(image):
        n8 = len(data) // 8
        words = memoryview(data)[:n8 * 8].cast("Q")
        hits = set(index).intersection(words)
        for i, key in enumerate(words):
            if key in hits:
                for pfn, o in index[key]:
                    s = 8 * i - o
                    if pfn not in found and s >= 0 and data[s:s + PAGE] == vm[pfn]:
                        found.add(pfn)
                        phases.add((base + s) % 8)
    print("found %d of %d" % (len(found), len(vm)))
    if found:
        print("first: pfn %#x; at %d of the 8 byte phases" % (min(found), len(phases)))
    return 0


def strings(image, needles):
    counts = {n: 0 for n in needles}
    for _base, data in read_extents(image):
        for n in needles:
            counts[n] += data.count(n.encode())
    for n in needles:
        print(counts[n], n)
    return 0


def samples(plain, image):
    with open(plain, "rb") as f:
        img = f.read()
    want = []
    for c in chunks(img):
        if c.type != PAGES or c.len < 4096:
            continue
        p = c.payload(img)
        for o in range(len(p) // 2, len(p) - 32, max(1, len(p) // 16)):
            w = p[o:o + 32]
            if len(set(w)) >= 16:
                want.append(w)
    found = 0
    data = b"".join(d for _b, d in read_extents(image))
    for w in want:
        if data.find(w) >= 0:
            found += 1
    print("found %d of %d" % (found, len(want)))
    return 0


def stream_bytes(path):
    with open(path, "rb") as f:
        img = f.read()
    cs = chunks(img)
    if not cs or cs[-1].type != END:
        raise SystemExit("sealtool: %s: no END" % path)
    return img[cs[0].off:cs[-1].end]


# ---------------------------------------------------------------- checks

class Cases:
    def __init__(self):
        self.failed = 0

    def report(self, name, why):
        if why:
            print("FAIL %s: %s" % (name, why))
            self.failed += 1
        else:
            print("ok %s" % name)


def layout(sealed, plain):
    with open(sealed, "rb") as f:
        s = f.read()
    with open(plain, "rb") as f:
        p = f.read()
    cs, cp = chunks(s), chunks(p)
    out = Cases()
    ver = lambda img, c: struct.unpack_from("<I", img, c.off + 48)[0]  # noqa: E731
    out.report("layout.start_version_9_sealed_8_plain",
               None if cs[0].type == START and cp[0].type == START and ver(s, cs[0]) == 9 and ver(p, cp[0]) == 8
               else "versions %d and %d" % (ver(s, cs[0]), ver(p, cp[0])))
    why = None
    if [c.type for c in cs[:3]] != [START, CHAIN, SEAL] or cs[2].len != 120 + TAG:
        why = "first chunks %s, SEAL length %d" % ([c.name() for c in cs[:3]], cs[2].len)
    out.report("layout.seal_after_start_chain_120_plus_tag", why)
    why = None
    for c in cs:
        if c.flags != MODE.get(c.type, -1):
            why = "%s has flags %d, want %d" % (c.name(), c.flags, MODE.get(c.type, -1))
            break
        if c.dump_id != cs[0].dump_id or c.seq != cs.index(c):
            why = "%s: dump_id or seq out of line" % c.name()
            break
    if not why and any(c.flags for c in cp):
        why = "the plain capture has flags set"
    out.report("layout.flags_per_type", why)
    # A sealed capture writes an empty PAD where a block keeps nothing
    # (every job is a chunk, so the workers know each one's seq): PADs
    # are left out of the comparison, on both sides.
    rest = [c for c in cs if c.type not in (SEAL, PAD)]
    cp = [c for c in cp if c.type != PAD]
    why = None
    if [c.type for c in rest] != [c.type for c in cp]:
        why = "chunk types differ from the plain capture's: %s / %s" % (
            [c.type for c in rest], [c.type for c in cp])
    else:
        for a, b in zip(rest, cp):
            if a.type == PAGES and a.len != b.len + tags_len(a):
                why = "%s: %d bytes, the plain one %d (+%d expected)" % (a.name(), a.len, b.len, tags_len(a))
                break
            if a.type == PAGES and a.payload(s)[:24] == b.payload(p)[:24]:
                why = "%s: its pages header is in the clear" % a.name()
                break
    out.report("layout.pages_chunks_are_plain_ones_plus_tag", why)
    return 1 if out.failed else 0


class Expect:
    """What a read with the key must show of a damaged copy: the save
    (--format elf) holds exactly WANT's pages (only some of them when not
    EXACT), each the vmcore's, and exits in RCS; info's state line starts
    with one of STATES and matches STATE; INFO matches somewhere in info.
    ZEROS: pages the save may hold as zeros instead, with a warning that
    their chunk's pages fail their tag (a PAGES chunk of version 7 whose
    pages were changed: save opens them only as it writes them)."""
    __slots__ = ("want", "rcs", "state", "exact", "states", "info", "zeros")

    def __init__(self, want, rcs=(5,), state=None, exact=True, states=("incomplete",), info=None,
                 zeros=frozenset()):
        self.want, self.rcs, self.state, self.exact = want, rcs, state, exact
        self.states, self.info, self.zeros = states, info, zeros


ANY_RC = (1, 2, 4, 5)


class Attack:
    def __init__(self, k, sec, vmcore, sealed, plain):
        self.k, self.sec = k, sec
        self.vm = load_pages(vmcore)
        with open(sealed, "rb") as f:
            self.img = f.read()
        with open(plain, "rb") as f:
            pimg = f.read()
        self.cs = chunks(self.img)
        cp = [c for c in chunks(pimg) if c.type != PAD]
        rest = [c for c in self.cs if c.type not in (SEAL, PAD)]
        if [c.type for c in rest] != [c.type for c in cp]:
            raise SystemExit("sealtool: the plain capture's chunks are not the sealed one's")
        # the pfns each sealed chunk stores (none but in PAGES)
        self.pfns = {}
        pi = iter(cp)
        for c in self.cs:
            self.pfns[c.seq] = frozenset()
            if c.type in (SEAL, PAD):
                continue
            q = next(pi)
            if c.type == PAGES:
                if c.len != q.len + tags_len(c):
                    raise SystemExit("sealtool: %s is not the plain one plus a tag" % c.name())
                self.pfns[c.seq] = frozenset(p for p in stored_pfns(q.payload(pimg)) if p in self.vm)
        self.all = frozenset().union(*self.pfns.values())
        if not self.all:
            raise SystemExit("sealtool: the PAGES chunks do not map onto the vmcore's pages")
        self.dir = tempfile.mkdtemp(prefix="sealtool.")
        self.trials = 0

    def cleanup(self):
        for f in os.listdir(self.dir):
            os.unlink(os.path.join(self.dir, f))
        os.rmdir(self.dir)

    def before(self, seq):
        """The pages of the chunks before seq."""
        return frozenset().union(*(v for s, v in self.pfns.items() if s < seq))

    def without(self, *seqs):
        """Every page but those of the chunks SEQS: a chunk that fails is
        left out and the reader goes on at the next intact one."""
        return self.all - frozenset().union(*(self.pfns[s] for s in seqs))

    def run(self, *args):
        r = subprocess.run([self.k] + list(args), stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        return r.returncode, r.stdout.decode(errors="replace"), r.stderr.decode(errors="replace")

    def judge_one(self, dev, out_path, patches, e):
        """Applies PATCHES ([(offset, bytes)]) to DEV (a copy of the sealed
        device), reads it with the key, puts the bytes back. None or why
        not."""
        fd = os.open(dev, os.O_RDWR)
        try:
            for off, b in patches:
                os.pwrite(fd, b, off)
            return self.check(dev, out_path, e)
        finally:
            for off, b in patches:
                os.pwrite(fd, self.img[off:off + len(b)], off)
            os.close(fd)

    def check(self, dev, out_path, e):
        rc, out, err = self.run("info", dev, "--key", self.sec)
        st = next((ln for ln in out.splitlines() if ln.startswith("state")), "")
        if not any(re.match(r"state +%s" % x, st) for x in e.states):
            return "info --key says %r (exit %d) %s" % (st, rc, err.strip()[:160])
        # what broke is said on the state line or on the lines about the
        # parts lost
        if e.state and not re.search(e.state, out):
            return "info --key says %r, not /%s/" % (st, e.state)
        if e.info and not re.search(e.info, out):
            return "info --key does not say /%s/: %r" % (e.info, out[:300])
        if os.path.exists(out_path):
            os.unlink(out_path)
        rc, out, err = self.run("save", dev, "--key", self.sec, "--output", out_path, "--format", "elf")
        if rc not in e.rcs:
            return "save --key exit %d, want %s: %s" % (rc, e.rcs, err.strip()[:200])
        got = load_pages(out_path) if os.path.exists(out_path) else {}
        zeroed = frozenset(p for p, pg in got.items() if p in e.zeros and pg == ZERO and self.vm.get(p) != pg)
        if zeroed and "fail their authentication tag" not in err:
            return "save wrote %d pages as zeros without saying why: %s" % (len(zeroed), err.strip()[:200])
        for pfn, pg in got.items():
            if self.vm.get(pfn) != pg and pfn not in zeroed:
                return "save wrote pfn %#x with bytes that are not the vmcore's" % pfn
        g = frozenset(got) - zeroed
        if not g <= e.want:
            extra = sorted(g - e.want)
            return "save holds %d pages beyond the intact chunks (pfn %#x...)" % (len(extra), extra[0])
        if e.exact and g != e.want:
            return "save holds %d pages, the intact chunks %d" % (len(g), len(e.want))
        return None

    def judge(self, trials):
        """TRIALS: [(what, patches, Expect)], read by two workers. None, or
        the first that fails and why."""
        self.trials += len(trials)
        devs = []
        for i in range(2):
            dev = os.path.join(self.dir, "dev%d" % i)
            with open(dev, "wb") as f:
                f.write(self.img)
            devs.append((dev, os.path.join(self.dir, "s%d.elf" % i)))
        free = list(devs)
        lock = threading.Lock()

        def one(t):
            with lock:
                d = free.pop()
            try:
                return self.judge_one(d[0], d[1], t[1], t[2])
            finally:
                with lock:
                    free.append(d)
        with concurrent.futures.ThreadPoolExecutor(2) as ex:
            for t, why in zip(trials, ex.map(one, trials)):
                if why:
                    return "%s: %s" % (t[0], why)
        return None

    def flip(self, c, rel, bit=None, rehash=True):
        """Patches: the payload byte at REL of chunk C changed, and its
        XXH64s re-forged (the header: 48 bytes)."""
        img = bytearray(self.img[c.off:c.off + 48 + c.len])
        img[48 + rel] ^= 1 << (rel % 8 if bit is None else bit)
        if rehash:
            reforge(img, 0)
        return [(c.off, bytes(img[:48])), (c.off + 48 + rel, bytes(img[48 + rel:49 + rel]))]

    def header(self, c, fmt, at, val):
        """Patches: a header field of chunk C set, hdr_hash re-forged."""
        h = bytearray(self.img[c.off:c.off + 48])
        struct.pack_into(fmt, h, at, val)
        reforge(h, 0, payload=False)
        return [(c.off, bytes(h))]

    def expect_for(self, c, rel=None):
        """What damage to byte REL of chunk C's payload must show."""
        if c.type == SEAL and rel is not None and 40 <= rel < 48:
            # its key_id: no longer this key's dump, and read as such
            return Expect(frozenset(), (2,), states=("complete", "incomplete"),
                          info="the key given is not its key")
        if c.type in (START, CHAIN, SEAL):
            return Expect(frozenset(), ANY_RC)
        if c.type == END:
            return Expect(self.all, (5,), r"chunk %d \(type 7\) fails its authentication tag" % c.seq)
        return Expect(self.without(c.seq), (5,) if c.type == PAGES else ANY_RC,
                      r"chunk %d \(type %d\) fails its authentication tag" % (c.seq, c.type),
                      exact=c.type == PAGES, zeros=self.pfns[c.seq] if TAG == 32 else frozenset())

    def flips(self, c, rels):
        return [("%s (%d bytes), byte %d" % (c.name(), c.len, r), self.flip(c, r), self.expect_for(c, r))
                for r in rels]

    def tamper(self, out):
        rnd = random.Random(29)
        t = []
        for c in self.cs:
            if not c.len:
                continue	# an empty PAD: no byte to change
            t += self.flips(c, [rnd.randrange(c.len - TAG) if c.len > TAG else 0])
        out.report("tamper.one_byte_of_every_chunk", self.judge(t))
        pages = [c for c in self.cs if c.type == PAGES]
        small = min(pages, key=lambda c: c.len)
        for label, typ in (("smallest_pages_chunk", None), ("segments", SEGS), ("start", START),
                           ("chain", CHAIN), ("seal", SEAL)):
            c = small if typ is None else next((x for x in self.cs if x.type == typ), None)
            out.report("tamper.every_byte_of_%s" % label,
                       self.judge(self.flips(c, range(c.len))) if c else "no such chunk")
        t = []
        for c in self.cs:
            if c.type in (NOTES, VMCI, DBG, END, DMESG, SETTINGS):
                t += self.flips(c, sorted(rnd.sample(range(c.len), min(c.len, 12))))
        out.report("tamper.bytes_of_other_metadata_and_end", self.judge(t))
        t = []
        for c in self.cs:
            if c.flags:
                t += self.flips(c, rnd.sample(range(c.len - TAG, c.len), 3))
        out.report("tamper.tag_bytes_of_every_chunk", self.judge(t))
        t = []
        for c in pages:
            t += self.flips(c, [0, 8, 16, 20, 24, c.len // 2, c.len - TAG - 1] + rnd.sample(range(c.len), 3))
        out.report("tamper.bytes_of_every_pages_chunk", self.judge(t))
        # the payload changed but its XXH64 left: the checksum stops it
        c = pages[len(pages) // 2]
        out.report("tamper.unforged_checksum_still_stops",
                   self.judge([("unforged", self.flip(c, 100, rehash=False),
                                Expect(self.without(c.seq), (5,), r"chunk %d" % c.seq))]))

    def headers(self, out):
        pages = [c for c in self.cs if c.type == PAGES]
        c = pages[len(pages) // 2]
        e = Expect(self.without(c.seq), (5,), r"chunk %d" % c.seq)
        out.report("headers.sealed_flag_cleared", self.judge([("flags 0", self.header(c, "<I", 12, 0), e)]))
        out.report("headers.sealed_flag_turned_auth", self.judge([("flags AUTH", self.header(c, "<I", 12, AUTH), e)]))
        out.report("headers.pages_retyped_as_other_sealed_type", self.judge(
            [("PAGES made type %d" % t, self.header(c, "<H", 4, t), e)
             for t in (NOTES, VMCI, SEGS, DMESG, SETTINGS, DBG)]))
        out.report("headers.metadata_retyped_as_pages", self.judge(
            [("%s made PAGES" % x.name(), self.header(x, "<H", 4, PAGES),
              Expect(self.without(x.seq), ANY_RC, r"chunk %d" % x.seq, exact=False))
             for x in self.cs if x.flags == SEALED and x.type != PAGES]))
        s0 = self.cs[0]
        h = bytearray(self.img[s0.off:s0.off + 48 + s0.len])
        struct.pack_into("<I", h, 48, 4)
        reforge(h, 0)
        out.report("headers.start_version_lowered_to_4",
                   self.judge([("version 4", [(s0.off, bytes(h))], Expect(frozenset(), ANY_RC))]))

    def cuts(self, out):
        rnd = random.Random(5)
        first_pages = next(c for c in self.cs if c.type == PAGES)
        base, end = self.cs[0].off, self.cs[-1].end
        points = set()
        mid = self.cs[8:-2]
        picks = self.cs[:8] + rnd.sample(mid, min(14, len(mid))) + self.cs[-2:]
        for c in picks:
            points.update({c.off, c.off + 1, c.off + 47, c.off + 48, c.off + 48 + c.len // 2,
                           c.end - 1, c.end})
        points.update(rnd.randrange(base, end) for _ in range(12))
        t = []
        for p in sorted(x for x in points if x < end):
            whole = [c for c in self.cs if c.end <= p]
            want = frozenset().union(*(self.pfns[c.seq] for c in whole))
            e = Expect(want, (5,)) if p >= first_pages.off else \
                Expect(want, ANY_RC, states=("incomplete", "empty"))
            t.append(("cut at stream byte %d (after %s)" % (p - base, whole[-1].name() if whole else "nothing"),
                      [(p, bytes(end - p))], e))
        why = self.judge(t)
        if not why and len(t) < 40:
            why = "only %d cut points" % len(t)
        out.report("cuts.save_up_to_last_whole_chunk", why)

    def rebuild(self, parts, renumber=True):
        """Patches: the chunks PARTS ([(header, payload)]) from data_offset,
        renumbered and re-forged; zeros up to the old stream's end."""
        base, end = self.cs[0].off, self.cs[-1].end
        st = bytearray()
        for i, (h, p) in enumerate(parts):
            h = bytearray(h)
            struct.pack_into("<I", h, 8, len(p))
            if renumber:
                struct.pack_into("<Q", h, 24, i)
            struct.pack_into("<Q", h, 32, xxh64(p))
            reforge(h, 0, payload=False)
            st += bytes(h) + p + bytes(span(len(p)) - 48 - len(p))
        if len(st) < end - base:
            st += bytes(end - base - len(st))
        if base + len(st) > len(self.img):
            raise SystemExit("sealtool: the rebuilt stream does not fit the device")
        return [(base, bytes(st))]

    def parts(self):
        return [(self.img[c.off:c.off + 48], c.payload(self.img)) for c in self.cs]

    def pages_idx(self):
        return [i for i, c in enumerate(self.cs) if c.type == PAGES]

    def tag_fails(self, seq):
        return r"chunk %d \(type 5\) fails its authentication tag" % seq

    def reorder(self, out):
        idx = self.pages_idx()
        t = []
        for a, b in ((idx[0], idx[1]), (idx[1], idx[-1])):
            ps = self.parts()
            ps[a], ps[b] = ps[b], ps[a]
            t.append(("PAGES %d and %d swapped" % (a, b), self.rebuild(ps),
                      Expect(self.without(self.cs[a].seq, self.cs[b].seq), (5,),
                             self.tag_fails(self.cs[a].seq))))
        out.report("reorder.pages_chunks_swapped", self.judge(t))

    def replay(self, out, other):
        with open(other, "rb") as f:
            oimg = f.read()
        ocs = chunks(oimg)
        oc = [c for c in ocs if c.type == PAGES]
        t, why = [], None
        for n, i in enumerate(self.pages_idx()):
            c, o = self.cs[i], oc[n]
            if o.len != c.len or o.payload(oimg) == c.payload(self.img) or c.dump_id == o.dump_id:
                why = "the other dump's PAGES chunk %d is not a twin sealed apart" % n
                break
            ps = self.parts()
            h = bytearray(oimg[o.off:o.off + 48])
            struct.pack_into("<Q", h, 16, c.dump_id)
            ps[i] = (bytes(h), o.payload(oimg))
            t.append(("PAGES chunk %d from the other dump" % n, self.rebuild(ps),
                      Expect(self.without(c.seq), (5,), self.tag_fails(c.seq))))
        out.report("replay.pages_chunk_from_another_dump_same_key", why or self.judge(t))
        s = next(c for c in ocs if c.type == SEAL)
        ps = self.parts()
        h = bytearray(oimg[s.off:s.off + 48])
        struct.pack_into("<Q", h, 16, self.cs[2].dump_id)
        ps[2] = (bytes(h), s.payload(oimg))
        out.report("replay.seal_record_from_another_dump",
                   self.judge([("other SEAL", self.rebuild(ps), Expect(frozenset(), ANY_RC))]))

    def dup(self, out):
        idx = self.pages_idx()
        i = idx[len(idx) // 2]
        c = self.cs[i]
        want = self.before(c.seq) | self.pfns[c.seq]
        ps = self.parts()
        ps.insert(i + 1, ps[i])
        out.report("dup.pages_chunk_repeated_renumbered", self.judge(
            [("repeated", self.rebuild(ps), Expect(want, (5,), self.tag_fails(c.seq + 1)))]))
        # the same seq twice: the second is out of sequence, left out,
        # and nothing else is lost
        out.report("dup.pages_chunk_repeated_same_seq", self.judge(
            [("repeated, same seq", self.rebuild(ps, renumber=False), Expect(self.all, (5,)))]))
        ps = self.parts()
        ps.insert(3, ps[2])
        out.report("dup.seal_record_twice", self.judge(
            [("SEAL twice", self.rebuild(ps), Expect(frozenset(), ANY_RC))]))

    def drop(self, out):
        idx = self.pages_idx()
        c = self.cs[idx[len(idx) // 2]]
        h = bytearray(self.img[c.off:c.off + 48])
        struct.pack_into("<H", h, 4, PAD)
        struct.pack_into("<I", h, 12, 0)
        reforge(h, 0, payload=False)
        out.report("drop.pages_chunk_made_clear_pad", self.judge(
            [("made PAD", [(c.off, bytes(h))], Expect(self.all - self.pfns[c.seq], (5,), "END", exact=False))]))


    def selftest(self, out, plain):
        """The judge must be able to fail: each of these must be refused."""
        pages = [c for c in self.cs if c.type == PAGES]
        c = pages[len(pages) // 2]
        why = self.judge([("intact", [], Expect(self.before(c.seq), (5,)))])
        out.report("selftest.intact_copy_is_not_taken_for_damaged",
                   None if why and "complete" in why else "the judge passed an intact dump: %s" % why)
        why = self.judge([("one chunk more", self.flip(c, 100), Expect(self.all, (5,)))])
        out.report("selftest.one_chunk_too_many_is_seen",
                   None if why and "pages, the intact chunks" in why else "not seen: %s" % why)
        # A plain dump has no tags: a raw page changed in it (XXH64s
        # re-forged) reaches the save, and the judge must see that.
        with open(plain, "rb") as f:
            pimg = bytearray(f.read())
        at = None
        for q in chunks(pimg):
            if q.type != PAGES:
                continue
            pl = q.payload(pimg)
            _pfn, count, nstored, nzero, _fl = struct.unpack_from("<QIIII", pl, 0)
            bm = (count + 31) // 32 * 4
            o = 24 + bm * (2 if nzero else 1)
            data = o + 4 * nstored
            for k in range(nstored):
                w, = struct.unpack_from("<I", pl, o + 4 * k)
                if not w & 0x80000000 and w & 0xFFFFFF == PAGE:
                    at = (q, data + 2048)
                    break
                data += w & 0xFFFFFF
            if at:
                break
        if not at:
            out.report("selftest.changed_page_in_plain_dump_is_seen", "no raw page in the plain dump")
            return
        q, rel = at
        pimg[q.off + 48 + rel] ^= 0x10
        reforge(pimg, q.off)
        dev = os.path.join(self.dir, "plain")
        with open(dev, "wb") as f:
            f.write(pimg)
        why = self.check(dev, os.path.join(self.dir, "p.elf"),
                         Expect(self.all, (0,), states=("complete",)))
        out.report("selftest.changed_page_in_plain_dump_is_seen",
                   None if why and "not the vmcore's" in why else "not seen: %s" % why)

def main():
    a = sys.argv[1:]
    if not a:
        print(__doc__.strip().split("\n\n")[0], file=sys.stderr)
        return 2
    cmd = a[0]
    if cmd == "scan" and len(a) == 3:
        return scan(a[1], a[2])
    if cmd == "strings" and len(a) >= 3:
        return strings(a[1], a[2:])
    if cmd == "samples" and len(a) == 3:
        return samples(a[1], a[2])
    if cmd == "layout" and len(a) == 3:
        return layout(a[1], a[2])
    if cmd == "samestream" and len(a) == 3:
        return 0 if stream_bytes(a[1]) == stream_bytes(a[2]) else 1
    if cmd == "attack" and len(a) in (7, 8):
        what = a[1]
        if what not in ("tamper", "headers", "cuts", "reorder", "dup", "drop", "replay", "selftest") or \
                (what in ("replay", "selftest")) != (len(a) == 8):
            print("sealtool: attack %s: unknown, or OTHER given where not wanted" % what, file=sys.stderr)
            return 2
        at = Attack(*a[2:7])
        out = Cases()
        try:
            if what in ("replay", "selftest"):
                getattr(at, what)(out, a[7])
            else:
                getattr(at, what)(out)
        finally:
            at.cleanup()
        print("sealtool: %s: %d damaged copies read" % (what, at.trials), file=sys.stderr)
        return 1 if out.failed else 0
    print(__doc__.strip().split("\n\n")[0], file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main())
