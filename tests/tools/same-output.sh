#!/bin/bash
# same-output.sh OLD NEW VMCORE...: a refactoring changes no output. For each
# vmcore, at levels 1 and 31 and 1, 2, 3 and 8 threads (THREADS="..."
# overrides the list), both binaries capture it; their PAGES chunks must be
# identical (tests/tools/chunks.py --pages:
# dump ids, times and the superblock differ by design). The NEW binary's
# save of the OLD binary's capture, --format kdump and elf, must be
# byte-identical to OLD's own save of it.
# Prints ok/FAIL lines and "N passed, N failed, 0 skipped".
set -u
[ $# -ge 3 ] || { echo "usage: $0 OLD NEW VMCORE..." >&2; exit 2; }
old=$1 new=$2
shift 2
here=$(cd "$(dirname "$0")/../.." && pwd)
chunks="/usr/bin/python3 $here/tests/tools/chunks.py --pages"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/kdi-same.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
pass=0 fail=0
# Binaries that cap the workers at the CPUs run them all when told so.
over() { "$1" capture --help 2>&1 | grep -q -- --oversubscribe && echo --oversubscribe; }
over_old=$(over "$old") over_new=$(over "$new")
ok() { echo "ok $*"; pass=$((pass + 1)); }
bad() { echo "FAIL $*"; fail=$((fail + 1)); }
for v in "$@"; do
	n=${v##*/}
	for level in 1 31; do
		for t in ${THREADS:-1 2 3 8}; do
			rm -f "$tmp/o.img" "$tmp/n.img"
			"$old" capture --vmcore "$v" --output "$tmp/o.img" --level $level --threads $t $over_old >/dev/null 2>&1
			"$new" capture --vmcore "$v" --output "$tmp/n.img" --level $level --threads $t $over_new >/dev/null 2>&1
			$chunks "$tmp/o.img" >"$tmp/o.pages" && $chunks "$tmp/n.img" >"$tmp/n.pages" &&
				[ -s "$tmp/o.pages" ] && cmp -s "$tmp/o.pages" "$tmp/n.pages" &&
				ok "$n level $level threads $t: PAGES identical ($(wc -l <"$tmp/o.pages") chunks)" ||
				bad "$n level $level threads $t: PAGES differ"
		done
		for f in kdump elf; do
			rm -f "$tmp/o.$f" "$tmp/n.$f"
			"$old" save "$tmp/o.img" --output "$tmp/o.$f" --format $f >/dev/null 2>&1
			"$new" save "$tmp/o.img" --output "$tmp/n.$f" --format $f >/dev/null 2>&1
			[ -s "$tmp/o.$f" ] && cmp -s "$tmp/o.$f" "$tmp/n.$f" &&
				ok "$n level $level: save --format $f identical" ||
				bad "$n level $level: save --format $f differs"
		done
	done
done
echo "$pass passed, $fail failed, 0 skipped"
[ "$fail" -eq 0 ]
