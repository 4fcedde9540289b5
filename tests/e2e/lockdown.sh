#!/bin/bash
# Suite e2e-lockdown: kdumpinit arm under a real kernel's lockdown.
# Debian 12's kernel boots in QEMU with lockdown=integrity (what Secure
# Boot turns on), crashkernel=24M, and an init that runs:
#   1. kdumpinit arm --kernel DEDICATED, securityfs mounted: arm reads the
#      lockdown mode and refuses the unsigned image before loading (exit
#      9), saying to arm the distribution's signed kernel;
#   2. the same with securityfs not mounted (arm cannot see lockdown): the
#      kernel refuses the image, and arm still exits 9, so that the
#      service falls back;
#   3. kdumpinit arm --kernel VMLINUZ --initramfs (Debian's signed kernel):
#      not refused by arm, whatever the kernel then decides (its keys: in
#      this VM there is no UEFI db, so Debian's signature may not verify);
#   4. kdumpinit status: the lockdown line;
#   5. a kernel without lockdown (none) takes the dedicated kernel.
# usage: tests/e2e/lockdown.sh CRASH-KERNEL [--workdir DIR]
set -uo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
top=$(cd "$here/../.." && pwd)
ded=${1:?usage: lockdown.sh CRASH-KERNEL [--workdir DIR]}
shift
work=$top/build/e2e/lockdown
[ "${1:-}" = --workdir ] && work=$2
pass=0 fail=0
ok() { echo "ok $1"; pass=$((pass + 1)); }
bad() { echo "FAIL $1: $2"; fail=$((fail + 1)); }
finish() { echo "$pass passed, $fail failed"; [ "$fail" -eq 0 ]; exit; }

kver=$(dpkg-query -W -f='${Depends}' linux-image-amd64 2>/dev/null | sed -n 's/^linux-image-\([^ ,]*\).*/\1/p')
[ -n "$kver" ] && [ -f "/boot/vmlinuz-$kver" ] || kver=6.1.0-57-amd64
kernel=/boot/vmlinuz-$kver
for f in "$ded" "$kernel" /bin/busybox "$top/build/kdumpinit"; do
	[ -r "$f" ] || { bad setup "missing $f"; finish; }
done
mkdir -p "$work"
root=$work/root
rm -rf "$root" && mkdir -p "$root/bin" "$root/proc" "$root/sys" "$root/dev" "$root/run" "$root/tmp"
cp /bin/busybox "$root/bin/busybox"
cp "$top/build/kdumpinit" "$root/bin/kdumpinit"
cp "$ded" "$root/ded"
cp "$kernel" "$root/vmlinuz"
(cd "$root" && echo . | cpio -o -H newc --quiet) >"$root/crash.img"
cat >"$root/init" <<'EOF'
#!/bin/busybox sh
/bin/busybox --install -s /bin
export PATH=/bin
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev
mount -t tmpfs tmpfs /run
say() { echo "e2e-lockdown: $*"; }
sec() { mount -t securityfs securityfs /sys/kernel/security; }
sec
say "mode: $(cat /sys/kernel/security/lockdown 2>&1)"
kdumpinit arm --kernel /ded --append kdumpinit.dev=LABEL=x >/tmp/o 2>&1; rc=$?
sed 's/^/e2e-lockdown: seen: /' /tmp/o; say "seen: exit $rc"
umount /sys/kernel/security
kdumpinit arm --kernel /ded --append kdumpinit.dev=LABEL=x >/tmp/o 2>&1; rc=$?
sed 's/^/e2e-lockdown: unseen: /' /tmp/o; say "unseen: exit $rc"
sec
kdumpinit arm --kernel /vmlinuz --initramfs /crash.img >/tmp/o 2>&1; rc=$?
sed 's/^/e2e-lockdown: stock: /' /tmp/o; say "stock: exit $rc"
kdumpinit status --dev /dev/null >/tmp/o 2>&1
sed 's/^/e2e-lockdown: status: /' /tmp/o
say done
poweroff -f
EOF
chmod +x "$root/init"
img=$work/init.img
(cd "$root" && find . -path ./crash.img -prune -o -print | cpio -o -H newc --quiet; ) >"$img"
(cd "$root" && echo crash.img | cpio -o -H newc --quiet) >>"$img"

boot() {	# MODE LOG
	timeout 300 qemu-system-x86_64 -accel tcg,thread=multi -cpu max,la57=off -smp 1 -m 768M \
		-nographic -no-reboot -kernel "$kernel" -initrd "$img" \
		-append "console=ttyS0 crashkernel=24M lockdown=$1 panic=5" </dev/null >"$2" 2>&1
}
log=$work/integrity.log
boot integrity "$log"
grep -a 'e2e-lockdown: done' "$log" >/dev/null || { bad "boot (lockdown=integrity)" "no 'done' line: $(tail -n 5 "$log" | tr '\n' '|')"; finish; }
grep -aq 'e2e-lockdown: mode: none \[integrity\] confidentiality' "$log" &&
	ok "the kernel is in lockdown integrity (securityfs says so)" ||
	bad "lockdown mode" "$(grep -a 'e2e-lockdown: mode' "$log")"
grep -aq 'e2e-lockdown: seen: exit 9' "$log" &&
	grep -aq 'e2e-lockdown: seen: .*/ded is not signed.*locked down (integrity).*signed kernel' "$log" &&
	ok "arm refuses the unsigned dedicated kernel before loading (exit 9) and says what to do" ||
	bad "arm under lockdown, seen" "$(grep -a 'e2e-lockdown: seen' "$log" | tr '\n' '|')"
grep -aq 'e2e-lockdown: unseen: exit 9' "$log" &&
	ok "securityfs not mounted: the kernel refuses it, arm still exits 9 ($(grep -a -m1 -o 'e2e-lockdown: unseen: kdumpinit: error: [^|]*' "$log" | cut -c1-120))" ||
	bad "arm under lockdown, unseen" "$(grep -a 'e2e-lockdown: unseen' "$log" | tr '\n' '|')"
if grep -aq 'e2e-lockdown: stock: exit 9' "$log"; then
	bad "stock kernel" "arm refused Debian's signed kernel as unsigned: $(grep -a 'e2e-lockdown: stock' "$log" | tr '\n' '|')"
else
	ok "arm does not refuse Debian's signed kernel ($(grep -a 'e2e-lockdown: stock: exit' "$log" | cut -d' ' -f3-); the kernel's own verdict: $(grep -a -m1 -o 'e2e-lockdown: stock: kdumpinit: [^|]*' "$log" | cut -c1-140))"
fi
grep -aEq 'e2e-lockdown: status: lockdown +integrity: only signed crash kernels load' "$log" &&
	ok "status shows the lockdown" || bad "status" "$(grep -a 'e2e-lockdown: status' "$log" | tr '\n' '|')"
log=$work/none.log
boot none "$log"
grep -aq 'e2e-lockdown: seen: exit 0' "$log" && grep -aq 'e2e-lockdown: seen: kdumpinit: crash kernel armed' "$log" &&
	ok "lockdown=none: the dedicated kernel is armed" ||
	bad "lockdown=none" "$(grep -a 'e2e-lockdown: seen' "$log" | tr '\n' '|')"
finish
