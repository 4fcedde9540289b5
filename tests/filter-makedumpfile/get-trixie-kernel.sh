#!/bin/sh
# get-trixie-kernel.sh: fetch Debian 13's 6.12 kernel for the e2e and filter
# tests, without installing it.
#
#   tests/filter-makedumpfile/get-trixie-kernel.sh [--print-only]
#
# Downloads the pinned linux-image .deb (about 108 MB, cached in
# build/filter/dl and checked against tests/filter-makedumpfile/SHA256SUMS), extracts it
# with dpkg-deb -x into build/filter/trixie/ and prepares the module tree
# for modprobe: trixie's package is /usr-merged, so TREE/lib -> usr/lib, and
# modules.dep comes from `depmod -b TREE KVER` (the package's postinst would
# have run depmod). Then prints, one per line:
#   KVER=6.12.117+deb13-amd64
#   VMLINUZ=.../build/filter/trixie/boot/vmlinuz-KVER
#   MODROOT=.../build/filter/trixie    (modules in MODROOT/lib/modules/KVER)
# An extracted tree whose stamp matches the .deb is reused as it is.
#
# Environment: TRIXIE_KVER and TRIXIE_KPKGVER choose another kernel (then
# pin its .deb in SHA256SUMS first).
set -eu
prog=get-trixie-kernel.sh
# shellcheck source=tests/filter-makedumpfile/common.sh
filter_here=$(cd "$(dirname "$0")" && pwd)
. "$filter_here/common.sh"

kver=${TRIXIE_KVER:-6.12.117+deb13-amd64}
pkgver=${TRIXIE_KPKGVER:-6.12.117-1}
deb=linux-image-${kver}_${pkgver}_amd64.deb
# Another kernel gets a tree of its own (6.12 and 6.18 may both be wanted).
tree=$filter_build/trixie${TRIXIE_KVER:+-$kver}

case ${1:-} in
'') ;;
--print-only) [ -f "$tree/.stamp" ] || fdie "no prepared tree in $tree (run without --print-only)" ;;
-h | --help) sed -n '2,20p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
*) fdie "unknown argument: $1" ;;
esac

if [ "${1:-}" != --print-only ]; then
	for t in dpkg-deb depmod sha256sum; do
		command -v "$t" >/dev/null || fdie "$t not found (PATH=$PATH; depmod is in /usr/sbin)"
	done
	path=$(fget deb "linux-image-$kver=$pkgver" "$deb") ||
		fdie "cannot fetch $deb: is linux-image-$kver=$pkgver still in trixie? (apt-cache policy with the private lists in $filter_build/apt)"
	stamp="$kver $(awk -v f="$deb" '$2 == f { print $1 }' "$filter_sums")"
	if [ "$(cat "$tree/.stamp" 2>/dev/null)" != "$stamp" ]; then
		fsay "EXTRACT $deb -> $tree"
		rm -rf "$tree" "$tree.tmp"
		mkdir -p "$tree.tmp"
		dpkg-deb -x "$path" "$tree.tmp" || fdie "dpkg-deb -x $path failed"
		[ -d "$tree.tmp/usr/lib/modules/$kver" ] || fdie "$deb has no usr/lib/modules/$kver"
		[ -e "$tree.tmp/lib" ] || ln -s usr/lib "$tree.tmp/lib"
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
