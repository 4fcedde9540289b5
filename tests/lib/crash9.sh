# tests/lib/crash9.sh: sourced. sid's crash (9.x), for the suites that
# open dumps of kernels Debian 12's crash 8.0.2 cannot read (6.4 on:
# tests/crash/README.md). Not a chroot: the crash .deb and exactly the
# shared libraries it loads (its Depends but binutils, whose strings and
# nm crash runs from PATH: the host's do), pinned in
# tests/crash/crash9.SHA256SUMS, fetched through the private apt of
# tests/filter-makedumpfile/common.sh (fapt: it reaches sid), unpacked with
# dpkg-deb -x and run through that tree's own dynamic loader with
# --library-path, so that nothing of the host's libraries is loaded. Once
# per build directory: 11 .debs, 9.3 MB downloaded, 27 MB unpacked, about
# 6 s (measured 2026-12-07).
#
#   crash9_ready    make it ready (download, check, unpack, once); sets
#                   CRASH9 (an array: the command to run, arguments
#                   follow) and CRASH9_VERSION ("9.0.2"). On failure
#                   returns 1 and says why on stderr.
#   crash9_pin DIR  download sid's current crash and libraries into DIR
#                   and print their sha256sum lines: what a new
#                   tests/crash/crash9.SHA256SUMS would hold. For a
#                   maintainer, after checking what changed.
#
# Needs $top (the repository). The tree is $CRASH9_DIR, by default
# $BUILD/readers/crash9 (BUILD relative to $top unless absolute):
#   dl/     the pinned .debs, each checked against its sha256
#   root/   them unpacked; root/.kdi-pins is the pin file it was made from
# A changed pin file makes it again. sid moves on: once its archive drops a
# pinned version, a machine without the cache cannot fetch it (the error
# says so) and the pins must be renewed with crash9_pin.
CRASH9_PKGS="crash libc6 libgcc-s1 libgmp10 liblzo2-2 libmpfr6 libncursesw6 libsnappy1v5 libstdc++6 libtinfo6 libzstd1"

crash9_dir() {
	local b=${BUILD:-build}
	case $b in /*) ;; *) b=$top/$b ;; esac
	echo "${CRASH9_DIR:-$b/readers/crash9}"
}

# crash9_fapt ARG...: fapt of tests/filter-makedumpfile/common.sh, in a
# subshell (its errors exit).
crash9_fapt() {
	(
		filter_here=$top/tests/filter-makedumpfile prog=crash9
		. "$filter_here/common.sh"
		fapt_ready
		fapt "$@"
	)
}

crash9_ready() {
	local dir pins=$top/tests/crash/crash9.SHA256SUMS root sum file want pkg ver get=() ld lib tmp
	dir=$(crash9_dir)
	root=$dir/root
	CRASH9=() CRASH9_VERSION=
	[ -s "$pins" ] || { echo "crash9: no $pins" >&2; return 1; }
	if ! cmp -s "$pins" "$root/.kdi-pins"; then
		mkdir -p "$dir/dl" || return 1
		# What is missing or wrong in dl/ is fetched, pkg=version by name.
		while read -r sum file; do
			[ -n "$file" ] || continue
			if [ -f "$dir/dl/$file" ] && [ "$(sha256sum <"$dir/dl/$file" | cut -d' ' -f1)" = "$sum" ]; then
				continue
			fi
			pkg=${file%%_*}
			ver=${file#*_}
			ver=${ver%_*.deb}
			get+=("$pkg=${ver//%3a/:}")
		done <"$pins"
		if [ ${#get[@]} -gt 0 ]; then
			echo "crash9: fetching sid's crash and its libraries (once: ${#get[@]} .debs, about 9 MB)" >&2
			tmp=$dir/dl/partial.$$
			rm -rf "$tmp" && mkdir -p "$tmp" || return 1
			(cd "$tmp" && crash9_fapt download "${get[@]}") >"$dir/fetch.log" 2>&1 || {
				rm -rf "$tmp"
				echo "crash9: apt could not fetch ${get[*]} from sid ($(grep -m 1 '^E:' "$dir/fetch.log"); see $dir/fetch.log): sid may have moved past the pins in tests/crash/crash9.SHA256SUMS" >&2
				return 1
			}
			while read -r sum file; do
				[ -f "$tmp/$file" ] || continue
				if [ "$(sha256sum <"$tmp/$file" | cut -d' ' -f1)" != "$sum" ]; then
					rm -rf "$tmp"
					echo "crash9: $file does not match its sha256 in tests/crash/crash9.SHA256SUMS" >&2
					return 1
				fi
				mv -f "$tmp/$file" "$dir/dl/$file"
			done <"$pins"
			rm -rf "$tmp"
		fi
		tmp=$dir/root.new.$$
		rm -rf "$tmp" && mkdir -p "$tmp" || return 1
		while read -r sum file; do
			[ -n "$file" ] || continue
			[ -f "$dir/dl/$file" ] || { rm -rf "$tmp"; echo "crash9: $file was not fetched (see $dir/fetch.log)" >&2; return 1; }
			dpkg-deb -x "$dir/dl/$file" "$tmp" || { rm -rf "$tmp"; echo "crash9: dpkg-deb -x $file failed" >&2; return 1; }
		done <"$pins"
		cp "$pins" "$tmp/.kdi-pins"
		rm -rf "$root" && mv "$tmp" "$root" || return 1
	fi
	ld=$root/usr/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2
	lib=$root/usr/lib/x86_64-linux-gnu
	[ -x "$ld" ] && [ -x "$root/usr/bin/crash" ] || { echo "crash9: no loader or crash in $root" >&2; return 1; }
	# Every library from the tree, none from the host.
	want=$("$ld" --library-path "$lib" --list "$root/usr/bin/crash" 2>&1 | grep '=>' | grep -v "=> $root/")
	[ -z "$want" ] || { echo "crash9: libraries not in $root: $(echo $want)" >&2; return 1; }
	CRASH9=(env LC_ALL=C "$ld" --library-path "$lib" "$root/usr/bin/crash")
	CRASH9_VERSION=$("${CRASH9[@]}" --version 2>/dev/null | sed -n 's/^crash \([0-9][^ ]*\).*/\1/p' | head -n 1)
	[ -n "$CRASH9_VERSION" ] || { CRASH9=(); echo "crash9: $root/usr/bin/crash does not run" >&2; return 1; }
}

crash9_pin() {
	local d=$1
	mkdir -p "$d" || return 1
	(cd "$d" && crash9_fapt download $CRASH9_PKGS) >&2 || return 1
	(cd "$d" && for p in $CRASH9_PKGS; do sha256sum "${p}"_*.deb; done)
}
