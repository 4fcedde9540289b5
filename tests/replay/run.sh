#!/bin/bash
# Suite replay: the capture's first phase (VMCOREINFO, the kernel log, the
# debugger-page finder and its page-table, mem_section and task walks, the
# memory map's decision) on the memories of real crashes, in seconds.
# Each reproducer in corpus/ holds the headers of one fresh crash's raw
# vmcore and every 4 KiB block that phase read from it (mkrepro.py; the
# rest reads as zeros), among them crashes that made the finder loop
# forever before the finder's wrap was fixed (corpus/README.md says where each came
# from). Each is rebuilt as a sparse file on a tmpfs and captured at
# level 31 under `timeout 30`:
#   NAME.complete  the capture ends within the bound, exit 0, "dump complete"
#   NAME.finder    the finder says "debugger pages first: N pages", with
#                  N as corpus/MANIFEST records it (when it records one;
#                  the MANIFEST says what it was counted on; a change to
#                  the finder that moves it is a change to review, then to
#                  record: --expect prints the counts)
#
#   tests/replay/run.sh [--old BIN] [--expect] [--workdir DIR]
# --old BIN: also run BIN (an older build) on each reproducer whose
# MANIFEST line says it hung the old code, under `timeout 20`: it must hang
# again (NAME.old-hangs). Not in make check: it shows the corpus still
# holds what made the old finder loop.
# --expect: print each reproducer's MANIFEST line with the count this
# binary gives (nothing is checked).
set -uo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
top=$(cd "$here/../.." && pwd)
kdumpinit=${KDUMPINIT:-$top/build/kdumpinit}
python=/usr/bin/python3
corpus=$here/corpus
old='' expect=0 workdir=''
while [ $# -gt 0 ]; do
	case $1 in
	--old) old=$(realpath "$2"); shift ;;
	--expect) expect=1 ;;
	--workdir) workdir=$2; shift ;;
	-h | --help) sed -n '2,27p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
	*) echo "replay: unknown argument: $1" >&2; exit 2 ;;
	esac
	shift
done
[ -x "$kdumpinit" ] || { echo "replay: no $kdumpinit (make)" >&2; exit 1; }
# A tmpfs: the capture reads the whole sparse file, and holes read from
# tmpfs at several GB/s (about 350 MB/s from this machine's disk).
if [ -z "$workdir" ]; then
	if [ -d /dev/shm ] && [ -w /dev/shm ]; then
		workdir=$(mktemp -d /dev/shm/kdumpinit-replay.XXXXXX)
	else
		workdir=$(mktemp -d "${TMPDIR:-/tmp}/kdumpinit-replay.XXXXXX")
	fi
else
	mkdir -p "$workdir"
fi
trap 'rm -rf "$workdir"' EXIT

npass=0 nfail=0
ok() { echo "ok $1"; npass=$((npass + 1)); }
bad() { echo "FAIL $1: $2"; nfail=$((nfail + 1)); }

n=0 t_all=$SECONDS
# MANIFEST: NAME KERNEL SEED MEM FINDER OLD (# comments); NAME.repro.xz
# beside it.
while read -r name kernel seed mem finder oldwas; do
	case $name in '' | '#'*) continue ;; esac
	n=$((n + 1))
	repro=$corpus/$name.repro.xz v=$workdir/$name.vmcore out=$workdir/$name.img
	if ! "$python" "$here/mkrepro.py" rebuild "$repro" "$v" 2>"$workdir/rebuild.err"; then
		bad "$name.complete" "cannot rebuild $repro: $(tail -n 1 "$workdir/rebuild.err")"
		continue
	fi
	t=$(date +%s.%N)
	timeout 30 "$kdumpinit" capture --vmcore "$v" --output "$out" --level 31 >"$workdir/$name.out" 2>&1
	rc=$?
	d=$(awk -v a="$t" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }')
	got=$(grep -a -m1 -o 'debugger pages first: [0-9]* pages' "$workdir/$name.out" | grep -o '[0-9][0-9]*')
	if [ $expect = 1 ]; then
		printf '%-28s %-6s %-10s %-6s %-7s %s\n' "$name" "$kernel" "$seed" "$mem" "${got:--}" "$oldwas"
		rm -f "$v" "$out"
		continue
	fi
	if [ $rc = 124 ]; then
		bad "$name.complete" "no end within 30 s ($kernel, seed $seed): $(grep -a 'kdumpinit:' "$workdir/$name.out" | tail -n 1)"
	elif [ $rc = 0 ] && grep -a -q "kdumpinit: dump complete on" "$workdir/$name.out"; then
		ok "$name.complete"
	else
		bad "$name.complete" "exit $rc after ${d} s: $(grep -a 'kdumpinit:' "$workdir/$name.out" | tail -n 1)"
	fi
	if [ -z "$got" ]; then
		bad "$name.finder" "no 'debugger pages first' line: $(grep -a -m1 'debugger' "$workdir/$name.out")"
	elif [ "$finder" = - ] || [ "$got" = "$finder" ]; then
		ok "$name.finder"
	else
		bad "$name.finder" "the finder kept $got pages, $finder on the whole vmcore"
	fi
	echo "note $name ($kernel, seed $seed, $mem): ${d} s, finder $got pages"
	if [ -n "$old" ] && [ "$oldwas" = hang ]; then
		rm -f "$out"
		timeout 20 "$old" capture --vmcore "$v" --output "$out" --level 31 >"$workdir/$name.old" 2>&1
		rc=$?
		[ $rc = 124 ] && ok "$name.old-hangs" ||
			bad "$name.old-hangs" "the old binary ended (exit $rc) on the reproducer: $(tail -n 1 "$workdir/$name.old")"
	fi
	rm -f "$v" "$out"
done <"$corpus/MANIFEST"
[ $n -gt 0 ] || bad "corpus" "no reproducer listed in $corpus/MANIFEST"
echo "replay: $n reproducers in $((SECONDS - t_all)) s"
echo "$npass passed, $nfail failed, 0 skipped"
[ $nfail = 0 ]
