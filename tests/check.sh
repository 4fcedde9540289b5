#!/bin/bash
# Runs every suite of `make check` and adds up their "N passed, N failed"
# lines into one closing line. A suite that dies without its line counts as
# one failure, so a crash can never look like a pass.
set -u
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build}
export KDUMPINIT=$PWD/$BUILD/kdumpinit MKVMCORE=$PWD/$BUILD/tools/mkvmcore
pass=0 fail=0

run_suite() {	# NAME COMMAND...
	local name=$1 log out p f
	shift
	log=$BUILD/tests/$name.log
	mkdir -p "$(dirname "$log")"
	echo "== $name"
	"$@" 2>&1 | tee "$log"
	local rc=${PIPESTATUS[0]}
	out=$(grep -E '^[0-9]+ passed, [0-9]+ failed' "$log" | tail -n 1)
	if [ -z "$out" ]; then
		echo "check: $name printed no result line (exit $rc): counted as a failure"
		fail=$((fail + 1))
		return
	fi
	p=${out%% passed*}
	f=${out#*passed, }
	f=${f%% failed*}
	pass=$((pass + p))
	fail=$((fail + f))
	if [ "$rc" -ne 0 ] && [ "$f" -eq 0 ]; then
		echo "check: $name exited $rc with no failure counted: counted as a failure"
		fail=$((fail + 1))
	fi
}

if [ -z "${SKIP_UNIT:-}" ]; then
	run_suite tools bash tests/tools/vmcmp_selftest.sh
	run_suite unit bash tests/unit/run.sh
fi
for cpu in ${E2E_CPUS:-}; do
	run_suite "e2e-${cpu//[,=]/_}" bash tests/e2e/run.sh --cpu "$cpu"
done

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
