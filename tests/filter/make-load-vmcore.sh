#!/bin/bash
# make-load-vmcore.sh: take a raw vmcore of a guest under a heavier memory
# load than tests/e2e's stage 1 makes, for tests/filter/run.sh.
#
#   tests/filter/make-load-vmcore.sh --out FILE [--cpu MODEL]
#                                    [--kernel-tree DIR] [--timeout SEC]
#
# Stage 1 of tests/e2e already fills tmpfs, anonymous memory and the page
# cache of an ext2 disk, and leaves most memory free. On top of that, this
# adds what busybox alone cannot make:
#   hugetlb  a pool of 48 x 2 MiB pages, 32 in use holding non-zero data,
#            16 left free in the pool (hugefill.c)
#   THP      32 MiB of MADV_HUGEPAGE anonymous memory, non-zero (hugefill.c)
#   slab     20000 tmpfs inodes and dentries, kernfs nodes from ls -lR /sys
#   hwpoison a few pages marked with /sys/devices/system/memory/hard_offline_page
#
# tests/e2e is not changed: its run.sh, testinit and elfend.py are copied
# into build/filter/e2e-load/ (with its own image cache), stage1-init is
# copied with the extra load inserted, and the copy of run.sh gets the
# hugefill binary into the stage-1 image. run.sh --raw-only then boots the
# guest, crashes it and stores the raw /proc/vmcore as FILE.
# --kernel-tree DIR is passed on (e.g. build/filter/trixie from
# get-trixie-kernel.sh: Debian 13's 6.12).
set -euo pipefail

prog=make-load-vmcore.sh
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
top=$(cd "$here/../.." && pwd)
e2e=$top/tests/e2e

out= cpu=max,la57=off ktree= tmo=900
while [ $# -gt 0 ]; do
	case $1 in
	--out | --cpu | --kernel-tree | --timeout)
		[ $# -ge 2 ] || { echo "$prog: $1 needs a value" >&2; exit 2; } ;;
	esac
	case $1 in
	--out) out=$2; shift ;;
	--cpu) cpu=$2; shift ;;
	--kernel-tree) ktree=$(cd "$2" && pwd); shift ;;
	--timeout) tmo=$2; shift ;;
	-h | --help) sed -n '2,23p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
	*) echo "$prog: unknown argument: $1" >&2; exit 2 ;;
	esac
	shift
done
die() { echo "$prog: $*" >&2; exit 1; }
[ -n "$out" ] || die "--out FILE is required"
case $out in /*) ;; *) out=$PWD/$out ;; esac
[ -x "$top/build/kdumpinit" ] || die "missing $top/build/kdumpinit (run make first)"
if [ -n "$ktree" ]; then
	grep -q -- '--kernel-tree' "$e2e/run.sh" || die "tests/e2e/run.sh has no --kernel-tree option"
fi

t=$top/build/filter/e2e-load
mkdir -p "$t/tests/e2e" "$t/build"
ln -sfn "$top/initramfs" "$t/initramfs"
ln -sfn "$top/tests/tools" "$t/tests/tools"
ln -sfn "$top/build/kdumpinit" "$t/build/kdumpinit"
cp "$e2e/run.sh" "$e2e/testinit" "$e2e/elfend.py" "$t/tests/e2e/"

hugefill=$t/build/hugefill
if [ ! -x "$hugefill" ] || [ "$here/hugefill.c" -nt "$hugefill" ]; then
	${HOSTCC:-cc} -static -O2 -Wall -Wextra -Werror -o "$hugefill" "$here/hugefill.c" ||
		die "cannot build hugefill (needs a static libc: libc6-dev)"
fi

# The copy of stage1-init: the extra load goes in before the "memory load
# ready" line, after the page cache is filled.
load=$(
	cat <<'LOAD'
# --- extra load from tests/filter/make-load-vmcore.sh ---------------------
echo 48 >/proc/sys/vm/nr_hugepages
hugefill 64 32 /mnt/tmpfs/huge-ready &
while [ ! -s /mnt/tmpfs/huge-ready ]; do sleep 1; done
mkdir -p /mnt/tmpfs/many && (cd /mnt/tmpfs/many && seq 1 20000 | xargs touch)
ls -lR /sys >/dev/null 2>&1
for a in 0x8000000 0x10000000 0x18000000 0x30000000 0x38000000; do
	echo $a >/sys/devices/system/memory/hard_offline_page 2>/dev/null ||
		log "hard_offline_page $a refused"
done
log "extra load:" $(awk '/^(HugePages_Total|HugePages_Free|AnonHugePages|Slab|HardwareCorrupted):/ {printf "%s%s ", $1, $2}' /proc/meminfo)
LOAD
)
awk -v load="$load" '
	/^log "memory load ready/ && !done { print load; done = 1 }
	{ print }
	END { if (!done) exit 1 }
' "$e2e/stage1-init" >"$t/tests/e2e/stage1-init" ||
	die "tests/e2e/stage1-init has no 'log \"memory load ready' line to insert the load before"
chmod 755 "$t/tests/e2e/stage1-init"

# The copy of run.sh: hugefill goes into the stage-1 image.
r=$t/tests/e2e/run.sh
[ "$(grep -c '^s1extra=()$' "$r")" = 1 ] && [ "$(grep -c '^s1in="' "$r")" = 1 ] ||
	die "tests/e2e/run.sh changed: no single 's1extra=()' and 's1in=\"' lines to extend"
sed -i -e "s|^s1extra=()\$|s1extra=(-a \"$hugefill:/bin/hugefill\")|" \
	-e "s|^s1in=\"\\(.*\\)\"\$|s1in=\"\\1 $hugefill\"|" "$r"
grep -q "hugefill:/bin/hugefill" "$r" || die "patching the copy of run.sh failed"

name=$(echo "$cpu" | tr ',=' '_-')${ktree:+-$(basename "$ktree")}
work=$t/work-$name
args=(--raw-only --raw-out "$out" --cpu "$cpu" --workdir "$work" --timeout "$tmo")
[ -z "$ktree" ] || args+=(--kernel-tree "$ktree")
echo "$prog: $r ${args[*]}"
rc=0
"$r" "${args[@]}" || rc=$?
grep -h "e2e-stage1: \(extra load\|hard_offline\|memory load\)" "$work/console.log" 2>/dev/null | sed 's/^/  /' || :
rm -f "$work/raw.vmcore" "$work/raw.img" "$work/dump.img"  # FILE has the copy
[ $rc = 0 ] || die "the e2e run failed (console log: $work/console.log)"
echo "$prog: raw vmcore: $out"
