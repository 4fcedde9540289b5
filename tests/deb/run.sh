#!/bin/bash
# The package suite: `make deb` builds kdumpinit_VERSION_amd64.deb; lintian
# finds no error; in a fresh Debian 12 chroot (debootstrap minbase, cached
# under $BUILD/chroot) `apt-get install ./kdumpinit_*.deb` works, and then
#   kdumpinit --version, man -l on both pages, systemd-analyze verify on the
#   units, the conffile, the installed mkinitramfs packing the installed
#   binary, kdumpinit-arm building an image, the kernel hook exiting 0; and
#   purge leaves none of the package's files (nor /var/lib/kdumpinit) behind.
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
sed 's|^ExecStart=/usr/sbin/kdumpinit |ExecStart=/usr/sbin/kdumpinit-gone |' "$mnt$unit" >"$mnt/tmp/broken-save.service"
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
# The boot-time script builds an image (no modules: the chroot has none),
# and the kernel hook never fails an installation.
kv=$(uname -r)
if inroot sh -c "sed -i 's/^KDUMPINIT_MODULES=.*/KDUMPINIT_MODULES=/' /etc/default/kdumpinit &&
	/usr/lib/kdumpinit/kdumpinit-arm --build-only --kver $kv --kernel /usr/sbin/kdumpinit" >"$BUILD/deb-arm.log" 2>&1 &&
	[ -s "$mnt/var/lib/kdumpinit/initrd-$kv.img" ]; then
	ok "kdumpinit-arm --build-only builds /var/lib/kdumpinit/initrd-$kv.img"
else
	cat "$BUILD/deb-arm.log"
	bad "kdumpinit-arm --build-only built no image"
fi
inroot /etc/kernel/postinst.d/kdumpinit 9.9.9-none /boot/vmlinuz-9.9.9-none >"$BUILD/deb-hook.log" 2>&1 &&
	ok "the kernel postinst.d hook exits 0 for a kernel it cannot build for" ||
	bad "the kernel postinst.d hook failed: $(cat "$BUILD/deb-hook.log")"

conf=$(inroot dpkg-query -W -f='${Conffiles}' kdumpinit)
echo "$conf" | grep -q '^ /etc/default/kdumpinit ' && ok "/etc/default/kdumpinit is a conffile" ||
	bad "/etc/default/kdumpinit is not a conffile: $conf"

# The installed mkinitramfs packs the installed binary as /init.
if inroot kdumpinit-mkinitramfs -k "$(uname -r)" -o /tmp/i.img >"$BUILD/deb-mkinit.log" 2>&1 &&
	(cd "$mnt/tmp" && mkdir -p i && cd i && cpio -id --quiet <../i.img) &&
	cmp -s "$mnt/tmp/i/init" "$mnt/usr/sbin/kdumpinit"; then
	ok "kdumpinit-mkinitramfs packs /usr/sbin/kdumpinit as /init"
else
	cat "$BUILD/deb-mkinit.log"
	bad "kdumpinit-mkinitramfs did not pack /usr/sbin/kdumpinit"
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
