#!/bin/bash
# make demo: crash a QEMU guest, show kdumpinit capturing the dump from the
# crash kernel (its console lines), then what `kdumpinit info` sees on the
# dump disk; then, as a user would after the reboot: the crashed kernel's
# last log lines (`kdumpinit dmesg`: the panic, its task and backtrace),
# the dump saved as a kdump-compressed file (`kdumpinit save`), and that
# file opened in drgn with the kernel's debug symbols: the crashed task and
# its stack. Takes a few minutes under TCG; the debug symbols (Debian's
# linux-image-KVER-dbg, 860 MB for 6.1) are fetched once into build/crash,
# checked by the pin in tests/crash/SHA256SUMS or, for a kernel the tests
# do not pin, by apt.
# DEMO_DRGN=0 leaves drgn out. Options as for run.sh; the default dump
# level here is 31, and there is no raw reference copy: kdumpinit is the
# crash kernel's only init, as users run it.
set -u
top=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
work=$top/build/e2e/demo
K=$top/build/kdumpinit
"$top/tests/e2e/run.sh" --demo --no-raw --level 31 --workdir "$work" "$@" || exit
dump=$work/dump.img

echo
echo "demo: the crashed kernel's log from the panic (kdumpinit dmesg $dump):"
"$K" dmesg "$dump" 2>&1 | awk '/sysrq: Trigger a crash|Kernel panic|BUG:|Oops:/ { on = 1 } on && n++ < 24 { print "  " $0 }'

echo
echo "demo: kdumpinit save $dump --output $work/vmcore"
rm -f "$work/vmcore"
"$K" save "$dump" --output "$work/vmcore" --quiet || { echo "demo: save failed" >&2; exit 1; }

[ "${DEMO_DRGN:-1}" = 0 ] && exit 0
# The guest's kernel: the one run.sh booted (Debian's linux-image-amd64).
kver=$(dpkg-query -W -f='${Depends}' linux-image-amd64 2>/dev/null | sed -n 's/^linux-image-\([^ ,]*\).*/\1/p')
[ -n "$kver" ] && [ -f "/boot/vmlinuz-$kver" ] || kver=6.1.0-57-amd64
dbg=$top/build/crash
. "$top/tests/lib/vmlinux.sh"
# Whatever Debian 12 kernel this machine runs the guest on: its debug
# package as apt vouches for it when the tests do not pin that one.
export VMLINUX_UNPINNED=1
echo
echo "demo: drgn on $work/vmcore with linux-image-$kver-dbg's vmlinux (fetched once)"
vml=$(vmlinux_of "$kver") || { echo "demo: no debug vmlinux for $kver: drgn left out" >&2; exit 1; }
/usr/bin/python3 - "$work/vmcore" "$vml" <<'EOF'
import sys
import drgn
from drgn.helpers.linux.pid import for_each_task

prog = drgn.Program()
prog.set_core_dump(sys.argv[1])
prog.load_debug_info([sys.argv[2]])
print("  release:", prog["init_uts_ns"].name.release.string_().decode())
print("  tasks:  ", sum(1 for _ in for_each_task(prog)))
th = prog.crashed_thread()
task = th.object
print("  crashed: pid %d (%s)" % (th.tid, task.comm.string_().decode()))
for i, f in enumerate(th.stack_trace()):
    print("    #%-2d %s" % (i, f.name or hex(f.pc)))
EOF
