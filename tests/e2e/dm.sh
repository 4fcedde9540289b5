#!/bin/bash
# tests/e2e/dm.sh: stacked dump devices against a real kernel's
# device-mapper, in a QEMU guest (Debian 12's 6.1 under TCG): the build
# host has none. The guest is busybox with dm_mod and one GPT disk of two
# partitions; for a two-segment linear table and a striped one it
#   - rebuilds the mapping from its kdumpinit.dm= word as PID 1 does
#     (build/tools/dmtool create: config/stack.c's stack_assemble),
#   - reads the table back from the kernel (DM_TABLE_STATUS),
#   - writes through the mapping and finds the bytes on the partition
#     where the table puts them,
#   - claims the mapping with `kdumpinit format` and runs
#     `kdumpinit arm --dry-run --dev LABEL=`, whose kdumpinit.dm= must be
#     the word the mapping was built from: the host's recording (the ioctl,
#     the PARTUUIDs) and PID 1's rebuilding agree through the kernel;
#   - removes it.
# Then the whole path: a 128 MiB linear mapping over both partitions is
# claimed, `kdumpinit arm --dev LABEL=dmcap` arms Debian's kernel with a
# crash image from kdumpinit-mkinitramfs (-m dm_mod), the guest crashes,
# PID 1 rebuilds the mapping from kdumpinit.dm= and captures to it; the
# host joins the two segments from the disk image and `kdumpinit info`
# finds a complete dump there.
# Prints "ok NAME" / "FAIL NAME: why" and "N passed, N failed".
#
#   tests/e2e/dm.sh [--workdir DIR] [--kver KVER]
set -uo pipefail
top=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
K=${KDUMPINIT:-$top/build/kdumpinit}
DMTOOL=${DMTOOL:-$top/build/tools/dmtool}
W='' kver=''
while [ $# -gt 0 ]; do
	case $1 in
	--workdir) W=$2; shift ;;
	--kver) kver=$2; shift ;;
	*) echo "usage: $0 [--workdir DIR] [--kver KVER]" >&2; exit 2 ;;
	esac
	shift
done
[ -n "$kver" ] || kver=$(cd /boot && ls vmlinuz-6.1.* 2>/dev/null | sed -n '1s/^vmlinuz-//p')
pass=0 fail=0
ok() { echo "ok $1"; pass=$((pass + 1)); }
bad() { echo "FAIL $1: $2"; fail=$((fail + 1)); }
finish() { echo "$pass passed, $fail failed"; [ "$fail" -eq 0 ]; exit; }

mods=/lib/modules/$kver/kernel
for f in "$K" "$DMTOOL" "/boot/vmlinuz-$kver" "$mods/drivers/md/dm-mod.ko" /bin/busybox; do
	[ -e "$f" ] || { bad setup "$f is missing (make; make build/tools/dmtool; Debian's $kver)"; finish; }
done
[ -n "$W" ] || W=$top/build/e2e/dm
rm -rf "$W" && mkdir -p "$W/root/bin" "$W/root/lib" "$W/root/proc" "$W/root/sys" "$W/root/dev" || { bad setup "cannot make $W"; finish; }
W=$(cd "$W" && pwd)

# The disk: GPT, two 100 MiB partitions with known PARTUUIDs.
p1=11111111-2222-4333-8444-555555555501
p2=11111111-2222-4333-8444-555555555502
truncate -s 256M "$W/disk.img"
printf 'label: gpt\nunit: sectors\nstart=2048, size=204800, uuid=%s\nstart=206848, size=204800, uuid=%s\n' \
	"$p1" "$p2" | sfdisk -q "$W/disk.img" >/dev/null 2>&1 || { bad setup "sfdisk"; finish; }

# Each table: a word, the size it makes, a sector of the mapping and where
# on which partition that sector lies.
lin="16384:linear:PARTUUID=$p1+2048,16384:linear:PARTUUID=$p2+4096"
str="32768:striped:128:PARTUUID=$p1+2048:PARTUUID=$p2+2048"
cap="131072:linear:PARTUUID=$p1+2048,131072:linear:PARTUUID=$p2+4096"
cp /bin/busybox "$K" "$DMTOOL" "$W/root/bin/"
cp "/boot/vmlinuz-$kver" "$W/root/vmlinuz"
"$top/initramfs/mkinitramfs" -k "$kver" -o "$W/root/crash.img" -b "$K" -m virtio_blk -m virtio_pci -m dm_mod \
	>"$W/mkinitramfs.log" 2>&1 || { bad setup "mkinitramfs (see $W/mkinitramfs.log)"; finish; }
for m in virtio/virtio virtio/virtio_ring virtio/virtio_pci_modern_dev virtio/virtio_pci_legacy_dev \
	virtio/virtio_pci block/virtio_blk md/dm-mod; do
	cp "$mods/drivers/$m.ko" "$W/root/lib/" || { bad setup "module $m"; finish; }
done
cat >"$W/root/init" <<EOF
#!/bin/busybox sh
/bin/busybox --install -s /bin
export PATH=/bin
mount -t proc proc /proc; mount -t sysfs sysfs /sys; mount -t devtmpfs devtmpfs /dev
for m in virtio_ring virtio virtio_pci_modern_dev virtio_pci_legacy_dev virtio_pci virtio_blk dm-mod; do
	insmod /lib/\$m.ko || echo "DMTEST FAIL setup: insmod \$m"
done
i=0; while [ ! -e /sys/class/block/vda2 ] && [ \$i -lt 100 ]; do sleep 0.1; i=\$((i + 1)); done
t() { if [ "\$2" = "\$3" ]; then echo "DMTEST ok \$1"; else echo "DMTEST FAIL \$1: got '\$2', want '\$3'"; fi; }
v1=\$(cat /sys/class/block/vda1/dev) v2=\$(cat /sys/class/block/vda2/dev)
# one NAME WORD TABLE SECTOR PART PSECTOR
one() {
	dev=\$(dmtool create "\$2") || { echo "DMTEST FAIL \$1: create"; return; }
	t "\$1: rebuilt, 16 MiB" "\$(cat /sys/class/block/\$dev/size)" 32768
	t "\$1: the kernel's table" "\$(dmtool table kdumpinit-dump | tr '\n' ';')" "\$3"
	printf 'kdumpinit-dm-e2e' | dd of=/dev/\$dev bs=512 seek=\$4 conv=notrunc,fsync 2>/dev/null
	t "\$1: sector \$4 lies at \$5 sector \$6" "\$(dd if=/dev/\$5 bs=512 skip=\$6 count=1 2>/dev/null | head -c 16)" kdumpinit-dm-e2e
	kdumpinit format /dev/\$dev --label dmdump-\$1 --force >/dev/null 2>&1; t "\$1: format claims it" \$? 0
	w=\$(kdumpinit arm --dry-run --dev LABEL=dmdump-\$1 2>/dev/null | tr ' ' '\n' | sed -n 's/^kdumpinit.dm=//p')
	t "\$1: arm records the word it was built from" "\$w" "\$2"
	dmtool remove kdumpinit-dump; t "\$1: removed" \$? 0
}
one linear "$lin" "0 16384 linear \$v1 2048;16384 16384 linear \$v2 4096;" 16392 vda2 4104
one striped "$str" "0 32768 striped 2 128 \$v1 2048 \$v2 2048;" 130 vda2 2050
dev=\$(dmtool create "$cap") || echo "DMTEST FAIL capture: create"
kdumpinit format /dev/\$dev --label dmcap --force >/dev/null 2>&1; t "capture: format" \$? 0
out=\$(kdumpinit arm --kernel /vmlinuz --initramfs /crash.img --dev LABEL=dmcap \\
	--append "kdumpinit.dev=LABEL=dmcap kdumpinit.level=31 kdumpinit.final=poweroff" 2>&1); t "capture: armed" \$? 0
case \$out in *"kdumpinit.dm=$cap"*) echo "DMTEST ok capture: the armed line carries the table" ;;
*) echo "DMTEST FAIL capture: the armed line carries the table: \$out" ;; esac
echo "DMTEST done"
echo c >/proc/sysrq-trigger
sleep 100
EOF
chmod +x "$W/root/init"
(cd "$W/root" && find . | cpio -o -H newc --quiet | gzip -1 >"$W/init.cpio.gz") || { bad setup "cpio"; finish; }

timeout 900 qemu-system-x86_64 -accel tcg -m 1024 -nographic -no-reboot \
	-kernel "/boot/vmlinuz-$kver" -initrd "$W/init.cpio.gz" \
	-append "console=ttyS0 rdinit=/init panic=-1 quiet crashkernel=256M" \
	-drive "file=$W/disk.img,format=raw,if=none,id=d0" -device virtio-blk-pci,drive=d0,serial=dmdisk \
	>"$W/console.log" 2>&1 </dev/null
grep -q 'DMTEST done' "$W/console.log" || bad guest "no end line (console: $W/console.log)"
while IFS= read -r l; do
	l=${l%$'\r'}
	case $l in
	*"DMTEST ok "*) ok "${l#*DMTEST ok }" ;;
	*"DMTEST FAIL "*) r=${l#*DMTEST FAIL }; bad "${r%%:*}" "${r#*: }" ;;
	esac
done <"$W/console.log"
# The crash kernel: PID 1 rebuilt the mapping and captured to it.
grep -q 'rebuilt the dump device as /dev/dm-' "$W/console.log" && ok "capture: PID 1 rebuilt the mapping" ||
	bad "capture: PID 1 rebuilt the mapping" "not said (console: $W/console.log)"
grep -q 'capture finished' "$W/console.log" && ok "capture: finished" ||
	bad "capture: finished" "not said (console: $W/console.log)"
# The volume, as its table lays it out on the disk.
{ dd if="$W/disk.img" bs=512 skip=$((2048 + 2048)) count=131072 status=none
  dd if="$W/disk.img" bs=512 skip=$((206848 + 4096)) count=131072 status=none; } >"$W/lv.img"
"$K" info "$W/lv.img" >"$W/info.log" 2>&1
rc=$?
[ $rc = 0 ] && grep -qi 'complete' "$W/info.log" && ok "capture: the volume holds a complete dump" ||
	bad "capture: the volume holds a complete dump" "info exit $rc: $(head -c 400 "$W/info.log" | tr '\n' '|')"
finish
