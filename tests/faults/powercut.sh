#!/bin/bash
# Power cuts during a real capture: QEMU is killed (SIGKILL) while
# kdumpinit, PID 1 of the crash kernel, writes the dump, at a point timed
# by its console lines (tests/e2e/run.sh --cut-at). Then, on the host:
#   info reports the state the cut left (empty, or incomplete);
#   save --format kdump writes every complete chunk, marked INCOMPLETE;
#   save --dir saves it and leaves it unsaved on the device (no
#   --mark-incomplete), so the next save tries again;
#   every page saved is the raw vmcore's (pagecheck, in run.sh);
#   where the cut came after the kernel's pages (written first: middle,
#   late, end), drgn opens the saved dump and reads init_uts_ns through
#   the dump's own page tables.
#
# usage: tests/faults/powercut.sh CASE [--workdir DIR]
#   before   at kdumpinit's "kernel log:" line, before it opens the target
#   early    at the first progress line with 30-99 MB written (of 270-300)
#   middle   ... 130-199 MB
#   late     ... 210 MB or more
#   high     at 190 MB or more, on a guest whose kernel KASLR placed high:
#            the dump itself must show the kernel image, init_top_pgt and
#            init_uts_ns above the pfn where the cut LATER (pfn-order) pass
#            stopped, and above where a capture in pfn order alone would
#            have stopped with as many pages; drgn reads init_uts_ns and
#            the kernel log from the kdump and the ELF save
#   end      level 31, the dump disk slowed to 3 MB/s, at 100 %: END in
#            flight, every page written (no raw copy: drgn is the check)
#   l31      level 31, the same disk, at 20-29 MB written: past the
#            debugger's pages (written first), before the end
#   replace  a cut at 50 %, then a new crash captured onto the same disk
#            and cut at 30-99 MB: the old one is kept, the new one goes after it
# KASLR high (case high): the decompressor's KASLR never puts the kernel
# in a memmap=nn!ss (or $, #) range, and the kernel parses memmap= only
# after it has been placed. So the first kernel gets memmap=R!32M, which
# leaves the decompressor only 16-32 MiB (too small) and the top 128 MiB
# less the initrd (about 110 MiB) for the 52 MiB image, and
# memmap=4P%32M-12+1, which turns that range back into
# RAM (type 12, persistent, to 1: the decompressor reads a % entry as a
# memory limit, and 4 PiB is above any it keeps). The guest runs with all
# its memory; the crash reservation lands under the kernel (top-down).
# Retrying boots until KASLR happens to go high would cost a whole run
# per try.
# The points inside the metadata and the kernel log cannot be reached by
# killing QEMU: the guest writes them in one request, which lands whole or
# not at all. tests/faults/cutfile.sh cuts a real dump at those bytes.
set -uo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
top=$(cd "$here/../.." && pwd)
case=${1:-}
shift || true
workdir=$top/build/faults/cut-$case
[ "${1:-}" = --workdir ] && workdir=$(mkdir -p "$2" && cd "$2" && pwd)
mkdir -p "$workdir"
kdumpinit=${KDUMPINIT:-$top/build/kdumpinit}
python=/usr/bin/python3

npass=0 nfail=0
pass() { npass=$((npass + 1)); echo "PASS: $*"; }
failed() { nfail=$((nfail + 1)); echo "FAIL: $*"; }

progress() { echo "^kdumpinit: capture: +(${1})%"; }
# Cuts in the pages go by the bytes written, not the progress: that counts
# pfns decided, and a level-1 capture decides its last 40 % (free memory
# at the top) in a moment once the writes are done. The dump disk is slowed
# to 6 MB/s: a level-1 dump of the 1 GiB guest is 270-300 MB, so the
# capture takes about 50 s and prints a line every 6 MB or so.
written() { echo "^kdumpinit: capture: .* (${1}) MiB written"; }
slow=(--slow-disk 6000000)
extra=() level=1
case $case in
before) cut='^kdumpinit: kernel log: ' ;;
early) cut=$(written '[3-9][0-9]') extra=("${slow[@]}") ;;
middle) cut=$(written '1[3-9][0-9]') extra=("${slow[@]}") ;;
late) cut=$(written '2[1-9][0-9]|[3-9][0-9][0-9]') extra=("${slow[@]}") ;;
high)
	# 190 MB of the 270-300: late, and still some 40 MB (10000 pages)
	# short of where pfn order alone would reach init_top_pgt.
	mem=1024
	cut=$(written '19[0-9]|2[0-9][0-9]|[3-9][0-9][0-9]')
	extra=("${slow[@]}" --mem "${mem}M" --append-first "memmap=$((mem - 32 - 96))M!32M memmap=4P%32M-12+1") ;;
end) cut=$(progress '100') extra=(--slow-disk 3000000 --no-raw) level=31 ;;
# Level 31 is one pass in pfn order after the debugger's pages (17-24 MB
# of its 33-39 MB): a cut at 20-29 MB comes after them, before the end.
l31) cut=$(written '2[0-9]') extra=(--slow-disk 3000000 --no-raw) level=31 ;;
replace) cut=$(written '1[3-9][0-9]') extra=("${slow[@]}") ;;
*) echo "usage: tests/faults/powercut.sh before|early|middle|late|high|end|l31|replace [--workdir DIR]" >&2; exit 2 ;;
esac

run() { # CUT-ERE [run.sh options]
	local c=$1
	shift
	bash "$top/tests/e2e/run.sh" --cpu max,la57=off --level "$level" --cut-at "$c" --workdir "$workdir" "$@"
}

# After a cut, on the host: the device's state, the saves.
after_cut() { # LABEL
	local info=$workdir/info.out dump=$workdir/dump.img rc
	if grep -q "^state *empty" "$info"; then
		[ "$case" = before ] && pass "$1: nothing was written before the cut: the device reads as empty" ||
			failed "$1: the device reads as empty after a cut in the capture"
		return
	fi
	grep -q "^state *incomplete (no END record" "$info" &&
		pass "$1: info: $(grep '^state' "$info" | tr -s ' ' | cut -c1-110)" ||
		{ failed "$1: info does not say incomplete, no END:"; sed 's/^/    /' "$info"; }
	rm -f "$workdir/saved.kdump"
	"$kdumpinit" save "$dump" --output "$workdir/saved.kdump" --format kdump >"$workdir/save-kdump.out" 2>&1
	rc=$?
	# disk_dump_header.status at 424: DUMP_DH_COMPRESSED_INCOMPLETE (0x8)
	st=$(od -An -tu4 -j 424 -N 4 "$workdir/saved.kdump" 2>/dev/null | tr -d ' ')
	[ $rc = 5 ] && [ $(( ${st:-0} & 8 )) = 8 ] &&
		pass "$1: save --format kdump: exit 5, header says INCOMPLETE" ||
		{ failed "$1: save --format kdump exited $rc, status ${st:-none}:"; sed 's/^/    /' "$workdir/save-kdump.out"; }
	rm -rf "$workdir/crash"
	"$kdumpinit" save "$dump" --dir "$workdir/crash" >"$workdir/save-dir.out" 2>&1
	rc=$?
	local n
	n=$(find "$workdir/crash" -mindepth 2 -maxdepth 2 -name vmcore 2>/dev/null | wc -l)
	"$kdumpinit" save "$dump" --check >/dev/null 2>&1
	local unsaved=$?
	[ $rc = 5 ] && [ "$n" = 1 ] && [ $unsaved = 0 ] &&
		grep -q "not marked saved, the dump is incomplete" "$workdir/save-dir.out" &&
		pass "$1: save --dir: saved (exit 5), the device's dump left unsaved (--check exits 0)" ||
		{ failed "$1: save --dir exited $rc, $n saved, --check $unsaved:"; sed 's/^/    /' "$workdir/save-dir.out"; }
	# The kernel's pages are what drgn needs, and they are written first
	# (the first pass: about a fifth of the progress at level 1): a cut
	# past the middle keeps them all, whatever KASLR did. An early cut may
	# come inside that pass: reported, not judged.
	if [ "$case" = end ] || [ "$case" = l31 ] || [ "$case" = middle ] || [ "$case" = late ] || [ "$case" = high ] ||
		{ [ "$case" = replace ] && [ "$1" = replace ]; }; then
		"$python" "$top/tests/tools/drgnopen.py" "$workdir/saved.kdump" >"$workdir/drgn.out" 2>&1 &&
			pass "$1: $(cat "$workdir/drgn.out")" ||
			{ failed "$1: drgn cannot read the cut dump:"; sed 's/^/    /' "$workdir/drgn.out"; }
	elif [ -s "$workdir/saved.kdump" ]; then
		"$python" "$top/tests/tools/drgnopen.py" "$workdir/saved.kdump" >"$workdir/drgn.out" 2>&1
		echo "note: $1: $(head -c 300 "$workdir/drgn.out")"
	fi
}

rm -f "$workdir/dump.img"
run "$cut" "${extra[@]}"
e2e=$?
[ $e2e = 0 ] && pass "power cut ($case): tests/e2e/run.sh's checks passed" ||
	failed "power cut ($case): tests/e2e/run.sh exited $e2e"
[ -f "$workdir/cut" ] && pass "QEMU killed at: $(cut -c1-100 "$workdir/cut")" || failed "no power cut happened"
after_cut "$case"

if [ "$case" = high ]; then
	info=$workdir/info.out
	# The memmap= pair cost the first kernel no memory: its map after
	# them is the firmware's.
	first=$(sed -n '1,/Trigger a crash/p' "$workdir/console.log")
	fw=$(grep -a -o 'BIOS-e820: .*' <<<"$first" | cut -d' ' -f2-)
	user=$(grep -a -o 'user: \[mem .*' <<<"$first" | cut -d' ' -f2-)
	grep -a -q "user-defined physical RAM map" "$workdir/console.log" && [ -n "$fw" ] && [ "$fw" = "$user" ] &&
		pass "first kernel: memmap= took effect and its memory map is the firmware's ($(grep -c . <<<"$fw") ranges)" ||
		failed "first kernel: no user-defined memory map equal to the firmware's"
	# The dump itself says where KASLR put the kernel and where the cut
	# came; the chunks counted are the intact ones info counts.
	limit=$(sed -n 's/^state .*chunk [0-9]* at offset \([0-9]*\).*/\1/p' "$info")
	kept=$(awk '$1 == "pages" && $2 == "kept" {print $3}' "$info")
	"$python" "$here/kaslrhigh.py" "$workdir/dump.img" "$workdir/raw.vmcore" ${limit:+--limit "$limit"} \
		${kept:+--pages "$kept"} >"$workdir/kaslrhigh.out" 2>&1 &&
		pass "KASLR high, cut below it: $(cut -c12- "$workdir/kaslrhigh.out")" ||
		{ failed "the kernel is not above the cut:"; sed 's/^/    /' "$workdir/kaslrhigh.out"; }
	# And high because memmap= kept KASLR to the top: a kernel placed
	# anywhere from 16 MiB would land there about one time in sixteen.
	at=$(grep -o '([0-9]* MiB,' "$workdir/kaslrhigh.out" | grep -o '[0-9]*')
	[ -n "$at" ] && [ "$at" -ge $((mem - 128)) ] &&
		pass "the kernel image is where memmap= left KASLR room: at $at MiB, the window from $((mem - 128)) MiB" ||
		failed "the kernel image is at ${at:-?} MiB, below the window memmap= left ($((mem - 128)) MiB on)"
	# drgn reads the kernel log (the printk ring, by VMCOREINFO alone)
	# from both saves: as many records as kdumpinit's own reader found.
	nrec=$(grep -a -o "kdumpinit: kernel log: [0-9]* records" "$workdir/crash-console.log" | grep -o '[0-9]*' | tail -n 1)
	"$python" "$top/tests/tools/drgnopen.py" "$workdir/saved.elf" >"$workdir/drgn-elf.out" 2>&1 &&
		pass "save --format elf: $(cat "$workdir/drgn-elf.out")" ||
		{ failed "drgn cannot read the cut dump's ELF save:"; sed 's/^/    /' "$workdir/drgn-elf.out"; }
	for f in kdump elf; do
		"$python" "$here/drgnlog.py" "$workdir/saved.$f" >"$workdir/drgnlog-$f.out" 2>&1
		rc=$?
		got=$(sed -n 's/.*the kernel log: \([0-9]*\) records.*/\1/p' "$workdir/drgnlog-$f.out")
		[ $rc = 0 ] && [ -n "$nrec" ] && [ "$got" = "$nrec" ] &&
			pass "$f: $(cat "$workdir/drgnlog-$f.out") = kdumpinit's $nrec" ||
			{ failed "$f: drgn's kernel log (${got:-none} records, kdumpinit read ${nrec:-?}):"; sed 's/^/    /' "$workdir/drgnlog-$f.out"; }
	done
fi

if [ "$case" = replace ]; then
	# A new crash onto the partial dump, never saved: the new capture goes
	# after it (a second dump on the device, with a new dump id); each is
	# read alone, nothing of the old one as part of the new one.
	old=$("$kdumpinit" info "$workdir/dump.img" 2>&1 | awk '$1 == "pages" {print $3}')
	cp "$workdir/info.out" "$workdir/info-old.out"
	run "$(written '[3-9][0-9]')" --keep-dump "${slow[@]}"
	e2e=$?
	[ $e2e = 0 ] && pass "second capture onto the partial dump: run.sh's checks passed (pagecheck: only the new vmcore's pages)" ||
		failed "second capture onto the partial dump: tests/e2e/run.sh exited $e2e"
	n=$("$kdumpinit" info "$workdir/dump.img" 2>/dev/null | grep -c '^state ')
	[ "$n" = 2 ] && pass "the partial dump was kept: the new one is dump 2 of 2" ||
		failed "the device holds $n dump(s) after the second crash, want 2 (the partial one kept)"
	new=$(awk '$1 == "pages" {print $3}' "$workdir/info.out")
	if [ -n "$old" ] && [ -n "$new" ] && [ "$new" -lt "$old" ]; then
		pass "the new dump (cut at 10 %, $new pages) is read alone, not with the old one's ($old pages) after it"
	else
		failed "pages read: old ${old:-?}, new ${new:-?} (want fewer in the new, cut earlier)"
	fi
	after_cut "replace, second"
fi
echo "$npass passed, $nfail failed, 0 skipped"
[ $nfail = 0 ]
