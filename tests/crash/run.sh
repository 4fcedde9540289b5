#!/bin/bash
# make check-crash (opt-in): the saved dumps in the real debuggers.
#   crash 8.0.2 with the matching vmlinux (linux-image-KVER-dbg, an 858 MB
#   download cached in build/crash/) must show the panic in `log` and `bt`,
#   for both --format kdump and --format elf;
#   gdb must open the ELF output and read the kernel's banner from it.
# Uses the dump kdumpinit wrote as PID 1 in the e2e crash kernel
# (build/e2e/max_la57-off/dump.img, made by `make check` or tests/e2e/run.sh),
# or DUMP=FILE; INCOMPLETE=1 for a dump cut short (e.g. the faults-kernelfirst
# suite's build/faults/kernelfirst/dump.img: level 1 onto a disk too small).
set -u
cd "$(dirname "$0")/../.."
BUILD=${BUILD:-build}
K=$PWD/$BUILD/kdumpinit
kver=${KVER:-6.1.0-57-amd64}
dir=$BUILD/crash
dump=${DUMP:-$BUILD/e2e/max_la57-off/dump.img}
vmlinux=$dir/usr/lib/debug/boot/vmlinux-$kver
pass=0 fail=0
ok() { echo "ok $*"; pass=$((pass + 1)); }
bad() { echo "FAIL $*"; fail=$((fail + 1)); }
finish() { echo "$pass passed, $fail failed, 0 skipped"; [ "$fail" = 0 ]; exit; }

for t in crash gdb; do
	command -v $t >/dev/null || { bad "$t is not installed (deps/packages, check group: make setup)"; finish; }
done
mkdir -p "$dir"
if [ ! -f "$vmlinux" ]; then
	echo "check-crash: fetching linux-image-$kver-dbg (858 MB, once)"
	(cd "$dir" && apt-get download "linux-image-$kver-dbg" >download.log 2>&1) ||
		{ bad "download of linux-image-$kver-dbg"; finish; }
	dpkg-deb --fsys-tarfile "$dir"/linux-image-"$kver"-dbg_*.deb |
		tar -C "$dir" -x "./usr/lib/debug/boot/vmlinux-$kver" || { bad "extracting vmlinux"; finish; }
fi
[ -f "$dump" ] || { bad "no dump at $dump: run tests/e2e/run.sh first"; finish; }

rm -f "$dir/vmcore.kdump" "$dir/vmcore.elf"
# INCOMPLETE=1: DUMP was cut short (power, device full): save must say so
# (exit 5), and crash must still show the panic, from the kernel's pages
# that a capture writes first.
want=0
[ -n "${INCOMPLETE:-}" ] && want=5
"$K" save "$dump" --output "$dir/vmcore.kdump" >/dev/null 2>&1; rc=$?
[ $rc = $want ] && ok "save --format kdump (exit $rc)" || bad "save --format kdump: exit $rc, want $want"
"$K" save "$dump" --output "$dir/vmcore.elf" --format elf >/dev/null 2>&1; rc=$?
[ $rc = $want ] && ok "save --format elf (exit $rc)" || bad "save --format elf: exit $rc, want $want"

for f in kdump elf; do
	out=$dir/crash-$f.out
	printf 'log\nbt\nsys\nquit\n' | timeout 600 crash -s "$vmlinux" "$dir/vmcore.$f" >"$out" 2>&1
	if grep -q "sysrq triggered crash" "$out" && grep -q "Kernel panic - not syncing" "$out"; then
		ok "crash $f: log shows the panic"
	else
		bad "crash $f: no panic in log ($(grep -m3 -iE 'error|crash:' "$out" | tr '\n' ' '))"
	fi
	if grep -qE "#[0-9]+ .*(panic|sysrq_handle_crash|__crash_kexec|crash_kexec)" "$out"; then
		ok "crash $f: bt shows the crashing stack"
	else
		bad "crash $f: bt without the crash path"
	fi
done

# gdb: the ELF core maps the KASLR-relocated kernel; read linux_banner at
# its relocated address.
off=$("$K" dmesg "$dump" >/dev/null 2>&1; strings -n 8 "$dir/vmcore.elf" | sed -n 's/^KERNELOFFSET=//p' | head -n 1)
out=$dir/gdb.out
timeout 300 gdb -batch -nx -ex "x/s (char *)&linux_banner + 0x${off:-0}" "$vmlinux" "$dir/vmcore.elf" >"$out" 2>&1
if grep -q "Linux version $kver" "$out"; then
	ok "gdb opens the ELF dump and reads linux_banner"
else
	bad "gdb: $(tail -n 3 "$out" | tr '\n' ' ')"
fi
finish
