#!/bin/bash
# The arm64 checks that need no VM (suite arm64, in make check):
#   - `make ARCH=arm64` builds build/arm64/kdumpinit: a static aarch64 ELF
#     within the same 400 KiB limit as x86_64, that runs (under
#     qemu-aarch64-static when it is there);
#   - kdumpinit arm's kexec-tools fallback (arm/kexec_tools.c), with a
#     stand-in kexec (KDUMPINIT_KEXEC) and a --root tree: a kallsyms with
#     _text is handed over as it is; one with only _stext gets _text =
#     _stext in kexec's view, and in nobody else's; one whose addresses
#     are hidden is refused before kexec runs; a failing kexec fails arm;
#   - arm --unload (arm/unload.c) as a user the kernel refuses both
#     syscalls: it goes on to the stand-in's kexec -p -u, and fails when
#     kexec_crash_loaded still reads 1 after it.
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
# The Makefile's limit, which the x86_64 link checks too.
limit=$(sed -n 's/.*test \$\$size -le \([0-9]*\) .*/\1/p' "$top/Makefile")
[ "$size" -gt 0 ] && [ -n "$limit" ] && [ "$size" -le "$limit" ] && ok "arm64 binary within the limit, $limit bytes ($size bytes)" ||
	bad "arm64 binary within the limit (${limit:-not found in the Makefile})" "$size bytes"
if command -v qemu-aarch64-static >/dev/null; then
	v=$(qemu-aarch64-static "$b" --version 2>&1)
	case $v in "kdumpinit "*) ok "the arm64 binary runs (qemu-user): $v" ;; *) bad "the arm64 binary runs" "$v" ;; esac
else
	echo "skip arm64-runs: no qemu-aarch64-static"; nskip=$((nskip + 1))
fi

# 2. The kexec-tools fallback.
w=$(mktemp -d) || exit 1
trap 'rm -rf "$w"' EXIT

# 1b. mkinitramfs --arch arm64: the arm64 build is the default init, and
# a binary for another architecture is refused (its crash kernel could not
# start it). An empty module tree: nothing but the init is packed.
mr=$w/modroot/lib/modules/9.9.9-arm64test
mkdir -p "$mr" && : >"$mr/modules.dep" && : >"$mr/modules.alias" && : >"$mr/modules.builtin"
if "$top/initramfs/mkinitramfs" -k 9.9.9-arm64test -d "$w/modroot" --arch arm64 -o "$w/a.img" \
	>"$w/mk.out" 2>&1 &&
	(cd "$w" && cpio -i --quiet --to-stdout init <"$w/a.img" >"$w/init.bin") &&
	m=$(od -An -tu2 -j 18 -N 2 "$w/init.bin" | tr -d ' ') &&
	[ "$m" = 183 ]; then
	ok "mkinitramfs --arch arm64 packs build/arm64/kdumpinit as /init (ELF machine 183)"
else
	bad "mkinitramfs --arch arm64" "machine '${m:-}': $(tr '\n' ' ' <"$w/mk.out")"
fi
# 1c. The other way round: the arm64 binary (under qemu-user) reads an
# x86_64 dump as the x86_64 binary does: info, and save --format elf
# byte for byte.
if [ -x "$top/build/kdumpinit" ] && command -v qemu-aarch64-static >/dev/null &&
	make -s -C "$top" build/tools/mkvmcore >/dev/null 2>&1; then
	"$top/build/tools/mkvmcore" -o "$w/x86.core" --mem 64M >/dev/null 2>&1 &&
		"$top/build/kdumpinit" capture --vmcore "$w/x86.core" --output "$w/x86.img" --level 1 >/dev/null 2>&1 &&
		"$top/build/kdumpinit" save "$w/x86.img" --output "$w/x86-by-x86.elf" --format elf >/dev/null 2>&1 &&
		qemu-aarch64-static "$b" save "$w/x86.img" --output "$w/x86-by-arm64.elf" --format elf >/dev/null 2>&1 &&
		qemu-aarch64-static "$b" info "$w/x86.img" >"$w/x86.info" 2>&1 &&
		grep -q "^state *complete" "$w/x86.info" && cmp -s "$w/x86-by-x86.elf" "$w/x86-by-arm64.elf" &&
		ok "the arm64 binary reads an x86_64 dump: info complete, save --format elf identical to the x86_64 binary's" ||
		bad "the arm64 binary on an x86_64 dump" "$(head -c 300 "$w/x86.info" 2>/dev/null)"
	rm -f "$w/x86.core" "$w/x86.img" "$w"/x86-by-*.elf
else
	bad "the arm64 binary on an x86_64 dump" "no x86_64 build, mkvmcore or qemu-aarch64-static"
fi
if [ -x "$top/build/kdumpinit" ]; then
	"$top/initramfs/mkinitramfs" -k 9.9.9-arm64test -d "$w/modroot" --arch arm64 \
		-b "$top/build/kdumpinit" -o "$w/b.img" >"$w/mk.out" 2>&1
	rc=$?
	[ $rc = 1 ] && grep -q "is not an arm64 executable" "$w/mk.out" && [ ! -e "$w/b.img" ] &&
		ok "mkinitramfs --arch arm64 refuses the x86_64 binary (exit 1, no image)" ||
		bad "mkinitramfs --arch arm64 with the x86_64 binary" "exit $rc: $(tr '\n' ' ' <"$w/mk.out")"
fi
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

# 3. arm --unload's fallbacks, black-box. As a user without CAP_SYS_BOOT
# both syscalls are refused before the kernel looks at its crash image
# (nothing is unloaded on this host: as root the command runs under
# setpriv as nobody, or not at all), so arm must go on to the stand-in
# kexec -p -u, then believe /sys/kernel/kexec_crash_loaded under --root.
u=$w/unload
mkdir -p "$u/root/sys/kernel" "$u/root/run" && chmod a+rx "$w" && chmod -R a+rwX "$u"
cat >"$u/kexec" <<KX
#!/bin/sh
echo "\$*" >"$u/args"
echo \${KX_LOADED:-0} >"$u/root/sys/kernel/kexec_crash_loaded"
KX
chmod a+rx "$u/kexec"
unload() {
	echo 1 >"$u/root/sys/kernel/kexec_crash_loaded" && chmod a+rw "$u/root/sys/kernel/kexec_crash_loaded"
	rm -f "$u/args"
	if [ "$(id -u)" = 0 ]; then
		setpriv --reuid=65534 --regid=65534 --clear-groups -- env KDUMPINIT_KEXEC="$u/kexec" "$@" \
			"$kd" arm --unload --root "$u/root" >"$u/out" 2>&1
	else
		env KDUMPINIT_KEXEC="$u/kexec" "$@" "$kd" arm --unload --root "$u/root" >"$u/out" 2>&1
	fi
}
if [ "$(id -u)" = 0 ] && ! command -v setpriv >/dev/null; then
	for c in falls-back still-loaded; do echo "skip unload-$c: no setpriv to drop root"; nskip=$((nskip + 1)); done
else
	if unload && [ "$(cat "$u/args" 2>/dev/null)" = "-p -u" ] &&
		grep -q "kdumpinit: crash kernel unloaded (kexec -p -u; kexec_crash_loaded=0)" "$u/out"; then
		ok "unload-falls-back: kexec_file_load and kexec_load refused, kexec -p -u unloads"
	else
		bad "unload-falls-back" "$(tr '\n' ' ' <"$u/out") args: $(cat "$u/args" 2>/dev/null)"
	fi
	if ! unload KX_LOADED=1 && [ "$(cat "$u/args" 2>/dev/null)" = "-p -u" ] &&
		grep -q "kexec -p -u reported success, but kexec_crash_loaded is still 1" "$u/out"; then
		ok "unload-still-loaded: arm --unload fails when kexec_crash_loaded stays 1"
	else
		bad "unload-still-loaded" "$(tr '\n' ' ' <"$u/out")"
	fi
fi
echo "$npass passed, $nfail failed, $nskip skipped"
[ "$nfail" = 0 ]
