#!/bin/bash
# tests/filter-synthetic/run.sh: page filtering on synthetic vmcores with real x86_64
# page tables, mem_section arrays and struct pages (mkvmcore --mm).
#
# For every case: mkvmcore builds a vmcore and FILE.expect (its own,
# independent judgement of docs/FILTERING.md's rules); then, per dump
# level, `kdumpinit capture --level L`, `kdumpinit save --format elf` and
# `kdumpinit info`, and tests/tools/filtercheck.py compares the kept pfns and the per-class
# counts with the expectation. Corruption cases also require that capture
# neither crashes nor hangs (timeout 60 s) and exits 0 or 5; the pfns whose
# struct pages cannot be read must be kept (the expectation says which).
# Cases with a thread list also capture at each of those thread counts and
# require PAGES chunks identical to the 1-thread capture's (chunks.py
# --pages): one "ok NAME/dL/threads" line per level. The straddle cases
# (mkvmcore --straddle) put compound pages and free blocks across the
# capture's block and span boundaries.
#
# The arm64 cases (mkvmcore --arch arm64: Debian's arm64 layouts, 39-,
# 48- and 52-bit VA, a 52-bit kernel on a 48-bit CPU) run the same way on
# this x86_64 host. Those marked "host" also check, at level 31, what a
# user does with an arm64 dump here: `info` says complete and names the
# crashed kernel's release, `save --format kdump` writes a kdump file that
# drgn (python3-drgn, when installed) opens as AARCH64 and reads
# init_uts_ns from, and `dmesg` shows the records mkvmcore put in the
# printk ring (FILE.dmesg), in order, from the vmcore and from the dump.
#
# Run from anywhere. Environment (paths relative to the repository top):
#   KDUMPINIT  the binary                  (default build/kdumpinit)
#   MKVMCORE   the generator; default: built from tests/tools/mkvmcore.c
#              into the scratch directory
#   WORK       scratch space; a fresh directory is made inside it and
#              removed after a run without failures (default /dev/shm/kdumpinit-mm
#              when /dev/shm is a writable tmpfs, else build/tests/filter-synthetic: `save`
#              syncs its output, which on a disk costs most of the run)
#   KEEP=1     keep the scratch directory anyway
#   JOBS       cases run at once (default: online CPUs, at most 4)
#   ONLY       a regular expression: run only the cases whose name matches
#
# Prints "ok NAME/dL" or "FAIL NAME/dL: why" per case and level, then
# exactly one line "N passed, N failed, N skipped"; exits non-zero on any failure.
set -u

top=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
cd "$top" || exit 1
abs() { case $1 in /*) printf '%s\n' "$1" ;; *) printf '%s\n' "$top/$1" ;; esac; }

KDUMPINIT=$(abs "${KDUMPINIT:-build/kdumpinit}")
if [ -z "${WORK:-}" ]; then
	WORK=build/tests/filter-synthetic
	if [ -d /dev/shm ] && [ -w /dev/shm ] && [ "$(stat -f -c %T /dev/shm 2>/dev/null)" = tmpfs ]; then
		WORK=/dev/shm/kdumpinit-mm
	fi
fi
WORK=$(abs "$WORK")
PY=/usr/bin/python3
[ -x "$PY" ] || PY=python3
CHECK=$top/tests/tools/filtercheck.py
export PYTHONDONTWRITEBYTECODE=1
JOBS=${JOBS:-$(nproc 2>/dev/null || echo 2)}
[ "$JOBS" -gt 4 ] && JOBS=4
[ "$JOBS" -lt 1 ] && JOBS=1
ONLY=${ONLY:-}

if [ ! -x "$KDUMPINIT" ]; then
	echo "FAIL setup: $KDUMPINIT is missing (make)"
	echo "0 passed, 1 failed, 0 skipped"
	exit 1
fi
mkdir -p "$WORK" || exit 1
# Leftovers of runs that failed are removed, but never those of a run that
# is still going (another tree's make check may share /dev/shm): the
# marker names its shell's pid.
for old in "$WORK"/run.??????; do
	[ -d "$old" ] && [ -e "$old/.kdumpinit-mm" ] || continue
	pid=$(cat "$old/.kdumpinit-mm" 2>/dev/null)
	case $pid in '' | *[!0-9]*) ;; *) kill -0 "$pid" 2>/dev/null && continue ;; esac
	rm -rf "$old"
done
W=$(mktemp -d "$WORK/run.XXXXXX") || exit 1
echo $$ >"$W/.kdumpinit-mm"

if [ -n "${MKVMCORE:-}" ]; then
	MKVMCORE=$(abs "$MKVMCORE")
else
	MKVMCORE=$W/mkvmcore
	if ! ${HOSTCC:-cc} -Wall -Wextra -Werror -O2 -o "$MKVMCORE" tests/tools/mkvmcore.c \
		>"$W/mkvmcore-build.log" 2>&1; then
		echo "FAIL setup: building mkvmcore: $(head -3 "$W/mkvmcore-build.log" | tr '\n' ' ')"
		echo "0 passed, 1 failed, 0 skipped"
		exit 1
	fi
fi

# Memory: two RAM ranges in two 128 MiB sections (several corruptions
# damage the second one). 96 MiB in all keeps a run short.
RAM2=0x1000:56M,128M:40M

# NAME | mkvmcore arguments | dump levels | corrupt (capture may exit 5)
#   | thread counts whose output must equal 1 thread's (optional)
#   | "host": the arm64 host checks at level 31 (optional)
CASES=()
add() { CASES+=("$1|$2|$3|$4|${5:-}|${6:-}"); }
THREADS="2 3 8"

seed=1
for layout in 6.1 6.12 6.16; do
	for lv in 4 5; do
		for leaf in 4k 2m 1g; do
			extra=
			# vary what the layouts do not fix: SIZE(mem_section),
			# where the kernel sits (phys_base < 0), the text alias,
			# an AMD SME C-bit in every page-table entry
			case $layout-$lv-$leaf in
			6.1-4-*) extra="--ms-size 16" ;;
			*-5-2m) extra="--kernel-at 6M --text-alias" ;;
			6.12-4-1g) extra="--text-alias" ;;
			6.12-4-4k | 6.16-5-1g) extra="--sme-bit 47" ;;
			6.1-5-1g) extra="--sme-bit 51" ;;
			esac
			add "clean-$layout-l$lv-$leaf" \
				"--mm $layout --levels $lv --leaf $leaf --ram $RAM2 --zero-pct 5 --seed $seed $extra" \
				"1 2 4 8 16 31" 0
			seed=$((seed + 1))
		done
	done
done
add "clean-6.1-l4-2m-levels" "--mm 6.1 --ram $RAM2 --zero-pct 5 --seed 40" "0 3 5 6 9 12 17 24 27 30" 0
add "clean-6.16-l5-4k-levels" "--mm 6.16 --levels 5 --leaf 4k --ram $RAM2 --zero-pct 5 --seed 41" "0 3 7 10 18 20 23 25 28" 0
# 7.1: the tail marker is OFFSET(page.compound_info), and a tail holds a
# mask, not its head's address; first tails look anonymous on their own.
add "clean-7.1-l4-2m" "--mm 7.1 --levels 4 --leaf 2m --ram $RAM2 --zero-pct 5 --seed 42" \
	"1 2 4 8 16 31" 0 "$THREADS"
add "clean-7.1-l5-4k" "--mm 7.1 --levels 5 --leaf 4k --ram $RAM2 --zero-pct 5 --seed 43 --sme-bit 48" \
	"1 2 4 8 16 31" 0
# A 1 GiB hugetlb page: head at 1 GiB, RAM there and just below 2 GiB,
# nothing in between (it spans 8 sections, 6 of them without RAM).
BIG=0x1000:40M,1G:24M,2032M:32M
add "gigantic-6.12-l4-1g" "--mm 6.12 --levels 4 --leaf 1g --ram $BIG --zero-pct 5 --seed 50" "1 8 16 31" 0 "$THREADS"
add "gigantic-6.1-l5-2m" "--mm 6.1 --levels 5 --leaf 2m --ram $BIG --zero-pct 5 --seed 51" "1 8 16 31" 0 "$THREADS"
add "gigantic-7.1-l4-2m" "--mm 7.1 --levels 4 --leaf 2m --ram $BIG --zero-pct 5 --seed 52" "1 8 16 31" 0
# Runs across every block and span boundary there is room for, and one
# free block with a stale head inside it at span boundaries (memmap_join).
# A third range close after the second: pfns the capture's spans cut at
# range ends.
STR=0x1000:56M,128M:72M,202M:20M
add "straddle-6.1-l4-2m" "--mm 6.1 --ram $STR --zero-pct 5 --seed 90 --straddle" "1 8 16 31" 0 "$THREADS"
add "straddle-6.12-l4-4k" "--mm 6.12 --leaf 4k --ram $STR --zero-pct 5 --seed 91 --straddle" "1 16 31" 0 "$THREADS"
add "straddle-6.16-l5-1g" "--mm 6.16 --levels 5 --leaf 1g --ram $STR --zero-pct 5 --seed 92 --straddle" "1 16 31" 0 "$THREADS"
add "straddle-7.1-l4-1g" "--mm 7.1 --leaf 1g --ram $STR --zero-pct 5 --seed 93 --straddle" "1 8 16 31" 0 "$THREADS"

c() { add "corrupt-$1-$2-l$3-$4" "--mm $2 --levels $3 --leaf $4 --ram ${6:-$RAM2} --zero-pct 5 --seed $5 --corrupt $1" "1 2 8 16 31" 1; }
c vmemmap-pgd 6.1 4 2m 60
c vmemmap-pgd 6.12 5 4k 61
c vmemmap-pud 6.12 4 1g 62
c vmemmap-pud 6.1 5 2m 63
c pmd-outside 6.1 4 4k 64
c pmd-outside 6.16 4 2m 65
c pmd-outside 6.12 5 1g 66
c pte-hole 6.12 4 4k 67
c pte-hole 6.1 5 4k 68
c section-garbage 6.1 4 2m 69
c section-garbage 6.16 5 1g 70
c section-absent 6.12 4 2m 71
c root-zero 6.12 4 2m 72
# the second range under mem_section root 1 (section 128: 16 GiB)
c root-zero 6.1 4 1g 73 0x1000:72M,16G:24M
c buddy-order 6.1 4 2m 74
c buddy-order 6.12 5 4k 75
c order-misaligned 6.1 4 2m 76
c order-misaligned 6.12 4 4k 77
c head-511 6.1 4 2m 78
c head-511 6.12 4 2m 79
c random-bytes 6.1 4 2m 80
c random-bytes 6.16 5 4k 81
c head-511 7.1 4 2m 84
c order-misaligned 7.1 5 4k 85
add "corrupt-random-bytes-6.12-l4-2m-threads" "--mm 6.12 --ram $RAM2 --zero-pct 5 --seed 82 --corrupt random-bytes" "1 31" 1 "$THREADS"
add "corrupt-buddy-order-6.1-l4-2m-threads" "--mm 6.1 --ram $RAM2 --zero-pct 5 --seed 83 --corrupt buddy-order" "31" 1 "$THREADS"

# The memory map's pages (--memmap exclude, which every case here runs):
# pages of struct pages that describe a kept page and free blocks on
# either side of span and section boundaries (the 2 MiB leaf of struct
# pages ends there too), with 2 MiB and 4 KiB vmemmap leaves; the same
# PAGES chunks at 1, 2, 3 and 8 threads.
add "memmap-edges-6.12-l4-2m" "--mm 6.12 --levels 4 --leaf 2m --ram 0x1000:160M --zero-pct 5 --seed 60 --memmap-edges" \
	"16 17 31" 0 "$THREADS"
add "memmap-edges-6.1-l5-4k" "--mm 6.1 --levels 5 --leaf 4k --ram 0x1000:160M --zero-pct 5 --seed 61 --memmap-edges" \
	"17 31" 0 "$THREADS"

# arm64: RAM from PHYS_OFFSET 0x40000000 (QEMU virt), two ranges in two
# sections. Debian 12's 6.1 (48-bit VA; --leaf 4k is rodata=full's page
# mapped linear map), 39-bit VA, Debian 13's 6.12 (52-bit VA, LPA2), the
# same kernel on a CPU without LPA2, 6.16 with 1 GiB linear blocks.
A64="--arch arm64"
ARAM=0x40000000:56M,0x48000000:40M
a64() { add "arm64-$1" "$A64 $2 --ram ${4:-$ARAM} --zero-pct 5 --seed $3" "1 17 31" 0 "$THREADS" "${5:-}"; }
a64 6.1-va48-2m "--mm 6.1 --va-bits 48 --leaf 2m" 200 "" host
a64 6.1-va48-4k "--mm 6.1 --va-bits 48 --leaf 4k" 201
a64 6.1-va39-2m "--mm 6.1 --va-bits 39 --leaf 2m" 202 "" host
a64 6.12-va52-4k "--mm 6.12 --va-bits 52 --leaf 4k" 203 "" host
a64 6.12-va52on48-1g "--mm 6.12 --va-bits 52 --cpu-va-bits 48 --leaf 1g" 204 "" host
a64 6.16-va48-1g "--mm 6.16 --va-bits 48 --leaf 1g" 205
a64 7.1-va48-2m "--mm 7.1 --va-bits 48 --leaf 2m" 211
# a third range close after the second, runs across block and span ends
a64 6.12-va48-2m-straddle "--mm 6.12 --va-bits 48 --leaf 2m --straddle" 206 \
	0x40000000:56M,0x48000000:72M,0x4ca00000:20M
a64 6.12-va48-4k-memmap-edges "--mm 6.12 --va-bits 48 --leaf 4k --memmap-edges" 212 "0x40000000:160M"
add "arm64-corrupt-pte-hole-6.12-va48-4k" "$A64 --mm 6.12 --leaf 4k --ram $ARAM --zero-pct 5 --seed 207 --corrupt pte-hole" "1 17 31" 1
add "arm64-corrupt-random-bytes-6.12-va52-2m" "$A64 --mm 6.12 --va-bits 52 --ram $ARAM --zero-pct 5 --seed 208 --corrupt random-bytes" "1 17 31" 1
add "arm64-corrupt-section-garbage-6.1-va48-2m" "$A64 --mm 6.1 --ram $ARAM --zero-pct 5 --seed 209 --corrupt section-garbage" "1 17 31" 1
add "arm64-corrupt-pmd-outside-6.12-va39-4k" "$A64 --mm 6.12 --va-bits 39 --leaf 4k --ram $ARAM --zero-pct 5 --seed 210 --corrupt pmd-outside" "1 17 31" 1

# same_threads NAME L IMG VMCORE THREADS...: captures at each thread count
# must give IMG's PAGES chunks; prints one ok or FAIL line.
same_threads() {
	local name=$1 L=$2 img=$3 v=$4 t bad=
	shift 4
	"$PY" tests/tools/chunks.py --pages "$img" >"$img.pages" 2>/dev/null
	if [ ! -s "$img.pages" ]; then
		echo "FAIL $name/d$L/threads: no PAGES chunks at 1 thread"
		return
	fi
	for t in "$@"; do
		rm -f "$img.t"
		timeout 60 "$KDUMPINIT" capture --vmcore "$v" --output "$img.t" --level "$L" \
			--threads "$t" --oversubscribe --memmap exclude >/dev/null 2>&1
		"$PY" tests/tools/chunks.py --pages "$img.t" 2>/dev/null | cmp -s - "$img.pages" ||
			bad="$bad $t"
	done
	rm -f "$img.t" "$img.pages"
	if [ -n "$bad" ]; then
		echo "FAIL $name/d$L/threads: PAGES differ from 1 thread's at threads$bad"
	else
		echo "ok $name/d$L/threads: PAGES identical at threads 1 $*"
	fi
}

# in_order EXPECTED OUTPUT: every line of EXPECTED is in OUTPUT, in order
in_order() {
	"$PY" - "$1" "$2" <<'EOF'
import sys
want = open(sys.argv[1], encoding='utf-8', errors='replace').read().splitlines()
got = open(sys.argv[2], encoding='utf-8', errors='replace').read()
at = 0
for w in want:
    i = got.find(w, at)
    if i < 0:
        print('missing or out of order: %r' % w)
        sys.exit(1)
    at = i + len(w)
EOF
}

# host_checks NAME IMG VMCORE: an arm64 dump read on this host (see the
# header); one ok, FAIL or skip line each.
host_checks() {
	local name=$1/host img=$2 v=$3 rel out why src
	rel=$(grep -a -o -m1 'OSRELEASE=[^[:cntrl:]]*' "$v" | head -n1)
	rel=${rel#OSRELEASE=}
	"$KDUMPINIT" info "$img" >"$img.hinfo" 2>&1
	if grep -q '^state  *complete' "$img.hinfo" && grep -q "^kernel  *$rel\$" "$img.hinfo"; then
		echo "ok $name/info: complete, kernel $rel"
	else
		echo "FAIL $name/info: $(grep -m2 '^state\|^kernel\|error' "$img.hinfo" | tr '\n' ' ')"
	fi
	rm -f "$img.kdump"
	if ! "$KDUMPINIT" save "$img" --output "$img.kdump" --format kdump >"$img.hsave" 2>&1 ||
		[ "$(head -c 8 "$img.kdump" 2>/dev/null)" != "KDUMP   " ]; then
		echo "FAIL $name/save-kdump: $(tail -n1 "$img.hsave")"
	else
		echo "ok $name/save-kdump: signature KDUMP, $(stat -c %s "$img.kdump") bytes"
		if ! "$PY" -c 'import drgn' 2>/dev/null; then
			echo "skip $name/drgn: python3-drgn is not installed"
		elif out=$("$PY" tests/e2e-arm64/drgnuts.py "$img.kdump" 2>&1) &&
			[ "$out" = "AARCH64 Linux $rel" ]; then
			echo "ok $name/drgn: opens the kdump file: $out"
		else
			echo "FAIL $name/drgn: $out"
		fi
	fi
	for src in "$v" "$img"; do
		if "$KDUMPINIT" dmesg "$src" >"$img.hdmesg" 2>&1 && why=$(in_order "$v.dmesg" "$img.hdmesg"); then
			echo "ok $name/dmesg-${src##*.}: $(wc -l <"$v.dmesg") lines in order"
		else
			echo "FAIL $name/dmesg-${src##*.}: ${why:-$(tail -n1 "$img.hdmesg")}"
		fi
	done
	rm -f "$img.kdump" "$img.hinfo" "$img.hsave" "$img.hdmesg"
}

# run_case NAME ARGS LEVELS CORRUPT THREADS HOST: writes $W/NAME.result
run_case() {
	local name=$1 args=$2 levels=$3 corrupt=$4 threads=$5 host=$6
	local d=$W/$name res=$W/$name.result specs= L rc fail= topt=
	[ -n "$threads" ] && topt="--threads 1"
	mkdir -p "$d"
	# shellcheck disable=SC2086
	timeout 120 "$MKVMCORE" -o "$d/v.core" $args >"$d/mkvmcore.log" 2>&1
	rc=$?
	if [ $rc -ne 0 ]; then
		for L in $levels; do
			echo "FAIL $name/d$L: mkvmcore exit $rc: $(tail -3 "$d/mkvmcore.log" | tr '\n' ' ')"
		done >"$res"
		return
	fi
	for L in $levels; do
		# shellcheck disable=SC2086
		timeout 60 "$KDUMPINIT" capture --vmcore "$d/v.core" --output "$d/d$L.img" \
			--level "$L" --memmap exclude $topt >"$d/d$L.log" 2>&1
		rc=$?
		fail=
		if [ $rc -eq 124 ]; then
			fail="capture hung (killed after 60 s)"
		elif [ $rc -gt 128 ]; then
			fail="capture crashed (signal $((rc - 128)))"
		elif [ $rc -ne 0 ] && { [ "$corrupt" = 0 ] || [ $rc -ne 5 ]; }; then
			fail="capture exit $rc: $(grep -m2 -i 'error\|kdumpinit:' "$d/d$L.log" | tail -1)"
		else
			timeout 60 "$KDUMPINIT" save "$d/d$L.img" --output "$d/d$L.elf" --format elf \
				>"$d/d$L.save.log" 2>&1
			rc=$?
			if [ $rc -ne 0 ] && [ $rc -ne 5 ]; then
				fail="save exit $rc: $(tail -1 "$d/d$L.save.log")"
			fi
			timeout 60 "$KDUMPINIT" info "$d/d$L.img" >"$d/d$L.info" 2>&1
		fi
		if [ -n "$fail" ]; then
			echo "FAIL $name/d$L: $fail" >>"$res.pre"
		else
			specs="$specs $L:$d/d$L.elf:$d/d$L.info:$d/d$L.log"
			# shellcheck disable=SC2086
			[ -n "$threads" ] &&
				same_threads "$name" "$L" "$d/d$L.img" "$d/v.core" $threads >>"$res.thr"
			[ "$host" = host ] && [ "$L" = 31 ] &&
				host_checks "$name" "$d/d$L.img" "$d/v.core" >>"$res.thr"
		fi
		rm -f "$d/d$L.img"
	done
	{
		[ -e "$res.pre" ] && cat "$res.pre"
		[ -e "$res.thr" ] && cat "$res.thr"
		[ -n "$specs" ] && "$PY" "$CHECK" "$d/v.core.expect" "$name" $specs
	} >"$res" 2>&1
	rm -f "$res.pre" "$res.thr"
	# keep the inputs of a failure, drop the bulk of a pass
	if ! grep -q '^FAIL' "$res"; then
		rm -rf "$d"
	else
		rm -f "$d"/d*.elf
	fi
}

start=$(date +%s)
running=0
for entry in "${CASES[@]}"; do
	IFS='|' read -r name args levels corrupt threads host <<<"$entry"
	if [ -n "$ONLY" ] && ! [[ $name =~ $ONLY ]]; then
		continue
	fi
	run_case "$name" "$args" "$levels" "$corrupt" "$threads" "$host" &
	running=$((running + 1))
	if [ $running -ge "$JOBS" ]; then
		wait -n
		running=$((running - 1))
	fi
done
wait

npass=0 nfail=0 nskip=0
for entry in "${CASES[@]}"; do
	IFS='|' read -r name _ <<<"$entry"
	[ -e "$W/$name.result" ] || continue
	while IFS= read -r line; do
		case $line in
		ok\ *) npass=$((npass + 1)); echo "$line" ;;
		FAIL\ *) nfail=$((nfail + 1)); echo "$line" ;;
		skip\ *) nskip=$((nskip + 1)); echo "$line" ;;
		*) [ -n "$line" ] && echo "  $line" ;;
		esac
	done <"$W/$name.result"
done
if [ $((npass + nfail)) -eq 0 ]; then
	echo "FAIL setup: no case ran"
	nfail=1
fi
echo "# $(($(date +%s) - start)) s; scratch $W" >&2
if [ "$nfail" -eq 0 ] && [ "${KEEP:-0}" != 1 ]; then
	rm -rf "$W"
fi
echo "$npass passed, $nfail failed, $nskip skipped"
[ "$nfail" -eq 0 ]
