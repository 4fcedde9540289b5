# tests/lib/suite.sh: sourced by a host-side suite, from the repository's
# top, with the suite's name: `. tests/lib/suite.sh NAME`. Gives K (the
# binary), MKVMCORE (the generator), W (a scratch directory, kdi-NAME.*,
# removed at exit), the counters and ok, bad, finish (the "N passed, N
# failed" line every suite ends with, and its exit code).
K=${KDUMPINIT:-$PWD/build/kdumpinit}
MKVMCORE=${MKVMCORE:-$PWD/build/tools/mkvmcore}
W=$(mktemp -d "${TMPDIR:-/tmp}/kdi-$1.XXXXXX")
trap 'rm -rf "$W"' EXIT
pass=0 fail=0
ok() { echo "ok $1"; pass=$((pass + 1)); }
bad() { echo "FAIL $1: $2"; fail=$((fail + 1)); }
finish() { echo "$pass passed, $fail failed"; [ "$fail" -eq 0 ]; exit; }
[ -x "$K" ] && [ -x "$MKVMCORE" ] || { bad setup "$K or $MKVMCORE is missing (make unit-tests)"; finish; }
