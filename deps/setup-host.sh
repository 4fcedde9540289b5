#!/bin/sh
# setup-host.sh GROUP...: install the host packages that GROUP needs
# (deps/packages says which), so that `make demo`, `make check` and
# `make deb` work on a fresh Debian 12 machine with only git and make.
#
#   nothing missing   prints nothing, exits 0 (one dpkg-query call)
#   missing, root     apt-get update, then apt-get install of what is missing
#   missing, not root one line naming the exact command to run; exits 1
#   not Debian-like   says in words what is needed; exits 1
#
# KDUMPINIT_NO_SETUP=1 skips the whole step (a packager's build, a system
# where someone else manages the packages).
set -u
here=$(cd "$(dirname "$0")" && pwd)
# KDUMPINIT_PACKAGES: another list in the same form (the tests use one).
list=${KDUMPINIT_PACKAGES:-$here/packages}
prog=kdumpinit-setup

[ $# -gt 0 ] || { echo "usage: $0 build|demo|check|deb|bench..." >&2; exit 2; }
[ -n "${KDUMPINIT_NO_SETUP:-}" ] && exit 0

# The packages of the groups asked for, in the file's order, each once.
want=$(awk -v groups=" $* " '
	/^[ \t]*(#|$)/ { next }
	{ for (i = 2; i <= NF; i++) if (index(groups, " " $i " ")) { print $1; break } }
' "$list" | awk '!seen[$0]++')
[ -n "$want" ] || { echo "$prog: no package is listed for: $*" >&2; exit 2; }

debian_like() {
	[ -r /etc/os-release ] || return 1
	# shellcheck disable=SC1091
	(. /etc/os-release; case " ${ID:-} ${ID_LIKE:-} " in *" debian "*) exit 0 ;; esac; exit 1)
}

if ! debian_like || ! command -v dpkg-query >/dev/null 2>&1; then
	cat >&2 <<EOF
$prog: this is not a Debian-like system, so the packages cannot be
installed for you. $* needs: a C compiler and GNU make, musl-gcc (musl
1.2), the Linux uapi headers, bzip2, xz and tar; for the demo and tests
also QEMU (qemu-system-x86_64), a distribution kernel with its modules in
/boot and /lib/modules, a static busybox, cpio, kmod, lz4 and python3;
for the tests also mkfs for ext4/xfs/btrfs, cryptsetup, mdadm, sfdisk,
strace, clang 14 with libFuzzer, libelf/libdw/zlib/bzip2 headers,
debootstrap, dpkg-dev, debhelper, lintian, man and systemd-analyze.
The Debian names are in $list. Install them, then run
KDUMPINIT_NO_SETUP=1 make ... to skip this check.
EOF
	exit 1
fi

# One dpkg-query for all: a package is there when its status is "ii".
# shellcheck disable=SC2086
have=" $(dpkg-query -W -f='${db:Status-Abbrev} ${Package}\n' $want 2>/dev/null |
	awk '$1 == "ii" { printf "%s ", $2 }')"
missing=''
for p in $want; do
	case $have in *" $p "*) ;; *) missing="$missing $p" ;; esac
done
missing=${missing# }
[ -z "$missing" ] && exit 0

if [ "$(id -u)" -ne 0 ]; then
	echo "$prog: missing packages for '$*'; run: sudo apt-get install -y $missing" >&2
	exit 1
fi

echo "$prog: installing for '$*': $missing"
export DEBIAN_FRONTEND=noninteractive
log=${TMPDIR:-/tmp}/kdumpinit-setup.$$.log
# shellcheck disable=SC2086
if ! { apt-get update -qq && apt-get install -y -qq $missing; } >"$log" 2>&1; then
	cat "$log" >&2
	rm -f "$log"
	echo "$prog: apt-get install $missing failed (output above)" >&2
	exit 1
fi
rm -f "$log"
echo "$prog: installed $missing"
