#!/bin/sh
# tests/e2e-arm64/fetch.sh: the Debian 12 arm64 packages of the arm64 e2e,
# downloaded without installing anything and unpacked into one tree.
#
#   tests/e2e-arm64/fetch.sh BUILD
#
# Each .deb listed in tests/e2e-arm64/packages goes to BUILD/dl (checked
# against tests/e2e-arm64/SHA256SUMS; a cached copy that checks out is
# kept) through a private apt configuration in BUILD/apt whose only
# architecture is arm64, so the machine's dpkg and /etc/apt stay as they
# are. All are unpacked into BUILD/root (dpkg-deb -x), the kernel's module
# tree is prepared for modprobe (depmod -b), and it prints:
#   KVER=6.1.0-50-arm64
#   ROOT=BUILD/root      (kernel in ROOT/boot/vmlinuz-KVER: a raw Image)
# A package with its own TREE column (Debian 13's kernel) is unpacked into
# BUILD/TREE instead (lib -> usr/lib, depmod -b), printed as TREE_NAME=DIR.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
b=${1:?usage: fetch.sh BUILD}
mkdir -p "$b/dl" "$b/apt/lists/partial" "$b/apt/cache/archives/partial"
b=$(cd "$b" && pwd)
sums=$here/SHA256SUMS
keyring=/usr/share/keyrings/debian-archive-keyring.gpg
mirror=${E2E_DEBIAN_MIRROR:-http://deb.debian.org/debian}
die() { echo "e2e-arm64 fetch: $*" >&2; exit 1; }
verify() {
	want=$(awk -v f="$(basename "$1")" '$2 == f { print $1 }' "$sums")
	[ -n "$want" ] && [ "$(sha256sum "$1" | cut -d' ' -f1)" = "$want" ]
}
apt_get() {
	apt-get -q -c "$b/apt/apt.conf" -o Dir::Etc::SourceList="$b/apt/sources.list" \
		-o Dir::Etc::SourceParts=/dev/null -o Dir::State::Lists="$b/apt/lists" \
		-o Dir::Cache="$b/apt/cache" -o APT::Sandbox::User=root \
		-o APT::Architecture=arm64 -o APT::Architectures::=arm64 "$@"
}
updated=
grep -v '^#' "$here/packages" | while read -r pkg file _; do
	[ -f "$b/dl/$file" ] && verify "$b/dl/$file" && continue
	rm -f "$b/dl/$file"
	if [ -z "$updated" ]; then
		printf 'deb [arch=arm64 signed-by=%s] %s %s main\n' "$keyring" "$mirror" bookworm \
			"$keyring" "$mirror" trixie >"$b/apt/sources.list"
		printf '%s\n' '#clear APT::Update::Post-Invoke;' '#clear APT::Update::Post-Invoke-Success;' \
			'Acquire::Check-Valid-Until "false";' >"$b/apt/apt.conf"
		echo "  FETCH   apt-get update (arm64, private lists in $b/apt)" >&2
		apt_get update >"$b/apt/update.log" 2>&1 || { cat "$b/apt/update.log" >&2; die "apt-get update failed"; }
		updated=1
	fi
	echo "  FETCH   $pkg" >&2
	(cd "$b/dl" && apt_get download "${pkg%%=*}:arm64=${pkg#*=}") >"$b/apt/download.log" 2>&1 ||
		{ cat "$b/apt/download.log" >&2; die "apt-get download $pkg failed"; }
	verify "$b/dl/$file" || die "$file: not there, or not the pinned sha256"
done
stamp=$(sha256sum "$sums" | cut -d' ' -f1)
if [ "$(cat "$b/root/.stamp" 2>/dev/null)" != "$stamp" ]; then
	rm -rf "$b/root" "$b/root.tmp" && mkdir -p "$b/root.tmp"
	grep -v '^#' "$here/packages" | while read -r pkg file _ tree; do
		[ -z "${tree:-}" ] || continue
		dpkg-deb -x "$b/dl/$file" "$b/root.tmp" || die "dpkg-deb -x $file"
	done
	mv "$b/root.tmp" "$b/root"
	kver=$(ls "$b/root/lib/modules" | head -n 1)
	depmod -b "$b/root" "$kver" || die "depmod"
	echo "$stamp" >"$b/root/.stamp"
fi
echo "KVER=$(ls "$b/root/lib/modules" | head -n 1)"
echo "ROOT=$b/root"
grep -v '^#' "$here/packages" | while read -r pkg file _ tree; do
	[ -n "${tree:-}" ] || continue
	want=$(sha256sum "$b/dl/$file" | cut -d' ' -f1)
	if [ "$(cat "$b/$tree/.stamp" 2>/dev/null)" != "$want" ]; then
		rm -rf "$b/$tree" "$b/$tree.tmp" && mkdir -p "$b/$tree.tmp"
		dpkg-deb -x "$b/dl/$file" "$b/$tree.tmp" || die "dpkg-deb -x $file"
		[ -e "$b/$tree.tmp/lib" ] || ln -s usr/lib "$b/$tree.tmp/lib"
		mv "$b/$tree.tmp" "$b/$tree"
		kv=$(ls "$b/$tree/lib/modules" | head -n 1)
		depmod -b "$b/$tree" "$kv" || die "depmod $tree"
		echo "$want" >"$b/$tree/.stamp"
	fi
	echo "TREE_$tree=$b/$tree"
done
