#!/bin/bash
# The soak: many fresh crashes, not a few. Every boot lays out
# memory differently, and a bug in what the capture reads from a dump (a
# pointer near the top of the address space, an address sum that wraps)
# shows on some crashes only: three of nine fresh crashes hung the
# debugger-page finder of early December, while the stored vmcores of
# the other suites all passed. So each crash here is new: a guest of one
# of Debian's kernels booted with a memory load drawn from its own seed
# (tests/e2e/run.sh --seed, tests/e2e/seedload.sh), crashed with sysrq.
#
#   tests/soak/run.sh [--crashes N] [--kernels "6.1 6.12 7.3 arm64-6.1"]
#                     [--mems "1G 1536M"] [--levels "1 31"] [--timeout SEC]
#                     [--stall SEC] [--raw-only] [--old BIN] [--workdir DIR]
#
# The kernels take turns (crash i gets kernel i + SOAK_SEED mod their
# number); the
# guest's memory and the crash kernel's dump level are drawn from the
# crash's seed among --mems and --levels. Each crash's seed comes from
# the soak's: SOAK_SEED=S (printed at the start; random when not given)
# runs the same crashes again, and SOAK_CRASHES="7.3:123 arm64-6.1:456"
# runs exactly those (KERNEL:SEED, as the case names print them).
#
# Checks per crash (NAME is KERNEL-sSEED):
#   NAME.guest        tests/e2e/run.sh (or tests/e2e-arm64/run.sh) passed
#                     every check of its own on the crash: vmcmp at level 1,
#                     the save byte for byte a host capture's at level 31
#   NAME.guest-complete  the crash kernel's capture: "dump complete" and a
#                     final action on its console, info says complete
#                     (exit 0), no "no progress" line (a stall, even one
#                     recovered from, is a failure here)
#   NAME.guest-bound  QEMU ended by itself within --timeout, and kdumpinit
#                     took at most GUEST_BOUND s (120) from its start to
#                     its final action
#   NAME.raw          the raw copy of /proc/vmcore was taken
#   NAME.host-l1, NAME.host-l31  `kdumpinit capture --vmcore RAW` on this
#                     host ended within HOST_BOUND s (120, under timeout),
#                     exit 0, and info on what it wrote says complete
# With --raw-only the crash kernel only takes the raw copy (no guest
# checks): the quick way to collect many crashes for the host checks.
#
# A crash with a failed check keeps its raw vmcore, console log and
# outputs under build/soak/failed/NAME.* (the path is printed; they are
# GBs, never committed). --old BIN also runs BIN (an older build) on each
# raw vmcore, level 31 under `timeout 60`, and says what it did on a
# "note" line (not a check: the old code is expected to hang on some);
# the raw vmcores it hangs on are kept under build/soak/old-hangs/.
# Every crash adds a line to build/soak/results.tsv.
#
# --stall SEC: kdumpinit.stall=SEC in the crash kernel (e2e.stall), so
# that a capture stuck before its pages gives up sooner than its 300 s.
set -uo pipefail

# The whole script is one compound command, read before it runs: a soak
# takes an hour, and an edit to this file meanwhile must not change it.
{
prog=soak
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
top=$(cd "$here/../.." && pwd)

crashes=4 kernels="6.1 6.12 7.3 arm64-6.1" mems="1G" levels="1 31" tmo=600 stall='' rawonly=0 old=''
workdir=$top/build/soak/work
while [ $# -gt 0 ]; do
	case $1 in
	--crashes | --kernels | --mems | --levels | --timeout | --stall | --old | --workdir)
		[ $# -ge 2 ] || { echo "$prog: $1 needs a value" >&2; exit 2; } ;;
	esac
	case $1 in
	--crashes) crashes=$2; shift ;;
	--kernels) kernels=$2; shift ;;
	--mems) mems=$2; shift ;;
	--levels) levels=$2; shift ;;
	--timeout) tmo=$2; shift ;;
	--stall) stall=$2; shift ;;
	--raw-only) rawonly=1 ;;
	--old) old=$(realpath "$2"); shift ;;
	--workdir) workdir=$2; shift ;;
	-h | --help) sed -n '2,50p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
	*) echo "$prog: unknown argument: $1" >&2; exit 2 ;;
	esac
	shift
done
case $crashes in '' | *[!0-9]*) echo "$prog: --crashes needs a number" >&2; exit 2 ;; esac
for k in $kernels; do
	case $k in 6.1 | 6.12 | 6.18 | 7.3 | arm64-6.1) ;; *) echo "$prog: unknown kernel $k (6.1 6.12 6.18 7.3 arm64-6.1)" >&2; exit 2 ;; esac
done
[ -z "$old" ] || [ -x "$old" ] || { echo "$prog: --old $old is not executable" >&2; exit 2; }

kdumpinit=${E2E_KDUMPINIT:-$top/build/kdumpinit}
soakdir=$top/build/soak
faildir=$soakdir/failed hangdir=$soakdir/old-hangs results=$soakdir/results.tsv
guest_bound=${GUEST_BOUND:-120} host_bound=${HOST_BOUND:-120}
mkdir -p "$workdir" "$faildir" "$soakdir" || { echo "$prog: cannot create $workdir" >&2; exit 1; }
[ -x "$kdumpinit" ] || { echo "$prog: no $kdumpinit (make)" >&2; exit 1; }
# The arm64 guests' binary: make ARCH=arm64 (as suite arm64 does), when
# an arm64 crash is to run and no other build was named.
case " $kernels ${SOAK_CRASHES:-} " in
*" arm64-6.1"*)
	if [ -z "${E2E_KDUMPINIT_ARM64:-}" ] && [ ! -x "$top/build/arm64/kdumpinit" ]; then
		make -C "$top" --no-print-directory -s ARCH=arm64 >"$soakdir/arm64-make.log" 2>&1 ||
			echo "$prog: make ARCH=arm64 failed ($soakdir/arm64-make.log): the arm64 crashes will fail"
	fi ;;
esac
# The binary the host checks run: a snapshot, so that a rebuild during the
# soak's minutes does not mix versions.
cp -f "$kdumpinit" "$soakdir/kdumpinit.bin" && kdumpinit=$soakdir/kdumpinit.bin

npass=0 nfail=0 nskip=0
ok() { echo "ok $1"; npass=$((npass + 1)); }
bad() { echo "FAIL $1: $2"; nfail=$((nfail + 1)); crash_failed=1; }
skip() { echo "skip $1: $2"; nskip=$((nskip + 1)); }
now() { date +%s.%N; }
since() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.1f", b - a }'; }

# hashnum WORDS: a number in 1..999999999 from sha256 of WORDS (well
# mixed: nearby inputs give unrelated numbers).
hashnum() {
	local h
	h=$(printf '%s' "$*" | sha256sum | cut -c1-12)
	echo $(( (16#$h % 999999999) + 1 ))
}

# The crashes: KERNEL:SEED words.
if [ -n "${SOAK_CRASHES:-}" ]; then
	list=$SOAK_CRASHES
	echo "soak: SOAK_CRASHES=\"$list\""
else
	master=${SOAK_SEED:-$(( (RANDOM << 15 | RANDOM) % 999999 + 1 ))}
	case $master in *[!0-9]*) echo "$prog: SOAK_SEED is a number" >&2; exit 2 ;; esac
	echo "soak: SOAK_SEED=$master ($crashes crashes over: $kernels; memory: $mems; levels: $levels)"
	set -- $kernels
	nk=$#
	list=
	for ((i = 0; i < crashes; i++)); do
		# The turns start where the soak's seed says: a soak with fewer
		# crashes than kernels (make check's) covers them all over runs.
		set -- $kernels
		shift $(((i + master) % nk))
		# A hash of the soak's seed and the crash's index: every crash a
		# seed of its own, the same for the same SOAK_SEED.
		list="$list $1:$(hashnum "soak $master $i")"
	done
fi

# pick SEED WHAT WORDS...: one of WORDS, drawn from SEED and WHAT (the
# guest's size and the level drawn apart).
pick() {
	local s
	s=$(hashnum "$1 $2")
	shift 2
	shift $((s % $#))
	echo "$1"
}

tree_of() {	# VER: the extracted Debian kernel tree (get-kernel.sh), or nothing
	"$top/tests/filter-makedumpfile/get-kernel.sh" "$1" 2>"$workdir/get-kernel-$1.err" | sed -n 's/^MODROOT=//p'
}

# host_check NAME RAW LEVEL: the host capture of the raw copy.
host_check() {
	local name=$1 raw=$2 lv=$3 out=$workdir/host-l$3.img t rc d st
	rm -f "$out"
	t=$(now)
	timeout "$host_bound" "$kdumpinit" capture --vmcore "$raw" --output "$out" --level "$lv" \
		>"$workdir/host-l$lv.out" 2>&1
	rc=$? d=$(since "$t")
	host_t[$lv]=$d
	if [ $rc = 124 ]; then
		bad "$name.host-l$lv" "capture --level $lv did not end within ${host_bound} s (hang): last lines: $(tail -n 2 "$workdir/host-l$lv.out" | tr '\n' ' ')"
		host_r[$lv]=hang
		return
	fi
	if [ $rc != 0 ]; then
		bad "$name.host-l$lv" "capture --level $lv exited $rc after ${d} s: $(tail -n 2 "$workdir/host-l$lv.out" | tr '\n' ' ')"
		host_r[$lv]=exit$rc
		return
	fi
	"$kdumpinit" info "$out" >"$workdir/host-l$lv.info" 2>&1
	rc=$?
	st=$(grep -m1 '^state' "$workdir/host-l$lv.info" | tr -s ' ')
	if [ $rc = 0 ] && [[ $st == "state complete"* ]]; then
		ok "$name.host-l$lv"
		host_r[$lv]=ok
	else
		bad "$name.host-l$lv" "info on the capture exited $rc: '$st'"
		host_r[$lv]=info$rc
	fi
	say_note "$name: host capture level $lv: ${d} s, $(grep -a -m1 -o 'debugger pages first: [0-9]* pages' "$workdir/host-l$lv.out" || echo 'no debugger pages line')"
	rm -f "$out"
}
say_note() { echo "note $*"; }

# old_check NAME RAW: what the older build does with the same raw copy.
old_check() {
	local name=$1 raw=$2 t rc d
	rm -f "$workdir/old.img"
	t=$(now)
	timeout 60 "$old" capture --vmcore "$raw" --output "$workdir/old.img" --level 31 >"$workdir/old.out" 2>&1
	rc=$? d=$(since "$t")
	rm -f "$workdir/old.img"
	case $rc in
	0) old_r=ok say=complete ;;
	124) old_r=hang say="hangs (no end within 60 s)" ;;
	*) old_r=exit$rc say="exits $rc" ;;
	esac
	say_note "$name: the old binary ($old) at level 31 $say after ${d} s"
	if [ "$old_r" = hang ]; then
		mkdir -p "$hangdir"
		cp --sparse=always "$raw" "$hangdir/$name.vmcore" && say_note "$name: kept $hangdir/$name.vmcore"
		cp -f "$workdir/run.log" "$hangdir/$name.run.log" 2>/dev/null
	fi
}

# guest_checks NAME: the crash kernel's side, from the e2e harness's
# outputs in $workdir/e2e.
guest_checks() {
	local name=$1 w=$workdir/e2e f kd fin st
	if [ "$run_rc" = 0 ] && grep -Eq '^[0-9]+ passed, 0 failed' "$workdir/run.log"; then
		ok "$name.guest"
	else
		f=$(grep -a -m1 '^FAIL: ' "$workdir/run.log")
		bad "$name.guest" "the e2e harness exited $run_rc: ${f:-$(tail -n 1 "$workdir/run.log")}"
	fi
	st=$(grep -m1 '^state' "$w/info.out" 2>/dev/null | tr -s ' ')
	if grep -a -q "kdumpinit: .*no progress for" "$w/crash-console.log" 2>/dev/null; then
		bad "$name.guest-complete" "the capture stalled: $(grep -a -m1 -o 'kdumpinit: .*no progress for.*' "$w/crash-console.log" | cut -c1-160)"
	elif grep -a -q "kdumpinit: dump complete on" "$w/crash-console.log" 2>/dev/null &&
		grep -a -q "kdumpinit: final action: " "$w/crash-console.log" && [[ $st == "state complete"* ]]; then
		ok "$name.guest-complete"
	else
		bad "$name.guest-complete" "no 'dump complete' and final action on the console, or info says '${st:-nothing}'; last: $(grep -a 'kdumpinit:' "$w/crash-console.log" 2>/dev/null | tail -n 1 | cut -c1-160)"
	fi
	# Seconds since QEMU started, from the harness's milestones.
	kd=$(awk '$1 == "kdstart" { print $2 }' "$w/milestones.last" 2>/dev/null)
	fin=$(awk '$1 == "reboot" || $1 == "final" { print $2 }' "$w/milestones.last" 2>/dev/null | tail -n 1)
	if grep -a -q "QEMU did not exit within" "$workdir/run.log"; then
		bad "$name.guest-bound" "QEMU did not end within ${tmo} s"
	elif [ -n "$kd" ] && [ -n "$fin" ] && awk -v a="$kd" -v b="$fin" -v m="$guest_bound" 'BEGIN { exit !(b - a <= m) }'; then
		ok "$name.guest-bound"
		guest_s=$(awk -v a="$kd" -v b="$fin" 'BEGIN { printf "%.1f", b - a }')
	else
		bad "$name.guest-bound" "kdumpinit from its start to its final action: '${kd:-?}' to '${fin:-?}' s after QEMU started (bound ${guest_bound} s)"
	fi
}

printf 'when\tname\tkernel\tseed\tmem\tlevel\tguest\tguest_s\thost_l1\thost_l1_s\thost_l31\thost_l31_s\told\n' >"$results.new"
[ -f "$results" ] || mv "$results.new" "$results"
rm -f "$results.new"
ncrash=0 nbad=0 nold=0 t_all=$(now)
declare -A trees=()
for c in $list; do
	k=${c%%:*} seed=${c#*:}
	case $seed in '' | *[!0-9]*) echo "$prog: bad crash '$c' (KERNEL:SEED)" >&2; exit 2 ;; esac
	name=$k-s$seed
	mem=$(pick "$seed" mem $mems) level=$(pick "$seed" level $levels)
	# The arm64 harness checks every page (vmcmp): level 1 only.
	[ "$k" != arm64-6.1 ] || level=1
	ncrash=$((ncrash + 1)) crash_failed=0 guest_s=- old_r=-
	declare -A host_r=([1]=- [31]=-) host_t=([1]=- [31]=-)
	echo "== crash $ncrash: $name (guest $mem, crash kernel level $level$([ $rawonly = 1 ] && echo ', raw copy only'))"
	rm -rf "$workdir/e2e" "$workdir/raw.vmcore"
	raw=$workdir/raw.vmcore
	extra=()
	[ $rawonly = 1 ] && extra+=(--raw-only)
	[ -z "$stall" ] || extra+=(--append-first "e2e.stall=$stall")
	t=$(now)
	case $k in
	arm64-6.1)
		# The arm64 harness has no stall word; its own makedumpfile
		# comparison is left to the e2e-arm64 suite.
		[ $rawonly = 0 ] || { echo "note $name: the arm64 harness has no --raw-only: a full crash"; }
		bash "$top/tests/e2e-arm64/run.sh" --seed "$seed" --mem "$mem" --timeout "$tmo" --no-makedumpfile \
			--raw-out "$raw" --workdir "$workdir/e2e" >"$workdir/run.log" 2>&1
		run_rc=$?
		;;
	*)
		kt=()
		if [ "$k" != 6.1 ]; then
			[ -n "${trees[$k]:-}" ] || trees[$k]=$(tree_of "$k")
			if [ -z "${trees[$k]}" ]; then
				bad "$name.guest" "Debian's $k kernel could not be fetched: $(tail -n 1 "$workdir/get-kernel-$k.err")"
				continue
			fi
			kt=(--kernel-tree "${trees[$k]}")
		fi
		bash "$top/tests/e2e/run.sh" --cpu max,la57=off "${kt[@]}" --seed "$seed" --mem "$mem" --level "$level" \
			--timeout "$tmo" --raw-out "$raw" --workdir "$workdir/e2e" "${extra[@]}" >"$workdir/run.log" 2>&1
		run_rc=$?
		[ $rawonly = 1 ] && [ "$run_rc" != 0 ] && bad "$name.guest" "the e2e harness (raw copy only) exited $run_rc: $(grep -a -m1 '^FAIL: ' "$workdir/run.log")"
		;;
	esac
	d_run=$(since "$t")
	echo "note $name: $(grep -a -m1 -o 'seedload: seed .*' "$workdir/run.log" || echo 'no seedload line'); e2e harness ${d_run} s"
	[ $rawonly = 1 ] && [ "$k" != arm64-6.1 ] || guest_checks "$name"
	if [ -s "$raw" ]; then
		ok "$name.raw"
		host_check "$name" "$raw" 1
		host_check "$name" "$raw" 31
		[ -z "$old" ] || { old_check "$name" "$raw"; [ "$old_r" != hang ] || nold=$((nold + 1)); }
	else
		bad "$name.raw" "no raw copy of /proc/vmcore: $(grep -a -m1 '^FAIL: ' "$workdir/run.log")"
	fi
	g=ok
	[ $crash_failed = 0 ] || g=FAIL
	printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$(date -u +%FT%TZ)" "$name" "$k" "$seed" "$mem" \
		"$([ $rawonly = 1 ] && echo raw || echo "$level")" "$g" "$guest_s" "${host_r[1]}" "${host_t[1]}" \
		"${host_r[31]}" "${host_t[31]}" "$old_r" >>"$results"
	if [ $crash_failed = 1 ]; then
		nbad=$((nbad + 1))
		# Kept whole: the raw copy reproduces a host-side failure, and
		# the console and outputs say what the crash kernel did.
		for f in run.log e2e/console.log e2e/info.out host-l1.out host-l31.out; do
			[ -f "$workdir/$f" ] && cp -f "$workdir/$f" "$faildir/$name.${f//\//-}"
		done
		if [ -s "$raw" ]; then
			cp --sparse=always "$raw" "$faildir/$name.vmcore" &&
				echo "note $name: failed; its raw vmcore is kept: $faildir/$name.vmcore"
		else
			echo "note $name: failed, with no raw vmcore; its logs are kept: $faildir/$name.*"
		fi
	fi
	# The big files go: a soak of dozens would fill the disk.
	rm -rf "$workdir/e2e" "$raw"
done

echo "soak: $ncrash crashes in $(since "$t_all") s, $nbad with a failed check$([ -z "$old" ] || echo ", $nold hang the old binary ($old)"); $results"
echo "$npass passed, $nfail failed, $nskip skipped"
[ $nfail = 0 ]
exit
}
