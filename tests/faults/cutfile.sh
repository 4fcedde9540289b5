#!/bin/bash
# Power cuts inside the metadata and the kernel log, which killing QEMU
# cannot reach (the guest writes them in one request: it lands whole or
# not at all, tests/faults/powercut.sh): a real dump is cut at bytes
# inside each of its first chunks and at the start of END, the rest of the
# device as a cut leaves it (never written: zeros), and info and save must
# report the state that leaves:
#   inside NOTES, VMCOREINFO, SEGMENTS: not even the metadata: info and
#     save say the header is unreadable (exit 5), save writes nothing;
#   inside DMESG, or right after it: metadata whole, no pages: saved,
#     INCOMPLETE, without the kernel log when it was cut;
#   inside END: every page, no END: saved INCOMPLETE.
#
# usage: tests/faults/cutfile.sh VMCORE [--workdir DIR]
# VMCORE: a real vmcore with a kernel log (the e2e harness's raw copies).
set -uo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
top=$(cd "$here/../.." && pwd)
vmcore=${1:?usage: cutfile.sh VMCORE [--workdir DIR]}
shift
workdir=$top/build/faults/cutfile
[ "${1:-}" = --workdir ] && workdir=$(mkdir -p "$2" && cd "$2" && pwd)
kdumpinit=${KDUMPINIT:-$top/build/kdumpinit}
python=/usr/bin/python3
rm -rf "$workdir"
mkdir -p "$workdir"

npass=0 nfail=0
pass() { npass=$((npass + 1)); echo "PASS: $*"; }
failed() { nfail=$((nfail + 1)); echo "FAIL: $*"; }

dump=$workdir/dump.img
"$kdumpinit" capture --vmcore "$vmcore" --output "$dump" --level 31 >"$workdir/capture.out" 2>&1 ||
	{ failed "capture exited $?: $(tail -n 3 "$workdir/capture.out")"; echo "$npass passed, $nfail failed, 0 skipped"; exit 1; }
"$python" "$top/tests/tools/chunks.py" "$dump" >"$workdir/chunks.txt"
# OFFSET TYPE LEN SEQ DUMP_ID; types: 2 NOTES 3 VMCOREINFO 4 SEGMENTS 6 DMESG 7 END
at() { awk -v t="$1" '$2 == t { print $1 + 48 + int($3 / 2); exit }' "$workdir/chunks.txt"; }
after() { awk -v t="$1" '$2 == t { print $1 + 48 + $3; exit }' "$workdir/chunks.txt"; }
endat=$(awk '$2 == 7 { print $1 + 20; exit }' "$workdir/chunks.txt")
grep -q " 6 " "$workdir/chunks.txt" || failed "the capture wrote no DMESG chunk: is $vmcore a real vmcore?"

# NAME OFFSET WANT: WANT is what info and save must make of it.
#   nometa   info: incomplete (metadata missing), exit 5; save: nothing written
#   nopages  info: incomplete, 0 pages; save --format elf: exit 5
#   nolog    the same, and info says kernel log: no
#   noend    info: incomplete, no END, every page; save: exit 5
cases="notes $(at 2) nometa
vmcoreinfo $(at 3) nometa
segments $(at 4) nometa
dmesg $(at 6) nolog
after-dmesg $(after 6) nopages
end $endat noend"
pages_all=$("$kdumpinit" info "$dump" | awk '$1 == "pages" {print $3}')
while read -r name off want; do
	[ -n "$off" ] || { failed "$name: no such chunk in the dump"; continue; }
	c=$workdir/cut-$name.img
	cp --sparse=always "$dump" "$c"
	# What a cut leaves: nothing written from OFF on.
	size=$(stat -c %s "$c")
	truncate -s "$off" "$c" && truncate -s "$size" "$c"
	"$kdumpinit" info "$c" >"$workdir/info-$name.out" 2>&1
	irc=$?
	"$kdumpinit" save "$c" --output "$workdir/saved-$name.elf" --format elf >"$workdir/save-$name.out" 2>&1
	src=$?
	pages=$(awk '$1 == "pages" {print $3}' "$workdir/info-$name.out")
	state=$(grep -m1 '^state' "$workdir/info-$name.out" | tr -s ' ' | cut -c1-100)
	case $want in
	nometa)
		[ $irc = 5 ] && [ $src != 0 ] && [ ! -e "$workdir/saved-$name.elf" ] &&
			pass "cut inside $name (byte $off): info exit 5 ($state), save refuses (exit $src), nothing written" ||
			failed "cut inside $name: info exit $irc ($state), save exit $src" ;;
	nolog | nopages)
		log=$(awk '$1 == "kernel" && $2 == "log" {print $3}' "$workdir/info-$name.out")
		wantlog=$([ $want = nolog ] && echo no || echo yes)
		[ $irc = 5 ] && [ "${pages:-x}" = 0 ] && [ "$log" = "$wantlog" ] && [ $src = 5 ] &&
			pass "cut $([ $want = nolog ] && echo inside || echo after) the kernel log (byte $off): info exit 5, 0 pages, kernel log $log; save exit 5" ||
			failed "cut at $name: info exit $irc, pages ${pages:-?}, kernel log ${log:-?}, save exit $src" ;;
	noend)
		[ $irc = 5 ] && [ "${pages:-x}" = "$pages_all" ] && grep -q "no END record" "$workdir/info-$name.out" && [ $src = 5 ] &&
			"$python" "$top/tests/tools/pagecheck.py" "$vmcore" "$workdir/saved-$name.elf" --require some >/dev/null 2>&1 &&
			pass "cut inside END (byte $off): every page ($pages) there, no END: info and save exit 5, pages right" ||
			failed "cut inside END: info exit $irc, pages ${pages:-?} of $pages_all, save exit $src" ;;
	esac
	rm -f "$c" "$workdir/saved-$name.elf"
done <<<"$cases"
rm -f "$dump"
echo "$npass passed, $nfail failed, 0 skipped"
[ $nfail = 0 ]
