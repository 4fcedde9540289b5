#!/bin/sh
# mdcmp_selftest.sh: show that tests/tools/mdcmp.py passes filtered dumps that
# keep the same non-zero pages and fails the ones that do not, so a green
# mdcmp in tests/filter-makedumpfile/run.sh means something.
#
# usage: tests/filter-makedumpfile/mdcmp_selftest.sh   (MKVMCORE=path to use a built one)
set -u

here=$(cd "$(dirname "$0")" && pwd)
tools=$(cd "$here/../tools" && pwd)
py=/usr/bin/python3
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT INT TERM
fails=0 passes=0

if [ -z "${MKVMCORE:-}" ]; then
	MKVMCORE=$tmp/mkvmcore
	${HOSTCC:-cc} -Wall -Wextra -Werror -O2 -o "$MKVMCORE" "$tools/mkvmcore.c" || exit 1
fi

# expect CODE NAME [GREP] -- COMMAND...: run COMMAND, compare its exit code;
# with GREP, its output must also match that extended regexp.
expect() {
	want=$1 name=$2 pat=
	shift 2
	[ "$1" = -- ] || { pat=$1; shift; }
	shift
	"$@" >"$tmp/out" 2>&1
	got=$?
	if [ "$got" -ne "$want" ]; then
		echo "FAIL $name: exit $got, want $want"
		sed 's/^/     /' "$tmp/out" | head -30
		fails=$((fails + 1))
	elif [ -n "$pat" ] && ! grep -Eq "$pat" "$tmp/out"; then
		echo "FAIL $name: output does not match /$pat/"
		sed 's/^/     /' "$tmp/out" | head -30
		fails=$((fails + 1))
	else
		echo "ok   $name"
		passes=$((passes + 1))
	fi
}

mk() { "$MKVMCORE" "$@" >/dev/null || { echo "FAIL mkvmcore $*"; exit 1; }; }
saved() { out=$1; shift; "$py" "$tools/mksaved.py" "$ref" "$tmp/$out" "$@" || exit 1; }
split() { out=$1; shift; "$py" "$tools/elfsplit.py" "$ref" "$tmp/$out" "$@" || exit 1; }
md() { "$py" "$tools/mdcmp.py" "$@"; }
# The first non-zero or zero page of the reference's first PT_LOAD, or the
# first page of its last one (the kernel-text alias).
page_of() {
	"$py" - "$ref" "$1" <<'EOF'
import os, sys
sys.dont_write_bytecode = True
sys.path.insert(0, os.environ["TOOLS"])
from vmcmp import Core, PAGE, ZERO
c = Core(sys.argv[1])
want = sys.argv[2]
if want == "alias":
    print(hex(c.loads[-1].paddr))
    raise SystemExit
s = c.loads[0]
for rel in range(0, s.filesz, PAGE):
    page = c.read(s, s.paddr + rel, PAGE)
    if (page != ZERO) == (want == "nonzero"):
        print(hex(s.paddr + rel))
        break
EOF
}
export TOOLS="$tools"

# 40 MiB of RAM in 2 ranges, 40% zero pages, a kernel-text alias at 16 MiB.
ref=$tmp/ref.core
mk -o "$ref" --mem 40M --segments 2 --cpus 2 --zero-pct 40 --text-alias --seed 11
nz=$(page_of nonzero) z=$(page_of zero) alias=$(page_of alias)
[ -n "$nz" ] && [ -n "$z" ] && [ -n "$alias" ] || { echo "FAIL: no test pages found"; exit 1; }

expect 0 "identical inputs" "only-in-A: 0" -- md "$ref" "$ref"
cp "$ref" "$tmp/copy.core"
expect 0 "identical copy" "result: OK" -- md "$ref" "$tmp/copy.core"

saved nz.core
expect 0 "zero pages dropped in B only" -- md "$ref" "$tmp/nz.core"
expect 0 "zero pages dropped in A only" -- md "$tmp/nz.core" "$ref"
saved split.core --split-pages 3
expect 0 "B split into many PT_LOADs" -- md "$tmp/nz.core" "$tmp/split.core"
saved xnum.core --xnum --split-pages 7
expect 0 "B with e_phnum = PN_XNUM" -- md "$ref" "$tmp/xnum.core"
saved keepz.core --keep all --mutate keep-zero
expect 0 "zero pages held in B: not kept-nonzero" -- md "$tmp/nz.core" "$tmp/keepz.core"
split cut.core --split 0:0x800 --split 0:0x12345 --split=-1:0x1801
expect 0 "PT_LOADs cut inside pages" -- md "$ref" "$tmp/cut.core"
split unz.core --unhold "$z"
expect 0 "a zero page excluded in B" -- md "$ref" "$tmp/unz.core"

saved drop.core --mutate drop-nonzero
expect 1 "a non-zero page kept only in A" "only-in-A: 1$" -- md "$ref" "$tmp/drop.core"
expect 1 "a non-zero page kept only in B" "only-in-B: 1$" -- md "$tmp/drop.core" "$ref"
split unnz.core --unhold "$nz"
expect 1 "a non-zero page excluded in B" "only-in-A: 1$" -- md "$ref" "$tmp/unnz.core"
split zeroed.core --zero "$nz"
expect 1 "a non-zero page held as zeros in B" "only-in-A: 1$" -- md "$ref" "$tmp/zeroed.core"
saved flip.core --mutate flip-byte
expect 1 "a flipped byte" "byte mismatches: 1$" -- md "$ref" "$tmp/flip.core"
expect 1 "a flipped byte, A and B swapped" "byte mismatches: 1$" -- md "$tmp/flip.core" "$ref"
split flipcut.core --split "0:$((nz - 0x1000 + 0x345))" --flip "$nz"
expect 1 "a flipped byte in a page cut in two" "byte mismatches: 1$" -- md "$ref" "$tmp/flipcut.core"
saved flipsplit.core --split-pages 1 --mutate flip-byte
expect 1 "a flipped byte, one PT_LOAD per page" "byte mismatches: 1$" -- md "$ref" "$tmp/flipsplit.core"
saved flipx.core --xnum --split-pages 7 --mutate flip-byte
expect 1 "a flipped byte, PN_XNUM" "byte mismatches: 1$" -- md "$ref" "$tmp/flipx.core"
saved aliasflip.core --in-load -1 --mutate flip-byte
expect 1 "a flipped byte in the kernel-text alias only" "B alias disagreements: 1$" -- \
	md "$ref" "$tmp/aliasflip.core"
saved aliasdrop.core --in-load -1 --mutate drop-nonzero
expect 1 "a page dropped from the kernel-text alias only" "B alias disagreements: 1$" -- \
	md "$ref" "$tmp/aliasdrop.core"
expect 1 "alias disagreement in A is named A" "A alias disagreements: 1$" -- \
	md "$tmp/aliasdrop.core" "$ref"
expect 1 "not an ELF file" -- md "$ref" "$tools/mdcmp.py"
head -c 30000000 "$ref" >"$tmp/short.core"
expect 1 "a truncated file" -- md "$ref" "$tmp/short.core"

# More than 65535 PT_LOADs: PN_XNUM for real (and the walk stays fast).
ref=$tmp/big.core
mk -o "$ref" --mem 300M --segments 1 --zero-pct 5
saved many.core --split-pages 1
expect 0 "over 65535 PT_LOADs" -- md "$ref" "$tmp/many.core"
saved manyflip.core --split-pages 1 --mutate flip-byte
expect 1 "over 65535 PT_LOADs, a flipped byte" "byte mismatches: 1$" -- md "$ref" "$tmp/manyflip.core"

echo "$passes passed, $fails failed, 0 skipped"
[ "$fails" -eq 0 ]
