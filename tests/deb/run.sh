#!/bin/bash
# The package suite: `make deb` builds kdumpinit_VERSION_amd64.deb and
# kdumpinit-crash-kernel_VERSION_amd64.deb; lintian finds no error in
# either; the kernel's package names the pinned linux source in
# Built-Using and depends on kdumpinit of its own version; in a fresh
# Debian 12 chroot (debootstrap minbase, cached under $BUILD/chroot)
# `apt-get install` of both works, and then
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
#   with it; with the dedicated kernel's package installed, kdumpinit-arm
#   arms /usr/lib/kdumpinit/crash-kernel without an image, its lists
#   checked against the disk's chain in sysfs, and its manifest names the
#   installed kdumpinit's sha256; purging kdumpinit-crash-kernel leaves none
#   of its files; the installed mkinitramfs ignores a planted
#   /usr/build/kdumpinit.
# Needs root (debootstrap, chroot, overlayfs) and the Debian archive.
set -u
cd "$(dirname "$0")/../.."
. tests/lib/chroot.sh
step() { echo "-- $*"; }	# harness steps, not product checks

[ "$(id -u)" -eq 0 ] || { bad "setup: the package test needs root"; finish; }
version=$(sed -n 's/^VERSION := //p' Makefile)
deb=$BUILD/kdumpinit_${version}_amd64.deb
kdeb=$BUILD/kdumpinit-crash-kernel_${version}_amd64.deb
rm -f "$deb" "$kdeb"
step "make deb"
if ! make -s --no-print-directory BUILD="$BUILD" run-deb >"$BUILD/deb.log" 2>&1 || [ ! -f "$deb" ] || [ ! -f "$kdeb" ]; then
	cat "$BUILD/deb.log"
	bad "make deb: no $deb or no $kdeb"
	finish
fi
ok "make deb: ${deb##*/} and ${kdeb##*/}"

# lintian: no error and no warning in either (overrides are listed with
# their reasons).
lint=$(lintian --pedantic -I --show-overrides "$deb" "$kdeb" 2>&1 | grep -v '^running with root')
echo "$lint" | sed 's/^/   lintian: /'
if echo "$lint" | grep -q '^[EW]: '; then
	bad "lintian: $(echo "$lint" | grep -c '^E: ') errors, $(echo "$lint" | grep -c '^W: ') warnings"
else
	ok "lintian: no error, no warning in either package"
fi

# The kernel's package: Built-Using names the linux source package of the
# linux-source .deb build.sh pins, at its version; it needs kdumpinit of
# exactly its own version (its manifest names that build's binary).
pin=$(sed -n 's/^src_pkg=linux-source-[0-9.]*=//p' crash-kernel/build.sh)
bu=$(dpkg-deb -f "$kdeb" Built-Using)
case ", $bu," in
*", linux (= $pin),"*) ok "${kdeb##*/}: Built-Using: $bu" ;;
*) bad "${kdeb##*/}: Built-Using is '$bu', without linux (= ${pin:-the pin})" ;;
esac
dep=$(dpkg-deb -f "$kdeb" Depends)
case ", $dep," in
*", kdumpinit (= $version),"*) ok "${kdeb##*/}: Depends: kdumpinit (= $version)" ;;
*) bad "${kdeb##*/}: Depends is '$dep', without kdumpinit (= $version)" ;;
esac

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
cp "$deb" "$kdeb" "$mnt/tmp/"

if inroot sh -c "apt-get update -qq && apt-get install -y -qq /tmp/${deb##*/} /tmp/${kdeb##*/}" >"$BUILD/deb-install.log" 2>&1; then
	ok "apt-get install ./${deb##*/} ./${kdeb##*/} in a fresh chroot"
else
	tail -n 20 "$BUILD/deb-install.log"
	bad "apt-get install ./${deb##*/} ./${kdeb##*/} failed"
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
# The stock kernel: the dedicated one is installed, and would be chosen.
disk=$(for d in /sys/block/*; do [ -e "$d/device" ] && echo "${d##*/}"; done | head -n 1)
inroot sed -i 's|^KDUMPINIT_CRASH_KERNEL=.*|KDUMPINIT_CRASH_KERNEL=stock|' /etc/default/kdumpinit
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
inroot sed -i 's|^KDUMPINIT_CRASH_KERNEL=.*|KDUMPINIT_CRASH_KERNEL=auto|' /etc/default/kdumpinit

# The dedicated kernel from its package, as the default (auto) finds it:
# armed as it is, no image. The fake root's /sys is this machine's (links)
# beside its fake reservation, so that the real kdumpinit's dry run
# (arm --dev) checks the installed lists against the disk's real chain;
# only the loading itself is the fake's.
ck=/usr/lib/kdumpinit/crash-kernel
if [ -n "$disk" ]; then
	mkdir -p "$mnt/tmp/fr/sys"
	for e in /sys/*; do [ "$e" = /sys/kernel ] || ln -sfn "$e" "$mnt/tmp/fr$e"; done
	for d in etc usr var boot dev; do ln -sfn "/$d" "$mnt/tmp/fr/$d"; done
	printf '#!/bin/sh\ncase " $* " in *" --dry-run "*) exec /usr/sbin/kdumpinit "$@" ;; esac\necho "$*" >/tmp/fr/arm-args\n' \
		>"$mnt/tmp/fr-kdumpinit2" && chmod +x "$mnt/tmp/fr-kdumpinit2"
	rm -f "$mnt/tmp/fr/arm-args"
	inroot sed -i "s|^KDUMPINIT_DEVICE=.*|KDUMPINIT_DEVICE=/dev/$disk|" /etc/default/kdumpinit
	inroot env KDUMPINIT_ROOT=/tmp/fr KDUMPINIT=/tmp/fr-kdumpinit2 /usr/lib/kdumpinit/kdumpinit-arm >"$BUILD/deb-arm-dedicated.log" 2>&1
	rc=$?
	args=$(cat "$mnt/tmp/fr/arm-args" 2>&1)
	if [ "$rc" = 0 ] && echo "$args" | grep -q "^arm --kernel /tmp/fr$ck --cpus .*kdumpinit.dev=/dev/$disk" &&
		! echo "$args" | grep -q -- --initramfs && ! grep -q 'is not here' "$BUILD/deb-arm-dedicated.log"; then
		ok "kdumpinit-arm arms the packaged $ck (no image; its lists reach /dev/$disk)"
	else
		cat "$BUILD/deb-arm-dedicated.log"
		bad "kdumpinit-arm did not arm the packaged $ck: rc $rc, $args"
	fi
	inroot sed -i "s|^KDUMPINIT_DEVICE=.*|KDUMPINIT_DEVICE=|" /etc/default/kdumpinit
else
	bad "no disk for the dedicated kernel test"
fi
# Its manifest names the kdumpinit inside: the one the other package
# installed (built together, one version).
init=$(sed -n 's/^init //p' "$mnt$ck.manifest" 2>/dev/null)
have=$(sha256sum <"$mnt/usr/sbin/kdumpinit" | cut -d' ' -f1)
[ -n "$init" ] && [ "$init" = "$have" ] && ok "$ck.manifest: the kdumpinit inside is the installed /usr/sbin/kdumpinit" ||
	bad "$ck.manifest names init ${init:-nothing}, the installed kdumpinit is $have"
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

# Purging the kernel's package removes its every file.
files=$(inroot dpkg -L kdumpinit-crash-kernel | while read -r p; do [ -d "$mnt$p" ] || echo "$p"; done)
n=$(echo "$files" | grep -c .)
if inroot apt-get purge -y -qq kdumpinit-crash-kernel >"$BUILD/deb-purge.log" 2>&1; then
	left=$(for p in $files; do [ -e "$mnt$p" ] || [ -L "$mnt$p" ] && echo "$p"; done)
	# Still named by kdumpinit's Suggests, dpkg lists it as not installed.
	st=$(inroot dpkg-query -W -f='${db:Status-Abbrev}' kdumpinit-crash-kernel 2>/dev/null)
	if [ -z "$left" ] && [ "$n" -ge 5 ] && case $st in '' | [up]n*) true ;; *) false ;; esac; then
		ok "purge kdumpinit-crash-kernel removes all $n files"
	else
		bad "purge kdumpinit-crash-kernel left: $left (of $n files), dpkg status '$st'"
	fi
else
	cat "$BUILD/deb-purge.log"
	bad "apt-get purge kdumpinit-crash-kernel failed"
fi

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
