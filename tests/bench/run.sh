#!/bin/bash
# make bench: kdumpinit's capture side by side with makedumpfile in the same
# run, on the same vmcore files, alternating the tools and taking medians.
# Reported as ratios; nothing here asserts a time.
#
# Inputs (made by the e2e harness when missing, then kept):
#   $BENCH_VMCORE   default build/bench/raw-1536m.vmcore (1.5 GiB guest,
#                   about 2 minutes under TCG to make)
#   $BENCH_LARGE    default build/bench/raw-6g.vmcore (6 GiB guest, about
#                   6 minutes to make); BENCH_NO_LARGE=1 skips it
#   synthetic sparse vmcores describing 1.5 GiB .. 256 GiB (scan rate and
#   memory growth; pseudo-random pages, no struct pages: level 1 only);
#   BENCH_QUICK=1 stops at 32 GiB
#   $BENCH_OUT      where outputs go (default build/bench: a real disk, so
#                   every tool's time includes syncing its output)
#   $BENCH_ROUNDS   rounds per input (default 5: this VM's disk is noisy)
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
[ -f "$vmcore" ] || make_input "$vmcore" 1536M || exit 1
if [ ! -f "$large" ] && [ -z "${BENCH_NO_LARGE:-}" ]; then
	make_input "$large" 6G
fi

# one NAME CMD...: runs CMD once, appends "NAME seconds peakKB bytes" to
# $res. The output is $o; wall time from date (ms), peak RSS from time.
one() {
	local name=$1 t0 t1 t
	shift
	rm -f "$o"
	sync
	t0=$(date +%s%N)
	if /usr/bin/time -o "$out/time" -f "%M" "$@" >/dev/null 2>"$out/err"; then
		t1=$(date +%s%N)
		t="$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.3f", (b - a) / 1e9 }') $(tail -n 1 "$out/time")"
	else
		t="fail 0"
		echo "bench: $name failed: $(tail -n 2 "$out/err" | tr '\n' ' ')" >&2
	fi
	echo "$name $t $(stat -c %s "$o" 2>/dev/null || echo 0)" >>"$res"
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

stat_of() {	# NAME FIELD(2=s,3=KB,4=bytes) -> median
	awk -v n="$1" -v f="$2" '$1 == n && $2 != "fail" {print $f}' "$res" | median
}

ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (a > 0 && b > 0) printf "%.2f", a / b; else printf "n/a" }'; }

report() {	# LABEL VMCORE
	local size
	size=$(stat -c %s "$2")
	echo
	echo "== $1: $2 ($((size >> 20)) MiB), medians of $ROUNDS alternating runs"
	printf '%-26s %9s %9s %11s\n' run seconds peak-MB output-MB
	for n in kdumpinit-l1-t1 kdumpinit-l1-t2 disk-floor-l1 makedumpfile-l-d1 makedumpfile-l-d1-t2 \
		 makedumpfile-c-d1 kdumpinit-l31-t1 kdumpinit-l31-t2 disk-floor-l31 makedumpfile-l-d31 \
		 makedumpfile-l-d31-t2 makedumpfile-c-d31 cat lz4-1; do
		[ "$(stat_of $n 2)" = nan ] && continue
		printf '%-26s %9s %9s %11s\n' "$n" "$(stat_of $n 2)" \
			"$(awk -v k="$(stat_of $n 3)" 'BEGIN{printf "%.1f", k/1024}')" \
			"$(awk -v b="$(stat_of $n 4)" 'BEGIN{printf "%.1f", b/1048576}')"
	done
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

o=$out/o
bench_file guest-1.5g "$vmcore"
[ -f "$large" ] && [ -z "${BENCH_NO_LARGE:-}" ] && bench_file guest-6g "$large" core
# The same input with every output in RAM: what each tool costs in CPU.
ramdir=$(mktemp -d /dev/shm/kdumpinit-bench.XXXXXX) && {
	o=$ramdir/o
	bench_file guest-1.5g-ram "$vmcore" ram
	rm -rf "$ramdir"
	o=$out/o
}

# Memory growth with the size of memory described: sparse synthetic vmcores
# (0.1% of pages non-zero), level 1, one thread.
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
