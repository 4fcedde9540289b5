#!/bin/busybox sh
# shellcheck shell=dash
# seedload SEED DIR [SCRATCHDIR]: a memory load drawn from SEED, run by the
# first kernel's stage 1 (tests/e2e and tests/e2e-arm64, --seed N) in place
# of the fixed one, so that every boot's memory differs: how big the tmpfs
# files and the anonymous blobs are, how many processes, threads, sleeping
# tasks, nested shells and small files there are, how much of the scratch
# disk sits in the page cache, how many records the kernel log holds, and
# the order all of that is made in. The same seed draws the same numbers;
# the memory still differs from boot to boot (timing, KASLR), which is the
# point: a fresh crash is what users capture. The finder's hangs came from
# words near the top of the address space in task structs and slab memory,
# so tasks and slab objects are what varies most, and most seeds have
# threads sleep with such words in their saved registers (seedtasks.c).
#
# DIR is a mounted tmpfs (files go there), SCRATCHDIR the scratch disk's
# mount point, if any (its files are read into the page cache). Prints one
# "seedload:" line with what it drew, and returns when the load is in
# place; the processes it started sleep until the crash.
seed=${1:?seedload SEED DIR [SCRATCHDIR]}
dir=${2:?seedload SEED DIR [SCRATCHDIR]}
scratch=${3:-}

# The numbers: an LCG in the shell's 64-bit arithmetic, 31 bits kept (so
# the draws are the same on every busybox, whatever its ash's width above
# 32 bits).
s=$((seed % 2147483647))
[ "$s" -gt 0 ] || s=$((s + 2147483646))
rnd() {	# N: a draw in 0..N-1, in $r
	s=$(((s * 1103515245 + 12345) % 2147483648))
	r=$(((s >> 8) % $1))
}
between() {	# LO HI: a draw in LO..HI, in $r
	rnd $(($2 - $1 + 1))
	r=$(($1 + r))
}

# What is drawn, in this order whatever the steps' order (so that one
# step's count never shifts another's).
between 4 56; mb_random=$r
between 2 40; mb_text=$r
between 1 6; n_anon=$r
between 1 5; mb_anon=$r
between 0 80; n_sleep=$r
between 0 10; depth=$r
between 0 24000; n_files=$r
between 0 400; n_sized=$r
between 0 48; mb_cache=$r
between 0 600; n_klog=$r
between 1 6; n_tproc=$r
between 1 24; n_thread=$r
between 16 512; kib_thread=$r
between 0 32; mb_churn=$r
# A third of the seeds plant nothing; the others a share of the threads
# (seedtasks.c: words from the top of the address space in their saved
# vector registers, inside their task structs).
rnd 3; plant=0
[ "$r" = 0 ] || { between 10 100; plant=$r; }

mkdir -p "$dir/seed"
cd "$dir/seed" || exit 1

s_random() {
	dd if=/dev/urandom of=random bs=1M count="$mb_random" 2>/dev/null
}
s_text() {
	yes "seed $seed: kdumpinit soak tmpfs text line" | head -c $((mb_text << 20)) >text
}
s_anon() {	# processes holding base64 text in a shell variable
	i=0
	while [ $i -lt "$n_anon" ]; do
		(
			blob=$(head -c $((mb_anon << 20)) /dev/urandom | base64)
			echo "${#blob}" >"anon-ready.$i"
			# A loop, not a last command: ash would exec it and drop the memory.
			while :; do sleep 3600; done
		) &
		i=$((i + 1))
	done
	i=0
	while [ $i -lt "$n_anon" ]; do
		while [ ! -s "anon-ready.$i" ]; do sleep 1; done
		i=$((i + 1))
	done
}
s_sleep() {	# plain sleeping tasks: one task struct and stack each
	i=0
	while [ $i -lt "$n_sleep" ]; do
		sleep $((100000 + i)) &
		i=$((i + 1))
	done
}
nest() {	# N: a chain of N shells, each the parent of the next
	if [ "$1" -gt 0 ]; then
		(nest $(($1 - 1)); while :; do sleep 3600; done) &
	else
		: >nest-ready
	fi
}
s_nest() {
	nest "$depth"
	while [ ! -e nest-ready ]; do sleep 1; done
}
s_files() {	# dentries and inodes in the slab
	mkdir -p many && (cd many && seq 1 "$n_files" | xargs -r touch)
}
s_sized() {	# small shmem files of drawn sizes
	mkdir -p sized
	i=0
	while [ $i -lt "$n_sized" ]; do
		rnd 65536
		head -c "$r" /dev/urandom >"sized/$i"
		i=$((i + 1))
	done
}
s_cache() {	# part of the scratch disk into the page cache
	[ -n "$scratch" ] || return 0
	for f in "$scratch"/*; do
		[ -f "$f" ] || continue
		rnd 8
		dd if="$f" of=/dev/null bs=1M skip="$r" count="$mb_cache" 2>/dev/null
	done
}
s_klog() {	# records in the kernel's log ring (all of them: no rate limit)
	echo on >/proc/sys/kernel/printk_devkmsg 2>/dev/null
	i=0
	while [ $i -lt "$n_klog" ]; do
		echo "seedload: record $i of $n_klog (seed $seed)" >/dev/kmsg
		i=$((i + 1))
	done
}
s_threads() {	# processes with threads, where stage 1 has the helper
	command -v seedtasks >/dev/null 2>&1 || return 0
	seedtasks "$n_tproc" "$n_thread" "$kib_thread" "$seed" "$plant" >/dev/null 2>&1
}
s_churn() {	# pages written, then freed: free pages that are not zero
	[ "$mb_churn" -gt 0 ] || return 0
	dd if=/dev/urandom of=churn bs=1M count="$mb_churn" 2>/dev/null
	rm -f churn
}

# The order: a shuffle of the steps (Fisher-Yates over a word list).
steps="random text anon sleep nest files sized cache klog threads churn"
set -- $steps
n=$#
order=
while [ $n -gt 0 ]; do
	rnd $n
	i=0
	for w in $steps; do
		[ $i = "$r" ] && pick=$w
		i=$((i + 1))
	done
	order="$order $pick"
	steps=$(for w in $steps; do [ "$w" = "$pick" ] || echo "$w"; done)
	n=$((n - 1))
done
for w in $order; do "s_$w"; done
echo "seedload: seed $seed: order$order; random ${mb_random}M text ${mb_text}M" \
	"anon ${n_anon}x${mb_anon}M sleepers $n_sleep nest $depth files $n_files sized $n_sized" \
	"cache ${mb_cache}M/file klog $n_klog threads ${n_tproc}x${n_thread}x${kib_thread}K plant ${plant}% churn ${mb_churn}M"
