#!/bin/bash
# tests/corrupt/run.sh: capture from a real vmcore whose crashed kernel's
# memory is damaged (struct pages, page tables and the kernel log broken in place). Each fault is put into a sparse
# copy of the raw vmcore an e2e run left (tests/tools/damage.py), then
# `kdumpinit capture` runs on it at levels 1 and 31, and `kdumpinit dmesg`
# on the vmcore and on the dump.
#
#   tests/corrupt/run.sh [--full] [--faults "F..."] [--workdir DIR] RAW_VMCORE
#
# Without --full (make check) two faults run: random struct pages and wild
# printk ring ids. --full (make check-full) runs every fault damage.py has;
# --faults names the ones to run.
#
# At level 31 each fault is captured sealed too (capture --pubkey): it
# completes as the clear capture does, info --key calls it complete and
# authenticated with as many pages kept, and dmesg --key prints the clear
# dump's log.
#
# Every fault, every level: the capture completes (exit 0, "dump complete"),
# prints its summary line, and the dump opens (`info`). Then what the fault
# must leave: pages the filter cannot classify are kept and counted in the
# summary, a damaged log is salvaged (its first line says so, and it still
# holds the clean log's panic line) or said to be lost, `dmesg` exits
# non-zero when nothing is left. The same capture runs under ASan and UBSan
# when build/asan/kdumpinit is there (make asan-kdumpinit), else one skip.
# Times against the clean vmcore are printed as "info" lines, never
# checked (the machine is shared).
#
# Prints "ok NAME" / "FAIL NAME: why" / "skip NAME: why" and ends with
# "N passed, N failed, N skipped". Copies are deleted as each fault ends;
# KEEP_W=1 keeps the run directory (logs of each capture) for a look.
set -u
top=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
K=${KDUMPINIT:-$top/build/kdumpinit}
KASAN=${KDUMPINIT_ASAN:-$top/build/asan/kdumpinit}
DAMAGE=$top/tests/tools/damage.py
PY=/usr/bin/python3
full=0 work=$top/build/corrupt only=
while [ $# -gt 0 ]; do
	case $1 in
	--full) full=1; shift ;;
	--workdir) work=$2; shift 2 ;;
	--faults) only=$2; shift 2 ;;
	*) break ;;
	esac
done
raw=${1:-}
pass=0 fail=0 skip=0
ok() { echo "ok $*"; pass=$((pass + 1)); }
bad() { echo "FAIL $*"; fail=$((fail + 1)); }
skp() { echo "skip $1: $2"; skip=$((skip + 1)); }
finish() { echo "$pass passed, $fail failed, $skip skipped"; [ "$fail" -eq 0 ]; exit; }

if [ -z "$raw" ] || [ ! -s "$raw" ]; then
	bad "setup: no raw vmcore given or it is empty (${raw:-none}); an e2e run leaves one"
	finish
fi
[ -x "$K" ] || { bad "setup: $K is missing (make)"; finish; }
mkdir -p "$work" || exit 1
W=$(mktemp -d "$work/run.XXXXXX") || exit 1
trap '[ -n "${KEEP_W:-}" ] || rm -rf "$W"' EXIT
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=0:abort_on_error=0}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}

if [ "$full" = 1 ]; then
	faults="struct-pages vmemmap-table top-table mem-section printk-ids printk-wild printk-gone
		vi-mem_section vi-prb vi-top-pgt vi-phys_base vi-page-size"
else
	faults="struct-pages printk-ids"
fi
[ -n "$only" ] && faults=$only

# capture BIN CORE LEVEL OUT LOG: the capture's exit status; seconds in $secs.
capture() {
	local t0 t1 rc
	rm -f "$4"
	t0=$(date +%s.%N)
	"$1" capture --vmcore "$2" --output "$4" --level "$3" --threads 2 >"$5" 2>&1
	rc=$?
	t1=$(date +%s.%N)
	secs=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.2f", b - a }')
	return $rc
}

val() { sed -n "s/^$2=//p" "$1" | head -n1; }	# FILE KEY: damage.py's value

# The clean vmcore first: its times, its log, its counts.
declare -A clean_secs
cp --sparse=always "$raw" "$W/clean.vmcore" || { bad "setup: cannot copy $raw"; finish; }
"$K" dmesg "$W/clean.vmcore" >"$W/clean.dmesg" 2>/dev/null
panic=$(grep -m1 -oE 'Kernel panic - not syncing: .*' "$W/clean.dmesg")
if [ -z "$panic" ]; then
	bad "setup: the clean vmcore's log has no panic line"
	finish
fi
clean_records=$(grep -c '^\[' "$W/clean.dmesg")
for L in 1 31; do
	if capture "$K" "$W/clean.vmcore" $L "$W/clean-$L.img" "$W/clean-$L.log"; then
		clean_secs[$L]=$secs
		ok "clean/d$L: complete in $secs s"
	else
		bad "clean/d$L: capture of the undamaged vmcore failed: $(tail -n1 "$W/clean-$L.log")"
		finish
	fi
	rm -f "$W/clean-$L.img"
done
total=$(grep -m1 -oE 'of [0-9]+ pages kept' "$W/clean-31.log" | grep -oE '[0-9]+')
declare -A clean_kept
for L in 1 31; do
	clean_kept[$L]=$(grep -m1 -oE '[0-9]+ of [0-9]+ pages kept' "$W/clean-$L.log" | grep -oE '^[0-9]+')
done
echo "info clean: $clean_records log records, $total pages, ${clean_secs[1]} s at level 1, ${clean_secs[31]} s at level 31"

# expect FAULT LEVEL LOG FACTS OUT: what this fault must leave in the capture.
expect() {
	local f=$1 L=$2 log=$3 facts=$4 img=$5 n want kept zero
	n=$(grep -m1 -oE '[0-9]+ pages kept because their struct page could not be read' "$log" | grep -oE '^[0-9]+')
	local unread=${n:-0}
	n=$(grep -m1 -oE '[0-9]+ pages kept because their struct page is implausible' "$log" | grep -oE '^[0-9]+')
	local implaus=${n:-0}
	n=$(grep -m1 -oE '[0-9]+ pages kept unclassified' "$log" | grep -oE '^[0-9]+')
	local unclass=${n:-0}
	kept=$(grep -m1 -oE '[0-9]+ of [0-9]+ pages kept' "$log" | grep -oE '^[0-9]+')
	zero=$(grep -m1 -oE 'zero [0-9]+' "$log" | grep -oE '[0-9]+')
	case $f/$L in
	struct-pages/31)
		# Garbage that looks like anything is classified as what it
		# looks like; what cannot be (orders no zone has) is kept.
		want=$(val "$facts" implausible)
		if [ "$implaus" -ge $((want * 3 / 4)) ] && [ "$implaus" -le "$(val "$facts" pfns)" ]; then
			ok "$f/d$L: $implaus pages kept for an implausible struct page (damage.py made $want)"
		else
			bad "$f/d$L: $implaus pages counted as implausible, damage.py made $want"
		fi ;;
	vmemmap-table/31 | mem-section/31)
		want=$(val "$facts" pfns)
		if [ "$unread" -ge "$want" ] && [ "$kept" -ge $((unread - zero)) ]; then
			ok "$f/d$L: $unread pages kept because their struct page could not be read (the damage hid $want)"
		else
			bad "$f/d$L: $unread pages counted unreadable, the damage hid $want struct pages ($kept kept)"
		fi ;;
	top-table/31 | vi-mem_section/31 | vi-top-pgt/31 | vi-phys_base/31 | vi-page-size/31)
		# No struct page found: level 31 keeps what level 1 keeps.
		if [ "$unclass" -gt 0 ] && [ "$unclass" = "$kept" ] && [ $((kept + zero)) -eq "$total" ]; then
			ok "$f/d$L: every non-zero page kept ($kept), and counted as unclassified"
		else
			bad "$f/d$L: $kept kept, $zero zero, of $total; $unclass said unclassified"
		fi ;;
	esac
	# The log: in the dump as the capture found it.
	case $f in
	printk-ids | printk-wild)
		if grep -q 'kernel log: [0-9]* records (salvaged)' "$log" &&
			grep -q "salvaged by scanning" "$log"; then
			ok "$f/d$L: the capture says the log was salvaged"
		else
			bad "$f/d$L: no salvage in the capture's summary: $(grep -m1 'kernel log' "$log")"
		fi
		"$K" dmesg "$img" >"$W/img.dmesg" 2>"$W/img.err"
		if head -n1 "$W/img.dmesg" | grep -q '^kdumpinit: salvaged log:' &&
			grep -qF "$panic" "$W/img.dmesg"; then
			ok "$f/d$L: the dump's log is marked salvaged and holds \"$panic\""
		else
			bad "$f/d$L: the dump's log: $(head -c 200 "$W/img.dmesg")"
		fi ;;
	printk-gone | vi-prb | top-table | vi-top-pgt | vi-phys_base)
		if grep -q "log could not be read" "$log" && ! grep -q '^kdumpinit: kernel log:' "$log"; then
			ok "$f/d$L: the capture says the log is lost"
		else
			bad "$f/d$L: $(grep -m1 'log' "$log")"
		fi ;;
	esac
}

# vmcore_checks FAULT CORE: dmesg on the damaged vmcore itself.
vmcore_checks() {
	local f=$1 core=$2 rc
	"$K" dmesg "$core" >"$W/v.dmesg" 2>"$W/v.err"
	rc=$?
	case $f in
	printk-ids)
		# Only the ends were damaged: every record comes back, in order.
		if [ $rc -eq 0 ] && grep -q 'salvaged by scanning' "$W/v.err" &&
			tail -n +2 "$W/v.dmesg" | cmp -s - "$W/clean.dmesg"; then
			ok "$f/dmesg: all $clean_records records salvaged, the same log as the clean vmcore's"
		else
			bad "$f/dmesg: exit $rc, $(head -c 200 "$W/v.err"); $(tail -n +2 "$W/v.dmesg" | diff - "$W/clean.dmesg" | head -n 4)"
		fi ;;
	printk-wild)
		local n want
		n=$(grep -c '^\[' "$W/v.dmesg")
		want=$(val "$W/facts" damaged)
		# Damaged records are left out; no garbage comes in: every
		# salvaged line is a line of the clean log.
		if [ $rc -eq 0 ] && grep -qF "$panic" "$W/v.dmesg" &&
			[ "$n" -ge $((clean_records - want)) ] && [ "$n" -lt "$clean_records" ] &&
			! grep '^\[' "$W/v.dmesg" | grep -vxF -f "$W/clean.dmesg" | grep -q .; then
			ok "$f/dmesg: $n of $clean_records records salvaged ($want damaged), each one of the clean log's, the panic line among them"
		else
			bad "$f/dmesg: exit $rc, $n records ($want of $clean_records damaged); $(grep '^\[' "$W/v.dmesg" | grep -vxF -f "$W/clean.dmesg" | head -n 2)"
		fi ;;
	printk-gone | vi-prb)
		if [ $rc -ne 0 ] && grep -q 'no log' "$W/v.err" && [ ! -s "$W/v.dmesg" ]; then
			ok "$f/dmesg: exit $rc: $(head -n1 "$W/v.err")"
		else
			bad "$f/dmesg: exit $rc, $(wc -c <"$W/v.dmesg") bytes printed: $(head -n1 "$W/v.err")"
		fi ;;
	esac
}

# sealed_check FAULT CORE KEPT IMG: the same level-31 capture sealed: it
# completes as the clear one IMG did, info --key says it is complete and
# authenticated with as many pages kept, and its log (dmesg --key) is the
# clear dump's, or both have none.
"$K" keygen "$W/sec" "$W/pub" >/dev/null 2>&1 || bad "setup: keygen failed"
sealed_check() {
	local f=$1 core=$2 k=$3 img=$4 simg=$W/$1-sealed.img rc rc1 rc2
	rm -f "$simg"
	"$K" capture --vmcore "$core" --output "$simg" --level 31 --threads 2 --pubkey "$W/pub" >"$W/s.log" 2>&1
	rc=$?
	"$K" info --key "$W/sec" "$simg" >"$W/s.info" 2>&1
	if [ $rc = 0 ] && grep -q '^kdumpinit: dump complete' "$W/s.log" &&
		grep -qE '^sealed .*complete, authenticated' "$W/s.info" && grep -qE "^pages kept +$k " "$W/s.info"; then
		ok "$f/d31/sealed: complete and authenticated, $k pages kept as in the clear"
	else
		bad "$f/d31/sealed: exit $rc: $(grep -m1 -E 'error|warning' "$W/s.log") $(grep -E '^(state|sealed|pages kept)' "$W/s.info" | tr '\n' ' ')"
	fi
	"$K" dmesg "$img" >"$W/c.dmesg" 2>/dev/null
	rc1=$?
	"$K" dmesg "$simg" --key "$W/sec" >"$W/s.dmesg" 2>/dev/null
	rc2=$?
	if [ $rc1 = $rc2 ] && cmp -s "$W/c.dmesg" "$W/s.dmesg"; then
		ok "$f/d31/sealed: dmesg --key as the clear dump's (exit $rc2, $(grep -c '' "$W/s.dmesg") lines)"
	else
		bad "$f/d31/sealed: dmesg --key exit $rc2, $(grep -c '' "$W/s.dmesg") lines; the clear dump's exit $rc1, $(grep -c '' "$W/c.dmesg") lines"
	fi
	rm -f "$simg"
}

for f in $faults; do
	core=$W/$f.vmcore
	cp --sparse=always "$W/clean.vmcore" "$core"
	if ! $PY "$DAMAGE" "$core" "$f" >"$W/facts" 2>&1; then
		bad "$f: damage.py failed: $(tail -n1 "$W/facts")"
		rm -f "$core"
		continue
	fi
	echo "info $f: $(tr '\n' ' ' <"$W/facts")"
	vmcore_checks "$f" "$core"
	for L in 1 31; do
		img=$W/$f-$L.img log=$W/$f-$L.log
		capture "$K" "$core" $L "$img" "$log"
		rc=$?
		if [ $rc = 0 ] && grep -q '^kdumpinit: dump complete' "$log" &&
			grep -qE '^kdumpinit: capture: [0-9]+ of [0-9]+ pages kept' "$log"; then
			ok "$f/d$L: capture complete, $(grep -m1 -oE '[0-9]+ of [0-9]+ pages kept' "$log")"
			k=$(grep -m1 -oE '[0-9]+ of [0-9]+ pages kept' "$log" | grep -oE '^[0-9]+')
			# Damage that hides what a page is makes the capture keep
			# it, and a kept page costs its compression: so besides the
			# clean capture at the same level, the time is set against a
			# clean capture keeping as many pages (between the clean
			# level-31 and level-1 times, linear in pages kept).
			echo "info $f/d$L: $secs s, $k pages kept; clean ${clean_secs[$L]} s (ratio $(awk -v a="$secs" -v b="${clean_secs[$L]}" 'BEGIN { printf "%.2f", a / b }')); a clean capture of as many pages $(awk -v a="$secs" -v k="$k" \
				-v k1="${clean_kept[1]}" -v k31="${clean_kept[31]}" -v t1="${clean_secs[1]}" -v t31="${clean_secs[31]}" \
				'BEGIN { f = (k1 > k31) ? (k - k31) / (k1 - k31) : 0; if (f < 0) f = 0; if (f > 1) f = 1
					t = t31 + f * (t1 - t31); printf "%.2f s (ratio %.2f)", t, a / t }')"
			if "$K" info "$img" >"$W/info" 2>&1 && grep -qE '^state +complete' "$W/info" &&
				grep -qE "^pages kept +$k " "$W/info"; then
				ok "$f/d$L: info reads the dump as complete, $k pages kept"
			else
				bad "$f/d$L: info: $(head -n2 "$W/info")"
			fi
			expect "$f" $L "$log" "$W/facts" "$img"
			[ "$L" != 31 ] || sealed_check "$f" "$core" "$k" "$img"
		else
			bad "$f/d$L: capture failed (exit $rc after $secs s): $(grep -E 'error|warning' "$log" | head -n 3 || tail -n 2 "$log" | tr '\n' ' ')"
		fi
		rm -f "$img"
		if [ ! -x "$KASAN" ]; then
			[ "$L" = 1 ] && skp "$f/asan" "$KASAN is not built (make asan-kdumpinit)"
			continue
		fi
		capture "$KASAN" "$core" $L "$img" "$log.asan"
		rc=$?
		if [ $rc = 0 ] && grep -q '^kdumpinit: dump complete' "$log.asan" &&
			! grep -qE 'ERROR: AddressSanitizer|runtime error' "$log.asan"; then
			ok "$f/d$L/asan: complete under ASan and UBSan ($secs s)"
		else
			# Say why even when the log has no error line (a signal, a
			# summary without "dump complete").
			bad "$f/d$L/asan: exit $rc after $secs s: $(grep -m1 -E 'ERROR|runtime error|error' "$log.asan" || tail -n 2 "$log.asan" | tr '\n' ' ')"
		fi
		rm -f "$img"
	done
	rm -f "$core"
done
finish
