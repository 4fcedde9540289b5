#!/bin/bash
# tests/filter-synthetic/keys.sh: the page filter with one VMCOREINFO key
# unknown. A page is excluded only by a decision whose inputs the dump
# provides (docs/FILTERING.md §6), so for every key the filter reads
# (kernel/vmcoreinfo.h's table, policy other than NONE; the other arch's
# translation keys left out) that a vmcore's note has, at each level:
#   NAME/dL/KEY        the key made unknown in place (its first letter
#                      flipped to lower case, the file otherwise the same
#                      bytes): `kdumpinit capture` must exit 0, keep every
#                      page the capture of the untouched vmcore keeps, and
#                      name the key on the console and, when the filter ran
#                      at all, in `info` (not a QUIET key: one that kernels
#                      without the feature lack);
#   NAME/dL/KEY=OTHER  a key a kernel renamed (7.1's OFFSET(page.compound_info),
#                      OFFSET(page.compound_head) before), spelled the other
#                      way: the very same pages, and nothing said.
# "The same pages" is byte for byte: both dumps saved as ELF and compared
# (tests/tools/subset.py), except a real vmcore's level-17 dumps (400 MB and
# more each), whose pfns are compared from the dumps' PAGES bitmaps
# (keys.py covers) unless BYTES=all. A FAIL says how many of the pages the
# full key set keeps were dropped.
#
# Vmcores:
#   synthetic  mkvmcore --mm 6.1, 6.12 (5-level, 4k leaves), 7.1 (1g
#              leaves) and 6.12 arm64: 96 MiB each
#   real       the raw vmcores given as arguments, or those the e2e suites
#              leave (build/check/raw-*.vmcore, build/e2e/*/raw.vmcore): the
#              first of each kernel release; "skip real: ..." when there is
#              none
#
# usage: keys.sh [--no-synthetic] [--no-real] [VMCORE...]
# Environment (paths relative to the repository top):
#   KDUMPINIT  the binary (default build/kdumpinit)
#   MKVMCORE   the generator (default: built into the scratch directory)
#   WORK       scratch (default /dev/shm/kdumpinit-keys on a tmpfs, else
#              build/tests/keys); each vmcore is copied there once
#   LEVELS     dump levels (default "31 17")
#   BYTES=all  compare bytes at every level of real vmcores too
#   JOBS       vmcores at once (default: online CPUs, at most 2)
#   ONLY       a regular expression: only the cases whose name matches
#   KEEP=1     keep the scratch directory
# One line per case, "ok NAME/dL/KEY: ..." or "FAIL NAME/dL/KEY: why", then
# "N passed, N failed, N skipped"; exits non-zero on a failure. About a
# minute for each half on 2 idle cores.
set -u

top=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
cd "$top" || exit 1
abs() { case $1 in /*) printf '%s\n' "$1" ;; *) printf '%s\n' "$top/$1" ;; esac; }

synthetic=1 real=1 given=()
for a in "$@"; do
	case $a in
	--no-synthetic) synthetic=0 ;;
	--no-real) real=0 ;;
	-*) echo "usage: keys.sh [--no-synthetic] [--no-real] [VMCORE...]" >&2; exit 2 ;;
	*) given+=("$(abs "$a")") ;;
	esac
done

KDUMPINIT=$(abs "${KDUMPINIT:-build/kdumpinit}")
if [ -z "${WORK:-}" ]; then
	WORK=build/tests/keys
	if [ -d /dev/shm ] && [ -w /dev/shm ] && [ "$(stat -f -c %T /dev/shm 2>/dev/null)" = tmpfs ]; then
		WORK=/dev/shm/kdumpinit-keys
	fi
fi
WORK=$(abs "$WORK")
PY=/usr/bin/python3
[ -x "$PY" ] || PY=python3
export PYTHONDONTWRITEBYTECODE=1
LEVELS=${LEVELS:-31 17}
JOBS=${JOBS:-$(nproc 2>/dev/null || echo 2)}
[ "$JOBS" -gt 2 ] && JOBS=2
[ "$JOBS" -lt 1 ] && JOBS=1
ONLY=${ONLY:-}
HEADER=$top/kernel/vmcoreinfo.h

fail_setup() {
	echo "FAIL setup: $*"
	echo "0 passed, 1 failed, 0 skipped"
	exit 1
}
[ -x "$KDUMPINIT" ] || fail_setup "$KDUMPINIT is missing (make)"
mkdir -p "$WORK" || exit 1
# Leftovers of failed runs go, never those of a run still going.
for old in "$WORK"/run.??????; do
	[ -d "$old" ] && [ -e "$old/.keys" ] || continue
	pid=$(cat "$old/.keys" 2>/dev/null)
	case $pid in '' | *[!0-9]*) ;; *) kill -0 "$pid" 2>/dev/null && continue ;; esac
	rm -rf "$old"
done
W=$(mktemp -d "$WORK/run.XXXXXX") || exit 1
echo $$ >"$W/.keys"

# What each arch's translation reads: the other arch's keys are in some
# notes (x86_64 exports swapper_pg_dir) but never read there.
ARM64_ONLY='SYMBOL(swapper_pg_dir) NUMBER(kimage_voffset) NUMBER(PHYS_OFFSET) NUMBER(VA_BITS) NUMBER(TCR_EL1_T1SZ)'
X86_ONLY='SYMBOL(init_top_pgt) NUMBER(phys_base) NUMBER(pgtable_l5_enabled) NUMBER(sme_mask)'

# VMCORE NAME pairs to test, "skip" lines for what is missing.
SETS=()
if [ "$synthetic" = 1 ]; then
	if [ -n "${MKVMCORE:-}" ]; then
		MKVMCORE=$(abs "$MKVMCORE")
	else
		MKVMCORE=$W/mkvmcore
		${HOSTCC:-cc} -Wall -Wextra -Werror -O2 -o "$MKVMCORE" tests/tools/mkvmcore.c \
			>"$W/mkvmcore-build.log" 2>&1 ||
			fail_setup "building mkvmcore: $(head -3 "$W/mkvmcore-build.log" | tr '\n' ' ')"
	fi
	RAM=0x1000:56M,128M:40M
	seed=300
	for spec in "6.1|" "6.12|--levels 5 --leaf 4k" "7.1|--leaf 1g" \
		"6.12|--arch arm64 --va-bits 48 --ram 0x40000000:56M,0x48000000:40M"; do
		layout=${spec%%|*} extra=${spec#*|}
		name=mm-$layout
		case $extra in *arm64*) name=$name-arm64 ;; *"levels 5"*) name=$name-l5 ;; esac
		ram="--ram $RAM"
		case $extra in *--ram*) ram= ;; esac
		# shellcheck disable=SC2086
		if ! "$MKVMCORE" -o "$W/$name.core" --mm "$layout" $ram --zero-pct 5 --seed $seed \
			--no-expect $extra >"$W/$name.mk.log" 2>&1; then
			echo "FAIL $name: mkvmcore: $(tail -2 "$W/$name.mk.log" | tr '\n' ' ')" >"$W/$name.result"
		fi
		SETS+=("$W/$name.core|$name")
		seed=$((seed + 1))
	done
fi
if [ "$real" = 1 ]; then
	cands=("${given[@]}")
	if [ ${#cands[@]} -eq 0 ]; then
		for f in "$top"/build/check/raw-*.vmcore "$top"/build/e2e/*/raw.vmcore; do
			[ -f "$f" ] && cands+=("$f")
		done
	fi
	seen=" "
	for f in "${cands[@]}"; do
		if [ ! -f "$f" ]; then
			echo "FAIL real: no vmcore $f" >"$W/real-missing.result"
			continue
		fi
		rel=$(head -c 4M "$f" | grep -a -o -m1 'OSRELEASE=[^[:cntrl:]]*' | head -n1)
		rel=${rel#OSRELEASE=}
		l5=$(head -c 4M "$f" | grep -a -o -m1 'NUMBER(pgtable_l5_enabled)=[0-9]*' | head -n1)
		l5=${l5##*=}
		[ "${l5:-0}" = 1 ] && depth=l5 || depth=l4
		# one per release (5-level tables: the synthetic ones)
		id=$rel
		case $seen in *" $id "*) continue ;; esac
		seen="$seen$id "
		SETS+=("$f|real-${rel%%[-+]*}-$depth")
	done
	[ "$seen" = " " ] && [ ${#given[@]} -eq 0 ] &&
		echo "skip real: no raw vmcore here (the e2e suites leave them in build/check/ and build/e2e/*/)" \
			>"$W/real-none.result"
fi

# capture IN IMG LEVEL LOG: 0 when the capture ran
capture() {
	rm -f "$2" "$2.elf"
	timeout 60 "$KDUMPINIT" capture --vmcore "$1" --output "$2" --level "$3" --threads 1 >"$4" 2>&1
}

# save IMG LOG: IMG.elf
save() {
	[ -e "$1.elf" ] || timeout 60 "$KDUMPINIT" save "$1" --output "$1.elf" --format elf >>"$2" 2>&1
}

# ask covers|subset A B: keys.py serve's answer in $out (one Python for
# the whole set; coproc descriptors do not reach $(...) subshells)
ask() {
	local a
	printf '%s %s %s\n' "$1" "$2" "$3" >&"${CHK[1]}"
	IFS= read -r a <&"${CHK[0]}" || a="fail keys.py serve stopped"
	out=${a#* }
	[ "${a%% *}" = ok ]
}

# run_set VMCORE NAME: every key of its note at every level; writes
# $W/NAME.result
run_set() {
	local v=$1 name=$2 d=$W/$2 res=$W/$2.result off policy key L c fail rc lost out bytes
	mkdir -p "$d"
	if ! "$PY" tests/filter-synthetic/keys.py "$HEADER" "$v" >"$d/keys" 2>"$d/keys.err"; then
		echo "FAIL $name: keys.py: $(head -1 "$d/keys.err")" >>"$res"
		return
	fi
	local machine not_here
	coproc CHK { "$PY" tests/filter-synthetic/keys.py serve; }
	machine=$(sed -n 's/^machine //p' "$d/keys")
	[ "$machine" = 183 ] && not_here=$X86_ONLY || not_here=$ARM64_ONLY
	# one copy to change; the vmcore given is never written
	if ! cp "$v" "$d/v.core"; then
		echo "FAIL $name: cannot copy $v" >>"$res"
		return
	fi
	for L in $LEVELS; do
		if ! capture "$d/v.core" "$d/base$L.img" "$L" "$d/base$L.log"; then
			echo "FAIL $name/d$L: the untouched vmcore: $(tail -1 "$d/base$L.log")" >>"$res"
			rm -f "$d/base$L.img"
		fi
	done
	while read -r off policy key other; do
		[ "$off" = machine ] && continue
		case " $not_here " in *" $key "*) continue ;; esac
		local first=${key:0:1} lower
		lower=$(printf '%s' "$first" | tr '[:upper:]' '[:lower:]')
		printf '%s' "$lower" | dd of="$d/v.core" bs=1 seek="$off" conv=notrunc status=none
		for L in $LEVELS; do
			c="$name/d$L/$key"
			if [ -n "$ONLY" ] && ! [[ $c =~ $ONLY ]]; then
				continue
			fi
			[ -e "$d/base$L.img" ] || continue
			fail=
			capture "$d/v.core" "$d/k.img" "$L" "$d/k.log"
			rc=$?
			# Bytes: both saved as ELF and compared page by page; a real
			# vmcore's level-17 dumps (400 MB and more) are compared by
			# their pfns only, unless BYTES=all.
			bytes=1
			case $name-$L in real-*-17) [ "${BYTES:-}" = all ] || bytes= ;; esac
			if [ $rc -ne 0 ]; then
				fail="capture exit $rc: $(grep -m1 -i 'error' "$d/k.log")"
			elif [ -z "$bytes" ]; then
				ask covers "$d/base$L.img" "$d/k.img" ||
					fail="${out%% pages missing*} pages the full key set keeps were dropped ($out)"
			elif ! save "$d/base$L.img" "$d/base$L.log" || ! save "$d/k.img" "$d/k.log"; then
				fail="save failed: $(tail -1 "$d/k.log")"
			elif ! ask subset "$d/base$L.img.elf" "$d/k.img.elf"; then
				fail="${out%% pages missing*} pages the full key set keeps were dropped ($out)"
			elif [ "$policy" != QUIET ] && ! grep -qF "$key" "$d/k.log"; then
				fail="the console does not name $key"
			elif [ "$policy" != QUIET ] && ! grep -q 'only zero pages filtered' "$d/k.log" &&
				! "$KDUMPINIT" info "$d/k.img" 2>&1 | grep '^settings .*VMCOREINFO lacks' | grep -qF "$key"; then
				fail="info does not name $key"
			fi
			if [ -n "$fail" ]; then
				echo "FAIL $c: $fail"
				cp "$d/k.log" "$d/fail-d$L-$(printf '%s' "$key" | tr -c 'A-Za-z0-9._-' _).log"
			else
				echo "ok $c: kept $(sed -n 's/.*: \([0-9]*\) of [0-9]* pages kept.*/\1/p' "$d/k.log") pages"
			fi
			rm -f "$d/k.img" "$d/k.img.elf"
		done >>"$res"
		printf '%s' "$first" | dd of="$d/v.core" bs=1 seek="$off" conv=notrunc status=none
		# A key a kernel renamed: the note spelled the other way must
		# keep the very same pages, and say nothing about it.
		[ "$other" != - ] && [ ${#other} = ${#key} ] || continue
		printf '%s' "$other" | dd of="$d/v.core" bs=1 seek="$off" conv=notrunc status=none
		for L in $LEVELS; do
			c="$name/d$L/$key=$other"
			if [ -n "$ONLY" ] && ! [[ $c =~ $ONLY ]]; then
				continue
			fi
			[ -e "$d/base$L.img" ] || continue
			fail=
			if ! capture "$d/v.core" "$d/k.img" "$L" "$d/k.log"; then
				fail="capture failed: $(grep -m1 -i 'error' "$d/k.log")"
			elif ! ask covers "$d/base$L.img" "$d/k.img"; then
				fail="as $other, ${out%% pages missing*} pages kept as $key were dropped ($out)"
			elif ! ask covers "$d/k.img" "$d/base$L.img"; then
				fail="as $key, ${out%% pages missing*} pages kept as $other were dropped ($out)"
			elif grep -qF "$key" "$d/k.log" || grep -qF "$other" "$d/k.log"; then
				fail="the console names the key though the note has it"
			fi
			[ -n "$fail" ] && echo "FAIL $c: $fail" ||
				echo "ok $c: the same $(sed -n 's/.*: \([0-9]*\) of [0-9]* pages kept.*/\1/p' "$d/k.log") pages"
			rm -f "$d/k.img" "$d/k.img.elf"
		done >>"$res"
		printf '%s' "$key" | dd of="$d/v.core" bs=1 seek="$off" conv=notrunc status=none
	done <"$d/keys"
	# the copy must be the vmcore again: every flip was undone
	cmp -s "$v" "$d/v.core" || echo "FAIL $name: the working copy differs from $v after the run" >>"$res"
	rm -f "$d/v.core" "$d"/*.img "$d"/*.elf
	exec {CHK[1]}>&-
	wait "$CHK_PID" 2>/dev/null
}

start=$(date +%s)
running=0
for s in "${SETS[@]}"; do
	v=${s%%|*} name=${s#*|}
	[ -e "$W/$name.result" ] && continue	# mkvmcore failed: said
	run_set "$v" "$name" &
	running=$((running + 1))
	if [ $running -ge "$JOBS" ]; then
		wait -n
		running=$((running - 1))
	fi
done
wait

npass=0 nfail=0 nskip=0
for r in "$W"/*.result; do
	[ -e "$r" ] || continue
	while IFS= read -r line; do
		case $line in
		ok\ *) npass=$((npass + 1)) ;;
		FAIL\ *) nfail=$((nfail + 1)) ;;
		skip\ *) nskip=$((nskip + 1)) ;;
		esac
		echo "$line"
	done <"$r"
done
if [ $((npass + nfail + nskip)) -eq 0 ]; then
	echo "FAIL setup: no case ran"
	nfail=1
fi
echo "# $(($(date +%s) - start)) s; scratch $W" >&2
if [ "$nfail" -eq 0 ] && [ "${KEEP:-0}" != 1 ]; then
	rm -rf "$W"
fi
echo "$npass passed, $nfail failed, $nskip skipped"
[ "$nfail" -eq 0 ]
