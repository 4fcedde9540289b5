#!/bin/bash
# tests/damage/run.sh: damage to the dump device, on real dumps. Each raw
# vmcore an e2e run left (6.1 and 7.3 in make check) is captured at level
# 31 twice, in the clear and sealed (capture --pubkey), and saved whole as
# the reference (save --format elf; save --key for the sealed one). Then
# tests/damage/streamdamage.py damages copies of each device and judges
# what the reader makes of them (its docstring says how): one byte
# changed in every header field of one chunk of each type, 512-byte and
# 4 KiB blocks of random bytes across the stream, a zeroed MiB in the
# middle, a damaged START, a damaged END. After each, info exits 5 and
# names a chunk the damage touched, save --check exits 0, and the save
# holds every page of every chunk the damage did not touch, byte for byte
# the undamaged save's, and no page with other bytes (docs/FORMAT.md,
# "Reading past damage"). On each sealed device, tests/damage/tamper.py
# then does what a forger without the key can: each chunk type rewritten
# as a clear PAD, retyped, dropped, repeated, swapped with the next and
# cut, the XXH64s forged again; info --key must say each, by chunk, and
# never "complete, authenticated".
#
#   tests/damage/run.sh [--full] [--reader BIN] [--workdir DIR] [--record FILE] RAW_VMCORE...
#
# Without --full (make check): two chunk types per header field, three
# blocks of each size, START's and END's header and payload bytes (about
# 30 damaged copies per dump). --full (make check-full, suite
# damage-full): every field of every type, 20 blocks of each size, START's
# first sector zeroed and END zeroed too (about 140 per dump).
# --reader BIN judges another build's reader on the same devices (the
# captures and the references are still this build's): how an older
# reader fares, by hand; not part of any suite. --record FILE keeps
# streamdamage.py's per-trial records (its table command prints them).
#
# Prints "ok NAME" / "FAIL NAME: why", a "pages" line per kind (the pages
# each damaged copy's save holds), then the pages saved per kind as a
# table ("table" lines), and ends with "N passed, N failed, 0 skipped".
set -u
top=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
K=${KDUMPINIT:-$top/build/kdumpinit}
SD=$top/tests/damage/streamdamage.py
PY=/usr/bin/python3
full='' reader='' work=$top/build/damage record=''
while [ $# -gt 0 ]; do
	case $1 in
	--full) full=--full; shift ;;
	--reader) reader=$2; shift 2 ;;
	--workdir) work=$2; shift 2 ;;
	--record) record=$2; shift 2 ;;
	*) break ;;
	esac
done
reader=${reader:-$K}
pass=0 fail=0
ok() { echo "ok $*"; pass=$((pass + 1)); }
bad() { echo "FAIL $*"; fail=$((fail + 1)); }
finish() {
	[ -s "$W/record" ] && "$PY" "$SD" table "$W/record" | sed 's/^/table /'
	[ -z "$record" ] || cp "$W/record" "$record"
	echo "$pass passed, $fail failed, 0 skipped"
	[ "$fail" -eq 0 ]
	exit
}

mkdir -p "$work" || exit 1
W=$(mktemp -d "$work/run.XXXXXX") || exit 1
trap '[ -n "${KEEP_W:-}" ] || rm -rf "$W"' EXIT
: >"$W/record"
[ -x "$K" ] || { bad "setup: $K is missing (make)"; finish; }
[ -x "$reader" ] || { bad "setup: the reader $reader is missing"; finish; }
[ $# -gt 0 ] || { bad "setup: no raw vmcore given (an e2e run leaves one in build/check)"; finish; }
# The damaged copies and their saves (128 MB each) on tmpfs when there is
# one with room: two workers, each a device and a save at a time.
export STREAMDAMAGE_TMP=$W
if [ -d /dev/shm ] && [ -w /dev/shm ] &&
	[ "$(df -Pk /dev/shm 2>/dev/null | awk 'NR == 2 { print $4 }')" -gt 2097152 ] 2>/dev/null; then
	STREAMDAMAGE_TMP=/dev/shm
fi

# The ok/FAIL lines of streamdamage.py and tamper.py are cases; a tool
# that dies without naming a failure is one failure.
pytool() {	# SCRIPT LABEL ARGS...
	local script=$1 label=$2 rc l n=0
	shift 2
	"$PY" "$script" "$@" >"$W/tool.out" 2>"$W/tool.err"
	rc=$?
	while IFS= read -r l; do
		case $l in
		"ok "* | "FAIL "*) echo "$l"; n=$((n + 1))
			case $l in ok*) pass=$((pass + 1)) ;; *) fail=$((fail + 1)) ;; esac ;;
		"pages "* | "info "*) echo "$l" ;;
		esac
	done <"$W/tool.out"
	if [ "$rc" -ne 0 ] && ! grep -q '^FAIL ' "$W/tool.out"; then
		bad "$label: $(basename "$script") exit $rc after $n cases: $(tail -n 2 "$W/tool.err" | tr '\n' ' ')"
	fi
}
tool() { pytool "$SD" "$@"; }
ttool() { pytool "$top/tests/damage/tamper.py" "$@"; }

"$K" keygen "$W/sec" "$W/pub" >/dev/null 2>&1 || { bad "setup: keygen failed"; finish; }
selftest_done=0 tamper_selftest_done=0
for raw in "$@"; do
	if [ ! -s "$raw" ]; then
		bad "setup: $raw is missing or empty (the e2e run that leaves it failed or did not run)"
		continue
	fi
	rel=$(head -c 16M "$raw" | strings -n 8 | sed -n 's/^OSRELEASE=\([0-9]*\.[0-9]*\).*/\1/p' | head -n 1)
	v=${rel:-$(basename "$raw" .vmcore)}
	clear=$W/$v-clear.img sealed=$W/$v-sealed.img
	rm -f "$clear" "$sealed"
	if ! "$K" capture --vmcore "$raw" --output "$clear" --level 31 >"$W/cap.log" 2>&1; then
		bad "$v-clear/undamaged: capture --level 31 failed: $(tail -n 1 "$W/cap.log")"
		continue
	fi
	"$K" info "$clear" >"$W/info" 2>&1
	rc=$?
	if [ $rc -ne 0 ] || ! "$K" save "$clear" --output "$clear.elf" --format elf >"$W/save.log" 2>&1; then
		bad "$v-clear/undamaged: info exit $rc, or save failed: $(tail -n 1 "$W/save.log")"
		continue
	fi
	ok "$v-clear/undamaged: complete, $(grep -oE '[0-9]+ pages in' "$W/save.log" | head -n 1) the save"
	if [ $selftest_done = 0 ]; then
		tool "selftest" selftest "$K" "$clear" "$clear.elf"
		selftest_done=1
	fi
	tool "$v-clear" judge $full --label "$v-clear" --record "$W/record" "$reader" "$clear" "$clear.elf"
	rm -f "$clear.elf"

	if ! "$K" capture --vmcore "$raw" --output "$sealed" --level 31 --pubkey "$W/pub" >"$W/cap.log" 2>&1 ||
		! "$K" save "$sealed" --key "$W/sec" --output "$sealed.elf" --format elf >"$W/save.log" 2>&1; then
		bad "$v-sealed/undamaged: capture --pubkey or save --key failed: $(tail -n 1 "$W/cap.log") $(tail -n 1 "$W/save.log")"
		continue
	fi
	ok "$v-sealed/undamaged: complete, $(grep -oE '[0-9]+ pages in' "$W/save.log" | head -n 1) the save"
	tool "$v-sealed" judge $full --label "$v-sealed" --key "$W/sec" --plain "$clear" \
		--record "$W/record" "$reader" "$sealed" "$sealed.elf"
	# A forger without the key: every chunk type retyped, dropped,
	# repeated, swapped and cut, the XXH64s forged again (tamper.py).
	if [ $tamper_selftest_done = 0 ]; then
		ttool "tamper-selftest" selftest "$reader" "$sealed" "$W/sec"
		tamper_selftest_done=1
	fi
	ttool "$v-sealed/tamper" judge --label "$v-sealed" "$reader" "$sealed" "$W/sec"
	rm -f "$clear" "$sealed" "$sealed.elf"
done
finish
