#!/bin/bash
# tests/debugger/cuts.sh: a dump cut short opens in the debuggers once the
# debugger's startup set (the first tier of the EARLY pass, written first)
# is on the device, at every dump level. For each real raw vmcore (the e2e
# runs' copies of /proc/vmcore) kdumpinit captures it and the dump is cut:
#   L31/cutNN   level 31 truncated at NN % of its stream bytes (10 to 90 by
#               10)
#   L31/devNN   level 31 onto a claimed file of NN % of the whole dump's
#               size (20 to 90 by 10), too small for it: DEVICE_FULL
#   L17/cutNN   level 17 at 30 % and 60 %
#   L1/first    level 1 cut inside its kernel-first pass (halfway between the
#               end of the EARLY pass and the end of the first pass)
# Before the cuts, for each kernel: the finder's kallsyms lookup gives the
# vmlinux's addresses (tests/debugger/symcheck.py, through
# build/tools/dbgset --syms).
# Where the startup set opens (the end of the first PAGES chunk after it,
# from which a reader knows it whole) must be at most 20 % of a level-31
# dump's bytes. For every cut past it, `save --format kdump` of the cut
# dump (exit 5) must open in drgn: init_uts_ns's release is the vmcore's,
# the printk log holds the panic, and for_each_task walks as many tasks as
# on the raw vmcore; `info` must say the startup pages are complete. A cut
# before must be said to be so by `info` ("cut short"); nothing is asked
# of the debuggers there. Each kernel ends with a note: the smallest cut
# of level 31 that opened. With CRASH=1 (the
# check-full run) crash must show the panic in `log` and a
# sysrq_handle_crash frame in `bt` on the same saves (crash_judge), each
# crash that reads the kernel: Debian 12's 8.0.2 (the host's; it reads
# no kernel from 6.4 on: tests/crash/README.md) and sid's 9.0.2
# (tests/lib/crash9.sh: the .debs, pinned, fetched once). Each is first
# run on the raw vmcore, the complete dump: if it cannot read that, with
# or without --no_modules, that is a fact about crash, and the kernel's
# case for it is a skip quoting its error; if it reads it only with
# --no_modules (crash 9.0.2 on 7.3), the cuts get that option too.
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
DBGSET=${DBGSET:-$top/$BUILD/tools/dbgset}
py=/usr/bin/python3
work=$top/$BUILD/debugger/cuts
if [ "${1:-}" = --workdir ]; then
	work=$2
	shift 2
fi
dbg=$top/$BUILD/crash
. "$top/tests/lib/vmlinux.sh"
. "$top/tests/lib/crash9.sh"
pass=0 fail=0 skip=0
ok() { echo "ok $*"; pass=$((pass + 1)); }
bad() { echo "FAIL $*"; fail=$((fail + 1)); }
skipped() { echo "skip $*"; skip=$((skip + 1)); }
finish() { echo "$pass passed, $fail failed, $skip skipped"; [ "$fail" -eq 0 ]; exit; }
[ $# -gt 0 ] || { bad "setup: no raw vmcore given"; finish; }
mkdir -p "$work" "$dbg" || { bad "setup: cannot create $work"; finish; }
work=$(cd "$work" && pwd)

# Stream offsets from tests/tools/chunks.py (OFFSET TYPE LEN SEQ ID
# [FLAGS]): where the stream starts, where it ends, where the startup set
# opens (the end of the first PAGES chunk after the last with STARTUP,
# flag 8: a reader knows the tier whole from there), where the EARLY pass
# ends (the last PAGES chunk with flag 4) and where the first pass ends
# (the last PAGES chunk without LATER, flag 2; docs/FORMAT.md).
layout() {	# IMG: prints "START END OPEN EARLY_END FIRST_END"
	"$py" "$top/tests/tools/chunks.py" "$1" | awk '
		NR == 1 { s = $1 }
		{ e = $1 + 48 + $3 }
		$2 == 5 && $6 % 16 >= 8 { st = e; open = 0 }
		$2 == 5 && $6 % 16 < 8 && st && !open { open = e }
		$2 == 5 && $6 % 8 >= 4 { early = e }
		$2 == 5 && int($6 / 2) % 2 == 0 { first = e }
		END { print s, e, open + 0, early + 0, first + 0 }'
}

# drgn on FILE: "release R", "panic 0|1", "tasks N" or "error STEP: ...".
probe() { "$py" "$top/tests/crash/drgnprobe.py" "$1" "$2" 2>&1; }

# The checks on one cut dump: NAME IMG PAST_STARTUP. 0 when it opened
# as it must (or was not asked to), 1 when a check failed.
judge() {
	local name=$1 img=$2 past=$3 info out f0=$fail
	info=$("$K" info "$img" 2>&1)
	if [ "$past" = 0 ]; then
		grep -q "the debugger's startup pages: cut short" <<<"$info" &&
			ok "$name: before the startup set opens, and info says so" ||
			bad "$name: cut inside the startup set, info says: $(grep -E '^(state|written)' <<<"$info" | tr '\n' '|')"
		return 1
	fi
	grep -q "the debugger's startup pages: complete" <<<"$info" ||
		bad "$name: info does not say the startup pages are complete: $(grep -E '^(state|written)' <<<"$info" | tr '\n' '|')"
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
	[ -z "${CRASH:-}" ] || crash_judge "$name" "$img.kdump" "$vml" "$kver"
	[ "$fail" = "$f0" ]
}

# --- crash ---------------------------------------------------------------
# The crashes that judge a kernel's cuts, per KVER: "KIND OPT" words, KIND
# host (/usr/bin/crash) or sid (tests/lib/crash9.sh), OPT - or
# --no_modules. crash_setup chooses them on the raw vmcore; crash_judge
# runs them on a cut's save. crash reads $HOME/.crashrc: HOME is $work,
# so that the user's is not.
declare -A crash_use=()
crash9_tried=0 crash9_why=
host_crash_version=

# crash_run KIND OPT VMLINUX DUMP OUT: `log` and `bt` (the panic task) into
# OUT; crash's exit code.
crash_run() {
	local kind=$1 opt=$2 cmd
	[ "$opt" = - ] && opt=
	if [ "$kind" = host ]; then cmd=(/usr/bin/crash); else cmd=("${CRASH9[@]}"); fi
	printf 'log\nbt\nquit\n' | HOME=$work timeout 300 "${cmd[@]}" -s $opt "$3" "$4" >"$5" 2>&1
}

# crash_verdict OUT RC: nothing when OUT holds the panic in `log` and a
# sysrq_handle_crash frame in `bt` (" #4 [addr] sysrq_handle_crash at":
# the log's own stack trace, "sysrq_handle_crash+0x16/0x20", is not one);
# else what went wrong, in a line.
crash_verdict() {
	local o=$1 rc=$2 e
	grep -q "Kernel panic - not syncing: sysrq triggered crash" "$o" &&
		grep -qE '^ *#[0-9]+ \[[0-9a-f]+\] sysrq_handle_crash at ' "$o" && return 0
	e=$(grep -v -e 'error trace:' -e 'zero_excluded' "$o" |
		grep -m 2 -E '^crash: |error|excluded|invalid|do not match' | tr '\n' '|')
	[ -n "$e" ] && { echo "$e"; return; }
	e="exit $rc, $(grep -c 'sysrq triggered crash' "$o") panic line(s) in log, no sysrq_handle_crash frame in bt"
	# crash 9 may stop at startup with nothing but the warning every
	# cut dump's save gets (it opens the saves past the debugger's pages)
	grep -q 'This dumpfile is incomplete' "$o" && e="$e, after its warning \"This dumpfile is incomplete\""
	echo "$e"
}

# crash_kind_label KIND: "crash-8.0.2" (host) or "crash-9.0.2" (sid)
crash_kind_label() {
	if [ "$1" = host ]; then echo "crash-$host_crash_version"; else echo "crash-$CRASH9_VERSION"; fi
}

# crash_setup BASE RAW VMLINUX KVER: which crash judges KVER's cuts, and
# how: each candidate on the raw vmcore, then with --no_modules if that
# failed. One line per candidate: ok (it reads the complete dump), or skip
# (it does not: its error; its cuts are not asked), or FAIL (sid's crash
# could not be made ready: its pins are stale, or the archive is out of
# reach).
crash_setup() {
	local base=$1 raw=$2 vml=$3 kver=$4 kind lab o f why why1 opt rc use=
	if [ -z "$host_crash_version" ] && [ -x /usr/bin/crash ]; then
		host_crash_version=$(/usr/bin/crash --version 2>/dev/null | sed -n 's/^crash \([0-9][^ ]*\).*/\1/p' | head -n 1)
	fi
	if [ "$crash9_tried" = 0 ]; then
		crash9_tried=1
		crash9_ready 2>"$work/crash9.err" || crash9_why=$(tail -n 1 "$work/crash9.err")
	fi
	for kind in host sid; do
		if [ "$kind" = host ]; then
			[ -n "$host_crash_version" ] || { skipped "$base/raw/crash-host: no crash on this host"; continue; }
			# Known and measured (tests/crash/README.md, readers.sh):
			# crash 8.0.0-8.0.2 reads no kernel from 6.4 on.
			case $host_crash_version/$kver in
			8.0.[0-2]/6.[4-9]*|8.0.[0-2]/6.[1-9][0-9]*|8.0.[0-2]/[7-9].*)
				skipped "$base/raw/crash-$host_crash_version: crash 8.0.0-8.0.2 reads no kernel from 6.4 on (tests/crash/README.md), $kver included"
				continue ;;
			esac
		elif [ -n "$crash9_why" ]; then
			bad "$base/raw/crash-sid: sid's crash is not ready: $crash9_why"
			continue
		fi
		lab=$(crash_kind_label $kind)
		o=$work/$base.raw-$lab
		why1= opt=
		for opt in - --no_modules; do
			f=$o.out
			[ "$opt" = - ] || f=$o.${opt#--}.out
			crash_run $kind $opt "$vml" "$raw" "$f"
			rc=$?
			why=$(crash_verdict "$f" $rc)
			[ -n "$why" ] || break
			[ -n "$why1" ] || why1=$why
		done
		if [ -n "$why" ]; then
			skipped "$base/raw/$lab: cannot read the complete dump, with or without --no_modules: $why1; its cuts are not asked"
		elif [ "$opt" = - ]; then
			ok "$base/raw/$lab: reads the complete dump (log, bt); it judges the cuts"
			use+=" $kind:$opt"
		else
			ok "$base/raw/$lab: reads the complete dump only with --no_modules (without: $why1); it judges the cuts with it"
			use+=" $kind:$opt"
		fi
	done
	crash_use[$kver]=$use
}

# crash_judge NAME IMG VMLINUX KVER: each crash that reads KVER's complete
# dump (crash_setup) must show the panic in `log` and sysrq_handle_crash in
# `bt` on IMG, a save of a cut dump past the debugger's pages.
crash_judge() {
	local name=$1 img=$2 vml=$3 kver=$4 u kind opt lab why rc with
	for u in ${crash_use[$kver]:-}; do
		kind=${u%%:*} opt=${u#*:}
		lab=$(crash_kind_label "$kind")
		with=
		[ "$opt" = - ] || with=" (with $opt)"
		crash_run "$kind" "$opt" "$vml" "$img" "$img.$lab"
		rc=$?
		why=$(crash_verdict "$img.$lab" $rc)
		if [ -z "$why" ]; then
			ok "$name/$lab: shows the panic in log and sysrq_handle_crash in bt$with"
		else
			bad "$name/$lab: $why"
		fi
	done
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
	[ -z "${CRASH:-}" ] || crash_setup "$base" "$raw" "$vml" "$kver"
	# The finder's one kallsyms lookup against the vmlinux's addresses:
	# its names and a sample of the symbol table (symcheck.py).
	if sc=$("$py" "$top/tests/debugger/symcheck.py" "$DBGSET" "$raw" "$vml" 2>&1); then
		ok "$base: kallsyms: $(tail -n 1 <<<"$sc" | sed 's/^ok //')"
	else
		bad "$base: kallsyms: $(grep -m 3 FAIL <<<"$sc" | tr '\n' ' ')"
	fi
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
		read -r s e open early fe < <(layout "$img")
		[ "$open" -gt 0 ] 2>/dev/null ||
			{ bad "$base/L$level: no startup set in the capture ($(grep -m1 'debugger' "$d/L$level.out"))"; continue; }
		if [ "$level" = 31 ]; then
			pct=$(awk -v o="$open" -v s="$s" -v e="$e" 'BEGIN { printf "%.1f", 100 * (o - s) / (e - s) }')
			awk -v p="$pct" 'BEGIN { exit !(p <= 20) }' &&
				ok "$base/L31: the startup set opens at $pct % of the dump's bytes (at most 20 %)" ||
				bad "$base/L31: the startup set opens at $pct % of the dump's bytes, past 20 %"
		fi
		case $level in
		31) cuts="10 20 30 40 50 60 70 80 90" ;;
		17) cuts="30 60" ;;
		1) cuts=first ;;
		esac
		smallest=
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
			judge "$name" "$cut" $((at >= open ? 1 : 0)) && [ -z "$smallest" ] && smallest=$c
			rm -f "$cut" "$cut".*
		done
		[ "$level" = 31 ] || continue
		echo "note $base/L31: the smallest cut that opens: ${smallest:-none} % of the bytes (10 % steps)"
		# Devices too small: 20 to 90 % of the whole dump.
		for c in 20 30 40 50 60 70 80 90; do
			small=$d/dev$c.img
			rm -f "$small"
			sz=$(( e * c / 100 / 1048576 * 1048576 ))
			if ! "$K" format "$small" --size "$sz" >"$d/dev$c.format" 2>&1; then
				bad "$base/L31/dev$c: format --size $sz failed: $(tail -n 1 "$d/dev$c.format")"
				continue
			fi
			"$K" capture --vmcore "$raw" --output "$small" --level 31 >"$d/dev$c.out" 2>&1
			rc=$?
			if [ $rc -ne 5 ] || ! grep -q "too small" "$d/dev$c.out"; then
				bad "$base/L31/dev$c: capture onto $sz bytes exited $rc: $(tail -n 2 "$d/dev$c.out")"
				continue
			fi
			read -r _ _ sopen _ _ < <(layout "$small")
			judge "$base/L31/dev$c" "$small" $(( sopen > 0 ? 1 : 0 ))
			rm -f "$small" "$small".*
		done
	done
done
finish
