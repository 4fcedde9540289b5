#!/bin/bash
# Which crash and drgn read the files `kdumpinit save` writes, per kernel.
#
#   tests/crash/readers.sh [--workdir DIR] [--levels "31 1"] RAW.vmcore...
#
# Each RAW.vmcore is an e2e run's raw copy of /proc/vmcore (build/check/
# raw-*.vmcore). For each, at every level, it captures a dump
# (kdumpinit capture --vmcore), saves it with --format kdump and
# --format elf, and opens both files with four readers:
#   the host's crash and drgn (Debian 12: crash 8.0.2, python3-drgn 0.0.22),
#   sid's crash and drgn (crash 9.0.2, python3-drgn 0.3.0), in a
#   debootstrap --variant=minbase sid chroot made once in
#   build/chroot/sid-readers (about 4 min and 480 MB) and reused.
# crash must show the panic in `log`, the sysrq and panic frames in `bt`,
# and as many tasks in `ps` as it finds in the raw vmcore; drgn must read
# init_uts_ns.name.release (= the vmcore's OSRELEASE), find the panic in
# the printk log and walk as many tasks as in the raw vmcore.
#
# The raw vmcore is each reader's reference: it runs there first. A reader
# must read the raw vmcore of every kernel, except where `unreadable`
# below names the pair: then the run on the raw vmcore must fail too, its
# cases are skipped, and the skip line quotes the error measured on the
# raw vmcore now. A reader that needs an option (crash --no_modules) for
# a kernel gets it for the saved files too, and the raw case says so.
#
# The vmlinux for each kernel comes from linux-image-KVER-dbg, pinned in
# tests/crash/SHA256SUMS (0.9-1.2 GB each), downloaded once through the
# private apt configuration of tests/filter-makedumpfile/common.sh (6.12
# and 7.3) or the system's apt (6.1, bookworm), and only the vmlinux is
# kept, under build/crash/ where tests/crash/run.sh finds 6.1's too.
#
# Needs root (debootstrap, chroot, mounts). Results go to
# DIR/out/READER.VMCORE.FILE (default DIR: build/readers); the saved
# files of one vmcore are removed before the next (KEEP=1 keeps them).
set -u
caller=$PWD
cd "$(dirname "$0")/../.." || exit 1
# tests/lib/chroot.sh: top, BUILD (absolute), chroot_fresh, chroot_drop.
. tests/lib/chroot.sh
here=$top/tests/crash
K=$BUILD/kdumpinit
skip=0
skip1() { echo "skip $1: $2"; skip=$((skip + 1)); }
finish() { echo "$pass passed, $fail failed, $skip skipped"; [ "$fail" -eq 0 ]; exit; }

# sid's versions, pinned: a newer sid changes what is measured, so it
# must fail the chroot's set-up until this line and README are updated.
SID_PKGS="crash=9.0.2+~16.3-1 python3-drgn=0.3.0-1"
sid=${READERS_CHROOT:-$BUILD/chroot/sid-readers}
dbg=$BUILD/crash
work=$BUILD/readers
levels="31 1"
while [ $# -gt 0 ]; do
	case $1 in
	--workdir) work=$2; shift 2 ;;
	--levels) levels=$2; shift 2 ;;
	--) shift; break ;;
	-*) echo "readers.sh: unknown option $1" >&2; exit 2 ;;
	*) break ;;
	esac
done
case $work in /*) ;; *) work=$top/$work ;; esac
[ $# -gt 0 ] || { bad "setup: no raw vmcore given"; finish; }
[ "$(id -u)" = 0 ] || { bad "setup: needs root (debootstrap, chroot, mount)"; finish; }
[ -x "$K" ] || { bad "setup: no $K (make)"; finish; }
for t in crash /usr/bin/python3 debootstrap dpkg-deb; do
	command -v $t >/dev/null || { bad "setup: $t is not installed"; finish; }
done
/usr/bin/python3 -c 'import drgn' 2>/dev/null || { bad "setup: the host has no python3-drgn"; finish; }

# unreadable READER KVER: print why READER is not expected to read KVER's
# vmcores at all (raw or saved), or nothing. Measured here (README):
# crash 8.0.2 stops on 6.12 and 7.3 before any command, and with --kaslr
# auto --no_modules it opens 6.12 but gdb faults in log and bt; the same
# KASLR error is crash-utility/crash#194 (8.0.5 on 6.11 and 6.12).
unreadable() {
	local maj=${2%%.*} min=${2#*.}
	min=${min%%[!0-9]*}
	case $1 in
	crash-8.0.[0-2])
		[ $((maj * 100 + min)) -ge 604 ] &&
			echo "crash ${1#crash-} does not read Linux 6.4 and later (6.12 and 7.3 measured, tests/crash/README)"
		;;
	esac
}

# --- the sid chroot ------------------------------------------------------
sid_base() {
	local stamp="sid minbase $SID_PKGS" rc
	[ -f "$sid/.kdi-stamp" ] && [ "$(cat "$sid/.kdi-stamp")" = "$stamp" ] && return 0
	rm -rf "$sid"
	mkdir -p "$sid"
	debootstrap --variant=minbase sid "$sid" "$CHROOT_MIRROR" >"$sid.log" 2>&1 ||
		{ tail -n 20 "$sid.log" >&2; echo "debootstrap sid failed (see $sid.log)"; return 1; }
	# The archive reached from here may be a snapshot whose Release files
	# are past their Valid-Until (NOTES.md): apt would refuse sid's lists.
	echo 'Acquire::Check-Valid-Until "false";' >"$sid/etc/apt/apt.conf.d/99kdi-valid-until"
	cp /etc/resolv.conf "$sid/etc/resolv.conf"
	mount -t proc proc "$sid/proc"
	DEBIAN_FRONTEND=noninteractive chroot "$sid" sh -c \
		"apt-get update -qq && apt-get install -y -qq --no-install-recommends $SID_PKGS" >>"$sid.log" 2>&1
	rc=$?
	umount "$sid/proc"
	[ $rc -eq 0 ] || { tail -n 20 "$sid.log" >&2; echo "apt-get install $SID_PKGS in sid failed (see $sid.log)"; return 1; }
	echo "$stamp" >"$sid/.kdi-stamp"
}

# --- the vmlinux of a kernel ----------------------------------------------
# vmlinux_of KVER (tests/lib/vmlinux.sh), into $dbg.
. "$top/tests/lib/vmlinux.sh"

# --- the readers -----------------------------------------------------------
# Each reader is a command prefix: the host's tools, or the same names
# run in the sid chroot through an overlay at $mnt, which sees the vmlinux
# tree at /kdi/dbg, the work directory at /kdi/work and the raw vmcores'
# directories at /kdi/raw/N.
mnt=$work/sid-root
cleanup() { chroot_drop "$mnt"; }
trap cleanup EXIT
trap 'exit 130' INT TERM

# in_reader WHERE CMD...: run CMD on the host, or in the chroot.
in_reader() {
	local where=$1
	shift
	if [ "$where" = host ]; then "$@"; else chroot "$mnt" "$@"; fi
}
# path_for WHERE PATH: the name PATH has where the reader runs.
path_for() {
	[ "$1" = host ] && { echo "$2"; return; }
	local p=$2 i
	case $p in
	"$dbg"/*) echo "/kdi/dbg/${p#"$dbg"/}"; return ;;
	"$work"/*) echo "/kdi/work/${p#"$work"/}"; return ;;
	esac
	for i in "${!rawdirs[@]}"; do
		case $p in "${rawdirs[$i]}"/*) echo "/kdi/raw/$i/${p#"${rawdirs[$i]}"/}"; return ;; esac
	done
	echo "$p"
}

# crash_run WHERE FLAGS VMLINUX FILE OUT: log, bt, ps into OUT.
crash_run() {
	printf 'log\nbt\nps\nquit\n' | in_reader "$1" timeout 900 nice crash -s $2 \
		"$(path_for "$1" "$3")" "$(path_for "$1" "$4")" >"$5" 2>&1
}
# crash_judge OUT: "log bt tasks" from a crash_run's output (1/0, 1/0, N).
crash_judge() {
	local l=0 b=0 n
	grep -q 'Kernel panic - not syncing: sysrq triggered crash' "$1" && l=1
	grep -qE '^ *#[0-9]+ \[[0-9a-f]+\] sysrq_handle_crash at' "$1" &&
		grep -qE '^ *#[0-9]+ \[[0-9a-f]+\] v?panic at' "$1" && b=1
	n=$(grep -cE '^[> ] +[0-9]+ +[0-9]+ +[0-9]+ +[0-9a-f]{16} ' "$1")
	echo "$l $b $n"
}
# crash_why OUT RC: crash's own words, for a FAIL or skip line. crash
# reads some things quietly and then exits 1 saying nothing (7.3 at level
# 31: measured, the task table): then the last thing it printed.
crash_why() {
	local w
	w=$(grep -m2 -E '^crash: |segmentation violation' "$1" | tr -s ' \n' '  ')
	[ -n "$w" ] || w=$(grep -v '^ *$' "$1" | tail -n 1 | tr -s ' ' ' ' | cut -c1-160)
	[ -n "$w" ] && w="exit ${2:-?} after: $w" || w="exit ${2:-?}, nothing printed"
	echo "$w"
}
# crash_debug WHERE FLAGS VMLINUX FILE OUT: crash's first error as crash
# -d 1 shows it (crash 8.0.2 on 6.12 and 7.3 says nothing without it).
crash_debug() {
	printf 'quit\n' | in_reader "$1" timeout 900 nice crash -d 1 $2 \
		"$(path_for "$1" "$3")" "$(path_for "$1" "$4")" >"$5" 2>&1
	grep -m1 -E '^crash: .*(error|invalid|excluded)' "$5"
}

# drgn_run WHERE VMLINUX FILE OUT
drgn_run() {
	in_reader "$1" timeout 900 nice /usr/bin/python3 "$(path_for "$1" "$work/drgnprobe.py")" \
		"$(path_for "$1" "$3")" "$(path_for "$1" "$2")" >"$4" 2>&1
}
drgn_val() { sed -n "s/^$1 //p" "$2" | head -n 1; }
drgn_why() {
	local w
	w=$(grep -m1 '^error ' "$1")
	[ -n "$w" ] || w=$(grep -m1 -E 'Error|error' "$1")
	echo "${w:-no error printed}" | cut -c1-300
}

# --- set-up ------------------------------------------------------------------
mkdir -p "$work/out" "$dbg" || { bad "setup: cannot create $work"; finish; }
cp "$here/drgnprobe.py" "$work/drgnprobe.py"
# The raw vmcores by absolute name, links resolved: the chroot sees
# their directories.
raws=()
for r in "$@"; do
	case $r in /*) ;; *) r=$caller/$r ;; esac
	raws+=("$(readlink -f "$r")")
done
set -- "${raws[@]}"
rawdirs=()
for r in "$@"; do
	d=${r%/*}
	case " ${rawdirs[*]} " in *" $d "*) ;; *) rawdirs+=("$d") ;; esac
done

readers=()
hv=$(crash --version 2>/dev/null | sed -n 's/^crash \([0-9][^ ]*\).*/\1/p' | head -n 1)
hd=$(/usr/bin/python3 -c 'import drgn; print(drgn.__version__)' 2>/dev/null)
readers+=("crash-$hv host" "drgn-$hd host")
# sid_up: the chroot, mounted at $mnt; on failure, why in $why.
sid_up() {
	sid_base >"$work/sid.err" 2>&1 || { why=$(tail -n 1 "$work/sid.err"); return 1; }
	chroot_drop "$mnt"
	chroot_fresh "$sid" "$mnt" || { why="overlay over $sid at $mnt failed"; return 1; }
	mkdir -p "$mnt/kdi/dbg" "$mnt/kdi/work"
	mount --bind "$dbg" "$mnt/kdi/dbg" && mount --bind "$work" "$mnt/kdi/work" ||
		{ why="bind mounts into $mnt failed"; return 1; }
	for i in "${!rawdirs[@]}"; do
		mkdir -p "$mnt/kdi/raw/$i"
		mount --bind "${rawdirs[$i]}" "$mnt/kdi/raw/$i" && mount -o remount,bind,ro "$mnt/kdi/raw/$i" ||
			{ why="bind mount of ${rawdirs[$i]} failed"; return 1; }
	done
	sv=$(chroot "$mnt" crash --version 2>/dev/null | sed -n 's/^crash \([0-9][^ ]*\).*/\1/p' | head -n 1)
	sd=$(chroot "$mnt" python3 -c 'import drgn; print(drgn.__version__)' 2>/dev/null)
	[ -n "$sv" ] && [ -n "$sd" ] || { why="crash or drgn does not run in the sid chroot"; return 1; }
}
[ -f "$sid/.kdi-stamp" ] || echo "readers: making the sid chroot $sid (once, ~4 min; log in $sid.log)"
if sid_up; then
	readers+=("crash-$sv sid" "drgn-$sd sid")
	echo "readers: host crash $hv, drgn $hd; sid crash $sv, drgn $sd"
else
	# The sid readers are expected: without them each of their cases fails.
	readers+=("crash-sid none:$why" "drgn-sid none:$why")
	echo "readers: host crash $hv, drgn $hd; no sid chroot: $why"
fi

# --- one vmcore ---------------------------------------------------------------
files() { local l; for l in $levels; do echo "L$l.kdump L$l.elf"; done; }
checks_of() { case $1 in crash-*) echo "log bt ps" ;; *) echo "release log tasks" ;; esac; }
# all_cases STATUS READER VM WHY: one line for the raw case and every check.
all_cases() {
	local st=$1 rd=$2 vm=$3 why=$4 f c
	$st "$rd/$vm/raw" "$why"
	for f in $(files); do
		for c in $(checks_of "$rd"); do $st "$rd/$vm/$f/$c" "$why"; done
	done
}
badw() { bad "$1: $2"; }

for raw in "$@"; do
	vm=$(basename "$raw" .vmcore)
	vm=${vm#raw-}
	kver=$(grep -a -o -m1 'OSRELEASE=[^[:cntrl:]]*' "$raw" 2>/dev/null | head -n 1)
	kver=${kver#OSRELEASE=}
	[ -n "$kver" ] || { bad "$vm/osrelease: no OSRELEASE in $raw"; continue; }
	echo "== $vm: $kver"
	if ! vml=$(vmlinux_of "$kver" 2>"$work/vmlinux.err"); then
		bad "$vm/vmlinux: $(tail -n 1 "$work/vmlinux.err")"
		continue
	fi
	ok "$vm/vmlinux $vml"
	# Its banner names this release (linux_banner, "Linux version KVER ").
	vml_ok=0
	strings -n 20 "$vml" | grep -q "^Linux version $kver " && vml_ok=1 ||
		bad "$vm/vmlinux: $vml's banner does not name $kver"

	# The saved files. A failed capture or save fails the readers' cases
	# on that file too (the file is missing), so the count stays whole.
	for l in $levels; do
		img=$work/$vm.L$l.img
		rm -f "$img" "$work/$vm.L$l.kdump" "$work/$vm.L$l.elf"
		"$K" capture --vmcore "$raw" --output "$img" --level "$l" >"$work/out/$vm.L$l.capture" 2>&1
		rc=$?
		[ $rc = 0 ] && ok "$vm/capture-L$l" || bad "$vm/capture-L$l: exit $rc: $(tail -n 1 "$work/out/$vm.L$l.capture")"
		for fmt in kdump elf; do
			"$K" save "$img" --output "$work/$vm.L$l.$fmt" --format $fmt >"$work/out/$vm.L$l.save-$fmt" 2>&1
			rc=$?
			[ $rc = 0 ] && ok "$vm/save-L$l.$fmt" || bad "$vm/save-L$l.$fmt: exit $rc: $(tail -n 1 "$work/out/$vm.L$l.save-$fmt")"
		done
		rm -f "$img"
	done

	for r in "${readers[@]}"; do
		rd=${r%% *}
		where=${r#* }
		case $where in none:*) all_cases badw "$rd" "$vm" "${where#none:}"; continue ;; esac
		tag=$rd.$vm
		# The reference: the raw vmcore. crash gets --no_modules only if
		# it needs it there (crash 9.0.2 on 7.3: module_num_gpl_syms).
		if [ "${rd%%-*}" = crash ]; then
			flags=
			crash_run "$where" "" "$vml" "$raw" "$work/out/$tag.raw"
			rc=$?
			read -r rl rb rn < <(crash_judge "$work/out/$tag.raw")
			plain=$(crash_why "$work/out/$tag.raw" $rc)
			if [ "$rl$rb" != 11 ]; then
				crash_run "$where" --no_modules "$vml" "$raw" "$work/out/$tag.raw-nm"
				read -r rl rb rn < <(crash_judge "$work/out/$tag.raw-nm")
				[ "$rl$rb" = 11 ] && flags=--no_modules
			fi
			refok=$([ "$rl$rb" = 11 ] && [ "$rn" -gt 1 ] && echo 1)
			reftasks=$rn
			if [ -z "$refok" ]; then
				w=$(crash_debug "$where" "" "$vml" "$raw" "$work/out/$tag.raw-d1")
				[ -n "$w" ] && plain="$plain; crash -d 1: $w"
			fi
		else
			flags=
			drgn_run "$where" "$vml" "$raw" "$work/out/$tag.raw"
			reftasks=$(drgn_val tasks "$work/out/$tag.raw")
			refok=$([ "$(drgn_val release "$work/out/$tag.raw")" = "$kver" ] &&
				[ "$(drgn_val panic "$work/out/$tag.raw")" = 1 ] && [ "${reftasks:-0}" -gt 1 ] && echo 1)
			plain=$(drgn_why "$work/out/$tag.raw")
		fi
		no=$(unreadable "$rd" "$kver")
		# A vmlinux that is not this kernel's fails whatever the reader:
		# its own banner must name the vmcore's release. (crash's "do not
		# match" does not tell: crash 8.0.2 says it of 7.3's pinned vmlinux,
		# which crash 9.0.2 and both drgn read the same vmcore with.)
		[ "$vml_ok" = 1 ] || no=
		if [ -z "$refok" ]; then
			if [ -n "$no" ]; then
				all_cases skip1 "$rd" "$vm" "$no; on the raw vmcore: $plain"
			else
				all_cases badw "$rd" "$vm" "does not read the raw vmcore either (wrong vmlinux?): $plain"
			fi
			continue
		fi
		note=
		[ -n "$flags" ] && note=" (with $flags; without: $plain)"
		[ -n "$no" ] && note="$note (README calls this pair unreadable: update unreadable())"
		ok "$rd/$vm/raw: $reftasks tasks$note"

		for f in $(files); do
			file=$work/$vm.$f
			out=$work/out/$tag.$f
			if [ ! -s "$file" ]; then
				for c in $(checks_of "$rd"); do bad "$rd/$vm/$f/$c: no saved file"; done
				continue
			fi
			if [ "${rd%%-*}" = crash ]; then
				crash_run "$where" "$flags" "$vml" "$file" "$out"
				rc=$?
				read -r l b n < <(crash_judge "$out")
				why=$(crash_why "$out" $rc)
				[ "$l" = 1 ] && ok "$rd/$vm/$f/log" || bad "$rd/$vm/$f/log: no panic line: $why"
				[ "$b" = 1 ] && ok "$rd/$vm/$f/bt" || bad "$rd/$vm/$f/bt: no sysrq_handle_crash and panic frames: $why"
				[ "$n" = "$reftasks" ] && ok "$rd/$vm/$f/ps" ||
					bad "$rd/$vm/$f/ps: $n tasks, the raw vmcore has $reftasks: $why"
			else
				drgn_run "$where" "$vml" "$file" "$out"
				why=$(drgn_why "$out")
				v=$(drgn_val release "$out")
				[ "$v" = "$kver" ] && ok "$rd/$vm/$f/release" || bad "$rd/$vm/$f/release: '$v', want $kver: $why"
				[ "$(drgn_val panic "$out")" = 1 ] && ok "$rd/$vm/$f/log" ||
					bad "$rd/$vm/$f/log: no panic line in the printk log: $why"
				n=$(drgn_val tasks "$out")
				[ "${n:-}" = "$reftasks" ] && ok "$rd/$vm/$f/tasks" ||
					bad "$rd/$vm/$f/tasks: ${n:-no} tasks, the raw vmcore has $reftasks: $why"
			fi
		done
	done
	[ -n "${KEEP:-}" ] || rm -f "$work/$vm".L*.kdump "$work/$vm".L*.elf
done
finish
