#!/bin/bash
# The package suite: `make deb` builds kdumpinit_VERSION_amd64.deb; lintian
# finds no error; in a fresh Debian 12 chroot (debootstrap minbase, cached
# under $BUILD/chroot) `apt-get install ./kdumpinit_*.deb` works, and then
#   kdumpinit --version, man -l on both pages, systemd-analyze verify on the
#   units, the conffile, the installed mkinitramfs packing the installed
#   binary, kdumpinit-arm building an image, the kernel hook exiting 0; and
#   purge leaves none of the package's files (nor /var/lib/kdumpinit) behind;
#   Conflicts: kdump-tools; nothing built or armed while no device is
#   configured; a kernel installed the new way (sid's linux-binary-KVER,
#   linux-modules-KVER, linux-base-KVER: the image at
#   /usr/lib/modules/KVER/vmlinuz, none in /boot; pinned in
#   tests/deb/SHA256SUMS, fetched once into $BUILD/deb-kernel with a private
#   apt configuration) gets its image from the kernel hook and is armed
#   with it; the installed mkinitramfs ignores a planted /usr/build/kdumpinit.
# Needs root (debootstrap, chroot, overlayfs) and the Debian archive.
set -u
cd "$(dirname "$0")/../.."
. tests/lib/chroot.sh
step() { echo "-- $*"; }	# harness steps, not product checks

[ "$(id -u)" -eq 0 ] || { bad "setup: the package test needs root"; finish; }
version=$(sed -n 's/^VERSION := //p' Makefile)
deb=$BUILD/kdumpinit_${version}_amd64.deb
rm -f "$deb"
step "make deb"
if ! make -s --no-print-directory BUILD="$BUILD" run-deb >"$BUILD/deb.log" 2>&1 || [ ! -f "$deb" ]; then
	cat "$BUILD/deb.log"
	bad "make deb: no $deb"
	finish
fi
ok "make deb: ${deb##*/}"

# lintian: no error (overrides are listed with their reasons).
lint=$(lintian --pedantic -I --show-overrides "$deb" 2>&1 | grep -v '^running with root')
echo "$lint" | sed 's/^/   lintian: /'
if echo "$lint" | grep -q '^E: '; then
	bad "lintian: errors"
else
	ok "lintian: no error ($(echo "$lint" | grep -c '^W: ') warnings)"
fi

# Conflicts with kdump-tools: both load the one crash kernel.
dpkg-deb -f "$deb" Conflicts | grep -qw kdump-tools && ok "Conflicts: kdump-tools" ||
	bad "the package does not conflict with kdump-tools: $(dpkg-deb -f "$deb" Conflicts)"

# A kernel packaged the new way (Debian from 6.16), from sid, pinned.
kdir=$BUILD/deb-kernel
sums=tests/deb/SHA256SUMS
step "fetch the pinned sid kernel packages"
fetch_kernel() {
	local f name missing=
	mkdir -p "$kdir"
	while read -r sum f; do
		[ -f "$kdir/$f" ] && [ "$(sha256sum <"$kdir/$f" | cut -d' ' -f1)" = "$sum" ] || missing="$missing $f"
	done <"$sums"
	[ -n "$missing" ] || return 0
	local apt=$kdir/apt
	mkdir -p "$apt/lists/partial" "$apt/cache/archives/partial"
	echo "deb [arch=amd64 signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] $CHROOT_MIRROR sid main" >"$apt/sources.list"
	echo 'Acquire::Check-Valid-Until "false";' >"$apt/apt.conf"
	set -- -c "$apt/apt.conf" -o Dir::Etc::SourceList="$apt/sources.list" -o Dir::Etc::SourceParts=/dev/null \
		-o Dir::State::Lists="$apt/lists" -o Dir::Cache="$apt/cache" -o APT::Sandbox::User=root
	apt-get -q "$@" update >"$kdir/fetch.log" 2>&1 || return 1
	for f in $missing; do
		name=${f%%_*}
		(cd "$kdir" && apt-get -q "$@" download "$name" >>"$kdir/fetch.log" 2>&1) || return 1
	done
	while read -r sum f; do
		[ "$(sha256sum <"$kdir/$f" | cut -d' ' -f1)" = "$sum" ] || { echo "$f: not the pinned sha256" >&2; return 1; }
	done <"$sums"
}
newkv=
if fetch_kernel; then
	newkv=$(head -n 1 "$sums" | sed 's/.*linux-base-\([^_]*\)_.*/\1/')
else
	bad "fetching the pinned kernel packages failed ($kdir/fetch.log)"
fi

base=$BUILD/chroot/bookworm-deb
mnt=$BUILD/chroot/deb-run
step "fresh chroot"
chroot_drop "$mnt"
chroot_base "$base" man-db systemd || { bad "chroot: no base system"; finish; }
chroot_fresh "$base" "$mnt" || { bad "chroot: no overlay"; finish; }
trap 'chroot_drop "$mnt"' EXIT
inroot() { DEBIAN_FRONTEND=noninteractive chroot "$mnt" "$@"; }
cp "$deb" "$mnt/tmp/"

if inroot sh -c "apt-get update -qq && apt-get install -y -qq /tmp/${deb##*/}" >"$BUILD/deb-install.log" 2>&1; then
	ok "apt-get install ./${deb##*/} in a fresh chroot"
else
	tail -n 20 "$BUILD/deb-install.log"
	bad "apt-get install ./${deb##*/} failed"
	finish
fi

v=$(inroot kdumpinit --version 2>&1)
[ "$v" = "kdumpinit $version" ] && ok "kdumpinit --version: $v" || bad "kdumpinit --version said: $v"

for page in kdumpinit kdumpinit-mkinitramfs; do
	f=/usr/share/man/man8/$page.8.gz
	out=$(inroot env MANWIDTH=80 man --warnings -l "$f" 2>"$BUILD/deb-man.err")
	if [ $? -eq 0 ] && echo "$out" | grep -q "^NAME" && [ ! -s "$BUILD/deb-man.err" ]; then
		ok "man -l $f renders"
	else
		bad "man -l $f: $(head -n 3 "$BUILD/deb-man.err" | tr '\n' ' ')"
	fi
done
inroot man -w kdumpinit >/dev/null 2>&1 && ok "man kdumpinit finds the page" || bad "man kdumpinit finds no page"

unit=/lib/systemd/system/kdumpinit-save.service
if out=$(inroot systemd-analyze verify "$unit" 2>&1) && [ -z "$out" ]; then
	ok "systemd-analyze verify $unit"
else
	bad "systemd-analyze verify $unit: $(echo "$out" | head -n 3 | tr '\n' ' ')"
fi
# ... and the verifier can fail: the same unit naming a binary not there.
sed 's|^ExecStart=/usr/lib/kdumpinit/kdumpinit-save$|ExecStart=/usr/lib/kdumpinit/kdumpinit-gone|' "$mnt$unit" >"$mnt/tmp/broken-save.service"
if inroot systemd-analyze verify /tmp/broken-save.service >/dev/null 2>&1; then
	bad "systemd-analyze verify accepts a unit whose ExecStart is missing"
else
	ok "systemd-analyze verify rejects a broken copy of the unit"
fi
[ "$(inroot systemctl is-enabled kdumpinit-save.service 2>&1)" = enabled ] &&
	ok "kdumpinit-save.service is enabled" || bad "kdumpinit-save.service is not enabled"

unit=/lib/systemd/system/kdumpinit-arm.service
if out=$(inroot systemd-analyze verify "$unit" 2>&1) && [ -z "$out" ]; then
	ok "systemd-analyze verify $unit"
else
	bad "systemd-analyze verify $unit: $(echo "$out" | head -n 3 | tr '\n' ' ')"
fi
[ "$(inroot systemctl is-enabled kdumpinit-arm.service 2>&1)" = enabled ] &&
	ok "kdumpinit-arm.service is enabled" || bad "kdumpinit-arm.service is not enabled"
# The units as installed: no variable expanded (nothing split), the
# generator's drop-in following KDUMPINIT_DIR.
grep -n '\$' "$mnt/lib/systemd/system/kdumpinit-save.service" "$mnt/lib/systemd/system/kdumpinit-arm.service" >"$BUILD/deb-units.log" &&
	bad "the installed units expand variables: $(cat "$BUILD/deb-units.log")" || ok "the installed units expand no variable"
if inroot sh -c "mkdir -p /tmp/gen && sed -i 's|^KDUMPINIT_DIR=.*|KDUMPINIT_DIR=/srv/dumps|' /etc/default/kdumpinit &&
	/lib/systemd/system-generators/kdumpinit-generator /tmp/gen /tmp/gen /tmp/gen" &&
	grep -qx 'RequiresMountsFor=/srv/dumps' "$mnt/tmp/gen/kdumpinit-save.service.d/50-kdumpinit-dir.conf"; then
	ok "kdumpinit-generator: RequiresMountsFor=KDUMPINIT_DIR"
else
	bad "kdumpinit-generator wrote no RequiresMountsFor=/srv/dumps"
fi
inroot sed -i 's|^KDUMPINIT_DIR=.*|KDUMPINIT_DIR=/var/crash|' /etc/default/kdumpinit

# Installed and not configured: nothing is built, nothing armed, and
# status says why (a fake /sys with a reservation, so that the reason
# shown is the device).
kv=$(uname -r)
if out=$(inroot /usr/lib/kdumpinit/kdumpinit-arm --kver "$kv" 2>&1) && echo "$out" | grep -q 'no dump device configured' &&
	[ -z "$(ls "$mnt/var/lib/kdumpinit/" 2>/dev/null)" ]; then
	ok "kdumpinit-arm, no device configured: exit 0, nothing built, not armed"
else
	bad "kdumpinit-arm with no device configured: $out; $(ls "$mnt/var/lib/kdumpinit/" 2>&1)"
fi
mkdir -p "$mnt/tmp/fr/sys/kernel" "$mnt/tmp/fr/run" && echo 268435456 >"$mnt/tmp/fr/sys/kernel/kexec_crash_size" &&
	echo 0 >"$mnt/tmp/fr/sys/kernel/kexec_crash_loaded" && ln -s /etc "$mnt/tmp/fr/etc"
out=$(inroot kdumpinit status --root /tmp/fr 2>&1); rc=$?
[ "$rc" = 6 ] && echo "$out" | grep -q '^not armed .*no dump device configured' &&
	ok "kdumpinit status, not configured: exit 6, says no device is configured" || bad "kdumpinit status, not configured: rc $rc: $out"

# A kernel installed the new way: dpkg installs linux-base, linux-binary
# and linux-modules of 7.x (the meta package would also want an initramfs
# generator; its postinst runs the hooks as below, with /boot/vmlinuz-KVER).
disk=$(for d in /sys/block/*; do [ -e "$d/device" ] && echo "${d##*/}"; done | head -n 1)
if [ -n "$newkv" ] && [ -n "$disk" ]; then
	mkdir -p "$mnt/tmp/k" && cp "$kdir"/*.deb "$mnt/tmp/k/"
	if inroot sh -c 'dpkg -i /tmp/k/linux-base-*.deb /tmp/k/linux-binary-*.deb /tmp/k/linux-modules-*.deb' >"$BUILD/deb-kernel.log" 2>&1 &&
		[ -f "$mnt/usr/lib/modules/$newkv/vmlinuz" ] && [ ! -e "$mnt/boot/vmlinuz-$newkv" ]; then
		ok "a $newkv kernel installed the new way: /usr/lib/modules/$newkv/vmlinuz, nothing in /boot"
	else
		tail -n 5 "$BUILD/deb-kernel.log"
		bad "installing linux-binary-$newkv failed"
	fi
	inroot sed -i "s|^KDUMPINIT_DEVICE=.*|KDUMPINIT_DEVICE=/dev/$disk|" /etc/default/kdumpinit
	inroot /etc/kernel/postinst.d/kdumpinit "$newkv" "/boot/vmlinuz-$newkv" >"$BUILD/deb-hook.log" 2>&1
	m=$mnt/var/lib/kdumpinit/initrd-$newkv.img.manifest
	if [ -s "$mnt/var/lib/kdumpinit/initrd-$newkv.img" ] && grep -q "^kernel [0-9a-f]* /usr/lib/modules/$newkv/vmlinuz$" "$m" &&
		grep -q "^module .*/$newkv/.*virtio_blk" "$m"; then
		ok "the kernel hook (called with /boot/vmlinuz-$newkv, not there) builds its image from /usr/lib/modules/$newkv"
	else
		cat "$BUILD/deb-hook.log"
		bad "the kernel hook built no image for $newkv"
	fi
	# Arming it: a fake /sys with a reservation, the rest the chroot's
	# own (links), and a kdumpinit that only says what arm would get.
	for d in etc usr var boot; do ln -sfn "/$d" "$mnt/tmp/fr/$d"; done
	printf '#!/bin/sh\necho "$*" >/tmp/fr/arm-args\n' >"$mnt/tmp/fr-kdumpinit" && chmod +x "$mnt/tmp/fr-kdumpinit"
	inroot env KDUMPINIT_ROOT=/tmp/fr KDUMPINIT=/tmp/fr-kdumpinit /usr/lib/kdumpinit/kdumpinit-arm --kver "$newkv" >"$BUILD/deb-arm.log" 2>&1
	if grep -q "^arm --kernel /tmp/fr/usr/lib/modules/$newkv/vmlinuz --initramfs /tmp/fr/var/lib/kdumpinit/initrd-$newkv.img .*kdumpinit.dev=/dev/$disk" "$mnt/tmp/fr/arm-args" 2>/dev/null; then
		ok "kdumpinit-arm arms $newkv with /usr/lib/modules/$newkv/vmlinuz"
	else
		cat "$BUILD/deb-arm.log"
		bad "kdumpinit-arm did not arm $newkv: $(cat "$mnt/tmp/fr/arm-args" 2>&1)"
	fi
	inroot sed -i "s|^KDUMPINIT_DEVICE=.*|KDUMPINIT_DEVICE=|" /etc/default/kdumpinit
else
	bad "no kernel packages or no disk for the new-layout kernel test"
fi
inroot /etc/kernel/postinst.d/kdumpinit 9.9.9-none /boot/vmlinuz-9.9.9-none >"$BUILD/deb-hook.log" 2>&1 &&
	ok "the kernel postinst.d hook exits 0 for a kernel it cannot build for" ||
	bad "the kernel postinst.d hook failed: $(cat "$BUILD/deb-hook.log")"

conf=$(inroot dpkg-query -W -f='${Conffiles}' kdumpinit)
echo "$conf" | grep -q '^ /etc/default/kdumpinit ' && ok "/etc/default/kdumpinit is a conffile" ||
	bad "/etc/default/kdumpinit is not a conffile: $conf"

# The installed mkinitramfs packs the installed binary as /init, and never
# a kdumpinit planted at PREFIX/build/kdumpinit (the source tree's place).
mkdir -p "$mnt/usr/build" && cp "$mnt/bin/true" "$mnt/usr/build/kdumpinit"
if inroot kdumpinit-mkinitramfs -k "$(uname -r)" -o /tmp/i.img >"$BUILD/deb-mkinit.log" 2>&1 &&
	(cd "$mnt/tmp" && mkdir -p i && cd i && cpio -id --quiet <../i.img) &&
	cmp -s "$mnt/tmp/i/init" "$mnt/usr/sbin/kdumpinit"; then
	ok "kdumpinit-mkinitramfs packs /usr/sbin/kdumpinit as /init, not a planted /usr/build/kdumpinit"
else
	cat "$BUILD/deb-mkinit.log"
	bad "kdumpinit-mkinitramfs did not pack /usr/sbin/kdumpinit"
fi
rm -rf "$mnt/usr/build"

# Purge removes every file the package installed, the conffile and the
# service's enablement included.
files=$(inroot dpkg -L kdumpinit | while read -r p; do [ -d "$mnt$p" ] || echo "$p"; done)
n=$(echo "$files" | grep -c .)
links=$(cd "$mnt" && find etc/systemd var/lib/systemd -name 'kdumpinit*' 2>/dev/null)
[ -n "$links" ] || bad "no enablement link found before purge"
if inroot apt-get purge -y -qq kdumpinit >"$BUILD/deb-purge.log" 2>&1; then
	left=$(for p in $files $(printf '/%s ' $links); do [ -e "$mnt$p" ] || [ -L "$mnt$p" ] && echo "$p"; done)
	[ -e "$mnt/var/lib/kdumpinit" ] && left="$left /var/lib/kdumpinit"
	if [ -z "$left" ] && [ "$n" -ge 8 ]; then
		ok "purge removes all $n files and $(echo "$links" | grep -c .) enablement links"
	else
		bad "purge left: $left (of $n files)"
	fi
	inroot dpkg-query -W kdumpinit >/dev/null 2>&1 && bad "purge: dpkg still knows kdumpinit" || ok "purge: dpkg forgets kdumpinit"
else
	cat "$BUILD/deb-purge.log"
	bad "apt-get purge kdumpinit failed"
fi
finish
