#!/bin/bash
# Boot-cycle test: an "installed system" in QEMU goes through
# real reboots: boot 1 saves nothing, arms and crashes; the crash kernel
# captures and reboots; boot 2 saves dump 1, arms and crashes again; boot 3
# saves dump 2 and powers off (--cycles N: N crashes, boot N+1 powers off).
# --fail-save N: boot N's save fails (a full /var/crash, or a read-only
# /var); the device keeps dump N-1, boot N arms anyway, its crash goes after
# the unsaved dump (dump 2 on the device), and boot N+1 saves both, oldest
# first.
# QEMU runs without -no-reboot: every reboot boots the same
# -kernel/-initrd/-append again, and only the last boot's poweroff ends it.
# The configuration comes from firmware only: kdumpinit.dev from an SMBIOS
# type 11 credential, kdumpinit.level (and kdumpinit.watchdog) from fw_cfg
# credentials; no kdumpinit.* on any command line and no embedded
# kdumpinit.conf. The hardware watchdog (i6300esb) runs throughout: stage 1
# arms it on every boot and pets it up to the panic, the crash kernel's
# kdumpinit takes it over.
#
# Disks of the guest (found by serial):
#   kdump-dump   the dump disk, claimed on the host with `kdumpinit format`
#   kdump-var    ext4 (mkfs.ext4 on the host), stage 1's /var: the boot
#                counter and /var/crash
#   kdump-rawN   receives `dd if=/proc/vmcore` in the crash kernel of boot
#                N, the reference of dump N (for the cycles in --raw)
# "Dump k" is the crash of boot k; its place on the dump disk is 1, or
# after the dumps there that were not saved (--fail-save).
#
# Afterwards the host reads the console log and the disks: the sequence,
# the settings' sources, the watchdog's takeover, the failed saves and
# where the next capture went, each saved dump's identity (the mark its boot wrote into the kernel log) and completeness,
# the dumps with a raw reference byte for byte (kdcmp.py), --max, and the
# time from each panic to the reboot.
# No pipefail: many checks end in grep -q, which may close the pipe early (SIGPIPE upstream).
set -u

prog=tests/cycle/run.sh
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
top=$(cd "$here/../.." && pwd)

usage() {
	cat <<USAGE
usage: tests/cycle/run.sh [--workdir DIR] [--timeout SEC] [--cpu MODEL] [--cycles N]
                          [--max N] [--raw LIST|all|none] [--watchdog SECONDS]
                          [--crashkernel SIZE] [--level N] [--cpus LIST] [--smp N]
                          [--kernel-tree DIR] [--fail-save LIST] [-h]

  --workdir DIR       where disks, logs and dumps go (default build/cycle)
  --timeout SEC       overall QEMU timeout (default 900); a timeout is a FAIL
  --cpu MODEL         QEMU -cpu (default max,la57=off)
  --cycles N          crash cycles (default 2): boot N+1 saves the last dump
                      and powers off
  --max N             save --max (default N: every dump is kept)
  --raw LIST          the cycles whose crash kernel first copies /proc/vmcore
                      to a raw disk, the byte reference of that dump (comma
                      list; default all up to 3 cycles, else the first, the
                      middle and the last); none: kdumpinit is the crash
                      kernel's only init and the image holds no test init
  --watchdog SECONDS  the i6300esb timeout stage 1 arms on every boot and
                      kdumpinit gets from fw_cfg (default 120); 0: no watchdog
  --crashkernel SIZE  the reservation (default 256M)
  --level N           the dump level from fw_cfg (default 1)
  --cpus LIST         arm --cpus for cycle 1, 2, ... (comma list, the last
                      item serves the cycles after it; default: none given)
  --smp N             the guest's CPUs (default 2)
  --kernel-tree DIR   boot the kernel of an extracted kernel package (as
                      tests/e2e/run.sh --kernel-tree) instead of /boot's
  --fail-save LIST    the boots whose save fails (comma list, 2..cycles; an
                      item N or N:full, N:ro): full: stage 1 mounts a full
                      filesystem on /var/crash; ro: /var is read-only. The
                      device keeps the dumps, the boot arms anyway, the crash
                      goes after them, and the next boot whose save works
                      saves them all, oldest first. Adds no boot

Environment: CYCLE_KDUMPINIT=FILE, the binary to test instead of
build/kdumpinit (its images are then cached in the workdir).
USAGE
}

workdir='' tmo=900 cpu=max,la57=off cycles=2 max='' raw='' wd=120 ck=256M level=1 cpus='' smp=2 ktree='' failsave=''
while [ $# -gt 0 ]; do
	case $1 in
	--workdir | --timeout | --cpu | --cycles | --max | --raw | --watchdog | --crashkernel | --level | --cpus | --smp | --kernel-tree | --fail-save)
		[ $# -ge 2 ] || { echo "$prog: $1 needs a value" >&2; exit 2; } ;;
	esac
	case $1 in
	--workdir) workdir=$2; shift ;;
	--timeout) tmo=$2; shift ;;
	--cpu) cpu=$2; shift ;;
	--cycles) cycles=$2; shift ;;
	--max) max=$2; shift ;;
	--raw) raw=$2; shift ;;
	--watchdog) wd=$2; shift ;;
	--crashkernel) ck=$2; shift ;;
	--level) level=$2; shift ;;
	--cpus) cpus=$2; shift ;;
	--smp) smp=$2; shift ;;
	--kernel-tree) ktree=$2; shift ;;
	--fail-save) failsave=$2; shift ;;
	-h | --help) usage; exit 0 ;;
	*) echo "$prog: unknown argument: $1" >&2; usage >&2; exit 2 ;;
	esac
	shift
done
num() { case $2 in '' | *[!0-9]*) echo "$prog: $1 needs a number" >&2; exit 2 ;; esac; }
num --cycles "$cycles"; num --watchdog "$wd"; num --level "$level"; num --smp "$smp"
[ "$cycles" -ge 1 ] || { echo "$prog: --cycles needs at least 1" >&2; exit 2; }
[ -n "$max" ] || max=$cycles
num --max "$max"
case $cpus in *[!0-9,]*) echo "$prog: --cpus needs a comma list of numbers" >&2; exit 2 ;; esac
# The cycles with a raw reference, as a comma list ("none": empty).
if [ -z "$raw" ]; then
	if [ "$cycles" -le 3 ]; then raw=all; else raw=1,$(((cycles + 1) / 2)),$cycles; fi
fi
case $raw in
all) raw=$(seq -s, 1 "$cycles") ;;
none) raw= ;;
*[!0-9,]*) echo "$prog: --raw needs a comma list of cycles, all or none" >&2; exit 2 ;;
esac
israw() { case ",$raw," in *",$1,"*) return 0 ;; esac; return 1; }
# The boots whose save fails, and how (full or ro).
declare -A failhow=()
for f in $(echo "$failsave" | tr ',' ' '); do
	n=${f%%:*} how=full
	case $f in *:*) how=${f#*:} ;; esac
	case $n:$how in
	*[!0-9]*:* | :*) echo "$prog: --fail-save needs a comma list of boots, each N, N:full or N:ro" >&2; exit 2 ;;
	*:full | *:ro) ;;
	*) echo "$prog: --fail-save: $f: the way is full or ro" >&2; exit 2 ;;
	esac
	# Boot 1 has nothing to save; the last boot's save must work, or a
	# dump would be left unsaved and unchecked.
	[ "$n" -ge 2 ] && [ "$n" -le "$cycles" ] ||
		{ echo "$prog: --fail-save: boot $n is not one of 2..$cycles (boot 1 saves nothing, boot $((cycles + 1)) saves the rest)" >&2; exit 2; }
	[ -z "${failhow[$n]:-}" ] || { echo "$prog: --fail-save: boot $n twice" >&2; exit 2; }
	failhow[$n]=$how
done
fails() { [ -n "${failhow[$1]:-}" ]; }
# Dump k (boot k's crash) is saved by the first boot after k whose save
# works, savedby[k]; when boot k's crash comes, the device holds before[k]
# dumps not yet saved (those since the last boot up to k whose save
# worked), and dump k goes after them, as dump before[k]+1 on the device.
declare -A savedby=() before=()
lastok=1
for k in $(seq 1 "$cycles"); do
	fails "$k" || lastok=$k
	before[$k]=$((k - lastok))
	j=$((k + 1))
	while fails "$j"; do j=$((j + 1)); done
	savedby[$k]=$j
done
plural() { [ "$1" = 1 ] || echo s; }

# The guest: 1 GiB; boot cycles+1 is the last.
mem=1G boots=$((cycles + 1))
modroot=()
if [ -n "$ktree" ]; then
	kernel=$(ls "$ktree"/boot/vmlinuz-* 2>/dev/null | head -n 1)
	[ -n "$kernel" ] || { echo "$prog: no boot/vmlinuz-* in $ktree" >&2; exit 2; }
	kver=${kernel##*/vmlinuz-}
	modroot=(-d "$ktree")
else
	kver=$(dpkg-query -W -f='${Depends}' linux-image-amd64 2>/dev/null | sed -n 's/^linux-image-\([^ ,]*\).*/\1/p')
	[ -n "$kver" ] && [ -f "/boot/vmlinuz-$kver" ] || kver=6.1.0-57-amd64
	kernel=/boot/vmlinuz-$kver
fi
busybox=/bin/busybox
kdumpinit=${CYCLE_KDUMPINIT:-$top/build/kdumpinit}
mkinitramfs=$top/initramfs/mkinitramfs
python=/usr/bin/python3
kdcmp=$top/tests/tools/kdcmp.py
vmcmp=$top/tests/tools/vmcmp.py
elfend=$top/tests/tools/elfend.py
kdcheck=$here/kdcheck.py
cache=$top/build/cycle
[ -n "$workdir" ] || workdir=$cache
# Another binary's images do not replace the cached ones of build/kdumpinit.
[ -z "${CYCLE_KDUMPINIT:-}" ] || cache=$workdir

npass=0 nfail=0
pass() { echo "ok $*"; npass=$((npass + 1)); }
failed() { echo "FAIL $*"; nfail=$((nfail + 1)); }
# The checks below hand eval their test in single quotes: it expands when it runs.
# shellcheck disable=SC2016,SC2012
check() {	# NAME WHY-IF-NOT CMD...: ok NAME or FAIL NAME: WHY
	local name=$1 why=$2
	shift 2
	if "$@"; then pass "$name"; else failed "$name: $why"; fi
}
finish() {
	echo "$npass passed, $nfail failed"
	[ "$nfail" = 0 ] && exit 0
	echo "$prog: console log: ${log:-none}; workdir $workdir"
	exit 1
}
die() { failed "setup: $*"; finish; }
now() { date +%s.%N; }
since() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.1f", b - a }'; }

# --- prerequisites ---------------------------------------------------------------
for f in "$kernel" "$busybox" "$mkinitramfs" "$kdcmp" "$vmcmp" "$elfend" "$kdcheck"; do
	[ -e "$f" ] || die "missing $f"
done
[ -x "$kdumpinit" ] || die "missing $kdumpinit (run make first)"
for c in qemu-system-x86_64 mkfs.ext4 debugfs cpio; do
	command -v "$c" >/dev/null || die "$c not found"
done
mkdir -p "$cache" "$workdir" || die "cannot create $workdir"
# A snapshot of the binary: a rebuild during the run must not mix versions.
cp -f "$kdumpinit" "$workdir/kdumpinit.bin" || die "cannot copy $kdumpinit"
kdumpinit=$workdir/kdumpinit.bin

# --- images (cached, rebuilt when an input changes; as tests/e2e/run.sh) --------
build_cached() {	# OUT "INPUTS" COMMAND...
	local out=$1 inputs=$2 key
	shift 2
	# shellcheck disable=SC2086
	key=$( { sha256sum $inputs | cut -d' ' -f1; echo "${*//$workdir/WORKDIR}"; } | sha256sum | cut -d' ' -f1)
	if [ -f "$out" ] && [ "$(cat "$out.key" 2>/dev/null)" = "$key" ]; then
		return 0
	fi
	"$@" >"$out.log" 2>&1 || { cat "$out.log" >&2; die "building $out failed"; }
	echo "$key" >"$out.key"
}
t_build=$(now)
# The crash initramfs as a user builds it for a VM whose device comes from
# firmware (kdumpinit-arm with KDUMPINIT_DEVICE empty: -m virtio_blk; no
# -c, no embedded configuration), with the watchdog's driver as `-m` (the
# host's own sysfs is not the guest's, so no --device here), plus the
# test's /testinit and busybox when a cycle takes a raw copy. Each variant
# has its own cached image.
wdmods=() tag=
[ "$wd" = 0 ] || { wdmods=(-m i6300esb); tag=-wd; }
extra=(-a "$here/testinit:/testinit" -a "$busybox:/bin/busybox")
[ -n "$raw" ] || { extra=(); tag=$tag-plain; }
crash=$cache/crash-$kver$tag.img
build_cached "$crash" "$kdumpinit $here/testinit $busybox $mkinitramfs" \
	"$mkinitramfs" "${modroot[@]}" -k "$kver" -o "$crash" -m virtio_blk -m virtio_pci "${wdmods[@]}" \
	-b "$kdumpinit" "${extra[@]}"
stage1=$cache/stage1-$kver$tag.img
build_cached "$stage1" "$crash $here/stage1-init $busybox $kernel $mkinitramfs $kdumpinit" \
	"$mkinitramfs" "${modroot[@]}" -k "$kver" -o "$stage1" -m virtio_blk -m virtio_pci -m ext4 "${wdmods[@]}" \
	-b "$here/stage1-init" -a "$busybox:/bin/busybox" -a "$kernel:/vmlinuz" \
	-a "$crash:/crash.img" -a "$kdumpinit:/bin/kdumpinit"
echo "images: $(du -h --apparent-size "$crash" | cut -f1) crash initramfs, $(du -h --apparent-size "$stage1" | cut -f1) stage 1 ($(since "$t_build")s)"

# --- disks -------------------------------------------------------------------------
dump=$workdir/dump.img var=$workdir/var.img log=$workdir/console.log
rm -rf "$dump" "$var" "$workdir"/raw*.img "$workdir"/raw*.vmcore "$log" "$workdir/milestones" \
	"$workdir/crash" "$workdir/crash-max" "$workdir"/*.out "$workdir/dump2.elf" "$workdir"/boot*.log
"$kdumpinit" format "$dump" --size 1536M --label cycle >"$workdir/format.out" 2>&1 ||
	{ cat "$workdir/format.out"; die "kdumpinit format $dump failed"; }
# Room for every dump kept (sparse: only what is written takes space).
mkfs.ext4 -q -F -L cycle-var "$var" $((2048 + (cycles > 2 ? cycles * 192 : 0)))M >"$workdir/mkfs.out" 2>&1 ||
	{ cat "$workdir/mkfs.out"; die "mkfs.ext4 $var failed"; }
rawsize=$(((1 << 30) + (256 << 20)))
for b in $(echo "$raw" | tr ',' ' '); do
	truncate -s $rawsize "$workdir/raw$b.img" || die "cannot create raw$b.img"
done

drives=()
drive() {	# FILE ID SERIAL
	drives+=(-drive "file=$1,format=raw,if=none,id=$2" -device "virtio-blk-pci,drive=$2,serial=$3")
}
drive "$dump" d0 kdump-dump
drive "$var" d1 kdump-var
for b in $(echo "$raw" | tr ',' ' '); do
	drive "$workdir/raw$b.img" "r$b" "kdump-raw$b"
done
# In the longer runs stage 1 drops its page cache after each save and the
# kernel zeroes what it frees (init_on_free=1), so that every level-1 dump
# stays the size of the first: freed pages keep their old bytes otherwise,
# and level 1 drops only zero pages (see stage1-init).
dropcaches=0 zerofree=
[ "$cycles" -le 2 ] || { dropcaches=1 zerofree=" init_on_free=1"; }
# No -no-reboot: the crash kernel's reboot boots the system again.
# shellcheck disable=SC2054 # commas belong to QEMU's option syntax
qemu=(qemu-system-x86_64 -accel tcg,thread=multi -cpu "$cpu" -smp "$smp" -m "$mem"
	-nographic -kernel "$kernel" -initrd "$stage1"
	-append "console=ttyS0 crashkernel=$ck panic=10 cycle.max=$max cycle.boots=$boots cycle.wd=$wd cycle.raw=${raw:-none} cycle.cpus=$cpus cycle.dropcaches=$dropcaches cycle.failsave=${failsave:-none}$zerofree"
	-smbios "type=11,value=io.systemd.credential:kdumpinit.dev=SERIAL=kdump-dump"
	-fw_cfg "name=opt/io.systemd.credentials/kdumpinit.level,string=$level"
	"${drives[@]}")
# The watchdog's timeout reaches the crash kernel by firmware too.
[ "$wd" = 0 ] || qemu+=(-device i6300esb -watchdog-action reset
	-fw_cfg "name=opt/io.systemd.credentials/kdumpinit.watchdog,string=$wd")
echo "qemu: ${qemu[*]}"

# Console line by line into console.log; milestones on the host clock
# (seconds since QEMU started), numbered by the boot they belong to.
t_qemu=$(now) b=0 crashed=
{ timeout "$tmo" "${qemu[@]}" </dev/null 2>&1; echo "__QEMU_RC__ $?"; } |
	while IFS= read -r line; do
		line=${line%$'\r'}
		case $line in
		"__QEMU_RC__ "*) echo "${line#* }" >"$workdir/qemu.rc"; continue ;;
		esac
		printf '%s\n' "$line" >>"$log"
		m=
		case $line in
		*"cycle-stage1: boot "*": up at "*) b=${line#*cycle-stage1: boot }; b=${b%%:*}; m="up$b" ;;
		*"Kernel panic - not syncing: sysrq triggered crash"*) m="panic$b" crashed=1 ;;
		# The first kernel and init after a panic are the crash kernel's.
		*"Linux version "*) [ -z "$crashed" ] || m="crashboot$b" ;;
		*"Run /"*" as init process"*) [ -z "$crashed" ] || m="crashup$b" crashed= ;;
		*"kdumpinit: watchdog: /dev/"*) m="wdopen$b" ;;
		*"cycle-testinit: raw copy done"*) m="rawdone$b" ;;
		*"kdumpinit: "*"starting as PID 1"*) m="kdstart$b" ;;
		*kdumpinit:*"final action: reboot"*) m="reboot$b" ;;
		esac
		[ -z "$m" ] || echo "$m $(since "$t_qemu")" >>"$workdir/milestones"
	done
d_qemu=$(since "$t_qemu")
qrc=$(cat "$workdir/qemu.rc" 2>/dev/null || echo "?")
rm -f "$workdir/qemu.rc"
declare -A at=()
while read -r k v; do [ -n "${at[$k]:-}" ] || at[$k]=$v; done <"$workdir/milestones" 2>/dev/null

# --- the run ----------------------------------------------------------------------------
if [ "$qrc" = 124 ]; then
	failed "qemu: no poweroff within ${tmo}s (timeout)"
else
	check qemu "QEMU exited $qrc (want 0, by boot $boots's poweroff)" [ "$qrc" = 0 ]
fi
# A watchdog reset (or any other) would add a boot of the installed system.
nlinux=$(grep -a -c "Linux version" "$log")
check boots "want $boots system boots and $cycles crash kernels ($((2 * boots - 1)) kernels), the log has $nlinux" \
	[ "$nlinux" = $((2 * boots - 1)) ]
# Console lines of one boot of the installed system, and of each crash
# kernel (from boot N's panic to boot N+1).
section() {	# N: the log from boot N's stage 1 to boot N+1's
	awk -v n="$1" '
		/cycle-stage1: boot [0-9]+: up at/ { s = $0; sub(/.*cycle-stage1: boot /, "", s); sub(/:.*/, "", s); cur = s + 0 }
		cur == n' "$log"
}
for b in $(seq 1 $boots); do section "$b" >"$workdir/boot$b.log"; done
bootline() { grep -a -o "cycle-stage1: boot $1: $2.*" "$workdir/boot$1.log" | head -n 1; }
saverc() { bootline "$1" "save exit" | grep -o '[0-9]*$'; }
statusrc() { bootline "$1" "status exit" | grep -o '[0-9]*$'; }
# The directory is the crash time, colons included: "saved /var/crash/NAME: N pages".
# Every directory boot N's save wrote, in the order it wrote them.
savednames() { grep -a -o "cycle-save: kdumpinit: saved /var/crash/[^ ]*" "$workdir/boot$1.log" | sed 's|.*/var/crash/||; s|:$||'; }
# The mark boot N wrote into its kernel log before crashing.
markof() { grep -a -o "cycle-mark: boot $1 id [0-9a-f-]*" "$workdir/boot$1.log" | head -n 1; }

if grep -a "Command line:" "$log" | grep -q "kdumpinit\."; then
	failed "no-cmdline-config: a kernel command line carries kdumpinit. settings: $(grep -a "Command line:" "$log" | grep "kdumpinit\." | head -n 1)"
else
	pass "no-cmdline-config: no kdumpinit.* on any of the $nlinux kernel command lines"
fi
if cpio -it <"$crash" 2>/dev/null | grep -q "kdumpinit.conf"; then
	failed "no-embedded-config: the crash initramfs holds a kdumpinit.conf"
else
	pass "no-embedded-config: the crash initramfs holds no kdumpinit.conf"
fi

# Boot 1: nothing to save, arm, status, crash.
check boot1.save "save exit '$(saverc 1)' (want 0) or no 'nothing to save': $(grep -a 'cycle-save:' "$workdir/boot1.log" | head -n 2 | tr '\n' ' ')" \
	eval '[ "$(saverc 1)" = 0 ] && grep -a "cycle-save:" "$workdir/boot1.log" | grep -qi "nothing to save"'
settings="dev=SERIAL=kdump-dump (smbios), level=$level (fw_cfg)"
for b in $(seq 1 $cycles); do
	check "boot$b.arm" "$(bootline "$b" "arm exit") $(bootline "$b" FAIL)" \
		eval 'bootline '"$b"' "crash kernel armed" | grep -q .'
	if fails "$b"; then
		# The save failed: armed, and a dump waits (8).
		check "boot$b.status" "status exit '$(statusrc "$b")' (want 8: armed, a dump waits) or its device not from smbios or not 'not saved yet': $(grep -a 'cycle-status:' "$workdir/boot$b.log" | tr '\n' '|')" \
			eval '[ "$(statusrc '"$b"')" = 8 ] && grep -a "cycle-status: device" "$workdir/boot'"$b"'.log" | grep "SERIAL=kdump-dump (smbios)" | grep -q "not saved yet"'
	else
		check "boot$b.status" "status exit '$(statusrc "$b")' (want 0 ready) or its device not from smbios: $(grep -a 'cycle-status:' "$workdir/boot$b.log" | tr '\n' '|')" \
			eval '[ "$(statusrc '"$b"')" = 0 ] && grep -a "cycle-status: device" "$workdir/boot'"$b"'.log" | grep -q "SERIAL=kdump-dump (smbios)"'
	fi
	check "boot$b.crash" "no sysrq panic after boot $b" grep -a -q "Kernel panic - not syncing: sysrq triggered crash" "$workdir/boot$b.log"
	# The crash kernel: its settings from firmware, the raw copy, the watchdog, the capture, the reboot.
	sline=$(grep -a 'kdumpinit: settings' "$workdir/boot$b.log" | tail -n 1)
	check "crash$b.settings" "no 'settings: $settings'$([ "$wd" = 0 ] || echo " with 'watchdog=$wd (fw_cfg)'"): $sline" \
		eval 'case "$sline" in *"kdumpinit: settings: $settings"*) ;; *) false ;; esac &&
			{ [ "$wd" = 0 ] || case "$sline" in *"watchdog=$wd (fw_cfg)"*) ;; *) false ;; esac; }'
	if israw "$b"; then
		check "crash$b.rawcopy" "$(grep -a 'cycle-testinit: FAIL' "$workdir/boot$b.log" | head -n 1)" \
			grep -a -q "cycle-testinit: raw copy done" "$workdir/boot$b.log"
	fi
	if [ "$wd" != 0 ]; then
		# Armed in stage 1, still armed at the panic (nobody closed it),
		# then opened by the crash kernel's kdumpinit at the same timeout.
		check "crash$b.watchdog" "stage 1 armed it: '$(grep -a -c 'cycle-stage1: watchdog armed' "$workdir/boot$b.log")'; kdumpinit: $(grep -a -o 'kdumpinit: .*watchdog.*' "$workdir/boot$b.log" | head -n 2 | tr '\n' '|')" \
			eval 'grep -a -q "cycle-stage1: watchdog armed: timeout ${wd}s" "$workdir/boot'"$b"'.log" &&
				sed -n "/sysrq triggered crash/,\$p" "$workdir/boot'"$b"'.log" |
				grep -a -q "kdumpinit: watchdog: /dev/watchdog0\{0,1\} (i6300esb), timeout $wd s, petted while the capture progresses"'
	fi
	# After a failed save the capture finds the dumps not yet saved and
	# goes after them (not over them), and says so.
	u=${before[$b]}
	if [ "$u" -gt 0 ]; then
		want="holds $u dump$(plural "$u") not yet saved: this one goes after them, as dump $((u + 1))"
		check "crash$b.after" "the capture did not say '$want': $(sed -n '/sysrq triggered crash/,$p' "$workdir/boot$b.log" | grep -a -e 'kdumpinit:.*\(target\|saved\|dump\)' | head -n 4 | tr '\n' '|')" \
			eval 'sed -n "/sysrq triggered crash/,\$p" "$workdir/boot'"$b"'.log" | grep -a "kdumpinit: " | grep -a -q -F "$want"'
	fi
	check "crash$b.reboot" "no kdumpinit reboot line after boot $b's crash: $(grep -a 'kdumpinit:' "$workdir/boot$b.log" | tail -n 2 | tr '\n' '|')" \
		eval 'sed -n "/sysrq triggered crash/,\$p" "$workdir/boot'"$b"'.log" | grep -a -q "kdumpinit:.*final action: reboot"'
done
if grep -a "Kernel panic" "$log" | grep -vq "sysrq triggered crash"; then
	failed "no-other-panic: $(grep -a "Kernel panic" "$log" | grep -v "sysrq triggered crash" | head -n 1)"
else
	pass "no-other-panic: the only panics are the $cycles sysrq crashes"
fi

# The last crash went through kdumpinit test (stage1-init): its marker,
# then at the next boot the save's report, passed, naming the directory
# that boot saved last (the test's dump, the newest), and status's line.
tb=$cycles
check "test.crash" "boot $tb did not crash through kdumpinit test: $(grep -a 'kdumpinit: .*test' "$workdir/boot$tb.log" | tr '\n' '|')" \
	grep -a -q "^kdumpinit: test: marker /var/lib/kdumpinit/test written; syncing" "$workdir/boot$tb.log"
tlast=$(savednames $((tb + 1)) | tail -n 1)
treport=$(grep -a -o "cycle-save: kdumpinit: kdumpinit test: .*" "$workdir/boot$((tb + 1)).log" | head -n 1)
check "test.report" "boot $((tb + 1))'s save said '$treport', saved last '$tlast'" \
	eval '[ -n "$tlast" ] && echo "$treport" | grep -q -F "passed, crashed " &&
		echo "$treport" | grep -q -F "dump saved to /var/crash/$tlast, " &&
		echo "$treport" | grep -q "[0-9]* s from the panic to the dump.s end"'
check "test.status" "boot $((tb + 1))'s status: $(grep -a 'cycle-status: last test' "$workdir/boot$((tb + 1)).log")" \
	grep -a -q "cycle-status: last test  *passed, crashed .*: dump saved to /var/crash/" "$workdir/boot$((tb + 1)).log"

# Boot j saves every dump not yet saved, oldest first: dump j-1, and the
# dumps before it that failed saves left on the device (savedby); every
# name is new. A boot whose save fails saves nothing and leaves the device
# as it was.
declare -A dname=()
seen=' '
isnew() { local n; for n in $1; do case "$seen" in *" $n "*) return 1 ;; esac; done; }
for j in $(seq 2 $boots); do
	names=$(savednames $j | tr '\n' ' ')
	if fails "$j"; then
		check "boot$j.savefail" "save exit '$(saverc $j)' (want 1: /var/crash ${failhow[$j]}), saved '$names' (want none) or no 'the device keeps': $(grep -a -e 'cycle-save:' -e 'save must fail' "$workdir/boot$j.log" | tr '\n' '|')" \
			eval '[ "$(saverc $j)" = 1 ] && [ -z "$names" ] && grep -a "cycle-save: kdumpinit: error:" "$workdir/boot$j.log" | grep -q "the device keeps" &&
				bootline $j "save must fail" | grep -q .'
		continue
	fi
	ks=$(for k in $(seq 1 $cycles); do [ "${savedby[$k]}" != $j ] || echo $k; done | tr '\n' ' ')
	i=0
	for k in $ks; do
		i=$((i + 1))
		dname[$k]=$(echo "$names" | cut -d' ' -f$i)
	done
	nwant=$(echo $ks | wc -w)
	# shellcheck disable=SC2086,SC2034 # words wanted; read by the check's eval
	sorted=$(printf '%s\n' $names | sort | tr '\n' ' ')
	check "boot$j.save" "save exit '$(saverc $j)' (want 0), saved '$names': want $nwant dump$(plural $nwant) (dump$(plural $nwant) ${ks% }), new names in crash order (an earlier boot saved the same?$seen): $(grep -a 'cycle-save:' "$workdir/boot$j.log" | tr '\n' '|')" \
		eval '[ "$(saverc $j)" = 0 ] && [ "$(echo $names | wc -w)" = $nwant ] && [ "$sorted" = "$names" ] &&
			isnew "$names"'
	seen="$seen$names"
	if [ $j -lt $boots ]; then
		check "boot$j.marked" "after boot $j's save, status does not say the dump is saved: $(grep -a 'cycle-status: device' "$workdir/boot$j.log")" \
			eval 'grep -a "cycle-status: device" "$workdir/boot'"$j"'.log" | grep -q "holds a complete dump, saved"'
	fi
done
# --max: the dumps kept, and those removed (oldest first, each by the save
# that made the count exceed --max: dump k by the boot that saved dump
# k+max, boot k+max+1 when no save failed).
keep_from=1
[ "$max" -ge "$cycles" ] || keep_from=$((cycles - max + 1))
if [ "$keep_from" = 1 ]; then
	check no-prune "a save (--max $max) removed a dump: $(grep -a 'removed old dump' "$log" | head -n 1)" \
		eval '! grep -a -q "removed old dump" "$log"'
else
	for k in $(seq 1 $((keep_from - 1))); do
		j=${savedby[$((k + max))]}
		check "dump$k.pruned" "boot $j's save (--max $max) did not remove dump $k ('${dname[$k]}'): $(grep -a 'removed old dump' "$workdir/boot$j.log" | tr '\n' '|')" \
			eval '[ -n "${dname[$k]}" ] && grep -a "removed old dump" "$workdir/boot'"$j"'.log" | grep -q -F "${dname[$k]}"'
	done
fi
check "boot$boots.status" "status exit '$(statusrc $boots)' (want 6: not armed on the last boot)" [ "$(statusrc $boots)" = 6 ]
check "boot$boots.poweroff" "boot $boots did not power off: $(tail -n 2 "$workdir/boot$boots.log" | tr '\n' '|')" \
	eval 'bootline $boots "last boot: powering off" | grep -q .'
"$kdumpinit" save "$dump" --check >"$workdir/check.out" 2>&1
rc=$?
check device.saved "save --check on the dump disk exited $rc (want 1: no dump waits)" [ $rc = 1 ]
# The dump disk holds the last crash's dump after the dumps that were not
# saved when it came (1 + before[cycles] in all), every one saved now.
ndev=$((before[$cycles] + 1))
"$kdumpinit" info "$dump" >"$workdir/info.out" 2>&1
rc=$?
ninfo=$(grep -c '^state ' "$workdir/info.out") nsaved=$(grep -c '^state .*, saved' "$workdir/info.out")
check device.dumps "info exited $rc and lists $ninfo dump(s), $nsaved saved; want $ndev, all saved: $(grep -e '^dump  ' -e '^state ' "$workdir/info.out" | tr '\n' '|')" \
	eval '[ $rc = 0 ] && [ "$ninfo" = $ndev ] && [ "$nsaved" = $ndev ] &&
		{ [ $ndev = 1 ] || grep -q "^dump  *$ndev of $ndev on the device, oldest first" "$workdir/info.out"; }'

# --- the /var disk -------------------------------------------------------------------
cnt=$(debugfs -R "cat /boot-count" "$var" 2>/dev/null)
check var.counter "the boot counter on /var says '$cnt', want $boots" [ "$cnt" = "$boots" ]
mkdir -p "$workdir/crash" && chmod 0700 "$workdir/crash"
debugfs -R "rdump /crash $workdir/crash" "$var" >"$workdir/rdump.out" 2>&1
cdir=$workdir/crash/crash
dirs=$(cd "$cdir" 2>/dev/null && ls | sort | tr '\n' ' ')
want=$(for k in $(seq $keep_from $cycles); do echo "${dname[$k]}"; done | sort | tr '\n' ' ')
check var.dumps "/var/crash holds '$dirs', want the dumps '$want' (--max $max)" eval '[ -n "${dname[$cycles]}" ] && [ "$dirs" = "$want" ]'
has_files() {	# FILE: every dump kept has it, not empty
	local k
	for k in $(seq $keep_from $cycles); do [ -s "$cdir/${dname[$k]}/$1" ] || return 1; done
}
for f in vmcore dmesg.txt info.txt; do
	check "var.files.$f" "missing in a dump directory" has_files "$f"
done
# Each dump kept is its own crash's: the mark of boot k, and only that,
# in its kernel log; and complete: every page it lists reads back whole
# and their count is what the capture reported (kdcheck.py).
t_cmp=$(now)
for k in $(seq $keep_from $cycles); do
	if [ -z "${dname[$k]}" ]; then
		failed "dump$k.mark: no save wrote dump $k (boot ${savedby[$k]} should have)"
		failed "dump$k.complete: no save wrote dump $k"
		continue
	fi
	mark=$(markof $k) d=$cdir/${dname[$k]}
	check "dump$k.mark" "boot $k printed '$mark'; the dump's kernel log has: $(grep -a -o 'cycle-mark: .*' "$d/dmesg.txt" 2>/dev/null | tr '\n' '|')" \
		eval '[ -n "$mark" ] && grep -a -q -F "$mark" "$d/dmesg.txt" && [ "$(grep -a -c "cycle-mark:" "$d/dmesg.txt")" = 1 ]'
	"$python" "$kdcheck" "$d/vmcore" "$d/info.txt" >"$workdir/kdcheck$k.out" 2>&1
	rc=$?
	check "dump$k.complete" "kdcheck exited $rc: $(tr '\n' '|' <"$workdir/kdcheck$k.out")" [ $rc = 0 ]
done
# shellcheck disable=SC2034 # read by the check's eval
sums=$(for k in $(seq $keep_from $cycles); do [ -z "${dname[$k]}" ] || sha256sum <"$cdir/${dname[$k]}/vmcore"; done | sort)
check dumps.unique "want $((cycles - keep_from + 1)) different saved vmcores, there are $(echo "$sums" | grep -c .) of which $(echo "$sums" | uniq | grep -c .) differ" eval '[ "$(echo "$sums" | uniq | wc -l)" = $((cycles - keep_from + 1)) ]'

# --- byte comparison against the raw references ----------------------------------------
for b in $(echo "$raw" | tr ',' ' '); do
	[ "$b" -ge "$keep_from" ] || continue
	r=$workdir/raw$b.img
	if ! end=$("$python" "$elfend" "$r" 2>&1); then
		failed "raw$b: the raw disk holds no vmcore: $end"
		continue
	fi
	truncate -s "$end" "$r" && mv -f "$r" "$workdir/raw$b.vmcore"
	[ -n "${dname[$b]}" ] || { failed "dump$b.bytes: no save wrote dump $b"; continue; }
	"$python" "$kdcmp" "$cdir/${dname[$b]}/vmcore" "$workdir/raw$b.vmcore" >"$workdir/kdcmp$b.out" 2>&1
	rc=$?
	check "dump$b.bytes" "kdcmp exited $rc: $(tr '\n' '|' <"$workdir/kdcmp$b.out")" [ $rc = 0 ]
	# kdcmp names its sides after its first use: the first is the saved dump.
	[ $rc = 0 ] && head -n 2 "$workdir/kdcmp$b.out" | sed 's/makedumpfile/saved/g; s/kdumpinit/raw/g; s/^/    /'
done
# The dump disk still holds the last dump (saved, not erased): as ELF it
# must match its reference too, page by page (vmcmp, as tests/e2e at level 1).
if israw "$cycles"; then
	"$kdumpinit" save "$dump" --dump "$ndev" --output "$workdir/dump$cycles.elf" --format elf >"$workdir/save-elf.out" 2>&1 &&
		"$python" "$vmcmp" "$workdir/raw$cycles.vmcore" "$workdir/dump$cycles.elf" >"$workdir/vmcmp$cycles.out" 2>&1
	rc=$?
	check "dump$cycles.vmcmp" "save --format elf + vmcmp exited $rc: $(tail -n 5 "$workdir/vmcmp$cycles.out" "$workdir/save-elf.out" 2>/dev/null | tr '\n' '|')" [ $rc = 0 ]
	[ $rc != 0 ] || rm -f "$workdir/dump$cycles.elf"
fi
# A reference that matched is 820 MB of nothing more to learn: kept only
# when its comparison failed.
for b in $(echo "$raw" | tr ',' ' '); do
	grep -q 'result: OK' "$workdir/kdcmp$b.out" 2>/dev/null && rm -f "$workdir/raw$b.vmcore"
done
d_cmp=$(since "$t_cmp")

# --- one more save prunes the oldest kept when --max is reached, on a copy ---------------
# A copy of /var/crash without the newest dump, which one more save
# (--force: the device has it marked saved) writes into it again; with
# --max one less than the dumps then there, the save must remove the
# oldest. (A copy that still held the newest dump would not get it again:
# save --dir never saves a dump twice into DIR.) Hard links: save --max
# unlinks the oldest, which leaves the originals alone, and the copy costs
# no disk (the soak's /var/crash is 1 GB).
nkept=$((cycles - keep_from + 1)) oldest=${dname[$keep_from]} newest=${dname[$cycles]}
mkdir -p "$workdir/crash-max" && chmod 0700 "$workdir/crash-max"
for k in $(seq $keep_from $((cycles - 1))); do
	[ -z "${dname[$k]}" ] || cp -al "$cdir/${dname[$k]}" "$workdir/crash-max/"
done
m=$((nkept > 1 ? nkept - 1 : 1))
"$kdumpinit" save "$dump" --dir "$workdir/crash-max" --max "$m" --force >"$workdir/save3.out" 2>&1
rc=$?
left=$(cd "$workdir/crash-max" && ls | sort | tr '\n' ' ')
if [ "$nkept" -gt 1 ]; then
	check max.prune "one more save (--max $m --force) exited $rc and left '$left'; want '$newest' saved again, '$oldest' removed, $m left: $(tr '\n' '|' <"$workdir/save3.out")" \
		eval '[ $rc = 0 ] && [ -n "$newest" ] && [ -s "$workdir/crash-max/$newest/vmcore" ] && [ ! -e "$workdir/crash-max/$oldest" ] &&
			[ "$(echo $left | wc -w)" = $m ] && grep -q "removed old dump.*$oldest" "$workdir/save3.out"'
else
	check max.prune "one more save (--max $m --force) exited $rc and left '$left'; want '$newest' saved again and nothing removed: $(tr '\n' '|' <"$workdir/save3.out")" \
		eval '[ $rc = 0 ] && [ -n "$newest" ] && [ -s "$workdir/crash-max/$newest/vmcore" ] && [ "$(echo $left | wc -w)" = 1 ] &&
			! grep -q "removed old dump" "$workdir/save3.out"'
fi

# --- timings ------------------------------------------------------------------------------
ms() { local a=${at[$1]:-} b=${at[$2]:-}; [ -n "$a" ] && [ -n "$b" ] && awk -v a="$a" -v b="$b" 'BEGIN { printf "%.1fs", b - a }' || echo "-"; }
for b in $(seq 1 $cycles); do
	echo "timing cycle $b: panic -> kdumpinit reboot $(ms "panic$b" "reboot$b") (crash kernel up $(ms "panic$b" "crashup$b")$(israw $b && echo ", raw copy $(ms "crashup$b" "rawdone$b")"), watchdog taken over $(ms "panic$b" "wdopen$b"), kdumpinit $(ms "kdstart$b" "reboot$b")); panic -> boot $((b + 1)) up $(ms "panic$b" "up$((b + 1))")"
done
echo "timing: qemu ${d_qemu}s for $cycles cycles (boot 1 up at ${at[up1]:--}s), host checks ${d_cmp}s"
finish
