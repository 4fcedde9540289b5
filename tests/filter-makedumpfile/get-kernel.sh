#!/bin/sh
# get-kernel.sh: fetch one of Debian's kernels of the test matrix for the
# e2e and filter tests, without installing it.
#
#   tests/filter-makedumpfile/get-kernel.sh [--print-only] [RELEASE]
#
# RELEASE (default 6.12):
#   6.12  Debian 13's kernel: linux-image-6.12.117+deb13-amd64 (trixie)
#   6.18  the LTS before 7.x: linux-image-6.18.15+deb13-amd64 (trixie-backports)
#   7.3   the newest, packaged the new way (Debian from 6.16): linux-image is
#         a meta package over linux-binary (the image, at
#         /usr/lib/modules/KVER/vmlinuz, no /boot file), linux-modules
#         (.ko.xz) and linux-base (modules.builtin*, modules.order, config);
#         the three are fetched (trixie-backports)
# The packages (108-167 MB) are cached in build/filter/dl, checked against
# tests/filter-makedumpfile/SHA256SUMS, and extracted with dpkg-deb -x into
# build/filter/kernel-KVER/. Then TREE/lib -> usr/lib (the packages are
# /usr-merged), TREE/boot/vmlinuz-KVER where the e2e harness looks (a hard
# link to the image of a new-layout kernel), and modules.dep from `depmod -b
# TREE KVER` (the package's postinst would have run depmod). Prints:
#   KVER=7.3.4+deb13-amd64
#   VMLINUZ=.../build/filter/kernel-KVER/boot/vmlinuz-KVER
#   MODROOT=.../build/filter/kernel-KVER    (modules in MODROOT/lib/modules/KVER)
# A tree whose stamp matches its packages is reused as it is.
set -eu
prog=get-kernel.sh
# shellcheck source=tests/filter-makedumpfile/common.sh
filter_here=$(cd "$(dirname "$0")" && pwd)
. "$filter_here/common.sh"

print_only=0
case ${1:-} in
--print-only) print_only=1; shift ;;
-h | --help) sed -n '2,26p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
esac
release=${1:-6.12}
case $release in
6.12) kver=6.12.117+deb13-amd64 pkgver=6.12.117-1 pkgs=linux-image ;;
6.18) kver=6.18.15+deb13-amd64 pkgver=6.18.15-1~bpo13+1 pkgs=linux-image ;;
7.3) kver=7.3.4+deb13-amd64 pkgver=7.3.4-1~bpo13+1 pkgs='linux-binary linux-modules linux-base' ;;
*) fdie "unknown release: $release (6.12, 6.18 or 7.3)" ;;
esac
tree=$filter_build/kernel-$kver
[ $print_only = 0 ] || [ -f "$tree/.stamp" ] || fdie "no prepared tree in $tree (run without --print-only)"

if [ $print_only = 0 ]; then
	for t in dpkg-deb depmod sha256sum; do
		command -v "$t" >/dev/null || fdie "$t not found (PATH=$PATH; depmod is in /usr/sbin)"
	done
	paths='' stamp=$kver
	for p in $pkgs; do
		deb=$p-${kver}_${pkgver}_amd64.deb
		path=$(fget deb "$p-$kver=$pkgver" "$deb") ||
			fdie "cannot fetch $deb: is $p-$kver=$pkgver still in the archive? (apt-cache policy with the private lists in $filter_build/apt)"
		paths="$paths $path"
		stamp="$stamp $(awk -v f="$deb" '$2 == f { print $1 }' "$filter_sums")"
	done
	if [ "$(cat "$tree/.stamp" 2>/dev/null)" != "$stamp" ]; then
		fsay "EXTRACT $pkgs ($kver) -> $tree"
		rm -rf "$tree" "$tree.tmp"
		mkdir -p "$tree.tmp"
		for path in $paths; do
			dpkg-deb -x "$path" "$tree.tmp" || fdie "dpkg-deb -x $path failed"
		done
		[ -d "$tree.tmp/usr/lib/modules/$kver" ] || fdie "no usr/lib/modules/$kver in $pkgs"
		[ -e "$tree.tmp/lib" ] || ln -s usr/lib "$tree.tmp/lib"
		if [ ! -f "$tree.tmp/boot/vmlinuz-$kver" ]; then
			[ -f "$tree.tmp/usr/lib/modules/$kver/vmlinuz" ] || fdie "no image in $pkgs"
			mkdir -p "$tree.tmp/boot"
			ln "$tree.tmp/usr/lib/modules/$kver/vmlinuz" "$tree.tmp/boot/vmlinuz-$kver"
		fi
		fsay "DEPMOD  -b $tree KVER $kver"
		# modules.dep paths are relative to lib/modules/KVER, so the tree
		# can be renamed before depmod; the stamp is written last.
		mv "$tree.tmp" "$tree"
		depmod -b "$tree" "$kver" || { rm -rf "$tree"; fdie "depmod -b $tree $kver failed"; }
		echo "$stamp" >"$tree/.stamp"
	fi
fi

[ -f "$tree/boot/vmlinuz-$kver" ] || fdie "missing $tree/boot/vmlinuz-$kver"
[ -s "$tree/lib/modules/$kver/modules.dep" ] || fdie "missing $tree/lib/modules/$kver/modules.dep"
echo "KVER=$kver"
echo "VMLINUZ=$tree/boot/vmlinuz-$kver"
echo "MODROOT=$tree"
