#!/bin/sh
# vmcmp_selftest.sh: show that vmcmp.py passes good copies and fails bad
# ones, so a green vmcmp in the real tests means something.
#
# usage: tests/tools/vmcmp_selftest.sh   (MKVMCORE=path to use a built one)
set -u

here=$(cd "$(dirname "$0")" && pwd)
py=/usr/bin/python3
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT INT TERM
fails=0 passes=0

if [ -z "${MKVMCORE:-}" ]; then
	MKVMCORE=$tmp/mkvmcore
	${HOSTCC:-cc} -Wall -Wextra -Werror -O2 -o "$MKVMCORE" "$here/mkvmcore.c" || exit 1
fi

# expect CODE NAME COMMAND...: run COMMAND, compare its exit code.
expect() {
	want=$1 name=$2
	shift 2
	"$@" >"$tmp/out" 2>&1
	got=$?
	if [ "$got" -eq "$want" ]; then
		echo "ok   $name"
		passes=$((passes + 1))
	else
		echo "FAIL $name: exit $got, want $want"
		sed 's/^/     /' "$tmp/out" | head -20
		fails=$((fails + 1))
	fi
}

mk() { "$MKVMCORE" "$@" >/dev/null || { echo "FAIL mkvmcore $*"; exit 1; }; }
saved() { out=$1; shift; "$py" "$here/mksaved.py" "$ref" "$tmp/$out" "$@" || exit 1; }
cmp_nz() { "$py" "$here/vmcmp.py" "$ref" "$tmp/$1"; }
cmp_all() { "$py" "$here/vmcmp.py" "$ref" "$tmp/$1" --mode all; }

# The first 20 MiB range holds 4 MiB of kernel text at 16 MiB.
ref=$tmp/ref.core
mk -o "$ref" --mem 40M --segments 2 --cpus 3 --zero-pct 40 --text-alias --seed 7

mk -o "$tmp/again.core" --mem 40M --segments 2 --cpus 3 --zero-pct 40 --text-alias --seed 7
expect 0 "mkvmcore is deterministic" cmp "$ref" "$tmp/again.core"
if command -v readelf >/dev/null 2>&1; then
	expect 0 "readelf parses the reference" sh -c \
		"readelf -lnW '$ref' 2>&1 >/dev/null | grep . && exit 1; exit 0"
fi

cp "$ref" "$tmp/copy.core"
expect 0 "identical copy, mode all" cmp_all copy.core
expect 1 "identical copy keeps zero pages, mode nonzero" cmp_nz copy.core

saved good.core
expect 0 "zero pages dropped, mode nonzero" cmp_nz good.core
expect 1 "zero pages dropped, mode all" cmp_all good.core
saved split.core --keep all --split-pages 3
expect 0 "all pages in split PT_LOADs, mode all" cmp_all split.core
saved xnum.core --xnum --split-pages 5
expect 0 "PN_XNUM header, mode nonzero" cmp_nz xnum.core

saved flip.core --mutate flip-byte
expect 1 "one flipped byte" cmp_nz flip.core
saved flipall.core --keep all --mutate flip-byte
expect 1 "one flipped byte, mode all" cmp_all flipall.core
saved drop.core --mutate drop-nonzero
expect 1 "a dropped non-zero page" cmp_nz drop.core
saved dropaz.core --mutate drop-almost-zero
expect 1 "a dropped page whose last byte alone is non-zero" cmp_nz dropaz.core
saved keepz.core --mutate keep-zero
expect 1 "a kept zero page" cmp_nz keepz.core
saved note.core --mutate alter-note
expect 1 "a changed note byte" cmp_nz note.core
saved vaddr.core --mutate alter-vaddr
expect 1 "a shifted p_vaddr" cmp_nz vaddr.core
saved aliasflip.core --in-load -1 --mutate flip-byte
expect 1 "one flipped byte in the kernel-text alias only" cmp_nz aliasflip.core
saved aliasdrop.core --in-load -1 --mutate drop-nonzero
expect 1 "a page dropped from the kernel-text alias only" cmp_nz aliasdrop.core
saved noalias.core --mutate drop-last-load
expect 1 "the kernel-text alias left out" cmp_nz noalias.core

head -c 30000000 "$ref" >"$tmp/cut.core"
expect 1 "a truncated saved file" cmp_all cut.core
expect 1 "a saved file that is not ELF" "$py" "$here/vmcmp.py" "$ref" "$here/vmcmp.py"

# Reference with a zero-filled tail (p_filesz < p_memsz).
ref=$tmp/tail.core
mk -o "$ref" --mem 8M --segments 3 --bad filesz-lt-memsz
cp "$ref" "$tmp/tailcopy.core"
expect 0 "filesz<memsz reference, identical copy, mode all" cmp_all tailcopy.core
saved tailgood.core
expect 0 "filesz<memsz reference, mode nonzero" cmp_nz tailgood.core

# The text alias lying in that zero-filled tail.
ref=$tmp/tailalias.core
mk -o "$ref" --mem 16M --segments 1 --text-alias --bad filesz-lt-memsz
cp "$ref" "$tmp/tacopy.core"
expect 0 "alias over a zero tail, identical copy, mode all" cmp_all tacopy.core
saved tagood.core
expect 0 "alias over a zero tail, mode nonzero" cmp_nz tagood.core

# More than 65535 PT_LOADs: PN_XNUM for real.
ref=$tmp/big.core
mk -o "$ref" --mem 300M --segments 1 --zero-pct 5
saved many.core --split-pages 1
expect 0 "over 65535 PT_LOADs, mode nonzero" cmp_nz many.core

# Reference files vmcmp must refuse.
for bad in truncate exec short-header badphdr; do
	mk -o "$tmp/bad.core" --mem 4M --bad "$bad"
	expect 1 "reference made with --bad $bad is refused" \
		"$py" "$here/vmcmp.py" "$tmp/bad.core" "$tmp/bad.core"
done

echo "$passes passed, $fails failed, 0 skipped"
if [ "$fails" -ne 0 ]; then
	echo "vmcmp_selftest: $fails failed"
	exit 1
fi
echo "vmcmp_selftest: all passed"
