#!/bin/bash
# Write errors on the dump disk, in the real crash kernel: QEMU's blkdebug
# driver fails the writes that touch chosen sectors, and kdumpinit (PID 1)
# must say where each write failed, go around the loss where it can (a GAP
# chunk, docs/FORMAT.md), end in its final action, and leave a dump that
# `info` calls incomplete and `save` saves with every page it kept right.
#
# usage: tests/faults/blkdebug.sh CASE [--seal] [--workdir DIR]
#   early   writes touching 8 MiB .. 8.5 MiB of the disk fail (the first pages)
#   late    the same at 200 MiB (late in a level-1 dump of a 1 GiB guest)
#   after   every write from 100 MiB to the end fails: the capture must give
#           up, keep what came before, and still run its final action
# Runs tests/e2e/run.sh --blkdebug (raw reference copy, level 1) and adds
# the checks of the case on its console and on the saved files. --seal: a
# sealed capture (e2e/run.sh --seal), which must go around the bad range
# as a clear one does and keep the dump to its END.
set -uo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
top=$(cd "$here/../.." && pwd)
case=${1:-}
shift || true
workdir='' seal=()
while [ $# -gt 0 ]; do
	case $1 in
	--workdir) workdir=$2; shift ;;
	--seal) seal=(--seal) ;;
	*) echo "blkdebug.sh: unknown option $1" >&2; exit 2 ;;
	esac
	shift
done
workdir=${workdir:-$top/build/faults/$case}
mkdir -p "$workdir"
kdumpinit=${KDUMPINIT:-$top/build/kdumpinit}
conf=$workdir/blkdebug.conf
mib=$((1 << 20))

# One rule per 64 KiB of the range: a write fails when it touches any of
# them (QEMU matches a rule's sector against each request's range), and no
# write kdumpinit or the kernel issues is shorter than that once aligned.
rules() { # FROM_BYTES TO_BYTES
	local s
	for ((s = $1 / 512; s < $2 / 512; s += 128)); do
		printf '[inject-error]\nevent = "pwritev"\niotype = "write"\nerrno = "5"\nsector = "%d"\n\n' "$s"
	done
}
case $case in
early) lo=$((8 * mib)) hi=$((8 * mib + mib / 2)) ;;
late) lo=$((200 * mib)) hi=$((200 * mib + mib / 2)) ;;
after) lo=$((100 * mib)) hi=$((1536 * mib)) ;;
*) echo "usage: tests/faults/blkdebug.sh early|late|after [--workdir DIR]" >&2; exit 2 ;;
esac
rules $lo $hi >"$conf"

npass=0 nfail=0
pass() { npass=$((npass + 1)); echo "PASS: $*"; }
failed() { nfail=$((nfail + 1)); echo "FAIL: $*"; }

bash "$top/tests/e2e/run.sh" --cpu max,la57=off --level 1 --blkdebug "$conf" "${seal[@]}" --workdir "$workdir"
e2e=$?
[ $e2e = 0 ] && pass "e2e with write errors ($case): its own checks passed" ||
	failed "e2e with write errors ($case): tests/e2e/run.sh exited $e2e"

post=$workdir/crash-console.log
dump=$(ls "$workdir"/dump*.img 2>/dev/null | head -n 1)
# The first failed write is named with its device offset, inside the range
# (a write that starts before it and reaches in is named by its start).
off=$(grep -a -o "kdumpinit: .*write error ([^)]*) at device offset [0-9]*" "$post" | head -n 1 | grep -o "[0-9]*$")
if [ -n "$off" ] && [ "$off" -lt "$hi" ] && [ "$off" -gt $((lo - 8 * mib)) ]; then
	pass "console names the failed write: $(grep -a -m1 -o 'write error ([^)]*) at device offset [0-9]*.*' "$post")"
else
	failed "no 'write error ... at device offset' line for the range $lo..$hi (got '${off:-}')"
fi
if [ "$case" = after ]; then
	grep -a -q "kdumpinit: .*too many or too long to go around\|kdumpinit: .*writing the dump to .* failed" "$post" &&
		pass "the capture gave up on the failing disk: $(grep -a -m1 -o 'too many or too long.*\|writing the dump to .* failed.*' "$post")" ||
		failed "no line saying the capture gave up on the failing disk"
else
	grep -a -q "kdumpinit: .*the dump goes on at offset" "$post" &&
		pass "the capture went around the bad range: $(grep -a -m1 -o 'the dump goes on at offset [0-9]*' "$post")" ||
		failed "no 'the dump goes on at offset' line"
	grep -a -q "kdumpinit: .*write error.* gone around on" "$post" &&
		pass "the summary counts the write errors: $(grep -a -m1 -o '[0-9]* write errors\{0,1\} gone around.*' "$post")" ||
		failed "no summary line counting the write errors gone around"
	info=$workdir/info.out
	grep -q "^state *incomplete (.*write errors" "$info" && grep -q "^gaps *1 region lost to write errors" "$info" &&
		pass "info: $(grep '^state' "$info" | tr -s ' '); $(grep '^gaps' "$info" | cut -c1-80)" ||
		{ failed "info does not report the gap:"; sed 's/^/    /' "$info"; }
	# Pages after the gap are in the dump: the saved ELF holds pages from
	# beyond the bad range's share of the stream, checked by pagecheck
	# above; here the kdump-compressed save says INCOMPLETE.
	if [ -n "$dump" ]; then
		key=()
		[ ${#seal[@]} = 0 ] || key=(--key "$workdir/seal.secret")
		rm -f "$workdir/saved.kdump"	# a run before's, in the same workdir
		"$kdumpinit" save "$dump" "${key[@]}" --output "$workdir/saved.kdump" --format kdump >"$workdir/save-kdump.out" 2>&1
		rc=$?
		[ $rc = 5 ] && [ -s "$workdir/saved.kdump" ] &&
			pass "save --format kdump: exit 5, $(stat -c %s "$workdir/saved.kdump") bytes, marked incomplete" ||
			{ failed "save --format kdump exited $rc:"; sed 's/^/    /' "$workdir/save-kdump.out"; }
	else
		failed "no dump image in $workdir"
	fi
fi
echo "$npass passed, $nfail failed, 0 skipped"
[ $nfail = 0 ]
