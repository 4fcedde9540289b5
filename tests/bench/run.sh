#!/bin/bash
# make bench: kdumpinit's capture side by side with makedumpfile in the same
# run, on the same vmcore files, alternating the tools and taking medians.
# Reported as ratios; nothing here asserts a time.
#
# Sections (BENCH="cpu disk memmap scale memory sealed order", the default, runs them all in
# that order; `make bench BENCH=cpu` or BENCH="cpu scale" picks some):
#   cpu     the real vmcores copied into RAM and every output in RAM: what
#           each tool costs in CPU. The speed-up from one CPU to two at
#           levels 1 and 31 (kdumpinit --threads 1 held to one CPU with
#           taskset, against --threads 2), as a fraction of this machine's
#           own limit measured in the same rounds (two independent `lz4 -1`
#           over the same 300 MiB against one: one CPU against two; each
#           writing its output into RAM as every run here does, and, shown
#           beside it, discarding it), the
#           1 -> 2 thread speed-up unpinned, and makedumpfile -l's time
#           over kdumpinit's with 2 threads
#   disk    the real vmcores, outputs synced to $BENCH_OUT, every tool
#           (makedumpfile -l, -c, --num-threads 2, cat, lz4 -1) and the
#           disk's floor for kdumpinit's output
#   memmap  the memory map's exclusion on the real vmcores in RAM, level
#           31: kdumpinit --memmap keep and exclude at 1 and 2 threads
#           beside makedumpfile -l and -l -e (docs/FILTERING.md §12)
#   scale   synthetic kernels of 64 and 256 GiB (mkvmcore --mm 6.1 --mix ref
#           --no-expect: the class mix of the real 6 GiB guest, sparse
#           files), level 31, outputs in RAM: the filter's ns/pfn, time at
#           1 and 2 threads with the memory map kept and excluded, peak
#           RSS, makedumpfile -l and -l -e on the 64 GiB kernel, and a
#           projection to 2 and 32 TB beside SGI's makedumpfile -e figures
#   memory  peak RSS as described memory grows (sparse vmcores without
#           struct pages, level 1)
#   sealed  sealed dumps (capture --pubkey, AEGIS-256 per chunk) on
#           the real vmcores in RAM, outputs in RAM: each capture at levels
#           1 and 31, 1 and 2 threads, without and with the key, alternating
#           (the order swapped every round); sealed time / plain time per
#           cell (goal: <= 1.05 at levels 1 and 31, 1 and 2 threads), output sizes and the 32-byte
#           tag per sealed chunk, MB sealed per CPU second the sealing
#           added; and the reading side, save --key against save of the
#           unsealed dump (--compress none at levels 1 and 31, the default
#           zlib at 31)
#   order   what writing the debugger's pages first costs: each capture at
#           levels 1 and 31, 1 and 2 threads, as it runs (the finder, then
#           the startup tier, the rest of the debugger's pages, the rest)
#           and in plain pfn order (KDUMPINIT_TEST_HOOK=pfn-order: no
#           finder), alternating, the order swapped every round, on the
#           real vmcores in RAM, outputs in RAM; ordered time / pfn-order
#           time per cell (goal: <= 1.05)
# About 17 minutes on a quiet 2-core machine once the inputs exist (cpu 2,
# disk 4, scale 5, memory 1, sealed 5); the first run also crashes two guests under
# QEMU to make the real vmcores (about 8 minutes).
#
# Inputs (made by the e2e harness when missing, then kept):
#   $BENCH_VMCORE   default build/bench/raw-1536m.vmcore (1.5 GiB guest,
#                   about 2 minutes under TCG to make)
#   $BENCH_LARGE    default build/bench/raw-6g.vmcore (6 GiB guest, about
#                   6 minutes to make); BENCH_NO_LARGE=1 skips it
#   $BENCH_OUT      where the disk section's outputs and the scale
#                   section's synthetic vmcores go (default build/bench: a
#                   real disk, so every tool's time includes syncing its
#                   output)
#   $BENCH_ROUNDS   rounds per input (default 5: this VM's disk is noisy)
#   $BENCH_CPU_ROUNDS  rounds per input of the cpu section (default 9: its
#                   runs are short, a tenth of a second at level 31, and
#                   this VM's memory makes any one of them up to 30 %
#                   slower; a round of both inputs takes about 20 s)
#   $BENCH_QUICK=1  memory section stops at 32 GiB
#   $BENCH_SCALE_SIZES   default "64G 256G"
#   $BENCH_SCALE_ROUNDS  default 1 (a 256 GiB level-31 capture takes about
#                   a minute a thread count on this machine)
#   $BENCH_SEALED_ROUNDS  rounds per input of the sealed section (default
#                   9, as cpu: its runs are a tenth of a second to 2 s)
#   $BENCH_SPEEDUPS a cpu.speedups file of an earlier cpu section, for the
#                   scale section's projection when cpu does not run
#   $BENCH_KEEP=1   keep the scale section's synthetic vmcores
#   $BENCH_HOLD_FREE=1  hold back this VM's free-page reporting for the run
#                   (see hold_free below; root; restored at the end)
#   (the scale section needs about 4 % of the memory it describes in
#   $BENCH_OUT: 10 GB for 256 GiB; BENCH_OUT=/dev/shm/x puts them in RAM)
#   $MMBENCH        the struct-page pass timed alone (tests/tools/mmbench,
#                   default build/tools/mmbench when built); without it the
#                   filter's ns/pfn is the whole level-31 capture's
# On the large input only kdumpinit and makedumpfile -l run: makedumpfile
# -c and --num-threads 2 take minutes per run there, and their ratios are
# shown on the first input.
set -u
cd "$(dirname "$0")/../.."
BUILD=${BUILD:-build}
K=$PWD/$BUILD/kdumpinit
MK=$PWD/$BUILD/tools/mkvmcore
out=${BENCH_OUT:-$PWD/$BUILD/bench}	# BENCH_OUT=/dev/shm/x: outputs in RAM, CPU-bound
ROUNDS=${BENCH_ROUNDS:-5}
CPU_ROUNDS=${BENCH_CPU_ROUNDS:-9}
mkdir -p "$out"
vmcore=${BENCH_VMCORE:-$BUILD/bench/raw-1536m.vmcore}
large=${BENCH_LARGE:-$BUILD/bench/raw-6g.vmcore}

# make_input FILE MEM: a guest of MEM crashed under the e2e harness, its
# /proc/vmcore copied raw.
make_input() {
	echo "bench: $1 missing: crashing a $2 guest once to make it"
	tests/e2e/run.sh --cpu max,la57=off --mem "$2" --raw-only --raw-out "$1" \
		--workdir "$out/e2e-$2" --timeout 1800 >"$out/e2e-$2.log" 2>&1 ||
		{ echo "bench: could not make $1 (see $out/e2e-$2.log)"; rm -f "$1"; return 1; }
	rm -rf "$out/e2e-$2"
}
SECTIONS=${BENCH:-cpu disk memmap scale memory sealed order}
for sec in $SECTIONS; do
	case $sec in cpu | disk | memmap | scale | memory | sealed | order) ;;
	*) echo "bench: unknown section '$sec' (BENCH= cpu disk memmap scale memory sealed order)" >&2; exit 2 ;;
	esac
done
want() { case " $SECTIONS " in *" $1 "*) return 0 ;; esac; return 1; }
if want cpu || want disk || want memmap || want sealed; then
	[ -f "$vmcore" ] || make_input "$vmcore" 1536M || exit 1
	if [ ! -f "$large" ] && [ -z "${BENCH_NO_LARGE:-}" ]; then
		make_input "$large" 6G
	fi
fi
bench_t0=$(date +%s)

# BENCH_HOLD_FREE=1 (as root): hold back this VM's free-page reporting for
# the run. Its balloon hands memory back to the hypervisor as soon as it is
# freed (page_reporting min_free_ms 0), so every run here, which frees its
# output and buffers at the end, leaves the next one to fault them in from
# the host again: a run right after a large free took 1.22 s where the
# same run took 0.37 s in another round (tests/bench/README.md).
# Held, freed memory stays in the guest for a minute. Off by default: the
# bench does not change the machine unless asked; the old values are put
# back when it ends.
hold_free() {
	local p=/sys/module/page_reporting/parameters
	[ "${BENCH_HOLD_FREE:-0}" = 1 ] || return 0
	if [ ! -w "$p/min_free_ms" ]; then
		echo "bench: BENCH_HOLD_FREE=1: no $p/min_free_ms to set here (or not root): nothing held"
		return 0
	fi
	held_ms=$(cat "$p/min_free_ms") held_mib=$(cat "$p/max_waiting_mib" 2>/dev/null || true)
	echo 60000 >"$p/min_free_ms" || return 0
	[ -n "$held_mib" ] && echo 8192 >"$p/max_waiting_mib" 2>/dev/null
	echo "bench: free-page reporting held (min_free_ms $held_ms -> 60000, max_waiting_mib" \
		"${held_mib:-?} -> 8192) until the bench ends"
}
release_free() {
	local p=/sys/module/page_reporting/parameters
	[ -n "${held_ms:-}" ] || return 0
	echo "$held_ms" >"$p/min_free_ms"
	[ -n "${held_mib:-}" ] && echo "$held_mib" >"$p/max_waiting_mib"
	echo "bench: free-page reporting restored (min_free_ms $held_ms)"
	held_ms=
}
# Whatever stops the bench: the machine as it was, no copies left in RAM.
ramdirs=
on_exit() {
	release_free
	[ -n "$ramdirs" ] && rm -rf $ramdirs
}
trap on_exit EXIT
trap 'exit 130' INT TERM
hold_free

# one NAME CMD...: runs CMD once, appends "NAME seconds peakKB bytes cpu"
# to $res. The output is $o; wall time from date (ms), peak RSS and the
# CPU seconds (user + system) from time.
one() {
	local name=$1 t0 t1 t
	shift
	rm -f "$o"
	sync
	t0=$(date +%s%N)
	local cpu=0 kb us ss
	if /usr/bin/time -o "$out/time" -f "%M %U %S" "$@" >/dev/null 2>"$out/err"; then
		t1=$(date +%s%N)
		read -r kb us ss < <(tail -n 1 "$out/time")
		t="$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.3f", (b - a) / 1e9 }') $kb"
		cpu=$(awk -v u="$us" -v s="$ss" 'BEGIN { printf "%.2f", u + s }')
	else
		t="fail 0"
		echo "bench: $name failed: $(tail -n 2 "$out/err" | tr '\n' ' ')" >&2
	fi
	echo "$name $t $(stat -c %s "$o" 2>/dev/null || echo 0) $cpu" >>"$res"
}

# kdumpinit fdatasyncs its dump before it reports success (a dump that is
# not on the disk is no dump); the others get the same `sync --data` so the
# comparison is like for like.
synced=$out/synced.sh
printf '#!/bin/bash\n"$@" && sync --data "${@: -1}"\n' >"$synced"
chmod +x "$synced"

median() { sort -n | awk '{a[NR]=$1} END {print (NR ? a[int((NR+1)/2)] : "nan")}'; }

# bench_file LABEL VMCORE [all|core|ram]: alternating rounds of every tool
# on one input. core: kdumpinit and makedumpfile -l only; ram: those, with
# $o in RAM, so that the disk is out of the picture (CPU-bound).
bench_file() {
	local label=$1 v=$2 all=${3:-all} lv r
	res=$out/$label.results
	: >"$res"
	cat "$v" >/dev/null	# all runs read from the page cache
	for r in $(seq "$ROUNDS"); do
		for lv in 1 31; do
			one "kdumpinit-l$lv-t1" "$K" capture --vmcore "$v" --output "$o" --level $lv --threads 1
			one "makedumpfile-l-d$lv" "$synced" makedumpfile -l -d $lv "$v" "$o"
			one "kdumpinit-l$lv-t2" "$K" capture --vmcore "$v" --output "$o" --level $lv --threads 2
			# The disk's floor for this output: the same bytes, copied
			# from the page cache and synced, no compression at all.
			if [ "$all" != ram ]; then
				[ "$r" = 1 ] && cp "$o" "$out/floor-l$lv"
				one "disk-floor-l$lv" sh -c "cat '$out/floor-l$lv' > '$o' && sync --data '$o'"
			fi
			[ "$all" = all ] || continue
			one "makedumpfile-c-d$lv" "$synced" makedumpfile -c -d $lv "$v" "$o"
			one "makedumpfile-l-d$lv-t2" "$synced" makedumpfile -l -d $lv --num-threads 2 "$v" "$o"
		done
		[ "$all" = ram ] && continue
		one cat sh -c "cat '$v' > '$o' && sync --data '$o'"
		one lz4-1 sh -c "lz4 -1 -q -c '$v' > '$o' && sync --data '$o'"
	done
	report "$label" "$v"
	rm -f "$o" "$out"/floor-l*
}

stat_of() {	# NAME FIELD(2=s,3=KB,4=bytes,5=CPU s) -> median
	awk -v n="$1" -v f="$2" '$1 == n && $2 != "fail" {print $f}' "$res" | median
}

# two_at_once ONE BOTH: what 2 CPUs give when one run takes ONE seconds and
# two of them at once BOTH (2 x ONE / BOTH).
two_at_once() { awk -v a="$1" -v b="$2" 'BEGIN { if (b > 0) printf "%.2f", 2 * a / b; else print "n/a" }'; }

ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (a > 0 && b > 0) printf "%.2f", a / b; else printf "n/a" }'; }

report() {	# LABEL VMCORE [table: the table alone]
	local size
	size=$(stat -c %s "$2")
	echo
	echo "== $1: $2 ($((size >> 20)) MiB), medians of $ROUNDS alternating runs"
	printf '%-26s %9s %9s %11s %8s\n' run seconds peak-MB output-MB CPU-s
	for n in kdumpinit-l1-cpu1 kdumpinit-l1-two kdumpinit-l1-t1 kdumpinit-l1-t2 kdumpinit-l1-t8 disk-floor-l1 makedumpfile-l-d1 \
		 makedumpfile-l-d1-t2 makedumpfile-c-d1 kdumpinit-l31-cpu1 kdumpinit-l31-two kdumpinit-l31-t1 kdumpinit-l31-t2 \
		 kdumpinit-l31-t8 disk-floor-l31 makedumpfile-l-d31 \
		 makedumpfile-l-d31-t2 makedumpfile-c-d31 cat lz4-1 lz4-one lz4-two lz4-ram-one lz4-ram-two; do
		[ "$(stat_of $n 2)" = nan ] && continue
		printf '%-26s %9s %9s %11s %8s\n' "$n" "$(stat_of $n 2)" \
			"$(awk -v k="$(stat_of $n 3)" 'BEGIN{printf "%.1f", k/1024}')" \
			"$(awk -v b="$(stat_of $n 4)" 'BEGIN{printf "%.1f", b/1048576}')" "$(stat_of $n 5)"
	done
	[ "${3:-}" = table ] && return
	local md1 md1t2 md31 k1 k1t2 k31 k31t2
	md1=$(stat_of makedumpfile-l-d1 2) md31=$(stat_of makedumpfile-l-d31 2)
	k1=$(stat_of kdumpinit-l1-t1 2) k1t2=$(stat_of kdumpinit-l1-t2 2)
	k31=$(stat_of kdumpinit-l31-t1 2) k31t2=$(stat_of kdumpinit-l31-t2 2)
	echo "ratios (makedumpfile -l time / kdumpinit time; >1 means kdumpinit is faster):"
	echo "  level 1, 1 thread:   $(ratio "$md1" "$k1")x   (target >= 1.5)"
	echo "  level 1, 2 threads:  $(ratio "$md1" "$k1t2")x   (target >= 2.5)"
	echo "  level 31, 1 thread:  $(ratio "$md31" "$k31")x   (target >= 2)"
	echo "  level 31, 2 threads: $(ratio "$md31" "$k31t2")x   (target >= 2)"
	echo "  output size, level 1 kdumpinit / makedumpfile -l: $(ratio "$(stat_of kdumpinit-l1-t1 4)" "$(stat_of makedumpfile-l-d1 4)")  (target <= 1.05)"
	echo "  output size, level 31 kdumpinit / makedumpfile -l: $(ratio "$(stat_of kdumpinit-l31-t1 4)" "$(stat_of makedumpfile-l-d31 4)")"
	# How close to the disk: the time to write kdumpinit's output bytes
	# alone, against the capture's.
	local f1 f31
	f1=$(stat_of disk-floor-l1 2) f31=$(stat_of disk-floor-l31 2)
	[ "$f1" = nan ] && return
	echo "  disk floor (writing the same output bytes, synced) / kdumpinit time, 2 threads:" \
		"level 1 $(ratio "$f1" "$k1t2"), level 31 $(ratio "$f31" "$k31t2")  (1.00 = as fast as the disk)"
}

# ---- cpu: the real vmcores, outputs in RAM -------------------------------

# The machine's CPU ticks so far, all and stolen (/proc/stat: time the
# hypervisor ran something else while this VM wanted the CPU).
cpu_ticks() { awk '$1 == "cpu" { t = 0; for (i = 2; i <= 9; i++) t += $i; print t, $9 }' /proc/stat; }

# How quiet the machine was over a guest's rounds, to tell a run whose
# limits and ratios are not this VM's own. Steal alone does not tell it:
# in one run of this section 2 CPUs gave 1.73x to compression alone in
# one guest's rounds and 1.39x in the next guest's, with steal at 0, and
# the pinned 1-thread capture, alone on its CPU, ran on it 83 % of its
# wall time and used 1.5x the CPU seconds of the next run's.
noise_note() {	# "TOTAL STEAL" before, after
	set -- $1 $2
	local w c lo hi
	w=$(stat_of kdumpinit-l1-cpu1 2) c=$(stat_of kdumpinit-l1-cpu1 5)
	read -r lo hi < <(awk '$1 == "lz4-one" && $2 != "fail" {
		if (!n++ || $2 < lo) lo = $2; if ($2 > hi) hi = $2 } END { print lo, hi }' "$res")
	awk -v t="$(($3 - $1))" -v s="$(($4 - $2))" -v w="$w" -v c="$c" -v lo="$lo" -v hi="$hi" 'BEGIN {
		printf "noise: the pinned 1-thread capture (level 1) was on its CPU %s of its wall time (about 100 %% when quiet);",
		    (w > 0 ? sprintf("%.0f %%", 100 * c / w) : "n/a")
		printf " lz4-one took %s-%s s over the rounds; host steal %s\n", lo, hi,
		    (t > 0 ? sprintf("%.1f %%", 100 * s / t) : "n/a") }'
}

# cpu_file LABEL VMCORE LZ4IN: alternating rounds of kdumpinit at 1 and 2
# threads and makedumpfile -l, levels 1 and 31, every output in RAM; in the
# same rounds, the machine's limit: lz4 -1 over LZ4IN once, then twice at
# the same time (two processes that share nothing: what 2 CPUs give here),
# its output written into RAM as every other run's is (the like for like,
# which the goal is held to), and discarded (compression alone).
# The limit is one CPU against two, so kdumpinit's like-for-like is
# --threads 1 held to one CPU (taskset) against --threads 2: unpinned,
# --threads 1 is not one CPU's work, as its I/O thread copies the output
# on the other CPU beside the worker.
cpu_file() {
	local label=$1 v=$2 lz=$3 lv r cpu1 cpu2
	local ROUNDS=$CPU_ROUNDS	# report's header too
	read -r cpu1 cpu2 _ < <(cpus_allowed)
	res=$out/$label.results
	: >"$res"
	cat "$v" "$lz" >/dev/null
	local st0
	st0=$(cpu_ticks)
	for r in $(seq "$ROUNDS"); do
		for lv in 1 31; do
			one "kdumpinit-l$lv-t1" "$K" capture --vmcore "$v" --output "$o" --level $lv --threads 1
			one "makedumpfile-l-d$lv" makedumpfile -l -d $lv "$v" "$o"
			one "kdumpinit-l$lv-t2" "$K" capture --vmcore "$v" --output "$o" --level $lv --threads 2
			# a wrong kdumpinit.threads: more workers than CPUs
			one "kdumpinit-l$lv-t8" "$K" capture --vmcore "$v" --output "$o" --level $lv --threads 8
			# These two last: "two" frees twice the output at once, and
			# the run after it may find that memory handed back to the
			# hypervisor (this VM's balloon reports free pages) and pay
			# to fault it in again (seen: --threads 8 1.3-1.9x slower
			# than 2 right after it, with 0.5 s more system time)
			one "kdumpinit-l$lv-cpu1" taskset -c "$cpu1" "$K" capture --vmcore "$v" --output "$o" \
				--level $lv --threads 1
			# kdumpinit's own limit: two such captures at once, each on
			# its own CPU, sharing nothing but the machine
			[ -n "$cpu2" ] && one "kdumpinit-l$lv-two" sh -c "rm -f '$o.a' '$o.b'
				taskset -c $cpu1 '$K' capture --vmcore '$v' --output '$o.a' --level $lv --threads 1 & a=\$!
				taskset -c $cpu2 '$K' capture --vmcore '$v' --output '$o.b' --level $lv --threads 1 & b=\$!
				wait \$a && wait \$b; r=\$?; rm -f '$o.a' '$o.b'; exit \$r"
		done
		one lz4-one sh -c "lz4 -1 -q -c '$lz' >/dev/null"
		one lz4-two sh -c "lz4 -1 -q -c '$lz' >/dev/null & lz4 -1 -q -c '$lz' >/dev/null & wait"
		# The same with the output written into RAM, as every run
		# above writes its own: what 2 CPUs give to work that fills
		# fresh pages of tmpfs as it goes (on this VM, a good deal
		# less than to compression alone).
		one lz4-ram-one sh -c "lz4 -1 -q -c '$lz' >'$o'"
		one lz4-ram-two sh -c "rm -f '$o.a' '$o.b'; lz4 -1 -q -c '$lz' >'$o.a' & a=\$!
			lz4 -1 -q -c '$lz' >'$o.b' & b=\$!; wait \$a && wait \$b; r=\$?; rm -f '$o.a' '$o.b'; exit \$r"
	done
	report "$label" "$v" table
	noise_note "$st0" "$(cpu_ticks)"
	local l1 l2 limit r1 r2 rlimit k1 k1t2 k31 k31t2 md1 md31 s1 s31
	l1=$(stat_of lz4-one 2) l2=$(stat_of lz4-two 2)
	limit=$(two_at_once "$l1" "$l2")
	r1=$(stat_of lz4-ram-one 2) r2=$(stat_of lz4-ram-two 2)
	rlimit=$(two_at_once "$r1" "$r2")
	k1=$(stat_of kdumpinit-l1-t1 2) k1t2=$(stat_of kdumpinit-l1-t2 2)
	k31=$(stat_of kdumpinit-l31-t1 2) k31t2=$(stat_of kdumpinit-l31-t2 2)
	md1=$(stat_of makedumpfile-l-d1 2) md31=$(stat_of makedumpfile-l-d31 2)
	s1=$(ratio "$k1" "$k1t2") s31=$(ratio "$k31" "$k31t2")
	local c1 c31
	c1=$(ratio "$(stat_of kdumpinit-l1-cpu1 2)" "$k1t2") c31=$(ratio "$(stat_of kdumpinit-l31-cpu1 2)" "$k31t2")
	echo "machine limit: lz4 -1 over $(($(stat -c %s "$lz") >> 20)) MiB, one process against two at once:"
	echo "  its output written into RAM, as every run here writes its own: one $r1 s, two $r2 s:" \
		"2 CPUs give ${rlimit}x (the goal's limit: like for like)"
	echo "  its output discarded (/dev/null), compression alone: one $l1 s, two $l2 s:" \
		"2 CPUs give ${limit}x"
	echo "speed-up, 1 CPU -> 2 CPUs: --threads 1 on CPU $cpu1 alone (taskset) / --threads 2" \
		"(goal: >= 95 % of the like-for-like limit):"
	printf '  level 1:  %sx = %s of the limit (%s of compression alone)\n' "$c1" "$(pct "$c1" "$rlimit")" \
		"$(pct "$c1" "$limit")"
	printf '  level 31: %sx = %s of the limit (%s of compression alone)\n' "$c31" "$(pct "$c31" "$rlimit")" \
		"$(pct "$c31" "$limit")"
	local tw1 tw31
	tw1=$(stat_of kdumpinit-l1-two 2) tw31=$(stat_of kdumpinit-l31-two 2)
	if [ "$tw1" != nan ]; then
		local o1 o31
		o1=$(two_at_once "$(stat_of kdumpinit-l1-cpu1 2)" "$tw1")
		o31=$(two_at_once "$(stat_of kdumpinit-l31-cpu1 2)" "$tw31")
		echo "kdumpinit's own limit: two 1-CPU captures at once (CPUs $cpu1 and $cpu2), against one alone:"
		printf '  level 1:  2 CPUs give %sx; the 2-thread capture reaches %s of it\n' "$o1" "$(pct "$c1" "$o1")"
		printf '  level 31: 2 CPUs give %sx; the 2-thread capture reaches %s of it\n' "$o31" "$(pct "$c31" "$o31")"
	fi
	echo "speed-up, 1 -> 2 threads, unpinned (--threads 1 already uses more than one CPU):"
	printf '  level 1:  %sx = %s of the limit; --threads 1 used %s CPUs (CPU time / wall time)\n' "$s1" \
		"$(pct "$s1" "$rlimit")" "$(ratio "$(stat_of kdumpinit-l1-t1 5)" "$k1")"
	printf '  level 31: %sx = %s of the limit; --threads 1 used %s CPUs\n' "$s31" \
		"$(pct "$s31" "$rlimit")" "$(ratio "$(stat_of kdumpinit-l31-t1 5)" "$k31")"
	echo "makedumpfile -l time / kdumpinit time with 2 threads (goal: >= 1.5x):"
	echo "  level 1:  $(ratio "$md1" "$k1t2")x"
	echo "  level 31: $(ratio "$md31" "$k31t2")x"
	echo "oversubscribed: --threads 8 time / --threads 2 time on $(nproc) CPUs (goal: <= 1.00, within noise):"
	echo "  level 1:  $(ratio "$(stat_of kdumpinit-l1-t8 2)" "$k1t2")"
	echo "  level 31: $(ratio "$(stat_of kdumpinit-l31-t8 2)" "$k31t2")"
	# for the scale section's model: the CPU speed-ups last
	# (the projection takes compression alone for its limit: the
	# higher one, so e comes out lower)
	echo "$label $s1 $s31 $limit $c1 $c31 $rlimit" >>"$out/cpu.speedups"
}

# The CPUs this script may run on, one per word (taskset and cpusets count).
cpus_allowed() {
	local r a b out=
	for r in $(awk '/^Cpus_allowed_list:/ {print $2}' /proc/self/status | tr , ' '); do
		a=${r%-*} b=${r#*-}
		out="$out $(seq -s ' ' "$a" "$b")"
	done
	echo $out
}

pct() { awk -v a="$1" -v b="$2" 'BEGIN { if (a > 0 && b > 0) printf "%.0f %%", 100 * a / b; else printf "n/a" }'; }

# in_ram FILE RAMDIR: prints a dense copy of FILE in RAMDIR when there is
# room (its size twice over, for the outputs, and 2 GiB to spare), else
# FILE.
# From the page cache alone the input is not all in RAM on a machine that
# reclaims proactively (this VM's DAMON pages out what was not touched for
# a minute): runs then wait on the disk, which is not the CPU's cost.
in_ram() {
	local size avail
	size=$(stat -c %s "$1")
	avail=$(( $(awk '/^MemAvailable:/ {print $2}' /proc/meminfo) * 1024 ))
	# Dense: the raw vmcores are sparse on disk (their zero pages are
	# holes), and a hole in tmpfs reads as the one zero page, which is
	# always in cache, until makedumpfile's mmap faults it in as real
	# memory; the tools would then each see another input. Read past the
	# page cache (O_DIRECT), or the file is in memory twice and the runs'
	# own allocations go through reclaim (seconds of system time at 6 GiB).
	if [ $((2 * size + (2 << 30))) -lt "$avail" ] &&
	   { dd if="$1" of="$2/vmcore" bs=4M iflag=direct status=none 2>/dev/null ||
	     cp --sparse=never "$1" "$2/vmcore" 2>/dev/null; }; then
		echo "$2/vmcore"
	else
		rm -f "$2/vmcore"
		echo "bench: no room to copy $1 into RAM: read from the page cache" >&2
		echo "$1"
	fi
}

# ram_dir: a fresh directory in RAM for a section ($ramdir, removed on
# exit), the outputs going there ($o).
ram_dir() {
	ramdir=$(mktemp -d /dev/shm/kdumpinit-bench.XXXXXX) || return 1
	ramdirs="$ramdirs $ramdir"
	o=$ramdir/o
}

section_cpu() {
	local ramdir v
	echo
	echo "######## cpu: real vmcores copied into RAM, every output in RAM (/dev/shm)"
	ram_dir || return 1
	# the machine's limit runs over real memory: the 1.5 GiB guest's
	# first 300 MiB
	head -c 300M "$vmcore" >"$ramdir/lz4in"
	: >"$out/cpu.speedups"
	v=$(in_ram "$vmcore" "$ramdir")
	cpu_file guest-1.5g-ram "$v" "$ramdir/lz4in"
	rm -f "$ramdir/vmcore"
	if [ -f "$large" ] && [ -z "${BENCH_NO_LARGE:-}" ]; then
		v=$(in_ram "$large" "$ramdir")
		cpu_file guest-6g-ram "$v" "$ramdir/lz4in"
	fi
	rm -rf "$ramdir"
	o=$out/o
}

# ---- disk: the real vmcores, outputs synced to $out ----------------------

section_disk() {
	echo
	echo "######## disk: real vmcores, outputs synced to $out"
	o=$out/o
	bench_file guest-1.5g "$vmcore"
	[ -f "$large" ] && [ -z "${BENCH_NO_LARGE:-}" ] && bench_file guest-6g "$large" core
	rm -f "$o"
}

# ---- memmap: the memory map's exclusion on the real vmcores ---------------

# memmap_file LABEL VMCORE: alternating rounds at level 31, outputs in RAM.
memmap_file() {
	local label=$1 v=$2 r wd
	local ROUNDS=$CPU_ROUNDS
	res=$out/$label.results
	: >"$res"
	wd=$(dirname "$o")/wd
	mkdir -p "$wd"
	cat "$v" >/dev/null
	for r in $(seq "$ROUNDS"); do
		one makedumpfile-l makedumpfile -l -d 31 "$v" "$o"
		one makedumpfile-l-e makedumpfile -l -d 31 -e --work-dir "$wd" "$v" "$o"
		one keep-t1 "$K" capture --vmcore "$v" --output "$o" --level 31 --threads 1 --memmap keep
		one keep-t2 "$K" capture --vmcore "$v" --output "$o" --level 31 --threads 2 --memmap keep
		one exclude-t1 "$K" capture --vmcore "$v" --output "$o" --level 31 --threads 1 --memmap exclude
		one exclude-t2 "$K" capture --vmcore "$v" --output "$o" --level 31 --threads 2 --memmap exclude
	done
	rm -f "$o"	# makedumpfile writes no file that exists
	makedumpfile -l -d 31 -e --work-dir "$wd" "$v" "$o" 2>&1 | grep -a -o 'Excluded [0-9]* unused vmemmap pages' >"$out/$label.md-e"
	rm -f "$o"
	"$K" capture --vmcore "$v" --output "$o" --level 31 --memmap exclude 2>&1 |
		grep -o 'memmap [0-9]*' | tail -n 1 >"$out/$label.kd-e"
	rm -rf "$o" "$wd"
	echo
	echo "== $label: $v, level 31, outputs in RAM, medians of $ROUNDS alternating runs"
	printf '%-32s %9s %9s %11s\n' run seconds peak-MB output-MB
	local n
	for n in makedumpfile-l makedumpfile-l-e keep-t1 keep-t2 exclude-t1 exclude-t2; do
		printf '%-32s %9s %9s %11s\n' "$n" "$(stat_of $n 2)" \
			"$(awk -v k="$(stat_of $n 3)" 'BEGIN{printf "%.1f", k/1024}')" \
			"$(awk -v b="$(stat_of $n 4)" 'BEGIN{printf "%.1f", b/1048576}')"
	done
	echo "memory map pages left out: makedumpfile -e $(sed 's/Excluded \([0-9]*\).*/\1/' "$out/$label.md-e"), kdumpinit $(sed 's/memmap //' "$out/$label.kd-e")"
	echo "ratios:"
	echo "  makedumpfile -l -e time / kdumpinit exclude, 1 thread: $(ratio "$(stat_of makedumpfile-l-e 2)" "$(stat_of exclude-t1 2)")x, 2 threads: $(ratio "$(stat_of makedumpfile-l-e 2)" "$(stat_of exclude-t2 2)")x"
	echo "  makedumpfile -l time / -l -e: $(ratio "$(stat_of makedumpfile-l 2)" "$(stat_of makedumpfile-l-e 2)")x; kdumpinit keep / exclude, 1 thread: $(ratio "$(stat_of keep-t1 2)" "$(stat_of exclude-t1 2)")x"
	echo "  output: kdumpinit exclude / makedumpfile -l -e $(ratio "$(stat_of exclude-t1 4)" "$(stat_of makedumpfile-l-e 4)"), exclude / keep $(ratio "$(stat_of exclude-t1 4)" "$(stat_of keep-t1 4)")"
}

section_memmap() {
	local ramdir v
	echo
	echo "######## memmap: the memory map's pages, real vmcores in RAM, level 31"
	ram_dir || return 1
	v=$(in_ram "$vmcore" "$ramdir")
	memmap_file memmap-1.5g "$v"
	rm -f "$ramdir/vmcore"
	if [ -f "$large" ] && [ -z "${BENCH_NO_LARGE:-}" ]; then
		v=$(in_ram "$large" "$ramdir")
		memmap_file memmap-6g "$v"
	fi
	rm -rf "$ramdir"
	o=$out/o
}

# ---- scale: synthetic kernels of 64 and 256 GiB --------------------------

# The filter's ns per pfn on VMCORE, 1 thread: the struct-page pass alone
# when mmbench is there (its median of 3), else empty.
filter_ns() {
	[ -x "$MMB" ] || return 0
	"$MMB" "$1" 31 1 3 2>/dev/null |
		sed -n 's/.*median [0-9.]* s, \([0-9.]*\) ns\/pfn\/thread.*/\1/p' | tail -n 1
}

section_scale() {
	local ramdir m v t0 t1 gen pfns size blocks kept outb sizes rounds r
	local t1s t2s rss1 rss2 fns cap sp last=
	sizes=${BENCH_SCALE_SIZES:-64G 256G}
	rounds=${BENCH_SCALE_ROUNDS:-1}
	echo
	echo "######## scale: synthetic kernels (mkvmcore --mm 6.1 --mix ref --no-expect), level 31,"
	echo "######## outputs in RAM, median of $rounds round(s)"
	ram_dir || return 1
	: >"$out/scale.results"
	printf '%-12s %10s %7s %9s %8s %7s %7s %8s %12s %10s %10s %9s\n' memory pfns make-s file-GB disk-GB \
		t1-s t2-s speedup peak-MB-t1/t2 filter-ns capture-ns output-MB
	for m in $sizes; do
		v=$out/scale-$m.vmcore
		# about 3.6 % of the memory described is written (struct pages and
		# the kernel's non-zero pages): refuse to fill the disk
		local need avail
		need=$(awk -v m="$m" 'BEGIN { g = m + 0; if (m ~ /T$/) g *= 1024; printf "%d", g * 0.04 * 1048576 + 1048576 }')
		avail=$(df -Pk "$out" | awk 'NR == 2 { print $4 }')
		if [ "$avail" -lt "$need" ]; then
			echo "$m: skipped: $((need >> 20)) GB needed in $out, $((avail >> 20)) GB free"
			continue
		fi
		t0=$(date +%s%N)
		"$MK" -o "$v" --mm 6.1 --mem "$m" --mix ref --no-expect >"$out/scale-mk.log" 2>&1 ||
			{ echo "$m: mkvmcore failed: $(tail -n 2 "$out/scale-mk.log" | tr '\n' ' ')"; rm -f "$v"; continue; }
		t1=$(date +%s%N)
		gen=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.1f", (b - a) / 1e9 }')
		size=$(stat -c %s "$v") blocks=$(du -k "$v" | cut -f1)
		# Warm the page cache with what level 31 reads (struct pages, kept
		# pages), not the file: reading its holes would fill the cache
		# with 256 GiB of zeros.
		"$K" capture --vmcore "$v" --output "$o" --level 31 --threads 2 --memmap keep >/dev/null 2>&1
		rm -f "$o"
		fns=$(filter_ns "$v")
		# The memory map kept whole, and its unneeded pages left out
		# (kdumpinit.memmap=; auto leaves them out from 64 GiB).
		local mode
		for mode in keep exclude; do
			res=$out/scale-$m-$mode.results
			: >"$res"
			for r in $(seq "$rounds"); do
				one t1 "$K" capture --vmcore "$v" --output "$o" --level 31 --threads 1 --memmap $mode
				one t2 "$K" capture --vmcore "$v" --output "$o" --level 31 --threads 2 --memmap $mode
			done
			grep -h 'pages kept' "$out/err" | tail -n 1 >"$out/scale-$m-$mode.summary"
			pfns=$(sed -n 's/.* \([0-9][0-9]*\) of \([0-9][0-9]*\) pages kept.*/\2/p' "$out/scale-$m-$mode.summary")
			kept=$(sed -n 's/.* \([0-9][0-9]*\) of \([0-9][0-9]*\) pages kept.*/\1/p' "$out/scale-$m-$mode.summary")
			t1s=$(stat_of t1 2) t2s=$(stat_of t2 2) outb=$(stat_of t1 4)
			rss1=$(awk -v k="$(stat_of t1 3)" 'BEGIN { printf "%.1f", k / 1024 }')
			rss2=$(awk -v k="$(stat_of t2 3)" 'BEGIN { printf "%.1f", k / 1024 }')
			cap=$(awk -v t="$t1s" -v p="$pfns" 'BEGIN { if (p > 0) printf "%.1f", t * 1e9 / p; else print "n/a" }')
			sp=$(ratio "$t1s" "$t2s")
			printf '%-12s %10s %7s %9.1f %8.2f %7s %7s %8s %12s %10s %10s %9.1f\n' "$m-$mode" "${pfns:-?}" "$gen" \
				"$(awk -v b="$size" 'BEGIN { print b / 1e9 }')" "$(awk -v k="$blocks" 'BEGIN { print k * 1024 / 1e9 }')" \
				"$t1s" "$t2s" "${sp}x" "$rss1/$rss2" "${fns:--}" "$cap" "$(awk -v b="$outb" 'BEGIN { print b / 1048576 }')"
			echo "$m ${pfns:-0} ${kept:-0} $t1s $t2s ${fns:--} $outb $mode" >>"$out/scale.results"
		done
		# makedumpfile on the same kernel, once each
		if command -v makedumpfile >/dev/null; then
			res=$out/scale-$m-md.results
			: >"$res"
			mkdir -p "$(dirname "$o")/wd"
			one md-l makedumpfile -l -d 31 "$v" "$o"
			one md-l-e makedumpfile -l -d 31 -e --work-dir "$(dirname "$o")/wd" "$v" "$o"
			rm -rf "$(dirname "$o")/wd"
			echo "$m makedumpfile -l -d 31: $(stat_of md-l 2) s, $(awk -v b="$(stat_of md-l 4)" 'BEGIN { printf "%.1f", b / 1048576 }') MB;" \
				"-l -d 31 -e: $(stat_of md-l-e 2) s, $(awk -v b="$(stat_of md-l-e 4)" 'BEGIN { printf "%.1f", b / 1048576 }') MB" \
				"(kdumpinit, 1 thread: keep $(awk '$8 == "keep" { t = $4 } END { print t }' "$out/scale.results") s, exclude $(awk '$8 == "exclude" { t = $4 } END { print t }' "$out/scale.results") s)"
			rm -f "$o"
		fi
		[ -n "${BENCH_KEEP:-}" ] || rm -f "$v"
		last=$m
	done
	rm -rf "$ramdir"
	o=$out/o
	[ -n "$last" ] && project
}

# project: the largest synthetic kernel's figures carried to 2 and 32 TB,
# the memory map kept and excluded, beside SGI's makedumpfile figures.
project() {
	local limit= s31= mode row
	# the 1 -> 2 thread level-31 speed-up on the real 1.5 GiB guest and the
	# lz4 limit of the same rounds (cpu section), else this section's own
	# speed-up against an ideal 2
	# (or $BENCH_SPEEDUPS: a cpu.speedups file of an earlier run)
	if want cpu || [ -n "${BENCH_SPEEDUPS:-}" ]; then
		local c31
		read -r _ _ s31 limit _ c31 < <(head -n 1 "${BENCH_SPEEDUPS:-$out/cpu.speedups}" 2>/dev/null)
		# the speed-up from 1 CPU to 2 where the file has it: the model
		# is in CPUs
		[ -n "${c31:-}" ] && s31=$c31
	fi
	for mode in keep exclude; do
		row=$(awk -v m="$mode" '$8 == m' "$out/scale.results" | tail -n 1)
		[ -n "$row" ] || continue
		echo
		echo "projection, level 31, memory map $mode (from $(echo "$row" | cut -d' ' -f1) synthetic):"
		echo "$row" | awk -v s31="${s31:-}" -v limit="${limit:-}" -v mode="$mode" '
		{
			P = $2; K = $3; t1 = $4; t2 = $5; f = $6; ob = $7
			if (f == "-") { fns = t1 * 1e9 / P; cns = 0; how = "whole level-31 capture / pfns (no mmbench: filter not timed alone)" }
			else { fns = f; cns = K > 0 ? (t1 * 1e9 - P * f) / K : 0; if (cns < 0) cns = 0; how = "mmbench, struct-page pass alone" }
			if (s31 + 0 > 0 && limit + 0 > 0) { e = s31 / limit; src = sprintf("real 1.5 GiB guest, 1 CPU -> 2: %.2fx of a %.2fx lz4 limit", s31, limit) }
			else { e = (t1 / t2) / 2; src = sprintf("this kernel: %.2fx of an ideal 2x", t1 / t2) }
			if (e > 1) e = 1
			kshare = K / P; obpp = ob / P
			printf "  t(P, n) = (P x f + K x c) / (n x e), e = 1 for n = 1\n"
			printf "  P pfns (4 KiB); f = %.1f ns/pfn (%s)\n", fns, how
			printf "  K = P x %.4f kept pages (this mix at level 31), c = %.0f ns per kept page (read, zero\n", kshare, cns
			printf "    check, LZ4: the rest of the 1-thread capture)\n"
			printf "  e = %.2f: kdumpinit'"'"'s 1 -> 2 CPU speed-up over the machine limit (%s),\n", e, src
			printf "    taken to hold at every n; output in RAM: add output / disk speed when the disk is slower\n"
			printf "  %-6s %10s %14s %14s %14s %10s   %s\n", "memory", "pfns", "1 CPU", "8 CPUs", "32 CPUs", "output", "SGI 2015, makedumpfile (UV)"
			split("2 32", tb, " ")
			split("526 s, with -e 128 s|about 7300 s, with -e about 1600 s", sgi, "|")
			for (i = 1; i <= 2; i++) {
				Pm = tb[i] * 2^40 / 4096
				base = (Pm * fns + Pm * kshare * cns) / 1e9
				printf "  %-6s %10.3g %13.1fs %13.1fs %13.1fs %8.1fGB   %s\n", tb[i] "TB", Pm, base, base / (8 * e), base / (32 * e), Pm * obpp / 1e9, sgi[i]
			}
		}'
	done
}

# ---- memory: peak RSS as described memory grows --------------------------

section_memory() {
	# Memory growth with the size of memory described: sparse synthetic
	# vmcores (0.1% of pages non-zero), level 1, one thread.
	local m sizes s kb
	o=$out/o
	echo
	echo "== peak memory as described memory grows (synthetic, level 1, 1 thread)"
	printf '%-10s %9s %9s %12s\n' memory seconds peak-MB scan-GB/s
	sizes="1536M 16G 64G 256G"
	[ -n "${BENCH_QUICK:-}" ] && sizes="1536M 8G 32G"
	for m in $sizes; do
		"$MK" -o "$out/syn.vmcore" --mem "$m" --zero-pct 99.9 --segments 4 >/dev/null || continue
		res=$out/syn.results
		: >"$res"
		one syn "$K" capture --vmcore "$out/syn.vmcore" --output "$o" --level 1 --threads 1
		read -r _ s kb _ <"$res"
		printf '%-10s %9s %9.1f %12s\n' "$m" "$s" "$(awk -v k="$kb" 'BEGIN{print k/1024}')" \
			"$(awk -v s="$s" -v m="$m" 'BEGIN{g=m+0; if (m ~ /M$/) g/=1024; if (s>0) printf "%.1f", g/s; else print "n/a"}')"
		rm -f "$out/syn.vmcore"
	done
	rm -f "$o"
}

# ---- sealed: sealed dumps against plain ones, real vmcores in RAM --------

# sealed_pair SEALED PLAIN: this round's sealed time / plain time (the last
# run of each in $res), to $res.pairs: the spread of the rounds' ratios.
sealed_pair() {
	local a b
	a=$(awk -v n="$1" '$1 == n { t = $2 } END { print t }' "$res")
	b=$(awk -v n="$2" '$1 == n { t = $2 } END { print t }' "$res")
	echo "$1 $(ratio "$a" "$b")" >>"$res.pairs"
}

# sealed_spread NAME: "lo-hi" of NAME's per-round ratios
sealed_spread() {
	awk -v n="$1" '$1 == n && $2 != "n/a" { if (!c++ || $2 < lo) lo = $2; if ($2 > hi) hi = $2 }
		END { if (c) printf "%s-%s", lo, hi; else printf "n/a" }' "$res.pairs"
}

# sealed_rate MB A B: MB / (B's median CPU seconds - A's): what the
# sealing (or opening) did per CPU second it added.
sealed_rate() {
	awk -v m="$1" -v a="$(stat_of "$2" 5)" -v b="$(stat_of "$3" 5)" \
		'BEGIN { if (b - a > 0) printf "%.0f", m / (b - a); else printf "n/a" }'
}

# seconds/cpu medians of two runs, B - A
sealed_extra() {
	awk -v a="$(stat_of "$2" "$1")" -v b="$(stat_of "$3" "$1")" 'BEGIN { printf "%.2f", b - a }'
}

# sealed_file LABEL VMCORE KEYS: alternating rounds of each capture cell
# (levels 1 and 31, 1 and 2 threads) without and with --pubkey KEYS.pub,
# the order swapped every round (a run after a large free pays for it on
# this VM: see BENCH_HOLD_FREE); then, on one dump of each kind per level,
# save against save --key KEYS.sec, alternating the same way. Every output
# in RAM.
sealed_file() {
	local label=$1 v=$2 keys=$3 r lv t n c dir
	local ROUNDS=${BENCH_SEALED_ROUNDS:-9}	# report's header too
	local -a sealed_args=(--pubkey "$keys.pub")
	dir=$(dirname "$o")
	res=$out/$label.results
	: >"$res"
	: >"$res.pairs"
	cat "$v" >/dev/null
	for r in $(seq "$ROUNDS"); do
		for lv in 1 31; do
			for t in 1 2; do
				n=l$lv-t$t
				if [ $((r % 2)) = 1 ]; then
					one "$n-plain" "$K" capture --vmcore "$v" --output "$o" --level $lv --threads $t
					one "$n-sealed" "$K" capture --vmcore "$v" --output "$o" --level $lv --threads $t "${sealed_args[@]}"
				else
					one "$n-sealed" "$K" capture --vmcore "$v" --output "$o" --level $lv --threads $t "${sealed_args[@]}"
					one "$n-plain" "$K" capture --vmcore "$v" --output "$o" --level $lv --threads $t
				fi
				sealed_pair "$n-sealed" "$n-plain"
			done
		done
	done
	# one dump of each kind per level to read back; what was sealed
	local -A chunks mb
	for lv in 1 31; do
		rm -f "$dir/plain-l$lv" "$dir/sealed-l$lv"
		"$K" capture --vmcore "$v" --output "$dir/plain-l$lv" --level $lv >/dev/null 2>&1
		"$K" capture --vmcore "$v" --output "$dir/sealed-l$lv" --level $lv "${sealed_args[@]}" >/dev/null 2>&1
		# info without the key: "content  N chunks sealed (X MB of pages)"
		read -r chunks[$lv] mb[$lv] < <("$K" info "$dir/sealed-l$lv" 2>/dev/null |
			sed -n 's/^content *\([0-9]*\) chunks sealed (\([0-9.]*\) MiB of pages).*/\1 \2/p')
	done
	for r in $(seq "$ROUNDS"); do
		for n in l1-none l31-none l31-zlib; do
			lv=${n%-*} c=${n#*-}
			if [ $((r % 2)) = 1 ]; then
				one "save-$n-plain" "$K" save "$dir/plain-$lv" --output "$o" --compress $c
				one "save-$n-key" "$K" save "$dir/sealed-$lv" --key "$keys.sec" --output "$o" --compress $c
			else
				one "save-$n-key" "$K" save "$dir/sealed-$lv" --key "$keys.sec" --output "$o" --compress $c
				one "save-$n-plain" "$K" save "$dir/plain-$lv" --output "$o" --compress $c
			fi
			sealed_pair "save-$n-key" "save-$n-plain"
		done
	done
	rm -f "$o" "$dir"/plain-l* "$dir"/sealed-l*

	echo
	echo "== $label: $v ($(($(stat -c %s "$v") >> 20)) MiB), outputs in RAM, medians of $ROUNDS" \
		"alternating runs (MB = 10^6 bytes)"
	echo "capture, plain and sealed (--pubkey); ratio = median sealed s / median plain s, rounds = the"
	echo "rounds' own ratios; CPU: the same of CPU seconds (steadier here than wall time); MB sealed"
	echo "per second the sealing added, of CPU time and of wall time:"
	printf '%-7s %8s %9s %7s %11s %6s %7s %9s %10s\n' cell plain-s sealed-s ratio rounds CPU +CPU-s "MB/CPU-s" "MB/wall-s"
	for lv in 1 31; do
		for t in 1 2; do
			n=l$lv-t$t
			printf '%-7s %8s %9s %7s %11s %6s %7s %9s %10s\n' "$n" "$(stat_of "$n-plain" 2)" "$(stat_of "$n-sealed" 2)" \
				"$(ratio "$(stat_of "$n-sealed" 2)" "$(stat_of "$n-plain" 2)")" "$(sealed_spread "$n-sealed")" \
				"$(ratio "$(stat_of "$n-sealed" 5)" "$(stat_of "$n-plain" 5)")" \
				"$(sealed_extra 5 "$n-plain" "$n-sealed")" "$(sealed_rate "${mb[$lv]:-0}" "$n-plain" "$n-sealed")" \
				"$(awk -v m="${mb[$lv]:-0}" -v d="$(sealed_extra 2 "$n-plain" "$n-sealed")" \
					'BEGIN { if (d > 0) printf "%.0f", m / d; else printf "n/a" }')"
		done
	done
	echo "goal (sealed / plain <= 1.05, wall time): level 1: 1 thread" \
		"$(ratio "$(stat_of l1-t1-sealed 2)" "$(stat_of l1-t1-plain 2)"), 2 threads" \
		"$(ratio "$(stat_of l1-t2-sealed 2)" "$(stat_of l1-t2-plain 2)"); level 31: 1 thread" \
		"$(ratio "$(stat_of l31-t1-sealed 2)" "$(stat_of l31-t1-plain 2)"), 2 threads" \
		"$(ratio "$(stat_of l31-t2-sealed 2)" "$(stat_of l31-t2-plain 2)")"
	echo "output sizes (2 threads, bytes): the tags (32 bytes; a PAGES chunk has three), the SEAL record, PADs:"
	for lv in 1 31; do
		local pb sb
		pb=$(stat_of "l$lv-t2-plain" 4) sb=$(stat_of "l$lv-t2-sealed" 4)
		printf '  level %-2s plain %s, sealed %s: +%s (%s) for %s chunks sealed (%s MiB of pages)\n' \
			"$lv" "$pb" "$sb" "$((sb - pb))" "$(awk -v a="$pb" -v b="$sb" 'BEGIN { printf "%+.4f %%", 100 * (b - a) / a }')" \
			"${chunks[$lv]:-?}" "${mb[$lv]:-?}"
	done
	echo "save (kdump format) of the plain dump, and of the sealed one with --key; MB opened per CPU second added:"
	printf '%-19s %8s %8s %7s %11s %6s %7s %9s\n' save plain-s key-s ratio rounds CPU +CPU-s "MB/CPU-s"
	for n in l1-none l31-none l31-zlib; do
		lv=${n%-*}
		printf '%-19s %8s %8s %7s %11s %6s %7s %9s\n' "$lv --compress ${n#*-}" "$(stat_of "save-$n-plain" 2)" \
			"$(stat_of "save-$n-key" 2)" "$(ratio "$(stat_of "save-$n-key" 2)" "$(stat_of "save-$n-plain" 2)")" \
			"$(sealed_spread "save-$n-key")" "$(ratio "$(stat_of "save-$n-key" 5)" "$(stat_of "save-$n-plain" 5)")" \
			"$(sealed_extra 5 "save-$n-plain" "save-$n-key")" \
			"$(sealed_rate "${mb[${lv#l}]:-0}" "save-$n-plain" "save-$n-key")"
	done
}

section_sealed() {
	local ramdir v
	echo
	echo "######## sealed: capture --pubkey (AEGIS-256 per chunk) against the plain capture,"
	echo "######## real vmcores in RAM, every output in RAM"
	ram_dir || return 1
	"$K" keygen "$ramdir/seal.sec" "$ramdir/seal.pub" >/dev/null 2>&1 ||
		{ echo "sealed: kdumpinit keygen failed"; rm -rf "$ramdir"; o=$out/o; return 1; }
	v=$(in_ram "$vmcore" "$ramdir")
	sealed_file sealed-1.5g "$v" "$ramdir/seal"
	rm -f "$ramdir/vmcore"
	if [ -f "$large" ] && [ -z "${BENCH_NO_LARGE:-}" ]; then
		v=$(in_ram "$large" "$ramdir")
		sealed_file sealed-6g "$v" "$ramdir/seal"
	fi
	rm -rf "$ramdir"
	o=$out/o
}

# ---- order: the debugger's pages first against plain pfn order ----------

# order_file LABEL VMCORE: alternating rounds of each capture cell (levels
# 1 and 31, 1 and 2 threads), ordered and in pfn order, the order swapped
# every round; outputs in RAM.
order_file() {
	local label=$1 v=$2 r lv t n
	local ROUNDS=${BENCH_ORDER_ROUNDS:-9}	# report's header too
	res=$out/$label.results
	: >"$res"
	: >"$res.pairs"
	cat "$v" >/dev/null
	for r in $(seq "$ROUNDS"); do
		for lv in 1 31; do
			for t in 1 2; do
				n=l$lv-t$t
				if [ $((r % 2)) = 1 ]; then
					one "$n-ordered" "$K" capture --vmcore "$v" --output "$o" --level $lv --threads $t
					one "$n-pfn" env KDUMPINIT_TEST_HOOK=pfn-order "$K" capture --vmcore "$v" --output "$o" --level $lv --threads $t
				else
					one "$n-pfn" env KDUMPINIT_TEST_HOOK=pfn-order "$K" capture --vmcore "$v" --output "$o" --level $lv --threads $t
					one "$n-ordered" "$K" capture --vmcore "$v" --output "$o" --level $lv --threads $t
				fi
				sealed_pair "$n-ordered" "$n-pfn"
			done
		done
	done
	rm -f "$o"
	echo
	echo "== $label: $v ($(($(stat -c %s "$v") >> 20)) MiB), outputs in $(dirname "$o")" \
		"($where), medians of $ROUNDS alternating runs"
	echo "capture with the debugger's pages first (two tiers) and in pfn order; ratio = median"
	echo "ordered s / median pfn-order s, rounds = the rounds' own ratios, CPU: the same of CPU seconds:"
	printf '%-7s %8s %10s %7s %11s %6s %12s\n' cell pfn-s ordered-s ratio rounds CPU bytes-ratio
	for lv in 1 31; do
		for t in 1 2; do
			n=l$lv-t$t
			printf '%-7s %8s %10s %7s %11s %6s %12s\n' "$n" "$(stat_of "$n-pfn" 2)" "$(stat_of "$n-ordered" 2)" \
				"$(ratio "$(stat_of "$n-ordered" 2)" "$(stat_of "$n-pfn" 2)")" "$(sealed_spread "$n-ordered")" \
				"$(ratio "$(stat_of "$n-ordered" 5)" "$(stat_of "$n-pfn" 5)")" \
				"$(awk -v a="$(stat_of "$n-ordered" 4)" -v b="$(stat_of "$n-pfn" 4)" \
					'BEGIN { if (b > 0) printf "%.4f", a / b; else printf "n/a" }')"
		done
	done
	echo "what the order adds, in seconds (median ordered - median pfn order): level 1:" \
		"$(sealed_extra 2 l1-t1-pfn l1-t1-ordered) and $(sealed_extra 2 l1-t2-pfn l1-t2-ordered);" \
		"level 31: $(sealed_extra 2 l31-t1-pfn l31-t1-ordered) and $(sealed_extra 2 l31-t2-pfn l31-t2-ordered)" \
		"(1 and 2 threads)"
	echo "goal (ordered / pfn order <= 1.05, wall time): level 1: 1 thread" \
		"$(ratio "$(stat_of l1-t1-ordered 2)" "$(stat_of l1-t1-pfn 2)"), 2 threads" \
		"$(ratio "$(stat_of l1-t2-ordered 2)" "$(stat_of l1-t2-pfn 2)"); level 31: 1 thread" \
		"$(ratio "$(stat_of l31-t1-ordered 2)" "$(stat_of l31-t1-pfn 2)"), 2 threads" \
		"$(ratio "$(stat_of l31-t2-ordered 2)" "$(stat_of l31-t2-pfn 2)")"
}

section_order() {
	local ramdir v
	echo
	echo "######## order: the debugger's pages first (the finder and two tiers) against plain"
	echo "######## pfn order, real vmcores in RAM, every output in RAM"
	ram_dir || return 1
	# in RAM (o is there: ram_dir), then written to this disk and synced
	# (as a capture does), the input in RAM both times
	v=$(in_ram "$vmcore" "$ramdir")
	where="RAM: what the order costs in CPU" order_file order-1.5g "$v"
	o=$out/o where="the disk, synced: as a capture runs" order_file order-1.5g-disk "$v"
	o=$ramdir/o
	rm -f "$ramdir/vmcore"
	if [ -f "$large" ] && [ -z "${BENCH_NO_LARGE:-}" ]; then
		v=$(in_ram "$large" "$ramdir")
		where="RAM: what the order costs in CPU" order_file order-6g "$v"
		o=$out/o where="the disk, synced: as a capture runs" order_file order-6g-disk "$v"
	fi
	rm -rf "$ramdir"
	o=$out/o
}

MMB=${MMBENCH:-$PWD/$BUILD/tools/mmbench}
o=$out/o
for sec in $SECTIONS; do
	"section_$sec"
done
echo
echo "bench: sections '$SECTIONS' took $(( $(date +%s) - bench_t0 )) s"
