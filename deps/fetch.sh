#!/bin/sh
# deps/fetch.sh -- get the pinned upstream sources of kdumpinit's static deps.
#
#   deps/fetch.sh download BUILD SRCPKG=VERSION TARBALL [SRCPKG=VERSION TARBALL]...
#       Leave each TARBALL (the .orig tarball of a Debian source package) in
#       BUILD/dl/, checked against deps/SHA256SUMS.  A cached copy that checks
#       out is not downloaded again.
#   deps/fetch.sh unpack FROM DEST [MEMBER]...
#       Make DEST a fresh copy of FROM: a tarball (checked again, extracted
#       without its top directory; MEMBERs, if given, limit what is extracted)
#       or an already-unpacked source tree (copied, so builds never write into
#       a packager's tree).
#   deps/fetch.sh debs BUILD ARCH[@SUITE] PKG=VERSION FILE [PKG=VERSION FILE]...
#       Leave each FILE (a binary .deb of Debian SUITE, default bookworm, for
#       ARCH, e.g. the aarch64 musl for `make ARCH=arm64`, or trixie-backports'
#       linux-source for `make crash-kernel`) in BUILD/dl/, checked against
#       deps/SHA256SUMS, with `apt-get download` through a second private
#       apt configuration (BUILD/apt-ARCH/) whose only architecture is ARCH:
#       the machine's dpkg never learns about ARCH, nothing is installed.
#
# Why apt-get source: the Debian archive is the one source we can reach, and
# its signed Sources index authenticates the tarball on the way in.  The
# pinned sha256 is what makes the build reproducible: a Debian revision bump
# keeps the same .orig tarball, a changed tarball fails loudly.
#
# Why a private apt configuration: downloading must not change the machine's
# apt setup (/etc/apt, /var/lib/apt), which we only read (keyring, proxies).
set -eu

here=$(cd "$(dirname "$0")" && pwd)
sums=$here/SHA256SUMS
mirror=${DEPS_DEBIAN_MIRROR:-http://deb.debian.org/debian}
keyring=/usr/share/keyrings/debian-archive-keyring.gpg

die() { echo "fetch.sh: error: $*" >&2; exit 1; }

# Whatever scratch directory is in use goes away however we exit.
tmp=
trap 'rm -rf ${tmp:+"$tmp"}' EXIT

# verify FILE: succeed iff FILE's sha256 is the one pinned for its name.
verify() {
    name=$(basename "$1")
    want=$(awk -v f="$name" '$2 == f { print $1 }' "$sums")
    [ -n "$want" ] || die "$name has no pinned sum in $sums"
    got=$(sha256sum "$1" | cut -d' ' -f1)
    [ "$got" = "$want" ] && return 0
    echo "fetch.sh: $1: sha256 $got, but deps/SHA256SUMS pins $want" >&2
    return 1
}

# apt_get ARG...: apt-get with everything it writes under $apt.
# -c adds our apt.conf after the system's, to drop its update hooks
# (PackageKit/AppStream refreshes are about the system's lists, not ours).
# Sandbox::User=root: the download directory is root's; without this apt
# warns that _apt cannot write there and falls back to root anyway.
apt_get() {
    apt-get -q -c "$apt/apt.conf" \
        -o Dir::Etc::SourceList="$apt/sources.list" \
        -o Dir::Etc::SourceParts=/dev/null \
        -o Dir::State::Lists="$apt/lists" \
        -o Dir::Cache="$apt/cache" \
        -o APT::Sandbox::User=root \
        "$@"
}

# apt_ready [SOURCE-LINE [APT-OPTION...]]: write the private configuration
# and update its lists, once (default: bookworm's sources, then sid's, for
# the one pin bookworm cannot give: libsodium with AEGIS-256, deps/deps.mk;
# `apt-get source PKG=VERSION` takes the suite that has VERSION).
apt_ready() {
    [ -z "${apt_ok:-}" ] || return 0
    command -v apt-get >/dev/null ||
        die "apt-get not found; set LZ4_SRC/ZLIB_SRC/ELFUTILS_SRC or DEPS_PREFIX"
    [ -r "$keyring" ] || die "$keyring missing (apt-get install debian-archive-keyring)"
    mkdir -p "$apt/lists/partial" "$apt/cache/archives/partial"
    printf '%s\n' "${1:-deb-src [signed-by=$keyring] $mirror bookworm main}" >"$apt/sources.list"
    [ -n "${1:-}" ] || echo "deb-src [signed-by=$keyring] $mirror sid main" >>"$apt/sources.list"
    [ $# -gt 0 ] && shift
    printf '%s\n' '#clear APT::Update::Post-Invoke;' \
        '#clear APT::Update::Post-Invoke-Success;' \
        'Acquire::Check-Valid-Until "false";' >"$apt/apt.conf"
    echo "  FETCH   apt-get update (private lists in $apt)"
    apt_get "$@" update >"$apt/update.log" 2>&1 || {
        cat "$apt/update.log" >&2; die "apt-get update failed"; }
    apt_ok=1
}

download() {
    [ $# -ge 1 ] || die "usage: fetch.sh download BUILD SRCPKG=VERSION TARBALL..."
    mkdir -p "$1/dl" "$1/apt"
    # apt resolves relative Dir:: paths against its own dirs: use absolute ones.
    dl=$(cd "$1/dl" && pwd)
    apt=$(cd "$1/apt" && pwd)
    shift
    while [ $# -ge 2 ]; do
        pkg=$1 tarball=$2
        shift 2
        if [ -f "$dl/$tarball" ]; then
            verify "$dl/$tarball" && continue
            echo "fetch.sh: dropping the bad cached copy, downloading again" >&2
            rm -f "$dl/$tarball"
        fi
        apt_ready
        echo "  FETCH   $pkg -> $dl/$tarball"
        # Download into a scratch dir so that $dl only ever holds checked
        # files (apt-get source also brings the .dsc and Debian diff).
        tmp=$dl/partial.$$
        rm -rf "$tmp" && mkdir -p "$tmp"
        if ! (cd "$tmp" && apt_get source --download-only "$pkg") \
            >"$apt/source.log" 2>&1; then
            # The pinned Debian revision may have been superseded; any
            # revision of the same upstream version has the same tarball,
            # and the sha256 check below still decides.
            echo "fetch.sh: warning: $pkg not in the archive, trying ${pkg%%=*}" >&2
            (cd "$tmp" && apt_get source --download-only "${pkg%%=*}") \
                >>"$apt/source.log" 2>&1 || {
                cat "$apt/source.log" >&2; die "apt-get source $pkg failed"; }
        fi
        [ -f "$tmp/$tarball" ] || {
            ls "$tmp" >&2; die "apt-get source $pkg brought no $tarball"; }
        verify "$tmp/$tarball" || die "$tarball does not match its pinned sha256"
        mv "$tmp/$tarball" "$dl/$tarball"
        rm -rf "$tmp"
        tmp=
    done
    [ $# -eq 0 ] || die "download: odd argument $1"
}

# Binary packages of a foreign architecture: the same private configuration,
# with ARCH as apt's only architecture (a command-line option, so neither
# dpkg's foreign-architecture list nor /etc/apt changes).
debs() {
    [ $# -ge 2 ] || die "usage: fetch.sh debs BUILD ARCH PKG=VERSION FILE..."
    arch=${2%@*} suite=bookworm
    case $2 in *@*) suite=${2#*@} ;; esac
    mkdir -p "$1/dl" "$1/apt-$2"
    dl=$(cd "$1/dl" && pwd)
    apt=$(cd "$1/apt-$2" && pwd)
    shift 2
    while [ $# -ge 2 ]; do
        pkg=$1 file=$2
        shift 2
        if [ -f "$dl/$file" ]; then
            verify "$dl/$file" && continue
            rm -f "$dl/$file"
        fi
        if [ -z "${apt_ok:-}" ]; then
            apt_ready "deb [arch=$arch signed-by=$keyring] $mirror $suite main" \
                -o APT::Architecture="$arch" -o APT::Architectures::="$arch"
        fi
        echo "  FETCH   $pkg ($arch) -> $dl/$file"
        tmp=$dl/partial.$$
        rm -rf "$tmp" && mkdir -p "$tmp"
        (cd "$tmp" && apt_get -o APT::Architecture="$arch" -o APT::Architectures::="$arch" \
            download "$pkg") >"$apt/download.log" 2>&1 || {
            cat "$apt/download.log" >&2; die "apt-get download $pkg failed"; }
        [ -f "$tmp/$file" ] || { ls "$tmp" >&2; die "apt-get download $pkg brought no $file"; }
        verify "$tmp/$file" || die "$file does not match its pinned sha256"
        mv "$tmp/$file" "$dl/$file"
        rm -rf "$tmp"
        tmp=
    done
    [ $# -eq 0 ] || die "debs: odd argument $1"
}

unpack() {
    [ $# -ge 2 ] || die "usage: fetch.sh unpack FROM DEST [MEMBER]..."
    from=$1 dest=$2
    shift 2
    if [ ! -d "$from" ]; then
        [ -f "$from" ] || die "$from: no such file or directory"
        verify "$from" || die "$from does not match its pinned sha256"
    fi
    rm -rf "$dest"
    tmp=$dest.tmp
    rm -rf "$tmp" && mkdir -p "$tmp"
    if [ -d "$from" ]; then
        cp -R "$from/." "$tmp/"
    else
        tar -xf "$from" -C "$tmp" --strip-components=1 "$@"
    fi
    mv "$tmp" "$dest"
    tmp=
}

cmd=${1:-}
[ $# -gt 0 ] && shift
case $cmd in
download) download "$@" ;;
unpack) unpack "$@" ;;
debs) debs "$@" ;;
*) die "usage: fetch.sh download|unpack|debs ..." ;;
esac
