#!/bin/bash
# Suite e2e-stall-steps: a capture that stalls before its pages is given
# a second attempt without its optional steps, and ends in a complete dump.
#
# A real crash in QEMU (run.sh --no-raw, level 31). The crash kernel gets
# the test hook KDUMPINIT_TEST_HOOK=spin-steps (the first optional step, the
# debugger-page finder, never ends, as one lost in corrupt memory would) and
# kdumpinit.stall=20. What a user relies on, checked on the console and the
# dump device:
#   - the log was on the device before the step began (the stall line says
#     so, and names the step);
#   - PID 1 stopped the capture and tried once more, without the steps;
#   - that attempt wrote a complete dump over the first one: one dump on
#     the device, not two, and info says "attempt 2" and why;
#   - the final action ran.
# run.sh's own checks (the dump saved, crash-free console, ...) run too.
#
#   tests/e2e/stall.sh [--workdir DIR] [run.sh options...]
set -u
top=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
cd "$top" || exit 1
workdir=build/e2e/stall-steps
if [ "${1:-}" = --workdir ]; then
	workdir=$2
	shift 2
fi
K=${KDUMPINIT:-$top/build/kdumpinit}
stall=20

npass=0 nfail=0
ok() { echo "ok $*"; npass=$((npass + 1)); }
fail() { echo "FAIL $*"; nfail=$((nfail + 1)); }

out=$(bash tests/e2e/run.sh --cpu max,la57=off --no-raw --level 31 \
	--workdir "$workdir" \
	--append-first "e2e.ck=KDUMPINIT_TEST_HOOK=spin-steps e2e.ck=kdumpinit.stall=$stall" "$@" 2>&1)
rc=$?
echo "$out" | sed 's/^/    /'
# run.sh's counts join ours.
read -r rp rf < <(echo "$out" | sed -n 's/^\([0-9]*\) passed, \([0-9]*\) failed.*/\1 \2/p' | tail -n 1)
npass=$((npass + ${rp:-0}))
nfail=$((nfail + ${rf:-1}))
[ $rc = 0 ] || [ "${rf:-1}" != 0 ] || fail "stall.run: run.sh exited $rc"

post=$workdir/crash-console.log
[ -s "$post" ] || post=$workdir/console.log
line() { grep -a -m1 -o "kdumpinit: $1.*" "$post" | tr -d '\r'; }

# The hook ran: without it this suite proves nothing.
[ -n "$(line 'test hook: the debugger-page finder spins')" ] &&
	ok "stall.hook_ran" || fail "stall.hook_ran: no test-hook line on the console"
# The log reached the device before the step that stalled.
l=$(line 'error: no progress for')
case $l in
*"stopping the capture; the log is on the device, no page yet (it stalled in the debugger-page finder)"*)
	ok "stall.says_log_on_device: ${l#kdumpinit: error: }" ;;
*) fail "stall.says_log_on_device: got '${l:-no stall line}'" ;;
esac
# The stall came after the configured time, not at once.
kd=$(grep -a -n 'test hook: the debugger-page finder spins' "$post" | head -n1 | cut -d: -f1)
st=$(grep -a -n 'no progress for' "$post" | head -n1 | cut -d: -f1)
[ -n "$kd" ] && [ -n "$st" ] && [ "$st" -gt "$kd" ] &&
	ok "stall.after_the_hook" || fail "stall.after_the_hook: lines $kd / $st"
[ -n "$(line 'trying once more, without the optional steps')" ] &&
	ok "stall.second_attempt" || fail "stall.second_attempt: no retry line"
[ -n "$(line 'attempt 2: the first stalled before its pages')" ] &&
	ok "stall.second_attempt_runs_no_step" || fail "stall.second_attempt_runs_no_step"
# Nothing of the optional steps ran the second time.
n=$(grep -a -c 'test hook: the debugger-page finder spins' "$post")
[ "$n" = 1 ] && ok "stall.hook_once" || fail "stall.hook_once: the hook ran $n times"
[ -n "$(line 'dump complete on')" ] && ok "stall.dump_complete_said" ||
	fail "stall.dump_complete_said: no 'dump complete' line"
[ -n "$(line 'final action: reboot')" ] && ok "stall.final_action" ||
	fail "stall.final_action: no final action line"

# The device: one dump (the retry wrote over the first attempt's), complete,
# and it says which attempt it is.
dev=$workdir/dump.img
if [ -s "$dev" ]; then
	"$K" info "$dev" >"$workdir/stall-info.out" 2>&1
	irc=$?
	[ $irc = 0 ] && grep -q '^state *complete' "$workdir/stall-info.out" &&
		ok "stall.info_complete" || fail "stall.info_complete: exit $irc, $(grep -m1 '^state' "$workdir/stall-info.out")"
	grep -q '^steps *attempt 2, none run' "$workdir/stall-info.out" &&
		ok "stall.info_attempt_2" || fail "stall.info_attempt_2: $(grep -m1 '^steps' "$workdir/stall-info.out")"
	# Dump 1 is the retry's; with the first attempt's kept, it would be
	# dump 2 and dump 1 its log alone.
	"$K" info "$dev" --dump 1 >"$workdir/stall-info1.out" 2>&1
	i1=$?
	"$K" info "$dev" --dump 2 >"$workdir/stall-info2.out" 2>&1
	i2=$?
	[ $i1 = 0 ] && [ $i2 = 4 ] && grep -q 'holds no dump 2' "$workdir/stall-info2.out" &&
		ok "stall.one_dump: the retry wrote over the first attempt" ||
		fail "stall.one_dump: info --dump 1 exit $i1, --dump 2 exit $i2: $(head -c 200 "$workdir/stall-info2.out")"
else
	fail "stall.device: no $dev"
fi

echo "$npass passed, $nfail failed, 0 skipped"
[ $nfail = 0 ]
