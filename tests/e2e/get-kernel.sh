#!/bin/bash
# Download and extract a Debian kernel package for run.sh --kernel-tree,
# without installing it or touching the system's apt configuration.
#   tests/e2e/get-kernel.sh [SUITE [PACKAGE]]
# Default: Debian 13 (trixie) linux-image-6.12.117+deb13-amd64, whose
# modules are .ko.xz and whose page types differ from 6.1.
# Prints the tree's path: build/e2e/kernel-PACKAGE.
set -euo pipefail
suite=${1:-trixie}
pkg=${2:-linux-image-6.12.117+deb13-amd64}
top=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
dir=$top/build/e2e/apt-$suite
tree=$top/build/e2e/kernel-$pkg
if [ -d "$tree/boot" ]; then
	echo "$tree"
	exit 0
fi
mkdir -p "$dir/lists/partial" "$dir/cache/archives/partial"
echo "deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] http://deb.debian.org/debian $suite main" >"$dir/sources.list"
apt=(-o "Dir::Etc::SourceList=$dir/sources.list" -o Dir::Etc::SourceParts=/dev/null
	-o "Dir::State::Lists=$dir/lists" -o "Dir::Cache=$dir/cache")
apt-get "${apt[@]}" -q update >&2
(cd "$dir" && apt-get "${apt[@]}" -q download "$pkg" >&2)
rm -rf "$tree.tmp"
dpkg-deb -x "$dir/${pkg}"_*.deb "$tree.tmp"
mv "$tree.tmp" "$tree"
echo "$tree"
