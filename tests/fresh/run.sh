#!/bin/bash
# The fresh-machine test: the README's first commands on a Debian 12 system
# that debootstrap's minbase variant makes, plus only git and make, as root.
#   tests/fresh/run.sh [TARGET...]   (default: demo)
# Each TARGET runs in its own throwaway overlay over the cached base, from a
# git clone of this repository's HEAD (commit first: the clone is what runs),
# and is timed from the clone to the end, its package installs included.
# make check-fresh runs it (make check-full too); it takes some minutes.
set -u
cd "$(dirname "$0")/../.."
. tests/lib/chroot.sh
[ $# -gt 0 ] || set -- demo

[ "$(id -u)" -eq 0 ] || { bad "setup: the fresh-machine test needs root"; finish; }
base=$BUILD/chroot/bookworm-minbase
chroot_base "$base" git make || { bad "chroot: no base system"; finish; }
for target in "$@"; do
	mnt=$BUILD/chroot/fresh-$target
	chroot_drop "$mnt"
	chroot_fresh "$base" "$mnt" || { bad "chroot: no overlay"; continue; }
	log=$BUILD/fresh-$target.log
	t0=$(date +%s)
	git clone -q "$top" "$mnt/root/kdumpinit"
	DEBIAN_FRONTEND= chroot "$mnt" env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root TERM=dumb \
		make -C /root/kdumpinit "$target" >"$log" 2>&1
	rc=$? t=$(($(date +%s) - t0))
	tail -n 5 "$log" | sed 's/^/   /'
	if [ $rc -eq 0 ] && grep -qE '^[0-9]+ passed, 0 failed' "$log"; then
		ok "fresh machine: make $target, $t s from the clone (log: $log)"
	else
		bad "fresh machine: make $target exited $rc after $t s (log: $log)"
	fi
	chroot_drop "$mnt"
done
finish
