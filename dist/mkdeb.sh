#!/bin/sh
# mkdeb.sh: make deb. Builds kdumpinit_$VERSION_amd64.deb and
# kdumpinit-crash-kernel_$VERSION_amd64.deb into $BUILD/ with
# dpkg-buildpackage, from a copy of the source tree in $BUILD/deb/ (the
# tools write beside the source directory, and must not touch this one).
# The crash kernel comes from this machine's cache of it, as `make
# crash-kernel` finds it: debhelper gives the build its own HOME, so the
# cache is named.
set -eu
top=$(pwd)
BUILD=${BUILD:-build}
case $BUILD in /*) ;; *) BUILD=$top/$BUILD ;; esac
: "${VERSION:?}"
cl=$(dpkg-parsechangelog -l debian/changelog -S Version)
[ "$cl" = "$VERSION" ] || { echo "mkdeb: debian/changelog says $cl, the Makefile $VERSION" >&2; exit 1; }

work=$BUILD/deb
src=$work/kdumpinit-$VERSION
rm -rf "$work"
mkdir -p "$src"
# The files git knows (tracked, or new and not ignored); without git, the
# tree without build/.
if git -C "$top" rev-parse --git-dir >/dev/null 2>&1; then
	git -C "$top" ls-files -z -c -o --exclude-standard | (cd "$top" && xargs -0 tar -cf - --no-recursion) | tar -xf - -C "$src"
else
	tar -C "$top" --exclude=./build --exclude=./.git -cf - . | tar -xf - -C "$src"
fi
echo "  DEB     $src"
cache=${KDUMPINIT_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/kdumpinit}
case $cache in /*) ;; *) cache=$top/$cache ;; esac
(cd "$src" && KDUMPINIT_DEPS=$BUILD/deps KDUMPINIT_CACHE=$cache dpkg-buildpackage -us -uc -b >"$work/build.log" 2>&1) || {
	tail -n 40 "$work/build.log" >&2
	echo "mkdeb: dpkg-buildpackage failed (log: $work/build.log)" >&2
	exit 1
}
for pkg in kdumpinit kdumpinit-crash-kernel; do
	deb=${pkg}_${VERSION}_amd64.deb
	mv "$work/$deb" "$BUILD/$deb"
	echo "  DEB     $BUILD/$deb"
done
