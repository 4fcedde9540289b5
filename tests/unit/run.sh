#!/bin/bash
# tests/unit/run.sh: kdumpinit's unit and host-level tests.
#
# Run from anywhere after `make unit-tests`. Environment (paths relative to
# the repository top are fine):
#   KDUMPINIT  the binary             (default build/kdumpinit)
#   MKVMCORE   the vmcore generator   (default build/tools/mkvmcore)
#   UNIT_BIN   the built C tests      (default build/tests/unit)
#   WORK       scratch space; a fresh directory is made inside it and
#              removed after a run with no failure (default build/tests/unit)
#   KEEP=1     keep the scratch directory anyway
#
#   T=GLOB     run only the cases GLOB names (bash pattern, extglob:
#              T='C.end_signature_*', T='@(A.*|F.gpt.*)'); a case's
#              prerequisites (NEEDS below) and the setup cases run too
#
# Prints one line per case, "ok NAME" or "FAIL NAME: why" (details of a
# failed case are in its log, NAME.log, in the scratch directory), one
# "skip NAME: why" for what cannot run here (tests/check.sh fails on a skip
# tests/skips.allowed does not list), and ends with the line "N passed,
# N failed, N skipped", noting how many passes are the ASan reruns of the C
# cases. Exits non-zero if any case failed.
#
# A case is "if begin NAME; then ... end; fi": begin is false when T
# leaves NAME out, so the body does not run. A case that uses what an
# earlier one made names it in NEEDS.
#
# Sections: A round trips, B bad input, C targets, D a damaged dump,
# E PID-1 mode in a PID namespace, F the C unit tests and helper checks.
set -u

top=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
cd "$top" || exit 1
abs() { case $1 in /*) printf '%s\n' "$1" ;; *) printf '%s\n' "$top/$1" ;; esac; }

KDUMPINIT=$(abs "${KDUMPINIT:-build/kdumpinit}")
MKVMCORE=$(abs "${MKVMCORE:-build/tools/mkvmcore}")
UNIT_BIN=$(abs "${UNIT_BIN:-build/tests/unit}")
WORK=$(abs "${WORK:-build/tests/unit}")
PY=/usr/bin/python3
[ -x "$PY" ] || PY=python3
VMCMP=$top/tests/tools/vmcmp.py
MKSAVED=$top/tests/tools/mksaved.py
PAGECHECK=$top/tests/tools/pagecheck.py
CHUNKS=$top/tests/tools/chunks.py
UNALIGN=$top/tests/tools/unalign.py
DEVSIG=$top/tests/tools/devsig.py
FORGE=$top/tests/tools/forge.py
export PYTHONDONTWRITEBYTECODE=1
export PATH=$PATH:/usr/sbin:/sbin

for f in "$KDUMPINIT" "$MKVMCORE"; do
	[ -x "$f" ] || { echo "run.sh: $f is missing (make unit-tests)" >&2; echo "0 passed, 1 failed, 0 skipped"; exit 1; }
done
mkdir -p "$WORK" || exit 1
# Scratch directories of earlier runs (kept after a failure) go now.
for old in "$WORK"/run.??????; do
	[ -d "$old" ] && [ -e "$old/.kdumpinit-unit" ] && rm -rf "$old"
done
W=$(mktemp -d "$WORK/run.XXXXXX") || exit 1
: >"$W/.kdumpinit-unit"
chmod 711 "$W"	# B.unreadable_vmcore runs one command as nobody
mkdir -p "$W/tmp"
export TMPDIR=$W/tmp

npass=0 nfail=0 nskip=0 nasan=0
CASE= WHY= NCHK=0 LOG=/dev/null RC=0 LAST= T0=0 QUIET=

# ---- case selection (T) ----
# T=GLOB runs only the cases it names (make check-unit T='C.end_signature_*';
# several: T='@(A.*|C.source_missing)', extglob). A selected case's
# prerequisites (NEEDS) run too, and the setup cases always do: those T
# does not name run quietly (a failure still counts).
NEEDS="A.recapture_stale_chunk_ignored:A.recapture_same_target
B.elf_exec:B.mkvmcore_bad_inputs B.no_vmcoreinfo:B.mkvmcore_bad_inputs
B.short_header:B.mkvmcore_bad_inputs B.badphdr:B.mkvmcore_bad_inputs
B.no_loads:B.mkvmcore_no_loads
C.save_keeps_existing_output:A.level31_default
D.forged_huge_segment_kdump_bounded:D.forged_pages_total_segment"
T=${T:-}
shopt -s extglob
selected() { [[ -z $T || $1 == $T ]]; }	# NAME: does T name it?
may_select() {	# PREFIX: could T name something that starts with PREFIX?
	local lit=${T%%[*?[@+!]*}
	[[ -z $T || $1 == "$lit"* || $lit == "$1"* ]]
}
needed() {	# NAME: a prerequisite of a selected case, or a setup case?
	case $1 in setup.* | *.setup) return 0 ;; esac
	local d
	for d in $NEEDS; do
		[ "${d#*:}" = "$1" ] && selected "${d%%:*}" && return 0
	done
	return 1
}

# ---- case bookkeeping ----
# begin NAME: starts a case; false (the case does not run) if T leaves it out.
begin() {
	QUIET=
	if ! selected "$1"; then needed "$1" || return 1; QUIET=1; fi
	CASE=$1; WHY=; NCHK=0; LOG=$W/$CASE.log; : >"$LOG"; T0=$(date +%s.%N)
}
failed() { [ -n "$WHY" ] || WHY=$1; echo "FAILED: $1" >>"$LOG"; }
end() {
	[ "$NCHK" -gt 0 ] || [ -n "$WHY" ] || WHY="asserted nothing"
	awk -v c="$CASE" -v a="$(date +%s.%N)" -v b="$T0" 'BEGIN { printf "%6.1f s  %s\n", a - b, c }' >>"$W/times"
	if [ -z "$WHY" ]; then
		[ -n "$QUIET" ] && return 0
		echo "ok $CASE"
		npass=$((npass + 1))
	else
		echo "FAIL $CASE: $WHY"
		nfail=$((nfail + 1))
	fi
}
# skip NAME WHY: NAME (a case, or a prefix of the cases) cannot run here.
# tests/check.sh fails on a skip that tests/skips.allowed does not list.
skip() { may_select "$1" || return 0; echo "skip $1: $2"; nskip=$((nskip + 1)); }
# The closing line; check.sh reads its first three counts.
summary() {
	local asan=
	[ "$nasan" -gt 0 ] && asan=" ($nasan of them ASan reruns of the C cases)"
	echo "$npass passed, $nfail failed, $nskip skipped$asan"
}

# ck WHY COMMAND...: one assertion; COMMAND's output goes to the log.
ck() {
	local why=$1
	shift
	NCHK=$((NCHK + 1))
	"$@" >>"$LOG" 2>&1 || failed "$why"
}
# ck_not WHY COMMAND...: COMMAND must fail.
ck_not() {
	local why=$1
	shift
	NCHK=$((NCHK + 1))
	if "$@" >>"$LOG" 2>&1; then failed "$why"; fi
}

# x COMMAND...: run with a bound (XT seconds, 120 unless set), stdout in
# $W/out, stderr in $W/err, exit code in RC (124: the bound ran out).
x() {
	LAST="${1##*/}${2:+ $2}"
	timeout "${XT:-120}" "$@" >"$W/out" 2>"$W/err" </dev/null
	RC=$?
	{
		echo "+ $* -> exit $RC"
		sed 's/^/  | /' "$W/out" | head -40
		sed 's/^/  ! /' "$W/err" | head -40
	} >>"$LOG"
}
K() { x "$KDUMPINIT" "$@"; }
# The lines of a log worth quoting in a why: errors first, else the end.
oneline() {
	{ grep -iE 'error|refus|FAIL' "$1" || tail -n 3 "$1"; } 2>/dev/null | head -n 3 | tr '\n' ' ' | cut -c1-200
}
rc_is() {
	NCHK=$((NCHK + 1))
	[ "$RC" -eq "$1" ] || failed "$LAST: exit $RC, want $1 (stderr: $(oneline "$W/err"))"
}
err_has() {
	NCHK=$((NCHK + 1))
	grep -Eiq -- "$1" "$W/err" || failed "$LAST: stderr does not mention /$1/: $(oneline "$W/err")"
}
out_has() {
	NCHK=$((NCHK + 1))
	grep -Eiq -- "$1" "$W/out" || failed "$LAST: stdout does not mention /$1/: $(oneline "$W/out")"
}
absent() {
	NCHK=$((NCHK + 1))
	[ ! -e "$1" ] || failed "$1 exists but should not"
}
present() {
	NCHK=$((NCHK + 1))
	[ -s "$1" ] || failed "$1 is missing or empty"
}

# vc REF SAVED [vmcmp options]: vmcmp must pass; the first problem is the why.
vc() {
	NCHK=$((NCHK + 1))
	"$PY" "$VMCMP" "$@" >"$W/cmp" 2>&1
	local r=$?
	cat "$W/cmp" >>"$LOG"
	[ "$r" -eq 0 ] || failed "vmcmp ${2##*/} ${*:3}: $(grep -m1 -E '^  |vmcmp:' "$W/cmp" | cut -c1-140)"
}
# pc REF SAVED [pagecheck options]: the same with pagecheck.py.
pc() {
	NCHK=$((NCHK + 1))
	"$PY" "$PAGECHECK" "$@" >"$W/cmp" 2>&1
	local r=$?
	cat "$W/cmp" >>"$LOG"
	[ "$r" -eq 0 ] || failed "pagecheck ${2##*/} ${*:3}: $(grep -m1 -E '^  |pagecheck:' "$W/cmp" | cut -c1-140)"
}

mk() {
	NCHK=$((NCHK + 1))
	"$MKVMCORE" "$@" >>"$LOG" 2>&1 || failed "mkvmcore $* failed"
}
vmcmp() { "$PY" "$VMCMP" "$@"; }
pagecheck() { "$PY" "$PAGECHECK" "$@"; }
fsize() { stat -c %s "$1"; }
# Last chunk's end: the stream's end offset on the device.
stream_end() { "$PY" "$CHUNKS" "$1" | awk 'END { print $1 + int((48 + $3 + 7) / 8) * 8 }'; }
flip() {	# FILE OFFSET: invert one byte
	"$PY" -c 'import sys
with open(sys.argv[1], "r+b") as f:
    o = int(sys.argv[2]); f.seek(o); b = f.read(1); f.seek(o); f.write(bytes([b[0] ^ 0xff]))' "$1" "$2"
}
copy_at() {	# SRC SOFF LEN DST DOFF
	"$PY" -c 'import sys
s, so, n, d, do = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4], int(sys.argv[5])
with open(s, "rb") as f:
    f.seek(so); b = f.read(n)
with open(d, "r+b") as f:
    f.seek(do); f.write(b)' "$@"
}
headsum() { { head -c 2097152 "$1"; tail -c 1048576 "$1"; } | md5sum | cut -d' ' -f1; }

# capture + save + compare in one go: rt NAME VMCORE MODE CAPTURE-OPTIONS...
# MODE is all or nonzero (vmcmp --mode).
rt() {
	local name=$1 core=$2 mode=$3
	shift 3
	K capture --vmcore "$core" --output "$W/$name.img" "$@"
	rc_is 0
	K info "$W/$name.img"
	rc_is 0
	out_has '^state +complete'
	K save "$W/$name.img" --output "$W/$name.elf" --format elf
	rc_is 0
	vc "$core" "$W/$name.elf" --mode "$mode"
}

# ---- reference vmcores, made once ----
if begin setup.vmcores; then
mk -o "$W/v64.core" --mem 64M --segments 2 --seed 1
mk -o "$W/v64a.core" --mem 64M --segments 3 --text-alias --seed 3 --cpus 4
mk -o "$W/v16.core" --mem 16M --segments 2 --seed 2 --osrelease 6.1.0-small
mk -o "$W/v32.core" --mem 32M --segments 2 --seed 5
mk -o "$W/vgap0.core" --mem 24M --segments 3 --sparse-gap 0 --seed 4
ck "unalign.py failed" "$PY" "$UNALIGN" "$W/vgap0.core" "$W/vun.core"
end; fi
if [ -n "$WHY" ]; then
	summary
	exit 1
fi

# ================= A. round trips =================

if begin A.level0_all_pages_bit_exact; then
rt l0 "$W/v64a.core" all --level 0
K info "$W/l0.img"
out_has 'dump level +0'
end; fi

if begin A.level1_drops_zero_pages; then
rt l1 "$W/v64.core" nonzero --level 1
ck_not "vmcmp --mode all passed on a level-1 save: zero pages were not dropped" \
	vmcmp "$W/v64.core" "$W/l1.elf" --mode all
end; fi

if begin A.level31_default; then
rt l31 "$W/v64.core" nonzero
K info "$W/l31.img"
out_has 'dump level +31'
out_has 'kernel +6\.1\.0-mkvmcore'
out_has 'excluded +zero'
end; fi

if begin A.text_alias; then
rt alias "$W/v64a.core" nonzero --level 31
ck "save has no PT_LOAD at the kernel-text address" \
	sh -c "readelf -lW '$W/alias.elf' | grep -q 0xffffffff81"
end; fi

# mkvmcore cannot make unaligned segment ends; unalign.py moves the
# boundary between two back-to-back PT_LOADs into the middle of a page and
# cuts the last one mid-page.
if begin A.unaligned_segment_ends; then
ck "unalign.py made no unaligned PT_LOAD" "$PY" -c 'import struct, sys
d = open(sys.argv[1], "rb").read(65536)
phoff, phnum = struct.unpack_from("<Q", d, 32)[0], struct.unpack_from("<H", d, 56)[0]
ph = [struct.unpack_from("<IIQQQQQQ", d, phoff + 56 * i) for i in range(phnum)]
sys.exit(not any(p[0] == 1 and (p[4] % 4096 or (p[4] + p[6]) % 4096) for p in ph))' "$W/vun.core"
rt un0 "$W/vun.core" all --level 0
rt un31 "$W/vun.core" nonzero --level 31
end; fi

# A file is read with pread straight into the stage, /proc/vmcore through
# mmap windows: both paths, with any thread count, store the same bytes.
if begin A.threads_and_read_paths_identical; then
for v in "t1:--threads 1" "t2:--threads 2" "t2mm:--threads 2 --mmap" "t1mm:--threads 1 --mmap" \
	"t3:--threads 3 --no-mmap --oversubscribe"; do
	n=${v%%:*}
	# shellcheck disable=SC2086
	K capture --vmcore "$W/v64a.core" --output "$W/$n.img" ${v#*:}
	rc_is 0
	K save "$W/$n.img" --output "$W/$n.elf" --format elf
	rc_is 0
done
for n in t1 t2 t2mm t1mm t3; do "$PY" "$CHUNKS" --pages "$W/$n.img" >"$W/$n.pages"; done
ck "no PAGES chunk listed: test premise" test -s "$W/t1.pages"
ck "--threads 2 stores other PAGES chunks than --threads 1" cmp "$W/t1.pages" "$W/t2.pages"
ck "--mmap stores other PAGES chunks" cmp "$W/t1.pages" "$W/t2mm.pages"
ck "--threads 1 --mmap stores other PAGES chunks" cmp "$W/t1.pages" "$W/t1mm.pages"
ck "--threads 3 stores other PAGES chunks" cmp "$W/t1.pages" "$W/t3.pages"
ck "--threads 1 and --threads 2 saves differ" cmp "$W/t1.elf" "$W/t2.elf"
ck "--mmap save differs" cmp "$W/t1.elf" "$W/t2mm.elf"
ck "--threads 1 --mmap save differs" cmp "$W/t1.elf" "$W/t1mm.elf"
vc "$W/v64a.core" "$W/t2.elf"
K capture --vmcore "$W/v64a.core" --output "$W/mm.img" --mmap
err_has 'MiB mmap windows'
K capture --vmcore "$W/v64a.core" --output "$W/pr.img"
err_has 'pread into the stage'
end; fi

# The optional steps run only once START, the settings and the log are on
# the device, and a STEPS record says what they did, before the pages. A
# step past its budget in work (test hook finder-budget=N: the finder's, in
# kmem's units) is dropped whole, said on the console and in the dump, and
# costs only the order: the saved dump is byte for byte the same.
if begin A.finder_over_budget_dropped_same_dump; then
x "$MKVMCORE" -o "$W/bud.core" --mm 6.12 --mem 128M --seed 7
rc_is 0
K capture --vmcore "$W/bud.core" --output "$W/bud-full.img" --level 31
rc_is 0
err_has 'debugger pages first: [0-9]* pages .*the search took [0-9.]*% of its budget'
x env KDUMPINIT_TEST_HOOK=finder-budget=40 "$KDUMPINIT" capture --vmcore "$W/bud.core" \
	--output "$W/bud-cut.img" --level 31
rc_is 0
err_has "the debugger's pages: dropped, past the search's budget"
ck_not "a dropped step still printed the finder's line" grep -q 'debugger pages first' "$W/err"
K info "$W/bud-cut.img"
rc_is 0
out_has '^steps *attempt 1, one dropped'
out_has "dropped, past the search's budget"
K info "$W/bud-full.img"
out_has "^steps *attempt 1, the debugger's pages first"
K save "$W/bud-full.img" --output "$W/bud-full.elf" --format elf
rc_is 0
K save "$W/bud-cut.img" --output "$W/bud-cut.elf" --format elf
rc_is 0
ck "the dump without the finder saves other bytes" cmp "$W/bud-full.elf" "$W/bud-cut.elf"
# Stream order: every metadata chunk, then STEPS, then DEBUGGER (with the
# finder), then the pages.
for n in full cut; do
	"$PY" "$CHUNKS" "$W/bud-$n.img" | awk '{print $2}' | tr '\n' ' ' >"$W/bud-$n.types"
done
ck "full: not START CHAIN NOTES VMCOREINFO SEGMENTS [SETTINGS] [DMESG] STEPS DEBUGGER PAGES: $(cat "$W/bud-full.types")" \
	grep -qE '^1 11 2 3 4 (9 )?(6 )?14 12 5 ' "$W/bud-full.types"
ck "cut: not START CHAIN NOTES VMCOREINFO SEGMENTS [SETTINGS] [DMESG] STEPS PAGES: $(cat "$W/bud-cut.types")" \
	grep -qE '^1 11 2 3 4 (9 )?(6 )?14 5 ' "$W/bud-cut.types"
end; fi

# More workers than CPUs only take turns on them: the plan runs no more
# than the CPUs the process may use (a kdumpinit.threads set too high must
# not slow the dump), unless --oversubscribe; the bytes are the same.
if begin A.threads_capped_at_cpus; then
ncpu=$(nproc)
K capture --vmcore "$W/v64a.core" --output "$W/cap.img" --threads 64
rc_is 0
ck "64 asked on $ncpu CPUs: the plan does not say $ncpu workers (of 64 asked: $ncpu CPUs)" \
	grep -qE "plan: .* $ncpu workers? \(of 64 asked: $ncpu CPUs\)" "$W/out" "$W/err"
if command -v taskset >/dev/null; then
	x taskset -c 0 "$KDUMPINIT" capture --vmcore "$W/v64a.core" --output "$W/cap1.img" --threads 2
	rc_is 0
	ck "taskset to one CPU: the plan does not say 1 worker (of 2 asked: 1 CPUs)" \
		grep -qE "plan: .* 1 worker \(of 2 asked: 1 CPUs\)" "$W/out" "$W/err"
fi
K capture --vmcore "$W/v64a.core" --output "$W/over.img" --threads 5 --oversubscribe
rc_is 0
ck "--oversubscribe: the plan does not run the 5 workers asked" grep -qE "plan: .* 5 workers," "$W/out" "$W/err"
"$PY" "$CHUNKS" --pages "$W/cap.img" >"$W/cap.pages"
"$PY" "$CHUNKS" --pages "$W/over.img" >"$W/over.pages"
ck "the capped capture stores other PAGES chunks than --threads 1" cmp "$W/t1.pages" "$W/cap.pages"
ck "5 oversubscribed workers store other PAGES chunks than --threads 1" cmp "$W/t1.pages" "$W/over.pages"
end; fi

if begin A.recapture_same_target; then
K format "$W/re.img" --size 48M --label again
rc_is 0
K capture --vmcore "$W/v64.core" --output "$W/re.img"
rc_is 0
cp --sparse=always "$W/re.img" "$W/re-first.img"
big_end=$(stream_end "$W/re.img")
# Saved, so the next capture writes over it from the start (an unsaved
# dump would be kept, and the next one written after it).
K save "$W/re.img" --dir "$W/re-saved"
rc_is 0
K capture --vmcore "$W/v16.core" --output "$W/re.img"
rc_is 0
small_end=$(stream_end "$W/re.img")
ck "second dump ($small_end) not shorter than the first ($big_end): test premise" \
	test "$small_end" -lt "$big_end"
K info "$W/re.img"
rc_is 0
out_has '^state +complete'
out_has 'kernel +6\.1\.0-small'
K save "$W/re.img" --output "$W/re.elf" --format elf
rc_is 0
vc "$W/v16.core" "$W/re.elf"
ck_not "save of the second dump matches the first vmcore" vmcmp "$W/v64.core" "$W/re.elf"
end; fi

# The second dump cut short where its END was, with a chunk of the first
# dump right there: the reader must stop, not take the old chunk.
if begin A.recapture_stale_chunk_ignored; then
end_off=$("$PY" "$CHUNKS" "$W/re.img" | awk '$2 == 7 { print $1 }')
old=$("$PY" "$CHUNKS" "$W/re-first.img" | awk '$2 == 5 { n++; if (n == 2) print $1, $3 }')
ck "no END in the second dump or no PAGES in the first" test -n "$end_off" -a -n "$old"
if [ -n "$end_off" ] && [ -n "$old" ]; then
	cp --sparse=always "$W/re.img" "$W/stale.img"
	set -- $old
	copy_at "$W/re-first.img" "$1" $((48 + $2)) "$W/stale.img" "$end_off"
	K info "$W/stale.img"
	rc_is 5
	out_has '^state +incomplete'
	out_has 'another|older'
	K save "$W/stale.img" --output "$W/stale.elf" --format elf
	rc_is 5
	present "$W/stale.elf"
	pc "$W/v16.core" "$W/stale.elf" --require all
fi
end; fi

# More than 65534 program headers on both sides: the vmcore and the saved
# ELF use extended numbering (e_phnum = PN_XNUM, the count in section 0).
if begin A.pn_xnum_many_segments; then
mk -o "$W/xnum.core" --mem 256M --segments 65535 --sparse-gap 4K --seed 8 --zero-pct 90
K capture --vmcore "$W/xnum.core" --output "$W/xnum.img"
rc_is 0
K info "$W/xnum.img"
rc_is 0
out_has 'in 65535 segments'
K save "$W/xnum.img" --output "$W/xnum.elf" --format elf
rc_is 0
ck "the saved ELF does not use PN_XNUM" "$PY" -c 'import struct, sys
sys.exit(struct.unpack_from("<H", open(sys.argv[1], "rb").read(64), 56)[0] != 0xffff)' "$W/xnum.elf"
vc "$W/xnum.core" "$W/xnum.elf"
rm -f "$W/xnum.core" "$W/xnum.img" "$W/xnum.elf"
end; fi

# dmesg reads every file kdumpinit writes, as the device and the vmcore
# give the log: the saved ELF, whose pages the dump left out are zero fill
# (p_filesz < p_memsz: --ring-zero-pages puts three of the ring's pages
# there, so the ring is read across it; before, "no log: Bad address"),
# and the kdump-compressed file, zlib and raw ("unrecognised data").
if begin A.dmesg_reads_saved_files; then
mk -o "$W/ring.core" --arch arm64 --mm 6.12 --mem 64M --seed 7 --ring-zero-pages
K capture --vmcore "$W/ring.core" --output "$W/ring.img" --level 31
rc_is 0
K dmesg "$W/ring.core"
rc_is 0
cp "$W/out" "$W/ring.log"
ck "the vmcore's log lacks its last record" grep -q 'Kernel panic - not syncing' "$W/ring.log"
ck "the vmcore's log is not its 5 records" test "$(grep -c '^\[' "$W/ring.log")" = 5
K dmesg "$W/ring.img"
rc_is 0
ck "the device's log is not the vmcore's" cmp "$W/out" "$W/ring.log"
for f in "elf:--format elf" "kdump:--format kdump" "raw:--compress none"; do
	n=${f%%:*}
	# shellcheck disable=SC2086
	K save "$W/ring.img" --output "$W/ring.$n" ${f#*:}
	rc_is 0
	K dmesg "$W/ring.$n"
	rc_is 0
	ck "dmesg of the saved $n file is not the device's log" cmp "$W/out" "$W/ring.log"
done
end; fi

# A kdump-compressed file that does not read says so, as such (3), and
# one cut short reads what it holds: here not the log's pages.
if begin B.dmesg_kdump_damaged; then
mk -o "$W/kd.core" --arch arm64 --mm 6.12 --mem 64M --seed 7
K capture --vmcore "$W/kd.core" --output "$W/kd.img"
rc_is 0
K save "$W/kd.img" --output "$W/kd.kdump"
rc_is 0
cp "$W/kd.kdump" "$W/kdbs.kdump"
# block_size (offset 428) 0x1234: not a page size
printf '\x34\x12\x00\x00' | dd of="$W/kdbs.kdump" bs=1 seek=428 conv=notrunc status=none
K dmesg "$W/kdbs.kdump"
rc_is 3
err_has 'kdbs.kdump is a kdump-compressed file whose headers do not read'
ck "stdout not empty" test ! -s "$W/out"
cp "$W/kd.kdump" "$W/kdlzo.kdump"
# status (offset 424) with LZO's bit (0x2), as makedumpfile -l writes it
printf '\x03' | dd of="$W/kdlzo.kdump" bs=1 seek=424 conv=notrunc status=none
K dmesg "$W/kdlzo.kdump"
rc_is 3
err_has 'kdlzo.kdump is a kdump-compressed file whose pages are compressed with LZO, snappy or zstd'
cp "$W/kd.kdump" "$W/kdcut.kdump"
truncate -s 128K "$W/kdcut.kdump"
K dmesg "$W/kdcut.kdump"
rc_is 3
err_has 'not in the dump'
K capture --vmcore "$W/kd.kdump" --output "$W/kd2.img"
rc_is 3
err_has 'kd.kdump is a kdump-compressed file, not an ELF vmcore'
absent "$W/kd2.img"
end; fi

# ================= B. bad input =================

# bad NAME VMCORE KEYWORD: capture refuses with 3, says why, creates nothing.
bad() {
	if begin "B.$1"; then
	K capture --vmcore "$2" --output "$W/bad-$1.img"
	rc_is 3
	err_has "$3"
	absent "$W/bad-$1.img"
	end; fi
}
bad vmcore_missing "$W/no-such.core" 'does not exist|missing|no such'
mkdir -p "$W/adir-vmcore"
printf 'this is not a vmcore\n' >"$W/text.core"
bad not_elf "$W/text.core" 'not an ELF'
bad elf_not_core_bin_true /bin/true 'not a core|ET_CORE'
printf '' >"$W/empty.core"
bad empty_file "$W/empty.core" 'not an ELF|empty|short'
# A directory or a character device is "not a vmcore" (3), not a system
# error (1) with "Block device required".
bad vmcore_is_directory "$W/adir-vmcore" 'directory|regular file|not a vmcore|not an ELF'
bad vmcore_is_dev_null /dev/null 'regular file|not a vmcore|not an ELF|character device'
if begin B.mkvmcore_bad_inputs; then
mk -o "$W/exec.core" --mem 4M --bad exec
mk -o "$W/novmci.core" --mem 4M --bad no-vmcoreinfo
mk -o "$W/short.core" --mem 4M --bad short-header
mk -o "$W/badphdr.core" --mem 4M --bad badphdr
end; fi
bad elf_exec "$W/exec.core" 'not a core|ET_CORE'
bad no_vmcoreinfo "$W/novmci.core" 'VMCOREINFO'
bad short_header "$W/short.core" 'not an ELF|header|short|truncat'
# The reason reads after "FILE is" (it said "is program headers are ...").
bad badphdr "$W/badphdr.core" 'badphdr.core is a core file whose program headers are unreadable'
if begin B.mkvmcore_no_loads; then
mk -o "$W/noload.core" --mem 4M --segments 2
ck "forge" "$PY" "$FORGE" "$W/noload.core" phdr 1 type=0
ck "forge" "$PY" "$FORGE" "$W/noload.core" phdr 2 type=0
end; fi
bad no_loads "$W/noload.core" 'noload.core is a core file in which no PT_LOAD segment holds memory'
# Unreadable: as root every file is readable, so drop to nobody for it.
if begin B.unreadable_vmcore; then
printf x >"$W/noperm.core"
chmod 000 "$W/noperm.core"
if [ "$(id -u)" -ne 0 ]; then
	K capture --vmcore "$W/noperm.core" --output "$W/np.img"
elif command -v setpriv >/dev/null; then
	x setpriv --reuid=65534 --regid=65534 --clear-groups "$KDUMPINIT" capture \
		--vmcore "$W/noperm.core" --output "$W/np.img"
fi
if [ "$(id -u)" -ne 0 ] || command -v setpriv >/dev/null; then
	rc_is 3
	err_has 'permission'
	absent "$W/np.img"
	end
else
	skip B.unreadable_vmcore "root without setpriv: a mode-000 file is readable"
fi; fi

if begin B.truncated_vmcore; then
mk -o "$W/trunc.core" --mem 32M --bad truncate --seed 6
K capture --vmcore "$W/trunc.core" --output "$W/trunc.img"
rc_is 5
err_has 'shorter|truncat'
K info "$W/trunc.img"
rc_is 5
out_has '^state +incomplete'
out_has 'truncated'
K save "$W/trunc.img" --output "$W/trunc.elf" --format elf
rc_is 5
present "$W/trunc.elf"
pc "$W/trunc.core" "$W/trunc.elf" --require all --min 1000
end; fi

# PT_LOADs that the reader's segment rule (FORMAT.md SEGMENTS) rejects:
# a virtual range that wraps, a physical one past 2^56 or wholly above
# it. The capture repairs or drops them, says so, and the dump it writes
# reads back complete (it used to be "dump complete", then "chunk 3
# (type 4) is malformed" for info and save, everything lost).
if begin B.vmcore_segments_invalid; then
mk -o "$W/segbad.core" --mem 16M --segments 4 --seed 3
cp "$W/segbad.core" "$W/segfix.core"
ck "forge" "$PY" "$FORGE" "$W/segbad.core" phdr 2 'vaddr=2**64-4096*4'
ck "forge" "$PY" "$FORGE" "$W/segbad.core" phdr 3 'paddr=2**56-4096*8'
ck "forge" "$PY" "$FORGE" "$W/segbad.core" phdr 4 'paddr=2**57'
# What the capture keeps: header 2 without a vaddr, 3 and 4 gone.
ck "forge" "$PY" "$FORGE" "$W/segfix.core" phdr 2 vaddr=0
ck "forge" "$PY" "$FORGE" "$W/segfix.core" phdr 3 type=0
ck "forge" "$PY" "$FORGE" "$W/segfix.core" phdr 4 type=0
K format "$W/segbad.img" --size 64M
rc_is 0
K capture --vmcore "$W/segbad.core" --output "$W/segbad.img"
rc_is 0
err_has 'program header 2 .*wraps: kept without a virtual address'
err_has 'program header 3 .*2\^56.*left out'
err_has 'program header 4 .*2\^56.*left out'
err_has 'dump complete'
K info "$W/segbad.img"
rc_is 0
out_has '^state +complete'
out_has 'in 2 segments'
K save "$W/segbad.img" --output "$W/segbad.kdump"
rc_is 0
K save "$W/segbad.img" --output "$W/segbad.elf" --format elf
rc_is 0
pc "$W/segfix.core" "$W/segbad.elf" --require all
end; fi

# The notes go into one NOTES chunk (at most 64 MiB): a vmcore whose
# PT_NOTEs add up to more used to fail the capture with "File too large",
# no dump at all. The note that does not fit is left out, and said.
if begin B.vmcore_notes_over_a_chunk; then
mk -o "$W/bignote.core" --mem 4M --segments 2
bnsz=$(fsize "$W/bignote.core")
ck "truncate" truncate -s $((bnsz + (64 << 20))) "$W/bignote.core"
ck "forge" "$PY" "$FORGE" "$W/bignote.core" phdr 2 type=4 offset=$bnsz filesz=$((64 << 20)) memsz=$((64 << 20))
K format "$W/bignote.img" --size 32M
rc_is 0
K capture --vmcore "$W/bignote.core" --output "$W/bignote.img"
rc_is 0
err_has 'program header 2 \(PT_NOTE.*left out'
K info "$W/bignote.img"
rc_is 0
out_has '^state +complete'
end; fi

# ================= C. targets =================

if begin C.unclaimed_zero_file; then
truncate -s 32M "$W/zero.img"
K capture --vmcore "$W/v16.core" --output "$W/zero.img"
rc_is 4
err_has 'claim'
err_has 'format'
ck "the unclaimed file was written to" cmp -n 33554432 "$W/zero.img" /dev/zero
ck "the unclaimed file changed size" test "$(fsize "$W/zero.img")" -eq 33554432
K info "$W/zero.img"
rc_is 4
K save "$W/zero.img" --output "$W/zero.elf" --format elf
rc_is 4
absent "$W/zero.elf"
end; fi

if begin C.output_is_directory; then
mkdir -p "$W/adir"
K capture --vmcore "$W/v16.core" --output "$W/adir"
rc_is 4
err_has 'directory|not a|neither'
end; fi

if begin C.output_is_dev_null; then
K capture --vmcore "$W/v16.core" --output /dev/null
rc_is 4
err_has 'neither|block device|regular file'
end; fi

# CLI.md: 4 is "target refused or not found: ... not a dump"; 1 is for an
# I/O or system error.
if begin C.source_is_dev_null; then
K info /dev/null
rc_is 4
err_has 'neither|not a dump|regular file'
K save /dev/null --output "$W/null.elf" --format elf
rc_is 4
absent "$W/null.elf"
end; fi

# Any input that is not a regular file or a block device is refused at
# once, said as what it is: a FIFO (before, info and capture --vmcore
# waited in open() for a writer, for ever), a socket, a character device.
# Each command that opens one, under a bound of 10 s: 124 is a hang.
if begin C.inputs_not_files_refused_at_once; then
rm -f "$W/nf.fifo" "$W/nf.sock"
ck "mkfifo" mkfifo "$W/nf.fifo"
ck "no unix socket made" "$PY" -c 'import socket, sys
socket.socket(socket.AF_UNIX).bind(sys.argv[1])' "$W/nf.sock"
XT=10
for p in "$W/nf.fifo:a FIFO \\(named pipe\\)" "$W/nf.sock:a socket" "/dev/null:a character device"; do
	f=${p%%:*} kind=${p#*:}
	said="$f is $kind, not a regular file or block device"
	for c in info dmesg; do
		K "$c" "$f"
		rc_is 4
		err_has "$said"
	done
	K save "$f" --output "$W/nf.elf" --format elf
	rc_is 4
	err_has "$said"
	absent "$W/nf.elf"
	K save "$f" --dir "$W/nf.dir"
	rc_is 4
	err_has "$said"
	K save "$f" --check
	rc_is 4
	K status --dev "$f"
	ck "status --dev $f: ${RC} (124: it hung)" test "$RC" -ne 124
	out_has "$said"
	K capture --vmcore "$f" --output "$W/nf.img"
	rc_is 3
	err_has "$said: nothing captured"
	absent "$W/nf.img"
	K capture --vmcore "$W/v16.core" --output "$f"
	rc_is 4
	err_has "$said"
	K format "$f"
	rc_is 4
	err_has "$said"
done
XT=
end; fi

if begin C.claimed_then_mkfs_ext4; then
K format "$W/ow.img" --size 32M
rc_is 0
ck "mkfs.ext4 failed" mkfs.ext4 -q -F "$W/ow.img"
K capture --vmcore "$W/v16.core" --output "$W/ow.img"
rc_is 4
err_has 'ext2/3/4'
K info "$W/ow.img"
rc_is 4
err_has 'ext2/3/4'
K save "$W/ow.img" --output "$W/ow.elf" --format elf
rc_is 4
err_has 'ext2/3/4'
absent "$W/ow.elf"
end; fi

# Claimed, then something without a known signature lands in the first
# 128 KiB (FORMAT.md: refused, someone wrote there since the claim).
if begin C.claimed_then_overwritten_data; then
K format "$W/ow2.img" --size 16M
rc_is 0
printf 'somebody else' | dd of="$W/ow2.img" bs=1 seek=70000 conv=notrunc status=none
K capture --vmcore "$W/v16.core" --output "$W/ow2.img"
rc_is 4
err_has 'other data|written'
end; fi

# foreign KIND SIZE KEYWORD MAKER...: an image holding something else.
foreign() {
	local kind=$1 size=$2 kw=$3
	shift 3
	local img=$W/f-$kind.img
	if begin "C.foreign_$kind"; then
	rm -f "$img"
	truncate -s "$size" "$img"
	if ! "$@" "$img" >>"$LOG" 2>&1 </dev/null; then
		skip "C.foreign_$kind" "could not make the image here ($*): $(tail -n 1 "$LOG" | cut -c1-120)"
		return
	fi
	local sum
	sum=$(headsum "$img")
	K format "$img"
	rc_is 4
	err_has "$kw"
	err_has 'force'
	K capture --vmcore "$W/v16.core" --output "$img"
	rc_is 4
	err_has "$kw"
	ck "the $kind image was modified by a refused format/capture" test "$(headsum "$img")" = "$sum"
	K format "$img" --force --label "was-$kind"
	rc_is 0
	K capture --vmcore "$W/v16.core" --output "$img"
	rc_is 0
	K info "$img"
	rc_is 0
	out_has '^state +complete'
	out_has "label was-$kind"
	end; fi
}
mkext4() { mkfs.ext4 -q -F "$1"; }
mkxfs() { mkfs.xfs -q -f "$1"; }
mkbtrfs() { mkfs.btrfs -q -f "$1"; }
mkswp() { chmod 600 "$1" && mkswap "$1"; }
mkluks() {
	head -c 32 /dev/urandom >"$W/luks.key" &&
		cryptsetup luksFormat --type luks2 --pbkdf pbkdf2 --pbkdf-force-iterations 1000 \
			--batch-mode --key-file "$W/luks.key" "$1"
}
mkmbr() { printf 'label: dos\nlabel-id: 0x1a2b3c4d\n,8M,83\n' | sfdisk -q "$1"; }
mkgpt() { printf 'label: gpt\nsize=8M, name="kdump part"\n' | sfdisk -q "$1"; }
mkrandom() { head -c 65536 /dev/urandom | dd of="$1" conv=notrunc status=none; }
foreign ext4 32M 'ext2/3/4' mkext4
foreign xfs 320M 'xfs' mkxfs
foreign btrfs 128M 'btrfs' mkbtrfs
foreign swap 32M 'swap' mkswp
foreign luks 32M 'luks' mkluks
foreign mbr 32M 'mbr|partition' mkmbr
foreign gpt 32M 'gpt' mkgpt
foreign random 32M 'unrecognised' mkrandom

# Signatures at the end of a device (MD 0.90 and 1.0, DDF, IMSM, the GPT
# backup header): refused by format, and on a claimed image that gets one
# afterwards, by every capture. mdadm --create needs the md driver, so the
# superblocks are written by devsig.py; blkid -p must agree they are there.
endsig() {	# KIND KEYWORD BLKID-TYPE (empty: blkid does not report it alone)
	local kind=$1 kw=$2 type=$3 img=$W/end-$1.img
	if begin "C.end_signature_$kind"; then
	rm -f "$img"
	truncate -s 300M "$img"
	ck "devsig.py end $kind failed" "$PY" "$DEVSIG" end "$kind" "$img"
	if [ -n "$type" ] && command -v blkid >/dev/null; then
		ck "blkid -p does not see $type: test premise" sh -c "blkid -p -o value -s TYPE '$img' | grep -qx '$type'"
	fi
	local sum
	sum=$(headsum "$img")
	K format "$img"
	rc_is 4
	err_has "$kw"
	err_has 'force'
	ck "a refused format modified the $kind image" test "$(headsum "$img")" = "$sum"
	K format "$img" --force
	rc_is 0
	if [ -n "$type" ] && command -v blkid >/dev/null; then
		ck "format --force left the $type signature" sh -c "! blkid -p -o value -s TYPE '$img' | grep -qx '$type'"
	fi
	K capture --vmcore "$W/v16.core" --output "$img"
	rc_is 0
	# Claimed and captured to, then the signature arrives at the end.
	ck "devsig.py end $kind failed" "$PY" "$DEVSIG" end "$kind" "$img"
	sum=$(headsum "$img")
	K capture --vmcore "$W/v16.core" --output "$img"
	rc_is 4
	err_has "$kw"
	ck "a refused capture modified the $kind image" test "$(headsum "$img")" = "$sum"
	end; fi
}
endsig md1.0 'MD RAID member \(1\.0' linux_raid_member
endsig md0.90 'MD RAID member \(0\.90' linux_raid_member
endsig ddf 'DDF' ddf_raid_member
endsig imsm 'IMSM' isw_raid_member
endsig gpt 'GPT.*backup' ''
endsig gpt4k 'GPT.*backup' ''

# Bytes 448..128 KiB of a claimed device are what format wrote: zeros. A
# filesystem with its superblock at 1 KiB that is not on the signature
# list (minix here, made by mkfs.minix; nilfs2 and HFS+ alike) shows as
# data written since the claim, before every capture.
if begin C.claimed_then_superblock_at_1k; then
K format "$W/sb1k.img" --size 32M
rc_is 0
truncate -s 32M "$W/minix.img"
if command -v mkfs.minix >/dev/null && mkfs.minix "$W/minix.img" >>"$LOG" 2>&1; then
	copy_at "$W/minix.img" 1024 1024 "$W/sb1k.img" 1024
else
	printf '\x7f\x13' | dd of="$W/sb1k.img" bs=1 seek=1040 conv=notrunc status=none
fi
sum=$(headsum "$W/sb1k.img")
K capture --vmcore "$W/v16.core" --output "$W/sb1k.img"
rc_is 4
err_has 'non-zero byte at offset 10[0-9][0-9]'
err_has 'written to it'
ck "a refused capture modified the image" test "$(headsum "$W/sb1k.img")" = "$sum"
# The first byte after the 448-byte superblock counts too.
K format "$W/sb448.img" --size 8M
rc_is 0
printf '\x01' | dd of="$W/sb448.img" bs=1 seek=448 conv=notrunc status=none
K capture --vmcore "$W/v16.core" --output "$W/sb448.img"
rc_is 4
err_has 'offset 448'
end; fi

# data_offset: one rule (FORMAT.md), checked when the superblock is read.
# 4096 would put the stream inside the head the gate keeps zero; past the
# device's end there is no stream at all (info printed a capacity of
# 18446744072702.9 MB).
if begin C.data_offset_rule; then
for off in 4096 65536 $((64 << 20)); do
	K format "$W/doff.img" --size 8M --force
	rc_is 0
	ck "devsig.py reoffset failed" "$PY" "$DEVSIG" reoffset "$W/doff.img" "$off"
	K info "$W/doff.img"
	rc_is 4
	err_has 'damaged'
	NCHK=$((NCHK + 1))
	! grep -q 'capacity' "$W/out" || failed "info printed $(grep capacity "$W/out") for data_offset $off"
	K capture --vmcore "$W/v16.core" --output "$W/doff.img"
	rc_is 4
	err_has 'damaged'
done
# The lowest accepted offset takes a capture, and the next one too (the
# first capture's stream is not "data written since the claim"; the
# device has no room for a second dump, so it is written over the first).
K format "$W/doff.img" --size 8M --force
rc_is 0
ck "devsig.py reoffset failed" "$PY" "$DEVSIG" reoffset "$W/doff.img" $((128 << 10))
K capture --vmcore "$W/v16.core" --output "$W/doff.img"
rc_is 0
K capture --vmcore "$W/v16.core" --output "$W/doff.img" --full overwrite
rc_is 0
K info "$W/doff.img"
rc_is 0
out_has 'capacity +7\.9 MiB'
out_has '^state +complete'
end; fi

if begin C.format_claimed_refused; then
K format "$W/twice.img" --size 8M
rc_is 0
uuid1=$(grep -oE '[0-9a-f]{8}-[0-9a-f-]{27}' "$W/out" | head -1)
K format "$W/twice.img"
rc_is 4
err_has 'already claimed'
K format "$W/twice.img" --force
rc_is 0
uuid2=$(grep -oE '[0-9a-f]{8}-[0-9a-f-]{27}' "$W/out" | head -1)
ck "format --force kept the UUID ($uuid1 / $uuid2)" test -n "$uuid1" -a -n "$uuid2" -a "$uuid1" != "$uuid2"
K info "$W/twice.img"
rc_is 4
out_has "$uuid2"
out_has '^state +empty'
end; fi

if begin C.save_keeps_existing_output; then
printf 'precious\n' >"$W/keep.elf"
K save "$W/l31.img" --output "$W/keep.elf" --format elf
rc_is 2
err_has 'exists'
ck "save overwrote an existing file" grep -q precious "$W/keep.elf"
K save "$W/l31.img" --output "$W/keep.elf" --force --format elf
rc_is 0
vc "$W/v64.core" "$W/keep.elf"
ck "save left temporary files behind" sh -c "! ls '$W'/keep.elf.partial-* 2>/dev/null | grep -q ."
end; fi

# sig_run SIG GLOB COMMAND...: runs COMMAND (SIGINT and SIGHUP at their
# defaults, as from a terminal: a script's background job has SIGINT
# ignored, and kdumpinit leaves an ignored signal ignored), sends SIG
# once a file GLOB names holds 1 MiB, and waits at most 30 s. RC: 128 + N
# for death by signal N, the exit code, 124 still running (killed), 125
# never reached 1 MiB (SIG not sent).
sig_run() {
	local sig=$1 glob=$2
	shift 2
	LAST="${1##*/} $2 (SIG$sig)"
	"$PY" - "$sig" "$glob" "$@" >"$W/out" 2>"$W/err" <<'PYEOF'
import glob, os, signal, subprocess, sys, time
sig, pat, cmd = getattr(signal, "SIG" + sys.argv[1]), sys.argv[2], sys.argv[3:]
def dfl():
    for s in (signal.SIGINT, signal.SIGHUP, signal.SIGTERM):
        signal.signal(s, signal.SIG_DFL)
p = subprocess.Popen(cmd, preexec_fn=dfl, stdin=subprocess.DEVNULL)
sent = False
for _ in range(3000):
    if p.poll() is not None:
        break
    if any(os.path.getsize(f) >= 1 << 20 for f in glob.glob(pat) if os.path.isfile(f)):
        p.send_signal(sig)
        sent = True
        break
    time.sleep(0.01)
try:
    rc = p.wait(30)
except subprocess.TimeoutExpired:
    p.kill(); p.wait()
    sys.exit(124)
sys.exit(125 if not sent else 128 - rc if rc < 0 else rc)
PYEOF
	RC=$?
	{
		echo "+ $* (SIG$sig at 1 MiB of $glob) -> exit $RC"
		sed 's/^/  ! /' "$W/err" | head -40
	} >>"$LOG"
}

# An interrupted save leaves nothing: SIGINT, SIGTERM and SIGHUP remove
# the temporary output and end save by the signal (130, 143, 129); the
# device's dump is not marked saved. Before, OUTPUT.partial-XXXXXX stayed.
if begin C.save_signal_removes_partial; then
mk -o "$W/sig.core" --mem 256M --zero-pct 0 --seed 9
K capture --vmcore "$W/sig.core" --output "$W/sig.img" --level 0
rc_is 0
for s in INT:130 TERM:143 HUP:129; do
	sig_run "${s%%:*}" "$W/sig-${s%%:*}.kdump.partial-*" \
		"$KDUMPINIT" save "$W/sig.img" --output "$W/sig-${s%%:*}.kdump" --threads 1
	rc_is "${s#*:}"
	ck "SIG${s%%:*}: a partial file stayed" sh -c "! ls '$W'/sig-${s%%:*}.kdump.partial-* 2>/dev/null | grep -q ."
	absent "$W/sig-${s%%:*}.kdump"
done
mkdir -m 700 "$W/sigdir"
sig_run INT "$W/sigdir/*.partial/.vmcore.tmp" \
	"$KDUMPINIT" save "$W/sig.img" --dir "$W/sigdir" --threads 1
rc_is 130
ck "save --dir left a directory or lock behind: $(ls -A "$W/sigdir" | tr '\n' ' ')" \
	test -z "$(ls -A "$W/sigdir" | grep -v '^\.kdumpinit\.lock$')"
K status --dev "$W/sig.img"
out_has 'not saved yet'
end; fi

# What a save killed where it could not clean up (SIGKILL) left is named
# and removed by the next save of the same output: only a regular file of
# ours, named as save names them, never through a link, and none a save
# still writes (it holds an flock); save --dir the same for NAME.partial.
if begin C.save_removes_leftovers; then
mk -o "$W/lo.core" --mem 256M --zero-pct 0 --seed 9
K capture --vmcore "$W/lo.core" --output "$W/lo.img" --level 0
rc_is 0
sig_run KILL "$W/lo.kdump.partial-*" "$KDUMPINIT" save "$W/lo.img" --output "$W/lo.kdump" --threads 1
rc_is 137
left=$(ls "$W"/lo.kdump.partial-* 2>/dev/null)
ck "SIGKILL left no partial file: test premise" test -n "$left"
printf 'x' >"$W/lo.kdump.partial-Held42"
flock "$W/lo.kdump.partial-Held42" sleep 60 &
holder=$!
printf 'victim\n' >"$W/lo-victim"
ln -s "$W/lo-victim" "$W/lo.kdump.partial-Link42"
mkdir "$W/lo.kdump.partial-Dir042"
printf 'x' >"$W/lo.kdump.partial-Short"
printf 'x' >"$W/other.kdump.partial-Abc123"
for _ in $(seq 50); do flock -n "$W/lo.kdump.partial-Held42" true || break; sleep 0.1; done
K save "$W/lo.img" --output "$W/lo.kdump"
rc_is 0
err_has "removed $W/${left##*/} \([0-9.]+ MiB\), left by a save of $W/lo.kdump that did not finish"
absent "$left"
present "$W/lo.kdump"
ck "a partial a save holds (flock) was removed" test -e "$W/lo.kdump.partial-Held42"
ck "a link was removed or followed" test -L "$W/lo.kdump.partial-Link42" -a -s "$W/lo-victim"
ck "a directory was removed" test -d "$W/lo.kdump.partial-Dir042"
ck "a name save never makes was removed" test -e "$W/lo.kdump.partial-Short"
ck "another output's partial was removed" test -e "$W/other.kdump.partial-Abc123"
kill "$holder" 2>/dev/null
wait "$holder" 2>/dev/null
mkdir -m 700 "$W/lodir"
sig_run KILL "$W/lodir/*.partial/.vmcore.tmp" "$KDUMPINIT" save "$W/lo.img" --dir "$W/lodir" --threads 1
rc_is 137
part=$(ls -d "$W"/lodir/*.partial 2>/dev/null)
ck "SIGKILL left no NAME.partial: test premise" test -n "$part"
mkdir -m 700 "$W/lodir/other.partial"
printf 'mine\n' >"$W/lodir/other.partial/notes"
K save "$W/lo.img" --dir "$W/lodir"
rc_is 0
err_has "removed $W/lodir/${part##*/}, left by a save that did not finish"
err_has "other.partial, left by a save that did not finish, holds other files: not removed"
ck "a NAME.partial with other files in it was removed" test -s "$W/lodir/other.partial/notes"
ck "save --dir did not save" sh -c "ls '$W'/lodir/*/vmcore"
end; fi

if begin C.source_missing; then
K info "$W/no-such.img"
rc_is 4
err_has 'no such|not exist|not found'
K save "$W/no-such.img" --output "$W/no-such.elf" --format elf
rc_is 4
absent "$W/no-such.elf"
end; fi

if begin C.format_too_small_refused; then
truncate -s 1M "$W/onemeg.img"
K format "$W/onemeg.img"
rc_is 4
err_has 'at least'
present "$W/onemeg.img"		# not ours: left as it was
# A file format made itself goes again when format refuses it.
K format "$W/made.img" --size 1M
rc_is 4
err_has 'at least'
absent "$W/made.img"
end; fi

if begin C.target_too_small; then
K format "$W/small.img" --size 3M
rc_is 0
ck "format --size 3M made $(fsize "$W/small.img") bytes" test "$(fsize "$W/small.img")" -eq 3145728
K capture --vmcore "$W/v64.core" --output "$W/small.img"
rc_is 5
err_has 'too small|full'
ck "capture changed the target's size to $(fsize "$W/small.img")" test "$(fsize "$W/small.img")" -eq 3145728
K info "$W/small.img"
rc_is 5
out_has '^state +incomplete \(device was full\)'
K save "$W/small.img" --output "$W/small.elf" --format elf
rc_is 5
present "$W/small.elf"
pc "$W/v64.core" "$W/small.elf" --require prefix --early "$W/small.img" --min 100 --less
end; fi

# A block device is written with O_DIRECT and several writes in flight
# (capture/sink.c): the dump must hold the same pages as through the page
# cache, and a device that fills must still end in END, with the writes
# in flight at that moment accounted for.
if begin C.block_device_direct_io; then
loopdevs=
if [ "$(id -u)" = 0 ] && command -v losetup >/dev/null &&
	truncate -s 64M "$W/bd.img" && truncate -s 3M "$W/bds.img" &&
	bd=$(losetup -f --show "$W/bd.img" 2>/dev/null) && loopdevs=$bd &&
	bds=$(losetup -f --show "$W/bds.img" 2>/dev/null) && loopdevs="$bd $bds"; then
	K format "$bd" --force
	rc_is 0
	K capture --vmcore "$W/v64a.core" --output "$bd" --threads 2
	rc_is 0
	err_has 'direct I/O'
	K save "$bd" --output "$W/bd.elf" --format elf --keep-device
	rc_is 0
	K capture --vmcore "$W/v64a.core" --output "$W/bdf.img" --threads 1
	rc_is 0
	K save "$W/bdf.img" --output "$W/bdf.elf" --format elf
	rc_is 0
	ck "a block device holds other pages than a file" cmp "$W/bd.elf" "$W/bdf.elf"
	vc "$W/v64a.core" "$W/bd.elf"
	K format "$bds" --force
	rc_is 0
	K capture --vmcore "$W/v64.core" --output "$bds" --threads 2
	rc_is 5
	err_has 'direct I/O'
	err_has 'too small'
	K info "$bds"
	rc_is 5
	out_has '^state +incomplete \(device was full'
	K save "$bds" --output "$W/bds.elf" --format elf --keep-device
	rc_is 5
	pc "$W/v64.core" "$W/bds.elf" --require prefix --early "$bds" --min 100 --less
	end
else
	skip C.block_device_direct_io "no loop devices here (needs root and losetup)"
fi
for d in $loopdevs; do losetup -d "$d"; done
fi

# The dump is made durable as it goes, not only by the last fdatasync: a
# flush right after the metadata and the kernel log, one every 8 MiB
# from the flusher thread, and the final one. About 60 MB written here.
if begin C.flushed_as_it_goes; then
if command -v strace >/dev/null; then
	mk -o "$W/v256.core" --mem 256M --zero-pct 0 --seed 5
	x strace -f -qq -e trace=fdatasync -o "$W/flush.trace" "$KDUMPINIT" capture \
		--vmcore "$W/v256.core" --output "$W/fl.img" --level 0 --threads 2
	rc_is 0
	n=$(grep -c 'fdatasync(' "$W/flush.trace")
	ck "the capture wrote under 32 MB: test premise" test "$(stat -c %s "$W/fl.img")" -gt 32000000
	ck "only $n fdatasync calls for $(stat -c %s "$W/fl.img") bytes written" test "$n" -ge 4
	ck "a flush failed: $(grep -v '= 0$' "$W/flush.trace" | head -n 1)" test -z "$(grep 'fdatasync(' "$W/flush.trace" | grep -v '= 0$')"
	K save "$W/fl.img" --output "$W/fl.elf" --format elf
	rc_is 0
	vc "$W/v256.core" "$W/fl.elf"
	end
else
	skip C.flushed_as_it_goes "strace is not installed"
fi; fi

# A new output file on a filesystem that fills up: the file is allocated
# ahead of the stream, so the full filesystem shows before a write fails
# and END still fits, saying why the dump is incomplete.
if begin C.new_file_on_full_filesystem; then
mkdir -p "$W/mnt"
if timeout 10 unshare -m sh -c "mount -t tmpfs -o size=3M kdi-unit '$W/mnt'" >/dev/null 2>&1; then
	x unshare -m sh -c "mount -t tmpfs -o size=3M kdi-unit '$W/mnt' &&
		'$KDUMPINIT' capture --vmcore '$W/v32.core' --output '$W/mnt/new.img'; r=\$?;
		cp --sparse=always '$W/mnt/new.img' '$W/full.img'; exit \$r"
	rc_is 5
	err_has 'filesystem holding .* is full'
	K info "$W/full.img"
	rc_is 5
	out_has '^state +incomplete \(device was full'
	K save "$W/full.img" --output "$W/full.elf" --format elf
	rc_is 5
	pc "$W/v32.core" "$W/full.elf" --require prefix --early "$W/full.img" --min 100 --less
	end
else
	skip C.new_file_on_full_filesystem "cannot mount a tmpfs in a mount namespace here"
fi; fi

# A claimed file that format made sparse (--size) on a filesystem with
# less room than that: allocated ahead like a new file, so END still fits
# when the filesystem fills, and the file keeps its size.
if begin C.claimed_sparse_file_on_full_filesystem; then
mkdir -p "$W/mnt"
if timeout 10 unshare -m sh -c "mount -t tmpfs -o size=3M kdi-unit '$W/mnt'" >/dev/null 2>&1; then
	x unshare -m sh -c "mount -t tmpfs -o size=3M kdi-unit '$W/mnt' &&
		'$KDUMPINIT' format '$W/mnt/sparse.img' --size 32M &&
		'$KDUMPINIT' capture --vmcore '$W/v32.core' --output '$W/mnt/sparse.img'; r=\$?;
		cp --sparse=always '$W/mnt/sparse.img' '$W/sparse.img'; exit \$r"
	rc_is 5
	err_has 'filesystem holding .* is full'
	ck "the claimed file changed size" test "$(fsize "$W/sparse.img")" -eq 33554432
	K info "$W/sparse.img"
	rc_is 5
	out_has '^state +incomplete \(device was full\)'
	K save "$W/sparse.img" --output "$W/sparse.elf" --format elf
	rc_is 5
	pc "$W/v32.core" "$W/sparse.elf" --require prefix --early "$W/sparse.img" --min 100 --less
	end
else
	skip C.claimed_sparse_file_on_full_filesystem "cannot mount a tmpfs in a mount namespace here"
fi; fi

# ================= D. a damaged dump =================

if begin D.setup; then
K format "$W/d.img" --size 64M
rc_is 0
K capture --vmcore "$W/v32.core" --output "$W/d.img"
rc_is 0
dend=$(stream_end "$W/d.img")
ck "no stream on the dump ($dend)" test "${dend:-0}" -gt $((2 << 20))
end; fi

if begin D.flipped_byte_mid_stream; then
cp --sparse=always "$W/d.img" "$W/dflip.img"
flip "$W/dflip.img" $(((1 << 20) + (dend - (1 << 20)) / 2))
K info "$W/dflip.img"
rc_is 5
out_has '^state +incomplete'
out_has 'checksum|magic'
# Only the chunk the byte is in is lost: the reader goes on after it.
out_has '^lost +chunk [0-9]+ damaged'
kept1=$(sed -n 's/^pages kept *\([0-9]*\).*/\1/p' "$W/out")
K info "$W/d.img"
kept0=$(sed -n 's/^pages kept *\([0-9]*\).*/\1/p' "$W/out")
ck "one flipped byte lost more than one chunk (256 pages): kept ${kept1:-?} of ${kept0:-?}" \
	test -n "$kept1" -a -n "$kept0" -a "${kept1:-0}" -lt "${kept0:-0}" -a $((${kept0:-0} - ${kept1:-0})) -le 256
K save "$W/dflip.img" --output "$W/dflip.elf" --format elf
rc_is 5
err_has 'incomplete'
present "$W/dflip.elf"
pc "$W/v32.core" "$W/dflip.elf" --require some --min 100 --less
end; fi

# A zeroed START is a damaged dump, not an empty device: the reader opens
# the stream at the next intact chunk and saves everything else.
if begin D.zeroed_start_chunk; then
cp --sparse=always "$W/d.img" "$W/dzero.img"
dd if=/dev/zero of="$W/dzero.img" bs=128 seek=8192 count=1 conv=notrunc status=none
K info "$W/dzero.img"
rc_is 5
out_has '^state +incomplete'
out_has 'START'
K save "$W/dzero.img" --check
rc_is 0
K save "$W/dzero.img" --output "$W/dzero.elf" --format elf
rc_is 5
present "$W/dzero.elf"
pc "$W/v32.core" "$W/dzero.elf"
# A zeroed 4 KiB from START takes the metadata with it: still a dump to
# save, never "empty".
cp --sparse=always "$W/d.img" "$W/dzero4.img"
dd if=/dev/zero of="$W/dzero4.img" bs=4096 seek=256 count=1 conv=notrunc status=none
K info "$W/dzero4.img"
rc_is 5
out_has '^state +incomplete'
K save "$W/dzero4.img" --check
rc_is 0
end; fi

if begin D.truncated_dump_file; then
cp --sparse=always "$W/d.img" "$W/dcut.img"
truncate -s $(((1 << 20) + (dend - (1 << 20)) / 2)) "$W/dcut.img"
K info "$W/dcut.img"
rc_is 5
out_has '^state +incomplete'
K save "$W/dcut.img" --output "$W/dcut.elf" --format elf
rc_is 5
present "$W/dcut.elf"
pc "$W/v32.core" "$W/dcut.elf" --require prefix --early "$W/dcut.img" --min 100 --less
end; fi

if begin D.damaged_superblock; then
cp --sparse=always "$W/d.img" "$W/dsb.img"
flip "$W/dsb.img" 40
K info "$W/dsb.img"
rc_is 4
err_has 'damaged'
K save "$W/dsb.img" --output "$W/dsb.elf" --format elf
rc_is 4
absent "$W/dsb.elf"
K capture --vmcore "$W/v16.core" --output "$W/dsb.img"
rc_is 4
err_has 'damaged'
end; fi

# Forged dumps: every chunk intact (renumbered, hashes made right), but
# the stream is not what END counts. Each used to read as complete, rc 0,
# with pages missing (FORMAT.md END; dumpfile.c check_end).
forged() {	# NAME FORGE-ARGS... : info and save say incomplete, naming END
	local name=$1
	shift
	if begin "D.forged_$name"; then
	cp --sparse=always "$W/d.img" "$W/df-$name.img"
	ck "forge $*" "$PY" "$FORGE" "$W/df-$name.img" "$@"
	K info "$W/df-$name.img"
	rc_is 5
	out_has '^state +incomplete'
	out_has "END counts"
	K save "$W/df-$name.img" --output "$W/df-$name.elf" --format elf
	rc_is 5
	err_has 'incomplete.*END counts'
	present "$W/df-$name.elf"
	end; fi
}
forged pages_deleted delete-pages 1
forged early_end early-end 0
forged pages_as_pad retype-pages 1
forged pages_total_segment segment 1 'memsz=2**46' 'filesz=2**46'

# A segment of 2^46 bytes (2^34 pfns) the capture cannot have scanned:
# save --format kdump used to run a minute and write 4.3 GB of bitmaps.
# The kdump file ends where what the dump shows to be memory ends.
if begin D.forged_huge_segment_kdump_bounded; then
K save "$W/df-pages_total_segment.img" --output "$W/df-huge.kdump"
rc_is 5
err_has 'segments describe memory up to .* the kdump file ends there'
present "$W/df-huge.kdump"
ck "kdump file of $(fsize "$W/df-huge.kdump") bytes" test "$(fsize "$W/df-huge.kdump")" -lt $((64 << 20))
end; fi

if begin D.intact_copy_still_complete; then
K info "$W/d.img"
rc_is 0
K save "$W/d.img" --output "$W/d.elf" --format elf
rc_is 0
vc "$W/v32.core" "$W/d.elf"
end; fi

# ================= E. PID-1 mode in a PID namespace =================
# reboot(2) in a PID namespace ends its init: SIGHUP for a restart (exit
# 129), SIGINT for power off and halt (exit 130).

pid1_root() {	# DIR [CONF-TEXT]
	rm -rf "$1"
	mkdir -p "$1/proc" "$1/sys" "$1/dev" "$1/etc"
	cp "$KDUMPINIT" "$1/init"
	if [ $# -ge 2 ]; then printf '%s' "$2" >"$1/etc/kdumpinit.conf"; fi
}
pid1() {	# DIR: run it as PID 1, bounded
	LAST="pid1 $(basename "$1")"
	# (braces: the shell's own "Hangup" notice goes to the log)
	{ timeout 30 unshare -p -f -m --root="$1" /init >"$W/out" 2>"$W/err" </dev/null; RC=$?; } 2>>"$LOG"
	{
		echo "+ unshare -p -f -m --root=$1 /init -> exit $RC"
		sed 's/^/  ! /' "$W/err" | head -40
	} >>"$LOG"
	NCHK=$((NCHK + 1))
	[ "$RC" -ne 124 ] || failed "PID 1 hung (no final action within 30 s)"
}
every_line_tagged() {
	NCHK=$((NCHK + 1))
	if grep -v '^kdumpinit: ' "$W/err" | grep -q .; then
		failed "console lines without the 'kdumpinit:' prefix: $(grep -v '^kdumpinit: ' "$W/err" | head -2 | tr '\n' ' ')"
	fi
}

pid1_ok=1
if ! timeout 10 unshare -p -f -m true >/dev/null 2>&1; then
	pid1_ok=0
	skip E.pid1 "unshare -p -f -m does not work here (not root, or namespaces disabled)"
fi
if [ -e /proc/vmcore ]; then
	pid1_ok=0
	skip E.pid1 "this host has /proc/vmcore (a crash kernel?): the no-vmcore cases do not apply"
fi

if [ "$pid1_ok" -eq 1 ]; then
	if begin E.pid1_no_vmcore_reboot; then
	pid1_root "$W/r-reboot" $'# test\nfinal = reboot\n'
	pid1 "$W/r-reboot"
	rc_is 129
	err_has 'starting as PID 1'
	err_has '/proc/vmcore is missing'
	err_has 'final action: reboot'
	every_line_tagged
	end; fi

	if begin E.pid1_poweroff; then
	pid1_root "$W/r-poweroff" $'final = poweroff\n'
	pid1 "$W/r-poweroff"
	rc_is 130
	err_has 'vmcore is missing'
	err_has 'final action: poweroff'
	end; fi

	if begin E.pid1_halt; then
	pid1_root "$W/r-halt" $'kdumpinit.final = "halt"\n'
	pid1 "$W/r-halt"
	rc_is 130
	err_has 'final action: halt'
	end; fi

	if begin E.pid1_no_conf_defaults_to_reboot; then
	pid1_root "$W/r-noconf"
	pid1 "$W/r-noconf"
	rc_is 129
	err_has 'final action: reboot'
	NCHK=$((NCHK + 1))
	! grep -i 'warning' "$W/err" | grep -qi 'conf' ||
		failed "a missing conf file was warned about: $(grep -i -m1 'warning.*conf' "$W/err")"
	end; fi

	if begin E.pid1_conf_warnings_still_final; then
	pid1_root "$W/r-warn" $'colour = blue\nlevel = 99\nno equals sign here\nfinal = poweroff\n'
	pid1 "$W/r-warn"
	rc_is 130
	err_has 'warning: .*kdumpinit.conf:1: .*colour'
	err_has 'warning: .*kdumpinit.conf:2: .*level=99'
	err_has 'warning: .*kdumpinit.conf:3:'
	err_has 'final action: poweroff'
	every_line_tagged
	end; fi

	if begin E.pid1_bad_final_value_keeps_reboot; then
	pid1_root "$W/r-badfinal" $'final = sideways\n'
	pid1 "$W/r-badfinal"
	rc_is 129
	err_has 'warning: .*final=sideways'
	err_has 'final action: reboot'
	end; fi

	if begin E.pid1_conf_unreadable_still_final; then
	pid1_root "$W/r-confdir" $'final = halt\n'
	rm -f "$W/r-confdir/etc/kdumpinit.conf"
	mkdir "$W/r-confdir/etc/kdumpinit.conf"	# a directory: read fails
	pid1 "$W/r-confdir"
	rc_is 129
	err_has 'kdumpinit.conf'
	err_has 'final action: reboot'
	end; fi
fi

# PID 1 with a vmcore: pid1.c leaves /proc, /sys and /dev alone when their
# marker (/proc/self, /sys/kernel, /dev/null) is there, so a root with a
# plain directory /proc/self, a file /proc/vmcore, a file /proc/cmdline and
# a claimed file as /dev/dump runs the whole capture path of PID-1 mode.
fake_root() {	# DIR VMCORE CMDLINE [CONF-TEXT]
	rm -rf "$1"
	mkdir -p "$1/proc/self" "$1/sys/kernel" "$1/dev" "$1/etc"
	: >"$1/dev/null"
	cp "$KDUMPINIT" "$1/init"
	ln -f "$2" "$1/proc/vmcore" 2>/dev/null || cp --sparse=always "$2" "$1/proc/vmcore"
	printf '%s\n' "$3" >"$1/proc/cmdline"
	if [ $# -ge 4 ]; then printf '%s' "$4" >"$1/etc/kdumpinit.conf"; fi
}

if [ "$pid1_ok" -eq 1 ]; then
	# The file says level 0 and poweroff, the command line level 1: the
	# command line wins where it speaks, the file where it alone does.
	if begin E.pid1_capture_to_claimed_file; then
	R=$W/r-cap
	fake_root "$R" "$W/v16.core" "console=ttyS0 quiet kdumpinit.dev=/dev/dump kdumpinit.level=1 kdumpinit.threads=2" \
		$'level = 0\nfinal = poweroff\n'
	K format "$R/dev/dump" --size 32M --label pid1
	rc_is 0
	pid1 "$R"
	rc_is 130
	err_has 'capture finished'
	err_has 'final action: poweroff'
	every_line_tagged
	K info "$R/dev/dump"
	rc_is 0
	out_has '^state +complete'
	out_has 'dump level +1$'
	out_has 'kernel +6\.1\.0-small'
	K save "$R/dev/dump" --output "$W/pid1.elf" --format elf
	rc_is 0
	vc "$W/v16.core" "$W/pid1.elf"
	end; fi

	if begin E.pid1_cmdline_final_beats_file; then
	R=$W/r-final
	fake_root "$R" "$W/v16.core" "kdumpinit.final=reboot kdumpinit.dev=/dev/dump" $'final = halt\n'
	K format "$R/dev/dump" --size 32M
	rc_is 0
	pid1 "$R"
	rc_is 129
	err_has 'final action: reboot'
	end; fi

	if begin E.pid1_device_never_appears; then
	R=$W/r-nodev
	fake_root "$R" "$W/v16.core" "kdumpinit.dev=/dev/nothere,LABEL=nosuch kdumpinit.wait=1"
	pid1 "$R"
	rc_is 129
	err_has 'no usable dump device'
	err_has 'final action: reboot'
	end; fi

	# A disk that shows up late (USB storage, a large HBA still scanning):
	# PID 1 says every 10 s what it waits for and since when, and takes the
	# device within a poll of its coming, not at the end of the wait.
	if begin E.pid1_device_appears_late; then
	R=$W/r-late
	fake_root "$R" "$W/v16.core" "kdumpinit.dev=/dev/dump kdumpinit.wait=60 kdumpinit.final=poweroff"
	K format "$W/late.img" --size 32M
	rc_is 0
	(sleep 12 && mv "$W/late.img" "$R/dev/dump") &
	mover=$!
	t0=$(date +%s)
	pid1 "$R"
	rc_is 130
	err_has 'waiting up to 60 s for /dev/dump'
	err_has 'still waiting for /dev/dump: 10 s of 60 s; block devices: '
	ck "a 'still waiting' line came before 10 s, or too many: $(grep -c 'still waiting' "$W/err")" \
		test "$(grep -c 'still waiting' "$W/err")" -eq 1
	err_has 'capture finished'
	err_has 'final action: poweroff'
	every_line_tagged
	ck "PID 1 took $(($(date +%s) - t0)) s for a device there at 12 s" test $(($(date +%s) - t0)) -lt 18
	wait "$mover"
	K info "$R/dev/dump"
	rc_is 0
	out_has '^state +complete'
	end; fi

	if begin E.pid1_device_refused; then
	R=$W/r-refused
	fake_root "$R" "$W/v16.core" "kdumpinit.dev=/dev/blank kdumpinit.wait=1 kdumpinit.final=halt"
	truncate -s 8M "$R/dev/blank"
	pid1 "$R"
	rc_is 130
	err_has 'refused'
	err_has 'format'
	ck "the refused device was written to" cmp -n 8388608 "$R/dev/blank" /dev/zero
	end; fi

	# A device whose probe blocks (fs.lease-break-time, 45 s, stands in for
	# a read from a failing disk: devsig.py holds a lease on it, which an
	# O_RDWR open must wait out): PID 1 gives the probe a bounded time and
	# captures to the next selector's device; with no other device it
	# reaches the final action. Before the bound it hung past the 30 s.
	hung_device() {	# ROOT: start the lease holder on ROOT/dev/hang
		K format "$1/dev/hang" --size 8M
		rc_is 0
		rm -f "$W/leased"
		"$PY" "$DEVSIG" lease "$1/dev/hang" "$W/leased" >>"$LOG" 2>&1 &
		holder=$!
		for _ in $(seq 50); do [ -e "$W/leased" ] && break; sleep 0.1; done
		ck "the lease holder did not start" test -e "$W/leased"
		NCHK=$((NCHK + 1))
		! timeout 2 "$PY" -c 'import os, sys; os.open(sys.argv[1], os.O_RDWR)' "$1/dev/hang" 2>>"$LOG" ||
			failed "an O_RDWR open of the leased file did not block: test premise"
	}
	if begin E.pid1_device_probe_hangs; then
	R=$W/r-hang
	fake_root "$R" "$W/v16.core" "kdumpinit.dev=/dev/hang,/dev/dump kdumpinit.wait=20 kdumpinit.final=poweroff"
	K format "$R/dev/dump" --size 32M
	rc_is 0
	hung_device "$R"
	t0=$(date +%s)
	pid1 "$R"
	rc_is 130
	err_has '/dev/hang: looking for the device took more than [0-9]+ s'
	err_has 'capture finished'
	err_has 'final action: poweroff'
	every_line_tagged
	ck "PID 1 took $(($(date +%s) - t0)) s" test $(($(date +%s) - t0)) -lt 20
	kill "$holder" 2>/dev/null
	wait "$holder" 2>/dev/null
	K info "$R/dev/dump"
	rc_is 0
	out_has '^state +complete'
	end; fi

	if begin E.pid1_only_device_hangs; then
	R=$W/r-hang1
	fake_root "$R" "$W/v16.core" "kdumpinit.dev=/dev/hang kdumpinit.wait=2"
	hung_device "$R"
	t0=$(date +%s)
	pid1 "$R"
	rc_is 129
	err_has 'failing disk'
	err_has 'no usable dump device'
	err_has 'final action: reboot'
	ck "PID 1 took $(($(date +%s) - t0)) s" test $(($(date +%s) - t0)) -lt 20
	kill "$holder" 2>/dev/null
	wait "$holder" 2>/dev/null
	end; fi

	if begin E.pid1_bad_selector; then
	R=$W/r-badsel
	fake_root "$R" "$W/v16.core" "kdumpinit.dev=sdb1 kdumpinit.wait=1"
	pid1 "$R"
	rc_is 129
	err_has 'not a selector'
	err_has 'final action: reboot'
	end; fi

	if begin E.pid1_no_device_configured; then
	R=$W/r-nocfg
	fake_root "$R" "$W/v16.core" "console=ttyS0"
	pid1 "$R"
	rc_is 129
	err_has 'no dump device configured'
	end; fi

	if begin E.pid1_target_too_small; then
	R=$W/r-small
	fake_root "$R" "$W/v64.core" "kdumpinit.dev=/dev/small kdumpinit.final=poweroff"
	K format "$R/dev/small" --size 3M
	rc_is 0
	pid1 "$R"
	rc_is 130
	err_has 'too small|full'
	err_has 'final action: poweroff'
	K info "$R/dev/small"
	rc_is 5
	out_has 'device was full'
	ck "the target changed size" test "$(fsize "$R/dev/small")" -eq 3145728
	end; fi
fi

# ================= F. C unit tests and helper checks =================

# unit BINARY PREFIX [ENV...]: runs one C test program, passes its lines
# on as PREFIX.NAME, and fails the program itself if it crashed, ran
# nothing, or a sanitizer complained.
unit() {
	local bin=$1 label
	label=$2.$(basename "$1")
	shift 2
	local pre=${label%.*} out=$W/$label.out errf=$W/$label.err rc
	may_select "$pre." || return 0
	env "$@" timeout 120 "$bin" >"$out" 2>"$errf"
	rc=$?
	local lines
	lines=$(grep -cE '^(ok|FAIL) ' "$out")
	while IFS= read -r l; do
		case $l in
		"ok "*)
			selected "$pre.${l#ok }" || continue
			echo "ok $pre.${l#ok }"
			npass=$((npass + 1))
			[ "$pre" = F.asan ] && nasan=$((nasan + 1))
			;;
		"FAIL "*)
			selected "$pre.${l#FAIL }" || continue
			echo "FAIL $pre.${l#FAIL }"
			nfail=$((nfail + 1))
			;;
		esac
	done <"$out"
	if [ "$rc" -ne 0 ] && ! grep -q '^FAIL ' "$out"; then
		echo "FAIL $label: exit $rc with no failed case (crash?) after $lines cases: $(oneline "$errf")"
		nfail=$((nfail + 1))
	elif [ "$lines" -eq 0 ]; then
		echo "FAIL $label: ran no case"
		nfail=$((nfail + 1))
	fi
	if grep -qE 'runtime error:|ERROR: (Address|Leak)Sanitizer' "$errf"; then
		echo "FAIL $label.sanitizer: $(grep -m1 -E 'runtime error:|ERROR: (Address|Leak)Sanitizer' "$errf" | cut -c1-200)"
		nfail=$((nfail + 1))
	fi
}

nbins=0
for bin in "$UNIT_BIN"/test_*; do
	[ -x "$bin" ] || continue
	nbins=$((nbins + 1))
	unit "$bin" F KDI_FUZZ_ITERS=5000 KDI_FUZZ_SEED=1 MKVMCORE="$MKVMCORE"
done
if [ "$nbins" -eq 0 ] && may_select F.; then
	echo "FAIL F.c_tests: no test_* programs in $UNIT_BIN (make unit-tests)"
	nfail=$((nfail + 1))
fi
nasanbins=0
for bin in "$UNIT_BIN"/asan/test_*; do
	[ -x "$bin" ] || continue
	nasanbins=$((nasanbins + 1))
	unit "$bin" F.asan KDI_FUZZ_ITERS=20000 KDI_FUZZ_SEED=2 MKVMCORE="$MKVMCORE" \
		ASAN_OPTIONS=detect_leaks=1:abort_on_error=0 UBSAN_OPTIONS=print_stacktrace=1
done
[ "$nasanbins" -gt 0 ] || skip F.asan "no sanitizer build in $UNIT_BIN/asan (no lz4 source tree: DEPS_PREFIX build?)"

# gpt_parse against what sfdisk says of tables it wrote.
if begin F.gpt_parse_vs_sfdisk; then
truncate -s 16M "$W/pt-gpt.img"
if printf 'label: gpt\nsize=4M, name="kdump part"\nsize=4M, name="second"\n' | sfdisk -q "$W/pt-gpt.img" >>"$LOG" 2>&1; then
	for n in 1 2; do
		want=$(sfdisk --part-uuid "$W/pt-gpt.img" "$n" | tr 'A-F' 'a-f')
		name=$(sfdisk --part-label "$W/pt-gpt.img" "$n")
		got=$("$UNIT_BIN/test_gpt" --show "$W/pt-gpt.img" "$n")
		NCHK=$((NCHK + 1))
		[ -n "$want" ] && [ "$got" = "$want $name" ] || failed "partition $n: gpt_lookup says '$got', sfdisk '$want $name'"
	done
	got=$("$UNIT_BIN/test_gpt" --show "$W/pt-gpt.img" 3)
	NCHK=$((NCHK + 1))
	case $got in error*) ;; *) failed "partition 3 (unused) found: $got" ;; esac
else
	failed "sfdisk could not write a GPT"
fi
end; fi

if begin F.mbr_parse_vs_sfdisk; then
truncate -s 16M "$W/pt-mbr.img"
if printf 'label: dos\nlabel-id: 0x0badcafe\n,4M,83\n,4M,82\n' | sfdisk -q "$W/pt-mbr.img" >>"$LOG" 2>&1; then
	id=$(sfdisk --dump "$W/pt-mbr.img" | awk '/^label-id:/ { sub(/^0x/, "", $2); print $2 }')
	for n in 1 2; do
		got=$("$UNIT_BIN/test_gpt" --show "$W/pt-mbr.img" "$n")
		NCHK=$((NCHK + 1))
		[ "$got" = "$(printf '%s-%02x (none)' "$id" "$n")" ] || failed "partition $n: '$got', label-id $id"
	done
else
	failed "sfdisk could not write an MBR"
fi
end; fi

# The NBD handshake (net/nbd.c) against a real server, qemu-nbd on the
# loopback: the export's size, a wrong name (the server's own words), a
# read-only export.
if begin F.nbd_vs_qemu_nbd; then
truncate -s 48M "$W/nbd.img"
nbdport=$((20000 + RANDOM % 20000))
nbdrun() {	# QEMU-NBD-OPTIONS...: serve nbd.img once as "dump"
	qemu-nbd -f raw -x dump -b 127.0.0.1 -p "$nbdport" "$@" "$W/nbd.img" >>"$LOG" 2>&1 &
	nbdpid=$!
	for _ in $(seq 50); do
		(exec 3<>/dev/tcp/127.0.0.1/$nbdport) 2>/dev/null && break
		sleep 0.1
	done
	sleep 0.2
}
if command -v qemu-nbd >/dev/null; then
	nbdrun -t
	got=$("$UNIT_BIN/test_nbd" --connect 127.0.0.1 "$nbdport" dump)
	NCHK=$((NCHK + 1))
	case $got in "size 50331648 flags "*" go 1") ;; *) failed "export dump: '$got'" ;; esac
	got=$("$UNIT_BIN/test_nbd" --connect 127.0.0.1 "$nbdport" other)
	NCHK=$((NCHK + 1))
	case $got in "error 2: no such export"*other*) ;; *) failed "export other: '$got'" ;; esac
	kill "$nbdpid" 2>/dev/null; wait "$nbdpid" 2>/dev/null
	nbdrun -t -r
	got=$("$UNIT_BIN/test_nbd" --connect 127.0.0.1 "$nbdport" dump)
	NCHK=$((NCHK + 1))
	case $got in "error 30: "*read-only*) ;; *) failed "read-only export: '$got'" ;; esac
	kill "$nbdpid" 2>/dev/null; wait "$nbdpid" 2>/dev/null
else
	failed "no qemu-nbd (qemu-utils, deps/packages)"
fi
end; fi

# pagecheck.py must be able to fail, or its passes above mean nothing.
if begin F.pagecheck_can_fail; then
"$PY" "$MKSAVED" "$W/v16.core" "$W/pc-good.elf" >>"$LOG" 2>&1
ck "pagecheck rejects a correct save" pagecheck "$W/v16.core" "$W/pc-good.elf"
ck_not "pagecheck --less accepts a complete save" pagecheck "$W/v16.core" "$W/pc-good.elf" --less
for m in flip-byte drop-nonzero alter-note alter-vaddr drop-last-load; do
	"$PY" "$MKSAVED" "$W/v16.core" "$W/pc-$m.elf" --mutate "$m" >>"$LOG" 2>&1
	ck_not "pagecheck accepts a save with $m" pagecheck "$W/v16.core" "$W/pc-$m.elf"
done
ck "pagecheck --require some rejects a save missing one page" \
	pagecheck "$W/v16.core" "$W/pc-drop-nonzero.elf" --require some
ck_not "pagecheck --require prefix accepts a gap (first page dropped)" \
	pagecheck "$W/v16.core" "$W/pc-drop-nonzero.elf" --require prefix
head -c 5000000 "$W/pc-good.elf" >"$W/pc-cut.elf"
ck_not "pagecheck accepts a truncated saved file" pagecheck "$W/v16.core" "$W/pc-cut.elf" --require some
end; fi

summary
if [ "$nfail" -eq 0 ] && [ -z "${KEEP:-}" ]; then
	rm -rf "$W"
else
	echo "run.sh: scratch files and logs kept in $W" >&2
fi
[ "$nfail" -eq 0 ]
