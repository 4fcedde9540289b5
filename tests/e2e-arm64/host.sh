#!/bin/bash
# The arm64 checks that need no VM (suite arm64, in make check):
#   - `make ARCH=arm64` builds build/arm64/kdumpinit: a static aarch64 ELF
#     within the same 400 KiB limit as x86_64, that runs (under
#     qemu-aarch64-static when it is there);
#   - kdumpinit arm's kexec-tools fallback (init/kexec_tools.c), with a
#     stand-in kexec (KDUMPINIT_KEXEC) and a --root tree: a kallsyms with
#     _text is handed over as it is; one with only _stext gets _text =
#     _stext in kexec's view, and in nobody else's; one whose addresses
#     are hidden is refused before kexec runs; a failing kexec fails arm.
# The bind mount needs root (a private mount namespace): as another user
# those cases are skipped and say so.
set -uo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
top=$(cd "$here/../.." && pwd)
kd=${KDUMPINIT:-$top/build/kdumpinit}
npass=0 nfail=0 nskip=0
ok() { echo "ok   $1"; npass=$((npass + 1)); }
bad() { echo "FAIL $1: $2"; nfail=$((nfail + 1)); }

# 1. The cross build.
if make -C "$top" --no-print-directory ARCH=arm64 >"$top/build/arm64-make.log" 2>&1; then
	ok "make ARCH=arm64"
else
	bad "make ARCH=arm64" "$(tail -n 3 "$top/build/arm64-make.log" | tr '\n' ' ')"
fi
b=$top/build/arm64/kdumpinit
hdr=$(od -An -tx1 -j16 -N4 "$b" 2>/dev/null | tr -d ' ')
# ET_EXEC (2) and EM_AARCH64 (0xb7), little-endian; no PT_INTERP: static.
if [ "$hdr" = 0200b700 ] && ! LC_ALL=C readelf -l "$b" 2>/dev/null | grep -q INTERP; then
	ok "build/arm64/kdumpinit is a static aarch64 executable"
else
	bad "build/arm64/kdumpinit is a static aarch64 executable" "ELF type/machine bytes '$hdr'"
fi
size=$(stat -c %s "$b" 2>/dev/null || echo 0)
[ "$size" -gt 0 ] && [ "$size" -le 409600 ] && ok "arm64 binary within 400 KiB ($size bytes)" ||
	bad "arm64 binary within 400 KiB" "$size bytes"
if command -v qemu-aarch64-static >/dev/null; then
	v=$(qemu-aarch64-static "$b" --version 2>&1)
	case $v in "kdumpinit "*) ok "the arm64 binary runs (qemu-user): $v" ;; *) bad "the arm64 binary runs" "$v" ;; esac
else
	echo "skip arm64-runs: no qemu-aarch64-static"; nskip=$((nskip + 1))
fi

# 2. The kexec-tools fallback.
w=$(mktemp -d) || exit 1
trap 'rm -rf "$w"' EXIT
mkdir -p "$w/root/proc" "$w/root/sys/kernel" "$w/root/run" "$w/root/tmp"
echo "console=ttyAMA0 crashkernel=256M" >"$w/root/proc/cmdline"
echo 1 >"$w/root/sys/kernel/kexec_crash_loaded"
echo 268435456 >"$w/root/sys/kernel/kexec_crash_size"
touch "$w/Image" "$w/initrd"
cat >"$w/kexec" <<KX
#!/bin/sh
# The stand-in: what it was given, and the _text line it sees.
echo "\$*" >"$w/args"
grep ' _text\$' "$w/root/proc/kallsyms" >"$w/seen" || :
exit \${KX_RC:-0}
KX
chmod +x "$w/kexec"
arm() { KDUMPINIT_KEXEC=$w/kexec "$kd" arm --root "$w/root" --kernel "$w/Image" --initramfs "$w/initrd" \
	--append "kdumpinit.dev=SERIAL=d" >"$w/out" 2>&1; }
if [ "$(id -u)" != 0 ]; then
	for c in text-present stext-fix hidden kexec-fails; do echo "skip fallback-$c: needs root"; nskip=$((nskip + 1)); done
else
	printf 'ffff800008000000 T _text\nffff800008010000 T _stext\n' >"$w/root/proc/kallsyms"
	rm -f "$w/args" "$w/seen"
	if arm && grep -q -- "-c -p $w/Image --initrd=$w/initrd --command-line=console=ttyAMA0 .*kdumpinit.dev=SERIAL=d" "$w/args" &&
		[ "$(cat "$w/seen")" = "ffff800008000000 T _text" ] && ! grep -q "_text = _stext" "$w/out"; then
		ok "fallback-text-present: kexec -c -p with the crash command line, kallsyms as it is"
	else
		bad "fallback-text-present" "$(tr '\n' ' ' <"$w/out") args: $(cat "$w/args" 2>/dev/null)"
	fi
	printf 'ffff800008010000 T _stext\nffff800008020000 t other\n' >"$w/root/proc/kallsyms"
	before=$(sha256sum <"$w/root/proc/kallsyms")
	rm -f "$w/args" "$w/seen"
	if arm && [ "$(cat "$w/seen")" = "ffff800008010000 T _text" ] &&
		grep -q "kdumpinit: warning: .*falling back to kexec-tools" "$w/out" &&
		grep -q "kexec gets _text = _stext (0xffff800008010000)" "$w/out" &&
		[ "$(sha256sum <"$w/root/proc/kallsyms")" = "$before" ] &&
		[ -z "$(ls "$w/root/run" | grep kallsyms)" ]; then
		ok "fallback-stext-fix: kexec alone sees _text = _stext; the file and /run are left as they were"
	else
		bad "fallback-stext-fix" "$(tr '\n' ' ' <"$w/out") seen: $(cat "$w/seen" 2>/dev/null)"
	fi
	printf '0000000000000000 T _stext\n0000000000000000 T _text\n' >"$w/root/proc/kallsyms"
	rm -f "$w/args"
	if ! arm && [ ! -e "$w/args" ] && grep -q "would build a broken crash header; not arming" "$w/out"; then
		ok "fallback-hidden: addresses hidden: refused, kexec not run"
	else
		bad "fallback-hidden" "$(tr '\n' ' ' <"$w/out")"
	fi
	printf 'ffff800008010000 T _stext\n' >"$w/root/proc/kallsyms"
	if ! KX_RC=3 arm && grep -q "kexec -c -p failed (exit 3)" "$w/out"; then
		ok "fallback-kexec-fails: arm fails and says kexec's exit"
	else
		bad "fallback-kexec-fails" "$(tr '\n' ' ' <"$w/out")"
	fi
fi
echo "$npass passed, $nfail failed, $nskip skipped"
[ "$nfail" = 0 ]
