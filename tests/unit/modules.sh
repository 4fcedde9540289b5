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

# ---- firmware: mkinitramfs packs what the packed modules declare ----------
# A module tree of our own (-d): kdifw.ko.xz declares five firmware files
# (modinfo -F firmware); the tree has a plain one (also in updates/, which
# the kernel reads first), one as .xz, one as .zst, a link, and not the
# fifth. The target kernel's config decides which compressed files stay so.
fwkv=0.0.1-kdi
F=$W/fwroot
mkdir -p "$F/lib/modules/$fwkv/kernel" "$F/boot" "$F/usr/lib/firmware/kdi-test" "$F/lib/firmware/updates/kdi-test"
printf 'static const char mi[] __attribute__((section(".modinfo"), used, aligned(1))) =
	"license=GPL\\0firmware=kdi-test/plain.bin\\0firmware=kdi-test/fw-xz.bin\\0"
	"firmware=kdi-test/fw-zst.bin\\0firmware=kdi-test/link.bin\\0firmware=kdi-test/missing.bin\\0"
	"firmware=kdi-test/plain.bin\\0name=kdifw";\n' >"$W/kdifw.c"
fwok=1
cc -c -o "$F/lib/modules/$fwkv/kernel/kdifw.ko" "$W/kdifw.c" && xz "$F/lib/modules/$fwkv/kernel/kdifw.ko" &&
	depmod -b "$F" "$fwkv" 2>/dev/null || fwok=0
head -c 3000 /dev/urandom >"$F/usr/lib/firmware/kdi-test/plain.bin"
head -c 5000 /dev/urandom >"$F/lib/firmware/updates/kdi-test/plain.bin"
head -c 7000 /dev/urandom >"$W/xz.bin"
head -c 9000 /dev/urandom >"$W/zst.bin"
xz -c "$W/xz.bin" >"$F/usr/lib/firmware/kdi-test/fw-xz.bin.xz" || fwok=0
zstd -qc "$W/zst.bin" >"$F/usr/lib/firmware/kdi-test/fw-zst.bin.zst" || fwok=0
ln -s plain.bin "$F/usr/lib/firmware/kdi-test/link.bin"
fwimg() {	# NAME CONFIG-LINES: build, unpack into $W/NAME
	printf '%s\n' "$2" >"$F/boot/config-$fwkv"
	[ -n "$2" ] || rm "$F/boot/config-$fwkv"
	initramfs/mkinitramfs -k "$fwkv" -d "$F" -m kdifw -b "$K" -o "$W/$1.img" -M "$W/$1.manifest" >"$W/$1.out" 2>&1
	fwrc=$?
	mkdir -p "$W/$1" && (cd "$W/$1" && cpio -id --quiet <"$W/$1.img") 2>/dev/null
	X=$W/$1/lib/firmware/kdi-test
	why="rc $fwrc: $(tr '\n' ' ' <"$W/$1.out") | $(cd "$W/$1/lib/firmware" 2>/dev/null && find . -type f | tr '\n' ' ')"
}
if [ $fwok = 0 ] || ! modinfo -F firmware "$F/lib/modules/$fwkv/kernel/kdifw.ko.xz" | grep -q missing.bin; then
	bad "firmware: setup" "cannot build the test module tree (cc, xz, zstd, depmod, modinfo)"
else
	# Debian 12's 6.1: the loader reads .xz, not .zst.
	fwimg xz $'CONFIG_FW_LOADER=y\nCONFIG_FW_LOADER_COMPRESS=y\nCONFIG_FW_LOADER_COMPRESS_XZ=y\n# CONFIG_FW_LOADER_COMPRESS_ZSTD is not set'
	check "firmware: the image is built" test $fwrc = 0
	check "firmware: updates/ wins over the top, as in the kernel" cmp -s "$X/plain.bin" "$F/lib/firmware/updates/kdi-test/plain.bin"
	check "firmware: .xz kept compressed when the kernel reads it" cmp -s "$X/fw-xz.bin.xz" "$F/usr/lib/firmware/kdi-test/fw-xz.bin.xz"
	check "firmware: .zst decompressed when the kernel cannot read it" test ! -e "$X/fw-zst.bin.zst" -a -f "$X/fw-zst.bin"
	check "firmware: .zst decompressed right" cmp -s "$X/fw-zst.bin" "$W/zst.bin"
	check "firmware: a link packed as the file" test -f "$X/link.bin" -a ! -L "$X/link.bin"
	check "firmware: a missing one left out" test ! -e "$X/missing.bin"
	check "firmware: a missing one said once, with its module" \
		test "$(grep -c '^mkinitramfs: firmware kdi-test/missing.bin (for kdifw): not in .*: skipped$' "$W/xz.out")" = 1
	check "firmware: how many and how big" grep -q '^mkinitramfs: firmware: 4 files, 2[0-9] KiB in the image' "$W/xz.out"
	check "firmware: the manifest has each file by content" \
		test "$(grep -c '^firmware [0-9a-f]\{64\} /' "$W/xz.manifest")" = 4
	# A kernel with ZSTD on and XZ off: the other way round.
	fwimg zst $'CONFIG_FW_LOADER_COMPRESS=y\n# CONFIG_FW_LOADER_COMPRESS_XZ is not set\nCONFIG_FW_LOADER_COMPRESS_ZSTD=y'
	check "firmware: ZSTD only: .zst kept, .xz decompressed" test $fwrc = 0 -a -f "$X/fw-zst.bin.zst" -a ! -e "$X/fw-xz.bin.xz"
	check "firmware: .xz decompressed right" cmp -s "$X/fw-xz.bin" "$W/xz.bin"
	# Before 5.19 CONFIG_FW_LOADER_COMPRESS alone meant xz.
	fwimg old 'CONFIG_FW_LOADER_COMPRESS=y'
	check "firmware: a pre-5.19 config keeps .xz" test $fwrc = 0 -a -f "$X/fw-xz.bin.xz" -a -f "$X/fw-zst.bin"
	# No config for the target kernel: nothing it might not read.
	fwimg none ''
	check "firmware: no kernel config: both decompressed" \
		test $fwrc = 0 -a -f "$X/fw-xz.bin" -a -f "$X/fw-zst.bin" -a -z "$(find "$X" -name '*.xz' -o -name '*.zst')"
fi
# Nothing asked to reach a disk (no -m, --device, --all-disks): built, and
# said; with -m, not said.
initramfs/mkinitramfs -k "$fwkv" -d "$F" -b "$K" -o "$W/bare.img" >"$W/bare.out" 2>&1
barerc=$?
check "mkinitramfs with no module asked: built, and a warning says the crash kernel needs built-in drivers" \
	eval 'test $barerc = 0 -a -s "$W/bare.img" && grep -q "warning: no module packed (no --device, --all-disks or -m)" "$W/bare.out"'
if [ $fwok = 1 ]; then
	initramfs/mkinitramfs -k "$fwkv" -d "$F" -m kdifw -b "$K" -o "$W/m.img" >"$W/m.out" 2>&1
	check "mkinitramfs -m MODULE: no such warning" eval '! grep -q "no module packed" "$W/m.out"'
fi

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

# A network dump device: nbd, then the drivers of the NIC the route to
# the server goes through, as modprobe gives them for that NIC's chain
# (the interface from `ip route get`, not from /proc/net/route).
srv=198.51.100.7
nif=$(ip -o route get "$srv" 2>/dev/null | sed -n 's/.* dev \([^ ]*\).*/\1/p')
if [ -z "$nif" ] || [ ! -e "/sys/class/net/$nif/device" ]; then
	bad "modules nbd://: setup" "no route to $srv through a NIC here ('$nif')"
else
	ntop=()
	np=$(readlink -f "/sys/class/net/$nif/device")
	while [ "$np" != /sys/devices ] && [ "${np#/sys/devices/}" != "$np" ]; do
		if [ -e "$np/driver" ] && [ -s "$np/modalias" ]; then
			for m in $(modprobe -S "$kver" -R "$(cat "$np/modalias")" 2>/dev/null); do ntop+=("$m"); done
		fi
		np=${np%/*}
	done
	nwant=$( [ ${#ntop[@]} -gt 0 ] && modprobe -S "$kver" --show-depends -a nbd "${ntop[@]}" |
		awk '$1 == "insmod" { n = $2; sub(".*/", "", n); sub("\\.ko.*", "", n); gsub("-", "_", n); if (!seen[n]++) print n }')
	env -i PATH="$W/empty" "$K" modules --kver "$kver" --no-extras "nbd://$srv:10809/dump" >"$W/nout" 2>"$W/nerr"; rc=$?
	ngot=$(grep -v '^#' "$W/nout" | awk '{ print $1 }')
	echo "# nbd://$srv through $nif: kdumpinit: ${ngot//$'\n'/ }; modprobe: ${nwant//$'\n'/ }"
	why="rc $rc, got '${ngot//$'\n'/ }', modprobe '${nwant//$'\n'/ }': $(cat "$W/nerr")"
	check "modules nbd://: nbd and the drivers of $nif (the route to the server), modprobe's, in its order" \
		test $rc = 0 -a -n "$nwant" -a "$ngot" = "$nwant"
	why=$(cat "$W/nout")
	check "modules nbd://: the NIC's driver says it is for $nif" grep -q "  # driver of .*, for $nif\$" "$W/nout"
fi
"$K" modules --kver "$kver" nbd://127.0.0.1/dump >"$W/nout" 2>"$W/nerr"; rc=$?
why="rc $rc: $(cat "$W/nerr")"
check "modules nbd:// on this machine's loopback: exit 4, said" eval 'test $rc = 4 && grep -q "127.0.0.1 is this machine" "$W/nerr"'
"$K" modules --kver "$kver" nbd://dumps.example/dump >"$W/nout" 2>"$W/nerr"; rc=$?
why="rc $rc: $(cat "$W/nerr")"
check "modules nbd:// with a host name: a usage error (the crash kernel resolves no names)" \
	eval 'test $rc = 2 && grep -q "not an IPv4 address" "$W/nerr"'

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
# Every disk: this machine's disks behind a controller ($DEV's among
# them), each with all its modules; a budget below $DEV's files leaves it
# out by name.
"$K" modules --kver "$kver" --no-extras --all-disks >"$W/every" 2>&1; rc=$?
every=$(grep -v '^#' "$W/every" | awk '{ print $1 }')
devmods=$(grep -v '^#' "$W/out" | awk '{ print $1 }')
why="exit $rc; --all-disks '${every//$'\n'/ }', $DEV '${devmods//$'\n'/ }'"
check "modules --all-disks: $DEV's modules among them" test $rc = 0 -a -n "$devmods" -a \
	-z "$(comm -23 <(echo "$devmods" | sort) <(echo "$every" | sort))"
check "modules --all-disks: says how many disks" grep -q '^# every disk: the drivers of [1-9][0-9]* disks\?$' "$W/every"
"$K" modules --kver "$kver" --no-extras --all-disks --budget 1 >"$W/every1" 2>&1; rc=$?
why="exit $rc: $(tr '\n' ' ' <"$W/every1")"
check "modules --all-disks --budget 1: ${DEV#/dev/} left out by name, nothing listed" test $rc = 0 -a \
	-z "$(grep -v '^#' "$W/every1")" -a -n "$(grep "^# every disk: over the 0 KiB budget, left out: .*${DEV#/dev/} (" "$W/every1")"
"$K" modules --kver "$kver" --all-disks --budget 0 >/dev/null 2>&1; rc=$?
check "modules --budget 0: a usage error" test $rc = 2
# A device not here when the image is built (firmware names it, a disk to
# come): mkinitramfs says so and packs every disk's drivers.
initramfs/mkinitramfs -k "$kver" -o "$W/img3" -b "$K" --device /dev/kdi-no-such-disk >"$W/mk3" 2>&1; rc=$?
(mkdir "$W/x3" && cd "$W/x3" && cpio -id --quiet etc/kdumpinit.modules <"$W/img3") 2>/dev/null
img3=$(sed 's|.*/||; s|\.ko.*||; s|-|_|g' "$W/x3/etc/kdumpinit.modules" 2>/dev/null)
why="exit $rc; image '${img3//$'\n'/ }': $(tail -n 3 "$W/mk3" | tr '\n' ' ')"
check "mkinitramfs --device with no such disk: every disk's drivers, said" test $rc = 0 -a -n "$img3" -a \
	-z "$(comm -23 <(echo "$devmods" | sort) <(echo "$img3" | sort))" -a \
	-n "$(grep -F 'mkinitramfs: /dev/kdi-no-such-disk: not found on this machine now: packing the drivers of every disk' "$W/mk3")"
initramfs/mkinitramfs -k "$kver" -b "$K" --all-disks -P >"$W/man-all" 2>/dev/null
initramfs/mkinitramfs -k "$kver" -b "$K" -P >"$W/man-none" 2>/dev/null
check "the manifest records --all-disks (an image built without it is stale)" grep -qx all-disks "$W/man-all"
check "and only then" test -s "$W/man-none" -a -z "$(grep -x all-disks "$W/man-none")"

echo "$pass passed, $fail failed"
[ "$fail" = 0 ]
