#!/bin/bash
# The crash kernel's cost per CPU (`kdumpinit arm --cpus auto`):
# for each reservation, one QEMU run of tests/cycle/run.sh whose boot k
# arms the crash kernel with the k-th count of --cpus (default 1 .. --max-cpus)
# and crashes;
# then a table of what each crash kernel had: the CPUs it brought up, the
# kernel's own "Memory: ...K available" at boot, kdumpinit's MemAvailable
# when it planned the capture (its "plan:" line, after the modules and the
# kernel log), the workers it planned and its peak, and whether the
# capture completed (and was saved at the next boot). A measurement, not a
# test: it is not in make check and prints no verdict.
#
#   tests/cpus/measure.sh [--crashkernel "88M 256M"] [--max-cpus 8] [--cpus LIST]
#                         [--level 31] [--kernel-tree DIR] [--workdir DIR]
#                         [--table-only]
#
# --cpus LIST (comma list, e.g. 1,2,4,8) measures only those counts;
# --table-only prints the table from the runs already in --workdir.
#
# The image is the product's (kdumpinit the crash kernel's only init, no
# test init, no busybox: --raw none), no watchdog. The guest has
# --max-cpus vCPUs (TCG: slow, but memory does not depend on speed).
set -u
prog=tests/cpus/measure.sh
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
top=$(cd "$here/../.." && pwd)
cks="88M 256M" ncpu=8 level=31 ktree='' workdir=$top/build/cpus cpus='' tableonly=0
while [ $# -gt 0 ]; do
	case $1 in
	--crashkernel | --max-cpus | --level | --kernel-tree | --workdir | --cpus)
		[ $# -ge 2 ] || { echo "$prog: $1 needs a value" >&2; exit 2; } ;;
	esac
	case $1 in
	--crashkernel) cks=$2; shift ;;
	--max-cpus) ncpu=$2; shift ;;
	--cpus) cpus=$2; shift ;;
	--table-only) tableonly=1 ;;
	--level) level=$2; shift ;;
	--kernel-tree) ktree=$2; shift ;;
	--workdir) workdir=$2; shift ;;
	-h | --help) sed -n '2,23p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
	*) echo "$prog: unknown argument: $1" >&2; exit 2 ;;
	esac
	shift
done
case $ncpu in '' | *[!0-9]* | 0) echo "$prog: --max-cpus needs a number" >&2; exit 2 ;; esac
case $cpus in *[!0-9,]*) echo "$prog: --cpus needs a comma list of numbers" >&2; exit 2 ;; esac
[ -n "$cpus" ] || cpus=$(seq -s, 1 "$ncpu")
ncycles=$(echo "$cpus" | tr ',' '\n' | grep -c .)

# row: one table row from the log of boot k (its stage 1, then
# its crash kernel) and boot k+1's (the save).
row() {	# CK K LOG NEXTLOG
	local ck=$1 k=$2 log=$3 next=$4 crash armed up kmem avail workers peak ok saved why
	crash=$(sed -n '/sysrq triggered crash/,$p' "$log")
	armed=$(grep -a -o 'cycle-arm: kdumpinit: crash kernel armed.*' "$log" | grep -o 'nr_cpus=[0-9]*' | head -n 1)
	up=$(echo "$crash" | grep -a -o 'smp: Brought up [0-9]* nodes\{0,1\}, [0-9]* CPUs\{0,1\}' | head -n 1 | grep -o '[0-9]* CPUs\{0,1\}$' | cut -d' ' -f1)
	# The kernel's boot-time "Memory: A/T available (... R reserved": R
	# holds the per-CPU areas (A moves with when the initramfs is freed).
	kmem=$(echo "$crash" | grep -a -o 'Memory: [0-9]*K/[0-9]*K available.*K reserved' | head -n 1 |
		sed 's/Memory: [0-9]*K\/\([0-9]*\)K.* \([0-9]*\)K reserved/\1 \2/' | awk '{ printf "%d/%d", $2, $1 }')
	avail=$(echo "$crash" | grep -a -o 'kdumpinit: plan: MemAvailable [0-9]* MiB' | head -n 1 | grep -o "[0-9]* MiB" | cut -d' ' -f1)
	workers=$(echo "$crash" | grep -a -o 'kdumpinit: plan: MemAvailable [0-9]* MiB; [0-9]* workers\{0,1\}[^,]*' | head -n 1 | sed 's/.*MiB; //')
	peak=$(echo "$crash" | grep -a -o 'peak memory [0-9.]* MiB' | head -n 1 | grep -o "[0-9.]* MiB" | cut -d' ' -f1)
	ok=no
	echo "$crash" | grep -a -q 'kdumpinit: dump complete on' && ok=yes
	saved=-
	[ -f "$next" ] && saved="exit $(grep -a -o 'cycle-stage1: boot [0-9]*: save exit [0-9]*' "$next" | grep -o '[0-9]*$')"
	if [ "$ok" = no ]; then
		# Why not: the crash kernel's own panic, else kdumpinit's first error.
		why=$(echo "$crash" | grep -a -o 'Kernel panic - not syncing: .*' | grep -v 'sysrq triggered' | head -n 1)
		[ -n "$why" ] || why=$(echo "$crash" | grep -a -o 'kdumpinit: error: .*' | head -n 1)
		ok="no (${why:-no reboot line}${why:+; $(echo "$crash" | grep -a -c 'invoked oom-killer') oom-killer runs})"
	fi
	printf '| %s | %s | %s | %s KiB | %s MiB | %s | %s MiB | %s | %s |\n' "$ck" "${armed#nr_cpus=}" "${up:--}" \
		"${kmem:--}" "${avail:--}" "${workers:--}" "${peak:--}" "$ok" "$saved"
}

mkdir -p "$workdir"
t0=$(date +%s)
for ck in $cks; do
	[ "$tableonly" = 0 ] || break
	w=$workdir/$ck${ktree:+-$(basename "$ktree")}
	echo "$prog: crashkernel=$ck, nr_cpus $cpus, -smp $ncpu, level $level (log: $w/run.out)"
	bash "$top/tests/cycle/run.sh" --workdir "$w" --cycles "$ncycles" --cpus "$cpus" --smp "$ncpu" \
		--crashkernel "$ck" --raw none --watchdog 0 --level "$level" --timeout $((ncycles * 300)) \
		${ktree:+--kernel-tree "$ktree"} >"$w.out" 2>&1
	mv -f "$w.out" "$w/run.out" 2>/dev/null
done
kver=$(grep -a -h -o 'kernel [0-9][^ ,]*' "$workdir"/*/boot1.log 2>/dev/null | head -n 1)
echo
echo "Crash kernel memory per CPU ($kver; level $level; kdumpinit $(git -C "$top" describe --always --dirty 2>/dev/null))"
echo
echo "| crashkernel | nr_cpus | CPUs up | kernel at boot: reserved/total | MemAvailable at kdumpinit's plan | workers | capture peak | capture complete | next boot's save |"
echo "|---|---|---|---|---|---|---|---|---|"
for ck in $cks; do
	w=$workdir/$ck${ktree:+-$(basename "$ktree")}
	k=1
	while [ -f "$w/boot$k.log" ] && grep -a -q 'sysrq triggered crash' "$w/boot$k.log"; do
		row "$ck" "$k" "$w/boot$k.log" "$w/boot$((k + 1)).log"
		k=$((k + 1))
	done
done
echo
echo "($(($(date +%s) - t0)) s)"
