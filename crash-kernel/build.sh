#!/bin/sh
# crash-kernel/build.sh: the dedicated crash kernel (make crash-kernel).
#
#   crash-kernel/build.sh ARCH KDUMPINIT OUTDIR
#
# Builds Debian's linux-source (pinned below) for ARCH (x86_64 or arm64)
# from `make tinyconfig` plus common.config and ARCH.config, with the
# static binary KDUMPINIT embedded as /init of its initramfs, and leaves
# in OUTDIR:
#   vmlinuz (x86_64 bzImage) or Image (arm64)   the crash kernel, one file
#   config                                      its .config
#   release                                     its `uname -r`
#   built-using                                 the Debian source package and
#       version it was built from, "linux (= VERSION)", as the pinned .deb's
#       own control fields name them (the package's Built-Using)
#   NAME.config, NAME.modules.builtin, NAME.modules.builtin.modinfo
#       what is built in (it has no modules): installed beside it, for
#       kdumpinit arm --dev to check that it reaches the dump device
#
# The build is slow (minutes on two cores), so it is cached per machine,
# keyed by the source package's sha256, both fragments, this script and
# the compiler: $KDUMPINIT_CACHE (default ~/.cache/kdumpinit)/crash-kernel/.
# A new kdumpinit only relinks the kernel (its initramfs is the only
# input that changed). A fresh clone on the same machine reuses the cache;
# the first build anywhere fetches 167 MB and compiles everything.
set -eu
export LC_ALL=C
prog=crash-kernel
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/.." && pwd)

die() { echo "$prog: error: $*" >&2; exit 1; }
say() { echo "  $*"; }

[ $# -eq 3 ] || die "usage: crash-kernel/build.sh x86_64|arm64 KDUMPINIT OUTDIR"
arch=$1 binary=$2 out=$3

# The source: Debian's package of the newest kernel the archive carries
# (pinned in deps/SHA256SUMS like the other sources).
src_pkg=linux-source-7.3=7.3.4-1~bpo13+1
src_deb=linux-source-7.3_7.3.4-1~bpo13+1_all.deb
src_tar=usr/src/linux-source-7.3.tar.xz

case $arch in
x86_64) karch=x86_64 target=bzImage image=arch/x86/boot/bzImage name=vmlinuz cross='' ;;
arm64) karch=arm64 target=Image image=arch/arm64/boot/Image name=Image cross=aarch64-linux-gnu- ;;
*) die "ARCH=$arch: the crash kernel builds for x86_64 and arm64" ;;
esac
[ -x "$binary" ] || die "$binary: no kdumpinit binary to embed (make it first)"
for t in flex bison bc "${cross}gcc" xz sha256sum flock; do
	command -v "$t" >/dev/null || die "$t not found: install it (deps/setup-host.sh crash-kernel)"
done

cache=${KDUMPINIT_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/kdumpinit}/crash-kernel
mkdir -p "$cache" "$out" || die "cannot create $cache or $out"
cache=$(cd "$cache" && pwd)
out=$(cd "$out" && pwd)
binary=$(cd "$(dirname "$binary")" && pwd)/$(basename "$binary")

# One build at a time per cache (two clones building at once share it).
exec 9>"$cache/lock"
flock 9

# The key: everything but kdumpinit that decides the kernel's objects.
# recipe: raise it when a change here changes how the kernel is built
# (not for comments: the script itself is not hashed, so editing it does
# not cost a rebuild from scratch).
recipe=1
src_sum=$(awk -v f="$src_deb" '$2 == f { print $1 }' "$top/deps/SHA256SUMS")
[ -n "$src_sum" ] || die "$src_deb has no pinned sum in deps/SHA256SUMS"
key=$({ echo "$src_sum recipe $recipe"; cat "$here/common.config" "$here/$arch.config";
	"${cross}gcc" --version | head -n 1; } | sha256sum | cut -c1-16)
src=$cache/src-${src_sum%"${src_sum#????????????????}"}
obj=$cache/$arch-$key

# --- the source tree (shared by both architectures) ---
fetch_src() {
	"$top/deps/fetch.sh" debs "$cache" amd64@trixie-backports "$src_pkg" "$src_deb" ||
		die "cannot fetch $src_deb"
}
# The source package the .deb was built from, by its control fields
# (${source:Version} drops a binNMU's +bN, as Built-Using wants).
built_using() {
	# shellcheck disable=SC2016 # dpkg's field names, not the shell's
	dpkg-deb -W --showformat='${source:Package} (= ${source:Version})\n' "$cache/dl/$src_deb" >"$1.tmp" ||
		die "$src_deb: its control fields cannot be read"
	grep -q '^linux (= ' "$1.tmp" || die "$src_deb: its control fields name no linux source package"
	mv "$1.tmp" "$1"
}
if [ ! -f "$src/.done" ]; then
	fetch_src
	say "UNPACK  $src_deb -> $src"
	rm -rf "$src" "$src.tmp"
	mkdir -p "$src.tmp"
	dpkg-deb --fsys-tarfile "$cache/dl/$src_deb" | tar -xO "./$src_tar" |
		tar -xJ -C "$src.tmp" --strip-components=1 || die "cannot unpack $src_deb"
	built_using "$src.tmp/.built-using"
	mv "$src.tmp" "$src"
	: >"$src/.done"
	rm -f "$cache/dl/$src_deb"	# the tree is what is kept
elif [ ! -s "$src/.built-using" ]; then
	# A tree unpacked before this record was kept: its .deb once more.
	fetch_src
	built_using "$src/.built-using"
	rm -f "$cache/dl/$src_deb"
fi

# No Rust in this kernel, and no rustc asked: kconfig would write the
# version of whatever rustc it finds into .config (rustup's proxy finds
# none under the package build's own HOME), so the .config installed, and
# the cache's, would change with the environment.
kmake() {
	make -C "$src" O="$obj" ARCH="$karch" ${cross:+CROSS_COMPILE=$cross} RUSTC=false "$@"
}

# --- the configuration, once per key ---
# Lines of the fragments as kconfig writes them in .config.
# An architecture's fragment may override a common line: the last
# assignment of each symbol is the one wanted.
want() {
	grep -h '^CONFIG_' "$here/common.config" "$here/$arch.config" |
		awk -F= '{ v[$1] = $0; if (!($1 in o)) { o[$1] = n++; k[n - 1] = $1 } }
			END { for (i = 0; i < n; i++) print v[k[i]] }' |
		sed -e 's/^\(CONFIG_[A-Za-z0-9_]*\)=n$/# \1 is not set/'
}
if [ ! -f "$obj/.config-done" ]; then
	say "CONFIG  tinyconfig + common.config + $arch.config -> $obj"
	rm -rf "$obj"
	mkdir -p "$obj"
	kmake -s tinyconfig >"$obj/config.log" 2>&1 || { cat "$obj/config.log" >&2; die "make tinyconfig failed"; }
	{ cat "$here/common.config" "$here/$arch.config"
	  echo "CONFIG_INITRAMFS_SOURCE=\"$obj/initramfs.list\""; } >>"$obj/.config"
	kmake -s olddefconfig >>"$obj/config.log" 2>&1 || { cat "$obj/config.log" >&2; die "make olddefconfig failed"; }
	# An option kconfig dropped (unmet dependency, renamed) is an error:
	# the kernel would build without what the fragment promised.
	lost=$(want | while IFS= read -r l; do
		case $l in
		"# "*) sym=${l#\# }; sym=${sym%% *}
			grep -q "^$sym=" "$obj/.config" && echo "$l" ;;
		*) grep -qxF "$l" "$obj/.config" || echo "$l" ;;
		esac
	done)
	[ -z "$lost" ] || die "kconfig did not keep these fragment lines (unmet dependency or renamed):
$lost"
	: >"$obj/.config-done"
fi
# A cache copied or moved elsewhere keeps its .config, whose initramfs
# list would still be the old place's (and embed whatever binary is
# there): it names this tree's own.
ramfs="CONFIG_INITRAMFS_SOURCE=\"$obj/initramfs.list\""
grep -qxF "$ramfs" "$obj/.config" ||
	sed -i "s|^CONFIG_INITRAMFS_SOURCE=.*|$ramfs|" "$obj/.config"

# --- the embedded initramfs: kdumpinit as /init ---
# Copied into the object tree (a fixed path the .config names), and only
# when it differs, so an unchanged binary does not relink.
if ! cmp -s "$binary" "$obj/kdumpinit.init"; then
	cp "$binary" "$obj/kdumpinit.init.tmp" && mv "$obj/kdumpinit.init.tmp" "$obj/kdumpinit.init"
fi
cat >"$obj/initramfs.list.tmp" <<EOF
dir /dev 0755 0 0
nod /dev/console 0600 0 0 c 5 1
dir /proc 0755 0 0
dir /sys 0755 0 0
dir /etc 0755 0 0
dir /tmp 1777 0 0
file /init $obj/kdumpinit.init 0755 0 0
EOF
cmp -s "$obj/initramfs.list.tmp" "$obj/initramfs.list" 2>/dev/null &&
	rm "$obj/initramfs.list.tmp" || mv "$obj/initramfs.list.tmp" "$obj/initramfs.list"

# --- the build ---
# The image is current when the tree (this key) last built it from the same
# kdumpinit, initramfs list and .config: then kbuild's walk, which only
# finds nothing to do, is skipped (7 s on two idle cores, a minute on
# loaded ones; make check and make deb would each pay it).
inputs() { cat "$obj/kdumpinit.init" "$obj/initramfs.list" "$obj/.config" | sha256sum | cut -d' ' -f1; }
jobs=$(nproc 2>/dev/null || echo 2)
start=$(date +%s)
if [ -f "$obj/$image" ] && [ "$(cat "$obj/.built-from" 2>/dev/null)" = "$(inputs)" ]; then
	say "KERNEL  $arch $target: current (built from this kdumpinit and .config)"
	echo "current: built from this kdumpinit, initramfs list and .config" >"$out/build.log"
else
	rm -f "$obj/.built-from"
	say "KERNEL  $arch $target (linux-source 7.3.4, -j$jobs; log $out/build.log)"
	kmake -j"$jobs" "$target" >"$out/build.log" 2>&1 || { tail -n 40 "$out/build.log" >&2; die "the kernel build failed (whole log: $out/build.log)"; }
	# After the build: kbuild may have rewritten .config (syncconfig).
	inputs >"$obj/.built-from"
fi
secs=$(($(date +%s) - start))
cp "$obj/$image" "$out/$name.tmp" && mv "$out/$name.tmp" "$out/$name"
cp "$obj/.config" "$out/config"
# Its drivers, all built in: kbuild writes both lists from vmlinux.o's
# .modinfo (scripts/Makefile.vmlinux_o) even without CONFIG_MODULES.
for f in .config modules.builtin modules.builtin.modinfo; do
	[ -f "$obj/$f" ] || die "$obj/$f: the kernel build did not write it"
	cp "$obj/$f" "$out/$name.${f#.}"
done
# What it carries, for kdumpinit status (installed beside it): the
# embedded binary's sha256, so that a kdumpinit upgrade shows this kernel
# stale.
{ echo "# kdumpinit's dedicated crash kernel: what it was built with"
  echo "init $(sha256sum <"$obj/kdumpinit.init" | cut -d' ' -f1)"
  echo "source $src_deb"; } >"$out/$name.manifest"
kmake -s kernelrelease >"$out/release"
cp "$src/.built-using" "$out/built-using"
# Older trees of this architecture (another key) are not used again:
# each is hundreds of MB.
for d in "$cache/$arch"-*; do
	[ "$d" = "$obj" ] || [ ! -d "$d" ] || rm -rf "$d"
done
size=$(stat -c %s "$out/$name")
say "KERNEL  $out/$name: $size bytes, release $(cat "$out/release"), built in ${secs} s"
