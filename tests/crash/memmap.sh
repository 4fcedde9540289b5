#!/bin/bash
# tests/crash/memmap.sh: the memory map's exclusion (kdumpinit.memmap=exclude)
# in the real crash kernel, and what crash and drgn make of the dump.
#
#   tests/crash/memmap.sh [--workdir DIR]
#
# 1. tests/e2e/run.sh on Debian 12's 6.1 (1 GiB guest): /testinit copies
#    /proc/vmcore raw, then kdumpinit, PID 1 of the crash kernel, captures
#    at level 31 with kdumpinit.memmap=exclude.
# 2. The dump says so (info: "memory map ... left out", memmap N > 0
#    pages), and holds exactly the PAGES chunks a host capture of the raw
#    copy with --memmap exclude writes (tests/tools/chunks.py --pages),
#    fewer pages than the same capture with --memmap keep, and every page
#    the crash kernel's dump holds is the raw vmcore's (pagecheck.py).
# 3. save --format kdump sets DUMP_DH_EXCLUDED_VMEMMAP (0x10).
# 4. crash (on the kdump file): its warning for DUMP_DH_EXCLUDED_VMEMMAP,
#    the panic in `log`, sysrq_handle_crash in `bt`, `ps` and `kmem -i`'s
#    TOTAL MEM as on the raw vmcore, and `kmem -p` of a page whose struct
#    page was left out: zeros (crash reads excluded pages of a kdump file
#    as zero), where the raw vmcore has its flags; drgn (on the ELF file):
#    the release, the panic in the log, the tasks of the raw vmcore; on the
#    kdump file, that struct page an excluded page (FaultError), not
#    made-up bytes (the ELF file holds it as zeros, as any page left out).
# One line per case, then "N passed, N failed, N skipped".
set -uo pipefail
prog=memmap.sh
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
top=$(cd "$here/../.." && pwd)
cd "$top" || exit 1
BUILD=${BUILD:-build}
work=$top/$BUILD/crash/memmap
while [ $# -gt 0 ]; do
	case $1 in
	--workdir) work=$2; shift ;;
	*) echo "$prog: unknown argument $1" >&2; exit 2 ;;
	esac
	shift
done
K=$top/$BUILD/kdumpinit
py=python3
[ -x /usr/bin/python3 ] && py=/usr/bin/python3	# drgn is the system's
dbg=$top/$BUILD/crash
. "$top/tests/lib/vmlinux.sh"
pass=0 fail=0 skip=0
ok() { echo "ok $*"; pass=$((pass + 1)); }
bad() { echo "FAIL $*"; fail=$((fail + 1)); }
finish() { echo "$pass passed, $fail failed, $skip skipped"; [ "$fail" -eq 0 ]; exit; }
mkdir -p "$work" "$dbg" || { bad "setup: cannot create $work"; finish; }
kver=6.1.0-57-amd64

# 1. the crash kernel's capture
if ! bash tests/e2e/run.sh --cpu max,la57=off --level 31 --append-first "e2e.memmap=exclude" \
	--workdir "$work/e2e" >"$work/e2e.log" 2>&1; then
	bad "e2e: the capture in the crash kernel failed: $(grep -m3 'FAIL' "$work/e2e.log" | paste -sd' ')"
	finish
fi
ok "e2e: captured in the crash kernel at level 31 with kdumpinit.memmap=exclude ($(grep -c '^PASS' "$work/e2e.log") checks)"
dump=$work/e2e/dump.img raw=$work/e2e/raw.vmcore
grep -aq 'kdumpinit: memory map: .* pieces; those that describe only pages left out are left out' \
	"$work/e2e/console.log" &&
	ok "console: $(grep -ao 'kdumpinit: memory map: [0-9]* pages ([0-9.]* MiB) in [0-9]* pieces' "$work/e2e/console.log" | head -n 1)" ||
	bad "console: no 'memory map: ... left out' line"

# 2. the dump against host captures of the raw copy
"$K" info "$dump" >"$work/info" 2>&1
n=$(awk '$1 == "memmap" || $2 == "memmap" { print $(NF-1) }' "$work/info")
if grep -q '^memory map *the struct pages of pages left out are left out' "$work/info" && [ "${n:-0}" -gt 0 ]; then
	ok "info: memory map left out, $n pages of it"
else
	bad "info: no memory-map line or no memmap pages: $(grep -E '^memory map|memmap' "$work/info" | paste -sd' ')"
fi
for m in exclude keep; do
	rm -f "$work/host-$m.img"
	"$K" capture --vmcore "$raw" --output "$work/host-$m.img" --level 31 --memmap "$m" >"$work/host-$m.log" 2>&1 ||
		bad "host capture --memmap $m failed: $(tail -n 1 "$work/host-$m.log")"
done
"$K" save "$work/host-keep.img" --output "$work/host-keep.elf" --format elf --force >/dev/null 2>&1 ||
	bad "save of the host capture with the memory map whole failed"
"$py" tests/tools/chunks.py --pages "$dump" >"$work/dump.pages" 2>&1
"$py" tests/tools/chunks.py --pages "$work/host-exclude.img" >"$work/host.pages" 2>&1
if [ -s "$work/dump.pages" ] && cmp -s "$work/dump.pages" "$work/host.pages"; then
	ok "the crash kernel's PAGES chunks are the host capture's of the raw copy ($(wc -l <"$work/dump.pages") chunks)"
else
	bad "the crash kernel's PAGES chunks differ from the host capture's of the raw copy"
fi
kept() { "$K" info "$1" 2>/dev/null | awk '$1 == "pages" && $2 == "kept" { print $3 }'; }
ke=$(kept "$dump") kk=$(kept "$work/host-keep.img")
[ -n "$ke" ] && [ -n "$kk" ] && [ $((kk - ke)) = "${n:-x}" ] &&
	ok "pages kept: $ke, $n fewer than with --memmap keep ($kk)" ||
	bad "pages kept: $ke with the exclusion, $kk without, memmap $n: do not add up"
"$K" save "$dump" --output "$work/saved.elf" --format elf --force >"$work/save-elf.log" 2>&1 ||
	bad "save --format elf: $(tail -n 1 "$work/save-elf.log")"
"$py" tests/tools/pagecheck.py "$raw" "$work/saved.elf" --require some >"$work/pagecheck.out" 2>&1 &&
	ok "pagecheck: every page saved is the raw vmcore's" ||
	bad "pagecheck: $(tail -n 3 "$work/pagecheck.out" | paste -sd' ')"

# 3. the kdump file's status
"$K" save "$dump" --output "$work/saved.kdump" --format kdump --force >"$work/save-kdump.log" 2>&1 ||
	bad "save --format kdump: $(tail -n 1 "$work/save-kdump.log")"
st=$(od -An -tu4 -j424 -N4 "$work/saved.kdump" 2>/dev/null | tr -d ' ')
[ -n "$st" ] && [ $((st & 16)) = 16 ] &&
	ok "save --format kdump: DUMP_DH_EXCLUDED_VMEMMAP set (status $st)" ||
	bad "save --format kdump: status '$st' lacks DUMP_DH_EXCLUDED_VMEMMAP (0x10)"

# A pfn whose page of struct pages the dump left out (kept whole, it is
# there): the first pfn that page describes (tests/tools/memmapcmp.py
# finds the memory map from the raw vmcore's page tables).
gone=$("$py" - "$raw" "$work/host-keep.elf" "$work/saved.elf" <<'EOF'
import os, sys
sys.path.insert(0, os.path.join(os.getcwd(), "tests/tools"))
sys.path.insert(0, os.path.join(os.getcwd(), "tests/debugger"))
from memmapcmp import backing, held_nonzero
from pfnmap import Vmcore
back, cmap, spage = backing(Vmcore(sys.argv[1]))
left = sorted(b for b in held_nonzero(sys.argv[2]) - held_nonzero(sys.argv[3]) if b in back)
if left:
    vp = back[left[0]][0]
    print(-(-(vp * 4096 - cmap) // spage))
EOF
)
[ -n "$gone" ] && ok "the page of struct pages of pfn $gone is left out of the dump (kept whole, it is there)" ||
	bad "no page of struct pages is missing from the dump that the whole capture holds"

# 4. the readers
if ! vml=$(vmlinux_of "$kver" 2>"$work/vmlinux.err"); then
	bad "no vmlinux for $kver: $(tail -n 1 "$work/vmlinux.err")"
	finish
fi
probe() { "$py" "$top/tests/crash/drgnprobe.py" "$1" "$2" 2>&1; }
want=$(probe "$raw" "$vml") got=$(probe "$work/saved.elf" "$vml")
if [ -n "$gone" ]; then
	# the kdump file: an ELF file holds an excluded page as zeros (its
	# PT_LOAD's memsz past filesz), which is what drgn then reads
	pg=$("$py" - "$work/saved.kdump" "$vml" "$gone" <<'EOF' 2>&1
import sys
import drgn
from drgn.helpers.linux.mm import pfn_to_page
prog = drgn.Program()
prog.set_core_dump(sys.argv[1])
prog.load_debug_info([sys.argv[2]])
try:
    print("flags", hex(pfn_to_page(prog, int(sys.argv[3])).flags.value_()))
except drgn.FaultError as e:
    print("fault", str(e).replace("\n", " ")[:120])
EOF
)
	[[ "$pg" == fault* ]] && ok "drgn: the struct page of pfn $gone is an excluded page: $pg" ||
		bad "drgn: the struct page of pfn $gone: '$pg' (want a FaultError)"
fi
rt=$(sed -n 's/^tasks //p' <<<"$want") gt=$(sed -n 's/^tasks //p' <<<"$got")
if grep -q "^release $kver" <<<"$got" && grep -q '^panic 1' <<<"$got" && [ -n "$rt" ] && [ "$gt" = "$rt" ]; then
	ok "drgn: the release, the panic in the log, $gt tasks as on the raw vmcore"
else
	bad "drgn: $(paste -sd' ' <<<"$got") (raw: $(paste -sd' ' <<<"$want"))"
fi
if command -v crash >/dev/null; then
	for f in "$work/saved.kdump" "$raw"; do
		printf 'log\nbt\nps\nkmem -i\nkmem -p %x\nquit\n' $((${gone:-0} * 4096)) |
			timeout 300 crash -s "$vml" "$f" >"$f.crash" 2>&1
	done
	grep -q 'incomplete because the page structures associated' "$work/saved.kdump.crash" &&
		ok "crash warns that page structures may be excluded (DUMP_DH_EXCLUDED_VMEMMAP)" ||
		bad "crash does not warn of excluded page structures"
	pscount() { grep -cE '^[> ] +[0-9]+ +[0-9]+ +[0-9]+ +[0-9a-f]{16} ' "$1"; }
	[ "$(pscount "$raw.crash")" -gt 0 ] && [ "$(pscount "$work/saved.kdump.crash")" = "$(pscount "$raw.crash")" ] &&
		ok "crash: ps lists the $(pscount "$raw.crash") tasks it lists on the raw vmcore" ||
		bad "crash: ps lists $(pscount "$work/saved.kdump.crash") tasks, $(pscount "$raw.crash") on the raw vmcore"
	# kmem -p's line: PAGE PHYSICAL MAPPING INDEX CNT FLAGS
	kp() { awk -v a="$(printf '%x' $((${gone:-0} * 4096)))" '$2 == a { print $NF }' "$1" | head -n 1; }
	if [ -n "$gone" ] && [ "$(kp "$work/saved.kdump.crash")" = 0 ] && [ -n "$(kp "$raw.crash")" ] &&
		[ "$(kp "$raw.crash")" != 0 ]; then
		ok "crash: kmem -p of pfn $gone reads its left-out struct page as zeros (flags 0; the raw vmcore: $(kp "$raw.crash"))"
	else
		bad "crash: kmem -p of pfn ${gone:-?}: flags '$(kp "$work/saved.kdump.crash")', raw '$(kp "$raw.crash")'"
	fi
	tm() { grep -m1 'TOTAL MEM' "$1" | awk '{ print $3 }'; }
	if grep -q 'sysrq triggered crash' "$work/saved.kdump.crash" &&
		grep -q 'sysrq_handle_crash' "$work/saved.kdump.crash" &&
		[ -n "$(tm "$raw.crash")" ] && [ "$(tm "$work/saved.kdump.crash")" = "$(tm "$raw.crash")" ]; then
		ok "crash: the panic in log, sysrq_handle_crash in bt, kmem -i TOTAL MEM $(tm "$raw.crash") pages as on the raw vmcore"
	else
		bad "crash: log/bt/kmem -i on the saved dump: $(grep -m3 -iE 'error|excluded|invalid' "$work/saved.kdump.crash" | paste -sd' ')"
	fi
else
	bad "crash is not installed"
fi
rm -f "$work/host-exclude.img" "$work/host-keep.img" "$work/host-keep.elf" "$work/saved.kdump" "$work"/*.crash
finish
