#!/bin/bash
# tests/debugger/cuts.sh: a dump cut short opens in the debuggers once the
# debugger's pages (the EARLY pass, written first) are on the device, at
# every dump level. For each real raw vmcore (the e2e runs' copies of
# /proc/vmcore) kdumpinit captures it and the dump is cut:
#   L31/cutNN  level 31 truncated at NN % of its stream bytes (10 30 50 70 90)
#   L31/small  level 31 onto a claimed file too small for it (the EARLY pass
#              and a third of the rest fit): DEVICE_FULL
#   L17/cutNN  level 17 at 30 % and 60 %
#   L1/first   level 1 cut inside its kernel-first pass (halfway between the
#              end of the EARLY pass and the end of the first pass)
# For every cut past the EARLY pass, `save --format kdump` of the cut dump
# (exit 5) must open in drgn: init_uts_ns's release is the vmcore's, the
# printk log holds the panic, and for_each_task walks as many tasks as on
# the raw vmcore; `info` must say the debugger's pages are complete. A cut
# before the end of the EARLY pass must be said to be so by `info` ("cut
# short"); nothing is asked of the debuggers there. With CRASH=1 (the
# check-full run) crash, where it reads that kernel (Debian 12's 8.0.2
# reads 6.1 only: tests/crash/README.md), must show the panic in `log`
# and sysrq_handle_crash in `bt` on the same saves.
#
# usage: tests/debugger/cuts.sh [--workdir DIR] RAW.vmcore...
# The vmlinux of each kernel comes from its -dbg package (tests/lib/vmlinux.sh,
# pinned in tests/crash/SHA256SUMS, kept in build/crash). Prints ok/FAIL/skip
# lines and "N passed, N failed, N skipped".
set -u
top=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
cd "$top" || exit 1
BUILD=${BUILD:-build}
K=${KDUMPINIT:-$top/$BUILD/kdumpinit}
py=/usr/bin/python3
work=$top/$BUILD/debugger/cuts
if [ "${1:-}" = --workdir ]; then
	work=$2
	shift 2
fi
dbg=$top/$BUILD/crash
. "$top/tests/lib/vmlinux.sh"
pass=0 fail=0 skip=0
ok() { echo "ok $*"; pass=$((pass + 1)); }
bad() { echo "FAIL $*"; fail=$((fail + 1)); }
skipped() { echo "skip $*"; skip=$((skip + 1)); }
finish() { echo "$pass passed, $fail failed, $skip skipped"; [ "$fail" -eq 0 ]; exit; }
[ $# -gt 0 ] || { bad "setup: no raw vmcore given"; finish; }
mkdir -p "$work" "$dbg" || { bad "setup: cannot create $work"; finish; }

# Stream offsets from tests/tools/chunks.py (OFFSET TYPE LEN SEQ ID
# [FLAGS]): where the stream starts, where it ends, where the EARLY pass
# ends (the last PAGES chunk with flag 4) and where the first pass ends
# (the last PAGES chunk without LATER, flag 2; docs/FORMAT.md).
layout() {	# IMG: prints "START END EARLY_END FIRST_END"
	"$py" "$top/tests/tools/chunks.py" "$1" | awk '
		NR == 1 { s = $1 }
		{ e = $1 + 48 + $3 }
		$2 == 5 && $6 % 8 >= 4 { early = e }
		$2 == 5 && int($6 / 2) % 2 == 0 { first = e }
		END { print s, e, early + 0, first + 0 }'
}

# drgn on FILE: "release R", "panic 0|1", "tasks N" or "error STEP: ...".
probe() { "$py" "$top/tests/crash/drgnprobe.py" "$1" "$2" 2>&1; }

# The checks on one cut dump: NAME IMG PAST_EARLY
judge() {
	local name=$1 img=$2 past=$3 info out
	info=$("$K" info "$img" 2>&1)
	if [ "$past" = 0 ]; then
		grep -q "the debugger's pages: cut short" <<<"$info" &&
			ok "$name: before the end of the debugger's pages, and info says so" ||
			bad "$name: cut inside the EARLY pass, info says: $(grep -E '^(state|written)' <<<"$info" | tr '\n' '|')"
		return
	fi
	grep -q "the debugger's pages: complete" <<<"$info" ||
		bad "$name: info does not say the debugger's pages are complete: $(grep -E '^(state|written)' <<<"$info" | tr '\n' '|')"
	rm -f "$img.kdump"
	"$K" save "$img" --output "$img.kdump" --format kdump >"$img.save" 2>&1
	local rc=$?
	[ $rc -eq 5 ] || [ $rc -eq 0 ] || { bad "$name: save exited $rc: $(tail -n 2 "$img.save")"; return; }
	out=$(probe "$img.kdump" "$vml")
	local rel panic tasks
	rel=$(sed -n 's/^release //p' <<<"$out")
	panic=$(sed -n 's/^panic //p' <<<"$out")
	tasks=$(sed -n 's/^tasks //p' <<<"$out")
	if [ "$rel" = "$kver" ] && [ "$panic" = 1 ] && [ "$tasks" = "$rawtasks" ]; then
		ok "$name: drgn reads init_uts_ns ($rel), the panic in the log, $tasks tasks as on the raw vmcore ($(grep '^written' <<<"$info" | sed 's/^written *//'))"
	else
		bad "$name: drgn: release '$rel' (want $kver), panic '$panic', tasks '$tasks' (raw $rawtasks): $(grep '^error' <<<"$out")"
	fi
	[ -n "${CRASH:-}" ] || return
	if [ "$crashable" != 1 ]; then
		return
	fi
	printf 'log\nbt\nquit\n' | timeout 300 crash -s "$vml" "$img.kdump" >"$img.crash" 2>&1
	grep -q "sysrq triggered crash" "$img.crash" && grep -q "sysrq_handle_crash" "$img.crash" &&
		ok "$name: crash shows the panic in log and sysrq_handle_crash in bt" ||
		bad "$name: crash: $(grep -m 2 -iE 'error|excluded|invalid' "$img.crash" | tr '\n' '|')"
}

for raw in "$@"; do
	base=$(basename "$raw" .vmcore)
	base=${base#raw-}
	[ -s "$raw" ] || { bad "$base: no raw vmcore at $raw"; continue; }
	kver=$(strings -n 12 "$raw" | sed -n 's/^OSRELEASE=//p' | head -n 1)
	[ -n "$kver" ] || { bad "$base: no OSRELEASE in $raw"; continue; }
	if ! vml=$(vmlinux_of "$kver" 2>"$work/vmlinux-$base.err"); then
		bad "$base: no vmlinux for $kver: $(tail -n 1 "$work/vmlinux-$base.err")"
		continue
	fi
	# crash 8.0.0-8.0.2 reads no kernel from 6.4 on (tests/crash/README.md).
	crashable=0
	case $kver in 5.*|6.[0-3].*) crashable=1 ;; esac
	out=$(probe "$raw" "$vml")
	rawtasks=$(sed -n 's/^tasks //p' <<<"$out")
	[ -n "$rawtasks" ] || { bad "$base: drgn does not read the raw vmcore: $out"; continue; }
	d=$work/$base
	mkdir -p "$d"
	for level in 31 17 1; do
		img=$d/L$level.img
		rm -f "$img"
		"$K" capture --vmcore "$raw" --output "$img" --level $level >"$d/L$level.out" 2>&1 ||
			{ bad "$base/L$level: capture exited $?: $(tail -n 2 "$d/L$level.out")"; continue; }
		read -r s e early fe < <(layout "$img")
		[ "$early" -gt 0 ] 2>/dev/null ||
			{ bad "$base/L$level: no EARLY pass in the capture ($(grep -m1 'debugger' "$d/L$level.out"))"; continue; }
		case $level in
		31) cuts="10 30 50 70 90" ;;
		17) cuts="30 60" ;;
		1) cuts=first ;;
		esac
		for c in $cuts; do
			if [ "$c" = first ]; then
				# halfway between the end of the EARLY pass and the
				# end of the first
				at=$(((early + fe) / 2))
				name=$base/L$level/first
			else
				at=$((s + (e - s) * c / 100))
				name=$base/L$level/cut$c
			fi
			cut=$d/L$level-$c.img
			cp --sparse=always "$img" "$cut" && truncate -s "$at" "$cut"
			judge "$name" "$cut" $((at >= early ? 1 : 0))
		done
		if [ "$level" = 31 ]; then
			# A device too small: the EARLY pass and a third of the rest.
			small=$d/small.img
			rm -f "$small"
			sz=$(( (early + (e - early) / 3 + 1048575) / 1048576 * 1048576 ))
			if "$K" format "$small" --size "$sz" >"$d/small.format" 2>&1; then
				"$K" capture --vmcore "$raw" --output "$small" --level 31 >"$d/small.out" 2>&1
				rc=$?
				if [ $rc -eq 5 ] && grep -q "too small" "$d/small.out"; then
					judge "$base/L31/small" "$small" 1
				else
					bad "$base/L31/small: capture onto $sz bytes exited $rc: $(tail -n 2 "$d/small.out")"
				fi
			else
				bad "$base/L31/small: format --size $sz failed: $(tail -n 1 "$d/small.format")"
			fi
		fi
	done
done
finish
