#!/bin/bash
# The docs suite: the manual pages, docs/CLI.md and README.md say what the
# binary does (drift.py, both ways), and every make target a document names
# exists (make -n runs it as far as make can without doing anything).
# The drift check must be able to fail: it is run on copies of the docs with
# one option or parameter taken out or added, and each must fail.
set -u
cd "$(dirname "$0")/../.."
K=${KDUMPINIT:-$PWD/build/kdumpinit}
pass=0 fail=0
ok() { echo "ok $*"; pass=$((pass + 1)); }
bad() { echo "FAIL $*"; fail=$((fail + 1)); }
tmp=$(mktemp -d "${TMPDIR:-/tmp}/kdi-docs.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

if [ ! -x "$K" ]; then
	bad "setup: $K is missing (make)"
	echo "$pass passed, $fail failed, 0 skipped"
	exit 1
fi

drift() {	# MAN8 MKMAN8 CLIMD README: drift.py's lines
	/usr/bin/python3 tests/docs/drift.py "$K" initramfs/mkinitramfs "$1" "$2" "$3" \
		config/config.c "$4"
}

# 1. The real documents.
out=$(drift docs/kdumpinit.8 docs/kdumpinit-mkinitramfs.8 docs/CLI.md README.md)
rc=$?
while IFS= read -r l; do
	case $l in
	"ok "*) ok "drift.${l#ok }" ;;
	"FAIL "*) bad "drift.${l#FAIL }" ;;
	*) [ -z "$l" ] || bad "drift: unexpected line: $l" ;;
	esac
done <<<"$out"
[ "$rc" -eq 0 ] || [ "$fail" -gt 0 ] || bad "drift.py exited $rc with no FAIL line"
[ "$pass" -ge 8 ] || bad "drift.py ran only $pass checks"

# 1b. The sizes README.md states, against the files (2 %: a release's
# drift; the image 10 %, its modules being the tree's), and the limit
# against the Makefile's.
kib() { echo $((($(stat -c %s "$1") + 512) / 1024)); }
readme=$(tr '\n' ' ' <README.md | tr -s ' ')
stated() { printf '%s\n' "$readme" | sed -n "s#.*$1.*#\\1#p" | head -n 1; }	# SED-RE, one group
near() {	# NAME STATED MEASURED PCT
	if [ -n "$2" ] && awk -v a="$2" -v b="$3" -v p="$4" 'BEGIN{d = a - b; if (d < 0) d = -d; exit !(d * 100 <= p * b)}'; then
		ok "size.$1: README says $2 KiB, measured $3 KiB"
	else
		bad "size.$1: README says '${2:-nothing}' KiB, measured $3 KiB"
	fi
}
near binary "$(stated '`build/kdumpinit` (\([0-9]*\) KiB')" "$(kib "$K")" 2
limit=$(sed -n 's/.*test \$\$size -le \([0-9]*\) .*/\1/p' Makefile)
said=$(stated 'the link fails past \([0-9]*\) KiB')
[ -n "$limit" ] && [ "$said" = $((limit / 1024)) ] && ok "size.limit: README's $said KiB is the Makefile's" ||
	bad "size.limit: README says '$said' KiB, the Makefile $limit bytes"
said=$(stated 'the same \([0-9]*\) KiB limit as x86_64')
[ -n "$limit" ] && [ "$said" = $((limit / 1024)) ] && ok "size.limit-arm64: README's $said KiB is the Makefile's" ||
	bad "size.limit-arm64: README says '$said' KiB, the Makefile $limit bytes"
a64=${K%/kdumpinit}/arm64/kdumpinit
if [ -f "$a64" ]; then
	near arm64 "$(stated '`build/arm64/kdumpinit` (\([0-9]*\) KiB')" "$(kib "$a64")" 2
fi
mods=$(ls -d /lib/modules/6.1.*-amd64 2>/dev/null | tail -n 1)
if [ -n "$mods" ] && initramfs/mkinitramfs -k "${mods##*/}" -m virtio_blk -z gzip -b "$K" -o "$tmp/img" >/dev/null 2>&1; then
	near image "$(stated 'initramfs (\([0-9]*\) KiB gzip-compressed with virtio_blk')" "$(kib "$tmp/img")" 10
else
	bad "size.image: no Debian 12 6.1 module tree with virtio_blk here, or mkinitramfs failed"
fi

# 2. It can fail: each mutation must give a FAIL that names what changed.
mutant() {	# NAME WHAT-MUST-BE-NAMED FILE SED-EXPR
	local name=$1 word=$2 file=$3 expr=$4 m8=docs/kdumpinit.8 mk8=docs/kdumpinit-mkinitramfs.8 cli=docs/CLI.md rd=README.md
	sed "$expr" "$file" >"$tmp/mut"
	cmp -s "$tmp/mut" "$file" && { bad "mutant.$name: the edit changed nothing"; return; }
	case $file in
	docs/kdumpinit.8) m8=$tmp/mut ;;
	docs/kdumpinit-mkinitramfs.8) mk8=$tmp/mut ;;
	docs/CLI.md) cli=$tmp/mut ;;
	README.md) rd=$tmp/mut ;;
	esac
	if drift "$m8" "$mk8" "$cli" "$rd" | grep '^FAIL' | grep -q -- "$word"; then
		ok "mutant.$name: caught"
	else
		bad "mutant.$name: drift.py did not notice $word"
	fi
}
mutant man-lacks-option --keep-device docs/kdumpinit.8 '/keep\\-device/d'
mutant man-extra-option --frobnicate docs/kdumpinit.8 's/^\.B \\-\\-unload$/.B \\-\\-unload \\-\\-frobnicate/'
mutant cli-lacks-option --min-free docs/CLI.md '/--min-free/d'
mutant man-lacks-command dmesg docs/kdumpinit.8 's/^\.SS dmesg$/.SS dmesgx/'
mutant man-lacks-param stall docs/kdumpinit.8 '/kdumpinit.stall=/d'
mutant readme-lacks-param threads README.md '/^| `kdumpinit.threads=/d'
mutant cli-synopsis-lacks-option synopsis.info docs/CLI.md 's/^    kdumpinit info    SOURCE \[--dump N\]/    kdumpinit info    SOURCE/'
mutant man-synopsis-lacks-command synopsis.keygen docs/kdumpinit.8 '/^\.B keygen$/d'
mutant readme-lacks-command synopsis.rebuild README.md 's/|rebuild|/|/'
mutant mkman-lacks-option -z docs/kdumpinit-mkinitramfs.8 's/^\.BR "\\-z gzip" | lz4$/.BR "gzip" | lz4/'

# 3. The folders include only those below them (docs/DESIGN.md), no module
# includes its way back to itself, and the check can fail: a copy of two
# folders where kernel/ includes capture/.
if out=$(/usr/bin/python3 tests/docs/layers.py .); then
	ok "${out#ok }"
else
	bad "$(echo "$out" | head -n 3 | tr '\n' ' ')"
fi
mkdir -p "$tmp/tree/kernel" "$tmp/tree/capture"
printf '#include "../capture/sink.h"\n' >"$tmp/tree/kernel/x.c"
printf '#include "../kernel/x.h"\n' >"$tmp/tree/capture/y.c"
out=$(/usr/bin/python3 tests/docs/layers.py "$tmp/tree")	# whole: grep -q would cut its pipe
if grep -q 'kernel/x.c:1 includes ../capture/sink.h' <<<"$out"; then
	ok "layers: an include that climbs is caught"
else
	bad "layers: kernel/ including capture/ was not caught"
fi
# ... and a circle within a folder: the real sources with arm/machine.c
# including armed.h again (armed.h includes machine.h), the circle once
# there.
mkdir -p "$tmp/real"
cp --parents -- */*.[ch] docs/DESIGN.md "$tmp/real/"
printf '#include "armed.h"\n' >>"$tmp/real/arm/machine.c"
out=$(/usr/bin/python3 tests/docs/layers.py "$tmp/real")
if grep -q 'a circle of includes: arm/armed -> arm/machine -> arm/armed' <<<"$out"; then
	ok "layers: a circle of includes within a folder is caught"
else
	bad "layers: arm/machine.c including armed.h again was not caught"
fi
mkdir -p "$tmp/tree/extra"
printf 'int x;\n' >"$tmp/tree/extra/z.c"
out=$(/usr/bin/python3 tests/docs/layers.py "$tmp/tree")
if grep -q 'extra/ holds C code but is not in the layer order' <<<"$out"; then
	ok "layers: a folder of C code outside the order is caught"
else
	bad "layers: a folder of C code outside the order was not caught"
fi

# 3b. No comment or document cites an issue number: a reader of the
# repository cannot look those up, so the text says what is meant.
cites=$(git ls-files -z 2>/dev/null | xargs -0 grep -nEi 'issue[ -]?#?[0-9]+' -- 2>/dev/null | head -n 3)
if [ -n "$cites" ]; then
	bad "no-issue-numbers: $(echo "$cites" | tr '\n' ' ')"
elif git ls-files >/dev/null 2>&1; then
	ok "no-issue-numbers: no tracked file cites an issue by number"
else
	bad "no-issue-numbers: not a git work tree, nothing checked"
fi

# 4. The manual pages render without warnings.
for m in docs/kdumpinit.8 docs/kdumpinit-mkinitramfs.8; do
	if ! command -v man >/dev/null; then
		bad "render.${m##*/}: man is not installed (deps/packages: man-db)"
	elif w=$(MANWIDTH=80 man --warnings -l "$m" 2>&1 >/dev/null) && [ -z "$w" ]; then
		ok "render.${m##*/}"
	else
		bad "render.${m##*/}: $w"
	fi
done

# 5. Every make target a document names exists.
docs=(README.md docs/*.md tests/README.md tests/*/README.md deps/README.md)
n=0
while read -r mk target; do
	n=$((n + 1))
	args=()
	[ "$mk" = - ] || args+=(-f "$mk")
	args+=("$target")
	if o=$(make -n --no-print-directory "${args[@]}" 2>&1 >/dev/null); then
		ok "target: make ${args[*]}"
	else
		bad "target: make ${args[*]}: $(echo "$o" | tail -n 2 | tr '\n' ' ')"
	fi
done < <(/usr/bin/python3 tests/docs/targets.py "${docs[@]}")
[ "$n" -ge 5 ] || bad "targets: only $n make targets found in the documents"
# ... and the check can fail: a target that does not exist.
if make -n --no-print-directory no-such-target-kdi >/dev/null 2>&1; then
	bad "target: make -n accepts a target that does not exist"
else
	ok "target: a missing target is caught"
fi

echo "$pass passed, $fail failed, 0 skipped"
[ "$fail" -eq 0 ]
