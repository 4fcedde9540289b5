#!/bin/bash
# The boot cycle, host side, black-box and without loading anything:
#   kdumpinit status against a fake /sys, /run and /etc (--root): loaded or
#     not, no reservation, a stale image (each reason), the device missing,
#     unclaimed, claimed and empty, holding a dump not saved and saved (a
#     synthetic vmcore through capture and save --dir), the device from
#     --dev, the file or firmware (SMBIOS type 11), each exit code;
#   kdumpinit arm --dry-run: nr_cpus= once, --cpus N and auto's rule, the
#     arguments carried and disable_cpu_apicid= from a fake /proc;
#   systemd-analyze verify on the units;
#   dist/kdumpinit-arm and the kernel hooks in a fake root with stub
#     kdumpinit and mkinitramfs: rebuild only when stale, arm after.
set -u
cd "$(dirname "$0")/../.."
top=$PWD
. tests/lib/suite.sh status
MK=$MKVMCORE
# expect NAME WANT-RC PATTERN CMD...: the exit code, and PATTERN in stdout.
expect() {
	local n=$1 want=$2 pat=$3
	shift 3
	"$@" >"$W/out" 2>"$W/err"
	local rc=$?
	if [ "$rc" != "$want" ]; then
		bad "$n" "exit $rc, wanted $want: $(tr '\n' '|' <"$W/out") $(tr '\n' '|' <"$W/err")"
	elif [ -n "$pat" ] && ! grep -qE -- "$pat" "$W/out"; then
		bad "$n" "no /$pat/ in: $(tr '\n' '|' <"$W/out")"
	else
		ok "$n"
	fi
}
t() { [ "$1" = "$2" ] && ok "$3" || bad "$3" "got $1, wanted $2: $(tr '\n' '|' <"$W/out") $(tr '\n' '|' <"${LOG:-/dev/null}" 2>/dev/null)"; }

# A fake md array in ROOT's sysfs (config/stack.c reads it): used by
# status and arm --dry-run below.
mdfake() { # ROOT NAME LEVEL: an array over vdb (serial dumpdisk), slot 0, data at 0
	local A=$1
	shift
	local d=$A/sys/devices/virtual/block/$1
	mkdir -p "$d/md/dev-vdb" "$A/sys/class/block" "$A/sys/devices/pci/vdb/holders"
	echo 204800 >"$d/size"
	echo "$2" >"$d/md/level"
	echo 1.0 >"$d/md/metadata_version"
	echo 1 >"$d/md/raid_disks"
	echo in_sync >"$d/md/dev-vdb/state"
	echo 0 >"$d/md/dev-vdb/offset"
	echo "9:0" >"$d/dev"
	ln -sfn "$d/md/dev-vdb" "$d/md/rd0"
	ln -sfn "$d" "$A/sys/class/block/$1"
	ln -sfn "$A/sys/devices/pci/vdb" "$A/sys/class/block/vdb"
	echo dumpdisk >"$A/sys/devices/pci/vdb/serial"
	echo "252:16" >"$A/sys/devices/pci/vdb/dev"
	rm -f "$A/sys/devices/pci/vdb/holders/"*
	ln -sfn "$d" "$A/sys/devices/pci/vdb/holders/$1"
	mkdir -p "$A/sys/dev/block"
	ln -sfn "$d" "$A/sys/dev/block/9:0"
	ln -sfn "$A/sys/devices/pci/vdb" "$A/sys/dev/block/252:16"
}

# ---- kdumpinit status ------------------------------------------------
R=$W/root
kver=$(uname -r)
mkdir -p "$R/sys/kernel" "$R/run" "$R/etc/default" "$W/boot"
sys() { echo "$2" >"$R/sys/kernel/$1"; }
# record KERNEL IMAGE [RELEASE]: what arm writes after a load.
record() {
	mkdir -p "$R/run/kdumpinit"
	{
		echo "# kdumpinit arm: what it loaded, for kdumpinit status"
		echo "release ${3:-$kver}"
		echo "kernel $1"
		echo "kernel_mtime $(stat -c %Y "$1")"
		echo "kernel_size $(stat -c %s "$1")"
		echo "initramfs $2"
		echo "initramfs_mtime $(stat -c %Y "$2")"
		echo "initramfs_size $(stat -c %s "$2")"
		echo "cpus 2"
		echo "cmdline reset_devices nr_cpus=2 irqpoll panic=10 rdinit=/init${ARMED_APPEND:+ $ARMED_APPEND}"
	} >"$R/run/kdumpinit/armed"
}
st() { "$K" status --root "$R" "$@"; }
# mkimg OUT ARGS...: a real image (kdumpinit-mkinitramfs, this binary as
# /init), dated after the kernel and the settings as $img is.
mkimg() {
	local o=$1
	shift
	"$top/initramfs/mkinitramfs" -k "$kver" -b "$K" -o "$o" "$@" >"$W/mk.out" 2>&1 ||
		bad "mkinitramfs $*" "$(tail -n 2 "$W/mk.out" | tr '\n' '|')"
	touch -d '2026-01-01 11:00' "$o"
}

vml=$W/boot/vmlinuz img=$W/boot/img dev=$W/dev.img
echo kernel >"$vml"
echo image >"$img"
touch -d '2026-01-01 10:00' "$vml"
touch -d '2026-01-01 11:00' "$img"
"$K" format "$dev" --size 4M --label dump >/dev/null 2>&1 || bad setup "format $dev"

sys kexec_crash_size 0
sys kexec_crash_loaded 0
expect "status: no reservation, nothing loaded: exit 6" 6 '^reservation +none' st --dev "$dev"
sys kexec_crash_size 268435456
expect "status: a reservation, nothing loaded: exit 6" 6 '^crash kernel +not loaded' st --dev "$dev"
expect "status: it says the reservation's size" 6 '^reservation +256.0 MiB' st --dev "$dev"
record "$vml" "$img"
expect "status: a record but nothing loaded: exit 6, 'no longer loaded'" 6 'no longer loaded' st --dev "$dev"
sys kexec_crash_loaded 1
expect "status: loaded, current, device claimed and empty: exit 0" 0 '^image +current' st --dev "$dev"
expect "status: the device line says claimed, no dump" 0 '^device .*claimed, no dump' st --dev "$dev"
expect "status: settings say --dev" 0 "dev=$dev \(--dev\)" st --dev "$dev"

# Stale: each reason.
record "$vml" "$img" 5.10.0-other
expect "status: armed under another release: exit 7" 7 'stale: armed under 5.10.0-other, running' st --dev "$dev"
touch -d '2026-01-01 12:00' "$vml"
record "$vml" "$img"
expect "status: image older than the kernel: exit 7" 7 'stale: the image is older than the kernel' st --dev "$dev"
touch -d '2026-01-01 10:00' "$vml"
record "$vml" "$img"
echo "# newer" >"$R/etc/default/kdumpinit"
touch -d '2026-01-01 12:00' "$R/etc/default/kdumpinit"
expect "status: image older than /etc/default/kdumpinit: exit 7" 7 'stale: the image is older than /etc/default/kdumpinit' st --dev "$dev"
touch -d '2026-01-01 10:30' "$R/etc/default/kdumpinit"
expect "status: config older than the image: current" 0 '^image +current' st --dev "$dev"
echo image-rebuilt >"$img"
touch -d '2026-01-01 11:00' "$img"
expect "status: image changed since armed: exit 7" 7 'stale: the image .* changed since it was armed' st --dev "$dev"
record "$vml" "$img"
echo kernel-new >>"$vml"
touch -d '2026-01-01 10:00' "$vml"
expect "status: kernel changed since armed: exit 7" 7 'stale: the kernel .* changed since it was armed' st --dev "$dev"
record "$vml" "$img"
expect "status: --image names another image: exit 7" 7 "armed $img, but --image names $W/other-$kver.img" \
	st --dev "$dev" --image "$W/other-%v.img"
expect "status: --image with %v naming the armed one: current" 0 '^image +current' st --dev "$dev" --image "$img"
echo "KDUMPINIT_IMAGE=$W/from-file-%v.img" >"$R/etc/default/kdumpinit"
touch -d '2026-01-01 10:30' "$R/etc/default/kdumpinit"
expect "status: KDUMPINIT_IMAGE from the file names another: exit 7" 7 \
	"but /etc/default/kdumpinit names $W/from-file-$kver.img" st --dev "$dev"
rm -f "$R/etc/default/kdumpinit"
rm -f "$R/run/kdumpinit/armed"
expect "status: loaded by someone else (no record): exit 0, image unknown" 0 '^armed image +unknown: not armed by kdumpinit arm' st --dev "$dev"
echo "garbage" >"$R/run/kdumpinit/armed"
expect "status: a damaged record: unknown, not a crash" 0 'not a record kdumpinit arm wrote' st --dev "$dev"
record "$vml" "$img"

# The device.
expect "status: --dev names nothing there: exit 4" 4 '^device .*missing' st --dev "$W/no-such-dev"
head -c 4194304 /dev/zero >"$W/zero.img"
expect "status: an unclaimed file: exit 4" 4 '^device .*unclaimed' st --dev "$W/zero.img"
expect "status: no device anywhere: exit 4" 4 '^device +none configured' st
expect "status: LABEL= that matches no device under --root: exit 4" 4 'missing' st --dev LABEL=nothere
printf 'KDUMPINIT_DEVICE="%s"\n' "$dev" >"$R/etc/default/kdumpinit"
touch -d '2026-01-01 10:30' "$R/etc/default/kdumpinit"
ARMED_APPEND="kdumpinit.dev=$dev" record "$vml" "$img"
expect "status: the device from /etc/default/kdumpinit" 0 "dev=$dev \(armed command line\)" st
record "$vml" "$img"
expect "status: the file names a device, the armed command line none: stale (7)" 7 \
	"^armed device +stale: the crash kernel's command line says no kdumpinit.dev=" st
ARMED_APPEND="kdumpinit.dev=$dev" record "$vml" "$img"
expect "status: --dev wins over the file" 4 '\(--dev\)' st --dev "$W/zero.img"
record "$vml" "$img"
rm -f "$R/etc/default/kdumpinit"
# Firmware: an SMBIOS type 11 string, as /sys/firmware/dmi/entries holds it.
mkdir -p "$R/sys/firmware/dmi/entries/11-0"
s="io.systemd.credential:kdumpinit.dev=$dev"
{ printf '\013\005\000\000\001'; printf '%s\000\000' "$s"; } >"$R/sys/firmware/dmi/entries/11-0/raw"
expect "status: the device from firmware (SMBIOS) when the file names none" 0 "dev=$dev \(smbios\)" st
s="io.systemd.credential:kdumpinit.dev=SERIAL=QEMU HARDDISK"
{ printf '\013\005\000\000\001'; printf '%s\000\000' "$s"; } >"$R/sys/firmware/dmi/entries/11-0/raw"
expect "status: a firmware selector with a space is carried whole (not on the command line): looked for as it is" 4 \
	"^device +SERIAL=QEMU HARDDISK \(smbios\): missing" st
s="io.systemd.credential:kdumpinit.dev=$dev"
{ printf '\013\005\000\000\001'; printf '%s\000\000' "$s"; } >"$R/sys/firmware/dmi/entries/11-0/raw"
echo "KDUMPINIT_DEVICE=$W/zero.img" >"$R/etc/default/kdumpinit"
touch -d '2026-01-01 10:30' "$R/etc/default/kdumpinit"
expect "status: the file wins over firmware" 4 '\(/etc/default/kdumpinit\)' st
rm -rf "$R/sys/firmware" "$R/etc/default/kdumpinit"

# A dump waiting, then saved.
if "$MK" -o "$W/v.core" --mem 16M --segments 1 --seed 3 >/dev/null 2>&1 &&
	"$K" capture --vmcore "$W/v.core" --output "$W/dump.img" --level 1 >/dev/null 2>&1; then
	expect "status: an unsaved dump waits: exit 8" 8 'holds a complete dump, not saved yet' st --dev "$W/dump.img"
	sys kexec_crash_loaded 0
	expect "status: not armed outranks an unsaved dump: exit 6" 6 '' st --dev "$W/dump.img"
	sys kexec_crash_loaded 1
	record "$vml" "$W/v.core"
	expect "status: stale outranks an unsaved dump: exit 7" 7 '' st --dev "$W/dump.img" --image "$img"
	record "$vml" "$img"
	expect "status: a missing device outranks stale: exit 4" 4 '' st --dev "$W/gone" --image "$W/x"
	if "$K" save "$W/dump.img" --dir "$W/crash" >/dev/null 2>&1; then
		expect "status: after save --dir the dump is saved: exit 0" 0 'holds a complete dump, saved' st --dev "$W/dump.img"
	else
		bad "status: save --dir" "save failed"
	fi
	# Two crashes before a save: both wait, the older goes first; a
	# device with no room after them says the next crash is lost.
	"$K" format "$W/two.img" --size 30M --label two >/dev/null 2>&1
	for i in 1 2; do
		"$K" capture --vmcore "$W/v.core" --output "$W/two.img" --level 0 >/dev/null 2>&1 ||
			bad "status: capture $i onto two.img" "capture failed"
	done
	expect "status: two unsaved dumps: exit 8, both counted" 8 'holds 2 dumps, 2 not saved yet' st --dev "$W/two.img"
	expect "status: the next save takes dump 1" 8 '^next dump +dump 1 is complete' st --dev "$W/two.img"
	expect "status: room after them for another (30M device): no room line" 8 '' st --dev "$W/two.img"
	grep -q '^room' "$W/out" && bad "status: no room line while there is room" "$(grep '^room' "$W/out")" ||
		ok "status: no room line while there is room"
	for i in 3 4 5 6 7 8; do	# until the device refuses one
		"$K" capture --vmcore "$W/v.core" --output "$W/two.img" --level 0 >/dev/null 2>&1 || break
	done
	expect "status: no room after the unsaved dumps: said, exit 8" 8 '^room +none after the unsaved dumps: a crash now is not captured' \
		st --dev "$W/two.img"
	"$K" save "$W/two.img" --dir "$W/crash-two" >/dev/null 2>&1
	expect "status: all saved: exit 0, 0 not saved" 0 'holds [0-9]+ dumps, 0 not saved yet' st --dev "$W/two.img"
	# Sealing turned on while a dump written in the clear waits: it is
	# named, with the commands that save or discard it, wherever the key
	# is configured (the settings, the armed command line, firmware); the
	# sealed one is not, and nothing is said without a key or once saved.
	"$K" keygen "$W/seal.sec" "$W/seal.pub" >/dev/null 2>&1
	hex=$(cut -d' ' -f2 "$W/seal.pub")
	"$K" format "$W/mix.img" --size 40M >/dev/null 2>&1
	"$K" capture --vmcore "$W/v.core" --output "$W/mix.img" --level 0 >/dev/null 2>&1
	"$K" capture --vmcore "$W/v.core" --output "$W/mix.img" --level 0 --pubkey "$W/seal.pub" >/dev/null 2>&1
	clear1="dump 1 on $W/mix.img is in the clear \(written before sealing was on\): save it \(kdumpinit save $W/mix.img --dir DIR\) or discard it \(kdumpinit format $W/mix.img --force: all its dumps go\)"
	noclear() { ! grep -q "${1:-in the clear}" "$W/out" && ok "$2" || bad "$2" "$(grep "${1:-in the clear}" "$W/out")"; }
	expect "status: no key configured, a clear and a sealed dump wait: exit 8" 8 'holds 2 dumps, 2 not saved yet' st --dev "$W/mix.img"
	noclear '' "status: no key configured: nothing said of dumps in the clear"
	# The key under the root, as kdumpinit-arm reads KDUMPINIT_PUBKEY, and
	# an image that carries it (status checks the armed key too).
	mkdir -p "$R/etc/kdumpinit"
	cp "$W/seal.pub" "$R/etc/kdumpinit/seal.pub"
	printf 'KDUMPINIT_PUBKEY=/etc/kdumpinit/seal.pub\n' >"$R/etc/default/kdumpinit"
	touch -d '2026-01-01 10:30' "$R/etc/default/kdumpinit"
	mkimg "$W/sealed.img" -p "$W/seal.pub"
	record "$vml" "$W/sealed.img"
	expect "status: KDUMPINIT_PUBKEY set: the dump in the clear named, with save and format" 8 "^in the clear +$clear1" st --dev "$W/mix.img"
	noclear 'dump 2 on' "status: KDUMPINIT_PUBKEY set: the sealed dump not named"
	expect "status --clear-dumps: the bare line, exit 8" 8 "^$clear1" "$K" status --root "$R" --clear-dumps --dev "$W/mix.img"
	t "$(wc -l <"$W/out")" 1 "status --clear-dumps: that line only"
	rm -f "$R/etc/default/kdumpinit"
	expect "status --clear-dumps: no key configured: exit 0" 0 '' "$K" status --root "$R" --clear-dumps --dev "$W/mix.img"
	t "$(wc -c <"$W/out")" 0 "status --clear-dumps: no key configured: says nothing"
	mkdir -p "$R/sys/firmware/dmi/entries/11-0"
	s="io.systemd.credential:kdumpinit.pubkey=$hex"
	{ printf '\013\005\000\000\001'; printf '%s\000\000' "$s"; } >"$R/sys/firmware/dmi/entries/11-0/raw"
	expect "status: the key from firmware (SMBIOS): the dump in the clear named" 8 "^in the clear +$clear1" st --dev "$W/mix.img"
	rm -rf "$R/sys/firmware"
	ARMED_APPEND="kdumpinit.pubkey=$hex" record "$vml" "$img"
	expect "status: the key on the armed command line: the dump in the clear named" 8 "^in the clear +$clear1" st --dev "$W/mix.img"
	"$K" save "$W/mix.img" --dir "$W/crash-mix" --key "$W/seal.sec" >/dev/null 2>&1
	expect "status: key configured, every dump saved: exit 0" 0 'holds 2 dumps, 0 not saved yet' st --dev "$W/mix.img"
	noclear '' "status: key configured, the dump in the clear saved: not named"
	record "$vml" "$img"
else
	bad "status: unsaved dump" "mkvmcore or capture failed ($MK)"
fi
# ---- the key the armed crash kernel seals to -------------------------
# Found as its PID 1 finds it: kdumpinit.pubkey= on the armed command
# line, then firmware, then the image's /etc/kdumpinit.conf read whole
# (65536 bytes at most) or not at all; against KDUMPINIT_PUBKEY (under
# the root, as kdumpinit-arm reads it), else the firmware's key. Real
# images, each compression mkinitramfs writes.
keyid() { "$K" keygen "$W/$1.sec" "$W/$1.pub" 2>&1 | sed -n 's/.*: key \([0-9a-f]\{16\}\): .*/\1/p'; }
id1=$(keyid k1) id2=$(keyid k2)
hex1=$(cut -d' ' -f2 "$W/k1.pub") hex2=$(cut -d' ' -f2 "$W/k2.pub")
[ ${#id1} = 16 ] && [ ${#id2} = 16 ] && [ "$id1" != "$id2" ] || bad "keygen" "no key ids ($id1, $id2)"
mkdir -p "$R/etc/kdumpinit"
cp "$W/k1.pub" "$R/etc/kdumpinit/k1.pub"
printf 'KDUMPINIT_PUBKEY=/etc/kdumpinit/k1.pub\n' >"$R/etc/default/kdumpinit"
touch -d '2026-01-01 10:30' "$R/etc/default/kdumpinit"
rerun="run kdumpinit rebuild"
names1="/etc/default/kdumpinit names key $id1: $rerun"
mkimg "$W/k1.img" -p "$W/k1.pub" -z gzip
record "$vml" "$W/k1.img"
expect "status: the image carries the configured key (gzip): sealed to it, exit 0" 0 \
	"^sealing +sealed to key $id1 \($W/k1.img\)$" st --dev "$dev"
mkimg "$W/k2.img" -p "$W/k2.pub"
record "$vml" "$W/k2.img"
expect "status: the image carries another key: stale, both ids, the rearm command, exit 7" 7 \
	"^sealing +stale: the armed crash kernel seals to key $id2 \($W/k2.img\), $names1$" st --dev "$dev"
mkimg "$W/nokey.img" -z lz4
record "$vml" "$W/nokey.img"
expect "status: an image without a key (lz4), one configured: dumps in the clear, stale, exit 7" 7 \
	"^sealing +stale: the armed crash kernel has no key: dumps would be in the clear, $names1$" st --dev "$dev"
ARMED_APPEND="kdumpinit.pubkey=$hex1" record "$vml" "$W/nokey.img"
expect "status: the configured key on the armed command line (dedicated kernel style): sealed, exit 0" 0 \
	"^sealing +sealed to key $id1 \(armed command line\)$" st --dev "$dev"
ARMED_APPEND="kdumpinit.pubkey=$hex2" record "$vml" "$W/k1.img"
expect "status: another key on the armed command line outranks the image's: stale, exit 7" 7 \
	"^sealing +stale: the armed crash kernel seals to key $id2 \(armed command line\), $names1$" st --dev "$dev"
# /etc/kdumpinit.conf by hand (mkinitramfs refuses one over 65536 bytes):
# 65536 bytes is read, one more is not read at all (no dump written).
# conf SIZE: an image whose conf is SIZE bytes, k1's line last.
conf() {
	local d=$W/conf$1
	mkdir -p "$d/etc"
	{ head -c $(($1 - 75)) /dev/zero | tr '\0' '#'; echo; echo "pubkey = $hex1"; } >"$d/etc/kdumpinit.conf"
	(cd "$d" && find . -mindepth 1 | LC_ALL=C sort | cpio -o -H newc -R 0:0 --quiet) | gzip >"$W/conf$1.img"
	touch -d '2026-01-01 11:00' "$W/conf$1.img"
	t "$(stat -c %s "$d/etc/kdumpinit.conf")" "$1" "status: a conf of $1 bytes made"
	record "$vml" "$W/conf$1.img"
}
conf 65536
expect "status: a conf of 65536 bytes with the key last: read whole, sealed, exit 0" 0 \
	"^sealing +sealed to key $id1 " st --dev "$dev"
conf 65537
expect "status: a conf of 65537 bytes: not whole, no dump would be written, exit 7" 7 \
	"^sealing +stale: no dump would be written \($W/conf65537.img: /etc/kdumpinit.conf is 65537 bytes, more than the crash kernel reads \(65536\)\), $names1$" \
	st --dev "$dev"
# Archives one after another, the second compressed: the later entry is
# the one the kernel leaves, either way round.
cat "$W/conf65536.img" >"$W/cat.img"
(cd "$W/conf65536" && printf 'pubkey = %s\n' "$hex2" >etc/kdumpinit.conf && find . -mindepth 1 | cpio -o -H newc --quiet) |
	lz4 -l -q >>"$W/cat.img"
record "$vml" "$W/cat.img"
expect "status: two archives, the later (lz4) names another key: stale, exit 7" 7 \
	"^sealing +stale: the armed crash kernel seals to key $id2 " st --dev "$dev"
# What status cannot read is not vouched for: unknown, stale.
ln -sf "$W/k1.img" "$W/link.img"
record "$vml" "$W/link.img"
expect "status: the armed image is a symbolic link: not followed, unknown, exit 7" 7 \
	"^sealing +unknown: $W/link.img: a symbolic link or not a regular file: not read$" st --dev "$dev"
head -c 4096 "$W/k1.img" >"$W/cut.img"
touch -d '2026-01-01 11:00' "$W/cut.img"
record "$vml" "$W/cut.img"
expect "status: the armed image cut short: unknown, exit 7" 7 \
	"^sealing +unknown: $W/cut.img: not a whole newc archive" st --dev "$dev"
record "$vml" "$img"
expect "status: the armed image is no archive: unknown, exit 7" 7 \
	"^sealing +unknown: $img: not a whole newc archive" st --dev "$dev"
mkdir -p "$W/conflink/etc"
ln -s /proc/cmdline "$W/conflink/etc/kdumpinit.conf"
(cd "$W/conflink" && find . -mindepth 1 | LC_ALL=C sort | cpio -o -H newc --quiet) >"$W/conflink.img"
touch -d '2026-01-01 11:00' "$W/conflink.img"
record "$vml" "$W/conflink.img"
expect "status: the image's /etc/kdumpinit.conf is a link: unknown, exit 7" 7 \
	"^sealing +unknown: $W/conflink.img: its entry is not a regular file$" st --dev "$dev"
# The configured key itself: a FIFO there must not hang status.
rm -f "$R/etc/kdumpinit/k1.pub"
mkfifo "$R/etc/kdumpinit/k1.pub"
record "$vml" "$W/k1.img"
expect "status: KDUMPINIT_PUBKEY is a FIFO: not waited on, unknown, exit 7" 7 \
	'^sealing +unknown: KDUMPINIT_PUBKEY=/etc/kdumpinit/k1.pub is not a key' timeout 10 "$K" status --root "$R" --dev "$dev"
rm -f "$R/etc/default/kdumpinit" "$R/etc/kdumpinit/k1.pub"
# Firmware: its key is the configured one when the settings name none,
# and outranks the image's (the settings' too).
mkdir -p "$R/sys/firmware/dmi/entries/11-0"
s="io.systemd.credential:kdumpinit.pubkey=$hex2"
{ printf '\013\005\000\000\001'; printf '%s\000\000' "$s"; } >"$R/sys/firmware/dmi/entries/11-0/raw"
expect "status: the firmware's key, none in the settings: the crash kernel reads it too: sealed, exit 0" 0 \
	"^sealing +sealed to key $id2 \(smbios\)$" st --dev "$dev"
cp "$W/k1.pub" "$R/etc/kdumpinit/k1.pub"
printf 'KDUMPINIT_PUBKEY=/etc/kdumpinit/k1.pub\n' >"$R/etc/default/kdumpinit"
touch -d '2026-01-01 10:30' "$R/etc/default/kdumpinit"
expect "status: the firmware's key is not the settings': it outranks the image's, stale, exit 7" 7 \
	"^sealing +stale: the armed crash kernel seals to key $id2 \(smbios\), $names1$" st --dev "$dev"
rm -rf "$R/sys/firmware" "$R/etc/default/kdumpinit"
expect "status: no key configured: no sealing line, whatever the image carries, exit 0" 0 '' st --dev "$dev"
! grep -q '^sealing' "$W/out" && ok "status: no key configured: nothing said of the armed key" ||
	bad "status: no key configured" "$(grep '^sealing' "$W/out")"
record "$vml" "$img"

# The crash header line: a record without the machine's fingerprint (an
# older arm) cannot tell, and is not stale.
expect "status: a record without a header fingerprint: not recorded, not stale" 0 \
	'^crash header +not recorded \(armed by an older kdumpinit\)' st --dev "$dev"
expect "status --help: exit 0, names the exit codes" 0 '6 not armed' "$K" status --help
expect "status: an unknown option is a usage error (2)" 2 '' "$K" status --frob
expect "status: an argument is a usage error (2)" 2 '' "$K" status extra

# ---- one rule for a selector's text (format --label, the armed line) ----
for l in 'crash dumps' 'a"b' "it's" 'back\slash' "$(printf 'tab\there')" ''; do
	rm -f "$W/lbl.img"
	"$K" format "$W/lbl.img" --size 4M --label "$l" >"$W/out" 2>&1; rc=$?
	t "$rc/$(ls "$W/lbl.img" 2>/dev/null | wc -l)" 2/0 "format --label '$l': refused (2), nothing claimed"
done
rm -f "$W/lbl.img"
"$K" format "$W/lbl.img" --size 4M --label 'crash-dumps_1.x=y' >"$W/out" 2>&1; rc=$?
t "$rc" 0 "format --label 'crash-dumps_1.x=y': taken"
# status resolves the device the crash kernel will look for: the armed
# command line, parsed as PID 1 parses it. A selector armed unquoted with
# a space reaches the crash kernel cut short, and status says so.
printf 'KDUMPINIT_DEVICE="LABEL=crash dumps"\n' >"$R/etc/default/kdumpinit"
touch -d '2026-01-01 10:30' "$R/etc/default/kdumpinit"
ARMED_APPEND="kdumpinit.dev=LABEL=crash dumps" record "$vml" "$img"
expect "status: a selector with a space in the settings: refused, exit 4" 4 \
	"^device +LABEL=crash dumps .*cannot reach the crash kernel whole" st
expect "status: ... and the armed line's kdumpinit.dev=LABEL=crash (cut short) is stale" 4 \
	"^armed device +stale: the crash kernel's command line says kdumpinit.dev=LABEL=crash, " st
printf 'KDUMPINIT_DEVICE=%s\n' "$dev" >"$R/etc/default/kdumpinit"
touch -d '2026-01-01 10:30' "$R/etc/default/kdumpinit"
ARMED_APPEND="kdumpinit.dev=$dev kdumpinit.level=1" record "$vml" "$img"
expect "status: the armed kdumpinit.dev= is the configured device: current, exit 0" 0 \
	"^device +$dev \(armed command line\): .*claimed, no dump" st
ARMED_APPEND="\"kdumpinit.dev=$W/zero.img\"" record "$vml" "$img"
expect "status: the armed line names another device (quotes dropped as PID 1 does): exit 4, stale" 4 \
	"^armed device +stale: .*kdumpinit.dev=$W/zero.img, /etc/default/kdumpinit names $dev" st
rm -f "$R/etc/default/kdumpinit"
record "$vml" "$img"

# ---- staleness by content: the manifest beside the image --------------
# An upgrade: kdumpinit replaced by other bytes whose mtime (dpkg's, from
# the package) is OLDER than the image. The dates all say current.
bin=$W/usr-sbin-kdumpinit
echo kdumpinit-1 >"$bin"
touch -d '2026-01-01 09:00' "$bin"
mod=$W/virtio_blk.ko
echo module-1 >"$mod"
manifest() {
	{
		echo "# kdumpinit-mkinitramfs manifest"
		echo "format 1"
		echo "kver ${1:-$kver}"
		echo "init $(sha256sum <"$bin" | cut -d' ' -f1) $bin"
		echo "kernel $(sha256sum <"$vml" | cut -d' ' -f1) $vml"
		[ -z "${2:-}" ] || echo "device $2"
		echo "module $(sha256sum <"$mod" | cut -d' ' -f1) $mod"
		echo "compress none"
	} >"$img.manifest"
}
manifest
record "$vml" "$img"
expect "status: the manifest agrees with /init, kernel and modules: current" 0 '^image +current$' st --dev "$dev"
echo kdumpinit-2-upgraded >"$bin"
touch -d '2025-06-01 09:00' "$bin"
expect "status: kdumpinit upgraded (other content, OLD mtime): stale, exit 7" 7 \
	"^image +stale: init $bin differs by content from the one the image was built with \(kdumpinit upgraded\?\)" st --dev "$dev"
manifest
echo module-2 >"$mod"
touch -d '2025-06-01 09:00' "$mod"
expect "status: a module changed by content (old mtime): stale, exit 7" 7 "^image +stale: module $mod differs by content" st --dev "$dev"
manifest
cp -p "$vml" "$W/vml.keep"
echo kernel-other >"$vml"
touch -d '2026-01-01 10:00' "$vml"
record "$vml" "$img"
expect "status: the armed kernel is not the one the image was built for: stale, exit 7" 7 "^image +stale: kernel $vml differs by content" st --dev "$dev"
cp -p "$W/vml.keep" "$vml"
record "$vml" "$img"
manifest 6.0.0-other
expect "status: the manifest's release is not the running one: stale, exit 7" 7 "^image +stale: .* was built for 6.0.0-other, running" st --dev "$dev"
manifest "$kver" LABEL=old
printf 'KDUMPINIT_DEVICE=%s\n' "$dev" >"$R/etc/default/kdumpinit"
touch -d '2026-01-01 10:30' "$R/etc/default/kdumpinit"
ARMED_APPEND="kdumpinit.dev=$dev" record "$vml" "$img"
expect "status: the image was built for another device than the file names: stale, exit 7" 7 \
	"^image +stale: the image was built for the device LABEL=old, /etc/default/kdumpinit names $dev" st
rm -f "$R/etc/default/kdumpinit" "$img.manifest"
record "$vml" "$img"
expect "status: no manifest (an image built by hand): current, says its contents were not checked" 0 \
	'^image +current \(no manifest beside it' st --dev "$dev"

# ---- where the running kernel's image is; why nothing is armed --------
rel=$(uname -r)
expect "status: the kernel line says when the running release's image is nowhere" 0 \
	'^kernel .*image not found \(neither /boot/vmlinuz-RELEASE nor /usr/lib/modules/RELEASE/vmlinuz\)' st --dev "$dev"
mkdir -p "$R/usr/lib/modules/$rel"
echo vmlinuz >"$R/usr/lib/modules/$rel/vmlinuz"
expect "status: a kernel installed the new way: found at /usr/lib/modules/RELEASE/vmlinuz" 0 \
	"^kernel .*image $R/usr/lib/modules/$rel/vmlinuz$" st --dev "$dev"
rm -rf "$R/usr"
sys kexec_crash_loaded 0
rm -f "$R/run/kdumpinit/armed"
expect "status: nothing configured and nothing loaded: exit 6, says it is not armed because no device is configured" 6 \
	'^not armed +no dump device configured: kdumpinit-arm.service arms nothing until KDUMPINIT_DEVICE' st
expect "status: a device but nothing loaded: says to look at kdumpinit-arm.service" 6 \
	'^not armed +a reservation and a device, but no crash kernel loaded' st --dev "$dev"
expect "status --configured, nothing configured: exit 4" 4 '' st --configured
printf 'KDUMPINIT_DEVICE=%s\n' "$dev" >"$R/etc/default/kdumpinit"
expect "status --configured: the file's device and its source" 0 "^dev=$dev \(/etc/default/kdumpinit\)$" st --configured
rm -f "$R/etc/default/kdumpinit"
sys kexec_crash_loaded 1
record "$vml" "$img"

# A stacked device (config/stack.c): a loop device the fake sysfs shows
# held by an md RAID1. The armed command line must carry its table as it
# is now: none or another is stale (7); a RAID5 is refused (4).
if [ "$(id -u)" = 0 ] && truncate -s 8M "$W/loop.img" && loop=$(losetup -f --show "$W/loop.img" 2>/dev/null); then
	ln=${loop##*/}
	"$K" format "$loop" --label dump >/dev/null 2>&1 || bad setup "format $loop"
	mdfake "$R" md0 raid1
	mkdir -p "$R/sys/class/block/$ln/holders/md0" "$R/dev"
	: >"$R/dev/vdb"
	word=204800:linear:SERIAL=dumpdisk+0
	ARMED_APPEND="kdumpinit.dev=$loop" record "$vml" "$img"
	expect "status: an md RAID1, armed with no kdumpinit.dm=: stale (7)" 7 \
		"^armed device +stale: .* an md RAID array \(md0, raid1\), its mirror vdb .*has no kdumpinit.dm=" st --dev "$loop"
	ARMED_APPEND="kdumpinit.dev=$loop kdumpinit.dm=$word" record "$vml" "$img"
	expect "status: an md RAID1 armed with its table: current (0)" 0 '^device .*claimed, no dump' st --dev "$loop"
	ARMED_APPEND="kdumpinit.dev=$loop kdumpinit.dm=4096:linear:SERIAL=dumpdisk+0" record "$vml" "$img"
	expect "status: an md RAID1 armed with another table: stale (7)" 7 'holds another kdumpinit.dm=' st --dev "$loop"
	rm -rf "$R/sys/devices/virtual/block/md0"
	mdfake "$R" md0 raid5
	mkdir -p "$R/sys/class/block/$ln/holders/md0"
	expect "status: an md RAID5: the crash kernel cannot rebuild it (4)" 4 \
		'^device .*only a RAID1 mirror can be rebuilt.*plain partition' st --dev "$loop"
	losetup -d "$loop"
	rm -rf "$R/sys/class" "$R/sys/dev" "$R/sys/devices" "$R/dev" "$W/loop.img"
	record "$vml" "$img"
fi

# ---- a network dump device: the server asked now ----------------------
# qemu-nbd on the loopback serving a claimed file, then an unclaimed one,
# then nothing on the port.
if command -v qemu-nbd >/dev/null; then
	"$K" format "$W/nbd-claimed.img" --size 24M --label netdump >/dev/null 2>&1
	truncate -s 24M "$W/nbd-bare.img"
	np=$((20000 + RANDOM % 20000))
	serve() {	# FILE: qemu-nbd serves it as export "dump" until killed
		qemu-nbd -f raw -x dump -b 127.0.0.1 -p "$np" -t "$1" >/dev/null 2>&1 &
		npid=$!
		for _ in $(seq 50); do (exec 3<>/dev/tcp/127.0.0.1/$np) 2>/dev/null && break; sleep 0.1; done
	}
	serve "$W/nbd-claimed.img"
	expect "status: a network dump device: the server answers, its export claimed (exit 0)" 0 \
		"^device +nbd://127.0.0.1:$np/dump \(--dev\): the server answers, export 24.0 MiB, claimed \(label netdump\)" \
		st --dev "nbd://127.0.0.1:$np/dump"
	# The export against this machine's memory (ROOT/proc/meminfo).
	mkdir -p "$R/proc"
	[ ! -e "$R/proc/meminfo" ] || cp "$R/proc/meminfo" "$W/meminfo.keep"
	printf 'MemTotal:        8192 kB\nMemFree:         4096 kB\n' >"$R/proc/meminfo"
	expect "status: a network dump device's export larger than memory: a dump fits at any level" 0 \
		"^room +the export \(24 MiB\) holds a dump of this machine's 8 MiB of memory at any level" \
		st --dev "nbd://127.0.0.1:$np/dump"
	printf 'MemTotal:     1048576 kB\n' >"$R/proc/meminfo"
	expect "status: ... smaller than memory: fits only as far as the level leaves out, says estimate" 0 \
		"^room +the export \(24 MiB\) is smaller than this machine's 1024 MiB of memory: .*kdumpinit estimate" \
		st --dev "nbd://127.0.0.1:$np/dump"
	rm -f "$R/proc/meminfo"
	[ ! -e "$W/meminfo.keep" ] || mv "$W/meminfo.keep" "$R/proc/meminfo"
	expect "status: a network dump device, an export that is not there (exit 4)" 4 \
		"no such export" st --dev "nbd://127.0.0.1:$np/other"
	kill "$npid" 2>/dev/null; wait "$npid" 2>/dev/null
	serve "$W/nbd-bare.img"
	expect "status: a network dump device, its export unclaimed (exit 4)" 4 \
		"export 24.0 MiB, unclaimed: run kdumpinit format" st --dev "nbd://127.0.0.1:$np/dump"
	kill "$npid" 2>/dev/null; wait "$npid" 2>/dev/null
	expect "status: a network dump device, nothing on the port (exit 4)" 4 \
		"network: 127.0.0.1:$np does not answer: Connection refused" st --dev "nbd://127.0.0.1:$np/dump"
else
	bad "status: network dump devices" "no qemu-nbd (qemu-utils, deps/packages)"
fi

# ---- arm --dry-run: the command line ---------------------------------
A=$W/arm
mkdir -p "$A/proc" "$A/sys/kernel" "$A/sys/devices/system/cpu"
echo "BOOT_IMAGE=/vmlinuz root=/dev/vda1 console=tty0 console=ttyS0,115200 nr_cpus=8 quiet" >"$A/proc/cmdline"
echo 0-7 >"$A/sys/devices/system/cpu/online"
echo $((256 << 20)) >"$A/sys/kernel/kexec_crash_size"
arm() { "$K" arm --dry-run --root "$A" "$@"; }
# cpus NAME WANT ARGS...: nr_cpus=WANT, exactly once.
cpus() {
	local n=$1 want=$2
	shift 2
	local out
	out=$(arm "$@" 2>&1)
	local c
	c=$(echo "$out" | grep -o 'nr_cpus=[0-9]*' | tr '\n' ' ')
	[ "$c" = "nr_cpus=$want " ] && ok "$n" || bad "$n" "got '$c' in: $out"
}
expect "arm --dry-run: console= args, then the capture args" 0 \
	'^console=tty0 console=ttyS0,115200 reset_devices nr_cpus=1 irqpoll panic=10 rdinit=/init$' arm
cpus "arm: nr_cpus=1 by default, once (the running kernel's nr_cpus= is not copied)" 1
expect "arm: --append comes last" 0 'rdinit=/init kdumpinit.dev=LABEL=dump kdumpinit.level=1$' \
	arm --append "kdumpinit.dev=LABEL=dump kdumpinit.level=1"
cpus "arm --cpus 3: nr_cpus=3, once" 3 --cpus 3
# A network dump device with no key: refused, said, unless --allow-clear;
# a key on the command line or in the image's /etc/kdumpinit.conf seals it.
nbdapp="kdumpinit.dev=nbd://192.0.2.10/host1 kdumpinit.ip=192.0.2.21/24,192.0.2.1"
"$K" arm --dry-run --root "$A" --append "$nbdapp" >"$W/out" 2>"$W/err"
rc=$?
[ $rc = 2 ] && grep -q "is a network dump device and no key is configured.*--allow-clear" "$W/err" && [ ! -s "$W/out" ] &&
	ok "arm: a network dump device with no key is refused (exit 2, nothing printed)" ||
	bad "arm: a network dump device with no key" "exit $rc: $(cat "$W/err")"
"$K" arm --dry-run --root "$A" --append "$nbdapp" --allow-clear >"$W/out" 2>"$W/err"
rc=$?
[ $rc = 0 ] && grep -q "kdumpinit.dev=nbd://192.0.2.10/host1" "$W/out" && grep -q "in the clear" "$W/err" &&
	ok "arm --allow-clear: armed, and said it goes in the clear" ||
	bad "arm --allow-clear" "exit $rc: $(cat "$W/err")"
nbdkey=$(printf '%064x' 7)
expect "arm: a network dump device with kdumpinit.pubkey= on the command line: no question" 0 \
	"kdumpinit.pubkey=$nbdkey" arm --append "$nbdapp kdumpinit.pubkey=$nbdkey"
mkdir -p "$W/nbdimg/etc" && echo "pubkey = $nbdkey" >"$W/nbdimg/etc/kdumpinit.conf"
(cd "$W/nbdimg" && find . | cpio -o -H newc --quiet) >"$W/nbdimg.cpio"
expect "arm: a network dump device with the key in the image's kdumpinit.conf: no question" 0 \
	"kdumpinit.dev=nbd://" arm --initramfs "$W/nbdimg.cpio" --append "$nbdapp"
expect "arm: a disk without a key is not asked about" 0 "kdumpinit.dev=LABEL=dump" arm --append "kdumpinit.dev=LABEL=dump"
# No kdumpinit.ip=: arm records the way to the server here (net/route.c):
# the route /proc/net/route gives, its interface's address, prefix and
# MAC. What cannot give one is refused, exit 2, saying what to give.
# (/proc/net/route prints each address's bytes as they lie in memory.)
hexip() { printf '%02X%02X%02X%02X' "$4" "$3" "$2" "$1"; }
mkdir -p "$A/proc/net" "$A/sys/class/net/kdilo"
{
	printf 'Iface\tDestination\tGateway \tFlags\tRefCnt\tUse\tMetric\tMask\t\tMTU\tWindow\tIRTT\n'
	printf 'kdilo\t%s\t00000000\t0001\t0\t0\t0\t%s\t0\t0\t0\n' "$(hexip 192 0 2 0)" "$(hexip 255 255 255 0)"
} >"$A/proc/net/route"
echo 772 >"$A/sys/class/net/kdilo/type"
nbdnoip="kdumpinit.dev=nbd://192.0.2.10/host1 kdumpinit.pubkey=$nbdkey"
expect "arm: no kdumpinit.ip= and the route goes through no Ethernet interface: refused (exit 2)" 2 '' \
	arm --append "$nbdnoip"
grep -q "goes through kdilo, which is not an Ethernet interface.*give kdumpinit.ip=ADDR/PREFIX" "$W/err" &&
	ok "arm: ... the refusal names the interface and what to give" ||
	bad "arm: ... the refusal names the interface and what to give" "$(cat "$W/err")"
expect "arm: no kdumpinit.ip= and no route to the server: refused (exit 2)" 2 '' \
	arm --append "kdumpinit.dev=nbd://198.51.100.7/host1 kdumpinit.pubkey=$nbdkey"
grep -q "no route to 198.51.100.7 here" "$W/err" && ok "arm: ... said: no route to the server" ||
	bad "arm: ... said: no route to the server" "$(cat "$W/err")"
expect "arm: a server on this machine's loopback: refused (exit 2)" 2 '' \
	arm --append "kdumpinit.dev=nbd://127.0.0.1/host1 kdumpinit.pubkey=$nbdkey"
grep -q "127.0.0.1 is this machine" "$W/err" && ok "arm: ... said: the server is this machine" ||
	bad "arm: ... said: the server is this machine" "$(cat "$W/err")"
expect "arm --cmdline without kdumpinit.ip=: refused, arm adds nothing to it (exit 2)" 2 '' \
	arm --cmdline "console=ttyS0 $nbdnoip"
grep -q "cmdline is given whole" "$W/err" && ok "arm: ... said why" || bad "arm: ... said why" "$(cat "$W/err")"
rm -rf "$A/proc/net" "$A/sys/class"
# The way recorded, on a real interface: a veth in a network namespace of
# its own (its sysfs mounted there), an address, a route through a
# gateway; the server on the link and behind the gateway.
if command -v unshare >/dev/null && command -v ip >/dev/null &&
	unshare -nm sh -c 'mount -t sysfs sysfs /sys && ip link add kdiv0 type veth peer name kdiv1' 2>/dev/null; then
	unshare -nm sh -c '
		mount -t sysfs sysfs /sys || exit 9
		ip link add kdiv0 type veth peer name kdiv1 || exit 9
		ip link set kdiv0 address 02:00:00:00:00:21 || exit 9
		ip addr add 192.0.2.21/24 dev kdiv0 || exit 9
		ip link set kdiv0 up && ip link set kdiv1 up || exit 9
		ip route add 198.51.100.0/24 via 192.0.2.1 dev kdiv0 || exit 9
		for s in 192.0.2.10 198.51.100.7; do
			"$0" arm --dry-run --append "kdumpinit.dev=nbd://$s/host1 kdumpinit.pubkey=$1" >"$2.$s" 2>"$2.$s.err"
			echo "rc $?" >>"$2.$s"
		done' "$K" "$nbdkey" "$W/veth"
	rc=$?
	grep -q "kdumpinit.ip=192.0.2.21/24,,02:00:00:00:00:21$" "$W/veth.192.0.2.10" && grep -q "^rc 0" "$W/veth.192.0.2.10" &&
		ok "arm: no kdumpinit.ip=, a server on the link: the interface's address, prefix and MAC recorded" ||
		bad "arm: a server on the link" "rc $rc: $(tr '\n' '|' <"$W/veth.192.0.2.10" 2>&1) $(tr '\n' '|' <"$W/veth.192.0.2.10.err" 2>&1)"
	grep -q "kdumpinit.ip=192.0.2.21/24,192.0.2.1,02:00:00:00:00:21$" "$W/veth.198.51.100.7" && grep -q "^rc 0" "$W/veth.198.51.100.7" &&
		ok "arm: no kdumpinit.ip=, a server behind a gateway: the route's gateway recorded too" ||
		bad "arm: a server behind a gateway" "rc $rc: $(tr '\n' '|' <"$W/veth.198.51.100.7" 2>&1) $(tr '\n' '|' <"$W/veth.198.51.100.7.err" 2>&1)"
	grep -q "kdumpinit.ip=192.0.2.21/24,,02:00:00:00:00:21, the way to the server here (kdiv0)" "$W/veth.192.0.2.10.err" &&
		ok "arm: ... and says what it recorded, and from which interface" ||
		bad "arm: ... and says what it recorded" "$(cat "$W/veth.192.0.2.10.err")"
else
	bad "arm: the way recorded on a real interface" "no network namespace with a veth here (unshare -nm, ip link add type veth)"
fi
# The boot CPU's APIC id (processor 0's "apicid", not "initial apicid")
# on x86_64, before --append; the hardware's arguments carried, the first
# system's not (arm/cmdline.c; test_cmdline has the cases one by one).
printf 'processor\t: 0\ninitial apicid\t: 3\napicid\t\t: 2\n\nprocessor\t: 1\napicid\t\t: 0\n' >"$A/proc/cpuinfo"
if [ "$(uname -m)" = x86_64 ]; then
	expect "arm --dry-run on x86_64: disable_cpu_apicid= of processor 0, before --append" 0 \
		'^console=tty0 console=ttyS0,115200 reset_devices nr_cpus=1 irqpoll panic=10 rdinit=/init disable_cpu_apicid=2 kdumpinit.dev=LABEL=dump$' \
		arm --append kdumpinit.dev=LABEL=dump
else
	expect "arm --dry-run off x86_64: no disable_cpu_apicid=" 0 \
		'^console=tty0 console=ttyS0,115200 reset_devices nr_cpus=1 irqpoll panic=10 rdinit=/init$' arm
fi
# A stacked --dev (config/stack.c): an md RAID1 of metadata 1.0 whose
# mirror vdb shows the claim at its start, as LABEL= finds it; arm climbs
# to the array (holders/) and records its table over that mirror. A RAID5
# is refused, exit 4, saying what to use instead.
mkdir -p "$A/dev"
mdfake "$A" md0 raid1
"$K" format "$A/dev/vdb" --size 8M --label dump >/dev/null 2>&1
: >"$A/dev/md0"
expect "arm --dev on an md RAID1: its table over the first mirror in sync, as kdumpinit.dm=" 0 \
	' kdumpinit.dev=LABEL=dump kdumpinit.dm=204800:linear:SERIAL=dumpdisk\+0$' \
	arm --append kdumpinit.dev=LABEL=dump --dev LABEL=dump
expect "arm --dev on an md RAID1 by SERIAL=: refused, the crash kernel finds only a claim on the mapping" 2 '' \
	arm --append kdumpinit.dev=SERIAL=dumpdisk --dev SERIAL=dumpdisk
expect "arm: kdumpinit.dm= in --append is refused (arm records it)" 2 '' \
	arm --append "kdumpinit.dev=LABEL=dump kdumpinit.dm=8:linear:SERIAL=x+0" --dev LABEL=dump
rm -rf "$A/sys/devices/virtual/block/md0"
mdfake "$A" md0 raid5
expect "arm --dev on an md RAID5: refused, exit 4" 4 '' arm --append kdumpinit.dev=LABEL=dump --dev LABEL=dump
grep -q 'only a RAID1 mirror.*plain partition' "$W/err" && ok "arm: the refusal says what to use instead" ||
	bad "arm: the refusal says what to use instead" "$(cat "$W/err")"
rm -rf "$A/sys/class" "$A/sys/dev" "$A/sys/devices/virtual" "$A/sys/devices/pci" "$A/dev"
cp "$A/proc/cmdline" "$A/proc/cmdline.keep"
echo "root=/dev/vda1 quiet crashkernel=256M hugepages=16 intel_iommu=on iommu=pt pci=nomsi acpi=off swiotlb=65536 consoleblank=0 earlycon console=ttyS0 -- console=tty1" >"$A/proc/cmdline"
expect "arm --dry-run: the IOMMU, pci=, acpi=, earlycon and console= carried, in order, nothing after --" 0 \
	'^intel_iommu=on iommu=pt pci=nomsi acpi=off earlycon console=ttyS0 reset_devices nr_cpus=1 ' arm
mv "$A/proc/cmdline.keep" "$A/proc/cmdline"
rm -f "$A/proc/cpuinfo"
# The measured rule (arm/reserve.c, reserve_auto_cpus): with R bytes reserved, one
# CPU leaves avail1 = R - R/22 - 66e6; n CPUs fit while
# avail1 - 1.75e6 (n - 1) >= 5.4e6 + 3.4e6 n + 12e6, i.e.
# n = 1 + (avail1 - 20.8e6) / 5.15e6, at most 16 and the online CPUs.
# E.g. 128 MiB: avail1 = 134217728 - 6100805 - 66000000 = 62116923,
# (62116923 - 20800000) / 5150000 = 8, so 9. Each step's neighbours are
# here, so an off-by-one in a constant moves one of them.
cpus "arm --cpus auto, 256M, 8 online: 16 affordable, capped at the 8 online" 8 --cpus auto
echo 0-63 >"$A/sys/devices/system/cpu/online"
for m in 0:1 64:1 88:1 91:1 92:2 96:2 100:3 104:4 112:5 128:9 144:12 160:15 163:15 164:16 512:16; do
	echo $((${m%:*} << 20)) >"$A/sys/kernel/kexec_crash_size"
	cpus "arm --cpus auto, ${m%:*} MiB: ${m#*:}" "${m#*:}" --cpus auto
done
echo $((1024 << 20)) >"$A/sys/kernel/kexec_crash_size"
echo 0-63 >"$A/sys/devices/system/cpu/online"
cpus "arm --cpus auto, 1 GiB, 64 online: capped at 16" 16 --cpus auto
echo 0-1 >"$A/sys/devices/system/cpu/online"
cpus "arm --cpus auto, 1 GiB, 2 online: capped at the online CPUs" 2 --cpus auto
echo 0,2-3,5 >"$A/sys/devices/system/cpu/online"
cpus "arm --cpus auto: online list 0,2-3,5 counts 4" 4 --cpus auto
echo 0 >"$A/sys/kernel/kexec_crash_size"
cpus "arm --cpus auto, no reservation: 1" 1 --cpus auto
expect "arm: nr_cpus= in --append is refused (2)" 2 '' arm --append "nr_cpus=4"
expect "arm: --cpus with --cmdline is refused (2)" 2 '' arm --cpus 2 --cmdline "x"
expect "arm: --cpus 0 is refused (2)" 2 '' arm --cpus 0
expect "arm: --cpus two is refused (2)" 2 '' arm --cpus two
expect "arm --cmdline: the whole line, as given" 0 '^only this$' arm --cmdline "only this"
expect "arm without --kernel (not a dry run): usage (2)" 2 '' "$K" arm --initramfs x
expect "arm --dry-run --unload: usage (2)" 2 '' "$K" arm --dry-run --unload

# ---- the units -------------------------------------------------------
if command -v systemd-analyze >/dev/null; then
	P=$W/prefix
	mkdir -p "$P/lib/kdumpinit" "$P/sbin"
	ln -s "$top/dist/kdumpinit-arm" "$P/lib/kdumpinit/kdumpinit-arm"
	ln -s "$top/dist/kdumpinit-save" "$P/lib/kdumpinit/kdumpinit-save"
	ln -s "$top/dist/kdumpinit-exports" "$P/lib/kdumpinit/kdumpinit-exports"
	ln -s "$K" "$P/sbin/kdumpinit"
	for u in kdumpinit-arm.service kdumpinit-save.service kdumpinit-exports.service kdumpinit-exports.timer; do
		sed "s|@PREFIX@|$P|g; s|@DOCDIR@|$P/doc|g" "dist/$u" >"$W/$u"
		if o=$(systemd-analyze verify --man=no "$W/$u" 2>&1) && [ -z "$o" ]; then
			ok "systemd-analyze verify $u"
		else
			bad "systemd-analyze verify $u" "$(echo "$o" | head -n 3 | tr '\n' ' ')"
		fi
	done
	sed "s|@PREFIX@/lib/kdumpinit/kdumpinit-arm$|$P/gone|" "dist/kdumpinit-arm.service" |
		sed "s|@PREFIX@|$P|g" >"$W/broken.service"
	systemd-analyze verify --man=no "$W/broken.service" >/dev/null 2>&1 &&
		bad "systemd-analyze verify" "accepts a unit whose ExecStart is missing" ||
		ok "systemd-analyze verify rejects a broken copy of kdumpinit-arm.service"
	grep -q '^After=.*kdumpinit-save.service' dist/kdumpinit-arm.service &&
		ok "kdumpinit-arm.service is ordered after kdumpinit-save.service" ||
		bad "kdumpinit-arm.service" "not After=kdumpinit-save.service"
else
	bad "systemd-analyze" "not installed"
fi

# ---- dist/kdumpinit-exports: a network dump server's exports ----------
# One NAME.img per machine: m1 holds a dump not saved, m2 none; a link and
# a name with a space are passed over, never followed. Saved into DIR/NAME
# once quiet for QUIET seconds; nothing the second time.
EX=$W/exports
mkdir -p "$EX" "$W/crash"
if "$K" format "$EX/m1.img" --size 16M >/dev/null 2>&1 && "$K" format "$EX/m2.img" --size 16M >/dev/null 2>&1 &&
	"$K" capture --vmcore "$W/v.core" --output "$EX/m1.img" --level 1 >/dev/null 2>&1; then
	ln -s "$EX/m2.img" "$EX/evil.img"
	cp "$EX/m2.img" "$EX/a b.img"
	KDUMPINIT="$K" sh dist/kdumpinit-exports "$EX" "$W/crash" 3600 >"$W/out" 2>&1; rc=$?
	[ $rc = 0 ] && [ ! -e "$W/crash/m1" ] && grep -q "m1: written [0-9]* s ago, under 3600 s: left for the next run" "$W/out" &&
		ok "kdumpinit-exports: an export written to within QUIET is left for the next run" ||
		bad "kdumpinit-exports: QUIET" "rc $rc: $(tr '\n' '|' <"$W/out")"
	KDUMPINIT="$K" sh dist/kdumpinit-exports "$EX" "$W/crash" 0 >"$W/out" 2>&1; rc=$?
	[ $rc = 0 ] && [ -s "$(ls -d "$W"/crash/m1/*/ 2>/dev/null | head -n 1)vmcore" ] && grep -q "m1: saved into $W/crash/m1" "$W/out" &&
		ok "kdumpinit-exports: the dump on m1.img saved into DIR/m1/<time>/vmcore" ||
		bad "kdumpinit-exports: m1 saved" "rc $rc: $(tr '\n' '|' <"$W/out") $(ls -R "$W/crash" | tr '\n' ' ')"
	[ ! -e "$W/crash/m2" ] && [ ! -e "$W/crash/evil" ] && [ ! -e "$W/crash/a b" ] &&
		ok "kdumpinit-exports: nothing for an export with no dump, a link or an odd name" ||
		bad "kdumpinit-exports: others" "$(ls "$W/crash" | tr '\n' ' ')"
	grep -q "evil.img: a link or not a file, passed over" "$W/out" && grep -q "a b.img: not a plain name, passed over" "$W/out" &&
		ok "kdumpinit-exports: the link and the odd name are said" || bad "kdumpinit-exports: said" "$(tr '\n' '|' <"$W/out")"
	KDUMPINIT="$K" sh dist/kdumpinit-exports "$EX" "$W/crash" 0 >"$W/out" 2>&1; rc=$?
	[ $rc = 0 ] && [ "$(ls "$W/crash/m1" | wc -l)" = 1 ] && ! grep -q "saved into" "$W/out" &&
		ok "kdumpinit-exports: run again, nothing saved twice" ||
		bad "kdumpinit-exports: again" "rc $rc: $(tr '\n' '|' <"$W/out") $(ls "$W/crash/m1" | tr '\n' ' ')"
	KDUMPINIT="$K" sh dist/kdumpinit-exports exports "$W/crash" >"$W/out" 2>&1; rc=$?
	[ $rc = 2 ] && ok "kdumpinit-exports: a relative EXPORTS is a usage error" || bad "kdumpinit-exports: relative" "rc $rc"
else
	bad "kdumpinit-exports" "format or capture failed"
fi

# ---- dist/kdumpinit-arm and the kernel hooks -------------------------
for s in dist/kdumpinit-arm dist/kernel-postinst.d/kdumpinit dist/kernel-postrm.d/kdumpinit; do
	sh -n "$s" && ok "sh -n $s" || bad "sh -n $s" "syntax"
	[ -x "$s" ] && ok "$s is executable" || bad "$s" "not executable"
done
F=$W/fake
LOG=$W/calls
mkdir -p "$F/boot" "$F/etc/default" "$F/sys/kernel" "$W/bin"
# Stubs. kdumpinit: logs, and answers `status --configured` from $FW_DEV
# (the firmware credential). mkinitramfs: logs a build as "mkinitramfs
# ARGS" and writes -o and --manifest; --print-manifest prints the
# manifest of its inputs: the arguments, and the content of the kdumpinit
# binary and of the kernel, as the real one hashes them.
cat >"$W/bin/kdumpinit" <<'EOF'
#!/bin/sh
echo "kdumpinit $*" >>"$LOG"
if [ "$1" = status ] && [ "${2:-}" = --configured ]; then
	[ -n "${FW_DEV:-}" ] || exit 4
	echo "dev=$FW_DEV (smbios)"
fi
if [ "$1" = status ] && [ "${2:-}" = --clear-dumps ] && [ -n "${CLEAR_LINE:-}" ]; then
	echo "$CLEAR_LINE"
	exit 8
fi
exit 0
EOF
cat >"$W/bin/mkinitramfs" <<'EOF'
#!/bin/sh
out='' man='' print=0 args='' kernel=''
while [ $# -gt 0 ]; do
	case $1 in
	-o) out=$2; shift ;;
	--manifest) man=$2; shift ;;
	--print-manifest) print=1 ;;
	--kernel) kernel=$2; args="$args $1 $2"; shift ;;
	*) args="$args $1" ;;
	esac
	shift
done
manifest() {
	echo "init $(sha256sum <"$KBIN" | cut -d' ' -f1)"
	echo "kernel $(sha256sum <"$kernel" | cut -d' ' -f1)"
	echo "args$args"
}
if [ "$print" = 1 ]; then manifest; exit 0; fi
echo "mkinitramfs${args} -o $out --manifest $man" >>"$LOG"
[ -z "${MK_FAIL:-}" ] || exit 1
echo built >"$out"
manifest >"$man"
EOF
chmod +x "$W/bin/kdumpinit" "$W/bin/mkinitramfs"
touch -d '2026-01-01 09:00' "$W/bin/kdumpinit"
KBIN=$W/bin/kdumpinit
export LOG KBIN
runarm() { : >"$LOG"; env KDUMPINIT_ROOT="$F" KDUMPINIT="$W/bin/kdumpinit" KDUMPINIT_MKINITRAMFS="$W/bin/mkinitramfs" \
	KDUMPINIT_VENDOR_DEFAULTS="$top/dist/default.kdumpinit" sh dist/kdumpinit-arm "$@" >"$W/out" 2>&1; }
kv=6.1.0-test
fimg=$F/var/lib/kdumpinit/initrd-$kv.img
echo vmlinuz >"$F/boot/vmlinuz-$kv"
touch -d '2026-01-01 10:00' "$F/boot/vmlinuz-$kv"
echo 'KDUMPINIT_DEVICE=LABEL=dump' >"$F/etc/default/kdumpinit"
echo 'KDUMPINIT_APPEND="kdumpinit.level=1"' >>"$F/etc/default/kdumpinit"
touch -d '2026-01-01 10:00' "$F/etc/default/kdumpinit"
echo $((256 << 20)) >"$F/sys/kernel/kexec_crash_size"
# built: mkinitramfs ran (1) or not (0); armed: kdumpinit arm ran.
built() { grep -c '^mkinitramfs' "$LOG"; }
armed() { grep -c '^kdumpinit arm' "$LOG"; }
t() { [ "$1" = "$2" ] && ok "$3" || bad "$3" "got $1, wanted $2: $(tr '\n' '|' <"$W/out") $(tr '\n' '|' <"$LOG")"; }

runarm --kver "$kv"; rc=$?
t "$rc/$(built)/$(armed)" 0/1/1 "kdumpinit-arm: no image: built, then armed"
grep -qxF "mkinitramfs -k $kv --kernel $F/boot/vmlinuz-$kv --device LABEL=dump -o $fimg --manifest $fimg.manifest" "$LOG" &&
	ok "kdumpinit-arm: mkinitramfs gets --device \$KDUMPINIT_DEVICE, the kernel and --manifest" || bad "kdumpinit-arm: mkinitramfs args" "$(cat "$LOG")"
grep -qF "kdumpinit arm --kernel $F/boot/vmlinuz-$kv --initramfs $fimg --cpus auto --append kdumpinit.dev=LABEL=dump kdumpinit.level=1 --root $F" "$LOG" &&
	ok "kdumpinit-arm: arm gets the image, --cpus auto, kdumpinit.dev= then KDUMPINIT_APPEND" || bad "kdumpinit-arm: arm args" "$(cat "$LOG")"
t "$(cat "$fimg" 2>/dev/null)/$(ls "$fimg.manifest" 2>/dev/null | wc -l)" "built/1" "kdumpinit-arm: the image and its manifest are in place"
runarm --kver "$kv"; rc=$?
t "$rc/$(built)/$(armed)" 0/0/1 "kdumpinit-arm: image current: not rebuilt, armed"
grep -qxF "kdumpinit status --clear-dumps --dev LABEL=dump --root $F" "$LOG" &&
	ok "kdumpinit-arm: asks status --clear-dumps of the configured device" || bad "kdumpinit-arm: status --clear-dumps" "$(cat "$LOG")"
line="dump 1 on /dev/vdb is in the clear (written before sealing was on): save it with ..."
CLEAR_LINE=$line runarm --kver "$kv"; rc=$?
t "$rc/$(armed)/$(grep -cxF "kdumpinit-arm: $line" "$W/out")" 0/1/1 "kdumpinit-arm: says each dump in the clear that status names, and arms"
CLEAR_LINE=$line runarm --kver "$kv" --build-only; rc=$?
t "$rc/$(grep -c 'clear-dumps' "$LOG")" 0/0 "kdumpinit-arm --build-only: does not ask about dumps in the clear"
# Staleness is by content: dates alone change nothing ...
touch -d '2026-01-01 12:00' "$F/boot/vmlinuz-$kv" "$F/etc/default/kdumpinit" "$W/bin/kdumpinit"
runarm --kver "$kv"; rc=$?
t "$rc/$(built)/$(armed)" 0/0/1 "kdumpinit-arm: kernel, settings and binary newer by date only: not rebuilt"
# ... and content always does, whatever the dates say: a package upgrade
# gives the new binary the package's date, older than the image.
echo kdumpinit-upgraded >>"$W/bin/kdumpinit"
touch -d '2025-06-01 09:00' "$W/bin/kdumpinit"
runarm --kver "$kv"; rc=$?
t "$rc/$(built)/$(armed)" 0/1/1 "kdumpinit-arm: the kdumpinit binary replaced with an OLD mtime (an upgrade): rebuilt"
grep -q 'built from other inputs: now init ' "$W/out" && ok "kdumpinit-arm: says why it rebuilds (init)" || bad "kdumpinit-arm: why" "$(cat "$W/out")"
echo vmlinuz-rebuilt >"$F/boot/vmlinuz-$kv"
touch -d '2025-06-01 09:00' "$F/boot/vmlinuz-$kv"
runarm --kver "$kv"; rc=$?
t "$rc/$(built)/$(armed)" 0/1/1 "kdumpinit-arm: the kernel's content changed, old mtime: rebuilt"
echo 'KDUMPINIT_DEVICE=LABEL=other' >"$F/etc/default/kdumpinit"
touch -d '2025-06-01 09:00' "$F/etc/default/kdumpinit"
runarm --kver "$kv"; rc=$?
t "$rc/$(built)/$(armed)" 0/1/1 "kdumpinit-arm: KDUMPINIT_DEVICE changed, old mtime: rebuilt"
rm -f "$fimg.manifest"
runarm --kver "$kv"; rc=$?
t "$rc/$(built)/$(armed)" 0/1/1 "kdumpinit-arm: no manifest beside the image: rebuilt"
runarm --kver "$kv" --force; rc=$?
t "$rc/$(built)/$(armed)" 0/1/1 "kdumpinit-arm --force: rebuilt"
runarm --kver "$kv" --build-only; rc=$?
t "$rc/$(built)/$(armed)" 0/0/0 "kdumpinit-arm --build-only, current: nothing to do"
echo old >"$fimg"
echo 'KDUMPINIT_DEVICE=LABEL=third' >"$F/etc/default/kdumpinit"
MK_FAIL=1 runarm --kver "$kv"; rc=$?
t "$rc/$(built)/$(armed)/$(cat "$fimg")" 1/1/0/old \
	"kdumpinit-arm: mkinitramfs fails: exit 1, not armed, the old image kept"

# A selector must reach the crash kernel whole: one with a space (a label
# format refuses now, a SERIAL= of a disk) is refused loudly, not armed as
# its first word.
for d in 'LABEL=crash dumps' 'SERIAL=QEMU HARDDISK' 'LABEL="q"'; do
	printf "KDUMPINIT_DEVICE='%s'\n" "$d" >"$F/etc/default/kdumpinit"
	runarm --kver "$kv"; rc=$?
	t "$rc/$(built)/$(armed)/$(grep -c 'cannot reach the crash kernel whole' "$W/out")" 1/0/0/1 \
		"kdumpinit-arm: KDUMPINIT_DEVICE=$d: refused (exit 1), nothing built or armed"
	runarm --check; rc=$?
	t "$rc/$(grep -c 'cannot reach the crash kernel whole' "$W/out")" 255/1 \
		"kdumpinit-arm --check: KDUMPINIT_DEVICE=$d: 255 (the unit fails, loudly, rather than being skipped)"
done

# Nothing configured: nothing built, nothing armed; --check (the unit's
# ExecCondition) fails, so the unit is skipped with the reason.
echo 'KDUMPINIT_CPUS=3' >"$F/etc/default/kdumpinit"
rm -f "$fimg" "$fimg.manifest"
runarm --kver "$kv"; rc=$?
t "$rc/$(built)/$(armed)/$(grep -c 'no dump device configured' "$W/out")" 0/0/0/1 \
	"kdumpinit-arm: no device in the file nor firmware: exit 0, nothing built, not armed, says so"
runarm --check; rc=$?
t "$rc/$(grep -c 'no dump device configured' "$W/out")" 1/1 "kdumpinit-arm --check, no device: exit 1 (the unit is skipped), says why"
export FW_DEV=SERIAL=fwdisk
runarm --kver "$kv"; rc=$?
grep -q "^mkinitramfs -k $kv --kernel $F/boot/vmlinuz-$kv --all-disks -m virtio_blk -o " "$LOG" && [ "$rc" = 0 ] &&
	ok "kdumpinit-arm: device from firmware: every disk's drivers and the KDUMPINIT_MODULES default (--all-disks -m virtio_blk)" || bad "kdumpinit-arm: firmware device" "$(cat "$LOG")"
grep -qF -- "--cpus 3 --append  --root" "$LOG" &&
	ok "kdumpinit-arm: device from firmware: no kdumpinit.dev= (the crash kernel reads firmware); KDUMPINIT_CPUS" ||
	bad "kdumpinit-arm: firmware device, append" "$(cat "$LOG")"
echo "KDUMPINIT_IMAGE=/img/k-%v.cpio" >"$F/etc/default/kdumpinit"
runarm --kver "$kv"; rc=$?
[ "$rc" = 0 ] && [ -f "$F/img/k-$kv.cpio" ] && ok "kdumpinit-arm: KDUMPINIT_IMAGE with %v" || bad "kdumpinit-arm: KDUMPINIT_IMAGE" "$(cat "$LOG")"
echo vmlinuz >"$F/boot/vmlinuz-$(uname -r)"
runarm; rc=$?
grep -q "^mkinitramfs -k $(uname -r) " "$LOG" && [ "$rc" = 0 ] && ok "kdumpinit-arm: the running kernel by default" || bad "kdumpinit-arm: default kver" "$(cat "$LOG")"
runarm --kver 9.9.9-none; rc=$?
t "$rc/$(built)/$(armed)" 1/0/0 "kdumpinit-arm: no such kernel: exit 1, says so"
# A kernel installed the new way (Debian from 6.16: linux-binary-KVER):
# the image in its module directory, nothing in /boot.
nv=7.2.13+deb14-amd64
mkdir -p "$F/usr/lib/modules/$nv"
echo vmlinuz-new-layout >"$F/usr/lib/modules/$nv/vmlinuz"
runarm --kver "$nv"; rc=$?
t "$rc/$(built)/$(armed)/$(grep -c "^kdumpinit arm --kernel $F/usr/lib/modules/$nv/vmlinuz " "$LOG")" 0/1/1/1 \
	"kdumpinit-arm: a kernel at /usr/lib/modules/KVER/vmlinuz (no /boot file): built and armed with it"
unset FW_DEV
echo 0 >"$F/sys/kernel/kexec_crash_size"
runarm --check; rc=$?
t "$rc/$(grep -c 'no crashkernel= reservation' "$W/out")" 1/1 "kdumpinit-arm --check, no reservation: exit 1 (ExecCondition: skipped), with a message"
echo 'KDUMPINIT_DEVICE=LABEL=dump' >"$F/etc/default/kdumpinit"
runarm --kver "$kv"; rc=$?
t "$rc/$(armed)/$(grep -c 'not arming' "$W/out")" 0/0/1 "kdumpinit-arm, no reservation: exit 0, not armed, says so"
echo 1 >"$F/sys/kernel/kexec_crash_size"
runarm --check; rc=$?
t "$rc" 0 "kdumpinit-arm --check with a reservation and a device: exit 0"
runarm --bogus; rc=$?
t "$rc" 2 "kdumpinit-arm --bogus: usage (2)"

# The postinst hook: builds for the new kernel, never fails.
hook() { : >"$LOG"; env KDUMPINIT_ROOT="$F" KDUMPINIT="$W/bin/kdumpinit" KDUMPINIT_MKINITRAMFS="$W/bin/mkinitramfs" \
	KDUMPINIT_VENDOR_DEFAULTS="$top/dist/default.kdumpinit" KDUMPINIT_ARM="$top/dist/kdumpinit-arm" "$@" >"$W/out" 2>&1; }
nk=6.12.0-new
echo vmlinuz >"$F/boot/vmlinuz-$nk"
hook sh dist/kernel-postinst.d/kdumpinit "$nk" "/boot/vmlinuz-$nk"; rc=$?
t "$rc/$(built)/$(armed)/$(ls "$F/var/lib/kdumpinit/initrd-$nk.img" 2>/dev/null | wc -l)" 0/1/0/1 \
	"postinst.d hook: builds the image for the new kernel, does not arm"
# Debian's 6.16+ kernels call the hooks with /boot/vmlinuz-KVER, which
# they do not install: the hook finds the image in the module directory.
hook sh dist/kernel-postinst.d/kdumpinit "$nv" "/boot/vmlinuz-$nv"; rc=$?
t "$rc/$(grep -c -- "--kernel $F/usr/lib/modules/$nv/vmlinuz " "$LOG")/$(ls "$F/var/lib/kdumpinit/initrd-$nv.img" 2>/dev/null | wc -l)" 0/1/1 \
	"postinst.d hook: a new-layout kernel (/boot/vmlinuz-KVER not there): built from /usr/lib/modules/KVER/vmlinuz"
MK_FAIL=1 hook sh dist/kernel-postinst.d/kdumpinit 6.12.0-other "/boot/vmlinuz-6.12.0-other"; rc=$?
t "$rc/$(grep -c 'not built' "$W/out")" 0/1 "postinst.d hook: a failed build is said, exit 0"
hook sh dist/kernel-postinst.d/kdumpinit; rc=$?
t "$rc" 0 "postinst.d hook: no arguments: exit 0"
hook env KDUMPINIT_ARM=/nonexistent sh dist/kernel-postinst.d/kdumpinit "$nk"; rc=$?
t "$rc/$(built)" 0/0 "postinst.d hook: package removed (no kdumpinit-arm): exit 0, nothing done"
sh dist/kernel-postrm.d/kdumpinit >/dev/null 2>&1; rc=$?
t "$rc" 0 "postrm.d hook: no arguments: exit 0"

# ---- kdumpinit-save, the generator, the units' values --------------------
# The postrm hook must work once the package is removed (its copy of the
# defaults gone with it), so it keeps KDUMPINIT_IMAGE's default itself:
# the same as the conffile's.
t "$(sed -n 's|^image=\(/.*\)|\1|p' dist/kernel-postrm.d/kdumpinit)" "$(. "$top/dist/default.kdumpinit"; echo "$KDUMPINIT_IMAGE")" \
	"postrm.d hook: its default image is the conffile's KDUMPINIT_IMAGE"
# The save unit expands no variable (systemd splits an unbraced $VAR at
# white space); its script passes each value whole, with the package's
# defaults from the conffile itself (one source of truth).
grep -n '\$' dist/kdumpinit-save.service dist/kdumpinit-arm.service >"$W/out"
t "$(wc -l <"$W/out")" 0 "the units expand no variable (nothing can be split)"
grep -qE '^(Environment|EnvironmentFile)=' dist/kdumpinit-save.service dist/kdumpinit-arm.service &&
	bad "the units carry no defaults of their own" "$(grep -E '^Environment' dist/*.service)" ||
	ok "the units carry no defaults of their own: the conffile's are the only ones"
S=$W/save
mkdir -p "$S/etc/default" "$S/proc/self"
echo "1 0 0:1 / / rw - ext4 /dev/vda1 rw" >"$S/proc/self/mountinfo"
: >"$S/etc/fstab"
cat >"$W/bin/argv" <<'EOF'
#!/bin/sh
for a in "$@"; do printf '[%s]' "$a"; done >"$ARGV"
EOF
chmod +x "$W/bin/argv"
export ARGV=$W/argv
runsave() { rm -f "$ARGV"; env KDUMPINIT_ROOT="$S" KDUMPINIT="$W/bin/argv" \
	KDUMPINIT_VENDOR_DEFAULTS="$top/dist/default.kdumpinit" sh dist/kdumpinit-save "$@" >"$W/out" 2>&1; }
# What the conffile says, read as sh reads it.
want=$(. "$top/dist/default.kdumpinit"; printf '[save][--dir][%s]' "$KDUMPINIT_DIR"; for a in $KDUMPINIT_SAVE_ARGS; do printf '[%s]' "$a"; done)
runsave; rc=$?
t "$rc/$(cat "$ARGV" 2>/dev/null)" "0/$want" "kdumpinit-save, no settings file: exactly the conffile's defaults ($want)"
case $want in *'[--mark-incomplete]'*) ok "the defaults pass --mark-incomplete" ;; *) bad "the defaults" "no --mark-incomplete in $want" ;; esac
cp dist/default.kdumpinit "$S/etc/default/kdumpinit"
runsave; rc=$?
t "$rc/$(cat "$ARGV" 2>/dev/null)" "0/$want" "kdumpinit-save with the conffile as shipped: the same arguments"
printf 'KDUMPINIT_DEVICE="LABEL=crash dumps"\nKDUMPINIT_DIR="%s"\nKDUMPINIT_SAVE_ARGS="--max 2"\n' "$W/my crash" >"$S/etc/default/kdumpinit"
runsave; rc=$?
t "$rc/$(cat "$ARGV" 2>/dev/null)" "0/[save][LABEL=crash dumps][--dir][$W/my crash][--max][2]" \
	"kdumpinit-save: the device and DIR are one argument each, whatever they hold"
# DIR under a mount point that fstab (or a .mount unit) declares but that
# is not mounted: the dump would go into the directory the mount hides,
# and the device would be marked saved. Refused; the device keeps it.
printf 'KDUMPINIT_DIR=/srv/dumps/crash\n' >"$S/etc/default/kdumpinit"
printf '# comment\nUUID=abc / ext4 defaults 0 1\nLABEL=dumps /srv/dumps ext4 defaults 0 2\n/dev/sr0 /media/cdrom0 udf noauto 0 0\n' >"$S/etc/fstab"
runsave; rc=$?
t "$rc/$(ls "$ARGV" 2>/dev/null | wc -l)/$(grep -c 'under /srv/dumps, which is declared .* but not mounted' "$W/out")" 1/0/1 \
	"kdumpinit-save: DIR under an fstab mount point not mounted: refused (exit 1), save not run"
echo "2 1 0:2 / /srv/dumps rw - ext4 /dev/vdb1 rw" >>"$S/proc/self/mountinfo"
runsave; rc=$?
t "$rc/$(cat "$ARGV" 2>/dev/null)" "0/[save][--dir][/srv/dumps/crash][--max][3][--min-free][1G][--mark-incomplete]" \
	"kdumpinit-save: ... once it is mounted: saved"
printf 'KDUMPINIT_DIR="/srv/my dumps/x"\n' >"$S/etc/default/kdumpinit"
printf 'LABEL=dumps /srv/my\\040dumps ext4 defaults 0 2\n' >"$S/etc/fstab"
runsave; rc=$?
t "$rc/$(grep -c 'under /srv/my dumps, which' "$W/out")" 1/1 "kdumpinit-save: fstab's \\040 read as a space"
: >"$S/etc/fstab"
mkdir -p "$S/etc/systemd/system"
printf '[Mount]\nWhat=/dev/vdc\nWhere=/srv/my dumps\n' >"$S/etc/systemd/system/srv-my\\x20dumps.mount"
runsave; rc=$?
t "$rc" 1 "kdumpinit-save: DIR under a .mount unit's Where= not mounted: refused"
rm -rf "$S/etc/systemd"
runsave; rc=$?
t "$rc" 0 "kdumpinit-save: DIR under no declared mount point: saved"
# The generator: RequiresMountsFor= follows KDUMPINIT_DIR.
gen() { rm -rf "$W/gen"; mkdir -p "$W/gen"; env KDUMPINIT_ROOT="$S" KDUMPINIT_VENDOR_DEFAULTS="$top/dist/default.kdumpinit" \
	sh dist/kdumpinit-generator "$W/gen" "$W/gen" "$W/gen"; }
rm -f "$S/etc/default/kdumpinit"
gen; rc=$?
t "$rc/$(cat "$W/gen/kdumpinit-save.service.d/50-kdumpinit-dir.conf" 2>/dev/null | grep '^RequiresMountsFor')" \
	"0/RequiresMountsFor=$(. "$top/dist/default.kdumpinit"; echo "$KDUMPINIT_DIR")" "kdumpinit-generator: RequiresMountsFor= the default DIR"
printf 'KDUMPINIT_DIR=/srv/dumps\n' >"$S/etc/default/kdumpinit"
gen; rc=$?
t "$rc/$(grep '^RequiresMountsFor' "$W/gen/kdumpinit-save.service.d/50-kdumpinit-dir.conf" 2>/dev/null)" \
	"0/RequiresMountsFor=/srv/dumps" "kdumpinit-generator: RequiresMountsFor= follows KDUMPINIT_DIR"
printf 'KDUMPINIT_DIR="/srv/a b"\n' >"$S/etc/default/kdumpinit"
gen; rc=$?
t "$rc/$(ls "$W/gen" | wc -l)" 0/0 "kdumpinit-generator: a DIR a unit file would split: no drop-in (kdumpinit-save's check stands), exit 0"
# fw_cfg: the device the firmware names is only seen once qemu_fw_cfg is
# loaded; the units load it first instead of racing udev.
for u in kdumpinit-save kdumpinit-arm; do
	grep -q '^Wants=.*modprobe@qemu_fw_cfg.service' "dist/$u.service" && grep -q '^After=.*modprobe@qemu_fw_cfg.service' "dist/$u.service" &&
		ok "$u.service: Wants= and After= modprobe@qemu_fw_cfg.service" || bad "$u.service" "does not load qemu_fw_cfg first"
done
grep -qE '^(Requires|BindsTo|Requisite)=.*kdumpinit-save' dist/kdumpinit-arm.service &&
	bad "kdumpinit-arm.service" "depends hard on the save: a failed save would leave the machine unarmed" ||
	ok "kdumpinit-arm.service: only After= the save (a failed save does not disarm)"
sh -n dist/kdumpinit-save && sh -n dist/kdumpinit-generator && ok "sh -n kdumpinit-save, kdumpinit-generator" || bad "sh -n" "syntax"

# ---- mkinitramfs: its temporary file, and the installed copy's init ----
# The archive goes to a fresh mktemp name beside -o: a link planted under
# the old predictable name ($out.tmp.PID; exec keeps the PID) is not
# written through.
O=$W/mk
mkdir -p "$O"
echo victim >"$O/victim"
if sh -c 'ln -s "$1/victim" "$1/out.img.tmp.$$" && exec "$2" -k "$3" -o "$1/out.img"' sh "$O" "$top/initramfs/mkinitramfs" "$(uname -r)" \
	>"$W/out" 2>&1 && [ -s "$O/out.img" ]; then
	t "$(cat "$O/victim")/$(find "$O" -newer "$O/victim" -name '.out.img.*' | wc -l)" victim/0 \
		"mkinitramfs: writes a mktemp name beside -o, not a planted \$out.tmp.\$\$ (none left)"
else
	bad "mkinitramfs: writes a mktemp name beside -o" "$(tr '\n' '|' <"$W/out")"
fi
# Installed, mkinitramfs packs only the binary installed beside it: a
# kdumpinit planted at PREFIX/build/kdumpinit (where the source tree's
# default would look) is never taken.
I=$W/inst
if make -s --no-print-directory install PREFIX=/usr/local DESTDIR="$I" BUILD="$(dirname "$K")" >"$W/out" 2>&1; then
	mkdir -p "$I/usr/local/build"
	cp "$K" "$I/usr/local/build/kdumpinit"
	"$I/usr/local/sbin/kdumpinit-mkinitramfs" -k "$(uname -r)" -o "$W/planted.img" >"$W/out" 2>&1; rc=$?
	t "$rc/$(grep -c 'init binary not found: /usr/local/sbin/kdumpinit ' "$W/out")/$(ls "$W/planted.img" 2>/dev/null | wc -l)" 1/1/0 \
		"make install: kdumpinit-mkinitramfs takes /usr/local/sbin/kdumpinit only, not PREFIX/build/kdumpinit"
	"$I/usr/local/sbin/kdumpinit-mkinitramfs" -h | grep -q 'default: /usr/local/sbin/kdumpinit)' &&
		ok "make install: kdumpinit-mkinitramfs -h names the installed binary" ||
		bad "make install: -h" "$("$I/usr/local/sbin/kdumpinit-mkinitramfs" -h 2>&1 | grep -- -b)"
	# Every path an installed file names is under the PREFIX it went to.
	wrong=$(grep -rlE '@PREFIX@|(^|[^l])/usr/lib/kdumpinit' "$I" 2>/dev/null | grep -v '\.8$\|/doc/' | tr '\n' ' ')
	[ -z "$wrong" ] && ok "make install PREFIX=/usr/local: no installed file names @PREFIX@ or /usr/lib/kdumpinit" ||
		bad "make install: paths outside PREFIX" "$wrong"
else
	bad "make install DESTDIR" "$(tr '\n' '|' <"$W/out")"
fi

finish
