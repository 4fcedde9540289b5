#!/bin/bash
# scale_selftest.sh: mkvmcore's scale mode (--mix, --no-expect), which the
# benchmark's 64 and 256 GiB kernels use. Checks that the file is sparse,
# that no expectation is written, that the same options give the same
# bytes, that the mix the generator reports placing is what the capture
# counts (class by class), that the builder and its own judge agree on
# every decision with --mix (the .expect run dies otherwise), and that bad
# --mix lists are refused. No times are asserted.
#
# usage: tests/tools/scale_selftest.sh   (MKVMCORE, KDUMPINIT: built ones)
set -u
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
MKVMCORE=${MKVMCORE:-$top/build/tools/mkvmcore}
KDUMPINIT=${KDUMPINIT:-$top/build/kdumpinit}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT INT TERM
passes=0 fails=0

ok() { echo "ok   $1"; passes=$((passes + 1)); }
bad() { echo "FAIL $1"; fails=$((fails + 1)); }
check() {	# NAME COMMAND...: passes when COMMAND succeeds
	local name=$1
	shift
	if "$@" >"$tmp/out" 2>&1; then ok "$name"; else bad "$name"; sed 's/^/     /' "$tmp/out" | head -10; fi
}

for f in "$MKVMCORE" "$KDUMPINIT"; do
	[ -x "$f" ] || { echo "FAIL setup: $f missing (make tools, make)"; echo "0 passed, 1 failed, 0 skipped"; exit 1; }
done

# 4 GiB in scale mode: no .expect, a sparse file
v=$tmp/s.core
if "$MKVMCORE" -o "$v" --mm 6.1 --mem 4G --mix ref --no-expect >"$tmp/mk.out" 2>"$tmp/mk.err"; then
	ok "--mix ref --no-expect at 4 GiB"
else
	bad "--mix ref --no-expect at 4 GiB: $(tail -n 2 "$tmp/mk.err")"
fi
check "--no-expect writes no FILE.expect" test ! -e "$v.expect"
size=$(stat -c %s "$v" 2>/dev/null || echo 0)
used=$(($(stat -c %b "$v" 2>/dev/null || echo 0) * 512))
check "sparse: $((used >> 20)) MiB on disk for $((size >> 20)) MiB" test "$size" -gt 0 -a "$used" -lt $((size / 10))

# the same options, the same bytes
"$MKVMCORE" -o "$tmp/s2.core" --mm 6.1 --mem 4G --mix ref --no-expect >/dev/null 2>&1
check "same options, same file" cmp -s "$v" "$tmp/s2.core"
rm -f "$tmp/s2.core"

# what the generator says it placed, against what the capture counts at
# level 30 (kept = kernel) and 31 (the kernel's zero pages)
placed=$(sed -n 's/.*mix placed.*: free \([0-9.]*\), cache \([0-9.]*\), user \([0-9.]*\), kernel \([0-9.]*\) .*/\1 \2 \3 \4/p' "$tmp/mk.err")
sum30=$("$KDUMPINIT" capture --vmcore "$v" --output "$tmp/o30" --level 30 --threads 2 --memmap keep 2>&1 | grep 'pages kept')
sum31=$("$KDUMPINIT" capture --vmcore "$v" --output "$tmp/o31" --level 31 --threads 2 --memmap keep 2>&1 | grep 'pages kept')
rm -f "$tmp/o30" "$tmp/o31"
num() { echo "$1" | grep -o "$2 [0-9]*" | head -n 1 | awk '{print $NF}'; }
total=$(echo "$sum30" | sed -n 's/.* of \([0-9]*\) pages kept.*/\1/p')
kern=$(echo "$sum30" | sed -n 's/.* \([0-9]*\) of [0-9]* pages kept.*/\1/p')
for cls in free cache user kernel; do
	case $cls in
	free) n=$(num "$sum30" 'free') ;;
	cache) n=$(( $(num "$sum30" 'cache') + $(num "$sum30" 'cache-private') )) ;;
	user) n=$(num "$sum30" 'user') ;;
	kernel) n=$kern ;;
	esac
	want=$(echo "$placed" | awk -v c=$cls '{ i = c == "free" ? 1 : c == "cache" ? 2 : c == "user" ? 3 : 4; print $i }')
	check "$cls: the capture counts what was placed ($want %)" \
		awk -v n="${n:-0}" -v t="${total:-0}" -v w="${want:-x}" \
		'BEGIN { d = 100 * n / t - w; exit !(t > 0 && w != "x" && d < 0.3 && d > -0.3) }'
done
z=$(num "$sum31" 'zero')
check "the kernel's zero share is the reference's 32 % (within 4 points)" \
	awk -v z="${z:-0}" -v k="${kern:-0}" 'BEGIN { s = 100 * z / k; exit !(k > 0 && s > 28 && s < 36) }'
rm -f "$v"

# with FILE.expect: mkvmcore dies when its judge and its builder disagree
check "--mix ref with FILE.expect at 1 GiB (builder and judge agree)" \
	"$MKVMCORE" -o "$v" --mm 6.12 --mem 1G --mix ref
check "an explicit --mix list" \
	"$MKVMCORE" -o "$v" --mm 6.1 --mem 1G --mix free=50,cache=20,user=20,kernel=10,kzero=10 --no-expect
rm -f "$v" "$v.expect"

# refused: shares not summing to 100, unknown class, --mix without --mm
for args in "--mm 6.1 --mix free=50,cache=20" "--mm 6.1 --mix free=90,cache=5,user=5,kernel=5" \
	"--mm 6.1 --mix free=90,slab=10" "--mix ref" "--no-expect"; do
	if "$MKVMCORE" -o "$v" --mem 256M $args >/dev/null 2>&1; then
		bad "refused: $args"
	else
		ok "refused: $args"
	fi
done

echo "$passes passed, $fails failed, 0 skipped"
[ "$fails" -eq 0 ]
