#!/bin/bash
# tests/corrupt/rings.sh (the dmesg-rings suite): `kdumpinit dmesg` on small
# vmcores whose printk ring is intact or damaged (tests/corrupt/mkring.py
# says what each case does): the records it must show, in order, a first
# line "kdumpinit: salvaged log:" and a warning whenever the ring's ends
# were not used, none when they were, and exit 3 with a message when
# nothing can be recovered. Also under ASan (build/asan/kdumpinit) when it
# is built. Ends with "N passed, N failed, N skipped".
set -u
top=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
K=${KDUMPINIT:-$top/build/kdumpinit}
KASAN=${KDUMPINIT_ASAN:-$top/build/asan/kdumpinit}
pass=0 fail=0 skip=0
ok() { echo "ok $*"; pass=$((pass + 1)); }
bad() { echo "FAIL $*"; fail=$((fail + 1)); }
W=$(mktemp -d "${TMPDIR:-/tmp}/kdi-rings.XXXXXX") || exit 1
trap 'rm -rf "$W"' EXIT
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=0} UBSAN_OPTIONS=${UBSAN_OPTIONS:-halt_on_error=1}

if ! /usr/bin/python3 "$top/tests/corrupt/mkring.py" "$W" >"$W/mk.log" 2>&1; then
	bad "setup: mkring.py: $(tail -n1 "$W/mk.log")"
	echo "$pass passed, $fail failed, $skip skipped"
	exit 1
fi

# check BIN LABEL CASE
check() {
	local bin=$1 label=$2 c=$3 rc got want
	"$bin" dmesg "$W/$c.vmcore" >"$W/out" 2>"$W/err"
	rc=$?
	if grep -qE 'AddressSanitizer|runtime error' "$W/err"; then
		bad "$label: $(grep -m1 -E 'AddressSanitizer|runtime error' "$W/err")"
		return
	fi
	if [ "$(cat "$W/$c.want")" = none ]; then
		if [ $rc -eq 3 ] && [ ! -s "$W/out" ] && grep -q 'no log: ' "$W/err"; then
			ok "$label: exit 3, nothing printed: $(head -n1 "$W/err")"
		else
			bad "$label: exit $rc, $(wc -c <"$W/out") bytes printed, $(head -n1 "$W/err")"
		fi
		return
	fi
	got=$(grep '^\[' "$W/out" | sed 's/^\[[ 0-9.]*\] //')
	want=$(cat "$W/$c.want")
	local salv=0
	head -n1 "$W/out" | grep -q '^kdumpinit: salvaged log:' && salv=1
	local warned=0
	grep -q 'salvaged by scanning' "$W/err" && warned=1
	# Only the intact ring is read from its ends; with head-only, tail_id
	# is right but head_id names no descriptor, so neither is trusted.
	local should=1
	[ "$c" = intact ] && should=0
	if [ $rc -ne 0 ]; then
		bad "$label: exit $rc: $(head -n1 "$W/err")"
	elif [ "$got" != "$want" ]; then
		bad "$label: records $(echo "$got" | tr '\n' '|'), want $(echo "$want" | tr '\n' '|')"
	elif [ $salv != $should ] || [ $warned != $should ]; then
		bad "$label: salvaged line $salv, warning $warned, want $should"
	else
		local how="read from the ring's ends"
		[ $should = 1 ] && how="marked salvaged"
		ok "$label: $(echo "$want" | wc -l) records in order, $how"
	fi
}

for c in $(cd "$W" && ls -- *.vmcore | sed 's/\.vmcore$//'); do
	check "$K" "$c" "$c"
done
# The counts in the warning: the three garbage slots rejected.
"$K" dmesg "$W/garbage.vmcore" 2>"$W/err" >/dev/null
if grep -q '5 records salvaged by scanning its 8 descriptors (3 rejected)' "$W/err"; then
	ok "garbage/counts: 5 records from 8 descriptors, 3 rejected"
else
	bad "garbage/counts: $(cat "$W/err")"
fi
# The continuation line of r2 is indented under its text.
"$K" dmesg "$W/wild-ids.vmcore" 2>/dev/null | grep -A1 '\] two$' | tail -n1 >"$W/cont"
if grep -qE '^ {15}lines$' "$W/cont"; then
	ok "wild-ids/continuation: the second line of a salvaged record is indented"
else
	bad "wild-ids/continuation: $(cat "$W/cont")"
fi
if [ -x "$KASAN" ]; then
	for c in $(cd "$W" && ls -- *.vmcore | sed 's/\.vmcore$//'); do
		check "$KASAN" "$c/asan" "$c"
	done
else
	echo "skip asan: $KASAN is not built (make asan-kdumpinit)"
	skip=$((skip + 1))
fi
echo "$pass passed, $fail failed, $skip skipped"
[ "$fail" -eq 0 ]
