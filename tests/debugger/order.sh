#!/bin/bash
# order.sh OLD NEW VMCORE...: the debugger's first pass changes only the
# order of the pages on the device. For each vmcore, at levels 1, 17 and 31
# and 1, 2 and 3 threads (LEVELS, THREADS override), OLD and NEW each
# capture it and save their own capture; the saves, --format kdump and
# elf, must be byte-identical. NEW's capture must also hold an EARLY pass
# (otherwise the case proves nothing) unless the vmcore has no page tables
# to find it with.
# Prints ok/FAIL lines and "N passed, N failed, 0 skipped".
set -u
[ $# -ge 3 ] || { echo "usage: $0 OLD NEW VMCORE..." >&2; exit 2; }
old=$1 new=$2
shift 2
here=$(cd "$(dirname "$0")/../.." && pwd)
tmp=$(mktemp -d "${TMPDIR:-/tmp}/kdi-order.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
pass=0 fail=0
over() { "$1" capture --help 2>&1 | grep -q -- --oversubscribe && echo --oversubscribe; }
over_old=$(over "$old") over_new=$(over "$new")
ok() { echo "ok $*"; pass=$((pass + 1)); }
bad() { echo "FAIL $*"; fail=$((fail + 1)); }
chunks=$here/tests/tools/chunks.py
# How many PAGES chunks carry the EARLY flag (chunks.py's FLAGS, bit 4).
nearly() {	# IMG
	/usr/bin/python3 "$chunks" "$1" | awk '$2 == 5 && $6 % 8 >= 4 { n++ } END { print n + 0 }'
}
for v in "$@"; do
	n=${v##*/}
	for level in ${LEVELS:-1 17 31}; do
		for t in ${THREADS:-1 2 3}; do
			rm -f "$tmp"/o.* "$tmp"/n.*
			"$old" capture --vmcore "$v" --output "$tmp/o.img" --level $level --threads $t $over_old >/dev/null 2>&1
			"$new" capture --vmcore "$v" --output "$tmp/n.img" --level $level --threads $t $over_new >"$tmp/n.out" 2>&1
			e=$(nearly "$tmp/n.img")
			[ "$e" -gt 0 ] ||
				{ bad "$n level $level threads $t: no EARLY pass in the new capture"; continue; }
			for f in kdump elf; do
				"$old" save "$tmp/o.img" --output "$tmp/o.$f" --format $f >/dev/null 2>&1
				"$new" save "$tmp/n.img" --output "$tmp/n.$f" --format $f >/dev/null 2>&1
				if [ -s "$tmp/o.$f" ] && cmp -s "$tmp/o.$f" "$tmp/n.$f"; then
					ok "$n level $level threads $t: $f saves identical ($e EARLY chunks first)"
				else
					bad "$n level $level threads $t: $f saves differ ($(cmp "$tmp/o.$f" "$tmp/n.$f" 2>&1 | head -1))"
				fi
			done
		done
	done
done
echo "$pass passed, $fail failed, 0 skipped"
[ "$fail" -eq 0 ]
