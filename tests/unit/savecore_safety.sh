#!/bin/bash
# save --dir against what others can put in DIR, black-box. Each group is a
# class of inputs, with the reported example first:
#   max    --max prunes by save order, never the dump just saved, and only
#          directories kdumpinit wrote (marker, owner, a real directory);
#   link   links planted in DIR are never followed: neither pruning nor
#          the cleanup of a partial save deletes anything elsewhere; a DIR
#          others could rearrange is refused;
#   name   a crash time that is no date gets unknown-time-SEQ; a name
#          already taken (by anything, a dangling link too) is never
#          replaced;
#   space  the free-space check is an upper bound for ELF and raw kdump
#          (raw pages, kdump bitmaps of a high address), an estimate from
#          the LZ4 size for zlib kdump; --min-free holds, also while
#          writing when the estimate falls short;
#   dedup  a dump already in DIR is not saved again, but only a copy in a
#          directory of the saver's own, with a marker exactly kdumpinit's
#          and its vmcore, counts as one;
#   lock   one save --dir into DIR at a time: a second waits a bounded
#          time, then says so (exit 1); the lock file is never followed
#          through a link nor taken from another user;
#   once   each failure is said once.
# Needs root: tmpfs mounts, and savecore run as other users (setpriv, by
# numeric uid, no account needed). fs.protected_symlinks is 0 while it runs
# (restored after) so that the kernel's protection is not what saves us.
set -u
cd "$(dirname "$0")/../.."
K=${KDUMPINIT:-$PWD/build/kdumpinit}
MK=${MKVMCORE:-$PWD/build/tools/mkvmcore}
W=$(mktemp -d "${TMPDIR:-/tmp}/kdi-safety.XXXXXX")
U1=61011	# saves
U2=61012	# plants things in shared directories
pass=0 fail=0
# T=GLOB (make check-unit T=...): only the checks it names are counted and
# shown; the set-up between them still runs.
T=${T:-}
shopt -s extglob
ok() { [[ -z $T || $1 == $T ]] || return 0; echo "ok $1"; pass=$((pass + 1)); }
bad() { [[ -z $T || $1 == $T ]] || return 0; echo "FAIL $1: $2"; fail=$((fail + 1)); }
# check NAME COMMAND...; a compound condition goes in as eval '...'.
check() { local n=$1; shift; if "$@"; then ok "$n"; else bad "$n" "${why:-condition false}"; fi; why=; }
as() { local u=$1; shift; setpriv --reuid "$u" --regid "$u" --clear-groups "$@"; }
old_ps=$(sysctl -n fs.protected_symlinks 2>/dev/null)
cleanup() {
	for m in "$W"/mnt*; do mountpoint -q "$m" 2>/dev/null && umount "$m"; done
	[ -n "$old_ps" ] && sysctl -qw fs.protected_symlinks="$old_ps"
	rm -rf "$W"
}
trap cleanup EXIT
chmod 755 "$W"
if [ "$(id -u)" != 0 ] || ! sysctl -qw fs.protected_symlinks=0; then
	echo "FAIL setup: needs root (setpriv, tmpfs, fs.protected_symlinks)"
	echo "0 passed, 1 failed, 0 skipped"
	exit 1
fi

# dump IMG CRASHTIME [mkvmcore args]: a captured synthetic dump. $edit,
# if set, is a sed expression applied to the vmcore first.
edit=
dump() {
	local img=$1 t=$2
	shift 2
	"$MK" -o "$W/v.core" --mem 8M --seed 5 --crashtime "$t" "$@" >/dev/null &&
		{ [ -z "$edit" ] || LC_ALL=C sed -i "$edit" "$W/v.core"; } &&
		"$K" capture --vmcore "$W/v.core" --output "$W/$img" --level 1 >/dev/null 2>&1 &&
		rm -f "$W/v.core"
}
dump A.img 1750000000 && dump A2.img 1750000000 && dump B.img 1760000000 &&
	dump slow.img 1750000000 --mem 128M && dump C.img 946684800 &&
	dump big.img 99999999999999999 &&
	edit='s/CRASHTIME=1750000000/CRASHTIMX=1750000000/' dump none.img 1750000000 &&
	edit='s/CRASHTIME=1750000000/CRASHTIME=17500000x0/' dump junk.img 1750000000 &&
	dump sparse.img 1750000000 --ram 0:8M,0x4000000000:8M &&
	dump space.img 1750000000 --mem 32M ||
	{ echo "FAIL setup: mkvmcore/capture"; echo "0 passed, 1 failed, 0 skipped"; exit 1; }
# A2 is another crash at A's time (another capture: another dump).
SA=2025-06-15-15:06:40 SB=2025-10-09-08:53:20 SC=2000-01-01-00:00:00
fresh() { cp "$W/$1" "$W/cur-$1"; chmod 666 "$W/cur-$1"; echo "$W/cur-$1"; }
save() { local img=$1; shift; "$K" save "$(fresh "$img")" "$@"; }
errors() { grep -c "error:" "$W/out"; }
victim() {	# DIR: files with the names savecore writes, elsewhere
	mkdir -p "$1" && for f in vmcore info.txt dmesg.txt; do echo keep >"$1/$f"; done
}
intact() { for f in vmcore info.txt dmesg.txt; do [ "$(cat "$1/$f" 2>/dev/null)" = keep ] || return 1; done; }

# ---- max: newest means last saved, not the crash clock ----
D=$W/max1
for i in A B C; do save $i.img --dir "$D" --max 2 >>"$W/out.max1" 2>&1; done
why="$(ls "$D" | tr '\n' ' ')"
check "max: a dump whose crash time is older (dead RTC, 2000) is kept when saved last" test -d "$D/$SC"
check "max: ... and the first saved is the one removed" test ! -e "$D/$SA" -a -d "$D/$SB"
check "max: ... never 'removed' the dump it had just saved" \
	test -z "$(grep "removed old dump.*$SC" "$W/out.max1")"
check "max: the save order is in DIR/NAME/.kdumpinit" \
	test "$(head -n 1 "$D/$SC/.kdumpinit" 2>/dev/null)" = "kdumpinit save 3"

D=$W/max2
mkdir -p "$D"/2099-01-01-00:00:0{0,1}
victim "$D/2099-01-01-00:00:00"
save A.img --dir "$D" --max 1 >"$W/out" 2>&1; rc=$?
why="exit $rc: $(cat "$W/out")"
check "max: planted future names (mkdir DIR/2099-...) do not get the new dump removed" \
	test $rc = 0 -a -f "$D/$SA/vmcore"
check "max: directories without kdumpinit's marker are never pruned" \
	eval 'test -d "$D/2099-01-01-00:00:01" && intact "$D/2099-01-01-00:00:00"'

# Markers that are not exactly kdumpinit's, in directories of the saver.
D=$W/max3
mkdir -p "$D"
save A.img --dir "$D" >/dev/null 2>&1
for n in 1 2 3 4 5; do mkdir -m 700 "$D/1999-01-01-00:00:0$n"; victim "$D/1999-01-01-00:00:0$n"; done
printf 'kdumpinit save 01\n' >"$D/1999-01-01-00:00:01/.kdumpinit"
printf 'kdumpinit save 1 \n' >"$D/1999-01-01-00:00:02/.kdumpinit"
printf 'kdumpinit save 1' >"$D/1999-01-01-00:00:03/.kdumpinit"
ln -s "$D/$SA/.kdumpinit" "$D/1999-01-01-00:00:04/.kdumpinit"
cp "$D/$SA/.kdumpinit" "$D/1999-01-01-00:00:05/.kdumpinit"
chmod 755 "$D/1999-01-01-00:00:05"	# a marker, but the directory is open to others
save B.img --dir "$D" --max 1 >"$W/out" 2>&1
n=0
for k in 1 2 3 4 5; do intact "$D/1999-01-01-00:00:0$k" && n=$((n + 1)); done
why="$n of 5 intact: $(cat "$W/out")"
check "max: a marker with leading zeros, trailing bytes, no newline, a link, or in a 0755 directory is not kdumpinit's" \
	test $n = 5
check "max: ... while the older real dump is pruned" test ! -e "$D/$SA" -a -d "$D/$SB"

# Shared sticky DIR: another user's directory with a marker claiming a
# later save does not make our dumps look old, and is not touched.
D=$W/max4
mkdir -m 1777 "$D"
as $U2 mkdir -m 700 "$D/1999-01-01-00:00:00"
as $U2 sh -c "printf 'kdumpinit save 99999\n' >'$D/1999-01-01-00:00:00/.kdumpinit'; echo keep >'$D/1999-01-01-00:00:00/vmcore'"
for i in A B; do save $i.img --dir "$D" --max 2 >"$W/out" 2>&1; done
check "max: another user's directory with a forged marker is neither counted nor pruned" \
	test -d "$D/$SA" -a -d "$D/$SB" -a -f "$D/1999-01-01-00:00:00/vmcore"

# ---- link: nothing outside DIR is deleted ----
D=$W/link1
mkdir -m 1777 "$D"
victim "$W/victim1"
as $U2 ln -s "$W/victim1" "$D/1999-01-01-00:00:00"
save A.img --dir "$D" --max 1 >"$W/out" 2>&1; rc=$?
why="exit $rc: $(cat "$W/out")"
check "link: --max does not follow a link planted in DIR (root saves)" intact "$W/victim1"
check "link: ... the save itself succeeds" test $rc = 0 -a -f "$D/$SA/vmcore"

# The same as an unprivileged saver, its own files the target.
D=$W/link2
mkdir -m 1777 "$D"
mkdir -m 755 "$W/u1"
victim "$W/u1/victim"
chown -R $U1:$U1 "$W/u1"
as $U2 ln -s "$W/u1/victim" "$D/1999-01-01-00:00:00"
f=$(fresh A.img)
chown $U1 "$f"
as $U1 "$K" save "$f" --dir "$D" --max 1 >"$W/out" 2>&1; rc=$?
why="exit $rc: $(cat "$W/out")"
check "link: --max does not follow a link planted in DIR (uid $U1 saves)" intact "$W/u1/victim"
check "link: ... the save succeeds, owned by the saver" \
	test $rc = 0 -a "$(stat -c %u "$D/$SA/vmcore" 2>/dev/null)" = $U1

# A link at the name of the partial directory.
D=$W/link3
mkdir -m 1777 "$D"
victim "$W/victim3"
as $U2 ln -s "$W/victim3" "$D/$SA.partial"
save A.img --dir "$D" >"$W/out" 2>&1; rc=$?
why="exit $rc: $(cat "$W/out")"
check "link: the leftover cleanup does not follow a link at NAME.partial" intact "$W/victim3"
check "link: ... the dump is saved anyway, the link left alone" \
	test $rc = 0 -a -f "$D/$SA/vmcore" -a -L "$D/$SA.partial"

# A link to one of our own dumps kept elsewhere.
D=$W/link4
save A.img --dir "$W/elsewhere" >/dev/null 2>&1
mkdir "$D"
ln -s "$W/elsewhere/$SA" "$D/1999-01-01-00:00:00"
save B.img --dir "$D" --max 1 >"$W/out" 2>&1
check "link: a link to a real kdumpinit dump elsewhere is not pruned through" \
	test -f "$W/elsewhere/$SA/vmcore" -a -L "$D/1999-01-01-00:00:00"

# A leftover partial directory of ours is cleared and reused.
D=$W/link5
mkdir -p -m 700 "$D/$SA.partial"
echo old >"$D/$SA.partial/.vmcore.tmp"
save A.img --dir "$D" >"$W/out" 2>&1; rc=$?
check "link: our own leftover NAME.partial is cleared, nothing partial left" \
	test $rc = 0 -a -f "$D/$SA/vmcore" -a -z "$(ls -a "$D" | grep partial)"

# DIRs that let others rearrange what is saved.
D=$W/open
mkdir -m 777 "$D"
f=$(fresh A.img)
"$K" save "$f" --dir "$D" >"$W/out" 2>&1; rc=$?
why="exit $rc: $(cat "$W/out")"
check "link: a DIR others may write (0777, not sticky) is refused (exit 1)" test $rc = 1
check "link: ... with one clear message" grep -q "writable by other users and not sticky" "$W/out"
check "link: ... nothing written, the device keeps its dump" \
	eval 'test -z "$(ls -A "$D")" && "$K" save "$f" --check'
D=$W/theirs
mkdir -m 755 "$D"
chown $U2 "$D"
f=$(fresh A.img)
"$K" save "$f" --dir "$D" >"$W/out" 2>&1; rc=$?
why="exit $rc: $(cat "$W/out")"
check "link: a DIR owned by another user is refused (exit 1)" \
	eval 'test $rc = 1 -a -z "$(ls -A "$D")" && grep -q "belongs to uid $U2" "$W/out"'

# ---- name ----
D=$W/name1
save big.img --dir "$D" >"$W/out" 2>&1; rc=$?
why="exit $rc: $(ls "$D" 2>/dev/null | tr '\n' ' ')"
check "name: CRASHTIME=99999999999999999 is saved as unknown-time-SEQ" \
	test $rc = 0 -a -f "$D/unknown-time-1/vmcore"
check "name: ... never as 1900-..." test -z "$(ls "$D" | grep '^1900')"
save none.img --dir "$D" >"$W/out" 2>&1; rc=$?
why="exit $rc: $(ls "$D" 2>/dev/null | tr '\n' ' ')"
check "name: no CRASHTIME at all is unknown-time-SEQ too, a new name" \
	test $rc = 0 -a -f "$D/unknown-time-2/vmcore" -a -f "$D/unknown-time-1/vmcore"
save junk.img --dir "$D" >"$W/out" 2>&1; rc=$?
why="exit $rc: $(ls "$D" 2>/dev/null | tr '\n' ' ')"
check "name: CRASHTIME that is not a number is unknown-time-SEQ" \
	test $rc = 0 -a -f "$D/unknown-time-3/vmcore"
D=$W/name2
mkdir -p "$D/$SA.1"
echo keep >"$D/$SA.1/mine"
ln -s "$W/nowhere" "$D/$SA"
save A.img --dir "$D" >"$W/out" 2>&1; rc=$?
why="exit $rc: $(cat "$W/out"; ls "$D" | tr '\n' ' ')"
check "name: a dangling link and a directory at the crash-time names are passed over" \
	test $rc = 0 -a -f "$D/$SA.2/vmcore"
check "name: ... both untouched" test -L "$D/$SA" -a "$(ls -A "$D/$SA.1")" = mine
echo x >"$D/$SA.3"
save A2.img --dir "$D" >"$W/out" 2>&1; rc=$?
check "name: a file at the next name is passed over too" \
	test $rc = 0 -a -f "$D/$SA.4/vmcore" -a "$(cat "$D/$SA.3")" = x

# ---- space: a bound (ELF, raw kdump) or an estimate (zlib), --min-free kept ----
# stored MB: what capture wrote (LZ4), the old estimate's base.
stored() { "$K" info "$W/$1" | sed -n 's/.*uncompressed, \([0-9.]*\) MiB stored.*/\1/p'; }
raw() { "$K" info "$W/$1" | sed -n 's/.*(\([0-9.]*\) MiB uncompressed.*/\1/p'; }
mnt() {	# NAME SIZE_MB: a fresh tmpfs
	mkdir -p "$W/$1" && mount -t tmpfs -o size="$2"m tmpfs "$W/$1"
}
mnt mntprobe 1
asks() {	# IMG [ARGS]: the MB save --dir asks for, from its refusal on 1 MiB
	local img=$1; shift
	"$K" save "$W/$img" --dir "$W/mntprobe" --keep-device "$@" 2>&1 |
		sed -n 's/.*needs \(up to\|about\) \([0-9.]*\) MiB.*/\2/p'
}
s=$(stored space.img) r=$(raw space.img)
check "space: the test dump stores much less than it holds (premise: $s MiB of $r MiB)" \
	awk -v s="$s" -v r="$r" 'BEGIN{exit !(r > s + 8)}'
sz=$(awk -v s="$s" 'BEGIN{printf "%d", s + 6}')
j=0
for fmt in "--format elf" "--compress none"; do
	n=mnt$((++j))
	mnt $n "$sz"
	save space.img --dir "$W/$n" $fmt >"$W/out" 2>&1; rc=$?
	why="exit $rc: $(cat "$W/out")"
	check "space: $fmt with room for the stored size only: refused before writing" \
		test $rc = 1 -a -z "$(ls -A "$W/$n")"
	why="$(cat "$W/out")"
	check "space: ... said once, as a refusal" \
		eval 'test "$(errors)" = 1 && grep -q "not saved, the device keeps it" "$W/out"'
	umount "$W/$n"
done
# zlib kdump asks for its LZ4 size, not every page raw: it is saved on a
# tmpfs between the two (the refusal the old bound gave here was wrong).
est=$(asks space.img --format kdump) rawb=$(asks space.img --compress none)
sz=$(awk -v e="$est" -v r="$rawb" 'BEGIN{printf "%d", (e + r) / 2}')
check "space: premise: zlib kdump estimate $est MiB < tmpfs $sz MiB < raw bound $rawb MiB" \
	awk -v e="$est" -v r="$rawb" -v z="$sz" 'BEGIN{exit !(e > 0 && e < z && z < r)}'
mnt mntz "$sz"
save space.img --dir "$W/mntz" --format kdump >"$W/out" 2>&1; rc=$?
why="exit $rc: $(cat "$W/out")"
check "space: zlib kdump that fits its estimate but not the raw bound: saved" \
	test $rc = 0 -a -f "$W/mntz/$SA/vmcore" -a "$(errors)" = 0
"$K" save "$W/cur-space.img" --check; rc=$?
check "space: ... and the device marked saved" test $rc = 1
umount "$W/mntz"
# A dump at a high physical address: bitmaps of 2 x 8 MiB for 16 MiB of RAM.
s=$(stored sparse.img)
mnt mntbm "$(awk -v s="$s" 'BEGIN{printf "%d", s + 8}')"
save sparse.img --dir "$W/mntbm" >"$W/out" 2>&1; rc=$?
why="exit $rc: $(cat "$W/out")"
check "space: kdump bitmaps that outgrow the pages (RAM at 256 GiB) are counted: refused before writing" \
	eval 'test $rc = 1 -a -z "$(ls -A "$W/mntbm")" && grep -q "not saved, the device keeps it" "$W/out"'
umount "$W/mntbm"
# The bound is one: what ELF and raw kdump write fits in it (less the 4
# MiB kept for the filesystem), for the sparse dump and for one without
# zero pages in 7 segments. The zlib estimate is no bound (LZ4 compresses
# a page knowing the block's pages before it, zlib one page alone), so
# for it the 4 MiB margin is included; space.img's estimate is 62 KB
# short of its 7.5 MB, and rep.img below is the far end.
dump dense.img 1750000000 --mem 32M --segments 7 --zero-pct 0
for img in sparse.img dense.img; do
	for fmt in "--format elf" "--compress none" "--format kdump"; do
		need=$(asks "$img" $fmt)
		rm -f "$W/o"
		"$K" save "$W/$img" --output "$W/o" $fmt >/dev/null 2>&1
		act=$(stat -c %s "$W/o" 2>/dev/null || echo 0)
		m=4194304 what=bound
		[ "$fmt" = "--format kdump" ] && m=0 what="estimate with its margin"
		why="asks ${need:-none} MiB, wrote $act bytes"
		check "space: $img $fmt: the file written fits the $what" \
			awk -v n="${need:-0}" -v a="$act" -v m=$m 'BEGIN{exit !(a > 0 && n * 1048576 - m + 52429 >= a)}'
	done
done
# --min-free: what is left after the save.
mnt mntmf 64
save space.img --dir "$W/mntmf" --format elf --min-free 45M >"$W/out" 2>&1; rc=$?
left=$(df -B1 --output=avail "$W/mntmf" | tail -n 1)
why="exit $rc, $left bytes left: $(cat "$W/out")"
check "space: --min-free 45M on 64 MB, ELF: never less than 45M left (refused)" \
	test "$left" -ge $((45 << 20)) -a $rc = 1
save space.img --dir "$W/mntmf" --format elf --min-free 20M >"$W/out" 2>&1; rc=$?
left=$(df -B1 --output=avail "$W/mntmf" | tail -n 1)
why="exit $rc, $left bytes left: $(cat "$W/out")"
check "space: --min-free 20M on 64 MB, ELF: saved, at least 20M left" \
	test $rc = 0 -a "$left" -ge $((20 << 20))
umount "$W/mntmf"
# Where the estimate falls short: every page the same incompressible 4
# KiB, which capture's LZ4 stores as references to the page before (0.4
# MB for 33.6 MB) and zlib, a page at a time, stores raw. The check up
# front passes, and the writer stops when going on would eat into
# --min-free: nothing left, the device not marked.
"$MK" -o "$W/v.core" --mem 32M --seed 5 --crashtime 1750000000 --zero-pct 0 >/dev/null
u() { od -An -t "u$3" -j "$2" -N "$3" "$1" | tr -d ' '; }
head -c 4096 /dev/urandom >"$W/page"
for i in 1 2 3 4 5 6 7 8 9 10 11 12 13; do cat "$W/page" "$W/page" >"$W/p2"; mv "$W/p2" "$W/page"; done
phoff=$(u "$W/v.core" 32 8) phnum=$(u "$W/v.core" 56 2)
for ((i = 0; i < phnum; i++)); do
	ph=$((phoff + 56 * i))
	[ "$(u "$W/v.core" $ph 4)" = 1 ] || continue	# PT_LOAD
	dd if="$W/page" of="$W/v.core" bs=1M seek="$(u "$W/v.core" $((ph + 8)) 8)" \
		count="$(u "$W/v.core" $((ph + 32)) 8)" iflag=count_bytes oflag=seek_bytes \
		conv=notrunc status=none
done
"$K" capture --vmcore "$W/v.core" --output "$W/rep.img" --level 1 >/dev/null 2>&1
rm -f "$W/v.core" "$W/page"
est=$(asks rep.img) rawb=$(asks rep.img --compress none)
check "space: premise: same-page dump asks about $est MiB as zlib kdump, writes over $rawb MiB raw" \
	awk -v e="$est" -v r="$rawb" 'BEGIN{exit !(e > 0 && e + 8 < 24 && r - 4 > 24 - 8)}'
mnt mntrun 24
save rep.img --dir "$W/mntrun" --min-free 8M >"$W/out" 2>&1; rc=$?
why="exit $rc: $(cat "$W/out")"
check "space: zlib output past the estimate: stopped mid-way at --min-free 8M, exit 1, said once" \
	eval 'test $rc = 1 -a "$(errors)" = 1 &&
	      grep -q "mntrun: free space fell below --min-free 8.0 MiB while saving; nothing saved, the dump stays on the device" "$W/out"'
why="$(ls -A "$W/mntrun")"
check "space: ... no vmcore (no directory) left in DIR" test -z "$(ls -A "$W/mntrun")"
"$K" save "$W/cur-rep.img" --check; rc=$?
check "space: ... the device not marked saved" test $rc = 0
save rep.img --dir "$W/mntrun" --min-free 8M --threads 1 >"$W/out" 2>&1; rc=$?
why="exit $rc: $(cat "$W/out")"
check "space: ... the same with one thread" \
	eval 'test $rc = 1 -a "$(errors)" = 1 -a -z "$(ls -A "$W/mntrun")" && grep -q "fell below --min-free" "$W/out"'
save rep.img --dir "$W/mntrun" >"$W/out" 2>&1; rc=$?
why="exit $rc: $(cat "$W/out")"
check "space: ... without --min-free the write fails at ENOSPC: exit 1, said once, nothing left" \
	test $rc = 1 -a "$(errors)" = 1 -a -z "$(ls -A "$W/mntrun")"
umount "$W/mntrun" "$W/mntprobe"

# ---- dedup: only our own complete copies count ----
D=$W/ref
save A.img --dir "$D" >/dev/null 2>&1
mark=$(cat "$D/$SA/.kdumpinit")
# Another user's directory in a shared sticky DIR, with A's marker and a
# vmcore: not ours, so A is not in DIR.
D=$W/dedup1
mkdir -m 1777 "$D"
as $U2 mkdir -m 700 "$D/$SA"
as $U2 sh -c "printf '%s\n' '$mark' >'$D/$SA/.kdumpinit'; echo keep >'$D/$SA/vmcore'"
save A.img --dir "$D" >"$W/out" 2>&1; rc=$?
why="exit $rc: $(cat "$W/out")"
check "dedup: another user's directory with a copy of our marker does not stop the save" \
	test $rc = 0 -a -f "$D/$SA.1/vmcore" -a "$(cat "$D/$SA/vmcore")" = keep
# Our own directories, each with A's marker made not quite kdumpinit's, or
# a 0755 directory, or a link to a real copy elsewhere.
D=$W/dedup2
mkdir -m 700 "$D"
for k in 1 2 3 4; do mkdir -m 700 "$D/1999-01-01-00:00:0$k"; echo keep >"$D/1999-01-01-00:00:0$k/vmcore"; done
printf '%s \n' "$mark" >"$D/1999-01-01-00:00:01/.kdumpinit"
printf '%s\n' "$mark" | sed '2s/ [0-9a-f]\{16\} / 0x& /; 2s/0x /0x/' >"$D/1999-01-01-00:00:02/.kdumpinit"
printf '%s\n' "$mark" | sed '2s/complete/COMPLETE/' >"$D/1999-01-01-00:00:03/.kdumpinit"
printf '%s\n' "$mark" >"$D/1999-01-01-00:00:04/.kdumpinit"
chmod 755 "$D/1999-01-01-00:00:04"
ln -s "$W/ref/$SA" "$D/1999-01-01-00:00:05"
save A.img --dir "$D" >"$W/out" 2>&1; rc=$?
why="exit $rc: $(cat "$W/out")"
check "dedup: markers with trailing bytes, 0x, other words, in a 0755 directory or behind a link do not count" \
	test $rc = 0 -a -f "$D/$SA/vmcore"
check "dedup: premise: the same marker in a directory of ours counts" \
	eval 'mkdir -m 700 "$W/dedup3" && cp -a "$W/ref/$SA" "$W/dedup3/" &&
	      save A.img --dir "$W/dedup3" 2>&1 | grep -q "already saved in"'

# ---- lock: one save into DIR at a time ----
D=$W/lock1
mkdir -m 700 "$D"
# hold SECONDS: DIR's lock held from here, by a process that is itself
# the holder (killing it lets go; flock(1)'s child would keep it).
hold() { ( exec 9>>"$D/.kdumpinit.lock" && flock 9 && exec sleep "$1" ) & holder=$!; }
hold 30
sleep 0.5
f=$(fresh A.img)
t0=$(date +%s)
"$K" save "$f" --dir "$D" >"$W/out" 2>&1; rc=$?
took=$(($(date +%s) - t0))
kill $holder; wait $holder 2>/dev/null
why="exit $rc after ${took}s: $(cat "$W/out")"
check "lock: a save while another holds DIR waits, then gives up: exit 1, said once" \
	eval 'test $rc = 1 -a "$(errors)" = 1 -a $took -ge 9 -a $took -le 20 &&
	      grep -q "another save into $D is still running after 10 s" "$W/out"'
check "lock: ... nothing written, the device keeps its dump" \
	eval 'test "$(ls -A "$D")" = .kdumpinit.lock && "$K" save "$f" --check'
hold 2
sleep 0.5
"$K" save "$f" --dir "$D" >"$W/out" 2>&1; rc=$?
wait $holder
why="exit $rc: $(cat "$W/out")"
check "lock: a save while another holds DIR for 2 s waits, then saves (exit 0)" \
	eval 'test $rc = 0 -a -f "$D/$SA/vmcore" && grep -q "another save into $D is running: waiting" "$W/out"'
check "lock: ... and removes the lock file as it ends" test ! -e "$D/.kdumpinit.lock"
# Two saves of one device at once, the second started while the first
# writes: the second waits, then finds the dump saved.
D=$W/lock2
f=$(fresh slow.img)
"$K" save "$f" --dir "$D" --threads 1 >"$W/out1" 2>&1 &
first=$!
for i in $(seq 200); do [ -e "$D/$SA.partial" ] && break; sleep 0.01; done
why="the first save's $SA.partial never appeared"
check "lock: premise: the second save starts while the first writes" test -e "$D/$SA.partial"
"$K" save "$f" --dir "$D" >"$W/out2" 2>&1; rc2=$?
wait $first; rc1=$?
why="exits $rc1 $rc2: $(cat "$W/out1" "$W/out2"; ls -A "$D" | tr '\n' ' ')"
check "lock: two saves at once: both exit 0, one directory, nothing partial left" \
	test $rc1 = 0 -a $rc2 = 0 -a "$(ls -A "$D")" = "$SA"
check "lock: ... the second waited, then found the dump saved, and marked by the first" \
	eval 'grep -q "waiting up to" "$W/out2" && grep -q "already saved in $D/$SA: not saved again" "$W/out2" &&
	      grep -q "its dump was marked saved meanwhile (another save)" "$W/out2"'
# What others may put at the lock's name in a shared sticky DIR.
D=$W/lock3
mkdir -m 1777 "$D"
as $U2 sh -c "umask 022; : >'$D/.kdumpinit.lock'"
f=$(fresh A.img)
"$K" save "$f" --dir "$D" >"$W/out" 2>&1; rc=$?
why="exit $rc: $(cat "$W/out")"
check "lock: another user's lock file is not taken (exit 1, said once, nothing written)" \
	eval 'test $rc = 1 -a "$(errors)" = 1 -a "$(ls -A "$D")" = .kdumpinit.lock &&
	      grep -q "kdumpinit.lock" "$W/out" && "$K" save "$f" --check'
D=$W/lock4
mkdir -m 1777 "$D"
echo keep >"$W/victimlock"
chmod 644 "$W/victimlock"
as $U2 ln -s "$W/victimlock" "$D/.kdumpinit.lock"
f=$(fresh A.img)
"$K" save "$f" --dir "$D" >"$W/out" 2>&1; rc=$?
why="exit $rc: $(cat "$W/out")"
check "lock: a link at the lock's name is not followed (exit 1, said once, its target untouched)" \
	eval 'test $rc = 1 -a "$(errors)" = 1 -a "$(cat "$W/victimlock")" = keep &&
	      test "$(stat -c %a "$W/victimlock")" = 644 -a -L "$D/.kdumpinit.lock"'

# ---- once: each failure is said once ----
cp "$W/A.img" "$W/dmg.img"
printf '\xff\xff\xff\xff' | dd of="$W/dmg.img" bs=1 seek=$(((1 << 20) + 124)) conv=notrunc 2>/dev/null
"$K" save "$W/dmg.img" --dir "$W/once" >"$W/out" 2>&1; rc=$?
why="exit $rc: $(cat "$W/out")"
# START's payload broken: the dump is read from the next intact chunk on
# (a damaged dump, not an unreadable one), saved as incomplete, the
# damage said once and no error.
check "once: a damaged START: exit 5, the damage said once" \
	test $rc = 5 -a "$(errors)" = 0 -a "$(grep -c 'lost to damage' "$W/out")" = 1
# The first 4 KiB zeroed: START and the metadata gone, nothing to save
# from but a dump all the same: said once.
cp "$W/A.img" "$W/dmg4.img"
dd if=/dev/zero of="$W/dmg4.img" bs=4096 seek=256 count=1 conv=notrunc status=none
"$K" save "$W/dmg4.img" --dir "$W/once4" >"$W/out" 2>&1; rc=$?
why="exit $rc: $(cat "$W/out")"
check "once: unreadable dump metadata: exit 5, said once" test $rc = 5 -a "$(errors)" = 1
(trap '' XFSZ; ulimit -f 2048; exec "$K" save "$(fresh A.img)" --dir "$W/once2" --format elf) \
	>"$W/out" 2>&1; rc=$?
why="exit $rc: $(cat "$W/out")"
check "once: a write that fails mid-way (EFBIG): exit 1, said once, nothing left" \
	test $rc = 1 -a "$(errors)" = 1 -a -z "$(ls -A "$W/once2")"

echo "$pass passed, $fail failed, 0 skipped"
[ "$fail" = 0 ]
