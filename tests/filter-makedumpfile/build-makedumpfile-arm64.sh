#!/bin/sh
# build-makedumpfile-arm64.sh: upstream makedumpfile as an arm64 program, the
# reference for the arm64 filter comparison (tests/e2e-arm64/run.sh), in
# build/filter/arm64/ (never committed, never installed).
#
#   tests/filter-makedumpfile/build-makedumpfile-arm64.sh [--from auto|source|binary] [--force]
#
# Leaves build/filter/arm64/makedumpfile, a wrapper that runs the aarch64
# makedumpfile 1.7.8 under qemu-aarch64-static -L build/filter/arm64/root
# (its glibc and libraries), and prints
#   makedumpfile-arm64=PATH (source|binary: makedumpfile: version 1.7.8 ...)
# A result whose stamp matches is reused.
#
# Why 1.7.8 (not Debian 12's 1.7.2, which the x86_64 6.1 runs also pass
# with): it is the project's reference (build-makedumpfile.sh says why:
# Linux 6.12's typed pages), and on arm64 it also reads 52-bit VA and LPA2
# kernels (Debian 13's 6.12 under -cpu max), which 1.7.2 refuses.
#
# --from source (what auto tries first): the same pinned .orig tarball as
#   the x86_64 build (SHA256SUMS), cross-compiled with Debian's
#   aarch64-linux-gnu-gcc (gcc-aarch64-linux-gnu) against a sysroot of
#   Debian 12's arm64 packages: libc6(-dev), libelf(-dev), libdw(-dev),
#   zlib1g(-dev), libbz2(-dev), liblzma5, libzstd1. The kernel uapi headers
#   are the installed linux-libc-dev-arm64-cross. `make LINKTYPE=dynamic`,
#   LZO, snappy and zstd off (as for x86_64: only the page filter matters).
#   The tarball comes from apt-get source (sid), or MAKEDUMPFILE_SRC=
#     TARBALL   checked against the pin;
#     GITREPO   an upstream clone holding tag 1.7.8: `git archive --prefix=
#               makedumpfile-1.7.8/ 1.7.8 | gzip -n` reproduces the pinned
#               .orig byte for byte, so it is made that way and checked;
#     DIR       a source tree, used as it is (stamped by its path).
# --from binary (auto's fallback): sid's makedumpfile_1.7.8-1_arm64.deb,
#   which needs glibc >= 2.38: its root gets trixie's arm64 libc6 2.41
#   instead of bookworm's, the other libraries stay Debian 12's.
# The .debs come through a private apt configuration in build/filter/
# apt-arm64 (arm64 its only architecture), so dpkg's architectures and
# /etc/apt are not touched. Every download is checked against
# tests/filter-makedumpfile/SHA256SUMS.
set -eu
prog=build-makedumpfile-arm64.sh
# shellcheck source=tests/filter-makedumpfile/common.sh
filter_here=$(cd "$(dirname "$0")" && pwd)
. "$filter_here/common.sh"

ver=1.7.8
debver=1:$ver-1
orig=makedumpfile_$ver.orig.tar.gz
cross=${ARM64_CROSS:-aarch64-linux-gnu-}
uapi=/usr/${cross%-}/include
# PKG=VERSION FILE of the sysroot (Debian 12, arm64). The runtime
# libraries are the very files tests/e2e-arm64/packages pins for the guest.
sysroot_debs="
libc6=2.36-9+deb12u14 libc6_2.36-9+deb12u14_arm64.deb
libc6-dev=2.36-9+deb12u14 libc6-dev_2.36-9+deb12u14_arm64.deb
libelf1=0.188-2.1 libelf1_0.188-2.1_arm64.deb
libelf-dev=0.188-2.1 libelf-dev_0.188-2.1_arm64.deb
libdw1=0.188-2.1 libdw1_0.188-2.1_arm64.deb
libdw-dev=0.188-2.1 libdw-dev_0.188-2.1_arm64.deb
zlib1g=1:1.2.13.dfsg-1 zlib1g_1%3a1.2.13.dfsg-1_arm64.deb
zlib1g-dev=1:1.2.13.dfsg-1 zlib1g-dev_1%3a1.2.13.dfsg-1_arm64.deb
libbz2-1.0=1.0.8-5+b1 libbz2-1.0_1.0.8-5+b1_arm64.deb
libbz2-dev=1.0.8-5+b1 libbz2-dev_1.0.8-5+b1_arm64.deb
liblzma5=5.4.1-1+deb12u1 liblzma5_5.4.1-1+deb12u1_arm64.deb
libzstd1=1.5.4+dfsg2-5 libzstd1_1.5.4+dfsg2-5_arm64.deb
"
# --from binary: the package and the glibc it needs (trixie), plus the
# runtime libraries above without bookworm's libc6; liblzo2-2 it links too.
bin_debs="
makedumpfile=$debver makedumpfile_1%3a$ver-1_arm64.deb
libc6=2.41-12+deb13u5 libc6_2.41-12+deb13u5_arm64.deb
liblzo2-2=2.10-2 liblzo2-2_2.10-2_arm64.deb
"

from=auto force=0
while [ $# -gt 0 ]; do
	case $1 in
	--from) [ $# -ge 2 ] || fdie "--from needs a value"; from=$2; shift ;;
	--force) force=1 ;;
	-h | --help) sed -n '2,39p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
	*) fdie "unknown argument: $1" ;;
	esac
	shift
done
case $from in auto | source | binary) ;; *) fdie "--from takes auto, source or binary" ;; esac

a64=$filter_build/arm64
out=$a64/makedumpfile
mkdir -p "$a64" "$filter_build/dl"
qemu_user=$(command -v qemu-aarch64-static || command -v qemu-aarch64 || true)
[ -n "$qemu_user" ] || fdie "qemu-aarch64-static not found (apt-get install qemu-user-static)"

pinned() { awk -v f="$1" '$2 == f { print $1 }' "$filter_sums"; }

# aapt ARG...: apt-get on the private arm64 configuration (bookworm, trixie
# and sid; arm64 the only architecture).
aapt() {
	apt-get -q -c "$a64_apt/apt.conf" -o Dir::Etc::SourceList="$a64_apt/sources.list" \
		-o Dir::Etc::SourceParts=/dev/null -o Dir::State::Lists="$a64_apt/lists" \
		-o Dir::Cache="$a64_apt/cache" -o APT::Sandbox::User=root \
		-o APT::Architecture=arm64 -o APT::Architectures::=arm64 "$@"
}
aapt_ready() {
	[ -z "${a64_apt_ok:-}" ] || return 0
	[ -r "$filter_keyring" ] || fdie "$filter_keyring missing (apt-get install debian-archive-keyring)"
	a64_apt=$filter_build/apt-arm64
	mkdir -p "$a64_apt/lists/partial" "$a64_apt/cache/archives/partial"
	for s in bookworm trixie sid; do
		echo "deb [arch=arm64 signed-by=$filter_keyring] $filter_mirror $s main"
	done >"$a64_apt/sources.list"
	# As in common.sh: the pinned sha256 decides, not the Release's date.
	printf '%s\n' '#clear APT::Update::Post-Invoke;' '#clear APT::Update::Post-Invoke-Success;' \
		'Acquire::Check-Valid-Until "false";' >"$a64_apt/apt.conf"
	if [ -z "$(find "$a64_apt/lists" -maxdepth 1 -name '*sid_InRelease' -mmin -1440 2>/dev/null)" ] ||
		[ "$(cat "$a64_apt/sources.list")" != "$(cat "$a64_apt/sources.list.done" 2>/dev/null)" ]; then
		fsay "FETCH   apt-get update (arm64, private lists in $a64_apt)"
		aapt update >"$a64_apt/update.log" 2>&1 || { cat "$a64_apt/update.log" >&2; fdie "apt-get update failed"; }
		cp "$a64_apt/sources.list" "$a64_apt/sources.list.done"
	fi
	a64_apt_ok=1
}
# aget PKG=VERSION FILE: FILE in build/filter/dl, checked against the pin
# (a cached copy that checks out is kept). Prints the path.
aget() {
	_f=$filter_build/dl/$2
	if [ -f "$_f" ]; then
		fverify "$_f" && { echo "$_f"; return 0; }
		rm -f "$_f"
	fi
	aapt_ready
	fsay "FETCH   $1 (arm64) -> $_f"
	_tmp=$filter_build/dl/partial-arm64.$$
	rm -rf "$_tmp" && mkdir -p "$_tmp"
	_rc=0
	(cd "$_tmp" && aapt download "${1%%=*}:arm64=${1#*=}") >"$filter_build/dl/fetch-arm64.log" 2>&1 || _rc=$?
	if [ $_rc != 0 ] || [ ! -f "$_tmp/$2" ]; then
		grep -E '^(E|W):' "$filter_build/dl/fetch-arm64.log" | head -n 5 | sed 's/^/    /' >&2
		rm -rf "$_tmp"
		fdie "apt-get could not fetch $1 ($2)"
	fi
	fverify "$_tmp/$2" || { rm -rf "$_tmp"; fdie "$2 does not match its pinned sha256"; }
	mv "$_tmp/$2" "$_f" && rm -rf "$_tmp"
	echo "$_f"
}
# make_root DIR "PKG FILE ...": a fresh DIR holding the packages' files.
make_root() {
	rm -rf "$1" "$1.tmp" && mkdir -p "$1.tmp"
	# A here-document, not a pipe: fdie must end the script, not a subshell.
	while read -r p f; do
		[ -n "$p" ] || continue
		d=$(aget "$p" "$f") || exit 1
		dpkg-deb -x "$d" "$1.tmp" || fdie "dpkg-deb -x $f failed"
	done <<EOF
$2
EOF
	mv "$1.tmp" "$1"
}
# debs_stamp "PKG FILE ...": the pinned sums of those files, one word.
debs_stamp() {
	echo "$1" | while read -r p f; do [ -z "$p" ] || pinned "$f"; done | sha256sum | cut -c1-16
}

# write_wrapper ROOT BIN: $out runs BIN under qemu-user with ROOT as its /.
write_wrapper() {
	{
		echo '#!/bin/sh'
		echo "# Generated by tests/filter-makedumpfile/build-makedumpfile-arm64.sh:"
		echo "# aarch64 makedumpfile $ver under qemu-user, its libraries from $1."
		echo "exec \"$qemu_user\" -L \"$1\" \"$2\" \"\$@\""
	} >"$out.tmp"
	chmod 755 "$out.tmp"
	mv "$out.tmp" "$out"
}

# source_tarball: the path of the pinned .orig (or of a source DIR).
source_tarball() {
	src=${MAKEDUMPFILE_SRC:-}
	if [ -n "$src" ] && git -C "$src" rev-parse -q --verify "refs/tags/$ver" >/dev/null 2>&1; then
		t=$filter_build/dl/$orig
		if ! [ -f "$t" ] || ! fverify "$t" 2>/dev/null; then
			fsay "ARCHIVE tag $ver of $src -> $t"
			git -C "$src" archive --format=tar --prefix="makedumpfile-$ver/" "$ver" | gzip -n >"$t.tmp"
			fverify "$t.tmp" || { rm -f "$t.tmp"; fdie "git archive of $src's $ver is not the pinned $orig"; }
			mv "$t.tmp" "$t"
		fi
		echo "$t"
	elif [ -n "$src" ]; then
		echo "$src"
	else
		fget src "makedumpfile=$debver" "$orig"
	fi
}

from_source() {
	src=$(source_tarball) || return 1
	for t in make "${cross}gcc"; do command -v "$t" >/dev/null || fdie "$t not found (deps/packages, group arm64)"; done
	[ -f "$uapi/linux/types.h" ] || fdie "$uapi/linux/types.h missing: apt-get install linux-libc-dev-arm64-cross"
	if [ -d "$src" ]; then
		sstamp="dir:$src"
	else
		[ "$(sha256sum "$src" | cut -d' ' -f1)" = "$(pinned "$orig")" ] ||
			fdie "$src does not match the sha256 pinned for $orig"
		sstamp=$(pinned "$orig")
	fi
	stamp="source $ver $sstamp sysroot $(debs_stamp "$sysroot_debs")"
	if [ $force = 0 ] && [ -x "$out" ] && [ "$(cat "$out.stamp" 2>/dev/null)" = "$stamp" ]; then
		return 0
	fi
	root=$a64/root
	fsay "SYSROOT Debian 12 arm64 libc6, libelf, libdw, zlib, bzip2, xz, zstd -> $root"
	make_root "$root" "$sysroot_debs"
	tree=$a64/src/makedumpfile-$ver
	rm -rf "$tree" "$tree.tmp" && mkdir -p "$tree.tmp"
	if [ -d "$src" ]; then
		cp -R "$src/." "$tree.tmp/"
	else
		tar -xf "$src" -C "$tree.tmp" --strip-components=1 || fdie "cannot unpack $src"
	fi
	mv "$tree.tmp" "$tree"
	grep -q "^VERSION=$ver\$" "$tree/Makefile" ||
		fdie "$tree/Makefile is not makedumpfile $ver: $(grep -m1 '^VERSION=' "$tree/Makefile")"
	# --sysroot: headers and libraries from the unpacked packages, never
	# the host's; the uapi headers after them (glibc's include <linux/..>
	# and <asm/..>). -rpath-link: libdw.so's own needs (liblzma, libzstd).
	cc="${cross}gcc --sysroot=$root -idirafter $uapi"
	ldflags="-Wl,-rpath-link,$root/lib/aarch64-linux-gnu:$root/usr/lib/aarch64-linux-gnu"
	fsay "MAKE    makedumpfile $ver for aarch64 (${cross}gcc, LINKTYPE=dynamic) in $tree"
	t0=$(date +%s)
	# One job: the machine is shared.
	if ! make -C "$tree" CC="$cc" TARGET=aarch64 LDFLAGS="$ldflags" LINKTYPE=dynamic \
		USELZO=off USESNAPPY=off USEZSTD=off makedumpfile >"$a64/build.log" 2>&1; then
		tail -n 20 "$a64/build.log" >&2
		fdie "cross-building makedumpfile failed (log: $a64/build.log)"
	fi
	fsay "built in $(($(date +%s) - t0))s"
	file=$(LC_ALL=C readelf -h "$tree/makedumpfile" | sed -n 's/^ *Machine: *//p')
	case $file in *AArch64*) ;; *) fdie "$tree/makedumpfile is for '$file', not AArch64" ;; esac
	mkdir -p "$a64/bin"
	cp "$tree/makedumpfile" "$a64/bin/makedumpfile"
	write_wrapper "$root" "$a64/bin/makedumpfile"
	echo "$stamp" >"$out.stamp"
}

from_binary() {
	stamp="binary $(debs_stamp "$bin_debs$sysroot_debs")"
	if [ $force = 0 ] && [ -x "$out" ] && [ "$(cat "$out.stamp" 2>/dev/null)" = "$stamp" ]; then
		return 0
	fi
	root=$a64/root-binary
	fsay "EXTRACT sid's makedumpfile $ver (arm64) with trixie's libc6 -> $root"
	# bookworm's libraries first, then trixie's libc6 over bookworm's.
	make_root "$root" "$(echo "$sysroot_debs" | grep -v -e '-dev=' -e '^libc6=')$bin_debs"
	# trixie's libc6 is merged-/usr: its loader is only in /usr/lib, but
	# the binary asks for /lib/ld-linux-aarch64.so.1 (relative link: qemu
	# resolves it under -L).
	[ -e "$root/lib/ld-linux-aarch64.so.1" ] || ln -s ../usr/lib/ld-linux-aarch64.so.1 "$root/lib/"
	write_wrapper "$root" "$root/usr/bin/makedumpfile"
	echo "$stamp" >"$out.stamp"
}

t0=$(date +%s)
case $from in
source) from_source || fdie "no makedumpfile $ver source (set MAKEDUMPFILE_SRC=TARBALL|GITREPO|DIR)" ;;
binary) from_binary ;;
auto)
	from_source || {
		echo "$prog: no makedumpfile $ver source; using sid's arm64 binary package instead" >&2
		from_binary
	}
	;;
esac

# A result that does not run is not kept: the next run makes it again.
v=$("$out" -v 2>&1 | head -n 1) || { rm -f "$out.stamp"; fdie "$out -v failed: $v"; }
case $v in *"version $ver "*) ;; *) rm -f "$out.stamp"; fdie "$out -v says: $v" ;; esac
echo "makedumpfile-arm64=$out ($(cut -d' ' -f1 "$out.stamp"): $v)"
echo "time: $(($(date +%s) - t0))s" >&2
