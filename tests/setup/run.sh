#!/bin/bash
# The setup suite: deps/setup-host.sh, the step `make demo`, `make check`
# and `make deb` run first, in a fresh Debian 12 chroot (the package test's
# cached base, which has none of the build tools):
#   - as another user with packages missing: exit 1 at once, one line
#     naming the exact command, nothing installed;
#   - as root with packages missing: they are installed (a one-package list);
#   - nothing missing: silent, exit 0, well under a second;
#   - a system that is not Debian-like: it says in words what it needs.
# And on this machine, after `make check`'s own set-up: silent and fast.
set -u
cd "$(dirname "$0")/../.."
. tests/lib/chroot.sh

ms() { date +%s%N | cut -c1-13; }

# On this machine: `make check` has run the set-up already.
t0=$(ms)
out=$(deps/setup-host.sh check 2>&1)
rc=$? t=$(($(ms) - t0))
[ $rc -eq 0 ] && [ -z "$out" ] && [ $t -lt 1000 ] && ok "host: nothing missing: silent, exit 0, $t ms" ||
	bad "host: nothing missing: exit $rc in $t ms, said: $out"

[ "$(id -u)" -eq 0 ] || { bad "setup: the chroot cases need root"; finish; }
base=$BUILD/chroot/bookworm-deb
mnt=$BUILD/chroot/setup-run
chroot_drop "$mnt"
chroot_base "$base" man-db systemd || { bad "chroot: no base system"; finish; }
chroot_fresh "$base" "$mnt" || { bad "chroot: no overlay"; finish; }
trap 'chroot_drop "$mnt"' EXIT
mkdir -p "$mnt/src/deps"
cp deps/setup-host.sh deps/packages "$mnt/src/deps/"
inroot() { DEBIAN_FRONTEND=noninteractive chroot "$mnt" "$@"; }

# Another user, packages missing.
out=$(inroot setpriv --reuid 65534 --regid 65534 --clear-groups sh /src/deps/setup-host.sh demo 2>&1)
rc=$?
lines=$(echo "$out" | grep -c .)
if [ $rc -eq 1 ] && [ "$lines" -eq 1 ] &&
	echo "$out" | grep -q 'run: sudo apt-get install -y .*qemu-system-x86.*linux-image-amd64'; then
	ok "non-root, missing: exit 1, one line naming the command"
else
	bad "non-root, missing: exit $rc, $lines lines: $out"
fi
inroot dpkg-query -W -f='${db:Status-Abbrev}' qemu-system-x86 2>/dev/null | grep -q '^ii' &&
	bad "non-root: something was installed" || ok "non-root: nothing installed"

# Root, missing: a list of one small package the base lacks.
printf '# test list\ncpio    t\n' >"$mnt/tmp/pk"
inroot dpkg-query -W -f='${db:Status-Abbrev}' cpio 2>/dev/null | grep -q '^ii' &&
	bad "root: cpio is in the base already; the case proves nothing"
out=$(inroot env KDUMPINIT_PACKAGES=/tmp/pk sh /src/deps/setup-host.sh t 2>&1)
rc=$?
if [ $rc -eq 0 ] && inroot dpkg-query -W -f='${db:Status-Abbrev}' cpio | grep -q '^ii'; then
	ok "root, missing: installed ($(echo "$out" | tail -n 1))"
else
	bad "root, missing: exit $rc: $out"
fi
t0=$(ms)
out=$(inroot env KDUMPINIT_PACKAGES=/tmp/pk sh /src/deps/setup-host.sh t 2>&1)
rc=$? t=$(($(ms) - t0))
[ $rc -eq 0 ] && [ -z "$out" ] && [ $t -lt 1000 ] && ok "root, nothing missing: silent, exit 0, $t ms" ||
	bad "root, nothing missing: exit $rc in $t ms: $out"

# Not Debian-like.
printf 'ID=fedora\nID_LIKE="rhel centos"\n' >"$mnt/tmp/os-release"
rm -f "$mnt/etc/os-release"
cp "$mnt/tmp/os-release" "$mnt/etc/os-release"
out=$(inroot sh /src/deps/setup-host.sh check 2>&1)
rc=$?
if [ $rc -eq 1 ] && echo "$out" | grep -q 'not a Debian-like system' && echo "$out" | grep -q 'musl-gcc'; then
	ok "not Debian-like: says what it needs, exit 1"
else
	bad "not Debian-like: exit $rc: $out"
fi
finish
