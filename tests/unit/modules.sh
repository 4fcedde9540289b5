#!/bin/bash
# kdumpinit modules and mkinitramfs --device on this machine, black-box:
# the modules found for /dev/vda against a real module tree must be what
# modprobe gives for the same drivers (its --resolve-alias on each bound
# node's modalias, then --show-depends -a, duplicates dropped), in that
# order; the image mkinitramfs --device builds must list the same modules.
# The tree is /lib/modules/$(uname -r), or, when the running kernel has
# none (a kernel with everything built in), the newest tree in /lib/modules
# that has a modules.dep (on Debian 12: 6.1, with virtio_blk and virtio_pci
# as modules). Needs modprobe and cpio, as mkinitramfs does.
set -u
cd "$(dirname "$0")/../.."
K=${KDUMPINIT:-$PWD/build/kdumpinit}
DEV=${KDI_MODULES_DEV:-/dev/vda}
W=$(mktemp -d "${TMPDIR:-/tmp}/kdi-modules.XXXXXX")
pass=0 fail=0
ok() { echo "ok $1"; pass=$((pass + 1)); }
bad() { echo "FAIL $1: $2"; fail=$((fail + 1)); }
check() { local n=$1; shift; if "$@"; then ok "$n"; else bad "$n" "${why:-condition false}"; fi; why=; }
trap 'rm -rf "$W"' EXIT

kver=$(uname -r)
if [ ! -s "/lib/modules/$kver/modules.dep" ]; then
	kver=$(for d in /lib/modules/*/modules.dep; do [ -s "$d" ] && basename "$(dirname "$d")"; done | sort -V | tail -n 1)
fi
name=${DEV#/dev/}
if [ -z "$kver" ] || [ ! -e "/sys/class/block/$name" ] || ! command -v modprobe >/dev/null; then
	echo "FAIL setup: needs $DEV, modprobe and a module tree with modules.dep (kver '${kver}')"
	echo "0 passed, 1 failed"
	exit 1
fi
echo "# $DEV against /lib/modules/$kver"

# What modprobe says: the module of each bound node from the disk up.
top=()
p=$(readlink -f "/sys/class/block/$name")
while [ "$p" != /sys/devices ] && [ "${p#/sys/devices/}" != "$p" ]; do
	if [ -e "$p/driver" ] && [ -s "$p/modalias" ]; then
		for m in $(modprobe -S "$kver" -R "$(cat "$p/modalias")" 2>/dev/null); do top+=("$m"); done
	fi
	p=${p%/*}
done
want=$( [ ${#top[@]} -gt 0 ] && modprobe -S "$kver" --show-depends -a "${top[@]}" |
	awk '$1 == "insmod" { n = $2; sub(".*/", "", n); sub("\\.ko.*", "", n); gsub("-", "_", n); if (!seen[n]++) print n }')
echo "# modprobe: ${want//$'\n'/ }"

# With PATH empty and the environment cleared: the binary needs no tools.
mkdir "$W/empty"
env -i PATH="$W/empty" "$K" modules --kver "$kver" --no-extras "$DEV" >"$W/out" 2>"$W/err"; rc=$?
check "modules exits 0 with no tools in PATH" test $rc = 0
got=$(grep -v '^#' "$W/out" | awk '{ print $1 }')
echo "# kdumpinit: ${got//$'\n'/ }"
why="got '${got//$'\n'/ }', modprobe '${want//$'\n'/ }'"
check "the modules for $DEV are modprobe's, in its load order" test -n "$want" -a "$got" = "$want"
check "every line has a reason" test -z "$(grep -v '^#' "$W/out" | grep -v '  # .')"
case $kver in
6.1.0-*)
	why=$(tr '\n' ' ' <"$W/out")
	check "6.1: virtio_blk and virtio_pci with their dependencies" test \
		"$(echo $got)" = "virtio_ring virtio virtio_blk virtio_pci_modern_dev virtio_pci_legacy_dev virtio_pci"
	check "6.1: virtio_blk is the driver of a virtio device, virtio_pci of a PCI one" \
		grep -q '^virtio_blk  # driver of virtio[0-9]* (virtio), for '"$name"'$' "$W/out"
	grep -q '^virtio_pci  # driver of [0-9a-f:.]* (pci), for '"$name"'$' "$W/out" &&
		grep -q '^virtio_ring  # needed by virtio_blk$' "$W/out"
	check "6.1: the PCI driver and a dependency say so" test $? = 0
	;;
esac

# The serial selects the same disk.
serial=$(cat "/sys/class/block/$name/serial" 2>/dev/null)
if [ -n "$serial" ]; then
	"$K" modules --kver "$kver" --no-extras "SERIAL=$serial" >"$W/out2" 2>&1
	check "SERIAL=$serial gives the same list" cmp -s "$W/out" "$W/out2"
fi

# The extras: qemu_fw_cfg when the tree has it as a module, the watchdog's driver.
"$K" modules --kver "$kver" "$DEV" >"$W/all" 2>&1
fwcfg=$(grep -c '^kernel/drivers/firmware/qemu_fw_cfg\.ko' "/lib/modules/$kver/modules.dep")
if [ "$fwcfg" -gt 0 ]; then
	check "qemu_fw_cfg is added (a module in $kver)" grep -q '^qemu_fw_cfg  # ' "$W/all"
fi
for wd in /sys/class/watchdog/watchdog*; do
	[ -e "$wd/device/driver/module" ] || continue
	m=$(basename "$(readlink "$wd/device/driver/module")")
	check "the watchdog's driver $m is added" grep -q "^$m  # " "$W/all"
done

"$K" modules --kver "$kver" /dev/kdi-no-such-disk >/dev/null 2>&1; rc=$?
check "a device that is not there: exit 4" test $rc = 4
"$K" modules --kver "$kver" NOSUCH=x >/dev/null 2>&1; rc=$?
check "not a selector: exit 2" test $rc = 2
"$K" modules --kver "$kver" --moddir "$W/empty" "$DEV" >/dev/null 2>&1; rc=$?
check "no modules.dep: exit 1" test $rc = 1

# mkinitramfs --device packs exactly those, in that order.
initramfs/mkinitramfs -k "$kver" -o "$W/img" -b "$K" --device "$DEV" >"$W/mk" 2>&1; rc=$?
why=$(tail -n 3 "$W/mk" | tr '\n' ' ')
check "mkinitramfs --device exits 0" test $rc = 0
mkdir "$W/x"
(cd "$W/x" && cpio -id --quiet etc/kdumpinit.modules <"$W/img") 2>/dev/null
img=$(sed 's|.*/||; s|\.ko.*||; s|-|_|g' "$W/x/etc/kdumpinit.modules" 2>/dev/null)
all=$(grep -v '^#' "$W/all" | awk '{ print $1 }')
why="image '${img//$'\n'/ }', modules '${all//$'\n'/ }'"
check "the image's /etc/kdumpinit.modules matches kdumpinit modules" test -n "$img" -a "$img" = "$all"
check "mkinitramfs prints each module's reason" grep -q "^mkinitramfs: module virtio_blk: driver of " "$W/mk"
initramfs/mkinitramfs -k "$kver" -o "$W/img2" -b "$K" -D "$DEV" -m ext4 >"$W/mk2" 2>&1; rc=$?
(mkdir "$W/x2" && cd "$W/x2" && cpio -id --quiet etc/kdumpinit.modules <"$W/img2") 2>/dev/null
check "-D with -m: the device's modules first, then the extra ones" test $rc = 0 -a \
	"$(head -n "$(echo "$all" | wc -l)" "$W/x2/etc/kdumpinit.modules" | sed 's|.*/||; s|\.ko.*||; s|-|_|g')" = "$all" -a \
	-n "$(grep '/ext4\.ko' "$W/x2/etc/kdumpinit.modules")"
initramfs/mkinitramfs -k "$kver" -o "$W/img3" -b "$K" --device /dev/kdi-no-such-disk >/dev/null 2>&1; rc=$?
check "mkinitramfs --device with no such disk fails, writes nothing" test $rc != 0 -a ! -e "$W/img3"

echo "$pass passed, $fail failed"
[ "$fail" = 0 ]
