# tests/lib/chroot.sh: fresh Debian 12 roots for the tests that install
# things (the package test, the fresh-machine test). Source it; needs root.
#
#   chroot_base DIR [PKG...]  a debootstrap --variant=minbase bookworm in
#                     DIR, with PKG... installed, made once: a stamp naming
#                     the packages marks it done, so a rerun reuses it
#   chroot_fresh BASE MNT  a throwaway root at MNT: an overlay over BASE
#                     (BASE is never written), with /proc, /sys and /dev
#                     bound and the host's resolv.conf, for apt
#   chroot_drop MNT   unmount and remove it
#
# It also gives the suites that use it their common frame: top (the
# repository, the current directory), BUILD made absolute, and ok, bad and
# finish for the "N passed, N failed, N skipped" line.
CHROOT_MIRROR=${DEPS_DEBIAN_MIRROR:-http://deb.debian.org/debian}
top=$PWD
BUILD=${BUILD:-build}
case $BUILD in /*) ;; *) BUILD=$top/$BUILD ;; esac
pass=0 fail=0
ok() { echo "ok $*"; pass=$((pass + 1)); }
bad() { echo "FAIL $*"; fail=$((fail + 1)); }
finish() { echo "$pass passed, $fail failed, 0 skipped"; [ "$fail" -eq 0 ]; exit; }

chroot_base() {
	local dir=$1 stamp
	shift
	stamp="bookworm minbase $*"
	if [ -f "$dir/.kdi-stamp" ] && [ "$(cat "$dir/.kdi-stamp")" = "$stamp" ]; then
		return 0
	fi
	command -v debootstrap >/dev/null || { echo "chroot: debootstrap is not installed" >&2; return 1; }
	rm -rf "$dir"
	mkdir -p "$dir"
	echo "chroot: debootstrap --variant=minbase bookworm $dir (once)"
	debootstrap --variant=minbase bookworm "$dir" "$CHROOT_MIRROR" >"$dir.log" 2>&1 ||
		{ tail -n 20 "$dir.log" >&2; echo "chroot: debootstrap failed" >&2; return 1; }
	if [ $# -gt 0 ]; then
		cp /etc/resolv.conf "$dir/etc/resolv.conf"
		mount -t proc proc "$dir/proc"
		DEBIAN_FRONTEND=noninteractive chroot "$dir" sh -c \
			"apt-get update -qq && apt-get install -y -qq $*" >>"$dir.log" 2>&1
		local rc=$?
		umount "$dir/proc"
		[ $rc -eq 0 ] || { tail -n 20 "$dir.log" >&2; echo "chroot: apt-get install $* failed" >&2; return 1; }
	fi
	echo "$stamp" >"$dir/.kdi-stamp"
}

chroot_fresh() {
	local base=$1 mnt=$2 rw=$2.rw
	mkdir -p "$rw" "$mnt"
	# The overlay's upper layer cannot sit on an overlay (the tree may be
	# inside a container or a chroot like ours): then it goes on a tmpfs.
	mkdir -p "$rw/upper" "$rw/work"
	if ! mount -t overlay overlay -o "lowerdir=$base,upperdir=$rw/upper,workdir=$rw/work" "$mnt" 2>/dev/null; then
		rm -rf "$rw/upper" "$rw/work"
		mount -t tmpfs -o size=16g,mode=0755 tmpfs "$rw" || return 1
		mkdir -p "$rw/upper" "$rw/work"
		mount -t overlay overlay -o "lowerdir=$base,upperdir=$rw/upper,workdir=$rw/work" "$mnt" || return 1
	fi
	mount -t proc proc "$mnt/proc"
	mount --rbind /sys "$mnt/sys" && mount --make-rslave "$mnt/sys"
	mount --rbind /dev "$mnt/dev" && mount --make-rslave "$mnt/dev"
	cp /etc/resolv.conf "$mnt/etc/resolv.conf"
}

chroot_drop() {
	local mnt=$1
	[ -d "$mnt" ] || return 0
	umount -R "$mnt" 2>/dev/null || umount -R -l "$mnt" 2>/dev/null
	mountpoint -q "$mnt.rw" && { umount "$mnt.rw" 2>/dev/null || umount -l "$mnt.rw"; }
	rm -rf "$mnt" "$mnt.rw"
}
