#!/bin/bash
# crash on the dumps the fault suites left (make check-full):
# a capture cut by a power cut, ended by a full device or by write errors
# still holds the kernel's pages, which go first, so crash with the
# matching vmlinux must show the panic in `log` and `bt`.
#
#   tests/crash/faults.sh WORKDIR...
#
# Each WORKDIR is a fault suite's --workdir and must hold the dump.img that
# kdumpinit wrote as PID 1 there (tests/e2e/run.sh leaves it). `kdumpinit
# info` says whether it is complete; tests/crash/run.sh then saves it both
# ways (exit 5 for an incomplete one) and runs crash and gdb on the files.
# A WORKDIR without a dump fails: the suite that should have made it did
# not run or did not get as far as the capture.
set -u
cd "$(dirname "$0")/../.."
BUILD=${BUILD:-build}
K=$PWD/$BUILD/kdumpinit
pass=0 fail=0
[ $# -gt 0 ] || { echo "FAIL setup: no fault workdirs given"; echo "0 passed, 1 failed, 0 skipped"; exit 1; }
for d in "$@"; do
	name=${d##*/}
	dump=$d/dump.img
	if [ ! -s "$dump" ]; then
		echo "FAIL $name: no dump at $dump"
		fail=$((fail + 1))
		continue
	fi
	state=$("$K" info "$dump" 2>&1 | sed -n 's/^state *//p')
	inc=
	case $state in
	complete*) ;;
	incomplete*) inc=1 ;;
	*) echo "FAIL $name: info gives no state: $state"; fail=$((fail + 1)); continue ;;
	esac
	echo "info $name: $state"
	out=$(DUMP=$dump INCOMPLETE=$inc BUILD=$BUILD bash tests/crash/run.sh 2>&1)
	while IFS= read -r l; do
		case $l in
		"ok "*) echo "ok $name: ${l#ok }"; pass=$((pass + 1)) ;;
		"FAIL "*) echo "FAIL $name: ${l#FAIL }"; fail=$((fail + 1)) ;;
		*" passed, "*) ;;
		*) echo "   $l" ;;
		esac
	done <<<"$out"
	# run.sh's own verdict line must be there: a run that died early
	# printed neither its checks nor the count.
	grep -qE '^[0-9]+ passed, 0 failed' <<<"$out" || {
		echo "FAIL $name: tests/crash/run.sh did not finish cleanly"
		fail=$((fail + 1))
	}
done
echo "$pass passed, $fail failed, 0 skipped"
[ "$fail" = 0 ]
