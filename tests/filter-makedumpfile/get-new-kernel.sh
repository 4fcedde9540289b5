#!/bin/sh
# get-new-kernel.sh: fetch the newest Debian kernel of the test matrix (7.3
# from trixie-backports) for the e2e and filter tests, without installing it.
#
#   tests/filter-makedumpfile/get-new-kernel.sh [--print-only]
#
# Debian's kernels from 6.16 are packaged the new way: linux-image-KVER is a
# meta package over linux-binary-KVER (the image, at
# /usr/lib/modules/KVER/vmlinuz, no /boot file), linux-modules-KVER (.ko.xz)
# and linux-base-KVER (modules.builtin*, modules.order, config). All three
# are fetched (about 122 MB, cached in build/filter/dl, checked against
# tests/filter-makedumpfile/SHA256SUMS) and extracted with dpkg-deb -x into
# build/filter/new-KVER/; then TREE/lib -> usr/lib, TREE/boot/vmlinuz-KVER
# (a hard link to the image, where the e2e harness looks), and modules.dep
# from `depmod -b TREE KVER`. Prints, one per line:
#   KVER=7.3.4+deb13-amd64
#   VMLINUZ=.../build/filter/new-KVER/boot/vmlinuz-KVER
#   MODROOT=.../build/filter/new-KVER    (modules in MODROOT/lib/modules/KVER)
# A tree whose stamp matches the three .debs is reused as it is.
#
# Environment: NEW_KVER and NEW_KPKGVER choose another kernel packaged the
# new way (pin its three .debs in SHA256SUMS first).
set -eu
prog=get-new-kernel.sh
# shellcheck source=tests/filter-makedumpfile/common.sh
filter_here=$(cd "$(dirname "$0")" && pwd)
. "$filter_here/common.sh"

kver=${NEW_KVER:-7.3.4+deb13-amd64}
pkgver=${NEW_KPKGVER:-7.3.4-1~bpo13+1}
tree=$filter_build/new-$kver

case ${1:-} in
'') ;;
--print-only) [ -f "$tree/.stamp" ] || fdie "no prepared tree in $tree (run without --print-only)" ;;
-h | --help) sed -n '2,22p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
*) fdie "unknown argument: $1" ;;
esac

if [ "${1:-}" != --print-only ]; then
	for t in dpkg-deb depmod sha256sum; do
		command -v "$t" >/dev/null || fdie "$t not found (PATH=$PATH; depmod is in /usr/sbin)"
	done
	paths='' stamp=$kver
	for p in linux-binary linux-modules linux-base; do
		deb=$p-${kver}_${pkgver}_amd64.deb
		path=$(fget deb "$p-$kver=$pkgver" "$deb") ||
			fdie "cannot fetch $deb: is $p-$kver=$pkgver still in trixie-backports?"
		paths="$paths $path"
		stamp="$stamp $(awk -v f="$deb" '$2 == f { print $1 }' "$filter_sums")"
	done
	if [ "$(cat "$tree/.stamp" 2>/dev/null)" != "$stamp" ]; then
		fsay "EXTRACT linux-{binary,modules,base}-$kver -> $tree"
		rm -rf "$tree" "$tree.tmp"
		mkdir -p "$tree.tmp"
		for path in $paths; do
			dpkg-deb -x "$path" "$tree.tmp" || fdie "dpkg-deb -x $path failed"
		done
		[ -f "$tree.tmp/usr/lib/modules/$kver/vmlinuz" ] || fdie "no usr/lib/modules/$kver/vmlinuz in linux-binary-$kver"
		[ -e "$tree.tmp/lib" ] || ln -s usr/lib "$tree.tmp/lib"
		mkdir -p "$tree.tmp/boot"
		ln "$tree.tmp/usr/lib/modules/$kver/vmlinuz" "$tree.tmp/boot/vmlinuz-$kver"
		fsay "DEPMOD  -b $tree KVER $kver"
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
