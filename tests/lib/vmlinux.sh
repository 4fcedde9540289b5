# tests/lib/vmlinux.sh: sourced. The debug vmlinux of a Debian kernel, as
# crash and drgn need it (readers.sh, debugger/cuts.sh).
#
# vmlinux_of KVER: print the path of KVER's debug vmlinux under $dbg
# (the caller's directory, build/crash by convention: one copy for every
# suite), fetching linux-image-KVER-dbg first if needed, pinned in
# tests/crash/SHA256SUMS (a package not pinned there is refused, unless
# VMLINUX_UNPINNED=1: then the system apt's candidate, which apt checks
# against the archive's signed indices; amd64 only). 7.3's package (the new layout) holds it in
# usr/lib/debug/lib/modules/KVER/vmlinux with boot/vmlinux-KVER a symlink
# to it; 6.1's and 6.12's in boot/, amd64's and arm64's alike (an arm64
# KVER, *-arm64, through vmlinux_a64apt). Needs $top (the repository) and
# $dbg.

# vmlinux_a64apt ARG...: apt-get with arm64 as its only architecture, its
# configuration and lists in $dbg/apt-arm64 (bookworm, trixie and their
# -updates and -security suites), updated once a day.
vmlinux_a64apt() {
	local a=$dbg/apt-arm64 k=/usr/share/keyrings/debian-archive-keyring.gpg
	local m=${VMLINUX_DEBIAN_MIRROR:-http://deb.debian.org/debian} s
	local opts=(-q -c "$a/apt.conf" -o Dir::Etc::SourceList="$a/sources.list"
		-o Dir::Etc::SourceParts=/dev/null -o Dir::State::Lists="$a/lists"
		-o Dir::Cache="$a/cache" -o APT::Sandbox::User=root
		-o APT::Architecture=arm64 -o APT::Architectures::=arm64)
	mkdir -p "$a/lists/partial" "$a/cache/archives/partial" || return 1
	for s in bookworm bookworm-updates bookworm-security trixie trixie-updates trixie-security; do
		case $s in
		*-security) echo "deb [arch=arm64 signed-by=$k] ${m%/debian}/debian-security $s main" ;;
		*) echo "deb [arch=arm64 signed-by=$k] $m $s main" ;;
		esac
	done >"$a/sources.list"
	printf '%s\n' '#clear APT::Update::Post-Invoke;' '#clear APT::Update::Post-Invoke-Success;' \
		'Acquire::Check-Valid-Until "false";' >"$a/apt.conf"
	if [ -z "$(find "$a/lists" -maxdepth 1 -name '*trixie_InRelease' -mmin -1440 2>/dev/null)" ] ||
		[ "$(cat "$a/sources.list")" != "$(cat "$a/sources.list.done" 2>/dev/null)" ]; then
		apt-get "${opts[@]}" update || return 1
		cp "$a/sources.list" "$a/sources.list.done"
	fi
	apt-get "${opts[@]}" "$@"
}

vmlinux_of() {
	local kver=$1 pkg=linux-image-$1-dbg deb ver tmp got p
	local want=$dbg/usr/lib/debug/boot/vmlinux-$kver
	[ -f "$want" ] && [ -s "$want" ] && { echo "$want"; return 0; }
	deb=$(awk -v p="${pkg}_" 'index($2, p) == 1 { print $2; exit }' "$top/tests/crash/SHA256SUMS")
	tmp=$dbg/fetch.$$
	if [ -z "$deb" ]; then
		# Not pinned: only where the caller takes apt's own check (the
		# archive's signed indices) for enough (VMLINUX_UNPINNED=1: make
		# demo, on whatever Debian 12 kernel the machine has), the
		# system's apt, its candidate for the package.
		[ "${VMLINUX_UNPINNED:-0}" = 1 ] && [ "${kver%-arm64}" = "$kver" ] ||
			{ echo "no $pkg pinned in tests/crash/SHA256SUMS" >&2; return 1; }
		rm -rf "$tmp" && mkdir -p "$tmp" || return 1
		echo "fetching $pkg through apt (once)" >&2
		(cd "$tmp" && apt-get download "$pkg") >"$dbg/fetch-$kver.log" 2>&1
		got=$(ls "$tmp"/"${pkg}"_*.deb 2>/dev/null | head -n 1)
		[ -n "$got" ] || { rm -rf "$tmp"; echo "apt could not fetch $pkg (see $dbg/fetch-$kver.log)" >&2; return 1; }
		deb=${got##*/}
	else
		ver=${deb#"${pkg}_"}
		ver=${ver%_*.deb}
		ver=${ver//%3a/:}
		rm -rf "$tmp" && mkdir -p "$tmp" || return 1
		echo "readers: fetching $pkg=$ver (once)" >&2
		# An arm64 kernel's package (Debian 12's and 13's, the arm64 e2e's)
		# comes through a private configuration whose only architecture is
		# arm64 (as tests/e2e-arm64/fetch.sh's), so the host's dpkg is not
		# told of arm64. The amd64 ones: the private configuration reaches
		# trixie, trixie-backports and sid; bookworm's packages come through
		# the system's own apt.
		case $kver in
		*-arm64) (cd "$tmp" && vmlinux_a64apt download "$pkg:arm64=$ver") >"$dbg/fetch-$kver.log" 2>&1 ;;
		*) (
			filter_here=$top/tests/filter-makedumpfile
			. "$filter_here/common.sh"
			fapt_ready
			cd "$tmp" && fapt download "$pkg=$ver"
		) >"$dbg/fetch-$kver.log" 2>&1 ||
			(cd "$tmp" && apt-get download "$pkg=$ver") >>"$dbg/fetch-$kver.log" 2>&1 ;;
		esac
		got=$tmp/$deb
		[ -f "$got" ] || { rm -rf "$tmp"; echo "apt could not fetch $pkg=$ver (see $dbg/fetch-$kver.log)" >&2; return 1; }
		if [ "$(sha256sum "$got" | cut -d' ' -f1)" != "$(awk -v f="$deb" '$2 == f { print $1 }' "$top/tests/crash/SHA256SUMS")" ]; then
			rm -rf "$tmp"
			echo "$deb does not match its sha256 in tests/crash/SHA256SUMS" >&2
			return 1
		fi
	fi
	# Only the vmlinux, and no further: the data is 4-6 GB of xz, and a
	# stream read stops once the file is out (6.1 and 6.12 have it 11th,
	# in boot/: 5 s instead of 30; 7.3 near the end, in lib/modules/KVER/,
	# with boot/vmlinux-KVER a link to it, which is made here).
	dpkg-deb --fsys-tarfile "$got" 2>/dev/null | /usr/bin/python3 -c '
import os, sys, tarfile
dest, kver = sys.argv[1], sys.argv[2]
names = ("./usr/lib/debug/boot/vmlinux-" + kver, "./usr/lib/debug/lib/modules/" + kver + "/vmlinux")
with tarfile.open(fileobj=sys.stdin.buffer, mode="r|") as t:
    for m in t:
        if m.name in names and m.isfile():
            t.extract(m, dest, set_attrs=False)
            if m.name == names[1]:
                os.makedirs(dest + "/usr/lib/debug/boot", exist_ok=True)
                os.symlink("../lib/modules/" + kver + "/vmlinux", dest + names[0][1:])
            sys.exit(0)
sys.exit(1)
' "$tmp" "$kver" 2>>"$dbg/fetch-$kver.log"
	rm -f "$got"
	[ -f "$tmp/usr/lib/debug/boot/vmlinux-$kver" ] ||
		{ rm -rf "$tmp"; echo "$deb holds no vmlinux-$kver" >&2; return 1; }
	for p in "usr/lib/debug/lib/modules/$kver/vmlinux" "usr/lib/debug/boot/vmlinux-$kver"; do
		[ -e "$tmp/$p" ] || [ -L "$tmp/$p" ] || continue
		mkdir -p "$dbg/${p%/*}" && mv -f "$tmp/$p" "$dbg/$p" || { rm -rf "$tmp"; return 1; }
	done
	rm -rf "$tmp"
	echo "$want"
}

