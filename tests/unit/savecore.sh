#!/bin/bash
# save --dir (savecore) and save --format kdump, black-box: the whole cycle
# (a dump present, saved, the device marked saved, nothing left to save),
# --check, --max, a full disk (nothing half-written under a final name, the
# device not marked; the safety cases are in savecore_safety.sh), and a damaged dump saved as INCOMPLETE. Needs root
# for the small tmpfs that plays the full disk.
set -u
cd "$(dirname "$0")/../.."
K=${KDUMPINIT:-$PWD/build/kdumpinit}
MK=${MKVMCORE:-$PWD/build/tools/mkvmcore}
W=$(mktemp -d "${TMPDIR:-/tmp}/kdi-savecore.XXXXXX")
pass=0 fail=0
# T=GLOB (make check-unit T=...): only the checks it names are counted and
# shown; the set-up between them still runs.
T=${T:-}
shopt -s extglob
ok() { [[ -z $T || $1 == $T ]] || return 0; echo "ok $1"; pass=$((pass + 1)); }
bad() { [[ -z $T || $1 == $T ]] || return 0; echo "FAIL $1: $2"; fail=$((fail + 1)); }
check() { local n=$1; shift; if "$@"; then ok "$n"; else bad "$n" "${why:-condition false}"; fi; why=; }
cleanup() { mountpoint -q "$W/full" && umount "$W/full"; rm -rf "$W"; }
trap cleanup EXIT

"$MK" -o "$W/v.core" --mem 32M --segments 2 --seed 7 >/dev/null || { echo "0 passed, 1 failed, 0 skipped"; exit 1; }
"$K" capture --vmcore "$W/v.core" --output "$W/dev.img" --level 1 >/dev/null 2>&1
cp "$W/dev.img" "$W/dev2.img"

"$K" save "$W/dev.img" --check; rc=$?
check "check: an unsaved dump is there (exit 0)" test $rc = 0
"$K" save "$W/dev.img" --dir "$W/crash" --max 2 >"$W/out" 2>&1; rc=$?
check "save --dir exits 0" test $rc = 0
d=$(ls -d "$W"/crash/[0-9]*-[0-9]*-[0-9]*-* 2>/dev/null | head -n 1)
check "a DIR/<crash time> directory holds vmcore, dmesg-less info.txt" test -f "$d/vmcore" -a -f "$d/info.txt"
check "files are mode 0600" test "$(stat -c %a "$d/vmcore") $(stat -c %a "$d/info.txt")" = "600 600"
check "no temporary names are left" test -z "$(find "$W/crash" -name '.*tmp' -o -name '*.partial')"
check "the vmcore is kdump-compressed" test "$(head -c 8 "$d/vmcore")" = "KDUMP   "
"$K" save "$W/dev.img" --check; rc=$?
check "check: after saving, nothing unsaved (exit 1)" test $rc = 1
"$K" info "$W/dev.img" >"$W/info" 2>&1
check "info says the dump is saved" grep -q "complete, saved" "$W/info"
"$K" save "$W/dev.img" --dir "$W/crash" >"$W/out" 2>&1; rc=$?
check "a second save finds nothing to do (exit 0, no new directory)" \
	test $rc = 0 -a "$(ls "$W/crash" | wc -l)" = 1
"$K" save "$W/dev.img" --dir "$W/crash" --force >"$W/out" 2>&1; rc=$?
why="exit $rc: $(cat "$W/out")"
check "--force: a dump already in DIR is not saved again (exit 0, said, no new directory)" \
	eval 'test $rc = 0 -a "$(ls "$W/crash" | wc -l)" = 1 && grep -q "already saved in $W/crash/" "$W/out"'
# Two more crashes of the same kernel (new captures: other dumps).
for i in 3 4; do
	"$K" capture --vmcore "$W/v.core" --output "$W/dev$i.img" --level 1 >/dev/null 2>&1
	"$K" save "$W/dev$i.img" --dir "$W/crash" --max 2 >/dev/null 2>&1
done
check "--max 2 keeps the newest two" test "$(ls "$W/crash" | wc -l)" = 2

# The kdump file holds the same pages as the ELF save, read back.
"$K" save "$W/dev.img" --output "$W/e.elf" --format elf >/dev/null 2>&1
/usr/bin/python3 tests/tools/mdcmp.py "$W/e.elf" "$(ls -d "$W"/crash/*/ | tail -n 1)vmcore" >"$W/md" 2>&1
check "save --format kdump holds the same pages as the ELF save" grep -q "result: OK" "$W/md"
"$K" save "$W/dev.img" --output "$W/raw.kdump" --compress none >/dev/null 2>&1
/usr/bin/python3 tests/tools/mdcmp.py "$W/e.elf" "$W/raw.kdump" >"$W/md" 2>&1
check "save --compress none holds the same pages" grep -q "result: OK" "$W/md"

# Batches are compressed in parallel and written in order, by whichever
# worker holds the next one: any thread count writes the same file. And a
# write that fails mid-way stops every worker: an error, not a hang.
for t in 1 2 3; do
	"$K" save "$W/dev.img" --output "$W/t$t.kdump" --threads $t >/dev/null 2>&1
done
check "save --format kdump: a 16-batch test file (premise)" \
	test "$(stat -c %s "$W/t1.kdump" 2>/dev/null || echo 0)" -gt 1000000
check "save --format kdump: --threads 2 writes the same file as --threads 1" cmp -s "$W/t1.kdump" "$W/t2.kdump"
check "save --format kdump: --threads 3 writes the same file as --threads 1" cmp -s "$W/t1.kdump" "$W/t3.kdump"
mkdir -p "$W/small"
if mount -t tmpfs -o size=1m tmpfs "$W/small" 2>/dev/null; then
	timeout 60 "$K" save "$W/dev.img" --output "$W/small/v.kdump" --threads 3 --force >"$W/out" 2>&1; rc=$?
	why="exit $rc: $(tail -n 1 "$W/out")"
	check "a kdump save that runs out of space mid-way exits 1, no hang" test $rc = 1
	why="$(tail -n 1 "$W/out")"
	check "... and says the write failed" grep -qi "no space" "$W/out"
	umount "$W/small"
else
	bad "kdump save, out of space" "cannot mount a tmpfs (not root?)"
fi

# A full disk: a 2 MiB tmpfs cannot hold the dump.
mkdir -p "$W/full"
if mount -t tmpfs -o size=2m tmpfs "$W/full" 2>/dev/null; then
	"$K" save "$W/dev2.img" --dir "$W/full" >"$W/out" 2>&1; rc=$?
	check "full disk: save fails (exit 1)" test $rc = 1
	check "full disk: nothing left in DIR" test -z "$(ls -A "$W/full")"
	"$K" save "$W/dev2.img" --check; rc=$?
	check "full disk: the device still holds an unsaved dump" test $rc = 0
	umount "$W/full"
	# Room for the LZ4 size but not for an ELF vmcore, which is raw: the
	# ELF size is an upper bound, so this is refused up front.
	stored=$("$K" info "$W/dev2.img" | sed -n 's/.*uncompressed, \([0-9.]*\) MiB stored.*/\1/p')
	mount -t tmpfs -o size=$(awk -v s="$stored" 'BEGIN{printf "%d", s + 6}')m tmpfs "$W/full"
	"$K" save "$W/dev2.img" --dir "$W/full" --format elf >"$W/out" 2>&1; rc=$?
	check "no room for an ELF vmcore: refused before writing (exit 1)" test $rc = 1
	check "no room for an ELF vmcore: nothing left in DIR" test -z "$(ls -A "$W/full")"
	grep -q "needs up to .* as ELF .*not saved, the device keeps it" "$W/out" ||
		bad "no room for an ELF vmcore: message" "$(cat "$W/out")"
	# A write that fails mid-way: a file size limit (EFBIG, SIGXFSZ ignored).
	(trap '' XFSZ; ulimit -f 4096; exec "$K" save "$W/dev2.img" --dir "$W/fills" --format elf) \
		>"$W/out" 2>&1; rc=$?
	check "a write fails mid-way: save fails (exit 1)" test $rc = 1
	check "a write fails mid-way: nothing left in DIR" test -z "$(ls -A "$W/fills")"
	grep -q "nothing left there, the device keeps its dump" "$W/out" ||
		bad "a write fails mid-way: message" "$(cat "$W/out")"
	"$K" save "$W/dev2.img" --check; rc=$?
	check "a write fails mid-way: the device is not marked saved" test $rc = 0
	dd if=/dev/zero of="$W/full/filler" bs=1k count=1 2>/dev/null
	"$K" save "$W/dev2.img" --dir "$W/full" --min-free 1G >"$W/out" 2>&1; rc=$?
	check "--min-free refuses before writing" \
		test $rc = 1 -a "$(ls -A "$W/full")" = filler
	grep -q "not saved, the device keeps it" "$W/out" || bad "--min-free message" "$(cat "$W/out")"
	umount "$W/full"
else
	bad "full disk" "cannot mount a tmpfs (not root?)"
fi

# A damaged dump: a byte flipped in the middle of the stream.
cp "$W/dev2.img" "$W/dmg.img"
size=$(stat -c %s "$W/dmg.img")
printf '\xff' | dd of="$W/dmg.img" bs=1 seek=$(((1 << 20) + (size - (1 << 20)) / 2)) conv=notrunc 2>/dev/null
"$K" save "$W/dmg.img" --dir "$W/crash2" >"$W/out" 2>&1; rc=$?
check "damaged: save --dir exits 5 (saved, incomplete)" test $rc = 5
v=$(ls -d "$W"/crash2/*/ 2>/dev/null | head -n 1)vmcore
st=$(od -An -tu4 -j 424 -N 4 "$v" 2>/dev/null | tr -d ' ')
check "damaged: the kdump header says INCOMPLETE (status 0x8)" test $(( ${st:-0} & 8 )) = 8
grep -q "not marked saved, the dump is incomplete" "$W/out" ||
	bad "damaged: message for an incomplete dump left unsaved" "$(cat "$W/out")"
"$K" save "$W/dmg.img" --check; rc=$?
check "damaged: not marked saved after saving what was intact (no --mark-incomplete)" test $rc = 0
# The next save (the next boot) reads it again, no better: it is in DIR
# already, so it is not saved again, and it is marked saved.
"$K" save "$W/dmg.img" --dir "$W/crash2" >"$W/out" 2>&1; rc=$?
why="exit $rc: $(cat "$W/out")"
check "damaged: the next save finds it in DIR: not saved again (exit 0, said)" \
	eval 'test $rc = 0 -a "$(ls "$W/crash2" | wc -l)" = 1 &&
	      grep -q "already saved in .*(incomplete, and this read holds no more): not saved again" "$W/out" &&
	      grep -q "dmg.img: marked its dump saved" "$W/out"'
"$K" save "$W/dmg.img" --check; rc=$?
check "damaged: ... and marks it saved on the device" test $rc = 1
cp "$W/dev2.img" "$W/dmg2.img"
printf '\xff' | dd of="$W/dmg2.img" bs=1 seek=$(((1 << 20) + (size - (1 << 20)) / 2)) conv=notrunc 2>/dev/null
"$K" save "$W/dmg2.img" --dir "$W/crash2m" --mark-incomplete >"$W/out" 2>&1; rc=$?
"$K" save "$W/dmg2.img" --check; rc2=$?
check "damaged: --mark-incomplete marks it saved at once (exit 5, --check 1)" test $rc = 5 -a $rc2 = 1

# A dump is never saved twice into DIR (the reported case first): a
# complete dump A saved, then an incomplete dump B waits on the device, and
# three boots each run save --dir --max 3 without --mark-incomplete. B was
# saved at every boot and --max removed A, the only copy of that crash.
mkd() {	# IMG CRASHTIME: a captured 8M dump
	"$MK" -o "$W/m.core" --mem 8M --seed 3 --crashtime "$2" >/dev/null &&
		"$K" capture --vmcore "$W/m.core" --output "$W/$1" --level 1 >/dev/null 2>&1
}
at() {	# IMG NUM DEN: the stream offset NUM/DEN of the way into IMG
	local n=$(stat -c %s "$W/$1")
	echo $(((1 << 20) + (n - (1 << 20)) * $2 / $3))
}
cutdump() {	# IMG [NUM DEN]: a byte flipped there (the middle): incomplete from there
	printf '\xff' | dd of="$W/$1" bs=1 seek=$(at "$1" "${2:-1}" "${3:-2}") conv=notrunc 2>/dev/null
}
mkd A.img 1750000000 && mkd B.img 1760000000 && mkd C.img 1770000000 && cp "$W/B.img" "$W/Bwhole.img" && cutdump B.img ||
	bad "dedup: setup" "mkvmcore or capture failed"
SA=2025-06-15-15:06:40 SB=2025-10-09-08:53:20 SC=2026-02-02-02:40:00
D=$W/dedup
"$K" save "$W/A.img" --dir "$D" --max 3 >/dev/null 2>&1
for boot in 1 2 3; do "$K" save "$W/B.img" --dir "$D" --max 3 >"$W/out$boot" 2>&1; rcs[$boot]=$?; done
why="$(ls "$D" | tr '\n' ' ')"
check "dedup: an incomplete dump is saved once over three boots (--max 3): DIR holds A and B only" \
	test "$(ls "$D" | tr '\n' ' ')" = "$SA $SB "
check "dedup: ... the complete dump A saved before is kept" test -f "$D/$SA/vmcore"
why="exits ${rcs[*]}: $(cat "$W/out2")"
check "dedup: ... boot 2 finds B in DIR, saves nothing and marks it saved (exit 0)" \
	eval 'test ${rcs[2]} = 0 && grep -q "already saved in $D/$SB (incomplete, and this read holds no more): not saved again" "$W/out2" &&
	      grep -q "B.img: marked its dump saved" "$W/out2"'
why="exits ${rcs[*]}: $(cat "$W/out3")"
check "dedup: ... boot 3 has nothing to do (exit 0)" \
	eval 'test ${rcs[3]} = 0 && grep -q "already saved; nothing to do" "$W/out3"'
check "dedup: the marker names the dump (claim, dump_id, start time, state, pages)" \
	grep -Eq '^dump [0-9a-f-]{36} [0-9a-f]{16} [0-9]+ incomplete [0-9]+$' "$D/$SB/.kdumpinit"
# A device read again that reads better (read errors gone): saved again,
# as a second copy; the first of B's copies is what --max removes first.
"$K" save "$W/Bwhole.img" --dir "$D" --max 3 >"$W/out" 2>&1; rc=$?
why="exit $rc: $(cat "$W/out"; ls "$D" | tr '\n' ' ')"
check "dedup: a dump saved incomplete that now reads complete is saved again (exit 0, said)" \
	eval 'test $rc = 0 -a -f "$D/$SB.1/vmcore" && grep -q "holds this dump incomplete .*this read holds more .*complete): saving it again" "$W/out"'
"$K" save "$W/C.img" --dir "$D" --max 3 >"$W/out" 2>&1; rc=$?
why="exit $rc: $(cat "$W/out"; ls "$D" | tr '\n' ' ')"
check "dedup: --max 3 over A, two copies of B and C removes B's incomplete copy, not A" \
	test $rc = 0 -a "$(ls "$D" | tr '\n' ' ')" = "$SA $SB.1 $SC "
check "dedup: ... and says it was a second copy" grep -q "removed old dump $D/$SB (--max 3; a second copy" "$W/out"
# The second read holds more but is still incomplete (of two damaged
# places, one read again): saved again, and marked saved, as the last read.
mkd E.img 1780000000 && cp "$W/E.img" "$W/Epristine.img" && cutdump E.img 3 4 && cutdump E.img 1 2 ||
	bad "dedup: setup E" "mkvmcore or capture failed"
"$K" save "$W/E.img" --dir "$W/dedupE" >/dev/null 2>&1
o=$(at E.img 1 2)
dd if="$W/Epristine.img" of="$W/E.img" bs=1 skip=$o seek=$o count=1 conv=notrunc 2>/dev/null
"$K" save "$W/E.img" --dir "$W/dedupE" >"$W/out" 2>&1; rc=$?
"$K" save "$W/E.img" --check; rc2=$?
why="exit $rc, --check $rc2: $(cat "$W/out"; ls "$W/dedupE" | tr '\n' ' ')"
check "dedup: a second read that holds more, still incomplete: saved again (exit 5) and marked saved" \
	eval 'test $rc = 5 -a $rc2 = 1 -a "$(ls "$W/dedupE" | wc -l)" = 2 &&
	      grep -q "this read holds more ([0-9]* pages): saving it again, then marking it saved" "$W/out"'
# A copy that lost its vmcore (removed by hand) does not count.
rm "$D/$SC/vmcore"
"$K" save "$W/C.img" --dir "$D" --force >"$W/out" 2>&1; rc=$?
why="exit $rc: $(cat "$W/out"; ls "$D" | tr '\n' ' ')"
check "dedup: a copy whose vmcore was removed does not count: saved again" \
	test $rc = 0 -a -f "$D/$SC.1/vmcore"

# An empty device.
"$K" format "$W/empty.img" --size 4M >/dev/null 2>&1
"$K" save "$W/empty.img" --check; rc=$?
check "empty device: --check exits 1" test $rc = 1
"$K" save "$W/empty.img" --dir "$W/crash3" >"$W/out" 2>&1; rc=$?
check "empty device: save --dir has nothing to do (exit 0)" test $rc = 0 -a ! -e "$W/crash3/"*

# No SOURCE: the device the firmware names (an SMBIOS type 11 credential,
# in a fake /sys), as the boot service runs it when /etc/default/kdumpinit
# names none; and with no credential, nothing to do (exit 0).
fw=$W/fw/sys/firmware/dmi/entries/11-0
mkdir -p "$fw"
cred="io.systemd.credential:kdumpinit.dev=$W/dev2.img"
{ printf '\013\005\000\000\001'; printf '%s\000\000' "$cred"; } >"$fw/raw"
KDUMPINIT_FW_ROOT=$W/fw "$K" save --check >"$W/out" 2>&1; rc=$?
why="exit $rc, said: $(head -c 200 "$W/out")"
check "no SOURCE: --check uses the firmware's kdumpinit.dev (smbios)" \
	sh -c 'grep -q "dump device .*dev2.img, from the firmware (smbios)" "$1" && [ "$2" -le 1 ]' _ "$W/out" $rc
KDUMPINIT_FW_ROOT=$W/fw-none "$K" save --dir "$W/crash4" >"$W/out" 2>&1; rc=$?
why="exit $rc, said: $(head -c 200 "$W/out")"
check "no SOURCE, no credential: save --dir has nothing to do (exit 0)" \
	sh -c 'grep -q "no firmware credential kdumpinit.dev: nothing to save" "$1" && [ "$2" = 0 ] && [ ! -e "$3" ]' \
	_ "$W/out" $rc "$W/crash4"

echo "$pass passed, $fail failed, 0 skipped"
[ "$fail" = 0 ]
