#!/bin/bash
# coverage.sh: does the startup set (tier 0 of the debugger's pages,
# kernel/dbgpages.c) hold every page crash and drgn read to open a dump
# and show the panic?
#
#   tests/debugger/coverage.sh RAW.vmcore...
#
# For each raw ELF vmcore (x86_64, its kernel from VMCOREINFO's OSRELEASE):
#   * the readers run on the complete raw vmcore under strace (-P RAW, as
#     pfns-read.sh does) and pfnmap.py turns what they read into pfns:
#     each crash that reads the kernel (Debian 12's /usr/bin/crash 8.0.2
#     reads up to 6.3; sid's 9.0.2 of tests/lib/crash9.sh, retried with
#     --no_modules when it cannot open the dump without) in one session:
#     log, bt, ps, sys; drgn (/usr/bin/python3) in one session
#     (drgnsteps.py session): open, init_uts_ns release, the printk log,
#     every task's pid and comm, the crashed thread's stack trace;
#   * "kept" is what a level-31 dump holds: RAW captured with
#     `kdumpinit capture --level 31`, saved with `--format kdump`, its
#     second bitmap (zero pages included); a pfn level 31 drops is in no
#     dump and does not count;
#   * tier 0 and tier 1 are build/tools/dbgset's output on RAW.
# A reader/kernel pair is ok when tier 0 holds every kept pfn it read;
# else FAIL with the counts and up to 20 uncovered pfns with their class
# (pfnmap.py's Classifier; for the kernel image its section and the
# nearest vmlinux symbol). note lines give every pair's counts and the
# tiers' sizes. A reader that cannot read the complete dump is a skip.
# Ends with "N passed, N failed, N skipped"; exits 1 on a failure.
#
# A measurement, not in `make check`: each crash session loads the vmlinux
# (15-60 s). Needs build/kdumpinit and build/tools/dbgset (make, then
# make build/tools/dbgset), the vmlinuxes in VMLINUX_DIR (default
# build/crash/usr/lib/debug/boot, else build/debugger), strace, nm, gdb.
# OUTDIR (default build/debugger/coverage) keeps, per kernel, the traces,
# the readers' output, the pfn sets and report.txt (every uncovered pfn).
# SKIP_CRASH=1, SKIP_DRGN=1 leave one out.
set -u
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
[ $# -ge 1 ] || { sed -n '2,/^set/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 2; }
K=${KDUMPINIT:-$top/build/kdumpinit}
D=${DBGSET:-$top/build/tools/dbgset}
outdir=${OUTDIR:-$top/build/debugger/coverage}
vdir=${VMLINUX_DIR:-$top/build/crash/usr/lib/debug/boot}
py=/usr/bin/python3

pass=0 fail=0 skip=0
ok() { echo "ok $*"; pass=$((pass + 1)); }
bad() { echo "FAIL $*"; fail=$((fail + 1)); }
skipped() { echo "skip $*"; skip=$((skip + 1)); }
note() { echo "note $*"; }
finish() { echo "$pass passed, $fail failed, $skip skipped"; [ "$fail" -eq 0 ]; exit; }

for t in "$K" "$D"; do
	[ -x "$t" ] || { bad "no $t (make; make build/tools/dbgset)"; finish; }
done
for t in strace nm gdb; do
	command -v $t >/dev/null || { bad "no $t on this host"; finish; }
done

host_crash=
[ -x /usr/bin/crash ] && host_crash=$(/usr/bin/crash --version 2>/dev/null | sed -n 's/^crash \([0-9][^ ]*\).*/\1/p' | head -n 1)
crash9_state=untried

# trace OUT TARGET CMD...: CMD under strace, the reads of TARGET only;
# OUT.strace, OUT.out, OUT.pfns
trace() {
	local o=$1 target=$2
	shift 2
	strace -f -y -s 0 -P "$target" -e trace=openat,pread64,read,lseek,mmap,preadv,preadv2,readv \
		-o "$o.strace" "$@" >"$o.out" 2>&1
	local rc=$?
	$py "$here/pfnmap.py" pfns "$target" "$o.strace" >"$o.pfns" 2>"$o.pfnmap"
	return $rc
}

# crash_ok OUT: the panic in `log`, a sysrq_handle_crash frame in `bt`,
# tasks in `ps`, the release in `sys`
crash_ok() {
	grep -q "sysrq triggered crash" "$1" &&
		grep -qE '^ *#[0-9]+ \[[0-9a-f]+\] sysrq_handle_crash at ' "$1" &&
		grep -qE '^ *RELEASE: ' "$1" &&
		grep -qE '^[> ]+[0-9]+ +[0-9]+ +[0-9]+ +[0-9a-f]{16} ' "$1"
}

# facts KVER VMLINUX OUT: the facts file pfnmap.py's Classifier needs (as
# pfns-read.sh makes it) and `nm -n`
facts() {
	local vml=$2 out=$3
	# gdb numbers only the values it printed: a member this kernel lacks
	# (thread_group, gone in 6.7) must come last
	grep -q '^kmem_cache.name ' "$out/facts" 2>/dev/null && [ -s "$out/nm" ] && return 0
	nm -n "$vml" >"$out/nm" || return 1
	awk -v want='_text _etext __start_rodata __end_rodata _sdata _edata __init_begin __init_end
	      __bss_start __bss_stop _end page_offset_base vmalloc_base vmemmap_base
	      nr_cpu_ids pcpu_unit_size __per_cpu_offset __per_cpu_start init_task' \
		'BEGIN { n = split(want, w); for (i = 1; i <= n; i++) ok[w[i]] = 1 }
		ok[$3] && !seen[$3]++ { print $3, "0x" $1 }' "$out/nm" >"$out/facts.tmp"
	gdb -batch -nx \
		-ex 'print (long)&((struct task_struct *)0)->tasks' \
		-ex 'print (long)&((struct task_struct *)0)->stack' \
		-ex 'print (long)sizeof(struct task_struct)' \
		-ex 'print (long)&((struct slab *)0)->slab_cache' \
		-ex 'print (long)&((struct kmem_cache *)0)->name' \
		-ex 'print (long)&((struct task_struct *)0)->thread_group' \
		"$vml" 2>/dev/null | sed -n 's/^\$\([0-9]*\) = \(-\{0,1\}[0-9]*\)$/\1 \2/p' |
		awk 'BEGIN { n[1] = "task_struct.tasks"; n[2] = "task_struct.stack";
			n[3] = "sizeof.task_struct"; n[4] = "slab.slab_cache";
			n[5] = "kmem_cache.name"; n[6] = "task_struct.thread_group" }
			{ print n[$1], $2 }' >>"$out/facts.tmp"
	grep -q '^task_struct.stack ' "$out/facts.tmp" || return 1
	mv "$out/facts.tmp" "$out/facts"
}

t_start=$(date +%s)
for raw in "$@"; do
	base=$(basename "$raw" .vmcore)
	base=${base#raw-}
	[ -r "$raw" ] || { bad "$base: cannot read $raw"; continue; }
	kver=$($py -c 'import sys; sys.path.insert(0, sys.argv[1]); from pfnmap import Vmcore; print(Vmcore(sys.argv[2]).vi.get("OSRELEASE", ""))' "$here" "$raw" 2>/dev/null)
	[ -n "$kver" ] || { bad "$base: no OSRELEASE in $raw's VMCOREINFO"; continue; }
	vml=$vdir/vmlinux-$kver
	[ -f "$vml" ] || vml=$top/build/debugger/vmlinux-$kver
	[ -f "$vml" ] || { skipped "$base: no vmlinux-$kver in $vdir or build/debugger"; continue; }
	out=$outdir/$base
	mkdir -p "$out"
	facts "$kver" "$vml" "$out" || { bad "$base: no facts from $vml (nm, gdb)"; continue; }

	# what level 31 keeps
	rm -f "$out/l31.dump" "$out/l31.kdump"
	if ! "$K" capture --vmcore "$raw" --output "$out/l31.dump" --level 31 >"$out/l31.capture" 2>&1 ||
		! "$K" save "$out/l31.dump" --output "$out/l31.kdump" --format kdump >"$out/l31.save" 2>&1; then
		bad "$base: the level-31 capture or its save failed (see $out/l31.capture, l31.save)"
		continue
	fi
	rm -f "$out/l31.dump"
	"$D" "$raw" >"$out/tiers" 2>"$out/tiers.err" || { bad "$base: dbgset failed: $(tail -n 1 "$out/tiers.err")"; continue; }

	readers=()
	# --- crash ---
	if [ "${SKIP_CRASH:-}" != 1 ]; then
		for kind in host sid; do
			if [ "$kind" = host ]; then
				[ -n "$host_crash" ] || { skipped "$base/crash-host: no /usr/bin/crash"; continue; }
				case $host_crash/$kver in
				8.0.[0-2]/6.[4-9]*|8.0.[0-2]/6.[1-9][0-9]*|8.0.[0-2]/[7-9].*)
					skipped "$base/crash-$host_crash: crash 8.0.0-8.0.2 reads no kernel from 6.4 on"
					continue ;;
				esac
				cmd=(/usr/bin/crash) lab=crash-$host_crash
			else
				if [ "$crash9_state" = untried ]; then
					crash9_state=ready
					: "${BUILD:=build}"
					# shellcheck source=/dev/null
					. "$top/tests/lib/crash9.sh"
					crash9_ready 2>"$outdir/crash9.err" || crash9_state="not ready: $(tail -n 1 "$outdir/crash9.err")"
				fi
				[ "$crash9_state" = ready ] || { bad "$base/crash-sid: sid's crash is $crash9_state"; continue; }
				cmd=("${CRASH9[@]}") lab=crash-$CRASH9_VERSION
			fi
			printf 'log\nbt\nps\nsys\nquit\n' >"$out/$lab.cmds"
			used=
			for opt in - --no_modules; do
				o=$out/$lab
				o1=()
				[ "$opt" = - ] || { o1=("$opt"); o=$out/$lab.no_modules; }
				HOME=$out trace "$o" "$raw" timeout 600 "${cmd[@]}" -s "${o1[@]}" "$vml" "$raw" -i "$out/$lab.cmds" </dev/null
				if crash_ok "$o.out"; then used=$opt; break; fi
			done
			if [ -z "$used" ]; then
				skipped "$base/$lab: cannot read the complete dump (log, bt, ps, sys), with or without --no_modules: $(grep -m 1 -E '^crash: |error|invalid' "$out/$lab.out")"
				continue
			fi
			name=$lab
			[ "$used" = - ] || name=$lab.no_modules
			readers+=("$name=$out/$name.pfns")
		done
	fi
	# --- drgn ---
	if [ "${SKIP_DRGN:-}" != 1 ]; then
		dv=$($py -c 'import drgn; print(drgn.__version__)' 2>/dev/null)
		if [ -z "$dv" ]; then
			skipped "$base/drgn: no drgn for $py"
		else
			o=$out/drgn-$dv
			trace "$o" "$raw" timeout 600 $py "$here/drgnsteps.py" "$raw" "$vml" session
			if grep -q '^drgnsteps: ok session .* [1-9][0-9]* with the panic' "$o.out"; then
				readers+=("drgn-$dv=$o.pfns")
				grep -q '^frame sysrq_handle_crash' "$o.out" ||
					note "$base/drgn-$dv: no sysrq_handle_crash frame in the crashed thread's stack trace ($(grep -m 1 '^stack trace failed' "$o.out" || echo "$(grep -c '^frame' "$o.out") frames")): its pages are those of the rest of the session"
			else
				bad "$base/drgn-$dv: the session failed on the complete dump: $(tail -n 1 "$o.out")"
			fi
		fi
	fi
	[ ${#readers[@]} -gt 0 ] || continue

	$py "$here/coverage.py" "$raw" "$out/facts" "$out/nm" "$out/l31.kdump" "$out/tiers" "${readers[@]}" \
		>"$out/report.txt" 2>"$out/report.err" || { bad "$base: coverage.py failed: $(tail -n 1 "$out/report.err")"; continue; }
	read -r _ _ n0 mb0 _ n1 mb1 _ nk mbk < <(grep '^tiers ' "$out/report.txt")
	note "$base ($kver): tier 0 $n0 pfns ($mb0 MB), tier 1 $n1 pfns ($mb1 MB); level 31 keeps $nk pfns ($mbk MB)"
	for r in "${readers[@]}"; do
		name=${r%%=*}
		read -r _ _ _ nread _ nkept _ c0 _ c1 _ nn _ nx < <(grep "^counts $name " "$out/report.txt")
		counts="read $nread, kept at level 31 $nkept (not kept $nx): tier 0 $c0, tier 1 only $c1, neither $nn"
		if [ "$c0" = "$nkept" ]; then
			ok "$base/$name: tier 0 holds every kept pfn it read ($counts)"
		else
			bad "$base/$name: tier 0 misses $((nkept - c0)) of $nkept kept pfns it read ($counts)"
			grep "^class $name " "$out/report.txt" | head -n 20 | sed 's/^class [^ ]* /    /'
			grep "^sum $name " "$out/report.txt" | sed 's/^sum [^ ]* /    by class: /'
		fi
	done
done
note "run time $(($(date +%s) - t_start)) s; details in $outdir/*/report.txt"
finish
