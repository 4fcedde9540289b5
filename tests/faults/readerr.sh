#!/bin/bash
# Read errors where `save` reads the dump: a dump made by `kdumpinit
# capture` is served to it through QEMU's storage daemon, as a FUSE file,
# with blkdebug failing every read of a range in the middle of its pages
# (a qcow2 image over blkdebug: qcow2 raises the read event blkdebug's
# rules wait for). `info` and `save` must say which part they could not
# read, go on past it to the chunks after it, and save the rest, marked
# INCOMPLETE, every page it holds right (pagecheck against the vmcore).
#
# usage: tests/faults/readerr.sh [--workdir DIR]
# Needs qemu-storage-daemon, qemu-img and /dev/fuse; runs as root.
set -uo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
top=$(cd "$here/../.." && pwd)
workdir=$top/build/faults/readerr
[ "${1:-}" = --workdir ] && workdir=$(mkdir -p "$2" && cd "$2" && pwd)
kdumpinit=${KDUMPINIT:-$top/build/kdumpinit}
mkvmcore=${MKVMCORE:-$top/build/tools/mkvmcore}
python=/usr/bin/python3
rm -rf "$workdir"
mkdir -p "$workdir"
cd "$workdir" || exit 1

npass=0 nfail=0
pass() { npass=$((npass + 1)); echo "PASS: $*"; }
failed() { nfail=$((nfail + 1)); echo "FAIL: $*"; }
die() { failed "$*"; echo "$npass passed, $nfail failed, 0 skipped"; exit 1; }

for t in qemu-storage-daemon qemu-img; do
	command -v $t >/dev/null || die "$t is not installed (deps/packages: qemu-utils, qemu-system-common)"
done
[ -c /dev/fuse ] || die "no /dev/fuse"

# A 256 MiB vmcore at level 1: about 180 MB of pages, compressible.
"$mkvmcore" -o vmcore --mem 256M --zero-pct 20 --seed 7 >mk.out 2>&1 || die "mkvmcore: $(cat mk.out)"
"$kdumpinit" capture --vmcore vmcore --output dump.img --level 1 --threads 2 >capture.out 2>&1 ||
	die "capture exited $?: $(tail -n 3 capture.out)"
"$kdumpinit" info dump.img >info-clean.out 2>&1 || die "info on the clean dump: $(cat info-clean.out)"
size=$(stat -c %s dump.img)
qemu-img convert -S 0 -f raw -O qcow2 dump.img dump.qcow2 || die "qemu-img convert failed"
# qcow2 rounds the size up to whole sectors: the served file's size.
vsize=$(qemu-img info --output=json dump.qcow2 | "$python" -c 'import json,sys; print(json.load(sys.stdin)["virtual-size"])')

# Every read that touches [40%, 40% + 1 MiB) of the dump fails: one rule per
# 4 KiB of the range, at the qcow2 file's offsets (qemu-img map).
lo=$((size * 2 / 5 / 4096 * 4096)) hi=$((lo + (1 << 20)))
qemu-img map --output=json dump.qcow2 >map.json
"$python" - "$lo" "$hi" map.json >blkdebug.conf <<'PY' || die "no qcow2 mapping for the range"
import json, sys
lo, hi = int(sys.argv[1]), int(sys.argv[2])
n = 0
for e in json.load(open(sys.argv[3])):
    if "offset" not in e:
        continue
    for g in range(max(lo, e["start"]), min(hi, e["start"] + e["length"]), 4096):
        h = e["offset"] + g - e["start"]
        print('[inject-error]\nevent = "read_aio"\nerrno = "5"\nsector = "%d"\n' % (h // 512))
        n += 1
sys.exit(0 if n == (hi - lo) // 4096 else 1)
PY

touch served
qemu-storage-daemon --blockdev "driver=file,filename=$workdir/dump.qcow2,node-name=f0" \
	--blockdev "driver=blkdebug,config=$workdir/blkdebug.conf,image=f0,node-name=b0" \
	--blockdev "driver=qcow2,file=b0,node-name=q0" \
	--export "type=fuse,id=e0,node-name=q0,mountpoint=$workdir/served" >qsd.out 2>&1 &
qsd=$!
stop_qsd() { kill $qsd 2>/dev/null; wait $qsd 2>/dev/null; umount "$workdir/served" 2>/dev/null; }
trap stop_qsd EXIT
for _ in $(seq 50); do
	[ "$(stat -c %s served 2>/dev/null)" = "$vsize" ] && break
	sleep 0.1
done
[ "$(stat -c %s served)" = "$vsize" ] || die "the FUSE export did not appear: $(cat qsd.out)"
if "$python" -c 'import os, sys; f = os.open("served", os.O_RDONLY); os.pread(f, 4096, int(sys.argv[1]))' "$lo" 2>/dev/null; then
	die "the range reads fine: the fault is not in place"
fi
pass "reads of $lo..$hi of the served dump fail (EIO), the rest reads"

"$kdumpinit" info served >info.out 2>&1
rc=$?
if [ $rc = 5 ] && grep -q "^gaps *1 region lost to read errors" info.out &&
	grep -q "^state *incomplete (1 part lost to read errors" info.out; then
	pass "info: exit 5, $(grep '^gaps' info.out | cut -c1-110)"
else
	failed "info exited $rc:"
	sed 's/^/    /' info.out
fi
clean=$(awk '$1 == "pages" && $2 == "kept" {print $3}' info-clean.out)
got=$(awk '$1 == "pages" && $2 == "kept" {print $3}' info.out)
# Past the bad range: far more than the 40 % before it.
if [ -n "$got" ] && [ -n "$clean" ] && [ "$got" -lt "$clean" ] && [ $((got * 10)) -gt $((clean * 9)) ]; then
	pass "info reads past the bad range: $got of $clean pages"
else
	failed "pages read: ${got:-?} of ${clean:-?} (want most, not all)"
fi

"$kdumpinit" save served --output saved.elf --format elf >save-elf.out 2>&1
rc=$?
if [ $rc = 5 ] && grep -q "incomplete (1 part lost to read errors" save-elf.out; then
	pass "save --format elf: exit 5 and says why: $(grep -i -m1 'incomplete' save-elf.out | cut -c1-140)"
else
	failed "save --format elf exited $rc:"
	sed 's/^/    /' save-elf.out
fi
"$python" "$top/tests/tools/pagecheck.py" vmcore saved.elf --require some >pagecheck.out 2>&1 &&
	pass "pagecheck: every page saved is the vmcore's ($(tail -n 1 pagecheck.out))" ||
	{ failed "pagecheck:"; tail -n 10 pagecheck.out | sed 's/^/    /'; }
"$kdumpinit" save served --output saved.kdump --format kdump >save-kdump.out 2>&1
rc=$?
[ $rc = 5 ] && [ -s saved.kdump ] && pass "save --format kdump: exit 5, $(stat -c %s saved.kdump) bytes" ||
	{ failed "save --format kdump exited $rc:"; sed 's/^/    /' save-kdump.out; }
stop_qsd
trap - EXIT
rm -f vmcore dump.img dump.qcow2 saved.elf saved.kdump
echo "$npass passed, $nfail failed, 0 skipped"
[ $nfail = 0 ]
