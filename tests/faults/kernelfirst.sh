#!/bin/bash
# The kernel's pages first, in the real crash kernel: a level-1 capture
# onto a dump disk about 1.25 times the size of the level-31 dump of the
# same memory. The device fills; the dump must be marked incomplete
# (device full), hold every page level 31 keeps (the kernel's pages,
# written first), and open in drgn, which reads init_uts_ns through the
# dump's own page tables.
#
# usage: tests/faults/kernelfirst.sh [--workdir DIR]
# The level-31 reference is a capture of the crash kernel's raw copy of
# /proc/vmcore on this host, so it is the same memory.
set -uo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
top=$(cd "$here/../.." && pwd)
workdir=$top/build/faults/kernelfirst
[ "${1:-}" = --workdir ] && workdir=$(mkdir -p "$2" && cd "$2" && pwd)
mkdir -p "$workdir"
kdumpinit=${KDUMPINIT:-$top/build/kdumpinit}
python=/usr/bin/python3

npass=0 nfail=0
pass() { npass=$((npass + 1)); echo "PASS: $*"; }
failed() { nfail=$((nfail + 1)); echo "FAIL: $*"; }

# A 1 GiB guest's level-31 dump is 32-34 MB on this harness; 42 MB is
# about 1.25 times that (checked against the real one below).
size=$((42 << 20))
bash "$top/tests/e2e/run.sh" --cpu max,la57=off --level 1 --dump-size "$size" --workdir "$workdir"
e2e=$?
[ $e2e = 0 ] && pass "level 1 onto a ${size}-byte disk: tests/e2e/run.sh's checks passed" ||
	failed "level 1 onto a ${size}-byte disk: tests/e2e/run.sh exited $e2e"

info=$workdir/info.out
grep -q "^state *incomplete (device was full" "$info" &&
	pass "info: $(grep '^state' "$info" | tr -s ' ')" ||
	{ failed "info does not say device full:"; sed 's/^/    /' "$info"; }
post=$workdir/crash-console.log
grep -a -q "kdumpinit: plan: .*the kernel's pages (level 31) first" "$post" &&
	pass "the plan says the kernel's pages go first" ||
	failed "no \"the kernel's pages (level 31) first\" in the plan line"

raw=$workdir/raw.vmcore
if [ -f "$raw" ] && [ -f "$workdir/saved.elf" ]; then
	rm -f "$workdir/l31.img" "$workdir/l31.elf"
	"$kdumpinit" capture --vmcore "$raw" --output "$workdir/l31.img" --level 31 >"$workdir/l31.out" 2>&1 &&
		"$kdumpinit" save "$workdir/l31.img" --output "$workdir/l31.elf" --format elf >/dev/null 2>&1 ||
		failed "level-31 reference capture of the raw copy failed: $(tail -n 2 "$workdir/l31.out")"
	l31=$("$kdumpinit" info "$workdir/l31.img" | awk '/^dump size/ {print int($3 * 1e6)}')
	# The device's room for the dump: its size less the 1 MiB head.
	room=$((size - (1 << 20)))
	if [ -n "$l31" ] && [ $((room * 100)) -ge $((l31 * 110)) ] && [ $((room * 100)) -le $((l31 * 150)) ]; then
		pass "the disk's room is $(awk -v r=$room -v l=$l31 'BEGIN { printf "%.2f", r / l }') times the level-31 dump ($l31 bytes)"
	else
		failed "the disk's room ($room) is not 1.1-1.5 times the level-31 dump (${l31:-?} bytes)"
	fi
	"$python" "$top/tests/tools/subset.py" "$workdir/l31.elf" "$workdir/saved.elf" >"$workdir/subset.out" 2>&1 &&
		pass "$(cat "$workdir/subset.out")" ||
		{ failed "the cut dump lacks pages level 31 keeps:"; sed 's/^/    /' "$workdir/subset.out"; }
	"$python" "$top/tests/tools/drgnopen.py" "$workdir/saved.elf" >"$workdir/drgn.out" 2>&1 &&
		pass "$(cat "$workdir/drgn.out")" ||
		{ failed "drgn cannot read the cut dump:"; sed 's/^/    /' "$workdir/drgn.out"; }
	rm -f "$workdir/l31.img" "$workdir/l31.elf"
else
	failed "no raw copy or saved dump to compare"
fi
echo "$npass passed, $nfail failed, 0 skipped"
[ $nfail = 0 ]
