#!/bin/bash
# A second crash before the first dump is saved (docs/FORMAT.md, "Several
# dumps"): the capture writes after the unsaved dump instead of over it;
# info, save --dump and save --dir show and save each; with no room the
# policy (kdumpinit.full=, capture --full) keeps them or writes over them,
# but never a complete one with a dump that would not fit; a file the
# capture made grows instead;
# a dump already saved is written over from the start again, and what is
# left of it further on is never taken for a dump that follows. Every
# dump is checked byte for byte: at level 0 the ELF save of a dump is its
# vmcore.
set -u
cd "$(dirname "$0")/../.."
K=${KDUMPINIT:-$PWD/build/kdumpinit}
MK=${MKVMCORE:-$PWD/build/tools/mkvmcore}
W=$(mktemp -d "${TMPDIR:-/tmp}/kdi-chain.XXXXXX")
pass=0 fail=0
T=${T:-}
shopt -s extglob
ok() { [[ -z $T || $1 == $T ]] || return 0; echo "ok $1"; pass=$((pass + 1)); }
bad() { [[ -z $T || $1 == $T ]] || return 0; echo "FAIL $1: $2"; fail=$((fail + 1)); }
check() { local name=$1; shift; if "$@"; then ok "$name"; else bad "$name" "${why:-condition false}"; fi; why=; }
trap 'rm -rf "$W"' EXIT

for s in 1 2 3 4; do
	"$MK" -o "$W/v$s.core" --mem 24M --segments 2 --seed $s --crashtime $((1700000000 + s)) >/dev/null ||
		{ echo "0 passed, 1 failed, 0 skipped"; exit 1; }
done
cap() {	# DEVICE VMCORE [ARGS]: a level-0 capture; its exit code
	local dev=$1 v=$2
	shift 2
	"$K" capture --vmcore "$v" --output "$dev" --level 0 "$@" >"$W/cap.out" 2>&1
}
same() {	# DEVICE N VMCORE: dump N of DEVICE saved as ELF is VMCORE, byte for byte
	rm -f "$W/s.elf"
	"$K" save "$1" --dump "$2" --output "$W/s.elf" --format elf >/dev/null 2>&1 && cmp -s "$W/s.elf" "$3"
}
ndumps() { "$K" info "$1" 2>/dev/null | grep -c '^state '; }

# 1. Two crashes, no save between: both kept, each whole.
"$K" format "$W/dev.img" --size 120M --label chain >/dev/null 2>&1
cap "$W/dev.img" "$W/v1.core"
cap "$W/dev.img" "$W/v2.core"; rc=$?
check "second capture before a save: exit 0" test $rc = 0
check "second capture says it goes after the unsaved dump" grep -q "1 dump not yet saved: this one goes after them, as dump 2" "$W/cap.out"
check "info lists two dumps" test "$(ndumps "$W/dev.img")" = 2
check "info: dump 1 of 2, then 2 of 2" test "$("$K" info "$W/dev.img" | sed -n 's/^dump  *\([0-9]* of\)/\1/p' | paste -sd,)" = "1 of 2 on the device, oldest first,2 of 2 on the device, oldest first"
check "dump 1 is the first crash, byte for byte" same "$W/dev.img" 1 "$W/v1.core"
check "dump 2 is the second crash, byte for byte" same "$W/dev.img" 2 "$W/v2.core"
"$K" save "$W/dev.img" --dump 3 --output "$W/none.elf" >"$W/o" 2>&1; rc=$?
check "save --dump 3 of 2: exit 4, said" test $rc = 4 -a -n "$(grep 'holds no dump 3' "$W/o")"
"$K" dmesg "$W/dev.img" --dump 2 >/dev/null 2>&1; rc=$?
check "dmesg --dump 2 reads the second dump (exit 0 or 4: no log in a synthetic vmcore)" test $rc = 0 -o $rc = 4

# 2. save --output without --dump takes the one save --dir takes next.
rm -f "$W/n.elf"
"$K" save "$W/dev.img" --output "$W/n.elf" --format elf >"$W/o" 2>&1
check "save without --dump: the oldest not yet saved, and it says so" \
	eval 'cmp -s "$W/n.elf" "$W/v1.core" && grep -q "saving dump 1 (.*oldest not yet saved" "$W/o"'

# 3. save --dir saves each, oldest first; then the device is all saved.
"$K" save "$W/dev.img" --dir "$W/crash" >"$W/o" 2>&1; rc=$?
check "save --dir with two unsaved dumps: exit 0" test $rc = 0
check "save --dir wrote two directories" test "$(ls "$W/crash" 2>/dev/null | wc -l)" = 2
"$K" save "$W/dev.img" --check >/dev/null 2>&1; rc=$?
check "after save --dir nothing is left unsaved (--check exit 1)" test $rc = 1
check "info: both saved" test "$("$K" info "$W/dev.img" | grep -c '^state .*, saved')" = 2

# 4. All saved: the next capture starts over at the beginning, and the
# saved dump 2 further on is not taken for one that follows it.
cap "$W/dev.img" "$W/v3.core"
check "after everything was saved, a capture writes from the start (one dump listed)" test "$(ndumps "$W/dev.img")" = 1
check "that dump is the third crash" same "$W/dev.img" 1 "$W/v3.core"

# 5. No room after the unsaved dumps: keep (default) refuses and keeps them.
"$K" format "$W/small.img" --size 20M --label small >/dev/null 2>&1
cap "$W/small.img" "$W/v1.core"
cap "$W/small.img" "$W/v2.core"; rc=$?
check "no room after an unsaved dump, --full keep: exit 4" test $rc = 4
check "no room: the console says the crash is not captured and the dump is kept" grep -q "has no room after them: this crash is not captured, and they are kept" "$W/cap.out"
check "no room, keep: the unsaved dump is intact" same "$W/small.img" 1 "$W/v1.core"
check "no room, keep: still one dump" test "$(ndumps "$W/small.img")" = 1
cap "$W/small.img" "$W/v2.core" --full overwrite; rc=$?
check "no room, --full overwrite: the capture writes over it (exit 0, said)" \
	eval 'test $rc = 0 && grep -q "writing over" "$W/cap.out"'
check "no room, overwrite: the device holds the new crash" same "$W/small.img" 1 "$W/v2.core"

# 5b. A complete dump is never written over by one that would not fit:
# under --full overwrite too, a device that would not hold it again with
# a quarter to spare keeps it (exit 4, said).
"$K" format "$W/tight.img" --size 7M --label tight >/dev/null 2>&1
cap "$W/tight.img" "$W/v1.core"; rc=$?
check "a dump that fills most of a device: complete (exit 0)" test $rc = 0
cap "$W/tight.img" "$W/v2.core" --full overwrite; rc=$?
check "no room, --full overwrite, the complete dump would not fit again: exit 4, said" \
	eval 'test $rc = 4 && grep -q "would not fit again with a quarter to spare" "$W/cap.out"'
check "... and the complete dump is intact" same "$W/tight.img" 1 "$W/v1.core"
# An incomplete one (the device was full) is no reason to keep it.
"$K" format "$W/full.img" --size 3M --label full >/dev/null 2>&1
cap "$W/full.img" "$W/v1.core"; rc=$?
check "a dump onto a device too small: incomplete (exit 5)" test $rc = 5
cap "$W/full.img" "$W/v2.core" --full overwrite; rc=$?
check "--full overwrite writes over an incomplete dump (said)" \
	eval 'test $rc = 5 && grep -q "writing over" "$W/cap.out"'

# 5c. A file the capture made grows: a second crash goes after the first
# dump, whatever the file's size, and both are whole.
cap "$W/grown.img" "$W/v1.core"
s1=$(stat -c %s "$W/grown.img")
cap "$W/grown.img" "$W/v2.core"; rc=$?
check "a file the capture made: the second crash goes after the first (exit 0, said)" \
	eval 'test $rc = 0 && grep -q "as dump 2 (the file grows as it needs)" "$W/cap.out"'
check "... the file grew" test "$(stat -c %s "$W/grown.img")" -gt "$s1"
check "... dump 1 is the first crash, byte for byte" same "$W/grown.img" 1 "$W/v1.core"
check "... dump 2 is the second crash, byte for byte" same "$W/grown.img" 2 "$W/v2.core"
"$K" status --dev "$W/grown.img" >"$W/st" 2>&1
check "status: a file the capture made has room for the next crash" eval '! grep -q "^room" "$W/st"'

# 6. An incomplete dump (cut short, as by a power cut): the next one goes
# after its intact part, and both are read.
"$K" format "$W/cut.img" --size 120M --label cut >/dev/null 2>&1
cap "$W/cut.img" "$W/v1.core"
# Zeros over the middle of its pages: the stream breaks there.
dd if=/dev/zero of="$W/cut.img" bs=1M seek=4 count=1 conv=notrunc status=none
cap "$W/cut.img" "$W/v2.core"; rc=$?
check "after a cut dump, the next capture: exit 0, after it" \
	eval 'test $rc = 0 && grep -q "as dump 2" "$W/cap.out"'
"$K" info "$W/cut.img" >"$W/i" 2>&1
check "info: dump 1 incomplete, dump 2 complete" \
	test "$(sed -n 's/^state *\([a-z]*\).*/\1/p' "$W/i" | paste -sd,)" = "incomplete,complete"
check "the dump after a cut one is whole" same "$W/cut.img" 2 "$W/v2.core"
"$K" save "$W/cut.img" --dump 1 --output "$W/c1.elf" --format elf >/dev/null 2>&1; rc=$?
check "the cut dump still saves its intact part (exit 5)" test $rc = 5 -a -s "$W/c1.elf"
# save --dir saves both; the cut dump is left unmarked (read once more
# next time), so the whole one after it is not marked either: the mark
# covers every dump before the one it names.
"$K" save "$W/cut.img" --dir "$W/crash3" >"$W/o" 2>&1; rc=$?
check "save --dir, a cut dump then a whole one: both saved, exit 5" \
	eval 'test $rc = 5 -a "$(ls "$W/crash3" | wc -l)" = 2'
check "the whole dump after an unmarked cut one is not marked (said)" \
	eval 'grep -q "dump 2 not marked saved yet: dump 1 before it is not" "$W/o" && test "$("$K" info "$W/cut.img" | grep -c "^state .*, saved")" = 0'
"$K" save "$W/cut.img" --dir "$W/crash3" >"$W/o" 2>&1; rc=$?
check "the next save --dir saves neither again and marks both" \
	eval 'test "$(ls "$W/crash3" | wc -l)" = 2 && test "$(grep -c "not saved again" "$W/o")" = 2 && ! "$K" save "$W/cut.img" --check >/dev/null 2>&1'

# 7. A stale dump further on is never taken for one that follows: dump 2
# of an earlier round stays on the device after dump 1 is written over
# by a dump of the same length.
"$K" format "$W/st.img" --size 120M --label stale >/dev/null 2>&1
cap "$W/st.img" "$W/v1.core"
cap "$W/st.img" "$W/v2.core"
"$K" save "$W/st.img" --dir "$W/crash2" >/dev/null 2>&1
cap "$W/st.img" "$W/v1.core"	# same length as the dump it replaces
check "a stale dump where a second one would go is not listed" test "$(ndumps "$W/st.img")" = 1
cap "$W/st.img" "$W/v4.core"
check "the next crash then goes after the new first dump, over the stale one" \
	eval 'test "$(ndumps "$W/st.img")" = 2 && same "$W/st.img" 2 "$W/v4.core"'

# 8. Many crashes, never saved: the device fills, the first is kept.
"$K" format "$W/loop.img" --size 40M --label loop >/dev/null 2>&1
for i in 1 2 3 4 1 2 3 4; do cap "$W/loop.img" "$W/v$i.core"; done
nl=$(ndumps "$W/loop.img")
check "a crash loop fills the device with dumps ($nl) and keeps the first" \
	eval 'test "$nl" -ge 3 && same "$W/loop.img" 1 "$W/v1.core"'

echo "$pass passed, $fail failed, 0 skipped"
[ $fail = 0 ]
